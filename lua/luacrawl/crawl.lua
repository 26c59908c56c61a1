-- luacrawl.crawl: the crawl framework. crawl.run(spec) crawls from spec.start,
-- calling spec.parse(page) in worker tasks (each takes one request at a time); the
-- frontier (luacrawl.frontier) decides which request goes next so that per-host
-- limits, delays, robots.txt Crawl-delay and backoff hold without one host holding
-- up the others. This file is the crawl loop: admission, workers and dispatch,
-- retries, redirects, the run; the spec and its checks are crawl_spec.lua, the
-- robots.txt gate crawl_robots.lua, the outputs crawl_outputs.lua (their methods are
-- the crawler's), and what outlives a run the durable object (crawl_durable.lua).
local lc = require "luacrawl"
local core = require "luacrawl.core"
local Page = require "luacrawl.crawl_page"
local report = require "luacrawl.crawl_report"
local identity = require "luacrawl.crawl_identity"
local crawl_scope = require "luacrawl.crawl_scope"
local losses = require "luacrawl.crawl_losses"
local http_date = require "luacrawl.http_date"
local crawl_dupes = require "luacrawl.crawl_dupes"
-- crawl_warc, crawl_state and crawl_redis are loaded by the specs that use them
-- (crawl_spec.check, crawl_durable.open): a crawl without them starts without parsing them.
local crawl_durable = require "luacrawl.crawl_durable"
local crawl_spec = require "luacrawl.crawl_spec"
local crawl_robots = require "luacrawl.crawl_robots"
local crawl_outputs = require "luacrawl.crawl_outputs"
local calls = require "luacrawl.crawl_calls"
local crawl_hosts = require "luacrawl.crawl_hosts"
local crawl_steps = require "luacrawl.crawl_steps"
local plain_text = core.plain_text
local is_cancel, error_message, apply_hook = calls.is_cancel, calls.error_message, calls.apply_hook
local check_request, tell_error = calls.check_request, calls.tell_error

local M = {}
-- The page object given to parse (lua/luacrawl/crawl_page.lua); its methods are called by
-- name here (Page.html(page)), not through Page.__index.
M.Page = Page
-- The summary printed at the end of a run (lua/luacrawl/crawl_report.lua).
M.format_stats = report.format
-- A page from a URL and a body, for testing a parse (lua/luacrawl/crawl_testing.lua,
-- loaded by the first call).
function M.page(...)
  return require("luacrawl.crawl_testing").page(...)
end

local DEFAULTS = crawl_spec.defaults
-- Every default of the spec, in one place (crawl_spec.lua).
M.defaults = DEFAULTS

local unpack = unpack or table.unpack
local YEAR = crawl_spec.YEAR
-- lc.url.host without parsing a URL already in normalized form; host sets; and the
-- admission rules (bindings/lua_crawl.c).
local url_host, new_hosts, new_filter = core.crawl.host, core.crawl.hosts, core.crawl.filter

local function now()
  return lc.now()
end

-- The robots.txt key of a URL in normalized form (crawl_robots.lua).
local origin_of = crawl_robots.origin_of
local lc_current, lc_suspend, task_wake = lc.current, lc._suspend, core.wake

-- Requests --------------------------------------------------------------------------

local Crawler = {}
Crawler.__index = Crawler
-- The methods of the robots.txt gate and of the outputs, the crawler's own: called as
-- self:gate(...), self:emit(...), one lookup in Crawler as before they had files apart.
for _, part in ipairs({ crawl_robots, crawl_outputs, crawl_hosts }) do
  for name, fn in pairs(part.methods) do Crawler[name] = fn end
end

function Crawler:host_key(url)
  local k = self.spec.host_key
  if k == "host" then return url_host(url) end
  if type(k) == "function" then return calls.checked_key(k(url), url) end
  if k == "domain" then return lc.url.site(url) or url_host(url) end
  if k == "ip" then
    local addrs = lc.resolve(url_host(url))
    return addrs and addrs[1] or url_host(url)
  end
  return url_host(url)
end

function Crawler:in_scope(url, req)
  if self.deny and self.deny(url, req) then return false end
  if self.allow then
    local v = self.allow(url, req)
    if v == nil then losses.allow_answer(self, v) end
    return v and true or false
  end
  if self.spec.span_hosts then return true end
  return self.start_hosts:match(url)
end

-- The scope as the filter takes it: a host set it checks in C, "any", or "lua" when
-- it takes Lua (a function, URL regexes, deny): then in_scope answers.
function Crawler:filter_scope()
  if self.deny then return "lua" end
  if self.allow then return self.allow_hosts or "lua" end
  if self.spec.span_hosts then return "any" end
  return self.start_hosts
end

-- The rest of the rules for a URL the filter handed over to the Lua scope: the
-- normalized URL when it is in scope and new, else nil (and counted).
function Crawler:scoped(url, req)
  req.url = url
  return self.filter:scoped(url, self:in_scope(url, req), req.dont_filter or req.dedupe_key ~= nil)
end

-- Queue a request (a table with url, depth, ...) unless the admission rules refuse
-- it (invalid, too deep, out of scope, a duplicate: self.filter, which counts them),
-- on_request drops it or gate refuses it. Returns true when queued; false, the name
-- of the count and, for robots_unreachable, its cause when refused.
function Crawler:enqueue(req)
  local ok, err = check_request(req, "crawler:enqueue")
  if not ok then error(err, 2) end
  if self.refuse_new then return false end
  -- A request with a dedupe key of its own is checked by its key (admit), not its URL.
  local url, why = self.filter:check(req.url, req.depth or 0, req.dont_filter or req.dedupe_key ~= nil)
  if why == "scope" then url, why = self:scoped(url, req) end
  if not url then return false, why end
  req.url = url
  return self:admit(req)
end

-- The rest of enqueue, for a request whose URL is normalized, in scope and new.
function Crawler:admit(req)
  local st = self.stats
  req.key = req.key or self:host_key(req.url)
  if (self.lua_seen or req.dedupe_key ~= nil) and not self:first_seen(req) then return false, "duplicates" end
  if self.closed and self:refused_closed(req.key) then return false, "host_closed" end
  local given, why = req, nil
  req, why = apply_hook(self.spec.on_request, req)
  if not req then
    report.count_drop(st, why or "on_request")
    return false, "dropped"
  end
  if req ~= given then
    local ok, err = check_request(req, "on_request")
    if not ok then error(err, 0) end
  end
  req.key = req.key or self:host_key(req.url)
  local ok, why, cause = self:gate(req.url, req.key)
  if ok == false then return false, why, cause end
  if ok ~= true then return self:wait_robots(ok, req) end
  self.frontier:push(req)
  self:poke()
  return true
end

-- admit for a link followed with no options ({url, depth, referrer}): without an
-- on_request hook to show a table to, it is queued as its strings (push_url).
function Crawler:admit_link(url, depth, referrer)
  if self.spec.on_request or self.lua_seen or self.closed then
    return self:admit({ url = url, depth = depth, referrer = referrer })
  end
  local key = self:host_key(url)
  local ok = self:gate(url, key)
  if ok == false then return false end
  if ok ~= true then
    return self:wait_robots(ok, { url = url, depth = depth, referrer = referrer, key = key })
  end
  self.frontier:push_url(key, url, depth, referrer)
  self:poke()
  return true
end

-- A request that ends with an error raised on its way rather than a fetch's error:
-- counted in errors (kind "script", or the error's own kind), logged and told to
-- on_error (report). Never raises.
function Crawler:request_failed(req, err, fmt)
  if is_cancel(err) then error(err, 0) end
  self:count_error(lc.is_error(err) and err.kind or "script", req, err)
  self:report(req, err, fmt)
end

-- The options of a request's fetch: those of every fetch (made and read by the engine
-- once, lc.fetch_options, while spec.fetch and spec.user_agent stay the same objects)
-- unless it has its own method, headers or body, or own, its host's headers (spec.hosts:
-- crawl_steps.lua).
function Crawler:request_opts(req, own)
  if req.method == nil and req.headers == nil and req.body == nil and not own then
    local spec = self.spec
    local o, fetch, ua = self.base_opts, spec.fetch or false, spec.user_agent or false
    if not o or self.base_opts_of ~= fetch or self.base_opts_ua ~= ua then
      o = lc.fetch_options(self:fetch_opts())
      self.base_opts, self.base_opts_of, self.base_opts_ua = o, fetch, ua
    end
    return o
  end
  return self:fetch_opts({ method = req.method, headers = self:request_headers(req, own), body = req.body })
