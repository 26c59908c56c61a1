#!/usr/bin/env python3
"""A slow HTTP endpoint for the benchmark (scripts/bench): every request is answered
200 after a delay, thousands of connections at once on one asyncio loop.

    bench_slow_server.py [--host 127.0.0.1] [--port 0] [--delay 1.0] [--port-file F]
                         [--max-seconds 600]

GET /anything?delay=S overrides the delay for that request. Keep-alive is honoured
(HTTP/1.1 without "Connection: close"). With --port 0 a free port is taken; the port
is printed on stdout ("PORT n") and written to --port-file once listening. The
server stops by itself after --max-seconds, so a forgotten one does not linger.
"""
import argparse
import asyncio
import os
import signal
import sys
from urllib.parse import parse_qs, urlsplit

BODY = b"slow ok\n"


async def handle(reader, writer, default_delay):
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                return
            lines = head.decode("latin-1").split("\r\n")
            parts = lines[0].split(" ")
            if len(parts) != 3:
                writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            method, target, version = parts
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            length = int(headers.get("content-length", "0") or 0)
            if length:
                await reader.readexactly(length)
            delay = default_delay
            q = parse_qs(urlsplit(target).query)
            if "delay" in q:
                try:
                    delay = float(q["delay"][0])
                except ValueError:
                    pass
            if delay > 0:
                await asyncio.sleep(delay)
            close = version != "HTTP/1.1" or headers.get("connection", "").lower() == "close"
            body = b"" if method == "HEAD" else BODY
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s\r\n"
                % (len(BODY), b"Connection: close\r\n" if close else b"")
                + body
            )
            await writer.drain()
            if close:
                return
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay", type=float, default=1.0)
    ap.add_argument("--port-file")
    ap.add_argument("--max-seconds", type=float, default=600)
    args = ap.parse_args()
    if not args.host.startswith("127."):
        ap.error("--host must be a loopback address (127.0.0.0/8)")

    server = await asyncio.start_server(
        lambda r, w: handle(r, w, args.delay), args.host, args.port, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    print("PORT %d" % port, flush=True)

    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
    try:
        await asyncio.wait_for(stop, args.max_seconds)
    except asyncio.TimeoutError:
        print("bench_slow_server: --max-seconds reached, stopping", file=sys.stderr)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
