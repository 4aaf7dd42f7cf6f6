/*
 * Tests of the memory tracker (src/exec/memory.c): PyTorch caching-allocator rounding and segment
 * sizes, block reuse (best fit, split, merge, per-stream pools), reserved vs allocated, the peak and
 * its moment and op, the OOM verdict naming the first allocation that does not fit (after cached
 * segments are released), the raw mode, and workload errors (double alloc, free of a dead buffer).
 * Also the executor playing ALLOC/FREE ops of a workload in host order.
 */
#include "check.h"
#include "orrery/exec.h"
#include "orrery/memory.h"

#include <string.h>

#define MiB (1ull << 20)

static void test_rounding(void)
{
    CHECK_EQ_I64(orr_mem_round(1), 512);
    CHECK_EQ_I64(orr_mem_round(512), 512);
    CHECK_EQ_I64(orr_mem_round(513), 1024);
    CHECK_EQ_I64(orr_mem_segment_size(512), 2 * MiB);
    CHECK_EQ_I64(orr_mem_segment_size(MiB), 2 * MiB);
    CHECK_EQ_I64(orr_mem_segment_size(MiB + 512), 20 * MiB);
    CHECK_EQ_I64(orr_mem_segment_size(10 * MiB - 512), 20 * MiB);
    CHECK_EQ_I64(orr_mem_segment_size(10 * MiB), 10 * MiB);
    CHECK_EQ_I64(orr_mem_segment_size(11 * MiB + 1), 12 * MiB);
}

