-- scripts/bench_redis.lua URL N PIPELINE TASKS: pipelined INCR through lc.redis on one
-- connection; TASKS tasks each send pipelines of PIPELINE commands until N are done.
-- Prints commands/s (wall clock) and the CPU seconds of this process. Run by
-- scripts/bench-redis.
local lc = require "luacrawl"

local url, n, depth, ntasks = arg[1], tonumber(arg[2]), tonumber(arg[3]), tonumber(arg[4])
local r = assert(lc.redis.connect(url))
assert(r:call("DEL", "bench:incr"))

local cmds = {}
for i = 1, depth do cmds[i] = { "INCR", "bench:incr" } end
local per_task = math.floor(n / ntasks / depth)

local start, cpu0 = lc.now(), os.clock()
local tasks = {}
for i = 1, ntasks do
  tasks[i] = lc.spawn(function()
    for _ = 1, per_task do assert(r:pipeline(cmds)) end
  end)
end
for i = 1, ntasks do tasks[i]:join() end
local secs, cpu = lc.now() - start, os.clock() - cpu0
local total = per_task * ntasks * depth
assert(tonumber(r:call("GET", "bench:incr")) == total, "every INCR counted")
r:call("DEL", "bench:incr")
r:close()
print(("lc.redis        INCR, pipelines of %d, %d task(s) on 1 connection: %d commands in %.2f s: %.0f commands/s (client CPU %.2f s)")
  :format(depth, ntasks, total, secs, total / secs, cpu))
