-- luacrawl: the public module. The C core (engine/lua_*.c) passes its functions
-- in `core`; this file wraps the waiting ones, and adds what is simpler in Lua:
-- errors, queues, semaphores, gather and timeout.
local core = ...

local select, setmetatable, error, type, tostring = select, setmetatable, error, type, tostring
local unpack = unpack or table.unpack
local CANCELLED = core.CANCELLED

local function pack(...)
  return { n = select("#", ...), ... }
end

local M = {}

-- Errors that are part of crawling come back as `nil, err`: err.kind names what
-- went wrong (invalid_url, dns, connect, tls, timeout, too_large, protocol,
-- cancelled), err.message says it for people.
local Error = {}
Error.__index = Error
-- A URL fit for logs and outputs: user name and password replaced by "***".
local function redact(url)
  if type(url) ~= "string" or not url:find("@", 1, true) then return url end -- most: as is
  return (url:gsub("^(%a[%w+.-]*://)[^/?#@]*@", "%1***@", 1))
end

Error.__tostring = function(e)
  if e.url then return e.kind .. ": " .. e.message .. " (" .. redact(e.url) .. ")" end
  return e.kind .. ": " .. e.message
end

function M.error(kind, message, fields)
  local e = fields or {}
  e.kind, e.message = kind, message or kind
  return setmetatable(e, Error)
end

function M.is_error(v)
  return getmetatable(v) == Error
end

-- Raised inside a task at the call that was waiting when the task is cancelled.
local cancel_error = M.error("cancelled", "task cancelled")
M.cancelled = cancel_error

-- Response headers: stored under lower-case names, looked up in any case.
local Headers = {
  __index = function(t, k)
    if type(k) == "string" then return rawget(t, k:lower()) end
  end,
}

-- Responses: more methods (html, ...) are added by the toolkit modules. The body
-- arrives as a userdata outside the Lua heap (res._body, bindings/lua_body.c);
-- res.body makes it a string on first use. The userdata also keeps the facts most
-- scripts never read (ip, http_version, redirects, time) and the headers, which come
-- from it on first use: a response is a table of four fields, less garbage a page.
local Response = {}
local body_string, body_fact = core.body_string, core.body_fact
local response_headers, response_header, body_elapsed = core.response_headers, core.response_header, core.body_elapsed
Response.__index = function(res, k)
  local m = Response[k]
  if m ~= nil then return m end
  if k == "body" then
    if rawget(res, "_released") then error("res.body read after res:release()", 2) end
    local b = rawget(res, "_body")
    if b == nil then return nil end
    local s = body_string(b)
    rawset(res, "body", s)
    return s
  end
  if k == "headers" then
    local h = response_headers(rawget(res, "_body"))
    if h ~= nil then rawset(res, "headers", h) end
    return h
  end
  local v = body_fact(rawget(res, "_body"), k)
  if k == "time" and v ~= nil then rawset(res, "time", v) end -- one table per response
  return v
end
local body_free = core.body_free
-- Free the body (and its document, html.lua) now rather than at the next
-- collection, for a script done with the response: res.body is nil after, unless
-- it was read before, and res:html() an empty document. The other fields stay.
function Response:release()
  local b = rawget(self, "_body")
  if b ~= nil and not rawget(self, "_released") then
    body_free(b)
    rawset(self, "_released", true)
  end
end
M.Response = Response

-- res.headers[name] (name in lower case) of any response, without making the headers
-- table of a fetch's response that has not made it yet: the crawl reads a page's
-- Content-Type, and only that, three or four times a page (kept in res._content_type,
-- false when there is none).
function M._header(res, name)
  local h = rawget(res, "headers")
  if h == nil then
    if getmetatable(res) ~= Response then
      h = res.headers
      return h and h[name]
    end
    if name ~= "content-type" then return response_header(rawget(res, "_body"), name) end
    local ct = rawget(res, "_content_type")
    if ct == nil then
      ct = response_header(rawget(res, "_body"), name) or false
      rawset(res, "_content_type", ct)
    end
    return ct or nil
  end
  return h[name]
end

