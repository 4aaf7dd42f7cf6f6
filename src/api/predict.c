/*
 * predict.c - the pipeline behind `orrery predict`: spec -> workload (the training generator) ->
 * estimate (compute models fill op durations) -> execute (cluster executor on the analytic network
 * backend) -> result (breakdown, critical path, headline numbers).
 */
#include "orrery/orrery.h"
#include "orrery/estimate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void config_json(const orr_spec *s, orr_buf *b)
{
    orr_buf_puts(b, "{\"framework\": ");
    orr_json_str(b, orr_framework_name(s->framework));
    orr_buf_puts(b, ", \"model\": ");
    orr_json_str(b, s->model.name);
    orr_buf_puts(b, ", \"gpu\": ");
    orr_json_str(b, s->gpu.name);
    orr_buf_puts(b, ", \"cluster\": ");
    orr_json_str(b, s->cluster.name);
    if (s->profile.path[0]) { /* the calibration profile applied over both (docs/calibrate.md) */
        orr_buf_puts(b, ", \"profile\": ");
        orr_json_str(b, s->profile.path);
    }
    orr_buf_printf(b, ", \"gpus\": %u, \"gpus_per_node\": %u, \"tp\": %u, \"pp\": %u, \"dp\": %u, \"vpp\": %u, "
                      "\"sp\": %s, \"mbs\": %u, \"gbs\": %u, \"seq\": %u, \"recompute\": \"%s\", "
                      "\"dist_opt\": %s, \"precision\": \"%s\", \"overlap_grad_reduce\": %s, "
                      "\"overlap_param_gather\": %s, \"tp_comm_overlap\": %s, \"bucket_params\": %.17g, "
                      "\"launch_s\": %.17g, \"symmetry\": %s, \"network\": \"%s\", \"cp\": %u, \"fsdp\": %u, "
                      "\"zero\": %u, \"reshard_after_forward\": %s, \"compile\": %s, \"caching_allocator\": %s, "
                      "\"expandable_segments\": %s",
                   s->gpus, s->cluster.gpus_per_node, s->tp, s->pp, s->dp, s->vpp, s->sp ? "true" : "false", s->mbs,
                   s->gbs, s->seq, orr_recompute_name(s->recompute), s->dist_opt ? "true" : "false",
                   orr_dtype_name(s->precision), s->overlap_grad_reduce ? "true" : "false",
                   s->overlap_param_gather ? "true" : "false", s->tp_comm_overlap ? "true" : "false",
                   s->bucket_params, (double)s->launch_ps / 1e12, s->symmetry ? "true" : "false",
                   orr_net_kind_name(s->net), s->cp, s->fsdp, s->zero,
                   orr_spec_reshard_after_forward(s) ? "true" : "false",
                   s->compile ? "true" : "false", s->caching_allocator ? "true" : "false",
                   s->expandable_segments ? "true" : "false");
    if (s->recompute_modules) {
        char m[160];
        orr_recompute_modules_format(s->recompute_modules, m, sizeof m);
        orr_buf_printf(b, ", \"recompute_modules\": \"%s\"", m);
    }
    if (s->model.experts) orr_buf_printf(b, ", \"ep\": %u, \"etp\": %u, \"edp\": %u", s->ep, s->etp, s->edp);
    if (s->precision_aware_opt) {
        orr_buf_puts(b, ", \"use_precision_aware_optimizer\": true");
        for (int st = 0; st < ORR_OPT_STATES; st++)
            orr_buf_printf(b, ", \"%s\": \"%s\"", orr_opt_state_key((orr_opt_state)st), orr_dtype_name(s->opt_dtype[st]));
    }
    if (s->precision == ORR_FP8) orr_buf_printf(b, ", \"fp8_recipe\": \"%s\"", orr_fp8_recipe_name(s->fp8_recipe));
    if (s->framework == ORR_FW_MEGATRON_FSDP)
        orr_buf_printf(b, ", \"data_parallel_sharding_strategy\": \"%s\"", orr_fsdp_strategy_name(s->fsdp_strategy));
    if (s->net == ORR_NET_FLOW || s->net == ORR_NET_PACKET)
        orr_buf_printf(b, ", \"topology\": \"%s\", \"oversub\": %.17g, \"pxn\": %s", orr_topo_kind_name(s->topo.kind),
                       s->topo.oversub, s->pxn ? "true" : "false");
    if (s->net == ORR_NET_PACKET)
        orr_buf_printf(b, ", \"cc\": \"%s\", \"packet_payload_bytes\": %u, \"accel\": %s, \"ss_theta\": %.17g, "
                          "\"ss_window\": %u, \"packet_seed\": %llu",
                       orr_cc_key(s->cc), s->packet_payload_bytes, s->no_accel ? "false" : "true",
                       s->ss_theta > 0 ? s->ss_theta : ORR_SS_THETA_DEFAULT,
                       s->ss_window ? s->ss_window : ORR_SS_WINDOW_DEFAULT, (unsigned long long)s->packet_seed);
    orr_buf_puts(b, "}");
}

