/*
 * packet.h - the packet-level RDMA network engine (src/net/packet): hosts with RDMA NICs (queue
 * pairs with a rate limiter and a window, go-back-N, ACKs every L2_ACK_INTERVAL bytes, CNPs
 * piggybacked on ACKs), links (rate, propagation delay, serialisation), switches with a shared
 * buffer MMU (per-port/per-priority ingress and egress accounting, dynamic PFC thresholds,
 * headroom), RED/ECN marking, PFC pause/resume, INT stamping, ECMP, and the congestion control
 * algorithms DCQCN, HPCC, TIMELY and DCTCP. The reference behaviour is the HPCC ns-3 code lineage
 * (data/validation/ns3/README.md); docs/netsim.md lists what is modelled and how.
 *
 * The engine schedules its events on an orr_engine it is given (the shared one in `orrery
 * predict`, a private one in `orrery netsim`). Every event is attributable: it names a port
 * (directed link id of the orr_topo), a flow or a packet. A flow's progress (bytes sent, acked,
 * received) lives in one record and can be advanced in one step, so a later acceleration layer
 * (Wormhole) can freeze and fast-forward it.
 *
 * Units: time int64_t picoseconds (_ps), sizes uint64_t bytes, rates double bytes/s (_Bps).
 */
#ifndef ORRERY_PACKET_H
#define ORRERY_PACKET_H

#include <stdint.h>
#include "orrery/core.h"
#include "orrery/engine.h"
#include "orrery/linkbins.h"
#include "orrery/topo.h"
#include "orrery/transport.h"

/* Congestion control, numbered as the HPCC config's CC_MODE. */
typedef enum orr_cc {
    ORR_CC_DCQCN = 1,
    ORR_CC_HPCC = 3,
    ORR_CC_TIMELY = 7,
    ORR_CC_DCTCP = 8,
} orr_cc;
const char *orr_cc_name(orr_cc cc);
/* The lower-case name used by the spec, the flags and the JSON report: "dcqcn", "hpcc", ... */
const char *orr_cc_key(orr_cc cc);
/* Parses "dcqcn", "hpcc", "timely", "dctcp" (any case); -1 if unknown. */
int orr_cc_parse(const char *name, orr_cc *out);

#define ORR_PKT_RED_MAX 16 /* rate classes in KMIN_MAP/KMAX_MAP/PMAX_MAP */
#define ORR_PKT_PATH_MAX 256

/* The most data packets `orrery netsim` simulates without SIMULATOR_STOP_TIME (~4 events each). */
#define ORR_NETSIM_MAX_PACKETS 2e9
#define ORR_NETSIM_MAX_FLOWS 2500000ull /* flows of a flow file: the 2 GB budget (ORRERY_MAX_FLOWS) */

/* The smallest PACKET_PAYLOAD_SIZE `orrery netsim` accepts (an Ethernet frame's payload floor). */
#define ORR_NETSIM_PAYLOAD_MIN 64u

/* The paper's steady-state parameters (000 §7: theta = 5%, l = 2000) and the ranges the flags accept. */
#define ORR_SS_THETA_DEFAULT 0.05
#define ORR_SS_WINDOW_DEFAULT 2000u
#define ORR_SS_WINDOW_MIN 4u /* two halves of two samples */
/* The window counts samples of packets of this payload (the paper's ns-3 runs: 1000 bytes); a flow
 * of larger packets, whose ACKs are further apart, uses proportionally fewer (`--net packet`'s
 * 64 KiB packets: 2000 -> 31), so that a window spans the same time. */
#define ORR_SS_SAMPLE_BYTES 1000u
#define ORR_SS_WINDOW_MAX 100000000u

