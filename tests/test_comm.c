/*
 * Tests of the collective models (src/comm/nccl.c) and the analytic network backend
 * (src/net/analytic_net.c):
 *   1. validation against published nccl-tests numbers (data/validation), every row printed
 *      with measured, predicted and error;
 *   2. the algorithms' closed forms on hand-computed cases and their properties (size-1 groups,
 *      monotone in bytes, AUTO no slower than any algorithm, tree for small messages on many
 *      nodes, bus-bandwidth factors);
 *   3. the analytic backend calling back at the right times on an engine.
 * Hardware is built by hand here (values from data/validation/gpu_specs.csv and the fit in
 * docs/models.md), so the test does not depend on the catalog.
 */
#include "check.h"
#include "csv.h"
#include "orrery/comm.h"
#include "orrery/net.h"

#include <math.h>
#include <string.h>

/* H100 SXM5: NVLink 4, 900 GB/s both directions = 450 GB/s per direction (gpu_specs.csv). */
static orr_gpu h100(void)
{
    orr_gpu g;
    memset(&g, 0, sizeof g);
    strcpy(g.name, "H100-test");
    g.sms = 132;
    g.hbm_Bps = 3.35e12;
    g.l2_bytes = 50ull << 20;
    g.nvlink_Bps = 450e9;
    g.peak_flops[ORR_BF16] = 989.4e12;
    return g;
}

/*
 * The topology assumed for both validation files: nodes of 8 H100 SXM on NVLink 4 / NVSwitch,
 * one 400 Gb/s-equivalent EFA NIC per GPU (p5: 3200 Gb/s per node), NCCL choosing ring or tree.
 * Calibration fitted in docs/models.md: NVLink (nvlink_eff, nvlink_lat, coll_base) on
 * nccl_allreduce_h100_1node_dgxc.csv, net_eff on the 2-node rows of the playbook file; net_lat is
 * NCCL's own network ring latency (tuning.cc, Simple protocol), which 256 MB rows cannot identify,
 * and net_plugin_lat the 75 us the aws-ofi-nccl plugin reports to NCCL for EFA (catalog aws-p5-efa).
 */
static orr_cluster h100_efa(void)
{
    orr_cluster c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "h100-efa-test");
    c.gpus_per_node = 8;
    c.nic_Bps = 50e9;
    strcpy(c.topology, "rail-fat-tree");
    c.nvlink_eff = 0.575;
    c.net_eff = 0.54;
    c.nvlink_lat_ps = 3500 * ORR_PS_PER_NS;
    c.net_lat_ps = 14 * ORR_PS_PER_US;
    c.net_plugin_lat_ps = 75 * ORR_PS_PER_US;
    c.coll_base_ps = 6500 * ORR_PS_PER_NS;
    c.nvls = 1;
    c.nvls_lat_ps = 40 * ORR_PS_PER_US;
    c.p2p_base_ps = 6 * ORR_PS_PER_US;
    return c;
}

static orr_coll_desc desc(orr_coll_kind k, uint64_t bytes, uint32_t nodes, uint32_t per_node,
                          orr_coll_algo a)
{
    orr_coll_desc d = {k, bytes, nodes * per_node, nodes, per_node, a};
    return d;
}

/* Tolerances: what the model achieves on these files (docs/models.md) plus a margin. */
#define TOL_1NODE_LARGE_BUSBW 0.09 /* achieved 6.2% (>= 64 MiB, bus bandwidth) */
#define TOL_1NODE_TIME 0.20        /* achieved 16.5% (every size below 64 MiB, time) */
#define TOL_PLAYBOOK_FITTED 0.08   /* achieved 5.8% (all 1- and 2-node rows) */

/* Single node, 8 x H100, all-reduce from 8 B to 16 GiB (nccl-tests on DGX Cloud). Measured time is
 * the smaller of out-of-place and in-place: the same operation, and the out-of-place column has
 * two transient stalls (32 B: 68 us, 4 KiB: 23.6 us, four and 1.4 times their neighbours). */
