-- luacrawl.crawl_steps: what handling a request does beyond fetching and parsing it,
-- chosen once, when the crawl is made, from the optional parts that are on: spec.render
-- (crawl_render.lua), spec.hosts' headers and page budgets (crawl_hosts.lua), the
-- dashboard's watch (crawl_dashboard.lua), the archive (crawl_warc.lua), a state's or
-- a fleet's record of each request (crawl_durable.lua) and spec.save. crawler.steps holds
-- one function a step, calling those of the parts that take it, or false when none
-- does: a crawl with none of them on reads one field a step, not one a part, and calls
-- nothing of them. Crawler:process, work and launch (crawl.lua) call the steps.
local lc = require "luacrawl"
local crawl_durable = require "luacrawl.crawl_durable"

local M = {}

-- The functions of one step made one (each called as fn(crawler, req, x)); false when
-- the list is empty.
local function chain(list)
  local n = #list
  if n == 0 then return false end
  if n == 1 then return list[1] end
  return function(c, req, x)
    for i = 1, n do list[i](c, req, x) end
  end
end

-- The durable object's method `name` as a step, unless it is memory's, which does
-- nothing.
local function durable_step(durable, name, list, wrap)
  if durable[name] == crawl_durable.Memory[name] then return end
  list[#list + 1] = wrap
end

-- A request's fetch: rendered when spec.render chooses it, with its host's own headers
-- (spec.hosts) when the host has some, else lc.fetch with the crawl's options (looked up
-- at each call: a script may wrap lc.fetch).
local function fetch_step(c)
  local hosts = c.hosts and c.hosts.headers and c.hosts
  local fetch
  if hosts then
    fetch = function(cr, req)
      local own = hosts:of(req.key)
      return lc.fetch(req.url, cr:request_opts(req, own and own.headers))
    end
  else
    fetch = function(cr, req) return lc.fetch(req.url, cr:request_opts(req)) end
  end
  local render = c.render
  if not render then return fetch end
  return function(cr, req)
    if render:wants(req) then return render:render(req) end
    return fetch(cr, req)
  end
end

-- crawler's steps, from the parts it has (after Crawler:open_parts attached them):
--   fetch(c, req) -> res | nil, err   the request's fetch (always a function)
--   failed(c, req, err)               the request failed for good
--   response(c, req, res)             a response came (before a retry is decided)
--   fetched(c, req, res)              the crawl keeps the response (no retry)
--   save(c, req, res)                 after the page is counted
--   begin(c, req)                     a worker takes the request
--   processed(c, req)                 its handling ended (whether or not it raised)
--   ended(c, req)                     its worker is done with it
--   budget(c, req) -> true to skip    a new page is about to start (its host's budget)
function M.new(c)
  local durable, watch, warc = c.durable, c.watch, c.warc
  local failed, response, fetched, ended = {}, {}, {}, {}
  durable_step(durable, "failed", failed, function(cr, req, err) cr.durable:failed(req, err.kind) end)
  if watch then
    failed[#failed + 1] = function(_, req, err) watch:failed(req, err) end
    response[#response + 1] = function(_, req, res) watch:response(req, res) end
  end
  if warc then
    response[#response + 1] = function(cr, req, res) cr.warc:response(req, res) end
    fetched[#fetched + 1] = function(cr, req, res) cr.warc:handle(req, res) end
  end
  durable_step(durable, "fetched", fetched, function(cr, req, res) cr.durable:fetched(req, res) end)
  durable_step(durable, "page_ended", ended, function(cr) cr.durable:page_ended() end)
  local hosts = c.hosts
  return {
    fetch = fetch_step(c),
    failed = chain(failed),
    response = chain(response),
    fetched = chain(fetched),
    save = c.save_dir and function(cr, _, res)
      if res.status >= 200 and res.status < 300 then cr:save(res) end
    end or false,
    -- With a state or a fleet, a page's items are held until its request is done.
    begin = durable.kept and function(_, req) req.working = true end or false,
    -- The archive's metadata record of the request.
    processed = warc and function(cr, req) pcall(cr.warc.finish, cr.warc, req) end or false,
    ended = chain(ended),
    budget = hosts and function(cr, req) return cr:host_budget_spent(req) end or false,
  }
end

return M
