-- A user's first hour (issue 19, "Silent failures"): every way a crawl does less than
-- asked says so, and the crawl's exit status says when it did nothing useful.
local h = require "spec_helper"

local bin = h.luacrawl_bin
local DEAD = "http://127.0.0.1:19998/" -- nothing listens there

-- Run a crawl script (text, with FIXTURE replaced by the fixture's /site/ URL)
-- through `luacrawl run`: exit status, stdout, stderr.
local function run_script(text)
  local path = h.tmpname(".lua")
  local f = assert(io.open(path, "w"))
  f:write((text:gsub("FIXTURE", h.url("/site/"))))
  f:close()
  return h.sh(bin .. " run " .. path)
end

local function count(s, pat)
  local n = 0
  for _ in s:gmatch(pat) do n = n + 1 end
  return n
end

describe("the final report", function()
  it("lists errors in parse, which are not fetch errors", function()
    local code, _, err = run_script([[
      local crawl = require "luacrawl.crawl"
      local n = 0
      crawl.run { start = "FIXTURE", max_depth = 1, progress = false, items = {},
        parse = function(page)
          n = n + 1
          if n % 2 == 0 then error("boom") end
          page:follow_links()
          page:emit { url = page.url }
        end }
    ]])
    assert.equal(0, code, err)
    assert.matches("lost: [^\n]*%d+ errors in parse", err)
  end)

  it("says what was lost in one line on stderr with quiet", function()
    local code, _, err = run_script([[
      local crawl = require "luacrawl.crawl"
      crawl.run { start = "FIXTURE", max_depth = 0, quiet = true,
        parse = function(page) error("boom") end }
    ]])
    -- luacrawl run exits with the status of the crawl, which failed, and says why.
    assert.equal(5, code, err)
    assert.matches("^luacrawl: lost: 1 errors in parse\nluacrawl: parse failed on every page\n$", err)
  end)

  it("counts start URLs that were refused, with the reason", function()
    local code, _, err = run_script([[
      local crawl = require "luacrawl.crawl"
      crawl.run { start = { "FIXTURE", "http://other.invalid:1/x", "nota url" }, max_depth = 0,
        allow = { hosts = { "127.0.0.1" } }, progress = false }
    ]])
    assert.equal(0, code, err)
    assert.matches("lost: 2 of 3 start URLs not crawled %(invalid_urls: 1, out_of_scope: 1%)", err)
  end)

  it("counts a start URL denied by a robots.txt already fetched, as one that waited for it", function()
    local code, _, err = run_script([[
      local lc = require "luacrawl"
      local crawl = require "luacrawl.crawl"
      local parsed, queued = false, nil
      crawl.run { max_depth = 0, progress = false,
        -- The second start URL comes once the first page (so its robots.txt) is in.
        start = function(add)
          add("FIXTURE")
          for _ = 1, 500 do
            if parsed then break end
            lc.sleep(0.01)
          end
          assert(parsed, "the first page was not parsed")
          queued = add(("FIXTURE"):gsub("/site/$", "/private/x"))
        end,
        parse = function(page) parsed = true end }
      assert(queued == false, "the denied start URL was queued")
    ]])
    assert.equal(0, code, err)
    assert.matches("start URL http://[^ ]+/private/x not crawled: denied by robots.txt", err)
    assert.matches("lost: 1 of 2 start URLs not crawled %(robots_denied: 1%)", err)
    assert.matches("robots denied 1", err)
  end)

  it("counts a start URL that on_request dropped", function()
    local code, _, err = run_script([[
      require("luacrawl.crawl").run { start = { "FIXTURE", "FIXTURE?drop" }, max_depth = 0, progress = false,
        on_request = function(req) if req.url:find("drop", 1, true) then return false end end }
    ]])
    assert.equal(0, code, err)
    assert.matches("start URL http://[^ ]+/site/%?drop not crawled: dropped by on_request", err)
    assert.matches("lost: 1 of 2 start URLs not crawled %(dropped: 1%)", err)
  end)

  it("says nothing of losses when nothing was lost", function()
    local code, _, err = h.sh(bin .. " crawl -q -d 0 " .. h.url("/site/"))
    assert.equal(0, code, err)
    assert.equal("", err)
  end)
end)

describe("exit status 5: the crawl did nothing useful", function()
  it("when no page was fetched", function()
    local code, _, err = h.sh(bin .. " crawl -q --no-robots " .. DEAD)
    assert.equal(5, code, err)
    assert.matches("no page was fetched", err)
  end)

  it("when every start URL was refused", function()
    local code, _, err = h.sh(bin .. " crawl -q --deny site " .. h.url("/site/"))
    assert.equal(5, code, err)
    assert.matches("every start URL was refused", err)
  end)

  it("when robots.txt denied every start URL, all on one host", function()
    local code, out, err = h.sh(bin .. " crawl -q " .. h.url("/private/x") .. " " .. h.url("/private/y"))
    assert.equal(5, code, err)
    assert.equal("", out)
    assert.matches("lost: 2 of 2 start URLs not crawled %(robots_denied: 2%)", err)
    assert.matches("every start URL was refused", err)
  end)
end)

describe("a start URL robots.txt denies", function()
  it("is counted as refused when another start URL of its host is crawled (exit 0)", function()
    local code, out, err = h.sh(bin .. " crawl -d 0 " .. h.url("/site/") .. " " .. h.url("/private/x"))
    assert.equal(0, code, err)
    assert.equal(1, count(out, "\n"))
    assert.matches("start URL http://[^ ]+/private/x not crawled: denied by robots.txt", err)
    assert.matches("lost: 1 of 2 start URLs not crawled %(robots_denied: 1%)", err)
  end)
end)

describe("report.failure, the rule of exit status 5", function()
  it("says when parse failed on every page", function()
    local code, out, err = run_script([[
      local st = require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 1, quiet = true,
        parse = function(page) page:follow_links() error("boom") end }
      print(require("luacrawl.crawl_report").failure(st))
    ]])
    assert.equal(5, code, err)
    assert.equal("parse failed on every page\n", out)
  end)
end)