static void validate_1node_allreduce(const orr_gpu *g, const orr_cluster *c)
{
    csv t;
    int rc = csv_load(&t, ORRERY_VALIDATION_DIR "/nccl_allreduce_h100_1node_dgxc.csv");
    CHECK_MSG(rc == 0, "cannot read %s", ORRERY_VALIDATION_DIR "/nccl_allreduce_h100_1node_dgxc.csv");
    if (rc) return;
    CHECK_EQ_I64(t.nrows - 1, 32);
    double worst_large = 0, worst_small = 0;
    printf("nccl_allreduce_h100_1node_dgxc.csv: 8 ranks, 1 node\n");
    printf("%12s %10s %10s %8s %9s %9s %7s %s\n", "bytes", "meas_us", "pred_us", "err_t", "meas_bus",
           "pred_bus", "err_bus", "algo");
    for (int r = 1; r < t.nrows; r++) {
        double bytes = csv_num(&t, r, "size_bytes");
        double oop = csv_num(&t, r, "time_oop_us"), ip = csv_num(&t, r, "time_ip_us");
        double meas_us = oop < ip ? oop : ip;
        orr_coll_desc d = desc(ORR_COLL_ALLREDUCE, (uint64_t)bytes, 1, 8, ORR_ALGO_AUTO);
        orr_coll_algo algo;
        double pred_us = (double)orr_comm_coll_ps(g, c, &d, &algo) / ORR_PS_PER_US;
        double f = orr_comm_busbw_factor(ORR_COLL_ALLREDUCE, 8);
        double meas_bus = f * bytes / meas_us / 1e3, pred_bus = f * bytes / pred_us / 1e3; /* GB/s */
        double err_t = pred_us / meas_us - 1, err_bus = pred_bus / meas_bus - 1;
        printf("%12.0f %10.2f %10.2f %+7.1f%% %9.1f %9.1f %+6.1f%% %s\n", bytes, meas_us, pred_us,
               100 * err_t, meas_bus, pred_bus, 100 * err_bus, orr_coll_algo_name(algo));
        if (bytes >= 64.0 * (1 << 20)) {
            CHECK_MSG(fabs(err_bus) <= TOL_1NODE_LARGE_BUSBW, "%.0f B: bus bandwidth error %.1f%%", bytes,
                      100 * err_bus);
            if (fabs(err_bus) > worst_large) worst_large = fabs(err_bus);
        } else {
            CHECK_MSG(fabs(err_t) <= TOL_1NODE_TIME, "%.0f B: time error %.1f%%", bytes, 100 * err_t);
            if (fabs(err_t) > worst_small) worst_small = fabs(err_t);
        }
    }
    printf("worst: bus bandwidth >= 64 MiB %.1f%%, time < 64 MiB %.1f%%\n", 100 * worst_large,
           100 * worst_small);
    csv_free(&t);
}

static orr_coll_kind kind_of(const char *name)
{
    if (strcmp(name, "AllReduce") == 0) return ORR_COLL_ALLREDUCE;
    if (strcmp(name, "AllGather") == 0) return ORR_COLL_ALLGATHER;
    if (strcmp(name, "ReduceScatter") == 0) return ORR_COLL_REDUCESCATTER;
    return ORR_COLL_COUNT;
}

/*
 * 256 MB all-reduce / all-gather / reduce-scatter on 1-64 nodes of 8 x H100 over EFA (the
 * ultrascale playbook). The file's bandwidth is read as nccl-tests' bus bandwidth (its 1-node
 * all-reduce, 436 GB/s, matches the DGX Cloud busbw at 256 MiB, 422 GB/s); 256 MB = 256 MiB.
 *
 * What is asserted, and why not more:
 *   - the rows the model is fitted to or directly predicts, all 1- and 2-node rows, within
 *     TOL_PLAYBOOK_FITTED. The 1-node rows share nvlink_eff with the DGX Cloud all-reduce fit (ring
 *     all-gather / reduce-scatter at 250 GB/s and NVLS all-reduce at 436 GB/s are the same
 *     per-direction NVLink rate, 0.575 x 450 GB/s: NVLS moves S each way, a ring (n-1)/n x S per
 *     pass). At 2 nodes one parameter (net_eff) predicts three collectives on two algorithms
 *     (NVLS-tree all-reduce, ring all-gather / reduce-scatter).
 *   - every other row: that the prediction is not below the measurement (by more than 5%), nor over
 *     1.2 x the runs' 95th percentile (nccl_collectives_multinode_playbook_percentiles.csv). From 4
 *     nodes on, the measured median falls with the node count (all-gather: 185 GB/s at 2 nodes,
 *     11 GB/s at 64) while the playbook's own 95th percentile stays near this model (within -29%
 *     to +4%; tests/test_valid_nccl_flow.c checks the band): run-to-run interference on a shared
 *     cluster, which a model without other tenants does not contain, so it is an upper bound on
 *     the median, 1.3x at 4 nodes to 4.6x at 64. docs/models.md has the table.
 */
