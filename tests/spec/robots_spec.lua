-- Specification of luacrawl.robots: RFC 9309 parsing and matching.

local robots = require "luacrawl.robots"

local UA = "luacrawl/1.0 (+https://example.org/bot)"

local function lines(...)
  return table.concat({ ... }, "\n") .. "\n"
end

local function allowed(text, path, agent)
  return robots.parse(text):allowed(agent or UA, path)
end

describe("robots.for_status", function()
  it("parses a 2xx body", function()
    assert.equal("parse", robots.for_status(200))
    assert.equal("parse", robots.for_status(204))
  end)

  it("allows everything when a 4xx says the file is unavailable, 401 and 403 included", function()
    for _, status in ipairs({ 400, 401, 403, 404, 410, 429, 451 }) do
      assert.equal("allow_all", robots.for_status(status))
    end
  end)

  it("allows everything when a 3xx means the redirects ran out", function()
    assert.equal("allow_all", robots.for_status(301))
    assert.equal("allow_all", robots.for_status(308))
  end)

  it("disallows everything on a 5xx", function()
    assert.equal("disallow_all", robots.for_status(500))
    assert.equal("disallow_all", robots.for_status(503))
  end)

  it("disallows everything when the server was unreachable (nil or 0)", function()
    assert.equal("disallow_all", robots.for_status(nil))
    assert.equal("disallow_all", robots.for_status(0))
  end)
end)

describe("robots.allow_all and robots.disallow_all", function()
  it("allow_all allows every path and says so in kind", function()
    local r = robots.allow_all()
    assert.equal("allow_all", r.kind)
    assert.is_true(r:allowed(UA, "/"))
    assert.is_true(r:allowed(UA, "https://example.org/private?x=1"))
    assert.is_nil(r:crawl_delay(UA))
    assert.same({}, r:sitemaps())
  end)

  it("disallow_all disallows every path but /robots.txt and says so in kind", function()
    local r = robots.disallow_all()
    assert.equal("disallow_all", r.kind)
    assert.is_false(r:allowed(UA, "/"))
    assert.is_false(r:allowed("anybot", "https://example.org/a"))
    assert.is_true(r:allowed(UA, "/robots.txt"))
    assert.is_nil(r:crawl_delay(UA))
    assert.same({}, r:sitemaps())
  end)

  it("a parsed file has kind parse", function()
    assert.equal("parse", robots.parse("User-agent: *\nDisallow: /\n").kind)
  end)
end)

