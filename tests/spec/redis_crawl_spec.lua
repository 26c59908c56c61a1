-- fixtures: --http --dns --redis
-- ways: one
-- `luacrawl crawl --redis URL --crawl-id NAME`: several workers (processes of the
-- binary, run at once) share one crawl through Redis. Checked against the fixture
-- site's manifest, the workers' outputs, the fixture server's request log and the
-- counts the fleet keeps in Redis: every page is done once for the fleet; a worker
-- killed (SIGKILL) or paused past its lease (SIGSTOP) costs only the requests of its
-- lease, fetched again by the others; politeness holds for the whole fleet; a Redis
-- restarted (AOF on) loses nothing.
local h = require "spec_helper"
local cjson = require "cjson"

local bin = h.luacrawl_bin
local control = h.control

local ids = 0
local function new_id()
  ids = ids + 1
  return ("spec-%d-%d-%d"):format(os.time(), math.random(1, 1e6), ids)
end

local slurp = h.read_file

local function lines_of(path)
  local n = 0
  for _ in slurp(path):gmatch("\n") do n = n + 1 end
  return n
end

-- A worker started in the background: `luacrawl crawl ARGS -o OUT`, its exit status
-- written when it ends.
local function start(args)
  local w = { out = h.tmpname(".jsonl"), err = h.tmpname(".err"), status = h.tmpname(".status"),
    pidfile = h.tmpname(".pid"), stats = h.tmpname(".json") }
  local cmd = ("%s crawl -q --stats-json %s %s -o %s 2>%s"):format(bin, w.stats, args, w.out, w.err)
  local script = ("touch %s; %s & p=$!; echo $p >%s; wait $p; echo $? >%s"):format(w.out, cmd, w.pidfile, w.status)
  os.execute(("bash -c '%s' >/dev/null 2>&1 &"):format(script:gsub("'", [['"'"']])))
  return w
end

-- Wait for the worker's end (at most `limit` seconds); its exit status.
local function wait(w, limit)
  for _ = 1, (limit or 120) * 20 do
    local s = slurp(w.status)
    if s ~= "" then return tonumber(s) end
    h.sh("sleep 0.05")
  end
  error("worker did not end: " .. slurp(w.err))
end

-- The records of an output (a last line cut by a kill is not one).
local function records(w)
  local out = {}
  for line in slurp(w.out):gmatch("[^\n]+") do
    local ok, r = pcall(cjson.decode, line)
    if ok then out[#out + 1] = r end
  end
  return out
end

local manifest = h.manifest

-- Wait until worker w has written `lines` records (or has ended: its status file
-- written).
local function wait_for_records(w, lines)
  for _ = 1, 4000 do
    if lines_of(w.out) >= lines or slurp(w.status) ~= "" then return end
    h.sh("sleep 0.005")
  end
end

-- The fleet's counts in Redis (its stats hash).
local function fleet_stats(url, id)
  local code, out = h.sh(("redis-cli -u %s HGETALL 'lc:{%s}:stats'"):format(url, id))
  assert.equal(0, code)
  local t, key = {}, nil
  for line in out:gmatch("[^\n]+") do
    if key then
      t[key] = tonumber(line) or line
      key = nil
    else
      key = line
    end
  end
  return t
end

-- Every record of the workers: the URLs and how many times each; the URLs that came
-- more than once, each with the workers that wrote it.
local function union(workers)
  local count, by = {}, {}
  for i, w in ipairs(workers) do
    for _, r in ipairs(records(w)) do
      count[r.url] = (count[r.url] or 0) + 1
      by[r.url] = by[r.url] or {}
      by[r.url][i] = true
    end
  end
  local again = {}
  for url, n in pairs(count) do
    if n > 1 then again[url] = by[url] end
  end
  return count, again
end

local function assert_exactly_the_site(count)
  local want, n = manifest()
  for url in pairs(want) do assert.is_truthy(count[url], "missing: " .. url) end
  local got = 0
  for url in pairs(count) do
    assert.is_truthy(want[url], "not in the site: " .. url)
    got = got + 1
  end
  assert.equal(n, got)
  return n
end

-- Three workers w1, w2, w3 on the site; opts[i]: start's options for worker i, and
-- args, its own options.
-- `luacrawl state --redis URL --crawl-id ID --json`, decoded.
local function fleet_state(url, id)
  local code, out, err = h.sh(("%s state --redis %s --crawl-id %s --json"):format(bin, url, id))
  assert.equal(0, code, err)
  return cjson.decode(out)
end

local function site_workers(redis_url, id, extra, args)
  local ws = {}
  for i = 1, 3 do
    ws[i] = start(("--redis %s --crawl-id %s --worker-id w%d -c 4 --per-host 6 %s %s %s"):format(
      redis_url, id, i, extra or "", args and args[i] or "", h.url("/site/")))
  end
  return ws
end

-- How many requests worker w1 of crawl id holds in its lease.
local function leased_by_w1(id)
  local code, out = h.sh(("redis-cli -u %s HLEN 'lc:{%s}:lease:w1'"):format(h.redis_url, id))
  assert.equal(0, code)
  return tonumber(out)
end

-- Stop worker w (SIGSTOP) once it has written `lines` records, at an instant it holds
-- requests in its lease (stopped at one it holds none, it goes on and is stopped
-- again a moment later). Returns how many it holds.
local function stop_holding(w, id, lines)
  wait_for_records(w, lines)
  local pid = tonumber(slurp(w.pidfile))
  for _ = 1, 200 do
    assert.equal("", slurp(w.status), "the worker ended first")
    h.sh("kill -STOP " .. pid)
    local n = leased_by_w1(id)
    if n > 0 then return n, pid end
    h.sh("kill -CONT " .. pid .. "; sleep 0.01")
  end
  error("the worker never held a lease")
end

describe("luacrawl crawl --redis", function()
  before_each(function() control("/__reset") end)

  it("three workers crawl the site together: each page once in the union of their outputs", function()
    local id = new_id()
    local ws = site_workers(h.redis_url, id)
    for _, w in ipairs(ws) do assert.equal(0, wait(w), slurp(w.err)) end
    local count, again = union(ws)
    local n = assert_exactly_the_site(count)
    assert.same({}, again)
    for i, w in ipairs(ws) do
      local recs = records(w)
      assert.is_true(#recs > 0, "worker " .. i .. " wrote nothing")
      for _, r in ipairs(recs) do assert.equal("w" .. i, r.worker) end
    end
    local st = fleet_stats(h.redis_url, id)
    assert.equal(n, st.pages)
    assert.equal(0, st.queued)
    assert.equal(0, st.leased)
    local report = fleet_state(h.redis_url, id)
    assert.is_true(report.finished)
    assert.equal(n, report.done)
    assert.equal(n - 1, report.statuses["200"]) -- and /site/moved's 301
    assert.equal(0, #report.workers) -- each left as it ended
    local code, text = h.sh(("%s state --redis %s --crawl-id %s"):format(bin, h.redis_url, id))
    assert.equal(0, code)
    assert.matches(("crawl %s in %s: done\n"):format(id, h.redis_url), text, 1, true)
    -- The server saw each page once.
    local fetched = {}
    for _, e in ipairs(control("/__log").requests) do
      if e.path ~= "/robots.txt" then
        assert.is_nil(fetched[e.path], "fetched twice: " .. e.path)
        fetched[e.path] = true
      end
    end
  end)

  it("a worker joining mid-crawl takes a share of it", function()
    local id = new_id()
    local ws = {}
    for i = 1, 2 do
      ws[i] = start(("--redis %s --crawl-id %s --worker-id w%d -c 4 --per-host 6 %s"):format(
        h.redis_url, id, i, h.url("/site/")))
    end
    wait_for_records(ws[1], 100)
    assert.equal("", slurp(ws[1].status), "the crawl ended before the third worker came")
    ws[3] = start(("--redis %s --crawl-id %s --worker-id w3 -c 4 --per-host 6 %s"):format(
      h.redis_url, id, h.url("/site/")))
    for _, w in ipairs(ws) do assert.equal(0, wait(w), slurp(w.err)) end
    local count, again = union(ws)
    assert_exactly_the_site(count)
    assert.same({}, again)
    assert.is_true(#records(ws[3]) > 0, "the worker that joined fetched nothing")
  end)

  it("max_host_time: a host's requests dropped, claimed ones acknowledged, the fleet ends", function()
    local id = new_id()
    local w = start(("--redis %s --crawl-id %s -c 4 --per-host 2 --delay 0.02 --max-host-time 0.3 %s"):format(
      h.redis_url, id, h.url("/site/")))
    assert.equal(0, wait(w, 60), slurp(w.err))
    local st = fleet_stats(h.redis_url, id)
    assert.equal(0, st.leased)
    assert.equal(0, st.queued)
    assert.is_true(st.dropped > 0)
    assert.equal(#records(w), st.pages)
  end)

  it("a crawl in Redis goes on across runs: workers stopped by max_pages, then one to the end", function()
    local id = new_id()
    local ws = {}
    for i = 1, 4 do
      ws[i] = start(("--redis %s --crawl-id %s -c 4 --per-host 4 %s %s"):format(
        h.redis_url, id, i < 4 and "-n 300" or "", h.url("/site/")))
      assert.equal(0, wait(ws[i]), slurp(ws[i].err))
      if i < 4 then assert.equal(300, #records(ws[i])) end
    end
    local count, again = union(ws)
    local n = assert_exactly_the_site(count)
    assert.same({}, again)
    assert.equal(n, fleet_stats(h.redis_url, id).pages)
  end)

  it("a crawl id whose keys hold another kind of value (an earlier layout): exit 2, saying so", function()
    local id = new_id()
    assert.equal(0, (h.sh(("redis-cli -u %s SET 'lc:{%s}:hosts' x"):format(h.redis_url, id))))
    local w = start(("--redis %s --crawl-id %s -d 1 %s"):format(h.redis_url, id, h.url("/site/")))
    assert.equal(2, wait(w))
    assert.matches(("crawl %s holds keys of another kind than this luacrawl makes (lc:{%s}:*: "):format(id, id),
      slurp(w.err), 1, true)
  end)

  it("a worker joining a crawl that is done has nothing to fetch and exits 0", function()
    local id = new_id()
    local ws = site_workers(h.redis_url, id, "-d 1")
    for _, w in ipairs(ws) do assert.equal(0, wait(w), slurp(w.err)) end
    local late = start(("--redis %s --crawl-id %s --per-host 6 -d 1 %s"):format(h.redis_url, id, h.url("/site/")))
    assert.equal(0, wait(late), slurp(late.err))
    assert.equal(0, #records(late))
  end)

  it("a worker killed with SIGKILL mid-crawl loses nothing: only its lease is fetched again", function()
    local id = new_id()
    local ws = site_workers(h.redis_url, id, "--lease 2")
    local held, pid = stop_holding(ws[1], id, 150)
    h.sh("kill -9 " .. pid .. "; kill -CONT " .. pid)
    assert.equal(137, wait(ws[1]))
    for i = 2, 3 do assert.equal(0, wait(ws[i]), slurp(ws[i].err)) end
    local count, again = union(ws)
    local n = assert_exactly_the_site(count)
    local st = fleet_stats(h.redis_url, id)
    assert.equal(n, st.pages) -- counted once each for the fleet
    assert.equal(0, st.leased)
    -- Its lease went back whole, and nothing else: at most its 4 slots' worth.
    assert.equal(held, st.reclaimed)
    assert.is_true(held <= 4, "held " .. held)
    -- The pages written twice were in the killed worker's lease.
    local repeats = 0
    for url, by in pairs(again) do
      assert.is_truthy(by[1], "repeated by workers that were not killed: " .. url)
      repeats = repeats + 1
    end
    assert.is_true(repeats <= held, ("%d repeats, %d held"):format(repeats, held))
    local fetched, twice = {}, 0
    for _, e in ipairs(control("/__log").requests) do
      if e.path ~= "/robots.txt" then
        if fetched[e.path] then twice = twice + 1 end
        fetched[e.path] = true
      end
    end
    assert.is_true(twice <= held, ("%d fetched twice, %d held"):format(twice, held))
  end)

  it("a worker stopped by SIGTERM gives back what it claimed: nothing fetched twice, no lease waited for", function()
    local id = new_id()
    local ws = site_workers(h.redis_url, id)
    wait_for_records(ws[1], 150)
    h.sh("kill -TERM " .. slurp(ws[1].pidfile))
    assert.equal(143, wait(ws[1]), slurp(ws[1].err))
    for i = 2, 3 do assert.equal(0, wait(ws[i]), slurp(ws[i].err)) end
    local count, again = union(ws)
    local n = assert_exactly_the_site(count)
    assert.same({}, again)
    local st = fleet_stats(h.redis_url, id)
    assert.equal(n, st.pages)
    assert.is_nil(st.reclaimed)
    assert.is_nil(st.refused)
  end)

  it("a worker paused past its lease: its requests go to the others, its late acknowledgements are refused", function()
    local id = new_id()
    -- Only the paused worker's lease is short: the others never lose theirs.
    local ws = site_workers(h.redis_url, id, nil, { "--lease 1" })
    local paused = ws[1]
    local held, pid = stop_holding(paused, id, 100)
    -- luacrawl state shows it, and what it holds.
    local shown
    for _, w in ipairs(fleet_state(h.redis_url, id).workers) do
      if w.worker == "w1" then shown = w end
    end
    assert.equal(held, shown.leased)
    h.sh("sleep 3; kill -CONT " .. pid)
    for i = 1, 3 do assert.equal(0, wait(ws[i]), slurp(ws[i].err)) end
    local count, again = union(ws)
    local n = assert_exactly_the_site(count)
    local st = fleet_stats(h.redis_url, id)
    assert.equal(n, st.pages) -- the late acknowledgements were not counted
    assert.equal(0, st.leased)
    assert.equal(0, st.queued)
    assert.is_true((st.reclaimed or 0) >= 1, "nothing reclaimed")
    assert.is_true((st.refused or 0) >= 1, "no late acknowledgement refused")
    local mine = cjson.decode(slurp(paused.stats)).redis
    assert.equal(st.refused, mine.refused)
    assert.is_true(mine.lost >= 1)
    for url, by in pairs(again) do assert.is_truthy(by[1], "repeated by workers not paused: " .. url) end
  end)

  it("politeness holds for the fleet: per_host 1 and delay 0.2 on three hosts, three workers", function()
    local id = new_id()
    local ws = {}
    for i = 1, 3 do
      ws[i] = start(("--dns-server %s --redis %s --crawl-id %s -c 4 --per-host 1 --delay 0.2 --allow-host crawl.test"
        .. " %s"):format(h.dns_server, h.redis_url, id, h.url("/hostsite/", "a.crawl.test")))
    end
    for _, w in ipairs(ws) do assert.equal(0, wait(w), slurp(w.err)) end
    local by_host, pages = {}, 0
    for _, e in ipairs(control("/__log").requests) do
      if e.path == "/robots.txt" then
        by_host[e.host] = by_host[e.host] or { robots = 0 }
        by_host[e.host].robots = by_host[e.host].robots + 1
      else
        by_host[e.host] = by_host[e.host] or { robots = 0 }
        local list = by_host[e.host]
        list[#list + 1] = e
        pages = pages + 1
      end
    end
    assert.equal(63, pages) -- /hostsite/ and its 20 pages on each of a, b and c
    -- The hosts were shared: some host's pages came from more than one worker (the
    -- gaps below are then between workers).
    local by_worker, shared = {}, 0
    for _, w in ipairs(ws) do
      for _, r in ipairs(records(w)) do
        local host = r.url:match("^http://([^:/]+)")
        by_worker[host] = by_worker[host] or {}
        by_worker[host][r.worker] = true
      end
    end
    for _, set in pairs(by_worker) do
      local n = 0
      for _ in pairs(set) do n = n + 1 end
      if n > 1 then shared = shared + 1 end
    end
    assert.is_true(shared >= 1, "each host was served by one worker only")
    for _, host in ipairs({ "a.crawl.test", "b.crawl.test", "c.crawl.test" }) do
      local list = by_host[host]
      assert.equal(21, #list, host)
      assert.equal(1, list.robots, host .. ": robots.txt fetched once for the fleet")
      table.sort(list, function(x, y) return x.start < y.start end)
      for i = 2, #list do
        local prev, e = list[i - 1], list[i]
        assert.is_true(e.start >= prev["end"], ("%s: %s started before %s ended"):format(host, e.path, prev.path))
        assert.is_true(e.start - prev.start >= 0.2,
          ("%s: %s started %.3f s after %s"):format(host, e.path, e.start - prev.start, prev.path))
      end
    end
  end)

  it("Crawl-delay holds for the fleet: robots.txt fetched once, its delay kept by every worker", function()
    control(("/__robots?host=a.crawl.test&status=200"), { method = "POST", body = "User-agent: *\nCrawl-delay: 0.3\n" })
    local id = new_id()
    local ws = {}
    for i = 1, 2 do
      ws[i] = start(("--dns-server %s --redis %s --crawl-id %s -c 4 -d 4 %s %s"):format(
        h.dns_server, h.redis_url, id, h.url("/hostsite/", "a.crawl.test"), h.url("/hostsite/p/10.html", "a.crawl.test")))
    end
    for _, w in ipairs(ws) do assert.equal(0, wait(w), slurp(w.err)) end
    local list, robots = {}, 0
    for _, e in ipairs(control("/__log?host=a.crawl.test").requests) do
      if e.path == "/robots.txt" then robots = robots + 1 else list[#list + 1] = e end
    end
    assert.equal(1, robots)
    assert.equal(10, #list) -- /hostsite/, pages 0 to 3 and 10 to 14
    table.sort(list, function(x, y) return x.start < y.start end)
    for i = 2, #list do
      local prev, e = list[i - 1], list[i]
      assert.is_true(e.start - prev.start >= 0.3, ("%s started %.3f s after %s"):format(e.path, e.start - prev.start, prev.path))
      assert.is_true(e.start - prev["end"] >= 0.3, ("%s started %.3f s after %s ended"):format(e.path, e.start - prev["end"], prev.path))
    end
  end)

  it("a backoff (503 with Retry-After) holds for the fleet: no worker asks the host meanwhile", function()
    local id = new_id()
    local flaky = h.url("/flaky/fleet-backoff?fail=1&status=503&retry_after=1", "a.crawl.test")
    local ws = {}
    for i = 1, 2 do
      ws[i] = start(("--dns-server %s --redis %s --crawl-id %s -c 4 --per-host 1 -d 1 '%s' %s"):format(
        h.dns_server, h.redis_url, id, flaky, h.url("/hostsite/", "a.crawl.test")))
    end
    for _, w in ipairs(ws) do assert.equal(0, wait(w), slurp(w.err)) end
    local list, unavailable = {}, nil
    for _, e in ipairs(control("/__log?host=a.crawl.test").requests) do
      if e.path ~= "/robots.txt" then list[#list + 1] = e end
      if e.status == 503 then unavailable = e end
    end
    assert.is_truthy(unavailable, "no 503 was served")
    local after = 0
    for _, e in ipairs(list) do
      if e.start > unavailable.start and e ~= unavailable then
        after = after + 1
        assert.is_true(e.start >= unavailable["end"] + 1,
          ("%s started %.3f s after the 503 ended"):format(e.path, e.start - unavailable["end"]))
      end
    end
    assert.is_true(after >= 2, "nothing came after the 503") -- its retry, and pages
    local count = union(ws)
    assert.is_truthy(count[flaky], "the retry's page is in no output")
  end)

  it("a retry waits its Retry-After for the fleet too: no worker asks for it sooner", function()
    local id = new_id()
    local path = "/flaky/retry-" .. id
    local flaky = h.url(path .. "?fail=1&status=500&retry_after=1", "b.crawl.test")
    local ws = {}
    for i = 1, 2 do
      ws[i] = start(("--dns-server %s --redis %s --crawl-id %s -c 4 '%s'"):format(h.dns_server, h.redis_url, id, flaky))
    end
    for _, w in ipairs(ws) do assert.equal(0, wait(w), slurp(w.err)) end
    local list = {}
    for _, e in ipairs(control("/__log?host=b.crawl.test").requests) do
      if e.path:find(path, 1, true) == 1 then list[#list + 1] = e end
    end
    table.sort(list, function(x, y) return x.start < y.start end)
    assert.equal(2, #list)
    assert.equal(500, list[1].status)
    assert.equal(200, list[2].status)
    -- (Redis counts the second from when the acknowledgement reached it, after the 500
    -- ended; up to a millisecond of rounding between the clocks' readings.)
    assert.is_true(list[2].start >= list[1]["end"] + 0.999,
      ("retried %.3f s after the 500 ended"):format(list[2].start - list[1]["end"]))
    assert.is_truthy(union(ws)[flaky], "the retry's page is in no output")
  end)

  it("Redis restarted mid-crawl (AOF on): the workers connect again and finish, each page once", function()
    local server = h.redis_server("--appendonly yes --appendfsync always")
    local id = new_id()
    local ws = site_workers(server.url, id)
    wait_for_records(ws[1], 100)
    assert.equal("", slurp(ws[1].status), "the crawl ended before the restart")
    server.stop()
    h.sh("sleep 0.5")
    server.restart()
    for _, w in ipairs(ws) do assert.equal(0, wait(w), slurp(w.err)) end
    server.stop()
    local count, again = union(ws)
    assert_exactly_the_site(count)
    assert.same({}, again)
    local reconnects = 0
    for _, w in ipairs(ws) do reconnects = reconnects + cjson.decode(slurp(w.stats)).redis.reconnects end
    assert.is_true(reconnects >= 3, "reconnects: " .. reconnects)
  end)

  it("crawl.run{redis =, crawl_id =} in Lua: the same fleet crawl", function()
    local crawl = require "luacrawl.crawl"
    local id = new_id()
    local items = {}
    local st = crawl.run({
      start = h.url("/site/"), redis = h.redis_url, crawl_id = id, worker_id = "lua-worker", max_depth = 1,
      quiet = true, progress = false, signals = false, items = items,
      parse = function(page) page:follow_links(); page:emit({ url = page.url }) end,
    })
    local want, n = h.manifest("?depth=1")
    assert.equal(n, #items)
    for _, item in ipairs(items) do assert.is_truthy(want[item.url], item.url) end
    assert.equal("lua-worker", st.redis.worker)
    assert.equal(n, fleet_stats(h.redis_url, id).pages)
  end)

  it("Redis restarted empty mid-crawl (no persistence): the workers say the crawl is lost, exit status 2", function()
    local server = h.redis_server()
    local id = new_id()
    local ws = site_workers(server.url, id)
    wait_for_records(ws[1], 100)
    assert.equal("", slurp(ws[1].status), "the crawl ended before the restart")
    server.stop()
    server.restart()
    for _, w in ipairs(ws) do
      assert.equal(2, wait(w), slurp(w.err) .. #records(w))
      assert.matches("crawl " .. id .. " is no longer in Redis", slurp(w.err), 1, true)
    end
    server.stop()
  end)

  it("crawl.run with redis: a request's callback goes through Redis by its name in callbacks", function()
    local crawl = require "luacrawl.crawl"
    local id = new_id()
    local items = {}
    local function detail(page) page:emit({ url = page.url, kind = "detail", meta = page.meta and page.meta.from }) end
    crawl.run({
      start = h.url("/site/"), redis = h.redis_url, crawl_id = id, max_depth = 1,
      quiet = true, progress = false, signals = false, items = items, callbacks = { detail = detail },
      parse = function(page) page:follow_links({ callback = detail, meta = { from = "index" } }) end,
    })
    local want, n = {}, 0
    for _, p in ipairs(control("/site/manifest.json?depth=1")) do
      if p ~= "/site/" then
        want[h.url(p)] = true
        n = n + 1
      end
    end
    assert.equal(n, #items)
    for _, item in ipairs(items) do
      assert.is_truthy(want[item.url], item.url)
      assert.equal("detail", item.kind)
      assert.equal("index", item.meta)
    end
    -- A callback not named in callbacks cannot go through Redis: said, per request.
    local errors = {}
    crawl.run({
      start = h.url("/site/"), redis = h.redis_url, crawl_id = new_id(), max_depth = 1,
      quiet = true, progress = false, signals = false,
      on_error = function(_, err) errors[#errors + 1] = tostring(err) end,
      parse = function(page) page:follow_links({ callback = function() end }) end,
    })
    assert.is_true(#errors >= 1)
    assert.matches("callback must be named in the spec", errors[1], 1, true)
  end)

  it("refuses a worker id in use in the crawl (exit status 2)", function()
    local lc = require "luacrawl"
    local id = new_id()
    lc.run(function()
      local r = assert(lc.redis.connect(h.redis_url))
      local prefix = require("luacrawl.frontier_redis").prefix(id)
      local join = r:script(require("luacrawl.frontier_redis_scripts").join)
      assert(join:call({ prefix .. "stats" }, { prefix, "dup", "", "token", "30000" }))
      r:close()
    end)
    local code, _, err = h.sh(("%s crawl -q --redis %s --crawl-id %s --worker-id dup %s"):format(
      bin, h.redis_url, id, h.url("/site/")))
    assert.equal(2, code)
    assert.matches("worker id dup is in use in crawl " .. id, err, 1, true)
  end)

  it("refuses a worker whose politeness differs from the crawl's, saying which (exit status 2)", function()
    local id = new_id()
    local first = ("%s crawl -q -n 2 --redis %s --crawl-id %s --per-host 1 --delay 0.2 %s"):format(
      bin, h.redis_url, id, h.url("/site/"))
    local code, _, err = h.sh(first)
    assert.equal(0, code, err)
    local out = h.tmpname(".jsonl")
    code, _, err = h.sh(("%s crawl -q --redis %s --crawl-id %s --per-host 16 --delay 0 -o %s %s"):format(
      bin, h.redis_url, id, out, h.url("/site/")))
    assert.equal(2, code)
    assert.matches("its workers run with per_host 1, delay 0.2, robots true, this one with per_host 16, delay 0, "
      .. "robots true", err, 1, true)
    assert.equal(0, #h.read_file(out))
    assert.equal(0, (h.sh(first))) -- the crawl's own values still join
  end)

  it("refuses Redis it cannot reach, --redis with --state, and --redis without --crawl-id (exit status 2)", function()
    local port = h.free_port()
    local code, _, err = h.sh(("%s crawl -q --redis redis://127.0.0.1:%d/0 --crawl-id x %s"):format(
      bin, port, h.url("/site/")))
    assert.equal(2, code)
    assert.matches("redis redis://127.0.0.1:" .. port .. "/0: cannot connect", err, 1, true)
    code, _, err = h.sh(("%s crawl -q --redis %s --crawl-id x --state %s %s"):format(
      bin, h.redis_url, h.tmpname(".db"), h.url("/site/")))
    assert.equal(2, code)
    assert.matches("--redis does not go with --state", err, 1, true)
    code, _, err = h.sh(("%s crawl -q --redis %s %s"):format(bin, h.redis_url, h.url("/site/")))
    assert.equal(2, code)
    assert.matches("--crawl-id", err, 1, true)
    code, _, err = h.sh(("%s state --redis redis://:pw@127.0.0.1:%d/0 --crawl-id x"):format(bin, port))
    assert.equal(2, code)
    assert.matches("redis redis://***@127.0.0.1:" .. port .. "/0: cannot connect", err, 1, true)
    code, _, err = h.sh(("%s state --redis %s --crawl-id %s"):format(bin, h.redis_url, new_id()))
    assert.equal(2, code)
    assert.matches("has no crawl", err, 1, true)
  end)
end)
