/*
 * net_internal.h - what net.c (the factory, the analytic and packet backends, the statistics)
 * and flow_net.c (the flow backend behind orr_net) share. Not a public header.
 */
#ifndef ORRERY_NET_INTERNAL_H
#define ORRERY_NET_INTERNAL_H

#include "orrery/collsched.h"
#include "orrery/flow.h"
#include "orrery/net.h"

/* d with nodes and per_node filled from the members (ascending global ranks) where d left them
 * 0. */
orr_coll_desc orr_net_coll_shape(const orr_net *n, const orr_coll_desc *d, const uint32_t *members);
/* Runs a send of bytes from src to dst (a collective d among members) as NCCL's steps: schedules
 * it into sched (scratch) and starts that DAG of flows on run, which calls done(ctx, arg) when the
 * last flow has finished. The flow and packet backends' common case. */
void orr_net_run_send(orr_net *n, orr_runner *run, orr_sched *sched, uint32_t src, uint32_t dst, uint64_t bytes,
                      orr_event_fn done, void *ctx, uint64_t arg);
void orr_net_run_collective(orr_net *n, orr_runner *run, orr_sched *sched, const orr_sched_opts *opts,
                            const orr_coll_desc *d, const uint32_t *members, orr_event_fn done, void *ctx,
                            uint64_t arg);
/* Makes n (kind ORR_NET_FLOW, engine and hardware set) the flow backend for cfg. */
int orr_flow_net_init(orr_net *n, const orr_net_config *cfg, orr_err *err);
/* The max-min flow model on topo with the cluster's protocol efficiencies as link capacity scales
 * (NVLink links by nvlink_eff, the rest by net_eff); the flow backend's, and the packet backend's
 * for the flows inside a node. */
orr_transport *orr_net_flow_model(const orr_net *n, const orr_topo *topo, const orr_route_opts *route);
/* The flow backend's statistics of a link as the whole job loads it (net.h orr_net_link_use_get);
 * call orr_flow_sync first. */
const orr_flow_link_stats *orr_flow_net_link_stats(const orr_net *n, uint32_t link);
/* The flow backend's transport link whose statistics link reports (itself unless mirrored). */
uint32_t orr_flow_net_link_rep(const orr_net *n, uint32_t link);

#endif
