/* lua_html.c: core.html, the C side of luacrawl.html. Documents are userdata owning an
 * xmlDoc (freed by __gc or free()); nodes are userdata holding an xmlNode pointer
 * whose environment table anchors their document, so a document lives as long as any
 * of its nodes. After free() every use of the document or its nodes raises. XPath
 * expressions are compiled once into userdata (the Lua side caches them) and
 * evaluated with one XPath context per document; CSS selectors likewise, through
 * html_select.c. Each css or xpath call may take a number of steps (lc.html.limits). */
#include "html.h"
#include "html_charset.h"
#include "lua_body.h"
#include "lua_check.h"
#include "lua_links.h"
#include "html_select.h"
#include "lua_libs.h"

#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char DOC_MT[] = "luacrawl.html.doc";
static const char NODE_MT[] = "luacrawl.html.node";
static const char XPATH_MT[] = "luacrawl.html.xpath";
static const char SELECT_MT[] = "luacrawl.html.select";

/* The steps one css or xpath call may take (0: no limit), per state, and how many the
 * last call took. A runaway selector or expression raises instead of holding the
 * loop: libxml2 cannot be interrupted otherwise. */
#define XPATH_STEPS_DEFAULT 20000000ul

struct xpath_limits {
    unsigned long steps, last;
};

typedef struct ldoc {
    xmlDocPtr doc; /* NULL once freed */
    xmlXPathContextPtr xpath;
    struct xpath_limits *limits; /* the state's */
    char *url;
    const char *encoding;
    size_t external;     /* the estimated size of the tree */
    size_t *outstanding; /* the sum of the estimates of the trees alive (see gc_debt) */
} ldoc_t;

typedef struct lnode {
    xmlNodePtr node;
    ldoc_t *doc;
} lnode_t;

typedef struct lxpath {
    xmlXPathCompExprPtr comp;
    char expr[];
} lxpath_t;

typedef struct lselect {
    select_prog_t *prog;
    char sel[];
} lselect_t;

static void doc_release(ldoc_t *d)
{
    if (d->outstanding) *d->outstanding -= d->external;
    d->external = 0;
    if (d->xpath) xmlXPathFreeContext(d->xpath);
    if (d->doc) xmlFreeDoc(d->doc);
    free(d->url);
    d->xpath = NULL;
    d->doc = NULL;
    d->url = NULL;
}

static ldoc_t *check_doc(lua_State *L, int idx)
{
    ldoc_t *d = luaL_checkudata(L, idx, DOC_MT);
    if (!d->doc) luaL_error(L, "html: the document was freed");
    return d;
}

/* A document or a node at idx: its xmlNode (the xmlDoc for a document). */
static xmlNodePtr check_context(lua_State *L, int idx, ldoc_t **doc)
{
    void *p = lua_touserdata(L, idx);
    if (p && lua_getmetatable(L, idx)) {
        lc_getmetatable(L, NODE_MT);
        lc_getmetatable(L, DOC_MT);
        int is_node = lua_rawequal(L, -3, -2), is_doc = lua_rawequal(L, -3, -1);
        lua_pop(L, 3);
        if (is_node) {
            lnode_t *n = p;
            if (!n->doc->doc) luaL_error(L, "html: the node's document was freed");
            *doc = n->doc;
            return n->node;
        }
        if (is_doc) {
            *doc = check_doc(L, idx);
            return (xmlNodePtr)(*doc)->doc;
        }
    }
    luaL_typerror(L, idx, "html document or node");
    return NULL;
}

static xmlNodePtr check_element(lua_State *L, int idx)
{
    ldoc_t *d;
    xmlNodePtr n = check_context(L, idx, &d);
    if (n->type != XML_ELEMENT_NODE) luaL_argerror(L, idx, "an element expected");
    return n;
}

/* Push a node of the document whose node or document userdata is at idx. */
static void push_node(lua_State *L, int idx, ldoc_t *d, xmlNodePtr node)
{
    lnode_t *n = lua_newuserdata(L, sizeof(*n));
    n->node = node;
    n->doc = d;
    lc_getmetatable(L, NODE_MT);
    lua_setmetatable(L, -2);
    lua_getfenv(L, idx); /* the document's anchor table, shared by all its nodes */
    lua_setfenv(L, -2);
}

