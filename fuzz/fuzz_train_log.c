/* Fuzzes the step-time readers of `orrery calibrate` (src/api/calibrate_input.c): the input as a
 * CSV of runs over a base job (each row's flags applied, then resolved) and as a Megatron-LM log. */
#include "fuzz.h"
#include "orrery/calibrate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    orr_err err;
    double step_s;
    size_t n;
    orr_megatron_log_parse("train.log", (const char *)data, size, &step_s, &n, &err);
    orr_spec base;
    orr_spec_init(&base);
    char *flags[] = {"--model", "gpt3-125m", "--gpu", "H100", "--gpus", "8"};
    if (orr_spec_apply_flags(&base, 6, flags, &err)) abort();
    orr_step_rows t = {0};
    if (orr_steps_csv_load(&t, fuzz_file("runs.csv", data, size), &base, &err) == 0)
        for (size_t i = 0; i < t.n; i++) {
            orr_spec s = t.v[i].spec;
            orr_spec_resolve(&s, &err);
        }
    orr_step_rows_free(&t);
    return 0;
}
