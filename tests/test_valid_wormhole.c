/*
 * The accuracy of the Wormhole acceleration of the packet engine (src/net/packet/wormhole.c,
 * issue 22) against the same engine with it off (--no-accel), which is the reference: the
 * acceleration may only skip work, so everything it changes is error. (About 10 s: plain build
 * only, as every test_valid_*; tests/test_wormhole.c checks the mechanics under the sanitizers.)
 *
 * (a) `orrery netsim` inputs on the k=4 fat tree of data/validation/ns3 with HPCC and DCQCN: the
 *     ns-3 scenario (6 x 1 MB incast + 6 x 10 MB cross-pod), at the paper's parameters (theta 5%,
 *     l = 2000) and at l = 200 (more fast-forwards, shorter windows: the harder case); a ring step
 *     of 16 x 20 MB flows (data/validation/wormhole), which must be fast-forwarded (at least 3x
 *     fewer events); the same ring with a flow entering while it is frozen, which must skip back.
 *     Per flow, relative FCT error: mean <= 1%, p99 (nearest rank) <= 3%; and the mean FCT and
 *     the p99 FCT within 1% and 3%. Runs are deterministic: two accelerated runs write the same
 *     FCT file byte for byte.
 *     test_memo.c checks memoization on its own (and tests/test_memo.c under the sanitizers).
 * (b) LLM traffic from `predict --net packet` (GPT-3 1.3B on 16 H100, two DGX nodes, rail fat
 *     tree, symmetry on: the executor runs one rank per stage, the network every GPU's flows): DP ring all-reduce of 160 MB fp32 gradient buckets (TP 8 x DP 2, no distributed
 *     optimizer) and PP send/recv (TP 8 x PP 2), TP inside the nodes in both (NVLink, flow
 *     model). At the default window (2000 samples of 1000-byte packets: 31 of the 64 KiB ones),
 *     fast-forwards must happen; the iteration time is within 1% of --no-accel, and per communication op
 *     (collectives, sends, receives) the duration's relative error has mean <= 1%, p99 <= 3%.
 *     And MoE all-to-all: gpt-oss-20b with EP 16 over the two nodes (one rank simulated, every
 *     GPU's flows on the fabric: gen.c describe_symmetry).
 */
#include "check.h"
#include "orrery/orrery.h"
#include "orrery/packet.h"
#include "orrery/spec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NS3 ORRERY_VALIDATION_DIR "/ns3/"
#define WH ORRERY_VALIDATION_DIR "/wormhole/"

/* ---- per-flow FCT comparison ---- */

typedef struct fct_row {
    char key[64]; /* sip dip sport dport */
    double fct_ns;
} fct_row;

static int cmp_row(const void *a, const void *b) { return strcmp(((const fct_row *)a)->key, ((const fct_row *)b)->key); }
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The FCT file's rows, sorted by key; returns the count. */
static size_t fct_rows(const orr_buf *text, fct_row **out)
{
    size_t n = 0, cap = 0;
    fct_row *rows = NULL;
    const char *p = text->s, *end = text->s ? text->s + text->n : NULL;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        char line[256];
        size_t len = (size_t)(nl - p) < sizeof line - 1 ? (size_t)(nl - p) : sizeof line - 1;
        memcpy(line, p, len);
        line[len] = 0;
        char a[16], b[16], c[16], d[16];
        unsigned long long size, start, fct;
        if (sscanf(line, "%15s %15s %15s %15s %llu %llu %llu", a, b, c, d, &size, &start, &fct) == 7) {
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                rows = realloc(rows, cap * sizeof *rows);
            }
            snprintf(rows[n].key, sizeof rows[n].key, "%s %s %s %s", a, b, c, d);
            rows[n++].fct_ns = (double)fct;
        }
        p = nl + 1;
    }
    if (n) qsort(rows, n, sizeof *rows, cmp_row);
    *out = rows;
    return n;
}

static double nearest_rank(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, cmp_dbl);
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

typedef struct errors {
    double mean, p99;         /* per-item relative error: mean and 99th percentile */
    double mean_of, p99_of;   /* relative error of the mean and of the p99 */
} errors;

/* Errors of values b against reference a (n pairs). */
static errors compare(const double *a, const double *b, size_t n)
{
    errors e = {0, 0, 0, 0};
    if (n == 0) return e;
    double *rel = malloc(n * sizeof *rel), *sa = malloc(n * sizeof *sa), *sb = malloc(n * sizeof *sb);
    double ma = 0, mb = 0;
    for (size_t i = 0; i < n; i++) {
        rel[i] = a[i] > 0 ? fabs(b[i] - a[i]) / a[i] : 0;
        e.mean += rel[i] / (double)n;
        ma += a[i];
        mb += b[i];
        sa[i] = a[i];
        sb[i] = b[i];
    }
    e.p99 = nearest_rank(rel, n, 0.99);
    e.mean_of = ma > 0 ? fabs(mb - ma) / ma : 0;
    double pa = nearest_rank(sa, n, 0.99), pb = nearest_rank(sb, n, 0.99);
    e.p99_of = pa > 0 ? fabs(pb - pa) / pa : 0;
    free(rel);
    free(sa);
    free(sb);
    return e;
}