/* The collector only sees the Lua heap, where a document is a small userdata while
 * its tree takes about ten times the body's size in malloc'd memory: left alone, a
 * loop that drops its documents without free() grows by hundreds of megabytes before
 * a cycle runs. So the trees alive are estimated (eight times their bodies), and
 * while that estimate is above EXTERNAL_SLACK and above the Lua heap itself, each
 * parse makes the collector do the work its tree would have caused had it been
 * allocated by Lua. With free() after use the estimate stays low and costs nothing. */
#define EXTERNAL_SLACK (64u << 20)

static void gc_debt(lua_State *L, ldoc_t *d, size_t body_len)
{
    d->external = body_len * 8;
    *d->outstanding += d->external;
    if (*d->outstanding < EXTERNAL_SLACK) return;
    size_t heap = (size_t)lua_gc(L, LUA_GCCOUNT, 0) << 10;
    size_t kb = d->external >> 10;
    if (*d->outstanding > heap && kb > 0) lua_gc(L, LUA_GCSTEP, kb > INT_MAX ? INT_MAX : (int)kb);
}

/* core.html.parse(body, url, charset) -> doc */
static int l_html_parse(lua_State *L)
{
    size_t len;
    const char *body = lc_checkbytes(L, 1, &len);
    const char *url = luaL_optstring(L, 2, NULL);
    const char *charset = luaL_optstring(L, 3, NULL);
    ldoc_t *d = lua_newuserdata(L, sizeof(*d));
    memset(d, 0, sizeof(*d));
    lc_getmetatable(L, DOC_MT);
    lua_getfield(L, -1, "__external");
    d->outstanding = lua_touserdata(L, -1);
    lua_getfield(L, -2, "__limits");
    d->limits = lua_touserdata(L, -1);
    lua_pop(L, 2);
    lua_setmetatable(L, -2);
    lua_createtable(L, 1, 0); /* the anchor: nodes hold it, it holds the document */
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, 1);
    lua_setfenv(L, -2);
    if (url && !(d->url = strdup(url))) return luaL_error(L, "html: out of memory");
    d->doc = html_parse(body, len, charset, &d->encoding);
    if (!d->doc) return luaL_error(L, "html: out of memory parsing the document");
    gc_debt(L, d, len);
    return 1;
}

/* core.html.encoding(label) -> WHATWG encoding name, or nil for an unknown label */
static int l_html_encoding(lua_State *L)
{
    size_t len;
    const char *label = luaL_checklstring(L, 1, &len);
    lua_pushstring(L, html_encoding_label(label, len));
    return 1;
}

/* core.html.info(doc) -> encoding, url (nothing once freed) */
static int l_html_info(lua_State *L)
{
    ldoc_t *d = luaL_checkudata(L, 1, DOC_MT);
    if (!d->doc) return 0;
    lua_pushstring(L, d->encoding);
    lua_pushstring(L, d->url);
    return 2;
}

static int l_html_free(lua_State *L)
{
    doc_release(luaL_checkudata(L, 1, DOC_MT));
    return 0;
}

/* XPath ------------------------------------------------------------------------ */

/* libxml2 keeps its XPath messages in a private table; these are its texts, indexed
 * by error code - XML_XPATH_EXPRESSION_OK. */
static const char *const xpath_messages[] = {
    "ok",
    "number encoding",
    "unfinished literal",
    "start of literal",
    "expected $ for variable reference",
    "undefined variable",
    "invalid predicate",
    "invalid expression",
    "missing closing curly brace",
    "unregistered function",
    "invalid operand",
    "invalid type",
    "invalid number of arguments",
    "invalid context size",
    "invalid context position",
    "memory allocation error",
    "syntax error",
    "resource error",
    "sub resource error",
    "undefined namespace prefix",
    "encoding error",
    "char out of XML range",
    "invalid or incomplete context",
    "stack usage error",
    "forbidden variable",
    "operation limit exceeded",
    "recursion limit exceeded",
};

/* XPath errors are recorded in the context's lastError; this only keeps libxml2 from
 * printing them. */
static void quiet(void *ctx, xmlErrorPtr err)
{
    (void)ctx;
    (void)err;
}

