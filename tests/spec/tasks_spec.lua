-- Tasks, sleeping, queues, semaphores, gather and timeout.
local lc = require "luacrawl"

describe("lc.run", function()
  it("returns the main function's results", function()
    assert.same({ 1, "two" }, { lc.run(function() return 1, "two" end) })
  end)

  it("passes its arguments to the main function", function()
    assert.equal(5, lc.run(function(a, b) return a + b end, 2, 3))
  end)

  it("raises the main task's error", function()
    assert.has_error(function() lc.run(function() error("boom", 0) end) end, "boom")
  end)

  it("refuses to nest", function()
    local ok, err = pcall(lc.run, function() return lc.run(function() end) end)
    assert.is_false(ok)
    assert.matches("already running", err)
  end)

  it("ends when no task can make progress, cancelling blocked tasks", function()
    local cleaned = false
    lc.run(function()
      lc.spawn(function()
        local ok, err = pcall(function() lc.queue():get() end)
        cleaned = not ok and err.kind == "cancelled"
      end)
    end)
    assert.is_true(cleaned)
  end)
end)

describe("lc.spawn and task objects", function()
  it("runs the function later, not inside spawn", function()
    local log = {}
    lc.run(function()
      local t = lc.spawn(function() log[#log + 1] = "child" end)
      log[#log + 1] = "parent"
      t:join()
    end)
    assert.same({ "parent", "child" }, log)
  end)

  it("join returns every result", function()
    local a, b, c = lc.run(function()
      return lc.spawn(function(x) lc.sleep(0.01) return x, nil, "z" end, "x"):join()
    end)
    assert.equal("x", a)
    assert.is_nil(b)
    assert.equal("z", c)
  end)

  it("join of an ended task returns at once", function()
    assert.equal(7, lc.run(function()
      local t = lc.spawn(function() return 7 end)
      lc.sleep(0.01)
      assert.is_true(t:done())
      return t:join()
    end))
  end)

  it("join re-raises the task's error", function()
    local err = lc.run(function()
      local t = lc.spawn(function() error({ code = 42 }) end)
      local ok, e = pcall(t.join, t)
      assert.is_false(ok)
      return e
    end)
    assert.equal(42, err.code)
  end)

  it("an error in a task does not stop the others", function()
    local finished = false
    lc.run(function()
      lc.spawn(function() error("task failure expected by the test") end)
      lc.spawn(function() lc.sleep(0.02) finished = true end)
    end)
    assert.is_true(finished)
    assert.is_true(lc.stats().tasks_failed >= 1)
  end)

  it("cancel raises a cancelled error at the waiting call", function()
    local kind, state = lc.run(function()
      local seen
      local t = lc.spawn(function()
        local ok, err = pcall(lc.sleep, 10)
        seen = err.kind
        error(err, 0)
      end)
      lc.sleep(0.01)
      t:cancel()
      pcall(t.join, t)
      return seen, t:state()
    end)
    assert.equal("cancelled", kind)
    assert.equal("cancelled", state)
  end)

  it("cancel before the task starts means it never runs", function()
    local ran = false
    lc.run(function()
      local t = lc.spawn(function() ran = true end)
      t:cancel()
      assert.has_error(function() t:join() end)
    end)
    assert.is_false(ran)
  end)

  it("done reports whether the task has ended", function()
    lc.run(function()
      local t = lc.spawn(function() lc.sleep(0.01) end)
      assert.is_false(t:done())
      t:join()
      assert.is_true(t:done())
    end)
  end)

  it("a plain coroutine.yield in a task gives way to other tasks", function()
    local log = {}
    lc.run(function()
      local a = lc.spawn(function() log[#log + 1] = "a1"; coroutine.yield(); log[#log + 1] = "a2" end)
      local b = lc.spawn(function() log[#log + 1] = "b1" end)
      a:join()
      b:join()
    end)
    assert.same({ "a1", "b1", "a2" }, log)
  end)

  it("ten thousand tasks sleep at once", function()
    local n = lc.run(function()
      local count = 0
      local tasks = {}
      for i = 1, 10000 do tasks[i] = lc.spawn(function() lc.sleep(0.05) count = count + 1 end) end
      for i = 1, 10000 do tasks[i]:join() end
      return count
    end)
    assert.equal(10000, n)
  end)
end)

describe("waiting where LuaJIT cannot yield", function()
  it("raises a clear error inside a table.sort comparator", function()
    local ok, err = lc.run(function()
      return pcall(table.sort, { 3, 1, 2 }, function(a, b) lc.sleep(0) return a < b end)
    end)
    assert.is_false(ok)
    assert.matches("cannot wait here", err)
    assert.matches("tasks_spec.lua", err) -- located at the script's call
  end)

  it("raises a clear error outside any task", function()
    local ok, err = pcall(lc.sleep, 0)
    assert.is_false(ok)
    assert.matches("must be called from a luacrawl task", err)
  end)

  it("raises a clear error in a coroutine the task created", function()
    local ok, err = lc.run(function()
      local co = coroutine.create(function() lc.sleep(0) end)
      return coroutine.resume(co)
    end)
    assert.is_false(ok)
    assert.matches("coroutine the task created", err)
  end)
end)

describe("lc.sleep and lc.now", function()
  it("sleeps at least the time asked", function()
    local elapsed = lc.run(function()
      local t0 = lc.now()
      lc.sleep(0.05)
      return lc.now() - t0
    end)
    assert.is_true(elapsed >= 0.05)
    assert.is_true(elapsed < 1)
  end)

  it("wakes sleepers in deadline order", function()
    local log = {}
    lc.run(function()
      for _, d in ipairs({ 0.03, 0.01, 0.02 }) do
        lc.spawn(function() lc.sleep(d) log[#log + 1] = d end)
      end
    end)
    assert.same({ 0.01, 0.02, 0.03 }, log)
  end)
end)

describe("lc.queue", function()
  it("hands items out in FIFO order", function()
    local got = lc.run(function()
      local q = lc.queue()
      for i = 1, 5 do q:put(i) end
      local out = {}
      for _ = 1, 5 do out[#out + 1] = q:get() end
      return out
    end)
    assert.same({ 1, 2, 3, 4, 5 }, got)
  end)

  it("keeps FIFO order while its ring of slots wraps around and grows", function()
    local got = lc.run(function()
      local q, out, nextv = lc.queue(), {}, 1
      -- Interleaved puts and gets move the head round the ring; bursts make it
      -- grow while the head is not at its start.
      for round = 1, 40 do
        for _ = 1, round % 7 + 1 do
          q:put_nowait(nextv)
          nextv = nextv + 1
        end
        for _ = 1, round % 5 + 1 do
          local v = q:get_nowait()
          if v then out[#out + 1] = v end
        end
      end
      while not q:empty() do out[#out + 1] = q:get() end
      return { out = out, n = nextv - 1 }
    end)
    assert.equal(got.n, #got.out)
    for i = 1, got.n do assert.equal(i, got.out[i]) end
  end)

  it("keeps strings (held outside the Lua heap) in order among other items", function()
    local big = ("0123456789"):rep(10000) -- longer than a block of the string FIFO
    local t = {}
    local items = { "a", 1, "", t, "b\0c", false, big, "a", 2.5 }
    local got = lc.run(function()
      local q, out = lc.queue(), {}
      for round = 1, 3 do
        for _, v in ipairs(items) do q:put_nowait(v) end
        for _ = 1, #items - round do out[#out + 1] = q:get_nowait() end
      end
      while not q:empty() do out[#out + 1] = q:get() end
      return out
    end)
    assert.equal(3 * #items, #got)
    for i = 1, #got do
      local want = items[(i - 1) % #items + 1]
      assert.is_true(got[i] == want, "item " .. i)
    end
    assert.equal(big, got[7])
  end)

  it("hands back 50,000 URL strings in order, and counts their memory", function()
    local got = lc.run(function()
      local q = lc.queue()
      local function used()
        collectgarbage("collect")
        collectgarbage("collect") -- and free what the first finalized
        return lc.memory()
      end
      -- The strings live in a table throughout, and a first round fills and empties
      -- the queue before the measured one: what LuaJIT's string table, its compiled
      -- traces and the queue's own table grow by, which depends on what ran before,
      -- is then in neither measure.
      local urls = {}
      for i = 1, 50000 do urls[i] = "http://example.org/p/" .. i .. ".html" end
      local function fill() for i = 1, 50000 do q:put_nowait(urls[i]) end end
      local function drain()
        for i = 1, 50000 do
          if q:get() ~= urls[i] then return i end
        end
      end
      fill()
      local bad = drain()
      local start = used()
      fill()
      local held = used() - start
      bad = bad or drain()
      return { bad = bad, held = held, after = used() - start, size = q:size() }
    end)
    assert.is_nil(got.bad)
    assert.equal(0, got.size)
    -- About 38 bytes each while queued (counted towards max_memory, as bodies are),
    -- given back as they leave.
    assert.is_true(got.held - got.after > 50000 * 30, ("held %d, after %d"):format(got.held, got.after))
    assert.is_true(got.after < 50000 * 2, ("after %d"):format(got.after))
  end)

  it("wakes waiting getters in order, passing over cancelled ones", function()
    local got = lc.run(function()
      local q, out = lc.queue(), {}
      local tasks = {}
      for i = 1, 20 do
        tasks[i] = lc.spawn(function()
          local v = q:get()
          out[#out + 1] = i .. ":" .. v
        end)
      end
      lc.sleep(0.01) -- all twenty wait
      for i = 2, 20, 2 do tasks[i]:cancel() end
      for v = 1, 10 do q:put(v) end
      lc.sleep(0.01)
      return out
    end)
    assert.same({ "1:1", "3:2", "5:3", "7:4", "9:5", "11:6", "13:7", "15:8", "17:9", "19:10" }, got)
  end)

  it("a getter that survives a cancel waits again at the end of the line", function()
    local got = lc.run(function()
      local q, out, tasks = lc.queue(), {}, {}
      for i = 1, 6 do
        tasks[i] = lc.spawn(function()
          if i % 2 == 0 then pcall(q.get, q) end -- cancelled below: waits again
          local v = q:get()
          out[#out + 1] = i .. ":" .. v
        end)
      end
      lc.sleep(0.01)
      for i = 2, 6, 2 do tasks[i]:cancel() end
      lc.sleep(0.01)
      for v = 1, 6 do q:put(v) end
      lc.sleep(0.01)
      return out
    end)
    assert.same({ "1:1", "3:2", "5:3", "2:4", "4:5", "6:6" }, got)
  end)

  it("get waits until an item is put", function()
    local got = lc.run(function()
      local q = lc.queue()
      lc.spawn(function() lc.sleep(0.01) q:put("late") end)
      return q:get()
    end)
    assert.equal("late", got)
  end)

  it("put waits while the queue is full", function()
    local log = {}
    lc.run(function()
      local q = lc.queue(1)
      lc.spawn(function()
        q:put(1)
        log[#log + 1] = "put1"
        q:put(2)
        log[#log + 1] = "put2"
      end)
      lc.sleep(0.01)
      log[#log + 1] = "get" .. q:get()
      lc.sleep(0.01)
    end)
    assert.same({ "put1", "get1", "put2" }, log)
  end)

  it("put_nowait and get_nowait do not wait", function()
    lc.run(function()
      local q = lc.queue(1)
      assert.is_true(q:put_nowait("a"))
      assert.is_false(q:put_nowait("b"))
      assert.equal(1, q:size())
      assert.equal("a", q:get_nowait())
      assert.is_nil(q:get_nowait())
    end)
  end)

  it("join waits until every item is marked done", function()
    local processed = lc.run(function()
      local q, done = lc.queue(), 0
      for _ = 1, 3 do
        lc.spawn(function()
          while true do
            local item = q:get()
            lc.sleep(0.005)
            done = done + item
            q:task_done()
          end
        end)
      end
      for i = 1, 10 do q:put(i) end
      q:join()
      return done
    end)
    assert.equal(55, processed)
  end)

  it("a getter cancelled after being woken passes the item on", function()
    local got = lc.run(function()
      local q = lc.queue()
      local a = lc.spawn(function() return q:get() end)
      local b = lc.spawn(function() return q:get() end)
      lc.sleep(0.01)
      q:put("x") -- wakes a
      a:cancel() -- before a runs
      return b:join()
    end)
    assert.equal("x", got)
  end)

  it("task_done more often than put raises", function()
    lc.run(function()
      assert.has_error(function() lc.queue():task_done() end)
    end)
  end)
end)

describe("lc.semaphore", function()
  it("limits how many tasks hold it at once", function()
    local peak = lc.run(function()
      local sem, inside, peak = lc.semaphore(3), 0, 0
      local tasks = {}
      for i = 1, 20 do
        tasks[i] = lc.spawn(function()
          sem:acquire()
          inside = inside + 1
          if inside > peak then peak = inside end
          lc.sleep(0.002)
          inside = inside - 1
          sem:release()
        end)
      end
      for i = 1, 20 do tasks[i]:join() end
      return peak
    end)
    assert.equal(3, peak)
  end)

  it("with releases even when the function fails", function()
    lc.run(function()
      local sem = lc.semaphore(1)
      assert.has_error(function() sem:with(error, "inside") end)
      assert.equal(1, sem.value)
    end)
  end)
end)

describe("lc.gather", function()
  it("returns the first result of each, in order", function()
    local a, b, c = lc.run(function()
      return lc.gather(
        function() lc.sleep(0.02) return "a" end,
        lc.spawn(function() return "b" end),
        function() lc.sleep(0.01) return "c" end)
    end)
    assert.same({ "a", "b", "c" }, { a, b, c })
  end)

  it("raises the first error and cancels the rest", function()
    local other
    local ok, err = lc.run(function()
      other = lc.spawn(function() lc.sleep(5) end)
      return pcall(lc.gather, function() error("gather failure", 0) end, other)
    end)
    assert.is_false(ok)
    assert.equal("gather failure", err)
    assert.equal("cancelled", other:state())
  end)
end)

describe("lc.timeout", function()
  it("returns the function's results when it is in time", function()
    assert.same({ 1, 2 }, { lc.run(function() return lc.timeout(1, function() return 1, 2 end) end) })
  end)

  it("returns nil and a timeout error, and cancels the function, when it is late", function()
    local res, err, cancelled = lc.run(function()
      local was_cancelled = false
      local r, e = lc.timeout(0.02, function()
        local ok, x = pcall(lc.sleep, 5)
        was_cancelled = not ok and x.kind == "cancelled"
        error(x, 0)
      end)
      lc.sleep(0)
      return r, e, was_cancelled
    end)
    assert.is_nil(res)
    assert.equal("timeout", err.kind)
    assert.is_true(cancelled)
  end)

  it("re-raises the function's error", function()
    assert.has_error(function()
      lc.run(function() return lc.timeout(1, function() error("inner", 0) end) end)
    end, "inner")
  end)
end)

describe("lc.signals", function()
  it("delivers a watched signal to the waiting task instead of killing the process", function()
    local got = lc.run(function()
      lc.signals.watch("USR1")
      local waiter = lc.spawn(lc.signals.wait)
      lc.sleep(0.01)
      local pid = io.open("/proc/self/stat"):read("*l"):match("^%d+")
      os.execute("kill -USR1 " .. pid)
      lc.sleep(0.05) -- keeps the run alive while the signal is read
      local name = waiter:join()
      lc.signals.unwatch("USR1")
      return name
    end)
    assert.equal("USR1", got)
  end)

  it("keeps a signal that arrives while nobody waits", function()
    local got = lc.run(function()
      lc.signals.watch("USR2")
      local pid = io.open("/proc/self/stat"):read("*l"):match("^%d+")
      os.execute("kill -USR2 " .. pid)
      lc.sleep(0.05)
      local name = lc.signals.wait()
      lc.signals.unwatch("USR2")
      return name
    end)
    assert.equal("USR2", got)
  end)

  it("a task waiting for signals does not keep the run alive", function()
    local t0 = os.time()
    lc.run(function()
      lc.signals.watch("HUP")
      lc.spawn(lc.signals.wait)
    end)
    lc.signals.unwatch("HUP")
    assert.is_true(os.time() - t0 < 2)
  end)

  it("refuses unknown signal names", function()
    assert.has_error(function() lc.signals.watch("KILLALL") end)
  end)
end)
