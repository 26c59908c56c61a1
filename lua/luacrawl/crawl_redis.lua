-- luacrawl.crawl_redis: a crawl shared by a fleet of workers through Redis
-- (spec.redis, spec.crawl_id; `--redis URL --crawl-id NAME`). docs/crawl.md,
-- "Crawling with many workers", has the rules. A fleet is one of the crawl's durable
-- objects (crawl_durable.lua has the interface); the points that do something here:
--   M.check(spec)            the fields, with crawl_spec.check
--   M.open(crawler, fopts)   at crawl.new: connects (exit status 2 when Redis cannot
--                            be reached), the frontier (luacrawl.frontier_redis)
--   fleet:robots(origin), fleet:save_robots(origin, res)   robots.txt fetched once
--                            for the fleet, kept in Redis for a day
--   fleet:fetched(req, res), fleet:failed(req, kind)   a page's outcome, acknowledged
--                            with it
--   fleet:start(crawler), fleet:finish(crawler)   the background tasks (the worker's
--                            numbers published for the fleet's dashboard among them:
--                            crawl_redis_publish.lua); at the end, what was claimed
--                            and not started goes back, the rest is sent
--                            (fleet:close(): the same, when crawl.new fails)
local lc = require "luacrawl"
local core = require "luacrawl.core"
local frontier_redis = require "luacrawl.frontier_redis"

local M = {}

-- RFC 9309 2.4: a robots.txt may be cached for up to 24 hours.
M.robots_max_age = 24 * 3600
-- How long a worker waits for another that is fetching a robots.txt, seconds.
M.robots_wait = 30

function M.check(s)
  if s.redis == nil then
    for _, k in ipairs({ "crawl_id", "worker_id", "lease" }) do
      if s[k] ~= nil then error(("crawl.run: %s goes with redis (a Redis URL)"):format(k), 0) end
    end
    return
  end
  if type(s.redis) ~= "string" then error("crawl.run: redis must be a redis:// URL (a string)", 0) end
  local _, msg = lc.redis.parse_url(s.redis)
  if msg then error("crawl.run: redis: " .. msg, 0) end
  if s.state ~= nil then
    error("crawl.run: redis does not go with state (a crawl is kept in Redis or in a state file, not both)", 0)
  end
  if s.from_warc ~= nil then error("crawl.run: redis does not go with from_warc (a replay fetches nothing)", 0) end
  if type(s.crawl_id) ~= "string" or not s.crawl_id:match("^[%w._:-]+$") or #s.crawl_id > 200 then
    error("crawl.run: redis needs crawl_id, the crawl's name in Redis (letters, digits, '.', '_', ':', '-')", 0)
  end
  if s.worker_id ~= nil and (type(s.worker_id) ~= "string" or not s.worker_id:match("^[%w._:-]+$")) then
    error("crawl.run: worker_id must be a name (letters, digits, '.', '_', ':', '-')", 0)
  end
  if s.lease ~= nil then
    local ok, err = pcall(core.check_number, s.lease, "crawl.run: lease", 1, 24 * 3600)
    if not ok then error(tostring(err), 0) end
  end
end

-- This process's id, for the default worker id "HOST-PID".
local function pid()
  local f = io.open("/proc/self/stat", "r")
  local line = f and f:read("*l")
  if f then f:close() end
  return line and line:match("^(%d+)") or tostring(math.random(1, 1e9))
end

local function hostname()
  local f = io.open("/proc/sys/kernel/hostname", "r")
  local name = f and f:read("*l")
  if f then f:close() end
  name = (name or os.getenv("HOSTNAME") or "worker"):gsub("[^%w._-]", "_")
  return name
end

local function redact(url)
  return (url:gsub("^(%a+://)[^/@]*@", "%1***@", 1))
end

-- kept: a page's items wait for its end, and a request stopped goes back to the fleet.
local Fleet = { kind = "redis", kept = true, finished_at = false, resumed = false }
Fleet.__index = Fleet

