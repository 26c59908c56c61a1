-- scripts/bench_frontier_state.lua: the SQLite frontier (luacrawl.frontier_sqlite) with
-- N URLs in it, as a crawl's state holds them: each URL admitted through the seen set
-- in memory, pushed, then every one popped and done, with a commit every 50,000;
-- between the two, a resume (the store closed and opened again). Run by scripts/bench-state; prints one line of figures:
--   pushed push_per_s popped pop_per_s peak_rss_kb state_bytes resume_seconds
--
--   luacrawl run scripts/bench_frontier_state.lua STATE N HOSTS
local lc = require "luacrawl"
local frontier_sqlite = require "luacrawl.frontier_sqlite"

local path, n, hosts = arg[1], tonumber(arg[2]), tonumber(arg[3])
assert(path and n and hosts, "usage: bench_frontier_state.lua STATE N HOSTS")
local COMMIT_EVERY = 50000

local function peak_rss_kb()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmHWM:%s*(%d+)")
    if kb then return tonumber(kb) end
  end
  return 0
end

local db = assert(lc.store.open(path))
local f = frontier_sqlite.open(db, { per_host = 1000000, window = 64 })
local seen = lc.seen()
local function commit()
  f:flush() -- the rows it gathered, as crawl_state.lua's commit does
  assert(db:commit())
end

local t0 = lc.now()
local pushed = 0
for i = 1, n do
  local h = i % hosts
  local url = ("http://host%d.example/section/%d/page-%d.html"):format(h, i % 97, i)
  if seen:add(url) then
    f:push_url("host" .. h .. ".example", url, i % 7, nil)
    pushed = pushed + 1
  end
  if i % COMMIT_EVERY == 0 then commit() end
end
commit()
local t1 = lc.now()
assert(f:size() == pushed, "the frontier lost URLs")

-- A resume: the store closed and opened again, the seen set made from its URLs (as
-- crawl_state.lua does) and each host's window read in.
assert(db:close())
seen = nil
collectgarbage()
local r0 = lc.now()
db = assert(lc.store.open(path))
seen = lc.seen()
db:sql("SELECT url FROM crawl_frontier"):seen_urls(seen)
f = frontier_sqlite.open(db, { per_host = 1000000, window = 64 })
f:resume()
local resume_s = lc.now() - r0
assert(f:size() == pushed and seen:size() == pushed, "the resume lost URLs")
local t1b = lc.now()

local popped = 0
local now = 0
while true do
  local req = f:pop(now)
  if not req then break end
  f:done(req, now)
  popped = popped + 1
  if popped % COMMIT_EVERY == 0 then commit() end
end
commit()
local t2 = lc.now()
assert(popped == pushed, ("popped %d of %d"):format(popped, pushed))
local bytes = db:bytes()
db:close()
io.write(("%d %.0f %d %.0f %d %d %.3f\n"):format(pushed, pushed / (t1 - t0), popped, popped / (t2 - t1b),
  peak_rss_kb(), bytes, resume_s))
