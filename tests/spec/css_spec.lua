-- Specification of luacrawl.css: CSS selectors compiled to XPath, evaluated by
-- doc:css() against a small fixed document; each case checks the exact elements
-- matched (by id, in document order).

local lc = require "luacrawl"
local css = require "luacrawl.css"

local FIXTURE = [[
<!DOCTYPE html>
<html id="root"><head><title id="t">Fixture</title></head><body id="body">
<div id="main" class="content  wide">
  <h2 id="h1">Heading</h2>
  <p id="p1" class="intro lead" lang="en-US" data-x="100">First <b id="b1">bold</b> para</p>
  <p id="p2" class="lead-in" title="it's">Second</p>
  <p id="p3" class=" intro "></p>
  <ul id="list">
    <li id="li1" class="odd">1</li>
    <li id="li2">2</li>
    <li id="li3" class="odd">3</li>
    <li id="li4">4</li>
    <li id="li5" class="odd">5</li>
  </ul>
  <span id="s1"></span>
  <a id="a1" href="https://example.org/doc.pdf" rel="nofollow noopener">PDF</a>
  <a id="a2" href="/local.html" hreflang="en">Local</a>
  <a id="a3" href="HTTP://EXAMPLE.ORG/X.PDF" hreflang="english">X</a>
</div>
<div id="side" class="contentx"><p id="p4">Side <span id="s2">s</span></p><h2 id="h2">Also</h2><p id="p5">after h2</p><p id="p6">later</p></div>
</body></html>
]]

local doc = lc.html.parse(FIXTURE)

-- The ids of the matched elements, space-separated.
local function ids(list)
  local out = {}
  for i, node in ipairs(list) do out[i] = node:attr("id") or ("<" .. node.tag .. ">") end
  return table.concat(out, " ")
end

local function match(sel, context)
  return ids((context or doc):css(sel))
end

local function css_error(sel)
  local ok, err = pcall(doc.css, doc, sel)
  assert.is_false(ok)
  return err
end

