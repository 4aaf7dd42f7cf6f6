/*
 * Validation of `orrery predict` against published Megatron-LM and NeMo measurements:
 *   fitted tables, fitted on every other row and checked on the rest (docs/models.md section 6:
 *   gemm_eff of GA100 and GH100, by the smallest mean |error| over the fitting rows):
 *   - data/validation/megatron_lm_h100_weak_scaling.csv (Megatron-Core r0.8.0, H100, seq 4096):
 *     every row within +-15% TFLOP/s per GPU, fitting rows' median within 7% (5.9% today), held-out
 *     rows' within 8% (5.7% today, 7.6% before GEMMs beside NCCL slowed by the measured 0.22: two of
 *     the four are PP-1 rows, +7..+11%);
 *   - the April-2021 A100 Selene rows of megatron_lm_a100_selene.csv: each within 15%, both medians
 *     within 5% (2.4% and 1.5% today);
 *   - GPT-3 175B on 1,024 A100: within +-10% of the measured ~32 s per iteration;
 *   - both gemm_eff fits re-run on a 0.01 grid around data/gpus.yaml's values;
 *   held-out sources, never used for fitting (issue 18: the number that matters), reported row by
 *   row and held to their current medians so that a regression fails:
 *   - NeMo 24.07's FP8 pre-training rows (tokens/s per GPU), median within 4.5% (2.9% today, 3.7%
 *     before selective recompute re-ran the fused attention core as Megatron's core_attn does, 5.2%
 *     before Megatron's overlap_p2p_comm of the interleaved schedule; issue 18 asks 5%);
 *   - Megatron-LM's Llama 3 FP8 example (3 rows, June 2025), median within 4% (2.4% today, with
 *     cuDNN's fused attention at its measured rate; 12.0% with FlashAttention-2's level, which NeMo
 *     24.07 and Megatron-Core r0.8.0 rows of mid-2024 still fit: docs/models.md "Attention kernels");
 *   - Megatron-LM's 2020 DGX A100 scaling cases (iteration time), median within 5% (4.2% today, 7.8%
 *     before the 2020 gradient all-reduce and variability; TP cost is still under-priced: +6, +10,
 *     +16% at TP 2, 4, 8 on one node, as issue 18 reports), and their weak-scaling slope;
 *   - Megatron-Bridge's DGX-H100 performance summaries (NeMo containers 25.09-26.06), the 13 dense
 *     pre-training rows (Llama 3 8B on Megatron-FSDP, 70B, 3.1 405B, FP8 current scaling, cuDNN's
 *     attention), median within 4% (2.8% today, 2.0% before the measured NCCL GEMM slowdown; 405B
 *     +4..+15%; with FlashAttention-2's level 8B and 70B were -11..-19%); its MoE, Nemotron 3 and fine-tuning rows are left out with their reasons;
 *   - NVIDIA's DGX Cloud benchmarking recipes (NeMo 24.09, 60 rows, 8-2,304 H100), median within 5%
 *     (4.7% today), each row within 20%; their weak-scaling slopes and FP8/BF16 speed-ups printed;
 *   No row that ran may be predicted out of memory (the worst error: it makes a user throw away a
 *   configuration that works).
 * The rows are predicted by orr_validate (src/api/validate.c, which lists what is assumed for every
 * row of each source); this test holds them to the tolerances and prints each row's error.
 */
#include "check.h"
#include "orrery/orrery.h"
#include "orrery/validate.h"

#include <math.h>
#include <string.h>

/* want_rows: rows that must be predicted (none may drop out); row_tol: each row's bound (0: none);
 * fit_tol, heldout_tol: the bounds on the medians of the rows used for fitting and of the held-out
 * rows (a set fitted on every other row has both). */
