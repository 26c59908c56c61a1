#!/usr/bin/env python3
"""Run a command on a pseudo-terminal, as a person at a terminal would, and print what
the terminal showed.

usage: pty_run.py PROMPT INPUT_FILE -- COMMAND [ARG...]

Each line of INPUT_FILE is typed after PROMPT appears (escape sequences such as
"\\x1b[A", the up arrow, are written as they are given, Python-escaped); after the last
line the terminal's end of input (Ctrl-D) is typed at the next prompt. Exits with the
command's status; 124 when it has not ended 60 seconds after the last input.
"""
import os
import pty
import select
import sys
import time


def main():
    prompt = sys.argv[1].encode()
    with open(sys.argv[2], encoding="utf-8") as f:
        lines = [l.rstrip("\n").encode().decode("unicode_escape").encode("latin-1") for l in f]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    seen = b""
    shown = 0  # how many prompts have been answered
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            seen += data
        if seen.count(prompt) > shown:
            shown += 1
            if shown <= len(lines):
                os.write(fd, lines[shown - 1] + b"\r")
            else:
                os.write(fd, b"\x04")
            deadline = time.monotonic() + 60
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
    else:
        os.kill(pid, 9)
        sys.stdout.buffer.write(seen)
        return 124
    try:
        while True:
            r, _, _ = select.select([fd], [], [], 0.2)
            if not r:
                break
            data = os.read(fd, 4096)
            if not data:
                break
            seen += data
    except OSError:
        pass
    _, status = os.waitpid(pid, 0) if not done else (pid, status)
    sys.stdout.buffer.write(seen)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
