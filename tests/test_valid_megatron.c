/*
 * Validation of `orrery predict` against published Megatron-LM and NeMo measurements:
 *   rows used for fitting (docs/models.md section 6 fits gemm_eff and the attention and memory
 *   efficiencies of GA100 and GH100 on them):
 *   - every row of data/validation/megatron_lm_h100_weak_scaling.csv (Megatron-Core r0.8.0,
 *     H100, seq 4096) within +-15% TFLOP/s per GPU, median |error| within 7%;
 *   - the April-2021 A100 Selene rows of megatron_lm_a100_selene.csv, same tolerances;
 *   - GPT-3 175B on 1,024 A100: within +-10% of the measured ~32 s per iteration;
 *   - the GA100 gemm_eff fit re-run on a 0.01 grid around data/gpus.yaml's value;
 *   held-out rows, never used for fitting (issue 18: the number that matters), reported row by row
 *   and held to their current medians so that a regression fails:
 *   - NeMo 24.07's FP8 pre-training rows (tokens/s per GPU), median within 5%, issue 18's bound
 *     (3.7% today; 5.2% before fp8 TP all-gathers carried one byte per element);
 *   - Megatron-LM's Llama 3 FP8 example (3 rows), median within 15% (13.5% today: a known miss;
 *     its Llama 3 8B row measures 12.5% above NeMo's for the same configuration);
 *   - Megatron-LM's 2020 DGX A100 scaling cases (iteration time), median within 5% (4.2% today, 7.8%
 *     before the 2020 gradient all-reduce and variability; TP cost is still under-priced: +4, +9,
 *     +14% at TP 2, 4, 8 on one node, as issue 18 reports), and their weak-scaling slope.
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
 * median_tol: the bound on the median of the rows used for fitting, or of the held-out rows. */
static void check_set(orr_valid_set set, size_t want_rows, double row_tol, double median_tol)
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
    int fitted = t.n_fit > 0;
    double median = fitted ? t.median_fit : t.median_heldout;
    printf("  tolerance: %s median %.0f%%", fitted ? "rows used for fitting:" : "held-out rows:", 100 * median_tol);
    if (row_tol > 0) printf(", each row %.0f%%", 100 * row_tol);
    printf("; predicted OOM though it ran: %zu (none allowed)\n\n", false_oom);
    CHECK_MSG(median <= median_tol, "median |error| %.1f%% over the %s rows, bound %.0f%%", 100 * median,
              fitted ? "fitted" : "held-out", 100 * median_tol);
    orr_valid_table_free(&t);
}

/* The GA100 fit re-run around its value (issue 26: a constant in data/ that the fit would no longer
 * give fails): gemm_eff is the one constant fitted on the Selene rows, by the smallest median
 * |error| on a 0.01 grid (docs/models.md section 6), so the catalog's value must beat its two grid
 * neighbours. (GH100's four constants were fitted jointly, with the per-row bound as well as the
 * median; a one-axis check does not reproduce that fit, so it is not made here.) */
static void ga100_fit(void)
{
    orr_err err = {{0}};
    orr_gpu g;
    if (orr_catalog_gpu("A100-SXM4-80GB", &g, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    double med[3] = {0};
    for (int i = 0; i < 3; i++) {
        orr_valid_table t;
        double eff = g.gemm_eff + 0.01 * (i - 1);
        if (orr_validate_gemm_eff(ORR_VALID_SELENE_A100, ORRERY_VALIDATION_DIR, eff, &t, &err) < 0) {
            CHECK_MSG(0, "%s", err.msg);
            return;
        }
        med[i] = t.median_abs_error;
        orr_valid_table_free(&t);
    }
    printf("GA100 gemm_eff fit: median |error| %.2f%% at %.2f, %.2f%% at the catalog's %.2f, %.2f%% at %.2f\n",
           100 * med[0], g.gemm_eff - 0.01, 100 * med[1], g.gemm_eff, 100 * med[2], g.gemm_eff + 0.01);
    CHECK_MSG(med[1] <= med[0] && med[1] <= med[2], "the fit no longer gives gemm_eff %.2f (data/gpus.yaml): re-run "
              "it (docs/models.md section 6)", g.gemm_eff);
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

int main(void)
{
    weak_scaling_slope();
    check_set(ORR_VALID_MEGATRON_H100, 9, 0.15, 0.07);
    check_set(ORR_VALID_SELENE_A100, 10, 0.15, 0.07);
    check_set(ORR_VALID_NEMO_H100, 9, 0, 0.05);
    check_set(ORR_VALID_LLAMA3_FP8, 3, 0, 0.15);
    check_set(ORR_VALID_MEGATRON_2020, 8, 0, 0.05);
    gpt3_175b_example();
    ga100_fit();
    return check_done();
}
