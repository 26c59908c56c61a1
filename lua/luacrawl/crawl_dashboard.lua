-- luacrawl.crawl_dashboard: the crawl's `dashboard` (luacrawl crawl --dashboard): the
-- server (dashboard.lua) opened with the crawler, the stats published each second with
-- the live fields the page shows (hosts, frontier, depths, the latest errors and items),
-- and the commands acted on: pause, resume, stop (as SIGINT). Loaded only by a spec that
-- sets `dashboard` (spec_check.optional); crawl.lua calls it only when crawler.watch is set.
local lc = require "luacrawl"
local dashboard = require "luacrawl.dashboard"
local spec_check = require "luacrawl.spec_check"
local calls = require "luacrawl.crawl_calls"
local pause = require "luacrawl.crawl_pause"

local M = {}

-- Hosts published (the busiest; those /metrics labeled always, the rest summed as
-- "other"), the latest errors and items kept, seconds between publishes and between
-- looks at the commands.
M.max_hosts, M.latest = 50, 20
M.publish_interval, M.command_interval = 1, 0.1
M.default_listen = "127.0.0.1:8099"

spec_check.nested.dashboard = { "listen", "token" }

local function now()
  return lc.now()
end

-- spec.dashboard: "[HOST:]PORT", a port number, true (M.default_listen) or {listen =,
-- token =}; false is off. Becomes {listen =, token =} or nil.
function M.check(s)
  local d = s.dashboard
  if d == false then
    s.dashboard = nil
    return
  end
  if d == true then d = {} end
  if type(d) == "string" or type(d) == "number" then d = { listen = tostring(d) } end
  if type(d) ~= "table" then
    error("crawl.run: dashboard must be \"[HOST:]PORT\", a port, true or {listen =, token =}", 0)
  end
  local listen = d.listen == nil and M.default_listen or d.listen
  if type(listen) == "number" then listen = tostring(listen) end
  if type(listen) ~= "string" then error("crawl.run: dashboard.listen must be \"[HOST:]PORT\"", 0) end
  if d.token ~= nil and (type(d.token) ~= "string" or d.token == "") then
    error("crawl.run: dashboard.token must be a string", 0)
  end
  s.dashboard = { listen = listen, token = d.token }
end

local Watch = {}
Watch.__index = Watch