-- res.time.total of any response, without making res.time for a fetch's response
-- (the crawl's report and record read it for every page).
function M._elapsed(res)
  local t = rawget(res, "time")
  if t == nil then
    if getmetatable(res) == Response then return body_elapsed(rawget(res, "_body")) end
    t = res.time
  end
  return type(t) == "table" and t.total or nil
end

-- A fetch's response, from the fields lua_http.c pushes (the body as a userdata,
-- with the facts and headers read on first use, but its size: the crawl reads it for
-- every page). Made with sixteen slots: its four fields and those scripts and the
-- crawl add (res.body, res.headers, res.time, res:html()'s document, _released, the
-- content digest) would overflow eight, and the table would be rehashed, for every
-- page of a crawl. A constructor would give it eight, and its truncated key a slot
-- even when nil.
local new_table = require "table.new"
local function new_response(status, url, body, truncated, size)
  local res = new_table(0, 16)
  res.status, res.url, res._body, res.size = status, url, body, size
  if truncated then res.truncated = true end
  return setmetatable(res, Response)
end

core.init(Error, cancel_error, new_response, Headers)

local function check(first, ...)
  if first == CANCELLED then error(cancel_error, 0) end
  return first, ...
end

-- Tasks ---------------------------------------------------------------------

local Task = core.Task

local function join_result(ok, ...)
  if ok == CANCELLED then error(cancel_error, 0) end
  if ok then return ... end
  error((...), 0)
end

function Task:join()
  return join_result(self:_join())
end

M.spawn = core.spawn
M.current = core.current
M.now = core.now

function M.sleep(seconds)
  check(core.sleep(seconds))
end

function M.fetch(url, opts)
  return check(core.fetch(url, opts))
end

-- lc.fetch_options(opts) -> opts read and checked once: lc.fetch(url, it) fetches as
-- with opts, without reading the table again (bindings/lua_http.c).
M.fetch_options = core.fetch_options

-- lc.cookies() -> a cookie jar (engine/http_cookies.h): lc.fetch(url, {cookies = jar})
-- stores what the server sets in it and sends back what RFC 6265 allows;
-- jar:get(url), jar:set(url, "name=value; ..."), jar:list([url]), jar:clear().
M.cookies = core.cookies_new
M.is_cookies = core.is_cookies

function M.resolve(host)
  return check(core.resolve(host))
end

-- Suspend the running task until core.wake (its values are returned) or, with a
-- timeout, until it passes (nothing returned); raise if cancelled meanwhile.
local function suspend(timeout)
  return check(core.suspend(timeout))
end

function M.run(fn, ...)
  local r = pack(core.run(fn, ...))
  if r[1] then return unpack(r, 2, r.n) end
  error(r[2], 0)
end

-- core.run for callers that want the traceback: true, ... | false, err, traceback
M._run = core.run

-- lc.configure{dns_servers=, dns_timeout=, dns_tries=, dns_retries=, dns_concurrency=,
-- dns_ttl_min=, dns_ttl_max=, dns_negative_ttl=, max_memory=, max_task_cpu=,
-- public_only=, deny_networks=}. public_only and deny_networks make the engine's
-- address policy, for every fetch, together: a call that gives either replaces both.
function M.configure(opts)
  -- An error names the caller's line, not this file's (a C function's error names
  -- the Lua line that called it).
  local ok, err = pcall(core.configure, opts)
  if not ok then error((tostring(err):gsub("^[^\n]-:%d+: ", "")), 2) end
  if opts.public_only ~= nil or opts.deny_networks ~= nil then
    core.address_policy(opts.public_only, opts.deny_networks)
    -- Kept for lc.render, whose page's requests are checked in Lua (render.lua).
    M._address_policy = { public_only = opts.public_only, deny_networks = opts.deny_networks }
  end
  if opts.max_memory ~= nil or opts.max_task_cpu ~= nil then
    core.set_limits({ max_memory = opts.max_memory, max_task_cpu = opts.max_task_cpu })
  end
end

-- Bytes of Lua heap in use, and the max_memory limit (nil when none).
M.memory = core.memory

-- The default heap limit: 2 GB.
core.set_limits({ max_memory = 2 * 1024 * 1024 * 1024 })

M.stats = core.stats
M.versions = core.versions
M.version = core.versions().luacrawl

-- Waiter lists shared by queues and semaphores ------------------------------

-- A FIFO of waiting tasks. wake_one wakes the first still waiting; a task that
-- was cancelled while waiting is skipped.
local function waiters()
  return { first = 1, last = 0 }
end

