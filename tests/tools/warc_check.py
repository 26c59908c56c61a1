#!/usr/bin/env python3
"""warc_check.py: check WARC files against the standard (WARC/1.1, ISO 28500),
independently of luacrawl's reader (python3 stdlib only).

Usage: warc_check.py [--expect MANIFEST.json] FILE.warc.gz...

For every file: each record is its own gzip member (a .warc.gz) and starts with
"WARC/1.1"; the named fields are there (WARC-Record-ID as a unique <urn:uuid:...>,
WARC-Date in ISO 8601 UTC, Content-Length equal to the block's length,
WARC-Block-Digest and, for HTTP records, WARC-Payload-Digest recomputed: sha1 in
base32 of the block and of the HTTP body); the first record is a warcinfo that every
other names in WARC-Warcinfo-ID; each request names a response (or revisit) of the
same target URI in WARC-Concurrent-To, and each response has exactly one request;
a revisit refers to a response with the same payload digest; no response head says
"Transfer-Encoding: chunked" (the framing is removed); a conversion record (a rendered
page's DOM or screenshot) has a WARC-Target-URI, a WARC-Payload-Digest of its block
when it has one, and a WARC-Refers-To, when it has one, naming a response or revisit.

With --expect, MANIFEST maps URLs to files holding the body the fetch returned: the
response for each URL, its payload undone of its Content-Encoding (gzip, deflate; br
and zstd with the brotli and zstd commands; others are counted as unchecked), must
equal it. A truncated gzip payload is decoded
as far as it goes, as the fetch did.

Prints one line per problem and a summary; exits 1 when there is a problem.
"""
import base64
import hashlib
import json
import re
import subprocess
import sys
import zlib

problems = []


def problem(where, msg):
    problems.append("%s: %s" % (where, msg))


