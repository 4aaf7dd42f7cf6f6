/*
 * memory.c - per-GPU memory tracker with a model of PyTorch's CUDA caching allocator
 * (include/orrery/memory.h; the constants are c10/cuda/CUDACachingAllocator.cpp's defaults).
 *
 * Blocks live in one pool array (indices, free list); a segment is a doubly linked list of blocks
 * in address order. Cached free blocks are kept in an array sorted by (stream, pool, size, id), so
 * best fit is a binary search and the order of reuse is deterministic. Nothing here depends on
 * addresses: a segment is identified by its blocks.
 */
#include "orrery/memory.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define MIN_BLOCK 512ull                /* kMinBlockSize */
#define SMALL_SIZE (1ull << 20)         /* kSmallSize: requests up to 1 MiB use the small pool */
#define SMALL_BUFFER (2ull << 20)       /* kSmallBuffer: small-pool segment */
#define LARGE_BUFFER (20ull << 20)      /* kLargeBuffer: segment for large requests under 10 MiB */
#define MIN_LARGE_ALLOC (10ull << 20)   /* kMinLargeAlloc */
#define ROUND_LARGE (2ull << 20)        /* kRoundLarge */

struct orr_mem_block {
    uint64_t size;
    uint32_t prev, next;   /* neighbours in the segment (address order) */
    uint32_t next_free;    /* pool free list */
    uint8_t stream, small, allocated;
};

uint64_t orr_mem_round(uint64_t bytes)
{
    if (bytes < MIN_BLOCK) return MIN_BLOCK;
    return (bytes + MIN_BLOCK - 1) / MIN_BLOCK * MIN_BLOCK;
}

uint64_t orr_mem_segment_size(uint64_t rounded)
{
    if (rounded <= SMALL_SIZE) return SMALL_BUFFER;
    if (rounded < MIN_LARGE_ALLOC) return LARGE_BUFFER;
    return (rounded + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

void orr_mem_init(orr_memtrack *m, uint32_t nbufs, uint64_t capacity_bytes, int caching, orr_mem_rank *out)
{
    memset(m, 0, sizeof *m);
    memset(out, 0, sizeof *out);
    m->capacity_bytes = capacity_bytes;
    m->caching = caching;
    m->nbufs = nbufs;
    m->buf_block = orr_xmalloc((nbufs ? nbufs : 1) * sizeof *m->buf_block);
    m->buf_bytes = orr_xcalloc(nbufs ? nbufs : 1, sizeof *m->buf_bytes);
    m->buf_cat = orr_xcalloc(nbufs ? nbufs : 1, sizeof *m->buf_cat);
    for (uint32_t i = 0; i < nbufs; i++) m->buf_block[i] = NONE;
    m->block_free = NONE;
    m->out = out;
}

void orr_mem_free_tracker(orr_memtrack *m)
{
    free(m->buf_block);
    free(m->buf_bytes);
    free(m->buf_cat);
    free(m->blocks);
    free(m->free_set);
    memset(m, 0, sizeof *m);
}

void orr_mem_rank_free(orr_mem_rank *r)
{
    free(r->samples);
    r->samples = NULL;
    r->nsamples = r->cap_samples = 0;
}

/* ---- block pool and the sorted free set ---- */

static uint32_t block_new(orr_memtrack *m)
{
    uint32_t id = orr_pool_take((void **)&m->blocks, &m->nblocks, &m->cap_blocks, sizeof *m->blocks,
                                offsetof(orr_mem_block, next_free), &m->block_free);
    memset(&m->blocks[id], 0, sizeof m->blocks[id]);
    m->blocks[id].prev = m->blocks[id].next = m->blocks[id].next_free = NONE;
    return id;
}

static void block_release(orr_memtrack *m, uint32_t id)
{
    orr_pool_give(m->blocks, sizeof *m->blocks, offsetof(orr_mem_block, next_free), &m->block_free, id);
}

/* Ordering key of the free set. */
static int key_less(const orr_memtrack *m, uint8_t stream, uint8_t small, uint64_t size, uint32_t id, uint32_t other)
{
    const orr_mem_block *o = &m->blocks[other];
    if (stream != o->stream) return stream < o->stream;
    if (small != o->small) return small < o->small;
    if (size != o->size) return size < o->size;
    return id < other;
}

/* First position in the free set whose key is not less than (stream, small, size, id). */
static size_t lower_bound(const orr_memtrack *m, uint8_t stream, uint8_t small, uint64_t size, uint32_t id)
{
    size_t lo = 0, hi = m->nfree;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_less(m, stream, small, size, id, m->free_set[mid])) hi = mid;
        else lo = mid + 1;
    }
    /* lo is the first element greater than the key; step back over an equal one (the id itself) */
    if (lo > 0 && m->free_set[lo - 1] == id) return lo - 1;
    return lo;
}

