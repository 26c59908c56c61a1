-- luacrawl.redis (lc.redis): Redis connections on the engine's event loop
-- (engine/redis.c over hiredis's async API; the binding is bindings/lua_redis.c).
-- Every call yields only the task that makes it.
--
--   local r, err = lc.redis.connect("redis://[[user]:password@]host[:port][/db]"
--                                   [, {timeout = s, connect_timeout = s}])
--   r:call("SET", "k", "v")          -> reply | nil, err
--   r:pipeline({ {"INCR", "a"}, {"GET", "a"} }) -> {reply, ..., n = 2} | nil, err
--   local s = r:script(lua_source);  s:call(keys, args) -> reply | nil, err
--   r:status()                       -> "connecting" | "ready" | "failed", err | "closed"
--   r:close()
--
-- Replies: status and bulk strings are strings, integers numbers, nil nil (false
-- inside an array, and as a pipeline's entry), arrays tables. An error reply is
-- `nil, err` with err.kind "redis", err.code its first word ("ERR", "WRONGTYPE",
-- "NOSCRIPT") and err.message the server's words; inside a pipeline or an array it
-- is that error object in its place (lc.is_error(v)). A connection that fails
-- (refused, reset, timed out) gives `nil, err` to every call waiting on it and to
-- every later call: kinds "connect", "timeout", "dns" (connect only), "protocol",
-- "memory". There is no automatic reconnect: connect again.
local core = require "luacrawl.core"

local type, select, setmetatable, error, tonumber, tostring, ipairs =
  type, select, setmetatable, error, tonumber, tostring, ipairs
local CANCELLED = core.CANCELLED
local redis_open, sha1_hex = core.redis_open, core.sha1_hex

local M = {}

-- init.lua loads this module while it builds lc: lc itself is looked up on first use.
local lc_module
local function lc()
  lc_module = lc_module or require "luacrawl"
  return lc_module
end

local function check(first, ...)
  if first == CANCELLED then error(lc().cancelled, 0) end
  return first, ...
end

local DEFAULT_PORT = 6379
local DEFAULT_TIMEOUT = 10

local function unescape(s)
  return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

-- "redis://[[user]:password@]host[:port][/db]" -> {host, port, db, user, password} |
-- nil, message. No query string: hiredis 0.14 speaks neither TLS (rediss://) nor
-- RESP3, and a Unix socket is not a URL here.
function M.parse_url(url)
  if type(url) ~= "string" then return nil, "a redis:// URL expected" end
  local rest = url:match("^[Rr][Ee][Dd][Ii][Ss]://(.*)$")
  if not rest then
    if url:match("^[Rr][Ee][Dd][Ii][Ss][Ss]://") then return nil, "rediss:// (TLS) is not supported" end
    return nil, "not a redis:// URL"
  end
  local u = { port = DEFAULT_PORT, db = 0 }
  local auth, hostpart = rest:match("^(.*)@([^@]*)$")
  if auth then
    local user, pass = auth:match("^([^:]*):(.*)$")
    if user then
      u.user = user ~= "" and unescape(user) or nil
      u.password = unescape(pass)
    else
      u.password = unescape(auth) -- redis://password@host, as some clients take it
    end
    rest = hostpart
  end
  local hostport, path = rest:match("^([^/?#]*)(.*)$")
  if path:find("[?#]") then return nil, "a query or fragment in a redis:// URL is not supported" end
  if hostport:sub(1, 1) == "[" then return nil, "IPv6 addresses are not supported" end
  local host, port = hostport:match("^(.-):(%d*)$")
  if host then
    u.host = host
    if port ~= "" then u.port = tonumber(port) end
  else
    u.host = hostport
  end
  if u.host == "" then return nil, "no host in the redis:// URL" end
  if u.port < 1 or u.port > 65535 then return nil, "port out of range" end
  if path ~= "" and path ~= "/" then
    local db = path:match("^/(%d+)$")
    if not db then return nil, "the path must be a database number: " .. path end
    u.db = tonumber(db)
  end
  return u
end

local function redact(url)
  return (url:gsub("^(%a+://)[^/@]*@", "%1***@", 1))
end

local function check_timeout(opts, name, default)
  local v = opts[name]
  if v == nil then return default end
  if type(v) ~= "number" or v ~= v or v < 0 or v > 1e9 then
    error(("redis.connect: option '%s' must be a number of seconds >= 0 (got %s)"):format(name, tostring(v)), 3)
  end
  return v
end

-- The IPv4 addresses of host: itself when it is one, else what lc.resolve gives.
local function addresses(host)
  if host:match("^%d+%.%d+%.%d+%.%d+$") then return { host } end
  local addrs, err = lc().resolve(host)
  if not addrs then return nil, err end
  local v4 = {}
  for _, a in ipairs(addrs) do
    if a:match("^%d+%.%d+%.%d+%.%d+$") then v4[#v4 + 1] = a end
  end
  if #v4 == 0 then
    return nil, lc().error("dns", host .. ": no IPv4 address (IPv6 is not supported)")
  end
  return v4
end

local Redis = {}
Redis.__index = Redis
M.Redis = Redis

local function handshake(r, u)
  if u.password then
    local ok, err
    if u.user then
      ok, err = r:call("AUTH", u.user, u.password)
    else
      ok, err = r:call("AUTH", u.password)
    end
    if not ok then return nil, err end
  end
  if u.db ~= 0 then
    local ok, err = r:call("SELECT", u.db)
    if not ok then return nil, err end
  end
  return true
end

-- lc.redis.connect(url [, {timeout =, connect_timeout =}]) -> r | nil, err
function M.connect(url, opts)
  if opts ~= nil and type(opts) ~= "table" then error("redis.connect: opts must be a table", 2) end
  opts = opts or {}
  local u, msg = M.parse_url(url)
  if not u then error("redis.connect: " .. msg .. " (" .. redact(tostring(url)) .. ")", 2) end
  local timeout = check_timeout(opts, "timeout", DEFAULT_TIMEOUT)
  local connect_timeout = check_timeout(opts, "connect_timeout", timeout > 0 and timeout or DEFAULT_TIMEOUT)
  local addrs, err = addresses(u.host)
  if not addrs then return nil, err end
  for _, addr in ipairs(addrs) do
    local c
    c, err = redis_open(addr, u.port, connect_timeout, timeout)
    if c then
      local ok
      ok, err = check(c:wait())
      if ok then
        local r = setmetatable({ _c = c, url = redact(url), db = u.db }, Redis)
        ok, err = handshake(r, u)
        if ok then return r end
        c:close()
        return nil, err -- the server answered: another address would say the same
      end
      c:close()
    end
  end
  return nil, err
end

-- r:call(command, args...) -> reply | nil, err
function Redis:call(...)
  local n = select("#", ...)
  if n == 0 then error("redis: call needs a command", 2) end
  return check(self._c:call({ n = n, ... }))
end

-- r:pipeline({ {command, args...}, ... }) -> {reply, ..., n = count} | nil, err: every
-- command is written at once and the replies come back in order.
function Redis:pipeline(cmds)
  if type(cmds) ~= "table" then error("redis: pipeline takes a list of commands", 2) end
  return check(self._c:pipeline(cmds))
end

function Redis:status()
  return self._c:status()
end

function Redis:close()
  self._c:close()
end

Redis.__tostring = function(r)
  return "redis connection " .. r.url .. (r._c:status() == "closed" and " (closed)" or "")
end

-- Scripts: EVALSHA by the source's SHA-1; a server that does not have it (NOSCRIPT:
-- restarted, SCRIPT FLUSH) gets EVAL, which loads it again.
local Script = {}
Script.__index = Script

function Redis:script(source)
  if type(source) ~= "string" then error("redis: script takes the Lua source as a string", 2) end
  return setmetatable({ redis = self, source = source, sha = sha1_hex(source) }, Script)
end

local function script_argv(first, second, keys, args)
  local argv = { first, second, #keys }
  for i = 1, #keys do argv[#argv + 1] = keys[i] end
  for i = 1, #args do argv[#argv + 1] = args[i] end
  argv.n = #argv
  return argv
end

-- s:call([keys [, args]]) -> reply | nil, err
function Script:call(keys, args)
  keys, args = keys or {}, args or {}
  if type(keys) ~= "table" or type(args) ~= "table" then
    error("redis: script:call(keys, args) takes two lists", 2)
  end
  local c = self.redis._c
  local res, err = check(c:call(script_argv("EVALSHA", self.sha, keys, args)))
  if res == nil and err and err.code == "NOSCRIPT" then
    return check(c:call(script_argv("EVAL", self.source, keys, args)))
  end
  return res, err
end

-- s:load() -> the SHA-1 | nil, err: SCRIPT LOAD, for a caller that wants it there
-- before the first call (a pipeline of EVALSHA, say).
function Script:load()
  return self.redis:call("SCRIPT", "LOAD", self.source)
end

return M
