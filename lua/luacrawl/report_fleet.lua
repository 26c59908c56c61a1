-- luacrawl.report_fleet: the report of a fleet's crawl (`luacrawl report --redis URL
-- --crawl-id NAME`, cli_report.lua): the reports its workers published to Redis
-- (crawl_redis_publish.lua; ended workers' too, while their records last), read in one
-- script call (dashboard_fleet.lua's reader) and summed into one report table: counts
-- added, series merged by wall-clock second, the slowest of all, samples up to the bound.
local core = require "luacrawl.core"
local report = require "luacrawl.crawl_report"
local fleet = require "luacrawl.dashboard_fleet"

local M = {}

-- The counters summed over the workers.
local SUMMED = { "pages", "requests", "bytes", "errors_total", "retries", "redirects", "duplicates",
  "content_duplicates", "robots_denied", "items" }

local function add_counts(into, from)
  for k, v in pairs(type(from) == "table" and from or {}) do
    if type(v) == "number" then into[tostring(k)] = (into[tostring(k)] or 0) + v end
  end
end

-- The series of workers' reports ({rep =, start = its crawl's start, seconds of one
-- clock}) as one: each point put at its wall-clock second, then in buckets of the
-- widest of their intervals (or wider: at most max points), t counted from the
-- earliest start.
function M.merge_series(list, max)
  local t0, width, all = math.huge, 1, {}
  for _, w in ipairs(list) do t0 = math.min(t0, w.start) end
  t0 = math.floor(t0)
  for _, w in ipairs(list) do
    local series = type(w.rep.series) == "table" and w.rep.series or {}
    width = math.max(width, tonumber(series.interval) or 1)
    for _, p in ipairs(type(series.points) == "table" and series.points or {}) do
      all[#all + 1] = { t = math.floor(w.start + (tonumber(p.t) or 0)) - t0, p = p }
    end
  end
  table.sort(all, function(a, b) return a.t < b.t end)
  local span = #all > 0 and all[#all].t - all[1].t + 1 or 0
  while span / width > max do width = width * 2 end
  local points = {}
  for _, x in ipairs(all) do
    local p = x.p
    report.add_point(points, x.t - x.t % width, { pages = tonumber(p.pages) or 0, bytes = tonumber(p.bytes) or 0,
      statuses = type(p.statuses) == "table" and p.statuses or {}, errors = type(p.errors) == "table" and p.errors or {} })
  end
  return { interval = width, points = points }
end

-- The hosts of all reports summed, the report.MAX_HOSTS with the most pages by name,
-- the others in hosts_other.
local function merge_hosts(r, reps)
  local by, other = {}, { pages = 0, bytes = 0, errors = 0 }
  for _, rep in ipairs(reps) do
    for name, h in pairs(type(rep.by_host) == "table" and rep.by_host or {}) do
      by[name] = by[name] or { pages = 0, bytes = 0, errors = 0 }
      add_counts(by[name], h)
    end
    add_counts(other, rep.hosts_other)
  end
  r.by_host, r.hosts_other = report.top_hosts(by, other, report.MAX_HOSTS)
end

-- The workers' reports (decoded tables) summed into r.
function M.sum(r, reps)
  for _, k in ipairs(SUMMED) do r[k] = 0 end
  r.statuses, r.errors, r.by_depth, r.by_size, r.error_samples, r.slowest = {}, {}, {}, {}, {}, {}
  for _, rep in ipairs(reps) do
    for _, k in ipairs(SUMMED) do r[k] = r[k] + (tonumber(rep[k]) or 0) end
    add_counts(r.statuses, rep.statuses)
    add_counts(r.errors, rep.errors)
    add_counts(r.by_depth, rep.by_depth)
    add_counts(r.by_size, rep.by_size)
    for kind, samples in pairs(type(rep.error_samples) == "table" and rep.error_samples or {}) do
      local list = r.error_samples[kind] or {}
      r.error_samples[kind] = list
      for _, e in ipairs(type(samples) == "table" and samples or {}) do
        if #list < report.MAX_SAMPLES then list[#list + 1] = e end
      end
    end
    for _, s in ipairs(type(rep.slowest) == "table" and rep.slowest or {}) do r.slowest[#r.slowest + 1] = s end
  end
  table.sort(r.slowest, function(a, b) return (tonumber(a.seconds) or 0) > (tonumber(b.seconds) or 0) end)
  for i = report.MAX_SLOWEST + 1, #r.slowest do r.slowest[i] = nil end
  merge_hosts(r, reps)
  return r
end

-- What the report says of the workers: how many, in which state.
local function about(label, workers, without)
  local states = {}
  for _, w in ipairs(workers) do states[w.state] = (states[w.state] or 0) + 1 end
  local parts = {}
  for _, s in ipairs({ "running", "paused", "stopping", "ended", "silent" }) do
    if states[s] then parts[#parts + 1] = ("%d %s"):format(states[s], s) end
  end
  local text = ("redis %s, %d workers (%s); each worker's numbers as of its last report (every %d s, and at "
    .. "its end)"):format(label, #workers, table.concat(parts, ", "), require("luacrawl.crawl_redis_publish").report_interval)
  if without > 0 then text = text .. ("; %d without a report: not counted"):format(without) end
  return text
end

-- The report of crawl_id's fleet in the Redis at url (cli_report.lua's table), or nil
-- and a message (Redis not reached; no such crawl there).
function M.report(url, crawl_id)
  local reader, err = fleet.open(url, crawl_id)
  if not reader then return nil, err end
  local fl
  fl, err = reader:read(true)
  reader:close()
  if not fl then return nil, err end
  if not fl.meta.identity and #fl.workers == 0 then
    return nil, ("redis %s has no crawl %s (or its records expired)"):format(reader.label, crawl_id)
  end
  local list, reps, workers, without = {}, {}, {}, 0
  local t_end = -math.huge
  for _, w in ipairs(fl.workers) do
    local ok, rec = pcall(core.json_decode, w.json)
    local state = ok and type(rec) == "table" and rec.state or "running"
    if state ~= "ended" and w.seen_ms_ago > fleet.silent_after * 1000 then state = "silent" end
    workers[#workers + 1] = { worker = w.worker, state = state }
    local rok, rep = pcall(core.json_decode, w.report or "")
    if rok and type(rep) == "table" and w.report_at then
      local elapsed = tonumber(rep.elapsed) or 0
      list[#list + 1] = { rep = rep, start = w.report_at / 1000 - elapsed }
      reps[#reps + 1] = rep
      t_end = math.max(t_end, w.report_at / 1000)
    else
      without = without + 1
    end
  end
  local r = M.sum({}, reps)
  r.series = M.merge_series(list, 600)
  if #list > 0 then
    local t0 = math.huge
    for _, w in ipairs(list) do t0 = math.min(t0, w.start) end
    r.elapsed = t_end - t0
    r.pages_per_s = r.pages / math.max(r.elapsed, 1e-9)
  end
  if #reps == 0 then
    -- No worker's report (expired, or workers of a luacrawl without them): the fleet's
    -- own counts in Redis.
    local counts = fleet.fleet_counts(fl.stats)
    r.pages, r.statuses, r.errors = counts.pages or 0, counts.statuses, counts.errors
    r.errors_total = counts.errors_total or 0
  end
  r.title = "crawl " .. crawl_id
  r.about = about(reader.label, workers, without)
  r.workers = workers
  return r
end

return M
