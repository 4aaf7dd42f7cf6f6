/* Executor semantics: stream order, the compute engine, event waits (CUDA semantics), host syncs,
 * the launch queue's bound on how far the host runs ahead, collective rendezvous with a late rank,
 * p2p matching and batching, deadlock detection, determinism. Times are checked exactly against
 * hand-computed values. */
#include "check.h"
#include "orrery/comm.h"
#include "orrery/exec.h"
#include "orrery/report.h"
#include "orrery/workload.h"

#include <string.h>

#define US ORR_PS_PER_US

static orr_gpu gpu;
static orr_cluster cl;

static void hw_init(void)
{
    memset(&gpu, 0, sizeof gpu);
    snprintf(gpu.name, sizeof gpu.name, "test-gpu");
    gpu.sms = 100;
    gpu.hbm_Bps = 2e12;
    gpu.nvlink_Bps = 300e9;
    gpu.peak_flops[ORR_BF16] = 300e12;
    gpu.gemm_eff = gpu.attn_fwd_eff = gpu.attn_bwd_eff = gpu.mem_eff = 1.0;
    gpu.gemm_tile_m = gpu.gemm_tile_n = 128;
    memset(&cl, 0, sizeof cl);
    snprintf(cl.name, sizeof cl.name, "test-cluster");
    cl.gpus_per_node = 8;
    cl.nic_Bps = 25e9;
    cl.nvlink_eff = cl.net_eff = 1.0;
    cl.nvlink_lat_ps = 1 * US;
    cl.net_lat_ps = 3 * US;
    cl.coll_base_ps = 5 * US;
    cl.p2p_base_ps = 4 * US;
}

static orr_op mk(orr_op_kind kind, uint8_t stream, int64_t dur_ps)
{
    orr_op op;
    memset(&op, 0, sizeof op);
    op.kind = (uint8_t)kind;
    op.stream = stream;
    op.dur_ps = dur_ps;
    op.mb = ORR_NO_MB;
    op.layer = ORR_NO_LAYER;
    return op;
}

static orr_op mk_a(orr_op_kind kind, uint8_t stream, uint32_t a)
{
    orr_op op = mk(kind, stream, 0);
    op.a = a;
    return op;
}

/* Two ranks, r0 and r1 (GPUs 0 and 1), and a group of both with the given role and label. */
static orr_workload *two_ranks(orr_comm_role role, const char *label, uint32_t *group)
{
    orr_workload *w = orr_workload_new(2, 8);
    orr_workload_add_rank(w, 0, 1, "r0");
    orr_workload_add_rank(w, 1, 1, "r1");
    uint32_t m[2] = {0, 1};
    *group = orr_workload_add_group(w, role, m, 2, label);
    return w;
}

static int run_q(orr_workload *w, int64_t launch_ps, uint32_t queue_depth, orr_exec_result *x, orr_err *err)
{
    if (orr_workload_finalize(w, err) < 0) return -1;
    orr_exec_opts o = {.net = ORR_NET_ANALYTIC, .launch_ps = launch_ps, .launch_queue_depth = queue_depth};
    return orr_execute(w, &gpu, &cl, &o, x, err);
}

static int run(orr_workload *w, int64_t launch_ps, orr_exec_result *x, orr_err *err)
{
    return run_q(w, launch_ps, 0, x, err);
}