typedef struct orr_packet_config {
    orr_cc cc;                        /* CC_MODE */
    uint32_t mtu_bytes;               /* PACKET_PAYLOAD_SIZE: payload bytes per packet */
    /* Orrery extension, not a config.txt key (0: off, as in the reference): a flow of fewer than
     * min_packets_per_flow x mtu_bytes bytes is cut into min_packets_per_flow packets of equal
     * payload, but of no less than min_payload_bytes (and no more than mtu_bytes). `--net packet`
     * uses it so that a simulated packet can stand for many wire packets of a large flow without
     * a small flow paying one huge packet's store-and-forward per hop. */
    uint32_t min_packets_per_flow, min_payload_bytes;
    uint64_t ack_interval_bytes;      /* L2_ACK_INTERVAL: ACK when this many new bytes are in order */
    uint64_t chunk_bytes;             /* L2_CHUNK_SIZE: ACK also at every chunk boundary */
    int back_to_zero;                 /* L2_BACK_TO_ZERO: go back to the chunk start on loss */
    int ecn_enabled;                  /* ENABLE_QCN */
    int pfc_enabled;                  /* ENABLE_PFC (Orrery extension, default 1) */
    uint64_t buffer_bytes;            /* BUFFER_SIZE (MB in the file): shared buffer per switch */
    uint32_t n_red;                   /* RED thresholds by link rate (KMIN_MAP, KMAX_MAP, PMAX_MAP) */
    double red_rate_Bps[ORR_PKT_RED_MAX];
    uint64_t kmin_bytes[ORR_PKT_RED_MAX], kmax_bytes[ORR_PKT_RED_MAX];
    double pmax[ORR_PKT_RED_MAX];
    double error_rate;                /* ERROR_RATE_PER_LINK: data-packet loss probability per link */
    int has_win, global_t, var_win;   /* HAS_WIN, GLOBAL_T, VAR_WIN */
    int rate_bound;                   /* RATE_BOUND: pace each QP at its rate */
    int ack_high_prio;                /* ACK_HIGH_PRIO: ACKs in the switches' priority 0 */
    int clamp_target_rate;            /* CLAMP_TARGET_RATE (DCQCN) */
    int fast_react;                   /* FAST_REACT (HPCC) */
    double u_target;                  /* U_TARGET (HPCC) */
    uint32_t mi_thresh;               /* MI_THRESH (HPCC) */
    int64_t alpha_resume_interval_ps; /* ALPHA_RESUME_INTERVAL (us in the file) */
    int64_t rate_decrease_interval_ps;/* RATE_DECREASE_INTERVAL (us) */
    int64_t rp_timer_ps;              /* RP_TIMER (us) */
    double ewma_gain;                 /* EWMA_GAIN: DCQCN and DCTCP alpha gain */
    uint32_t fast_recovery_times;     /* FAST_RECOVERY_TIMES */
    double rate_ai_Bps, rate_hai_Bps; /* RATE_AI, RATE_HAI */
    double min_rate_Bps;              /* MIN_RATE */
    double dctcp_rate_ai_Bps;         /* DCTCP_RATE_AI */
    double rate_on_first_cnp;         /* fraction of the rate kept on the first CNP (1.0) */
    int64_t nack_interval_ps;         /* NACK_INTERVAL (us): minimum gap between NACKs of a flow */
    int64_t rto_ps;                   /* RTO (us): go back to the last ACK if none came for this long */
    double timely_alpha, timely_beta; /* TIMELY EWMA of the RTT difference, decrease factor */
    int64_t timely_t_low_ps, timely_t_high_ps, timely_min_rtt_ps;
    uint64_t seed;                    /* RANDOM_SEED: RED marking and loss draws */
    /* ECMP_NS3 (Orrery extension, default 1): `orrery netsim` chooses paths as the HPCC / SimAI
     * ns-3 does (its switch hash, seeds and next-hop order: orr_ns3_router); 0: by Orrery's hash
     * of the 5-tuple (orr_topo_ecmp). */
    int ecmp_ns3;
    int64_t stop_ps;                  /* SIMULATOR_STOP_TIME (s); 0 = run until every flow is done */
    /* Wormhole acceleration (not config.txt keys; flags --no-accel, --ss-theta, --ss-window):
     * on by default; a flow is steady when its rate samples (one per ACK) over a window of
     * ss_window samples (of ORR_SS_SAMPLE_BYTES packets) vary by less than ss_theta of their mean
     * (docs/netsim.md). */
    int accel;
    /* memoization of unsteady phases (docs/netsim.md "Memoization"; --no-memo): on with accel */
    int memo;
    double ss_theta;
    uint32_t ss_window;
    /* Link capacity = topology rate x rate_scale[tier] (ORR_TIER_*; 0 means 1): the protocol
     * efficiency `orrery predict` applies, as the flow backend does. Not a config.txt key. */
    double rate_scale[ORR_TIER_COUNT];
    /* Output files named by the config (`orrery netsim`); empty if not given. */
    char fct_output[512], pfc_output[512];
    /* --memo FILE (not a config.txt key): the SQLite file the memo is read from and written to; empty: none */
    char memo_path[512];
    /* Not a config.txt key: the caller's progress line for orr_netsim_run_with (NULL: none). */
    struct orr_progress *progress;
} orr_packet_config;

