-- The report printed at a crawl's end (luacrawl.crawl_report, crawl.format_stats):
-- its lines for a crawl that got no response and for a replay of archives.
local report = require "luacrawl.crawl_report"

-- The final stats of a crawl that did nothing, as report.final leaves them.
local function stats(fields)
  local st = report.new()
  st.elapsed, st.pages_per_s, st.stop_reason = 1, 0, "done"
  for k, v in pairs(fields or {}) do st[k] = v end
  return st
end

describe("the report at a crawl's end", function()
  it("has no statuses line when no response came (never an empty one)", function()
    local text = report.format(stats({ errors_total = 1, errors = { connect = 1 } }))
    assert.not_matches("statuses", text)
    assert.matches("^pages 0 %(0 requests, 0 bytes%)", text)
    assert.matches("\nerrors 1 %(connect: 1%)", text)
  end)

  it("has the statuses line, second, when responses came", function()
    local text = report.format(stats({ pages = 3, requests = 3, statuses = { [200] = 2, [404] = 1 } }))
    assert.matches("^pages 3 [^\n]*\nstatuses: 200: 2, 404: 1\nerrors 0", text)
  end)

  it("of a replay counts records replayed, and says why the others were skipped", function()
    local text = report.format(stats({
      replay = true, pages = 2, bytes = 10, statuses = { [200] = 2 }, warc_skipped = 9,
      warc_skipped_why = { out_of_scope = 7, too_deep = 2 }, warc_skipped_hosts = { ["b.example"] = 3, ["a.example"] = 1 },
    }))
    assert.matches("^records replayed 2 %(10 bytes%)", text)
    assert.not_matches("requests", text)
    assert.matches("\nskipped 9 records: 7 out of the crawl's scope %(hosts: a%.example, b%.example, %.%.%.%); "
      .. "2 deeper than max_depth\n", text)
  end)
end)

describe("the counts luacrawl report shows", function()
  local function response(st, i, seconds, size)
    report.response(st, { url = ("http://h%d.test/p"):format(i), key = ("h%d.test"):format(i), depth = i % 3 },
      { status = 200, size = size or 100, time = { total = seconds } })
  end

  it("stay bounded: the first 200 hosts by name, then one sum; the 10 slowest, slowest first", function()
    local st = report.new()
    for i = 1, 250 do response(st, i, i / 1000) end
    local named = 0
    for _ in pairs(st.by_host) do named = named + 1 end
    assert.equal(200, named)
    assert.same({ pages = 50, bytes = 5000, errors = 0 }, st.hosts_other)
    assert.equal(10, #st.slowest)
    for i = 1, 10 do assert.equal(("http://h%d.test/p"):format(251 - i), st.slowest[i].url) end
    assert.same({ [0] = 83, [1] = 84, [2] = 83 }, st.by_depth)
  end)

  it("count sizes by powers of two from 1 KiB, and keep 5 sample URLs of each error kind", function()
    local st = report.new()
    for _, size in ipairs({ 0, 1024, 1025, 2048, 2049, 1048576 }) do response(st, 1, 0.1, size) end
    assert.same({ [10] = 2, [11] = 2, [12] = 1, [20] = 1 }, st.by_size)
    for i = 1, 7 do report.count_error(st, "timeout", { url = "http://a.test/" .. i, key = "a.test" }, { message = "slow" }) end
    assert.equal(7, st.errors.timeout)
    assert.equal(5, #st.error_samples.timeout)
    assert.same({ url = "http://a.test/1", message = "slow" }, st.error_samples.timeout[1])
  end)

  it("as a series of at most 600 points, merged into wider buckets, no count lost", function()
    local series = { points = {}, minutes = {} }
    for t = 0, 4999 do series.points[#series.points + 1] = { t = t, pages = 1, bytes = 2, statuses = { ["200"] = 1 }, errors = {} } end
    local c = report.coarse(series, 600)
    assert.is_true(#c.points <= 600)
    assert.equal(16, c.interval)
    local pages, ok200 = 0, 0
    for _, p in ipairs(c.points) do pages, ok200 = pages + p.pages, ok200 + p.statuses["200"] end
    assert.equal(5000, pages)
    assert.equal(5000, ok200)
  end)

  it("coarsened again, keeps the buckets it had: never narrower than its interval", function()
    local series = { interval = 4, points = {} }
    for t = 0, 8, 4 do series.points[#series.points + 1] = { t = t, pages = 4, bytes = 8, statuses = {}, errors = {} } end
    local c = report.coarse(series, 600)
    assert.equal(4, c.interval)
    assert.equal(3, #c.points)
  end)
end)
