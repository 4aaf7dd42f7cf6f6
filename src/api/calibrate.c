/*
 * calibrate.c - `orrery calibrate`'s fits (calibrate.h, docs/calibrate.md): a profile of one GPU
 * and one node type from a user's measurements, with every row's residual before and after.
 *
 * Three fits, in this order, each on its own rows and each over at most two parameters:
 *   1. nccl-tests runs inside one node: nvlink_eff (the NVLink bandwidth NCCL achieves) and
 *      coll_base_us (the collective floor every collective pays);
 *   2. nccl-tests runs across nodes, with the first fit's values: net_eff and net_lat_us (the
 *      achieved network bandwidth and the latency of one inter-node step);
 *   3. measured step times, with the links as fitted: one compute scale on the GPU's kernel
 *      efficiencies (compute_keys below), written as the efficiencies it gives.
 * A fit minimises the mean |log(predicted / measured)| of its rows (robust to a stalled row, and
 * as fair to an 8-byte all-reduce as to an 8 GiB one). Two parameters are searched as a grid over
 * the latency with the best bandwidth for each point found by golden section, then a golden
 * section around the best grid point; one parameter by golden section alone. Times are predicted
 * by the same code as `orrery predict` (orr_comm_coll_ps, orr_predict), the candidate values going
 * in as a profile, through orr_spec_resolve_hardware like any other.
 */
#include "orrery/calibrate.h"
#include "orrery/comm.h"
#include "orrery/orrery.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The GPU fields a compute scale multiplies (the compute-bound kernels' efficiencies; cuDNN's attention
 * levels only where the GPU has them, so that --attention cudnn keeps its ratio to the others). */
static const char *const compute_keys[] = {"gemm_eff", "attn_fwd_eff", "attn_bwd_eff", "attn_cudnn_fwd_eff",
                                           "attn_cudnn_bwd_eff"};
#define NCOMPUTE_KEYS (sizeof compute_keys / sizeof compute_keys[0])

#define LAT_GRID 40             /* grid steps over a latency's range */
#define LAT_MAX_US 100.0        /* the largest latency searched, us */
#define EFF_MIN 0.02            /* the bandwidth efficiencies searched: [EFF_MIN, 1] */
#define SCALE_MIN 0.2           /* the smallest compute scale searched */

/* ---- One-dimensional search ---- */

typedef double (*objective_fn)(double x, void *ctx);

/* Golden-section search for the minimum of f on [lo, hi], down to a bracket of tol: x at the
 * smaller of the last two points; *fmin gets f there. */
static double golden(objective_fn f, void *ctx, double lo, double hi, double tol, double *fmin)
{
    const double r = 0.6180339887498949; /* (sqrt(5) - 1) / 2 */
    double a = lo, b = hi, c = b - r * (b - a), d = a + r * (b - a);
    double fc = f(c, ctx), fd = f(d, ctx);
    while (b - a > tol) {
        if (fc <= fd) {
            b = d, d = c, fd = fc;
            c = b - r * (b - a);
            fc = f(c, ctx);
        } else {
            a = c, c = d, fc = fd;
            d = a + r * (b - a);
            fd = f(d, ctx);
        }
    }
    *fmin = fc <= fd ? fc : fd;
    return fc <= fd ? c : d;
}

/* x rounded to 1/per (per 1e4: four decimals), as the nearest double to the decimal written. */
static double round_to(double x, double per) { return round(x * per) / per; }

/* ---- nccl-tests: link bandwidth and latency ---- */

typedef struct link_fit {
    orr_gpu gpu;
    orr_cluster c;              /* the candidate values */
    const orr_nccl_row **rows;
    size_t n;
    int inter;                  /* 0: nvlink_eff and coll_base_us; 1: net_eff and net_lat_us */
    double lat_us;              /* the latency of the current grid point */
} link_fit;

static double coll_us(const orr_gpu *g, const orr_cluster *c, const orr_nccl_row *r)
{
    orr_coll_desc d = {r->kind, r->bytes, r->ranks, r->nodes, r->ranks / r->nodes, ORR_ALGO_AUTO};
    return (double)orr_comm_coll_ps(g, c, &d, NULL) / ORR_PS_PER_US;
}

