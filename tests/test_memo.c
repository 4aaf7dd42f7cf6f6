/*
 * Memoization of unsteady phases (src/net/packet/memo.c, paper 000 §4.2-4.4), cheap enough for the
 * sanitizer build: 8 steps of 8 flows of 500 KB, host 2p -> 2p+1 on the k=4 fat tree of
 * data/validation/ns3 (each flow alone on its data path), DCQCN, plus a 300 KB flow 4 -> 1 that
 * enters the data paths of two replayed flows in step 5
 * (data/validation/wormhole/flows_k4_pairs_steps.txt). The reference is the same engine with
 * --no-accel.
 *
 * Checked: flows are replayed (hits); the two flows the entering flow will meet are simulated
 * (it is in the flow list: a replay it entered would have to be turned back into a flow at an
 * estimated state); at least 3x fewer events; per-flow FCT error mean <= 1%, p99 (nearest
 * rank) <= 3%, mean and p99 FCT within 1% and 3%; two runs give the same FCT file; --no-memo
 * replays nothing. --memo FILE, on 8 flows of 8 sizes (flows_k4_pairs_sizes.txt: nothing repeats
 * within a run): a second run reads what the first wrote, replays every flow, takes at least 2x
 * fewer events and writes the same FCT file, as a run of the 64 flows does after one of them; an
 * unopenable file is an error naming --memo. A recording that RED marks is given up and its
 * follower simulated. A flow added while the run goes (as orrery predict adds them) on a replay's
 * data path turns it back into a simulated flow (an abort), FCTs within 3%. The FCG key: nauty labels a permuted graph the same way.
 */
#include "check.h"
#include "net/packet/pkt_internal.h"
#include "orrery/packet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NS3 ORRERY_VALIDATION_DIR "/ns3/"
#define FLOWS ORRERY_VALIDATION_DIR "/wormhole/flows_k4_pairs_steps.txt"
#define SIZES ORRERY_VALIDATION_DIR "/wormhole/flows_k4_pairs_sizes.txt"

static int no_window; /* HAS_WIN 0: let the queue build (test_noisy) */

static int run_on(const char *topo, const char *flows, int accel, int memo, const char *memo_path, orr_netsim_result *r,
                  orr_err *err)
{
    orr_packet_config cfg;
    orr_packet_config_default(&cfg);
    orr_buf warn = {0};
    int rc = orr_packet_config_read(&cfg, NS3 "config_dcqcn.txt", &warn, err);
    orr_buf_free(&warn);
    CHECK_MSG(rc == 0, "%s", err->msg);
    if (rc) return -1;
    cfg.accel = accel;
    cfg.memo = memo;
    if (no_window) cfg.has_win = 0;
    if (memo_path) snprintf(cfg.memo_path, sizeof cfg.memo_path, "%s", memo_path);
    orr_topo t;
    rc = orr_topo_read_hpcc(&t, topo, err);
    CHECK_MSG(rc == 0, "%s", err->msg);
    if (rc) return -1;
    rc = orr_netsim_run_with(&t, &cfg, flows, r, err);
    orr_topo_free(&t);
    return rc;
}

static int run_flows(const char *flows, int accel, int memo, const char *memo_path, orr_netsim_result *r, orr_err *err)
{
    return run_on(NS3 "topo_k4.txt", flows, accel, memo, memo_path, r, err);
}

static int run(int accel, int memo, const char *memo_path, orr_netsim_result *r, orr_err *err)
{
    return run_flows(FLOWS, accel, memo, memo_path, r, err);
}

/* FCT (ns) per flow, by its line "sip dip sport dport size start fct alone" in the FCT file */
typedef struct row {
    char key[128];
    double fct;
} row;

