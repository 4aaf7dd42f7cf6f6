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
 */
#include "check.h"
#include "orrery/validate.h"

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
    return check_done();
}
