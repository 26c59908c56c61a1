-- A sitemap-driven crawl: read robots.txt's Sitemap lines (or the URLs given),
-- walk sitemap indexes and gzipped sitemaps, and fetch every page they list, newest
-- first. No links are followed.
--
--   luacrawl run examples/sitemap_crawl.lua SITE_URL [SITEMAP_URL...]
--
-- One JSON line per page: url, status, lastmod, title.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local robots = require "luacrawl.robots"
local sitemap = require "luacrawl.sitemap"

local site = arg[1]
if not site then
  io.stderr:write("usage: luacrawl run sitemap_crawl.lua SITE_URL [SITEMAP_URL...]\n")
  os.exit(2)
end
local origin = site:match("^(https?://[^/]+)")

-- Sitemaps to read: those named, else robots.txt's, else /sitemap.xml.
local function sitemap_urls()
  local list = {}
  for i = 2, #arg do list[#list + 1] = arg[i] end
  if #list > 0 then return list end
  local res = lc.fetch(origin .. "/robots.txt")
  if res and res.status == 200 then list = robots.parse(res.body):sitemaps() end
  if #list == 0 then list = { origin .. "/sitemap.xml" } end
  return list
end

-- Read sitemaps (following indexes, at most 1000 sitemaps) and add their pages,
-- newest lastmod first.
local function start(add)
  local queue, pages, read = sitemap_urls(), {}, 0
  while #queue > 0 and read < 1000 do
    local url = table.remove(queue, 1)
    read = read + 1
    local res, err = lc.fetch(url)
    local sm, perr
    if res and res.status == 200 then sm, perr = sitemap.parse(res.body) end
    if not sm then
      io.stderr:write(("skipping sitemap %s: %s\n"):format(url, tostring(err or perr or res.status)))
    elseif sm.kind == "index" then
      for _, e in ipairs(sm.entries) do queue[#queue + 1] = e.loc end
    else
      for _, e in ipairs(sm.entries) do pages[#pages + 1] = e end
    end
  end
  table.sort(pages, function(a, b) return (a.lastmod or "") > (b.lastmod or "") end)
  for _, e in ipairs(pages) do add({ url = e.loc, meta = { lastmod = e.lastmod } }) end
end

crawl.run({
  start = start,
  max_depth = 0, -- only what the sitemaps list
  per_host = 4,
  output = "-",
  parse = function(page)
    page:emit({
      url = page.url, status = page.status, lastmod = page.meta.lastmod,
      title = page:is_html() and page:html():title() or nil,
    })
  end,
})
