-- luacrawl.frontier: the crawl scheduler. One queue of requests per host key, and
-- a heap of the hosts that have requests and a free slot, ordered by the time they
-- may next be asked. The next request therefore always comes from a host that may
-- be asked now; a host in backoff or with a long delay sits further down the heap
-- and never holds up the others. push, pop and done are O(1) in the requests of
-- one host (buckets by priority and depth, below) plus O(log hosts).
--
--   local f = frontier.new{ per_host = 2, delay = 0.5, depth_first = false }
--   f:push(req)            req.key (host key), req.priority (higher first, default 0),
--                          req.depth (breadth-first by default)
--   f:push_url(key, url, depth, referrer)   the same as push of {key = key,
--                          url = url, depth = depth, referrer = referrer}, kept
--                          as its strings until popped: no table per queued URL
--                          (a crawl's frontier holds most of a site's URLs at
--                          once, and the collector would go through every table)
--   local req, wait = f:pop(now)   a request, or nil and the seconds until one may
--                          be ready (nil, nil when nothing is queued or every host
--                          with requests has all its slots busy)
--   f:done(req, now)       the request finished: its host's slot is free again
--   f:backoff(key, until)  ask nothing of this host before `until`
--   f:set_delay(key, s[, paced])   the minimum interval between requests to this
--                          host: from one start to the next, and from an end to the
--                          next start. A delay above 0 also caps the host at one
--                          request in flight (as Scrapy's DOWNLOAD_DELAY with one
--                          request per domain), unless paced: the throttle's delays,
--                          which aim at a number of requests in flight, keep per_host
--   f:set_per_host(key, n) the host's own number of slots (opts.per_host for the rest)
--   opts.host(key)         -> {per_host =, delay =} or nil: a host's own settings, asked
--                          once, when the host is first seen (spec.hosts)
--   f:hold(req), f:forget(req), f:retry(req, wait)   for a durable frontier
--                          (frontier_sqlite.lua): a request held outside the frontier
--                          (waiting for robots.txt) is kept, one that ends there is
--                          forgotten, one that will be pushed again after a delay (wait
--                          seconds: the Redis frontier's fleet waits it out, the others
--                          ignore it) stays; nothing to do in memory
local core = require "luacrawl.core"

local M = {}

-- Delays and times are checked by the engine's rule for numbers: a NaN delay makes
-- a host's ready time NaN (then it is never, or always, ready), an infinite one keeps
-- the host out of the crawl for ever, and the dispatcher waiting "inf" seconds raises.
local check_number, check_integer = core.check_number, core.check_integer
local function checked(check, v, what, min, max)
  local ok, r = pcall(check, v, what, min, max)
  if not ok then error(tostring(r), 3) end
  return r
end

-- A binary min-heap of tables that keep their position in `field`.
local Heap = {}
Heap.__index = Heap

local function new_heap(less, field)
  return setmetatable({ n = 0, less = less, field = field }, Heap)
end

-- The heap's and the frontier's own calls go to their local functions, not through
-- the metatable (a lookup in Heap or Frontier each call).
local function swap(heap, i, j)
  local a, b = heap[i], heap[j]
  heap[i], heap[j] = b, a
  b[heap.field], a[heap.field] = i, j
end

local function up(heap, i)
  local less = heap.less
  while i > 1 do
    local p = math.floor(i / 2)
    if not less(heap[i], heap[p]) then break end
    swap(heap, i, p)
    i = p
  end
end

local function down(heap, i)
  local less, n = heap.less, heap.n
  while true do
    local l = 2 * i
    if l > n then break end
    local c = l
    if l + 1 <= n and less(heap[l + 1], heap[l]) then c = l + 1 end
    if not less(heap[c], heap[i]) then break end
    swap(heap, i, c)
    i = c
  end
end

local function heap_push(heap, x)
  local n = heap.n + 1
  heap.n = n
  heap[n] = x
  x[heap.field] = n
  up(heap, n)
end

local function heap_remove(heap, i)
  local n = heap.n
  local x = heap[i]
  if i ~= n then
    swap(heap, i, n)
  end
  heap[n] = nil
  heap.n = n - 1
  x[heap.field] = nil
  if i < n then
    down(heap, i)
    up(heap, i)
  end
  return x
end

local function heap_update(heap, x)
  local i = x[heap.field]
  if i then
    down(heap, i)
    up(heap, i)
  end
end

-- A heap's methods (M.heap): swap, up and down stay the heap's own.
Heap.push, Heap.remove, Heap.update = heap_push, heap_remove, heap_update

function Heap:pop()
  if self.n == 0 then return nil end
  return heap_remove(self, 1)
end

M.heap = new_heap

