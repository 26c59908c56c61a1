#!/usr/bin/env python3
"""Run a command and measure its whole process tree (scripts/bench-render).

    bench_tree.py OUT.json [--interval S] -- COMMAND [ARGS...]

A browser's work is done in processes the crawler starts, and they in turn start
(renderers, GPU and network services, zygotes), so the crawler's own figures miss
most of it. This wrapper makes itself a child subreaper (PR_SET_CHILD_SUBREAPER):
every descendant orphaned by its parent's end (a browser killed with its group, a
renderer whose browser went first) is reparented here and reaped here, so the CPU
time of every process of the tree ends up in this process's RUSAGE_CHILDREN. It
waits until no descendant is left, not only the command.

Memory: every INTERVAL seconds (default 0.25, from a thread of its own while the
main one waits for the tree's ends), the sum of the resident set (RSS, from
/proc/PID/statm) and of the proportional set (PSS, /proc/PID/smaps_rollup: a page
shared by k processes counts 1/k in each) over the tree's processes; the peaks of
both sums are kept. RSS counts Chromium's shared pages once per process, so its sum
overstates; PSS is what the tree holds. Sampling misses a peak shorter than INTERVAL.

OUT.json: {"status": the command's exit status (128+N for signal N), "wall": seconds
from start to the last descendant's end, "user", "sys": CPU seconds of the tree,
"peak_rss_kb", "peak_pss_kb": the peaks of the sums, "peak_procs": most processes at
once, "samples": how many}. Exits with the command's status.
"""
import ctypes
import json
import os
import resource
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def tree(root):
    """The pids of root's descendants now (root's own excluded)."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The fields after the command's name, which may hold spaces and parentheses.
        fields = stat[stat.rindex(b")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(name))
    out, stack = [], [root]
    while stack:
        for c in children.get(stack.pop(), ()):
            out.append(c)
            stack.append(c)
    return out


def memory(pid):
    """(rss_kb, pss_kb) of pid, (0, 0) once it is gone."""
    rss = pss = 0
    try:
        with open("/proc/%d/statm" % pid) as f:
            rss = int(f.read().split()[1]) * PAGE_KB
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                    break
    except (OSError, ValueError, IndexError):
        pass
    return rss, pss


def main():
    args = sys.argv[1:]
    if len(args) < 3 or "--" not in args:
        sys.exit(__doc__)
    out, rest = args[0], args[1:]
    interval = 0.25
    if rest[0] == "--interval":
        interval = float(rest[1])
        rest = rest[2:]
    if not rest or rest[0] != "--" or len(rest) < 2:
        sys.exit(__doc__)
    cmd = rest[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("bench_tree: prctl(PR_SET_CHILD_SUBREAPER) failed")
    me = os.getpid()
    start = time.monotonic()
    child = os.fork()
    if child == 0:
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            sys.stderr.write("bench_tree: %s: %s\n" % (cmd[0], e))
        os._exit(127)
    peaks = {"rss": 0, "pss": 0, "procs": 0, "samples": 0}
    done = threading.Event()

    def sample():
        while not done.is_set():
            pids = tree(me)
            rss = pss = 0
            for p in pids:
                r, s = memory(p)
                rss, pss = rss + r, pss + s
            peaks["rss"], peaks["pss"] = max(peaks["rss"], rss), max(peaks["pss"], pss)
            peaks["procs"] = max(peaks["procs"], len(pids))
            peaks["samples"] += 1
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # Reap every process that ends, the orphans included, until none is left; the
    # command's status is kept.
    status = None
    while True:
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child:
            status = os.waitstatus_to_exitcode(st)
            if status < 0:
                status = 128 - status
    wall = time.monotonic() - start
    done.set()
    sampler.join()
    peak_rss, peak_pss, peak_procs, samples = peaks["rss"], peaks["pss"], peaks["procs"], peaks["samples"]
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        json.dump({"status": status, "wall": round(wall, 3), "user": ru.ru_utime, "sys": ru.ru_stime,
                   "peak_rss_kb": peak_rss, "peak_pss_kb": peak_pss, "peak_procs": peak_procs,
                   "samples": samples}, f)
        f.write("\n")
    sys.exit(status if status is not None else 1)


if __name__ == "__main__":
    main()
