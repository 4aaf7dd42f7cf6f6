/*
 * pkt_internal.h - the data structures of the packet engine, shared by sim.c (hosts, links,
 * switches) and cc.c (congestion control). Not a public header.
 *
 * Everything is indexed by small integers so that a later acceleration layer can attribute events:
 * a port is a directed link id of the orr_topo (its egress side is at links[l].src, packets that
 * arrive over it are accounted at the ingress of links[l].dst); a flow is a queue pair (sender and
 * receiver state in one record); a packet lives in a pool and moves between per-port FIFOs.
 * Packets and flows are stored in fixed-size chunks so that pointers to them stay valid while the
 * pools grow; freed packets go on a free list (no allocation per packet once warm).
 */
#ifndef ORRERY_PKT_INTERNAL_H
#define ORRERY_PKT_INTERNAL_H

#include "orrery/packet.h"

#define PKT_NPRIO 8
/* INT records a data packet carries: the HPCC ns-3's IntHeader::maxHop (its wire format, 42 bytes
 * below, is five records); a switch past the fifth stamps nothing. */
#define PKT_MAX_INT_HOPS 5
#define PKT_NONE UINT32_MAX
#define PKT_CHUNK_SHIFT 13
#define FLOW_CHUNK_SHIFT 10
#define PKT_WIRE_SLOTS 32 /* a port's first wire ring (a power of 2; it doubles when full) */

/* Wire overheads (HPCC ns-3 lineage): data headers besides INT, INT hop record, ACK, PFC frame. */
#define PKT_DATA_HDR_BYTES 52u
#define PKT_INT_HPCC_BYTES 42u  /* 5 hop records of 8 bytes + hop count */
#define PKT_INT_TS_BYTES 8u     /* TIMELY send timestamp */
#define PKT_ACK_BYTES 62u
#define PKT_PFC_BYTES 64u
/* MMU constants of the reference switch. */
#define MMU_RESERVE_BYTES 4096u
#define MMU_RESUME_OFFSET_BYTES 3072u
#define MMU_PFC_ALPHA_SHIFT 3

/* A hint to fetch the cache line at addr (no effect on results); nothing where unsupported. */
#if defined(__GNUC__) || defined(__clang__)
#define PKT_PREFETCH(addr) __builtin_prefetch(addr)
#else
#define PKT_PREFETCH(addr) ((void)(addr))
#endif

enum pkt_kind { PK_DATA, PK_ACK, PK_NACK, PK_PFC };
/* A flow's timers; each kind can be cancelled on its own. */
enum timer_kind { TIMER_RTO, TIMER_DECREASE, TIMER_RP, TIMER_COUNT };

/* One INT record, stamped by a switch egress port when it starts sending a data packet. */
typedef struct int_hop {
    int64_t t_ps;
    uint64_t tx_bytes;   /* bytes the port had sent before this packet */
    uint64_t qlen_bytes; /* bytes queued at the port (all priorities) */
    double rate_Bps;
} int_hop;

/* A packet: what every event reads in its first 32 bytes, then what the congestion control
 * carries (HPCC's INT records, TIMELY's send time). Packets are aligned to a cache line (64
 * bytes), so a packet's header and its first INT record share one line: on a large fabric the
 * packets in flight outgrow the caches, and a packet's first touch at each hop is a miss
 * (docs/netsim.md "Speed"); three lines, not five, since INT keeps ns-3's five records. A data
 * packet's payload is its size less its headers (pkt_payload). */
typedef struct pkt {
    _Alignas(64) uint32_t next; /* FIFO / free-list link */
    uint32_t flow;
    uint64_t seq;        /* DATA: first payload byte; ACK/NACK: next expected byte */
    uint32_t in_link;    /* ingress link at the current switch (MMU accounting) */
    uint32_t size;       /* wire bytes */
    uint8_t kind, pg, prio, ecn, cnp, hop, nhop, pause;
    union {
        int_hop ih[PKT_MAX_INT_HOPS]; /* HPCC: nhop records */
        int64_t ts_ps;   /* TIMELY: when the data packet left the sender (HPCC's packets: unused) */
    };
} pkt;
_Static_assert(sizeof(pkt) == 3 * 64, "a packet is three cache lines, its header and first INT record in the first");

