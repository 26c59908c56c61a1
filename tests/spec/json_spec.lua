-- Specification of core.json_encode (bindings/lua_json.c), the encoder of the item
-- outputs: it must write what lua-cjson's encode writes, byte for byte, and refuse
-- what cjson refuses with the same message. Checked on fixed cases and on random
-- values (seeded: a failure names its seed). The departure, where cjson copies
-- bytes through: strings that are not valid UTF-8 are repaired (each ill-formed
-- sequence, its "maximal subpart", becomes U+FFFD), and the C1 controls, U+2028
-- and U+2029 are escaped, so that every line written is JSON a strict reader takes.
--
-- And of core.json_decode, the strict RFC 8259 decoder (engine/json.c): on valid
-- text it gives what cjson.decode gives; invalid text raises an error that says
-- what is wrong and at which byte. lua-cjson is a dependency of the tests only.

local cjson = require "cjson"
require "luacrawl" -- makes luacrawl.core available
local core = require "luacrawl.core"
local encode, decode = core.json_encode, core.json_decode

local function both(v)
  local ok1, a = pcall(cjson.encode, v)
  local ok2, b = pcall(encode, v)
  return ok1, a, ok2, b
end

local function assert_same(v, what)
  local ok1, a, ok2, b = both(v)
  assert(ok1 == ok2 and a == b,
    ("%s: cjson %s %q, json_encode %s %q"):format(what, tostring(ok1), tostring(a), tostring(ok2), tostring(b)))
end

