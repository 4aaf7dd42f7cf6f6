/*
 * topo.h - network topologies shared by the flow-level and packet-level backends and by
 * `orrery netsim`: a graph of hosts (GPUs with their NIC, or servers in HPCC inputs), packet
 * switches and NVSwitches joined by full-duplex links, and shortest-path routing with ECMP.
 *
 * A full-duplex link is two directed links; link ids come in pairs so that id ^ 1 is the reverse
 * direction of id. Nodes are numbered as the input numbers them; hosts are also numbered 0..n_hosts-1
 * in node order (host_node / node_host translate). Routing tables are hop distances from every node
 * to every host, built by orr_topo_finish(); a path is chosen hop by hop among the neighbours one
 * hop closer, by a deterministic hash of the flow id (ECMP), or always the first (single path).
 */
#ifndef ORRERY_TOPO_H
#define ORRERY_TOPO_H

#include <stdint.h>
#include "orrery/core.h"

typedef enum orr_node_kind {
    ORR_NODE_HOST,      /* a GPU with its NIC, or a server */
    ORR_NODE_SWITCH,    /* packet switch (leaf, spine, core) */
    ORR_NODE_NVSWITCH,  /* NVLink switch inside a node or an NVL72-style domain */
} orr_node_kind;

/* Tiers, for reports (utilisation per tier). */
enum { ORR_TIER_NVLINK = 0, ORR_TIER_HOST = 1, ORR_TIER_AGG = 2, ORR_TIER_CORE = 3, ORR_TIER_COUNT = 4 };

typedef struct orr_link {
    uint32_t src, dst;  /* node ids */
    double rate_Bps;    /* bytes per second, per direction */
    int64_t delay_ps;   /* propagation delay */
    double error_rate;  /* per-packet loss probability (packet backend) */
    uint8_t tier;
} orr_link;

typedef struct orr_topo {
    uint32_t n_nodes, n_hosts, n_links;
    uint8_t *kind;        /* [n_nodes] orr_node_kind */
    uint32_t *node_host;  /* [n_nodes] host index, or UINT32_MAX for switches */
    uint32_t *host_node;  /* [n_hosts] node id */
    orr_link *links;      /* [n_links] directed; link ^ 1 is the reverse */
    size_t cap_nodes, cap_links;
    /* Built by orr_topo_finish(): outgoing links per node (CSR) and hop distances. */
    uint32_t *out_start;  /* [n_nodes + 1] */
    uint32_t *out;        /* [n_links] link ids grouped by source node */
    uint16_t *dist;       /* [n_hosts * n_nodes] hops from node v to host h at [h * n_nodes + v],
                           * UINT16_MAX if unreachable */
    uint32_t *nvl_up;     /* [n_hosts] the host's first link to an NVSwitch in link-id order, or
                           * UINT32_MAX: where two hosts' first ones meet, that is their NVLink path */
    uint32_t gpus_per_server; /* from the input header (1 if not given) */
    int finished;
} orr_topo;

void orr_topo_init(orr_topo *t);
void orr_topo_free(orr_topo *t);
uint32_t orr_topo_add_node(orr_topo *t, orr_node_kind kind);
/* Adds a full-duplex link; returns the id of the a->b direction (b->a is id + 1). */
uint32_t orr_topo_add_link(orr_topo *t, uint32_t a, uint32_t b, double rate_Bps, int64_t delay_ps,
                           double error_rate, uint8_t tier);
/* Builds adjacency and routing tables. Fails (naming the topology) if a host cannot reach
 * another or the tables would be too large. */
int orr_topo_finish(orr_topo *t, const char *what, orr_err *err);

/* Shortest-path next hops from node toward host dst: writes up to max link ids, returns their
 * number (0 at the destination or if unreachable). */
uint32_t orr_topo_next_hops(const orr_topo *t, uint32_t node, uint32_t dst_host, uint32_t *links,
                            uint32_t max);
/* The ECMP choice at one node: next-hop link for a flow hash (deterministic). UINT32_MAX if none. */
uint32_t orr_topo_ecmp(const orr_topo *t, uint32_t node, uint32_t dst_host, uint64_t flow_hash);
/* The whole path of a flow from host src to host dst, choosing by flow_hash at every hop
 * (ecmp = 0: always the first next hop). Writes up to max link ids, returns the hop count, or
 * 0 if src == dst; -1 if max is too small or dst is unreachable. */
int orr_topo_path(const orr_topo *t, uint32_t src_host, uint32_t dst_host, uint64_t flow_hash,
                  int ecmp, uint32_t *links, uint32_t max);

/* The most node x host entries of a topology's routing tables (one hop distance each). A fabric
 * has at least as many nodes as hosts, so more than sqrt of it in GPUs can never be routed. */
#define ORR_TOPO_MAX_DIST_ENTRIES (128ull * 1024 * 1024)

/* The link rates a topology file may give (bytes/s): 1 Mb/s to 100 Tb/s. */
#define ORR_LINK_RATE_MIN_Bps (1e6 / 8)
#define ORR_LINK_RATE_MAX_Bps (1e14 / 8)

/* Reads the HPCC/SimAI topology text format (data/validation/ns3/README.md):
 *   node_num gpus_per_server nvswitch_num switch_num link_num gpu_type   (or: node_num switch_num link_num)
 *   the nvswitch ids then the switch ids
 *   src dst rate delay error_rate      (one per link; rate like 100Gbps, delay like 0.001ms or 1us)
 * Errors name the file, the line number and the field. The result is finished. */
int orr_topo_read_hpcc(orr_topo *t, const char *path, orr_err *err);
int orr_topo_parse_hpcc(orr_topo *t, const char *text, const char *path, orr_err *err);

/* Parses "100Gbps", "400Gb/s", "25GBps", "10Mbps" into bytes/s; "0.001ms", "1us", "500ns", "1e-6s"
 * into ps. Return -1 if malformed. */
int orr_parse_rate_Bps(const char *s, double *out);
int orr_parse_delay_ps(const char *s, int64_t *out);

#endif