static void test_stream_order_and_engine(void)
{
    orr_workload *w = orr_workload_new(1, 8);
    orr_workload_add_rank(w, 0, 1, "r0");
    orr_rank *r = &w->ranks[0];
    orr_op k;
    k = mk(ORR_OP_KERNEL, 0, 10 * US); orr_rank_push(r, &k);   /* 0: s0 */
    k = mk(ORR_OP_KERNEL, 0, 5 * US);  orr_rank_push(r, &k);   /* 1: s0 after 0 */
    k = mk(ORR_OP_KERNEL, 1, 7 * US);  orr_rank_push(r, &k);   /* 2: s1, engine busy until 0 ends */
    k = mk(ORR_OP_MEMCPY, 2, 3 * US);  orr_rank_push(r, &k);   /* 3: s2 copy, runs concurrently */
    orr_exec_result x;
    orr_err err;
    CHECK(run(w, 1 * US, &x, &err) == 0);
    orr_op_time *t = x.ranks[0].t;
    CHECK_EQ_I64(t[0].issue_ps, 1 * US);
    CHECK_EQ_I64(t[0].start_ps, 1 * US);
    CHECK_EQ_I64(t[0].end_ps, 11 * US);
    /* op 2 was ready at 3 us but waited for the engine; FIFO: op 2 queued before op 1 was ready */
    CHECK_EQ_I64(t[2].ready_ps, 3 * US);
    CHECK_EQ_I64(t[2].start_ps, 11 * US);
    CHECK_EQ_I64(t[2].dep_kind, ORR_DEP_ENGINE);
    CHECK_EQ_I64(t[1].start_ps, 18 * US);
    CHECK_EQ_I64(t[1].end_ps, 23 * US);
    CHECK_EQ_I64(t[3].start_ps, 4 * US);
    CHECK_EQ_I64(t[3].end_ps, 7 * US);
    CHECK_EQ_I64(x.makespan_ps, 23 * US);
    orr_exec_result_free(&x);
    orr_workload_free(w);
}

static void test_events_and_host_sync(void)
{
    orr_workload *w = orr_workload_new(1, 8);
    orr_workload_add_rank(w, 0, 1, "r0");
    orr_rank *r = &w->ranks[0];
    orr_op k;
    k = mk_a(ORR_OP_STREAM_WAIT, 1, 0);   orr_rank_push(r, &k); /* 0: waits for no record yet: passes */
    k = mk(ORR_OP_MEMCPY, 1, 2 * US);     orr_rank_push(r, &k); /* 1: starts at once */
    k = mk(ORR_OP_KERNEL, 0, 10 * US);    orr_rank_push(r, &k); /* 2 */
    k = mk_a(ORR_OP_EVENT_RECORD, 0, 0);  orr_rank_push(r, &k); /* 3: record after op 2 */
    k = mk_a(ORR_OP_STREAM_WAIT, 1, 0);   orr_rank_push(r, &k); /* 4: s1 waits for record 3 */
    k = mk(ORR_OP_MEMCPY, 1, 4 * US);     orr_rank_push(r, &k); /* 5: after op 2 */
    k = mk_a(ORR_OP_EVENT_SYNC, 0, 0);    orr_rank_push(r, &k); /* 6: host blocks until op 2 */
    k = mk(ORR_OP_HOST, 0, 3 * US);       orr_rank_push(r, &k); /* 7: host work */
    k = mk(ORR_OP_KERNEL, 0, 1 * US);     orr_rank_push(r, &k); /* 8 */
    k = mk(ORR_OP_DEVICE_SYNC, 0, 0);     orr_rank_push(r, &k); /* 9 */
    orr_exec_result x;
    orr_err err;
    CHECK(run(w, 1 * US, &x, &err) == 0);
    orr_op_time *t = x.ranks[0].t;
    CHECK_EQ_I64(t[1].start_ps, 1 * US);
    CHECK_EQ_I64(t[2].start_ps, 2 * US);
    CHECK_EQ_I64(t[2].end_ps, 12 * US);
    CHECK_EQ_I64(t[5].start_ps, 12 * US);
    CHECK_EQ_I64(t[5].end_ps, 16 * US);
    CHECK_EQ_I64(t[4].dep_kind, ORR_DEP_EVENT);
    CHECK_EQ_I64(t[4].dep_op, 3);
    CHECK_EQ_I64(t[6].end_ps, 12 * US);     /* host released when the record completed */
    CHECK_EQ_I64(t[7].start_ps, 12 * US);
    CHECK_EQ_I64(t[8].issue_ps, 16 * US);   /* 12 + 3 host + 1 launch */
    CHECK_EQ_I64(t[8].end_ps, 17 * US);
    CHECK_EQ_I64(t[9].end_ps, 17 * US);     /* device sync waits for the copy (16) and kernel (17) */
    CHECK_EQ_I64(x.makespan_ps, 17 * US);
    orr_exec_result_free(&x);
    orr_workload_free(w);
}

