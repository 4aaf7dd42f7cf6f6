/* Fuzzes the emulator's trace reader and the collator (src/emu/collate.c): the input as the one
 * process trace of a run. */
#include "fuzz.h"
#include "orrery/orrery.h"
#include "orrery/emulate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static orr_gpu g;
    static orr_cluster c;
    orr_err err;
    if (!g.name[0] && (orr_catalog_gpu("H100", &g, &err) || orr_catalog_cluster("dgx-h100", &c, &err))) abort();
    fuzz_file("trace-1.txt", data, size);
    orr_emu_opts o = {.trace_dir = fuzz_dir(), .dedup = 1};
    orr_emu_info info;
    orr_workload *w = orr_emu_collate(&o, &g, &c, &info, &err);
    if (w) orr_workload_free(w);
    orr_emu_info_free(&info);
    return 0;
}
