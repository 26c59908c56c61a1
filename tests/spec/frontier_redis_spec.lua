-- fixtures: --redis
-- The scripts of the Redis frontier (lua/luacrawl/frontier_redis_scripts.lua), called
-- as workers call them, against the redis-server run.py starts: admission once,
-- claims within the fleet's slots and delays, acknowledgements, reclaim of an expired
-- lease, late acknowledgements refused, a step sent again answered from its kept
-- reply. (The crawl over them, with real workers: redis_crawl_spec.lua.)
local lc = require "luacrawl"
local h = require "spec_helper"
local cjson = require "cjson"
local scripts = require "luacrawl.frontier_redis_scripts"
local frontier_redis = require "luacrawl.frontier_redis"

local crawls = 0

-- Run fn(fleet) in a task: fleet:step(worker, body) calls the step script for worker
-- (its own sequence numbers unless body.seq), and returns the decoded reply;
-- fleet:stats() the crawl's stats hash.
local function with_fleet(fn)
  crawls = crawls + 1
  local prefix = frontier_redis.prefix(("spec-%d-%d"):format(os.time(), crawls))
  return lc.run(function()
    local r = assert(lc.redis.connect(h.redis_url))
    local step, status, seqs = r:script(scripts.step), r:script(scripts.status), {}
    local fleet = {}
    function fleet.step(_, worker, body)
      local seq = body.seq
      if not seq then
        seqs[worker] = (seqs[worker] or 0) + 1
        seq = seqs[worker]
      end
      body.seq = nil
      local t = { per_host = 1, delay = 0, lease = 30000, holding = 0, claim = 0, acks = {}, pushes = {}, ops = {} }
      for k, v in pairs(body) do t[k] = v end
      local res = assert(step:call({ prefix .. "stats" }, { prefix, worker, tostring(seq), cjson.encode(t) }))
      return cjson.decode(res), res
    end
    function fleet.status()
      local res = assert(status:call({ prefix .. "stats" }, { prefix, "30000" }))
      return cjson.decode(res)
    end
    function fleet.stats()
      local flat = assert(r:call("HGETALL", prefix .. "stats"))
      local t = {}
      for i = 1, #flat, 2 do t[flat[i]] = tonumber(flat[i + 1]) end
      return t
    end
    local out = { fn(fleet) }
    r:close()
    return unpack(out)
  end)
end

-- (A request's item carries its priority, as the worker's do: one given back keeps it.)
local function item(url, priority)
  return cjson.encode({ url = url, depth = 0, priority = priority })
end

local function push(host, url, priority)
  return { host, item(url, priority), lc.url.fingerprint(url), priority or 0 }
end

-- A claimed member's item: after its 17-character prefix.
local function body(member)
  return member:sub(18)
end