/* The title, the configuration echo and the report info of a resolved single-job spec. */
static void describe(const orr_spec *s, char *title, size_t cap, orr_buf *config, orr_report_info *info)
{
    char par[96];
    int n = snprintf(par, sizeof par, "TP%u PP%u DP%u", s->tp, s->pp, s->dp);
    if (s->vpp > 1 && n > 0 && (size_t)n < sizeof par) n += snprintf(par + n, sizeof par - (size_t)n, " VPP%u", s->vpp);
    if (s->cp > 1 && n > 0 && (size_t)n < sizeof par) n += snprintf(par + n, sizeof par - (size_t)n, " CP%u", s->cp);
    if (s->fsdp && n > 0 && (size_t)n < sizeof par) n += snprintf(par + n, sizeof par - (size_t)n, " FSDP%u", s->fsdp);
    if (s->zero && n > 0 && (size_t)n < sizeof par) n += snprintf(par + n, sizeof par - (size_t)n, " ZeRO-%u", s->zero);
    if (s->model.experts && n > 0 && (size_t)n < sizeof par) /* the expert layout (etp may be the default) */
        snprintf(par + n, sizeof par - (size_t)n, orr_fw_fsdp2(s->framework) ? " EP%u" : " EP%u ETP%u", s->ep, s->etp);
    char prec[24];
    snprintf(prec, sizeof prec, "%s%s%s", orr_dtype_name(s->precision), s->precision == ORR_FP8 ? " " : "",
             s->precision == ORR_FP8 ? orr_fp8_recipe_name(s->fp8_recipe) : "");
    snprintf(title, cap, "%s on %u x %s (%s: %s, mbs %u, gbs %u, seq %u, %s)", s->model.name, s->gpus,
             s->gpu.name, orr_framework_name(s->framework), par, s->mbs, s->gbs, s->seq, prec);
    config_json(s, config);
    info->title = title;
    info->gpu_name = s->gpu.name;
    info->peak_flops_per_gpu = s->gpu.peak_flops[s->precision];
    info->config_json = config->s;
    info->device_bytes = s->mem_capacity_bytes ? s->mem_capacity_bytes : s->gpu.hbm_bytes;
    info->runtime_reserved_bytes = s->gpu.runtime_reserved_bytes;
    info->caching_allocator = s->caching_allocator;
}

/* Runs w (one job, or jobs already placed on the cluster of s) over the network settings of s;
 * traced: the run is the one --trace (or --html) draws, so it keeps the link tracks too. */
static int run_placed(const orr_spec *s, const orr_workload *w, int traced, orr_exec_result *x, orr_err *err)
{
    orr_net_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gpus = s->gpus;
    cfg.topo = s->topo;
    cfg.pxn = s->pxn;
    cfg.cc = s->cc;
    cfg.packet_payload_bytes = s->packet_payload_bytes;
    cfg.no_accel = s->no_accel;
    cfg.no_memo = s->no_memo;
    cfg.memo_path = s->memo_path[0] ? s->memo_path : NULL;
    if (cfg.memo_path && s->net != ORR_NET_PACKET)
        return orr_fail(err, "--memo %s: the memo is the packet backend's; add --net packet", s->memo_path);
    cfg.ss_theta = s->ss_theta;
    cfg.ss_window = s->ss_window;
    cfg.seed = s->packet_seed;
    int caching = !s->caching_allocator ? 0 : s->expandable_segments ? ORR_MEM_EXPANDABLE : ORR_MEM_CACHING;
    orr_exec_opts opts = {.net = s->net, .launch_ps = s->launch_ps, .launch_queue_depth = ORR_LAUNCH_QUEUE_DEPTH,
                          .net_cfg = &cfg, .mem_capacity_bytes = orr_spec_alloc_capacity(s), .mem_caching = caching,
                          .variability = s->variability, .variability_seed = s->variability_seed,
                          .link_tracks = traced && (s->trace_path[0] || s->html_path[0]) ? ORR_LINK_TRACKS_DEFAULT : 0,
                          .progress = s->progress};
    /* orr_execute builds the backend and hands it to the executor, which only drives it (and
     * builds it again without rotated servers where they were not exact: src/net/images.c). */
    return orr_execute(w, &s->gpu, &s->cluster, &opts, x, err);
}

