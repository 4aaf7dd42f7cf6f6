/*
 * transport.c - the packet engine as an orr_transport (transport.h), for `--net packet`: the
 * collective scheduler starts flows at the shared engine's current time and is called back when
 * the last byte of each has been received in order at its destination.
 *
 * The flow id given by the caller seeds the ECMP hash, so paths are deterministic. All flows use
 * priority group 3 (the reference's data class) and the configured congestion control.
 */
#include "orrery/packet.h"

#include <stdlib.h>

typedef struct packet_transport {
    orr_transport base;
    orr_packet_sim *sim;
} packet_transport;

static void pt_start_flow(orr_transport *t, uint32_t src_host, uint32_t dst_host, uint64_t bytes,
                          uint64_t flow_id, orr_event_fn done, void *ctx, uint64_t arg)
{
    packet_transport *p = t->impl;
    orr_packet_add_flow(p->sim, src_host, dst_host, bytes, orr_engine_now(t->engine), 3,
                        (uint16_t)(10000 + (flow_id & 0x7fff)), 100, orr_hash64(flow_id), done, ctx, arg);
}

static void pt_destroy(orr_transport *t)
{
    if (!t) return;
    packet_transport *p = t->impl;
    orr_packet_sim_free(p->sim);
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
