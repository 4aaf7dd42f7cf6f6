/* Tests of core: the hash map against a reference array, the engine's total order, buffers. */
#include "check.h"
#include "orrery/core.h"
#include "orrery/engine.h"
#include "orrery/progress.h"

#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void test_map(void)
{
    enum { N = 5000 };
    static uint32_t ref[N];
    static int present[N];
    orr_map m = {0};
    uint64_t x = 12345;
    for (int step = 0; step < 50000; step++) {
        x = orr_hash64(x);
        int k = (int)(x % N);
        if ((x >> 20) % 3 == 0) {
            int was = orr_map_del(&m, (uint64_t)k * 7919);
            CHECK_EQ_I64(was, present[k]);
            present[k] = 0;
        } else {
            ref[k] = (uint32_t)(x >> 32);
            present[k] = 1;
            orr_map_put(&m, (uint64_t)k * 7919, ref[k]);
        }
    }
    size_t count = 0, bad = 0;
    for (int k = 0; k < N; k++) {
        uint32_t *v = orr_map_get(&m, (uint64_t)k * 7919);
        if (present[k]) {
            count++;
            if (!v || *v != ref[k]) bad++;
        } else if (v) {
            bad++;
        }
    }
    CHECK_EQ_I64(bad, 0);
    CHECK_EQ_I64(m.n, count);
    orr_map_free(&m);
}

static int64_t order_log[64];
static int order_n;
static void rec(void *ctx, uint64_t arg)
{
    orr_engine *e = ctx;
    if (order_n < 64) order_log[order_n++] = (int64_t)arg;
    if (arg == 2) orr_engine_after(e, 0, rec, e, 99); /* same time: runs after those already queued */
}

static int64_t mono_last = -1;
static int mono_ok = 1;
static void mono(void *ctx, uint64_t arg)
{
    orr_engine *e = ctx;
    if (e->now_ps < mono_last) mono_ok = 0;
    mono_last = e->now_ps;
    (void)arg;
}

static void test_engine(void)
{
    orr_engine e;
    orr_engine_init(&e);
    orr_engine_at(&e, 30, rec, &e, 3);
    orr_engine_at(&e, 10, rec, &e, 1);
    orr_engine_at(&e, 10, rec, &e, 2);
    orr_engine_at(&e, 10, rec, &e, 4);
    orr_engine_at(&e, 5, rec, &e, 0);
    uint64_t n = orr_engine_run(&e);
    CHECK_EQ_I64(n, 6);
    int64_t want[] = {0, 1, 2, 4, 99, 3};
    for (int i = 0; i < 6; i++) CHECK_EQ_I64(order_log[i], want[i]);
    CHECK_EQ_I64(e.now_ps, 30);
    orr_engine_free(&e);

    /* Heap order under many random insertions. */
    orr_engine_init(&e);
    order_n = 0;
    uint64_t x = 7;
    static int64_t times[20000];
    for (int i = 0; i < 20000; i++) {
        x = orr_hash64(x);
        times[i] = (int64_t)(x % 1000);
        orr_engine_at(&e, times[i], mono, &e, 0);
    }
    CHECK_EQ_I64(orr_engine_run(&e), 20000);
    CHECK(mono_ok);
    int64_t tmax = 0;
    for (int i = 0; i < 20000; i++) tmax = times[i] > tmax ? times[i] : tmax;
    CHECK_EQ_I64(e.now_ps, tmax);
    orr_engine_free(&e);
}

/* The radix heap against its definition: handlers schedule events at offsets from 0 to 2^40 ps
 * (each event's arg is its sequence number), now and then take every event of one residue and put
 * them back later with their sequence numbers; every event runs once, in strictly increasing
 * (time, sequence), and orr_engine_peek, when it answers, names the event that runs next. */
static struct {
    int64_t last_t;
    uint64_t last_seq, ran, scheduled, rng;
    int bad_order, bad_peek, have_peek;
    int64_t peek_t;
    uint64_t peek_seq;
    orr_event *parked;
    size_t nparked, capparked;
} ro;

static int residue_3(void *ctx, const orr_event *ev)
{
    (void)ctx;
    return ev->arg % 3 == 0;
}

