-- luacrawl.render_archive: the main document's HTTP exchange of a render with
-- archive = true, taken from the browser's Network events, for the WARC writer
-- (warc.lua writes it as request and response records before the DOM's conversion
-- record). A browser does not hand over the bytes it read, so the records hold:
--   response: the head as received (CDP's headersText, HTTP/1.x) or rebuilt from the
--     status and headers reported (HTTP/2, or no raw text), less Content-Encoding,
--     with a Content-Length of the payload; the payload is the body the browser
--     returns (Network.getResponseBody): its Content-Encoding undone, a text body in
--     UTF-8.
--   request: rebuilt from the method, URL and headers the browser reports it sent
--     (cookies included; the header order is not reported: by name, Host first).
-- Only the last hop of an HTTP redirect chain is kept (the document the DOM came from).
local lc = require "luacrawl"
local core = require "luacrawl.core"

local pairs, ipairs, type, tostring, pcall, error = pairs, ipairs, type, tostring, pcall, error
local concat, sort = table.concat, table.sort

local M = {}

local Capture = {}
Capture.__index = Capture

-- A render's capture: fed every event of the page (Capture:event), asked for the
-- exchange once the page has settled (Capture:exchange).
function M.new()
  return setmetatable({ sent = {}, received = {} }, Capture)
end

-- The main frame's document request (the last one: redirects and script navigations
-- replace it) and the raw headers of every request (they may come before it).
function Capture:event(r, method, p)
  if method == "Network.requestWillBeSent" then
    if p.type == "Document" and p.frameId == r.frame then
      self.id, self.request, self.wall, self.response = p.requestId, p.request, p.wallTime, nil
    end
  elseif method == "Network.responseReceived" then
    if p.requestId == self.id and p.type == "Document" then self.response = p.response end
  elseif method == "Network.requestWillBeSentExtraInfo" then
    self.sent[p.requestId] = p.headers
  elseif method == "Network.responseReceivedExtraInfo" then
    self.received[p.requestId] = p
  end
end

local PROTOCOLS = { ["http/1.0"] = "HTTP/1.0", ["http/1.1"] = "HTTP/1.1", h2 = "HTTP/2", h3 = "HTTP/3" }

-- CDP's headers ({name = value}, repeated ones joined by "\n") as lines, by name;
-- HTTP/2's pseudo-headers left out.
local function header_lines(headers, out, skip)
  local names = {}
  for k in pairs(headers or {}) do
    if type(k) == "string" and k:sub(1, 1) ~= ":" and not (skip and skip[k:lower()]) then names[#names + 1] = k end
  end
  sort(names, function(a, b) return a:lower() < b:lower() end)
  for _, k in ipairs(names) do
    for v in (tostring(headers[k]) .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = k .. ": " .. v end
  end
  return out
end

local function request_text(self, proto)
  local req = self.request
  local headers = self.sent[self.id] or req.headers or {}
  local target = req.url:match("^%a[%w+.-]*://[^/?#]*([^#]*)") or "/"
  if target == "" then target = "/" end
  if target:sub(1, 1) == "?" then target = "/" .. target end
  local lines = { ("%s %s %s"):format(req.method or "GET", target, proto) }
  local host
  for k, v in pairs(headers) do
    if k:lower() == "host" or k == ":authority" then host = host or v end
  end
  lines[2] = "Host: " .. (host or lc.url.host(req.url) or "")
  header_lines(headers, lines, { host = true })
  return concat(lines, "\r\n") .. "\r\n\r\n"
end

-- The head the records keep: as received (or rebuilt), less what the decoded payload
-- no longer has (Content-Encoding; Content-Length, given again).
local DROP = { ["content-encoding"] = true, ["content-length"] = true }

local function response_head(self, proto, payload)
  local res, extra = self.response, self.received[self.id]
  local lines = {}
  local text = extra and extra.headersText
  if type(text) == "string" and text:match("^HTTP/%d") then
    for line in text:gmatch("([^\r\n]*)\r?\n") do
      local name = line:match("^([^:]+):")
      if line ~= "" and not (name and DROP[name:lower()]) then lines[#lines + 1] = line end
    end
  else
    lines[1] = ("%s %d %s"):format(proto, res.status or 200, res.statusText or "")
    header_lines(extra and extra.headers or res.headers, lines, DROP)
  end
  lines[#lines + 1] = "Content-Length: " .. #payload
  return concat(lines, "\r\n") .. "\r\n\r\n"
end

-- The exchange ({url, ip, date, request, head, payload}) of the page's document, or
-- nil when the browser has none to give (no response seen, or its body gone).
-- call(method, params) is the render's call to its page (raises).
function Capture:exchange(call)
  local res = self.response
  if not res or not self.request then return nil end
  local ok, body = pcall(call, "Network.getResponseBody", { requestId = self.id })
  if not ok then
    if lc.is_error(body) and body.kind == "render" then return nil end -- no body kept
    error(body, 0)
  end
  local payload = body.body or ""
  if body.base64Encoded then payload = core.base64_decode(payload) end
  local proto = PROTOCOLS[(res.protocol or ""):lower()] or "HTTP/1.1"
  local ip = res.remoteIPAddress
  if type(ip) == "string" then ip = ip:gsub("^%[(.*)%]$", "%1") end
  return {
    url = res.url or self.request.url, ip = ip ~= "" and ip or nil, date = self.wall,
    request = request_text(self, proto), head = response_head(self, proto, payload), payload = payload,
  }
end

return M
