-- luacrawl shell (lua/luacrawl/shell.lua): a Lua REPL with helpers for trying
-- selectors and a spec's parse on a live page; on a terminal, line editing and a
-- history kept between sessions (driven here through a pseudo-terminal).
local h = require "spec_helper"

local bin = h.luacrawl_bin

local function write_file(text)
  local path = h.tmpname()
  local f = io.open(path, "w")
  f:write(text)
  f:close()
  return path
end

describe("luacrawl shell on stdin", function()
  local function shell(input, url)
    local path = write_file(input)
    local code, out, err = h.sh(bin .. " shell " .. (url and ("'" .. url .. "'") or "") .. " < " .. path)
    os.remove(path)
    return code, out, err
  end

  it("reads Lua from stdin and prints results pretty", function()
    local code, out = shell("1 + 1\nt = {a = 1, 'x'}\nt\n")
    assert.equal(0, code)
    assert.equal('2\n{ "x", a = 1 }\n', out)
  end)

  it("fetches the URL it is given and queries it with css, xpath and links", function()
    local code, out = shell('res.status\ncss1("h1::text")\n#css(".item")\nxpath("count(//a)")\n#links() > 0\n',
      h.url("/items?page=1"))
    assert.equal(0, code)
    assert.matches("^res = 200 ", out)
    assert.matches('\n200\n"Items, page 1"\n10\n{ 11 }\ntrue\n$', out)
  end)

  it("fetch() inside the shell sets res and doc", function()
    local code, out = shell('fetch("' .. h.url("/site/p/4.html") .. '")\ndoc:title()\n')
    assert.equal(0, code)
    assert.matches('"Page 4"\n$', out)
  end)

  it("fetch() shows the response as the first fetch does, without its internals", function()
    local url = h.url("/site/p/4.html")
    local code, out = shell('fetch("' .. url .. '")\nr = fetch("' .. h.url("/json") .. '")\nfetch("' .. url .. '"), r\n', url)
    assert.equal(0, code)
    local first = out:match("^(res = [^\n]*)\n")
    assert.matches("^res = 200 .*/site/p/4%.html %(%d+ bytes%); doc ready$", first)
    assert.equal(first .. "\n" .. first .. "\n" .. first .. "\n<response 200 " .. h.url("/json") .. " (32 bytes)>\n", out)
    assert.no.matches("_body", out)
    assert.no.matches("_html", out)
  end)

  it("reports errors and goes on", function()
    local code, out = shell('error("boom")\n1\nthis is not lua\n2\n')
    assert.equal(0, code)
    assert.matches("error: .*boom", out)
    assert.matches("\n1\n", out)
    assert.matches("\n2\n$", out)
  end)

  it("accepts statements over several lines", function()
    local code, out = shell("for i = 1, 2 do\n  print(i)\nend\n")
    assert.equal(0, code)
    assert.equal("1\n2\n", out)
  end)

  it("lists what it offers when asked for help", function()
    local code, out = shell("help\n")
    assert.equal(0, code)
    for _, name in ipairs { "fetch(url", "css(sel), css1(sel)", "xpath(e), xpath1(e)", "links(", "page", "view(x)", "exit(), quit()" } do
      assert.truthy(out:find(name, 1, true), name)
    end
    local _, called = shell("help()\n")
    assert.equal(out, called)
  end)

  it("ends at exit() or quit(), with the status given to exit", function()
    local code, out = shell("1\nexit()\n2\n")
    assert.equal(0, code)
    assert.equal("1\n", out)
    code, out = shell("quit()\n2\n")
    assert.equal(0, code)
    assert.equal("", out)
    code = shell("exit(3)\n")
    assert.equal(3, code)
  end)

  it("has xpath1 beside css1", function()
    local code, out = shell('xpath1("//h1/text()")\nxpath1("//nothing")\n', h.url("/items?page=1"))
    assert.equal(0, code)
    assert.matches('\n"Items, page 1"\nnil\n$', out)
  end)

  it("forgets res and doc after a failed fetch, and says why a query cannot answer", function()
    local code, out = shell('fetch("http://127.0.0.1:1/")\nres\ndoc\ncss1("h1")\n', h.url("/items?page=1"))
    assert.equal(0, code)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.matches("^res = 200 ", lines[1])
    assert.equal("nil", lines[2])
    assert.matches("connect", lines[3])
    assert.equal("nil", lines[4])
    assert.equal("nil", lines[5])
    assert.matches("^error: .*no document: the fetch of http://127%.0%.0%.1:1/ failed", lines[6])
  end)

  it("gives the page a spec's parse gets, to try parse on the live page", function()
    local code, out = shell(table.concat({
      "page.url == res.url",
      "function parse(p) p:emit { title = p:css1('title::text') }; p:follow(p:css('a::attr(href)')) end",
      "parse(page)",
      "page.items[1].title",
      "#page.followed > 0",
    }, "\n") .. "\n", h.url("/site/p/4.html"))
    assert.equal(0, code)
    assert.matches('\ntrue\n"Page 4"\ntrue\n$', out)
  end)
end)

describe("luacrawl shell on a terminal", function()
  -- Types the lines after each prompt on a pseudo-terminal (tests/tools/pty_run.py),
  -- with the history kept under state; returns the exit status and what it showed.
  local function session(state, lines, url)
    local input = write_file(table.concat(lines, "\n") .. "\n")
    return h.sh(("XDG_STATE_HOME='%s' python3 '%s/tests/tools/pty_run.py' 'lc> ' '%s' -- %s shell %s")
      :format(state, h.source_dir, input, bin, url and ("'" .. url .. "'") or ""))
  end

  it("greets, edits lines and answers help", function()
    local code, out = session(h.tmpname(), { "help", "6*7", "exit()" })
    assert.equal(0, code)
    assert.matches("help lists all", out)
    assert.matches("exit%(%), quit%(%)", out)
    assert.matches("\n42\r?\n", out)
  end)

  it("keeps the history between sessions in $XDG_STATE_HOME/luacrawl, its folder made", function()
    local state = h.tmpname()
    local code = session(state, { "21*2", "exit()" })
    assert.equal(0, code)
    local f = assert(io.open(state .. "/luacrawl/shell_history"))
    local saved = f:read("*a")
    f:close()
    assert.matches("21%*2", saved)
    -- Up twice in a new session: "exit()", then "21*2", run again.
    local out
    code, out = session(state, { "\\x1b[A\\x1b[A", "exit(4)" })
    assert.equal(4, code)
    assert.matches("\n42\r?\n", out)
  end)
end)
