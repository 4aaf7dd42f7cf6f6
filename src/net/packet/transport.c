/*
 * transport.c - the packet engine as an orr_transport (transport.h), for `--net packet`: the
 * collective scheduler starts flows at the shared engine's current time and is called back when
 * the last byte of each has been received in order at its destination.
 *
 * The flow id given by the caller seeds the ECMP hash, so paths are deterministic. All flows use
 * priority group 3 (the reference's data class) and the configured congestion control.
 *
 * Flows between the same two hosts are messages on one connection: NCCL opens its RDMA queue
 * pairs once per communicator and channel and sends every step of every collective on them, so
 * a flow continues the queue pair of the previous flow between its hosts (its rate and congestion
 * control state) when that one has sent all its data (orr_packet_flow_continue). Without this every ring
 * step would start a fresh queue pair at line rate, and on a congested link each would pay
 * DCQCN's whole reaction (overshoot, cuts, slow recovery) again: an artefact, not NCCL.
 */
#include "orrery/packet.h"

#include <stdlib.h>

typedef struct packet_transport {
    orr_transport base;
    orr_packet_sim *sim;
    orr_map last_flow;   /* (src << 32 | dst) -> the last flow started between them */
} packet_transport;

static void pt_start_flow(orr_transport *t, uint32_t src_host, uint32_t dst_host, uint64_t bytes,
                          uint64_t flow_id, orr_event_fn done, void *ctx, uint64_t arg)
{
    packet_transport *p = t->impl;
    uint32_t id = orr_packet_add_flow(p->sim, src_host, dst_host, bytes, orr_engine_now(t->engine), 3,
                                      (uint16_t)(10000 + (flow_id & 0x7fff)), 100, orr_hash64(flow_id), done, ctx, arg);
    uint64_t key = (uint64_t)src_host << 32 | dst_host;
    const uint32_t *prev = orr_map_get(&p->last_flow, key);
    if (prev) orr_packet_flow_continue(p->sim, id, *prev);
    orr_map_put(&p->last_flow, key, id);
}

static void pt_destroy(orr_transport *t)
{
    if (!t) return;
    packet_transport *p = t->impl;
    orr_packet_sim_free(p->sim);
    orr_map_free(&p->last_flow);
    free(p);
}

orr_transport *orr_packet_transport_create(orr_engine *e, const orr_topo *t, const orr_packet_config *cfg,
                                           orr_err *err)
{
    orr_packet_sim *sim = orr_packet_sim_create(e, t, cfg, err);
    if (!sim) return NULL;
    packet_transport *p = orr_xcalloc(1, sizeof *p);
    p->sim = sim;
    p->base.engine = e;
    p->base.topo = t;
    p->base.start_flow = pt_start_flow;
    p->base.destroy = pt_destroy;
    p->base.impl = p;
    return &p->base;
}

orr_packet_sim *orr_packet_transport_sim(orr_transport *t) { return ((packet_transport *)t->impl)->sim; }