static void link_set(link_fit *f, double eff, double lat_us)
{
    int64_t lat_ps = llround(lat_us * ORR_PS_PER_US);
    if (f->inter) {
        f->c.net_eff = eff;
        f->c.net_lat_ps = lat_ps;
    } else {
        f->c.nvlink_eff = eff;
        f->c.coll_base_ps = lat_ps;
    }
}

/* Mean |log(predicted / measured)| of the fit's rows at bandwidth efficiency eff. */
static double link_error(double eff, void *ctx)
{
    link_fit *f = ctx;
    link_set(f, eff, f->lat_us);
    double sum = 0;
    for (size_t i = 0; i < f->n; i++) sum += fabs(log(coll_us(&f->gpu, &f->c, f->rows[i]) / f->rows[i]->time_us));
    return sum / (double)f->n;
}

/* The error at latency lat_us with the best efficiency for it (into *eff). */
static double link_best_eff(link_fit *f, double lat_us, double *eff)
{
    double e;
    f->lat_us = lat_us;
    *eff = golden(link_error, f, EFF_MIN, 1.0, 1e-5, &e);
    return e;
}

static double link_error_at_lat(double lat_us, void *ctx)
{
    double eff;
    return link_best_eff(ctx, lat_us, &eff);
}

/* Fits the two parameters of f, rounded to what the profile writes (four decimals, 0.01 us). */
static void link_search(link_fit *f, double *eff, double *lat_us)
{
    const double step = LAT_MAX_US / LAT_GRID;
    double best = INFINITY, at = 0, e;
    for (int i = 0; i <= LAT_GRID; i++) {
        double err = link_error_at_lat(i * step, f);
        if (err < best) best = err, at = i * step;
    }
    double lo = at > step ? at - step : 0, hi = at + step < LAT_MAX_US ? at + step : LAT_MAX_US;
    *lat_us = round_to(golden(link_error_at_lat, f, lo, hi, 1e-3, &e), 100);
    link_best_eff(f, *lat_us, eff);
    *eff = round_to(*eff, 1e4);
    link_set(f, *eff, *lat_us);
}

static void add_param(orr_calib_result *r, const char *key, const char *unit, double before, double after,
                      const char *rows)
{
    orr_calib_param *p = &r->params[r->nparams++];
    *p = (orr_calib_param){key, unit, before, after, rows};
}

/* Fits the rows of one kind (inside a node, or across nodes) into prof's cluster part. */
static void fit_links(const orr_spec *hw, const orr_nccl_rows *t, int inter, orr_hw_profile *prof,
                      orr_calib_result *out)
{
    link_fit f = {.gpu = hw->gpu, .c = hw->cluster, .inter = inter};
    orr_err e;
    orr_hw_profile_apply(prof, &f.gpu, &f.c, &e); /* the links as fitted so far (cannot fail: the same hw) */
    f.rows = orr_xmalloc((t->n ? t->n : 1) * sizeof *f.rows);
    for (size_t i = 0; i < t->n; i++)
        if ((t->v[i].nodes > 1) == inter) f.rows[f.n++] = &t->v[i];
    if (f.n) {
        double eff, lat, eff0 = inter ? f.c.net_eff : f.c.nvlink_eff;
        double lat0 = (double)(inter ? f.c.net_lat_ps : f.c.coll_base_ps) / ORR_PS_PER_US;
        link_search(&f, &eff, &lat);
        const char *rows = inter ? "nccl-tests across nodes" : "nccl-tests inside one node";
        add_param(out, inter ? "net_eff" : "nvlink_eff", "", eff0, eff, rows);
        add_param(out, inter ? "net_lat_us" : "coll_base_us", "us", lat0, lat, rows);
        prof->cluster.nvlink_eff = f.c.nvlink_eff;
        prof->cluster.coll_base_ps = f.c.coll_base_ps;
        prof->cluster.net_eff = f.c.net_eff;
        prof->cluster.net_lat_ps = f.c.net_lat_ps;
        orr_hw_profile_mark(prof, 0, inter ? "net_eff" : "nvlink_eff");
        orr_hw_profile_mark(prof, 0, inter ? "net_lat_us" : "coll_base_us");
    }
    free(f.rows);
}

