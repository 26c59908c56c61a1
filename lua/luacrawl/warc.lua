-- luacrawl.warc (lc.warc): WARC archives, written from fetches and read back as
-- responses (engine/warc.c, warc_read.c; the binding is bindings/lua_warc.c).
--
--   local w = lc.warc.open(prefix_or_file [, {max_size =, cdx =, dedupe =, level =, info = {}}])
--       -> writer | nil, err
--   w:write(res)        -- res from lc.fetch(url, {archive = true}): request and response
--                          records (a revisit with dedupe) for each hop -> record ID | nil, err;
--                          from lc.render(url, {archive = true}): the main document's, and
--                          conversion records of the DOM (and screenshot) referring to it
--                          (queued for the writer's thread: a write that failed there is
--                          the next call's err, docs/toolkit.md)
--   w:metadata(url, fields [, concurrent_to]) -> record ID | nil, err
--   w:filename()        -- the file being written, as it will be named once closed
--   w:close()           -> true | nil, err
--   for rec in lc.warc.records(path) do ... end   -- rec.type, rec.uri, rec.date, rec.id,
--       rec.headers, rec.block, rec:response() -> a response like lc.fetch's
local core = require "luacrawl.core"

local setmetatable, type, error, pairs, ipairs, tostring, rawget =
  setmetatable, type, error, pairs, ipairs, tostring, rawget
local sort, concat = table.sort, table.concat

local M = {}

local Writer = {}
Writer.__index = Writer

-- info = {name = value}: warcinfo fields, one line each, in name order.
local function info_text(info)
  if info == nil then return nil end
  if type(info) ~= "table" then error("warc.open: info must be a table of strings", 3) end
  local names = {}
  for k, v in pairs(info) do
    if type(k) ~= "string" or (type(v) ~= "string" and type(v) ~= "number") then
      error("warc.open: info must map names to strings", 3)
    end
    v = tostring(v)
    if k == "" or k:find("[:%c]") or v:find("[\r\n%z]") then
      error(("warc.open: info field %q refused: no colon or control characters in names, no CR, LF or NUL in values"):format(k), 3)
    end
    names[#names + 1] = k
  end
  sort(names)
  local lines = {}
  for i, k in ipairs(names) do lines[i] = k .. ": " .. tostring(info[k]) .. "\r\n" end
  return concat(lines)
end

function M.open(target, opts)
  if type(target) ~= "string" then error("warc.open: expected a file name or prefix", 2) end
  opts = opts or {}
  if type(opts) ~= "table" then error("warc.open: options must be a table", 2) end
  local handle, err = core.warc_open(target, opts.max_size, opts.cdx, opts.dedupe,
    info_text(opts.info), opts.level)
  if not handle then return nil, err end
  return setmetatable({ _w = handle }, Writer)
end

-- A rendered page (lc.render with archive = true): the main document's exchange as
-- the browser reported it, after those of its HTTP redirects' hops (request and
-- response records; render_archive.lua says what they hold), then the DOM as a conversion record that refers to the response,
-- and the screenshot, when taken, as another. The response's ID (the DOM's when the
-- browser gave no exchange).
local function write_rendered(w, res)
  local id, err
  for _, ex in ipairs(rawget(res, "_exchange") or {}) do -- each hop of its redirects, then the document
    id, err = core.warc_exchange(w, ex.url, ex.ip, ex.date, ex.request, ex.head, ex.payload, ex.truncated)
    if not id then return nil, err end
  end
  local dom, derr = core.warc_conversion(w, res.url, id, "text/html; charset=utf-8", res.body)
  if not dom then return nil, derr end
  local shot = rawget(res, "screenshot")
  if shot then
    local sid, serr = core.warc_conversion(w, res.url, id, "image/png", shot)
    if not sid then return nil, serr end
  end
  return id or dom
end

function Writer:write(res)
  if type(res) ~= "table" then error("writer:write: expected a response", 2) end
  if rawget(res, "rendered") then return write_rendered(self._w, res) end
  return core.warc_write(self._w, rawget(res, "_body"))
end

-- fields: a table {name = value} (written in name order) or warc-fields text.
function Writer:metadata(url, fields, concurrent_to)
  if type(fields) == "table" then
    local names = {}
    for k in pairs(fields) do names[#names + 1] = k end
    sort(names)
    local lines = {}
    for _, k in ipairs(names) do
      local v = fields[k]
      if type(v) == "table" then -- a list: one line each (outlink: ...)
        for _, item in ipairs(v) do lines[#lines + 1] = k .. ": " .. tostring(item) .. "\r\n" end
      else
        lines[#lines + 1] = k .. ": " .. tostring(v) .. "\r\n"
      end
    end
    fields = concat(lines)
  end
  if type(fields) ~= "string" then
    error("writer:metadata: fields must be a table or warc-fields text", 2)
  end
  return core.warc_metadata(self._w, url, fields, concurrent_to)
end

function Writer:filename()
  return core.warc_filename(self._w)
end

-- Wait until the records queued are written: true, or nil and the error of one that
-- could not be.
function Writer:sync()
  return core.warc_sync(self._w)
end

-- Revisits against an earlier writer's records (a crawl's state keeps them):
-- remember(digest, uri, date, id) makes later exchanges with that payload digest
-- revisits of that record; track() lists each original this writer writes from then
-- on, and originals() takes the list ({digest, uri, date, id, digest, ...}: call it
-- after sync(), which writes every record queued).
function Writer:remember(digest, uri, date, id)
  return core.warc_remember(self._w, digest, uri, date, id)
end

function Writer:track()
  core.warc_track(self._w)
end

function Writer:originals()
  return core.warc_originals(self._w)
end

function Writer:close()
  return core.warc_close(self._w)
end

-- Records -------------------------------------------------------------------

local Record = {}
Record.__index = Record
M.Record = Record

local Response = core.Response

-- The HTTP response of a response or revisit record, as a response object: status,
-- url, headers, body (chunked framing and Content-Encoding undone; a revisit's is
-- "", its payload is in the record it refers to), ip, http_version, truncated, and
-- res:html(). nil, err for other records.
function Record:response(opts)
  local t = self.type
  if t ~= "response" and t ~= "revisit" then
    return nil, core.make_error("format", "a " .. tostring(t) .. " record holds no response")
  end
  local max_size = opts and opts.max_size
  local status, headers, body, first, cut, problem = core.warc_http(self.block, max_size)
  if not status then
    return nil, core.make_error("format", "the record's block is not an HTTP response")
  end
  local version = first:match("^HTTP/(%S+)")
  local res = setmetatable({
    status = status, url = self.uri, headers = headers, body = body, ip = self.ip,
    http_version = version, size = #body,
    truncated = (self.truncated or cut or problem ~= nil) or nil,
    revisit = t == "revisit" or nil, decode_error = problem,
  }, Response)
  return res
end

-- for rec in lc.warc.records(path) do ... end. Bad data raises an error object
-- (kind "truncated" where the file ends inside a record, as one being written when
-- its writer was killed: the records before it were whole; "format", "io").
-- opts.max_block: a record whose block is longer comes with rec.skipped = true,
-- rec.block_length and no block, its bytes read past rather than held.
function M.records(path, opts)
  if type(path) ~= "string" then error("warc.records: expected a file name", 2) end
  if opts ~= nil and type(opts) ~= "table" then error("warc.records: opts must be a table", 2) end
  local reader, err = core.warc_reader(path, opts and opts.max_block)
  if not reader then error(err, 2) end
  local next_record = core.warc_next
  return function()
    local rec = next_record(reader)
    if rec then return setmetatable(rec, Record) end
  end
end

return M
