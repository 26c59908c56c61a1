-- luacrawl.export: item outputs for crawls. JSON Lines or CSV chosen by the file
-- name's extension ("-" is JSON Lines on stdout), a Lua table (items appended), or
-- a function called with each item.
--
-- Records are buffered as whole lines and written 256 at a time (and whenever the
-- crawl flushes, once a second), so a crawl that is stopped (even by a second
-- Ctrl-C) leaves files that end on a complete line.
-- JSON text as cjson.encode writes it, several times faster (engine/lua_json.c);
-- JSON Lines are kept in C (json_lines) until written, not made a string each.
local core = require "luacrawl.core"
local encode, json_lines, json_append, json_take = core.json_encode, core.json_lines,
  core.json_append, core.json_take

local M = {}

local Output = {}
Output.__index = Output

local function csv_cell(v)
  if v == nil or v == core.json_null then return "" end
  if type(v) == "table" then v = encode(v) end
  v = tostring(v)
  if v:find('[,"\r\n]') then v = '"' .. v:gsub('"', '""') .. '"' end
  return v
end

-- JSON text for an item; some Lua values cannot be written (functions, sparse
-- arrays): those items are reported, not written half.
local function json_line(item)
  local ok, text = pcall(encode, item)
  if not ok then return nil, text end
  return text .. "\n"
end

local function sorted_keys(item)
  local keys = {}
  for k in pairs(item) do
    if type(k) == "string" then keys[#keys + 1] = k end
  end
  table.sort(keys)
  return keys
end

function Output:write(item)
  if self.fn then
    -- A function output reports a failure by returning nil (or false) and a message.
    local ok, err = self.fn(item)
    if not ok and err ~= nil then return nil, err end
    return true
  end
  if self.list then
    self.list[#self.list + 1] = item
    return true
  end
  local buffer = self.buffer
  if self.format == "csv" then
    if not self.fields then
      self.fields = self.spec_fields or sorted_keys(item)
      local head = {}
      for i, f in ipairs(self.fields) do head[i] = csv_cell(f) end
      self.buffer[#self.buffer + 1] = table.concat(head, ",") .. "\r\n"
    end
    local cells = {}
    for i, f in ipairs(self.fields) do cells[i] = csv_cell(item[f]) end
    buffer[#buffer + 1] = table.concat(cells, ",") .. "\r\n"
  else
    local ok, err = pcall(json_append, self.lines_held, item)
    if not ok then return nil, err end
  end
  self.count = self.count + 1
  self.lines = self.lines + 1
  if self.lines >= 256 then return self:flush() end
  return true
end

-- Write what is buffered, whole lines only.
function Output:flush()
  if not self.file then return true end
  local text
  if self.lines_held then
    text = json_take(self.lines_held)
  elseif #self.buffer > 0 then
    text = table.concat(self.buffer)
    self.buffer = {}
  end
  self.lines = 0
  if not text or text == "" then return true end
  local ok, err = self.file:write(text)
  if ok then ok, err = self.file:flush() end
  if not ok then return nil, ("%s: %s"):format(self.name, err) end
  return true
end

function Output:close()
  local ok, err = self:flush()
  if self.file and self.file ~= io.stdout then
    local cok, cerr = self.file:close()
    if ok and not cok then ok, err = nil, ("%s: %s"):format(self.name, cerr) end
  end
  self.file = nil
  return ok, err
end

-- Open an output for target: "items.jsonl", "items.csv", "-", {path=, format=}, a
-- table (items appended) or a function.
-- opts.fields fixes the CSV columns (else the sorted keys of the first item).
function M.open(target, opts)
  opts = opts or {}
  local o = setmetatable({ buffer = {}, lines = 0, count = 0, spec_fields = opts.fields }, Output)
  if type(target) == "table" and target.path then
    -- {path = "/dev/stdout", format = "csv"}: a file whose name does not say its format.
    opts.format, target = target.format, target.path
  end
  if type(target) == "function" then
    o.fn, o.name = target, "function"
    return o
  elseif type(target) == "table" then
    o.list, o.name = target, "table"
    return o
  elseif type(target) ~= "string" then
    error("output must be a file name, '-', a table or a function", 2)
  end
  o.name = target
  if target == "-" then
    o.file, o.format, o.lines_held = io.stdout, "jsonl", json_lines()
    return o
  end
  local ext = opts.format or target:match("%.([%w]+)$")
  ext = ext and ext:lower()
  if ext == "csv" then
    o.format = "csv"
  elseif ext == "jsonl" or ext == "ndjson" or ext == "json" or ext == "jl" then
    o.format, o.lines_held = "jsonl", json_lines()
  else
    error(("output %q: unknown format (use .jsonl or .csv)"):format(target), 2)
  end
  local f, err = io.open(target, opts.append and "ab" or "wb")
  if not f then error(("output %q: %s"):format(target, err), 2) end
  o.file = f
  return o
end

M.json_line = json_line

return M
