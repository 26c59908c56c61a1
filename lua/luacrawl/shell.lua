-- luacrawl.shell: `luacrawl shell [URL]`, a Lua REPL for trying selectors.
-- Helpers: fetch(url [, opts]) sets `res`, `doc` and `page` (a failed fetch clears
-- them); css(sel), css1(sel), xpath(expr), xpath1(expr), links() query `doc`; `page`
-- is the page a spec's parse gets (crawl.page), so parse(page) can be tried on it;
-- view(x) pretty-prints; help lists all this; exit() and quit() end the shell. Every
-- global of a script (lc = require "luacrawl" included) is there too. Results are
-- printed pretty. Line editing on a terminal (libedit), with the history kept
-- between sessions in $XDG_STATE_HOME/luacrawl/shell_history (~/.local/state when
-- unset); plain stdin otherwise.
-- Reading a line blocks the whole process: fetches run between prompts.
-- Nothing a server sent reaches the terminal raw: strings are printed as Lua
-- literals (control characters, and every byte of a string that is not UTF-8, as
-- \ddd escapes), everything else through core.plain_text.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local plain_text = core.plain_text

local M = {}

local function is_node(v)
  if type(v) ~= "userdata" then return false end
  local ok, tag = pcall(function() return v.tag end)
  return ok and tag ~= nil
end

local function short(s, n)
  s = s:gsub("%s+", " ")
  if #s > n then return s:sub(1, n - 3) .. "..." end
  return s
end

