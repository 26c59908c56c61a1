-- fixtures: --http --site-pages 4000
-- examples/durable_crawler.lua run by the luacrawl binary against the fixture site,
-- killed with SIGKILL at random instants and resumed each time: the fixture
-- server's request log shows every page fetched, none lost, and no more fetched
-- again after a kill than the state could not have recorded (the pages in flight,
-- and those done since the last commit).
local h = require "spec_helper"

local KILLS = 5

local control = h.control

-- The paths the server was asked for since entry `from` of its log; the new length.
local function requests_since(from)
  local log = control("/__log").requests
  local paths = {}
  for i = from + 1, #log do paths[#paths + 1] = log[i].path end
  return paths, #log
end

local function manifest()
  local want = {}
  for _, p in ipairs(control("/site/manifest.json")) do want[p] = true end
  return want
end

-- One run of the example, killed with SIGKILL once it has printed `lines` lines
-- (one a page; stdout is buffered, so the kill lands a little later, at an instant
-- no one chose), or not killed when `lines` is nil. Counting pages, not seconds,
-- keeps the number of kills that land before the crawl ends the same on a fast
-- machine and a slow one. Returns its exit status (137 when the kill took it),
-- stdout, stderr.
local function run(state, extra, lines)
  local cmd = ("%s run %s/examples/durable_crawler.lua '%s' '%s' %s"):format(
    h.luacrawl_bin, h.source_dir, state, h.url("/site/"), extra)
  if lines then
    local out = h.tmpname(".out")
    cmd = ("bash -c '%s >%s & p=$!; while kill -0 $p 2>/dev/null && [ $(wc -l <%s) -lt %d ]; do sleep 0.005; done;"
      .. " kill -9 $p 2>/dev/null; wait $p'"):format(cmd:gsub("'", [['"'"']]), out, out, lines)
  end
  return h.sh(cmd)
end

-- Kill the crawl KILLS times (fewer if it ends first), each run once it has fetched
-- between window[1] and window[2] pages, then let it finish: returns
-- the kills made and, for each run after a kill, the pages it fetched that an
-- earlier run had fetched already.
local function crawl_with_kills(extra, window)
  control("/__reset")
  local state = h.tmpname(".db")
  local fetched, logged, kills, refetched = {}, 0, 0, {}
  local function account()
    local paths
    paths, logged = requests_since(logged)
    local again = 0
    for _, p in ipairs(paths) do
      if fetched[p] then again = again + 1 end
      fetched[p] = true
    end
    return again
  end
  local finished = false
  while kills < KILLS and not finished do
    local code, _, err = run(state, extra, math.random(window[1], window[2]))
    local again = account()
    if kills > 0 then refetched[#refetched + 1] = again end
    if code == 0 then
      finished = true
    else
      assert.equal(137, code, err) -- the kill, not a failure of its own
      kills = kills + 1
    end
  end
  if not finished then
    local code, _, err = run(state, extra)
    assert.equal(0, code, err)
    refetched[#refetched + 1] = account()
  end
  print(("state_kill_spec: %s: %d kills, pages fetched again after each: %s"):format(
    extra, kills, table.concat(refetched, " ")))
  return kills, refetched, fetched, state
end

describe("the durable crawler example killed with SIGKILL", function()
  local seed = os.time()
  math.randomseed(seed)
  print(("state_kill_spec: random seed %d"):format(seed))

  it("loses no page, and after each kill fetches again at most the pages in flight (commit every page)", function()
    local workers = 4
    local kills, refetched, fetched, state = crawl_with_kills(
      ("--max-tasks %d --commit-every 1"):format(workers), { 50, 600 })
    assert.is_true(kills >= 3, ("only %d kills landed before the crawl ended"):format(kills))
    for i, n in ipairs(refetched) do
      assert.is_true(n <= workers, ("run %d after a kill fetched %d pages again (workers: %d)"):format(i + 1, n, workers))
    end
    assert.same(manifest(), fetched)
    -- Finished: says so, fetches nothing.
    local _, logged = requests_since(0)
    local code, out, err = run(state, "")
    assert.equal(0, code, err)
    assert.equal("", out)
    assert.matches("finished already", err)
    assert.equal(logged, select(2, requests_since(0)))
  end)

  it("loses no page with batched commits, and fetches again at most the pages in flight and those since the commit", function()
    local workers, every = 4, 25
    local kills, refetched, fetched = crawl_with_kills(
      ("--max-tasks %d --commit-every %d"):format(workers, every), { 50, 600 })
    assert.is_true(kills >= 3, ("only %d kills landed before the crawl ended"):format(kills))
    for i, n in ipairs(refetched) do
      assert.is_true(n <= workers + every,
        ("run %d after a kill fetched %d pages again (workers %d + commit every %d)"):format(i + 1, n, workers, every))
    end
    assert.same(manifest(), fetched)
  end)

  it("refuses a state made by a crawl of another root", function()
    local state = h.tmpname(".db")
    local code, _, err = h.sh(("%s run %s/examples/durable_crawler.lua '%s' '%s' --max-tasks 2"):format(
      h.luacrawl_bin, h.source_dir, state, h.url("/site/p/1999.html")))
    assert.equal(0, code, err)
    code, _, err = run(state, "")
    assert.equal(2, code)
    assert.matches("is a crawl of", err)
  end)
end)
