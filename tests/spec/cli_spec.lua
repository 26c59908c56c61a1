-- The luacrawl command: run, fetch, --version, --help and exit statuses.
local h = require "spec_helper"

local bin = h.luacrawl_bin

local function write_script(text)
  local path = h.tmpname(".lua")
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

local function luacrawl(args)
  return h.sh(bin .. " " .. args)
end

describe("luacrawl run", function()
  it("runs the script as the main task and passes its arguments in arg", function()
    local script = write_script([[
      local lc = require "luacrawl"
      lc.sleep(0.01)
      print(arg[0] ~= nil, arg[1], arg[2], select("#", ...))
    ]])
    local code, out = luacrawl("run " .. script .. " one two")
    assert.equal(0, code)
    assert.equal("true\tone\ttwo\t2\n", out)
    os.remove(script)
  end)

  it("exits 1 and prints the error with its traceback when the script fails", function()
    local script = write_script("local function f() error('script failure') end\nf()\n")
    local code, _, err = luacrawl("run " .. script)
    assert.equal(1, code)
    assert.matches("script failure", err)
    assert.matches("stack traceback", err)
    assert.matches(":1:", err)
    os.remove(script)
  end)

  it("exits 1 on a syntax error", function()
    local script = write_script("this is not lua")
    local code, _, err = luacrawl("run " .. script)
    assert.equal(1, code)
    assert.matches("expected", err)
    os.remove(script)
  end)

  it("prints errors of spawned tasks and goes on", function()
    local script = write_script([[
      local lc = require "luacrawl"
      lc.spawn(function() error("worker broke") end)
      lc.sleep(0.02)
      print("main went on")
    ]])
    local code, out, err = luacrawl("run " .. script)
    assert.equal(0, code)
    assert.equal("main went on\n", out)
    assert.matches("worker broke", err)
    assert.matches("stack traceback", err)
    os.remove(script)
  end)

  it("exits 2 without a script", function()
    assert.equal(2, (luacrawl("run")))
  end)
end)

-- A script's crawl, its spec's fields after the start URL (text), then `rest`.
local function crawl_script(start, fields, rest)
  return write_script(([[
    local crawl = require "luacrawl.crawl"
    crawl.run { start = %q, quiet = true, %s }
    %s
  ]]):format(start, fields, rest or ""))
end

describe("luacrawl run of a script whose crawl failed", function()
  it("exits 5 when parse failed on every page, saying why", function()
    local script = crawl_script(h.url("/site/"), 'max_depth = 0, parse = function() error("boom") end')
    local code, _, err = luacrawl("run " .. script)
    assert.equal(5, code, err)
    assert.matches("parse failed on every page", err)
  end)

  it("exits 5 when the start URL was invalid", function()
    local code, _, err = luacrawl("run " .. crawl_script("not a url", "max_depth = 0"))
    assert.equal(5, code, err)
    assert.matches("every start URL was refused", err)
  end)

  it("exits 130 when SIGINT stopped its crawl", function()
    local script = crawl_script(h.url("/slow?delay=5"), "max_depth = 0, robots = false")
    local code, _, err = h.sh(("bash -c '%s run %s & p=$!; sleep 1; kill -INT $p; wait $p'"):format(bin, script))
    assert.equal(130, code, err)
  end)

  it("exits with the number the script returns instead", function()
    local script = crawl_script(h.url("/site/"), 'max_depth = 0, parse = function() error("boom") end', "return 0")
    local code, _, err = luacrawl("run " .. script)
    assert.equal(0, code, err)
  end)
end)

