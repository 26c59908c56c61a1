-- Scenario 2 of scripts/bench: many tasks waiting at once.
--
--   luacrawl run scripts/bench_tasks.lua SLOW_URL [SLEEPERS [FETCHERS [SLEEP_S]]]
--
-- Spawns SLEEPERS tasks (default 10000) that each lc.sleep(SLEEP_S) (default 2) and
-- FETCHERS tasks (default 2000) that each lc.fetch(SLOW_URL) — an endpoint that
-- answers after a delay (scripts/bench_slow_server.py) — all at the same time, waits
-- for every one, and prints what came back. Exits 1 unless every sleep ended and
-- every fetch returned 200.
local lc = require "luacrawl"

local url = arg[1]
if not url then
  io.stderr:write("usage: luacrawl run bench_tasks.lua SLOW_URL [SLEEPERS [FETCHERS [SLEEP_S]]]\n")
  os.exit(2)
end
local n_sleep = tonumber(arg[2]) or 10000
local n_fetch = tonumber(arg[3]) or 2000
local sleep_s = tonumber(arg[4]) or 2

local t0 = lc.now()
local slept, ok200, bad = 0, 0, {}
local waiting_now, max_waiting = 0, 0

local function enter()
  waiting_now = waiting_now + 1
  if waiting_now > max_waiting then max_waiting = waiting_now end
end

local tasks = {}
for i = 1, n_sleep do
  tasks[#tasks + 1] = lc.spawn(function()
    enter()
    lc.sleep(sleep_s)
    waiting_now = waiting_now - 1
    slept = slept + 1
  end)
end
for i = 1, n_fetch do
  tasks[#tasks + 1] = lc.spawn(function()
    enter()
    -- A generous timeout: with thousands of connects at once, some wait in the
    -- listen backlog before the server takes them.
    local res, err = lc.fetch(url, { timeout = 60 })
    waiting_now = waiting_now - 1
    local key = res and tostring(res.status) or (err and err.kind or "?")
    if key == "200" then
      ok200 = ok200 + 1
    else
      bad[key] = (bad[key] or 0) + 1
    end
  end)
end

for _, t in ipairs(tasks) do t:join() end
local elapsed = lc.now() - t0

local others = {}
for k, n in pairs(bad) do others[#others + 1] = ("%d x %s"):format(n, k) end
table.sort(others)
print(("sleeps done %d/%d, fetches 200 %d/%d%s, at most %d waiting at once, %.2f s"):format(
  slept, n_sleep, ok200, n_fetch,
  #others > 0 and (" (others: " .. table.concat(others, ", ") .. ")") or "",
  max_waiting, elapsed))
if slept ~= n_sleep or ok200 ~= n_fetch then os.exit(1) end
