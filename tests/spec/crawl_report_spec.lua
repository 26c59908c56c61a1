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
