-- The crawl framework examples, run by the luacrawl binary against the fixtures.
local h = require "spec_helper"
local cjson = require "cjson"
local control = h.control

local function example(name, args)
  return h.sh(("%s --dns-server %s run %s/examples/%s %s"):format(
    h.luacrawl_bin, h.dns_server, h.source_dir, name, args))
end

local function lines_of(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do out[#out + 1] = line end
  return out
end

describe("examples", function()
  it("scrape_items.lua scrapes every item of a paginated listing", function()
    local code, out, err = example("scrape_items.lua", "'" .. h.url("/items?page=1") .. "'")
    assert.equal(0, code, err)
    local items = {}
    for _, line in ipairs(lines_of(out)) do
      local item = cjson.decode(line)
      items[item.name] = item
    end
    local n = 0
    for _ in pairs(items) do n = n + 1 end
    assert.equal(50, n)
    assert.equal(7.99, items["Item 7"].price)
    assert.equal("Description of item 7", items["Item 7"].description)
  end)

  it("scrape_items.lua writes CSV with the columns in order", function()
    local path = h.tmpname(".csv")
    local code = example("scrape_items.lua", "'" .. h.url("/items?page=1") .. "' " .. path)
    assert.equal(0, code)
    local f = io.open(path)
    assert.equal("name,price,description,url", (f:read("*l"):gsub("\r$", "")))
    f:close()
    os.remove(path)
  end)

  it("sitemap_crawl.lua fetches the pages of a sitemap index, gzipped parts included", function()
    local code, out, err = example("sitemap_crawl.lua", h.url("/"))
    assert.equal(0, code, err)
    local pages = lines_of(out)
    assert.equal(20, #pages)
    local newest
    for _, line in ipairs(pages) do
      local page = cjson.decode(line)
      assert.matches("^Page %d+$", page.title)
      if page.lastmod == "2024-01-20" then newest = page end
    end
    assert.matches("/site/p/19%.html$", newest.url)
  end)

  it("polite_crawl.lua crawls several hosts, one request at a time each", function()
    local port = h.fixture_port
    local code, out = example("polite_crawl.lua", ("http://a.crawl.test:%s/hostsite/ http://b.crawl.test:%s/hostsite/ --depth 1")
      :format(port, port))
    assert.equal(0, code)
    local hosts = {}
    for _, line in ipairs(lines_of(out)) do hosts[line:match("^(%S+)")] = true end
    assert.same({ ["a.crawl.test"] = true, ["b.crawl.test"] = true }, hosts)
  end)

  it("two_sites.lua crawls each site with its own concurrency and delay", function()
    control("/__reset")
    local code, out, err = example("two_sites.lua", ("'%s' '%s' --depth 1"):format(
      h.url("/pagelinks?n=12", "a.crawl.test"), h.url("/pagelinks?n=12", "b.crawl.test")))
    assert.equal(0, code, err)
    local pages = {}
    for _, line in ipairs(lines_of(out)) do
      local host = line:match("^(%S+)")
      pages[host] = (pages[host] or 0) + 1
    end
    assert.same({ ["a.crawl.test"] = 13, ["b.crawl.test"] = 13 }, pages)
    local docs = control("/__log?host=a.crawl.test")
    assert.equal(1, docs.max_concurrent["a.crawl.test"])
    local r = {}
    for _, e in ipairs(docs.requests) do
      if e.path ~= "/robots.txt" then r[#r + 1] = e end
    end
    for i = 2, #r do assert.is_true(r[i].start - r[i - 1].start >= 0.25) end
    assert.is_true(control("/__log?host=b.crawl.test").max_concurrent["b.crawl.test"] <= 4)
  end)

  it("custom_politeness.lua applies its own delays per domain", function()
    local code, out = example("custom_politeness.lua", ("http://a.crawl.test:%s/hostsite/ --fragile crawl.test")
      :format(h.fixture_port))
    assert.equal(0, code)
    local lines = lines_of(out)
    assert.equal(3, #lines)
    assert.matches("^crawl%.test%s+delay  2%.00", lines[1])
  end)
end)