typedef struct port {
    /* egress, at links[l].src */
    uint32_t qhead[PKT_NPRIO], qtail[PKT_NPRIO];
    uint64_t egress_bytes[PKT_NPRIO];
    uint64_t queued_bytes;
    int64_t busy_until_ps;
    uint8_t tx_pending;             /* a tx-done event is scheduled */
    uint8_t rr;                     /* round robin over priorities */
    uint8_t paused[PKT_NPRIO];      /* by a PFC frame from downstream */
    uint8_t is_host_nic;            /* links[l].src is a host */
    /* packets on the wire, in arrival order: a ring of (arrival time, packet); only the head has
     * an engine event, and the next arrival time is read without touching the packet */
    struct wire_slot { int64_t t_ps; uint32_t id; } *wire;
    uint32_t wire_cap, wire_head, wire_n;
    uint8_t wire_own;               /* wire was allocated on its own (else it is in the sim's wire_mem) */
    uint64_t tx_bytes;              /* wire bytes sent (before INT stamping of the packet: INT's txBytes) */
    int64_t saturated_ps;           /* time sending back to back (orr_packet_port_stats) */
    double ps_per_byte;
    int64_t delay_ps;
    double rate_Bps;
    uint64_t kmin, kmax;
    double pmax;
    double error_rate;
    /* ingress, at links[l].dst (a switch) */
    uint64_t ingress_bytes[PKT_NPRIO], hdrm_bytes[PKT_NPRIO];
    uint64_t headroom;
    uint8_t up_paused[PKT_NPRIO];   /* we have paused the upstream port */
    /* host NIC: the queue pairs that send through this port, in round-robin order */
    uint32_t *qps;
    uint32_t nqp, capqp, rr_qp;
    int64_t wake_at_ps;
    uint32_t wake_gen;
    uint64_t events;                /* events attributed to this port */
    double ff_tx_bytes;             /* wire bytes it carried while fast-forwarded (statistics) */
} port;

/* Congestion control state of a queue pair. */
typedef struct cc_state {
    /* DCQCN (Mellanox) */
    double alpha, target_Bps;
    uint32_t rp_stage;
    uint8_t alpha_cnp, decrease_cnp, first_cnp;
    uint8_t decrease_armed;          /* a rate-decrease event is scheduled (at decrease_next_ps) */
    int64_t alpha_next_ps;           /* the next alpha update not yet applied (cc.c: applied lazily) */
    int64_t decrease_next_ps;        /* the next rate-decrease instant not yet passed */
    int64_t rp_due_ps;               /* when the pending rate-increase timer fires (0: none) */
    /* HPCC */
    double cur_Bps, u;
    uint32_t inc_stage;
    uint64_t last_update_seq;
    uint8_t nhop;
    int_hop hop[PKT_MAX_INT_HOPS];
    /* TIMELY */
    double rtt_diff_ps;
    int64_t last_rtt_ps;
    /* DCTCP */
    uint64_t ecn_cnt, batch, high_seq;
    uint8_t ca_state;
} cc_state;

typedef struct flow {
    uint32_t src, dst;               /* host indices */
    uint32_t nic;                    /* first link of the data path (sender's port) */
    uint16_t sport, dport;
    uint8_t pg, started, finished, recv_done;
    uint64_t size, snd_nxt, snd_una, rcv_nxt, milestone;
    uint32_t mtu;                    /* payload bytes of its full packets */
    int64_t start_ps, finish_ps, recv_done_ps, standalone_ps;
    int64_t next_avail_ps;
    double rate_Bps, max_rate_Bps;
    uint64_t win;
    int64_t base_rtt_ps;
    uint32_t route, nroute, aroute, naroute; /* offsets into sim->routes: data path, ACK path */
    uint32_t prev_qp;                /* the flow whose queue pair this one continues, or PKT_NONE */
    uint8_t ecn_pending;
    int64_t nack_timer_ps;
    uint64_t last_nack;
    uint64_t rto_una;
    uint32_t tgen[TIMER_COUNT];      /* bumping tgen[k] cancels the flow's pending timer k */
    uint64_t retransmits;
    uint64_t events;                 /* events attributed to this flow */
    /* Wormhole (wormhole.c): the flows of its partition, and its steady-state window (rate
     * samples since win_t0_ps, when it had snd_una win_una0) */
    uint32_t wh_next, wh_prev;
    uint32_t qp_next;                /* the next message on its queue pair, once started */
    uint32_t win_n;
    double win_min_Bps, win_max_Bps, win_sum_Bps;
    int64_t win_t0_ps, win_tmid_ps;
    uint64_t win_una0, win_unamid;
    uint32_t win_cnp0;               /* its CNPs when the window began */
    uint8_t steady;                  /* its last full window was steady (§5.1) */
    double steady_Bps;               /* payload goodput over that window */
    double steady_rate_Bps;          /* and its mean CC rate */
    uint64_t ff_bytes;               /* payload advanced by fast-forwards: taken off size */
    /* memoization (memo.c) */
    uint8_t memo_state;              /* MEMO_NONE, MEMO_REC (being recorded), MEMO_GHOST (replayed) */
    uint8_t memo_links, memo_alinks; /* counted as delivering over its data ports, its ACK ports */
    uint32_t memo_idx, memo_gen;     /* its memo entry; bumping memo_gen cancels a replay's events */
    uint8_t memo_wait;               /* 1: a replay of an entry still being recorded (a follower);
                                      * 2: one whose recording was given up, to be simulated */
    uint32_t memo_next;              /* the next follower of that entry */
    double memo_frac;                /* memo_wait 2: the share of its bytes sent when it was given up */
    int64_t memo_t0_ps;              /* when it started (recording or replay) */
    int64_t allsent_ps;              /* when it sent its last byte (last time, after go-backs) */
    uint32_t n_data, n_ack, n_cnp, n_ecn; /* its data packets, ACKs, CNPs, ECN marks */
    cc_state cc;
    orr_event_fn done;
    void *ctx;
    uint64_t arg;
} flow;

