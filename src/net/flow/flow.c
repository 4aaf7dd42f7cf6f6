/*
 * flow.c - the flow-level backend (include/orrery/flow.h): max-min fair sharing by progressive
 * filling, recomputed for the connected component of links and flows that a start or finish
 * touched, completions on the shared engine, statistics, and rollback for flows injected in the
 * past.
 *
 * Data: flows live in one pool (free list, no allocation per flow once grown); each holds its
 * path (up to FL_MAX_HOPS directed links) and, per hop, its position in that link's flow list, so
 * adding and removing a flow is O(hops). A flow's progress is `sent` bytes at time t_upd at `rate`;
 * its completion event carries a generation number, and rescheduling bumps it so that stale events
 * are ignored when they fire (the engine has no cancel).
 *
 * Recomputation: starts and finishes mark their links dirty and ask for one recompute event at
 * the current time; it runs after everything already queued for this instant, so a ring step in
 * which a thousand flows finish and a thousand start costs one recomputation. It gathers the
 * component reachable from the dirty links through flows, brings their counters up to now, and
 * fills: the link with the smallest fair share (remaining capacity / unfixed flows, ties by link
 * id) fixes its flows at that share, which is taken from every link they cross; shares only grow
 * as flows are fixed, so a lazy min-heap of (share, link) suffices. Each component's result does
 * not depend on the others, so the incremental rates equal a from-scratch recomputation
 * (orr_flow_check_rates, tested).
 *
 * History (opts.keep_history): every rate change appends (time, rate, bytes sent) to the flow's
 * list (newest first, pooled). Rollback reads them to restore every active flow's bytes at the
 * past start time, replays the fluid model from there with the new flow, and reschedules every
 * completion.
 */
#include "orrery/flow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FL_MAX_HOPS 16
#define NONE UINT32_MAX

typedef struct hist {
    int64_t t_ps;
    double rate_Bps;
    double sent;   /* bytes sent at t_ps */
    uint32_t next; /* older entry */
} hist;

typedef struct fflow {
    uint64_t id;
    double bytes, sent, rate, nrate;
    double min_cap;      /* uncontended rate: smallest capacity on the path */
    int64_t t_start, t_upd, slow_ps;
    int64_t t_due;       /* time of its pending completion event (INT64_MAX: none) */
    uint32_t gen, nhops, hist, mark, next_free;
    uint8_t active, fixed, pending;
    orr_event_fn done;
    void *ctx;
    uint64_t arg;
    uint32_t src, dst;
    uint32_t hops[FL_MAX_HOPS];
    uint32_t pos[FL_MAX_HOPS];
} fflow;

typedef struct flink {
    double cap;
    uint32_t *fl;
    uint32_t n, capn;
    orr_flow_link_stats st;
    double rate_sum;
    int64_t t_upd;
    uint8_t saturated, sat_new;
    double rem;          /* filling scratch */
    uint32_t nun, ver, mark;
} flink;

typedef struct heap_ent {
    double share;
    uint32_t link, ver;
} heap_ent;

typedef struct fb {
    orr_transport tr;
    orr_engine *e;
    const orr_topo *topo;
    orr_flow_opts o;
    flink *links;
    uint32_t nlinks;
    fflow *fl;
    size_t nfl, capfl;
    uint32_t free_fl;
    hist *h;
    size_t nh, caph, live_h;
    uint32_t free_h;
    uint32_t *dirty, *cl, *cf;
    size_t ndirty, capdirty, ncl, capcl, ncf, capcf;
    heap_ent *hp;
    size_t nhp, caphp;
    uint32_t epoch;
    int pending, replaying;
    orr_flow_totals tot;
    orr_link_bins *bins;   /* per-link bytes per window (orr_flow_set_link_bins), or NULL */
} fb;

static fb *B(orr_transport *t) { return (fb *)t->impl; }
static const fb *CB(const orr_transport *t) { return (const fb *)t->impl; }

/* ---- history ---- */

