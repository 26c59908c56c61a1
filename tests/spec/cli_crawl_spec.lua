-- luacrawl crawl: one-off crawls from the command line.
local h = require "spec_helper"
local cjson = require "cjson"

local bin = h.luacrawl_bin

local function lines_of(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do out[#out + 1] = line end
  return out
end

local function manifest(depth)
  local _, out = h.sh("python3 -c \"import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('"
    .. h.url("/site/manifest.json" .. (depth and ("?depth=" .. depth) or "")) .. "').read().decode())\"")
  return cjson.decode(out)
end

local function as_set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

describe("luacrawl crawl", function()
  it("finds exactly the pages of a generated site, one JSON object each", function()
    local code, out, err = h.sh(bin .. " crawl -q -c 32 --per-host 32 " .. h.url("/site/"))
    assert.equal(0, code, err)
    local got, n = {}, 0
    for _, line in ipairs(lines_of(out)) do
      local page = cjson.decode(line)
      local path = page.url:match("^http://[^/]+(/.*)$")
      assert.is_nil(got[path], path)
      got[path] = true
      n = n + 1
      for _, k in ipairs({ "status", "depth", "length", "elapsed" }) do assert.is_number(page[k], k) end
      if page.status == 200 and path:find("^/site/p/") then
        assert.equal("Page " .. path:match("(%d+)%.html$"), page.title)
        assert.matches("text/html", page.content_type)
        assert.is_string(page.referrer)
      end
    end
    assert.same(as_set(manifest()), got)
    assert.equal("", err) -- -q
  end)

  it("-d limits the depth", function()
    local code, out = h.sh(bin .. " crawl -q -d 2 " .. h.url("/site/"))
    assert.equal(0, code)
    local got = {}
    for _, line in ipairs(lines_of(out)) do got[cjson.decode(line).url:match("^http://[^/]+(/.*)$")] = true end
    assert.same(as_set(manifest(2)), got)
  end)

  it("-n limits the pages and -o writes a file", function()
    local path = h.tmpname(".jsonl")
    local code = h.sh(bin .. " crawl -q -n 5 -o " .. path .. " " .. h.url("/site/"))
    assert.equal(0, code)
    local n = 0
    for line in io.lines(path) do
      cjson.decode(line)
      n = n + 1
    end
    assert.equal(5, n)
    os.remove(path)
  end)

  it("writes CSV when the output ends in .csv", function()
    local path = h.tmpname(".csv")
    assert.equal(0, (h.sh(bin .. " crawl -q -n 3 -o " .. path .. " " .. h.url("/site/"))))
    local f = io.open(path)
    local header = f:read("*l"):gsub("\r$", "")
    f:close()
    assert.equal("url,status,depth,content_type,length,title,referrer,elapsed,duplicate_of", header)
    os.remove(path)
  end)

  it("--deny and --allow filter URLs by regular expression", function()
    local code, out = h.sh(bin .. " crawl -q -d 3 --deny '[13579]\\.html$' " .. h.url("/site/"))
    assert.equal(0, code)
    for _, line in ipairs(lines_of(out)) do assert.not_matches("[13579]%.html$", cjson.decode(line).url) end
  end)

  it("--span-hosts and --allow-host (which replaces the start hosts) cross to other hosts", function()
    local url = h.url("/hostsite/", "a.crawl.test")
    local dns = " --dns-server " .. h.dns_server .. " "
    local _, out = h.sh(bin .. " crawl -q" .. dns .. url)
    assert.equal(21, #lines_of(out))
    _, out = h.sh(bin .. " crawl -q --allow-host a.crawl.test --allow-host b.crawl.test" .. dns .. url)
    assert.equal(42, #lines_of(out))
    _, out = h.sh(bin .. " crawl -q --span-hosts" .. dns .. url)
    assert.equal(63, #lines_of(out))
  end)

  it("--stats-json writes the stats", function()
    local path = h.tmpname()
    assert.equal(0, (h.sh(bin .. " crawl -q -n 4 --stats-json " .. path .. " " .. h.url("/site/"))))
    local f = io.open(path)
    local st = cjson.decode(f:read("*a"))
    f:close()
    os.remove(path)
    assert.equal(4, st.pages)
  end)

  it("passes the limits on to each request", function()
    local path = h.tmpname()
    local code = h.sh(bin .. " crawl -q -d 1 --max-size 1000 --timeout 5 --max-redirect 2 --max-memory 100000000 --stats-json "
      .. path .. " " .. h.url("/site/"))
    assert.equal(0, code)
    local f = io.open(path)
    local st = cjson.decode(f:read("*a"))
    f:close()
    os.remove(path)
    assert.is_true(st.errors.too_large > 0) -- pages over 1000 bytes
  end)

  it("prints stats on stderr unless -q", function()
    local _, _, err = h.sh(bin .. " crawl -n 2 " .. h.url("/site/"))
    assert.matches("pages 2", err)
  end)

  it("stops on SIGINT, finishing requests in flight, with complete output and stats", function()
    local out, errf = h.tmpname(".jsonl"), h.tmpname()
    local urls = {}
    for i = 1, 40 do urls[i] = "'" .. h.url("/slow?delay=0.3&i=" .. i) .. "'" end
    local cmd = ("%s crawl -c 4 --per-host 4 --no-robots -o %s %s 2>%s & pid=$!; sleep 1; kill -INT $pid; wait $pid; echo $?")
      :format(bin, out, table.concat(urls, " "), errf)
    local _, status = h.sh(cmd)
    assert.equal("130", status:match("%d+"))
    local n = 0
    local f = io.open(out, "rb")
    local text = f:read("*a")
    f:close()
    assert.equal("\n", text:sub(-1))
    for _, line in ipairs(lines_of(text)) do
      cjson.decode(line)
      n = n + 1
    end
    assert.is_true(n > 0 and n < 41, "pages " .. n)
    f = io.open(errf)
    local err = f:read("*a")
    f:close()
    assert.matches("SIGINT", err)
    assert.matches("stopped: SIGINT", err)
    os.remove(out)
    os.remove(errf)
  end)

  it("aborts at once on a second SIGINT, and the output still ends on a complete line", function()
    local out, errf = h.tmpname(".jsonl"), h.tmpname()
    local urls = { "'" .. h.url("/status/200?first") .. "'" }
    for i = 1, 8 do urls[#urls + 1] = "'" .. h.url("/slow?delay=20&i=" .. i) .. "'" end
    local cmd = ("%s crawl -c 8 --per-host 8 --no-robots -o %s %s 2>%s & pid=$!; sleep 1; kill -INT $pid; "
      .. "sleep 0.3; kill -INT $pid; t0=$(date +%%s); wait $pid; echo $? $(( $(date +%%s) - t0 ))")
      :format(bin, out, table.concat(urls, " "), errf)
    local _, result = h.sh(cmd)
    local status, secs = result:match("(%d+) (%d+)")
    assert.equal("130", status)
    assert.is_true(tonumber(secs) <= 2, "took " .. secs .. " s")
    local f = io.open(out, "rb")
    local text = f:read("*a")
    f:close()
    assert.equal("\n", text:sub(-1))
    for _, line in ipairs(lines_of(text)) do cjson.decode(line) end
    os.remove(out)
    os.remove(errf)
  end)

  it("exits 2 on usage errors", function()
    assert.equal(2, (h.sh(bin .. " crawl")))
    assert.equal(2, (h.sh(bin .. " crawl -c 0 http://x/")))
    assert.equal(2, (h.sh(bin .. " crawl --bogus http://x/")))
    assert.equal(2, (h.sh(bin .. " crawl --deny '(' http://x/")))
    assert.equal(2, (h.sh(bin .. " crawl -o out.txt http://x/")))
  end)
end)

describe("crawl progress", function()
  it("logs a status line periodically when stderr is not a terminal", function()
    local script = h.tmpname(".lua")
    local f = io.open(script, "w")
    f:write(([[
      local crawl = require "luacrawl.crawl"
      local start = {}
      for i = 1, 6 do start[i] = "%s" .. i end
      crawl.run({ start = start, robots = false, per_host = 1, progress_interval = 0.2 })
    ]]):format(h.url("/slow?delay=0.2&i=")))
    f:close()
    local code, _, err = h.sh(bin .. " run " .. script)
    os.remove(script)
    assert.equal(0, code)
    local n = 0
    for line in err:gmatch("[^\n]+") do
      if line:match("^luacrawl: %d+ pages, [%d.]+ pages/s, %d+ queued, %d+ in flight, %d+ errors") then n = n + 1 end
    end
    assert.is_true(n >= 3, "progress lines: " .. n)
  end)

  it("says how many retries wait, and when the next is due", function()
    local url = h.url(("/flaky/progress-%d?fail=1&status=500&retry_after=30"):format(math.random(1, 1e9)))
    local _, _, err = h.sh(("%s crawl '%s' --no-robots --progress-interval 0.2 --max-time 1 -o /dev/null"):format(
      bin, url))
    assert.matches("in flight, 0 errors, %d+ s; waiting to retry: 1, the next in %d+ s\n", err)
  end)
end)

describe("luacrawl crawl: waits", function()
  it("waits at most 60 s for a retry by default, and says so when the site asks for longer", function()
    local url = h.url(("/flaky/long-%d?fail=1&status=503&retry_after=3600"):format(math.random(1, 1e9)))
    local _, _, err = h.sh(("%s crawl '%s' --no-robots --no-progress --max-time 1 -o /dev/null"):format(bin, url))
    assert.matches(": Retry-After 3600 s is over max_retry_after: retried in 60 s\n", err, 1, true)
  end)
end)

describe("luacrawl crawl: cookies and contact", function()
  local A = "a.crawl.test"

  local function control(path)
    local _, out = h.sh("python3 -c \"import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('"
      .. h.url(path) .. "').read().decode())\"")
    return cjson.decode(out)
  end

  -- The requests the server logged for path on A.
  local function logged(path)
    local out = {}
    for _, e in ipairs(control("/__log?host=" .. A).requests) do
      if e.path == path then out[#out + 1] = e end
    end
    return out
  end

  local function crawl(args)
    return h.sh(("%s --dns-server %s crawl -q %s"):format(bin, h.dns_server, args))
  end

  before_each(function() control("/__reset") end)

  it("keeps the cookies a site sets for the rest of the crawl, and none with --no-cookies", function()
    local start = "'" .. h.url("/cookies/set?c=sid%3D1", A) .. "'"
    local code, _, err = crawl("-d 1 " .. start)
    assert.equal(0, code, err)
    assert.equal("sid=1", logged("/cookies/show")[1].cookie)
    control("/__reset")
    code, _, err = crawl("-d 1 --no-cookies " .. start)
    assert.equal(0, code, err)
    assert.equal(cjson.null, logged("/cookies/show")[1].cookie)
  end)

  it("--contact goes into the default User-Agent, of robots.txt's request too", function()
    local code, _, err = crawl("-d 0 --contact https://example.org/bot '" .. h.url("/echo", A) .. "'")
    assert.equal(0, code, err)
    local ua = logged("/echo")[1].ua
    assert.matches("^luacrawl/[%d.]+ %(%+https://example%.org/bot%)$", ua)
    assert.equal(ua, logged("/robots.txt")[1].ua)
  end)

  it("--contact leaves a User-Agent given with -A as it is", function()
    local code, _, err = crawl("-d 0 -A 'mybot/1.0' --contact ops@example.org '" .. h.url("/echo", A) .. "'")
    assert.equal(0, code, err)
    assert.equal("mybot/1.0", logged("/echo")[1].ua)
  end)

  it("refuses a contact that is neither a URL nor an email address", function()
    local code, _, err = crawl("--contact 'call me' '" .. h.url("/echo", A) .. "'")
    assert.equal(2, code)
    assert.matches("contact must be a URL", err)
  end)
end)

describe("luacrawl crawl's outputs as people expect", function()
  local function run(args)
    return h.sh(("%s crawl '%s' -q --fields url %s"):format(bin, h.url("/items?page=1"), args))
  end
  local function read(path)
    local f = assert(io.open(path, "rb"))
    local s = f:read("*a")
    f:close()
    return s
  end

  it("--append adds to a JSON Lines output instead of replacing it", function()
    local out = h.tmpname(".jsonl")
    assert.equal(0, (run("-d 0 --append -o " .. out)))
    assert.equal(0, (run("-d 0 --append -o " .. out)))
    assert.equal(2, #lines_of(read(out)))
    assert.equal(0, (run("-d 0 -o " .. out)))
    assert.equal(1, #lines_of(read(out)))
  end)

  it("--append writes a CSV's header once, and refuses other columns", function()
    local out = h.tmpname(".csv")
    assert.equal(0, (run("-d 0 --append -o " .. out)))
    assert.equal(0, (run("-d 0 --append -o " .. out)))
    local rows = lines_of((read(out):gsub("\r", "")))
    assert.same({ "url", h.url("/items?page=1"), h.url("/items?page=1") }, rows)
    local code, _, err = h.sh(("%s crawl '%s' -q -d 0 --fields url,status --append -o %s"):format(bin,
      h.url("/items?page=1"), out))
    assert.equal(2, code)
    assert.matches("to append to it", err)
    assert.equal(3, #lines_of((read(out):gsub("\r", ""))))
  end)

  it("--append refuses a JSON array and goes without --state", function()
    local code, _, err = run("-d 0 --append -o " .. h.tmpname(".json"))
    assert.equal(2, code)
    assert.matches("cannot be appended to", err)
    code, _, err = run("-d 0 --append -o " .. h.tmpname(".jsonl") .. " --state " .. h.tmpname(".db"))
    assert.equal(2, code)
    assert.matches("%-%-append goes without %-%-state", err)
  end)

  it("makes the folders of the outputs, stats, archive and state when missing", function()
    local dir = h.tmpname()
    local code, _, err = run(("-d 0 -o %s/a/b/p.jsonl --stats-json %s/c/s.json --warc %s/d/arc --state %s/e/s.db"):format(
      dir, dir, dir, dir))
    assert.equal(0, code, err)
    for _, p in ipairs { "/a/b/p.jsonl", "/c/s.json", "/d/arc-00000.warc.gz", "/e/s.db" } do
      assert.truthy(io.open(dir .. p, "rb"), p)
    end
  end)

  it("takes short options with their values attached, as getopt does", function()
    local code, out = run("-d0 -n1 -c2 -o -")
    assert.equal(0, code)
    assert.equal(1, #lines_of(out))
  end)
end)
