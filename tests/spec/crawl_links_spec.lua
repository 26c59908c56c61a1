-- core.crawl (engine/lua_crawl.c): the per-link checks of page:follow in C. Each
-- result must be what the Lua path gives (lc.url.resolve, lc.url.normalize,
-- lc.url.host and seen:add, in the order Crawler:enqueue takes them).
local lc = require "luacrawl"
local core = require "luacrawl.core"

local chost, cnext = core.crawl.host, core.crawl.next
local ANY, SET, SUFFIX = 0, 1, 2

local BASE = "http://a.test/dir/page.html?x=1"

local URLS = {
  "http://a.test/x", "http://a.test/x", "https://a.test/x", "http://a.test:80/x", "http://a.test:8080/x",
  "HTTP://A.TEST/upper", "http://A.test/Case", "http://sub.a.test/z", "http://b.a.test:81/",
  "http://xa.test/not-a-subdomain", "http://b.test/other", "http://a.test/x#frag", "http://a.test/x#frag2",
  "http://a.test/a/./b/../c", "http://a.test/%7euser", "http://a.test/%7Euser", "http://a.test/~user",
  "http://a.test/?b=2&a=1", "http://a.test/?a=1&b=2", "http://a.test/?utm_source=x&a=1", "http://a.test/?",
  "http://a.test", "http://user:pw@a.test/secret", "http://user@b.test/", "http://[::1]:8080/v6",
  "http://127.0.0.1/ip", "http://0x7f.0.0.1/hex", "http://1.2/short", "http://xn--bcher-kva.example/",
  "http://bücher.example/", "http://a..test/", "http://-a.test/", "http://a_b.test/", "http://a.test./dot",
  "http://a|b.test/", "http://%61.test/escaped", "../p/1.html", "p/2.html", "/abs", "//b.test/proto",
  "//a.test/proto", "?q=1", "#only", "", "  http://a.test/ws  ", "mailto:x@a.test", "javascript:void(0)",
  "ftp://a.test/f", "data:text/plain,x", "http://", "https://", "http:/a.test/", "http:relative",
  "http://a.test/x\0y", "rel\0nul", "http://a.test/" .. ("x"):rep(9000), "http://a.test/sp ace",
  "http://a.test/\xff", "http://a.test/p;jsessionid=1?a=1", "HTTPS://b.test:443/",
}

