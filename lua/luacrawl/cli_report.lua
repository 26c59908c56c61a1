-- luacrawl.cli_report: `luacrawl report (--state FILE | --stats-json FILE | --redis URL
-- --crawl-id NAME) -o report.html`, a crawl's report as one HTML file that opens offline
-- (report_page.lua): its timeline
-- (pages/s, bytes/s, statuses and errors over time), statuses, errors by kind with
-- sample URLs, hosts, depths, sizes, the slowest responses and duplicates. From the
-- stats a crawl wrote (--stats-json), or from its state (the stats it saves there now and
-- then, crawl_state.lua; a running crawl's too, read as cli_state.lua reads it), or from
-- the reports a fleet's workers publish to Redis, summed (report_fleet.lua).
local lc = require "luacrawl"
local core = require "luacrawl.core"
local report = require "luacrawl.crawl_report"
local cli_state = require "luacrawl.cli_state"

local M = {}

M.usage = [==[
usage: luacrawl report --state FILE -o REPORT.html
       luacrawl report --stats-json FILE -o REPORT.html
       luacrawl report --redis URL --crawl-id NAME -o REPORT.html
  Write the report of a crawl as one HTML file that needs no network to open: the
  crawl's timeline (pages/s, bytes/s, statuses and errors over time), statuses,
  errors by kind with sample URLs, hosts, depths, response sizes, the slowest
  responses and duplicates.
  --state FILE       the state of a crawl (luacrawl crawl --state FILE), running or
                     not: the stats of its last run, as its last save left them
                     (every few seconds and at its end)
  --stats-json FILE  the stats a crawl wrote (luacrawl crawl --stats-json FILE)
  --redis URL --crawl-id NAME
                     a fleet's crawl (luacrawl crawl --redis): the reports its
                     workers publish (every 30 s and at their end; kept a day
                     after a worker's last) summed, running and ended workers
  -o FILE            where the report goes
Exit status: 0 written, 2 usage, a state or stats file that cannot be read, a Redis
that cannot be reached or has no such crawl.
]==]

local function fail(fmt, ...)
  io.stderr:write("luacrawl: report: ", fmt:format(...), "\n")
  return 2
end

local function read_file(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local s = f:read("*a")
  f:close()
  return s
end

-- The report of a stats table (--stats-json's, or the one a state saved).
local function from_stats(st, title, about)
  local r = {}
  for k, v in pairs(st) do r[k] = v end
  r.series = report.coarse(type(st.series) == "table" and st.series or {}, 600)
  r.statuses, r.errors = st.statuses or {}, st.errors or {}
  if not r.pages_per_s and r.elapsed and r.pages then r.pages_per_s = r.pages / math.max(r.elapsed, 1e-9) end
  r.title, r.about = title, about
  return r
end

local function start_of(identity)
  return identity and type(identity.start) == "table" and table.concat(identity.start, " ") or "a crawl"
end

-- The report of the state at path: the stats its crawl saved (crawl.report), else what
-- its tables hold (pages by status, errors by kind with their URLs, depths).
local function from_state(path)
  local db, err = lc.store.open(path, { read_only = true })
  if not db then return nil, tostring(err.message or err) end
  local ok, r = pcall(function()
    local base = cli_state.report(db, path)
    local saved = db:meta("crawl.report")
    local how = base.running and ("running" .. (base.pid and (" (pid %d)"):format(base.pid) or ""))
      or (base.finished and "finished" or "not finished")
    local about = ("state %s, %s; the stats of its last run"):format(path, how)
    if saved then return from_stats(core.json_decode(saved), start_of(base.identity), about) end
    local st = { pages = base.done, statuses = base.statuses, errors = base.errors, by_depth = {}, error_samples = {} }
    for _, row in ipairs(db:sql("SELECT depth, count(*) FROM crawl_done GROUP BY depth"):rows()) do
      st.by_depth[row[1] or 0] = row[2]
    end
    for kind in pairs(base.errors) do
      st.error_samples[kind] = db:sql("SELECT url, error FROM crawl_done WHERE error = ?1 LIMIT ?2")
        :records({ "url" }, kind, report.MAX_SAMPLES)
    end
    return from_stats(st, start_of(base.identity), ("state %s, %s; no stats saved: its tables' counts"):format(path, how))
  end)
  db:close()
  if not ok then return nil, ("state %s: %s"):format(path, tostring(r)) end
  return r
end

local function from_stats_file(path)
  local text, err = read_file(path)
  if not text then return nil, ("stats %s: %s"):format(path, tostring(err)) end
  local ok, st = pcall(core.json_decode, text)
  if not ok or type(st) ~= "table" then return nil, ("stats %s: not the JSON of a crawl's stats"):format(path) end
  return from_stats(st, "stats " .. path, ("stats of a crawl, stopped: %s"):format(tostring(st.stop_reason or "?")))
end

function M.main(args)
  local opts, i = {}, 1
  while i <= #args do
    local a = args[i]
    if a == "--help" or a == "-h" then
      io.stdout:write(M.usage)
      return 0
    elseif a == "--state" or a == "--stats-json" or a == "--redis" or a == "--crawl-id" or a == "-o"
      or a == "--output" then
      if not args[i + 1] then return fail("%s needs a value (see luacrawl report --help)", a) end
      opts[a == "--output" and "-o" or a] = args[i + 1]
      i = i + 1
    else
      return fail("unexpected argument '%s' (see luacrawl report --help)", a)
    end
    i = i + 1
  end
  if not opts["-o"] then return fail("where to? -o REPORT.html (see luacrawl report --help)") end
  if (opts["--redis"] ~= nil) ~= (opts["--crawl-id"] ~= nil) then
    return fail("--redis URL and --crawl-id NAME go together (see luacrawl report --help)")
  end
  local sources = (opts["--state"] and 1 or 0) + (opts["--stats-json"] and 1 or 0) + (opts["--redis"] and 1 or 0)
  if sources ~= 1 then
    return fail("one of --state FILE, --stats-json FILE or --redis URL --crawl-id NAME (see luacrawl report --help)")
  end
  local r, err
  if opts["--state"] then
    r, err = from_state(opts["--state"])
  elseif opts["--redis"] then
    local _, msg = lc.redis.parse_url(opts["--redis"])
    if msg then return fail("--redis: %s", msg) end
    r, err = require("luacrawl.report_fleet").report(opts["--redis"], opts["--crawl-id"])
  else
    r, err = from_stats_file(opts["--stats-json"])
  end
  if not r then return fail("%s", err) end
  local html = require("luacrawl.report_page").html(r, read_file(require("luacrawl.dashboard").chart_js_path))
  local f
  f, err = io.open(opts["-o"], "wb")
  if not f then return fail("%s", tostring(err)) end
  local wok, werr = f:write(html)
  local cok, cerr = f:close()
  if not (wok and cok) then return fail("%s: %s", opts["-o"], tostring(werr or cerr)) end
  return 0
end

return M
