-- luacrawl.sitemap: sitemaps (sitemaps.org) for crawl scripts.
--   local sitemap = require "luacrawl.sitemap"
--   local sm, err = sitemap.parse(body)
--   sm.kind      "urlset", "index" (a sitemap index: each loc is another sitemap) or "text"
--   sm.entries   { {loc=, lastmod=, changefreq=, priority=}, ... } in document order
-- Gzipped bodies are recognised by their magic bytes. XML is read by libxml2's
-- streaming reader (no external entities, no network). Limits, as the protocol sets
-- them: 50,000 URLs and 50 MB uncompressed; past either, nil and an error naming it.
-- Errors: nil and {kind = "parse" (or "memory"), message =}; a body that is not a
-- string raises.
local core = require "luacrawl.core"

local M = {}

M.max_urls = 50000
M.max_bytes = 50 * 1024 * 1024

function M.parse(body)
  if type(body) ~= "string" then error("sitemap.parse: body must be a string", 2) end
  return core.sitemap_parse(body)
end

return M
