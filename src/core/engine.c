/*
 * engine.c - the discrete-event engine: a 4-ary min-heap on (time, sequence).
 *
 * A 4-ary heap halves the depth of a binary one and keeps a node's children in one cache line
 * (4 x 40-byte events in 160 bytes, close enough), which makes pops cheaper; ties on time are
 * broken by the insertion sequence number, giving a total, reproducible order.
 */
#include "orrery/engine.h"
#include "orrery/core.h"

#include <string.h>
#include <stdlib.h>

void orr_engine_init(orr_engine *e) { memset(e, 0, sizeof *e); }

void orr_engine_free(orr_engine *e)
{
    free(e->heap);
    memset(e, 0, sizeof *e);
}

static inline int ev_less(const orr_event *a, const orr_event *b)
{
    return a->t_ps < b->t_ps || (a->t_ps == b->t_ps && a->seq < b->seq);
}

void orr_engine_at(orr_engine *e, int64_t t_ps, orr_event_fn fn, void *ctx, uint64_t arg)
{
    orr_event ev = {t_ps, e->next_seq++, fn, ctx, arg};
    orr_engine_put(e, &ev);
}

void orr_engine_after(orr_engine *e, int64_t delay_ps, orr_event_fn fn, void *ctx, uint64_t arg)
{
    orr_engine_at(e, e->now_ps + (delay_ps > 0 ? delay_ps : 0), fn, ctx, arg);
}

/* Puts v at slot i or below it, moving smaller children up (the heap below i is valid). */
static void sift_down(orr_engine *e, size_t i, orr_event v)
{
    size_t n = e->n;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n) break;
        size_t best = c, end = c + 4 < n ? c + 4 : n;
        for (size_t j = c + 1; j < end; j++)
            if (ev_less(&e->heap[j], &e->heap[best])) best = j;
        if (!ev_less(&e->heap[best], &v)) break;
        e->heap[i] = e->heap[best];
        i = best;
    }
    e->heap[i] = v;
}

static orr_event pop(orr_engine *e)
{
    orr_event top = e->heap[0];
    orr_event last = e->heap[--e->n];
    if (e->n) sift_down(e, 0, last);
    return top;
}

uint64_t orr_engine_run(orr_engine *e)
{
    uint64_t start = e->events_run, ran = 0;
    while (e->n) {
        if (e->heap[0].t_ps > ORR_ENGINE_MAX_PS) { /* the clock's end: stop, the caller says so */
            e->overflow = 1;
            break;
        }
        orr_event ev = pop(e);
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

/* Restores the heap property of the whole array (Floyd: sift down from the last parent). */
static void heapify(orr_engine *e)
{
    for (size_t k = e->n / 4 + 1; k-- > 0;)
        if (k < e->n) sift_down(e, k, e->heap[k]);
}

size_t orr_engine_take(orr_engine *e, int (*pred)(void *pctx, const orr_event *ev), void *pctx, orr_event **out,
                       size_t *nout, size_t *capout)
{
    size_t kept = 0, taken = 0;
    for (size_t i = 0; i < e->n; i++) {
        if (pred(pctx, &e->heap[i])) {
            if (*nout == *capout) orr_grow((void **)out, capout, *nout + 1, sizeof **out);
            (*out)[(*nout)++] = e->heap[i];
            taken++;
        } else {
            e->heap[kept++] = e->heap[i];
        }
    }
    e->n = kept;
    if (taken) heapify(e);
    return taken;
}

void orr_engine_put(orr_engine *e, const orr_event *ev)
{
    orr_event v = *ev;
    if (v.t_ps < e->now_ps) v.t_ps = e->now_ps;
    if (e->n == e->cap) orr_grow((void **)&e->heap, &e->cap, e->n + 1, sizeof *e->heap);
    size_t i = e->n++;
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (!ev_less(&v, &e->heap[p])) break;
        e->heap[i] = e->heap[p];
        i = p;
    }
    e->heap[i] = v;
}
