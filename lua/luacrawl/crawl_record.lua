-- luacrawl.crawl_record: the page record. A spec with no parse and no callbacks that
-- names `fields` ({"url", "status", "title", "links"}) has crawl.run write one record
-- a response (redirects and errors included) with those fields, in that order;
-- `luacrawl crawl` is that crawl (its --fields, default M.fields). docs/crawl.md,
-- "The page record".
local core = require "luacrawl.core"
local lc = require "luacrawl"
local spec_check = require "luacrawl.spec_check"
local extract = require "luacrawl.extract"
local Page = require "luacrawl.crawl_page"

local null, json_decode, json_array_mt = core.json_null, core.json_decode, core.json_array_mt
local unpack = unpack or table.unpack
local redact = lc.url.redact

local M = {}

-- The record's fields when none are chosen (luacrawl crawl without --fields).
M.fields = { "url", "status", "depth", "content_type", "length", "title", "referrer", "elapsed", "duplicate_of" }
-- Every field a record may have: the default ones, links (how many links an HTML page
-- has: doc:links(), absolute, normalized, each once), changed (a recrawl) and worker
-- (a fleet).
M.names = { "url", "status", "depth", "content_type", "length", "title", "links", "referrer", "elapsed",
  "duplicate_of", "changed", "worker" }

local known = {}
for _, f in ipairs(M.names) do known[f] = true end

-- fields checked: a list of record fields, each known or the name of an extract
-- entry (extra: a set of those names). where names the option in messages
-- ("crawl.run: fields", "--fields"), tail (optional) ends the message of an unknown
-- name. Raises with a one-line message.
function M.check(fields, where, tail, extra)
  if type(fields) ~= "table" or fields[1] == nil then
    error(("%s must be a list of record fields, as {\"url\", \"title\"} (got %s)"):format(where,
      type(fields) == "string" and ("%q"):format(fields) or type(fields)), 0)
  end
  for k, f in pairs(fields) do
    if type(k) ~= "number" or type(f) ~= "string" then
      error(("%s must be a list of record fields, as {\"url\", \"title\"}"):format(where), 0)
    end
    if not known[f] and not (extra and extra[f]) then
      error(("%s: no record field '%s'%s (the fields: %s)%s"):format(where, f, spec_check.hint(f, M.names),
        table.concat(M.names, ", "), tail or ""), 0)
    end
  end
  return fields
end

-- Whether spec (filled with its defaults) writes records: no parse, no callbacks, and
-- fields named.
function M.wanted(spec)
  return spec.parse == nil and spec.callbacks == nil and spec.fields ~= nil
end

-- A URL with its credentials hidden; one without '@' has none (and costs no copy).
local function hide(url)
  if url:find("@", 1, true) then return redact(url) end
  return url
end

-- The record of page in rec (want: the set of fields chosen; the others are never
-- computed; extracts: the spec's extract list, or false). Page's methods are called
-- by name: page:is_html() would find them through a function.
local function record(page, rec, want, extracts)
  -- page.referrer and page.elapsed, read where Page.__index would find them.
  local res, req = page.response, page.request
  if want.url then rec.url = hide(req.url) end
  if want.status then rec.status = page.status end
  if want.depth then rec.depth = page.depth end
  if want.content_type then rec.content_type = Page.header(page, "content-type") or null end
  if want.length then rec.length = res and res.size or #page.body end
  local html = (want.title or want.links or extracts) and page.status < 300 and Page.is_html(page)
  if want.title then rec.title = html and Page.html(page):title() or null end
  if want.links then rec.links = html and #Page.html(page):links() or 0 end
  if want.referrer then
    local referrer = req.referrer
    rec.referrer = referrer and hide(referrer) or null
  end
  if want.elapsed then
    local elapsed = res and lc._elapsed(res) or page.elapsed
    rec.elapsed = math.floor(elapsed * 1e6 + 0.5) / 1e6
  end
  if want.changed then
    local changed = rawget(page, "changed")
    if changed == nil then rec.changed = null else rec.changed = changed end
  end
  if want.worker then
    rec.worker = page.crawler.durable.worker or null
  end
  if want.duplicate_of then
    local first = rawget(page, "duplicate_of")
    rec.duplicate_of = first and hide(first) or null
  end
  if extracts then extract.fill(rec, extracts, html and Page.html(page) or nil) end
  return rec
end

-- The fields of a record that a recrawl's 304 keeps from the last fetch (its body is
-- not sent again): content_type, length, title, links and the extract fields, those
-- of spec.fields (after M.setup); nil for a spec that writes no record.
local KEPT = { content_type = true, length = true, title = true, links = true }

