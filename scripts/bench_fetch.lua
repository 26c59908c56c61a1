-- A diagnostic of scripts/bench: the transfers alone, without link extraction.
--
--   luacrawl run scripts/bench_fetch.lua BASE_URL PATHS_FILE [TASKS]
--
-- TASKS tasks (default 64) fetch BASE_URL .. path for every line of PATHS_FILE, each
-- once, and release each response: what the asyncio crawler does minus parsing the
-- pages, the seen set and the queue. Prints "N fetched, M x 200"; exits 1 unless
-- every fetch returned 200.
local lc = require "luacrawl"

local base, paths_file = arg[1], arg[2]
if not base or not paths_file then
  io.stderr:write("usage: luacrawl run bench_fetch.lua BASE_URL PATHS_FILE [TASKS]\n")
  os.exit(2)
end
local ntasks = tonumber(arg[3]) or 64

local urls = {}
for path in io.lines(paths_file) do urls[#urls + 1] = base .. path end

local next_url, fetched, ok200 = 1, 0, 0
local workers = {}
for w = 1, ntasks do
  workers[w] = lc.spawn(function()
    while next_url <= #urls do
      local url = urls[next_url]
      next_url = next_url + 1
      local res = lc.fetch(url)
      fetched = fetched + 1
      if res and res.status == 200 then ok200 = ok200 + 1 end
      if res then res:release() end
    end
  end)
end
for _, w in ipairs(workers) do w:join() end
print(("%d fetched, %d x 200"):format(fetched, ok200))
os.exit(ok200 == #urls and 0 or 1)
