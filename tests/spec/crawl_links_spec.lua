-- core.crawl (bindings/lua_crawl.c): the crawl's admission rules, the one place they
-- are applied (Crawler:enqueue and page:follow both ask the filter). What is
-- admitted, in which order the rules go, and what each refusal counts.
local lc = require "luacrawl"
local core = require "luacrawl.core"

local chost, hosts, filter = core.crawl.host, core.crawl.hosts, core.crawl.filter

local BASE = "http://a.test/dir/page.html?x=1"

local function new_stats()
  return { invalid_urls = 0, too_deep = 0, out_of_scope = 0, duplicates = 0 }
end

-- A filter and its stats; scope defaults to the hosts {"a.test"}.
local function make(opts)
  opts = opts or {}
  local st = new_stats()
  local f = filter({
    seen = opts.seen or lc.seen(), stats = st, normalize = opts.normalize, max_depth = opts.max_depth,
    scope = opts.scope or hosts({ "a.test" }),
  })
  return f, st
end

-- Every URL filter:next admits from list, in order.
local function admitted(f, list, depth, dont_filter)
  local out, i = {}, 1
  while true do
    local url, nexti, why = f:next(list, i, BASE, depth or 1, dont_filter)
    assert(url ~= false, "an item that is not a string")
    assert.is_nil(why)
    if not url then break end
    out[#out + 1] = url
    assert.is_true(nexti > i)
    i = nexti
  end
  return out
end

describe("core.crawl.host", function()
  it("gives what lc.url.host gives", function()
    for _, u in ipairs({ "http://A.test:8080/x", "https://b.test/", "http://user@c.test/", "http://[::1]/",
      "http://bücher.example/", "mailto:x@a.test", "p/2.html", "http://a.test/x\0y", "" }) do
      local a, aerr = lc.url.host(u)
      local b, berr = chost(u)
      assert.equal(a, b, u)
      assert.same(aerr, berr, u)
    end
  end)

  it("raises on a non-string", function()
    assert.has_error(function() chost(42) end)
  end)
end)

describe("core.crawl.hosts", function()
  it("matches a URL whose host is in the set, exactly, by default", function()
    local h = hosts({ "a.test", "B.Test" })
    assert.is_true(h:match("http://a.test/x"))
    assert.is_true(h:match("https://A.TEST:8080/x"))
    assert.is_true(h:match("http://b.test/"))
    assert.is_false(h:match("http://sub.a.test/"))
    assert.is_false(h:match("http://xa.test/"))
    assert.is_false(h:match("mailto:x@a.test"))
  end)

  it("with subdomains, matches a host below one of the set too", function()
    local h = hosts({ "A.Test" }, true)
    assert.is_true(h:match("http://a.test/"))
    assert.is_true(h:match("http://b.sub.a.test/"))
    assert.is_false(h:match("http://xa.test/"))
    assert.is_false(h:match("http://a.test.example/"))
  end)

  it("gives a URL without a host the host \"\"", function()
    assert.is_true(hosts({ "" }):match("not a url"))
    assert.is_false(hosts({ "a.test" }):match("not a url"))
  end)

  it("grows with add", function()
    local h = hosts()
    assert.is_false(h:match("http://a.test/"))
    h:add("a.test")
    assert.is_true(h:match("http://a.test/"))
  end)

  it("refuses a list entry that is not a string", function()
    assert.has_error(function() hosts({ "a.test", 7 }) end, "hosts: entry 2 is not a string")
  end)
end)

describe("core.crawl.filter", function()
  it("admits a URL normalized, once", function()
    local f, st = make()
    assert.equal("http://a.test/x", f:check("HTTP://A.test:80/./x#frag", 0))
    local url, why = f:check("http://a.test/x", 0)
    assert.is_nil(url)
    assert.equal("duplicates", why)
    assert.same({ invalid_urls = 0, too_deep = 0, out_of_scope = 0, duplicates = 1 }, st)
  end)

  it("applies the rules in order: normalize, max_depth, scope, seen set", function()
    local seen = lc.seen()
    seen:add("http://b.test/")
    local f, st = make({ seen = seen, max_depth = 1 })
    -- Invalid before too deep, too deep before out of scope, out of scope before duplicate.
    assert.same({ nil, "invalid_urls" }, { f:check("mailto:x@a.test", 2) })
    assert.same({ nil, "too_deep" }, { f:check("http://b.test/", 2) })
    assert.same({ nil, "out_of_scope" }, { f:check("http://b.test/", 1) })
    assert.same({ invalid_urls = 1, too_deep = 1, out_of_scope = 1, duplicates = 0 }, st)
    -- Refused URLs are not recorded.
    assert.equal("http://a.test/new", f:check("http://a.test/new", 1))
    assert.is_false(seen:has("http://b.test/x"))
  end)

  it("resolves relative URLs against the base it is given, and only then", function()
    local f, st = make()
    assert.equal("http://a.test/dir/p/2.html", f:check("p/2.html", 1, false, BASE))
    assert.same({ nil, "invalid_urls" }, { f:check("p/3.html", 1) })
    assert.same({ nil }, { f:check("rel\0nul", 1, false, BASE) }) -- does not resolve: not counted
    assert.equal(1, st.invalid_urls)
  end)

  it("with dont_filter, neither checks nor records the seen set", function()
    local seen = lc.seen()
    local f, st = make({ seen = seen })
    assert.equal("http://a.test/x", f:check("http://a.test/x", 0, true))
    assert.equal("http://a.test/x", f:check("http://a.test/x", 0, true))
    assert.equal(0, #seen)
    assert.equal("http://a.test/x", f:check("http://a.test/x", 0))
    assert.equal(0, st.duplicates)
  end)

  it("takes the scope \"any\"", function()
    local f = make({ scope = "any" })
    assert.equal("http://b.test/", f:check("http://b.test", 0))
  end)

  it("hands a URL to a Lua scope between the depth and the seen set (\"scope\"), then takes its answer", function()
    local f, st = make({ scope = "lua", max_depth = 1 })
    assert.same({ nil, "too_deep" }, { f:check("http://b.test/", 2) })
    assert.same({ "http://b.test/", "scope" }, { f:check("HTTP://B.test", 1) })
    assert.same({ nil, "out_of_scope" }, { f:scoped("http://b.test/", false) })
    assert.equal("http://b.test/", f:scoped("http://b.test/", true))
    assert.same({ nil, "duplicates" }, { f:scoped("http://b.test/", true) })
    assert.equal("http://b.test/", f:scoped("http://b.test/", true, true)) -- dont_filter
    assert.same({ invalid_urls = 0, too_deep = 1, out_of_scope = 1, duplicates = 1 }, st)
    local url, nexti, why = f:next({ "http://a.test/1" }, 1, BASE, 1)
    assert.same({ "http://a.test/1", 2, "scope" }, { url, nexti, why })
  end)

  it("normalizes with the crawl's options", function()
    local f, st = make({ normalize = { sort_query = true, strip = { "utm_*" } } })
    assert.equal("http://a.test/?a=1&b=2", f:check("http://a.test/?b=2&utm_source=x&a=1", 0))
    assert.is_nil(f:check("http://a.test/?a=1&b=2", 0))
    assert.equal(1, st.duplicates)
  end)

  it("raises on bad normalize options when made, as lc.url.normalize does", function()
    local ok, want = pcall(lc.url.normalize, "http://a.test/", { strip = "utm_*" })
    assert.is_false(ok)
    local ok2, got = pcall(make, { normalize = { strip = "utm_*" } })
    assert.is_false(ok2)
    assert.is_truthy(got:find(want, 1, true))
  end)

  it("wants a seen set, a stats table and a known scope", function()
    assert.has_error(function() filter({ seen = {}, stats = {}, scope = "any" }) end)
    assert.has_error(function() filter({ seen = lc.seen(), scope = "any" }) end)
    assert.has_error(function() filter({ seen = lc.seen(), stats = {}, scope = "some" }) end)
    assert.has_error(function() filter({ seen = lc.seen(), stats = {}, scope = "any", max_depth = "2" }) end)
  end)
end)

describe("filter:next", function()
  local LIST = {
    "http://a.test/x", -- admitted
    "http://A.TEST:80/x", -- duplicate
    "https://a.test/x", -- admitted: another scheme
    "p/2.html", -- admitted: http://a.test/dir/p/2.html
    "/dir/p/2.html#top", -- duplicate
    "mailto:x@a.test", -- invalid
    "http://b.test/", -- out of scope
    "http://sub.a.test/", -- out of scope (the hosts are exact)
    "rel\0nul", -- does not resolve: skipped, not counted
    "http://a.test/?b=2&a=1", -- admitted
    "http://a.test/x#frag", -- duplicate
  }

  it("admits from a list what the rules admit, in order, counting the rest", function()
    local f, st = make()
    assert.same({ "http://a.test/x", "https://a.test/x", "http://a.test/dir/p/2.html", "http://a.test/?b=2&a=1" },
      admitted(f, LIST))
    assert.same({ invalid_urls = 1, too_deep = 0, out_of_scope = 2, duplicates = 3 }, st)
    assert.same({}, admitted(f, LIST))
    assert.same({ invalid_urls = 2, too_deep = 0, out_of_scope = 4, duplicates = 10 }, st)
  end)

  it("counts every URL too deep when the depth is past max_depth", function()
    local f, st = make({ max_depth = 1 })
    assert.same({}, admitted(f, LIST, 2))
    assert.same({ invalid_urls = 1, too_deep = 9, out_of_scope = 0, duplicates = 0 }, st)
  end)

  it("takes subdomains and dont_filter as check does", function()
    local f, st = make({ scope = hosts({ "a.test" }, true) })
    local got = admitted(f, LIST, 1, true)
    assert.equal(8, #got)
    assert.equal("http://sub.a.test/", got[6])
    assert.same({ invalid_urls = 1, too_deep = 0, out_of_scope = 1, duplicates = 0 }, st)
  end)

  it("stops at an item that is not a string, and at the end", function()
    local f = make()
    local node = { tag = "a" }
    assert.same({ false, 2 }, { f:next({ "http://a.test/1", node, "http://a.test/2" }, 2, BASE, 1) })
    assert.same({ "http://a.test/2", 4 }, { f:next({ "http://a.test/1", node, "http://a.test/2" }, 3, BASE, 1) })
    assert.same({ nil, 2 }, { f:next({ "http://a.test/3" }, 2, BASE, 1) })
  end)

  it("takes a page's link set (core.html.scan_set) as it takes the list of its links", function()
    local body = {}
    for i, u in ipairs(LIST) do
      if not u:find("%z") then body[#body + 1] = ('<a href="%s">%d</a>'):format(u, i) end
    end
    body = table.concat(body, "\n")
    local set = core.html.scan_set(body, BASE)
    local list = core.html.set_links(set)
    assert.is_true(lc.html.is_link_set(set))
    for _, o in ipairs({ {}, { max_depth = 0 }, { scope = "any" }, { normalize = { sort_query = true } } }) do
      local f1, st1 = make(o)
      local f2, st2 = make(o)
      assert.same(admitted(f1, list), admitted(f2, set))
      assert.same(st1, st2)
    end
    local f = make()
    assert.is_nil((f:next(set, #set + 1, BASE, 1)))
    assert.is_nil((f:next(set, 0, BASE, 1)))
  end)
end)