-- A readable rendering of v: strings quoted, nodes as their HTML, tables nested.
function M.pretty(v, indent, seen)
  indent = indent or ""
  seen = seen or {}
  local t = type(v)
  if t == "string" then
    -- %q escapes the C0 controls and DEL; bytes from 0x80 it leaves as they are.
    local q = ("%q"):format(v):gsub("\\\n", "\\n")
    if plain_text(q) ~= q then q = q:gsub("[\128-\255]", function(c) return "\\" .. c:byte() end) end
    return q
  end
  if is_node(v) then return "<" .. v.tag .. "> " .. short(v:html(), 100) end
  if t ~= "table" then return tostring(v) end
  if getmetatable(v) == lc.Response then return M.describe(v) end
  if seen[v] then return "<cycle>" end
  if getmetatable(v) and getmetatable(v).__tostring then return tostring(v) end
  seen[v] = true
  local parts, n = {}, #v
  for i = 1, math.min(n, 50) do parts[#parts + 1] = M.pretty(v[i], indent .. "  ", seen) end
  if n > 50 then parts[#parts + 1] = ("... (%d more)"):format(n - 50) end
  local keys = {}
  for k in pairs(v) do
    if not (type(k) == "number" and k >= 1 and k <= n and k % 1 == 0) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    local val = v[k]
    if type(val) == "string" and #val > 200 then val = short(val, 200) end
    parts[#parts + 1] = ("%s = %s"):format(tostring(k), M.pretty(val, indent .. "  ", seen))
  end
  seen[v] = nil
  if #parts == 0 then return "{}" end
  local one = "{ " .. table.concat(parts, ", ") .. " }"
  if #one <= 100 then return one end
  return "{\n" .. indent .. "  " .. table.concat(parts, ",\n" .. indent .. "  ") .. "\n" .. indent .. "}"
end

-- A response as the shell shows it: its status, URL and size, not its fields (the
-- body and parsed document are held in internal fields a table dump would show).
-- The shell's own res (env given) is shown as the line after the first fetch.
function M.describe(res, env)
  local s = ("%d %s (%d bytes)"):format(res.status, res.url, #res.body)
  if env and env.res == res then return "res = " .. s .. (env.doc and "; doc ready" or "") end
  return "<response " .. s .. ">"
end

M.HELP = [[
luacrawl shell: Lua with these helpers (and every global a script has: lc, ...)
  fetch(url [, opts])  fetch a page: sets res, doc and page (a failed fetch clears them)
  res                  the last response: res.status, res.headers, res.body, res.url
  doc                  its HTML document (res:html())
  css(sel), css1(sel)  CSS matches in doc, all or the first ("a::attr(href)", "h1::text")
  xpath(e), xpath1(e)  XPath matches in doc, all or the first
  links([opts])        the links of doc, absolute
  page                 the page a crawl spec's parse gets: try parse(page), page.items
  view(x)              print x pretty
  help                 this text
  exit(), quit()       end the shell (so does Ctrl-D)]]

-- The page crawl.page makes of res, as a crawl's parse would get it.
local function page_of(res)
  return require("luacrawl.crawl").page {
    url = res.url, body = res.body, status = res.status, headers = res.headers,
  }
end

-- The environment lines run in. `page` is made on first use after each fetch.
local function new_env(out)
  local env
  env = setmetatable({}, {
    __index = function(_, k)
      if k == "page" and rawget(env, "res") then
        local page = page_of(env.res)
        rawset(env, "page", page)
        return page
      end
      return _G[k]
    end,
  })
  env.lc = lc
  env.view = function(v) out(M.pretty(v)) end
  env.help = setmetatable({}, {
    __tostring = function() return M.HELP end,
    __call = function() out(M.HELP) end,
  })
  local function leave(code) env.exit_code = code or 0 end
  env.exit, env.quit = leave, leave
  -- fetch(url [, opts]): sets res and doc, and says so as the first fetch does;
  -- returns the response for `r = fetch(url)` (shown as M.describe shows it). A
  -- failed fetch clears them: a query then says so, rather than answer from the
  -- page before.
  env.fetch = function(url, opts)
    local res, err = lc.fetch(url, opts)
    env.res, env.doc, env.page = nil, nil, nil
    if not res then
      env.failed = url
      return nil, err
    end
    env.res, env.failed = res, nil
    local ct = res.headers["content-type"] or ""
    if ct:find("html", 1, true) or ct == "" then env.doc = res:html() end
    return res
  end
  local function need_doc()
    if env.doc then return env.doc end
    if env.failed then error("no document: the fetch of " .. env.failed .. " failed", 3) end
    if env.res then error("no document: the response is not HTML", 3) end
    error("no document yet: fetch(url) first", 3)
  end
  env.css = function(sel) return need_doc():css(sel) end
  env.css1 = function(sel) return need_doc():css1(sel) end
  env.xpath = function(expr) return need_doc():xpath(expr) end
  env.xpath1 = function(expr) return need_doc():xpath1(expr) end
  env.links = function(opts) return need_doc():links(opts) end
  return env
end

-- Where the history is kept between sessions: $XDG_STATE_HOME/luacrawl/shell_history,
-- or ~/.local/state/luacrawl/shell_history; nil when neither is known.
function M.history_path()
  local base = os.getenv("XDG_STATE_HOME")
  if not base or base == "" then
    local home = os.getenv("HOME")
    if not home or home == "" then return nil end
    base = home .. "/.local/state"
  end
  return base .. "/luacrawl/shell_history"
end

-- The history file, its folder made when missing; nil when it cannot be.
local function open_history()
  local path = M.history_path()
  if not path then return nil end
  local dir = path:match("^(.*)/[^/]*$")
  if not core.mkdirs(dir) then return nil end
  core.read_history(path)
  return path
end

-- Compile a line as an expression first ("1+1" prints 2), then as a statement.
local function compile(src, env)
  local fn = loadstring("return " .. src, "=shell")
  if not fn then
    local err
    fn, err = loadstring(src, "=shell")
    if not fn then return nil, err end
  end
  setfenv(fn, env)
  return fn
end

local function incomplete(err)
  return err and err:find("<eof>", 1, true) ~= nil
end

function M.main(args)
  local interactive = core.isatty(0) and core.isatty(1)
  local function out(s) io.stdout:write(plain_text(s, "\t\n"), "\n") end
  local read
  if interactive then
    read = function(prompt) return core.readline(prompt) end
  else
    read = function() return io.stdin:read("*l") end
  end
  local env = new_env(out)
  if args[1] then
    local res, err = env.fetch(args[1])
    if res then
      out(M.describe(res, env))
    else
      out("fetch failed: " .. tostring(err))
    end
  end
  local history = interactive and open_history() or nil
  if interactive then out("luacrawl shell: fetch(url), css(sel), xpath(expr), links(), page; help lists all; Ctrl-D quits") end
  local buffer = ""
  while true do
    local line = read(buffer == "" and "lc> " or ".. ")
    if not line then break end
    buffer = buffer == "" and line or (buffer .. "\n" .. line)
    local fn, err = compile(buffer, env)
    if not fn and incomplete(err) then
      -- wait for the rest of the statement
    else
      if interactive and buffer:find("%S") then
        core.add_history(buffer)
        if history then core.write_history(history) end
      end
      if not fn then
        out(err)
      elseif buffer:find("%S") then
        local r = { n = 0 }
        local function collect(ok, ...)
          r = { n = select("#", ...), ... }
          return ok
        end
        if collect(pcall(fn)) then
          for i = 1, r.n do
            local v = r[i]
            out(getmetatable(v) == lc.Response and M.describe(v, env) or M.pretty(v))
          end
        else
          out("error: " .. tostring(r[1]))
        end
      end
      buffer = ""
      if env.exit_code then break end
    end
  end
  if interactive then out("") end
  return tonumber(env.exit_code) or 0
end

return M
