/*
 * The mechanics of the Wormhole acceleration (src/net/packet/wormhole.c) on one small input, cheap
 * enough for the sanitizer build (tests/test_valid_wormhole.c has the accuracy matrix): a ring
 * step of 16 x 4 MB flows on the k=4 fat tree of data/validation/ns3 with a 1 MB flow entering at
 * 2.00025 s (data/validation/wormhole/flows_k4_ring_small.txt), DCQCN, window 200 samples.
 *
 * Checked: the partition forms, is fast-forwarded, and the late flow wakes it (skip-back); fewer
 * events than with --no-accel; every flow finishes and reports its whole size; per-flow FCT error
 * against --no-accel mean <= 1%, p99 (nearest rank, here the largest of 17) <= 3%; two runs give
 * the same FCT file byte for byte; and --no-accel reports the acceleration off with no counters.
 */
#include "check.h"
#include "orrery/packet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NS3 ORRERY_VALIDATION_DIR "/ns3/"
#define FLOWS ORRERY_VALIDATION_DIR "/wormhole/flows_k4_ring_small.txt"

static int run(int accel, orr_netsim_result *r)
{
    orr_err err;
    orr_packet_config cfg;
    orr_packet_config_default(&cfg);
    orr_buf warn = {0};
    int rc = orr_packet_config_read(&cfg, NS3 "config_dcqcn.txt", &warn, &err);
    orr_buf_free(&warn);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return -1;
    cfg.accel = accel;
    cfg.ss_window = 200;
    orr_topo t;
    rc = orr_topo_read_hpcc(&t, NS3 "topo_k4.txt", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return -1;
    rc = orr_netsim_run_with(&t, &cfg, FLOWS, r, &err);
    orr_topo_free(&t);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc;
}

/* The FCT (ns) of the flow on line `key` ("sip dip sport dport") of an FCT file, -1 if absent;
 * its size in *bytes. */
static double fct_of(const orr_buf *text, const char *key, unsigned long long *bytes)
{
    const char *p = text->s, *end = text->s + text->n;
    size_t klen = strlen(key);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        unsigned long long start, fct;
        if ((size_t)(nl - p) > klen && memcmp(p, key, klen) == 0 && p[klen] == ' ' &&
            sscanf(p + klen, "%llu %llu %llu", bytes, &start, &fct) == 3)
            return (double)fct;
        p = nl + 1;
    }
    return -1;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    orr_netsim_result off, on, again;
    if (run(0, &off)) return check_done();
    if (run(1, &on)) {
        orr_netsim_result_free(&off);
        return check_done();
    }
    const orr_packet_accel_stats *a = &on.accel;
    printf("%llu -> %llu events; %llu partitions, %llu splits, %llu fast-forwards, %llu skip-backs, %.3f GB\n",
           (unsigned long long)off.stats.events, (unsigned long long)on.stats.events,
           (unsigned long long)a->partitions, (unsigned long long)a->splits, (unsigned long long)a->fast_forwards,
           (unsigned long long)a->skip_backs, (double)a->skipped_bytes / 1e9);
    CHECK(!off.accel.enabled && off.accel.fast_forwards == 0 && off.accel.partitions == 0);
    CHECK(a->enabled && a->partitions >= 1 && a->splits >= 1);
    CHECK(a->fast_forwards >= 1 && a->skip_backs >= 1 && a->skipped_bytes > 0 && a->skipped_ps > 0);
    CHECK(a->steady_flow_ps > 0 && a->steady_flow_ps < a->flow_ps);
    CHECK(on.stats.events < off.stats.events);
    CHECK_EQ_I64(on.fct.flows, 17);
    CHECK_EQ_I64(off.fct.flows, 17);
    /* per flow: same size reported, FCT error */
    double err[17];
    int n = 0;
    const char *p = off.fct_text.s, *end = off.fct_text.s + off.fct_text.n;
    while (p < end && n < 17) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        char key[64], a1[16], a2[16], a3[16], a4[16];
        unsigned long long bytes_off, bytes_on, start, fct;
        if (sscanf(p, "%15s %15s %15s %15s %llu %llu %llu", a1, a2, a3, a4, &bytes_off, &start, &fct) == 7) {
            snprintf(key, sizeof key, "%s %s %s %s", a1, a2, a3, a4);
            double f_on = fct_of(&on.fct_text, key, &bytes_on);
            CHECK_MSG(f_on > 0, "flow %s missing with acceleration", key);
            CHECK_EQ_I64(bytes_on, bytes_off);
            err[n++] = f_on > 0 ? fabs(f_on - (double)fct) / (double)fct : 1;
        }
        p = nl + 1;
    }
    CHECK_EQ_I64(n, 17);
    double mean = 0;
    for (int i = 0; i < n; i++) mean += err[i] / n;
    qsort(err, (size_t)n, sizeof *err, cmp_dbl);
    double p99 = n ? err[(int)ceil(0.99 * n) - 1] : 1;
    printf("per-flow FCT error: mean %.4f%%, p99 %.4f%%\n", 100 * mean, 100 * p99);
    CHECK_MSG(mean <= 0.01, "mean per-flow FCT error %.4f%% (at most 1%%)", 100 * mean);
    CHECK_MSG(p99 <= 0.03, "p99 per-flow FCT error %.4f%% (at most 3%%)", 100 * p99);
    if (run(1, &again) == 0) {
        CHECK(again.fct_text.n == on.fct_text.n && memcmp(again.fct_text.s, on.fct_text.s, on.fct_text.n) == 0);
        CHECK_EQ_I64(again.stats.events, on.stats.events);
        orr_netsim_result_free(&again);
    }
    orr_netsim_result_free(&off);
    orr_netsim_result_free(&on);
    return check_done();
}
