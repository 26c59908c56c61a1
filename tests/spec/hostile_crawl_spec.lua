-- fixtures: --http
-- Hostile input that used to hang a crawl or slip through as a number (issue 16,
-- "A crawl that never ends", "NaN and infinity pass as numbers", "Right messages"):
-- every error on a request's path ends that request, counted and reported, and the
-- crawl finishes; numbers that are not finite, or out of range, are refused where
-- they enter, naming the option. Crawls that used to hang run in a luacrawl process
-- of their own (with progress on, a task that would keep a stuck run alive) under
-- `timeout`: a generous bound, the failure condition, never a measure.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"

local BOUND = 120 -- seconds: far beyond any of these crawls, which take well under one

-- Run a Lua script with the luacrawl binary under the bound: exit status, stdout,
-- stderr. Status 124 means the bound ran out: the crawl did not end.
local function run_script(source, ...)
  local path = h.tmpname(".lua")
  local f = assert(io.open(path, "w"))
  f:write(source)
  f:close()
  return h.sh(("timeout %d %s run %s %s"):format(BOUND, h.luacrawl_bin, path, table.concat({ ... }, " ")))
end

-- A crawl script: `setup` (Lua source) runs first and makes `spec` fields; the
-- crawl's stats come back on stdout as JSON.
local function crawl_script(setup)
  return ([[
    local lc = require "luacrawl"
    local crawl = require "luacrawl.crawl"
    local json = lc.json
    local spec = { start = { %q }, progress = true, progress_interval = 0.2, robots = false }
    %s
    local st = crawl.run(spec)
    io.stdout:write(json.encode({ parse_errors = st.parse_errors, errors_total = st.errors_total,
      errors = st.errors, output_errors = st.output_errors, pages = st.pages, retries = st.retries,
      stop_reason = st.stop_reason }), "\n")
    return 0 -- the crawl's status (5 when parse failed on every page) is not what these specs check
  ]]):format(h.url("/site/"), setup)
end

local function stats_of(code, out, err)
  assert.are_not.equal(124, code, "the crawl did not end:\n" .. err)
  assert.equal(0, code, err)
  local line = out:match("([^\n]+)\n?$")
  assert.is_string(line, err)
  return require("cjson").decode(line)
end

describe("hostile crawl: every error on a request's path ends it", function()
  it("an error whose message cannot be made (its __tostring raises) in parse", function()
    local st = stats_of(run_script(crawl_script([[
      spec.parse = function() error(setmetatable({}, { __tostring = function() error("no message") end })) end
    ]])))
    assert.equal(1, st.parse_errors)
  end)

  it("an on_error hook that raises while a parse error is reported", function()
    local code, out, err = run_script(crawl_script([[
      spec.parse = function() error("parse failed") end
      spec.on_error = function() error("on_error failed") end
    ]]))
    local st = stats_of(code, out, err)
    assert.equal(2, st.parse_errors) -- the parse error, and the hook's
    assert.matches("on_error failed", err, 1, true)
  end)

  it("a robots.txt whose parsing raises: the requests that waited end as errors", function()
    local code, out, err = run_script(crawl_script([[
      spec.robots = true
      require("luacrawl.robots").parse = function() error("hostile robots.txt") end
    ]]))
    local st = stats_of(code, out, err)
    assert.equal(0, st.pages)
    assert.equal(1, st.errors.script)
    assert.matches("robots.txt of http://127.0.0.1:%d+: .*hostile robots.txt", err)
  end)

  it("a robots.txt request that cannot be built (lc.fetch raises for it)", function()
    local code, out, err = run_script(crawl_script([[
      spec.robots = true
      local fetch = lc.fetch
      lc.fetch = function(url, opts)
        if url:find("/robots.txt", 1, true) then error("request refused") end
        return fetch(url, opts)
      end
    ]]))
    local st = stats_of(code, out, err)
    assert.equal(1, st.errors.script)
    assert.matches("request refused", err, 1, true)
  end)

  it("an output that raises: counted as an output error, the crawl goes on", function()
    local code, out, err = run_script(crawl_script([[
      spec.max_pages = 3
      spec.parse = function(page) page:emit({ url = page.url }) page:follow_links() end
      spec.output = function() error("output failed") end
    ]]))
    local st = stats_of(code, out, err)
    assert.equal(3, st.pages)
    assert.equal(3, st.output_errors)
    assert.equal(0, st.parse_errors)
    assert.matches("output failed", err, 1, true)
  end)

  it("a page body larger than max_memory turned into strings in parse", function()
    local code, out, err = run_script(([[
      local lc = require "luacrawl"
      local crawl = require "luacrawl.crawl"
      lc.configure({ max_memory = 64 * 1024 * 1024 })
      local st = crawl.run({ start = { %q }, robots = false, progress = true, fetch = { max_size = 1e8 },
        parse = function(page) local t = {} for i = 1, 100 do t[i] = page.body .. i end end })
      print(st.parse_errors, st.pages)
    ]]):format(h.url("/large?bytes=20000000")))
    assert.are_not.equal(124, code, "the crawl did not end:\n" .. err)
    assert.equal(5, code, err) -- parse failed on its one page
    assert.equal("1\t1", out:match("[^\n]+"))
    assert.matches("not enough memory", err, 1, true)
  end)

  it("a Retry-After of 'nan' is no number of seconds: the retry waits its backoff", function()
    local code, out, err = run_script(crawl_script([[
      spec.start = { ]] .. ("%q"):format(h.url("/flaky/hostile-nan?fail=1&status=503&retry_after=nan")) .. [[ }
      spec.max_delay = 0.05
    ]]))
    local st = stats_of(code, out, err)
    assert.equal(1, st.retries)
    assert.equal(1, st.pages) -- the 503 was retried, not handed to parse
  end)

  it("an on_request hook that raises on a start URL: crawl.run raises, the run ends", function()
    local code, out, err = run_script(([[
      local crawl = require "luacrawl.crawl"
      local ok, e = pcall(crawl.run, { start = { %q }, progress = true, progress_interval = 0.2,
        on_request = function() error("hook failed") end })
      print(ok, e)
    ]]):format(h.url("/site/")))
    assert.are_not.equal(124, code, "the run did not end:\n" .. err)
    assert.equal(0, code, err)
    assert.matches("^false\t.*hook failed", out)
  end)
end)