describe("css type and universal selectors", function()
  it("matches elements by type", function()
    assert.equal("p1 p2 p3 p4 p5 p6", match("p"))
  end)

  it("matches type names case-insensitively", function()
    assert.equal("p1 p2 p3 p4 p5 p6", match("P"))
  end)

  it("matches every element with *", function()
    assert.equal("li1 li2 li3 li4 li5", match("#list *"))
    assert.equal(#doc:xpath("//*"), #doc:css("*"))
  end)
end)

describe("css #id and .class", function()
  it("matches by id", function()
    assert.equal("p2", match("#p2"))
    assert.equal("p2", match("p#p2"))
    assert.equal("", match("div#p2"))
  end)

  it("matches a class as a whole whitespace-separated token", function()
    assert.equal("p1 p3", match(".intro"))
    assert.equal("p1", match(".lead")) -- not "lead-in"
    assert.equal("main", match(".content")) -- not "contentx", despite the double space
    assert.equal("main", match(".wide"))
  end)

  it("requires every class of a compound", function()
    assert.equal("p1", match(".intro.lead"))
    assert.equal("p1", match("p.lead.intro"))
  end)
end)

describe("css attribute selectors", function()
  it("[a] matches presence", function()
    assert.equal("p2", match("[title]"))
    assert.equal("a1", match("a[rel]"))
  end)

  it("[a=v] matches the exact value, quoted or not", function()
    assert.equal("p1", match('[data-x="100"]'))
    assert.equal("p1", match("[data-x='100']"))
    assert.equal("p1", match("[data-x=100]"))
    assert.equal("p2", match([==[[title="it's"]]==]))
    assert.equal("", match("[data-x=10]"))
  end)

  it("[a~=v] matches one whitespace-separated token", function()
    assert.equal("a1", match("[rel~=nofollow]"))
    assert.equal("a1", match('[rel~="noopener"]'))
    assert.equal("", match("[rel~=no]"))
    assert.equal("", match('[rel~="nofollow noopener"]'))
  end)

  it("[a|=v] matches the value or its '-' prefixed subcodes", function()
    assert.equal("p1", match("[lang|=en]"))
    assert.equal("a2", match("[hreflang|=en]")) -- not "english"
  end)

  it("[a^=v], [a$=v] and [a*=v] match prefix, suffix and substring", function()
    assert.equal("a1", match('[href^="https"]'))
    assert.equal("a1", match('[href$=".pdf"]'))
    assert.equal("a1", match("[href*=example]"))
    assert.equal("a2", match("[href^='/']"))
  end)

  it("^=, $= and *= with an empty value match nothing", function()
    assert.equal("", match('[href^=""]'))
    assert.equal("", match('[href$=""]'))
    assert.equal("", match('[href*=""]'))
  end)

  it("the i flag compares ASCII case-insensitively", function()
    assert.equal("a1 a3", match('[href$=".pdf" i]'))
    assert.equal("a1 a3", match("a[href*=EXAMPLE i]"))
  end)

  it("attribute names are case-insensitive", function()
    assert.equal("p2", match("[TITLE]"))
  end)
end)

describe("css combinators", function()
  it("descendant", function()
    assert.equal("p4 p5 p6", match("#side p"))
    assert.equal("s2", match("div#side span"))
    assert.equal("b1", match("#main p b"))
  end)

  it("child (>)", function()
    assert.equal("p4 p5 p6", match("#side > p"))
    assert.equal("s1", match("div > span"))
    assert.equal("s1", match("div>span"))
  end)

  it("adjacent sibling (+)", function()
    assert.equal("p1 p5", match("h2 + p"))
    assert.equal("", match("#p1 + #p3"))
  end)

  it("general sibling (~)", function()
    assert.equal("p5 p6", match("#h2 ~ p"))
    assert.equal("p2 p3", match("#p1 ~ p"))
  end)

  it("chains of combinators", function()
    assert.equal("li2 li3 li4 li5", match("#main > ul > li ~ li"))
    assert.equal("p1 p5", match("body > div > h2 + p"))
    assert.equal("p5", match("body > .contentx > h2 + p"))
  end)

  it("groups with ',' give each element once, in document order", function()
    assert.equal("h1 b1 h2", match("h2, #b1"))
    assert.equal("p1 p3", match("p.intro, .lead"))
  end)
end)

describe("css structural pseudo-classes", function()
  it(":first-child and :last-child", function()
    assert.equal("li1", match("li:first-child"))
    assert.equal("li5", match("li:last-child"))
    assert.equal("h1", match("#main > :first-child"))
  end)

  it(":nth-child(b)", function()
    assert.equal("li2", match("li:nth-child(2)"))
    assert.equal("", match("li:nth-child(0)"))
  end)

  it(":nth-child(odd) and :nth-child(even)", function()
    assert.equal("li1 li3 li5", match("li:nth-child(odd)"))
    assert.equal("li2 li4", match("li:nth-child(even)"))
  end)

  it(":nth-child(an+b) with positive, negative and zero offsets", function()
    assert.equal("li1 li4", match("li:nth-child(3n+1)"))
    assert.equal("li4 li5", match("li:nth-child(n+4)"))
    assert.equal("li1 li2 li3", match("li:nth-child(-n+3)"))
    assert.equal("li2 li4", match("li:nth-child(2n)"))
    assert.equal("li1 li3 li5", match("li:nth-child(2n-1)"))
    assert.equal("li3", match("li:nth-child( -2n + 3 ):not(:first-child)"))
  end)

  it(":nth-of-type counts siblings of the same type only", function()
    assert.equal("p2", match("#main > p:nth-of-type(2)"))
    assert.equal("p1 p4", match("p:nth-of-type(1)"))
    assert.equal("p1 p3 p4 p6", match("p:nth-of-type(odd)"))
  end)

  it(":not() excludes a simple selector", function()
    assert.equal("li2 li4", match("li:not(.odd)"))
    assert.equal("h1 list s1", match("#main > :not(p):not(a)"))
    assert.equal("p2 p4 p5 p6", match("p:not([class~=intro])"))
  end)

  it(":empty matches elements with neither children nor text", function()
    assert.equal("p3 s1", match(":empty"))
  end)
end)

describe("css pseudo-elements", function()
  it("::text gives the direct text children of the matched elements", function()
    assert.same({ "First ", " para" }, doc:css("#p1::text"))
  end)

  it("' ::text' (after a space) gives all the text inside", function()
    assert.same({ "First ", "bold", " para" }, doc:css("#p1 ::text"))
  end)

  it("::attr(name) gives attribute values", function()
    assert.same({ "https://example.org/doc.pdf", "/local.html", "HTTP://EXAMPLE.ORG/X.PDF" },
      doc:css("a::attr(href)"))
    assert.equal("/local.html", doc:css1("#a2::attr(href)"))
  end)

  it("alone, a pseudo-element applies to the context node", function()
    local a = doc:css1("#a1")
    assert.equal("https://example.org/doc.pdf", a:css1("::attr(href)"))
    assert.same({ "PDF" }, a:css("::text"))
  end)
end)

describe("css relative to a node", function()
  local main = doc:css1("#main")

  it("matches descendants of the node only", function()
    assert.equal("p1 p2 p3", match("p", main))
  end)

  it("never matches the node itself", function()
    assert.equal("", match("div", main))
    assert.equal("", match("#main", main))
  end)

  it("lets the left of a selector match ancestors of the node (as querySelectorAll)", function()
    assert.equal("li1 li2 li3 li4 li5", match("#main li", doc:css1("#list")))
  end)

  it("never leaves the node's subtree through a sibling combinator", function()
    assert.equal("", match("h2 + p", doc:css1("#h1")))
    assert.equal("b1", match("p > b", doc:css1("#p1")))
  end)

  it("css1 gives the first match or nil", function()
    assert.equal("p1", main:css1("p"):attr("id"))
    assert.is_nil(main:css1("table"))
  end)
end)

describe("css.to_xpath", function()
  it("compiles to a relative XPath expression", function()
    local x = css.to_xpath("div p")
    assert.is_string(x)
    assert.is_nil(x:find("^/"))
    assert.equal(css.to_xpath("div p"), x)
  end)

  it("gives an expression that selects the same elements through xpath()", function()
    assert.equal(ids(doc:css("ul > li:nth-child(odd)")),
      ids(doc:xpath(css.to_xpath("ul > li:nth-child(odd)"))))
  end)

  it("handles CSS escapes in identifiers", function()
    local d = lc.html.parse([[<p id="a:b">x</p><p class="1st">y</p>]])
    assert.equal("x", d:css1("#a\\:b"):text())
    assert.equal("y", d:css1(".\\31 st"):text())
  end)
end)

describe("css errors", function()
  it("name the selector and the position of the problem", function()
    assert.equal([[css: unexpected '>' at position 6 in "div >> p"]], css_error("div >> p"))
  end)

  it("report a selector that ends too early", function()
    assert.equal([[css: unexpected end of selector at position 3 in "a,"]], css_error("a,"))
    assert.equal([[css: unexpected end of selector at position 3 in "a["]], css_error("a["))
    assert.equal([[css: unexpected end of selector at position 6 in "div >"]], css_error("div >"))
  end)

  it("report unknown pseudo-classes and pseudo-elements", function()
    assert.equal([[css: unknown pseudo-class ':hover' at position 2 in "a:hover"]],
      css_error("a:hover"))
    assert.equal([[css: unknown pseudo-element '::before' at position 2 in "p::before"]],
      css_error("p::before"))
  end)

  it("report a bad an+b argument", function()
    assert.equal([[css: invalid :nth-child() argument 'x' at position 14 in "li:nth-child(x)"]],
      css_error("li:nth-child(x)"))
  end)

  it("report an empty selector", function()
    assert.equal([[css: empty selector at position 1 in "  "]], css_error("  "))
  end)

  it("report an *-of-type pseudo-class without a type", function()
    assert.matches(":nth%-of%-type%(%) needs a type selector", css_error(".x:nth-of-type(2)"))
  end)

  it("report anything after a pseudo-element", function()
    assert.equal([[css: unexpected 'b' at position 9 in "a::text b"]], css_error("a::text b"))
  end)
end)

describe("css selectors the fuzzer found", function()
  local html = require("luacrawl").html
  local doc = html.parse("<div><p>x</p></div>")

  it("matches non-ASCII names without writing them into the XPath", function()
    assert.same({}, doc:css("×"))
    assert.same({}, doc:css("[×]"))
    assert.same({}, doc:css("p[é='1']"))
  end)

  it("refuses control characters with the position", function()
    assert.has_error(function() doc:css("p\3") end, 'css: invalid character at position 2 in "p\\3"')
  end)
end)

describe("css escapes of control characters", function()
  it("are refused like the raw characters", function()
    local doc = require("luacrawl").html.parse("<p>x</p>")
    assert.has_error(function() doc:css("\\3") end, 'css: invalid character at position 1 in "\\\\3"')
  end)
end)
