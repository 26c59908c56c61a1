-- luacrawl.css: CSS selectors compiled to XPath 1.0, for libxml2 to evaluate.
--
-- API
--   css.to_xpath(selector) -> xpath     raises on a bad selector; results are cached
--                                       (a bounded table keyed by selector string)
--   css.to_plan(selector) -> plan       what doc:css() evaluates (engine/html_select.c):
--       a list, one entry per selector of the group: {subject = test, tail = "text"
--       | "attr" | nil, attr = name, deep = bool, {test =, comb =}, ...}, where each
--       test is an XPath matching one element against one compound ("self::p[...]")
--       and the list part holds the compounds left of the subject, left to right,
--       each with the combinator to its right. subject is nil for a bare
--       pseudo-element. The engine walks the combinators in time linear in the
--       document: the single expression of to_xpath nests a predicate per combinator,
--       which libxml2 evaluates in time growing as the depth of nesting to the power
--       of the number of combinators. Both select the same nodes in the same order.
--
-- Semantics: the XPath is relative to a context node (the document, or an element)
-- and selects what the browser's context:querySelectorAll(selector) selects: the
-- context's descendants (never the context itself) that match the whole selector,
-- where the compounds left of the subject may match anywhere in the document,
-- ancestors of the context included. To get this, selectors are compiled right to
-- left the way browsers match them: the subject becomes `descendant::T[...]` and each
-- combinator to its left a predicate (`ancestor::`, `parent::`, `preceding-sibling::`).
-- So a sibling combinator never escapes the context's subtree, which cssselect's
-- `descendant-or-self::h2/following-sibling::p` would do for an <h2> context.
--
-- Supported: type, `*`, #id, .class (whitespace-token exact), [a], [a=v], [a~=v],
-- [a|=v], [a^=v], [a$=v], [a*=v] (values quoted or not, `i` flag for ASCII case-
-- insensitive), descendant, `>`, `+`, `~`, groups with `,`; :first-child, :last-child,
-- :only-child, :first-of-type, :last-of-type, :only-of-type, :nth-child(),
-- :nth-last-child(), :nth-of-type(), :nth-last-of-type() (an+b, odd, even),
-- :not(compound, ...), :empty, :root, and :contains("text") (cssselect's extension:
-- the element's text content contains the string). The *-of-type pseudo-classes need
-- a type selector in their compound (XPath 1.0 cannot name the context's own type).
--
-- Pseudo-elements (parsel's), last in a selector: `sel::text` selects the text nodes
-- that are direct children of the matched elements, `sel::attr(name)` their attribute
-- `name`. After a space (`sel ::text`, `sel ::attr(name)`) they apply to the matched
-- elements and everything inside them: all the text of `sel`, as in Scrapy. Alone
-- (`::text`, `::attr(href)`) they apply to the context node itself.
--
-- Errors: `css: <what> at position <n> in "<selector>"`, n counting bytes from 1.

local M = {}

local sub, byte, find, format, lower, concat =
  string.sub, string.byte, string.find, string.format, string.lower, table.concat
local char, floor, tonumber, error, type = string.char, math.floor, tonumber, error, type

-- Errors ------------------------------------------------------------------------

local function fail(p, what, pos)
  error(format("css: %s at position %d in %q", what, pos or p.i, p.s), 0)
end

local function unexpected(p)
  if p.i > #p.s then fail(p, "unexpected end of selector") end
  fail(p, format("unexpected '%s'", sub(p.s, p.i, p.i)))
end

-- Characters --------------------------------------------------------------------

local function peek(p, k)
  local i = p.i + (k or 0)
  return sub(p.s, i, i)
end

local function is_space(c)
  return c == " " or c == "\t" or c == "\n" or c == "\r" or c == "\f"
end

local function skip_space(p)
  local start = p.i
  while is_space(peek(p)) do p.i = p.i + 1 end
  return p.i > start
end

local function is_name_start(c)
  return c ~= "" and (find(c, "^[%a_]") ~= nil or byte(c) >= 128)
end

local function is_name_char(c)
  return c ~= "" and (find(c, "^[%w_%-]") ~= nil or byte(c) >= 128)
end

local function utf8(cp)
  if cp == 0 or cp > 0x10FFFF or (cp >= 0xD800 and cp <= 0xDFFF) then cp = 0xFFFD end
  if cp < 0x80 then return char(cp) end
  if cp < 0x800 then return char(0xC0 + floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then
    return char(0xE0 + floor(cp / 4096), 0x80 + floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return char(0xF0 + floor(cp / 262144), 0x80 + floor(cp / 4096) % 64,
    0x80 + floor(cp / 64) % 64, 0x80 + cp % 64)
end

-- A backslash at p.i starts an escape unless a newline follows.
local function is_escape(p, k)
  return peek(p, k) == "\\" and peek(p, (k or 0) + 1) ~= "\n"
end

-- Control characters (XML allows only tab, newline and return) can be in no
-- document XPath reads, nor in an XPath literal.
local function is_control(cp)
  return cp < 0x20 and cp ~= 9 and cp ~= 10 and cp ~= 13 or cp == 0x7F
end

-- Consume the escape at p.i (the backslash) and return the character it stands for.
local function escape(p)
  local s, i = p.s, p.i + 1
  local hex = s:match("^%x%x?%x?%x?%x?%x?", i)
  if hex then
    i = i + #hex
    if sub(s, i, i + 1) == "\r\n" then
      i = i + 2
    elseif is_space(sub(s, i, i)) then
      i = i + 1
    end
    local cp = tonumber(hex, 16)
    if is_control(cp) then fail(p, "invalid character", p.i) end
    p.i = i
    return utf8(cp)
  end
  if i > #s then
    p.i = i
    return utf8(0xFFFD)
  end
  local c = sub(s, i, i)
  if is_control(c:byte()) then fail(p, "invalid character", p.i) end
  p.i = i + 1
  return c
end

-- Name characters (with escapes) from p.i; "" if none.
local function name_chars(p)
  local out = {}
  while true do
    local c = peek(p)
    if is_name_char(c) then
      out[#out + 1] = c
      p.i = p.i + 1
    elseif is_escape(p) then
      out[#out + 1] = escape(p)
    else
      break
    end
  end
  return concat(out)
end

-- A CSS identifier at p.i, or nil (p.i unchanged).
local function ident(p)
  local c, n = peek(p), peek(p, 1)
  local starts = is_name_start(c) or is_escape(p)
  if c == "-" then starts = is_name_start(n) or n == "-" or is_escape(p, 1) end
  if not starts then return nil end
  return name_chars(p)
end

local function quoted(p)
  local q = peek(p)
  local start = p.i
  p.i = p.i + 1
  local out = {}
  while true do
    local c = peek(p)
    if c == "" then fail(p, "unterminated string", start) end
    if c == q then
      p.i = p.i + 1
      return concat(out)
    elseif c == "\\" then
      if peek(p, 1) == "\n" then
        p.i = p.i + 2
      else
        out[#out + 1] = escape(p)
      end
    else
      if is_control(c:byte()) then fail(p, "invalid character", p.i) end
      out[#out + 1] = c
      p.i = p.i + 1
    end
  end
end

-- XPath pieces -----------------------------------------------------------------------

local function literal(s)
  if not find(s, "'", 1, true) then return "'" .. s .. "'" end
  if not find(s, '"', 1, true) then return '"' .. s .. '"' end
  local parts = {}
  for piece in (s .. "'"):gmatch("([^']*)'") do
    if piece ~= "" then parts[#parts + 1] = "'" .. piece .. "'" end
    parts[#parts + 1] = [["'"]]
  end
  parts[#parts] = nil -- the quote added at the end
  return "concat(" .. concat(parts, ", ") .. ")"
end

-- An ASCII XML name, safe to write as an XPath node test. Names with other
-- characters (some of which XML forbids, like U+00D7) are compared with name().
local function is_ncname(s)
  return find(s, "^[%a_][%w_%-%.]*$") ~= nil
end

-- The node test for an element name, and a condition when the name is not a valid
-- XPath name ("my:tag" from HTML markup).
local function name_test(tag)
  if tag == nil or tag == "*" then return "*", nil end
  if is_ncname(tag) then return tag, nil end
  return "*", "name() = " .. literal(tag)
end

local function attr_ref(name)
  if is_ncname(name) then return "@" .. name end
  return "@*[name() = " .. literal(name) .. "]"
end

local UPPER, LOWER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"

local function token_match(ref, v)
  if v == "" or find(v, "[ \t\n\r\f]") then return "false()" end
  return "contains(concat(' ', normalize-space(" .. ref .. "), ' '), " .. literal(" " .. v .. " ") .. ")"
end

local function attr_cond(name, op, value, icase)
  local ref = attr_ref(name)
  if not op then return ref end
  local a = ref
  if icase then
    a = "translate(" .. ref .. ", '" .. UPPER .. "', '" .. LOWER .. "')"
    value = lower(value)
  end
  local v = literal(value)
  local cond
  if op == "=" then
    cond = a .. " = " .. v
  elseif op == "~=" then
    cond = token_match(a, value)
  elseif op == "|=" then
    cond = "(" .. a .. " = " .. v .. " or starts-with(" .. a .. ", " .. literal(value .. "-") .. "))"
  elseif value == "" then
    return "false()" -- ^=, $= and *= with an empty value match nothing
  elseif op == "^=" then
    cond = "starts-with(" .. a .. ", " .. v .. ")"
  elseif op == "$=" then
    cond = "substring(" .. a .. ", string-length(" .. a .. ") - string-length(" .. v .. ") + 1) = " .. v
  else -- *=
    cond = "contains(" .. a .. ", " .. v .. ")"
  end
  if icase then return ref .. " and " .. cond end
  return cond
end

-- Elements whose 0-based index among counted siblings (cnt) is a*n+b-1 for some n >= 0.
local function nth_cond(cnt, a, b)
  local k = b - 1
  if a == 0 then
    if k < 0 then return "false()" end
    return cnt .. " = " .. k
  end
  if a > 0 then
    local mod = a == 1 and "" or " mod " .. a
    if k > 0 then
      if a == 1 then return cnt .. " >= " .. k end
      return "(" .. cnt .. " >= " .. k .. " and (" .. cnt .. " - " .. k .. ")" .. mod .. " = 0)"
    end
    if a == 1 then return "true()" end
    if k == 0 then return cnt .. mod .. " = 0" end
    return "(" .. cnt .. " + " .. -k .. ")" .. mod .. " = 0"
  end
  if k < 0 then return "false()" end
  if a == -1 then return cnt .. " <= " .. k end
  return "(" .. cnt .. " <= " .. k .. " and (" .. k .. " - " .. cnt .. ") mod " .. -a .. " = 0)"
end

-- an+b, odd, even -> a, b (nil if malformed)
local function parse_nth(arg)
  arg = lower(arg):gsub("^%s+", ""):gsub("%s+$", "")
  if arg == "odd" then return 2, 1 end
  if arg == "even" then return 2, 0 end
  local b = arg:match("^[+-]?%d+$")
  if b then return 0, tonumber(b) end
  local a, rest = arg:match("^([+-]?%d*)n(.*)$")
  if not a then return nil end
  a = (a == "" or a == "+") and 1 or a == "-" and -1 or tonumber(a)
  if rest == "" then return a, 0 end
  local sign, digits = rest:match("^%s*([+-])%s*(%d+)$")
  if not sign then return nil end
  b = tonumber(digits)
  return a, sign == "-" and -b or b
end

-- Parsing -------------------------------------------------------------------------

local compound_list

-- The sibling count an *-of-type pseudo-class needs, or an error.
local function typed_count(p, c, axis, pos, name)
  if not c.tag or c.tag == "*" then
    fail(p, format(":%s needs a type selector (like li:%s)", name, name), pos)
  end
  local nt, extra = name_test(c.tag)
  return "count(" .. axis .. "::" .. nt .. (extra and "[" .. extra .. "]" or "") .. ")"
end

local function function_arg(p)
  local close = find(p.s, ")", p.i, true)
  if not close then
    p.i = #p.s + 1
    unexpected(p)
  end
  local arg = sub(p.s, p.i, close - 1)
  p.i = close + 1
  return arg
end

local NTH = {
  ["nth-child"] = { "preceding-sibling", false },
  ["nth-last-child"] = { "following-sibling", false },
  ["nth-of-type"] = { "preceding-sibling", true },
  ["nth-last-of-type"] = { "following-sibling", true },
}

local function pseudo_class(p, c, type_of)
  local pos = p.i
  p.i = p.i + 1 -- ':'
  local name = ident(p)
  if not name then unexpected(p) end
  name = lower(name)
  local conds = c.conds
  if peek(p) ~= "(" then
    local any_sibling = "preceding-sibling::*"
    if name == "first-child" then
      conds[#conds + 1] = "not(" .. any_sibling .. ")"
    elseif name == "last-child" then
      conds[#conds + 1] = "not(following-sibling::*)"
    elseif name == "only-child" then
      conds[#conds + 1] = "not(preceding-sibling::* or following-sibling::*)"
    elseif name == "first-of-type" or name == "last-of-type" or name == "only-of-type" then
      local before = typed_count(p, type_of, "preceding-sibling", pos, name) .. " = 0"
      local after = typed_count(p, type_of, "following-sibling", pos, name) .. " = 0"
      conds[#conds + 1] = name == "first-of-type" and before
        or name == "last-of-type" and after or before .. " and " .. after
    elseif name == "empty" then
      conds[#conds + 1] = "not(* or text())"
    elseif name == "root" then
      conds[#conds + 1] = "not(parent::*)"
    else
      fail(p, format("unknown pseudo-class ':%s'", name), pos)
    end
    return
  end
  p.i = p.i + 1 -- '('
  local nth = NTH[name]
  if nth then
    local argpos = p.i
    local arg = function_arg(p)
    local a, b = parse_nth(arg)
    if not a then fail(p, format("invalid :%s() argument '%s'", name, arg), argpos) end
    local cnt = nth[2] and typed_count(p, type_of, nth[1], pos, name .. "()")
      or "count(" .. nth[1] .. "::*)"
    conds[#conds + 1] = nth_cond(cnt, a, b)
  elseif name == "not" then
    local alts = compound_list(p, type_of)
    conds[#conds + 1] = "not(" .. alts .. ")"
  elseif name == "contains" then
    skip_space(p)
    local q = peek(p)
    local text = (q == '"' or q == "'") and quoted(p) or ident(p)
    if not text then unexpected(p) end
    skip_space(p)
    if peek(p) ~= ")" then unexpected(p) end
    p.i = p.i + 1
    conds[#conds + 1] = "contains(string(.), " .. literal(text) .. ")"
  else
    fail(p, format("unknown pseudo-class ':%s()'", name), pos)
  end
end

local ATTR_OPS = { ["="] = true, ["~="] = true, ["|="] = true, ["^="] = true, ["$="] = true,
  ["*="] = true }

local function attribute(p, c)
  p.i = p.i + 1 -- '['
  skip_space(p)
  local name = ident(p)
  if not name then unexpected(p) end
  if peek(p) == "|" and peek(p, 1) ~= "=" then fail(p, "namespaces are not supported") end
  skip_space(p)
  local op, value, icase
  if peek(p) ~= "]" then
    op = peek(p) == "=" and "=" or sub(p.s, p.i, p.i + 1)
    if not ATTR_OPS[op] then unexpected(p) end
    p.i = p.i + #op
    skip_space(p)
    local q = peek(p)
    if q == '"' or q == "'" then
      value = quoted(p)
    else
      value = name_chars(p) -- an identifier, or leniently a number like 100
      if value == "" then unexpected(p) end
    end
    skip_space(p)
    local flag = lower(peek(p))
    if flag == "i" or flag == "s" then
      icase = flag == "i"
      p.i = p.i + 1
      skip_space(p)
    end
  end
  if peek(p) ~= "]" then unexpected(p) end
  p.i = p.i + 1
  c.conds[#c.conds + 1] = attr_cond(lower(name), op, value, icase)
end

local function pseudo_element(p, sel)
  local pos = p.i
  p.i = p.i + 2 -- '::'
  local name = ident(p)
  if not name then unexpected(p) end
  name = lower(name)
  if name == "text" then
    sel.pseudo = "text"
  elseif name == "attr" then
    if peek(p) ~= "(" then unexpected(p) end
    p.i = p.i + 1
    skip_space(p)
    local attr = ident(p)
    if not attr then unexpected(p) end
    skip_space(p)
    if peek(p) ~= ")" then unexpected(p) end
    p.i = p.i + 1
    sel.pseudo, sel.attr, sel.attr_name = "attr", attr_ref(lower(attr)), lower(attr)
  else
    fail(p, format("unknown pseudo-element '::%s'", name), pos)
  end
end

-- A compound selector: {tag=, conds={...}}, or nil when there is none at p.i. In a
-- selector (sel given) it may end with a pseudo-element; type_of is the compound
-- whose type the *-of-type pseudo-classes refer to (the enclosing one inside :not).
local function compound(p, sel, type_of)
  local c = { conds = {} }
  local any = false
  if peek(p) == "*" then
    c.tag, any = "*", true
    p.i = p.i + 1
  else
    local name = ident(p)
    if name then c.tag, any = lower(name), true end
  end
  if peek(p) == "|" then fail(p, "namespaces are not supported") end
  type_of = c.tag and c or type_of or c
  while true do
    local ch = peek(p)
    if ch == "#" then
      p.i = p.i + 1
      local id = name_chars(p)
      if id == "" then unexpected(p) end
      c.conds[#c.conds + 1] = "@id = " .. literal(id)
    elseif ch == "." then
      p.i = p.i + 1
      local cls = ident(p)
      if not cls then unexpected(p) end
      c.conds[#c.conds + 1] = token_match("@class", cls)
    elseif ch == "[" then
      attribute(p, c)
    elseif ch == ":" and peek(p, 1) == ":" then
      if not sel then unexpected(p) end
      pseudo_element(p, sel)
      return any and c or nil, true
    elseif ch == ":" then
      pseudo_class(p, c, type_of)
    else
      break
    end
    any = true
  end
  return any and c or nil
end

-- The condition that the context node matches compound c (for :not).
local function self_cond(c)
  local conds = {}
  local nt, extra = name_test(c.tag)
  if nt ~= "*" then conds[1] = "self::" .. nt end
  if extra then conds[#conds + 1] = extra end
  for _, x in ipairs(c.conds) do conds[#conds + 1] = x end
  if #conds == 0 then return "true()" end
  return concat(conds, " and ")
end

-- Inside :not( ... ): compounds separated by commas, then ')'. -> XPath condition
function compound_list(p, type_of)
  local alts = {}
  repeat
    skip_space(p)
    local c = compound(p, nil, type_of)
    if not c then unexpected(p) end
    alts[#alts + 1] = "(" .. self_cond(c) .. ")"
    skip_space(p)
    local ch = peek(p)
    if ch == "," then p.i = p.i + 1 elseif ch ~= ")" then unexpected(p) end
  until ch == ")"
  p.i = p.i + 1
  return concat(alts, " or ")
end

local function predicates(conds)
  if #conds == 0 then return "" end
  return "[" .. concat(conds, " and ") .. "]"
end

local AXIS = { [" "] = "ancestor", [">"] = "parent", ["~"] = "preceding-sibling" }

-- The conditions of compound c alone.
local function own_conditions(c)
  local conds = {}
  local _, extra = name_test(c.tag)
  if extra then conds[1] = extra end
  for _, x in ipairs(c.conds) do conds[#conds + 1] = x end
  return conds
end

-- The conditions a node matching parts[k] must meet, with the chain to its left.
local function conditions(parts, combs, k)
  local conds = own_conditions(parts[k])
  if k > 1 then
    local left = parts[k - 1]
    local lconds = conditions(parts, combs, k - 1)
    local nt = name_test(left.tag)
    local comb = combs[k - 1]
    if comb == "+" then
      if nt ~= "*" then table.insert(lconds, 1, "self::" .. nt) end
      conds[#conds + 1] = "preceding-sibling::*[1]" .. predicates(lconds)
    else
      conds[#conds + 1] = AXIS[comb] .. "::" .. nt .. predicates(lconds)
    end
  end
  return conds
end

-- One selector of a group -> {parts =, combs =, pseudo =, attr =, attr_name =, deep =}
local function selector(p)
  skip_space(p)
  local sel = {}
  local parts, combs = {}, {}
  local c, ended = compound(p, sel)
  if not c and not ended then unexpected(p) end
  parts[1] = c
  while not ended do
    local spaced = skip_space(p)
    local ch = peek(p)
    local comb
    if ch == ">" or ch == "+" or ch == "~" then
      comb = ch
      p.i = p.i + 1
      skip_space(p)
    elseif ch == "" or ch == "," then
      break
    elseif spaced and ch == ":" and peek(p, 1) == ":" then
      -- `div ::text`: the pseudo-element of every node in the subtree (parsel's idiom
      -- for all the text inside)
      pseudo_element(p, sel)
      sel.deep, ended = true, true
      break
    elseif spaced then
      comb = " "
    else
      unexpected(p)
    end
    c, ended = compound(p, sel)
    if not c then unexpected(p) end
    combs[#parts] = comb
    parts[#parts + 1] = c
  end
  if ended then
    skip_space(p)
    local ch = peek(p)
    if ch ~= "" and ch ~= "," then unexpected(p) end
  end
  sel.parts, sel.combs = parts, combs
  return sel
end

-- A parsed selector -> XPath
local function selector_xpath(sel)
  local parts, combs = sel.parts, sel.combs
  local tail
  if sel.pseudo == "text" then
    tail = sel.deep and "descendant::text()" or "text()"
  elseif sel.pseudo == "attr" then
    tail = sel.deep and "descendant-or-self::*/" .. sel.attr or sel.attr
  end
  if #parts == 0 then return tail end -- a bare pseudo-element: the context's own
  local subject = parts[#parts]
  local xpath = "descendant::" .. name_test(subject.tag) .. predicates(conditions(parts, combs, #parts))
  if tail then xpath = xpath .. "/" .. tail end
  return xpath
end

-- The test of one element for compound c: an XPath with the element as context.
local function compound_test(c)
  return "self::" .. name_test(c.tag) .. predicates(own_conditions(c))
end

-- A parsed selector -> its plan for doc:css() (see M.to_plan)
local function selector_plan(sel)
  local parts, combs = sel.parts, sel.combs
  local plan = { tail = sel.pseudo, attr = sel.attr_name, deep = sel.deep }
  local k = #parts
  if k == 0 then return plan end -- a bare pseudo-element: the context's own
  plan.subject = compound_test(parts[k])
  for i = 1, k - 1 do plan[i] = { test = compound_test(parts[i]), comb = combs[i] } end
  return plan
end

-- selector string -> list of parsed selectors
local function parse(s)
  local p = { s = s, i = 1 }
  local sels = {}
  if not find(s, "%S") then fail(p, "empty selector") end
  -- Control characters can be in no document XPath reads, nor in an XPath literal.
  local bad = find(s, "[%z\1-\8\11\14-\31\127]")
  if bad then fail(p, "invalid character", bad) end
  repeat
    sels[#sels + 1] = selector(p)
    local more = peek(p) == ","
    if more then p.i = p.i + 1 end
  until not more
  return sels
end

local function compile(s)
  local alts = {}
  for i, sel in ipairs(parse(s)) do alts[i] = selector_xpath(sel) end
  return concat(alts, " | ")
end

-- The cache: bounded, emptied when full (selectors in a crawl are few and fixed).
local CACHE_MAX = 512
local cache, cached = {}, 0

function M.to_xpath(selector_string)
  if type(selector_string) ~= "string" then
    error("css: selector must be a string, got " .. type(selector_string), 2)
  end
  local xpath = cache[selector_string]
  if xpath then return xpath end
  xpath = compile(selector_string)
  if cached >= CACHE_MAX then cache, cached = {}, 0 end
  cache[selector_string] = xpath
  cached = cached + 1
  return xpath
end

function M.to_plan(selector_string)
  if type(selector_string) ~= "string" then
    error("css: selector must be a string, got " .. type(selector_string), 2)
  end
  local sels = parse(selector_string)
  local plan = {}
  for i, sel in ipairs(sels) do plan[i] = selector_plan(sel) end
  return plan
end

return M
