/*
 * Tests of collectives as flows (src/comm/sched.c) on the flow backend (orr_net_create_cfg with
 * ORR_NET_FLOW): the decomposition's shape (flows, steps, bytes per link), and consistency with the
 * analytic model when nothing else is on the network: every collective the tuner would run,
 * 1 MB-4 GB on 8-1,024 GPUs of catalog clusters on a full-bisection rail-optimised fat tree, within
 * 2%. Contention: two all-reduces standing in for two jobs, sharing an oversubscribed spine, slow
 * each other down by the hand-computed amount.
 */
#include "check.h"
#include "orrery/collsched.h"
#include "orrery/flow.h"
#include "orrery/net.h"

#include <stdlib.h>
#include <string.h>

typedef struct when {
    orr_engine *e;
    int64_t t[8];
} when;

static void on_done(void *ctx, uint64_t arg)
{
    when *w = ctx;
    w->t[arg] = orr_engine_now(w->e);
}

static orr_net *flow_net(orr_engine *e, const orr_gpu *g, const orr_cluster *c, uint32_t gpus,
                         const orr_topo_spec *ts)
{
    orr_net_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gpus = gpus;
    if (ts) cfg.topo = *ts;
    else orr_topo_spec_default(&cfg.topo, c);
    orr_err err;
    orr_net *n = orr_net_create_cfg(ORR_NET_FLOW, e, g, c, &cfg, &err);
    CHECK_MSG(n != NULL, "%s", err.msg);
    return n;
}

/* Time of one collective over ranks first..first+n-1 on a fresh flow backend. */
static int64_t flow_coll_ps(const orr_gpu *g, const orr_cluster *c, orr_coll_kind k, uint64_t bytes, uint32_t n)
{
    orr_engine e;
    orr_engine_init(&e);
    orr_topo_spec ts; /* full bisection, rail-optimised: no ECMP collisions between rings */
    orr_topo_spec_default(&ts, c);
    ts.kind = ORR_TOPO_RAIL_FAT_TREE;
    orr_net *net = flow_net(&e, g, c, n, &ts);
    if (!net) return -1;
    uint32_t *m = orr_xmalloc(n * sizeof *m);
    for (uint32_t i = 0; i < n; i++) m[i] = i;
    orr_coll_desc d = {k, bytes, n, 0, 0, ORR_ALGO_AUTO};
    when w = {&e, {0}};
    net->collective(net, &d, m, on_done, &w, 0);
    orr_engine_run(&e);
    free(m);
    orr_net_destroy(net);
    orr_engine_free(&e);
    return w.t[0];
}

static void load(const char *gpu, const char *cluster, orr_gpu *g, orr_cluster *c)
{
    orr_err err;
    CHECK_MSG(orr_catalog_gpu(gpu, g, &err) == 0, "%s", err.msg);
    CHECK_MSG(orr_catalog_cluster(cluster, c, &err) == 0, "%s", err.msg);
}

static void test_consistency(void)
{
    static const char *const clusters[][2] = {{"H100-SXM5-80GB", "dgx-h100"}, {"H100-SXM5-80GB", "aws-p5-efa"},
                                              {"A100-SXM4-80GB", "dgx-a100"}};
    static const uint32_t sizes[] = {8, 16, 64, 256, 1024};
    static const uint64_t bytes[] = {1ull << 20, 16ull << 20, 256ull << 20, 4ull << 30};
    static const orr_coll_kind kinds[] = {ORR_COLL_ALLREDUCE, ORR_COLL_ALLGATHER, ORR_COLL_REDUCESCATTER};
    double worst = 0;
    int cases = 0;
    for (size_t ci = 0; ci < 3; ci++) {
        orr_gpu g;
        orr_cluster c;
        load(clusters[ci][0], clusters[ci][1], &g, &c);
        for (size_t si = 0; si < 5; si++)
            for (size_t bi = 0; bi < 4; bi++)
                for (size_t ki = 0; ki < 3; ki++) {
                    uint32_t n = sizes[si];
                    if (ci > 0 && n == 1024 && bi != 2) continue; /* the largest on one cluster only */
                    orr_coll_desc d = {kinds[ki], bytes[bi], n, 0, 0, ORR_ALGO_AUTO};
                    orr_coll_plan plan;
                    int64_t a = orr_comm_plan(&g, &c, &d, &plan);
                    /* shape as the backend derives it: contiguous ranks, full nodes */
                    d.nodes = (n + c.gpus_per_node - 1) / c.gpus_per_node;
                    d.per_node = n < c.gpus_per_node ? n : c.gpus_per_node;
                    a = orr_comm_plan(&g, &c, &d, &plan);
                    int64_t f = flow_coll_ps(&g, &c, kinds[ki], bytes[bi], n);
                    double err = fabs((double)f - (double)a) / (double)a;
                    if (err > worst) worst = err;
                    cases++;
                    CHECK_MSG(err <= 0.02, "%s %s %u GPUs %llu B (%s/%s): flow %.1f us, analytic %.1f us, %+.2f%%",
                              clusters[ci][1], orr_coll_kind_name(kinds[ki]), n, (unsigned long long)bytes[bi],
                              orr_coll_algo_name(plan.algo), plan.proto_name, f / 1e6, a / 1e6,
                              100.0 * ((double)f - a) / a);
                }
    }
    printf("consistency: %d cases, worst |flow - analytic| / analytic = %.3f%%\n", cases, 100 * worst);
}

