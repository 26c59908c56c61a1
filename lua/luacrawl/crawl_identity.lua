-- luacrawl.crawl_identity: what a crawl tells the sites it visits about itself, and
-- what it keeps of theirs (crawl.lua calls it).
--   contact   a URL or an email address appended to the default User-Agent as
--             "luacrawl/VERSION (+contact)", so that a site's owner can reach whoever
--             runs the crawl; a user_agent of the spec's own (spec.user_agent or
--             spec.fetch.user_agent) is sent as it is.
--   cookies   a cookie jar for the whole crawl (lc.cookies()), on unless false;
--             a jar of the caller's own may be given.
local lc = require "luacrawl"

local M = {}

local function is_contact(s)
  return s:match("^https?://[^%s%c]+$") or s:match("^[^%s%c@]+@[^%s%c@]+%.[^%s%c@]+$")
end

-- Check the spec's contact and cookies fields; raises (level 0) for crawl.run.
function M.check(spec)
  local c = spec.contact
  if c ~= nil and (type(c) ~= "string" or not is_contact(c)) then
    error("crawl.run: contact must be a URL (https://...) or an email address, without spaces", 0)
  end
  local jar = spec.cookies
  if jar ~= nil and jar ~= false and jar ~= true and not lc.is_cookies(jar) then
    error("crawl.run: cookies must be false (no cookies), true or a jar made by lc.cookies()", 0)
  end
end

local function own_agent(spec)
  return spec.user_agent or (type(spec.fetch) == "table" and spec.fetch.user_agent) or nil
end

-- The default User-Agent with the contact in it: nil without a contact, or when the
-- spec sets a User-Agent of its own.
function M.contact_agent(spec)
  if not spec.contact or own_agent(spec) then return nil end
  return ("luacrawl/%s (+%s)"):format(lc.version, spec.contact)
end

-- The User-Agent the crawl sends (and matches robots.txt groups by).
function M.user_agent(spec)
  return own_agent(spec) or M.contact_agent(spec) or "luacrawl/" .. lc.version
end

-- The crawl's cookie jar, nil when cookies are off.
function M.jar(spec)
  if spec.cookies == false then return nil end
  if spec.cookies == nil or spec.cookies == true then return lc.cookies() end
  return spec.cookies
end

return M
