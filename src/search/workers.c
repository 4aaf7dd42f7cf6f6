/*
 * workers.c - simulating a batch of trials: this process's share of it (every size-th trial under
 * MPI), in this process or in -j forked workers that send their results back through pipes, and the
 * gathering of every rank's results. Each record is stored at its trial's index and numbered in the
 * batch's order, so the results never depend on -j or on the number of ranks.
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
#include <unistd.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

/* Predicts one trial and fills its results. */
static void simulate(const search_base *b, const orr_search_opts *o, orr_trial *t)
{
    orr_spec s;
    orr_err err = {{0}};
    orr_prediction p;
    if (search_trial_spec(b, t, NULL, &s, &err) || orr_predict_headline(&s, &p, &err) < 0) {
        search_set_reason(t, ORR_TRIAL_INVALID, "predict", err.msg);
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
        search_set_reason(t, ORR_TRIAL_OOM, "oom", why);
    } else {
        search_set_reason(t, ORR_TRIAL_OK, "", "");
    }
    orr_prediction_free(&p);
}

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

/* A worker: simulates cand[w], cand[w + nw], ... and writes each trial record to fd. Never returns. */
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
static uint32_t collect(wpipe *wp, uint32_t nw, search_run *R)
{
    struct pollfd pf[ORR_SEARCH_MAX_JOBS];
    uint32_t open = nw, received = 0;
    orr_search_result *r = R->r;
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
                orr_progress_tick(R->o->progress, 0, 0, R->simulated + received, R->total, "trials");
            }
        }
    }
    return received;
}

/* Simulates cand[0..n): here with one job, else in forked workers. */
static int simulate_local(search_run *R, const uint32_t *cand, uint32_t n, orr_err *err)
{
    const orr_search_opts *o = R->o;
    uint32_t nw = o->jobs < n ? o->jobs : n;
    if (nw <= 1) {
        for (uint32_t k = 0; k < n; k++) {
            simulate(R->b, o, &R->r->trials[cand[k]]);
            orr_progress_tick(o->progress, 0, 0, R->simulated + k + 1, R->total, "trials");
        }
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
            worker(R->b, o, R->r->trials, cand, n, w, nw, fds[1]);
        }
        close(fds[1]);
        if (pid < 0) {
            close(fds[0]);
            break;
        }
        wp[started++] = (wpipe){.fd = fds[0], .got = 0, .pid = pid};
    }
    uint32_t received = started ? collect(wp, started, R) : 0;
    int failed = started < nw;
    for (uint32_t w = 0; w < started; w++) {
        int st = 0;
        if (waitpid(wp[w].pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) failed = 1;
    }
    if (failed || received != n)
        return orr_fail(err, "search: a worker process failed (%u of %u trials came back); retry with -j 1", received, n);
    return 0;
}

/* Under MPI: simulates this rank's share (cand[rank], cand[rank + size], ...), then gathers every
 * rank's records and stores each at its index. */
static int simulate_ranks(search_run *R, const uint32_t *cand, uint32_t n, orr_err *err)
{
    const orr_search_ranks *k = R->o->ranks;
    uint32_t *mine = orr_xmalloc((n / k->size + 1) * sizeof *mine), nmine = 0;
    for (uint32_t i = k->rank; i < n; i += k->size) mine[nmine++] = cand[i];
    int rc = simulate_local(R, mine, nmine, err);
    orr_trial *recs = orr_xmalloc((nmine + 1) * sizeof *recs), *all = orr_xmalloc((n + 1) * sizeof *all);
    for (uint32_t i = 0; i < nmine; i++) recs[i] = R->r->trials[mine[i]];
    /* every rank takes part in the gathering, also one whose workers failed (the others wait for it) */
    if (k->allgather(k->ctx, recs, nmine, all, n) && rc == 0)
        rc = orr_fail(err, "search: gathering the trials of %u MPI ranks failed", k->size);
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        if (all[i].index < R->r->ntrials) R->r->trials[all[i].index] = all[i];
    free(mine);
    free(recs);
    free(all);
    return rc;
}

int search_simulate(search_run *R, const uint32_t *cand, uint32_t n, orr_err *err)
{
    if (!n) return 0;
    const orr_search_ranks *k = R->o->ranks;
    int rc = k && k->size > 1 ? simulate_ranks(R, cand, n, err) : simulate_local(R, cand, n, err);
    if (rc) return rc;
    for (uint32_t i = 0; i < n; i++) {
        orr_trial *t = &R->r->trials[cand[i]];
        t->order = ++R->simulated;
        if (t->status != ORR_TRIAL_OK) continue;
        uint32_t j = 0, g = t->v[ORR_AX_GPUS];
        while (j < R->nbest && R->best_gpus[j] != g) j++;
        if (j == R->nbest && j < ORR_SEARCH_MAX_VALUES) R->best_gpus[R->nbest++] = g, R->best_s[j] = t->iteration_s;
        else if (j < R->nbest && t->iteration_s < R->best_s[j]) R->best_s[j] = t->iteration_s;
    }
    return 0;
}