/* Raise "xpath: <what> [at position <n>] in "<expr>"" from an XPath context's last
 * error (position counted from 1). */
static int xpath_error(lua_State *L, const xmlError *err, const char *expr)
{
    int code = err->code - XML_XPATH_EXPRESSION_OK;
    const char *msg = "invalid expression";
    if (code > 0 && code < (int)(sizeof(xpath_messages) / sizeof(xpath_messages[0])))
        msg = xpath_messages[code];
    /* Like css errors, without the caller's position: the message names the place. */
    if (err->str1 && err->int1 >= 0)
        lua_pushfstring(L, "xpath: %s at position %d in \"%s\"", msg, err->int1 + 1, expr);
    else
        lua_pushfstring(L, "xpath: %s in \"%s\"", msg, expr);
    return lua_error(L);
}

/* A few XPath failures ("function not found") are also printed through libxml2's
 * generic error handler: mute it while we compile or evaluate, then restore whatever
 * the embedding program had. */
static void quiet_generic(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

struct muted {
    xmlGenericErrorFunc func;
    void *ctx;
};

static struct muted mute(void)
{
    struct muted m = {xmlGenericError, xmlGenericErrorContext};
    xmlSetGenericErrorFunc(NULL, quiet_generic);
    return m;
}

static void unmute(struct muted m)
{
    xmlSetGenericErrorFunc(m.ctx, m.func);
}

static int l_html_xpath_gc(lua_State *L)
{
    lxpath_t *x = luaL_checkudata(L, 1, XPATH_MT);
    if (x->comp) xmlXPathFreeCompExpr(x->comp);
    x->comp = NULL;
    return 0;
}

/* libxml2 2.9 compiles an expression without '(', '[' or '@' ("//a", "/html//p")
 * to a stream pattern when it can (xmlXPathTryStreamCompile), and the stream's
 * walk never goes deeper than 10,000 levels (xmlXPathRunStreamEval): the nodes
 * below are lost without a word. Such an expression is compiled in parentheses,
 * which the stream compiler refuses: (E) has E's value, and for an E without '('
 * it is valid exactly when E is. NULL when out of memory. */
static char *unstreamable(const char *expr, int *wrapped)
{
    size_t n = strlen(expr);
    *wrapped = !strpbrk(expr, "([@");
    char *s = malloc(n + 3);
    if (!s) return NULL;
    if (!*wrapped) {
        memcpy(s, expr, n + 1);
        return s;
    }
    s[0] = '(';
    memcpy(s + 1, expr, n);
    s[n + 1] = ')';
    s[n + 2] = '\0';
    return s;
}

/* expr compiled; raises on a syntax error (naming shown, the expression or the
 * selector it was made from). */
static xmlXPathCompExprPtr compile_expr(lua_State *L, const char *expr, const char *shown)
{
    int wrapped;
    char *text = unstreamable(expr, &wrapped);
    if (!text) luaL_error(L, "xpath: out of memory");
    xmlXPathContextPtr ctx = xmlXPathNewContext(NULL);
    if (!ctx) {
        free(text);
        luaL_error(L, "xpath: out of memory");
    }
    ctx->error = quiet;
    struct muted m = mute();
    xmlXPathCompExprPtr comp = xmlXPathCtxtCompile(ctx, (const xmlChar *)text);
    unmute(m);
    free(text);
    xmlError err = ctx->lastError; /* its strings live until the context goes */
    char where[1] = "";
    if (err.str1) err.str1 = where;
    err.str2 = err.str3 = err.message = err.file = NULL;
    if (wrapped && err.int1 > 0) err.int1--; /* a position in expr, not in (expr) */
    xmlXPathFreeContext(ctx);
    if (!comp) xpath_error(L, &err, shown);
    return comp;
}

/* core.html.compile(expr) -> compiled expression; raises on a syntax error */
static int l_html_compile(lua_State *L)
{
    size_t len;
    const char *expr = luaL_checklstring(L, 1, &len);
    lxpath_t *x = lua_newuserdata(L, sizeof(*x) + len + 1);
    x->comp = NULL;
    memcpy(x->expr, expr, len + 1);
    lc_getmetatable(L, XPATH_MT);
    lua_setmetatable(L, -2);
    x->comp = compile_expr(L, expr, expr);
    return 1;
}

static int l_html_select_gc(lua_State *L)
{
    lselect_t *s = luaL_checkudata(L, 1, SELECT_MT);
    select_free(s->prog);
    s->prog = NULL;
    return 0;
}

/* A string field of the table on top of the stack, or NULL. */
static const char *opt_field(lua_State *L, const char *k)
{
    lua_getfield(L, -1, k);
    const char *v = lua_tostring(L, -1);
    lua_pop(L, 1); /* the table holds the string */
    return v;
}

/* Add the selector of the table on top of the stack (see luacrawl.css to_plan). */
static void add_selector(lua_State *L, lselect_t *s)
{
    const char *subject = opt_field(L, "subject");
    const char *tail = opt_field(L, "tail");
    const char *attr = opt_field(L, "attr");
    lua_getfield(L, -1, "deep");
    int deep = lua_toboolean(L, -1);
    lua_pop(L, 1);
    enum select_tail t = !tail                       ? SELECT_ELEMENTS
                         : strcmp(tail, "text") == 0 ? SELECT_TEXT
                                                     : SELECT_ATTR;
    if (t == SELECT_ATTR && !attr) luaL_error(L, "css: attr missing in \"%s\"", s->sel);
    xmlXPathCompExprPtr comp = subject ? compile_expr(L, subject, s->sel) : NULL;
    if (select_add(s->prog, comp, t, attr, deep) < 0) luaL_error(L, "css: out of memory");
    int n = (int)lua_objlen(L, -1);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        const char *test = opt_field(L, "test");
        const char *comb = opt_field(L, "comb");
        if (!test || !comb) luaL_error(L, "css: bad plan for \"%s\"", s->sel);
        comp = compile_expr(L, test, s->sel);
        if (select_add_left(s->prog, comp, comb[0]) < 0)
            luaL_error(L, "css: bad plan for \"%s\"", s->sel);
        lua_pop(L, 1);
    }
}

