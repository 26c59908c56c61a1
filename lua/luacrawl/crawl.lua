-- luacrawl.crawl: the crawl framework. crawl.run(spec) crawls from spec.start,
-- calling spec.parse(page) in worker tasks (each takes one request at a time); the
-- frontier (luacrawl.frontier) decides which request goes next so that per-host
-- limits, delays, robots.txt Crawl-delay and backoff hold without one host holding
-- up the others.
--
-- The spec (every field optional but start):
--   start        URLs, or function(add) that calls add(url_or_request) (in a task)
--   parse        function(page): page.url/.status/.headers/.body/.depth/.meta,
--                page:css/css1/xpath/links/text/json, page:follow(...), page:emit(item)
--   allow, deny  scope: {hosts = {...}, urls = {regex, ...}} or function(url, req)
--                (default: the start URLs' hosts exactly; span_hosts = true for any
--                host; allow.hosts replaces them, with subdomains; allow.urls narrows
--                within the hosts in scope: lua/luacrawl/crawl_scope.lua)
--   public_only, deny_networks: the address policy of every fetch (lc.fetch's options)
--   max_depth, max_pages (requests for new URLs: retries and redirect hops are
--                not counted), max_time (seconds before scheduling stops),
--                max_host_time (seconds a host key gets from its first request)
--   concurrency (16), per_host (2), delay (0 s), host_key ("host" | "domain" | "ip"
--                | function(url) -> key), robots (true), max_delay (30 s),
--   throttle     {target = 2.0, min_delay =, max_delay =}
--   max_robots_size (500 KiB: the rest of a robots.txt is not read)
--   retries (2), retry_statuses ({429, 500, 502, 503, 504, 522, 524, 408}),
--   max_redirect (10), depth_first (false), user_agent, fetch (options for lc.fetch)
--   contact      URL or email appended to the default User-Agent: "luacrawl/V (+contact)"
--   cookies      (true) a cookie jar for the crawl; false for none, or a jar (lc.cookies())
--   sitemaps     true, a list of sitemap URLs, {since = "YYYY-MM-DD"}: pages the
--                sitemaps list are queued too (lua/luacrawl/crawl_sitemaps.lua)
--   on_host(key, crawler) is called once per new host key. Policies in hooks can
--   call crawler:set_delay(key, s), :backoff(key, s) and :delay(key) (in page
--   hooks, page.crawler and page.key; req.key is the host key).
--   on_request(req), on_response(page), on_item(item): return false to drop, a
--                table to replace, nil to keep; on_error(req, err) is told of each
--                request that failed for good (its return is ignored). on_response sees
--                every response, redirects too (dropping one stops the redirect);
--                parse sees the rest.
--   output       a file name (.jsonl/.csv, "-" for JSON Lines on stdout), {path=,
--                format="jsonl"|"csv"}, a function(item), or a list of those;
--                items = {} collects them too
--   fields       the CSV columns; with no parse and no callbacks, the fields of the
--                page record written for every response (crawl_record.lua)
--   stats_json   file for the final stats; quiet; progress (default: on unless
--                quiet): a status line on stderr refreshed every 0.5 s on a
--                terminal, a log line every 10 s otherwise (progress_interval)
--   signals      (true) SIGINT/SIGTERM stop the crawl gracefully; a second aborts
--   warc         "PREFIX" or {prefix =, max_size =, cdx =, dedupe = true, info =}: every
--                fetch archived (lua/luacrawl/crawl_warc.lua, docs/crawl.md)
--   from_warc    WARC files: parse runs on their responses instead of fetching
--   state        a state file (crawl_state.lua); redis, crawl_id (worker_id, lease):
--                a crawl shared by a fleet of workers (crawl_redis.lua)
-- Returns the stats table.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local frontier = require "luacrawl.frontier"
local robots = require "luacrawl.robots"
local export = require "luacrawl.export"
local Page = require "luacrawl.page"
local report = require "luacrawl.report"
local identity = require "luacrawl.crawl_identity"
local crawl_scope = require "luacrawl.crawl_scope"
local spec_check = require "luacrawl.spec_check"
local losses = require "luacrawl.crawl_losses"
local http_date = require "luacrawl.http_date"
local crawl_dupes = require "luacrawl.crawl_dupes"
-- crawl_warc, crawl_state and crawl_redis are loaded by the specs that use them
-- (optional_parts): a crawl without them starts without parsing them.
local crawl_record = require "luacrawl.crawl_record"
local plain_text = core.plain_text

local M = {}
-- The page object given to parse (lua/luacrawl/page.lua); its methods are called by
-- name here (Page.html(page)), not through Page.__index.
M.Page = Page
-- The summary printed at the end of a run (lua/luacrawl/report.lua).
M.format_stats = report.format
-- A page from a URL and a body, for testing a parse (lua/luacrawl/crawl_testing.lua,
-- loaded by the first call).
function M.page(...)
  return require("luacrawl.crawl_testing").page(...)
end

-- Every default of the spec, in one place (docs/crawl.md lists them, "The spec").
-- check_spec fills a spec's missing fields from here. Two defaults depend on the run:
-- throttle is off, and a throttle table's missing fields come from throttle_fields
-- (max_delay: the spec's); progress_interval is progress_intervals.terminal on a
-- terminal, else .other.
local DEFAULTS = {
  concurrency = 16, per_host = 2, delay = 0, max_delay = 30, retries = 2,
  max_redirect = 10, max_retry_after = 600, robots = true, host_key = "host", stop_grace = 10,
  max_robots_size = robots.max_bytes, robots_redirects = 5,
  retry_statuses = { 408, 429, 500, 502, 503, 504, 522, 524 },
  retry_kinds = { timeout = true, connect = true, protocol = true },
  throttle_fields = { target = 2.0, min_delay = 0 },
  progress_intervals = { terminal = 0.5, other = 10 },
}
M.defaults = DEFAULTS

local unpack = unpack or table.unpack
local YEAR = 365 * 24 * 3600 -- the longest wait a spec or hook may ask for, in seconds
-- lc.url.host without parsing a URL already in normalized form; host sets; and the
-- admission rules (bindings/lua_crawl.c).
local url_host, new_hosts, new_filter = core.crawl.host, core.crawl.hosts, core.crawl.filter

local function now()
  return lc.now()
end

-- The origin (scheme://host[:port]) of a URL in normalized form, which has a '/'
-- after its host: the robots.txt key. A plain find, not a pattern, for every page.
local find, sub = string.find, string.sub
local function origin_of(url)
  local slash = find(url, "/", 9, true) -- past "http://h" and "https://"
  if slash then return sub(url, 1, slash - 1) end
  return url:match("^(https?://[^/]+)")
end
local lc_current, lc_suspend, task_wake = lc.current, lc._suspend, core.wake

-- An error a task raises when it is cancelled (the crawl ending): passed on, never
-- reported.
local function is_cancel(err)
  return type(err) == "table" and err.kind == "cancelled"
end

-- The message of an error raised in a task, as a string; a fixed one when even that
-- fails (a __tostring that raises, no memory left to format it).
local function error_message(err)
  if type(err) == "string" then return err end
  local ok, msg = pcall(tostring, err)
  if ok and type(msg) == "string" then return msg end
  return "an error whose message could not be made"
end

-- Scope ---------------------------------------------------------------------------

-- A predicate from a scope spec: a function, or a table of hosts (a host set that
-- takes subdomains) and URL regexes; and, for a table of hosts alone, that host set
-- (the filter checks it in C).
local function scope_rule(rule, name)
  if rule == nil then return nil end
  if type(rule) == "function" then return rule end
  if type(rule) ~= "table" then error(("crawl: %s must be a table or a function"):format(name), 3) end
  local ok, hosts = true, nil
  if rule.hosts then ok, hosts = pcall(new_hosts, rule.hosts, true) end
  if not ok then error(("crawl: %s.%s"):format(name, hosts), 3) end
  local res = {}
  for _, pattern in ipairs(rule.urls or rule.regex or {}) do
    res[#res + 1] = type(pattern) == "string" and lc.regex(pattern) or pattern
  end
  return function(url)
    if hosts and hosts:match(url) then return true end
    for _, re in ipairs(res) do
      if re:test(url) then return true end
    end
    return false
  end, res[1] == nil and hosts or nil
end

-- Requests --------------------------------------------------------------------------

local Crawler = {}
Crawler.__index = Crawler

function Crawler:host_key(url)
  local k = self.spec.host_key
  if k == "host" then return url_host(url) end
  if type(k) == "function" then return k(url) end
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

-- Apply a hook: false drops, a table replaces, nil keeps.
local function apply_hook(hook, value, ...)
  if not hook then return value end
  local r = hook(value, ...)
  if r == false then return nil end
  if type(r) == "table" then return r end
  return value
end

-- The rest of the rules for a URL the filter handed over to the Lua scope: the
-- normalized URL when it is in scope and new, else nil (and counted).
function Crawler:scoped(url, req)
  req.url = url
  return self.filter:scoped(url, self:in_scope(url, req), req.dont_filter)
end

-- Queue a request (a table with url, depth, ...) unless the admission rules refuse
-- it (invalid, too deep, out of scope, a duplicate: self.filter, which counts them),
-- on_request drops it or gate refuses it. Returns true when queued; false, the name
-- of the count and, for robots_unreachable, its cause when refused.
function Crawler:enqueue(req)
  if self.refuse_new then return false end
  local url, why = self.filter:check(req.url, req.depth or 0, req.dont_filter)
  if why == "scope" then url, why = self:scoped(url, req) end
  if not url then return false, why end
  req.url = url
  return self:admit(req)
end

-- What every request that on_request kept goes through before it is queued: its
-- host's time budget, the first sight of the host (on_host), robots.txt. Returns
-- true (queue it), false and the name of the count (refused, and counted; and the
-- cause, when robots.txt was unreachable), or the list of the requests waiting for
-- its origin's robots.txt (fetched now if it was not asked for yet).
function Crawler:gate(url, key)
  local st = self.stats
  if self:host_time_spent(key) then
    st.host_time_exceeded = st.host_time_exceeded + 1
    return false, "host_time_exceeded"
  end
  if not self.host_keys[key] then
    self.host_keys[key] = true
    if self.spec.on_host then self.spec.on_host(key, self) end
  end
  if self.spec.robots ~= false then
    local origin = origin_of(url)
    local rb = self.robots[origin]
    if not rb then rb = self:ask_robots(origin, key) end
    if rb.pending then return rb.pending end
    if not rb.rules:allowed(self.agent, url) then
      local rules = rb.rules
      self:robots_refused(rules)
      return false, rules.unreachable and "robots_unreachable" or "robots_denied", rules.unreachable
    end
  end
  return true
end

-- The entry of origin's robots.txt, asked for now (fetch_robots, in the background).
-- Apart from gate: a closure there would capture gate's locals, and closing them on
-- every call (bytecode UCLO) is not compiled by LuaJIT, which then runs gate, and the
-- traces of page:follow that call it, in the interpreter.
function Crawler:ask_robots(origin, key)
  local rb = { pending = {} }
  self.robots[origin] = rb
  self:background_guarded(function(err)
    self:robots_failed(origin, err, lc.is_error(err) and err.kind or "script")
  end, self.fetch_robots, self, origin, key)
  return rb
end

-- req waits for robots.txt in pending (a list gate returned).
function Crawler:wait_robots(pending, req)
  self.frontier:hold(req) -- a durable frontier keeps it meanwhile
  pending[#pending + 1] = req
  self.waiting_robots = self.waiting_robots + 1
  return true
end

-- The rest of enqueue, for a request whose URL is normalized, in scope and new.
function Crawler:admit(req)
  local st = self.stats
  req.key = req.key or self:host_key(req.url)
  req = apply_hook(self.spec.on_request, req)
  if not req then
    st.dropped = st.dropped + 1
    return false, "dropped"
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
  if self.spec.on_request then
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

-- robots.txt for origin: fetched once (following robots_redirects redirects), then the
-- requests that waited for it are let through or counted as denied.
function Crawler:fetch_robots(origin, key)
  local st = self.stats
  -- RFC 9309: at most 500 KiB is parsed; a larger file is cut there, not refused.
  -- Redirects are followed up to robots_redirects hops within the origin's site
  -- (registrable domain, as Google does); a 3xx left over (off the site, or past the
  -- hops) makes the file unavailable: robots.for_status.
  -- With a state, a robots.txt an earlier run read less than a day ago is used again.
  -- With a fleet (redis), it is fetched once for the fleet and kept in Redis.
  local keeper = self.state or self.fleet
  local res, err = keeper and keeper:robots(origin)
  if not res then
    res, err = lc.fetch(origin .. "/robots.txt", self:fetch_opts({
      follow = self.spec.robots_redirects, follow_site = true,
      max_size = self.spec.max_robots_size, truncate = true,
    }))
    st.robots_fetched = st.robots_fetched + 1
    if res and self.warc then self.warc:write(res) end
    if res and self.state then self.state:save_robots(origin, res) end
    if self.fleet then self.fleet:save_robots(origin, res) end
  end
  local rules
  if not res and err.kind == "dns" then return self:robots_unresolved(origin, err) end
  if not res then
    rules = robots.disallow_all()
    rules.origin, rules.unreachable = lc.url.redact(origin), losses.cause(err)
    self:log(("robots.txt of %s unreachable (%s): the host is not crawled"):format(lc.url.redact(origin), tostring(err)))
  else
    local what = robots.for_status(res.status)
    if what == "parse" then
      rules = robots.parse(res.body)
    elseif what == "allow_all" then
      rules = robots.allow_all()
      if res.status >= 300 and res.status < 400 then
        self:log(("robots.txt of %s redirects off its site or past %d hops (to %s): not followed, all allowed"):format(
          lc.url.redact(origin), self.spec.robots_redirects, lc.url.redact(tostring(res.headers.location))))
      end
    else
      rules = robots.disallow_all()
      if res.status >= 500 then
        rules.origin, rules.unreachable = lc.url.redact(origin), ("HTTP status %d"):format(res.status)
      end
      self:log(("robots.txt of %s answered %d: the host is not crawled"):format(lc.url.redact(origin), res.status))
    end
  end
  local rb = self.robots[origin]
  rb.rules = rules
  local delay = rules:crawl_delay(self.agent)
  if delay then
    delay = math.min(delay, self.spec.max_delay)
    if delay > self.frontier:delay_of(key) then self.frontier:set_delay(key, delay) end
    rb.crawl_delay = delay
  end
  if self.sitemaps then self.sitemaps:robots_read(origin, rules) end
  local pending = rb.pending
  rb.pending = nil
  self.waiting_robots = self.waiting_robots - #pending
  for _, req in ipairs(pending) do
    if not self.refuse_new then
      -- One request's error (a rule that raises, no memory) ends that request only.
      local ok, e = pcall(self.after_robots, self, rules, req)
      if not ok then self:request_failed(req, e, "error letting %s through robots.txt: %s") end
    end
  end
  self:poke()
end

-- A request that waited for robots.txt: queued, or counted as denied.
function Crawler:after_robots(rules, req)
  if rules:allowed(self.agent, req.url) then
    self.frontier:push(req)
  else
    self.frontier:forget(req)
    self:robots_refused(rules, req)
  end
end

-- A request robots.txt refused: a denial; or, when the file could not be reached
-- (RFC 9309: a network error or 5xx means "assume disallow"), an error of kind
-- robots_unreachable, told to on_error, its cause in the report (robots_unreachable).
function Crawler:robots_refused(rules, req)
  local st = self.stats
  if req and req.start_url then
    losses.start_refused(self, req.url, rules.unreachable and "robots_unreachable" or "robots_denied", rules.unreachable)
  end
  if not rules.unreachable then
    st.robots_denied = st.robots_denied + 1
    return
  end
  self:count_error("robots_unreachable")
  st.robots_unreachable = st.robots_unreachable or {}
  st.robots_unreachable[rules.origin] = rules.unreachable
  if req and self.spec.on_error then
    local ok, herr = pcall(self.spec.on_error, req, lc.error("robots_unreachable", rules.unreachable))
    if not ok then self:report(nil, herr, "error in on_error: %s") end
  end
end

-- A request that ends with an error raised on its way rather than a fetch's error:
-- counted in errors (kind "script", or the error's own kind), logged and told to
-- on_error (report). Never raises.
function Crawler:request_failed(req, err, fmt)
  if is_cancel(err) then error(err, 0) end
  self:count_error(lc.is_error(err) and err.kind or "script")
  self:report(req, err, fmt)
end

-- robots.txt of origin failed in DNS: the origin's pages cannot be fetched either,
-- and that says nothing of its rules. Each request that waited is a DNS error of its
-- own (counted in errors, told to on_error), never a robots denial; the next request
-- for the origin asks for robots.txt again (at once from the resolver's negative
-- cache while that lasts, then afresh).
function Crawler:robots_unresolved(origin, err)
  self:robots_failed(origin, err, "dns")
end

-- robots.txt of origin could not be had (a DNS failure, kind "dns"; an error raised
-- while fetching or parsing it, kind "script": a request that cannot be built, a
-- hostile file): every request that waited for it ends as an error of that kind, and
-- the origin's entry goes, so that the next request for it asks again. The waiting
-- count drops first: nothing below may leave the crawl waiting for these requests.
function Crawler:robots_failed(origin, err, kind)
  local rb = self.robots[origin]
  local pending = rb and rb.pending or {}
  self.robots[origin] = nil
  self.waiting_robots = self.waiting_robots - #pending
  self:poke()
  local msg = error_message(err)
  pcall(self.log, self, "robots.txt of " .. lc.url.redact(origin) .. ": " .. msg)
  if self.stopping then return end
  for _, req in ipairs(pending) do
    self.frontier:forget(req)
    self:count_error(kind)
    if self.spec.on_error then
      local e = kind == "dns" and err or lc.error(kind, msg)
      local ok, herr = pcall(self.spec.on_error, req, e)
      if not ok then self:report(nil, herr, "error in on_error: %s") end
    end
  end
end

-- The options of a request's fetch: those of every fetch (made once, while
-- spec.fetch and spec.user_agent stay the same objects) unless it has its own
-- method, headers or body.
function Crawler:request_opts(req)
  if req.method == nil and req.headers == nil and req.body == nil then
    local spec = self.spec
    local o, fetch, ua = self.base_opts, spec.fetch or false, spec.user_agent or false
    if not o or self.base_opts_of ~= fetch or self.base_opts_ua ~= ua then
      o = self:fetch_opts()
      self.base_opts, self.base_opts_of, self.base_opts_ua = o, fetch, ua
    end
    return o
  end
  return self:fetch_opts({ method = req.method, headers = req.headers, body = req.body })
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

function Crawler:emit(item, page)
  item = apply_hook(self.spec.on_item, item, page)
  if not item then return false end
  self.stats.items = self.stats.items + 1
  -- With a state, a page's items reach the outputs when its request is done
  -- (Crawler:work), in the same step as the state's record of it; with a fleet,
  -- before its acknowledgement (and not at all when it is cancelled: it goes back).
  local req = (self.state or self.fleet) and page and page.request
  if req and req.working then
    local held = req.held
    if not held then
      held = {}
      req.held = held
    end
    held[#held + 1] = item
    return true
  end
  return self:write_item(item)
end

function Crawler:write_item(item)
  for _, out in ipairs(self.outputs) do
    -- An output that raises (a function output, an item it cannot encode) refuses
    -- the item as one that returns nil, err does.
    local ok, wok, err = pcall(out.write, out, item)
    if not ok then
      if is_cancel(wok) then error(wok, 0) end
      err = wok
    end
    if out.failed then
      self:output_failed(out)
    elseif not (ok and wok) then
      self.stats.output_errors = self.stats.output_errors + 1
      self:log(("output %s: %s"):format(tostring(out.name), error_message(err)))
    end
    if out.warning then losses.warn_once(self, out, out.warning) end
  end
  -- A program embedding the engine takes items too (lc_engine_on_item).
  local to_host = lc.host._item
  if to_host then to_host(item) end
  return true
end

-- A write, flush or close of a file output failed (export.lua): its records are lost
-- from then on, so the crawl stops rather than fetch pages it cannot record; the
-- items it lost are not counted in stats.items (items_lost: the most one output
-- lost). Logged and counted in output_errors once per output.
function Crawler:output_failed(out)
  local st = self.stats
  if out.lost > st.items_lost then
    st.items = st.items - (out.lost - st.items_lost)
    st.items_lost = out.lost
  end
  self.broken_outputs = self.broken_outputs or {}
  if self.broken_outputs[out] then return end
  self.broken_outputs[out] = true
  st.output_errors = st.output_errors + 1
  st.output_failed = st.output_failed or out.failed
  self:log(("output failed: %s: stopping the crawl"):format(out.failed))
  self:stop("output_failed")
end

-- Fetching one request ---------------------------------------------------------

-- Seconds or an HTTP date (lua/luacrawl/http_date.lua); nil when absent or neither.
local function retry_after(res)
  local v = res and res.headers["retry-after"]
  if not v then return nil end
  return http_date.retry_after(v, res.headers.date)
end

function Crawler:count_error(kind)
  local e = self.stats.errors
  e[kind] = (e[kind] or 0) + 1
  self.stats.errors_total = self.stats.errors_total + 1
end

-- Put req back after a delay; true if it will be retried.
function Crawler:retry(req, res, kind)
  local tries = (req.retries or 0)
  if tries >= self.spec.retries then return false end
  if self.stopping then
    if not (self.state or self.fleet) then return false end
    -- Stopping with a state: the request stays in it, and the next run retries it;
    -- with a fleet, it goes back to the fleet's queue.
    req.retries = tries + 1
    self.frontier:retry(req)
    return true, kind
  end
  req.retries = tries + 1
  self.stats.retries = self.stats.retries + 1
  local wait = retry_after(res)
  local backoff = math.min(self.spec.max_delay, 0.5 * 2 ^ tries) * (0.5 + math.random())
  wait = math.min(wait or backoff, self.spec.max_retry_after)
  -- A 429 or 503 speaks for the host: the whole host key waits, not just this
  -- request, whatever its other pages answered meanwhile (docs/crawl.md).
  if res and (res.status == 429 or res.status == 503) then
    self.frontier:backoff(req.key, now() + wait)
    self.stats.host_backoffs = self.stats.host_backoffs + 1
  end
  self.delayed = self.delayed + 1
  -- A durable frontier keeps its row meanwhile; the fleet's waits in Redis, due then.
  self.frontier:retry(req, wait)
  self:background_guarded(function(err) -- the request ends here, as an error
    self:request_failed(req, err, "error retrying %s: %s")
  end, function()
    local ok, err = pcall(lc.sleep, wait)
    self.delayed = self.delayed - 1 -- first: whatever comes next, it no longer waits
    if not ok then error(err, 0) end
    if not self.stopping then
      self.frontier:push(req)
      self:poke()
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
  local latency = res.time.total
  local target = latency / t.target
  local old = self.frontier:delay_of(key)
  local new = (old + target) / 2
  -- A failed response is not evidence that the server got faster.
  if res.status >= 400 and new < old then new = old end
  local rb = self.robots[origin_of(req.url)]
  local floor = math.max(t.min_delay, self.spec.delay, rb and rb.crawl_delay or 0)
  new = math.max(floor, math.min(new, t.max_delay or self.spec.max_delay))
  self.frontier:set_delay(key, new)
end

-- A field of the page on_response returned that Page.__index never computes (changed,
-- duplicate_of): read raw from a page, where a nil one would call Page.__index.
local function page_field(page, k)
  if getmetatable(page) == Page then return rawget(page, k) end
  return page[k]
end

-- A page: eight fields in the eight slots of its constructor; changed (a recrawl's)
-- is added only when there is one, since a ninth key in the constructor would double
-- the table for every page.
function Crawler:make_page(req, res)
  local page = setmetatable({
    url = res.url, request = req, status = res.status, headers = res.headers,
    depth = req.depth or 0, meta = req.meta, response = res, crawler = self,
  }, Page)
  if req.changed ~= nil then rawset(page, "changed", req.changed) end
  if self.dupes then self.dupes:mark(page, self.stats) end
  return page
end

function Crawler:process(req)
  local st = self.stats
  st.requests = st.requests + 1
  local res, err = lc.fetch(req.url, self:request_opts(req))
  if not res then
    if self.spec.retry_kinds[err.kind] and self:retry(req, nil, err.kind) then return end
    if self.state then self.state:failed(req, err.kind) end
    if self.fleet then self.fleet:failed(req, err.kind) end
    self:count_error(err.kind)
    if self.spec.on_error then self.spec.on_error(req, err) end
    return
  end
  st.bytes = st.bytes + (res.size or #res.body)
  st.statuses[res.status] = (st.statuses[res.status] or 0) + 1
  if self.warc then self.warc:response(req, res) end
  if self.retry_status[res.status] and self:retry(req, res, "http_" .. res.status) then return end
  if self.warc then self.warc:handle(req, res) end
  if self.state then self.state:fetched(req, res) end
  if self.fleet then self.fleet:fetched(req, res) end
  self:throttle(req, res)
  st.pages = st.pages + 1
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
      local parse = req.callback or self.spec.parse or M.follow_links
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
    if req and self.spec.on_error then
      local kind = lc.is_error(err) and err.kind or "script"
      self.spec.on_error(req, lc.error(kind, msg))
    end
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
  local idle = self.idle
  while true do
    if self.state or self.fleet then req.working = true end
    local ok, err = pcall(self.process, self, req)
    if self.warc then pcall(self.warc.finish, self.warc, req) end -- its metadata record
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
    if self.state then self.state:page_ended() end
    self:poke()
    local n = self.nidle + 1
    idle[n] = me
    self.nidle = n
    req = lc_suspend() -- the next request, from launch
  end
end

-- With a state: the items a page emitted, written as its request is done (not when
-- it was cancelled: then it is not done, and is fetched again at the next run).
function Crawler:write_held(req, done)
  req.working = nil
  local held = req.held
  req.held = nil
  if not done then
    req.retrying = true -- its row stays
    return
  end
  for _, item in ipairs(held or {}) do
    local ok, err = pcall(self.write_item, self, item)
    if not ok then self:report(req, err, "error writing an item of %s: %s") end
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
  self.active = self.active + 1
  -- max_pages counts pages: not the retries of a request, nor its redirect hops.
  if not req.retries and not req.redirects then self.launched = self.launched + 1 end
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
    local state = self.state
    local commit_wait = state and state:commit_due(self, self.active, spec.concurrency)
    while self.active + (state and state:held_slots() or 0) < spec.concurrency and self:page_budget_left() do
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
  self.refuse_new = not (self.state or self.fleet)
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

-- The progress line and the stats at the end: lua/luacrawl/report.lua.
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

-- out:flush() or out:close() on every output; failures counted and logged.
function Crawler:each_output(method)
  for _, out in ipairs(self.outputs) do
    local ok, mok, err = pcall(out[method], out)
    if not ok then err = mok end
    if out.failed then
      self:output_failed(out)
    elseif not (ok and mok) then
      self.stats.output_errors = self.stats.output_errors + 1
      self:log(error_message(err))
    end
  end
end

function Crawler:flush_outputs()
  self:each_output("flush")
end

function Crawler:close_outputs()
  self:each_output("close")
  if self.warc then self.warc:close() end
end

-- Running -------------------------------------------------------------------------

-- The numbers of a spec and the range each takes ({integer?, min, max}; no max: up
-- to the largest integer a number holds exactly, or a year of seconds), checked by
-- the engine's one rule (core.check_number/check_integer): NaN and infinities are
-- refused, which would otherwise hang the dispatcher (NaN compares false with every
-- limit) or stop a host for ever (an infinite delay). nil is the default.
local SPEC_NUMBERS = {
  concurrency = { true, 1 }, per_host = { true, 1 }, retries = { true, 0 },
  max_redirect = { true, 0 }, max_depth = { true, 0 }, max_pages = { true, 0 },
  max_robots_size = { true, 0 }, robots_redirects = { true, 0 },
  delay = { false, 0, YEAR }, max_delay = { false, 0, YEAR }, max_retry_after = { false, 0, YEAR },
  stop_grace = { false, 0, YEAR }, max_time = { false, 0, YEAR }, max_host_time = { false, 0, YEAR },
  progress_interval = { false, 0.001, YEAR },
}
local THROTTLE_NUMBERS = {
  target = { false, 0.001, 1e6 }, min_delay = { false, 0, YEAR }, max_delay = { false, 0, YEAR },
}

-- Check the numbers of t named in ranges; what prefixes a field's name in messages.
local function check_fields(t, ranges, what)
  for k, r in pairs(ranges) do
    local v = t[k]
    if v ~= nil then
      local ok, err = pcall(r[1] and core.check_integer or core.check_number, v, what .. k, r[2], r[3])
      if not ok then error(tostring(err), 0) end
    end
  end
end

local function check_numbers(s)
  local ok, err = pcall(function()
    check_fields(s, SPEC_NUMBERS, "crawl.run: ")
    if type(s.throttle) == "table" then check_fields(s.throttle, THROTTLE_NUMBERS, "crawl.run: throttle.") end
    if type(s.retry_statuses) ~= "table" then error("crawl.run: retry_statuses must be a list of HTTP statuses", 0) end
    for i, v in ipairs(s.retry_statuses) do
      local vok, verr = pcall(core.check_integer, v, ("crawl.run: retry_statuses[%d]"):format(i), 100, 999)
      if not vok then error(tostring(verr), 0) end
    end
  end)
  if not ok then error(err, 4) end
end

-- The kinds of fetch error (engine/http.h, docs/toolkit.md "Errors"): the names
-- retry_kinds may use.
local ERROR_KINDS = core.error_kinds()
local HOST_KEYS = { "host", "domain", "ip" }

-- The fields that take one of a few names: a misspelling would otherwise be ignored
-- (host_key "domian" keyed by host; retry_kinds {timout = true} retried nothing).
-- retry_kinds as a list ({"timeout", "dns"}) becomes the set the crawl reads.
local function check_choices(s)
  local k = s.host_key
  if type(k) ~= "function" then
    local ok = false
    for _, name in ipairs(HOST_KEYS) do ok = ok or k == name end
    if not ok then
      error(("crawl.run: host_key must be \"host\", \"domain\", \"ip\" or a function (got %s)%s"):format(
        type(k) == "string" and ("'" .. k .. "'") or type(k), type(k) == "string" and spec_check.hint(k, HOST_KEYS) or ""), 0)
    end
  end
  if type(s.retry_kinds) ~= "table" then
    error("crawl.run: retry_kinds must be a set of error kinds ({timeout = true}) or a list of them", 0)
  end
  local set = {}
  for key, v in pairs(s.retry_kinds) do
    local name = type(key) == "number" and v or key
    if type(name) ~= "string" then
      error("crawl.run: retry_kinds must be a set of error kinds ({timeout = true}) or a list of them", 0)
    end
    local known = false
    for _, kind in ipairs(ERROR_KINDS) do known = known or name == kind end
    if not known then
      error(("crawl.run: retry_kinds: no error kind '%s'%s (the kinds: %s)"):format(name,
        spec_check.hint(name, ERROR_KINDS), table.concat(ERROR_KINDS, ", ")), 0)
    end
    if type(key) == "number" or v then set[name] = true end
  end
  s.retry_kinds = set
end

-- The optional parts (spec_check.optional) the spec given sets a field of, loaded:
-- their modules, in that list's order. Loaded before the spec is checked, so that
-- their nested tables' names are known.
local function optional_parts(s)
  local parts = {}
  for _, part in ipairs(spec_check.optional) do
    for _, name in ipairs(part.fields) do
      if s[name] ~= nil then
        parts[#parts + 1] = require(part.module)
        break
      end
    end
  end
  return parts
end

local function check_spec(spec)
  if type(spec) ~= "table" then error("crawl.run: spec must be a table", 3) end
  if spec.start == nil and spec.from_warc == nil then error("crawl.run: spec.start is required (URLs or a function)", 3) end
  local parts = optional_parts(spec)
  local kok, kerr = pcall(spec_check.check, spec, DEFAULTS)
  if not kok then error(kerr, 3) end
  local s = {}
  for k, v in pairs(DEFAULTS) do s[k] = v end
  for k, v in pairs(spec) do s[k] = v end
  if type(s.throttle) == "table" then
    local t = {}
    for k, v in pairs(DEFAULTS.throttle_fields) do t[k] = v end
    for k, v in pairs(s.throttle) do t[k] = v end
    s.throttle = t
  end
  check_numbers(s)
  local ok, err = pcall(core.check_networks, s.deny_networks, "crawl.run")
  if not ok then error(err, 3) end
  ok, err = pcall(identity.check, s)
  if not ok then error(err, 3) end
  -- crawl_sitemaps (and the sitemap parser) load for a spec that asks for sitemaps.
  if s.sitemaps then
    ok, err = pcall(require("luacrawl.crawl_sitemaps").check, s.sitemaps)
    if not ok then error(err, 3) end
    s.sitemaps = err
  else
    s.sitemaps = nil -- false: off
  end
  for _, part in ipairs(parts) do
    ok, err = pcall(part.check, s)
    if not ok then error(err, 3) end
  end
  ok, err = pcall(check_choices, s)
  if ok then ok, err = pcall(crawl_record.setup, s) end
  if not ok then error(err, 3) end
  if s.fetch ~= nil and type(s.fetch) ~= "table" then error("crawl.run: fetch must be a table of lc.fetch options", 3) end
  -- The options every fetch of the crawl is made with, checked as lc.fetch checks
  -- them: a request that can never be built (a header with CR or LF) is refused here,
  -- not failed by every request (and by robots.txt, which the rest would wait for).
  ok, err = pcall(core.check_fetch_options, Crawler.fetch_opts({ spec = s }))
  if not ok then error("crawl.run: " .. tostring(err), 3) end
  -- As lc.fetch says it (there is no "no timeout"), but before the first request.
  local timeout = type(s.fetch) == "table" and s.fetch.timeout or nil
  if timeout ~= nil and not (type(timeout) == "number" and timeout > 0 and timeout < math.huge) then
    error("crawl.run: fetch.timeout must be a number of seconds more than 0 (there is no 'no limit')", 3)
  end
  return s
end

-- The crawler of a spec check_spec has checked and filled. An output that cannot be
-- opened is an error at level (the caller of crawl.new or crawl.run, so that its
-- message names the user's line, as check_spec's do).
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
    host_first = {},
    outputs = {},
    active = 0, launched = 0, waiting_robots = 0, delayed = 0, starting = 0,
    start_hosts = start_hosts,
    allow = allow_fn, allow_hosts = allow_hosts,
    deny = scope_rule(spec.deny, "deny"),
    agent = identity.user_agent(spec),
    contact_agent = identity.contact_agent(spec), jar = identity.jar(spec),
    retry_status = {}, dupes = crawl_dupes.new(spec) or false,
    -- Fields read for every page start false, not nil: a nil one is looked up in
    -- Crawler too, a metatable step each read.
    state = false, fleet = false, warc = false, refuse_new = false, dispatcher_waiting = false,
    base_opts = false, base_opts_of = false, base_opts_ua = false,
  }, Crawler)
  -- spec.state (crawl_state.lua): the frontier, the seen set and the outputs' lengths
  -- from the state file; else the frontier in memory.
  local fopts = { per_host = spec.per_host, delay = spec.delay, depth_first = spec.depth_first }
  self.state = spec.state and require("luacrawl.crawl_state").open(self) or false
  if self.state then
    self.frontier = self.state:frontier(fopts, function(req) return self:resume_gate(req) end)
    self.state:restore_seen(self.seen)
    self.state.on_error = function(err) self:state_failed(err) end
  elseif spec.redis then
    -- spec.redis (crawl_redis.lua): the frontier, seen set and robots.txt of a fleet.
    self.fleet = require("luacrawl.crawl_redis").open(self, fopts)
    self.frontier = self.fleet:frontier()
  else
    self.frontier = frontier.new(fopts)
  end
  local ok, err = pcall(self.open_outputs, self)
  if not ok then
    if self.state then self.state:close() end
    if self.fleet then self.fleet:finish() end
    -- The position export.open gave is a line of this file: the caller's replaces it.
    error((tostring(err):gsub("^luacrawl/[%w_/]+%.lua:%d+: ", "")), level)
  end
  return self
end

function M.new(spec)
  local c = create(check_spec(spec), 3)
  return c
end

function Crawler:open_outputs()
  local spec = self.spec
  self.sitemaps = spec.sitemaps and require("luacrawl.crawl_sitemaps").new(self, spec.sitemaps) or false
  self.filter = new_filter({
    seen = self.seen, stats = self.stats, normalize = spec.normalize, max_depth = spec.max_depth,
    scope = self:filter_scope(),
  })
  for _, s in ipairs(spec.retry_statuses) do self.retry_status[s] = true end
  local outputs = spec.output
  if type(outputs) ~= "table" or outputs.path then outputs = { outputs } end
  local state = self.state
  for _, o in ipairs(outputs) do
    local path = type(o) == "table" and o.path or o
    local resume_at = state and type(path) == "string" and path ~= "-" and (state:output_length(path) or 0) or nil
    self.outputs[#self.outputs + 1] = export.open(o, { fields = spec.fields, resume_at = resume_at })
  end
  if spec.items then self.outputs[#self.outputs + 1] = export.open(spec.items) end
  if spec.stats_json then
    -- Created now, as the outputs are: a path that cannot be written fails at once.
    local f, err = io.open(spec.stats_json, "w")
    if not f then error(("stats_json: %s"):format(err), 2) end
    self.stats_file = f
  end
  -- spec.warc, spec.from_warc (crawl_warc.lua): last, so that an output that cannot be
  -- created leaves no archive behind.
  if spec.warc or spec.from_warc then require("luacrawl.crawl_warc").attach(self) end
end

-- A request of an earlier run, read back from the state: through the rules of
-- Crawler:gate again (its host's robots.txt, read anew in this run). The answer of
-- frontier_sqlite's resume_gate.
function Crawler:resume_gate(req)
  local ok = self:gate(req.url, req.key)
  if ok == true or ok == false then return ok end
  ok[#ok + 1] = req -- held by the frontier already
  self.waiting_robots = self.waiting_robots + 1
  return ok
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
  if self.state then self.frontier:resume() end -- the requests of earlier runs first
  self:start()
  self:dispatch()
end

-- A state whose crawl finished: said, and nothing fetched.
function Crawler:finished_before()
  self.started = now()
  io.stderr:write(("luacrawl: state %s: this crawl finished on %s; nothing to fetch\n"):format(
    self.spec.state, os.date("!%Y-%m-%d %H:%M:%S UTC", self.state.finished_at)))
  self.state:close()
  self:close_outputs()
  local st = self:final_stats()
  st.finished_before = true
  return st
end

function Crawler:run()
  if self.state and self.state.finished_at then return self:finished_before() end
  self.started = now()
  local yields_before = lc.stats().yields_dropped
  local helpers = {}
  if self.spec.signals ~= false then helpers[#helpers + 1] = lc.spawn(self.watch_signals, self) end
  local show = self.spec.progress
  if show == nil then show = not self.spec.quiet end
  if show then helpers[#helpers + 1] = lc.spawn(self.progress, self) end
  helpers[#helpers + 1] = lc.spawn(report.sampler, self)
  if self.fleet then self.fleet:start(self) end
  if self.state then
    -- The state's commits flush the outputs too (crawl_state.lua).
    helpers[#helpers + 1] = lc.spawn(self.state.commit_loop, self.state, self)
  elseif #self.outputs > 0 then
    helpers[#helpers + 1] = lc.spawn(function()
      while true do
        lc.sleep(1)
        self:flush_outputs()
      end
    end)
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
  for t in pairs(self.background_tasks) do t:cancel() end
  if self.spec.signals ~= false then
    for _, s in ipairs({ "INT", "TERM" }) do lc.signals.unwatch(s) end
  end
  if self.progress_shown then io.stderr:write("\r\27[K") end
  -- The last commit comes before the outputs close: a JSON array's closing bracket
  -- is not part of what a resume appends to.
  if self.state then self.state:finish(self, ok and self.stop_reason == "done" and not self.aborted) end
  -- The fleet: claims not started go back, the last acknowledgements are sent.
  if self.fleet then
    local fok, ferr = self.fleet:finish()
    if not fok then self:fleet_failed(("redis %s: %s"):format(self.fleet.label, tostring(ferr))) end
    local fs = self.fleet.f.stats
    fs.worker = self.fleet.worker
    self.stats.redis = fs
  end
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
  if not self.spec.quiet then
    io.stderr:write(plain_text(report.format(st), "\n"), "\n")
  elseif report.losses(st) then
    -- quiet: the report's one line of what was lost, when something was.
    io.stderr:write("luacrawl: ", plain_text(report.losses(st)), "\n")
  end
  return st
end

-- crawl.run(spec) -> stats. Inside a task (luacrawl run) it runs there; from plain
-- Lua (module mode) it drives the loop itself.
function M.run(spec)
  if not lc.current() then return lc.run(M.run, spec) end
  local c = create(check_spec(spec), 3) -- not M.new: its errors name the caller's line
  return c:run()
end

return M
