/* Fuzzes the csv reader (src/core/csv.c) and `orrery validate` on a validation folder whose
 * Megatron-LM H100 table is the input (the other tables are the repository's). */
#include "fuzz.h"
#include "orrery/csv.h"
#include "orrery/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    orr_csv t;
    orr_err err;
    const char *path = fuzz_file("megatron_lm_h100_weak_scaling.csv", data, size);
    if (orr_csv_load(&t, path, &err) == 0) orr_csv_free(&t);
    if (size > 2048) return 0; /* each row is a whole prediction: keep a run short */
    orr_valid_table v;
    if (orr_validate(ORR_VALID_MEGATRON_H100, fuzz_dir(), &v, &err) == 0) orr_valid_table_free(&v);
    return 0;
}