/* The runs' 95th percentile of a collective and node count, GB/s (0: not in the file). */
static double csv_p95(const csv *p, const char *coll, uint32_t nodes)
{
    for (int r = 1; r < p->nrows; r++)
        if (strcmp(csv_get(p, r, "collective"), coll) == 0 && (uint32_t)csv_num(p, r, "nodes") == nodes)
            return csv_num(p, r, "p95_bandwidth_GBps");
    return 0;
}

static void validate_multinode(const orr_gpu *g, const orr_cluster *c)
{
    csv t;
    int rc = csv_load(&t, ORRERY_VALIDATION_DIR "/nccl_collectives_multinode_playbook.csv");
    CHECK_MSG(rc == 0, "cannot read %s", ORRERY_VALIDATION_DIR "/nccl_collectives_multinode_playbook.csv");
    if (rc) return;
    CHECK_EQ_I64(t.nrows - 1, 21);
    csv pct;
    rc = csv_load(&pct, ORRERY_VALIDATION_DIR "/nccl_collectives_multinode_playbook_percentiles.csv");
    CHECK_MSG(rc == 0, "cannot read the percentiles");
    if (rc) {
        csv_free(&t);
        return;
    }
    printf("nccl_collectives_multinode_playbook.csv: 8 GPUs/node, 50 GB/s EFA per GPU, 256 MiB\n");
    printf("%-14s %5s %5s %9s %9s %8s %s\n", "collective", "nodes", "gpus", "meas_bus", "pred_bus",
           "err", "algo");
    double worst_fitted = 0;
    for (int r = 1; r < t.nrows; r++) {
        const char *name = csv_get(&t, r, "collective");
        orr_coll_kind k = kind_of(name);
        CHECK_MSG(k != ORR_COLL_COUNT, "row %d: unknown collective %s", r, name);
        if (k == ORR_COLL_COUNT) continue;
        uint32_t nodes = (uint32_t)csv_num(&t, r, "nodes");
        uint32_t gpus = (uint32_t)csv_num(&t, r, "gpus");
        CHECK_EQ_I64(gpus, nodes * 8);
        CHECK(strcmp(csv_get(&t, r, "message_size"), "256MB") == 0);
        double bytes = 256.0 * (1 << 20);
        double meas_bus = csv_num(&t, r, "median_bandwidth_GBps");
        orr_coll_desc d = desc(k, (uint64_t)bytes, nodes, 8, ORR_ALGO_AUTO);
        orr_coll_algo algo;
        double pred_s = (double)orr_comm_coll_ps(g, c, &d, &algo) / ORR_PS_PER_S;
        double pred_bus = orr_comm_busbw_factor(k, gpus) * bytes / pred_s / 1e9;
        double err = pred_bus / meas_bus - 1;
        int fitted = nodes <= 2;
        printf("%-14s %5u %5u %9.1f %9.1f %+7.1f%% %s%s\n", name, nodes, gpus, meas_bus, pred_bus,
               100 * err, orr_coll_algo_name(algo), fitted ? "" : "  (upper bound)");
        if (fitted) {
            CHECK_MSG(fabs(err) <= TOL_PLAYBOOK_FITTED, "%s on %u nodes: error %.1f%%", name, nodes, 100 * err);
            if (fabs(err) > worst_fitted) worst_fitted = fabs(err);
        } else {
            /* below: the median is an upper bound of a contention-free model's error; above: no
             * more than 20% over the runs' 95th percentile (a prediction far too fast fails) */
            double p95 = csv_p95(&pct, name, nodes);
            CHECK_MSG(err >= -0.05, "%s on %u nodes: predicted below measured by %.1f%%", name, nodes,
                      -100 * err);
            CHECK_MSG(p95 > 0 && pred_bus <= 1.2 * p95, "%s on %u nodes: predicted %.1f GB/s, over 1.2 x the 95th "
                      "percentile %.1f", name, nodes, pred_bus, p95);
        }
    }
    printf("worst on the fitted rows: %.1f%%\n", 100 * worst_fitted);
    csv_free(&t);
    csv_free(&pct);
}