static void check_set(orr_valid_set set, size_t want_rows, double row_tol, double fit_tol, double heldout_tol)
{
    orr_valid_table t;
    orr_err err = {{0}};
    if (orr_validate(set, ORRERY_VALIDATION_DIR, &t, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    orr_buf b = {0};
    orr_valid_table_print(&t, &b);
    fputs(b.s, stdout);
    orr_buf_free(&b);
    CHECK_EQ_I64(t.n, want_rows);
    size_t false_oom = 0;
    for (size_t i = 0; i < t.n; i++) {
        const orr_valid_row *r = &t.rows[i];
        if (row_tol > 0)
            CHECK_MSG(fabs(r->error) <= row_tol, "%s: predicted %.1f vs published %.1f %s (%+.1f%%)", r->model,
                      r->predicted, r->published, t.unit, 100 * r->error);
        /* The source ran it, so a predicted OOM is the worst error: it would make a user throw the
         * configuration away. */
        false_oom += r->oom != 0;
        CHECK_MSG(!r->oom, "%s on %u GPUs: predicted out of memory (%.1f GiB), but it ran", r->model, r->gpus,
                  r->peak_gib);
    }
    printf("  tolerance:");
    if (t.n_fit) printf(" rows used for fitting: median %.0f%%;", 100 * fit_tol);
    if (t.n_heldout) printf(" held-out rows: median %.0f%%;", 100 * heldout_tol);
    if (row_tol > 0) printf(" each row %.0f%%;", 100 * row_tol);
    printf(" predicted OOM though it ran: %zu (none allowed)\n\n", false_oom);
    if (t.n_fit)
        CHECK_MSG(t.median_fit <= fit_tol, "median |error| %.1f%% over the fitted rows, bound %.0f%%", 100 * t.median_fit,
                  100 * fit_tol);
    if (t.n_heldout)
        CHECK_MSG(t.median_heldout <= heldout_tol, "median |error| %.1f%% over the held-out rows, bound %.0f%%",
                  100 * t.median_heldout, 100 * heldout_tol);
    orr_valid_table_free(&t);
}

/* The gemm_eff fits re-run around their values (issue 26: a constant in data/ that the fit would no
 * longer give fails). Each die's gemm_eff is fitted on every other row of its table (the rows marked
 * "fitting"), by the smallest mean |error| over those rows on a 0.01 grid (docs/models.md section 6;
 * GH100's attention and memory constants were fitted with all nine rows before the split and are
 * kept), so the catalog's value must beat its two grid neighbours. */
static void gemm_eff_fit(const char *die, const char *gpu, orr_valid_set set)
{
    orr_err err = {{0}};
    orr_gpu g;
    if (orr_catalog_gpu(gpu, &g, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    double mean[3] = {0};
    int allowed[3] = {1, 1, 1};
    for (int i = 0; i < 3; i++) {
        orr_valid_table t;
        double eff = g.gemm_eff + 0.01 * (i - 1);
        /* GH100: the fit is bounded by this project's GEMM measurements on an H100 (a value whose
         * median error over them exceeds 3% either way is not a candidate; test_valid_kernels) */
        if (strcmp(die, "GH100") == 0) {
            orr_valid_measured m;
            if (orr_validate_measured(ORRERY_VALIDATION_DIR, eff, &m, &err) < 0) {
                CHECK_MSG(0, "%s", err.msg);
                return;
            }
            allowed[i] = fabs(m.gemm_median_signed) <= 0.03;
        }
        if (orr_validate_gemm_eff(set, ORRERY_VALIDATION_DIR, eff, &t, &err) < 0) {
            CHECK_MSG(0, "%s", err.msg);
            return;
        }
        for (size_t r = 0; r < t.n; r++)
            if (t.rows[r].fitted) mean[i] += fabs(t.rows[r].error) / (double)t.n_fit;
        orr_valid_table_free(&t);
    }
    printf("%s gemm_eff fit: mean |error| over the fitting rows %.2f%% at %.2f%s, %.2f%% at the catalog's %.2f, "
           "%.2f%% at %.2f%s\n", die, 100 * mean[0], g.gemm_eff - 0.01, allowed[0] ? "" : " (outside the kernel bound)",
           100 * mean[1], g.gemm_eff, 100 * mean[2], g.gemm_eff + 0.01, allowed[2] ? "" : " (outside the kernel bound)");
    CHECK_MSG(allowed[1], "%s gemm_eff %.2f is outside what the GEMM measurements allow", die, g.gemm_eff);
    CHECK_MSG((!allowed[0] || mean[1] <= mean[0]) && (!allowed[2] || mean[1] <= mean[2]),
              "the fit no longer gives %s gemm_eff %.2f (data/gpus.yaml): re-run it (docs/models.md section 6)", die,
              g.gemm_eff);
}

/* GPT-3 175B on 1,024 A100 (examples/gpt3_175b_1024_a100.yaml): ~32 s per iteration measured. */
static void gpt3_175b_example(void)
{
    orr_spec s;
    orr_err err = {{0}};
    orr_spec_init(&s);
    if (orr_spec_load_file(&s, ORRERY_SOURCE_DIR "/examples/gpt3_175b_1024_a100.yaml", &err) < 0 ||
        orr_spec_resolve(&s, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    orr_prediction p;
    if (orr_predict(&s, &p, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    double it = p.r.iteration_s, e = (it - 32.0) / 32.0;
    orr_prediction_free(&p);
    printf("GPT-3 175B on 1024 A100 (TP8 PP16 DP8, gbs 1536): predicted %.2f s/iteration, measured ~32 s, "
           "error %+.1f%% (tolerance 10%%)\n", it, 100 * e);
    CHECK(fabs(e) <= 0.10);
}

/* Weak scaling (issue 18): Megatron-LM 2020's same per-GPU job at DP 1 and DP 128, compared on the
 * slope itself (iteration time at DP 128 / at DP 1), not the level. Measured +7.2, +7.3, +6.9 and
 * +2.8% at TP 1, 2, 4, 8. Two mechanisms make it: the gradient all-reduce after the backward (2020's
 * local DDP) and the slowest of 128-1,024 GPUs setting the pace (--variability, sigma 0.011 from
 * Sinha et al., not fitted); without the latter the slope at TP 1 was +2.3%, and with neither +0.6%.
 * Each slope within 5 points, except TP 8: its measured 37 ms for DP 128 cannot hold even an
 * all-reduce of its 2.1 GB of fp16 gradients at the 25 GB/s of one GPU's NIC (over 160 ms unhidden),
 * so it is held to 20 points. The predicted slopes must all be above 2% (not flat). */
static void weak_scaling_slope(void)
{
    orr_err err = {{0}};
    orr_valid_table t;
    if (orr_validate(ORR_VALID_MEGATRON_2020, ORRERY_VALIDATION_DIR, &t, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    int pairs = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.rows[i].dp != 1) continue;
        for (size_t j = 0; j < t.n; j++) {
            if (t.rows[j].dp == 1 || strcmp(t.rows[i].model, t.rows[j].model) != 0 || t.rows[i].tp != t.rows[j].tp) continue;
            double meas = t.rows[j].published / t.rows[i].published, pred = t.rows[j].iteration_s / t.rows[i].iteration_s;
            printf("weak scaling %-4s tp %u: dp 1 -> %u iteration x%.3f measured, x%.3f predicted (%+.1f points)\n",
                   t.rows[i].model, t.rows[i].tp, t.rows[j].dp, meas, pred, 100 * (pred - meas));
            CHECK_MSG(fabs(pred - meas) <= (t.rows[i].tp == 8 ? 0.20 : 0.05), "weak-scaling slope %s: %.3f vs %.3f",
                      t.rows[i].model, pred, meas);
            CHECK_MSG(pred > 1.02, "weak scaling %s comes out flat: x%.3f", t.rows[i].model, pred);
            pairs++;
        }
    }
    CHECK_EQ_I64(pairs, 4);
    orr_valid_table_free(&t);
}

/* The DGX Cloud recipes run the same per-GPU job from their smallest to their largest GPU count (GBS
 * grows with the GPUs): the measured throughput per GPU falls 0.7-9.4% over those spans; the prediction
 * falls less. Printed, not yet asserted (issue 18's weak-scaling slope; docs/models.md). */
static int same_job(const orr_valid_row *a, const orr_valid_row *b)
{
    /* the same model, layout and batch per GPU; the 405B recipe's proxies (21 and 42 layers on 96 and
     * 192 GPUs) share all of these but the layers, which halve the throughput per GPU */
    return strcmp(a->model, b->model) == 0 && a->tp == b->tp && a->pp == b->pp && a->vpp == b->vpp &&
           a->cp == b->cp && (uint64_t)a->gbs * b->gpus == (uint64_t)b->gbs * a->gpus && b->gpus > a->gpus &&
           b->published > 0.8 * a->published;
}

static void dgxc_weak_scaling(void)
{
    orr_err err = {{0}};
    orr_valid_table t;
    if (orr_validate(ORR_VALID_DGXC_H100, ORRERY_VALIDATION_DIR, &t, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    for (size_t i = 0; i < t.n; i++) {
        if (i > 0 && same_job(&t.rows[i - 1], &t.rows[i])) continue; /* not the first row of its run */
        size_t last = i;
        while (last + 1 < t.n && same_job(&t.rows[last], &t.rows[last + 1])) last++;
        if (last == i) continue;
        const orr_valid_row *a = &t.rows[i], *b = &t.rows[last];
        printf("DGXC weak scaling %-16s %4u -> %4u GPUs: tokens/s per GPU x%.3f measured, x%.3f predicted\n", a->model,
               a->gpus, b->gpus, b->published / a->published, b->predicted / a->predicted);
    }
    /* the FP8 over BF16 speed-up of each model at each GPU count (issue 18's pairs), printed */
    for (size_t i = 0; i < t.n; i++) {
        const char *bf = strstr(t.rows[i].model, " BF16");
        if (!bf) continue;
        for (size_t j = 0; j < t.n; j++) {
            const char *f8 = strstr(t.rows[j].model, " FP8");
            if (!f8 || f8 - t.rows[j].model != bf - t.rows[i].model ||
                strncmp(t.rows[i].model, t.rows[j].model, (size_t)(bf - t.rows[i].model)) != 0 ||
                t.rows[i].gpus != t.rows[j].gpus)
                continue;
            double meas = t.rows[j].published / t.rows[i].published, pred = t.rows[j].predicted / t.rows[i].predicted;
            printf("DGXC fp8/bf16 %-18.*s %4u GPUs: measured %.3f, predicted %.3f (%+.1f%%)\n", (int)(bf - t.rows[i].model),
                   t.rows[i].model, t.rows[i].gpus, meas, pred, 100 * (pred / meas - 1));
        }
    }
    orr_valid_table_free(&t);
}

int main(void)
{
    weak_scaling_slope();
    check_set(ORR_VALID_MEGATRON_H100, 9, 0.15, 0.07, 0.08);
    check_set(ORR_VALID_SELENE_A100, 10, 0.15, 0.05, 0.05);
    check_set(ORR_VALID_NEMO_H100, 9, 0, 0, 0.045);
    check_set(ORR_VALID_LLAMA3_FP8, 3, 0, 0, 0.04);
    check_set(ORR_VALID_MEGATRON_2020, 8, 0, 0, 0.05);
    check_set(ORR_VALID_MBRIDGE_H100, 13, 0, 0, 0.04);
    /* A regression guard, not a target: 42.6% when added (2026-11-27), 39.9% with the dispatcher's host
     * synchronisation (Megatron's moe_sync_host_ps); the MoE model is far too fast on Qwen3-30B-A3B
     * (+44..+46%) and GPT-OSS 120B (+40..+44%), Qwen3-235B +7..+14% (docs/models.md "Megatron-Bridge's MoE
     * rows") */
    check_set(ORR_VALID_MBRIDGE_MOE_H100, 11, 0, 0, 0.42);
    /* 60 rows never used for fitting (2026-11-28): median 4.7% at FlashAttention-2's level, the rule for
     * 2024 releases; 8.8% at cuDNN's (every row fast); docs/models.md "DGX Cloud benchmarking recipes" */
    check_set(ORR_VALID_DGXC_H100, 60, 0.20, 0, 0.05);
    dgxc_weak_scaling();
    gpt3_175b_example();
    gemm_eff_fit("GA100", "A100-SXM4-80GB", ORR_VALID_SELENE_A100);
    gemm_eff_fit("GH100", "H100-SXM5-80GB", ORR_VALID_MEGATRON_H100);
    return check_done();
}
