-- fixtures: --http --site-pages 300
-- `luacrawl report`: the HTML report of a crawl from its --stats-json file or from its
-- state (running or not), opened offline in headless Chromium (tests/tools/browser.py):
-- the numbers shown are the stats', the charts have points, nothing is fetched, the
-- console has no error; what crawled sites sent is shown as text, never as markup.
local h = require "spec_helper"
local cjson = require "cjson"

local q = h.quote

-- The build folder: the screenshots are left there.
local build_dir = h.luacrawl_bin:match("^(.*)/[^/]*$")

local function browse(file, steps, shot)
  local args = { "python3", h.source_dir .. "/tests/tools/browser.py", "--url", q("file://" .. file) }
  for _, s in ipairs(steps) do
    args[#args + 1] = "--step"
    args[#args + 1] = q(s)
  end
  if shot then args[#args + 1] = "--screenshot " .. shot end
  local code, out, err = h.sh(table.concat(args, " "))
  assert.equal(0, code, out .. err)
  return cjson.decode(out)
end

local function report(args, out)
  local code, _, err = h.sh(("%s report %s -o %s"):format(h.luacrawl_bin, args, q(out)))
  assert.equal(0, code, err)
  return h.read_file(out)
end

-- The steps every report is read with (helper.lua's report_steps).
local NUMBERS, POINTS, FETCHED = h.report_steps.numbers, h.report_steps.points, h.report_steps.fetched
local cells = h.report_steps.cells

describe("luacrawl report", function()
  it("from --stats-json: the stats' numbers, charts with points, offline, no console error", function()
    local stats, out, html = h.tmpname(".json"), h.tmpname(".jsonl"), h.tmpname(".html")
    local code, _, err = h.sh(("%s crawl %s %s %s -q -n 120 --timeout 1 --retries 0 -o %s --stats-json %s"):format(
      h.luacrawl_bin, q(h.url("/site/")), q(h.url("/status/404")), q(h.url("/slow?delay=3")), q(out), q(stats)))
    assert.equal(0, code, err)
    local st = cjson.decode(h.read_file(stats))
    local text = report("--stats-json " .. q(stats), html)
    assert.is_nil(text:find("<script src", 1, true))
    assert.is_nil(text:find("<link", 1, true))
    local r = browse(html, { NUMBERS, POINTS, FETCHED, cells("errors"), cells("error-samples"), cells("statuses") },
      build_dir .. "/report.png")
    for _, k in ipairs({ "pages", "requests", "bytes", "errors_total", "duplicates" }) do
      assert.equal(tostring(st[k]), r.steps[1]["n-" .. k], k)
    end
    for id, n in pairs(r.steps[2]) do assert.is_true(n > 0, id .. " has no point") end
    assert.equal(0, r.steps[3])
    assert.same({ "timeout", "1" }, r.steps[4])
    assert.same({ "timeout", h.url("/slow?delay=3") }, { r.steps[5][1], r.steps[5][2] })
    assert.same({ "200", tostring(st.statuses["200"]), "404", "1" }, r.steps[6])
    assert.same({}, r.console)
  end)

  it("from a state, while its crawl runs and after: the crawl's pages, 'running' then not", function()
    local state, out = h.tmpname(".db"), h.tmpname(".jsonl")
    local during, after, pidfile = h.tmpname(".html"), h.tmpname(".html"), h.tmpname(".pid")
    -- A page every 20 ms; the report once the output holds 20 records (a commit made).
    local code, _, err = h.sh(("bash -c %s"):format(q(("%s crawl %s -q -n 150 --delay 0.02 --state %s -o %s & p=$!; "
      .. "echo $p > %s; for i in $(seq 1200); do [ \"$(wc -l < %s 2>/dev/null || echo 0)\" -ge 20 ] && break; "
      .. "sleep 0.05; done; %s report --state %s -o %s || { kill $p; exit 9; }; wait $p"):format(
      h.luacrawl_bin, q(h.url("/site/")), q(state), q(out), q(pidfile), q(out), h.luacrawl_bin, q(state), q(during)))))
    assert.equal(0, code, err)
    local pid = h.read_file(pidfile):match("%d+")
    local r = browse(during, { 'document.getElementById("about").textContent', NUMBERS })
    assert.truthy(r.steps[1]:find("running (pid " .. pid .. ")", 1, true), r.steps[1])
    assert.is_true(tonumber(r.steps[2]["n-pages"]) < 150)
    report("--state " .. q(state), after)
    r = browse(after, { 'document.getElementById("about").textContent', NUMBERS, POINTS, cells("hosts") },
      build_dir .. "/report-state.png")
    assert.truthy(r.steps[1]:find("not finished", 1, true), r.steps[1])
    assert.equal("150", r.steps[2]["n-pages"])
    assert.is_true(r.steps[3]["chart-rate"] > 0)
    assert.equal(h.url("/"):match("^https?://([^/]+)"):gsub(":%d+$", ""), r.steps[4][1])
    assert.same({}, r.console)
  end)

  it("shows a hostile URL, host and message as text: no markup of theirs runs", function()
    local stats, html = h.tmpname(".json"), h.tmpname(".html")
    local evil = "<script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\">"
    local f = assert(io.open(stats, "wb"))
    f:write(cjson.encode({
      pages = 1, requests = 2, bytes = 10, errors_total = 1, statuses = { ["200"] = 1 }, errors = { [evil] = 1 },
      error_samples = { [evil] = { { url = "http://a.test/" .. evil, message = evil } } },
      slowest = { { url = "http://a.test/" .. evil, seconds = 1.5, status = 200, bytes = 10 } },
      by_host = { [evil] = { pages = 1, bytes = 10, errors = 1 } }, by_depth = { ["0"] = 1 }, by_size = { ["10"] = 1 },
      series = { interval = 1, points = { { t = 0, pages = 1, bytes = 10, statuses = { ["200"] = 1 }, errors = { [evil] = 1 } } } },
      stop_reason = evil,
    }))
    f:close()
    local text = report("--stats-json " .. q(stats), html)
    assert.is_nil(text:find(evil, 1, true))
    local r = browse(html, { "window.pwned === undefined", cells("error-samples"), cells("hosts"),
      'document.getElementById("about").textContent', "document.querySelectorAll(\"img\").length" })
    assert.is_true(r.steps[1])
    assert.same({ evil, "http://a.test/" .. evil, evil }, r.steps[2])
    assert.equal(evil, r.steps[3][1])
    assert.truthy(r.steps[4]:find(evil, 1, true))
    assert.equal(0, r.steps[5])
    assert.same({}, r.console)
  end)

  it("refuses a call without -o, with two sources or none, and a file that is not stats: exit 2", function()
    local stats = h.tmpname(".json")
    local f = assert(io.open(stats, "wb"))
    f:write("not json")
    f:close()
    for _, args in ipairs({ "--stats-json " .. q(stats), "-o x.html", "--state a.db --stats-json b.json -o x.html",
      "--redis redis://127.0.0.1:1/0 -o x.html", "--stats-json b.json --redis redis://127.0.0.1:1/0 --crawl-id c -o x.html",
      "--redis nothing://x --crawl-id c -o x.html" }) do
      local code, _, err = h.sh(("%s report %s"):format(h.luacrawl_bin, args))
      assert.equal(2, code, args)
      assert.matches("luacrawl: report: ", err)
    end
    local code, _, err = h.sh(("%s report --stats-json %s -o %s"):format(h.luacrawl_bin, q(stats), q(h.tmpname(".html"))))
    assert.equal(2, code)
    assert.matches("not the JSON of a crawl's stats", err)
    code, _, err = h.sh(("%s report --state %s -o %s"):format(h.luacrawl_bin, q(h.tmpname(".db")), q(h.tmpname(".html"))))
    assert.equal(2, code)
    assert.matches("cannot be read", err)
  end)
end)
