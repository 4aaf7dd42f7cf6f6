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
 * The packet backend is the flow backend with the inter-node flows on the packet-level RDMA
 * engine (src/net/packet); see "packet" below for what goes where and why.
 */
#include "orrery/net.h"
#include "orrery/collsched.h"
#include "orrery/flow.h"
#include "orrery/packet.h"

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

/* ---- topology backends: flow and packet ----
 *
 * Both build the job's topology and execute every collective and send as NCCL's steps (a DAG of
 * flows, src/comm/sched.c) on a transport: the flow backend on the max-min flow model, the packet
 * backend on a transport that splits the flows between two models (below). */

typedef struct topo_net {
    orr_topo topo;
    orr_transport *tr;    /* what the runner drives: the flow model, or &split */
    orr_transport *nvl;   /* packet: the flow model, for flows that stay on one node's NVLink */
    orr_transport *pkt;   /* packet: the packet engine, for everything else */
    orr_transport split;  /* packet: picks nvl or pkt per flow */
    orr_route_opts route;
    orr_packet_config pcfg;
    orr_runner *run;
    orr_sched sched;
    orr_sched_opts opts;
    uint32_t gpus;
} topo_net;

static void topo_send(orr_net *n, uint32_t src, uint32_t dst, uint64_t bytes, orr_event_fn done, void *ctx,
                      uint64_t arg)
{
    topo_net *f = n->impl;
    orr_sched_p2p(&f->sched, n->gpu, n->cluster, src, dst, bytes);
    orr_runner_run(f->run, &f->sched, done, ctx, arg);
}

static void topo_collective(orr_net *n, const orr_coll_desc *d, const uint32_t *members, orr_event_fn done,
                            void *ctx, uint64_t arg)
{
    topo_net *f = n->impl;
    orr_coll_desc s = shape_from_members(n, d, members);
    orr_sched_coll(&f->sched, n->gpu, n->cluster, &s, members, &f->opts, NULL);
    orr_runner_run(f->run, &f->sched, done, ctx, arg);
}

static void topo_destroy(orr_net *n)
{
    topo_net *f = n->impl;
    orr_runner_free(f->run);
    if (f->tr && f->tr != &f->split) f->tr->destroy(f->tr);
    if (f->nvl) f->nvl->destroy(f->nvl);
    if (f->pkt) f->pkt->destroy(f->pkt);
    orr_topo_free(&f->topo);
    orr_sched_free(&f->sched);
    free(f);
    free(n);
}

/* The flow model on f->topo with the cluster's protocol efficiencies as link capacity scales. */
static orr_transport *flow_model(orr_net *n, topo_net *f)
{
    orr_flow_opts o;
    memset(&o, 0, sizeof o);
    o.tier_scale[ORR_TIER_NVLINK] = n->cluster->nvlink_eff;
    for (int t = ORR_TIER_HOST; t < ORR_TIER_COUNT; t++) o.tier_scale[t] = n->cluster->net_eff;
    o.route = f->route;
    return orr_flow_create(n->engine, &f->topo, &o);
}

static topo_net *topo_net_new(orr_net *n, const orr_net_config *cfg, orr_err *err)
{
    if (!cfg || cfg->gpus == 0) {
        orr_fail(err, "network backend %s: needs the job's GPU count and topology", orr_net_kind_name(n->kind));
        return NULL;
    }
    topo_net *f = orr_xcalloc(1, sizeof *f);
    if (orr_topo_build(&f->topo, n->gpu, n->cluster, cfg->gpus, &cfg->topo, err)) {
        free(f);
        return NULL;
    }
    f->route.ecmp = 1;
    f->route.pxn = cfg->pxn;
    f->route.gpus_per_node = n->cluster->gpus_per_node;
    f->opts.gpus_per_node = n->cluster->gpus_per_node;
    f->opts.max_flows = cfg->max_flows;
    f->gpus = cfg->gpus;
    n->impl = f;
    n->send = topo_send;
    n->collective = topo_collective;
    n->destroy = topo_destroy;
    return f;
}

