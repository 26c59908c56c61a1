-- luacrawl.host (lc.host): the seam between a script and the C program that embeds
-- the engine (bindings/luacrawl.h, docs/embedding.md).
--   lc.host.NAME(value) -> value   a C function the host registered
--                                  (lc_engine_register); value goes as JSON text
--   lc.host.expose(name, fn)       the host may call fn(value) (lc_engine_call)
--   lc.host.embedded               true when a host drives the engine through the
--                                  library (not the luacrawl binary)
-- Names starting with "_" and "expose" are the module's own.
local M = { embedded = false }

local exposed = {}

function M.expose(name, fn)
  if type(name) ~= "string" or name == "" then error("expose: name must be a non-empty string", 2) end
  if fn ~= nil and type(fn) ~= "function" then error("expose: fn must be a function (or nil to withdraw it)", 2) end
  exposed[name] = fn
end

M._exposed = exposed
-- M._item(item): set by the engine while the host takes items (lc_engine_on_item);
-- the crawl's emit (luacrawl.crawl) hands it every item it records.
M._item = nil

return M
