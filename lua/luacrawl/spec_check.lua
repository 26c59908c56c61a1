-- luacrawl.spec_check: the names a crawl spec may use, and the check that refuses
-- any other (a misspelled field would otherwise be ignored: `concurency = 2` crawled
-- at 16). The known names come from crawl.defaults (passed in) plus the fields
-- below, which have no default; nested tables are checked against their own names
-- (fetch: the names lc.fetch reads, from the engine). M.suggest is the "did you mean"
-- of the spec and of the command line's options.
local core = require "luacrawl.core"

local M = {}

-- Spec fields without a default in crawl.defaults (docs/crawl.md, "The spec").
-- Modules that add a field list it here (or call M.add_fields; an optional part's
-- go in M.optional).
M.fields = {
  "start", "parse", "allow", "deny", "span_hosts", "public_only", "deny_networks",
  "max_depth", "max_pages", "max_time", "max_host_time", "throttle", "depth_first",
  "user_agent", "fetch", "normalize", "on_host", "on_request", "on_response", "on_error",
  "on_item", "output", "fields", "items", "stats_json", "quiet", "progress",
  "progress_interval", "signals", "free_bodies", "contact", "cookies", "sitemaps",
  "dedupe_content", "extract", "follow", "save", "hosts", "dedupe_key",
}