/* core.html.compile_css(plan, selector) -> compiled selector group, from the plan
 * luacrawl.css gives for it: a list of {subject=, tail=, attr=, deep=,
 * {test=, comb=}, ...}. */
static int l_html_compile_css(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t len;
    const char *sel = luaL_checklstring(L, 2, &len);
    lselect_t *s = lua_newuserdata(L, sizeof(*s) + len + 1);
    s->prog = NULL;
    memcpy(s->sel, sel, len + 1);
    lc_getmetatable(L, SELECT_MT);
    lua_setmetatable(L, -2);
    if (!(s->prog = select_new())) return luaL_error(L, "css: out of memory");
    int n = (int)lua_objlen(L, 1);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, 1, i);
        luaL_checktype(L, -1, LUA_TTABLE);
        add_selector(L, s);
        lua_pop(L, 1);
    }
    return 1;
}

/* core.html.limits([{steps = n}]) -> {steps = n, last = steps of the last call} */
static int l_html_limits(lua_State *L)
{
    lc_getmetatable(L, DOC_MT);
    lua_getfield(L, -1, "__limits");
    struct xpath_limits *lim = lua_touserdata(L, -1);
    lua_pop(L, 2);
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
        lua_getfield(L, 1, "steps");
        if (!lua_isnil(L, -1))
            lim->steps =
                (unsigned long)lc_check_integer(L, -1, "html.limits: steps", 0, LC_INT_MAX);
        lua_pop(L, 1);
    }
    lua_createtable(L, 0, 2);
    lc_set_number(L, "steps", (double)lim->steps);
    lc_set_number(L, "last", (double)lim->last);
    return 1;
}

static xmlXPathContextPtr doc_xpath(lua_State *L, ldoc_t *d)
{
    if (!d->xpath) {
        d->xpath = xmlXPathNewContext(d->doc);
        if (!d->xpath) luaL_error(L, "xpath: out of memory");
        d->xpath->error = quiet;
    }
    return d->xpath;
}

/* The string value of a non-element node (text, attribute, comment...). */
static void push_content(lua_State *L, xmlNodePtr n)
{
    if ((n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE ||
         n->type == XML_COMMENT_NODE) &&
        n->content) {
        lua_pushstring(L, (const char *)n->content);
        return;
    }
    xmlChar *c = xmlNodeGetContent(n);
    lua_pushstring(L, c ? (const char *)c : "");
    xmlFree(c);
}