static void hist_push(fb *b, fflow *f, int64_t now)
{
    if (!b->o.keep_history) return;
    if (f->hist != NONE && b->h[f->hist].t_ps == now) {
        b->h[f->hist].rate_Bps = f->rate;
        b->h[f->hist].sent = f->sent;
        return;
    }
    uint32_t i = orr_pool_take((void **)&b->h, &b->nh, &b->caph, sizeof *b->h, offsetof(hist, next), &b->free_h);
    b->h[i] = (hist){now, f->rate, f->sent, f->hist};
    f->hist = i;
    b->live_h++;
}

/* Frees the entries from i on (an older part of a list). */
static void hist_free_from(fb *b, uint32_t i)
{
    while (i != NONE) {
        uint32_t nx = b->h[i].next;
        orr_pool_give(b->h, sizeof *b->h, offsetof(hist, next), &b->free_h, i);
        b->live_h--;
        i = nx;
    }
}

/* Bytes flow f had sent at t (t at or after its start), from its history. */
static double sent_at(const fb *b, const fflow *f, int64_t t)
{
    uint32_t i = f->hist, last = NONE;
    while (i != NONE && b->h[i].t_ps > t) {
        last = i;
        i = b->h[i].next;
    }
    if (i == NONE) return last == NONE ? 0 : b->h[last].sent; /* history dropped: the oldest known */
    return b->h[i].sent + b->h[i].rate_Bps * (double)(t - b->h[i].t_ps) / (double)ORR_PS_PER_S;
}

/* ---- links and flows ---- */

static void link_sync(fb *b, flink *l, int64_t now)
{
    int64_t dt = now - l->t_upd;
    if (dt <= 0 || b->replaying) return;
    l->st.bytes += l->rate_sum * (double)dt / (double)ORR_PS_PER_S;
    if (b->bins && l->rate_sum > 0) /* the same bytes, by window (linkbins.h) */
        orr_link_bins_spread(b->bins, (uint32_t)(l - b->links), l->t_upd, now,
                             l->rate_sum * (double)dt / (double)ORR_PS_PER_S);
    if (l->n) l->st.busy_ps += dt;
    if (l->saturated) l->st.saturated_ps += dt;
    l->t_upd = now;
}

static void flow_sync(fflow *f, int64_t now)
{
    int64_t dt = now - f->t_upd;
    if (dt <= 0) return;
    f->sent += f->rate * (double)dt / (double)ORR_PS_PER_S;
    if (f->rate < f->min_cap * (1 - 1e-9)) f->slow_ps += dt;
    f->t_upd = now;
}

static void link_add(fb *b, uint32_t l, uint32_t fi, uint32_t hop)
{
    flink *k = &b->links[l];
    if (k->n == k->capn) {
        size_t cap = k->capn;
        orr_grow((void **)&k->fl, &cap, k->n + 1, sizeof *k->fl);
        k->capn = (uint32_t)cap;
    }
    b->fl[fi].pos[hop] = k->n;
    k->fl[k->n++] = fi;
    if (k->n > k->st.peak_flows) k->st.peak_flows = k->n;
}

static void link_del(fb *b, uint32_t l, uint32_t fi, uint32_t hop)
{
    flink *k = &b->links[l];
    uint32_t at = b->fl[fi].pos[hop], last = k->fl[--k->n];
    if (last == fi) return;
    k->fl[at] = last;
    fflow *m = &b->fl[last];
    for (uint32_t j = 0; j < m->nhops; j++)
        if (m->hops[j] == l) m->pos[j] = at;
}

static void mark_dirty(fb *b, const fflow *f)
{
    for (uint32_t j = 0; j < f->nhops; j++) ORR_PUSH(b->dirty, b->ndirty, b->capdirty, f->hops[j]);
}

/* Puts flow fi (path set) onto its links at time now. */
static void flow_attach(fb *b, uint32_t fi, int64_t now)
{
    fflow *f = &b->fl[fi];
    for (uint32_t j = 0; j < f->nhops; j++) {
        link_sync(b, &b->links[f->hops[j]], now);
        link_add(b, f->hops[j], fi, j);
    }
    f->active = 1;
    f->t_upd = now;
    mark_dirty(b, f);
}

/* Takes flow fi off its links at time now. Returns 1 if it leaves them all empty: their rate
 * sums and saturation are then settled here (nothing to recompute; see flow_go_lone), else 0 and
 * its links are marked dirty. */
