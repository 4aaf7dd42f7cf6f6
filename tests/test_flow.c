/*
 * Tests of the flow-level backend (src/net/flow/flow.c) and the topology builders
 * (src/hw/topo_build.c): max-min rates on hand-solved cases (parking lot, incast, several
 * bottlenecks), completion times, incremental == from-scratch recomputation over thousands of
 * random starts and finishes, rollback equal to a run that had the flow from the start, history
 * GC, link statistics, built topologies' shapes and routing (NVLink inside a node, PXN), and the
 * per-link time windows of the trace's link tracks (src/net/linkbins.c).
 */
#include "check.h"
#include "orrery/flow.h"
#include "orrery/topo_build.h"

#include <string.h>

#define GBps 1e9

/* A hand-made topology: hosts first, then switches, links given as (a, b, rate). */
static void make_topo(orr_topo *t, uint32_t hosts, uint32_t switches, const uint32_t (*ab)[2],
                      const double *rate, uint32_t nlinks)
{
    orr_err err;
    orr_topo_init(t);
    for (uint32_t i = 0; i < hosts; i++) orr_topo_add_node(t, ORR_NODE_HOST);
    for (uint32_t i = 0; i < switches; i++) orr_topo_add_node(t, ORR_NODE_SWITCH);
    for (uint32_t i = 0; i < nlinks; i++) orr_topo_add_link(t, ab[i][0], ab[i][1], rate[i], 0, 0, ORR_TIER_HOST);
    int rc = orr_topo_finish(t, "test", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
}

typedef struct done_log {
    int64_t t[64];
    orr_engine *e;
} done_log;

static void on_done(void *ctx, uint64_t arg)
{
    done_log *d = ctx;
    d->t[arg] = orr_engine_now(d->e);
}

static orr_transport *flow_on(orr_engine *e, const orr_topo *t)
{
    orr_flow_opts o;
    memset(&o, 0, sizeof o);
    o.route.ecmp = 1;
    o.keep_history = 1;
    return orr_flow_create(e, t, &o);
}

/* A hand-made topology (make_topo) with an engine and a flow backend on it. */
typedef struct fab {
    orr_topo t;
    orr_engine e;
    orr_transport *tr;
} fab;

static void fab_open(fab *f, uint32_t hosts, uint32_t switches, const uint32_t (*ab)[2], const double *rate,
                     uint32_t nlinks)
{
    make_topo(&f->t, hosts, switches, ab, rate, nlinks);
    orr_engine_init(&f->e);
    f->tr = flow_on(&f->e, &f->t);
}

static void fab_close(fab *f)
{
    f->tr->destroy(f->tr);
    orr_engine_free(&f->e);
    orr_topo_free(&f->t);
}

/* A star: hosts 0-3 at 10 GB/s and host 4 at 1 GB/s on one switch (the bottleneck into host 4). */
static void star_open(fab *f)
{
    const uint32_t ab[][2] = {{0, 5}, {1, 5}, {2, 5}, {3, 5}, {4, 5}};
    const double r[] = {10 * GBps, 10 * GBps, 10 * GBps, 10 * GBps, GBps};
    fab_open(f, 5, 1, ab, r, 5);
}

/* Parking lot: switches S0-S1-S2-S3 in a chain (links 1 GB/s), host i on Si (10 GB/s). The long
 * flow h0->h3 crosses the three chain links, each shared with one short flow: all get 0.5 GB/s. */
static void test_parking_lot(void)
{
    const uint32_t ab[][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}, {4, 5}, {5, 6}, {6, 7}};
    const double r[] = {10 * GBps, 10 * GBps, 10 * GBps, 10 * GBps, GBps, GBps, GBps};
    fab f;
    fab_open(&f, 4, 4, ab, r, 7);
    orr_transport *tr = f.tr;
    done_log d = {{0}, &f.e};
    tr->start_flow(tr, 0, 3, 1000000000, 1, on_done, &d, 0);
    tr->start_flow(tr, 0, 1, 1000000000, 2, on_done, &d, 1);
    tr->start_flow(tr, 1, 2, 1000000000, 3, on_done, &d, 2);
    tr->start_flow(tr, 2, 3, 500000000, 4, on_done, &d, 3);
    orr_engine_run(&f.e);
    /* all at 0.5 GB/s; the 0.5 GB flow ends at 1 s, then h2-h3's link frees: the long flow stays
     * at 0.5 (its other links still shared) until 2 s when all finish. */
    CHECK_EQ_I64(d.t[3], ORR_PS_PER_S);
    CHECK_EQ_I64(d.t[0], 2 * ORR_PS_PER_S);
    CHECK_EQ_I64(d.t[1], 2 * ORR_PS_PER_S);
    CHECK_EQ_I64(d.t[2], 2 * ORR_PS_PER_S);
    orr_flow_totals tot = orr_flow_get_totals(tr);
    CHECK_EQ_I64(tot.finished, 4);
    /* link S2->S3 (id 12) carried 1 GB of the long flow and 0.5 GB of the short one */
    orr_flow_sync(tr);
    CHECK_REL(orr_flow_link_stats_of(tr, 12)->bytes, 1.5e9, 1e-9);
    CHECK_EQ_I64(orr_flow_link_stats_of(tr, 12)->busy_ps, 2 * ORR_PS_PER_S);
    fab_close(&f);
}