describe("robots groups", function()
  it("an empty file allows everything", function()
    assert.is_true(allowed("", "/anything"))
  end)

  it("allows everything when no group matches and there is no * group", function()
    local text = lines("User-agent: otherbot", "Disallow: /")
    assert.is_true(allowed(text, "/a"))
  end)

  it("uses the * group when no group names the agent", function()
    local text = lines("User-agent: otherbot", "Allow: /", "User-agent: *", "Disallow: /")
    assert.is_false(allowed(text, "/a"))
    assert.is_true(allowed(text, "/a", "otherbot"))
  end)

  it("prefers the group naming the agent over the * group", function()
    local text = lines("User-agent: *", "Disallow: /", "", "User-agent: luacrawl", "Disallow: /private")
    assert.is_true(allowed(text, "/public"))
    assert.is_false(allowed(text, "/private/x"))
    assert.is_false(allowed(text, "/public", "otherbot"))
  end)

  it("matches on the product token of a full User-Agent string", function()
    local text = lines("User-agent: luacrawl", "Disallow: /x")
    assert.is_false(allowed(text, "/x", "luacrawl/1.0 (+https://example.org/bot)"))
    assert.is_false(allowed(text, "/x", "luacrawl"))
  end)

  it("matches the agent case-insensitively", function()
    local text = lines("User-agent: LUACRAWL", "Disallow: /x")
    assert.is_false(allowed(text, "/x", "LuaCrawl/2"))
  end)

  it("reads a user-agent value as a product token too", function()
    local text = lines("User-agent: LuaCrawl/2.0 (compatible)", "Disallow: /x")
    assert.is_false(allowed(text, "/x", "luacrawl"))
  end)

  it("does not match a token that only starts like the agent's", function()
    local text = lines("User-agent: luacrawl-images", "Disallow: /", "User-agent: luacrawler", "Disallow: /")
    assert.is_true(allowed(text, "/x"))
  end)

  it("keeps - and _ in product tokens", function()
    local text = lines("User-agent: my_crawl-bot", "Disallow: /x")
    assert.is_false(allowed(text, "/x", "My_Crawl-Bot/3.1"))
    assert.is_true(allowed(text, "/x", "my"))
  end)

  it("lets consecutive user-agent lines share one group", function()
    local text = lines("User-agent: alphabot", "User-agent: luacrawl", "User-agent: betabot", "Disallow: /shared")
    assert.is_false(allowed(text, "/shared", "alphabot"))
    assert.is_false(allowed(text, "/shared"))
    assert.is_false(allowed(text, "/shared", "betabot"))
    assert.is_true(allowed(text, "/shared", "gammabot"))
  end)

  it("merges all groups for the same agent", function()
    local text = lines(
      "User-agent: luacrawl", "Disallow: /a",
      "User-agent: otherbot", "Disallow: /b",
      "User-agent: LuaCrawl", "Disallow: /c")
    assert.is_false(allowed(text, "/a"))
    assert.is_true(allowed(text, "/b"))
    assert.is_false(allowed(text, "/c"))
  end)

  it("merges rules across groups by longest match", function()
    local text = lines("User-agent: luacrawl", "Disallow: /a", "User-agent: luacrawl", "Allow: /a/b")
    assert.is_false(allowed(text, "/a/c"))
    assert.is_true(allowed(text, "/a/b"))
  end)

  it("merges all * groups", function()
    local text = lines("User-agent: *", "Disallow: /a", "User-agent: *", "Disallow: /b")
    assert.is_false(allowed(text, "/a"))
    assert.is_false(allowed(text, "/b"))
    assert.is_true(allowed(text, "/c"))
  end)

  it("ignores rules before the first user-agent line", function()
    local text = lines("Disallow: /", "Allow: /x", "User-agent: *", "Disallow: /private")
    assert.is_true(allowed(text, "/public"))
    assert.is_false(allowed(text, "/private"))
  end)

  it("starts a new group at a user-agent line after rules", function()
    local text = lines("User-agent: luacrawl", "Disallow: /a", "User-agent: otherbot", "Disallow: /b")
    assert.is_true(allowed(text, "/b"))
    assert.is_true(allowed(text, "/a", "otherbot"))
  end)

  it("does not end the user-agent lines of a group at a sitemap or unknown line", function()
    local text = lines("User-agent: luacrawl", "Sitemap: https://e.org/s.xml", "Foo: bar",
      "User-agent: otherbot", "Disallow: /x")
    assert.is_false(allowed(text, "/x"))
    assert.is_false(allowed(text, "/x", "otherbot"))
  end)

  it("ends the user-agent lines of a group at a crawl-delay line", function()
    local text = lines("User-agent: luacrawl", "Crawl-delay: 2", "User-agent: otherbot", "Disallow: /x")
    assert.is_true(allowed(text, "/x"))
    assert.is_false(allowed(text, "/x", "otherbot"))
  end)

  it("falls back to the * group for an agent without a product token", function()
    local text = lines("User-agent: *", "Disallow: /x")
    assert.is_false(allowed(text, "/x", ""))
    assert.is_false(allowed(text, "/x", "123bot"))
    assert.is_false(allowed(text, "/x", nil))
  end)

  it("gives each agent its own cached group", function()
    local r = robots.parse(lines("User-agent: luacrawl", "Disallow: /a", "User-agent: *", "Disallow: /b"))
    for _ = 1, 3 do
      assert.is_false(r:allowed(UA, "/a"))
      assert.is_true(r:allowed(UA, "/b"))
      assert.is_true(r:allowed("otherbot/1", "/a"))
      assert.is_false(r:allowed("otherbot/1", "/b"))
    end
  end)

  it("keeps answering right after many distinct agent strings", function()
    local r = robots.parse(lines("User-agent: luacrawl", "Disallow: /a"))
    for i = 1, 200 do
      assert.is_false(r:allowed("luacrawl/" .. i, "/a"))
      assert.is_true(r:allowed("bot" .. string.rep("x", i % 7) .. "/" .. i, "/a"))
    end
  end)
end)