/* A launch into a stream holding queue-depth unfinished ops blocks the host until the oldest
 * finishes; the host's later work (an allocation, a launch on another stream) waits with it, and
 * the critical path goes from the blocked launch to the op that released it, not along the host. */
static void test_launch_queue(void)
{
    orr_workload *w = orr_workload_new(1, 8);
    orr_workload_add_rank(w, 0, 1, "r0");
    orr_rank *r = &w->ranks[0];
    orr_op k;
    for (int i = 0; i < 10; i++) {
        k = mk(ORR_OP_KERNEL, 0, 10 * US); orr_rank_push(r, &k); /* 0-9 */
    }
    k = mk_a(ORR_OP_ALLOC, 0, 0);     k.bytes = 1024; orr_rank_push(r, &k); /* 10 */
    k = mk(ORR_OP_MEMCPY, 1, 1 * US); orr_rank_push(r, &k);                 /* 11 */
    k = mk(ORR_OP_HOST, 0, 100 * US); orr_rank_push(r, &k);                 /* 12 */
    orr_exec_result x;
    orr_err err;
    CHECK(run_q(w, 1 * US, 4, &x, &err) == 0);
    orr_op_time *t = x.ranks[0].t;
    /* 0-3 launched at 1-4 us; kernel i runs [1 + 10i, 11 + 10i); launch i >= 4 waits for i - 4 */
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_I64(t[i].issue_ps, (i + 1) * US);
        CHECK_EQ_I64(t[i].queue_op, 0);
    }
    for (int i = 4; i < 10; i++) {
        CHECK_EQ_I64(t[i].issue_ps, (1 + 10 * (i - 3) + 1) * US);
        CHECK_EQ_I64(t[i].queue_op, i - 4 + 1);
    }
    CHECK_EQ_I64(t[9].end_ps, 101 * US);
    CHECK_EQ_I64(t[10].start_ps, 62 * US); /* the allocation happens when the host gets there */
    CHECK_EQ_I64(t[11].start_ps, 63 * US);
    CHECK_EQ_I64(t[12].end_ps, 163 * US);
    CHECK_EQ_I64(x.makespan_ps, 163 * US);
    orr_result res;
    CHECK(orr_result_build(&res, w, &x, NULL, &err) == 0);
    /* host op 12, two launches after kernel 5 ended (61 -> 63 us), kernels 5..0 back to back, and
     * the first launch: 100 + 2 + 1 us of host, 60 us of compute */
    CHECK_EQ_I64(res.cp.ps[ORR_CP_COMPUTE], 60 * US);
    CHECK_EQ_I64(res.cp.ps[ORR_CP_HOST], 103 * US);
    orr_result_free(&res);
    orr_exec_result_free(&x);
    /* unbounded, the host runs ahead: everything is launched by 11 us */
    CHECK(run(w, 1 * US, &x, &err) == 0);
    CHECK_EQ_I64(x.ranks[0].t[10].start_ps, 10 * US);
    CHECK_EQ_I64(x.makespan_ps, 111 * US);
    orr_exec_result_free(&x);
    orr_workload_free(w);
}

