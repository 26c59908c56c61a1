-- luacrawl.crawl_state: a crawl kept in a state file (spec.state, `--state FILE`), so
-- that it can be stopped at any instant (kill -9 included) and run again to go on
-- where it was. docs/crawl.md, "Long crawls", has the rules. A state is one of the
-- crawl's durable objects (crawl_durable.lua has the interface); its main points:
--   M.open(crawler)          at crawl.new: the store, the identity check, the seen
--                            set (from the frontier's and the done pages' URLs), the
--                            frontier (luacrawl.frontier_sqlite) and the committed
--                            length of each output file
--   state:fetched(req, res)  a page fetched: its row in crawl_done (status, final URL,
--   state:failed(req, kind)  time, validators, digest, the record's fields a 304
--                            keeps: crawl_record.lua), or its error
--   state:commit(crawler)    when pages that ended hold a quarter of the slots (or
--                            every commit_interval seconds): outputs flushed, their
--                            lengths and the stats written, and the transaction
--                            committed
--   state:finish(crawler)    at the end: the last commit, "finished" when nothing is
--                            left to do, and the store closed
--
-- What makes a resume exact: a page's records reach the outputs in the same step (no
-- yield) as its row leaves the frontier (crawl_outputs.lua holds them until its end); each
-- commit writes the outputs' lengths with the rows, and a resume cuts each output
-- back to its committed length. So the records past it belong to pages that are not
-- done in the state, which are fetched and written again.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local frontier_sqlite = require "luacrawl.frontier_sqlite"
local crawl_dupes = require "luacrawl.crawl_dupes"
local stored_request = require "luacrawl.stored_request"
local crawl_record = require "luacrawl.crawl_record"
local report = require "luacrawl.crawl_report"

local json_encode, json_decode = core.json_encode, core.json_decode
local EMPTY_DIGEST = core.digest("")

local M = {}

-- 0: pages that ended hold their slots until a commit (a kill then costs at most
-- `concurrency` requests, in flight or done since the commit: State:commit_due);
-- S > 0: a commit every S seconds (a kill also costs the pages done since the last
-- commit, fetched again at the next run).
M.default_commit_interval = 0

-- With interval 0: the longest the dispatcher waits for a commit, when pages that
-- ended hold some slots, fewer than the batch, and no slot is free (State:commit_due).
M.commit_gap = 0.005

-- Seconds between the saves of the stats luacrawl report reads (crawl.report).
M.report_interval = 5

local DONE_SQL = {
  -- Appended in the order pages are done (no index: each insert writes the last page);
  -- a recrawl deletes a page's row when it is done again. record: JSON of the page
  -- record's fields that a recrawl's 304 keeps (crawl_record.lua), NULL for a crawl
  -- that writes no record.
  "CREATE TABLE IF NOT EXISTS crawl_done(id INTEGER PRIMARY KEY, url TEXT NOT NULL, status INTEGER,"
    .. " final_url TEXT, fetched_at REAL NOT NULL, etag TEXT, last_modified TEXT, digest TEXT, error TEXT,"
    .. " depth INTEGER, record TEXT)",
  -- The dedupe keys (a spec's dedupe_key, a request's own) of the pages done: the
  -- seen set holds them at the next open, as it holds the URLs of crawl_done.
  "CREATE TABLE IF NOT EXISTS crawl_keys(key TEXT PRIMARY KEY) WITHOUT ROWID",
  "CREATE TABLE IF NOT EXISTS crawl_robots(origin TEXT PRIMARY KEY, status INTEGER NOT NULL, location TEXT,"
    .. " body TEXT NOT NULL, fetched_at REAL NOT NULL) WITHOUT ROWID",
}

-- Done rows gathered at most before they are written (flush_done).
local BATCH = 4096

-- RFC 9309 2.4: a robots.txt may be cached for up to 24 hours.
M.robots_max_age = 24 * 3600

