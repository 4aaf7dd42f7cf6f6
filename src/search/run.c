/*
 * run.c - the search itself: resolve every trial (invalid ones get resolve's message as their
 * reason), prune what is proven without simulating (a memory lower bound, identical resolved specs),
 * choose what to simulate (every candidate, or a seeded random sample), simulate in this process or in
 * -j forked workers that send their results back through pipes, and rank the trials that fit.
 *
 * Everything before the simulations runs in the parent, so the trials simulated and their results do
 * not depend on -j: worker w simulates candidates w, w + j, w + 2j, ... and the parent stores each
 * result at its trial's index.
 */
#include "search/internal.h"

#include "orrery/orrery.h"
#include "orrery/progress.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GiB (1024.0 * 1024.0 * 1024.0)
/* Allocation sizes are rounded per tensor in the generator; the bound keeps this much below its
 * arithmetic so rounding can never make it exceed what the prediction allocates. */
#define BOUND_SLACK_BYTES (1024.0 * 1024.0)

const char *orr_trial_status_name(orr_trial_status s)
{
    static const char *const names[] = {"ok", "oom", "invalid", "pruned", "pending"};
    return (unsigned)s <= ORR_TRIAL_PENDING ? names[s] : "?";
}

/* Parameters of the busiest GPU, at least: the model's parameters over the tp x pp model-parallel
 * positions (each layer's parameters are split evenly over tp and every layer, the embedding and the
 * head live on some stage, so the positions hold all of them at least once, and the busiest one at
 * least their average). Bytes per parameter: only what each framework's recipe allocates before the
 * first micro-batch and never frees (src/models/megatron.c, torchtitan.c, deepspeed.c), at its
 * smallest setting: half-precision parameters and gradients (2 B each; fp32 ones are larger) and 12 B
 * of fp32 master weights and Adam moments, each divided by the degree it is sharded over. */
uint64_t orr_search_memory_lower_bound(const orr_spec *s)
{
    double P = orr_model_params(&s->model) / ((double)s->tp * s->pp);
    double shard = (double)s->dp * s->cp, per_param = 0;
    switch (s->framework) {
    case ORR_FW_MEGATRON: per_param = 2.0 + 2.0 + 12.0 / (s->dist_opt ? shard : 1.0); break;
    case ORR_FW_TORCHTITAN: /* FSDP2: fp32 parameter shards and the two Adam moments (gradients come later) */
        per_param = 12.0 / ((double)(s->fsdp ? s->fsdp : 1) * s->cp);
        break;
    case ORR_FW_DEEPSPEED:
        per_param = s->zero == 3 ? 16.0 / shard : s->zero == 2 ? 2.0 + 14.0 / shard : 4.0 + 12.0 / shard;
        break;
    default: break;
    }
    double bytes = P * per_param - BOUND_SLACK_BYTES;
    return bytes > 0 ? (uint64_t)bytes : 0;
}

static void set_reason(orr_trial *t, orr_trial_status st, const char *key, const char *reason)
{
    t->status = st;
    snprintf(t->key, sizeof t->key, "%s", key);
    size_t n = strlen(reason);
    if (n >= sizeof t->reason) n = sizeof t->reason - 1; /* a long message is cut */
    memcpy(t->reason, reason, n);
    t->reason[n] = 0;
}

/* Predicts one trial and fills its results. */
static void simulate(const search_base *b, const orr_search_opts *o, orr_trial *t)
{
    orr_spec s;
    orr_err err = {{0}};
    orr_prediction p;
    if (search_trial_spec(b, t, &s, &err) || orr_predict(&s, &p, &err) < 0) {
        set_reason(t, ORR_TRIAL_INVALID, "predict", err.msg);
        return;
    }
    t->iteration_s = p.r.iteration_s;
    t->tokens_per_s = p.r.tokens_per_s;
    t->mfu = p.r.mfu;
    t->peak_bytes = p.r.mem.peak_reserved_bytes;
    t->capacity_bytes = p.r.mem.capacity_bytes;
    t->cost_usd = o->price_per_gpu_hour * s.gpus * t->iteration_s / 3600.0;
    if (p.r.mem.oom) {
        char why[160];
        snprintf(why, sizeof why, "OOM: peak %.1f GiB per GPU, capacity %.1f GiB", (double)t->peak_bytes / GiB,
                 (double)t->capacity_bytes / GiB);
        set_reason(t, ORR_TRIAL_OOM, "oom", why);
    } else {
        set_reason(t, ORR_TRIAL_OK, "", "");
    }
    orr_prediction_free(&p);
}

