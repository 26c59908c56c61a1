-- luacrawl.crawl_hosts: what a crawl keeps per host key beyond the frontier's slots:
-- the spec's `hosts` table (a host key's own per_host, delay, max_pages, headers,
-- normalize, render; checked before the crawl, found for a host key once), hosts closed by
-- a hook or their budget, the seen set's rule in Lua (dedupe keys) and the headers
-- merge. Its methods are the crawler's. A crawl without `hosts`, `dedupe_key` or a
-- closed host asks nothing of it per request.
--
--   hosts = { ["docs.example.org"] = { per_host = 1, delay = 0.25 },
--             ["*.example.com"] = { max_pages = 500 } }
-- A key is a host key as spec.host_key makes them, matched exactly; "*.D" matches D
-- and every name under it. An exact key wins, then the longest "*." one.
local lc = require "luacrawl"
local core = require "luacrawl.core"

local M = {}

local YEAR = 365 * 24 * 3600

-- A host's settings, checked by the option reader (unknown names refused with
-- "did you mean").
local DECL = core.option_decl({
  caller = "crawl.run", label = "crawl.run: %s",
  { "per_host", "integer", 1 }, { "delay", "number", 0, YEAR }, { "max_pages", "integer", 0 },
  { "headers", "table" }, { "normalize", "table" }, { "render", "boolean" },
})

local function fail(fmt, ...)
  error("crawl.run: " .. fmt:format(...), 0)
end

-- One host's settings, checked; the option reader's label names the host.
local function check_one(key, t)
  if type(t) ~= "table" then fail("hosts[%q] must be a table of settings (per_host =, delay =, ...)", key) end
  local decl = DECL
  local ok, err = pcall(core.check_options, t, decl)
  if not ok then
    fail("hosts[%q]: %s", key, (tostring(err):gsub("^crawl%.run: ", "")))
  end
  if t.normalize ~= nil then
    local nok, nerr = pcall(lc.url.normalize, "http://x/", t.normalize)
    if not nok then fail("hosts[%q].normalize: %s", key, tostring(nerr)) end
  end
  if t.headers ~= nil then
    for name, v in pairs(t.headers) do
      if type(name) ~= "string" or (type(v) ~= "string" and type(v) ~= "number" and v ~= false) then
        fail("hosts[%q].headers must map header names to strings", key)
      end
    end
  end
end

-- The spec's hosts, checked (raises with a message naming the field).
function M.check(hosts)
  if type(hosts) ~= "table" or getmetatable(hosts) ~= nil then
    fail("hosts must be a table of host key -> settings, as { [\"example.org\"] = { per_host = 1 } }")
  end
  for key, t in pairs(hosts) do
    if type(key) ~= "string" or key == "" or key == "*." then
      fail("hosts: a key must be a host key or \"*.domain\" (got %s)", type(key) == "string" and "'" .. key .. "'" or type(key))
    end
    check_one(key, t)
  end
end

local Hosts = {}
Hosts.__index = Hosts

-- The settings of spec.hosts, found per host key and kept (false: none).
function M.new(hosts)
  local self = setmetatable({ exact = {}, wild = {}, found = {}, headers = false, normalizes = false, renders = false },
    Hosts)
  for key, t in pairs(hosts) do
    local domain = key:match("^%*%.(.+)$")
    if domain then
      self.wild[domain:lower()] = t
    else
      self.exact[key] = t
    end
    if t.headers then self.headers = true end
    if t.normalize then self.normalizes = true end
    if t.render ~= nil then self.renders = true end
  end
  return self
end

-- The settings of host key `key`, or false.
function Hosts:of(key)
  local s = self.found[key]
  if s ~= nil then return s end
  s = self.exact[key] or false
  if not s and type(key) == "string" then
    local name = key:lower()
    while name do
      s = self.wild[name]
      if s then break end
      name = name:match("^[^.]*%.(.+)$")
    end
    s = s or false
  end
  self.found[key] = s
  return s
end

-- headers over base, the later value winning per name (case aside); a name set to
-- false in over is dropped. A new table: neither is changed.
function M.merge_headers(base, over)
  local out, names = {}, {}
  for _, t in ipairs({ base or {}, over }) do
    for k, v in pairs(t) do
      local low = type(k) == "string" and k:lower() or k
      if names[low] ~= nil then out[names[low]] = nil end
      names[low] = k
      if v ~= false then out[k] = v end
    end
  end
  return out
