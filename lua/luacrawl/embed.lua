-- luacrawl.embed: the Lua side of the embedding API (bindings/engine.c). Not for
-- scripts: lc.host is theirs.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local plain_text = core.plain_text
local encode, decode, null = core.json_encode, core.json_decode, core.json_null

local M = {}

-- An error for a person: without the position of the Lua line that raised it.
local function plain(err)
  return (tostring(err):gsub("^[^\n:]-%.lua:%d+: ", ""))
end

-- Start fn(...) as the main task without running the loop: -> the task.
local function start(fn, ...)
  return core.start(fn, ...)
end

-- -> the main task, or nil after saying why the script cannot be loaded.
function M.start_file(path, args)
  local chunk, err = loadfile(path)
  if not chunk then
    io.stderr:write("luacrawl: ", err, "\n")
    return nil
  end
  local script_args = { [0] = path }
  for i = 1, #args do script_args[i] = args[i] end
  _G.arg = script_args
  return start(chunk, unpack(script_args))
end

function M.start_string(text, name)
  local chunk, err = loadstring(text, name)
  if not chunk then
    io.stderr:write("luacrawl: ", err, "\n")
    return nil
  end
  return start(chunk)
end

-- The run has ended: the exit status `luacrawl run` gives (0, or 1 with the error
-- and its traceback said). task is nil when the loop itself failed (err says why).
function M.finish(task, err)
  local ok, e, tb = core.finish(task)
  if task and ok then return 0 end
  io.stderr:write("luacrawl: ", plain_text(tostring(err or tb or e), "\t\n"), "\n")
  return 1
end

-- lc_engine_call: fn(decoded args) -> its result as JSON text.
function M.call(name, args)
  local fn = lc.host._exposed[name]
  if not fn then error(("no function '%s' exposed (lc.host.expose)"):format(name), 0) end
  local v
  if args ~= nil and args ~= "" then v = decode(args) end
  if v == null then v = nil end
  local r = fn(v)
  if r == nil then r = null end
  return encode(r)
end

-- lc_engine_on_item: deliver(text) gets each item as JSON text; an item that has
-- no JSON form (the outputs have said so) is not delivered.
function M.item_sink(deliver)
  if not deliver then
    lc.host._item = nil
    return
  end
  lc.host._item = function(item)
    local ok, text = pcall(encode, item)
    if ok then deliver(text) end
  end
end

-- lc_engine_on_log: io.stderr becomes a writer that gives deliver(line) each line
-- (a progress line ends at its \r or at a flush; terminal escapes dropped). nil:
-- the real stderr again.
local real_stderr = io.stderr

local function writer(deliver)
  local pending = ""
  local w = {}
  local function emit(line)
    line = line:gsub("\27%[[%d;]*%a", "")
    if line ~= "" then deliver(line) end
  end
  function w.write(self, ...)
    -- The unfinished line is taken before anything here allocates or calls out: a
    -- write made meanwhile (a __gc report from luacrawl.finalizers, a __tostring)
    -- is a line of its own, not one with this line's start glued to it twice.
    local head = pending
    pending = ""
    local parts = { head }
    for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
    local text = table.concat(parts)
    local start = 1
    for stop in text:gmatch("()[\r\n]") do
      emit(text:sub(start, stop - 1))
      start = stop + 1
    end
    pending = pending .. text:sub(start)
    return self
  end
  function w.flush(self)
    local line = pending
    pending = ""
    emit(line)
    return self
  end
  function w.setvbuf() return true end
  function w.close() return nil, "the engine's log cannot be closed" end
  function w.lines() error("the engine's log cannot be read", 2) end
  function w.read() return nil, "the engine's log cannot be read" end
  function w.seek() return nil, "the engine's log cannot seek" end
  return w
end

function M.log_to(deliver)
  if io.stderr ~= real_stderr and io.stderr.flush then io.stderr:flush() end
  io.stderr = deliver and writer(deliver) or real_stderr
end

M.plain = plain
return M
