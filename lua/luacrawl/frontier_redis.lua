-- luacrawl.frontier_redis: the crawl's frontier shared by a fleet of workers through
-- Redis, the third backend of the frontier interface (docs/architecture.md, "The
-- frontier interface"; the scripts it runs in Redis: frontier_redis_scripts.lua).
--
-- The requests wait in Redis, a sorted set per host (by priority, then the order
-- queued); a retry that waits, in a sorted set by the time it is due. A worker claims a batch of them with
-- a lease (only as many as it has free slots for, and per host only as many as the
-- host's free slots for the whole fleet), keeps them in a memory frontier
-- (luacrawl.frontier) from which the crawl pops as it always does, and acknowledges
-- each when its page is done, with the outcome; the links its pages found go with the
-- acknowledgements, admitted once for the fleet by Redis's seen set. One background
-- task (pump) sends what accumulated (acknowledgements, links, politeness changes) and
-- claims more in one script call, a step; another renews the lease. A worker whose
-- lease expired (killed, paused) has its requests reclaimed by the next step of any
-- worker; its late acknowledgements are refused.
--
-- The crawl is done for the fleet when Redis has no request queued and none leased,
-- and this worker has nothing left to send.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local frontier = require "luacrawl.frontier"
local scripts = require "luacrawl.frontier_redis_scripts"
local stored_request = require "luacrawl.stored_request"

local json_encode, json_decode, json_null = core.json_encode, core.json_decode, core.json_null
local fingerprint = lc.url.fingerprint

local M = {}

-- Defaults: lease seconds; reconnect backoff (first, most) seconds.
M.lease = 30
M.reconnect_first, M.reconnect_max = 0.1, 2

-- The prefix of a crawl's keys: its id in a hash tag (one Redis Cluster slot).
function M.prefix(crawl_id)
  return "lc:{" .. crawl_id .. "}:"
end

-- The fields of a request that the item carries apart (key: the host list it is in),
-- or that are this frontier's own while the request is claimed; they are not stored
-- (nor the crawl's own: luacrawl.stored_request).
local APART = {
  key = true, _item = true, _claimed = true, _epoch = true, _outcome = true, _in_redis = true, _requeued = true,
  _wait = true,
}

-- A request's priority for Redis's order: a finite number, else 0.
local function priority_of(req)
  local p = req.priority
  if type(p) ~= "number" or p ~= p or p == math.huge or p == -math.huge then return 0 end
  return p
end

-- The request of a claimed member: what follows the 17 characters of its prefix
-- (frontier_redis_scripts.lua).
local function item_of(member)
  return member:sub(18)
end

local F = {}
F.__index = F

-- f = frontier_redis.new(opts):
--   url, crawl_id, worker     where and who
--   per_host, delay, depth_first   as frontier.new's (for the whole fleet)
--   host(key)                 -> a host's own {per_host =, delay =, max_pages =} or
--                             nil (spec.hosts): sent to Redis before anything else of
--                             the host, where they hold for the fleet
--   on_closed(key, reason)    a host closed by the fleet (another worker's
--                             close_host, its max_pages spent): told once
--   lease                     seconds a claim lasts unless renewed (default 30)
--   free()                    -> how many requests the worker could start now
--   on_ready()                called when requests came in or the fleet is done
--   flush()                   write the outputs through: called before pages are
--                             acknowledged, so that a page the fleet counts as done
--                             has its records in its worker's output
--   gate(req)                 a claimed request through the crawl's rules: true,
--                             false (dropped) or held (pushed later, or forgotten)
--   callbacks, parse          spec.callbacks and spec.parse: requests' callbacks by
--                             name (luacrawl.stored_request)
--   log(msg)
--   explain(stored)           -> why the identity Redis holds (f.identity refused)
--                             differs, in words; nil: the default message
function M.new(opts)
  -- A request as an item, JSON of its fields, and back.
  local encode, decode = stored_request.codec({
    callbacks = opts.callbacks, parse = opts.parse, apart = APART, where = "shared by the fleet",
  })
  local self = setmetatable({
    url = opts.url, label = opts.label or opts.url, crawl_id = opts.crawl_id, worker = opts.worker,
    prefix = M.prefix(opts.crawl_id),
    per_host = opts.per_host or 2, delay = opts.delay or 0, depth_first = opts.depth_first or false,
    lease = opts.lease or M.lease,
    free = opts.free or function() return 16 end,
    flush = opts.flush or function() end,
    on_ready = opts.on_ready or function() end,
    gate = opts.gate,
    log = opts.log or function() end,
    explain = opts.explain,
    encode = encode, decode = decode,
    -- The local frontier: requests claimed and not started. Politeness is Redis's
    -- (a claim respects the fleet's slots, its hosts' own and their delays): what
    -- was claimed may start at once.
    mem = frontier.new({ per_host = 2 ^ 30, delay = 0, depth_first = opts.depth_first }),
    delays = {},
    settings = opts.host or false, told = {}, closed_known = 0,
    on_closed = opts.on_closed or function() end,
    holding = 0, -- requests claimed and not acknowledged (queued here, in flight, held)
    epoch = 1, seq = 0,
    fleet_queued = 0, fleet_leased = 0, fleet_done = false,
    -- A host's max_pages is counted by Redis, for the fleet (at the claim): not by
    -- the crawl (crawl_hosts.lua).
    counts_host_pages = true,
    stats = { claimed = 0, refused = 0, lost = 0, steps = 0, reconnects = 0 },
  }, F)
  self.acks, self.pushes, self.ops = {}, {}, {}
  return self
end

-- Redis ------------------------------------------------------------------------

-- Connect (once, at the start): nil, err when Redis cannot be reached, or when what
-- answers fails the first script (a timeout, a protocol error, a reply that is not
-- the script's): at the start, that is not a restart to wait out.
function F:connect()
  local r, err = lc.redis.connect(self.url, { timeout = 10 })
  if not r then return nil, err end
  self:attach(r)
  local stored
  local token = ("%s-%.6f-%d"):format(self.worker, lc.now(), math.random(1, 1e9))
  self.starting = true
  stored, err = self:run("join", self.worker, self.identity or "", token, tostring(math.floor(self.lease * 1000)))
  self.starting = false
  if stored == nil then return nil, err end
  if type(stored) ~= "table" or type(stored[3]) ~= "number" then
    return nil, lc.error("protocol", ("redis %s: not Redis running the crawl's script (it answered %q)")
      :format(self.label, tostring(stored):sub(1, 60)))
  end
  if stored[3] >= 0 then
    return nil, lc.error("incompatible", ("worker id %s is in use in crawl %s (heard from %.1f s ago): give each "
      .. "worker its own --worker-id"):format(self.worker, self.crawl_id, stored[3] / 1000))
  end
  self.created = stored[2]
  if self.identity and stored[1] ~= self.identity then
    local why = self.explain and self.explain(stored[1])
    if why then return nil, lc.error("incompatible", ("crawl %s in Redis: %s"):format(self.crawl_id, why)) end
    return nil, lc.error("incompatible", ("crawl %s in Redis was started by another crawl (other start URLs or "
      .. "scope): use another --crawl-id"):format(self.crawl_id))
  end
  return true
end

function F:attach(r)
  self.conn = r
  self.scripts = {}
  for name, source in pairs(scripts) do self.scripts[name] = r:script(source) end
end

-- A script run, through connection failures: the connection is made again with
-- backoff (0.1 s doubling up to 2 s) until Redis answers, for as long as it takes (a
-- Redis restarted; the crawl can be stopped meanwhile). An error reply is returned.
function F:run(name, ...)
  local args = { self.prefix, ... }
  local keys = { self.prefix .. "stats" }
  local wait = M.reconnect_first
  local said = false
  while true do
    local conn = self.conn
    if conn then
      local res, err = self.scripts[name]:call(keys, args)
      if err == nil or err.kind == "redis" then
        if said then self.log(("redis %s: connected again"):format(self.label)) end
        return res, err
      end
      if self.starting then
        pcall(conn.close, conn)
        self.conn = nil
        return nil, err
      end
      if not said then
        self.log(("redis %s: %s: connecting again (the crawl waits)"):format(self.label, tostring(err)))
        said = true
      end
      if self.conn == conn then
        pcall(conn.close, conn)
        self.conn = nil
      end
    elseif self.closed_for_good or (self.deadline and lc.now() > self.deadline) then
      return nil, lc.error("connect", "redis " .. self.label .. ": not reachable")
    elseif self.reconnecting then
      lc.sleep(0.05) -- another task is connecting
    else
      -- One task connects again at a time; a cancel meanwhile lets the next one try.
      self.reconnecting = true
      local ok, r = pcall(function()
        lc.sleep(wait)
        return lc.redis.connect(self.url, { timeout = 10, connect_timeout = 2 })
      end)
      self.reconnecting = false
      if not ok then error(r, 0) end
      wait = math.min(wait * 2, M.reconnect_max)
      if r then
        self.stats.reconnects = self.stats.reconnects + 1
        self:attach(r)
      end
    end
  end
end

-- The frontier interface -------------------------------------------------------------

-- url: the request is admitted once for the fleet, by its URL's fingerprint (the 64
-- bits lc.url.fingerprint gives, which the local seen set keeps too), or its dedupe
-- key's; false: always (dont_filter).
function F:push_item(key, item, url, priority)
  if self.settings and not self.told[key] then self:own(key) end
  self.pushes[#self.pushes + 1] = { key, item, url and fingerprint(url) or false, priority or 0 }
  self.fleet_done = false
  self:kick()
end

-- The host key's own settings (spec.hosts), sent once before anything else of the
-- host this worker sends (asked only with a spec.hosts: a crawl without keeps no
-- table of the hosts told): the first worker's hold for the fleet (all run one spec:
-- its hosts are part of the fleet's identity), a later set_per_host or Crawl-delay
-- are not undone.
function F:own(key)
  self.told[key] = true
  local s = self.settings and self.settings(key)
  if s and (s.per_host or s.delay or s.max_pages) then
    self.ops[#self.ops + 1] = { "host", key, s.per_host or false, s.delay and math.floor(s.delay * 1000 + 0.5) or false,
      s.max_pages or false }
  end
end

-- A request to queue for the fleet: admitted once (its URL in the seen set) unless
-- dont_filter. A claimed request (one that waited for robots.txt here) goes in the
-- local frontier; one already sent (held, or queued again by a retry) is not sent twice.
function F:push(req)
  if req.key == nil then error("frontier: request without a host key", 2) end
  if req._claimed then
    if req._epoch ~= self.epoch then return end -- a lease lost meanwhile: reclaimed
    -- Back from its robots.txt, which gave its host a delay (Crawl-delay): claimed
    -- before the delay was known (maybe with others of the host's, here or in other
    -- workers), it goes back to the fleet, to be claimed again within the delay.
    if (self.delays[req.key] or 0) > 0 then
      req._claimed = nil
      self:ack(req, "return")
      return
    end
    self.mem:push(req)
    return
  end
  if req._in_redis or req._requeued then
    req._in_redis, req._requeued = nil, nil
    return
  end
  self:push_item(req.key, self.encode(req), not req.dont_filter and (req.dedupe_key or req.url), priority_of(req))
end

function F:push_url(key, url, depth, referrer)
  if key == nil then error("frontier: request without a host key", 2) end
  self:push_item(key, json_encode({ url = url, depth = depth or 0, referrer = referrer }), url)
end

-- A request that waits here for its robots.txt is sent to Redis at once (with the
-- page that found it): a worker that dies meanwhile loses nothing. A worker that
-- claims it checks robots.txt again.
function F:hold(req)
  if req._claimed or req._in_redis then return end
  self:push(req)
  req._in_redis = true
end

-- A request ends before it started (robots.txt said no, its host's time is up).
function F:forget(req)
  if req._claimed then
    req._claimed = nil
    self:ack(req, "drop")
  end
end

-- wait: the seconds the retry waits (its Retry-After or backoff): the fleet claims it
-- again no sooner (nil: at once).
function F:retry(req, wait)
  req.retrying = true
  req._wait = wait
end

-- Outcomes, told by the crawl as pages end (crawl_redis.lua).
function F.fetched(_, req, res)
  req._outcome = res.status
end

function F.failed(_, req, kind)
  req._outcome = kind
end

-- (An acknowledgement of a lease lost meanwhile is sent all the same: Redis refuses
-- it, and counts it.)
function F:ack(req, how, value, again, delay)
  self.acks[#self.acks + 1] = { req._item, req.key, how, value == nil and json_null or value, again or json_null,
    delay or 0 }
  if req._epoch == self.epoch then self.holding = self.holding - 1 end
  self:kick()
end

-- (An empty local frontier does not kick the pump: it claims when its own requests
-- end, and polls meanwhile.)
function F:pop(now)
  return self.mem:pop(now)
end

-- A page is done: its acknowledgement, with its outcome; one to retry goes back to
-- the fleet's queue now (with its retry count; the crawl's later push of it is not
-- sent again), due after its wait, one that never had an outcome (cancelled) too, at
-- once.
function F:done(req, now)
  self.mem:done(req, now)
  if not req._claimed then return end
  req._claimed = nil
  local outcome = req._outcome
  req._outcome = nil
  if req.retrying or outcome == nil then
    local wait = req.retrying and req._wait or 0
    req.retrying, req._wait = nil, nil
    req._requeued = true
    self:ack(req, "requeue", nil, self.encode(req), math.max(0, math.ceil(wait * 1000)))
  elseif type(outcome) == "number" then
    self:ack(req, "page", outcome)
  else
    self:ack(req, "error", outcome)
  end
end

function F:backoff(key, untill)
  if self.settings and not self.told[key] then self:own(key) end
  self.mem:backoff(key, untill)
  self.ops[#self.ops + 1] = { "backoff", key, math.floor((untill - lc.now()) * 1000) }
  self:kick()
end

-- paced: a throttle's delay, which leaves the host's slots as they were (above 0,
-- another's caps it at one request in flight), as frontier.lua's.
function F:set_delay(key, delay, paced)
  if self.delays[key] == delay then return end
  if self.settings and not self.told[key] then self:own(key) end
  self.delays[key] = delay
  self.ops[#self.ops + 1] = { "delay", key, math.floor(delay * 1000 + 0.5), paced and 1 or 0 }
  self:kick()
end

function F:delay_of(key)
  local d = self.delays[key]
  if d then return d end
  local s = self.settings and self.settings(key)
  return s and s.delay or self.delay
end

-- A host's slots for the fleet (crawler:set_per_host): kept in Redis, for every worker.
function F:set_per_host(key, n)
  if self.settings and not self.told[key] then self:own(key) end
  self.ops[#self.ops + 1] = { "per_host", key, n }
  self:kick()
end

function F:size()
  return self.mem:size() + self.fleet_queued
end

function F:queued_of(key)
  return self.mem:queued_of(key)
end

-- Done for the fleet: nothing queued or leased in Redis at the last step, nothing
-- here to send or to start.
function F:empty()
  return self.fleet_done and self.mem:empty() and #self.acks == 0 and #self.pushes == 0 and #self.ops == 0
end

-- A host's requests dropped (max_host_time; with a reason, crawler:close_host): the
-- ones claimed here acknowledged as dropped, and the host's queue in Redis too, for
-- the fleet; closed, the host stays closed in Redis, for every worker (on_closed).
function F:drop_host(key, reason)
  if self.settings and not self.told[key] then self:own(key) end
  local dropped = self.mem:drop_host(key)
  for _, req in ipairs(dropped) do self:forget(req) end
  self.ops[#self.ops + 1] = { "drop", key, reason }
  self:kick()
  return dropped, 0
end

-- Hosts the fleet closed (a step's `closed`): the requests of theirs claimed here and
-- not started are dropped, then the crawl is told (on_closed(key, reason, n dropped)).
function F:closed_by_fleet(list)
  for _, c in ipairs(list) do
    local key, reason = c[1], c[2]
    self.closed_known = self.closed_known + 1
    local dropped = self.mem:drop_host(key)
    for _, req in ipairs(dropped) do self:forget(req) end
    self.on_closed(key, reason, #dropped)
  end
end

function F.resume() end

-- The pump ---------------------------------------------------------------------------

-- Something for the pump: it steps again at once (a kick while it steps is not lost:
-- it looks again before it waits).
function F:kick()
  self.kicked = true
  local t = self.pump_task
  if t and self.pump_waiting then
    self.pump_waiting = false
    lc._wake(t)
  end
end

-- The requests a step claimed, into the local frontier through the crawl's gate.
function F:take(items)
  for _, it in ipairs(items) do
    local key, item = it[1], it[2]
    local ok, req = pcall(self.decode, item_of(item))
    if ok and type(req) == "table" and type(req.url) == "string" then
      req.key, req._item, req._claimed, req._epoch = key, item, true, self.epoch
      self.holding = self.holding + 1
      self.stats.claimed = self.stats.claimed + 1
      local pass = true
      if self.gate then pass = self.gate(req) end
      if pass == true then
        self.mem:push(req)
      elseif pass == false then
        self:forget(req)
      end -- else held for its robots.txt: pushed or forgotten later
    else
      -- Not an item of ours: acknowledged as dropped, never fetched.
      self.holding = self.holding + 1
      self:ack({ _item = item, key = key, _epoch = self.epoch }, "drop")
    end
  end
end

-- The lease was lost (this worker was paused or cut off past it): its requests were
-- reclaimed by the fleet, so the ones not started are dropped here, and nothing of
-- the old lease is acknowledged.
function F:lease_lost()
  self.stats.lost = self.stats.lost + 1
  self.log("the lease of this worker expired and its requests went back to the fleet")
  self.epoch = self.epoch + 1
  for key in pairs(self.mem.hosts) do self.mem:drop_host(key) end
  self.holding = 0
end

-- One step: what accumulated, sent; more claimed when there is room.
function F:step(claim)
  if #self.acks > 0 then self.flush() end
  local acks, pushes, ops = self.acks, self.pushes, self.ops
  self.acks, self.pushes, self.ops = {}, {}, {}
  self.seq = self.seq + 1
  local holding = self.holding + #acks
  local body = json_encode({
    per_host = self.per_host, delay = math.floor(self.delay * 1000 + 0.5), lease = math.floor(self.lease * 1000),
    depth_first = self.depth_first, holding = holding, claim = claim, closed = self.closed_known,
    acks = acks, pushes = pushes, ops = ops,
  })
  local epoch = self.epoch
  local res, err = self:run("step", self.worker, tostring(self.seq), body)
  if not res then error(err, 0) end
  local reply = json_decode(res)
  -- The crawl's token changed or went: Redis lost its data (restarted without
  -- persistence, flushed). Going on would end the crawl as if done.
  if reply.created ~= self.created then
    error(lc.error("redis", ("crawl %s is no longer in Redis (restarted without persistence, or flushed): "
      .. "its requests are lost"):format(self.crawl_id)), 0)
  end
  self.stats.steps = self.stats.steps + 1
  self.stats.refused = self.stats.refused + (reply.refused or 0)
  if reply.lost == 1 and epoch == self.epoch then self:lease_lost() end
  self.fleet_queued, self.fleet_leased = reply.queued, reply.leased
  if reply.closed and #reply.closed > 0 then self:closed_by_fleet(reply.closed) end
  self:take(reply.items or {})
  self.fleet_done = reply.queued <= 0 and reply.leased <= 0 and #self.acks == 0 and #self.pushes == 0
  return reply
end

-- The pump task: steps while there is something to send or room to claim; else it
-- waits for a kick (an acknowledgement, a push, a pop that found nothing) or for the
-- time the next host of the fleet may be asked.
function F:pump()
  self.pump_task = lc.current()
  local idle = 0
  while not self.stopping do
    self.kicked = false
    local want = math.max(0, self.free() - self.mem:size())
    local pending = #self.acks + #self.pushes + #self.ops > 0
    local wait
    if pending or want > 0 then
      self.stepping = true
      local ok, reply = pcall(self.step, self, want)
      self.stepping = false
      if not ok then error(reply, 0) end
      self.on_ready()
      if #(reply.items or {}) > 0 then
        idle = 0
      elseif #self.acks + #self.pushes + #self.ops == 0 then
        -- Nothing to take: wait for the next host of the fleet, or a while.
        -- (A host ready now whose share this worker holds already: its own
        -- acknowledgements kick it.)
        idle = math.min(idle + 1, 10)
        wait = reply.wait > 0 and reply.wait / 1000 or 0.05 * idle
        wait = math.min(math.max(wait, 0.001), 0.2)
      end
    else
      wait = 1
    end
    if wait and not self.stopping and not self.kicked then
      self.pump_waiting = true
      lc._suspend(wait)
      self.pump_waiting = false
    end
  end
end

-- The renewal task: the lease lasts `lease` seconds more every lease / 3 seconds.
function F:renew_loop()
  while true do
    lc.sleep(self.lease / 3)
    local epoch = self.epoch
    local ok = self:run("renew", self.worker, tostring(math.floor(self.lease * 1000)), tostring(self.holding))
    if ok == 0 and epoch == self.epoch and self.holding > 0 then self:lease_lost() end
  end
end

-- Start the pump and the renewal; on_error(err) is told if either fails (an error
-- reply of Redis: a script that cannot run there).
function F:start(on_error)
  local function guarded(fn)
    return lc.spawn(function()
      local ok, err = pcall(fn, self)
      if not ok and not (type(err) == "table" and err.kind == "cancelled") then on_error(err) end
    end)
  end
  self.tasks = { guarded(F.pump), guarded(F.renew_loop) }
end

-- The crawl stops: the pump ends after its step in progress (cancelled in one, its
-- reply would be lost: claims nobody holds until the lease expires); requests claimed
-- and not started go back to the fleet; what is left to send is sent, and the worker
-- leaves.
function F:finish()
  self.stopping = true
  self.deadline = lc.now() + 60 -- Redis gone for a minute at the end: given up
  self:kick()
  while self.stepping and lc.now() < self.deadline do lc.sleep(0.005) end
  for _, t in ipairs(self.tasks or {}) do t:cancel() end
  for key in pairs(self.mem.hosts) do
    for _, req in ipairs(self.mem:drop_host(key)) do
      if req._claimed then
        req._claimed = nil
        self:ack(req, "return")
      end
    end
  end
  if self.conn then
    local ok, err = pcall(function()
      while #self.acks + #self.pushes + #self.ops > 0 do self:step(0) end
      self:run("leave", self.worker)
    end)
    self.closed_for_good = true
    if self.conn then self.conn:close() end
    if not ok then return nil, err end
  end
  return true
end

return M
