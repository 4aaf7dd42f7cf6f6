#!/usr/bin/env python3
"""Grid search of the single-node NVLink constants (coll_base, nvlink_lat, nvlink_eff, nvls_lat).

Fits the closed forms of src/comm/nccl.c for one node of 8 GPUs (ring at NCCL's three protocols,
NVLS at Simple; the tree never beats the ring inside one node) to
  data/validation/nccl_allreduce_h100_1node_dgxc.csv (all-reduce, 8 B .. 16 GiB) and
  the 1-node rows of data/validation/nccl_collectives_multinode_playbook.csv (256 MiB
  all-reduce, all-gather, reduce-scatter),
minimising the worst row's error relative to its tolerance: bus bandwidth 15% for messages of
64 MiB and more and for the playbook rows, time 35% below 64 MiB. docs/models.md section 4 records
the result; tests/test_comm.c checks the fitted values (and prints the same table as --table).
usage: scripts/fit_nvlink.py [--table] [--a100]

--a100 fits the A100 (NVLink 3, NVSwitch 2: no NVLS; the dgx-a100 cluster) on the all-reduce sweep
of one source of data/validation/kernels/collectives.csv ("single A100 node (8 GPUs)", nccl-tests
all_reduce_perf, 32 KiB .. 16 GiB) and reports the other ("Azure ND A100 v4", NCCL 2.18.5, 1 KiB ..
8 GiB) held out, with the same tolerances (coll_base, nvlink_lat, nvlink_eff; no NVLS).
"""
import csv, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VAL = os.path.join(ROOT, "data", "validation")
A100 = "--a100" in sys.argv
NVLINK_BPS = 300e9 if A100 else 450e9  # A100 SXM4 / H100 SXM5, per direction (gpu_specs.csv)
N = 8
# (bw_frac, nvlink latency relative to Simple): NCCL tuning.cc ring hwLat, as in src/comm/nccl.c
PROTOCOLS = [(0.5, 0.6 / 3.4), (120 / 128, 1.9 / 3.4), (1.0, 1.0)]


def ring_s(link_bytes, hops, base, lat, eff):
    bw = NVLINK_BPS * eff
    return base + min(hops * lat * lf + link_bytes / bw / bf for bf, lf in PROTOCOLS)


def allreduce_s(S, base, lat, eff, nvls_lat):
    ring = ring_s(2 * (N - 1) / N * S, 2 * (N - 1), base, lat, eff)
    if nvls_lat is None:  # no NVLS (A100)
        return ring, "ring"
    nvls = base + nvls_lat + S / (NVLINK_BPS * eff)
    return (ring, "ring") if ring <= nvls else (nvls, "nvls")


def load():
    dgxc = []
    for r in csv.DictReader(open(os.path.join(VAL, "nccl_allreduce_h100_1node_dgxc.csv"))):
        dgxc.append((float(r["size_bytes"]), min(float(r["time_oop_us"]), float(r["time_ip_us"])) * 1e-6))
    play = {}
    for r in csv.DictReader(open(os.path.join(VAL, "nccl_collectives_multinode_playbook.csv"))):
        if r["nodes"] == "1":
            play[r["collective"]] = float(r["median_bandwidth_GBps"]) * 1e9
    return dgxc, play


def score(p, dgxc, play, table=False):
    base, lat, eff, nl = p
    worst = worst_large = worst_small = worst_play = 0.0
    for S, meas in dgxc:
        pred, algo = allreduce_s(S, base, lat, eff, nl)
        if S >= 64 * 2**20:
            e = meas / pred - 1  # bus bandwidth error
            worst_large = max(worst_large, abs(e))
            worst = max(worst, abs(e) / 0.15)
        else:
            e = pred / meas - 1  # time error
            worst_small = max(worst_small, abs(e))
            worst = max(worst, abs(e) / 0.35)
        if table:
            print("%12.0f %10.2f %10.2f %+7.1f%% %s" % (S, meas * 1e6, pred * 1e6, 100 * (pred / meas - 1), algo))
    S = 256 * 2**20
    preds = {"AllReduce": 2 * (N - 1) / N * S / allreduce_s(S, base, lat, eff, nl)[0]}
    preds["AllGather"] = preds["ReduceScatter"] = (N - 1) / N * S / ring_s((N - 1) / N * S, N - 1, base, lat, eff)
    for k, meas_bus in play.items():
        e = preds[k] / meas_bus - 1
        worst_play = max(worst_play, abs(e))
        worst = max(worst, abs(e) / 0.15)
        if table:
            print("playbook 1 node %-13s meas %6.1f pred %6.1f GB/s %+6.1f%%" % (k, meas_bus / 1e9, preds[k] / 1e9, 100 * e))
    return worst, worst_large, worst_small, worst_play


def load_a100():
    """(size, seconds) of the fitted source and of the held-out one."""
    fit, held = [], []
    for r in csv.DictReader(open(os.path.join(VAL, "kernels", "collectives.csv"))):
        if r["gpu"] != "A100" or r["collective"] != "all_reduce":
            continue
        S, bus = float(r["msg_bytes"]), float(r["value"]) * 1e9
        t = float(r["time_us"]) * 1e-6 if r["time_us"] else 2 * (N - 1) / N * S / bus
        (fit if r["system"].startswith("single A100 node") else held).append((S, t))
    return fit, held


def main_a100():
    fit, held = load_a100()
    us = 1e-6
    grid = [(b * 0.5 * us, (0.5 + 0.25 * l) * us, 0.60 + 0.005 * e, None)
            for b in range(41) for l in range(80) for e in range(61)]
    best = min(grid, key=lambda p: score(p, fit, {})[0])
    if "--table" in sys.argv:
        print("fitted: single A100 node (8 GPUs)")
    w = score(best, fit, {}, table="--table" in sys.argv)
    if "--table" in sys.argv:
        print("held out: Azure ND A100 v4")
    h = score(best, held, {}, table="--table" in sys.argv)
    print("A100: coll_base %.1f us, nvlink_lat %.2f us, nvlink_eff %.3f" % (best[0] / us, best[1] / us, best[2]))
    print("fitted (%d rows) worst: bus bandwidth >= 64 MiB %.1f%%, time < 64 MiB %.1f%%" % (len(fit), 100 * w[1], 100 * w[2]))
    print("held out (%d rows) worst: bus bandwidth >= 64 MiB %.1f%%, time < 64 MiB %.1f%%" % (len(held), 100 * h[1], 100 * h[2]))


def main():
    if A100:
        return main_a100()
    dgxc, play = load()
    us = 1e-6
    grid = [(b * 0.5 * us, (0.5 + 0.25 * l) * us, 0.50 + 0.005 * e, 10 * v * us)
            for b in range(29) for l in range(40) for e in range(31) for v in range(21)]
    best = min(grid, key=lambda p: score(p, dgxc, play)[0])
    w = score(best, dgxc, play, table="--table" in sys.argv)
    print("coll_base %.1f us, nvlink_lat %.2f us, nvlink_eff %.3f, nvls_lat %.0f us" %
          (best[0] / us, best[1] / us, best[2], best[3] / us))
    print("worst: bus bandwidth >= 64 MiB %.1f%%, time < 64 MiB %.1f%%, playbook 1-node %.1f%%" %
          (100 * w[1], 100 * w[2], 100 * w[3]))


if __name__ == "__main__":
    main()
