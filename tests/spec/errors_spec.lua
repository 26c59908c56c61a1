-- fixtures: --http
-- Errors handled the same way everywhere: numbers from scripts are checked before C
-- uses them (out of range, NaN and infinity raise, naming the option and its range),
-- and running out of memory is its own error kind, which the crawl does not retry.
local lc = require "luacrawl"
local h = require "spec_helper"
local core = require "luacrawl.core"

local nan, inf = 0 / 0, 1 / 0

-- The message of the error fn raises (fn runs in a task, as scripts do).
local function raised(fn)
  local ok, err = pcall(lc.run, fn)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

local function fetch_error(opts)
  return raised(function() return lc.fetch(h.url("/"), opts) end)
end

describe("lc.fetch's numeric options", function()
  it("refuses a negative size, naming the option and the range", function()
    local msg = fetch_error({ max_size = -1 })
    assert.matches("option 'max_size' must be an integer >= 0 %(got %-1%)", msg)
  end)

  it("refuses a budget of redirects too large for an int", function()
    assert.matches("option 'follow' must be an integer from 0 to 2147483647 %(got 1e%+300%)",
      fetch_error({ follow = 1e300 }))
  end)

  it("refuses NaN and infinity for every numeric option", function()
    for _, name in ipairs({ "timeout", "connect_timeout", "max_size", "max_header_size",
                            "follow", "max_url_length" }) do
      for _, v in ipairs({ nan, inf, -inf }) do
        local msg = fetch_error({ [name] = v })
        assert.matches("option '" .. name .. "' must be", msg, nil, true)
        assert.matches("%(got %-?[ni][an][nf]%)", msg)
      end
    end
  end)

  it("refuses a fractional size or count", function()
    assert.matches("option 'max_size' must be an integer", fetch_error({ max_size = 1.5 }))
    assert.matches("option 'follow' must be an integer", fetch_error({ follow = 0.5 }))
  end)

  it("refuses a negative timeout and one over a year", function()
    assert.matches("option 'timeout' must be a number from 0 to 31536000 %(got %-1%)",
      fetch_error({ timeout = -1 }))
    assert.matches("option 'connect_timeout' must be a number from 0 to 31536000",
      fetch_error({ connect_timeout = 1e12 }))
  end)

  it("still takes numbers in range, and numeric strings as Lua does", function()
    local res = assert(lc.run(function()
      return lc.fetch(h.url("/site/p/3.html"), { max_size = "1000000", follow = 2, timeout = 5.5 })
    end))
    assert.equal(200, res.status)
  end)
end)

describe("numbers elsewhere in the bindings", function()
  it("lc.seen refuses NaN, infinity and negative sizes, saying which", function()
    assert.matches("seen: the expected size must be an integer >= 0 %(got inf%)",
      tostring(select(2, pcall(lc.seen, inf))))
    assert.matches("%(got nan%)", tostring(select(2, pcall(lc.seen, nan))))
    assert.matches("must be an integer >= 0 %(got %-1%)", tostring(select(2, pcall(lc.seen, -1))))
    assert.is_truthy(lc.seen(10))
  end)

  it("lc.sleep refuses NaN and infinity, and sleeps 0 for a past deadline", function()
    assert.matches("sleep: seconds must be a finite number %(got nan%)",
      raised(function() lc.sleep(nan) end))
    assert.matches("sleep: seconds must be a finite number %(got inf%)",
      raised(function() lc.sleep(inf) end))
    lc.run(function() lc.sleep(-1) end)
  end)

  it("the limits refuse NaN, infinity and negative values", function()
    assert.matches("max_memory must be an integer >= 0",
      tostring(select(2, pcall(lc.configure, { max_memory = inf }))))
    assert.matches("max_memory must be an integer >= 0",
      tostring(select(2, pcall(lc.configure, { max_memory = -1 }))))
    assert.matches("max_task_cpu must be a number >= 0 %(got nan%)",
      tostring(select(2, pcall(lc.configure, { max_task_cpu = nan }))))
  end)

  it("the DNS settings refuse NaN and out-of-range values", function()
    assert.matches("configure: dns_timeout must be a number from 0.001 to 86400 %(got nan%)",
      tostring(select(2, pcall(lc.configure, { dns_timeout = nan }))))
    assert.matches("configure: dns_tries must be an integer from 1 to 1000 %(got 1e%+300%)",
      tostring(select(2, pcall(lc.configure, { dns_tries = 1e300 }))))
    assert.matches("configure: dns_ttl_max must be",
      tostring(select(2, pcall(lc.configure, { dns_ttl_max = inf }))))
  end)

  it("regex counts and offsets refuse NaN and infinity", function()
    local re = lc.regex("a")
    assert.matches("gsub: n must be an integer", tostring(select(2, pcall(re.gsub, re, "aaa", "b", nan))))
    assert.matches("split: n must be an integer", tostring(select(2, pcall(re.split, re, "aaa", inf))))
    assert.matches("regex: init must be an integer", tostring(select(2, pcall(re.find, re, "aaa", inf))))
    assert.equal("bba", (re:gsub("aaa", "b", 2)))
  end)

  it("core.check_number and core.check_integer give the Lua side the same rule", function()
    assert.equal(3, core.check_integer(3, "n", 0, 10))
    assert.equal(2.5, core.check_number(2.5, "x", 0))
    assert.matches("n must be an integer from 0 to 10 %(got 11%)",
      tostring(select(2, pcall(core.check_integer, 11, "n", 0, 10))))
    assert.matches("x must be a finite number %(got inf%)",
      tostring(select(2, pcall(core.check_number, inf, "x"))))
    assert.matches("x must be a number %(got string%)",
      tostring(select(2, pcall(core.check_number, "soon", "x"))))
  end)
end)