/* A bare cluster for hand computation: one GPU per node, 50 GB/s NICs, no latencies, no
 * efficiency loss; 2-tier fat tree of 2-port leaves and one spine. */
static void bare(orr_gpu *g, orr_cluster *c)
{
    memset(g, 0, sizeof *g);
    memset(c, 0, sizeof *c);
    g->nvlink_Bps = 450e9;
    c->gpus_per_node = 1;
    c->nic_Bps = 50e9;
    c->nvlink_eff = c->net_eff = 1;
    strcpy(c->topology, "fat-tree");
}

/* Two jobs, A on GPUs {0, 2} and B on {1, 3}: leaf 0 holds GPUs 0-1, leaf 1 GPUs 2-3. Each job
 * all-reduces 1 GB over a 2-rank ring: alone, each of its links carries S = 1 GB at 50 GB/s:
 * 20 ms. Both cross the spine: each leaf's uplink is 2 x 50 / oversub GB/s. At oversub 2 (50 GB/s)
 * the two jobs' flows share each uplink at 25 GB/s: 40 ms each; at oversub 1 (100 GB/s) neither
 * slows: 20 ms. */
static void test_contention(void)
{
    orr_gpu g;
    orr_cluster c;
    bare(&g, &c);
    static const uint32_t a[] = {0, 2}, b[] = {1, 3};
    const uint64_t S = 1000000000ull;
    for (int over = 1; over <= 4; over *= 2) {
        orr_topo_spec ts;
        orr_topo_spec_default(&ts, &c);
        ts.leaf_hosts = 2;
        ts.spines = 1;
        ts.oversub = over;
        int64_t alone = 0, both[2] = {0, 0};
        for (int run = 0; run < 2; run++) {
            orr_engine e;
            orr_engine_init(&e);
            orr_net *net = flow_net(&e, &g, &c, 4, &ts);
            if (!net) return;
            orr_coll_desc d = {ORR_COLL_ALLREDUCE, S, 2, 2, 1, ORR_ALGO_RING};
            when w = {&e, {0}};
            net->collective(net, &d, a, on_done, &w, 0);
            if (run) net->collective(net, &d, b, on_done, &w, 1);
            orr_engine_run(&e);
            if (run) both[0] = w.t[0], both[1] = w.t[1];
            else alone = w.t[0];
            orr_net_destroy(net);
            orr_engine_free(&e);
        }
        /* hand: per-uplink share = min(50, 100 / over / 2) GB/s */
        double share = 100e9 / over / 2 < 50e9 ? 100e9 / over / 2 : 50e9;
        double alone_bw = 100e9 / over < 50e9 ? 100e9 / over : 50e9;
        CHECK_REL(alone, S / alone_bw * 1e12, 1e-6);
        CHECK_REL(both[0], S / share * 1e12, 1e-6);
        CHECK_REL(both[1], S / share * 1e12, 1e-6);
        printf("contention: oversub %d: job alone %.1f ms, with the other job %.1f ms (x%.2f)\n", over, alone / 1e9,
               both[0] / 1e9, (double)both[0] / alone);
    }
}

