/*
 * calibrate.h - `orrery calibrate` (docs/calibrate.md): a calibration profile (hw.h) fitted on a
 * user's own measurements of their cluster:
 *   - nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf,
 *     broadcast_perf, reduce_perf): the achieved NVLink bandwidth and the collective floor from the
 *     runs inside one node, the achieved network bandwidth and the per-step network latency from
 *     the runs across nodes;
 *   - measured training step times (a CSV of runs, or Megatron-LM logs): one compute scale on the
 *     GPU's kernel efficiencies.
 * Each parameter is found by a one- or two-dimensional search (a grid, then golden sections) that
 * minimises the mean |log(predicted / measured)| over its rows: no general optimiser, few
 * parameters, the same result for the same input.
 */
#ifndef ORRERY_CALIBRATE_H
#define ORRERY_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>
#include "orrery/core.h"
#include "orrery/hw.h"
#include "orrery/spec.h"

#define ORR_CALIB_MAX_NCCL_ROWS 4096   /* nccl-tests rows over all the files */
#define ORR_CALIB_MAX_RANKS 65536      /* ranks one nccl-tests run may list */
#define ORR_CALIB_MAX_STEPS 256        /* measured step times (each is a prediction per fit step) */

/* One nccl-tests result row. */
typedef struct orr_nccl_row {
    orr_coll_kind kind;
    uint32_t ranks, nodes;    /* ranks per node: ranks / nodes */
    uint64_t bytes;           /* nccl-tests' size: NCCL's per-rank buffer (all-gather: the output) */
    double time_us;           /* measured: the smaller of the out-of-place and in-place times */
    char where[160];          /* "file:line" */
} orr_nccl_row;

typedef struct orr_nccl_rows {
    orr_nccl_row *v;
    size_t n, cap;
} orr_nccl_rows;

/* Appends the rows of one nccl-tests output (text[0..len), name standing for the file) to t.
 * Lines that are not nccl-tests' own (warnings, NCCL's INFO lines) are skipped; a malformed result
 * row, a run with wrong results, or a collective that cannot be told is an error naming the line. */
int orr_nccl_tests_parse(orr_nccl_rows *t, const char *name, const char *text, size_t len, orr_err *err);
int orr_nccl_tests_load(orr_nccl_rows *t, const char *path, orr_err *err);
void orr_nccl_rows_free(orr_nccl_rows *t);

/* One measured training step: the job and its iteration time. */
typedef struct orr_step_row {
    orr_spec spec;            /* the job, not yet resolved */
    double step_s;            /* measured iteration time, s */
    char where[400];          /* "runs.csv row 3 (name)" */
} orr_step_row;

typedef struct orr_step_rows {
    orr_step_row *v;
    size_t n, cap;
} orr_step_rows;

/* A CSV of runs (docs/calibrate.md): a header, then one run per row; step_ms or step_s is the
 * measured iteration time, name an optional label, and every other column a flag of orrery predict
 * without its dashes (tp, gbs, precision, sp, ...), applied over base. */
int orr_steps_csv_load(orr_step_rows *t, const char *path, const orr_spec *base, orr_err *err);
/* A Megatron-LM training log: *step_s is the median of its "elapsed time per iteration (ms): X"
 * values after the first (which includes start-up), *nvalues how many it had. */
int orr_megatron_log_parse(const char *name, const char *text, size_t len, double *step_s, size_t *nvalues,
                           orr_err *err);
/* The same from a file, appended to t as a run of the job base. */
int orr_megatron_log_load(orr_step_rows *t, const char *path, const orr_spec *base, orr_err *err);
void orr_step_rows_free(orr_step_rows *t);

/* A fitted parameter: the profile key, its value before (the catalog's) and after, in the key's
 * unit, and the rows it was fitted on. */
typedef struct orr_calib_param {
    const char *key;          /* "nvlink_eff", ..., or "compute_scale" */
    const char *unit;         /* "", "us" */
    double before, after;
    const char *rows;         /* "nccl-tests inside one node", ... */
} orr_calib_param;

/* One measured row against the prediction with the catalog's values and with the profile's. */
typedef struct orr_calib_residual {
    char where[400];
    char what[96];            /* "all_reduce 8x1 65536 B", "llama3-8b tp 2 ..." */
    double measured, before, after; /* times: us for nccl-tests rows, ms for steps */
    int step;                 /* 1: a step time, 0: an nccl-tests row */
} orr_calib_residual;

typedef struct orr_calib_result {
    orr_hw_profile profile;   /* as written and read back (the residuals are of this) */
    orr_buf yaml;             /* the profile file's text */
    orr_calib_param params[8];
    size_t nparams;
    orr_calib_residual *res;
    size_t nres;
} orr_calib_result;

/* Fits the profile of hw's GPU and cluster (a spec whose hardware orr_spec_resolve_hardware has
 * filled, and no profile) on the rows given (either may be NULL or empty, not both). */
int orr_calibrate(const orr_spec *hw, const orr_nccl_rows *nccl, const orr_step_rows *steps, orr_calib_result *out,
                  orr_err *err);
void orr_calib_result_free(orr_calib_result *r);
/* The fitted values and every row's residuals as YAML comments, then the profile: the whole text is
 * a profile file. */
void orr_calibrate_report(const orr_calib_result *r, orr_buf *out);

#endif
