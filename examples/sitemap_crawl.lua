-- A sitemap-driven crawl: read robots.txt's Sitemap lines (or the sitemaps given),
-- walk sitemap indexes and gzipped sitemaps, and fetch every page they list, newest
-- first. No links are followed.
--
--   luacrawl run examples/sitemap_crawl.lua SITE_URL [SITEMAP_URL...]
--
-- One JSON line per page: url, status, lastmod, title.
--
-- The crawl's sitemaps option does the work (docs/crawl.md, "Sitemaps"): a sitemap
-- is read once however many indexes list it, and only on SITE_URL's host (the
-- crawl's scope, allow below: sitemaps.org has a sitemap list URLs of its own host);
-- the pages it lists go through the same scope rules as links.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"

local site = arg[1]
if not site then
  io.stderr:write("usage: luacrawl run sitemap_crawl.lua SITE_URL [SITEMAP_URL...]\n")
  os.exit(2)
end
local origin = site:match("^(https?://[^/]+)")
local host = lc.url.host(site)
if not origin or not host then
  io.stderr:write("sitemap_crawl.lua: SITE_URL must be an http(s) URL\n")
  os.exit(2)
end

-- The sitemaps named, else those robots.txt lists (else /sitemap.xml).
local sitemaps = { origin .. "/robots.txt" }
if arg[2] then sitemaps = { unpack(arg, 2) } end

crawl.run({
  start = {}, -- only what the sitemaps list
  sitemaps = sitemaps,
  allow = { hosts = { host } },
  max_depth = 0,
  per_host = 4,
  output = "-",
  parse = function(page)
    page:emit({
      url = page.url, status = page.status, lastmod = page.meta.lastmod,
      title = page:is_html() and page:html():title() or nil,
    })
  end,
})