/* A chain of flows h0 -> h1 of 0.5 GB: the completion of each logs it and starts the next, until
 * arg last. */
typedef struct chain {
    orr_transport *tr;
    done_log *d;
    uint64_t last;
} chain;

static void chain_next(void *ctx, uint64_t arg)
{
    chain *c = ctx;
    on_done(c->d, arg);
    if (arg + 1 < c->last) c->tr->start_flow(c->tr, 0, 1, 500000000ull, 100 + arg + 1, chain_next, c, arg + 1);
}

/* Flows alone on every link of their paths (the NVLink ring steps of a server; flow.c fill_lone):
 * each at its path's smallest capacity, and that link, the lower id of two equal ones, the one
 * counted as saturated; a third flow joining one path's fast link changes nothing, one joining its
 * bottleneck halves both (max-min again). Chain h0 -10- S0 -2- S1 -2- S2 -10- h1, and h2 -4- S0:
 * directed links 0 (h0->S0), 2 (S0->S1), 4 (S1->S2), 6 (S2->h1), 8 (h2->S0). */
static void test_lone_flows(void)
{
    const uint32_t ab[][2] = {{0, 3}, {3, 4}, {4, 5}, {5, 1}, {2, 3}};
    const double r[] = {10 * GBps, 2 * GBps, 2 * GBps, 10 * GBps, 4 * GBps};
    fab f;
    fab_open(&f, 3, 3, ab, r, 5);
    orr_transport *tr = f.tr;
    done_log d = {{0}, &f.e};
    /* alone: 2 GB at 2 GB/s, 1 s; the reverse flow h1 -> h0 (links 7, 5, 3, 1) alone too */
    tr->start_flow(tr, 0, 1, 2000000000ull, 1, on_done, &d, 0);
    tr->start_flow(tr, 1, 0, 1000000000ull, 2, on_done, &d, 1);
    orr_engine_run(&f.e);
    CHECK_EQ_I64(d.t[0], ORR_PS_PER_S);
    CHECK_EQ_I64(d.t[1], ORR_PS_PER_S / 2);
    orr_flow_sync(tr);
    CHECK_EQ_I64(orr_flow_link_stats_of(tr, 2)->saturated_ps, ORR_PS_PER_S);
    CHECK_EQ_I64(orr_flow_link_stats_of(tr, 4)->saturated_ps, 0); /* the tie goes to the lower id */
    CHECK_EQ_I64(orr_flow_link_stats_of(tr, 0)->saturated_ps, 0);
    CHECK_EQ_I64(orr_flow_link_stats_of(tr, 3)->saturated_ps, ORR_PS_PER_S / 2); /* S1 -> S0 */
    /* h2 -> h1 shares S0 -> S1 with a new h0 -> h1: 1 GB/s each there; 1 GB each, both done at 2 s */
    tr->start_flow(tr, 0, 1, 1000000000ull, 3, on_done, &d, 2);
    tr->start_flow(tr, 2, 1, 1000000000ull, 4, on_done, &d, 3);
    CHECK(orr_flow_check_rates(tr) < 1e-12);
    orr_engine_run(&f.e);
    CHECK_EQ_I64(d.t[2], 2 * ORR_PS_PER_S);
    CHECK_EQ_I64(d.t[3], 2 * ORR_PS_PER_S);
    orr_flow_sync(tr);
    CHECK_EQ_I64(orr_flow_link_stats_of(tr, 2)->saturated_ps, 2 * ORR_PS_PER_S);
    CHECK_EQ_I64(orr_flow_link_stats_of(tr, 8)->saturated_ps, 0);
    /* a ring step's pattern: each flow's completion starts the next on the same links, every one
     * alone; they take their rate at their start, with no recomputation (flow.c flow_go_lone) */
    orr_flow_totals before = orr_flow_get_totals(tr);
    chain c = {tr, &d, 8};
    tr->start_flow(tr, 0, 1, 500000000ull, 100, chain_next, &c, 4);
    orr_engine_run(&f.e);
    for (int i = 4; i < 8; i++) CHECK_EQ_I64(d.t[i], 2 * ORR_PS_PER_S + (i - 3) * ORR_PS_PER_S / 4);
    orr_flow_totals after = orr_flow_get_totals(tr);
    CHECK_EQ_I64(after.finished - before.finished, 4);
    CHECK_EQ_I64(after.recomputes, before.recomputes);
    orr_flow_sync(tr);
    CHECK_EQ_I64(orr_flow_link_stats_of(tr, 2)->saturated_ps, 3 * ORR_PS_PER_S);
    CHECK_REL(orr_flow_link_stats_of(tr, 6)->bytes, 2e9 + 2e9 + 2e9, 1e-12);
    fab_close(&f);
}

