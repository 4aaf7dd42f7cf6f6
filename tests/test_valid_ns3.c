/*
 * Cross-check of the packet engine against the ns-3 reference runs in data/validation/ns3 (HPCC
 * code lineage): each scenario is simulated with `orrery netsim`'s library entry and its FCT
 * slowdown distribution compared with ns-3's: mean and p99 within 15%, median within 10%. Both
 * sets of numbers are printed.
 *
 * The k=4 and k=8 scenarios (the latter 1,000 flows, ~5-10 s each) all run in the default suite
 * (results are recorded in docs/netsim.md).
 *
 * Paths are ns-3's: `orrery netsim` reproduces its ECMP (hash, seeds, next-hop order, source
 * ports; src/net/packet/ns3route.c), so the flows share the links they shared in the reference run.
 *
 * k4 DCQCN, one run, is printed but not asserted (ORRERY_VALID_STRICT=1 asserts it): its 12 flows
 * are bimodal (six 1 MB incast flows at 3-12x, six 10 MB flows at 1-2x, the latter within 0.3% of
 * ns-3 flow by flow), so the median is the midpoint between the slowest 10 MB flow and the fastest
 * incast flow, and which incast flow gets ahead depends on RED's random marks (ns-3's draws cannot
 * be replayed). With RANDOM_SEED 1..12 the median is 2.24-3.16 (ns-3 2.65), half of the seeds
 * within 10%. What is asserted for k4 DCQCN is the average of each statistic over those 12 seeds.
 */
#include "check.h"
#include "orrery/packet.h"

#include <stdlib.h>
#include <string.h>

#define DIR ORRERY_VALIDATION_DIR "/ns3/"

static int within(double ours, double ref, double tol) { return ref > 0 && (ours - ref) / ref <= tol && (ref - ours) / ref <= tol; }

static void scenario(const char *name, const char *topo, const char *flows, const char *config, const char *ref_fct,
                     int assert_it)
{
    orr_netsim_result r;
    orr_buf warn = {0};
    orr_err err;
    int rc = orr_netsim_run(topo, flows, config, &r, &warn, &err);
    orr_buf_free(&warn);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    orr_fct_summary ref;
    rc = orr_fct_read_summary(ref_fct, &ref, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) {
        orr_netsim_result_free(&r);
        return;
    }
    const orr_fct_summary *o = &r.fct;
    int ok_mean = within(o->mean_slowdown, ref.mean_slowdown, 0.15);
    int ok_med = within(o->median_slowdown, ref.median_slowdown, 0.10);
    int ok_p99 = within(o->p99_slowdown, ref.p99_slowdown, 0.15);
    printf("%-10s slowdown  mean %.3f (ns-3 %.3f, %+.1f%%)  median %.3f (ns-3 %.3f, %+.1f%%)  p99 %.3f (ns-3 %.3f, %+.1f%%)"
           "  | %u flows, %llu events, %.2f s wall%s\n",
           name, o->mean_slowdown, ref.mean_slowdown, 100 * (o->mean_slowdown / ref.mean_slowdown - 1), o->median_slowdown,
           ref.median_slowdown, 100 * (o->median_slowdown / ref.median_slowdown - 1), o->p99_slowdown, ref.p99_slowdown,
           100 * (o->p99_slowdown / ref.p99_slowdown - 1), o->flows, (unsigned long long)r.stats.events, r.wall_s,
           assert_it ? "" : (ok_mean && ok_med && ok_p99 ? "" : "  [known gap, not asserted]"));
    CHECK_EQ_I64(o->flows, ref.flows);
    if (assert_it) {
        CHECK_MSG(ok_mean, "%s: mean slowdown %.3f vs ns-3 %.3f (15%%)", name, o->mean_slowdown, ref.mean_slowdown);
        CHECK_MSG(ok_med, "%s: median slowdown %.3f vs ns-3 %.3f (10%%)", name, o->median_slowdown, ref.median_slowdown);
        CHECK_MSG(ok_p99, "%s: p99 slowdown %.3f vs ns-3 %.3f (15%%)", name, o->p99_slowdown, ref.p99_slowdown);
    }
    orr_netsim_result_free(&r);
}

