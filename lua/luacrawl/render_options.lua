-- luacrawl.render_options: the options lc.render takes (render.lua), checked and
-- filled in with their defaults; a mistake raises naming the option, with "did you
-- mean" for an unknown name. lc.browser's option names too.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local spec_check = require "luacrawl.spec_check"

local M = {}

local OPTIONS = { "wait", "timeout", "viewport", "block", "script", "scroll", "screenshot",
  "public_only", "deny_networks", "cookies", "archive", "user_agent", "headers" }
local BROWSER_OPTIONS = { "path", "args", "render_concurrency", "max_memory", "hang_timeout" }
local WAITS = { load = true, domcontentloaded = true, networkidle = true, settled = true }
local DEFAULT_BLOCK = { "Image", "Font", "Media" }
local DEFAULT_VIEWPORT = { width = 1280, height = 800 }
-- The resource types of CDP's Network.ResourceType, as `block` takes them (lower case).
local RESOURCE_TYPES = { "document", "stylesheet", "image", "media", "font", "script",
  "texttrack", "xhr", "fetch", "prefetch", "eventsource", "websocket", "manifest",
  "signedexchange", "ping", "cspviolationreport", "preflight", "other" }


local function check_keys(t, known, what)
  local set = {}
  for _, k in ipairs(known) do set[k] = true end
  for k in pairs(t) do
    if not set[k] then
      error(("%s: unknown option '%s'%s"):format(what, tostring(k),
        spec_check.hint(tostring(k), known)), 3)
    end
  end
end

local function check_wait(w)
  if w == nil then return "load" end
  if type(w) == "string" and WAITS[w] then return w end
  if type(w) == "table" and type(w.css) == "string" and next(w, next(w)) == nil then return w end
  error("render: option 'wait' must be \"load\", \"domcontentloaded\", \"networkidle\", "
    .. "\"settled\" or { css = SELECTOR }", 3)
end

local function check_block(b)
  local types = {}
  local list = b == nil and DEFAULT_BLOCK or b
  if type(list) ~= "table" then error("render: option 'block' must be a list of resource types", 3) end
  for _, t in ipairs(list) do
    local name = type(t) == "string" and t:lower()
    local known = false
    for _, k in ipairs(RESOURCE_TYPES) do known = known or k == name end
    if not known then
      error(("render: option 'block': unknown resource type '%s'%s"):format(tostring(t),
        spec_check.hint(tostring(t), RESOURCE_TYPES)), 3)
    end
    types[name] = true
  end
  return types
end

local function check_opts(opts)
  if opts ~= nil and type(opts) ~= "table" then error("render: options must be a table", 3) end
  opts = opts or {}
  check_keys(opts, OPTIONS, "render")
  local o = { wait = check_wait(opts.wait), block = check_block(opts.block) }
  o.timeout = opts.timeout or 30
  if type(o.timeout) ~= "number" or o.timeout <= 0 then
    error("render: option 'timeout' must be a number of seconds above 0", 3)
  end
  local v = opts.viewport or DEFAULT_VIEWPORT
  if type(v) ~= "table" or type(v.width) ~= "number" or type(v.height) ~= "number"
      or v.width < 1 or v.height < 1 or v.width > 10000 or v.height > 10000 then
    error("render: option 'viewport' must be { width = 1..10000, height = 1..10000 }", 3)
  end
  o.viewport = v
  if opts.script ~= nil and type(opts.script) ~= "string" then
    error("render: option 'script' must be JavaScript source (a string)", 3)
  end
  o.script = opts.script
  o.scroll = opts.scroll or 0
  if type(o.scroll) ~= "number" or o.scroll < 0 or o.scroll % 1 ~= 0 then
    error("render: option 'scroll' must be a whole number of times", 3)
  end
  o.screenshot = opts.screenshot and true or false
  o.archive = opts.archive and true or false -- the document's exchange kept (render_archive.lua)
  o.public_only, o.deny_networks = opts.public_only, opts.deny_networks
  if opts.cookies ~= nil and opts.cookies ~= false and not lc.is_cookies(opts.cookies) then
    error("render: option 'cookies' must be a cookie jar (lc.cookies()) or false", 3)
  end
  o.cookies = opts.cookies or nil
  if opts.user_agent ~= nil and (type(opts.user_agent) ~= "string" or opts.user_agent == "") then
    error("render: option 'user_agent' must be a string", 3)
  end
  local ok, err = pcall(core.check_fetch_options, { user_agent = opts.user_agent, headers = opts.headers })
  if not ok then error((tostring(err):gsub("^fetch: ", "render: ")), 3) end
  o.user_agent, o.headers = opts.user_agent, opts.headers
  return o
end

M.check, M.check_keys = check_opts, check_keys
M.BROWSER_OPTIONS, M.DEFAULT_VIEWPORT = BROWSER_OPTIONS, DEFAULT_VIEWPORT

return M
