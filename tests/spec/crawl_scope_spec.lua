-- The crawl's scope rules (lua/luacrawl/crawl_scope.lua): allow and deny urls as
-- regular expressions or URL globs.
local h = require "spec_helper"
local cjson = require "cjson"
local lc = require "luacrawl"
local scope = require "luacrawl.crawl_scope"

local function urls_of(out)
  local urls = {}
  for l in out:gmatch("[^\n]+") do urls[#urls + 1] = cjson.decode(l).url end
  table.sort(urls)
  return urls
end

describe("URL globs", function()
  local function matches(glob, url)
    return lc.regex(scope.glob_to_regex(glob)):test(url)
  end

  it("match the whole URL: * within a segment, ** across them, {a,b} either", function()
    assert.is_true(matches("https://example.org/docs/**", "https://example.org/docs/a/b.html"))
    assert.is_false(matches("https://example.org/docs/**", "https://example.org/blog/a"))
    assert.is_true(matches("https://example.org/docs/*", "https://example.org/docs/a.html"))
    assert.is_false(matches("https://example.org/docs/*", "https://example.org/docs/a/b.html"))
    assert.is_true(matches("http{s,}://example.org/{docs,blog}/**", "http://example.org/blog/x"))
    assert.is_false(matches("http{s,}://example.org/{docs,blog}/**", "ftp://example.org/blog/x"))
  end)

  it("take '.', '?' and '+' as themselves", function()
    assert.is_true(matches("https://example.org/list?page=*", "https://example.org/list?page=2"))
    assert.is_false(matches("https://example.org/a.html", "https://example.org/aXhtml"))
    assert.is_true(matches("https://example.org/c++/*", "https://example.org/c++/x"))
  end)

  it("refuse an unclosed brace", function()
    assert.has_error(function() scope.glob_to_regex("https://x/{a,b") end, "an unclosed { in the glob")
  end)
end)

describe("luacrawl crawl --allow and --deny", function()
  local bin = h.luacrawl_bin
  local function crawl(args)
    return h.sh(("%s crawl '%s' -q --fields url -o - %s"):format(bin, h.url("/items?page=1"), args))
  end

  it("take a glob", function()
    local code, out, err = crawl(("--allow '%s' --allow '%s'"):format(h.url("/items?page=*"), h.url("/item/{1,2}")))
    assert.equal(0, code, err)
    assert.same({ h.url("/item/1"), h.url("/item/2"), h.url("/items?page=1"), h.url("/items?page=2"),
      h.url("/items?page=3"), h.url("/items?page=4"), h.url("/items?page=5") }, urls_of(out))
    code, out = crawl(("--deny '%s' -d 1"):format(h.url("/item/**")))
    assert.equal(0, code)
    assert.same({ h.url("/items?page=1"), h.url("/items?page=2") }, urls_of(out))
  end)

  it("take a regular expression as before, and the glob: and re: prefixes", function()
    local code, out = crawl("-d 1 --deny '/item/[0-9]+$'")
    assert.equal(0, code)
    assert.same({ h.url("/items?page=1"), h.url("/items?page=2") }, urls_of(out))
    code, out = crawl(("-d 1 --deny 'glob:%s'"):format(h.url("/item/*")))
    assert.equal(0, code)
    assert.same({ h.url("/items?page=1"), h.url("/items?page=2") }, urls_of(out))
  end)

  it("refuse a bad pattern, naming it", function()
    local code, _, err = crawl("--deny 're:item/(['")
    assert.equal(2, code)
    assert.matches("deny%.urls: bad regular expression", err)
  end)
end)
