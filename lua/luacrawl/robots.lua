-- luacrawl.robots: robots.txt parsing and matching after RFC 9309, in pure Lua.
--
-- API
--   robots.parse(text) -> r         never raises; non-string input parses as empty
--   robots.allow_all() -> r         for a robots.txt that is unavailable (4xx)
--   robots.disallow_all() -> r      for a robots.txt that is unreachable (5xx, network;
--                                   not DNS: the crawl counts that as the requests' error)
--   robots.for_status(status) -> "parse" | "allow_all" | "disallow_all"
--   robots.max_bytes                512000: how much of the text is parsed
--   r.kind                          "parse", "allow_all" or "disallow_all"
--   r:allowed(agent, url_or_path) -> boolean
--   r:crawl_delay(agent) -> seconds | nil
--   r:sitemaps() -> { url, ... }    a fresh list, in file order
--
-- Agents: `agent` may be a whole User-Agent string ("luacrawl/1.0 (+https://x/bot)");
-- only its product token, the leading run of [A-Za-z_-], is matched, case-insensitively,
-- against the product token of each `User-agent` value. The groups naming the token
-- apply (merged); failing those, the `*` groups (merged); failing those, everything is
-- allowed. A crawler whose own group exists never falls back to `*`, also not for its
-- crawl delay.
--
-- Matching: `url_or_path` is a full URL (only path and query are used, the fragment is
-- dropped, an empty path is "/") or a path with optional query. Rule patterns and request
-- paths are brought to one canonical percent-encoding (unreserved octets decoded, other
-- escapes upper-cased, octets >= 0x80, controls, space, `"<>\^`{|}` and literal `*`/`$`
-- encoded), so "/a%7eb" equals "/a~b" and "/%2F" stays distinct from "/". The rule with
-- the longest canonical pattern (in octets, `*` and a final `$` included) wins; on a tie
-- allow wins. "/robots.txt" is always allowed. Patterns are compiled at parse time into
-- literal segments matched left to right with plain `string.find`: linear work, no
-- backtracking. The merged group of each agent is computed once and cached.
--
-- Limits: only the first robots.max_bytes (500 KiB) of the text are read, minus a line
-- cut in two by that limit (RFC 9309 §2.5). Crawl-delay is not part of RFC 9309: it is
-- read as a non-negative decimal number of seconds (first valid value of the group),
-- not capped here. for_status maps 3xx to "allow_all": the fetcher follows up to five
-- redirects within the site (crawl.lua), so a 3xx that reaches us means they ran out or
-- left the site, and RFC 9309 §2.3.1.2 lets the crawler treat the file as unavailable. Every 4xx (401, 403 and 429 included) is
-- "unavailable" (§2.3.1.3); 5xx, nil, 0 and anything else non-2xx is "unreachable"
-- (§2.3.1.4).

local byte, char, find, format, gmatch, gsub, lower, match, sub, upper =
  string.byte, string.char, string.find, string.format, string.gmatch, string.gsub,
  string.lower, string.match, string.sub, string.upper
local error, floor, sort, tonumber, type, setmetatable =
  error, math.floor, table.sort, tonumber, type, setmetatable

local robots = {}

robots.max_bytes = 512000

-- Canonical percent-encoding --------------------------------------------------------

-- Characters that make a string need canonicalising at all.
local NEEDS_WORK = "[%%%c \128-\255\"<>\\^`{|}*$]"
-- Characters that get percent-encoded (the set above without `%`).
local TO_ENCODE = "[%c \128-\255\"<>\\^`{|}*$]"

-- char -> "%XX", and "%", "%h", "%hh" as found in the text -> the canonical
-- replacement: made by the first string that needs them. Most URLs need neither, and
-- the two tables hold some 1,800 strings, 60 KB that every collection would go
-- through for the whole run.
local ENCODE, ESCAPE

local function make_tables()
  ENCODE, ESCAPE = {}, {}
  for c = 0, 255 do
    ENCODE[char(c)] = format("%%%02X", c)
  end
  local function is_unreserved(c)
    local ch = char(c)
    return find(ch, "^[%w%-%._~]$") ~= nil
  end
  local hex = "0123456789abcdefABCDEF"
  ESCAPE["%"] = "%25"
  for i = 1, #hex do
    local h1 = sub(hex, i, i)
    ESCAPE["%" .. h1] = "%25" .. h1
    for j = 1, #hex do
      local h2 = sub(hex, j, j)
      local c = tonumber(h1 .. h2, 16)
      ESCAPE["%" .. h1 .. h2] = is_unreserved(c) and char(c) or ("%" .. upper(h1 .. h2))
    end
  end
end

local function canonical(s)
  if not find(s, NEEDS_WORK) then
    return s
  end
  if not ENCODE then make_tables() end
  if find(s, "%", 1, true) then
    s = gsub(s, "%%%x?%x?", ESCAPE)
  end
  return (gsub(s, TO_ENCODE, ENCODE))
end

-- Canonical path and query of a request, from a URL or a path.
local function request_path(url)
  local path = url
  if byte(url, 1) ~= 47 then -- not "/": maybe scheme://authority
    local rest = match(url, "^%a[%w+.%-]*://[^/?#]*()")
    if rest then
      path = sub(url, rest)
    end
  end
  local hash = find(path, "#", 1, true)
  if hash then
    path = sub(path, 1, hash - 1)
  end
  if byte(path, 1) ~= 47 then
    path = "/" .. path
  end
  return canonical(path)
end

local function is_robots_txt(path)
  return sub(path, 1, 11) == "/robots.txt" and (#path == 11 or byte(path, 12) == 63)
end

-- Patterns --------------------------------------------------------------------------

local PREFIX, EXACT, WILD = 1, 2, 3

-- A rule: { allow, len, order, how, lit } or, for WILD, { ..., segs, nsegs, anchored }.
local function compile_rule(value, allow, order)
  local anchored = false
  if byte(value, -1) == 36 then -- "$"
    anchored = true
    value = sub(value, 1, -2)
  end
  local segs, n, len = {}, 0, 0
  for seg in gmatch(value .. "*", "([^*]*)%*") do
    seg = canonical(seg)
    n = n + 1
    segs[n] = seg
    len = len + #seg
  end
  len = len + (n - 1) + (anchored and 1 or 0)
  local rule = { allow = allow, len = len, order = order }
  if n == 1 then
    rule.how = anchored and EXACT or PREFIX
    rule.lit = segs[1]
    return rule
  end
  -- Empty middle segments ("**") match anywhere: drop them.
  local kept, k = { segs[1] }, 1
  for i = 2, n - 1 do
    if segs[i] ~= "" then
      k = k + 1
      kept[k] = segs[i]
    end
  end
  k = k + 1
  kept[k] = segs[n]
  rule.how, rule.segs, rule.nsegs, rule.anchored = WILD, kept, k, anchored
  return rule
end

-- Leftmost placement of each literal segment is enough for patterns whose only
-- operator is `*`: a later placement can never let the remaining segments fit better.
local function wild_matches(rule, path)
  local segs = rule.segs
  local first = segs[1]
  local pos = #first + 1
  if pos > 1 and sub(path, 1, pos - 1) ~= first then
    return false
  end
  local n = rule.nsegs
  for i = 2, n - 1 do
    local _, e = find(path, segs[i], pos, true)
    if not e then
      return false
    end
    pos = e + 1
  end
  local last = segs[n]
  if last == "" then
    return true -- "a*" and "a*$" both match any tail
  end
  if rule.anchored then
    local start = #path - #last + 1
    return start >= pos and sub(path, start) == last
  end
  return find(path, last, pos, true) ~= nil
end

local function rule_matches(rule, path)
  local how = rule.how
  if how == PREFIX then
    local lit = rule.lit
    return sub(path, 1, #lit) == lit
  elseif how == EXACT then
    return path == rule.lit
  end
  return wild_matches(rule, path)
end

-- More specific first; allow before disallow on a tie; then file order.
local function rule_before(a, b)
  if a.len ~= b.len then
    return a.len > b.len
  end
  if a.allow ~= b.allow then
    return a.allow
  end
  return a.order < b.order
end

-- Parsing ---------------------------------------------------------------------------

local function product_token(s)
  return lower(match(s, "^[%a_%-]*"))
end

-- Digits with at most one dot. Checked without a pattern that backtracks
-- ("^%d+%.?%d*$" takes time quadratic in a long run of digits that ends badly).
local function parse_delay(value)
  if value == "" or find(value, "[^%d.]") or not find(value, "%d") then
    return nil
  end
  local dot = find(value, ".", 1, true)
  if dot and find(value, ".", dot + 1, true) then
    return nil
  end
  local n = tonumber(value)
  if not n or n ~= n or n == 1 / 0 then
    return nil
  end
  return n
end

-- Cuts `text` to max_bytes, dropping a line the limit cuts in two.
local function limit_text(text, max)
  if #text <= max then
    return text
  end
  local nextc = byte(text, max + 1)
  text = sub(text, 1, max)
  if nextc == 10 or nextc == 13 then
    return text
  end
  local last = match(text, "^.*()[\r\n]")
  return last and sub(text, 1, last) or ""
end

local function new_group()
  return { agents = {}, star = false, rules = {}, delay = nil }
end

-- Splits a line into a lower-cased field name and a value. A missing colon is
-- tolerated when whitespace separates the two ("Disallow /x").
local function split_line(line)
  local key, sep, value = match(line, "^([%a_%-]+)(%s*:?%s*)(.*)$")
  if not key or (sep == "" and value ~= "") then
    return nil
  end
  return lower(key), value
end

local R = {}
R.__index = R

local function parse_text(text)
  local groups, sitemaps = {}, {}
  local group          -- group being filled; nil before the first user-agent
  local in_agents = false -- the last group line seen was a user-agent line
  local order = 0
  if byte(text, 1) == 239 and sub(text, 1, 3) == "\239\187\191" then
    text = sub(text, 4)
  end
  for line in gmatch(text, "[^\r\n]+") do
    local hash = find(line, "#", 1, true)
    if hash then
      line = sub(line, 1, hash - 1)
    end
    -- Trimmed from its first non-space to its last, each found once: patterns such
    -- as "^%s*(.-)%s*$" take time quadratic in a line's runs of spaces.
    local first = find(line, "%S")
    line = first and match(line, "^.*%S", first) or ""
    local key, value = split_line(line)
    if key == "user-agent" then
      if not in_agents then
        group = new_group()
        groups[#groups + 1] = group
        in_agents = true
      end
      if find(value, "^%*") and (#value == 1 or find(value, "^%*%s")) then
        group.star = true
      else
        local token = product_token(value)
        if token ~= "" then
          group.agents[token] = true
        end
      end
    elseif key == "allow" or key == "disallow" then
      in_agents = false
      if group and value ~= "" then
        order = order + 1
        group.rules[#group.rules + 1] = compile_rule(value, key == "allow", order)
      end
    elseif key == "crawl-delay" then
      in_agents = false
      if group and group.delay == nil then
        group.delay = parse_delay(value)
      end
    elseif key == "sitemap" then
      if value ~= "" then
        sitemaps[#sitemaps + 1] = value
      end
    end
  end
  return groups, sitemaps
end

local function new_robots(kind, groups, sitemaps)
  return setmetatable({
    kind = kind,
    _groups = groups,
    _sitemaps = sitemaps,
    _by_agent = {},   -- agent string as given -> merged group
    _by_token = {},   -- product token -> merged group
    _cached = 0,
  }, R)
end

function robots.parse(text)
  if type(text) ~= "string" then
    text = ""
  end
  local groups, sitemaps = parse_text(limit_text(text, robots.max_bytes))
  return new_robots("parse", groups, sitemaps)
end

function robots.allow_all()
  return new_robots("allow_all", {}, {})
end

function robots.disallow_all()
  local group = new_group()
  group.star = true
  group.rules[1] = compile_rule("/", false, 1)
  return new_robots("disallow_all", { group }, {})
end

function robots.for_status(status)
  status = tonumber(status)
  if not status or status ~= floor(status) then
    return "disallow_all"
  end
  if status >= 200 and status < 300 then
    return "parse"
  elseif status >= 300 and status < 500 then
    return "allow_all"
  end
  return "disallow_all"
end

-- Groups for an agent -----------------------------------------------------------------

local function merge(groups, token)
  local picked = {}
  if token ~= "" then
    for i = 1, #groups do
      if groups[i].agents[token] then
        picked[#picked + 1] = groups[i]
      end
    end
  end
  if #picked == 0 then
    for i = 1, #groups do
      if groups[i].star then
        picked[#picked + 1] = groups[i]
      end
    end
  end
  local rules, delay = {}, nil
  for i = 1, #picked do
    local g = picked[i]
    for j = 1, #g.rules do
      rules[#rules + 1] = g.rules[j]
    end
    if delay == nil then
      delay = g.delay
    end
  end
  sort(rules, rule_before)
  return { rules = rules, nrules = #rules, delay = delay }
end

local MAX_CACHED_AGENTS = 64

function R:_group_for(agent)
  if type(agent) ~= "string" then
    agent = ""
  end
  local group = self._by_agent[agent]
  if group then
    return group
  end
  local token = product_token(agent)
  group = self._by_token[token]
  if not group then
    group = merge(self._groups, token)
    self._by_token[token] = group
  end
  -- Callers pass a handful of agent strings; cap the map all the same.
  if self._cached >= MAX_CACHED_AGENTS then
    self._by_agent, self._cached = {}, 0
  end
  self._by_agent[agent] = group
  self._cached = self._cached + 1
  return group
end

-- Public methods ----------------------------------------------------------------------

function R:allowed(agent, url)
  if type(url) ~= "string" then
    error("robots: url must be a string, got " .. type(url), 2)
  end
  local group = self._by_agent[agent] or self:_group_for(agent)
  local n = group.nrules
  if n == 0 then
    return true
  end
  local path = request_path(url)
  local rules = group.rules
  for i = 1, n do
    local rule = rules[i]
    if rule_matches(rule, path) then
      return rule.allow or is_robots_txt(path)
    end
  end
  return true
end

function R:crawl_delay(agent)
  local group = self._by_agent[agent] or self:_group_for(agent)
  return group.delay
end

function R:sitemaps()
  local out = {}
  for i = 1, #self._sitemaps do
    out[i] = self._sitemaps[i]
  end
  return out
end

return robots
