-- fixtures: --http --dns
-- The crawl's sitemaps option: robots.txt's Sitemap lines (else /sitemap.xml) or
-- the sitemaps given, indexes followed, gzip unpacked, a lastmod filter, each
-- sitemap read once and only in the crawl's scope; the pages they list go through
-- the same rules as links. The fixture's /sitemap.xml is an index of
-- /sitemap-1.xml.gz (pages 0-9 of /site/) and /sitemap-2.xml (pages 10-19), page i
-- with lastmod 2024-01-(i+1); a/b.crawl.test are 127.0.0.2 and .3.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

lc.configure({ dns_servers = h.dns_server })

local A, B = "a.crawl.test", "b.crawl.test"

local function fetch(url, opts)
  return lc.run(function() return lc.fetch(url, opts) end)
end

local function control(path, body)
  local res = assert(fetch(h.url(path), body and { method = "POST", body = body } or nil))
  return cjson.decode(res.body)
end

local function esc(s)
  return (s:gsub("[^%w%-._~/]", function(c) return ("%%%02X"):format(c:byte()) end))
end

local function requests(host)
  return control("/__log?host=" .. host).requests
end

local function count(log, path)
  local n = 0
  for _, e in ipairs(log) do if e.path == path then n = n + 1 end end
  return n
end

