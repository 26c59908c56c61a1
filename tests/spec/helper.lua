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

-- Run a shell command; returns exit status, stdout, stderr.
function M.sh(cmd)
  local out, err = os.tmpname(), os.tmpname()
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

package.loaded["spec_helper"] = M
return M
