-- luacrawl.cli: the command line. cli/main.c hands argv here.
--   luacrawl run SCRIPT [ARGS...]
--   luacrawl lua SCRIPT [ARGS...]
--   luacrawl fetch [-I] [-L] [-H 'Name: value'] [-A UA] [--dns-server S] [--timeout S] URL
--   luacrawl crawl URL... [options]   (cli_crawl.lua)
--   luacrawl state FILE [--json]      (cli_state.lua; also --redis URL --crawl-id NAME)
--   luacrawl dashboard (--redis URL --crawl-id NAME | --state FILE)   (cli_dashboard.lua)
--   luacrawl report (--state FILE | --stats-json FILE | --redis URL --crawl-id NAME) -o FILE   (cli_report.lua)
--   luacrawl --version | --help
-- Exit status: M.EXIT_STATUS (cli/main.c gives 4 too for anything left in stdout
-- that cannot be written at exit).
-- What a server sent (headers, URLs, error messages) is printed through
-- core.plain_text: its control characters never reach the terminal raw.
local lc = require "luacrawl"
local plain_text = require("luacrawl.core").plain_text

local M = {}

local EXIT_OK, EXIT_SCRIPT, EXIT_USAGE, EXIT_FETCH, EXIT_OUTPUT = 0, 1, 2, 3, 4

