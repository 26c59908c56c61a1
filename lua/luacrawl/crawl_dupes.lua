-- luacrawl.crawl_dupes: content duplicates. Each 2xx body of a crawl is digested
-- (core.digest: 128-bit XXH3); a page whose body a page fetched before it had is
-- marked page.duplicate_of = that page's URL, and counted in stats.content_duplicates.
-- dedupe_content = true also skips its parse (crawl.lua); false digests nothing.
-- Costs a pass over each body and an entry per distinct body for the crawl, kept
-- outside the Lua heap (core.dupes: the digest and the URL, about 80 bytes and
-- the URL's), so that the collector never walks them.
local core = require "luacrawl.core"

local digest = core.digest

local M = {}
M.__index = M

function M.new(spec)
  if spec.dedupe_content == false then return nil end
  -- With a state the digest is stored (crawl_state.lua): made as hex and kept in
  -- the response; without, the body goes to the map as it is (dupes:see), and no
  -- Lua string is made of its digest.
  return setmetatable({ first = core.dupes(), keep = spec.state ~= nil }, M)
end

-- The digest of a response's body as it is (outside the Lua heap), not res.body: a
-- body is made a Lua string only when a script reads it. Kept in the response: the
-- crawl's state records it too (crawl_state.lua). nil for an empty body.
function M.digest_of(res)
  local d = rawget(res, "_digest")
  if d then return d end
  local body = rawget(res, "body") or rawget(res, "_body")
  if body == nil or #body == 0 then return nil end
  d = digest(body)
  rawset(res, "_digest", d)
  return d
end

function M:mark(page, stats)
  local status = page.status
  if status < 200 or status >= 300 then return end
  local res = rawget(page, "response")
  if res == nil then return end
  local first
  if self.keep then
    local d = M.digest_of(res)
    if d == nil then return end
    first = self.first:first(d, page.url)
  else
    local body = rawget(res, "body") or rawget(res, "_body")
    if body == nil or #body == 0 then return end
    first = self.first:see(body, page.url)
  end
  if first then
    rawset(page, "duplicate_of", first)
    stats.content_duplicates = (stats.content_duplicates or 0) + 1
  end
end

return M
