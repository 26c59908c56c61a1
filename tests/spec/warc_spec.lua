-- fixtures: --http --tls
-- lc.warc: fetches archived with archive = true, checked by independent readers (the
-- npm package warcio, through tests/tools/warcio, and tests/tools/warc_check.py, which
-- recomputes the digests and pairs the records as the standard says), and read back.
local lc = require "luacrawl"
local h = require "spec_helper"
local cjson = require "cjson"

local build_dir = assert(h.luacrawl_bin, "LUACRAWL_BIN is not set"):match("^(.*)/[^/]+$")
local tools = h.source_dir .. "/tests/tools"

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function spit(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function records(path)
  local list = {}
  for rec in lc.warc.records(path) do list[#list + 1] = rec end
  return list
end

local tls_port, tls_ca = os.getenv("LC_TLS_PORT"), os.getenv("LC_TLS_CA")

-- What the archive tests fetch: gzip, deflate, br, zstd, chunked, a redirect chain, a 404,
-- a page, a body cut at max_size, gzip over HTTP/2 (nginx).
local function targets()
  local list = {
    { url = h.url("/gzip") },
    { url = h.url("/deflate") },
    { url = h.url("/enc/br") },
    { url = h.url("/enc/zstd") },
    { url = h.url("/chunked") },
    { url = h.url("/redirect/2"), opts = { follow = 5 }, final = h.url("/redirect/0") },
    { url = h.url("/status/404") },
    { url = h.url("/site/p/3.html") },
    { url = h.url("/large?bytes=300000"), opts = { max_size = 1000, truncate = true } },
  }
  if tls_port then
    list[#list + 1] = {
      url = ("https://127.0.0.1:%s/gzip.txt"):format(tls_port), opts = { ca_file = tls_ca },
    }
  end
  return list
end

-- Fetch each target with archive = true into a writer on prefix; returns the
-- responses and the manifest of bodies (URL -> a file with the body) for warc_check.
local function archive(prefix, wopts)
  local manifest, responses = {}, {}
  lc.run(function()
    local w = assert(lc.warc.open(prefix, wopts or { cdx = true }))
    for _, t in ipairs(targets()) do
      local opts = { archive = true }
      for k, v in pairs(t.opts or {}) do opts[k] = v end
      local res = assert(lc.fetch(t.url, opts))
      assert(w:write(res))
      local body = h.tmpname(".body")
      spit(body, res.body)
      manifest[res.url] = body
      responses[#responses + 1] = res
    end
    assert(w:close())
  end)
  return responses, manifest
end

describe("lc.warc writing", function()
  it("writes files valid by the standard's check: digests, pairs, decoded payloads", function()
    local prefix = h.tmpname("-a")
    local _, manifest = archive(prefix)
    local file = prefix .. "-00000.warc.gz"
    assert.is_true(exists(file))
    assert.is_false(exists(file .. ".open"))
    local mpath = h.tmpname(".json")
    spit(mpath, cjson.encode(manifest))
    local code, out, err = h.sh(("python3 %q --expect %q %q"):format(tools .. "/warc_check.py",
      mpath, file))
    assert.equal(0, code, out .. err)
    assert.matches(" 0 problems", out)
    assert.matches("0 unchecked", out)
  end)

  it("writes an index that warcio's cdx-index agrees with, line for line", function()
    local prefix = h.tmpname("-c")
    archive(prefix)
    local file = prefix .. "-00000.warc.gz"
    local code, out, err = h.sh(("%q %q cdx-index %q"):format(tools .. "/warcio", build_dir, file))
    assert.equal(0, code, "warcio failed (npm unreachable?): " .. err)
    local function parse(text)
      local set, n = {}, 0
      for line in text:gmatch("[^\n]+") do
        local key, ts, json = line:match("^(%S+) (%d+) (.*)$")
        assert(key, "not a CDXJ line: " .. line)
        local doc = cjson.decode(json)
        local k = key .. " " .. ts .. " " .. doc.offset
        set[k] = doc
        n = n + 1
      end
      return set, n
    end
    local theirs, n_theirs = parse(out)
    local ours, n_ours = parse(slurp(prefix .. "-00000.cdxj"))
    assert.equal(n_theirs, n_ours)
    assert.is_true(n_ours >= 8)
    for k, doc in pairs(theirs) do
      assert.same(doc, ours[k], k)
    end
  end)

  it("is read by warcio: every record, in order, with its type and URI", function()
    local prefix = h.tmpname("-i")
    archive(prefix)
    local file = prefix .. "-00000.warc.gz"
    local code, out, err = h.sh(("%q %q index %q"):format(tools .. "/warcio", build_dir, file))
    assert.equal(0, code, err)
    local theirs = {}
    for line in out:gmatch("[^\n]+") do theirs[#theirs + 1] = cjson.decode(line) end
    local ours = records(file)
    assert.equal(#ours, #theirs)
    for i, rec in ipairs(ours) do
      assert.equal(rec.offset, theirs[i].offset)
      assert.equal(rec.type, theirs[i]["warc-type"])
      assert.equal(rec.uri, theirs[i]["warc-target-uri"])
    end
  end)

  it("archives each hop of a redirect chain, with the request curl sent", function()
    local prefix = h.tmpname("-r")
    archive(prefix)
    local uris, bodies = {}, {}
    for _, rec in ipairs(records(prefix .. "-00000.warc.gz")) do
      local hop = rec.uri and rec.uri:match("/redirect/(%d)$")
      if rec.type == "response" and hop then -- each hop's own body, as sent
        bodies[#bodies + 1] = hop .. "=" .. rec.block:match("\r\n\r\n(.*)$")
      end
      if rec.type == "request" then
        uris[#uris + 1] = rec.uri
        -- HTTP/2 as curl shows it: a request line and lower-case names
        assert.matches("^GET /[^ ]* HTTP/[12][.1]*\r\nHost: 127%.0%.0%.1:%d+\r\n", rec.block)
        assert.matches("\r\nuser%-agent: luacrawl/", rec.block:lower())
      end
    end
    local chain = table.concat(uris, " ")
    assert.matches("/redirect/2 %S+/redirect/1 %S+/redirect/0", chain)
    assert.same({ "2=redirecting\n", "1=redirecting\n", "0=done" }, bodies)
  end)

  it("removes chunked framing and says so in the head, keeps Content-Encoding", function()
    local prefix = h.tmpname("-k")
    archive(prefix)
    for _, rec in ipairs(records(prefix .. "-00000.warc.gz")) do
      if rec.type == "response" and rec.uri:match("/chunked$") then
        assert.is_nil(rec.block:lower():find("transfer%-encoding"))
        assert.matches("\r\n\r\nchunk0chunk1", rec.block)
      end
      if rec.type == "response" and rec.uri:match("/gzip$") then
        assert.matches("Content%-Encoding: gzip", rec.block)
        assert.matches("\r\n\r\n\31\139", rec.block) -- the gzip magic number
      end
      local coding = rec.type == "response" and rec.uri:match("/enc/(%a+)$")
      if coding then assert.matches("\r\nContent%-Encoding: " .. coding .. "\r\n", rec.block) end
    end
  end)

  it("marks a body cut at max_size as WARC-Truncated", function()
    local prefix = h.tmpname("-t")
    archive(prefix)
    local found
    for _, rec in ipairs(records(prefix .. "-00000.warc.gz")) do
      if rec.type == "response" and rec.uri:match("/large") then
        found = true
        assert.equal("length", rec.headers["WARC-Truncated"])
        local res = assert(rec:response())
        assert.equal(1000, #res.body)
        assert.is_true(res.truncated)
      end
    end
    assert.is_true(found)
  end)

  it("writes a revisit for a payload it wrote before, with dedupe", function()
    local prefix = h.tmpname("-d")
    lc.run(function()
      local w = assert(lc.warc.open(prefix, { dedupe = true }))
      for _ = 1, 2 do assert(w:write(assert(lc.fetch(h.url("/site/p/5.html"), { archive = true })))) end
      -- a 404's body is not deduplicated
      for _ = 1, 2 do assert(w:write(assert(lc.fetch(h.url("/status/404"), { archive = true })))) end
      assert(w:close())
    end)
    local types = {}
    local list = records(prefix .. "-00000.warc.gz")
    for _, rec in ipairs(list) do
      if rec.type ~= "request" then types[#types + 1] = rec.type end
    end
    assert.same({ "warcinfo", "response", "revisit", "response", "response" }, types)
    local original, revisit = list[2], list[4]
    assert.equal(original.id, revisit.headers["WARC-Refers-To"])
    assert.equal(original.uri, revisit.headers["WARC-Refers-To-Target-URI"])
    assert.equal(original.date, revisit.headers["WARC-Refers-To-Date"])
    assert.equal(original.headers["WARC-Payload-Digest"], revisit.headers["WARC-Payload-Digest"])
    local code, out = h.sh(("python3 %q %q"):format(tools .. "/warc_check.py",
      prefix .. "-00000.warc.gz"))
    assert.equal(0, code, out)
  end)

  it("revisits the originals of an earlier writer it was told of, and lists its own", function()
    local first, second = h.tmpname("-o1"), h.tmpname("-o2")
    local list, id, err
    lc.run(function()
      local res = assert(lc.fetch(h.url("/site/p/6.html"), { archive = true }))
      local w = assert(lc.warc.open(first, { dedupe = true }))
      w:track()
      id = assert(w:write(res))
      assert(w:write(assert(lc.fetch(h.url("/status/404"), { archive = true })))) -- no original
      assert(w:sync())
      list = w:originals()
      assert.same({}, w:originals()) -- each is listed once
      assert(w:close())
      local w2 = assert(lc.warc.open(second, { dedupe = true }))
      local ok
      ok, err = w2:remember("sha1:NOT-A-DIGEST", list[2], list[3], list[4])
      assert.is_nil(ok)
      assert(w2:remember(list[1], list[2], list[3], list[4]))
      assert(w2:write(res))
      assert(w2:close())
    end)
    assert.equal("usage", err.kind)
    assert.equal(4, #list)
    local original = records(first .. "-00000.warc.gz")[2]
    assert.same({ original.headers["WARC-Payload-Digest"], original.uri, original.date, original.id }, list)
    assert.equal(id, original.id)
    local revisit = records(second .. "-00000.warc.gz")[2]
    assert.equal("revisit", revisit.type)
    assert.equal(original.id, revisit.headers["WARC-Refers-To"])
    assert.equal(original.uri, revisit.headers["WARC-Refers-To-Target-URI"])
    assert.equal(original.date, revisit.headers["WARC-Refers-To-Date"])
    assert.equal(original.headers["WARC-Payload-Digest"], revisit.headers["WARC-Payload-Digest"])
    local code, out = h.sh(("python3 %q %q %q"):format(tools .. "/warc_check.py",
      first .. "-00000.warc.gz", second .. "-00000.warc.gz"))
    assert.equal(0, code, out)
  end)

  it("rotates at max_size and names the files in order", function()
    local prefix = h.tmpname("-m")
    lc.run(function()
      local w = assert(lc.warc.open(prefix, { max_size = 1 })) -- a file for each exchange
      for i = 1, 4 do
        assert(w:write(assert(lc.fetch(h.url("/site/p/" .. i .. ".html"), { archive = true }))))
      end
      assert.matches("%-00003%.warc%.gz$", w:filename())
      assert(w:close())
    end)
    for i = 0, 3 do
      local file = ("%s-%05d.warc.gz"):format(prefix, i)
      local list = records(file)
      assert.equal("warcinfo", list[1].type)
      assert.equal(file:match("[^/]+$"), list[1].headers["WARC-Filename"])
      assert.equal(3, #list)
    end
  end)

  it("writes the same records at any gzip level, and refuses a level outside 1-9", function()
    local sizes = {}
    for _, level in ipairs({ 1, 9 }) do
      local file = h.tmpname(".warc.gz")
      lc.run(function()
        local w = assert(lc.warc.open(file, { level = level }))
        assert(w:write(assert(lc.fetch(h.url("/site/p/1.html"), { archive = true }))))
        assert(w:close())
      end)
      local list = records(file)
      assert.equal("response", list[2].type)
      local code, out = h.sh(("python3 %q %q"):format(tools .. "/warc_check.py", file))
      assert.equal(0, code, out)
      local f = assert(io.open(file, "rb"))
      sizes[level] = f:seek("end")
      f:close()
    end
    assert.is_true(sizes[9] <= sizes[1])
    assert.has_error(function() lc.warc.open(h.tmpname(".warc.gz"), { level = 0 }) end)
    assert.has_error(function() lc.warc.open(h.tmpname(".warc.gz"), { level = 10 }) end)
  end)

  it("puts the info fields in each warcinfo record", function()
    local file = h.tmpname(".warc.gz")
    lc.run(function()
      local w = assert(lc.warc.open(file, { info = { operator = "tests", robots = "obey" } }))
      assert(w:close())
    end)
    local list = records(file)
    assert.equal(1, #list)
    assert.matches("software: luacrawl/", list[1].block)
    assert.matches("operator: tests\r\nrobots: obey\r\n", list[1].block)
    -- a name taken: refused, not overwritten
    local w, err = lc.warc.open(file)
    assert.is_nil(w)
    assert.equal("io", err.kind)
  end)

  it("writes a metadata record tied to its response", function()
    local file = h.tmpname(".warc.gz")
    lc.run(function()
      local w = assert(lc.warc.open(file))
      local id = assert(w:write(assert(lc.fetch(h.url("/site/p/1.html"), { archive = true }))))
      assert(w:metadata(h.url("/site/p/1.html"), { outlink = { "a", "b" }, depth = 1 }, id))
      assert(w:close())
    end)
    local list = records(file)
    local meta = list[#list]
    assert.equal("metadata", meta.type)
    assert.equal(list[2].id, meta.headers["WARC-Concurrent-To"])
    assert.equal("depth: 1\r\noutlink: a\r\noutlink: b\r\n", meta.block)
  end)

  it("keeps the bytes lent to the writer's thread whole when the response is released at once", function()
    -- A payload is lent to the writer's thread, not copied (an identity body's bytes,
    -- or the capture's raw bytes of a compressed one): the response letting go of them
    -- (res:release(), or the collector) must not take them from the writer. Run under
    -- the sanitizers too (scripts/test --sanitize).
    local file = h.tmpname(".warc.gz")
    local sent, gzip_body = {}, nil
    lc.run(function()
      local w = assert(lc.warc.open(file, { dedupe = false }))
      for i = 1, 40 do
        local url = h.url(i % 2 == 0 and "/site/p/" .. i .. ".html" or "/large?bytes=" .. (70000 + i))
        local res = assert(lc.fetch(url, { archive = true }))
        sent[res.url] = res.body
        assert(w:write(res))
        res:release()
        local z = assert(lc.fetch(h.url("/gzip"), { archive = true }))
        gzip_body = z.body
        assert(w:write(z))
        z:release()
        collectgarbage()
      end
      assert(w:close())
    end)
    local n, gz = 0, 0
    for _, rec in ipairs(records(file)) do
      if rec.type == "response" and sent[rec.uri] then
        n = n + 1
        assert.equal(sent[rec.uri], rec:response().body, rec.uri)
      elseif rec.type == "response" and rec.uri:match("/gzip$") then
        gz = gz + 1
        assert.matches("Content%-Encoding: gzip", rec.block)
        assert.equal(gzip_body, rec:response().body)
      end
    end
    assert.equal(40, n)
    assert.equal(40, gz)
  end)

  it("refuses a response fetched without archive = true", function()
    lc.run(function()
      local w = assert(lc.warc.open(h.tmpname(".warc.gz")))
      local res = assert(lc.fetch(h.url("/site/p/1.html")))
      assert.has_error(function() w:write(res) end)
      assert(w:close())
    end)
  end)

  it("costs nothing to a fetch without archive: it keeps no exchange", function()
    lc.run(function()
      local res = assert(lc.fetch(h.url("/gzip")))
      assert.equal(11000, #res.body)
    end)
  end)
end)

describe("lc.warc reading", function()
  it("gives back responses as lc.fetch gave them: status, headers, decoded body, html", function()
    local prefix = h.tmpname("-b")
    local responses = archive(prefix)
    local by_url = {}
    for _, res in ipairs(responses) do by_url[res.url] = res end
    local n = 0
    for rec in lc.warc.records(prefix .. "-00000.warc.gz") do
      local live = rec.type == "response" and by_url[rec.uri]
      if live then
        n = n + 1
        local res = assert(rec:response())
        assert.equal(live.status, res.status)
        assert.equal(live.body, res.body)
        assert.equal(live.headers["content-type"], res.headers["Content-Type"])
        assert.equal(live.ip, res.ip)
        if rec.uri:match("/site/p/3%.html$") then
          assert.equal("Page 3", res:html():title())
          assert.equal(#live:html():links(), #res:html():links())
        end
      end
    end
    assert.equal(#responses, n)
  end)

  it("reads the whole records of a file whose writer was killed, then says truncated", function()
    local prefix = h.tmpname("-kill")
    local script = h.tmpname(".lua")
    spit(script, ([[
      local lc = require "luacrawl"
      lc.run(function()
        local w = assert(lc.warc.open(%q))
        for i = 1, 100000 do
          assert(w:write(assert(lc.fetch(%q .. (i %% 50) .. ".html", { archive = true }))))
          if i == 20 then io.open(%q, "w"):close() end
        end
      end)
    ]]):format(prefix, h.url("/site/p/"), prefix .. ".ready"))
    local code = h.sh(("(%q lua %q & pid=$!; while [ ! -e %q ]; do sleep 0.05; done; sleep 0.3; kill -9 $pid; wait $pid) || true")
      :format(h.luacrawl_bin, script, prefix .. ".ready"))
    assert.equal(0, code)
    local file = prefix .. "-00000.warc.gz.open"
    assert.is_true(exists(file))
    local n = 0
    local ok, err = pcall(function()
      for rec in lc.warc.records(file) do
        n = n + 1
        if rec.type == "response" then assert(rec:response()) end
      end
    end)
    assert.is_true(n > 40)
    -- Killed between two writes the file ends whole; else in a record, said so.
    if not ok then assert.equal("truncated", err.kind, tostring(err)) end
  end)

  it("loses no record to a failed write: the file stays whole and the errors say io and how many", function()
    local file = h.tmpname(".warc.gz")
    local script = h.tmpname(".lua")
    local out = h.tmpname(".out")
    -- The writer's thread writes what w:write queued: a write that failed there is
    -- reported by a later call (w:write, w:close), with the number of writes lost.
    spit(script, ([[
      local lc = require "luacrawl"
      local function lost(err) return tonumber(err.message:match("; (%%d+) writes failed")) or 1 end
      lc.run(function()
        local w = assert(lc.warc.open(%q))
        local written, failed, kind = 0, 0, "none"
        for i = 1, 500 do
          local id, err = w:write(assert(lc.fetch(%q .. (i %% 50) .. ".html", { archive = true })))
          if not id then
            failed, kind = lost(err), err.kind
            break
          end
          written = written + 1
        end
        local ok, err = w:close()
        if not ok then failed = failed + lost(err) end
        local f = io.open(%q, "w")
        f:write(written, " ", failed, " ", kind, "\n")
        f:close()
      end)
    ]]):format(file, h.url("/site/p/"), out))
    -- A file size limit of 64 KiB: writes past it fail with EFBIG (SIGXFSZ ignored).
    local code, _, stderr = h.sh(("ulimit -f 64; trap '' XFSZ; %q lua %q"):format(h.luacrawl_bin, script))
    assert.equal(0, code, stderr)
    local written, failed, kind = slurp(out):match("^(%d+) (%d+) (%S+)")
    assert.equal("io", kind)
    assert.is_true(tonumber(failed) >= 1)
    local responses = 0
    for rec in lc.warc.records(file) do
      if rec.type == "response" then responses = responses + 1 end
    end
    assert.equal(tonumber(written) - tonumber(failed), responses)
    local c, o = h.sh(("python3 %q %q"):format(tools .. "/warc_check.py", file))
    assert.equal(0, c, o)
  end)

  it("reads a plain .warc and a file that is one gzip stream", function()
    local plain = h.tmpname(".warc")
    lc.run(function()
      local w = assert(lc.warc.open(plain))
      assert(w:write(assert(lc.fetch(h.url("/site/p/2.html"), { archive = true }))))
      assert(w:close())
    end)
    local list = records(plain)
    assert.same({ "warcinfo", "response", "request" }, { list[1].type, list[2].type, list[3].type })
    local gz = h.tmpname(".warc.gz")
    assert.equal(0, (h.sh(("{ gzip -c %q > %q; }"):format(plain, gz))))
    local again = records(gz)
    assert.equal(3, #again)
    assert.equal(list[2].block, again[2].block)
  end)

  it("raises a format error for a file that is not WARC", function()
    local file = h.tmpname(".warc")
    spit(file, "<html>not an archive</html>")
    local ok, err = pcall(records, file)
    assert.is_false(ok)
    assert.equal("format", err.kind)
  end)
end)