-- Check the spec's state fields (raises level 0, for crawl_spec.check).
function M.check(s)
  local st = s.state
  if st ~= nil and (type(st) ~= "string" or st == "") then
    error("crawl.run: state must be the path of a state file (a string)", 0)
  end
  if st ~= nil and s.from_warc ~= nil then
    error("crawl.run: state does not go with from_warc (a replay fetches nothing to keep)", 0)
  end
  if s.commit_interval ~= nil then
    local ok, err = pcall(core.check_number, s.commit_interval, "crawl.run: commit_interval", 0, 24 * 3600)
    if not ok then error(tostring(err), 0) end
  end
  if s.callbacks ~= nil then
    if type(s.callbacks) ~= "table" then error("crawl.run: callbacks must be a table of name = function", 0) end
    for k, v in pairs(s.callbacks) do
      if type(k) ~= "string" or type(v) ~= "function" then
        error("crawl.run: callbacks must be a table of name = function", 0)
      end
    end
  end
  if s.recrawl ~= nil then
    local ok, err = pcall(core.check_number, s.recrawl, "crawl.run: recrawl (seconds)", 0)
    if not ok then error(tostring(err), 0) end
    if not st then error("crawl.run: recrawl needs a state (state = FILE) of an earlier crawl", 0) end
  end
end