/* The HPCC ns-3 defaults (config of data/validation/ns3 with CC_MODE 3, HPCC). */
void orr_packet_config_default(orr_packet_config *c);
/* The settings `orrery predict --net packet` uses: the preset for cc of the HPCC repository's
 * run.py (its `dcqcn`, `hp`, `timely` and `dctcp` presets: timers, gains, window, ACK priority,
 * ECN thresholds), with the quantities run.py scales by the NIC bandwidth (RATE_AI, RATE_HAI,
 * KMIN/KMAX, BUFFER_SIZE) scaled to a NIC of nic_Bps, PFC on, payload_bytes per data packet and
 * one ACK per packet. The one RED row is for a link of nic_Bps; orr_packet_config_red_for_topology
 * turns it into one row per link rate of a topology (thresholds proportional to the rate, as
 * run.py's KMIN_MAP/KMAX_MAP are). docs/netsim.md lists the values. */
void orr_packet_config_preset(orr_packet_config *c, orr_cc cc, double nic_Bps, uint32_t payload_bytes);
/* Replaces the RED rows by one per distinct link capacity of t (rate x rate_scale), thresholds
 * scaled from row 0 in proportion to the rate (at most ORR_PKT_RED_MAX rates; links of other rates
 * use the nearest row below, as the engine does). */
void orr_packet_config_red_for_topology(orr_packet_config *c, const orr_topo *t);
/* Wire bytes per payload byte of a full data packet (payload + headers + INT) / payload. */
double orr_packet_wire_per_payload(const orr_packet_config *c);
/* Reads a HPCC `config.txt`. Unknown keys are appended to warnings (one line each, naming file,
 * line and key); keys whose value changes the model in a way not implemented are errors. */
int orr_packet_config_read(orr_packet_config *c, const char *path, orr_buf *warnings, orr_err *err);
int orr_packet_config_parse(orr_packet_config *c, const char *text, const char *path, orr_buf *warnings,
                            orr_err *err);

typedef struct orr_packet_sim orr_packet_sim;

/* One flow (queue pair) and its progress. */
typedef struct orr_packet_flow_info {
    uint32_t src_host, dst_host;
    uint16_t sport, dport;
    uint8_t pg;                 /* priority group */
    uint64_t bytes;
    uint64_t snd_nxt, snd_una;  /* bytes sent (next sequence), bytes acknowledged */
    uint64_t rcv_nxt;           /* bytes received in order at the destination */
    int64_t start_ps;
    int64_t recv_done_ps;       /* last byte received in order, -1 before */
    int64_t finish_ps;          /* last byte acknowledged at the sender, -1 before */
    int64_t standalone_ps;      /* FCT alone on an idle path (HPCC formula: base RTT + bytes/bw) */
    double rate_Bps;            /* current sending rate */
    uint64_t retransmits;       /* go-back-N events */
} orr_packet_flow_info;

typedef struct orr_packet_stats {
    uint64_t events;            /* engine events run for this simulator */
    uint64_t data_packets, ack_packets, pfc_frames;
    uint64_t drops, loss_drops; /* buffer-overflow drops, injected (error-rate) losses */
    uint64_t ecn_marks, cnps;
    uint64_t pfc_pauses, pfc_resumes;
    uint64_t flows_started, flows_finished;
    int64_t last_finish_ps;
} orr_packet_stats;

/* What the Wormhole layer did (paper 000; docs/netsim.md "Wormhole acceleration"). A partition is
 * a set of ports and the flows on them such that no flow outside it uses any of its ports. */
typedef struct orr_packet_accel_stats {
    int enabled;                /* acceleration on (orr_packet_config.accel) */
    uint64_t partitions;        /* partitions formed: a flow started on ports no running flow used */
    uint64_t merges;            /* partitions joined by a flow that crossed both */
    uint64_t splits;            /* partitions that fell apart when a flow left */
    uint64_t fast_forwards;     /* steady partitions frozen and advanced at their steady rates */
    uint64_t skip_backs;        /* of which cut short by a flow entering the partition (§5.3) */
    int64_t skipped_ps;         /* simulated time fast-forwarded, summed over fast-forwards */
    uint64_t skipped_bytes;     /* payload bytes delivered by fast-forwarding instead of packets */
    double steady_flow_ps;      /* sum over flows of the time they were fast-forwarded */
    double flow_ps;             /* sum over finished flows of their completion times */
    /* Memoization of unsteady phases (§4.2-4.4, memo.c): a flow alone on its data path */
    int memo_enabled;
    uint64_t memo_hits;         /* flows replayed from the memo instead of simulated */
    uint64_t memo_misses;       /* flows that could be replayed, not in the memo: simulated */
    uint64_t memo_ineligible;   /* flows that shared a data port or had another CC: simulated */
    uint64_t memo_recorded;     /* outcomes stored (missed flows that stayed alone to their end) */
    uint64_t memo_disturbed;    /* recordings given up: a flow started on their data path */
    uint64_t memo_aborts;       /* replays turned back into simulated flows by a flow entering */
    uint64_t memo_followers;    /* of the hits, replays of an outcome still being recorded */
    uint64_t memo_noisy;        /* recordings given up: RED marked a packet (a random draw, not the unit's outcome) */
    uint64_t memo_loaded, memo_saved; /* entries read from / written to --memo FILE */
} orr_packet_accel_stats;

