/*
 * search.h - `orrery search`: a space of training configurations (parallel degrees, micro-batch,
 * recomputation, sharding) of one job, enumerated in a fixed order, pruned where a result is proven
 * without simulating it, predicted trial by trial (in worker processes with -j) and ranked
 * (docs/spec.md "Search", docs/json.md "Search").
 *
 * Each trial is the base job (a spec file and predict's flags) with one value per axis, applied as
 * flags through orr_spec_apply_flags, resolved by orr_spec_resolve and predicted by orr_predict.
 */
#ifndef ORRERY_SEARCH_H
#define ORRERY_SEARCH_H

#include <stdint.h>
#include "orrery/core.h"
#include "orrery/spec.h"

#define ORR_SEARCH_MAX_TRIALS 100000 /* a larger space is refused (narrow the lists) */
#define ORR_SEARCH_MAX_VALUES 64     /* values one axis may list */
#define ORR_SEARCH_MAX_JOBS 256      /* -j */

/* The axes, in enumeration order (outermost first). ZERO, FSDP and DIST_OPT belong to deepspeed,
 * torchtitan and megatron; under another framework each has the single value 0. GPUS is the GPU
 * count (a list of them gives a Pareto front of time against GPUs or cost). EP (expert parallelism)
 * has the single value 1 for a dense model. */
typedef enum orr_axis {
    ORR_AX_GPUS, ORR_AX_FRAMEWORK, ORR_AX_TP, ORR_AX_PP, ORR_AX_CP, ORR_AX_EP, ORR_AX_VPP, ORR_AX_MBS, ORR_AX_RECOMPUTE,
    ORR_AX_ZERO, ORR_AX_FSDP, ORR_AX_DIST_OPT, ORR_AX_SP, ORR_AX_COUNT
} orr_axis;

/* The values of one axis: given (a flag named it) with a list, or "auto" (the wider default rule of
 * that axis, docs/spec.md "Search"); not given: the axis's default rule. */
typedef struct orr_axis_values {
    int given, is_auto;
    uint32_t n;
    uint32_t v[ORR_SEARCH_MAX_VALUES];
} orr_axis_values;

typedef enum orr_search_strategy { ORR_STRATEGY_EXHAUSTIVE, ORR_STRATEGY_RANDOM, ORR_STRATEGY_CMAES } orr_search_strategy;

struct orr_trial;
struct orr_fit_fixes;
/* The processes of an MPI job (tools/orrery_mpi.c): rank `rank` of `size` simulates every size-th
 * trial of each batch; allgather then leaves every rank's records (n_all in all, in rank order: rank 0's,
 * rank 1's, ...) in all on every rank. NULL in orr_search_opts: one process. */
typedef struct orr_search_ranks {
    uint32_t rank, size;
    int (*allgather)(void *ctx, const struct orr_trial *mine, uint32_t n_mine, struct orr_trial *all, uint32_t n_all);
    void *ctx;
} orr_search_ranks;
typedef enum orr_objective { ORR_OBJ_TIME, ORR_OBJ_COST, ORR_OBJ_MFU } orr_objective;

typedef struct orr_search_opts {
    orr_axis_values ax[ORR_AX_COUNT];
    orr_search_strategy strategy;
    uint32_t budget;          /* random, cmaes: simulations at most (0: not given) */
    uint64_t seed;            /* random, cmaes: the generator's seed (default 1) */
    uint32_t jobs;            /* -j: worker processes (default 1: in this process) */
    orr_objective objective;
    double price_per_gpu_hour;/* USD; 0: not given */
    double tokens;            /* --tokens: tokens to train, for time and cost to train (0: not given) */
    uint32_t refine;          /* --refine K: re-simulate the best K with refine_net (0: none) */
    char refine_net[16];      /* --net with --refine: flow or packet */
    uint32_t top;             /* rows of the ranked table (default 10) */
    int json;
    int no_prune;             /* --no-prune: simulate every valid trial (checks the pruning) */
    int no_time_bound;        /* --no-time-bound: keep the memory bound and duplicates, not the time bound */
    const orr_search_ranks *ranks; /* MPI ranks sharing the trials (NULL: this process alone) */
    char csv_path[256];
    char html_path[256];      /* --html FILE: the HTML report (heatmap, Pareto front, best trials) */
    const char *spec_path;    /* the base job's spec file (NULL: none) */
    const char *spec_text;    /* or its YAML text (the Python package's dicts and strings; NULL: none) */
    struct orr_progress *progress; /* a progress line over the trials (progress.h); NULL: none */
    int base_argc;            /* predict's flags that are not axes, in the order given */
    char **base_argv;         /* heap array of pointers into the caller's argv */
} orr_search_opts;

typedef enum orr_trial_status {
    ORR_TRIAL_OK, ORR_TRIAL_OOM, ORR_TRIAL_INVALID, ORR_TRIAL_PRUNED, ORR_TRIAL_PENDING
} orr_trial_status;

