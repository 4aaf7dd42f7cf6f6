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

/* A collapsed workload's collectives and sends on every GPU it stands for, with mirrored servers
 * (images.c): what the backends with ORR_NET_CAP_SYMMETRY run them through. NULL (nothing to
 * do: run them as they are) when cfg has no symmetry. topo is the backend's, kept by pointer. */
typedef struct orr_net_images orr_net_images;
orr_net_images *orr_net_images_new(const orr_topo *topo, const orr_gpu *g, const orr_cluster *c,
                                   const orr_transport *nvl, const orr_net_config *cfg);
void orr_net_images_free(orr_net_images *im);
/* As orr_net_run_send / orr_net_run_collective, on every distinct image of the pair (group) in
 * one DAG that completes when its last image has. */
void orr_net_images_send(orr_net_images *im, orr_net *n, orr_runner *run, uint32_t src, uint32_t dst, uint64_t bytes,
                         orr_event_fn done, void *ctx, uint64_t arg);
void orr_net_images_collective(orr_net_images *im, orr_net *n, orr_runner *run, const orr_sched_opts *opts,
                               const orr_coll_desc *d, const uint32_t *members, orr_event_fn done, void *ctx,
                               uint64_t arg);
/* The link whose statistics stand for link (a mirrored server's NVLink link: its representative's;
 * im NULL: link itself). */
uint32_t orr_net_images_link_rep(const orr_net_images *im, uint32_t link);
/* An NVLink link of a server with rotated flows (images.c) as the whole job loads it: 1 and *out
 * filled; 0 for any other link (the backend's own statistics at its link_rep). After a sync. */
int orr_net_images_link_use(const orr_net_images *im, uint32_t link, orr_net_link_use *out);
/* Link windows are tracked (orr_net_track_links): no rotation, whose windows would not be the
 * links' own. Before anything runs. */
void orr_net_images_no_rotation(orr_net_images *im);
/* Adds the flows left out inside mirrored servers to out->flows and fills out's mirrored_*. */
void orr_net_images_count(const orr_net_images *im, orr_net_counters *out);

#endif
