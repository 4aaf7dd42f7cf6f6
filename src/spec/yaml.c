/*
 * yaml.c - the YAML tree loader and its typed accessors (see yaml.h).
 *
 * libyaml's event parser does the lexing and the grammar; this file builds a tree from its events,
 * one recursive call per mapping or sequence, refusing nesting deeper than ORR_YAML_MAX_DEPTH so
 * that the recursion is bounded whatever the input. Every node and string lives in the document's
 * arena. Error messages are one line: "file:line: path: what was expected, got what".
 */
#include "spec/yaml.h"

#include <yaml.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- Building the tree ---- */

typedef struct ybuild {
    yaml_parser_t parser;
    orr_ydoc *doc;
    const char *file;   /* arena copy of the file name */
    orr_err *err;
} ybuild;

/* Turns libyaml's error state into a one-line message. */
static int parser_error(ybuild *b)
{
    yaml_parser_t *p = &b->parser;
    if (p->error == YAML_MEMORY_ERROR) return orr_fail(b->err, "%s: out of memory while parsing", b->file);
    const char *problem = p->problem ? p->problem : "malformed document";
    size_t line = p->problem_mark.line + 1;
    if (p->error == YAML_READER_ERROR) /* encoding problems: the mark is not set, the offset is */
        return orr_fail(b->err, "%s: invalid YAML: %s (at byte %zu)", b->file, problem, p->problem_offset);
    if (p->context)
        return orr_fail(b->err, "%s:%zu: invalid YAML: %s (%s at line %zu)", b->file, line, problem,
                        p->context, (size_t)p->context_mark.line + 1);
    return orr_fail(b->err, "%s:%zu: invalid YAML: %s", b->file, line, problem);
}

static int next_event(ybuild *b, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&b->parser, ev)) return parser_error(b);
    return 0;
}

static int mark_fail(ybuild *b, const yaml_mark_t *m, const char *what)
{
    return orr_fail(b->err, "%s:%zu: %s", b->file, (size_t)m->line + 1, what);
}

static orr_ynode *new_node(ybuild *b, orr_ykind kind, const yaml_mark_t *m, const orr_ynode *parent,
                           const char *key)
{
    if (b->doc->nodes >= ORR_YAML_MAX_NODES) {
        orr_fail(b->err, "%s:%zu: document too large (more than %d values)", b->file, (size_t)m->line + 1,
                 ORR_YAML_MAX_NODES);
        return NULL;
    }
    b->doc->nodes++;
    orr_ynode *n = orr_arena_alloc(&b->doc->arena, sizeof *n);
    n->kind = kind;
    n->line = (int)(m->line < 1000000000 ? m->line + 1 : 1000000000);
    n->parent = parent;
    n->key = key;
    n->index = parent ? parent->n : 0;
    n->file = b->file;
    return n;
}

static char *copy_bytes(ybuild *b, const unsigned char *s, size_t len)
{
    char *d = orr_arena_alloc(&b->doc->arena, len + 1);
    if (len) memcpy(d, s, len);
    d[len] = 0;
    return d;
}

static void append_child(orr_ynode *parent, orr_ynode *child)
{
    parent->n++;
    if (parent->last) parent->last->next = child;
    else parent->first = child;
    parent->last = child;
}

/* qsort order for duplicate detection: by key, then by line (so the later one is reported). */
static int cmp_child_key(const void *a, const void *b)
{
    const orr_ynode *x = *(const orr_ynode *const *)a, *y = *(const orr_ynode *const *)b;
    int c = strcmp(x->key, y->key);
    if (c) return c;
    return (x->line > y->line) - (x->line < y->line);
}

static int check_duplicates(ybuild *b, const orr_ynode *map)
{
    if (map->n < 2) return 0;
    const orr_ynode **v = orr_xmalloc(map->n * sizeof *v);
    size_t i = 0;
    for (const orr_ynode *c = map->first; c; c = c->next) v[i++] = c;
    qsort(v, map->n, sizeof *v, cmp_child_key);
    int rc = 0;
    for (i = 1; i < map->n; i++) {
        if (strcmp(v[i - 1]->key, v[i]->key) == 0) {
            rc = orr_y_fail(v[i], b->err, "duplicate key (first at line %d)", v[i - 1]->line);
            break;
        }
    }
    free(v);
    return rc;
}

