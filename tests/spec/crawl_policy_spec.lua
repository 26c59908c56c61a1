-- Policies that say what they mean (issue 33): request options and hooks checked by
-- name, hooks as lists, drops counted by reason, errors a policy acts on (on_error
-- re-queues, errback), outputs that take some items, and crawl.page running a spec.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

lc.configure({ dns_servers = h.dns_server })

local REFUSED = "http://127.0.0.1:1/refused" -- nothing listens: a connect error

local function run(spec)
  spec.quiet, spec.progress, spec.signals = true, false, false
  if spec.robots == nil then spec.robots = false end
  return crawl.run(spec)
end

local function run_error(spec)
  local ok, err = pcall(run, spec)
  assert.is_false(ok)
  return tostring(err)
end

local LISTING = [[<html><body><a href="/a">a</a> <a href="/b?utm_source=x">b</a></body></html>]]

describe("request options", function()
  it("page:follow refuses a misspelled option, with the name it meant", function()
    local page = crawl.page({ url = "http://shop.test/", body = LISTING })
    local ok, err = pcall(page.follow, page, "/a", { callbak = print })
    assert.is_false(ok)
    assert.matches("follow: unknown option 'callbak' %(did you mean 'callback'%?%)", err)
    assert.equal(0, #page.followed)
  end)

  it("page:follow refuses an option of the wrong type, naming it", function()
    local page = crawl.page({ url = "http://shop.test/", body = LISTING })
    local ok, err = pcall(page.follow, page, "/a", { meta = "x" })
    assert.is_false(ok)
    assert.matches("follow: meta must be a table %(got string%)", err)
  end)

  it("crawler:enqueue refuses a misspelled field of a request", function()
    local err
    run({ start = h.url("/status/200"), parse = function(page)
      local ok, e = pcall(page.crawler.enqueue, page.crawler, { url = h.url("/status/201"), mata = {} })
      err = not ok and e
    end })
    assert.matches("crawler:enqueue: unknown option 'mata' %(did you mean 'meta'%?%)", err)
  end)

  it("a start request with a misspelled field is refused before anything is fetched", function()
    local err = run_error({ start = { { url = h.url("/status/200"), priorty = 2 } } })
    assert.matches("start: unknown option 'priorty' %(did you mean 'priority'%?%)", err)
  end)

  it("a table on_request returns is checked as a request", function()
    local err = run_error({ start = h.url("/status/200"),
      on_request = function(req) return { url = req.url, callbak = print } end })
    assert.matches("on_request: unknown option 'callbak' %(did you mean 'callback'%?%)", err)
    assert.not_matches("crawl%.lua", err)
  end)
end)

describe("mistakes in a spec", function()
  it("a hook that is not a function names the hook", function()
    assert.matches("crawl%.run: on_request must be a function or a list of functions %(got string%)",
      run_error({ start = h.url("/"), on_request = "budget" }))
    assert.matches("crawl%.run: on_item%[2%] must be a function %(got number%)",
      run_error({ start = h.url("/"), on_item = { function() end, 2 } }))
  end)

  it("allow given a string where a list is meant names allow.hosts", function()
    local err = run_error({ start = h.url("/"), allow = { hosts = "example.org" } })
    assert.matches("crawl%.run: allow%.hosts must be a list, as {\"example%.org\"} %(got string%)", err)
    assert.not_matches("%.lua:%d+:", err)
  end)

  it("allow.urls given a string names allow.urls", function()
    local err = run_error({ start = h.url("/"), allow = { urls = "/docs/" } })
    assert.matches("crawl%.run: allow%.urls must be a list", err)
  end)

  it("a host_key function that returns nil names host_key", function()
    local err = run_error({ start = h.url("/status/200"), host_key = function() end })
    assert.matches("host_key: the function returned nil for http://[^ ]+: it must return a string", err)
    assert.not_matches("crawl%.lua", err)
  end)
end)

describe("hook lists and drop reasons", function()
  it("runs a list of on_request hooks in order, each seeing the last one's request", function()
    local seen = {}
    local st = run({ start = h.url("/status/200"), on_request = {
      function(req) seen[#seen + 1] = "first"; req.meta = { tag = "one" } end,
      function(req) seen[#seen + 1] = "second:" .. req.meta.tag end,
    } })
    assert.same({ "first", "second:one" }, seen)
    assert.equal(1, st.pages)
  end)

  it("counts a request a hook dropped by the reason the hook gave", function()
    local n = 0
    local function budget(req)
      if req.depth > 0 then
        n = n + 1
        if n > 1 then return false, "budget" end
      end
    end
    local st = run({ start = h.url("/items?page=1"), on_request = { budget, function() end }, max_depth = 1 })
    assert.is_true(st.dropped > 0)
    assert.equal(st.dropped, st.dropped_why.budget)
    assert.matches("dropped %d+ %(budget: %d+%)", crawl.format_stats(st))
  end)

  it("counts a drop with no reason under on_request", function()
    local st = run({ start = h.url("/status/200"), on_request = function() return false end })
    assert.same({ on_request = 1 }, st.dropped_why)
  end)

  it("runs a list of on_item hooks in order", function()
    local items = {}
    run({ start = h.url("/status/200"), items = items,
      parse = function(page) page:emit({ n = 1 }) page:emit({ n = 2 }) end,
      on_item = { function(item) item.n = item.n * 10 end,
        function(item) if item.n > 10 then return false end end } })
    assert.same({ { n = 10 } }, items)
  end)
end)

describe("errors a policy can act on", function()
  it("on_error may queue the request again by returning it, and is given the crawler", function()
    local calls, crawler_given = 0, nil
    local st = run({ start = REFUSED, retries = 0, on_error = function(req, err, crawler)
      calls = calls + 1
      crawler_given = crawler
      assert.equal("connect", err.kind)
      if (req.requeues or 0) < 2 then return req end
    end })
    assert.equal(3, calls)
    assert.equal(3, st.requests)
    assert.equal(2, st.requeued)
    assert.is_table(crawler_given.stats)
  end)

  it("on_error may queue another request instead", function()
    local st = run({ start = REFUSED, retries = 0,
      on_error = function() return { url = h.url("/status/200?fallback") } end })
    assert.equal(1, st.pages)
    assert.equal(1, st.statuses[200])
  end)

  it("a request's errback is called instead of on_error", function()
    local by
    run({ start = { { url = REFUSED, errback = function(_, err) by = "errback:" .. err.kind end } }, retries = 0,
      on_error = function() by = "on_error" end })
    assert.equal("errback:connect", by)
  end)

  it("an errback may be a callback's name", function()
    local by
    run({ start = { { url = REFUSED, errback = "gone" } }, retries = 0,
      callbacks = { gone = function(req) by = req.url end } })
    assert.equal(REFUSED, by)
  end)

  it("an errback that is neither a function nor a name is refused, naming it", function()
    assert.matches("start: errback must be a function or the name of one",
      run_error({ start = { { url = REFUSED, errback = 3 } } }))
  end)

  it("counts the retries max_pages abandoned", function()
    local st = run({ start = h.url("/flaky/abandon" .. os.time() .. "?fail=5&status=503&retry_after=1"),
      max_pages = 1 })
    assert.equal("max_pages", st.stop_reason)
    assert.equal(1, st.retries_abandoned)
    assert.matches("1 retries abandoned", crawl.format_stats(st))
  end)
end)

describe("items", function()
  local function lines(path)
    local out = {}
    for line in io.lines(path) do out[#out + 1] = line end
    os.remove(path)
    return out
  end

  it("an output with where takes only the items that match it", function()
    local products, pages = h.tmpname(".jsonl"), h.tmpname(".jsonl")
    run({ start = h.url("/status/200"), parse = function(page)
      page:emit({ type = "product", name = "x" })
      page:emit({ type = "page", url = page.url })
    end, output = { { path = products, where = { type = "product" } },
      { path = pages, where = function(item) return item.type == "page" end } } })
    local p1 = lines(products)
    assert.equal(1, #p1)
    assert.same({ type = "product", name = "x" }, cjson.decode(p1[1]))
    local p = lines(pages)
    assert.equal(1, #p)
    assert.equal("page", cjson.decode(p[1]).type)
  end)

  it("a where that is neither a function nor a table is refused, naming the output", function()
    assert.matches("output \"x%.jsonl\": where must be a function",
      run_error({ start = h.url("/"), output = { path = "x.jsonl", where = "product" } }))
  end)

  it("writes JSON Lines keys in the order of fields, and an empty array as []", function()
    local path = h.tmpname(".jsonl")
    run({ start = h.url("/status/200"), fields = { "url", "tags", "name" }, output = path,
      parse = function(page) page:emit({ name = "n", tags = lc.json.array {}, url = page.url }) end })
    assert.same({ ('{"url":"%s","tags":[],"name":"n"}'):format(h.url("/status/200"):gsub("/", "\\/")) }, lines(path))
  end)
end)

describe("crawl.page with a spec", function()
  local spec = {
    start = "http://shop.test/", normalize = { strip = { "utm_source" } },
    on_request = function(req) if req.url:find("/a$") then return false, "not a" end end,
    on_item = function(item) item.seen = true end,
    parse = function(page)
      page:follow(page:css("a"), { meta = { from = page.url }, priority = 2, callback = "detail" })
      page:emit({ title = "t" })
    end,
  }

  it("applies the spec's normalize, on_request and on_item", function()
    local page = crawl.page({ url = "http://shop.test/", body = LISTING, spec = spec })
    spec.parse(page)
    assert.same({ "http://shop.test/b" }, page.followed)
    assert.equal("not a", page.dropped[1].why)
    assert.same({ { title = "t", seen = true } }, page.items)
  end)

  it("gives the full requests followed", function()
    local page = crawl.page({ url = "http://shop.test/", body = LISTING, spec = spec })
    spec.parse(page)
    local req = page.requests[1]
    assert.equal("http://shop.test/b", req.url)
    assert.same({ from = "http://shop.test/" }, req.meta)
    assert.equal(2, req.priority)
    assert.equal("detail", req.callback)
    assert.equal(1, req.depth)
  end)

  it("refuses a spec with a misspelled field, as crawl.run does", function()
    local ok, err = pcall(crawl.page, { url = "http://shop.test/", body = "", spec = { on_reqest = print } })
    assert.is_false(ok)
    assert.matches("unknown field 'on_reqest' %(did you mean 'on_request'%?%)", err)
  end)

  it("reads a body with no charset as UTF-8", function()
    local page = crawl.page({ url = "http://shop.test/", body = "<p>a \226\128\147 b</p>" })
    assert.equal("a \226\128\147 b", page:css1("p::text"))
  end)

  it("reads a body as the charset its headers give", function()
    local page = crawl.page({ url = "http://shop.test/", body = "<p>caf\233</p>",
      headers = { ["Content-Type"] = "text/html; charset=iso-8859-1" } })
    assert.equal("caf\195\169", page:css1("p::text"))
  end)
end)