describe("an unreachable robots.txt", function()
  it("is an error naming its cause, not a robots.txt denial", function()
    local code, _, err = h.sh(bin .. " crawl " .. DEAD)
    assert.equal(5, code, err)
    assert.matches("robots denied 0", err)
    assert.matches("errors 1 %(robots_unreachable: 1%)", err)
    assert.matches("robots.txt unreachable: http://127.0.0.1:19998 %(connect: ", err)
  end)
end)

describe("spec fields", function()
  local crawl = require "luacrawl.crawl"

  it("refuses a misspelled field, with the name it meant", function()
    local ok, err = pcall(crawl.new, { start = h.url("/site/"), depth = 1, concurency = 2 })
    assert.is_false(ok)
    assert.matches("unknown fields 'concurency' %(did you mean 'concurrency'%?%), 'depth'", err)
  end)

  it("refuses unknown names in nested tables", function()
    for _, case in ipairs({
      { { throttle = { targt = 1 } }, "unknown field 'targt' %(did you mean 'target'%?%) in throttle" },
      { { fetch = { timout = 1 } }, "unknown field 'timout' %(did you mean 'timeout'%?%) in fetch" },
      { { allow = { host = { "a" } } }, "unknown field 'host' %(did you mean 'hosts'%?%) in allow" },
      { { deny = { url = { "a" } } }, "unknown field 'url' %(did you mean 'urls'%?%) in deny" },
      { { normalize = { sort = true } }, "unknown field 'sort' in normalize" },
      { { output = { path = h.tmpname(".csv"), feilds = {} } }, "in output" },
    }) do
      local spec = case[1]
      spec.start = h.url("/site/")
      local ok, err = pcall(crawl.new, spec)
      assert.is_false(ok)
      assert.matches(case[2], err)
    end
  end)

  it("refuses a host_key or a retry_kinds name it does not know, with the name meant", function()
    for _, case in ipairs({
      { { host_key = "domian" }, "host_key must be \"host\", \"domain\", \"ip\" or a function %(got 'domian'%) %(did you mean 'domain'%?%)" },
      { { host_key = 1 }, "host_key must be .* %(got number%)" },
      { { retry_kinds = { timout = true } }, "retry_kinds: no error kind 'timout' %(did you mean 'timeout'%?%)" },
      { { retry_kinds = { "dns", "conect" } }, "retry_kinds: no error kind 'conect' %(did you mean 'connect'%?%)" },
      { { retry_kinds = "timeout" }, "retry_kinds must be a set of error kinds" },
    }) do
      local spec = case[1]
      spec.start = h.url("/site/")
      local ok, err = pcall(crawl.new, spec)
      assert.is_false(ok)
      assert.matches(case[2], err)
    end
    -- A list of kinds is the set the crawl reads; a kind set false is not retried.
    assert.same({ dns = true, timeout = true }, crawl.new({ start = h.url("/site/"), retry_kinds = { "dns", "timeout" } }).spec.retry_kinds)
    assert.same({ dns = true }, crawl.new({ start = h.url("/site/"), retry_kinds = { dns = true, timeout = false } }).spec.retry_kinds)
  end)

  it("takes every field crawl.defaults has", function()
    local spec = { start = h.url("/site/") }
    for k, v in pairs(crawl.defaults) do
      if k ~= "throttle_fields" and k ~= "progress_intervals" then spec[k] = v end
    end
    assert.truthy(crawl.new(spec))
  end)
end)

