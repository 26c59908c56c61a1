-- luacrawl.crawl_spec: the spec of crawl.run, its defaults and the checks that refuse
-- a spec the crawl could not run (a misspelled field, a number out of range, a choice
-- not among its names) before anything is fetched; docs/crawl.md, "The spec".
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
--   concurrency (16), per_host (2), delay (0 s: above 0, one request of a host in
--                flight), host_key ("host" | "domain" | "ip" | function(url) -> key),
--                robots (true), max_delay (30 s),
--   hosts        { [host key or "*.domain"] = { per_host, delay, max_pages, headers,
--                normalize } }: a host's own settings (crawl_hosts.lua)
--   dedupe_key   function(url, request) -> string: the seen set's key (default: the URL)
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
--   on_request(req), on_response(page), on_item(item): return false to drop (and
--                a reason), a table to replace, nil to keep; on_error(req, err,
--                crawler) is told of each request that failed for good (a request's
--                errback instead) and may return a request to queue. on_response sees
--                every response, redirects too (dropping one stops the redirect);
--                parse sees the rest. Each hook may be a list of functions
--                (crawl_calls.lua).
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
local core = require "luacrawl.core"
local robots = require "luacrawl.robots"
local identity = require "luacrawl.crawl_identity"
local spec_check = require "luacrawl.spec_check"
local crawl_record = require "luacrawl.crawl_record"
local calls = require "luacrawl.crawl_calls"

local M = {}

-- The longest wait a spec or hook may ask for, in seconds.
local YEAR = 365 * 24 * 3600
M.YEAR = YEAR

-- Every default of the spec, in one place (docs/crawl.md lists them, "The spec").
-- M.check fills a spec's missing fields from here. Two defaults depend on the run:
-- throttle is off, and a throttle table's missing fields come from throttle_fields
-- (max_delay: the spec's); progress_interval is progress_intervals.terminal on a
-- terminal, else .other.
local DEFAULTS = {
  concurrency = 16, per_host = 2, delay = 0, max_delay = 30, retries = 2,
  max_redirect = 10, max_retry_after = 60, robots = true, host_key = "host", stop_grace = 10,
  max_robots_size = robots.max_bytes, robots_redirects = 5,
  retry_statuses = { 408, 429, 500, 502, 503, 504, 522, 524 },
  retry_kinds = { timeout = true, connect = true, protocol = true, render = true },
  throttle_fields = { target = 2.0, min_delay = 0 },
  progress_intervals = { terminal = 0.5, other = 10 },
}
M.defaults = DEFAULTS

-- The spec's numbers, by the engine's one rule (spec_check.check_numbers); the
-- message names the script's line.
local function check_numbers(s)
  local ok, err = pcall(spec_check.check_numbers, s)
  if not ok then error(tostring(err), 4) end
end

-- The kinds of fetch error (engine/http.h, docs/toolkit.md "Errors"): the names
-- retry_kinds may use.
local ERROR_KINDS = core.error_kinds()
-- And lc.render's own kind (render.lua: a browser or page that failed), which the
-- engine's fetch never gives.
ERROR_KINDS[#ERROR_KINDS + 1] = "render"
local HOST_KEYS = { "host", "domain", "ip" }

-- The fields that take one of a few names: a misspelling would otherwise be ignored
-- (host_key "domian" keyed by host; retry_kinds {timout = true} retried nothing).
-- retry_kinds as a list ({"timeout", "dns"}) becomes the set the crawl reads.
-- spec.follow: a CSS selector or a list of them, each compiled; as a list.
local function check_follow(s)
  local f = s.follow
  if f == nil then return end
  if s.parse ~= nil then
    error("crawl.run: follow chooses the links a crawl with no parse follows; a parse follows with page:follow", 0)
  end
  if type(f) == "string" then f = { f } end
  if type(f) ~= "table" or f[1] == nil then
    error("crawl.run: follow must be a CSS selector or a list of them, as \"a.next\"", 0)
  end
  for _, sel in ipairs(f) do
    local ok, err = type(sel) == "string" and pcall(require("luacrawl.css").to_plan, sel)
    if not ok then
      error(("crawl.run: follow: CSS selector '%s': %s"):format(tostring(sel),
        tostring(err or "not a string"):gsub("^[^:]*:%d+: ", "")), 0)
    end
  end
  s.follow = f
end

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

-- The spec given, checked and filled from DEFAULTS (a copy); fetch_opts(crawler) makes
-- the options of every fetch (Crawler.fetch_opts), checked as lc.fetch checks them.
function M.check(spec, fetch_opts)
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
  if ok then ok, err = pcall(calls.check_hooks, s) end
  if ok then ok, err = pcall(check_follow, s) end
  if ok and s.hosts ~= nil then ok, err = pcall(require("luacrawl.crawl_hosts").check, s.hosts) end
  if ok and s.dedupe_key ~= nil and type(s.dedupe_key) ~= "function" then
    ok, err = false, "crawl.run: dedupe_key must be a function(url, request) -> string"
  end
  if ok then ok, err = pcall(crawl_record.setup, s) end
  if not ok then error(err, 3) end
  if s.fetch ~= nil and type(s.fetch) ~= "table" then error("crawl.run: fetch must be a table of lc.fetch options", 3) end
  -- The options every fetch of the crawl is made with, checked as lc.fetch checks
  -- them: a request that can never be built (a header with CR or LF) is refused here,
  -- not failed by every request (and by robots.txt, which the rest would wait for).
  ok, err = pcall(core.check_fetch_options, fetch_opts({ spec = s }))
  if not ok then error("crawl.run: " .. tostring(err), 3) end
  -- As lc.fetch says it (there is no "no timeout"), but before the first request.
  local timeout = type(s.fetch) == "table" and s.fetch.timeout or nil
  if timeout ~= nil and not (type(timeout) == "number" and timeout > 0 and timeout < math.huge) then
    error("crawl.run: fetch.timeout must be a number of seconds more than 0 (there is no 'no limit')", 3)
  end
  return s
end

return M
