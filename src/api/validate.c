/*
 * validate.c - predicting the published Megatron-LM rows of data/validation (validate.h).
 *
 * Each row's model shape, parallel degrees, GPU count and batch come from the csv. Time becomes
 * TFLOP/s per GPU with the FLOP formula of the source:
 *   H100 rows: Megatron-Core's num_floating_point_operations, 72 B s L h^2 (1 + s/6h + V/12Lh)
 *   Selene rows: Narayanan et al. 2021, 96 B s L h^2 (1 + s/6h + V/16Lh), which counts the full
 *   activation recomputation those runs used.
 */
#include "orrery/validate.h"
#include "orrery/csv.h"
#include "orrery/orrery.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct set_def {
    const char *file;
    const char *title;
    const char *convention;
    const char *assumptions;
    const char *gpu, *cluster;
    double flops_factor, vocab_div; /* 72 and 12, or 96 and 16 */
} set_def;

static const set_def sets[ORR_VALID_SET_COUNT] = {
    {"megatron_lm_h100_weak_scaling.csv", "Megatron-Core weak scaling on H100 (r0.8.0, seq 4096)",
     "Megatron-Core num_floating_point_operations: 72 B s L h^2 (1 + s/6h + V/12Lh)",
     "micro-batch 4 without pipeline parallelism and 1 with it (NVIDIA's NeMo GPT-3 performance recipes); "
     "SP when TP > 1; distributed optimizer with overlapped grad reduce-scatter and param "
     "all-gather; TP comm overlap; no recompute; no virtual stages; untied embeddings (the table's parameter counts); "
     "bf16 (fp32 grad reduction)",
     "H100-SXM", "dgx-h100", 72.0, 12.0},
    {"megatron_lm_a100_selene.csv", "Megatron-LM on A100 Selene (April 2021, seq 2048)",
     "Narayanan et al. 2021: 96 B s L h^2 (1 + s/6h + V/16Lh), counts full recompute",
     "micro-batch 1; full recompute; fp16; unfused attention; no SP; no distributed optimizer; "
     "no virtual stages",
     "A100-SXM4-80GB", "dgx-a100", 96.0, 16.0},
};

static void gpt_model(orr_model *m, const char *name, const orr_csv *t, int r, const char *layers_col, int tied)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->layers = (uint32_t)orr_csv_num(t, r, layers_col);
    m->hidden = (uint32_t)orr_csv_num(t, r, "hidden");
    m->heads = m->kv_heads = (uint32_t)orr_csv_num(t, r, "heads");
    m->head_dim = m->heads ? m->hidden / m->heads : 0;
    m->ffn = 4 * m->hidden;
    m->vocab = (uint32_t)orr_csv_num(t, r, "vocab");
    m->seq = (uint32_t)orr_csv_num(t, r, "seq_len");
    m->tied_embeddings = tied;
    m->bias = 1;
}

/* The spec of row r: shape and degrees from the csv, the rest as the set assumes. */
static int row_spec(orr_valid_set set, const orr_csv *t, int r, orr_spec *s, orr_err *err)
{
    const set_def *d = &sets[set];
    orr_spec_init(s);
    s->framework = ORR_FW_MEGATRON; /* both sets are Megatron-LM's own measurements */
    s->framework_set = 1;
    gpt_model(&s->model, orr_csv_get(t, r, "model"), t, r, "num_layers", set != ORR_VALID_MEGATRON_H100);
    if (orr_catalog_gpu(d->gpu, &s->gpu, err) < 0 || orr_catalog_cluster(d->cluster, &s->cluster, err) < 0)
        return -1;
    s->tp = (uint32_t)orr_csv_num(t, r, "tp");
    s->pp = (uint32_t)orr_csv_num(t, r, "pp");
    s->dp = (uint32_t)orr_csv_num(t, r, "dp");
    s->gpus = (uint32_t)orr_csv_num(t, r, "gpus");
    s->gbs = (uint32_t)orr_csv_num(t, r, "global_batch_seqs");
    s->mbs = 1;
    s->seq = s->model.seq;
    if (set == ORR_VALID_MEGATRON_H100) {
        /* The table does not state the micro-batch. NVIDIA's own performance recipes for these models
         * (NeMo-Framework-Launcher conf/training/gpt3/{5b,20b}_bf16_performance.yaml: PP 1,
         * micro_batch_size 4; 175b_performance.yaml: PP 8, micro_batch_size 1) use 4 without pipeline
         * parallelism and 1 with it; docs/models.md section 6 says why 1 cannot be right for PP 1. */
        if (s->pp == 1) {
            s->mbs = 4;
            if (s->dp == 0 || s->gbs % (s->dp * s->mbs) != 0)
                return orr_fail(err, "%s row %d (%s): global_batch_seqs %u is not a multiple of dp x 4 (the "
                                "micro-batch assumed without pipeline parallelism)", t->path, r, s->model.name, s->gbs);
        }
        s->sp = s->tp > 1;
        s->dist_opt = 1;
        s->tp_comm_overlap = 1;
        s->precision = ORR_BF16;
    } else {
        s->recompute = ORR_RECOMPUTE_FULL;
        s->precision = ORR_FP16;
        s->attention = ORR_ATTN_UNFUSED;
    }
    if (orr_spec_resolve(s, err) < 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return orr_fail(err, "%s row %d (%s): %s", t->path, r, s->model.name, msg);
    }
    return 0;
}

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

