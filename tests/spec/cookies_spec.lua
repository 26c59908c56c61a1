-- fixtures: --http --dns
-- Cookie jars (lc.cookies): what a server sets is sent back to it by RFC 6265's
-- rules (domain, path, Secure, expiry) and never to another site; lc.fetch uses a
-- jar only when given one, a crawl has one unless cookies = false. a/b.crawl.test
-- are 127.0.0.2 and 127.0.0.3 through the test dnsmasq (names, not IP literals: curl
-- counts 127.0.0.1 as a secure context, where Secure cookies go over http).
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

lc.configure({ dns_servers = h.dns_server })

local function fetch(url, opts)
  return lc.run(function() return lc.fetch(url, opts) end)
end

local function esc(s)
  return (s:gsub("[^%w%-._~/]", function(c) return ("%%%02X"):format(c:byte()) end))
end

local A, B = "a.crawl.test", "b.crawl.test"

-- The URL on host that sets each cookie of the list.
local function set_url(host, cookies, extra)
  local q = {}
  for _, c in ipairs(cookies) do q[#q + 1] = "c=" .. esc(c) end
  return h.url("/cookies/set?" .. table.concat(q, "&") .. (extra or ""), host)
end

-- The Cookie header /echo on host (at path) received with opts.
local function sent(host, opts, path)
  local res = assert(fetch(h.url(path or "/echo", host), opts))
  assert.equal(200, res.status)
  return cjson.decode(res.body).headers.cookie
end

local function control(path)
  return cjson.decode(assert(fetch(h.url(path))).body)
end

describe("lc.cookies", function()
  it("stores what a server sets and sends it back to the same host", function()
    local jar = lc.cookies()
    assert.equal(200, assert(fetch(set_url(A, { "sid=1; Path=/", "theme=dark; Path=/" }), { cookies = jar })).status)
    -- In curl's order (RFC 6265 5.4 leaves it open): longer paths, domains, names first.
    assert.equal("theme=dark; sid=1", sent(A, { cookies = jar }))
    assert.equal("theme=dark; sid=1", jar:get(h.url("/echo", A)))
  end)

  it("never sends a host's cookies to another host", function()
    local jar = lc.cookies()
    fetch(set_url(A, { "sid=1" }), { cookies = jar })
    assert.is_nil(sent(B, { cookies = jar }))
    assert.is_nil(jar:get(h.url("/", B)))
  end)

  it("sends a Domain cookie to the domain's other hosts, and refuses a public suffix", function()
    local jar = lc.cookies()
    fetch(set_url(A, { "wide=1; Domain=crawl.test; Path=/", "tld=1; Domain=test; Path=/" }), { cookies = jar })
    assert.equal("wide=1", sent(B, { cookies = jar }))
    local list = jar:list()
    assert.equal(1, #list)
    assert.same({ "wide", "crawl.test", false }, { list[1].name, list[1].domain, list[1].host_only })
  end)

  it("sends a cookie only under its path, by default the directory that set it", function()
    local jar = lc.cookies()
    fetch(set_url(A, { "p=1; Path=/echo", "d=1" }), { cookies = jar })
    assert.equal("p=1", sent(A, { cookies = jar }, "/echo?x=1"))
    assert.is_nil(jar:get(h.url("/echoes", A)))
    assert.equal("d=1", jar:get(h.url("/cookies/show", A)))
    assert.is_nil(jar:get(h.url("/cookie", A)))
  end)

  it("drops a cookie when it expires, and when the server deletes it", function()
    local jar = lc.cookies()
    fetch(set_url(A, { "short=1; Max-Age=1; Path=/", "gone=1; Path=/", "old=1; Path=/; Expires=Wed, 21 Oct 2015 07:28:00 GMT" }),
      { cookies = jar })
    assert.equal("short=1; gone=1", jar:get(h.url("/", A)))
    fetch(set_url(A, { "gone=; Max-Age=0; Path=/" }), { cookies = jar })
    assert.equal("short=1", sent(A, { cookies = jar }))
    lc.run(function() lc.sleep(2.1) end)
    assert.is_nil(sent(A, { cookies = jar }))
  end)

  it("never sends a Secure cookie over http, and takes none from http", function()
    local jar = lc.cookies()
    assert.is_true(jar:set("https://" .. A .. "/", "s=1; Secure"))
    assert.equal("s=1", jar:get("https://" .. A .. "/"))
    assert.is_nil(jar:get(h.url("/", A)))
    assert.is_nil(sent(A, { cookies = jar }))
    fetch(set_url(A, { "t=1; Secure; Path=/" }), { cookies = jar })
    assert.equal(1, #jar:list())
  end)

  it("keeps what a redirect's response sets, and follows the jar's rules across hosts", function()
    local jar = lc.cookies()
    local url = set_url(A, { "r=1; Path=/" }, "&redirect=302&next=" .. esc(h.url("/echo", A)))
    local res = assert(fetch(url, { cookies = jar, follow = 2 }))
    assert.equal("r=1", cjson.decode(res.body).headers.cookie)
    -- A redirect to another host: the jar's cookie of the first host stays behind.
    url = set_url(A, { "r2=1; Path=/" }, "&redirect=302&next=" .. esc(h.url("/echo", B)))
    res = assert(fetch(url, { cookies = jar, follow = 2 }))
    assert.is_nil(cjson.decode(res.body).headers.cookie)
    assert.equal("r2=1; r=1", jar:get(h.url("/", A)))
  end)

  it("is opt-in in lc.fetch: nothing is kept or sent without a jar", function()
    fetch(set_url(A, { "sid=1; Path=/" }))
    assert.is_nil(sent(A))
    -- Nor by a connection's handle that served a jar's request before.
    local jar = lc.cookies()
    fetch(set_url(A, { "sid=1; Path=/" }), { cookies = jar })
    assert.equal("sid=1", sent(A, { cookies = jar }))
    for _ = 1, 3 do assert.is_nil(sent(A)) end
    fetch(set_url(A, { "other=1; Path=/" }))
    assert.equal("sid=1", jar:get(h.url("/", A)))
  end)

  it("sends one Cookie header: the request's own, then the jar's", function()
    local jar = lc.cookies()
    assert.is_true(jar:set(h.url("/", A), "j=1; Path=/"))
    assert.equal("u=2; j=1", sent(A, { cookies = jar, headers = { Cookie = "u=2" } }))
    assert.equal("u=2", sent(B, { cookies = jar, headers = { Cookie = "u=2" } }))
    assert.equal("j=1", sent(A, { cookies = jar, headers = { Cookie = "" } }))
  end)

  -- The engine keeps easy handles between requests: these take
  -- turns on the same few handles, in one run.
  it("keeps each jar's cookies to itself when jars, and requests without one, take turns", function()
    local one, two = lc.cookies(), lc.cookies()
    local function cookie(opts)
      local res = assert(lc.fetch(h.url("/echo", A), opts))
      return cjson.decode(res.body).headers.cookie
    end
    local seen = lc.run(function()
      assert(lc.fetch(set_url(A, { "who=one; Path=/" }), { cookies = one }))
      assert(lc.fetch(set_url(A, { "who=two; Path=/" }), { cookies = two }))
      local got = {}
      for i = 1, 4 do
        got[#got + 1] = { cookie({ cookies = one }), cookie({ cookies = two }), cookie() }
        if i == 2 then -- a request of the jar's with options of its own between
          local res = assert(lc.fetch(h.url("/echo", A), { cookies = two, headers = { ["X-A"] = "1" } }))
          got[#got + 1] = { cjson.decode(res.body).headers.cookie }
        end
      end
      -- Several at once, each task with its jar or none.
      local tasks = {}
      for i = 1, 12 do
        local opts = ({ { cookies = one }, { cookies = two }, {} })[i % 3 + 1]
        tasks[i] = lc.spawn(function() return cookie(opts) end)
      end
      local together = {}
      for i = 1, 12 do together[i] = tasks[i]:join() or "none" end
      return { got = got, together = together }
    end)
    for i, row in ipairs(seen.got) do
      if #row == 1 then
        assert.equal("who=two", row[1])
      else
        assert.same({ "who=one", "who=two" }, { row[1], row[2] }, "round " .. i)
        assert.is_nil(row[3], "round " .. i)
      end
    end
    for i, c in ipairs(seen.together) do
      assert.equal(({ "who=one", "who=two", "none" })[i % 3 + 1], c, "task " .. i)
    end
  end)

  it("goes on when a jar whose handles the engine keeps is dropped", function()
    lc.run(function()
      local jar = lc.cookies()
      assert(lc.fetch(set_url(A, { "gone=1; Path=/" }), { cookies = jar }))
    end)
    collectgarbage()
    collectgarbage()
    local jar = lc.cookies()
    assert.is_nil(sent(A, { cookies = jar }))
    assert.is_nil(sent(A))
  end)

  it("jar:set follows the rules a response's Set-Cookie would", function()
    local jar = lc.cookies()
    assert.is_true(jar:set(h.url("/a/b", A), "x=1"))
    assert.equal("/a", jar:list()[1].path)
    local ok, err = jar:set(h.url("/", A), "x=1; Domain=other.test")
    assert.is_nil(ok)
    assert.equal("invalid_cookie", err.kind)
    assert.matches("other.test", err.message)
    assert.is_nil((jar:set(h.url("/", A), "novalue")))
    assert.is_nil((jar:set(h.url("/", A), "x=1; Secure")))
    assert.has_error(function() jar:set("ftp://a.crawl.test/", "x=1") end)
    assert.has_error(function() jar:get("not a url") end)
  end)

  it("tells names apart by case, as RFC 6265 and browsers do (curl 7.88 did not)", function()
    local jar = lc.cookies()
    assert.is_true(jar:set(h.url("/", A), "sid=1; Path=/"))
    assert.is_true(jar:set(h.url("/", A), "SID=2; Path=/"))
    assert.equal("sid=1; SID=2", jar:get(h.url("/", A)))
  end)

  it("jar:list shows each cookie's attributes; jar:clear forgets them", function()
    local jar = lc.cookies()
    assert.is_true(jar:set("https://" .. A .. "/p/", "n=v; Path=/p; Secure; HttpOnly; Max-Age=3600"))
    local c = jar:list()[1]
    assert.same({ "n", "v", A, "/p", true, true, true },
      { c.name, c.value, c.domain, c.path, c.host_only, c.secure, c.http_only })
    assert.is_true(c.expires > os.time() + 3500)
    assert.equal(1, #jar:list("https://" .. A .. "/p/x"))
    assert.equal(0, #jar:list("https://" .. A .. "/q"))
    jar:clear()
    assert.same({}, jar:list())
  end)

  it("refuses a value that is not a jar", function()
    assert.has_error(function() fetch(h.url("/echo"), { cookies = {} }) end)
  end)

  it("lets no cookie from http shadow a Secure one, by a response or jar:set", function()
    local jar = lc.cookies()
    assert.is_true(jar:set("https://" .. A .. "/", "sid=secret; Secure; Path=/"))
    fetch(set_url(A, { "sid=forged; Path=/", "sid=forged; Path=/deeper" }), { cookies = jar })
    local ok, err = jar:set(h.url("/", A), "sid=forged; Path=/")
    assert.is_nil(ok)
    assert.matches("Secure", err.message)
    assert.same({ { "sid", "secret", true } }, (function()
      local got = {}
      for _, c in ipairs(jar:list()) do got[#got + 1] = { c.name, c.value, c.secure } end
      return got
    end)())
    -- Another name, or over https, is not a shadow.
    assert.is_true(jar:set(h.url("/", A), "other=1; Path=/"))
    assert.is_true(jar:set("https://" .. A .. "/", "sid=new; Path=/"))
    assert.equal("other=1; sid=new", jar:get("https://" .. A .. "/"))
  end)

  it("takes no cookie from a proxy's answer to CONNECT", function()
    -- The fixture server, as a proxy, refuses tunnels with a 405 that sets a cookie.
    local jar = lc.cookies()
    local res = fetch("https://" .. A .. "/", { proxy = h.url(""), cookies = jar, timeout = 5 })
    assert.is_true(res == nil or res.status ~= 200)
    assert.same({}, jar:list())
  end)

  -- The caps (Chrome's): a site keeps at most 180, its newest; past 3,300 in all, the
  -- sites holding the most lose their oldest, down to 3,000.
  local function names_by_domain(jar)
    local by, n = {}, 0
    for _, c in ipairs(jar:list()) do
      by[c.domain] = by[c.domain] or {}
      by[c.domain][c.name] = true
      n = n + 1
    end
    return by, n
  end

  local function size(set)
    local n = 0
    for _ in pairs(set) do n = n + 1 end
    return n
  end

  it("keeps exactly the newest 180 cookies of a site that sets more", function()
    local jar = lc.cookies()
    lc.run(function()
      for i = 0, 9 do -- 50 new cookies a page
        assert(lc.fetch(h.url(("/cookiesite/50/%d.html"):format(i), A), { cookies = jar }))
      end
    end)
    local by, n = names_by_domain(jar)
    assert.equal(180, n)
    for j = 0, 49 do assert.is_true(by[A]["c9_" .. j], "c9_" .. j) end
    for j = 20, 49 do assert.is_true(by[A]["c6_" .. j], "c6_" .. j) end -- 500 - 180 = 320 gone
    for j = 0, 19 do assert.is_nil(by[A]["c6_" .. j], "c6_" .. j) end
    -- A request sends them all but what curl 7.88 sends at most: 150.
    local res = assert(fetch(h.url("/cookiesite/0/0.html", A), { cookies = jar }))
    assert.matches('<p id="sent">150</p>', res.body, 1, true)
  end)

  it("counts each IP address as a site of its own", function()
    local jar = lc.cookies()
    for _, ip in ipairs({ "10.0.0.1", "10.1.0.1" }) do -- one "0.1" to the public suffix list
      for k = 1, 100 do assert.is_true(jar:set(("http://%s/"):format(ip), ("k%d=v"):format(k))) end
    end
    local by, n = names_by_domain(jar)
    assert.equal(200, n)
    assert.equal(100, size(by["10.0.0.1"]))
  end)

  it("keeps at most 3,300 cookies in all, the sites that hold the most losing theirs", function()
    local jar = lc.cookies()
    for s = 1, 40 do
      for k = 1, 100 do
        assert.is_true(jar:set(("http://s%d.example/"):format(s), ("k%d=v"):format(k)))
      end
    end
    local by, n = names_by_domain(jar)
    assert.is_true(n <= 3300, n .. " cookies kept")
    for s = 1, 40 do
      local site = by[("s%d.example"):format(s)]
      assert.is_true(size(site) > 0 and size(site) <= 100)
    end
    assert.is_true(by["s40.example"].k100)
  end)
end)

describe("cookies in a crawl", function()
  local function run(spec)
    spec.quiet, spec.progress, spec.signals = true, false, false
    spec.robots = false
    local items = {}
    spec.items = items
    spec.parse = spec.parse or function(page)
      page:follow(page:css("a::attr(href)"))
      page:emit({ url = page.url, cookie = page:css1("#cookie::text") })
    end
    crawl.run(spec)
    return items
  end

  local function shown(items)
    for _, it in ipairs(items) do
      if it.url:find("/cookies/show", 1, true) then return it.cookie end
    end
  end

  it("keeps a jar per crawl by default, as Scrapy does", function()
    local items = run({ start = { set_url(A, { "sid=crawl" }) } })
    assert.equal("sid=crawl", shown(items))
  end)

  it("sends no cookies with cookies = false", function()
    local items = run({ start = { set_url(A, { "sid=crawl" }) }, cookies = false })
    assert.is_nil(shown(items))
  end)

  it("takes a jar of the caller's own, and starts from what it holds", function()
    local jar = lc.cookies()
    assert.is_true(jar:set(h.url("/", A), "given=1"))
    local items = run({ start = { set_url(A, { "sid=2; Path=/" }) }, cookies = jar })
    assert.equal("given=1; sid=2", shown(items))
    assert.equal("given=1; sid=2", jar:get(h.url("/", A)))
  end)

  it("never sends one host's cookies to another host of the crawl", function()
    control("/__reset")
    run({
      start = { set_url(A, { "sid=a; Path=/" }, "&next=" .. esc(h.url("/cookies/show", B))) },
      allow = { hosts = { A, B } },
    })
    local log = control("/__log?host=" .. B).requests
    assert.equal(1, #log)
    assert.equal(cjson.null, log[1].cookie)
  end)

  it("refuses a cookies value that is not a jar, true or false", function()
    assert.has_error(function() crawl.new({ start = { h.url("/") }, cookies = "yes" }) end)
  end)
end)