static int flow_init(orr_net *n, const orr_net_config *cfg, orr_err *err)
{
    topo_net *f = topo_net_new(n, cfg, err);
    if (!f) return -1;
    f->tr = flow_model(n, f);
    f->run = orr_runner_create(f->tr);
    return 0;
}

/* ---- packet ----
 *
 * Flows that leave a node run on the packet engine (src/net/packet): RDMA NICs, shared-buffer
 * switches, PFC, ECN and the congestion control of orr_packet_config_preset. Flows between two GPUs
 * of one node, whose path is NVLink -> NVSwitch -> NVLink, run on the flow model instead (the
 * same max-min model as --net flow, on the same topology's NVLink links): NVLink is not Ethernet
 * (no RoCE NIC, no ECN, no PFC, no DCQCN; credit-based link-level flow control), so packets would
 * model nothing real there, and its TP traffic is most of an iteration's bytes, so packets would
 * multiply the cost for nothing. The two models share no links (a flow leaving a node never
 * crosses NVLink: the packet engine routes by shortest path, and --pxn is refused), so each link
 * is simulated by exactly one of them.
 *
 * Capacity: the flow backend scales NVLink links by nvlink_eff and the rest by net_eff (achieved
 * payload bandwidth / raw). The packet engine puts headers on the wire itself, so its non-NVLink
 * links get raw x net_eff x (wire bytes / payload bytes of a full packet): full packets then carry
 * payload at raw x net_eff, and an uncongested transfer takes what the flow model says, plus one
 * packet's store-and-forward per hop (1.5 us for 64 KiB at 400 Gb/s x 0.85).
 *
 * Link delays are the topology's (0 for built fabrics: NCCL's per-step latency, which the
 * collective scheduler charges, already includes the wire). */

static int nvlink_only(const topo_net *f, uint32_t src, uint32_t dst)
{
    uint32_t gpn = f->route.gpus_per_node, links[2];
    if (gpn < 2 || src / gpn != dst / gpn) return 0;
    if (orr_topo_route(&f->topo, &f->route, src, dst, 0, links, 2) != 2) return 0;
    return f->topo.links[links[0]].tier == ORR_TIER_NVLINK && f->topo.links[links[1]].tier == ORR_TIER_NVLINK;
}

static void split_start_flow(orr_transport *t, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t flow_id,
                             orr_event_fn done, void *ctx, uint64_t arg)
{
    topo_net *f = t->impl;
    orr_transport *to = nvlink_only(f, src, dst) ? f->nvl : f->pkt;
    to->start_flow(to, src, dst, bytes, flow_id, done, ctx, arg);
}

static void split_destroy(orr_transport *t) { (void)t; /* the parts are topo_destroy's */ }

static int packet_init(orr_net *n, const orr_net_config *cfg, orr_err *err)
{
    if (cfg && cfg->pxn)
        return orr_fail(err, "--pxn (network.pxn): not supported by --net packet (the packet engine routes every "
                             "flow by shortest path); use --net flow for PXN");
    uint32_t payload = cfg && cfg->packet_payload_bytes ? cfg->packet_payload_bytes : ORR_NET_PACKET_PAYLOAD_DEFAULT;
    orr_cc cc = cfg && cfg->cc ? cfg->cc : ORR_CC_DCQCN;
    if (cc != ORR_CC_DCQCN && cc != ORR_CC_HPCC && cc != ORR_CC_TIMELY && cc != ORR_CC_DCTCP)
        return orr_fail(err, "--cc (network.cc): congestion control %d is not implemented", (int)cc);
    topo_net *f = topo_net_new(n, cfg, err);
    if (!f) return -1;
    orr_packet_config *pc = &f->pcfg;
    orr_packet_config_preset(pc, cc, n->cluster->nic_Bps, payload);
    double wire = orr_packet_wire_per_payload(pc);
    pc->rate_scale[ORR_TIER_NVLINK] = n->cluster->nvlink_eff;
    for (int t = ORR_TIER_HOST; t < ORR_TIER_COUNT; t++) pc->rate_scale[t] = n->cluster->net_eff * wire;
    orr_packet_config_red_for_topology(pc, &f->topo);
    f->pkt = orr_packet_transport_create(n->engine, &f->topo, pc, err);
    if (!f->pkt) {
        orr_topo_free(&f->topo);
        free(f);
        n->impl = NULL;
        return -1;
    }
    f->nvl = flow_model(n, f);
    f->split.engine = n->engine;
    f->split.topo = &f->topo;
    f->split.start_flow = split_start_flow;
    f->split.destroy = split_destroy;
    f->split.impl = f;
    f->tr = &f->split;
    f->run = orr_runner_create(f->tr);
    return 0;
}