int orr_validate(orr_valid_set set, const char *dir, orr_valid_table *out, orr_err *err)
{
    memset(out, 0, sizeof *out);
    if ((unsigned)set >= ORR_VALID_SET_COUNT) return orr_fail(err, "validate: unknown set %d", (int)set);
    const set_def *d = &sets[set];
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, d->file);
    orr_csv t;
    if (orr_csv_load(&t, path, err) < 0) return -1;
    out->title = d->title;
    out->convention = d->convention;
    out->assumptions = d->assumptions;
    out->rows = orr_xcalloc((size_t)t.nrows, sizeof *out->rows);
    int rc = 0;
    for (int r = 1; r < t.nrows && rc == 0; r++) {
        if (set == ORR_VALID_SELENE_A100 && strcmp(orr_csv_get(&t, r, "table_version"), "April-2021") != 0) continue;
        orr_spec s;
        orr_prediction p;
        if (row_spec(set, &t, r, &s, err) < 0 || orr_predict(&s, &p, err) < 0) {
            rc = -1;
            break;
        }
        orr_valid_row *row = &out->rows[out->n++];
        snprintf(row->model, sizeof row->model, "%s", s.model.name);
        row->tp = s.tp;
        row->pp = s.pp;
        row->dp = s.dp;
        row->gpus = s.gpus;
        row->gbs = s.gbs;
        row->mbs = s.mbs;
        row->iteration_s = p.r.iteration_s;
        row->peak_gib = (double)p.r.mem.peak_reserved_bytes / (1024.0 * 1024 * 1024);
        row->oom = p.r.mem.oom;
        double B = s.gbs, sq = s.seq, L = s.model.layers, h = s.model.hidden, V = s.model.vocab;
        double flops = d->flops_factor * B * sq * L * h * h * (1 + sq / (6 * h) + V / (d->vocab_div * L * h));
        row->predicted_tflops = flops / row->iteration_s / s.gpus / 1e12;
        row->published_tflops = orr_csv_num(&t, r, "tflops_per_gpu");
        row->error = (row->predicted_tflops - row->published_tflops) / row->published_tflops;
        orr_prediction_free(&p);
    }
    orr_csv_free(&t);
    if (rc < 0) {
        orr_valid_table_free(out);
        return -1;
    }
    double *e = orr_xmalloc((out->n ? out->n : 1) * sizeof *e);
    for (size_t i = 0; i < out->n; i++) e[i] = out->rows[i].error;
    qsort(e, out->n, sizeof *e, cmp_abs);
    if (out->n) out->median_abs_error = out->n % 2 ? fabs(e[out->n / 2]) : 0.5 * (fabs(e[out->n / 2 - 1]) + fabs(e[out->n / 2]));
    free(e);
    return 0;
}

void orr_valid_table_free(orr_valid_table *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}

void orr_valid_table_print(const orr_valid_table *t, orr_buf *out)
{
    orr_buf_printf(out, "%s\n  TFLOP/s per GPU by %s\n  assumed for every row: %s\n", t->title, t->convention,
                   t->assumptions);
    orr_buf_printf(out, "  %-10s %4s %4s %4s %6s %6s %4s %10s %10s %8s %11s %10s\n", "model", "tp", "pp", "dp", "gpus",
                   "gbs", "mbs", "published", "predicted", "error", "iteration", "peak mem");
    for (size_t i = 0; i < t->n; i++) {
        const orr_valid_row *r = &t->rows[i];
        orr_buf_printf(out, "  %-10s %4u %4u %4u %6u %6u %4u %10.1f %10.1f %+7.1f%% %9.3f s %6.1f GiB%s\n", r->model, r->tp,
                       r->pp, r->dp, r->gpus, r->gbs, r->mbs, r->published_tflops, r->predicted_tflops, 100 * r->error,
                       r->iteration_s, r->peak_gib, r->oom ? " OOM" : "");
    }
    orr_buf_printf(out, "  median |error| %.1f%% over %zu rows\n", 100 * t->median_abs_error, t->n);
}