end

-- The crawl follows a page's redirects itself (Crawler:redirect: each hop through
-- the scope, robots.txt and the politeness rules), so spec.fetch.follow is not
-- passed on; robots.txt fetches follow theirs in the engine, within the site
-- (fetch_robots). spec.public_only and spec.deny_networks go with every fetch.
function Crawler:fetch_opts(extra)
  local o = {}
  for k, v in pairs(self.spec.fetch or {}) do o[k] = v end
  o.follow = nil
  if self.warc then o.archive = true end
  o.user_agent = o.user_agent or self.spec.user_agent or self.contact_agent
  if o.cookies == nil then o.cookies = self.jar end
  if self.spec.public_only ~= nil then o.public_only = self.spec.public_only end
  if self.spec.deny_networks ~= nil then o.deny_networks = self.spec.deny_networks end
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

-- Fetching one request ---------------------------------------------------------

-- Seconds or an HTTP date (lua/luacrawl/http_date.lua); nil when absent or neither.
local function retry_after(res)
  local v = res and res.headers["retry-after"]
  if not v then return nil end
  return http_date.retry_after(v, res.headers.date)
end

function Crawler:count_error(kind, req, err) -- req and err: a sample for luacrawl report
  report.count_error(self.stats, kind, req, err)
end

-- Put req back after a delay; true if it will be retried.
function Crawler:retry(req, res, kind)
  local tries = (req.retries or 0)
  if tries >= self.spec.retries then return false end
  if self.stopping then
    if not self.kept then return false, losses.retry_abandoned(self) end
    -- Stopping with a state: the request stays in it, and the next run retries it;
    -- with a fleet, it goes back to the fleet's queue.
    req.retries = tries + 1
    self.frontier:retry(req)
    return true, kind
  end
  req.retries = tries + 1
  self.stats.retries = self.stats.retries + 1
  local asked = retry_after(res)
  local backoff = math.min(self.spec.max_delay, 0.5 * 2 ^ tries) * (0.5 + math.random())
  local wait = math.min(asked or backoff, self.spec.max_retry_after)
  if asked and asked > wait then -- said, since the site asked for longer
    self:log(("%s: Retry-After %.0f s is over max_retry_after: retried in %.0f s"):format(
      lc.url.redact(req.url), asked, wait))
  end
  -- A 429 or 503 speaks for the host: the whole host key waits, not just this
  -- request, whatever its other pages answered meanwhile (docs/crawl.md).
  if res and (res.status == 429 or res.status == 503) then
    self.frontier:backoff(req.key, now() + wait)
    self.stats.host_backoffs = self.stats.host_backoffs + 1
  end
  self.delayed = self.delayed + 1
  self.retry_due[req] = now() + wait -- for the progress line
  -- A durable frontier keeps its row meanwhile; the fleet's waits in Redis, due then.
  self.frontier:retry(req, wait)
  self:background_guarded(function(err) -- the request ends here, as an error
    self:request_failed(req, err, "error retrying %s: %s")
  end, function()
    local ok, err = pcall(lc.sleep, wait)
    self.delayed = self.delayed - 1 -- first: whatever comes next, it no longer waits
    self.retry_due[req] = nil
    if not ok then error(err, 0) end
    if not self.stopping then
      losses.retry_queued(self, req)
      self.frontier:push(req)
      self:poke()
    else
      losses.retry_abandoned(self)
    end
  end)
  return true, kind
