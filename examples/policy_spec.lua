-- busted spec of examples/policy.lua: its parse on a page made from a body.
--   luajit /usr/bin/busted --cpath='build/lua/?.so' --lpath='examples/?.lua' examples/policy_spec.lua
local crawl = require "luacrawl.crawl"
local policy = require "policy"

describe("policy.parse", function()
  local body = [[<html><body>
<div class="item"><a class="detail" href="/items/1">One</a> <span class="price">3</span></div>
<div class="item"><a class="detail" href="/items/2">Two</a> <span class="price">5</span></div>
<a class="next" href="/items?page=2">next</a></body></html>]]

  it("emits one record per item and follows the next page", function()
    local page = crawl.page({ url = "http://shop.test/items?page=1", body = body,
      headers = { ["content-type"] = "text/html" } })
    policy.parse(page)
    assert.same({
      { name = "One", price = 3, url = "http://shop.test/items?page=1" },
      { name = "Two", price = 5, url = "http://shop.test/items?page=1" },
    }, page.items)
    assert.same({ "http://shop.test/items?page=2" }, page.followed)
  end)
end)