static void test_caching(void)
{
    orr_memtrack m;
    orr_mem_rank r;
    orr_mem_init(&m, 8, 0, 1, &r);
    /* a 100-byte tensor takes a 2 MiB small segment; a second one reuses the same segment */
    CHECK_EQ_I64(orr_mem_alloc(&m, 0, 100, ORR_MEM_ACT, 0, 10, 1), 0);
    CHECK_EQ_I64(m.allocated_bytes, 100);
    CHECK_EQ_I64(m.reserved_bytes, 2 * MiB);
    CHECK_EQ_I64(orr_mem_alloc(&m, 1, 1000, ORR_MEM_ACT, 0, 20, 2), 0);
    CHECK_EQ_I64(m.reserved_bytes, 2 * MiB);
    /* 3 MiB: large pool, under 10 MiB -> a 20 MiB segment, split (17 MiB remainder cached) */
    CHECK_EQ_I64(orr_mem_alloc(&m, 2, 3 * MiB, ORR_MEM_PARAM, 0, 30, 3), 0);
    CHECK_EQ_I64(m.reserved_bytes, 22 * MiB);
    /* 15 MiB fits in the 17 MiB remainder */
    CHECK_EQ_I64(orr_mem_alloc(&m, 3, 15 * MiB, ORR_MEM_GRAD, 0, 40, 4), 0);
    CHECK_EQ_I64(m.reserved_bytes, 22 * MiB);
    CHECK_EQ_I64(r.peak_reserved_bytes, 22 * MiB);
    /* the same size on another stream cannot use stream 0's cache */
    CHECK_EQ_I64(orr_mem_alloc(&m, 4, 15 * MiB, ORR_MEM_COMM, 1, 50, 5), 0);
    CHECK_EQ_I64(m.reserved_bytes, 22 * MiB + 16 * MiB);
    CHECK_EQ_I64(r.peak_t_ps, 50);
    CHECK_EQ_I64(r.peak_op, 5);
    CHECK_EQ_I64(r.peak_cat_bytes[ORR_MEM_COMM], 15 * MiB);
    CHECK_EQ_I64(r.peak_cat_bytes[ORR_MEM_ACT], 1100);
    CHECK_EQ_I64(r.peak_overhead_bytes, r.peak_reserved_bytes - r.peak_allocated_bytes);
    /* frees keep the segments reserved; after merging, 20 MiB is available again as one block */
    CHECK_EQ_I64(orr_mem_release(&m, 2, 60), 0);
    CHECK_EQ_I64(orr_mem_release(&m, 3, 61), 0);
    CHECK_EQ_I64(m.reserved_bytes, 22 * MiB + 16 * MiB);
    CHECK_EQ_I64(orr_mem_alloc(&m, 2, 19 * MiB, ORR_MEM_TEMP, 0, 70, 6), 0);
    CHECK_EQ_I64(m.reserved_bytes, 22 * MiB + 16 * MiB);
    /* errors */
    CHECK_EQ_I64(orr_mem_alloc(&m, 2, 1, ORR_MEM_TEMP, 0, 80, 7), -1); /* live */
    CHECK_EQ_I64(orr_mem_release(&m, 3, 80), -1);                     /* dead */
    CHECK_EQ_I64(orr_mem_alloc(&m, 8, 1, ORR_MEM_TEMP, 0, 80, 7), -1); /* out of range */
    CHECK(r.nsamples >= 8);
    CHECK(r.samples[r.nsamples - 1].reserved_bytes == m.reserved_bytes);
    /* allocations at one instant each leave a sample, 1 ps apart: the counter's maxima are the peaks */
    orr_mem_free_tracker(&m);
    orr_mem_rank_free(&r);
    orr_mem_init(&m, 4, 0, 1, &r);
    CHECK_EQ_I64(orr_mem_alloc(&m, 0, 8 * MiB, ORR_MEM_TEMP, 0, 100, 1), 0);
    CHECK_EQ_I64(orr_mem_alloc(&m, 1, 8 * MiB, ORR_MEM_TEMP, 0, 100, 2), 0);
    CHECK_EQ_I64(orr_mem_release(&m, 0, 100), 0);
    CHECK_EQ_I64(orr_mem_release(&m, 1, 100), 0);
    uint64_t max_alloc = 0;
    for (size_t i = 0; i < r.nsamples; i++) {
        if (r.samples[i].allocated_bytes > max_alloc) max_alloc = r.samples[i].allocated_bytes;
        CHECK(i == 0 || r.samples[i].t_ps == r.samples[i - 1].t_ps + 1);
    }
    CHECK_EQ_I64(r.nsamples, 4);
    CHECK_EQ_I64(max_alloc, r.peak_allocated_bytes);
    CHECK_EQ_I64(max_alloc, 16 * MiB);
    orr_mem_free_tracker(&m);
    orr_mem_rank_free(&r);
}

/* Best fit picks the smallest cached block that fits, not the first. */
static void test_best_fit(void)
{
    orr_memtrack m;
    orr_mem_rank r;
    orr_mem_init(&m, 8, 0, 1, &r);
    orr_mem_alloc(&m, 0, 40 * MiB, ORR_MEM_ACT, 0, 0, 0);
    orr_mem_alloc(&m, 1, 12 * MiB, ORR_MEM_ACT, 0, 0, 1);
    orr_mem_release(&m, 0, 1);
    orr_mem_release(&m, 1, 1);
    CHECK_EQ_I64(m.reserved_bytes, 52 * MiB);
    orr_mem_alloc(&m, 2, 11 * MiB, ORR_MEM_ACT, 0, 2, 2);
    orr_mem_alloc(&m, 3, 39 * MiB, ORR_MEM_ACT, 0, 3, 3); /* 11 MiB came from the 12 MiB block, so 40 MiB is whole */
    CHECK_EQ_I64(m.reserved_bytes, 52 * MiB);
    orr_mem_free_tracker(&m);
    orr_mem_rank_free(&r);
}