local function wait_in(list)
  local me = core.current()
  if not me then error("must be called from a luacrawl task", 3) end
  list.last = list.last + 1
  list[list.last] = me
  local first = core.suspend()
  if first == CANCELLED then
    for i = list.first, list.last do
      if list[i] == me then list[i] = false end
    end
    return false
  end
  return true
end

local function wake_one(list)
  while list.first <= list.last do
    local t = list[list.first]
    list[list.first] = nil
    list.first = list.first + 1
    if t and core.wake(t) then return true end
  end
  return false
end

local function wake_all(list)
  while wake_one(list) do end
end

-- Queue -----------------------------------------------------------------------

local Queue = {}
Queue.__index = Queue

-- A string put in a queue waits in a FIFO of strings held outside the Lua heap
-- (core.strq), its slot holding STRING: a crawler's queue of thousands of URLs would
-- otherwise be as many strings for the collector to sweep each cycle, and for every
-- new string to be looked up among (a noticeable share of the example crawler's time).
local STRING = {}

-- core.check_number/check_integer(v, what, min, max), raising at the caller of
-- the function that calls this one (not inside this file).
local function arg_check(check, v, what, min, max)
  local ok, r = pcall(check, v, what, min, max)
  if ok then return r end
  error((tostring(r):gsub("^[^\n]-:%d+: ", "")), 3)
end

local durable_queue -- below

-- A FIFO queue for tasks: get waits while empty, put waits while full (maxsize
-- > 0), join waits until every item put has been marked task_done.
-- lc.queue{ store = db, name = NAME[, maxsize = N] } is the same queue kept in a
-- store (lc.store.open); lc.queue{ maxsize = N } is lc.queue(N).
function M.queue(maxsize)
  if type(maxsize) == "table" then
    if maxsize.store ~= nil then return durable_queue(maxsize) end
    maxsize = maxsize.maxsize
  end
  if maxsize ~= nil then maxsize = arg_check(core.check_integer, maxsize, "lc.queue: maxsize", 0) end
  return setmetatable({
    maxsize = maxsize or 0, head = 1, tail = 0, unfinished = 0,
    getters = waiters(), putters = waiters(), joiners = waiters(),
  }, Queue)
end

function Queue:size()
  return self.tail - self.head + 1
end

function Queue:empty()
  return self.tail < self.head
end

function Queue:full()
  return self.maxsize > 0 and self:size() >= self.maxsize
end

function Queue:put_nowait(item)
  if item == nil then error("queue: cannot put nil", 2) end
  if self:full() then return false end
  if type(item) == "string" then
    local strings = self.strings
    if not strings then
      strings = core.strq()
      self.strings = strings
    end
    strings:push(item)
    item = STRING
  end
  self.tail = self.tail + 1
  self[self.tail] = item
  self.unfinished = self.unfinished + 1
  wake_one(self.getters)
  return true
end

function Queue:get_nowait()
  if self.tail < self.head then return nil end
  local item = self[self.head]
  self[self.head] = nil
  self.head = self.head + 1
  if self.head > self.tail then self.head, self.tail = 1, 0 end
  if item == STRING then item = self.strings:pop() end
  wake_one(self.putters)
  return item
end

function Queue:put(item)
  while self:full() do
    if not wait_in(self.putters) then
      -- Cancelled: pass on a wake-up this task may have taken.
      if not self:full() then wake_one(self.putters) end
      error(cancel_error, 0)
    end
  end
  return self:put_nowait(item)
end

function Queue:get()
  while self:empty() do
    if not wait_in(self.getters) then
      if not self:empty() then wake_one(self.getters) end
      error(cancel_error, 0)
    end
  end
  return self:get_nowait()
end

function Queue:task_done()
  if self.unfinished <= 0 then error("queue: task_done called more times than put", 2) end
  self.unfinished = self.unfinished - 1
  if self.unfinished == 0 then wake_all(self.joiners) end
end

function Queue:join()
  while self.unfinished > 0 do
    if not wait_in(self.joiners) then error(cancel_error, 0) end
  end
end

-- Durable queues and seen sets --------------------------------------------------

-- lc.store.open(path[, opts]) -> db | nil, err: the crawl state file (engine/store.c).
M.store = { open = core.store_open }

-- A queue kept in a store: the methods of Queue, its items in the store's file.
-- Strings are kept as bytes, tables as JSON text (lc.json). Items are taken from
-- the store in batches; an item got stays in the store, pending, until task_done
-- acknowledges it, so that an item whose work a kill cut short comes back at the
-- next open. task_done acknowledges the item the calling task got last (from a
-- task that got none: the oldest item any task holds). The store's commit makes
-- puts and acknowledgements durable.
local DurableQueue = {}
DurableQueue.__index = DurableQueue
local POP_BATCH = 64
local json_encode, json_decode = core.json_encode, core.json_decode

local function check_store_opts(opts, what)
  local db, name = opts.store, opts.name
  if type(db) ~= "userdata" or type(db._cache) ~= "function" then
    error(what .. ": store must be a store (lc.store.open)", 4)
  end
  if type(name) ~= "string" or name == "" then error(what .. ": name must be a non-empty string", 4) end
  return db:_cache(), name
end

function durable_queue(opts)
  local cache, name = check_store_opts(opts, "lc.queue")
  local maxsize = opts.maxsize
  if maxsize ~= nil then
    local ok, r = pcall(core.check_integer, maxsize, "lc.queue: maxsize", 0)
    if not ok then error((tostring(r):gsub("^[^\n]-:%d+: ", "")), 3) end
    maxsize = r
  end
  local key = "queue:" .. name
  local q = cache[key]
  if q then return q end
  q = setmetatable({
    h = opts.store:queue(name), maxsize = maxsize or 0,
    items = {}, ids = {}, texts = {}, head = 1, tail = 0, -- the batch taken from the store
    held = setmetatable({}, { __mode = "k" }), -- task -> ids it got, not yet acknowledged
    getters = waiters(), putters = waiters(), joiners = waiters(),
  }, DurableQueue)
  cache[key] = q
  return q
end

function DurableQueue:size()
  return (self.h:counts()) + self.tail - self.head + 1
end

function DurableQueue:empty()
  return self:size() == 0
end

DurableQueue.full = Queue.full
DurableQueue.put = Queue.put
DurableQueue.get = Queue.get

function DurableQueue:put_nowait(item)
  if item == nil then error("queue: cannot put nil", 2) end
  if self:full() then return false end
  if type(item) == "string" then
    self.h:push(item)
  else
    self.h:push(json_encode(item), true)
  end
  wake_one(self.getters)
  return true
end

function DurableQueue:get_nowait()
  local i = self.head
  if i > self.tail then
    local n = self.h:pop(POP_BATCH, self.items, self.ids, self.texts)
    if n == 0 then return nil end
    i, self.tail = 1, n
  end
  self.head = i + 1
  local item = self.items[i]
  self.items[i] = false
  if self.texts[i] then item = json_decode(item) end
  local me = core.current() or self
  local list = self.held[me]
  if not list then
    list = {}
    self.held[me] = list
  end
  list[#list + 1] = self.ids[i]
  wake_one(self.putters)
  return item
end

function DurableQueue:task_done()
  local list = self.held[core.current() or self]
  local id
  if list and #list > 0 then
    id = list[#list]
    list[#list] = nil
  else
    local from
    for _, l in pairs(self.held) do
      if #l > 0 and (not id or l[1] < id) then id, from = l[1], l end
    end
    if not id then error("queue: task_done called more times than get", 2) end
    table.remove(from, 1)
  end
  self.h:ack(id)
  local ready, pending = self.h:counts()
  if ready + pending == 0 then wake_all(self.joiners) end
end

function DurableQueue:join()
  while true do
    local ready, pending = self.h:counts()
    if ready + pending == 0 then return end
    if not wait_in(self.joiners) then error(cancel_error, 0) end
  end
end

local function durable_seen(opts)
  local cache, name = check_store_opts(opts, "lc.seen")
  local key = "seen:" .. name
  local set = cache[key]
  if not set then
    set = opts.store:seen(name)
    cache[key] = set
  end
  return set
end

-- Semaphore ---------------------------------------------------------------------

local Semaphore = {}
Semaphore.__index = Semaphore

function M.semaphore(n)
  return setmetatable({ value = n or 1, waiting = waiters() }, Semaphore)
end

function Semaphore:acquire()
  while self.value <= 0 do
    if not wait_in(self.waiting) then
      if self.value > 0 then wake_one(self.waiting) end
      error(cancel_error, 0)
    end
  end
  self.value = self.value - 1
end

function Semaphore:release()
  self.value = self.value + 1
  wake_one(self.waiting)
end

-- Run fn holding the semaphore; released however fn ends.
function Semaphore:with(fn, ...)
  self:acquire()
  local r = pack(pcall(fn, ...))
  self:release()
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n)
end

-- gather and timeout --------------------------------------------------------------

-- Wait for every argument (a task, or a function to spawn) and return the first
-- result of each, in order. If one fails, the others are cancelled and its error
-- is raised.
function M.gather(...)
  local n = select("#", ...)
  local tasks = {}
  for i = 1, n do
    local v = select(i, ...)
    if type(v) == "function" then v = core.spawn(v) end
    tasks[i] = v
  end
  local results = {}
  for i = 1, n do
    local ok, r = pcall(tasks[i].join, tasks[i])
    if not ok then
      for j = i + 1, n do tasks[j]:cancel() end
      if r == cancel_error then
        for j = 1, i do tasks[j]:cancel() end
      end
      error(r, 0)
    end
    results[i] = r
  end
  return unpack(results, 1, n)
end

-- Run fn(...) in a task of its own; its results, or nil and a timeout error when
-- it has not ended after `seconds` (it is then cancelled).
function M.timeout(seconds, fn, ...)
  arg_check(core.check_number, seconds, "lc.timeout: seconds", 0)
  local child = core.spawn(fn, ...)
  local expired = false
  local timer = core.spawn(function()
    M.sleep(seconds)
    expired = true
    child:cancel()
  end)
  local r = pack(pcall(child.join, child))
  timer:cancel()
  if expired then
    return nil, M.error("timeout", ("no result within %g seconds"):format(seconds))
  end
  if not r[1] then
    if r[2] == cancel_error then child:cancel() end
    error(r[2], 0)
  end
  return unpack(r, 2, r.n)
end

-- Signals -----------------------------------------------------------------------

-- lc.signals.watch("INT") catches SIGINT from now on (instead of dying of it);
-- lc.signals.wait() waits for the next caught signal and returns its name ("INT",
-- "TERM", ...); lc.signals.unwatch("INT") restores the default.
M.signals = {
  watch = core.signal_watch,
  unwatch = core.signal_unwatch,
  wait = function() return check(core.signal_wait()) end,
}

-- lc.host: functions of the C program embedding the engine, and the script's own
-- it may call (luacrawl/host.lua, docs/embedding.md).
M.host = require "luacrawl.host"

M.url = core.url
-- lc.seen([expected]): a set in memory; lc.seen{ store = db, name = NAME }: a set
-- kept in a store, with the same add, has and size.
local core_seen = core.seen
function M.seen(opts, ...)
  if type(opts) == "table" then
    if opts.store ~= nil then return durable_seen(opts) end
    return core_seen(opts.expected)
  end
  return core_seen(opts, ...)
end
-- lc.json.encode(v) -> text, lc.json.decode(text) -> v | nil, err (strict RFC 8259;
-- err.kind "parse", its message with the byte position), lc.json.null for JSON's
-- null (equal to cjson.null), lc.json.array(t) marks t (a new table when nil) as an
-- array: written [] when empty.
M.json = { encode = core.json_encode, decode = core.json_parse, null = core.json_null,
  array = function(t) return setmetatable(t or {}, core.json_array_mt) end }
M.url.redact = redact
M.regex = require "luacrawl.regex"
core.Response = Response
core.Headers = Headers
core.header_of = M._header -- for html.lua, which luacrawl loads
M.html = require "luacrawl.html"
core.make_error = M.error
M.warc = require "luacrawl.warc"
-- lc.redis.connect(url [, opts]) -> a Redis connection on the loop (luacrawl/redis.lua).
M.redis = require "luacrawl.redis"
-- lc.save.path(url), lc.save.write(dir, url, body): bodies kept as files (luacrawl/save.lua),
-- loaded on first use.
M.save = setmetatable({}, { __index = function(_, k) return require("luacrawl.save")[k] end })
-- lc.render(url, opts): a page rendered by a headless Chromium (luacrawl/render.lua,
-- loaded on first use); lc.browser(opts) sets up the browser it starts.
function M.render(url, opts)
  return require("luacrawl.render").render(url, opts)
end
function M.browser(opts)
  return require("luacrawl.render").browser(opts)
end
-- lc.dashboard{listen =, token =} -> the dashboard's server (luacrawl/dashboard.lua),
-- loaded on first use.
function M.dashboard(opts)
  return require("luacrawl.dashboard").open(opts)
end
M._suspend = suspend
M._wake = core.wake

return M
