-- luacrawl.regex: PCRE2 regular expressions (engine/regex.c).
--   local re = lc.regex("(\\w+)=(\\d+)", "i")    -- flags: i caseless, x extended,
--                                                --   s dotall, m multiline
--   re:test(s [, init])        -> boolean
--   re:find(s [, init])        -> start, end, cap1, ... | nil   (1-based, as string.find)
--   re:match(s [, init])       -> whole, cap1, ...      | nil
--   re:gmatch(s [, init])      -> iterator giving what match gives, for each match
--   re:gsub(s, repl [, n])     -> result, count; repl is a string with $0-$9, ${12},
--                                 ${name} and $$, or a function called with what match
--                                 gives, whose string replaces the match (nil/false keep it)
--   re:split(s [, n])          -> { piece, ... } around at most n matches
--   re:info()                  -> { pattern=, flags=, captures=, jit= }
--   regex.escape(s)            -> s with every ASCII character but letters, digits and _
--                                 escaped, so it matches itself (with or without "x")
-- A capture that took no part in the match is false. Patterns are UTF-8 with Unicode
-- properties (\w, \b and caseless matching know "é"; \d matches any decimal digit, "٣"
-- included: write [0-9] for ASCII only); subjects may hold invalid UTF-8, which no
-- character of a pattern matches. A bad pattern raises an error naming it, the offset and
-- PCRE2's message; a runaway match raises "match limit exceeded" (10 million backtracking
-- steps) or "heap limit exceeded" (64 MB of backtracking memory) rather than hanging. A gsub replacement function must not
-- wait (fetch, sleep): it runs inside a C call.
--
-- lc.regex(p, flags) returns the same compiled object for the same (p, flags) while it is
-- alive: values are weak, and the last `cache_size` patterns compiled are held strongly,
-- so a pattern built in a hot loop is compiled once.
local core = require "luacrawl.core"

local compile = core.regex_compile
local setmetatable, type, error, pcall = setmetatable, type, error, pcall

local M = {}

M.cache_size = 256

local WEAK_VALUES = { __mode = "v" }
local by_flags = {} -- flags -> { pattern -> regex } (weak values)
local recent, recent_pos = {}, 0 -- ring of the last cache_size compiled

-- The compiled regex for (pattern, flags), from the cache when it is there; errors are
-- raised at `level` (the user's call).
local function get(pattern, flags, level)
  if type(pattern) ~= "string" then error("regex: pattern must be a string", level) end
  if flags ~= nil and type(flags) ~= "string" then error("regex: flags must be a string", level) end
  flags = flags or ""
  local cache = by_flags[flags]
  local re = cache and cache[pattern]
  if re then return re end
  local ok
  ok, re = pcall(compile, pattern, flags)
  if not ok then error(re, level) end
  if not cache then
    cache = setmetatable({}, WEAK_VALUES)
    by_flags[flags] = cache
  end
  cache[pattern] = re
  recent_pos = recent_pos % M.cache_size + 1
  recent[recent_pos] = re
  return re
end

function M.compile(pattern, flags)
  local re = get(pattern, flags, 3) -- not a tail call: the level counts this frame
  return re
end

-- Forget every cached pattern (those still referenced elsewhere stay usable).
function M.clear_cache()
  by_flags, recent, recent_pos = {}, {}, 0
end

function M.escape(s)
  if type(s) ~= "string" then error("regex.escape: string expected", 2) end
  return (s:gsub("[%z\1-\47\58-\64\91-\94\96\123-\127]", "\\%0"))
end

return setmetatable(M, {
  __call = function(_, pattern, flags)
    local re = get(pattern, flags, 3)
    return re
  end,
})