/* Builds the node for event ev (consumed here) and, for collections, everything up to its end.
 * key and key_mark: the key the node sits under in a parent mapping and where it was (NULL
 * otherwise); messages point at the key's line, which is where people look. */
static int build_node(ybuild *b, yaml_event_t *ev, orr_ynode *parent, const char *key,
                      const yaml_mark_t *key_mark, int depth, orr_ynode **out)
{
    yaml_mark_t mark = key_mark ? *key_mark : ev->start_mark;
    orr_ynode *n = NULL;
    *out = NULL;
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        n = new_node(b, ORR_YSCALAR, &mark, parent, key);
        if (n) {
            n->str = copy_bytes(b, ev->data.scalar.value, ev->data.scalar.length);
            n->len = ev->data.scalar.length;
            n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        }
        yaml_event_delete(ev);
        *out = n;
        return n ? 0 : -1;
    case YAML_ALIAS_EVENT: {
        char q[80];
        orr_quote((const char *)ev->data.alias.anchor, q, sizeof q);
        yaml_event_delete(ev);
        return orr_fail(b->err, "%s:%zu: aliases (*%s) are not supported; write the value out", b->file,
                        (size_t)mark.line + 1, q);
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        break;
    default:
        yaml_event_delete(ev);
        return mark_fail(b, &mark, "invalid YAML: unexpected event");
    }

    int is_map = ev->type == YAML_MAPPING_START_EVENT;
    yaml_event_delete(ev);
    if (depth >= ORR_YAML_MAX_DEPTH) {
        orr_fail(b->err, "%s:%zu: nesting deeper than %d levels", b->file, (size_t)mark.line + 1,
                 ORR_YAML_MAX_DEPTH);
        return -1;
    }
    n = new_node(b, is_map ? ORR_YMAP : ORR_YSEQ, &mark, parent, key);
    if (!n) return -1;
    for (;;) {
        yaml_event_t e;
        if (next_event(b, &e)) return -1;
        if (e.type == YAML_MAPPING_END_EVENT || e.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&e);
            break;
        }
        const char *ckey = NULL;
        yaml_mark_t ckey_mark = e.start_mark;
        if (is_map) {
            /* A key must be a string; then fetch the event of its value. */
            if (e.type != YAML_SCALAR_EVENT) {
                yaml_mark_t km = e.start_mark;
                yaml_event_delete(&e);
                return mark_fail(b, &km, "mapping keys must be plain strings");
            }
            if (strlen((const char *)e.data.scalar.value) != e.data.scalar.length) {
                yaml_mark_t km = e.start_mark;
                yaml_event_delete(&e);
                return mark_fail(b, &km, "mapping key contains a NUL character");
            }
            ckey = copy_bytes(b, e.data.scalar.value, e.data.scalar.length);
            yaml_event_delete(&e);
            if (next_event(b, &e)) return -1;
        }
        orr_ynode *child;
        if (build_node(b, &e, n, ckey, is_map ? &ckey_mark : NULL, depth + 1, &child)) return -1;
        append_child(n, child);
    }
    if (is_map && check_duplicates(b, n)) return -1;
    *out = n;
    return 0;
}

