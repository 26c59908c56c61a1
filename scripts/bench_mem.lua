-- Scenario 3 of scripts/bench: what one waiting transfer, or one waiting task, holds.
--
--   luacrawl run scripts/bench_mem.lua fetch SLOW_URL N
--   luacrawl run scripts/bench_mem.lua queue N
--
-- fetch: N tasks each lc.fetch(SLOW_URL) at once, an endpoint that answers after a
-- delay (scripts/bench_slow_server.py), so that all N transfers are in progress
-- together. queue: N tasks each waiting in q:get() on one empty queue, then all let go.
-- Prints one line: "N ..., peak RSS P KB, RSS at the start S KB, B bytes a transfer"
-- (or "a task"), B being (P - S) / N, with P the process's high-water mark
-- (VmHWM) at the end and S its RSS before the first task. Linux only (/proc).
-- Exits 1 unless every fetch returned 200 (every task ended, for queue).
local lc = require "luacrawl"

local function status_kb(field)
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^" .. field .. ":%s+(%d+) kB")
    if kb then return tonumber(kb) end
  end
  error("no " .. field .. " in /proc/self/status")
end

local function usage()
  io.stderr:write("usage: luacrawl run bench_mem.lua fetch SLOW_URL N | queue N\n")
  os.exit(2)
end

local function report(what, n, start_kb, t0)
  local peak_kb = status_kb("VmHWM")
  print(("%d %s, peak RSS %d KB, RSS at the start %d KB, %.0f bytes a %s, %.2f s"):format(
    n, what, peak_kb, start_kb, (peak_kb - start_kb) * 1024 / n,
    what == "transfers" and "transfer" or "task", lc.now() - t0))
end

local function bench_fetch(url, n)
  local start_kb, t0 = status_kb("VmRSS"), lc.now()
  local ok200, bad, tasks = 0, {}, {}
  for i = 1, n do
    tasks[i] = lc.spawn(function()
      -- A generous timeout: with thousands of connects at once, some wait in the
      -- listen backlog before the server takes them.
      local res, err = lc.fetch(url, { timeout = 120 })
      local key = res and tostring(res.status) or err.kind
      if key == "200" then ok200 = ok200 + 1 else bad[key] = (bad[key] or 0) + 1 end
      if res then res:release() end
    end)
  end
  for _, t in ipairs(tasks) do t:join() end
  report("transfers", n, start_kb, t0)
  if ok200 ~= n then
    for k, c in pairs(bad) do io.stderr:write(("%d x %s\n"):format(c, k)) end
    os.exit(1)
  end
end

local function bench_queue(n)
  local q = lc.queue()
  local start_kb, t0 = status_kb("VmRSS"), lc.now()
  local got, tasks = 0, {}
  for i = 1, n do
    tasks[i] = lc.spawn(function()
      q:get()
      got = got + 1
    end)
  end
  lc.sleep(0) -- every task runs to its q:get() and waits there
  for _ = 1, n do q:put_nowait(true) end
  for _, t in ipairs(tasks) do t:join() end
  report("tasks", n, start_kb, t0)
  if got ~= n then os.exit(1) end
end

local mode = arg[1]
if mode == "fetch" and arg[2] and tonumber(arg[3]) then
  bench_fetch(arg[2], tonumber(arg[3]))
elseif mode == "queue" and tonumber(arg[2]) then
  bench_queue(tonumber(arg[2]))
else
  usage()
end
