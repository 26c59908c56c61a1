-- site_crawl.lua: the crawl the example hosts drive (poll_host.c, items_host.c).
--   site_crawl.lua START_URL [OUTPUT [MAX_PAGES]]
-- One record per page (url, title) to OUTPUT (JSON Lines; "" for none) and to the host's
-- lc_engine_on_item callback. The host may push more URLs into the running crawl
-- with lc_engine_call(e, "add_url", "\"http://...\"", &result), and the script asks
-- the host what to keep when it registered a C function `keep`.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"

local start, output, max_pages = arg[1], arg[2], tonumber(arg[3])
if output == "" then output = nil end

local crawler = crawl.new {
  start = { start },
  output = output,
  max_pages = max_pages,
  quiet = os.getenv("SITE_CRAWL_VERBOSE") == nil,
  progress = false,
  parse = function(page)
    page:follow(page:css("a::attr(href)"))
    local item = { url = page.url, title = page:css1("title::text") }
    if lc.host.keep and not lc.host.keep(item) then return end
    page:emit(item)
  end,
}

lc.host.expose("add_url", function(url)
  local queued, why = crawler:enqueue({ url = url, depth = 0 })
  return { queued = queued, why = why }
end)

local stats = crawler:run()
if lc.host.done then lc.host.done({ pages = stats.pages, items = stats.items }) end
