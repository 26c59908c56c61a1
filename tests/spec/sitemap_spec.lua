-- luacrawl.sitemap: XML sitemaps, indexes, gzip, text sitemaps and the limits.
require "luacrawl"
local sitemap = require "luacrawl.sitemap"
local h = require "spec_helper"

local function gzip(s)
  local path = h.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
  local p = assert(io.popen("gzip -c " .. path, "r"))
  local out = p:read("*a")
  p:close()
  os.remove(path)
  return out
end

local URLSET = [==[
<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url>
    <loc>https://example.org/</loc>
    <lastmod>2024-01-02</lastmod>
    <changefreq>daily</changefreq>
    <priority>0.8</priority>
  </url>
  <url><loc>
     https://example.org/a?x=1&amp;y=2
  </loc></url>
  <url><loc><![CDATA[https://example.org/cdata]]></loc></url>
  <url><lastmod>2024-01-01</lastmod></url>
</urlset>
]==]

describe("sitemap.parse", function()
  it("reads a urlset with every field, entities decoded and whitespace trimmed", function()
    local sm = assert(sitemap.parse(URLSET))
    assert.equal("urlset", sm.kind)
    assert.equal(3, #sm.entries)
    assert.same({ loc = "https://example.org/", lastmod = "2024-01-02", changefreq = "daily", priority = "0.8" },
      sm.entries[1])
    assert.same({ loc = "https://example.org/a?x=1&y=2" }, sm.entries[2])
    assert.equal("https://example.org/cdata", sm.entries[3].loc)
  end)

  it("reads a sitemap index", function()
    local sm = assert(sitemap.parse([[<?xml version="1.0"?>
      <sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <sitemap><loc>https://example.org/s1.xml.gz</loc><lastmod>2024-02-01</lastmod></sitemap>
        <sitemap><loc>https://example.org/s2.xml</loc></sitemap>
      </sitemapindex>]]))
    assert.equal("index", sm.kind)
    assert.same({ "https://example.org/s1.xml.gz", "https://example.org/s2.xml" },
      { sm.entries[1].loc, sm.entries[2].loc })
    assert.equal("2024-02-01", sm.entries[1].lastmod)
  end)

  it("reads a gzipped urlset", function()
    local sm = assert(sitemap.parse(gzip(URLSET)))
    assert.equal("urlset", sm.kind)
    assert.equal(3, #sm.entries)
  end)

  it("reads a plain-text sitemap, one URL per line", function()
    local sm = assert(sitemap.parse("https://example.org/a\r\n\nhttps://example.org/b\n  not a url\nhttp://example.org/c"))
    assert.equal("text", sm.kind)
    assert.same({ "https://example.org/a", "https://example.org/b", "http://example.org/c" },
      { sm.entries[1].loc, sm.entries[2].loc, sm.entries[3].loc })
  end)

  it("accepts namespace prefixes and a BOM", function()
    local sm = assert(sitemap.parse("\239\187\191<s:urlset xmlns:s='http://www.sitemaps.org/schemas/sitemap/0.9'>"
      .. "<s:url><s:loc>https://example.org/p</s:loc></s:url></s:urlset>"))
    assert.equal("https://example.org/p", sm.entries[1].loc)
  end)

  it("refuses more than 50,000 URLs with a clear error", function()
    local parts = { "<urlset>" }
    for i = 1, 50001 do parts[#parts + 1] = "<url><loc>https://example.org/" .. i .. "</loc></url>" end
    parts[#parts + 1] = "</urlset>"
    local sm, err = sitemap.parse(table.concat(parts))
    assert.is_nil(sm)
    assert.matches("50000 URLs", err.message)
  end)

  it("accepts exactly 50,000 URLs", function()
    local parts = { "<urlset>" }
    for i = 1, 50000 do parts[#parts + 1] = "<url><loc>https://example.org/" .. i .. "</loc></url>" end
    parts[#parts + 1] = "</urlset>"
    assert.equal(50000, #assert(sitemap.parse(table.concat(parts))).entries)
  end)

  it("refuses more than 50 MB uncompressed, even from a small gzip", function()
    local big = "<urlset>" .. ("<!-- padding -->"):rep(4 * 1024 * 1024) .. "</urlset>"
    local gz = gzip(big)
    assert.is_true(#gz < 1024 * 1024)
    local sm, err = sitemap.parse(gz)
    assert.is_nil(sm)
    assert.matches("50 MB", err.message)
  end)

  it("reports malformed XML", function()
    local sm, err = sitemap.parse("<urlset><url><loc>https://example.org/</loc></url>")
    assert.is_nil(sm)
    assert.equal("parse", err.kind)
    assert.equal("parse: " .. err.message, tostring(err))
    assert.matches("malformed XML", err.message)
  end)

  it("reports an unexpected root element", function()
    local sm, err = sitemap.parse("<html><body>not a sitemap</body></html>")
    assert.is_nil(sm)
    assert.matches("<html>", err.message)
  end)

  it("reports broken gzip data", function()
    local sm, err = sitemap.parse("\31\139\8\0garbage")
    assert.is_nil(sm)
    assert.matches("gzip", err.message)
  end)

  it("never loads external entities", function()
    local sm = sitemap.parse([==[<?xml version="1.0"?>
      <!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/hostname">]>
      <urlset><url><loc>https://example.org/&xxe;</loc></url></urlset>]==])
    if sm then
      for _, e in ipairs(sm.entries) do assert.not_matches("\n", e.loc) end
      assert.is_true(#sm.entries <= 1)
      if sm.entries[1] then assert.equal("https://example.org/", sm.entries[1].loc) end
    end
  end)

  it("raises when body is not a string", function()
    assert.has_error(function() sitemap.parse(nil) end)
  end)
end)

describe("sitemap.parse on inputs the fuzzer found", function()
  it("ends a text sitemap's line at a NUL byte", function()
    local sm = assert(sitemap.parse("https://a.example/x\0y\nhttps://a.example/z\n"))
    assert.same({ "https://a.example/x", "https://a.example/z" }, { sm.entries[1].loc, sm.entries[2].loc })
  end)
end)
