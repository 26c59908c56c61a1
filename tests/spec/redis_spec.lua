-- fixtures: --redis --dns
-- lc.redis: a Redis client on the engine's loop, against the redis-server run.py
-- starts (LC_REDIS_URL) and servers of the spec's own (helper.redis_server) for
-- being killed and for passwords.
local lc = require "luacrawl"
local h = require "spec_helper"

lc.configure({ dns_servers = h.dns_server })

-- Run fn(r) in a task with a fresh connection to the fixture's server.
local function with_redis(fn, url, opts)
  return lc.run(function()
    local r = assert(lc.redis.connect(url or h.redis_url, opts))
    local out = { fn(r) }
    r:close()
    return unpack(out)
  end)
end

-- A key of this test alone.
local key_count = 0
local function key(name)
  key_count = key_count + 1
  return ("spec:%d:%s"):format(key_count, name or "k")
end

describe("lc.redis.connect", function()
  it("parses URLs: host, port, db, password and user", function()
    local u = assert(lc.redis.parse_url("redis://:s%40cret@example.org:7000/3"))
    assert.same({ host = "example.org", port = 7000, db = 3, password = "s@cret" }, u)
    u = assert(lc.redis.parse_url("redis://worker:pw@10.0.0.1"))
    assert.same({ host = "10.0.0.1", port = 6379, db = 0, user = "worker", password = "pw" }, u)
    assert.same({ host = "h", port = 6379, db = 0 }, lc.redis.parse_url("redis://h/"))
    assert.is_nil(lc.redis.parse_url("rediss://h/"))
    assert.is_nil(lc.redis.parse_url("http://h/"))
    assert.is_nil(lc.redis.parse_url("redis://h/x"))
    assert.is_nil(lc.redis.parse_url("redis://h:70000/"))
    assert.is_nil(lc.redis.parse_url("redis://[::1]:6379/"))
  end)

  it("raises on a URL that does not parse (a bad call), naming it without its password", function()
    local ok, err = pcall(lc.run, function() return lc.redis.connect("redis://:secret@h/notadb") end)
    assert.is_false(ok)
    assert.matches("database number", err)
    assert.not_matches("secret", err)
  end)

  it("resolves a name with the engine's resolver", function()
    local url = ("redis://site.crawl.test:%d/0"):format(h.redis_port)
    assert.equal("PONG", with_redis(function(r) return r:call("PING") end, url))
  end)

  it("gives a dns error for a name that does not resolve", function()
    local r, err = lc.run(function() return lc.redis.connect("redis://missing.crawl.test:6379/0") end)
    assert.is_nil(r)
    assert.equal("dns", err.kind)
  end)

  it("gives a connect error when the connection is refused", function()
    local port = h.free_port()
    local r, err = lc.run(function() return lc.redis.connect(("redis://127.0.0.1:%d/0"):format(port)) end)
    assert.is_nil(r)
    assert.equal("connect", err.kind)
    assert.matches("refused", err.message)
    assert.matches("127.0.0.1:" .. port, err.message)
  end)

  it("selects the database of the URL", function()
    local k = key()
    local base = h.redis_url:gsub("/0$", "")
    with_redis(function(r) assert.equal("OK", r:call("SET", k, "in 5")) end, base .. "/5")
    assert.is_nil(with_redis(function(r) return r:call("GET", k) end))
    assert.equal("in 5", with_redis(function(r) return r:call("GET", k) end, base .. "/5"))
    with_redis(function(r) r:call("DEL", k) end, base .. "/5")
  end)

  it("gives a redis error for a database that does not exist", function()
    local r, err = lc.run(function() return lc.redis.connect((h.redis_url:gsub("/0$", "/99"))) end)
    assert.is_nil(r)
    assert.equal("redis", err.kind)
    assert.matches("DB index is out of range", err.message)
  end)
end)

