-- luacrawl.stored_request: a crawl request as the durable backends store it, JSON of
-- its fields with its callback by name (a function cannot be stored), and back. The
-- state (crawl_state.lua, the `extra` column of frontier_sqlite) and the Redis fleet
-- (frontier_redis.lua, its items) both use it, so a request is written one way.
--
--   encode, decode = stored_request.codec(opts)   once per crawl:
--     callbacks   spec.callbacks (name -> function); parse: spec.parse, named "parse"
--                 unless callbacks gives that name to another function
--     apart       the fields the backend keeps apart (its own columns, its bookkeeping)
--     where       how a refusal ends its sentence: "kept in the state", "shared by
--                 the fleet"
--   encode(req)           -> the JSON text, or nil when every field is kept apart;
--                            raises when a callback is not named, or a field is not JSON
--   decode(text[, req])   -> the request: text's fields set on req (or a new table),
--                            its callback's name back to the function
--
-- The JSON is the stored format: a state written by an earlier luacrawl resumes, and
-- workers of one fleet read each other's requests. Keep encode's table as it is built
-- (fields in the order pairs gives them, into a fresh table): the bytes depend on it.
local lc = require "luacrawl"
local core = require "luacrawl.core"

local json_encode, json_decode = core.json_encode, core.json_decode

local M = {}

-- Fields the crawl sets on a request while it handles it: not the request's own.
M.TRANSIENT = { retrying = true, held = true, working = true, changed = true, _warc = true, kept_record = true }

function M.codec(opts)
  local skip = {}
  for k in pairs(M.TRANSIENT) do skip[k] = true end
  for k in pairs(opts.apart or {}) do skip[k] = true end
  local names, by_name = {}, {}
  for name, fn in pairs(opts.callbacks or {}) do
    names[fn] = name
    by_name[name] = fn
  end
  local parse = opts.parse
  if parse and (by_name.parse == nil or by_name.parse == parse) then
    names[parse] = names[parse] or "parse"
    by_name.parse = parse
  end
  local where = opts.where
  local unnamed = ("a request's callback must be named in the spec to be %s: callbacks = { name = fn }, "
    .. "then follow(url, { callback = fn }) or { callback = \"name\" }"):format(where)

  local function encode(req)
    local t
    for k, v in pairs(req) do
      if not skip[k] then
        if (k == "callback" or k == "errback") and type(v) == "function" then
          v = names[v]
          if not v then error(unnamed, 0) end
        end
        t = t or {}
        t[k] = v
      end
    end
    if not t then return nil end
    local ok, text = pcall(json_encode, t)
    if not ok then
      error(("a request of %s cannot be %s (its meta must be JSON: %s)"):format(
        lc.url.redact(tostring(req.url)), where, tostring(text)), 0)
    end
    return text
  end

  local function decode(text, req)
    local t = json_decode(text)
    if req then
      for k, v in pairs(t) do req[k] = v end
    elseif type(t) == "table" then
      req = t
    else
      return t
    end
    local cb = req.callback
    if type(cb) == "string" then req.callback = by_name[cb] or cb end
    return req
  end

  return encode, decode
end

return M
