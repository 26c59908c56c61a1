-- fixtures: --http --redis
-- ways: one
-- Rendering in the crawl framework: spec render (true, a function, {urls =}),
-- luacrawl crawl --render and --render-match, over the fixture's JavaScript site
-- (/js/home: a link to /js/landed in its HTML, one to /js/list its script adds; /js/list
-- inserts links to /js/item/0..2 by script). Every crawl here starts a browser, so the
-- spec runs once.
local h = require "spec_helper"
local cjson = require "cjson"
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"

local bin = h.luacrawl_bin

-- The paths of the records luacrawl crawl wrote, as a set.
local function crawled(args)
  local code, out, err = h.sh(bin .. " crawl -q --fields url " .. args)
  assert.equal(0, code, err)
  local got = {}
  for line in out:gmatch("[^\n]+") do got[cjson.decode(line).url:match("^http://[^/]+(/.*)$")] = true end
  return got
end

local function set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local SERVED = { "/js/home", "/js/landed" }
local ALL = { "/js/home", "/js/landed", "/js/list", "/js/item/0", "/js/item/1", "/js/item/2" }

-- crawl.run of spec (quiet) in a run of its own: {path = rendered} of each page parsed.
local function run(spec)
  local pages = {}
  spec.quiet = true
  spec.parse = spec.parse or function(page)
    pages[page.url:match("^http://[^/]+(/.*)$")] = page.response.rendered == true
    crawl.follow_links(page)
  end
  local st = lc.run(crawl.run, spec)
  return pages, st
end