describe("r:call", function()
  it("sets and gets", function()
    local k = key()
    assert.same({ "OK", "v" }, { with_redis(function(r)
      local a = r:call("SET", k, "v")
      local b = r:call("GET", k)
      r:call("DEL", k)
      return a, b
    end) })
  end)

  it("is binary safe: NUL bytes, CR LF and every byte value in keys and values", function()
    local all = {}
    for i = 0, 255 do all[#all + 1] = string.char(i) end
    local value = table.concat(all) .. "\0\r\n\0"
    local k = key("\0bin\r\n")
    local got = with_redis(function(r)
      assert.equal("OK", r:call("SET", k, value))
      local v = r:call("GET", k)
      r:call("DEL", k)
      return v
    end)
    assert.equal(value, got)
  end)

  it("converts integers, nil, arrays (nested, with false for nil) and status replies", function()
    local k, l = key(), key("list")
    with_redis(function(r)
      assert.equal(1, r:call("INCR", k))
      assert.equal(41, r:call("INCRBY", k, 40))
      assert.equal(1e15 + 41, r:call("INCRBY", k, 1e15)) -- written whole, not as 1e+15
      assert.is_nil(r:call("GET", key("missing")))
      assert.same({ "1000000000000041", false }, r:call("MGET", k, key("missing")))
      assert.equal(3, r:call("RPUSH", l, "a", "b", 3))
      assert.same({ "a", "b", "3" }, r:call("LRANGE", l, 0, -1))
      assert.same({}, r:call("LRANGE", key("none"), 0, -1))
      assert.same({ 1, { "x", { 2 } } }, r:call("EVAL", "return {1, {'x', {2}}}", 0))
      assert.equal("PONG", r:call("PING"))
      r:call("DEL", k, l)
    end)
  end)

  it("returns nil and a redis error for an error reply, and the connection goes on", function()
    local k = key()
    with_redis(function(r)
      local v, err = r:call("NOSUCHCOMMAND", "x")
      assert.is_nil(v)
      assert.equal("redis", err.kind)
      assert.equal("ERR", err.code)
      assert.matches("unknown command", err.message)
      assert.is_true(lc.is_error(err))
      r:call("SET", k, "text")
      v, err = r:call("LPUSH", k, "x")
      assert.is_nil(v)
      assert.equal("WRONGTYPE", err.code)
      assert.equal("PONG", r:call("PING"))
      r:call("DEL", k)
    end)
  end)

  it("raises for arguments that are not strings or numbers, and for pub/sub commands", function()
    with_redis(function(r)
      assert.has_error(function() r:call("SET", "k", nil) end)
      assert.has_error(function() r:call("SET", "k", {}) end)
      assert.has_error(function() r:call("SET", "k", 0 / 0) end)
      assert.has_error(function() r:call() end)
      assert.has_error(function() r:call("SUBSCRIBE", "ch") end)
      assert.has_error(function() r:call("monitor") end)
      assert.equal("PONG", r:call("PING")) -- nothing was sent
    end)
  end)

  it("serves many tasks calling at once on one connection, each its own replies", function()
    local k = key("counter")
    local results = with_redis(function(r)
      local tasks, own = {}, {}
      for i = 1, 200 do
        tasks[i] = lc.spawn(function()
          local mine = key("t" .. i)
          for j = 1, 10 do
            assert(r:call("INCR", k))
            assert.equal("OK", r:call("SET", mine, i * 100 + j))
            assert.equal(tostring(i * 100 + j), r:call("GET", mine))
          end
          own[i] = r:call("DEL", mine)
        end)
      end
      for i = 1, 200 do tasks[i]:join() end
      local total = r:call("GET", k)
      r:call("DEL", k)
      return { total = total, own = own }
    end)
    assert.equal("2000", results.total)
    for i = 1, 200 do assert.equal(1, results.own[i]) end
  end)

  it("raises a cancelled error in a task cancelled while waiting, and later calls pair right", function()
    local k = key()
    local kind, after, blpop_late = with_redis(function(r)
      local got
      local t = lc.spawn(function()
        local ok, err = pcall(function() return r:call("BLPOP", k, 0.3) end)
        got = not ok and err.kind
      end)
      lc.sleep(0.05)
      t:cancel()
      lc.sleep(0) -- the task sees its cancel
      -- BLPOP's reply (nil, after 0.3 s) comes first and is dropped: PING gets PONG.
      local pong = r:call("PING")
      return got, pong, r:call("RPUSH", k, "x")
    end)
    assert.equal("cancelled", kind)
    assert.equal("PONG", after)
    assert.equal(1, blpop_late) -- the cancelled BLPOP took nothing
    with_redis(function(r) r:call("DEL", k) end)
  end)

  it("fails a command that gets no reply within the timeout, and the connection with it", function()
    local k = key()
    local err, later = with_redis(function(r)
      local start = lc.now()
      local v, e = r:call("BLPOP", k, 2)
      assert.is_nil(v)
      assert.is_true(lc.now() - start < 1.5)
      local _, e2 = r:call("PING")
      return e, e2
    end, nil, { timeout = 0.2 })
    assert.equal("timeout", err.kind)
    assert.matches("no reply within 0.2 s", err.message)
    assert.equal("timeout", later.kind) -- the connection failed: every later call says why
  end)

  it("raises when the connection was closed with r:close()", function()
    lc.run(function()
      local r = assert(lc.redis.connect(h.redis_url))
      r:close()
      assert.has_error(function() r:call("PING") end, "redis: the connection is closed")
      assert.equal("closed", r:status())
    end)
  end)

  it("ends the calls of other tasks with an error when one closes the connection", function()
    local kind = lc.run(function()
      local r = assert(lc.redis.connect(h.redis_url))
      local t = lc.spawn(function()
        local v, err = r:call("BLPOP", key(), 5)
        return v, err
      end)
      lc.sleep(0.05)
      r:close()
      local _, v, err = pcall(t.join, t)
      assert.is_nil(v)
      return err.kind, err.message
    end)
    assert.equal("connect", kind)
  end)
end)

describe("r:pipeline", function()
  it("sends 1000 commands at once and returns the replies in order", function()
    local k = key()
    local res = with_redis(function(r)
      local cmds = {}
      for i = 1, 1000 do cmds[i] = { "INCR", k } end
      local out = assert(r:pipeline(cmds))
      r:call("DEL", k)
      return out
    end)
    assert.equal(1000, res.n)
    for i = 1, 1000 do assert.equal(i, res[i]) end
  end)

  it("puts error replies and nils in their places", function()
    local k = key()
    local res = with_redis(function(r)
      local out = assert(r:pipeline({ { "SET", k, "v" }, { "NOSUCH" }, { "GET", key("missing") }, { "GET", k },
        { "DEL", k } }))
      return out
    end)
    assert.equal(5, res.n)
    assert.equal("OK", res[1])
    assert.is_true(lc.is_error(res[2]))
    assert.equal("redis", res[2].kind)
    assert.is_false(res[3])
    assert.equal("v", res[4])
    assert.equal(1, res[5])
  end)

  it("uses a single write for the whole pipeline", function()
    -- The server counts reads from clients' sockets: a pipeline of 200 small commands
    -- written at once arrives in a read or two, not 200.
    local reads = with_redis(function(r)
      local function reads_so_far()
        local info = r:call("INFO", "stats")
        return tonumber(info:match("total_reads_processed:(%d+)"))
      end
      local before = reads_so_far()
      local cmds = {}
      for i = 1, 200 do cmds[i] = { "PING" } end
      assert(r:pipeline(cmds))
      return reads_so_far() - before
    end)
    assert.is_true(reads <= 4, "reads: " .. tostring(reads))
  end)

  it("returns an empty list for no commands, and raises for a bad entry before sending any", function()
    with_redis(function(r)
      assert.same({ n = 0 }, r:pipeline({}))
      local k = key()
      assert.has_error(function() r:pipeline({ { "SET", k, "1" }, "GET" }) end)
      assert.has_error(function() r:pipeline({ { "SET", k, "1" }, { "SET", k, nil, n = 3 } }) end)
      assert.is_nil(r:call("GET", k)) -- the first command was not sent either
    end)
  end)
end)

describe("r:script", function()
  it("runs by EVALSHA, and after SCRIPT FLUSH falls back to EVAL", function()
    local k = key()
    local res = with_redis(function(r)
      local s = r:script("redis.call('SET', KEYS[1], ARGV[1]); return {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1])}")
      assert.equal(40, #s.sha)
      assert.equal(s.sha, r:call("SCRIPT", "LOAD", s.source)) -- our SHA-1 is the server's
      local a = assert(s:call({ k }, { 41 }))
      assert.equal("OK", r:call("SCRIPT", "FLUSH"))
      assert.same({ 0 }, r:call("SCRIPT", "EXISTS", s.sha))
      local b = assert(s:call({ k }, { 9 }))
      local loaded = r:call("SCRIPT", "EXISTS", s.sha)
      r:call("DEL", k)
      return { a, b, loaded }
    end)
    assert.same({ res[1][1], "41", 42 }, res[1])
    assert.same({ "9", 10 }, { res[2][2], res[2][3] })
    assert.same({ 1 }, res[3]) -- EVAL loaded it again
  end)

  it("returns a script's error reply as a redis error", function()
    local v, err = with_redis(function(r) return r:script("return redis.error_reply('MINE went wrong')"):call() end)
    assert.is_nil(v)
    assert.equal("redis", err.kind)
    assert.equal("MINE", err.code)
  end)
end)

describe("lc.redis against a server of its own", function()
  it("authenticates with the URL's password, and refuses a wrong one", function()
    local server = h.redis_server("--requirepass s3cret")
    finally(server.stop)
    local base = ("redis://:%s@127.0.0.1:%d/2")
    assert.equal("OK", with_redis(function(r) return r:call("SET", "k", "v") end, base:format("s3cret", server.port)))
    local user = ("redis://default:s3cret@127.0.0.1:%d/2"):format(server.port)
    assert.equal("v", with_redis(function(r) return r:call("GET", "k") end, user))
    local r, err = lc.run(function() return lc.redis.connect(base:format("wrong", server.port)) end)
    assert.is_nil(r)
    assert.equal("redis", err.kind)
    assert.equal("WRONGPASS", err.code)
    local v, err2 = with_redis(function(c) return c:call("GET", "k") end, server.url)
    assert.is_nil(v)
    assert.equal("NOAUTH", err2.code)
  end)

  it("gives every pending call an error when the server is killed, and every later call", function()
    local server = h.redis_server()
    finally(server.stop)
    local results = lc.run(function()
      local r = assert(lc.redis.connect(server.url, { timeout = 5 }))
      local waiting = {}
      for i = 1, 5 do
        waiting[i] = lc.spawn(function() return r:call("BLPOP", "never" .. i, 0) end)
      end
      lc.sleep(0.1)
      server.stop()
      local out = {}
      for i = 1, 5 do
        local v, err = waiting[i]:join()
        out[i] = { v = v, kind = err and err.kind, message = err and err.message }
      end
      local v, err = r:call("PING")
      out.later = { v = v, kind = err and err.kind, message = err and err.message }
      out.status = r:status()
      return out
    end)
    for i = 1, 5 do
      assert.is_nil(results[i].v)
      assert.equal("connect", results[i].kind)
      assert.matches("connection lost", results[i].message)
    end
    assert.is_nil(results.later.v)
    assert.equal("connect", results.later.kind)
    assert.matches("connection lost", results.later.message)
    assert.equal("failed", results.status)
  end)
end)
