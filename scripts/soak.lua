-- scripts/soak.lua MINUTES: the soak benchmark's crawl (run by scripts/soak, with the
-- fixtures up). For MINUTES minutes, 50 hosts (h1..h50.soak.crawl.test, all served by
-- the fixture server) are asked for normal pages mixed with every fault the fixture
-- serves; every minute a line with pages/s, errors by kind and RSS.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"

local minutes = tonumber(arg[1]) or 30
lc.configure({ dns_servers = os.getenv("LC_DNS_SERVER") })
local port = os.getenv("LC_FIXTURE_PORT")

local FAULTS = {
  "/fault/hang?seconds=10", "/fault/trickle?bytes=30", "/fault/reset-before", "/reset", "/short",
  "/fault/bad-chunked", "/fault/huge", "/fault/huge-chunked", "/fault/gzip-bomb", "/fault/header-1mb",
  "/manyheaders?count=2000", "/redirect/30", "/loop/a", "/redirect-to?url=file:///etc/passwd",
  "/fault/bad-html?kind=nul", "/fault/bad-html?kind=utf8", "/status/503", "/status/500", "/status/404",
}

local function rss_mb()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmRSS:%s+(%d+)")
    if kb then return tonumber(kb) / 1024 end
  end
end

local seq = 0
local function next_request()
  seq = seq + 1
  local host = ("h%d.soak.crawl.test"):format(seq % 50 + 1)
  local path
  if seq % 4 == 0 then
    path = FAULTS[(seq / 4) % #FAULTS + 1]
  else
    path = ("/site/p/%d.html"):format(seq % 2000)
  end
  local sep = path:find("?", 1, true) and "&" or "?"
  return { url = ("http://%s:%s%s%sn=%d"):format(host, port, path, sep, seq), dont_filter = true }
end

local crawler
crawler = crawl.new({
  start = function(add)
    local stop_at = lc.now() + minutes * 60
    while lc.now() < stop_at do
      -- Keep about 500 requests queued: a steady load, not an ever-growing queue.
      while crawler.frontier:size() + crawler.waiting_robots < 500 do add(next_request()) end
      lc.sleep(0.05)
    end
  end,
  span_hosts = true, robots = true, max_redirect = 10, retries = 1, concurrency = 64, per_host = 4,
  max_depth = 0, quiet = true, progress = false, signals = true,
  fetch = { timeout = 3, connect_timeout = 2 },
  parse = function(page)
    if page:is_html() then
      page:links()
      page:html():title()
      if page.request.url:find("n=%d*0$") then page:css("a") end -- a tree now and then
    end
  end,
})

local function kinds(st)
  local parts = {}
  for k, v in pairs(st.errors) do parts[#parts + 1] = k .. "=" .. v end
  table.sort(parts)
  return table.concat(parts, " ")
end

lc.spawn(function()
  local last_pages, t0 = 0, lc.now()
  local rss = {}
  for minute = 1, minutes + 1 do
    lc.sleep(60)
    local st = crawler.stats
    rss[minute] = rss_mb()
    io.stdout:write(("minute %2d: %6.0f pages/s, %d pages, %d errors (%s), retries %d, RSS %.1f MB, Lua heap %.1f MB\n")
      :format(minute, (st.pages - last_pages) / 60, st.pages, st.errors_total, kinds(st), st.retries,
        rss[minute], (lc.memory()) / 2 ^ 20))
    io.stdout:flush()
    last_pages = st.pages
    if lc.now() - t0 > minutes * 60 then break end
  end
  if #rss >= 3 then
    io.stdout:write(("RSS after warm-up (minute 2) %.1f MB, at the end %.1f MB: %+.1f MB\n")
      :format(rss[2], rss[#rss], rss[#rss] - rss[2]))
  end
end)

local st = crawler:run()
io.stdout:write(("done: %d pages in %.0f s, %d errors (%s); the process is alive\n")
  :format(st.pages, st.elapsed, st.errors_total, kinds(st)))