end

function Crawler:redirect(req, res)
  local st = self.stats
  st.redirects = st.redirects + 1
  local location = res.headers.location
  if not location then return end
  local to = lc.url.resolve(res.url, location)
  if not to then
    self:count_error("invalid_url")
    return
  end
  local scheme = to:match("^(%a[%w+.-]*):")
  if not scheme or (scheme:lower() ~= "http" and scheme:lower() ~= "https") then
    self:count_error("invalid_url")
    self:log(("refused redirect from %s to %s"):format(lc.url.redact(req.url), lc.url.redact(to)))
    return
  end
  local hops = (req.redirects or 0) + 1
  if hops > self.spec.max_redirect then
    st.redirect_limit = st.redirect_limit + 1
    return
  end
  self:enqueue({
    url = to, depth = req.depth, referrer = req.url, meta = req.meta, callback = req.callback,
    priority = req.priority, redirects = hops, dont_filter = req.dont_filter,
  })
end

function Crawler:throttle(req, res)
  local t = self.spec.throttle
  if not t then return end
  local key = req.key
  local latency = lc._elapsed(res)
  local target = latency / t.target
  local old = self.frontier:delay_of(key)
  local new = (old + target) / 2
  -- A failed response is not evidence that the server got faster.
  if res.status >= 400 and new < old then new = old end
  local rb = self.robots[origin_of(req.url)]
  local floor = math.max(t.min_delay, self.spec.delay, rb and rb.crawl_delay or 0)
  new = math.max(floor, math.min(new, t.max_delay or self.spec.max_delay))
  self.frontier:set_delay(key, new, true) -- paced: the throttle keeps per_host
end

-- A field of the page on_response returned that Page.__index never computes (changed,
-- duplicate_of): read raw from a page, where a nil one would call Page.__index.
local function page_field(page, k)
  if getmetatable(page) == Page then return rawget(page, k) end
  return page[k]
end

