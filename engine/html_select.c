/* html_select.c: CSS combinators walked over libxml2 trees (see html_select.h). A selector
 * c1 b1 c2 ... ck is evaluated as sets, not candidate by candidate:
 *   1. right to left, the candidates: R(k) is the context's descendants that pass
 *      the subject's test; R(j) is every node b(j) relates to some node of R(j+1)
 *      (its ancestors for ' ', its parent for '>', its previous element sibling for
 *      '+', all its previous element siblings for '~') that passes compound j's;
 *   2. left to right, the matches: a node of R(j+1) matches when b(j) relates it to a
 *      match of R(j). For ' ' and '~' "some ancestor (earlier sibling) matches" is
 *      remembered per node, so each chain of ancestors or siblings is walked once.
 * Every walk in step 1 stops at a node it has already collected, so each node is
 * visited a bounded number of times per compound. The matches are then emitted by
 * one walk of the context's subtree in document order. */
#include "html_select.h"

#include <libxml/xpathInternals.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct left {
    xmlXPathCompExprPtr test;
    int comb;
};

struct selector {
    xmlXPathCompExprPtr subject;
    enum select_tail tail;
    char *attr;
    int deep;
    struct left *left;
    int nleft, capleft;
};

struct select_prog {
    struct selector *v;
    int n, cap;
};

/* Node sets keyed by pointer ------------------------------------------------------ */

/* Open addressing, linear probing; a value byte per node. */
typedef struct nset {
    const void **keys;
    unsigned char *vals;
    size_t cap, n; /* cap is a power of two, or 0 */
} nset_t;

static size_t hash_ptr(const void *p, size_t mask)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & mask;
}

static void nset_free(nset_t *s)
{
    free(s->keys);
    free(s->vals);
    memset(s, 0, sizeof(*s));
}

static int nset_grow(nset_t *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    const void **keys = calloc(cap, sizeof(*keys));
    unsigned char *vals = malloc(cap);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->keys[i]) continue;
        size_t j = hash_ptr(s->keys[i], cap - 1);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = s->keys[i];
        vals[j] = s->vals[i];
    }
    free(s->keys);
    free(s->vals);
    s->keys = keys;
    s->vals = vals;
    s->cap = cap;
    return 0;
}

/* The value of k, or -1 when k is not in s. */
static int nset_get(const nset_t *s, const void *k)
{
    if (!s->cap) return -1;
    for (size_t i = hash_ptr(k, s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->keys[i] == k) return s->vals[i];
        if (!s->keys[i]) return -1;
    }
}

/* Add k with value v: 1 if added, 0 if it was there (its value unchanged), -1 when
 * out of memory. */
static int nset_put(nset_t *s, const void *k, unsigned char v)
{
    if ((s->n + 1) * 2 > s->cap && nset_grow(s) < 0) return -1;
    size_t i = hash_ptr(k, s->cap - 1);
    for (; s->keys[i]; i = (i + 1) & (s->cap - 1))
        if (s->keys[i] == k) return 0;
    s->keys[i] = k;
    s->vals[i] = v;
    s->n++;
    return 1;
}

/* Building a group --------------------------------------------------------------- */

select_prog_t *select_new(void)
{
    return calloc(1, sizeof(select_prog_t));
}

void select_free(select_prog_t *p)
{
    if (!p) return;
    for (int i = 0; i < p->n; i++) {
        struct selector *s = &p->v[i];
        if (s->subject) xmlXPathFreeCompExpr(s->subject);
        for (int j = 0; j < s->nleft; j++)
            xmlXPathFreeCompExpr(s->left[j].test);
        free(s->left);
        free(s->attr);
    }
    free(p->v);
    free(p);
}

int select_add(select_prog_t *p, xmlXPathCompExprPtr subject, enum select_tail tail,
               const char *attr, int deep)
{
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 2;
        struct selector *v = realloc(p->v, (size_t)cap * sizeof(*v));
        if (!v) goto fail;
        p->v = v;
        p->cap = cap;
    }
    char *name = NULL;
    if (attr && !(name = strdup(attr))) goto fail;
    struct selector *s = &p->v[p->n++];
    memset(s, 0, sizeof(*s));
    s->subject = subject;
    s->tail = tail;
    s->attr = name;
    s->deep = deep;
    return 0;
fail:
    if (subject) xmlXPathFreeCompExpr(subject);
    return -1;
}

