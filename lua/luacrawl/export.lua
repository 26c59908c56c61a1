-- luacrawl.export: item outputs for crawls. JSON Lines, JSON (.json: one array,
-- closed when the crawl ends, by a signal too) or CSV chosen by the file name's
-- extension ("-" is JSON Lines on stdout), a Lua table (items appended), or a
-- function called with each item.
--
-- Records are buffered as whole lines and written 256 at a time (and whenever the
-- crawl flushes, once a second), so a crawl that is stopped (even by a second
-- Ctrl-C) leaves files that end on a complete line.
-- JSON text as cjson.encode writes it, several times faster (bindings/lua_json.c);
-- JSON Lines are kept in C (json_lines) until written, not made a string each.
-- Text is written as valid UTF-8 whatever bytes a server sent: ill-formed sequences
-- become U+FFFD, in JSON and in CSV; CSV cells show control characters other than
-- tab and newline as their Control Pictures (ESC as U+241B), never raw.
--
-- A file output whose write, flush or close fails is broken from then on: the
-- records of that write and every later one are lost (counted in out.lost, not in
-- out.count), and out.failed holds the first error ("items.jsonl: No space left on
-- device"). The crawl stops on it (luacrawl.crawl).
local core = require "luacrawl.core"
local encode, json_lines, json_append, json_take, json_keys = core.json_encode, core.json_lines,
  core.json_append, core.json_take, core.json_keys
local plain_text = core.plain_text

local M = {}

local Output = {}
Output.__index = Output

local function csv_cell(v)
  if v == nil or v == core.json_null then return "" end
  if type(v) == "table" then v = encode(v) end
  v = plain_text(tostring(v), "\t\n")
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

-- The CSV row of item (and the header row before the first); raises, as encode
-- does, for a table cell JSON cannot hold.
function Output:csv_rows(item)
  local rows, fields = {}, self.fields
  if not fields then
    fields = self.spec_fields or sorted_keys(item)
    local head = {}
    for i, f in ipairs(fields) do head[i] = csv_cell(f) end
    rows[1] = table.concat(head, ",") .. "\r\n"
  end
  local cells = {}
  for i, f in ipairs(fields) do cells[i] = csv_cell(item[f]) end
  rows[#rows + 1] = table.concat(cells, ",") .. "\r\n"
  self.fields = fields
  if not self.spec_fields and self.count + self.lines > 0 then self:check_columns(item) end
  return rows
end

-- Columns taken from the first item: a later item's key that is not one is not
-- written. Said once (out.warning, which the crawl logs), with the fix.
function Output:check_columns(item)
  if self.warning then return end
  local cols = self.columns
  if not cols then
    cols = {}
    for _, f in ipairs(self.fields) do cols[f] = true end
    self.columns = cols
  end
  for k in pairs(item) do
    if type(k) == "string" and not cols[k] then
      self.warning = ("output %s: item key '%s' is not a CSV column (columns come from the first item) "
        .. "and is not written: give the columns with fields = {...}"):format(self.name, k)
      return
    end
  end
end

function Output:write(item)
  if self.failed then
    self.lost = self.lost + 1
    return nil, self.failed
  end
  if self.fn then
    -- A function output reports a failure by returning nil (or false) and a message.
    local ok, err = self.fn(item)
    if not ok and err ~= nil then return nil, err end
    self.count = self.count + 1
    return true
  end
  if self.list then
    self.list[#self.list + 1] = item
    self.count = self.count + 1
    return true
  end
  if self.format == "json" then
    local ok, text = pcall(encode, item)
    if not ok then return nil, text end
    self.buffer[#self.buffer + 1] = (self.opened and ",\n" or "[\n") .. text
    self.opened = true
  elseif self.format == "csv" then
    local ok, rows = pcall(self.csv_rows, self, item)
    if not ok then return nil, rows end
    local buffer = self.buffer
    for _, row in ipairs(rows) do buffer[#buffer + 1] = row end
  else
    -- The fields read once (core.json_keys), at the first line: each record is then
    -- written in one pass over it, its keys already escaped.
    local keys = self.json_keys
    if keys == nil then
      local fields = self.spec_fields
      keys = fields and #fields <= 64 and json_keys(fields) or fields or false
      self.json_keys = keys
    end
    local ok, err = pcall(json_append, self.lines_held, item, keys or nil)
    if not ok then return nil, err end
  end
  self.lines = self.lines + 1
  if self.lines >= 256 then return self:flush() end
  return true
end

-- A write, flush or close of the file failed: the output is broken.
function Output:fail(err)
  self.failed = self.failed or ("%s: %s"):format(self.name, tostring(err))
  self.lost = self.lost + self.lines
  self.lines = 0
  return nil, self.failed
end

-- Write what is buffered, whole lines only. Once the output is broken, there is
-- nothing more to write (and its error was returned once).
function Output:flush()
  if not self.file or self.failed then return true end
  local text
  if self.lines_held then
    text = json_take(self.lines_held)
  elseif #self.buffer > 0 then
    text = table.concat(self.buffer)
    self.buffer = {}
  end
  if not text or text == "" then
    self.lines = 0
    return true
  end
  local ok, err = self.file:write(text)
  if ok then ok, err = self.file:flush() end
  if not ok then return self:fail(err) end
  self.count = self.count + self.lines
  self.lines = 0
  return true
end

function Output:close()
  local failed = self.failed
  -- A JSON document is closed however the crawl ended (a signal too): a valid array.
  if self.format == "json" and self.file and not failed then
    self.buffer[#self.buffer + 1] = self.opened and "\n]\n" or "[]\n"
  end
  local ok, err = self:flush()
  if self.file and self.file ~= io.stdout then
    local cok, cerr = self.file:close()
    if ok and not cok and not failed then ok, err = self:fail(cerr) end
  end
  self.file = nil
  return ok, err
end

-- CSV columns given by a spec: a list of names, checked when the output opens (a
-- string or a number among them would fail every row, or make a column never filled).
local function check_fields(fields, where)
  if fields == nil then return nil end
  local ok = type(fields) == "table" and fields[1] ~= nil
  if ok then
    for k, f in pairs(fields) do
      if type(k) ~= "number" or type(f) ~= "string" or f == "" then ok = false end
    end
  end
  if not ok then
    error(('%sfields must be a list of item keys, as {"url", "title"} (got %s)'):format(where,
      type(fields) == "string" and ("%q"):format(fields) or type(fields)), 0)
  end
  return fields
end

-- An output's where: a function(item) -> true to take it, or a table of item fields
-- and the values they must have ({type = "product"}), made that function.
local function where_of(where, name)
  if where == nil then return false end
  if type(where) == "function" then return where end
  if type(where) ~= "table" or next(where) == nil then
    error(('output %q: where must be a function(item) or a table of fields and values, as {type = "product"} '
      .. "(got %s)"):format(name, type(where)), 0)
  end
  return function(item)
    for k, v in pairs(where) do
      if item[k] ~= v then return false end
    end
    return true
  end
end

-- Does this output take item (its where, if it has one)?
function Output:takes(item)
  local where = self.where
  return not where or where(item)
end

-- Open an output for target: "items.jsonl", "items.csv", "-", {path=, format=}, a
-- table (items appended) or a function.
-- opts.fields fixes the CSV columns (else the sorted keys of the first item).
function M.open(target, opts)
  opts = opts or {}
  -- lines: records held, not yet written; count: records written (a file's when
  -- a write of them succeeded); lost: records a failed write lost. The fields each
  -- write reads start false, not nil: a nil one is looked up in Output too.
  local o = setmetatable({
    buffer = {}, lines = 0, count = 0, lost = 0, spec_fields = check_fields(opts.fields, "crawl.run: "),
    failed = false, warning = false, fn = false, list = false, where = false,
  }, Output)
  if type(target) == "table" and target.path then
    o.where = where_of(target.where, tostring(target.path))
    -- {path = "/dev/stdout", format = "csv"}: a file whose name does not say its format.
    o.spec_fields = check_fields(target.fields, ("output %q: "):format(tostring(target.path))) or o.spec_fields
    opts.format, opts.append, target = target.format, target.append or opts.append, target.path
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
  o.to_stdout = target == "-" or target == "/dev/stdout" or target == "/dev/fd/1"
  if target == "-" then
    o.name = "stdout"
    o.file, o.format, o.lines_held = io.stdout, "jsonl", json_lines()
    return o
  end
  local ext = opts.format or target:match("%.([%w]+)$")
  ext = ext and ext:lower()
  -- A name without an extension (/dev/stdout, a FIFO) gets the default, JSON Lines.
  if not ext and not target:match("[^/]*$"):find(".", 1, true) then ext = "jsonl" end
  if ext == "csv" then
    o.format = "csv"
  elseif ext == "json" then
    o.format = "json" -- one array, written as items come and closed by close()
  elseif ext == "jsonl" or ext == "ndjson" or ext == "jl" then
    o.format, o.lines_held = "jsonl", json_lines()
  else
    error(("output %q: unknown format (use .jsonl, .json or .csv)"):format(target), 2)
  end
  o.path = target
  if opts.resume_at then return M.resume(o, target, opts.resume_at) end
  if opts.append then
    -- Appended: written on from the file's end, as a resume from its whole length (a
    -- CSV's rows under its header, whose columns must be this crawl's).
    if o.format == "json" then
      error(("output %q: a JSON array cannot be appended to; use .jsonl or .csv"):format(target), 2)
    end
    local f = io.open(target, "rb")
    local size = f and f:seek("end") or 0
    if f then f:close() end
    o.appending = true
    return M.resume(o, target, size)
  end
  local f, err, created = M.open_file(target)
  if not f then error(("output %q: %s"):format(target, err), 2) end
  o.file, o.created = f, created
  o.cut_at = 0
  return o
end

-- A file opened to be written without cutting it yet (appending, so that a later
-- cut_file moves the writes with it), and whether this open created it.
function M.open_file(path)
  local before = io.open(path, "rb")
  if before then before:close() end
  local f, err = io.open(path, "ab")
  return f, err, f and not before
end

-- A file opened by open_file cut back to at bytes, when it holds more (a FIFO or a
-- device, which has no length, is left alone).
function M.cut_file(f, path, at)
  local size = f:seek("end")
  if not size or size <= at then return true end
  return core.truncate(path, at)
end

-- The file cut to where this crawl's writes start (nothing, or a resumed state's
-- committed length). Called once every output, archive and state of the crawl has
-- opened: a start that fails on any of them has cut no file.
function Output:start()
  local at = self.cut_at
  if not at or not self.file then return end
  self.cut_at = nil
  local ok, err = M.cut_file(self.file, self.path, at)
  if not ok then error(("output %q: %s"):format(self.path, err), 0) end
end

-- The start failed: the file is closed, and removed if its open created it.
function Output:discard()
  if not self.file or self.file == io.stdout then return end
  self.file:close()
  self.file = nil
  if self.created then os.remove(self.path) end
end

-- An output of a crawl resumed from its state (luacrawl.crawl_state): the file is cut
-- back (by Output:start) to the length the state committed (the records past it are
-- of pages done again now) and written on from there. A file shorter than that, or
-- missing, is refused: what was committed must be there.
function M.resume(o, target, at)
  local f = io.open(target, "rb")
  local size = f and f:seek("end")
  if f then f:close() end
  if at > 0 and not size then
    error(("output %q: missing, but its crawl's state says %d bytes of it were written: restore it, or start "
      .. "afresh with another state file"):format(target, at), 3)
  end
  if size and size < at then
    error(("output %q: %d bytes, shorter than the %d its crawl's state says were written: restore it, or start "
      .. "afresh with another state file"):format(target, size, at), 3)
  end
  if at > 0 and o.format == "csv" then o.fields = M.resumed_columns(o, target) end
  local err
  o.file, err, o.created = M.open_file(target)
  if not o.file then error(("output %q: %s"):format(target, err), 3) end
  o.cut_at = at
  if at > 0 and o.format == "json" then o.opened = true end
  return o
end

-- The columns of a CSV output resumed: those of the header the first run wrote. A
-- spec that names others is refused: its rows would go under the wrong header.
function M.resumed_columns(o, target)
  local hf = io.open(target, "rb")
  local head = hf and hf:read("*l") or ""
  if hf then hf:close() end
  local cols = {}
  for cell in (head:gsub("\r$", "") .. ","):gmatch('("?[^,]*"?),') do cols[#cols + 1] = (cell:gsub('^"(.*)"$', "%1")) end
  local want = o.spec_fields
  if want and table.concat(want, ",") ~= table.concat(cols, ",") then
    error(("output %q: its header has the columns %s, and this crawl's fields are %s: give the same fields "
      .. (o.appending and "to append to it, or write to another output"
        or "to go on with its state, or write to another output with another state file")):format(target,
      table.concat(cols, ","), table.concat(want, ",")), 4)
  end
  return cols
end

M.json_line = json_line

return M
