-- luacrawl.extract: record fields from selectors, as the command line gives them
-- (`luacrawl crawl --css title=title --xpath 'price=//span[@class="p"]'`, the same on
-- `luacrawl fetch`) and a spec's `extract` list holds them:
--   { name = "title", css = "title" }            the first match's text
--   { name = "tags", css = "a.tag", all = true } every match, as a list
--   { name = "price", xpath = "//span[@class='p']" }
-- A match that is an element gives its text, whitespace squashed (runs of spaces,
-- tabs and newlines as one space, none at either end); a selector ending in ::text or
-- ::attr(name), or an XPath giving strings, gives the values as they are. A page
-- where a selector matches nothing (or that is not HTML) gets null ([] for `all`):
-- its record is never dropped.
local core = require "luacrawl.core"

local null = core.json_null

local M = {}

local NAME = "^([%a_][%w_%-]*)=(.+)$"

-- A --css/--xpath argument "NAME=SELECTOR" as an extract entry; nil when arg has no
-- name (luacrawl fetch then prints the matches, as before).
function M.from_arg(kind, arg, all)
  local name, sel = arg:match(NAME)
  if not name then return nil end
  return { name = name, [kind] = sel, all = all or nil }
end

local function selector_error(where, e, err)
  local msg = tostring(err):gsub("^[^:]*:%d+: ", "")
  return ("%s: %s '%s': %s"):format(where, e.css and "CSS selector" or "XPath expression", e.css or e.xpath, msg)
end

-- Each entry checked (a name, one selector that compiles); raises a one-line error
-- naming the bad one. where: "crawl.run: extract", "--css", ...
function M.check(list, where)
  if type(list) ~= "table" then error(("%s must be a list of {name =, css = | xpath =}"):format(where), 0) end
  local names = {}
  for i, e in ipairs(list) do
    if type(e) ~= "table" or type(e.name) ~= "string" or not e.name:match("^[%a_][%w_%-]*$") then
      error(("%s: entry %d needs a name (letters, digits, _ and -)"):format(where, i), 0)
    end
    if (e.css == nil) == (e.xpath == nil) then
      error(("%s: %s needs one of css or xpath"):format(where, e.name), 0)
    end
    for k in pairs(e) do
      if k ~= "name" and k ~= "css" and k ~= "xpath" and k ~= "all" then
        error(("%s: %s: unknown key '%s' (name, css, xpath, all)"):format(where, e.name, tostring(k)), 0)
      end
    end
    if names[e.name] then error(("%s: the field %s is given twice"):format(where, e.name), 0) end
    names[e.name] = true
    local ok, err
    if e.css then
      ok, err = pcall(require("luacrawl.css").to_plan, e.css)
    else
      ok, err = pcall(core.html.compile, e.xpath)
    end
    if not ok then error(selector_error(where, e, err), 0) end
  end
  return list
end

local function squash(s)
  return (s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

local function value(m)
  if type(m) == "userdata" then return squash(m:text()) end
  if type(m) == "number" or type(m) == "boolean" then return m end
  return m == nil and null or tostring(m)
end

-- rec[name] for each entry of list, from doc (nil: the page is not HTML).
function M.fill(rec, list, doc)
  for _, e in ipairs(list) do
    local v = null
    if doc then
      if e.all then
        local matches = e.css and doc:css(e.css) or doc:xpath(e.xpath)
        v = setmetatable({}, core.json_array_mt)
        for i, m in ipairs(matches) do v[i] = value(m) end
      else
        local m
        if e.css then m = doc:css1(e.css) else m = doc:xpath1(e.xpath) end
        if m ~= nil then v = value(m) end
      end
    elseif e.all then
      v = setmetatable({}, core.json_array_mt)
    end
    rec[e.name] = v
  end
  return rec
end

return M
