-- luacrawl.save: fetched bodies kept as files for offline reading, as `wget -x` keeps
-- them: DIR/HOST/PATH (lc.save; `luacrawl crawl --save DIR`). The faithful archive is
-- WARC (--warc); this is for reading a site with a browser or grep.
--   save.path(url) -> "host/a/b.html" | nil, err      where under DIR a URL's body goes
--   save.write(dir, url, body) -> path | nil, err     the body written there (err.kind "io")
-- The mapping: the host (lower case; ":port" when it is not the scheme's), then the
-- path's segments as the normalized URL writes them (percent-escapes kept, so that no
-- segment can be "..", hold a '/' or a NUL); a path ending in '/' gets "index.html";
-- the query is kept in the last name after a '?'. A name over 255 bytes (what file
-- systems take) is cut and given a hash of the whole, so that two long names stay two.
-- A page whose path is also a folder of others ("/a" and "/a/b") is kept as
-- a/index.html, whichever came first. Nothing is ever written outside DIR: the C side
-- (core.save_under) checks every segment again and follows no symbolic link.
local lc = require "luacrawl"
local core = require "luacrawl.core"

local M = {}

local NAME_MAX = 255
local DEFAULT_PORT = { http = 80, https = 443 }

-- A name a file system takes: at most NAME_MAX bytes, never "", "." or "..".
local function safe_name(s)
  if s == "" then return "%2F" end -- an empty segment ("a//b")
  if s == "." or s == ".." then return (s:gsub("%.", "%%2E")) end
  if #s <= NAME_MAX then return s end
  local ext = s:match("(%.[%w]+)$") or ""
  if #ext > 16 then ext = "" end
  local hash = core.digest(s):sub(1, 16)
  return s:sub(1, NAME_MAX - #ext - 17) .. "~" .. hash .. ext
end

function M.path(url)
  local u, err = lc.url.parse(lc.url.normalize(url) or url)
  if not u then return nil, lc.is_error(err) and err or lc.error("invalid_url", tostring(err)) end
  if u.scheme ~= "http" and u.scheme ~= "https" then
    return nil, lc.error("invalid_url", "not an http(s) URL: " .. url)
  end
  local host = u.host
  if host:find(":", 1, true) then host = "[" .. host .. "]" end -- IPv6
  if u.port and u.port ~= DEFAULT_PORT[u.scheme] then host = host .. ":" .. u.port end
  local parts = { safe_name(host) }
  local path = u.path or "/"
  local segs = {}
  for seg in (path:sub(2) .. "/"):gmatch("([^/]*)/") do segs[#segs + 1] = seg end
  -- "/a/b/" splits to a, b, "": the last one is the page's own name.
  local last = table.remove(segs)
  for _, seg in ipairs(segs) do parts[#parts + 1] = safe_name(seg) end
  if last == "" then last = "index.html" end
  if u.query and u.query ~= "" then last = last .. "?" .. u.query end
  parts[#parts + 1] = safe_name(last)
  return table.concat(parts, "/")
end

function M.write(dir, url, body)
  local rel, err = M.path(url)
  if not rel then return nil, err end
  return core.save_under(dir, rel, body)
end

return M
