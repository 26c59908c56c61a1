-- luacrawl.crawl_redis_publish: a fleet worker's numbers published to Redis every
-- few seconds (pages, rate, requests, leases held, errors by kind...: the crawl's
-- wstat:WORKER, frontier_redis_scripts.lua), for `luacrawl dashboard --redis`
-- (dashboard_fleet.lua); and the fleet's control read back in the same script call:
-- pause, resume and stop reach every worker at its next publication. One round trip
-- each M.interval seconds, none per page. Started by crawl_redis.lua's Fleet:start.
-- What `luacrawl report --redis` shows of the worker (report_fleet.lua: its bounded
-- counts and coarse series, crawl_report.saved) goes in the same call, but only every
-- M.report_interval seconds and at the worker's end, in at most M.max_report bytes.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local report = require "luacrawl.crawl_report"
local pause = require "luacrawl.crawl_pause"

local M = {}

-- Seconds between publications; how long a record outlives its worker's last;
-- seconds between the publications of the report, and its bound in bytes.
M.interval = 2
M.keep = 24 * 3600
M.report_interval, M.max_report = 30, 128 * 1024

local FROM = "the fleet's dashboard"

-- The counters of the crawl's stats a worker publishes as they are.
local COUNTERS = { "pages", "requests", "bytes", "retries", "redirects", "robots_denied", "duplicates", "items",
  "parse_errors", "errors_total" }

local Pub = {}
Pub.__index = Pub

-- The publisher of fleet (crawl_redis.lua's) for crawler: its first publication made
-- before the crawl dispatches anything (a fleet paused is so for this worker from its
-- first request on), its task started.
function M.start(fleet, crawler)
  local p = setmetatable({
    fleet = fleet, crawler = crawler, started = os.time(),
    rate_t = lc.now(), rate_pages = 0, rate = 0, report_due = 0,
    stop_seen = false, fleet_paused = false,
  }, Pub)
  p:tick()
  p.task = lc.spawn(Pub.run, p)
  return p
end

-- The worker's numbers now, as JSON. state: "running", "paused", "stopping", or the
-- last words "ended".
function Pub:record(state)
  local c, f, fleet = self.crawler, self.fleet.f, self.fleet
  local st, t = c.stats, lc.now()
  if t - self.rate_t >= 0.5 then
    self.rate = (st.pages - self.rate_pages) / (t - self.rate_t)
    self.rate_t, self.rate_pages = t, st.pages
  end
  local r = {
    worker = fleet.worker, host = fleet.hostname, pid = fleet.pid, started = self.started,
    state = state or (c.stopping and "stopping" or c.paused and "paused" or "running"),
    stop_reason = c.stop_reason, elapsed = t - (c.started or t), rate = self.rate,
    statuses = st.statuses, errors = st.errors,
    in_flight = c.active, leased = f.holding, queued = f.mem:size(),
    paused_seconds = pause.seconds(c), per_host = f.per_host, delay = f.delay,
  }
  for _, k in ipairs(COUNTERS) do r[k] = st[k] end
  return report.json(r)
end

-- The report --------------------------------------------------------------------------

-- The steps a report over M.max_report goes down, one after the other, until it fits:
-- fewer points in its series, hosts by name (the others summed in hosts_other), error
-- samples per kind, shorter URLs and messages. The counts are always kept whole.
local SHRINK = {
  { points = 300, hosts = 100, samples = 5, text = 1000 },
  { points = 150, hosts = 50, samples = 3, text = 300 },
  { points = 60, hosts = 20, samples = 1, text = 120 },
  { points = 20, hosts = 0, samples = 0, text = 0 },
}

-- s cut to at most n bytes, not in the middle of a UTF-8 character.
local function cut(s, n)
  if type(s) ~= "string" or #s <= n then return s end
  return (s:sub(1, n):gsub("[\192-\255][\128-\191]*$", "")) .. "..."
end

local function shrink(t, step)
  t.series = t.series and report.coarse(t.series, step.points)
  t.by_host, t.hosts_other = report.top_hosts(t.by_host, t.hosts_other, step.hosts)
  for kind, list in pairs(t.error_samples or {}) do
    local kept = {}
    for i = 1, math.min(#list, step.samples) do
      kept[i] = { url = cut(list[i].url, step.text), message = cut(list[i].message, step.text) }
    end
    t.error_samples[kind] = kept[1] and kept or nil
  end
  local slowest = {}
  for i, x in ipairs(step.text > 0 and t.slowest or {}) do
    slowest[i] = { url = cut(x.url, step.text), seconds = x.seconds, status = x.status, bytes = x.bytes }
  end
  t.slowest = slowest
end

-- The report of stats st after elapsed seconds as JSON, at most M.max_report bytes
-- (but for statuses and error kinds, which no step drops: a few hundred at most).
function M.report_json(st, elapsed)
  local t = report.saved(st, elapsed)
  local s = core.json_encode(t)
  for _, step in ipairs(SHRINK) do
    if #s <= M.max_report then break end
    shrink(t, step)
    s = core.json_encode(t)
  end
  return s
end

-- One publication; the fleet's control {state, stop} it read, or nil (Redis not
-- there now: the pump says so, and connects again). The report goes with it at the
-- first, every M.report_interval seconds after, and at the end ("ended").
function Pub:publish(state)
  local f = self.fleet.f
  local script = f.conn and f.scripts and f.scripts.publish
  if not script then return nil end
  local c = self.crawler
  local rep = (state == "ended" or lc.now() >= self.report_due) and M.report_json(c.stats, lc.now() - (c.started or lc.now()))
  local r = script:call({ f.prefix .. "stats" }, { f.prefix, self.fleet.worker, self:record(state),
    tostring(math.floor(M.keep * 1000)), rep or nil })
  if type(r) ~= "table" then return nil end
  if rep then self.report_due = lc.now() + M.report_interval end
  return { state = r[1], stop = tonumber(r[2]) or 0 }
end

-- The control acted on: true when it changed something. A stop is a counter: one
-- asked before this worker started is not for it. A pause is a state: a worker that
-- joins a paused fleet waits too; resume undoes only the fleet's own pause.
function Pub:obey(ctl)
  local c = self.crawler
  if not self.stop_seen then
    self.stop_seen = ctl.stop
    -- Said even with -q: a worker that waits from its start looks stuck otherwise.
    if ctl.state == "paused" then
      io.stderr:write(("luacrawl: crawl %s is paused from its dashboard: this worker waits for Resume\n")
        :format(self.fleet.spec.crawl_id))
    end
  end
  if ctl.stop > self.stop_seen then
    self.stop_seen = ctl.stop
    if not c.stopping then
      self.fleet_paused = false
      pause.stop(c, FROM)
      return true
    end
  end
  if ctl.state == "paused" and not c.paused and not c.stopping then
    self.fleet_paused = true
    pause.pause(c, FROM)
    return true
  end
  if ctl.state ~= "paused" and c.paused and self.fleet_paused then
    self.fleet_paused = false
    pause.resume(c, FROM)
    return true
  end
  return false
end

function Pub:tick()
  local ctl = self:publish()
  -- What changed is published at once, not a tick later.
  if ctl and self:obey(ctl) then self:publish() end
end

function Pub:run()
  while true do
    lc.sleep(M.interval)
    self:tick()
  end
end

-- The crawl ended: the task stops; the last numbers, once (no wait for a Redis that
-- is not there).
function Pub:finish()
  self.task:cancel()
  pcall(self.publish, self, "ended")
end

return M
