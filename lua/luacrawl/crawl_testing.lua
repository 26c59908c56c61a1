-- luacrawl.crawl_testing: crawl.page{...}, a page made from a URL and a body, on
-- which a spec's parse runs as in a crawl, with no network: page:emit collects
-- items in page.items, page:follow the requests it would queue in page.requests (and
-- their URLs in page.followed: absolute and normalized, each once, as the crawl's
-- filter gives them; the scope, depth and robots.txt are not applied: they belong to
-- the crawl, not to parse). With spec = a crawl spec, checked as crawl.run checks it,
-- its normalize, on_request and on_item apply as in a crawl.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local report = require "luacrawl.crawl_report"
local calls = require "luacrawl.crawl_calls"
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
  local kept, why = calls.apply_hook(self.spec.on_item, item, page)
  if not kept then
    local dropped = page.dropped_items
    dropped[#dropped + 1] = { item = item, why = why or "on_item" }
    return false
  end
  local items = page.items
  items[#items + 1] = kept
  return true
end

function Collector:admit_link(url, depth, page_url)
  return self:admit({ url = url, depth = depth, referrer = page_url })
end

function Collector:admit(req)
  req.key = req.key or lc.url.host(req.url)
  local given, kept, why = req, calls.apply_hook(self.spec.on_request, req)
  if not kept then
    local dropped = self.dropped
    dropped[#dropped + 1] = { request = given, why = why or "on_request" }
    return false, "dropped"
  end
  if kept ~= given then
    local ok, err = calls.check_request(kept, "on_request")
    if not ok then error(err, 0) end
  end
  local list, urls = self.requests, self.followed
  list[#list + 1] = kept
  urls[#urls + 1] = kept.url
  return true
end

function Collector:scoped(url)
  return url
end

function Collector:callback(name)
  local fn = self.spec.callbacks and self.spec.callbacks[name]
  if not fn then error(("no callback named '%s' in the spec's callbacks"):format(name), 0) end
  return fn
end

-- The spec given, checked as crawl.run checks it (a copy: its hooks made one
-- function each); {} when none.
local function checked_spec(spec, url)
  if spec == nil then return {} end
  local copy = {}
  for k, v in pairs(spec) do copy[k] = v end
  if copy.start == nil and copy.from_warc == nil then copy.start = url end
  local ok, s = pcall(require("luacrawl.crawl_spec").check, copy, function() return {} end)
  if not ok then error((tostring(s):gsub("^[^:]*:%d+: ", "")), 3) end
  return s
end

-- A body with no charset in its headers, no byte order mark and no <meta> naming
-- one is read as UTF-8 (what a test's text is), not as windows-1252, the web's
-- default for a page that says nothing.
local function default_charset(res, body)
  local doc = res:html()
  if rawget(doc, "_charset") or body:find("^\239\187\191") or body:find("^\254\255")
    or body:find("^\255\254") then
    return
  end
  local head = body:sub(1, 4096):lower()
  if head:find("<meta[^>]-charset") then return end
  rawset(doc, "_charset", "utf-8")
end

-- crawl.page{ url = , body = "", status = 200, headers = {...}, depth = 0, meta = {},
-- spec = }
function M.page(t)
  if type(t) ~= "table" or type(t.url) ~= "string" then
    error("crawl.page: expected a table with url (and body, status, headers)", 2)
  end
  local spec = checked_spec(t.spec, t.url)
  local headers = setmetatable({}, Headers)
  for k, v in pairs(t.headers or {}) do headers[k:lower()] = v end
  local body = t.body or ""
  local res = setmetatable({
    status = t.status or 200, url = t.url, headers = headers, body = body, size = #body,
    time = { total = 0 },
  }, lc.Response)
  default_charset(res, body)
  local followed, requests, dropped = {}, {}, {}
  local crawler = setmetatable({
    followed = followed, requests = requests, dropped = dropped, spec = spec,
    filter = core.crawl.filter({ seen = lc.seen(), stats = report.new(), scope = "any", normalize = spec.normalize }),
  }, Collector)
  return setmetatable({
    url = t.url, request = { url = t.url, depth = t.depth or 0 }, status = res.status, headers = headers,
    depth = t.depth or 0, meta = t.meta, response = res, crawler = crawler,
    items = {}, followed = followed, requests = requests, dropped = dropped, dropped_items = {},
  }, Page)
end

return M