static int predict(const orr_spec *s_in, int full, orr_prediction *p, orr_err *err)
{
    memset(p, 0, sizeof *p);
    const orr_spec *s = s_in;
    p->w = orr_gen_training(s, err);
    if (!p->w) return -1;
    /* A topology backend replays a collapsed rank's traffic on the GPUs it stands for only where
     * the generator describes which (orr_sym; not for every expert layout: gen.c describe_symmetry);
     * elsewhere every GPU is simulated, as with --no-symmetry (the echoed config says so). */
    orr_spec local;
    if (p->w->sym.nimages <= 1 && p->w->nranks < p->w->world_size && (orr_net_kind_caps(s->net) & ORR_NET_CAP_LINKS)) {
        local = *s_in; /* read only, and nothing of p points into it (describe below) */
        local.symmetry = 0;
        s = &local;
        orr_workload_free(p->w);
        orr_err e;
        p->w = orr_gen_training(s, &e);
        if (!p->w)
            return orr_fail(err, "--net %s: this job's symmetry cannot be described (its expert layout does not "
                                 "split into the digits of its other groups), so every GPU would be simulated: %s; "
                                 "use --net analytic", orr_net_kind_name(s->net), e.msg);
    }
    orr_estimate_workload(p->w, &s->gpu);
    if (run_placed(s, p->w, 1, &p->x, err) < 0) {
        orr_prediction_free(p);
        return -1;
    }
    describe(s, p->title, sizeof p->title, &p->config_json, &p->info);
    p->info.gpu_name = s_in->gpu.name; /* the caller's, which outlives p (s may be local) */
    int rc = full ? orr_result_build(&p->r, p->w, &p->x, &p->info, err)
                  : orr_result_headline(&p->r, p->w, &p->x, &p->info, err);
    if (rc < 0) {
        orr_prediction_free(p);
        return -1;
    }
    return 0;
}

int orr_predict(const orr_spec *s, orr_prediction *p, orr_err *err) { return predict(s, 1, p, err); }

int orr_predict_headline(const orr_spec *s, orr_prediction *p, orr_err *err) { return predict(s, 0, p, err); }

void orr_prediction_free(orr_prediction *p)
{
    orr_result_free(&p->r);
    orr_exec_result_free(&p->x);
    orr_workload_free(p->w);
    orr_buf_free(&p->config_json);
    memset(p, 0, sizeof *p);
}

/* ---- Several jobs on one cluster (a spec with jobs:) ---- */

/* Job j's workload on its GPUs of the cluster (alone: only it). */
static orr_workload *placed(const orr_spec *s, const orr_workload *const *jw, size_t first, size_t count,
                            int64_t *rank0, orr_err *err)
{
    orr_workload *w = orr_workload_new(s->gpus, s->cluster.gpus_per_node);
    for (size_t i = first; i < first + count; i++) {
        int64_t r0 = orr_workload_append(w, jw[i], s->jobs[i].gpu_of, count > 1 ? s->jobs[i].name : "", err);
        if (r0 < 0) {
            orr_workload_free(w);
            return NULL;
        }
        if (rank0) rank0[i] = r0;
    }
    if (orr_workload_finalize(w, err) < 0) {
        orr_workload_free(w);
        return NULL;
    }
    return w;
}

/* Builds job j's result from its ranks [r0, r0 + n) of the shared run x. Dependencies there point at
 * shared-run rank indices; they are moved to the job's own numbering for the critical path and
 * back afterwards (no job depends on another's ops: nothing crosses jobs but the network). */
static int shared_result(orr_jobs_prediction *p, size_t j, int64_t r0, orr_err *err)
{
    orr_job_prediction *jp = &p->jobs[j];
    size_t n = jp->w->nranks;
    orr_exec_result v;
    memset(&v, 0, sizeof v);
    v.nranks = n;
    v.ranks = orr_xmalloc((n ? n : 1) * sizeof *v.ranks);
    v.events = p->x.events;
    for (size_t r = 0; r < n; r++) {
        v.ranks[r] = p->x.ranks[(size_t)r0 + r];
        for (size_t i = 0; i < jp->w->ranks[r].nops; i++)
            if (v.ranks[r].t[i].dep_kind != ORR_DEP_NONE) v.ranks[r].t[i].dep_rank -= (uint32_t)r0;
        /* the makespan and its last op as orr_execute picks them */
        if (r == 0 || v.ranks[r].end_ps > v.makespan_ps) {
            v.makespan_ps = v.ranks[r].end_ps;
            v.last_rank = (uint32_t)r;
            v.last_op = 0;
            for (uint32_t i = 0; i < jp->w->ranks[r].nops; i++)
                if (v.ranks[r].t[i].end_ps >= v.ranks[r].end_ps) v.last_op = i;
        }
    }
    int rc = orr_result_build(&jp->shared, jp->w, &v, &jp->info, err);
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < jp->w->ranks[r].nops; i++)
            if (v.ranks[r].t[i].dep_kind != ORR_DEP_NONE) v.ranks[r].t[i].dep_rank += (uint32_t)r0;
    free(v.ranks);
    return rc;
}

