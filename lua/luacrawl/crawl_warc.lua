-- luacrawl.crawl_warc: a crawl's WARC archive (spec.warc) and the crawl that runs a
-- spec's parse on archives instead of the network (spec.from_warc). crawl.lua calls
-- it at a few points: the options of every fetch (archive = true), each response
-- fetched (written), each request handled (its metadata record), the outputs' close,
-- and the run itself (from_warc). docs/crawl.md, "WARC archives", has the rules.
--
--   warc      = "PREFIX" or {prefix =, max_size =, cdx =, dedupe = (true), level = (1), info = {}}
--   from_warc = "FILE" or {"FILE", ...}
local lc = require "luacrawl"
local core = require "luacrawl.core"
local spec_check = require "luacrawl.spec_check"
local losses = require "luacrawl.crawl_losses"
local warc = require "luacrawl.warc"
local calls = require "luacrawl.crawl_calls"

local is_cancel, apply_hook = calls.is_cancel, calls.apply_hook

local type, pairs, ipairs, tostring, tonumber, pcall, error = type, pairs, ipairs, tostring, tonumber, pcall, error
local concat = table.concat

local M = {}

spec_check.nested.warc = { "prefix", "max_size", "cdx", "dedupe", "level", "info" }

-- Checks -----------------------------------------------------------------------------

-- Check and normalise s.warc and s.from_warc (raises level 0, for crawl_spec.check). A
-- from_warc crawl needs no start URLs: without them any host is in scope.
function M.check(s)
  local w = s.warc
  if w ~= nil then
    if type(w) == "string" then w = { prefix = w } end
    if type(w) ~= "table" or type(w.prefix) ~= "string" or w.prefix == "" then
      error("crawl.run: warc must be a prefix (a string) or {prefix = ..., max_size =, cdx =, dedupe =}", 0)
    end
    if w.max_size ~= nil then
      local ok, err = pcall(require("luacrawl.core").check_integer, w.max_size, "crawl.run: warc.max_size", 1)
      if not ok then error(tostring(err), 0) end
    end
    if w.level ~= nil then
      local ok, err = pcall(require("luacrawl.core").check_integer, w.level, "crawl.run: warc.level", 1, 9)
      if not ok then error(tostring(err), 0) end
    end
    if w.info ~= nil and type(w.info) ~= "table" then error("crawl.run: warc.info must be a table", 0) end
    s.warc = w
  end
  local f = s.from_warc
  if f ~= nil then
    if type(f) == "string" then f = { f } end
    if type(f) ~= "table" or type(f[1]) ~= "string" then
      error("crawl.run: from_warc must be a WARC file name or a list of them", 0)
    end
    for i, name in ipairs(f) do
      if type(name) ~= "string" then error(("crawl.run: from_warc[%d] must be a file name"):format(i), 0) end
    end
    if s.warc then error("crawl.run: from_warc and warc cannot go together (a crawl from archives fetches nothing)", 0) end
    s.from_warc = f
    if s.start == nil and s.span_hosts == nil then s.span_hosts = true end
  end
end

-- Writing ------------------------------------------------------------------------------

local Archive = {}
Archive.__index = Archive

-- The warcinfo fields of a crawl: who it is, what it was asked, how polite it is.
local function info_of(crawler)
  local spec = crawler.spec
  local start = spec.start
  if type(start) == "string" then start = { start } end
  local starts = {}
  if type(start) == "table" then
    for i, u in ipairs(start) do
      starts[i] = lc.url.redact(type(u) == "table" and tostring(u.url) or tostring(u))
    end
  end
  local scope = spec.span_hosts and "any host" or "the start URLs' hosts"
  if spec.allow then scope = type(spec.allow) == "function" and "a function (allow)" or "allow" end
  if spec.deny then scope = scope .. ", less deny" end
  local info = {
    ["http-header-user-agent"] = crawler.agent,
    robots = spec.robots == false and "ignore" or "obey",
    start = concat(starts, " "):gsub("[%c]", ""),
    scope = scope,
    ["max-depth"] = spec.max_depth and tostring(spec.max_depth) or "none",
    ["max-pages"] = spec.max_pages and tostring(spec.max_pages) or "none",
    politeness = ("concurrency %d, per_host %d, delay %g s"):format(spec.concurrency, spec.per_host, spec.delay),
  }
  if spec.contact then info.operator = spec.contact end
  for k, v in pairs(spec.warc.info or {}) do info[k] = v end
  return info
