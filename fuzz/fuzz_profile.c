/* Fuzzes the calibration profile reader (src/hw/profile.c): a profile that reads is written back
 * and must read back with the same keys, and is applied to the catalog's H100 in a DGX H100. */
#include "fuzz.h"
#include "orrery/hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    orr_hw_profile p, q;
    orr_err err;
    if (orr_hw_profile_parse(&p, "profile.yaml", (const char *)data, size, &err)) return 0;
    orr_buf y = {0};
    orr_hw_profile_yaml(&p, &y);
    if (orr_hw_profile_parse(&q, "profile.yaml", y.s, y.n, &err)) abort(); /* what is written reads back */
    if (q.gpu_set != p.gpu_set || q.cluster_set != p.cluster_set || q.has_gpu != p.has_gpu) abort();
    orr_gpu g;
    orr_cluster c;
    if (orr_catalog_gpu("H100", &g, &err) == 0 && orr_catalog_cluster("dgx-h100", &c, &err) == 0)
        orr_hw_profile_apply(&p, &g, &c, &err);
    orr_buf_free(&y);
    return 0;
}
