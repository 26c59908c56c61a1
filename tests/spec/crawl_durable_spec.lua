-- fixtures: --http --redis
-- luacrawl.crawl_durable: the one object through which a crawl keeps what outlives
-- its run. Memory, a state file and a Redis fleet answer the same calls, so that the
-- crawl makes them without asking which it has; a plain crawl parses none of the
-- optional parts.
local h = require "spec_helper"
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"

-- What the crawl calls (docs/architecture.md, "The durable interface").
local CALLS = {
  "open_frontier", "resume", "robots", "save_robots", "output_offset", "fetched", "failed",
  "page_ended", "held_slots", "commit_due", "start", "finish", "close", "save_host",
}

local function assert_answers(durable, kind, kept)
  assert.equal(kind, durable.kind)
  assert.equal(kept, durable.kept)
  for _, name in ipairs(CALLS) do
    assert.equal("function", type(durable[name]), ("%s durable object has no %s"):format(kind, name))
  end
end

describe("a crawl's durable object", function()
  it("is memory for a plain crawl: nothing kept, every call answered", function()
    local c = crawl.new({ start = h.url("/"), quiet = true })
    assert_answers(c.durable, "memory", false)
    assert.is_nil(c.durable:robots(h.url("")))
    assert.equal(0, c.durable:held_slots())
    assert.is_nil(c.durable:output_offset("out.jsonl"))
    assert.is_nil(c.durable:start(c))
  end)

  it("is the state for a spec with a state file, with the same calls", function()
    local c = crawl.new({ start = h.url("/"), quiet = true, state = h.tmpname(".state") })
    assert_answers(c.durable, "state", true)
    assert.equal(0, c.durable:output_offset("a file the state never wrote"))
    c.durable:close()
  end)

  it("is the fleet for a spec with redis, with the same calls", function()
    lc.run(function()
      local c = crawl.new({ start = h.url("/"), quiet = true, redis = h.redis_url, crawl_id = "durable-spec" })
      assert_answers(c.durable, "redis", true)
      assert.is_nil(c.durable:output_offset("out.jsonl"))
      c.durable:close()
    end)
  end)

  it("leaves crawl_state, crawl_redis and crawl_warc unparsed in a plain crawl", function()
    local script = h.tmpname(".lua")
    local f = assert(io.open(script, "w"))
    f:write(([[
local crawl = require "luacrawl.crawl"
crawl.run({ start = %q, max_pages = 1, quiet = true })
for _, m in ipairs({ "luacrawl.crawl_state", "luacrawl.crawl_redis", "luacrawl.crawl_warc" }) do
  if package.loaded[m] then print(m .. " loaded") end
end
print("done")
]]):format(h.url("/")))
    f:close()
    local code, out, err = h.sh(("%s run %s"):format(h.luacrawl_bin, script))
    assert.equal(0, code, err)
    assert.equal("done\n", out)
  end)
end)
