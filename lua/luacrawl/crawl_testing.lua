-- luacrawl.crawl_testing: crawl.page{...}, a page made from a URL and a body, on
-- which a spec's parse runs as in a crawl, with no network: page:emit collects
-- items in page.items, page:follow the URLs it would queue in page.followed
-- (absolute and normalized, each once, as the crawl's filter gives them; the scope,
-- depth and robots.txt are not applied: they belong to the crawl, not to parse).
local lc = require "luacrawl"
local core = require "luacrawl.core"
local report = require "luacrawl.crawl_report"
local Page = require "luacrawl.crawl_page"

local M = {}

-- Header names in any case, as a fetched response's.
local Headers = {
  __index = function(t, k)
    if type(k) == "string" then return rawget(t, k:lower()) end
  end,
}

-- The crawler a test page hands its links and items to.
local Collector = { durable = require("luacrawl.crawl_durable").Memory }
Collector.__index = Collector

function Collector:emit(item, page)
  local items = page.items
  items[#items + 1] = item
  return true
end

function Collector:admit_link(url, _, page_url)
  local list = self.followed
  list[#list + 1] = url
  return true
end

function Collector:admit(req)
  local list = self.followed
  list[#list + 1] = req.url
  return true
end

function Collector:scoped(url)
  return url
end

-- crawl.page{ url = , body = "", status = 200, headers = {...}, depth = 0, meta = {} }
function M.page(t)
  if type(t) ~= "table" or type(t.url) ~= "string" then
    error("crawl.page: expected a table with url (and body, status, headers)", 2)
  end
  local headers = setmetatable({}, Headers)
  for k, v in pairs(t.headers or {}) do headers[k:lower()] = v end
  local body = t.body or ""
  local res = setmetatable({
    status = t.status or 200, url = t.url, headers = headers, body = body, size = #body,
    time = { total = 0 },
  }, lc.Response)
  local followed = {}
  local crawler = setmetatable({
    followed = followed,
    filter = core.crawl.filter({ seen = lc.seen(), stats = report.new(), scope = "any" }),
  }, Collector)
  return setmetatable({
    url = t.url, request = { url = t.url, depth = t.depth or 0 }, status = res.status, headers = headers,
    depth = t.depth or 0, meta = t.meta, response = res, crawler = crawler,
    items = {}, followed = followed,
  }, Page)
end

return M