struct orr_packet_sim {
    orr_engine *e;
    const orr_topo *t;
    orr_packet_config cfg;
    port *ports;                     /* [t->n_links] */
    struct wire_slot *wire_mem;      /* [t->n_links * PKT_WIRE_SLOTS]: the ports' first wire rings */
    /* switches: shared buffer accounting per node */
    uint64_t *shared_used, *static_used; /* static: headroom + reserve of all ports */
    uint64_t *buf_used;              /* all bytes admitted (for the no-PFC drop rule) */
    pkt **pchunks;
    size_t n_pchunks, cap_pchunks;
    uint32_t pfree, pcount;
    flow **fchunks;
    size_t n_fchunks, cap_fchunks;
    uint32_t nflows;
    uint32_t *routes;
    size_t nroutes, caproutes;
    uint32_t *finished;
    size_t nfinished, capfinished;
    uint64_t rng;
    uint64_t max_win;
    int64_t max_rtt_ps;
    uint32_t int_bytes;              /* INT overhead on data packets for this CC */
    int64_t stop_ps;
    int stopped;
    uint64_t events0;
    orr_packet_stats st;
    orr_packet_accel_stats acc;      /* the Wormhole layer's counters (wormhole.c) */
    struct wh_port *wh;              /* [t->n_links] partition of each port, NULL: no acceleration */
    struct pkt_memo *memo;           /* memo.c, NULL: no memoization */
    orr_buf *pfc_log;
    orr_link_bins *bins;             /* per-port wire bytes per window, or NULL */
};

static inline pkt *P(const orr_packet_sim *s, uint32_t i)
{
    return &s->pchunks[i >> PKT_CHUNK_SHIFT][i & ((1u << PKT_CHUNK_SHIFT) - 1)];
}
/* Payload bytes of data packet p. */
static inline uint32_t pkt_payload(const orr_packet_sim *s, const pkt *p)
{
    return p->size - PKT_DATA_HDR_BYTES - s->int_bytes;
}
static inline flow *F(const orr_packet_sim *s, uint32_t i)
{
    return &s->fchunks[i >> FLOW_CHUNK_SHIFT][i & ((1u << FLOW_CHUNK_SHIFT) - 1)];
}

/* sim.c: n bytes aligned to a cache line, on large pages from 1 MiB up where the system has them. */
void *pkt_alloc_big(size_t n);

/* Deterministic uniform draw in [0, 1). */
double pkt_rand(orr_packet_sim *s);
/* RED: marking probability of an egress queue of qbytes with thresholds kmin < kmax, pmax. */
double pkt_red_prob(uint64_t qbytes, uint64_t kmin, uint64_t kmax, double pmax);

/* sim.c services used by cc.c */
void pkt_change_rate(orr_packet_sim *s, flow *f, double new_Bps);
/* Schedules timer kind of flow id after delay_ps (cancelled by bumping f->tgen[kind]). */
void pkt_flow_timer(orr_packet_sim *s, uint32_t id, int kind, int64_t delay_ps, orr_event_fn fn);
/* The id and a valid flow from a timer's arg, or NULL if the timer is stale or the run stopped. */
flow *pkt_timer_flow(orr_packet_sim *s, uint64_t arg, uint32_t *id);

/* sim.c: which port (1) or flow (2) a queued event of the engine is for, in *idx; 0 if neither
 * (not the simulator's, a flow start, the stop, a Wormhole resume). */
int pkt_event_owner(const orr_packet_sim *s, const orr_event *ev, uint32_t *idx);

/* wormhole.c (all no-ops when s->wh is NULL) */
void wh_create(orr_packet_sim *s);
void wh_free(orr_packet_sim *s);
/* Flow id starts (before it is put on its NIC): joins its ports' partitions, waking any that are
 * fast-forwarded (skip-back); prev: the message it continues on a queue pair (cc_continue), or
 * NULL. */
void wh_flow_start(orr_packet_sim *s, uint32_t id, flow *f, flow *prev);
/* At the end of a flow's start (it is on its NIC, its timers are set): a flow that went on with
 * its queue pair's steady state may complete a steady partition. */
