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
 * kernels' shape). The bounds hold these with a little room, so that a regression fails.
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
    CHECK(k.n_heldout >= 400);
    CHECK(k.median_fit <= 0.015);
    CHECK(k.median_heldout <= 0.06);
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