/* ---- memo: identical resolved specs ---- */

/* What can differ between two trials' resolved specs (the rest is the base job's). */
typedef struct memo_key { uint32_t f[16]; } memo_key;

static memo_key key_of(const orr_spec *s)
{
    memo_key k = {{s->framework, s->tp, s->pp, s->dp, s->cp, s->vpp, s->mbs, s->gbs, s->seq, s->recompute, s->zero,
                   s->fsdp, s->dp_replicate, (uint32_t)s->sp, (uint32_t)s->dist_opt, 0}};
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
        orr_spec s;
        orr_err err = {{0}};
        if (search_trial_spec(b, t, &s, &err)) {
            set_reason(t, ORR_TRIAL_INVALID, search_reason_key(err.msg), err.msg);
            continue;
        }
        r->valid++;
        t->dp = s.dp;
        t->fsdp = s.framework == ORR_FW_TORCHTITAN ? s.fsdp : 0;
        t->bound_bytes = orr_search_memory_lower_bound(&s);
        t->capacity_bytes = orr_spec_alloc_capacity(&s);
        memo_key k = key_of(&s);
        uint32_t first = o->no_prune ? UINT32_MAX : memo_find_or_add(&m, &k, i);
        char why[240];
        if (!o->no_prune && t->bound_bytes > t->capacity_bytes) {
            snprintf(why, sizeof why, "OOM: needs >= %.1f GiB per GPU (parameters, gradients, optimizer state), "
                     "capacity %.1f GiB", (double)t->bound_bytes / GiB, (double)t->capacity_bytes / GiB);
            set_reason(t, ORR_TRIAL_PRUNED, "memory_lower_bound", why);
        } else if (first != UINT32_MAX) {
            snprintf(why, sizeof why, "duplicate: the same resolved spec as trial %u", first);
            set_reason(t, ORR_TRIAL_PRUNED, "duplicate", why);
        } else {
            cand[(*ncand)++] = i;
        }
    }
    free(m.keys);
    free(m.trial);
}

/* splitmix64: the random strategy's generator (deterministic under --seed). */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
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
        uint32_t j = k + (uint32_t)(next_random(&state) % (*ncand - k));
        uint32_t tmp = cand[k];
        cand[k] = cand[j];
        cand[j] = tmp;
    }
    char why[120];
    snprintf(why, sizeof why, "not sampled (random strategy: %u of %u candidates, seed %llu)", o->budget, *ncand,
             (unsigned long long)o->seed);
    for (uint32_t k = o->budget; k < *ncand; k++) set_reason(&r->trials[cand[k]], ORR_TRIAL_PRUNED, "not_sampled", why);
    *ncand = o->budget;
    qsort(cand, *ncand, sizeof *cand, cmp_u32);
}

/* ---- workers ---- */

/* Writes all of a record, across short writes. */
static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* A worker: simulates candidates w, w + nw, ... and writes each trial record to fd. Never returns. */
static void worker(const search_base *b, const orr_search_opts *o, orr_trial *trials, const uint32_t *cand,
                   uint32_t ncand, uint32_t w, uint32_t nw, int fd)
{
    for (uint32_t k = w; k < ncand; k += nw) {
        orr_trial *t = &trials[cand[k]];
        simulate(b, o, t);
        if (write_all(fd, t, sizeof *t)) _exit(3);
    }
    close(fd);
    _exit(0);
}

/* One worker's pipe in the parent: the record being read. */
typedef struct wpipe { int fd; size_t got; orr_trial rec; pid_t pid; } wpipe;

