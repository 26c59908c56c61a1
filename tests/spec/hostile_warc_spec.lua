-- fixtures: --http
-- Hostile archives replayed (issue 31): from_warc holds no more of a record than the
-- crawl would have fetched, and a record it cannot run (too large, damaged, without a
-- URL, run already) is skipped and counted, never the end of the replay. The files
-- are made by tests/fixtures/make_warc.py, small on disk.
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"

-- Peak resident memory of this process, in MB.
local function peak_rss_mb()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmHWM:%s+(%d+)")
    if kb then return tonumber(kb) / 1024 end
  end
end

local function make_warc(kind)
  local path = h.tmpname(".warc.gz")
  local code, _, err = h.sh(("python3 %s/tests/fixtures/make_warc.py %s %s"):format(h.source_dir, kind, path))
  assert(code == 0, err)
  return path
end

-- The replay of files: its stats and the titles its parse saw, in order.
local function replay(files)
  local titles = {}
  local st = crawl.run({
    from_warc = files, quiet = true, progress = false, signals = false,
    parse = function(page) titles[#titles + 1] = page:css1("title::text") end,
  })
  return st, titles
end

describe("from_warc on a hostile archive", function()
  it("skips a record over max_size without holding it, and replays the rest", function()
    local file = make_warc("big_record")
    collectgarbage()
    local before = peak_rss_mb()
    local st, titles = replay({ file })
    -- The record is 500 MiB: holding it once would take five times the bound.
    assert.is_true(peak_rss_mb() - before < 50, peak_rss_mb() - before)
    assert.same({ "page 2" }, titles)
    assert.equal(1, st.warc_too_large)
  end)

  it("skips metadata records over max_size without holding them", function()
    local file = make_warc("meta_bombs")
    collectgarbage()
    local before = peak_rss_mb()
    local st, titles = replay({ file })
    assert.is_true(peak_rss_mb() - before < 50, peak_rss_mb() - before)
    assert.same({ "page 1" }, titles)
    assert.equal(20, st.warc_too_large)
  end)

  it("skips a damaged gzip member in the middle of a file, counted, and replays the records after it", function()
    local st, titles = replay({ make_warc("bad_member") })
    assert.same({ "page 1", "page 3" }, titles)
    assert.equal(1, st.warc_damaged)
  end)

  it("skips a response record without WARC-Target-URI, counted, and replays the others", function()
    local st, titles = replay({ make_warc("no_uri") })
    assert.same({ "page 1", "page 3" }, titles)
    assert.equal(1, st.warc_no_uri)
  end)

  it("replays a record once when the same file is given twice", function()
    local file = make_warc("plain")
    local st, titles = replay({ file, file })
    assert.same({ "page 1", "page 2", "page 3" }, titles)
    assert.equal(3, st.warc_repeated)
  end)
end)
