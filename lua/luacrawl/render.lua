-- luacrawl.render: lc.render(url, opts), a page rendered by a headless Chromium the
-- engine starts on the first render (engine/browser.c) and speaks the Chrome DevTools
-- Protocol to over a pipe (bindings/lua_browser.c). One reader task takes the
-- browser's messages and hands replies and events to the renders; every render has
-- a browser context of its own (cookies and storage never leak between renders),
-- and every request its page makes is checked against the address policy before it
-- leaves. With a cookie jar (opts.cookies), the jar's cookies for the URL go into the
-- context and the cookies the page set come back to the jar. lc.browser(opts) sets
-- the browser up: path, args, render_concurrency, max_memory, hang_timeout.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local render_options = require "luacrawl.render_options"

local json_encode, json_decode = lc.json.encode, lc.json.decode
local CANCELLED = core.CANCELLED
local suspend, wake, now = core.suspend, core.wake, core.now
local b64 = core.base64_decode

local M = {}
local check_opts, check_keys = render_options.check, render_options.check_keys
local BROWSER_OPTIONS, DEFAULT_VIEWPORT = render_options.BROWSER_OPTIONS, render_options.DEFAULT_VIEWPORT

local config = {
  path = nil, -- LUACRAWL_CHROMIUM, else the Debian binary (browser.h)
  args = {},
  render_concurrency = 4,
  max_memory = nil, -- bytes of resident memory of the browser's processes
  hang_timeout = 20, -- seconds a browser call may go unanswered before it is killed
}
local DEFAULT_PATH = "/usr/lib/chromium/chromium-headless-shell"
local FALLBACK_PATH = "/usr/bin/chromium-headless-shell"
local IDLE_WINDOW = 0.5 -- networkidle: no request in flight for this long
local SETTLE_WINDOW = 0.1 -- settled: no request in flight and no DOM change for this long
local POLL = 0.1 -- seconds between polls of a css wait or of a scroll's growth
local MEMORY_CHECK = 1 -- seconds between checks of the browser's memory

local function fail(kind, message, url)
  return lc.error(kind, message, url and { url = url } or nil)
end

-- The browser ----------------------------------------------------------------------

local current -- the browser now: { ud, calls, sessions, next_id, active, dead }
local starting -- the waiters while one task starts it

local function browser_path()
  if config.path then return config.path end
  local env = os.getenv("LUACRAWL_CHROMIUM")
  if env and env ~= "" then return env end
  local f = io.open(DEFAULT_PATH, "rb")
  if f then
    f:close()
    return DEFAULT_PATH
  end
  return FALLBACK_PATH
end

-- Every waiter of b is told it is gone: calls get a reply with .dead, renders see
-- r.dead at their next wake.
local function fail_all(b, why)
  if b.dead then return end
  b.dead = why
  if current == b then current = nil end
  core.browser_kill(b.ud, why)
  for _, t in pairs(b.calls) do wake(t, { dead = why }) end
  for _, r in pairs(b.sessions) do
    r.dead = r.dead or why
    if r.waiter then wake(r.waiter) end
  end
end

local on_event -- below

local function dispatch(b, m)
  if m.id then
    local t = b.calls[m.id]
    if t then
      b.calls[m.id] = nil
      wake(t, m)
    end
    return
  end
  local r = b.sessions[m.sessionId or false]
  if r then on_event(r, m.method, m.params or {}, m.sessionId) end
end

local function reader(b)
  while true do
    if core.browser_wait(b.ud) == CANCELLED then
      -- The run is ending (nothing else can make progress): the browser goes with it.
      fail_all(b, "the run ended")
      return
    end
    local msgs, why = core.browser_take(b.ud)
    for i = 1, #msgs do
      local ok, m = pcall(json_decode, msgs[i])
      if ok and type(m) == "table" then dispatch(b, m) end
    end
    if why then
      fail_all(b, why)
      return
    end
  end
end

-- While renders run, the resident memory of the browser's processes, every second:
-- over max_memory, the browser is killed (its renders fail, the next starts another).
local function watch_memory(b)
  while not b.dead and b.active > 0 and config.max_memory do
    local rss = core.browser_info(b.ud).rss or 0
    if rss > config.max_memory then
      fail_all(b, ("over its max_memory: %d MB resident, the limit %d MB"):format(
        math.floor(rss / 1048576), math.floor(config.max_memory / 1048576)))
      return
    end
    lc.sleep(MEMORY_CHECK)
  end
  b.watching = false
end