static int cmp_row(const void *a, const void *b) { return strcmp(((const row *)a)->key, ((const row *)b)->key); }
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t rows(const orr_buf *b, row *out, size_t cap)
{
    size_t n = 0;
    const char *p = b->s;
    while (p && *p && n < cap) {
        char a[16], c[16], d[16], e[16];
        unsigned long long size, start, fct;
        if (sscanf(p, "%15s %15s %15s %15s %llu %llu %llu", a, c, d, e, &size, &start, &fct) == 7) {
            snprintf(out[n].key, sizeof out[n].key, "%s %s %s %s %llu", a, c, d, e, start);
            out[n++].fct = (double)fct;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    qsort(out, n, sizeof *out, cmp_row);
    return n;
}

static double rank99(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_dbl);
    size_t k = (size_t)ceil(0.99 * (double)n);
    return v[k ? k - 1 : 0];
}

static void test_accuracy(void)
{
    orr_err err;
    orr_netsim_result ref, fast, again, off;
    if (run(0, 0, NULL, &ref, &err)) return;
    if (run(1, 1, NULL, &fast, &err)) return;
    const orr_packet_accel_stats *a = &fast.accel;
    printf("memo: %llu -> %llu events (%.2fx); %llu hits, %llu misses, %llu not eligible, %llu recorded, %llu aborts\n",
           (unsigned long long)ref.stats.events, (unsigned long long)fast.stats.events,
           (double)ref.stats.events / (double)(fast.stats.events ? fast.stats.events : 1),
           (unsigned long long)a->memo_hits, (unsigned long long)a->memo_misses, (unsigned long long)a->memo_ineligible,
           (unsigned long long)a->memo_recorded, (unsigned long long)a->memo_aborts);
    CHECK(a->memo_enabled);
    CHECK_MSG(a->memo_hits >= 48, "%llu hits", (unsigned long long)a->memo_hits);
    /* the late flow is in the flow list: the two flows it enters are simulated, not replayed */
    CHECK_EQ_I64(a->memo_aborts, 0);
    CHECK(a->memo_ineligible >= 3);
    CHECK(a->memo_recorded >= 1);
    CHECK_MSG(fast.stats.events * 3 <= ref.stats.events, "%llu -> %llu events", (unsigned long long)ref.stats.events,
              (unsigned long long)fast.stats.events);
    CHECK_EQ_I64(fast.fct.flows, ref.fct.flows);
    CHECK_EQ_I64(fast.stats.data_packets, ref.stats.data_packets);
    row ra[128], rb[128];
    size_t na = rows(&ref.fct_text, ra, 128), nb = rows(&fast.fct_text, rb, 128);
    CHECK_EQ_I64(na, 65);
    CHECK_EQ_I64(nb, na);
    double rel[128], fa[128], fb[128], mean = 0, sa = 0, sb = 0;
    size_t n = 0;
    for (size_t i = 0; i < na && i < nb; i++) {
        CHECK_MSG(strcmp(ra[i].key, rb[i].key) == 0, "flow %s missing", ra[i].key);
        rel[n] = fabs(rb[i].fct - ra[i].fct) / ra[i].fct;
        mean += rel[n];
        fa[n] = ra[i].fct;
        fb[n] = rb[i].fct;
        sa += fa[n];
        sb += fb[n];
        n++;
    }
    mean /= (double)(n ? n : 1);
    double p99 = rank99(rel, n), pa = rank99(fa, n), pb = rank99(fb, n);
    printf("per-flow FCT error: mean %.4f%%, p99 %.4f%%; mean FCT %+.4f%%, p99 FCT %+.4f%%\n", 100 * mean, 100 * p99,
           100 * (sb / sa - 1), 100 * (pb / pa - 1));
    CHECK_MSG(mean <= 0.01, "mean per-flow FCT error %.4f%%", 100 * mean);
    CHECK_MSG(p99 <= 0.03, "p99 per-flow FCT error %.4f%%", 100 * p99);
    CHECK_REL(sb, sa, 0.01);
    CHECK_REL(pb, pa, 0.03);
    /* deterministic */
    if (run(1, 1, NULL, &again, &err) == 0) {
        CHECK(again.fct_text.n == fast.fct_text.n && memcmp(again.fct_text.s, fast.fct_text.s, fast.fct_text.n) == 0);
        CHECK_EQ_I64(again.stats.events, fast.stats.events);
        orr_netsim_result_free(&again);
    }
    /* --no-memo: the acceleration alone */
    if (run(1, 0, NULL, &off, &err) == 0) {
        CHECK(!off.accel.memo_enabled && off.accel.memo_hits == 0);
        CHECK(off.stats.events > fast.stats.events);
        orr_netsim_result_free(&off);
    }
    orr_netsim_result_free(&ref);
    orr_netsim_result_free(&fast);
}

static void test_file(void)
{
    char path[] = "/tmp/orrery_test_memo_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    orr_err err;
    orr_netsim_result r1, r2;
    int rc = run_flows(SIZES, 1, 1, path, &r1, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) goto out;
    rc = run_flows(SIZES, 1, 1, path, &r2, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) {
        orr_netsim_result_free(&r1);
        goto out;
    }
    printf("--memo: first run %llu events, %llu saved; second %llu events, %llu loaded, %llu hits, %llu misses\n",
           (unsigned long long)r1.stats.events, (unsigned long long)r1.accel.memo_saved,
           (unsigned long long)r2.stats.events, (unsigned long long)r2.accel.memo_loaded,
           (unsigned long long)r2.accel.memo_hits, (unsigned long long)r2.accel.memo_misses);
    CHECK(r1.accel.memo_saved >= 1 && r1.accel.memo_loaded == 0);
    CHECK_EQ_I64(r2.accel.memo_loaded, r1.accel.memo_saved);
    CHECK_EQ_I64(r2.accel.memo_misses, 0);
    CHECK_EQ_I64(r2.accel.memo_saved, 0);
    CHECK_MSG(r2.stats.events * 2 <= r1.stats.events, "second run %llu events, first %llu",
              (unsigned long long)r2.stats.events, (unsigned long long)r1.stats.events);
    CHECK(r1.fct_text.n == r2.fct_text.n && r1.fct_text.n > 0 && memcmp(r1.fct_text.s, r2.fct_text.s, r1.fct_text.n) == 0);
    orr_netsim_result_free(&r1);
    orr_netsim_result_free(&r2);
    /* the 64 flows after them: the same FCT file as without the file */
    orr_netsim_result r4, r5;
    if (run(1, 1, path, &r4, &err) == 0) {
        if (run(1, 1, NULL, &r5, &err) == 0) {
            CHECK(r4.fct_text.n == r5.fct_text.n && memcmp(r4.fct_text.s, r5.fct_text.s, r4.fct_text.n) == 0);
            orr_netsim_result_free(&r5);
        }
        orr_netsim_result_free(&r4);
    }
    /* a file that cannot be opened: the error names the flag */
    orr_netsim_result r3;
    rc = run(1, 1, "/nonexistent-dir/memo.db", &r3, &err);
    CHECK(rc != 0);
    if (rc) CHECK_MSG(strstr(err.msg, "--memo /nonexistent-dir/memo.db") != NULL, "%s", err.msg);
    else orr_netsim_result_free(&r3);
out:
    unlink(path);
}

/* nauty: a 4-cycle with one heavier edge, labelled from two vertex orders, gives one key */
static void test_fcg(void)
{
    /* vertices 0-1-2-3-0, colours: 0 and 2 rank 0, 1 and 3 rank 1 */
    uint32_t w1[16] = {0}, r1[4] = {0, 1, 0, 1}, o1[4];
    uint32_t e[4][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
    for (int i = 0; i < 4; i++) w1[e[i][0] * 4 + e[i][1]] = w1[e[i][1] * 4 + e[i][0]] = 1;
    /* the same graph with vertices renamed by p */
    uint32_t p[4] = {2, 0, 3, 1}, w2[16] = {0}, r2[4], o2[4];
    for (int i = 0; i < 4; i++) r2[p[i]] = r1[i];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) w2[p[i] * 4 + p[j]] = w1[i * 4 + j];
    CHECK(memo_fcg_canon(4, r1, w1, o1) == 0);
    CHECK(memo_fcg_canon(4, r2, w2, o2) == 0);
    int same = 1;
    for (int i = 0; i < 4; i++) {
        if (r1[o1[i]] != r2[o2[i]]) same = 0;
        for (int j = 0; j < 4; j++)
            if (w1[o1[i] * 4 + o1[j]] != w2[o2[i] * 4 + o2[j]]) same = 0;
    }
    CHECK_MSG(same, "the canonical forms differ");
    /* a path 0-1-2-3 with the same colours is not the cycle */
    uint32_t w3[16] = {0}, o3[4];
    for (int i = 0; i < 3; i++) w3[e[i][0] * 4 + e[i][1]] = w3[e[i][1] * 4 + e[i][0]] = 1;
    CHECK(memo_fcg_canon(4, r1, w3, o3) == 0);
    int differ = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            if (w1[o1[i] * 4 + o1[j]] != w3[o3[i] * 4 + o3[j]]) differ = 1;
    CHECK(differ);
}

/* Two flows of one shape start together, each from a 100 Gb/s host into a 25 Gb/s one through a
 * switch: the first records, the second follows it; RED marks the first's packets (a random draw),
 * so the recording is given up and the follower becomes a simulated flow at that instant. */
static void test_noisy(void)
{
    char topo[] = "/tmp/orrery_test_memo_topo_XXXXXX", flows[] = "/tmp/orrery_test_memo_flows_XXXXXX";
    int ft = mkstemp(topo), ff = mkstemp(flows);
    CHECK(ft >= 0 && ff >= 0);
    if (ft < 0 || ff < 0) return;
    FILE *t = fdopen(ft, "w"), *f = fdopen(ff, "w");
    fprintf(t, "5 1 4\n4\n0 4 100Gbps 0.001ms 0\n1 4 25Gbps 0.001ms 0\n2 4 100Gbps 0.001ms 0\n3 4 25Gbps 0.001ms 0\n");
    fprintf(f, "2\n0 1 3 100 2000000 2.0\n2 3 3 100 2000000 2.0\n");
    fclose(t);
    fclose(f);
    orr_err err;
    orr_netsim_result ref, fast;
    no_window = 1;
    if (run_on(topo, flows, 0, 0, NULL, &ref, &err) == 0) {
        if (run_on(topo, flows, 1, 1, NULL, &fast, &err) == 0) {
            const orr_packet_accel_stats *a = &fast.accel;
            printf("noisy: %llu ECN marks; %llu hits (%llu followers), %llu noisy, %llu aborts; mean FCT %.1f vs %.1f us\n",
                   (unsigned long long)fast.stats.ecn_marks, (unsigned long long)a->memo_hits,
                   (unsigned long long)a->memo_followers, (unsigned long long)a->memo_noisy,
                   (unsigned long long)a->memo_aborts, fast.fct.mean_fct_ns / 1e3, ref.fct.mean_fct_ns / 1e3);
            CHECK(ref.stats.ecn_marks > 0);
            CHECK_EQ_I64(a->memo_followers, 1);
            CHECK(a->memo_noisy >= 1 && a->memo_aborts >= 1);
            CHECK_EQ_I64(a->memo_recorded, 0);
            CHECK_EQ_I64(fast.fct.flows, 2);
            /* RED's draws come in another order: a sample of the same process, not the same one */
            CHECK_REL(fast.fct.mean_fct_ns, ref.fct.mean_fct_ns, 0.05);
            orr_netsim_result_free(&fast);
        }
        orr_netsim_result_free(&ref);
    }
    no_window = 0;
    unlink(topo);
    unlink(flows);
}

/* A flow that arrives unannounced (as orrery predict's do) on the data path of a replay turns it
 * back into a simulated flow (an abort) at the share of its bytes sent by then. */
typedef struct late_ctx {
    orr_packet_sim *s;
} late_ctx;

static void add_late(void *ctx, uint64_t arg)
{
    late_ctx *c = ctx;
    (void)arg;
    orr_packet_add_flow(c->s, 4, 3, 300000, 0, 3, 10000, 100, 7, NULL, NULL, 0); /* into host 3, as 2 -> 3 runs */
}

static int run_late(int memo, double *fct_ps, orr_packet_accel_stats *acc)
{
    orr_err err;
    orr_packet_config cfg;
    orr_packet_config_default(&cfg);
    orr_buf warn = {0};
    int rc = orr_packet_config_read(&cfg, NS3 "config_dcqcn.txt", &warn, &err);
    orr_buf_free(&warn);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return -1;
    cfg.memo = memo;
    orr_topo t;
    rc = orr_topo_read_hpcc(&t, NS3 "topo_k4.txt", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return -1;
    orr_engine e;
    orr_engine_init(&e);
    orr_packet_sim *s = orr_packet_sim_create(&e, &t, &cfg, &err);
    CHECK(s != NULL);
    if (!s) {
        orr_engine_free(&e);
        orr_topo_free(&t);
        return -1;
    }
    int64_t t0 = 2 * ORR_PS_PER_S, step = 100 * ORR_PS_PER_US;
    orr_packet_add_flow(s, 0, 1, 500000, t0, 3, 10000, 100, 1, NULL, NULL, 0);        /* recorded */
    orr_packet_add_flow(s, 2, 3, 500000, t0 + step, 3, 10000, 100, 2, NULL, NULL, 0); /* replayed */
    late_ctx c = {s};
    orr_engine_at(&e, t0 + step + 20 * ORR_PS_PER_US, add_late, &c, 0);
    orr_engine_run(&e);
    orr_packet_accel_stats_get(s, acc);
    CHECK_EQ_I64(orr_packet_flow_count(s), 3);
    for (uint32_t i = 0; i < 3 && i < orr_packet_flow_count(s); i++) {
        orr_packet_flow_info fi;
        orr_packet_flow_get(s, i, &fi);
        CHECK(fi.finish_ps > fi.start_ps && fi.snd_una == fi.bytes);
        fct_ps[i] = (double)(fi.finish_ps - fi.start_ps);
    }
    orr_packet_sim_free(s);
    orr_engine_free(&e);
    orr_topo_free(&t);
    return 0;
}

static void test_abort(void)
{
    double ref[3] = {0}, fast[3] = {0};
    orr_packet_accel_stats a0, a1;
    if (run_late(0, ref, &a0) || run_late(1, fast, &a1)) return;
    printf("abort: %llu hits, %llu aborts; FCT %.1f / %.1f / %.1f us vs %.1f / %.1f / %.1f us\n",
           (unsigned long long)a1.memo_hits, (unsigned long long)a1.memo_aborts, fast[0] / 1e6, fast[1] / 1e6,
           fast[2] / 1e6, ref[0] / 1e6, ref[1] / 1e6, ref[2] / 1e6);
    CHECK(!a0.memo_enabled && a1.memo_enabled);
    CHECK_EQ_I64(a1.memo_hits, 1);
    CHECK_EQ_I64(a1.memo_aborts, 1);
    for (int i = 0; i < 3; i++) CHECK_REL(fast[i], ref[i], 0.03);
}

int main(void)
{
    test_fcg();
    test_accuracy();
    test_file();
    test_noisy();
    test_abort();
    return check_done();
}
