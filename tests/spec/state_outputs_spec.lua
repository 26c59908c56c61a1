-- fixtures: --http --site-pages 30
-- ways: one
-- `luacrawl crawl` under the mistakes a user makes with outputs and states: a start
-- that fails leaves every existing file as it was; a resume knows its outputs by
-- what they are (not by how their path was typed) and never cuts a record it
-- committed; two files of one crawl that are the same file are refused.
local h = require "spec_helper"

local q = h.quote

local function write_file(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

local function lines_of(path)
  local n = 0
  for _ in h.read_file(path):gmatch("[^\n]+") do n = n + 1 end
  return n
end

-- Every page of the site once in a JSON Lines output: its URLs, each counted once.
local function urls_of(path)
  local seen, n = {}, 0
  for line in h.read_file(path):gmatch("[^\n]+") do
    local url = line:match('"url":"([^"]+)"')
    assert(url and not seen[url], "a torn or repeated record: " .. line)
    seen[url], n = true, n + 1
  end
  return n
end

-- A fresh directory of the test's own (the crawl runs in it: the paths are relative).
local function new_dir()
  local dir = h.tmpname("d")
  assert(os.execute("mkdir -p " .. q(dir .. "/sub")))
  return dir
end

-- luacrawl crawl of the fixture site, run in dir; returns status, stdout, stderr.
local function crawl(dir, args)
  return h.sh(("cd %s && %s crawl %s -q %s"):format(q(dir), h.luacrawl_bin, q(h.url("/site/")), args))
end

local site_pages = #h.control("/site/manifest.json")

describe("a start that fails", function()
  -- A folder that cannot be made: its parent is a file.
  for _, case in ipairs({ { "an archive", "--warc afile/x" }, { "a stats file", "--stats-json afile/x.json" } }) do
    it(("(%s in a folder that cannot be made) leaves an existing output as it was"):format(case[1]), function()
      local dir = new_dir()
      write_file(dir .. "/p.jsonl", '{"keep":1}\n')
      write_file(dir .. "/afile", "")
      local code, _, err = crawl(dir, "-o p.jsonl " .. case[2])
      assert.equal(2, code, err)
      assert.matches("afile", err)
      assert.equal('{"keep":1}\n', h.read_file(dir .. "/p.jsonl"))
    end)
  end

  it("leaves no output behind that it created", function()
    local dir = new_dir()
    write_file(dir .. "/afile", "")
    local code, _, err = crawl(dir, "-o p.jsonl --stats-json afile/x.json")
    assert.equal(2, code, err)
    assert.is_nil(io.open(dir .. "/p.jsonl", "rb"))
  end)
end)

describe("a resume", function()
  for _, case in ipairs({
    { "./pages.jsonl", "", "./pages.jsonl" },
    { "the absolute path", "", "ABS/pages.jsonl" },
    { "another working directory", "sub", "../pages.jsonl" },
  }) do
    it(("with the output spelled as %s goes on from the committed records"):format(case[1]), function()
      local dir = new_dir()
      local code, _, err = crawl(dir, "--state s.db -o pages.jsonl -n 4")
      assert.equal(0, code, err)
      assert.equal(4, lines_of(dir .. "/pages.jsonl"))
      local state = case[2] == "" and "s.db" or "../s.db"
      local out = case[3]:gsub("^ABS", dir)
      code, _, err = crawl(dir .. "/" .. case[2], ("--state %s -o %s"):format(state, q(out)))
      assert.equal(0, code, err)
      assert.equal(site_pages, urls_of(dir .. "/pages.jsonl"))
      -- Finished: run again, it fetches nothing and keeps every record.
      code, _, err = crawl(dir .. "/" .. case[2], ("--state %s -o %s"):format(state, q(out)))
      assert.equal(0, code, err)
      assert.equal(site_pages, urls_of(dir .. "/pages.jsonl"))
    end)
  end

  it("writing elsewhere than the output it committed to is refused, the output kept", function()
    local dir = new_dir()
    local code, _, err = crawl(dir, "--state s.db -o pages.jsonl -n 4")
    assert.equal(0, code, err)
    local before = h.read_file(dir .. "/pages.jsonl")
    code, _, err = crawl(dir, "--state s.db -o pages.csv")
    assert.equal(2, code, err)
    assert.matches("pages%.jsonl", err)
    assert.equal(before, h.read_file(dir .. "/pages.jsonl"))
    assert.is_nil(io.open(dir .. "/pages.csv", "rb"))
  end)

  it("with other --fields than its CSV output's header is refused, the output kept", function()
    local dir = new_dir()
    local code, _, err = crawl(dir, "--state s.db -o pages.csv -n 4 --fields url,status")
    assert.equal(0, code, err)
    local before = h.read_file(dir .. "/pages.csv")
    code, _, err = crawl(dir, "--state s.db -o pages.csv --fields url,status,title")
    assert.equal(2, code, err)
    assert.matches("url,status", err)
    assert.equal(before, h.read_file(dir .. "/pages.csv"))
  end)
end)

describe("two files of one crawl that are one file", function()
  for _, case in ipairs({
    { "the state and the output", "--state X -o X" },
    { "the state and the stats file", "--state X -o out.jsonl --stats-json ./X" },
    { "the stats file and the output", "-o X.jsonl --stats-json ./X.jsonl" },
  }) do
    it(("are refused (%s), the file kept"):format(case[1]), function()
      local dir = new_dir()
      local file = case[2]:match("(X[%.%w]*)$")
      write_file(dir .. "/" .. file, "kept\n")
      local code, _, err = crawl(dir, case[2])
      assert.equal(2, code, err)
      assert.matches("same file", err)
      assert.equal("kept\n", h.read_file(dir .. "/" .. file))
    end)
  end
end)

describe("two first starts on one new state", function()
  it("one crawls, the other is told the state is in use (never a state that cannot be made)", function()
    local dir = new_dir()
    for i = 1, 10 do
      local state, out = ("s%d.db"):format(i), ("o%d"):format(i)
      -- One output for both, as one command started twice: the one that does not
      -- have the state must not touch it.
      local run = ("(%s crawl %s -q -n 2 --state %s -o %s.jsonl 2>%%s.err; echo $? >%%s.code)"):format(
        h.luacrawl_bin, q(h.url("/site/")), state, out)
      local cmd = ("cd %s || exit 1; %s & %s & wait"):format(q(dir), run:format(out .. "a", out .. "a"),
        run:format(out .. "b", out .. "b"))
      assert.equal(0, (h.sh("bash -c " .. q(cmd))))
      local crawled = 0
      for _, who in ipairs({ "a", "b" }) do
        local code = tonumber(h.read_file(("%s/%s%s.code"):format(dir, out, who)))
        local err = h.read_file(("%s/%s%s.err"):format(dir, out, who))
        if code == 0 then
          crawled = crawled + 1
        else
          assert.equal(2, code, err)
          assert.matches("is in use: another crawl has it open", err)
        end
      end
      assert.is_true(crawled >= 1, "neither crawled, run " .. i)
    end
  end)
end)
