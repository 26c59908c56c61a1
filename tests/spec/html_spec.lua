-- Specification of lc.html: parsing with encoding detection, the document and node
-- API, link extraction, and robustness against whatever a crawler downloads.

local lc = require "luacrawl"
local html = lc.html

local function parse(body, opts)
  return html.parse(body, opts)
end

local function text_of(body, opts)
  return parse(body, opts):text()
end

local CAFE = "caf\195\169" -- "café" in UTF-8
local KONNICHIWA_SJIS = "\130\177\130\241\130\201\130\191\130\205"
local KONNICHIWA = "\227\129\147\227\130\147\227\129\171\227\129\161\227\129\175"

describe("html.parse encoding detection", function()
  it("maps encoding labels as the Encoding Standard does", function()
    assert.equal("windows-1252", html.encoding("latin1"))
    assert.equal("windows-1252", html.encoding("ISO-8859-1"))
    assert.equal("windows-1252", html.encoding("us-ascii"))
    assert.equal("UTF-8", html.encoding("  UTF8 \t"))
    assert.equal("Shift_JIS", html.encoding("x-sjis"))
    assert.equal("EUC-KR", html.encoding("ks_c_5601-1987"))
    assert.equal("GBK", html.encoding("gb2312"))
    assert.equal("UTF-16LE", html.encoding("utf-16"))
    assert.is_nil(html.encoding("utf"))
    assert.is_nil(html.encoding("8859-1"))
    assert.is_nil(html.encoding("latin1 utf-8"))
  end)

  it("reads UTF-8 declared by <meta charset>", function()
    local doc = parse('<meta charset="utf-8"><p>' .. CAFE .. "</p>")
    assert.equal("UTF-8", doc.encoding)
    assert.equal(CAFE, doc:css1("p"):text())
  end)

  it("falls back to windows-1252 when nothing declares an encoding", function()
    local doc = parse("<p>caf\233 \128 \147q\148</p>")
    assert.equal("windows-1252", doc.encoding)
    -- é, the euro sign and curly quotes: windows-1252, not ISO-8859-1
    assert.equal(CAFE .. " \226\130\172 \226\128\156q\226\128\157", doc:css1("p"):text())
  end)

  it("reads Shift_JIS declared by <meta>, trail bytes that look like ASCII included", function()
    -- 表 is 0x95 0x5C: its second byte is a backslash in ASCII
    local doc = parse('<meta charset="Shift_JIS"><p>' .. KONNICHIWA_SJIS .. "\149\92</p>")
    assert.equal("Shift_JIS", doc.encoding)
    assert.equal(KONNICHIWA .. "\232\161\168", doc:css1("p"):text())
  end)

  it("reads the charset of <meta http-equiv=Content-Type content=...>", function()
    local doc = parse('<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
      .. "<p>\207\240\232\226\229\242</p>")
    assert.equal("windows-1251", doc.encoding)
    assert.equal("\208\159\209\128\208\184\208\178\208\181\209\130", doc:css1("p"):text()) -- Привет
  end)

  it("ignores a content charset without http-equiv=Content-Type", function()
    assert.equal("windows-1252", parse('<meta content="text/html; charset=koi8-r"><p>x</p>').encoding)
  end)

  it("ignores a <meta> inside a comment", function()
    assert.equal("windows-1252", parse("<!-- <meta charset=koi8-r> --><p>x</p>").encoding)
  end)

  it("prefers the HTTP charset to a <meta>", function()
    local doc = parse('<meta charset="utf-8"><p>caf\233</p>', { charset = "ISO-8859-1" })
    assert.equal("windows-1252", doc.encoding)
    assert.equal(CAFE, doc:css1("p"):text())
  end)

  it("prefers a byte order mark to a wrong HTTP charset", function()
    local doc = parse("\239\187\191<p>" .. CAFE .. "</p>", { charset = "iso-8859-1" })
    assert.equal("UTF-8", doc.encoding)
    assert.equal(CAFE, doc:css1("p"):text())
  end)

  it("reads UTF-16 with a byte order mark", function()
    assert.equal("hi", parse("\255\254<\0p\0>\0h\0i\0"):css1("p"):text())
    assert.equal("hi", parse("\254\255\0<\0p\0>\0h\0i"):css1("p"):text())
    assert.equal("UTF-16BE", parse("\254\255\0<\0p\0>\0h\0i").encoding)
  end)

  it("ignores unknown labels and goes on to the next source", function()
    local doc = parse("<meta charset=koi8-r><p>\193</p>", { charset = "x-bogus" })
    assert.equal("KOI8-R", doc.encoding)
  end)

  it("reads a <meta> declaring UTF-16 as UTF-8, as the spec says", function()
    assert.equal("UTF-8", parse('<meta charset="utf-16"><p>x</p>').encoding)
  end)

  it("switches to a <meta> met after the first 1024 bytes, as a browser's parser does", function()
    local doc = parse(string.rep(" ", 1100) .. '<meta charset="utf-8"><p>' .. CAFE .. "</p>")
    assert.equal("UTF-8", doc.encoding)
    assert.equal(CAFE, doc:css1("p"):text())
  end)

  it("keeps windows-1252 when no <meta> anywhere declares an encoding", function()
    local doc = parse(string.rep(" ", 1100) .. "<p>" .. CAFE .. "</p>")
    assert.equal("windows-1252", doc.encoding)
    assert.equal("caf\195\131\194\169", doc:css1("p"):text()) -- read as windows-1252
  end)

  it("does not let libxml2 switch encodings on a later <meta>", function()
    local body = '<meta charset="utf-8"><p>x</p>' .. string.rep("<!-- pad -->", 100)
      .. '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
      .. "<p id=after>" .. CAFE .. "</p>"
    local doc = parse(body)
    assert.equal("UTF-8", doc.encoding)
    assert.equal(CAFE, doc:css1("#after"):text())
  end)

  it("replaces invalid UTF-8 with U+FFFD and keeps the text after it", function()
    local doc = parse('<meta charset=utf-8><p>a\255b\195c</p><p>end</p>')
    assert.equal("a\239\191\189b\239\191\189c", doc:css1("p"):text())
    assert.equal("end", doc:css("p")[2]:text())
  end)

  it("keeps the text after a byte the legacy decoder rejects", function()
    -- 0x81 is unassigned in windows-1252: it decodes to U+0081, and parsing goes on
    local doc = parse("<p>a\129b</p><p>after</p>")
    assert.equal("a\194\129b", doc:css1("p"):text())
    assert.equal("after", doc:css("p")[2]:text())
    -- a Shift_JIS lead byte cut off at the end of the body
    assert.equal(KONNICHIWA .. "\239\191\189",
      parse('<meta charset=sjis><p>' .. KONNICHIWA_SJIS .. "\130"):css1("p"):text())
  end)

  it("drops NUL bytes, as browsers do in text", function()
    assert.equal("ab", parse("<p>a\0b</p>"):css1("p"):text())
    assert.equal("ab", parse("<meta charset=utf-8><p>a\0b</p>"):css1("p"):text())
  end)
end)

