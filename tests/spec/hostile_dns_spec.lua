-- fixtures: --http --dns --dns-faults
-- Hostile DNS (issue 16, "Silent losses" and "Limits that must hold"): bursts of new
-- names all resolve, a lost query is asked again, a fetch's timeout covers its DNS
-- wait, every failure is named for what happened, and a crawl never counts a name
-- that did not resolve as a robots.txt denial. This process resolves through
-- dns_faults.py; the bursts run in a luacrawl process of their own on dnsmasq.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"

lc.configure({ dns_servers = h.dns_faults })

local function fetch(url, opts)
  return lc.run(function()
    local t0 = lc.now()
    local res, err = lc.fetch(url, opts)
    return res, err, lc.now() - t0
  end)
end

local function resolve(name)
  return lc.run(function() return lc.resolve(name) end)
end

local function fault_url(name, path)
  return ("http://%s.fault.test:%s%s"):format(name, h.fixture_port, path or "/status/200")
end

-- Run a Lua script with the luacrawl binary (`luacrawl --dns-server S run FILE`);
-- its exit status and stdout.
local function run_script(servers, source)
  local path = h.tmpname(".lua")
  local f = assert(io.open(path, "w"))
  f:write(source)
  f:close()
  local code, out, err = h.sh(("%s --dns-server %s run %s"):format(h.luacrawl_bin, servers, path))
  return code, out, err
end

describe("hostile DNS: bursts", function()
  it("1,200 new names at once all resolve, with at most the pacing limit of queries out", function()
    local code, out, err = run_script(h.dns_server, [[
      local lc = require "luacrawl"
      local failed, first = 0, nil
      local tasks = {}
      for i = 1, 1200 do
        tasks[i] = lc.spawn(function()
          local addrs, e = lc.resolve(("h%d.burst.crawl.test"):format(i))
          if not addrs or addrs[1] ~= "127.0.0.1" then
            failed = failed + 1
            first = first or tostring(e)
          end
        end)
      end
      for _, t in ipairs(tasks) do t:join() end
      local st = lc.stats()
      print(failed, st.dns_queries, st.dns_peak, first or "-")
    ]])
    assert.equal(0, code, err)
    local failed, queries, peak, first = out:match("^(%d+)%s+(%d+)%s+(%d+)%s+(.-)%s*$")
    assert.equal("0", failed, first)
    assert.equal("1200", queries)
    assert.is_true(tonumber(peak) <= 64, peak)
  end)

  it("the pacing limit is a setting: dns_concurrency", function()
    local code, out, err = run_script(h.dns_server, [[
      local lc = require "luacrawl"
      lc.configure({ dns_concurrency = 5 })
      local tasks = {}
      for i = 1, 100 do
        tasks[i] = lc.spawn(function() return assert(lc.resolve(("p%d.burst.crawl.test"):format(i))) end)
      end
      for _, t in ipairs(tasks) do t:join() end
      print(lc.stats().dns_peak)
    ]])
    assert.equal(0, code, err)
    assert.equal("5", out:match("%d+"))
    assert.has_error(function() lc.configure({ dns_concurrency = 0 }) end)
  end)
end)

describe("hostile DNS: lost queries", function()
  it("a timed-out query is sent again, afresh, before the name fails", function()
    -- c-ares asks once: the second query is ours.
    lc.configure({ dns_timeout = 1, dns_tries = 1 })
    local before = lc.stats().dns_retries
    local addrs, err = resolve("drop1-spec.fault.test")
    assert.is_table(addrs, tostring(err))
    assert.equal("127.0.0.2", addrs[1])
    assert.equal(before + 1, lc.stats().dns_retries)
    lc.configure({ dns_timeout = 1.5, dns_tries = 2 })
  end)

  it("without retries (dns_retries = 0) the same loss is a DNS failure", function()
    lc.configure({ dns_timeout = 1, dns_tries = 1, dns_retries = 0 })
    local _, err = resolve("drop1-noretry.fault.test")
    lc.configure({ dns_timeout = 1.5, dns_tries = 2, dns_retries = 1 })
    assert.equal("dns", err.kind)
    assert.matches("no DNS server answered in time", err.message)
  end)
end)

describe("hostile DNS: each failure named for what happened", function()
  local cases = {
    { "refused", "DNS server refused the query" },
    { "servfail", "SERVFAIL" },
    { "formerr", "FORMERR" },
    { "notimp", "NOTIMP" },
    { "garbage", "malformed reply" },
    { "nxdomain", "no such host" },
  }
  for _, c in ipairs(cases) do
    it(c[1] .. ": dns, " .. c[2], function()
      local _, err = fetch(fault_url(c[1]))
      assert.equal("dns", err.kind)
      assert.matches(c[2], err.message, 1, true)
      assert.not_matches("Could not contact DNS servers", err.message, 1, true)
    end)
  end
end)

describe("hostile DNS: a crawl", function()
  it("counts a host whose name does not resolve as DNS errors, never as robots denied", function()
    local told = {}
    local st = crawl.run({
      start = { fault_url("nxdomain", "/a"), fault_url("servfail", "/b"), h.url("/site/p/1.html") },
      span_hosts = true, max_depth = 0, quiet = true, progress = false, signals = false,
      on_error = function(req, err) told[#told + 1] = req.url .. " " .. err.kind end,
    })
    assert.equal(0, st.robots_denied)
    assert.equal(2, st.errors.dns)
    assert.equal(1, st.statuses[200])
    table.sort(told)
    assert.same({ fault_url("nxdomain", "/a") .. " dns", fault_url("servfail", "/b") .. " dns" }, told)
  end)
end)

describe("hostile DNS: a fetch's timeout covers its DNS wait", function()
  it("a silent DNS server ends the fetch at its timeout, as a DNS error that says timed out", function()
    -- The resolver alone would wait 30 s, twice (its retry). Last in this file: the
    -- lookup goes on after the fetch ended.
    lc.configure({ dns_timeout = 30, dns_tries = 1 })
    local _, err, secs = fetch(fault_url("timeout"), { timeout = 0.5 })
    lc.configure({ dns_timeout = 1.5, dns_tries = 2 })
    assert.equal("dns", err.kind)
    assert.matches("timed out", err.message)
    assert.is_true(secs < 15, secs)
  end)

  it("timeout 0, negative, NaN or infinite is refused by lc.fetch, crawl.run and the CLI", function()
    for _, t in ipairs({ 0, -1, 0 / 0, math.huge }) do
      assert.has_error(function() fetch(fault_url("ok"), { timeout = t }) end)
      assert.has_error(function()
        crawl.run({ start = { fault_url("ok") }, fetch = { timeout = t }, quiet = true, progress = false })
      end)
    end
    local ok, msg = pcall(fetch, fault_url("ok"), { timeout = 0 })
    assert.is_false(ok)
    assert.matches("more than 0 seconds", msg)
    for _, cmd in ipairs({ "fetch", "crawl" }) do
      local code, _, err = h.sh(("%s %s --timeout 0 %s"):format(h.luacrawl_bin, cmd, fault_url("ok")))
      assert.equal(2, code, cmd)
      assert.matches("more than 0", err)
    end
  end)
end)