describe("crawl with render", function()
  it("luacrawl crawl --render finds the pages that only scripts link to", function()
    assert.same(set(ALL), crawled("--render " .. h.url("/js/home")))
  end)

  it("luacrawl crawl without --render finds only the links of the server's HTML", function()
    assert.same(set(SERVED), crawled(h.url("/js/home")))
  end)

  it("--render-match renders only the URLs that match: /js/list is fetched, its items never found", function()
    assert.same(set({ "/js/home", "/js/landed", "/js/list" }), crawled("--render-match '/js/home$' " .. h.url("/js/home")))
  end)

  it("render = function(request) renders the requests it says yes to", function()
    local pages = run({ start = { h.url("/js/home"), h.url("/js/list") },
      render = function(req) return req.url:find("/js/list", 1, true) ~= nil end })
    assert.same({ ["/js/home"] = false, ["/js/landed"] = false, ["/js/list"] = true,
      ["/js/item/0"] = false, ["/js/item/1"] = false, ["/js/item/2"] = false }, pages)
  end)

  it("render = {urls = {...}} renders the URLs a pattern matches, as --render-match", function()
    local pages = run({ start = h.url("/js/home"), render = { urls = { "/js/(home|list)$" } } })
    assert.same({ ["/js/home"] = true, ["/js/landed"] = false, ["/js/list"] = true,
      ["/js/item/0"] = false, ["/js/item/1"] = false, ["/js/item/2"] = false }, pages)
  end)

  it("hosts[KEY].render = true renders that host's pages, with no render of the spec's", function()
    local pages = run({ start = h.url("/js/home"), max_depth = 0, hosts = { ["127.0.0.1"] = { render = true } } })
    assert.same({ ["/js/home"] = true }, pages)
  end)

  it("hosts[KEY].render = false fetches that host's pages, whatever the spec's render says", function()
    local pages, st = run({ start = h.url("/js/home"), render = true, hosts = { ["127.0.0.1"] = { render = false } } })
    assert.same({ ["/js/home"] = false, ["/js/landed"] = false }, pages)
    assert.is_nil(st.rendered)
  end)

  it("a resumed crawl with --state renders the pages left for it", function()
    local state = h.tmpname(".db")
    local first = crawled("--render -n 1 --state " .. state .. " " .. h.url("/js/home"))
    assert.same(set({ "/js/home" }), first)
    local rest = crawled("--render --state " .. state .. " " .. h.url("/js/home"))
    assert.same(set({ "/js/landed", "/js/list", "/js/item/0", "/js/item/1", "/js/item/2" }), rest)
  end)

  -- The crawl's cookie jar and a rendered page: /cookies/set (fetched) sets pre=1 and
  -- links to /js/cookies (rendered), which links to /cookies/show?seen=<document.cookie>
  -- (fetched) after setting js=2 by script. The /cookies/show requests the server saw,
  -- as "path cookie" with the cookie header's pairs sorted.
  local function cookies_shown(args)
    h.control("/__reset")
    crawled(args .. " --render-match '/js/' '" .. h.url("/cookies/set?c=pre%3D1%3B%20Path%3D%2F&next=%2Fjs%2Fcookies") .. "'")
    local out = {}
    for _, e in ipairs(h.control("/__log").requests) do
      if e.path:find("^/cookies/show") then
        local pairs_ = {}
        for p in tostring(e.cookie ~= cjson.null and e.cookie or ""):gmatch("[^; ]+") do pairs_[#pairs_ + 1] = p end
        table.sort(pairs_)
        out[#out + 1] = e.path .. " " .. table.concat(pairs_, "; ")
      end
    end
    return out
  end

  it("a rendered page sees the crawl's cookies, and those its script sets go to the jar for the next fetch", function()
    assert.same({ "/cookies/show?seen=pre%3D1 js=2; pre=1" }, cookies_shown(""))
  end)

  it("with --no-cookies a rendered page gets no cookie and gives none back", function()
    assert.same({ "/cookies/show?seen= " }, cookies_shown("--no-cookies"))
  end)

  -- The server's log of the requests but robots.txt, in start order.
  local function js_log()
    local out = {}
    for _, e in ipairs(h.control("/__log").requests) do
      if e.path ~= "/robots.txt" then out[#out + 1] = e end
    end
    return out
  end

  it("every request of a rendered page says the crawl's User-Agent, and its document the crawl's fetch.headers", function()
    h.control("/__reset")
    local echoed
    -- A redirect to /echo (the document's headers as JSON in the DOM), and /js/list
    -- (its sub-request for /js/items.json).
    run({ start = { h.url("/redirect-to?url=/echo"), h.url("/js/list") }, render = true, max_depth = 0,
      user_agent = "specbot/1.0 (+render)", fetch = { headers = { ["X-Crawl"] = "render", ["Accept-Language"] = "fr" } },
      parse = function(page)
        if page.url:find("/echo", 1, true) then echoed = cjson.decode(page:css("pre")[1]:text()).headers end
      end })
    local seen = {}
    for _, e in ipairs(js_log()) do seen[#seen + 1] = e.path .. " " .. tostring(e.ua) end
    table.sort(seen)
    assert.same({ "/echo specbot/1.0 (+render)", "/js/items.json specbot/1.0 (+render)",
      "/js/list specbot/1.0 (+render)", "/redirect-to?url=/echo specbot/1.0 (+render)" }, seen)
    assert.same({ "render", "fr" }, { echoed["x-crawl"], echoed["accept-language"] })
  end)

  it("a render holds its host's slot: with per_host = 1 the next page's first request waits for the render's last", function()
    h.control("/__reset")
    -- A page whose script takes half a second to come, and another.
    local slow = h.url("/js/html?src=%3Cscript%20src%3D%22%2Fslow%3Fdelay%3D0.5%22%3E%3C%2Fscript%3E")
    run({ start = { slow, h.url("/js/list") }, render = true, per_host = 1, concurrency = 4,
      parse = function() end })
    -- Each render's requests, from the first's start to the last's end.
    local spans = {}
    for _, e in ipairs(js_log()) do
      local page = (e.path:find("^/js/html") or e.path:find("^/slow")) and "slow" or "list"
      local s = spans[page] or { first = math.huge, last = 0, n = 0 }
      s.first, s.last, s.n = math.min(s.first, e.start), math.max(s.last, e["end"]), s.n + 1
      spans[page] = s
    end
    local a, b = spans.slow, spans.list
    assert.same({ 2, 2 }, { a.n, b.n }) -- each page and its one sub-request
    assert.is_true(a.last <= b.first or b.last <= a.first, "the two renders' requests overlapped")
  end)

  it("a render's requests to its host count toward delay: after 5 of them the next request waits 5 delays", function()
    h.control("/__reset")
    local delay = 0.4
    local _, st = run({ start = h.url("/js/scripts"), render = true, delay = delay, render_options = { wait = "load" } })
    local log = js_log()
    local paths = {}
    for i, e in ipairs(log) do paths[i] = e.path end
    table.sort(paths)
    assert.same({ "/js/landed", "/js/probe?n=1", "/js/probe?n=2", "/js/probe?n=3", "/js/probe?n=4", "/js/scripts" }, paths)
    local landed, scripts_end = log[#log], 0
    assert.equal("/js/landed", landed.path)
    for i = 1, #log - 1 do scripts_end = math.max(scripts_end, log[i]["end"]) end
    assert.is_true(landed.start - scripts_end >= 5 * delay,
      ("the next request came %.2f s after the render's last"):format(landed.start - scripts_end))
    assert.equal(6, st.render_requests)
  end)

  it("two workers of a --redis fleet render the site together: each page once in the union of their outputs", function()
    local id = ("render-%d-%d"):format(os.time(), math.random(1, 1e6))
    local outs = { h.tmpname(".jsonl"), h.tmpname(".jsonl") }
    local cmd = {}
    for i, out in ipairs(outs) do
      cmd[i] = ("%s crawl -q --fields url --render --redis %s --crawl-id %s --worker-id w%d %s >%s &"):format(
        bin, h.redis_url, id, i, h.url("/js/home"), out)
    end
    local code, _, err = h.sh(table.concat(cmd, " ") .. " wait")
    assert.equal(0, code, err)
    local count = {}
    for _, out in ipairs(outs) do
      for line in h.read_file(out):gmatch("[^\n]+") do
        local path = cjson.decode(line).url:match("^http://[^/]+(/.*)$")
        count[path] = (count[path] or 0) + 1
      end
    end
    local want = {}
    for _, p in ipairs(ALL) do want[p] = 1 end
    assert.same(want, count)
  end)

  it("a recrawl renders the page again and tells a change only its script shows", function()
    -- The server's HTML never changes; its script copies /site/p/3.html into the DOM.
    local src = '<pre id="copy"></pre><script>fetch("/site/p/3.html").then(r => r.text())'
      .. '.then(t => { document.getElementById("copy").textContent = t; })</script>'
    local page = h.url("/js/html?src=" .. src:gsub("[^%w]", function(c) return ("%%%02X"):format(c:byte()) end))
    local state, parsed = h.tmpname(".db"), {}
    local function crawl_it(extra)
      local spec = { start = page, render = true, state = state, parse = function(p) parsed[#parsed + 1] = tostring(p.changed) end }
      for k, v in pairs(extra or {}) do spec[k] = v end
      return select(2, run(spec))
    end
    local first = crawl_it()
    assert.equal(1, first.pages)
    local same = crawl_it({ recrawl = 0 })
    assert.same({ 1, 1, 1 }, { same.pages, same.rendered, same.unchanged })
    h.control("/__change?every=10&offset=3", { method = "POST" })
    local changed = crawl_it({ recrawl = 0 })
    assert.same({ 1, 0 }, { changed.pages, changed.unchanged or 0 })
    -- parse saw the first crawl's page (changed: nil) and the changed one, not the unchanged.
    assert.same({ "nil", "true" }, parsed)
  end)

  it("refuses render_options lc.render would refuse before fetching", function()
    local cases = {
      { { render = true, render_options = { wiat = "load" } }, "render_options: unknown option 'wiat' %(did you mean 'wait'%?%)" },
      { { render = true, render_options = { wait = "idle" } }, "render_options: option 'wait' must be" },
      { { render = "yes" }, "render must be true, a function" },
      { { render = { url = { "x" } } }, "unknown field 'url' %(did you mean 'urls'%?%) in render" },
    }
    for _, c in ipairs(cases) do
      c[1].start = h.url("/js/home")
      local ok, err = pcall(crawl.new, c[1])
      assert.is_false(ok)
      assert.matches("crawl.run: .*" .. c[2], tostring(err))
    end
  end)

  -- Last: it points the browser at a binary that is not there (lc.browser's settings
  -- are the process's), then back.
  it("a render that fails with kind render is retried under the crawl's retry rules", function()
    local config = lc.browser()
    local path = config.path
    local errors = {}
    local ok, pages, st = pcall(run, { start = h.url("/js/home"), render = true, retries = 1,
      browser = { path = h.source_dir .. "/no-such-chromium" },
      on_error = function(_, err) errors[#errors + 1] = err.kind end })
    config.path = path
    assert.is_true(ok, tostring(pages))
    assert.same({}, pages)
    assert.same({ "render" }, errors)
    assert.equal(1, st.retries)
    assert.equal(1, st.errors.render)
  end)
end)