static void free_set_insert(orr_memtrack *m, uint32_t id)
{
    const orr_mem_block *b = &m->blocks[id];
    size_t pos = lower_bound(m, b->stream, b->small, b->size, id);
    if (m->nfree + 1 > m->cap_free) orr_grow((void **)&m->free_set, &m->cap_free, m->nfree + 1, sizeof *m->free_set);
    memmove(&m->free_set[pos + 1], &m->free_set[pos], (m->nfree - pos) * sizeof *m->free_set);
    m->free_set[pos] = id;
    m->nfree++;
}

static void free_set_remove(orr_memtrack *m, uint32_t id)
{
    const orr_mem_block *b = &m->blocks[id];
    size_t pos = lower_bound(m, b->stream, b->small, b->size, id);
    if (pos < m->nfree && m->free_set[pos] == id) {
        memmove(&m->free_set[pos], &m->free_set[pos + 1], (m->nfree - pos - 1) * sizeof *m->free_set);
        m->nfree--;
    }
}

/* Smallest cached block of (stream, small) with size >= need, or NONE. */
static uint32_t best_fit(const orr_memtrack *m, uint8_t stream, uint8_t small, uint64_t need)
{
    size_t lo = 0, hi = m->nfree;
    while (lo < hi) { /* first element with key >= (stream, small, need, 0) */
        size_t mid = lo + (hi - lo) / 2;
        const orr_mem_block *b = &m->blocks[m->free_set[mid]];
        int less = b->stream != stream ? b->stream < stream : b->small != small ? b->small < small : b->size < need;
        if (less) lo = mid + 1;
        else hi = mid;
    }
    if (lo == m->nfree) return NONE;
    const orr_mem_block *b = &m->blocks[m->free_set[lo]];
    return b->stream == stream && b->small == small ? m->free_set[lo] : NONE;
}

/* Releases every cached segment that is entirely free (release_cached_blocks); with expandable
 * segments every free cached block (unmapped), its neighbours no longer linked across it. */
static void release_cached_segments(orr_memtrack *m)
{
    size_t k = 0;
    for (size_t i = 0; i < m->nfree; i++) {
        uint32_t id = m->free_set[i];
        orr_mem_block *b = &m->blocks[id];
        if ((b->prev == NONE && b->next == NONE) || m->caching == ORR_MEM_EXPANDABLE) {
            if (b->prev != NONE) m->blocks[b->prev].next = NONE;
            if (b->next != NONE) m->blocks[b->next].prev = NONE;
            m->reserved_bytes -= b->size;
            block_release(m, id);
        } else {
            m->free_set[k++] = id;
        }
    }
    m->nfree = k;
}

/* ---- samples and peaks ---- */

/* One sample per change. Several at one instant (a free and an allocation at the same host time)
 * are spread 1 ps apart, so a counter track shows each, and its maxima are the peaks. */
static void sample(orr_memtrack *m, int64_t t_ps)
{
    orr_mem_rank *o = m->out;
    if (o->nsamples > 0 && t_ps <= o->samples[o->nsamples - 1].t_ps) t_ps = o->samples[o->nsamples - 1].t_ps + 1;
    orr_mem_sample s = {t_ps, m->allocated_bytes, m->reserved_bytes};
    ORR_PUSH(o->samples, o->nsamples, o->cap_samples, s);
}

/* The peak's moment is the allocated peak: what is live then, by category, and the allocator's
 * overhead as peak reserved minus peak allocated, so that the breakdown sums to the peak reserved.
 * (Reserved only grows between releases; the moment it last grew is often a small segment long
 * after the live peak and says little about what filled the memory.) */
static void note_peak(orr_memtrack *m, int64_t t_ps, uint32_t op)
{
    orr_mem_rank *o = m->out;
    if (m->allocated_bytes > o->peak_allocated_bytes) {
        o->peak_allocated_bytes = m->allocated_bytes;
        o->peak_t_ps = t_ps;
        o->peak_op = op;
        memcpy(o->peak_cat_bytes, m->cat_bytes, sizeof o->peak_cat_bytes);
    }
    if (m->reserved_bytes > o->peak_reserved_bytes) o->peak_reserved_bytes = m->reserved_bytes;
    o->peak_overhead_bytes = o->peak_reserved_bytes - o->peak_allocated_bytes;
}