-- A page: seven fields in the eight slots of its constructor (its headers are its
-- response's, read on first use: Page.__index); changed (a recrawl's) is added only
-- when there is one, since a ninth key in the constructor would double the table for
-- every page.
function Crawler:make_page(req, res)
  local page = setmetatable({
    url = res.url, request = req, status = res.status,
    depth = req.depth or 0, meta = req.meta, response = res, crawler = self,
  }, Page)
  if req.changed ~= nil then rawset(page, "changed", req.changed) end
  if self.dupes then self.dupes:mark(page, self.stats) end
  return page
end

function Crawler:process(req)
  -- The optional parts' steps (crawl_steps.lua): false when no part takes one.
  local st, steps = self.stats, self.steps
  st.requests = st.requests + 1
  if self.sample_idle then report.wake(self) end
  local res, err = steps.fetch(self, req)
  if not res then
    if self.spec.retry_kinds[err.kind] and self:retry(req, nil, err.kind) then return end
    if steps.failed then steps.failed(self, req, err) end
    self:count_error(err.kind, req, err)
    local ok, herr = pcall(tell_error, self, req, err)
    if not ok then
      if is_cancel(herr) then error(herr, 0) end
      self:report(nil, herr, "error in on_error: %s")
    end
    return
  end
  report.response(st, req, res) -- bytes, status, and luacrawl report's counts
  if steps.response then steps.response(self, req, res) end
  if self.retry_status[res.status] and self:retry(req, res, "http_" .. res.status) then return end
  if steps.fetched then steps.fetched(self, req, res) end
  self:throttle(req, res)
  st.pages = st.pages + 1
  if steps.save then steps.save(self, req, res) end
  if req.recrawl then -- fetched again by a recrawl (crawl_state.lua)
    req.changed = require("luacrawl.crawl_state").changed(req, res)
    if not req.changed then st.unchanged = (st.unchanged or 0) + 1 end
  end
  local page = apply_hook(self.spec.on_response, self:make_page(req, res))
  -- A page a recrawl found unchanged has nothing new to parse (unless the spec asks).
  if page and not (page_field(page, "changed") == false and not self.spec.parse_unchanged) then
    if res.status >= 300 and res.status < 400 and res.headers.location then
      self:redirect(req, res)
    elseif not (page_field(page, "duplicate_of") and self.spec.dedupe_content) then
      local parse = req.callback or self.spec.parse or self.default_parse
      if type(parse) == "string" then parse = self:callback(parse) end
      local r = parse(page)
      if r ~= nil then losses.parse_returned(self, r) end
    end
  end
  -- The page is handled: with free_bodies, its body and document go now rather
  -- than at the next collection.
  if self.spec.free_bodies then res:release() end
end