int select_add_left(select_prog_t *p, xmlXPathCompExprPtr test, int comb)
{
    struct selector *s = p->n ? &p->v[p->n - 1] : NULL;
    if (!s || !s->subject || (comb != ' ' && comb != '>' && comb != '+' && comb != '~')) goto fail;
    if (s->nleft == s->capleft) {
        int cap = s->capleft ? s->capleft * 2 : 4;
        struct left *v = realloc(s->left, (size_t)cap * sizeof(*v));
        if (!v) goto fail;
        s->left = v;
        s->capleft = cap;
    }
    s->left[s->nleft].test = test;
    s->left[s->nleft].comb = comb;
    s->nleft++;
    return 0;
fail:
    xmlXPathFreeCompExpr(test);
    return -1;
}

/* Evaluation ------------------------------------------------------------------------ */

struct run {
    xmlXPathContextPtr xp;
    xmlNodePtr ctx;
    enum select_error err;
};

/* Count n steps; -1 (err set) past the context's limit. libxml2 keeps opCount only
 * while opLimit is set; it is kept here either way, for the caller to read. */
static int spend(struct run *r, unsigned long n)
{
    xmlXPathContextPtr xp = r->xp;
    if (xp->opLimit && (n > xp->opLimit || xp->opCount > xp->opLimit - n)) {
        xp->opCount = xp->opLimit;
        r->err = SELECT_ERR_STEPS;
        return -1;
    }
    xp->opCount += n;
    return 0;
}

static int oom(struct run *r)
{
    r->err = SELECT_ERR_MEMORY;
    return -1;
}

/* Whether element n passes test: 1, 0, or -1 (r->err set). libxml2 counts the
 * operations of the test in the context's opCount. */
static int passes(struct run *r, xmlXPathCompExprPtr test, xmlNodePtr n)
{
    r->xp->node = n;
    r->xp->contextSize = r->xp->proximityPosition = 1;
    int ok = xmlXPathCompiledEvalToBoolean(test, r->xp);
    if (ok < 0) r->err = SELECT_ERR_XPATH;
    return ok;
}

/* Add n to set; -1 when out of memory. */
static int add(struct run *r, xmlNodeSetPtr set, xmlNodePtr n)
{
    return xmlXPathNodeSetAddUnique(set, n) < 0 ? oom(r) : 0;
}

static int is_element(const xmlNode *n)
{
    return n && n->type == XML_ELEMENT_NODE;
}

static xmlNodePtr parent_element(const xmlNode *n)
{
    return is_element(n->parent) ? n->parent : NULL;
}

static xmlNodePtr prev_element(struct run *r, const xmlNode *n)
{
    for (xmlNodePtr p = n->prev; p; p = p->prev) {
        if (spend(r, 1) < 0) return NULL;
        if (p->type == XML_ELEMENT_NODE) return p;
    }
    return NULL;
}

/* The next node in the chain a combinator walks from n (ancestors for ' ', earlier
 * siblings for '~'), or NULL at its end. */
static xmlNodePtr chain_next(struct run *r, const xmlNode *n, int comb)
{
    return comb == ' ' ? parent_element(n) : prev_element(r, n);
}

/* Add to u the nodes comb relates to y from the left: y's parent ('>'), previous
 * element sibling ('+'), ancestors (' ') or previous element siblings ('~'). A chain
 * stops at a node collected before: what lies beyond it was collected then. */
static int collect(struct run *r, xmlNodePtr y, int comb, xmlNodeSetPtr u, nset_t *seen)
{
    xmlNodePtr p = comb == '>' || comb == ' ' ? parent_element(y) : prev_element(r, y);
    while (p) {
        if (spend(r, 1) < 0) return -1;
        int added = nset_put(seen, p, 1);
        if (added < 0) return oom(r);
        if (!added) break;
        if (add(r, u, p) < 0) return -1;
        if (comb == '>' || comb == '+') break;
        p = chain_next(r, p, comb);
    }
    return r->err ? -1 : 0;
}

/* Whether comb relates y to a node of valid from the left: 1, 0, or -1 on failure.
 * For ' ' and '~', memo remembers for each node of the chain whether it or a node
 * further along is valid. */
static int linked(struct run *r, xmlNodePtr y, int comb, const nset_t *valid, nset_t *memo)
{
    if (comb == '>' || comb == '+') {
        xmlNodePtr p = comb == '>' ? parent_element(y) : prev_element(r, y);
        if (r->err) return -1;
        return p && nset_get(valid, p) >= 0;
    }
    /* Walk the chain to a valid node, a node whose answer is known, or its end;
     * then again, remembering the answer for the nodes passed. */
    int ans = 0;
    xmlNodePtr stop = NULL;
    for (xmlNodePtr p = chain_next(r, y, comb); p; p = chain_next(r, p, comb)) {
        if (spend(r, 1) < 0) return -1;
        int known = nset_get(valid, p) >= 0 ? 1 : nset_get(memo, p);
        if (known >= 0) {
            ans = known;
            stop = p;
            break;
        }
    }
    for (xmlNodePtr p = chain_next(r, y, comb); p && p != stop; p = chain_next(r, p, comb))
        if (nset_put(memo, p, (unsigned char)ans) < 0) return oom(r);
    if (r->err) return -1;
    return ans;
}

