-- Benchmark of luacrawl.frontier, run by scripts/bench-frontier. It prints figures;
-- it is not a test.
--
--   luacrawl run scripts/bench_frontier.lua [N [H,H,...]]
--
-- For each host count H (default 10, 1,000 and 100,000) pushes N requests (default
-- 1,000,000) spread round-robin over H host keys into a fresh frontier, then pops
-- them all as a crawl does: per_host = 1, so every pop takes the host's slot (the
-- host leaves the heap of ready hosts) and the done that follows gives it back (the
-- host goes back in). Depths rise through the run (1 to 10), as a breadth-first crawl
-- finds them. The requests are made before the clock starts: the figures are the
-- frontier's own, garbage collection included.
--
-- Each push is O(1) into the host's queue (a bucket per priority and depth) plus
-- O(log H) when the host joins the ready heap; each pop is O(1) in the host's queue
-- plus O(log H) in the ready heap, and done another O(log H). The same
-- H is also run with N/10 requests: per-operation costs that stay put when the queue
-- is ten times longer show that they grow with log(hosts), not with the queue size.
local frontier = require "luacrawl.frontier"
local lc = require "luacrawl"

local N = math.floor(tonumber(arg and arg[1]) or 1000000)
local Hs = {}
for h in ((arg and arg[2]) or "10,1000,100000"):gmatch("%d+") do Hs[#Hs + 1] = tonumber(h) end
local now = lc.now or os.clock

local function fmt_int(n)
  local s = ("%d"):format(math.floor(n + 0.5))
  return (s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
end

local function log2(x)
  return math.log(math.max(x, 1)) / math.log(2)
end

-- One round: n requests over h hosts; returns seconds for all the pushes and for
-- all the pops (pop + done), and the number popped.
local function round(n, h)
  local keys = {}
  for j = 1, h do keys[j] = ("host%d.example"):format(j) end
  local reqs = {}
  for i = 1, n do
    reqs[i] = { key = keys[(i - 1) % h + 1], depth = 1 + math.floor(10 * (i - 1) / n) }
  end
  local f = frontier.new({ per_host = 1 })
  collectgarbage("collect")
  local t0 = now()
  for i = 1, n do f:push(reqs[i]) end
  local t_push = now() - t0
  reqs = nil
  collectgarbage("collect")
  local popped = 0
  t0 = now()
  while true do
    local req = f:pop(0)
    if not req then break end
    f:done(req, 0)
    popped = popped + 1
  end
  local t_pop = now() - t0
  assert(popped == n and f:empty(), ("popped %d of %d"):format(popped, n))
  return t_push, t_pop, popped
end

print(("bench-frontier: %s requests, per_host = 1, pop + done per request"):format(fmt_int(N)))
print(("  %9s  %11s  %8s  %8s  %9s  %8s  %11s"):format(
  "hosts", "requests", "log2(H)", "log2(N/H)", "push us", "pop us", "pops/s"))
local rows = {}
for _, h in ipairs(Hs) do
  for _, n in ipairs({ math.max(1, math.floor(N / 10)), N }) do
    local tp, tq = round(n, h)
    rows[#rows + 1] = { h = h, n = n, push = tp / n * 1e6, pop = tq / n * 1e6 }
    print(("  %9s  %11s  %8.1f  %9.1f  %9.3f  %8.3f  %11s"):format(
      fmt_int(h), fmt_int(n), log2(h), log2(n / h), tp / n * 1e6, tq / n * 1e6, fmt_int(n / tq)))
    io.stdout:flush()
  end
end

-- The same H at N/10 and N: how much a ten times longer queue costs per operation.
print("  per-operation cost at N over N/10 (1.00: independent of the queue's length):")
for i = 1, #rows - 1, 2 do
  local a, b = rows[i], rows[i + 1]
  print(("    %9s hosts: push x%.2f, pop x%.2f"):format(fmt_int(a.h), b.push / a.push, b.pop / a.pop))
end
