/*
 * core.c - errors, allocation helpers, growable arrays, arenas, the u64 hash map and string buffers.
 */
#include "orrery/core.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

int orr_fail(orr_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void oom(size_t n)
{
    fprintf(stderr, "orrery: out of memory allocating %zu bytes\n", n);
    abort();
}

void *orr_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *orr_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *orr_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

void *orr_xaligned(size_t align, size_t n)
{
    void *p = aligned_alloc(align, n ? n : align);
    if (!p) oom(n);
    return p;
}

char *orr_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = orr_xmalloc(n);
    memcpy(d, s, n);
    return d;
}

void orr_grow(void **arr, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 8;
    while (c < need) c *= 2;
    *arr = orr_xrealloc(*arr, c * elem_size);
    *cap = c;
}

uint32_t orr_pool_take(void **items, size_t *n, size_t *cap, size_t elem_size, size_t link_off, uint32_t *free)
{
    uint32_t id = *free;
    if (id != ORR_POOL_NONE) {
        memcpy(free, (char *)*items + (size_t)id * elem_size + link_off, sizeof *free);
        return id;
    }
    orr_grow(items, cap, *n + 1, elem_size);
    memset((char *)*items + *n * elem_size, 0, elem_size);
    return (uint32_t)(*n)++;
}

void orr_pool_give(void *items, size_t elem_size, size_t link_off, uint32_t *free, uint32_t id)
{
    memcpy((char *)items + (size_t)id * elem_size + link_off, free, sizeof *free);
    *free = id;
}

/* ---- arena ---- */

struct orr_arena_block {
    orr_arena_block *next;
    size_t size;
    _Alignas(16) unsigned char data[];
};

void *orr_arena_alloc(orr_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->used + n > a->cap) {
        size_t sz = n > 65536 ? n : 65536;
        orr_arena_block *b = orr_xmalloc(sizeof *b + sz);
        b->next = a->head;
        b->size = sz;
        a->head = b;
        a->used = 0;
        a->cap = sz;
    }
    void *p = a->head->data + a->used;
    a->used += n;
    memset(p, 0, n);
    return p;
}

char *orr_arena_strdup(orr_arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = orr_arena_alloc(a, n);
    memcpy(d, s, n);
    return d;
}

void orr_arena_free(orr_arena *a)
{
    orr_arena_block *b = a->head;
    while (b) {
        orr_arena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
    a->used = a->cap = 0;
}

/* ---- hash map: linear probing, backward-shift deletion, empty slot = UINT64_MAX ---- */

uint64_t orr_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h == UINT64_MAX ? h - 1 : h;
}

uint64_t orr_hash64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

#define MAP_EMPTY UINT64_MAX

uint32_t *orr_map_get(const orr_map *m, uint64_t key)
{
    if (!m->cap) return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = orr_hash64(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) return &m->vals[i];
        if (m->keys[i] == MAP_EMPTY) return NULL;
    }
}

static void map_rehash(orr_map *m, size_t ncap)
{
    uint64_t *ok = m->keys;
    uint32_t *ov = m->vals;
    size_t ocap = m->cap;
    m->keys = orr_xmalloc(ncap * sizeof *m->keys);
    m->vals = orr_xmalloc(ncap * sizeof *m->vals);
    for (size_t i = 0; i < ncap; i++) m->keys[i] = MAP_EMPTY;
    m->cap = ncap;
    m->n = 0;
    for (size_t i = 0; i < ocap; i++)
        if (ok[i] != MAP_EMPTY) orr_map_put(m, ok[i], ov[i]);
    free(ok);
    free(ov);
}

void orr_map_put(orr_map *m, uint64_t key, uint32_t val)
{
    if ((m->n + 1) * 4 >= m->cap * 3) map_rehash(m, m->cap ? m->cap * 2 : 16);
    size_t mask = m->cap - 1;
    for (size_t i = orr_hash64(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return;
        }
        if (m->keys[i] == MAP_EMPTY) {
            m->keys[i] = key;
            m->vals[i] = val;
            m->n++;
            return;
        }
    }
}