static void test_collective_late_rank(void)
{
    orr_workload *w = orr_workload_new(2, 8);
    orr_workload_add_rank(w, 0, 1, "r0");
    orr_workload_add_rank(w, 1, 1, "r1");
    orr_rank *r0 = &w->ranks[0], *r1 = &w->ranks[1];
    uint32_t m[2] = {0, 1};
    uint32_t g = orr_workload_add_group(w, ORR_ROLE_TP, m, 2, "tp");
    orr_op k = mk(ORR_OP_HOST, 0, 50 * US);
    orr_rank_push(r0, &k); /* rank 0 is late by 50 us of host work */
    orr_op c = mk_a(ORR_OP_COLL, 0, g);
    c.cls = ORR_COLL_ALLREDUCE;
    c.role = ORR_ROLE_TP;
    c.bytes = 64u << 20;
    orr_rank_push(r0, &c);
    orr_rank_push(r1, &c);
    orr_exec_result x;
    orr_err err;
    CHECK(run(w, 1 * US, &x, &err) == 0);
    orr_coll_desc d = {ORR_COLL_ALLREDUCE, 64u << 20, 2, 1, 2, ORR_ALGO_AUTO};
    int64_t dur = orr_comm_coll_ps(&gpu, &cl, &d, NULL);
    CHECK(dur > 0);
    orr_op_time *a = &x.ranks[0].t[1], *b = &x.ranks[1].t[0];
    CHECK_EQ_I64(a->start_ps, 51 * US);
    CHECK_EQ_I64(b->ready_ps, 1 * US);
    CHECK_EQ_I64(b->start_ps, 51 * US);   /* the early rank waits 50 us: a straggler wait */
    CHECK_EQ_I64(b->dep_kind, ORR_DEP_PEER);
    CHECK_EQ_I64(b->dep_rank, 0);
    CHECK_EQ_I64(a->end_ps, 51 * US + dur);
    CHECK_EQ_I64(b->end_ps, 51 * US + dur);
    orr_exec_result_free(&x);

    /* Symmetry: the same group with only rank 0 simulated rendezvouses with itself at once. */
    orr_workload *w1 = orr_workload_new(2, 8);
    orr_workload_add_rank(w1, 0, 2, "r0");
    orr_rank *s0 = &w1->ranks[0];
    c.a = orr_workload_add_group(w1, ORR_ROLE_TP, m, 2, "tp");
    orr_rank_push(s0, &c);
    CHECK(run(w1, 1 * US, &x, &err) == 0);
    CHECK_EQ_I64(w1->groups[0].nsim, 1);
    CHECK_EQ_I64(x.ranks[0].t[0].start_ps, 1 * US);
    CHECK_EQ_I64(x.ranks[0].t[0].end_ps, 1 * US + dur);
    orr_exec_result_free(&x);
    orr_workload_free(w1);
    orr_workload_free(w);
}

/* Compute under communication (docs/models.md, "Compute under communication"): a GEMM that starts
 * while an NCCL collective of its GPU is in flight is slowed by nccl_gemm_slowdown (the collective's
 * channels hold SMs the GEMM's tiles wait for), any other kernel by overlap_slowdown; beside
 * Transformer Engine's userbuffers (ORR_OPF_USERBUFFERS) a GEMM too only by overlap_slowdown; beside
 * DeepEP's exchange (ORR_OPF_DEEPEP) by deepep_gemm_slowdown, or nccl_gemm_slowdown where the GPU has
 * none. */
