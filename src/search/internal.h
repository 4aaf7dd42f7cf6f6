/*
 * internal.h - what the search module's files share: the base job, the spec of one trial, the
 * simulation of a batch of trials (here, in -j workers, over MPI ranks) and the strategies.
 */
#ifndef ORRERY_SEARCH_INTERNAL_H
#define ORRERY_SEARCH_INTERNAL_H

#include "orrery/search.h"

/* The base job (spec file + predict's flags) and what the axes' default rules read from it. */
typedef struct search_base {
    orr_spec s;
    uint32_t gpn, layers, seq, gbs;
} search_base;

int search_base_init(const orr_search_opts *o, search_base *b, orr_err *err);
/* The rest of a base once b->s holds the spec and flags: checks the model and batch, and reads what
 * the default rules need (gpus: the GPU count for the cluster's shape, 0: the spec's). */
int search_base_finish(search_base *b, uint32_t gpus, orr_err *err);
/* Every trial of the space in enumeration order (heap; *n of them), or an error when the space is
 * larger than ORR_SEARCH_MAX_TRIALS. */
int search_enumerate(const orr_search_opts *o, const search_base *b, orr_trial **out, uint32_t *n, orr_err *err);
/* The resolved spec of a trial: the base with the trial's axis values applied as flags (and --net
 * net, unless NULL). */
int search_trial_spec(const search_base *b, const orr_trial *t, const char *net, orr_spec *s, orr_err *err);
/* The short key of a resolve error message: divisibility, framework, pipeline or other. */
const char *search_reason_key(const char *msg);

/* The distinct values of axis ax over the trials, ascending (at most cap); their number. */
uint32_t search_axis_values(const orr_search_result *r, int ax, uint32_t *vals, uint32_t cap);

/* The state of one search run shared by the strategies: the base, the options, the result being
 * filled, the simulations so far (their order numbers) and the shortest iteration simulated on each
 * GPU count. */
typedef struct search_run {
    const search_base *b;
    const orr_search_opts *o;
    orr_search_result *r;
    uint32_t simulated;       /* trials simulated so far (the next one's order is simulated + 1) */
    uint32_t total;           /* the simulations the progress line counts towards */
    uint32_t nbest;
    uint32_t best_gpus[ORR_SEARCH_MAX_VALUES]; /* a GPU count ... */
    double best_s[ORR_SEARCH_MAX_VALUES];      /* ... and the shortest iteration of a trial that fits on it */
} search_run;

/* What ranks a simulated trial under the objective: lower is better (seconds, USD, or -MFU). */
double search_score(const orr_search_opts *o, const orr_trial *t);
/* The score a trial cannot beat, from its time lower bound; 0 with have = 0 when there is none (no
 * bound, pruning off, or the objective is mfu, whose model FLOPs differ between trials). */
double search_bound_score(const search_run *R, const orr_trial *t, int *have);
void search_set_reason(orr_trial *t, orr_trial_status st, const char *key, const char *reason);
/* Simulates trials cand[0..n) (pending): this rank's share, in -j workers or here, then every rank's
 * results gathered; numbers them in cand order and updates the best. */
int search_simulate(search_run *R, const uint32_t *cand, uint32_t n, orr_err *err);
/* Prunes, as proven no better than the best simulated, the trials of cand whose time bound is above
 * the time of a trial that fits on as many GPUs or fewer (so it is slower and, on as many GPUs or
 * more, no cheaper: it can be neither the best nor on the Pareto front); compacts cand to the others
 * and returns their number. */
uint32_t search_prune_by_time(search_run *R, uint32_t *cand, uint32_t n);
/* The trials by their axis values, for Maya's memory tactics (dominance.c). */
typedef struct search_points {
    const orr_search_result *r;
    uint32_t *slot, cap;      /* open addressing: trial index + 1, 0 empty */
} search_points;
void search_points_build(search_points *p, const orr_search_result *r);
void search_points_free(search_points *p);
/* Prunes trial i as oom_dominated when a frugal neighbour is known not to fit; 1 if it did. */
int search_prune_dominated(const search_points *p, orr_search_result *r, uint32_t i);
/* 1 when none of trial i's frugal neighbours is still pending. */
int search_ready(const search_points *p, const orr_search_result *r, uint32_t i);

/* --strategy cmaes over the pending candidates (guided.c). */
int search_cmaes(search_run *R, const uint32_t *cand, uint32_t ncand, orr_err *err);

#endif