/* Incast: 4 senders into one receiver link of 1 GB/s: 0.25 GB/s each, all done at 4 x bytes / C. */
static void test_incast(void)
{
    fab f;
    star_open(&f);
    orr_transport *tr = f.tr;
    done_log d = {{0}, &f.e};
    for (uint32_t i = 0; i < 4; i++) tr->start_flow(tr, i, 4, 250000000, 10 + i, on_done, &d, i);
    orr_engine_run(&f.e);
    for (int i = 0; i < 4; i++) CHECK_EQ_I64(d.t[i], ORR_PS_PER_S);
    fab_close(&f);
}

typedef struct probe {
    orr_transport *tr;
    uint64_t ids[8];
    double rate[8];
    int n;
} probe;

static void probe_ev(void *ctx, uint64_t arg)
{
    probe *p = ctx;
    for (int i = 0; i < p->n; i++) p->rate[i] = orr_flow_rate(p->tr, p->ids[i]);
}

/* Several bottlenecks: link A (X->Y, 10 GB/s) carries f1, f2, f3; link B (Y->Z, 4 GB/s) carries f3
 * and f4. B fixes f3 = f4 = 2; A's remaining 8 goes to f1 = f2 = 4. */
static void test_multi_bottleneck(void)
{
    /* hosts 0,1,2 on X (6), host 3 and 5 on Y (7), host 4 on Z (8) */
    const uint32_t ab[][2] = {{0, 6}, {1, 6}, {2, 6}, {3, 7}, {5, 7}, {4, 8}, {6, 7}, {7, 8}};
    const double r[] = {100 * GBps, 100 * GBps, 100 * GBps, 100 * GBps, 100 * GBps, 100 * GBps, 10 * GBps, 4 * GBps};
    fab f;
    fab_open(&f, 6, 3, ab, r, 8);
    orr_transport *tr = f.tr;
    done_log d = {{0}, &f.e};
    tr->start_flow(tr, 0, 3, 4000000000ull, 1, on_done, &d, 0);
    tr->start_flow(tr, 1, 3, 4000000000ull, 2, on_done, &d, 1);
    tr->start_flow(tr, 2, 4, 4000000000ull, 3, on_done, &d, 2);
    tr->start_flow(tr, 5, 4, 1000000000ull, 4, on_done, &d, 3);
    probe p = {tr, {1, 2, 3, 4}, {0}, 4};
    orr_engine_at(&f.e, 1, probe_ev, &p, 0);
    orr_engine_run(&f.e);
    CHECK_REL(p.rate[0], 4 * GBps, 1e-12);
    CHECK_REL(p.rate[1], 4 * GBps, 1e-12);
    CHECK_REL(p.rate[2], 2 * GBps, 1e-12);
    CHECK_REL(p.rate[3], 2 * GBps, 1e-12);
    /* f4 ends at 0.5 s; then f3 is limited by A: 10/3 each; f3 has 3 GB left, f1/f2 2 GB left:
     * f1, f2 end at 0.5 + 2/(10/3) = 1.1 s, f3 then alone at 4: 3 - 2 = 1 GB left / 4 -> 1.35 s */
    CHECK_EQ_I64(d.t[3], ORR_PS_PER_S / 2);
    CHECK_REL(d.t[0], 1.1 * ORR_PS_PER_S, 1e-9);
    CHECK_REL(d.t[2], 1.35 * ORR_PS_PER_S, 1e-9);
    fab_close(&f);
}

