-- A listing crawled to its detail pages, the price carried to the detail's item in
-- meta; the callback is named, so a state or a fleet can keep its requests. The same
-- spider in Scrapy 2.8 is 28 lines.  Run: luacrawl run listing_detail.lua URL [OUTPUT]
local crawl = require "luacrawl.crawl"

local M = {}

function M.listing(page)
  for _, item in ipairs(page:css("div.item")) do
    page:follow(item:css1("a.detail"), { callback = "detail",
      meta = { price = tonumber(item:css1("span.price::text")) } })
  end
  page:follow(page:css("a.next"))
end

function M.detail(page)
  page:emit({ name = page:css1("h1::text"), price = page.meta.price,
    description = page:css1("p.desc::text"), url = page.url })
end

function M.spec(start, output)
  return { start = start, parse = M.listing, callbacks = { detail = M.detail }, output = output or "-",
    fields = { "name", "price", "description", "url" }, concurrency = 8, per_host = 4 }
end

if ... == "listing_detail" then return M end -- required by its busted spec
local stats = crawl.run(M.spec(assert(arg[1], "usage: listing_detail.lua URL [OUTPUT]"), arg[2]))
io.stderr:write(("%d items\n"):format(stats.items))