/* The schedule's shape: a ring all-reduce of 8 ranks in one node is 2(n-1) = 14 lock-step rounds of
 * 8 flows (+ a join), each flow S/8 bytes; with max_flows 16 the steps are grouped into 2 rounds. */
static void test_shape(void)
{
    orr_gpu g;
    orr_cluster c;
    load("H100-SXM5-80GB", "dgx-h100", &g, &c);
    uint32_t m[16];
    for (uint32_t i = 0; i < 16; i++) m[i] = i;
    orr_sched s;
    memset(&s, 0, sizeof s);
    orr_coll_desc d = {ORR_COLL_ALLREDUCE, 8ull << 30, 8, 1, 8, ORR_ALGO_RING};
    orr_sched_opts o = {8, 0};
    orr_coll_plan plan;
    orr_sched_coll(&s, &g, &c, &d, m, &o, &plan);
    CHECK_EQ_I64(s.nflows, 14 * 8 + 1);
    CHECK_EQ_I64(s.flows[0].bytes, (8ull << 30) / 8);
    CHECK_EQ_I64(s.nedges, 13 * 8 * 2 + 8);
    CHECK(strcmp(plan.proto_name, "Simple") == 0);
    o.max_flows = 16;
    orr_sched_coll(&s, &g, &c, &d, m, &o, &plan);
    CHECK_EQ_I64(s.nflows, 2 * 8 + 1);
    CHECK_EQ_I64(s.flows[0].bytes, 7 * ((8ull << 30) / 8));
    /* two nodes: 8 channels (one per rail) of 16 ranks; channel c enters node 0 at GPU c and node 1
     * at GPU c + 1, where node 0's ring left it, and leaves node 1 from GPU c: rail-local */
    d.size = 16;
    d.nodes = 2;
    o.max_flows = 0;
    d.kind = ORR_COLL_ALLGATHER;
    orr_sched_coll(&s, &g, &c, &d, m, &o, &plan);
    CHECK_EQ_I64(s.nflows, 15 * 8 * 16 + 1);
    int cross_rail = 0, inter = 0;
    for (size_t i = 0; i < 8 * 16; i++) {
        const orr_sched_flow *f = &s.flows[i];
        if (f->src / 8 != f->dst / 8) {
            inter++;
            cross_rail += f->src % 8 != f->dst % 8;
        }
    }
    CHECK_EQ_I64(inter, 16);
    CHECK_EQ_I64(cross_rail, 0);
    /* three nodes (odd): still rail-local, and every GPU is the exit of one channel */
    d.size = 24;
    d.nodes = 3;
    uint32_t m24[24];
    for (uint32_t i = 0; i < 24; i++) m24[i] = i;
    orr_sched_coll(&s, &g, &c, &d, m24, &o, &plan);
    cross_rail = inter = 0;
    uint32_t exits[24] = {0};
    for (size_t i = 0; i < 8 * 24; i++) {
        const orr_sched_flow *f = &s.flows[i];
        if (f->src / 8 != f->dst / 8) {
            inter++;
            exits[f->src]++;
            cross_rail += f->src % 8 != f->dst % 8;
        }
    }
    CHECK_EQ_I64(inter, 24);
    CHECK_EQ_I64(cross_rail, 0);
    for (int i = 0; i < 24; i++) CHECK_EQ_I64(exits[i], 1);
    /* p2p */
    orr_sched_p2p(&s, &g, &c, 0, 9, 1000);
    CHECK_EQ_I64(s.nflows, 1);
    CHECK_EQ_I64(s.flows[0].delay_ps, c.p2p_base_ps + c.net_lat_ps);
    orr_sched_free(&s);
}

/* Does the rotation of member list m (m[i] -> m[i + 1 mod n]) map schedule s onto itself: each flow
 * onto one of the same bytes, delay and depth (longest path from a source; join points, src = dst,
 * onto a join point), each edge onto an edge? */
