/*
 * test_search.c - orrery search (src/search/): enumeration order and counts on a tiny space, the
 * default rules, invalid trials with resolve's reason, the memory lower bound's soundness (pruned and
 * unpruned exhaustive searches agree on the best and the feasible set, three spaces), duplicates,
 * the random strategy under a seed, and -j 1 == -j 2.
 */
#include "check.h"
#include "orrery/search.h"

#include <string.h>

/* Runs `orrery search ARGS` (words split on spaces) into r; returns orr_search_run's status and
 * leaves the message in err. */
static int search(const char *args, orr_search_result *r, orr_search_opts *o, orr_err *err)
{
    char buf[1024], *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", args);
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && argc < 64; w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    int rc = orr_search_parse(o, argc, argv, err);
    if (rc == 0) rc = orr_search_run(o, r, err);
    else memset(r, 0, sizeof *r);
    orr_search_opts_free(o); /* base_argv points into buf: done with it */
    o->spec_path = NULL;
    return rc;
}

#define BASE "--model gpt3-125m --gpu A100-SXM4-80GB --gpus 8 --gbs 16 "

/* Two searches give the same JSON, byte for byte (wall time aside); evaluated: the simulations each
 * must have made (UINT32_MAX: any). */
static void same_json(const char *x, const char *y, uint32_t evaluated)
{
    orr_search_opts o;
    orr_search_result a, b;
    orr_err err = {{0}};
    orr_buf ja = {0}, jb = {0};
    CHECK_MSG(search(x, &a, &o, &err) == 0, "%s", err.msg);
    CHECK_MSG(search(y, &b, &o, &err) == 0, "%s", err.msg);
    if (evaluated != UINT32_MAX) CHECK_EQ_I64(a.evaluated, evaluated);
    a.wall_s = b.wall_s = 0;
    orr_search_json(&a, &o, &ja);
    orr_search_json(&b, &o, &jb);
    CHECK(ja.n == jb.n && ja.n > 0 && memcmp(ja.s, jb.s, ja.n) == 0);
    orr_buf_free(&ja);
    orr_buf_free(&jb);
    orr_search_result_free(&a);
    orr_search_result_free(&b);
}

static void test_enumeration(void)
{
    orr_search_opts o;
    orr_search_result r;
    orr_err err = {{0}};
    CHECK(search(BASE "--tp 1,2 --pp 1,2 --mbs 1,2 --recompute none", &r, &o, &err) == 0);
    CHECK_EQ_I64(r.ntrials, 8);
    /* tp outermost, then pp, then mbs (the last axis varies fastest) */
    static const uint32_t want[8][3] = {{1, 1, 1}, {1, 1, 2}, {1, 2, 1}, {1, 2, 2},
                                        {2, 1, 1}, {2, 1, 2}, {2, 2, 1}, {2, 2, 2}};
    for (uint32_t i = 0; i < r.ntrials && i < 8; i++) {
        CHECK_EQ_I64(r.trials[i].index, i);
        CHECK_EQ_I64(r.trials[i].v[ORR_AX_TP], want[i][0]);
        CHECK_EQ_I64(r.trials[i].v[ORR_AX_PP], want[i][1]);
        CHECK_EQ_I64(r.trials[i].v[ORR_AX_MBS], want[i][2]);
        CHECK_EQ_I64(r.trials[i].dp, 8 / (want[i][0] * want[i][1]));
        CHECK_EQ_I64(r.trials[i].v[ORR_AX_SP], want[i][0] > 1); /* megatron: sp with tp > 1 */
        CHECK_EQ_I64(r.trials[i].v[ORR_AX_DIST_OPT], 1);
    }
    CHECK_EQ_I64(r.valid, 8);
    CHECK_EQ_I64(r.ok + r.oom, r.evaluated);
    CHECK_EQ_I64(r.evaluated, 8);
    CHECK(r.nranked == r.ok && r.nranked > 0);
    for (uint32_t k = 1; k < r.nranked; k++)
        CHECK(r.trials[r.ranked[k - 1]].iteration_s <= r.trials[r.ranked[k]].iteration_s);
    orr_search_result_free(&r);

    /* defaults: tp divisors of 8 up to 8 per node; pp divisors of 8/tp; mbs powers of two of gbs/dp;
     * three recompute modes: tp1 (pp 1,2,4,8), tp2 (1,2,4), tp4 (1,2), tp8 (1) with dp = 8/(tp pp) */
    CHECK(search(BASE "--recompute none", &r, &o, &err) == 0);
    uint32_t want_n = 0;
    for (uint32_t tp = 1; tp <= 8; tp *= 2)
        for (uint32_t pp = 1; tp * pp <= 8; pp *= 2)
            for (uint32_t m = 1; m <= 16 / (8 / (tp * pp)); m *= 2) want_n++;
    CHECK_EQ_I64(r.ntrials, want_n);
    orr_search_result_free(&r);
    CHECK(search(BASE "--tp 1 --pp 1 --mbs 1", &r, &o, &err) == 0);
    CHECK_EQ_I64(r.ntrials, 3);
    CHECK(r.ntrials == 3 && r.trials[0].v[ORR_AX_RECOMPUTE] == ORR_RECOMPUTE_NONE &&
          r.trials[2].v[ORR_AX_RECOMPUTE] == ORR_RECOMPUTE_FULL);
    orr_search_result_free(&r);
}