int orr_yaml_parse(orr_ydoc *doc, const char *file, const char *data, size_t len, orr_err *err)
{
    memset(doc, 0, sizeof *doc);
    ybuild b;
    memset(&b, 0, sizeof b);
    b.doc = doc;
    b.err = err;
    b.file = orr_arena_strdup(&doc->arena, file ? file : "<input>");
    if (!yaml_parser_initialize(&b.parser)) {
        orr_fail(err, "%s: cannot initialise the YAML parser", b.file);
        orr_yaml_free(doc);
        return -1;
    }
    yaml_parser_set_input_string(&b.parser, (const unsigned char *)data, len);
    int rc = -1;
    yaml_event_t ev;
    if (next_event(&b, &ev)) goto done; /* STREAM-START */
    yaml_event_delete(&ev);
    if (next_event(&b, &ev)) goto done;
    if (ev.type == YAML_STREAM_END_EVENT) { /* nothing but comments */
        yaml_event_delete(&ev);
        rc = 0;
        goto done;
    }
    yaml_event_delete(&ev); /* DOCUMENT-START */
    if (next_event(&b, &ev)) goto done;
    if (build_node(&b, &ev, NULL, NULL, NULL, 0, &doc->root)) goto done;
    if (next_event(&b, &ev)) goto done; /* DOCUMENT-END */
    yaml_event_delete(&ev);
    if (next_event(&b, &ev)) goto done;
    if (ev.type != YAML_STREAM_END_EVENT) {
        yaml_mark_t m = ev.start_mark;
        yaml_event_delete(&ev);
        mark_fail(&b, &m, "only one YAML document is expected (found a second '---')");
        goto done;
    }
    yaml_event_delete(&ev);
    /* A document holding only "---" or "~" is as empty as an empty file. */
    if (doc->root && doc->root->kind == ORR_YSCALAR && doc->root->plain &&
        (doc->root->len == 0 || strcmp(doc->root->str, "~") == 0 || strcmp(doc->root->str, "null") == 0))
        doc->root = NULL;
    rc = 0;
done:
    yaml_parser_delete(&b.parser);
    if (rc) orr_yaml_free(doc);
    return rc;
}

int orr_yaml_load_file(orr_ydoc *doc, const char *path, orr_err *err)
{
    size_t len = 0;
    memset(doc, 0, sizeof *doc);
    char *data = orr_read_file(path, &len, err);
    if (!data) return -1;
    int rc = orr_yaml_parse(doc, path, data, len, err);
    free(data);
    return rc;
}

void orr_yaml_free(orr_ydoc *doc)
{
    orr_arena_free(&doc->arena);
    memset(doc, 0, sizeof *doc);
}

/* ---- Messages ---- */

void orr_quote(const char *s, char *buf, size_t cap)
{
    enum { MAXCH = 60 };
    size_t o = 0, i = 0;
    if (cap < 8) {
        if (cap) buf[0] = 0;
        return;
    }
    buf[o++] = '"';
    for (; s && s[i] && i < MAXCH && o + 6 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    if (s && s[i] && o + 5 < cap) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '"';
    buf[o] = 0;
}

void orr_y_path(const orr_ynode *n, char *buf, size_t cap)
{
    const orr_ynode *chain[ORR_YAML_MAX_DEPTH + 2];
    size_t depth = 0;
    for (const orr_ynode *p = n; p && p->parent && depth < sizeof chain / sizeof chain[0]; p = p->parent)
        chain[depth++] = p;
    size_t o = 0;
    if (cap) buf[0] = 0;
    while (depth-- > 0 && o + 1 < cap) {
        const orr_ynode *p = chain[depth];
        int w;
        if (p->key) w = snprintf(buf + o, cap - o, "%s%s", o ? "." : "", p->key);
        else w = snprintf(buf + o, cap - o, "[%zu]", p->index);
        if (w < 0) break;
        o += (size_t)w;
        if (o >= cap) o = cap - 1;
    }
    /* Keys are user text: keep the message on one line. */
    for (size_t i = 0; i < o; i++)
        if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f) buf[i] = '?';
}

void orr_y_describe(const orr_ynode *n, char *buf, size_t cap)
{
    if (!n) snprintf(buf, cap, "nothing");
    else if (n->kind == ORR_YMAP) snprintf(buf, cap, "a mapping");
    else if (n->kind == ORR_YSEQ) snprintf(buf, cap, "a sequence");
    else if (n->plain && n->len == 0) snprintf(buf, cap, "nothing");
    else orr_quote(n->str, buf, cap);
}