/* ---- incremental == from scratch ---- */

typedef struct rnd_run {
    orr_transport *tr;
    orr_engine *e;
    uint64_t rng;
    uint32_t hosts;
    uint64_t next_id;
    int left;          /* flows still to start */
    int checks;
    double worst;
} rnd_run;

static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 17;
}

static void rnd_start_ev(void *ctx, uint64_t arg);

static void rnd_done(void *ctx, uint64_t arg)
{
    rnd_run *r = ctx;
    if (rnd(&r->rng) % 2 == 0) { /* check at some finishes too */
        double w = orr_flow_check_rates(r->tr);
        if (w > r->worst) r->worst = w;
        r->checks++;
    }
    (void)arg;
}

static void rnd_start_ev(void *ctx, uint64_t arg)
{
    rnd_run *r = ctx;
    uint32_t s = (uint32_t)(rnd(&r->rng) % r->hosts), d = (uint32_t)(rnd(&r->rng) % r->hosts);
    if (d == s) d = (d + 1) % r->hosts;
    uint64_t bytes = 1000000 + rnd(&r->rng) % 50000000;
    r->tr->start_flow(r->tr, s, d, bytes, r->next_id++, rnd_done, r, 0);
    double w = orr_flow_check_rates(r->tr);
    if (w > r->worst) r->worst = w;
    r->checks++;
    if (--r->left > 0) orr_engine_after(r->e, (int64_t)(rnd(&r->rng) % 200) * ORR_PS_PER_US, rnd_start_ev, r, arg);
}

/* Hardware for built topologies: 450 GB/s NVLink, gpn GPUs per node, 50 GB/s NICs. */
static void hw(orr_gpu *g, orr_cluster *c, uint32_t gpn)
{
    memset(g, 0, sizeof *g);
    memset(c, 0, sizeof *c);
    g->nvlink_Bps = 450e9;
    c->gpus_per_node = gpn;
    c->nic_Bps = 50e9;
}

