-- Per-host settings (spec.hosts, crawler:set_per_host, crawler:close_host), a delay
-- that caps a host at one request in flight, the headers merge and dedupe keys,
-- against the fixture server on a/b/c.crawl.test (127.0.0.2-4 through the test
-- dnsmasq), which counts each host's requests in flight (max_concurrent).
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

lc.configure({ dns_servers = h.dns_server })

local function log(host)
  return h.control("/__log" .. (host and ("?host=" .. host) or ""))
end

local function run(spec)
  spec.quiet, spec.progress, spec.signals = true, false, false
  if spec.robots == nil then spec.robots = false end
  return crawl.run(spec)
end

local function on(host, path)
  return h.url(path, host)
end

-- n URLs of host that each answer after `seconds`.
local function slow(host, n, seconds)
  local t = {}
  for i = 1, n do t[i] = on(host, ("/slow?delay=%s&i=%d"):format(seconds, i)) end
  return t
end

local function concat(a, b)
  local t = {}
  for _, x in ipairs(a) do t[#t + 1] = x end
  for _, x in ipairs(b) do t[#t + 1] = x end
  return t
end

local function max_in_flight(host)
  return log(host).max_concurrent[host]
end

-- The error crawl.run raises for spec, without its position.
local function refusal(spec)
  spec.start = spec.start or { on("a.crawl.test", "/status/200") }
  local ok, err = pcall(run, spec)
  assert.is_false(ok)
  return tostring(err)
end

describe("a delay", function()
  before_each(function() h.control("/__reset") end)

  it("keeps a host to one request in flight, whatever per_host says", function()
    -- per_host 4, a delay of 0.25 s and answers taking 0.6 s: without the cap, 3
    -- requests would be in flight at once.
    local st = run({ start = slow("a.crawl.test", 5, 0.6), per_host = 4, delay = 0.25 })
    assert.equal(5, st.pages)
    assert.equal(1, max_in_flight("a.crawl.test"))
  end)

  it("spaces a host's starts by at least the delay", function()
    run({ start = slow("a.crawl.test", 4, 0), per_host = 4, delay = 0.2 })
    local r = log("a.crawl.test").requests
    for i = 2, #r do assert.is_true(r[i].start - r[i - 1].start >= 0.2) end
  end)

  it("set by the throttle leaves per_host as it is", function()
    run({ start = slow("a.crawl.test", 6, 0.4), per_host = 3, throttle = { target = 3, min_delay = 0 } })
    assert.equal(3, max_in_flight("a.crawl.test"))
  end)
end)

describe("spec.hosts", function()
  before_each(function() h.control("/__reset") end)

  it("gives each host its own per_host, on the wire", function()
    run({
      start = concat(slow("a.crawl.test", 6, 0.4), slow("b.crawl.test", 6, 0.4)),
      per_host = 1, concurrency = 8,
      hosts = { ["a.crawl.test"] = { per_host = 3 } },
    })
    assert.equal(3, max_in_flight("a.crawl.test"))
    assert.equal(1, max_in_flight("b.crawl.test"))
  end)

  it("gives each host its own delay, which caps it at one in flight", function()
    run({
      start = concat(slow("a.crawl.test", 4, 0.4), slow("b.crawl.test", 4, 0.4)),
      per_host = 4,
      hosts = { ["a.crawl.test"] = { delay = 0.2 } },
    })
    assert.equal(1, max_in_flight("a.crawl.test"))
    assert.equal(4, max_in_flight("b.crawl.test"))
    local r = log("a.crawl.test").requests
    for i = 2, #r do assert.is_true(r[i].start - r[i - 1].start >= 0.2) end
  end)

  it("matches a host and its subdomains with a key \"*.domain\"", function()
    run({
      start = concat(slow("a.crawl.test", 4, 0.3), slow("b.crawl.test", 4, 0.3)),
      per_host = 1, allow = { hosts = { "crawl.test" } },
      hosts = { ["*.crawl.test"] = { per_host = 2 }, ["b.crawl.test"] = { per_host = 4 } },
    })
    assert.equal(2, max_in_flight("a.crawl.test"))
    assert.equal(4, max_in_flight("b.crawl.test")) -- the exact key wins
  end)

  it("stops a host at its own max_pages, counting what it dropped", function()
    local st = run({
      start = { on("a.crawl.test", "/hostsite/"), on("b.crawl.test", "/hostsite/") },
      hosts = { ["a.crawl.test"] = { max_pages = 5 } },
    })
    local a = 0
    for _, e in ipairs(log("a.crawl.test").requests) do
      if e.path ~= "/robots.txt" then a = a + 1 end
    end
    assert.equal(5, a)
    assert.equal(21, #log("b.crawl.test").requests)
    assert.is_true(st.host_closed.max_pages >= 1)
  end)

  it("sends a host's own headers over fetch.headers", function()
    local got = {}
    run({
      start = { on("a.crawl.test", "/echo"), on("b.crawl.test", "/echo") },
      fetch = { headers = { ["X-Crawl"] = "all", ["X-Site"] = "none" } },
      hosts = { ["a.crawl.test"] = { headers = { ["x-site"] = "a" } } },
      parse = function(page) got[page.request.key] = cjson.decode(page.body).headers end,
    })
    assert.equal("a", got["a.crawl.test"]["x-site"])
    assert.equal("all", got["a.crawl.test"]["x-crawl"])
    assert.equal("none", got["b.crawl.test"]["x-site"])
  end)

  it("normalizes a host's URLs by its own rules before the seen set", function()
    local st = run({
      start = {
        on("a.crawl.test", "/status/200?sid=1&x=1"), on("a.crawl.test", "/status/200?sid=2&x=1"),
        on("b.crawl.test", "/status/200?sid=1"), on("b.crawl.test", "/status/200?sid=2"),
      },
      allow = { hosts = { "crawl.test" } },
      hosts = { ["a.crawl.test"] = { normalize = { strip = { "sid" } } } },
    })
    assert.equal(3, st.pages)
    assert.equal(1, st.duplicates)
    assert.equal("/status/200?x=1", log("a.crawl.test").requests[1].path)
  end)

  it("refuses a misspelled setting, naming the host and the field", function()
    local err = refusal({ hosts = { ["a.crawl.test"] = { per_hots = 1 } } })
    assert.matches("hosts%[\"a.crawl.test\"%]", err)
    assert.matches("per_hots", err)
    assert.matches("did you mean 'per_host'", err, 1, true)
  end)

  it("refuses a setting out of range or of the wrong type", function()
    assert.matches("per_host", refusal({ hosts = { ["a.crawl.test"] = { per_host = 0 } } }))
    assert.matches("delay", refusal({ hosts = { ["a.crawl.test"] = { delay = "fast" } } }))
    assert.matches("must be a table of settings", refusal({ hosts = { ["a.crawl.test"] = 2 } }))
    assert.matches("hosts must be a table", refusal({ hosts = "a.crawl.test" }))
  end)
end)

describe("crawler hooks", function()
  before_each(function() h.control("/__reset") end)

  it("set_per_host changes a host's slots for the requests that follow", function()
    run({
      start = slow("a.crawl.test", 6, 0.4), per_host = 1, concurrency = 8,
      on_host = function(key, crawler) crawler:set_per_host(key, 3) end,
    })
    assert.equal(3, max_in_flight("a.crawl.test"))
  end)

  it("close_host drops a host's queue and refuses its new requests, counted by reason", function()
    local st = run({
      start = { on("a.crawl.test", "/hostsite/") },
      parse = function(page)
        if page.url:find("/p/2.html", 1, true) then page.crawler:close_host(page.request.key, "enough") end
        page:follow_links()
      end,
    })
    assert.equal(4, st.pages) -- the index, pages 0, 1 and 2
    assert.is_true(st.host_closed.enough >= 1)
  end)

  it("close_host refuses a reason that is not a string", function()
    local said
    run({
      start = { on("a.crawl.test", "/status/200") },
      parse = function(page) page.crawler:close_host(page.request.key, 42) end,
      on_error = function(_, err) said = err.message end,
    })
    assert.matches("close_host: reason must be a string", said, 1, true)
  end)
end)

describe("request headers", function()
  before_each(function() h.control("/__reset") end)

  local function echoed(req, fetch)
    local got
    run({
      start = { req }, fetch = fetch,
      parse = function(page) got = cjson.decode(page.body).headers end,
    })
    return got
  end

  it("merge over fetch.headers, the request's value winning per name in any case", function()
    local got = echoed({ url = on("a.crawl.test", "/echo"), headers = { ["x-one"] = "mine", ["X-Two"] = "2" } },
      { headers = { ["X-One"] = "crawl", ["X-Three"] = "3" } })
    assert.equal("mine", got["x-one"])
    assert.equal("2", got["x-two"])
    assert.equal("3", got["x-three"])
  end)

  it("drop a crawl header the request sets to false", function()
    local got = echoed({ url = on("a.crawl.test", "/echo"), headers = { ["x-one"] = false } },
      { headers = { ["X-One"] = "crawl", ["X-Three"] = "3" } })
    assert.is_nil(got["x-one"])
    assert.equal("3", got["x-three"])
  end)

  it("replace the crawl's with replace_headers", function()
    local got = echoed({ url = on("a.crawl.test", "/echo"), headers = { ["X-Two"] = "2" }, replace_headers = true },
      { headers = { ["X-One"] = "crawl" } })
    assert.is_nil(got["x-one"])
    assert.equal("2", got["x-two"])
  end)
end)

describe("dedupe_key", function()
  before_each(function() h.control("/__reset") end)

  -- The key of /item/N?... is N: the query does not make another item.
  local function item_key(url)
    return url:match("/item/(%d+)") or url
  end

  it("fetches one URL per key, counting the rest as duplicates", function()
    local st = run({
      start = {
        on("a.crawl.test", "/item/1?from=a"), on("a.crawl.test", "/item/1?from=b"),
        on("a.crawl.test", "/item/2?from=a"),
      },
      dedupe_key = function(url) return item_key(url) end,
    })
    assert.equal(2, st.pages)
    assert.equal(1, st.duplicates)
    assert.equal(0, st.dropped)
  end)

  it("is given the request", function()
    local st = run({
      start = {
        { url = on("a.crawl.test", "/status/200?a"), meta = { id = 7 } },
        { url = on("a.crawl.test", "/status/200?b"), meta = { id = 7 } },
        { url = on("a.crawl.test", "/status/200?c"), meta = { id = 8 } },
      },
      dedupe_key = function(_, req) return "id:" .. req.meta.id end,
    })
    assert.equal(2, st.pages)
    assert.equal(1, st.duplicates)
  end)

  it("of a request's own replaces its URL in the seen set", function()
    local st = run({
      start = {
        { url = on("a.crawl.test", "/status/200?a"), dedupe_key = "same" },
        { url = on("a.crawl.test", "/status/200?b"), dedupe_key = "same" },
        on("a.crawl.test", "/status/200?c"), on("a.crawl.test", "/status/200?c"),
      },
    })
    assert.equal(2, st.pages)
    assert.equal(2, st.duplicates)
  end)

  it("applies to the links a page follows", function()
    local st = run({
      start = { on("a.crawl.test", "/hostsite/") },
      -- Every page of the site has one key: the index and one page are fetched.
      dedupe_key = function(url) return url:find("/p/", 1, true) and "page" or url end,
    })
    assert.equal(2, st.pages)
    assert.is_true(st.duplicates >= 1)
  end)

  it("that returns no string is an error naming dedupe_key", function()
    local said
    local st = run({
      start = { on("a.crawl.test", "/hostsite/") },
      dedupe_key = function(url) if url:find("/p/", 1, true) then return nil end return url end,
      on_error = function(_, err) said = err.message end,
    })
    assert.equal(1, st.pages)
    assert.matches("dedupe_key must return a string (got nil", said, 1, true)
  end)

  it("must be a function", function()
    assert.matches("dedupe_key must be a function", refusal({ dedupe_key = "url" }))
  end)
end)

describe("dedupe_key with a state", function()
  before_each(function() h.control("/__reset") end)

  local function item_key(url)
    return url:match("/item/(%d+)") or url
  end

  local function run_state(state, urls, max_pages)
    return run({
      start = function(add) for _, u in ipairs(urls) do add(u) end end,
      state = state, max_pages = max_pages, concurrency = 1, per_host = 1,
      dedupe_key = function(url) return item_key(url) end,
    })
  end

  it("keeps the keys of pages done and queued for the next run", function()
    local state = h.tmpname(".db")
    local first = run_state(state, { on("a.crawl.test", "/item/1?from=a"), on("a.crawl.test", "/item/2?from=a") }, 1)
    assert.equal(1, first.pages)
    local st = run_state(state, {
      on("a.crawl.test", "/item/1?from=b"), on("a.crawl.test", "/item/2?from=b"), on("a.crawl.test", "/item/3"),
    })
    assert.equal(2, st.pages) -- /item/2?from=a, queued by the first run, and /item/3
    assert.equal(2, st.duplicates)
    local paths = {}
    for _, e in ipairs(log("a.crawl.test").requests) do paths[#paths + 1] = e.path end
    assert.same({ "/item/1?from=a", "/item/2?from=a", "/item/3" }, paths)
  end)
end)

describe("set_per_host and close_host with a state", function()
  before_each(function() h.control("/__reset") end)

  it("set_per_host is kept: the resumed crawl gives the host the slots a hook set", function()
    local state = h.tmpname(".db")
    local spec = { start = slow("a.crawl.test", 8, 0.4), per_host = 1, concurrency = 8, state = state }
    local first = {}
    for k, v in pairs(spec) do first[k] = v end
    first.max_pages = 1
    first.parse = function(page) page.crawler:set_per_host(page.request.key, 3) end
    assert.equal(1, run(first).pages)
    local st = run(spec)
    assert.equal(7, st.pages)
    assert.equal(3, max_in_flight("a.crawl.test"))
  end)

  it("close_host is kept: the resumed crawl refuses the host's requests", function()
    local state = h.tmpname(".db")
    local spec = { start = { on("b.crawl.test", "/hostsite/") }, allow = { hosts = { "crawl.test" } }, state = state }
    local first = {}
    for k, v in pairs(spec) do first[k] = v end
    first.max_pages = 1
    first.parse = function(page)
      page.crawler:close_host("a.crawl.test", "enough")
      page:follow_links()
    end
    run(first)
    -- b's page 0 links to a's site: refused, as the first run closed a.
    local st = run(spec)
    local a = 0
    for _, e in ipairs(log("a.crawl.test").requests) do
      if e.path ~= "/robots.txt" then a = a + 1 end
    end
    assert.equal(0, a)
    assert.equal(41, st.pages) -- b's 20 pages (its index was the first run's) and c's 21
    assert.is_true(st.host_closed.enough >= 1)
  end)
end)
