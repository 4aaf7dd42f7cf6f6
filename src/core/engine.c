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
    if (t_ps < e->now_ps) t_ps = e->now_ps;
    if (e->n == e->cap) orr_grow((void **)&e->heap, &e->cap, e->n + 1, sizeof *e->heap);
    orr_event ev = {t_ps, e->next_seq++, fn, ctx, arg};
    size_t i = e->n++;
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (!ev_less(&ev, &e->heap[p])) break;
        e->heap[i] = e->heap[p];
        i = p;
    }
    e->heap[i] = ev;
}

void orr_engine_after(orr_engine *e, int64_t delay_ps, orr_event_fn fn, void *ctx, uint64_t arg)
{
    orr_engine_at(e, e->now_ps + (delay_ps > 0 ? delay_ps : 0), fn, ctx, arg);
}

static orr_event pop(orr_engine *e)
{
    orr_event top = e->heap[0];
    orr_event last = e->heap[--e->n];
    size_t i = 0, n = e->n;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n) break;
        size_t best = c, end = c + 4 < n ? c + 4 : n;
        for (size_t j = c + 1; j < end; j++)
            if (ev_less(&e->heap[j], &e->heap[best])) best = j;
        if (!ev_less(&e->heap[best], &last)) break;
        e->heap[i] = e->heap[best];
        i = best;
    }
    if (n) e->heap[i] = last;
    return top;
}

uint64_t orr_engine_run(orr_engine *e)
{
    uint64_t start = e->events_run, ran = 0;
    while (e->n) {
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
