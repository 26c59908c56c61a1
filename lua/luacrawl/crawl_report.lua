-- luacrawl.crawl_report: a crawl's numbers and how they are shown: the stats table
-- (crawl.run's result: made here, counted in by crawl.lua and by the filter in
-- bindings/lua_crawl.c), the progress line on stderr while it runs, the summary
-- printed at its end (crawl.format_stats) and the stats_json file.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local json_encode = core.json_encode
local elapsed = lc._elapsed

local M = {}
local json_ready -- below

local function now()
  return lc.now()
end

-- The counters of a new crawl (crawler.stats).
function M.new()
  return {
    pages = 0, requests = 0, bytes = 0, statuses = {}, errors = {}, errors_total = 0,
    retries = 0, robots_denied = 0, robots_fetched = 0, duplicates = 0, out_of_scope = 0,
    too_deep = 0, dropped = 0, invalid_urls = 0, redirects = 0, redirect_limit = 0,
    items = 0, items_lost = 0, parse_errors = 0, output_errors = 0, host_backoffs = 0, host_time_exceeded = 0,
    starts = 0, start_refused = 0, host_closed = {},
    series = { interval = 1, points = {}, minutes = {} },
    -- For luacrawl report (below): bounded, a few table updates a page.
    by_depth = {}, by_size = {}, by_host = {}, hosts_other = { pages = 0, bytes = 0, errors = 0 },
    slowest = {}, error_samples = {},
  }
end

-- The time series ---------------------------------------------------------------------

-- st.series: what the crawl counted each second (pages, bytes, statuses, error kinds),
-- a point a second for the last SERIES_SECONDS, older seconds merged into a point a
-- minute, of which the last SERIES_MINUTES are kept. A point's t is its second (or
-- minute's first second) since the crawl started.
M.SERIES_SECONDS, M.SERIES_MINUTES = 3600, 7 * 24 * 60

-- The counts each series' last sample saw (outside st, which --stats-json writes).
local sampled = setmetatable({}, { __mode = "k" })

local function count_delta(now_t, before, into)
  for k, v in pairs(now_t) do
    local d = v - (before[k] or 0)
    if d ~= 0 then into[tostring(k)] = (into[tostring(k)] or 0) + d end
    before[k] = v
  end
end

