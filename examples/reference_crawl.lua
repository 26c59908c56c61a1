-- A reference section crawled whole: every page under the start URL's folder, an
-- item each; a 503 or 429 backs the host off (as long as Retry-After asks) and the
-- page is tried again. The same spider in Scrapy 2.8 is 29 lines (and needs a
-- middleware of its own for Retry-After).
--   luacrawl run examples/reference_crawl.lua URL [OUTPUT] [MAX_PAGES]
local crawl = require "luacrawl.crawl"

local M = {}

function M.parse(page)
  page:emit({ url = page.url, title = page:css1("title::text"), headings = page:css("h1::text, h2::text") })
  page:follow_links()
end

function M.spec(root, output, max_pages)
  return {
    start = root, parse = M.parse, output = output or "-", fields = { "url", "title", "headings" },
    allow = { urls = { root:match("^(.*/)") .. "**" } }, max_pages = tonumber(max_pages) or 500,
    retries = 4, retry_statuses = { 429, 500, 502, 503, 504 }, max_retry_after = 60,
  }
end

if ... == "reference_crawl" then return M end -- required by its busted spec
local stats = crawl.run(M.spec(assert(arg[1], "usage: reference_crawl.lua URL [OUTPUT] [MAX_PAGES]"), arg[2], arg[3]))
io.stderr:write(("%d pages, %d retries\n"):format(stats.pages, stats.retries))