describe("hostile crawl: requests that can never be built are refused up front", function()
  it("crawl -A with CR or LF is a usage error", function()
    local code, _, err = h.sh(("timeout %d %s crawl -A \"$(printf 'a\\nb')\" %s"):format(BOUND, h.luacrawl_bin, h.url("/site/")))
    assert.equal(2, code, err)
    assert.matches("^luacrawl: %-A: header 'User%-Agent' refused: .*CR or LF", err)
  end)

  it("fetch -H with CR or LF is a usage error", function()
    local code, _, err = h.sh(("timeout %d %s fetch -H \"$(printf 'X-A: b\\nc')\" %s"):format(BOUND, h.luacrawl_bin, h.url("/status/200")))
    assert.equal(2, code, err)
    assert.matches("header 'X%-A' refused", err)
  end)

  it("crawl.run raises before the crawl starts for a user_agent or header with CR or LF", function()
    for _, spec in ipairs({
      { start = { h.url("/site/") }, user_agent = "a\nb" },
      { start = { h.url("/site/") }, fetch = { headers = { ["X-A"] = "b\r\nc" } } },
      { start = { h.url("/site/") }, fetch = { user_agent = "a\rb" } },
    }) do
      local ok, err = pcall(crawl.new, spec)
      assert.is_false(ok)
      assert.matches("crawl.run: fetch: header '[%w-]+' refused: names and values must not contain CR or LF", err)
    end
  end)
end)

