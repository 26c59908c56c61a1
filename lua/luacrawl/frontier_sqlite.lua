-- luacrawl.frontier_sqlite: the crawl's frontier kept in a state store (lc.store.open,
-- engine/store.c): the SQLite backend of the frontier interface (docs/architecture.md,
-- "The frontier interface"). It has the methods of the memory frontier
-- (luacrawl.frontier), so the crawl calls one or the other the same way.
--
-- Every request the crawl queues is a row of crawl_frontier, written when it is
-- queued (or held, waiting for its robots.txt) and deleted when its page is done:
-- the rows are the requests not done, and they are what a resume starts from. The
-- scheduling (per-host slots, delays, backoff) is the memory frontier's, over a
-- window of each host's next requests (at most `window` of them in memory); the
-- rest of a host's requests wait on disk and are read in as its window empties, in
-- the order they were queued (first in, first out; depth-first, last in, first out).
-- In a breadth-first crawl that is the order of depth; a request with a priority
-- above 0 never waits on disk (it goes in its host's window, which orders by
-- priority), nor does one queued again (a retry, one back from robots.txt). So a
-- frontier of millions of URLs costs memory for the windows only. The table is keyed
-- by (host, id), WITHOUT ROWID: a host's rows lie together in the order queued, each
-- insert and delete is one B-tree's, not a table's and an index's. (Ordering the disk
-- by priority and depth too made each insert three times as dear: many insertion
-- points, pages split half full.)
--
-- The rows written are not durable until the store commits (the crawl does, at its
-- commit interval: crawl_state.lua); a kill loses what came after the last commit,
-- and the requests done since are done again at the next run. So the rows of new
-- requests and those of requests done are not written one by one: they are gathered
-- in lists (a row's id is ours, the next of a counter, so a request has it at once)
-- and written by flush, one call a statement for all of them (stmt:exec_many), before
-- each read of the table, each commit (f:flush, which crawl_state.lua calls) and
-- when BATCH rows wait.
--
-- Requests of an earlier run (rows there at open) pass resume_gate(req) when they
-- are read in: true queues them, false drops them (the row goes), a table (a list
-- of requests waiting for robots.txt) holds them there.
local lc = require "luacrawl"
local frontier = require "luacrawl.frontier"

local M = {}

-- Rows gathered at most before they are written (flush): a bound on the memory they
-- hold between commits.
local BATCH = 4096

-- Rows one statement of a flush writes (INSERT ... VALUES (...) x GROUP, DELETE ... IN
-- (GROUP ids)); the rest one a statement. A statement's work besides its rows is
-- shared by GROUP of them: a third of the cost of a row, about.
local GROUP = 8
M.group = GROUP

-- "(?,?,?),(?,?,?)": m rows of k values.
function M.values(k, m)
  local one = "(" .. ("?,"):rep(k - 1) .. "?)"
  return (one .. ","):rep(m - 1) .. one
end

-- The rows 1..n of the column lists (...) through multi (GROUP rows a step) and single.
function M.write_rows(multi, single, n, ...)
  local full = n - n % GROUP
  if full > 0 then multi:exec_many(1, full, ...) end
  if full < n then single:exec_many(full + 1, n, ...) end
end

local SCHEMA = {
  "CREATE TABLE IF NOT EXISTS crawl_frontier(host TEXT NOT NULL, id INTEGER NOT NULL, priority REAL NOT NULL,"
    .. " depth INTEGER NOT NULL, url TEXT NOT NULL, referrer TEXT, extra TEXT, PRIMARY KEY(host, id)) WITHOUT ROWID",
  -- A host's backoff (a 429 or 503, crawler:backoff), until a wall-clock time: a
  -- resumed crawl waits it out too.
  "CREATE TABLE IF NOT EXISTS crawl_backoff(host TEXT PRIMARY KEY, until REAL NOT NULL) WITHOUT ROWID",
}

local DF = {}
DF.__index = DF

-- The fields of a request read back (stmt:records), in the order of the columns of
-- next_rows and rows_after; extra is unpacked into the others.
local FIELDS = { "sid", "priority", "depth", "url", "referrer", "extra" }

-- The fields of a request kept in their own columns; any other goes in `extra`
-- (pack/unpack).
local COLUMNS = { url = true, depth = true, referrer = true, key = true, priority = true, sid = true }
M.columns = COLUMNS

-- f = frontier_sqlite.open(db, opts): opts as frontier.new's, and
--   window       requests of one host in memory (default 64)
--   pack(req)    -> text or nil: the request's other fields (extra)
--   unpack(text, req)  sets them back
--   resume_gate(req)   as above (default: every request is queued)
function M.open(db, opts)
  for _, sql in ipairs(SCHEMA) do db:sql(sql):exec() end
  local order = opts.depth_first and "id DESC" or "id"
  local self = setmetatable({
    db = db,
    mem = frontier.new(opts),
    window = opts.window or 64,
    pack = opts.pack or function() return nil end,
    unpack = opts.unpack or function() end,
    resume_gate = opts.resume_gate,
    disk = {}, -- host key -> requests on disk only (not read into memory)
    ndisk = 0,
    loaded = {}, -- row id -> host key: rows read in (queued in memory, in flight, held)
    nloaded = {}, -- host key -> rows of it read in
    bf = not opts.depth_first,
    cursor = {}, -- host key -> breadth-first, every row of it up to this id is read in (or gone)
    insert = db:sql("INSERT INTO crawl_frontier(id, host, priority, depth, url, referrer, extra)"
      .. " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
    insert_group = db:sql("INSERT INTO crawl_frontier(id, host, priority, depth, url, referrer, extra) VALUES "
      .. M.values(7, GROUP)),
    delete = db:sql("DELETE FROM crawl_frontier WHERE host = ?1 AND id = ?2"),
    delete_group = db:sql("DELETE FROM crawl_frontier WHERE host = ? AND id IN (" .. ("?,"):rep(GROUP - 1) .. "?)"),
    delete_range = db:sql("DELETE FROM crawl_frontier WHERE host = ?1 AND id >= ?2 AND id <= ?3"),
    update_extra = db:sql("UPDATE crawl_frontier SET extra = ?3 WHERE host = ?1 AND id = ?2"),
    next_rows = db:sql("SELECT id, priority, depth, url, referrer, extra FROM crawl_frontier WHERE host = ?1 ORDER BY "
      .. order .. " LIMIT ?2"),
    rows_after = db:sql("SELECT id, priority, depth, url, referrer, extra FROM crawl_frontier WHERE host = ?1"
      .. " AND id > ?2 ORDER BY id LIMIT ?3"),
    -- The writes not made yet (flush): rows to insert, column by column, and ids to delete.
    nins = 0, ins_id = {}, ins_host = {}, ins_priority = {}, ins_depth = {}, ins_url = {}, ins_referrer = {},
    ins_extra = {},
    -- Deletes by host (a group's ids are of one host): del_ids[key] = {id, ...}, and
    -- del_keys the hosts in it; g_* and s_* the columns of a flush's groups and singles.
    ndel = 0, del_keys = {}, del_ids = {}, g_host = {}, g_ids = {}, s_host = {}, s_id = {},
    r_host = {}, r_lo = {}, r_hi = {},
    drop_rows = db:sql("DELETE FROM crawl_frontier WHERE host = ?1"),
    save_backoff = db:sql("INSERT OR REPLACE INTO crawl_backoff(host, until) VALUES (?1, ?2)"),
  }, DF)
  -- Backoffs still running, from wall-clock time to the loop's clock.
  local wall, mono = os.time(), lc.now()
  for _, r in ipairs(db:sql("SELECT host, until FROM crawl_backoff WHERE until > ?1"):rows(wall)) do
    self.mem:backoff(r[1], mono + (r[2] - wall))
  end
  local max_id = 0
  for _, r in ipairs(db:sql("SELECT host, count(*), max(id) FROM crawl_frontier GROUP BY host"):rows()) do
    self.disk[r[1]] = r[2]
    self.ndisk = self.ndisk + r[2]
    if r[3] > max_id then max_id = r[3] end
  end
  self.resumed = self.ndisk
  self.first_new = max_id + 1
  self.next_id = self.first_new
  return self
end

-- Start on the requests of earlier runs: each host's window is read in now.
function DF:resume()
  local hosts = {}
  for key in pairs(self.disk) do hosts[#hosts + 1] = key end
  table.sort(hosts)
  for _, key in ipairs(hosts) do self:refill(key) end
end

-- A statement run; a failure of the store (disk full, I/O) is told once to on_error
-- (the crawl stops on it) and the frontier goes on in memory: the store refuses every
-- later write, and the next run starts from its last commit.
function DF:run(stmt, method, ...)
  if self.failed then return nil end
  local ok, a, b
  if method then
    ok, a, b = pcall(stmt[method], stmt, ...)
  else -- a function
    ok, a, b = pcall(stmt, ...)
  end
  if ok then return a, b end
  self.failed = a
  if self.on_error then self.on_error(a) end
  return nil
end

function DF:mark_loaded(sid, key)
  if self.loaded[sid] then return end
  self.loaded[sid] = key
  self.nloaded[key] = (self.nloaded[key] or 0) + 1
end

function DF:unload(sid)
  local key = self.loaded[sid]
  if not key then return end
  self.loaded[sid] = nil
  local n = self.nloaded[key] - 1
  self.nloaded[key] = n > 0 and n or nil
end

-- A new row (written at the next flush); its id.
function DF:add_row(key, priority, depth, url, referrer, extra)
  local id = self.next_id
  self.next_id = id + 1
  local n = self.nins + 1
  self.nins = n
  self.ins_id[n], self.ins_host[n], self.ins_priority[n], self.ins_depth[n] = id, key, priority, depth
  self.ins_url[n], self.ins_referrer[n], self.ins_extra[n] = url, referrer, extra
  if n >= BATCH then self:flush() end
  return id
end

-- The row (key, id) goes (at the next flush).
function DF:delete_row(key, id)
  local ids = self.del_ids[key]
  if not ids then
    ids = {}
    self.del_ids[key] = ids
    self.del_keys[#self.del_keys + 1] = key
  end
  ids[#ids + 1] = id
  local n = self.ndel + 1
  self.ndel = n
  if n >= BATCH then self:flush() end
end

-- The deletes gathered: a run of consecutive ids of a host, one statement (ids are
-- unique: no other row lies between them; a window read in id order is done nearly
-- in that order); the others GROUP ids of a host a statement, the rest one each.
function DF:flush_deletes()
  local g, s, r = 0, 0, 0
  local gh, gids, sh, sid = self.g_host, self.g_ids, self.s_host, self.s_id
  local rh, rlo, rhi = self.r_host, self.r_lo, self.r_hi
  for j = #gids + 1, GROUP do gids[j] = {} end
  for _, key in ipairs(self.del_keys) do
    local all = self.del_ids[key]
    table.sort(all)
    local ids, n, a, total = {}, 0, 1, #all
    while a <= total do
      local b = a
      while b < total and all[b + 1] - all[b] <= 1 do b = b + 1 end
      if b - a >= 2 then -- three or more: a range
        r = r + 1
        rh[r], rlo[r], rhi[r] = key, all[a], all[b]
      else
        for k = a, b do
          n = n + 1
          ids[n] = all[k]
        end
      end
      a = b + 1
    end
    local full = n - n % GROUP
    for i = 1, full, GROUP do
      g = g + 1
      gh[g] = key
      for j = 1, GROUP do gids[j][g] = ids[i + j - 1] end
    end
    for i = full + 1, n do
      s = s + 1
      sh[s], sid[s] = key, ids[i]
    end
  end
  self.del_keys, self.del_ids = {}, {}
  if r > 0 then self:run(self.delete_range, "exec_many", 1, r, rh, rlo, rhi) end
  if g > 0 then self:run(self.delete_group, "exec_many", 1, g, gh, unpack(gids, 1, GROUP)) end
  if s > 0 then self:run(self.delete, "exec_many", 1, s, sh, sid) end
end

-- Write the rows gathered: the inserts first (a row is deleted after it is written,
-- never before). A failure is told to on_error as run's; the rows are dropped then.
function DF:flush()
  local ni, nd = self.nins, self.ndel
  if ni == 0 and nd == 0 then return end
  self.nins, self.ndel = 0, 0
  if ni > 0 then
    self:run(M.write_rows, nil, self.insert_group, self.insert, ni, self.ins_id, self.ins_host, self.ins_priority,
      self.ins_depth, self.ins_url, self.ins_referrer, self.ins_extra)
  end
  if nd > 0 then self:flush_deletes() end
  -- A full batch of new rows (pushes with nothing else between, as a frontier of
  -- millions of URLs is filled): the collector paced as if each had made a request
  -- table (128 bytes), as one queued to disk did before rows were gathered. With no
  -- garbage made by a push, its cycles ran longer and let the Lua heap peak at 2.8
  -- times what it held (2.3 before), 255 MB of RSS at 5,000,000 URLs. (Not at every
  -- flush: a crawl's pages make garbage enough, and the steps cost it 5% of its time.)
  if ni >= BATCH then collectgarbage("step", math.floor(ni / 8)) end
end

-- The row of req, made now unless it has one.
function DF:row(req)
  if req.sid then return req.sid end
  req.sid = self:add_row(req.key, req.priority or 0, req.depth or 0, req.url, req.referrer, self.pack(req))
  return req.sid
end

-- req (with its row) in memory when its host's window has room and nothing of the
-- host waits on disk (which comes first), or when it must not wait on disk (again:
-- a request queued before, which disk order would pass over; a priority); else on
-- disk only.
function DF:place(req, again)
  local key = req.key
  if again or (req.priority or 0) > 0 then
    self:mark_loaded(req.sid, key)
    self.mem:push(req)
  elseif not self:to_disk(key, req.sid) then
    self.mem:push(req)
  end
end

-- A new row of key (id): in memory when the host's window has room and nothing of it
-- waits on disk (which comes first): false, for the caller to push it to memory; else
-- on disk only: true.
function DF:to_disk(key, id)
  local mem = self.mem
  if (self.disk[key] or 0) == 0 and mem:queued_of(key) < self.window then
    self:mark_loaded(id, key)
    -- Nothing of the host on disk: its rows up to this one are all read in.
    if self.bf then self.cursor[key] = id end
    return false
  end
  self:unload(id)
  self.disk[key] = (self.disk[key] or 0) + 1
  self.ndisk = self.ndisk + 1
  -- A host with requests on disk has some in memory too: refill is called as they go.
  if mem:queued_of(key) == 0 then self:refill(key) end
  return true
end

function DF:push(req)
  if req.key == nil then error("frontier: request without a host key", 2) end
  local again = req.sid ~= nil
  self:row(req)
  self:place(req, again)
end

-- A link with nothing but its URL, depth and referrer: no other field to pack.
function DF:push_url(key, url, depth, referrer)
  if key == nil then error("frontier: request without a host key", 2) end
  depth = depth or 0
  local id = self:add_row(key, 0, depth, url, referrer, nil)
  -- A request table only for one that goes to memory (most wait on disk).
  if not self:to_disk(key, id) then
    self.mem:push({ key = key, url = url, depth = depth, referrer = referrer, sid = id })
  end
end

-- Read the next requests of key from disk until its window is full. Breadth-first,
-- from the host's cursor on (rows after the last one read); depth-first, the newest
-- rows, passing over those read in already.
function DF:refill(key)
  local on_disk = self.disk[key] or 0
  if on_disk == 0 then return end
  local want = self.window - self.mem:queued_of(key)
  if want <= 0 then return end
  self:flush() -- the table as the frontier has it
  local loaded, gate, bf = self.loaded, self.resume_gate, self.bf
  local after = self.cursor[key] or 0
  while want > 0 and on_disk > 0 do
    local limit, rows
    if bf then
      limit = want
      rows = self:run(self.rows_after, "records", FIELDS, key, after, limit) or {}
    else
      limit = want + (self.nloaded[key] or 0)
      rows = self:run(self.next_rows, "records", FIELDS, key, limit) or {}
    end
    for _, req in ipairs(rows) do -- each row a request: its columns as fields
      if want <= 0 or on_disk <= 0 then break end
      local sid = req.sid
      after = sid
      if not loaded[sid] then
        req.key = key
        if req.priority == 0 then req.priority = nil end
        local extra = req.extra
        if extra then
          req.extra = nil
          self.unpack(extra, req)
        end
        on_disk = on_disk - 1
        self.ndisk = self.ndisk - 1
        local ok = true
        if gate and sid < self.first_new then ok = gate(req) end
        if ok == true then
          self:mark_loaded(sid, key)
          self.mem:push(req)
          want = want - 1
        elseif ok == false then
          self:delete_row(key, sid)
        else
          self:mark_loaded(sid, key) -- held until the gate's robots.txt is in
        end
      end
    end
    if #rows < limit then -- every row of the host read: those still counted are gone
      if want > 0 then
        self.ndisk = self.ndisk - on_disk
        on_disk = 0
      end
      break
    end
    if not bf then break end -- depth-first, one read holds `want` rows not read in, if there are
  end
  if bf then self.cursor[key] = after end
  self.disk[key] = on_disk > 0 and on_disk or nil
end

function DF:pop(now)
  local req, wait = self.mem:pop(now)
  if req then
    local key = req.key
    if self.disk[key] and self.mem:queued_of(key) * 2 < self.window then self:refill(key) end
  end
  return req, wait
end

-- The request's page is done: its row goes (unless it is to be retried: retry).
function DF:done(req, now)
  self.mem:done(req, now)
  if req.retrying then
    req.retrying = nil
    return
  end
  self:forget(req)
end

-- A request held outside the frontier (waiting for robots.txt) has its row.
function DF:hold(req)
  self:mark_loaded(self:row(req), req.key)
end

-- A request that ends outside the frontier (robots.txt said no) loses its row.
function DF:forget(req)
  local sid = req.sid
  if not sid then return end
  self:delete_row(self.loaded[sid] or req.key, sid)
  self:unload(sid)
  req.sid = nil
end

-- req will be pushed again after a delay: its row stays, with its retry count.
function DF:retry(req)
  if not req.sid then return end
  req.retrying = true
  self:flush() -- its row written first
  self:run(self.update_extra, "exec", self.loaded[req.sid] or req.key, req.sid, self.pack(req))
end

function DF:backoff(key, untill)
  self.mem:backoff(key, untill)
  self:run(self.save_backoff, "exec", key, os.time() + (untill - lc.now()))
end

function DF:set_delay(key, delay, paced)
  return self.mem:set_delay(key, delay, paced)
end

function DF:set_per_host(key, n)
  return self.mem:set_per_host(key, n)
end

function DF:per_host_of(key)
  return self.mem:per_host_of(key)
end

function DF:delay_of(key)
  return self.mem:delay_of(key)
end

function DF:queued_of(key)
  return self.mem:queued_of(key) + (self.disk[key] or 0)
end

function DF:size()
  return self.mem:size() + self.ndisk
end

function DF:empty()
  return self.mem:empty() and self.ndisk == 0
end

-- Drop every queued request of a host, in memory and on disk. Returns the list of
-- those that were in memory, and how many were on disk.
function DF:drop_host(key)
  local dropped = self.mem:drop_host(key)
  for _, req in ipairs(dropped) do self:unload(req.sid) end
  local on_disk = self.disk[key] or 0
  self:flush()
  self:run(self.drop_rows, "exec", key)
  -- Rows in flight or held were deleted with the others: their ends find none.
  for sid, k in pairs(self.loaded) do
    if k == key then self:unload(sid) end
  end
  self.disk[key] = nil
  self.ndisk = self.ndisk - on_disk
  return dropped, on_disk
end

return M
