-- luacrawl.crawl_render: which requests of a crawl are rendered in the headless
-- browser (lc.render, render.lua) rather than fetched, and with which options. Loaded
-- only by a spec that sets render or browser (spec_check.optional): a crawl without
-- them reads one field set false (crawler.render) per request.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local spec_check = require "luacrawl.spec_check"
local crawl_scope = require "luacrawl.crawl_scope"

local M = {}

spec_check.nested.render = { "hosts", "urls" }
spec_check.nested.browser = { "path", "args", "render_concurrency", "max_memory", "hang_timeout" }

local Render = {}
Render.__index = Render

-- The options of every render of spec s: render_options, with the crawl's wait
-- (network idle), its fetch timeout and its address policy where they say nothing.
local function options_of(s)
  local o = {}
  for k, v in pairs(s.render_options or {}) do o[k] = v end
  if o.wait == nil then o.wait = "networkidle" end
  if o.timeout == nil and type(s.fetch) == "table" then o.timeout = s.fetch.timeout end
  if o.public_only == nil then o.public_only = s.public_only end
  if o.deny_networks == nil then o.deny_networks = s.deny_networks end
  if s.warc then o.archive = true end -- the document's exchange, for the archive
  return o
end

-- An error a check of render.lua raised, in crawl.run's words.
local function refuse(field, err)
  local msg = tostring(err):gsub("^[^:]+:%d+: ", ""):gsub("^%a+: ", "")
  error(("crawl.run: %s: %s"):format(field, msg), 0)
end

-- Check s.render, s.render_options and s.browser (raises level 0, for
-- crawl_spec.check). browser's settings apply from here on (lc.browser: the browsers
-- started from now on).
function M.check(s)
  local r = s.render
  if r ~= nil and type(r) ~= "boolean" and type(r) ~= "function" and type(r) ~= "table" then
    error("crawl.run: render must be true, a function(request) -> bool, or {hosts = {...}, urls = {pattern, ...}}", 0)
  end
  if s.render_options ~= nil and type(s.render_options) ~= "table" then
    error("crawl.run: render_options must be a table of lc.render options", 0)
  end
  if type(r) == "table" then
    local ok, err = pcall(crawl_scope.deny, r, "render")
    if not ok then error(tostring(err):gsub("^crawl: ", "crawl.run: "), 0) end
  end
  local render = require "luacrawl.render"
  local ok, err = pcall(render.check_options, options_of(s))
  if not ok then refuse("render_options", err) end
  if s.render_options then
    ok, err = pcall(core.check_networks, s.render_options.deny_networks, "crawl.run: render_options")
    if not ok then error(tostring(err), 0) end
  end
  if s.browser ~= nil then
    ok, err = pcall(render.browser, s.browser)
    if not ok then refuse("browser", err) end
  end
end

-- The crawler's renderer (crawler.render), or nil when the spec renders nothing (no
-- render, and no host of spec.hosts with a render of its own).
function M.new(crawler)
  local s = crawler.spec
  local r = s.render or false
  local hosts = crawler.hosts and crawler.hosts.renders and crawler.hosts
  if not r and not hosts then return nil end
  local when = r
  if type(r) == "table" then
    local match = crawl_scope.deny(r, "render")
    when = function(req) return match(req.url, req) end
  end
  local opts = options_of(s)
  -- The crawl's cookie jar (none with cookies = false): the page gets its cookies,
  -- and those it sets come back to it (render.lua).
  if opts.cookies == nil then opts.cookies = crawler:fetch_opts().cookies end
  -- The crawl's User-Agent on every request of the page, the one robots.txt is
  -- matched by (Render:options has the document's headers).
  if opts.user_agent == nil then opts.user_agent = crawler:fetch_opts().user_agent or crawler.agent end
  return setmetatable({ crawler = crawler, when = when, opts = opts, hosts = hosts }, Render)
end

-- Whether req is rendered: a GET without a body (what a browser's navigation is)
-- that its host's own render (spec.hosts) chooses, else the spec's.
function Render:wants(req)
  if (req.method ~= nil and req.method ~= "GET") or req.body ~= nil then return false end
  local hosts = self.hosts
  if hosts then
    local own = hosts:of(req.key)
    if own and own.render ~= nil then return own.render end
  end
  local when = self.when
  if not when then return false end
  if when == true then return true end
  return when(req) and true or false
end

-- A render that sent n requests to its own host key (its document, each hop of its
-- redirects, its sub-requests) counts as n requests for the host's rate: the host's
-- next request starts no sooner than n x delay after the render ended, where a
-- fetch's waits one delay (the frontier's own rule). Through the frontier's backoff,
-- so that a fleet's other workers wait too. All the requests are counted in
-- stats.render_requests.
local function count_requests(crawler, req, sent)
  local st, key, same = crawler.stats, req.key, 0
  st.render_requests = (st.render_requests or 0) + #sent
  for _, url in ipairs(sent) do
    if crawler:host_key(url) == key then same = same + 1 end
  end
  local delay = crawler.frontier:delay_of(key)
  if same > 1 and delay > 0 then crawler.frontier:backoff(key, lc.now() + same * delay) end
end

-- The options of req's render: the renderer's, with the headers a fetch of req would
-- send (fetch.headers, its host's, its own) on its document, unless render_options
-- gives headers of its own.
function Render:options(req)
  local o = self.opts
  if o.headers ~= nil then return o end
  local crawler = self.crawler
  local own = crawler.hosts and crawler.hosts:of(req.key)
  local headers = crawler:request_headers(req, own and own.headers)
  if headers == nil or next(headers) == nil then return o end
  local own = {}
  for k, v in pairs(o) do own[k] = v end
  own.headers = headers
  return own
end

-- req rendered: the response as a fetch's (res.time.total the render's time, as the
-- page record's elapsed reads it), or nil and the error (kind render, timeout, ...).
function Render:render(req)
  local started = lc.now()
  local res, err = lc.render(req.url, self:options(req))
  local crawler = self.crawler
  crawler.stats.rendered = (crawler.stats.rendered or 0) + 1
  count_requests(crawler, req, (res or err).requests or {})
  if not res then return nil, err end
  rawset(res, "time", { total = lc.now() - started })
  return res
end

return M
