/*
 * net.c - the network backend factory and the analytic backend.
 *
 * A backend is the small table of function pointers in net.h: send bytes between two GPUs, run a
 * collective among a group, destroy. The analytic backend has no state beyond the hardware: a
 * send finishes after orr_comm_p2p_ps and a collective after orr_comm_coll_ps (src/comm/nccl.c),
 * both counted from the engine's current time, with no contention between concurrent transfers.
 * The flow backend (src/net/flow_net.c) runs every collective and send as NCCL's steps on a
 * max-min flow model of the cluster's topology, and under symmetry replays them on every GPU a
 * simulated rank stands for.
 */
#include "net_internal.h"

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
orr_coll_desc orr_net_coll_shape(const orr_net *n, const orr_coll_desc *d, const uint32_t *members)
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
    orr_coll_desc s = orr_net_coll_shape(n, d, members);
    orr_engine_after(n->engine, orr_comm_coll_ps(n->gpu, n->cluster, &s, NULL), done, ctx, arg);
}

static void analytic_destroy(orr_net *n) { free(n); }

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
    if (kind == ORR_NET_FLOW && orr_flow_net_init(n, cfg, err)) {
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
