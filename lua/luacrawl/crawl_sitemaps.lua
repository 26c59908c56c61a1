-- luacrawl.crawl_sitemaps: the crawl's `sitemaps` option (crawl.lua calls it). The
-- sitemaps of the start URLs' sites (robots.txt's Sitemap: lines, else /sitemap.xml)
-- or the ones given are read, indexes followed, gzipped ones unpacked (sitemap.lua),
-- and the pages they list are queued through Crawler:enqueue, under the same rules as
-- links (scope, depth, seen set, robots.txt), at depth 0 as start URLs are.
--
--   sitemaps = true                      robots.txt's sitemaps of each start origin
--   sitemaps = { "https://s/a.xml", ... } these sitemaps instead (a robots.txt URL
--                                        among them: the sitemaps it lists)
--   sitemaps = { since = "2024-01-01" }   only pages (and sitemaps of an index)
--                                        whose lastmod is that day or later
--
-- Each sitemap is read once however many indexes list it, at most max_sitemaps in a
-- crawl, only when its URL is in the crawl's scope, and no more once the pages
-- fetched and queued fill max_pages. Sitemaps are fetched one at a
-- time per origin, with the crawl's fetch options (user agent, cookies, address
-- policy), outside the frontier's politeness queue. With the crawl's warc archive,
-- each fetch here (sitemaps, and robots.txt when this reads it) is archived as a
-- page's is: request and response records, for every hop.
local lc = require "luacrawl"
local sitemap = require "luacrawl.sitemap"
local robots = require "luacrawl.robots"

local M = {}

M.max_sitemaps = 1000

local Reader = {}
Reader.__index = Reader

-- The option, checked: nil when off, else { urls = {...}, since = "..." }. Raises
-- (level 0) with a message for crawl.run.
function M.check(v)
  if v == nil or v == false then return nil end
  if v == true then return { urls = {} } end
  if type(v) == "string" then v = { v } end
  if type(v) ~= "table" then
    error("crawl.run: sitemaps must be true, a list of sitemap URLs, or a table with since = DATE", 0)
  end
  local o = { urls = {} }
  for k, x in pairs(v) do
    if type(k) == "number" then
      if type(x) ~= "string" then error(("crawl.run: sitemaps[%d] must be a URL (a string)"):format(k), 0) end
    elseif k == "since" then
      if type(x) ~= "string" or not x:match("^%d%d%d%d%-%d%d%-%d%d") then
        error("crawl.run: sitemaps.since must be a date as sitemaps write it, \"YYYY-MM-DD\"", 0)
      end
      o.since = x
    else
      error(("crawl.run: sitemaps: unknown field '%s' (sitemap URLs and since = DATE)"):format(tostring(k)), 0)
    end
  end
  for i, u in ipairs(v) do o.urls[i] = u end
  return o
end

-- The reader of a crawl, or nil when the option is off.
function M.new(crawler, opts)
  if not opts then return nil end
  local st = crawler.stats
  st.sitemaps, st.sitemap_errors, st.sitemap_old = 0, 0, 0
  return setmetatable({ crawler = crawler, opts = opts, visited = {}, origins = {}, read = 0 }, Reader)
end

