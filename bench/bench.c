/*
 * bench.c - speed and memory of `orrery predict` on the reference configurations (issue 2):
 *   GPT-3 175B on 1,024 H100 (TP8 PP16 interleaved)   target < 0.5 s on one core
 *   Llama-3-405B-shaped on 16,384 H100 (TP8 PP16 DP128) target < 5 s on one core
 *   DeepSeek-V3 on 2,048 H100 (PP16 EP64, MoE, issue 20)  target < 2 s on one core
 * and (issue 4) GPT-3 175B on 1,024 H100 with --net flow (rail-optimised fat tree, every GPU's
 * flows), target < 30 s on one core; `orrery-bench --flow` runs that one alone, `orrery-bench
 * --flow SPEC...` others (examples/gpt3_13b_256_h100.yaml is the mid case), and --no-symmetry
 * before the specs simulates every rank (the way --net flow ran before its runs were collapsed).
 * `orrery-bench --packet` runs examples/gpt3_13b_64_h100_packet.yaml (GPT-3 13B, TP8 x DP8 on 64
 * H100, --net packet: the inter-node traffic packet by packet), target: under a second (0.3 s with symmetry).
 * Prints, per configuration, the wall time of each stage (generate, estimate, execute, report),
 * ops and events simulated, events/s, and the process's peak RSS. Run: `make bench` (or
 * ./build/orrery-bench [SPEC ...] to time other specs).
 *
 * `orrery-bench search [-j N]` times an exhaustive configuration search (search.c).
 *
 * `orrery-bench netsim [DIR]` times the packet engine on the ns-3 reference scenarios of
 * data/validation/ns3 (k4 and k8, HPCC and DCQCN) next to ns-3's events and wall time from the
 * run_*.log files there.
 *
 * `orrery-bench wormhole [SPEC...]` (issue 22) runs each SPEC (default
 * examples/gpt3_13b_64_h100_packet.yaml) under --net packet with the Wormhole acceleration and
 * with --no-accel, with Wormhole alone (--no-memo) and twice with --memo FILE (the second run
 * reading what the first wrote), in the same process, five rounds of the five, and prints the
 * ratios to --no-accel (events, packet events, wall and CPU time: medians over the rounds) and the
 * iteration times; then the packet engine's events/s on k=8 and k=16 fat trees (100 Gb/s,
 * HPCC) with the same traffic per host (a ring: host i sends 2 MB to host i+1), unaccelerated;
 * `orrery-bench fabric [ROUNDS]` runs only that comparison (issue 22 item 6).
 *
 * `orrery-bench memo` runs `orrery netsim` twice with --memo FILE on flows that do not repeat within
 * a run and prints the second run's ratios to the first (issue 22's memo point).
 */
#include "orrery/packet.h"
#include "orrery/estimate.h"
#include "orrery/orrery.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this process: on a shared virtual machine it leaves out the time the host gave to
 * others (steal), which the wall time counts. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* Times one spec; net: the backend to use instead of the spec's (ORR_NET_KIND_COUNT: the spec's);
 * no_symmetry: simulate every rank. */
