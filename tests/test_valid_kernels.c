/*
 * The compute model's shape terms against the kernel measurements of data/validation/kernels
 * (issue 18, items 3 and 9): flash attention's rate by sequence length, mask and direction
 * (orr_est_attention_shape, src/estimate/roofline.c). Three constants were fitted on the H100
 * FlashAttention-2 series of head dim 128 (20 points); every other series - other head dims,
 * FlashAttention-3, cuDNN, Triton, PyTorch SDPA, A100, H200, B200, GB200 - is held out. Each point is
 * compared in shape: its throughput over its series' point nearest 4096, predicted against measured.
 *
 * Measured when written: fitting 1.0% (20 points), held out 5.1% (513 points; H100 and A100 flash
 * kernels 0.3-5.5% per series, Blackwell's cuDNN series 5-34%: their sweeps are not the Hopper
 * kernels' shape). Since 2026-11-26 a series is one configuration (the notes tell apart
 * cudnn-frontend's deterministic and non-deterministic backward, which had been merged, the first
 * row of either kind at each length winning), sliding-window rows are compared as windowed (they
 * had been compared as causal), and FP8 attention and deterministic backward passes are counted
 * and left out, since no predicted job runs them: held out 3.8% over 365 points (with those rows
 * kept, 5.6% over 573). The bounds hold these with a little room, so that a regression fails.
 *
 * Then the GEMM and attention estimates against this project's own measurements on one H100
 * (data/validation/measured/h100_2026-11-26, scripts/probe_gpu.py): held out, nothing fitted to them.
 */
