-- fixtures: --http --site-pages 1500
-- ways: one
-- `luacrawl crawl --state FILE` stopped at random instants (SIGKILL from outside,
-- SIGINT, SIGTERM, max_pages steps) and run again each time: checked against the
-- fixture server's request log and the output, every page is in the output exactly
-- once, no line is torn, and a run after a kill fetches again at most the pages that
-- were in flight (the concurrency). Then the refusals: another crawl's state, a
-- damaged, empty, locked or read-only state file: a clear message and exit status 2.
local lc = require "luacrawl"
local h = require "spec_helper"
local cjson = require "cjson"

local RUNS = 10 -- kills (or signals, or steps) per case
local CONCURRENCY = 8

local control = h.control

local manifest = h.manifest

-- Page paths the server was asked for since entry `from` of its log (robots.txt and
-- the fixture's own paths left out), and the log's new length.
local function requests_since(from)
  local log = control("/__log").requests
  local paths = {}
  for i = from + 1, #log do
    local p = log[i].path
    if p:match("^/site/") and p ~= "/site/manifest.json" then paths[#paths + 1] = p end
  end
  return paths, #log
end

local q = h.quote

local function crawl_cmd(state, out, extra)
  return ("%s crawl %s --state %s -o %s -q -c %d --per-host %d %s"):format(
    h.luacrawl_bin, q(h.url("/site/")), q(state), q(out), CONCURRENCY, CONCURRENCY, extra or "")
end

-- Run the crawl; with signal, send it that signal after `after` seconds.
local function run(state, out, extra, signal, after)
  local cmd = crawl_cmd(state, out, extra)
  if signal == "INT2" then -- a second SIGINT aborts: requests in flight cancelled, outputs closed
    cmd = ("bash -c %s"):format(q(("%s & p=$!; sleep %.3f; kill -INT $p 2>/dev/null; sleep 0.02; "
      .. "kill -INT $p 2>/dev/null; wait $p"):format(cmd, after)))
  elseif signal then
    cmd = ("bash -c %s"):format(q(("%s & p=$!; sleep %.3f; kill -%s $p 2>/dev/null; wait $p"):format(cmd, after, signal)))
  end
  return h.sh(cmd)
end

-- The crawl, stopped with signal once its output holds at least n records, and a
-- moment more (the records are written in the step of the state's commit, whose end
-- may come a little after): a stop that comes after a commit whatever the machine's
-- load, where a fixed time may come before the first. At most 60 s of waiting.
local function run_until_records(state, out, extra, signal, n)
  local cmd = crawl_cmd(state, out, extra)
  return h.sh(("bash -c %s"):format(q(("%s & p=$!; for i in $(seq 1200); do "
    .. "[ \"$(wc -l < %s 2>/dev/null || echo 0)\" -ge %d ] && break; sleep 0.05; done; "
    .. "sleep 0.5; kill -%s $p 2>/dev/null; wait $p"):format(cmd, q(out), n, signal))))
end

-- Every line of the output a whole JSON object; the URLs, each counted.
local function read_output(out)
  local f = assert(io.open(out, "rb"))
  local text = f:read("*a")
  f:close()
  if text ~= "" then assert.equal("\n", text:sub(-1), "the output ends in a torn line") end
  local count, n = {}, 0
  for line in text:gmatch("[^\n]+") do
    local ok, rec = pcall(cjson.decode, line)
    assert.is_true(ok, "a torn or broken line: " .. line:sub(1, 200))
    count[rec.url] = (count[rec.url] or 0) + 1
    n = n + 1
  end
  return count, n
end

-- Stop the crawl RUNS times (with signal after a random time in window, or by its
-- own max_pages), then let it finish. Checks each run's exit status, and returns
-- the pages each run after a stop fetched that an earlier run had fetched.
local function crawl_with_stops(signal, window, code_stopped, extra)
  control("/__reset")
  local state, out = h.tmpname(".db"), h.tmpname(".jsonl")
  local fetched, logged, stops, again = {}, 0, 0, {}
  local function account()
    local paths
    paths, logged = requests_since(logged)
    local n = 0
    for _, p in ipairs(paths) do
      if fetched[p] then n = n + 1 end
      fetched[p] = true
    end
    return n
  end
  local finished = false
  while stops < RUNS and not finished do
    local after = window and window[1] + math.random() * (window[2] - window[1])
    local code, _, err = run(state, out, extra, signal, after)
    local n = account()
    if stops > 0 then again[#again + 1] = n end
    -- A signal that comes before the crawl has opened its output (a slow start,
    -- under the sanitizers) leaves no file yet: no line.
    local lines = 0
    local f = io.open(out, "rb")
    if f then
      f:close()
      lines = select(2, read_output(out))
    end
    if code == 0 and select(2, requests_since(logged)) == logged and lines == select(2, manifest()) then
      finished = true
    else
      assert.equal(code_stopped, code, err)
      stops = stops + 1
    end
  end
  local code, _, err = run(state, out, (extra:gsub("%-n %d+", "")))
  assert.equal(0, code, err)
  again[#again + 1] = account()
  print(("state_crawl_spec: %s: %d stops, pages fetched again after each: %s"):format(
    signal or extra, stops, table.concat(again, " ")))
  return stops, again, state, out
end

-- The output holds every page of the site exactly once.
local function check_output(out)
  local count, n = read_output(out)
  local want, pages = manifest()
  for url, c in pairs(count) do
    assert.is_true(want[url], "not a page of the site: " .. url)
    assert.equal(1, c, url .. " is in the output " .. c .. " times")
  end
  assert.equal(pages, n)
end

describe("luacrawl crawl --state", function()
  local seed = os.time()
  math.randomseed(seed)
  print(("state_crawl_spec: random seed %d"):format(seed))

  it("killed with SIGKILL at random instants: every page once, refetching at most the pages in flight", function()
    -- A delay makes the crawl (1,500 pages, at most 500 a second however fast the
    -- machine) last 3 s or more: the ten kills, each at most 0.3 s into its run with
    -- the run's start-up in it, land before it ends.
    local stops, again, state, out = crawl_with_stops("KILL", { 0.05, 0.3 }, 137, "--delay 0.002")
    assert.equal(RUNS, stops)
    for i, n in ipairs(again) do
      assert.is_true(n <= CONCURRENCY, ("run %d after a kill fetched %d pages again"):format(i + 1, n))
    end
    check_output(out)
    -- Finished: says so, fetches nothing, exits 0, leaves the output as it is.
    local _, logged = requests_since(0)
    local before = select(2, read_output(out))
    local code, _, err = run(state, out, "--delay 0.002")
    assert.equal(0, code, err)
    assert.matches("this crawl finished on", err)
    assert.equal(logged, select(2, requests_since(0)))
    assert.equal(before, select(2, read_output(out)))
  end)

  it("stopped by SIGINT and SIGTERM: exits 130 and 143, then goes on with nothing fetched twice", function()
    for _, sig in ipairs({ { "INT", 130 }, { "TERM", 143 } }) do
      local _, again, _, out = crawl_with_stops(sig[1], { 0.05, 0.35 }, sig[2], "--delay 0.002")
      for i, n in ipairs(again) do
        assert.equal(0, n, ("run %d after SIG%s fetched %d pages again"):format(i + 1, sig[1], n))
      end
      check_output(out)
    end
  end)

  it("aborted by a second SIGINT: every page once, refetching at most the pages in flight", function()
    local _, again, _, out = crawl_with_stops("INT2", { 0.05, 0.35 }, 130, "--delay 0.002")
    for i, n in ipairs(again) do
      assert.is_true(n <= CONCURRENCY, ("run %d after an abort fetched %d pages again"):format(i + 1, n))
    end
    check_output(out)
  end)

  it("in max_pages steps: each run goes on where the last stopped", function()
    local _, again, _, out = crawl_with_stops(nil, nil, 0, "-n 150")
    for i, n in ipairs(again) do assert.equal(0, n, ("run %d fetched %d pages again"):format(i + 1, n)) end
    check_output(out)
    -- robots.txt was read once: the later runs took it from the state.
    local robots = 0
    for _, r in ipairs(control("/__log").requests) do
      if r.path == "/robots.txt" then robots = robots + 1 end
    end
    assert.equal(1, robots)
  end)

  it("keeps CSV and JSON outputs whole across kills: one header, one valid array", function()
    for _, ext in ipairs({ ".csv", ".json" }) do
      control("/__reset")
      local state, out = h.tmpname(".db"), h.tmpname(ext)
      for _ = 1, 4 do run(state, out, "", "KILL", 0.1 + math.random() * 0.4) end
      local code, _, err = run(state, out, "")
      assert.equal(0, code, err)
      local f = assert(io.open(out, "rb"))
      local text = f:read("*a")
      f:close()
      local urls = {}
      if ext == ".csv" then
        local lines = {}
        for line in text:gmatch("[^\r\n]+") do lines[#lines + 1] = line end
        assert.matches("^url,", lines[1])
        for i = 2, #lines do
          assert.is_nil(lines[i]:match("^url,"), "a second header")
          urls[#urls + 1] = lines[i]:match("^([^,]+),")
        end
      else
        for _, rec in ipairs(cjson.decode(text)) do urls[#urls + 1] = rec.url end
      end
      local once = {}
      for _, u in ipairs(urls) do
        assert.is_nil(once[u], u .. " twice in the " .. ext .. " output")
        once[u] = true
      end
      assert.equal(select(2, manifest()), #urls)
    end
  end)

  -- The URLs the state calls done with a response (errors have no record), of rows
  -- after the row ID given; and the last row's ID.
  local function done_urls(state, after)
    local db = assert(lc.store.open(state))
    local rows = db:sql("SELECT url FROM crawl_done WHERE status IS NOT NULL AND id > ?1"):rows(after or 0)
    local last = db:sql("SELECT max(id) FROM crawl_done"):one()
    db:abandon()
    local urls = {}
    for i, r in ipairs(rows) do urls[i] = r[1] end
    return urls, last
  end

  -- The response and revisit records of files, by URI, and the responses by record ID;
  -- a file left by a kill may end in a record cut short.
  local function archived(files)
    local by_uri, by_id = {}, {}
    for _, f in ipairs(files) do
      local ok, err = pcall(function()
        for rec in lc.warc.records(f) do
          if rec.type == "response" or rec.type == "revisit" then by_uri[rec.uri] = rec end
          if rec.type == "response" then by_id[rec.id] = rec end
        end
      end)
      if not ok then assert.matches("warc", tostring(err):lower()) end
    end
    return by_uri, by_id
  end

  -- Every revisit of files names a response of files, with the same payload digest.
  local function check_revisits(files)
    local by_uri, by_id = archived(files)
    local n = 0
    for _, rec in pairs(by_uri) do
      if rec.type == "revisit" then
        n = n + 1
        local original = by_id[rec.headers["WARC-Refers-To"]]
        assert.is_truthy(original, rec.uri .. ": its revisit names a record in no file")
        assert.equal(original.headers["WARC-Payload-Digest"], rec.headers["WARC-Payload-Digest"])
      end
    end
    return n
  end

  it("with --warc: a run after a kill starts a new archive file, the killed one left .open", function()
    control("/__reset")
    local state, out, prefix = h.tmpname(".db"), h.tmpname(".jsonl"), h.tmpname("-arc")
    local code = run_until_records(state, out, "--delay 0.002 --warc " .. q(prefix), "KILL", 3)
    assert.equal(137, code)
    -- Each page the killed run's state calls done has its records in the killed run's
    -- file: the state commits after the archive's queue is written.
    local done = done_urls(state)
    assert.is_true(#done > 0, "the kill came before the first commit")
    local killed = archived({ prefix .. "-00000.warc.gz.open" })
    for _, url in ipairs(done) do assert.is_truthy(killed[url], url .. " is done in the state, in no file") end
    local code2, _, err = run(state, out, "--warc " .. q(prefix))
    assert.equal(0, code2, err)
    assert.is_truthy(io.open(prefix .. "-00000.warc.gz.open", "rb"), "the killed run's file")
    assert.is_truthy(io.open(prefix .. "-00001.warc.gz", "rb"), "the next run's file")
    check_output(out)
    -- Every page is archived: the pages the killed run's state called done in its file
    -- (their records written before each commit), the others in the next run's.
    local files = { prefix .. "-00000.warc.gz.open", prefix .. "-00001.warc.gz" }
    local all = archived(files)
    for url in pairs(read_output(out)) do assert.is_truthy(all[url], url .. " is not in the archive") end

    -- A recrawl (pages fetched whole: no validators), killed, then run to its end:
    -- its unchanged pages are revisits, each naming a record in the files, the
    -- killed run's ones too; and its done pages are in its files.
    local rprefix = h.tmpname("-re")
    local _, last = done_urls(state)
    code = run_until_records(state, out, "--recrawl 0s --delay 0.002 --warc " .. q(rprefix), "KILL",
      select(2, read_output(out)) + 3)
    assert.equal(137, code)
    local killed_re = archived({ rprefix .. "-00000.warc.gz.open" })
    local redone = done_urls(state, last)
    for _, url in ipairs(redone) do assert.is_truthy(killed_re[url], url .. " is done again in the state, in no file") end
    code, _, err = run(state, out, "--recrawl 0s --warc " .. q(rprefix))
    assert.equal(0, code, err)
    files[#files + 1] = rprefix .. "-00000.warc.gz.open"
    files[#files + 1] = rprefix .. "-00001.warc.gz"
    local revisits = check_revisits(files)
    assert.is_true(revisits >= select(2, manifest()) / 2, ("%d revisits"):format(revisits))
    local rdone = done_urls(state)
    assert.equal(select(2, manifest()), #rdone)
    local re = archived({ files[3], files[4] })
    for _, url in ipairs(rdone) do assert.is_truthy(re[url], url .. " recrawled, in no file of the recrawl") end
    assert.is_true(#redone > 0, "the recrawl was killed before its first commit")
  end)

  it("killed with SIGKILL: luacrawl state's totals over its runs agree with the pages done", function()
    local _, _, state = crawl_with_stops("KILL", { 0.05, 0.3 }, 137, "--delay 0.002")
    local code, out, err = h.sh(("%s state %s --json"):format(h.luacrawl_bin, q(state)))
    assert.equal(0, code, err)
    local r = cjson.decode(out)
    assert.equal(r.done, r.totals.pages)
  end)

  it("luacrawl state reads a running crawl's state, saying it runs and its pid; the crawl goes on to its end", function()
    control("/__reset")
    local state, out, pidfile = h.tmpname(".db"), h.tmpname(".jsonl"), h.tmpname(".pid")
    local status = h.tmpname(".json")
    -- The crawl in the background (a page every 10 ms); luacrawl state once the output
    -- holds 20 records (so a commit was made), while the crawl still has 280 to go.
    local code, _, err = h.sh(("bash -c %s"):format(q(("%s --delay 0.01 -n 300 & p=$!; echo $p > %s; "
      .. "for i in $(seq 1200); do [ \"$(wc -l < %s 2>/dev/null || echo 0)\" -ge 20 ] && break; sleep 0.05; done; "
      .. "%s state %s --json > %s || { kill $p; exit 9; }; wait $p"):format(
      crawl_cmd(state, out), q(pidfile), q(out), h.luacrawl_bin, q(state), q(status)))))
    assert.equal(0, code, err)
    local r = cjson.decode(assert(io.open(status)):read("*a"))
    assert.is_true(r.running)
    assert.equal(tonumber(assert(io.open(pidfile)):read("*l")), r.pid)
    assert.is_false(r.finished)
    assert.is_true(r.done >= 1 and r.done < 300, ("%d done"):format(r.done))
    -- The crawl was not disturbed: every page once in the output and once asked for.
    local count, n = read_output(out)
    assert.equal(300, n)
    for url, k in pairs(count) do assert.equal(1, k, url) end
    local asked = {}
    for _, p in ipairs((requests_since(0))) do
      assert.is_nil(asked[p], p .. " fetched twice")
      asked[p] = true
    end
    -- Once it has ended: finished, not running.
    code, out, err = h.sh(("%s state %s"):format(h.luacrawl_bin, q(state)))
    assert.equal(0, code, err)
    assert.matches("^state [^\n]*: not finished", out)
  end)

  it("refuses the state of another crawl, unless --state-force", function()
    local state, out = h.tmpname(".db"), h.tmpname(".jsonl")
    local code, _, err = run(state, out, "-n 10")
    assert.equal(0, code, err)
    code, _, err = h.sh(("%s crawl %s --state %s -o %s -q"):format(h.luacrawl_bin, q(h.url("/site/p/1.html")), q(state),
      q(out)))
    assert.equal(2, code)
    assert.matches("was made by another crawl", err)
    assert.matches("start URLs " .. h.url("/site/"):gsub("%p", "%%%0") .. "; this crawl: ", err)
    assert.matches("%-%-state%-force", err)
    code, _, err = h.sh(("%s crawl %s --state %s -o %s -q -n 5 --state-force"):format(h.luacrawl_bin,
      q(h.url("/site/p/1.html")), q(state), q(out)))
    assert.equal(0, code, err)
  end)

  it("a disk that fills up mid-crawl: exit 2 naming it; the next run goes on from the last commit", function()
    h.with_tmpfs("300k", function(dir)
      control("/__reset")
      local state, out = dir .. "/crawl.db", h.tmpname(".jsonl")
      local code, _, err = run(state, out, "")
      assert.equal(2, code, err)
      assert.matches("no space left", err)
      assert.is_true(select(2, read_output(out)) < select(2, manifest()), "the crawl did not stop")
      assert.equal(0, h.sh("mount -o remount,size=64m " .. dir))
      code, _, err = run(state, out, "")
      assert.equal(0, code, err)
      check_output(out)
    end, "state_crawl_spec")
  end)

  it("a state on a read-only file system: exit 2, saying so", function()
    h.with_tmpfs("8m", function(dir)
      local state, out = dir .. "/crawl.db", h.tmpname(".jsonl")
      local code, _, err = run(state, out, "-n 20")
      assert.equal(0, code, err)
      assert.equal(0, h.sh("mount -o remount,ro " .. dir))
      code, _, err = run(state, out, "")
      assert.equal(2, code)
      assert.matches("cannot be written", err)
    end, "state_crawl_spec")
  end)

  it("refuses a damaged, empty, locked or read-only state with exit status 2, and keeps the output", function()
    local out = h.tmpname(".jsonl")
    -- Not a database.
    local bad = h.tmpname(".db")
    local f = assert(io.open(bad, "wb"))
    f:write(("this is not a database\n"):rep(400))
    f:close()
    local code, _, err = run(bad, out, "")
    assert.equal(2, code)
    assert.matches("damaged or not a database", err)
    -- Empty (truncated to nothing).
    local empty = h.tmpname(".db")
    assert(io.open(empty, "wb")):close()
    code, _, err = run(empty, out, "")
    assert.equal(2, code)
    assert.matches("empty file", err)
    -- Truncated mid-file.
    local state = h.tmpname(".db")
    code, _, err = run(state, out, "-n 200")
    assert.equal(0, code, err)
    local before = select(2, read_output(out))
    h.sh(("truncate -s 3000 %s"):format(q(state)))
    code, _, err = run(state, out, "")
    assert.equal(2, code)
    assert.matches("state", err)
    assert.equal(before, select(2, read_output(out)), "a refused state must leave the output alone")
    -- Locked by a running crawl.
    local locked = h.tmpname(".db")
    code, _, err = h.sh(("bash -c %s"):format(q(("%s --delay 0.2 & p=$!; sleep 0.5; %s; c=$?; kill $p; wait $p; exit $c"):format(
      crawl_cmd(locked, h.tmpname(".jsonl")), crawl_cmd(locked, h.tmpname(".jsonl"))))))
    assert.equal(2, code)
    assert.matches("in use", err)
    assert.matches("another crawl has it open %(pid %d+%)", err)
  end)
end)