describe("option names", function()
  it("lc.configure refuses a misspelled name, with the nearest known one, ", function()
    local msg = tostring(select(2, pcall(lc.configure, { dns_tries = 3, dns_timout = 1 })))
    assert.matches("configure: unknown option 'dns_timout' %(did you mean 'dns_timeout'%?%)", msg)
  end)

  it("lc.store.open refuses a misspelled option before it opens anything", function()
    local path = h.tmpname(".db")
    local ok, err = pcall(lc.store.open, path, { max_byte = 1000 })
    assert.is_false(ok)
    assert.matches("store.open: unknown option 'max_byte' %(did you mean 'max_bytes'%?%)", tostring(err))
    assert.is_nil(io.open(path))
  end)

  it("lc.url.normalize refuses a misspelled option", function()
    local ok, err = pcall(lc.url.normalize, "http://a.example/?b=1&a=2", { sort_querry = true })
    assert.is_false(ok)
    assert.matches("normalize: unknown option 'sort_querry' %(did you mean 'sort_query'%?%)", tostring(err))
  end)

  it("a declaration made in Lua checks a table by the same rules", function()
    local decl = core.option_decl({ caller = "mine", label = "mine: %s", { "depth", "integer", 0, 9 } })
    assert.same({ depth = 3 }, core.check_options({ depth = 3 }, decl))
    assert.matches("mine: depth must be an integer from 0 to 9 %(got 10%)",
      tostring(select(2, pcall(core.check_options, { depth = 10 }, decl))))
    assert.matches("mine: unknown option 'dept' %(did you mean 'depth'%?%)",
      tostring(select(2, pcall(core.check_options, { dept = 1 }, decl))))
    assert.equal("depth", core.suggest("DEPHT", { "width", "depth" }))
    assert.is_nil(core.suggest("colour", { "depth" }))
  end)

  it("an option of the wrong type is refused by name and type", function()
    assert.matches("normalize: option 'strip' must be a table %(got string%)",
      tostring(select(2, pcall(lc.url.normalize, "http://a.example/", { strip = "utm_" }))))
    assert.matches("store.open: option 'cache_mb' must be an integer from 0 to 1048576 %(got 0.5%)",
      tostring(select(2, pcall(lc.store.open, h.tmpname(".db"), { cache_mb = 0.5 }))))
  end)

end)

describe("the memory error kind", function()
  it("is not retried by the crawl, and is counted under its own name", function()
    local crawl = require "luacrawl.crawl"
    local real_fetch, calls = lc.fetch, 0
    lc.fetch = function(url)
      calls = calls + 1
      return nil, lc.error("memory", "out of memory storing the response", { url = url })
    end
    local ok, stats = pcall(crawl.run, { start = { h.url("/site/") }, robots = false, quiet = true })
    lc.fetch = real_fetch
    assert.is_true(ok, tostring(stats))
    assert.equal(1, calls)
    assert.equal(0, stats.retries)
    assert.equal(1, stats.errors.memory)
  end)
end)

describe("lc.queue and lc.timeout", function()
  it("refuse a maxsize that is not a whole number >= 0", function()
    for _, bad in ipairs({ -1, 0 / 0, 1 / 0, 2.5 }) do
      local ok, err = pcall(lc.queue, bad)
      assert.is_false(ok)
      assert.matches("lc.queue: maxsize must be an integer >= 0", tostring(err), 1, true)
    end
    assert.equal(3, lc.queue(3).maxsize)
  end)
  it("refuse a timeout that is not a finite number >= 0", function()
    for _, bad in ipairs({ -1, 0 / 0, 1 / 0 }) do
      local ok, err = pcall(lc.timeout, bad, function() end)
      assert.is_false(ok)
      assert.matches("lc.timeout: seconds must be a number >= 0", tostring(err), 1, true)
    end
  end)
end)