function M.kept_fields(spec)
  if not M.wanted(spec) then return nil end
  local extra = {}
  for _, e in ipairs(spec.extract or {}) do extra[e.name] = true end
  local list = {}
  for _, f in ipairs(spec.fields) do
    if KEPT[f] or extra[f] then list[#list + 1] = f end
  end
  return list
end

local function decode(text)
  if not text then return nil end
  local ok, t = pcall(json_decode, text)
  return ok and type(t) == "table" and t or nil
end

-- Whether a state's kept fields (JSON text, or nil) hold every field of kept (a
-- list from M.kept_fields; nil: the crawl writes no record, nothing is needed).
function M.keeps(text, kept)
  if not kept or not kept[1] then return true end
  local t = decode(text)
  if not t then return false end
  for _, f in ipairs(kept) do
    if t[f] == nil then return false end
  end
  return true
end

-- With a state: a recrawl's 304 gets the kept fields of the last fetch, and the
-- request carries the record's for the page's row (crawl_state.lua writes them).
-- lists: the extract fields that are lists (JSON gives [] back as an empty table).
local function keep_record(req, status, rec, keep, lists)
  local before = req.recrawl
  local old = status == 304 and before and decode(before.record)
  if old then
    for _, f in ipairs(keep) do
      local v = old[f]
      if v ~= nil then
        if lists[f] and type(v) == "table" then setmetatable(v, json_array_mt) end
        rec[f] = v
      end
    end
  end
  local kept = {}
  for _, f in ipairs(keep) do kept[f] = rec[f] end
  req.kept_record = kept
end

-- Whether a record may be written from one table for the whole crawl: every output
-- encodes it at once and keeps nothing of it (files; not a table, a function, on_item,
-- nor a state or fleet, which hold a page's items until its request is done).
local function reusable(spec)
  if spec.items or spec.on_item or spec.state or spec.redis then return false end
  local outputs = spec.output
  if outputs == nil then return false end
  if type(outputs) ~= "table" or outputs.path then outputs = { outputs } end
  for _, o in ipairs(outputs) do
    if not (type(o) == "string" or (type(o) == "table" and type(o.path) == "string")) then return false end
  end
  return true
end

-- Make spec (crawl.run's copy, filled with its defaults) write records when it asks
-- for them (M.wanted): fields checked, and an on_response that emits the page's record
-- after the spec's own on_response (a page it drops has none).
function M.setup(spec)
  if not M.wanted(spec) then
    if spec.extract ~= nil then
      error("crawl.run: extract: the page record's fields from selectors go with fields and no parse "
        .. "(a parse extracts with page:css)", 0)
    end
    return
  end
  -- The extract entries' names are record fields too, after those of fields (the
  -- CSV columns in the order given).
  local extracts = spec.extract ~= nil and extract.check(spec.extract, "crawl.run: extract") or false
  local names = {}
  for _, e in ipairs(extracts or {}) do names[e.name] = true end
  local fields = M.check(spec.fields, "crawl.run: fields",
    "; with no parse or callbacks, fields chooses the page record's; items' CSV columns go with a parse", names)
  if extracts then
    local listed = {}
    for _, f in ipairs(fields) do listed[f] = true end
    fields = { unpack(fields) }
    for _, e in ipairs(extracts) do
      if not listed[e.name] then fields[#fields + 1] = e.name end
    end
    spec.fields = fields
  end
  local want, template = {}, {}
  for _, f in ipairs(fields) do
    if not names[f] then want[f] = true end
    template[f] = false
  end
  local shared = reusable(spec) and {} or nil
  if shared then for f in pairs(template) do shared[f] = false end end
  local keep, lists = spec.state and M.kept_fields(spec), {}
  for _, e in ipairs(extracts or {}) do lists[e.name] = e.all end
  local hook = spec.on_response
  spec.on_response = function(page)
    local r, p = nil, page
    if hook then
      r = hook(page)
      if r == false then return false end
      if type(r) == "table" then p = r end
    end
    local rec = shared
    if not rec then
      rec = {}
      for f in pairs(template) do rec[f] = false end
    end
    record(p, rec, want, extracts)
    if keep then keep_record(page.request, page.status, rec, keep, lists) end
    page.crawler:emit(rec, p)
    return r
  end
end

return M
