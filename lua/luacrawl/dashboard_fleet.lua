-- luacrawl.dashboard_fleet: what `luacrawl dashboard --redis URL --crawl-id NAME`
-- (cli_dashboard.lua) shows of a fleet's crawl: read from Redis in one script call
-- (frontier_redis_scripts.lua's fleet: the workers' publications of
-- crawl_redis_publish.lua, the shared frontier, the fleet's counts) and made into a
-- stats table the dashboard serves (dashboard.lua); and the commands sent to every
-- worker through the crawl's control hash.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local report = require "luacrawl.crawl_report"
local frontier_redis = require "luacrawl.frontier_redis"
local scripts = require "luacrawl.frontier_redis_scripts"

local M = {}

-- Hosts looked at in Redis each read (the first ones a scan meets), hosts shown (the
-- busiest of those), seconds of silence after which a worker that did not say it
-- ended is shown "silent".
M.max_scanned, M.max_hosts, M.silent_after = 1000, 50, 10

-- The counters each worker publishes, summed for the fleet.
local SUMMED = { "pages", "requests", "bytes", "retries", "redirects", "robots_denied", "duplicates", "items",
  "parse_errors", "errors_total" }

local Reader = {}
Reader.__index = Reader

local function redact(url)
  return (url:gsub("^(%a+://)[^/@]*@", "%1***@", 1))
end

-- The reader of crawl_id's fleet in the Redis at url: connected, or nil and a message.
function M.open(url, crawl_id)
  local self = setmetatable({ url = url, label = redact(url), crawl_id = crawl_id,
    prefix = frontier_redis.prefix(crawl_id), st = report.new(), t0 = lc.now(), prev = {} }, Reader)
  local ok, err = self:connect()
  if not ok then return nil, err end
  return self
end

function Reader:connect()
  local conn, err = lc.redis.connect(self.url, { timeout = 10, connect_timeout = 2 })
  if not conn then
    local why = tostring(err.message or err):gsub("^redis [^ ]+: ", ""):gsub("^cannot connect: ", "")
    return nil, ("redis %s: cannot connect: %s"):format(self.label, why)
  end
  self.conn, self.script = conn, conn:script(scripts.fleet)
  return true
end

function Reader:close()
  if self.conn then self.conn:close() end
  self.conn = nil
end

-- A call on the connection, made again once after connecting again when the
-- connection failed (Redis restarted). nil and a message when it fails.
function Reader:call(fn)
  for attempt = 1, 2 do
    if not self.conn then
      local ok, err = self:connect()
      if not ok then return nil, err end
    end
    local res, err = fn(self.conn)
    if res ~= nil then return res end
    if err and err.kind == "redis" or attempt == 2 then
      return nil, ("redis %s: %s"):format(self.label, tostring(err and err.message or err))
    end
    self:close()
  end
end

-- The fleet's state as the script gives it, decoded; nil and a message. with_reports:
-- each worker's report instead of the hosts (report_fleet.lua).
function Reader:read(with_reports)
  local args = with_reports and { self.prefix, "0", "1" } or { self.prefix, tostring(M.max_scanned) }
  local res, err = self:call(function() return self.script:call({ self.prefix .. "stats" }, args) end)
  if not res then return nil, err end
  local ok, fl = pcall(core.json_decode, res)
  if not ok or type(fl) ~= "table" or type(fl.stats) ~= "table" then
    return nil, ("redis %s: not a crawl's state: %q"):format(self.label, tostring(res):sub(1, 60))
  end
  return fl
end

local function add_counts(into, from)
  if type(from) ~= "table" then return end
  for k, v in pairs(from) do
    if type(v) == "number" then into[tostring(k)] = (into[tostring(k)] or 0) + v end
  end
end

-- A worker's row: its publication and what Redis knows of it (its lease).
local function worker_row(w)
  local ok, rec = pcall(core.json_decode, w.json)
  if not ok or type(rec) ~= "table" then rec = {} end
  local state = rec.state or "running"
  if state ~= "ended" and w.seen_ms_ago > M.silent_after * 1000 then state = "silent" end
  return {
    worker = w.worker, host = rec.host, pid = rec.pid, state = state, stop_reason = rec.stop_reason,
    pages = rec.pages or 0, pages_per_s = state == "ended" and 0 or rec.rate or 0,
    requests = rec.requests or 0, errors_total = rec.errors_total or 0, errors = rec.errors or {},
    in_flight = rec.in_flight or 0,
    leased = w.leased or 0, heard_s_ago = w.seen_ms_ago / 1000, paused_seconds = rec.paused_seconds,
  }, rec
end

-- The fleet's counts in Redis: its pages by status, errors by kind and the rest (its
-- count of errors as errors_total: errors is the table by kind).
function M.fleet_counts(stats)
  local f = { statuses = {}, errors = {} }
  for k, v in pairs(stats) do
    local status, kind = k:match("^s:(.*)$"), k:match("^e:(.*)$")
    if status then
      f.statuses[status] = v
    elseif kind then
      f.errors[kind] = v
    elseif k == "errors" then
      f.errors_total = v
    elseif type(v) == "number" then
      f[k] = v
    end
  end
  return f
