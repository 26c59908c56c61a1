-- fixtures: --http --site-pages 400
-- A crawl with a state, then recrawls of it (spec.recrawl, --recrawl): pages fetched
-- again with their validators, a 304 or an equal body recorded as unchanged and not
-- parsed, the changed pages parsed; and `luacrawl state` showing the state.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

local function control(path, method)
  local doc, res = h.control(path, { method = method })
  assert.equal(200, res.status, res.body)
  return doc
end

local function pages()
  return #control("/site/manifest.json")
end

-- crawl.run over the fixture site with a state; returns its stats and the URLs parse saw.
local function run(state, extra)
  local parsed = {}
  local spec = {
    start = h.url("/site/"), state = state, quiet = true, concurrency = 8, per_host = 8,
    parse = function(page)
      parsed[#parsed + 1] = page.url
      page:follow_links()
    end,
  }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return crawl.run(spec), parsed
end

describe("a recrawl of a crawl's state", function()
  it("of an unchanged site with ETags: every page 304, no page parsed, bytes under 5% of the first crawl's", function()
    control("/__reset", "POST")
    control("/__change?every=0&validators=etag", "POST")
    local state = h.tmpname(".db")
    local first = run(state)
    assert.equal(pages(), first.pages)
    local again, parsed = run(state, { recrawl = 0 })
    assert.equal(first.pages, again.pages)
    assert.equal(again.pages, again.unchanged)
    assert.same({}, parsed)
    assert.is_true(again.bytes < first.bytes * 0.05, ("%d bytes again, %d the first time"):format(again.bytes, first.bytes))
    -- Only /site/ and /site/moved have no ETag: every other page answered 304.
    assert.equal(again.pages - 2, again.statuses[304])
  end)

  it("of a site where 10% of the pages changed: exactly those parsed again", function()
    control("/__reset", "POST")
    control("/__change?every=0&validators=etag", "POST")
    local state = h.tmpname(".db")
    run(state)
    local changed = control("/__change?every=10&offset=3&validators=etag", "POST").changed
    local again, parsed = run(state, { recrawl = 0 })
    assert.equal(changed, #parsed)
    for _, u in ipairs(parsed) do
      local i = tonumber(u:match("/site/p/(%d+)%.html$"))
      assert.equal(3, i % 10, u .. " was parsed but did not change")
    end
    assert.equal(again.pages - changed, again.unchanged)
  end)

  it("without validators: unchanged pages told by their digest", function()
    control("/__reset", "POST")
    local state = h.tmpname(".db")
    run(state)
    local changed = control("/__change?every=5&offset=1", "POST").changed
    local again, parsed = run(state, { recrawl = 0 })
    assert.equal(changed, #parsed)
    assert.equal(again.pages - changed, again.unchanged)
    assert.is_nil(again.statuses[304])
  end)

  it("fetches nothing when no page is older than the age given, and says the crawl finished", function()
    control("/__reset", "POST")
    local state = h.tmpname(".db")
    run(state)
    local again = run(state, { recrawl = 3600 })
    assert.equal(0, again.pages)
    assert.is_true(again.finished_before)
  end)

  it("on the command line: --recrawl AGE, the record's changed, and luacrawl state", function()
    control("/__reset", "POST")
    control("/__change?every=0&validators=etag", "POST")
    local state, out = h.tmpname(".db"), h.tmpname(".jsonl")
    local base = ("%s crawl %s --state %s -o %s -q"):format(h.luacrawl_bin, h.url("/site/"), state, out)
    local code, _, err = h.sh(base)
    assert.equal(0, code, err)
    control("/__change?every=4&offset=0&validators=etag", "POST")
    code, _, err = h.sh(base .. " --recrawl 0s")
    assert.equal(0, code, err)
    local changed, unchanged, n = 0, 0, 0
    for line in io.lines(out) do
      n = n + 1
      local rec = cjson.decode(line)
      if rec.changed == true then changed = changed + 1 elseif rec.changed == false then unchanged = unchanged + 1 end
    end
    assert.equal(2 * pages(), n)
    assert.equal(100, changed)
    assert.equal(pages() - 100, unchanged)
    code, _, err = h.sh(base .. " --recrawl soon")
    assert.equal(2, code)
    assert.matches("%-%-recrawl needs an age", err)
    -- luacrawl state: the text and the JSON.
    local text
    code, text, err = h.sh(("%s state %s"):format(h.luacrawl_bin, state))
    assert.equal(0, code, err)
    assert.matches("finished on", text)
    assert.matches("pages done " .. pages(), text)
    local json
    code, json, err = h.sh(("%s state %s --json"):format(h.luacrawl_bin, state))
    assert.equal(0, code, err)
    local r = cjson.decode(json)
    assert.is_true(r.finished)
    assert.equal(pages(), r.done)
    assert.equal(0, r.frontier)
    assert.equal(2, r.totals.runs)
    code, _, err = h.sh(("%s state %s"):format(h.luacrawl_bin, h.tmpname(".db")))
    assert.equal(2, code)
    assert.matches("no such file", err)
  end)

  it("luacrawl state of a crawl stopped midway: its frontier and largest hosts", function()
    control("/__reset", "POST")
    local state = h.tmpname(".db")
    local code, _, err = h.sh(("%s crawl %s --state %s -o %s -q -n 50"):format(h.luacrawl_bin, h.url("/site/"), state,
      h.tmpname(".jsonl")))
    assert.equal(0, code, err)
    local json
    code, json, err = h.sh(("%s state %s --json"):format(h.luacrawl_bin, state))
    assert.equal(0, code, err)
    local r = cjson.decode(json)
    assert.is_false(r.finished)
    assert.equal(50, r.done)
    -- The totals of the last commit, though the crawl took less than the second
    -- between two writes of them.
    assert.equal(50, r.totals.pages)
    assert.is_true(r.frontier > 0)
    assert.equal("127.0.0.1", r.hosts[1].host) -- the host key: the host, without its port
    assert.equal(r.frontier, r.hosts[1].queued)
  end)
end)

-- The records of a JSON Lines output, by URL: {url = {first run's, second run's, ...}}.
local function records_by_url(path)
  local t = {}
  for line in io.lines(path) do
    local rec = cjson.decode(line)
    t[rec.url] = t[rec.url] or {}
    table.insert(t[rec.url], rec)
  end
  return t
end

describe("the records of a recrawl", function()
  local fields = "--fields url,status,content_type,length,title,links,changed --css h1=h1 --css-all blinks=blink"

  -- luacrawl crawl of the fixture site with a state, the record's fields and extracts
  -- chosen, appending to out; extra: more options.
  local function cli_crawl(state, out, extra)
    local code, _, err = h.sh(("%s crawl %s --state %s -o %s -q %s %s"):format(h.luacrawl_bin, h.url("/site/"),
      state, out, fields, extra or ""))
    assert.equal(0, code, err)
  end

  -- Every URL's later records have the fields of its first one: the title, content
  -- type, length, links and extracts. Returns how many later records were 304s.
  local function same_fields(path, runs)
    local n304 = 0
    for url, recs in pairs(records_by_url(path)) do
      assert.equal(runs, #recs, url)
      for i = 2, runs do
        local first, again = recs[1], recs[i]
        if again.status == 304 then n304 = n304 + 1 end
        for _, f in ipairs({ "content_type", "length", "title", "links", "h1", "blinks" }) do
          assert.same(first[f], again[f], ("%s: %s of record %d (status %d)"):format(url, f, i, again.status))
        end
        assert.is_false(again.changed, url)
      end
    end
    return n304
  end

  it("of pages that answered 304 keep the title, content type, length, links and extracts of the last fetch", function()
    control("/__reset", "POST")
    control("/__change?every=0&validators=etag", "POST")
    local state, out = h.tmpname(".db"), h.tmpname(".jsonl")
    cli_crawl(state, out)
    cli_crawl(state, out, "--recrawl 0s")
    -- and a second recrawl, from the rows the first one's 304s wrote
    cli_crawl(state, out, "--recrawl 0s")
    local recs = records_by_url(out)
    assert.equal("Page 7", recs[h.url("/site/p/7.html")][3].title)
    assert.equal("Page 7", recs[h.url("/site/p/7.html")][3].h1)
    assert.equal(2 * (pages() - 2), same_fields(out, 3)) -- /site/ and /site/moved have no ETag
  end)

  it("of a state from before crawl_done kept them: pages fetched whole once, then 304s that keep them", function()
    control("/__reset", "POST")
    control("/__change?every=0&validators=etag", "POST")
    local state, out = h.tmpname(".db"), h.tmpname(".jsonl")
    cli_crawl(state, out)
    -- The state as an earlier luacrawl left it: crawl_done without its record column.
    local db = assert(lc.store.open(state))
    db:sql("ALTER TABLE crawl_done DROP COLUMN record"):exec()
    assert(db:commit())
    assert(db:close())
    cli_crawl(state, out, "--recrawl 0s")
    assert.equal(0, same_fields(out, 2))
    cli_crawl(state, out, "--recrawl 0s")
    assert.equal(pages() - 2, same_fields(out, 3))
  end)

  it("with a field the last fetch did not keep: fetched whole once for it", function()
    control("/__reset", "POST")
    control("/__change?every=0&validators=etag", "POST")
    local state, out = h.tmpname(".db"), h.tmpname(".jsonl")
    local saved = fields
    fields = "--fields url,status,title,changed"
    cli_crawl(state, out)
    fields = saved
    cli_crawl(state, out, "--recrawl 0s")
    for url, recs in pairs(records_by_url(out)) do
      assert.not_equal(304, recs[2].status, url)
      assert.is_false(recs[2].changed, url)
      if url:match("/p/%d+%.html$") then assert.matches("^Page %d+$", recs[2].h1) end
    end
  end)
end)

-- The records of WARC files, by type: {response = {rec, ...}, revisit = {...}}.
local function records_by_type(files)
  local t = {}
  for _, f in ipairs(files) do
    for rec in lc.warc.records(f) do
      t[rec.type] = t[rec.type] or {}
      table.insert(t[rec.type], rec)
    end
  end
  return t
end

describe("a recrawl with warc", function()
  it("archives the pages that did not change, fetched whole, as revisits of the first run's records", function()
    control("/__reset", "POST") -- no validators: every page is fetched whole again
    local state, first_prefix, again_prefix = h.tmpname(".db"), h.tmpname("-first"), h.tmpname("-again")
    local first = run(state, { warc = first_prefix })
    assert.equal(pages(), first.pages)
    local changed = control("/__change?every=5&offset=2", "POST").changed
    local again, parsed = run(state, { recrawl = 0, warc = again_prefix })
    assert.equal(changed, #parsed)
    local first_files, again_files = { first_prefix .. "-00000.warc.gz" }, { again_prefix .. "-00000.warc.gz" }
    local before, after = records_by_type(first_files), records_by_type(again_files)
    local originals, ok_urls = {}, {}
    for _, rec in ipairs(before.response) do
      originals[rec.id] = rec
      -- robots.txt is not fetched again (the state keeps it for a day)
      if rec:response().status == 200 and rec.uri:find("/site/", 1, true) then ok_urls[rec.uri] = true end
    end
    assert.is_nil(before.revisit) -- the fixture's pages differ from each other
    -- Each revisit names the first run's record of its URL: ID, URI, date, digest.
    local revisited = {}
    for _, rec in ipairs(after.revisit or {}) do
      local hd = rec.headers
      local original = originals[hd["WARC-Refers-To"]]
      assert.is_truthy(original, rec.uri .. ": its revisit names no record of the first run")
      assert.equal(rec.uri, original.uri)
      assert.equal(hd["WARC-Refers-To-Target-URI"], original.uri)
      assert.equal(hd["WARC-Refers-To-Date"], original.date)
      assert.equal(hd["WARC-Payload-Digest"], original.headers["WARC-Payload-Digest"])
      assert.equal("http://netpreserve.org/warc/1.1/revisit/identical-payload-digest", hd["WARC-Profile"])
      revisited[rec.uri] = true
    end
    -- The changed pages are whole responses; every other page of status 200, a revisit.
    local changed_urls = {}
    for _, u in ipairs(parsed) do changed_urls[u] = true end
    for _, rec in ipairs(after.response) do
      assert.is_nil(revisited[rec.uri])
      if ok_urls[rec.uri] then assert.is_true(changed_urls[rec.uri], rec.uri .. " did not change: not a revisit") end
    end
    local n_ok = 0
    for u in pairs(ok_urls) do
      n_ok = n_ok + 1
      assert.is_true(revisited[u] or changed_urls[u], u .. " is neither a revisit nor changed")
    end
    assert.equal(n_ok - changed, #after.revisit)
    assert.is_true(#after.revisit > pages() / 2)
    -- Independent readers: warcio indexes the second run's file, and the standard's
    -- check (digests, pairs, each revisit's original) passes over both runs' files.
    local build_dir = h.luacrawl_bin:match("^(.*)/[^/]+$")
    local tools = h.source_dir .. "/tests/tools"
    local code, out, err = h.sh(("%q %q index %q"):format(tools .. "/warcio", build_dir, again_files[1]))
    assert.equal(0, code, "warcio failed (npm unreachable?): " .. err)
    assert.equal(#after.revisit, select(2, out:gsub('"warc%-type": ?"revisit"', "")))
    code, out, err = h.sh(("python3 %q %q %q"):format(tools .. "/warc_check.py", first_files[1], again_files[1]))
    assert.equal(0, code, out .. err)
    assert.matches(" 0 problems", out)
    -- A third run finds the first run's originals still (the state keeps them).
    local third_prefix = h.tmpname("-third")
    run(state, { recrawl = 0, warc = third_prefix })
    local third = records_by_type({ third_prefix .. "-00000.warc.gz" })
    for _, rec in ipairs(third.revisit or {}) do
      assert.is_truthy(originals[rec.headers["WARC-Refers-To"]] or changed_urls[rec.uri])
    end
    assert.equal(#after.revisit + changed, #third.revisit)
  end)
end)

describe("crawl.run with a state", function()
  it("keeps a request's callback by its name and its meta across runs", function()
    control("/__reset", "POST")
    local state = h.tmpname(".db")
    local seen_meta = {}
    local function product(page)
      seen_meta[#seen_meta + 1] = page.meta and page.meta.from
    end
    local spec = {
      start = h.url("/site/"), state = state, quiet = true, max_pages = 1,
      callbacks = { product = product },
      parse = function(page)
        for i = 1, 5 do page:follow(h.url("/site/p/" .. i .. ".html"), { callback = product, meta = { from = i } }) end
      end,
    }
    local st = crawl.run(spec)
    assert.equal(1, st.pages)
    assert.same({}, seen_meta)
    spec.max_pages = nil
    st = crawl.run(spec)
    assert.equal(5, st.pages)
    table.sort(seen_meta)
    assert.same({ 1, 2, 3, 4, 5 }, seen_meta)
  end)

  it("refuses, with the fix, a callback not named in callbacks", function()
    control("/__reset", "POST")
    local st = crawl.run({
      start = h.url("/site/"), state = h.tmpname(".db"), quiet = true,
      parse = function(page) page:follow(h.url("/site/p/1.html"), { callback = function() end }) end,
    })
    assert.equal(1, st.parse_errors)
    assert.equal(1, st.pages)
  end)
end)

describe("a host's backoff in the state", function()
  it("is waited out by the next run", function()
    control("/__reset", "POST")
    local state = h.tmpname(".db")
    local first = crawl.run({
      start = h.url("/site/"), state = state, quiet = true, max_pages = 1,
      parse = function(page)
        page:follow_links()
        page.crawler:backoff(page.request.key, 3) -- as a 503 would
      end,
    })
    assert.equal(1, first.pages)
    local t0 = lc.now()
    local second = crawl.run({ start = h.url("/site/"), state = state, quiet = true, max_pages = 1 })
    assert.equal(1, second.pages)
    assert.is_true(lc.now() - t0 >= 1.5, "the second run did not wait for the host's backoff")
  end)
end)
