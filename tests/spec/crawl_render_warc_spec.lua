-- fixtures: --http
-- ways: one
-- Rendered pages in a crawl's WARC archive and their replay (--from-warc): the main
-- document's request and response, the DOM as a conversion record that refers to the
-- response, a screenshot as another; checked by readers that share nothing with ours
-- (tests/tools/warc_check.py, warcio through tests/tools/warcio). The fixture's
-- JavaScript site: /js/home links /js/landed in its HTML and /js/list by script;
-- /js/list inserts links to /js/item/0..2 by script. Every crawl here starts a
-- browser, so the spec runs once.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

local bin = assert(h.luacrawl_bin, "LUACRAWL_BIN is not set")
local build_dir = bin:match("^(.*)/[^/]+$")
local tools = h.source_dir .. "/tests/tools"

local ALL = { "/js/home", "/js/landed", "/js/list", "/js/item/0", "/js/item/1", "/js/item/2" }

local function set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local function path_of(url) return url:match("^http://[^/]+(/.*)$") end

local function records(path)
  local list = {}
  for rec in lc.warc.records(path) do list[#list + 1] = rec end
  return list
end

-- One render crawl of the JavaScript site through the binary, archived with an index,
-- shared by the tests that read it.
local archive
local function render_crawl()
  if archive then return archive end
  local prefix = h.tmpname("-render")
  local code, _, err = h.sh(("%q crawl -q --fields url --render --warc %q --cdx %q >/dev/null")
    :format(bin, prefix, h.url("/js/home")))
  assert.equal(0, code, err)
  archive = { file = prefix .. "-00000.warc.gz", cdx = prefix .. "-00000.cdxj" }
  return archive
end

describe("crawl with render and warc", function()
  it("archives each rendered page as request, response and a DOM conversion record referring to the response", function()
    local a = render_crawl()
    local by_id, responses, requests, doms = {}, {}, {}, {}
    for _, rec in ipairs(records(a.file)) do
      by_id[rec.id] = rec
      if rec.type == "response" then responses[path_of(rec.uri)] = rec end
      if rec.type == "request" then requests[rec.headers["WARC-Concurrent-To"]] = rec end
      if rec.type == "conversion" then doms[path_of(rec.uri)] = rec end
    end
    for _, path in ipairs(ALL) do
      local res, dom = assert(responses[path], path), assert(doms[path], path)
      assert.equal("text/html; charset=utf-8", dom.content_type)
      assert.equal(res.id, dom.headers["WARC-Refers-To"])
      -- the response is the document as the server sent it; the DOM, what scripts made of it
      local got = assert(res:response())
      assert.equal(200, got.status)
      assert.matches("^GET " .. path:gsub("%p", "%%%0") .. " HTTP/1%.1\r\n", requests[res.id].block)
      if path == "/js/home" then
        assert.is_nil(got.body:find('href="/js/list"', 1, true))
        assert.truthy(dom.block:find('href="/js/list"', 1, true))
      end
    end
    local conversions = 0
    for _, rec in pairs(by_id) do
      if rec.type == "conversion" then conversions = conversions + 1 end
    end
    assert.equal(#ALL, conversions) -- no screenshot unless asked
  end)

  it("writes an archive that warc_check and warcio read as valid, and an index warcio's agrees with", function()
    local a = render_crawl()
    local code, out, err = h.sh(("python3 %q %q"):format(tools .. "/warc_check.py", a.file))
    assert.equal(0, code, out .. err)
    assert.matches(("%d conversions"):format(#ALL), out)
    assert.matches(" 0 problems", out)
    code, out, err = h.sh(("%q %q cdx-index %q"):format(tools .. "/warcio", build_dir, a.file))
    assert.equal(0, code, "warcio failed (npm unreachable?): " .. err)
    local function parse(text)
      local lines = {}
      for line in text:gmatch("[^\n]+") do
        local key, ts, json = line:match("^(%S+) (%d+) (.*)$")
        assert(key, "not a CDXJ line: " .. line)
        local doc = cjson.decode(json)
        lines[key .. " " .. ts .. " " .. doc.offset] = doc
      end
      return lines
    end
    local f = assert(io.open(a.cdx, "rb"))
    local ours, theirs = parse(f:read("*a")), parse(out)
    f:close()
    local mimes = {}
    for k, doc in pairs(theirs) do
      assert.same(doc, ours[k], k)
      ours[k] = nil
      mimes[doc.mime] = (mimes[doc.mime] or 0) + 1
    end
    assert.same({}, ours)
    assert.equal(#ALL, mimes["text/html; charset=utf-8"])
  end)

  it("a crawl from the archive replays the rendered DOMs and finds the pages only scripts link to", function()
    local a = render_crawl()
    local pages = {}
    lc.run(crawl.run, { from_warc = a.file, quiet = true, parse = function(page)
      pages[path_of(page.url)] = page.response.rendered == true
      crawl.follow_links(page)
    end })
    local want = {}
    for _, p in ipairs(ALL) do want[p] = true end
    assert.same(want, pages)
    local code, out, err = h.sh(("%q crawl -q --fields url --from-warc %q %q")
      :format(bin, a.file, h.url("/js/home")))
    assert.equal(0, code, err)
    local got = {}
    for line in out:gmatch("[^\n]+") do got[path_of(cjson.decode(line).url)] = true end
    assert.same(set(ALL), got)
  end)

  it("archives the screenshot, with render_options.screenshot, as a PNG conversion record referring to the response", function()
    local prefix = h.tmpname("-shot")
    lc.run(crawl.run, { start = h.url("/js/landed"), max_depth = 0, quiet = true, render = true,
      render_options = { screenshot = true }, warc = prefix })
    local response, shot
    for _, rec in ipairs(records(prefix .. "-00000.warc.gz")) do
      if rec.type == "response" and path_of(rec.uri) == "/js/landed" then response = rec end
      if rec.type == "conversion" and rec.content_type == "image/png" then shot = rec end
    end
    assert.is_table(response)
    assert.is_table(shot)
    assert.equal(response.id, shot.headers["WARC-Refers-To"])
    assert.equal(h.url("/js/landed"), shot.uri)
    assert.equal("\137PNG\r\n\26\n", shot.block:sub(1, 8))
  end)
end)

describe("lc.render with archive = true", function()
  it("keeps a gzip-encoded document's exchange with its payload decoded and its head saying so", function()
    local file = h.tmpname(".warc.gz")
    lc.run(function()
      local res = assert(lc.render(h.url("/gzip"), { archive = true, wait = "load" }))
      local w = assert(lc.warc.open(file))
      assert.is_string(w:write(res))
      assert(w:close())
    end)
    local response, request
    for _, rec in ipairs(records(file)) do
      if rec.type == "response" then response = rec end
      if rec.type == "request" then request = rec end
    end
    local head, payload = response.block:match("^(.-\r\n\r\n)(.*)$")
    assert.equal(("hello gzip "):rep(1000), payload)
    assert.is_nil(head:lower():find("content-encoding", 1, true))
    assert.matches("\r\nContent%-Length: 11000\r\n", head)
    -- what the browser says it sent: it asked for gzip
    assert.matches("\r\nAccept%-Encoding: [^\r]*gzip", request.block)
    local code, out, err = h.sh(("python3 %q %q"):format(tools .. "/warc_check.py", file))
    assert.equal(0, code, out .. err)
  end)

  it("keeps each hop of an HTTP redirect as its own exchange, and a windows-1252 document's bytes as the server sent them", function()
    local function enc(v) return (v:gsub("[^%w]", function(c) return ("%%%02X"):format(c:byte()) end)) end
    -- The fixture sends src in latin-1: "é" goes out as the one byte E9.
    local page = "/js/html?src=" .. enc('<meta charset="windows-1252"><p id="w">caf\195\169</p>')
    local start = "/redirect-to?url=" .. enc(page)
    local file = h.tmpname(".warc.gz")
    lc.run(function()
      local res = assert(lc.render(h.url(start), { archive = true, wait = "load" }))
      assert.equal("windows-1252", res.encoding)
      local w = assert(lc.warc.open(file))
      assert.is_string(w:write(res))
      assert(w:close())
    end)
    local responses, requests, dom = {}, {}, nil
    for _, rec in ipairs(records(file)) do
      if rec.type == "response" then responses[#responses + 1] = rec end
      if rec.type == "request" then requests[rec.headers["WARC-Concurrent-To"]] = rec end
      if rec.type == "conversion" then dom = rec end
    end
    assert.same({ h.url(start), h.url(page) }, { responses[1].uri, responses[2].uri })
    local hop, doc = assert(responses[1]:response()), assert(responses[2]:response())
    assert.same({ 302, page }, { hop.status, hop.headers.location })
    assert.matches("^GET " .. start:gsub("%p", "%%%0") .. " HTTP/1%.1\r\n", requests[responses[1].id].block)
    assert.matches("^GET " .. page:gsub("%p", "%%%0") .. " HTTP/1%.1\r\n", requests[responses[2].id].block)
    assert.equal('<meta charset="windows-1252"><p id="w">caf\233</p>', doc.body)
    assert.equal(responses[2].id, dom.headers["WARC-Refers-To"])
    assert.truthy(dom.block:find('<p id="w">caf\195\169</p>', 1, true)) -- the DOM is UTF-8
    local code, out, err = h.sh(("python3 %q %q"):format(tools .. "/warc_check.py", file))
    assert.equal(0, code, out .. err)
    code, out, err = h.sh(("%q %q cdx-index %q"):format(tools .. "/warcio", build_dir, file))
    assert.equal(0, code, "warcio failed (npm unreachable?): " .. err)
    local seen = {}
    for line in out:gmatch("[^\n]+") do
      local doc_ = cjson.decode(line:match("^%S+ %d+ (.*)$"))
      seen[#seen + 1] = path_of(doc_.url) .. " " .. tostring(doc_.status or doc_.mime)
    end
    table.sort(seen)
    assert.same({ page .. " 200", page .. " text/html; charset=utf-8", start .. " 302" }, seen)
  end)
end)