end

-- The hosts the read met, the M.max_hosts with the most queued and in flight.
local function host_rows(list, default_delay)
  table.sort(list, function(a, b)
    local x, y = a.queued + a.inflight, b.queued + b.inflight
    if x ~= y then return x > y end
    return a.host < b.host
  end)
  local rows = {}
  for i = 1, math.min(#list, M.max_hosts) do
    local h = list[i]
    rows[h.host] = { queued = h.queued, in_flight = h.inflight, backoff = h.backoff / 1000,
      delay = h.delay and h.delay / 1000 or default_delay }
  end
  return rows
end

-- The time series ----------------------------------------------------------------------

-- The fleet's points, one a second of this reader's clock: each worker's counts since
-- its previous publication spread evenly over the seconds between the two. (Workers
-- publish every 2 s, each at its own time: summed as they come, the points would go
-- 0, twice the rate, 0...)

local function diff(now_t, before)
  local d = {}
  for k, v in pairs(type(now_t) == "table" and now_t or {}) do
    if type(v) == "number" and v ~= (before[k] or 0) then d[tostring(k)] = v - (before[k] or 0) end
  end
  return d
end

local function counts_of(t)
  local c = {}
  for k, v in pairs(type(t) == "table" and t or {}) do
    if type(v) == "number" then c[tostring(k)] = v end
  end
  return c
end

-- The points up to second t, zero ones added; the oldest past report.SERIES_SECONDS go.
function Reader:point(t)
  local pts = self.st.series.points
  while #pts == 0 or pts[#pts].t < t do
    pts[#pts + 1] = { t = #pts == 0 and t or pts[#pts].t + 1, pages = 0, bytes = 0, statuses = {}, errors = {} }
  end
  while #pts > report.SERIES_SECONDS do table.remove(pts, 1) end
  local i = t - pts[1].t + 1
  return pts[i]
end

-- Worker w's publication rec (its time in Redis: seen), made at t (seconds of this
-- reader's clock), into the points.
function Reader:spread(w, rec, seen, t)
  local prev = self.prev[w]
  if prev and (prev.seen == seen or t <= prev.t) then return end -- the same publication as before
  local now_c = { t = t, seen = seen, pages = tonumber(rec.pages) or 0, bytes = tonumber(rec.bytes) or 0,
    statuses = counts_of(rec.statuses), errors = counts_of(rec.errors) }
  self.prev[w] = now_c
  -- A worker's first publication, or a worker started again (its counts from 0): no
  -- delta to spread.
  if not prev or now_c.pages < prev.pages then return end
  local d = { pages = now_c.pages - prev.pages, bytes = now_c.bytes - prev.bytes,
    statuses = diff(now_c.statuses, prev.statuses), errors = diff(now_c.errors, prev.errors) }
  local from = math.max(prev.t, (self.st.series.points[1] or { t = 0 }).t)
  for sec = math.floor(from), math.floor(t) do
    local share = (math.min(t, sec + 1) - math.max(from, sec)) / (t - prev.t)
    if share > 0 then
      local p = self:point(sec)
      p.pages, p.bytes = p.pages + d.pages * share, p.bytes + d.bytes * share
      for k, v in pairs(d.statuses) do p.statuses[k] = (p.statuses[k] or 0) + v * share end
      for k, v in pairs(d.errors) do p.errors[k] = (p.errors[k] or 0) + v * share end
    end
  end
end

-- The stats table of the fleet now (one table, updated at each call, its time series
-- sampled by this reader's clock), or nil and a message.
function Reader:view()
  local fl, err = self:read()
  if not fl then return nil, err end
  local st = self.st
  st.read_error = nil
  for _, k in ipairs(SUMMED) do st[k] = 0 end
  st.statuses, st.errors = {}, {}
  st.pages_per_s, st.in_flight = 0, 0
  local workers, running, default_delay = {}, 0, nil
  local t = lc.now() - self.t0
  self:point(math.floor(t))
  for _, w in ipairs(fl.workers) do
    local row, rec = worker_row(w)
    workers[#workers + 1] = row
    self:spread(w.worker, rec, w.seen, t - w.seen_ms_ago / 1000)
    for _, k in ipairs(SUMMED) do st[k] = st[k] + (tonumber(rec[k]) or 0) end
    add_counts(st.statuses, rec.statuses)
    add_counts(st.errors, rec.errors)
    if row.state ~= "ended" and row.state ~= "silent" then
      running = running + 1
      st.pages_per_s = st.pages_per_s + row.pages_per_s
      st.in_flight = st.in_flight + row.in_flight
    end
    if default_delay == nil and type(rec.delay) == "number" then default_delay = rec.delay end
  end
  table.sort(workers, function(a, b) return a.worker < b.worker end)
  local counts = M.fleet_counts(fl.stats)
  st.crawl_id, st.workers, st.workers_running = self.crawl_id, workers, running
  st.frontier, st.leased, st.delayed = counts.queued or 0, counts.leased or 0, fl.delayed or 0
  st.fleet = counts
  st.paused = fl.control.state == "paused"
  st.hosts, st.hosts_total = host_rows(fl.hosts, default_delay), #fl.hosts
  st.hosts_complete = fl.hosts_complete
  local started = tonumber(fl.meta.started)
  st.elapsed = started and (fl.now - started) / 1000 or 0
  st.started = started ~= nil
  st.exists = fl.meta.identity ~= nil
  -- Done for the fleet: something was queued once, nothing is queued or leased now;
  -- else stopped while every worker that published has ended or gone silent.
  if started and st.frontier <= 0 and st.leased <= 0 and running == 0 then
    st.stop_reason = "done"
  elseif #workers > 0 and running == 0 then
    st.stop_reason = "no worker running"
  else
    st.stop_reason = nil
  end
  return st
end

-- What a command of the page asks of every worker (they read it at their next
-- publication): pause and resume set the fleet's state; stop counts one more stop
-- (and leaves the state running: a worker started later is not stopped by it).
local COMMANDS = {
  pause = { { "HSET", "control", "state", "paused" } },
  resume = { { "HSET", "control", "state", "running" } },
  stop = { { "HSET", "control", "state", "running" }, { "HINCRBY", "control", "stop", "1" } },
}

-- Send command name ("pause", "resume", "stop"): true, or nil and a message.
function Reader:command(name)
  local cmds = {}
  for i, c in ipairs(assert(COMMANDS[name], name)) do
    cmds[i] = { c[1], self.prefix .. c[2], unpack(c, 3) }
  end
  local res, err = self:call(function(conn) return conn:pipeline(cmds) end)
  if not res then return nil, err end
  for i = 1, res.n do
    if lc.is_error(res[i]) then return nil, ("redis %s: %s"):format(self.label, res[i].message) end
  end
  return true
end

return M
