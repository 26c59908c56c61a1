-- luacrawl.cli_state: `luacrawl state FILE [--json]`, what a crawl's state file
-- (crawl --state FILE, crawl_state.lua) holds: finished or not, the pages done by
-- status, the errors by kind, the frontier and its largest hosts, the retries
-- pending, the last commit, the outputs and their committed lengths. With --redis
-- URL --crawl-id NAME, a fleet's crawl kept in Redis (crawl_redis.lua): pages done by
-- status, errors, the frontier, workers alive and their leases.
local lc = require "luacrawl"
local core = require "luacrawl.core"

local M = {}

M.usage = [==[
usage: luacrawl state FILE [--json]
       luacrawl state --redis URL --crawl-id NAME [--json]
  Show what the state FILE of a crawl (luacrawl crawl --state FILE) holds: finished
  or not, pages done by status, errors by kind, the frontier's size and its 10
  largest hosts, retries pending, the time of the last commit, the output files
  and their committed lengths. --json: the same as one JSON object.
  A running crawl's state is read as its last commit shows it, without stopping the
  crawl: the first line says it is running, and by which process when known.
  With --redis and --crawl-id: the crawl a fleet of workers shares in Redis
  (luacrawl crawl --redis): done or not, pages done by status, errors by kind,
  requests queued (retries waiting their time among them) and leased, the 10 hosts
  with the most queued, the workers (when each was last heard from, what it holds,
  how long its lease has left), leases reclaimed and late acknowledgements refused.
Exit status: 0 shown, 2 usage, or a state that cannot be read.
]==]

local function has_table(db, name)
  return db:sql("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1"):one(name) > 0
end

local function counts(db, sql)
  local t = {}
  for _, r in ipairs(db:sql(sql):rows()) do t[#t + 1] = { r[1], r[2] } end
  return t
end

-- The outputs' committed lengths by path: a state keeps a list of {path =, id =,
-- length =} (one of an older luacrawl, {path = length}).
local function output_lengths(stored)
  local t = {}
  for k, v in pairs(stored or {}) do
    if type(v) == "table" and v.path then
      t[v.path] = v.length
    elseif type(v) == "number" then
      t[k] = v
    end
  end
  return t
end

