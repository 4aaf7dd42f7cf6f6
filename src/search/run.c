/*
 * run.c - the search itself: resolve every trial (invalid ones get resolve's message as their
 * reason), prune what is proven without simulating (a memory lower bound, identical resolved specs),
 * choose what to simulate (every candidate, a seeded random sample, or CMA-ES's samples: guided.c),
 * simulate in batches (workers.c) and, between batches, prune the trials whose iteration-time lower
 * bound is above the best simulated; then rank the trials that fit.
 *
 * Everything but the simulations runs in the parent (and identically on every MPI rank), in a fixed
 * order: exhaustive and random simulate their candidates in batches of SEARCH_BATCH, by ascending
 * time bound, each trial only once its frugal neighbours are decided (dominance.c), so what is
 * simulated, what is pruned and every result do not depend on -j or the number of ranks.
 */
#include "search/internal.h"
#include "search/cmaes.h"

#include "orrery/orrery.h"
#include "orrery/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GiB (1024.0 * 1024.0 * 1024.0)
/* Trials simulated between two applications of the time bound (fixed: the results must not depend
 * on -j). Smaller prunes more; larger keeps more workers busy. */
#define SEARCH_BATCH 32

const char *orr_trial_status_name(orr_trial_status s)
{
    static const char *const names[] = {"ok", "oom", "invalid", "pruned", "pending"};
    return (unsigned)s <= ORR_TRIAL_PENDING ? names[s] : "?";
}

void search_set_reason(orr_trial *t, orr_trial_status st, const char *key, const char *reason)
{
    t->status = st;
    snprintf(t->key, sizeof t->key, "%s", key);
    size_t n = strlen(reason);
    if (n >= sizeof t->reason) n = sizeof t->reason - 1; /* a long message is cut */
    memcpy(t->reason, reason, n);
    t->reason[n] = 0;
}

double search_score(const orr_search_opts *o, const orr_trial *t)
{
    return o->objective == ORR_OBJ_COST ? t->cost_usd : o->objective == ORR_OBJ_MFU ? -t->mfu : t->iteration_s;
}

double search_bound_score(const search_run *R, const orr_trial *t, int *have)
{
    *have = t->bound_s > 0 && R->o->objective != ORR_OBJ_MFU && !R->o->no_prune && !R->o->no_time_bound;
    if (!*have) return 0;
    return R->o->objective == ORR_OBJ_COST ? R->o->price_per_gpu_hour * t->v[ORR_AX_GPUS] * t->bound_s / 3600.0
                                           : t->bound_s;
}

/* The shortest iteration simulated on at most gpus GPUs (0 if none). */
static double best_up_to(const search_run *R, uint32_t gpus, uint32_t *on)
{
    double best = 0;
    for (uint32_t k = 0; k < R->nbest; k++)
        if (R->best_gpus[k] <= gpus && (best == 0 || R->best_s[k] < best)) best = R->best_s[k], *on = R->best_gpus[k];
    return best;
}

uint32_t search_prune_by_time(search_run *R, uint32_t *cand, uint32_t n)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        orr_trial *t = &R->r->trials[cand[i]];
        int have;
        uint32_t on = 0;
        search_bound_score(R, t, &have);
        double best = have ? best_up_to(R, t->v[ORR_AX_GPUS], &on) : 0;
        if (best > 0 && t->bound_s > best) {
            char why[200];
            snprintf(why, sizeof why, "no better than the best: needs >= %.4g s per iteration (layers' matrix "
                     "multiplies at peak, pipeline fill), a simulated trial on %u GPUs takes %.4g s", t->bound_s, on,
                     best);
            search_set_reason(t, ORR_TRIAL_PRUNED, "compute_time_bound", why);
        } else {
            cand[kept++] = cand[i];
        }
    }
    return kept;
}

/* ---- memo: identical resolved specs ---- */

/* What can differ between two trials' resolved specs (the rest is the base job's). */
typedef struct memo_key { uint32_t f[16]; } memo_key;

static memo_key key_of(const orr_spec *s)
{
    memo_key k = {{s->framework, s->tp, s->pp, s->dp, s->cp, s->vpp, s->mbs, s->gbs, s->seq, s->recompute, s->zero,
                   s->fsdp, s->dp_replicate, (uint32_t)s->sp, (uint32_t)s->dist_opt, s->ep}};
    return k;
}

typedef struct memo { memo_key *keys; uint32_t *trial; uint32_t cap; } memo;

