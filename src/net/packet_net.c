/*
 * packet_net.c - the packet network backend: the job's topology with the inter-node flows on the
 * packet-level RDMA engine (src/net/packet) and the flows inside a node on the flow model.
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
 * Symmetry: as the flow backend (src/net/images.c): with a collapsed workload, every collective
 * and send runs on all the GPUs the simulated ranks stand for, so the packet engine carries every
 * GPU's inter-node flows, as without symmetry; what is collapsed is the executor's ranks, and the
 * NVLink flows inside mirrored servers (they finish with their preimages). Exact when the images
 * run in step; where ECMP puts an image's flows on a path another image does not share, a
 * collective ends with its slowest image (`tests/test_packet_net.c` compares with --no-symmetry).
 */
#include "net_internal.h"
#include "orrery/collsched.h"
#include "orrery/flow.h"
#include "orrery/packet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    orr_net_images *im;   /* NULL: no symmetry, every GPU simulated */
} packet_net;

static void packet_send(orr_net *n, uint32_t src, uint32_t dst, uint64_t bytes, orr_event_fn done, void *ctx,
                        uint64_t arg)
{
    packet_net *f = n->impl;
    if (f->im) orr_net_images_send(f->im, n, f->run, src, dst, bytes, done, ctx, arg);
    else orr_net_run_send(n, f->run, &f->sched, src, dst, bytes, done, ctx, arg);
}

static void packet_collective(orr_net *n, const orr_coll_desc *d, const uint32_t *members, orr_event_fn done,
                              void *ctx, uint64_t arg)
{
    packet_net *f = n->impl;
    if (f->im) orr_net_images_collective(f->im, n, f->run, &f->opts, d, members, done, ctx, arg);
    else orr_net_run_collective(n, f->run, &f->sched, &f->opts, d, members, done, ctx, arg);
}

static void packet_destroy(orr_net *n)
{
    packet_net *f = n->impl;
    if (f->pcfg.memo_path[0]) { /* what the run learnt goes to the file (a failure is reported, the run stands) */
        orr_err err;
        if (orr_packet_memo_save(orr_packet_transport_sim(f->pkt), f->pcfg.memo_path, &err))
            fprintf(stderr, "orrery: %s\n", err.msg);
    }
    orr_runner_free(f->run);
    if (f->nvl) f->nvl->destroy(f->nvl);
    if (f->pkt) f->pkt->destroy(f->pkt);
    orr_net_images_free(f->im);
    orr_topo_free(&f->topo);
    orr_sched_free(&f->sched);
    free(f);
    free(n);
}

static int nvlink_only(const packet_net *f, uint32_t src, uint32_t dst)
{
    uint32_t gpn = f->route.gpus_per_node, links[2];
    if (gpn < 2 || src / gpn != dst / gpn) return 0;
    const orr_topo *t = &f->topo; /* orr_topo_route's path inside a node, without its divisions */
    if (!orr_topo_nvlink_path(t, src, dst, links) && orr_topo_route(t, &f->route, src, dst, 0, links, 2) != 2)
        return 0;
    return t->links[links[0]].tier == ORR_TIER_NVLINK && t->links[links[1]].tier == ORR_TIER_NVLINK;
}

static void split_start_flow(orr_transport *t, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t flow_id,
                             orr_event_fn done, void *ctx, uint64_t arg)
{
    packet_net *f = t->impl;
    orr_transport *to = nvlink_only(f, src, dst) ? f->nvl : f->pkt;
    to->start_flow(to, src, dst, bytes, flow_id, done, ctx, arg);
}

static void split_destroy(orr_transport *t) { (void)t; /* the parts are packet_destroy's */ }

/* ---- statistics ---- */

static const orr_topo *packet_topo(const orr_net *n) { return &((const packet_net *)n->impl)->topo; }

static void packet_sync(orr_net *n) { orr_flow_sync(((packet_net *)n->impl)->nvl); }

static uint32_t packet_link_rep(const orr_net *n, uint32_t link)
{
    return orr_net_images_link_rep(((const packet_net *)n->impl)->im, link);
}