/* ---- Step times: one compute scale ---- */

typedef struct step_fit {
    const orr_step_rows *rows;
    orr_hw_profile prof;        /* the candidate: the links as fitted, the compute keys scaled */
    orr_gpu base;               /* the efficiencies the scale multiplies */
    orr_err *err;
    int failed;
} step_fit;

static double *compute_field(orr_gpu *g, size_t k)
{
    double *f[NCOMPUTE_KEYS] = {&g->gemm_eff, &g->attn_fwd_eff, &g->attn_bwd_eff, &g->attn_cudnn_fwd_eff,
                                &g->attn_cudnn_bwd_eff};
    return f[k < NCOMPUTE_KEYS ? k : 0];
}

/* The predicted iteration time of row i with profile prof (NULL: the catalog's values). */
static int predict_step(const orr_step_row *row, const orr_hw_profile *prof, double *it_s, char *what, size_t cap,
                        orr_err *err)
{
    orr_spec s = row->spec;
    if (prof) s.profile = *prof;
    orr_prediction p;
    orr_err e;
    if (orr_spec_resolve(&s, &e) < 0 || orr_predict(&s, &p, &e) < 0)
        return orr_fail(err, "%s: %s", row->where, e.msg);
    *it_s = p.r.iteration_s;
    if (what)
        snprintf(what, cap, "%s %u GPUs tp%u pp%u dp%u cp%u mbs%u gbs%u", s.model.name, s.gpus, s.tp, s.pp,
                 s.dp, s.cp, s.mbs, s.gbs);
    orr_prediction_free(&p);
    return 0;
}

static void step_set(step_fit *f, double scale)
{
    for (size_t k = 0; k < NCOMPUTE_KEYS; k++)
        *compute_field(&f->prof.gpu, k) = round_to(*compute_field(&f->base, k) * scale, 1e4);
}

/* Mean |log(predicted / measured)| of the step times at compute scale exp(log_scale). */
static double step_error(double log_scale, void *ctx)
{
    step_fit *f = ctx;
    if (f->failed) return INFINITY;
    step_set(f, exp(log_scale));
    double sum = 0;
    for (size_t i = 0; i < f->rows->n; i++) {
        double it;
        if (predict_step(&f->rows->v[i], &f->prof, &it, NULL, 0, f->err)) {
            f->failed = 1;
            return INFINITY;
        }
        sum += fabs(log(it / f->rows->v[i].step_s));
    }
    return sum / (double)f->rows->n;
}

static int fit_compute(const orr_spec *hw, const orr_step_rows *t, orr_hw_profile *prof, orr_calib_result *out,
                       orr_err *err)
{
    step_fit f = {.rows = t, .prof = *prof, .base = hw->gpu, .err = err};
    double hi = INFINITY, e;
    for (size_t k = 0; k < NCOMPUTE_KEYS; k++) {
        double v = *compute_field(&f.base, k);
        if (!(v > 0)) continue; /* not measured on this GPU (cuDNN's attention): left out of the profile */
        orr_hw_profile_mark(&f.prof, 1, compute_keys[k]);
        if (1.0 / v < hi) hi = 1.0 / v; /* no efficiency above 1 */
    }
    double scale = round_to(exp(golden(step_error, &f, log(SCALE_MIN), log(hi), 1e-3, &e)), 1e4);
    if (f.failed) return -1;
    if (scale > hi) scale = hi;
    step_set(&f, scale);
    *prof = f.prof;
    add_param(out, "compute_scale", "", 1.0, scale, "measured step times");
    for (size_t k = 0; k < NCOMPUTE_KEYS; k++)
        if (*compute_field(&f.base, k) > 0)
            add_param(out, compute_keys[k], "", *compute_field(&f.base, k), *compute_field(&prof->gpu, k),
                      "measured step times (compute_scale x the catalog's)");
    return 0;
}

/* ---- The whole calibration ---- */

static orr_calib_residual *new_residual(orr_calib_result *r, size_t *cap)
{
    if (r->nres == *cap) orr_grow((void **)&r->res, cap, r->nres + 1, sizeof *r->res);
    orr_calib_residual *x = &r->res[r->nres++];
    memset(x, 0, sizeof *x);
    return x;
}

