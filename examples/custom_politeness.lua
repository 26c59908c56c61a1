-- A politeness policy of our own, written in Lua with the crawl hooks:
--   * hosts are grouped by registrable domain (www.a.org and cdn.a.org share one
--     budget), one request at a time per domain;
--   * each domain starts at a base delay; listed "fragile" domains get more;
--   * a slow answer (over 1 s) doubles the domain's delay, up to 30 s; a fast one
--     brings it back down towards the base;
--   * a 5xx puts the whole domain in backoff for 30 s.
--
--   luacrawl run examples/custom_politeness.lua URL... [--fragile DOMAIN]...
local crawl = require "luacrawl.crawl"
local lc = require "luacrawl"

local BASE, FRAGILE, MAX, SLOW = 0.2, 2.0, 30, 1.0

local starts, fragile = {}, {}
local i = 1
while arg[i] do
  if arg[i] == "--fragile" then
    fragile[arg[i + 1]] = true
    i = i + 2
  else
    starts[#starts + 1] = arg[i]
    i = i + 1
  end
end
if #starts == 0 then
  io.stderr:write("usage: luacrawl run custom_politeness.lua URL... [--fragile DOMAIN]...\n")
  os.exit(2)
end

local base_of = function(key) return fragile[key] and FRAGILE or BASE end

local stats = crawl.run({
  start = starts,
  progress = false, -- stdout carries the pages; keep stderr for the stats
  progress = false, -- stdout carries the pages; keep stderr for the stats
  host_key = "domain",
  per_host = 1,
  max_depth = 2,
  -- The first time a domain is seen, give it its base delay.
  on_host = function(key, crawler) crawler:set_delay(key, base_of(key)) end,
  on_response = function(page)
    local c, key = page.crawler, page.key
    local delay = c:delay(key)
    if page.status >= 500 then
      c:backoff(key, 30)
    elseif page.elapsed > SLOW then
      c:set_delay(key, math.min(MAX, math.max(delay, base_of(key)) * 2))
    elseif delay > base_of(key) then
      c:set_delay(key, math.max(base_of(key), delay * 0.75))
    end
    io.stdout:write(("%-20s delay %5.2f  %d %s\n"):format(key, c:delay(key), page.status, page.url))
  end,
})
io.stderr:write(("%d pages\n"):format(stats.pages))
