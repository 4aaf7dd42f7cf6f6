/*
 * exec.h - the cluster executor: runs a workload on the discrete-event engine.
 *
 * Per rank: a host thread walks the ops in program order (launches cost launch_ps of host time;
 * HOST ops cost their duration; EVENT_SYNC/STREAM_SYNC/DEVICE_SYNC block it, and so does a launch
 * into a stream that already holds launch_queue_depth unfinished ops), device streams run
 * their ops in issue order, compute kernels of one GPU share its compute engine (one at a time),
 * STREAM_WAIT waits for the latest record of an event at issue time (CUDA semantics), collectives
 * start when every simulated member has reached them (so stragglers and bubbles emerge) and p2p
 * sends and recvs match in order per (src, dst, tag). Ops flagged ORR_OPF_BATCH_NEXT are posted
 * together with the next op (an NCCL group) and the stream moves on when all of them are done.
 * Nothing that a workload can contain makes it crash or hang: a run that cannot finish is reported
 * as a deadlock naming the blocked ranks and ops.
 */
#ifndef ORRERY_EXEC_H
#define ORRERY_EXEC_H

#include <stdint.h>
#include "orrery/hw.h"
#include "orrery/memory.h"
#include "orrery/net.h"
#include "orrery/workload.h"

/* What determined when an op started (for the critical path). */
typedef enum orr_dep_kind {
    ORR_DEP_NONE,    /* started at time 0 */
    ORR_DEP_ISSUE,   /* the host launched it late: dep is the op itself (a device op) or the
                      * previous op in host order (a host op); the path goes on along the host */
    ORR_DEP_STREAM,  /* the previous op on its stream: dep */
    ORR_DEP_ENGINE,  /* the compute engine was busy with dep (another stream's kernel) */
    ORR_DEP_EVENT,   /* a stream wait on an event recorded by dep */
    ORR_DEP_PEER,    /* a collective or p2p partner that arrived last: dep (on dep_rank) */
    ORR_DEP_KIND_COUNT
} orr_dep_kind;

typedef struct orr_op_time {
    int64_t issue_ps;  /* host issued the op */
    int64_t ready_ps;  /* its stream reached it (for comm: joined the rendezvous) */
    int64_t start_ps;  /* it began running (for comm: every member had joined) */
    int64_t end_ps;    /* it finished */
    uint32_t dep_rank; /* index into workload ranks of the op that determined start_ps */
    uint32_t dep_op;
    uint8_t dep_kind;  /* orr_dep_kind */
    uint32_t queue_op; /* a device op whose launch waited for room in its stream's queue: 1 + the
                        * index of the op of that stream whose completion made the room (which
                        * released the host); 0 when the launch did not wait */
} orr_op_time;

/* CUDA blocks a host thread that launches into a stream holding about a thousand unfinished
 * launches (1,000-1,024 per stream, measured; streams have separate queues), so the host runs
 * ahead of its GPU by at most that many ops per stream. */
#define ORR_LAUNCH_QUEUE_DEPTH 1024

typedef struct orr_exec_opts {
    orr_net_kind net;
    int64_t launch_ps; /* host cost of launching one device op */
    uint32_t launch_queue_depth; /* per stream: unfinished device ops at which a launch blocks the
                                  * host (ORR_LAUNCH_QUEUE_DEPTH); 0: unbounded */
    /* Memory tracker (memory.h): capacity for the OOM verdict (0: unlimited) and whether to model
     * PyTorch's caching allocator (else raw live bytes). */
    uint64_t mem_capacity_bytes;
    int mem_caching;
    const orr_net_config *net_cfg; /* flow backend: topology (NULL: the cluster's, for the
                                    * workload's world size) */
    uint32_t link_tracks;          /* flow and packet backends: keep the utilisation over time of
                                    * this many busiest links per tier (orr_link_tracks; 0: none).
                                    * Changes no simulated time or statistic. */
    struct orr_progress *progress; /* a progress line while running (progress.h); NULL: none */
    /* Per-GPU compute speeds (orr_exec_gpu_slowdown): sigma (0: identical GPUs) and the draw. */
    double variability;
    uint64_t variability_seed;
} orr_exec_opts;

typedef struct orr_exec_rank {
    orr_op_time *t;    /* one per op */
    int64_t end_ps;    /* when the rank's host and all its streams were done */
    orr_mem_rank mem;  /* what its ALLOC/FREE ops did to memory */
    double slowdown;   /* its kernels took this times their estimate: the slowest GPU it stands for
                        * (>= 1; 1 without variability). The breakdown counts the excess as waiting
                        * for stragglers. */
} orr_exec_rank;

/* Link use under a topology backend (--net flow, --net packet): per tier and the most congested
 * links. Link utilisation is bytes carried / (raw link rate x makespan); "bottleneck" time is the
 * time a link set some flow's rate (flow model: it was saturated) or, on the packet engine, sent
 * packets back to back (it had a backlog). */
#define ORR_NET_TOP_LINKS 10
typedef struct orr_link_use {
    uint32_t link, src, dst; /* directed link id and its end nodes (topology node ids) */
    uint8_t tier;            /* ORR_TIER_* */
    double bytes, util, bottleneck_frac;
} orr_link_use;

