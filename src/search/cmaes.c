/*
 * cmaes.c - CMA-ES (cmaes.h): the standard constants and updates of Hansen's tutorial (2016,
 * arXiv:1604.00772, "A Simple Implementation": equations (39)-(48) and Table 1), the covariance's
 * eigendecomposition by LAPACK (LAPACKE_dsyev) after every update, and a splitmix64 generator with
 * Box-Muller normals so that a seed fixes every sample.
 */
#include "search/cmaes.h"

#include "orrery/core.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t search_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double search_uniform(uint64_t *state)
{
    return (double)(search_random(state) >> 11) * 0x1.0p-53;
}

double search_normal(uint64_t *state)
{
    double u = 1.0 - search_uniform(state), v = search_uniform(state); /* u in (0, 1] */
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

void cmaes_init(cmaes *c, int n, int lambda, const double *mean, double sigma)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->lambda = lambda > 1 ? lambda : 4 + (int)floor(3.0 * log((double)n));
    c->mu = c->lambda / 2;
    c->sigma = sigma;
    c->w = orr_xmalloc((size_t)c->mu * sizeof *c->w);
    double sum = 0, sum2 = 0;
    for (int i = 0; i < c->mu; i++) sum += c->w[i] = log((c->lambda + 1) / 2.0) - log(i + 1.0);
    for (int i = 0; i < c->mu; i++) {
        c->w[i] /= sum;
        sum2 += c->w[i] * c->w[i];
    }
    c->mueff = 1.0 / sum2;
    double N = n;
    c->cc = (4 + c->mueff / N) / (N + 4 + 2 * c->mueff / N);
    c->cs = (c->mueff + 2) / (N + c->mueff + 5);
    c->c1 = 2 / ((N + 1.3) * (N + 1.3) + c->mueff);
    c->cmu = fmin(1 - c->c1, 2 * (c->mueff - 2 + 1 / c->mueff) / ((N + 2) * (N + 2) + c->mueff));
    c->damps = 1 + 2 * fmax(0, sqrt((c->mueff - 1) / (N + 1)) - 1) + c->cs;
    c->chi_n = sqrt(N) * (1 - 1 / (4 * N) + 1 / (21 * N * N));
    size_t nn = (size_t)n * (size_t)n;
    c->m = orr_xmalloc((size_t)n * sizeof *c->m);
    memcpy(c->m, mean, (size_t)n * sizeof *c->m);
    c->pc = calloc((size_t)n, sizeof *c->pc);
    c->ps = calloc((size_t)n, sizeof *c->ps);
    c->C = calloc(nn, sizeof *c->C);
    c->B = calloc(nn, sizeof *c->B);
    c->D = orr_xmalloc((size_t)n * sizeof *c->D);
    c->x = orr_xmalloc((size_t)c->lambda * (size_t)n * sizeof *c->x);
    c->tmp = orr_xmalloc(2 * (size_t)n * sizeof *c->tmp);
    if (!c->pc || !c->ps || !c->C || !c->B) abort();
    for (int i = 0; i < n; i++) {
        c->C[i * n + i] = c->B[i * n + i] = 1;
        c->D[i] = 1;
    }
}

void cmaes_free(cmaes *c)
{
    free(c->w);
    free(c->m);
    free(c->pc);
    free(c->ps);
    free(c->C);
    free(c->B);
    free(c->D);
    free(c->x);
    free(c->tmp);
    memset(c, 0, sizeof *c);
}

void cmaes_ask(cmaes *c, uint64_t *rng)
{
    int n = c->n;
    double *dz = c->tmp;
    for (int k = 0; k < c->lambda; k++) {
        for (int j = 0; j < n; j++) dz[j] = c->D[j] * search_normal(rng);
        for (int i = 0; i < n; i++) {
            double y = 0;
            for (int j = 0; j < n; j++) y += c->B[i * n + j] * dz[j];
            c->x[k * n + i] = c->m[i] + c->sigma * y;
        }
    }
}

/* out = C^(-1/2) v = B D^-1 B^T v. */
static void inv_sqrt_times(const cmaes *c, const double *v, double *out)
{
    int n = c->n;
    double *t = c->tmp + n;
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++) s += c->B[i * n + j] * v[i];
        t[j] = s / c->D[j];
    }
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++) s += c->B[i * n + j] * t[j];
        out[i] = s;
    }
}

/* B and D from C (symmetrised first); eigenvalues below a tiny floor are raised to it. */
static int decompose(cmaes *c)
{
    int n = c->n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) c->C[i * n + j] = c->C[j * n + i];
    memcpy(c->B, c->C, (size_t)n * (size_t)n * sizeof *c->B);
    if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', n, c->B, n, c->D) != 0) return -1;
    for (int i = 0; i < n; i++) c->D[i] = sqrt(fmax(c->D[i], 1e-20));
    return 0;
}

int cmaes_tell(cmaes *c, const int *order)
{
    int n = c->n;
    double *old = orr_xmalloc(2 * (size_t)n * sizeof *old), *step = old + n;
    memcpy(old, c->m, (size_t)n * sizeof *old);
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < c->mu; k++) s += c->w[k] * c->x[order[k] * n + i];
        c->m[i] = s;
        step[i] = (s - old[i]) / c->sigma;
    }
    double *cs_step = c->tmp; /* C^-1/2 of the step: the conjugate path's increment */
    inv_sqrt_times(c, step, cs_step);
    double ps_norm2 = 0, ks = sqrt(c->cs * (2 - c->cs) * c->mueff);
    for (int i = 0; i < n; i++) {
        c->ps[i] = (1 - c->cs) * c->ps[i] + ks * cs_step[i];
        ps_norm2 += c->ps[i] * c->ps[i];
    }
    c->gen++;
    double ps_norm = sqrt(ps_norm2);
    int hsig = ps_norm / sqrt(1 - pow(1 - c->cs, 2.0 * c->gen)) / c->chi_n < 1.4 + 2.0 / (n + 1);
    double kc = sqrt(c->cc * (2 - c->cc) * c->mueff);
    for (int i = 0; i < n; i++) c->pc[i] = (1 - c->cc) * c->pc[i] + (hsig ? kc * step[i] : 0);
    double keep = 1 - c->c1 - c->cmu + (hsig ? 0 : c->c1 * c->cc * (2 - c->cc));
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            double rank_mu = 0;
            for (int k = 0; k < c->mu; k++) {
                const double *xk = &c->x[order[k] * n];
                rank_mu += c->w[k] * (xk[i] - old[i]) * (xk[j] - old[j]);
            }
            rank_mu /= c->sigma * c->sigma;
            c->C[i * n + j] = keep * c->C[i * n + j] + c->c1 * c->pc[i] * c->pc[j] + c->cmu * rank_mu;
        }
    c->sigma *= exp((c->cs / c->damps) * (ps_norm / c->chi_n - 1));
    free(old);
    return decompose(c);
}
