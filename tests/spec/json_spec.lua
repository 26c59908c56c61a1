-- Specification of core.json_encode (engine/lua_json.c), the encoder of the item
-- outputs: it must write what lua-cjson's encode writes, byte for byte, and refuse
-- what cjson refuses with the same message. Checked on fixed cases and on random
-- values (seeded: a failure names its seed).

local cjson = require "cjson"
require "luacrawl" -- makes luacrawl.core available
local core = require "luacrawl.core"
local encode = core.json_encode

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
      "\128\255é", true, false, cjson.null, 0, -0.0, 1, -7, 0.1, 1 / 3, 2.5, 1e-7, 1e300, -1e-300,
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
        t[i] = k <= 2 and string.char(R(0, 31)) or k == 3 and string.char(R(128, 255))
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
