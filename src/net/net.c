/*
 * net.c - the network backend factory, the analytic and packet backends, and the statistics of
 * the topology backends (flow, packet).
 *
 * A backend is the small table of function pointers in net.h: send bytes between two GPUs, run a
 * collective among a group, destroy. The analytic backend has no state beyond the hardware: a
 * send finishes after orr_comm_p2p_ps and a collective after orr_comm_coll_ps (src/comm/nccl.c),
 * both counted from the engine's current time, with no contention between concurrent transfers.
 * The flow backend (src/net/flow_net.c) runs every collective and send as NCCL's steps on a
 * max-min flow model of the cluster's topology, and under symmetry replays them on every GPU a
 * simulated rank stands for. The packet backend (here) is the flow backend without symmetry and
 * with the inter-node flows on the packet-level RDMA engine (src/net/packet); see "packet" below
 * for what goes where and why. The statistics functions of net.h serve both.
 */
#include "net_internal.h"
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

/* ---- what the topology backends (flow, packet) share ---- */

void orr_net_run_send(orr_net *n, orr_runner *run, orr_sched *sched, uint32_t src, uint32_t dst, uint64_t bytes,
                      orr_event_fn done, void *ctx, uint64_t arg)
{
    orr_sched_p2p(sched, n->gpu, n->cluster, src, dst, bytes);
    orr_runner_run(run, sched, done, ctx, arg);
}

void orr_net_run_collective(orr_net *n, orr_runner *run, orr_sched *sched, const orr_sched_opts *opts,
                            const orr_coll_desc *d, const uint32_t *members, orr_event_fn done, void *ctx,
                            uint64_t arg)
{
    orr_coll_desc s = orr_net_coll_shape(n, d, members);
    orr_sched_coll(sched, n->gpu, n->cluster, &s, members, opts, NULL);
    orr_runner_run(run, sched, done, ctx, arg);
}

/* ---- packet ----
 *
 * The backend builds the job's topology and executes every collective and send as NCCL's steps (a
 * DAG of flows, src/comm/sched.c), as the flow backend does, on a transport that splits the flows
 * between two models. Flows that leave a node run on the packet engine (src/net/packet): RDMA
 * NICs, shared-buffer switches, PFC, ECN and the congestion control of orr_packet_config_preset.
 * Flows between two GPUs of one node, whose path is NVLink -> NVSwitch -> NVLink, run on the flow
 * model instead (the same max-min model as --net flow, on the same topology's NVLink links):
 * NVLink is not Ethernet (no RoCE NIC, no ECN, no PFC, no DCQCN; credit-based link-level flow
 * control), so packets would model nothing real there, and its TP traffic is most of an
 * iteration's bytes, so packets would multiply the cost for nothing. The two models share no links
 * (a flow leaving a node never crosses NVLink: the packet engine routes by shortest path, and
 * --pxn is refused), so each link is simulated by exactly one of them.
 *
 * Capacity: the flow backend scales NVLink links by nvlink_eff and the rest by net_eff (achieved
 * payload bandwidth / raw). The packet engine puts headers on the wire itself, so its non-NVLink
 * links get raw x net_eff x (wire bytes / payload bytes of a full packet): full packets then carry
 * payload at raw x net_eff, and an uncongested transfer takes what the flow model says, plus one
 * packet's store-and-forward per hop (1.5 us for 64 KiB at 400 Gb/s x 0.85).
 *
 * Link delays are the topology's (0 for built fabrics: NCCL's per-step latency, which the
 * collective scheduler charges, already includes the wire).
 *
 * Symmetry: none; every GPU is simulated (the spec turns symmetry off, the executor refuses a
 * collapsed workload). */

typedef struct packet_net {
    orr_topo topo;
    orr_transport *nvl;   /* the flow model, for flows that stay on one node's NVLink */
    orr_transport *pkt;   /* the packet engine, for everything else */
    orr_transport split;  /* what the runner drives: picks nvl or pkt per flow */
    orr_route_opts route;
    orr_packet_config pcfg;
    orr_runner *run;
    orr_sched sched;
    orr_sched_opts opts;
} packet_net;

