/*
 * net.h - the narrow network backend interface (in the manner of ASTRA-sim's AstraNetworkAPI):
 * the backend moves bytes between GPUs and calls back when they have arrived; it schedules on the
 * shared engine and reads its clock. The executor and the comm layer reach the network only through
 * this table, so analytic, flow-level and packet-level backends plug in behind it.
 */
#ifndef ORRERY_NET_H
#define ORRERY_NET_H

#include <stdint.h>
#include "orrery/comm.h"
#include "orrery/engine.h"
#include "orrery/hw.h"
#include "orrery/packet.h"
#include "orrery/topo_build.h"
#include "orrery/transport.h"

typedef enum orr_net_kind { ORR_NET_ANALYTIC, ORR_NET_FLOW, ORR_NET_PACKET, ORR_NET_KIND_COUNT } orr_net_kind;

typedef struct orr_net orr_net;
struct orr_net {
    orr_net_kind kind;
    orr_engine *engine;
    const orr_gpu *gpu;
    const orr_cluster *cluster;
    /* Moves bytes from global rank src to dst; calls done(ctx, arg) when the last byte arrived. */
    void (*send)(orr_net *n, uint32_t src, uint32_t dst, uint64_t bytes, orr_event_fn done,
                 void *ctx, uint64_t arg);
    /* Runs a collective among members (global ranks) starting now; calls done(ctx, arg) when it has
     * finished on every member. Analytic backends use the closed forms of comm.h; flow and packet
     * backends decompose it into sends. */
    void (*collective)(orr_net *n, const orr_coll_desc *d, const uint32_t *members,
                       orr_event_fn done, void *ctx, uint64_t arg);
    void (*destroy)(orr_net *n);
    void *impl;
};

/* What a topology-based backend (flow, packet) needs beyond the hardware. */
typedef struct orr_net_config {
    uint32_t gpus;          /* GPUs of the job: hosts 0..gpus-1 of the topology are global ranks */
    orr_topo_spec topo;     /* the fabric (orr_topo_spec_default for the cluster's own) */
    int pxn;                /* rail-local routing of cross-rail inter-node flows (topo_build.h);
                             * flow backend only (the packet engine routes by shortest path) */
    uint32_t max_flows;     /* flows per collective before steps are grouped (0: 65536) */
    /* packet backend */
    orr_cc cc;              /* congestion control (0: DCQCN) */
    uint32_t packet_payload_bytes; /* payload per data packet (0: ORR_NET_PACKET_PAYLOAD_DEFAULT) */
} orr_net_config;

/* Payload bytes per packet of `--net packet` unless told otherwise: a simulated packet stands for
 * 64 KiB of a flow (16 RoCE MTUs), so that the gigabytes of a training iteration's collectives
 * are a few tens of millions of events, not billions (docs/netsim.md "--net packet"). */
#define ORR_NET_PACKET_PAYLOAD_DEFAULT 65536u
/* The range --packet-payload accepts. */
#define ORR_PACKET_PAYLOAD_MIN 256u
#define ORR_PACKET_PAYLOAD_MAX 16777216u

/* Creates a backend of the given kind on engine e. Returns NULL with a message if unsupported.
 * The flow backend needs cfg (the analytic one ignores it); orr_net_create passes none. */
orr_net *orr_net_create_cfg(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                            const orr_net_config *cfg, orr_err *err);
orr_net *orr_net_create(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                        orr_err *err);
/* The flow backend's transport and topology (statistics, reports); NULL for other kinds. */
orr_transport *orr_net_transport(const orr_net *n);

/* Link statistics of a topology backend (flow or packet) over [0, now], for reports. */
typedef struct orr_net_link_use {
    double bytes;          /* bytes carried (packet engine: wire bytes, headers and ACKs included) */
    int64_t bottleneck_ps; /* flow model: time the link set some flow's max-min rate; packet
                            * engine: time it sent back to back (it had a backlog) */
} orr_net_link_use;
/* The topology of a flow or packet backend (link rates are the raw hardware rates); NULL for the
 * analytic one. */
const orr_topo *orr_net_topo(const orr_net *n);
/* Brings the link statistics up to the engine's time (call before reading them). */
void orr_net_sync(orr_net *n);
/* The statistics of directed link `link` as of the last orr_net_sync. */
void orr_net_link_use_get(const orr_net *n, uint32_t link, orr_net_link_use *out);
/* Flows the backend started (collectives and sends as flows); 0 for the analytic one. */
uint64_t orr_net_flows(const orr_net *n);
/* The packet backend's engine and its settings (statistics, reports); NULL for other kinds. */
orr_packet_sim *orr_net_packet_sim(const orr_net *n);
const orr_packet_config *orr_net_packet_config(const orr_net *n);

/* Parses "analytic" / "flow" / "packet"; -1 if unknown. */
int orr_net_kind_parse(const char *name, orr_net_kind *out);
void orr_net_destroy(orr_net *n);
const char *orr_net_kind_name(orr_net_kind k);

#endif