static int rotation_maps_onto_itself(const orr_sched *s, const uint32_t *m, uint32_t n)
{
    size_t nf = s->nflows;
    uint32_t *depth = calloc(nf, sizeof *depth), *img = malloc(nf * sizeof *img);
    for (int pass = 0; pass < (int)nf; pass++) /* edges go forward in index order; iterate to be sure */
        for (size_t e = 0; e < s->nedges; e++)
            if (depth[s->edges[e][1]] < depth[s->edges[e][0]] + 1) depth[s->edges[e][1]] = depth[s->edges[e][0]] + 1;
    int ok = 1;
    for (size_t g = 0; g < nf && ok; g++) {
        const orr_sched_flow *f = &s->flows[g];
        uint32_t rs = f->src, rd = f->dst;
        for (uint32_t i = 0; i < n; i++) {
            if (m[i] == f->src) rs = m[(i + 1) % n];
            if (m[i] == f->dst) rd = m[(i + 1) % n];
        }
        img[g] = UINT32_MAX;
        for (size_t h = 0; h < nf && img[g] == UINT32_MAX; h++) {
            const orr_sched_flow *q = &s->flows[h];
            int join = f->src == f->dst;
            if (q->bytes == f->bytes && q->delay_ps == f->delay_ps && depth[h] == depth[g] &&
                (join ? q->src == q->dst : q->src == rs && q->dst == rd))
                img[g] = (uint32_t)h;
        }
        ok = img[g] != UINT32_MAX;
    }
    for (size_t e = 0; e < s->nedges && ok; e++) {
        int found = 0;
        for (size_t k = 0; k < s->nedges && !found; k++)
            found = s->edges[k][0] == img[s->edges[e][0]] && s->edges[k][1] == img[s->edges[e][1]];
        ok = found;
    }
    free(depth);
    free(img);
    return ok;
}

/* orr_sched.rotation_invariant (src/net/images.c simulates one flow of each rotation orbit where it
 * is set): set exactly for the schedules the rotation maps onto themselves, checked by brute force. */
static void test_rotation_invariant(void)
{
    orr_gpu g;
    orr_cluster c;
    load("H100-SXM5-80GB", "dgx-h100", &g, &c);
    uint32_t m[16];
    for (uint32_t i = 0; i < 16; i++) m[i] = i;
    orr_sched s;
    memset(&s, 0, sizeof s);
    static const struct {
        orr_coll_kind kind;
        orr_coll_algo algo;
        uint32_t n, first, max_flows;
        int invariant;
    } cases[] = {
        {ORR_COLL_ALLREDUCE, ORR_ALGO_RING, 8, 0, 0, 1},      {ORR_COLL_ALLREDUCE, ORR_ALGO_RING, 8, 8, 16, 1},
        {ORR_COLL_ALLGATHER, ORR_ALGO_AUTO, 8, 8, 0, 1},      {ORR_COLL_REDUCESCATTER, ORR_ALGO_AUTO, 8, 0, 0, 1},
        {ORR_COLL_ALLREDUCE, ORR_ALGO_NVLS, 8, 0, 0, 1},      {ORR_COLL_ALLTOALL, ORR_ALGO_AUTO, 8, 8, 0, 1},
        {ORR_COLL_ALLGATHER, ORR_ALGO_AUTO, 4, 0, 0, 1},      {ORR_COLL_BROADCAST, ORR_ALGO_AUTO, 8, 0, 0, 0},
        {ORR_COLL_REDUCE, ORR_ALGO_AUTO, 8, 0, 0, 0},         {ORR_COLL_ALLREDUCE, ORR_ALGO_TREE, 8, 0, 0, 0},
        {ORR_COLL_ALLGATHER, ORR_ALGO_AUTO, 16, 0, 0, 0}, /* two nodes: not inside one */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        orr_coll_desc d = {cases[k].kind, 3ull << 28, cases[k].n, cases[k].n > 8 ? 2 : 1, cases[k].n > 8 ? 8 : cases[k].n,
                           cases[k].algo};
        orr_sched_opts o = {8, cases[k].max_flows};
        orr_sched_coll(&s, &g, &c, &d, m + cases[k].first, &o, NULL);
        CHECK_MSG(s.rotation_invariant == cases[k].invariant, "case %zu: flag %d", k, s.rotation_invariant);
        int maps = cases[k].n <= 8 ? rotation_maps_onto_itself(&s, m + cases[k].first, cases[k].n) : 0;
        CHECK_MSG(maps == cases[k].invariant, "case %zu: %zu flows, the rotation maps them onto themselves: %d", k,
                  s.nflows, maps);
    }
    orr_sched_free(&s);
}

int main(void)
{
    test_rotation_invariant();
    test_shape();
    test_contention();
    test_consistency();
    return check_done();
}