-- p's counts added into list's last point when that is second t, else into a new
-- point t at its end (report_fleet.lua merges the fleet's series with it too).
local function add_point(list, t, p)
  local last = list[#list]
  if not last or last.t ~= t then
    last = { t = t, pages = 0, bytes = 0, statuses = {}, errors = {} }
    list[#list + 1] = last
  end
  last.pages, last.bytes = last.pages + p.pages, last.bytes + p.bytes
  for k, v in pairs(p.statuses) do last.statuses[k] = (last.statuses[k] or 0) + v end
  for k, v in pairs(p.errors) do last.errors[k] = (last.errors[k] or 0) + v end
end

-- Count what changed since the last sample into the second t (seconds since the
-- crawl started).
function M.sample(st, t)
  local series = st.series
  if not series then return end
  local before = sampled[series]
  if not before then
    before = { pages = 0, bytes = 0, statuses = {}, errors = {} }
    sampled[series] = before
  end
  local p = { pages = st.pages - before.pages, bytes = st.bytes - before.bytes, statuses = {}, errors = {} }
  before.pages, before.bytes = st.pages, st.bytes
  count_delta(st.statuses, before.statuses, p.statuses)
  count_delta(st.errors, before.errors, p.errors)
  local points = series.points
  add_point(points, math.floor(t), p)
  while #points > M.SERIES_SECONDS do
    local old = table.remove(points, 1)
    add_point(series.minutes, old.t - old.t % 60, old)
    if #series.minutes > M.SERIES_MINUTES then table.remove(series.minutes, 1) end
  end
end

-- The task that samples a crawl's stats each second until cancelled. A second in
-- which no request started ends the ticks: the task then waits for the crawl's next
-- request (M.wake), so that a crawl with nothing to do (a long delay, a host in
-- backoff) keeps no timer of its own running, and its loop sleeps as long as it can.
function M.sampler(crawler)
  local idle = lc.queue()
  local st = crawler.stats
  local seen = -1
  while true do
    lc.sleep(1)
    M.sample(st, now() - crawler.started)
    if st.requests == seen and st.pages == crawler.sampled_pages then
      crawler.sample_idle = idle
      idle:get()
    end
    seen, crawler.sampled_pages = st.requests, st.pages
  end
end

-- Wake the sampler of a crawl idle since its last tick (crawler.sample_idle set).
function M.wake(crawler)
  local idle = crawler.sample_idle
  crawler.sample_idle = false
  idle:put(true)
end
-- What luacrawl report shows beside the counts ------------------------------------------

-- Hosts counted by name (the first MAX_HOSTS met; the others summed in hosts_other), the
-- slowest responses kept, the sample URLs kept per error kind.
M.MAX_HOSTS, M.MAX_SLOWEST, M.MAX_SAMPLES = 200, 10, 5

local LOG2 = math.log(2)

local hosts_counted = setmetatable({}, { __mode = "k" }) -- by stats table, outside it

local function host_entry(st, key)
  local h = st.by_host[key]
  if h then return h end
  local n = hosts_counted[st] or 0
  if n >= M.MAX_HOSTS then return st.hosts_other end
  hosts_counted[st] = n + 1
  h = { pages = 0, bytes = 0, errors = 0 }
  st.by_host[key] = h
  return h
end

-- A response: its bytes and status (every crawl), its depth, size (by_size[k]: bodies
-- of at most 2^k bytes, k >= 10), host, and time when it is among the slowest.
function M.response(st, req, res)
  local size = res.size or #res.body
  st.bytes = st.bytes + size
  st.statuses[res.status] = (st.statuses[res.status] or 0) + 1
  if not st.by_depth then return end -- stats of a script's own making
  local d = req.depth or 0
  st.by_depth[d] = (st.by_depth[d] or 0) + 1
  local k = size <= 1024 and 10 or math.ceil(math.log(size) / LOG2 - 1e-9)
  st.by_size[k] = (st.by_size[k] or 0) + 1
  local h = host_entry(st, req.key or lc.url.host(req.url) or "?")
  h.pages, h.bytes = h.pages + 1, h.bytes + size
  local total = elapsed(res) -- res.time.total, without making res.time
  local slow = st.slowest
  if not total or (#slow >= M.MAX_SLOWEST and total <= slow[#slow].seconds) then return end
  local i = #slow + 1
  while i > 1 and slow[i - 1].seconds < total do i = i - 1 end
  table.insert(slow, i, { url = lc.url.redact(req.url), seconds = total, status = res.status, bytes = size })
  slow[M.MAX_SLOWEST + 1] = nil
end

-- An error of kind, counted; with the request, its URL kept as a sample (the first
-- MAX_SAMPLES of each kind) and its host's errors counted.
function M.count_error(st, kind, req, err)
  st.errors[kind] = (st.errors[kind] or 0) + 1
  st.errors_total = st.errors_total + 1
  if not (req and st.error_samples) then return end
  local h = host_entry(st, req.key or lc.url.host(req.url) or "?")
  h.errors = h.errors + 1
  local list = st.error_samples[kind]
  if not list then
    list = {}
    st.error_samples[kind] = list
  end
  if #list < M.MAX_SAMPLES then
    list[#list + 1] = { url = lc.url.redact(req.url), message = type(err) == "table" and err.message or tostring(err) }
  end
end

M.add_point = add_point

-- Hosts by_host (name -> {pages, bytes, errors}) cut to the n with the most pages, the
-- others added into other: the kept ones, other.
function M.top_hosts(by_host, other, n)
  local list = {}
  for name, h in pairs(by_host or {}) do list[#list + 1] = { name = name, h = h } end
  table.sort(list, function(a, b)
    if a.h.pages ~= b.h.pages then return a.h.pages > b.h.pages end
    return a.name < b.name
  end)
  local kept = {}
  other = other or { pages = 0, bytes = 0, errors = 0 }
  for i, x in ipairs(list) do
    if i <= n then
      kept[x.name] = x.h
    else
      for _, k in ipairs({ "pages", "bytes", "errors" }) do other[k] = (other[k] or 0) + (tonumber(x.h[k]) or 0) end
    end
  end
  return kept, other
end

-- The series as at most max points: each second and minute kept, merged into wider
-- buckets (a power of two of seconds, never narrower than the series' own interval:
-- a coarse series coarsened again) when there are more. {interval =, points =}.
function M.coarse(series, max)
  local all = {}
  for _, p in ipairs(series.minutes or {}) do all[#all + 1] = p end
  for _, p in ipairs(series.points or {}) do all[#all + 1] = p end
  local span = #all > 0 and all[#all].t - all[1].t + 1 or 0
  local width = tonumber(series.interval) or 1
  while span / width > max do width = width * 2 end
  if width == (tonumber(series.interval) or 1) and #all <= max then return { interval = width, points = all } end
  local out = {}
  for _, p in ipairs(all) do add_point(out, p.t - p.t % width, p) end
  return { interval = width, points = out }
end

-- What a state keeps of the stats for luacrawl report (crawl_state.lua, at a commit now
-- and then): the counts, and the series coarsened to at most 600 points.
local SAVED = { "pages", "requests", "bytes", "statuses", "errors", "errors_total", "retries", "redirects",
  "duplicates", "content_duplicates", "robots_denied", "items", "by_depth", "by_size", "by_host", "hosts_other",
  "slowest", "error_samples", "stop_reason" }

function M.saved(st, elapsed)
  M.sample(st, elapsed) -- the series up to now (the sampler adds to the same second)
  local t = { elapsed = elapsed, saved_at = os.time() }
  for _, k in ipairs(SAVED) do t[k] = st[k] end
  t.series = st.series and M.coarse(st.series, 600)
  return json_ready(t)
end

-- A request a hook dropped, counted in dropped and by its reason (dropped_why): the
-- hook's own (`return false, "budget"`), else the hook's name.
function M.count_drop(st, why)
  st.dropped = st.dropped + 1
  why = type(why) == "string" and why or "on_request"
  local by = st.dropped_why
  if not by then
    by = {}
    st.dropped_why = by
  end
  by[why] = (by[why] or 0) + 1
end

-- crawler.stats at the end of its run, with the time it took, its rate, what was
-- left queued and why it stopped (crawler:final_stats()).
function M.final(crawler)
  local st = crawler.stats
  st.elapsed = now() - crawler.started
  M.sample(st, st.elapsed)
  st.pages_per_s = st.pages / math.max(st.elapsed, 1e-9)
  st.queued_left = crawler.frontier:size()
  st.stop_reason = crawler.stop_reason or "done"
  st.signal = crawler.signal
  st.aborted = crawler.aborted or nil
  st.resumed = crawler.durable.resumed or nil
  st.state_error = crawler.state_error
  -- Paused from the dashboard or the fleet's (crawl_pause.lua): that long of elapsed.
  local paused = rawget(crawler, "paused_total") and require("luacrawl.crawl_pause").seconds(crawler)
  st.paused_seconds = paused or (crawler.watch and 0) or nil
  return st
end

-- Progress ---------------------------------------------------------------------------

-- The progress line of a crawl in progress (crawler:status_line()).
function M.status_line(crawler)
  local st = crawler.stats
  local t = now()
  local elapsed = t - crawler.started
  local line = ("%d pages, %.1f pages/s, %d queued, %d in flight, %d errors, %.0f s"):format(
    st.pages, st.pages / math.max(elapsed, 1e-9), crawler.frontier:size() + crawler.waiting_robots,
    crawler.active, st.errors_total, elapsed)
  if crawler.delayed == 0 then return line end
  -- What keeps a crawl alive when nothing is in flight: retries waiting their time.
  local next_due
  for _, due in pairs(crawler.retry_due) do
    if not next_due or due < next_due then next_due = due end
  end
  return ("%s; waiting to retry: %d, the next in %.0f s"):format(line, crawler.delayed,
    math.max(0, (next_due or t) - t))
end

-- The task that shows the progress line until cancelled: redrawn in place on a
-- terminal, a log line otherwise, every spec.progress_interval seconds (else
-- intervals.terminal or intervals.other: crawl.defaults.progress_intervals). Sets
-- crawler.progress_shown when a line is left on the terminal to clear.
function M.progress(crawler, intervals)
  local tty = core.isatty(2)
  -- Records written to a terminal: a status line would mix into them, so none.
  if core.isatty(1) then
    for _, out in ipairs(crawler.outputs) do
      if out.to_stdout then return end
    end
  end
  local interval = crawler.spec.progress_interval or (tty and intervals.terminal or intervals.other)
  while true do
    lc.sleep(interval)
    if tty then
      io.stderr:write("\r\27[K", M.status_line(crawler))
    else
      io.stderr:write("luacrawl: ", M.status_line(crawler), "\n")
    end
    io.stderr:flush()
    crawler.progress_shown = tty
  end
end

-- The end of a run -------------------------------------------------------------------

local function format_counts(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = ("%s: %d"):format(tostring(k), t[k]) end
  return table.concat(parts, ", ")
end

-- What the crawl lost, one line ("lost: ..."), or nil when nothing was: every
-- way a crawl does less than asked that is not a fetch error (those are on the
-- errors line): start URLs not crawled, errors in parse, items an output refused,
-- requests robots.txt denied or whose robots.txt could not be reached.
function M.losses(st)
  local parts = {}
  local function add(n, what)
    if n and n > 0 then parts[#parts + 1] = what:format(n) end
  end
  if (st.start_refused or 0) > 0 then
    parts[#parts + 1] = ("%d of %d start URLs not crawled (%s)"):format(st.start_refused, st.starts or 0,
      format_counts(st.start_refused_why or {}))
  end
  add(st.parse_errors, "%d errors in parse")
  add(st.output_errors, "%d items refused or failed by the output")
  add(st.items_lost, "%d items lost by a failed write")
  add(st.save_errors, "%d pages not saved (--save; the first said why)")
  add(st.robots_denied, "%d requests denied by robots.txt")
  add(st.retries_abandoned, "%d retries abandoned when the crawl stopped")
  if st.robots_unreachable then
    for origin, cause in pairs(st.robots_unreachable) do
      parts[#parts + 1] = ("robots.txt unreachable: %s (%s)"):format(origin, cause)
    end
  end
  add(st.warnings, "%d warnings (above)")
  if not parts[1] then return nil end
  table.sort(parts)
  return "lost: " .. table.concat(parts, "; ")
end

-- The records a replay (from_warc) skipped by the crawl's rules, and why, one line
-- ("skipped 5 records: 5 out of the crawl's scope (hosts: a.example)"), or nil.
local SKIPPED_WHY = {
  { "out_of_scope", "%d out of the crawl's scope" }, { "too_deep", "%d deeper than max_depth" },
  { "invalid_urls", "%d with an invalid URL" },
}

function M.skipped(st)
  local n = st.warc_skipped or 0
  if n == 0 then return nil end
  local why, parts = st.warc_skipped_why or {}, {}
  for _, w in ipairs(SKIPPED_WHY) do
    if why[w[1]] then parts[#parts + 1] = w[2]:format(why[w[1]]) end
  end
  -- The first hosts out of scope (crawl_warc.lua counts a few), and "..." for others.
  local names, counted = {}, 0
  for host, k in pairs(st.warc_skipped_hosts or {}) do
    names[#names + 1], counted = host, counted + k
  end
  if names[1] then
    table.sort(names)
    parts[1] = ("%s (hosts: %s%s)"):format(parts[1], table.concat(names, ", "),
      counted < (why.out_of_scope or 0) and ", ..." or "")
  end
  return ("skipped %d records: %s"):format(n, table.concat(parts, "; "))
end

-- Why a crawl did nothing useful (luacrawl crawl exits 5), or nil: no page was
-- fetched (every start URL refused, unreachable, denied), or parse failed on every
-- page. A crawl stopped by a signal is not judged.
function M.failure(st)
  if st.signal or st.finished_before then return nil end
  if st.state_error then return "the state could not be written: " .. st.state_error end
  if (st.starts or 0) > 0 and st.start_refused == st.starts then
    return "every start URL was refused"
  end
  if st.pages == 0 and st.replay then
    local skipped = M.skipped(st)
    return "no archived page was replayed" .. (skipped and "; " .. skipped or "")
  end
  if st.pages == 0 then
    if st.resumed and (st.errors_total or 0) == 0 then return nil end -- an earlier run did the work
    if (st.errors_total or 0) > 0 then
      return ("no page was fetched (errors: %s)"):format(format_counts(st.errors or {}))
    end
    return "no page was fetched"
  end
  if st.parse_errors >= st.pages then return "parse failed on every page" end
  return nil
end

-- The report's first line: a replay's pages are the records it replayed (no request).
local function headline(st)
  if st.replay then
    return ("records replayed %d (%d bytes) in %.2f s: %.1f records/s"):format(st.pages, st.bytes, st.elapsed,
      st.pages_per_s)
  end
  return ("pages %d (%d requests, %d bytes) in %.2f s: %.1f pages/s"):format(
    st.pages, st.requests, st.bytes, st.elapsed, st.pages_per_s)
end

-- The summary of final stats, a few lines (crawl.format_stats).
function M.format(st)
  local lines = {
    headline(st),
    ("errors %d%s; retries %d; redirects %d; robots denied %d; duplicates %d; items %d%s"):format(
      st.errors_total, st.errors_total > 0 and " (" .. format_counts(st.errors) .. ")" or "",
      st.retries, st.redirects, st.robots_denied, st.duplicates, st.items,
      (st.items_lost or 0) > 0 and (" (%d lost: %s)"):format(st.items_lost, st.output_failed or "") or ""),
  }
  -- No response, no statuses line (never an empty one).
  if next(st.statuses) then table.insert(lines, 2, ("statuses: %s"):format(format_counts(st.statuses))) end
  lines[#lines + 1] = M.skipped(st) -- nil when nothing was skipped
  if st.dropped > 0 then
    lines[#lines + 1] = ("dropped %d (%s)"):format(st.dropped, format_counts(st.dropped_why or { on_request = st.dropped }))
  end
  lines[#lines + 1] = M.losses(st) -- nil when nothing was lost
  if (st.paused_seconds or 0) > 0 then lines[#lines + 1] = ("paused %.1f s (from the dashboard)"):format(st.paused_seconds) end
  lines[#lines + 1] = ("stopped: %s"):format(st.stop_reason)
  return table.concat(lines, "\n")
end

-- v with the keys of every table that is not a list as strings (statuses are keyed
-- by numbers, which JSON objects cannot be).
function json_ready(v)
  if type(v) ~= "table" then return v end
  local n, count = #v, 0
  for _ in pairs(v) do count = count + 1 end
  local copy = {}
  if n > 0 and n == count then
    for i = 1, n do copy[i] = json_ready(v[i]) end
  else
    for k, x in pairs(v) do copy[tostring(k)] = json_ready(x) end
  end
  return copy
end

-- Final stats (or stats of a crawl in progress) as JSON: statuses keyed by strings.
function M.json(st)
  return json_encode(json_ready(st))
end

-- Write final stats to f, the stats_json file opened at path, and close it. Returns
-- true, or nil and a message naming the file when a write, flush or close failed.
function M.write_json(f, path, st)
  local wok, werr = f:write(M.json(st), "\n")
  if wok then wok, werr = f:flush() end
  local cok, cerr = f:close()
  if wok and not cok then wok, werr = nil, cerr end
  if not wok then return nil, ("stats_json %s: %s"):format(path, tostring(werr)) end
  return true
end

-- The exit status of a crawl that ran (luacrawl crawl's, and luacrawl run's for a
-- script's crawls), and, when it is not 0, why (the crawl logged it, unless quiet):
-- 2 its state or its fleet's Redis failed, 4 records could not be written, 130/143
-- stopped by SIGINT (or from the dashboard)/SIGTERM, 5 it did nothing useful (report.failure; a worker of a
-- fleet that found nothing left to fetch has not failed).
function M.exit_status(c, st)
  if c.state_error then return 2, c.state_error end
  if c.fleet_error then return 2, c.fleet_error end
  if c.write_error then return 4, c.write_error end
  if st.signal == "INT" or st.stop_reason == "dashboard" then return 130 end -- stopped from it: as SIGINT
  if st.signal == "TERM" then return 143 end
  local failed = not c.spec.redis and M.failure(st)
  if failed then return 5, failed end
  return 0
end

return M
