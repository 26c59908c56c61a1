-- fixtures: --http
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

  it("refuses render_options lc.render would refuse, and render with warc, before fetching", function()
    local cases = {
      { { render = true, render_options = { wiat = "load" } }, "render_options: unknown option 'wiat' %(did you mean 'wait'%?%)" },
      { { render = true, render_options = { wait = "idle" } }, "render_options: option 'wait' must be" },
      { { render = "yes" }, "render must be true, a function" },
      { { render = true, warc = "x" }, "render does not go with warc yet" },
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
