/*
 * engine.h - the discrete-event engine: a clock in integer picoseconds and a queue of callbacks.
 *
 * Events at the same time run in the order they were scheduled (a sequence number breaks ties), so
 * a run is a total order and outputs are bit-identical for identical inputs. The queue is a radix
 * heap on the time (an event is never scheduled before the last one run, so every queued time is
 * at least the time of the last event taken): bucket 0 holds the events at that time in sequence
 * order, bucket i those whose time first differs from it in bit i - 1; when bucket 0 runs out, the
 * lowest non-empty bucket is spread over the buckets below its earliest time. An event moves at
 * most 64 times and usually once or twice, each move a sequential copy (src/core/engine.c). No
 * allocation per event once the buckets have grown to their working size.
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

#define ORR_ENGINE_BUCKETS 65

typedef struct orr_engine_bucket {
    orr_event *ev;
    size_t n, cap;
} orr_engine_bucket;

typedef struct orr_engine {
    int64_t now_ps;
    uint64_t next_seq;
    uint64_t events_run;
    size_t n;                /* events queued */
    int64_t base_ps;         /* the radix heap's base: every queued event is at or after it */
    orr_engine_bucket b[ORR_ENGINE_BUCKETS];
    size_t head;             /* bucket 0's events before head have run */
    uint64_t nonempty;       /* bit i - 1: bucket i (1..64) holds events */
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
/* The next event to run, if finding it takes no work (it is at the time of the last one run, or
 * the lowest bucket holds at most a few events), else NULL; for prefetching hints only. */
const orr_event *orr_engine_peek(const orr_engine *e);

#endif
