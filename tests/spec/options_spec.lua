-- One meaning for each option: a crawl spec run through crawl.run and the same
-- crawl typed as `luacrawl crawl` options fetch the same pages; outputs, --fields,
-- content duplicates, Retry-After dates and crawl.page (docs/crawl.md).
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

lc.configure({ dns_servers = h.dns_server })
local bin = h.luacrawl_bin

local function lines_of(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do out[#out + 1] = line end
  return out
end

local function sorted(set)
  local out = {}
  for k in pairs(set) do out[#out + 1] = k end
  table.sort(out)
  return out
end

-- The URLs crawl.run fetches for spec (robots.txt aside).
local function fetched_by_lua(spec)
  local got = {}
  spec.quiet, spec.progress, spec.signals = true, false, false
  spec.on_response = function(page) got[page.request.url] = true end
  crawl.run(spec)
  return sorted(got)
end

-- The URLs `luacrawl crawl` records with the options given.
local function fetched_by_cli(args)
  local code, out, err = h.sh(bin .. " crawl -q --dns-server " .. h.dns_server .. " " .. args)
  assert.equal(0, code, err)
  local got = {}
  for _, line in ipairs(lines_of(out)) do got[cjson.decode(line).url] = true end
  return sorted(got)
end

local A = h.url("/hostsite/", "a.crawl.test")

local function hosts_of(urls)
  local set = {}
  for _, u in ipairs(urls) do set[lc.url.host(u)] = true end
  return sorted(set)
end

describe("the scope means the same in crawl.run and on the command line", function()
  it("by default: the start URLs' hosts exactly", function()
    local lua = fetched_by_lua({ start = { A } })
    assert.same(lua, fetched_by_cli(A))
    assert.same({ "a.crawl.test" }, hosts_of(lua))
    assert.equal(21, #lua)
  end)

  it("allow.urls / --allow narrow within the start hosts", function()
    local lua = fetched_by_lua({ start = { A }, allow = { urls = { "/hostsite/" } } })
    assert.same(lua, fetched_by_cli("--allow /hostsite/ " .. A))
    assert.same({ "a.crawl.test" }, hosts_of(lua))
    assert.equal(21, #lua)
    lua = fetched_by_lua({ start = { A }, allow = { urls = { "/hostsite/$", "/p/[0-4]\\.html$" } } })
    assert.same(lua, fetched_by_cli("--allow '/hostsite/$' --allow '/p/[0-4]\\.html$' " .. A))
    assert.equal(6, #lua)
  end)

  it("allow.hosts / --allow-host replace the start hosts, with subdomains", function()
    local lua = fetched_by_lua({ start = { A }, allow = { hosts = { "a.crawl.test", "b.crawl.test" } } })
    assert.same(lua, fetched_by_cli("--allow-host a.crawl.test --allow-host b.crawl.test " .. A))
    assert.same({ "a.crawl.test", "b.crawl.test" }, hosts_of(lua))
    lua = fetched_by_lua({ start = { A }, allow = { hosts = { "crawl.test" }, urls = { "/hostsite/$", "/0\\.html$" } } })
    assert.same(lua, fetched_by_cli("--allow-host crawl.test --allow '/hostsite/$' --allow '/0\\.html$' " .. A))
    assert.equal(6, #lua)
  end)

  it("span_hosts / --span-hosts: any host, narrowed by allow.urls", function()
    local lua = fetched_by_lua({ start = { A }, span_hosts = true })
    assert.same(lua, fetched_by_cli("--span-hosts " .. A))
    assert.equal(63, #lua)
    lua = fetched_by_lua({ start = { A }, span_hosts = true, allow = { urls = { "/hostsite/$", "/0\\.html$" } } })
    assert.same(lua, fetched_by_cli("--span-hosts --allow '/hostsite/$' --allow '/0\\.html$' " .. A))
    assert.equal(6, #lua)
  end)

  it("deny / --deny take URLs out of the scope", function()
    local lua = fetched_by_lua({ start = { A }, deny = { urls = { "/1[0-9]\\.html$" } } })
    assert.same(lua, fetched_by_cli("--deny '/1[0-9]\\.html$' " .. A))
    assert.equal(11, #lua)
  end)
end)

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

describe("outputs of luacrawl crawl", function()
  local site = h.url("/site/")

  it("-o -, -o /dev/stdout write JSON Lines on stdout; -o /dev/null writes nothing", function()
    for _, o in ipairs({ "-", "/dev/stdout" }) do
      local code, out, err = h.sh(bin .. " crawl -q -n 3 -o " .. o .. " " .. site)
      assert.equal(0, code, err)
      local lines = lines_of(out)
      assert.equal(3, #lines, o)
      for _, l in ipairs(lines) do assert.is_string(cjson.decode(l).url) end
    end
    local code, out, err = h.sh(bin .. " crawl -q -n 3 -o /dev/null " .. site)
    assert.equal(0, code, err)
    assert.equal("", out)
  end)

  it("-o out.json writes one JSON array, [] when nothing was recorded", function()
    local path = h.tmpname(".json")
    assert.equal(0, (h.sh(bin .. " crawl -q -n 4 -o " .. path .. " " .. site)))
    local doc = cjson.decode(read(path))
    assert.equal(4, #doc)
    assert.is_number(doc[1].status)
    local empty = h.tmpname(".json")
    local items = {}
    crawl.run({ start = { site }, quiet = true, progress = false, signals = false, max_pages = 1,
      parse = function() end, output = empty, items = items })
    assert.same({}, cjson.decode(read(empty)))
  end)

  it("-o out.json is a valid array when SIGINT stops the crawl", function()
    local path = h.tmpname(".json")
    local code = h.sh(("%s crawl -q --delay 0.2 --per-host 1 -o %s %s & pid=$!; sleep 1; kill -INT $pid; wait $pid")
      :format(bin, path, site))
    assert.equal(130, code)
    local doc = cjson.decode(read(path))
    assert.is_true(#doc >= 2)
  end)

  it("on a terminal, no progress line mixes into records written to stdout", function()
    -- stdout and stderr on one pseudo-terminal, as in a shell; the crawl lasts past
    -- several progress intervals (0.5 s).
    local py = [[import os, pty, sys
status = pty.spawn(sys.argv[1:]) # copies the terminal's output to our stdout
sys.exit(os.waitstatus_to_exitcode(status))]]
    local script = h.tmpname(".py")
    local f = assert(io.open(script, "w"))
    f:write(py)
    f:close()
    local code, out = h.sh(("python3 %s %s crawl -n 8 --delay 0.25 --per-host 1 %s"):format(script, bin, site))
    assert.equal(0, code)
    assert.is_nil(out:find("\27[K", 1, true), out)
    assert.is_nil(out:find("queued", 1, true), out) -- the progress line says it
    local records = 0
    for line in out:gmatch("[^\r\n]+") do
      if line:sub(1, 1) == "{" then
        assert.is_string(cjson.decode(line).url)
        records = records + 1
      end
    end
    assert.equal(8, records)
  end)
end)

describe("Retry-After and host backoff", function()
  local http_date = require "luacrawl.http_date"

  it("reads the three forms of an HTTP date", function()
    assert.equal(784111777, http_date.parse("Sun, 06 Nov 1994 08:49:37 GMT"))
    assert.equal(784111777, http_date.parse("Sunday, 06-Nov-94 08:49:37 GMT"))
    assert.equal(784111777, http_date.parse("Sun Nov  6 08:49:37 1994"))
    assert.equal(951825600, http_date.parse("Tue, 29 Feb 2000 12:00:00 GMT"))
    assert.is_nil(http_date.parse("Sun, 06 Nov 1994 08:49:37 CET"))
    assert.is_nil(http_date.parse("yesterday"))
  end)

  it("a Retry-After date waits until that date by the server's clock (Date)", function()
    local date = "Sun, 06 Nov 1994 08:49:37 GMT"
    assert.equal(3, http_date.retry_after("Sun, 06 Nov 1994 08:49:40 GMT", date))
    assert.equal(0, http_date.retry_after("Sun, 06 Nov 1994 08:49:30 GMT", date))
    assert.equal(7, http_date.retry_after("7"))
    assert.is_nil(http_date.retry_after("nan"))
  end)

  it("a crawl retries a 503 at the date its Retry-After names", function()
    local at = os.date("!%a, %d %b %Y %H:%M:%S GMT", os.time() + 3)
    local url = h.url("/flaky/date" .. os.time() .. "?fail=1&status=503&retry_after=" .. at:gsub("[^%w]", function(c) return ("%%%02X"):format(c:byte()) end))
    local t0 = lc.now()
    local st = crawl.run({ start = { url }, robots = false, quiet = true, progress = false, signals = false })
    assert.equal(1, st.retries)
    assert.equal(1, st.statuses[200])
    assert.is_true(lc.now() - t0 >= 1.9, "waited " .. (lc.now() - t0))
  end)

  it("a 429 puts its host in backoff though the host's other pages succeed", function()
    local id = "busy" .. os.time()
    local start = { h.url("/site/p/1.html"), h.url("/flaky/" .. id .. "?fail=1&status=429&retry_after=2") }
    for i = 2, 5 do start[#start + 1] = h.url("/site/p/" .. i .. ".html") end
    local at = {}
    local t0 = lc.now()
    local st = crawl.run({ start = start, robots = false, quiet = true, progress = false, signals = false,
      per_host = 1, concurrency = 1, parse = function() end,
      on_response = function(page) at[page.url] = at[page.url] or lc.now() end })
    assert.equal(1, st.host_backoffs)
    -- The start URLs go in order, one at a time: the 429 is the second answer, and
    -- the pages after it wait out its Retry-After.
    for i = 3, #start do
      assert.is_true(at[start[i]] - t0 >= 1.9, start[i] .. " came " .. (at[start[i]] - t0) .. " s after the start")
    end
  end)
end)

describe("content duplicates", function()
  local one, copy = h.url("/site/p/1.html"), h.url("/site/p/1.html?copy=1")

  local function run(extra)
    local parsed, marks = {}, {}
    local spec = { start = { one, copy }, max_depth = 0, robots = false, quiet = true, progress = false,
      signals = false, concurrency = 1, per_host = 1,
      on_response = function(page) marks[page.url] = page.duplicate_of or false end,
      parse = function(page) parsed[#parsed + 1] = page.url end }
    for k, v in pairs(extra or {}) do spec[k] = v end
    local st = crawl.run(spec)
    return st, marks, parsed
  end

  it("a body seen before at another URL marks the page duplicate_of the first", function()
    local st, marks, parsed = run()
    assert.same({ [one] = false, [copy] = one }, marks)
    assert.equal(2, #parsed)
    assert.equal(1, st.content_duplicates)
  end)

  it("dedupe_content = true skips the duplicate's parse; false digests nothing", function()
    local _, marks, parsed = run({ dedupe_content = true })
    assert.same({ one }, parsed)
    assert.equal(one, marks[copy])
    _, marks = run({ dedupe_content = false })
    assert.same({ [one] = false, [copy] = false }, marks)
  end)

  it("core.digest gives 32 hex digits, the same for the same bytes", function()
    local core = require "luacrawl.core"
    assert.matches("^%x+$", core.digest("a\0b"))
    assert.equal(32, #core.digest(""))
    assert.equal(core.digest("x"), core.digest("x"))
    assert.not_equal(core.digest("x"), core.digest("y"))
  end)

  it("core.dupes answers the URL each digest came first with, and refuses a malformed digest", function()
    local core = require "luacrawl.core"
    local d = core.dupes()
    local n = 5000
    for i = 1, n do assert.is_nil(d:first(core.digest("body " .. i), "http://a.test/" .. i)) end
    for i = 1, n do
      assert.equal("http://a.test/" .. i, d:first(core.digest("body " .. i), "http://a.test/copy/" .. i))
    end
    assert.equal(n, #d)
    assert.equal(n, d:size())
    assert.is_true(d:bytes() > n * 32)
    -- Upper-case hex is the same digest.
    assert.equal("http://a.test/1", d:first(core.digest("body 1"):upper(), "x"))
    assert.matches("32 hex digits", select(2, pcall(d.first, d, "abc", "x")))
    assert.matches("32 hex digits", select(2, pcall(d.first, d, ("g"):rep(32), "x")))
    assert.equal(n, #d)
    -- map:see digests the body itself: the same digest as core.digest's.
    assert.equal("http://a.test/2", d:see("body 2", "y"))
    assert.is_nil(d:see("a new body", "http://a.test/new"))
    assert.equal("http://a.test/new", d:first(core.digest("a new body"), "z"))
    assert.equal(n + 1, #d)
  end)

  it("the CLI record says duplicate_of; --no-dedupe-content digests nothing", function()
    local function records(opts)
      local code, out, err = h.sh(bin .. " crawl -q -d 0 -c 1 --per-host 1 " .. opts .. one .. " '" .. copy .. "'")
      assert.equal(0, code, err)
      local recs = {}
      for _, l in ipairs(lines_of(out)) do
        local r = cjson.decode(l)
        recs[r.url] = r
      end
      return recs
    end
    local recs = records("")
    assert.equal(cjson.null, recs[one].duplicate_of)
    assert.equal(one, recs[copy].duplicate_of)
    -- --dedupe-content: the duplicate's record is written all the same.
    recs = records("--dedupe-content ")
    assert.equal(one, recs[copy].duplicate_of)
    recs = records("--no-dedupe-content ")
    assert.equal(cjson.null, recs[one].duplicate_of)
    assert.equal(cjson.null, recs[copy].duplicate_of)
  end)
end)

describe("--fields", function()
  it("chooses the record's fields, links among them", function()
    local code, out, err = h.sh(bin .. " crawl -q -d 0 --fields url,status,title,links " .. h.url("/site/p/1.html"))
    assert.equal(0, code, err)
    local r = cjson.decode(lines_of(out)[1])
    local keys = {}
    for k in pairs(r) do keys[#keys + 1] = k end
    table.sort(keys)
    assert.same({ "links", "status", "title", "url" }, keys)
    assert.equal("Page 1", r.title)
    assert.is_true(r.links > 0)
  end)

  it("sets the CSV columns, in the order given", function()
    local path = h.tmpname(".csv")
    assert.equal(0, (h.sh(bin .. " crawl -q -d 0 --fields links,url -o " .. path .. " " .. h.url("/site/"))))
    assert.equal("links,url", (read(path):match("^([^\r\n]*)")))
  end)

  it("refuses a field it does not know, naming the choices", function()
    local code, _, err = h.sh(bin .. " crawl -q --fields url,titel " .. h.url("/site/"))
    assert.equal(2, code)
    assert.matches("^luacrawl: %-%-fields: no record field 'titel' %(did you mean 'title'%?%)", err)
    assert.matches("links", err)
    assert.matches(" %(see luacrawl crawl %-%-help%)\n$", err)
  end)
end)

describe("fields in crawl.run: the page record without a parse", function()
  local site = h.url("/site/")
  local FIELDS = { "url", "status", "title", "links" }

  local function keys_of(t)
    local keys = {}
    for k in pairs(t) do keys[#keys + 1] = k end
    table.sort(keys)
    return keys
  end

  it("writes the record --fields writes, for every response", function()
    local items = {}
    local st = crawl.run({ start = { site, h.url("/redirect/1") }, max_depth = 1, quiet = true, progress = false,
      signals = false, fields = FIELDS, items = items })
    local code, out, err = h.sh(bin .. " crawl -q -d 1 --fields url,status,title,links " .. site .. " "
      .. h.url("/redirect/1"))
    assert.equal(0, code, err)
    local cli, n = {}, 0
    for _, l in ipairs(lines_of(out)) do
      local r = cjson.decode(l)
      cli[r.url] = r
      n = n + 1
    end
    assert.equal(n, #items)
    assert.equal(st.items, #items)
    assert.is_true(n >= 4)
    local statuses = {}
    for _, r in ipairs(items) do
      assert.same({ "links", "status", "title", "url" }, keys_of(r))
      assert.same(cli[r.url], r)
      statuses[r.status] = true
    end
    assert.is_true(statuses[302], "a redirect has its record") -- /redirect/1
    assert.equal("Site", cli[site].title)
    assert.is_true(cli[site].links > 0)
  end)

  it("gives a file output its fields as CSV columns, in order; on_response can drop a record", function()
    local path = h.tmpname(".csv")
    crawl.run({ start = { site }, max_depth = 1, quiet = true, progress = false, signals = false,
      fields = { "links", "url", "depth" }, output = path,
      on_response = function(page) if page.depth > 0 then return false end end })
    local text = read(path)
    assert.equal("links,url,depth\r\n1," .. site .. ",0\r\n", text)
  end)

  it("refuses a field the record does not have, with the name meant", function()
    local ok, err = pcall(crawl.new, { start = site, fields = { "url", "titel" } })
    assert.is_false(ok)
    assert.matches("crawl.run: fields: no record field 'titel' %(did you mean 'title'%?%)", err)
    -- With a parse, fields are the CSV columns of its items: any key.
    local items = {}
    crawl.run({ start = { site }, max_depth = 0, quiet = true, progress = false, signals = false,
      fields = { "name" }, items = items, parse = function(page) page:emit({ name = "x" }) end })
    assert.same({ { name = "x" } }, items)
  end)

  it("an output without a parse, callbacks or fields: a warning that nothing was written", function()
    local script = h.tmpname(".lua")
    local f = assert(io.open(script, "w"))
    f:write(("require('luacrawl.crawl').run { start = %q, max_depth = 0, quiet = true, output = %q }")
      :format(site, h.tmpname(".jsonl")))
    f:close()
    local code, _, err = h.sh(bin .. " run " .. script)
    assert.equal(0, code, err)
    assert.matches("warning: nothing was written to the output: without a parse the crawl emits no items; "
      .. "give fields = {\"url\", \"status\", ...} for a record per page", err, 1, true)
  end)
end)

describe("crawl.page: testing a parse without a crawl", function()
  local function parse(page)
    page:emit({ url = page.url, title = page:css1("title::text") })
    page:follow(page:css("a.next::attr(href)"))
  end

  it("runs a spec's parse on a page made from a URL and a body; emit and follow are collected", function()
    local page = crawl.page({ url = "http://example.org/list/", status = 200,
      headers = { ["Content-Type"] = "text/html" },
      body = '<html><title>List</title><a class="next" href="?p=2">next</a><a href="/x">x</a></html>' })
    parse(page)
    assert.same({ { url = "http://example.org/list/", title = "List" } }, page.items)
    assert.same({ "http://example.org/list/?p=2" }, page.followed)
    assert.equal("text/html", page.headers["content-type"])
    assert.equal(200, page.status)
  end)

  it("page:json() gives the body's value, or nil and a parse error for a body that is not JSON", function()
    assert.same({ a = 1 }, crawl.page({ url = "http://example.org/", body = '{"a":1}' }):json())
    local v, err = crawl.page({ url = "http://example.org/", body = "<html>" }):json()
    assert.is_nil(v)
    assert.equal("parse", err.kind)
    assert.matches("^json: ", err.message)
  end)

  it("refuses a table without a url", function()
    assert.has_error(function() crawl.page({ body = "" }) end,
      "crawl.page: expected a table with url (and body, status, headers)")
  end)
end)

describe("examples/policy.lua", function()
  local dir = h.source_dir .. "/examples"

  it("passes its own busted spec, run under LuaJIT against the built module", function()
    local cpath = package.cpath:match("([^;]*/lua/%?%.so)")
    local code, out, err = h.sh(("cd %s && luajit \"$(command -v busted)\" --cpath='%s' --lpath='./?.lua' policy_spec.lua")
      :format(dir, cpath))
    assert.equal(0, code, out .. err)
    assert.matches("1 success", out)
  end)

  it("runs as a script", function()
    local code, out, err = h.sh(("%s run %s/policy.lua '%s'"):format(bin, dir, h.url("/items?page=1")))
    assert.equal(0, code, err)
    local first = cjson.decode(lines_of(out)[1])
    assert.is_string(first.name)
    assert.is_number(first.price)
  end)
end)
