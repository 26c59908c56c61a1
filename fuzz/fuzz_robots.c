/* fuzz_robots.c: robots.txt parsing and matching (lua/luacrawl/robots.lua). The input
 * is the file; it is asked about a few fixed agents and paths and about those its own
 * lines name. parse, allowed, crawl_delay and sitemaps must never raise for string
 * input, and the answers must keep the promises of the module's header. */
#include "fuzz_lua.h"

static const char DRIVER[] =
    "local robots = require 'luacrawl.robots'\n"
    "local AGENTS = { 'luacrawl/1.0 (+https://example.com/bot)', 'Googlebot', '*', '',\n"
    "  'a-b_c', 'LUACRAWL' }\n"
    "local PATHS = { '/', '/robots.txt', '/robots.txt?x=1', '/a/b?c=d', '/%7Ea%2fb*$',\n"
    "  'https://example.com/p%2Fq?x#f', 'http://example.com', '', 'x', '/\\195\\169t\\195\\169' }\n"
    "local MAX_AGENTS, MAX_PATHS = 4, 8\n"
    "\n"
    "local function check(cond, what, ...)\n"
    "  if not cond then error(string.format(what, ...), 2) end\n"
    "end\n"
    "\n"
    "-- Agents and paths the input names itself: its user-agent and rule values.\n"
    "local function named(data)\n"
    "  local agents, paths = {}, {}\n"
    "  for key, value in data:gmatch('([%a_%-]+)%s*:?%s*([^\\r\\n#]*)') do\n"
    "    key = key:lower()\n"
    "    if key == 'user-agent' and #agents < MAX_AGENTS then\n"
    "      agents[#agents + 1] = value\n"
    "    elseif (key == 'allow' or key == 'disallow') and #paths < MAX_PATHS then\n"
    "      paths[#paths + 1] = value\n"
    "      paths[#paths + 1] = (value:gsub('%*', 'zz'):gsub('%$$', ''))\n"
    "    end\n"
    "  end\n"
    "  return agents, paths\n"
    "end\n"
    "\n"
    "local function ask(r, agent, paths, answers)\n"
    "  check(r:allowed(agent, '/robots.txt') == true, '/robots.txt refused to %q', agent)\n"
    "  for _, path in ipairs(paths) do\n"
    "    local ok = r:allowed(agent, path)\n"
    "    check(type(ok) == 'boolean', 'allowed(%q, %q) gave a %s', agent, path, type(ok))\n"
    "    local key = agent .. '\\0' .. path\n"
    "    if answers[key] == nil then\n"
    "      answers[key] = ok\n"
    "    else -- asked again (the cached group): the same answer\n"
    "      check(answers[key] == ok, 'allowed(%q, %q) changed its answer', agent, path)\n"
    "    end\n"
    "    if path:byte(1) == 47 then -- a path, and the same path in a URL\n"
    "      local as_url = r:allowed(agent, 'https://example.com' .. path)\n"
    "      check(as_url == ok, 'allowed(%q, %q) differs for the path in a URL', agent, path)\n"
    "    end\n"
    "  end\n"
    "  local delay = r:crawl_delay(agent)\n"
    "  check(delay == nil or (type(delay) == 'number' and delay >= 0 and delay < 1/0),\n"
    "    'crawl_delay(%q) is %s', agent, tostring(delay))\n"
    "end\n"
    "\n"
    "return function(data)\n"
    "  local r = robots.parse(data)\n"
    "  check(r.kind == 'parse', 'kind %s', tostring(r.kind))\n"
    "  local agents, paths = named(data)\n"
    "  for _, a in ipairs(AGENTS) do agents[#agents + 1] = a end\n"
    "  for _, p in ipairs(PATHS) do paths[#paths + 1] = p end\n"
    "  local answers = {}\n"
    "  for round = 1, 2 do\n"
    "    for _, agent in ipairs(agents) do ask(r, agent, paths, answers) end\n"
    "  end\n"
    "  -- Product tokens match without regard to case.\n"
    "  for _, agent in ipairs(agents) do\n"
    "    for _, path in ipairs(paths) do\n"
    "      check(r:allowed(agent:upper(), path) == answers[agent .. '\\0' .. path],\n"
    "        'allowed(%q, %q) depends on case', agent, path)\n"
    "    end\n"
    "  end\n"
    "  check(r:allowed(nil, '/') ~= nil, 'allowed(nil, /)')\n"
    "  local maps = r:sitemaps()\n"
    "  for i, url in ipairs(maps) do\n"
    "    check(type(url) == 'string' and url ~= '', 'sitemap %d is %q', i, tostring(url))\n"
    "  end\n"
    "  maps[#maps + 1] = 'x' -- a fresh list each time\n"
    "  check(#r:sitemaps() == #maps - 1, 'sitemaps() shares its list')\n"
    "end\n";

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_lua_init(DRIVER, "=fuzz_robots");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_lua_run(data, size);
    return 0;
}
