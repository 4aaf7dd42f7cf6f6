/*
 * memory.h - the per-GPU memory tracker: plays a rank's ALLOC/FREE ops in host order (as PyTorch
 * allocates, when the host thread asks) and models PyTorch's CUDA caching allocator:
 *   - requests rounded up to 512 bytes; small pool (<= 1 MiB) and large pool per stream;
 *   - new segments of 2 MiB (small), 20 MiB (large requests under 10 MiB) or the request rounded
 *     up to 2 MiB; best-fit reuse of cached blocks (smallest that fits, same stream and pool);
 *     blocks split when the remainder is >= 512 B (small) or > 1 MiB (large); freed blocks merge
 *     with free neighbours of the same segment;
 *   - when a new segment would exceed the capacity, every fully free cached segment is released
 *     and the request retried; if it still does not fit, that allocation is the out-of-memory one.
 * With caching off, reserved == allocated (raw live bytes, no rounding). With expandable segments
 * (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: each stream's pool one virtual range whose pages
 * are mapped on demand), the release under pressure unmaps every free cached block, not only whole
 * free segments (release_expandable_segment unmaps the whole pages inside each; modelled as the whole
 * block), so fragmentation no longer makes an allocation fail: a block next to an unmapped one is not
 * merged across it (its pages would need mapping again).
 *
 * After an OOM the tracker goes on (the allocation is granted beyond capacity), so the peak shows
 * how much the job would need; the first failing allocation is recorded.
 */
#ifndef ORRERY_MEMORY_H
#define ORRERY_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include "orrery/workload.h"

typedef struct orr_mem_sample {
    int64_t t_ps;
    uint64_t allocated_bytes, reserved_bytes;
} orr_mem_sample;

/* What one rank's memory did in one iteration. */
typedef struct orr_mem_rank {
    uint64_t peak_allocated_bytes;
    uint64_t peak_reserved_bytes;
    int64_t peak_t_ps;                       /* when allocated peaked (the breakdown's moment) */
    uint32_t peak_op;                        /* the ALLOC op that made that peak */
    uint64_t peak_cat_bytes[ORR_MEM_CAT_COUNT]; /* allocated bytes per category at that moment */
    uint64_t peak_overhead_bytes;            /* peak reserved - peak allocated */
    int oom;                                 /* an allocation did not fit */
    uint32_t oom_op;                         /* the first one */
    int64_t oom_t_ps;
    uint64_t oom_bytes;                      /* its size */
    uint64_t oom_in_use_bytes;               /* reserved (or allocated) just before it */
    orr_mem_sample *samples;                 /* one per ALLOC/FREE, in order (1 ps apart at one instant) */
    size_t nsamples, cap_samples;
} orr_mem_rank;

typedef struct orr_mem_block orr_mem_block;

typedef struct orr_memtrack {
    uint64_t capacity_bytes; /* 0: unlimited */
    int caching;
    uint64_t allocated_bytes, reserved_bytes;
    uint64_t cat_bytes[ORR_MEM_CAT_COUNT];
    /* buffers: buffer id -> block (caching) and size/category */
    uint32_t nbufs;
    uint32_t *buf_block;   /* NONE if not live */
    uint64_t *buf_bytes;
    uint8_t *buf_cat;
    /* blocks (pool with free list) and the free-block index sorted by (stream, pool, size, id) */
    orr_mem_block *blocks;
    size_t nblocks, cap_blocks;
    uint32_t block_free;
    uint32_t *free_set;
    size_t nfree, cap_free;
    orr_mem_rank *out;
} orr_memtrack;

/* Starts tracking for a rank with buffer ids 0..nbufs-1; results go to out (zeroed here). */
/* caching: 0 raw live bytes, ORR_MEM_CACHING the caching allocator, ORR_MEM_EXPANDABLE with expandable segments */
enum { ORR_MEM_CACHING = 1, ORR_MEM_EXPANDABLE = 2 };
void orr_mem_init(orr_memtrack *m, uint32_t nbufs, uint64_t capacity_bytes, int caching, orr_mem_rank *out);
void orr_mem_free_tracker(orr_memtrack *m);
/* Returns 0 if it fits, 1 if it is (or follows) an out-of-memory, -1 if buf is out of range or
 * already live (a workload error). */
int orr_mem_alloc(orr_memtrack *m, uint32_t buf, uint64_t bytes, orr_mem_cat cat, uint8_t stream, int64_t t_ps,
                  uint32_t op);
/* Returns 0, or -1 if buf is not live. */
int orr_mem_release(orr_memtrack *m, uint32_t buf, int64_t t_ps);
void orr_mem_rank_free(orr_mem_rank *r);

/* PyTorch's rounding and segment sizes (exposed for tests). */
uint64_t orr_mem_round(uint64_t bytes);
uint64_t orr_mem_segment_size(uint64_t rounded_bytes);


#endif