/* Reads what the workers send until every pipe is closed; stores each record at its index. */
static uint32_t collect(wpipe *wp, uint32_t nw, orr_search_result *r, orr_progress *prog, uint32_t ncand)
{
    struct pollfd pf[ORR_SEARCH_MAX_JOBS];
    uint32_t open = nw, received = 0;
    while (open) {
        uint32_t n = 0;
        for (uint32_t w = 0; w < nw; w++)
            if (wp[w].fd >= 0) pf[n++] = (struct pollfd){.fd = wp[w].fd, .events = POLLIN};
        if (poll(pf, n, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (uint32_t w = 0; w < nw; w++) {
            wpipe *p = &wp[w];
            if (p->fd < 0) continue;
            ssize_t k = read(p->fd, (char *)&p->rec + p->got, sizeof p->rec - p->got);
            if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (k <= 0) {
                close(p->fd);
                p->fd = -1;
                open--;
                continue;
            }
            p->got += (size_t)k;
            if (p->got < sizeof p->rec) continue;
            p->got = 0;
            if (p->rec.index < r->ntrials) {
                r->trials[p->rec.index] = p->rec;
                received++;
                orr_progress_tick(prog, 0, 0, received, ncand, "trials");
            }
        }
    }
    return received;
}

/* Simulates the candidates: here with one job, else in nw forked workers. */
static int simulate_all(const search_base *b, const orr_search_opts *o, orr_search_result *r, const uint32_t *cand,
                        uint32_t ncand, orr_err *err)
{
    uint32_t nw = o->jobs < ncand ? o->jobs : ncand;
    if (nw <= 1) {
        for (uint32_t k = 0; k < ncand; k++) {
            simulate(b, o, &r->trials[cand[k]]);
            orr_progress_tick(o->progress, 0, 0, k + 1, ncand, "trials");
        }
        orr_progress_done(o->progress);
        return 0;
    }
    wpipe wp[ORR_SEARCH_MAX_JOBS];
    fflush(NULL);
    uint32_t started = 0;
    for (uint32_t w = 0; w < nw; w++) {
        int fds[2];
        if (pipe(fds)) break;
        pid_t pid = fork();
        if (pid == 0) {
            for (uint32_t k = 0; k < started; k++) close(wp[k].fd);
            close(fds[0]);
            worker(b, o, r->trials, cand, ncand, w, nw, fds[1]);
        }
        close(fds[1]);
        if (pid < 0) {
            close(fds[0]);
            break;
        }
        wp[started++] = (wpipe){.fd = fds[0], .got = 0, .pid = pid};
    }
    uint32_t received = started ? collect(wp, started, r, o->progress, ncand) : 0;
    orr_progress_done(o->progress);
    int failed = started < nw;
    for (uint32_t w = 0; w < started; w++) {
        int st = 0;
        if (waitpid(wp[w].pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) failed = 1;
    }
    if (failed || received != ncand)
        return orr_fail(err, "search: a worker process failed (%u of %u trials came back); retry with -j 1",
                        received, ncand);
    return 0;
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
        double s = o->objective == ORR_OBJ_COST ? t->cost_usd : o->objective == ORR_OBJ_MFU ? -t->mfu : t->iteration_s;
        sc[n++] = (scored){s, i};
    }
    qsort(sc, n, sizeof *sc, cmp_scored);
    r->ranked = orr_xmalloc((n + 1) * sizeof *r->ranked);
    for (uint32_t k = 0; k < n; k++) r->ranked[k] = sc[k].idx;
    r->nranked = n;
    free(sc);
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
    r->gpus = b.gpus;
    orr_spec hw = b.s;
    orr_err ignored;
    const char *gpu = orr_spec_resolve_hardware(&hw, NULL, &ignored) == 0 ? hw.gpu.name : "?";
    snprintf(r->title, sizeof r->title, "%s on %u x %s, gbs %u, seq %u", b.s.model.name, b.gpus, gpu, b.gbs, b.seq);
    uint32_t *cand = orr_xmalloc((r->ntrials + 1) * sizeof *cand), ncand;
    prepare(&b, o, r, cand, &ncand);
    sample(o, r, cand, &ncand);
    int rc = simulate_all(&b, o, r, cand, ncand, err);
    free(cand);
    if (rc) {
        orr_search_result_free(r);
        return -1;
    }
    summarise(o, r);
    r->wall_s = now_s() - t0;
    return 0;
}

void orr_search_result_free(orr_search_result *r)
{
    free(r->trials);
    free(r->ranked);
    memset(r, 0, sizeof *r);
}
