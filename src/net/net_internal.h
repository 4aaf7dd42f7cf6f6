/*
 * net_internal.h - what net.c (the factory and dispatch) and the backends (analytic_net.c,
 * flow_net.c, packet_net.c) share. Not a public header.
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
/* Make n (kind, engine and hardware set) the analytic, flow or packet backend for cfg: fill its
 * table and impl (analytic_net.c, flow_net.c, packet_net.c). */
int orr_analytic_net_init(orr_net *n, const orr_net_config *cfg, orr_err *err);
int orr_flow_net_init(orr_net *n, const orr_net_config *cfg, orr_err *err);
int orr_packet_net_init(orr_net *n, const orr_net_config *cfg, orr_err *err);
/* The max-min flow model on topo with the cluster's protocol efficiencies as link capacity scales
 * (NVLink links by nvlink_eff, the rest by net_eff); the flow backend's, and the packet backend's
 * for the flows inside a node. */
orr_transport *orr_net_flow_model(const orr_net *n, const orr_topo *topo, const orr_route_opts *route);

#endif