/* The acceptance, in the paper's metric (§7: the relative error of each flow, averaged):
 * mean per-item error <= 1%, its 99th percentile <= 3%; and the p99 of the values within 3%.
 * The error of the mean value is printed (and held to 1% where strict), not asserted everywhere:
 * on the congested DCQCN case it is about 1% (docs/netsim.md). */
static void check_errors(const char *name, errors e, int strict)
{
    printf("    per item: mean %.4f%%, p99 %.4f%%; mean %.4f%%, p99 %.4f%% off\n", 100 * e.mean, 100 * e.p99,
           100 * e.mean_of, 100 * e.p99_of);
    CHECK_MSG(e.mean <= 0.01, "%s: mean per-item error %.4f%% (at most 1%%)", name, 100 * e.mean);
    CHECK_MSG(e.p99 <= 0.03, "%s: p99 per-item error %.4f%% (at most 3%%)", name, 100 * e.p99);
    CHECK_MSG(e.p99_of <= 0.03, "%s: p99 off by %.4f%% (at most 3%%)", name, 100 * e.p99_of);
    if (strict) CHECK_MSG(e.mean_of <= 0.01, "%s: mean off by %.4f%% (at most 1%%)", name, 100 * e.mean_of);
}

/* ---- (a) netsim ---- */

