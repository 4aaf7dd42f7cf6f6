/* Fuzzes the YAML spec reader and resolve (src/spec): any text as a spec file, its search: section
 * as orrery search reads it (src/search/args.c), then the same text as a model file. */
#include "fuzz.h"
#include "orrery/orrery.h"
#include "orrery/search.h"

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
    orr_search_opts o;
    char *argv[] = {(char *)path};
    orr_search_parse(&o, 1, argv, &err);
    orr_search_opts_free(&o);
    orr_model m;
    orr_model_load_file(&m, path, &err);
    return 0;
}