-- Send method to the browser (session: a page's) and wait up to `limit` seconds for
-- the reply: its result, or nil and an error.
local function call(b, method, params, session, limit)
  if b.dead then return nil, fail("render", "browser: " .. b.dead) end
  local id = b.next_id
  b.next_id = id + 1
  local me = lc.current()
  local msg = { id = id, method = method, params = params or {} }
  msg.sessionId = session
  if not core.browser_send(b.ud, json_encode(msg)) then
    fail_all(b, "writing to the browser failed")
    return nil, fail("render", "browser: " .. b.dead)
  end
  b.calls[id], b.call_sessions[id] = me, session
  local m = suspend(limit)
  b.calls[id], b.call_sessions[id] = nil, nil
  if m == CANCELLED then error(lc.cancelled, 0) end
  if m == nil then return nil, nil end -- the time ran out: the caller says what that means
  if m.dead then return nil, fail("render", "browser: " .. m.dead) end
  if m.crashed then return nil, fail("render", "the page's renderer crashed") end
  if m.error then return nil, fail("render", ("%s: %s"):format(method, m.error.message or "failed")) end
  return m.result or {}
end

-- A call to the browser itself: one not answered within hang_timeout means a hung
-- browser, which is killed.
local function browser_call(b, method, params, deadline)
  local limit = config.hang_timeout
  if deadline then limit = math.min(limit, math.max(deadline - now(), 0.001)) end
  local result, err = call(b, method, params, nil, limit)
  if result or err then return result, err end
  if deadline and now() >= deadline then return nil, fail("timeout", "render timed out") end
  fail_all(b, ("hung: %s not answered in %g s"):format(method, config.hang_timeout))
  return nil, fail("render", "browser: " .. b.dead)
end

local function start_browser(deadline)
  local ud, err = core.browser_start(browser_path(), config.args)
  if not ud then return nil, fail("render", err) end
  local b = { ud = ud, calls = {}, sessions = {}, call_sessions = {}, next_id = 1, active = 0 }
  lc.spawn(reader, b)
  local _, e = browser_call(b, "Browser.getVersion", nil, deadline)
  if e then
    fail_all(b, e.message)
    return nil, e
  end
  return b
end

-- The browser, started when there is none (one task starts it, the others wait).
local function get_browser(deadline)
  if current and not current.dead then return current end
  if starting then
    local me = lc.current()
    starting[#starting + 1] = me
    if suspend(math.max(deadline - now(), 0.001)) == CANCELLED then error(lc.cancelled, 0) end
    if current and not current.dead then return current end
    if now() >= deadline then return nil, fail("timeout", "render timed out starting the browser") end
    return nil, fail("render", "the browser failed to start")
  end
  starting = {}
  local b, err = start_browser(deadline)
  local waiting = starting
  starting = nil
  current = b
  for _, t in ipairs(waiting) do wake(t) end
  return b, err
end

-- Slots: render_concurrency renders at once, the rest wait in order ---------------

local active, queue = 0, {}

local function acquire(deadline)
  if active < config.render_concurrency then
    active = active + 1
    return true
  end
  local me = lc.current()
  queue[#queue + 1] = me
  while true do
    local r = suspend(math.max(deadline - now(), 0.001))
    if r == CANCELLED or r == nil then
      for i, t in ipairs(queue) do
        if t == me then table.remove(queue, i) break end
      end
      if r == CANCELLED then error(lc.cancelled, 0) end
      return false
    end
    if r == "slot" then return true end
  end
end

local function release()
  while #queue > 0 do
    local t = table.remove(queue, 1)
    if wake(t, "slot") then return end -- the slot passes on, active unchanged
  end
  active = active - 1
end

-- A page's events -------------------------------------------------------------------

local function notify(r)
  if r.waiter then wake(r.waiter) end
end

local function console_text(args)
  local parts = {}
  for i, a in ipairs(args or {}) do
    parts[i] = a.value ~= nil and tostring(a.value) or a.description or a.type or "?"
  end
  return table.concat(parts, " ")
end

local function failed(r, url, why)
  r.failed_requests[#r.failed_requests + 1] = { url = url, error = why }
end

local check_request -- below

-- A document the browser would save rather than show: an attachment.
local function is_download(response)
  local h = response.headers or {}
  for k, v in pairs(h) do
    if k:lower() == "content-disposition" and tostring(v):lower():match("^%s*attachment") then
      return true
    end
  end
  return false
end

local function download(r, url)
  if r.downloads[url] then return end
  r.downloads[url] = true
  r.download = url
  failed(r, url, "download refused")
end

local events = {
  ["Page.loadEventFired"] = function(r) r.loaded = true end,
  ["Page.domContentEventFired"] = function(r) r.dom_ready = true end,
  ["Page.frameStartedLoading"] = function(r, p)
    if p.frameId == r.frame then r.loaded, r.dom_ready = false, false end
  end,
  ["Network.requestWillBeSent"] = function(r, p)
    if not r.inflight[p.requestId] then r.count = r.count + 1 end
    r.inflight[p.requestId], r.loaders[p.requestId] = p.request.url, p.loaderId
    r.last_activity = now()
  end,
  ["Network.responseReceived"] = function(r, p)
    if p.type == "Document" and p.frameId == r.frame then
      if is_download(p.response) then
        download(r, p.response.url)
        return
      end
      r.status, r.doc_url = p.response.status, p.response.url
      r.headers = p.response.headers
    end
  end,
  ["Network.loadingFinished"] = function(r, p)
    if r.inflight[p.requestId] then r.count = r.count - 1 end
    r.inflight[p.requestId], r.loaders[p.requestId] = nil, nil
    r.last_activity = now()
  end,
  ["Network.loadingFailed"] = function(r, p)
    local url = r.inflight[p.requestId]
    if url then r.count = r.count - 1 end
    r.inflight[p.requestId], r.loaders[p.requestId] = nil, nil
    r.last_activity = now()
    if url and not p.canceled and p.blockedReason ~= "inspector" then
      failed(r, url, r.refused[url] or p.errorText or "failed")
    end
  end,
  ["Runtime.consoleAPICalled"] = function(r, p)
    if p.type == "error" or p.type == "assert" then
      r.console_errors[#r.console_errors + 1] = console_text(p.args)
    end
  end,
  ["Runtime.exceptionThrown"] = function(r, p)
    local d = p.exceptionDetails or {}
    r.console_errors[#r.console_errors + 1] = d.exception and d.exception.description or d.text
      or "exception"
  end,
  -- The calls waiting on a crashed page get no reply: they fail now.
  ["Inspector.targetCrashed"] = function(r)
    r.crashed = true
    for id, s in pairs(r.b.call_sessions) do
      if s == r.session then wake(r.b.calls[id], { crashed = true }) end
    end
  end,
  ["Fetch.requestPaused"] = function(r, p, session) lc.spawn(check_request, r, p, session) end,
  -- The browser refuses the download (Browser.setDownloadBehavior); the page that
  -- started it has loaded as far as it will.
  ["Page.downloadWillBegin"] = function(r, p)
    download(r, p.url)
    r.loaded, r.dom_ready = true, true
  end,
  -- The main frame committed a new document: the requests of the one it replaced
  -- (and of its frames) will not all say they ended, and no longer matter.
  ["Page.frameNavigated"] = function(r, p)
    local f = p.frame
    if f.id ~= r.frame or f.parentId then return end
    for id in pairs(r.inflight) do
      if r.loaders[id] ~= f.loaderId then
        r.inflight[id], r.loaders[id] = nil, nil
        r.count = r.count - 1
      end
    end
  end,
  ["Page.frameStoppedLoading"] = function(r, p)
    if p.frameId == r.frame then r.loaded, r.dom_ready = true, true end
  end,
  -- A worker (dedicated, shared, service) the page starts: its requests are
  -- intercepted as the page's are, before it runs.
  ["Target.attachedToTarget"] = function(r, p)
    local s = p.sessionId
    r.b.sessions[s] = r
    r.children[#r.children + 1] = s
    lc.spawn(function()
      call(r.b, "Fetch.enable", { patterns = { { urlPattern = "*" } } }, s, config.hang_timeout)
      call(r.b, "Network.enable", nil, s, config.hang_timeout)
      if r.opts.user_agent then
        call(r.b, "Network.setUserAgentOverride", { userAgent = r.opts.user_agent }, s, config.hang_timeout)
      end
      call(r.b, "Runtime.runIfWaitingForDebugger", nil, s, config.hang_timeout)
    end)
  end,
}

function on_event(r, method, p, session)
  local f = events[method]
  if f then f(r, p, session) end
  if r.capture then r.capture:event(r, method, p) end
  notify(r)
end

-- The request's host, resolved by the engine's own resolver, against the render's
-- address policy: every address must be allowed (the browser picks its own).
local function refusal(r, url)
  local scheme = url:match("^(%a[%w+.-]*):")
  scheme = scheme and scheme:lower()
  if scheme ~= "http" and scheme ~= "https" then
    return "AccessDenied", ("scheme %s: refused"):format(tostring(scheme))
  end
  if not r.policy then return nil end
  local host = lc.url.host(url)
  if not host then return "AccessDenied", "no host" end
  local addrs, err = lc.resolve((host:gsub("^%[(.*)%]$", "%1")))
  if not addrs then return "NameNotResolved", "dns: " .. tostring(err and err.message) end
  for _, a in ipairs(addrs) do
    local why = core.address_denied(r.policy, a)
    if why then return "AccessDenied", ("address %s denied (%s)"):format(a, why) end
  end
  return nil
end

-- The headers of a main-frame document request: the browser's, with the render's
-- `headers` over them (per name, in any case), as Fetch.continueRequest takes them.
local function document_headers(sent, own)
  local out, mine = {}, {}
  for k in pairs(own) do mine[k:lower()] = true end
  for k, v in pairs(sent or {}) do
    if not mine[k:lower()] then out[#out + 1] = { name = k, value = v } end
  end
  for k, v in pairs(own) do out[#out + 1] = { name = k, value = tostring(v) } end
  return out
end

-- Fetch's headers ({{name =, value =}, ...}) as Network's ({name = value}).
local function header_map(list)
  local h = {}
  for _, e in ipairs(list or {}) do h[e.name] = e.value end
  return h
end

-- A document paused at its response (archive: the main frame's documents are): the
-- main frame's body as the server sent it, kept for the archive, then let through.
local function check_response(r, p, session)
  local b, status = r.b, p.responseStatusCode
  local redirect = status and status >= 300 and status < 400
  if r.capture and not p.responseErrorReason and not redirect and p.frameId == r.frame
      and not is_download({ headers = header_map(p.responseHeaders) }) then
    local limit = math.min(config.hang_timeout, math.max(r.deadline - now(), 0.001))
    local body = call(b, "Fetch.getResponseBody", { requestId = p.requestId }, session, limit)
    if body then r.capture:raw(p.networkId, body.base64Encoded and b64(body.body or "") or body.body or "") end
  end
  if not b.dead then core.browser_send(b.ud, json_encode({ id = 0, method = "Fetch.continueRequest",
    params = { requestId = p.requestId }, sessionId = session })) end
end

function check_request(r, p, session)
  if p.responseStatusCode or p.responseErrorReason then return check_response(r, p, session) end
  local b, url = r.b, p.request.url
  local rtype = (p.resourceType or "other"):lower()
  local reason, why
  if r.block[rtype] then
    reason, why = "BlockedByClient", "blocked (" .. rtype .. ")"
  else
    reason, why = refusal(r, url)
  end
  local method, params = "Fetch.continueRequest", { requestId = p.requestId }
  if reason then
    method, params.errorReason = "Fetch.failRequest", reason
    r.refused[url] = why
    if p.resourceType == "Document" and p.frameId == r.frame and r.navigating then
      r.denied = r.denied or ("%s: %s"):format(url, why)
    end
  else
    r.sent[#r.sent + 1] = url
    if r.opts.headers and p.resourceType == "Document" and p.frameId == r.frame then
      params.headers = document_headers(p.request.headers, r.opts.headers)
    end
  end
  if not b.dead then core.browser_send(b.ud, json_encode({ id = 0, method = method, params = params,
    sessionId = session })) end
end

-- A render ----------------------------------------------------------------------------

local function left(r) return r.deadline - now() end

-- Wait until pred(r) holds, woken by the page's events and every `poll` seconds (a
-- number, or a function of r); raises a timeout or the browser's end.
local function wait_until(r, pred, poll)
  while true do
    if r.dead then error(fail("render", "browser: " .. r.dead), 0) end
    if r.crashed then error(fail("render", "the page's renderer crashed"), 0) end
    if r.denied then error(fail("denied", r.denied), 0) end
    if pred(r) then return end
    local limit = left(r)
    if limit <= 0 then error(fail("timeout", ("render not done within %g s"):format(r.timeout)), 0) end
    r.waiter = lc.current()
    local every = poll
    if type(poll) == "function" then every = poll(r) end
    local v = suspend(every and math.min(every, limit) or limit)
    r.waiter = nil
    if v == CANCELLED then error(lc.cancelled, 0) end
  end
end

local function page_call(r, method, params)
  local limit = left(r)
  if limit <= 0 then error(fail("timeout", ("render not done within %g s"):format(r.timeout)), 0) end
  local result, err = call(r.b, method, params, r.session, limit)
  if result then return result end
  if err then error(err, 0) end
  if r.crashed then error(fail("render", "the page's renderer crashed"), 0) end
  error(fail("timeout", ("render not done within %g s"):format(r.timeout)), 0)
end

-- Evaluate JavaScript in the page: its value (JSON-able), raising on an exception.
local function evaluate(r, expr, what)
  local res = page_call(r, "Runtime.evaluate", { expression = expr, returnByValue = true,
    awaitPromise = true })
  if res.exceptionDetails then
    local d = res.exceptionDetails
    error(fail("render", ("%s failed: %s"):format(what, d.exception and d.exception.description
      or d.text or "exception")), 0)
  end
  return res.result and res.result.value
end

local function idle(r) return r.loaded and r.count == 0 and now() - r.last_activity >= IDLE_WINDOW end
-- The time until the page is idle if nothing happens meanwhile (an event wakes the
-- wait before then): the wait ends when the window does, not at a poll after it.
local function idle_left(r)
  if not r.loaded or r.count > 0 then return POLL end
  return math.max(IDLE_WINDOW - (now() - r.last_activity), 0.001)
end

-- In the page: a promise that resolves once its DOM has not changed for `quiet`
-- seconds, or after `most` seconds of changes (a page that animates for ever).
local DOM_QUIET = [[(function (quiet, most) {
  return new Promise(function (done) {
    var timer, end = setTimeout(finish, most), seen = new MutationObserver(function () {
      clearTimeout(timer);
      timer = setTimeout(finish, quiet);
    });
    function finish() { seen.disconnect(); clearTimeout(timer); clearTimeout(end); done(true); }
    seen.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    timer = setTimeout(finish, quiet);
  });
})(%d, %d)]]

local function net_quiet(r) return r.loaded and r.count == 0 and now() - r.last_activity >= SETTLE_WINDOW end
local function net_quiet_left(r) return math.max(SETTLE_WINDOW - (now() - r.last_activity), 0.001) end

-- "settled": loaded, no request in flight for SETTLE_WINDOW, then no DOM change for
-- as long, and no request started meanwhile (else again). The DOM's wait gives up
-- on changes at IDLE_WINDOW, so a page that never stops changing is not held past
-- what networkidle would wait. A script navigation during the DOM's wait destroys
-- the promise: the wait starts again on the new page.
local function settle_quiet(r)
  local expr = DOM_QUIET:format(SETTLE_WINDOW * 1000, (IDLE_WINDOW - SETTLE_WINDOW) * 1000)
  while true do
    wait_until(r, net_quiet, net_quiet_left)
    local t = now()
    local ok, err = pcall(evaluate, r, expr, "wait settled")
    if not ok and (type(err) ~= "table" or err.kind ~= "render" or r.dead or r.crashed) then error(err, 0) end
    if ok and r.loaded and r.count == 0 and r.last_activity <= t then return end
  end
end

local function settle(r)
  local w = r.opts.wait
  if w == "load" then
    wait_until(r, function() return r.loaded end)
  elseif w == "domcontentloaded" then
    wait_until(r, function() return r.dom_ready end)
  elseif w == "networkidle" then
    wait_until(r, idle, idle_left)
  elseif w == "settled" then
    settle_quiet(r)
  else
    wait_until(r, function() return r.dom_ready end)
    local expr = ("!!document.querySelector(%s)"):format(json_encode(w.css))
    wait_until(r, function() return evaluate(r, expr, "wait css") end, POLL)
  end
end

local HEIGHT = "document.scrollingElement ? document.scrollingElement.scrollHeight : 0"

-- Scroll to the bottom n times, each time waiting for the page to grow and its
-- requests to settle; stop early when it no longer grows.
local function scroll(r, n)
  for _ = 1, n do
    local h = evaluate(r, HEIGHT, "scroll")
    evaluate(r, "window.scrollTo(0, " .. HEIGHT .. "), true", "scroll")
    local grew, since = false, now()
    wait_until(r, function()
      if not grew then grew = evaluate(r, HEIGHT, "scroll") > h end
      local quiet = r.count == 0 and now() - r.last_activity >= IDLE_WINDOW / 2
      return (grew and quiet) or now() - since > 2
    end, POLL)
    if not grew then break end
  end
end

local SNAPSHOT = [[(function () {
  var d = document.doctype ? new XMLSerializer().serializeToString(document.doctype) + "\n" : "";
  return { html: d + document.documentElement.outerHTML, url: location.href,
           encoding: document.characterSet };
})()]]

-- A fresh page: a new browser context with one blank tab, attached, its domains
-- enabled, every request intercepted, the viewport vp. p.context is set as soon as
-- there is one, so a failure part-way leaves what to dispose. Most of its time is
-- the browser starting the tab's renderer process, which the first enable waits for.
local function new_page(b, p, vp, deadline)
  local ctx, err = browser_call(b, "Target.createBrowserContext", { disposeOnDetach = true }, deadline)
  if not ctx then return nil, err end
  p.context = ctx.browserContextId
  local _, e1 = browser_call(b, "Browser.setDownloadBehavior", { behavior = "deny",
    browserContextId = p.context, eventsEnabled = true }, deadline)
  if e1 then return nil, e1 end
  local target, e2 = browser_call(b, "Target.createTarget", { url = "about:blank",
    browserContextId = p.context }, deadline)
  if not target then return nil, e2 end
  p.frame = target.targetId
  local att, e3 = browser_call(b, "Target.attachToTarget", { targetId = p.frame, flatten = true }, deadline)
  if not att then return nil, e3 end
  p.session = att.sessionId
  for _, c in ipairs({ { "Fetch.enable", { patterns = { { urlPattern = "*" } } } }, { "Network.enable" },
      { "Page.enable" }, { "Runtime.enable" }, { "Inspector.enable" },
      { "Target.setAutoAttach", { autoAttach = true, waitForDebuggerOnStart = true, flatten = true } },
      { "Emulation.setDeviceMetricsOverride", { width = vp.width, height = vp.height, deviceScaleFactor = 1,
        mobile = false } } }) do
    local limit = config.hang_timeout
    if deadline then limit = math.min(limit, math.max(deadline - now(), 0.001)) end
    local res, e = call(b, c[1], c[2], p.session, limit)
    if not res then return nil, e or fail("timeout", ("render: %s not answered"):format(c[1])) end
  end
  p.viewport = vp
  return p
end

-- Spare pages, opened ahead while renders run, so that a render finds its tab's
-- renderer already started (a few hundred ms a render saves on a loaded machine):
-- one for every two render slots, opened once two renders are under way or waiting
-- (a lone render, a script's one lc.render, opens none it would not use). Each still
-- serves one render only (a fresh context, never reused).
local function spares_wanted() return math.ceil(config.render_concurrency / 2) end

local function dispose(b, p)
  if p.context and not b.dead then
    core.browser_send(b.ud, json_encode({ id = 0, method = "Target.disposeBrowserContext",
      params = { browserContextId = p.context } }))
  end
end

local function refill(b)
  b.spares, b.opening = b.spares or {}, b.opening or 0
  while not b.dead and #b.spares + b.opening < spares_wanted() do
    b.opening = b.opening + 1
    lc.spawn(function()
      local p = {}
      local ok = pcall(new_page, b, p, DEFAULT_VIEWPORT, nil)
      b.opening = b.opening - 1
      if ok and p.session and not b.dead then
        b.spares[#b.spares + 1] = p
      else
        dispose(b, p) -- a page that failed to open, or whose browser went
      end
    end)
  end
end

local function open_page(r)
  local b = r.b
  local p = b.spares and table.remove(b.spares, 1)
  if not p then
    p = {}
    local ok, err = new_page(b, p, r.opts.viewport, r.deadline)
    r.context = p.context
    if not ok then error(err, 0) end
  end
  if active + #queue > 1 then refill(b) end
  r.context, r.frame, r.session = p.context, p.frame, p.session
  b.sessions[r.session] = r
  -- For the archive, documents pause at their response too: their body as sent.
  if r.capture then
    page_call(r, "Fetch.enable", { patterns = { { urlPattern = "*" },
      { urlPattern = "*", resourceType = "Document", requestStage = "Response" } } })
  end
  -- The page's every request (and navigator.userAgent) says the crawl's agent.
  if r.opts.user_agent then page_call(r, "Network.setUserAgentOverride", { userAgent = r.opts.user_agent }) end
  local vp = r.opts.viewport
  if vp.width ~= p.viewport.width or vp.height ~= p.viewport.height then
    page_call(r, "Emulation.setDeviceMetricsOverride", { width = vp.width, height = vp.height,
      deviceScaleFactor = 1, mobile = false })
  end
end

local function close_page(r)
  local b = r.b
  if r.session then b.sessions[r.session] = nil end
  for _, s in ipairs(r.children) do b.sessions[s] = nil end
  if r.context and not b.dead then
    -- A browser that cannot close a context is hung: browser_call kills it.
    browser_call(b, "Target.disposeBrowserContext", { browserContextId = r.context })
  end
end

local function response(r, snap, shot, script_result, exchange)
  local headers = setmetatable({}, core.Headers)
  for k, v in pairs(r.headers or {}) do headers[k:lower()] = v end
  local res = setmetatable({
    status = r.status or 200, url = snap.url, headers = headers, body = snap.html,
    size = #snap.html, rendered = true, encoding = snap.encoding, _charset = "utf-8",
    document_url = r.doc_url, console_errors = r.console_errors,
    failed_requests = r.failed_requests, script_result = script_result, requests = r.sent,
    screenshot = shot and b64(shot) or nil, _exchange = exchange,
  }, lc.Response)
  return res
end

-- Cookies ---------------------------------------------------------------------------
-- With opts.cookies (a jar), the jar's cookies for the URL go into the render's
-- context before it navigates, and after the page settled the cookies of the context
-- that are new or changed go back to the jar, as Set-Cookie lines from the page's own
-- URLs (the one asked for, the one it ended at): the jar's rules decide, so a page of
-- a.test cannot set a cookie for b.test (one its sub-request to b.test got, say).
-- Those that went in and are gone at the end (the page expired them by Set-Cookie or
-- document.cookie, or their time ran out) are deleted from the jar.

local function cookie_key(c) return c.name .. "\0" .. (c.domain or ""):lower() .. "\0" .. (c.path or "") end

-- The context's cookies ({name, value, domain, path, ...} as CDP reports them).
local function context_cookies(r)
  local got, err = browser_call(r.b, "Storage.getCookies", { browserContextId = r.context }, r.deadline)
  if not got then error(err, 0) end
  return got.cookies or {}
end

local function put_cookies(r)
  local params = {}
  for _, c in ipairs(r.opts.cookies:list(r.url)) do
    local p = { name = c.name, value = c.value, path = c.path, secure = c.secure,
      httpOnly = c.http_only, expires = c.expires }
    if c.host_only then -- a URL without a domain: host-only in the browser too
      local host = c.domain:find(":", 1, true) and "[" .. c.domain .. "]" or c.domain
      p.url = (c.secure and "https://" or "http://") .. host .. c.path
    else
      p.domain = "." .. c.domain
    end
    params[#params + 1] = p
  end
  if #params == 0 then return end
  local _, err = browser_call(r.b, "Storage.setCookies", { cookies = params,
    browserContextId = r.context }, r.deadline)
  if err then error(err, 0) end
  -- What went in, as the browser holds it: the cookies the page could delete.
  for _, c in ipairs(context_cookies(r)) do r.put[cookie_key(c)] = c end
end

local function set_cookie_line(c, domain, host_only, gone)
  local line = { c.name .. "=" .. (gone and "" or c.value), "Path=" .. (c.path or "/") }
  if not host_only then line[#line + 1] = "Domain=" .. domain end
  if gone then
    line[#line + 1] = "Max-Age=0"
  elseif not c.session and type(c.expires) == "number" and c.expires > 0 then
    line[#line + 1] = "Expires=" .. os.date("!%a, %d %b %Y %H:%M:%S GMT", math.floor(c.expires))
  end
  if c.secure then line[#line + 1] = "Secure" end
  if c.httpOnly then line[#line + 1] = "HttpOnly" end
  return table.concat(line, "; ")
end

-- c (as CDP reports it) to the jar as a Set-Cookie line from one of pages (the
-- first the jar takes it from); gone: a line that deletes it.
local function to_jar(jar, pages, c, gone)
  local domain = (c.domain or ""):lower()
  local host_only = domain:sub(1, 1) ~= "."
  domain = domain:gsub("^%.", "")
  local line = set_cookie_line(c, domain, host_only, gone)
  for _, page in ipairs(pages) do
    -- A host-only cookie comes back only from its own host; a domain cookie from a
    -- page its Domain covers (the jar checks).
    if (not host_only or page.host == domain) and jar:set(page.url, line) then return end
  end
end

local function take_cookies(r, final_url)
  local jar, pages, now_in = r.opts.cookies, {}, {}
  for _, u in ipairs({ final_url, r.url }) do
    local host = type(u) == "string" and u:match("^[hH][tT][tT][pP][sS]?://") and lc.url.host(u)
    if host then pages[#pages + 1] = { url = u, host = host:lower():gsub("^%[(.*)%]$", "%1") } end
  end
  for _, c in ipairs(context_cookies(r)) do
    local key = cookie_key(c)
    now_in[key] = true
    local was = r.put[key]
    if not was or was.value ~= c.value then to_jar(jar, pages, c, false) end
  end
  for key, c in pairs(r.put) do
    if not now_in[key] then to_jar(jar, pages, c, true) end
  end
end

local function run_page(r)
  open_page(r)
  if r.opts.cookies then put_cookies(r) end
  r.navigating = true
  local nav = page_call(r, "Page.navigate", { url = r.url })
  if r.denied then error(fail("denied", r.denied), 0) end
  if nav.errorText and nav.errorText ~= "" then
    if r.download and not r.status then error(fail("denied", "the page is a download: refused"), 0) end
    error(fail("render", ("navigation failed: %s"):format(nav.errorText)), 0)
  end
  settle(r)
  r.navigating = false
  local script_result
  if r.opts.scroll > 0 then scroll(r, r.opts.scroll) end
  if r.opts.script then
    script_result = evaluate(r, r.opts.script, "script")
    if script_result == lc.json.null then script_result = nil end
  end
  local shot = r.opts.screenshot and page_call(r, "Page.captureScreenshot", { format = "png" }).data
  local exchange = r.capture and r.capture:exchange(function(m, p) return page_call(r, m, p) end)
  local snap = evaluate(r, SNAPSHOT, "snapshot")
  if r.opts.cookies then take_cookies(r, snap.url) end
  return response(r, snap, shot, script_result, exchange)
end

local function policy_of(o)
  if o.public_only ~= nil or o.deny_networks ~= nil then
    return core.address_policy_new(o.public_only, o.deny_networks)
  end
  local p = lc._address_policy
  return p and core.address_policy_new(p.public_only, p.deny_networks)
end

local function render_with(b, url, o, deadline)
  local r = { b = b, url = url, opts = o, block = o.block, policy = policy_of(o), deadline = deadline,
    timeout = o.timeout, inflight = {}, count = 0, last_activity = now(), refused = {},
    console_errors = {}, failed_requests = {}, children = {}, downloads = {}, loaded = false, dom_ready = false,
    loaders = {},
    sent = {}, put = {},
    capture = o.archive and require("luacrawl.render_archive").new() or nil }
  b.active = b.active + 1
  if config.max_memory and not b.watching then
    b.watching = true
    lc.spawn(watch_memory, b)
  end
  local ok, res = pcall(run_page, r)
  b.active = b.active - 1
  if res == lc.cancelled then
    -- A cancelled task waits for nothing more: the context is closed unanswered.
    if r.context and not b.dead then
      core.browser_send(b.ud, json_encode({ id = 0, method = "Target.disposeBrowserContext",
        params = { browserContextId = r.context } }))
    end
    r.context = nil
    close_page(r)
    error(res, 0)
  end
  close_page(r)
  if ok then return res end
  if not lc.is_error(res) then error(res, 0) end
  res.url = res.url or url
  res.requests = r.sent -- a page that failed may have sent some: the crawl counts them
  return nil, res
end

-- The options given, checked as lc.render checks them (raises): for the crawl's
-- render_options, refused before anything is fetched.
M.check_options = check_opts

function M.render(url, opts)
  if type(url) ~= "string" then error("render: url must be a string", 2) end
  local o = check_opts(opts)
  if not lc.current() then error("render: must be called from a luacrawl task", 2) end
  local scheme = url:match("^(%a[%w+.-]*):")
  if not scheme or (scheme:lower() ~= "http" and scheme:lower() ~= "https") then
    return nil, fail("invalid_url", "render: only http and https URLs are rendered", url)
  end
  local deadline = now() + o.timeout
  if not acquire(deadline) then return nil, fail("timeout", "render timed out waiting for a slot", url) end
  local ok, res, err = pcall(function()
    local b, e = get_browser(deadline)
    if not b then return nil, e end
    return render_with(b, url, o, deadline)
  end)
  release()
  if not ok then error(res, 0) end
  if err then err.url = err.url or url end
  return res, err
end

-- lc.browser{ path =, args =, render_concurrency =, max_memory =, hang_timeout = }:
-- settings for the browsers started from now on (the one running is kept). Returns
-- the settings in force.
function M.browser(opts)
  if opts == nil then return config end
  if type(opts) ~= "table" then error("browser: options must be a table", 2) end
  check_keys(opts, BROWSER_OPTIONS, "browser")
  if opts.path ~= nil and type(opts.path) ~= "string" then error("browser: path must be a string", 2) end
  if opts.args ~= nil then
    if type(opts.args) ~= "table" then error("browser: args must be a list of strings", 2) end
    for _, a in ipairs(opts.args) do
      if type(a) ~= "string" then error("browser: args must be a list of strings", 2) end
    end
  end
  local n = opts.render_concurrency
  if n ~= nil and (type(n) ~= "number" or n < 1 or n % 1 ~= 0) then
    error("browser: render_concurrency must be a whole number of at least 1", 2)
  end
  for _, k in ipairs({ "max_memory", "hang_timeout" }) do
    local v = opts[k]
    if v ~= nil and (type(v) ~= "number" or v <= 0) then error(("browser: %s must be above 0"):format(k), 2) end
  end
  for _, k in ipairs(BROWSER_OPTIONS) do
    if opts[k] ~= nil then config[k] = opts[k] end
  end
  return config
end

-- The browser now, for the tests: {pid=, profile=, rss=, alive=, spares=} or nil
-- (spares: the pages opened ahead, ready or opening).
function M.browser_info()
  if not current or current.dead then return nil end
  local info = core.browser_info(current.ud)
  info.spares = #(current.spares or {}) + (current.opening or 0)
  return info
end

return M
