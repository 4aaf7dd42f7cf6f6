/*
 * variability.c - per-GPU compute speeds (docs/models.md "Variability").
 *
 * Same-SKU GPUs do not run at the same speed (manufacturing spread, power and thermal management:
 * Sinha et al., SC'22). GPU g computes at 1 + sigma z_g, z_g a standard normal drawn from the seed
 * and g alone. Every synchronisation waits for its slowest member, so a job of many GPUs runs at
 * the pace of the slowest of them: the expected maximum of N normals grows like sqrt(2 ln N), which
 * is what bends weak scaling without a fitted slope.
 */
#include "orrery/exec.h"

#include <math.h>

/* A standard normal from (seed, gpu): Box-Muller on two 53-bit uniforms from the hash. */
static double gpu_normal(uint64_t seed, uint32_t gpu)
{
    uint64_t h1 = orr_hash64(seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)gpu << 1));
    uint64_t h2 = orr_hash64(h1 ^ 0xD1B54A32D192ED03ull);
    double u1 = ((double)(h1 >> 11) + 0.5) * 0x1p-53, u2 = (double)(h2 >> 11) * 0x1p-53;
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    return z < -6 ? -6 : z > 6 ? 6 : z;
}

static double gpu_slowdown(double sigma, uint64_t seed, uint32_t gpu)
{
    double speed = 1.0 + sigma * gpu_normal(seed, gpu);
    /* z >= -6 keeps speed >= 1 - 6 sigma, which falls below 0.5 only for sigma above 1/12 (at most
     * 0.2 is accepted): such a GPU is taken at half speed, never at zero or negative speed */
    return speed < 0.5 ? 2.0 : 1.0 / speed;
}

double orr_exec_rank_slowdown(const orr_workload *w, size_t r, double sigma, uint64_t seed)
{
    if (!(sigma > 0) || r >= w->nranks) return 1.0;
    const orr_rank *rk = &w->ranks[r];
    uint32_t n = rk->weight > 1 && w->sym.nimages > 1 ? w->sym.nimages : 1;
    double worst = 1.0; /* the catalog's speed is reached by at least half of the GPUs; a group is
                         * never faster than it */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t g = n > 1 ? orr_sym_image(&w->sym, k, rk->gpu) : rk->gpu;
        double f = gpu_slowdown(sigma, seed, g);
        if (f > worst) worst = f;
    }
    return worst;
}
