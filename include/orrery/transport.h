/*
 * transport.h - what a flow-moving network model offers the collective scheduler: start a flow
 * between two hosts of a topology now, and call back when its last byte has arrived.
 *
 * The comm layer decomposes a collective into NCCL's steps, each a set of flows with
 * dependencies (src/comm), and runs them on a transport. The flow-level backend (max-min fair
 * sharing, src/net/flow) and the packet-level backend (RDMA NICs and switches, src/net/packet)
 * are both transports over the same orr_topo, driven by the shared orr_engine: they schedule
 * their own events on it and read its clock, so a training iteration, the collectives and the
 * network advance in one total order.
 */
#ifndef ORRERY_TRANSPORT_H
#define ORRERY_TRANSPORT_H

#include <stdint.h>
#include "orrery/engine.h"
#include "orrery/topo.h"

typedef struct orr_transport orr_transport;
struct orr_transport {
    orr_engine *engine;
    const orr_topo *topo;
    /* Starts a flow of bytes (> 0) from host src to host dst (topology host indices, src != dst)
     * at the engine's current time; done(ctx, arg) runs when the last byte has arrived. flow_id
     * is unique per flow and seeds the ECMP hash, so paths are deterministic. */
    void (*start_flow)(orr_transport *t, uint32_t src_host, uint32_t dst_host, uint64_t bytes,
                       uint64_t flow_id, orr_event_fn done, void *ctx, uint64_t arg);
    void (*destroy)(orr_transport *t);
    void *impl;
};

#endif