-- The binary answers libcurl's readiness probes of kept-alive connections from its
-- event loop (cli/poll_shim.c): connections must still be reused while alive
-- and given up when the server closed them, however late that is noticed.
describe("kept-alive connections in the binary", function()
  -- Runs the fetches in the script's body, then prints each logged request's
  -- path and connection number, "path conn" a line.
  local function connections(body)
    local script = write_script([[
      local lc = require "luacrawl"
      local cjson = require "cjson"
      local base = arg[1]
      local function get(path)
        local res, err = lc.fetch(base .. path)
        assert(res, tostring(err))
        assert(res.status == 200, path .. ": " .. res.status)
        return res
      end
    ]] .. body .. [[
      for _, e in ipairs(cjson.decode(get("/__log").body).requests) do print(e.path, e.conn) end
    ]])
    local code, out, err = luacrawl("run " .. script .. " " .. h.url(""))
    assert.equal(0, code, err)
    local conn = {}
    for path, c in out:gmatch("(%S+)\t(%d+)\n") do conn[path] = tonumber(c) end
    return conn
  end

  it("reuses a live connection", function()
    local conn = connections([[ get("/status/200?live=1"); get("/status/200?live=2") ]])
    assert.is_number(conn["/status/200?live=1"])
    assert.equal(conn["/status/200?live=1"], conn["/status/200?live=2"])
  end)

  it("opens a new one when the server closed the idle connection", function()
    local conn = connections([[ get("/close-after?seconds=0.05&idle=1"); lc.sleep(0.3); get("/status/200?idle=2") ]])
    assert.is_number(conn["/close-after?seconds=0.05&idle=1"])
    assert.is_number(conn["/status/200?idle=2"])
    assert.are_not.equal(conn["/close-after?seconds=0.05&idle=1"], conn["/status/200?idle=2"])
  end)

  it("loses no request when the server closes each connection right after answering", function()
    local conn = connections([[ for i = 1, 40 do get("/close-after?race=" .. i) end ]])
    local seen = {}
    for i = 1, 40 do
      local c = conn["/close-after?race=" .. i]
      assert.is_number(c)
      assert.is_nil(seen[c]) -- each on a connection of its own
      seen[c] = true
    end
  end)
end)

-- The binary's timings, timeouts and lc.now() tell real time, also for a body curl
-- may read in one call.
describe("the clock in the binary", function()
  it("times a slow answer, a long body and a timeout truly", function()
    local script = write_script([[
      local lc = require "luacrawl"
      local base = arg[1]
      local t0 = lc.now()
      local res = assert(lc.fetch(base .. "/slow?delay=0.3"))
      local t = res.time
      print("slow", lc.now() - t0, t.ttfb, t.total)
      assert(t.dns <= t.connect and t.connect <= t.ttfb and t.ttfb <= t.total)
      t0 = lc.now()
      res = assert(lc.fetch(base .. "/large?bytes=30000000", { max_size = 40000000 }))
      print("large", res.size, res.time.ttfb, res.time.total, lc.now() - t0)
      t0 = lc.now()
      local _, err = lc.fetch(base .. "/slow?delay=5", { timeout = 0.4 })
      print("timeout", err and err.kind, lc.now() - t0)
    ]])
    local code, out, err = luacrawl("run " .. script .. " " .. h.url(""))
    assert.equal(0, code, err)
    local wall, ttfb, total = out:match("slow\t(%S+)\t(%S+)\t(%S+)\n")
    assert.is_true(tonumber(ttfb) >= 0.29, out)
    assert.is_true(tonumber(total) >= tonumber(ttfb), out)
    assert.is_true(tonumber(wall) >= tonumber(total) - 0.01, out)
    -- curl may read such a body in one call: its time must count all the same.
    local size, lttfb, ltotal, lwall = out:match("large\t(%S+)\t(%S+)\t(%S+)\t(%S+)\n")
    assert.equal(30000000, tonumber(size))
    assert.is_true(tonumber(ltotal) > tonumber(lttfb), out)
    assert.is_true(tonumber(ltotal) >= 0.5 * tonumber(lwall), out)
    local kind, waited = out:match("timeout\t(%S+)\t(%S+)\n")
    assert.equal("timeout", kind)
    assert.is_true(tonumber(waited) >= 0.39 and tonumber(waited) < 3, out)
  end)
end)

