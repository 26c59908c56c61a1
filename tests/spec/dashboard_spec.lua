-- fixtures: --http
-- lc.dashboard: the server on the loop (engine/dash.c) serving what a script publishes:
-- /stats.json, /metrics (checked by promtool), the event stream, the token, commands
-- and their same-origin check; and the page in headless Chromium (tests/tools/browser.py).
local lc = require "luacrawl"
local h = require "spec_helper"
local cjson = require "cjson"
local report = require "luacrawl.crawl_report"

-- A stats table as a crawl has it, with the live fields a dashboard shows: as code,
-- which the dashboard of a process of its own runs too (start_server).
local STATS_CODE = [[
local report = require "luacrawl.crawl_report"
local st = report.new()
st.pages, st.requests, st.bytes, st.errors_total, st.retries = 123, 130, 456789, 2, 4
st.statuses[200], st.statuses[404], st.errors.timeout = 120, 3, 2
st.frontier, st.in_flight, st.elapsed = 40, 5, 12.5
st.depths = { [0] = 1, [1] = 20, [2] = 102 }
st.hosts = {
  ["a.crawl.test"] = { pages = 100, queued = 30, in_flight = 3, delay = 0.5, backoff = 0, errors = 1,
    statuses = { [200] = 98, [404] = 2 }, error_kinds = { timeout = 1 }, robots = "fetched" },
  ["b.crawl.test"] = { pages = 23, queued = 10, in_flight = 2, delay = 1, backoff = 4, errors = 1,
    statuses = { [200] = 22, [404] = 1 }, error_kinds = { timeout = 1 }, robots = "unreachable" },
}
st.latest_errors = { { kind = "timeout", url = "http://a.crawl.test/<b>x</b>", message = "timed out" } }
st.latest_items = { { title = "<script>window.pwned = 1</script>", url = "http://a.crawl.test/" } }
for t = 0, 9 do report.sample(st, t) end
return st
]]

local function sample_stats()
  return assert(loadstring(STATS_CODE))()
end

-- Run fn(srv, base) in a task with a dashboard open on opts.listen (127.0.0.1, any port).
local function with_dashboard(opts, fn)
  return lc.run(function()
    local srv = assert(lc.dashboard(opts))
    local base = srv:url():match("^(http://[^/]+)")
    local ok, err = pcall(fn, srv, base)
    srv:close()
    if not ok then error(err, 0) end
  end)
end