/* A cluster with round numbers for hand-computed cases. */
static orr_cluster round_cluster(void)
{
    orr_cluster c = h100_efa();
    c.nvlink_eff = 1.0;
    c.net_eff = 1.0;
    c.nic_Bps = 25e9;
    c.nvlink_lat_ps = 1 * ORR_PS_PER_US;
    c.net_lat_ps = 5 * ORR_PS_PER_US;
    c.net_plugin_lat_ps = 0;
    c.coll_base_ps = 10 * ORR_PS_PER_US;
    c.p2p_base_ps = 3 * ORR_PS_PER_US;
    return c;
}

static int64_t ps(double seconds) { return llround(seconds * (double)ORR_PS_PER_S); }

static void test_closed_forms(void)
{
    orr_gpu g = h100();
    g.nvlink_Bps = 100e9;
    orr_cluster c = round_cluster();
    double us = 1e-6;

    /* ring all-reduce, 8 ranks on one node, 8 MiB, Simple protocol:
     * base + 2(n-1) x nvlink_lat + 2(n-1)/n x S / bw = 10 + 14 x 1 us + 1.75 x 8 MiB / 100 GB/s */
    double S = 8 << 20;
    orr_coll_desc d = desc(ORR_COLL_ALLREDUCE, (uint64_t)S, 1, 8, ORR_ALGO_RING);
    CHECK_EQ_I64(orr_comm_ring_ps(&g, &c, &d), ps(10 * us + 14 * us + 1.75 * S / 100e9));
    /* 8 bytes: the LL protocol wins: latency x 0.6/3.4, bandwidth x 0.5 */
    d.bytes = 8;
    CHECK_EQ_I64(orr_comm_ring_ps(&g, &c, &d), ps(10 * us + 14 * us * 0.6 / 3.4 + 1.75 * 8 / 50e9));

    /* ring all-reduce over 2 nodes of 8: 30 hops, 2 of them between nodes; bus bandwidth the
     * smaller of NVLink (100 GB/s, carrying 7/8 of the ring's bytes: each GPU is one channel's
     * exit to its NIC) and the node's 8 NICs (8 x 25 GB/s) */
    S = 1 << 30;
    d = desc(ORR_COLL_ALLREDUCE, (uint64_t)S, 2, 8, ORR_ALGO_RING);
    CHECK_EQ_I64(orr_comm_ring_ps(&g, &c, &d),
                 ps(10 * us + 28 * us + 2 * 5 * us + 30.0 / 16 * S / (100e9 * 8 / 7)));
    /* with slow NICs the network is the bottleneck */
    orr_cluster slow = c;
    slow.nic_Bps = 10e9;
    CHECK_EQ_I64(orr_comm_ring_ps(&g, &slow, &d), ps(10 * us + 28 * us + 2 * 5 * us + 30.0 / 16 * S / 80e9));

    /* all-gather over a DP group with one GPU per node: a pure inter-node ring on one NIC each */
    d = desc(ORR_COLL_ALLGATHER, (uint64_t)S, 16, 1, ORR_ALGO_AUTO);
    orr_coll_algo a;
    CHECK_EQ_I64(orr_comm_coll_ps(&g, &c, &d, &a), ps(10 * us + 15 * 5 * us + 15.0 / 16 * S / 25e9));
    CHECK(a == ORR_ALGO_RING);
    /* the same as all-reduce (AUTO may pick the tree; the ring is the closed form) */
    d.kind = ORR_COLL_ALLREDUCE;
    CHECK_EQ_I64(orr_comm_ring_ps(&g, &c, &d), ps(10 * us + 30 * 5 * us + 30.0 / 16 * S / 25e9));
    /* hierarchical equals the ring when there is nothing to split */
    CHECK_EQ_I64(orr_comm_hier_ps(&g, &c, &d), orr_comm_ring_ps(&g, &c, &d));
    orr_coll_desc one_node = desc(ORR_COLL_ALLREDUCE, (uint64_t)S, 1, 8, ORR_ALGO_HIER);
    CHECK_EQ_I64(orr_comm_hier_ps(&g, &c, &one_node), orr_comm_ring_ps(&g, &c, &one_node));

    /* tree all-reduce, 4 nodes of 8, 1 GiB: 2 log2(4) network + 2 x 7 NVLink hops; the busier of
     * NVLink (2S / 100 GB/s) and the NICs (2 x 3/4 x S / 200 GB/s) */
    d = desc(ORR_COLL_ALLREDUCE, (uint64_t)S, 4, 8, ORR_ALGO_TREE);
    CHECK_EQ_I64(orr_comm_tree_ps(&g, &c, &d), ps(10 * us + 4 * 5 * us + 14 * us + 2 * S / 100e9));
    /* tree of a collective NCCL has no tree for: the ring */
    d.kind = ORR_COLL_ALLGATHER;
    CHECK_EQ_I64(orr_comm_tree_ps(&g, &c, &d), orr_comm_ring_ps(&g, &c, &d));

    /* hierarchical all-reduce, 4 nodes of 8: reduce-scatter and all-gather on NVLink (7 hops,
     * 7/8 S each), all-reduce of S/8 on 8 rails of 4 GPUs (6 network hops, 2 x 3/4 x S/8 / 25 GB/s) */
    d = desc(ORR_COLL_ALLREDUCE, (uint64_t)S, 4, 8, ORR_ALGO_HIER);
    CHECK_EQ_I64(orr_comm_hier_ps(&g, &c, &d),
                 ps(10 * us + 14 * us + 6 * 5 * us + 2 * 7.0 / 8 * S / 100e9 + 1.5 * S / 8 / 25e9));

    /* NVLS all-reduce, 8 ranks on one node, 1 GiB: coll_base + nvls_lat + S over each GPU's NVLink
     * (into the switch and back), Simple protocol, no per-hop latency */
    c.nvls = 1;
    c.nvls_lat_ps = 20 * ORR_PS_PER_US;
    d = desc(ORR_COLL_ALLREDUCE, (uint64_t)S, 1, 8, ORR_ALGO_NVLS);
    CHECK_EQ_I64(orr_comm_nvls_ps(&g, &c, &d), ps(10 * us + 20 * us + S / 100e9));
    d.algo = ORR_ALGO_AUTO;
    CHECK_EQ_I64(orr_comm_coll_ps(&g, &c, &d, &a), ps(10 * us + 20 * us + S / 100e9));
    CHECK(a == ORR_ALGO_NVLS);
    /* NVLS-tree, 4 nodes of 8: the tree's 2 log2(4) network hops; the busier of NVLink (S) and the
     * node's NICs (2 x 3/4 x S over 8 x 25 GB/s), here NVLink; with slow NICs the network */
    d = desc(ORR_COLL_ALLREDUCE, (uint64_t)S, 4, 8, ORR_ALGO_NVLS);
    CHECK_EQ_I64(orr_comm_nvls_ps(&g, &c, &d), ps(10 * us + 20 * us + 4 * 5 * us + S / 100e9));
    CHECK_EQ_I64(orr_comm_nvls_ps(&g, &slow, &d), ps(10 * us + 40 * us + 4 * 5 * us + 1.5 * S / 80e9));
    /* no NVLS: a collective other than all-reduce, one GPU per node, or a switch without SHARP */
    d.kind = ORR_COLL_ALLGATHER;
    CHECK_EQ_I64(orr_comm_nvls_ps(&g, &c, &d), orr_comm_ring_ps(&g, &c, &d));
    d = desc(ORR_COLL_ALLREDUCE, (uint64_t)S, 16, 1, ORR_ALGO_NVLS);
    CHECK_EQ_I64(orr_comm_nvls_ps(&g, &c, &d), orr_comm_ring_ps(&g, &c, &d));
    orr_cluster plain = c;
    plain.nvls = 0;
    d = desc(ORR_COLL_ALLREDUCE, (uint64_t)S, 1, 8, ORR_ALGO_AUTO);
    CHECK_EQ_I64(orr_comm_nvls_ps(&g, &plain, &d), orr_comm_ring_ps(&g, &plain, &d));
    orr_comm_coll_ps(&g, &plain, &d, &a);
    CHECK(a == ORR_ALGO_RING);

    /* broadcast: a pipelined chain, n-1 hops and S over the bottleneck */
    d = desc(ORR_COLL_BROADCAST, (uint64_t)S, 1, 8, ORR_ALGO_AUTO);
    CHECK_EQ_I64(orr_comm_coll_ps(&g, &c, &d, NULL), ps(10 * us + 7 * us + S / 100e9));
    /* all-to-all over 2 nodes of 8: 7/16 of S on NVLink, 8/16 on each GPU's NIC, concurrently */
    d = desc(ORR_COLL_ALLTOALL, (uint64_t)S, 2, 8, ORR_ALGO_AUTO);
    CHECK_EQ_I64(orr_comm_coll_ps(&g, &c, &d, NULL), ps(10 * us + 7 * us + 5 * us + 0.5 * S / 25e9));

    /* point to point */
    CHECK_EQ_I64(orr_comm_p2p_ps(&g, &c, 0, 7, 1 << 20), ps(3 * us + (1 << 20) / 100e9));
    CHECK_EQ_I64(orr_comm_p2p_ps(&g, &c, 7, 8, 1 << 20), ps(3 * us + 5 * us + (1 << 20) / 25e9));
}