def sha1_b32(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def members(data):
    """(offset, bytes) of each gzip member of data."""
    off = 0
    while off < len(data):
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = d.decompress(data[off:])
        if not d.eof:
            raise ValueError("gzip member at %d is cut short" % off)
        used = len(data) - off - len(d.unused_data)
        yield off, out
        off += used


def parse_record(raw, where):
    head_end = raw.find(b"\r\n\r\n")
    if head_end < 0:
        problem(where, "no end of the WARC header block")
        return None
    lines = raw[:head_end].decode("utf-8", "replace").split("\r\n")
    if lines[0] != "WARC/1.1":
        problem(where, "version line %r" % lines[0])
    fields = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            problem(where, "bad field line %r" % line)
            continue
        fields.setdefault(name.strip().lower(), value.strip())
    try:
        length = int(fields.get("content-length", ""))
    except ValueError:
        problem(where, "no Content-Length")
        return None
    block = raw[head_end + 4 : head_end + 4 + length]
    if len(block) != length:
        problem(where, "block shorter than Content-Length")
    if raw[head_end + 4 + length :] != b"\r\n\r\n":
        problem(where, "record not ended by CRLF CRLF (or more than one record in a member)")
    return fields, block


def http_parts(block):
    end = block.find(b"\r\n\r\n")
    if end < 0:
        return None, None
    return block[: end + 4], block[end + 4 :]


def decode(body, head):
    codings = []
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-encoding":
            codings += [c.strip().lower() for c in value.split(",") if c.strip()]
    for c in reversed(codings):
        if c == "identity":
            continue
        if c in ("gzip", "x-gzip"):
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif c == "deflate":
            d = zlib.decompressobj()
        elif c in ("br", "zstd"):  # Debian's brotli and zstd commands (scripts/bootstrap)
            cmd = ["brotli", "-d", "-c"] if c == "br" else ["zstd", "-d", "-c", "-q"]
            try:
                body = subprocess.run(cmd, input=body, stdout=subprocess.PIPE, check=True).stdout
            except (OSError, subprocess.CalledProcessError):
                return None
            continue
        else:
            return None
        body = d.decompress(body)
    return body


DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")
UUID = re.compile(r"^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$")


def check_file(path, ids, responses, requests, stats, conversions):
    data = open(path, "rb").read()
    records = []
    try:
        for off, raw in members(data):
            where = "%s@%d" % (path, off)
            parsed = parse_record(raw, where)
            if parsed:
                records.append((where, parsed[0], parsed[1]))
    except (ValueError, zlib.error) as e:
        problem(path, str(e))
        return
    if not records or records[0][1].get("warc-type") != "warcinfo":
        problem(path, "does not start with a warcinfo record")
        return
    info_id = records[0][1].get("warc-record-id")
    for where, f, block in records:
        stats["records"] += 1
        rid, wtype = f.get("warc-record-id", ""), f.get("warc-type")
        if not UUID.match(rid):
            problem(where, "WARC-Record-ID %r is not a random <urn:uuid:...>" % rid)
        if rid in ids:
            problem(where, "WARC-Record-ID %s used twice" % rid)
        ids[rid] = (wtype, f, block)
        if not DATE.match(f.get("warc-date", "")):
            problem(where, "WARC-Date %r" % f.get("warc-date"))
        if f.get("warc-block-digest") != sha1_b32(block):
            problem(where, "WARC-Block-Digest does not match the block")
        if wtype != "warcinfo" and f.get("warc-warcinfo-id") != info_id:
            problem(where, "WARC-Warcinfo-ID is not the file's warcinfo")
        if wtype == "conversion":
            conversions.append((where, f))
            if not f.get("warc-target-uri"):
                problem(where, "a conversion record without WARC-Target-URI")
            pd = f.get("warc-payload-digest")
            if pd is not None and pd != sha1_b32(block):
                problem(where, "WARC-Payload-Digest does not match the conversion's block")
        if wtype in ("response", "revisit", "request"):
            want = "application/http; msgtype=" + ("request" if wtype == "request" else "response")
            if f.get("content-type") != want:
                problem(where, "Content-Type %r" % f.get("content-type"))
            head, body = http_parts(block)
            if head is None:
                problem(where, "the block is not an HTTP message")
                continue
            if wtype == "response" and f.get("warc-payload-digest") != sha1_b32(body):
                problem(where, "WARC-Payload-Digest does not match the HTTP body")
            if re.search(rb"(?im)^transfer-encoding:.*chunked", head):
                problem(where, "a head says chunked, but the framing is removed")
            if wtype == "request":
                requests.append((where, f))
            else:
                responses.append((where, f, head, body))


def main(argv):
    expect = None
    if len(argv) > 2 and argv[1] == "--expect":
        expect = json.load(open(argv[2]))
        argv = argv[2:]
    ids, responses, requests, conversions = {}, [], [], []
    stats = {"records": 0}
    for path in argv[1:]:
        check_file(path, ids, responses, requests, stats, conversions)
    for where, f in conversions:
        to = f.get("warc-refers-to")
        if to is not None and (to not in ids or ids[to][0] not in ("response", "revisit")):
            problem(where, "conversion's WARC-Refers-To %r names no response" % to)
    paired = {}
    for where, f in requests:
        to = f.get("warc-concurrent-to")
        target = ids.get(to)
        if not target or target[0] not in ("response", "revisit"):
            problem(where, "request's WARC-Concurrent-To %r names no response" % to)
            continue
        if target[1].get("warc-target-uri") != f.get("warc-target-uri"):
            problem(where, "request and response of different URIs")
        paired[to] = paired.get(to, 0) + 1
    by_url = {}
    for where, f, head, body in responses:
        rid = f.get("warc-record-id")
        if paired.get(rid) != 1:
            problem(where, "response paired with %d requests" % paired.get(rid, 0))
        if f.get("warc-type") == "revisit":
            ref = ids.get(f.get("warc-refers-to"))
            if not ref or ref[0] != "response":
                problem(where, "revisit refers to no response")
            elif ref[1].get("warc-payload-digest") != f.get("warc-payload-digest"):
                problem(where, "revisit's payload digest differs from the original's")
            elif ref[1].get("warc-target-uri") != f.get("warc-refers-to-target-uri"):
                problem(where, "WARC-Refers-To-Target-URI is not the original's")
            continue
        by_url[f.get("warc-target-uri")] = (where, head, body)
    unchecked = 0
    for url, path in (expect or {}).items():
        if url not in by_url:
            problem(url, "no response record")
            continue
        where, head, body = by_url[url]
        want = open(path, "rb").read()
        got = decode(body, head)
        if got is None:
            unchecked += 1
        elif got != want:
            problem(where, "decoded payload (%d bytes) differs from the fetch's body (%d bytes)"
                    % (len(got), len(want)))
    for p in problems:
        print(p)
    print("warc_check: %d records, %d responses, %d requests, %d conversions, %d bodies "
          "compared (%d unchecked codings), %d problems"
          % (stats["records"], len(responses), len(requests), len(conversions),
             len(expect or {}) - unchecked, unchecked, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
