-- luacrawl.crawl_report: a crawl's numbers and how they are shown: the stats table
-- (crawl.run's result: made here, counted in by crawl.lua and by the filter in
-- bindings/lua_crawl.c), the progress line on stderr while it runs, the summary
-- printed at its end (crawl.format_stats) and the stats_json file.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local json_encode = core.json_encode

local M = {}

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
  }
end

-- crawler.stats at the end of its run, with the time it took, its rate, what was
-- left queued and why it stopped (crawler:final_stats()).
function M.final(crawler)
  local st = crawler.stats
  st.elapsed = now() - crawler.started
  st.pages_per_s = st.pages / math.max(st.elapsed, 1e-9)
  st.queued_left = crawler.frontier:size()
  st.stop_reason = crawler.stop_reason or "done"
  st.signal = crawler.signal
  st.aborted = crawler.aborted or nil
  st.resumed = crawler.durable.resumed or nil
  st.state_error = crawler.state_error
  return st
end

-- Progress ---------------------------------------------------------------------------

-- The progress line of a crawl in progress (crawler:status_line()).
function M.status_line(crawler)
  local st = crawler.stats
  local elapsed = now() - crawler.started
  return ("%d pages, %.1f pages/s, %d queued, %d in flight, %d errors, %.0f s"):format(
    st.pages, st.pages / math.max(elapsed, 1e-9), crawler.frontier:size() + crawler.waiting_robots,
    crawler.active, st.errors_total, elapsed)
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

-- Why a crawl did nothing useful (luacrawl crawl exits 5), or nil: no page was
-- fetched (every start URL refused, unreachable, denied), or parse failed on every
-- page. A crawl stopped by a signal is not judged.
function M.failure(st)
  if st.signal or st.finished_before then return nil end
  if st.state_error then return "the state could not be written: " .. st.state_error end
  if (st.starts or 0) > 0 and st.start_refused == st.starts then
    return "every start URL was refused"
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

-- The summary of final stats, a few lines (crawl.format_stats).
function M.format(st)
  local lines = {
    ("pages %d (%d requests, %d bytes) in %.2f s: %.1f pages/s"):format(
      st.pages, st.requests, st.bytes, st.elapsed, st.pages_per_s),
    ("statuses: %s"):format(format_counts(st.statuses)),
    ("errors %d%s; retries %d; redirects %d; robots denied %d; duplicates %d; items %d%s"):format(
      st.errors_total, st.errors_total > 0 and " (" .. format_counts(st.errors) .. ")" or "",
      st.retries, st.redirects, st.robots_denied, st.duplicates, st.items,
      (st.items_lost or 0) > 0 and (" (%d lost: %s)"):format(st.items_lost, st.output_failed or "") or ""),
  }
  lines[#lines + 1] = M.losses(st) -- nil when nothing was lost
  lines[#lines + 1] = ("stopped: %s"):format(st.stop_reason)
  return table.concat(lines, "\n")
end

-- Final stats as JSON: statuses keyed by strings.
function M.json(st)
  local copy = {}
  for k, v in pairs(st) do copy[k] = v end
  local statuses = {}
  for k, v in pairs(st.statuses) do statuses[tostring(k)] = v end
  copy.statuses = statuses
  return json_encode(copy)
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

return M
