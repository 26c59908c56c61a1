-- luacrawl.frontier: the per-host scheduler of the crawl framework.
require "luacrawl"
local frontier = require "luacrawl.frontier"

local function req(key, url, extra)
  local r = extra or {}
  r.key, r.url = key, url
  return r
end

describe("frontier", function()
  it("hands out requests breadth-first within a host", function()
    local f = frontier.new()
    f:push(req("a", "deep", { depth = 2 }))
    f:push(req("a", "root", { depth = 0 }))
    f:push(req("a", "mid", { depth = 1 }))
    local out = {}
    for _ = 1, 3 do
      local r = f:pop(0)
      out[#out + 1] = r.url
      f:done(r, 0)
    end
    assert.same({ "root", "mid", "deep" }, out)
  end)

  it("can go depth-first", function()
    local f = frontier.new({ depth_first = true })
    f:push(req("a", "root", { depth = 0 }))
    f:push(req("a", "deep", { depth = 2 }))
    local r = f:pop(0)
    assert.equal("deep", r.url)
  end)

  it("puts higher priority first", function()
    local f = frontier.new()
    f:push(req("a", "low", { priority = -1 }))
    f:push(req("a", "high", { priority = 5 }))
    f:push(req("a", "normal"))
    local out = {}
    for _ = 1, 3 do
      local r = f:pop(0)
      out[#out + 1] = r.url
      f:done(r, 0)
    end
    assert.same({ "high", "normal", "low" }, out)
  end)

  it("orders a host's requests by priority, depth and push order, pushes and pops mixed", function()
    -- A reference: every queued request sorted as the scheduler must take them.
    for _, depth_first in ipairs({ false, true }) do
      local seed = os.time()
      math.randomseed(seed)
      local f = frontier.new({ per_host = 1000, depth_first = depth_first })
      local queued, n = {}, 0
      local function before(a, b)
        local pa, pb = a.priority or 0, b.priority or 0
        if pa ~= pb then return pa > pb end
        local da, db = a.depth or 0, b.depth or 0
        if da ~= db then return depth_first and da > db or not depth_first and da < db end
        if depth_first then return a.n > b.n end
        return a.n < b.n
      end
      for step = 1, 3000 do
        if math.random() < 0.55 or #queued == 0 then
          n = n + 1
          local r = req("a", "u" .. n, { n = n, depth = math.random(0, 4) })
          local k = math.random(1, 10)
          if k == 1 then r.priority = math.random(-2, 2) elseif k == 2 then r.priority = 0.5 end
          if k == 3 then r.depth = nil end
          if k >= 8 then -- queued as its strings: a table made on pop
            r.referrer, r.compact = "from" .. n, true
            f:push_url("a", r.url, r.depth, r.referrer)
          else
            f:push(r)
          end
          queued[#queued + 1] = r
        else
          table.sort(queued, before)
          local want = table.remove(queued, 1)
          local got = f:pop(0)
          local same = got == want
          if want.compact then
            same = got ~= nil and got.url == want.url and got.depth == want.depth and
              got.referrer == want.referrer and got.key == "a"
          end
          assert(same, ("seed %d, depth_first %s, step %d: got %s, want %s"):format(
            seed, tostring(depth_first), step, got and got.url or "nil", want.url))
          f:done(got, 0)
        end
      end
    end
  end)

  it("keeps at most per_host requests of one host in flight", function()
    local f = frontier.new({ per_host = 2 })
    for i = 1, 5 do f:push(req("a", "a" .. i)) end
    assert.is_table(f:pop(0))
    local second = f:pop(0)
    assert.is_table(second)
    assert.is_nil(f:pop(0))
    f:done(second, 0)
    assert.is_table(f:pop(0))
  end)

  it("spaces requests to a host by its delay and says how long to wait", function()
    local f = frontier.new({ delay = 2 })
    f:push(req("a", "1"))
    f:push(req("a", "2"))
    local r = f:pop(10)
    f:done(r, 10.5)
    local none, wait = f:pop(11)
    assert.is_nil(none)
    assert.near(1.5, wait, 1e-9) -- 2 s after the end at 10.5
    assert.equal("2", f:pop(12.5).url)
  end)

  it("serves other hosts while one waits for its delay", function()
    local f = frontier.new()
    f:set_delay("slow", 100)
    f:push(req("slow", "s1"))
    f:push(req("slow", "s2"))
    f:push(req("fast", "f1"))
    f:push(req("fast", "f2"))
    local out = {}
    for _ = 1, 4 do
      local r = f:pop(0)
      if not r then break end
      out[#out + 1] = r.url
      f:done(r, 0)
    end
    assert.same({ "s1", "f1", "f2" }, out)
  end)

  it("a host in backoff never holds up the others", function()
    local f = frontier.new()
    f:push(req("sick", "x"))
    f:push(req("well", "y"))
    f:backoff("sick", 60)
    assert.equal("y", f:pop(0).url)
    local none, wait = f:pop(0)
    assert.is_nil(none)
    assert.equal(60, wait)
    assert.equal("x", f:pop(60).url)
  end)

  it("reports nothing to wait for when empty", function()
    local f = frontier.new()
    local r, wait = f:pop(0)
    assert.is_nil(r)
    assert.is_nil(wait)
  end)

  it("drops a host's queue", function()
    local f = frontier.new()
    f:push(req("a", "1"))
    f:push_url("a", "2", 1, "r")
    f:push(req("b", "3"))
    local dropped = f:drop_host("a")
    assert.equal(2, #dropped)
    assert.same({ url = "2", depth = 1, referrer = "r", key = "a" }, dropped[2])
    assert.equal(1, f:size())
    assert.equal("3", f:pop(0).url)
  end)

  it("queues a URL without a table, and pops it as a request", function()
    local f = frontier.new({ per_host = 2 })
    f:push_url("a", "http://a/x", 3, "http://a/")
    f:push_url("a", "http://a/y")
    assert.equal(2, f:size())
    local r = f:pop(0) -- breadth-first: depth 0 first
    assert.same({ url = "http://a/y", depth = 0, key = "a" }, r)
    f:done(r, 0)
    assert.same({ url = "http://a/x", depth = 3, referrer = "http://a/", key = "a" }, f:pop(0))
    assert.is_true(f:empty())
    assert.has_error(function() f:push_url(nil, "http://a/z") end)
    assert.has_error(function() f:push_url("a", {}) end)
  end)

  it("hands back 20,000 URLs queued as strings in order, with their referrers", function()
    -- Breadth-first, the URLs wait outside the Lua heap (core.strq), in blocks.
    local f = frontier.new({ per_host = 1 })
    for i = 1, 20000 do
      f:push_url("a", "http://a/p/" .. i .. ".html", 1 + i % 2, "http://a/r" .. (i % 7))
    end
    for d = 1, 2 do
      for i = 1, 20000 do
        if 1 + i % 2 == d then
          local r = f:pop(0)
          assert(r and r.url == "http://a/p/" .. i .. ".html" and r.depth == d and
            r.referrer == "http://a/r" .. (i % 7), ("depth %d, url %d"):format(d, i))
          f:done(r, 0)
        end
      end
    end
    assert.is_true(f:empty())
  end)

  it("takes turns between hosts with many requests queued", function()
    local f = frontier.new({ per_host = 1 })
    for i = 0, 199999 do f:push({ key = i % 10000, url = i }) end
    assert.equal(200000, f:size())
    -- One slot per host: the first 10,000 pops are one request of each host.
    local keys = {}
    for _ = 1, 10000 do keys[f:pop(0).key] = true end
    local n = 0
    for _ in pairs(keys) do n = n + 1 end
    assert.equal(10000, n)
    assert.is_nil(f:pop(0))
  end)
end)
