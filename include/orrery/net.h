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
#include "orrery/linkbins.h"
#include "orrery/packet.h"
#include "orrery/topo_build.h"
#include "orrery/transport.h"
#include "orrery/workload.h"

typedef enum orr_net_kind { ORR_NET_ANALYTIC, ORR_NET_FLOW, ORR_NET_PACKET, ORR_NET_KIND_COUNT } orr_net_kind;

typedef struct orr_net orr_net;

/* Link statistics of a topology backend (flow or packet) over [0, now], for reports. */
typedef struct orr_net_link_use {
    double bytes;          /* bytes carried (packet engine: wire bytes, headers and ACKs included) */
    int64_t bottleneck_ps; /* flow model: time the link set some flow's max-min rate; packet
                            * engine: time it sent back to back (it had a backlog) */
} orr_net_link_use;

/* What a backend can do (orr_net.caps), so that callers ask instead of branching on its kind. */
enum {
    ORR_NET_CAP_LINKS = 1u << 0,     /* has a topology and per-link statistics (flow, packet) */
    ORR_NET_CAP_SYMMETRY = 1u << 1,  /* replays a collapsed rank's traffic on the GPUs it stands for,
                                      * given orr_net_config.sym (flow, packet) */
    ORR_NET_CAP_PACKETS = 1u << 2,   /* runs flows on the packet engine (packet) */
};

/* What a backend did, for the executor's summary (orr_net_summarise): counts of flows and, on the
 * packet engine, its settings and counters. All 0 where they do not apply. */
typedef struct orr_net_counters {
    uint64_t flows;            /* flows of the job (with symmetry: of every GPU) */
    uint64_t mirrored_flows;   /* with symmetry: inside mirrored servers, not simulated */
    uint64_t unmatched_flows;  /* inside mirrored servers but simulated, for want of a preimage */
    uint64_t rotated_flows;    /* with symmetry: inside simulated servers, images of a simulated
                                * flow under a rotation of the server, not simulated */
    uint64_t rotation_overlaps;/* rotated flows in flight beside other flows inside a server: the
                                * run is not exact, and orr_execute runs it again without rotation */
    uint32_t mirrored_servers;
    /* packet backend (caps & ORR_NET_CAP_PACKETS) */
    orr_cc cc;
    uint32_t payload_bytes;    /* payload per data packet */
    orr_packet_stats packet;   /* the packet engine's counters */
    uint64_t retransmits;      /* go-back-N events over its flows */
    orr_packet_accel_stats accel; /* the Wormhole layer's counters (packet.h) */
} orr_net_counters;

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
    /* The rest of the table: NULL where the backend has nothing (the analytic one). Callers use
     * the orr_net_* functions below, which dispatch here. */
    const orr_topo *(*topo)(const orr_net *n);
    void (*sync)(orr_net *n);
    void (*link_use)(const orr_net *n, uint32_t link, orr_net_link_use *out);
    void (*track_links)(orr_net *n);
    uint32_t (*link_rep)(const orr_net *n, uint32_t link); /* link whose windows stand for link */
    void (*summarise)(const orr_net *n, orr_net_counters *out);
    unsigned caps;           /* ORR_NET_CAP_* */
    void *impl;
    orr_link_bins *link_bins; /* per-link bytes by time window (orr_net_track_links), or NULL */
};

/* What a topology-based backend (flow, packet) needs beyond the hardware. */
typedef struct orr_net_config {
    uint32_t gpus;          /* GPUs of the job: hosts 0..gpus-1 of the topology are global ranks */
    orr_topo_spec topo;     /* the fabric (orr_topo_spec_default for the cluster's own) */
    int pxn;                /* rail-local routing of cross-rail inter-node flows (topo_build.h);
                             * flow backend only (the packet engine routes by shortest path) */
    uint32_t max_flows;     /* flows per collective before steps are grouped (0: 65536) */
    /* packet backend */
    orr_cc cc;              /* congestion control (0: DCQCN) */
    uint32_t packet_payload_bytes; /* payload per data packet (0: ORR_NET_PACKET_PAYLOAD_DEFAULT) */
    int no_accel;           /* no Wormhole acceleration (packet.h orr_packet_config.accel) */
    int no_memo;            /* no memoization (orr_packet_config.memo) */
    const char *memo_path;  /* --memo FILE or NULL */
    double ss_theta;        /* steady-state threshold (0: ORR_SS_THETA_DEFAULT) */
    uint32_t ss_window;     /* steady-state window, rate samples (0: ORR_SS_WINDOW_DEFAULT) */
    uint64_t seed;          /* RANDOM_SEED of the RED and loss draws (0: the config's, 1) */
    /* the workload's symmetry (workload.h), or NULL: with one, a collective or send among
     * simulated ranks also runs on each of its distinct images (flows of all of them share the
     * fabric), and it completes when every image has; see src/net/images.c. */
    const orr_sym *sym;
    const orr_group *groups; /* with sym: the job's communicators (mirroring needs them all to
                              * pass a check; src/net/images.c) */
    size_t ngroups;
    int no_mirror;          /* with sym: simulate the flows inside every server, even where
                             * mirroring servers is exact (for tests; see src/net/images.c);
                             * rotating them too */
    int no_rotate;          /* with sym: simulate every flow inside a simulated server, even
                             * where rotating it is exact (for tests; see src/net/images.c) */
    const orr_workload *workload; /* with sym: the job's ops (rotating servers needs them to pass
                                   * a check; set by orr_net_create_for) */
} orr_net_config;

