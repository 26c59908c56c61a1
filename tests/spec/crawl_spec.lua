-- luacrawl.crawl against the fixture server on several hosts (a/b/c.crawl.test are
-- 127.0.0.2-4 through the test dnsmasq). The server logs every request it serves.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

lc.configure({ dns_servers = h.dns_server })

local control = h.control

local function reset()
  control("/__reset")
end

local function set_robots(host, text, status)
  control(("/__robots?host=%s&status=%d"):format(host, status or 200), { method = "POST", body = text })
end

local function log(host)
  return control("/__log" .. (host and ("?host=" .. host) or ""))
end

local function paths(entries)
  local out = {}
  for _, e in ipairs(entries) do out[#out + 1] = e.path end
  return out
end

local function run(spec)
  spec.quiet = spec.quiet ~= false
  spec.progress = false
  spec.signals = false
  return crawl.run(spec)
end

local function on(host, path)
  return h.url(path, host)
end

describe("crawl.run", function()
  before_each(reset)

  it("crawls a site from its start URL, following links on the start host only", function()
    local st = run({ start = { on("a.crawl.test", "/hostsite/") } })
    assert.equal(21, st.pages) -- /hostsite/ and its 20 pages
    for _, e in ipairs(log().requests) do assert.equal("a.crawl.test", e.host) end
    assert.equal(2, st.out_of_scope) -- page 0's links to b and c
  end)

  it("follows other hosts when allowed", function()
    local st = run({ start = { on("a.crawl.test", "/hostsite/") }, allow = { hosts = { "crawl.test" } } })
    assert.equal(63, st.pages)
    local hosts = log().max_concurrent
    assert.is_truthy(hosts["b.crawl.test"] and hosts["c.crawl.test"])
  end)

  it("never has more than per_host requests of a host in flight", function()
    local start = {}
    for i = 1, 12 do start[i] = on("a.crawl.test", "/slow?delay=0.3&i=" .. i) end
    run({ start = start, per_host = 2, concurrency = 12 })
    assert.equal(2, log("a.crawl.test").max_concurrent["a.crawl.test"])
  end)

  it("runs hosts in parallel up to the global concurrency", function()
    local start = {}
    for i = 1, 6 do
      start[#start + 1] = on("a.crawl.test", "/slow?delay=0.4&i=" .. i)
      start[#start + 1] = on("b.crawl.test", "/slow?delay=0.4&i=" .. i)
    end
    local st = run({ start = start, per_host = 3, concurrency = 6 })
    assert.equal(12, st.pages)
    local l = log()
    assert.equal(3, l.max_concurrent["a.crawl.test"])
    assert.equal(3, l.max_concurrent["b.crawl.test"])
  end)

  local function gaps(entries)
    local g = {}
    for i = 2, #entries do g[#g + 1] = entries[i].start - entries[i - 1].start end
    return g
  end

  it("leaves at least `delay` between requests to a host", function()
    local start = {}
    for i = 1, 5 do start[i] = on("b.crawl.test", "/status/200?i=" .. i) end
    run({ start = start, delay = 0.3, robots = false })
    local entries = log("b.crawl.test").requests
    assert.equal(5, #entries)
    for _, gap in ipairs(gaps(entries)) do assert.is_true(gap >= 0.3, "gap " .. gap) end
  end)

  it("honours Crawl-delay from robots.txt", function()
    set_robots("c.crawl.test", "User-agent: *\nCrawl-delay: 0.4\n")
    local start = {}
    for i = 1, 4 do start[i] = on("c.crawl.test", "/status/200?i=" .. i) end
    run({ start = start })
    local entries = log("c.crawl.test").requests
    assert.equal("/robots.txt", entries[1].path)
    table.remove(entries, 1)
    assert.equal(4, #entries)
    for _, gap in ipairs(gaps(entries)) do assert.is_true(gap >= 0.4, "gap " .. gap) end
  end)

  it("caps Crawl-delay at max_delay", function()
    set_robots("c.crawl.test", "User-agent: *\nCrawl-delay: 3600\n")
    local t0 = lc.run(lc.now)
    run({ start = { on("c.crawl.test", "/status/200?a"), on("c.crawl.test", "/status/200?b") }, max_delay = 0.2 })
    assert.is_true(lc.run(lc.now) - t0 < 5)
  end)

  it("never requests paths robots.txt disallows", function()
    set_robots("a.crawl.test", "User-agent: *\nDisallow: /hostsite/p/1\nDisallow: /private/\n")
    local st = run({ start = { on("a.crawl.test", "/hostsite/"), on("a.crawl.test", "/private/x") } })
    for _, p in ipairs(paths(log("a.crawl.test").requests)) do
      assert.is_nil(p:find("^/hostsite/p/1"), p)
      assert.is_nil(p:find("^/private/"), p)
    end
    assert.is_true(st.robots_denied >= 2)
  end)

  it("obeys the group for its own user agent", function()
    set_robots("a.crawl.test", "User-agent: speccrawler\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
    local st = run({ start = { on("a.crawl.test", "/hostsite/") }, user_agent = "SpecCrawler/1.0 (+http://x)" })
    assert.equal(0, st.pages)
    assert.equal(1, st.robots_denied)
  end)

  it("fetches robots.txt once per host", function()
    run({ start = { on("a.crawl.test", "/hostsite/") } })
    local n = 0
    for _, p in ipairs(paths(log("a.crawl.test").requests)) do if p == "/robots.txt" then n = n + 1 end end
    assert.equal(1, n)
  end)

  it("treats a 5xx robots.txt as disallow all, an error that names the cause", function()
    set_robots("b.crawl.test", "oops", 503)
    local st = run({ start = { on("b.crawl.test", "/hostsite/") } })
    assert.same({ "/robots.txt" }, paths(log("b.crawl.test").requests))
    assert.equal(0, st.pages)
    assert.equal(0, st.robots_denied)
    assert.equal(1, st.errors.robots_unreachable)
    assert.matches("HTTP status 503", next(st.robots_unreachable) and select(2, next(st.robots_unreachable)))
  end)

  it("treats a 404 robots.txt as allow all", function()
    set_robots("b.crawl.test", "nothing here", 404)
    local st = run({ start = { on("b.crawl.test", "/private/x") } })
    assert.equal(1, st.pages)
  end)

  it("ignores robots.txt when robots = false", function()
    set_robots("b.crawl.test", "User-agent: *\nDisallow: /\n")
    local st = run({ start = { on("b.crawl.test", "/private/x") }, robots = false })
    assert.equal(1, st.pages)
    assert.same({ "/private/x" }, paths(log("b.crawl.test").requests))
  end)

  it("retries 503 with backoff and honours Retry-After", function()
    local st = run({ start = { on("a.crawl.test", "/flaky/r1?fail=2&status=503&retry_after=1") }, robots = false })
    local entries = log("a.crawl.test").requests
    assert.equal(3, #entries)
    assert.equal(2, st.retries)
    assert.equal(1, st.pages)
    assert.is_true(entries[2].start - entries[1].start >= 1)
  end)

  it("gives up after `retries` and counts the final status", function()
    local st = run({ start = { on("a.crawl.test", "/flaky/r2?fail=10&status=500") }, robots = false, retries = 1 })
    assert.equal(2, #log("a.crawl.test").requests)
    assert.equal(1, st.statuses[500] and 1 or 0)
  end)

  it("retries timeouts and connection errors", function()
    local st = run({ start = { "http://127.0.0.1:1/" }, robots = false, retries = 2 })
    assert.equal(2, st.retries)
    assert.equal(1, st.errors.connect)
  end)

  it("puts a host answering 503 in backoff while other hosts go on", function()
    local start = {}
    for i = 1, 4 do start[#start + 1] = on("a.crawl.test", "/flaky/b" .. i .. "?fail=100&status=503&retry_after=3") end
    for i = 1, 10 do start[#start + 1] = on("b.crawl.test", "/slow?delay=0.05&i=" .. i) end
    local st = run({ start = start, robots = false, per_host = 2, retries = 1, allow = { hosts = { "crawl.test" } } })
    assert.is_true(st.host_backoffs >= 1)
    -- Every page of b was asked for while a waited out its backoff: before a's
    -- first retry.
    local a_starts, last_b = {}, 0
    for _, e in ipairs(log().requests) do
      if e.host == "a.crawl.test" then a_starts[#a_starts + 1] = e.start end
      if e.host == "b.crawl.test" then last_b = math.max(last_b, e.start) end
    end
    assert.equal(8, #a_starts) -- four requests, each retried once
    table.sort(a_starts)
    assert.is_true(last_b < a_starts[5])
    assert.is_true(a_starts[5] - a_starts[1] >= 3)
  end)

  it("follows redirect chains through the scheduler, deduplicating targets", function()
    local st = run({ start = { on("a.crawl.test", "/redirect/3"), on("a.crawl.test", "/redirect/1") }, robots = false })
    -- /redirect/1 is asked once though both chains reach it, /redirect/0 once.
    local p = paths(log("a.crawl.test").requests)
    table.sort(p)
    assert.same({ "/redirect/0", "/redirect/1", "/redirect/2", "/redirect/3" }, p)
    assert.equal(3, st.redirects)
  end)

  it("ends redirect loops", function()
    local st = run({ start = { on("a.crawl.test", "/loop/a") }, robots = false })
    assert.equal(2, #log("a.crawl.test").requests)
    assert.equal(2, st.redirects)
  end)

  it("stops chains at max_redirect", function()
    local st = run({ start = { on("a.crawl.test", "/redirect/30") }, robots = false, max_redirect = 4 })
    assert.equal(5, #log("a.crawl.test").requests)
    assert.equal(1, st.redirect_limit)
  end)

  it("follows a cross-host redirect only into scope", function()
    local target = on("b.crawl.test", "/status/200")
    local st = run({ start = { on("a.crawl.test", "/redirect-to?url=" .. target) }, robots = false })
    assert.equal(0, #log("b.crawl.test").requests)
    assert.equal(1, st.out_of_scope)
    run({ start = { on("a.crawl.test", "/redirect-to?url=" .. target .. "&x=1") }, robots = false,
      allow = { hosts = { "a.crawl.test", "b.crawl.test" } } })
    assert.equal(1, #log("b.crawl.test").requests)
  end)

  it("refuses redirects to other schemes", function()
    local st = run({ start = { on("a.crawl.test", "/redirect-to?url=file:///etc/passwd") }, robots = false })
    assert.equal(1, st.errors.invalid_url)
  end)

  it("fetches each URL once, however often it is linked", function()
    local st = run({ start = { on("a.crawl.test", "/site/") }, max_depth = 3, robots = false })
    local p = paths(log("a.crawl.test").requests)
    local seen = {}
    for _, x in ipairs(p) do
      assert.is_nil(seen[x], x)
      seen[x] = true
    end
    assert.is_true(st.duplicates > 0)
  end)

  it("stops at max_depth", function()
    run({ start = { on("a.crawl.test", "/site/") }, max_depth = 2, robots = false })
    local want = control("/site/manifest.json?depth=2")
    local got = paths(log("a.crawl.test").requests)
    table.sort(want)
    table.sort(got)
    assert.same(want, got)
  end)

  it("stops at max_pages", function()
    local st = run({ start = { on("a.crawl.test", "/pagelinks?n=50") }, max_pages = 7, robots = false })
    assert.equal(7, #log("a.crawl.test").requests)
    assert.equal("max_pages", st.stop_reason)
  end)

  it("stops scheduling at max_time", function()
    local start = {}
    for i = 1, 20 do start[i] = on("a.crawl.test", "/slow?delay=0.2&i=" .. i) end
    local st = run({ start = start, max_time = 0.3, per_host = 1, robots = false })
    assert.equal("max_time", st.stop_reason)
    assert.is_true(st.pages < 20)
  end)

  it("gives a host max_host_time seconds from its first request", function()
    local start = {}
    for i = 1, 10 do start[i] = on("a.crawl.test", "/slow?delay=0.2&i=" .. i) end
    start[#start + 1] = on("b.crawl.test", "/status/200")
    local st = run({ start = start, robots = false, per_host = 1, max_host_time = 0.5,
      allow = { hosts = { "crawl.test" } } })
    assert.is_true(st.pages < 10)
    assert.is_true(st.host_time_exceeded > 0)
    assert.equal(1, #log("b.crawl.test").requests)
  end)

  it("filters with allow and deny regular expressions", function()
    local st = run({ start = { on("a.crawl.test", "/site/") }, robots = false, max_depth = 3,
      deny = { urls = { "/p/[0-9]*[13579]\\.html$" } } })
    for _, p in ipairs(paths(log("a.crawl.test").requests)) do
      assert.is_nil(p:find("[13579]%.html$"), p)
    end
    assert.is_true(st.pages > 1)
  end)

  it("counts and fetches the same whether page:follow checks the scope in C or in Lua, and from a link set", function()
    -- Scopes of hosts alone are checked by the filter in C; the same scope as a
    -- function, or with a deny, is asked in Lua (Crawler:in_scope).
    local keys = { "pages", "requests", "duplicates", "out_of_scope", "too_deep", "invalid_urls", "robots_denied" }
    local function crawl_with(spec)
      reset()
      spec.robots = false
      local fetched = {}
      spec.on_response = function(page) fetched[#fetched + 1] = page.url end
      local st = run(spec)
      table.sort(fetched)
      local counts = {}
      for _, k in ipairs(keys) do counts[k] = st[k] end
      return counts, fetched
    end
    local start = { on("a.crawl.test", "/hostsite/") }
    local a_host = lc.url.host(start[1])
    local cases = {
      { {}, { allow = function(url) return lc.url.host(url) == a_host end } },
      { { allow = { hosts = { "crawl.test" } } },
        { allow = function(url) local host = lc.url.host(url) return host:sub(-11) == ".crawl.test" end } },
      { { span_hosts = true, max_depth = 1 }, { span_hosts = true, max_depth = 1, deny = function() return false end } },
      { { max_depth = 1, normalize = { sort_query = true } },
        { max_depth = 1, normalize = { sort_query = true }, allow = function(url) return lc.url.host(url) == a_host end } },
    }
    -- The default parse follows the page's link set (page:follow_links); a parse
    -- that follows the list of its links must come to the same.
    local function follow_list(page) page:follow(page:links()) end
    cases[#cases + 1] = { {}, { parse = follow_list } }
    cases[#cases + 1] = { { span_hosts = true, max_depth = 1 }, { span_hosts = true, max_depth = 1, parse = follow_list } }
    local dups = 0
    for _, case in ipairs(cases) do
      case[1].start, case[2].start = start, start
      local c1, f1 = crawl_with(case[1])
      local c2, f2 = crawl_with(case[2])
      assert.same(c2, c1)
      assert.same(f2, f1)
      assert.is_true(c1.pages > 1)
      dups = dups + c1.duplicates
    end
    assert.is_true(dups > 0)
  end)

  it("with free_bodies, frees each page's body once the page is handled", function()
    local pages = {}
    local st = run({ start = { on("a.crawl.test", "/hostsite/") }, robots = false, max_depth = 1, free_bodies = true,
      parse = function(page)
        assert.is_true(#page:links() > 0) -- the document is there while parse runs
        pages[#pages + 1] = page
        page:follow_links()
      end,
    })
    assert.is_true(st.pages > 1)
    assert.equal(st.pages, #pages)
    local ok, err = pcall(function() return pages[#pages].response.body end)
    assert.is_false(ok)
    assert.matches("after res:release", err)
  end)

  it("makes page.body only when it is read", function()
    local raw, read, meta = {}, {}, {}
    run({ start = { on("a.crawl.test", "/hostsite/") }, robots = false, max_depth = 0,
      parse = function(page)
        raw[#raw + 1] = rawget(page, "body") == nil
        read[#read + 1] = page.body
        meta[#meta + 1] = type(page.meta)
      end })
    assert.same({ true }, raw)
    assert.is_true(#read[1] > 0 and read[1]:find("<html", 1, true) ~= nil)
    assert.same({ "table" }, meta)
  end)

  it("makes page.headers only when it is read, and writes a page record without them", function()
    local raw, ct, res_raw = {}, {}, {}
    run({ start = { on("a.crawl.test", "/hostsite/") }, robots = false, max_depth = 0,
      parse = function(page)
        raw[#raw + 1] = rawget(page, "headers") == nil
        res_raw[#res_raw + 1] = rawget(page.response, "headers") == nil
        ct[#ct + 1] = page.headers["Content-Type"]
        assert.equal(page.headers, page.response.headers)
      end })
    assert.same({ true }, raw)
    assert.same({ true }, res_raw)
    assert.matches("text/html", ct[1])
    local items = {}
    run({ start = { on("a.crawl.test", "/hostsite/") }, robots = false, max_depth = 0, items = items,
      fields = { "url", "content_type", "elapsed" },
      on_response = function(page)
        assert.is_nil(rawget(page, "headers"))
      end,
      on_item = function(item, page)
        assert.is_nil(rawget(page.response, "headers"))
        assert.is_nil(rawget(page.response, "time"))
        return item
      end })
    assert.equal(1, #items)
    assert.matches("text/html", items[1].content_type)
    assert.is_true(items[1].elapsed > 0)
  end)

  it("filters with a Lua function", function()
    run({ start = { on("a.crawl.test", "/hostsite/") }, robots = false,
      allow = function(url) return not url:find("p/1") end })
    for _, p in ipairs(paths(log("a.crawl.test").requests)) do assert.is_nil(p:find("p/1"), p) end
  end)

  it("passes pages to parse with css, links, follow, meta and emit", function()
    local items = {}
    run({
      start = { on("a.crawl.test", "/items?page=1") }, robots = false, items = items,
      parse = function(page)
        for _, div in ipairs(page:css("div.item")) do
          page:follow(div:css1("a.detail"), { callback = function(detail)
            detail:emit({ name = detail:css1("h1::text"), desc = detail:css1("p.desc::text"),
              price = detail.meta.price, from = detail.referrer })
          end, meta = { price = tonumber(div:css1("span.price::text")) } })
        end
        page:follow(page:css("a.next"))
      end,
    })
    assert.equal(50, #items)
    table.sort(items, function(a, b) return a.price < b.price end)
    assert.same({ name = "Item 1", desc = "Description of item 1", price = 1.99,
      from = on("a.crawl.test", "/items?page=1") }, items[1])
  end)

  it("starts from a function that adds requests", function()
    local st = run({
      start = function(add)
        local res = lc.fetch(on("a.crawl.test", "/json"))
        for _, i in ipairs(cjson.decode(res.body).items) do add(on("a.crawl.test", "/site/p/" .. i .. ".html")) end
      end,
      robots = false, max_depth = 0,
    })
    assert.equal(3, st.pages)
  end)

  it("lets hooks change and drop requests and items", function()
    local items = {}
    local st = run({
      start = { on("a.crawl.test", "/pagelinks?n=10") }, robots = false, items = items, max_depth = 1,
      on_request = function(req) if req.url:find("/p/3.html", 1, true) then return false end end,
      parse = function(page) page:follow(page:links()); page:emit({ url = page.url }) end,
      on_item = function(item) if item.url:find("p/5") then return false end; item.seen = true end,
    })
    assert.equal(10, st.pages) -- the listing and nine of its ten links
    assert.equal(9, #items)
    for _, it in ipairs(items) do assert.is_true(it.seen) end
    assert.equal(1, st.dropped)
  end)

  it("reports errors to on_error and counts them by kind", function()
    local errs = {}
    local st = run({ start = { "http://nope.crawl.test/" }, robots = false,
      on_error = function(req, err) errs[#errs + 1] = err.kind end })
    assert.same({ "dns" }, errs)
    assert.equal(1, st.errors.dns)
  end)

  it("counts an error in parse and goes on", function()
    local st = run({ start = { on("a.crawl.test", "/pagelinks?n=3") }, robots = false, max_depth = 1,
      parse = function(page)
        if page.url:find("p/1") then error("parse failure expected by the test") end
        page:follow(page:links())
      end })
    assert.equal(1, st.parse_errors)
    assert.equal(4, st.pages)
  end)

  it("runs requests in at most `concurrency` worker tasks, which outlive errors in parse", function()
    local tasks, before = {}, nil
    local st = lc.run(function()
      before = lc.stats().tasks_spawned
      return crawl.run({ start = { on("a.crawl.test", "/pagelinks?n=20") }, robots = false, max_depth = 1,
        concurrency = 3, per_host = 3, quiet = true, progress = false, signals = false,
        parse = function(page)
          tasks[lc.current()] = true
          page:follow(page:links())
          if page.depth == 1 then error("parse failure expected by the test") end
        end })
    end)
    local n = 0
    for _ in pairs(tasks) do n = n + 1 end
    assert.equal(21, st.pages)
    assert.equal(20, st.parse_errors)
    assert.is_true(n <= 3)
    -- The workers, and one task per output flusher: none per request.
    assert.is_true(lc.stats().tasks_spawned - before <= 3 + 1)
  end)

  it("writes JSON Lines and CSV outputs that parse back", function()
    local jsonl, csv = h.tmpname(".jsonl"), h.tmpname(".csv")
    run({ start = { on("a.crawl.test", "/items?page=1") }, robots = false, output = { jsonl, csv },
      parse = function(page)
        for _, div in ipairs(page:css("div.item")) do
          page:emit({ name = div:css1(".name::text"), price = div:css1(".price::text"), note = 'a "quoted", text' })
        end
      end })
    local n = 0
    for line in io.lines(jsonl) do
      local item = cjson.decode(line)
      assert.matches("^Item %d+$", item.name)
      n = n + 1
    end
    assert.equal(10, n)
    local f = io.open(csv)
    local text = f:read("*a")
    f:close()
    local lines = {}
    for line in text:gmatch("[^\r\n]+") do lines[#lines + 1] = line end
    assert.equal("name,note,price", lines[1])
    assert.equal('Item 1,"a ""quoted"", text",1.99', lines[2])
    assert.equal(11, #lines)
    os.remove(jsonl)
    os.remove(csv)
  end)

  it("counts output errors and goes on", function()
    local st = run({ start = { on("a.crawl.test", "/pagelinks?n=5") }, robots = false, max_depth = 1,
      output = function() return nil, "disk full" end,
      parse = function(page) page:follow(page:links()); page:emit({ url = page.url }) end })
    assert.equal(6, st.pages)
    assert.equal(6, st.output_errors)
  end)

  it("an output on a full disk reports the error when flushed", function()
    local out = require("luacrawl.export").open({ path = "/dev/full", format = "jsonl" })
    assert.is_true(out:write({ a = 1 }))
    local ok, err = out:close()
    assert.is_nil(ok)
    assert.matches("No space left", err)
  end)

  it("returns stats and writes them as JSON", function()
    local path = h.tmpname()
    local st = run({ start = { on("a.crawl.test", "/hostsite/") }, stats_json = path })
    local f = io.open(path)
    local saved = cjson.decode(f:read("*a"))
    f:close()
    os.remove(path)
    assert.equal(st.pages, saved.pages)
    assert.equal(21, saved.statuses["200"])
    for _, k in ipairs({ "bytes", "retries", "robots_denied", "duplicates", "pages_per_s", "elapsed" }) do
      assert.is_number(saved[k], k)
    end
  end)

  it("adapts each host's delay to its latency with throttle", function()
    local start = {}
    for i = 1, 4 do start[i] = on("a.crawl.test", "/slow?delay=0.2&i=" .. i) end
    local c = crawl.new({ start = start, robots = false, quiet = true, progress = false, signals = false,
      throttle = { target = 1.0, max_delay = 5 } })
    lc.run(function() c:run() end)
    local d = c.frontier:delay_of("a.crawl.test")
    assert.is_true(d > 0.05 and d <= 5, "delay " .. d)
  end)

  it("raises on a spec without start", function()
    assert.has_error(function() crawl.run({}) end)
  end)
end)