/* The elements among the context's descendants that pass test, in document order. */
static int find_subjects(struct run *r, xmlXPathCompExprPtr test, xmlNodeSetPtr out)
{
    xmlNodePtr n = r->ctx->children;
    int depth = 1;
    while (n) {
        if (spend(r, 1) < 0) return -1;
        if (n->type == XML_ELEMENT_NODE) {
            int ok = passes(r, test, n);
            if (ok < 0 || (ok && add(r, out, n) < 0)) return -1;
            if (n->children) {
                n = n->children;
                depth++;
                continue;
            }
        }
        while (!n->next && depth > 1) {
            n = n->parent;
            depth--;
        }
        n = n->next;
    }
    return 0;
}

/* The nodes of u that pass test, into a new set (NULL on failure). */
static xmlNodeSetPtr keep_passing(struct run *r, xmlNodeSetPtr u, xmlXPathCompExprPtr test)
{
    xmlNodeSetPtr out = xmlXPathNodeSetCreate(NULL);
    if (!out) {
        oom(r);
        return NULL;
    }
    for (int i = 0; i < u->nodeNr; i++) {
        int ok = passes(r, test, u->nodeTab[i]);
        if (ok < 0 || (ok && add(r, out, u->nodeTab[i]) < 0)) {
            xmlXPathFreeNodeSet(out);
            return NULL;
        }
    }
    return out;
}

/* The candidates for compound j of s: the nodes its combinator relates to those of
 * right that pass its test (NULL on failure). */
static xmlNodeSetPtr candidates(struct run *r, const struct left *l, xmlNodeSetPtr right)
{
    nset_t seen = {0};
    xmlNodeSetPtr u = xmlXPathNodeSetCreate(NULL), out = NULL;
    if (!u) {
        oom(r);
        return NULL;
    }
    for (int i = 0; i < right->nodeNr; i++)
        if (collect(r, right->nodeTab[i], l->comb, u, &seen) < 0) goto done;
    out = keep_passing(r, u, l->test);
done:
    nset_free(&seen);
    xmlXPathFreeNodeSet(u);
    return out;
}

/* The candidates for one compound (a struct, so that an array of them is not an
 * array of bare pointers). */
struct cand {
    xmlNodeSetPtr set;
};

/* The subject's matches of selector s, added to out. */
static int eval_selector(struct run *r, const struct selector *s, nset_t *out)
{
    if (!s->subject) return nset_put(out, r->ctx, 1) < 0 ? oom(r) : 0;
    xmlNodeSetPtr subjects = xmlXPathNodeSetCreate(NULL);
    if (!subjects) return oom(r);
    int rc = -1, n = s->nleft;
    struct cand *cand = n ? calloc((size_t)n, sizeof(*cand)) : NULL;
    nset_t valid = {0}, memo = {0};
    if (n && !cand) {
        oom(r);
        goto done;
    }
    if (find_subjects(r, s->subject, subjects) < 0) goto done;
    /* 1. Right to left: the candidates for each compound. */
    xmlNodeSetPtr right = subjects;
    for (int j = n - 1; j >= 0 && right->nodeNr > 0; j--) {
        if (!(cand[j].set = candidates(r, &s->left[j], right))) goto done;
        right = cand[j].set;
    }
    if (right->nodeNr <= 0) { /* a compound nothing can match */
        rc = 0;
        goto done;
    }
    /* 2. Left to right: the matches. */
    for (int j = 0; j <= n; j++) {
        xmlNodeSetPtr set = j < n ? cand[j].set : subjects;
        nset_t next = {0}, *into = j < n ? &next : out;
        for (int i = 0; i < set->nodeNr; i++) {
            int ok = j == 0 ? 1 : linked(r, set->nodeTab[i], s->left[j - 1].comb, &valid, &memo);
            if (ok < 0 || (ok && nset_put(into, set->nodeTab[i], 1) < 0)) {
                nset_free(&next);
                if (ok >= 0) oom(r);
                goto done;
            }
        }
        nset_free(&valid);
        nset_free(&memo);
        valid = next;
    }
    rc = 0;
done:
    nset_free(&valid);
    nset_free(&memo);
    for (int j = 0; j < n && cand; j++)
        if (cand[j].set) xmlXPathFreeNodeSet(cand[j].set);
    free(cand);
    xmlXPathFreeNodeSet(subjects);
    return rc;
}