static void test_properties(void)
{
    orr_gpu g = h100();
    orr_cluster c = h100_efa();

    /* a group of one, or nothing to move, costs nothing */
    for (int k = 0; k < ORR_COLL_COUNT; k++) {
        for (int a = 0; a < ORR_ALGO_COUNT; a++) {
            orr_coll_desc d = desc((orr_coll_kind)k, 1 << 20, 1, 1, (orr_coll_algo)a);
            CHECK_EQ_I64(orr_comm_coll_ps(&g, &c, &d, NULL), 0);
            d = desc((orr_coll_kind)k, 0, 4, 8, (orr_coll_algo)a);
            CHECK_EQ_I64(orr_comm_coll_ps(&g, &c, &d, NULL), 0);
        }
    }

    /* monotone in bytes, every collective, algorithm and shape; AUTO never slower than the
     * algorithms NCCL has for it (all-reduce: ring, tree, hier, nvls; the others: ring) */
    uint32_t shapes[][2] = {{1, 2}, {1, 8}, {2, 8}, {16, 8}, {64, 8}, {32, 1}, {4, 4}};
    size_t bad_mono = 0, bad_auto = 0, nonpositive = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (int k = 0; k < ORR_COLL_COUNT; k++) {
            for (int a = 0; a < ORR_ALGO_COUNT; a++) {
                int64_t prev = 0;
                for (uint64_t b = 1; b <= (16ull << 30); b *= 2) {
                    orr_coll_desc d = desc((orr_coll_kind)k, b, shapes[s][0], shapes[s][1], (orr_coll_algo)a);
                    int64_t t = orr_comm_coll_ps(&g, &c, &d, NULL);
                    if (t < prev) bad_mono++;
                    if (t <= 0) nonpositive++;
                    prev = t;
                    if (a != ORR_ALGO_AUTO) continue;
                    int64_t ring = orr_comm_ring_ps(&g, &c, &d);
                    if (t > ring) bad_auto++;
                    if (k == ORR_COLL_ALLREDUCE &&
                        (t > orr_comm_tree_ps(&g, &c, &d) || t > orr_comm_hier_ps(&g, &c, &d) ||
                         t > orr_comm_nvls_ps(&g, &c, &d)))
                        bad_auto++;
                    if (k != ORR_COLL_ALLREDUCE && t != ring) bad_auto++;
                }
            }
        }
    }
    CHECK_EQ_I64(bad_mono, 0);
    CHECK_EQ_I64(bad_auto, 0);
    CHECK_EQ_I64(nonpositive, 0);

    /* small messages over many nodes: the tree (log latency) beats the ring (linear) */
    orr_coll_algo a;
    orr_coll_desc d = desc(ORR_COLL_ALLREDUCE, 4096, 64, 8, ORR_ALGO_AUTO);
    int64_t t_auto = orr_comm_coll_ps(&g, &c, &d, &a);
    CHECK(a == ORR_ALGO_TREE);
    CHECK(orr_comm_ring_ps(&g, &c, &d) > 2 * t_auto);
    /* large messages on NVSwitch 3: NVLS inside a node, NVLS-tree across two */
    d = desc(ORR_COLL_ALLREDUCE, 4ull << 30, 2, 8, ORR_ALGO_AUTO);
    orr_comm_coll_ps(&g, &c, &d, &a);
    CHECK(a == ORR_ALGO_NVLS);
    d = desc(ORR_COLL_ALLREDUCE, 4ull << 30, 1, 8, ORR_ALGO_AUTO);
    orr_comm_coll_ps(&g, &c, &d, &a);
    CHECK(a == ORR_ALGO_NVLS);
    /* small ones on one node: the ring (LL), NVLS's fixed latency does not pay */
    d = desc(ORR_COLL_ALLREDUCE, 64 << 10, 1, 8, ORR_ALGO_AUTO);
    orr_comm_coll_ps(&g, &c, &d, &a);
    CHECK(a == ORR_ALGO_RING);

    /* a shape left unset defaults to one node */
    orr_coll_desc bare = {ORR_COLL_ALLREDUCE, 1 << 20, 8, 0, 0, ORR_ALGO_RING};
    orr_coll_desc full = desc(ORR_COLL_ALLREDUCE, 1 << 20, 1, 8, ORR_ALGO_RING);
    CHECK_EQ_I64(orr_comm_ring_ps(&g, &c, &bare), orr_comm_ring_ps(&g, &c, &full));

    /* a link of no bandwidth gives a huge finite time, not a NaN or an overflow */
    orr_gpu nolink = g;
    nolink.nvlink_Bps = 0;
    d = desc(ORR_COLL_ALLREDUCE, 1 << 20, 1, 8, ORR_ALGO_AUTO);
    int64_t t_inf = orr_comm_coll_ps(&nolink, &c, &d, NULL);
    CHECK(t_inf >= 1000 * ORR_PS_PER_S && t_inf <= INT64_MAX / 8);

    /* nccl-tests' bus-bandwidth factors */
    CHECK_REL(orr_comm_busbw_factor(ORR_COLL_ALLREDUCE, 8), 2.0 * 7 / 8, 1e-12);
    CHECK_REL(orr_comm_busbw_factor(ORR_COLL_ALLGATHER, 8), 7.0 / 8, 1e-12);
    CHECK_REL(orr_comm_busbw_factor(ORR_COLL_REDUCESCATTER, 16), 15.0 / 16, 1e-12);
    CHECK_REL(orr_comm_busbw_factor(ORR_COLL_ALLTOALL, 4), 3.0 / 4, 1e-12);
    CHECK_REL(orr_comm_busbw_factor(ORR_COLL_BROADCAST, 8), 1.0, 1e-12);
    CHECK_REL(orr_comm_busbw_factor(ORR_COLL_REDUCE, 8), 1.0, 1e-12);
    CHECK_REL(orr_comm_busbw_factor(ORR_COLL_ALLREDUCE, 1), 0.0, 1e-12);

    CHECK(strcmp(orr_coll_algo_name(ORR_ALGO_AUTO), "auto") == 0);
    CHECK(strcmp(orr_coll_algo_name(ORR_ALGO_RING), "ring") == 0);
    CHECK(strcmp(orr_coll_algo_name(ORR_ALGO_TREE), "tree") == 0);
    CHECK(strcmp(orr_coll_algo_name(ORR_ALGO_HIER), "hier") == 0);
}

