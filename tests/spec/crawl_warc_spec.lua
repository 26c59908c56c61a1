-- fixtures: --http
-- A crawl's WARC archive (--warc, spec.warc) and the crawl from archives (--from-warc,
-- spec.from_warc). Archives are checked by readers that share nothing with ours: the
-- npm package warcio (tests/tools/warcio) and tests/tools/warc_check.py.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

local bin = assert(h.luacrawl_bin, "LUACRAWL_BIN is not set")
local build_dir = bin:match("^(.*)/[^/]+$")
local tools = h.source_dir .. "/tests/tools"

local function spit(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- The files of a prefix, in order (ls sorts), and whether any is left .open.
local function files_of(prefix)
  local _, out = h.sh(("ls %q*"):format(prefix))
  local warcs, open = {}, {}
  for name in out:gmatch("[^\n]+") do
    if name:match("%.warc%.gz$") then warcs[#warcs + 1] = name end
    if name:match("%.open$") then open[#open + 1] = name end
  end
  return warcs, open
end

local function records(path)
  local list = {}
  for rec in lc.warc.records(path) do list[#list + 1] = rec end
  return list
end

-- JSON Lines -> {url = item}
local function items_by_url(text)
  local t, n = {}, 0
  for line in text:gmatch("[^\n]+") do
    local item = cjson.decode(line)
    t[item.url] = item
    n = n + 1
  end
  return t, n
end

local function warc_check(files, manifest)
  local args = {}
  for i, f in ipairs(files) do args[i] = ("%q"):format(f) end
  local expect = ""
  if manifest then
    local mpath = h.tmpname(".json")
    spit(mpath, cjson.encode(manifest))
    expect = ("--expect %q "):format(mpath)
  end
  local code, out, err = h.sh(("python3 %q %s%s"):format(tools .. "/warc_check.py", expect, table.concat(args, " ")))
  assert.equal(0, code, out .. err)
  assert.matches(" 0 problems", out)
  return out
end

-- One crawl of the fixture site through the binary, archived, shared by the tests
-- that read it.
local site
local function site_crawl()
  if site then return site end
  local prefix = h.tmpname("-site")
  local out = h.tmpname(".jsonl")
  local code, _, err = h.sh(("%q crawl -q -c 16 --per-host 16 --warc %q --cdx -o %q %q")
    :format(bin, prefix, out, h.url("/site/")))
  assert.equal(0, code, err)
  local warcs, open = files_of(prefix)
  site = { prefix = prefix, out = out, warcs = warcs, open = open, text = slurp(out) }
  return site
end

describe("crawl with warc", function()
  it("archives the fixture site in files that warc_check and warcio read as valid", function()
    local s = site_crawl()
    assert.same({}, s.open)
    assert.same({ s.prefix .. "-00000.warc.gz" }, s.warcs)
    -- the decoded payloads of some pages, against the bodies fetched again
    local manifest = {}
    lc.run(function()
      for _, path in ipairs({ "/site/", "/site/p/0.html", "/site/p/7.html", "/site/p/123.html" }) do
        local res = assert(lc.fetch(h.url(path)))
        local body = h.tmpname(".body")
        spit(body, res.body)
        manifest[h.url(path)] = body
      end
    end)
    local report = warc_check(s.warcs, manifest)
    assert.matches("4 bodies compared", report)
    local code, out, err = h.sh(("%q %q index %q"):format(tools .. "/warcio", build_dir, s.warcs[1]))
    assert.equal(0, code, "warcio failed (npm unreachable?): " .. err)
    local n = 0
    for _ in out:gmatch("[^\n]+") do n = n + 1 end
    assert.equal(#records(s.warcs[1]), n)
    code, out = h.sh(("%q %q cdx-index %q"):format(tools .. "/warcio", build_dir, s.warcs[1]))
    assert.equal(0, code)
    local theirs, ours = 0, 0
    for _ in out:gmatch("[^\n]+") do theirs = theirs + 1 end
    for _ in io.lines(s.prefix .. "-00000.cdxj") do ours = ours + 1 end
    assert.equal(theirs, ours)
  end)

  it("holds every page of the output, robots.txt, and a metadata record per page", function()
    local s = site_crawl()
    local items, n = items_by_url(s.text)
    assert.is_true(n > 1000)
    local responses, meta, info = {}, {}, nil
    for _, rec in ipairs(records(s.warcs[1])) do
      if rec.type == "response" or rec.type == "revisit" then responses[rec.uri] = rec.id end
      if rec.type == "metadata" then meta[rec.headers["WARC-Concurrent-To"]] = rec end
      if rec.type == "warcinfo" then info = rec end
    end
    assert.is_string(responses[h.url("/robots.txt")])
    assert.is_nil(meta[responses[h.url("/robots.txt")]])
    for url, item in pairs(items) do
      local id = responses[url]
      assert.is_string(id, url)
      local m = assert(meta[id], "no metadata for " .. url)
      assert.matches("^depth: " .. item.depth .. "\r\n", m.block)
      if item.referrer ~= cjson.null then assert.matches("\r\nvia: " .. item.referrer:gsub("%p", "%%%0") .. "\r\n", m.block) end
    end
    local root = meta[responses[h.url("/site/")]]
    assert.matches("\r\noutlink: " .. h.url("/site/p/0.html"):gsub("%p", "%%%0") .. "\r\n", root.block)
    assert.matches("software: luacrawl/", info.block)
    assert.matches("http%-header%-user%-agent: luacrawl/", info.block)
    assert.matches("robots: obey\r\n", info.block)
    assert.matches("start: " .. h.url("/site/"):gsub("%p", "%%%0"), info.block)
  end)

  it("--from-warc gives the live crawl's items, without fetching", function()
    local s = site_crawl()
    -- --public-only: a fetch of the fixture (loopback) would fail
    local code, out, err = h.sh(("%q crawl -q --public-only --from-warc %q"):format(bin, s.warcs[1]))
    assert.equal(0, code, err)
    local live, n = items_by_url(s.text)
    local replay, m = items_by_url(out)
    assert.equal(n, m)
    assert.same(live, replay)
  end)

  it("from_warc runs a spec's parse in the crawl's order; scope and depth choose the pages", function()
    local s = site_crawl()
    local order = {}
    for _, rec in ipairs(records(s.warcs[1])) do
      local res = rec.type == "response" and not rec.uri:match("/robots%.txt$") and rec:response()
      -- redirects are not parsed (the crawl follows them)
      if res and not (res.status >= 300 and res.status < 400) then order[#order + 1] = rec.uri end
    end
    local got, followed = {}, 0
    local st = crawl.run({
      from_warc = s.warcs, quiet = true, progress = false, signals = false, public_only = true,
      parse = function(page)
        got[#got + 1] = page.url
        followed = followed + page:follow(page:css("a::attr(href)"))
        page:emit({ url = page.url, title = page:css1("title::text") })
      end,
    })
    assert.same(order, got)
    assert.equal(#order, st.items)
    assert.is_true(followed > 0)
    assert.equal(0, st.errors_total)
    -- depth 1 and a narrower scope: the pages a crawl with them would have parsed
    local items = {}
    crawl.run({
      from_warc = s.warcs, start = { h.url("/site/") }, max_depth = 1, allow = { urls = { "/site/$", "/0\\.html$" } },
      quiet = true, progress = false, signals = false, public_only = true,
      parse = function(page) page:emit({ url = page.url, depth = page.depth }) end, items = items,
    })
    table.sort(items, function(a, b) return a.url < b.url end)
    assert.same({ { url = h.url("/site/"), depth = 0 }, { url = h.url("/site/p/0.html"), depth = 1 } }, items)
  end)

  it("SIGINT mid-crawl leaves every file closed and valid, rotated at --warc-max-size", function()
    local prefix = h.tmpname("-int")
    local out = h.tmpname(".jsonl")
    local code = h.sh(("%q crawl -q --delay 0.05 --per-host 1 --warc %q --warc-max-size 20000 -o %q %q & pid=$!; sleep 1.5; kill -INT $pid; wait $pid")
      :format(bin, prefix, out, h.url("/site/")))
    assert.equal(130, code)
    local warcs, open = files_of(prefix)
    assert.same({}, open)
    assert.is_true(#warcs >= 2, "rotated")
    warc_check(warcs)
    local items = items_by_url(slurp(out))
    local archived = {}
    for _, f in ipairs(warcs) do
      for _, rec in ipairs(records(f)) do
        if rec.type == "response" then archived[rec.uri] = true end
      end
    end
    for url in pairs(items) do assert.is_true(archived[url], url) end
    -- and the files, read in order, give the items back
    local args = {}
    for i, f in ipairs(warcs) do args[i] = ("%q"):format(f) end
    local c2, replay, err = h.sh(("%q crawl -q --from-warc %s"):format(bin, table.concat(args, " ")))
    assert.equal(0, c2, err)
    assert.same(items, (items_by_url(replay)))
  end)

  it("dedupe writes a revisit for a body archived before, and from_warc reads its payload", function()
    local prefix = h.tmpname("-dup")
    local out = h.tmpname(".jsonl")
    local code, _, err = h.sh(("%q crawl -q --no-robots --warc %q -o %q %q %q")
      :format(bin, prefix, out, h.url("/gzip"), h.url("/gzip?again=1")))
    assert.equal(0, code, err)
    local warcs = files_of(prefix)
    local types = {}
    for _, rec in ipairs(records(warcs[1])) do
      if rec.type == "response" or rec.type == "revisit" then types[#types + 1] = rec.type end
    end
    assert.same({ "response", "revisit" }, types)
    warc_check(warcs)
    local c2, replay = h.sh(("%q crawl -q --from-warc %q"):format(bin, warcs[1]))
    assert.equal(0, c2)
    local live, got = items_by_url(slurp(out)), items_by_url(replay)
    assert.same(live, got)
    assert.equal(11000, got[h.url("/gzip?again=1")].length)
    -- without dedupe: two responses
    local p2 = h.tmpname("-nodup")
    h.sh(("%q crawl -q --no-robots --warc %q --no-warc-dedupe -o /dev/null %q %q")
      :format(bin, p2, h.url("/gzip"), h.url("/gzip?again=1")))
    local n = 0
    for _, rec in ipairs(records(p2 .. "-00000.warc.gz")) do
      if rec.type == "response" then n = n + 1 end
    end
    assert.equal(2, n)
  end)

  it("archives the sitemaps it reads (request and response, no metadata) beside the pages they list", function()
    local prefix = h.tmpname("-sitemaps")
    local out = h.tmpname(".jsonl")
    local code, _, err = h.sh(("%q crawl -q --sitemaps -d 0 --warc %q -o %q %q")
      :format(bin, prefix, out, h.url("/site/p/0.html")))
    assert.equal(0, code, err)
    local warcs = files_of(prefix)
    warc_check(warcs)
    local responses, requests, meta = {}, {}, {}
    for _, rec in ipairs(records(warcs[1])) do
      if rec.type == "response" then responses[rec.uri] = rec end
      if rec.type == "request" then requests[rec.uri] = rec.headers["WARC-Concurrent-To"] end
      if rec.type == "metadata" then meta[rec.headers["WARC-Concurrent-To"]] = true end
    end
    for _, path in ipairs({ "/sitemap.xml", "/sitemap-1.xml.gz", "/sitemap-2.xml" }) do
      local rec = responses[h.url(path)]
      assert.is_table(rec, path)
      assert.equal(rec.id, requests[h.url(path)])
      assert.is_nil(meta[rec.id])
      assert.equal(200, rec:response().status)
    end
    -- the pages they list were crawled, and archived as pages are
    local items = items_by_url(slurp(out))
    for i = 0, 19 do
      local url = h.url("/site/p/" .. i .. ".html")
      assert.is_table(items[url], url)
      assert.is_true(meta[responses[url].id], url)
    end
  end)

  it("--warc-level sets the gzip level: 9 makes a smaller archive of the same pages, both valid", function()
    local sizes = {}
    for _, level in ipairs({ "1", "9" }) do
      local prefix = h.tmpname("-level" .. level)
      local code, _, err = h.sh(("%q crawl -q -n 30 -c 1 --warc %q --warc-level %s -o /dev/null %q")
        :format(bin, prefix, level, h.url("/site/")))
      assert.equal(0, code, err)
      local warcs = files_of(prefix)
      assert.equal(1, #warcs)
      warc_check(warcs)
      sizes[level] = #slurp(warcs[1])
    end
    assert.is_true(sizes["9"] < sizes["1"], ("level 9: %d bytes, level 1: %d"):format(sizes["9"], sizes["1"]))
    for _, bad in ipairs({ "0", "10", "x" }) do
      local code, _, err = h.sh(("%q crawl -q --warc %q --warc-level %s %q")
        :format(bin, h.tmpname("-bad"), bad, h.url("/site/")))
      assert.equal(2, code)
      assert.matches("%-%-warc%-level", err)
    end
    local code, _, err = h.sh(("%q crawl -q --warc-level 5 %q"):format(bin, h.url("/site/")))
    assert.equal(2, code)
    assert.matches("go with %-%-warc PREFIX", err)
  end)

  it("a failed archive write stops the crawl with exit 4, the file closed and whole", function()
    local prefix = h.tmpname("-full")
    -- A file size limit of 256 KiB: writes past it fail with EFBIG (SIGXFSZ ignored).
    local code, _, err = h.sh(("ulimit -f 256; trap '' XFSZ; %q crawl -q --warc %q -o /dev/null %q")
      :format(bin, prefix, h.url("/site/")))
    assert.equal(4, code, err)
    assert.matches("warc", err)
    local warcs, open = files_of(prefix)
    assert.same({}, open)
    assert.equal(1, #warcs)
    warc_check(warcs)
  end)

  it("-n stops the crawl with its files closed; a crawl.run error says what is wrong with warc", function()
    local prefix = h.tmpname("-n")
    local code = h.sh(("%q crawl -q -n 5 --warc %q -o /dev/null %q"):format(bin, prefix, h.url("/site/")))
    assert.equal(0, code)
    local warcs, open = files_of(prefix)
    assert.same({}, open)
    assert.equal(1, #warcs)
    assert.has_error(function() crawl.new({ start = { h.url("/") }, warc = { prefx = "x" } }) end)
    assert.has_error(function() crawl.new({ start = { h.url("/") }, warc = 3 }) end)
    local c2, _, err = h.sh(("%q crawl -q --cdx %q"):format(bin, h.url("/site/")))
    assert.equal(2, c2)
    assert.matches("%-%-warc PREFIX", err)
    assert.is_false(exists(prefix .. "-00001.warc.gz"))
  end)
end)

describe("a replay's report", function()
  -- The records the fixture site's crawl kept: one metadata record each.
  local function kept_records(s)
    local n = 0
    for _, rec in ipairs(records(s.warcs[1])) do
      if rec.type == "metadata" then n = n + 1 end
    end
    return n
  end

  it("says how many records a start URL out of the archive's scope skipped, why, and the archive's hosts", function()
    local s = site_crawl()
    local n = kept_records(s)
    local out = h.tmpname(".jsonl")
    local code, _, err = h.sh(("%q crawl --public-only --from-warc %q -o %q http://elsewhere.example/")
      :format(bin, s.warcs[1], out))
    assert.equal(5, code, err)
    local why = ("skipped %d records: %d out of the crawl's scope %%(hosts: 127%%.0%%.0%%.1%%)"):format(n, n)
    assert.matches("\n" .. why .. "\n", err)
    assert.matches("luacrawl: no archived page was replayed; " .. why, err)
    assert.equal("", slurp(out))
  end)

  it("never prints an empty statuses line", function()
    local s = site_crawl()
    local _, _, err = h.sh(("%q crawl --public-only --from-warc %q -o /dev/null http://elsewhere.example/")
      :format(bin, s.warcs[1]))
    assert.matches("records replayed 0 ", err)
    assert.not_matches("statuses:", err)
  end)

  it("counts records replayed, not requests, and those deeper than max_depth apart", function()
    local s = site_crawl()
    local n = kept_records(s)
    local out = h.tmpname(".jsonl")
    local code, _, err = h.sh(("%q crawl --public-only --from-warc %q -d1 -o %q %q")
      :format(bin, s.warcs[1], out, h.url("/site/")))
    assert.equal(0, code, err)
    local _, k = items_by_url(slurp(out))
    assert.is_true(k > 1 and k < n)
    assert.matches("^records replayed " .. k .. " %(%d+ bytes%)", err)
    assert.not_matches("requests", err)
    assert.matches(("\nskipped %d records: %d deeper than max_depth\n"):format(n - k, n - k), err)
    local st = crawl.run({
      from_warc = s.warcs, start = h.url("/site/"), max_depth = 1, quiet = true, progress = false,
      signals = false, public_only = true, items = {},
    })
    assert.is_true(st.replay)
    assert.equal(0, st.requests)
    assert.equal(k, st.pages)
    assert.same({ too_deep = n - k }, st.warc_skipped_why)
  end)
end)
