-- luacrawl.crawl_scope: what a spec's allow = {...} means, one rule for crawl.run and
-- the CLI (docs/crawl.md, "Scope"). The hosts in scope are allow.hosts (and their
-- subdomains) when given, else any host with span_hosts, else the start URLs' hosts
-- exactly; allow.urls narrows within those hosts: a URL must also match a pattern.
-- A function is the whole rule; deny is taken out of whatever allow gives.
-- A pattern of urls is a regular expression (PCRE2), or a glob when it says so
-- ("glob:...") or reads as one: it starts with http:// or https:// and holds none of
-- \ ^ $ ( ) [ ] | + (which a URL glob has no use for). A glob matches the whole URL:
-- * is any characters but '/', ** any characters, {a,b} either; the rest is literal
-- (a '?' is the query's, a '.' a dot). "re:..." is always a regular expression.
local lc = require "luacrawl"
local core = require "luacrawl.core"

local new_hosts = core.crawl.hosts

local M = {}

-- The regular expression of a URL glob (see above), anchored at both ends.
function M.glob_to_regex(g)
  local out, i, n, depth = { "^" }, 1, #g, 0
  while i <= n do
    local c = g:sub(i, i)
    if c == "*" then
      if g:sub(i + 1, i + 1) == "*" then
        out[#out + 1] = ".*"
        i = i + 1
      else
        out[#out + 1] = "[^/]*"
      end
    elseif c == "{" then
      out[#out + 1] = "(?:"
      depth = depth + 1
    elseif c == "}" and depth > 0 then
      out[#out + 1] = ")"
      depth = depth - 1
    elseif c == "," and depth > 0 then
      out[#out + 1] = "|"
    elseif c:match("[%w/:%-_~]") then
      out[#out + 1] = c
    else
      out[#out + 1] = "\\x{" .. ("%x"):format(c:byte()) .. "}"
    end
    i = i + 1
  end
  if depth > 0 then error("an unclosed { in the glob", 0) end
  out[#out + 1] = "$"
  return table.concat(out)
end

-- A pattern string as a compiled regex: a glob (see above) or a regular expression.
local function compile(p, where)
  local kind, body = p:match("^(glob):(.*)$")
  if not kind then kind, body = p:match("^(re):(.*)$") end
  if not kind then
    kind, body = p:match("^https?://") and not p:find("[\\%^%$%(%)%[%]|%+]") and "glob" or "re", p
  end
  local ok, re
  if kind == "glob" then
    ok, re = pcall(M.glob_to_regex, body)
    if ok then ok, re = pcall(lc.regex, re) end
    if not ok then error(("crawl: %s: bad glob %q: %s"):format(where, p, tostring(re)), 0) end
  else
    ok, re = pcall(lc.regex, body)
    if not ok then error(("crawl: %s: bad regular expression %q: %s"):format(where, p, tostring(re)), 0) end
  end
  return re
end

-- A field of a scope rule that takes a list (hosts, urls), given as anything else:
-- an error naming it (a string where a list is meant is the usual slip).
local function check_list(rule, name)
  for _, field in ipairs({ "hosts", "urls", "regex" }) do
    local v = rule[field]
    if v ~= nil and type(v) ~= "table" then
      error(("crawl.run: %s.%s must be a list, as {%q} (got %s)"):format(name, field,
        type(v) == "string" and v or "...", type(v)), 0)
    end
  end
end

-- The regexes of rule.urls (rule.regex, the older name), strings compiled.
local function patterns(rule, name)
  local res = {}
  for _, p in ipairs(rule.urls or rule.regex or {}) do
    res[#res + 1] = type(p) == "string" and compile(p, name .. ".urls") or p
  end
  return res
end

-- The allow predicate of a spec (nil: the default scope, which the crawl checks
-- itself), and the host set when hosts alone decide (the filter checks it in C).
-- start_hosts is the crawl's set of start hosts, filled as start URLs are added.
function M.allow(rule, start_hosts, span_hosts)
  if rule == nil or type(rule) == "function" then return rule end
  if type(rule) ~= "table" then
    error(("crawl.run: allow must be a table ({hosts = {...}, urls = {...}}) or a function (got %s)"):format(type(rule)), 0)
  end
  check_list(rule, "allow")
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

-- The deny predicate of a spec (nil: none), and its host set when hosts alone decide.
function M.deny(rule, name)
  if rule == nil then return nil end
  if type(rule) == "function" then return rule end
  if type(rule) ~= "table" then
    error(("crawl.run: %s must be a table ({hosts = {...}, urls = {...}}) or a function (got %s)"):format(name,
      type(rule)), 0)
  end
  check_list(rule, name)
  local hosts
  if rule.hosts then
    local ok, set = pcall(new_hosts, rule.hosts, true)
    if not ok then error(("crawl: %s.%s"):format(name, set), 0) end
    hosts = set
  end
  local res = patterns(rule, name)
  return function(url)
    if hosts and hosts:match(url) then return true end
    for _, re in ipairs(res) do
      if re:test(url) then return true end
    end
    return false
  end, res[1] == nil and hosts or nil
end

return M