static int flow_detach(fb *b, uint32_t fi, int64_t now)
{
    fflow *f = &b->fl[fi];
    int alone = !b->replaying;
    for (uint32_t j = 0; j < f->nhops; j++) {
        flink *k = &b->links[f->hops[j]];
        link_sync(b, k, now);
        k->rate_sum -= f->rate;
        link_del(b, f->hops[j], fi, j);
        if (k->n) alone = 0;
    }
    f->active = 0;
    if (!alone) {
        mark_dirty(b, f);
        return 0;
    }
    for (uint32_t j = 0; j < f->nhops; j++) {
        flink *k = &b->links[f->hops[j]];
        k->rate_sum = 0;
        k->saturated = k->sat_new = 0;
    }
    return 1;
}

/* ---- progressive filling ---- */

static void heap_push(fb *b, heap_ent x)
{
    if (b->nhp == b->caphp) orr_grow((void **)&b->hp, &b->caphp, b->nhp + 1, sizeof *b->hp);
    size_t i = b->nhp++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        const heap_ent *q = &b->hp[p];
        if (q->share < x.share || (q->share == x.share && q->link <= x.link)) break;
        b->hp[i] = *q;
        i = p;
    }
    b->hp[i] = x;
}

static heap_ent heap_pop(fb *b)
{
    heap_ent top = b->hp[0], x = b->hp[--b->nhp];
    size_t i = 0, n = b->nhp;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && (b->hp[c + 1].share < b->hp[c].share ||
                          (b->hp[c + 1].share == b->hp[c].share && b->hp[c + 1].link < b->hp[c].link)))
            c++;
        if (x.share < b->hp[c].share || (x.share == b->hp[c].share && x.link <= b->hp[c].link)) break;
        b->hp[i] = b->hp[c];
        i = c;
    }
    if (n) b->hp[i] = x;
    return top;
}

/* Max-min rates of the flows cf over the links cl (a union of components) into nrate. */
static void fill(fb *b, const uint32_t *cl, size_t ncl, const uint32_t *cf, size_t ncf)
{
    b->nhp = 0;
    for (size_t i = 0; i < ncf; i++) b->fl[cf[i]].fixed = 0;
    for (size_t i = 0; i < ncl; i++) {
        flink *k = &b->links[cl[i]];
        k->rem = k->cap;
        k->nun = k->n;
        k->sat_new = 0;
        k->ver++;
        if (k->nun) heap_push(b, (heap_ent){k->rem / k->nun, cl[i], k->ver});
    }
    double last = 0;
    while (b->nhp) {
        heap_ent top = heap_pop(b);
        flink *k = &b->links[top.link];
        if (top.ver != k->ver || k->nun == 0) continue;
        double share = k->rem / k->nun;
        if (share < last) share = last; /* rounding: shares never fall */
        last = share;
        k->sat_new = 1;
        for (uint32_t i = 0; i < k->n; i++) {
            fflow *f = &b->fl[k->fl[i]];
            if (f->fixed) continue;
            f->fixed = 1;
            f->nrate = share;
            for (uint32_t j = 0; j < f->nhops; j++) {
                flink *m = &b->links[f->hops[j]];
                m->rem -= share;
                m->nun--;
                m->ver++;
                if (m != k && m->nun) heap_push(b, (heap_ent){m->rem / m->nun, f->hops[j], m->ver});
            }
        }
    }
}

/* The link of flow f's path with the smallest capacity, the lowest id among equal ones: the one
 * fill's heap would saturate if f were alone. */
static uint32_t path_bottleneck(const fb *b, const fflow *f)
{
    uint32_t best = f->hops[0];
    for (uint32_t j = 1; j < f->nhops; j++) {
        uint32_t l = f->hops[j];
        if (b->links[l].cap < b->links[best].cap || (b->links[l].cap == b->links[best].cap && l < best)) best = l;
    }
    return best;
}

/* fill for the common case of a union in which every flow is alone on each of its links (the ring
 * steps of collectives inside an NVSwitch server): each flow gets its path's smallest capacity, and
 * that link, the lowest id among equal ones, is the one saturated, as fill's heap would pop it.
 * Returns 0, having changed nothing, if some link carries more than one flow. */
