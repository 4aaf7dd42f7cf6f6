/* Fuzzes the command-line flags (src/spec/flags.c) and resolve: the input split at NUL bytes into
 * argv, for predict's and emulate's parsers. */
#include "fuzz.h"
#include "orrery/orrery.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[64];
    int argc = 0;
    for (size_t i = 0; i <= size && argc < 64;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    orr_spec s;
    orr_err err;
    orr_spec_init(&s);
    if (orr_spec_apply_flags(&s, argc, argv, &err) == 0) orr_spec_resolve(&s, &err);
    orr_spec_free(&s);
    orr_spec_init(&s);
    orr_spec_apply_emulate_flags(&s, argc, argv, &err);
    orr_spec_free(&s);
    free(buf);
    return 0;
}
