-- luacrawl.finalizers: __gc metamethods that raise are reported and ignored.
--
-- A finalizer runs in whatever code happened to allocate when the collector
-- reached it. LuaJIT 2.1 as Debian 12 ships it (2.1.0~beta3 of 2022) rethrows the
-- finalizer's error there: into an unrelated function, and at a trace exit into
-- machine code without unwind information, where the process dies of SIGSEGV inside
-- the unwinder. LuaJIT of 2023 and later prints the error instead ("ERROR in
-- finalizer"); install() gives the same behaviour on older ones, for the finalizers
-- a script can set:
--   * newproxy(true): a __gc stored into the proxy's metatable (`mt.__gc = f`),
--   * ffi.gc(cdata, f),
--   * debug.setmetatable(userdata, mt) with a __gc in mt.
-- Each such function is wrapped in one that calls it in protected mode and writes
-- its error to io.stderr, looked up at each report: in an engine whose host set a
-- log callback (lc_engine_on_log), that is the callback's writer (luacrawl.embed),
-- as for the engine's other messages; else the process's stderr. Not covered: a
-- __gc put with rawset, or replacing one already there (the metatable's __newindex
-- sees only new keys).
--
-- The luacrawl binary and lc_engine_new install it in the state they create. A
-- program that requires luacrawl into its own state decides for itself:
--   require("luacrawl.finalizers").install()
local M = {}

local pcall, rawset, rawget, type, tostring = pcall, rawset, rawget, type, tostring
local getmetatable, setmetatable = getmetatable, setmetatable

local guards = setmetatable({}, { __mode = "k" }) -- the wrappers made here

local function report(err)
  -- Not a local copy of io.stderr: luacrawl.embed replaces it for a host's log.
  io.stderr:write("luacrawl: error in a __gc metamethod (ignored): ", tostring(err), "\n")
end

-- f, wrapped so that it cannot raise (f itself when it is not a function or is
-- already a wrapper).
function M.guard(f)
  if type(f) ~= "function" or guards[f] then return f end
  local function g(o)
    local ok, err = pcall(f, o)
    if not ok then pcall(report, err) end
  end
  guards[g] = true
  return g
end

local guard = M.guard

-- The metatable of a metatable: `mt.__gc = f` stores guard(f).
local trap = {
  __newindex = function(mt, k, v)
    if k == "__gc" then v = guard(v) end
    rawset(mt, k, v)
  end,
}

local function watch(mt)
  local gc = rawget(mt, "__gc")
  if gc ~= nil then rawset(mt, "__gc", guard(gc)) end
  if getmetatable(mt) == nil then setmetatable(mt, trap) end
end

local installed = false

-- Wrap newproxy, ffi.gc and debug.setmetatable of this Lua state (once).
function M.install()
  if installed then return end
  installed = true
  local newproxy0 = newproxy
  if newproxy0 then
    _G.newproxy = function(arg)
      local u = newproxy0(arg)
      if arg == true then watch(getmetatable(u)) end
      return u
    end
  end
  local ok, ffi = pcall(require, "ffi")
  if ok and ffi.gc then
    local gc0 = ffi.gc
    ffi.gc = function(cdata, f) return gc0(cdata, guard(f)) end
  end
  local setmt0 = debug.setmetatable
  debug.setmetatable = function(o, mt)
    if type(o) == "userdata" and type(mt) == "table" then watch(mt) end
    return setmt0(o, mt)
  end
end

return M