-- A callback given by its name (a request kept in a state, or follow's own choice).
function Crawler:callback(name)
  local fn = self.spec.callbacks and self.spec.callbacks[name]
  if not fn then error(("no callback named '%s' in the spec's callbacks"):format(name), 0) end
  return fn
end

-- The parse used when a spec gives none: follow every link of HTML pages.
function M.follow_links(page)
  if Page.is_html(page) then Page.follow_links(page) end
end

-- The dispatcher ------------------------------------------------------------------

-- Report an error raised while handling req (fmt takes its URL and the message):
-- logged, and told to on_error as kind "script" (or the error's own kind). Never
-- raises: it runs in the error paths of workers and background tasks, where a raise
-- would leave the crawl waiting for something that never comes. An error in the
-- reporting itself (a raising on_error, no memory left) is counted in parse_errors
-- and logged with a fixed text.
function Crawler:report(req, err, fmt)
  if err == "not enough memory" then collectgarbage() end -- room to report it in
  local ok, rerr = pcall(function()
    local msg = error_message(err)
    if fmt then self:log(req and fmt:format(lc.url.redact(req.url), msg) or fmt:format(msg)) end
    if req then tell_error(self, req, lc.error(lc.is_error(err) and err.kind or "script", msg)) end
  end)
  if not ok then
    if is_cancel(rerr) then error(rerr, 0) end
    self.stats.parse_errors = self.stats.parse_errors + 1
    pcall(self.log, self, "error in on_error or while reporting an error: " .. error_message(rerr))
  end
end

-- A task the crawl needs (a robots.txt fetch, a retry waiting its turn): cancelled
-- when the crawl ends. An error it raises is reported (on_fail(err), when given,
-- settles what it was doing first) and ends only that task.
function Crawler:background(fn, ...)
  return self:background_guarded(nil, fn, ...)
end

function Crawler:background_guarded(on_fail, fn, ...)
  local t
  local args = { n = select("#", ...), ... }
  t = lc.spawn(function()
    local ok, err = pcall(fn, unpack(args, 1, args.n))
    self.background_tasks[t] = nil
    if ok or is_cancel(err) then return end
    if on_fail then
      local fok, ferr = pcall(on_fail, err)
      if not fok and not is_cancel(ferr) then self:report(nil, ferr, "error settling a failed task: %s") end
    else
      self:report(nil, err, "error in a background task: %s")
    end
    self:poke()
  end)
  self.background_tasks[t] = true
  return t
end

function Crawler:poke()
  local d = self.dispatcher_waiting
  if d then
    self.dispatcher_waiting = false
    lc._wake(d)
  end
end

function Crawler:wait(timeout)
  self.dispatcher_waiting = lc.current()
  lc._suspend(timeout)
  self.dispatcher_waiting = false
end

-- max_host_time: a host key gets that many seconds from its first request; then
-- what it still has queued is dropped and nothing new is queued for it.
function Crawler:host_time_spent(key)
  local limit, first = self.spec.max_host_time, self.host_first[key]
  return limit and first and now() - first > limit
end

-- Workers: long-lived tasks that each handle one request at a time, given to them by
-- the dispatcher (launch); a crawl makes at most `concurrency` of them, not a task
-- per request. A worker survives an error in parse (counted and logged) and ends
-- only when cancelled (drain, a second signal) or when a hook's error escapes.
function Crawler:work(req)
  local me = lc_current()
  local idle, steps = self.idle, self.steps
  while true do
    if steps.begin then steps.begin(self, req) end
    local ok, err = pcall(self.process, self, req)
    if steps.processed then steps.processed(self, req) end
    -- The request's end is counted before anything that may raise (reporting an
    -- error can fail too: out of memory, a hook's error): a count left behind
    -- would keep the crawl from ever finishing.
    self.active = self.active - 1
    if req.working then self:write_held(req, ok or not is_cancel(err)) end
    local dok, derr = pcall(self.frontier.done, self.frontier, req, now())
    if not ok then
      if is_cancel(err) then
        self:poke()
        error(err, 0)
      end
      -- Logged once per message: a bad selector fails every page the same way.
      local first = losses.parse_failed(self, req, err, error_message(err))
      self:report(req, err, first and "error in parse for %s: %s" or nil)
    end
    if not dok then self:report(req, derr, "error ending %s: %s") end
    if steps.ended then steps.ended(self, req) end
    self:poke()
    local n = self.nidle + 1
    idle[n] = me
    self.nidle = n
    req = lc_suspend() -- the next request, from launch
  end
end

function Crawler:launch(req)
  local key = req.key
  if not self.host_first[key] then self.host_first[key] = now() end
  if self:host_time_spent(key) then
    -- The request popped ends here too: a durable frontier forgets it (a fleet's is
    -- acknowledged as dropped, or its lease would keep it, and the crawl, for ever).
    self.frontier:forget(req)
    local dropped, on_disk = self.frontier:drop_host(key)
    self.stats.host_time_exceeded = self.stats.host_time_exceeded + 1 + #dropped + (on_disk or 0)
    self:poke()
    return
  end
  -- max_pages counts pages: not the retries of a request, nor its redirect hops.
  local new_page = not req.retries and not req.redirects
  local budget = self.steps.budget
  if new_page and budget and budget(self, req) then return end
  self.active = self.active + 1
  if new_page then
    self.launched = self.launched + 1
  elseif req.retries and self.retry_queued then
    self.retry_queued[req] = nil
  end
  -- An idle worker takes it (one cancelled meanwhile is passed over), else a new one.
  local idle, n = self.idle, self.nidle
  while n > 0 do
    local w = idle[n]
    idle[n] = nil
    n = n - 1
    self.nidle = n
    if task_wake(w, req) then return end
  end
  local w = lc.spawn(self.work, self, req)
  self.workers[#self.workers + 1] = w
end

-- Cancel every worker: those handling a request, and the idle ones.
function Crawler:cancel_workers()
  for _, w in ipairs(self.workers) do w:cancel() end
end

function Crawler:page_budget_left()
  local max = self.spec.max_pages
  return not max or self.launched < max
end

function Crawler:finished()
  return self.active == 0 and self.frontier:empty() and self.waiting_robots == 0 and self.delayed == 0
    and self.starting == 0
end

function Crawler:dispatch()
  local spec = self.spec
  while not self.stopping do
    if spec.max_time and now() - self.started > spec.max_time then
      self.stop_reason = "max_time"
      break
    end
    local wait
    -- With a state, pages done and not committed hold their slots (crawl_state.lua).
    local durable = self.durable
    local commit_wait = durable:commit_due(self, self.active, spec.concurrency)
    -- Paused from the dashboard (crawl_dashboard.lua): nothing new starts.
    while not self.paused and self.active + durable:held_slots() < spec.concurrency and self:page_budget_left() do
      local req
      req, wait = self.frontier:pop(now())
      if not req then break end
      self:launch(req)
    end
    if not self:page_budget_left() then
      self.stop_reason = "max_pages"
      break
    end
    if self:finished() then break end
    if spec.max_time then
      local left = spec.max_time - (now() - self.started)
      wait = wait and math.min(wait, left) or left
    end
    if commit_wait then wait = wait and math.min(wait, commit_wait) or commit_wait end
    self:wait(wait)
  end
end

-- Wait for requests in flight; after `grace` seconds, cancel them.
function Crawler:drain(grace)
  local deadline = now() + grace
  while self.active > 0 and now() < deadline do self:wait(math.max(0, deadline - now())) end
  self:cancel_workers()
end

-- Stop scheduling (a signal, max_pages, max_time): queued requests are dropped.
-- Without a state, nothing new is queued from then on (refuse_new); with one, the
-- requests that pages ending now find are kept in it for the next run.
function Crawler:stop(reason)
  if self.stopping then return end
  self.stopping = true
  self.refuse_new = not self.kept
  self.stop_reason = self.stop_reason or reason
  self:poke()
end

-- Politeness controls for policies written in hooks --------------------------------

-- The minimum interval between requests to a host key, now and from now on.
function Crawler:delay(key)
  return self.frontier:delay_of(key)
end

-- seconds, checked as the engine checks numbers (NaN or an infinite delay would
-- stall the host for ever); raises at the hook that passed it.
local function check_seconds(seconds, what)
  local ok, err = pcall(core.check_number, seconds, what, 0, YEAR)
  if not ok then error(tostring(err), 3) end
end

function Crawler:set_delay(key, seconds)
  check_seconds(seconds, "crawler:set_delay: seconds")
  self.frontier:set_delay(key, seconds)
  self:poke()
end

-- Ask nothing of this host key for `seconds`.
function Crawler:backoff(key, seconds)
  check_seconds(seconds, "crawler:backoff: seconds")
  self.frontier:backoff(key, now() + seconds)
  self:poke()
end

-- Signals, progress and logging ----------------------------------------------------

-- Messages carry what servers sent (URLs, headers): their control characters, but
-- tabs and newlines, never reach the terminal raw (core.plain_text).
function Crawler:log(msg)
  if not self.spec.quiet then io.stderr:write("luacrawl: ", plain_text(tostring(msg), "\t\n"), "\n") end
end

-- The progress line and the stats at the end: lua/luacrawl/crawl_report.lua.
Crawler.status_line, Crawler.final_stats = report.status_line, report.final

function Crawler:progress()
  return report.progress(self, DEFAULTS.progress_intervals)
end

function Crawler:watch_signals()
  for _, s in ipairs({ "INT", "TERM" }) do lc.signals.watch(s) end
  local first = lc.signals.wait()
  self.signal = first
  self:log(("got SIG%s: finishing requests in flight (again to abort)"):format(first))
  self:stop("SIG" .. first)
  lc.signals.wait()
  -- Second signal: abort at once, but keep the outputs whole.
  self.aborted = true
  self:cancel_workers()
  self:close_outputs()
  self:poke()
end

-- Running -------------------------------------------------------------------------

-- The crawler of a spec crawl_spec.check has checked and filled. An output that cannot be
-- opened is an error at level (the caller of crawl.new or crawl.run, so that its
-- message names the user's line, as crawl_spec.check's do).
local function create(spec, level)
  local start_hosts = new_hosts()
  local allow_fn, allow_hosts = crawl_scope.allow(spec.allow, start_hosts, spec.span_hosts)
  local self = setmetatable({
    spec = spec,
    seen = lc.seen(),
    stats = report.new(),
    robots = {},
    workers = {}, idle = {}, nidle = 0,
    background_tasks = {},
    host_keys = {},
    host_first = {}, host_pages = {},
    -- spec.hosts (crawl_hosts.lua); the seen set's rule in Lua (first_seen); the
    -- hosts closed (close_host): false when none, read for every request.
    hosts = spec.hosts and crawl_hosts.new(spec.hosts) or false,
    lua_seen = false, closed = false,
    outputs = {},
    active = 0, launched = 0, waiting_robots = 0, delayed = 0, starting = 0, retry_due = {},
    start_hosts = start_hosts,
    allow = allow_fn, allow_hosts = allow_hosts,
    deny = crawl_scope.deny(spec.deny, "deny"),
    agent = identity.user_agent(spec),
    contact_agent = identity.contact_agent(spec), jar = identity.jar(spec),
    retry_status = {}, dupes = crawl_dupes.new(spec) or false,
    -- Fields read for every page start false, not nil: a nil one is looked up in
    -- Crawler too, a metatable step each read. kept: durable.kept, read for every page.
    durable = false, kept = false, warc = false, refuse_new = false, dispatcher_waiting = false,
    watch = false, paused = false, -- spec.dashboard's (crawl_dashboard.lua)
    sample_idle = false, sampled_pages = 0,
    base_opts = false, base_opts_of = false, base_opts_ua = false, retry_queued = false,
    default_parse = spec.follow and Page.follow_selected(spec.follow) or M.follow_links,
    save_dir = spec.save or false, render = false,
  }, Crawler)
  -- spec.state (crawl_state.lua): the frontier, the seen set and the outputs' lengths
  -- from the state file; spec.redis (crawl_redis.lua): the frontier, seen set and
  -- robots.txt of a fleet; else the frontier in memory (crawl_durable.lua).
  self.lua_seen = (spec.dedupe_key or self.hosts and self.hosts.normalizes) and true or false
  local hosts = self.hosts
  local fopts = { per_host = spec.per_host, delay = spec.delay, depth_first = spec.depth_first,
    host = hosts and function(key) return hosts:of(key) end or nil }
  crawl_outputs.check_files(spec, level + 1)
  crawl_outputs.make_folders(spec, level + 1)
  local durable = crawl_durable.open(self, fopts)
  self.durable, self.kept = durable, durable.kept
  self.frontier = durable:open_frontier(self, fopts)
  local ok, err = pcall(self.open_parts, self)
  if ok then ok, err = pcall(self.start_outputs, self) end
  self.steps = ok and crawl_steps.new(self)
  if not ok then
    self:discard_outputs()
    durable:close()
    -- The position export.open gave is a line of this file: the caller's replaces it.
    error((tostring(err):gsub("^luacrawl/[%w_/]+%.lua:%d+: ", "")), level)
  end
  return self
end

function M.new(spec)
  local c = create(crawl_spec.check(spec, Crawler.fetch_opts), 3)
  return c
end

-- The crawler's parts that may fail to open, after the durable object: the sitemaps,
-- the admission rules, the outputs, the archive.
function Crawler:open_parts()
  local spec = self.spec
  self.sitemaps = spec.sitemaps and require("luacrawl.crawl_sitemaps").new(self, spec.sitemaps) or false
  self.filter = new_filter({
    seen = self.seen, stats = self.stats, normalize = spec.normalize, max_depth = spec.max_depth,
    scope = self:filter_scope(), record = not self.lua_seen,
  })
  for _, s in ipairs(spec.retry_statuses) do self.retry_status[s] = true end
  if spec.render or self.hosts and self.hosts.renders then self.render = require("luacrawl.crawl_render").new(self) end
  self:open_outputs()
  -- spec.warc, spec.from_warc (crawl_warc.lua): last, so that an output that cannot be
  -- created leaves no archive behind.
  if spec.warc or spec.from_warc then require("luacrawl.crawl_warc").attach(self) end
  if spec.dashboard then require("luacrawl.crawl_dashboard").attach(self) end
end

-- The fleet's Redis failed for good (an error reply: crawl_redis.lua): the crawl
-- stops; luacrawl crawl exits 2.
function Crawler:fleet_failed(msg)
  if self.fleet_error then return end
  self.fleet_error = msg
  self:log(msg .. ": stopping the crawl")
  self:stop("fleet_error")
  self:poke()
end

-- The state could not be written (crawl_state.lua): the crawl stops; luacrawl crawl
-- exits 2. What the last commit holds is intact.
function Crawler:state_failed(err)
  if self.state_error then return end
  self.state_error = tostring(err.message or err)
  self:log(self.state_error .. ": stopping the crawl (the state keeps what its last commit holds)")
  self:stop("state_error")
end

function Crawler:add_start(item)
  local req = type(item) == "string" and { url = item } or item
  local cok, cerr = check_request(req, "start")
  if not cok then error(cerr, 0) end
  req.depth = req.depth or 0
  local host = lc.url.host(req.url)
  if host then self.start_hosts:add(host) end
  if self.sitemaps then self.sitemaps:add_origin(req.url) end
  req.start_url = true
  self.stats.starts = (self.stats.starts or 0) + 1
  local ok, why, cause = self:enqueue(req)
  if not ok then losses.start_refused(self, req.url, why, cause) end
  return ok, why
end

function Crawler:start()
  local start = self.spec.start
  if type(start) == "string" then start = { start } end
  if self.sitemaps then self.sitemaps:start() end
  if type(start) == "function" then
    self.starting = self.starting + 1
    lc.spawn(function()
      local ok, err = pcall(start, function(item) return self:add_start(item) end)
      if not ok then self:log("error in start: " .. tostring(err)) end
      self.starting = self.starting - 1
      self:poke()
    end)
  else
    for _, item in ipairs(start) do self:add_start(item) end
  end
end

function Crawler:start_and_dispatch()
  if self.replay then return self.replay:run() end -- from_warc: no fetch at all
  self.durable:resume() -- the requests of earlier runs first
  self:start()
  self:dispatch()
end

-- A state whose crawl finished: said, and nothing fetched.
function Crawler:finished_before()
  self.started = now()
  io.stderr:write(("luacrawl: state %s: this crawl finished on %s; nothing to fetch\n"):format(
    self.spec.state, os.date("!%Y-%m-%d %H:%M:%S UTC", self.durable.finished_at)))
  self.durable:close()
  self:close_outputs()
  local st = self:final_stats()
  st.finished_before = true
  return st
end

function Crawler:run()
  if self.durable.finished_at then return self:finished_before() end
  self.started = now()
  local yields_before = lc.stats().yields_dropped
  local helpers = {}
  if self.spec.signals ~= false then helpers[#helpers + 1] = lc.spawn(self.watch_signals, self) end
  local show = self.spec.progress
  if show == nil then show = not self.spec.quiet end
  if show then helpers[#helpers + 1] = lc.spawn(self.progress, self) end
  helpers[#helpers + 1] = lc.spawn(report.sampler, self)
  if self.watch then helpers[#helpers + 1] = self.watch:start() end
  -- A state's task commits, and its commits flush the outputs too (crawl_state.lua).
  local committer = self.durable:start(self)
  if committer then
    helpers[#helpers + 1] = committer
  elseif #self.outputs > 0 then
    helpers[#helpers + 1] = lc.spawn(self.flush_loop, self)
  end
  -- An error of the crawl itself (a start list or on_request hook that raises
  -- outside any request) ends the crawl, but only after its helpers, workers and
  -- background tasks are stopped and its outputs closed: left running, they would
  -- keep the run from ever ending.
  local ok, err = pcall(self.start_and_dispatch, self)
  if not ok then self.aborted = true end
  self:stop(self.stop_reason or (ok and "done" or "error"))
  self:drain((self.aborted or self.stats.output_failed) and 0 or self.spec.stop_grace)
  for _, h in ipairs(helpers) do h:cancel() end
  losses.abandoned_retries(self)
  for t in pairs(self.background_tasks) do t:cancel() end
  if self.spec.signals ~= false then
    for _, s in ipairs({ "INT", "TERM" }) do lc.signals.unwatch(s) end
  end
  if self.progress_shown then io.stderr:write("\r\27[K") end
  -- The last commit comes before the outputs close: a JSON array's closing bracket
  -- is not part of what a resume appends to.
  -- The fleet: claims not started go back, the last acknowledgements are sent.
  self.durable:finish(self, ok and self.stop_reason == "done" and not self.aborted)
  self:close_outputs()
  if not ok then error(err, 0) end
  losses.finish(self, yields_before)
  local st = self:final_stats()
  if self.stats_file then
    -- A failed write is the crawler's write_error (luacrawl crawl exits 4 on it).
    local f = self.stats_file
    self.stats_file = nil
    local wok, werr = report.write_json(f, self.spec.stats_json, st)
    if not wok then
      self.write_error = self.write_error or werr
      self:log(self.write_error)
    end
  end
  self.write_error = self.write_error or st.output_failed
  local status, why = M.exit_status(self, st)
  if status ~= 0 then M.last_failure = { status, why } end
  if not self.spec.quiet then
    io.stderr:write(plain_text(report.format(st), "\n"), "\n")
  elseif report.losses(st) then
    -- quiet: the report's one line of what was lost, when something was.
    io.stderr:write("luacrawl: ", plain_text(report.losses(st)), "\n")
  end
  return st
end

-- The exit status of a crawl that ran, and why (crawl_report.lua says how).
M.exit_status = report.exit_status

-- The status of the last crawl of this process that failed ({status, why}), which
-- luacrawl run exits with when its script returns no status of its own.
M.last_failure = false

-- crawl.run(spec) -> stats. Inside a task (luacrawl run) it runs there; from plain
-- Lua (module mode) it drives the loop itself.
function M.run(spec)
  if not lc.current() then return lc.run(M.run, spec) end
  local c = create(crawl_spec.check(spec, Crawler.fetch_opts), 3) -- not M.new: its errors name the caller's line
  return c:run()
end

return M