describe("command line options", function()
  it("an unknown option is one line, a suggestion and a pointer to --help", function()
    local code, _, err = h.sh(bin .. " crawl --dept 1 " .. h.url("/site/"))
    assert.equal(2, code)
    assert.equal("luacrawl: unknown option '--dept' (did you mean '--depth'?) (see luacrawl crawl --help)\n", err)
  end)

  it("takes --opt=value for options with a value", function()
    local code, out, err = h.sh(bin .. " crawl -q --depth=0 --concurrency=2 " .. h.url("/site/"))
    assert.equal(0, code, err)
    assert.equal(1, count(out, "\n"))
  end)

  it("-d is the short form of --max-depth (max_depth); --depth is the same option", function()
    local counts = {}
    for _, opt in ipairs({ "-d 0", "--max-depth 0", "--max-depth=0", "--depth 0", "-d 1" }) do
      local code, out, err = h.sh(bin .. " crawl -q " .. opt .. " " .. h.url("/site/"))
      assert.equal(0, code, err)
      counts[#counts + 1] = count(out, "\n")
    end
    assert.same({ 1, 1, 1, 1 }, { counts[1], counts[2], counts[3], counts[4] })
    assert.is_true(counts[5] > 1)
    local _, help = h.sh(bin .. " crawl --help")
    assert.matches("%-d, %-%-max%-depth N", help)
  end)

  it("a crawl.run error about a field says the option that set it", function()
    local code, _, err = h.sh(bin .. " crawl --retry-kinds timout " .. h.url("/site/"))
    assert.equal(2, code)
    assert.matches("^luacrawl: %-%-retry%-kinds: no error kind 'timout' %(did you mean 'timeout'%?%)", err)
    assert.matches(" %(see luacrawl crawl %-%-help%)\n$", err)
    code, _, err = h.sh(bin .. " crawl --host-key domian " .. h.url("/site/"))
    assert.equal(2, code)
    assert.matches("^luacrawl: %-%-host%-key must be host, domain or ip %(got 'domian'%) %(did you mean 'domain'%?%)", err)
  end)

  it("-d -1 says it must be >= 0, in one line", function()
    local code, _, err = h.sh(bin .. " crawl -d -1 " .. h.url("/site/"))
    assert.equal(2, code)
    assert.matches("^luacrawl: %-d must be an integer >= 0 %(got %-1%) %(see luacrawl crawl %-%-help%)\n$", err)
  end)
end)

describe("Scrapy habits", function()
  it("returning an item from parse warns once, with the fix", function()
    local _, _, err = run_script([[
      require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 1, quiet = true,
        parse = function(page) page:follow_links() return { url = page.url } end }
    ]])
    assert.equal(1, count(err, "parse returned a table[^\n]*use page:emit%(item%)"))
  end)

  it("coroutine.yield(item) in parse warns", function()
    local _, _, err = run_script([[
      require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 1, quiet = true,
        parse = function(page) page:follow_links() coroutine.yield({ url = page.url }) end }
    ]])
    assert.equal(1, count(err, "coroutine.yield%(value%)[^\n]*page:emit%(item%)"))
  end)

  it("an allow function that returns nothing warns once", function()
    local _, _, err = run_script([[
      require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 1, quiet = true,
        allow = function(url) if url:find("/site/") then end end }
    ]])
    assert.equal(1, count(err, "allow function returned nil[^\n]*return true or false"))
  end)