int orr_y_fail(const orr_ynode *n, orr_err *err, const char *fmt, ...)
{
    char msg[400], path[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!n) return orr_fail(err, "%s", msg);
    orr_y_path(n, path, sizeof path);
    if (path[0]) return orr_fail(err, "%s:%d: %s: %s", n->file, n->line, path, msg);
    return orr_fail(err, "%s:%d: %s", n->file, n->line, msg);
}

/* ---- Structure ---- */

const orr_ynode *orr_y_get(const orr_ynode *map, const char *key)
{
    if (!map || map->kind != ORR_YMAP) return NULL;
    for (const orr_ynode *c = map->first; c; c = c->next)
        if (strcmp(c->key, key) == 0) return c;
    return NULL;
}

int orr_y_expect_map(const orr_ynode *n, orr_err *err)
{
    if (n && n->kind == ORR_YMAP) return 0;
    char got[80];
    orr_y_describe(n, got, sizeof got);
    return orr_y_fail(n, err, "expected a mapping (key: value lines), got %s", got);
}

static int key_allowed(const char *key, const orr_yfield *f, size_t nf, const char *const *extra)
{
    for (size_t i = 0; i < nf; i++)
        if (strcmp(key, f[i].key) == 0) return 1;
    for (size_t i = 0; extra && extra[i]; i++)
        if (strcmp(key, extra[i]) == 0) return 1;
    return 0;
}

int orr_y_check_keys(const orr_ynode *map, const orr_yfield *allowed, size_t nallowed,
                     const char *const *extra, orr_err *err)
{
    if (orr_y_expect_map(map, err)) return -1;
    for (const orr_ynode *c = map->first; c; c = c->next) {
        if (key_allowed(c->key, allowed, nallowed, extra)) continue;
        orr_buf list = {0};
        const char *names[256];
        size_t nn = 0;
        for (size_t i = 0; extra && extra[i]; i++) {
            orr_buf_printf(&list, "%s%s", list.n ? ", " : "", extra[i]);
            if (nn < 256) names[nn++] = extra[i];
        }
        for (size_t i = 0; i < nallowed; i++) {
            orr_buf_printf(&list, "%s%s", list.n ? ", " : "", allowed[i].key);
            if (nn < 256) names[nn++] = allowed[i].key;
        }
        char hint[160];
        orr_did_you_mean(c->key, names, nn, hint, sizeof hint);
        int rc = orr_y_fail(c, err, "unknown key (%sallowed: %s)", hint, list.s ? list.s : "none");
        orr_buf_free(&list);
        return rc;
    }
    return 0;
}

/* ---- Strict number parsing ---- */

int orr_parse_u64(const char *s, uint64_t *out)
{
    if (!s) return -1;
    const char *p = s[0] == '+' ? s + 1 : s;
    if (!*p) return -1;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno == ERANGE || *end) return -1;
    *out = (uint64_t)v;
    return 0;
}