static void test_overlap_slowdown(void)
{
    static const uint8_t flags[4] = {0, ORR_OPF_USERBUFFERS, ORR_OPF_DEEPEP, ORR_OPF_DEEPEP};
    static const int64_t gemm_us[4] = {13, 11, 15, 13};
    gpu.overlap_slowdown = 0.10;
    gpu.nccl_gemm_slowdown = 0.30;
    for (int i = 0; i < 4; i++) {
        gpu.deepep_gemm_slowdown = i == 3 ? 0 : 0.50;
        orr_workload *w = orr_workload_new(2, 8);
        orr_workload_add_rank(w, 0, 2, "r0");
        uint32_t m[2] = {0, 1};
        orr_op c = mk_a(ORR_OP_COLL, 1, orr_workload_add_group(w, ORR_ROLE_DP, m, 2, "dp"));
        c.cls = ORR_COLL_ALLREDUCE;
        c.role = ORR_ROLE_DP;
        c.bytes = 256u << 20; /* far longer than the kernels */
        c.flags = flags[i];
        orr_rank_push(&w->ranks[0], &c);
        orr_op k = mk(ORR_OP_KERNEL, 0, 10 * US); /* cls 0: a GEMM */
        orr_rank_push(&w->ranks[0], &k);
        k.cls = ORR_CLS_ELEMENTWISE;
        orr_rank_push(&w->ranks[0], &k);
        orr_op after = mk(ORR_OP_KERNEL, 1, 10 * US); /* after the collective, on its stream: not slowed */
        orr_rank_push(&w->ranks[0], &after);
        orr_exec_result x;
        orr_err err;
        CHECK(run(w, 1 * US, &x, &err) == 0);
        orr_op_time *t = x.ranks[0].t;
        CHECK(t[0].end_ps > 30 * US);
        CHECK_EQ_I64(t[1].start_ps, 2 * US);
        CHECK_EQ_I64(t[1].end_ps - t[1].start_ps, gemm_us[i] * US);
        CHECK_EQ_I64(t[2].end_ps - t[2].start_ps, 11 * US);
        CHECK_EQ_I64(t[3].start_ps, t[0].end_ps);
        CHECK_EQ_I64(t[3].end_ps - t[3].start_ps, 10 * US);
        orr_exec_result_free(&x);
        orr_workload_free(w);
    }
    gpu.overlap_slowdown = gpu.nccl_gemm_slowdown = gpu.deepep_gemm_slowdown = 0;
}

static orr_op p2p(orr_op_kind kind, uint32_t peer, uint32_t tag, uint64_t bytes, int batch_next)
{
    orr_op op = mk_a(kind, 0, peer);
    op.seq = tag;
    op.bytes = bytes;
    op.role = ORR_ROLE_PP;
    op.flags = batch_next ? ORR_OPF_BATCH_NEXT : 0;
    return op;
}

/* A bound that a workload's order cannot live with (rank 0's queue is full behind a collective that
 * rank 1 joins only after a message rank 0 has yet to launch) is lifted rather than reported as a
 * deadlock: the run matches the unbounded one. */
static void test_launch_queue_lifted(void)
{
    uint32_t g;
    orr_workload *w = two_ranks(ORR_ROLE_DP, "dp", &g);
    orr_rank *r0 = &w->ranks[0], *r1 = &w->ranks[1];
    orr_op c = mk_a(ORR_OP_COLL, 0, g);
    c.bytes = 1024;
    orr_rank_push(r0, &c);
    orr_op k = mk(ORR_OP_KERNEL, 0, 5 * US);
    orr_rank_push(r0, &k);
    orr_rank_push(r0, &k);
    orr_op s = p2p(ORR_OP_SEND, 1, 0, 4096, 0), v = p2p(ORR_OP_RECV, 0, 0, 4096, 0);
    s.stream = v.stream = 1;
    orr_rank_push(r0, &s);
    orr_rank_push(r1, &v);
    c.stream = 1;
    orr_rank_push(r1, &c);
    orr_exec_result bounded, free_run;
    orr_err err = {{0}};
    CHECK_MSG(run_q(w, 1 * US, 2, &bounded, &err) == 0, "%s", err.msg);
    CHECK(run(w, 1 * US, &free_run, &err) == 0);
    CHECK_EQ_I64(bounded.makespan_ps, free_run.makespan_ps);
    orr_exec_result_free(&bounded);
    orr_exec_result_free(&free_run);
    orr_workload_free(w);
}

