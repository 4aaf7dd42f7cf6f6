/* Fuzzes the HPCC / SimAI topology reader (src/hw/topo.c), shared by netsim and --topology-file. */
#include "fuzz.h"
#include "orrery/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Routing tables of up to 2^27 entries are valid and take seconds under the sanitizers: keep an
     * execution short by reading at most 2,000 nodes (the bound itself is tested in test_topo). */
    char head[16] = {0};
    memcpy(head, data, size < sizeof head - 1 ? size : sizeof head - 1);
    if (atol(head) > 2000) return 0;
    orr_topo t;
    orr_err err;
    if (orr_topo_read_hpcc(&t, fuzz_file("topo.txt", data, size), &err) == 0) orr_topo_free(&t);
    return 0;
}