/* The attribute of element n that selector s wants, or NULL. */
static xmlNodePtr attr_of(const xmlNode *n, const char *name)
{
    for (xmlAttrPtr a = n->properties; a; a = a->next)
        if (xmlStrEqual(a->name, BAD_CAST name)) return (xmlNodePtr)a;
    return NULL;
}

/* One node of the walk: what the selectors want of it goes to out. inside[i] is the
 * depth + 1 of the outermost match of a deep selector i around the walk, or 0. */
static int visit(struct run *r, const select_prog_t *p, const nset_t *matched, int *inside,
                 xmlNodePtr n, int depth, xmlNodeSetPtr out)
{
    int want = 0;
    if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
        for (int i = 0; i < p->n && !want; i++) {
            const struct selector *s = &p->v[i];
            if (s->tail == SELECT_TEXT)
                want = s->deep ? inside[i] : nset_get(&matched[i], n->parent) >= 0;
        }
        return want && xmlXPathNodeSetAddUnique(out, n) < 0 ? oom(r) : 0;
    }
    if (!is_element(n) && n != r->ctx) return 0;
    int attrs = 0;
    for (int i = 0; i < p->n; i++) {
        const struct selector *s = &p->v[i];
        int m = nset_get(&matched[i], n) >= 0;
        if (m && s->deep && !inside[i]) inside[i] = depth + 1;
        if (m && s->tail == SELECT_ELEMENTS) want = 1;
        if (s->tail == SELECT_ATTR && (s->deep ? inside[i] : m)) attrs = 1;
    }
    if (want && is_element(n) && xmlXPathNodeSetAddUnique(out, n) < 0) return oom(r);
    if (!attrs || !is_element(n)) return 0;
    /* In the order of the element's attributes, as XPath gives them. */
    for (xmlAttrPtr a = n->properties; a; a = a->next) {
        if (spend(r, 1) < 0) return -1;
        for (int i = 0; i < p->n; i++) {
            const struct selector *s = &p->v[i];
            if (s->tail != SELECT_ATTR || !(s->deep ? inside[i] : nset_get(&matched[i], n) >= 0))
                continue;
            if (attr_of(n, s->attr) == (xmlNodePtr)a) {
                if (xmlXPathNodeSetAddUnique(out, (xmlNodePtr)a) < 0) return oom(r);
                break;
            }
        }
    }
    return 0;
}

/* The context node and its subtree in document order, each node's share to out. */
static int emit(struct run *r, const select_prog_t *p, const nset_t *matched, int limit,
                xmlNodeSetPtr out)
{
    int *inside = calloc(p->n ? (size_t)p->n : 1, sizeof(*inside));
    if (!inside) return oom(r);
    int rc = 0, depth = 0;
    xmlNodePtr n = r->ctx;
    for (;;) {
        if (spend(r, 1) < 0 || visit(r, p, matched, inside, n, depth, out) < 0) {
            rc = -1;
            break;
        }
        if (limit > 0 && out->nodeNr >= limit) break;
        if ((n == r->ctx || is_element(n)) && n->children) {
            n = n->children;
            depth++;
            continue;
        }
        while (depth > 0 && !n->next) {
            n = n->parent;
            depth--;
        }
        if (depth == 0) break;
        n = n->next;
        for (int i = 0; i < p->n; i++)
            if (inside[i] > depth) inside[i] = 0; /* left the outermost match */
    }
    free(inside);
    return rc;
}

xmlNodeSetPtr select_eval(const select_prog_t *p, xmlXPathContextPtr xp, xmlNodePtr ctx, int limit,
                          enum select_error *err)
{
    struct run r = {.xp = xp, .ctx = ctx};
    xmlNodeSetPtr out = NULL;
    nset_t *matched = calloc(p->n ? (size_t)p->n : 1, sizeof(*matched));
    if (!matched) {
        *err = SELECT_ERR_MEMORY;
        return NULL;
    }
    for (int i = 0; i < p->n; i++)
        if (eval_selector(&r, &p->v[i], &matched[i]) < 0) goto done;
    out = xmlXPathNodeSetCreate(NULL);
    if (!out) {
        oom(&r);
        goto done;
    }
    if (emit(&r, p, matched, limit, out) < 0) {
        xmlXPathFreeNodeSet(out);
        out = NULL;
    }
done:
    for (int i = 0; i < p->n; i++)
        nset_free(&matched[i]);
    free(matched);
    *err = out ? SELECT_OK : r.err;
    return out;
}
