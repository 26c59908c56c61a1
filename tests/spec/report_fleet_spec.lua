-- fixtures: --http --site-pages 300
-- ways: one
-- `luacrawl report --redis URL --crawl-id NAME`: the report of a fleet's crawl, from the
-- reports its workers publish to Redis (a Redis of the spec's own): two workers
-- (processes of the binary) that finished, summed as their --stats-json files are, the
-- page opened offline in headless Chromium; how the workers' series are merged (by
-- wall-clock second), their bounded parts summed, and a worker's report kept in bounds.
local h = require "spec_helper"
local cjson = require "cjson"
local report = require "luacrawl.crawl_report"
local report_fleet = require "luacrawl.report_fleet"
local publish = require "luacrawl.crawl_redis_publish"

local q = h.quote

-- The steps every report is read with (helper.lua's report_steps).
local NUMBERS, POINTS, FETCHED = h.report_steps.numbers, h.report_steps.points, h.report_steps.fetched
local cells = h.report_steps.cells

describe("luacrawl report --redis", function()
  local redis
  setup(function() redis = h.redis_server() end)
  teardown(function() redis.stop() end)

  it("sums the reports of two workers that finished: their stats' numbers, charts with points, offline", function()
    local id = ("report-%d-%d"):format(os.time(), math.random(1, 1e6))
    local stats, workers = {}, {}
    for i = 1, 2 do
      stats[i] = h.tmpname(".json")
      workers[i] = ("%s crawl -q -o /dev/null --stats-json %s --redis %s --crawl-id %s --worker-id w%d -c 4 "
        .. "--per-host 4 --timeout 1 --retries 0 %s %s %s"):format(h.luacrawl_bin, q(stats[i]), redis.url, id, i,
        q(h.url("/site/")), q(h.url("/status/404")), q(h.url("/slow?delay=3")))
    end
    local code, out, err = h.sh(("bash -c %s"):format(q(("%s & a=$!; %s & b=$!; wait $a; x=$?; wait $b; y=$?; "
      .. "echo $x $y"):format(workers[1], workers[2]))))
    assert.equal(0, code, err)
    assert.equal("0 0", out:match("%d+ %d+"), err)
    local st1, st2 = cjson.decode(h.read_file(stats[1])), cjson.decode(h.read_file(stats[2]))
    local html = h.tmpname(".html")
    code, _, err = h.sh(("%s report --redis %s --crawl-id %s -o %s"):format(h.luacrawl_bin, redis.url, id, q(html)))
    assert.equal(0, code, err)
    local r = h.browse("file://" .. html, { NUMBERS, POINTS, FETCHED, cells("statuses"), cells("errors"),
      cells("error-samples"), 'document.getElementById("about").textContent' }, h.build_dir .. "/report-fleet.png")
    for _, k in ipairs({ "pages", "requests", "bytes", "errors_total", "redirects", "duplicates" }) do
      assert.equal(tostring(st1[k] + st2[k]), r.steps[1]["n-" .. k], k)
    end
    for id_, n in pairs(r.steps[2]) do assert.is_true(n > 0, id_ .. " has no point") end
    assert.equal(0, r.steps[3])
    local statuses = {}
    for _, st in ipairs({ st1, st2 }) do
      for s, n in pairs(st.statuses) do statuses[s] = (statuses[s] or 0) + n end
    end
    local shown = {}
    for i = 1, #r.steps[4], 2 do shown[r.steps[4][i]] = tonumber(r.steps[4][i + 1]) end
    assert.same(statuses, shown)
    assert.same({ "timeout", "1" }, r.steps[5])
    assert.same({ "timeout", h.url("/slow?delay=3") }, { r.steps[6][1], r.steps[6][2] })
    assert.truthy(r.steps[7]:find("2 workers (2 ended)", 1, true), r.steps[7])
    assert.same({}, r.console)
  end)

  it("shows the fleet's own counts when no worker left a report (their records expired)", function()
    local prefix = require("luacrawl.frontier_redis").prefix("expired-reports")
    local cli = ("redis-cli -p %d "):format(redis.port)
    assert.equal(0, h.sh(cli .. "HSET " .. q(prefix .. "meta") .. " identity '{}'"))
    assert.equal(0, h.sh(cli .. "HSET " .. q(prefix .. "stats") .. " pages 3 s:200 2 s:404 1 errors 1 e:timeout 1 queued 0"))
    local html = h.tmpname(".html")
    local code, _, err = h.sh(("%s report --redis %s --crawl-id expired-reports -o %s"):format(h.luacrawl_bin,
      redis.url, q(html)))
    assert.equal(0, code, err)
    local r = h.browse("file://" .. html, { NUMBERS, cells("statuses"), cells("errors") })
    assert.equal("3", r.steps[1]["n-pages"])
    assert.equal("1", r.steps[1]["n-errors_total"])
    assert.same({ "200", "2", "404", "1" }, r.steps[2])
    assert.same({ "timeout", "1" }, r.steps[3])
    assert.same({}, r.console)
  end)

  it("says a crawl-id Redis has no crawl of: exit status 2", function()
    local code, _, err = h.sh(("%s report --redis %s --crawl-id no-such-crawl -o %s"):format(h.luacrawl_bin, redis.url,
      q(h.tmpname(".html"))))
    assert.equal(2, code)
    assert.matches("luacrawl: report: redis redis://127.0.0.1:%d+/0 has no crawl no%-such%-crawl", err)
  end)
end)

describe("report_fleet", function()
  local function point(t, pages, status)
    return { t = t, pages = pages, bytes = pages * 100, statuses = { [status] = pages }, errors = {} }
  end

  it("merges the workers' series by wall-clock second, counted from the earliest start", function()
    local a = { start = 1000.2, rep = { series = { interval = 1, points = { point(0, 1, "200"), point(2, 2, "200") } } } }
    local b = { start = 1001.9, rep = { series = { interval = 1, points = { point(0, 4, "404"), point(1, 8, "200") } } } }
    local s = report_fleet.merge_series({ a, b }, 600)
    assert.equal(1, s.interval)
    -- a's points at 1000 and 1002; b's at 1001 and 1002 (1001.9 + 1 s).
    assert.same({ 0, 1, 2 }, { s.points[1].t, s.points[2].t, s.points[3].t })
    assert.same({ 1, 4, 10 }, { s.points[1].pages, s.points[2].pages, s.points[3].pages })
    assert.same({ ["200"] = 10 }, s.points[3].statuses)
    assert.same({ ["404"] = 4 }, s.points[2].statuses)
  end)

  it("merges series of different intervals into buckets of the widest", function()
    local a = { start = 0, rep = { series = { interval = 1, points = { point(0, 1, "200"), point(1, 1, "200"),
      point(5, 1, "200") } } } }
    local b = { start = 0, rep = { series = { interval = 4, points = { point(0, 3, "200"), point(4, 5, "200") } } } }
    local s = report_fleet.merge_series({ a, b }, 600)
    assert.equal(4, s.interval)
    assert.same({ { 0, 5 }, { 4, 6 } }, { { s.points[1].t, s.points[1].pages }, { s.points[2].t, s.points[2].pages } })
    assert.equal(2, #s.points)
  end)

  it("sums the workers' counts, keeps the slowest of all and samples up to the bound", function()
    local function rep(pages, slow, samples)
      local list = {}
      for i = 1, samples do list[i] = { url = ("http://x.test/%d/%d"):format(pages, i), message = "timed out" } end
      local slowest = {}
      for i, sec in ipairs(slow) do slowest[i] = { url = "http://x.test/s" .. sec, seconds = sec, status = 200, bytes = 1 } end
      return { pages = pages, requests = pages, statuses = { ["200"] = pages }, errors = { timeout = samples },
        by_depth = { ["0"] = 1, ["1"] = pages - 1 }, by_host = { ["x.test"] = { pages = pages, bytes = 1, errors = 0 } },
        slowest = slowest, error_samples = { timeout = list } }
    end
    local r = report_fleet.sum({}, { rep(10, { 9, 3 }, 4), rep(20, { 5, 4 }, 4) })
    assert.equal(30, r.pages)
    assert.same({ ["200"] = 30 }, r.statuses)
    assert.same({ ["0"] = 2, ["1"] = 28 }, r.by_depth)
    assert.same({ pages = 30, bytes = 2, errors = 0 }, r.by_host["x.test"])
    assert.same({ 9, 5, 4, 3 }, { r.slowest[1].seconds, r.slowest[2].seconds, r.slowest[3].seconds, r.slowest[4].seconds })
    assert.equal(report.MAX_SAMPLES, #r.error_samples.timeout)
    assert.equal("http://x.test/10/1", r.error_samples.timeout[1].url)
  end)

  it("has a worker publish its report in at most max_report bytes, its counts whole", function()
    local st = report.new()
    st.pages, st.requests, st.statuses = 5000, 5000, { [200] = 4990, [404] = 10 }
    local long = ("a"):rep(600)
    for i = 1, report.MAX_HOSTS do st.by_host[("h%d.%s.test"):format(i, long)] = { pages = i, bytes = 1, errors = 0 } end
    st.error_samples.timeout = {}
    for i = 1, report.MAX_SAMPLES do
      st.error_samples.timeout[i] = { url = "http://x.test/" .. long .. i, message = long }
    end
    for t = 0, 3599 do st.series.points[t + 1] = point(t, 1, "200") end
    local text = publish.report_json(st, 3600)
    assert.is_true(#text <= publish.max_report, #text)
    local rep = cjson.decode(text)
    assert.equal(5000, rep.pages)
    assert.same({ ["200"] = 4990, ["404"] = 10 }, rep.statuses)
    local hosts, pages = 0, rep.hosts_other.pages
    for _, hst in pairs(rep.by_host) do hosts, pages = hosts + 1, pages + hst.pages end
    assert.is_true(hosts < report.MAX_HOSTS)
    assert.equal(report.MAX_HOSTS * (report.MAX_HOSTS + 1) / 2, pages)
    assert.is_true(rep.series.interval > 1)
  end)
end)
