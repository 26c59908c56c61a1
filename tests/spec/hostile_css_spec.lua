-- fixtures:
-- Specification of selectors against hostile markup: the work of doc:css() grows
-- linearly with the document whatever its nesting, every css and xpath call has a
-- step budget with a clear error, and the results are those of the single XPath
-- expression css.to_xpath gives. Work is measured in steps (lc.html.limits().last),
-- never in time.

local lc = require "luacrawl"
local css = require "luacrawl.css"

local DEFAULT = lc.html.limits().steps

local function nested(n)
  return lc.html.parse(("<div>"):rep(n) .. "<a>x</a>" .. ("</div>"):rep(n))
end

-- The steps doc:css(sel) took, and its result.
local function steps(doc, sel)
  local r = doc:css(sel)
  return lc.html.limits().last, r
end

describe("hostile css: nesting", function()
  after_each(function() lc.html.limits({ steps = DEFAULT }) end)

  local SELECTORS = {
    "div div div div a", "div > div > div a", "div ~ div a", "div + div a",
    "div div ::text", "div a, div div", "p div div div a", "div div div div a::text",
    "div ::attr(id)", "* > * > *",
  }

  it("takes steps in proportion to the document for every combinator", function()
    local small, large = nested(2000), nested(4000)
    for _, sel in ipairs(SELECTORS) do
      local s1 = steps(small, sel)
      local s2 = steps(large, sel)
      assert.is_true(s1 <= 200 * 2000, sel .. ": " .. s1 .. " steps for 2,000 divs")
      assert.is_true(s2 <= 2.2 * s1, sel .. ": " .. s1 .. " then " .. s2 .. " steps")
    end
  end)

  it("finds the match under 2,000 nested divs within a small budget", function()
    lc.html.limits({ steps = 1000000 })
    local doc = nested(2000)
    local _, r = steps(doc, "div div div div a")
    assert.equal(1, #r)
    assert.equal("a", r[1].tag)
    assert.equal(2000, #doc:css("body div"))
    assert.equal(1997, #doc:css("div div div div"))
  end)

  it("is linear in the depth for descendant text, with each text node once", function()
    local doc = lc.html.parse(("<div>t"):rep(3000))
    local s, r = steps(doc, "div ::text")
    assert.equal(3000, #r)
    assert.is_true(s <= 100 * 3000, s .. " steps")
  end)
end)

describe("hostile css: the step budget", function()
  after_each(function() lc.html.limits({ steps = DEFAULT }) end)

  it("has a default and can be changed", function()
    assert.equal(20000000, DEFAULT)
    assert.equal(1000, lc.html.limits({ steps = 1000 }).steps)
    assert.equal(1000, lc.html.limits().steps)
  end)

  it("stops a pathological XPath with a clear error", function()
    lc.html.limits({ steps = 1000000 })
    local doc = nested(2000)
    local ok, err = pcall(doc.xpath, doc,
      "descendant::a[ancestor::div[ancestor::div[ancestor::div[ancestor::div]]]]")
    assert.is_false(ok)
    assert.matches('^xpath: expression exceeded 1000000 steps in "descendant::a%[', err)
    assert.equal(1000000, lc.html.limits().last)
  end)

  it("stops a simple path libxml2 evaluates as a stream", function()
    lc.html.limits({ steps = 100 })
    local ok, err = pcall(nested(2000).xpath, nested(2000), "//div")
    assert.is_false(ok)
    assert.equal('xpath: expression exceeded 100 steps in "//div"', err)
  end)

  it("stops a selector whose compound is costly on wide markup", function()
    lc.html.limits({ steps = 1000000 })
    local doc = lc.html.parse("<ul>" .. ("<li>x</li>"):rep(20000) .. "</ul>")
    local ok, err = pcall(doc.css, doc, "li:nth-child(2)")
    assert.is_false(ok)
    assert.equal('css: selector exceeded 1000000 steps in "li:nth-child(2)"', err)
  end)

  it("lets the same call through with no budget (0)", function()
    lc.html.limits({ steps = 0 })
    assert.equal(1, #nested(500):css("div div div div a"))
  end)

  it("refuses a budget that is not a whole number >= 0", function()
    assert.has_error(function() lc.html.limits({ steps = 0 / 0 }) end)
    assert.has_error(function() lc.html.limits({ steps = -1 }) end)
    assert.has_error(function() lc.html.limits({ steps = 1.5 }) end)
    assert.has_error(function() lc.html.limits({ steps = "many" }) end)
  end)

  it("counts the steps when no budget is set", function()
    lc.html.limits({ steps = 0 })
    nested(100):css("div a")
    assert.is_true(lc.html.limits().last > 100)
  end)
end)

describe("hostile css: the same results as the single XPath expression", function()
  local SELECTORS = {
    "div p", "div > p", "h2 + p", "h2 ~ p", "div div a", "body div > a", "ul li a",
    "ul > li + li", "li ~ li > a", "p a, li a", "div ::text", "p::text", "a::attr(href)",
    "div a::attr(href)", "div ::attr(class)", "h1, h2, h3", "* > *", "* + *", "* ~ p",
    "div *", "a, a", "p::text, a::attr(href)", ":not(p) > a", "div:not(.x) a[href^='/']",
    "p ~ *", "span + span", "div a:first-child", "body > div ~ div", "li::text, li a::text",
    "::text", "* ::text", "html body", "head title::text", "a + a ~ a", "nav a", "main p",
    "header ~ *", "li:nth-child(odd) a", "p:empty", "#main li",
  }

  local function pages()
    local out = {}
    for _, name in ipairs({ "index.html", "about.html", "blog/index.html", "blog/post-1.html",
      "blog/post-2.html", "blog/post-3.html", "docs/index.html", "docs/shipping.html",
      "docs/returns.html" }) do
      local f = assert(io.open("examples/site/" .. name))
      out[name] = f:read("*a")
      f:close()
    end
    out.mixed = [[<div id="main"><h2>T</h2><p>one <a href="/x">l<b>i</b>nk</a> two</p>
      <ul><li>1 <a href="/a">a</a></li><li>2</li><li>3 <span>s</span><span>t</span></li></ul>
      <p></p><div><p>deep <code><a href="mailto:x">m</a></code> tail</p></div></div>]]
    return out
  end

  it("on the example site and a mixed page, from the document and from elements", function()
    for name, body in pairs(pages()) do
      local doc = lc.html.parse(body)
      local contexts = { doc }
      for _, e in ipairs(doc:xpath("//div | //ul | //body | //main")) do
        contexts[#contexts + 1] = e
      end
      for _, ctx in ipairs(contexts) do
        for _, sel in ipairs(SELECTORS) do
          local new, old = ctx:css(sel), ctx:xpath(css.to_xpath(sel))
          assert.equal(#old, #new, name .. ": " .. sel)
          for i = 1, #old do assert.equal(old[i], new[i], name .. ": " .. sel .. " #" .. i) end
        end
      end
    end
  end)
end)

describe("hostile xpath: nothing lost on a deep page", function()
  after_each(function() lc.html.limits({ steps = DEFAULT }) end)

  it("finds all 16,000 links of a page 16,000 levels deep with //a", function()
    -- libxml2 2.9 evaluates an expression such as //a as a stream pattern that
    -- stops 10,000 levels down: it gave 9,997 of them, descendant::a all.
    lc.html.limits({ steps = 0 })
    local doc = lc.html.parse(("<div><a>x</a>"):rep(16000) .. ("</div>"):rep(16000))
    assert.equal(16000, #doc:xpath("//a"))
    assert.equal(16000, #doc:xpath("/html/body//a"))
    assert.equal(16000, #doc:xpath("descendant::a"))
    assert.equal(16000, #doc:css("a"))
  end)

  it("keeps an expression's syntax errors and their positions", function()
    local doc = lc.html.parse("<p>x</p>")
    assert.same({ false, 'xpath: invalid expression at position 5 in "//p/"' },
      { pcall(doc.xpath, doc, "//p/") })
    assert.is_false((pcall(doc.xpath, doc, "//p)")))
  end)
end)