describe("html documents", function()
  it("give the squashed text of the first <title>", function()
    assert.equal("Hello World", parse("<title>  Hello \n\t World </title><title>2</title>"):title())
  end)

  it("give nil as the title when there is none", function()
    assert.is_nil(parse("<p>no title</p>"):title())
  end)

  it("keep the URL and the encoding they were parsed with", function()
    local doc = parse("<p>x</p>", { url = "http://h.test/" })
    assert.equal("http://h.test/", doc.url)
    assert.equal("windows-1252", doc.encoding)
    assert.is_nil(parse("").url)
  end)

  it("give the root element", function()
    assert.equal("html", parse("<p>x</p>"):root().tag)
    assert.is_nil(parse(""):root())
  end)

  it("serialise to HTML", function()
    local doc = parse("<p class=a>x &amp; y</p>")
    assert.matches('<p class="a">x &amp; y</p>', doc:html(), 1, true)
  end)
end)

describe("html nodes", function()
  local doc = parse([[<div id="d" CLASS="a  b" data-empty><p>one
    <b>two</b>  three</p><img src=x.png alt="pic"></div>]])
  local div = doc:css1("div")

  it("have a lower-case tag", function()
    assert.equal("div", div.tag)
    assert.equal("b", parse("<B>x</B>"):css1("b").tag)
  end)

  it("give attributes by name, any case, nil when absent, '' when empty", function()
    assert.equal("d", div:attr("id"))
    assert.equal("a  b", div:attr("class"))
    assert.equal("a  b", div:attr("CLASS"))
    assert.equal("", div:attr("data-empty"))
    assert.is_nil(div:attr("title"))
  end)

  it("give all attributes as a table", function()
    assert.same({ id = "d", class = "a  b", ["data-empty"] = "" }, div:attrs())
  end)

  it("give their text with whitespace as in the document", function()
    assert.equal("one\n    two  three", doc:css1("p"):text())
  end)

  it("squash whitespace in their text when asked", function()
    assert.equal("one two three", doc:css1("p"):text({ squash = true }))
    assert.equal("one two three", doc:css1("p"):text(true))
  end)

  it("serialise to their outer HTML", function()
    assert.equal('<img src="x.png" alt="pic">', doc:css1("img"):html())
    assert.equal("<b>two</b>", doc:css1("b"):html())
  end)

  it("compare equal when they are the same element", function()
    assert.equal(doc:css1("p"), div:css1("p"))
    assert.not_equal(doc:css1("p"), doc:css1("b"))
  end)
end)

