/*
 * collsched.h - collectives as flows: the steps of NCCL's algorithms as a DAG of flows between
 * GPUs, and a runner that executes such a DAG on any orr_transport (the flow-level backend, the
 * packet-level backend).
 *
 * A schedule is a list of flows (src and dst global ranks = topology hosts, wire bytes, and a
 * latency charged after its dependencies are met and before it starts) and dependency edges
 * (from, to). A flow of 0 bytes is a join point: it completes as soon as it is launched. The
 * runner launches every flow whose dependencies are done and calls back when all are.
 *
 * How a collective becomes flows (orr_sched_coll; docs/models.md "Flow-level collectives"):
 *   the algorithm and protocol are those NCCL's tuner picks (orr_comm_plan), and the latency the
 *   analytic model charges is spread evenly over the algorithm's steps, so that with nothing else
 *   on the network the DAG's critical path is coll_base + that latency + the transfer time, which
 *   is the analytic time when the bottleneck is the same. Protocol overhead is on the bytes (wire
 *   bytes = payload / bw_frac); link efficiency (nvlink_eff, net_eff) is the transport's (the flow
 *   backend scales its links' capacities).
 *   ring  one ring per channel: inside one node one channel; across nodes one channel per GPU of
 *         a node (NCCL's one ring per NIC), each leaving a node on the rail where it enters the
 *         next, so inter-node hops stay rail-local. All-reduce 2(n-1) steps, all-gather and
 *         reduce-scatter n-1; step s of a rank waits for its own step s-1 and its predecessor's.
 *         Steps are grouped into rounds when n x channels x steps exceeds max_flows (a round of j
 *         steps is one flow per edge with j steps' bytes and latency).
 *   tree  (all-reduce) the analytic model's loads: a chain through each node's GPUs carrying 2S
 *         and, between nodes, one ring per rail carrying 2(N-1)/N x S / k, streamed concurrently.
 *   hier  ring phases one after the other (intra-node reduce-scatter, per-rail all-reduce of S/k,
 *         intra-node all-gather).
 *   nvls  (all-reduce) inside each node every GPU sends S/(k-1) to each other GPU, its NVLink
 *         carrying S each way as the in-switch reduction does; across nodes (NVLS-tree) also the
 *         tree's per-rail rings; streamed concurrently after the whole latency.
 *   broadcast, reduce: a pipelined chain per channel, streamed. all-to-all: pairwise, posted
 *         together; a GPU's slices for another node go to that node's GPU on its rail (PXN-style
 *         aggregation).
 */
#ifndef ORRERY_COLLSCHED_H
#define ORRERY_COLLSCHED_H

#include <stdint.h>
#include "orrery/comm.h"
#include "orrery/transport.h"

typedef struct orr_sched_flow {
    uint32_t src, dst;  /* global ranks (topology hosts) */
    uint64_t bytes;     /* wire bytes; 0: a join point */
    int64_t delay_ps;   /* latency before it starts, once its dependencies are done */
    uint32_t stands_for; /* other flows it stands for (their images under a rotation of a server,
                          * src/net/images.c): the runner numbers them as if they started with it */
} orr_sched_flow;

typedef struct orr_sched {
    orr_sched_flow *flows;
    size_t nflows, cap_flows;
    uint32_t (*edges)[2]; /* (from, to): `to` waits for `from` */
    size_t nedges, cap_edges;
    uint32_t *tmp;        /* builder scratch (ring orders) */
    size_t cap_tmp;
    /* orr_sched_coll: the schedule maps onto itself when each member is replaced by the next one
     * in order (the last by the first): flows, bytes, delays and edges. Set for the rings of an
     * all-reduce, all-gather or reduce-scatter, NVLS and all-to-all, all inside one node. */
    int rotation_invariant;
} orr_sched;

typedef struct orr_sched_opts {
    uint32_t gpus_per_node; /* node of a rank = rank / gpus_per_node */
    uint32_t max_flows;     /* bound on the flows of one collective (0: 65536); steps are
                             * grouped into rounds above it */
} orr_sched_opts;

void orr_sched_clear(orr_sched *s);
void orr_sched_free(orr_sched *s);
uint32_t orr_sched_add(orr_sched *s, uint32_t src, uint32_t dst, uint64_t bytes, int64_t delay_ps);
void orr_sched_dep(orr_sched *s, uint32_t from, uint32_t to);
/* Appends the flows and edges of src to s (src's flow i becomes s's flow s->nflows + i): the two
 * DAGs run side by side, and a runner finishes s when both are done. */
void orr_sched_append(orr_sched *s, const orr_sched *src);

/* Builds the schedule of collective d among members (ascending global ranks, d->size of them) on
 * hardware g, c; the tuner's plan goes to *plan if not NULL. The schedule is cleared first; an
 * empty schedule means the collective costs nothing. */
void orr_sched_coll(orr_sched *s, const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d,
                    const uint32_t *members, const orr_sched_opts *o, orr_coll_plan *plan);
/* A point-to-point transfer: one flow after p2p_base (+ net_lat across nodes). */
void orr_sched_p2p(orr_sched *s, const orr_gpu *g, const orr_cluster *c, uint32_t src, uint32_t dst,
                   uint64_t bytes);

/* The runner: executes schedules on transport t (which it does not own). */
typedef struct orr_runner orr_runner;
orr_runner *orr_runner_create(orr_transport *t);
void orr_runner_free(orr_runner *r);
/* Starts schedule s now (it is copied; s may be reused at once); done(ctx, arg) runs when its
 * last flow has finished (at once, through the engine, for an empty schedule). */
void orr_runner_run(orr_runner *r, const orr_sched *s, orr_event_fn done, void *ctx, uint64_t arg);
/* Flows started so far (for reports and benchmarks). */
uint64_t orr_runner_flows(const orr_runner *r);

#endif
