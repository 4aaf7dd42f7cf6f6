/*
 * engine.h - the discrete-event engine: a clock in integer picoseconds and a queue of callbacks.
 *
 * Events at the same time run in the order they were scheduled (a sequence number breaks ties), so
 * a run is a total order and outputs are bit-identical for identical inputs. The queue is a 4-ary
 * heap in one growable array: no allocation per event once it has grown to its working size.
 */
#ifndef ORRERY_ENGINE_H
#define ORRERY_ENGINE_H

#include <stdint.h>
#include <stddef.h>

/* A callback: fn(ctx, arg) runs when the event fires. */
typedef void (*orr_event_fn)(void *ctx, uint64_t arg);

typedef struct orr_event {
    int64_t t_ps;
    uint64_t seq;
    orr_event_fn fn;
    void *ctx;
    uint64_t arg;
} orr_event;

typedef struct orr_engine {
    int64_t now_ps;
    uint64_t next_seq;
    uint64_t events_run;
    orr_event *heap;
    size_t n, cap;
    /* Optional: called every ORR_ENGINE_TICK_EVENTS events while running (progress lines); it must
     * not schedule events. NULL: none. */
    void (*tick_fn)(void *ctx, const struct orr_engine *e);
    void *tick_ctx;
    /* Set when an event was due after ORR_ENGINE_MAX_PS: the run stopped there (the caller reports it;
     * durations are capped far below it, so now + a duration never overflows the int64 clock). */
    int overflow;
} orr_engine;
#define ORR_ENGINE_MAX_PS (INT64_C(1) << 62) /* about 53 days of simulated time */
#define ORR_ENGINE_TICK_EVENTS 16384

void orr_engine_init(orr_engine *e);
void orr_engine_free(orr_engine *e);
/* Schedules fn(ctx,arg) at absolute time t_ps (>= now; earlier times are clamped to now). */
void orr_engine_at(orr_engine *e, int64_t t_ps, orr_event_fn fn, void *ctx, uint64_t arg);
/* Schedules fn(ctx,arg) after delay_ps from now. */
void orr_engine_after(orr_engine *e, int64_t delay_ps, orr_event_fn fn, void *ctx, uint64_t arg);
/* Runs until the queue is empty. Returns the number of events run. */
uint64_t orr_engine_run(orr_engine *e);
/* For a layer that pauses part of a simulation (the packet engine's Wormhole layer): removes the
 * queued events for which pred(pctx, ev) is true and appends them to *out (grown as needed, *nout
 * of *capout used), in no particular order. Returns how many it took. */
size_t orr_engine_take(orr_engine *e, int (*pred)(void *pctx, const orr_event *ev), void *pctx, orr_event **out,
                       size_t *nout, size_t *capout);
/* Queues an event taken earlier, keeping its sequence number (so events at the same time keep
 * their order); a time before now is clamped to now. */
void orr_engine_put(orr_engine *e, const orr_event *ev);
static inline int64_t orr_engine_now(const orr_engine *e) { return e->now_ps; }

#endif