describe("html xpath", function()
  local doc = parse([[<ul><li class=x>1</li><li>2</li></ul><p title="t">text<!--c--></p>]])

  it("returns element nodes", function()
    local lis = doc:xpath("//li")
    assert.equal(2, #lis)
    assert.equal("li", lis[1].tag)
  end)

  it("returns strings for text, attribute and comment nodes", function()
    assert.same({ "1", "2" }, doc:xpath("//li/text()"))
    assert.same({ "t" }, doc:xpath("//p/@title"))
    assert.same({ "c" }, doc:xpath("//comment()"))
  end)

  it("returns numbers, strings and booleans as one-item lists", function()
    assert.same({ 2 }, doc:xpath("count(//li)"))
    assert.same({ "12" }, doc:xpath("string(//ul)"))
    assert.same({ true }, doc:xpath("boolean(//li[@class='x'])"))
  end)

  it("evaluates relative to a node", function()
    local ul = doc:css1("ul")
    assert.same({ "1", "2" }, ul:xpath("li/text()"))
    assert.equal(2, #ul:xpath(".//li"))
    assert.equal("2", ul:xpath1("li[2]"):text())
    assert.is_nil(ul:xpath1("p"))
  end)

  it("raises on a bad expression, naming it", function()
    local ok, err = pcall(doc.xpath, doc, "//li[")
    assert.is_false(ok)
    assert.equal('xpath: invalid expression at position 6 in "//li["', err)
  end)
end)

describe("html links", function()
  local URL = "http://h.test/dir/page.html"

  local function links(body, opts, url)
    return parse(body, { url = url or URL }):links(opts)
  end

  it("are absolute and normalized", function()
    assert.same({ "http://h.test/dir/a.html", "http://h.test/up.html", "http://h.test/top",
      "http://h.test/dir/page.html?q=1", "http://other.test/x" },
      links([[<a href="a.html">a</a><a href="../up.html">u</a><a href="/top">r</a>
              <a href="?q=1">q</a><a href="HTTP://Other.TEST:80/./x">o</a>]]))
  end)

  it("include <area href>", function()
    assert.same({ "http://h.test/dir/map" }, links([[<map><area href="map" alt="m"></map>]]))
  end)

  it("resolve against the first <base href>, itself resolved against the document URL", function()
    assert.same({ "http://h.test/base/x" },
      links([[<base href="/base/"><base href="/other/"><a href="x">x</a>]]))
    assert.same({ "http://b.test/x" }, links([[<a href="x">x</a><base href="http://b.test/">]]))
  end)

  it("decode entities in href", function()
    assert.same({ "http://h.test/a?x=1&y=2" }, links([[<a href="/a?x=1&amp;y=2">x</a>]]))
    assert.same({ "http://h.test/a/b" }, links([[<a href="&#x2F;a&#47;b">x</a>]]))
  end)

  it("drop fragments and give each URL once, in document order", function()
    assert.same({ "http://h.test/a", "http://h.test/b", URL },
      links([[<a href="/a#1">1</a><a href="/b">b</a><a href="/a#2">2</a><a href="/a">3</a>
              <a href="#top">top</a><a href="">self</a>]]))
  end)

  it("skip javascript:, mailto:, data:, tel: and other non-http(s) schemes", function()
    assert.same({ "https://ok.test/" }, links([[
      <a href="javascript:void(0)">j</a><a href="  JavaScript:x()">J</a>
      <a href="mailto:a@b.test">m</a><a href="data:text/html,x">d</a><a href="tel:+1">t</a>
      <a href="ftp://f.test/">f</a><a href="java&#9;script:x">tab</a>
      <a href="https://ok.test/">ok</a>]]))
    -- A data: URL longer than any URL is skipped for its scheme, like a short one.
    local big = ('<a href="data:image/png;base64,%s">i</a>'):format(("QUFB"):rep(5000))
    assert.same({ "https://ok.test/" }, links(big .. '<a href="https://ok.test/">ok</a>'))
  end)

  it("include <meta http-equiv=refresh> targets", function()
    assert.same({ "http://h.test/target?a=1", "http://other.test/" }, links([[
      <meta http-equiv="Refresh" content="5; URL='/target?a=1'">
      <meta http-equiv=refresh content="0;url=http://other.test/">
      <meta http-equiv=refresh content="3">]]))
  end)

  it("add <link>, frames and images only when asked", function()
    local body = [[<link rel=stylesheet href="/s.css"><iframe src="/f"></iframe>
      <frame src="/g"><img src="/i.png"><a href="/a">a</a>]]
    assert.same({ "http://h.test/a" }, links(body))
    assert.same({ "http://h.test/s.css", "http://h.test/a" }, links(body, { link = true }))
    assert.same({ "http://h.test/f", "http://h.test/g", "http://h.test/a" },
      links(body, { frames = true }))
    assert.same({ "http://h.test/i.png", "http://h.test/a" }, links(body, { img = true }))
  end)

  it("report url, text, nofollow and tag with detail=true", function()
    assert.same({
      { url = "http://h.test/a", text = "A link", nofollow = true, tag = "a" },
      { url = "http://h.test/b", text = "B", nofollow = false, tag = "a" },
      { url = "http://h.test/m", text = "map", nofollow = false, tag = "area" },
    }, links([[<a href="/a" rel="NoFollow noopener"> A
      <b>link</b> </a><a href="/b" rel="next">B</a><area href="/m" alt="map">]], { detail = true }))
  end)

  it("report nofollow only when every occurrence of the URL has it", function()
    local l = links([[<a href="/a" rel=nofollow>1</a><a href="/a">2</a>]], { detail = true })
    assert.equal(1, #l)
    assert.is_false(l[1].nofollow)
  end)

  it("are found in broken markup", function()
    assert.same({ "http://h.test/one", "http://h.test/two", "http://h.test/three" }, links([[
      <div><a href=/one>one<a href='/two'>two</div></a></span><p><p><a href="/three">three]]))
  end)

  it("come out the same from html.links(body), which builds no tree", function()
    local bodies = {
      [[<base href="/b/"><a href="x#f">x</a><a href="/y" rel=nofollow>y</a><a href="x">again</a>]],
      [[<a href="/outer"><em><a href="/inner">in</a></em> after</a><area href="/m" alt="map">]],
      [[<meta http-equiv=refresh content="0; url=/r"><link href="/l"><img src="/i" alt="I">]],
      [[<div><a href=/one>one<a href='/two'>two</div></a></span><p><p><a href="/three">3]],
      "<p>" .. string.rep("<a href='/p?x=1&amp;y=2'>a</a> ", 100),
    }
    for _, body in ipairs(bodies) do
      for _, opts in ipairs({ { url = URL }, { url = URL, detail = true, link = true, img = true } }) do
        assert.same(parse(body, opts):links(opts), html.links(body, opts))
      end
    end
    assert.same({ "https://abs.test/" }, html.links([[<a href="/x">x</a><a href="https://abs.test/">]]))
  end)

  it("come out of html.links(body) with the body's encoding", function()
    local body = '<meta charset="Shift_JIS"><a href="/' .. KONNICHIWA_SJIS .. '">x</a>'
    assert.same({ "http://h.test/%E3%81%93%E3%82%93%E3%81%AB%E3%81%A1%E3%81%AF" },
      html.links(body, { url = "http://h.test/" }))
    assert.same(html.links(body, { url = "http://h.test/" }),
      parse(body, { url = "http://h.test/" }):links())
  end)

  it("keep only those under a prefix, with prefix=", function()
    local body = [[<a href="/a">a</a><a href="http://other.test/b">b</a><a href="/dir/c">c</a>]]
    local want = { "http://h.test/a", "http://h.test/dir/c" }
    assert.same(want, links(body, { prefix = "http://h.test/" }))
    assert.same(want, html.links(body, { url = URL, prefix = "http://h.test/" }))
    assert.same({ "http://h.test/dir/c" }, links(body, { prefix = "http://h.test/dir/" }))
    assert.has_error(function() links(body, { prefix = 1 }) end, "links: prefix must be a string")
  end)

  it("keep only links a seen set did not hold, and add them, with unseen=", function()
    local seen = lc.seen()
    seen:add("http://h.test/a")
    local body = [[<a href="/a">a</a><a href="/b">b</a><a href="http://other.test/c">c</a><a href="/b#x">b</a>]]
    assert.same({ "http://h.test/b" }, links(body, { prefix = "http://h.test/", unseen = seen }))
    assert.is_true(seen:has("http://h.test/b"))
    assert.is_false(seen:has("http://other.test/c")) -- dropped by prefix first: not added
    assert.same({ "http://other.test/c" }, html.links(body, { url = URL, unseen = seen }))
    assert.same({}, html.links(body, { url = URL, unseen = seen }))
    assert.same({ { url = "http://h.test/new", tag = "a", text = "n", nofollow = false } },
      links([[<a href="/new">n</a><a href="/a">a</a>]], { unseen = seen, detail = true }))
    assert.has_error(function() links(body, { unseen = {} }) end)
  end)

  it("keep only absolute links when the document has no URL", function()
    assert.same({ "https://abs.test/x" },
      parse([[<a href="/rel">r</a><a href="https://abs.test/x#f">a</a>]]):links())
  end)
end)

describe("html robustness", function()
  it("keeps the text of unclosed tags", function()
    assert.equal("onetwothree", text_of("<div><p>one<b>two<i>three"))
  end)

  it("ignores a stray end tag", function()
    assert.equal("ab", text_of("<div>a</div></div></span>b"))
  end)

  it("closes a <p> opened inside a <p>", function()
    local doc = parse("<p>one<p>two")
    assert.equal(2, #doc:css("p"))
    assert.is_nil(doc:css1("p p"))
  end)

  it("parses a 5 MB document on one line", function()
    local body = "<p>" .. string.rep("word ", 1000000) .. "</p><a href=/end>end</a>"
    local doc = parse(body, { url = "http://h.test/" })
    assert.equal(5000000, #doc:css1("p"):text())
    assert.same({ "http://h.test/end" }, doc:links())
  end)

  it("keeps the text of documents nested deeper than libxml2's default limit", function()
    local doc = parse(string.rep("<div>", 5000) .. "bottom")
    assert.equal("bottom", doc:text())
  end)

  it("survives binary junk", function()
    math.randomseed(42)
    for _ = 1, 20 do
      local bytes = {}
      for i = 1, 20000 do bytes[i] = string.char(math.random(0, 255)) end
      local body = table.concat(bytes)
      local doc = parse(body, { url = "http://h.test/" })
      assert.is_string(doc:text())
      assert.same(doc:links({ detail = true }),
        html.links(body, { url = "http://h.test/", detail = true }))
      assert.is_table(doc:css("a, p"))
    end
  end)

  it("gives an empty document for an empty body", function()
    local doc = parse("")
    assert.equal("", doc:text())
    assert.same({}, doc:css("p"))
    assert.same({}, doc:links())
    assert.is_nil(doc:title())
  end)

  it("raises on a body that is not a string", function()
    assert.has_error(function() html.parse(nil) end,
      "html.parse: body must be a string, got nil")
  end)
end)

describe("html memory", function()
  it("keeps a document alive while one of its nodes is", function()
    local node = (function()
      return parse("<p>still here</p>"):css1("p")
    end)()
    collectgarbage()
    collectgarbage()
    assert.equal("still here", node:text())
  end)

  it("raises on any use of a freed document or its nodes", function()
    local doc = parse("<p>x</p>")
    local p = doc:css1("p")
    doc:free()
    doc:free() -- twice is fine
    assert.has_error(function() doc:css("p") end, "html: the document was freed")
    assert.has_error(function() p:text() end, "html: the node's document was freed")
    assert.is_nil(doc.url)
  end)
end)

describe("Response:html", function()
  local function response(body, content_type)
    return setmetatable({
      status = 200, url = "http://h.test/dir/", body = body,
      headers = { ["content-type"] = content_type },
    }, lc.Response)
  end

  it("parses the body with the response's URL and charset, once", function()
    local res = response("<p>" .. KONNICHIWA_SJIS .. '</p><a href="x">x</a>',
      'text/html; charset="Shift_JIS"')
    local doc = res:html()
    assert.equal("Shift_JIS", doc.encoding)
    assert.equal(KONNICHIWA, doc:css1("p"):text())
    assert.same({ "http://h.test/dir/x" }, doc:links())
    assert.equal(doc, res:html())
    assert.is_nil(rawget(res, "html"))
  end)

  it("gives links with options and the title from one tree-free pass, in any order", function()
    local body = '<title>T  one</title><a href="/a">a</a><a href="http://o.test/b">b</a>'
      .. '<a href="/c" rel="nofollow">c</a><img src="/i.png">'
    local want_all = { "http://h.test/a", "http://o.test/b", "http://h.test/c" }
    -- links with a filter first, then the title; and the other way round
    local res = response(body, "text/html")
    local seen = lc.seen()
    seen:add("http://h.test/c")
    assert.same({ "http://h.test/a" }, res:html():links({ prefix = "http://h.test/", unseen = seen }))
    assert.same({}, res:html():links({ prefix = "http://h.test/", unseen = seen }))
    assert.equal("T one", res:html():title())
    assert.same(want_all, res:html():links())
    local res2 = response(body, "text/html")
    assert.equal("T one", res2:html():title())
    assert.same({ "http://o.test/b" }, res2:html():links({ prefix = "http://o.test/" }))
    -- options beyond the filters take their own pass, with the same title
    local res3 = response(body, "text/html")
    assert.same({ "http://h.test/a", "http://o.test/b", "http://h.test/c", "http://h.test/i.png" },
      res3:html():links({ img = true }))
    assert.equal("T one", res3:html():title())
    -- once released, the document is empty: no links, no title
    local res4 = response(body, "text/html")
    local doc = res4:html()
    assert.same(want_all, doc:links())
    res4:release()
    assert.is_nil(doc:title())
  end)

  it("parses again after the cached document was freed", function()
    local res = response("<p>x</p>", "text/html")
    res:html():free()
    assert.equal("x", res:html():css1("p"):text())
  end)

  it("reads the charset parameter of Content-Type", function()
    assert.equal("utf-8", html.charset("text/html; charset=UTF-8"))
    assert.equal("shift_jis", html.charset('text/html;Charset="Shift_JIS"'))
    assert.is_nil(html.charset("text/html"))
    assert.is_nil(html.charset("text/html; q=1"))
    assert.equal("latin1", html.charset("text/html ;  CHARSET = latin1 ; q=1"))
    assert.is_nil(html.charset(nil))
  end)
end)