static int netsim(const char *topo, const char *flows, const char *config, int accel, uint32_t window,
                  orr_netsim_result *r)
{
    orr_err err;
    orr_packet_config cfg;
    orr_packet_config_default(&cfg);
    orr_buf warn = {0};
    int rc = orr_packet_config_read(&cfg, config, &warn, &err);
    orr_buf_free(&warn);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return -1;
    cfg.accel = accel;
    if (window) cfg.ss_window = window;
    orr_topo t;
    rc = orr_topo_read_hpcc(&t, topo, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return -1;
    rc = orr_netsim_run_with(&t, &cfg, flows, r, &err);
    orr_topo_free(&t);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc;
}

/* Runs flows with and without acceleration and compares per-flow FCTs; returns the accelerated
 * run's counters and the event ratio (unaccelerated / accelerated). */
static double scenario(const char *name, const char *flows, const char *config, uint32_t window,
                       orr_packet_accel_stats *acc)
{
    orr_netsim_result ref, fast;
    memset(acc, 0, sizeof *acc);
    if (netsim(NS3 "topo_k4.txt", flows, config, 0, 0, &ref)) return 0;
    if (netsim(NS3 "topo_k4.txt", flows, config, 1, window, &fast)) {
        orr_netsim_result_free(&ref);
        return 0;
    }
    *acc = fast.accel;
    fct_row *ra, *rb;
    size_t na = fct_rows(&ref.fct_text, &ra), nb = fct_rows(&fast.fct_text, &rb);
    CHECK_EQ_I64(na, ref.flows_total);
    CHECK_EQ_I64(nb, na);
    double *a = calloc(na ? na : 1, sizeof *a), *b = calloc(na ? na : 1, sizeof *b);
    size_t n = 0;
    for (size_t i = 0; i < na && i < nb; i++) {
        CHECK_MSG(strcmp(ra[i].key, rb[i].key) == 0, "%s: flow %s missing", name, ra[i].key);
        a[n] = ra[i].fct_ns;
        b[n++] = rb[i].fct_ns;
    }
    double ratio = fast.stats.events ? (double)ref.stats.events / (double)fast.stats.events : 0;
    printf("%-26s %llu -> %llu events (%.2fx), %llu fast-forwards (%llu skip-backs), steady fraction %.3f\n", name,
           (unsigned long long)ref.stats.events, (unsigned long long)fast.stats.events, ratio,
           (unsigned long long)acc->fast_forwards, (unsigned long long)acc->skip_backs, orr_packet_steady_fraction(acc));
    check_errors(name, compare(a, b, n), 1);
    CHECK(fast.stats.events <= ref.stats.events);
    free(a);
    free(b);
    free(ra);
    free(rb);
    orr_netsim_result_free(&ref);
    orr_netsim_result_free(&fast);
    return ratio;
}

static void test_netsim(void)
{
    static const char *const cc[] = {"hpcc", "dcqcn"};
    for (int i = 0; i < 2; i++) {
        char config[512], name[64];
        snprintf(config, sizeof config, NS3 "config_%s.txt", cc[i]);
        orr_packet_accel_stats acc;
        snprintf(name, sizeof name, "ns-3 k4 %s", cc[i]);
        scenario(name, NS3 "flows_k4.txt", config, 0, &acc);
        CHECK(acc.enabled && acc.partitions >= 1);
        snprintf(name, sizeof name, "ns-3 k4 %s l=200", cc[i]);
        scenario(name, NS3 "flows_k4.txt", config, 200, &acc);
        CHECK_MSG(acc.fast_forwards >= 1, "%s: no fast-forward", name);
        snprintf(name, sizeof name, "ring k4 %s", cc[i]);
        double ratio = scenario(name, WH "flows_k4_ring.txt", config, 0, &acc);
        CHECK_MSG(ratio >= 3, "%s: %.2fx fewer events (at least 3x)", name, ratio);
        CHECK_MSG(acc.steady_flow_ps > 0.5 * acc.flow_ps, "%s: steady fraction %.3f", name,
                  orr_packet_steady_fraction(&acc));
        snprintf(name, sizeof name, "ring + late flow k4 %s", cc[i]);
        scenario(name, WH "flows_k4_ring_late.txt", config, 0, &acc);
        CHECK_MSG(acc.skip_backs >= 1, "%s: the late flow did not wake the frozen partition", name);
    }
    /* deterministic: the same FCT file twice */
    orr_netsim_result r1, r2;
    if (netsim(NS3 "topo_k4.txt", WH "flows_k4_ring_late.txt", NS3 "config_hpcc.txt", 1, 0, &r1)) return;
    if (netsim(NS3 "topo_k4.txt", WH "flows_k4_ring_late.txt", NS3 "config_hpcc.txt", 1, 0, &r2) == 0) {
        CHECK(r1.fct_text.n == r2.fct_text.n && r1.fct_text.n > 0 && memcmp(r1.fct_text.s, r2.fct_text.s, r1.fct_text.n) == 0);
        CHECK_EQ_I64(r1.stats.events, r2.stats.events);
        orr_netsim_result_free(&r2);
    }
    orr_netsim_result_free(&r1);
}

/* ---- (b) predict ---- */

/* congested: one node per leaf, one spine, leaf uplinks at half the downlinks (oversub 2), so
 * every inter-node flow crosses a congested spine (ECN marks, DCQCN cuts) */
static int predict(const char *const *extra, int nextra, int accel, int congested, orr_prediction *p)
{
    const char *base[] = {"--model", "gpt3-1.3b", "--gpu", "H100-SXM", "--cluster", "dgx-h100", "--gpus", "16",
                          "--mbs", "1", "--net", "packet", "--topology", "rail-fat-tree"};
    char *argv[32];
    int argc = 0;
    for (size_t i = 0; i < sizeof base / sizeof *base; i++) argv[argc++] = (char *)base[i];
    for (int i = 0; i < nextra; i++) argv[argc++] = (char *)extra[i];
    argv[argc++] = (char *)(accel ? "--accel" : "--no-accel");
    orr_spec s;
    orr_err err;
    orr_spec_init(&s);
    int rc = orr_spec_apply_flags(&s, argc, argv, &err);
    if (congested) {
        s.topo.leaf_hosts = 1;
        s.topo.spines = 1;
        s.topo.oversub = 2;
    }
    if (rc == 0) rc = orr_spec_resolve(&s, &err);
    if (rc == 0) rc = orr_predict(&s, p, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc;
}

/* Predicts a job with and without acceleration and checks the one against the other; returns the
 * accelerated iteration's relative error (0 if a run failed, which is a failed check). */
static double llm(const char *name, const char *const *extra, int nextra, int congested)
{
    orr_prediction ref, fast;
    if (predict(extra, nextra, 0, congested, &ref)) return 0;
    if (predict(extra, nextra, 1, congested, &fast)) {
        orr_prediction_free(&ref);
        return 0;
    }
    double err = fast.r.iteration_s / ref.r.iteration_s - 1;
    const orr_packet_accel_stats *acc = &fast.x.net.packet.accel;
    printf("%-26s iteration %.6f s vs %.6f s (%+.4f%%); packet events %llu -> %llu; %llu fast-forwards; "
           "%llu ECN marks\n", name, fast.r.iteration_s, ref.r.iteration_s,
           100 * (fast.r.iteration_s / ref.r.iteration_s - 1), (unsigned long long)ref.x.net.packet.events,
           (unsigned long long)fast.x.net.packet.events, (unsigned long long)acc->fast_forwards,
           (unsigned long long)ref.x.net.packet.ecn_marks);
    if (congested) CHECK(ref.x.net.packet.ecn_marks > 0);
    /* The acceptance is 1%. On the congested DCQCN case one run is one draw of RED's marks (the
     * unaccelerated runs spread +-0.5% over RANDOM_SEED): each draw is held to 2%, their mean to
     * 1% (test_predict; docs/netsim.md). */
    CHECK_REL(fast.r.iteration_s, ref.r.iteration_s, congested ? 0.02 : 0.01);
    printf("    memo: %llu hits, %llu misses, %llu not eligible, %llu aborts\n", (unsigned long long)acc->memo_hits,
           (unsigned long long)acc->memo_misses, (unsigned long long)acc->memo_ineligible,
           (unsigned long long)acc->memo_aborts);
    /* the DP ring's steps repeat: replayed from the memo (memo.c); the congested spine's flows
     * share data ports, which the memo does not replay */
    if (!congested && strstr(name, "DP")) CHECK_MSG(acc->memo_hits > 0, "%s: no memo hit", name);
    CHECK_MSG(acc->enabled && (acc->fast_forwards > 0 || acc->memo_hits > 0), "%s: no fast-forward or replay", name);
    CHECK(!ref.x.net.packet.accel.enabled);
    /* per communication op: its duration */
    size_t cap = 0, n = 0;
    for (size_t r = 0; r < ref.w->nranks; r++) cap += ref.w->ranks[r].nops;
    double *a = malloc((cap ? cap : 1) * sizeof *a), *b = malloc((cap ? cap : 1) * sizeof *b);
    for (size_t r = 0; r < ref.w->nranks && r < fast.w->nranks; r++)
        for (size_t i = 0; i < ref.w->ranks[r].nops && i < fast.w->ranks[r].nops; i++) {
            int k = ref.w->ranks[r].ops[i].kind;
            if (k != ORR_OP_COLL && k != ORR_OP_SEND && k != ORR_OP_RECV) continue;
            const orr_op_time *ta = &ref.x.ranks[r].t[i], *tb = &fast.x.ranks[r].t[i];
            if (ta->end_ps - ta->start_ps <= 0) continue;
            a[n] = (double)(ta->end_ps - ta->start_ps);
            b[n++] = (double)(tb->end_ps - tb->start_ps);
        }
    printf("    %zu communication ops\n", n);
    CHECK(n > 0);
    check_errors(name, compare(a, b, n), !congested);
    free(a);
    free(b);
    orr_prediction_free(&ref);
    orr_prediction_free(&fast);
    return err;
}

static void test_predict(void)
{
    static const char *const dp[] = {"--tp", "8", "--dp", "2", "--no-dist-opt"};
    llm("DP ring 160 MB + TP", dp, 5, 0);
    /* every inter-node flow across a 2:1 spine, over four draws of RED's marks; accelerated runs
     * -0.97, -0.54, -0.90, -0.31% (docs/netsim.md) */
    double mean = 0;
    for (int k = 1; k <= 4; k++) {
        char seed[4], name[64];
        snprintf(seed, sizeof seed, "%d", k);
        snprintf(name, sizeof name, "same, congested spine, %d", k);
        const char *const cong[] = {"--tp", "8", "--dp", "2", "--no-dist-opt", "--packet-seed", seed};
        mean += llm(name, cong, 7, 1) / 4;
    }
    printf("congested spine: mean iteration error over 4 draws %+.4f%%\n", 100 * mean);
    CHECK_MSG(fabs(mean) <= 0.01, "congested spine: mean iteration error %+.4f%% (at most 1%%)", 100 * mean);
    /* the fast-forward alone on another RED draw: a partition frozen while its DCQCN flows
     * recovered from a cut (flat rate until the next RP_TIMER) ran at the cut rate, +6.1% */
    static const char *const seed3[] = {"--tp", "8", "--dp", "2", "--no-dist-opt", "--no-memo", "--packet-seed", "3"};
    llm("same, seed 3, no memo", seed3, 8, 1);
    static const char *const pp[] = {"--tp", "8", "--pp", "2", "--dp", "1", "--gbs", "8"};
    llm("PP send/recv + TP", pp, 8, 0);
    /* MoE: gpt-oss-20b with its experts over 16 GPUs of two nodes (EP 16): the dispatch and
     * combine all-to-alls cross the network, the DP all-reduce too */
    static const char *const ep[] = {"--model", "gpt-oss-20b", "--tp", "1", "--ep", "16", "--gbs", "16", "--seq", "2048"};
    llm("EP all-to-all (MoE)", ep, 10, 0);
}

int main(void)
{
    test_netsim();
    test_predict();
    return check_done();
}
