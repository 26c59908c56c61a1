-- busted spec of examples/reference_crawl.lua, its spec run on a page made from a body.
--   luajit /usr/bin/busted --cpath='build/lua/?.so' --lpath='examples/?.lua' examples/reference_crawl_spec.lua
local crawl = require "luacrawl.crawl"
local policy = require "reference_crawl"

describe("reference_crawl", function()
  local spec = policy.spec("http://docs.test/ref/index.html")

  it("emits the page's title and headings and follows its links", function()
    local page = crawl.page({ url = "http://docs.test/ref/index.html", spec = spec, body = [[
<title>Reference</title><h1>Reference</h1><h2>Types</h2><h2>Calls</h2>
<a href="types.html">types</a> <a href="/ref/calls.html">calls</a>]] })
    spec.parse(page)
    assert.same({ { url = "http://docs.test/ref/index.html", title = "Reference",
      headings = { "Reference", "Types", "Calls" } } }, page.items)
    assert.same({ "http://docs.test/ref/types.html", "http://docs.test/ref/calls.html" }, page.followed)
  end)

  it("keeps to the section and retries a 503", function()
    assert.same({ "http://docs.test/ref/**" }, spec.allow.urls)
    assert.truthy(spec.retries > 0)
    local retried = false
    for _, s in ipairs(spec.retry_statuses) do retried = retried or s == 503 end
    assert.is_true(retried)
  end)
end)