describe("core.json_encode", function()
  it("writes scalars as cjson does", function()
    for _, v in ipairs({ "", "plain", "a/b", 'q"uote', "back\\slash", "\b\f\n\r\t", "\0\1\31\127",
      "é€😀\u{7ff}\u{a0}\u{2027}\u{202a}\u{10ffff}", true, false, cjson.null, 0, -0.0, 1, -7, 0.1, 1 / 3, 2.5, 1e-7, 1e300, -1e-300,
      12345678901234, 123456789012345, 1e14, 99999999999999, -99999999999999, 2 ^ 53, 2 ^ 63 }) do
      assert_same(v, ("value %q"):format(tostring(v)))
    end
    assert.equal("null", encode(nil))
  end)

  it("writes times in microseconds (printed without printf) as cjson does", function()
    for _, v in ipairs({ 1e-4, 0.0001, 0.000512, 0.00012, 0.000099, 0.5, 1.000001, 12.25,
      99999999.999999, 99999999.9999995, 1e8 - 1e-6, 1e8 + 0.5, 123456.7, 0.1 + 0.2, 1e-4 - 1e-12 }) do
      assert_same(v, ("value %.17g"):format(v))
      assert_same(-v, ("value %.17g"):format(-v))
    end
    local seed = os.time()
    math.randomseed(seed)
    for i = 1, 20000 do
      local scale = 10 ^ math.random(0, 14)
      local v = math.floor(math.random() * scale) / 1e6
      if math.random(0, 3) == 0 then v = v + math.random() * 1e-9 end -- near, not on, a microsecond
      assert_same(v, ("seed %d, value %d (%.17g)"):format(seed, i, v))
    end
  end)

  it("replaces each ill-formed UTF-8 sequence (its maximal subpart) with one U+FFFD", function()
    local R = "\239\191\189" -- U+FFFD
    for _, case in ipairs({
      { "\128", R }, { "\191", R }, { "\192\128", R .. R }, { "\193\191", R .. R },
      { "\194", R }, { "\194x", R .. "x" }, { "\224\128\128", R .. R .. R },
      { "\224\159\191", R .. R .. R }, { "\224\160", R }, { "\226\130", R }, { "\226\130x", R .. "x" },
      { "\237\160\128", R .. R .. R }, { "\237\191\191", R .. R .. R },
      { "\240\128\128\128", R .. R .. R .. R }, { "\240\144\128", R }, { "\240\159\152", R },
      { "\244\144\128\128", R .. R .. R .. R }, { "\245\128", R .. R }, { "\254\255", R .. R },
      { "text/html\255\254\27[31m", "text\\/html" .. R .. R .. "\\u001b[31m" },
      { "a\240\159\152\128\240\159\152b", "a\240\159\152\128" .. R .. "b" },
    }) do
      assert.equal('"' .. case[2] .. '"', encode(case[1]), ("for bytes %q"):format(case[1]))
    end
    -- Keys too.
    assert.equal('{"a' .. R .. '":1}', encode({ ["a\255"] = 1 }))
  end)

  it("escapes the C1 controls, U+2028 and U+2029, which cjson writes as they are", function()
    assert.equal('"\\u0080\\u009b[31m\\u009f\194\160"', encode("\194\128\194\155[31m\194\159\194\160"))
    assert.equal('"a\\u2028b\\u2029c\226\128\167"', encode("a\226\128\168b\226\128\169c\226\128\167"))
    assert.equal("\194\155\226\128\168", decode(encode("\194\155\226\128\168")))
  end)

  it("writes, for any bytes, text the strict decoder reads back as the bytes repaired", function()
    -- The reference: Unicode's maximal subparts, written out in Lua.
    local function repair(s)
      local out, i, n = {}, 1, #s
      while i <= n do
        local c = s:byte(i)
        local len, lo, hi = 0, 0x80, 0xBF
        if c < 0x80 then len = 1
        elseif c >= 0xC2 and c <= 0xDF then len = 2
        elseif c >= 0xE0 and c <= 0xEF then
          len = 3
          if c == 0xE0 then lo = 0xA0 elseif c == 0xED then hi = 0x9F end
        elseif c >= 0xF0 and c <= 0xF4 then
          len = 4
          if c == 0xF0 then lo = 0x90 elseif c == 0xF4 then hi = 0x8F end
        end
        local good = len > 0
        local j = 1
        while good and j < len do
          local b = s:byte(i + j)
          if not b or (j == 1 and (b < lo or b > hi)) or (j > 1 and (b < 0x80 or b > 0xBF)) then
            good = false
          else
            j = j + 1
          end
        end
        if good then
          out[#out + 1] = s:sub(i, i + len - 1)
          i = i + len
        else
          out[#out + 1] = "\239\191\189"
          i = i + j
        end
      end
      return table.concat(out)
    end
    local seed = os.time()
    math.randomseed(seed)
    local R = math.random
    local pieces = { "\128", "\191", "\194", "\224", "\237", "\240", "\244", "\255", "\160", "\144",
      "é", "€", "😀", "\194\155", "\226\128\168", "\27", "\0", "a", '"' }
    for i = 1, 5000 do
      local t = {}
      for j = 1, R(0, 10) do t[j] = R(0, 3) == 0 and string.char(R(0, 255)) or pieces[R(1, #pieces)] end
      local s = table.concat(t)
      local ok, got = pcall(decode, encode(s))
      assert(ok and got == repair(s), ("seed %d, value %d: %q gives %s"):format(seed, i, s, tostring(got)))
    end
  end)

  it("keeps JSON Lines in C until taken (json_lines, json_append, json_take)", function()
    local lines = core.json_lines()
    assert.equal("", core.json_take(lines))
    local values = { { url = "http://a.test/", status = 200, elapsed = 0.0125 }, "x", 1.5, { 1, 2 } }
    local want, held = {}, 0
    for i, v in ipairs(values) do
      want[i] = cjson.encode(v) .. "\n"
      held = held + #want[i]
      assert.equal(held, core.json_append(lines, v))
    end
    -- What cannot be written raises with cjson's message and adds nothing.
    local ok, err = pcall(core.json_append, lines, { f = print })
    assert.is_false(ok)
    assert.equal(select(2, pcall(cjson.encode, { f = print })), err)
    assert.equal(table.concat(want), core.json_take(lines))
    assert.equal("", core.json_take(lines))
    assert.equal(4, core.json_append(lines, { 1 }))
    assert.equal("[1]\n", core.json_take(lines))
    assert.has_error(function() core.json_append({}, 1) end)
  end)

  it("writes an item's fields in their order, from the list or from the keys read once (json_keys)", function()
    local list = { "url", "title", "n", "url", "x/y", "\226\128\168" }
    local keys = core.json_keys(list)
    local items = {
      { url = "http://a.test/", title = "T", n = 1.5, ["x/y"] = { 1, { a = false } } },
      { title = cjson.null, n = 2 }, -- some fields only
      {}, -- none
      { url = "u", other = 1, [1] = "one" }, -- keys that are not fields: after them
      { ["\226\128\168"] = "line separator", n = 0 },
    }
    for _, item in ipairs(items) do
      local a, b = core.json_lines(), core.json_lines()
      core.json_append(a, item, list)
      core.json_append(b, item, keys)
      assert.equal(core.json_take(a), core.json_take(b))
    end
    local lines = core.json_lines()
    assert.equal(#'{"url":"u","title":"T","url":"u"}\n', core.json_append(lines, { url = "u", title = "T" }, keys))
    assert.equal('{"url":"u","title":"T","url":"u"}\n', core.json_take(lines))
    -- What cannot be written raises as without keys, and adds nothing.
    local ok, err = pcall(core.json_append, lines, { url = "u", n = 0 / 0 }, keys)
    assert.is_false(ok)
    assert.matches("NaN", err)
    assert.equal("", core.json_take(lines))
    assert.has_error(function() core.json_keys({ "a", 1 }) end)
  end)

  it("writes arrays, holes and objects as cjson does", function()
    local cases = {
      {}, { 1, 2, 3 }, { [1] = 1, [3] = 3 }, { [2] = 2 }, { [10] = 1 }, { [1] = 1, [2.0] = 2 },
      { a = 1 }, { [1] = 1, n = 2 }, { [1.5] = 1 }, { [-1] = 1 }, { [0] = 1 },
      { x = { y = { z = { 1, 2, {} } } } }, { { {} } }, { [1] = cjson.null, [2] = false },
    }
    for i, v in ipairs(cases) do assert_same(v, "case " .. i) end
  end)

  it("refuses what cjson refuses, with its message", function()
    local deep = {}
    local t = deep
    for _ = 1, 1000 do t[1] = {} t = t[1] end
    local cyclic = {}
    cyclic.self = cyclic
    for i, v in ipairs({ { [1] = 1, [30] = 3 }, { f = print }, { [true] = 1 }, 0 / 0, { 1 / 0 },
      { -1 / 0 }, { x = io.stdout }, { co = coroutine.create(print) }, deep, cyclic }) do
      local ok1, a, ok2, b = both(v)
      assert.is_false(ok1, "cjson accepted case " .. i)
      assert.is_false(ok2, "json_encode accepted case " .. i)
      assert.equal(a, b)
    end
  end)

  it("agrees with cjson on random values", function()
    local seed = os.time()
    math.randomseed(seed)
    local R = math.random
    local function rstring()
      local t = {}
      for i = 1, R(0, 12) do
        local k = R(1, 10)
        t[i] = k <= 2 and string.char(R(0, 31)) or k == 3 and ({ "é", "€", "😀", "\u{a0}", "\u{7ff}" })[R(1, 5)]
          or k == 4 and ({ '"', "\\", "/", "\127" })[R(1, 4)] or string.char(R(32, 126))
      end
      return table.concat(t)
    end
    local function rnumber()
      local k = R(1, 6)
      if k == 1 then return R(-1000, 1000) end
      if k == 2 then return (R() - 0.5) * 10 ^ R(-20, 20) end
      if k == 3 then return R(0, 2 ^ 31) * 2 ^ R(0, 40) end
      if k == 4 then return -R(0, 2 ^ 31) * 2 ^ R(0, 40) end
      if k == 5 then return R(-9, 9) / 8 end
      return 10 ^ R(-5, 16) * (R(0, 1) == 0 and 1 or -1)
    end
    local rvalue
    local function rtable(depth)
      local t, k = {}, R(1, 4)
      local n = R(0, 6)
      if k == 1 then -- an array
        for i = 1, n do t[i] = rvalue(depth + 1) end
      elseif k == 2 then -- an array with holes
        for _ = 1, n do t[R(1, 14)] = rvalue(depth + 1) end
      elseif k == 3 then -- an object
        for _ = 1, n do t[rstring()] = rvalue(depth + 1) end
      else -- mixed keys
        for _ = 1, n do
          local key = R(0, 1) == 0 and rstring() or (R(0, 3) == 0 and R(-3, 20) + 0.5 or R(-3, 20))
          t[key] = rvalue(depth + 1)
        end
      end
      return t
    end
    function rvalue(depth)
      local k = R(1, depth > 4 and 5 or 7)
      if k == 1 then return rstring() end
      if k == 2 then return rnumber() end
      if k == 3 then return R(0, 1) == 0 end
      if k == 4 then return cjson.null end
      if k == 5 then return R(0, 20) == 0 and print or rnumber() end
      return rtable(depth)
    end
    for i = 1, 3000 do assert_same(rvalue(0), ("seed %d, value %d"):format(seed, i)) end
  end)
end)

-- Deep equality, with NaN-free numbers compared exactly and null by identity.
local function same(a, b, path)
  path = path or "value"
  if type(a) ~= type(b) then return false, ("%s: %s vs %s"):format(path, type(a), type(b)) end
  if type(a) ~= "table" then
    if a == b then return true end
    return false, ("%s: %s vs %s"):format(path, tostring(a), tostring(b))
  end
  for k, v in pairs(a) do
    local ok, why = same(v, b[k], path .. "." .. tostring(k))
    if not ok then return false, why end
  end
  for k in pairs(b) do
    if a[k] == nil then return false, path .. "." .. tostring(k) .. ": missing" end
  end
  return true
end

local function decodes_as_cjson(text, what)
  local ok1, a = pcall(cjson.decode, text)
  assert(ok1, ("%s: cjson refused %q: %s"):format(what, text, tostring(a)))
  local ok2, b = pcall(decode, text)
  assert(ok2, ("%s: json_decode refused %q: %s"):format(what, text, tostring(b)))
  local ok, why = same(a, b)
  assert(ok, ("%s: %q: %s"):format(what, text, tostring(why)))
end

-- The error json_decode raises for text (which must be refused).
local function refusal(text)
  local ok, err = pcall(decode, text)
  assert(not ok, ("json_decode accepted %q"):format(text))
  return err
end

describe("core.json_decode", function()
  it("reads scalars, arrays and objects as cjson does", function()
    for i, text in ipairs({
      "0", "-0", "1", "-7", "0.5", "-0.25", "1e3", "1E-3", "2.5e+10", "123456789012345",
      "1234567890123456", "9007199254740993", "0.1", "3.141592653589793", "1e-300",
      '""', '"plain"', '"a\\/b"', '"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\u0041\\u00e9\\u20ac"',
      '"\\ud83d\\ude00"', '"\\u0000x"', '"é😀"', "true", "false", "[]", "{}", "[1,2,3]",
      '{"a":1,"b":[true,false,null],"c":{"d":"e"}}', ' \t\r\n[ 1 , { "x" : [ ] } ] \n',
      '{"a":1,"a":2}', '{"1":"one","2":"two"}', "[[[[[]]]]]", '[null,1,null]',
    }) do
      decodes_as_cjson(text, "case " .. i)
    end
  end)

  it("reads null as core.json_null, which is cjson.null and encodes as null", function()
    assert.equal(core.json_null, decode("null"))
    assert.equal(cjson.null, core.json_null)
    assert.equal("null", encode(core.json_null))
    assert.equal("[1,null,2]", encode(decode("[1,null,2]")))
  end)

  it("reads what cjson writes, on random values, as cjson reads it", function()
    local seed = os.time()
    math.randomseed(seed)
    local R = math.random
    local function rstring()
      local t = {}
      for i = 1, R(0, 12) do
        local k = R(1, 8)
        t[i] = k == 1 and string.char(R(0, 31)) or k == 2 and ({ "é", "€", "😀", "\u{7ff}" })[R(1, 4)]
          or k == 3 and ({ '"', "\\", "/", "\127" })[R(1, 4)] or string.char(R(32, 126))
      end
      return table.concat(t)
    end
    local function rnumber()
      local k = R(1, 4)
      if k == 1 then return R(-1000, 1000) end
      if k == 2 then return (R() - 0.5) * 10 ^ R(-20, 20) end
      if k == 3 then return R(0, 2 ^ 31) * 2 ^ R(0, 40) end
      return -R(0, 2 ^ 31) / 2 ^ R(0, 40)
    end
    local rvalue
    local function rtable(depth)
      local t = {}
      if R(0, 1) == 0 then
        for i = 1, R(0, 6) do t[i] = rvalue(depth + 1) end
      else
        for _ = 1, R(0, 6) do t[rstring()] = rvalue(depth + 1) end
      end
      return t
    end
    function rvalue(depth)
      local k = R(1, depth > 4 and 4 or 6)
      if k == 1 then return rstring() end
      if k == 2 then return rnumber() end
      if k == 3 then return R(0, 1) == 0 end
      if k == 4 then return cjson.null end
      return rtable(depth)
    end
    for i = 1, 3000 do
      decodes_as_cjson(cjson.encode(rvalue(0)), ("seed %d, value %d"):format(seed, i))
    end
  end)

  it("refuses text that is not JSON, saying what and at which byte", function()
    for _, case in ipairs({
      { "", "json: expected a value at byte 1 (the end of the text)" },
      { "   ", "json: expected a value at byte 4 (the end of the text)" },
      { "[1,2", "json: expected ',' or ']' at byte 5 (the end of the text)" },
      { "[1,]", "json: expected a value at byte 4" },
      { "[1 2]", "json: expected ',' or ']' at byte 4" },
      { '{"a" 1}', "json: expected ':' at byte 6" },
      { '{"a":1,}', "json: expected a member name at byte 8" },
      { "{a:1}", "json: expected a member name at byte 2" },
      { '{"a":1', "json: expected ',' or '}' at byte 7 (the end of the text)" },
      { "1 2", "json: unexpected text after the value at byte 3" },
      { "[1]]", "json: unexpected text after the value at byte 4" },
      { "01", "json: leading zero in number at byte 1" },
      { "-", "json: expected a digit at byte 2 (the end of the text)" },
      { "+1", "json: expected a value at byte 1" },
      { ".5", "json: expected a value at byte 1" },
      { "1.", "json: expected a digit after the decimal point at byte 3 (the end of the text)" },
      { "1.e5", "json: expected a digit after the decimal point at byte 3" },
      { "1e", "json: expected a digit in the exponent at byte 3 (the end of the text)" },
      { "1e+", "json: expected a digit in the exponent at byte 4 (the end of the text)" },
      { "0x10", "json: unexpected text after the value at byte 2" },
      { "NaN", "json: expected a value at byte 1" },
      { "Infinity", "json: expected a value at byte 1" },
      { "-Infinity", "json: expected a digit at byte 2" },
      { "tru", "json: expected a value at byte 1" },
      { "nul", "json: expected a value at byte 1" },
      { "True", "json: expected a value at byte 1" },
      { "'a'", "json: expected a value at byte 1" },
      { '"abc', "json: unterminated string at byte 1" },
      { '["a\\"]', "json: unterminated string at byte 2" },
      { '"a\nb"', "json: control character in string (escape it) at byte 3" },
      { '"a\0b"', "json: control character in string (escape it) at byte 3" },
      { '"\\x41"', "json: invalid escape in string at byte 2" },
      { '"\\u12"', "json: invalid \\u escape (four hex digits expected) at byte 2" },
      { '"\\u12g4"', "json: invalid \\u escape (four hex digits expected) at byte 2" },
      { '"\\ud800"', "json: high surrogate in \\u escape without a low one after it at byte 2" },
      { '"\\ud800\\u0041"', "json: high surrogate in \\u escape without a low one after it at byte 2" },
      { '"x\\udc00"', "json: lone low surrogate in \\u escape at byte 3" },
      { "[1,2]\0", "json: unexpected text after the value at byte 6" },
      { "/* c */ 1", "json: expected a value at byte 1" },
    }) do
      assert.equal(case[2], refusal(case[1]), ("for %q"):format(case[1]))
    end
  end)

  it("refuses invalid UTF-8 in strings, and any byte above 0x7f outside them", function()
    for _, bad in ipairs({
      "\128", "\191", "\192\128", "\193\191", "\194", "\224\128\128", "\224\159\191",
      "\237\160\128", "\237\191\191", "\240\128\128\128", "\240\143\191\191", "\244\144\128\128",
      "\245\128\128\128", "\255", "\195(", "\226\130", "\240\159\152",
    }) do
      assert.equal("json: invalid UTF-8 in string at byte 3", refusal('"a' .. bad .. '"'),
        ("for bytes %q"):format(bad))
    end
    for _, good in ipairs({ "\194\128", "\223\191", "\224\160\128", "\237\159\191",
      "\238\128\128", "\239\191\191", "\240\144\128\128", "\244\143\191\191" }) do
      assert.equal("a" .. good, decode('"a' .. good .. '"'))
    end
    assert.equal("json: expected a value at byte 1", refusal("é"))
  end)

  it("decodes \\u escapes to UTF-8, surrogate pairs to one character", function()
    assert.equal("A\0é€", decode('"\\u0041\\u0000\\u00E9\\u20aC"'))
    assert.equal("\240\159\152\128", decode('"\\ud83d\\ude00"'))
    assert.equal("\244\143\191\191", decode('"\\udbff\\udfff"'))
    assert.equal("\240\144\128\128", decode('"\\uD800\\uDC00"'))
    assert.equal("\239\191\191", decode('"\\uffff"'))
  end)

  it("reads arrays and objects nested up to 1000 deep, and refuses deeper", function()
    local function nested(n) return ("["):rep(n) .. ("]"):rep(n) end
    local v = decode(nested(1000))
    local depth = 0
    while type(v) == "table" do
      depth = depth + 1
      v = v[1]
    end
    assert.equal(1000, depth)
    assert.equal("json: arrays and objects nested deeper than 1000 at byte 1001", refusal(nested(1001)))
    assert.equal("json: arrays and objects nested deeper than 1000 at byte 5001",
      refusal(('{"a":'):rep(1001) .. "1" .. ("}"):rep(1001)))
    -- Deep text never overflows the C stack: it is refused at the limit.
    assert.equal("json: arrays and objects nested deeper than 1000 at byte 1001", refusal(("["):rep(1e6)))
  end)

  it("reads big and long numbers as the nearest double, out-of-range ones as infinities", function()
    assert.equal(1e400, decode("1e400"))
    assert.equal(-math.huge, decode("-1e400"))
    assert.equal(0, decode("1e-400"))
    assert.equal(12345678901234567890, decode("12345678901234567890"))
    assert.equal(2 ^ 53, decode("9007199254740992"))
    assert.equal(1e308, decode("1" .. ("0"):rep(308)))
    assert.equal(math.huge, decode("1" .. ("0"):rep(400)))
    assert.equal(0.1, decode("0." .. "1" .. ("0"):rep(500)))
    assert.equal(1 / decode("-0"), -math.huge) -- negative zero
    for _, text in ipairs({ "1e400", "12345678901234567890", "1" .. ("0"):rep(400),
      "123456789.123456789e-5" }) do
      decodes_as_cjson(text, "number")
    end
  end)

  it("reads numbers with a '.' whatever the locale", function()
    local old = os.setlocale(nil, "numeric")
    -- scripts/bootstrap generates de_DE.UTF-8 for this case.
    assert.truthy(os.setlocale("de_DE.UTF-8", "numeric") or os.setlocale("fr_FR.UTF-8", "numeric"),
      "no locale with a decimal comma (scripts/bootstrap generates de_DE.UTF-8)")
    local ok, v = pcall(decode, "[1.5, 0.25e1, 12345678901234567.5]")
    os.setlocale(old, "numeric")
    assert.is_true(ok, v)
    assert.same({ 1.5, 2.5, 12345678901234567.5 }, v)
  end)

  it("ignores a UTF-8 byte order mark before the value, and only there", function()
    assert.same({ 1 }, decode("\239\187\191[1]"))
    assert.equal("json: expected a value at byte 2", refusal("[\239\187\191 1]"))
  end)

  it("raises on a value that is not a string", function()
    assert.has_error(function() decode({}) end)
    assert.has_error(function() decode() end)
  end)
end)

describe("lc.json", function()
  local lc = require "luacrawl"
  it("decodes and encodes with the engine's own JSON, null included", function()
    local v = lc.json.decode('{"a":[1,2,null],"b":"\\u00e9"}')
    assert.are.equal(2, v.a[2])
    assert.are.equal(lc.json.null, v.a[3])
    assert.are.equal("é", v.b)
    assert.are.equal('[1,2,null]', lc.json.encode(v.a))
  end)
  it("gives nil and a parse error with the byte where the text stops being JSON", function()
    local v, err = lc.json.decode('{"a" 1}')
    assert.is_nil(v)
    assert.is_true(lc.is_error(err))
    assert.equal("parse", err.kind)
    assert.equal("json: expected ':' at byte 6", err.message)
  end)
  it("raises on a value that is not a string: a bad call, not bad data", function()
    assert.has_error(function() lc.json.decode({}) end)
  end)
end)
