/*
 * core.h - the small things every module uses: errors, growable arrays, arenas, a u64->u32 hash
 * map, time units. Plain C11, no global state.
 *
 * Conventions (docs/design.md): time is int64_t picoseconds (_ps), sizes uint64_t bytes (_bytes),
 * rates double bytes per second (_Bps). Functions that can fail because of user input return 0 on
 * success and -1 on failure, with a one-line message in an orr_err naming the file, field or flag.
 */
#ifndef ORRERY_CORE_H
#define ORRERY_CORE_H

#include <stddef.h>
#include <stdint.h>

#define ORR_PS_PER_NS 1000LL
#define ORR_PS_PER_US 1000000LL
#define ORR_PS_PER_MS 1000000000LL
#define ORR_PS_PER_S 1000000000000LL

/* Exit code for user errors (bad spec, bad flag, indivisible degrees, deadlock in a workload). */
#define ORR_EXIT_USAGE 2

/* A user-facing error: one line, naming what was wrong and what was expected. */
typedef struct orr_err {
    char msg[1024];
} orr_err;

/* Formats msg into err (printf-style) and returns -1, so callers can `return orr_fail(err, ...)`. */
int orr_fail(orr_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Allocation that never returns NULL: out of memory is not a user error, it aborts with a message. */
void *orr_xmalloc(size_t n);
void *orr_xcalloc(size_t n, size_t size);
void *orr_xrealloc(void *p, size_t n);
/* n bytes aligned to align (a power of two; n a multiple of it), freed with free(). */
void *orr_xaligned(size_t align, size_t n);
char *orr_xstrdup(const char *s);

/* Grows *arr (of elem_size-byte elements, capacity *cap) to hold at least need elements. */
void orr_grow(void **arr, size_t *cap, size_t need, size_t elem_size);
#define ORR_PUSH(arr, n, cap, value)                                                     \
    do {                                                                                 \
        if ((n) >= (cap)) orr_grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)));   \
        (arr)[(n)++] = (value);                                                          \
    } while (0)

/* A free-list pool of indices into a growable array (the executor's waiters, collective instances
 * and transfers, the memory tracker's blocks, the flow model's flows and rate history): the free
 * elements are chained through a uint32_t field of the element itself, at byte offset link_off,
 * and *free is the chain's head (ORR_POOL_NONE when empty). orr_pool_take returns the head, or
 * else a new element appended to *items (n used of cap, grown with orr_grow, zeroed); nothing is
 * allocated once the array has grown to its working size. orr_pool_give puts id back. */
#define ORR_POOL_NONE UINT32_MAX
uint32_t orr_pool_take(void **items, size_t *n, size_t *cap, size_t elem_size, size_t link_off, uint32_t *free);
void orr_pool_give(void *items, size_t elem_size, size_t link_off, uint32_t *free, uint32_t id);

/* Arena: bump allocation of many small objects freed together. */
typedef struct orr_arena_block orr_arena_block;
typedef struct orr_arena {
    orr_arena_block *head;
    size_t used, cap;
} orr_arena;
void *orr_arena_alloc(orr_arena *a, size_t n);   /* zeroed, 16-byte aligned */
char *orr_arena_strdup(orr_arena *a, const char *s);
void orr_arena_free(orr_arena *a);

/* Open-addressing map from uint64_t keys to uint32_t values. Keys must not be UINT64_MAX. */
typedef struct orr_map {
    uint64_t *keys;
    uint32_t *vals;
    size_t n, cap; /* cap is a power of two (or 0) */
} orr_map;
uint32_t *orr_map_get(const orr_map *m, uint64_t key); /* NULL if absent */
void orr_map_put(orr_map *m, uint64_t key, uint32_t val);
int orr_map_del(orr_map *m, uint64_t key);            /* 1 if it was there */
void orr_map_free(orr_map *m);
void orr_map_clear(orr_map *m);                       /* empties it, keeping its memory */

/* 64-bit mixing hash (splitmix64 finaliser); deterministic across runs and machines. */
uint64_t orr_hash64(uint64_t x);
/* FNV-1a of a string, never UINT64_MAX (so it can key an orr_map); deterministic. */
uint64_t orr_hash_str(const char *s);

/* Growable string buffer for building output text. */
typedef struct orr_buf {
    char *s;
    size_t n, cap;
} orr_buf;
void orr_buf_printf(orr_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void orr_buf_puts(orr_buf *b, const char *s);
void orr_buf_free(orr_buf *b);

/* "Did you mean": a candidate that word (3 characters or more) is the start of; else the one closest
 * to word by edit distance (case ignored, adjacent swaps count one) within 1 edit for words of up
 * to 4 characters, 2 up to 8, 3 beyond; else NULL. For error messages on names, flags and keys. */
const char *orr_closest(const char *word, const char *const *cands, size_t n);
/* All such candidates (those word starts, else those at the closest distance), up to max, in their
 * order: out[0..return value). */
size_t orr_near(const char *word, const char *const *cands, size_t n, const char **out, size_t max);
/* "did you mean A, B or C? " (up to three of orr_near) into buf, or "" when none is near. */
void orr_did_you_mean(const char *word, const char *const *cands, size_t n, char *buf, size_t cap);

/* The largest input file read (spec, model, topology, flows, traces, csv) unless the environment's
 * ORRERY_MAX_INPUT_BYTES says otherwise: 1 GiB. */
#define ORR_INPUT_MAX_BYTES (1ull << 30)

/* A documented limit raised (or lowered) from the environment (docs/spec.md "Limits"): the positive
 * whole number in variable name, else fallback (unset, empty or not such a number). */
uint64_t orr_env_limit(const char *name, uint64_t fallback);

/* Thin wrappers used by front ends: read a whole file (NUL-terminated) or fail naming it (a
 * directory, or a file over the input limit, is an error). */
char *orr_read_file(const char *path, size_t *len, orr_err *err);

#endif