-- The crawl's optional parts, each loaded only by a spec that sets one of its fields
-- (crawl_spec.lua, optional_parts): the archive, the state file, the Redis fleet. Their
-- fields are listed here so that the check knows them without loading the parts; a
-- part adds the names of its nested tables (M.nested) when it loads.
M.optional = {
  { module = "luacrawl.crawl_warc", fields = { "warc", "from_warc" } },
  { module = "luacrawl.crawl_state",
    fields = { "state", "state_force", "commit_interval", "recrawl", "parse_unchanged", "callbacks" } },
  { module = "luacrawl.crawl_redis", fields = { "redis", "crawl_id", "worker_id", "lease" } },
  { module = "luacrawl.crawl_dashboard", fields = { "dashboard" } },
  { module = "luacrawl.crawl_render", fields = { "render", "render_options", "browser" } },
}
for _, part in ipairs(M.optional) do
  for _, n in ipairs(part.fields) do M.fields[#M.fields + 1] = n end
end

-- crawl.defaults entries that are the defaults of other fields, not fields.
local NOT_FIELDS = { throttle_fields = true, progress_intervals = true }

-- The names each nested table takes (fetch: the engine's list, read on first use).
M.nested = {
  allow = { "hosts", "urls", "regex" },
  deny = { "hosts", "urls", "regex" },
  throttle = { "target", "min_delay", "max_delay" },
  normalize = { "sort_query", "strip", "keep_fragment" },
  output = { "path", "format", "fields", "append", "where" },
}

function M.add_fields(names)
  for _, n in ipairs(names) do M.fields[#M.fields + 1] = n end
end

-- The known name closest to name, when it is close enough to be a misspelling
-- (at most a third of its letters off, at least 2), else nil: the engine's one
-- suggestion (lua_opts.c), which refuses the options of lc.fetch and the rest.
function M.suggest(name, known)
  return core.suggest(name, known)
end

-- " (did you mean 'x'?)" or "".
function M.hint(name, known)
  local s = M.suggest(name, known)
  return s and (" (did you mean '%s'?)"):format(s) or ""
end

local function set_of(list)
  local s = {}
  for _, k in ipairs(list) do s[k] = true end
  return s
end

-- Raise "crawl.run: unknown field 'k' (did you mean ...?)[ in where]" naming every
-- string key of t not in known (sorted: the same message every run).
local function check_keys(t, known, where)
  local set, bad = set_of(known), {}
  for k in pairs(t) do
    if type(k) == "string" and not set[k] then bad[#bad + 1] = k end
  end
  if not bad[1] then return end
  table.sort(bad)
  local said = {}
  for i, k in ipairs(bad) do said[i] = ("'%s'%s"):format(k, M.hint(k, known)) end
  error(("crawl.run: unknown field%s %s%s"):format(bad[2] and "s" or "", table.concat(said, ", "),
    where and (" in " .. where) or ""), 0)
end

local function is_plain_table(v)
  return type(v) == "table" and getmetatable(v) == nil
end

-- Check spec's names (defaults: crawl.defaults). Raises with a message; returns
-- nothing. Tables with a metatable (a jar, a regex object) are not looked into.
function M.check(spec, defaults)
  local known = {}
  for k in pairs(defaults) do
    if not NOT_FIELDS[k] then known[#known + 1] = k end
  end
  for _, k in ipairs(M.fields) do known[#known + 1] = k end
  check_keys(spec, known)
  if not M.nested.fetch then M.nested.fetch = core.fetch_option_names() end
  for name, names in pairs(M.nested) do
    local v = spec[name]
    if name == "output" and is_plain_table(v) and v.path == nil then
      for i, o in ipairs(v) do
        if is_plain_table(o) and o.path ~= nil then check_keys(o, names, ("output[%d]"):format(i)) end
      end
    elseif is_plain_table(v) and (name ~= "output" or v.path ~= nil) then
      check_keys(v, names, name)
    end
  end
end

-- The numbers of a spec and the range each takes (no max: up to the largest
-- integer a number holds exactly), checked by the engine's one rule (lua_opts.c,
-- lua_check.c): NaN and infinities are refused, which would otherwise hang the
-- dispatcher (NaN compares false with every limit) or stop a host for ever (an
-- infinite delay). nil is the default. Names are checked by M.check (open).
local YEAR = 365 * 24 * 3600 -- the longest wait a spec may ask for, in seconds
local SPEC_NUMBERS = core.option_decl({
  caller = "crawl.run", label = "crawl.run: %s", open = true,
  { "concurrency", "integer", 1 }, { "per_host", "integer", 1 }, { "retries", "integer", 0 },
  { "max_redirect", "integer", 0 }, { "max_depth", "integer", 0 }, { "max_pages", "integer", 0 },
  { "max_robots_size", "integer", 0 }, { "robots_redirects", "integer", 0 },
  { "delay", "number", 0, YEAR }, { "max_delay", "number", 0, YEAR },
  { "max_retry_after", "number", 0, YEAR }, { "stop_grace", "number", 0, YEAR },
  { "max_time", "number", 0, YEAR }, { "max_host_time", "number", 0, YEAR },
  { "progress_interval", "number", 0.001, YEAR },
})
local THROTTLE_NUMBERS = core.option_decl({
  caller = "crawl.run", label = "crawl.run: throttle.%s", open = true,
  { "target", "number", 0.001, 1e6 }, { "min_delay", "number", 0, YEAR }, { "max_delay", "number", 0, YEAR },
})

-- Check the numbers of spec s (with crawl.defaults filled in); raises with a message.
function M.check_numbers(s)
  core.check_options(s, SPEC_NUMBERS)
  if type(s.throttle) == "table" then core.check_options(s.throttle, THROTTLE_NUMBERS) end
  if type(s.retry_statuses) ~= "table" then error("crawl.run: retry_statuses must be a list of HTTP statuses", 0) end
  for i, v in ipairs(s.retry_statuses) do
    core.check_integer(v, ("crawl.run: retry_statuses[%d]"):format(i), 100, 999)
  end
end

-- Command lines -------------------------------------------------------------------

-- args with each "--name=value" of an option that takes a value (takes_value(name)
-- true) split in two, as getopt_long reads it, and each "-xVALUE" of a short one
-- ("-n1", "-d0"); the rest as given (an option's value is never split itself).
function M.split_equals(args, takes_value)
  local out, value_next = {}, false
  for _, a in ipairs(args) do
    local name, v = a:match("^(%-%-[%w-]+)=(.*)$")
    if not value_next and not name and a:match("^%-%w.") and takes_value(a:sub(1, 2)) then
      name, v = a:sub(1, 2), a:sub(3) -- -n1, -d0, -ofile: a short option's value attached, as getopt takes it
    end
    if not value_next and name and takes_value(name) then
      out[#out + 1], out[#out + 2] = name, v
      value_next = false
    else
      out[#out + 1] = a
      value_next = not value_next and takes_value(a) and true or false
    end
  end
  return out
end

-- "unknown option '--dept' (did you mean '--depth'?)" for an option not among the
-- keys of the given tables (names: "--x" and "-x").
function M.unknown_option(a, ...)
  local known = {}
  for _, t in ipairs({ ... }) do
    for k in pairs(t) do known[#known + 1] = k end
  end
  local name = a:match("^(%-%-?[^=]+)=") or a
  return ("unknown option '%s'%s"):format(name, M.hint(name, known))
end

return M