-- Run spec quietly; returns the stats and the sorted paths of the pages parsed.
local function run(spec)
  spec.quiet, spec.progress, spec.signals = true, false, false
  local paths = {}
  spec.parse = function(page) paths[#paths + 1] = page.url:match("^https?://[^/]+(.*)$") end
  local stats = crawl.run(spec)
  table.sort(paths)
  return stats, paths
end

local function site_pages(from, to)
  local out = {}
  for i = from, to do out[#out + 1] = ("/site/p/%d.html"):format(i) end
  table.sort(out)
  return out
end

local function with(list, ...)
  local out = {}
  for _, v in ipairs(list) do out[#out + 1] = v end
  for _, v in ipairs({ ... }) do out[#out + 1] = v end
  table.sort(out)
  return out
end

describe("crawl sitemaps", function()
  before_each(function() control("/__reset") end)

  it("reads robots.txt's Sitemap lines, an index and a gzipped sitemap, and crawls their pages", function()
    control("/__robots?host=" .. A, "User-agent: *\nDisallow: /private/\nSitemap: " .. h.url("/sitemap.xml", A) .. "\n")
    local stats, paths = run({ start = { h.url("/site/p/0.html", A) }, sitemaps = true, max_depth = 0 })
    assert.same(site_pages(0, 19), paths)
    assert.equal(3, stats.sitemaps)
    assert.equal(0, stats.sitemap_errors)
    assert.equal(1, count(requests(A), "/robots.txt"))
  end)

  it("falls back on /sitemap.xml when robots.txt names none", function()
    local _, paths = run({ start = { h.url("/site/", A) }, sitemaps = true, max_depth = 0 })
    assert.same(with(site_pages(0, 19), "/site/"), paths)
  end)

  it("reads robots.txt's sitemaps with robots = false too", function()
    local _, paths = run({ start = { h.url("/site/", A) }, sitemaps = true, max_depth = 0, robots = false })
    assert.same(with(site_pages(0, 19), "/site/"), paths)
  end)

  it("is off by default", function()
    local stats, paths = run({ start = { h.url("/site/", A) }, max_depth = 0 })
    assert.same({ "/site/" }, paths)
    assert.is_nil(stats.sitemaps)
    assert.equal(0, count(requests(A), "/sitemap.xml"))
  end)

  it("reads the sitemaps given, and only those", function()
    local _, paths = run({ start = {}, sitemaps = { h.url("/sitemap-2.xml", A) }, allow = { hosts = { A } } })
    assert.same(site_pages(10, 19), paths)
    assert.equal(0, count(requests(A), "/sitemap.xml"))
  end)

  it("keeps only pages whose lastmod is on or after since", function()
    local index = "/sitemap-list?index=1&loc=" .. esc(h.url("/sitemap-2.xml", A))
    local stats, paths = run({
      start = {}, allow = { hosts = { A } },
      sitemaps = { h.url("/sitemap.xml", A), h.url(index, A), since = "2024-01-15" },
    })
    assert.same(site_pages(14, 19), paths)
    assert.equal(10 + 4, stats.sitemap_old) -- pages 0-9, then 10-13 (/sitemap-2.xml is read once)
  end)

  it("puts the pages through the crawl's scope: another host's are not fetched", function()
    local list = ("/sitemap-list?loc=%s&loc=%s"):format(esc(h.url("/site/p/1.html", A)), esc(h.url("/site/p/2.html", B)))
    local stats, paths = run({ start = { h.url("/site/p/3.html", A) }, sitemaps = { h.url(list, A) }, max_depth = 0 })
    assert.same({ "/site/p/1.html", "/site/p/3.html" }, paths)
    assert.equal(1, stats.out_of_scope)
    assert.same({}, requests(B))
  end)

  it("reads no sitemap out of the crawl's scope", function()
    local index = ("/sitemap-list?index=1&loc=%s"):format(esc(h.url("/sitemap-2.xml", B)))
    local stats, paths = run({ start = { h.url("/site/p/3.html", A) }, sitemaps = { h.url(index, A), h.url("/sitemap.xml", B) },
      max_depth = 0 })
    assert.same(site_pages(3, 3), paths)
    assert.same({}, requests(B))
    assert.equal(2, stats.sitemap_errors)
  end)

  it("reads each sitemap once, however often indexes list it", function()
    local index = "/sitemap-list?index=1&self=1&loc=" .. esc(h.url("/sitemap-2.xml", A)) .. "&loc=" ..
      esc(h.url("/sitemap-2.xml", A))
    local _, paths = run({ start = {}, sitemaps = { h.url(index, A), h.url("/sitemap.xml", A) }, allow = { hosts = { A } } })
    assert.same(site_pages(0, 19), paths)
    local log = requests(A)
    assert.equal(1, count(log, index))
    assert.equal(1, count(log, "/sitemap-2.xml"))
  end)

  it("counts a sitemap that fails, and goes on", function()
    local stats, paths = run({ start = {}, allow = { hosts = { A } },
      sitemaps = { h.url("/status/404", A), h.url("/hostile/bad-coding", A), h.url("/sitemap-2.xml", A) } })
    assert.same(site_pages(10, 19), paths)
    assert.equal(2, stats.sitemap_errors)
  end)

  it("reads no more sitemaps once the pages fetched and queued fill max_pages", function()
    local locs = { "&loc=" .. esc(h.url("/sitemap-1.xml", A)) }
    for i = 1, 20 do locs[#locs + 1] = "&loc=" .. esc(h.url(("/status/404?sitemap=%d"):format(i), A)) end
    local index = "/sitemap-list?index=1" .. table.concat(locs)
    local stats, paths = run({ start = {}, sitemaps = { h.url(index, A) }, allow = { hosts = { A } }, max_pages = 5 })
    assert.equal(5, #paths)
    assert.equal(0, stats.sitemap_errors)
    assert.equal(0, count(requests(A), "/status/404?sitemap=1"))
  end)

  it("refuses a sitemaps value it cannot read", function()
    assert.has_error(function() crawl.new({ start = {}, sitemaps = 1 }) end)
    assert.has_error(function() crawl.new({ start = {}, sitemaps = { since = "yesterday" } }) end)
    assert.has_error(function() crawl.new({ start = {}, sitemaps = { sinse = "2024-01-01" } }) end)
  end)

  it("luacrawl crawl --sitemaps reads them from the command line", function()
    local code, out, err = h.sh(("%s --dns-server %s crawl -q -d 0 --sitemaps '%s'"):format(h.luacrawl_bin, h.dns_server,
      h.url("/site/", A)))
    assert.equal(0, code, err)
    local n = 0
    for _ in out:gmatch("[^\n]+") do n = n + 1 end
    assert.equal(21, n)
  end)

  it("luacrawl crawl --sitemap URL reads that sitemap", function()
    local code, out, err = h.sh(("%s --dns-server %s crawl -q -d 0 --sitemap '%s' '%s'"):format(h.luacrawl_bin,
      h.dns_server, h.url("/sitemap-2.xml", A), h.url("/site/", A)))
    assert.equal(0, code, err)
    local n = 0
    for _ in out:gmatch("[^\n]+") do n = n + 1 end
    assert.equal(11, n)
  end)
end)