describe("robots rules", function()
  it("matches a rule as a path prefix", function()
    local text = lines("User-agent: *", "Disallow: /fish")
    assert.is_false(allowed(text, "/fish"))
    assert.is_false(allowed(text, "/fish.html"))
    assert.is_false(allowed(text, "/fish/salmon.html"))
    assert.is_false(allowed(text, "/fishheads/yummy.html"))
    assert.is_false(allowed(text, "/fish.php?id=anything"))
    assert.is_true(allowed(text, "/Fish.asp"))
    assert.is_true(allowed(text, "/catfish"))
    assert.is_true(allowed(text, "/?id=fish"))
  end)

  it("matches paths case-sensitively", function()
    local text = lines("User-agent: *", "Disallow: /Private")
    assert.is_false(allowed(text, "/Private"))
    assert.is_true(allowed(text, "/private"))
  end)

  it("does not match /fish/ against /fish", function()
    local text = lines("User-agent: *", "Disallow: /fish/")
    assert.is_true(allowed(text, "/fish"))
    assert.is_false(allowed(text, "/fish/"))
    assert.is_false(allowed(text, "/fish/salmon"))
  end)

  it("matches /fish* like /fish", function()
    local text = lines("User-agent: *", "Disallow: /fish*")
    assert.is_false(allowed(text, "/fish"))
    assert.is_false(allowed(text, "/fish.html"))
    assert.is_false(allowed(text, "/fishheads"))
    assert.is_true(allowed(text, "/Fish"))
    assert.is_true(allowed(text, "/catfish"))
  end)

  it("counts the * of /fish* so it outweighs /fish", function()
    local text = lines("User-agent: *", "Allow: /fish", "Disallow: /fish*")
    assert.is_false(allowed(text, "/fish.html"))
    text = lines("User-agent: *", "Disallow: /fish", "Allow: /fish*")
    assert.is_true(allowed(text, "/fish.html"))
  end)

  it("ignores an empty disallow", function()
    local text = lines("User-agent: *", "Disallow:")
    assert.is_true(allowed(text, "/"))
    assert.is_true(allowed(text, "/anything"))
  end)

  it("ignores an empty disallow next to other rules", function()
    local text = lines("User-agent: *", "Disallow:", "Disallow: /x")
    assert.is_false(allowed(text, "/x"))
    assert.is_true(allowed(text, "/y"))
  end)

  it("lets the longer allow win over a shorter disallow", function()
    local text = lines("User-agent: *", "Disallow: /example/", "Allow: /example/page/")
    assert.is_true(allowed(text, "/example/page/a"))
    assert.is_false(allowed(text, "/example/other"))
  end)

  it("lets the longer disallow win over a shorter allow", function()
    local text = lines("User-agent: *", "Allow: /example/page/", "Disallow: /example/page/disallowed.gif")
    assert.is_false(allowed(text, "/example/page/disallowed.gif"))
    assert.is_true(allowed(text, "/example/page/allowed.gif"))
  end)

  it("decides by length, not by order in the file", function()
    local text = lines("User-agent: *", "Allow: /a/b", "Disallow: /a")
    assert.is_true(allowed(text, "/a/b/c"))
    text = lines("User-agent: *", "Disallow: /a/b", "Allow: /a")
    assert.is_false(allowed(text, "/a/b/c"))
  end)

  it("allow wins a tie of equal length", function()
    local text = lines("User-agent: *", "Disallow: /page", "Allow: /page")
    assert.is_true(allowed(text, "/page"))
    text = lines("User-agent: *", "Allow: /page", "Disallow: /page")
    assert.is_true(allowed(text, "/page"))
  end)

  it("allow wins a tie of equal length between different patterns", function()
    local text = lines("User-agent: *", "Disallow: /*.htm", "Allow: /page1")
    assert.is_true(allowed(text, "/page1.htm"))
  end)

  it("allows only the root with Disallow: / and Allow: /$", function()
    local text = lines("User-agent: *", "Disallow: /", "Allow: /$")
    assert.is_true(allowed(text, "/"))
    assert.is_true(allowed(text, "https://example.org"))
    assert.is_false(allowed(text, "/a"))
    assert.is_false(allowed(text, "/?q=1"))
  end)

  it("anchors /*.php$ to the end of the path", function()
    local text = lines("User-agent: *", "Disallow: /*.php$")
    assert.is_false(allowed(text, "/filename.php"))
    assert.is_false(allowed(text, "/folder/filename.php"))
    assert.is_true(allowed(text, "/filename.php?parameters"))
    assert.is_true(allowed(text, "/filename.php/"))
    assert.is_true(allowed(text, "/filename.php5"))
    assert.is_true(allowed(text, "/windows.PHP"))
  end)

  it("matches /*.php anywhere after the prefix", function()
    local text = lines("User-agent: *", "Disallow: /*.php")
    assert.is_false(allowed(text, "/index.php"))
    assert.is_false(allowed(text, "/a/b.php?x=1"))
    assert.is_false(allowed(text, "/filename.php5"))
    assert.is_true(allowed(text, "/"))
    assert.is_true(allowed(text, "/windows.PHP"))
  end)

  it("matches * in the middle of a pattern across slashes", function()
    local text = lines("User-agent: *", "Disallow: /a/*/c")
    assert.is_false(allowed(text, "/a/b/c"))
    assert.is_false(allowed(text, "/a/b/x/c/d"))
    assert.is_true(allowed(text, "/a/c"))
    assert.is_true(allowed(text, "/b/a/b/c"))
  end)

  it("matches a pattern that starts with *", function()
    local text = lines("User-agent: *", "Disallow: *private")
    assert.is_false(allowed(text, "/my/private/x"))
    assert.is_true(allowed(text, "/my/public/x"))
  end)

  it("treats repeated * as one", function()
    local text = lines("User-agent: *", "Disallow: /a**b")
    assert.is_false(allowed(text, "/ab"))
    assert.is_false(allowed(text, "/axxb"))
    assert.is_true(allowed(text, "/a"))
  end)

  it("anchors a pattern with $ to the whole path", function()
    local text = lines("User-agent: *", "Disallow: /exact$")
    assert.is_false(allowed(text, "/exact"))
    assert.is_true(allowed(text, "/exact/"))
    assert.is_true(allowed(text, "/exactly"))
  end)

  it("anchors a pattern ending in *$ nowhere in particular", function()
    local text = lines("User-agent: *", "Disallow: /a*$")
    assert.is_false(allowed(text, "/a"))
    assert.is_false(allowed(text, "/abc"))
    assert.is_true(allowed(text, "/b"))
  end)

  it("places the anchored tail after the earlier segments", function()
    local text = lines("User-agent: *", "Disallow: /ab*ab$")
    assert.is_true(allowed(text, "/ab"))
    assert.is_false(allowed(text, "/abab"))
    assert.is_false(allowed(text, "/ab/x/ab"))
  end)

  it("reads a $ before the end of a pattern literally", function()
    local text = lines("User-agent: *", "Disallow: /a$b")
    assert.is_false(allowed(text, "/a$b"))
    assert.is_false(allowed(text, "/a%24b"))
    assert.is_true(allowed(text, "/a"))
    assert.is_true(allowed(text, "/ab"))
  end)

  it("matches a literal * in a URL with %2A in a rule", function()
    local text = lines("User-agent: *", "Disallow: /star%2A")
    assert.is_false(allowed(text, "/star*"))
    assert.is_true(allowed(text, "/starX"))
  end)

  it("matches rules against the query string", function()
    local text = lines("User-agent: *", "Disallow: /search?q=", "Disallow: /*?sessionid=")
    assert.is_false(allowed(text, "/search?q=robots"))
    assert.is_true(allowed(text, "/search"))
    assert.is_true(allowed(text, "/search?page=2"))
    assert.is_false(allowed(text, "https://example.org/cart?sessionid=42"))
    assert.is_true(allowed(text, "https://example.org/cart?id=42"))
  end)

  it("blocks every URL with a query with /*?", function()
    local text = lines("User-agent: *", "Disallow: /*?")
    assert.is_false(allowed(text, "/a?b"))
    assert.is_false(allowed(text, "/?"))
    assert.is_true(allowed(text, "/a"))
  end)

  it("always allows /robots.txt", function()
    local text = lines("User-agent: *", "Disallow: /", "Disallow: /robots.txt")
    assert.is_true(allowed(text, "/robots.txt"))
    assert.is_true(allowed(text, "https://example.org/robots.txt"))
    assert.is_false(allowed(text, "/robots.txt.bak"))
  end)

  it("does not let a path without a leading slash match", function()
    local text = lines("User-agent: *", "Disallow: private")
    assert.is_true(allowed(text, "/private"))
  end)

  it("matches a pathological pattern in linear time", function()
    local text = lines("User-agent: *", "Disallow: /" .. string.rep("*a", 30) .. "*b$")
    local r = robots.parse(text)
    local path = "/" .. string.rep("a", 100000)
    local t0 = os.clock()
    for _ = 1, 20 do
      assert.is_true(r:allowed(UA, path))
    end
    assert.is_false(r:allowed(UA, path .. "b"))
    assert.is_true(os.clock() - t0 < 1)
  end)
end)

