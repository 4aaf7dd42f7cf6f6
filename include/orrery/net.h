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
#include "orrery/flow.h"
#include "orrery/hw.h"
#include "orrery/topo_build.h"
#include "orrery/transport.h"

typedef enum orr_net_kind { ORR_NET_ANALYTIC, ORR_NET_FLOW, ORR_NET_KIND_COUNT } orr_net_kind;

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

/* What a topology-based backend (flow) needs beyond the hardware. */
typedef struct orr_net_config {
    uint32_t gpus;          /* GPUs of the job: hosts 0..gpus-1 of the topology are global ranks */
    orr_topo_spec topo;     /* the fabric (orr_topo_spec_default for the cluster's own) */
    int pxn;                /* rail-local routing of cross-rail inter-node flows (topo_build.h) */
    uint32_t max_flows;     /* flows per collective before steps are grouped (0: 65536) */
    /* The workload's symmetry (workload.h), or NULL: with one, a collective or send among
     * simulated ranks also runs on each of its distinct images (flows of all of them share the
     * fabric), and it completes when every image has; see src/net/flow_net.c. */
    const orr_sym *sym;
    const orr_group *groups; /* with sym: the job's communicators (mirroring needs them all to
                              * pass a check; src/net/flow_net.c) */
    size_t ngroups;
    int no_mirror;          /* with sym: simulate the flows inside every server, even where
                             * mirroring servers is exact (for tests; see src/net/flow_net.c) */
} orr_net_config;

/* Creates a backend of the given kind on engine e. Returns NULL with a message if unsupported.
 * The flow backend needs cfg (the analytic one ignores it); orr_net_create passes none. */
orr_net *orr_net_create_cfg(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                            const orr_net_config *cfg, orr_err *err);
orr_net *orr_net_create(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                        orr_err *err);
/* The flow backend's transport and topology (statistics, reports); NULL for other kinds. */
orr_transport *orr_net_transport(const orr_net *n);
/* The flow backend's statistics of a link as the whole job loads it: where the backend mirrors
 * servers (src/net/flow_net.c), a mirrored server's NVLink link reports its representative's.
 * NULL for other kinds. Call orr_flow_sync first. */
const orr_flow_link_stats *orr_net_link_stats(const orr_net *n, uint32_t link);
typedef struct orr_net_flow_counts {
    uint64_t flows;            /* the whole job's flows: started, plus those inside mirrored servers */
    uint32_t mirrored_servers; /* servers whose inside flows mirror another server's */
    uint64_t mirrored_flows;   /* flows inside mirrored servers (not simulated) */
    uint64_t unmatched_flows;  /* flows inside mirrored servers simulated for want of a preimage */
} orr_net_flow_counts;
/* All 0 for other kinds. */
orr_net_flow_counts orr_net_counts(const orr_net *n);
/* Parses "analytic" / "flow"; -1 if unknown. */
int orr_net_kind_parse(const char *name, orr_net_kind *out);
void orr_net_destroy(orr_net *n);
const char *orr_net_kind_name(orr_net_kind k);

#endif
