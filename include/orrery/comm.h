/*
 * comm.h - collective algorithms. A collective is an algorithm, not a number: NCCL's ring, tree
 * (double binary tree), hierarchical (intra-node then inter-node) and NVLS (in-switch reduction)
 * algorithms, each with its
 * steps' latency and the bottleneck link's bandwidth and protocol efficiency. The analytic backend
 * uses the closed forms below; flow and packet backends (later issues) will decompose the same
 * algorithms into flows.
 */
#ifndef ORRERY_COMM_H
#define ORRERY_COMM_H

#include <stdint.h>
#include "orrery/hw.h"
#include "orrery/workload.h"

typedef enum orr_coll_algo {
    ORR_ALGO_AUTO, /* pick the fastest, as NCCL's tuner does */
    ORR_ALGO_RING,
    ORR_ALGO_TREE,
    ORR_ALGO_HIER,
    ORR_ALGO_NVLS, /* all-reduce reduced in the NVLink switch (NVLS; NVLS-tree across nodes) */
    ORR_ALGO_COUNT
} orr_coll_algo;

typedef struct orr_coll_desc {
    orr_coll_kind kind;
    uint64_t bytes;     /* per-rank buffer, NCCL convention (see orr_op) */
    uint32_t size;      /* ranks in the communicator */
    uint32_t nodes;     /* nodes spanned */
    uint32_t per_node;  /* ranks per node */
    orr_coll_algo algo; /* requested algorithm (AUTO: fastest) */
} orr_coll_desc;

/* Time of one collective; the algorithm used goes to *chosen if not NULL. */
int64_t orr_comm_coll_ps(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d,
                         orr_coll_algo *chosen);
/* Time of one algorithm (for tests and for the tuner). */
int64_t orr_comm_ring_ps(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d);
int64_t orr_comm_tree_ps(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d);
int64_t orr_comm_hier_ps(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d);
int64_t orr_comm_nvls_ps(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d);
/* What the tuner chose for a collective, for the flow-level scheduler (src/comm/sched.c): the
 * algorithm, NCCL's protocol and its payload fraction of the wire bandwidth (LL 0.5, LL128
 * 120/128, Simple 1), and the parts of the analytic time: coll_base, the sum of the per-step
 * latencies at that protocol, and the total (== orr_comm_coll_ps). A trivial collective (one rank
 * or no bytes) has all times 0. Returns total_ps. */
typedef struct orr_coll_plan {
    orr_coll_algo algo;
    const char *proto_name;
    double bw_frac;
    int64_t base_ps, latency_ps, total_ps;
} orr_coll_plan;
int64_t orr_comm_plan(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d, orr_coll_plan *plan);
/* Time of a point-to-point transfer between two global ranks. */
int64_t orr_comm_p2p_ps(const orr_gpu *g, const orr_cluster *c, uint32_t src, uint32_t dst,
                        uint64_t bytes);
/* nccl-tests' bus-bandwidth factor for a collective of n ranks (all-reduce 2(n-1)/n, ...). */
double orr_comm_busbw_factor(orr_coll_kind k, uint32_t n);

const char *orr_coll_algo_name(orr_coll_algo a);

#endif
