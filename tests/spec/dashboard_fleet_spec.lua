-- fixtures: --http
-- ways: one
-- `luacrawl dashboard --redis URL --crawl-id NAME`: the dashboard of a fleet, two
-- workers (luacrawl crawl --redis, processes of the binary) on the fixture site with a
-- Redis of the spec's own: each worker and the counters summed in /stats.json,
-- /metrics checked by promtool, pause, resume and stop reaching every worker (the
-- fixture's request log says what was fetched), the page in headless Chromium; and
-- `luacrawl dashboard --state FILE` on a finished crawl's state.
local lc = require "luacrawl"
local h = require "spec_helper"
local cjson = require "cjson"

local bin = h.luacrawl_bin

-- Waits of up to 60 s (two workers and a browser on a busy machine).
local function wait_for(what, fn) return h.wait_for(what, fn, 60) end

local redis
local ids = 0
local function new_id()
  ids = ids + 1
  return ("fleet-%d-%d-%d"):format(os.time(), math.random(1, 1e6), ids)
end

-- A background process: `luacrawl ARGS`, its stderr kept; status() its exit status
-- once it ended (nil before), stop(signal) to end it.
local function start(args)
  local errf, statusf, pidf = h.tmpname(".err"), h.tmpname(".status"), h.tmpname(".pid")
  assert(h.sh(("(%s %s 2>%s & echo $! >%s; wait $!; echo $? >%s) >/dev/null 2>&1 &")
    :format(bin, args, errf, pidf, statusf)) == 0)
  local p = { err = errf }
  function p.status()
    local s = h.read_file(statusf):match("%d+")
    return s and tonumber(s)
  end
  function p.stop(signal)
    local pid = wait_for("the pid", function() return h.read_file(pidf):match("%d+") end)
    h.sh(("kill -%s %s"):format(signal or "TERM", pid))
    return wait_for("the end of luacrawl " .. args, p.status)
  end
  return p
end

-- Worker i of fleet's crawl on the site, slowed down (a delay per request of the
-- fleet), as fleet.workers[i].
local function start_worker(fleet, i)
  local stats = h.tmpname(".json")
  local w = start(("crawl -q -o /dev/null --stats-json %s --redis %s --crawl-id %s --worker-id w%d -c 2 "
    .. "--per-host 2 --delay 0.1 %s"):format(stats, redis.url, fleet.id, i, h.url("/site/")))
  w.stats = stats
  fleet.workers[i] = w
end

-- A new crawl's dashboard and its workers w1 .. w<workers> (default 2): {id, workers,
-- dash, base = the dashboard's http://HOST:PORT, url = the URL printed}.
local function start_fleet(workers)
  redis = redis or h.redis_server()
  h.control("/__reset")
  local fleet = { id = new_id(), workers = {} }
  fleet.dash = start(("dashboard --redis %s --crawl-id %s --port 0"):format(redis.url, fleet.id))
  fleet.url = wait_for("the dashboard's URL on stderr", function()
    return h.read_file(fleet.dash.err):match("luacrawl: dashboard: open (http://%S+)")
      or fleet.dash.status() and error(h.read_file(fleet.dash.err))
  end)
  fleet.base = fleet.url:match("^(http://[^/]+)")
  for i = 1, workers or 2 do start_worker(fleet, i) end
  return fleet
end

local function get_json(url)
  local res = assert(lc.fetch(url))
  assert.equal(200, res.status, res.body)
  return cjson.decode(res.body)
end

local function stats(fleet)
  return get_json(fleet.base .. "/stats.json")
end

-- The workers as the dashboard shows them, by name.
local function workers(st)
  local t = {}
  for _, w in ipairs(st.workers) do t[w.worker] = w end
  return t
end

-- Both workers shown with pages fetched: the stats then.
local function both_crawling(fleet)
  return wait_for("both workers' pages", function()
    local st = stats(fleet)
    local ws = workers(st)
    return ws.w1 and ws.w2 and ws.w1.pages > 0 and ws.w2.pages > 0 and st
  end)
end

local function page_token(fleet) return h.dashboard_token(fleet.url) end

-- POST /NAME with the token, from the dashboard's own origin (origin: another).
local function command(fleet, token, name, origin)
  return h.dashboard_command(fleet.base, token, name, origin)
end