/* One point of the space and what became of it. Plain data (it crosses a pipe from the workers). */
typedef struct orr_trial {
    uint32_t index;           /* enumeration order */
    uint32_t v[ORR_AX_COUNT]; /* the axes' values (framework and recompute as their enums) */
    uint32_t dp;              /* resolved data parallelism (0: unknown) */
    uint32_t fsdp;            /* resolved FSDP2 shard degree (torchtitan; 0 otherwise) */
    orr_trial_status status;
    char key[24];             /* the reason's category: divisibility, framework, memory_lower_bound, ... */
    char reason[240];         /* why it is invalid, pruned or OOM ("" when ok) */
    double iteration_s, tokens_per_s, mfu, cost_usd; /* simulated trials only */
    uint64_t peak_bytes;      /* peak reserved bytes on the busiest GPU */
    uint64_t capacity_bytes;  /* what the allocator may use per GPU */
    uint64_t bound_bytes;     /* the memory lower bound (valid trials) */
    double bound_s;           /* the iteration-time lower bound (valid trials; 0: none) */
    uint32_t same_as;         /* a duplicate: the trial with the same resolved spec (else UINT32_MAX) */
    uint32_t order;           /* 1-based place among the simulations, in the search's order (0: not simulated) */
} orr_trial;

/* A trial re-simulated by --refine with a finer network model. */
typedef struct orr_refined {
    uint32_t index;           /* the trial */
    uint32_t rank, new_rank;  /* 1-based: among the refined, with the analytic network and with refine_net */
    double iteration_s;       /* refined prediction (0 when it failed: reason says why) */
    int oom;
    char reason[160];
} orr_refined;

/* A count per reason key. */
typedef struct orr_reason_count { char key[24]; uint32_t n; } orr_reason_count;

typedef struct orr_search_result {
    orr_trial *trials;
    uint32_t ntrials;
    uint32_t valid, evaluated, ok, oom;
    uint32_t restarts;        /* cmaes: restarts of the strategy (stagnation) */
    orr_reason_count pruned[8], rejected[8];
    uint32_t npruned, nrejected;
    uint32_t *ranked;         /* indices of the ok trials, best first */
    uint32_t nranked;
    uint32_t *pareto;         /* with several GPU counts: the ok trials no other beats on both time and GPUs
                               * (cost with a price), by ascending GPUs (cost) */
    uint32_t npareto;
    struct orr_refined *refined; /* --refine: the best trials re-simulated, in their first rank's order */
    uint32_t nrefined;
    double wall_s;
    char title[256];          /* "MODEL on N x GPU, gbs B, seq S" (N: the GPU counts) */
} orr_search_result;

/* Parses `orrery search`'s arguments (after the command name): an optional spec path first, the
 * search's own flags, the axes' lists, and every other flag passed to predict's parser as the base
 * job. Errors name the flag and what it expects. */
int orr_search_parse(orr_search_opts *o, int argc, char **argv, orr_err *err);
/* The same with the spec given as YAML text (named "spec" in messages) instead of a path first in
 * argv; spec_text must outlive o. */
int orr_search_parse_text(orr_search_opts *o, const char *spec_text, int argc, char **argv, orr_err *err);
void orr_search_opts_free(orr_search_opts *o);

/* Enumerates, prunes, predicts and ranks. Fails (a user error) on a bad base job or a space larger
 * than ORR_SEARCH_MAX_TRIALS. */
int orr_search_run(const orr_search_opts *o, orr_search_result *r, orr_err *err);
void orr_search_result_free(orr_search_result *r);

/* Bytes every GPU must hold, at least, for the parameters, gradients and optimizer state of a
 * resolved spec, whatever the rest of the prediction (docs/spec.md "Search": the definition). */
uint64_t orr_search_memory_lower_bound(const orr_spec *s);
/* Seconds every iteration of a resolved spec takes, at least: its layers' matrix multiplies on the
 * busiest pipeline stage at the GPU's peak, with the pipeline's fill and drain (docs/spec.md
 * "Search"). 0 when unknown. */
double orr_search_time_lower_bound_s(const orr_spec *s);

/* When a resolved job (cur: the spec file or text and predict's flags argv, resolved) is out of
 * memory: the settings that would make it fit, found by a local search around it (fixes.c: up to
 * three settings changed, at most 48 predictions), fastest first, for the report (report.h). */
int orr_search_fixes(const char *spec_path, const char *spec_text, int argc, char **argv, const orr_spec *cur,
                     struct orr_fit_fixes *out, orr_err *err);

/* Outputs: the ranked table, counts and TP x PP heatmap; the JSON document; the CSV of every trial. */
void orr_search_text(const orr_search_result *r, const orr_search_opts *o, orr_buf *out);
void orr_search_json(const orr_search_result *r, const orr_search_opts *o, orr_buf *out);
void orr_search_csv(const orr_search_result *r, orr_buf *out);
/* The files the options ask for: --csv FILE and --html FILE (errors name the flag, with strerror). */
int orr_search_write_files(const orr_search_result *r, const orr_search_opts *o, orr_err *err);
/* Writes the HTML report of a search to path (docs/report.md); errors name --html and the file. */
int orr_search_html(const orr_search_result *r, const orr_search_opts *o, const char *path, orr_err *err);

/* One line per flag of `orrery search` (its own and the axes), as orr_flags_help prints predict's. */
void orr_search_flags_help(orr_buf *out);

const char *orr_trial_status_name(orr_trial_status s);

#endif
