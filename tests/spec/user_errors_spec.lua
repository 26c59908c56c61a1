-- Errors a user makes in their first hour, through the binary: each is said on
-- stderr in words that name the mistake, and the exit status tells a script.
local h = require "spec_helper"

local bin = h.luacrawl_bin

local function script(text)
  local path = h.tmpname(".lua")
  local f = assert(io.open(path, "w"))
  f:write((text:gsub("FIXTURE", h.url("/site/"))))
  f:close()
  return path
end

describe("errors a user makes", function()
  it("parse raising on some pages: counted in the report", function()
    local code, _, err = h.sh(bin .. " run " .. script([[
      local n = 0
      require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 2, progress = false,
        parse = function(page)
          n = n + 1
          page:follow_links()
          if n % 2 == 0 then error("no title here") end
        end }
    ]]))
    assert.equal(0, code, err)
    assert.matches("error in parse for [^\n]*no title here", err)
    assert.matches("lost: %d+ errors in parse", err)
  end)

  it("an unreachable start host: an error naming the cause, exit 5", function()
    local code, _, err = h.sh(bin .. " crawl http://127.0.0.1:19998/")
    assert.equal(5, code, err)
    assert.matches("robots.txt unreachable: http://127.0.0.1:19998 %(connect: ", err)
    assert.matches("every start URL was refused", err)
  end)

  it("a misspelled spec field: refused with the name meant, exit 1", function()
    local code, _, err = h.sh(bin .. " run " .. script([[
      require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 1, concurency = 2, delay = 0.05 }
    ]]))
    assert.equal(1, code)
    assert.matches("unknown field 'concurency' %(did you mean 'concurrency'%?%)", err)
  end)

  it("a spec refused, or its output: the message names the script's line, not crawl.lua's", function()
    local path = script("local crawl = require 'luacrawl.crawl'\n"
      .. "local c = crawl.new { start = 'FIXTURE', concurency = 2 }\n")
    local code, _, err = h.sh(bin .. " run " .. path)
    assert.equal(1, code)
    assert.matches("luacrawl: [^\n]*%.lua:2: crawl%.run: unknown field 'concurency'", err)
    code, _, err = h.sh(bin .. " run " .. script([[
      require("luacrawl.crawl").run { start = "FIXTURE", output = "/proc/x.jsonl" }
    ]]))
    assert.equal(1, code)
    assert.matches("luacrawl: [^\n]*%.lua:1: output \"/proc/x.jsonl\": ", err)
    assert.not_matches("crawl%.lua:%d", err:match("^[^\n]*")) -- the message (a traceback follows)
  end)

  it("a Scrapy-style return from parse: a warning with the fix", function()
    local code, _, err = h.sh(bin .. " run " .. script([[
      require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 1, quiet = true,
        parse = function(page) page:follow_links() return { url = page.url } end }
    ]]))
    assert.equal(0, code, err)
    assert.matches("warning: parse returned a table, which is dropped: use page:emit%(item%)", err)
  end)

  it("a bad CSS selector in fetch --css: one line, exit 2, nothing fetched", function()
    local code, out, err = h.sh(bin .. " fetch --css 'a[' " .. h.url("/site/"))
    assert.equal(2, code)
    assert.equal("", out)
    assert.matches("^luacrawl: %-%-css: css: unexpected end of selector", err)
    assert.not_matches("HTTP/", err)
    assert.not_matches("traceback", err)
  end)

  it("a bad XPath expression in fetch --xpath: one line, exit 2, nothing fetched", function()
    local code, out, err = h.sh(bin .. " fetch --xpath '//a[' " .. h.url("/site/"))
    assert.equal(2, code)
    assert.equal("", out)
    assert.matches('^luacrawl: %-%-xpath: xpath: invalid expression at position 5 in "//a%["\n', err)
    assert.not_matches("HTTP/", err)
    assert.not_matches("traceback", err)
  end)

  it("a bad selector or expression is refused before the URL is tried: an unreachable one too", function()
    -- Nothing listens on the port: a fetch would fail (exit 3, "fetch failed").
    for _, case in ipairs({
      { "--xpath '//a['", '^luacrawl: %-%-xpath: xpath: invalid expression at position 5 in "//a%["\n' },
      { "--css 'a['", "^luacrawl: %-%-css: css: unexpected end of selector" },
    }) do
      local code, out, err = h.sh(bin .. " fetch " .. case[1] .. " http://127.0.0.1:19998/")
      assert.equal(2, code, err)
      assert.equal("", out)
      assert.matches(case[2], err)
      assert.not_matches("fetch failed", err)
      assert.not_matches("connect", err)
    end
  end)

  it("a good XPath expression in fetch --xpath prints its matches", function()
    local code, out, err = h.sh(bin .. " fetch --xpath 'string(//title)' " .. h.url("/site/"))
    assert.equal(0, code, err)
    assert.equal("Site\n", out)
  end)
end)
