/*
 * guided.c - --strategy cmaes: CMA-ES (cmaes.c, as Maya's search uses it) over the discrete space.
 * Each axis with more than one value is one continuous coordinate in [0, 1]; a sample is rounded to
 * the nearest of that axis's values (ascending) and the resulting point looked up among the
 * enumerated trials (axis by axis, the nearest value that exists for the axes before it: a
 * framework's own axes, micro-batches that divide). What the search already knows ranks the samples without a new simulation:
 * a simulated trial its score, a trial pruned by the time bound its bound, a duplicate its twin's
 * result, a trial whose frugal neighbour is out of memory (dominance.c) that verdict; trials that do not fit rank after every fitting one (by how far over the capacity), and
 * invalid ones last. A coordinate outside [0, 1] is clamped and penalised by
 * its distance. New fitting-candidate points are simulated one generation at a time (a batch, so -j
 * and MPI ranks share it) until --budget simulations. When a run stalls (10 generations without a
 * new point) CMA-ES restarts from a random mean with twice the population (IPOP). Every draw comes
 * from one generator seeded by --seed, so the search is the same for every -j and rank count.
 */
#include "search/internal.h"
#include "search/cmaes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STALL_GENERATIONS 10
#define MAX_GENERATIONS 100000
#define SIGMA0 0.3
#define LAMBDA_MAX 256

/* The space as coordinates: the axes that vary, each with its ascending distinct values; and the
 * enumeration as a tree (one level per axis, the trials' values in enumeration order, so each node's
 * trials are a contiguous range), which maps a sample to the nearest point that exists. */
typedef struct node { uint32_t value, first, n; } node; /* n children from nodes[first]; a leaf: the trial */

typedef struct space {
    int dims, axis[ORR_AX_COUNT], dim_of[ORR_AX_COUNT];
    uint32_t nvals[ORR_AX_COUNT], vals[ORR_AX_COUNT][ORR_SEARCH_MAX_VALUES];
    node *nodes;
    uint32_t nnodes;
} space;

/* Adds the children of trials [lo, hi) at axis a (each run of equal values one child), then theirs. */
static void tree_build(space *sp, const orr_search_result *r, uint32_t parent, uint32_t lo, uint32_t hi, int a)
{
    if (a == ORR_AX_COUNT) {
        sp->nodes[parent].first = lo; /* the trial */
        return;
    }
    uint32_t first = sp->nnodes;
    for (uint32_t i = lo; i < hi; i++)
        if (i == lo || r->trials[i].v[a] != r->trials[i - 1].v[a])
            sp->nodes[sp->nnodes++] = (node){r->trials[i].v[a], i, 0}; /* first: the range's start, for now */
    uint32_t n = sp->nnodes - first;
    sp->nodes[parent].first = first;
    sp->nodes[parent].n = n;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t start = sp->nodes[first + k].first, end = k + 1 < n ? sp->nodes[first + k + 1].first : hi;
        tree_build(sp, r, first + k, start, end, a + 1);
    }
}

static void space_build(space *sp, const orr_search_result *r)
{
    memset(sp, 0, sizeof *sp);
    for (int a = 0; a < ORR_AX_COUNT; a++) {
        uint32_t n = search_axis_values(r, a, sp->vals[a], ORR_SEARCH_MAX_VALUES);
        sp->nvals[a] = n;
        sp->dim_of[a] = -1;
        if (n > 1) sp->dim_of[a] = sp->dims, sp->axis[sp->dims++] = a;
    }
    /* at most one node per trial and axis, and the root */
    sp->nodes = orr_xmalloc(((size_t)r->ntrials * ORR_AX_COUNT + 1) * sizeof *sp->nodes);
    sp->nnodes = 1;
    sp->nodes[0] = (node){0, 0, 0};
    if (r->ntrials) tree_build(sp, r, 0, 0, r->ntrials, 0);
}

/* The place of value v among axis a's values (0 .. nvals - 1). */
static double value_place(const space *sp, int a, uint32_t v)
{
    uint32_t k = 0;
    while (k + 1 < sp->nvals[a] && sp->vals[a][k] < v) k++;
    return k;
}

/* The trial nearest to coordinates x (clamped into [0, 1]): down the tree, at each axis the child
 * whose value's place is nearest to the coordinate's (ties: the first). *outside: how far x lies
 * outside the box. */
static uint32_t space_lookup(const space *sp, const double *x, double *outside)
{
    double d2 = 0;
    for (int d = 0; d < sp->dims; d++) {
        double c = x[d] < 0 ? 0 : x[d] > 1 ? 1 : x[d];
        d2 += (x[d] - c) * (x[d] - c);
    }
    *outside = sqrt(d2);
    const node *at = &sp->nodes[0];
    for (int a = 0; a < ORR_AX_COUNT; a++) {
        const node *kids = &sp->nodes[at->first], *pick = kids;
        int d = sp->dim_of[a];
        if (d >= 0 && at->n > 1) {
            double want = (x[d] < 0 ? 0 : x[d] > 1 ? 1 : x[d]) * (sp->nvals[a] - 1), best = 1e300;
            for (uint32_t k = 0; k < at->n; k++) {
                double dist = fabs(value_place(sp, a, kids[k].value) - want);
                if (dist < best) best = dist, pick = &kids[k];
            }
        }
        at = pick;
    }
    return at->first;
}

/* A sample's fitness, compared tier first (0 fits, 1 out of memory, 2 not simulated yet, 3 invalid
 * or outside the space), then value (lower is better), then the sample's place. */
typedef struct fitness { int tier; double value; int k; } fitness;

