-- fixtures: --http
-- The hostile web, HTTP layer (issue 16): a response cut short or not HTTP at all is
-- an error of kind protocol, never a whole page; a URL curl would read differently
-- is refused; max_memory bounds a body while it downloads and the sets made for the
-- script. The endpoints are tests/fixtures/server.py's /hostile/* and /fault/*.
local lc = require "luacrawl"
local h = require "spec_helper"

local function fetch(path, opts)
  return lc.run(function()
    return lc.fetch(path:match("^http") and path or h.url(path), opts)
  end)
end

local function kind_of(path, opts)
  local res, err = fetch(path, opts)
  if res then return res.status, nil, res end
  return err.kind, err
end

-- Peak resident memory of this process, in MB.
local function peak_rss_mb()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmHWM:%s+(%d+)")
    if kb then return tonumber(kb) / 1024 end
  end
end

-- Run fn with max_memory at what is counted now plus `extra` bytes, then put the
-- limit back.
local function with_memory_left(extra, fn)
  local used, limit = lc.memory()
  lc.configure({ max_memory = math.floor(used + extra) })
  local ok, a, b = pcall(fn)
  lc.configure({ max_memory = limit or 0 })
  assert(ok, a)
  return a, b
end

describe("hostile HTTP: cut short", function()
  it("hostile_gzip_cut_in_half: protocol, not 200 with half the bytes", function()
    local kind, err = kind_of("/hostile/gzip-cut")
    assert.equal("protocol", kind)
    assert.matches("gzip body cut short", err.message)
  end)

  it("hostile_deflate_cut_in_half: protocol", function()
    local kind, err = kind_of("/hostile/gzip-cut?coding=deflate")
    assert.equal("protocol", kind)
    assert.matches("deflate body cut short", err.message)
  end)

  it("hostile_whole_gzip_and_deflate_still_decode", function()
    local res = assert(fetch("/gzip"))
    assert.equal(("hello gzip "):rep(1000), res.body)
    res = assert(fetch("/deflate"))
    assert.equal(("hello deflate "):rep(1000), res.body)
  end)

  -- The fixture's /enc/* bodies, made by Debian's brotli and zstd commands.
  local enc_text = {}
  for i = 0, 1999 do enc_text[#enc_text + 1] = ("line %05d: hello brotli and zstd\n"):format(i) end
  enc_text = table.concat(enc_text)

  for _, coding in ipairs({ "br", "zstd" }) do
    it("hostile_whole_" .. coding .. "_decodes_to_the_original", function()
      local res = assert(fetch("/enc/" .. coding))
      assert.equal(200, res.status)
      assert.equal(coding, res.headers["content-encoding"]) -- it was sent encoded
      assert.equal(enc_text, res.body)
    end)

    it("hostile_" .. coding .. "_cut_in_half: protocol", function()
      local kind, err = kind_of("/hostile/" .. coding .. "-cut")
      assert.equal("protocol", kind)
      assert.matches(coding .. " body cut short", err.message)
    end)
  end

  it("hostile_body_not_in_its_coding: protocol", function()
    local kind, err = kind_of("/hostile/bad-coding")
    assert.equal("protocol", kind)
    assert.matches("invalid compressed data", err.message)
  end)

  it("hostile_unknown_coding: protocol naming it", function()
    local kind, err = kind_of("/hostile/bad-coding?coding=compress")
    assert.equal("protocol", kind)
    assert.matches("unsupported Content%-Encoding 'compress'", err.message)
  end)

  it("hostile_unknown_coding_without_a_body_is_fine (HEAD)", function()
    assert.equal(200, (kind_of("/hostile/bad-coding?coding=compress", { method = "HEAD" })))
  end)

  it("hostile_headers_cut: protocol, not 200 with an empty body", function()
    local kind, err = kind_of("/hostile/header-cut")
    assert.equal("protocol", kind)
    assert.matches("inside its headers", err.message)
  end)

  it("hostile_chunked_without_last_chunk: protocol", function()
    assert.equal("protocol", (kind_of("/hostile/chunked-nolast")))
  end)

  it("hostile_content_length_longer_than_body: protocol", function()
    assert.equal("protocol", (kind_of("/short")))
  end)

  it("hostile_reset_mid_body: protocol, not connect", function()
    local kind, err = kind_of("/reset")
    assert.equal("protocol", kind)
    assert.matches("middle of the response", err.message)
  end)

  it("hostile_reset_before_any_reply: still connect", function()
    assert.equal("connect", (kind_of("/fault/reset-before")))
  end)

  it("hostile_broken_chunking: protocol", function()
    local kind, err = kind_of("/fault/bad-chunked")
    assert.equal("protocol", kind)
    assert.matches("chunked", err.message)
  end)
end)

describe("hostile HTTP: not HTTP", function()
  it("hostile_http09_reply: protocol, not invalid_url", function()
    local kind, err = kind_of("/hostile/http09")
    assert.equal("protocol", kind)
    assert.matches("not an HTTP response", err.message)
  end)
end)

describe("hostile HTTP: URLs", function()
  it("hostile_nul_in_url: invalid_url, /echo is never fetched", function()
    local kind, err = kind_of("/echo\0x")
    assert.equal("invalid_url", kind)
    assert.matches("NUL", err.message)
    assert.equal(h.url("/echo\0x"), err.url)
  end)

  it("hostile_control_byte_in_url: invalid_url", function()
    assert.equal("invalid_url", (kind_of("/echo\1x")))
    assert.equal("invalid_url", (kind_of("/echo\nx")))
  end)
end)

describe("hostile HTTP: max_memory", function()
  it("hostile_gzip_bomb_bounded_while_it_downloads", function()
    -- 200 MiB of zeros from about 200 KiB, max_size far above, 20 MB left.
    local before = peak_rss_mb()
    local kind, err = with_memory_left(20e6, function()
      return kind_of("/fault/gzip-bomb?mib=200", { max_size = 4e9 })
    end)
    assert.equal("memory", kind)
    assert.matches("not enough memory: a body of %d+ bytes and more would take the engine past max_memory",
      err.message)
    -- The body stopped near 20 MB: the peak grew by far less than the 200 MiB.
    assert.is_true(peak_rss_mb() - before < 100, peak_rss_mb() - before)
  end)

  it("hostile_bodies_in_flight_share_the_budget: memory", function()
    -- Two bodies of a declared 12 MB stay in flight, 9 MB of each sent, under 20 MB:
    -- the first to arrive takes its 12 MB, the other does not fit beside it.
    local first = with_memory_left(20e6, function()
      return lc.run(function()
        local q = lc.queue()
        local tasks = {}
        for i = 1, 2 do
          tasks[i] = lc.spawn(function()
            local res, err = lc.fetch(h.url("/hostile/stall?bytes=12000000&send=9000000&n=" .. i),
              { max_size = 4e9, timeout = 60 })
            q:put(res and res.status or err.kind)
          end)
        end
        local kind = q:get()
        for i = 1, 2 do tasks[i]:cancel() end
        return kind
      end)
    end)
    assert.equal("memory", first)
  end)

  it("hostile_big_body_written_without_a_lua_string (luacrawl fetch --max-size)", function()
    -- The CLI writes the body with core.body_write: as a string (res.body) it would
    -- count twice, and a 1 GiB body failed under the 2 GiB default.
    local core = require "luacrawl.core"
    local path = h.tmpname(".bin")
    local wrote, as_string = with_memory_left(5e6, function()
      return lc.run(function()
        local res = assert(lc.fetch(h.url("/large?bytes=3000000")))
        local f = assert(io.open(path, "wb"))
        local ok = core.body_write(rawget(res, "_body"), f)
        f:close()
        return ok, select(2, pcall(function() return #res.body end))
      end)
    end)
    assert.is_true(wrote)
    assert.matches("not enough memory", tostring(as_string))
    local f = assert(io.open(path, "rb"))
    assert.equal(3000000, #f:read("*a"))
    f:close()
    os.remove(path)
  end)

  it("hostile_seen_set_refused_before_allocating", function()
    with_memory_left(20e6, function()
      local ok, msg = pcall(lc.seen, 2 ^ 40)
      assert.is_false(ok)
      assert.matches("more than max_memory leaves", msg)
    end)
  end)

  -- The crawl's own sets (core.crawl.filter's seen set, core.crawl.hosts) count too.
  local core = require "luacrawl.core"
  local function crawl_filter(seen)
    return core.crawl.filter({
      seen = seen, scope = "any",
      stats = { invalid_urls = 0, too_deep = 0, out_of_scope = 0, duplicates = 0 },
    })
  end

  it("hostile_crawl_filter_seen_set_counts_towards_max_memory", function()
    local urls = {}
    for i = 1, 100000 do urls[i] = "http://a.test/p/" .. i end
    local seen = lc.seen()
    local f = crawl_filter(seen)
    local bytes0 = seen:bytes()
    collectgarbage()
    collectgarbage("stop") -- the URLs exist already: what grows is the set
    local before = lc.memory()
    for i = 1, #urls do assert(f:check(urls[i], 0)) end
    local grew = lc.memory() - before
    collectgarbage("restart")
    assert.equal(100000, #seen)
    assert.is_true(seen:bytes() - bytes0 > 800000, seen:bytes())
    assert.is_true(grew >= seen:bytes() - bytes0, grew)
  end)

  it("hostile_crawl_filter_seen_set_refused_past_max_memory", function()
    local seen = lc.seen()
    local f = crawl_filter(seen)
    local ok, msg = pcall(with_memory_left, 2e6, function()
      for i = 1, 1e6 do f:check("http://a.test/p/" .. (i % 1000) .. "/" .. i, 0) end
    end)
    assert.is_false(ok)
    assert.matches("seen: growing the set .* more than max_memory leaves", msg)
    assert.is_true(seen:bytes() < 8e6, seen:bytes()) -- a million URLs would take 10 MB or more
  end)

  it("hostile_crawl_host_set_counts_towards_max_memory", function()
    local names = {}
    for i = 1, 50000 do names[i] = "h" .. i .. ".test" end
    collectgarbage()
    collectgarbage("stop")
    local before = lc.memory()
    local hs = core.crawl.hosts(names)
    local grew = lc.memory() - before
    collectgarbage("restart")
    assert.is_true(grew >= 50000 * 8, grew)
    hs = nil -- luacheck: ignore
    collectgarbage()
    collectgarbage()
    assert.is_true(lc.memory() - before < 200000, lc.memory() - before)
  end)

  it("hostile_seen_set_counts_towards_max_memory", function()
    collectgarbage()
    collectgarbage("stop") -- no collection shrinks the heap while it is measured
    local before = lc.memory()
    local s = lc.seen(1e6)
    local grew = lc.memory() - before
    collectgarbage("restart")
    assert.is_true(grew >= s:bytes(), grew)
    assert.is_true(s:bytes() >= 1e6 * 8, s:bytes())
    s = nil -- luacheck: ignore
    collectgarbage()
    collectgarbage()
    assert.is_true(lc.memory() - before < 1e6, lc.memory() - before)
  end)
end)
