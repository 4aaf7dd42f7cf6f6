/*
 * engine.c - the discrete-event engine: a radix heap on time, ties broken by sequence (engine.h).
 *
 * Why a radix heap: an event is never scheduled before the last event run (times before now are
 * clamped to now), so the queue is monotone and a radix heap applies (Ahuja, Mehlhorn, Orlin and
 * Tarjan 1990). Its base is the time of the last event taken; bucket 0 holds the events at the
 * base, kept in sequence order (new ones have the largest sequence yet and go to the end; one put
 * back with its old sequence is inserted in place); bucket i (1..64) those whose time first
 * differs from the base in bit i - 1. When bucket 0 is spent, the lowest non-empty bucket's
 * earliest time becomes the base and its events move to lower buckets (each to the bucket of its
 * time against the new base: always lower), the ones at the base into bucket 0, sorted by
 * sequence. So events run in (time, sequence) order, exactly the order of the 4-ary heap this
 * replaced (every output was compared bit for bit), at a cost that barely grows with the queue: a
 * packet-level run keeps thousands of events queued, and the heap's sift-down (six levels of four
 * children at 8,000 events) was a third of its time.
 */
#include "orrery/engine.h"
#include "orrery/core.h"

#include <string.h>
#include <stdlib.h>

void orr_engine_init(orr_engine *e) { memset(e, 0, sizeof *e); }

void orr_engine_free(orr_engine *e)
{
    for (int i = 0; i < ORR_ENGINE_BUCKETS; i++) free(e->b[i].ev);
    memset(e, 0, sizeof *e);
}

/* The bucket of time t against the base: 0 at the base, else 1 + the highest bit where they differ. */
static inline int bucket_of(const orr_engine *e, int64_t t_ps)
{
    uint64_t d = (uint64_t)t_ps ^ (uint64_t)e->base_ps;
    return d ? 64 - __builtin_clzll(d) : 0;
}

static inline void push(orr_engine *e, int i, const orr_event *v)
{
    orr_engine_bucket *b = &e->b[i];
    if (b->n == b->cap) orr_grow((void **)&b->ev, &b->cap, b->n + 1, sizeof *b->ev);
    b->ev[b->n++] = *v;
    if (i) e->nonempty |= UINT64_C(1) << (i - 1);
}

/* The lowest non-empty bucket above 0, or 0 if none. */
static inline int lowest_bucket(const orr_engine *e) { return e->nonempty ? 1 + __builtin_ctzll(e->nonempty) : 0; }

void orr_engine_at(orr_engine *e, int64_t t_ps, orr_event_fn fn, void *ctx, uint64_t arg)
{
    orr_event ev = {t_ps, e->next_seq++, fn, ctx, arg};
    orr_engine_put(e, &ev);
}

void orr_engine_after(orr_engine *e, int64_t delay_ps, orr_event_fn fn, void *ctx, uint64_t arg)
{
    orr_engine_at(e, e->now_ps + (delay_ps > 0 ? delay_ps : 0), fn, ctx, arg);
}

/* Sorts bucket 0 by sequence (the sequence numbers are distinct). Events mostly come in order
 * (each bucket receives them in the order they were scheduled or moved), so an insertion sort,
 * which stops being used once it has shifted as many events as there are: then a heap sort, so
 * that many events at one time arriving in two interleaved runs cannot take quadratic time.
 * Neither allocates (glibc's qsort allocates for its merge sort on large arrays). */
static void sift_seq(orr_event *ev, size_t i, size_t n)
{
    orr_event v = ev[i];
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && ev[c + 1].seq > ev[c].seq) c++;
        if (ev[c].seq <= v.seq) break;
        ev[i] = ev[c];
    }
    ev[i] = v;
}

static void sort_by_seq(orr_event *ev, size_t n)
{
    size_t moves = 0;
    for (size_t i = 1; i < n; i++) {
        if (ev[i - 1].seq < ev[i].seq) continue;
        orr_event v = ev[i];
        size_t k = i;
        while (k > 0 && ev[k - 1].seq > v.seq && moves <= n) {
            ev[k] = ev[k - 1];
            k--;
            moves++;
        }
        ev[k] = v;
        if (moves > n) break; /* far from sorted: the heap sort below */
    }
    if (moves <= n) return;
    for (size_t i = n / 2; i-- > 0;) sift_seq(ev, i, n);
    for (size_t end = n; end-- > 1;) {
        orr_event top = ev[0];
        ev[0] = ev[end];
        ev[end] = top;
        sift_seq(ev, 0, end);
    }
}

