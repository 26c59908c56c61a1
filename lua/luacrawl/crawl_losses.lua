-- luacrawl.crawl_losses: the ways a crawl does less than it was asked, said out loud.
-- Warnings given once per crawl with their fix (a Scrapy habit that does nothing:
-- returning an item from parse, coroutine.yield(item), an allow function that
-- returns nothing); errors in parse logged once per distinct message, their count
-- at the end; start URLs refused, counted by reason; robots.txt that could not be
-- reached; retries a stopped crawl will not make. The summary of all of them is report.losses (lua/luacrawl/crawl_report.lua).
local lc = require "luacrawl"

local M = {}

-- Distinct parse error messages remembered (to log each once); past this many,
-- every error is logged as it comes.
local MAX_DISTINCT = 64

-- Log msg the first time key is seen in this crawl (also under quiet: a warning says
-- the crawl is not doing what its author thinks).
function M.warn_once(crawler, key, msg)
  local w = crawler.warned
  if not w then
    w = {}
    crawler.warned = w
  end
  if w[key] then return end
  w[key] = true
  crawler.stats.warnings = (crawler.stats.warnings or 0) + 1
  io.stderr:write("luacrawl: warning: ", msg, "\n")
end

-- What parse returned: anything but nil is a value that goes nowhere.
function M.parse_returned(crawler, r)
  if r == nil then return end
  if type(r) == "table" then
    M.warn_once(crawler, "parse_return", "parse returned a table, which is dropped: use page:emit(item)")
  else
    M.warn_once(crawler, "parse_return",
      ("parse returned a %s, which is dropped: emit items with page:emit(item)"):format(type(r)))
  end
end

-- An allow function's answer: nil (it forgot to return) counts as false, and says so.
function M.allow_answer(crawler, v)
  if v == nil then
    M.warn_once(crawler, "allow_nil",
      "allow function returned nil (read as false: the URL is not followed): return true or false")
  end
  return v
end

-- An error raised in parse for req: counted; logged the first time its message is
-- seen (later ones only counted, and told to on_error): a bad selector fails on every
-- page the same way. report(req, err, fmt) logs and tells on_error; fmt nil: only tells.
function M.parse_failed(crawler, req, err, msg)
  local st = crawler.stats
  st.parse_errors = st.parse_errors + 1
  local seen = crawler.parse_error_seen
  if not seen then
    seen = { n = 0 }
    crawler.parse_error_seen = seen
  end
  local k = msg
  local e = seen[k]
  if e then
    e.count = e.count + 1
    return false
  end
  if seen.n < MAX_DISTINCT then
    seen.n = seen.n + 1
    seen[k] = { count = 1, url = req and req.url }
  end
  return true
end

-- At the end of a run: the errors in parse that repeated, once each with their
-- count; a coroutine.yield(value) seen in a task (values that went nowhere).
function M.finish(crawler, yields_before)
  local seen = crawler.parse_error_seen
  if seen then
    local rows = {}
    for msg, e in pairs(seen) do
      if type(e) == "table" and e.count > 1 then rows[#rows + 1] = { msg = msg, e = e } end
    end
    table.sort(rows, function(a, b) return a.e.count > b.e.count end)
    for _, r in ipairs(rows) do
      crawler:log(("the same error in parse on %d pages (logged once, for %s): %s"):format(
        r.e.count, lc.url.redact(r.e.url or "?"), r.msg))
    end
  end
  -- An output given to a crawl whose default parse emits nothing: it stays empty.
  local spec, st = crawler.spec, crawler.stats
  if spec.output ~= nil and spec.parse == nil and spec.callbacks == nil and spec.fields == nil
    and st.items == 0 and st.pages > 0 then
    M.warn_once(crawler, "no_items", "nothing was written to the output: without a parse the crawl emits no "
      .. "items; give fields = {\"url\", \"status\", ...} for a record per page, or a parse that calls page:emit(item)")
  end
  local y = lc.stats().yields_dropped
  if yields_before and y and y > yields_before then
    M.warn_once(crawler, "yield",
      ("coroutine.yield(value) in a task %d time(s): the values went nowhere (in parse, use page:emit(item))"):format(
        y - yields_before))
  end
end

-- A fetch error in few words, for the report: its kind and the last part of its
-- message ("connect: Couldn't connect to server").
function M.cause(err)
  local msg = tostring(err.message or err):gsub(" %([^()]*%)$", "")
  return ("%s: %s"):format(tostring(err.kind), msg:match("([^:]+)$"):gsub("^%s+", ""))
end

-- A start URL that was not queued: counted (start_refused, and by reason in
-- start_refused_why) and logged with its reason (and cause, when given).
local WHY = {
  invalid_urls = "not a valid http(s) URL", out_of_scope = "out of scope", duplicates = "a duplicate",
  too_deep = "deeper than max_depth", robots_denied = "denied by robots.txt", dropped = "dropped by on_request",
  robots_unreachable = "robots.txt unreachable",
  host_time_exceeded = "its host's max_host_time is spent",
}
function M.start_refused(crawler, url, why, cause)
  if why == nil or why == "duplicates" then return end
  local st = crawler.stats
  st.start_refused = (st.start_refused or 0) + 1
  st.start_refused_why = st.start_refused_why or {}
  st.start_refused_why[why] = (st.start_refused_why[why] or 0) + 1
  local hint = ""
  if why == "invalid_urls" and type(url) == "string" then hint = M.scheme_hint(url) end
  if cause then hint = ": " .. cause end
  crawler:log(("start URL %s not crawled: %s%s"):format(lc.url.redact(tostring(url)), WHY[why] or why, hint))
end

-- For a URL without a scheme ("example.org/x"): ": missing scheme: did you mean
-- http://example.org/x?" ; else "".
function M.scheme_hint(url)
  if url:match("^%a[%w+.-]*://") then return "" end
  if url:match("^[%w.-]+%.[%a]+[:/]?") or url:match("^[%w.-]+:%d+") or url:match("^localhost") then
    return (": missing scheme: did you mean http://%s?"):format(url)
  end
  return ""
end

-- A retry the crawl will not make (without a state, which keeps it for the next run):
-- the crawl stopped first (max_pages, max_time, a signal). Counted in retries_abandoned.
function M.retry_abandoned(crawler, n)
  if crawler.kept then return end
  local st = crawler.stats
  st.retries_abandoned = (st.retries_abandoned or 0) + (n or 1)
end

-- A retry put back in the frontier: abandoned if the crawl stops before it starts
-- (crawl.lua's launch takes it out of crawler.retry_queued).
function M.retry_queued(crawler, req)
  if crawler.kept then return end
  crawler.retry_queued = crawler.retry_queued or {}
  crawler.retry_queued[req] = true
end

-- At the end of a run: the retries still waiting their time, or queued and never
-- started, are abandoned.
function M.abandoned_retries(crawler)
  local n = crawler.delayed
  for _ in pairs(crawler.retry_queued or {}) do n = n + 1 end
  crawler.retry_queued = false
  if n > 0 then M.retry_abandoned(crawler, n) end
end

return M
