-- fixtures: --http
-- A hostile or broken Redis (issue 31): whatever answers on the port, a connection
-- ends with an error of kind protocol (or timeout), never an abort of the process or
-- gigabytes of memory; the CLI says so and exits 2 rather than retrying in silence.
-- The servers are tests/fixtures/fake_redis.py.
local lc = require "luacrawl"
local h = require "spec_helper"

local bin = h.luacrawl_bin

-- Peak resident memory of this process, in MB.
local function peak_rss_mb()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmHWM:%s+(%d+)")
    if kb then return tonumber(kb) / 1024 end
  end
end

-- What `tries` PINGs on one connection to a server of `mode` come to: the first
-- failure (nil, err), or the last reply.
local function ping(mode, tries)
  local server = h.fake_redis(mode)
  local res, err = lc.run(function()
    local r, err = lc.redis.connect(server.url, { timeout = 5 })
    if not r then return nil, err end
    local res
    for _ = 1, tries or 1 do
      res, err = r:call("PING")
      if not res then break end
    end
    r:close()
    return res, err
  end)
  server.stop()
  return res, err
end

describe("a hostile Redis", function()
  it("sending a reply no command asked for fails the connection with a protocol error", function()
    local res, err = ping("unsolicited", 3)
    assert.is_nil(res)
    assert.equal("protocol", err.kind)
    assert.matches("a reply no command asked for", err.message)
  end)

  it("answering with something that is not RESP fails with a protocol error", function()
    local res, err = ping("garbage")
    assert.is_nil(res)
    assert.equal("protocol", err.kind)
  end)

  it("announcing an array of 2^31-1 elements is refused at once, holding no memory for it", function()
    local before = peak_rss_mb()
    local res, err = ping("huge_array")
    assert.is_nil(res)
    assert.equal("protocol", err.kind)
    assert.matches("an array of 2147483647 elements", err.message)
    assert.is_true(peak_rss_mb() - before < 100, peak_rss_mb() - before)
  end)

  it("announcing a bulk string of 200 MB is refused before its bytes are held", function()
    local before = peak_rss_mb()
    local res, err = ping("huge_bulk")
    assert.is_true(res == nil, "a reply came")
    assert.equal("protocol", err.kind)
    assert.matches("a string longer than 67108864 bytes", err.message)
    assert.is_true(peak_rss_mb() - before < 100, peak_rss_mb() - before)
  end)
end)

describe("the CLI against a hostile Redis", function()
  -- luacrawl ARGS against a server of `mode`: exit status and stderr.
  local function run_against(mode, args)
    local server = h.fake_redis(mode)
    local code, _, err = h.sh(("timeout 60 %s %s"):format(bin, (args:gsub("URL", server.url))))
    server.stop()
    return code, err
  end

  -- The first +OK is taken as the script's answer (nothing tells it from one); the
  -- second, unasked, ends the connection (hiredis would abort the process).
  it("luacrawl state --redis exits 2, saying what came, when a server answers +OK twice to each command", function()
    local code, err = run_against("unsolicited", "state --redis URL --crawl-id c")
    assert.equal(2, code, err)
    assert.matches([[not a crawl's status: "OK"]], err)
  end)

  it("luacrawl crawl -q exits 2 saying why when Redis answers garbage at the start", function()
    local code, err = run_against("garbage", "crawl http://127.0.0.1:1/ -q -o /dev/null --redis URL --crawl-id c")
    assert.equal(2, code, err)
    assert.matches("protocol error", err)
  end)

  it("luacrawl crawl -q exits 2 saying why when Redis answers nothing at the start (after its 10 s timeout)", function()
    local code, err = run_against("hang", "crawl http://127.0.0.1:1/ -q -o /dev/null --redis URL --crawl-id c")
    assert.equal(2, code, err)
    assert.matches("no reply within 10 s", err)
  end)

  it("luacrawl crawl -q exits 2, saying what came, when a server answers +OK twice to each command", function()
    local code, err = run_against("unsolicited", "crawl http://127.0.0.1:1/ -q -o /dev/null --redis URL --crawl-id c")
    assert.equal(2, code, err)
    assert.matches([[not Redis running the crawl's script %(it answered "OK"%)]], err)
  end)
end)