describe("lc.dashboard", function()
  it("serves /stats.json as the stats table published", function()
    with_dashboard({ listen = "127.0.0.1:0" }, function(srv, base)
      srv:publish(sample_stats())
      local res = assert(lc.fetch(base .. "/stats.json"))
      assert.equal(200, res.status)
      assert.equal("application/json", res.headers["content-type"])
      local got = cjson.decode(res.body)
      assert.equal(123, got.pages)
      assert.equal(120, got.statuses["200"])
      assert.equal(2, got.errors.timeout)
      assert.equal(98, got.hosts["a.crawl.test"].statuses["200"])
      assert.equal(cjson.decode(report.json(sample_stats())).bytes, got.bytes)
    end)
  end)

  it("serves /metrics that promtool accepts", function()
    with_dashboard({ listen = "127.0.0.1:0" }, function(srv, base)
      srv:publish(sample_stats())
      local res = assert(lc.fetch(base .. "/metrics"))
      assert.equal(200, res.status)
      assert.truthy(res.body:find('luacrawl_host_responses_total{host="a.crawl.test",status="404"} 2', 1, true))
      local path = h.tmpname(".prom")
      local f = assert(io.open(path, "wb"))
      f:write(res.body)
      f:close()
      local code, out, err = h.sh("promtool check metrics < " .. path)
      assert.equal(0, code, out .. err)
    end)
  end)

  it("labels at most 20 hosts in /metrics and sums the others as other", function()
    with_dashboard({ listen = "127.0.0.1:0" }, function(srv, base)
      local st = sample_stats()
      st.hosts = {}
      for i = 1, 30 do st.hosts[("h%02d.test"):format(i)] = { pages = i, statuses = { [200] = i } } end
      srv:publish(st)
      local body = assert(lc.fetch(base .. "/metrics")).body
      local labels = {}
      for host in body:gmatch('luacrawl_host_pages_total{host="([^"]+)"}') do labels[#labels + 1] = host end
      assert.equal(21, #labels)
      assert.truthy(body:find('luacrawl_host_pages_total{host="h30.test"} 30', 1, true))
      assert.falsy(body:find('host="h10.test"', 1, true))
      -- h01..h10: 1 + 2 + ... + 10 pages.
      assert.truthy(body:find('luacrawl_host_pages_total{host="other"} 55', 1, true))
    end)
  end)

  it("on another address than loopback, answers nothing without the token", function()
    with_dashboard({ listen = "127.0.0.2:0" }, function(srv, base)
      srv:publish(sample_stats())
      assert.equal(401, assert(lc.fetch(base .. "/stats.json")).status)
      assert.equal(401, assert(lc.fetch(base .. "/events")).status)
      local res = assert(lc.fetch(base .. "/stats.json", { headers = { Authorization = "Bearer " .. srv:token() } }))
      assert.equal(200, res.status)
      assert.equal(200, assert(lc.fetch(base .. "/stats.json?token=" .. srv:token())).status)
      assert.truthy(srv:url():find("?token=" .. srv:token(), 1, true))
    end)
  end)

  it("with a token given, answers nothing without it, on loopback too", function()
    with_dashboard({ listen = "127.0.0.1:0", token = "s3cret-token" }, function(_, base)
      assert.equal(401, assert(lc.fetch(base .. "/")).status)
      assert.equal(200, assert(lc.fetch(base .. "/?token=s3cret-token")).status)
    end)
  end)

  it("refuses a command without the token, and queues nothing", function()
    with_dashboard({ listen = "127.0.0.1:0" }, function(srv, base)
      assert.equal(401, assert(lc.fetch(base .. "/stop", { method = "POST" })).status)
      assert.same({}, srv:commands())
    end)
  end)

  it("refuses a cross-origin command even with the token", function()
    with_dashboard({ listen = "127.0.0.1:0" }, function(srv, base)
      local auth = "Bearer " .. srv:token()
      local res = assert(lc.fetch(base .. "/stop", { method = "POST",
        headers = { Authorization = auth, Origin = "http://evil.test" } }))
      assert.equal(403, res.status)
      res = assert(lc.fetch(base .. "/stop", { method = "POST",
        headers = { Authorization = auth, ["Sec-Fetch-Site"] = "cross-site" } }))
      assert.equal(403, res.status)
      assert.same({}, srv:commands())
    end)
  end)

  it("queues a same-origin command with the token, for commands() to return once", function()
    with_dashboard({ listen = "127.0.0.1:0" }, function(srv, base)
      local res = assert(lc.fetch(base .. "/pause", { method = "POST",
        headers = { Authorization = "Bearer " .. srv:token(), Origin = base, ["Sec-Fetch-Site"] = "same-origin" } }))
      assert.equal(202, res.status)
      assert.equal(202, assert(lc.fetch(base .. "/resume?token=" .. srv:token(), { method = "POST" })).status)
      assert.same({ "pause", "resume" }, srv:commands())
      assert.same({}, srv:commands())
    end)
  end)

  it("on loopback without a token, refuses a Host that is not loopback (DNS rebinding)", function()
    with_dashboard({ listen = "127.0.0.1:0" }, function(_, base)
      local res = assert(lc.fetch(base .. "/stats.json", { headers = { Host = "evil.test" } }))
      assert.equal(403, res.status)
    end)
  end)

  it("says why it cannot listen", function()
    with_dashboard({ listen = "127.0.0.1:0" }, function(srv)
      local again, err = lc.dashboard({ listen = "127.0.0.1:" .. srv.info.port })
      assert.is_nil(again)
      assert.equal("dashboard", err.kind)
      assert.truthy(err.message:find("in use", 1, true), err.message)
      local bad
      bad, err = lc.dashboard({ listen = "nowhere.test:80" })
      assert.is_nil(bad)
      assert.truthy(err.message:find("want [HOST:]PORT", 1, true), err.message)
    end)
  end)
end)

describe("the crawl's time series", function()
  it("counts each second's pages, bytes, statuses and errors in a point", function()
    local st = report.new()
    report.sample(st, 0)
    st.pages, st.bytes, st.statuses[200] = 3, 300, 3
    report.sample(st, 1.5)
    st.pages, st.bytes, st.statuses[200], st.errors.timeout = 5, 500, 4, 1
    st.statuses[404] = 1
    report.sample(st, 2.2)
    local p = st.series.points
    assert.same({ t = 1, pages = 3, bytes = 300, statuses = { ["200"] = 3 }, errors = {} }, p[2])
    assert.same({ t = 2, pages = 2, bytes = 200, statuses = { ["200"] = 1, ["404"] = 1 }, errors = { timeout = 1 } }, p[3])
  end)

  it("merges seconds older than SERIES_SECONDS into points a minute", function()
    local keep = report.SERIES_SECONDS
    report.SERIES_SECONDS = 60
    local st = report.new()
    for t = 0, 149 do
      st.pages = st.pages + 1
      report.sample(st, t)
    end
    report.SERIES_SECONDS = keep
    assert.equal(60, #st.series.points)
    assert.equal(90, st.series.points[1].t)
    assert.same({ 0, 60 }, { st.series.minutes[1].t, st.series.minutes[2].t })
    assert.same({ 60, 30 }, { st.series.minutes[1].pages, st.series.minutes[2].pages })
  end)

  it("is in a crawl's stats", function()
    local crawl = require "luacrawl.crawl"
    local st = crawl.run({ start = { h.url("/site/") }, max_pages = 3, quiet = true,
      parse = function(page) page:follow(page:links()) end })
    local sum = 0
    for _, p in ipairs(st.series.points) do sum = sum + p.pages end
    assert.is_true(st.pages > 0)
    assert.equal(st.pages, sum)
  end)
end)

-- A dashboard in a luacrawl process of its own, for the programs that must read it
-- while it runs (curl, Chromium): it publishes sample_stats() every 0.1 s, pages
-- counting up when ticking, and prints each command it gets.
local SERVER = [[
local lc = require "luacrawl"
local ticking = ...
lc.run(function()
  local srv = assert(lc.dashboard({ listen = "127.0.0.1:0" }))
  local st = sample_stats()
  print(srv:url())
  io.stdout:flush()
  for _ = 1, 600 do
    if ticking == "tick" then st.pages = st.pages + 1 end
    srv:publish(st)
    for _, c in ipairs(srv:commands()) do
      print("command " .. c)
      io.stdout:flush()
    end
    lc.sleep(0.1)
  end
  srv:close()
end)
]]

local function start_server(mode)
  local script, out = h.tmpname(".lua"), h.tmpname(".out")
  local f = assert(io.open(script, "wb"))
  f:write("local function sample_stats()\n", STATS_CODE, "\nend\n", SERVER)
  f:close()
  local p = io.popen(("%s lua %s %s >%s 2>&1 & echo $!"):format(h.luacrawl_bin, script, mode, out))
  local pid = tonumber(p:read("*l"))
  p:close()
  local url
  for _ = 1, 200 do
    url = h.read_file(out):match("^(http://%S+)")
    if url then break end
    os.execute("sleep 0.05")
  end
  assert(url, "the dashboard did not start: " .. h.read_file(out))
  return { url = url, base = url:match("^(http://[^/]+)"), out = out,
    stop = function() os.execute("kill " .. pid .. " 2>/dev/null") end }
end

describe("the dashboard seen from outside", function()
  it("streams each publication as an event", function()
    local srv = start_server("tick")
    local code, out = h.sh(("curl -sN %s/events | grep -m2 '^data:'"):format(srv.base))
    srv:stop()
    assert.equal(0, code)
    local a, b = out:match("^data: (.-)\n"), out:match("\ndata: (.-)\n")
    assert.truthy(a and b, out)
    assert.is_true(cjson.decode(b).pages > cjson.decode(a).pages)
  end)

  local updates, browse, build_dir = h.page_updates, h.browse, h.build_dir

  it("shows in a browser the numbers of /stats.json, its charts, hosts and errors, with no console error", function()
    local srv = start_server("fixed")
    local ok, err = pcall(function()
      local r = browse(srv.url, {
        updates(2),
        'Object.fromEntries([...document.querySelectorAll(".numbers b")].map((b) => [b.id, b.dataset.value]))',
        'Chart.getChart("chart-rate").data.datasets[0].data.length',
        '[...document.querySelectorAll("#hosts tbody tr td:first-child")].map((td) => td.textContent)',
        '[...document.querySelectorAll("#latest-errors td")].map((td) => td.textContent)',
        'document.querySelector("#latest-items").textContent',
        'window.pwned === undefined && document.querySelectorAll("body script").length === 0',
      }, build_dir .. "/dashboard.png")
      local code, body = h.sh(("curl -sf %s/stats.json"):format(srv.base))
      assert.equal(0, code)
      local st = cjson.decode(body)
      local shown = r.steps[2]
      for _, k in ipairs({ "pages", "requests", "bytes", "errors_total", "retries", "frontier", "in_flight" }) do
        assert.equal(tostring(st[k]), shown["n-" .. k], k)
      end
      assert.is_true(r.steps[3] >= 10)
      assert.same({ "a.crawl.test", "b.crawl.test" }, r.steps[4])
      assert.same({ "timeout", "http://a.crawl.test/<b>x</b>", "timed out" }, r.steps[5])
      assert.truthy(r.steps[6]:find("<script>window.pwned = 1</script>", 1, true))
      assert.is_true(r.steps[7])
      assert.same({}, r.console)
    end)
    srv:stop()
    if not ok then error(err, 0) end
  end)

  it("queues pause from the page's button", function()
    local srv = start_server("fixed")
    local ok, err = pcall(function()
      local r = browse(srv.url, {
        updates(1),
        'document.getElementById("pause").click(); new Promise((r) => { const f = () => '
          .. 'document.getElementById("command-result").textContent ? '
          .. 'r(document.getElementById("command-result").textContent) : setTimeout(f, 20); f(); })',
      })
      assert.equal("pause: queued", r.steps[2])
      assert.same({}, r.console)
      for _ = 1, 100 do
        if h.read_file(srv.out):find("command pause", 1, true) then break end
        os.execute("sleep 0.05")
      end
      assert.truthy(h.read_file(srv.out):find("command pause", 1, true))
    end)
    srv:stop()
    if not ok then error(err, 0) end
  end)
end)
