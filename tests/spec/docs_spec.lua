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
    -- The binary's --help is that text.
    local code, out = h.sh(h.luacrawl_bin .. " crawl --help")
    assert.equal(0, code)
    assert.equal(help, out)
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
