-- Scrape a paginated listing: follow "next" links, open each item's detail page,
-- and write one record per item.
--
--   luacrawl run examples/scrape_items.lua URL [OUTPUT]
--
-- URL is the first listing page (the fixture server's /items?page=1 has the
-- markup below); OUTPUT defaults to JSON Lines on stdout (.csv for CSV).
local crawl = require "luacrawl.crawl"

local start, output = arg[1], arg[2] or "-"
if not start then
  io.stderr:write("usage: luacrawl run scrape_items.lua URL [OUTPUT]\n")
  os.exit(2)
end

local function detail(page)
  page:emit({
    name = page:css1("h1::text"),
    description = page:css1("p.desc::text"),
    price = page.meta.price,
    url = page.url,
  })
end

local function listing(page)
  for _, item in ipairs(page:css("div.item")) do
    page:follow(item:css1("a.detail"), {
      callback = detail,
      meta = { price = tonumber(item:css1("span.price::text")) },
    })
  end
  page:follow(page:css("a.next")) -- the next listing page, parsed by this function
end

local stats = crawl.run({
  start = { start },
  parse = listing,
  output = output,
  fields = { "name", "price", "description", "url" }, -- CSV column order
  concurrency = 8,
  per_host = 4,
})
io.stderr:write(("%d items\n"):format(stats.items))
