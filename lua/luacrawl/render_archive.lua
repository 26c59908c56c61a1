-- luacrawl.render_archive: the main document's HTTP exchange of a render with
-- archive = true, and those of its HTTP redirects' hops, taken from the browser's
-- Network events, for the WARC writer (warc.lua writes them as request and response
-- records before the DOM's conversion record). A browser does not hand over the
-- bytes it read off the wire, so the records hold:
--   response: the head as received (CDP's headersText, HTTP/1.x) or rebuilt from the
--     status and headers reported (HTTP/2, or no raw text), less Content-Encoding,
--     with a Content-Length of the payload. The document's payload is its body as
--     the browser got it at Fetch's response stage (Fetch.getResponseBody, render.lua):
--     its Content-Encoding undone (the browser decodes before it), its bytes otherwise
--     as the server sent them (no charset conversion); when the browser gave none
--     there, the body Network.getResponseBody returns (a text body in UTF-8). A
--     redirect's payload is empty: the browser gives no body of a redirect.
--   request: rebuilt from the method, URL and headers the browser reports it sent
--     (cookies included; the header order is not reported: by name, Host first).
local lc = require "luacrawl"
local core = require "luacrawl.core"

local pairs, ipairs, type, tostring, pcall, error = pairs, ipairs, type, tostring, pcall, error
local concat, sort = table.concat, table.sort

local M = {}

local Capture = {}
Capture.__index = Capture

-- A render's capture: fed every event of the page (Capture:event) and the main
-- frame's document bodies as sent (Capture:raw), asked for the exchanges once the
-- page has settled (Capture:exchange).
function M.new()
  return setmetatable({ sent = {}, received = {}, hops = {}, bodies = {} }, Capture)
end

-- An event's list under requestId in t: the ExtraInfo events of one request, one for
-- each hop of its redirects, in order.
local function append(t, id, v)
  local list = t[id]
  if not list then
    list = {}
    t[id] = list
  end
  list[#list + 1] = v
end

-- The main frame's document request (the last one: script navigations replace it),
-- the hops of its HTTP redirects (a hop's response comes with the next hop's
-- request, under the same requestId), and the raw headers of every request (they
-- may come before it).
function Capture:event(r, method, p)
  if method == "Network.requestWillBeSent" then
    if p.type == "Document" and p.frameId == r.frame then
      if p.redirectResponse and p.requestId == self.id then
        self.hops[#self.hops + 1] = { request = self.request, response = p.redirectResponse, wall = self.wall }
      else
        self.hops = {}
      end
      self.id, self.request, self.wall, self.response = p.requestId, p.request, p.wallTime, nil
    end
  elseif method == "Network.responseReceived" then
    if p.requestId == self.id and p.type == "Document" then self.response = p.response end
  elseif method == "Network.requestWillBeSentExtraInfo" then
    append(self.sent, p.requestId, p.headers)
  elseif method == "Network.responseReceivedExtraInfo" then
    append(self.received, p.requestId, p)
  end
end

-- The body of the main frame's document requestId as the server sent it (Fetch's
-- response stage: render.lua).
function Capture:raw(id, body)
  self.bodies[id] = body
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

-- hop: {request =, response =, wall =, n =} (n: its place in the chain, which is
-- also its place among its requestId's ExtraInfo events).
local function request_text(hop, sent, proto)
  local req = hop.request
  local headers = sent or req.headers or {}
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

local function response_head(res, extra, proto, payload)
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

-- The nth ExtraInfo event of requestId in t, when it is the hop's (a response's
-- status says so).
local function extra_of(t, id, n, status)
  local e = t[id] and t[id][n]
  if e and status and e.statusCode and e.statusCode ~= status then return nil end
  return e
end

local function exchange_of(self, hop, n, payload)
  local res = hop.response
  local proto = PROTOCOLS[(res.protocol or ""):lower()] or "HTTP/1.1"
  local ip = res.remoteIPAddress
  if type(ip) == "string" then ip = ip:gsub("^%[(.*)%]$", "%1") end
  local id = self.id
  return {
    url = res.url or hop.request.url, ip = ip ~= "" and ip or nil, date = hop.wall,
    request = request_text(hop, self.sent[id] and self.sent[id][n], proto),
    head = response_head(res, extra_of(self.received, id, n, res.status), proto, payload), payload = payload,
  }
end

-- The exchanges ({url, ip, date, request, head, payload} each) of the page's
-- document: the hops of its HTTP redirects (their bodies, which the browser does not
-- give, empty), then the document itself; nil when the browser has none to give (no
-- response seen, or its body gone). The document's payload is its body as the
-- server sent it when the browser gave it at the response stage (Capture:raw), else
-- what Network.getResponseBody returns. call(method, params) is the render's call to
-- its page (raises).
function Capture:exchange(call)
  local res = self.response
  if not res or not self.request then return nil end
  local payload = self.bodies[self.id]
  if not payload then
    local ok, body = pcall(call, "Network.getResponseBody", { requestId = self.id })
    if not ok then
      if lc.is_error(body) and body.kind == "render" then return nil end -- no body kept
      error(body, 0)
    end
    payload = body.body or ""
    if body.base64Encoded then payload = core.base64_decode(payload) end
  end
  local list = {}
  for n, hop in ipairs(self.hops) do list[n] = exchange_of(self, hop, n, "") end
  local n = #self.hops + 1
  list[n] = exchange_of(self, { request = self.request, response = res, wall = self.wall }, n, payload)
  return list
end

return M