int orr_map_del(orr_map *m, uint64_t key)
{
    if (!m->cap) return 0;
    size_t mask = m->cap - 1, i = orr_hash64(key) & mask;
    while (m->keys[i] != key) {
        if (m->keys[i] == MAP_EMPTY) return 0;
        i = (i + 1) & mask;
    }
    /* Backward-shift: move later entries of the cluster into the hole when their home allows. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->keys[j] != MAP_EMPTY; j = (j + 1) & mask) {
        size_t home = orr_hash64(m->keys[j]) & mask;
        int movable = (hole <= j) ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->keys[hole] = MAP_EMPTY;
    m->n--;
    return 1;
}

void orr_map_clear(orr_map *m)
{
    for (size_t i = 0; i < m->cap; i++) m->keys[i] = MAP_EMPTY;
    m->n = 0;
}

void orr_map_free(orr_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- string buffer ---- */

void orr_buf_printf(orr_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    orr_grow((void **)&b->s, &b->cap, b->n + (size_t)n + 1, 1);
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void orr_buf_puts(orr_buf *b, const char *s)
{
    size_t n = strlen(s);
    orr_grow((void **)&b->s, &b->cap, b->n + n + 1, 1);
    memcpy(b->s + b->n, s, n + 1);
    b->n += n;
}

void orr_buf_free(orr_buf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

uint64_t orr_env_limit(const char *name, uint64_t fallback)
{
    const char *v = getenv(name);
    char *end = NULL;
    unsigned long long n = v && *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
    return n > 0 && end && !*end ? (uint64_t)n : fallback;
}

/* The most an input file may hold: ORR_INPUT_MAX_BYTES, or ORRERY_MAX_INPUT_BYTES from the
 * environment (docs/spec.md "Limits"). */
static uint64_t input_limit_bytes(void) { return orr_env_limit("ORRERY_MAX_INPUT_BYTES", ORR_INPUT_MAX_BYTES); }

char *orr_read_file(const char *path, size_t *len, orr_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        orr_fail(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        orr_fail(err, "%s: is a directory, not a file", path);
        return NULL;
    }
    uint64_t limit = input_limit_bytes();
    orr_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.n + n > limit) {
            fclose(f);
            free(b.s);
            orr_fail(err, "%s: larger than %llu bytes, the input limit (docs/spec.md \"Limits\"; raise it with "
                          "ORRERY_MAX_INPUT_BYTES)", path, (unsigned long long)limit);
            return NULL;
        }
        orr_grow((void **)&b.s, &b.cap, b.n + n + 1, 1);
        memcpy(b.s + b.n, chunk, n);
        b.n += n;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b.s);
        orr_fail(err, "%s: read error: %s", path, strerror(errno));
        return NULL;
    }
    if (!b.s) b.s = orr_xcalloc(1, 1);
    b.s[b.n] = 0;
    if (len) *len = b.n;
    return b.s;
}

/* ---- "Did you mean": the closest name by edit distance ---- */

/* Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), ignoring case,
 * capped: a result > cap means "further than cap". Names are short, so three rows on the stack. */
static size_t edit_distance(const char *a, const char *b, size_t cap)
{
    enum { MAXN = 64 };
    size_t na = strlen(a), nb = strlen(b);
    if (na >= MAXN || nb >= MAXN) return cap + 1;
    if ((na > nb ? na - nb : nb - na) > cap) return cap + 1;
    size_t r0[MAXN], r1[MAXN], r2[MAXN], *pp = r0, *p = r1, *c = r2;
    for (size_t j = 0; j <= nb; j++) p[j] = j;
    for (size_t i = 1; i <= na; i++) {
        c[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            int same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
            size_t v = p[j - 1] + !same;
            if (p[j] + 1 < v) v = p[j] + 1;
            if (c[j - 1] + 1 < v) v = c[j - 1] + 1;
            if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            c[j] = v;
        }
        size_t *t = pp;
        pp = p;
        p = c;
        c = t;
    }
    return p[nb];
}

size_t orr_near(const char *word, const char *const *cands, size_t n, const char **out, size_t max)
{
    if (!word || !*word || !max) return 0;
    size_t len = strlen(word), cap = len <= 4 ? 1 : len <= 8 ? 2 : 3, best_d = cap + 1, k = 0;
    /* a word cut short ("--nic" for "--nic-gbps") first: the candidates it starts */
    for (size_t i = 0; i < n && k < max; i++)
        if (cands[i] && len >= 3 && strlen(cands[i]) > len && strncasecmp(cands[i], word, len) == 0) out[k++] = cands[i];
    if (k) return k;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i]) continue;
        size_t d = edit_distance(word, cands[i], cap);
        if (d > cap || d > best_d) continue;
        if (d < best_d) best_d = d, k = 0;
        if (k < max) out[k++] = cands[i];
    }
    return k;
}

const char *orr_closest(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    return orr_near(word, cands, n, &best, 1) ? best : NULL;
}

void orr_did_you_mean(const char *word, const char *const *cands, size_t n, char *buf, size_t cap)
{
    const char *near[3];
    size_t k = orr_near(word, cands, n, near, 3);
    if (!cap) return;
    buf[0] = 0;
    if (k == 1) snprintf(buf, cap, "did you mean %s? ", near[0]);
    else if (k == 2) snprintf(buf, cap, "did you mean %s or %s? ", near[0], near[1]);
    else if (k == 3) snprintf(buf, cap, "did you mean %s, %s or %s? ", near[0], near[1], near[2]);
}
