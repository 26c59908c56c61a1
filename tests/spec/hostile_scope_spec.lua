-- fixtures: --http --dns
-- The hostile web, secrets and scope (issue 16): credentials never follow a redirect
-- to another origin unless asked; every request a crawl makes stays in its scope or
-- under the rule documented for its kind; the address policy keeps fetches off
-- loopback and private networks, by literal, by name and by redirect. a/b/c.crawl.test
-- are 127.0.0.2-4 through the test dnsmasq; the server logs every request with its
-- Authorization and Cookie headers.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

lc.configure({ dns_servers = h.dns_server })

local function fetch(url, opts)
  return lc.run(function() return lc.fetch(url, opts) end)
end

local function control(path, opts)
  local res = assert(fetch(h.url(path), opts))
  return cjson.decode(res.body)
end

local function reset()
  control("/__reset")
end

local function requests(host)
  return control("/__log" .. (host and ("?host=" .. host) or "")).requests
end

local function on(host, path)
  return h.url(path, host)
end

local function esc(s)
  return (s:gsub("[^%w%-._~/]", function(c) return ("%%%02X"):format(c:byte()) end))
end

-- A URL on from_host that redirects to `to`.
local function redirect(from_host, to, status)
  return on(from_host, "/redirect-to?url=" .. esc(to) .. (status and ("&status=" .. status) or ""))
end

local function run(spec)
  spec.quiet = true
  spec.progress = false
  spec.signals = false
  return crawl.run(spec)
end

local CREDENTIALS = {
  Authorization = "Bearer secret-token", Cookie = "sid=secret", ["Proxy-Authorization"] = "Basic c2VjcmV0",
  ["X-Other"] = "kept",
}

-- The headers /echo received, after the redirects of fetch(url, opts).
local function echoed(url, opts)
  local res, err = fetch(url, opts)
  assert(res, tostring(err))
  assert.equal(200, res.status)
  return cjson.decode(res.body).headers
end

