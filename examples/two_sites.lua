-- Two sites, each with its own politeness: a documentation site crawled gently (one
-- request at a time, a quarter second apart, at most 500 pages) and a shop that
-- takes four requests at once, with a header of its own. One spec, one crawl.
--
--   luacrawl run examples/two_sites.lua DOCS_URL SHOP_URL [--depth N]
--
-- Prints one line per page: "host status url"; stats on stderr.
local crawl = require "luacrawl.crawl"
local lc = require "luacrawl"

local docs, shop = arg[1], arg[2]
if not docs or not shop then
  io.stderr:write("usage: luacrawl run two_sites.lua DOCS_URL SHOP_URL [--depth N]\n")
  os.exit(2)
end
local depth = arg[3] == "--depth" and tonumber(arg[4]) or 2

crawl.run({
  start = { docs, shop },
  progress = false,
  max_depth = depth,
  hosts = {
    [lc.url.host(docs)] = { per_host = 1, delay = 0.25, max_pages = 500 },
    [lc.url.host(shop)] = { per_host = 4, headers = { ["Accept-Language"] = "en" } },
  },
  parse = function(page)
    io.stdout:write(("%s %d %s\n"):format(page.request.key, page.status, page.url))
    page:follow_links()
  end,
})
