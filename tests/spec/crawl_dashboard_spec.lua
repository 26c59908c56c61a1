-- fixtures: --http
-- ways: one
-- A crawl's dashboard (spec.dashboard, luacrawl crawl --dashboard): what it publishes
-- while the crawl runs, pause, resume and stop from it, the token on another address.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

local bin = h.luacrawl_bin

local wait_for = h.wait_for

-- luacrawl crawl ARGS in the background: {base = the dashboard's http://HOST:PORT, url =
-- the URL printed, err = its stderr file, stats = its --stats-json file, status() = its
-- exit status once it ended, else nil}.
local function start_crawl(args)
  local errf, statusf, stats = h.tmpname(".err"), h.tmpname(".status"), h.tmpname(".json")
  assert(h.sh(("(%s crawl -q -o /dev/null --stats-json %s %s 2>%s; echo $? >%s) >/dev/null 2>&1 &")
    :format(bin, stats, args, errf, statusf)) == 0)
  local c = { err = errf, stats = stats }
  function c.status()
    local s = h.read_file(statusf):match("%d+")
    return s and tonumber(s)
  end
  c.url = wait_for("the dashboard's URL on stderr", function()
    return h.read_file(errf):match("luacrawl: dashboard: open (http://%S+)") or c.status() and error(h.read_file(errf))
  end)
  c.base = c.url:match("^(http://[^/]+)")
  return c
end

local function get_json(url, opts)
  local res = assert(lc.fetch(url, opts))
  assert.equal(200, res.status, res.body)
  return cjson.decode(res.body)
end

-- The session's token, as the page carries it for its commands.
local function page_token(c, query) return h.dashboard_token(c.base .. "/" .. (query or "")) end

-- POST /NAME with the token, from the dashboard's own origin.
local function command(c, token, name, origin) return h.dashboard_command(c.base, token, name, origin) end

local function finished(c)
  return wait_for("the crawl's end", c.status)
end

local function site_log()
  return h.control("/__log?host=127.0.0.1")
end

local SLOW_SITE = "-c 2 --per-host 2 --delay 0.1 " .. h.url("/site/")

