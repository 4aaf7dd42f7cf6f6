/* Fuzzes the nccl-tests output reader of `orrery calibrate` (src/api/calibrate_input.c) and, on
 * small inputs that parse, the link fits on the rows it read (the catalog's H100 in a DGX H100). */
#include "fuzz.h"
#include "orrery/calibrate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    orr_nccl_rows t = {0};
    orr_err err;
    /* the name names a collective, so that rows without the header line are read too */
    if (orr_nccl_tests_parse(&t, "all_reduce_perf.txt", (const char *)data, size, &err) == 0 && t.n <= 64) {
        orr_spec hw;
        orr_calib_result r;
        orr_spec_init(&hw);
        if (orr_catalog_gpu("H100", &hw.gpu, &err) == 0 && orr_spec_resolve_hardware(&hw, NULL, &err) == 0 &&
            orr_calibrate(&hw, &t, NULL, &r, &err) == 0) {
            orr_buf b = {0};
            orr_calibrate_report(&r, &b);
            orr_buf_free(&b);
            orr_calib_result_free(&r);
        }
    }
    orr_nccl_rows_free(&t);
    return 0;
}
