/*
 * analytic_net.c - the analytic network backend: no state beyond the hardware. A send finishes
 * after orr_comm_p2p_ps and a collective after orr_comm_coll_ps (src/comm/nccl.c), both counted
 * from the engine's current time, with no contention between concurrent transfers. It has no
 * topology, so the statistics entries of its table stay NULL.
 */
#include "net_internal.h"

#include <stdlib.h>

static void analytic_send(orr_net *n, uint32_t src, uint32_t dst, uint64_t bytes, orr_event_fn done,
                          void *ctx, uint64_t arg)
{
    int64_t dt = orr_comm_p2p_ps(n->gpu, n->cluster, src, dst, bytes);
    orr_engine_after(n->engine, dt, done, ctx, arg);
}

static void analytic_collective(orr_net *n, const orr_coll_desc *d, const uint32_t *members,
                                orr_event_fn done, void *ctx, uint64_t arg)
{
    orr_coll_desc s = orr_net_coll_shape(n, d, members);
    orr_engine_after(n->engine, orr_comm_coll_ps(n->gpu, n->cluster, &s, NULL), done, ctx, arg);
}

static void analytic_destroy(orr_net *n) { free(n); }

int orr_analytic_net_init(orr_net *n, const orr_net_config *cfg, orr_err *err)
{
    (void)cfg;
    (void)err;
    n->send = analytic_send;
    n->collective = analytic_collective;
    n->destroy = analytic_destroy;
    return 0;
}