local function host_matches(host, list)
  for _, h in ipairs(list) do
    h = h:lower()
    if host == h or (#host > #h and host:sub(-#h - 1) == "." .. h) then return true end
  end
  return false
end

-- The Lua path (page:follow then Crawler:enqueue) for strings.
local function reference(list, seen, opts, mode, hosts, too_deep)
  local out, c = {}, { 0, 0, 0, 0 }
  for _, href in ipairs(list) do
    local url = href:find("^https?://") and href or lc.url.resolve(BASE, href)
    if url then
      local n = lc.url.normalize(url, opts)
      if not n then
        c[1] = c[1] + 1
      elseif too_deep then
        c[2] = c[2] + 1
      else
        local host = lc.url.host(n) or ""
        local ok = mode == ANY or (mode == SET and hosts[host] == true) or (mode == SUFFIX and host_matches(host, hosts))
        if not ok then
          c[3] = c[3] + 1
        elseif not seen:add(n) then
          c[4] = c[4] + 1
        else
          out[#out + 1] = n
        end
      end
    end
  end
  return out, c
end

local function fast(list, seen, opts, mode, hosts, too_deep)
  local out, c, i = {}, { 0, 0, 0, 0 }, 1
  while true do
    local url, nexti, a, b, d, e = cnext(list, i, seen, BASE, opts, mode, hosts, too_deep)
    c[1], c[2], c[3], c[4] = c[1] + a, c[2] + b, c[3] + d, c[4] + e
    assert(url ~= false, "an item the C path does not take")
    if not url then break end
    out[#out + 1] = url
    assert.equal(i < nexti, true)
    i = nexti
  end
  return out, c
end

describe("core.crawl.host", function()
  it("gives what lc.url.host gives", function()
    for _, u in ipairs(URLS) do
      local a, aerr = lc.url.host(u)
      local b, berr = chost(u)
      assert.equal(a, b, u)
      assert.equal(aerr, berr, u)
      local n = lc.url.normalize(u)
      if n then assert.equal(lc.url.host(n), chost(n), n) end
    end
  end)

  it("raises on a non-string as lc.url.host does", function()
    assert.has_error(function() chost(42) end)
    assert.has_error(function() lc.url.host(42) end)
  end)
end)

describe("core.crawl.next", function()
  local big = {}
  for i = 1, 20 do big["h" .. i .. ".test"] = true end
  big["a.test"] = true
  local scopes = {
    { ANY }, { SET, { ["a.test"] = true } }, { SET, { ["a.test"] = true, ["b.test"] = "yes" } }, { SET, big },
    { SET, { [""] = true } }, { SUFFIX, { "A.Test" } }, { SUFFIX, { "test", "example" } }, { SUFFIX, { "" } },
    { SUFFIX, {} },
  }
  local options = { false, { sort_query = true }, { strip = { "utm_*", "jsessionid" } }, { keep_fragment = true } }

  it("queues, counts and records what enqueue would, for every scope and option", function()
    -- Twice over the list, so that the second pass meets duplicates of everything.
    local list = {}
    for _, u in ipairs(URLS) do list[#list + 1] = u end
    for _, u in ipairs(URLS) do list[#list + 1] = u end
    for _, scope in ipairs(scopes) do
      for _, o in ipairs(options) do
        for _, deep in ipairs({ false, true }) do
          local opts = o or nil
          local s1, s2 = lc.seen(), lc.seen()
          s1:add("http://a.test/x")
          s2:add("http://a.test/x")
          local want, wc = reference(list, s1, opts, scope[1], scope[2], deep)
          local got, gc = fast(list, s2, opts, scope[1], scope[2], deep)
          assert.same(want, got)
          assert.same(wc, gc)
          assert.equal(#s1, #s2)
          for _, u in ipairs(URLS) do
            local n = lc.url.normalize(u)
            if n then assert.equal(s1:has(n), s2:has(n), n) end
          end
        end
      end
    end
  end)

  it("stops at an item it does not take, and at a host entry that is not a string", function()
    local s = lc.seen()
    local node = { tag = "a" }
    local url, nexti, inv, deep, scope, dup = cnext({ "http://a.test/1", node, "http://a.test/2" }, 2, s, BASE, nil, ANY, nil, false)
    assert.equal(false, url)
    assert.equal(2, nexti)
    assert.same({ 0, 0, 0, 0 }, { inv, deep, scope, dup })
    url, nexti = cnext({ "http://b.test/", "http://a.test/2" }, 1, s, BASE, nil, SUFFIX, { "b.test", 7 }, false)
    assert.equal("http://b.test/", url)
    assert.equal(2, nexti)
    url, nexti, inv, deep, scope = cnext({ "http://b.test/", "http://a.test/2" }, 2, s, BASE, nil, SUFFIX, { "b.test", 7 }, false)
    assert.equal(false, url)
    assert.equal(2, nexti)
    assert.equal(0, scope)
    url, nexti = cnext({ "http://b.test/" }, 2, s, BASE, nil, ANY, nil, false)
    assert.is_nil(url)
    assert.equal(2, nexti)
  end)

  it("raises on bad normalize options as lc.url.normalize does, only when it normalizes", function()
    local s = lc.seen()
    local bad = { strip = "utm_*" }
    local ok, want = pcall(lc.url.normalize, "http://a.test/", bad)
    assert.is_false(ok)
    local ok2, got = pcall(cnext, { "http://a.test/" }, 1, s, BASE, bad, ANY, nil, false)
    assert.is_false(ok2)
    assert.equal(want, got)
    assert.is_nil((cnext({ "rel\0nul" }, 1, s, BASE, bad, ANY, nil, false))) -- skipped before normalizing
    assert.is_nil((cnext({}, 1, s, BASE, bad, ANY, nil, false)))
  end)

  it("takes a page's link set (core.html.scan_set) as it takes the list of its links", function()
    local body = {}
    for i, u in ipairs(URLS) do
      if not u:find("%z") then body[#body + 1] = ('<a href="%s">%d</a>'):format(u:gsub('"', "&quot;"), i) end
    end
    body = table.concat(body, "\n") .. '<a href="p/2.html">again</a><a href="/abs#x">again</a>'
    local set, title = core.html.scan_set(body, BASE)
    assert.is_nil(title)
    local list = core.html.set_links(set)
    assert.equal(#list, #set)
    assert.same(lc.html.links(body, { url = BASE }), list)
    assert.is_true(lc.html.is_link_set(set))
    assert.is_false(lc.html.is_link_set(list))
    for _, scope in ipairs(scopes) do
      local s1, s2 = lc.seen(), lc.seen()
      local want, wc = fast(list, s1, nil, scope[1], scope[2], false)
      local got, gc = fast(set, s2, nil, scope[1], scope[2], false)
      assert.same(want, got)
      assert.same(wc, gc)
    end
    assert.is_nil((cnext(set, #set + 1, lc.seen(), BASE, nil, ANY, nil, false)))
    assert.is_nil((cnext(set, 0, lc.seen(), BASE, nil, ANY, nil, false)))
  end)

  it("wants a seen set", function()
    assert.has_error(function() cnext({ "http://a.test/" }, 1, {}, BASE, nil, ANY, nil, false) end)
  end)
end)
