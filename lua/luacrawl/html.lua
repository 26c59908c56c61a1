-- luacrawl.html: HTML documents for crawl scripts (lc.html), on libxml2 (core.html).
--
-- API
--   html.parse(body [, {url=, charset=}]) -> doc
--       Never fails on malformed markup. Decoding follows the HTML spec: a byte order
--       mark wins, then `charset` (the HTTP one), then a <meta> in the first 1024
--       bytes, then one later in the page, else windows-1252. doc.encoding names what was used; doc.url is `url`.
--   res:html() -> doc         for a fetch response: parsed once with res.url and the
--                             charset of res.headers["content-type"], then cached;
--                             the tree is built on first need; doc:links() and
--                             doc:title() before that take one tree-free pass
--   doc:css(sel) -> {...}     matches of a CSS selector (see luacrawl.css): nodes, or
--                             strings for sel::text and sel::attr(name)
--   doc:css1(sel) -> first match or nil
--   doc:xpath(expr) -> {...}  nodes; strings for text, attribute and comment nodes;
--                             a number, string or boolean result as a one-item list
--   doc:xpath1(expr) -> first item or nil
--   doc:links([opts]) -> {url, ...}
--       Absolute, normalized http(s) URLs of <a href> and <area href> and of
--       <meta http-equiv=refresh> targets, each once, in document order, fragments
--       dropped; resolved against the first <base href>, else doc.url (without a URL
--       only absolute links are kept). javascript:, mailto:, data:, tel: and other
--       schemes are skipped. opts: link=true adds <link href>, frames=true <iframe src>
--       and <frame src>, img=true <img src>; detail=true returns
--       {url=, text=, nofollow=, tag=} tables instead of strings (text: the link's
--       squashed text, or alt for area and img; nofollow: every occurrence of the URL
--       has rel=nofollow). prefix="http://host/" keeps only links starting with it;
--       unseen=set (an lc.seen()) keeps only links the set did not hold, and adds
--       them to it: a crawler's "new links on this site" in one call, with no Lua
--       string made for the others.
--   html.links(body [, opts]) -> as doc:links(opts), from the body alone: one pass of
--       a tokenizer that finds the link-carrying tags as libxml2 would (html_scan.c;
--       libxml2's SAX parser where it is not sure), building no tree: several times
--       faster than parse + links. opts also takes url= and charset= as for parse.
--   html.limits([{steps = n}]) -> {steps = n, last = m}
--       The work one doc:css() or doc:xpath() call may do, in steps (libxml2's XPath
--       operations and the selector engine's node visits; 20,000,000 by default, 0
--       for none), for this Lua state; past it the call raises "css: selector exceeded
--       N steps in ..." ("xpath: expression ..."). last: the steps the last call took.
--   html.encoding(label) -> the WHATWG name of an encoding label, or nil
--   html.charset(content_type) -> the charset parameter of a Content-Type, or nil
--   doc:title() -> string or nil   the first <title>, whitespace squashed
--   doc:text([opts]), doc:html()   as for nodes, for the whole document
--   doc:root() -> the root element (<html>) or nil
--   doc:free()                     release the tree now (it is also freed when the
--                                  doc is collected); the doc and its nodes raise after
--   node.tag                       lower-case element name
--   node:css(sel), node:css1(sel), node:xpath(expr), node:xpath1(expr)
--                                  relative to the node: css matches its descendants
--                                  (as querySelectorAll); xpath is evaluated with the
--                                  node as context ("//p" still means the whole
--                                  document, ".//p" the node's)
--   node:text([opts]) -> string    all the text inside, whitespace as in the document;
--                                  opts.squash (or `true`) collapses whitespace runs to
--                                  one space and trims
--   node:attr(name) -> string or nil, node:attrs() -> {name = value}
--   node:html() -> outer HTML
--
-- Memory: a document's tree lives outside the Lua heap, so the collector does not
-- feel its size; a loop parsing many large pages may call doc:free() when done.

local core = require "luacrawl.core"
local css = require "luacrawl.css"

local h = core.html
local type, error, setmetatable, getmetatable, rawget = type, error, setmetatable, getmetatable, rawget
local select_, compile, compile_css, text, info = h.select, h.compile, h.compile_css, h.text, h.info

local M = {}

local Doc, Node = {}, {}
M.Doc, M.Node = Doc, Node

local DocMT, NodeMT, LinkSetMT, SpentLinkSetMT = h.metatables()

-- Whether v is a link set: a page's links kept in C (Response:html():link_set()),
-- or one whose links were freed (then empty).
function M.is_link_set(v)
  local mt = getmetatable(v)
  return mt == LinkSetMT or (mt ~= nil and mt == SpentLinkSetMT)
end

DocMT.__index = function(doc, k)
  local m = Doc[k]
  if m ~= nil then return m end
  if k == "encoding" then return (info(doc)) end
  if k == "url" then return (select(2, info(doc))) end
end

local tag = h.tag
NodeMT.__index = function(node, k)
  if k == "tag" then return tag(node) end
  return Node[k]
end

-- Compiled XPath expressions, by source; bounded like css.to_xpath's cache.
local CACHE_MAX = 512
local compiled, ncompiled = {}, 0

local function xpath_of(expr)
  local c = compiled[expr]
  if c then return c end
  if type(expr) ~= "string" then error("xpath: expression must be a string", 3) end
  c = compile(expr)
  if ncompiled >= CACHE_MAX then compiled, ncompiled = {}, 0 end
  compiled[expr] = c
  ncompiled = ncompiled + 1
  return c
end

local css_compiled, ncss = {}, 0

-- A selector as luacrawl.css plans it, for the engine's walk (engine/html_select.c).
local function css_of(sel)
  local c = css_compiled[sel]
  if c then return c end
  c = compile_css(css.to_plan(sel), sel)
  if ncss >= CACHE_MAX then css_compiled, ncss = {}, 0 end
  css_compiled[sel] = c
  ncss = ncss + 1
  return c
end

-- Methods shared by documents and nodes.
local function css_all(self, sel)
  return select_(self, css_of(sel))
end

local function css_first(self, sel)
  return select_(self, css_of(sel), 1)[1]
end

local function xpath_all(self, expr)
  return select_(self, xpath_of(expr))
end

local function xpath_first(self, expr)
  return select_(self, xpath_of(expr), 1)[1]
end

local function text_of(self, opts)
  local squash = opts == true or (type(opts) == "table" and opts.squash)
  return text(self, squash)
end

for _, t in ipairs({ Doc, Node }) do
  t.css, t.css1, t.xpath, t.xpath1 = css_all, css_first, xpath_all, xpath_first
  t.text, t.html = text_of, h.html
end

Node.attr, Node.attrs = h.attr, h.attrs

local LINK, FRAMES, IMG = 1, 2, 4

-- flags, detail, prefix, unseen from links() options.
local function link_options(opts)
  local flags = 0
  if opts == nil then return flags, false end
  if type(opts) ~= "table" then error("links: options must be a table", 3) end
  if opts.link then flags = flags + LINK end
  if opts.frames then flags = flags + FRAMES end
  if opts.img then flags = flags + IMG end
  local prefix = opts.prefix
  if prefix ~= nil and type(prefix) ~= "string" then error("links: prefix must be a string", 3) end
  return flags, opts.detail and true or false, prefix, opts.unseen
end

function Doc:links(opts)
  return h.links(self, link_options(opts))
end

-- The links of a body without building its tree (the fast scan of html_scan.c, many
-- times faster than parse + links): for crawlers that want nothing else from a page.
function M.links(body, opts)
  if type(body) ~= "string" then
    error("html.links: body must be a string, got " .. type(body), 2)
  end
  local flags, detail, prefix, unseen = link_options(opts)
  return (h.scan(body, opts and opts.url, opts and opts.charset, flags, detail, prefix, unseen))
end

Doc.title = h.title
Doc.free = h.free

function Doc:root()
  return self:xpath1("/*")
end

function M.parse(body, opts)
  if type(body) ~= "string" then
    error("html.parse: body must be a string, got " .. type(body), 2)
  end
  local url, charset
  if opts ~= nil then
    if type(opts) ~= "table" then error("html.parse: options must be a table", 2) end
    url, charset = opts.url, opts.charset
  end
  return h.parse(body, url, charset)
end

-- The WHATWG name of an encoding label ("latin1" -> "windows-1252"), or nil.
M.encoding = h.encoding

-- The steps one css or xpath call may take: lc.html.limits{steps = n} (0: none);
-- returns {steps =, last = the steps the last call took}.
M.limits = h.limits

-- The charset parameter of a Content-Type value, or nil.
function M.charset(content_type)
  -- Most have no parameter at all: no copy, no pattern for them.
  if type(content_type) ~= "string" or not content_type:find(";", 1, true) then return nil end
  return content_type:lower():match(';%s*charset%s*=%s*"?([^";%s]+)')
end

-- Response:html(): a document for the response, cached on it (res._html). The tree
-- is built only when something needs it (css, xpath, nodes...): doc:links() and
-- doc:title() on a document whose tree was never needed come from the tree-free
-- scan of html.links (many times faster), whose links stay in C as a link set until
-- a list is asked for; a crawler that only wants links never builds a tree.
local Response = core.Response
if Response then
  local header_of = core.header_of
  local Lazy = {}
  local LazyMT = {}

  -- The tree, parsed now if it never was (or was freed since).
  local function tree(lazy)
    local doc = rawget(lazy, "_doc")
    if not doc or info(doc) == nil then
      doc = h.parse(rawget(lazy, "_body"), rawget(lazy, "_url"), rawget(lazy, "_charset"))
      lazy._doc = doc
    end
    return doc
  end

  for name, fn in pairs(Doc) do
    Lazy[name] = function(self, ...) return fn(tree(self), ...) end
  end

  -- One tree-free pass for the default links and the title, remembered: a crawler
  -- recording each page's title and following its links parses it once. Both stay
  -- in C (a link set) until asked for: a list of the links, the title as a string.
  local scan_set, set_links, set_title = h.scan_set, h.set_links, h.set_title
  -- A document's _set is false until the scan, then the link set; its _title false
  -- until read, then the title, or true when the page has none.
  local function set_of(lazy)
    local set = rawget(lazy, "_set")
    if not set then
      set = scan_set(rawget(lazy, "_body"), rawget(lazy, "_url"), rawget(lazy, "_charset"))
      lazy._set = set
    end
    return set
  end

  function Lazy:links(opts)
    local doc = rawget(self, "_doc")
    if doc and info(doc) ~= nil then return doc:links(opts) end
    if opts == nil then return set_links(set_of(self)) end
    local flags, detail, prefix, unseen = link_options(opts)
    -- The default links, filtered: from the set (kept for the next call).
    if flags == 0 and not detail then return set_links(set_of(self), prefix, unseen) end
    local links, title = h.scan(rawget(self, "_body"), rawget(self, "_url"), rawget(self, "_charset"),
      flags, detail, prefix, unseen)
    if not rawget(self, "_title") then self._title = title or true end
    return links
  end

  -- The default links as a link set, for the crawl's filter (crawl.lua), or nil once a
  -- tree exists.
  function Lazy:link_set()
    local doc = rawget(self, "_doc")
    if doc and info(doc) ~= nil then return nil end
    return set_of(self)
  end

  function Lazy:title()
    local doc = rawget(self, "_doc")
    if doc and info(doc) ~= nil then return doc:title() end
    local title = rawget(self, "_title")
    if not title then
      title = set_title(set_of(self)) or true
      self._title = title
    end
    if title == true then return nil end
    return title
  end

  LazyMT.__index = function(self, k)
    local m = Lazy[k]
    if m ~= nil then return m end
    return tree(self)[k] -- encoding, url
  end
  LazyMT.__tostring = function(self) return tostring(tree(self)) end

  function Response:html()
    local doc = rawget(self, "_html")
    if doc == nil then
      -- _set and _title are there from the start (false: not read yet): keys added
      -- later would make the table grow, a rehash for nearly every page. A nil
      -- field in the constructor would not do: its slot holds a key with no value,
      -- which a new key cannot take.
      doc = setmetatable({
        _body = rawget(self, "body") or rawget(self, "_body") or "", _url = self.url,
        -- A rendered response's body is UTF-8 whatever its headers say (its _charset).
        _charset = rawget(self, "_charset") or M.charset(header_of(self, "content-type")),
        _set = false, _title = false,
      }, LazyMT)
      rawset(self, "_html", doc)
    end
    return doc
  end

  -- res:release() also frees the document: its tree and the links kept in C.
  local release_body, set_free = Response.release, h.set_free
  function Response:release()
    local doc = rawget(self, "_html")
    if doc ~= nil then
      local set, tree_doc = rawget(doc, "_set"), rawget(doc, "_doc")
      if set then set_free(set) end
      if tree_doc then tree_doc:free() end
      rawset(self, "_html", nil)
    end
    return release_body(self)
  end
end

return M
