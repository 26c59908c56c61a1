-- luacrawl.crawl_scope: what a spec's allow = {...} means, one rule for crawl.run and
-- the CLI (docs/crawl.md, "Scope"). The hosts in scope are allow.hosts (and their
-- subdomains) when given, else any host with span_hosts, else the start URLs' hosts
-- exactly; allow.urls narrows within those hosts: a URL must also match a pattern.
-- A function is the whole rule; deny (crawl.lua) is taken out of whatever allow gives.
local lc = require "luacrawl"
local core = require "luacrawl.core"

local new_hosts = core.crawl.hosts

local M = {}

-- The regexes of rule.urls (rule.regex, the older name), strings compiled.
local function patterns(rule, name)
  local res = {}
  for _, p in ipairs(rule.urls or rule.regex or {}) do
    if type(p) == "string" then
      local ok, re = pcall(lc.regex, p)
      if not ok then error(("crawl: %s.urls: bad regular expression %q: %s"):format(name, p, tostring(re)), 0) end
      p = re
    end
    res[#res + 1] = p
  end
  return res
end

-- The allow predicate of a spec (nil: the default scope, which the crawl checks
-- itself), and the host set when hosts alone decide (the filter checks it in C).
-- start_hosts is the crawl's set of start hosts, filled as start URLs are added.
function M.allow(rule, start_hosts, span_hosts)
  if rule == nil or type(rule) == "function" then return rule end
  if type(rule) ~= "table" then error("crawl: allow must be a table or a function", 0) end
  local hosts
  if rule.hosts then
    local ok, set = pcall(new_hosts, rule.hosts, true)
    if not ok then error(("crawl: allow.%s"):format(set), 0) end
    hosts = set
  end
  local res = patterns(rule, "allow")
  if not res[1] then
    if not hosts then return nil end
    return function(url) return hosts:match(url) end, hosts
  end
  return function(url)
    if hosts then
      if not hosts:match(url) then return false end
    elseif not (span_hosts or start_hosts:match(url)) then
      return false
    end
    for i = 1, #res do
      if res[i]:test(url) then return true end
    end
    return false
  end
end

return M
