/* Tests of core: the hash map against a reference array, the engine's total order, buffers. */
#include "check.h"
#include "orrery/core.h"
#include "orrery/engine.h"

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

static void test_buf(void)
{
    orr_buf b = {0};
    for (int i = 0; i < 1000; i++) orr_buf_printf(&b, "%d,", i);
    CHECK(b.n > 3000);
    CHECK(strncmp(b.s, "0,1,2,", 6) == 0);
    orr_buf_free(&b);
}

int main(void)
{
    test_map();
    test_engine();
    test_buf();
    return check_done();
}