static void ro_event(void *ctx, uint64_t arg)
{
    orr_engine *e = ctx;
    if (ro.ran && (e->now_ps < ro.last_t || (e->now_ps == ro.last_t && arg <= ro.last_seq))) ro.bad_order++;
    if (ro.have_peek && (ro.peek_t != e->now_ps || ro.peek_seq != arg)) ro.bad_peek++;
    ro.last_t = e->now_ps;
    ro.last_seq = arg;
    ro.ran++;
    for (int k = 0; k < 2 && ro.scheduled < 60000; k++) {
        ro.rng = orr_hash64(ro.rng);
        int64_t off = (ro.rng & 3) == 0 ? 0 : (int64_t)((ro.rng >> 8) % (UINT64_C(1) << ((ro.rng >> 2) % 41)));
        orr_engine_at(e, e->now_ps + off, ro_event, e, e->next_seq);
        ro.scheduled++;
    }
    if (ro.ran % 997 == 0) {
        ro.nparked = 0;
        orr_engine_take(e, residue_3, NULL, &ro.parked, &ro.nparked, &ro.capparked);
        for (size_t i = 0; i < ro.nparked; i++) {
            ro.parked[i].t_ps += (int64_t)(i % 4) * 1000; /* some later, some at their time */
            orr_engine_put(e, &ro.parked[i]);
        }
    }
    const orr_event *p = orr_engine_peek(e);
    ro.have_peek = p != NULL;
    if (p) {
        ro.peek_t = p->t_ps;
        ro.peek_seq = p->seq;
    }
}

static void test_engine_radix(void)
{
    orr_engine e;
    orr_engine_init(&e);
    memset(&ro, 0, sizeof ro);
    ro.rng = 11;
    for (int i = 0; i < 64; i++) {
        orr_engine_at(&e, (int64_t)i * 37 % 101, ro_event, &e, e.next_seq);
        ro.scheduled++;
    }
    uint64_t n = orr_engine_run(&e);
    CHECK_EQ_I64(n, ro.scheduled);
    CHECK_EQ_I64(ro.ran, ro.scheduled);
    CHECK_EQ_I64(ro.bad_order, 0);
    CHECK_EQ_I64(ro.bad_peek, 0);
    CHECK(e.n == 0 && orr_engine_peek(&e) == NULL);
    free(ro.parked);
    orr_engine_free(&e);
}

/* Many events at one time put back behind later ones (a Wormhole resume): bucket 0 is then far
 * from sequence order, and the heap sort that takes over still runs them in order. */
static uint64_t back_last, back_n;
static int back_bad;
static void back_event(void *ctx, uint64_t arg)
{
    (void)ctx;
    if (back_n++ && arg <= back_last) back_bad++;
    back_last = arg;
}

static int first_half(void *ctx, const orr_event *ev)
{
    (void)ctx;
    return ev->arg < 500;
}

static void test_engine_put_back_many(void)
{
    orr_engine e;
    orr_engine_init(&e);
    for (uint64_t i = 0; i < 1000; i++) orr_engine_at(&e, 1000, back_event, &e, e.next_seq);
    orr_event *taken = NULL;
    size_t n = 0, cap = 0;
    CHECK_EQ_I64(orr_engine_take(&e, first_half, NULL, &taken, &n, &cap), 500);
    for (size_t i = n; i-- > 0;) orr_engine_put(&e, &taken[i]); /* in reverse, behind the others */
    CHECK_EQ_I64(orr_engine_run(&e), 1000);
    CHECK_EQ_I64(back_n, 1000);
    CHECK_EQ_I64(back_bad, 0);
    free(taken);
    orr_engine_free(&e);
}

static int odd_arg(void *ctx, const orr_event *ev)
{
    (void)ctx;
    return ev->arg % 2 == 1;
}

/* Taking events off the queue and putting them back later (the Wormhole layer's pause): the rest
 * runs in order without them; put back 100 ps later, they run in their old relative order, ties
 * with the others broken by their original sequence. */
static void test_engine_take_put(void)
{
    orr_engine e;
    orr_engine_init(&e);
    order_n = 0;
    orr_engine_at(&e, 10, rec, &e, 1);
    orr_engine_at(&e, 10, rec, &e, 4);
    orr_engine_at(&e, 20, rec, &e, 3);
    orr_engine_at(&e, 20, rec, &e, 6);
    orr_engine_at(&e, 5, rec, &e, 5);
    orr_engine_at(&e, 110, rec, &e, 8);
    orr_event *taken = NULL;
    size_t n = 0, cap = 0;
    CHECK_EQ_I64(orr_engine_take(&e, odd_arg, NULL, &taken, &n, &cap), 3);
    CHECK_EQ_I64(n, 3);
    for (size_t i = 0; i < n; i++) {
        taken[i].t_ps += 100;
        orr_engine_put(&e, &taken[i]);
    }
    CHECK_EQ_I64(orr_engine_run(&e), 6);
    int64_t want[] = {4, 6, 5, 1, 8, 3}; /* 4@10 6@20 5@105 1@110 8@110 (seq after 1) 3@120 */
    for (int i = 0; i < 6; i++) CHECK_EQ_I64(order_log[i], want[i]);
    free(taken);
    orr_engine_free(&e);
}

