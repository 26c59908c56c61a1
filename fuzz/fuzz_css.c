/* fuzz_css.c: the CSS selector compiler (lua/luacrawl/css.lua) and the XPath it
 * produces. The input is a selector. A bad selector must raise a "css: ..." error
 * string; any other error out of to_xpath is a bug in the compiler. What to_xpath
 * accepts must compile and evaluate as XPath on a small fixed document (unless the
 * selector is not UTF-8: libxml2 then refuses the XPath, with an error), and doc:css
 * (the path scripts take) must select the same. */
#include "fuzz_lua.h"

static const char DRIVER[] =
    "local css = require 'luacrawl.css'\n"
    "local html = require('luacrawl').html\n"
    "local DOC = [[<!DOCTYPE html><html lang=en-GB><head><title>T</title>\n"
    "<meta charset=utf-8><link rel=next href='/2'></head>\n"
    "<body class='main  page'><h1 id=top>Head<!-- c --></h1>\n"
    "<ul id=list><li class=a>one</li><li class='a b' data-x=\"q'uo&quot;te\">two</li>\n"
    "<li>three<em>!</em></li><li></li></ul>\n"
    "<p>text <a href='/x' rel='nofollow noopener' title=en-us>x</a> <a HREF=y>y</a></p>\n"
    "<div><p/><span>\xc3\xa9t\xc3\xa9</span><my:tag a:b=1>ns</my:tag><p>last</p></div>\n"
    "<table><tr><td>1<td>2</table><form><input name=q value=''></form></body></html>]]\n"
    "local doc = html.parse(DOC, { url = 'https://example.com/' })\n"
    "local ul = doc:css1('ul')\n"
    "\n"
    "-- libxml2 reads XPath as UTF-8: from a selector that is not, an XPath error is fine.\n"
    "local function valid_utf8(s)\n"
    "  local i, n = 1, #s\n"
    "  while i <= n do\n"
    "    local c = s:byte(i)\n"
    "    local len, lo, hi = 1, 0x80, 0xBF\n"
    "    if c >= 0xC2 and c <= 0xDF then len = 2\n"
    "    elseif c >= 0xE0 and c <= 0xEF then\n"
    "      len = 3\n"
    "      if c == 0xE0 then lo = 0xA0 elseif c == 0xED then hi = 0x9F end\n"
    "    elseif c >= 0xF0 and c <= 0xF4 then\n"
    "      len = 4\n"
    "      if c == 0xF0 then lo = 0x90 elseif c == 0xF4 then hi = 0x8F end\n"
    "    elseif c >= 0x80 then return false end\n"
    "    for k = i + 1, i + len - 1 do\n"
    "      local d = s:byte(k)\n"
    "      if not d or d < lo or d > hi then return false end\n"
    "      lo, hi = 0x80, 0xBF\n"
    "    end\n"
    "    i = i + len\n"
    "  end\n"
    "  return true\n"
    "end\n"
    "\n"
    "local function same(a, b)\n"
    "  if #a ~= #b then return false end\n"
    "  for i = 1, #a do if a[i] ~= b[i] then return false end end\n"
    "  return true\n"
    "end\n"
    "\n"
    "return function(sel)\n"
    "  local ok, xpath = pcall(css.to_xpath, sel)\n"
    "  if not ok then\n"
    "    if type(xpath) ~= 'string' or not xpath:find('^css: ') then\n"
    "      error(string.format('to_xpath(%q) raised %s', sel, tostring(xpath)), 0)\n"
    "    end\n"
    "    return\n"
    "  end\n"
    "  if type(xpath) ~= 'string' then error('to_xpath gave a ' .. type(xpath), 0) end\n"
    "  local ok2, nodes = pcall(doc.xpath, doc, xpath)\n"
    "  if not ok2 then\n"
    "    if type(nodes) == 'string' and not valid_utf8(sel) then return end\n"
    "    local msg = string.format('to_xpath(%q) = %q, which fails: ', sel, xpath)\n"
    "    error(msg .. tostring(nodes), 0)\n"
    "  end\n"
    "  local via_css = doc:css(sel)\n"
    "  if not same(nodes, via_css) then\n"
    "    error(string.format('doc:css(%q) differs from doc:xpath(%q)', sel, xpath), 0)\n"
    "  end\n"
    "  ul:css(sel) -- relative to an element\n"
    "  ul:xpath(xpath)\n"
    "end\n";

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_lua_init(DRIVER, "=fuzz_css");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_lua_run(data, size);
    return 0;
}
