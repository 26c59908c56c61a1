-- Benchmark of lc.seen, run by scripts/bench-seen. It prints figures; it is not a test.
--
--   luacrawl run scripts/bench_seen.lua [N]
--
-- Adds N distinct URLs (default 1,000,000) to an lc.seen set, then, as references
-- measured in the same run, to a plain Lua table keyed by the URL string (what a
-- script would write without lc.seen), and to a Lua table keyed by the normalized URL
-- (the same job as lc.seen: equivalent URLs count once). Prints bytes per URL (the
-- set's own count and the growth of RSS; for the tables, the growth of the Lua heap
-- with the URL strings the table keeps alive) and adds per second (wall time,
-- including making each URL string). Then re-adds a sample to check that the set
-- answers "already there".
local lc = require "luacrawl"

local N = tonumber(arg and arg[1]) or 1000000
local now = lc.now or os.clock

local function url_of(i)
  return ("https://www.example%d.org/section/%d/article-%d.html?id=%d&ref=home"):format(
    i % 97, i % 1000, i, i * 7)
end

local page_size = 4096
do
  local p = io.popen("getconf PAGESIZE 2>/dev/null")
  if p then
    page_size = tonumber(p:read("*l") or "") or page_size
    p:close()
  end
end

local function rss()
  local f = io.open("/proc/self/statm", "r")
  if not f then return nil end
  local _, resident = f:read("*n", "*n")
  f:close()
  return resident and resident * page_size
end

local function heap()
  collectgarbage("collect")
  collectgarbage("collect")
  return collectgarbage("count") * 1024
end

local function fmt_int(n)
  local s = ("%d"):format(math.floor(n + 0.5))
  return (s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
end

local results = {}

-- Making the strings alone: the floor under every variant.
do
  local t0, len = now(), 0
  for i = 1, N do len = len + #url_of(i) end
  local dt = now() - t0
  print(("bench-seen: %s distinct URLs, %.1f bytes long on average; making them alone: %s/s")
    :format(fmt_int(N), len / N, fmt_int(N / dt)))
end

-- lc.seen: fingerprints of normalized URLs in C.
do
  heap()
  local rss0 = rss()
  local set = lc.seen()
  local t0 = now()
  local new = 0
  for i = 1, N do
    if set:add(url_of(i)) then new = new + 1 end
  end
  local dt = now() - t0
  local rss1 = rss()
  local again = 0
  local sample = math.min(N, 100000)
  for i = 1, sample do
    if not set:add(url_of(i)) then again = again + 1 end
  end
  assert(new == N and set:size() == N, "lc.seen lost URLs")
  assert(again == sample, "lc.seen took a URL twice")
  results[#results + 1] = {
    name = "lc.seen (64-bit fingerprints in C)",
    bytes = set:bytes() / N, rss = rss0 and rss1 and (rss1 - rss0) / N, rate = N / dt,
  }
  set = nil -- luacheck: ignore
  heap()
end

-- A Lua table keyed by the URL as given.
local function lua_table(name, key_of)
  local h0 = heap()
  local t, new = {}, 0
  local t0 = now()
  for i = 1, N do
    local k = key_of(url_of(i))
    if not t[k] then
      t[k] = true
      new = new + 1
    end
  end
  local dt = now() - t0
  local h1 = heap()
  assert(new == N, name .. " lost URLs")
  results[#results + 1] = { name = name, bytes = (h1 - h0) / N, rate = N / dt }
  t = nil -- luacheck: ignore
  heap()
end

lua_table("Lua table, URL string keys", function(u) return u end)
lua_table("Lua table, normalized URL keys", function(u) return (lc.url.normalize(u)) end)

print(("%-38s %10s %12s %12s"):format("", "bytes/URL", "RSS B/URL", "adds/s"))
for _, r in ipairs(results) do
  print(("%-38s %10.1f %12s %12s"):format(r.name, r.bytes,
    r.rss and ("%.1f"):format(r.rss) or "-", fmt_int(r.rate)))
end
local seen, raw, norm = results[1], results[2], results[3]
print(("lc.seen: %.1fx less memory than string keys (%.1fx less than normalized keys); "
  .. "%.2fx the adds/s of string keys, %.2fx of normalized keys")
  :format(raw.bytes / seen.bytes, norm.bytes / seen.bytes, seen.rate / raw.rate,
    seen.rate / norm.rate))
