-- fixtures: --http
-- docs/crawl.md's table of spec fields ("The spec") against the code: every field the
-- code knows is there and nothing else, the defaults of crawl.defaults are those it
-- says, and every option of its `luacrawl crawl` column is one `luacrawl crawl --help`
-- lists; and every option --help lists is in that table or in the command's own.
local h = require "spec_helper"
local crawl = require "luacrawl.crawl"
local spec_check = require "luacrawl.spec_check"
require "luacrawl.crawl_warc" -- adds its fields (warc, from_warc)
local cli_crawl = require "luacrawl.cli_crawl"
local unpack = unpack or table.unpack

local function read(path)
  local f = assert(io.open(path))
  local text = f:read("*a")
  f:close()
  return text
end

local doc = read(h.source_dir .. "/docs/crawl.md")

-- The rows of the table under `heading` whose header row is `header`: lists of cells.
local function table_rows(heading, header)
  local section = doc:match("\n" .. heading:gsub("%p", "%%%0") .. "\n(.-)\n## ")
  assert(section, "no section " .. heading)
  local start = section:find(header, 1, true)
  assert(start, "no table " .. header .. " under " .. heading)
  local rows = {}
  for line in section:sub(start):gmatch("[^\n]+") do
    if line:sub(1, 1) ~= "|" then break end
    local cells = {}
    -- Cells split on " | " (a `\|` inside code is not a separator).
    for cell in (line:gsub("\\|", "\1") .. " |"):gmatch(" (.-) |") do cells[#cells + 1] = cell:gsub("\1", "|") end
    rows[#rows + 1] = cells
  end
  table.remove(rows, 1) -- header
  table.remove(rows, 1) -- --- row
  return rows
end

local function options_in(cell)
  local opts = {}
  for opt in cell:gmatch("`(%-%-?[%w-]+)[^`]*`") do opts[#opts + 1] = opt end
  return opts
end

local spec_rows = table_rows("## The spec", "| field | `luacrawl crawl` | default | |")
local cli_rows = table_rows("## `luacrawl crawl`", "| option | default | |")

describe("docs/crawl.md's table of spec fields", function()
  it("names every field the code knows, and only those", function()
    local documented = {}
    for _, row in ipairs(spec_rows) do
      for name in row[1]:gmatch("`([%w_]+)`") do documented[name] = true end
    end
    local known = {}
    for _, name in ipairs(spec_check.fields) do known[name] = true end
    for name in pairs(crawl.defaults) do
      if name ~= "throttle_fields" and name ~= "progress_intervals" then known[name] = true end
    end
    for name in pairs(known) do assert.is_true(documented[name], "not in the table: " .. name) end
    for name in pairs(documented) do assert.is_true(known[name], "not a spec field: " .. name) end
  end)

  it("gives crawl.defaults' numbers and booleans as defaults", function()
    local checked = 0
    for _, row in ipairs(spec_rows) do
      local name = row[1]:match("^`([%w_]+)`$")
      local v = name and crawl.defaults[name]
      if type(v) == "number" or type(v) == "boolean" then
        assert.equal(tostring(v), row[3], name)
        checked = checked + 1
      end
    end
    assert.is_true(checked >= 10, "only " .. checked .. " defaults checked")
  end)

  it("names options that luacrawl crawl --help lists", function()
    local help = cli_crawl.usage
    local n = 0
    for _, row in ipairs(spec_rows) do
      for _, opt in ipairs(options_in(row[2])) do
        n = n + 1
        assert.truthy(help:find("[ ,]" .. opt:gsub("%p", "%%%0") .. "[ ,\n]"), opt .. " is not in --help")
      end
    end
    assert.is_true(n >= 30, "only " .. n .. " options in the table")
    -- The binary's --help is that text, and the exit statuses every command shares.
    local code, out = h.sh(h.luacrawl_bin .. " crawl --help")
    assert.equal(0, code)
    assert.equal(help .. require("luacrawl.cli").EXIT_STATUS, out)
  end)

  -- A value for each option that takes one, when "1" will not do; and the options
  -- an option goes with (given with and without it).
  local SAMPLE = {
    ["-o"] = "x.jsonl", ["--output"] = "x.jsonl", ["-A"] = "ua/1", ["--user-agent"] = "ua/1",
    ["--allow-host"] = "a.test", ["--allow"] = "x", ["--deny"] = "x", ["--deny-network"] = "10.0.0.0/8",
    ["--sitemap"] = "http://a.test/sitemap.xml", ["--contact"] = "me@example.org", ["--stats-json"] = "s.json",
    ["--fields"] = "url", ["--warc"] = "p", ["--from-warc"] = "f.warc.gz", ["--state"] = "s.db",
    ["--recrawl"] = "1d", ["--redis"] = "redis://127.0.0.1/0", ["--crawl-id"] = "c", ["--worker-id"] = "w",
    ["--host-key"] = "domain", ["--retry-kinds"] = "dns", ["--retry-statuses"] = "503", ["-H"] = "X-A: 1",
    ["--header"] = "X-A: 1", ["--strip-param"] = "utm_*", ["--max-url-length"] = "100",
    ["--css"] = "t=title", ["--xpath"] = "t=//title", ["--css-all"] = "t=a", ["--xpath-all"] = "t=//a",
    ["--follow"] = "a.next", ["--save"] = "pages",
  }
  local WITH = {
    ["--warc-max-size"] = { "--warc", "p" }, ["--warc-level"] = { "--warc", "p" }, ["--cdx"] = { "--warc", "p" },
    ["--no-warc-dedupe"] = { "--warc", "p" }, ["--worker-id"] = { "--redis", "redis://127.0.0.1/0", "--crawl-id", "c" },
    ["--lease"] = { "--redis", "redis://127.0.0.1/0", "--crawl-id", "c" },
    ["--dashboard-token"] = { "--dashboard", "8099" },
  }

  -- v as a string, the same for equal values (keys sorted).
  local function dump(v)
    if type(v) ~= "table" then return type(v) == "string" and ("%q"):format(v) or tostring(v) end
    local keys, parts = {}, {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. dump(v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  end

  -- Options that come only together (the first of each pair is checked).
  local ALSO = { ["--redis"] = { "--crawl-id", "c" }, ["--crawl-id"] = { "--redis", "redis://127.0.0.1/0" } }

  -- The spec `luacrawl crawl http://a.test/ ARGS...` runs, as one string per field.
  local function spec_of(args)
    local all = { "http://a.test/" }
    for _, a in ipairs(args) do all[#all + 1] = a end
    local spec = cli_crawl.spec(cli_crawl.parse_args(all))
    local out = {}
    for k, v in pairs(spec) do out[k] = dump(v) end
    return out
  end

  it("each option of the luacrawl crawl column sets its field; a field without one says why", function()
    local o = cli_crawl.options
    local checked = 0
    for _, row in ipairs(spec_rows) do
      local names = {}
      for name in row[1]:gmatch("`([%w_]+)`") do names[#names + 1] = name end
      -- "— (why)": no option (one named in the reason is not this field's).
      local opts = row[2]:match("^—") and {} or options_in(row[2])
      if not opts[1] and names[1] ~= "start" then
        assert.truthy(row[2]:match("^— %(.+%)$"),
          ("%s: no option of luacrawl crawl, and no reason given in the table ('— (why)')"):format(row[1]))
      end
      for _, opt in ipairs(opts) do
        assert.truthy(o.values[opt] or o.lists[opt] or o.switches[opt] or o.extracts[opt],
          opt .. " is not an option of luacrawl crawl")
        local base = WITH[opt] or {}
        local args = { unpack(base) }
        args[#args + 1] = opt
        if not o.switches[opt] then args[#args + 1] = SAMPLE[opt] or "1" end
        for _, a in ipairs(ALSO[opt] or {}) do args[#args + 1] = a end
        local before, after = spec_of(base), spec_of(args)
        local changed = false
        for _, name in ipairs(names) do changed = changed or before[name] ~= after[name] end
        assert.is_true(changed, ("%s does not set %s"):format(opt, row[1]))
        checked = checked + 1
      end
    end
    assert.is_true(checked >= 60, "only " .. checked .. " options checked")
  end)

  it("with no option, luacrawl crawl leaves every field to crawl.run's default but those it says", function()
    local spec = cli_crawl.spec(cli_crawl.parse_args({ "http://a.test/" }))
    -- Said in the table: output (stdout), fields (the record's), free_bodies (set);
    -- start is the URLs; robots and cookies are given their defaults, fetch nothing.
    local own = { start = true, output = true, fields = true, free_bodies = true }
    for k, v in pairs(spec) do
      if not own[k] then
        if k == "fetch" then
          assert.is_nil(next(v), "fetch is given options")
        elseif k == "cookies" then
          assert.is_true(v)
        else
          assert.equal(crawl.defaults[k], v, k)
        end
      end
    end
  end)

  it("with the command's own table, covers every option of --help", function()
    local documented = {}
    for _, rows in ipairs({ spec_rows, cli_rows }) do
      for _, row in ipairs(rows) do
        for _, opt in ipairs(options_in(row[1] .. " " .. (rows == spec_rows and row[2] or ""))) do
          documented[opt] = true
        end
      end
    end
    for line in cli_crawl.usage:gmatch("[^\n]+") do
      for opt in (line:match("^  (%-[^ ].-)%s%s") or ""):gmatch("(%-%-?[%w-]+)") do
        assert.is_true(documented[opt], opt .. " of --help is in no table of docs/crawl.md")
      end
    end
  end)
end)

describe("README.md", function()
  local readme = read(h.source_dir .. "/README.md"):gsub("%s+", " ") -- line breaks as spaces

  it("says what luacrawl does not do, and where the binary is after the build", function()
    assert.truthy(readme:find("JavaScript is not run", 1, true), "no word on JavaScript")
    assert.truthy(readme:find("The binary is then `build/luacrawl`", 1, true), "no word on where the binary is")
    assert.truthy(readme:find("`cmake --install build` puts it on your PATH", 1, true), "no word on cmake --install")
  end)
end)