/* Payload bytes per packet of `--net packet` unless told otherwise: a simulated packet stands for
 * 64 KiB of a flow (16 RoCE MTUs), so that the gigabytes of a training iteration's collectives
 * are a few tens of millions of events, not billions (docs/netsim.md "--net packet"). */
#define ORR_NET_PACKET_PAYLOAD_DEFAULT 65536u
/* The range --packet-payload accepts. */
#define ORR_PACKET_PAYLOAD_MIN 256u
#define ORR_PACKET_PAYLOAD_MAX 16777216u

/* What a NULL config stands for: everything 0 but the cluster c's own fabric. */
void orr_net_config_default(orr_net_config *cfg, const orr_cluster *c);
/* The backend for running workload w with the executor on engine e (what the API layer hands
 * to orr_execute_on): cfg (NULL: the cluster's topology for w's world size) completed with w's
 * world size, symmetry and communicators, after checking that the backend can see all of w's
 * traffic (a rank standing for several GPUs needs ORR_NET_CAP_SYMMETRY and w's orr_sym). */
orr_net *orr_net_create_for(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                            const orr_net_config *cfg, const orr_workload *w, orr_err *err);
/* Creates a backend of the given kind on engine e. Returns NULL with a message if unsupported.
 * The flow and packet backends need cfg (the analytic one ignores it); orr_net_create passes none. */
orr_net *orr_net_create_cfg(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                            const orr_net_config *cfg, orr_err *err);
orr_net *orr_net_create(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                        orr_err *err);
/* The flow backend's transport and topology (statistics, reports); NULL for other kinds. */
orr_transport *orr_net_transport(const orr_net *n);

/* The topology of a flow or packet backend (link rates are the raw hardware rates); NULL for the
 * analytic one. */
const orr_topo *orr_net_topo(const orr_net *n);
/* Brings the link statistics up to the engine's time (call before reading them). */
void orr_net_sync(orr_net *n);
/* The statistics of directed link `link` as of the last orr_net_sync, as the whole job loads it:
 * where a backend mirrors servers (src/net/images.c), a mirrored server's NVLink link
 * reports its representative's. */
void orr_net_link_use_get(const orr_net *n, uint32_t link, orr_net_link_use *out);
/* From now on, also accounts every link's bytes by time window (linkbins.h), for the trace's link
 * counter tracks. Flow and packet backends (nothing for the analytic one); changes no simulated
 * time or statistic. */
void orr_net_track_links(orr_net *n);
/* The windows of directed link `link` as the whole job loads it (as orr_net_link_use_get: a
 * mirrored server's NVLink link gives its representative's): ORR_LINK_BINS byte counts, window w
 * covering [w, w + 1) x *width_ps. NULL if links are not tracked or this one carried nothing. */
const double *orr_net_link_windows(const orr_net *n, uint32_t link, int64_t *width_ps);
/* Flows of the job (collectives and sends as flows): with symmetry, every GPU's, those inside
 * mirrored servers included; 0 for the analytic backend. */
uint64_t orr_net_flows(const orr_net *n);
/* The backend's counters (orr_net_counters); all 0 for the analytic one. */
void orr_net_summarise(const orr_net *n, orr_net_counters *out);
/* The packet backend's engine and its settings (statistics, reports); NULL for other kinds. */
orr_packet_sim *orr_net_packet_sim(const orr_net *n);
const orr_packet_config *orr_net_packet_config(const orr_net *n);

/* What a backend of kind can do (ORR_NET_CAP_*). */
unsigned orr_net_kind_caps(orr_net_kind kind);
/* Parses "analytic" / "flow" / "packet"; -1 if unknown. */
int orr_net_kind_parse(const char *name, orr_net_kind *out);
void orr_net_destroy(orr_net *n);
const char *orr_net_kind_name(orr_net_kind k);

#endif
