-- A sitemap-driven crawl: read robots.txt's Sitemap lines (or the URLs given),
-- walk sitemap indexes and gzipped sitemaps, and fetch every page they list, newest
-- first. No links are followed.
--
--   luacrawl run examples/sitemap_crawl.lua SITE_URL [SITEMAP_URL...]
--
-- One JSON line per page: url, status, lastmod, title.
--
-- Scope: sitemaps on SITE_URL's host only (sitemaps.org: a sitemap lists URLs of its
-- own host), pages on it and its subdomains (allow.hosts); each sitemap is read once.
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
local host = lc.url.host(site)
if not origin or not host then
  io.stderr:write("sitemap_crawl.lua: SITE_URL must be an http(s) URL\n")
  os.exit(2)
end

local function on_site(url)
  return lc.url.host(url) == host
end

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

-- One sitemap, parsed; nil when skipped (said on stderr). Sitemaps are fetched
-- here, not by the crawl, so their scope is checked here.
local function read_sitemap(url)
  if not on_site(url) then
    io.stderr:write(("skipping sitemap %s: not on %s\n"):format(lc.url.redact(url), host))
    return nil
  end
  local res, err = lc.fetch(url)
  local sm, perr
  if res and res.status == 200 then sm, perr = sitemap.parse(res.body) end
  if not sm then
    io.stderr:write(("skipping sitemap %s: %s\n"):format(lc.url.redact(url), tostring(err or perr or res.status)))
  end
  return sm
end

-- Read sitemaps (following indexes, at most 1000 sitemaps, each once however often
-- indexes list it) and add their pages, newest lastmod first. The crawl's scope
-- (allow, below) refuses pages of other hosts.
local function start(add)
  local queue, pages, read, visited = sitemap_urls(), {}, 0, {}
  while #queue > 0 and read < 1000 do
    local url = table.remove(queue, 1)
    local key = lc.url.normalize(url) or url
    if not visited[key] then
      visited[key] = true
      read = read + 1
      local sm = read_sitemap(url)
      if sm and sm.kind == "index" then
        for _, e in ipairs(sm.entries) do queue[#queue + 1] = e.loc end
      elseif sm then
        for _, e in ipairs(sm.entries) do pages[#pages + 1] = e end
      end
    end
  end
  table.sort(pages, function(a, b) return (a.lastmod or "") > (b.lastmod or "") end)
  for _, e in ipairs(pages) do add({ url = e.loc, meta = { lastmod = e.lastmod } }) end
end

crawl.run({
  start = start,
  allow = { hosts = { host } },
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