/* k4 DCQCN over RANDOM_SEED 1..nseeds: the average of mean, median and p99 slowdown against ns-3's. */
static void seeds(const char *name, const char *topo, const char *flows, const char *config, const char *ref_fct,
                  int nseeds)
{
    orr_packet_config cfg;
    orr_packet_config_default(&cfg);
    orr_buf warn = {0};
    orr_err err;
    int rc = orr_packet_config_read(&cfg, config, &warn, &err);
    orr_buf_free(&warn);
    CHECK_MSG(rc == 0, "%s", err.msg);
    orr_topo t;
    if (rc == 0) {
        rc = orr_topo_read_hpcc(&t, topo, &err);
        CHECK_MSG(rc == 0, "%s", err.msg);
    }
    if (rc) return;
    orr_fct_summary ref;
    rc = orr_fct_read_summary(ref_fct, &ref, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    double mean = 0, med = 0, p99 = 0;
    for (int i = 1; rc == 0 && i <= nseeds; i++) {
        cfg.seed = (uint64_t)i;
        orr_netsim_result r;
        rc = orr_netsim_run_with(&t, &cfg, flows, &r, &err);
        CHECK_MSG(rc == 0, "%s", err.msg);
        if (rc) break;
        CHECK_EQ_I64(r.fct.flows, ref.flows);
        mean += r.fct.mean_slowdown / nseeds;
        med += r.fct.median_slowdown / nseeds;
        p99 += r.fct.p99_slowdown / nseeds;
        orr_netsim_result_free(&r);
    }
    orr_topo_free(&t);
    if (rc) return;
    printf("%-10s slowdown  mean %.3f (ns-3 %.3f, %+.1f%%)  median %.3f (ns-3 %.3f, %+.1f%%)  p99 %.3f (ns-3 %.3f, %+.1f%%)"
           "  | average of RANDOM_SEED 1..%d\n",
           name, mean, ref.mean_slowdown, 100 * (mean / ref.mean_slowdown - 1), med, ref.median_slowdown,
           100 * (med / ref.median_slowdown - 1), p99, ref.p99_slowdown, 100 * (p99 / ref.p99_slowdown - 1), nseeds);
    CHECK_MSG(within(mean, ref.mean_slowdown, 0.15), "%s: mean slowdown %.3f vs ns-3 %.3f (15%%)", name, mean, ref.mean_slowdown);
    CHECK_MSG(within(med, ref.median_slowdown, 0.10), "%s: median slowdown %.3f vs ns-3 %.3f (10%%)", name, med, ref.median_slowdown);
    CHECK_MSG(within(p99, ref.p99_slowdown, 0.15), "%s: p99 slowdown %.3f vs ns-3 %.3f (15%%)", name, p99, ref.p99_slowdown);
}

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

int main(void)
{
    int strict = env_on("ORRERY_VALID_STRICT");
    scenario("k4 HPCC", DIR "topo_k4.txt", DIR "flows_k4.txt", DIR "config_hpcc.txt", DIR "out_hpcc_fct.txt", 1);
    scenario("k4 DCQCN", DIR "topo_k4.txt", DIR "flows_k4.txt", DIR "config_dcqcn.txt", DIR "out_dcqcn_fct.txt", strict);
    seeds("k4 DCQCN", DIR "topo_k4.txt", DIR "flows_k4.txt", DIR "config_dcqcn.txt", DIR "out_dcqcn_fct.txt", 12);
    scenario("k8 HPCC", DIR "topo_k8.txt", DIR "flows_k8_1k_load30.txt", DIR "config_k8_hpcc.txt",
             DIR "out_k8_hpcc_fct.txt", 1);
    scenario("k8 DCQCN", DIR "topo_k8.txt", DIR "flows_k8_1k_load30.txt", DIR "config_k8_dcqcn.txt",
             DIR "out_k8_dcqcn_fct.txt", 1);
    return check_done();
}