local function push_latest(list, x)
  list[#list + 1] = x
  if #list > M.latest then table.remove(list, 1) end
end

-- The server opened for crawler (its URL said once on stderr), as crawler.watch; the
-- crawler's emit and report wrapped for this crawler only, to keep the latest items and
-- errors. Raises "dashboard LISTEN: why" when it cannot listen.
function M.attach(crawler)
  local opts = crawler.spec.dashboard
  local srv, err = dashboard.open({ listen = opts.listen, token = opts.token })
  if not srv then error(("dashboard %s: %s"):format(opts.listen, err.message), 0) end
  local w = setmetatable({
    crawler = crawler, srv = srv, hosts = {}, depths = {}, errors = {}, items = {},
  }, Watch)
  crawler.watch = w
  local emit, report = crawler.emit, crawler.report
  crawler.emit = function(c, item, page)
    local ok = emit(c, item, page)
    if ok then push_latest(w.items, item) end
    return ok
  end
  crawler.report = function(c, req, e, fmt)
    if req then
      local kind = lc.is_error(e) and e.kind or "script"
      push_latest(w.errors, { kind = kind, url = lc.url.redact(req.url), message = calls.error_message(e) })
    end
    return report(c, req, e, fmt)
  end
  io.stderr:write("luacrawl: dashboard: open ", srv:url(), "\n")
  return w
end

-- Per page (crawl.lua, only with a dashboard) ------------------------------------------

local function host_of(w, req)
  local h = w.hosts[req.key]
  if not h then
    h = { pages = 0, errors = 0, statuses = {}, error_kinds = {},
      origin = require("luacrawl.crawl_robots").origin_of(req.url) }
    w.hosts[req.key] = h
  end
  return h
end

-- A response (each one, a retried one too).
function Watch:response(req, res)
  local h = host_of(self, req)
  h.pages = h.pages + 1
  h.statuses[res.status] = (h.statuses[res.status] or 0) + 1
  local d = req.depth or 0
  self.depths[d] = (self.depths[d] or 0) + 1
end

-- A request failed for good with err.
function Watch:failed(req, err)
  local h = host_of(self, req)
  h.errors = h.errors + 1
  h.error_kinds[err.kind] = (h.error_kinds[err.kind] or 0) + 1
  push_latest(self.errors, { kind = err.kind, url = lc.url.redact(req.url), message = err.message })
end

-- Commands ------------------------------------------------------------------------------

function Watch:paused_seconds()
  return pause.seconds(self.crawler) or 0
end

function Watch:pause()
  pause.pause(self.crawler, "the dashboard")
end

function Watch:resume()
  pause.resume(self.crawler, "the dashboard")
end

function Watch:stop()
  pause.stop(self.crawler, "the dashboard")
end

-- Publishing ------------------------------------------------------------------------------

local function robots_state(c, h)
  if c.spec.robots == false then return "off" end
  local rb = h and h.origin and c.robots[h.origin]
  if not rb then return nil end
  if rb.pending then return "fetching" end
  if rb.rules and rb.rules.unreachable then return "unreachable" end
  if rb.crawl_delay then return ("fetched, crawl-delay %g"):format(rb.crawl_delay) end
  return "fetched"
end

-- The frontier's host entries: a state's or a fleet's keep theirs in a memory frontier.
local function frontier_hosts(c)
  local f = c.frontier
  return (f.mem or f).hosts or {}
end

local function host_row(w, key, t)
  local c, h = w.crawler, w.hosts[key]
  local fh = frontier_hosts(c)[key]
  return {
    pages = h and h.pages or 0, errors = h and h.errors or 0,
    statuses = h and h.statuses or {}, error_kinds = h and h.error_kinds or {},
    queued = c.frontier:queued_of(key), in_flight = fh and fh.inflight or 0,
    delay = c.frontier:delay_of(key), backoff = fh and math.max(0, fh.backoff_until - t) or 0,
    robots = robots_state(c, h),
  }
end

local function score(w, key, fh)
  local h = w.hosts[key]
  return (h and h.pages + h.errors or 0) + (fh and fh.queue.n + fh.inflight or 0)
end

-- The M.max_hosts busiest host keys (a list kept sorted, busiest first): a pass over
-- the hosts, not a sort of them all.
local function busiest(w)
  local top, fhosts, n = {}, frontier_hosts(w.crawler), 0
  local function consider(key)
    local s = score(w, key, fhosts[key])
    if #top >= M.max_hosts and s <= top[#top][2] then return end
    local i = #top + 1
    while i > 1 and top[i - 1][2] < s do i = i - 1 end
    table.insert(top, i, { key, s })
    if #top > M.max_hosts then top[#top] = nil end
  end
  for key in pairs(w.hosts) do
    n = n + 1
    consider(key)
  end
  for key in pairs(fhosts) do
    if not w.hosts[key] then
      n = n + 1
      consider(key)
    end
  end
  return top, n
end

local function add_into(into, from)
  for k, v in pairs(from) do into[k] = (into[k] or 0) + v end
end

-- hosts: the busiest, those /metrics labeled already (so that their series go on), and
-- the others summed as "other"; and how many there are.
function Watch:host_rows(t)
  local top, total = busiest(self)
  local rows, listed = {}, {}
  for _, e in ipairs(top) do listed[e[1]] = true end
  for key in pairs(self.srv.labeled) do listed[key] = true end
  for key in pairs(listed) do
    if self.hosts[key] or frontier_hosts(self.crawler)[key] then rows[key] = host_row(self, key, t) end
  end
  local other, any = { pages = 0, errors = 0, queued = 0, statuses = {}, error_kinds = {} }, false
  for key, h in pairs(self.hosts) do
    if not rows[key] then
      any = true
      other.pages, other.errors = other.pages + h.pages, other.errors + h.errors
      add_into(other.statuses, h.statuses)
      add_into(other.error_kinds, h.error_kinds)
    end
  end
  if any then rows.other = other end
  return rows, total
end

-- The stats the dashboard is given: the crawl's, and the live fields of docs/toolkit.md.
function Watch:view()
  local c, t = self.crawler, now()
  local v = {}
  for k, x in pairs(c.stats) do v[k] = x end
  v.elapsed = t - c.started
  v.pages_per_s = v.pages / math.max(v.elapsed, 1e-9)
  v.frontier = c.frontier:size() + c.waiting_robots
  v.in_flight = c.active
  v.retry_waiting = c.delayed
  v.paused = c.paused
  v.paused_seconds = self:paused_seconds()
  v.depths = self.depths
  v.latest_errors, v.latest_items = self.errors, self.items
  v.hosts, v.hosts_total = self:host_rows(t)
  return v
end

function Watch:publish()
  self.srv:publish(self:view())
end

function Watch:take_commands()
  for _, cmd in ipairs(self.srv:commands()) do
    if cmd == "pause" or cmd == "resume" or cmd == "stop" then self[cmd](self) end
  end
end

-- The task (one of the run's helpers): commands looked at often, stats published each
-- second. Cancelled at the run's end, when the server closes.
function Watch:run()
  local _, err = pcall(function()
    local due = 0
    while true do
      self:take_commands()
      if now() >= due then
        self:publish()
        due = now() + M.publish_interval
      end
      lc.sleep(M.command_interval)
    end
  end)
  self.srv:close()
  error(err, 0)
end

-- The helper task of a run: crawl.lua keeps it with the others.
function Watch:start()
  return lc.spawn(self.run, self)
end

return M
