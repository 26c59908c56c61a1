-- A crawl policy that is both a script and a module: run it, or require it from a
-- busted spec (examples/policy_spec.lua) and call its parse on crawl.page{...}.
--
--   luacrawl run examples/policy.lua URL [OUTPUT]
--
-- URL is a listing page (the fixture server's /items?page=1); one record per item.
local crawl = require "luacrawl.crawl"

local M = {}

function M.parse(page)
  for _, item in ipairs(page:css("div.item")) do
    page:emit({
      name = item:css1("a.detail::text"),
      price = tonumber(item:css1("span.price::text")),
      url = page.url,
    })
  end
  page:follow(page:css("a.next"))
end

function M.spec(start, output)
  return { start = { start }, parse = M.parse, output = output or "-", concurrency = 8, per_host = 4 }
end

-- Required (require "policy"), the chunk's argument is the module's name: return the
-- module. Run as a script, it is the script's first argument (or nothing): crawl.
local name = ...
if name == "policy" or name == "examples.policy" then return M end
if not arg or not arg[1] then
  io.stderr:write("usage: luacrawl run policy.lua URL [OUTPUT]\n")
  os.exit(2)
end
local stats = crawl.run(M.spec(arg[1], arg[2]))
io.stderr:write(("%d items\n"):format(stats.items))
return M