static void test_invalid_and_errors(void)
{
    orr_search_opts o;
    orr_search_result r;
    orr_err err = {{0}};
    /* gpt3-13b has 40 heads: tp 16 does not divide them */
    CHECK(search("--model gpt3-13b --gpu A100-SXM4-80GB --gpus 16 --gbs 32 --tp 8,16 --pp 1 --mbs 1 --recompute full",
                 &r, &o, &err) == 0);
    CHECK_EQ_I64(r.ntrials, 2);
    CHECK_EQ_I64(r.valid, 1);
    if (r.ntrials == 2) {
        CHECK(r.trials[1].status == ORR_TRIAL_INVALID);
        CHECK_MSG(strstr(r.trials[1].reason, "heads (40) must be divisible by tp") != NULL, "%s", r.trials[1].reason);
        CHECK(strcmp(r.trials[1].key, "divisibility") == 0);
    }
    orr_search_result_free(&r);
    /* a framework's option under another is resolve's "framework" reason */
    CHECK(search(BASE "--framework deepspeed --tp 1 --pp 2 --mbs 1 --recompute none --zero 1,3", &r, &o, &err) == 0);
    CHECK(r.ntrials == 2 && r.trials[0].status == ORR_TRIAL_OK && r.trials[1].status == ORR_TRIAL_INVALID &&
          strcmp(r.trials[1].key, "framework") == 0);
    orr_search_result_free(&r);
    /* user errors name the flag */
    static const struct { const char *args, *msg; } bad[] = {
        {BASE "--tp 1,x", "--tp: expected"},
        {BASE "--strategy cmaes", "--strategy cmaes: give --budget"},
        {BASE "--strategy random", "--budget"},
        {BASE "--objective cost", "--price-per-gpu-hour"},
        {"--model gpt3-125m --gpu A100-SXM4-80GB --gpus 8", "--gbs: required"},
        {BASE "--pp 1..100", "more than 64 values"},
        {BASE "--dp 2", "--dp"},
        {BASE "--tp 1..64 --pp 1..64 --mbs 1..32", "more than 100000 trials"},
        {BASE "--nett flow", "unknown flag"},
        {"--model gpt3-125m --gpu A100-SXM4-80GB --gbs 16 --gpus 8,auto", "--gpus: expected"},
        {BASE "--tokens lots", "--tokens: expected"},
        {BASE "--refine 2", "--refine 2: give --net flow or --net packet"},
        {BASE "--refine 2 --net wormhole", "--net: expected"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = 0;
        CHECK_MSG(search(bad[i].args, &r, &o, &err) < 0 && strstr(err.msg, bad[i].msg), "%s: %s", bad[i].args, err.msg);
        orr_search_result_free(&r);
    }
}

/* A pruned and an unpruned exhaustive search of the same space: the same best; the same ok set but
 * for the trials the time bound pruned, each of which is no better than the best when simulated;
 * every trial the memory bound pruned OOM when simulated; neither bound ever above what a
 * simulation gives (peak bytes, iteration time). Both tactics must prune something (or it is not a
 * test of them). */
static uint32_t soundness(const char *space)
{
    orr_search_opts o;
    orr_search_result a, b;
    orr_err err = {{0}};
    char args[1024];
    snprintf(args, sizeof args, "%s --no-prune", space);
    CHECK_MSG(search(space, &a, &o, &err) == 0, "%s", err.msg);
    CHECK_MSG(search(args, &b, &o, &err) == 0, "%s", err.msg);
    CHECK(a.ntrials == b.ntrials);
    CHECK(a.nranked > 0 && b.nranked > 0);
    if (!a.nranked || !b.nranked || a.ntrials != b.ntrials) return 0;
    CHECK_EQ_I64(a.ranked[0], b.ranked[0]);
    double best = b.trials[b.ranked[0]].iteration_s;
    uint32_t mem = 0, time = 0, dominated = 0;
    for (uint32_t i = 0; i < a.ntrials; i++) {
        const orr_trial *p = &a.trials[i], *u = &b.trials[i];
        if (strcmp(p->key, "compute_time_bound") == 0) {
            time++;
            CHECK_MSG(u->status != ORR_TRIAL_OK || u->iteration_s >= best, "%s: trial %u pruned by time but %.6f s < "
                      "best %.6f s", space, i, u->iteration_s, best);
        } else {
            CHECK_MSG((p->status == ORR_TRIAL_OK) == (u->status == ORR_TRIAL_OK), "%s: trial %u", space, i);
        }
        if (strcmp(p->key, "oom_dominated") == 0) {
            dominated++;
            CHECK_MSG(u->status == ORR_TRIAL_OOM, "%s: trial %u pruned as oom_dominated but %s", space, i,
                      orr_trial_status_name(u->status));
        }
        if (strcmp(p->key, "memory_lower_bound") == 0) {
            mem++;
            CHECK_MSG(u->status == ORR_TRIAL_OOM, "%s: trial %u pruned by the bound but %s", space, i,
                      orr_trial_status_name(u->status));
        }
        if (u->status == ORR_TRIAL_OK) {
            CHECK_MSG(u->bound_bytes <= u->peak_bytes, "%s: trial %u bound %llu > peak %llu", space, i,
                      (unsigned long long)u->bound_bytes, (unsigned long long)u->peak_bytes);
            CHECK_MSG(u->bound_s > 0 && u->bound_s <= u->iteration_s, "%s: trial %u time bound %.6f s > %.6f s",
                      space, i, u->bound_s, u->iteration_s);
        }
    }
    CHECK_MSG(mem > 0, "%s: the memory bound pruned nothing (not a test of it)", space);
    CHECK_MSG(time > 0, "%s: the time bound pruned nothing (not a test of it)", space);
    printf("soundness: %u trials, pruned %u by the memory bound, %u by the time bound, %u as OOM-dominated; %u "
           "simulated (unpruned: %u)\n", a.ntrials, mem, time, dominated, a.evaluated, b.evaluated);
    orr_search_result_free(&a);
    orr_search_result_free(&b);
    return dominated;
}

/* An MoE model: its routed experts are sharded over ep (not tp), so a memory bound that counted them
 * over tp x pp pruned configurations that fit (mixtral-8x7b, --ep 8: the best, TP 2 PP 1 at 76 GiB,
 * was pruned). The bounds must stay below every simulated trial, the same best pruned or not; the
 * time bound is off for MoE models (idle experts, dropped tokens). */
static void moe_bounds(const char *space)
{
    char args[512];
    snprintf(args, sizeof args, "%s --no-prune", space);
    orr_search_opts o;
    orr_search_result a, b;
    orr_err err = {{0}};
    CHECK_MSG(search(space, &a, &o, &err) == 0, "%s", err.msg);
    CHECK_MSG(search(args, &b, &o, &err) == 0, "%s", err.msg);
    CHECK(a.nranked > 0 && b.nranked > 0 && a.ntrials == b.ntrials);
    if (!a.nranked || !b.nranked || a.ntrials != b.ntrials) return;
    CHECK_EQ_I64(a.ranked[0], b.ranked[0]);
    uint32_t ok = 0;
    for (uint32_t i = 0; i < b.ntrials; i++) {
        const orr_trial *u = &b.trials[i];
        if (strcmp(a.trials[i].key, "memory_lower_bound") == 0)
            CHECK_MSG(u->status == ORR_TRIAL_OOM, "MoE trial %u pruned by the memory bound but %s", i,
                      orr_trial_status_name(u->status));
        if (u->status != ORR_TRIAL_OK) continue;
        ok++;
        CHECK_MSG(u->bound_bytes <= u->peak_bytes, "MoE trial %u bound %llu > peak %llu", i,
                  (unsigned long long)u->bound_bytes, (unsigned long long)u->peak_bytes);
        CHECK(u->bound_s == 0);
    }
    CHECK(ok > 0);
    printf("MoE bounds: %u trials, %u fit, best trial %u pruned and unpruned\n", b.ntrials, ok, a.ranked[0]);
    orr_search_result_free(&a);
    orr_search_result_free(&b);
}

/* The same under Megatron (parallel folding) and under TorchTitan (FSDP2 + EP: the experts sharded
 * over fsdp/ep ranks, left out of the bound). */
static void test_moe_bounds(void)
{
    moe_bounds("--model mixtral-8x7b --gpu H100-SXM5-80GB --gpus 32 --gbs 64 --seq 4096 --ep 8 --tp 1,2 --pp 1,2,4 "
               "--recompute none,full");
    moe_bounds("--model mixtral-8x7b --gpu H100-SXM5-80GB --gpus 32 --gbs 64 --seq 4096 --framework torchtitan --ep 8 "
               "--pp 1,2,4 --mbs 1,2 --recompute none,full");
    moe_bounds("--model mixtral-8x7b --gpu H100-SXM5-80GB --gpus 32 --gbs 64 --seq 4096 --framework torchtitan --ep 8 "
               "--pp 1,2,4 --mbs 1,2 --recompute none,full --bf16-params --plain-experts");
}

/* Expert parallelism is an axis: a dense model has the single value 1; an MoE model left without
 * --ep gets every divisor of its experts that divides the GPUs of a pipeline stage (Megatron-Core's
 * folding), each trial predicted with its EP (the experts' memory shrinks as EP grows); a value that
 * does not divide the experts is invalid with resolve's reason. */
static void test_ep_axis(void)
{
    orr_search_opts o;
    orr_search_result r;
    orr_err err = {{0}};
    CHECK_MSG(search("--model mixtral-8x7b --gpu H100-SXM5-80GB --gpus 32 --gbs 64 --seq 4096 --tp 2 --pp 2 --mbs 1 "
                     "--recompute full --dist-opt on --no-prune",
                     &r, &o, &err) == 0,
              "%s", err.msg);
    CHECK_EQ_I64(r.ntrials, 4);
    for (uint32_t i = 0; i < r.ntrials && r.ntrials == 4; i++) {
        CHECK_EQ_I64(r.trials[i].v[ORR_AX_EP], 1u << i);
        CHECK_MSG(r.trials[i].status == ORR_TRIAL_OK || r.trials[i].status == ORR_TRIAL_OOM, "ep %u: %s",
                  r.trials[i].v[ORR_AX_EP], r.trials[i].reason);
    }
    if (r.ntrials == 4)
        for (uint32_t i = 1; i < 4; i++)
            CHECK_MSG(r.trials[i].peak_bytes < r.trials[i - 1].peak_bytes, "peak with ep %u (%llu) not below ep %u (%llu)",
                      r.trials[i].v[ORR_AX_EP], (unsigned long long)r.trials[i].peak_bytes,
                      r.trials[i - 1].v[ORR_AX_EP], (unsigned long long)r.trials[i - 1].peak_bytes);
    orr_search_result_free(&r);
    CHECK_MSG(search("--model mixtral-8x7b --gpu H100-SXM5-80GB --gpus 32 --gbs 64 --tp 2 --pp 2 --mbs 1 --ep 16,4 --etp 1 --recompute full",
                     &r, &o, &err) == 0,
              "%s", err.msg);
    CHECK(r.ntrials == 2 && r.trials[0].status == ORR_TRIAL_INVALID && strstr(r.trials[0].reason, "divisible by ep"));
    orr_search_result_free(&r);
    CHECK(search(BASE "--tp 1,2 --pp 1 --mbs 1 --recompute none", &r, &o, &err) == 0);
    CHECK(r.ntrials == 2 && r.trials[0].v[ORR_AX_EP] == 1 && r.trials[1].v[ORR_AX_EP] == 1);
    orr_search_result_free(&r);
}

static void test_lower_bound(void)
{
    uint32_t dominated = soundness("--model gpt3-1.3b --gpu A100-SXM4-80GB --mem-capacity 16GiB --gpus 8 --gbs 16 --tp 1,2,4 --pp 1,2,4,8 "
              "--recompute none,full --dist-opt on,off");
    dominated += soundness("--model gpt3-2.7b --gpu H100-SXM5-80GB --mem-capacity 12GiB --gpus 8 --gbs 16 --framework torchtitan "
              "--tp 1,2,4 --pp 1,2,4 --recompute selective,full --fsdp auto");
    dominated += soundness("--model gpt3-1.3b --gpu A100-SXM4-80GB --mem-capacity 6GiB --gpus 8 --gbs 16 "
                           "--framework deepspeed --tp 1,2,4 --pp 1,2,4 --zero 1 --recompute none,full");
    CHECK_MSG(dominated > 0, "no trial pruned as oom_dominated (not a test of it)");
}

static void test_duplicates_random_jobs(void)
{
    orr_search_opts o;
    orr_search_result r, a, b;
    orr_err err = {{0}};
    CHECK(search(BASE "--tp 2,2 --pp 1 --mbs 1 --recompute none", &r, &o, &err) == 0);
    CHECK(r.ntrials == 2 && r.trials[1].status == ORR_TRIAL_PRUNED && strcmp(r.trials[1].key, "duplicate") == 0);
    CHECK_EQ_I64(r.evaluated, 1);
    orr_search_result_free(&r);

    /* random: deterministic under the seed, at most budget simulations */
    CHECK(search(BASE "--strategy random --budget 5 --seed 7", &a, &o, &err) == 0);
    CHECK(search(BASE "--strategy random --budget 5 --seed 7", &b, &o, &err) == 0);
    CHECK_EQ_I64(a.evaluated, 5);
    int same = a.ntrials == b.ntrials;
    for (uint32_t i = 0; same && i < a.ntrials; i++) same = a.trials[i].status == b.trials[i].status;
    CHECK(same);
    orr_search_result_free(&b);
    CHECK(search(BASE "--strategy random --budget 5 --seed 8", &b, &o, &err) == 0);
    int differs = 0;
    for (uint32_t i = 0; i < a.ntrials && i < b.ntrials; i++) differs |= a.trials[i].status != b.trials[i].status;
    CHECK(differs);
    orr_search_result_free(&a);
    orr_search_result_free(&b);

    /* -j 1 and -j 2: the same JSON, byte for byte (wall time aside) */
    same_json(BASE "--recompute none,full -j 1", BASE "--recompute none,full -j 2", UINT32_MAX);
}

/* CMA-ES (--strategy cmaes) against the exhaustive best of a 522-valid space, 10 seeds with a budget
 * of 15% of the candidates: within 4% on at least 9 seeds, and the mean number of simulations until
 * the first trial within 4% (a seed that never gets there counts every candidate) at most 15% of the
 * candidates; within 2% printed. The same seed gives the same search, also with -j 2. The bar was 2%
 * until 2026-11-27, when Megatron's selective recompute began to re-run the fused attention core (as
 * attention.py's checkpointed core does): selective had been a free twin of none, so six configurations
 * lay within 2% of the best, two since (the best at mbs 4 and mbs 2); within 2% CMA-ES then reaches it on
 * 7 of 10 seeds (mean gap 1.3%), within 4% (the best five) on every seed. */
static void test_cmaes(void)
{
#define CMA_SPACE BASE_125M "--gbs 32 --vpp auto --dist-opt on,off"
#define BASE_125M "--model gpt3-125m --gpu A100-SXM4-80GB --gpus 8 "
    orr_search_opts o;
    orr_search_result ex, r;
    orr_err err = {{0}};
    CHECK_MSG(search(CMA_SPACE, &ex, &o, &err) == 0, "%s", err.msg);
    if (!ex.nranked) return;
    double best = ex.trials[ex.ranked[0]].iteration_s;
    uint32_t ncand = ex.evaluated;
    for (uint32_t i = 0; i < ex.npruned; i++)
        if (strcmp(ex.pruned[i].key, "compute_time_bound") == 0) ncand += ex.pruned[i].n;
    uint32_t budget = ncand * 15 / 100, hits = 0, hits2 = 0;
    double reach_sum = 0, gap_sum = 0;
    for (int seed = 1; seed <= 10; seed++) {
        char args[512];
        snprintf(args, sizeof args, CMA_SPACE " --strategy cmaes --budget %u --seed %d", budget, seed);
        CHECK_MSG(search(args, &r, &o, &err) == 0, "%s", err.msg);
        CHECK(r.evaluated <= budget);
        uint32_t first = 0, first2 = 0;
        for (uint32_t i = 0; i < r.ntrials; i++) {
            const orr_trial *t = &r.trials[i];
            if (t->status != ORR_TRIAL_OK) continue;
            if (t->iteration_s <= 1.04 * best && (!first || t->order < first)) first = t->order;
            if (t->iteration_s <= 1.02 * best && (!first2 || t->order < first2)) first2 = t->order;
        }
        hits += first > 0;
        hits2 += first2 > 0;
        reach_sum += first ? first : ncand;
        gap_sum += r.nranked ? r.trials[r.ranked[0]].iteration_s / best - 1 : 1;
        orr_search_result_free(&r);
    }
    printf("cmaes: %u candidates, budget %u: within 4%% on %u/10 seeds (within 2%% on %u), mean gap %.2f%%, mean "
           "simulations to 4%% %.1f (%.1f%% of the candidates)\n", ncand, budget, hits, hits2, 10 * gap_sum,
           reach_sum / 10, 10 * reach_sum / ncand);
    CHECK(hits >= 9);
    CHECK(reach_sum / 10 <= 0.15 * ncand);
    orr_search_result_free(&ex);

    same_json(CMA_SPACE " --strategy cmaes --budget 30 --seed 4", CMA_SPACE " --strategy cmaes --budget 30 --seed 4 -j 2",
              30);
}

/* --gpus 4,8,16: every count in the space; the Pareto front (time against GPUs) by ascending GPUs with
 * strictly falling times, each entry the fastest trial on its count, the same with and without
 * pruning; --tokens gives the time to train. */
static void test_pareto(void)
{
    orr_search_opts o;
    orr_search_result a, b;
    orr_err err = {{0}};
#define PARETO "--model gpt3-350m --gpu A100-SXM4-80GB --gbs 32 --gpus 4,8,16 --recompute none,full --tokens 1e9"
    CHECK_MSG(search(PARETO, &a, &o, &err) == 0, "%s", err.msg);
    CHECK_MSG(search(PARETO " --no-prune", &b, &o, &err) == 0, "%s", err.msg);
    CHECK(a.npareto >= 2 && a.npareto == b.npareto);
    for (uint32_t k = 0; k < a.npareto && k < b.npareto; k++) CHECK_EQ_I64(a.pareto[k], b.pareto[k]);
    for (uint32_t k = 0; k < a.npareto; k++) {
        const orr_trial *p = &b.trials[a.pareto[k]];
        if (k) {
            const orr_trial *q = &b.trials[a.pareto[k - 1]];
            CHECK(p->v[ORR_AX_GPUS] > q->v[ORR_AX_GPUS] && p->iteration_s < q->iteration_s);
        }
        for (uint32_t i = 0; i < b.ntrials; i++) /* nothing on as many GPUs or fewer is faster */
            if (b.trials[i].status == ORR_TRIAL_OK && b.trials[i].v[ORR_AX_GPUS] <= p->v[ORR_AX_GPUS])
                CHECK_MSG(b.trials[i].iteration_s >= p->iteration_s, "trial %u beats Pareto entry %u", i, a.pareto[k]);
    }
    orr_buf j = {0};
    orr_search_json(&a, &o, &j);
    orr_buf_puts(&j, "");
    CHECK(j.n && strstr(j.s, "\"time_to_train_s\": ") && strstr(j.s, "\"pareto\": [") && strstr(j.s, "\"gpus\": 16"));
    orr_buf_free(&j);
    orr_search_result_free(&a);
    orr_search_result_free(&b);
}

/* --refine 3 --net flow: the best three re-simulated under the flow network, ranked again by that
 * time (a permutation of 1..3 in refined-time order); each refined time within 2x of the analytic
 * one (the same job, a finer network). */
static void test_refine(void)
{
    orr_search_opts o;
    orr_search_result r;
    orr_err err = {{0}};
    CHECK_MSG(search(BASE "--tp 1,2 --pp 1,2 --recompute none --refine 3 --net flow", &r, &o, &err) == 0, "%s", err.msg);
    CHECK_EQ_I64(r.nrefined, 3);
    uint32_t seen = 0;
    for (uint32_t k = 0; k < r.nrefined; k++) {
        const orr_refined *x = &r.refined[k];
        CHECK_EQ_I64(x->rank, k + 1);
        CHECK_EQ_I64(x->index, r.ranked[k]);
        CHECK(x->new_rank >= 1 && x->new_rank <= 3);
        seen |= 1u << x->new_rank;
        double analytic = r.trials[x->index].iteration_s;
        CHECK_MSG(x->iteration_s > 0.5 * analytic && x->iteration_s < 2 * analytic, "%.6f vs %.6f", x->iteration_s,
                  analytic);
        for (uint32_t j = 0; j < r.nrefined; j++)
            if (r.refined[j].new_rank < x->new_rank) CHECK(r.refined[j].iteration_s <= x->iteration_s);
    }
    CHECK_EQ_I64(seen, 0xe);
    orr_search_result_free(&r);
}

int main(void)
{
    test_refine();
    test_pareto();
    test_cmaes();
    test_enumeration();
    test_invalid_and_errors();
    test_lower_bound();
    test_moe_bounds();
    test_ep_axis();
    test_duplicates_random_jobs();
    return check_done();
}