static void packet_send(orr_net *n, uint32_t src, uint32_t dst, uint64_t bytes, orr_event_fn done, void *ctx,
                        uint64_t arg)
{
    packet_net *f = n->impl;
    orr_net_run_send(n, f->run, &f->sched, src, dst, bytes, done, ctx, arg);
}

static void packet_collective(orr_net *n, const orr_coll_desc *d, const uint32_t *members, orr_event_fn done,
                              void *ctx, uint64_t arg)
{
    packet_net *f = n->impl;
    orr_net_run_collective(n, f->run, &f->sched, &f->opts, d, members, done, ctx, arg);
}

static void packet_destroy(orr_net *n)
{
    packet_net *f = n->impl;
    orr_runner_free(f->run);
    if (f->nvl) f->nvl->destroy(f->nvl);
    if (f->pkt) f->pkt->destroy(f->pkt);
    orr_topo_free(&f->topo);
    orr_sched_free(&f->sched);
    free(f);
    free(n);
}

static int nvlink_only(const packet_net *f, uint32_t src, uint32_t dst)
{
    uint32_t gpn = f->route.gpus_per_node, links[2];
    if (gpn < 2 || src / gpn != dst / gpn) return 0;
    if (orr_topo_route(&f->topo, &f->route, src, dst, 0, links, 2) != 2) return 0;
    return f->topo.links[links[0]].tier == ORR_TIER_NVLINK && f->topo.links[links[1]].tier == ORR_TIER_NVLINK;
}

static void split_start_flow(orr_transport *t, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t flow_id,
                             orr_event_fn done, void *ctx, uint64_t arg)
{
    packet_net *f = t->impl;
    orr_transport *to = nvlink_only(f, src, dst) ? f->nvl : f->pkt;
    to->start_flow(to, src, dst, bytes, flow_id, done, ctx, arg);
}

static void split_destroy(orr_transport *t) { (void)t; /* the parts are packet_destroy's */ }

static int packet_init(orr_net *n, const orr_net_config *cfg, orr_err *err)
{
    if (!cfg || cfg->gpus == 0)
        return orr_fail(err, "network backend packet: needs the job's GPU count and topology");
    if (cfg->pxn)
        return orr_fail(err, "--pxn (network.pxn): not supported by --net packet (the packet engine routes every "
                             "flow by shortest path); use --net flow for PXN");
    uint32_t payload = cfg->packet_payload_bytes ? cfg->packet_payload_bytes : ORR_NET_PACKET_PAYLOAD_DEFAULT;
    orr_cc cc = cfg->cc ? cfg->cc : ORR_CC_DCQCN;
    if (cc != ORR_CC_DCQCN && cc != ORR_CC_HPCC && cc != ORR_CC_TIMELY && cc != ORR_CC_DCTCP)
        return orr_fail(err, "--cc (network.cc): congestion control %d is not implemented", (int)cc);
    packet_net *f = orr_xcalloc(1, sizeof *f);
    if (orr_topo_build(&f->topo, n->gpu, n->cluster, cfg->gpus, &cfg->topo, err)) {
        free(f);
        return -1;
    }
    orr_packet_config *pc = &f->pcfg;
    orr_packet_config_preset(pc, cc, orr_cluster_gpu_nic_Bps(n->cluster), payload);
    double wire = orr_packet_wire_per_payload(pc);
    pc->rate_scale[ORR_TIER_NVLINK] = n->cluster->nvlink_eff;
    for (int t = ORR_TIER_HOST; t < ORR_TIER_COUNT; t++) pc->rate_scale[t] = n->cluster->net_eff * wire;
    orr_packet_config_red_for_topology(pc, &f->topo);
    f->pkt = orr_packet_transport_create(n->engine, &f->topo, pc, err);
    if (!f->pkt) {
        orr_topo_free(&f->topo);
        free(f);
        return -1;
    }
    f->route.ecmp = 1;
    f->route.gpus_per_node = n->cluster->gpus_per_node;
    f->nvl = orr_net_flow_model(n, &f->topo, &f->route);
    f->split.engine = n->engine;
    f->split.topo = &f->topo;
    f->split.start_flow = split_start_flow;
    f->split.destroy = split_destroy;
    f->split.impl = f;
    f->run = orr_runner_create(&f->split);
    f->opts.gpus_per_node = n->cluster->gpus_per_node;
    f->opts.max_flows = cfg->max_flows;
    n->impl = f;
    n->send = packet_send;
    n->collective = packet_collective;
    n->destroy = packet_destroy;
    return 0;
}