static void test_oom(void)
{
    orr_memtrack m;
    orr_mem_rank r;
    /* capacity 100 MiB: 60 MiB live + 30 MiB cached; a 50 MiB request first releases the cache,
     * still fails -> OOM at that op; the tracker goes on beyond capacity. */
    orr_mem_init(&m, 8, 100 * MiB, 1, &r);
    CHECK_EQ_I64(orr_mem_alloc(&m, 0, 60 * MiB, ORR_MEM_PARAM, 0, 0, 10), 0);
    CHECK_EQ_I64(orr_mem_alloc(&m, 1, 30 * MiB, ORR_MEM_ACT, 0, 5, 11), 0);
    CHECK_EQ_I64(orr_mem_release(&m, 1, 6), 0);
    CHECK_EQ_I64(orr_mem_alloc(&m, 2, 30 * MiB, ORR_MEM_ACT, 1, 7, 12), 0); /* other stream: cache freed, fits */
    CHECK_EQ_I64(m.reserved_bytes, 90 * MiB);
    CHECK(!r.oom);
    CHECK_EQ_I64(orr_mem_alloc(&m, 3, 50 * MiB, ORR_MEM_TEMP, 0, 9, 13), 1);
    CHECK(r.oom);
    CHECK_EQ_I64(r.oom_op, 13);
    CHECK_EQ_I64(r.oom_t_ps, 9);
    CHECK_EQ_I64(r.oom_bytes, 50 * MiB);
    CHECK_EQ_I64(r.oom_in_use_bytes, 90 * MiB);
    CHECK_EQ_I64(r.peak_reserved_bytes, 140 * MiB);
    CHECK_EQ_I64(orr_mem_alloc(&m, 4, 1, ORR_MEM_TEMP, 0, 10, 14), 1); /* after an OOM */
    CHECK_EQ_I64(r.oom_op, 13);
    orr_mem_free_tracker(&m);
    orr_mem_rank_free(&r);

    /* raw mode: no rounding, no segments */
    orr_mem_init(&m, 4, 1000, 0, &r);
    CHECK_EQ_I64(orr_mem_alloc(&m, 0, 600, ORR_MEM_PARAM, 0, 0, 0), 0);
    CHECK_EQ_I64(m.reserved_bytes, 600);
    CHECK_EQ_I64(orr_mem_alloc(&m, 1, 300, ORR_MEM_ACT, 0, 1, 1), 0);
    CHECK_EQ_I64(orr_mem_release(&m, 1, 2), 0);
    CHECK_EQ_I64(orr_mem_alloc(&m, 1, 401, ORR_MEM_ACT, 0, 3, 2), 1);
    CHECK_EQ_I64(r.oom_op, 2);
    CHECK_EQ_I64(r.peak_allocated_bytes, 1001);
    CHECK_EQ_I64(r.peak_t_ps, 3);
    orr_mem_free_tracker(&m);
    orr_mem_rank_free(&r);
}

/* PyTorch splits a large-pool block only when more than kSmallSize (1 MiB) would remain
 * (CUDACachingAllocator should_split): a 0.5 MiB tail stays inside the block that holds it, so a
 * neighbour freed later cannot borrow it. On one 20 MiB segment: q 9 + n 11; free q; y 8.5 MiB into
 * q's 9 (the 0.5 MiB tail not split off); free n: 11 MiB free, not 11.5; so 11.25 MiB needs a new
 * (12 MiB) segment. Splitting whenever 512 B would remain would serve it from y's tail + n. */
/* Fragmentation: ten 4 MiB blocks fill two 20 MiB segments; every other one freed leaves 20 MiB in
 * holes but no segment wholly free. A 30 MiB request in a 60 MiB capacity then fails with the caching
 * allocator (40 + 30 reserved, nothing to release) and fits with expandable segments, whose release
 * unmaps the free blocks (20 + 30); a block next to an unmapped one is not merged across it. */
