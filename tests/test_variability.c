/*
 * The variability model (src/exec/variability.c, docs/models.md "Variability"): per-GPU compute
 * speeds 1 + sigma z, the slowest GPU of a simulated rank's group setting its pace.
 *   - the draw is deterministic: the same seed gives bit-identical predictions, another seed
 *     another draw;
 *   - the slowdown of a rank standing for N GPUs follows the expected maximum of N normals
 *     (averaged over seeds): 1 / (1 - sigma E[max]), E[max] = 1.4236 (N = 8), 3.2414 (N = 1024);
 *   - the executor slows that rank's kernels by exactly the factor, and the breakdown moves the
 *     excess to "wait for stragglers": a one-GPU job at sigma 0.05 against the same at 0, by hand.
 */
#include "check.h"
#include "orrery/exec.h"
#include "orrery/orrery.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int predict(const char **argv, int argc, orr_prediction *p)
{
    orr_spec s;
    orr_err err;
    orr_spec_init(&s);
    int ok = orr_spec_apply_flags(&s, argc, (char **)argv, &err) == 0 && orr_spec_resolve(&s, &err) == 0 &&
             orr_predict(&s, p, &err) == 0;
    CHECK_MSG(ok, "%s", err.msg);
    return ok;
}

/* Mean over 40 seeds of rank 0's slowdown in a DP job of n GPUs (one simulated rank for all). */
static double mean_slowdown(const char *gpus, double sigma)
{
    const char *argv[] = {"--model", "gpt3-1.3b", "--gpu", "H100", "--gpus", gpus, "--mbs", "1", "--seq", "2048"};
    orr_spec s;
    orr_err err;
    orr_spec_init(&s);
    if (orr_spec_apply_flags(&s, 10, (char **)argv, &err) || orr_spec_resolve(&s, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return 0;
    }
    orr_workload *w = orr_gen_training(&s, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (!w) return 0;
    CHECK_EQ_I64(w->nranks, 1);
    double sum = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) sum += orr_exec_rank_slowdown(w, 0, sigma, seed);
    CHECK_REL(orr_exec_rank_slowdown(w, 0, 0.0, 7), 1.0, 0);
    orr_workload_free(w);
    return sum / 40;
}

static void expected_max(void)
{
    const double sigma = 0.011;
    double m8 = mean_slowdown("8", sigma), m1024 = mean_slowdown("1024", sigma);
    double e8 = 1 / (1 - sigma * 1.4236), e1024 = 1 / (1 - sigma * 3.2414);
    printf("mean slowdown over 40 draws: 8 GPUs %.5f (expected %.5f), 1024 GPUs %.5f (expected %.5f)\n", m8, e8,
           m1024, e1024);
    /* the mean of 40 maxima: standard error about sigma x 0.6 / sqrt(40) (N = 8) */
    CHECK(fabs(m8 - e8) < 0.25 * sigma);
    CHECK(fabs(m1024 - e1024) < 0.25 * sigma);
    CHECK(m1024 > m8);
}

static void determinism_and_breakdown(void)
{
    const char *base[] = {"--model", "gpt3-1.3b", "--gpu", "H100", "--gpus", "1", "--mbs", "1", "--seq", "2048",
                          "--variability", "0.05", "--variability-seed", "4"};
    const int n = (int)(sizeof base / sizeof base[0]);
    orr_prediction a, b, c, z;
    if (!predict(base, n, &a)) return;
    if (!predict(base, n, &b)) return;
    CHECK_EQ_I64(a.r.iteration_ps, b.r.iteration_ps);
    const char *other[n];
    memcpy(other, base, sizeof other);
    other[n - 1] = "3";
    if (!predict(other, n, &c)) return;
    const char *none[n];
    memcpy(none, base, sizeof none);
    none[n - 3] = "none";
    if (!predict(none, n, &z)) return;
    double f = a.x.ranks[0].slowdown, fc = c.x.ranks[0].slowdown;
    printf("one GPU, sigma 0.05: slowdown %.5f (seed 4), %.5f (seed 3); iteration %.6f s, %.6f s without\n", f, fc,
           a.r.iteration_ps / 1e12, z.r.iteration_ps / 1e12);
    CHECK(f > 1.0 && fc >= 1.0 && f != fc); /* seed 4's GPU 0 is slow, seed 3's is not: clamped to 1 */
    CHECK_REL(z.x.ranks[0].slowdown, 1.0, 0);
    CHECK_EQ_I64(z.r.mean.wait_ps, 0);
    /* by hand: every kernel takes f times as long; the breakdown's compute is the catalog's share */
    CHECK_REL((double)a.r.mean.compute_ps, (double)z.r.mean.compute_ps, 1e-3);
    /* kernels only: copies and memsets (part of compute) keep their time, so a little under */
    CHECK((double)a.r.mean.wait_ps <= (f - 1.0) * (double)z.r.mean.compute_ps * 1.001);
    CHECK((double)a.r.mean.wait_ps >= (f - 1.0) * (double)z.r.mean.compute_ps * 0.9);
    CHECK(a.r.iteration_ps > z.r.iteration_ps);
    orr_prediction_free(&a);
    orr_prediction_free(&b);
    orr_prediction_free(&c);
    orr_prediction_free(&z);
}

int main(void)
{
    expected_max();
    determinism_and_breakdown();
    return check_done();
}
