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

typedef enum orr_net_kind { ORR_NET_ANALYTIC, ORR_NET_KIND_COUNT } orr_net_kind;

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

/* Creates a backend of the given kind on engine e. Returns NULL with a message if unsupported. */
orr_net *orr_net_create(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                        orr_err *err);
void orr_net_destroy(orr_net *n);
const char *orr_net_kind_name(orr_net_kind k);

#endif