-- Politeness is the crawl's, not a worker's: one worker asking a host more often
-- would raise the host's rate for the whole fleet. These settings are part of the
-- identity the fleet keeps in Redis, and a worker with others is refused; so are the
-- hosts' own (spec.hosts: per_host, delay, max_pages), which Redis applies for the
-- fleet as the first worker to meet a host sent them. A host's headers and normalize
-- are each worker's, as fetch and normalize are.
local POLITENESS = { "per_host", "delay", "robots" }
local HOST_POLITENESS = { "per_host", "delay", "max_pages" }

-- spec.hosts' politeness as text, "hosts {KEY: per_host 3, delay 0.2; ...}" (keys
-- sorted), or nil when no host has any (a crawl without it keeps its identity).
local function hosts_politeness(hosts)
  local keys = {}
  for key, t in pairs(hosts or {}) do
    local parts = {}
    for _, k in ipairs(HOST_POLITENESS) do
      if t[k] ~= nil then parts[#parts + 1] = ("%s %s"):format(k, tostring(t[k])) end
    end
    if #parts > 0 then keys[#keys + 1] = ("%s: %s"):format(key, table.concat(parts, ", ")) end
  end
  if #keys == 0 then return nil end
  table.sort(keys)
  return "hosts {" .. table.concat(keys, "; ") .. "}"
end

local function politeness(spec)
  local parts = {}
  for i, k in ipairs(POLITENESS) do
    local v = spec[k]
    if v == nil then v = true end -- robots: on unless false
    parts[i] = ("%s %s"):format(k, tostring(v))
  end
  parts[#parts + 1] = hosts_politeness(spec.hosts)
  return table.concat(parts, ", ")
end

-- The fleet's identity: the crawl's (start URLs and scope) and its politeness.
local function fleet_identity(spec)
  return require("luacrawl.crawl_state").identity(spec) .. "\npoliteness: " .. politeness(spec)
end

-- Why stored (the identity in Redis) refuses this worker, when only the politeness
-- differs: nil otherwise (frontier_redis says "another crawl").
local function explain(spec)
  return function(stored)
    local scope, theirs = stored:match("^(.*)\npoliteness: (.*)$")
    if scope ~= require("luacrawl.crawl_state").identity(spec) then return nil end
    return ("its workers run with %s, this one with %s: a fleet's politeness is the crawl's; run this worker "
      .. "with the crawl's values, or use another --crawl-id"):format(theirs, politeness(spec))
  end
end

-- The fleet of crawler's spec (nil without spec.redis): connected, its identity
-- checked. Raises an lc error (kind connect, incompatible, ...) that crawl.new
-- passes on.
function M.open(crawler, fopts)
  local spec = crawler.spec
  if not spec.redis then return nil end
  if not lc.current() then error("crawl.new with redis runs in a task (crawl.run makes one)", 0) end
  local host, process = hostname(), pid()
  local worker = spec.worker_id or (host .. "-" .. process)
  local label = redact(spec.redis)
  local self = setmetatable({ spec = spec, worker = worker, label = label, hostname = host,
    pid = tonumber(process) }, Fleet)
  local dropped = {}
  local f = frontier_redis.new({
    url = spec.redis, label = label, crawl_id = spec.crawl_id, worker = worker,
    per_host = fopts.per_host, delay = fopts.delay, depth_first = fopts.depth_first, lease = spec.lease,
    host = fopts.host, on_closed = function(key, reason, n) crawler:closed_by_fleet(key, reason, n) end,
    callbacks = spec.callbacks, parse = spec.parse,
    -- A crawl that is stopping, or paused, claims nothing more.
    free = function() return (crawler.stopping or crawler.paused) and 0 or spec.concurrency - crawler.active end,
    on_ready = function() crawler:poke() end,
    flush = function() crawler:flush_outputs() end,
    -- A claimed request of a host whose max_host_time is spent here: the host's
    -- queue goes for the fleet at once, not a claim at a time.
    gate = function(req)
      local key = req.key
      if not dropped[key] and crawler:host_time_spent(key) then
        dropped[key] = true
        self.f:drop_host(key)
      end
      return crawler:resume_gate(req)
    end,
    log = function(msg) crawler:log(msg) end,
    explain = explain(spec),
  })
  f.identity = fleet_identity(spec)
  local ok, err = f:connect()
  if not ok then
    if lc.is_error(err) and err.kind == "incompatible" then error(err, 0) end
    -- lc.redis says "redis ADDRESS:PORT: cannot connect: why": the URL, and why.
    local why = tostring(err and err.message or err):gsub("^redis [^ ]+: ", ""):gsub("^cannot connect: ", "")
    error(lc.error(lc.is_error(err) and err.kind or "connect", ("redis %s: cannot connect: %s"):format(label, why)), 0)
  end
  self.f = f
  return self
end

function Fleet:frontier()
  return self.f
end

-- The crawl's entry points (crawl_durable.lua) that have nothing to do for a fleet.
Fleet.open_frontier = Fleet.frontier
function Fleet.resume() end
function Fleet.output_offset() return nil end
function Fleet.check_outputs() end
function Fleet.page_ended() end
function Fleet.save_host() end -- Redis keeps them: the frontier's ops
function Fleet.held_slots() return 0 end
function Fleet.commit_due() return nil end

-- What a failure of the fleet's Redis says. WRONGTYPE: a key of the crawl holds
-- another kind of value than this luacrawl makes (a crawl left by an earlier layout,
-- whose host queues were lists, or other data under the prefix).
local function failure(self, err)
  if type(err) == "table" and err.code == "WRONGTYPE" then
    return ("redis %s: crawl %s holds keys of another kind than this luacrawl makes (%s*: a crawl "
      .. "of an earlier luacrawl, or other data): go on under another --crawl-id, or delete those keys (%s)")
      :format(self.label, self.spec.crawl_id, self.f.prefix, tostring(err.message))
  end
  return ("redis %s: %s"):format(self.label, tostring(err and err.message or err))
end

-- The publisher first: its first look at the fleet's control comes before any claim.
function Fleet:start(crawler)
  self.publisher = require("luacrawl.crawl_redis_publish").start(self, crawler)
  self.f:start(function(err) crawler:fleet_failed(failure(self, err)) end)
end

-- The crawl ended: the fleet's last words, and this worker's stats in the crawl's.
function Fleet:finish(crawler)
  if self.publisher then self.publisher:finish() end
  local ok, err = self:close()
  if not ok then crawler:fleet_failed(("redis %s: %s"):format(self.label, tostring(err))) end
  local fs = self.f.stats
  fs.worker = self.worker
  crawler.stats.redis = fs
end

function Fleet:close()
  return self.f:finish()
end

function Fleet:fetched(req, res)
  self.f:fetched(req, res)
end

function Fleet:failed(req, kind)
  self.f:failed(req, kind)
end

-- robots.txt ---------------------------------------------------------------------------

function Fleet:robots_key(origin)
  return self.f.prefix .. "robots:" .. origin
end

-- The robots.txt of origin as the fleet has it (a response: status, body, Location),
-- or nil: then this worker fetches it (save_robots) and the others wait for it, up
-- to robots_wait seconds. Redis unreachable: nil (each fetches its own).
function Fleet:robots(origin)
  local f = self.f
  if not f.conn then return nil end
  local deadline = lc.now() + M.robots_wait
  while true do
    local script = f.scripts and f.scripts.robots
    if not script then return nil end
    local r = script:call({ f.prefix .. "stats" }, { f.prefix, origin, self.worker, tostring(M.robots_wait) })
    if type(r) == "table" then
      return { status = tonumber(r[1]) or 0, body = r[2] or "", headers = { location = r[3] or nil } }
    end
    if r ~= 0 then return nil end -- this worker fetches it (or Redis failed: each its own)
    if lc.now() > deadline then return nil end
    lc.sleep(0.05)
  end
end

-- The robots.txt this worker fetched (res), or could not (nil: the others stop
-- waiting for it and fetch their own).
function Fleet:save_robots(origin, res)
  local conn = self.f.conn
  if not conn then return end
  local key = self:robots_key(origin)
  if not res then
    conn:call("DEL", key .. ":lock")
    return
  end
  local cmd = { "HSET", key, "status", tostring(res.status), "body", res.body or "" }
  if res.headers.location then
    cmd[#cmd + 1] = "location"
    cmd[#cmd + 1] = res.headers.location
  end
  conn:pipeline({ cmd, { "EXPIRE", key, tostring(M.robots_max_age) }, { "DEL", key .. ":lock" } })
end

return M