-- The report of the state open in db, as a table (--json prints it as it is).
function M.report(db, path)
  local writer = db.writer and db:writer() or false
  local function meta(key)
    local v = db:meta(key)
    return v and core.json_decode(v) or nil
  end
  local r = {
    path = path,
    identity = meta("crawl.identity"),
    finished_at = meta("crawl.finished"),
    committed_at = meta("crawl.committed_at"),
    outputs = output_lengths(meta("crawl.outputs")),
    totals = meta("crawl.totals") or {},
    statuses = {}, errors = {}, hosts = {}, done = 0, frontier = 0, retries_pending = 0,
  }
  r.finished = r.finished_at ~= nil
  r.running = writer ~= false
  r.pid = type(writer) == "number" and writer or nil
  if has_table(db, "crawl_done") then
    for _, c in ipairs(counts(db, "SELECT status, count(*) FROM crawl_done WHERE status IS NOT NULL GROUP BY status")) do
      r.statuses[tostring(c[1])] = c[2]
      r.done = r.done + c[2]
    end
    for _, c in ipairs(counts(db, "SELECT error, count(*) FROM crawl_done WHERE error IS NOT NULL GROUP BY error")) do
      r.errors[c[1]] = c[2]
      r.done = r.done + c[2]
    end
  end
  if has_table(db, "crawl_frontier") then
    r.frontier = db:sql("SELECT count(*) FROM crawl_frontier"):one()
    for _, c in ipairs(counts(db, "SELECT host, count(*) AS n FROM crawl_frontier GROUP BY host ORDER BY n DESC, host LIMIT 10")) do
      r.hosts[#r.hosts + 1] = { host = c[1], queued = c[2] }
    end
    r.retries_pending = db:sql("SELECT count(*) FROM crawl_frontier WHERE extra LIKE '%\"retries\":%'"):one()
  end
  return r
end

local function sorted_counts(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for i, k in ipairs(keys) do parts[i] = ("%s: %d"):format(k, t[k]) end
  return #parts > 0 and table.concat(parts, ", ") or "none"
end

local function when(t)
  return t and os.date("!%Y-%m-%d %H:%M:%S UTC", t) or "never"
end

function M.format(r)
  local how = r.finished and ("finished on " .. when(r.finished_at)) or "not finished"
  if r.running then how = "running" .. (r.pid and (" (pid %d)"):format(r.pid) or "") end
  local lines = { ("state %s: %s"):format(r.path, how) }
  local id = r.identity
  if id and type(id.start) == "table" then lines[#lines + 1] = "start: " .. table.concat(id.start, " ") end
  lines[#lines + 1] = ("pages done %d: %s"):format(r.done, sorted_counts(r.statuses))
  lines[#lines + 1] = "errors: " .. sorted_counts(r.errors)
  lines[#lines + 1] = ("frontier %d (retries pending %d)"):format(r.frontier, r.retries_pending)
  for _, h in ipairs(r.hosts) do lines[#lines + 1] = ("  %8d  %s"):format(h.queued, h.host) end
  lines[#lines + 1] = "last commit: " .. when(r.committed_at)
  local outs = {}
  for p, len in pairs(r.outputs) do outs[#outs + 1] = ("%s (%d bytes committed)"):format(p, len) end
  table.sort(outs)
  lines[#lines + 1] = "outputs: " .. (#outs > 0 and table.concat(outs, ", ") or "none")
  local t = r.totals
  if t.runs then
    lines[#lines + 1] = ("over %d run(s): %d pages, %d requests, %d items, %d bytes"):format(
      t.runs, t.pages or 0, t.requests or 0, t.items or 0, t.bytes or 0)
  end
  return table.concat(lines, "\n") .. "\n"
end

-- The report of a fleet's crawl (the status script's answer, decoded).
function M.redis_report(st, id)
  local r = {
    crawl_id = id, statuses = {}, errors = {}, done = 0, queued = st.stats.queued or 0,
    leased = st.stats.leased or 0, reclaimed = st.stats.reclaimed or 0, refused = st.stats.refused or 0,
    duplicates = st.stats.duplicates or 0, workers = st.workers, hosts = {}, delayed = st.delayed or 0,
    started = st.meta.started ~= nil, closed = st.closed or {}, host_closed = {},
  }
  for k, v in pairs(st.stats) do
    local status = k:match("^s:(.*)$")
    if status then r.statuses[status] = v end
    local kind = k:match("^e:(.*)$")
    if kind then r.errors[kind] = v end
    local why = k:match("^c:(.*)$")
    if why then r.host_closed[why] = v end
  end
  r.done = (st.stats.pages or 0) + (st.stats.errors or 0)
  r.finished = r.started and r.queued <= 0 and r.leased <= 0
  table.sort(st.hosts, function(a, b)
    if a.queued ~= b.queued then return a.queued > b.queued end
    return a.host < b.host
  end)
  for i = 1, math.min(10, #st.hosts) do r.hosts[i] = st.hosts[i] end
  table.sort(r.workers, function(a, b) return a.worker < b.worker end)
  return r
end

function M.format_redis(r, label)
  local state = r.finished and "done" or (r.started and "in progress" or "not started")
  local lines = { ("crawl %s in %s: %s"):format(r.crawl_id, label, state) }
  lines[#lines + 1] = ("pages done %d: %s"):format(r.done, sorted_counts(r.statuses))
  lines[#lines + 1] = "errors: " .. sorted_counts(r.errors)
  local delayed = r.delayed > 0 and (" (%d of them retries waiting)"):format(r.delayed) or ""
  lines[#lines + 1] = ("frontier %d queued%s, %d leased"):format(r.queued, delayed, r.leased)
  for _, h in ipairs(r.hosts) do lines[#lines + 1] = ("  %8d  %s"):format(h.queued, h.host) end
  if #r.closed > 0 then
    local hosts = {}
    for i, c in ipairs(r.closed) do hosts[i] = ("%s (%s)"):format(c.host, c.reason) end
    lines[#lines + 1] = ("hosts closed: %s; requests dropped: %s"):format(table.concat(hosts, ", "),
      sorted_counts(r.host_closed))
  end
  lines[#lines + 1] = ("workers %d:"):format(#r.workers)
  for _, w in ipairs(r.workers) do
    local seen = w.seen_ms_ago and ("heard from %.1f s ago"):format(w.seen_ms_ago / 1000) or "gone"
    local lease = w.lease_ms_left and ("lease %.1f s left"):format(w.lease_ms_left / 1000) or "no lease"
    if w.lease_ms_left and w.lease_ms_left < 0 then lease = "lease expired" end
    lines[#lines + 1] = ("  %s: %s, %d leased, %s"):format(w.worker, seen, w.leased, lease)
  end
  lines[#lines + 1] = ("leases reclaimed: %d requests; late acknowledgements refused: %d"):format(
    r.reclaimed, r.refused)
  return table.concat(lines, "\n") .. "\n"
end

-- The report of the state file at path (M.report), or nil and a message: no such
-- file, or one that cannot be opened (in use by a running crawl, not a state).
-- luacrawl dashboard --state reads it too (cli_dashboard.lua).
function M.read(path)
  -- Opening would make a new state: one that is not there is an error here.
  local f = io.open(path, "rb")
  if not f then return nil, ("state %s: no such file"):format(path) end
  f:close()
  local db, err = lc.store.open(path, { read_only = true })
  if not db then return nil, tostring(err.message or err) end
  local ok, r = pcall(M.report, db, path)
  db:close()
  if not ok then return nil, ("state %s: %s"):format(path, tostring(r)) end
  return r
end

local function redis_main(url, id, json)
  local u, msg = lc.redis.parse_url(url)
  if not u then
    io.stderr:write(("luacrawl: state: --redis: %s\n"):format(msg))
    return 2
  end
  local label = url:gsub("^(%a+://)[^/@]*@", "%1***@", 1)
  local conn, err = lc.redis.connect(url, { timeout = 10 })
  if not conn then
    local why = tostring(err.message or err):gsub("^redis [^ ]+: ", ""):gsub("^cannot connect: ", "")
    io.stderr:write(("luacrawl: state: redis %s: cannot connect: %s\n"):format(label, why))
    return 2
  end
  local prefix = require("luacrawl.frontier_redis").prefix(id)
  local script = conn:script(require("luacrawl.frontier_redis_scripts").status)
  local res
  res, err = script:call({ prefix .. "stats" }, { prefix })
  conn:close()
  if not res then
    io.stderr:write(("luacrawl: state: redis %s: %s\n"):format(label, tostring(err.message or err)))
    return 2
  end
  -- Something that speaks RESP but is not Redis running our script: said, not a traceback.
  local ok, st = pcall(core.json_decode, res)
  if not ok or type(st) ~= "table" or type(st.meta) ~= "table" then
    io.stderr:write(("luacrawl: state: redis %s: not a crawl's status: %q\n"):format(label, tostring(res):sub(1, 60)))
    return 2
  end
  if not st.meta.identity then
    io.stderr:write(("luacrawl: state: redis %s has no crawl %s\n"):format(label, id))
    return 2
  end
  local r = M.redis_report(st, id)
  io.stdout:write(json and core.json_encode(r) .. "\n" or M.format_redis(r, label))
  return 0
end

function M.main(args)
  local path, json, redis, crawl_id
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--help" or a == "-h" then
      io.stdout:write(M.usage)
      return 0
    elseif a == "--json" then
      json = true
    elseif a == "--redis" or a == "--crawl-id" then
      local v = args[i + 1]
      if not v then
        io.stderr:write(("luacrawl: state: %s needs a value (see luacrawl state --help)\n"):format(a))
        return 2
      end
      if a == "--redis" then redis = v else crawl_id = v end
      i = i + 1
    elseif a:sub(1, 1) == "-" or path then
      io.stderr:write(("luacrawl: state: unexpected argument '%s' (see luacrawl state --help)\n"):format(a))
      return 2
    else
      path = a
    end
    i = i + 1
  end
  if redis or crawl_id then
    if not (redis and crawl_id) or path then
      io.stderr:write("luacrawl: state: --redis URL goes with --crawl-id NAME, and no file"
        .. " (see luacrawl state --help)\n")
      return 2
    end
    return redis_main(redis, crawl_id, json)
  end
  if not path then
    io.stderr:write("luacrawl: state: which state file? (see luacrawl state --help)\n")
    return 2
  end
  local r, err = M.read(path)
  if not r then
    io.stderr:write("luacrawl: ", err, "\n")
    return 2
  end
  io.stdout:write(json and core.json_encode(r) .. "\n" or M.format(r))
  return 0
end

return M
