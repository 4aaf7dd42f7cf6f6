/* Fuzzes the flow-list reader of `orrery netsim` and a short run of what it accepts, on a fixed
 * 4-host topology with a stop time of 20 us, so that any accepted list runs bounded. */
#include "fuzz.h"
#include "orrery/orrery.h"
#include "orrery/packet.h"

static const char topo_text[] = "6 1 0 2 5 NONE\n4 5\n0 4 100Gbps 1us 0\n1 4 100Gbps 1us 0\n2 5 100Gbps 1us 0\n"
                                "3 5 100Gbps 1us 0\n4 5 100Gbps 1us 0\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static orr_topo t;
    static int ready;
    orr_err err;
    if (!ready) {
        if (orr_topo_read_hpcc(&t, fuzz_file("topo4.txt", (const uint8_t *)topo_text, sizeof topo_text - 1), &err))
            abort();
        ready = 1;
    }
    orr_packet_config c;
    orr_packet_config_default(&c);
    c.stop_ps = 20 * ORR_PS_PER_US;
    orr_netsim_result r;
    if (orr_netsim_run_with(&t, &c, fuzz_file("flows.txt", data, size), &r, &err) == 0) orr_netsim_result_free(&r);
    return 0;
}
