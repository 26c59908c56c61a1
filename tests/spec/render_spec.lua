-- fixtures: --http
-- ways: one
-- lc.render against the fixture server's JavaScript site (/js/, tests/fixtures/server.py):
-- pages whose content only scripts make, and hostile ones. Each case starts its own
-- browser (a run ends with its browser), so the spec runs once: the three ways would
-- start some fifty browsers for the same checks.
local h = require "spec_helper"
local lc = require "luacrawl"

-- A page that reaches 10.0.0.1, 169.254.169.254 and 127.0.0.2 (the fixture, on its
-- second address) is rendered from 127.0.0.1 with this policy.
local DENY = { "10.0.0.0/8", "169.254.0.0/16", "127.0.0.2/32" }

local function render(path, opts)
  return lc.run(function()
    return lc.render(h.url(path), opts)
  end)
end

local function texts(res, sel)
  local out = {}
  for i, node in ipairs(res:html():css(sel)) do out[i] = node:text() end
  return out
end

local function log_paths(match)
  local out = {}
  for _, e in ipairs(h.control("/__log").requests) do
    if e.path:find(match, 1, true) then out[#out + 1] = e.addr .. " " .. e.path end
  end
  return out
end

-- The live processes of process group pgid (zombies left out: they wait for a
-- reaper and run nothing).
local function group_processes(pgid)
  local _, out = h.sh(("ps -eo pgid=,stat=,pid= | awk '$1 == %d && $2 !~ /^Z/ { print $3 }'"):format(pgid))
  return (out:gsub("%s+$", ""))
end

local function wait_group_gone(pgid)
  for _ = 1, 100 do
    if group_processes(pgid) == "" then return true end
    h.sh("sleep 0.05")
  end
  return false
end

describe("lc.render", function()
  it("returns the DOM that scripts built: a list fetched as JSON and links inserted by script", function()
    local res, err = render("/js/list", { wait = "networkidle", timeout = 20 })
    assert.is_nil(err)
    assert.is_true(res.rendered)
    assert.equal(200, res.status)
    assert.equal(h.url("/js/list"), res.url)
    assert.truthy(res.headers["Content-Type"]:find("text/html", 1, true))
    assert.same({ "alpha", "beta", "gamma" }, texts(res, "li.item"))
    assert.same({ h.url("/js/item/0"), h.url("/js/item/1"), h.url("/js/item/2") }, res:html():links())
    assert.same({}, res.console_errors)
    assert.same({}, res.failed_requests)
  end)

  it("waits for a selector with wait = { css = SELECTOR }", function()
    local res = assert(render("/js/list", { wait = { css = "li.item" }, timeout = 20 }))
    assert.equal(3, #texts(res, "li.item"))
  end)

  it("follows a client-side redirect: res.url is where the script went", function()
    local res = assert(render("/js/redirect", { wait = "networkidle", timeout = 20 }))
    assert.equal(h.url("/js/landed"), res.url)
    assert.same({ "landed" }, texts(res, "#landed"))
  end)

  it("waits with wait = \"settled\" until the network and the DOM are still: the list fetched and inserted", function()
    local res = assert(render("/js/list", { wait = "settled", timeout = 20 }))
    assert.same({ "alpha", "beta", "gamma" }, texts(res, "li.item"))
    assert.same({ h.url("/js/item/0"), h.url("/js/item/1"), h.url("/js/item/2") }, res:html():links())
  end)

  it("follows a client-side redirect with wait = \"settled\"", function()
    local res = assert(render("/js/redirect", { wait = "settled", timeout = 20 }))
    assert.equal(h.url("/js/landed"), res.url)
    assert.same({ "landed" }, texts(res, "#landed"))
  end)

  it("opens pages ahead while renders run together, one for every two slots, each for one render only", function()
    local spares, third = lc.run(function()
      local tasks = {}
      for i = 1, 2 do
        tasks[i] = lc.spawn(lc.render, h.url("/js/landed"), { timeout = 20,
          script = "localStorage.setItem('k', 'earlier'), 1" })
      end
      for _, t in ipairs(tasks) do assert(t:join()) end
      local n = require("luacrawl.render").browser_info().spares
      return n, assert(lc.render(h.url("/js/landed"), { timeout = 20, script = "localStorage.getItem('k')" }))
    end)
    assert.equal(2, spares) -- render_concurrency 4
    assert.is_nil(third.script_result) -- nothing an earlier render stored
  end)

  it("opens no page ahead for a lone render", function()
    local spares = lc.run(function()
      assert(lc.render(h.url("/js/landed"), { timeout = 20 }))
      return require("luacrawl.render").browser_info().spares
    end)
    assert.equal(0, spares)
  end)

  it("scrolls an infinite-scroll page, each time waiting for the new rows", function()
    local first = assert(render("/js/scroll", { wait = "networkidle", timeout = 20 }))
    local res = assert(render("/js/scroll", { wait = "networkidle", scroll = 3, timeout = 20 }))
    assert.equal(10, #texts(first, ".row"))
    assert.equal(40, #texts(res, ".row"))
  end)

  it("returns a script's JSON result and a PNG screenshot", function()
    local res = assert(render("/js/list", { wait = "networkidle", screenshot = true, timeout = 20,
      script = "Array.from(document.querySelectorAll('li')).map(li => li.textContent)" }))
    assert.same({ "alpha", "beta", "gamma" }, res.script_result)
    assert.equal("\137PNG\r\n\26\n", res.screenshot:sub(1, 8))
  end)

  it("ends a page that never goes network-idle with kind timeout, and renders it with wait = load", function()
    local res, err = render("/js/longpoll", { wait = "networkidle", timeout = 2 })
    assert.is_nil(res)
    assert.equal("timeout", err.kind)
    assert.equal(h.url("/js/longpoll"), err.url)
    assert.same({ h.url("/js/longpoll"), h.url("/fault/hang?seconds=60") }, err.requests)
    res = assert(render("/js/longpoll", { wait = "load", timeout = 20 }))
    assert.same({ "ready" }, texts(res, "#ready"))
    assert.same({ h.url("/js/longpoll"), h.url("/fault/hang?seconds=60") }, res.requests)
  end)

  it("ends a script that loops for ever with kind timeout, and the same browser renders the next page", function()
    local pid_before, pid_after
    local res, err, next_res = lc.run(function()
      local r1, e1 = lc.render(h.url("/js/spin"), { timeout = 2 })
      pid_before = require("luacrawl.render").browser_info().pid
      local r2 = lc.render(h.url("/js/landed"), { timeout = 20 })
      pid_after = require("luacrawl.render").browser_info().pid
      return r1, e1, r2
    end)
    assert.is_nil(res)
    assert.equal("timeout", err.kind)
    assert.same({ "landed" }, texts(next_res, "#landed"))
    assert.equal(pid_before, pid_after)
  end)

  it("refuses the page's requests to denied addresses before they leave", function()
    h.control("/__reset")
    local res = assert(render("/js/ssrf", { wait = "networkidle", timeout = 20, deny_networks = DENY }))
    assert.same({ "page" }, texts(res, "#page"))
    local failed = {}
    for _, f in ipairs(res.failed_requests) do failed[#failed + 1] = f.url .. " " .. f.error end
    table.sort(failed)
    assert.same({
      "http://10.0.0.1:" .. h.fixture_port .. "/js/probe?from=fetch address 10.0.0.1 denied (10.0.0.0/8)",
      "http://127.0.0.2:" .. h.fixture_port .. "/js/probe?from=iframe address 127.0.0.2 denied (127.0.0.2/32)",
      "http://127.0.0.2:" .. h.fixture_port .. "/js/probe?from=script address 127.0.0.2 denied (127.0.0.2/32)",
      "http://169.254.169.254/latest/meta-data/ address 169.254.169.254 denied (169.254.0.0/16)",
    }, failed)
    assert.same({}, log_paths("/js/probe"))
  end)

  it("lets the same sub-requests through without a policy (the denials above are the policy's)", function()
    h.control("/__reset")
    local res = assert(lc.run(function()
      return lc.render(h.url("/js/ssrf"), { wait = "networkidle", timeout = 20,
        deny_networks = { "10.0.0.0/8", "169.254.0.0/16" } })
    end))
    assert.same({ "page" }, texts(res, "#page"))
    local got = log_paths("/js/probe")
    table.sort(got)
    assert.same({ "127.0.0.2 /js/probe?from=iframe", "127.0.0.2 /js/probe?from=script" }, got)
  end)

  it("refuses a page on a denied address with kind denied (public_only and the fixture's loopback)", function()
    h.control("/__reset")
    local res, err = render("/js/landed", { public_only = true, timeout = 20 })
    assert.is_nil(res)
    assert.equal("denied", err.kind)
    assert.truthy(err.message:find("loopback", 1, true))
    assert.same({}, log_paths("/js/landed"))
  end)

  it("takes the engine's address policy (lc.configure) when the render sets none", function()
    h.control("/__reset")
    lc.configure({ deny_networks = DENY })
    local ok, res = pcall(render, "/js/ssrf", { wait = "networkidle", timeout = 20 })
    lc.configure({ deny_networks = false })
    assert.is_true(ok, res)
    assert.equal(4, #res.failed_requests)
    assert.same({}, log_paths("/js/probe"))
  end)

  it("refuses a download the page starts and renders the page", function()
    local res = assert(render("/js/download", { wait = "networkidle", timeout = 20 }))
    assert.same({ "page" }, texts(res, "#page"))
    assert.same({ { url = h.url("/js/file.bin"), error = "download refused" } }, res.failed_requests)
  end)

  it("refuses a page that is a download with kind denied", function()
    local res, err = render("/js/file.bin", { timeout = 20 })
    assert.is_nil(res)
    assert.equal("denied", err.kind)
  end)

  it("refuses what is not http(s) with kind invalid_url, before any browser starts", function()
    local res, err = lc.run(function() return lc.render("file:///etc/passwd") end)
    assert.is_nil(res)
    assert.equal("invalid_url", err.kind)
    res, err = lc.run(function() return lc.render("chrome://crash/") end)
    assert.equal("invalid_url", err.kind)
  end)

  it("fails a page whose renderer dies of memory with kind render, and the next render works", function()
    lc.browser({ args = { "--js-flags=--max-old-space-size=64" } })
    local ok, res, err, next_res = pcall(lc.run, function()
      local r1, e1 = lc.render(h.url("/js/crash"), { timeout = 30 })
      return r1, e1, lc.render(h.url("/js/landed"), { timeout = 20 })
    end)
    lc.browser({ args = {} })
    assert.is_true(ok, res)
    assert.is_nil(res)
    assert.equal("render", err.kind)
    assert.equal("the page's renderer crashed", err.message)
    assert.same({ "landed" }, texts(next_res, "#landed"))
  end)

  it("kills a browser over max_memory: its render fails with kind render, the next starts another", function()
    local pids = {}
    lc.browser({ max_memory = 20 * 1024 * 1024 })
    local ok, res, err = pcall(lc.run, function()
      local r, e = lc.render(h.url("/js/scroll"), { wait = "networkidle", timeout = 20 })
      return r, e
    end)
    lc.browser({ max_memory = 1e12 })
    assert.is_true(ok, res)
    assert.is_nil(res)
    assert.equal("render", err.kind)
    assert.truthy(err.message:find("max_memory", 1, true))
    local again = lc.run(function()
      local r = lc.render(h.url("/js/landed"), { timeout = 20 })
      pids[1] = require("luacrawl.render").browser_info().pid
      return r
    end)
    assert.same({ "landed" }, texts(again, "#landed"))
    assert.truthy(pids[1])
  end)

  it("renders render_concurrency pages at once, each in a context of its own", function()
    lc.browser({ render_concurrency = 2 })
    local ok, results = pcall(lc.run, function()
      local tasks = {}
      for i = 1, 4 do
        tasks[i] = lc.spawn(function()
          return lc.render(h.url("/js/list"), { wait = "networkidle", timeout = 30,
            script = ("(() => { const before = localStorage.getItem('k'); "
              .. "localStorage.setItem('k', '%d'); return before; })()"):format(i) })
        end)
      end
      local out = {}
      for i, t in ipairs(tasks) do out[i] = t:join() end
      return out
    end)
    lc.browser({ render_concurrency = 4 })
    assert.is_true(ok, results)
    for i = 1, 4 do
      assert.same({ "alpha", "beta", "gamma" }, texts(results[i], "li.item"))
      assert.is_nil(results[i].script_result) -- nothing another render stored
    end
  end)

  -- html5lib expects iso-8859-2 here (a browser that lets a <meta> written by
  -- document.write change a tentative encoding). Chromium 156 does not: it keeps the
  -- default, windows-1252, and res.encoding says what the browser used.
  it("reports the encoding the browser used for a <meta> written by document.write (html5lib scripted case)", function()
    local f = assert(io.open(h.source_dir .. "/tests/data/html5lib-encoding/scripted_tests1.dat", "rb"))
    local text = f:read("*a")
    f:close()
    local data, want = text:match("#data\n(.-)\n#encoding\n([^\n]+)")
    assert.equal("iso-8859-2", want)
    local query = data:gsub("[^%w]", function(c) return ("%%%02X"):format(c:byte()) end)
    local res = assert(render("/js/html?src=" .. query, { timeout = 20 }))
    assert.equal("windows-1252", res.encoding:lower())
    assert.truthy(res.body:find('<meta charset="ISO-8859-2">', 1, true))
  end)

  it("leaves no browser process and no profile folder when the run ends", function()
    local info
    lc.run(function()
      assert(lc.render(h.url("/js/landed"), { timeout = 20 }))
      info = require("luacrawl.render").browser_info()
    end)
    assert.truthy(wait_group_gone(info.pid), "left: " .. group_processes(info.pid))
    assert.equal(1, h.sh("test -e " .. info.profile))
  end)

  it("leaves no browser process after kill -9 of the engine", function()
    local script, pidfile = h.tmpname(".lua"), h.tmpname(".pid")
    local f = assert(io.open(script, "w"))
    f:write(([[
      local lc = require "luacrawl"
      assert(lc.render(%q, { timeout = 20 }))
      local info = require("luacrawl.render").browser_info()
      local out = assert(io.open(%q, "w"))
      out:write(info.pid, " ", info.profile, "\n")
      out:close()
      lc.sleep(60)
    ]]):format(h.url("/js/landed"), pidfile))
    f:close()
    local p = io.popen(("%s run %s >/dev/null 2>&1 & echo $!"):format(h.luacrawl_bin, script))
    local engine = tonumber(p:read("*l"))
    p:close()
    local line = ""
    for _ = 1, 400 do
      line = h.read_file(pidfile)
      if line:find("\n") then break end
      h.sh("sleep 0.05")
    end
    local pgid, profile = line:match("^(%d+) (%S+)")
    h.sh("kill -9 " .. engine)
    assert.truthy(pgid, "the engine never rendered")
    assert.truthy(wait_group_gone(tonumber(pgid)), "left: " .. group_processes(tonumber(pgid)))
    h.sh("rm -rf " .. profile) -- nobody is left to remove it after a kill -9
  end)

  -- cookies = jar: the jar's cookies go into the page, and the page's come back.
  it("with cookies = jar, the page's script sees the cookies an earlier fetch set in the jar", function()
    local jar = lc.cookies()
    local res = lc.run(function()
      assert(lc.fetch(h.url("/cookies/set?c=pre%3D1%3B%20Path%3D%2F"), { cookies = jar }))
      return assert(lc.render(h.url("/js/cookies"), { cookies = jar, timeout = 20 }))
    end)
    assert.same({ h.url("/cookies/show?seen=pre%3D1") }, res:html():links())
  end)

  it("with cookies = jar, cookies a page sets by script and by Set-Cookie go to the jar, and the next fetch sends them", function()
    local jar = lc.cookies()
    local sent = lc.run(function()
      assert(lc.render(h.url("/js/cookies"), { cookies = jar, timeout = 20 }))
      assert(lc.render(h.url("/cookies/set?c=hdr%3D3%3B%20Path%3D%2F"), { cookies = jar, timeout = 20 }))
      local res = assert(lc.fetch(h.url("/cookies/show"), { cookies = jar }))
      return res:html():css("#cookie")[1]:text()
    end)
    local names = {}
    for pair in sent:gmatch("[^; ]+") do names[#names + 1] = pair end
    table.sort(names)
    assert.same({ "hdr=3", "js=2" }, names)
  end)

  it("with cookies = jar, cookies the page deletes by Set-Cookie and by document.cookie go from the jar too", function()
    -- The page: /cookies/set expires "gone" and redirects to a page whose script expires "pre".
    local function enc(v) return (v:gsub("[^%w]", function(c) return ("%%%02X"):format(c:byte()) end)) end
    local page = "/js/html?src=" .. enc('<script>document.cookie = "pre=; Max-Age=0; Path=/";</script>')
    local jar = lc.cookies()
    lc.run(function()
      assert(lc.fetch(h.url("/cookies/set?c=pre%3D1%3B%20Path%3D%2F&c=gone%3D1%3B%20Path%3D%2F&c=keep%3D1%3B%20Path%3D%2F"),
        { cookies = jar }))
      assert(lc.render(h.url("/cookies/set?c=" .. enc("gone=; Max-Age=0; Path=/") .. "&redirect=302&next=" .. enc(page)),
        { cookies = jar, timeout = 20 }))
    end)
    local names = {}
    for _, c in ipairs(jar:list()) do names[#names + 1] = c.name end
    assert.same({ "keep" }, names)
  end)

  it("keeps out of the jar a cookie the page got for another host (its navigation through 127.0.0.2)", function()
    -- The page goes to 127.0.0.2's /cookies/set, which sets "planted" for 127.0.0.2 in
    -- the browser and redirects back to 127.0.0.1: the page never was on 127.0.0.2.
    local hop = h.url("/cookies/set?c=planted%3D1%3B%20Path%3D%2F&redirect=302&next="
      .. h.url("/js/landed"):gsub("[:/]", function(c) return ("%%%02X"):format(c:byte()) end), "127.0.0.2")
    local src = ("<script>location.href = %q</script>"):format(hop)
    local jar = lc.cookies()
    local res = lc.run(function()
      return assert(lc.render(h.url("/js/html?src=" .. src:gsub("[^%w]", function(c) return ("%%%02X"):format(c:byte()) end)),
        { cookies = jar, wait = "networkidle", timeout = 20 }))
    end)
    assert.equal(h.url("/js/landed"), res.url)
    assert.truthy(log_paths("planted")[1], "the page never went through 127.0.0.2")
    assert.same({}, jar:list())
  end)

  it("sends user_agent on every request of the page (navigator.userAgent says it too)", function()
    h.control("/__reset")
    local res = assert(render("/js/list", { wait = "networkidle", timeout = 20, user_agent = "renderbot/2",
      script = "navigator.userAgent" }))
    assert.equal("renderbot/2", res.script_result)
    local seen = {}
    for _, e in ipairs(h.control("/__log").requests) do seen[#seen + 1] = e.path .. " " .. tostring(e.ua) end
    assert.same({ "/js/list renderbot/2", "/js/items.json renderbot/2" }, seen)
  end)

  it("refuses a user_agent that is not a string and a header with CR or LF", function()
    local ok, err = pcall(lc.run, function() return lc.render(h.url("/js/landed"), { user_agent = 5 }) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("render: option 'user_agent' must be a string", 1, true))
    ok, err = pcall(lc.run, function() return lc.render(h.url("/js/landed"), { headers = { X = "a\r\nb" } }) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("render: header 'X' refused", 1, true))
  end)

  it("refuses an unknown option, saying which it might be", function()
    local ok, err = pcall(lc.run, function() return lc.render(h.url("/js/landed"), { wiat = "load" }) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("render: unknown option 'wiat' (did you mean 'wait'?)", 1, true))
    ok, err = pcall(lc.run, function() return lc.render(h.url("/js/landed"), { wait = "idle" }) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("option 'wait' must be", 1, true))
  end)
end)