/* Every row's time with the catalog's values and with the profile as written. */
static int residuals(const orr_spec *hw, const orr_nccl_rows *nccl, const orr_step_rows *steps,
                     orr_calib_result *out, orr_err *err)
{
    size_t cap = 0;
    orr_gpu g = hw->gpu;
    orr_cluster c = hw->cluster;
    if (orr_hw_profile_apply(&out->profile, &g, &c, err)) return -1;
    for (size_t i = 0; nccl && i < nccl->n; i++) {
        const orr_nccl_row *r = &nccl->v[i];
        orr_calib_residual *x = new_residual(out, &cap);
        snprintf(x->where, sizeof x->where, "%s", r->where);
        snprintf(x->what, sizeof x->what, "%s %ux%u %llu B", orr_coll_kind_name(r->kind), r->ranks / r->nodes, r->nodes,
                 (unsigned long long)r->bytes);
        x->measured = r->time_us;
        x->before = coll_us(&hw->gpu, &hw->cluster, r);
        x->after = coll_us(&g, &c, r);
    }
    for (size_t i = 0; steps && i < steps->n; i++) {
        orr_calib_residual *x = new_residual(out, &cap);
        double before = 0, after = 0;
        snprintf(x->where, sizeof x->where, "%s", steps->v[i].where);
        if (predict_step(&steps->v[i], NULL, &before, x->what, sizeof x->what, err) ||
            predict_step(&steps->v[i], &out->profile, &after, NULL, 0, err))
            return -1;
        x->step = 1;
        x->measured = steps->v[i].step_s * 1e3;
        x->before = before * 1e3;
        x->after = after * 1e3;
    }
    return 0;
}

/* The measurements fit the hardware: no more ranks per node than it has, and step rows that
 * resolve (on the GPU and cluster of the profile, checked when it is applied). */
static int check_rows(const orr_spec *hw, const orr_nccl_rows *nccl, const orr_step_rows *steps, orr_err *err)
{
    for (size_t i = 0; nccl && i < nccl->n; i++) {
        const orr_nccl_row *r = &nccl->v[i];
        if (r->ranks / r->nodes > hw->cluster.gpus_per_node)
            return orr_fail(err, "%s: %u ranks per node, but cluster %s has %u GPUs per node (give --cluster or "
                                 "--gpus-per-node for the nodes measured)", r->where, r->ranks / r->nodes,
                            hw->cluster.name, hw->cluster.gpus_per_node);
    }
    for (size_t i = 0; steps && i < steps->n; i++) {
        if (steps->v[i].spec.profile.path[0] || steps->v[i].spec.profile.has_gpu)
            return orr_fail(err, "%s: a profile is given (--profile or profile:): calibrate fits one from the "
                                 "catalog's values; leave it out", steps->v[i].where);
        orr_spec s = steps->v[i].spec;
        orr_err e;
        if (s.njobs) return orr_fail(err, "%s: a spec with jobs: is not a run to calibrate on", steps->v[i].where);
        if (orr_spec_resolve(&s, &e)) return orr_fail(err, "%s: %s", steps->v[i].where, e.msg);
    }
    return 0;
}

