#!/usr/bin/env python3
"""Open a page in headless Chromium and run JavaScript in it, for the specs.

Drives chromium-headless-shell over the DevTools protocol on a pipe
(--remote-debugging-pipe: fd 3 in, fd 4 out, messages ended by NUL), so no port and
no websocket library are needed. Each --step is a JavaScript expression evaluated in
the page in turn (a promise is awaited); the output is one JSON object on stdout:
{"steps": [value of each step], "console": [every console error, uncaught exception
and browser log error]}. --screenshot writes a PNG after the last step.

  browser.py --url URL [--step JS]... [--screenshot FILE] [--timeout S]
"""
import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"


class Browser:
    def __init__(self, deadline):
        self.deadline = deadline
        self.profile = tempfile.mkdtemp(prefix="luacrawl-test-chromium-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def fds():
            # Copies first: a pipe may itself be fd 3 or 4, and dup2 onto itself
            # would leave it close-on-exec.
            r, w = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             # No connection of Chromium's own (updates, sync, safe browsing): only the
             # page's, to the loopback server under test.
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-default-apps", "--disable-domain-reliability", "--no-default-browser-check",
             "--user-data-dir=" + self.profile, "--remote-debugging-pipe", "about:blank"],
            # dup2 leaves 3 and 4 inheritable; every other fd is close-on-exec.
            preexec_fn=fds, close_fds=False,
            # Not the sanitizer runtimes the ASan suite preloads for luajit: they make
            # Chromium hang.
            env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.next_id = 0
        self.pending = b""
        self.console = []

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def read_message(self):
        while b"\0" not in self.pending:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise TimeoutError("the browser did not answer in time")
            chunk = os.read(self.from_browser, 65536)
            if not chunk:
                raise EOFError("the browser closed its pipe")
            self.pending += chunk
        msg, self.pending = self.pending.split(b"\0", 1)
        return json.loads(msg)

    def note(self, msg):
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.console.append("console." + p["type"] + ": " +
                                " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.console.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            self.console.append("log: " + e.get("text", "") + " " + e.get("url", ""))

    def wait_event(self, method):
        while True:
            msg = self.read_message()
            self.note(msg)
            if msg.get("method") == method:
                return msg.get("params", {})

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self.read_message()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.note(reply)


def evaluate(b, session, expr):
    r = b.send("Runtime.evaluate", {"expression": expr, "awaitPromise": True, "returnByValue": True},
               session)
    if "exceptionDetails" in r:
        d = r["exceptionDetails"]
        raise RuntimeError("step failed: " + d.get("exception", {}).get("description", d.get("text", "")))
    return r.get("result", {}).get("value")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--step", action="append", default=[])
    ap.add_argument("--screenshot")
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    b = Browser(time.monotonic() + args.timeout)
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = b.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            b.send(domain + ".enable", {}, session)
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": 1280, "height": 1400, "deviceScaleFactor": 1, "mobile": False}, session)
        b.send("Page.navigate", {"url": args.url}, session)
        b.wait_event("Page.loadEventFired")
        values = []
        try:
            for step in args.step:
                values.append(evaluate(b, session, step))
        except (RuntimeError, TimeoutError) as e:
            json.dump({"error": str(e), "steps": values, "console": b.console}, sys.stdout)
            print()
            sys.exit(1)
        if args.screenshot:
            shot = b.send("Page.captureScreenshot", {"format": "png"}, session)
            with open(args.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        # Events that came with the last answers (a console error logged late).
        evaluate(b, session, "new Promise((r) => setTimeout(r, 100))")
        json.dump({"steps": values, "console": b.console}, sys.stdout)
        print()
    finally:
        b.close()


if __name__ == "__main__":
    main()
