/*
 * dominance.c - Maya's memory tactics (paper 004, appendix "Fidelity-preserving tactics"): a trial
 * that differs from one that does not fit only in using more memory on one axis cannot fit either.
 * A trial's frugal neighbours are the trials equal to it but for one axis moved one step towards
 * less memory: more recomputation (none -> selective -> full), sequence parallelism on instead of
 * off, the distributed optimizer on instead of off. Each stores a subset of what the trial stores
 * (activations, their shards, optimizer shards) with the rest unchanged; tests/test_search.c checks
 * on three spaces that every trial pruned this way is out of memory when simulated. The micro-batch
 * is not such an axis: under gradient accumulation a smaller one can need more memory (TorchTitan's
 * FSDP keeps unsharded gradients across micro-batches), which that test found.
 *
 * The exhaustive and random strategies simulate a trial only once its frugal neighbours are decided
 * (search_ready), so a neighbour's OOM is known before the trial would be simulated.
 */
#include "search/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_point(const uint32_t *v)
{
    uint64_t h = 1469598103934665603ull;
    for (int a = 0; a < ORR_AX_COUNT; a++) h = (h ^ v[a]) * 1099511628211ull;
    return h;
}

void search_points_build(search_points *p, const orr_search_result *r)
{
    memset(p, 0, sizeof *p);
    p->r = r;
    p->cap = 1;
    while (p->cap < 2 * r->ntrials + 2) p->cap *= 2;
    p->slot = calloc(p->cap, sizeof *p->slot);
    if (!p->slot) abort();
    for (uint32_t i = 0; i < r->ntrials; i++) {
        uint32_t s = (uint32_t)(hash_point(r->trials[i].v) & (p->cap - 1));
        while (p->slot[s]) s = (s + 1) & (p->cap - 1);
        p->slot[s] = i + 1;
    }
}

void search_points_free(search_points *p)
{
    free(p->slot);
    p->slot = NULL;
}

/* The first trial with axis values v, or UINT32_MAX. */
static uint32_t find(const search_points *p, const uint32_t *v)
{
    for (uint32_t s = (uint32_t)(hash_point(v) & (p->cap - 1)); p->slot[s]; s = (s + 1) & (p->cap - 1))
        if (memcmp(p->r->trials[p->slot[s] - 1].v, v, ORR_AX_COUNT * sizeof *v) == 0) return p->slot[s] - 1;
    return UINT32_MAX;
}

/* Trial i's frugal neighbours that exist in the space (at most 3) into out; their number. */
static uint32_t frugal_neighbours(const search_points *p, uint32_t i, uint32_t *out)
{
    const uint32_t *v = p->r->trials[i].v;
    uint32_t n = 0, w[ORR_AX_COUNT];
    const int axes[] = {ORR_AX_RECOMPUTE, ORR_AX_SP, ORR_AX_DIST_OPT};
    for (int j = 0; j < 3; j++) {
        int a = axes[j];
        memcpy(w, v, sizeof w);
        if (a == ORR_AX_RECOMPUTE && v[a] < ORR_RECOMPUTE_FULL) w[a] = v[a] + 1;
        else if ((a == ORR_AX_SP || a == ORR_AX_DIST_OPT) && !v[a]) w[a] = 1;
        else continue;
        uint32_t t = find(p, w);
        if (t != UINT32_MAX) out[n++] = t;
    }
    return n;
}

/* 1 if trial t is known not to fit: simulated OOM, over the memory bound, or pruned by this tactic
 * (a duplicate: its twin). */
static int known_oom(const orr_search_result *r, const orr_trial *t)
{
    if (t->status == ORR_TRIAL_PRUNED && t->same_as != UINT32_MAX) t = &r->trials[t->same_as];
    return t->status == ORR_TRIAL_OOM ||
           (t->status == ORR_TRIAL_PRUNED &&
            (strcmp(t->key, "memory_lower_bound") == 0 || strcmp(t->key, "oom_dominated") == 0));
}

int search_prune_dominated(const search_points *p, orr_search_result *r, uint32_t i)
{
    uint32_t nb[3], n = frugal_neighbours(p, i, nb);
    for (uint32_t k = 0; k < n; k++)
        if (known_oom(r, &r->trials[nb[k]])) {
            char why[160];
            snprintf(why, sizeof why, "OOM: trial %u, which uses less memory (%s), does not fit", nb[k],
                     r->trials[nb[k]].reason[0] ? r->trials[nb[k]].key : "");
            search_set_reason(&r->trials[i], ORR_TRIAL_PRUNED, "oom_dominated", why);
            return 1;
        }
    return 0;
}

int search_ready(const search_points *p, const orr_search_result *r, uint32_t i)
{
    uint32_t nb[3], n = frugal_neighbours(p, i, nb);
    for (uint32_t k = 0; k < n; k++)
        if (r->trials[nb[k]].status == ORR_TRIAL_PENDING) return 0;
    return 1;
}
