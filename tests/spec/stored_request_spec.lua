-- fixtures:
-- luacrawl.stored_request: a request as the state and the Redis fleet store it (JSON,
-- its callback by name) and back; the refusals in each backend's words.
require "luacrawl"
local stored_request = require "luacrawl.stored_request"
local core = require "luacrawl.core"

local function product() end
local function parse() end

local function codec(where, apart)
  return stored_request.codec({
    callbacks = { product = product }, parse = parse, apart = apart or { key = true }, where = where,
  })
end

describe("stored_request", function()
  it("round-trips a request: callback by name, meta, priority, depth, dont_filter", function()
    local encode, decode = codec("kept in the state")
    local req = {
      url = "http://a.test/p", key = "a.test", depth = 2, priority = 5, dont_filter = true, redirects = 1,
      callback = product, meta = { from = 3, tags = { "x", "y" }, nested = { k = "v" } },
      method = "POST", body = "a=1", headers = { ["content-type"] = "application/x-www-form-urlencoded" },
    }
    local text = encode(req)
    assert.equal("product", core.json_decode(text).callback)
    local back = decode(text)
    assert.equal(product, back.callback)
    assert.is_nil(back.key) -- kept apart by the backend
    back.key = req.key
    assert.same(req, back)
  end)

  it("names spec.parse \"parse\" and maps the name back", function()
    local encode, decode = codec("kept in the state")
    local text = encode({ url = "http://a.test/", callback = parse })
    assert.equal("parse", core.json_decode(text).callback)
    assert.equal(parse, decode(text).callback)
  end)

  it("keeps a callback given by a name it does not know as that name", function()
    local encode, decode = codec("kept in the state")
    local text = encode({ url = "http://a.test/", callback = "other" })
    assert.equal("other", decode(text).callback)
  end)

  it("stores neither the crawl's transient fields nor the backend's own", function()
    local encode = codec("kept in the state", { key = true, depth = true })
    local text = encode({
      url = "http://a.test/", key = "a.test", depth = 1, retrying = true, held = true, working = true,
      changed = false, _warc = {}, meta = { m = 1 },
    })
    assert.same({ url = "http://a.test/", meta = { m = 1 } }, core.json_decode(text))
  end)

  it("gives nil when every field is kept apart", function()
    local encode = codec("kept in the state", { url = true, key = true })
    assert.is_nil(encode({ url = "http://a.test/", key = "a.test", retrying = true }))
  end)

  it("sets the fields on a request given to decode", function()
    local encode, decode = codec("kept in the state", { url = true, key = true })
    local req = { url = "http://a.test/", key = "a.test" }
    local back = decode(encode({ url = "http://a.test/", callback = product, meta = { m = 1 } }), req)
    assert.equal(req, back)
    assert.same({ url = "http://a.test/", key = "a.test", callback = product, meta = { m = 1 } }, req)
  end)

  for _, where in ipairs({ "kept in the state", "shared by the fleet" }) do
    it("refuses a callback not named in the spec, to be " .. where, function()
      local encode = codec(where)
      local ok, err = pcall(encode, { url = "http://a.test/", callback = function() end })
      assert.is_false(ok)
      assert.equal("a request's callback must be named in the spec to be " .. where .. ": callbacks = "
        .. "{ name = fn }, then follow(url, { callback = fn }) or { callback = \"name\" }", err)
    end)

    it("refuses a meta that is not JSON, to be " .. where .. ", naming the request (redacted)", function()
      local encode = codec(where)
      local ok, err = pcall(encode, { url = "http://user:secret@a.test/p", meta = { f = function() end } })
      assert.is_false(ok)
      assert.matches("^a request of http://%*%*%*@a%.test/p cannot be " .. where
        .. " %(its meta must be JSON: .+%)$", err)
    end)
  end
end)
