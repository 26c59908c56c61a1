-- fixtures:
-- lc.html's encoding detection against html5lib-tests' encoding cases
-- (tests/data/html5lib-encoding/, tests/data/README.md has their license): each case
-- is a body with no transport charset and the encoding a browser reads it in. The
-- prescan of the first 1024 bytes decides first; a <meta> that declares another
-- encoding later in the document switches it, as a browser's parser does when it
-- meets one while the encoding is still tentative (the page is decoded again). The
-- scripted case (its <meta> written by document.write) needs a browser: lc.render's
-- spec runs it.
local h = require "spec_helper"
local lc = require "luacrawl"

local DIR = h.source_dir .. "/tests/data/html5lib-encoding/"

-- The cases of a .dat file: {data =, encoding =} (the "#data" and "#encoding"
-- sections; the data's last newline belongs to the format, not the body).
local function cases(name)
  local f = assert(io.open(DIR .. name, "rb"))
  local text = f:read("*a")
  f:close()
  local out, cur, section = {}, nil, nil
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if line == "#data" then
      cur = { data = {} }
      out[#out + 1] = cur
      section = "data"
    elseif line == "#encoding" then
      section = "encoding"
    elseif section == "data" then
      cur.data[#cur.data + 1] = line
    elseif section == "encoding" and line ~= "" and not cur.encoding then
      cur.encoding = line
    end
  end
  for _, c in ipairs(out) do
    c.data = table.concat(c.data, "\n")
  end
  return out
end

local function check_file(name)
  local all = cases(name)
  assert.is_true(#all > 0)
  local wrong = {}
  for i, c in ipairs(all) do
    local want = lc.html.encoding(c.encoding)
    local got = lc.html.parse(c.data).encoding
    if got ~= want then
      wrong[#wrong + 1] = string.format("case %d: %s, want %s (%s): %q", i, tostring(got),
        tostring(want), c.encoding, c.data:sub(1, 120))
    end
  end
  assert.same({}, wrong)
  return #all
end

describe("html encoding detection against html5lib-tests", function()
  it("decides every case of encoding/tests1.dat as a browser does", function()
    assert.equal(59, check_file("tests1.dat"))
  end)

  it("decides every case of encoding/tests2.dat as a browser does", function()
    assert.equal(22, check_file("tests2.dat"))
  end)

  it("decides encoding/test-yahoo-jp.dat (EUC-JP bytes) as a browser does", function()
    assert.equal(1, check_file("test-yahoo-jp.dat"))
  end)
end)