static int fill_lone(fb *b, const uint32_t *cl, size_t ncl, const uint32_t *cf, size_t ncf)
{
    for (size_t i = 0; i < ncl; i++)
        if (b->links[cl[i]].n > 1) return 0;
    for (size_t i = 0; i < ncl; i++) b->links[cl[i]].sat_new = 0;
    for (size_t i = 0; i < ncf; i++) {
        fflow *f = &b->fl[cf[i]];
        uint32_t best = path_bottleneck(b, f);
        f->nrate = b->links[best].cap;
        b->links[best].sat_new = 1;
    }
    return 1;
}

/* The links and flows connected to the dirty links, into cl / cf. */
static void gather(fb *b)
{
    b->epoch++;
    b->ncl = b->ncf = 0;
    for (size_t i = 0; i < b->ndirty; i++) {
        flink *k = &b->links[b->dirty[i]];
        if (k->mark == b->epoch) continue;
        k->mark = b->epoch;
        ORR_PUSH(b->cl, b->ncl, b->capcl, b->dirty[i]);
    }
    b->ndirty = 0;
    for (size_t i = 0; i < b->ncl; i++) {
        flink *k = &b->links[b->cl[i]];
        for (uint32_t j = 0; j < k->n; j++) {
            fflow *f = &b->fl[k->fl[j]];
            if (f->mark == b->epoch) continue;
            f->mark = b->epoch;
            ORR_PUSH(b->cf, b->ncf, b->capcf, k->fl[j]);
            for (uint32_t h = 0; h < f->nhops; h++) {
                flink *m = &b->links[f->hops[h]];
                if (m->mark == b->epoch) continue;
                m->mark = b->epoch;
                ORR_PUSH(b->cl, b->ncl, b->capcl, f->hops[h]);
            }
        }
    }
}

static void complete_ev(void *ctx, uint64_t arg);

/* Seconds to whole picoseconds, rounding up, but not for the last thousandth of a picosecond that
 * floating-point division leaves (1e8 B at 1/3 GB/s is 0.3 s, not 0.3 s + 1 ps). */
static double ps_ceil(double s)
{
    double ps = ceil(s * (double)ORR_PS_PER_S - 1e-3);
    return ps < 0 ? 0 : ps;
}

/* When flow fi finishes at its current rate, from now. */
static int64_t finish_time(const fflow *f, int64_t now)
{
    double left = f->bytes - f->sent;
    double dt = left > 0 ? ps_ceil(left / f->rate) : 0;
    return now + (int64_t)(dt > 9e18 ? 9e18 : dt);
}

/* Makes sure a completion event is pending no later than flow fi's finish time. A later finish
 * keeps the pending (earlier) event, which reschedules itself when it fires (complete_ev): rates
 * fall far more often than they rise, and this saves an event each time. force: a new event
 * whatever (progress was rewritten by a rollback). */
static void schedule_completion(fb *b, uint32_t fi, int64_t now, int force)
{
    fflow *f = &b->fl[fi];
    int64_t at = finish_time(f, now);
    if (!force && at >= f->t_due) return;
    f->gen++;
    f->t_due = at;
    orr_engine_at(b->e, at, complete_ev, b, ((uint64_t)f->gen << 32) | fi);
}

/* Recomputes the rates of the component of the dirty links at time now. force: reschedule every
 * flow of it (their progress changed), not only those whose rate changed. */
static void recompute(fb *b, int64_t now, int force)
{
    gather(b);
    if (b->ncl == 0) return;
    b->tot.recomputes++;
    for (size_t i = 0; i < b->ncl; i++) link_sync(b, &b->links[b->cl[i]], now);
    for (size_t i = 0; i < b->ncf; i++) flow_sync(&b->fl[b->cf[i]], now);
    if (!fill_lone(b, b->cl, b->ncl, b->cf, b->ncf)) fill(b, b->cl, b->ncl, b->cf, b->ncf);
    for (size_t i = 0; i < b->ncf; i++) {
        uint32_t fi = b->cf[i];
        fflow *f = &b->fl[fi];
        if (f->nrate == f->rate && !force) continue;
        f->rate = f->nrate;
        hist_push(b, f, now);
        if (!b->replaying) schedule_completion(b, fi, now, force);
    }
    for (size_t i = 0; i < b->ncl; i++) {
        flink *k = &b->links[b->cl[i]];
        double s = 0;
        for (uint32_t j = 0; j < k->n; j++) s += b->fl[k->fl[j]].rate;
        k->rate_sum = s;
        k->saturated = k->sat_new;
    }
}

