-- Helpers of the specs that send requests across the fixture's hosts (a/b/c.crawl.test
-- are 127.0.0.2-4 through the test dnsmasq; the server logs every request with its
-- Authorization and Cookie headers): hostile_scope_spec, http_redirect_spec,
-- http_addr_policy_spec. Requiring it points the engine's DNS at the test dnsmasq.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"
local assert = require "luassert" -- a module sees Lua's assert, not busted's

local M = {}

lc.configure({ dns_servers = h.dns_server })

function M.fetch(url, opts)
  return lc.run(function() return lc.fetch(url, opts) end)
end

function M.control(path, opts)
  local res = assert(M.fetch(h.url(path), opts))
  return cjson.decode(res.body)
end

function M.reset()
  M.control("/__reset")
end

function M.requests(host)
  return M.control("/__log" .. (host and ("?host=" .. host) or "")).requests
end

function M.on(host, path)
  return h.url(path, host)
end

function M.esc(s)
  return (s:gsub("[^%w%-._~/]", function(c) return ("%%%02X"):format(c:byte()) end))
end

-- A URL on from_host that redirects to `to`.
function M.redirect(from_host, to, status)
  return M.on(from_host, "/redirect-to?url=" .. M.esc(to) .. (status and ("&status=" .. status) or ""))
end

function M.run(spec)
  spec.quiet = true
  spec.progress = false
  spec.signals = false
  return crawl.run(spec)
end

M.CREDENTIALS = {
  Authorization = "Bearer secret-token", Cookie = "sid=secret", ["Proxy-Authorization"] = "Basic c2VjcmV0",
  ["X-Other"] = "kept",
}

-- The headers /echo received, after the redirects of M.fetch(url, opts).
function M.echoed(url, opts)
  local res, err = M.fetch(url, opts)
  assert(res, tostring(err))
  assert.equal(200, res.status)
  return cjson.decode(res.body).headers
end

return M
