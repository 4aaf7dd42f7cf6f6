/*
 * search.c - `orrery-bench search [-j N]` (issue 21): an exhaustive `orrery search` of a 70B model
 * (llama3-70b, seq 4096, gbs 1024) on 512 H100s over tp, pp, vpp, mbs, recomputation and the
 * distributed optimizer (3,156 trials, about 2,400 valid), with N worker processes (default 2):
 * prints the space, what each pruning tactic saved, the simulations, wall time and trials/s
 * (simulated, and valid configurations decided), and the CPU time (on a shared machine the wall time
 * says more about the other processes). Target: under 60 s on 2 cores.
 */
#include "orrery/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* CPU seconds (user + system) of this process and its finished children (the -j workers). */
static double cpu_s(void)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    const struct timeval *t[] = {&self.ru_utime, &self.ru_stime, &kids.ru_utime, &kids.ru_stime};
    double s = 0;
    for (int i = 0; i < 4; i++) s += (double)t[i]->tv_sec + (double)t[i]->tv_usec * 1e-6;
    return s;
}

int bench_search(int argc, char **argv);

int bench_search(int argc, char **argv)
{
    const char *jobs = "2";
    for (int i = 0; i + 1 < argc; i++)
        if (strcmp(argv[i], "-j") == 0) jobs = argv[i + 1];
    char *args[] = {"--model", "llama3-70b", "--gpu", "H100-SXM5-80GB", "--gpus", "512", "--gbs", "1024", "--seq",
                    "4096", "--vpp", "auto", "--dist-opt", "on,off", "-j", (char *)jobs};
    orr_search_opts o;
    orr_search_result r;
    orr_err err = {{0}};
    if (orr_search_parse(&o, (int)(sizeof args / sizeof args[0]), args, &err) || orr_search_run(&o, &r, &err)) {
        fprintf(stderr, "orrery-bench: search: %s\n", err.msg);
        orr_search_opts_free(&o);
        return 1;
    }
    printf("search: %s, -j %u\n  %u trials, %u valid, %u simulated (%u fit, %u OOM); pruned:", r.title, o.jobs,
           r.ntrials, r.valid, r.evaluated, r.ok, r.oom);
    for (uint32_t i = 0; i < r.npruned; i++) printf(" %s %u", r.pruned[i].key, r.pruned[i].n);
    double cpu = cpu_s();
    printf("\n  wall %.2f s, %.1f simulations/s, %.1f valid configurations decided/s; CPU %.1f s (%.1f s per "
           "core on %u cores: the wall time where no other process shares them)\n", r.wall_s, r.evaluated / r.wall_s,
           r.valid / r.wall_s, cpu, cpu / o.jobs, o.jobs);
    if (r.nranked) {
        const orr_trial *b = &r.trials[r.ranked[0]];
        printf("  best: tp %u pp %u dp %u vpp %u mbs %u %s, %.4f s per iteration\n", b->v[ORR_AX_TP], b->v[ORR_AX_PP],
               b->dp, b->v[ORR_AX_VPP], b->v[ORR_AX_MBS], orr_recompute_name((orr_recompute)b->v[ORR_AX_RECOMPUTE]),
               b->iteration_s);
    }
    orr_search_result_free(&r);
    orr_search_opts_free(&o);
    return 0;
}