static void test_p2p(void)
{
    /* ranks 0 and 8 are on different nodes: the transfer crosses the network */
    orr_workload *w = orr_workload_new(16, 8);
    orr_workload_add_rank(w, 0, 1, "r0");
    orr_workload_add_rank(w, 8, 1, "r8");
    orr_rank *r0 = &w->ranks[0], *r1 = &w->ranks[1];
    orr_op k = mk(ORR_OP_KERNEL, 0, 20 * US);
    orr_rank_push(r0, &k);
    orr_op s = p2p(ORR_OP_SEND, 8, 0, 1 << 20, 0), rv = p2p(ORR_OP_RECV, 0, 0, 1 << 20, 0);
    orr_rank_push(r0, &s);
    orr_rank_push(r1, &rv);
    /* a second message with another tag, received in the opposite order of tags */
    orr_op s1 = p2p(ORR_OP_SEND, 8, 1, 2 << 20, 0), s2 = p2p(ORR_OP_SEND, 8, 2, 3 << 20, 0);
    orr_op v2 = p2p(ORR_OP_RECV, 0, 2, 3 << 20, 1), v1 = p2p(ORR_OP_RECV, 0, 1, 2 << 20, 0);
    orr_rank_push(r0, &s1);
    orr_rank_push(r0, &s2);
    orr_rank_push(r1, &v2); /* batched: both recvs posted together, matched by tag */
    orr_rank_push(r1, &v1);
    orr_exec_result x;
    orr_err err;
    CHECK(run(w, 1 * US, &x, &err) == 0);
    int64_t dur = orr_comm_p2p_ps(&gpu, &cl, 0, 8, 1 << 20);
    CHECK_EQ_I64(x.ranks[1].t[0].ready_ps, 1 * US);
    CHECK_EQ_I64(x.ranks[1].t[0].start_ps, 21 * US);
    CHECK_EQ_I64(x.ranks[1].t[0].dep_kind, ORR_DEP_PEER);
    CHECK_EQ_I64(x.ranks[1].t[0].end_ps, 21 * US + dur);
    CHECK_EQ_I64(x.ranks[0].t[1].end_ps, 21 * US + dur);
    CHECK(x.ranks[1].t[2].end_ps > 0 && x.ranks[1].t[1].end_ps > 0);
    orr_exec_result_free(&x);
    orr_workload_free(w);
}

/* Two stages exchanging in both directions: batched (as Megatron's send_forward_recv_backward)
 * completes; the same ops unbatched, send before recv on both sides, deadlock and say so. */
static void test_batch_and_deadlock(void)
{
    for (int batched = 1; batched >= 0; batched--) {
        orr_workload *w = orr_workload_new(2, 8);
        orr_workload_add_rank(w, 0, 1, "stage0");
        orr_workload_add_rank(w, 1, 1, "stage1");
        orr_rank *r0 = &w->ranks[0], *r1 = &w->ranks[1];
        orr_op a = p2p(ORR_OP_SEND, 1, 0, 4096, batched), b = p2p(ORR_OP_RECV, 1, 1, 4096, 0);
        orr_op c = p2p(ORR_OP_SEND, 0, 1, 4096, batched), d = p2p(ORR_OP_RECV, 0, 0, 4096, 0);
        orr_rank_push(r0, &a);
        orr_rank_push(r0, &b);
        orr_rank_push(r1, &c);
        orr_rank_push(r1, &d);
        orr_exec_result x;
        orr_err err = {{0}};
        int rc = run(w, 1 * US, &x, &err);
        if (batched) {
            CHECK(rc == 0);
            if (rc == 0) orr_exec_result_free(&x);
        } else {
            CHECK(rc < 0);
            CHECK_MSG(strstr(err.msg, "deadlock") && strstr(err.msg, "stage0") && strstr(err.msg, "send"), "%s", err.msg);
        }
        orr_workload_free(w);
    }
    /* a collective that one member never joins is a deadlock too */
    uint32_t g;
    orr_workload *w = two_ranks(ORR_ROLE_DP, "dp", &g);
    orr_rank *r0 = &w->ranks[0];
    orr_op c = mk_a(ORR_OP_COLL, 0, g);
    c.bytes = 1024;
    orr_rank_push(r0, &c);
    orr_exec_result x;
    orr_err err = {{0}};
    CHECK(run(w, 0, &x, &err) < 0);
    CHECK_MSG(strstr(err.msg, "deadlock") && strstr(err.msg, "group dp"), "%s", err.msg);
    orr_workload_free(w);
}

