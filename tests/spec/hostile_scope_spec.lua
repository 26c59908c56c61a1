-- fixtures: --http --dns
-- The hostile web and scope (issue 16): every request a crawl makes stays in its
-- scope or under the rule documented for its kind. (Credentials on redirects are
-- http_redirect_spec's, the address policy http_addr_policy_spec's.)
-- a/b/c.crawl.test are 127.0.0.2-4 through the test dnsmasq; the server logs every
-- request with its Authorization and Cookie headers.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"
local w = require "web_helper"
local fetch, control, reset, requests, on, esc, redirect, run, echoed =
  w.fetch, w.control, w.reset, w.requests, w.on, w.esc, w.redirect, w.run, w.echoed
local CREDENTIALS = w.CREDENTIALS

describe("hostile scope: every request of a crawl in scope", function()
  before_each(reset)

  it("does not follow a robots.txt redirect off the site", function()
    local off = h.url("/robots.txt", "127.0.0.3")
    control(("/__robots?host=a.crawl.test&status=302&location=%s"):format(esc(off)), { method = "POST", body = "" })
    local st = run({ start = { on("a.crawl.test", "/hostsite/p/19.html") }, parse = function() end })
    assert.same({}, requests("127.0.0.3"))
    -- unavailable (RFC 9309 2.3.1.2): the site is crawled
    assert.equal(1, st.pages)
    assert.equal(0, st.robots_denied)
  end)

  it("follows robots.txt redirects within the site, at most robots_redirects hops", function()
    control(("/__robots?host=a.crawl.test&status=302&location=%s"):format(esc(on("b.crawl.test", "/robots.txt"))),
      { method = "POST", body = "" })
    control("/__robots?host=b.crawl.test", { method = "POST", body = "User-agent: *\nDisallow: /hostsite/p/19\n" })
    local st = run({ start = { on("a.crawl.test", "/hostsite/p/19.html") } })
    assert.equal(0, st.pages)
    assert.equal(1, st.robots_denied) -- b's rules, for a
  end)

  it("does not leave the scope when the spec sets fetch.follow", function()
    local parsed = {}
    local st = run({
      start = { redirect("a.crawl.test", on("b.crawl.test", "/hostsite/p/19.html")) },
      fetch = { follow = 5 },
      parse = function(page) parsed[#parsed + 1] = page.url end,
    })
    assert.same({}, requests("b.crawl.test"))
    assert.same({}, parsed)
    assert.equal(1, st.out_of_scope)
  end)

  it("follows an in-scope redirect itself when the spec sets fetch.follow", function()
    local parsed = {}
    run({
      start = { on("a.crawl.test", "/redirect-to?url=/hostsite/p/19.html") },
      fetch = { follow = 5 },
      parse = function(page) parsed[#parsed + 1] = page.url end,
    })
    assert.same({ on("a.crawl.test", "/hostsite/p/19.html") }, parsed)
  end)
end)

describe("hostile scope: sitemap_crawl.lua", function()
  before_each(reset)

  local function example(args)
    return h.sh(("%s --dns-server %s run %s/examples/sitemap_crawl.lua %s"):format(
      h.luacrawl_bin, h.dns_server, h.source_dir, args))
  end

  local function count(entries, path)
    local n = 0
    for _, e in ipairs(entries) do if e.path == path then n = n + 1 end end
    return n
  end

  it("fetches no page and no sitemap of another host", function()
    local sm = ("/sitemap-list?loc=%s&loc=%s"):format(esc(h.url("/site/p/1.html", "127.0.0.2")),
      esc(h.url("/site/p/2.html")))
    local index = ("/sitemap-list?index=1&loc=%s&loc=%s"):format(esc(h.url(sm)),
      esc(h.url("/sitemap-2.xml", "127.0.0.2")))
    local code, out, err = example("'" .. h.url("/") .. "' '" .. h.url(index) .. "'")
    assert.equal(0, code, err)
    assert.same({}, requests("127.0.0.2"))
    local urls = {}
    for line in out:gmatch("[^\n]+") do urls[#urls + 1] = cjson.decode(line).url end
    assert.same({ h.url("/site/p/2.html") }, urls)
  end)

  it("reads a sitemap index that lists itself once", function()
    local index = "/sitemap-list?index=1&self=1&loc=" .. esc(h.url("/sitemap-2.xml"))
    local code, out, err = example("'" .. h.url("/") .. "' '" .. h.url(index) .. "'")
    assert.equal(0, code, err)
    local log = requests("127.0.0.1")
    assert.equal(1, count(log, index))
    assert.equal(1, count(log, "/sitemap-2.xml"))
    local n = 0
    for _ in out:gmatch("[^\n]+") do n = n + 1 end
    assert.equal(10, n)
  end)
end)

