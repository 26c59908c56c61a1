-- fixtures: --http --dns
-- The address policy (engine/http_addr_policy.c): public_only and deny_networks keep
-- fetches, redirects and a crawl's robots.txt off loopback and private networks, by
-- literal, by name and by redirect. a/b/c.crawl.test are 127.0.0.2-4 through the test
-- dnsmasq.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"
local w = require "web_helper"
local fetch, control, reset, requests, on, esc, redirect, run, echoed =
  w.fetch, w.control, w.reset, w.requests, w.on, w.esc, w.redirect, w.run, w.echoed
local CREDENTIALS = w.CREDENTIALS


describe("the address policy", function()
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