static void test_expandable(void)
{
    for (int mode = ORR_MEM_CACHING; mode <= ORR_MEM_EXPANDABLE; mode++) {
        orr_memtrack m;
        orr_mem_rank r;
        orr_mem_init(&m, 12, 60 * MiB, mode, &r);
        for (uint32_t i = 0; i < 10; i++) CHECK_EQ_I64(orr_mem_alloc(&m, i, 4 * MiB, ORR_MEM_ACT, 0, i, i), 0);
        CHECK_EQ_I64(m.reserved_bytes, 40 * MiB);
        for (uint32_t i = 0; i < 10; i += 2) CHECK_EQ_I64(orr_mem_release(&m, i, 20 + i), 0);
        int rc = orr_mem_alloc(&m, 10, 30 * MiB, ORR_MEM_ACT, 0, 40, 10);
        CHECK_EQ_I64(rc, mode == ORR_MEM_CACHING ? 1 : 0);
        CHECK_EQ_I64(r.oom, mode == ORR_MEM_CACHING);
        CHECK_EQ_I64(m.reserved_bytes, mode == ORR_MEM_CACHING ? 70 * MiB : 50 * MiB);
        if (mode == ORR_MEM_EXPANDABLE) { /* block 1's free neighbours are gone: freeing it merges nothing, */
            CHECK_EQ_I64(orr_mem_release(&m, 1, 50), 0);
            /* so 12 MiB does not fit it: a new range, block 1 unmapped under pressure (50 - 4 + 12) */
            CHECK_EQ_I64(orr_mem_alloc(&m, 11, 12 * MiB, ORR_MEM_ACT, 0, 51, 11), 0);
            CHECK_EQ_I64(m.reserved_bytes, 58 * MiB);
        }
        orr_mem_free_tracker(&m);
        orr_mem_rank_free(&r);
    }
}

static void test_no_large_split(void)
{
    orr_memtrack m;
    orr_mem_rank r;
    orr_mem_init(&m, 8, 0, 1, &r);
    CHECK_EQ_I64(orr_mem_alloc(&m, 0, 9 * MiB, ORR_MEM_ACT, 0, 10, 1), 0);
    CHECK_EQ_I64(orr_mem_alloc(&m, 1, 11 * MiB, ORR_MEM_ACT, 0, 20, 2), 0);
    CHECK_EQ_I64(m.reserved_bytes, 20 * MiB);
    CHECK_EQ_I64(orr_mem_release(&m, 0, 30), 0);
    CHECK_EQ_I64(orr_mem_alloc(&m, 2, 17 * MiB / 2, ORR_MEM_ACT, 0, 40, 3), 0); /* 8.5 MiB */
    CHECK_EQ_I64(m.reserved_bytes, 20 * MiB);
    CHECK_EQ_I64(orr_mem_release(&m, 1, 50), 0);
    CHECK_EQ_I64(orr_mem_alloc(&m, 3, 45 * MiB / 4, ORR_MEM_ACT, 0, 60, 4), 0); /* 11.25 MiB */
    CHECK_EQ_I64(m.reserved_bytes, 32 * MiB); /* a second segment of 12 MiB */
    orr_mem_free_tracker(&m);
    orr_mem_rank_free(&r);
}

/* The peak's moment is the allocated peak, even when reserved grows later (a small segment after
 * the live peak): the breakdown describes what was live, and the overhead is peak reserved minus
 * peak allocated. */
static void test_peak_moment(void)
{
    orr_memtrack m;
    orr_mem_rank r;
    orr_mem_init(&m, 4, 0, 1, &r);
    CHECK_EQ_I64(orr_mem_alloc(&m, 0, 20 * MiB, ORR_MEM_ACT, 0, 10, 1), 0);
    CHECK_EQ_I64(orr_mem_alloc(&m, 1, 16 * MiB, ORR_MEM_TEMP, 0, 20, 2), 0);
    CHECK_EQ_I64(orr_mem_release(&m, 1, 30), 0);
    CHECK_EQ_I64(orr_mem_release(&m, 0, 31), 0);
    CHECK_EQ_I64(orr_mem_alloc(&m, 2, 3 * MiB, ORR_MEM_GRAD, 1, 40, 3), 0); /* another stream: a new segment */
    CHECK_EQ_I64(r.peak_reserved_bytes, 56 * MiB);
    CHECK_EQ_I64(r.peak_allocated_bytes, 36 * MiB);
    CHECK_EQ_I64(r.peak_op, 2);
    CHECK_EQ_I64(r.peak_t_ps, 20);
    CHECK_EQ_I64(r.peak_cat_bytes[ORR_MEM_TEMP], 16 * MiB);
    CHECK_EQ_I64(r.peak_cat_bytes[ORR_MEM_GRAD], 0);
    CHECK_EQ_I64(r.peak_overhead_bytes, 20 * MiB);
    orr_mem_free_tracker(&m);
    orr_mem_rank_free(&r);
}