/* Convert an XPath result to a list at the top of the stack: elements and documents
 * as nodes, other nodes as their string values, scalars as themselves. */
static void push_result(lua_State *L, int ctx_idx, ldoc_t *d, xmlXPathObjectPtr r, int limit)
{
    if (r->type != XPATH_NODESET) {
        lua_createtable(L, 1, 0);
        switch (r->type) {
        case XPATH_BOOLEAN:
            lua_pushboolean(L, r->boolval);
            break;
        case XPATH_NUMBER:
            lua_pushnumber(L, r->floatval);
            break;
        case XPATH_STRING:
            lua_pushstring(L, r->stringval ? (const char *)r->stringval : "");
            break;
        default:
            lua_pushnil(L);
        }
        lua_rawseti(L, -2, 1);
        return;
    }
    int n = r->nodesetval ? r->nodesetval->nodeNr : 0;
    if (limit > 0 && n > limit) n = limit;
    lua_createtable(L, n, 0);
    int k = 0;
    for (int i = 0; i < n; i++) {
        xmlNodePtr node = r->nodesetval->nodeTab[i];
        switch (node->type) {
        case XML_ELEMENT_NODE:
        case XML_DOCUMENT_NODE:
        case XML_HTML_DOCUMENT_NODE:
            push_node(L, ctx_idx, d, node);
            break;
        case XML_NAMESPACE_DECL:
            continue;
        default:
            push_content(L, node);
        }
        lua_rawseti(L, -2, ++k);
    }
}

/* Whether an evaluation that failed ran out of steps. libxml2 records that in
 * lastError, except when it evaluates a simple path like //a as a stream: then only
 * opCount tells. */
static int out_of_steps(const xmlXPathContext *xp)
{
    return xp->lastError.code == XML_XPATH_EXPRESSION_OK + XPATH_OP_LIMIT_EXCEEDED ||
           (xp->opLimit && xp->opCount >= xp->opLimit);
}

/* Raise "css: selector exceeded N steps in "<sel>"" (or xpath: expression ...). */
static int steps_error(lua_State *L, const ldoc_t *d, int css, const char *shown)
{
    char n[32];
    snprintf(n, sizeof(n), "%lu", d->limits->steps);
    lua_pushfstring(L, "%s exceeded %s steps in \"%s\"",
                    css ? "css: selector" : "xpath: expression", n, shown);
    return lua_error(L);
}

/* A compiled selector group on d's context: its matches as an XPath result. */
static xmlXPathObjectPtr select_css(lua_State *L, ldoc_t *d, xmlXPathContextPtr xp,
                                    const lselect_t *s, xmlNodePtr ctx, int limit)
{
    enum select_error err;
    struct muted m = mute();
    xmlNodeSetPtr set = select_eval(s->prog, xp, ctx, limit, &err);
    unmute(m);
    d->limits->last = xp->opCount;
    xmlXPathObjectPtr r = set ? xmlXPathWrapNodeSet(set) : NULL;
    if (r) return r;
    if (set) xmlXPathFreeNodeSet(set);
    if (err == SELECT_ERR_STEPS || (err == SELECT_ERR_XPATH && out_of_steps(xp)))
        steps_error(L, d, 1, s->sel);
    if (err == SELECT_ERR_XPATH) xpath_error(L, &xp->lastError, s->sel);
    luaL_error(L, "css: out of memory");
    return NULL;
}

/* core.html.select(doc_or_node, compiled[, limit]) -> list; compiled is an XPath
 * expression or a CSS selector group */
