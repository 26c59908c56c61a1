-- examples/asyncio_crawler.lua ("500 Lines or Less"'s crawler on luacrawl), run by the luacrawl
-- binary against the fixture site.
local h = require "spec_helper"
local cjson = require "cjson"

local function crawl(root, extra)
  local cmd = ("%s run %s/examples/asyncio_crawler.lua '%s' %s"):format(
    h.luacrawl_bin, h.source_dir, root, extra or "")
  local code, out, err = h.sh(cmd)
  local fetched = {}
  for line in out:gmatch("[^\n]+") do
    local status, url = line:match("^(%S+) (%S+)")
    fetched[#fetched + 1] = { status = status, url = url }
  end
  return code, fetched, err
end

local function path_of(url)
  return url:match("^https?://[^/]+(/.*)$")
end

local function manifest()
  local code, out = h.sh("python3 -c \"import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('"
    .. h.url("/site/manifest.json") .. "').read().decode())\"")
  assert.equal(0, code)
  return cjson.decode(out)
end

describe("the asyncio crawler example", function()
  it("fetches every page of a 2,000-page site exactly once", function()
    local code, fetched, err = crawl(h.url("/site/"), "--max-tasks 20")
    assert.equal(0, code, err)
    local want = {}
    for _, p in ipairs(manifest()) do want[p] = true end
    local got, dupes = {}, {}
    for _, f in ipairs(fetched) do
      local p = path_of(f.url)
      if got[p] then dupes[#dupes + 1] = p end
      got[p] = true
    end
    assert.same({}, dupes)
    assert.same(want, got)
    assert.is_true(#fetched > 2000)
    assert.matches("urls fetched", err)
  end)

  it("never leaves the root's host", function()
    local _, fetched = crawl(h.url("/site/"), "--max-tasks 8")
    for _, f in ipairs(fetched) do assert.equal(h.url(""), f.url:sub(1, #h.url(""))) end
  end)

  it("ends a redirect loop when it comes back to a URL it has seen", function()
    local code, fetched = crawl(h.url("/loop/a"))
    assert.equal(0, code)
    assert.same({ "302 /loop/a", "302 /loop/b" },
      { fetched[1].status .. " " .. path_of(fetched[1].url), fetched[2].status .. " " .. path_of(fetched[2].url) })
    assert.equal(2, #fetched)
  end)

  it("stops a redirect chain when the budget is spent", function()
    local code, fetched, err = crawl(h.url("/redirect/20"), "--max-redirect 5")
    assert.equal(0, code)
    assert.equal(6, #fetched) -- the first request and five hops
    for _, f in ipairs(fetched) do assert.equal("302", f.status) end
    assert.matches("redirect limit reached", err)
  end)

  it("prints ERR and the kind when a fetch fails", function()
    local code, fetched = crawl("http://127.0.0.1:1/")
    assert.equal(0, code)
    assert.equal("ERR", fetched[1].status)
  end)

  it("exits 2 without a root", function()
    assert.equal(2, (h.sh(h.luacrawl_bin .. " run " .. h.source_dir .. "/examples/asyncio_crawler.lua")))
  end)
end)