/* Creates the engine on e and topology t (finished, must outlive the simulator). */
orr_packet_sim *orr_packet_sim_create(orr_engine *e, const orr_topo *t, const orr_packet_config *cfg,
                                      orr_err *err);
void orr_packet_sim_free(orr_packet_sim *s);

/* Adds a flow of bytes (> 0) from host src to host dst (topology host indices, src != dst) starting
 * at start_ps (clamped to now). hash seeds the ECMP choice of its path (and its ACKs' path).
 * done(ctx, arg), if not NULL, runs when the last byte has been received in order at dst. Returns
 * the flow id (0, 1, ... in order of addition). */
uint32_t orr_packet_add_flow(orr_packet_sim *s, uint32_t src_host, uint32_t dst_host, uint64_t bytes,
                             int64_t start_ps, uint8_t pg, uint16_t sport, uint16_t dport, uint64_t hash,
                             orr_event_fn done, void *ctx, uint64_t arg);
/* The same on given paths: path (n links from src's NIC to dst) for the data, back (nb links from
 * dst to src) for its ACKs, as orr_topo_path or orr_ns3_router_path write them. */
uint32_t orr_packet_add_flow_on(orr_packet_sim *s, uint32_t src_host, uint32_t dst_host, uint64_t bytes,
                                int64_t start_ps, uint8_t pg, uint16_t sport, uint16_t dport, const uint32_t *path,
                                int n, const uint32_t *back, int nb, orr_event_fn done, void *ctx, uint64_t arg);
uint32_t orr_packet_flow_count(const orr_packet_sim *s);
/* Flow id (added, not started yet) continues the queue pair of flow prev (< id): if prev has sent
 * all its data when id starts, id starts at prev's rate with prev's congestion-control state and
 * timers, as consecutive messages on one RDMA connection do (CNPs that reach prev afterwards stay
 * with prev); otherwise it starts afresh at line rate. */
void orr_packet_flow_continue(orr_packet_sim *s, uint32_t id, uint32_t prev);
void orr_packet_flow_get(const orr_packet_sim *s, uint32_t id, orr_packet_flow_info *out);
/* Flow ids in the order they finished (last byte acknowledged), as ns-3 writes its FCT file. */
const uint32_t *orr_packet_finished(const orr_packet_sim *s, uint32_t *n);
/* Advances a flow that has nothing in flight (snd_nxt == snd_una == rcv_nxt; also before it has
 * started) by bytes in one step: sent, received and acknowledged together (the hook for
 * fast-forwarding a steady state). A flow advanced to its end completes now (done runs). Returns
 * the bytes advanced (less if the flow ends first, 0 if packets are in flight or it is finished). */
uint64_t orr_packet_flow_advance(orr_packet_sim *s, uint32_t id, uint64_t bytes);
/* What one port (directed link) did: for reports. */
typedef struct orr_packet_port_stats {
    uint64_t tx_bytes;    /* wire bytes sent (data with headers, ACKs, PFC frames) */
    int64_t saturated_ps; /* time spent sending packets that started the instant the previous one
                           * ended: the port had a backlog, i.e. it was the bottleneck */
    uint64_t events;      /* events attributed to it */
} orr_packet_port_stats;
void orr_packet_port_stats_get(const orr_packet_sim *s, uint32_t link, orr_packet_port_stats *out);
/* Stops the simulation at stop_ps: later events do nothing, so the engine queue drains. */
void orr_packet_set_stop(orr_packet_sim *s, int64_t stop_ps);
void orr_packet_stats_get(const orr_packet_sim *s, orr_packet_stats *out);
void orr_packet_accel_stats_get(const orr_packet_sim *s, orr_packet_accel_stats *out);
/* Of the finished flows' completion times, the fraction they spent fast-forwarded. */
double orr_packet_steady_fraction(const orr_packet_accel_stats *a);
/* The line `orrery netsim` and the text report print about the Wormhole layer. */
void orr_packet_accel_summary(const orr_packet_accel_stats *a, const orr_packet_config *cfg, orr_buf *out);
/* PFC events as lines "time_ns node node_type port type" (type 1 = pause, 0 = resume; node_type
 * 0 host, 1 switch), in the order they happened; NULL to not record. */