describe("luacrawl fetch", function()
  it("writes the body to stdout and status and headers to stderr", function()
    local code, out, err = luacrawl("fetch " .. h.url("/site/p/2.html"))
    assert.equal(0, code)
    assert.matches("<title>Page 2</title>", out)
    assert.matches("^HTTP/1.1 200", err)
    assert.matches("content%-type: text/html", err)
  end)

  it("-I prints only status and headers", function()
    local code, out, err = luacrawl("fetch -I " .. h.url("/site/p/2.html"))
    assert.equal(0, code)
    assert.equal("", out)
    assert.matches("HTTP/1.1 200", err)
  end)

  it("-H and -A set request headers", function()
    local code, out = luacrawl("fetch -H 'X-Test: yes' -A 'cli-agent/2' " .. h.url("/echo"))
    assert.equal(0, code)
    assert.matches('"x%-test": "yes"', out)
    assert.matches('"user%-agent": "cli%-agent/2"', out)
  end)

  it("--dns-server resolves names only the test server knows", function()
    local code, _, err = luacrawl("fetch -I --dns-server " .. h.dns_server .. " " .. h.url("/status/200", "a.crawl.test"))
    assert.equal(0, code)
    assert.matches("HTTP/1.1 200", err)
  end)

  it("LUACRAWL_DNS_SERVERS works as well", function()
    local code = h.sh("LUACRAWL_DNS_SERVERS=" .. h.dns_server .. " " .. bin .. " fetch -I " .. h.url("/status/200", "b.crawl.test"))
    assert.equal(0, code)
  end)

  it("goes through the proxy the environment names, as curl does", function()
    local target = "http://proxied.invalid/echo"
    local code, out = h.sh("http_proxy=" .. h.url("") .. " " .. bin .. " fetch " .. target)
    assert.equal(0, code)
    assert.matches('"proxied": "' .. target:gsub("%p", "%%%0") .. '"', out)
    -- no_proxy exempts the host: it is then looked up, and does not exist.
    code = h.sh("http_proxy=" .. h.url("") .. " no_proxy=proxied.invalid " .. bin .. " fetch -I "
      .. "--dns-server " .. h.dns_server .. " " .. target)
    assert.equal(3, code)
  end)

  it("--timeout limits the fetch and exits 3", function()
    local code, _, err = luacrawl("fetch --timeout 0.3 " .. h.url("/slow?delay=3"))
    assert.equal(3, code)
    assert.matches("timeout", err)
  end)

  it("exits 3 when the fetch fails", function()
    local code, _, err = luacrawl("fetch --dns-server " .. h.dns_server .. " http://nope.crawl.test/")
    assert.equal(3, code)
    assert.matches("dns", err)
    code, _, err = luacrawl("fetch ftp://127.0.0.1/")
    assert.equal(3, code)
    assert.matches("invalid_url", err)
  end)

  it("exits 2 on usage errors", function()
    assert.equal(2, (luacrawl("fetch")))
    assert.equal(2, (luacrawl("fetch --bogus http://x/")))
    assert.equal(2, (luacrawl("nosuchcommand")))
    assert.equal(2, (luacrawl("--dns-server")))
  end)
end)

describe("luacrawl --version and --help", function()
  it("--version names luacrawl, LuaJIT, libcurl and c-ares", function()
    local code, out, err = luacrawl("--version")
    assert.equal(0, code)
    -- Nothing on stderr: main.c warns there if the binary's malloc is not mimalloc's.
    assert.equal("", err)
    assert.matches("luacrawl %d+%.%d+", out)
    assert.matches("LuaJIT 2%.1", out)
    assert.matches("libcurl %d", out)
    assert.matches("c%-ares %d", out)
  end)

  it("--help lists the commands", function()
    local code, out = luacrawl("--help")
    assert.equal(0, code)
    assert.matches("run SCRIPT", out)
    assert.matches("fetch", out)
  end)

  it("one list of exit statuses in luacrawl --help, crawl --help, the README and docs/crawl.md", function()
    -- The list from "Exit status:" to the end of its sentence on SIGTERM, its line
    -- breaks and Markdown's backquotes aside.
    local function list(text)
      local l = text:match("Exit status:.-SIGINT/SIGTERM%.[^.]*%.")
      assert(l, "no list of exit statuses in: " .. text:sub(1, 200))
      return (l:gsub("`", ""):gsub("%s+", " "))
    end
    local _, main_help = luacrawl("--help")
    local _, crawl_help = luacrawl("crawl --help")
    local want = list(main_help)
    for _, code in ipairs({ "0", "1", "2", "3", "4", "5", "130/143" }) do
      assert.matches("[:;] " .. code .. " ", want)
    end
    assert.equal(want, list(crawl_help))
    assert.equal(want, list(h.read_file(h.source_dir .. "/README.md")))
    assert.equal(want, list(h.read_file(h.source_dir .. "/docs/crawl.md")))
  end)
end)

describe("luacrawl fetch --css and --xpath", function()
  it("prints each CSS match on its own line", function()
    local code, out = luacrawl("fetch --css '.item .price::text' '" .. h.url("/items?page=1") .. "'")
    assert.equal(0, code)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal(10, #lines)
    assert.equal("1.99", lines[1])
  end)

  it("prints XPath matches, elements as HTML", function()
    local code, out = luacrawl("fetch --xpath '//a[@class=\"next\"]' '" .. h.url("/items?page=1") .. "'")
    assert.equal(0, code)
    assert.equal('<a class="next" href="/items?page=2">Next</a>\n', out)
  end)
end)

