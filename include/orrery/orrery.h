/*
 * orrery.h - the library's front door: spec -> workload -> estimate -> execute -> result, as
 * `orrery predict` runs it (and, later, the Python package).
 */
#ifndef ORRERY_ORRERY_H
#define ORRERY_ORRERY_H

#include "orrery/core.h"
#include "orrery/spec.h"
#include "orrery/workload.h"
#include "orrery/exec.h"
#include "orrery/report.h"

/* Workload generator for dense decoder-only transformers as the spec's framework (Megatron-LM,
 * TorchTitan, DeepSpeed) issues them: one training iteration per simulated rank. */
orr_workload *orr_gen_training(const orr_spec *s, orr_err *err);

typedef struct orr_prediction {
    orr_workload *w;
    orr_exec_result x;
    orr_result r;
    orr_report_info info;
    char title[256];
    orr_buf config_json;
} orr_prediction;

/* Runs the whole pipeline for a resolved spec. */
int orr_predict(const orr_spec *s, orr_prediction *p, orr_err *err);
/* The same run with only the headline numbers and memory in p->r (orr_result_headline): for
 * callers that rank many predictions (search, the fixes of an OOM job). */
int orr_predict_headline(const orr_spec *s, orr_prediction *p, orr_err *err);
void orr_prediction_free(orr_prediction *p);

/* Several jobs on one cluster (a spec with jobs:, docs/spec.md "jobs"): every job is run alone on
 * its GPUs of the shared topology, then all of them in one run over one network, where their flows
 * compete (under --net flow). Ranks keep their job's numbering in each job's workload and results;
 * the shared run places them with orr_workload_append. */
typedef struct orr_job_prediction {
    orr_workload *w;         /* the job's own workload (ranks 0..gpus-1 of the job) */
    orr_result alone;        /* the job alone on its GPUs */
    orr_result shared;       /* the job in the shared run (network summary in the run's, below) */
    orr_report_info info;
    char title[256];
    orr_buf config_json;
} orr_job_prediction;

typedef struct orr_jobs_prediction {
    size_t njobs;
    orr_job_prediction *jobs;
    orr_workload *w;         /* every job placed on the cluster: the shared run's workload */
    orr_exec_result x;       /* the shared run */
    orr_job_report *rep;     /* njobs entries, for report */
    orr_jobs_report report;  /* what orr_report_jobs_text/json print */
    char fabric[300];
} orr_jobs_prediction;

int orr_predict_jobs(const orr_spec *s, orr_jobs_prediction *p, orr_err *err);
void orr_jobs_prediction_free(orr_jobs_prediction *p);

/* The emulator's pipeline (emulate.h): collate the traces of eo->trace_dir, estimate, execute
 * with the analytic network, build the result. device_bytes: the GPU memory of the run (the
 * verdict's capacity is that minus gpu.runtime_reserved). info gets what the collator saw. */
struct orr_emu_opts;
struct orr_emu_info;
int orr_emulate_predict(const struct orr_emu_opts *eo, const orr_gpu *g, const orr_cluster *c, int64_t launch_ps,
                        uint64_t device_bytes, orr_prediction *p, struct orr_emu_info *info, orr_err *err);

#endif
