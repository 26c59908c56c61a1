-- lc.regex: PCRE2 patterns with test, find, match, gmatch, gsub, split; flags, UTF-8,
-- limits, errors and the cache. Also the readline binding's non-interactive surface.
local lc = require "luacrawl"
local core = require "luacrawl.core"
local helper = require "spec_helper"

local function collect(re, s)
  local out = {}
  for whole, a, b in re:gmatch(s) do out[#out + 1] = { whole, a, b } end
  return out
end

describe("lc.regex", function()
  it("is callable and compiles a pattern", function()
    local re = lc.regex("a+")
    assert.equal("userdata", type(re))
    assert.equal('regex("a+", "")', tostring(re))
  end)

  it("describes the compiled pattern", function()
    local info = lc.regex("(a)(?<name>b)", "im"):info()
    assert.equal("(a)(?<name>b)", info.pattern)
    assert.equal("im", info.flags)
    assert.equal(2, info.captures)
    assert.equal("boolean", type(info.jit))
  end)
end)

describe("regex:test", function()
  it("says whether the pattern matches anywhere", function()
    assert.is_true(lc.regex("b+"):test("abbc"))
    assert.is_false(lc.regex("x"):test("abbc"))
  end)

  it("starts at init, negative counting from the end", function()
    local re = lc.regex("a")
    assert.is_false(re:test("abc", 2))
    assert.is_true(re:test("bca", -1))
    assert.is_false(re:test("abc", 5))
  end)

  it("coerces a number subject as string.find does", function()
    assert.is_true(lc.regex("^\\d+$"):test(123))
  end)

  it("raises on a subject that is not a string", function()
    assert.has_error(function() lc.regex("a"):test({}) end)
  end)
end)

describe("regex:find", function()
  it("gives 1-based start and end, then the captures", function()
    assert.same({ 4, 6, "a", "1" }, { lc.regex("(\\w)=(\\d)"):find("xx a=1") })
  end)

  it("gives nil when nothing matches", function()
    assert.is_nil(lc.regex("z"):find("abc"))
  end)

  it("reports an empty match as end = start - 1, like string.find", function()
    assert.same({ 2, 1 }, { lc.regex("x*"):find("abc", 2) })
  end)

  it("starts at init", function()
    assert.same({ 3, 3 }, { lc.regex("a"):find("aba", 2) })
  end)
end)

describe("regex:match", function()
  it("gives the whole match, then each capture", function()
    assert.same({ "k=42", "k", "42" }, { lc.regex("(\\w+)=(\\d+)"):match("x k=42 y") })
  end)

  it("gives only the whole match when there are no groups", function()
    assert.same({ "42" }, { lc.regex("\\d+"):match("x42") })
  end)

  it("gives false for a group that took no part in the match", function()
    assert.same({ "b", false, "b" }, { lc.regex("(a)|(b)"):match("b") })
  end)

  it("gives nil when nothing matches", function()
    assert.is_nil(lc.regex("\\d"):match("abc"))
  end)

  it("starts at init", function()
    assert.equal("3", lc.regex("\\d"):match("1a3", 2))
  end)

  it("keeps NUL bytes in patterns and subjects", function()
    assert.equal("a\0b", lc.regex("a\0b"):match("xa\0by"))
  end)
end)

describe("regex:gmatch", function()
  it("iterates over every match with its captures", function()
    assert.same({ { "a=1", "a", "1" }, { "b=2", "b", "2" } },
      collect(lc.regex("(\\w)=(\\d)"), "a=1, b=2"))
  end)

  it("steps over empty matches one character at a time", function()
    local seen = {}
    for m in lc.regex("x*"):gmatch("ab") do seen[#seen + 1] = m end
    assert.same({ "", "", "" }, seen)
  end)

  it("steps over whole characters, not bytes, after an empty match", function()
    local pos = {}
    local re = lc.regex("")
    for _ in re:gmatch("é!") do pos[#pos + 1] = true end
    assert.equal(3, #pos) -- before é, before !, at the end
  end)

  it("starts at init", function()
    local seen = {}
    for m in lc.regex("\\d"):gmatch("123", 2) do seen[#seen + 1] = m end
    assert.same({ "2", "3" }, seen)
  end)

  it("ends and stays ended", function()
    local it = lc.regex("a"):gmatch("a")
    assert.equal("a", it())
    assert.is_nil(it())
    assert.is_nil(it())
  end)
end)

describe("regex:gsub", function()
  it("replaces with $n references and counts the replacements", function()
    assert.same({ "1=a 2=b", 2 }, { lc.regex("(\\w)=(\\d)"):gsub("a=1 b=2", "$2=$1") })
  end)

  it("understands $0, ${n}, ${name} and $$", function()
    local re = lc.regex("(?<k>\\w)(\\d)")
    assert.equal("[a1|a|1|$]", (re:gsub("a1", "[$0|${k}|${2}|$$]")))
  end)

  it("replaces an unset group with nothing", function()
    assert.equal("<>", (lc.regex("(x)?y"):gsub("y", "<$1>")))
  end)

  it("raises on a reference to a group that does not exist", function()
    assert.has_error(function() lc.regex("(a)"):gsub("a", "$2") end,
      "regex: invalid capture index $2 in replacement")
    assert.has_error(function() lc.regex("(a)"):gsub("a", "${nope}") end,
      "regex: no group named 'nope' in replacement")
    assert.has_error(function() lc.regex("a"):gsub("a", "$x") end,
      "regex: invalid use of '$' in replacement string")
  end)

  it("calls a function with the whole match and captures", function()
    local out = lc.regex("(\\w)=(\\d)"):gsub("a=1 b=2", function(whole, k, v)
      assert.equal(k .. "=" .. v, whole)
      return v .. k
    end)
    assert.equal("1a 2b", out)
  end)

  it("keeps the match when the function returns nil or false", function()
    local out, n = lc.regex("\\d"):gsub("1 2 3", function(d)
      if d == "2" then return false end
      if d == "3" then return nil end
      return 10
    end)
    assert.equal("10 2 3", out)
    assert.equal(3, n)
  end)

  it("raises when the function returns another type", function()
    assert.has_error(function() lc.regex("a"):gsub("a", function() return {} end) end,
      "regex: invalid replacement value (a table)")
  end)

  it("lets the function use the same regex", function()
    local re = lc.regex("\\d")
    local out = re:gsub("1 2", function(d) return re:match("9" .. d) end)
    assert.equal("9 9", out)
  end)

  it("stops after n replacements", function()
    assert.same({ "x x c", 2 }, { lc.regex("\\w"):gsub("a b c", "x", 2) })
  end)

  it("handles empty matches as Perl and string.gsub do", function()
    assert.equal("-a-b-c-", (lc.regex("x*"):gsub("abc", "-")))
    assert.equal("-a--c-", (lc.regex("b*"):gsub("abc", "-")))
    assert.equal(("-a--c-"), (string.gsub("abc", "b*", "-")))
  end)

  it("rejects a replacement that is neither string nor function", function()
    assert.has_error(function() lc.regex("a"):gsub("a", {}) end)
  end)
end)

describe("regex:split", function()
  it("splits around each match", function()
    assert.same({ "a", "b", "c" }, lc.regex(",\\s*"):split("a, b,c"))
  end)

  it("keeps empty pieces at the ends", function()
    assert.same({ "", "a", "" }, lc.regex(","):split(",a,"))
  end)

  it("gives the whole subject when nothing matches", function()
    assert.same({ "abc" }, lc.regex(","):split("abc"))
  end)

  it("splits at most n times", function()
    assert.same({ "a", "b,c" }, lc.regex(","):split("a,b,c", 1))
  end)

  it("splits between characters on an empty pattern", function()
    assert.same({ "", "a", "é", "" }, lc.regex(""):split("aé"))
  end)
end)

describe("regex flags", function()
  it("i matches without case, Unicode letters included", function()
    assert.is_true(lc.regex("café", "i"):test("CAFÉ"))
    assert.is_false(lc.regex("café"):test("CAFÉ"))
  end)

  it("x ignores whitespace and comments in the pattern", function()
    assert.equal("12", lc.regex(" \\d  \\d # two digits", "x"):match("a12"))
  end)

  it("s lets . match a newline", function()
    assert.is_false(lc.regex("a.b"):test("a\nb"))
    assert.is_true(lc.regex("a.b", "s"):test("a\nb"))
  end)

  it("m makes ^ and $ match at each line", function()
    assert.is_false(lc.regex("^b$"):test("a\nb\nc"))
    assert.is_true(lc.regex("^b$", "m"):test("a\nb\nc"))
  end)

  it("combine", function()
    assert.equal("A\nB", lc.regex("^a.b$", "ism"):match("x\nA\nB\ny"))
  end)

  it("raise on an unknown flag", function()
    assert.has_error(function() lc.regex("a", "q") end,
      "regex: unknown flag 'q' (flags are i, x, s, m)")
  end)
end)

describe("regex and UTF-8", function()
  it(". matches a whole character", function()
    assert.equal("é", lc.regex("^.$"):match("é"))
  end)

  it("\\w and \\b know non-ASCII letters", function()
    assert.equal("naïve", lc.regex("\\w+"):match("  naïve!"))
    assert.is_true(lc.regex("\\bcafé\\b"):test("un café noir"))
  end)

  it("counts offsets in bytes", function()
    assert.same({ 3, 3 }, { lc.regex("x"):find("éx") })
  end)

  it("matches subjects with invalid UTF-8, which no character matches", function()
    assert.equal("<a>\255<b>\195", (lc.regex("."):gsub("a\255b\195", "<$0>")))
    assert.equal("ok", lc.regex("ok"):match("\255\254ok"))
  end)

  it("accepts an init inside a character", function()
    assert.equal("x", lc.regex("."):match("éx", 2))
  end)

  it("raises on a pattern that is not UTF-8", function()
    assert.has_error(function() lc.regex("a\255") end)
  end)
end)

describe("regex limits", function()
  it("stops catastrophic backtracking with an error, quickly", function()
    local re = lc.regex("(a+)+$")
    local t = os.clock()
    local ok, err = pcall(re.test, re, ("a"):rep(40) .. "!")
    assert.is_false(ok)
    assert.matches('regex "%(a%+%)%+%$": match limit exceeded', err)
    assert.is_true(os.clock() - t < 2)
  end)

  it("raises the limit error at the caller's line", function()
    local ok, err = pcall(function()
      local m = lc.regex("(a+)+$"):match(("a"):rep(40) .. "!")
      return m -- not a tail call, which would leave no line to name
    end)
    assert.is_false(ok)
    assert.matches("regex_spec.lua:%d+: regex", err)
  end)

  it("falls back from the JIT when its stack runs out", function()
    assert.is_true(lc.regex("^(a|b)*c$"):test(("ab"):rep(50000) .. "c"))
  end)

  it("raises when the interpreter's heap limit is reached", function()
    local re = lc.regex("^(a|b)*c$")
    local ok, err = pcall(re.test, re, ("ab"):rep(500000) .. "c")
    assert.is_false(ok)
    assert.matches("heap limit exceeded", err)
  end)
end)

describe("regex errors", function()
  it("name the pattern, PCRE2's message and the offset", function()
    assert.has_error(function() lc.regex("(a") end,
      'regex "(a": missing closing parenthesis at offset 2')
  end)

  it("come from the caller's line", function()
    local ok, err = pcall(function()
      local re = lc.regex("a{2,1}")
      return re
    end)
    assert.is_false(ok)
    assert.matches("regex_spec.lua:%d+: regex \"a{2,1}\": .* at offset %d+", err)
  end)

  it("quote a long pattern cut short", function()
    local ok, err = pcall(lc.regex, ("a"):rep(100) .. "(")
    assert.is_false(ok)
    assert.matches('"' .. ("a"):rep(60) .. '%.%.%."', err)
  end)

  it("reject a pattern or flags of the wrong type", function()
    assert.has_error(function() lc.regex(1) end, "regex: pattern must be a string")
    assert.has_error(function() lc.regex("a", 1) end, "regex: flags must be a string")
  end)
end)

describe("regex cache", function()
  it("gives the same object for the same pattern and flags", function()
    assert.equal(lc.regex("c+a"), lc.regex("c+a"))
    assert.equal(lc.regex("c+a", "i"), lc.regex.compile("c+a", "i"))
    assert.are_not.equal(lc.regex("c+a"), lc.regex("c+a", "i"))
  end)

  it("keeps a hot pattern compiled across collections", function()
    local probe = setmetatable({ lc.regex("hot\\d") }, { __mode = "v" })
    collectgarbage()
    collectgarbage()
    assert.is_not_nil(probe[1])
    assert.equal(probe[1], lc.regex("hot\\d"))
  end)

  it("is bounded: patterns past cache_size can be collected", function()
    local probe = setmetatable({ lc.regex("only-once-1") }, { __mode = "v" })
    for i = 1, lc.regex.cache_size + 1 do lc.regex("filler" .. i) end
    collectgarbage()
    collectgarbage()
    assert.is_nil(probe[1])
  end)

  it("can be cleared", function()
    local a = lc.regex("clear-me")
    lc.regex.clear_cache()
    local b = lc.regex("clear-me")
    assert.are_not.equal(a, b)
    assert.is_true(a:test("clear-me"))
  end)
end)

describe("regex.escape", function()
  it("makes any string match itself literally", function()
    local s = "a.b*c+(d)[e]{f}^$|?\\ #x_y\n"
    assert.equal(s, lc.regex(lc.regex.escape(s)):match(s))
    assert.equal(s, lc.regex(lc.regex.escape(s), "x"):match(s))
  end)

  it("leaves letters, digits, underscores and UTF-8 alone", function()
    assert.equal("a_1é", lc.regex.escape("a_1é"))
  end)
end)

describe("core.readline", function()
  it("is a function, with add_history", function()
    assert.equal("function", type(core.readline))
    assert.equal("function", type(core.add_history))
  end)

  it("isatty is false for stdin under the test runner", function()
    local term = os.execute("test -t 0")
    assert.equal(term == 0 or term == true, core.isatty(0))
    local lua = ("package.cpath=%q require('luacrawl') io.write(tostring(require('luacrawl.core').isatty(0)))")
      :format(package.cpath)
    local code, out = helper.sh(("luajit -e %q </dev/null"):format(lua))
    assert.equal(0, code)
    assert.equal("false", out)
  end)

  it("isatty is false for a closed or impossible descriptor", function()
    assert.is_false(core.isatty(-1))
    assert.is_false(core.isatty(1e9))
  end)
end)
