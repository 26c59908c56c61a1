#!/usr/bin/env python3
"""Generate the static site of the benchmark (scripts/bench).

    bench_site.py OUTDIR [--pages N] [--seed S] [--shape flat|tree] [--js]

Writes OUTDIR/index.html, OUTDIR/p/<i>.html for i in 0..N-1 and OUTDIR/paths.txt
(every page path, one a line: the list wrk cycles through).

Each page is 10-20 KB of ordinary-looking HTML: a head with title and meta tags, a
nav bar, headings, paragraphs of text and a list of 20-50 links. Links come in
relative ("123.html", "./123.html") and root-relative ("/p/123.html") forms, some
with #fragments, plus a few to https://example.invalid/ that a crawler restricted
to the site's host must not follow. Page i links to i+1, 2i+1 and 2i+2 (those that
exist), so every page is reachable from /index.html -> /p/0.html; the rest of the
links are random. Deterministic: the same N and seed give the same bytes.

--shape tree: the link-heavy site of scripts/bench-crawl (issue 36). Pages of the
same 10-20 KB, each with 44-52 links, all relative to the page: the pages live in a
tree of directories (OUTDIR/t/d1/d3/.../<i>.html, 20 pages a directory, 4
subdirectories a directory, up to 6 deep), and a page links to pages of its own
directory ("123.html", "./123.html"), of its subdirectories ("d2/123.html") and
anywhere else through "../" ("../../d0/d1/123.html"), some with #fragments, plus
one to three to https://example.invalid/. The links of a page, OUTDIR/index.html's
included, are relative, so that OUTDIR may be served below the root; paths.txt holds
the paths from OUTDIR.

With --js (scripts/bench-render), a JavaScript site: the list of links is not in a
page's HTML but in OUTDIR/p/<i>.json, which a script of the page fetches and inserts
as <a> elements; the HTML links only to /index.html, /p/0.html and the previous page,
so a crawler that runs no scripts finds two pages.
"""
import argparse
import json
import os
import posixpath
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


def flat_targets(i, n, rng):
    """The pages page i links to, and how many links go elsewhere."""
    nlinks = rng.randint(20, 50)
    # Structural links first: they make the whole site reachable from page 0.
    targets = [j for j in (i + 1, 2 * i + 1, 2 * i + 2) if j < n]
    n_external = rng.randint(1, 3)
    while len(targets) < nlinks - n_external:
        targets.append(rng.randrange(n))
    return targets, n_external


def page(i, n, rng, pool, tree=None, js=False):
    """Page i: of the flat site, or with tree (tree_links) of the tree's; and with js
    its links as [[href, text], ...] (else None)."""
    size_target = rng.randint(10 * 1024, 20 * 1024)
    targets, n_external = (tree.targets if tree else flat_targets)(i, n, rng)
    title = "%s %d: %s %s" % (rng.choice(TOPICS), i, rng.choice(WORDS), rng.choice(WORDS))
    href = tree.href if tree else (lambda j: link_href(rng, j))
    links = []
    for j in targets:
        links.append((href(j), "%s %d" % (rng.choice(WORDS).capitalize(), j)))
    for _ in range(n_external):
        links.append(("https://example.invalid/%s/%d" % (rng.choice(WORDS), rng.randrange(10 ** 6)),
                      "elsewhere"))
    rng.shuffle(links)
    home, start, prev = ("/index.html", "/p/0.html", "%d.html" % max(i - 1, 0))
    if tree:
        home, start, prev = tree.up + "/index.html", tree.href(0, 0), tree.href(max(i - 1, 0), 0)

    head = (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
        "<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"description\" content=\"%s\">\n"
        "<title>%s</title>\n"
        "</head>\n<body>\n"
        "<nav class=\"top\"><a href=\"%s\">Home</a> | <a href=\"%s\">Start</a>"
        " | <a href=\"%s\">Previous</a></nav>\n"
        "<main>\n<h1>%s</h1>\n"
    ) % (sentence(rng).rstrip(".?!"), title, home, start, prev, title)
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


