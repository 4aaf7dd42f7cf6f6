/*
 * net.c - the network backend factory and the analytic backend.
 *
 * A backend is the small table of function pointers in net.h: send bytes between two GPUs, run a
 * collective among a group, destroy. The analytic backend has no state beyond the hardware: a
 * send finishes after orr_comm_p2p_ps and a collective after orr_comm_coll_ps (src/comm/nccl.c),
 * both counted from the engine's current time, with no contention between concurrent transfers.
 * The flow backend builds the cluster's topology (src/hw/topo_build.c), runs the max-min flow
 * model on it (src/net/flow/flow.c) and executes every collective and send as NCCL's steps
 * (src/comm/sched.c), with link capacities derated by the cluster's protocol efficiencies
 * (NVLink links by nvlink_eff, NIC and switch links by net_eff) as the analytic model derates its
 * bandwidths, so that with no contention both backends agree (tests/test_collsched.c).
 */
#include "orrery/net.h"
#include "orrery/collsched.h"
#include "orrery/flow.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void analytic_send(orr_net *n, uint32_t src, uint32_t dst, uint64_t bytes, orr_event_fn done,
                          void *ctx, uint64_t arg)
{
    int64_t dt = orr_comm_p2p_ps(n->gpu, n->cluster, src, dst, bytes);
    orr_engine_after(n->engine, dt, done, ctx, arg);
}

/* Fills nodes and per_node of d from the members (ascending global ranks, as orr_group keeps
 * them) when the caller left them 0. */
static orr_coll_desc shape_from_members(const orr_net *n, const orr_coll_desc *d,
                                        const uint32_t *members)
{
    orr_coll_desc s = *d;
    if ((s.nodes && s.per_node) || !members || s.size == 0 || n->cluster->gpus_per_node == 0)
        return s;
    uint32_t nodes = 0, per_node = 0, run = 0, last = UINT32_MAX;
    for (uint32_t i = 0; i < s.size; i++) {
        uint32_t node = orr_node_of(n->cluster, members[i]);
        if (node != last) {
            nodes++;
            run = 0;
            last = node;
        }
        if (++run > per_node) per_node = run;
    }
    if (!s.nodes) s.nodes = nodes;
    if (!s.per_node) s.per_node = per_node;
    return s;
}

static void analytic_collective(orr_net *n, const orr_coll_desc *d, const uint32_t *members,
                                orr_event_fn done, void *ctx, uint64_t arg)
{
    orr_coll_desc s = shape_from_members(n, d, members);
    orr_engine_after(n->engine, orr_comm_coll_ps(n->gpu, n->cluster, &s, NULL), done, ctx, arg);
}

static void analytic_destroy(orr_net *n) { free(n); }

/* ---- flow ---- */

typedef struct flow_net {
    orr_topo topo;
    orr_transport *tr;
    orr_runner *run;
    orr_sched sched;
    orr_sched_opts opts;
    uint32_t gpus;
} flow_net;

static void flow_send(orr_net *n, uint32_t src, uint32_t dst, uint64_t bytes, orr_event_fn done, void *ctx,
                      uint64_t arg)
{
    flow_net *f = n->impl;
    orr_sched_p2p(&f->sched, n->gpu, n->cluster, src, dst, bytes);
    orr_runner_run(f->run, &f->sched, done, ctx, arg);
}

static void flow_collective(orr_net *n, const orr_coll_desc *d, const uint32_t *members, orr_event_fn done,
                            void *ctx, uint64_t arg)
{
    flow_net *f = n->impl;
    orr_coll_desc s = shape_from_members(n, d, members);
    orr_sched_coll(&f->sched, n->gpu, n->cluster, &s, members, &f->opts, NULL);
    orr_runner_run(f->run, &f->sched, done, ctx, arg);
}

static void flow_destroy(orr_net *n)
{
    flow_net *f = n->impl;
    orr_runner_free(f->run);
    f->tr->destroy(f->tr);
    orr_topo_free(&f->topo);
    orr_sched_free(&f->sched);
    free(f);
    free(n);
}

static int flow_init(orr_net *n, const orr_net_config *cfg, orr_err *err)
{
    if (!cfg || cfg->gpus == 0)
        return orr_fail(err, "network backend flow: needs the job's GPU count and topology");
    flow_net *f = orr_xcalloc(1, sizeof *f);
    if (orr_topo_build(&f->topo, n->gpu, n->cluster, cfg->gpus, &cfg->topo, err)) {
        free(f);
        return -1;
    }
    orr_flow_opts o;
    memset(&o, 0, sizeof o);
    o.tier_scale[ORR_TIER_NVLINK] = n->cluster->nvlink_eff;
    for (int t = ORR_TIER_HOST; t < ORR_TIER_COUNT; t++) o.tier_scale[t] = n->cluster->net_eff;
    o.route.ecmp = 1;
    o.route.pxn = cfg->pxn;
    o.route.gpus_per_node = n->cluster->gpus_per_node;
    f->tr = orr_flow_create(n->engine, &f->topo, &o);
    f->run = orr_runner_create(f->tr);
    f->opts.gpus_per_node = n->cluster->gpus_per_node;
    f->opts.max_flows = cfg->max_flows;
    f->gpus = cfg->gpus;
    n->impl = f;
    n->send = flow_send;
    n->collective = flow_collective;
    n->destroy = flow_destroy;
    return 0;
}

orr_transport *orr_net_transport(const orr_net *n)
{
    return n && n->kind == ORR_NET_FLOW ? ((flow_net *)n->impl)->tr : NULL;
}

orr_net *orr_net_create_cfg(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                            const orr_net_config *cfg, orr_err *err)
{
    if (!e || !g || !c) {
        orr_fail(err, "network backend %s: needs an engine, a GPU and a cluster", orr_net_kind_name(kind));
        return NULL;
    }
    if (kind != ORR_NET_ANALYTIC && kind != ORR_NET_FLOW) {
        orr_fail(err, "network backend kind %d is not implemented (known: analytic, flow)", (int)kind);
        return NULL;
    }
    orr_net *n = orr_xcalloc(1, sizeof *n);
    n->kind = kind;
    n->engine = e;
    n->gpu = g;
    n->cluster = c;
    n->send = analytic_send;
    n->collective = analytic_collective;
    n->destroy = analytic_destroy;
    if (kind == ORR_NET_FLOW && flow_init(n, cfg, err)) {
        free(n);
        return NULL;
    }
    return n;
}

orr_net *orr_net_create(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                        orr_err *err)
{
    return orr_net_create_cfg(kind, e, g, c, NULL, err);
}

int orr_net_kind_parse(const char *name, orr_net_kind *out)
{
    for (int k = 0; k < ORR_NET_KIND_COUNT; k++)
        if (strcasecmp(name, orr_net_kind_name((orr_net_kind)k)) == 0) return *out = (orr_net_kind)k, 0;
    return -1;
}

void orr_net_destroy(orr_net *n)
{
    if (!n) return;
    if (n->destroy) n->destroy(n);
    else free(n);
}

const char *orr_net_kind_name(orr_net_kind k)
{
    switch (k) {
    case ORR_NET_ANALYTIC: return "analytic";
    case ORR_NET_FLOW: return "flow";
    default: return "unknown";
    }
}