void orr_packet_record_pfc(orr_packet_sim *s, orr_buf *out);
/* Also accounts every port's wire bytes by time window into bins (not owned; NULL: stop), each
 * packet spread over its serialisation, for link counter tracks. Changes nothing simulated. */
void orr_packet_set_link_bins(orr_packet_sim *s, orr_link_bins *bins);
/* --memo FILE (memo.c): reads the memo entries stored in the SQLite file for this topology and
 * configuration (creating the file if absent), before the run; writes the new ones after it.
 * No-ops when memoization is off. Errors name the flag and the file. */
int orr_packet_memo_load(orr_packet_sim *s, const char *path, orr_err *err);
int orr_packet_memo_save(orr_packet_sim *s, const char *path, orr_err *err);

/* A transport (transport.h) over the packet engine on the shared engine e: start_flow starts a
 * flow at e's current time on the queue pair of its (src, dst) connection (the previous flow
 * between them, continued as orr_packet_flow_continue says); done runs when the last byte has
 * been received at dst. */
orr_transport *orr_packet_transport_create(orr_engine *e, const orr_topo *t, const orr_packet_config *cfg,
                                           orr_err *err);
/* The packet simulator behind a transport made by orr_packet_transport_create (for statistics). */
orr_packet_sim *orr_packet_transport_sim(orr_transport *t);

/* ---- orrery netsim ---- */

/* ECMP as the HPCC / SimAI ns-3 chooses (src/net/packet/ns3route.c explains it): the path of a
 * packet with (sip, dip, sport, dport) from host src to host dst, sip and dip being the hosts'
 * ns-3 addresses (orr_ns3_ip of their node ids). A flow's ACKs take
 * orr_ns3_router_path(r, dst, src, dport, sport, ...). Writes up to max link ids and returns the
 * hop count, -1 if dst is unreachable or max too small. The topology must outlive the router. */
typedef struct orr_ns3_router orr_ns3_router;
orr_ns3_router *orr_ns3_router_create(const orr_topo *t);
void orr_ns3_router_free(orr_ns3_router *r);
int orr_ns3_router_path(orr_ns3_router *r, uint32_t src_host, uint32_t dst_host, uint16_t sport, uint16_t dport,
                        uint32_t *links, uint32_t max);
/* ns-3's switch ECMP hash (MurmurHash3 x86 32-bit of {sip, dip, sport | dport << 16}, seeded by
 * the switch's node id) and its address of node id (0x0b000001 + (id / 256) << 16 + (id % 256) << 8). */
uint32_t orr_ns3_ecmp_hash(uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport, uint32_t seed);
uint32_t orr_ns3_ip(uint32_t node);

typedef struct orr_fct_summary {
    uint32_t flows;
    double mean_fct_ns, median_fct_ns, p99_fct_ns;
    double mean_slowdown, median_slowdown, p99_slowdown;
} orr_fct_summary;

/* Mean, median and p99 (nearest rank) of FCT and slowdown (fct / standalone_fct) of n flows. */
void orr_fct_summarize(const double *fct_ns, const double *standalone_ns, uint32_t n, orr_fct_summary *out);
/* Reads an FCT file in the HPCC format (`sip dip sport dport size start_ns fct_ns standalone_ns`)
 * and summarises it. */
int orr_fct_read_summary(const char *path, orr_fct_summary *out, orr_err *err);

typedef struct orr_netsim_result {
    orr_packet_stats stats;
    orr_packet_accel_stats accel;
    orr_fct_summary fct;
    int64_t sim_end_ps;
    double wall_s, setup_wall_s;
    uint32_t flows_total;
    orr_buf fct_text;   /* the FCT file's contents */
    orr_buf pfc_text;   /* the PFC file's contents */
} orr_netsim_result;

/* Runs `orrery netsim`: reads the topology, flow list and config (warnings appended to warnings),
 * simulates, and fills r. Writes nothing. */
int orr_netsim_run(const char *topo_path, const char *flows_path, const char *config_path,
                   orr_netsim_result *r, orr_buf *warnings, orr_err *err);
/* Same on an already-read topology and config. */
int orr_netsim_run_with(const orr_topo *t, const orr_packet_config *cfg, const char *flows_path,
                        orr_netsim_result *r, orr_err *err);
void orr_netsim_result_free(orr_netsim_result *r);
/* The summary lines printed by `orrery netsim`. */
void orr_netsim_summary(const orr_netsim_result *r, const orr_packet_config *cfg, orr_buf *out);


#endif