local USAGE = [==[
usage: luacrawl [--dns-server HOST[:PORT][,...]] COMMAND [ARGS]

commands:
  run SCRIPT [ARGS...]   run a Lua script as the main task; it sees ARGS in `arg`
  lua SCRIPT [ARGS...]   run a Lua script as luajit would, with this binary's
                         luacrawl: no main task (the script calls lc.run itself)
  crawl URL... [options] crawl from URLs, one JSON line per page (crawl --help)
  state FILE [--json]    what the state of a crawl (crawl --state FILE) holds
  state --redis URL --crawl-id NAME [--json]
                         a crawl shared by workers in Redis (crawl --redis URL)
  dashboard --redis URL --crawl-id NAME [--port P]
                         the dashboard of a fleet's crawl: every worker, pause,
                         resume and stop for all (dashboard --help; --state FILE)
  report (--state FILE | --stats-json FILE | --redis URL --crawl-id NAME) -o REPORT.html
                         a crawl's report, one HTML file that opens offline
  fetch [options] URL    fetch one URL: status and headers to stderr, body to stdout
      -I, --head             send HEAD and print only the status and headers
      -L, --location [N]     follow up to N redirects (default 10); a hop to
                             another scheme, host or port drops Authorization,
                             Cookie and Proxy-Authorization and URL credentials
      --location-trusted     with -L, send them to every hop
      --public-only          connect only to public addresses (not loopback,
                             private, link-local, ...)
      --deny-network CIDR    never connect to addresses in CIDR (repeatable)
      -H, --header 'N: V'    add a request header (repeatable)
      -A, --user-agent UA    set the User-Agent
      --timeout SECONDS      total time limit (default 30)
      --max-size BYTES       largest body accepted, decoded (default 10 MiB)
      --max-header-size B    response headers accepted (default 256 KiB)
      --max-url-length N     longest URL fetched (default 8192)
      --dns-server S         DNS servers, HOST[:PORT][,...]
      --insecure             do not verify TLS certificates
      --css SEL, --xpath EXPR  print the matches (one per line) instead of the body
      --css NAME=SEL, --xpath NAME=EXPR, --css-all NAME=SEL, --xpath-all NAME=EXPR
                               print one JSON record: url, status and these fields
                               (as luacrawl crawl's; repeatable)
  shell [URL]            a Lua REPL with fetch(url), css(sel), xpath(expr), page; help
  --version              print the versions of luacrawl and its libraries
  --help                 this text

DNS servers come from --dns-server, LUACRAWL_DNS_SERVERS, or /etc/resolv.conf.
]==]

-- The exit statuses of every command, one list: the end of both --help texts, and
-- the README's words (cli_spec checks that they agree).
M.EXIT_STATUS = [==[
Exit status: 0 success; 1 the script failed; 2 a usage error (also: an output,
stats file, state or Redis that cannot be used); 3 the fetch failed; 4 an output
or the stats file could not be written (a full disk, a closed pipe); 5 a crawl
did nothing useful (no page fetched, every start URL refused, parse failed on
every page); 130/143 a crawl stopped by SIGINT/SIGTERM. A script (run) exits
with the status of its last crawl that failed, unless it returns a number.
]==]
USAGE = USAGE .. M.EXIT_STATUS

-- An error's message for a user: without the position of the Lua line that raised
-- it ("luacrawl/init.lua:152: "), which says nothing to someone at a command line.
local function plain(err)
  return (tostring(err):gsub("^[^\n:]-%.lua:%d+: ", ""))
end
M.plain = plain

local function usage_error(msg)
  io.stderr:write("luacrawl: ", plain(msg), "\n", "Try 'luacrawl --help'.\n")
  return EXIT_USAGE
end

local function configure_dns(servers)
  if not servers then return true end
  local ok, err = pcall(lc.configure, { dns_servers = servers })
  if not ok then
    io.stderr:write("luacrawl: --dns-server: ", plain(err), "\n")
    return false
  end
  return true
end

-- The number an option's value gives, checked by the engine's rule for numbers
-- (core.check_number or check_integer with min and max): a usage error naming the
-- option otherwise (NaN and infinities included).
local function option_number(flag, v, integer, min, max)
  local n = tonumber(v)
  if not n then error(("%s needs a number (got '%s')"):format(flag, v), 0) end
  local core = require "luacrawl.core"
  local ok, err = pcall(integer and core.check_integer or core.check_number, n, flag, min, max)
  if not ok then error(tostring(err), 0) end
  return n
end

-- Run fn as the main task; print its error with a traceback. -> ok, results...
local function run_main(fn, ...)
  local r = { lc._run(fn, ...) }
  if not r[1] then
    local err, tb = r[2], r[3]
    io.stderr:write("luacrawl: ", plain_text(tb or tostring(err), "\t\n"), "\n")
  end
  return unpack(r)
end

-- The exit status of a script run by `luacrawl run`: the number its main chunk
-- returned (0 to 255), else that of its last crawl that failed (crawl.exit_status:
-- stopped by a signal, nothing useful done, ...), said once more, else 0.
local function script_status(returned)
  if type(returned) == "number" and returned == math.floor(returned) and returned >= 0 and returned <= 255 then
    return returned
  end
  local crawl = package.loaded["luacrawl.crawl"]
  local failure = type(crawl) == "table" and crawl.last_failure
  if not failure then return EXIT_OK end
  if failure[2] then io.stderr:write("luacrawl: ", plain_text(tostring(failure[2])), "\n") end
  return failure[1]
end

-- The script args[1] compiled, with its arguments as `arg` (set): chunk, arg; or nil
-- and the exit status after saying why (cmd: "run", "lua").
local function load_script(cmd, args)
  local script = args[1]
  if not script then return nil, usage_error(cmd .. ": missing SCRIPT") end
  local chunk, err = loadfile(script)
  if not chunk then
    io.stderr:write("luacrawl: ", err, "\n")
    return nil, EXIT_SCRIPT
  end
  local script_args = { [0] = script }
  for i = 2, #args do script_args[i - 1] = args[i] end
  _G.arg = script_args
  return chunk, script_args
end

function M.run_file(args)
  local chunk, script_args = load_script("run", args)
  if not chunk then return script_args end
  local r = { run_main(chunk, unpack(script_args)) }
  if not r[1] then return EXIT_SCRIPT end
  return script_status(r[2])
end

-- As `luajit SCRIPT ARGS...` with `require "luacrawl"` answered by the binary:
-- how the specs run through the binary (busted's own script, tests/CMakeLists.txt).
function M.lua_file(args)
  local chunk, script_args = load_script("lua", args)
  if not chunk then return script_args end
  local ok, trace = xpcall(chunk, debug.traceback, unpack(script_args))
  if ok then return EXIT_OK end
  io.stderr:write("luacrawl: ", tostring(trace), "\n")
  return EXIT_SCRIPT
end

local function print_headers(res)
  local names = {}
  for k in pairs(res.headers) do names[#names + 1] = k end
  table.sort(names)
  io.stderr:write(("HTTP/%s %d\n"):format(res.http_version, res.status))
  for _, k in ipairs(names) do io.stderr:write(plain_text(k), ": ", plain_text(res.headers[k]), "\n") end
  io.stderr:write("\n")
end

-- fetch's options that take a value (their --name=value form is split first).
local FETCH_VALUES = {
  ["--header"] = true, ["--user-agent"] = true, ["--timeout"] = true, ["--max-size"] = true,
  ["--max-header-size"] = true, ["--max-url-length"] = true, ["--dns-server"] = true,
  ["--deny-network"] = true, ["--css"] = true, ["--xpath"] = true, ["--location"] = true,
  ["--css-all"] = true, ["--xpath-all"] = true, ["-H"] = true, ["-A"] = true,
}

local function parse_fetch(args)
  args = require("luacrawl.spec_check").split_equals(args, function(a) return FETCH_VALUES[a] end)
  local o = { headers = {}, deny_networks = {}, extract = {} }
  local i = 1
  local function value(flag)
    i = i + 1
    if args[i] == nil then error(("%s needs a value"):format(flag), 0) end
    return args[i]
  end
  while i <= #args do
    local a = args[i]
    if a == "-I" or a == "--head" then
      o.head = true
    elseif a == "-L" or a == "--location" then
      o.follow = 10
      if args[i + 1] and args[i + 1]:match("^%d+$") then
        i = i + 1
        o.follow = tonumber(args[i])
      end
    elseif a == "-H" or a == "--header" then
      local h = value(a)
      local name, v = h:match("^%s*([^:]+):%s*(.-)%s*$")
      if not name then error(("bad header '%s' (use 'Name: value')"):format(h), 0) end
      o.headers[name] = v
    elseif a == "-A" or a == "--user-agent" then
      o.user_agent = value(a)
    elseif a == "--timeout" then
      o.timeout = option_number(a, value(a), false, 0, 31536000)
      if not (o.timeout > 0) then
        error("--timeout needs a number of seconds more than 0 (there is no 'no limit')", 0)
      end
    elseif a == "--max-size" then
      o.max_size = option_number(a, value(a), true, 0)
    elseif a == "--max-header-size" then
      o.max_header_size = option_number(a, value(a), true, 0)
    elseif a == "--max-url-length" then
      o.max_url_length = option_number(a, value(a), true, 0)
    elseif a == "--dns-server" then
      o.dns_server = value(a)
    elseif a == "--insecure" or a == "-k" then
      o.insecure = true
    elseif a == "--location-trusted" then
      o.keep_credentials = true
    elseif a == "--public-only" then
      o.public_only = true
    elseif a == "--deny-network" then
      o.deny_networks[#o.deny_networks + 1] = value(a)
    elseif a == "--css" or a == "--xpath" or a == "--css-all" or a == "--xpath-all" then
      local v = value(a)
      local kind, all = a:match("^%-%-(%a+)(%-?a?l?l?)$")
      local e = require("luacrawl.extract").from_arg(kind, v, all ~= "")
      if e then
        require("luacrawl.extract").check({ e }, a)
        o.extract[#o.extract + 1] = e
      elseif all ~= "" then
        error(("%s needs NAME=SELECTOR, as tags=a.tag (got '%s')"):format(a, v), 0)
      else
        o[kind] = v
      end
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      error(require("luacrawl.spec_check").unknown_option(a, FETCH_VALUES, {
        ["-I"] = 1, ["--head"] = 1, ["-L"] = 1, ["--insecure"] = 1, ["--location-trusted"] = 1,
        ["--public-only"] = 1, ["-H"] = 1, ["-A"] = 1, ["-k"] = 1 }), 0)
    elseif o.url then
      error("fetch takes one URL", 0)
    else
      o.url = a
    end
    i = i + 1
  end
  if not o.url then error("fetch: missing URL", 0) end
  -- Checked before anything is fetched: a URL without a scheme, a selector or an
  -- XPath expression that does not compile (one line each, a usage error).
  local hint = require("luacrawl.crawl_losses").scheme_hint(o.url)
  if hint ~= "" then error(o.url .. hint, 0) end
  if o.extract[1] then
    if o.css or o.xpath then
      error("--css SEL and --xpath EXPR print matches; NAME=SEL fields print a record: give one kind", 0)
    end
    require("luacrawl.extract").check(o.extract, "--css/--xpath")
  end
  if o.css then
    local cok, cerr = pcall(require("luacrawl.css").to_plan, o.css)
    if not cok then error(("--css: %s"):format(plain(cerr)), 0) end
  end
  if o.xpath then
    local xok, xerr = pcall(require("luacrawl.core").html.compile, o.xpath)
    if not xok then error(("--xpath: %s"):format(plain(xerr)), 0) end
  end
  require("luacrawl.core").check_networks(o.deny_networks, "--deny-network")
  -- A header or User-Agent with CR or LF can never be sent: a usage error now, by
  -- lc.fetch's own rule, rather than an error of the fetch.
  local hok, herr = pcall(require("luacrawl.core").check_fetch_options, { headers = o.headers, user_agent = o.user_agent })
  if not hok then error(tostring(herr):gsub("^fetch: ", ""), 0) end
  return o
end

function M.fetch(args)
  local ok, o = pcall(parse_fetch, args)
  if not ok then return usage_error(o) end
  if not configure_dns(o.dns_server) then return EXIT_USAGE end
  local status = EXIT_OK
  local ran = run_main(function()
    local res, err = lc.fetch(o.url, {
      method = o.head and "HEAD" or nil, headers = o.headers, user_agent = o.user_agent,
      timeout = o.timeout, max_size = o.max_size, follow = o.follow, insecure = o.insecure,
      max_header_size = o.max_header_size, max_url_length = o.max_url_length,
      keep_credentials = o.keep_credentials, public_only = o.public_only,
      deny_networks = o.deny_networks[1] and o.deny_networks or nil,
    })
    if not res then
      io.stderr:write("luacrawl: fetch failed: ", plain_text(tostring(err)), "\n")
      status = EXIT_FETCH
      return
    end
    print_headers(res)
    -- The body is the command's output: if it cannot be written, the command failed.
    local ok, werr = true, nil
    local function out(...)
      if ok then ok, werr = io.stdout:write(...) end
    end
    if o.extract[1] then
      local rec, keys = { url = res.url, status = res.status }, { "url", "status" }
      local ct = res.headers["content-type"] or ""
      local doc = (ct == "" or ct:find("html", 1, true)) and res:html() or nil
      require("luacrawl.extract").fill(rec, o.extract, doc)
      for _, e in ipairs(o.extract) do keys[#keys + 1] = e.name end
      local core = require "luacrawl.core"
      local lines = core.json_lines()
      core.json_append(lines, rec, keys)
      out(core.json_take(lines))
    elseif o.css or o.xpath then
      local doc = res:html()
      local matches = o.css and doc:css(o.css) or doc:xpath(o.xpath)
      for _, m in ipairs(matches) do
        if type(m) == "userdata" then m = m:html() end
        out(tostring(m), "\n")
      end
    elseif not o.head and ok then
      -- Straight from outside the Lua heap: res.body, a string, would count the body
      -- twice towards max_memory (a 1 GiB body failed under the 2 GiB default).
      ok, werr = require("luacrawl.core").body_write(rawget(res, "_body") or "", io.stdout)
    end
    if ok then ok, werr = io.stdout:flush() end
    if not ok then
      io.stderr:write("luacrawl: stdout: ", tostring(werr), "\n")
      status = EXIT_OUTPUT
    end
  end)
  if not ran then return EXIT_SCRIPT end
  return status
end

local function version()
  local v = lc.versions()
  print(("luacrawl %s\n%s\nlibcurl %s\nc-ares %s"):format(v.luacrawl, v.luajit, v.libcurl, v["c-ares"]))
  return EXIT_OK
end

-- The commands whose code lives in a module of their own: luacrawl crawl (the policy in
-- cli_crawl), state, dashboard, report and shell, each run as a script is.
local function module_command(name)
  return function(args)
    local r = { run_main(function() return require(name).main(args) end) }
    if not r[1] then return EXIT_SCRIPT end
    return r[2]
  end
end
M.crawl = module_command("luacrawl.cli_crawl")
M.state = module_command("luacrawl.cli_state")
M.dashboard = module_command("luacrawl.cli_dashboard")
M.report = module_command("luacrawl.cli_report")
M.shell = module_command("luacrawl.shell")

local commands = {
  run = M.run_file, lua = M.lua_file, fetch = M.fetch, crawl = M.crawl, shell = M.shell, state = M.state,
  dashboard = M.dashboard, report = M.report,
}
M.commands = commands

function M.main(args)
  local i = 1
  while args[i] and args[i]:sub(1, 1) == "-" do
    local a = args[i]
    if a == "--help" or a == "-h" then
      io.stdout:write(USAGE)
      return EXIT_OK
    elseif a == "--version" or a == "-V" then
      return version()
    elseif a == "--dns-server" then
      if not args[i + 1] then return usage_error("--dns-server needs a value") end
      if not configure_dns(args[i + 1]) then return EXIT_USAGE end
      i = i + 2
    else
      return usage_error(("unknown option '%s'"):format(a))
    end
  end
  local name = args[i]
  if not name then
    io.stderr:write(USAGE)
    return EXIT_USAGE
  end
  local cmd = commands[name]
  if not cmd then return usage_error(("unknown command '%s'"):format(name)) end
  local rest = {}
  for j = i + 1, #args do rest[#rest + 1] = args[j] end
  return cmd(rest)
end

return M