static int l_html_select(lua_State *L)
{
    ldoc_t *d;
    xmlNodePtr ctx = check_context(L, 1, &d);
    lselect_t *s = lc_toudata_either(L, 2, SELECT_MT, NULL);
    lxpath_t *x = s ? NULL : luaL_checkudata(L, 2, XPATH_MT);
    int limit = (int)lc_opt_integer(L, 3, "select: the limit", 0, 0, INT_MAX);
    xmlXPathContextPtr xp = doc_xpath(L, d);
    xp->opLimit = d->limits->steps;
    xp->opCount = 0;
    xmlResetError(&xp->lastError);
    xmlXPathObjectPtr r;
    if (s) {
        r = select_css(L, d, xp, s, ctx, limit);
    } else {
        xp->node = ctx;
        xp->contextSize = xp->proximityPosition = 1;
        struct muted m = mute();
        r = xmlXPathCompiledEval(x->comp, xp);
        unmute(m);
        xp->node = NULL;
        d->limits->last = xp->opCount;
        if (!r && out_of_steps(xp)) return steps_error(L, d, 0, x->expr);
        if (!r) return xpath_error(L, &xp->lastError, x->expr);
    }
    push_result(L, 1, d, r, limit);
    xmlXPathFreeObject(r);
    return 1;
}

/* Nodes ------------------------------------------------------------------------ */

static void push_malloced(lua_State *L, char *s, size_t len)
{
    if (!s) luaL_error(L, "html: out of memory");
    lua_pushlstring(L, s, len);
    free(s);
}

/* core.html.text(doc_or_node, squash) -> string */
static int l_html_text(lua_State *L)
{
    ldoc_t *d;
    xmlNodePtr n = check_context(L, 1, &d);
    size_t len = 0;
    char *s = html_text(n, lua_toboolean(L, 2), &len);
    push_malloced(L, s, len);
    return 1;
}

/* core.html.html(doc_or_node) -> outer HTML */
static int l_html_html(lua_State *L)
{
    ldoc_t *d;
    xmlNodePtr n = check_context(L, 1, &d);
    size_t len = 0;
    char *s = html_serialize(d->doc, n, &len);
    push_malloced(L, s, len);
    return 1;
}

/* core.html.tag(doc_or_node) -> lower-case element name, or nil for a document */
static int l_html_tag(lua_State *L)
{
    ldoc_t *d;
    xmlNodePtr n = check_context(L, 1, &d);
    if (n->type != XML_ELEMENT_NODE) return 0;
    lua_pushstring(L, (const char *)n->name);
    return 1;
}