-- The items of a reply, as {host, url} pairs.
local function urls(reply)
  local out = {}
  for _, it in ipairs(reply.items) do out[#out + 1] = { it[1], cjson.decode(body(it[2])).url } end
  return out
end

describe("frontier_redis scripts", function()
  it("admit a URL once for the fleet, whoever pushes it", function()
    with_fleet(function(f)
      f:step("w1", { pushes = { push("a", "http://a/1"), push("a", "http://a/1") } })
      local reply = f:step("w2", { pushes = { push("a", "http://a/1"), push("a", "http://a/2") } })
      assert.equal(2, reply.queued)
      local st = f:stats()
      assert.equal(2, st.pushed)
      assert.equal(2, st.duplicates)
    end)
  end)

  it("claim per host only its free slots for the whole fleet, in the order pushed", function()
    with_fleet(function(f)
      f:step("w1", { pushes = { push("a", "http://a/1"), push("a", "http://a/2"), push("b", "http://b/1") } })
      local r1 = f:step("w1", { claim = 10, holding = 0 })
      table.sort(r1.items, function(x, y) return x[1] < y[1] end)
      assert.same({ { "a", "http://a/1" }, { "b", "http://b/1" } }, urls(r1))
      assert.equal(2, r1.leased)
      -- Host a's one slot is w1's: w2 gets nothing until w1 acknowledges.
      local r2 = f:step("w2", { claim = 10 })
      assert.same({}, urls(r2))
      f:step("w1", { acks = { { r1.items[1][2], "a", "page", 200, cjson.null } }, holding = 2 })
      local r3 = f:step("w2", { claim = 10 })
      assert.same({ { "a", "http://a/2" } }, urls(r3))
      assert.equal(1, f:stats().pages)
      assert.equal(1, f:stats()["s:200"])
    end)
  end)

  it("keep a host's delay from one start, and from one end, to the next start, on Redis's clock", function()
    with_fleet(function(f)
      f:step("w1", { delay = 300, pushes = { push("a", "http://a/1"), push("a", "http://a/2") } })
      local r1 = f:step("w1", { delay = 300, claim = 10, holding = 0, per_host = 2 })
      assert.equal(1, #r1.items) -- one at a time when the host has a delay
      f:step("w1", { delay = 300, acks = { { r1.items[1][2], "a", "page", 200, cjson.null } }, holding = 1 })
      local r2 = f:step("w2", { delay = 300, claim = 10, per_host = 2 })
      assert.equal(0, #r2.items)
      -- (Up to a millisecond more: times to come are rounded up.)
      assert.is_true(r2.wait > 0 and r2.wait <= 301, "wait " .. r2.wait)
      lc.sleep(r2.wait / 1000 + 0.01)
      assert.equal(1, #f:step("w2", { delay = 300, claim = 10, per_host = 2 }).items)
    end)
  end)

  it("reclaim an expired lease, and refuse its worker's late acknowledgements without counting them", function()
    with_fleet(function(f)
      f:step("w1", { pushes = { push("a", "http://a/1") } })
      local r1 = f:step("w1", { claim = 1, lease = 100 })
      assert.equal(1, #r1.items)
      lc.sleep(0.15)
      -- Any worker's step reclaims it; the request is claimable again.
      local r2 = f:step("w2", { claim = 1 })
      assert.same({ { "a", "http://a/1" } }, urls(r2))
      assert.equal(1, f:stats().reclaimed)
      -- w1 comes back: its lease is gone (lost), its acknowledgement refused.
      local late = f:step("w1", { acks = { { r1.items[1][2], "a", "page", 200, cjson.null } }, holding = 1 })
      assert.equal(1, late.lost)
      assert.equal(1, late.refused)
      f:step("w2", { acks = { { r2.items[1][2], "a", "page", 200, cjson.null } }, holding = 1 })
      local st = f:stats()
      assert.equal(1, st.pages)
      assert.equal(1, st.refused)
      assert.equal(0, st.leased)
      assert.equal(0, st.queued)
    end)
  end)

  it("answer a step sent again (same sequence number) from its kept reply: nothing done twice", function()
    with_fleet(function(f)
      f:step("w1", { pushes = { push("a", "http://a/1"), push("b", "http://b/1") } })
      local first, raw = f:step("w1", { seq = 7, claim = 1 })
      local again, raw2 = f:step("w1", { seq = 7, claim = 1 })
      assert.equal(raw, raw2)
      assert.equal(1, #first.items)
      assert.equal(1, f:stats().leased) -- claimed once
      assert.equal(1, #again.items)
      assert.equal(1, #f:step("w1", { seq = 8, claim = 1, holding = 1 }).items)
    end)
  end)

  it("join: the crawl's identity and token kept by the first worker; a name heard from within a lease is busy", function()
    crawls = crawls + 1
    local prefix = frontier_redis.prefix(("spec-join-%d-%d"):format(os.time(), crawls))
    lc.run(function()
      local r = assert(lc.redis.connect(h.redis_url))
      local join = r:script(scripts.join)
      local function call(worker, identity, token, lease)
        return assert(join:call({ prefix .. "stats" }, { prefix, worker, identity, token, tostring(lease) }))
      end
      assert.same({ "id-1", "tok-1", -1 }, call("w1", "id-1", "tok-1", 30000))
      assert.same({ "id-1", "tok-1", -1 }, call("w2", "id-2", "tok-2", 30000))
      local again = call("w1", "id-1", "tok-3", 30000)
      assert.is_true(again[3] >= 0)
      lc.sleep(0.06)
      assert.same({ "id-1", "tok-1", -1 }, call("w1", "id-1", "tok-3", 50)) -- not heard from for a lease
      r:close()
    end)
  end)

  it("give requests back to the front of their host's queue (return, requeue) and drop others", function()
    with_fleet(function(f)
      f:step("w1", { per_host = 3, pushes = { push("a", "http://a/1"), push("a", "http://a/2"), push("a", "http://a/3") } })
      local r = f:step("w1", { per_host = 3, claim = 3 })
      assert.equal(3, #r.items)
      local again = cjson.encode({ url = "http://a/2", depth = 0, retries = 1 })
      f:step("w1", { per_host = 3, holding = 3, acks = {
        { r.items[1][2], "a", "return", cjson.null, cjson.null },
        { r.items[2][2], "a", "requeue", cjson.null, again },
        { r.items[3][2], "a", "drop", cjson.null, cjson.null },
      } })
      local st = f:stats()
      assert.equal(2, st.queued)
      assert.equal(1, st.dropped)
      assert.equal(0, st.leased)
      local back = f:step("w2", { per_host = 3, claim = 3 })
      local got = {}
      for _, it in ipairs(back.items) do got[#got + 1] = body(it[2]) end
      assert.same({ again, body(r.items[1][2]) }, got)
    end)
  end)

  it("give a host's requests by priority (higher first), then in the order pushed, or last first depth-first", function()
    for _, dfs in ipairs({ false, true }) do
      with_fleet(function(f)
        f:step("w1", { depth_first = dfs, pushes = {
          push("a", "http://a/1"), push("a", "http://a/2", 5), push("a", "http://a/3"),
          push("a", "http://a/4", -1), push("a", "http://a/5", 5), push("a", "http://a/6", 0.5),
        } })
        local got = {}
        for i = 1, 6 do
          local r = f:step("w1", { depth_first = dfs, claim = 1, holding = i - 1 })
          assert.equal(1, #r.items)
          got[i] = urls(r)[1][2]
          -- acknowledged, so that the host's one slot is free for the next
          f:step("w1", { acks = { { r.items[1][2], "a", "page", 200, cjson.null } }, holding = 1 })
        end
        if dfs then
          assert.same({ "http://a/5", "http://a/2", "http://a/6", "http://a/3", "http://a/1", "http://a/4" }, got)
        else
          assert.same({ "http://a/2", "http://a/5", "http://a/6", "http://a/1", "http://a/3", "http://a/4" }, got)
        end
        assert.equal(0, f:stats().queued)
      end)
    end
  end)

  it("keep identical items of dont_filter requests apart, and put one given back before its priority's others", function()
    with_fleet(function(f)
      local same = item("http://a/same")
      f:step("w1", { per_host = 4, pushes = {
        { "a", same, false, 0 }, { "a", same, false, 0 }, push("a", "http://a/2", 1), push("a", "http://a/3", 1),
      } })
      assert.equal(4, f:stats().queued)
      local r = f:step("w1", { per_host = 4, claim = 1 })
      assert.same({ { "a", "http://a/2" } }, urls(r))
      -- a/2 back (returned): before a/3, its priority's other
      f:step("w1", { per_host = 4, holding = 1, acks = { { r.items[1][2], "a", "return", cjson.null, cjson.null } } })
      local all = f:step("w1", { per_host = 4, claim = 4 })
      assert.same({ { "a", "http://a/2" }, { "a", "http://a/3" }, { "a", "http://a/same" }, { "a", "http://a/same" } },
        urls(all))
      assert.not_equal(all.items[3][2], all.items[4][2])
      assert.equal(4, f:stats().leased)
      assert.equal(0, f:stats().queued)
    end)
  end)

  it("hold a retry that waits in Redis until it is due: counted as queued, claimable no sooner", function()
    with_fleet(function(f)
      f:step("w1", { pushes = { push("a", "http://a/1"), push("a", "http://a/2", -1) } })
      local r = f:step("w1", { claim = 1 })
      assert.same({ { "a", "http://a/1" } }, urls(r))
      local again = cjson.encode({ url = "http://a/1", depth = 0, retries = 1 })
      local t0 = lc.now()
      local acked = f:step("w1", { holding = 1, acks = { { r.items[1][2], "a", "requeue", cjson.null, again, 400 } } })
      assert.equal(2, acked.queued) -- the delayed one too: the fleet is not done
      local st = f:status() -- what luacrawl state --redis reads
      assert.equal(1, st.delayed)
      assert.same({ { host = "a", queued = 1 } }, st.hosts)
      -- Meanwhile only a/2 can be claimed; then nothing, with the wait until it is due.
      local r2 = f:step("w2", { claim = 1 })
      assert.same({ { "a", "http://a/2" } }, urls(r2))
      local r3 = f:step("w2", { claim = 1, holding = 1, acks = { { r2.items[1][2], "a", "page", 200, cjson.null } } })
      assert.same({}, urls(r3))
      assert.equal(1, r3.queued)
      assert.is_true(r3.wait > 0 and r3.wait <= 401, "wait " .. r3.wait)
      while lc.now() - t0 < 0.3 do
        assert.same({}, urls(f:step("w2", { claim = 1 })))
        lc.sleep(0.02)
      end
      lc.sleep(0.12)
      local r4 = f:step("w2", { claim = 1 })
      assert.same({ { "a", "http://a/1" } }, urls(r4))
      assert.equal(again, body(r4.items[1][2]))
      assert.equal(0, r4.queued)
    end)
  end)
end)