void wh_flow_started(orr_packet_sim *s, flow *f);
/* Flow id finished: leaves its partition. */
void wh_flow_finish(orr_packet_sim *s, uint32_t id, flow *f);
/* After an ACK of flow id was processed: a rate sample; may fast-forward its partition. */
void wh_on_ack(orr_packet_sim *s, uint32_t id, flow *f);
/* The payload bytes flow f has delivered since its partition was frozen (at its steady rate), 0 if
 * it is not frozen: what a reader of its progress adds while it is. */
uint64_t wh_frozen_progress(const orr_packet_sim *s, const flow *f);
/* The steady-state window in samples for a flow of mtu_bytes packets (wormhole.c). */
uint32_t wh_window(const orr_packet_config *c, uint32_t mtu_bytes);
/* Is ev the Wormhole resume event? */
int wh_is_resume(const orr_event *ev);

/* sim.c: completes flow fid now (its last ACK came); puts flow id on its NIC and starts sending:
 * prev (the queue pair's previous message, cont) and its view (memo_prev_view) give its CC state,
 * else a fresh one; resumed: its CC state is set already (a replay turned back into a flow). */
void pkt_flow_complete(orr_packet_sim *s, uint32_t fid, flow *f);
void pkt_flow_go(orr_packet_sim *s, uint32_t id, flow *f, int resumed);
/* wormhole.c: the wire bytes bytes of payload of f put on its ports between t0 and t1 (statistics,
 * link windows); is f in a fast-forwarded partition? */
void wh_account_ports(orr_packet_sim *s, const flow *f, uint64_t bytes, int64_t t0, int64_t t1);
int wh_flow_frozen(const orr_packet_sim *s, const flow *f);

/* memo.c (s->memo is NULL when memoization is off) */
enum { MEMO_NONE = 0, MEMO_REC = 1, MEMO_GHOST = 2 };
typedef struct pkt_memo pkt_memo;
void memo_create(orr_packet_sim *s);
void memo_free(orr_packet_sim *s);
/* Flow id starts; prev: the message it may continue on its queue pair, or NULL. Sets *cont (it
 * continues prev). Returns 1 if it is replayed (nothing more to do), 0 to simulate it. */
int memo_flow_start(orr_packet_sim *s, uint32_t id, flow *f, flow *prev, int *cont);
void memo_on_all_sent(orr_packet_sim *s, flow *f);
/* Flow f is added to start later (orrery netsim's flow list): its start on its data ports. */
void memo_note_future(orr_packet_sim *s, const flow *f);
/* Flow id, being recorded, met RED (a random draw): its outcome is one sample, not the unit's. */
void memo_noisy(orr_packet_sim *s, uint32_t id, flow *f);
void memo_on_recv_done(orr_packet_sim *s, uint32_t id, flow *f);
void memo_flow_finish(orr_packet_sim *s, uint32_t id, flow *f);
/* Has f sent all its bytes (a replay: by its recorded instant)? */
int memo_all_sent(const orr_packet_sim *s, const flow *f);
/* prev as a continuing flow sees it: a replay's recorded state at its all-sent instant (in tmp). */
const flow *memo_prev_view(const orr_packet_sim *s, const flow *prev, flow *tmp);
/* The bytes a replayed flow has delivered by now (interpolated), 0 if it is not a replay. */
uint64_t memo_ghost_progress(const orr_packet_sim *s, const flow *f);
int memo_is_event(const orr_event *ev);
/* fcg.c: canonical order of the n vertices of an FCG (colour ranks, weight matrix n x n) by
 * nauty; order[k] is the vertex in place k. 0, or -1 if nauty failed. */
int memo_fcg_canon(uint32_t n, const uint32_t *rank, const uint32_t *weight, uint32_t *order);

/* cc.c */
void cc_init(orr_packet_sim *s, flow *f);
/* cc_continue in two parts: the state flow f starts with on prev's queue pair (no events), and
 * the DCQCN timers that state has pending, scheduled (after catching up to now: a replay turned
 * back into a flow). */
void cc_continue_state(orr_packet_sim *s, flow *f, const flow *prev);
void cc_resume_timers(orr_packet_sim *s, uint32_t id, flow *f);
/* DCQCN: applies the alpha updates due at or before now (every ALPHA_RESUME_INTERVAL,
 * alpha <- (1 - g) alpha + g * [a CNP came in that interval]); exposed for tests/test_packet.c. */
void cc_dcqcn_alpha_catch_up(const orr_packet_sim *s, cc_state *c, int64_t now);
/* Starts flow id, f on the queue pair of prev (finished): its rate and congestion-control state. */
void cc_continue(orr_packet_sim *s, uint32_t id, flow *f, const flow *prev);
void cc_on_ack(orr_packet_sim *s, uint32_t id, flow *f, const pkt *ack);

#endif
