-- The policies of issue 33 in examples/: each passes its own busted spec, and runs as
-- a script against the fixture server.
local h = require "spec_helper"
local cjson = require "cjson"

local dir = h.source_dir .. "/examples"

local function busted(spec_file)
  local cpath = package.cpath:match("([^;]*/lua/%?%.so)")
  return h.sh(("cd %s && luajit \"$(command -v busted)\" --cpath='%s' --lpath='./?.lua' %s"):format(dir, cpath,
    spec_file))
end

local function script(name, args)
  return h.sh(("%s --dns-server %s run %s/%s %s"):format(h.luacrawl_bin, h.dns_server, dir, name, args))
end

local function records(out)
  local list = {}
  for line in out:gmatch("[^\n]+") do list[#list + 1] = cjson.decode(line) end
  return list
end

describe("examples/reference_crawl.lua", function()
  it("passes its busted spec", function()
    local code, out, err = busted("reference_crawl_spec.lua")
    assert.equal(0, code, out .. err)
    assert.matches("2 successes / 0 failures", out)
  end)

  it("writes an item for each page of the section, up to MAX_PAGES", function()
    local code, out, err = script("reference_crawl.lua", ("'%s' - 12"):format(h.url("/site/")))
    assert.equal(0, code, err)
    local items = records(out)
    assert.equal(12, #items)
    for _, item in ipairs(items) do assert.matches("/site/", item.url) end
  end)

  it("backs off a 503 and gets the page on a retry", function()
    local id = "ref" .. os.time() .. math.random(1e6)
    local code, out, err = script("reference_crawl.lua", ("'%s'"):format(h.url("/flaky/" .. id .. "?fail=1&status=503")))
    assert.equal(0, code, err)
    local items = records(out)
    assert.equal(1, #items)
    assert.equal("Flaky " .. id, items[1].title)
    assert.matches("1 pages, 1 retries", err)
  end)
end)

describe("examples/listing_detail.lua", function()
  it("passes its busted spec", function()
    local code, out, err = busted("listing_detail_spec.lua")
    assert.equal(0, code, out .. err)
    assert.matches("2 successes / 0 failures", out)
  end)

  it("writes every item with the price its listing carried", function()
    local code, out, err = script("listing_detail.lua", ("'%s'"):format(h.url("/items?page=1")))
    assert.equal(0, code, err)
    local by_name = {}
    for _, item in ipairs(records(out)) do by_name[item.name] = item end
    assert.equal(7.99, by_name["Item 7"].price)
    assert.equal("Description of item 7", by_name["Item 7"].description)
    assert.matches('^{"name":', out) -- the fields' order
  end)
end)