/* ---- statistics of the topology backends (flow, packet) ---- */

const orr_topo *orr_net_topo(const orr_net *n)
{
    if (!n) return NULL;
    if (n->kind == ORR_NET_FLOW) return orr_net_transport(n)->topo;
    return n->kind == ORR_NET_PACKET ? &((packet_net *)n->impl)->topo : NULL;
}

void orr_net_sync(orr_net *n)
{
    if (!orr_net_topo(n)) return;
    orr_flow_sync(n->kind == ORR_NET_FLOW ? orr_net_transport(n) : ((packet_net *)n->impl)->nvl);
}

void orr_net_link_use_get(const orr_net *n, uint32_t link, orr_net_link_use *out)
{
    memset(out, 0, sizeof *out);
    const orr_topo *t = orr_net_topo(n);
    if (!t || link >= t->n_links) return;
    const orr_flow_link_stats *st;
    if (n->kind == ORR_NET_FLOW) {
        st = orr_flow_net_link_stats(n, link);
    } else if (t->links[link].tier != ORR_TIER_NVLINK) {
        orr_packet_port_stats ps;
        orr_packet_port_stats_get(orr_packet_transport_sim(((packet_net *)n->impl)->pkt), link, &ps);
        out->bytes = (double)ps.tx_bytes;
        out->bottleneck_ps = ps.saturated_ps;
        return;
    } else {
        st = orr_flow_link_stats_of(((packet_net *)n->impl)->nvl, link);
    }
    out->bytes = st->bytes;
    out->bottleneck_ps = st->saturated_ps;
}

void orr_net_track_links(orr_net *n)
{
    const orr_topo *t = orr_net_topo(n);
    if (!t || n->link_bins) return;
    n->link_bins = orr_link_bins_new(t->n_links);
    if (n->kind == ORR_NET_FLOW) {
        orr_flow_set_link_bins(orr_net_transport(n), n->link_bins);
    } else { /* the two models share no link (see "packet" above): one set of windows serves both */
        packet_net *f = n->impl;
        orr_flow_set_link_bins(f->nvl, n->link_bins);
        orr_packet_set_link_bins(orr_packet_transport_sim(f->pkt), n->link_bins);
    }
}

const double *orr_net_link_windows(const orr_net *n, uint32_t link, int64_t *width_ps)
{
    if (!n || !n->link_bins) return NULL;
    *width_ps = n->link_bins->width_ps;
    return orr_link_bins_of(n->link_bins, n->kind == ORR_NET_FLOW ? orr_flow_net_link_rep(n, link) : link);
}

uint64_t orr_net_flows(const orr_net *n)
{
    if (!orr_net_topo(n)) return 0;
    return n->kind == ORR_NET_FLOW ? orr_net_counts(n).flows : orr_runner_flows(((packet_net *)n->impl)->run);
}

orr_packet_sim *orr_net_packet_sim(const orr_net *n)
{
    return n && n->kind == ORR_NET_PACKET ? orr_packet_transport_sim(((packet_net *)n->impl)->pkt) : NULL;
}

const orr_packet_config *orr_net_packet_config(const orr_net *n)
{
    return n && n->kind == ORR_NET_PACKET ? &((packet_net *)n->impl)->pcfg : NULL;
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
    if ((kind == ORR_NET_FLOW && orr_flow_net_init(n, cfg, err)) || (kind == ORR_NET_PACKET && packet_init(n, cfg, err))) {
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
    orr_link_bins_free(n->link_bins); /* the backend's models only point at it */
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
