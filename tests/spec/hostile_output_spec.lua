-- fixtures: --http
-- Specification of the outputs against a hostile server and a hostile disk (issue
-- 16, "silent losses"): what a server sends (header bytes that are not UTF-8,
-- terminal escapes in headers and titles) never makes a JSON line a strict parser
-- refuses, never reaches a CSV cell or a terminal raw; and a write that fails (a
-- full disk, an unwritable stats file) is an error with the path, the reason and a
-- non-zero exit status, never a run that "succeeded" with its records lost.
-- Server: tests/fixtures/server.py /hostile/output; disk: /dev/full.

local h = require "spec_helper"
local lc = require "luacrawl"
local core = require "luacrawl.core"
local crawl = require "luacrawl.crawl"
local export = require "luacrawl.export"

local bin = h.luacrawl_bin
local HOSTILE = h.url("/hostile/output")

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- (h.sh redirects stdout itself: a command's own redirection goes in a subshell.)

-- Bytes a terminal acts on: C0 controls (tab, LF and CR aside) and DEL, and the
-- 8-bit C1 CSI (0x9b) on its own.
local RAW_CONTROL = "[%z\1-\8\11\12\14-\31\127]"

-- s is valid UTF-8 without C1 controls: plain_text leaves such text as it is.
local function clean_text(s)
  return core.plain_text(s, "\t\n\r") == s
end

-- Each line of text, parsed by Python's json.loads (strict: the bytes must be UTF-8).
local function python_parses(text)
  local path = h.tmpname(".jsonl")
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  local code, out, err = h.sh(("python3 -c 'import json,sys\nfor l in open(sys.argv[1],\"rb\"): json.loads(l)\nprint(\"ok\")' %s")
    :format(path))
  return code == 0 and out == "ok\n", err
end

describe("hostile output: bytes from a server", function()
  it("writes a Content-Type of invalid UTF-8 and escapes as a JSON line strict parsers read", function()
    local code, out, err = h.sh(bin .. " crawl -q --no-robots " .. HOSTILE)
    assert.equal(0, code, err)
    assert.is_true(python_parses(out))
    local rec = core.json_decode(out:match("^[^\n]*"))
    assert.equal("text/html\239\191\189\239\191\189\27[31m", rec.content_type)
    assert.is_nil(out:find(RAW_CONTROL), "a raw control character in the JSON line")
    assert.is_true(clean_text(out))
  end)

  it("writes CSV cells without raw control characters, as valid UTF-8", function()
    local path = h.tmpname(".csv")
    local code, _, err = h.sh(bin .. " crawl -q --no-robots -o " .. path .. " " .. HOSTILE)
    assert.equal(0, code, err)
    local text = read_file(path)
    assert.is_nil(text:find(RAW_CONTROL), "a raw control character in the CSV")
    assert.is_true(clean_text(text))
    -- ESC is shown as its Control Picture, U+241B; the bytes that are not UTF-8 as U+FFFD.
    assert.truthy(text:find("text/html\239\191\189\239\191\189\226\144\155[31m", 1, true))
  end)

  it("keeps tabs and newlines in a CSV cell and shows other controls as pictures", function()
    local path = h.tmpname(".csv")
    local out = export.open(path, { fields = { "a" } })
    assert.is_true(out:write({ a = "x\ty\nz\27[2J\7\r\194\155\255" }))
    assert.is_true(out:close())
    local text = read_file(path)
    assert.equal('a\r\n"x\ty\nz\226\144\155[2J\226\144\135\226\144\141\239\191\189\239\191\189"\r\n', text)
  end)

  it("fetch prints a hostile header's control characters as visible characters", function()
    local code, _, err = h.sh(bin .. " fetch " .. HOSTILE)
    assert.equal(0, code, err)
    assert.is_nil(err:find(RAW_CONTROL), "a raw control character on stderr")
    assert.is_true(clean_text(err))
    assert.truthy(err:find("x-hostile: a\226\144\155]0;pwned\226\144\135b\239\191\189" .. "31m\226\144\161", 1, true), err)
  end)

  it("the shell prints server strings as Lua escapes, never raw", function()
    local code, out, err = h.sh(("printf 'res.headers[\"x-hostile\"]\\nres.headers[\"content-type\"]\\n' | %s shell %s")
      :format(bin, HOSTILE))
    assert.equal(0, code, err)
    assert.is_nil(out:find(RAW_CONTROL), "a raw control character in the shell's output")
    assert.is_true(clean_text(out))
    assert.truthy(out:find('"a\\27]0;pwned\\7b\\15531m\\127"', 1, true), out)
    assert.truthy(out:find('"text/html\\255\\254\\27[31m"', 1, true), out)
  end)

  it("the crawl's log lines show control characters as visible characters", function()
    -- Crawler:log writes stderr: the crawl runs in the binary, its stderr captured.
    local script = h.tmpname(".lua")
    local f = assert(io.open(script, "w"))
    f:write(([[
      local crawl = require "luacrawl.crawl"
      crawl.run({ start = { %q }, robots = false, progress = false, signals = false,
        parse = function(page) page.crawler:log("got " .. page.headers["x-hostile"]) end })
    ]]):format(HOSTILE))
    f:close()
    local code, _, err = h.sh(bin .. " run " .. script)
    assert.equal(0, code, err)
    assert.is_nil(err:find(RAW_CONTROL), "a raw control character in the log")
    assert.truthy(err:find("luacrawl: got a\226\144\155]0;pwned", 1, true), err)
  end)
end)

describe("hostile output: writes that fail", function()
  it("crawl -o /dev/full says which file and why, stops, and exits 4", function()
    local code, _, err = h.sh(bin .. " crawl --no-robots -o /dev/full " .. h.url("/site/"))
    assert.equal(4, code, err)
    assert.truthy(err:find("output failed: /dev/full: No space left on device", 1, true), err)
    assert.truthy(err:find("stopped: output_failed", 1, true), err)
    -- Nothing reached the file: no item is counted as written.
    assert.truthy(err:find("items 0 (", 1, true), err)
  end)

  it("crawl -q to a full stdout says so and exits 4", function()
    local code, out, err = h.sh("(" .. bin .. " crawl -q --no-robots " .. h.url("/site/") .. " >/dev/full)")
    assert.equal(4, code, err)
    assert.equal("", out)
    assert.truthy(err:find("stdout: No space left on device", 1, true), err)
  end)

  it("fetch > /dev/full says stdout and why, and exits 4", function()
    local code, _, err = h.sh("(" .. bin .. " fetch " .. h.url("/site/") .. " >/dev/full)")
    assert.equal(4, code, err)
    assert.truthy(err:find("luacrawl: stdout: No space left on device", 1, true), err)
  end)

  it("--stats-json to a full disk says which file and why, and exits 4", function()
    local code, _, err = h.sh(bin .. " crawl -q --no-robots -n 1 --stats-json /dev/full " .. h.url("/site/"))
    assert.equal(4, code, err)
    assert.truthy(err:find("stats_json /dev/full: No space left on device", 1, true), err)
  end)

  it("--stats-json in a folder that cannot be made fails before the crawl, exit 2", function()
    local file = h.tmpname("-file")
    assert(io.open(file, "w")):close()
    local path = file .. "/sub/stats.json"
    local code, out, err = h.sh(bin .. " crawl -q --no-robots --stats-json " .. path .. " " .. h.url("/site/"))
    assert.equal(2, code, err)
    assert.equal("", out)
    assert.truthy(err:find("cannot make the folder " .. file .. "/sub: Not a directory", 1, true), err)
  end)

  it("--stats-json in a folder that does not exist makes it", function()
    local path = h.tmpname("-new") .. "/a/stats.json"
    local code, _, err = h.sh(bin .. " crawl -q --no-robots -n 1 --stats-json " .. path .. " " .. h.url("/site/"))
    assert.equal(0, code, err)
    assert.truthy(io.open(path, "rb"))
  end)

  it("a script whose prints cannot be written exits 4", function()
    local script = h.tmpname(".lua")
    local f = assert(io.open(script, "w"))
    f:write('print("hello")\n')
    f:close()
    local code, _, err = h.sh("(" .. bin .. " run " .. script .. " >/dev/full)")
    assert.equal(4, code, err)
    assert.truthy(err:find("luacrawl: stdout: No space left on device", 1, true), err)
  end)

  it("crawl.run stops on a failed write and does not count the lost items", function()
    local st = crawl.run({ start = { h.url("/site/") }, robots = false, quiet = true, progress = false,
      signals = false, output = { path = "/dev/full", format = "jsonl" },
      parse = function(page)
        page:follow(page:links())
        page:emit({ url = page.url })
      end })
    assert.equal("output_failed", st.stop_reason)
    assert.equal("/dev/full: No space left on device", st.output_failed)
    assert.equal(0, st.items)
    assert.is_true(st.items_lost >= 256, "items_lost " .. st.items_lost)
    assert.equal(1, st.output_errors)
  end)

  it("an output broken by a failed write refuses every later record, counted lost", function()
    local out = export.open({ path = "/dev/full", format = "jsonl" })
    for i = 1, 3 do assert.is_true(out:write({ i = i })) end
    local ok, err = out:flush()
    assert.is_nil(ok)
    assert.equal("/dev/full: No space left on device", err)
    assert.equal(err, out.failed)
    local wok, werr = out:write({ i = 4 })
    assert.is_nil(wok)
    assert.equal(err, werr)
    assert.equal(0, out.count)
    assert.equal(4, out.lost)
    assert.is_true(out:flush()) -- reported once
    out:close()
  end)

  it("counts a file's records as written only once they are", function()
    local path = h.tmpname(".jsonl")
    local out = export.open(path)
    assert.is_true(out:write({ a = 1 }))
    assert.equal(0, out.count)
    assert.is_true(out:close())
    assert.equal(1, out.count)
    assert.equal(0, out.lost)
    assert.equal('{"a":1}\n', read_file(path))
  end)
end)

describe("hostile output: lc", function()
  it("core.plain_text refuses to keep printable characters", function()
    assert.has_error(function() core.plain_text("x", "a") end)
    assert.equal("x", core.plain_text("x"))
    assert.equal("\226\144\128", core.plain_text("\0"))
    assert.truthy(lc) -- the module loads with the core
  end)
end)
