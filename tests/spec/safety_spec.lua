-- fixtures: --http --dns --tls
-- Safety rules: only http and https at every hop, TLS verified unless asked
-- otherwise, credentials in URLs never written to logs or outputs, no CR/LF from
-- scripts into requests.
local lc = require "luacrawl"
local h = require "spec_helper"
local cjson = require "cjson"

lc.configure({ dns_servers = h.dns_server })

local function fetch(url, opts)
  return lc.run(function() return lc.fetch(url, opts) end)
end

describe("credentials in URLs", function()
  it("lc.url.redact hides user and password", function()
    assert.equal("http://***@example.org/x", lc.url.redact("http://bob:s3cret@example.org/x"))
    assert.equal("https://***@example.org", lc.url.redact("https://bob@example.org"))
    assert.equal("http://example.org/a@b", lc.url.redact("http://example.org/a@b"))
    assert.equal("http://example.org:8080/x", lc.url.redact("http://example.org:8080/x"))
  end)

  it("are sent as basic auth but never appear in an error's text", function()
    local res = assert(fetch((h.url("/echo"):gsub("//", "//bob:s3cret@"))))
    assert.matches("^Basic ", cjson.decode(res.body).headers.authorization)
    local _, err = fetch("http://bob:s3cret@127.0.0.1:1/")
    assert.not_matches("s3cret", tostring(err))
    assert.not_matches("bob", tostring(err))
  end)

  it("never appear in luacrawl crawl's output or log", function()
    local url = (h.url("/pagelinks?n=2"):gsub("//", "//bob:s3cret@"))
    local code, out, err = h.sh(h.luacrawl_bin .. " crawl -d 1 '" .. url .. "'")
    assert.equal(0, code)
    assert.equal(3, select(2, out:gsub("\n", "")))
    assert.not_matches("s3cret", out)
    assert.not_matches("s3cret", err)
  end)
end)

describe("TLS", function()
  it("luacrawl crawl verifies certificates unless --insecure", function()
    local url = "https://127.0.0.1:" .. os.getenv("LC_TLS_SELFSIGNED_PORT") .. "/"
    local _, out = h.sh(h.luacrawl_bin .. " crawl -q --no-robots " .. url)
    assert.equal("", out) -- the page failed with a tls error
    local _, out2 = h.sh(h.luacrawl_bin .. " crawl -q --no-robots --insecure " .. url)
    assert.equal(200, cjson.decode(out2).status)
  end)
end)

describe("schemes", function()
  it("refuses every non-http(s) scheme, given or redirected to", function()
    for _, u in ipairs({ "file:///etc/passwd", "ftp://127.0.0.1/", "gopher://127.0.0.1/", "dict://127.0.0.1/",
      "ldap://127.0.0.1/", "scp://127.0.0.1/x", "telnet://127.0.0.1/", "data:text/plain,x" }) do
      local _, err = fetch(u)
      assert.equal("invalid_url", err.kind, u)
      local _, err2 = fetch(h.url("/redirect-to?url=" .. u), { follow = 2 })
      assert.equal("invalid_url", err2.kind, u)
    end
  end)
end)

describe("request headers from scripts", function()
  it("are refused when a name or value holds CR or LF", function()
    for _, bad in ipairs({ { ["X-A"] = "1\r\nX-Injected: 1" }, { ["X-A\nB"] = "1" }, { ["X-A"] = "a\rb" } }) do
      assert.has_error(function() fetch(h.url("/echo"), { headers = bad }) end)
    end
  end)
end)
