-- luacrawl.crawl_calls: how the crawl takes what the code it calls hands back: a
-- hook's answer (false drops, with a reason; a table replaces; nil keeps), hooks given
-- as lists, request tables checked by name, a failed request told to its errback or
-- on_error (which may queue it again), a cancel told from an error, and the message of
-- any error raised.
local core = require "luacrawl.core"

local M = {}

-- An error a task raises when it is cancelled (the crawl ending): passed on, never
-- reported.
function M.is_cancel(err)
  return type(err) == "table" and err.kind == "cancelled"
end

-- The message of an error raised in a task, as a string; a fixed one when even that
-- fails (a __tostring that raises, no memory left to format it).
function M.error_message(err)
  if type(err) == "string" then return err end
  local ok, msg = pcall(tostring, err)
  if ok and type(msg) == "string" then return msg end
  return "an error whose message could not be made"
end

-- Apply a hook: false drops (nil and the hook's reason, when it gave one), a table
-- replaces, nil keeps.
function M.apply_hook(hook, value, ...)
  if not hook then return value end
  local r, why = hook(value, ...)
  if r == false then return nil, why end
  if type(r) == "table" then return r end
  return value
end

-- Hooks ---------------------------------------------------------------------------

-- A list of hooks as one: those that take a value (on_request, on_response,
-- on_item) hand it on, the first to drop it ends the run; on_error's answer is the
-- first that is not nil; on_host's are ignored.
local function chain_filter(list)
  return function(value, ...)
    for i = 1, #list do
      local r, why = list[i](value, ...)
      if r == false then return false, why end
      if type(r) == "table" then value = r end
    end
    return value
  end
end

local function chain_first(list)
  return function(...)
    for i = 1, #list do
      local r = list[i](...)
      if r ~= nil then return r end
    end
  end
end

local HOOKS = {
  { "on_request", chain_filter }, { "on_response", chain_filter }, { "on_item", chain_filter },
  { "on_error", chain_first }, { "on_host", chain_first },
}

-- A hook field that is a function or a list of functions (made one); raises naming it.
local function hook_of(name, v, chain)
  if v == nil or type(v) == "function" then return v end
  local ok = type(v) == "table" and getmetatable(v) == nil and v[1] ~= nil
  for k, f in pairs(ok and v or {}) do
    if type(k) ~= "number" or type(f) ~= "function" then
      error(("crawl.run: %s[%s] must be a function (got %s)"):format(name, tostring(k), type(f)), 0)
    end
  end
  if not ok then
    error(("crawl.run: %s must be a function or a list of functions (got %s)"):format(name, type(v)), 0)
  end
  if #v == 1 then return v[1] end
  return chain(v)
end

-- The spec's hooks checked, lists made one function each; parse and the callbacks
-- checked too. Raises with a message naming the field.
function M.check_hooks(s)
  for _, h in ipairs(HOOKS) do s[h[1]] = hook_of(h[1], s[h[1]], h[2]) end
  if s.parse ~= nil and type(s.parse) ~= "function" then
    error(("crawl.run: parse must be a function (got %s)"):format(type(s.parse)), 0)
  end
  local cbs = s.callbacks
  if cbs == nil then return end
  if type(cbs) ~= "table" then
    error(("crawl.run: callbacks must be a table of functions by name (got %s)"):format(type(cbs)), 0)
  end
  for name, fn in pairs(cbs) do
    if type(name) ~= "string" or type(fn) ~= "function" then
      error(("crawl.run: callbacks.%s must be a function (got %s)"):format(tostring(name), type(fn)), 0)
    end
  end
end

-- The key a host_key function gave for url, when it is a string; else an error
-- naming host_key.
function M.checked_key(key, url)
  if type(key) == "string" then return key end
  error(("host_key: the function returned %s for %s: it must return a string (the URL's host key)"):format(
    key == nil and "nil" or "a " .. type(key), url), 0)
end

-- Requests ------------------------------------------------------------------------

-- A request's fields (docs/crawl.md, "Requests and pages"): {name, type, min}. The
-- last ones are set by the crawl and its durable backends on the tables it hands
-- to hooks, which may hand them back.
M.request_fields = {
  { "url", "string" }, { "depth", "integer", 0 }, { "priority", "number" }, { "meta", "table" },
  { "callback" }, { "errback" }, { "dont_filter" }, { "method", "string" }, { "headers", "table" },
  { "body", "string" }, { "dedupe_key" }, { "replace_headers" }, { "key" }, { "referrer", "string" },
  { "redirects", "integer", 0 }, { "retries", "integer", 0 }, { "requeues", "integer", 0 },
  { "start_url" }, { "recrawl" }, { "changed" }, { "working" }, { "held" }, { "retrying" },
  { "sid" }, { "lease" }, { "extra" }, { "_warc" }, { "_claimed" }, { "_outcome" }, { "_in_redis" },
  { "_wait" }, { "_requeued" }, { "_epoch" }, { "_item" }, { "kept_record" },
}
-- What page:follow's options may set: the request's own fields but its place.
local FOLLOW_FIELDS = {
  callback = true, errback = true, meta = true, priority = true, dont_filter = true, method = true,
  headers = true, body = true, dedupe_key = true, replace_headers = true,
}

local decls = {}

-- The declaration of a request for caller (made once each).
local function decl_of(caller)
  local d = decls[caller]
  if d then return d end
  local t = { caller = caller, label = caller .. ": %s" }
  for _, f in ipairs(M.request_fields) do
    if caller ~= "follow" or FOLLOW_FIELDS[f[1]] then t[#t + 1] = f end
  end
  d = core.option_decl(t)
  decls[caller] = d
  return d
end

-- Fields of the request list added (a part of the crawl that reads its own).
function M.add_request_fields(list)
  for _, f in ipairs(list) do M.request_fields[#M.request_fields + 1] = f end
  decls = {}
end

local function check_call(caller, name, v)
  local t = type(v)
  if v ~= nil and t ~= "function" and t ~= "string" then
    error(("%s: %s must be a function or the name of one in the spec's callbacks (got %s)"):format(caller, name, t), 0)
  end
end

-- Check t, a request table (or follow's options) given by caller ("follow",
-- "crawler:enqueue", "on_request" ...): unknown names refused with "did you mean",
-- each field of its type. Returns nil, the message (no position) when it fails.
function M.check_request(t, caller)
  if type(t) ~= "table" then return nil, ("%s: a request must be a table (got %s)"):format(caller, type(t)) end
  local ok, err = pcall(core.check_options, t, decl_of(caller))
  if not ok then return nil, (tostring(err):gsub("^[^:]*:%d+: ", "")) end
  ok, err = pcall(check_call, caller, "callback", t.callback)
  if ok then ok, err = pcall(check_call, caller, "errback", t.errback) end
  if not ok then return nil, err end
  if caller ~= "follow" and type(t.url) ~= "string" then
    return nil, ("%s: a request needs a url (a string)"):format(caller)
  end
  return t
end

-- Errors a policy can act on ----------------------------------------------------

-- Tell req's errback (a function, or a callback's name), else the spec's on_error, that
-- req failed for good with err: a table it returns is queued (a new request, or req
-- again: its URL then skips deduplication, having been seen). Raises what the hook
-- raises, and for a table it returns that is not a request.
function M.tell_error(crawler, req, err)
  local hook, name = req and req.errback, "errback"
  if type(hook) == "string" then hook = crawler:callback(hook) end
  if not hook then hook, name = crawler.spec.on_error, "on_error" end
  if not hook or not req then return end
  local again = hook(req, err, crawler)
  if type(again) ~= "table" then return end
  local ok, msg = M.check_request(again, name)
  if not ok then error(msg, 0) end
  if again.url == req.url then again.dont_filter = true end
  if again == req then again.retries = nil end -- its retries start again
  again.requeues = (req.requeues or 0) + 1
  again.depth = again.depth or req.depth
  local st = crawler.stats
  st.requeued = (st.requeued or 0) + 1
  return crawler:enqueue(again)
end

return M
