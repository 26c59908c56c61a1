-- Fields from selectors (lua/luacrawl/extract.lua): `luacrawl crawl --css NAME=SEL
-- --xpath NAME=EXPR`, `--css-all`, the same on `luacrawl fetch`, and a spec's extract
-- list; --follow CSS (a crawl that follows only the links selected).
local h = require "spec_helper"
local cjson = require "cjson"
local lc = require "luacrawl"

local bin = h.luacrawl_bin

local function luacrawl(args)
  return h.sh(bin .. " " .. args)
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function lines_of(text)
  local out = {}
  for l in text:gmatch("[^\n]+") do out[#out + 1] = l end
  return out
end

describe("luacrawl crawl --css and --xpath", function()
  it("writes the title and first heading of every page into a CSV, in one command", function()
    local out = h.tmpname(".csv")
    local code, _, err = luacrawl(("crawl '%s' -q -d 1 --css title=title --css h1=h1 -o %s"):format(
      h.url("/items?page=1"), out))
    assert.equal(0, code, err)
    local rows = lines_of((read(out):gsub("\r\n", "\n")))
    assert.equal("url,title,h1", rows[1])
    assert.matches("^" .. h.url("/item/3"):gsub("%p", "%%%0") .. ",Item 3,Item 3$", table.concat(rows, "\n"):match("[^\n]*/item/3,[^\n]*"))
    assert.truthy(table.concat(rows, "\n"):find(h.url("/items?page=1") .. ',Items page 1,"Items, page 1"', 1, true))
    assert.equal(13, #rows) -- the header, the listing, its 10 items and the next page
  end)

  it("writes JSON Lines keys in the order given, null where nothing matches", function()
    local code, out, err = luacrawl(("crawl '%s' -q -d 0 --xpath 'price=//span[@class=\"price\"]' "
      .. "--css none=.nothing --css-all 'names=h2.name' --css-all 'links=a.detail::attr(href)' -o -"):format(
      h.url("/items?page=1")))
    assert.equal(0, code, err)
    local line = lines_of(out)[1]
    assert.matches('^{"url":[^,]*,"price":"1%.99","none":null,"names":%["Item 1",', line)
    local rec = cjson.decode(line)
    assert.equal(10, #rec.names)
    assert.equal("/item/1", rec.links[1])
    assert.equal(cjson.null, rec.none)
  end)

  it("gives an empty list, written [], for --css-all with no match", function()
    local code, out = luacrawl(("crawl '%s' -q -d 0 --css-all 'x=.nothing' -o -"):format(h.url("/items?page=1")))
    assert.equal(0, code)
    assert.matches('"x":%[%]', out)
  end)

  it("gives an element's text and an ::attr() value", function()
    local code, out = luacrawl(("crawl '%s' -q -d 0 --css 'item=div.item' --css 'href=a.next::attr(href)' -o -"):format(
      h.url("/items?page=1")))
    assert.equal(0, code)
    local rec = cjson.decode(lines_of(out)[1])
    assert.equal("Item 11.99more", rec.item) -- the three elements' texts, with nothing between them
    assert.equal("/items?page=2", rec.href)
  end)

  it("squashes an element's whitespace, and keeps ::text values as they are", function()
    local extract = require "luacrawl.extract"
    local doc = lc.html.parse("<p>  a \n\t b  </p><i> x  y </i>")
    local rec = extract.fill({}, { { name = "p", css = "p" }, { name = "t", css = "i::text" } }, doc)
    assert.equal("a b", rec.p)
    assert.equal(" x  y ", rec.t)
  end)

  it("refuses a selector that does not compile before anything is fetched, naming it", function()
    local code, _, err = luacrawl(("crawl '%s' -q --css 'bad=a[' -o -"):format(h.url("/items?page=1")))
    assert.equal(2, code)
    assert.matches("%-%-css: CSS selector 'a%['", err)
    code, _, err = luacrawl(("crawl '%s' -q --xpath 'bad=//a[' -o -"):format(h.url("/items?page=1")))
    assert.equal(2, code)
    assert.matches("%-%-xpath: XPath expression '//a%['", err)
    code, _, err = luacrawl(("crawl '%s' -q --css 'h1' -o -"):format(h.url("/items?page=1")))
    assert.equal(2, code)
    assert.matches("needs NAME=SELECTOR", err)
    code, _, err = luacrawl(("crawl '%s' -q --css t=title --xpath t=//h1 -o -"):format(h.url("/items?page=1")))
    assert.equal(2, code)
    assert.matches("the field t is given twice", err)
  end)

  it("puts --fields and the selector fields in the order given", function()
    local code, out = luacrawl(("crawl '%s' -q -d 0 --fields status,url --css h=h2.name -o -"):format(h.url("/items?page=1")))
    assert.equal(0, code)
    assert.matches('^{"status":200,"url":[^,]*,"h":"Item 1"}', out)
  end)
end)

describe("luacrawl fetch --css NAME=SEL", function()
  it("prints one JSON record: url, status and the fields", function()
    local code, out = luacrawl(("fetch '%s' --css first=h2.name --css-all 'prices=span.price' 2>/dev/null"):format(
      h.url("/items?page=2")))
    assert.equal(0, code)
    assert.matches('^{"url":"[^"]*","status":200,"first":"Item 11","prices":%[', out)
    assert.equal(10, #cjson.decode(out).prices)
  end)
end)

describe("a spec's extract", function()
  it("adds record fields to a crawl with fields and no parse", function()
    local items = {}
    lc.run(function()
      require("luacrawl.crawl").run {
        start = { h.url("/items?page=1") }, max_depth = 0, quiet = true, fields = { "url" },
        extract = { { name = "n", css = "h2.name", all = true } }, output = function(i) items[#items + 1] = i end,
      }
    end)
    assert.equal(1, #items)
    assert.equal(10, #items[1].n)
  end)

  it("refuses extract beside a parse, and a bad entry, naming the field", function()
    local crawl = require "luacrawl.crawl"
    local ok, err = pcall(crawl.new, { start = { h.url("/") }, parse = function() end,
      extract = { { name = "a", css = "a" } } })
    assert.is_false(ok)
    assert.matches("extract: the page record's fields from selectors go with fields and no parse", err)
    ok, err = pcall(crawl.new, { start = { h.url("/") }, fields = { "url" }, extract = { { name = "a", css = "a", xpath = "//a" } } })
    assert.is_false(ok)
    assert.matches("extract: a needs one of css or xpath", err)
  end)
end)

describe("luacrawl crawl --follow", function()
  it("follows only the links of the elements the selector matches (pagination)", function()
    local code, out = luacrawl(("crawl '%s' -q --follow a.next --fields url -o -"):format(h.url("/items?page=1")))
    assert.equal(0, code)
    local urls = {}
    for _, l in ipairs(lines_of(out)) do urls[#urls + 1] = cjson.decode(l).url end
    table.sort(urls)
    assert.same({ h.url("/items?page=1"), h.url("/items?page=2"), h.url("/items?page=3"), h.url("/items?page=4"),
      h.url("/items?page=5") }, urls)
  end)

  it("refuses a selector that does not compile, and follow beside a parse", function()
    local code, _, err = luacrawl(("crawl '%s' -q --follow 'a[' -o -"):format(h.url("/items?page=1")))
    assert.equal(2, code)
    assert.matches("follow: CSS selector 'a%['", err)
    local ok, perr = pcall(require("luacrawl.crawl").new, { start = { h.url("/") }, parse = function() end, follow = "a" })
    assert.is_false(ok)
    assert.matches("follow chooses the links a crawl with no parse follows", perr)
  end)
end)
