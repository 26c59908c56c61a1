-- luacrawl.crawl_durable: where a crawl keeps what outlives it. The crawl holds one
-- durable object (crawler.durable) and calls its methods at fixed points, whichever
-- keeps it: memory (below: nothing is kept, every method does nothing), a state file
-- (crawl_state.lua) or a Redis fleet (crawl_redis.lua). Those two are loaded only by
-- a spec that names them (spec_check.optional). docs/architecture.md, "The durable
-- interface", lists the methods.
local frontier = require "luacrawl.frontier"

local M = {}

-- Memory: a plain crawl. Its fields are the interface's too: kind, kept (requests
-- and a page's items outlive the run: they are held until the page ends), and what a
-- state file read (finished_at, resumed).
local Memory = { kind = "memory", kept = false, finished_at = false, resumed = false }
Memory.__index = Memory

function Memory.open_frontier(_, _, fopts)
  return frontier.new(fopts)
end

function Memory.resume() end
function Memory.robots() return nil end
function Memory.save_robots() end
function Memory.output_offset() return nil end
function Memory.check_outputs() end
function Memory.fetched() end
function Memory.failed() end
function Memory.page_ended() end
function Memory.save_host() end
function Memory.held_slots() return 0 end
function Memory.commit_due() return nil end
function Memory.start() return nil end
function Memory.finish() end
function Memory.close() end

-- The durable object of crawler's spec (fopts: the frontier's options): a state's,
-- a fleet's, or memory. Raises what opening a state or connecting to Redis raises.
function M.open(crawler, fopts)
  local spec = crawler.spec
  if spec.state then return require("luacrawl.crawl_state").open(crawler) end
  if spec.redis then return require("luacrawl.crawl_redis").open(crawler, fopts) end
  return setmetatable({}, Memory)
end

M.Memory = Memory

return M
