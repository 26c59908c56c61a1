-- fixtures: --http --dns
-- Redirects, which the engine follows itself (engine/http_redirect.c): the chain and
-- its budget, the schemes refused, and the credentials (Authorization, Cookie,
-- Proxy-Authorization, a URL's user and password) that never follow a redirect to
-- another origin unless asked. a/b/c.crawl.test are 127.0.0.2-4 through the test
-- dnsmasq; the server logs every request with its Authorization and Cookie headers.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"
local w = require "web_helper"
local fetch, control, reset, requests, on, esc, redirect, run, echoed =
  w.fetch, w.control, w.reset, w.requests, w.on, w.esc, w.redirect, w.run, w.echoed
local CREDENTIALS = w.CREDENTIALS


describe("credentials on redirects", function()
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

describe("lc.fetch following redirects", function()
  it("does not follow redirects unless asked", function()
    local res = assert(fetch(h.url("/redirect/3")))
    assert.equal(302, res.status)
    assert.equal("/redirect/2", res.headers.location)
  end)

  it("follows a redirect chain when asked", function()
    local res = assert(fetch(h.url("/redirect/3"), { follow = 5 }))
    assert.equal(200, res.status)
    assert.equal("done", res.body)
    assert.equal(3, res.redirects)
    assert.equal(h.url("/redirect/0"), res.url)
  end)

  it("stops at the redirect budget and returns the last redirect", function()
    local res = assert(fetch(h.url("/loop/a"), { follow = 4 }))
    assert.equal(302, res.status)
    assert.equal(4, res.redirects)
  end)

  it("refuses redirects to schemes other than http and https", function()
    for _, target in ipairs({ "file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/" }) do
      local res, err = fetch(h.url("/redirect-to?url=" .. target), { follow = 3 })
      assert.is_nil(res)
      assert.equal("invalid_url", err.kind)
      assert.matches("only http and https", err.message)
    end
  end)

  it("follows a redirect to another address through our own resolver", function()
    local res = assert(fetch(h.url("/redirect-to?url=" .. h.url("/status/200", "127.0.0.3")), { follow = 1 }))
    assert.equal(200, res.status)
    assert.equal("127.0.0.3", res.ip)
  end)
end)