-- A host's requests, in order: priority (higher first), then depth (lower first,
-- or higher first depth-first), then the order they were pushed (first first, or
-- last first depth-first). Requests of one priority and depth wait in a bucket: a
-- FIFO, or a stack depth-first, which keeps the push order with no comparison.
-- The buckets are kept sorted, the next one last; a crawl has few at a time
-- (breadth-first, the depth being read and the next), so push and pop cost O(1)
-- but when a bucket is made or emptied, O(buckets) then. An entry pushed by
-- push_url is its URL (a string), its referrer in the bucket's `ref` at the same
-- index. Breadth-first, the URL itself waits outside the Lua heap, in the bucket's
-- FIFO of strings (core.strq, as lc.queue keeps strings), the entry holding URL:
-- a frontier holds most of a site's URLs at once, strings the collector would sweep
-- every cycle and every new string would be looked up among.
local Queue = {}
Queue.__index = Queue

local URL = {}
local new_strq = core.strq
-- The FIFO's push and pop, called as functions: a userdata's methods are looked up
-- through its metatable at each call.
local strq_methods = getmetatable(new_strq()).__index
local strq_push, strq_pop = strq_methods.push, strq_methods.pop

local function new_queue(depth_first)
  -- index[priority][depth] is the bucket; buckets are sorted, the next one last.
  return setmetatable({ n = 0, dfs = depth_first, index = {}, buckets = {} }, Queue)
end

-- Whether bucket a is taken before bucket b.
local function taken_before(q, a, b)
  if a.priority ~= b.priority then return a.priority > b.priority end
  if q.dfs then return a.depth > b.depth end
  return a.depth < b.depth
end

local function key_of(x, field)
  local v = x[field] or 0
  if v ~= v then return 0 end -- NaN sorts as 0 (it cannot be a table key)
  return v
end

-- The bucket of priority p and depth d, made when missing.
local function bucket(q, p, d)
  local by_depth = q.index[p]
  if not by_depth then
    by_depth = {}
    q.index[p] = by_depth
  end
  local b = by_depth[d]
  if not b then
    b = { priority = p, depth = d, head = 1, tail = 0, ref = {} }
    by_depth[d] = b
    local buckets = q.buckets
    local i = #buckets + 1
    while i > 1 and taken_before(q, buckets[i - 1], b) do
      buckets[i] = buckets[i - 1]
      i = i - 1
    end
    buckets[i] = b
  end
  return b
end

-- x: a request, or a URL with its referrer (push_url).
function Queue:push(x, referrer, depth)
  local b
  if type(x) == "table" then
    b = bucket(self, key_of(x, "priority"), key_of(x, "depth"))
  else
    b = bucket(self, 0, depth)
  end
  if type(x) == "string" and not self.dfs then
    local urls = b.urls
    if not urls then
      urls = new_strq()
      b.urls = urls
    end
    strq_push(urls, x)
    x = URL
  end
  local t = b.tail + 1
  b.tail = t
  b[t] = x
  b.ref[t] = referrer
  self.n = self.n + 1
end

-- A FIFO bucket whose head has gone far: its entries moved back to start at 1. Left
-- to grow, head and tail would index the entries of a bucket that never empties (a
-- state's frontier keeps a window of a host's requests, refilled before it is empty)
-- ever higher: the table would hold them in its hash part, and the compiled code that
-- reads and writes them would leave its traces at each change from one part to the
-- other. Called when head is past the count of entries: at most one move a pop.
local function compact(b)
  local head, tail, ref = b.head, b.tail, b.ref
  local n = tail - head + 1
  for j = 1, n do
    b[j], ref[j] = b[head + j - 1], ref[head + j - 1]
  end
  for j = head, tail do
    b[j], ref[j] = nil, nil
  end
  b.head, b.tail = 1, n
end

-- The next entry: a request, or a URL, its referrer and its depth.
function Queue:pop()
  local buckets = self.buckets
  local nb = #buckets
  if nb == 0 then return nil end
  local b = buckets[nb]
  local i
  if self.dfs then -- a stack
    i = b.tail
    b.tail = i - 1
  else
    i = b.head
    b.head = i + 1
  end
  local x, referrer = b[i], b.ref[i]
  b[i], b.ref[i] = nil, nil
  if x == URL then x = strq_pop(b.urls) end
  self.n = self.n - 1
  if b.head > b.tail then -- empty: the bucket goes
    buckets[nb] = nil
    local by_depth = self.index[b.priority]
    by_depth[b.depth] = nil
    if next(by_depth) == nil then self.index[b.priority] = nil end
  elseif not self.dfs and b.head > 64 and b.head > b.tail - b.head + 1 then
    compact(b)
  end
  return x, referrer, b.depth
end

-- A queue entry as a request: a URL pushed by push_url becomes a table now.
local function request_of(h, x, referrer, depth)
  if type(x) == "table" then return x end
  return { url = x, depth = depth, referrer = referrer, key = h.key }
end

-- Hosts: the earliest ready first, then the one that has waited longest.
local function host_less(a, b)
  if a.ready_at ~= b.ready_at then return a.ready_at < b.ready_at end
  return a.seq < b.seq
end

local Frontier = {}
Frontier.__index = Frontier

