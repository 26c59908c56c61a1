/* html_select.h: CSS selectors evaluated over libxml2 trees in time linear in the tree.
 * luacrawl.css compiles each compound of a selector to an XPath test of one element
 * ("self::div[...]"); this module walks the tree and the combinators itself,
 * visiting each node a bounded number of times per compound. libxml2 cannot be
 * asked to: nested ancestor:: predicates re-examine every ancestor for every
 * candidate; forward steps from nested nodes merge node sets with a duplicate check
 * against every node already found (both grow with the depth of nesting to the
 * power of the number of combinators); and sorting a node set compares nested nodes
 * by walking up to their common ancestor (the square of the depth, uncounted).
 *
 * Work is counted in the XPath context's steps: libxml2 counts its own operations in
 * xp->opCount while xp->opLimit is set, and the walks here add one a node visited;
 * past opLimit the evaluation stops with SELECT_ERR_STEPS. Knows nothing of Lua. */
#ifndef LUACRAWL_HTML_SELECT_H
#define LUACRAWL_HTML_SELECT_H

#include <libxml/xpath.h>

typedef struct select_prog select_prog_t;

/* What a selector gives for each element it matches. */
enum select_tail {
    SELECT_ELEMENTS, /* the element */
    SELECT_TEXT,     /* its text children (deep: every text node inside it) */
    SELECT_ATTR,     /* its attribute (deep: that of every element inside, itself too) */
};

enum select_error {
    SELECT_OK,
    SELECT_ERR_MEMORY,
    SELECT_ERR_XPATH, /* xp->lastError tells (XPATH_OP_LIMIT_EXCEEDED: the steps) */
    SELECT_ERR_STEPS, /* the walks here went past xp->opLimit */
};

/* An empty group; NULL when out of memory. */
select_prog_t *select_new(void);

/* Free a group and the compiled expressions given to it. */
void select_free(select_prog_t *p);

/* Add a selector to the group. subject tests an element for the selector's last
 * compound, with the element as the context node (NULL: the selector is a bare
 * "::text" or "::attr()", of the context node itself); attr is the attribute name
 * for SELECT_ATTR (copied). The group owns subject from this call on, even when it
 * fails. -1 when out of memory. */
int select_add(select_prog_t *p, xmlXPathCompExprPtr subject, enum select_tail tail,
               const char *attr, int deep);

/* Add a compound to the left of the last selector added, from left to right: test
 * as for the subject; comb (' ', '>', '+' or '~') joins it to the next compound to
 * its right (the subject after the last one). The group owns test from this call
 * on. -1 when out of memory or comb is not a combinator. */
int select_add_left(select_prog_t *p, xmlXPathCompExprPtr test, int comb);

/* The matches of the group among the descendants of ctx (ctx itself for a bare
 * pseudo-element), each once, in document order: elements, text and attribute nodes
 * of ctx's document. At most limit of them when limit > 0. NULL on failure, with
 * *err set. Free the set with xmlXPathFreeNodeSet. xp is the document's XPath
 * context; its opCount is added to, not reset. */
xmlNodeSetPtr select_eval(const select_prog_t *p, xmlXPathContextPtr xp, xmlNodePtr ctx, int limit,
                          enum select_error *err);

#endif
