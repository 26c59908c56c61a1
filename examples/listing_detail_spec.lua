-- busted spec of examples/listing_detail.lua, its spec run on pages made from bodies.
--   luajit /usr/bin/busted --cpath='build/lua/?.so' --lpath='examples/?.lua' examples/listing_detail_spec.lua
local crawl = require "luacrawl.crawl"
local policy = require "listing_detail"

describe("listing_detail", function()
  local spec = policy.spec("http://shop.test/items?page=1")

  it("follows each item's detail page with its price, and the next listing page", function()
    local page = crawl.page({ url = "http://shop.test/items?page=1", spec = spec, body = [[
<div class="item"><h2>One</h2> <span class="price">3.50</span> <a class="detail" href="/item/1">more</a></div>
<a class="next" href="/items?page=2">Next</a>]] })
    spec.parse(page)
    local detail, next_page = page.requests[1], page.requests[2]
    assert.same({ "http://shop.test/item/1", "http://shop.test/items?page=2" }, page.followed)
    assert.equal("detail", detail.callback)
    assert.same({ price = 3.5 }, detail.meta)
    assert.is_nil(next_page.callback)
  end)

  it("emits the detail page's item with the price the listing carried", function()
    local page = crawl.page({ url = "http://shop.test/item/1", meta = { price = 3.5 }, spec = spec,
      body = [[<h1>One – the first</h1><p class="desc">A thing</p>]] })
    spec.callbacks.detail(page)
    assert.same({ { name = "One – the first", price = 3.5, description = "A thing",
      url = "http://shop.test/item/1" } }, page.items)
  end)
end)
