/*
 * report.h - results for people and programs: the per-rank breakdown, the critical path, a text
 * summary, JSON (schema in docs/json.md, versioned) and a Perfetto/Chrome trace.
 *
 * Breakdown of one rank's timeline [0, iteration end]: at each instant the GPU is in exactly one
 * state, taken in this priority: compute (a kernel runs) > communication by role (a collective or
 * p2p transfer runs; exposed = not under compute) > bubble (a p2p op waits for its pipeline peer)
 * (and the collectives that span pipeline stages, roles EMB and OTHER, wait for the pipeline to
 * drain) > wait (another collective waits for other members: stragglers) > idle (nothing runs,
 * nothing waits: host-bound or drained). The parts sum to the iteration time.
 */
#ifndef ORRERY_REPORT_H
#define ORRERY_REPORT_H

#include <stdint.h>
#include "orrery/core.h"
#include "orrery/exec.h"
#include "orrery/workload.h"

#define ORR_JSON_SCHEMA_VERSION 1

typedef struct orr_breakdown {
    int64_t compute_ps;
    int64_t comm_ps[ORR_ROLE_COUNT]; /* exposed communication by role */
    int64_t overlapped_comm_ps;      /* communication hidden under compute */
    int64_t bubble_ps;
    int64_t wait_ps;
    int64_t ep_wait_ps;              /* of wait_ps, waiting in expert-parallel collectives for the most
                                      * loaded expert rank: expert imbalance wait */
    int64_t idle_ps;
    int64_t total_ps;
} orr_breakdown;

/* Time on the critical path by what it was spent on. */
typedef enum orr_cp_kind {
    ORR_CP_COMPUTE, ORR_CP_COMM_TP, ORR_CP_COMM_PP, ORR_CP_COMM_DP, ORR_CP_COMM_OTHER,
    ORR_CP_HOST, ORR_CP_MEMCPY, ORR_CP_KIND_COUNT
} orr_cp_kind;

typedef struct orr_critical_path {
    int64_t ps[ORR_CP_KIND_COUNT];
    uint32_t nops;        /* ops on the path */
    uint32_t rank_hops;   /* times the path moves to another rank */
} orr_critical_path;

/* A change of settings that makes an out-of-memory job fit, found by a local search around it
 * (orr_search_fixes): the changed settings as predict's flags, and the prediction with them. */
typedef struct orr_fit_fix {
    char flags[160];            /* e.g. "--recompute full --dist-opt" */
    uint32_t changes;           /* settings changed */
    double iteration_s;
    uint64_t peak_bytes;        /* peak reserved per GPU with the change */
} orr_fit_fix;

#define ORR_FIT_FIXES_MAX 3     /* the fixes a report lists */

/* What the local search around an OOM job found (searched 0: it did not run). */
typedef struct orr_fit_fixes {
    int searched;
    uint32_t tried;             /* configurations simulated */
    uint32_t max_changes;       /* the most settings a fix changes in the neighbourhood searched */
    uint32_t n;
    orr_fit_fix fix[ORR_FIT_FIXES_MAX]; /* fastest first */
} orr_fit_fixes;

typedef struct orr_report_info {
    const char *title;          /* e.g. "GPT-3 175B on 1024 x A100-SXM4-80GB" */
    const char *gpu_name;
    double peak_flops_per_gpu;  /* dense peak of the training precision, FLOP/s */
    const char *config_json;    /* a JSON object echoing the configuration (may be NULL) */
    uint64_t device_bytes;      /* memory of one GPU (--mem-capacity or its HBM) */
    uint64_t runtime_reserved_bytes; /* of which outside the framework's allocator */
    int caching_allocator;      /* peaks are the caching allocator's (else raw live bytes) */
    const orr_fit_fixes *fixes; /* an OOM job: the settings that would make it fit (NULL: not searched) */
} orr_report_info;

/* Memory of the job: the rank with the highest peak, and the OOM verdict (memory.h). Peaks are the
 * framework allocator's (PyTorch's max_memory_reserved / max_memory_allocated); the device also holds
 * runtime_reserved_bytes outside it. */
typedef struct orr_mem_summary {
    uint64_t peak_reserved_bytes;   /* max over ranks */
    uint64_t peak_allocated_bytes;  /* max over ranks */
    uint32_t peak_rank;             /* simulated rank (index) with the highest reserved peak */
    uint64_t cat_bytes[ORR_MEM_CAT_COUNT]; /* allocated per category at that rank's peak */
    uint64_t overhead_bytes;        /* allocator overhead (reserved - allocated) then */
    int64_t peak_t_ps;              /* when (host time of the allocation that made it) */
    uint32_t peak_op;               /* that allocation */
    int32_t running_op;             /* the compute-stream op running then, or -1 */
    uint64_t capacity_bytes;        /* what the allocator may use: device - runtime reserved */
    int oom;
    uint32_t oom_rank, oom_op;      /* the first allocation that did not fit (earliest over ranks) */
    uint64_t oom_bytes, oom_in_use_bytes;
    int64_t oom_t_ps;
} orr_mem_summary;