int orr_parse_num(const char *s, double *out)
{
    if (!s || !*s) return -1;
    /* strtod also takes hex, "inf", "nan" and leading spaces: none of them is a number in a spec. */
    if (!(isdigit((unsigned char)s[0]) || s[0] == '+' || s[0] == '-' || s[0] == '.')) return -1;
    for (const char *q = s; *q; q++)
        if (!(isdigit((unsigned char)*q) || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' || *q == '-'))
            return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno == ERANGE || *end || end == s || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* ---- Typed scalars ---- */

/* The scalar text of n, or NULL after failing with "expected WHAT, got ...". */
static const char *scalar_text(const orr_ynode *n, const char *what, orr_err *err)
{
    char got[80];
    if (n && n->kind == ORR_YSCALAR && !(n->plain && n->len == 0)) {
        if (strlen(n->str) == n->len) return n->str;
        orr_y_fail(n, err, "expected %s, got a string with a NUL character", what);
        return NULL;
    }
    orr_y_describe(n, got, sizeof got);
    orr_y_fail(n, err, "expected %s, got %s", what, got);
    return NULL;
}

int orr_y_uint(const orr_ynode *n, uint64_t min, uint64_t max, uint64_t *out, orr_err *err)
{
    char what[64], got[80];
    if (min == 0) snprintf(what, sizeof what, "a non-negative integer");
    else if (min == 1) snprintf(what, sizeof what, "a positive integer");
    else snprintf(what, sizeof what, "an integer >= %llu", (unsigned long long)min);
    const char *s = scalar_text(n, what, err);
    if (!s) return -1;
    uint64_t v;
    orr_quote(s, got, sizeof got);
    if (orr_parse_u64(s, &v) || v < min) return orr_y_fail(n, err, "expected %s, got %s", what, got);
    if (v > max) return orr_y_fail(n, err, "expected %s of at most %llu, got %s", what, (unsigned long long)max, got);
    *out = v;
    return 0;
}

int orr_y_u32(const orr_ynode *n, uint32_t min, uint32_t *out, orr_err *err)
{
    uint64_t v;
    if (orr_y_uint(n, min, UINT32_MAX, &v, err)) return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Describes the range [min, max] (open at min if open_min; max <= 0 or infinite: unbounded). */
static void num_range_text(double min, int open_min, double max, char *buf, size_t cap)
{
    int bounded = max > 0 && isfinite(max);
    if (!bounded && min == 0) snprintf(buf, cap, open_min ? "a positive number" : "a non-negative number");
    else if (!bounded) snprintf(buf, cap, "a number %s %g", open_min ? ">" : ">=", min);
    else snprintf(buf, cap, "a number in %c%g, %g]", open_min ? '(' : '[', min, max);
}

static int y_num_range(const orr_ynode *n, double min, int open_min, double max, double *out, orr_err *err)
{
    char what[96];
    num_range_text(min, open_min, max, what, sizeof what);
    const char *s = scalar_text(n, what, err);
    if (!s) return -1;
    double v = 0;
    int bounded = max > 0 && isfinite(max);
    if (orr_parse_num(s, &v) || v < min || (open_min && v == min) || (bounded && v > max)) {
        char got[80];
        orr_quote(s, got, sizeof got);
        return orr_y_fail(n, err, "expected %s, got %s", what, got);
    }
    *out = v;
    return 0;
}

int orr_y_num(const orr_ynode *n, double min, double max, double *out, orr_err *err)
{
    return y_num_range(n, min, 0, max, out, err);
}

int orr_y_bool(const orr_ynode *n, int *out, orr_err *err)
{
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    const char *s = scalar_text(n, "true or false", err);
    if (!s) return -1;
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0) return *out = 0, 0;
    }
    char got[80];
    orr_quote(s, got, sizeof got);
    return orr_y_fail(n, err, "expected true or false, got %s", got);
}

int orr_y_str(const orr_ynode *n, char *buf, size_t cap, orr_err *err)
{
    const char *s = scalar_text(n, "a non-empty string", err);
    if (!s) return -1;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return orr_y_fail(n, err, "expected a one-line string without control characters");
    if (n->len >= cap) return orr_y_fail(n, err, "expected at most %zu characters, got %zu", cap - 1, n->len);
    memcpy(buf, s, n->len + 1);
    return 0;
}

int orr_y_choice(const orr_ynode *n, const char *const *names, int count, int *out, orr_err *err)
{
    orr_buf what = {0};
    orr_buf_puts(&what, "one of ");
    for (int i = 0; i < count; i++) orr_buf_printf(&what, "%s%s", i ? "|" : "", names[i]);
    const char *s = scalar_text(n, what.s, err);
    int rc = -1;
    for (int i = 0; s && i < count && rc; i++) {
        if (strcasecmp(s, names[i]) == 0) {
            *out = i;
            rc = 0;
        }
    }
    if (s && rc) {
        char got[80];
        orr_quote(s, got, sizeof got);
        orr_y_fail(n, err, "expected %s, got %s", what.s, got);
    }
    orr_buf_free(&what);
    return rc;
}

/* ---- Field tables ---- */

static const orr_yfield *find_field(const orr_yfield *f, size_t nf, const char *key)
{
    for (size_t i = 0; i < nf; i++)
        if (strcmp(f[i].key, key) == 0) return &f[i];
    return NULL;
}

static int apply_field(void *obj, const orr_yfield *f, const orr_ynode *n, orr_err *err)
{
    char *p = (char *)obj + f->offset;
    double v = 0;
    switch (f->type) {
    case ORR_YF_U32: {
        uint64_t u;
        uint64_t max = f->max > 0 && f->max < 4294967295.0 ? (uint64_t)f->max : UINT32_MAX;
        if (orr_y_uint(n, f->min > 0 ? (uint64_t)f->min : 0, max, &u, err)) return -1;
        uint32_t u32 = (uint32_t)u;
        memcpy(p, &u32, sizeof u32);
        return 0;
    }
    case ORR_YF_BOOL: {
        int b;
        if (orr_y_bool(n, &b, err)) return -1;
        memcpy(p, &b, sizeof b);
        return 0;
    }
    case ORR_YF_STR:
        return orr_y_str(n, p, f->size, err);
    case ORR_YF_CHOICE: {
        int count = 0, idx;
        while (f->choices[count]) count++;
        if (orr_y_choice(n, f->choices, count, &idx, err)) return -1;
        memcpy(p, &idx, sizeof idx);
        return 0;
    }
    case ORR_YF_DOUBLE:
    case ORR_YF_U64:
    case ORR_YF_I64:
        if (y_num_range(n, f->min, f->open_min, f->max, &v, err)) return -1;
        v *= f->scale;
        if (f->type == ORR_YF_DOUBLE) {
            memcpy(p, &v, sizeof v);
        } else if (f->type == ORR_YF_U64) {
            uint64_t u = (uint64_t)llround(v);
            memcpy(p, &u, sizeof u);
        } else {
            int64_t i = (int64_t)llround(v);
            memcpy(p, &i, sizeof i);
        }
        return 0;
    }
    return orr_y_fail(n, err, "internal error: bad field type");
}

int orr_y_apply_fields(void *obj, const orr_yfield *fields, size_t nfields, const orr_ynode *map,
                       orr_err *err)
{
    if (orr_y_expect_map(map, err)) return -1;
    for (const orr_ynode *c = map->first; c; c = c->next) {
        const orr_yfield *f = find_field(fields, nfields, c->key);
        if (f && apply_field(obj, f, c, err)) return -1;
    }
    return 0;
}

/* ---- Catalog names ---- */

int orr_name_matches(const char *name, const char *canonical, const orr_ynode *aliases)
{
    if (strcasecmp(name, canonical) == 0) return 1;
    if (!aliases) return 0;
    if (aliases->kind == ORR_YSCALAR) return strcasecmp(name, aliases->str) == 0;
    for (const orr_ynode *a = aliases->first; a; a = a->next)
        if (a->kind == ORR_YSCALAR && strcasecmp(name, a->str) == 0) return 1;
    return 0;
}

int orr_fail_unknown(orr_err *err, const char *what, const char *name, const char *const *known,
                     size_t nknown, const char *list_cmd)
{
    char q[80], hint[160] = "";
    orr_quote(name, q, sizeof q);
    orr_did_you_mean(name, known, nknown, hint, sizeof hint);
    /* the whole list when it fits on the line, never a list cut short */
    orr_buf list = {0};
    for (size_t i = 0; i < nknown; i++) orr_buf_printf(&list, "%s%s", i ? ", " : "", known[i]);
    int rc;
    if (list.n && list.n + strlen(hint) + strlen(q) + 64 < sizeof err->msg / 2)
        rc = orr_fail(err, "unknown %s %s (%sknown: %s)", what, q, hint, list.s);
    else
        rc = orr_fail(err, "unknown %s %s (%sall %zu: `%s`)", what, q, hint, nknown, list_cmd);
    orr_buf_free(&list);
    return rc;
}

/* ---- Embedded catalog files ---- */

/* The table written by cmake/embed.cmake: every data file, NUL-terminated, then {NULL}. */
extern const struct orr_embedded_file {
    const char *name;
    const char *data;
    size_t size;
} orr_embedded_files[];

_Noreturn void orr_catalog_bug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("orrery: internal error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

const char *orr_embedded_data(const char *name, size_t *size)
{
    for (const struct orr_embedded_file *f = orr_embedded_files; f->name; f++)
        if (strcmp(f->name, name) == 0) {
            *size = f->size;
            return f->data;
        }
    return NULL;
}

void orr_embedded_doc(const char *name, orr_ydoc *doc)
{
    size_t size;
    const char *data = orr_embedded_data(name, &size);
    if (!data) orr_catalog_bug("data/%s is not compiled into the library", name);
    orr_err err;
    char file[64];
    snprintf(file, sizeof file, "data/%s", name);
    if (orr_yaml_parse(doc, file, data, size, &err)) orr_catalog_bug("%s", err.msg);
    if (!doc->root || doc->root->kind != ORR_YMAP) orr_catalog_bug("%s: expected a mapping of entries", file);
}

/* ---- Catalog entry helpers ---- */

/* Reads the `aliases:` of an entry (a name or a list of names) and joins them for `orrery list`. */
const char *orr_catalog_aliases(orr_ydoc *doc, const orr_ynode *entry, const orr_ynode **out)
{
    const orr_ynode *a = orr_y_get(entry, "aliases");
    *out = a;
    if (!a) return "";
    orr_buf b = {0};
    if (a->kind == ORR_YSCALAR && a->len > 0) {
        orr_buf_puts(&b, a->str);
    } else if (a->kind == ORR_YSEQ) {
        for (const orr_ynode *x = a->first; x; x = x->next) {
            if (x->kind != ORR_YSCALAR || x->len == 0) {
                orr_err e;
                orr_y_fail(x, &e, "expected a name");
                orr_catalog_bug("%s", e.msg);
            }
            orr_buf_printf(&b, "%s%s", b.n ? ", " : "", x->str);
        }
    } else {
        orr_err e;
        orr_y_fail(a, &e, "expected a name or a list of names");
        orr_catalog_bug("%s", e.msg);
    }
    const char *s = orr_arena_strdup(&doc->arena, b.s ? b.s : "");
    orr_buf_free(&b);
    return s;
}

/* Checks that every key of fields[] (but the ones in optional) is present in a catalog entry. */
void orr_catalog_require(const orr_ynode *entry, const orr_yfield *fields, size_t n, const char *const *optional)
{
    for (size_t i = 0; i < n; i++) {
        int opt = 0;
        for (size_t j = 0; optional && optional[j]; j++) opt |= strcmp(optional[j], fields[i].key) == 0;
        if (!opt && !orr_y_get(entry, fields[i].key)) {
            orr_err e;
            orr_y_fail(entry, &e, "missing key %s", fields[i].key);
            orr_catalog_bug("%s", e.msg);
        }
    }
}

/* Fails if name was already used (as a name or an alias) by one of the n earlier entries. */
static void check_unique(const orr_ynode *entry, const char *name, const char *const *names,
                         const orr_ynode *const *aliases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (orr_name_matches(name, names[i], aliases[i])) {
            orr_err e;
            orr_y_fail(entry, &e, "name \"%s\" is already used by %s", name, names[i]);
            orr_catalog_bug("%s", e.msg);
        }
    }
}

/* Checks an entry's name and each of its aliases against the entries before it. */
void orr_catalog_check_names(const orr_ynode *entry, const orr_ynode *own, const char *const *names,
                        const orr_ynode *const *aliases, size_t n)
{
    check_unique(entry, entry->key, names, aliases, n);
    if (own && own->kind == ORR_YSCALAR) check_unique(entry, own->str, names, aliases, n);
    for (const orr_ynode *a = own && own->kind == ORR_YSEQ ? own->first : NULL; a; a = a->next)
        check_unique(entry, a->str, names, aliases, n);
}