#include "check.h"
#include "orrery/validate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    orr_valid_kernels k;
    orr_err err = {{0}};
    int rc = orr_validate_attention_shape(ORRERY_VALIDATION_DIR, &k, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc != 0) return check_done();
    orr_buf b = {0};
    orr_valid_kernels_print(&k, &b);
    fwrite(b.s, 1, b.n, stdout);
    orr_buf_free(&b);
    CHECK(k.n_fit >= 20);
    CHECK(k.n_heldout >= 350);
    CHECK(k.median_fit <= 0.015);
    CHECK(k.median_heldout <= 0.045);
    /* the file's rows out of scope, counted so that none drops out unnoticed */
    CHECK_EQ_I64((int64_t)k.skipped_fp8, 228);
    CHECK_EQ_I64((int64_t)k.skipped_deterministic, 31);
    /* the sliding-window series are compared as windowed: GB200 gpt-oss (window 128), H200 (1024) */
    int windowed = 0;
    for (size_t i = 0; i < k.n; i++)
        if (strstr(k.series[i].label, ", window ")) {
            windowed++;
            CHECK_MSG(k.series[i].median_abs_error <= 0.10, "%s: %.1f%%", k.series[i].label,
                      100 * k.series[i].median_abs_error);
        }
    CHECK_EQ_I64(windowed, 4);
    /* every held-out FlashAttention-2 and FlashAttention-3 series on H100 or A100 within 6% */
    for (size_t i = 0; i < k.n; i++) {
        const orr_valid_kernel_series *s = &k.series[i];
        int hopper_fa = (strncmp(s->label, "H100, FlashAttention-", 21) == 0 ||
                         strncmp(s->label, "A100, FlashAttention-2", 22) == 0) &&
                        !strstr(s->label, "FP8");
        if (hopper_fa) CHECK_MSG(s->median_abs_error <= 0.06, "%s: %.1f%%", s->label, 100 * s->median_abs_error);
    }
    orr_valid_kernels_free(&k);

    /* this project's H100 measurements (validation/measured/h100_2026-11-26), nothing fitted to them.
     * When written: bf16 GEMMs median |error| 6.6%, median error -0.9% (the GH100 gemm_eff fitted on
     * the Megatron-Core rows agrees with the kernels on average); fp8 speed-up over bf16 measured
     * 1.89x, predicted 6.1% higher; PyTorch's flash kernels without dropout at batch 4 -3.4% forward,
     * -8.8% backward. Not bounded, printed: batch 1 (+8..+36%: a small causal grid's tail, not
     * modelled), dropout and cuDNN (docs/models.md "Kernels measured on one H100"). */
    orr_valid_measured m;
    rc = orr_validate_measured(ORRERY_VALIDATION_DIR, 0, &m, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc != 0) return check_done();
    b = (orr_buf){0};
    orr_valid_measured_print(&m, &b);
    fwrite(b.s, 1, b.n, stdout);
    orr_buf_free(&b);
    CHECK_EQ_I64((int64_t)m.gemm_n, 246);
    CHECK_EQ_I64((int64_t)m.gemm_n_mbs4, 123);
    CHECK(m.gemm_median_abs <= 0.08);
    CHECK(fabs(m.gemm_median_signed) <= 0.03);
    CHECK_EQ_I64((int64_t)m.fp8_n, 60);
    CHECK(m.fp8_speedup_measured > 1.8 && m.fp8_speedup_measured < 2.0);
    CHECK(fabs(m.fp8_speedup_median_error) <= 0.10);
    /* fp8 scaling over per-tensor (gemm_fp8_block*.csv): the GPU's rates are the dense shapes' medians,
     * so the fitted rows sit at 0 by construction; held out, the MoE experts' shapes and a run on a
     * second machine (when written: rowwise -1.6%, blockwise +0.2%, blockwise weight gradient +0.2%),
     * each within 5% */
    static const int64_t fit_rows[3] = {120, 80, 40}, held_rows[3] = {96, 64, 32};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_I64((int64_t)m.fp8_scaling_n[i][0], fit_rows[i]);
        CHECK_EQ_I64((int64_t)m.fp8_scaling_n[i][1], held_rows[i]);
        CHECK(fabs(m.fp8_scaling_error[i][0]) <= 0.01);
        CHECK_MSG(fabs(m.fp8_scaling_error[i][1]) <= 0.05, "fp8 scaling %d held out: %+.1f%%", i,
                  100 * m.fp8_scaling_error[i][1]);
    }
    CHECK(m.fp8_scaling_measured[2][1] < m.fp8_scaling_measured[1][1]); /* the 1D weight gradient is the slowest */
    /* the experts' grouped GEMMs at MoE Table 2's shapes: printed; the model is optimistic there (when
     * written: torch._grouped_mm +9.5%, one torch.mm per expert +7.0%; docs/models.md "FP8 recipes",
     * the paragraph on grouped GEMMs), held within 15% so that a change of the GEMM model shows */
    CHECK_EQ_I64((int64_t)m.grouped_n, 30);
    CHECK_EQ_I64((int64_t)m.grouped_loop_n, 30);
    CHECK(fabs(m.grouped_median_error) <= 0.15 && fabs(m.grouped_loop_median_error) <= 0.15);
    /* and at the expert shapes of Megatron-Core's MoE rows (te_grouped_moe.csv, 2026-11-27; when written
     * -4.1% / +7.6%, burst timings): the experts' kernels are not what Megatron-Bridge's MoE rows miss */
    CHECK_EQ_I64((int64_t)m.mcore_grouped_n, 30);
    CHECK_EQ_I64((int64_t)m.mcore_grouped_loop_n, 30);
    CHECK(fabs(m.mcore_grouped_median_error) <= 0.15 && fabs(m.mcore_grouped_loop_median_error) <= 0.15);
    CHECK_EQ_I64((int64_t)m.attn_n, 16);
    int level = 0;
    for (size_t i = 0; i < m.attn_n; i++) {
        CHECK_EQ_I64((int64_t)m.attn[i].n, 6);
        if (strncmp(m.attn[i].label, "flash (FlashAttention-2), dropout 0.0, ", 39) == 0 &&
            strstr(m.attn[i].label, "batch 4")) {
            level++;
            CHECK_MSG(fabs(m.attn[i].median_error) <= 0.12, "%s: %+.1f%%", m.attn[i].label, 100 * m.attn[i].median_error);
        }
    }
    CHECK_EQ_I64(level, 2);
    /* cuDNN's fused attention at attn_cudnn_{fwd,bwd}_eff: fitted on its 12 dropout-0 rows each way
     * (when written -0.2% / -0.9%), the 5 grouped-query shapes of attention_gqa.csv held out (-4.8% /
     * +1.3%) */
    for (int dir = 0; dir < 2; dir++) {
        CHECK_EQ_I64((int64_t)m.cudnn_n[dir][0], 12);
        CHECK_EQ_I64((int64_t)m.cudnn_n[dir][1], 5);
        const char *way = dir ? "bwd" : "fwd";
        CHECK_MSG(fabs(m.cudnn_error[dir][0]) <= 0.03, "cuDNN %s fitted: %+.1f%%", way, 100 * m.cudnn_error[dir][0]);
        CHECK_MSG(fabs(m.cudnn_error[dir][1]) <= 0.08, "cuDNN %s held out: %+.1f%%", way, 100 * m.cudnn_error[dir][1]);
    }
    /* compute beside a contender holding k SMs: printed against overlap_slowdown, not bounded (the
     * measured slowdowns, 6-49% by k and kernel, say the 10% constant is low; docs/models.md) */
    CHECK_EQ_I64((int64_t)m.overlap_rows, 23);
    CHECK_EQ_I64((int64_t)m.overlap_skipped, 1);
    CHECK_EQ_I64((int64_t)m.overlap_k, 3);
    /* random shapes (when written: 208 kernels of 100 us or more, median |error| 6.8%, -4.0%) */
    CHECK_EQ_I64((int64_t)(m.sweep_n + m.sweep_short), 400);
    CHECK(m.sweep_n >= 200);
    CHECK(m.sweep_median_abs <= 0.09);
    CHECK(fabs(m.sweep_median_signed) <= 0.06);
    CHECK(m.sweep_overlap_n >= 70);
    /* by measured duration (when written: -5.9% under 0.8 ms over 241, +0.5% at 0.8-3 ms over 132, +7.5%
     * from 3 ms over 81): one constant gemm_eff cannot meet both ends, because the probe's long bursts
     * ran power-capped (docs/models.md "Power-capped clocks"); the order of the three is what is held */
    CHECK_EQ_I64((int64_t)(m.dur_n[0] + m.dur_n[1] + m.dur_n[2]), (int64_t)(m.gemm_n + m.sweep_n));
    CHECK_MSG(m.dur_median_signed[0] < m.dur_median_signed[1] && m.dur_median_signed[1] < m.dur_median_signed[2],
              "GEMM error by duration %+.1f / %+.1f / %+.1f%%: expected to rise with the kernel's length",
              100 * m.dur_median_signed[0], 100 * m.dur_median_signed[1], 100 * m.dur_median_signed[2]);
    CHECK(m.dur_median_signed[2] - m.dur_median_signed[0] >= 0.08);
    /* the cap measured (gemm_sustained.csv, 2026-11-27): eight of these shapes, 0.1-7 ms, each in a burst
     * after 2 s idle and after 2 s of large GEMMs. When written: bursts -10.3% (the model slower than the
     * boost clock), sustained median |error| 2.7%, median +1.7%, sustained 13.3% slower than burst (at
     * least 11.7%). The GH100's gemm_eff, fitted end to end on the Megatron-Core rows, is the rate a
     * GEMM runs at once the cap holds, short kernels and long alike: held out, nothing fitted to them */
    CHECK_EQ_I64((int64_t)m.sustained_n, 8);
    CHECK_MSG(m.sustained_median_abs <= 0.05, "sustained GEMMs: median |error| %.1f%%", 100 * m.sustained_median_abs);
    CHECK(fabs(m.sustained_median_signed) <= 0.03);
    CHECK(m.sustained_burst_median_signed <= -0.05);
    CHECK(m.sustained_slowdown_min >= 0.05);
    /* the other kernels of a step the same two ways (kernels_sustained.csv): only the tensor-core GEMMs
     * slow down once the cap holds (when written: bf16 x1.115-1.178, fp8 x1.117-1.137), FlashAttention-2
     * and the memory-bound kernels keep the boost clock (x1.001-1.067, x0.999-1.005), cuDNN's attention in
     * between (x1.009-1.138); fp8's speed-up over bf16 is the same (1.82x burst, 1.83x sustained). So the
     * model's GEMM level is the capped one (gemm_eff, fitted end to end) and its attention and memory
     * levels the kernels' own (fitted on bursts): both are what a step sees */
    static const int64_t ks_rows[ORR_KS_CLASSES] = {3, 3, 6, 6, 4};
    for (int c = 0; c < ORR_KS_CLASSES; c++) CHECK_EQ_I64((int64_t)m.ks_n[c], ks_rows[c]);
    CHECK(m.ks_ratio_min[ORR_KS_GEMM_BF16] >= 1.08 && m.ks_ratio_min[ORR_KS_GEMM_FP8] >= 1.08);
    CHECK(m.ks_ratio_max[ORR_KS_FLASH] <= 1.08 && m.ks_ratio_max[ORR_KS_MEMORY] <= 1.02);
    CHECK_EQ_I64((int64_t)m.ks_fp8_pairs, 3);
    CHECK(fabs(m.ks_fp8_speedup_sustained / m.ks_fp8_speedup_burst - 1) <= 0.03);
    /* inside a step (layer_sustained.csv: two eager GPT layers run back to back, the profiler's GEMM
     * time per layer at 1.7B, 7.1B, 32B and 177B shapes): when written -1.1, -0.5, +2.3, +3.3%, each
     * held to 5% */
    CHECK_EQ_I64((int64_t)m.layer_gemm_n, 4);
    CHECK_MSG(m.layer_gemm_max_abs <= 0.05, "layer GEMMs: largest |error| %.1f%%", 100 * m.layer_gemm_max_abs);
    return check_done();
}
