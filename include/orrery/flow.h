/*
 * flow.h - the flow-level network backend: an orr_transport whose flows share the links of an
 * orr_topo max-min fairly (progressive filling), recomputed incrementally, with completion events
 * on the shared engine, per-link and per-flow statistics, and time rollback for flows injected in
 * the past (Phantora §4.2).
 *
 * Rates: a flow's rate is its max-min fair share of the links on its path; a link's capacity is
 * its rate_Bps times the tier scale given at creation (the protocol efficiency of NVLink and of the
 * network: achieved / raw bandwidth). Link delays are not modelled (the collective scheduler adds
 * per-step latency). When flows start or finish, only the connected component of links and flows
 * they touch is recomputed, once per instant (starts and finishes at one time are batched).
 *
 * Rollback (a backend created with opts.keep_history): orr_flow_start_at(t_past) with t_past
 * earlier than the engine's clock restores the remaining bytes of every active flow at t_past from
 * its rate history, re-runs the fluid model from t_past to now with the new flow, and reschedules
 * the completions. History older than the horizon given to orr_flow_gc() is dropped; producers
 * (e.g. the emulator's ranks) call it with the time of their slowest member, and must not inject
 * flows earlier than that.
 * Flows that had already completed (their callback has run) are not re-simulated: the caller
 * guarantees no flow completed after t_past, or accepts that those completions stand.
 */
#ifndef ORRERY_FLOW_H
#define ORRERY_FLOW_H

#include <stdint.h>
#include "orrery/linkbins.h"
#include "orrery/topo_build.h"
#include "orrery/transport.h"

typedef struct orr_flow_opts {
    double tier_scale[ORR_TIER_COUNT]; /* capacity = rate_Bps x scale per tier; 0 means 1 */
    orr_route_opts route;
    int keep_history; /* 1: keep every flow's rate history, which a start in the past (rollback)
                       * needs; 0: keep none (a start in the past then aborts: a caller's bug) */
} orr_flow_opts;

/* Statistics of one directed link (updated at every recomputation touching it; call
 * orr_flow_sync() to bring all links up to the engine's time). */
typedef struct orr_flow_link_stats {
    double bytes;          /* bytes carried */
    int64_t busy_ps;       /* time with at least one flow */
    int64_t saturated_ps;  /* time the link was a bottleneck (some flow's rate set by it) */
    uint32_t peak_flows;   /* most flows at once */
} orr_flow_link_stats;

typedef struct orr_flow_totals {
    uint64_t flows;        /* flows started */
    uint64_t finished;     /* flows finished */
    uint64_t recomputes;   /* rate recomputations */
    uint64_t rollbacks;    /* flows injected in the past */
    double bytes;          /* bytes of finished flows */
    int64_t fct_sum_ps;    /* sum of finished flows' completion times */
    int64_t bottleneck_ps; /* sum over finished flows of the time their rate was below their
                            * uncontended rate (the smallest link capacity of their path) */
} orr_flow_totals;

/* Creates the backend on engine e over topology t (finished; it must outlive the transport). */
orr_transport *orr_flow_create(orr_engine *e, const orr_topo *t, const orr_flow_opts *o);
/* Starts a flow as if it had started at t_start_ps (<= now: rollback; > now: scheduled). */
void orr_flow_start_at(orr_transport *tr, int64_t t_start_ps, uint32_t src_host, uint32_t dst_host,
                       uint64_t bytes, uint64_t flow_id, orr_event_fn done, void *ctx, uint64_t arg);
/* Drops rate history older than horizon_ps: flows may no longer be injected before it. */
void orr_flow_gc(orr_transport *tr, int64_t horizon_ps);
/* Brings the link statistics up to the engine's current time. */
void orr_flow_sync(orr_transport *tr);
/* Also accounts every link's bytes by time window into bins (not owned; NULL: stop), for link
 * counter tracks. Changes nothing the model computes. */
void orr_flow_set_link_bins(orr_transport *tr, orr_link_bins *bins);
const orr_flow_link_stats *orr_flow_link_stats_of(const orr_transport *tr, uint32_t link);
orr_flow_totals orr_flow_get_totals(const orr_transport *tr);
/* For tests: the current rate (bytes/s) of the active flow with this id, or -1. */
double orr_flow_rate(const orr_transport *tr, uint64_t flow_id);
/* For tests: recomputes every rate from scratch and returns the largest relative difference from
 * the incrementally maintained rates (0 when they agree). Changes nothing. */
double orr_flow_check_rates(orr_transport *tr);
/* History entries held (for the GC test). */
size_t orr_flow_history_len(const orr_transport *tr);

#endif