/* ---- statistics ---- */

orr_transport *orr_net_transport(const orr_net *n)
{
    return n && n->kind == ORR_NET_FLOW ? ((topo_net *)n->impl)->tr : NULL;
}

const orr_topo *orr_net_topo(const orr_net *n)
{
    return n && (n->kind == ORR_NET_FLOW || n->kind == ORR_NET_PACKET) ? &((topo_net *)n->impl)->topo : NULL;
}

void orr_net_sync(orr_net *n)
{
    if (!orr_net_topo(n)) return;
    topo_net *f = n->impl;
    orr_flow_sync(n->kind == ORR_NET_FLOW ? f->tr : f->nvl);
}

void orr_net_link_use_get(const orr_net *n, uint32_t link, orr_net_link_use *out)
{
    memset(out, 0, sizeof *out);
    const orr_topo *t = orr_net_topo(n);
    if (!t || link >= t->n_links) return;
    const topo_net *f = n->impl;
    if (n->kind == ORR_NET_PACKET && t->links[link].tier != ORR_TIER_NVLINK) {
        orr_packet_port_stats ps;
        orr_packet_port_stats_get(orr_packet_transport_sim(f->pkt), link, &ps);
        out->bytes = (double)ps.tx_bytes;
        out->bottleneck_ps = ps.saturated_ps;
        return;
    }
    const orr_flow_link_stats *st = orr_flow_link_stats_of(n->kind == ORR_NET_FLOW ? f->tr : f->nvl, link);
    out->bytes = st->bytes;
    out->bottleneck_ps = st->saturated_ps;
}

uint64_t orr_net_flows(const orr_net *n)
{
    if (!orr_net_topo(n)) return 0;
    const topo_net *f = n->impl;
    return n->kind == ORR_NET_FLOW ? orr_flow_get_totals(f->tr).flows : orr_runner_flows(f->run);
}

orr_packet_sim *orr_net_packet_sim(const orr_net *n)
{
    return n && n->kind == ORR_NET_PACKET ? orr_packet_transport_sim(((topo_net *)n->impl)->pkt) : NULL;
}

const orr_packet_config *orr_net_packet_config(const orr_net *n)
{
    return n && n->kind == ORR_NET_PACKET ? &((topo_net *)n->impl)->pcfg : NULL;
}

orr_net *orr_net_create_cfg(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                            const orr_net_config *cfg, orr_err *err)
{
    if (!e || !g || !c) {
        orr_fail(err, "network backend %s: needs an engine, a GPU and a cluster", orr_net_kind_name(kind));
        return NULL;
    }
    if ((unsigned)kind >= ORR_NET_KIND_COUNT) {
        orr_fail(err, "network backend kind %d is not implemented (known: analytic, flow, packet)", (int)kind);
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
    if ((kind == ORR_NET_FLOW && flow_init(n, cfg, err)) || (kind == ORR_NET_PACKET && packet_init(n, cfg, err))) {
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
    case ORR_NET_PACKET: return "packet";
    default: return "unknown";
    }
}
