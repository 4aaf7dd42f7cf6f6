/*
 * cmaes.h - the covariance matrix adaptation evolution strategy (CMA-ES, Hansen's "The CMA Evolution
 * Strategy: A Tutorial", the (mu/mu_w, lambda) variant with rank-one and rank-mu updates and
 * cumulative step-size adaptation), over n continuous coordinates. The search's guided strategy
 * (guided.c) maps each sample to a point of the discrete space; this file knows nothing of it.
 *
 * Deterministic: the normal samples come from a splitmix64 state the caller owns (--seed), and the
 * eigendecomposition of the covariance is LAPACK's dsyev (Debian liblapacke-dev).
 */
#ifndef ORRERY_SEARCH_CMAES_H
#define ORRERY_SEARCH_CMAES_H

#include <stdint.h>

typedef struct cmaes {
    int n, lambda, mu;
    double sigma;                       /* the step size */
    double mueff, cc, cs, c1, cmu, damps, chi_n; /* the strategy's constants (set by cmaes_init) */
    double *w;                          /* mu recombination weights, summing to 1 */
    double *m, *pc, *ps;                /* mean, evolution paths (n each) */
    double *C, *B, *D;                  /* covariance, its eigenvectors (columns, row-major n x n) and
                                         * the square roots of its eigenvalues (n) */
    double *x;                          /* lambda samples, row-major lambda x n (cmaes_ask) */
    double *tmp;                        /* scratch, 2n */
    int gen;                            /* generations told */
} cmaes;

/* Starts at mean (n coordinates) with step size sigma and the identity covariance; lambda samples per
 * generation (0: the default 4 + floor(3 ln n)). */
void cmaes_init(cmaes *c, int n, int lambda, const double *mean, double sigma);
void cmaes_free(cmaes *c);
/* Fills c->x with lambda samples m + sigma * B D z, z standard normal from *rng. */
void cmaes_ask(cmaes *c, uint64_t *rng);
/* Updates mean, paths, covariance and step size from the samples ranked best first (order[k]: the row
 * of c->x ranked k). Fails (-1) only if LAPACK cannot decompose the covariance. */
int cmaes_tell(cmaes *c, const int *order);

/* splitmix64: the next 64 random bits of *state. */
uint64_t search_random(uint64_t *state);
/* A uniform double in [0, 1) and a standard normal (Box-Muller) from *state. */
double search_uniform(uint64_t *state);
double search_normal(uint64_t *state);

#endif