static int bench_one(const char *path, orr_net_kind net, int no_symmetry)
{
    orr_spec s;
    orr_err err = {{0}};
    orr_spec_init(&s);
    if (orr_spec_load_file(&s, path, &err) == 0) {
        if (net != ORR_NET_KIND_COUNT) s.net = net;
        if (no_symmetry) s.symmetry = 0;
    }
    if (err.msg[0] || orr_spec_resolve(&s, &err) < 0) {
        fprintf(stderr, "orrery-bench: %s\n", err.msg);
        return 1;
    }
    double t0 = now_s();
    orr_workload *w = orr_gen_training(&s, &err);
    if (!w) {
        fprintf(stderr, "orrery-bench: %s\n", err.msg);
        return 1;
    }
    double t1 = now_s();
    orr_estimate_workload(w, &s.gpu);
    double t2 = now_s();
    orr_net_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gpus = s.gpus;
    cfg.topo = s.topo;
    cfg.pxn = s.pxn;
    cfg.cc = s.cc;
    cfg.packet_payload_bytes = s.packet_payload_bytes;
    orr_exec_opts o = {.net = s.net, .launch_ps = s.launch_ps, .launch_queue_depth = ORR_LAUNCH_QUEUE_DEPTH, .net_cfg = &cfg,
                       .mem_capacity_bytes = orr_spec_alloc_capacity(&s), .mem_caching = s.caching_allocator};
    orr_exec_result x;
    if (orr_execute(w, &s.gpu, &s.cluster, &o, &x, &err) < 0) {
        fprintf(stderr, "orrery-bench: %s\n", err.msg);
        orr_workload_free(w);
        return 1;
    }
    double t3 = now_s();
    orr_report_info info = {.title = "bench", .gpu_name = s.gpu.name, .peak_flops_per_gpu = s.gpu.peak_flops[s.precision]};
    orr_result r;
    if (orr_result_build(&r, w, &x, &info, &err) < 0) {
        fprintf(stderr, "orrery-bench: %s\n", err.msg);
        return 1;
    }
    double t4 = now_s();
    size_t ops = 0;
    for (size_t i = 0; i < w->nranks; i++) ops += w->ranks[i].nops;
    printf("%s%s%s%s\n", path, s.net != ORR_NET_ANALYTIC ? " --net " : "", s.net != ORR_NET_ANALYTIC ? orr_net_kind_name(s.net) : "",
           s.symmetry ? "" : " --no-symmetry");
    printf("  %u GPUs, %zu unique ranks, %zu ops, %llu events; predicted iteration %.3f s, %.1f TFLOP/s/GPU\n",
           s.gpus, w->nranks, ops, (unsigned long long)x.events, r.iteration_s, r.tflops_per_gpu);
    if (x.net.present && x.net.backend == ORR_NET_FLOW)
        printf("  %llu flows, %llu of them inside %u mirrored servers (not simulated)\n",
               (unsigned long long)x.net.flows, (unsigned long long)x.net.mirrored_flows, x.net.mirrored_servers);
    printf("  wall: generate %.3f s, estimate %.3f s, execute %.3f s, report %.3f s, total %.3f s; "
           "%.2f M events/s; peak RSS %.1f MiB\n",
           t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0, (double)x.events / (t3 - t2) / 1e6, peak_rss_mib());
    orr_result_free(&r);
    orr_exec_result_free(&x);
    orr_workload_free(w);
    return 0;
}

/* ns-3's figures from a run_*.log line "finished flows=N events=E sim_time_ns=T setup_wall_s=S run_wall_s=R". */
static int ns3_log(const char *path, unsigned long long *events, double *run_s)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        const char *e = strstr(line, "events="), *r = strstr(line, "run_wall_s=");
        if (e && r && sscanf(e, "events=%llu", events) == 1 && sscanf(r, "run_wall_s=%lf", run_s) == 1) found = 0;
    }
    fclose(f);
    return found;
}

static int bench_netsim(const char *dir)
{
    static const char *const sc[][4] = {
        {"k4 HPCC", "topo_k4.txt", "flows_k4.txt", "hpcc"},
        {"k4 DCQCN", "topo_k4.txt", "flows_k4.txt", "dcqcn"},
        {"k8 HPCC", "topo_k8.txt", "flows_k8_1k_load30.txt", "k8_hpcc"},
        {"k8 DCQCN", "topo_k8.txt", "flows_k8_1k_load30.txt", "k8_dcqcn"},
    };
    int rc = 0;
    printf("%-9s %12s %9s %10s | %12s %9s %8s\n", "scenario", "events", "run wall", "events/s", "ns-3 events",
           "ns-3 wall", "speed-up");
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
        char topo[1024], flows[1024], cfg[1024], log[1024];
        snprintf(topo, sizeof topo, "%s/%s", dir, sc[i][1]);
        snprintf(flows, sizeof flows, "%s/%s", dir, sc[i][2]);
        snprintf(cfg, sizeof cfg, "%s/config_%s.txt", dir, sc[i][3]);
        snprintf(log, sizeof log, "%s/run_%s.log", dir, sc[i][3]);
        orr_netsim_result r;
        orr_buf warn = {0};
        orr_err err = {{0}};
        int bad = orr_netsim_run(topo, flows, cfg, &r, &warn, &err);
        orr_buf_free(&warn);
        if (bad) {
            fprintf(stderr, "orrery-bench: %s\n", err.msg);
            rc = 1;
            continue;
        }
        unsigned long long ns3_events = 0;
        double ns3_s = 0;
        int have = ns3_log(log, &ns3_events, &ns3_s) == 0;
        printf("%-9s %12llu %8.2fs %9.2fM | %12llu %8.2fs %7.1fx\n", sc[i][0], (unsigned long long)r.stats.events,
               r.wall_s, (double)r.stats.events / r.wall_s / 1e6, ns3_events, ns3_s, have ? ns3_s / r.wall_s : 0.0);
        orr_netsim_result_free(&r);
    }
    printf("peak RSS %.1f MiB\n", peak_rss_mib());
    return rc;
}

