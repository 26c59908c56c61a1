-- fixtures: --http --dns --redis
-- Per-host settings in a fleet crawled through Redis (crawl_redis.lua,
-- frontier_redis_scripts.lua): a delay's cap of one request in flight, spec.hosts'
-- per_host, delay and max_pages, crawler:set_per_host and crawler:close_host hold for
-- every worker, on the wire: the fixture server counts each host's requests in flight
-- (max_concurrent) on a/b/c.crawl.test (127.0.0.2-4 through the test dnsmasq). Two
-- workers run at once as two crawls of this process (each its own connection and
-- worker id), or one after the other on the crawl Redis keeps.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"

lc.configure({ dns_servers = h.dns_server })

local ids = 0
local function new_id()
  ids = ids + 1
  return ("hosts-%d-%d-%d"):format(os.time(), math.random(1, 1e6), ids)
end

local function log(host)
  return h.control("/__log" .. (host and ("?host=" .. host) or ""))
end

local function max_in_flight(host)
  return log(host).max_concurrent[host]
end

-- The requests of host, robots.txt aside.
local function pages_of(host)
  local n = 0
  for _, e in ipairs(log(host).requests) do
    if e.path ~= "/robots.txt" then n = n + 1 end
  end
  return n
end

local function on(host, path)
  return h.url(path, host)
end

-- n URLs of host that each answer after `seconds`.
local function slow(host, n, seconds, list)
  list = list or {}
  for i = 1, n do list[#list + 1] = on(host, ("/slow?delay=%s&i=%d"):format(seconds, i)) end
  return list
end

-- A worker's spec: spec's fields over the fleet's (crawl id, worker id, quiet).
local function worker(id, name, spec)
  local s = { redis = h.redis_url, crawl_id = id, worker_id = name, robots = false, quiet = true, progress = false,
    signals = false }
  for k, v in pairs(spec) do s[k] = v end
  return s
end

-- Workers w1, w2, ... of crawl id running at once, each with spec (a function of
-- the worker's name gives each its own); their stats.
local function fleet(id, n, spec)
  return lc.run(function()
    local tasks = {}
    for i = 1, n do
      local name = "w" .. i
      local s = type(spec) == "function" and spec(name) or spec
      tasks[i] = lc.spawn(crawl.run, worker(id, name, s))
    end
    local stats = {}
    for i, t in ipairs(tasks) do stats[i] = assert(t:join()) end
    return stats
  end)
end

-- One worker alone on crawl id; its stats.
local function alone(id, name, spec)
  return crawl.run(worker(id, name, spec))
end

local function copy(t, extra)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  for k, v in pairs(extra or {}) do out[k] = v end
  return out
end

describe("a fleet's per-host settings", function()
  before_each(function() h.control("/__reset") end)

  it("a delay keeps a host to one request in flight for the fleet, whatever per_host says", function()
    -- per_host 4, a delay of 0.25 s and answers taking 0.6 s: without the cap, the
    -- fleet would claim one every 0.25 s while the others are still in flight.
    local st = fleet(new_id(), 2, { start = slow("a.crawl.test", 6, 0.6), per_host = 4, delay = 0.25 })
    assert.equal(6, st[1].pages + st[2].pages)
    assert.equal(1, max_in_flight("a.crawl.test"))
  end)

  it("spec.hosts: a host's own per_host, and its own delay's cap of one, hold across two workers", function()
    local start = slow("a.crawl.test", 8, 0.4, slow("b.crawl.test", 4, 0.4, slow("c.crawl.test", 6, 0.4)))
    fleet(new_id(), 2, {
      start = start, per_host = 2, concurrency = 8,
      hosts = { ["a.crawl.test"] = { per_host = 3 }, ["b.crawl.test"] = { delay = 0.2 } },
    })
    assert.equal(3, max_in_flight("a.crawl.test"))
    assert.equal(1, max_in_flight("b.crawl.test"))
    assert.equal(2, max_in_flight("c.crawl.test"))
  end)

  it("a host's own max_pages counts the pages of every worker, across runs", function()
    local spec = {
      start = { on("a.crawl.test", "/hostsite/") }, allow = { hosts = { "crawl.test" } },
      hosts = { ["a.crawl.test"] = { max_pages = 5 } },
    }
    local id = new_id()
    -- w1 stops after two pages (a's index and page 0), w2 goes on to the end.
    assert.equal(2, alone(id, "w1", copy(spec, { max_pages = 2 })).pages)
    alone(id, "w2", spec)
    assert.equal(5, pages_of("a.crawl.test"))
    assert.equal(21, pages_of("b.crawl.test"))
  end)

  it("crawler:set_per_host by one worker holds for the workers after it", function()
    local spec = { start = slow("a.crawl.test", 8, 0.4), per_host = 1, concurrency = 8 }
    local id = new_id()
    alone(id, "w1", copy(spec, {
      max_pages = 1,
      parse = function(page) page.crawler:set_per_host(page.request.key, 3) end,
    }))
    local st = alone(id, "w2", spec)
    assert.equal(7, st.pages)
    assert.equal(3, max_in_flight("a.crawl.test"))
  end)

  it("crawler:close_host by one worker closes the host for the fleet: another refuses its requests", function()
    local spec = { start = { on("b.crawl.test", "/hostsite/") }, allow = { hosts = { "crawl.test" } } }
    local id = new_id()
    alone(id, "w1", copy(spec, {
      max_pages = 1,
      parse = function(page)
        page.crawler:close_host("a.crawl.test", "enough")
        page:follow_links()
      end,
    }))
    -- w2 finds a's site through b's page 0, and does not ask for it.
    local st = alone(id, "w2", spec)
    assert.equal(0, pages_of("a.crawl.test"))
    assert.equal(21, pages_of("b.crawl.test"))
    assert.equal(21, pages_of("c.crawl.test"))
    assert.is_true((st.host_closed.enough or 0) >= 1)
    local code, out, err = h.sh(("%s state --redis %s --crawl-id %s"):format(h.luacrawl_bin, h.redis_url, id))
    assert.equal(0, code, err)
    assert.matches("hosts closed: a.crawl.test (enough)", out, 1, true)
  end)

  it("are part of the fleet's identity: a worker with other ones is refused, saying which", function()
    local id = new_id()
    local spec = { start = { on("a.crawl.test", "/status/200") }, hosts = { ["a.crawl.test"] = { per_host = 3 } } }
    alone(id, "w1", spec)
    local ok, err = pcall(alone, id, "w2", copy(spec, { hosts = { ["a.crawl.test"] = { per_host = 2 } } }))
    assert.is_false(ok)
    assert.matches("its workers run with per_host 2, delay 0, robots false, hosts {a.crawl.test: per_host 3}, "
      .. "this one with per_host 2, delay 0, robots false, hosts {a.crawl.test: per_host 2}", tostring(err), 1, true)
    -- A host's headers are each worker's own.
    alone(id, "w3", copy(spec, { hosts = { ["a.crawl.test"] = { per_host = 3, headers = { ["X-A"] = "1" } } } }))
  end)
end)