/* The executor plays ALLOC/FREE in host order: the peak is at the op that made it, and a free of a
 * buffer that is not live is an error naming the rank and op. */
static orr_op mk(orr_op_kind kind, uint32_t buf, uint64_t bytes, orr_mem_cat cat, int64_t dur)
{
    orr_op op;
    memset(&op, 0, sizeof op);
    op.kind = (uint8_t)kind;
    op.a = buf;
    op.bytes = bytes;
    op.cls = (uint8_t)cat;
    op.dur_ps = dur;
    op.layer = ORR_NO_LAYER;
    op.mb = ORR_NO_MB;
    return op;
}

static void test_exec(void)
{
    orr_gpu g;
    orr_cluster c;
    memset(&g, 0, sizeof g);
    memset(&c, 0, sizeof c);
    c.gpus_per_node = 8;
    orr_workload *w = orr_workload_new(1, 8);
    orr_workload_add_rank(w, 0, 1, "r0");
    orr_rank *rk = &w->ranks[0];
    orr_op ops[] = {mk(ORR_OP_ALLOC, 0, 10 * MiB, ORR_MEM_PARAM, 0), mk(ORR_OP_HOST, 0, 0, 0, 1000),
                    mk(ORR_OP_ALLOC, 1, 20 * MiB, ORR_MEM_ACT, 0),   mk(ORR_OP_HOST, 0, 0, 0, 1000),
                    mk(ORR_OP_FREE, 1, 20 * MiB, ORR_MEM_ACT, 0),    mk(ORR_OP_ALLOC, 2, 4 * MiB, ORR_MEM_TEMP, 0)};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) orr_rank_push(rk, &ops[i]);
    orr_err err;
    CHECK(orr_workload_finalize(w, &err) == 0);
    orr_exec_opts o = {.net = ORR_NET_ANALYTIC, .mem_capacity_bytes = 25 * MiB};
    orr_exec_result res;
    int rc = orr_execute(w, &g, &c, &o, &res, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc == 0) {
        const orr_mem_rank *m = &res.ranks[0].mem;
        CHECK_EQ_I64(m->peak_allocated_bytes, 30 * MiB);
        CHECK_EQ_I64(m->peak_op, 2);
        CHECK_EQ_I64(m->peak_t_ps, 1000);
        CHECK(m->oom);
        CHECK_EQ_I64(m->oom_op, 2);
        orr_exec_result_free(&res);
    }
    /* a free of a dead buffer */
    orr_op bad = mk(ORR_OP_FREE, 1, 0, ORR_MEM_ACT, 0);
    orr_rank_push(rk, &bad);
    CHECK(orr_workload_finalize(w, &err) == 0);
    rc = orr_execute(w, &g, &c, &o, &res, &err);
    CHECK_MSG(rc == -1 && strstr(err.msg, "op 6 frees buffer 1, which is not allocated"), "%s", err.msg);
    orr_workload_free(w);
}

int main(void)
{
    test_rounding();
    test_caching();
    test_peak_moment();
    test_expandable();
    test_no_large_split();
    test_best_fit();
    test_oom();
    test_exec();
    return check_done();
}
