-- Loaded by busted before every spec (--helper): where the fixtures are.
local M = {}

M.fixture_port = os.getenv("LC_FIXTURE_PORT")
M.fixture_url = os.getenv("LC_FIXTURE_URL")
M.dns_server = os.getenv("LC_DNS_SERVER")
M.dns_faults = os.getenv("LC_DNS_FAULTS")
M.luacrawl_bin = os.getenv("LUACRAWL_BIN")
M.source_dir = os.getenv("LC_SOURCE_DIR") or "."

-- The fixture server's URL for path, on 127.0.0.1 or on host (a name or address).
function M.url(path, host)
  return ("http://%s:%s%s"):format(host or "127.0.0.1", M.fixture_port, path)
end

-- A fresh path (suffix appended, e.g. ".jsonl") in a directory of this run's own,
-- which goes, with whatever the specs left in it, when the run ends (busted closes
-- the Lua state on exit). os.tmpname() would leave its file behind for a name with
-- a suffix, and any file a failed assertion skipped removing.
local tmp_dir, tmp_count, tmp_sentinel
function M.tmpname(suffix)
  if not tmp_dir then
    local p = io.popen("mktemp -d")
    tmp_dir = p:read("*l")
    p:close()
    assert(tmp_dir and tmp_dir ~= "", "mktemp -d failed")
    tmp_count = 0
    local dir = tmp_dir
    tmp_sentinel = newproxy(true)
    getmetatable(tmp_sentinel).__gc = function() os.execute("rm -rf '" .. dir .. "'") end
  end
  tmp_count = tmp_count + 1
  return ("%s/t%d%s"):format(tmp_dir, tmp_count, suffix or "")
end

-- Run a shell command; returns exit status, stdout, stderr. In the ASan suite the
-- sanitizer runtimes are preloaded (LD_PRELOAD) for luajit, which is not instrumented:
-- a command that starts no luajit runs without them, as some tools (curl, dd, ps)
-- hang or abort under them, and the luacrawl binary links its own.
function M.sh(cmd)
  if not cmd:find("luajit", 1, true) then cmd = "unset LD_PRELOAD; " .. cmd end
  local out, err = M.tmpname(), M.tmpname()
  local ok, _, code = os.execute(("%s >%s 2>%s"):format(cmd, out, err))
  local function slurp(p)
    local f = io.open(p, "rb")
    local s = f:read("*a")
    f:close()
    os.remove(p)
    return s
  end
  -- LuaJIT's os.execute returns the raw wait status.
  if type(ok) == "number" then code = ok >= 256 and math.floor(ok / 256) or ok end
  if ok == true then code = 0 end
  return code, slurp(out), slurp(err)
end

-- The JSON a control endpoint of the fixture server answers (/__log, /__reset,
-- /site/manifest.json, ...), fetched with lc.fetch options opts; from a task or from
-- plain Lua (then in a run of its own). Also the response.
function M.control(path, opts)
  local lc, cjson = require "luacrawl", require "cjson"
  local function get()
    local res = assert(lc.fetch(M.url(path), opts))
    return cjson.decode(res.body), res
  end
  if lc.current() then return get() end
  return lc.run(get)
end

-- The fixture site's pages as full URLs (a set) and their number; query ("?depth=1")
-- as /site/manifest.json takes it.
function M.manifest(query)
  local want, n = {}, 0
  for _, p in ipairs(M.control("/site/manifest.json" .. (query or ""))) do
    want[M.url(p)] = true
    n = n + 1
  end
  return want, n
end

-- A file's bytes, "" when there is no such file (yet).
function M.read_file(path)
  local f = io.open(path, "rb")
  if not f then return "" end
  local s = f:read("*a")
  f:close()
  return s
end