/* The two models share no link (see above): NVLink links are the flow model's (a mirrored
 * server's report its representative's), the rest the packet engine's ports. */
static void packet_link_use(const orr_net *n, uint32_t link, orr_net_link_use *out)
{
    const packet_net *f = n->impl;
    if (f->topo.links[link].tier != ORR_TIER_NVLINK) {
        orr_packet_port_stats ps;
        orr_packet_port_stats_get(orr_packet_transport_sim(f->pkt), link, &ps);
        out->bytes = (double)ps.tx_bytes;
        out->bottleneck_ps = ps.saturated_ps;
        return;
    }
    if (orr_net_images_link_use(f->im, link, out)) return; /* a rotated server's */
    const orr_flow_link_stats *st = orr_flow_link_stats_of(f->nvl, packet_link_rep(n, link));
    out->bytes = st->bytes;
    out->bottleneck_ps = st->saturated_ps;
}

/* One set of windows serves both models (they share no link). */
static void packet_track_links(orr_net *n)
{
    packet_net *f = n->impl;
    orr_net_images_no_rotation(f->im);
    orr_flow_set_link_bins(f->nvl, n->link_bins);
    orr_packet_set_link_bins(orr_packet_transport_sim(f->pkt), n->link_bins);
}

static void packet_summarise(const orr_net *n, orr_net_counters *out)
{
    const packet_net *f = n->impl;
    const orr_packet_sim *ps = orr_packet_transport_sim(f->pkt);
    out->flows = orr_runner_flows(f->run);
    orr_net_images_count(f->im, out);
    out->cc = f->pcfg.cc;
    out->payload_bytes = f->pcfg.mtu_bytes;
    orr_packet_stats_get(ps, &out->packet);
    orr_packet_accel_stats_get(ps, &out->accel);
    uint32_t nf = orr_packet_flow_count(ps);
    for (uint32_t i = 0; i < nf; i++) {
        orr_packet_flow_info fi;
        orr_packet_flow_get(ps, i, &fi);
        out->retransmits += fi.retransmits;
    }
}

int orr_packet_net_init(orr_net *n, const orr_net_config *cfg, orr_err *err)
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
    pc->accel = !cfg->no_accel;
    pc->memo = !cfg->no_accel && !cfg->no_memo;
    if (cfg->memo_path) {
        if (!pc->memo) {
            orr_topo_free(&f->topo);
            free(f);
            return orr_fail(err, "--memo %s: the memo is off (--no-accel or --no-memo)", cfg->memo_path);
        }
        snprintf(pc->memo_path, sizeof pc->memo_path, "%s", cfg->memo_path);
    }
    if (cfg->ss_theta > 0) pc->ss_theta = cfg->ss_theta;
    if (cfg->ss_window > 0) pc->ss_window = cfg->ss_window;
    if (cfg->seed) pc->seed = cfg->seed;
    f->pkt = orr_packet_transport_create(n->engine, &f->topo, pc, err);
    if (!f->pkt) {
        orr_topo_free(&f->topo);
        free(f);
        return -1;
    }
    if (pc->memo_path[0] && orr_packet_memo_load(orr_packet_transport_sim(f->pkt), pc->memo_path, err)) {
        f->pkt->destroy(f->pkt);
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
    f->im = orr_net_images_new(&f->topo, n->gpu, n->cluster, f->nvl, cfg);
    n->impl = f;
    n->send = packet_send;
    n->collective = packet_collective;
    n->destroy = packet_destroy;
    n->topo = packet_topo;
    n->sync = packet_sync;
    n->link_use = packet_link_use;
    n->track_links = packet_track_links;
    n->link_rep = packet_link_rep;
    n->summarise = packet_summarise;
    return 0;
}


orr_packet_sim *orr_net_packet_sim(const orr_net *n)
{
    return n && n->kind == ORR_NET_PACKET ? orr_packet_transport_sim(((packet_net *)n->impl)->pkt) : NULL;
}

const orr_packet_config *orr_net_packet_config(const orr_net *n)
{
    return n && n->kind == ORR_NET_PACKET ? &((packet_net *)n->impl)->pcfg : NULL;
}
