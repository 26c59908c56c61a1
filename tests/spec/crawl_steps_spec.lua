-- fixtures: --http
-- luacrawl.crawl_steps: what handling a request does for the optional parts (render,
-- spec.hosts, the dashboard, the archive, a state or fleet, spec.save), chosen once when
-- the crawl is made: a step no part takes is false, and costs a crawl without those
-- parts nothing per request.
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"

local OPTIONAL = { "failed", "response", "fetched", "save", "begin", "processed", "ended", "budget" }

local function taken(c)
  local out = {}
  for _, name in ipairs(OPTIONAL) do
    if c.steps[name] then out[#out + 1] = name end
  end
  return table.concat(out, " ")
end

describe("a crawl's steps", function()
  it("are only the fetch for a crawl with none of the optional parts", function()
    local c = crawl.new({ start = h.url("/"), quiet = true })
    assert.is_function(c.steps.fetch)
    assert.equal("", taken(c))
  end)

  it("take each optional part's own steps", function()
    local save = crawl.new({ start = h.url("/"), quiet = true, save = h.tmpname("-save") })
    assert.equal("save", taken(save))
    local hosts = crawl.new({ start = h.url("/"), quiet = true, hosts = { ["127.0.0.1"] = { max_pages = 5 } } })
    assert.equal("budget", taken(hosts))
    local state = crawl.new({ start = h.url("/"), quiet = true, state = h.tmpname(".state") })
    assert.equal("failed fetched begin ended", taken(state))
    state.durable:close()
  end)

  it("crawl as before with a state, spec.save and spec.hosts on", function()
    local dir = h.tmpname("-save")
    local stats = crawl.run({
      start = h.url("/site/"), quiet = true, robots = false, max_pages = 5, save = dir,
      state = h.tmpname(".state"), hosts = { ["127.0.0.1"] = { max_pages = 3, headers = { ["X-Spec"] = "1" } } },
    })
    assert.equal(3, stats.pages)
    assert.equal(3, stats.saved)
  end)
end)
