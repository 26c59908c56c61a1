-- fixtures: --http
-- The hostile runtime (issue 16): a script's finalizers that raise, signals sent at any
-- moment of a crawl, descriptors running out. Each case runs the binary in a
-- subprocess where a failure would be a crash or a hang, and bounds the wait.
local lc = require "luacrawl"
local h = require "spec_helper"

local bin = h.luacrawl_bin

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local read = h.read_file

local function count_lines(s)
  local n = 0
  for _ in s:gmatch("[^\n]+") do n = n + 1 end
  return n
end

-- A crawl whose parse makes proxies with a __gc that raises, many per page.
local GC_CRAWL = [[
local crawl = require "luacrawl.crawl"
local n = 0
local st = crawl.run {
  start = { %q }, concurrency = 8, max_pages = 60, robots = false,
  quiet = true, progress = false, output = %q,
  parse = function(page)
    for i = 1, 300 do
      local u = newproxy(true)
      getmetatable(u).__gc = function() n = n + 1; error("finalizer boom " .. n) end
    end
    page:follow(page:css("a::attr(href)"))
    page:emit { url = page.url }
  end,
}
io.write("pages ", st.pages, " items ", st.items, " parse_errors ", st.parse_errors, "\n")
]]

describe("hostile runtime", function()
  it("hostile_gc_error_in_a_crawl_is_reported_and_the_crawl_finishes (binary)", function()
    -- It crashed (SIGSEGV in LuaJIT's unwinder) in 2 runs of 3, or ended the run
    -- with the finalizer's error and lost the buffered items.
    for _ = 1, 3 do
      local script, out = h.tmpname(".lua"), h.tmpname(".jsonl")
      write(script, GC_CRAWL:format(h.url("/site/"), out))
      local code, stdout, stderr = h.sh(("%q run %q"):format(bin, script))
      assert.equal(0, code, stderr:sub(-2000))
      local pages = tonumber(stdout:match("pages (%d+)"))
      assert.is_true(pages and pages >= 20, stdout)
      assert.equal(pages, count_lines(read(out)))
      assert.matches("error in a __gc metamethod %(ignored%): .*finalizer boom", stderr)
    end
  end)

  it("hostile_gc_error_module_state_opts_in_with_luacrawl_finalizers", function()
    -- A luajit of its own loads the module: only when this process is luajit too,
    -- whose environment (the sanitizers' LD_PRELOAD) fits the module.
    local stat = read("/proc/self/stat")
    if not stat:match("^%d+ %(luajit") then return end
    local script, out = h.tmpname(".lua"), h.tmpname(".jsonl")
    write(script, ("package.cpath = %q\n"):format(package.cpath)
      .. 'require("luacrawl.finalizers").install()\n'
      .. GC_CRAWL:format(h.url("/site/"), out))
    local code, stdout, stderr = h.sh(("luajit %q"):format(script))
    assert.equal(0, code, stderr:sub(-2000))
    local pages = tonumber(stdout:match("pages (%d+)"))
    assert.is_true(pages and pages >= 20, stdout)
    assert.equal(pages, count_lines(read(out)))
  end)

  it("hostile_gc_error_in_the_schedulers_bookkeeping_fails_no_run", function()
    -- Finalizers set with rawset are not wrapped (luacrawl.finalizers): their errors
    -- reach whatever allocates, the scheduler's storing of task results included.
    -- The JIT is off here, and the traces compiled before are flushed (jit.off()
    -- alone leaves them in use): this LuaJIT crashes by itself when a finalizer raises
    -- at a trace exit, whatever the engine does.
    local armed = true
    local function boom()
      if armed then error("finalizer boom") end
    end
    jit.off()
    jit.flush()
    local ok, res = pcall(lc.run, function()
      local tasks = {}
      for i = 1, 300 do
        tasks[i] = lc.spawn(function()
          for _ = 1, 20 do
            local u = newproxy(true)
            rawset(getmetatable(u), "__gc", boom)
          end
          lc.sleep(0)
          return i, ("x"):rep(i % 7)
        end)
      end
      local ended = 0
      for _, t in ipairs(tasks) do
        pcall(t.join, t)
        ended = ended + 1
      end
      return ended
    end)
    armed = false
    collectgarbage()
    jit.on()
    assert.is_true(ok, tostring(res))
    assert.equal(300, res)
  end)

  it("hostile_gc_error_while_a_response_is_built_is_no_fetch_failure", function()
    -- A task makes raising finalizers while 1,000 fetches end: building a response
    -- (in the scheduler, protected) meets them. Each error is reported and the
    -- response built again; it was reported as "out of memory building the result".
    local armed = true
    local function boom()
      if armed then error("finalizer boom") end
    end
    jit.off() -- and no trace left from before (as above)
    jit.flush()
    local ok, res = pcall(lc.run, function()
      local done = false
      lc.spawn(function()
        while not done do
          pcall(function()
            for _ = 1, 200 do
              rawset(getmetatable(newproxy(true)), "__gc", boom)
            end
          end)
          lc.sleep(0)
        end
      end)
      local tasks = {}
      for i = 1, 1000 do
        tasks[i] = lc.spawn(function()
          local fine, r, err = pcall(lc.fetch, h.url("/manyheaders?count=40"))
          if not fine then return "raised in the task" end
          if not r then return err.kind .. ": " .. err.message end
          return (r.status == 200 and r.headers["x-h-39"] == "v") and "ok" or "wrong"
        end)
      end
      local outcomes = {}
      for _, t in ipairs(tasks) do
        local joined, what = pcall(t.join, t)
        what = joined and what or "raised in the task"
        outcomes[what] = (outcomes[what] or 0) + 1
      end
      done = true
      return outcomes
    end)
    armed = false
    collectgarbage()
    jit.on()
    assert.is_true(ok, tostring(res))
    -- A finalizer may raise in a task's own code (its fetch call, its checks): that
    -- is the task's error. Anything else is a success.
    local raised = res["raised in the task"] or 0
    res["raised in the task"] = nil
    assert.same({ ok = 1000 - raised }, res)
    assert.is_true(raised < 100, tostring(raised))
  end)

  it("hostile_sigint_stops_a_crawl_blocked_in_long_waits_every_time", function()
    -- A 600 s Retry-After and a hanging URL: nothing would end the crawl but the
    -- signal. Started in the background by sh, the process inherits SIGINT ignored;
    -- a SIGINT sent before the crawl watched it was dropped, and the crawl ran on.
    -- Each delay starts once the script runs; the script waits 0.3 s before the
    -- crawl starts watching, so some signals come before the watch, some during it.
    math.randomseed(os.time())
    local script = h.tmpname(".lua")
    write(script, ([[
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local ready, id = ...
io.open(ready, "w"):close()
lc.sleep(0.3)
local st = crawl.run {
  start = { %q .. id .. "?fail=5&retry_after=600", %q },
  quiet = true, progress = false, robots = false, stop_grace = 0.2,
}
io.write("stopped ", tostring(st.stop_reason), "\n")
]]):format(h.url("/flaky/hostile-sigint-"), h.url("/fault/hang?seconds=120")))
    for run = 1, 20 do
      local ready = h.tmpname(".ready")
      local delay = math.random() * 0.8
      local cmd = ([[
%q run %q %q %s & pid=$!
i=0; while [ ! -e %q ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
sleep %.3f
kill -INT $pid
( sleep 5; kill -KILL $pid 2>/dev/null ) & dog=$!
wait $pid; status=$?
kill $dog 2>/dev/null
echo "status $status"
]]):format(bin, script, ready, os.time() .. "-" .. run, ready, delay)
      local sh_file = h.tmpname(".sh")
      write(sh_file, cmd)
      local _, stdout, stderr = h.sh("sh " .. sh_file)
      local status = tonumber(stdout:match("status (%d+)"))
      assert.are_not.equal(137, status,
        ("run %d: still running 5 s after SIGINT (sent %.3f s in)\n%s"):format(run, delay, stderr))
      assert.equal(130, status, ("run %d (%.3f s): %s%s"):format(run, delay, stdout, stderr))
      assert.matches("stopped SIGINT", stdout)
    end
  end)

  it("hostile_fd_exhaustion_says_too_many_open_files", function()
    local script = h.tmpname(".lua")
    write(script, ([[
local lc = require "luacrawl"
local kinds, msg = {}, nil
local tasks = {}
for i = 1, 150 do
  tasks[i] = lc.spawn(function()
    local res, err = lc.fetch(%q, { timeout = 10 })
    if not res then
      kinds[err.kind] = (kinds[err.kind] or 0) + 1
      msg = msg or tostring(err)
    end
  end)
end
for _, t in ipairs(tasks) do t:join() end
io.write("resource ", kinds.resource or 0, " connect ", kinds.connect or 0, "\n", tostring(msg), "\n")
]]):format(h.url("/slow?delay=0.5")))
    -- dash's ulimit -n sets the hard limit too: the binary cannot raise it.
    local code, stdout, stderr = h.sh(("sh -c 'ulimit -n 48 && %q run %q'"):format(bin, script))
    assert.equal(0, code, stderr)
    assert.is_true(tonumber(stdout:match("resource (%d+)")) > 0, stdout)
    assert.equal("0", stdout:match("connect (%d+)"))
    assert.matches("too many open files: the process's limit of 48 is reached", stdout)
  end)

  it("hostile_binary_raises_the_soft_fd_limit_to_the_hard_one", function()
    local script = h.tmpname(".lua")
    write(script, [[
for line in io.lines("/proc/self/limits") do
  local soft, hard = line:match("^Max open files%s+(%S+)%s+(%S+)")
  if soft then io.write(soft, " ", hard, "\n") end
end
]])
    local code, stdout, stderr = h.sh(("sh -c 'ulimit -Sn 64 && %q run %q'"):format(bin, script))
    assert.equal(0, code, stderr)
    local soft, hard = stdout:match("(%S+) (%S+)")
    assert.equal(hard, soft)
  end)
end)