static fitness trial_fitness(const search_run *R, uint32_t i)
{
    const orr_trial *t = &R->r->trials[i];
    if (t->status == ORR_TRIAL_PRUNED && t->same_as != UINT32_MAX) t = &R->r->trials[t->same_as];
    int have;
    switch (t->status) {
    case ORR_TRIAL_OK: return (fitness){0, search_score(R->o, t), 0};
    case ORR_TRIAL_OOM: return (fitness){1, (double)t->peak_bytes / (double)(t->capacity_bytes + 1), 0};
    case ORR_TRIAL_PRUNED:
        if (strcmp(t->key, "compute_time_bound") == 0) return (fitness){0, search_bound_score(R, t, &have), 0};
        if (strcmp(t->key, "memory_lower_bound") == 0)
            return (fitness){1, (double)t->bound_bytes / (double)(t->capacity_bytes + 1), 0};
        return (fitness){2, 0, 0};
    case ORR_TRIAL_PENDING: return (fitness){2, 0, 0};
    default: return (fitness){3, 0, 0};
    }
}

static int cmp_fitness(const void *a, const void *b)
{
    const fitness *x = a, *y = b;
    if (x->tier != y->tier) return x->tier < y->tier ? -1 : 1;
    if (x->value != y->value) return x->value < y->value ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* One generation: samples, their new pending trials (deduplicated, at most left) pruned by the time
 * bound and simulated, then the samples ranked and told. *fresh: trials newly simulated or pruned. */
static int generation(search_run *R, const space *sp, const search_points *pts, cmaes *c, uint64_t *rng,
                      uint32_t left, uint32_t *fresh, orr_err *err)
{
    cmaes_ask(c, rng);
    int lambda = c->lambda;
    uint32_t *pt = orr_xmalloc((size_t)lambda * sizeof *pt), *todo = orr_xmalloc((size_t)lambda * sizeof *todo), n = 0;
    double *outside = orr_xmalloc((size_t)lambda * sizeof *outside);
    for (int k = 0; k < lambda; k++) {
        pt[k] = space_lookup(sp, &c->x[k * c->n], &outside[k]);
        if (R->r->trials[pt[k]].status != ORR_TRIAL_PENDING || n == left) continue;
        if (!R->o->no_prune && search_prune_dominated(pts, R->r, pt[k])) {
            ++*fresh;
            continue;
        }
        int seen = 0;
        for (uint32_t j = 0; j < n && !seen; j++) seen = todo[j] == pt[k];
        if (!seen) todo[n++] = pt[k];
    }
    uint32_t kept = search_prune_by_time(R, todo, n);
    *fresh += n;
    int rc = search_simulate(R, todo, kept, err);
    fitness *f = orr_xmalloc((size_t)lambda * sizeof *f);
    int *order = orr_xmalloc((size_t)lambda * sizeof *order);
    for (int k = 0; rc == 0 && k < lambda; k++) {
        f[k] = trial_fitness(R, pt[k]);
        f[k].value += (fabs(f[k].value) + 1) * outside[k];
        f[k].k = k;
    }
    if (rc == 0) {
        qsort(f, (size_t)lambda, sizeof *f, cmp_fitness);
        for (int k = 0; k < lambda; k++) order[k] = f[k].k;
        if (cmaes_tell(c, order)) c->sigma = 0; /* LAPACK failed: the caller restarts */
    }
    free(pt);
    free(todo);
    free(outside);
    free(f);
    free(order);
    return rc;
}

/* A CMA-ES run from mean (NULL: the middle of the box). */
static void start(cmaes *c, const space *sp, int lambda, uint64_t *rng, int random_mean)
{
    double mean[ORR_AX_COUNT];
    for (int d = 0; d < sp->dims; d++) mean[d] = random_mean ? search_uniform(rng) : 0.5;
    cmaes_init(c, sp->dims, lambda, mean, SIGMA0);
}

int search_cmaes(search_run *R, const uint32_t *cand, uint32_t ncand, orr_err *err)
{
    space sp;
    space_build(&sp, R->r);
    uint64_t rng = R->o->seed;
    uint32_t budget = R->o->budget, pending = ncand, stall = 0;
    int rc = 0;
    if (sp.dims == 0 || !R->r->ntrials) { /* one point: nothing to search */
        rc = search_simulate(R, cand, ncand < budget ? ncand : budget, err);
        pending = 0;
    }
    search_points pts;
    search_points_build(&pts, R->r);
    cmaes c;
    start(&c, &sp, 0, &rng, 0);
    for (int gen = 0; rc == 0 && pending && R->simulated < budget && gen < MAX_GENERATIONS; gen++) {
        uint32_t fresh = 0;
        rc = generation(R, &sp, &pts, &c, &rng, budget - R->simulated, &fresh, err);
        pending -= fresh;
        stall = fresh ? 0 : stall + 1;
        if (stall >= STALL_GENERATIONS || !(c.sigma > 1e-12)) { /* IPOP restart */
            int lambda = 2 * c.lambda < LAMBDA_MAX ? 2 * c.lambda : LAMBDA_MAX;
            cmaes_free(&c);
            start(&c, &sp, lambda, &rng, 1);
            R->r->restarts++;
            stall = 0;
        }
    }
    cmaes_free(&c);
    search_points_free(&pts);
    free(sp.nodes);
    char why[160];
    snprintf(why, sizeof why, "not sampled (cmaes: %u simulations, budget %u, seed %llu)", R->simulated, budget,
             (unsigned long long)R->o->seed);
    for (uint32_t k = 0; k < ncand; k++)
        if (R->r->trials[cand[k]].status == ORR_TRIAL_PENDING)
            search_set_reason(&R->r->trials[cand[k]], ORR_TRIAL_PRUNED, "not_sampled", why);
    return rc;
}