static void recompute_ev(void *ctx, uint64_t arg)
{
    fb *b = ctx;
    (void)arg;
    b->pending = 0;
    recompute(b, b->e->now_ps, 0);
}

/* Runs the recomputation asked for at this instant now (before the event that would). */
static void settle(fb *b)
{
    if (!b->pending) return;
    b->pending = 0;
    recompute(b, b->e->now_ps, 0);
}

static void want_recompute(fb *b)
{
    if (b->pending) return;
    b->pending = 1;
    orr_engine_at(b->e, b->e->now_ps, recompute_ev, b, 0);
}

/* ---- flows ---- */

static uint32_t flow_new(fb *b)
{
    uint32_t fi = orr_pool_take((void **)&b->fl, &b->nfl, &b->capfl, sizeof *b->fl, offsetof(fflow, next_free), &b->free_fl);
    fflow *f = &b->fl[fi]; /* a new one is zeroed: gen 0 */
    uint32_t gen = f->gen;
    memset(f, 0, offsetof(fflow, hops));
    f->gen = gen;
    f->hist = NONE;
    f->mark = 0;
    f->t_due = INT64_MAX;
    return fi;
}

static void flow_release(fb *b, uint32_t fi)
{
    fflow *f = &b->fl[fi];
    hist_free_from(b, f->hist);
    f->hist = NONE;
    f->active = f->pending = 0;
    orr_pool_give(b->fl, sizeof *b->fl, offsetof(fflow, next_free), &b->free_fl, fi);
}

/* Fills a new flow's fields and path; returns its index, or NONE for a flow with nothing to move
 * (the callback is then scheduled now). */
static uint32_t flow_prepare(fb *b, int64_t t_start, uint32_t src, uint32_t dst, uint64_t bytes,
                             uint64_t id, orr_event_fn done, void *ctx, uint64_t arg)
{
    b->tot.flows++;
    if (bytes == 0 || src == dst) {
        b->tot.finished++;
        orr_engine_at(b->e, t_start, done, ctx, arg);
        return NONE;
    }
    uint32_t fi = flow_new(b);
    fflow *f = &b->fl[fi];
    int n = orr_topo_route(b->topo, &b->o.route, src, dst, orr_hash64(id), f->hops, FL_MAX_HOPS);
    if (n <= 0) {
        fprintf(stderr, "orrery: flow backend: no route from host %u to host %u (%u hosts)\n", src, dst,
                b->topo->n_hosts);
        abort();
    }
    f->nhops = (uint32_t)n;
    f->id = id;
    f->src = src;
    f->dst = dst;
    f->bytes = (double)bytes;
    f->t_start = f->t_upd = t_start;
    f->done = done;
    f->ctx = ctx;
    f->arg = arg;
    f->min_cap = INFINITY;
    for (uint32_t j = 0; j < f->nhops; j++)
        if (b->links[f->hops[j]].cap < f->min_cap) f->min_cap = b->links[f->hops[j]].cap;
    return fi;
}

/* A flow that starts on links no other flow uses gets its path's smallest capacity at once, as
 * fill_lone would give it at this instant's recomputation (the lowest id among equal capacities
 * saturated), with its completion scheduled now; no recomputation is asked for. A flow that joins
 * one of its links later in the same instant asks for one, which changes its rate only if the
 * links are shared (the completion set here then fires early and reschedules itself, complete_ev).
 * With flow_detach's settling of links a flow leaves empty, a collective's ring steps inside an
 * NVSwitch server (each flow alone on its two links) cost no recomputation at all. */
