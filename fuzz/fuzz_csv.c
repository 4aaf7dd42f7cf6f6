/* Fuzzes the csv reader (src/core/csv.c) and `orrery validate` on a validation folder whose
 * Megatron-LM H100 table, and kernels/attention.csv, are the input (the other tables are the
 * repository's; orr_validate_attention_shape reads the kernel table): every row is read
 * into a job and resolved; the table is predicted only when that is quick (a row is a whole
 * prediction: a published 3,072-GPU row takes seconds under the sanitizers, and several of them
 * exceed the per-input timeout without being a hang). */
#include "fuzz.h"
#include "orrery/csv.h"
#include "orrery/validate.h"

#define FUZZ_CSV_MAX_ROWS 2          /* rows predicted at most */
#define FUZZ_CSV_MAX_WORK 256        /* layers x micro-batches per row at most (the published 177B row,
                                      * 96 x 24 = 2,304, took over 10 s under the sanitizers) */

/* 1 if every case resolves to a small job (whose prediction takes well under a second). */
static int small_jobs(orr_valid_case *c, size_t n)
{
    if (n > FUZZ_CSV_MAX_ROWS) return 0;
    for (size_t i = 0; i < n; i++) {
        orr_err err;
        if (orr_spec_resolve(&c[i].spec, &err) < 0) return 0;
        const orr_spec *s = &c[i].spec;
        uint64_t replicas = (uint64_t)s->dp * (s->mbs ? s->mbs : 1);
        uint64_t micro = replicas ? s->gbs / replicas : s->gbs;
        if ((uint64_t)s->model.layers * (micro ? micro : 1) > FUZZ_CSV_MAX_WORK) return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    orr_csv t;
    orr_err err;
    const char *path = fuzz_file("megatron_lm_h100_weak_scaling.csv", data, size);
    if (orr_csv_load(&t, path, &err) == 0) orr_csv_free(&t);
    orr_valid_case *c;
    size_t n;
    if (orr_valid_cases(ORR_VALID_MEGATRON_H100, fuzz_dir(), &c, &n, &err) < 0) return 0;
    int predict = small_jobs(c, n);
    orr_valid_cases_free(c, n);
    orr_valid_table v;
    if (predict && orr_validate(ORR_VALID_MEGATRON_H100, fuzz_dir(), &v, &err) == 0) orr_valid_table_free(&v);
    /* the same input as the kernel table of the flash-attention shape check */
    char sub[128];
    snprintf(sub, sizeof sub, "%s/kernels", fuzz_dir());
    mkdir(sub, 0700);
    fuzz_file("kernels/attention.csv", data, size);
    orr_valid_kernels k;
    if (orr_validate_attention_shape(fuzz_dir(), &k, &err) == 0) orr_valid_kernels_free(&k);
    return 0;
}
