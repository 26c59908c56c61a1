#!/usr/bin/env python3
"""Generate the static site of the benchmark (scripts/bench).

    bench_site.py OUTDIR [--pages N] [--seed S] [--js]

Writes OUTDIR/index.html, OUTDIR/p/<i>.html for i in 0..N-1 and OUTDIR/paths.txt
(every page path, one a line: the list wrk cycles through).

With --js (scripts/bench-render), a JavaScript site: the list of links is not in a
page's HTML but in OUTDIR/p/<i>.json, which a script of the page fetches and inserts
as <a> elements; the HTML links only to /index.html, /p/0.html and the previous page,
so a crawler that runs no scripts finds two pages.

Each page is 10-20 KB of ordinary-looking HTML: a head with title and meta tags, a
nav bar, headings, paragraphs of text and a list of 20-50 links. Links come in
relative ("123.html", "./123.html") and root-relative ("/p/123.html") forms, some
with #fragments, plus a few to https://example.invalid/ that a crawler restricted
to the site's host must not follow. Page i links to i+1, 2i+1 and 2i+2 (those that
exist), so every page is reachable from /index.html -> /p/0.html; the rest of the
links are random. Deterministic: the same N and seed give the same bytes.
"""
import argparse
import json
import os
import random

WORDS = (
    "crawler frontier politeness robots fetch queue coroutine socket header body "
    "parser selector anchor document element attribute response request latency "
    "throughput bandwidth cache resolver address timeout retry redirect status "
    "content encoding charset archive sitemap domain host port path query fragment "
    "the a of to and in is for on with as by at from that this be are was it an or "
    "which not have has will can more most other some each about into over after "
    "river mountain village harbour market garden library museum station bridge "
    "winter summer autumn spring morning evening history science music painting"
).split()

TOPICS = ("Notes", "Survey", "Report", "Guide", "Review", "Digest", "Journal", "Index")


def sentence(rng):
    n = rng.randint(6, 18)
    words = [rng.choice(WORDS) for _ in range(n)]
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice(".....?!")


def paragraph(rng):
    return " ".join(sentence(rng) for _ in range(rng.randint(3, 7)))


def link_href(rng, j):
    kind = rng.random()
    if kind < 0.45:
        href = "%d.html" % j
    elif kind < 0.55:
        href = "./%d.html" % j
    else:
        href = "/p/%d.html" % j
    if rng.random() < 0.15:
        href += "#s%d" % rng.randint(1, 5)
    return href


# --js: the page's script. The links come from <i>.json, fetched once the page has
# parsed, and go into the list as a framework's client-side rendering would put them.
JS_LINKS = """<script>
fetch("%d.json").then(function (r) { return r.json(); }).then(function (links) {
  var ul = document.getElementById("links");
  links.forEach(function (l) {
    var li = document.createElement("li"), a = document.createElement("a");
    a.href = l[0];
    a.textContent = l[1];
    li.appendChild(a);
    ul.appendChild(li);
  });
});
</script>
"""


def page(i, n, rng, pool, js=False):
    """The page's HTML, and with js its links as [[href, text], ...] (else None)."""
    size_target = rng.randint(10 * 1024, 20 * 1024)
    nlinks = rng.randint(20, 50)
    # Structural links first: they make the whole site reachable from page 0.
    targets = [j for j in (i + 1, 2 * i + 1, 2 * i + 2) if j < n]
    n_external = rng.randint(1, 3)
    while len(targets) < nlinks - n_external:
        targets.append(rng.randrange(n))
    title = "%s %d: %s %s" % (rng.choice(TOPICS), i, rng.choice(WORDS), rng.choice(WORDS))
    links = []
    for j in targets:
        links.append((link_href(rng, j), "%s %d" % (rng.choice(WORDS).capitalize(), j)))
    for _ in range(n_external):
        links.append(("https://example.invalid/%s/%d" % (rng.choice(WORDS), rng.randrange(10 ** 6)),
                      "elsewhere"))
    rng.shuffle(links)

    head = (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
        "<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"description\" content=\"%s\">\n"
        "<title>%s</title>\n"
        "</head>\n<body>\n"
        "<nav class=\"top\"><a href=\"/index.html\">Home</a> | <a href=\"/p/0.html\">Start</a>"
        " | <a href=\"%d.html\">Previous</a></nav>\n"
        "<main>\n<h1>%s</h1>\n"
    ) % (sentence(rng).rstrip(".?!"), title, max(i - 1, 0), title)
    if js:
        link_block = "<section class=\"links\">\n<h2>Related pages</h2>\n<ul id=\"links\"></ul>\n</section>\n"
    else:
        link_block = (
            "<section class=\"links\">\n<h2>Related pages</h2>\n<ul>\n"
            + "\n".join('<li><a href="%s">%s</a></li>' % l for l in links) + "\n</ul>\n</section>\n"
        )
    tail = "</main>\n<footer><p>Page %d of %d. Generated for the luacrawl benchmark.</p></footer>\n%s</body>\n</html>\n" % (
        i, n, JS_LINKS % i if js else "")

    parts = []
    size = len(head) + len(link_block) + len(tail)
    section = 1
    while size < size_target:
        if rng.random() < 0.25:
            chunk = '<h2 id="s%d">%s</h2>\n' % (section, rng.choice(pool["headings"]))
            section += 1
        else:
            chunk = rng.choice(pool["paragraphs"])
        if size + len(chunk) > 20 * 1024 - 64:
            break
        parts.append(chunk)
        size += len(chunk)
    # Links in the middle of the body, as on a real page.
    half = len(parts) // 2
    body = "".join(parts[:half]) + link_block + "".join(parts[half:])
    return head + body + tail, (links if js else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--pages", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=20240)
    ap.add_argument("--js", action="store_true", help="links inserted by script from <i>.json")
    args = ap.parse_args()
    n = args.pages
    if n < 1:
        ap.error("--pages must be at least 1")

    pdir = os.path.join(args.outdir, "p")
    os.makedirs(pdir, exist_ok=True)
    rng = random.Random(args.seed)
    # Text comes from a pool drawn once (drawing every word of 300 MB is slow); the
    # pool is large enough that pages do not look alike.
    pool = {
        "headings": [sentence(rng).rstrip(".?!") for _ in range(2000)],
        "paragraphs": ["<p>%s</p>\n" % paragraph(rng) for _ in range(5000)],
    }
    total = 0
    for i in range(n):
        html, links = page(i, n, rng, pool, args.js)
        html = html.encode("utf-8")
        total += len(html)
        with open(os.path.join(pdir, "%d.html" % i), "wb") as f:
            f.write(html)
        if links is not None:
            with open(os.path.join(pdir, "%d.json" % i), "w") as f:
                json.dump(links, f)
    with open(os.path.join(args.outdir, "index.html"), "w") as f:
        f.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>luacrawl bench</title>"
                "</head>\n<body><h1>luacrawl bench site</h1>\n"
                "<p><a href=\"/p/0.html\">Start here</a></p>\n</body></html>\n")
    with open(os.path.join(args.outdir, "paths.txt"), "w") as f:
        for i in range(n):
            f.write("/p/%d.html\n" % i)
    print("bench_site: %d pages, %.1f MB in %s" % (n, total / 1e6, args.outdir))


if __name__ == "__main__":
    main()