static int flow_go_lone(fb *b, uint32_t fi)
{
    fflow *f = &b->fl[fi];
    if (b->replaying || b->pending) return 0; /* a recomputation is due now anyway: join it */
    for (uint32_t j = 0; j < f->nhops; j++)
        if (b->links[f->hops[j]].n) return 0;
    int64_t now = b->e->now_ps;
    uint32_t best = path_bottleneck(b, f);
    for (uint32_t j = 0; j < f->nhops; j++) {
        link_sync(b, &b->links[f->hops[j]], now);
        link_add(b, f->hops[j], fi, j);
    }
    f->active = 1;
    f->t_upd = now;
    f->rate = f->nrate = b->links[best].cap;
    for (uint32_t j = 0; j < f->nhops; j++) {
        flink *k = &b->links[f->hops[j]];
        k->rate_sum = f->rate;
        k->saturated = k->sat_new = f->hops[j] == best;
    }
    hist_push(b, f, now);
    schedule_completion(b, fi, now, 0);
    return 1;
}

static void flow_go(fb *b, uint32_t fi)
{
    if (flow_go_lone(b, fi)) return;
    flow_attach(b, fi, b->e->now_ps);
    want_recompute(b);
}

static void complete_ev(void *ctx, uint64_t arg)
{
    fb *b = ctx;
    uint32_t fi = (uint32_t)arg;
    fflow *f = &b->fl[fi];
    if (!f->active || f->gen != (uint32_t)(arg >> 32)) return; /* rescheduled since */
    int64_t now = b->e->now_ps;
    flow_sync(f, now);
    int64_t at = finish_time(f, now);
    if (at > now) { /* slowed down since this event was set: come back when it is really done */
        f->t_due = at;
        orr_engine_at(b->e, at, complete_ev, b, arg);
        return;
    }
    int settled = flow_detach(b, fi, now);
    b->tot.finished++;
    b->tot.bytes += f->bytes;
    b->tot.fct_sum_ps += now - f->t_start;
    b->tot.bottleneck_ps += f->slow_ps;
    orr_event_fn done = f->done;
    void *dctx = f->ctx;
    uint64_t darg = f->arg;
    flow_release(b, fi);
    if (!settled) want_recompute(b);
    done(dctx, darg);
}

static void pending_start_ev(void *ctx, uint64_t arg)
{
    fb *b = ctx;
    b->fl[(uint32_t)arg].pending = 0;
    flow_go(b, (uint32_t)arg);
}

static void flow_start(orr_transport *t, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t id,
                       orr_event_fn done, void *ctx, uint64_t arg)
{
    fb *b = B(t);
    uint32_t fi = flow_prepare(b, b->e->now_ps, src, dst, bytes, id, done, ctx, arg);
    if (fi != NONE) flow_go(b, fi);
}

/* ---- rollback ---- */

/* Next event of the replay after time t: the earliest start (of flows not yet on the links) or
 * completion; *which receives the flow, *is_start whether it starts. INT64_MAX if none. */
static int64_t replay_next(fb *b, const uint32_t *late, size_t nlate, size_t next_late, int64_t t,
                           uint32_t *which, int *is_start)
{
    int64_t best = INT64_MAX;
    if (next_late < nlate) {
        best = b->fl[late[next_late]].t_start;
        *which = late[next_late];
        *is_start = 1;
    }
    for (size_t i = 0; i < b->nfl; i++) {
        const fflow *f = &b->fl[i];
        double left = f->bytes - f->sent;
        if (!f->active || !(f->rate > 0) || left <= 0) continue;
        int64_t at = t + (int64_t)ps_ceil(left / f->rate);
        if (at < best) {
            best = at;
            *which = (uint32_t)i;
            *is_start = 0;
        }
    }
    return best;
}

static int cmp_start(const void *a, const void *c, void *ctx);

/* Flow fi (prepared, t_start < now) joins the past: restore every active flow's progress at
 * t_start from its history, take flows that started later off the links, replay the fluid model
 * up to now with the newcomer, and reschedule every completion. */
