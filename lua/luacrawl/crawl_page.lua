-- luacrawl.crawl_page: the page a crawl's parse is given, one per response (crawl.lua's
-- Crawler:make_page): its request's and response's fields, the selectors
-- (css/css1/xpath/links/text/json), and page:follow/page:emit, which hand links and
-- items to page.crawler (its filter, admit, admit_link, scoped and emit).
local lc = require "luacrawl"
local core = require "luacrawl.core"
local json_parse = core.json_parse
local is_link_set = lc.html.is_link_set
local check_request = require("luacrawl.crawl_calls").check_request
local elapsed, response_header = lc._elapsed, lc._header

-- A page's body (and a meta table, when its request had none) is made on first use:
-- a crawl that only follows links never turns the body into a Lua string. Its key,
-- referrer, elapsed and headers are read from its request and response (a smaller
-- table; a response's headers are made on first use too, init.lua).
local Page = {}
Page.__index = function(page, k)
  local m = Page[k]
  if m ~= nil then return m end
  if k == "key" or k == "referrer" then
    local req = rawget(page, "request")
    return req and req[k]
  elseif k == "elapsed" then
    local res = rawget(page, "response")
    return res and elapsed(res)
  elseif k == "headers" then
    local res = rawget(page, "response")
    local headers = res and res.headers
    rawset(page, "headers", headers)
    return headers
  elseif k == "body" then
    local res = rawget(page, "response")
    local body = res and res.body
    rawset(page, "body", body)
    return body
  elseif k == "meta" then
    local meta = {}
    rawset(page, "meta", meta)
    return meta
  end
end

-- Calls made for the crawl (follow_links here, crawl.lua's default parse, cli_crawl's
-- record) name Page's methods (Page.html(page)): page:html() would look them up
-- through Page.__index, a function call each.
local Response = lc.Response

function Page:html()
  return Response.html(self.response)
end

-- page.headers[name] (name in lower case), without making the headers table of a
-- page that has not made it: its response's header (a Content-Type, read for every
-- page of a crawl).
function Page:header(name)
  if rawget(self, "headers") == nil and getmetatable(self) == Page then
    local res = rawget(self, "response")
    return res and response_header(res, name)
  end
  local h = self.headers
  return h and h[name]
end

function Page:is_html()
  local ct = Page.header(self, "content-type")
  if ct then return ct:find("html", 1, true) ~= nil end
  return self.body:sub(1, 512):lower():find("<html", 1, true) ~= nil
end

function Page:css(sel)
  return self:html():css(sel)
end

function Page:css1(sel)
  return self:html():css1(sel)
end

function Page:xpath(expr)
  return self:html():xpath(expr)
end

function Page:links(opts)
  return self:html():links(opts)
end

-- The text a reader sees: the document's text content, whitespace squashed.
function Page:text()
  local body = self:html():css1("body") or self:html():css1("html")
  if not body then return "" end
  return (body:text():gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

function Page:json()
  return json_parse(self.body)
end

-- Follow links: a URL, a node (its href or src), or a list of either; relative
-- URLs are resolved against the page. opts: the request's fields (callback, errback,
-- meta, priority, dont_filter, method, headers, body, dedupe_key), checked by name
-- once per call (crawl_calls.check_request). Returns the number of requests queued.
local NO_OPTS = {} -- read only

-- Queue url (through the rules: the filter's answer was why) as a link of page.
local function queue_link(page, crawler, url, why, depth, opts)
  if opts == NO_OPTS and why == nil then return crawler:admit_link(url, depth, page.url) end
  local req = { url = url, depth = depth, referrer = page.url }
  for k, v in pairs(opts) do req[k] = v end
  if why == "scope" and not crawler:scoped(url, req) then return false end
  return crawler:admit(req)
end

function Page:follow(what, opts)
  if opts == nil then
    opts = NO_OPTS -- no table per call
  else
    local ok, err = check_request(opts, "follow")
    if not ok then error(err, 2) end
  end
  if not is_link_set(what) and (type(what) ~= "table" or what.tag) then what = { what } end
  local crawler, n, i = self.crawler, 0, 1
  local filter, base, depth, dont_filter = crawler.filter, self.url, self.depth + 1, opts.dont_filter
  -- The filter takes the list (or the link set, whose links stay in C) up to the next
  -- link that passes the rules: those that fail them (most of a page's: duplicates)
  -- cost no Lua string.
  while not crawler.refuse_new do
    local url, nexti, why = filter:next(what, i, base, depth, dont_filter)
    if url == nil then break end
    if url == false then -- a node: its href, else its src
      local item = what[nexti]
      local href = item:attr("href") or item:attr("src")
      url, why = nil, nil
      if href then url, why = filter:check(href, depth, dont_filter, base) end
      nexti = nexti + 1
    end
    if url and queue_link(self, crawler, url, why, depth, opts) then n = n + 1 end
    i = nexti
  end
  return n
end

-- Follow every link of the page, as page:follow(page:links(), opts) does; faster:
-- the links are checked in C, and no Lua string is made for those not followed.
function Page:follow_links(opts)
  if opts ~= nil then
    local ok, err = check_request(opts, "follow")
    if not ok then error(err, 2) end
  end
  local doc = Page.html(self)
  local link_set = doc.link_set
  local set = link_set and link_set(doc)
  return Page.follow(self, set or doc:links(), opts)
end

-- The parse of a crawl with spec.follow (CSS selectors, crawl_spec.lua checked them)
-- and no parse: only the links of the elements they match (their href, else their
-- src), or the values a selector ending in ::attr(...) gives.
function Page.follow_selected(selectors)
  return function(page)
    if not Page.is_html(page) then return end
    for _, sel in ipairs(selectors) do Page.follow(page, Page.css(page, sel)) end
  end
end

function Page:emit(item)
  return self.crawler:emit(item, self)
end

return Page