int orr_calibrate(const orr_spec *hw, const orr_nccl_rows *nccl, const orr_step_rows *steps, orr_calib_result *out,
                  orr_err *err)
{
    memset(out, 0, sizeof *out);
    if ((!nccl || !nccl->n) && (!steps || !steps->n))
        return orr_fail(err, "calibrate: nothing to fit: give nccl-tests output (--nccl FILE) or measured step times "
                             "(--steps FILE.csv, --megatron-log FILE)");
    if (hw->profile.path[0] || hw->profile.has_gpu || hw->profile.has_cluster)
        return orr_fail(err, "calibrate: a profile is given (--profile or profile:): calibrate fits one from the "
                             "catalog's values; leave it out");
    if (check_rows(hw, nccl, steps, err)) return -1;
    orr_hw_profile prof;
    orr_err e;
    if (orr_hw_profile_init(&prof, hw->gpu.name, hw->cluster.name, &e))
        return orr_fail(err, "calibrate: a profile changes a catalog GPU and node type: %s", e.msg);
    orr_hw_profile_take_changes(&prof, &hw->gpu, &hw->cluster);
    if (nccl && nccl->n) {
        fit_links(hw, nccl, 0, &prof, out);
        fit_links(hw, nccl, 1, &prof, out);
    }
    if (steps && steps->n && fit_compute(hw, steps, &prof, out, err)) return -1;
    /* the residuals are of the profile as written and read back */
    orr_hw_profile_yaml(&prof, &out->yaml);
    if (orr_hw_profile_parse(&out->profile, "profile", out->yaml.s, out->yaml.n, err) ||
        residuals(hw, nccl, steps, out, err)) {
        orr_calib_result_free(out);
        return -1;
    }
    return 0;
}

void orr_calib_result_free(orr_calib_result *r)
{
    orr_buf_free(&r->yaml);
    free(r->res);
    memset(r, 0, sizeof *r);
}

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

/* Median |predicted / measured - 1| of the residuals of one kind, with the catalog's values
 * (after = 0) or the profile's. */
static double median_error(const orr_calib_result *r, int step, int after, size_t *n)
{
    double *e = orr_xmalloc((r->nres ? r->nres : 1) * sizeof *e);
    size_t k = 0;
    for (size_t i = 0; i < r->nres; i++)
        if (r->res[i].step == step) e[k++] = (after ? r->res[i].after : r->res[i].before) / r->res[i].measured - 1;
    qsort(e, k, sizeof *e, cmp_abs);
    double m = !k ? 0 : k % 2 ? fabs(e[k / 2]) : 0.5 * (fabs(e[k / 2 - 1]) + fabs(e[k / 2]));
    free(e);
    *n = k;
    return m;
}

static void report_rows(const orr_calib_result *r, int step, orr_buf *out)
{
    size_t n;
    double before = median_error(r, step, 0, &n), after = median_error(r, step, 1, &n);
    if (!n) return;
    const char *unit = step ? "ms" : "us";
    orr_buf_printf(out, "#\n# %s (times in %s; error: profile / measured - 1)\n", step ? "measured step times"
                                                                                        : "nccl-tests rows", unit);
    orr_buf_printf(out, "# %-36s %-44s %11s %11s %11s %8s\n", "where", "what", "measured", "catalog", "profile",
                   "error");
    for (size_t i = 0; i < r->nres; i++) {
        const orr_calib_residual *x = &r->res[i];
        if (x->step != step) continue;
        size_t len = strlen(x->where); /* a long path: its end, where the file name and line are */
        const char *where = len > 36 ? x->where + len - 33 : x->where;
        orr_buf_printf(out, "# %s%-*s %-44.44s %11.2f %11.2f %11.2f %+7.1f%%\n", len > 36 ? "..." : "",
                       len > 36 ? 33 : 36, where, x->what, x->measured,
                       x->before, x->after, 100 * (x->after / x->measured - 1));
    }
    orr_buf_printf(out, "# median |error|: catalog %.1f%%, profile %.1f%% over %zu rows\n", 100 * before, 100 * after,
                   n);
}

void orr_calibrate_report(const orr_calib_result *r, orr_buf *out)
{
    orr_buf_printf(out, "# orrery calibrate: a profile of GPU %s in node type %s (docs/calibrate.md)\n",
                   r->profile.gpu.name, r->profile.cluster.name);
    orr_buf_printf(out, "#\n# %-14s %12s %12s  %s\n", "parameter", "catalog", "fitted", "fitted on");
    for (size_t i = 0; i < r->nparams; i++) {
        const orr_calib_param *p = &r->params[i];
        orr_buf_printf(out, "# %-14s %12.4f %12.4f  %s%s%s\n", p->key, p->before, p->after, p->rows,
                       p->unit[0] ? ", " : "", p->unit);
    }
    report_rows(r, 0, out);
    report_rows(r, 1, out);
    orr_buf_puts(out, "#\n");
    orr_buf_printf(out, "%s", r->yaml.s ? r->yaml.s : "");
}