-- Run fn(dir) with a fresh tmpfs of `size` mounted at dir (root only): a small file
-- system to fill up, or to remount read-only. Where mounting is impossible it prints
-- why, as `who`, and returns false; the mount goes whatever fn does.
function M.with_tmpfs(size, fn, who)
  local dir = M.tmpname("-mnt")
  assert(M.sh("mkdir -p " .. dir) == 0)
  local code, _, err = M.sh(("mount -t tmpfs -o size=%s tmpfs %s"):format(size, dir))
  if code ~= 0 then
    print(("%s: SKIPPED a tmpfs case: cannot mount a tmpfs here (%s)"):format(who, (err:gsub("%s+$", ""))))
    return false
  end
  local ok, e = pcall(fn, dir)
  M.sh("umount " .. dir)
  if not ok then error(e, 0) end
  return true
end

-- A page in headless Chromium (tests/tools/browser.py): each of steps (JavaScript
-- expressions, a promise awaited) run in turn; {steps = their values, console = the
-- console's errors}. shot: a PNG written after the last step.
function M.browse(url, steps, shot)
  local args = { "python3", M.source_dir .. "/tests/tools/browser.py", "--url", "'" .. url .. "'" }
  for _, s in ipairs(steps) do
    args[#args + 1] = "--step"
    args[#args + 1] = "'" .. s:gsub("'", "'\\''") .. "'"
  end
  if shot then args[#args + 1] = "--screenshot " .. shot end
  local code, out, err = M.sh(table.concat(args, " "))
  assert(code == 0, out .. err)
  return require("cjson").decode(out)
end

-- A step for browse that waits until a dashboard's page has shown n events.
function M.page_updates(n)
  return ("new Promise((r) => { const f = () => Number(document.body.dataset.updates || 0) >= %d"
    .. " ? r(true) : setTimeout(f, 20); f(); })"):format(n)
end

-- The token a dashboard's page (at page_url) carries for its commands.
function M.dashboard_token(page_url)
  local body = assert(require("luacrawl").fetch(page_url)).body
  return assert(body:match('<meta name="luacrawl%-token" content="([^"]+)"'))
end

-- POST base/NAME with the token, from the dashboard's own origin (origin: another,
-- cross-site); its status.
function M.dashboard_command(base, token, name, origin)
  return assert(require("luacrawl").fetch(base .. "/" .. name, { method = "POST", headers = {
    Authorization = "Bearer " .. token, Origin = origin or base,
    ["Sec-Fetch-Site"] = origin and "cross-site" or "same-origin" } })).status
end

-- s quoted for the shell (one word, whatever it holds).
function M.quote(s)
  return "'" .. s:gsub("'", [['"'"']]) .. "'"
end

-- Wait (polling) until fn() gives a true value, and return it; fail saying what after
-- `seconds` (30 unless given: a guard against a hang, not a measure).
function M.wait_for(what, fn, seconds)
  local lc = require "luacrawl"
  local deadline = lc.now() + (seconds or 30)
  while true do
    local v = fn()
    if v then return v end
    assert(lc.now() < deadline, "timed out waiting for " .. what)
    lc.sleep(0.05)
  end
end

-- Steps for browse that read a report page (luacrawl report): the numbers shown, the
-- points of each chart, the resources the page fetched, the text of a table's cells.
M.report_steps = {
  numbers = 'Object.fromEntries([...document.querySelectorAll(".numbers b")].map((b) => [b.id, b.textContent]))',
  points = 'Object.fromEntries(["chart-rate", "chart-statuses", "chart-errors", "chart-sizes", "chart-depths"]'
    .. '.map((id) => [id, Chart.getChart(id).data.datasets.reduce((n, d) => n + d.data.length, 0)]))',
  fetched = 'performance.getEntriesByType("resource").length',
  cells = function(id)
    return ('[...document.querySelectorAll("#%s td")].map((td) => td.textContent)'):format(id)
  end,
}

-- The build folder (the binary's): screenshots are left there.
M.build_dir = M.luacrawl_bin and M.luacrawl_bin:match("^(.*)/[^/]*$")

-- Redis: the server tests/fixtures/run.py --redis started (for the whole run), and
-- servers of a spec's own (redis_server), for what the shared one must not suffer:
-- being killed, a password.
M.redis_url = os.getenv("LC_REDIS_URL")
M.redis_port = tonumber(os.getenv("LC_REDIS_PORT") or "")

-- A port free on 127.0.0.1 now (the kernel's pick).
function M.free_port()
  local code, out = M.sh([[python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"]])
  assert(code == 0, "no free port")
  return tonumber(out)
end

-- Servers started by redis_server and not stopped yet, stopped when the run ends
-- (busted closes the Lua state) if a spec failed before its own stop.
local redis_servers, redis_sentinel = {}, nil

-- Start redis-server on a free port of 127.0.0.1 in a fresh directory, persisting
-- nothing; extra: more of its options ("--requirepass secret", or "--appendonly yes
-- --appendfsync always" to persist, as later ones win). Returns {port =, url =, pid =,
-- dir =, stop = function, restart = function}, once it answers PING; restart starts
-- it again on the same port and directory (after stop: a restarted Redis).
function M.redis_server(extra)
  if not redis_sentinel then
    redis_sentinel = newproxy(true)
    getmetatable(redis_sentinel).__gc = function()
      for pid in pairs(redis_servers) do os.execute("kill -9 " .. pid .. " 2>/dev/null") end
    end
  end
  local dir = M.tmpname("-redis")
  assert(M.sh("mkdir -p " .. dir) == 0)
  for _ = 1, 5 do
    local port = M.free_port()
    local cmd = ("redis-server --port %d --bind 127.0.0.1 --dir %s --save '' --appendonly no "
      .. "--daemonize no --logfile %s/log %s >/dev/null 2>&1 & echo $!"):format(port, dir, dir, extra or "")
    local p = io.popen(cmd)
    local pid = tonumber(p:read("*l"))
    p:close()
    redis_servers[pid] = true
    local server = { port = port, pid = pid, dir = dir, url = ("redis://127.0.0.1:%d/0"):format(port) }
    function server.stop()
      -- At most 2 s for it to go: an orphan's parent may be slow to reap it (a zombie
      -- still answers kill -0), and a dead process has closed its sockets anyway.
      local id = server.pid
      os.execute(("kill -9 %d 2>/dev/null; for i in $(seq 200); do kill -0 %d 2>/dev/null || break; "
        .. "sleep 0.01; done"):format(id, id))
      redis_servers[id] = nil
    end
    function server.restart()
      local rp = io.popen(cmd)
      server.pid = tonumber(rp:read("*l"))
      rp:close()
      redis_servers[server.pid] = true
      for _ = 1, 500 do
        local code, out = M.sh(("redis-cli -p %d PING"):format(port))
        if code == 0 and out:find("PONG") then return true end
        M.sh("sleep 0.01")
      end
      error("redis-server did not start again")
    end
    for _ = 1, 500 do
      local code, out = M.sh(("redis-cli -p %d PING"):format(port))
      if code == 0 and out:find("PONG") or out:find("NOAUTH") then return server end
      if M.sh("kill -0 " .. pid) ~= 0 then break end -- the port was taken: another
      M.sh("sleep 0.01")
    end
    server.stop()
  end
  error("redis-server did not start")
end

-- A hostile or broken Redis (tests/fixtures/fake_redis.py, its modes there) on a
-- port of 127.0.0.1: {url =, stop = function}; stopped when the run ends otherwise.
function M.fake_redis(mode)
  local port_file = M.tmpname("-port")
  local p = io.popen(("python3 %s/tests/fixtures/fake_redis.py %s %s >/dev/null 2>&1 & echo $!")
    :format(M.source_dir, mode, port_file))
  local pid = tonumber(p:read("*l"))
  p:close()
  local server = { pid = pid, sentinel = newproxy(true) }
  function server.stop() os.execute("kill -9 " .. pid .. " 2>/dev/null") end
  getmetatable(server.sentinel).__gc = server.stop
  for _ = 1, 500 do
    local port = tonumber(M.read_file(port_file) or "")
    if port then
      server.url = ("redis://127.0.0.1:%d/0"):format(port)
      return server
    end
    M.sh("sleep 0.01")
  end
  server.stop()
  error("fake_redis.py did not start")
end

package.loaded["spec_helper"] = M
return M