describe("a crawl's dashboard", function()
  it("starts no request while paused, and starts them again on resume", function()
    lc.run(function()
      h.control("/__reset")
      local c = start_crawl("--dashboard 127.0.0.1:0 " .. SLOW_SITE)
      local stats = c.base .. "/stats.json"
      wait_for("pages", function() return get_json(stats).pages >= 3 end)
      local token = page_token(c)
      assert.equal(202, command(c, token, "pause"))
      local paused = wait_for("the pause", function()
        local st = get_json(stats)
        return st.paused and st.in_flight == 0 and st
      end)
      local before = site_log()
      lc.sleep(1)
      local after = site_log()
      assert.equal(#before.requests, #after.requests)
      for _, r in ipairs(after.requests) do assert.is_true(r.start < before.now, r.path) end
      assert.equal(paused.pages, get_json(stats).pages)
      assert.equal(202, command(c, token, "resume"))
      wait_for("pages after the resume", function() return get_json(stats).pages > paused.pages end)
      assert.is_true(#site_log().requests > #after.requests)
      assert.equal(202, command(c, token, "stop"))
      assert.equal(130, finished(c))
      local final = cjson.decode(h.read_file(c.stats))
      assert.equal("dashboard", final.stop_reason)
      assert.is_true(final.paused_seconds >= 1, tostring(final.paused_seconds))
    end)
  end)

  it("serves in /stats.json the numbers the crawl ends with when stopped while paused", function()
    lc.run(function()
      local c = start_crawl("--dashboard 127.0.0.1:0 " .. SLOW_SITE)
      local stats = c.base .. "/stats.json"
      wait_for("pages", function() return get_json(stats).pages >= 3 end)
      local token = page_token(c)
      assert.equal(202, command(c, token, "pause"))
      local live = wait_for("the pause", function()
        local st = get_json(stats)
        return st.paused and st.in_flight == 0 and st
      end)
      assert.equal(202, command(c, token, "stop"))
      assert.equal(130, finished(c))
      local final = cjson.decode(h.read_file(c.stats))
      for _, k in ipairs({ "pages", "requests", "bytes", "errors_total", "retries", "robots_fetched" }) do
        assert.equal(final[k], live[k], k)
      end
      assert.same(final.statuses, live.statuses)
      assert.equal(live.pages, live.hosts["127.0.0.1"].pages)
      assert.equal(live.frontier, live.hosts["127.0.0.1"].queued)
      assert.equal(live.pages, live.depths["0"] + live.depths["1"] + (live.depths["2"] or 0))
    end)
  end)

  it("serves /metrics that promtool accepts, the crawled host with a label of its own", function()
    lc.run(function()
      local c = start_crawl("--dashboard 127.0.0.1:0 " .. SLOW_SITE)
      wait_for("pages", function() return get_json(c.base .. "/stats.json").pages >= 3 end)
      local body = assert(lc.fetch(c.base .. "/metrics")).body
      assert.equal(202, command(c, page_token(c), "stop"))
      finished(c)
      assert.truthy(body:find('luacrawl_host_pages_total{host="127.0.0.1"} %d+\n'), body)
      assert.truthy(body:find('luacrawl_responses_total{status="200"} %d+\n'), body)
      local path = h.tmpname(".prom")
      local f = assert(io.open(path, "wb"))
      f:write(body)
      f:close()
      local code, out, err = h.sh("promtool check metrics < " .. path)
      assert.equal(0, code, out .. err)
    end)
  end)

  it("on 127.0.0.2, answers nothing without the token, which the printed URL carries", function()
    lc.run(function()
      local c = start_crawl("--dashboard 127.0.0.2:0 " .. SLOW_SITE)
      local token = assert(c.url:match("%?token=(%w+)$"), c.url)
      assert.equal(401, assert(lc.fetch(c.base .. "/stats.json")).status)
      assert.equal(200, assert(lc.fetch(c.base .. "/stats.json?token=" .. token)).status)
      assert.equal(202, command(c, token, "stop"))
      assert.equal(130, finished(c))
    end)
  end)

  it("asks for the token --dashboard-token gives, on 127.0.0.1 too", function()
    lc.run(function()
      local c = start_crawl("--dashboard 127.0.0.1:0 --dashboard-token s3cret-t0ken " .. SLOW_SITE)
      assert.truthy(c.url:find("?token=s3cret-t0ken", 1, true), c.url)
      assert.equal(401, assert(lc.fetch(c.base .. "/stats.json")).status)
      assert.equal(202, command(c, "s3cret-t0ken", "stop"))
      assert.equal(130, finished(c))
    end)
  end)

  it("refuses a stop from another origin, and the crawl goes on", function()
    lc.run(function()
      local c = start_crawl("--dashboard 127.0.0.1:0 " .. SLOW_SITE)
      local token = page_token(c)
      assert.equal(403, command(c, token, "stop", "http://evil.test"))
      local pages = get_json(c.base .. "/stats.json").pages
      wait_for("pages after the refused stop", function() return get_json(c.base .. "/stats.json").pages > pages end)
      assert.is_nil(c.status())
      assert.equal(202, command(c, token, "stop"))
      assert.equal(130, finished(c))
    end)
  end)

  it("is an error before anything is fetched when its port is taken", function()
    lc.run(function()
      local c = start_crawl("--dashboard 127.0.0.1:0 " .. SLOW_SITE)
      local port = c.base:match(":(%d+)$")
      local code, _, err = h.sh(("%s crawl -q -o /dev/null --dashboard %s %s"):format(bin, port, h.url("/site/")))
      assert.equal(2, code)
      assert.matches("luacrawl: dashboard " .. port .. ": listen on 127.0.0.1: Address already in use", err, 1, true)
      assert.equal(202, command(c, page_token(c), "stop"))
      finished(c)
    end)
  end)

  it("refuses --dashboard-token without --dashboard", function()
    local code, _, err = h.sh(bin .. " crawl --dashboard-token t " .. h.url("/site/"))
    assert.equal(2, code)
    assert.matches("--dashboard-token goes with --dashboard", err, 1, true)
  end)
end)

describe("crawl.run's dashboard", function()
  it("publishes the latest errors with their URLs and kinds, the latest items, depths and hosts", function()
    local c
    lc.run(function()
      c = crawl.new({
        start = { h.url("/site/"), h.url("/fault/reset-before") }, max_depth = 1, retries = 0, quiet = true,
        dashboard = { listen = "127.0.0.1:0" },
        parse = function(page)
          if page.depth == 1 then error("no parse for " .. page.url) end
          page:emit({ url = page.url })
          page:follow(page:css("a"))
        end,
      })
      c:run()
    end)
    local v = c.watch:view()
    local fetch_kind, script_url
    for _, e in ipairs(v.latest_errors) do
      if e.url == h.url("/fault/reset-before") then fetch_kind = e.kind end
      if e.kind == "script" then script_url = e.url end
    end
    assert.truthy(fetch_kind, "the failed fetch is listed")
    assert.are_not.equal("script", fetch_kind)
    assert.truthy(script_url and script_url:find("/site/", 1, true), "a parse error is listed with its URL")
    assert.same({ url = h.url("/site/") }, v.latest_items[1])
    assert.equal(1, v.depths[0])
    assert.is_true(v.depths[1] > 0)
    local host = v.hosts["127.0.0.1"]
    assert.equal(v.pages, host.pages)
    assert.equal(1, host.errors)
    assert.equal("fetched", host.robots)
  end)

  it("leaves the crawler's per-page fields off when no dashboard is set", function()
    lc.run(function()
      local c = crawl.new({ start = { h.url("/site/") }, max_pages = 1, quiet = true })
      assert.equal(false, rawget(c, "watch"))
      assert.equal(false, rawget(c, "paused"))
      assert.is_nil(package.loaded["luacrawl.crawl_dashboard"] and rawget(c, "emit"))
    end)
  end)
end)