describe("robots request URLs", function()
  local text = lines("User-agent: *", "Disallow: /a/b", "Disallow: /$")

  it("uses only the path and query of a full URL", function()
    assert.is_false(allowed(text, "https://example.org/a/b?q=1"))
    assert.is_true(allowed(text, "https://a/b.example.org/x"))
    assert.is_true(allowed(text, "http://user:pw@example.org:8080/c"))
  end)

  it("drops the fragment", function()
    local t = lines("User-agent: *", "Disallow: /*frag")
    assert.is_true(allowed(t, "https://example.org/a#frag"))
    assert.is_true(allowed(t, "/a#frag"))
    assert.is_false(allowed(text, "https://example.org/a/b#x"))
    assert.is_false(allowed(text, "/a/b#x"))
  end)

  it("reads an empty URL path as /", function()
    assert.is_false(allowed(text, "https://example.org"))
    assert.is_false(allowed(text, "https://example.org#top"))
    assert.is_false(allowed(text, ""))
  end)

  it("reads a URL with a query and no path as /?query", function()
    local t = lines("User-agent: *", "Disallow: /?x")
    assert.is_false(allowed(t, "https://example.org?x=1"))
  end)

  it("rejects a URL that is not a string", function()
    local r = robots.parse(text)
    assert.has_error(function() r:allowed(UA, nil) end)
  end)
end)

