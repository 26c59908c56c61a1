-- fixtures: --http
-- Script faults: runaway memory (max_memory) and tasks that never wait
-- (max_task_cpu). Each is reported with the script's file and line, and the other
-- tasks go on.
local lc = require "luacrawl"
local h = require "spec_helper"

describe("max_memory", function()
  it("defaults to 2 GB", function()
    local _, limit = lc.memory()
    assert.equal(2 * 1024 * 1024 * 1024, limit)
  end)

  it("raises not enough memory in the task that asked, and the others go on", function()
    lc.configure({ max_memory = 64 * 1024 * 1024 })
    local hog_err, other = lc.run(function()
      local hog = lc.spawn(function()
        local t = {}
        for i = 1, 1e8 do t[i] = ("x"):rep(64) .. i end
      end)
      local ok, err = pcall(hog.join, hog)
      assert.is_false(ok)
      local fine = lc.spawn(function() return ("still working"):upper() end)
      return err, fine:join()
    end)
    assert.matches("not enough memory", hog_err)
    assert.equal("STILL WORKING", other)
    local used, limit = lc.memory()
    assert.is_true(used < limit)
    lc.configure({ max_memory = 2 * 1024 * 1024 * 1024 })
  end)

  it("still fetches after a task ran out of memory", function()
    lc.configure({ max_memory = 64 * 1024 * 1024 })
    local status = lc.run(function()
      pcall(function() lc.spawn(function() local s = {} while true do s[#s + 1] = {} end end):join() end)
      return lc.fetch(h.url("/status/200")).status
    end)
    assert.equal(200, status)
    lc.configure({ max_memory = 2 * 1024 * 1024 * 1024 })
  end)

  it("counts response bodies held by a script", function()
    local used_before = lc.memory()
    local held, used_while = lc.run(function()
      local keep = {}
      for i = 1, 4 do keep[i] = assert(lc.fetch(h.url("/large?bytes=1000000"))) end
      return keep, lc.memory()
    end)
    assert.is_true(used_while - used_before >= 4000000)
    held = nil -- luacheck: ignore
    collectgarbage()
    collectgarbage()
    assert.is_true(lc.memory() < used_while - 3000000)
  end)

  it("refuses a task that hoards bodies past the limit, and the others go on", function()
    lc.configure({ max_memory = 32 * 1024 * 1024 })
    local err, status = lc.run(function()
      local hog = lc.spawn(function()
        local keep = {}
        for i = 1, 100 do
          keep[i] = assert(lc.fetch(h.url("/large?bytes=1000000")))
          keep[i + 1000] = { i } -- task code allocating after the bodies
        end
      end)
      local ok, e = pcall(hog.join, hog)
      assert.is_false(ok)
      return e, lc.fetch(h.url("/status/200")).status
    end)
    -- The Lua allocation that passes the limit, or the fetch whose body would (kind
    -- memory) while it downloads: both say so.
    assert.matches("not enough memory", tostring(err))
    assert.equal(200, status)
    lc.configure({ max_memory = 2 * 1024 * 1024 * 1024 })
  end)
end)

describe("max_task_cpu", function()
  after_each(function() lc.configure({ max_task_cpu = 0 }) end)

  it("raises in a task that loops without waiting, naming the script's line", function()
    lc.configure({ max_task_cpu = 0.2 })
    local err, other = lc.run(function()
      local spin = lc.spawn(function()
        local x = 0
        while true do x = x + 1 end
      end)
      local sleeper = lc.spawn(function() lc.sleep(0.01) return "slept" end)
      local ok, e = pcall(spin.join, spin)
      assert.is_false(ok)
      return e, sleeper:join()
    end)
    assert.matches("limits_spec.lua:%d+: task used [%d.]+ s of CPU without waiting", err)
    assert.equal("slept", other)
  end)

  it("does not count time spent waiting", function()
    lc.configure({ max_task_cpu = 0.2 })
    local n = lc.run(function()
      local count = 0
      for _ = 1, 5 do
        lc.sleep(0.1) -- half a second in all, but waiting
        count = count + 1
      end
      return count
    end)
    assert.equal(5, n)
  end)

  it("set from inside a task, counts from then, not from the task's start", function()
    local ok = lc.run(function()
      local s, t0 = 0, os.clock()
      while os.clock() - t0 < 0.6 do s = s + 1 end -- CPU spent before the limit is set
      lc.configure({ max_task_cpu = 0.5 })
      for i = 1, 1e5 do s = s + i % 7 end -- well under 0.5 s, even interpreted
      return s > 0
    end)
    assert.is_true(ok)
  end)

  it("switching it off lets long computations finish", function()
    lc.configure({ max_task_cpu = 0 })
    local x = lc.run(function()
      local s = 0
      for i = 1, 3e7 do s = s + i % 7 end
      return s
    end)
    assert.is_number(x)
  end)
end)