/* The analytic backend: callbacks at now + the closed-form times. */
typedef struct arrivals {
    orr_engine *e;
    int64_t t[4];
    int n;
} arrivals;

static void arrived(void *ctx, uint64_t arg)
{
    arrivals *a = ctx;
    if (arg < 4) a->t[arg] = orr_engine_now(a->e);
    a->n++;
}

typedef struct later {
    orr_net *net;
    arrivals *arr;
    uint32_t members[16];
} later;

static void start_later(void *ctx, uint64_t arg)
{
    later *l = ctx;
    (void)arg;
    l->net->send(l->net, 3, 12, 1 << 20, arrived, l->arr, 2);
}

static void test_backend(void)
{
    orr_gpu g = h100();
    orr_cluster c = h100_efa();
    orr_engine e;
    orr_engine_init(&e);
    orr_err err = {{0}};
    orr_net *net = orr_net_create(ORR_NET_ANALYTIC, &e, &g, &c, &err);
    CHECK(net != NULL);
    if (!net) return;
    CHECK(net->kind == ORR_NET_ANALYTIC);
    CHECK(strcmp(orr_net_kind_name(ORR_NET_ANALYTIC), "analytic") == 0);

    arrivals arr = {&e, {-1, -1, -1, -1}, 0};
    later l;
    l.net = net;
    l.arr = &arr;
    for (uint32_t i = 0; i < 16; i++) l.members[i] = i;

    /* a send across nodes at time 0 */
    net->send(net, 0, 9, 64 << 20, arrived, &arr, 0);
    /* a collective over global ranks 0..15 (2 nodes of 8), shape left to the backend to find */
    orr_coll_desc d = {ORR_COLL_ALLREDUCE, 256 << 20, 16, 0, 0, ORR_ALGO_AUTO};
    net->collective(net, &d, l.members, arrived, &arr, 1);
    /* a send started at 1 ms by an event */
    orr_engine_at(&e, ORR_PS_PER_MS, start_later, &l, 0);
    orr_engine_run(&e);

    CHECK_EQ_I64(arr.n, 3);
    CHECK_EQ_I64(arr.t[0], orr_comm_p2p_ps(&g, &c, 0, 9, 64 << 20));
    orr_coll_desc shaped = {ORR_COLL_ALLREDUCE, 256 << 20, 16, 2, 8, ORR_ALGO_AUTO};
    CHECK_EQ_I64(arr.t[1], orr_comm_coll_ps(&g, &c, &shaped, NULL));
    orr_coll_desc one_node = {ORR_COLL_ALLREDUCE, 256 << 20, 16, 1, 16, ORR_ALGO_AUTO};
    CHECK(arr.t[1] != orr_comm_coll_ps(&g, &c, &one_node, NULL));
    CHECK_EQ_I64(arr.t[2], ORR_PS_PER_MS + orr_comm_p2p_ps(&g, &c, 3, 12, 1 << 20));
    orr_net_destroy(net);
    orr_net_destroy(NULL);

    /* unknown kinds are refused with a message */
    err.msg[0] = 0;
    CHECK(orr_net_create(ORR_NET_KIND_COUNT, &e, &g, &c, &err) == NULL);
    CHECK(strstr(err.msg, "analytic") != NULL);
    err.msg[0] = 0;
    CHECK(orr_net_create(ORR_NET_ANALYTIC, NULL, &g, &c, &err) == NULL);
    CHECK(err.msg[0] != 0);
    orr_engine_free(&e);
}

int main(void)
{
    orr_gpu g = h100();
    orr_cluster c = h100_efa();
    validate_1node_allreduce(&g, &c);
    validate_multinode(&g, &c);
    test_closed_forms();
    test_properties();
    test_backend();
    return check_done();
}
