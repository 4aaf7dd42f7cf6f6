/* Fuzzes the YAML spec reader and resolve (src/spec): any text as a spec file, then the same text
 * as a model file. */
#include "fuzz.h"
#include "orrery/orrery.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("spec.yaml", data, size);
    orr_spec s;
    orr_err err;
    orr_spec_init(&s);
    if (orr_spec_load_file(&s, path, &err) == 0) {
        orr_spec_resolve(&s, &err);
        orr_spec_free(&s);
    }
    orr_model m;
    orr_model_load_file(&m, path, &err);
    return 0;
}
