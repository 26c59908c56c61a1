-- luacrawl.cli_dashboard: `luacrawl dashboard`, the dashboard's page, /stats.json and
-- /metrics (dashboard.lua) served on their own, for a crawl that is not this process:
--   --redis URL --crawl-id NAME   a fleet's crawl (dashboard_fleet.lua): each worker,
--                                 the shared frontier, the counters summed; pause,
--                                 resume and stop reach every worker
--   --state FILE                  a state file, read-only (cli_state.lua reads it)
-- It runs until SIGINT or SIGTERM.
local lc = require "luacrawl"
local dashboard = require "luacrawl.dashboard"
local report = require "luacrawl.crawl_report"

local M = {}

M.usage = [==[
usage: luacrawl dashboard --redis URL --crawl-id NAME [--host H] [--port P] [--token T]
       luacrawl dashboard --state FILE [--host H] [--port P] [--token T]
  Serve the dashboard of a crawl that runs elsewhere (the page, /stats.json and
  /metrics, as luacrawl crawl --dashboard does) until SIGINT or SIGTERM.
  --redis URL --crawl-id NAME   the crawl a fleet of workers shares in Redis
                         (luacrawl crawl --redis): each worker (its state, pages,
                         rate, leases), the shared frontier, the counters summed;
                         Pause, Resume and Stop reach every worker within a few
                         seconds (Stop: each ends as on SIGINT)
  --state FILE           what the state FILE of a crawl holds (read-only)
  --host H               the address to listen on (default 127.0.0.1; another
                         needs the token on every request)
  --port P               the port (default 8099; 0: any free one)
  --token T              the token asked for (default: one made and printed once)
The URL to open is printed on stderr. Exit status: 0 when stopped by a signal, 2 a
usage error, an address that cannot be listened on, a Redis or a state that cannot
be read.
]==]

-- Seconds between publications, and between reads of a state file not finished.
M.interval, M.state_interval = 1, 5

local function usage_error(msg)
  io.stderr:write("luacrawl: dashboard: ", msg, " (see luacrawl dashboard --help)\n")
  return 2
end

local VALUED = { ["--redis"] = "redis", ["--crawl-id"] = "crawl_id", ["--state"] = "state", ["--host"] = "host",
  ["--port"] = "port", ["--token"] = "token" }

local function parse(args)
  local o = {}
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--help" or a == "-h" then
      o.help = true
    elseif VALUED[a] then
      local v = args[i + 1]
      if not v then return nil, a .. " needs a value" end
      o[VALUED[a]] = v
      i = i + 1
    else
      return nil, ("unexpected argument '%s'"):format(a)
    end
    i = i + 1
  end
  if o.help then return o end
  if o.state and (o.redis or o.crawl_id) then return nil, "--state FILE or --redis URL --crawl-id NAME, not both" end
  if not o.state and not (o.redis and o.crawl_id) then
    return nil, "which crawl? --redis URL --crawl-id NAME, or --state FILE"
  end
  if o.redis then
    local _, msg = lc.redis.parse_url(o.redis)
    if msg then return nil, "--redis: " .. msg end
  end
  local port = o.port or "8099"
  if not port:match("^%d+$") or tonumber(port) > 65535 then return nil, "--port must be a port number" end
  if o.token == "" then return nil, "--token must not be empty" end
  o.listen = (o.host or "127.0.0.1") .. ":" .. port
  return o
end

-- A state file's report (cli_state.lua) as the dashboard's stats table.
local function state_stats(r)
  local st, t = report.new(), r.totals or {}
  local errors = 0
  for _, n in pairs(r.errors) do errors = errors + n end
  st.pages = t.pages or r.done - errors
  st.requests, st.bytes, st.items, st.retries = t.requests or 0, t.bytes or 0, t.items or 0, t.retries or 0
  st.statuses, st.errors, st.errors_total = r.statuses, r.errors, t.errors_total or errors
  st.frontier, st.retries_pending = r.frontier, r.retries_pending
  st.hosts = {}
  for _, h in ipairs(r.hosts) do st.hosts[h.host] = { queued = h.queued } end
  st.state_file, st.read_only, st.runs = r.path, true, t.runs
  st.finished, st.finished_at, st.committed_at = r.finished, r.finished_at, r.committed_at
  st.stop_reason = r.finished and "finished" or nil
  return st
end

-- Where the numbers come from: view() -> stats | nil, message; command(name).
local function fleet_source(o)
  local reader, err = require("luacrawl.dashboard_fleet").open(o.redis, o.crawl_id)
  if not reader then return nil, err end
  local first, ferr = reader:view()
  if not first then
    reader:close()
    return nil, ferr
  end
  if not first.exists then
    io.stderr:write(("luacrawl: dashboard: no crawl %s in %s yet: waiting for its workers\n")
      :format(o.crawl_id, reader.label))
  end
  return {
    view = function() return reader:view() end,
    command = function(name)
      local ok, cerr = reader:command(name)
      io.stderr:write("luacrawl: dashboard: ", ok and (name .. ": sent to the fleet") or cerr, "\n")
    end,
    close = function() reader:close() end,
  }
end

local function state_source(o)
  local cli_state = require "luacrawl.cli_state"
  local r, err = cli_state.read(o.state)
  if not r then return nil, err end
  local st, due = state_stats(r), lc.now() + M.state_interval
  return {
    -- Read again now and then while its crawl is not finished; a read that fails
    -- (the crawl holds the file) keeps the last numbers, with the reason.
    view = function()
      if not st.finished and lc.now() >= due then
        due = lc.now() + M.state_interval
        local again, why = cli_state.read(o.state)
        if again then
          st = state_stats(again)
        else
          st.read_error = why
        end
      end
      return st
    end,
    command = function(name)
      io.stderr:write(("luacrawl: dashboard: %s: the state file is only read here, ignored\n"):format(name))
    end,
    close = function() end,
  }
end

-- Publish, act on the commands, until a signal.
local function serve(srv, source)
  local signal = false
  for _, s in ipairs({ "INT", "TERM" }) do lc.signals.watch(s) end
  local waiter = lc.spawn(function() signal = lc.signals.wait() end)
  local due, said, last = 0, nil, nil
  while not signal do
    for _, cmd in ipairs(srv:commands()) do source.command(cmd) end
    if lc.now() >= due then
      due = lc.now() + M.interval
      local st, err = source.view()
      if st then
        last, said = st, nil
      elseif err ~= said then
        io.stderr:write("luacrawl: dashboard: ", err, "\n")
        said = err
      end
      if last then
        if not st then last.read_error = err end
        srv:publish(last)
      end
    end
    lc.sleep(0.1)
  end
  waiter:cancel()
  for _, s in ipairs({ "INT", "TERM" }) do lc.signals.unwatch(s) end
end

function M.main(args)
  local o, msg = parse(args)
  if not o then return usage_error(msg) end
  if o.help then
    io.stdout:write(M.usage)
    return 0
  end
  local source, err = (o.redis and fleet_source or state_source)(o)
  if not source then
    io.stderr:write("luacrawl: dashboard: ", err, "\n")
    return 2
  end
  local srv
  srv, err = dashboard.open({ listen = o.listen, token = o.token })
  if not srv then
    source.close()
    io.stderr:write(("luacrawl: dashboard %s: %s\n"):format(o.listen, err.message))
    return 2
  end
  io.stderr:write("luacrawl: dashboard: open ", srv:url(), "\n")
  local ok, serr = pcall(serve, srv, source)
  srv:close()
  source.close()
  if not ok then error(serr, 0) end
  return 0
end

return M