static void note_oom(orr_memtrack *m, uint64_t bytes, int64_t t_ps, uint32_t op)
{
    orr_mem_rank *o = m->out;
    if (o->oom) return;
    o->oom = 1;
    o->oom_op = op;
    o->oom_t_ps = t_ps;
    o->oom_bytes = bytes;
    o->oom_in_use_bytes = m->reserved_bytes;
}

int orr_mem_alloc(orr_memtrack *m, uint32_t buf, uint64_t bytes, orr_mem_cat cat, uint8_t stream, int64_t t_ps,
                  uint32_t op)
{
    if (buf >= m->nbufs || m->buf_block[buf] != NONE || (unsigned)cat >= ORR_MEM_CAT_COUNT) return -1;
    int rc = m->out->oom ? 1 : 0;
    m->buf_bytes[buf] = bytes;
    m->buf_cat[buf] = (uint8_t)cat;
    m->allocated_bytes += bytes;
    m->cat_bytes[cat] += bytes;
    if (!m->caching) {
        m->buf_block[buf] = 0; /* live marker */
        m->reserved_bytes = m->allocated_bytes;
        if (m->capacity_bytes && m->reserved_bytes > m->capacity_bytes && !m->out->oom) {
            m->reserved_bytes -= bytes;
            note_oom(m, bytes, t_ps, op);
            m->reserved_bytes += bytes;
            rc = 1;
        }
        note_peak(m, t_ps, op);
        sample(m, t_ps);
        return rc;
    }
    uint64_t need = orr_mem_round(bytes);
    uint8_t small = need <= SMALL_SIZE;
    uint32_t id = best_fit(m, stream, small, need);
    if (id == NONE) {
        uint64_t seg = orr_mem_segment_size(need);
        if (m->capacity_bytes && m->reserved_bytes + seg > m->capacity_bytes) {
            release_cached_segments(m);
            if (m->reserved_bytes + seg > m->capacity_bytes) {
                note_oom(m, bytes, t_ps, op);
                rc = 1;
            }
        }
        id = block_new(m);
        orr_mem_block *b = &m->blocks[id];
        b->size = seg;
        b->stream = stream;
        b->small = small;
        m->reserved_bytes += seg;
    } else {
        free_set_remove(m, id);
    }
    orr_mem_block *b = &m->blocks[id];
    uint64_t rest = b->size - need;
    if (small ? rest >= MIN_BLOCK : rest > SMALL_SIZE) { /* split: the remainder stays cached */
        uint32_t nid = block_new(m);
        b = &m->blocks[id]; /* the pool may have moved */
        orr_mem_block *n = &m->blocks[nid];
        n->size = rest;
        n->stream = b->stream;
        n->small = b->small;
        n->prev = id;
        n->next = b->next;
        if (b->next != NONE) m->blocks[b->next].prev = nid;
        b->next = nid;
        b->size = need;
        free_set_insert(m, nid);
    }
    m->blocks[id].allocated = 1;
    m->buf_block[buf] = id;
    note_peak(m, t_ps, op);
    sample(m, t_ps);
    return rc;
}

int orr_mem_release(orr_memtrack *m, uint32_t buf, int64_t t_ps)
{
    if (buf >= m->nbufs || m->buf_block[buf] == NONE) return -1;
    m->allocated_bytes -= m->buf_bytes[buf];
    m->cat_bytes[m->buf_cat[buf]] -= m->buf_bytes[buf];
    uint32_t id = m->buf_block[buf];
    m->buf_block[buf] = NONE;
    if (!m->caching) {
        m->reserved_bytes = m->allocated_bytes;
        sample(m, t_ps);
        return 0;
    }
    orr_mem_block *b = &m->blocks[id];
    b->allocated = 0;
    /* merge with free neighbours */
    uint32_t nx = b->next;
    if (nx != NONE && !m->blocks[nx].allocated) {
        free_set_remove(m, nx);
        b = &m->blocks[id];
        b->size += m->blocks[nx].size;
        b->next = m->blocks[nx].next;
        if (b->next != NONE) m->blocks[b->next].prev = id;
        block_release(m, nx);
    }
    uint32_t pv = b->prev;
    if (pv != NONE && !m->blocks[pv].allocated) {
        free_set_remove(m, pv);
        orr_mem_block *p = &m->blocks[pv];
        p->size += m->blocks[id].size;
        p->next = m->blocks[id].next;
        if (p->next != NONE) m->blocks[p->next].prev = pv;
        block_release(m, id);
        id = pv;
    }
    free_set_insert(m, id);
    sample(m, t_ps);
    return 0;
}