static void test_incremental_equals_scratch(void)
{
    orr_gpu g;
    orr_cluster c;
    hw(&g, &c, 4);
    orr_topo_spec s;
    orr_topo_spec_default(&s, &c);
    s.kind = ORR_TOPO_FAT_TREE;
    s.oversub = 3;
    s.leaf_hosts = 8;
    s.spines = 3;
    orr_topo t;
    orr_err err;
    int rc = orr_topo_build(&t, &g, &c, 64, &s, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    orr_engine e;
    orr_engine_init(&e);
    rnd_run r = {flow_on(&e, &t), &e, 42, 64, 1, 3000, 0, 0};
    orr_engine_at(&e, 0, rnd_start_ev, &r, 0);
    orr_engine_run(&e);
    orr_flow_totals tot = orr_flow_get_totals(r.tr);
    CHECK_EQ_I64(tot.finished, 3000);
    CHECK(r.checks > 3000);
    CHECK_MSG(r.worst <= 1e-12, "worst relative difference %.3g", r.worst);
    CHECK(tot.recomputes > 1000);
    r.tr->destroy(r.tr);
    orr_engine_free(&e);
    orr_topo_free(&t);
}

/* ---- rollback ---- */

typedef struct rb_run {
    orr_transport *tr;
    done_log *d;
    int64_t c_start;
} rb_run;

static void inject_c_ev(void *ctx, uint64_t arg)
{
    rb_run *r = ctx;
    orr_flow_start_at(r->tr, r->c_start, 2, 4, 600000000, 3, on_done, r->d, 2);
    (void)arg;
}

static void start_late_ev(void *ctx, uint64_t arg)
{
    rb_run *r = ctx;
    r->tr->start_flow(r->tr, 3, 4, 300000000, 4, on_done, r->d, 3);
    (void)arg;
}

/* Hosts 0..3 into host 4 over one 1 GB/s link. A and B (1 GB each) start at 0, D (0.3 GB) at
 * 0.3 s; C (0.6 GB) starts at 0.2 s. Run 1 starts C at 0.2 s; run 2 injects it at 0.5 s with a
 * start time of 0.2 s. Completion times must agree. */
static void rollback_run(int inject_late, int64_t out[4])
{
    fab f;
    star_open(&f);
    orr_transport *tr = f.tr;
    done_log d = {{0}, &f.e};
    rb_run rr = {tr, &d, ORR_PS_PER_S / 5};
    tr->start_flow(tr, 0, 4, 1000000000, 1, on_done, &d, 0);
    tr->start_flow(tr, 1, 4, 1000000000, 2, on_done, &d, 1);
    orr_engine_at(&f.e, 3 * ORR_PS_PER_S / 10, start_late_ev, &rr, 0);
    orr_engine_at(&f.e, inject_late ? ORR_PS_PER_S / 2 : ORR_PS_PER_S / 5, inject_c_ev, &rr, 0);
    orr_engine_run(&f.e);
    for (int i = 0; i < 4; i++) out[i] = d.t[i];
    orr_flow_totals tot = orr_flow_get_totals(tr);
    CHECK_EQ_I64(tot.rollbacks, inject_late ? 1 : 0);
    fab_close(&f);
}

static void test_rollback(void)
{
    int64_t a[4], b[4];
    rollback_run(0, a);
    rollback_run(1, b);
    for (int i = 0; i < 4; i++) CHECK_MSG(llabs(a[i] - b[i]) <= 2, "flow %d: %lld vs %lld", i, (long long)a[i], (long long)b[i]);
    /* hand check of run 1: 0-0.2 s A, B at 0.5; 0.2-0.3 A, B, C at 1/3; then four at 0.25 */
    CHECK(a[3] > 0 && a[0] > a[2]);
}

typedef struct gc_probe {
    orr_transport *tr;
    size_t before, after;
} gc_probe;

static void gc_ev(void *ctx, uint64_t arg)
{
    gc_probe *p = ctx;
    p->before = orr_flow_history_len(p->tr);
    orr_flow_gc(p->tr, (int64_t)arg);
    p->after = orr_flow_history_len(p->tr);
}

/* History GC: flows whose rates changed several times keep only the entry in force at the horizon. */
static void test_gc(void)
{
    fab f;
    star_open(&f);
    orr_transport *tr = f.tr;
    done_log d = {{0}, &f.e};
    tr->start_flow(tr, 0, 4, 1000000000, 1, on_done, &d, 0);
    tr->start_flow(tr, 1, 4, 100000000, 2, on_done, &d, 1);  /* ends at 0.3 s */
    tr->start_flow(tr, 2, 4, 200000000, 3, on_done, &d, 2);  /* ends at 0.5 s */
    gc_probe p = {tr, 0, 0};
    orr_engine_at(&f.e, 6 * ORR_PS_PER_S / 10, gc_ev, &p, 6 * ORR_PS_PER_S / 10);
    orr_engine_run(&f.e);
    CHECK_EQ_I64(p.before, 3); /* flow 1: rates at 0, 0.3 s, 0.5 s */
    CHECK_EQ_I64(p.after, 1);
    CHECK_EQ_I64(d.t[1], 3 * ORR_PS_PER_S / 10);
    CHECK_EQ_I64(d.t[2], 5 * ORR_PS_PER_S / 10);
    CHECK_EQ_I64(d.t[0], ORR_PS_PER_S * 13 / 10);
    CHECK_EQ_I64(orr_flow_history_len(tr), 0);
    fab_close(&f);
}

/* ---- built topologies and routing ---- */

static void test_built_topologies(void)
{
    orr_gpu g;
    orr_cluster c;
    orr_err err;
    hw(&g, &c, 8);
    strcpy(c.topology, "rail-fat-tree");
    orr_topo_spec s;
    orr_topo_spec_default(&s, &c);
    CHECK(s.kind == ORR_TOPO_RAIL_FAT_TREE);
    s.leaf_hosts = 4; /* 4 nodes per scalable unit */
    s.spines = 4;
    s.oversub = 2;
    orr_topo t;
    int rc = orr_topo_build(&t, &g, &c, 64, &s, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    /* 64 hosts, 8 NVSwitches, 2 units x 8 rail leaves, 4 spines */
    CHECK_EQ_I64(t.n_hosts, 64);
    CHECK_EQ_I64(t.n_nodes, 64 + 8 + 16 + 4);
    CHECK_EQ_I64(t.n_links, 2 * (64 + 64 + 16 * 4));
    CHECK(t.host_node[5] == 5);
    /* leaf uplink: 4 nodes x 50 GB/s / (2 x 4 spines) = 25 GB/s */
    CHECK_REL(t.links[2 * 128].rate_Bps, 25e9, 1e-12);
    orr_route_opts ro = {1, 0, 0};
    uint32_t path[16];
    /* same node: NVLink, 2 hops, both NVLINK tier */
    CHECK_EQ_I64(orr_topo_route(&t, &ro, 1, 6, 9, path, 16), 2);
    CHECK(t.links[path[0]].tier == ORR_TIER_NVLINK && t.links[path[1]].tier == ORR_TIER_NVLINK);
    /* same rail, same unit: GPU -> rail leaf -> GPU */
    CHECK_EQ_I64(orr_topo_route(&t, &ro, 3, 11, 9, path, 16), 2);
    /* same rail, other unit: over a spine */
    CHECK_EQ_I64(orr_topo_route(&t, &ro, 3, 35, 9, path, 16), 4);
    /* other rail without PXN: over the spine; with PXN: NVLink to GPU 4 then rail 4 */
    CHECK_EQ_I64(orr_topo_route(&t, &ro, 3, 12, 9, path, 16), 4);
    ro.pxn = 1;
    CHECK_EQ_I64(orr_topo_route(&t, &ro, 3, 12, 9, path, 16), 4);
    CHECK(t.links[path[1]].dst == 4 && t.links[path[3]].dst == 12);
    CHECK(t.links[path[2]].tier == ORR_TIER_HOST);
    orr_topo_free(&t);

    s.kind = ORR_TOPO_CLOS3;
    s.leaf_hosts = 8;
    s.pod_leaves = 2;
    s.spines = 2;
    rc = orr_topo_build(&t, &g, &c, 64, &s, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    /* leaves of 8 ports (one node each): node 0 to node 1 is leaf-agg-leaf, node 0 to node 7
     * (another pod) leaf-agg-core-agg-leaf */
    ro.pxn = 0;
    CHECK_EQ_I64(orr_topo_route(&t, &ro, 0, 8, 1, path, 16), 4);
    CHECK_EQ_I64(orr_topo_route(&t, &ro, 0, 63, 1, path, 16), 6);
    orr_topo_free(&t);

    s.oversub = 0.5;
    CHECK(orr_topo_build(&t, &g, &c, 64, &s, &err) == -1 && strstr(err.msg, "topology.oversub"));
    s.kind = ORR_TOPO_HPCC;
    s.oversub = 1;
    strcpy(s.path, ORRERY_VALIDATION_DIR "/ns3/topo_k4.txt");
    rc = orr_topo_build(&t, &g, &c, 16, &s, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc == 0) orr_topo_free(&t);
    CHECK(orr_topo_build(&t, &g, &c, 17, &s, &err) == -1 && strstr(err.msg, "17 GPUs"));
    orr_topo_kind k;
    CHECK(orr_topo_kind_parse("Rail-Fat-Tree", &k) == 0 && k == ORR_TOPO_RAIL_FAT_TREE);
    CHECK(orr_topo_kind_parse("torus", &k) == -1);
}

/* Link windows: bytes spread pro rata, widths doubling (exactly) as time goes on; on the flow model
 * they sum to the link statistics and change no completion time. */
static void test_link_bins(void)
{
    orr_link_bins *b = orr_link_bins_new(4);
    orr_link_bins_spread(b, 1, 0, 10 * ORR_PS_PER_US, 100);
    CHECK_EQ_I64(b->width_ps, ORR_LINK_BIN0_PS);
    CHECK(orr_link_bins_of(b, 0) == NULL && orr_link_bins_of(b, 1) != NULL);
    for (int w = 0; w < 10; w++) CHECK(fabs(orr_link_bins_of(b, 1)[w] - 10) < 1e-12);
    CHECK(orr_link_bins_of(b, 1)[10] == 0);
    orr_link_bins_spread(b, 2, 300 * ORR_PS_PER_US, 300 * ORR_PS_PER_US, 7); /* an instant, past the end */
    CHECK_EQ_I64(b->width_ps, 2 * ORR_LINK_BIN0_PS);
    CHECK(fabs(orr_link_bins_of(b, 1)[0] - 20) < 1e-12 && fabs(orr_link_bins_of(b, 1)[4] - 20) < 1e-12);
    CHECK(orr_link_bins_of(b, 1)[5] == 0 && orr_link_bins_of(b, 2)[150] == 7);
    orr_link_bins_spread(b, 9, 0, 1, 1); /* no such link: ignored */
    orr_link_bins_free(b);

    /* incast of 4 x 250 MB into host 4's 1 GB/s link (switch -> host 4 is link 9): busy for 1 s */
    fab f;
    star_open(&f);
    orr_link_bins *lb = orr_link_bins_new(f.t.n_links);
    orr_flow_set_link_bins(f.tr, lb);
    done_log d = {{0}, &f.e};
    for (uint32_t i = 0; i < 4; i++) f.tr->start_flow(f.tr, i, 4, 250000000, 10 + i, on_done, &d, i);
    orr_engine_run(&f.e);
    orr_flow_sync(f.tr);
    for (int i = 0; i < 4; i++) CHECK_EQ_I64(d.t[i], ORR_PS_PER_S);
    CHECK_EQ_I64(lb->width_ps, 4096 * ORR_PS_PER_US); /* the first width x 2^k with 256 windows >= 1 s */
    const double *v = orr_link_bins_of(lb, 9);
    double sum = 0;
    for (int w = 0; w < ORR_LINK_BINS; w++) sum += v[w];
    CHECK_MSG(fabs(sum / orr_flow_link_stats_of(f.tr, 9)->bytes - 1) < 1e-12, "windows %.17g stats %.17g", sum,
              orr_flow_link_stats_of(f.tr, 9)->bytes);
    for (int w = 0; w < 244; w++) CHECK(fabs(v[w] / (GBps * 4096e-6) - 1) < 1e-9); /* full windows at 1 GB/s */
    CHECK(v[245] == 0);
    orr_link_bins_free(lb);
    fab_close(&f);
}

int main(void)
{
    test_lone_flows();
    test_parking_lot();
    test_incast();
    test_multi_bottleneck();
    test_incremental_equals_scratch();
    test_rollback();
    test_gc();
    test_built_topologies();
    test_link_bins();
    return check_done();
}