-- The crawl's identity: its start URLs and scope, as canonical text (keys sorted; a
-- function is named as one, so two crawls with scope functions are told apart by
-- their URLs and the rest only).
local function canonical(v)
  local t = type(v)
  if t == "function" or t == "userdata" then return '"<' .. t .. '>"' end
  if t ~= "table" then return json_encode(v) end
  if #v > 0 then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = canonical(x) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local parts = {}
  for i, k in ipairs(keys) do parts[i] = json_encode(k) .. ":" .. canonical(v[k] == nil and v[tonumber(k)] or v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

function M.identity(spec)
  local start = spec.start
  if type(start) == "string" then start = { start } end
  local starts = "<function>"
  if type(start) == "table" then
    starts = {}
    for i, item in ipairs(start) do starts[i] = type(item) == "table" and item.url or item end
  end
  return canonical({
    start = starts, allow = spec.allow or false, deny = spec.deny or false,
    span_hosts = spec.span_hosts or false, max_depth = spec.max_depth or false, host_key = spec.host_key or false,
  })
end

-- What differs between two identities, in words: "start URLs http://a/ (this crawl:
-- http://b/)", "allow, span_hosts".
function M.differences(stored, current)
  local ok, a = pcall(json_decode, stored)
  local b = json_decode(current)
  if not ok or type(a) ~= "table" then return "an identity this luacrawl does not read" end
  local parts = {}
  local function starts(v) return type(v) == "table" and table.concat(v, " ") or tostring(v) end
  if canonical(a.start) ~= canonical(b.start) then
    parts[#parts + 1] = ("start URLs %s; this crawl: %s"):format(starts(a.start), starts(b.start))
  end
  local scope = {}
  for _, k in ipairs({ "allow", "deny", "span_hosts", "max_depth", "host_key" }) do
    if canonical(a[k]) ~= canonical(b[k]) then scope[#scope + 1] = k end
  end
  if #scope > 0 then parts[#parts + 1] = "another scope: " .. table.concat(scope, ", ") end
  return #parts > 0 and table.concat(parts, "; ") or "another identity"
end

-- The outputs an earlier run committed, as a list of {path = its absolute name, id =
-- its device and inode, length = its committed bytes}. A state of an older luacrawl
-- kept {path = length}, the path as it was typed: resolved from here.
local function committed_outputs(stored)
  local list = {}
  for k, v in pairs(stored or {}) do
    if type(k) == "number" then
      list[#list + 1] = v
    elseif type(v) == "number" then
      local id, name = core.file_id(k)
      list[#list + 1] = { path = name or k, id = id or nil, length = v }
    end
  end
  return list
end

-- kept: a page's items wait for its end, and a request stopped stays for the next run.
local State = { kind = "state", kept = true }
State.__index = State

-- An error of the state as the crawl raises it: "state FILE: ..." with the store's kind.
local function state_error(err)
  if lc.is_error(err) then return err end
  return lc.error("io", tostring(err))
end

-- Open the state of crawler's spec (nil without one). Raises an lc error (kind
-- corrupt, incompatible, locked, read_only, disk_full, io) that crawl.new passes on.
function M.open(crawler)
  local spec = crawler.spec
  if not spec.state then return nil end
  local db, err = lc.store.open(spec.state)
  if not db then error(err, 0) end
  local self = setmetatable({
    db = db, path = spec.state, spec = spec,
    host_key = function(url) return crawler:host_key(url) end,
    interval = spec.commit_interval or M.default_commit_interval,
    uncommitted = 0, batch = math.max(1, math.floor(spec.concurrency / 2)), committed_at = lc.now(),
    -- Rows of crawl_done not written yet (flush_done), column by column, and the ids
    -- of the rows a recrawl replaces.
    ndone = 0, d_url = {}, d_status = {}, d_final = {}, d_at = {}, d_etag = {}, d_lm = {}, d_digest = {},
    d_error = {}, d_depth = {}, d_record = {}, d_req = {}, nforget = 0, forget_id = {}, nkeys = 0, d_keys = {},
    -- Pages done in this run: committed, and since the last commit (the totals' pages).
    pages_committed = 0, pages_pending = 0,
  }, State)
  local ok, oerr = pcall(self.setup, self, crawler)
  if not ok then
    db:abandon()
    error(state_error(oerr), 0)
  end
  return self
end

function State:meta(key)
  local v = self.db:meta(key)
  if v == nil then return nil end
  return json_decode(v)
end

function State:set_meta(key, v)
  self.db:set_meta(key, json_encode(v))
end

-- A state of a luacrawl before crawl_done had its record column gains it (NULL in
-- its rows: a recrawl fetches those pages whole once, crawl_record.lua).
local function migrate(db)
  if db:sql("SELECT count(*) FROM pragma_table_info('crawl_done') WHERE name = 'record'"):one() == 0 then
    db:sql("ALTER TABLE crawl_done ADD COLUMN record TEXT"):exec()
  end
end

function State:setup(crawler)
  local spec, db = self.spec, self.db
  for _, sql in ipairs(DONE_SQL) do db:sql(sql):exec() end
  migrate(db)
  local id = M.identity(spec)
  local stored = db:meta("crawl.identity")
  if stored and stored ~= id and not spec.state_force then
    error(lc.error("incompatible", ("state %s was made by another crawl (%s): use another state file, or "
      .. "--state-force (state_force = true) to go on with it"):format(self.path, M.differences(stored, id))), 0)
  end
  self.resumed = stored ~= nil
  db:set_meta("crawl.identity", id)
  self.finished_at = self:meta("crawl.finished")
  self.totals = self:meta("crawl.totals") or {}
  self.outputs = committed_outputs(self:meta("crawl.outputs"))
  local insert_done = "INSERT INTO crawl_done(url, status, final_url, fetched_at, etag, last_modified, digest,"
    .. " error, depth, record) VALUES "
  self.record_done = db:sql(insert_done .. frontier_sqlite.values(10, 1))
  self.record_done_group = db:sql(insert_done .. frontier_sqlite.values(10, frontier_sqlite.group))
  self.forget_done = db:sql("DELETE FROM crawl_done WHERE id = ?1")
  self.record_key = db:sql("INSERT OR IGNORE INTO crawl_keys(key) VALUES (?1)")
  self.robots_get = db:sql("SELECT status, location, body FROM crawl_robots WHERE origin = ?1 AND fetched_at > ?2")
  self.robots_put = db:sql("INSERT OR REPLACE INTO crawl_robots(origin, status, location, body, fetched_at)"
    .. " VALUES (?1, ?2, ?3, ?4, ?5)")
  db:commit()
end

-- The robots.txt of origin an earlier run (or this one) read less than a day ago, as
-- the response the crawl reads it from (status, body, Location), or nil.
function State:robots(origin)
  if self.error then return nil end
  local ok, status, location, body = pcall(self.robots_get.one, self.robots_get, origin, os.time() - M.robots_max_age)
  if not ok or not status then return nil end
  return { status = status, body = body, headers = { location = location } }
end

function State:save_robots(origin, res)
  if self.error or not res then return end
  local ok, err = pcall(self.robots_put.exec, self.robots_put, origin, res.status, res.headers.location,
    res.body or "", os.time())
  if not ok then self:failed_write(err) end
end

-- The frontier over this state; resume_gate lets requests of an earlier run through
-- the crawl's rules again (robots.txt, which this run has not read yet).
function State:frontier(opts, resume_gate)
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  -- Requests' fields besides their columns, in `extra` (luacrawl.stored_request).
  o.pack, o.unpack = stored_request.codec({
    callbacks = self.spec.callbacks, parse = self.spec.parse, apart = frontier_sqlite.columns,
    where = "kept in the state",
  })
  o.resume_gate = resume_gate
  self.f = frontier_sqlite.open(self.db, o)
  self.f.on_error = function(err) self:failed_write(err) end
  if self.finished_at and self.spec.recrawl then self:start_recrawl() end
  return self.f
end

-- The crawl's entry points (crawl_durable.lua): the frontier over this state, with
-- the seen set as earlier runs left it and the state's failures stopping the crawl;
-- the requests of earlier runs first; the task that commits (and flushes the outputs).
function State:open_frontier(crawler, fopts)
  local f = self:frontier(fopts, function(req) return crawler:resume_gate(req) end)
  self:restore_hosts(crawler, f)
  self:restore_seen(crawler.seen)
  self.on_error = function(err) crawler:state_failed(err) end
  return f
end

function State:resume()
  self.f:resume()
end

-- What hooks set per host key (crawler:set_per_host, crawler:close_host), kept in
-- the meta table ("crawl.hosts": {per_host = {KEY = n}, closed = {KEY = reason}}),
-- written with the next commit, and set again on the crawler and its frontier when
-- the state is opened: a host closed stays closed, its slots stay as set.
function State:save_host(key, field, value)
  self.host_settings[field][key] = value
  self.hosts_dirty = true
end

function State:restore_hosts(crawler, f)
  local saved = self:meta("crawl.hosts")
  local t = { per_host = {}, closed = {} }
  self.host_settings, self.hosts_dirty = t, false
  if type(saved) ~= "table" then return end
  for key, n in pairs(type(saved.per_host) == "table" and saved.per_host or {}) do
    if type(n) == "number" and n >= 1 and n % 1 == 0 then
      t.per_host[key] = n
      f:set_per_host(key, n)
    end
  end
  for key, reason in pairs(type(saved.closed) == "table" and saved.closed or {}) do
    if type(reason) == "string" then
      t.closed[key] = reason
      crawler.closed = crawler.closed or {}
      crawler.closed[key] = reason
    end
  end
end

-- Where an output file goes on from: its committed length (0: a file new to the state).
function State:output_offset(path)
  return self:output_length(path) or 0
end

function State:start(crawler)
  return lc.spawn(self.commit_loop, self, crawler)
end

-- The seen set as an earlier run left it: every URL in the frontier or done, a
-- request's dedupe key instead of its URL when it had one (a URL that an earlier run
-- refused, by robots.txt or a hook, is not in it: asked for again, it is refused again).
function State:restore_seen(seen)
  self.db:sql("SELECT coalesce(json_extract(extra, '$.dedupe_key'), url) FROM crawl_frontier"):seen_urls(seen)
  self.db:sql("SELECT url FROM crawl_done"):seen_urls(seen)
  self.db:sql("SELECT key FROM crawl_keys"):seen_urls(seen)
end

-- The committed length of the output at path (0: an output this state has not
-- written to). The file is found by what it is (its device and inode, else its
-- absolute name), not by how its path was typed: ./out.jsonl, its absolute path or
-- a path from another working directory are the same output.
function State:output_length(path)
  local id, name = core.file_id(path)
  for _, e in ipairs(self.outputs) do
    if (id and e.id == id) or (name and e.path == name) then
      e.claimed = true
      return e.length
    end
  end
  return 0
end

-- Every output with committed records is an output of this run too: records
-- written elsewhere would leave them without the pages done since, and a state
-- that no longer knows them would say nothing. Raises (crawl.new refuses the run).
function State:check_outputs()
  for _, e in ipairs(self.outputs) do
    if not e.claimed and (e.length or 0) > 0 then
      error(("state %s: its crawl wrote %d bytes of records to %s, which this run does not write to: "
        .. "give that output again (-o) to go on, or start afresh with another state file"):format(
        self.path, e.length, e.path), 0)
    end
  end
end

-- An output as a commit records it: its identity (made once, the file open) and length.
local function output_entry(out)
  local e = out.state_entry
  if not e then
    local id, name = core.file_id(out.path)
    e = { path = name or out.path, id = id or nil, format = out.format }
    out.state_entry = e
  end
  e.length = out.file:seek("end")
  return e
end

function State:fetched(req, res)
  local h, before = res.headers, req.recrawl
  local status, etag, lm, digest, record = res.status, h.etag, h["last-modified"], nil, nil
  if before and status == 304 then -- unchanged: what was known of it stays
    status, digest, record = before.status, before.digest, before.record
    etag, lm = etag or before.etag, lm or before.last_modified
  else
    digest = crawl_dupes.digest_of(res) or EMPTY_DIGEST
  end
  -- The final URL only when a redirect made it another (NULL: the URL itself).
  local final = res.url
  if final == req.url then final = nil end
  self:done_row(req, req.url, status, final, os.time(), etag, lm, digest, nil, req.depth or 0, record)
end

-- A page's row in crawl_done (its row of the crawl before, in a recrawl, goes),
-- written with the others at the next commit (or when BATCH wait: flush_done).
-- record: the kept fields' JSON as they were; req.kept_record, which the page's
-- record sets after this call (crawl_record.lua), is read when the row is written.
-- The rows wait whole at least until the next row: the page's record comes first.
function State:done_row(req, url, status, final_url, at, etag, lm, digest, err, depth, record)
  if self.error then return end
  if self.ndone >= BATCH then self:flush_done() end
  if status ~= nil then self.pages_pending = self.pages_pending + 1 end
  local n = self.ndone + 1
  self.ndone = n
  self.d_url[n], self.d_status[n], self.d_final[n], self.d_at[n], self.d_etag[n] = url, status, final_url, at, etag
  self.d_lm[n], self.d_digest[n], self.d_error[n], self.d_depth[n] = lm, digest, err, depth
  self.d_record[n], self.d_req[n] = record, req
  if req.dedupe_key then
    self.nkeys = self.nkeys + 1
    self.d_keys[self.nkeys] = req.dedupe_key
  end
  local before = req.recrawl
  if before and before.row then
    local k = self.nforget + 1
    self.nforget = k
    self.forget_id[k] = before.row
  end
end

-- The record column of the rows gathered: each page's kept fields, as JSON.
function State:kept_records(n)
  local record, reqs = self.d_record, self.d_req
  for i = 1, n do
    local kept = reqs[i].kept_record
    if kept then record[i] = json_encode(kept) end
    reqs[i] = nil
  end
end

-- Write the done rows gathered, in one call (and delete the rows they replace).
function State:flush_done()
  local n, k, nk = self.ndone, self.nforget, self.nkeys
  if n == 0 and k == 0 then return end
  self.ndone, self.nforget, self.nkeys = 0, 0, 0
  if self.error then return end
  local ok, err = true, nil
  if n > 0 then
    ok, err = pcall(self.kept_records, self, n)
    if ok then
      ok, err = pcall(frontier_sqlite.write_rows, self.record_done_group, self.record_done, n, self.d_url,
        self.d_status, self.d_final, self.d_at, self.d_etag, self.d_lm, self.d_digest, self.d_error, self.d_depth,
        self.d_record)
    end
  end
  if ok and k > 0 then ok, err = pcall(self.forget_done.exec_many, self.forget_done, 1, k, self.forget_id) end
  if ok and nk > 0 then ok, err = pcall(self.record_key.exec_many, self.record_key, 1, nk, self.d_keys) end
  if not ok then self:failed_write(err) end
end

function State:failed(req, kind)
  self:done_row(req, req.url, nil, nil, os.time(), nil, nil, nil, kind, req.depth or 0)
end

-- A write of the state failed (disk full, I/O): the store refuses every later call,
-- and the crawl stops (exit status 2); the last commit is intact.
function State:failed_write(err)
  if self.error then return end
  self.error = state_error(err)
  if self.on_error then self.on_error(self.error) end
end

-- Cumulative counts over every run of this state.
local TOTALS = { "pages", "requests", "items", "bytes", "errors_total", "retries" }

-- The pages are those the commit makes done (stats.pages also counts pages whose
-- rows are not committed yet, which a kill makes fetched again).
function State:totals_now(stats)
  local t = {}
  for _, k in ipairs(TOTALS) do t[k] = (self.totals[k] or 0) + (stats[k] or 0) end
  t.pages = (self.totals.pages or 0) + self.pages_committed + self.pages_pending
  t.runs = (self.totals.runs or 0) + 1
  return t
end

-- A durable point: every output flushed and its length, the new fingerprints, the
-- stats, and the rows written since the last commit, together. Not after a failure
-- (of the state, or of an output: its records since the last commit are not all in
-- the file, and the state must not say they are).
function State:commit(crawler)
  if self.error or self.closed then return false end
  if crawler.stats.output_failed then return false end
  for _, out in ipairs(crawler.outputs) do
    -- Closed already (a second signal): its length now is not one to append to.
    if out.path and not out.file then return false end
  end
  -- The archive's records of the pages done are written first (its writer's thread).
  if crawler.warc and not crawler.warc:sync() then return false end
  crawler:flush_outputs()
  if crawler.stats.output_failed then return false end
  self.uncommitted = 0
  self.committed_at = lc.now()
  -- The rows gathered since the last commit.
  if self.f then self.f:flush() end
  self:flush_done()
  if self.error then return false end
  local ok, err = pcall(function()
    local lengths = {}
    for _, out in ipairs(crawler.outputs) do
      if out.file and out.path then lengths[#lengths + 1] = output_entry(out) end
    end
    self:set_meta("crawl.outputs", lengths)
    -- The totals and the time of the commit, for luacrawl state: at every commit,
    -- so that they agree with the pages done after a kill too (the meta table's
    -- page is written anyway, for the outputs' lengths).
    self:set_meta("crawl.totals", self:totals_now(crawler.stats))
    self:set_meta("crawl.committed_at", os.time())
    if self.hosts_dirty then
      self:set_meta("crawl.hosts", self.host_settings)
      self.hosts_dirty = false
    end
    -- What luacrawl report reads (its series coarsened): now and then, and at the end.
    if crawler.stopping or lc.now() - (self.report_saved or 0) >= M.report_interval then
      self:set_meta("crawl.report", report.saved(crawler.stats, lc.now() - crawler.started))
      self.report_saved = lc.now()
    end
    local cok, cerr = self.db:commit()
    if not cok then error(cerr, 0) end
    self.pages_committed = self.pages_committed + self.pages_pending
    self.pages_pending = 0
  end)
  if not ok then
    self:failed_write(err)
    return false
  end
  return true
end

-- The task that commits while the crawl runs (State:start spawns it): every
-- commit_interval seconds; with an interval of 0, every second when pages ended
-- since the last commit and the dispatcher has not committed (below).
function State:commit_loop(crawler)
  while true do
    lc.sleep(self.interval > 0 and self.interval or 1)
    if self.interval > 0 or self.uncommitted > 0 then self:commit(crawler) end
  end
end

-- With commit_interval 0 (the default), a page that ended keeps its slot until a
-- commit: the crawl has at most `concurrency` requests in flight and pages done but
-- not committed together, and a kill costs at most that. The dispatcher commits
-- (commit_due) when those pages hold half the slots, or when they hold fewer but no
-- slot is free and the last commit is M.commit_gap old: one commit for many pages.
-- (Committing as soon as no slot was free made a commit at nearly every turn of a
-- crawl that keeps its slots full, whatever the batch: a commit for a few pages.
-- The gap bounds what the held slots cost a crawl slow to end its pages: a crawl of
-- far servers keeps its requests in flight.)
function State:page_ended()
  self.uncommitted = self.uncommitted + 1
end

-- The slots that pages done and not committed hold (0 with commit_interval > 0).
function State:held_slots()
  return self.interval == 0 and self.uncommitted or 0
end

-- Returns nil, or the seconds after which the dispatcher is to ask again (pages held
-- and no slot free, the gap not over).
function State:commit_due(crawler, active, concurrency)
  local n = self.uncommitted
  if self.interval > 0 or n == 0 then return nil end
  if n < self.batch then
    if active + n < concurrency then return nil end -- a slot is free
    local left = self.committed_at + M.commit_gap - lc.now()
    if left > 0 then return left end
  end
  self:commit(crawler)
  return nil
end

-- The crawl ended: a last commit; finished when nothing is left (the frontier empty
-- and the crawl not stopped early). Then the store is closed.
function State:finish(crawler, done)
  if self.closed then return end
  self.report_saved = nil -- the last commit saves luacrawl report's stats
  local ok = self:commit(crawler)
  if not ok then return self:close(true) end
  if ok and done and crawler.frontier:empty() then
    local fok, err = pcall(function()
      self:set_meta("crawl.finished", os.time())
      local cok, cerr = self.db:commit()
      if not cok then error(cerr, 0) end
    end)
    if not fok then self:failed_write(err) end
  end
  self:close()
end

-- Close the store; abandon (or a failed state): without committing what came after
-- the last commit (an output closed or broken since no longer matches it).
function State:close(abandon)
  if self.closed then return end
  self.closed = true
  if not (self.error or abandon) then
    -- Closing commits: the rows gathered too.
    if self.f then self.f:flush() end
    self:flush_done()
  end
  if self.error or abandon then
    self.db:abandon()
  else
    local ok, err = self.db:close()
    if not ok then self:failed_write(err) end
  end
end

-- A recrawl of a finished state: every page done more than spec.recrawl seconds ago
-- goes back in the frontier, with its validators (If-None-Match, If-Modified-Since),
-- its digest and its record's kept fields: crawl.lua tells a changed page from an
-- unchanged one (changed), and a 304's record has the fields of the last fetch. A
-- page whose row lacks a field the record keeps (a state of an earlier luacrawl, a
-- field new to the command) is asked for without validators: its record gets them
-- from the body. The crawl is not finished until they are done again.
function State:start_recrawl()
  local due = self.db:sql("SELECT url, depth, status, etag, last_modified, digest, id, record FROM crawl_done"
    .. " WHERE fetched_at <= ?1 ORDER BY depth, id"):rows(os.time() - self.spec.recrawl)
  if #due == 0 then return end
  local kept = crawl_record.kept_fields(self.spec)
  for _, r in ipairs(due) do
    local url, etag, lm, record = r[1], r[4], r[5], r[8]
    local headers
    if (etag or lm) and crawl_record.keeps(record, kept) then
      headers = { ["If-None-Match"] = etag, ["If-Modified-Since"] = lm }
    end
    self.f:push({
      url = url, depth = r[2], key = self.host_key(url), headers = headers,
      recrawl = { status = r[3], etag = etag, last_modified = lm, digest = r[6], row = r[7], record = record },
    })
  end
  self.db:set_meta("crawl.finished", nil)
  self.finished_at = nil
  self.recrawling = #due
end

-- Whether a page fetched again by a recrawl changed: a 304, or the same status and
-- body digest as before, is unchanged.
function M.changed(req, res)
  local before = req.recrawl
  if res.status == 304 then return false end
  if not before.digest or res.status ~= before.status then return true end
  return (crawl_dupes.digest_of(res) or EMPTY_DIGEST) ~= before.digest
end

return M