/* core.html.attr(node, name) -> value or nil */
static int l_html_attr(lua_State *L)
{
    xmlNodePtr n = check_element(L, 1);
    size_t len;
    const char *name = luaL_checklstring(L, 2, &len);
    char lname[64];
    if (len < sizeof(lname)) { /* HTML attribute names are stored in lower case */
        for (size_t i = 0; i <= len; i++)
            lname[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
        name = lname;
    }
    xmlChar *owned;
    const char *v = html_attr(n, name, &owned);
    if (!v) return 0;
    lua_pushstring(L, v);
    xmlFree(owned);
    return 1;
}

/* core.html.attrs(node) -> {name = value} */
static int l_html_attrs(lua_State *L)
{
    xmlNodePtr n = check_element(L, 1);
    lua_newtable(L);
    for (xmlAttrPtr a = n->properties; a; a = a->next) {
        xmlChar *owned;
        const char *v = html_attr(n, (const char *)a->name, &owned);
        lua_pushstring(L, v ? v : "");
        xmlFree(owned);
        lua_setfield(L, -2, (const char *)a->name);
    }
    return 1;
}

/* Documents -------------------------------------------------------------------- */

/* core.html.title(doc) -> string or nil */
static int l_html_title(lua_State *L)
{
    ldoc_t *d = check_doc(L, 1);
    size_t len = 0;
    char *s = html_title(d->doc, &len);
    if (!s) return 0;
    push_malloced(L, s, len);
    return 1;
}

/* core.html.links(doc, flags, detail, prefix, seen) -> {url, ...} or
 * {{url=, text=, nofollow=, tag=}, ...}; flags: 1 <link>, 2 frames, 4 <img> */
static int l_html_links(lua_State *L)
{
    ldoc_t *d = check_doc(L, 1);
    int detail = lua_toboolean(L, 3);
    html_links_t links;
    struct link_filter f = lc_link_filter(L, 4);
    int rc = html_links(d->doc, d->url, lc_link_flags(L, 2, detail), &links);
    return lc_push_links(L, &links, rc, detail, &f);
}

/* Metatables --------------------------------------------------------------------- */

static int l_html_doc_gc(lua_State *L)
{
    doc_release(luaL_checkudata(L, 1, DOC_MT));
    return 0;
}

static int l_html_doc_tostring(lua_State *L)
{
    ldoc_t *d = luaL_checkudata(L, 1, DOC_MT);
    if (!d->doc)
        lua_pushliteral(L, "html.doc (freed)");
    else
        lua_pushfstring(L, "html.doc (%s)", d->url ? d->url : "no URL");
    return 1;
}

static int l_html_node_eq(lua_State *L)
{
    lnode_t *a = luaL_checkudata(L, 1, NODE_MT), *b = luaL_checkudata(L, 2, NODE_MT);
    lua_pushboolean(L, a->node == b->node && a->doc == b->doc);
    return 1;
}

static int l_html_node_tostring(lua_State *L)
{
    lnode_t *n = luaL_checkudata(L, 1, NODE_MT);
    if (!n->doc->doc)
        lua_pushliteral(L, "html.node (document freed)");
    else if (n->node->type == XML_ELEMENT_NODE)
        lua_pushfstring(L, "html.node <%s>", (const char *)n->node->name);
    else
        lua_pushliteral(L, "html.node (document)");
    return 1;
}

/* core.html.metatables() -> doc_mt, node_mt, linkset_mt, spent linkset_mt (the Lua
 * side adds __index to the first two) */
static int l_html_metatables(lua_State *L)
{
    lc_getmetatable(L, DOC_MT);
    lc_getmetatable(L, NODE_MT);
    lc_getmetatable(L, LC_LINKSET_MT);
    lc_getmetatable(L, LC_LINKSET_SPENT_MT);
    return 4;
}

static const luaL_Reg html_funcs[] = {
    {"parse", l_html_parse},
    {"info", l_html_info},
    {"free", l_html_free},
    {"compile", l_html_compile},
    {"compile_css", l_html_compile_css},
    {"limits", l_html_limits},
    {"select", l_html_select},
    {"text", l_html_text},
    {"html", l_html_html},
    {"tag", l_html_tag},
    {"attr", l_html_attr},
    {"attrs", l_html_attrs},
    {"title", l_html_title},
    {"links", l_html_links},
    {"encoding", l_html_encoding},
    {"metatables", l_html_metatables},
    {NULL, NULL},
};

/* libxml2 2.9 asks for one xmlInitParser before threads parse; it is never undone
 * (xmlCleanupParser would pull the library from under engines still alive). */
static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

void lc_register_html(lua_State *L)
{
    static const luaL_Reg doc_meta[] = {
        {"__gc", l_html_doc_gc}, {"__tostring", l_html_doc_tostring}, {NULL, NULL}};
    static const luaL_Reg node_meta[] = {
        {"__eq", l_html_node_eq}, {"__tostring", l_html_node_tostring}, {NULL, NULL}};
    static const luaL_Reg xpath_meta[] = {{"__gc", l_html_xpath_gc}, {NULL, NULL}};
    static const luaL_Reg select_meta[] = {{"__gc", l_html_select_gc}, {NULL, NULL}};
    pthread_once(&xml_once, xmlInitParser);
    lc_class(L, DOC_MT, doc_meta, NULL);
    /* The counter gc_debt keeps; freed with the state, after the last document. */
    lc_getmetatable(L, DOC_MT);
    size_t *outstanding = lua_newuserdata(L, sizeof(*outstanding));
    *outstanding = 0;
    lua_setfield(L, -2, "__external");
    /* The state's XPath limits (l_html_limits), reached the same way. */
    struct xpath_limits *lim = lua_newuserdata(L, sizeof(*lim));
    lim->steps = XPATH_STEPS_DEFAULT;
    lim->last = 0;
    lua_setfield(L, -2, "__limits");
    lua_pop(L, 1);
    lc_class(L, NODE_MT, node_meta, NULL);
    lc_class(L, XPATH_MT, xpath_meta, NULL);
    lc_class(L, SELECT_MT, select_meta, NULL);
    lua_newtable(L);      /* [core, state, html] */
    lua_pushvalue(L, -2); /* [core, state, html, state] */
    lc_setfuncs(L, html_funcs);
    lua_pop(L, 1);
    lua_setfield(L, -3, "html");
}