-- Stop the fleet from its dashboard: both workers end as on SIGINT; then the dashboard
-- (SIGTERM: exit status 0).
local function stop_fleet(fleet)
  assert.equal(202, command(fleet, page_token(fleet), "stop"))
  for _, w in ipairs(fleet.workers) do assert.equal(130, wait_for("a worker's end", w.status), h.read_file(w.err)) end
  return fleet.dash.stop("TERM")
end

local function site_log()
  return h.control("/__log?host=127.0.0.1")
end

describe("luacrawl dashboard --redis", function()
  it("shows each worker and, once both ended, their pages summed", function()
    lc.run(function()
      local fleet = start_fleet()
      both_crawling(fleet)
      assert.equal(202, command(fleet, page_token(fleet), "stop"))
      local final = {}
      for i, w in ipairs(fleet.workers) do
        assert.equal(130, wait_for("a worker's end", w.status), h.read_file(w.err))
        final[i] = cjson.decode(h.read_file(w.stats))
        assert.equal("dashboard", final[i].stop_reason)
      end
      local st = wait_for("both workers' last words", function()
        local s = stats(fleet)
        local ws = workers(s)
        return ws.w1.state == "ended" and ws.w2.state == "ended" and s
      end)
      local ws = workers(st)
      assert.equal(final[1].pages, ws.w1.pages)
      assert.equal(final[2].pages, ws.w2.pages)
      assert.equal(final[1].pages + final[2].pages, st.pages)
      assert.equal(final[1].requests + final[2].requests, st.requests)
      assert.equal(final[1].statuses["200"] + final[2].statuses["200"], st.statuses["200"])
      assert.equal(0, st.workers_running)
      assert.equal(0, fleet.dash.stop("TERM"))
    end)
  end)

  it("pauses every worker on POST /pause with the token, and starts them again on /resume", function()
    lc.run(function()
      local fleet = start_fleet()
      both_crawling(fleet)
      local token = page_token(fleet)
      assert.equal(403, command(fleet, token, "pause", "http://evil.test"))
      assert.equal(202, command(fleet, token, "pause"))
      local paused = wait_for("both workers paused, nothing in flight", function()
        local st = stats(fleet)
        local ws = workers(st)
        return st.paused and ws.w1.state == "paused" and ws.w2.state == "paused"
          and ws.w1.in_flight == 0 and ws.w2.in_flight == 0 and st
      end)
      local before = site_log()
      lc.sleep(1)
      local after = site_log()
      assert.equal(#before.requests, #after.requests)
      for _, r in ipairs(after.requests) do assert.is_true(r.start < before.now, r.path) end
      assert.equal(202, command(fleet, token, "resume"))
      wait_for("both workers fetching again", function()
        local ws = workers(stats(fleet))
        return ws.w1.pages > workers(paused).w1.pages and ws.w2.pages > workers(paused).w2.pages
      end)
      assert.is_true(#site_log().requests > #after.requests)
      assert.equal(0, stop_fleet(fleet))
    end)
  end)

  it("keeps a worker that joins a paused crawl from fetching any page until Resume", function()
    lc.run(function()
      local fleet = start_fleet(0)
      local token = page_token(fleet)
      assert.equal(202, command(fleet, token, "pause"))
      wait_for("the pause in Redis", function() return stats(fleet).paused end)
      start_worker(fleet, 1)
      wait_for("the worker's pause said", function()
        return h.read_file(fleet.workers[1].err):find("is paused from its dashboard", 1, true)
      end)
      wait_for("the worker shown paused", function()
        local w = workers(stats(fleet)).w1
        return w and w.state == "paused"
      end)
      lc.sleep(1)
      -- Its start URL's robots.txt (asked for as the URL is admitted), no page.
      local paused = site_log().requests
      for _, r in ipairs(paused) do assert.equal("/robots.txt", r.path) end
      assert.equal(202, command(fleet, token, "resume"))
      wait_for("the worker's pages", function()
        local w = workers(stats(fleet)).w1
        return w.pages > 0
      end)
      assert.is_true(#site_log().requests > #paused)
      assert.equal(0, stop_fleet(fleet))
    end)
  end)

  it("stops the workers running at a Stop, not one started after it", function()
    lc.run(function()
      local fleet = start_fleet(1)
      wait_for("the worker's pages", function()
        local w = workers(stats(fleet)).w1
        return w and w.pages > 0
      end)
      local token = page_token(fleet)
      assert.equal(202, command(fleet, token, "stop"))
      assert.equal(130, wait_for("the worker's end", fleet.workers[1].status))
      start_worker(fleet, 2)
      local w2 = wait_for("the later worker's pages", function()
        local w = workers(stats(fleet)).w2
        return w and w.pages > 0 and w
      end)
      assert.equal("running", w2.state)
      assert.is_nil(fleet.workers[2].status())
      assert.equal(202, command(fleet, token, "stop"))
      assert.equal(130, wait_for("the later worker's end", fleet.workers[2].status))
      assert.equal(0, fleet.dash.stop("TERM"))
    end)
  end)

  it("serves /metrics that promtool accepts, with a series for each worker", function()
    lc.run(function()
      local fleet = start_fleet()
      both_crawling(fleet)
      local body = assert(lc.fetch(fleet.base .. "/metrics")).body
      assert.equal(0, stop_fleet(fleet))
      assert.truthy(body:find('luacrawl_worker_pages_total{worker="w1"} %d+\n'), body)
      assert.truthy(body:find('luacrawl_worker_pages_total{worker="w2"} %d+\n'), body)
      assert.truthy(body:find('luacrawl_frontier_requests %d+\n'), body)
      local path = h.tmpname(".prom")
      local f = assert(io.open(path, "wb"))
      f:write(body)
      f:close()
      local code, out, err = h.sh("promtool check metrics < " .. path)
      assert.equal(0, code, out .. err)
    end)
  end)

  it("renders the fleet's page in a browser, both workers listed, with no console error", function()
    local fleet
    lc.run(function()
      fleet = start_fleet()
      both_crawling(fleet)
    end)
    local r = h.browse(fleet.url, {
      h.page_updates(2),
      '[...document.querySelectorAll("#workers tbody tr td:first-child")].map((td) => td.textContent)',
      'document.getElementById("workers-section").hidden',
      'Number(document.getElementById("n-pages").dataset.value) > 0',
      'Number(document.getElementById("n-pages_per_s").dataset.value) > 0',
      'Chart.getChart("chart-rate").data.datasets[0].data.some((v) => v > 0)',
    }, h.build_dir .. "/dashboard-fleet.png")
    lc.run(function() assert.equal(0, stop_fleet(fleet)) end)
    assert.same({ "w1", "w2" }, r.steps[2])
    assert.is_false(r.steps[3])
    assert.is_true(r.steps[4])
    assert.is_true(r.steps[5], "the fleet's pages/s")
    assert.is_true(r.steps[6], "points in the chart of pages/s")
    assert.same({}, r.console)
  end)

  it("says so when Redis cannot be reached, exit status 2", function()
    local code, _, err = h.sh(("%s dashboard --redis redis://127.0.0.1:%d/0 --crawl-id x --port 0")
      :format(bin, h.free_port()))
    assert.equal(2, code)
    assert.matches("luacrawl: dashboard: redis redis://127.0.0.1:%d+/0: cannot connect", err)
  end)
end)

describe("luacrawl dashboard --state", function()
  it("serves the numbers a finished crawl's state holds, read-only", function()
    local state = h.tmpname(".db")
    local code, _, err = h.sh(("%s crawl -q -o /dev/null --state %s --max-depth 1 %s")
      :format(bin, state, h.url("/site/")))
    assert.equal(0, code, err)
    local out
    code, out, err = h.sh(("%s state --json %s"):format(bin, state))
    assert.equal(0, code, err)
    local held = cjson.decode(out)
    lc.run(function()
      local dash = start(("dashboard --state %s --port 0"):format(state))
      local url = wait_for("the dashboard's URL on stderr", function()
        return h.read_file(dash.err):match("luacrawl: dashboard: open (http://%S+)")
          or dash.status() and error(h.read_file(dash.err))
      end)
      local base = url:match("^(http://[^/]+)")
      local st = wait_for("the state's numbers", function()
        local res = assert(lc.fetch(base .. "/stats.json"))
        return res.status == 200 and cjson.decode(res.body)
      end)
      assert.equal(0, dash.stop("TERM"))
      assert.equal(held.totals.pages, st.pages)
      assert.equal(held.statuses["200"], st.statuses["200"])
      assert.equal(held.frontier, st.frontier)
      assert.is_true(st.read_only)
      assert.equal("finished", st.stop_reason)
    end)
  end)

  it("says so when the file is not there, exit status 2", function()
    local code, _, err = h.sh(("%s dashboard --state %s --port 0"):format(bin, h.tmpname(".db")))
    assert.equal(2, code)
    assert.matches("no such file", err, 1, true)
  end)
end)