end

-- The crawler's methods ------------------------------------------------------------

local C = {}
M.methods = C

-- The seen set's rule, in Lua, for a crawl whose filter leaves it (spec.dedupe_key, a
-- host's own normalize: self.lua_seen) or a request with a dedupe_key of its own: the
-- URL normalized by its host's rules, then its key (the URL when none) recorded.
-- False for a duplicate (counted).
function C:first_seen(req)
  local own = self.hosts and self.hosts:of(req.key)
  if own and own.normalize then req.url = lc.url.normalize(req.url, own.normalize) or req.url end
  if req.dont_filter then return true end
  local key, fn = req.dedupe_key, self.spec.dedupe_key
  if key == nil and fn then
    key = fn(req.url, req)
    if type(key) ~= "string" then
      error(("dedupe_key must return a string (got %s for %s)"):format(type(key), lc.url.redact(req.url)), 0)
    end
    req.dedupe_key = key
  elseif key ~= nil and type(key) ~= "string" then
    error(("a request's dedupe_key must be a string (got %s)"):format(type(key)), 0)
  end
  if self.seen:add(key or req.url) then return true end
  self.stats.duplicates = self.stats.duplicates + 1
  return false
end

-- The headers of a request's fetch: its own over its host's (spec.hosts: own) over
-- fetch.headers, each winning per name; with replace_headers, its own alone.
function C:request_headers(req, own)
  if req.replace_headers then return M.merge_headers(nil, req.headers or {}) end
  local headers = M.merge_headers(self.spec.fetch and self.spec.fetch.headers, own or {})
  if req.headers then headers = M.merge_headers(headers, req.headers) end
  return headers
end

-- A host closed (close_host): its requests refused, counted by reason.
function C:refused_closed(key)
  local why = self.closed[key]
  if not why then return false end
  local by = self.stats.host_closed
  by[why] = (by[why] or 0) + 1
  return true
end

-- A host's own max_pages (spec.hosts): its pages counted as they start; the one
-- past the budget is not fetched and the host is closed (its queue dropped, nothing
-- new queued for it).
-- A fleet's frontier counts them in Redis, for the fleet (frontier_redis.lua).
function C:host_budget_spent(req)
  if self.frontier.counts_host_pages then return false end
  local own = self.hosts:of(req.key)
  local max = own and own.max_pages
  if not max then return false end
  local n = (self.host_pages[req.key] or 0) + 1
  if n <= max then
    self.host_pages[req.key] = n
    return false
  end
  self.frontier:forget(req)
  self:close_host(req.key, "max_pages")
  local by = self.stats.host_closed
  by.max_pages = (by.max_pages or 0) + 1
  return true
end

-- The host key's own number of requests in flight (a delay above 0 still caps it at one).
function C:set_per_host(key, n)
  local ok, err = pcall(core.check_integer, n, "crawler:set_per_host: n", 1)
  if not ok then error(tostring(err), 2) end
  self.frontier:set_per_host(key, n)
  self.durable:save_host(key, "per_host", n)
  self:poke()
end

-- Close a host key: its queued requests are dropped and new ones refused, each
-- counted in stats.host_closed[reason] (reason: a string, "closed" when none).
function C:close_host(key, reason)
  if reason ~= nil and type(reason) ~= "string" then
    error(("crawler:close_host: reason must be a string (got %s)"):format(type(reason)), 2)
  end
  reason = reason or "closed"
  self.closed = self.closed or {}
  if self.closed[key] then return end
  self.closed[key] = reason
  local dropped, on_disk = self.frontier:drop_host(key, reason)
  self.durable:save_host(key, "closed", reason)
  local by = self.stats.host_closed
  by[reason] = (by[reason] or 0) + #dropped + (on_disk or 0)
  self:poke()
end

-- A host closed by the fleet (another worker's close_host, its max_pages spent in
-- Redis): its requests refused here too; n: those this worker had claimed, dropped.
function C:closed_by_fleet(key, reason, n)
  self.closed = self.closed or {}
  if not self.closed[key] then self.closed[key] = reason end
  local by = self.stats.host_closed
  by[reason] = (by[reason] or 0) + n
  self:poke()
end

return M