static void test_determinism(void)
{
    int64_t first[64];
    for (int rep = 0; rep < 2; rep++) {
        orr_workload *w = orr_workload_new(4, 2);
        uint32_t m[4] = {0, 1, 2, 3};
        uint32_t g = orr_workload_add_group(w, ORR_ROLE_DP, m, 4, "all");
        for (uint32_t r = 0; r < 4; r++) orr_workload_add_rank(w, r, 1, "r");
        for (uint32_t r = 0; r < 4; r++) {
            orr_rank *rk = &w->ranks[r];
            for (int i = 0; i < 4; i++) {
                orr_op k = mk(ORR_OP_KERNEL, (uint8_t)(i & 1), (int64_t)(r + 1) * (i + 1) * US);
                orr_rank_push(rk, &k);
                orr_op c = mk_a(ORR_OP_COLL, 2, g);
                c.seq = (uint32_t)i;
                c.bytes = 1u << (10 + 2 * i);
                orr_rank_push(rk, &c);
            }
        }
        orr_exec_result x;
        orr_err err;
        CHECK(run(w, 1 * US, &x, &err) == 0);
        for (int r = 0; r < 4; r++)
            for (int i = 0; i < 8; i++) {
                if (rep == 0) first[r * 8 + i] = x.ranks[r].t[i].end_ps;
                else CHECK_EQ_I64(x.ranks[r].t[i].end_ps, first[r * 8 + i]);
            }
        orr_exec_result_free(&x);
        orr_workload_free(w);
    }
}

/* The flow backend: a p2p send between two nodes takes what the analytic backend says on a quiet
 * fabric; a symmetric workload (a rank standing for 2 GPUs) is refused, naming --no-symmetry. */
static void test_flow_backend(void)
{
    orr_workload *w = orr_workload_new(16, 8);
    orr_workload_add_rank(w, 0, 1, "r0");
    orr_workload_add_rank(w, 8, 1, "r8");
    orr_op s = mk_a(ORR_OP_SEND, 0, 8), v = mk_a(ORR_OP_RECV, 0, 0);
    s.bytes = v.bytes = 64ull << 20;
    orr_rank_push(&w->ranks[0], &s);
    orr_rank_push(&w->ranks[1], &v);
    orr_err err;
    CHECK(orr_workload_finalize(w, &err) == 0);
    orr_exec_opts o = {.net = ORR_NET_FLOW};
    orr_exec_result x;
    int rc = orr_execute(w, &gpu, &cl, &o, &x, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc == 0) {
        CHECK_REL(x.makespan_ps, orr_comm_p2p_ps(&gpu, &cl, 0, 8, 64ull << 20), 1e-6);
        orr_exec_result_free(&x);
    }
    w->ranks[1].weight = 2;
    CHECK(orr_execute(w, &gpu, &cl, &o, &x, &err) == -1 && strstr(err.msg, "--no-symmetry"));
    orr_workload_free(w);
}

int main(void)
{
    hw_init();
    test_flow_backend();
    test_stream_order_and_engine();
    test_events_and_host_sync();
    test_launch_queue();
    test_launch_queue_lifted();
    test_collective_late_rank();
    test_overlap_slowdown();
    test_p2p();
    test_batch_and_deadlock();
    test_determinism();
    return check_done();
}
