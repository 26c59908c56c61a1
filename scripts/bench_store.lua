-- Benchmark of the durable queue and seen set (lc.store), run by scripts/bench-store
-- once per variant, each in a process of its own (so that its peak RSS is its own).
-- It prints figures; it is not a test.
--
--   luacrawl run scripts/bench_store.lua store|memory N [PATH]
--
-- Adds N distinct URLs to a seen set and puts each in a queue (a crawler's
-- discovery), then gets and acknowledges every one (its fetches): with
-- lc.seen{store=}/lc.queue{store=} on a state file at PATH, committed every
-- 10,000 URLs, or with lc.seen()/lc.queue() in memory. Prints the rate of each
-- phase, the bytes per URL (the state file after its close; the RSS growth in
-- memory) and the process's peak RSS.
local lc = require "luacrawl"

local variant, N, path = arg[1], tonumber(arg[2]), arg[3]
assert((variant == "store" or variant == "memory") and N, "usage: bench_store.lua store|memory N [PATH]")
local COMMIT_EVERY = 10000

local function url_of(i)
  return ("https://www.example%d.org/section/%d/article-%d.html?id=%d&ref=home"):format(
    i % 97, i % 1000, i, i * 7)
end

local function status(field)
  local f = io.open("/proc/self/status")
  local s = f:read("*a")
  f:close()
  return tonumber(s:match(field .. ":%s*(%d+) kB")) * 1024
end

local function file_bytes(p)
  local f = io.open(p, "rb")
  if not f then return 0 end
  local n = f:seek("end")
  f:close()
  return n
end

local rss0 = status("VmRSS")
local db, q, seen
if variant == "store" then
  os.remove(path)
  db = assert(lc.store.open(path))
  q, seen = lc.queue { store = db, name = "todo" }, lc.seen { store = db, name = "seen" }
else
  q, seen = lc.queue(), lc.seen()
end

local t0 = lc.now()
for i = 1, N do
  local u = url_of(i)
  if seen:add(u) then q:put_nowait(u) end
  if db and i % COMMIT_EVERY == 0 then assert(db:commit()) end
end
if db then assert(db:commit()) end
local t_push = lc.now() - t0
local rss_full = status("VmRSS")

t0 = lc.now()
local got = 0
for i = 1, N do
  if q:get_nowait() then got = got + 1 end
  q:task_done()
  if db and i % COMMIT_EVERY == 0 then assert(db:commit()) end
end
if db then assert(db:commit()) end
local t_pop = lc.now() - t0
assert(got == N, "got " .. got)

local bytes
if db then
  -- The file as a crawl would leave it with N URLs seen and queued: measured on a
  -- second state filled the same way and closed (the WAL folded into it).
  assert(db:close())
  local full = path .. ".full"
  os.remove(full)
  local db2 = assert(lc.store.open(full))
  local q2, s2 = lc.queue { store = db2, name = "todo" }, lc.seen { store = db2, name = "seen" }
  for i = 1, N do
    local u = url_of(i)
    if s2:add(u) then q2:put_nowait(u) end
    if i % COMMIT_EVERY == 0 then assert(db2:commit()) end
  end
  assert(db2:close())
  bytes = file_bytes(full)
  os.remove(full)
  os.remove(path)
else
  bytes = rss_full - rss0
end

print(("bench-store: %-6s  %9.0f adds+puts/s  %9.0f gets+acks/s  %6.1f bytes/URL%s  peak RSS %5.1f MB"):format(
  variant, N / t_push, N / t_pop, bytes / N, variant == "store" and " (file)" or " (RSS) ",
  status("VmHWM") / 1e6))
