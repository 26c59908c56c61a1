-- luacrawl.crawl_robots: the crawl's gate (a host's time budget, its first sight,
-- robots.txt) and robots.txt itself: fetched once per origin in the background, kept
-- by the durable object, the requests that waited for it let through or refused. Its
-- methods are the crawler's (crawl.lua copies M.methods into Crawler).
local lc = require "luacrawl"
local robots = require "luacrawl.robots"
local losses = require "luacrawl.crawl_losses"
local calls = require "luacrawl.crawl_calls"

local error_message = calls.error_message

local M = {}
local Crawler = {}
M.methods = Crawler

-- The origin (scheme://host[:port]) of a URL in normalized form, which has a '/'
-- after its host: the robots.txt key. A plain find, not a pattern, for every page.
local find, sub = string.find, string.sub
local function origin_of(url)
  local slash = find(url, "/", 9, true) -- past "http://h" and "https://"
  if slash then return sub(url, 1, slash - 1) end
  return url:match("^(https?://[^/]+)")
end
M.origin_of = origin_of

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
  local durable = self.durable
  local res, err = durable:robots(origin)
  if not res then
    res, err = lc.fetch(origin .. "/robots.txt", self:fetch_opts({
      follow = self.spec.robots_redirects, follow_site = true,
      max_size = self.spec.max_robots_size, truncate = true,
    }))
    st.robots_fetched = st.robots_fetched + 1
    if res and self.warc then self.warc:write(res) end
    durable:save_robots(origin, res)
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
  if req then
    local ok, herr = pcall(calls.tell_error, self, req, lc.error("robots_unreachable", rules.unreachable))
    if not ok then self:report(nil, herr, "error in on_error: %s") end
  end
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
    local ok, herr = pcall(calls.tell_error, self, req, kind == "dns" and err or lc.error(kind, msg))
    if not ok then self:report(nil, herr, "error in on_error: %s") end
  end
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

return M
