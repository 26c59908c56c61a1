-- luacrawl.crawl_pause: a crawl paused, resumed or stopped from outside it: its
-- dashboard (crawl_dashboard.lua) or its fleet's (crawl_redis_publish.lua). While
-- paused no new request starts (crawl.lua's dispatch reads crawler.paused); those in
-- flight finish. The paused time is counted for the report (paused_seconds).
local lc = require "luacrawl"

local M = {}

-- The seconds crawler was paused so far (a pause in progress included); nil when it
-- never was.
function M.seconds(crawler)
  local total, at = rawget(crawler, "paused_total"), rawget(crawler, "paused_at")
  if not total then return nil end
  return total + (at and lc.now() - at or 0)
end

-- from: who asks ("the dashboard", "the fleet's dashboard"), for the log.
function M.pause(crawler, from)
  if crawler.paused then return end
  crawler.paused_total = M.seconds(crawler) or 0
  crawler.paused_at = lc.now()
  crawler.paused = true
  crawler:log(("paused from %s: requests in flight finish, no new one starts"):format(from))
end

function M.resume(crawler, from)
  if not crawler.paused then return end
  crawler.paused_total = M.seconds(crawler)
  crawler.paused_at = false
  crawler.paused = false
  crawler:log("resumed from " .. from)
  crawler:poke()
end

-- As SIGINT: requests in flight finish, the crawl ends (luacrawl crawl exits 130).
function M.stop(crawler, from)
  if crawler.stopping then return end
  crawler:log(("stop from %s: finishing requests in flight"):format(from))
  if crawler.paused then
    crawler.paused_total = M.seconds(crawler)
    crawler.paused_at = false
    crawler.paused = false
  end
  crawler:stop("dashboard")
end

return M