/* Makes bucket 0 hold the next events to run (at the new base), if any are queued. */
static void refill(orr_engine *e)
{
    orr_engine_bucket *b0 = &e->b[0];
    b0->n = e->head = 0;
    int i = lowest_bucket(e);
    if (i == 0) return;
    orr_engine_bucket *bi = &e->b[i];
    int64_t t = bi->ev[0].t_ps;
    for (size_t k = 1; k < bi->n; k++)
        if (bi->ev[k].t_ps < t) t = bi->ev[k].t_ps;
    e->base_ps = t;
    for (size_t k = 0; k < bi->n; k++) push(e, bucket_of(e, bi->ev[k].t_ps), &bi->ev[k]);
    bi->n = 0;
    e->nonempty &= ~(UINT64_C(1) << (i - 1));
    sort_by_seq(b0->ev, b0->n);
}

uint64_t orr_engine_run(orr_engine *e)
{
    uint64_t start = e->events_run, ran = 0;
    while (e->n) {
        if (e->head == e->b[0].n) refill(e);
        orr_event ev = e->b[0].ev[e->head];
        if (ev.t_ps > ORR_ENGINE_MAX_PS) { /* the clock's end: stop, the caller says so */
            e->overflow = 1;
            break;
        }
        e->head++;
        e->n--;
        e->now_ps = ev.t_ps;
        ev.fn(ev.ctx, ev.arg);
        ran++;
        if (e->tick_fn && ran % ORR_ENGINE_TICK_EVENTS == 0) {
            e->events_run = start + ran; /* current for the tick */
            e->tick_fn(e->tick_ctx, e);
        }
    }
    e->events_run = start + ran;
    return ran;
}

size_t orr_engine_take(orr_engine *e, int (*pred)(void *pctx, const orr_event *ev), void *pctx, orr_event **out,
                       size_t *nout, size_t *capout)
{
    size_t taken = 0;
    for (int i = 0; i < ORR_ENGINE_BUCKETS; i++) {
        orr_engine_bucket *b = &e->b[i];
        size_t from = i == 0 ? e->head : 0, kept = from;
        for (size_t k = from; k < b->n; k++) {
            if (pred(pctx, &b->ev[k])) {
                if (*nout == *capout) orr_grow((void **)out, capout, *nout + 1, sizeof **out);
                (*out)[(*nout)++] = b->ev[k];
                taken++;
            } else {
                b->ev[kept++] = b->ev[k]; /* in order: bucket 0 stays sorted */
            }
        }
        b->n = kept;
        if (i && kept == 0) e->nonempty &= ~(UINT64_C(1) << (i - 1));
    }
    e->n -= taken;
    return taken;
}

void orr_engine_put(orr_engine *e, const orr_event *ev)
{
    orr_event v = *ev;
    if (v.t_ps < e->now_ps) v.t_ps = e->now_ps;
    if (v.t_ps < e->base_ps) v.t_ps = e->base_ps; /* only after a run stopped at the clock's end */
    int i = bucket_of(e, v.t_ps);
    orr_engine_bucket *b = &e->b[i];
    e->n++;
    if (i != 0 || b->n == e->head || b->ev[b->n - 1].seq < v.seq) {
        push(e, i, &v);
        return;
    }
    /* bucket 0, put back with a sequence number below its last event's: in place */
    push(e, 0, &v);
    size_t k = b->n - 1;
    while (k > e->head && b->ev[k - 1].seq > v.seq) {
        b->ev[k] = b->ev[k - 1];
        k--;
    }
    b->ev[k] = v;
}

/* Up to this many events, the lowest bucket is searched for the next event by orr_engine_peek. */
#define PEEK_SCAN 16

const orr_event *orr_engine_peek(const orr_engine *e)
{
    if (e->head < e->b[0].n) return &e->b[0].ev[e->head];
    int i = lowest_bucket(e);
    if (i == 0 || e->b[i].n > PEEK_SCAN) return NULL;
    const orr_event *best = &e->b[i].ev[0];
    for (size_t k = 1; k < e->b[i].n; k++) {
        const orr_event *x = &e->b[i].ev[k];
        if (x->t_ps < best->t_ps || (x->t_ps == best->t_ps && x->seq < best->seq)) best = x;
    }
    return best;
}