static void rollback(fb *b, uint32_t fi)
{
    int64_t now = b->e->now_ps, tp = b->fl[fi].t_start;
    b->tot.rollbacks++;
    settle(b);
    for (uint32_t i = 0; i < b->nlinks; i++) link_sync(b, &b->links[i], now);
    b->replaying = 1;
    uint32_t *late = NULL;
    size_t nlate = 0, caplate = 0;
    for (size_t i = 0; i < b->nfl; i++) {
        fflow *f = &b->fl[i];
        if (!f->active) continue;
        if (f->t_start > tp) {
            flow_detach(b, (uint32_t)i, now);
            f->sent = 0;
            hist_free_from(b, f->hist);
            f->hist = NONE;
            ORR_PUSH(late, nlate, caplate, (uint32_t)i);
            continue;
        }
        f->sent = sent_at(b, f, tp);
        f->t_upd = tp;
        while (f->hist != NONE && b->h[f->hist].t_ps > tp) { /* superseded by the replay */
            uint32_t h = f->hist;
            f->hist = b->h[h].next;
            b->h[h].next = NONE;
            hist_free_from(b, h);
        }
        f->rate = f->hist != NONE ? b->h[f->hist].rate_Bps : 0;
        mark_dirty(b, f);
    }
    /* late flows in start order (ties by index) */
    for (size_t i = 1; i < nlate; i++)
        for (size_t j = i; j > 0 && cmp_start(&late[j - 1], &late[j], b) > 0; j--) {
            uint32_t x = late[j];
            late[j] = late[j - 1];
            late[j - 1] = x;
        }
    flow_attach(b, fi, tp);
    int64_t t = tp;
    size_t next_late = 0;
    for (;;) {
        recompute(b, t, 1);
        uint32_t which = NONE;
        int is_start = 0;
        int64_t at = replay_next(b, late, nlate, next_late, t, &which, &is_start);
        if (at >= now) break;
        for (size_t i = 0; i < b->nfl; i++)
            if (b->fl[i].active) flow_sync(&b->fl[i], at);
        t = at;
        if (is_start) {
            flow_attach(b, which, t);
            next_late++;
        } else { /* would have finished in the past: it finishes now (its callback cannot run
                  * earlier); until then it keeps its share, an error bounded by the replay */
            b->fl[which].sent = b->fl[which].bytes;
            mark_dirty(b, &b->fl[which]);
        }
    }
    for (; next_late < nlate; next_late++) flow_attach(b, late[next_late], b->fl[late[next_late]].t_start);
    free(late);
    for (size_t i = 0; i < b->nfl; i++) /* bring everyone to now */
        if (b->fl[i].active) {
            flow_sync(&b->fl[i], now);
            mark_dirty(b, &b->fl[i]);
        }
    for (uint32_t i = 0; i < b->nlinks; i++) b->links[i].t_upd = now;
    b->replaying = 0;
    recompute(b, now, 1);
}

static int cmp_start(const void *a, const void *c, void *ctx)
{
    const fb *b = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)c;
    int64_t tx = b->fl[x].t_start, ty = b->fl[y].t_start;
    return tx < ty ? -1 : tx > ty ? 1 : (x > y) - (x < y);
}

void orr_flow_start_at(orr_transport *t, int64_t t_start_ps, uint32_t src, uint32_t dst, uint64_t bytes,
                       uint64_t id, orr_event_fn done, void *ctx, uint64_t arg)
{
    fb *b = B(t);
    int64_t now = b->e->now_ps;
    uint32_t fi = flow_prepare(b, t_start_ps > now ? now : t_start_ps, src, dst, bytes, id, done, ctx, arg);
    if (fi == NONE) return;
    if (t_start_ps > now) {
        b->fl[fi].t_start = b->fl[fi].t_upd = t_start_ps;
        b->fl[fi].pending = 1;
        orr_engine_at(b->e, t_start_ps, pending_start_ev, b, fi);
    } else if (t_start_ps == now) {
        flow_go(b, fi);
    } else {
        if (!b->o.keep_history) {
            fprintf(stderr, "orrery: flow backend: a flow started in the past without keep_history\n");
            abort();
        }
        rollback(b, fi);
    }
}