describe("hostile crawl: numbers", function()
  local function crawl_cli(args)
    return h.sh(("timeout %d %s crawl -q %s %s"):format(BOUND, h.luacrawl_bin, args, h.url("/site/")))
  end

  -- The first line of the error output, which names the option (the usage follows).
  local function first_line(err)
    return err:match("^[^\n]*")
  end

  for _, case in ipairs({
    { "-c nan", "-c must be an integer >= 1 (got nan)" },
    { "--per-host nan", "--per-host must be an integer >= 1 (got nan)" },
    { "-d nan", "-d must be an integer >= 0 (got nan)" },
    { "-n nan", "-n must be an integer >= 0 (got nan)" },
    { "--delay inf", "--delay must be a number from 0 to 31536000 (got inf)" },
    { "--delay -1", "--delay must be a number from 0 to 31536000 (got -1)" },
    { "--max-time nan", "--max-time must be a number from 0 to 31536000 (got nan)" },
    { "--timeout nan", "--timeout must be a number from 0 to 31536000 (got nan)" },
    { "--max-size 1e400", "--max-size must be an integer >= 0 (got inf)" },
    { "--max-memory nan", "--max-memory must be an integer >= 0 (got nan)" },
    { "-c 2.5", "-c must be an integer >= 1 (got 2.5)" },
    { "-c many", "-c needs a number (got 'many')" },
  }) do
    it("crawl " .. case[1] .. " is a usage error naming the option", function()
      local code, out, err = crawl_cli(case[1])
      assert.equal(2, code, err)
      assert.equal("", out)
      assert.equal("luacrawl: " .. case[2] .. " (see luacrawl crawl --help)", first_line(err))
    end)
  end

  it("fetch --max-size nan and --timeout inf are usage errors naming the option", function()
    for flag, want in pairs({ ["--max-size nan"] = "--max-size must be an integer >= 0 (got nan)",
      ["--timeout inf"] = "--timeout must be a number from 0 to 31536000 (got inf)" }) do
      local code, _, err = h.sh(("%s fetch %s %s"):format(h.luacrawl_bin, flag, h.url("/status/200")))
      assert.equal(2, code, err)
      assert.equal("luacrawl: " .. want, first_line(err))
    end
  end)

  it("crawl.run refuses NaN, infinities and numbers out of range in the spec and nested tables", function()
    local nan, inf = 0 / 0, math.huge
    for _, case in ipairs({
      { { concurrency = nan }, "concurrency must be an integer >= 1 %(got nan%)" },
      { { per_host = 0 }, "per_host must be an integer >= 1 %(got 0%)" },
      { { delay = inf }, "delay must be a number from 0 to 31536000 %(got inf%)" },
      { { max_depth = nan }, "max_depth must be an integer >= 0 %(got nan%)" },
      { { max_pages = nan }, "max_pages must be an integer >= 0" },
      { { max_time = -1 }, "max_time must be a number from 0 to 31536000" },
      { { retries = 1.5 }, "retries must be an integer >= 0" },
      { { max_retry_after = inf }, "max_retry_after must be a number from 0 to 31536000" },
      { { throttle = { target = nan } }, "throttle.target must be a number from 0.001 to 1000000" },
      { { throttle = { max_delay = inf } }, "throttle.max_delay must be a number" },
      { { retry_statuses = { 503, nan } }, "retry_statuses%[2%] must be an integer from 100 to 999" },
      { { fetch = { max_size = nan } }, "option 'max_size' must be an integer" },
      { { fetch = { timeout = nan } }, "fetch: option 'timeout' must be a number from 0 to 31536000 %(got nan%)" },
    }) do
      local spec = case[1]
      spec.start = { h.url("/site/") }
      local ok, err = pcall(crawl.new, spec)
      assert.is_false(ok, case[2])
      assert.matches("crawl.run: .*" .. case[2], err)
    end
  end)

  it("a hook's crawler:set_delay(key, nan) or :backoff(key, inf) raises in the hook", function()
    local errs = {}
    local st = crawl.run({
      start = { h.url("/site/") }, quiet = true, max_pages = 1,
      on_response = function(page)
        errs[1] = select(2, pcall(page.crawler.set_delay, page.crawler, page.key, 0 / 0))
        errs[2] = select(2, pcall(page.crawler.backoff, page.crawler, page.key, math.huge))
      end,
    })
    assert.equal(1, st.pages)
    assert.matches("crawler:set_delay: seconds must be a number from 0 to 31536000 %(got nan%)", errs[1])
    assert.matches("crawler:backoff: seconds must be a number from 0 to 31536000 %(got inf%)", errs[2])
  end)
end)

describe("hostile crawl: right messages", function()
  it("crawl ftp://x/ is a usage error naming the scheme", function()
    local code, out, err = h.sh(h.luacrawl_bin .. " crawl ftp://x/")
    assert.equal(2, code)
    assert.equal("", out)
    assert.matches("^luacrawl: not an http or https URL: ftp://x/ %(scheme 'ftp'%)\n", err)
  end)

  it("--dns-server errors show no position in luacrawl's own files", function()
    for _, cmd in ipairs({
      h.luacrawl_bin .. " --dns-server zz fetch " .. h.url("/status/200"),
      h.luacrawl_bin .. " crawl --dns-server zz " .. h.url("/site/"),
      h.luacrawl_bin .. " fetch --deny-network nowhere " .. h.url("/status/200"),
    }) do
      local code, _, err = h.sh(cmd)
      assert.equal(2, code, err)
      assert.is_nil(err:find("%.lua:%d+:"), err)
    end
  end)

  it("lc.configure's errors name the caller's line, not luacrawl's", function()
    local ok, err = pcall(function() lc.configure({ dns_timeout = 0 / 0 }) end)
    assert.is_false(ok)
    assert.is_nil(err:find("luacrawl/init.lua", 1, true), err)
    assert.matches("dns_timeout must be a number from 0.001 to 86400 %(got nan%)", err)
  end)

  it("lc.seen(1/0) says its expected count must be finite", function()
    local ok, err = pcall(lc.seen, 1 / 0)
    assert.is_false(ok)
    assert.matches("got inf", err, 1, true)
    assert.is_nil(err:find("negative", 1, true), err)
  end)
end)
