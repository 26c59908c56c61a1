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

-- Run a shell command; returns exit status, stdout, stderr.
function M.sh(cmd)
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

package.loaded["spec_helper"] = M
return M
