-- fixtures:
-- lc.save (lua/luacrawl/save.lua, bindings/lua_fs.c): a fetched body kept as a file
-- DIR/HOST/PATH for offline reading, as `wget -x` keeps it, and never outside DIR.
local h = require "spec_helper"
local lc = require "luacrawl"

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function is_link(path)
  return os.execute("test -L '" .. path .. "'") == 0 or os.execute("test -L '" .. path .. "'") == true
end

describe("lc.save.path", function()
  it("maps a URL to HOST/PATH, index.html for a folder", function()
    assert.equal("example.org/index.html", lc.save.path("http://example.org/"))
    assert.equal("example.org/index.html", lc.save.path("http://example.org"))
    assert.equal("example.org/docs/a.html", lc.save.path("https://Example.ORG/docs/a.html#top"))
    assert.equal("example.org/docs/index.html", lc.save.path("http://example.org/docs/"))
  end)

  it("keeps a port that is not the scheme's in the host's folder", function()
    assert.equal("127.0.0.1:8080/a", lc.save.path("http://127.0.0.1:8080/a"))
    assert.equal("example.org/a", lc.save.path("https://example.org:443/a"))
    assert.equal("[::1]:8080/a", lc.save.path("http://[::1]:8080/a"))
  end)

  it("keeps the query in the file's name", function()
    assert.equal("example.org/list?page=2", lc.save.path("http://example.org/list?page=2"))
    assert.equal("example.org/index.html?q=a%2Fb", lc.save.path("http://example.org/?q=a%2Fb"))
  end)

  it("never makes a segment that leaves the folder", function()
    assert.equal("example.org/etc/passwd", lc.save.path("http://example.org/a/../../../etc/passwd"))
    assert.equal("example.org/a%2F..%2Fb", lc.save.path("http://example.org/a%2F..%2Fb"))
    assert.equal("example.org/a/%2F/b", lc.save.path("http://example.org/a//b"))
    for _, u in ipairs { "http://example.org/%2e%2e/x", "http://example.org/.%2E/x", "http://example.org/a/%2e/b" } do
      local p = lc.save.path(u)
      for seg in p:gmatch("[^/]+") do
        assert.is_true(seg ~= "." and seg ~= "..", u .. " -> " .. p)
      end
    end
  end)

  it("cuts a name over 255 bytes, keeping two long names apart", function()
    local a = lc.save.path("http://example.org/" .. ("x"):rep(300) .. "a.html")
    local b = lc.save.path("http://example.org/" .. ("x"):rep(300) .. "b.html")
    local name_a, name_b = a:match("[^/]+$"), b:match("[^/]+$")
    assert.is_true(#name_a <= 255)
    assert.not_equal(name_a, name_b)
    assert.matches("%.html$", name_a)
  end)

  it("refuses what is not an http(s) URL", function()
    local p, err = lc.save.path("ftp://example.org/a")
    assert.is_nil(p)
    assert.equal("invalid_url", err.kind)
    p, err = lc.save.path("not a url")
    assert.is_nil(p)
    assert.equal("invalid_url", err.kind)
  end)
end)

describe("lc.save.write", function()
  it("writes the body under the folder, making what is missing", function()
    local dir = h.tmpname() .. "/new/site"
    local path = assert(lc.save.write(dir, "http://example.org/docs/a.html", "<p>a</p>"))
    assert.equal(dir .. "/example.org/docs/a.html", path)
    assert.equal("<p>a</p>", read(path))
  end)

  it("keeps a page that is also a folder as its index.html, in either order", function()
    local dir = h.tmpname()
    lc.save.write(dir, "http://example.org/a", "A")
    lc.save.write(dir, "http://example.org/a/b", "B")
    assert.equal("A", read(dir .. "/example.org/a/index.html"))
    assert.equal("B", read(dir .. "/example.org/a/b"))
    local dir2 = h.tmpname()
    lc.save.write(dir2, "http://example.org/a/b", "B")
    local path = assert(lc.save.write(dir2, "http://example.org/a", "A"))
    assert.equal(dir2 .. "/example.org/a/index.html", path)
    assert.equal("A", read(path))
  end)

  it("writes the same URL again in place", function()
    local dir = h.tmpname()
    lc.save.write(dir, "http://example.org/x", "one")
    lc.save.write(dir, "http://example.org/x", "two")
    assert.equal("two", read(dir .. "/example.org/x"))
  end)

  it("follows no symbolic link put in the tree", function()
    local dir, outside = h.tmpname(), h.tmpname()
    assert(os.execute("mkdir -p '" .. dir .. "/example.org' '" .. outside .. "'"))
    assert(os.execute("ln -s '" .. outside .. "' '" .. dir .. "/example.org/docs'"))
    assert(os.execute("ln -s '" .. outside .. "/target' '" .. dir .. "/example.org/page'"))
    local p, err = lc.save.write(dir, "http://example.org/docs/a.html", "x")
    assert.is_nil(p)
    assert.equal("io", err.kind)
    assert.is_nil(read(outside .. "/a.html"))
    -- A link in the file's own place is replaced, never written through.
    assert(lc.save.write(dir, "http://example.org/page", "y"))
    assert.is_nil(read(outside .. "/target"))
    assert.is_false(is_link(dir .. "/example.org/page"))
    assert.equal("y", read(dir .. "/example.org/page"))
  end)

  it("says why when it cannot write", function()
    local file = h.tmpname()
    assert(io.open(file, "w")):close()
    local p, err = lc.save.write(file .. "/sub", "http://example.org/a", "x")
    assert.is_nil(p)
    assert.equal("io", err.kind)
    assert.matches("cannot make the folder", err.message)
  end)
end)