int orr_predict_jobs(const orr_spec *s, orr_jobs_prediction *p, orr_err *err)
{
    memset(p, 0, sizeof *p);
    if (!s->njobs) return orr_fail(err, "predict: the spec has no jobs: list");
    p->njobs = s->njobs;
    p->jobs = orr_xcalloc(s->njobs, sizeof *p->jobs);
    p->rep = orr_xcalloc(s->njobs, sizeof *p->rep);
    orr_workload **jw = orr_xcalloc(s->njobs, sizeof *jw);
    int64_t *rank0 = orr_xcalloc(s->njobs, sizeof *rank0);
    int rc = 0;
    for (size_t i = 0; i < s->njobs && rc == 0; i++) {
        orr_job_prediction *jp = &p->jobs[i];
        const orr_spec *js = &s->jobs[i].s;
        orr_err e;
        jp->w = jw[i] = orr_gen_training(js, &e);
        if (!jp->w) {
            rc = orr_fail(err, "jobs[%zu] (\"%s\"): %s", i, s->jobs[i].name, e.msg);
            break;
        }
        orr_estimate_workload(jp->w, &js->gpu);
        describe(js, jp->title, sizeof jp->title, &jp->config_json, &jp->info);
        /* alone: only this job on its GPUs of the same topology */
        orr_workload *a = placed(s, (const orr_workload *const *)jw, i, 1, NULL, err);
        orr_exec_result xa;
        if (!a || run_placed(s, a, 0, &xa, err) < 0) {
            orr_workload_free(a);
            rc = -1;
            break;
        }
        rc = orr_result_build(&jp->alone, jp->w, &xa, &jp->info, err);
        orr_exec_result_free(&xa);
        orr_workload_free(a);
    }
    if (rc == 0) {
        p->w = placed(s, (const orr_workload *const *)jw, 0, s->njobs, rank0, err);
        if (!p->w || run_placed(s, p->w, 1, &p->x, err) < 0) rc = -1;
    }
    for (size_t i = 0; i < s->njobs && rc == 0; i++) rc = shared_result(p, i, rank0[i], err);
    free(rank0);
    free(jw);
    if (rc) {
        orr_jobs_prediction_free(p);
        return -1;
    }
    for (size_t i = 0; i < s->njobs; i++)
        p->rep[i] = (orr_job_report){.name = s->jobs[i].name, .w = p->jobs[i].w, .info = &p->jobs[i].info,
                                     .alone = &p->jobs[i].alone, .shared = &p->jobs[i].shared,
                                     .gpu_of = s->jobs[i].gpu_of};
    p->report = (orr_jobs_report){.backend = s->net, .cluster_gpus = s->gpus, .makespan_ps = p->x.makespan_ps,
                                  .events = p->x.events, .net = p->x.net.present ? &p->x.net : NULL,
                                  .njobs = s->njobs, .jobs = p->rep};
    if (s->net != ORR_NET_ANALYTIC) {
        if (s->topo.kind == ORR_TOPO_HPCC)
            snprintf(p->fabric, sizeof p->fabric, "topology file %s", s->topo.path);
        else
            snprintf(p->fabric, sizeof p->fabric, "%s, oversubscription %g%s", orr_topo_kind_name(s->topo.kind),
                     s->topo.oversub, s->pxn ? ", PXN" : "");
        p->report.fabric = p->fabric;
    }
    return 0;
}

void orr_jobs_prediction_free(orr_jobs_prediction *p)
{
    for (size_t i = 0; i < p->njobs && p->jobs; i++) {
        orr_result_free(&p->jobs[i].alone);
        orr_result_free(&p->jobs[i].shared);
        orr_workload_free(p->jobs[i].w);
        orr_buf_free(&p->jobs[i].config_json);
    }
    free(p->jobs);
    free(p->rep);
    orr_exec_result_free(&p->x);
    orr_workload_free(p->w);
    memset(p, 0, sizeof *p);
}
