-- lc.url against the WHATWG URL Standard's own conformance cases
-- (tests/data/urltestdata.json, from web-platform-tests; tests/data/README.md has
-- its license), restricted to what a crawler meets: the base or the input is http(s),
-- and the expected result is an http(s) URL or a failure. Each case is compared as
-- the crawler keys URLs: normalize(resolve(base, input)) against normalize(href)
-- (normalize(input) when there is no base); an expected failure must fail. The parts
-- (host, port, pathname, search) are checked against url.parse, and URLs the
-- standard makes equal must have equal fingerprints.
local h = require "spec_helper"
local cjson = require "cjson"
local lc = require "luacrawl"
local url = lc.url

-- Deliberate departures, by their exact input and base (nil: none); docs/toolkit.md
-- lists them with the same reasons.
local DEPARTURES = {
  {
    input = "http://!\"$&'()*+,-.;=_`{}~/",
    base = nil,
    why = "a host of other bytes than letters, digits, '-', '_' and '.' is refused: "
      .. "no DNS name has them",
  },
}

-- Departures of url.parse's parts only (the keys agree).
local PARTS_DEPARTURES = {
  {
    input = "http://`{}:`{}@h/`{}?`{}",
    base = "http://doesnotmatter/",
    why = "` { } in a query are percent-encoded, as RFC 3986 wants them",
  },
}

local function key(input, base)
  return input .. "\0" .. (base or "")
end

local function set_of(list)
  local s = {}
  for _, d in ipairs(list) do s[key(d.input, d.base)] = d.why end
  return s
end

local skip, skip_parts = set_of(DEPARTURES), set_of(PARTS_DEPARTURES)

local function is_http(s)
  return type(s) == "string" and s:match("^[Hh][Tt][Tt][Pp][Ss]?:") ~= nil
end

-- The cases of the subset, in the file's order.
local function load_cases()
  local f = assert(io.open(h.source_dir .. "/tests/data/urltestdata.json", "rb"))
  local all = cjson.decode(f:read("*a"))
  f:close()
  local cases = {}
  for _, c in ipairs(all) do
    if type(c) == "table" then
      local base = c.base ~= cjson.null and c.base or nil
      if (c.failure or is_http(c.href)) and (is_http(base) or is_http(c.input)) then
        c.base = base
        cases[#cases + 1] = c
      end
    end
  end
  return cases
end

-- A readable name for a string with any bytes.
local function show(s)
  if s == nil then return "no base" end
  return '"' .. s:gsub("[%z\1-\31\127\\\"]", function(ch)
    return ("\\x%02x"):format(ch:byte())
  end) .. '"'
end

-- What the crawler would key for the case: nil and a message when it fails.
local function resolved(c)
  if c.base then return url.resolve(c.base, c.input) end
  return c.input, nil
end

local function keyed(c)
  local r, err = resolved(c)
  if not r then return nil, err end
  return url.normalize(r)
end

local cases = load_cases()

describe("the WHATWG URL conformance cases a crawler meets", function()
  it("are the 444 cases of the subset", function()
    assert.equal(444, #cases)
  end)

  local agree, skipped = 0, 0
  for _, c in ipairs(cases) do
    local name = ("%s against %s"):format(show(c.input), show(c.base))
    local why = skip[key(c.input, c.base)]
    if why then
      skipped = skipped + 1
    else
      it((c.failure and "fails: " or "keys as the standard: ") .. name, function()
        local got, err = keyed(c)
        if c.failure then
          assert.is_nil(got, "expected a failure")
        else
          local want = assert(url.normalize(c.href))
          assert.equal(want, got, err)
        end
        agree = agree + 1
      end)
    end
  end

  it("agree, all but the deliberate departures", function()
    print(("\nWHATWG URL cases: %d of %d agree (%d deliberate departures skipped)"):format(
      agree, #cases, skipped))
    assert.equal(#cases - #DEPARTURES, agree)
    assert.equal(#DEPARTURES, skipped)
  end)
end)

describe("url.parse on the conformance cases", function()
  local function default_port(c)
    return c.protocol == "https:" and 443 or 80
  end

  for _, c in ipairs(cases) do
    local k = key(c.input, c.base)
    if not c.failure and not skip[k] and not skip_parts[k] then
      it(("gives the parts of %s against %s"):format(show(c.input), show(c.base)), function()
        local r = assert(resolved(c))
        local p = assert(url.parse(r))
        assert.equal((c.hostname:gsub("^%[(.*)%]$", "%1")), p.host)
        assert.equal(c.port ~= "" and tonumber(c.port) or default_port(c), p.port)
        assert.equal(c.pathname, p.path)
        -- search is "" for no query and for an empty one.
        assert.equal(c.search, p.query and p.query ~= "" and "?" .. p.query or "")
      end)
    end
  end
end)

describe("url.fingerprint on the conformance cases", function()
  it("is equal for URLs whose expected href is equal, and the href's", function()
    local groups, n = {}, 0
    for _, c in ipairs(cases) do
      if not c.failure and not skip[key(c.input, c.base)] then
        local r = assert(resolved(c))
        local g = groups[c.href]
        if not g then
          g = { fp = url.fingerprint(c.href), size = 0 }
          groups[c.href] = g
          n = n + 1
        end
        g.size = g.size + 1
        assert.equal(g.fp, url.fingerprint(r), ("%s against %s"):format(show(c.input), show(c.base)))
      end
    end
    local shared = 0
    for _, g in pairs(groups) do
      if g.size > 1 then shared = shared + 1 end
    end
    assert.is_true(n > 100 and shared > 10)
  end)
end)