function M.new(opts)
  opts = opts or {}
  if opts.per_host ~= nil then checked(check_integer, opts.per_host, "frontier: per_host", 1) end
  if opts.delay ~= nil then checked(check_number, opts.delay, "frontier: delay", 0) end
  return setmetatable({
    per_host = opts.per_host or 1,
    delay = opts.delay or 0,
    settings = opts.host or false,
    depth_first = opts.depth_first or false,
    hosts = {},
    nhosts = 0,
    ready = new_heap(host_less, "_hi"),
    queued = 0,
    inflight = 0,
    seq = 0,
  }, Frontier)
end

local function host(self, key)
  local h = self.hosts[key]
  if not h then
    h = {
      key = key, queue = new_queue(self.depth_first), inflight = 0,
      last_start = -math.huge, last_end = -math.huge, backoff_until = 0,
      delay = self.delay, per_host = self.per_host, ready_at = 0, seq = 0,
    }
    local own = self.settings and self.settings(key)
    if own then
      h.per_host, h.delay = own.per_host or h.per_host, own.delay or h.delay
    end
    -- A delay of the spec's or of the host's own caps it at one request in flight.
    h.serial = h.delay > 0
    self.hosts[key] = h
    self.nhosts = self.nhosts + 1
  end
  return h
end
Frontier.host = host

-- Put h in the ready heap when it has requests and a free slot; keep its place
-- current otherwise.
local function rearm(self, h)
  local eligible = h.queue.n > 0 and h.inflight < (h.serial and 1 or h.per_host)
  -- The delay separates one start from the next, and also an end from the next
  -- start, so the server sees gaps of at least `delay` even when a connection was
  -- slow to open.
  local ready_at = math.max(h.last_start + h.delay, h.last_end + h.delay, h.backoff_until, 0)
  if eligible then
    local changed = h.ready_at ~= ready_at
    h.ready_at = ready_at
    if not h._hi then
      self.seq = self.seq + 1
      h.seq = self.seq
      heap_push(self.ready, h)
    elseif changed then
      heap_update(self.ready, h)
    end
  elseif h._hi then
    heap_remove(self.ready, h._hi)
  end
end
Frontier.rearm = rearm

function Frontier:push(req)
  local key = req.key
  if key == nil then error("frontier: request without a host key", 2) end
  local h = host(self, key)
  Queue.push(h.queue, req)
  self.queued = self.queued + 1
  rearm(self, h)
end

function Frontier:push_url(key, url, depth, referrer)
  if key == nil then error("frontier: request without a host key", 2) end
  if type(url) ~= "string" then error("frontier: url must be a string", 2) end
  if depth == nil or depth ~= depth then depth = 0 end -- NaN as push sorts it
  local h = host(self, key)
  Queue.push(h.queue, url, referrer, depth)
  self.queued = self.queued + 1
  rearm(self, h)
end

function Frontier:pop(now)
  local h = self.ready[1]
  if not h then return nil, nil end
  if h.ready_at > now then return nil, h.ready_at - now end
  local req = request_of(h, Queue.pop(h.queue))
  self.queued = self.queued - 1
  h.inflight = h.inflight + 1
  self.inflight = self.inflight + 1
  h.last_start = now
  rearm(self, h)
  return req
end

function Frontier:done(req, now)
  local h = self.hosts[req.key]
  if not h or h.inflight <= 0 then return end
  h.inflight = h.inflight - 1
  self.inflight = self.inflight - 1
  h.last_end = now
  rearm(self, h)
end

function Frontier:backoff(key, untill)
  checked(check_number, untill, "frontier: backoff until")
  local h = host(self, key)
  if untill > h.backoff_until then
    h.backoff_until = untill
    rearm(self, h)
  end
end

function Frontier:set_delay(key, delay, paced)
  checked(check_number, delay, "frontier: delay", 0)
  local h = host(self, key)
  h.delay = delay
  if not paced then h.serial = delay > 0 end
  rearm(self, h)
end

function Frontier:set_per_host(key, n)
  checked(check_integer, n, "frontier: per_host", 1)
  local h = host(self, key)
  h.per_host = n
  rearm(self, h)
end

-- The host's slots now: 1 while a delay caps it, else its per_host.
function Frontier:per_host_of(key)
  local h = self.hosts[key]
  if not h then return self.delay > 0 and 1 or self.per_host end
  return h.serial and 1 or h.per_host
end

function Frontier:delay_of(key)
  local h = self.hosts[key]
  return h and h.delay or self.delay
end

function Frontier:size()
  return self.queued
end

-- Requests queued for the host key.
function Frontier:queued_of(key)
  local h = self.hosts[key]
  return h and h.queue.n or 0
end

function Frontier.hold() end
function Frontier.forget() end
function Frontier.retry() end

function Frontier:empty()
  return self.queued == 0
end

-- Drop every queued request of a host (robots.txt says no, say); returns them.
function Frontier:drop_host(key)
  local h = self.hosts[key]
  local dropped = {}
  if not h then return dropped end
  while h.queue.n > 0 do dropped[#dropped + 1] = request_of(h, Queue.pop(h.queue)) end
  self.queued = self.queued - #dropped
  rearm(self, h)
  return dropped
end

return M