typedef struct orr_net_summary {
    int present;             /* 0 for the analytic backend */
    orr_net_kind backend;    /* ORR_NET_FLOW or ORR_NET_PACKET */
    uint64_t flows;          /* flows of the job (flow backend with symmetry: of every GPU) */
    /* flow backend with symmetry (0 otherwise) */
    uint64_t mirrored_flows; /* of which inside mirrored servers, not simulated (src/net/images.c) */
    uint64_t unmatched_flows;/* inside mirrored servers but simulated, for want of a preimage */
    uint64_t rotated_flows;  /* inside simulated servers, images of a simulated flow under a
                              * rotation of the server, not simulated (src/net/images.c) */
    uint64_t rotation_overlaps;/* what made orr_execute run again without rotation (0 in its result) */
    uint32_t mirrored_servers;
    /* packet backend: its settings and what the packet engine did (inter-node flows only; the
     * flows inside a node are on the flow model) */
    struct {
        orr_cc cc;
        uint32_t payload_bytes;      /* payload per data packet */
        uint64_t flows;              /* flows on the packet engine */
        uint64_t data_packets, ack_packets, ecn_marks, cnps, pfc_pauses, drops, retransmits;
        uint64_t events;             /* engine events of the packet engine */
        orr_packet_accel_stats accel;/* what the Wormhole layer did (packet.h) */
    } packet;
    struct {
        uint32_t links;
        double bytes;
        double util;             /* mean link utilisation over the tier */
        double bottleneck_frac;  /* mean fraction of the makespan its links were bottlenecks */
    } tier[ORR_TIER_COUNT];
    orr_link_use top[ORR_NET_TOP_LINKS]; /* by bottleneck time, then bytes */
    uint32_t ntop;
} orr_net_summary;

const char *orr_tier_name(int tier);

/* The trace's link counter tracks (docs/json.md "Link counters"): per tier, the links that carried
 * the most bytes (ties: lower link id), each with the bytes it carried in every window of
 * window_ps. Per tier, because NVLink links carry most bytes: the busiest of all would leave out
 * the fabric, where contention is. */
#define ORR_LINK_TRACKS_DEFAULT 32 /* links per tier that `orrery predict --trace` keeps */
typedef struct orr_link_track {
    uint32_t link, src, dst; /* directed link id and its end nodes (topology node ids) */
    uint8_t tier;            /* ORR_TIER_* */
    double rate_Bps;         /* raw link rate (utilisation is relative to it, as in orr_link_use) */
    double bytes;            /* carried over the run (orr_link_use.bytes) */
    double *window_bytes;    /* [nwindows] carried in window w: [w, w + 1) x window_ps */
} orr_link_track;

typedef struct orr_link_tracks {
    int64_t window_ps;       /* window width */
    int64_t end_ps;          /* the windows end here: the makespan, or the network's last activity
                              * if later; the last window is cut short there */
    uint32_t nwindows;       /* ceil(end_ps / window_ps) */
    orr_link_track *links;   /* by tier (ORR_TIER_* order), busiest first within one */
    uint32_t nlinks;
} orr_link_tracks;

typedef struct orr_exec_result {
    int64_t makespan_ps;  /* max over ranks of end_ps */
    uint32_t last_rank;   /* the rank that finished last */
    uint32_t last_op;     /* and its last-finishing op */
    uint64_t events;      /* engine events run */
    orr_exec_rank *ranks;
    size_t nranks;
    orr_net_summary net;
    orr_link_tracks link_tracks; /* with opts.link_tracks (nlinks 0 otherwise) */
} orr_exec_result;

/* The variability model (docs/models.md "Variability"): GPU g of the job computes at speed
 * 1 + sigma z_g, z_g a standard normal drawn from (seed, g) alone (clipped to [-6, 6]), so the same
 * GPU has the same speed whatever the job's layout. Its kernels take 1 / (1 + sigma z_g) of their
 * estimate. A simulated rank that stands for several GPUs (symmetry) runs at its slowest one's
 * pace: TP collectives every layer and the DP gradient reduction every step make the whole group
 * wait for it. Returns that factor for simulated rank r of w. */
double orr_exec_rank_slowdown(const orr_workload *w, size_t r, double sigma, uint64_t seed);

/* Runs workload w on a ready-built backend (orr_net_create_for) and its engine: the API layer
 * builds the backend, the executor only drives it (opts.net and opts.net_cfg are not read). The
 * engine must be idle; the backend is left for the caller to destroy. */
int orr_execute_on(const orr_workload *w, orr_net *net, const orr_exec_opts *opts, orr_exec_result *out,
                   orr_err *err);
/* The same on a backend of kind opts.net built for w (orr_net_create_for with opts.net_cfg) on a
 * private engine. */
int orr_execute(const orr_workload *w, const orr_gpu *g, const orr_cluster *c,
                const orr_exec_opts *opts, orr_exec_result *out, orr_err *err);
void orr_exec_result_free(orr_exec_result *r);
const char *orr_dep_kind_name(orr_dep_kind k);

#endif
