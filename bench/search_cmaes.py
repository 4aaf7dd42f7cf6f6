#!/usr/bin/env python3
"""CMA-ES against exhaustive search (issue 21's acceptance): for each space, the exhaustive best, then
`--strategy cmaes` under seeds 1..10 with a budget of 15% of the candidates (valid trials that neither
the memory bound nor the duplicate check removes, which an exhaustive search without the time bound
would simulate). Prints per space the mean gap of CMA-ES's best to the exhaustive best, how many seeds
got within 2%, and the mean number of simulations until the first trial within 2% (as a fraction of
the candidates; a seed that never gets there counts its whole budget).

usage: bench/search_cmaes.py ORRERY [-j N] [--spaces 1,2,3]   (minutes: each space is searched 11 times)
"""
import json, math, subprocess, sys

SPACES = [
    "--model gpt3-2.7b --gpu A100-SXM4-80GB --gpus 32 --gbs 256 --framework any --vpp auto --dist-opt on,off --fsdp auto",
    "--model llama3-8b --gpu H100-SXM5-80GB --gpus 64 --gbs 256 --seq 4096 --vpp auto --dist-opt on,off --sp on,off",
    "--model gpt3-13b --gpu A100-SXM4-80GB --gpus 64 --gbs 512 --vpp auto --dist-opt on,off --sp on,off",
]

def search(orr, space, extra):
    out = subprocess.run([orr, "search"] + space.split() + extra + ["--json", "--quiet"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)

def main():
    orr, jobs = sys.argv[1], sys.argv[2:] or ["-j", "1"]
    only = [int(x) for x in jobs[jobs.index("--spaces") + 1].split(",")] if "--spaces" in jobs else None
    if only: jobs = jobs[:jobs.index("--spaces")]
    for n, space in enumerate(SPACES, 1):
        if only and n not in only: continue
        ex = search(orr, space, jobs)
        best = ex["best"]["iteration_time_s"]
        ncand = ex["valid"] - ex["pruned"].get("memory_lower_bound", 0) - ex["pruned"].get("duplicate", 0)
        budget = max(1, math.floor(0.15 * ncand))
        gaps, reach, hits = [], [], 0
        for seed in range(1, 11):
            d = search(orr, space, jobs + ["--strategy", "cmaes", "--budget", str(budget), "--seed", str(seed)])
            gaps.append(d["best"]["iteration_time_s"] / best - 1 if d["best"] else float("inf"))
            within = [t["order"] for t in d["trials"] if t["status"] == "ok" and t["iteration_time_s"] <= 1.02 * best]
            hits += bool(within)
            reach.append(min(within) if within else budget)
        print(f"{space}\n  valid {ex['valid']}, candidates {ncand}, exhaustive simulated {ex['evaluated']} "
              f"in {ex['wall_s']:.1f} s, best {best:.4f} s; cmaes budget {budget} (15%): within 2% in {hits}/10 "
              f"seeds, mean gap {100 * sum(gaps) / 10:.2f}% (max {100 * max(gaps):.2f}%), mean simulations to "
              f"2% {sum(reach) / 10:.1f} = {100 * sum(reach) / 10 / ncand:.1f}% of the candidates", flush=True)

if __name__ == "__main__":
    main()
