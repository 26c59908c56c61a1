-- scripts/bench_render.lua: luacrawl's side of scripts/bench-render, a crawl of the
-- JavaScript site (bench_site.py --js) with every page rendered.
--
--   luacrawl run scripts/bench_render.lua START OUT.jsonl CONCURRENCY WAIT
--
-- CONCURRENCY renders at once (render_concurrency, and as many tasks and requests per
-- host); WAIT is render_options.wait ("networkidle", "settled", ...). robots.txt is
-- not asked (the Node crawler does not ask it either). One JSON line per page: its
-- URL and the number of links its rendered DOM holds.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"

local start, out, n, wait = arg[1], arg[2], tonumber(arg[3]), arg[4]
if not (start and out and n and wait) then
  error("usage: luacrawl run scripts/bench_render.lua START OUT.jsonl CONCURRENCY WAIT", 0)
end

local st = crawl.run({
  start = start, output = out, quiet = true, robots = false,
  concurrency = n, per_host = n,
  render = true, render_options = { wait = wait },
  browser = { render_concurrency = n },
  parse = function(page)
    page:emit({ url = page.url, links = #page.response:html():css("a[href]") })
    page:follow_links()
  end,
})
io.stderr:write(("bench_render: %d pages, %d errors\n"):format(st.pages or 0, st.errors_total or 0))