-- The origin (scheme://host[:port]) of url, nil when it has none.
local function origin_of(url)
  return url:match("^(https?://[^/?#]+)")
end

-- Whether lastmod (W3C datetime; nil: unknown) is before since, compared as the
-- date (and time, when since has one) written.
local function older(lastmod, since)
  return since and lastmod and lastmod:sub(1, #since) < since
end

-- Run fn in a task that keeps the crawl from ending until it is done (as a start
-- function does).
function Reader:task(fn, ...)
  local c = self.crawler
  c.starting = c.starting + 1
  c:background(function(...)
    local ok, err = pcall(fn, self, ...)
    c.starting = c.starting - 1
    c:poke()
    if not ok then error(err, 0) end
  end, ...)
end

-- At the start: the sitemaps given, if any.
function Reader:start()
  if #self.opts.urls > 0 then self:task(self.walk, self.opts.urls) end
end

-- A start URL: its origin's sitemaps are read once its robots.txt is (robots_read),
-- or now when the crawl does not read robots.txt.
function Reader:add_origin(url)
  if #self.opts.urls > 0 then return end
  local norm = lc.url.normalize(url)
  local origin = norm and origin_of(norm)
  if not origin or self.origins[origin] then return end
  self.origins[origin] = "waiting"
  local c = self.crawler
  if c.spec.robots == false then
    self:task(self.from_robots, origin, nil)
  else
    local rb = c.robots[origin]
    if rb and rb.rules then self:robots_read(origin, rb.rules) end
  end
end

-- The crawl read origin's robots.txt (Crawler:fetch_robots).
function Reader:robots_read(origin, rules)
  if self.origins[origin] ~= "waiting" then return end
  self.origins[origin] = "read"
  self:task(self.from_robots, origin, rules)
end

-- The sitemaps robots.txt lists for origin (fetched here when rules is nil), else
-- /sitemap.xml when robots.txt lets it be fetched.
function Reader:from_robots(origin, rules)
  self:walk(self:robots_sitemaps(origin, rules))
end

function Reader:robots_sitemaps(origin, rules)
  local c = self.crawler
  if not rules then
    local res = lc.fetch(origin .. "/robots.txt", c:fetch_opts({
      follow = c.spec.robots_redirects, follow_site = true, max_size = c.spec.max_robots_size, truncate = true,
    }))
    if res and c.warc then c.warc:write(res) end
    rules = res and res.status == 200 and robots.parse(res.body) or robots.allow_all()
  end
  local list = rules:sitemaps()
  if #list > 0 then return list end
  local guess = origin .. "/sitemap.xml"
  if not rules:allowed(c.agent, guess) then return {} end
  self.guessed = self.guessed or {}
  self.guessed[guess] = true
  return { guess }
end

-- Whether more pages could still be crawled: not when the pages launched and queued
-- fill max_pages, whatever more sitemaps would list.
function Reader:wants_pages()
  local c = self.crawler
  local max = c.spec.max_pages
  return not c.stopping and (not max or c.launched + c.frontier:size() + c.waiting_robots < max)
end

-- Read the sitemaps in list, and those their indexes name, breadth first, while the
-- crawl wants pages.
function Reader:walk(list)
  local queue, i, n = {}, 1, #list
  for k, u in ipairs(list) do queue[k] = u end
  local function add(u)
    n = n + 1
    queue[n] = u
  end
  while i <= n and self:wants_pages() do
    local url = queue[i]
    queue[i] = false -- read: let the string go
    i = i + 1
    local sm = self:fetch(url)
    if sm and sm.kind == "robots" then
      for _, u in ipairs(self:robots_sitemaps(sm.origin, sm.rules)) do add(u) end
    elseif sm and sm.kind == "index" then
      for _, e in ipairs(sm.entries) do
        if older(e.lastmod, self.opts.since) then
          self.crawler.stats.sitemap_old = self.crawler.stats.sitemap_old + 1
        else
          add(e.loc)
        end
      end
    elseif sm then
      self:enqueue(sm.entries)
    end
  end
end

function Reader:fail(url, why)
  local c = self.crawler
  c.stats.sitemap_errors = c.stats.sitemap_errors + 1
  c:log(("sitemap %s: %s"):format(lc.url.redact(url), why))
end

-- One sitemap, parsed (a robots.txt: {kind = "robots", origin =, rules =}); nil when it is not read (in scope, new, within the limit) or
-- fails (logged and counted in sitemap_errors).
function Reader:fetch(url)
  local c = self.crawler
  local norm = type(url) == "string" and lc.url.normalize(url)
  if not norm or not origin_of(norm) then return self:fail(tostring(url), "not an http(s) URL") end
  if self.visited[norm] then return nil end
  self.visited[norm] = true
  if not c:in_scope(norm, { url = norm, sitemap = true }) then
    return self:fail(norm, "out of the crawl's scope: not read")
  end
  if self.read >= M.max_sitemaps then
    return self:fail(norm, ("not read: %d sitemaps read already (the limit)"):format(M.max_sitemaps))
  end
  self.read = self.read + 1
  local res, err = lc.fetch(norm, c:fetch_opts({
    follow = c.spec.max_redirect, follow_site = true, max_size = sitemap.max_bytes,
  }))
  if not res then return self:fail(norm, tostring(err)) end
  if c.warc then c.warc:write(res) end
  local origin = origin_of(norm)
  if norm == origin .. "/robots.txt" then -- given among the sitemaps: the ones it lists
    local rules = res.status == 200 and robots.parse(res.body) or robots.allow_all()
    return { kind = "robots", origin = origin, rules = rules }
  end
  if res.status ~= 200 then
    -- /sitemap.xml was a guess: its absence is no error.
    if self.guessed and self.guessed[url] and res.status == 404 then return nil end
    return self:fail(norm, ("status %d"):format(res.status))
  end
  local sm, perr = sitemap.parse(res.body)
  if not sm then return self:fail(norm, perr.message) end
  c.stats.sitemaps = c.stats.sitemaps + 1
  return sm
end

-- A sitemap's pages into the crawl, the newest lastmod first.
function Reader:enqueue(entries)
  local c, since, pages = self.crawler, self.opts.since, {}
  for _, e in ipairs(entries) do
    if older(e.lastmod, since) then
      c.stats.sitemap_old = c.stats.sitemap_old + 1
    else
      pages[#pages + 1] = e
    end
  end
  table.sort(pages, function(a, b) return (a.lastmod or "") > (b.lastmod or "") end)
  for _, e in ipairs(pages) do
    if c.stopping then return end
    c:enqueue({ url = e.loc, depth = 0, meta = { lastmod = e.lastmod } })
  end
end

return M