typedef struct orr_result {
    int64_t iteration_ps;
    double iteration_s;
    double tokens_per_s;
    double tflops_per_gpu;       /* model FLOPs / time / GPUs, TFLOP/s */
    double hw_tflops_per_gpu;    /* executed FLOPs (incl. recompute) / time / GPUs */
    double mfu;                  /* tflops_per_gpu / peak */
    double hfu;
    uint32_t world_size;
    uint32_t unique_ranks;
    orr_breakdown *ranks;        /* one per simulated rank */
    size_t nranks;
    orr_breakdown mean;          /* weighted by rank weight */
    orr_critical_path cp;
    uint64_t events;
    char flops_convention[160];
    orr_mem_summary mem;
    orr_net_summary net;         /* link use under --net flow (net.present 0 otherwise) */
    /* Per communicator (group id of the workload): the time its collectives ran (transfer, from
     * the last member joining to the end), summed over the iteration, mean over its simulated
     * members. ngroups entries (0 for a group no simulated rank is in). */
    int64_t *group_comm_ps;
    size_t ngroups;
} orr_result;

int orr_result_build(orr_result *r, const orr_workload *w, const orr_exec_result *x,
                     const orr_report_info *info, orr_err *err);
/* The headline numbers and the memory summary only: no per-rank breakdown (ranks NULL), no group
 * times, no critical path (what a search ranks by, at a quarter less CPU per trial). */
int orr_result_headline(orr_result *r, const orr_workload *w, const orr_exec_result *x,
                        const orr_report_info *info, orr_err *err);
void orr_result_free(orr_result *r);
void orr_report_text(const orr_result *r, const orr_workload *w, const orr_report_info *info,
                     orr_buf *out);
void orr_report_json(const orr_result *r, const orr_workload *w, const orr_report_info *info,
                     orr_buf *out);
/* Writes a Chrome/Perfetto JSON trace: one process per simulated rank, one thread per stream
 * plus one for the host. */
int orr_report_trace(const char *path, const orr_workload *w, const orr_exec_result *x,
                     orr_err *err);
/* The simulated ranks the reports list (indices into w->ranks; their number): every one, ascending,
 * when there are at most ORR_RANKS_LISTED, else the ORR_WORST_RANKS_LISTED with the most bubble +
 * wait + idle time, most first. idx has room for ORR_RANKS_LISTED. */
#define ORR_RANKS_LISTED 32
#define ORR_WORST_RANKS_LISTED 8
size_t orr_report_ranks_listed(const orr_result *r, const orr_workload *w, size_t *idx);
/* Writes the HTML report of one prediction (`--html FILE` of predict and emulate; docs/report.md):
 * one self-contained page, its data inline, drawn by the renderer compiled in (src/report/html/).
 * Errors name the flag and the file. */
int orr_report_html(const char *path, const orr_result *r, const orr_workload *w, const orr_exec_result *x,
                    const orr_report_info *info, orr_err *err);
/* Writes a page of kind "predict" or "search" around data_json (one JSON object, the page's data)
 * to path; the title goes into <title>. Used by orr_report_html and the search's report. */
int orr_report_html_page(const char *path, const char *kind, const char *title, const orr_buf *data_json,
                         orr_err *err);
/* Several jobs sharing one cluster (`orrery predict` with jobs:): each job alone on its GPUs and
 * all of them in one run. */
typedef struct orr_job_report {
    const char *name;
    const orr_workload *w;        /* the job's own workload (its ranks numbered 0..gpus-1) */
    const orr_report_info *info;
    const orr_result *alone;      /* the job alone on its GPUs of the shared topology */
    const orr_result *shared;     /* the job in the run of all jobs */
    const uint32_t *gpu_of;       /* global GPU of each of its ranks (w->world_size entries) */
} orr_job_report;

typedef struct orr_jobs_report {
    orr_net_kind backend;         /* analytic: the jobs do not interact */
    uint32_t cluster_gpus;
    const char *fabric;           /* e.g. "fat-tree, oversubscription 2" (NULL: not shown) */
    int64_t makespan_ps;          /* the shared run, until its last job finished */
    uint64_t events;              /* of the shared run */
    const orr_net_summary *net;   /* the shared run's fabric (present under --net flow) */
    size_t njobs;
    const orr_job_report *jobs;
} orr_jobs_report;

void orr_report_jobs_text(const orr_jobs_report *j, orr_buf *out);
void orr_report_jobs_json(const orr_jobs_report *j, orr_buf *out);
/* The network section of the text report (nothing when n->present is 0). */
void orr_report_net_text(const orr_net_summary *n, orr_buf *out);
/* The network member of the JSON report at indent 2, `\n  "network": {...},` with its comma
 * (null when n->present is 0). */
void orr_report_net_json(const orr_net_summary *n, orr_buf *out);

/* JSON string escaping into a buffer (used by every JSON writer). */
void orr_json_str(orr_buf *b, const char *s);
/* A JSON number: the shortest of %.15g/%.16g/%.17g that reads back as exactly v; null for NaN or
 * infinity (JSON has neither). */
void orr_json_num(orr_buf *b, double v);

struct orr_netsim_result;
struct orr_packet_config;
/* `orrery netsim`'s result as JSON (docs/netsim.md "JSON"): counts, FCT statistics, Wormhole's
 * counters and every finished flow. */
#define ORR_NETSIM_JSON_SCHEMA_VERSION 1
void orr_netsim_json(const struct orr_netsim_result *r, const struct orr_packet_config *cfg, orr_buf *out);
/* Exposed communication of all roles together, ps. */
int64_t orr_breakdown_comm_ps(const orr_breakdown *b);
/* "compute", "comm_tp", ... (the JSON key stem of each critical-path kind). */
const char *orr_cp_kind_name(orr_cp_kind k);

#endif