end

-- The archive of a crawl, opened now (a prefix that cannot be written fails the
-- spec, as an output that cannot be created does); nil without spec.warc.
local function open_archive(crawler)
  local w = crawler.spec.warc
  local dedupe = w.dedupe
  if dedupe == nil then dedupe = true end
  local writer, err = warc.open(w.prefix, { max_size = w.max_size, cdx = w.cdx, dedupe = dedupe,
    level = w.level, info = info_of(crawler) })
  if not writer then error(("warc: %s"):format(tostring(err)), 0) end
  local self = setmetatable({
    writer = writer, crawler = crawler, name = w.prefix, lost = 0, records = 0,
    handled = {}, links = {},
  }, Archive)
  -- The links each page queued: its metadata record's outlinks. Caught at the two
  -- doors every queued link goes through (page:follow and redirects), by referrer.
  local C = getmetatable(crawler).__index
  local links = self.links
  crawler.admit_link = function(c, url, depth, referrer)
    local l = referrer and links[referrer]
    if l then l[#l + 1] = url end
    return C.admit_link(c, url, depth, referrer)
  end
  crawler.admit = function(c, req)
    local l = req.referrer and links[req.referrer]
    if l then l[#l + 1] = req.url end
    return C.admit(c, req)
  end
  if crawler.durable.kind == "state" and dedupe then self:attach_state(crawler.durable) end
  return self
end

-- With a state, revisits reach back to the records of earlier runs: the state keeps
-- the payload digest, URI, date and ID of each original response archived (the first
-- of its payload), and a run remembers them all as it starts. A row is written with
-- the commit after its record's write (Archive:sync), so the state never names a
-- record that a kill kept out of the files.
local PAYLOADS_SQL = "CREATE TABLE IF NOT EXISTS crawl_warc_payloads(digest TEXT PRIMARY KEY,"
  .. " uri TEXT NOT NULL, date TEXT NOT NULL, id TEXT NOT NULL) WITHOUT ROWID"
local PAGE = 4096

function Archive:attach_state(state)
  local db = state.db
  db:sql(PAYLOADS_SQL):exec()
  local next_page = db:sql("SELECT digest, uri, date, id FROM crawl_warc_payloads WHERE digest > ?1"
    .. " ORDER BY digest LIMIT " .. PAGE)
  local writer, after = self.writer, ""
  repeat
    local rows = next_page:rows(after)
    for _, r in ipairs(rows) do
      writer:remember(r[1], r[2], r[3], r[4]) -- a row of another form is passed over
      after = r[1]
    end
  until #rows < PAGE
  self.state = state
  self.save_original = db:sql("INSERT OR IGNORE INTO crawl_warc_payloads(digest, uri, date, id)"
    .. " VALUES (?1, ?2, ?3, ?4)")
  writer:track()
end

-- The originals written since the last commit, in the state (its transaction).
function Archive:save_originals()
  local list, stmt = self.writer:originals(), self.save_original
  for i = 1, #list, 4 do
    local ok, err = pcall(stmt.exec, stmt, list[i], list[i + 1], list[i + 2], list[i + 3])
    if not ok then
      self.state:failed_write(err)
      return false
    end
  end
  return true
end

-- A failed write: the archive is output, so the crawl stops as for a broken output
-- file (crawler:output_failed: logged once, luacrawl crawl exits 4).
function Archive:fail(err)
  if self.failed then return end
  self.failed = ("%s: %s"):format(self.name, tostring(err and err.message or err))
  self.crawler:output_failed(self)
end

-- Write res (fetched with archive = true): its request and response (or revisit)
-- records, one pair for each hop. The response record's ID, or nil.
function Archive:write(res)
  if self.failed or self.closed then return nil end
  local id, err = self.writer:write(res)
  if not id then return self:fail(err) end
  self.records = self.records + 1
  return id
end

-- A crawl request's response, written; remembered for its metadata record when the
-- crawl handles it (Archive:handle), not when it is retried.
function Archive:response(req, res)
  local id = self:write(res)
  if id then req._warc = id end
end

-- The crawl keeps res for req (no retry): its metadata record is written once its
-- parse has run (Archive:finish), with the links it queued.
function Archive:handle(req, res)
  local id = req._warc
  if not id then return end
  req._warc = nil
  local t = res.time
  self.handled[req] = { id = id, url = res.url, ms = t and t.total and t.total * 1000 }
  self.links[res.url] = {}
end

-- The metadata record of a request handled (after its parse, whether or not that
-- raised): via (the referrer), depth, fetchTimeMs, an outlink line per link queued.
function Archive:finish(req)
  local h = self.handled[req]
  if not h then return end
  self.handled[req] = nil
  local outlinks = self.links[h.url]
  self.links[h.url] = nil
  if self.failed or self.closed then return end
  -- The warc-fields text made here, in name order as writer:metadata would make it
  -- of a table, without sorting the names for every page; the outlinks in one concat
  -- (not a string each).
  local ms = h.ms and ("fetchTimeMs: %.3f\r\n"):format(h.ms) or ""
  local links = outlinks and outlinks[1] and "outlink: " .. concat(outlinks, "\r\noutlink: ") .. "\r\n" or ""
  local via = req.referrer and "via: " .. req.referrer .. "\r\n" or ""
  local id, err = self.writer:metadata(h.url, "depth: " .. (req.depth or 0) .. "\r\n" .. ms .. links .. via, h.id)
  if not id then self:fail(err) end
end

-- The records written so far are in the file (a crawl's state commits after this),
-- and with a state, the originals among them in its transaction: true, or false
-- when the archive or the state failed.
function Archive:sync()
  if self.failed or self.closed then return not self.failed end
  local ok, err = self.writer:sync()
  if not ok then
    self:fail(err)
    return false
  end
  if self.save_original then return self:save_originals() end
  return true
end

-- Closed with the outputs (every way a crawl ends); a second close does nothing.
function Archive:close()
  if self.closed then return true end
  self.closed = true
  local ok, err = self.writer:close()
  if not ok then self:fail(err) end
  return ok
end

-- Reading: the crawl from archives -------------------------------------------------------

local Replay = {}
Replay.__index = Replay

-- The response records' metadata (our metadata records, by the response they are
-- concurrent to), the originals that revisits refer to, and the responses a rendered
-- DOM (a text/html conversion record) refers to: a first pass over the files.
local function is_dom(rec)
  return rec.type == "conversion" and (rec.content_type or ""):lower():match("^text/html") ~= nil
end

function Replay:scan()
  local meta, wanted, doms, any = {}, {}, {}, false
  for _, path in ipairs(self.files) do
    self:each(path, function(rec)
      local t = rec.type
      if t == "metadata" then
        local to = rec.headers["WARC-Concurrent-To"]
        local depth = rec.block:match("^depth: (%d+)\r\n") or rec.block:match("\ndepth: (%d+)\r\n")
        if to and depth then
          any = true
          meta[to] = {
            depth = tonumber(depth), via = rec.block:match("\nvia: ([^\r\n]+)") or rec.block:match("^via: ([^\r\n]+)"),
            ms = tonumber(rec.block:match("fetchTimeMs: ([%d.]+)")),
          }
        end
      elseif t == "revisit" then
        local to = rec.headers["WARC-Refers-To"]
        if to then wanted[to] = (wanted[to] or 0) + 1 end
      elseif is_dom(rec) then
        local to = rec.headers["WARC-Refers-To"]
        if to then doms[to] = true end
      end
    end)
  end
  self.meta, self.wanted, self.doms, self.ours, self.scanned = meta, wanted, doms, any, true
end

-- A record replay does not read: counted in stats[kind], logged once a file and kind.
function Replay:lose(path, kind, what)
  local st = self.crawler.stats
  st[kind] = (st[kind] or 0) + 1
  local key = path .. "\0" .. kind
  if self.said[key] then return end
  self.said[key] = true
  self.crawler:log(("%s: %s (skipped; stats.%s counts them)"):format(path, what, kind))
end

function Replay:too_large(path, rec)
  self:lose(path, "warc_too_large", ("a %s record of %d bytes at offset %d, over the %d bytes of max_size and "
    .. "max_header_size"):format(tostring(rec.type), rec.block_length, rec.offset, self.max_block))
end

-- Call fn(rec) for each record of path; a file that ends inside a record (a writer
-- killed mid-write: an .open file) gives its whole records and a log line. A block
-- over the limit (the crawl's max_size and max_header_size) is not read: replay holds
-- no more of a record than the crawl would have fetched.
function Replay:each(path, fn)
  local ok, err = pcall(function()
    for rec in warc.records(path, { max_block = self.max_block }) do
      if rec.damaged then
        if self.scanned then
          self:lose(path, "warc_damaged", ("a damaged gzip member at offset %d (its record lost)"):format(rec.offset))
        end
      elseif rec.skipped then
        -- told by the second pass (the first reads the same records)
        if self.scanned then self:too_large(path, rec) end
      elseif fn(rec) == false then
        return
      end
    end
  end)
  if ok then return end
  if is_cancel(err) then error(err, 0) end
  if type(err) == "table" and err.kind == "truncated" then
    self.crawler:log(("%s: %s (the records before it were read)"):format(path, tostring(err)))
    return
  end
  error(("from_warc: %s"):format(tostring(err)), 0)
end

-- The payload of a response record's block (what follows the HTTP head).
local function payload_of(block)
  local at = block:find("\r\n\r\n", 1, true)
  return at and block:sub(at + 4) or ""
end

-- The response of rec as a crawl would have fetched it: a revisit gets its
-- original's payload. nil when it cannot be had.
function Replay:response_of(rec)
  if rec.type == "revisit" then
    local original = self.originals[rec.headers["WARC-Refers-To"] or ""]
    if not original then
      self.crawler.stats.warc_missing = (self.crawler.stats.warc_missing or 0) + 1
      return nil
    end
    local joined = setmetatable({
      type = "response", uri = rec.uri, ip = rec.ip, truncated = original.truncated,
      block = rec.block .. original.payload,
    }, warc.Record)
    return joined:response({ max_size = self.max_size })
  end
  return rec:response({ max_size = self.max_size })
end

-- A record the crawl's rules refused (why: the stats counter the filter named), counted
-- by why; those out of scope by host too, for the first few hosts: the report says
-- which hosts the archive holds when the start URLs are elsewhere.
local SKIPPED_HOSTS = 3

function Replay:skip(uri, why)
  local st = self.crawler.stats
  why = why or "invalid_urls"
  st.warc_skipped = (st.warc_skipped or 0) + 1
  local count = st.warc_skipped_why or {}
  st.warc_skipped_why = count
  count[why] = (count[why] or 0) + 1
  local host = why == "out_of_scope" and lc.url.host(uri)
  if not host then return end
  local hosts = st.warc_skipped_hosts or {}
  st.warc_skipped_hosts = hosts
  if hosts[host] then
    hosts[host] = hosts[host] + 1
  elseif self.nskipped_hosts < SKIPPED_HOSTS then
    self.nskipped_hosts = self.nskipped_hosts + 1
    hosts[host] = 1
  end
end

-- A rendered page as lc.render returned it: the DOM of a conversion record, with the
-- status and headers of the response it refers to (base: that response, when read).
local function rendered_of(rec, base)
  return setmetatable({
    status = base and base.status or 200, url = rec.uri, body = rec.block, size = #rec.block,
    headers = base and base.headers or setmetatable({ ["content-type"] = "text/html" }, core.Headers),
    ip = base and base.ip, rendered = true, _charset = "utf-8",
  }, core.Response)
end

-- One archived response through the crawl's rules and parse, as Crawler:process
-- and the worker around it do for a fetched one (res: the response, when made already).
function Replay:page(rec, m, res)
  local c, st = self.crawler, self.crawler.stats
  local depth = m and m.depth or 0
  local req = { url = rec.uri, depth = depth, referrer = m and m.via or nil, dont_filter = true }
  local url, why = c.filter:check(rec.uri, depth, true)
  if why == "scope" then
    url = c:in_scope(url, req) and url or nil
    why = "out_of_scope"
  end
  if not url then return self:skip(rec.uri, why) end
  res = res or self:response_of(rec)
  if not res then return end
  res.time = { total = (m and m.ms or 0) / 1000 }
  st.bytes = st.bytes + #res.body
  st.statuses[res.status] = (st.statuses[res.status] or 0) + 1
  st.pages = st.pages + 1
  if c.sample_idle then require("luacrawl.crawl_report").wake(c) end
  local crawl = require "luacrawl.crawl"
  local ok, err = pcall(function()
    local page = apply_hook(c.spec.on_response, c:make_page(req, res))
    if not page then return end
    if res.status >= 300 and res.status < 400 and res.headers.location then
      st.redirects = st.redirects + 1
    elseif not (page.duplicate_of and c.spec.dedupe_content) then
      local r = (c.spec.parse or crawl.follow_links)(page)
      if r ~= nil then losses.parse_returned(c, r) end
    end
  end)
  if not ok then
    if is_cancel(err) then error(err, 0) end
    local msg = calls.error_message(err)
    local first = losses.parse_failed(c, req, err, msg)
    c:report(req, err, first and "error in parse for %s: %s" or nil)
  end
end

-- The crawl from archives: each response record (in file order, the files in the
-- order given) that the crawl handled, through scope, depth and parse; no fetch.
function Replay:run()
  local c = self.crawler
  -- A replay's stats: its pages are records replayed (the report says so), and
  -- no request is made.
  c.stats.replay = true
  local start = c.spec.start
  if type(start) == "string" then start = { start } end
  for _, item in ipairs(type(start) == "table" and start or {}) do
    local host = lc.url.host(type(item) == "table" and item.url or item)
    if host then c.start_hosts:add(host) end
  end
  self:scan()
  local meta, wanted, originals, doms = self.meta, self.wanted, self.originals, self.doms
  local held = {} -- the responses of rendered pages, until their DOM's record
  local n, max = 0, c.spec.max_pages
  for _, path in ipairs(self.files) do
    self:each(path, function(rec)
      if c.stopping then return false end
      local t = rec.type
      local dom = is_dom(rec)
      if t ~= "response" and t ~= "revisit" and not dom then return end
      if not rec.uri then
        return self:lose(path, "warc_no_uri", ("a %s record without WARC-Target-URI at offset %d"):format(t, rec.offset))
      end
      -- A record run already (the same file given twice, or a copy of it): once.
      local id = rec.id
      if id then
        if self.done_ids[id] then
          return self:lose(path, "warc_repeated", ("record %s, read already"):format(id))
        end
        self.done_ids[id] = true
      end
      local left = wanted[rec.id]
      if left and t == "response" then
        originals[rec.id] = { payload = payload_of(rec.block), truncated = rec.truncated }
      end
      -- Our archives say which responses the crawl kept (a metadata record):
      -- retried responses and robots.txt have none. Others: every response. A
      -- rendered page is its DOM (the conversion record after its response).
      local m, res, waits = meta[rec.id], nil, not dom and doms[rec.id]
      if dom then
        local to = rec.headers["WARC-Refers-To"]
        if to then m = meta[to] end
        res = rendered_of(rec, to and held[to] or nil)
        if to then held[to] = nil end
      elseif waits then
        held[rec.id] = rec:response({ max_size = self.max_size }) or false
      end
      if (m or not self.ours) and not waits then
        if max and n >= max then
          c.stop_reason = "max_pages"
          return false
        end
        n = n + 1
        self:page(rec, m, res)
        if n % 64 == 0 then lc.sleep(0) end -- signals, progress, flushes
      end
      if t == "revisit" then
        local to = rec.headers["WARC-Refers-To"]
        local k = to and wanted[to]
        if k then
          wanted[to] = k > 1 and k - 1 or nil
          if k == 1 then originals[to] = nil end
        end
      end
    end)
    if c.stopping or c.stop_reason then break end
  end
end

-- What a fetch of the crawl would hold at most (lc.fetch's defaults: 10 MiB of body,
-- 256 KiB of head), and so the most of a record replay reads.
local DEFAULT_MAX_SIZE, DEFAULT_MAX_HEADER_SIZE, MAX_BLOCK = 10 * 1024 * 1024, 256 * 1024, 512 * 1024 * 1024

local function open_replay(crawler)
  local self = setmetatable({
    crawler = crawler, files = crawler.spec.from_warc, originals = {}, said = {}, done_ids = {}, nskipped_hosts = 0,
  }, Replay)
  local fetch = crawler.spec.fetch or {}
  self.max_size = fetch.max_size or DEFAULT_MAX_SIZE
  self.max_block = math.min(self.max_size + (fetch.max_header_size or DEFAULT_MAX_HEADER_SIZE), MAX_BLOCK)
  for _, path in ipairs(self.files) do
    local f, err = io.open(path, "rb")
    if not f then error(("from_warc: %s"):format(err), 0) end
    f:close()
  end
  -- Links a parse follows are counted (page:follow's answer) but never queued.
  crawler.admit_link = function() return true end
  crawler.admit = function() return true end
  return self
end

-- The crawl's archive (spec.warc) or its reading of archives (spec.from_warc), as
-- crawler.warc / crawler.replay; nothing for a spec with neither.
function M.attach(crawler)
  local spec = crawler.spec
  if spec.warc then crawler.warc = open_archive(crawler) end
  if spec.from_warc then crawler.replay = open_replay(crawler) end
end

return M
