/*
 * topo_build.h - network topologies built from a cluster description (or read from an HPCC/SimAI
 * link list), and the routing rules the flow and packet backends share on top of topo.h's
 * shortest paths.
 *
 * Every built topology has the same inside of a node: the GPU hosts are nodes 0..N-1 in global-rank
 * order (host index == global rank), each node of gpus_per_node GPUs has one NVSwitch joined to
 * each of its GPUs at the GPU's NVLink bandwidth (orr_gpu.nvlink_Bps, per direction), and every
 * GPU has one NIC at the cluster's nic_Bps to a leaf switch. Outside the node:
 *   rail-fat-tree  rail-optimised (DGX SuperPOD): nodes form scalable units of `leaf_hosts` nodes;
 *                  in each unit GPU i of every node goes to the unit's rail-i leaf; every leaf
 *                  goes up to every spine.
 *   fat-tree       2-tier Clos: leaves of `leaf_hosts` NIC ports, filled in rank order; every leaf
 *                  goes up to every spine.
 *   clos3          3-tier Clos: leaves as in fat-tree, `pod_leaves` leaves per pod up to the pod's
 *                  aggregation switches, every aggregation switch up to every core switch.
 *   hpcc           the link list of an HPCC/SimAI topology file (`path`), used as it is.
 * The leaves' uplinks together carry 1/oversub of their downlinks (oversub 1: full bisection);
 * the tiers above are not oversubscribed. Link delays are 0: the collective scheduler charges
 * NCCL's per-step latencies itself (src/comm/sched.c).
 */
#ifndef ORRERY_TOPO_BUILD_H
#define ORRERY_TOPO_BUILD_H

#include <stdint.h>
#include "orrery/hw.h"
#include "orrery/topo.h"

typedef enum orr_topo_kind {
    ORR_TOPO_RAIL_FAT_TREE,
    ORR_TOPO_FAT_TREE,
    ORR_TOPO_CLOS3,
    ORR_TOPO_HPCC,
    ORR_TOPO_KIND_COUNT
} orr_topo_kind;

typedef struct orr_topo_spec {
    orr_topo_kind kind;
    double oversub;       /* leaf downlink / uplink bandwidth, >= 1 (1: full bisection) */
    uint32_t leaf_hosts;  /* rail-fat-tree: nodes per scalable unit (0: 32); fat-tree, clos3:
                           * NIC ports per leaf (0: 32) */
    uint32_t spines;      /* spine (core) switches (0: 8) */
    uint32_t pod_leaves;  /* clos3: leaves per pod (0: 8); aggregation switches per pod = spines */
    char path[256];       /* hpcc: the topology file */
} orr_topo_spec;

/* Defaults: the cluster's own topology name (cluster->topology), oversub 1, sizes 0. */
void orr_topo_spec_default(orr_topo_spec *s, const orr_cluster *c);
/* Builds the topology of `gpus` GPUs of cluster c (nodes of c->gpus_per_node, the last possibly
 * partial). Errors name the field at fault ("topology.oversub: ..."). The result is finished. */
int orr_topo_build(orr_topo *t, const orr_gpu *g, const orr_cluster *c, uint32_t gpus,
                   const orr_topo_spec *s, orr_err *err);

int orr_topo_kind_parse(const char *name, orr_topo_kind *out);
const char *orr_topo_kind_name(orr_topo_kind k);

/* Routing on top of orr_topo_path:
 *   - two GPUs of one node talk over their NVSwitch (never out through the NICs and back);
 *   - with pxn, a GPU sending to a GPU of another node on another rail first moves the data over
 *     NVLink to the GPU of its own node on the destination's rail, which sends it out of its NIC
 *     (NCCL's PXN), so inter-node traffic stays rail-local; without it such a flow crosses the
 *     spine from the sender's rail leaf;
 *   - otherwise the shortest path, chosen at every hop by the flow hash (ecmp) or the first. */
typedef struct orr_route_opts {
    int ecmp;
    int pxn;
    uint32_t gpus_per_node; /* GPUs per node; 0: the topology's gpus_per_server */
} orr_route_opts;

/* Writes the links of the path from host src to host dst; returns the hop count (0 if src == dst),
 * -1 if max is too small or dst is unreachable. */
int orr_topo_route(const orr_topo *t, const orr_route_opts *o, uint32_t src, uint32_t dst,
                   uint64_t flow_hash, uint32_t *links, uint32_t max);
/* The 2-hop NVLink path host a -> NVSwitch -> host b (the one orr_topo_route takes inside a
 * node); returns 2, or 0 if the two share no NVSwitch. */
int orr_topo_nvlink_path(const orr_topo *t, uint32_t a, uint32_t b, uint32_t links[2]);

#endif