/* The trial already holding key k, or UINT32_MAX after recording trial i under it. */
static uint32_t memo_find_or_add(memo *m, const memo_key *k, uint32_t i)
{
    uint64_t h = 1469598103934665603ull;
    for (int j = 0; j < 16; j++) h = (h ^ k->f[j]) * 1099511628211ull;
    for (uint32_t slot = (uint32_t)(h & (m->cap - 1));; slot = (slot + 1) & (m->cap - 1)) {
        if (m->trial[slot] == UINT32_MAX) {
            m->keys[slot] = *k;
            m->trial[slot] = i;
            return UINT32_MAX;
        }
        if (memcmp(&m->keys[slot], k, sizeof *k) == 0) return m->trial[slot];
    }
}

/* Resolves every trial and prunes: invalid (resolve's message), the memory lower bound over the
 * capacity, duplicates. What is left stays pending; its indices go to cand (*ncand of them). */
static void prepare(const search_base *b, const orr_search_opts *o, orr_search_result *r, uint32_t *cand,
                    uint32_t *ncand)
{
    memo m = {NULL, NULL, 1};
    while (m.cap < 2 * r->ntrials + 2) m.cap *= 2;
    m.keys = orr_xmalloc(m.cap * sizeof *m.keys);
    m.trial = orr_xmalloc(m.cap * sizeof *m.trial);
    memset(m.trial, 0xff, m.cap * sizeof *m.trial);
    *ncand = 0;
    for (uint32_t i = 0; i < r->ntrials; i++) {
        orr_trial *t = &r->trials[i];
        t->same_as = UINT32_MAX;
        orr_spec s;
        orr_err err = {{0}};
        if (search_trial_spec(b, t, NULL, &s, &err)) {
            search_set_reason(t, ORR_TRIAL_INVALID, search_reason_key(err.msg), err.msg);
            continue;
        }
        r->valid++;
        t->dp = s.dp;
        t->fsdp = orr_fw_fsdp2(s.framework) ? s.fsdp : 0;
        t->bound_bytes = orr_search_memory_lower_bound(&s);
        t->capacity_bytes = orr_spec_alloc_capacity(&s);
        t->bound_s = orr_search_time_lower_bound_s(&s);
        memo_key k = key_of(&s);
        uint32_t first = o->no_prune ? UINT32_MAX : memo_find_or_add(&m, &k, i);
        char why[240];
        if (!o->no_prune && t->bound_bytes > t->capacity_bytes) {
            snprintf(why, sizeof why, "OOM: needs >= %.1f GiB per GPU (parameters, gradients, optimizer state), "
                     "capacity %.1f GiB", (double)t->bound_bytes / GiB, (double)t->capacity_bytes / GiB);
            search_set_reason(t, ORR_TRIAL_PRUNED, "memory_lower_bound", why);
        } else if (first != UINT32_MAX) {
            snprintf(why, sizeof why, "duplicate: the same resolved spec as trial %u", first);
            search_set_reason(t, ORR_TRIAL_PRUNED, "duplicate", why);
            t->same_as = first;
        } else {
            cand[(*ncand)++] = i;
        }
    }
    free(m.keys);
    free(m.trial);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* --strategy random: keeps budget of the candidates (a partial Fisher-Yates shuffle under the seed),
 * in trial order; the others are pruned as not sampled. */
static void sample(const orr_search_opts *o, orr_search_result *r, uint32_t *cand, uint32_t *ncand)
{
    if (o->strategy != ORR_STRATEGY_RANDOM || o->budget >= *ncand) return;
    uint64_t state = o->seed;
    for (uint32_t k = 0; k < o->budget; k++) {
        uint32_t j = k + (uint32_t)(search_random(&state) % (*ncand - k));
        uint32_t tmp = cand[k];
        cand[k] = cand[j];
        cand[j] = tmp;
    }
    char why[120];
    snprintf(why, sizeof why, "not sampled (random strategy: %u of %u candidates, seed %llu)", o->budget, *ncand,
             (unsigned long long)o->seed);
    for (uint32_t k = o->budget; k < *ncand; k++) search_set_reason(&r->trials[cand[k]], ORR_TRIAL_PRUNED, "not_sampled", why);
    *ncand = o->budget;
    qsort(cand, *ncand, sizeof *cand, cmp_u32);
}

/* Exhaustive and random: the candidates by ascending time bound (ties: trial order), simulated in
 * batches, each batch first pruned by the best simulated before it. */
typedef struct bounded { double bound; uint32_t idx; } bounded;

static int cmp_bounded(const void *a, const void *b)
{
    const bounded *x = a, *y = b;
    if (x->bound != y->bound) return x->bound < y->bound ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* The next batch: candidates from *from on (in bound order) whose frugal neighbours are decided,
 * after pruning those a neighbour's OOM dominates; at most SEARCH_BATCH into batch. */
static uint32_t next_batch(search_run *R, const search_points *pts, const uint32_t *cand, uint32_t ncand,
                           uint32_t *from, uint32_t *batch)
{
    orr_search_result *r = R->r;
    uint32_t n = 0;
    int prune = !R->o->no_prune;
    while (*from < ncand && r->trials[cand[*from]].status != ORR_TRIAL_PENDING) ++*from;
    for (uint32_t k = *from; k < ncand && n < SEARCH_BATCH; k++) {
        uint32_t i = cand[k];
        if (r->trials[i].status != ORR_TRIAL_PENDING || (prune && search_prune_dominated(pts, r, i))) continue;
        if (!prune || search_ready(pts, r, i)) batch[n++] = i;
    }
    if (!n && *from < ncand) batch[n++] = cand[*from]; /* cannot happen: the most frugal pending one is ready */
    return n;
}

static int simulate_in_batches(search_run *R, uint32_t *cand, uint32_t ncand, orr_err *err)
{
    bounded *bd = orr_xmalloc((ncand + 1) * sizeof *bd);
    for (uint32_t k = 0; k < ncand; k++) bd[k] = (bounded){R->r->trials[cand[k]].bound_s, cand[k]};
    qsort(bd, ncand, sizeof *bd, cmp_bounded);
    for (uint32_t k = 0; k < ncand; k++) cand[k] = bd[k].idx;
    free(bd);
    search_points pts;
    search_points_build(&pts, R->r);
    uint32_t batch[SEARCH_BATCH], from = 0, n;
    int rc = 0;
    while (rc == 0 && (n = next_batch(R, &pts, cand, ncand, &from, batch)) > 0) {
        uint32_t kept = search_prune_by_time(R, batch, n);
        rc = search_simulate(R, batch, kept, err);
    }
    search_points_free(&pts);
    return rc;
}

/* ---- counts and ranking ---- */

static void count_reason(orr_reason_count *list, uint32_t *n, const char *key)
{
    for (uint32_t i = 0; i < *n; i++)
        if (strcmp(list[i].key, key) == 0) {
            list[i].n++;
            return;
        }
    if (*n == 8) return;
    snprintf(list[*n].key, sizeof list[*n].key, "%s", key);
    list[(*n)++].n = 1;
}

typedef struct scored { double score; uint32_t idx; } scored;

static int cmp_scored(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Counts per status and reason; the ok trials ranked by the objective (ties: trial order). */
static void summarise(const orr_search_opts *o, orr_search_result *r)
{
    scored *sc = orr_xmalloc((r->ntrials + 1) * sizeof *sc);
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->ntrials; i++) {
        const orr_trial *t = &r->trials[i];
        if (t->status == ORR_TRIAL_OK || t->status == ORR_TRIAL_OOM || strcmp(t->key, "predict") == 0) r->evaluated++;
        if (t->status == ORR_TRIAL_PRUNED) count_reason(r->pruned, &r->npruned, t->key);
        if (t->status == ORR_TRIAL_INVALID || t->status == ORR_TRIAL_OOM) count_reason(r->rejected, &r->nrejected, t->key);
        if (t->status == ORR_TRIAL_OOM) r->oom++;
        if (t->status != ORR_TRIAL_OK) continue;
        r->ok++;
        sc[n++] = (scored){search_score(o, t), i};
    }
    qsort(sc, n, sizeof *sc, cmp_scored);
    r->ranked = orr_xmalloc((n + 1) * sizeof *r->ranked);
    for (uint32_t k = 0; k < n; k++) r->ranked[k] = sc[k].idx;
    r->nranked = n;
    free(sc);
}

/* A trial on the Pareto plane: GPUs (or cost), then time. */
typedef struct point { double x, time; uint32_t idx; } point;

static int cmp_point(const void *a, const void *b)
{
    const point *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    if (p->time != q->time) return p->time < q->time ? -1 : 1;
    return (p->idx > q->idx) - (p->idx < q->idx);
}

/* The trials that fit and that no other beats on both GPUs (cost with a price) and time, by ascending
 * GPUs (cost); only when the space has several GPU counts. */
static void pareto(const orr_search_opts *o, orr_search_result *r)
{
    const orr_axis_values *g = &o->ax[ORR_AX_GPUS];
    if (!g->given || g->n < 2) return;
    point *pt = orr_xmalloc((r->nranked + 1) * sizeof *pt);
    int cost = o->price_per_gpu_hour > 0;
    for (uint32_t k = 0; k < r->nranked; k++) {
        const orr_trial *t = &r->trials[r->ranked[k]];
        pt[k] = (point){cost ? t->cost_usd : t->v[ORR_AX_GPUS], t->iteration_s, r->ranked[k]};
    }
    qsort(pt, r->nranked, sizeof *pt, cmp_point);
    r->pareto = orr_xmalloc((r->nranked + 1) * sizeof *r->pareto);
    for (uint32_t k = 0; k < r->nranked; k++)
        if (!r->npareto || pt[k].time < r->trials[r->pareto[r->npareto - 1]].iteration_s) r->pareto[r->npareto++] = pt[k].idx;
    free(pt);
}

/* --refine K: the best K re-simulated with the finer network, one after the other (in this process;
 * every MPI rank does the same), then ranked again by the refined time (ties and failures: the
 * analytic rank). */
static int cmp_refined(const void *a, const void *b)
{
    const orr_refined *x = a, *y = b;
    int fx = x->oom || !(x->iteration_s > 0), fy = y->oom || !(y->iteration_s > 0);
    if (fx != fy) return fx - fy;
    if (!fx && x->iteration_s != y->iteration_s) return x->iteration_s < y->iteration_s ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static void refine(const search_base *b, const orr_search_opts *o, orr_search_result *r)
{
    uint32_t k = o->refine < r->nranked ? o->refine : r->nranked;
    if (!k) return;
    orr_refined *f = orr_xmalloc(k * sizeof *f), *sorted = orr_xmalloc(k * sizeof *sorted);
    for (uint32_t i = 0; i < k; i++) {
        orr_refined *x = &f[i];
        *x = (orr_refined){.index = r->ranked[i], .rank = i + 1};
        orr_spec s;
        orr_prediction p;
        orr_err err = {{0}};
        if (search_trial_spec(b, &r->trials[x->index], o->refine_net, &s, &err) || orr_predict_headline(&s, &p, &err) < 0) {
            size_t n = strlen(err.msg) < sizeof x->reason ? strlen(err.msg) : sizeof x->reason - 1; /* cut */
            memcpy(x->reason, err.msg, n);
            x->reason[n] = 0;
            continue;
        }
        x->iteration_s = p.r.iteration_s;
        x->oom = p.r.mem.oom;
        orr_prediction_free(&p);
    }
    memcpy(sorted, f, k * sizeof *f);
    qsort(sorted, k, sizeof *sorted, cmp_refined);
    for (uint32_t i = 0; i < k; i++) f[sorted[i].rank - 1].new_rank = i + 1;
    free(sorted);
    r->refined = f;
    r->nrefined = k;
}

/* "MODEL on N x GPU, gbs B, seq S" (N: the GPU counts, comma-separated). */
static void title(const orr_search_opts *o, const search_base *b, orr_search_result *r)
{
    const orr_axis_values *g = &o->ax[ORR_AX_GPUS];
    char counts[128] = "";
    for (uint32_t k = 0; g->given && k < g->n && strlen(counts) + 12 < sizeof counts; k++)
        snprintf(counts + strlen(counts), sizeof counts - strlen(counts), "%s%u", k ? "," : "", g->v[k]);
    if (!g->given) snprintf(counts, sizeof counts, "%u", b->s.gpus);
    orr_spec hw = b->s;
    if (g->given) hw.gpus = g->v[0];
    orr_err ignored;
    const char *gpu = orr_spec_resolve_hardware(&hw, NULL, &ignored) == 0 ? hw.gpu.name : "?";
    snprintf(r->title, sizeof r->title, "%s on %s x %s, gbs %u, seq %u", b->s.model.name, counts, gpu, b->gbs, b->seq);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int orr_search_run(const orr_search_opts *o, orr_search_result *r, orr_err *err)
{
    memset(r, 0, sizeof *r);
    double t0 = now_s();
    search_base b;
    if (search_base_init(o, &b, err)) return -1;
    if (search_enumerate(o, &b, &r->trials, &r->ntrials, err)) return -1;
    title(o, &b, r);
    uint32_t *cand = orr_xmalloc((r->ntrials + 1) * sizeof *cand), ncand;
    prepare(&b, o, r, cand, &ncand);
    search_run R = {.b = &b, .o = o, .r = r, .total = ncand};
    int rc;
    if (o->strategy == ORR_STRATEGY_CMAES) {
        R.total = o->budget < ncand ? o->budget : ncand;
        rc = search_cmaes(&R, cand, ncand, err);
    } else {
        sample(o, r, cand, &ncand);
        R.total = ncand;
        rc = simulate_in_batches(&R, cand, ncand, err);
    }
    orr_progress_done(o->progress);
    free(cand);
    if (rc) {
        orr_search_result_free(r);
        return -1;
    }
    summarise(o, r);
    pareto(o, r);
    refine(&b, o, r);
    r->wall_s = now_s() - t0;
    return 0;
}

void orr_search_result_free(orr_search_result *r)
{
    free(r->trials);
    free(r->ranked);
    free(r->pareto);
    free(r->refined);
    memset(r, 0, sizeof *r);
}
