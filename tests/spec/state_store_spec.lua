-- fixtures: --http
-- lc.store (engine/store.c): durable queues and seen sets in a state file, their
-- round trips and batches, what a reopen finds, and a clear error for every state
-- that cannot be used: corrupt, truncated, empty, another program's, newer, locked
-- by another process, read-only, and a full disk.
local lc = require "luacrawl"
local h = require "spec_helper"

local function sh_ok(cmd)
  local code, out, err = h.sh(cmd)
  assert(code == 0, ("%s: exit %s: %s%s"):format(cmd, tostring(code), out, err))
  return out
end

local function write_file(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

local function file_size(path)
  local f = assert(io.open(path, "rb"))
  local n = f:seek("end")
  f:close()
  return n
end

-- A state holding `n` committed items in queue "todo" and as many URLs in "seen".
local function make_state(path, n)
  local db = assert(lc.store.open(path))
  local q, seen = lc.queue { store = db, name = "todo" }, lc.seen { store = db, name = "seen" }
  for i = 1, n do
    q:put_nowait(("http://example.org/%d.html"):format(i))
    seen:add(("http://example.org/%d.html"):format(i))
  end
  assert(db:close())
end

local function assert_fails(kind, path, db, err)
  assert.is_nil(db)
  assert.equal(kind, err.kind, tostring(err))
  assert.equal(path, err.path)
  assert.truthy(err.message:find(path, 1, true), err.message)
  assert.truthy(tostring(err):find(kind .. ": ", 1, true))
end

local function with_tmpfs(size, fn)
  return h.with_tmpfs(size, fn, "state_store_spec")
end

describe("lc.store", function()
  it("keeps strings and tables in a queue, in order, across a reopen", function()
    local path = h.tmpname(".db")
    local db = assert(lc.store.open(path))
    local q = lc.queue { store = db, name = "todo" }
    lc.run(function()
      q:put("http://a.test/")
      q:put({ url = "http://b.test/", depth = 2, tags = { "x", "y" } })
      q:put("bytes \0 and \255")
    end)
    assert.equal(3, q:size())
    assert(db:close())
    db = assert(lc.store.open(path))
    q = lc.queue { store = db, name = "todo" }
    assert.equal(3, q:size())
    lc.run(function()
      assert.equal("http://a.test/", q:get())
      assert.same({ url = "http://b.test/", depth = 2, tags = { "x", "y" } }, q:get())
      assert.equal("bytes \0 and \255", q:get())
      for _ = 1, 3 do q:task_done() end
      q:join()
    end)
    assert.equal(0, q:size())
    assert(db:close())
  end)

  it("keeps a seen set of normalized URLs across a reopen", function()
    local path = h.tmpname(".db")
    local db = assert(lc.store.open(path))
    local seen = lc.seen { store = db, name = "seen" }
    assert.is_true(seen:add("http://Example.org:80/a"))
    assert.is_false(seen:add("http://example.org/a"))
    assert.is_true(seen:add("http://example.org/b"))
    assert.equal(2, seen:size())
    assert.equal(2, #seen)
    assert(db:close())
    db = assert(lc.store.open(path))
    seen = lc.seen { store = db, name = "seen" }
    assert.equal(2, seen:size())
    assert.is_true(seen:has("http://EXAMPLE.org/a"))
    assert.is_false(seen:has("http://example.org/c"))
    assert.is_false(seen:add("http://example.org/b"))
    assert(db:close())
  end)

  it("keeps meta, and each named queue and set apart", function()
    local path = h.tmpname(".db")
    local db = assert(lc.store.open(path))
    assert.is_nil(db:meta("crawl"))
    assert(db:set_meta("crawl", "start=http://a.test/"))
    local a, b = lc.queue { store = db, name = "a" }, lc.queue { store = db, name = "b" }
    assert.equal(a, lc.queue { store = db, name = "a" }) -- one object per name
    a:put_nowait("1")
    b:put_nowait("2")
    b:put_nowait("3")
    assert(lc.seen { store = db, name = "s1" }:add("http://a.test/"))
    assert(db:close())
    db = assert(lc.store.open(path))
    assert.equal("start=http://a.test/", db:meta("crawl"))
    assert.equal(1, lc.queue { store = db, name = "a" }:size())
    assert.equal(2, lc.queue { store = db, name = "b" }:size())
    assert.equal(1, lc.seen { store = db, name = "s1" }:size())
    assert.equal(0, lc.seen { store = db, name = "s2" }:size())
    assert(db:set_meta("crawl", nil))
    assert.is_nil(db:meta("crawl"))
    assert(db:close())
  end)

  it("gives back an item got but not acknowledged at the next open, first", function()
    local path = h.tmpname(".db")
    make_state(path, 5)
    local db = assert(lc.store.open(path))
    local q = lc.queue { store = db, name = "todo" }
    lc.run(function()
      assert.equal("http://example.org/1.html", q:get())
      q:task_done()
      assert.equal("http://example.org/2.html", q:get()) -- in flight at the "kill"
    end)
    assert.equal(3, q:size())
    assert(db:close())
    db = assert(lc.store.open(path))
    q = lc.queue { store = db, name = "todo" }
    assert.equal(4, q:size())
    assert.equal("http://example.org/2.html", q:get_nowait())
    assert(db:close())
  end)

  it("drops what was not committed when the store is not closed (as a kill would)", function()
    local path = h.tmpname(".db")
    local db = assert(lc.store.open(path))
    local q = lc.queue { store = db, name = "todo" }
    q:put_nowait("committed")
    assert(db:commit())
    q:put_nowait("not committed")
    assert.equal(2, q:size())
    db, q = nil, nil
    collectgarbage()
    collectgarbage()
    db = assert(lc.store.open(path))
    q = lc.queue { store = db, name = "todo" }
    assert.equal(1, q:size())
    assert.equal("committed", q:get_nowait())
    assert(db:close())
  end)

  it("takes, pushes and acknowledges in batches through the handle", function()
    local path = h.tmpname(".db")
    local db = assert(lc.store.open(path))
    local hq = db:queue("batch")
    for i = 1, 300 do hq:push(tostring(i)) end
    local items, ids, texts = {}, {}, {}
    assert.equal(256, hq:pop(256, items, ids, texts))
    assert.equal("1", items[1])
    assert.equal("256", items[256])
    assert.same({ 44, 256 }, { hq:counts() })
    hq:ack(unpack(ids, 1, 256))
    hq:ack(ids[1]) -- acknowledged already: passed over
    assert.same({ 44, 0 }, { hq:counts() })
    assert.equal(44, hq:pop(100, items, ids, texts))
    assert.equal("257", items[1])
    assert.equal(0, hq:pop(100, items, ids, texts))
    assert(db:close())
    assert.has_error(function() hq:push("x") end, "store queue: its store is closed")
  end)

  it("writes rows from column lists, several a statement, and reads them back as records", function()
    local path = h.tmpname(".db")
    local db = assert(lc.store.open(path))
    db:sql("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, n REAL)"):exec()
    local ids, names, ns = {}, {}, {}
    for i = 1, 21 do ids[i], names[i], ns[i] = i, "row" .. i, i % 3 == 0 and i / 2 or nil end
    local one = db:sql("INSERT INTO t(id, name, n) VALUES (?, ?, ?)")
    local four = db:sql("INSERT INTO t(id, name, n) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?), (?, ?, ?)")
    four:exec_many(1, 20, ids, names, ns) -- five steps of four rows
    one:exec_many(21, 21, ids, names, ns)
    one:exec_many(5, 4, ids, names, ns) -- no row
    assert.has_error(function() four:exec_many(1, 3, ids, names, ns) end, "store statement: 3 rows, not a multiple of 4")
    assert.has_error(function() four:exec_many(1, 4, ids, names) end)
    assert(db:commit())
    local rows = db:sql("SELECT id, name, n FROM t WHERE id > ?1 ORDER BY id"):records({ "id", "name", "n" }, 17)
    assert.same({
      { id = 18, name = "row18", n = 9 }, { id = 19, name = "row19" }, { id = 20, name = "row20" },
      { id = 21, name = "row21", n = 10.5 },
    }, rows)
    assert.same({ { name = "row3" } }, db:sql("SELECT id, name FROM t WHERE id = 3"):records({ false, "name" }))
    assert.equal(21, db:sql("SELECT count(*) FROM t"):one())
    -- A failed row fails the store, as any write: the rows since the last commit go.
    assert.has_error(function() one:exec_many(1, 1, ids, names, ns) end)
    assert.falsy(db:commit())
    db:abandon()
    db = assert(lc.store.open(path))
    assert.equal(21, db:sql("SELECT count(*) FROM t"):one())
    assert(db:close())
  end)

  it("leaves lc.queue() and lc.seen() in memory as they were", function()
    assert.matches("^seen set %(0 URLs%)$", tostring(lc.seen()))
    assert.matches("^seen set %(0 URLs%)$", tostring(lc.seen { expected = 10 }))
    local q = lc.queue(2)
    assert.is_true(q:put_nowait("a"))
    assert.is_true(q:put_nowait("b"))
    assert.is_false(q:put_nowait("c"))
    assert.equal(2, lc.queue { maxsize = 2 }.maxsize)
  end)

  it("refuses wrong arguments", function()
    assert.has_error(function() lc.queue { store = {}, name = "x" } end,
      "lc.queue: store must be a store (lc.store.open)")
    local db = assert(lc.store.open(h.tmpname(".db")))
    assert.has_error(function() lc.queue { store = db } end, "lc.queue: name must be a non-empty string")
    assert.has_error(function() lc.seen { store = db, name = "" } end, "lc.seen: name must be a non-empty string")
    assert.has_error(function() lc.store.open(h.tmpname(".db"), { synchronous = "sometimes" }) end)
    assert(db:close())
  end)
end)

describe("lc.store.open refuses a state it cannot use", function()
  it("that is not a database", function()
    local path = h.tmpname(".db")
    write_file(path, ("not a database\n"):rep(500))
    assert_fails("corrupt", path, lc.store.open(path))
  end)

  it("that was truncated", function()
    local path = h.tmpname(".db")
    make_state(path, 3000)
    local size = file_size(path)
    sh_ok(("truncate -s %d %s"):format(math.floor(size / 2), path))
    assert_fails("corrupt", path, lc.store.open(path))
    sh_ok(("truncate -s 60 %s"):format(path))
    assert_fails("corrupt", path, lc.store.open(path))
  end)

  it("that is an empty file, rather than starting afresh", function()
    local path = h.tmpname(".db")
    write_file(path, "")
    local db, err = lc.store.open(path)
    assert_fails("corrupt", path, db, err)
    assert.matches("empty file", err.message)
  end)

  it("but a kill while a new state is made leaves no empty file: the next open makes it afresh", function()
    -- A new state is made at PATH.new and linked into place whole. Killed at
    -- random instants while it opens, the process leaves either no PATH or a
    -- whole state (never the empty file SQLite begins with), and at most a
    -- PATH.new, which the next open makes again or removes.
    local script = h.tmpname(".lua")
    for i = 1, 30 do
      local path = h.tmpname(".db")
      write_file(script, ("local lc = require 'luacrawl'; assert(lc.store.open(%q)); lc.sleep(5)"):format(path))
      h.sh(("%s run %s & p=$!; sleep %.4f; kill -9 $p; wait $p"):format(h.luacrawl_bin, script, (i % 10) * 0.002))
      local f = io.open(path, "rb")
      if f then
        assert.is_true(f:seek("end") > 0, "the kill left an empty state file")
        f:close()
      end
      local db = assert(lc.store.open(path))
      assert(db:close())
      assert.is_nil(io.open(path .. ".new"), "PATH.new left behind")
    end
    -- A PATH.new of any content, left by a kill, is made again.
    local path = h.tmpname(".db")
    write_file(path .. ".new", "half a database")
    local db = assert(lc.store.open(path))
    assert(db:close())
    assert.is_nil(io.open(path .. ".new"))
  end)

  it("that another program made, or a newer luacrawl", function()
    local path = h.tmpname(".db")
    sh_ok(("python3 -c \"import sqlite3; c = sqlite3.connect('%s'); c.execute('create table t(a)'); c.commit()\""):format(path))
    assert_fails("incompatible", path, lc.store.open(path))
    path = h.tmpname(".db")
    make_state(path, 1)
    sh_ok(("python3 -c \"import sqlite3; c = sqlite3.connect('%s'); c.execute('update schema_version set version = 99'); c.commit()\""):format(path))
    local db, err = lc.store.open(path)
    assert_fails("incompatible", path, db, err)
    assert.matches("newer luacrawl", err.message)
  end)

  it("that another process has open, until that process dies", function()
    local path, ready, pidfile = h.tmpname(".db"), h.tmpname(".ready"), h.tmpname(".pid")
    local holder = h.tmpname(".lua")
    write_file(holder, ([[
      local lc = require "luacrawl"
      local db = assert(lc.store.open(%q))
      io.open(%q, "w"):close()
      lc.sleep(30)
    ]]):format(path, ready))
    sh_ok(("(%s run %s >/dev/null 2>&1 & echo $! > %s)"):format(h.luacrawl_bin, holder, pidfile))
    local pid = io.open(pidfile):read("*l")
    for _ = 1, 200 do
      if io.open(ready) then break end
      h.sh("sleep 0.05")
    end
    assert.truthy(io.open(ready), "the holder process never opened the state")
    local db, err = lc.store.open(path)
    h.sh("kill -9 " .. pid)
    assert_fails("locked", path, db, err)
    assert.matches("another crawl has it open", err.message)
    for _ = 1, 100 do
      if h.sh("kill -0 " .. pid) ~= 0 then break end
      h.sh("sleep 0.05")
    end
    db = assert(lc.store.open(path))
    assert(db:close())
  end)

  it("read_only: a state another process writes is read as of its last commit, naming that process", function()
    local path, ready, pidfile = h.tmpname(".db"), h.tmpname(".ready"), h.tmpname(".pid")
    local holder = h.tmpname(".lua")
    write_file(holder, ([[
      local lc = require "luacrawl"
      local db = assert(lc.store.open(%q))
      db:set_meta("k", "committed")
      assert(db:commit())
      db:set_meta("k", "not committed")
      io.open(%q, "w"):close()
      lc.sleep(30)
    ]]):format(path, ready))
    sh_ok(("(%s run %s >/dev/null 2>&1 & echo $! > %s)"):format(h.luacrawl_bin, holder, pidfile))
    local pid = tonumber(io.open(pidfile):read("*l"))
    for _ = 1, 200 do
      if io.open(ready) then break end
      h.sh("sleep 0.05")
    end
    local db, err = lc.store.open(path, { read_only = true })
    local writer, value, wok, werr
    if db then
      writer, value = db:writer(), db:meta("k")
      wok, werr = db:set_meta("k", "mine")
      db:close()
    end
    h.sh("kill -9 " .. pid)
    assert.is_truthy(db, err and err.message)
    assert.equal(pid, writer)
    assert.equal("committed", value)
    assert.is_nil(wok)
    assert.equal("read_only", werr.kind)
  end)

  it("that a second connection of the same process wants", function()
    local path = h.tmpname(".db")
    local db = assert(lc.store.open(path))
    assert_fails("locked", path, lc.store.open(path))
    assert(db:close())
    db = assert(lc.store.open(path))
    assert(db:close())
  end)

  it("on a read-only file or directory", function()
    local is_root = h.sh("test $(id -u) = 0") == 0
    if not is_root then
      local dir = h.tmpname("-ro")
      sh_ok("mkdir " .. dir)
      make_state(dir .. "/s.db", 1)
      sh_ok("chmod 444 " .. dir .. "/s.db")
      assert_fails("read_only", dir .. "/s.db", lc.store.open(dir .. "/s.db"))
      sh_ok("chmod 644 " .. dir .. "/s.db; chmod 555 " .. dir)
      assert_fails("read_only", dir .. "/new.db", lc.store.open(dir .. "/new.db"))
      sh_ok("chmod 755 " .. dir)
      return
    end
    -- root writes through file modes: a read-only mount makes both cases real.
    with_tmpfs("4m", function(dir)
      make_state(dir .. "/s.db", 10)
      sh_ok("mount -o remount,ro " .. dir)
      assert_fails("read_only", dir .. "/s.db", lc.store.open(dir .. "/s.db"))
      assert_fails("read_only", dir .. "/new.db", lc.store.open(dir .. "/new.db"))
    end)
  end)
end)

-- Fill a store with 1 KB items, committing every 10, until something fails:
-- returns the error and the items the last good commit holds.
local function fill(db)
  local q = lc.queue { store = db, name = "todo" }
  local item = ("x"):rep(1000)
  local committed = 0
  for i = 1, 100000 do
    local ok, err = pcall(q.put_nowait, q, item .. i)
    if not ok then return err, committed end
    if i % 10 == 0 then
      local done, cerr = db:commit()
      if not done then return cerr, committed end
      committed = i
    end
  end
  error("the store never filled up")
end

describe("a store whose disk fills up", function()
  local function check_full(db, path, err, committed)
    assert.equal("disk_full", err.kind, tostring(err))
    assert.truthy(err.message:find(path, 1, true), err.message)
    assert.matches("last commit is intact", err.message)
    -- Every later call fails the same way; close says so too.
    local ok, again = db:commit()
    assert.is_nil(ok)
    assert.equal("disk_full", again.kind)
    assert.has_error(function() lc.queue { store = db, name = "todo" }:put_nowait("x") end)
    assert.is_nil((db:close()))
    assert.is_true(committed > 0)
  end

  local function check_kept(path, committed)
    local db = assert(lc.store.open(path))
    local q = lc.queue { store = db, name = "todo" }
    assert.equal(committed, q:size())
    local first, last
    for i = 1, committed do
      local v = q:get_nowait()
      if i == 1 then first = v end
      last = v
    end
    assert.equal(("x"):rep(1000) .. "1", first)
    assert.equal(("x"):rep(1000) .. committed, last)
    assert(db:close())
  end

  it("on a real full file system (a small tmpfs): the error, and every commit before kept", function()
    with_tmpfs("1m", function(dir)
      local path = dir .. "/s.db"
      sh_ok(("dd if=/dev/zero of=%s/filler bs=64k count=4 2>/dev/null"):format(dir))
      local db = assert(lc.store.open(path))
      local err, committed = fill(db)
      check_full(db, path, err, committed)
      sh_ok(("rm %s/filler"):format(dir))
      check_kept(path, committed)
    end)
  end)

  it("a new state on a nearly full disk: disk_full and nothing at its path, then made once there is room",
    function()
    -- A few KiB free: room for SQLite's WAL of the new state, not always for the
    -- file the WAL is written into at close (issue 31: a file linked without its
    -- WAL was "malformed" for every later run).
    local mounted = with_tmpfs("256k", function(dir)
      local refused = 0
      for free = 16, 48, 4 do
        local path = ("%s/s%d.db"):format(dir, free)
        local avail = tonumber(sh_ok(("df -k --output=avail %s | tail -1"):format(dir)))
        sh_ok(("dd if=/dev/zero of=%s/filler bs=1k count=%d 2>/dev/null"):format(dir, avail - free))
        local db, err = lc.store.open(path)
        if db then
          assert(db:close())
        else
          refused = refused + 1
          assert.equal("disk_full", err.kind, tostring(err))
          assert.is_nil(io.open(path, "rb"), "a state that was never whole is at " .. path)
        end
        sh_ok(("rm %s/filler"):format(dir))
        db = assert(lc.store.open(path))
        assert(db:close())
      end
      assert.is_true(refused > 0, "no free space tried was too little")
    end)
    assert.is_true(mounted, "this spec mounts a tmpfs, which needs root")
  end)

  it("past max_bytes, the same way", function()
    local path = h.tmpname(".db")
    local db = assert(lc.store.open(path, { max_bytes = 200000 }))
    local err, committed = fill(db)
    check_full(db, path, err, committed)
    check_kept(path, committed)
  end)
end)