describe("robots percent-encoding", function()
  it("decodes escaped unreserved characters in rules", function()
    local text = lines("User-agent: *", "Disallow: /a%7eb")
    assert.is_false(allowed(text, "/a~b"))
    assert.is_false(allowed(text, "/a%7Eb"))
  end)

  it("decodes escaped unreserved characters in request paths", function()
    local text = lines("User-agent: *", "Disallow: /a~b")
    assert.is_false(allowed(text, "/a%7eb"))
    assert.is_false(allowed(text, "/%61~b"))
  end)

  it("encodes non-ASCII octets in rules", function()
    local text = lines("User-agent: *", "Disallow: /ä")
    assert.is_false(allowed(text, "/%C3%A4"))
    assert.is_false(allowed(text, "/%c3%a4"))
    assert.is_false(allowed(text, "/ä"))
  end)

  it("encodes non-ASCII octets in request paths", function()
    local text = lines("User-agent: *", "Disallow: /%C3%A4")
    assert.is_false(allowed(text, "/ä"))
    text = lines("User-agent: *", "Disallow: /%c3%a4")
    assert.is_false(allowed(text, "https://example.org/ä?x"))
  end)

  it("keeps an escaped slash distinct from a slash", function()
    local text = lines("User-agent: *", "Disallow: /a%2Fb")
    assert.is_false(allowed(text, "/a%2fb"))
    assert.is_true(allowed(text, "/a/b"))
    text = lines("User-agent: *", "Disallow: /a/b")
    assert.is_true(allowed(text, "/a%2Fb"))
  end)

  it("encodes spaces and other unsafe characters alike on both sides", function()
    local text = lines("User-agent: *", "Disallow: /a b|c")
    assert.is_false(allowed(text, "/a%20b%7Cc"))
    assert.is_false(allowed(text, "/a b|c"))
  end)

  it("treats a stray % as an escaped %", function()
    local text = lines("User-agent: *", "Disallow: /100%")
    assert.is_false(allowed(text, "/100%"))
    assert.is_false(allowed(text, "/100%25"))
    assert.is_false(allowed(text, "/100%zz"))
    assert.is_true(allowed(text, "/100"))
  end)

  it("measures rule length after canonicalisation", function()
    -- "/%7Ea" is "/~a", three octets: the four-octet allow outweighs it.
    local text = lines("User-agent: *", "Disallow: /%7Ea", "Allow: /~ab")
    assert.is_true(allowed(text, "/~abc"))
  end)
end)

