-- Run through examples/embed.c by test_embed.sh: prints the arguments it was given
-- and what it fetched from the fixture server, for the test to compare.
local lc = require "luacrawl"
for i = 0, #arg do print(("arg[%d] %s"):format(i, arg[i])) end
print(("... %d values, the first %s"):format(select("#", ...), tostring((...))))
local res = assert(lc.fetch(arg[1] .. "/site/"))
print("status " .. res.status)
print("title " .. res:html():css1("title::text"))
-- The crawl framework and the CLI load with nothing but the engine (no lua-cjson:
-- the test leaves the system's Lua modules out of reach).
require "luacrawl.crawl"
require "luacrawl.cli_crawl"
print("crawl framework loaded")