typedef struct pooled {
    uint64_t payload;
    uint32_t link;
} pooled;

/* The free-list pool: new elements zeroed and appended, given-back ones reused last-in first-out. */
static void test_pool(void)
{
    pooled *items = NULL;
    size_t n = 0, cap = 0;
    uint32_t free_head = ORR_POOL_NONE;
    for (uint32_t i = 0; i < 100; i++) {
        uint32_t id = orr_pool_take((void **)&items, &n, &cap, sizeof *items, offsetof(pooled, link), &free_head);
        CHECK_EQ_I64(id, i);
        CHECK(items[id].payload == 0 && items[id].link == 0);
        items[id].payload = 1000 + i;
    }
    orr_pool_give(items, sizeof *items, offsetof(pooled, link), &free_head, 7);
    orr_pool_give(items, sizeof *items, offsetof(pooled, link), &free_head, 42);
    CHECK_EQ_I64(orr_pool_take((void **)&items, &n, &cap, sizeof *items, offsetof(pooled, link), &free_head), 42);
    CHECK_EQ_I64(orr_pool_take((void **)&items, &n, &cap, sizeof *items, offsetof(pooled, link), &free_head), 7);
    CHECK_EQ_I64(free_head, ORR_POOL_NONE);
    CHECK_EQ_I64(orr_pool_take((void **)&items, &n, &cap, sizeof *items, offsetof(pooled, link), &free_head), 100);
    CHECK_EQ_I64(n, 101);
    CHECK_EQ_I64(items[99].payload, 1099);
    free(items);
}

static void test_buf(void)
{
    orr_buf b = {0};
    for (int i = 0; i < 1000; i++) orr_buf_printf(&b, "%d,", i);
    CHECK(b.n > 3000);
    CHECK(strncmp(b.s, "0,1,2,", 6) == 0);
    orr_buf_free(&b);
}

/* The engine's tick: every ORR_ENGINE_TICK_EVENTS events, with events_run up to date; none without
 * a tick function; the total count is the same either way. */
static uint64_t ticks, tick_events;
static void count_tick(void *ctx, const orr_engine *e)
{
    (void)ctx;
    ticks++;
    tick_events = e->events_run;
}
static void chain_ev(void *ctx, uint64_t left)
{
    if (left) orr_engine_after(ctx, 1, chain_ev, ctx, left - 1);
}

static void test_engine_tick(void)
{
    orr_engine e;
    orr_engine_init(&e);
    e.tick_fn = count_tick;
    orr_engine_at(&e, 0, chain_ev, &e, 3 * ORR_ENGINE_TICK_EVENTS + 5);
    CHECK_EQ_I64(orr_engine_run(&e), 3 * ORR_ENGINE_TICK_EVENTS + 6); /* the run's count, ticks or not */
    CHECK_EQ_I64(ticks, 3);
    CHECK_EQ_I64(tick_events, 3 * ORR_ENGINE_TICK_EVENTS);
    CHECK_EQ_I64(e.events_run, 3 * ORR_ENGINE_TICK_EVENTS + 6);
    orr_engine_free(&e);
}

/* The progress line: nothing in the first second or when disabled; then one line with simulated
 * time, work done, events and ETA; erased at the end. */
static void test_progress(void)
{
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    CHECK(f != NULL);
    if (!f) return;
    orr_progress p, off;
    orr_progress_init(&p, f, 1, "netsim");
    orr_progress_init(&off, f, 0, "netsim");
    orr_progress_tick(&p, 1000000000000, 5000000, 10, 40, "flows"); /* under a second: quiet */
    orr_progress_tick(&off, 1000000000000, 5000000, 10, 40, "flows");
    orr_progress_tick(NULL, 0, 0, 0, 0, NULL);
    fflush(f);
    CHECK_EQ_I64(strlen(buf), 0);
    p.start_s -= 2.0; /* as if it had run for two seconds */
    orr_progress_tick(&p, 1500000000000, 5000000, 10, 40, "flows");
    fflush(f);
    CHECK_MSG(strstr(buf, "netsim: simulated 1.500000 s, 10/40 flows, 5.0 M events") != NULL, "got [%s]", buf);
    CHECK_MSG(strstr(buf, "ETA 6 s") != NULL, "got [%s]", buf); /* 2 s for 10 of 40: 6 s to go */
    orr_progress_done(&p);
    fflush(f);
    CHECK(buf[strlen(buf) - 1] == 'K' && p.shown == 0);
    fclose(f);
}

int main(void)
{
    test_map();
    test_engine();
    test_engine_take_put();
    test_engine_radix();
    test_engine_put_back_many();
    test_pool();
    test_buf();
    test_engine_tick();
    test_progress();
    return check_done();
}