describe("robots parsing tolerance", function()
  it("ignores comments", function()
    local text = lines("# robots for example.org", "User-agent: * # everyone",
      "Disallow: /x # not /y", "# Disallow: /y")
    assert.is_false(allowed(text, "/x"))
    assert.is_true(allowed(text, "/y"))
  end)

  it("reads LF, CRLF and CR line endings", function()
    for _, eol in ipairs({ "\n", "\r\n", "\r" }) do
      local text = "User-agent: *" .. eol .. "Disallow: /x" .. eol .. "Allow: /x/y" .. eol
      assert.is_false(allowed(text, "/x"))
      assert.is_true(allowed(text, "/x/y"))
    end
  end)

  it("reads a file without a final newline", function()
    assert.is_false(allowed("User-agent: *\nDisallow: /x", "/x"))
  end)

  it("skips a UTF-8 byte order mark", function()
    local text = "\239\187\191User-agent: *\nDisallow: /x\n"
    assert.is_false(allowed(text, "/x"))
  end)

  it("trims leading and trailing whitespace", function()
    local text = "   User-agent:   luacrawl   \n\t Disallow:\t/x \t\n"
    assert.is_false(allowed(text, "/x"))
    assert.is_true(allowed(text, "/y"))
  end)

  it("accepts spaces around the colon", function()
    local text = lines("User-agent : *", "Disallow :  /x")
    assert.is_false(allowed(text, "/x"))
  end)

  it("accepts whitespace in place of a missing colon", function()
    local text = lines("User-agent *", "Disallow /x", "Allow\t/x/y")
    assert.is_false(allowed(text, "/x"))
    assert.is_true(allowed(text, "/x/y"))
  end)

  it("keeps colons inside the value when the field's colon is missing", function()
    local text = lines("User-agent: *", "Disallow /x:y")
    assert.is_false(allowed(text, "/x:y"))
    assert.is_true(allowed(text, "/x"))
  end)

  it("reads field names case-insensitively", function()
    local text = lines("USER-AGENT: *", "DISALLOW: /x", "aLLoW: /x/y")
    assert.is_false(allowed(text, "/x"))
    assert.is_true(allowed(text, "/x/y"))
  end)

  it("ignores unknown fields", function()
    local text = lines("User-agent: *", "Host: example.org", "Noindex: /x", "Disallow: /y")
    assert.is_true(allowed(text, "/x"))
    assert.is_false(allowed(text, "/y"))
  end)

  it("ignores a field glued to its value", function()
    local text = lines("User-agent: *", "Disallow/x")
    assert.is_true(allowed(text, "/x"))
  end)

  it("reads HTML served as robots.txt as allowing everything", function()
    local html = "<!DOCTYPE html>\n<html><head><title>Not found</title></head>\n" ..
      "<body><p>Disallow: nothing here</p><a href=\"/\">home</a></body></html>\n"
    local r = robots.parse(html)
    assert.is_true(r:allowed(UA, "/"))
    assert.is_true(r:allowed(UA, "/private"))
    assert.is_nil(r:crawl_delay(UA))
  end)

  it("never raises on binary junk", function()
    local seed = 12345
    local function rand(n)
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    end
    local alphabet = { "User-agent:", "Disallow:", "Allow:", "*", "$", "%", "%4",
      "\0", "\r", "\n", "\255", "\239\187\191", "/", " ", ":", "#", "luacrawl", "?" }
    for _ = 1, 300 do
      local parts = {}
      for i = 1, rand(60) do
        if rand(2) == 0 then
          parts[i] = alphabet[rand(#alphabet) + 1]
        else
          parts[i] = string.char(rand(256))
        end
      end
      local text = table.concat(parts)
      local r = robots.parse(text)
      assert.is_boolean(r:allowed(UA, "/" .. text))
      assert.is_boolean(r:allowed(text, "https://e.org/%" .. text))
      r:crawl_delay(UA)
      r:sitemaps()
    end
  end)

  it("never raises on input that is not a string", function()
    for _, v in ipairs({ 42, true, {} }) do
      assert.is_true(robots.parse(v):allowed(UA, "/"))
    end
    assert.is_true(robots.parse(nil):allowed(UA, "/"))
  end)
end)

describe("robots size limit", function()
  it("is 500 KiB", function()
    assert.equal(512000, robots.max_bytes)
  end)

  local function padded(before, after)
    local head = "User-agent: *\n" .. before
    local pad = string.rep("# padding padding padding padding\n", 16000)
    return head .. pad .. after
  end

  it("reads rules within the first 500 KiB", function()
    local text = padded("Disallow: /early\n", "")
    assert.is_true(#text > 512000)
    assert.is_false(allowed(text, "/early"))
  end)

  it("ignores everything after 500 KiB", function()
    local text = padded("", "Disallow: /late\n")
    assert.is_true(allowed(text, "/late"))
  end)

  it("ignores a line the limit cuts in two", function()
    local head = "User-agent: *\nDisallow: /a\n"
    local rule = "Allow: /a/long/path\n"
    local fill = string.rep("#", 512000 - #head - 10 - 1) .. "\n"
    local text = head .. fill .. rule
    -- Cut after "Allow: /a/" the rule would allow all of /a/...
    assert.is_false(allowed(text, "/a/other"))
    assert.is_false(allowed(text, "/a/long/path"))
  end)

  it("reads a line that ends exactly at the limit", function()
    local head = "User-agent: *\n"
    local rule = "Disallow: /x\n"
    local fill = string.rep("#", 512000 - #head - #rule - 1) .. "\n"
    local text = head .. fill .. rule .. "Disallow: /y\n"
    assert.is_false(allowed(text, "/x"))
    assert.is_true(allowed(text, "/y"))
  end)

  it("parses a huge file quickly", function()
    local many = {}
    for i = 1, 20000 do
      many[i] = "Disallow: /dir" .. i .. "/*.php$"
    end
    local text = "User-agent: *\n" .. table.concat(many, "\n") .. string.rep("x", 600000)
    local t0 = os.clock()
    local r = robots.parse(text)
    assert.is_false(r:allowed(UA, "/dir77/a.php"))
    assert.is_true(r:allowed(UA, "/dir77/a.html"))
    assert.is_true(os.clock() - t0 < 2)
  end)
end)

describe("robots crawl-delay", function()
  it("is nil when the file has none", function()
    assert.is_nil(robots.parse(lines("User-agent: *", "Disallow: /")):crawl_delay(UA))
  end)

  it("comes from the agent's own group", function()
    local r = robots.parse(lines("User-agent: *", "Crawl-delay: 10", "User-agent: luacrawl", "Crawl-delay: 2"))
    assert.equal(2, r:crawl_delay(UA))
    assert.equal(10, r:crawl_delay("otherbot"))
  end)

  it("falls back to the * group", function()
    local r = robots.parse(lines("User-agent: otherbot", "Crawl-delay: 3", "User-agent: *", "Crawl-delay: 7"))
    assert.equal(7, r:crawl_delay(UA))
  end)

  it("does not fall back to * when the agent's group has none", function()
    local r = robots.parse(lines("User-agent: *", "Crawl-delay: 7", "User-agent: luacrawl", "Disallow: /x"))
    assert.is_nil(r:crawl_delay(UA))
  end)

  it("accepts decimals", function()
    assert.equal(0.5, robots.parse(lines("User-agent: *", "Crawl-delay: 0.5")):crawl_delay(UA))
    assert.equal(1.5, robots.parse(lines("User-agent: *", "crawl-delay: 1.5")):crawl_delay(UA))
    assert.equal(0.25, robots.parse(lines("User-agent: *", "Crawl-delay: .25")):crawl_delay(UA))
  end)

  it("ignores negative and garbage values", function()
    for _, v in ipairs({ "-1", "abc", "1e3", "0x10", "inf", "nan", "5s", "" }) do
      local r = robots.parse(lines("User-agent: *", "Crawl-delay: " .. v))
      assert.is_nil(r:crawl_delay(UA), v)
    end
  end)

  it("takes the first valid value of merged groups", function()
    local r = robots.parse(lines("User-agent: luacrawl", "Crawl-delay: nope",
      "User-agent: luacrawl", "Crawl-delay: 4", "User-agent: luacrawl", "Crawl-delay: 9"))
    assert.equal(4, r:crawl_delay(UA))
  end)

  it("ignores a crawl-delay before any user-agent line", function()
    local r = robots.parse(lines("Crawl-delay: 5", "User-agent: *", "Disallow: /x"))
    assert.is_nil(r:crawl_delay(UA))
  end)
end)

describe("robots sitemaps", function()
  it("lists sitemap lines in file order, wherever they are", function()
    local r = robots.parse(lines(
      "Sitemap: https://example.org/a.xml",
      "User-agent: otherbot", "Disallow: /",
      "sitemap: https://example.org/b.xml",
      "User-agent: *", "SITEMAP:https://example.org/c.xml # comment"))
    assert.same({
      "https://example.org/a.xml",
      "https://example.org/b.xml",
      "https://example.org/c.xml",
    }, r:sitemaps())
  end)

  it("is empty when there are none", function()
    assert.same({}, robots.parse(lines("User-agent: *", "Disallow:")):sitemaps())
  end)

  it("returns a list the caller may change", function()
    local r = robots.parse("Sitemap: https://example.org/s.xml\n")
    table.insert(r:sitemaps(), "x")
    assert.same({ "https://example.org/s.xml" }, r:sitemaps())
  end)
end)

-- A hostile robots.txt (issue 16): max_task_cpu cannot interrupt one long C call, so
-- the work a file can cause is bounded by the matcher itself. Work is counted, not
-- timed: the searches a match makes (robots.lua loaded afresh with a counting
-- string.find), and, for the parser, a bound far beyond the linear time it takes
-- where the patterns it used before were quadratic.
describe("robots.txt written to exhaust the matcher", function()
  -- robots.lua loaded with string.find counting its calls while `fn` runs.
  local function count_finds(fn)
    local real, n = string.find, 0
    package.loaded["luacrawl.robots"] = nil
    string.find = function(...)
      n = n + 1
      return real(...)
    end
    local ok, fresh = pcall(require, "luacrawl.robots")
    string.find = real
    package.loaded["luacrawl.robots"] = robots
    assert(ok, fresh)
    local counting = function() n = 0 end
    return fn(fresh, counting, function() return n end)
  end

  it("a rule of many wildcards costs one search per segment, whatever the path's length", function()
    count_finds(function(fresh, reset, count)
      local r = fresh.parse(lines("User-agent: *", "Disallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"))
      local counts = {}
      for _, n in ipairs({ 100, 1000, 8000 }) do
        local path = "/" .. ("a"):rep(n)
        r:allowed(UA, path) -- the agent's group, made once
        reset()
        assert.is_true(r:allowed(UA, path))
        counts[#counts + 1] = count()
      end
      -- 21 segments: at most one search each, and a few for the path's canonical form.
      assert.is_true(counts[3] <= 21 + 5, tostring(counts[3]))
      assert.equal(counts[1], counts[3])
    end)
  end)

  it("a long line of spaces or digits parses in linear time", function()
    local h = require "spec_helper"
    local path = h.tmpname(".lua")
    local f = assert(io.open(path, "w"))
    f:write([[
      local robots = require "luacrawl.robots"
      local n = 400000
      local r = robots.parse("User-agent: *\nDisallow: /a" .. (" "):rep(n) .. "b\n"
        .. (" "):rep(n) .. "\n" .. "Crawl-delay: " .. ("1"):rep(n) .. "x\n")
      print(r:allowed("x", "/a"), r:crawl_delay("x"))
    ]])
    f:close()
    -- Linear: well under a second; the quadratic patterns took hours on this input.
    local code, out, err = h.sh(("timeout 120 %s lua %s"):format(h.luacrawl_bin, path))
    assert.equal(0, code, err)
    assert.equal("true\tnil\n", out)
  end)
end)