/* ---- orrery-bench wormhole ---- */

typedef struct packet_run {
    double wall_s, cpu_s, iteration_s;
    uint64_t events, packet_events;
    orr_packet_accel_stats acc;
    double *op_ps;   /* duration of every communication op (collective, send, receive), in rank order */
    size_t nops;
} packet_run;

/* no_accel: 1 --no-accel, 2 --no-memo (Wormhole alone), 0 both; memo: a --memo FILE or NULL */
static int predict_packet(const char *path, int no_accel, const char *memo, packet_run *o)
{
    orr_spec s;
    orr_err err = {{0}};
    orr_spec_init(&s);
    if (orr_spec_load_file(&s, path, &err) == 0) {
        s.net = ORR_NET_PACKET;
        s.no_accel = no_accel == 1;
        s.no_memo = no_accel == 2;
        if (memo) snprintf(s.memo_path, sizeof s.memo_path, "%s", memo);
    }
    if (err.msg[0] || orr_spec_resolve(&s, &err) < 0) {
        fprintf(stderr, "orrery-bench: %s\n", err.msg);
        return 1;
    }
    orr_prediction p;
    double t0 = now_s(), c0 = cpu_s();
    if (orr_predict(&s, &p, &err) < 0) {
        fprintf(stderr, "orrery-bench: %s\n", err.msg);
        return 1;
    }
    o->wall_s = now_s() - t0;
    o->cpu_s = cpu_s() - c0;
    o->iteration_s = p.r.iteration_s;
    o->events = p.x.events;
    o->packet_events = p.x.net.packet.events;
    o->acc = p.x.net.packet.accel;
    size_t cap = 0;
    for (size_t r = 0; r < p.w->nranks; r++) cap += p.w->ranks[r].nops;
    o->op_ps = malloc((cap ? cap : 1) * sizeof *o->op_ps);
    o->nops = 0;
    for (size_t r = 0; r < p.w->nranks; r++)
        for (size_t i = 0; i < p.w->ranks[r].nops; i++) {
            int k = p.w->ranks[r].ops[i].kind;
            if (k == ORR_OP_COLL || k == ORR_OP_SEND || k == ORR_OP_RECV)
                o->op_ps[o->nops++] = (double)(p.x.ranks[r].t[i].end_ps - p.x.ranks[r].t[i].start_ps);
        }
    orr_prediction_free(&p);
    return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Relative error of every communication op's duration in r against ref: mean and p99 (nearest rank). */
static void op_errors(const packet_run *ref, const packet_run *r, double *mean, double *p99)
{
    size_t n = ref->nops < r->nops ? ref->nops : r->nops, m = 0;
    double *rel = malloc((n ? n : 1) * sizeof *rel), sum = 0;
    for (size_t i = 0; i < n; i++)
        if (ref->op_ps[i] > 0) {
            rel[m] = fabs(r->op_ps[i] - ref->op_ps[i]) / ref->op_ps[i];
            sum += rel[m++];
        }
    qsort(rel, m, sizeof *rel, cmp_dbl);
    size_t k = (size_t)ceil(0.99 * (double)m);
    *mean = m ? sum / (double)m : 0;
    *p99 = m ? rel[k ? k - 1 : 0] : 0;
    free(rel);
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

#define WH_ROUNDS 5 /* rounds of the five runs; wall times and ratios are their medians */
#define WH_RUNS 5   /* --no-accel, --no-memo, Wormhole + memo, --memo FILE twice */

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* r: the run of round 0 (its events, iteration and op durations: every round's are the same); wall:
 * the median over the rounds; wall and CPU-time ratios to --no-accel: the medians of the rounds' own
 * ratios (a round runs both, so a drift of the machine's speed between rounds cancels). */
static void print_run(const char *name, const packet_run *r, const packet_run *off, double wall, double wall_ratio,
                      double cpu_ratio)
{
    double mean, p99;
    op_errors(off, r, &mean, &p99);
    printf("  %-22s %10llu events (%9llu packet), %6.3f s wall; iteration %.6f s (%+.4f%%); ratio to --no-accel: "
           "events %.2fx, packet events %.2fx, wall %.2fx (CPU time %.2fx); %zu communication ops' durations: error mean %.4f%%, "
           "p99 %.4f%%\n",
           name, (unsigned long long)r->events, (unsigned long long)r->packet_events, wall, r->iteration_s,
           100 * (ratio(r->iteration_s, off->iteration_s) - 1), ratio((double)off->events, (double)r->events),
           ratio((double)off->packet_events, (double)r->packet_events), wall_ratio, cpu_ratio, r->nops,
           100 * mean, 100 * p99);
}

/* One round: the same spec --no-accel, with Wormhole alone (--no-memo), with Wormhole and the memo,
 * and twice with --memo FILE (the second run reads what the first wrote, a new file each round),
 * all in this process. */
static int wormhole_round(const char *path, packet_run run[WH_RUNS])
{
    char memo[] = "/tmp/orrery-bench-memo-XXXXXX";
    int fd = mkstemp(memo);
    if (fd < 0) return 1;
    close(fd);
    memset(run, 0, WH_RUNS * sizeof *run);
    int rc = predict_packet(path, 1, NULL, &run[0]) || predict_packet(path, 2, NULL, &run[1]) ||
             predict_packet(path, 0, NULL, &run[2]) || predict_packet(path, 0, memo, &run[3]) ||
             predict_packet(path, 0, memo, &run[4]);
    unlink(memo);
    return rc;
}

static int bench_wormhole_spec(const char *path)
{
    static const char *const names[WH_RUNS] = {"--no-accel", "Wormhole, --no-memo", "Wormhole + memo",
                                               "--memo FILE, 1st run", "--memo FILE, 2nd run"};
    packet_run first[WH_RUNS], run[WH_RUNS];
    double wall[WH_RUNS][WH_ROUNDS], rel[WH_RUNS][WH_ROUNDS], crel[WH_RUNS][WH_ROUNDS], second[WH_ROUNDS];
    int rc = 0, same = 1;
    for (int k = 0; k < WH_ROUNDS && !rc; k++) {
        packet_run *r = k ? run : first;
        rc = wormhole_round(path, r);
        for (int i = 0; i < WH_RUNS && !rc; i++) {
            wall[i][k] = r[i].wall_s;
            rel[i][k] = ratio(r[0].wall_s, r[i].wall_s);
            crel[i][k] = ratio(r[0].cpu_s, r[i].cpu_s);
            if (k) same &= r[i].iteration_s == first[i].iteration_s && r[i].events == first[i].events;
        }
        if (!rc) second[k] = ratio(r[3].wall_s, r[4].wall_s);
        if (k)
            for (int i = 0; i < WH_RUNS; i++) free(run[i].op_ps);
    }
    if (rc) {
        for (int i = 0; i < WH_RUNS; i++) free(first[i].op_ps);
        return 1;
    }
    printf("%s --net packet (%d rounds of the five runs; wall: medians)\n", path, WH_ROUNDS);
    for (int i = 0; i < WH_RUNS; i++)
        print_run(names[i], &first[i], &first[0], median_of(wall[i], WH_ROUNDS), median_of(rel[i], WH_ROUNDS),
                  median_of(crel[i], WH_ROUNDS));
    const packet_run *m1 = &first[3], *m2 = &first[4], *on = &first[2];
    printf("  second / first run with --memo FILE: events %.2fx fewer, packet events %.2fx fewer, wall %.2fx less; "
           "iteration %s; every round's events and iterations %s\n", ratio((double)m1->events, (double)m2->events),
           ratio((double)m1->packet_events, (double)m2->packet_events), median_of(second, WH_ROUNDS),
           m1->iteration_s == m2->iteration_s ? "identical" : "DIFFERENT", same ? "the same" : "NOT THE SAME");
    printf("  Wormhole + memo: %llu partitions, %llu fast-forwards (%llu skip-backs), %.3f GB fast-forwarded, steady "
           "fraction %.4f; memo %llu hits, %llu misses, %llu not eligible, %llu recorded, %llu aborts\n",
           (unsigned long long)on->acc.partitions, (unsigned long long)on->acc.fast_forwards,
           (unsigned long long)on->acc.skip_backs, (double)on->acc.skipped_bytes / 1e9, orr_packet_steady_fraction(&on->acc),
           (unsigned long long)on->acc.memo_hits, (unsigned long long)on->acc.memo_misses,
           (unsigned long long)on->acc.memo_ineligible, (unsigned long long)on->acc.memo_recorded,
           (unsigned long long)on->acc.memo_aborts);
    for (int i = 0; i < WH_RUNS; i++) free(first[i].op_ps);
    return same ? 0 : 1;
}

/* A k-ary fat tree (k^3/4 hosts, 100 Gb/s, 1 us links) in the HPCC topology format. */
static int write_fat_tree(FILE *f, uint32_t k)
{
    uint32_t hosts = k * k * k / 4, edge = k * k / 2, agg = k * k / 2, core = k * k / 4, half = k / 2;
    uint32_t e0 = hosts, a0 = e0 + edge, c0 = a0 + agg, links = hosts + edge * half + agg * half;
    fprintf(f, "%u %u %u\n", hosts + edge + agg + core, edge + agg + core, links);
    for (uint32_t i = hosts; i < c0 + core; i++) fprintf(f, "%u%c", i, i + 1 < c0 + core ? ' ' : '\n');
    const char *l = "100Gbps 0.001ms 0";
    for (uint32_t h = 0; h < hosts; h++) fprintf(f, "%u %u %s\n", h, e0 + h / half, l);
    for (uint32_t e = 0; e < edge; e++) /* edge e of pod e / half to the pod's aggregation switches */
        for (uint32_t j = 0; j < half; j++) fprintf(f, "%u %u %s\n", e0 + e, a0 + (e / half) * half + j, l);
    for (uint32_t a = 0; a < agg; a++) /* aggregation switch j of a pod to cores j*half .. j*half+half-1 */
        for (uint32_t j = 0; j < half; j++) fprintf(f, "%u %u %s\n", a0 + a, c0 + (a % half) * half + j, l);
    return ferror(f) ? -1 : 0;
}

static int bench_fabric(uint32_t k)
{
    char topo[] = "/tmp/orrery-bench-topo-XXXXXX", flows[] = "/tmp/orrery-bench-flows-XXXXXX";
    int ft = mkstemp(topo), ff = mkstemp(flows);
    FILE *t = ft >= 0 ? fdopen(ft, "w") : NULL, *f = ff >= 0 ? fdopen(ff, "w") : NULL;
    int rc = !t || !f || write_fat_tree(t, k);
    uint32_t hosts = k * k * k / 4;
    if (f) {
        fprintf(f, "%u\n", hosts);
        for (uint32_t h = 0; h < hosts; h++) fprintf(f, "%u %u 3 100 2000000 2.0\n", h, (h + 1) % hosts);
    }
    if ((t && fclose(t)) || (f && fclose(f))) rc = 1;
    orr_netsim_result r;
    orr_err err = {{0}};
    orr_packet_config cfg;
    orr_buf warn = {0};
    orr_packet_config_default(&cfg);
    if (!rc) rc = orr_packet_config_read(&cfg, ORRERY_VALIDATION_DIR "/ns3/config_hpcc.txt", &warn, &err) != 0;
    orr_buf_free(&warn);
    cfg.accel = 0;
    orr_topo tp;
    if (!rc) rc = orr_topo_read_hpcc(&tp, topo, &err) != 0;
    if (!rc) {
        rc = orr_netsim_run_with(&tp, &cfg, flows, &r, &err) != 0;
        orr_topo_free(&tp);
    }
    unlink(topo);
    unlink(flows);
    if (rc) {
        fprintf(stderr, "orrery-bench: fat tree k=%u: %s\n", k, err.msg[0] ? err.msg : "cannot write its files");
        return -1;
    }
    double eps = r.wall_s > 0 ? (double)r.stats.events / r.wall_s : 0;
    printf("  k=%-2u %5u hosts: %10llu events, %6.2f s, %.2f M events/s\n", k, hosts, (unsigned long long)r.stats.events,
           r.wall_s, eps / 1e6);
    orr_netsim_result_free(&r);
    return (int)(eps / 1e3); /* k events/s */
}

static int bench_wormhole(int argc, char **argv)
{
    int rc = 0;
    if (argc > 0)
        for (int i = 0; i < argc; i++) rc |= bench_wormhole_spec(argv[i]);
    else
        rc |= bench_wormhole_spec(ORRERY_SOURCE_DIR "/examples/gpt3_13b_64_h100_packet.yaml");
    printf("packet engine events/s, ring of 2 MB flows (one per host), HPCC, --no-accel:\n");
    int k8 = bench_fabric(8), k16 = bench_fabric(16);
    if (k8 <= 0 || k16 <= 0) return 1;
    printf("  k=16 / k=8: %.2f\n", (double)k16 / (double)k8);
    return rc;
}

/* `orrery-bench memo`: `orrery netsim` twice with --memo FILE on flows that never repeat within a
 * run (16 steps of 8 flows host 2p -> 2p+1 on the k=4 fat tree of data/validation/ns3, DCQCN, 128
 * sizes), so the in-run memo replays nothing and the second run replays everything the first
 * recorded: events, wall and whether the FCT files are identical. */
static int bench_memo(void)
{
    char flows[] = "/tmp/orrery-bench-flows-XXXXXX", memo[] = "/tmp/orrery-bench-memo-XXXXXX";
    int ff = mkstemp(flows), fm = mkstemp(memo);
    FILE *f = ff >= 0 ? fdopen(ff, "w") : NULL;
    int rc = !f || fm < 0;
    if (fm >= 0) close(fm);
    if (f) {
        fprintf(f, "%d\n", 16 * 8);
        for (int step = 0; step < 16; step++)
            for (int p = 0; p < 8; p++)
                fprintf(f, "%d %d 3 100 %d %.9f\n", 2 * p, 2 * p + 1, 400000 + (step * 8 + p) * 4000, 2.0 + step * 1e-3);
        if (fclose(f)) rc = 1;
    }
    orr_netsim_result r[2];
    double call_s[2] = {0, 0};
    memset(r, 0, sizeof r);
    orr_err err = {{0}};
    orr_topo tp;
    int have_topo = 0;
    if (!rc) rc = orr_topo_read_hpcc(&tp, ORRERY_VALIDATION_DIR "/ns3/topo_k4.txt", &err) != 0;
    have_topo = !rc;
    for (int i = 0; i < 2 && !rc; i++) {
        orr_packet_config cfg;
        orr_buf warn = {0};
        orr_packet_config_default(&cfg);
        rc = orr_packet_config_read(&cfg, ORRERY_VALIDATION_DIR "/ns3/config_dcqcn.txt", &warn, &err) != 0;
        orr_buf_free(&warn);
        snprintf(cfg.memo_path, sizeof cfg.memo_path, "%s", memo);
        double t0 = now_s();
        if (!rc) rc = orr_netsim_run_with(&tp, &cfg, flows, &r[i], &err) != 0;
        call_s[i] = now_s() - t0; /* setup, the memo file read and written, the run */
    }
    if (have_topo) orr_topo_free(&tp);
    unlink(flows);
    unlink(memo);
    if (rc) {
        fprintf(stderr, "orrery-bench memo: %s\n", err.msg[0] ? err.msg : "cannot write its files");
        return 1;
    }
    printf("orrery netsim twice with --memo FILE, 128 flows of 128 sizes (k=4, DCQCN):\n");
    for (int i = 0; i < 2; i++)
        printf("  run %d: %9llu events, %.4f s wall (simulation %.4f s); memo %llu hits, %llu misses, %llu recorded, "
               "%llu loaded\n", i + 1, (unsigned long long)r[i].stats.events, call_s[i], r[i].wall_s,
               (unsigned long long)r[i].accel.memo_hits,
               (unsigned long long)r[i].accel.memo_misses, (unsigned long long)r[i].accel.memo_recorded,
               (unsigned long long)r[i].accel.memo_loaded);
    int same = r[0].fct_text.n == r[1].fct_text.n && (!r[0].fct_text.n || memcmp(r[0].fct_text.s, r[1].fct_text.s, r[0].fct_text.n) == 0);
    printf("  second / first run: events %.1fx fewer, wall %.1fx less; FCT files %s\n",
           ratio((double)r[0].stats.events, (double)r[1].stats.events), ratio(call_s[0], call_s[1]),
           same ? "identical" : "DIFFERENT");
    orr_netsim_result_free(&r[0]);
    orr_netsim_result_free(&r[1]);
    return !same;
}

/* `orrery-bench fabric [ROUNDS]`: only the k=8 / k=16 events/s comparison, ROUNDS times (default 1)
 * alternating k=8 and k=16, with each round's ratio and the median ratio. */
static int bench_fabric_rounds(int argc, char **argv)
{
    int rounds = argc > 0 ? atoi(argv[0]) : 1;
    if (rounds < 1 || rounds > 99) rounds = 1;
    double ratios[99];
    printf("packet engine events/s, ring of 2 MB flows (one per host), HPCC, --no-accel:\n");
    for (int i = 0; i < rounds; i++) {
        int k8 = bench_fabric(8), k16 = bench_fabric(16);
        if (k8 <= 0 || k16 <= 0) return 1;
        ratios[i] = (double)k16 / (double)k8;
        printf("  k=16 / k=8: %.2f\n", ratios[i]);
    }
    for (int i = 1; i < rounds; i++) /* insertion sort, rounds <= 99 */
        for (int j = i; j > 0 && ratios[j - 1] > ratios[j]; j--) {
            double x = ratios[j];
            ratios[j] = ratios[j - 1];
            ratios[j - 1] = x;
        }
    if (rounds > 1) printf("  median k=16 / k=8 over %d rounds: %.2f\n", rounds, ratios[rounds / 2]);
    return 0;
}

int bench_search(int argc, char **argv); /* search.c */

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "search") == 0) return bench_search(argc - 2, argv + 2);
    if (argc > 1 && strcmp(argv[1], "netsim") == 0)
        return bench_netsim(argc > 2 ? argv[2] : ORRERY_VALIDATION_DIR "/ns3");
    if (argc > 1 && strcmp(argv[1], "wormhole") == 0) return bench_wormhole(argc - 2, argv + 2);
    if (argc > 1 && strcmp(argv[1], "fabric") == 0) return bench_fabric_rounds(argc - 2, argv + 2);
    if (argc > 1 && strcmp(argv[1], "memo") == 0) return bench_memo();
    static const char *const defaults[] = {ORRERY_SOURCE_DIR "/examples/gpt3_175b_1024_h100_interleaved.yaml",
                                           ORRERY_SOURCE_DIR "/examples/llama3_405b_16k_h100.yaml",
                                           ORRERY_SOURCE_DIR "/examples/deepseek_v3_2048_h100.yaml"};
    int rc = 0, first = 1, no_symmetry = 0;
    orr_net_kind net = ORR_NET_KIND_COUNT;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (strcmp(argv[first], "--flow") == 0) net = ORR_NET_FLOW;
        else if (strcmp(argv[first], "--packet") == 0) net = ORR_NET_PACKET;
        else if (strcmp(argv[first], "--no-symmetry") == 0) no_symmetry = 1;
        else {
            fprintf(stderr, "orrery-bench: unknown flag %s (known: --flow, --packet, --no-symmetry, netsim, wormhole, fabric, memo, search)\n",
                    argv[first]);
            return 2;
        }
    }
    if (first < argc)
        for (int i = first; i < argc; i++) rc |= bench_one(argv[i], net, no_symmetry);
    else if (net == ORR_NET_PACKET)
        rc = bench_one(ORRERY_SOURCE_DIR "/examples/gpt3_13b_64_h100_packet.yaml", net, no_symmetry);
    else if (net != ORR_NET_KIND_COUNT || no_symmetry)
        rc = bench_one(defaults[0], net, no_symmetry);
    else {
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) rc |= bench_one(defaults[i], net, 0);
        rc |= bench_one(defaults[0], ORR_NET_FLOW, 0);
    }
    return rc;
}
