-- A polite crawl across several hosts: one request at a time per host, a second
-- between requests to a host (more if robots.txt asks for it), an adaptive delay
-- that backs off when a host slows down, and every host still crawled in parallel.
--
--   luacrawl run examples/polite_crawl.lua URL... [--depth N]
--
-- Prints one line per page: "host status depth url"; stats on stderr.
local crawl = require "luacrawl.crawl"
local lc = require "luacrawl"

local starts, depth = {}, 2
local i = 1
while arg[i] do
  if arg[i] == "--depth" then
    depth = tonumber(arg[i + 1]) or depth
    i = i + 2
  else
    starts[#starts + 1] = arg[i]
    i = i + 1
  end
end
if #starts == 0 then
  io.stderr:write("usage: luacrawl run polite_crawl.lua URL... [--depth N]\n")
  os.exit(2)
end

-- Stay on the hosts we were given (and their subdomains).
local hosts = {}
for _, u in ipairs(starts) do hosts[#hosts + 1] = lc.url.host(u) end

crawl.run({
  start = starts,
  progress = false, -- stdout carries the pages; keep stderr for the stats
  allow = { hosts = hosts },
  max_depth = depth,
  concurrency = 32,   -- many hosts at once...
  per_host = 1,       -- ...but one request at a time to each
  delay = 1.0,        -- at least a second between requests to a host
  max_delay = 10,     -- never wait more than this, whatever Crawl-delay says
  throttle = { target = 1.0, min_delay = 1.0, max_delay = 10 },
  robots = true,
  user_agent = "luacrawl-example/1.0 (+https://example.invalid/bot)",
  parse = function(page)
    io.stdout:write(("%s %d %d %s\n"):format(lc.url.host(page.url), page.status, page.depth, page.url))
    if page:is_html() then page:follow(page:links()) end
  end,
})