void orr_flow_gc(orr_transport *t, int64_t horizon)
{
    fb *b = B(t);
    for (size_t i = 0; i < b->nfl; i++) {
        fflow *f = &b->fl[i];
        if (!f->active) continue;
        uint32_t h = f->hist;
        while (h != NONE && b->h[h].t_ps > horizon) h = b->h[h].next;
        if (h != NONE) { /* keep the entry in force at the horizon, drop the older ones */
            hist_free_from(b, b->h[h].next);
            b->h[h].next = NONE;
        }
    }
}

size_t orr_flow_history_len(const orr_transport *t) { return CB(t)->live_h; }

/* ---- statistics and checks ---- */

void orr_flow_sync(orr_transport *t)
{
    fb *b = B(t);
    for (uint32_t i = 0; i < b->nlinks; i++) link_sync(b, &b->links[i], b->e->now_ps);
}

void orr_flow_set_link_bins(orr_transport *t, orr_link_bins *bins)
{
    B(t)->bins = bins;
}

const orr_flow_link_stats *orr_flow_link_stats_of(const orr_transport *t, uint32_t link)
{
    const fb *b = CB(t);
    return link < b->nlinks ? &b->links[link].st : NULL;
}

orr_flow_totals orr_flow_get_totals(const orr_transport *t) { return CB(t)->tot; }

double orr_flow_rate(const orr_transport *t, uint64_t id)
{
    const fb *b = CB(t); /* a scan: for tests, not worth an index on the hot path */
    for (size_t i = 0; i < b->nfl; i++)
        if (b->fl[i].active && b->fl[i].id == id) return b->fl[i].rate;
    return -1;
}

double orr_flow_check_rates(orr_transport *t)
{
    fb *b = B(t);
    settle(b);
    uint32_t *cl = NULL, *cf = NULL;
    size_t ncl = 0, capcl = 0, ncf = 0, capcf = 0;
    for (uint32_t i = 0; i < b->nlinks; i++)
        if (b->links[i].n) ORR_PUSH(cl, ncl, capcl, i);
    for (size_t i = 0; i < b->nfl; i++)
        if (b->fl[i].active) ORR_PUSH(cf, ncf, capcf, (uint32_t)i);
    uint8_t *sat = orr_xmalloc(b->nlinks ? b->nlinks : 1);
    for (uint32_t i = 0; i < b->nlinks; i++) sat[i] = b->links[i].sat_new;
    fill(b, cl, ncl, cf, ncf);
    double worst = 0;
    for (size_t i = 0; i < ncf; i++) {
        const fflow *f = &b->fl[cf[i]];
        double d = fabs(f->nrate - f->rate) / (f->nrate > 0 ? f->nrate : 1);
        if (d > worst) worst = d;
    }
    for (uint32_t i = 0; i < b->nlinks; i++) b->links[i].sat_new = sat[i];
    free(sat);
    free(cl);
    free(cf);
    return worst;
}

/* ---- creation ---- */

static void flow_destroy(orr_transport *t)
{
    fb *b = B(t);
    for (uint32_t i = 0; i < b->nlinks; i++) free(b->links[i].fl);
    free(b->links);
    free(b->fl);
    free(b->h);
    free(b->dirty);
    free(b->cl);
    free(b->cf);
    free(b->hp);
    free(b);
}

orr_transport *orr_flow_create(orr_engine *e, const orr_topo *topo, const orr_flow_opts *o)
{
    fb *b = orr_xcalloc(1, sizeof *b);
    b->e = e;
    b->topo = topo;
    if (o) b->o = *o;
    b->free_fl = b->free_h = NONE;
    b->nlinks = topo->n_links;
    b->links = orr_xcalloc(b->nlinks ? b->nlinks : 1, sizeof *b->links);
    for (uint32_t i = 0; i < b->nlinks; i++) {
        double s = b->o.tier_scale[topo->links[i].tier < ORR_TIER_COUNT ? topo->links[i].tier : 0];
        b->links[i].cap = topo->links[i].rate_Bps * (s > 0 ? s : 1.0);
    }
    b->tr.engine = e;
    b->tr.topo = topo;
    b->tr.start_flow = flow_start;
    b->tr.destroy = flow_destroy;
    b->tr.impl = b;
    return &b->tr;
}