end)

describe("selectors", function()
  it("fetch --css with a bad selector fails before fetching, in one line", function()
    local code, _, err = h.sh(bin .. " fetch --css 'a[' " .. DEAD)
    assert.equal(2, code)
    assert.matches("^luacrawl: %-%-css: css: unexpected end of selector", err)
    assert.not_matches("traceback", err)
  end)

  it("a selector error in parse is logged once, with its count at the end", function()
    local _, _, err = run_script([[
      require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 1, progress = false,
        parse = function(page) page:follow_links() page:css("a[") end }
    ]])
    assert.equal(1, count(err, "error in parse for"))
    assert.matches("the same error in parse on %d+ pages", err)
  end)
end)

describe("CSV columns", function()
  it("come from the output's fields", function()
    local path = h.tmpname(".csv")
    local code, _, err = run_script(([[
      require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 0, quiet = true,
        output = { path = %q, fields = { "a", "b" } },
        parse = function(page) page:emit { b = 2 } end }
    ]]):format(path))
    assert.equal(0, code, err)
    local f = assert(io.open(path))
    assert.equal("a,b\r\n,2\r\n", f:read("*a"))
    f:close()
  end)

  it("come from the spec's fields, in order, for every CSV output; an output's own fields win", function()
    local a, b = h.tmpname(".csv"), h.tmpname(".csv")
    local code, _, err = run_script(([[
      require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 0, progress = false,
        fields = { "title", "url" }, output = { %q, { path = %q, fields = { "url" } } },
        parse = function(page) page:emit { url = page.url, title = page:css1("title::text"), extra = 1 } end }
    ]]):format(a, b))
    assert.equal(0, code, err)
    local url = h.url("/site/")
    local function read(path)
      local f = assert(io.open(path, "rb"))
      local text = f:read("*a")
      f:close()
      return text
    end
    assert.equal("title,url\r\nSite," .. url .. "\r\n", read(a))
    assert.equal("url\r\n" .. url .. "\r\n", read(b))
    assert.not_matches("not a CSV column", err) -- columns chosen: no warning
  end)

  it("refuses fields that are not a list of keys, before the crawl", function()
    for _, bad in ipairs({ '"url,title"', "{}", '{ "url", 2 }', 'output = { path = "OUT", fields = "url" }' }) do
      local spec = bad:find("output", 1, true) and bad:gsub("OUT", h.tmpname(".csv"))
        or ("output = %q, fields = %s"):format(h.tmpname(".csv"), bad)
      local code, out, err = run_script(([[
        require("luacrawl.crawl").run { start = "FIXTURE", quiet = true, %s, parse = function(page) page:emit { url = page.url } end }
      ]]):format(spec))
      assert.equal(1, code, bad)
      assert.equal("", out)
      assert.matches("fields must be a list of item keys, as {\"url\", \"title\"}", err)
    end
  end)

  it("taken from the first item, warn when a later key is dropped", function()
    local path = h.tmpname(".csv")
    local _, _, err = run_script(([[
      local n = 0
      require("luacrawl.crawl").run { start = "FIXTURE", max_depth = 1, quiet = true, output = %q,
        parse = function(page)
          n = n + 1
          page:follow_links()
          page:emit { url = page.url, title = n > 1 and "t" or nil }
        end }
    ]]):format(path))
    assert.equal(1, count(err, "item key 'title' is not a CSV column[^\n]*fields = {"))
  end)
end)

describe("URLs without a scheme", function()
  it("fetch says missing scheme, with the URL meant", function()
    local code, _, err = h.sh(bin .. " fetch example.org/x")
    assert.equal(2, code)
    assert.matches("missing scheme: did you mean http://example.org/x%?", err)
  end)

  it("crawl says it too", function()
    local code, _, err = h.sh(bin .. " crawl example.org/")
    assert.equal(2, code)
    assert.matches("missing scheme: did you mean http://example.org/%?", err)
  end)
end)