PER_DIR = 20  # pages a directory of the tree
FANOUT = 4  # subdirectories a directory


def tree_dir(k):
    """The directory of number k (0 the top), from OUTDIR: "t", "t/d1", "t/d1/d3"..."""
    parts = []
    while k > 0:
        parts.append("d%d" % ((k - 1) % FANOUT))
        k = (k - 1) // FANOUT
    return "/".join(["t"] + parts[::-1])


class TreeLinks:
    """The links of page i of the tree: its targets and their hrefs, relative to its
    directory."""

    def __init__(self, i, n, rng):
        self.n, self.rng = n, rng
        self.here = tree_dir(i // PER_DIR)
        self.up = posixpath.relpath(".", self.here)

    def targets(self, i, n, rng):
        d, ndirs = i // PER_DIR, (n + PER_DIR - 1) // PER_DIR
        children = [c for c in range(FANOUT * d + 1, FANOUT * d + FANOUT + 1) if c < ndirs]

        def in_dir(k):
            first = k * PER_DIR
            return first + rng.randrange(min(PER_DIR, n - first))

        nlinks = rng.randint(44, 52)
        targets = [j for j in (i + 1, 2 * i + 1, 2 * i + 2) if j < n]
        n_external = rng.randint(1, 3)
        while len(targets) < nlinks - n_external:
            kind = rng.random()
            if kind < 0.35:
                targets.append(in_dir(d))  # a sibling
            elif kind < 0.55 and children:
                targets.append(in_dir(rng.choice(children)))  # in a subdirectory
            else:
                targets.append(rng.randrange(n))  # anywhere: mostly "../" forms
        return targets, n_external

    def href(self, j, vary=1):
        href = posixpath.relpath(tree_path(j), self.here)
        if vary and "/" not in href and self.rng.random() < 0.15:
            href = "./" + href
        if vary and self.rng.random() < 0.1:
            href += "#s%d" % self.rng.randint(1, 5)
        return href


def tree_path(j):
    return "%s/%d.html" % (tree_dir(j // PER_DIR), j)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--pages", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=20240)
    ap.add_argument("--shape", choices=("flat", "tree"), default="flat")
    ap.add_argument("--js", action="store_true", help="links inserted by script from <i>.json")
    args = ap.parse_args()
    n = args.pages
    if n < 1:
        ap.error("--pages must be at least 1")
    tree = args.shape == "tree"
    if tree and args.js:
        ap.error("--js makes a flat site: not with --shape tree")

    os.makedirs(args.outdir, exist_ok=True)
    rng = random.Random(args.seed)
    # Text comes from a pool drawn once (drawing every word of 300 MB is slow); the
    # pool is large enough that pages do not look alike.
    pool = {
        "headings": [sentence(rng).rstrip(".?!") for _ in range(2000)],
        "paragraphs": ["<p>%s</p>\n" % paragraph(rng) for _ in range(5000)],
    }
    total = 0
    paths = []
    for i in range(n):
        paths.append(tree_path(i) if tree else "p/%d.html" % i)
        html, links = page(i, n, rng, pool, TreeLinks(i, n, rng) if tree else None, args.js)
        html = html.encode("utf-8")
        total += len(html)
        out = os.path.join(args.outdir, paths[-1])
        if i == 0 or (tree and i % PER_DIR == 0):
            os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(html)
        if links is not None:
            with open(os.path.join(os.path.dirname(out), "%d.json" % i), "w") as f:
                json.dump(links, f)
    with open(os.path.join(args.outdir, "index.html"), "w") as f:
        f.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>luacrawl bench</title>"
                "</head>\n<body><h1>luacrawl bench site</h1>\n"
                "<p><a href=\"%s\">Start here</a></p>\n</body></html>\n" % (
                    tree_path(0) if tree else "/p/0.html"))
    with open(os.path.join(args.outdir, "paths.txt"), "w") as f:
        for p in paths:
            f.write("/%s\n" % p)
    print("bench_site: %d pages%s, %.1f MB in %s" % (
        n, " in a tree" if tree else "", total / 1e6, args.outdir))


if __name__ == "__main__":
    main()