describe("hostile scope: credentials on redirects", function()
  before_each(reset)

  it("drops Authorization, Cookie and Proxy-Authorization on a redirect to another host", function()
    local got = echoed(redirect("a.crawl.test", on("b.crawl.test", "/echo")), { follow = 5, headers = CREDENTIALS })
    assert.is_nil(got.authorization)
    assert.is_nil(got.cookie)
    assert.is_nil(got["proxy-authorization"])
    assert.equal("kept", got["x-other"])
  end)

  it("drops them on a redirect to another address of the same port", function()
    local got = echoed(redirect("127.0.0.1", on("127.0.0.2", "/echo")), { follow = 1, headers = CREDENTIALS })
    assert.is_nil(got.authorization)
    assert.is_nil(got.cookie)
  end)

  it("keeps them dropped for the hops after, even back on the first host", function()
    local back = redirect("b.crawl.test", on("a.crawl.test", "/echo"))
    local got = echoed(redirect("a.crawl.test", back), { follow = 5, headers = CREDENTIALS })
    assert.is_nil(got.authorization)
    assert.is_nil(got.cookie)
  end)

  it("keeps them on a redirect within the origin", function()
    local got = echoed(on("a.crawl.test", "/redirect-to?url=/echo"), { follow = 1, headers = CREDENTIALS })
    assert.equal("Bearer secret-token", got.authorization)
    assert.equal("sid=secret", got.cookie)
  end)

  it("sends them on to another host with keep_credentials", function()
    local got = echoed(redirect("a.crawl.test", on("b.crawl.test", "/echo")),
      { follow = 5, headers = CREDENTIALS, keep_credentials = true })
    assert.equal("Bearer secret-token", got.authorization)
    assert.equal("sid=secret", got.cookie)
    assert.equal("Basic c2VjcmV0", got["proxy-authorization"])
  end)

  it("sends no user name and password of the URL to another host", function()
    local from = ("http://user:pw@127.0.0.1:%s/redirect-to?url=%s"):format(h.fixture_port,
      esc("//127.0.0.2:" .. h.fixture_port .. "/echo"))
    local got = echoed(from, { follow = 1 })
    assert.is_nil(got.authorization)
  end)

  it("luacrawl fetch -L drops them at a host change, --location-trusted keeps them", function()
    local url = redirect("a.crawl.test", on("b.crawl.test", "/echo"))
    local base = ("%s --dns-server %s fetch -L 5 -H 'Authorization: Bearer X' -H 'Cookie: sid=X' "):format(
      h.luacrawl_bin, h.dns_server)
    local code, out, err = h.sh(base .. "'" .. url .. "'")
    assert.equal(0, code, err)
    local got = cjson.decode(out).headers
    assert.is_nil(got.authorization)
    assert.is_nil(got.cookie)
    code, out, err = h.sh(base .. "--location-trusted '" .. url .. "'")
    assert.equal(0, code, err)
    assert.equal("Bearer X", cjson.decode(out).headers.authorization)
  end)

  it("a crawl's robots.txt redirect to another host of the site gets no credentials", function()
    control(("/__robots?host=a.crawl.test&status=301&location=%s"):format(esc(on("b.crawl.test", "/robots.txt"))),
      { method = "POST", body = "" })
    run({
      start = { on("a.crawl.test", "/hostsite/p/19.html") }, max_pages = 1,
      fetch = { headers = { Authorization = "Bearer secret-token", Cookie = "sid=secret" } },
    })
    local b = requests("b.crawl.test")
    assert.equal(1, #b)
    assert.equal("/robots.txt", b[1].path)
    assert.equal(cjson.null, b[1].authorization)
    assert.equal(cjson.null, b[1].cookie)
    for _, e in ipairs(requests("a.crawl.test")) do assert.equal("Bearer secret-token", e.authorization) end
  end)
end)

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

describe("hostile scope: the address policy", function()
  before_each(reset)

  local function denied(url, opts)
    local res, err = fetch(url, opts)
    assert.is_nil(res)
    assert.equal("denied", err.kind)
    return err
  end

  it("public_only refuses a loopback IP literal without connecting", function()
    local err = denied(h.url("/status/200"), { public_only = true })
    assert.matches("127%.0%.0%.1", err.message)
    assert.matches("loopback", err.message)
    assert.same({}, requests())
  end)

  it("public_only refuses a name that resolves to loopback", function()
    local err = denied(on("a.crawl.test", "/status/200"), { public_only = true })
    assert.matches("127%.0%.0%.2", err.message)
    assert.same({}, requests())
  end)

  it("refuses a redirect to a denied address, literal or by name", function()
    denied(h.url("/fault/redirect-ip?to=127.0.0.3"), { follow = 1, deny_networks = { "127.0.0.3/32" } })
    denied(redirect("a.crawl.test", on("b.crawl.test", "/status/200")), { follow = 1, deny_networks = { "127.0.0.3" } })
    assert.same({}, requests("127.0.0.3"))
    assert.same({}, requests("b.crawl.test"))
  end)

  it("deny_networks takes CIDRs of either family, and denies only inside them", function()
    local opts = { deny_networks = { "127.0.0.0/30", "fc00::/7" } }
    denied(on("a.crawl.test", "/status/200"), opts) -- 127.0.0.2
    denied(h.url("/status/200", "127.0.0.3"), opts)
    local res = assert(fetch(on("c.crawl.test", "/status/200"), opts)) -- 127.0.0.4
    assert.equal(200, res.status)
  end)

  it("refuses what is not a network", function()
    for _, bad in ipairs({ "127.0.0.1/8", "10.0.0.0/33", "example.com", "" }) do
      assert.has_error(function() fetch(h.url("/"), { deny_networks = { bad } }) end)
    end
    local ok, err = pcall(fetch, h.url("/"), { deny_networks = { "nope" } })
    assert.is_false(ok)
    assert.matches("not a network", tostring(err))
  end)

  it("lc.configure sets a policy for every fetch, and clears it", function()
    lc.configure({ deny_networks = { "127.0.0.2/32" } })
    local _, err = fetch(on("a.crawl.test", "/status/200"))
    lc.configure({ deny_networks = false })
    assert.equal("denied", err and err.kind)
    assert.equal(200, assert(fetch(on("a.crawl.test", "/status/200"))).status)
  end)

  it("a crawl with public_only fetches nothing on loopback and retries nothing", function()
    local st = run({ start = { on("a.crawl.test", "/hostsite/") }, public_only = true, robots = false })
    assert.same({}, requests())
    assert.equal(0, st.pages)
    assert.equal(1, st.errors.denied)
    assert.equal(0, st.retries)
  end)

  it("a crawl's deny_networks keeps its redirects and robots.txt off those networks", function()
    control(("/__robots?host=a.crawl.test&status=302&location=%s"):format(esc(on("b.crawl.test", "/robots.txt"))),
      { method = "POST", body = "" })
    run({
      start = { redirect("a.crawl.test", on("b.crawl.test", "/hostsite/p/19.html")) },
      allow = { hosts = { "crawl.test" } }, deny_networks = { "127.0.0.3/32" },
    })
    assert.same({}, requests("b.crawl.test"))
  end)

  it("crawl.run refuses a deny_networks entry that is not a network", function()
    assert.has_error(function() run({ start = { h.url("/") }, deny_networks = { "10.0.0.1/8" } }) end)
  end)

  it("luacrawl fetch and crawl take --public-only and --deny-network", function()
    local bin = ("%s --dns-server %s "):format(h.luacrawl_bin, h.dns_server)
    local code, _, err = h.sh(bin .. "fetch --public-only '" .. h.url("/status/200") .. "'")
    assert.equal(3, code)
    assert.matches("denied", err)
    code, _, err = h.sh(bin .. "fetch --deny-network 127.0.0.2 '" .. on("a.crawl.test", "/status/200") .. "'")
    assert.equal(3, code)
    assert.matches("denied", err)
    code, _, err = h.sh(bin .. "fetch --deny-network 300.0.0.0/8 '" .. h.url("/status/200") .. "'")
    assert.equal(2, code)
    assert.matches("not a network", err)
    -- Every request denied: no page was fetched, which the crawl reports with exit 5.
    code, _, err = h.sh(bin .. "crawl -q --public-only '" .. on("a.crawl.test", "/hostsite/") .. "'")
    assert.equal(5, code, err)
    assert.matches("denied", err)
    code, _, err = h.sh(bin .. "crawl -q --deny-network 127.0.0.0/8 --no-robots '"
      .. on("a.crawl.test", "/hostsite/") .. "'")
    assert.equal(5, code, err)
    assert.matches("denied", err)
    assert.same({}, requests())
  end)
end)
