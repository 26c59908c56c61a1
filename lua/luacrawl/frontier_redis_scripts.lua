-- luacrawl.frontier_redis_scripts: the Lua scripts the Redis frontier runs inside
-- Redis (EVALSHA through lc.redis's script objects), so that a claim, an
-- acknowledgement or a reclaim is one atomic step for the whole fleet. Times are the
-- server's (TIME, in milliseconds): the workers' clocks never meet.
--
-- Keys of a crawl all start with PREFIX = "lc:{CRAWL-ID}:" (the hash tag puts them
-- in one slot of a Redis Cluster); every script gets PREFIX .. "stats" as KEYS[1], so
-- a cluster client routes it to that slot, and PREFIX as ARGV[1]:
--   hosts          zset  host key -> the time (ms) it may next be asked; only hosts
--                        with queued requests and a free slot are in it
--   h:HOST         hash  inflight, next (ms), backoff (ms), delay (ms; else the
--                        crawl's), serial ("1": one request in flight, a delay of the
--                        crawl's, the host's own or its robots.txt's; "0": as per_host,
--                        a throttle's; else whether its delay is above 0), per_host
--                        (its own slots: spec.hosts, crawler:set_per_host), max_pages
--                        and pages (its own budget, the pages claimed against it),
--                        closed (the reason it was closed: crawler:close_host, its
--                        max_pages spent; a closed host's queue is dropped, whenever
--                        something comes to it, and counted in stats c:REASON)
--   closed         list  "HOST\nREASON" of each host closed, in order: every worker
--                        learns them from its steps (step's `closed`)
--   q:HOST         zset  the host's queued requests: members "K" .. SEQ .. ITEM, K "0"
--                        (back at the front) or "1" (pushed), SEQ 16 digits of the
--                        crawl's counter (seq; counting down for the front and
--                        depth-first, up breadth-first), ITEM the request as JSON;
--                        scored by minus its priority. Equal scores go by member, so a
--                        host's requests come by priority (higher first), then the
--                        ones back at the front (last back first), then the pushed
--                        ones in the order pushed (last first depth-first)
--   seq            string  the counter of the members (INCR)
--   delayed        zset  "SEQ" .. HOST .. "\n" .. ITEM -> the time (ms) it is due: a
--                        retry that waits (its Retry-After or backoff); counted as
--                        queued, and put back at the front of its host's queue by the
--                        first step after that time
--   seen           set   the fingerprint of every URL admitted, for the fleet
--   leases         zset  worker -> the time (ms) its lease expires
--   lease:WORKER   hash  member -> host key: what the worker claimed and has not
--                        acknowledged
--   held:WORKER    hash  host key -> how many of the host's requests the worker holds
--                        (its share of the host's slots: step)
--   workers        zset  worker -> the time (ms) it was last heard from
--   last:WORKER    string  "SEQ\nREPLY": the reply to the worker's last step, for a
--                        step sent again after a lost connection
--   stats          hash  queued, leased, pages, s:STATUS, errors, e:KIND, dropped,
--                        refused, reclaimed, pushed, duplicates, c:REASON (requests of
--                        closed hosts dropped)
--   meta           hash  identity, created (a token), started (ms)
--   robots:ORIGIN  hash  a robots.txt response (status, body, location), kept a day
--                        (crawl_redis.lua writes it)
--   robots:ORIGIN:lock    string  the worker fetching it, for 30 s at most
--   wstat:WORKER   hash  json (the worker's numbers: crawl_redis_publish.lua), seen
--                        (ms): its last publication, kept a day after it; report
--                        (what luacrawl report shows of the worker: its bounded
--                        counts and coarse series, every 30 s and at its end) and
--                        report_at (ms): when that was published
--   wstats         set   the workers with a wstat (fleet drops the expired ones)
--   control        hash  state ("paused", "running"), stop (a counter): what
--                        luacrawl dashboard --redis asks of every worker
local M = {}

-- Helpers every script starts with (one source per script: EVALSHA has no modules).
local COMMON = [==[
local P = ARGV[1]
local STATS, HOSTS, LEASES, WORKERS = P .. 'stats', P .. 'hosts', P .. 'leases', P .. 'workers'
local t = redis.call('TIME')
-- now, rounded down: a host is asked when its time <= now; times to come are from
-- now rounded up (later), so that no gap is ever shorter than asked, even by a
-- fraction of a millisecond.
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local later = tonumber(t[1]) * 1000 + math.ceil(tonumber(t[2]) / 1000)
local per_host, default_delay = 1, 0
local function hkey(h) return P .. 'h:' .. h end
local function qkey(h) return P .. 'q:' .. h end
local DELAYED, SEQ = P .. 'delayed', P .. 'seq'
-- A new member prefix (17 characters): "0" back at the front, "1" pushed; the
-- counter counting down (front, lifo) or up, on 16 digits.
local function prefix(front, lifo)
  local s = redis.call('INCR', SEQ)
  if front or lifo then s = 1e15 - s end -- (exact in a double: < 2^53)
  return (front and '0' or '1') .. string.format('%016.0f', s)
end
local function item_of(m) return string.sub(m, 18) end
-- An item's priority: a finite number, else 0.
local function prio_of(item)
  local ok, t = pcall(cjson.decode, item)
  local p = ok and type(t) == 'table' and tonumber(t.priority)
  if not p or p ~= p or p == math.huge or p == -math.huge then return 0 end
  return p
end
local function enqueue(h, item, prio, front, lifo)
  redis.call('ZADD', qkey(h), string.format('%.17g', -prio), prefix(front, lifo) .. item)
end
-- A host's fields; slots: its own per_host, or the crawl's; one while a delay caps it
-- (serial).
local function host_state(h)
  local v = redis.call('HMGET', hkey(h), 'inflight', 'next', 'backoff', 'delay', 'per_host', 'serial', 'closed',
    'max_pages', 'pages')
  local s = { inflight = tonumber(v[1]) or 0, next = tonumber(v[2]) or 0, backoff = tonumber(v[3]) or 0,
    delay = tonumber(v[4]) or default_delay, closed = v[7], max_pages = tonumber(v[8]), pages = tonumber(v[9]) or 0 }
  local serial = v[6]
  if serial then serial = serial == '1' else serial = s.delay > 0 end
  s.serial, s.slots = serial, serial and 1 or (tonumber(v[5]) or per_host)
  return s
end
-- h in HOSTS, at the time it may be asked, when it has requests and a free slot. A
-- closed host's queue is dropped (counted c:REASON).
local function rearm(h)
  local s = host_state(h)
  if s.closed then
    local n = redis.call('ZCARD', qkey(h))
    if n > 0 then
      redis.call('DEL', qkey(h))
      redis.call('HINCRBY', STATS, 'queued', -n)
      redis.call('HINCRBY', STATS, 'c:' .. s.closed, n)
    end
    redis.call('ZREM', HOSTS, h)
  elseif s.inflight < s.slots and redis.call('ZCARD', qkey(h)) > 0 then
    redis.call('ZADD', HOSTS, math.max(s.next, s.backoff), h)
  else
    redis.call('ZREM', HOSTS, h)
  end
end
-- Close h for the fleet (once: the first reason stays), its queue dropped.
local function close_host(h, reason)
  if redis.call('HSETNX', hkey(h), 'closed', reason) == 1 then
    redis.call('RPUSH', P .. 'closed', h .. '\n' .. reason)
  end
  rearm(h)
end
-- Whether an item is a page of its own for a host's max_pages: not a retry, nor a
-- redirect's hop (as a crawl in memory counts them).
local function is_page(item)
  local ok, t = pcall(cjson.decode, item)
  return not (ok and type(t) == 'table' and (t.retries or t.redirects))
end
-- The lease of worker w: its requests go back to the front of their hosts' queues.
local function reclaim(w)
  local lk = P .. 'lease:' .. w
  local items = redis.call('HGETALL', lk)
  local touched = {}
  for i = 1, #items, 2 do
    local h, item = items[i + 1], item_of(items[i])
    enqueue(h, item, prio_of(item), true)
    redis.call('HINCRBY', hkey(h), 'inflight', -1)
    touched[h] = true
  end
  local n = #items / 2
  redis.call('DEL', lk, P .. 'held:' .. w)
  redis.call('ZREM', LEASES, w)
  if n > 0 then
    redis.call('HINCRBY', STATS, 'leased', -n)
    redis.call('HINCRBY', STATS, 'queued', n)
    redis.call('HINCRBY', STATS, 'reclaimed', n)
  end
  for h in pairs(touched) do rearm(h) end
  return n
end
local function reclaim_expired(limit)
  for _, w in ipairs(redis.call('ZRANGEBYSCORE', LEASES, '-inf', now, 'LIMIT', 0, limit)) do reclaim(w) end
end
-- A retry that waits ms: due then (still counted as queued).
local function delay_item(h, item, ms)
  redis.call('ZADD', DELAYED, later + ms, string.sub(prefix(false, false), 2) .. h .. '\n' .. item)
end
-- The delayed retries that are due, at the front of their hosts' queues.
local function release_due(limit)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', DELAYED, '-inf', now, 'LIMIT', 0, limit)) do
    redis.call('ZREM', DELAYED, m)
    local h, item = string.match(string.sub(m, 17), '^(.*)\n([^\n]*)$')
    if h then
      enqueue(h, item, prio_of(item), true)
      rearm(h)
    else
      redis.call('HINCRBY', STATS, 'queued', -1)
    end
  end
end
]==]

-- step(worker, seq, json): one round trip of a worker. json is
--   {per_host =, delay = ms, lease = ms, depth_first =, holding = n, claim = n,
--    acks = {{item, host, how, value, again, delay}, ...},   how: "page" (value:
--       status), "error" (value: kind), "requeue" (again: the item to queue in its
--       place; due `delay` ms from now when delay > 0: a retry's wait),
--       "drop" (never started: robots.txt said no), "return" (never started: back)
--    pushes = {{host, item, fp or false, priority}, ...},   fp: the URL's fingerprint,
--                                                     admitted once (seen); false: always
--    ops = {{"host", host, per_host, delay ms, max_pages}   a host's own settings
--            (spec.hosts; false: the crawl's), each kept unless set already: every
--            worker sends them before anything else of the host, the first one holds,
--          {"delay", host, ms, paced}   paced (1): a throttle's, which keeps per_host;
--            else a delay above 0 caps the host at one request in flight,
--          {"per_host", host, n}, {"backoff", host, ms from now},
--          {"drop", host[, reason]}   with a reason, the host closed for the fleet,
--          ...},
--    closed = n   how many of the closed list the worker knows}
-- In this order: the worker's own lease, if it expired, is reclaimed (lost = 1 when it
-- held something); expired leases of others are reclaimed; delayed retries now due
-- go back to their hosts' queues; the ops, the acks (one for an item no longer in the
-- lease is refused: counted, nothing else), the pushes (into the host's queue by
-- priority, then in the order pushed, or last first depth-first); then
-- up to `claim` requests are claimed from the hosts that may be asked now, per host at
-- most its free slots (its own per_host or the crawl's; one in flight while a delay
-- caps it; one a claim when it has a delay: the next start is a delay later), and
-- within its max_pages: the page past it is not fetched and closes the host.
-- Returns JSON {items = {{host, member}, ...} (the member: the item after a
-- 17-character prefix; acknowledged as it is), lost, refused, queued (delayed retries
-- included), leased, wait = ms until the next host may be asked or the next delayed
-- retry is due, or -1, created = the crawl's token (join), closed = {{host, reason},
-- ...} the hosts closed past the worker's `closed`}. The same seq again gives the
-- same reply.
M.step = COMMON .. [==[
local worker, seq = ARGV[2], ARGV[3]
local last = P .. 'last:' .. worker
local prev = redis.call('GET', last)
if prev then
  local s, body = string.match(prev, '^(%d+)\n(.*)$')
  if s == seq then return body end
end
local req = cjson.decode(ARGV[4])
per_host, default_delay = tonumber(req.per_host) or 1, tonumber(req.delay) or 0
local LEASE, HELD = P .. 'lease:' .. worker, P .. 'held:' .. worker
local lost = 0
local mine = redis.call('ZSCORE', LEASES, worker)
if (tonumber(req.holding) or 0) > 0 and (not mine or tonumber(mine) <= now) then
  reclaim(worker)
  lost = 1
end
reclaim_expired(16)
release_due(100)
redis.call('ZADD', WORKERS, now, worker)
-- Counts summed, then written once each (at the end of the claims).
local inc = {}
local function bump(field, n) inc[field] = (inc[field] or 0) + n end
-- The ops first: what the pages being acknowledged taught (a Crawl-delay, a backoff)
-- holds from their acknowledgements on.
for _, o in ipairs(req.ops or {}) do
  local h = o[2]
  if o[1] == 'delay' then
    -- A throttle's delay leaves the host's cap as it was (made explicit first).
    if o[4] == 1 then
      redis.call('HSETNX', hkey(h), 'serial', host_state(h).serial and '1' or '0')
    else
      redis.call('HSET', hkey(h), 'serial', tonumber(o[3]) > 0 and '1' or '0')
    end
    redis.call('HSET', hkey(h), 'delay', o[3])
    rearm(h)
  elseif o[1] == 'host' then
    if o[3] then redis.call('HSETNX', hkey(h), 'per_host', o[3]) end
    if o[4] then
      redis.call('HSETNX', hkey(h), 'delay', o[4])
      redis.call('HSETNX', hkey(h), 'serial', tonumber(o[4]) > 0 and '1' or '0')
    end
    if o[5] then redis.call('HSETNX', hkey(h), 'max_pages', o[5]) end
  elseif o[1] == 'per_host' then
    redis.call('HSET', hkey(h), 'per_host', o[3])
    rearm(h)
  elseif o[1] == 'drop' and type(o[3]) == 'string' then
    close_host(h, o[3])
  elseif o[1] == 'drop' then
    local n = redis.call('ZCARD', qkey(h))
    if n > 0 then
      redis.call('DEL', qkey(h))
      bump('queued', -n)
      bump('dropped', n)
    end
    rearm(h)
  elseif o[1] == 'backoff' then
    redis.call('HSET', hkey(h), 'backoff', math.max(host_state(h).backoff, later + o[3]))
    rearm(h)
  end
end
-- The acknowledgements, their hosts' changes summed first and written once a host.
local hosts = {}
local refused = 0
for _, a in ipairs(req.acks or {}) do
  local item, h, how = a[1], a[2], a[3]
  if redis.call('HDEL', LEASE, item) == 1 then
    local c = hosts[h]
    if not c then
      c = { ended = 0, started = false, back = {} }
      hosts[h] = c
    end
    c.ended = c.ended + 1
    if how ~= 'drop' and how ~= 'return' then c.started = true end
    -- What may give a page back to the host's max_pages: one never started, or one
    -- queued again that will count when claimed again (not a retry).
    if how == 'drop' or how == 'return' then
      c.back[#c.back + 1] = item_of(item)
    elseif how == 'requeue' and type(a[5]) == 'string' then
      c.back[#c.back + 1] = a[5]
    end
    bump('leased', -1)
    if how == 'page' then
      bump('pages', 1)
      bump('s:' .. tostring(a[4]), 1)
    elseif how == 'error' then
      bump('errors', 1)
      bump('e:' .. tostring(a[4]), 1)
    elseif how == 'requeue' or how == 'return' then
      local again = a[5]
      if type(again) ~= 'string' then again = item_of(item) end
      local ms = tonumber(a[6]) or 0
      if ms > 0 then
        delay_item(h, again, ms)
      else
        enqueue(h, again, prio_of(again), true)
      end
      bump('queued', 1)
    else
      bump('dropped', 1)
    end
  else
    refused = refused + 1
  end
end
for h, c in pairs(hosts) do
  local s = host_state(h)
  redis.call('HINCRBY', hkey(h), 'inflight', -c.ended)
  if redis.call('HINCRBY', HELD, h, -c.ended) <= 0 then redis.call('HDEL', HELD, h) end
  if s.delay > 0 and c.started then redis.call('HSET', hkey(h), 'next', math.max(s.next, later + s.delay)) end
  if s.max_pages and #c.back > 0 then
    local back = 0
    for _, it in ipairs(c.back) do
      if is_page(it) then back = back + 1 end
    end
    if back > 0 then redis.call('HSET', hkey(h), 'pages', math.max(0, s.pages - back)) end
  end
  rearm(h)
end
if refused > 0 then bump('refused', refused) end
local touched, pushed, dupes = {}, 0, 0
for _, p in ipairs(req.pushes or {}) do
  local h, fp = p[1], p[3]
  if not fp or redis.call('SADD', P .. 'seen', fp) == 1 then
    enqueue(h, p[2], tonumber(p[4]) or 0, false, req.depth_first)
    touched[h] = true
    pushed = pushed + 1
  else
    dupes = dupes + 1
  end
end
if pushed > 0 then
  bump('queued', pushed)
  bump('pushed', pushed)
  redis.call('HSETNX', P .. 'meta', 'started', now)
end
if dupes > 0 then bump('duplicates', dupes) end
for h in pairs(touched) do
  if not redis.call('ZSCORE', HOSTS, h) then rearm(h) end
end
local items, n = {}, tonumber(req.claim) or 0
if n > 0 then
  local claimed = 0
  -- A worker's share of a host: its slots divided among the workers heard from in
  -- the last lease period (at least one), so that one worker does not keep them all.
  local alive = math.max(1, redis.call('ZCOUNT', WORKERS, now - tonumber(req.lease), '+inf'))
  for _, h in ipairs(redis.call('ZRANGEBYSCORE', HOSTS, '-inf', now, 'LIMIT', 0, n + 16)) do
    if n <= 0 then break end
    local s = host_state(h)
    local mine = tonumber(redis.call('HGET', HELD, h)) or 0
    local share = math.max(1, math.ceil(s.slots / alive))
    local take = math.min(s.slots - s.inflight, share - mine, n)
    if s.delay > 0 and take > 1 then take = 1 end
    local got, pages = 0, s.pages
    for _ = 1, take do
      local item = redis.call('ZPOPMIN', qkey(h))[1]
      if not item then break end
      bump('queued', -1)
      if s.max_pages and is_page(item_of(item)) then
        -- The page past the host's budget is not fetched: the host is closed for
        -- the fleet (the rest of its queue dropped by rearm, below).
        if pages >= s.max_pages then
          redis.call('HINCRBY', STATS, 'c:max_pages', 1)
          close_host(h, 'max_pages')
          break
        end
        pages = pages + 1
      end
      if redis.call('HSETNX', LEASE, item, h) == 1 then
        got = got + 1
        items[#items + 1] = { h, item }
      end
    end
    if pages ~= s.pages then redis.call('HSET', hkey(h), 'pages', pages) end
    if got > 0 then
      redis.call('HINCRBY', hkey(h), 'inflight', got)
      redis.call('HINCRBY', HELD, h, got)
      if s.delay > 0 then redis.call('HSET', hkey(h), 'next', later + s.delay) end
      claimed = claimed + got
      n = n - got
    end
    rearm(h)
  end
  if claimed > 0 then bump('leased', claimed) end
end
for field, n in pairs(inc) do
  if n ~= 0 then redis.call('HINCRBY', STATS, field, n) end
end
if redis.call('HLEN', LEASE) > 0 then
  redis.call('ZADD', LEASES, now + tonumber(req.lease), worker)
else
  redis.call('ZREM', LEASES, worker)
end
local wait = -1
local first = redis.call('ZRANGE', HOSTS, 0, 0, 'WITHSCORES')
if first[2] then wait = math.max(0, tonumber(first[2]) - now) end
local due = redis.call('ZRANGE', DELAYED, 0, 0, 'WITHSCORES')
if due[2] then
  local d = math.max(0, tonumber(due[2]) - now)
  if wait < 0 or d < wait then wait = d end
end
local st = redis.call('HMGET', STATS, 'queued', 'leased')
-- The hosts closed that the worker has not heard of.
local closed = {}
local known = tonumber(req.closed) or 0
if redis.call('LLEN', P .. 'closed') > known then
  for _, e in ipairs(redis.call('LRANGE', P .. 'closed', known, known + 999)) do
    local h, why = string.match(e, '^(.*)\n([^\n]*)$')
    closed[#closed + 1] = { h, why }
  end
end
local reply = cjson.encode({ items = items, lost = lost, refused = refused, queued = tonumber(st[1]) or 0,
  leased = tonumber(st[2]) or 0, wait = wait, created = redis.call('HGET', P .. 'meta', 'created'),
  closed = closed })
redis.call('SET', last, seq .. '\n' .. reply, 'PX', 86400000)
return reply
]==]

-- renew(worker, lease ms, holding): the worker's lease lasts lease ms more. Returns 1,
-- or 0 when it held something and its lease was gone (reclaimed: lost).
M.renew = COMMON .. [==[
local worker, lease, holding = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZADD', WORKERS, now, worker)
local mine = redis.call('ZSCORE', LEASES, worker)
if mine and tonumber(mine) > now then
  redis.call('ZADD', LEASES, now + lease, worker)
  return 1
end
if holding > 0 then
  if mine then reclaim(worker) end
  return 0
end
return 1
]==]

-- join(worker, identity, token, lease ms): the crawl's identity and a token made when
-- it was created, kept by the first worker; returns the ones stored (the caller
-- compares the identity, and every step's reply carries the token: a crawl whose token
-- changed or went is one Redis lost), and how many ms ago a worker of this name was
-- last heard from, when that is less than a lease ago (-1 otherwise): then the name is
-- in use, and the worker does not join.
M.join = COMMON .. [==[
local worker, identity, token, lease = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local seen = tonumber(redis.call('ZSCORE', WORKERS, worker))
local busy = -1
if seen and now - seen < lease then
  busy = now - seen
else
  redis.call('HSETNX', P .. 'meta', 'identity', identity)
  redis.call('HSETNX', P .. 'meta', 'created', token)
  redis.call('ZADD', WORKERS, now, worker)
end
local meta = redis.call('HMGET', P .. 'meta', 'identity', 'created')
return { meta[1], meta[2], busy }
]==]

-- leave(worker): the worker is gone (after its last acks): out of the workers set.
M.leave = COMMON .. [==[
redis.call('ZREM', WORKERS, ARGV[2])
if redis.call('HLEN', P .. 'lease:' .. ARGV[2]) == 0 then redis.call('ZREM', LEASES, ARGV[2]) end
return 1
]==]

-- robots(origin, worker, lock seconds): the robots.txt response the fleet keeps for
-- origin, as {status, body, location or false}; else 1 when this worker is now to
-- fetch it (the lock taken), 0 when another is fetching it. One step: a worker can
-- never take the lock just after another saved the file and let the lock go.
M.robots = [==[
local key = ARGV[1] .. 'robots:' .. ARGV[2]
local r = redis.call('HMGET', key, 'status', 'body', 'location')
if r[1] then return { r[1], r[2] or '', r[3] } end
if redis.call('SET', key .. ':lock', ARGV[3], 'NX', 'EX', tonumber(ARGV[4])) then return 1 end
return 0
]==]

-- status(lease ms): what luacrawl state shows, as JSON: stats, meta, hosts by queue
-- length (of the first 1000 hosts scanned), the delayed retries (counted in queued
-- too), workers and their leases, the hosts closed (the first 100) and why.
M.status = COMMON .. [==[
local out = { stats = {}, meta = {}, workers = {}, hosts = {}, now = now, delayed = redis.call('ZCARD', DELAYED),
  closed = {} }
for _, e in ipairs(redis.call('LRANGE', P .. 'closed', 0, 99)) do
  local h, why = string.match(e, '^(.*)\n([^\n]*)$')
  out.closed[#out.closed + 1] = { host = h, reason = why }
end
local st = redis.call('HGETALL', STATS)
for i = 1, #st, 2 do out.stats[st[i]] = tonumber(st[i + 1]) or st[i + 1] end
local meta = redis.call('HGETALL', P .. 'meta')
for i = 1, #meta, 2 do out.meta[meta[i]] = meta[i + 1] end
local ws = redis.call('ZRANGE', WORKERS, 0, -1, 'WITHSCORES')
for i = 1, #ws, 2 do
  local w = ws[i]
  local exp = redis.call('ZSCORE', LEASES, w)
  out.workers[#out.workers + 1] = { worker = w, seen_ms_ago = now - tonumber(ws[i + 1]),
    leased = redis.call('HLEN', P .. 'lease:' .. w), lease_ms_left = exp and (tonumber(exp) - now) or false }
end
local ls = redis.call('ZRANGE', LEASES, 0, -1, 'WITHSCORES')
for i = 1, #ls, 2 do
  if not redis.call('ZSCORE', WORKERS, ls[i]) then
    out.workers[#out.workers + 1] = { worker = ls[i], seen_ms_ago = false,
      leased = redis.call('HLEN', P .. 'lease:' .. ls[i]), lease_ms_left = tonumber(ls[i + 1]) - now }
  end
end
local cursor, scanned = '0', 0
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', P .. 'q:*', 'COUNT', 1000)
  cursor = r[1]
  for _, k in ipairs(r[2]) do
    out.hosts[#out.hosts + 1] = { host = string.sub(k, #P + 3), queued = redis.call('ZCARD', k) }
    scanned = scanned + 1
  end
until cursor == '0' or scanned >= 1000
return cjson.encode(out)
]==]

-- publish(worker, json, ttl ms[, report]): a worker's numbers (crawl_redis_publish.lua),
-- and its report when given, kept ttl ms; returns the fleet's control: {state or "",
-- stop counter}.
M.publish = [==[
local P, w = ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local k = P .. 'wstat:' .. w
redis.call('HSET', k, 'json', ARGV[3], 'seen', now)
if ARGV[5] then redis.call('HSET', k, 'report', ARGV[5], 'report_at', now) end
redis.call('PEXPIRE', k, tonumber(ARGV[4]))
redis.call('SADD', P .. 'wstats', w)
local c = redis.call('HMGET', P .. 'control', 'state', 'stop')
return { c[1] or '', tonumber(c[2]) or 0 }
]==]

-- fleet(max hosts[, "1"]): what luacrawl dashboard --redis shows, as JSON: stats, meta,
-- control, the workers' publications (json, seen: when (ms), seen_ms_ago, alive: in
-- the workers set, leased), the hosts (of the first max hosts scanned: queued, inflight, delay ms or
-- false, backoff ms left; none scanned when max is 0), the delayed retries. With "1": each
-- worker's report and report_at too (luacrawl report --redis: report_fleet.lua).
M.fleet = COMMON .. [==[
local max = tonumber(ARGV[2]) or 1000
local with_reports = ARGV[3] == '1'
local out = { stats = {}, meta = {}, control = {}, workers = {}, hosts = {}, now = now,
  delayed = redis.call('ZCARD', DELAYED) }
local st = redis.call('HGETALL', STATS)
for i = 1, #st, 2 do out.stats[st[i]] = tonumber(st[i + 1]) or st[i + 1] end
local meta = redis.call('HGETALL', P .. 'meta')
for i = 1, #meta, 2 do out.meta[meta[i]] = meta[i + 1] end
local c = redis.call('HGETALL', P .. 'control')
for i = 1, #c, 2 do out.control[c[i]] = c[i + 1] end
for _, w in ipairs(redis.call('SMEMBERS', P .. 'wstats')) do
  local r = redis.call('HMGET', P .. 'wstat:' .. w, 'json', 'seen')
  if r[1] then
    local row = { worker = w, json = r[1], seen = tonumber(r[2]) or now,
      seen_ms_ago = now - (tonumber(r[2]) or now),
      alive = redis.call('ZSCORE', WORKERS, w) ~= false, leased = redis.call('HLEN', P .. 'lease:' .. w) }
    if with_reports then
      local rep = redis.call('HMGET', P .. 'wstat:' .. w, 'report', 'report_at')
      row.report, row.report_at = rep[1], tonumber(rep[2])
    end
    out.workers[#out.workers + 1] = row
  else
    redis.call('SREM', P .. 'wstats', w)
  end
end
local cursor, scanned, rounds = '0', 0, 0
while max > 0 do
  local r = redis.call('SCAN', cursor, 'MATCH', P .. 'h:*', 'COUNT', 1000)
  cursor, rounds = r[1], rounds + 1
  for _, k in ipairs(r[2]) do
    local h = string.sub(k, #P + 3)
    local v = redis.call('HMGET', k, 'inflight', 'backoff', 'delay')
    out.hosts[#out.hosts + 1] = { host = h, queued = redis.call('ZCARD', qkey(h)), inflight = tonumber(v[1]) or 0,
      backoff = math.max(0, (tonumber(v[2]) or 0) - now), delay = tonumber(v[3]) or false }
    scanned = scanned + 1
  end
  if cursor == '0' or scanned >= max or rounds >= 20 then break end
end
out.hosts_complete = cursor == '0'
return cjson.encode(out)
]==]

return M
