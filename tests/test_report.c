/*
 * Tests of the reports (src/report/): the breakdown sweep against hand-computed timelines and a
 * brute-force reference, the weighted mean, the critical path across ranks, the headline numbers,
 * the text summary, the JSON report (keys, determinism, escaping, well-formedness) and the trace.
 *
 * Workloads are built by hand and the executor's output (orr_exec_result) is filled by hand, so
 * these tests pin the report's semantics independently of the executor.
 */
#include "check.h"
#include "orrery/report.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- building workloads and runs by hand ---- */

static orr_op mk_op(orr_op_kind kind, unsigned stream, orr_comm_role role)
{
    orr_op op;
    memset(&op, 0, sizeof op);
    op.kind = (uint8_t)kind;
    op.stream = (uint8_t)stream;
    op.role = (uint8_t)role;
    op.layer = ORR_NO_LAYER;
    op.mb = ORR_NO_MB;
    return op;
}

/* Appends a collective of group `group` (role taken from the group). */
static void push_coll(orr_workload *w, uint32_t rank, unsigned stream, uint32_t group)
{
    orr_op op = mk_op(ORR_OP_COLL, stream, (orr_comm_role)w->groups[group].role);
    op.cls = ORR_COLL_ALLREDUCE;
    op.a = group;
    op.bytes = 1024;
    op.name = orr_workload_name(w, "all_reduce");
    orr_rank_push(&w->ranks[rank], &op);
}

static void push_p2p(orr_workload *w, uint32_t rank, orr_op_kind kind, unsigned stream,
                     uint32_t peer, orr_comm_role role)
{
    orr_op op = mk_op(kind, stream, role);
    op.a = peer;
    op.bytes = 4096;
    op.name = orr_workload_name(w, kind == ORR_OP_SEND ? "send_fwd" : "recv_fwd");
    orr_rank_push(&w->ranks[rank], &op);
}

static void push_simple(orr_workload *w, uint32_t rank, orr_op_kind kind, unsigned stream,
                        const char *name)
{
    orr_op op = mk_op(kind, stream, ORR_ROLE_NONE);
    op.cls = ORR_CLS_GEMM;
    op.flops = 1e9;
    op.bytes = 1u << 20;
    op.name = orr_workload_name(w, name);
    orr_rank_push(&w->ranks[rank], &op);
}

static uint32_t group1(orr_workload *w, orr_comm_role role, uint32_t member, const char *label)
{
    return orr_workload_add_group(w, role, &member, 1, label);
}

/* An exec result with room for every op of w; every op starts out "never ran". */
static orr_exec_result *exec_new(const orr_workload *w)
{
    orr_exec_result *x = calloc(1, sizeof *x);
    x->nranks = w->nranks;
    x->ranks = calloc(w->nranks ? w->nranks : 1, sizeof *x->ranks);
    for (size_t r = 0; r < w->nranks; r++) {
        if (!w->ranks[r].nops) continue;
        x->ranks[r].t = calloc(w->ranks[r].nops, sizeof(orr_op_time));
        for (size_t i = 0; i < w->ranks[r].nops; i++) x->ranks[r].t[i].end_ps = -1;
    }
    return x;
}

static void set_time(orr_exec_result *x, uint32_t r, uint32_t i, int64_t ready, int64_t start,
                     int64_t end)
{
    orr_op_time *t = &x->ranks[r].t[i];
    t->issue_ps = ready;
    t->ready_ps = ready;
    t->start_ps = start;
    t->end_ps = end;
    if (end > x->ranks[r].end_ps) x->ranks[r].end_ps = end;
}

static void set_dep(orr_exec_result *x, uint32_t r, uint32_t i, orr_dep_kind kind, uint32_t dep_rank,
                    uint32_t dep_op)
{
    x->ranks[r].t[i].dep_kind = (uint8_t)kind;
    x->ranks[r].t[i].dep_rank = dep_rank;
    x->ranks[r].t[i].dep_op = dep_op;
}

static void exec_free(orr_exec_result *x)
{
    for (size_t r = 0; r < x->nranks; r++) free(x->ranks[r].t);
    free(x->ranks);
    free(x);
}

static int64_t parts_sum(const orr_breakdown *b)
{
    int64_t s = b->compute_ps + b->bubble_ps + b->wait_ps + b->idle_ps;
    for (int r = 0; r < ORR_ROLE_COUNT; r++) s += b->comm_ps[r];
    return s;
}

static int64_t cp_sum(const orr_critical_path *cp)
{
    int64_t s = 0;
    for (int k = 0; k < ORR_CP_KIND_COUNT; k++) s += cp->ps[k];
    return s;
}

/* ---- a minimal JSON validator (RFC 8259 grammar), for the report and the trace ---- */

static const char *js_value(const char *p, int depth);

static const char *js_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static const char *js_string(const char *p)
{
    if (*p++ != '"') return NULL;
    while (*p != '"') {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return NULL;
                p += 5;
                continue;
            }
            if (!*p || !strchr("\"\\/bfnrt", *p)) return NULL;
        }
        p++;
    }
    return p + 1;
}

static const char *js_number(const char *p)
{
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return NULL;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return NULL;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return NULL;
        while (*p >= '0' && *p <= '9') p++;
    }
    return p;
}

/* Object or array, according to open ('{' or '['). */
static const char *js_container(const char *p, int depth, char open)
{
    char close = open == '{' ? '}' : ']';
    p = js_ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
        if (open == '{') {
            p = js_string(js_ws(p));
            if (!p) return NULL;
            p = js_ws(p);
            if (*p++ != ':') return NULL;
        }
        p = js_value(p, depth + 1);
        if (!p) return NULL;
        p = js_ws(p);
        if (*p == close) return p + 1;
        if (*p++ != ',') return NULL;
    }
}

static const char *js_value(const char *p, int depth)
{
    if (depth > 64) return NULL;
    p = js_ws(p);
    if (*p == '{' || *p == '[') return js_container(p, depth, *p);
    if (*p == '"') return js_string(p);
    if (!strncmp(p, "true", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    if (!strncmp(p, "null", 4)) return p + 4;
    return js_number(p);
}

static int json_valid(const char *s)
{
    const char *end = js_value(s, 0);
    return end && *js_ws(end) == 0;
}

/* ---- the breakdown ---- */

/*
 * Rank 0 (weight 1), times in ps:
 *   op0 kernel   s0 [0,30)
 *   op1 TP coll  s1 ready 10, run [20,40)   wait under compute; [20,30) overlapped, [30,40) TP
 *   op2 DP coll  s1 ready 40, run [50,60)   [40,45) wait
 *   op3 PP send  s2 ready 45, run [55,70)   [45,50) bubble beats wait; [50,55) DP beats bubble;
 *                                           [55,60) PP beats DP; [60,70) PP
 *   idle [70,80)
 *   op4 kernel   s0 [80,90)
 *   op5 host     [85,95)                    host time: not GPU time
 *   idle [90,100)
 * Rank 1 (weight 3): op0 PP recv ready 0, run [55,70): bubble 55, PP 15, idle 30.
 */
static orr_workload *breakdown_workload(orr_exec_result **xout)
{
    orr_workload *w = orr_workload_new(8, 8);
    orr_workload_add_rank(w, 0, 1, "pp0");
    orr_workload_add_rank(w, 1, 3, "pp1");
    uint32_t tp = group1(w, ORR_ROLE_TP, 0, "tp");
    uint32_t dp = group1(w, ORR_ROLE_DP, 0, "dp");
    push_simple(w, 0, ORR_OP_KERNEL, 0, "qkv_gemm");
    push_coll(w, 0, 1, tp);
    push_coll(w, 0, 1, dp);
    push_p2p(w, 0, ORR_OP_SEND, 2, 1, ORR_ROLE_PP);
    push_simple(w, 0, ORR_OP_KERNEL, 0, "mlp_gemm");
    push_simple(w, 0, ORR_OP_HOST, 0, "python");
    push_p2p(w, 1, ORR_OP_RECV, 0, 0, ORR_ROLE_PP);
    orr_err err;
    CHECK(orr_workload_finalize(w, &err) == 0);

    orr_exec_result *x = exec_new(w);
    set_time(x, 0, 0, 0, 0, 30);
    set_time(x, 0, 1, 10, 20, 40);
    set_time(x, 0, 2, 40, 50, 60);
    set_time(x, 0, 3, 45, 55, 70);
    set_time(x, 0, 4, 80, 80, 90);
    set_time(x, 0, 5, 85, 85, 95);
    set_time(x, 1, 0, 0, 55, 70);
    x->makespan_ps = 100;
    x->last_rank = 0;
    x->last_op = 4;
    set_dep(x, 0, 4, ORR_DEP_STREAM, 0, 0);
    x->events = 42;
    *xout = x;
    return w;
}

static void test_breakdown(void)
{
    orr_exec_result *x;
    orr_workload *w = breakdown_workload(&x);
    orr_result r;
    orr_err err;
    CHECK(orr_result_build(&r, w, x, NULL, &err) == 0);
    CHECK_EQ_I64(r.nranks, 2);

    const orr_breakdown *b = &r.ranks[0];
    CHECK_EQ_I64(b->total_ps, 100);
    CHECK_EQ_I64(b->compute_ps, 40);
    CHECK_EQ_I64(b->overlapped_comm_ps, 10);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_TP], 10);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_DP], 5);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_PP], 15);
    CHECK_EQ_I64(b->bubble_ps, 5);
    CHECK_EQ_I64(b->wait_ps, 5);
    CHECK_EQ_I64(b->idle_ps, 20);
    CHECK_EQ_I64(parts_sum(b), 100);

    b = &r.ranks[1];
    CHECK_EQ_I64(b->bubble_ps, 55);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_PP], 15);
    CHECK_EQ_I64(b->idle_ps, 30);
    CHECK_EQ_I64(parts_sum(b), 100);

    /* Weighted mean (1 x rank 0 + 3 x rank 1) / 4, rounded half away from zero: compute 10,
     * TP 2.5 -> 3, DP 1.25 -> 1, PP 15, bubble 42.5 -> 43, wait 1.25 -> 1, idle 27.5 -> 28: that
     * is 101, so the residual -1 goes to the largest part (bubble). */
    b = &r.mean;
    CHECK_EQ_I64(b->compute_ps, 10);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_TP], 3);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_DP], 1);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_PP], 15);
    CHECK_EQ_I64(b->bubble_ps, 42);
    CHECK_EQ_I64(b->wait_ps, 1);
    CHECK_EQ_I64(b->idle_ps, 28);
    CHECK_EQ_I64(b->overlapped_comm_ps, 3);
    CHECK_EQ_I64(parts_sum(b), 100);
    CHECK_EQ_I64(b->total_ps, 100);
    CHECK_EQ_I64(r.events, 42);
    CHECK_EQ_I64(r.unique_ranks, 2);
    CHECK_EQ_I64(r.world_size, 8);

    orr_result_free(&r);
    exec_free(x);
    orr_workload_free(w);
}

/* Every communication role active at once, each ending 10 ps after the one above it in priority,
 * then a bubble, then a wait: each role gets exactly 10 ps. Compute over [0,5) hides TP. */
static void test_priority(void)
{
    orr_workload *w = orr_workload_new(2, 8);
    orr_workload_add_rank(w, 0, 1, "r0");
    orr_workload_add_rank(w, 1, 1, "r1");
    static const orr_comm_role order[] = {ORR_ROLE_TP, ORR_ROLE_CP, ORR_ROLE_EP, ORR_ROLE_PP,
                                          ORR_ROLE_DP, ORR_ROLE_EMB, ORR_ROLE_OTHER, ORR_ROLE_NONE};
    enum { NROLES = sizeof order / sizeof order[0] };
    for (int k = 0; k < NROLES; k++) push_coll(w, 0, (unsigned)k, group1(w, order[k], 0, "g"));
    push_p2p(w, 0, ORR_OP_RECV, NROLES, 1, ORR_ROLE_PP);          /* bubble [0,90) */
    push_coll(w, 0, NROLES + 1, group1(w, ORR_ROLE_DP, 0, "dp2")); /* wait [0,100) */
    push_simple(w, 0, ORR_OP_KERNEL, NROLES + 2, "k");             /* compute [0,5) */
    orr_err err;
    CHECK(orr_workload_finalize(w, &err) == 0);

    orr_exec_result *x = exec_new(w);
    for (int k = 0; k < NROLES; k++) set_time(x, 0, (uint32_t)k, 0, 0, 10 * (k + 1));
    set_time(x, 0, NROLES, 0, 90, 90);
    set_time(x, 0, NROLES + 1, 0, 100, 100);
    set_time(x, 0, NROLES + 2, 0, 0, 5);
    x->makespan_ps = 110;
    x->last_op = NROLES + 1;

    orr_result r;
    CHECK(orr_result_build(&r, w, x, NULL, &err) == 0);
    const orr_breakdown *b = &r.ranks[0];
    CHECK_EQ_I64(b->compute_ps, 5);
    CHECK_EQ_I64(b->overlapped_comm_ps, 5);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_TP], 5);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_CP], 10);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_EP], 10);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_PP], 10);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_DP], 10);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_EMB], 10);
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_OTHER], 20); /* role NONE counts as other */
    CHECK_EQ_I64(b->comm_ps[ORR_ROLE_NONE], 0);
    CHECK_EQ_I64(b->bubble_ps, 10);
    CHECK_EQ_I64(b->wait_ps, 10);
    CHECK_EQ_I64(b->idle_ps, 10);
    CHECK_EQ_I64(parts_sum(b), 110);
    CHECK_EQ_I64(r.ranks[1].idle_ps, 110); /* a rank without ops is idle throughout */
    orr_result_free(&r);
    exec_free(x);
    orr_workload_free(w);
}

/* Random timelines against a brute-force reference that classifies every picosecond. */
static void test_breakdown_random(void)
{
    enum { T = 3000, NOPS = 400 };
    static const orr_comm_role roles[] = {ORR_ROLE_TP, ORR_ROLE_PP, ORR_ROLE_DP, ORR_ROLE_EMB,
                                          ORR_ROLE_CP, ORR_ROLE_EP, ORR_ROLE_OTHER};
    uint64_t seed = 99;
    for (int trial = 0; trial < 20; trial++) {
        orr_workload *w = orr_workload_new(2, 8);
        orr_workload_add_rank(w, 0, 1, "r0");
        orr_workload_add_rank(w, 1, 1, "r1");
        uint32_t groups[7];
        for (int k = 0; k < 7; k++) groups[k] = group1(w, roles[k], 0, "g");
        int64_t ready[NOPS], start[NOPS], end[NOPS];
        for (int i = 0; i < NOPS; i++) {
            seed = orr_hash64(seed);
            int what = (int)(seed % 10);
            if (what < 3) push_simple(w, 0, ORR_OP_KERNEL, 0, "k");
            else if (what < 4) push_simple(w, 0, ORR_OP_HOST, 0, "h");
            else if (what < 6) push_p2p(w, 0, (seed >> 8) & 1 ? ORR_OP_SEND : ORR_OP_RECV, 1, 1, ORR_ROLE_PP);
            else push_coll(w, 0, 2, groups[(seed >> 12) % 7]);
            seed = orr_hash64(seed);
            ready[i] = (int64_t)(seed % T) - 50; /* some begin before 0 or end after T: clipped */
            start[i] = ready[i] + (int64_t)((seed >> 20) % 80);
            end[i] = start[i] + (int64_t)((seed >> 40) % 120);
        }
        orr_err err;
        CHECK(orr_workload_finalize(w, &err) == 0);
        orr_exec_result *x = exec_new(w);
        for (int i = 0; i < NOPS; i++) set_time(x, 0, (uint32_t)i, ready[i], start[i], end[i]);
        x->ranks[0].t[7].end_ps = -1; /* an op that never ran is ignored */
        x->makespan_ps = T;

        /* reference: per ps, the best state (0 compute, 1.. comm by priority, 8 bubble, 9 wait) */
        orr_breakdown ref;
        memset(&ref, 0, sizeof ref);
        static const int prio_role[] = {ORR_ROLE_TP, ORR_ROLE_CP, ORR_ROLE_EP, ORR_ROLE_PP,
                                        ORR_ROLE_DP, ORR_ROLE_EMB, ORR_ROLE_OTHER};
        for (int64_t ps = 0; ps < T; ps++) {
            int best = 10, comm_active = 0;
            for (int i = 0; i < NOPS; i++) {
                const orr_op *op = &w->ranks[0].ops[i];
                const orr_op_time *t = &x->ranks[0].t[i];
                if (t->end_ps < 0) continue;
                int st = 10;
                if (op->kind == ORR_OP_KERNEL && ps >= t->start_ps && ps < t->end_ps) st = 0;
                if (op->kind == ORR_OP_COLL || op->kind == ORR_OP_SEND || op->kind == ORR_OP_RECV) {
                    if (ps >= t->start_ps && ps < t->end_ps) {
                        comm_active = 1;
                        for (int k = 0; k < 7; k++)
                            if (prio_role[k] == op->role) st = 1 + k;
                    } else if (ps >= t->ready_ps && ps < t->start_ps) {
                        int cross_stage = op->role == ORR_ROLE_EMB || op->role == ORR_ROLE_OTHER;
                        st = op->kind == ORR_OP_COLL && !cross_stage ? 9 : 8;
                    }
                }
                if (st < best) best = st;
            }
            if (best == 0) {
                ref.compute_ps++;
                if (comm_active) ref.overlapped_comm_ps++;
            } else if (best <= 7) ref.comm_ps[prio_role[best - 1]]++;
            else if (best == 8) ref.bubble_ps++;
            else if (best == 9) ref.wait_ps++;
            else ref.idle_ps++;
        }
        orr_result r;
        CHECK(orr_result_build(&r, w, x, NULL, &err) == 0);
        const orr_breakdown *b = &r.ranks[0];
        int same = b->compute_ps == ref.compute_ps && b->bubble_ps == ref.bubble_ps &&
                   b->wait_ps == ref.wait_ps && b->idle_ps == ref.idle_ps &&
                   b->overlapped_comm_ps == ref.overlapped_comm_ps;
        for (int k = 0; k < ORR_ROLE_COUNT; k++) same = same && b->comm_ps[k] == ref.comm_ps[k];
        CHECK_MSG(same, "trial %d: compute %lld/%lld bubble %lld/%lld wait %lld/%lld idle %lld/%lld",
                  trial, (long long)b->compute_ps, (long long)ref.compute_ps,
                  (long long)b->bubble_ps, (long long)ref.bubble_ps, (long long)b->wait_ps,
                  (long long)ref.wait_ps, (long long)b->idle_ps, (long long)ref.idle_ps);
        CHECK_EQ_I64(parts_sum(b), T);
        orr_result_free(&r);
        exec_free(x);
        orr_workload_free(w);
    }
}

/* ---- critical path ---- */

/*
 * Rank A (0): op0 kernel [0,40); op1 send to B, run [40,60), dep stream op0.
 * Rank B (1): op0 host [0,5); op1 kernel [10,20) dep issue B0 (launch gap 5);
 *             op2 recv from A, ready 20, run [40,60), dep peer A1 (the partner that came last);
 *             op3 kernel [62,90) dep stream B2 (gap 2: launch latency);
 *             op4 memcpy [90,100) dep stream B3; the last op.
 * Path back from B4: memcpy 10, compute 28 (+ host 2), PP 20, hop to A1 (nothing left of its
 * [40,60) below the cursor), A0 compute 40. Total 100 = the iteration.
 */
static void test_critical_path(void)
{
    orr_workload *w = orr_workload_new(2, 8);
    orr_workload_add_rank(w, 0, 1, "A");
    orr_workload_add_rank(w, 1, 1, "B");
    push_simple(w, 0, ORR_OP_KERNEL, 0, "k");
    push_p2p(w, 0, ORR_OP_SEND, 0, 1, ORR_ROLE_PP);
    push_simple(w, 1, ORR_OP_HOST, 0, "h");
    push_simple(w, 1, ORR_OP_KERNEL, 0, "k");
    push_p2p(w, 1, ORR_OP_RECV, 0, 0, ORR_ROLE_PP);
    push_simple(w, 1, ORR_OP_KERNEL, 0, "k");
    push_simple(w, 1, ORR_OP_MEMCPY, 0, "copy");
    orr_err err;
    CHECK(orr_workload_finalize(w, &err) == 0);
    orr_exec_result *x = exec_new(w);
    set_time(x, 0, 0, 0, 0, 40);
    set_time(x, 0, 1, 40, 40, 60);
    set_dep(x, 0, 1, ORR_DEP_STREAM, 0, 0);
    set_time(x, 1, 0, 0, 0, 5);
    set_time(x, 1, 1, 10, 10, 20);
    set_dep(x, 1, 1, ORR_DEP_ISSUE, 1, 0);
    set_time(x, 1, 2, 20, 40, 60);
    set_dep(x, 1, 2, ORR_DEP_PEER, 0, 1);
    set_time(x, 1, 3, 62, 62, 90);
    set_dep(x, 1, 3, ORR_DEP_STREAM, 1, 2);
    set_time(x, 1, 4, 90, 90, 100);
    set_dep(x, 1, 4, ORR_DEP_STREAM, 1, 3);
    x->makespan_ps = 100;
    x->last_rank = 1;
    x->last_op = 4;

    orr_result r;
    CHECK(orr_result_build(&r, w, x, NULL, &err) == 0);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_MEMCPY], 10);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_COMPUTE], 68);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_COMM_PP], 20);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_HOST], 2);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_COMM_TP], 0);
    CHECK_EQ_I64(r.cp.nops, 5);
    CHECK_EQ_I64(r.cp.rank_hops, 1);
    CHECK_EQ_I64(cp_sum(&r.cp), 100);
    orr_result_free(&r);

    /* The peer link may also name the op that made the partner late: the path goes straight on. */
    set_dep(x, 1, 2, ORR_DEP_PEER, 0, 0);
    CHECK(orr_result_build(&r, w, x, NULL, &err) == 0);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_COMPUTE], 68);
    CHECK_EQ_I64(r.cp.nops, 4);
    CHECK_EQ_I64(r.cp.rank_hops, 1);
    CHECK_EQ_I64(cp_sum(&r.cp), 100);
    orr_result_free(&r);

    /* A cycle in the links (a broken executor) ends at the step limit, still summing to 100. */
    set_dep(x, 0, 0, ORR_DEP_STREAM, 1, 4);
    CHECK(orr_result_build(&r, w, x, NULL, &err) == 0);
    CHECK(r.cp.nops <= 2 * 7); /* the walk budget: twice the ops of the run */
    CHECK_EQ_I64(cp_sum(&r.cp), 100);
    orr_result_free(&r);

    /* A link to an op that does not exist is an error naming it. */
    set_dep(x, 0, 0, ORR_DEP_STREAM, 0, 99);
    err.msg[0] = 0;
    CHECK(orr_result_build(&r, w, x, NULL, &err) == -1);
    CHECK(strstr(err.msg, "op 99") != NULL);
    CHECK(r.ranks == NULL);

    exec_free(x);
    orr_workload_free(w);
}

/*
 * ISSUE links continue on the host thread. One rank: op0 host work [0,50); op1 event record and
 * op2 kernel [52,70) launched after it; op3 kernel [72,100) whose issue determined its start (the
 * executor links it to itself); op4 host work [100,110) issued after op3. From op3 the path skips
 * the launches (op2, op1: host time, not their device time) to op0, the host's own work.
 */
static void test_critical_path_host(void)
{
    orr_workload *w = orr_workload_new(1, 8);
    orr_workload_add_rank(w, 0, 1, "solo");
    push_simple(w, 0, ORR_OP_HOST, 0, "dataloader");
    push_simple(w, 0, ORR_OP_EVENT_RECORD, 0, "ev");
    push_simple(w, 0, ORR_OP_KERNEL, 0, "k");
    push_simple(w, 0, ORR_OP_KERNEL, 0, "k");
    push_simple(w, 0, ORR_OP_HOST, 0, "logging");
    orr_err err;
    CHECK(orr_workload_finalize(w, &err) == 0);
    orr_exec_result *x = exec_new(w);
    set_time(x, 0, 0, 0, 0, 50);
    set_time(x, 0, 1, 50, 50, 50);
    set_dep(x, 0, 1, ORR_DEP_ISSUE, 0, 1);
    set_time(x, 0, 2, 52, 52, 70);
    set_dep(x, 0, 2, ORR_DEP_ISSUE, 0, 2);
    set_time(x, 0, 3, 72, 72, 100);
    set_dep(x, 0, 3, ORR_DEP_ISSUE, 0, 3);
    set_time(x, 0, 4, 100, 100, 110);
    set_dep(x, 0, 4, ORR_DEP_ISSUE, 0, 3);

    orr_result r;
    x->makespan_ps = 100;
    x->last_op = 3;
    CHECK(orr_result_build(&r, w, x, NULL, &err) == 0);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_COMPUTE], 28);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_HOST], 72);
    CHECK_EQ_I64(r.cp.nops, 2);
    CHECK_EQ_I64(r.cp.rank_hops, 0);
    orr_result_free(&r);

    /* Host work linked to the kernel launched before it: the kernel's run is not on the path. */
    x->makespan_ps = 110;
    x->last_op = 4;
    CHECK(orr_result_build(&r, w, x, NULL, &err) == 0);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_COMPUTE], 0);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_HOST], 110);
    CHECK_EQ_I64(r.cp.nops, 2);
    orr_result_free(&r);
    exec_free(x);
    orr_workload_free(w);

    /* A sync that blocked the host from 6 to 100 is linked to the kernel that released it: the
     * path is host work [100,110) <- sync (no time of its own) <- kernel [5,100) <- launch [0,5). */
    w = orr_workload_new(1, 8);
    orr_workload_add_rank(w, 0, 1, "solo");
    push_simple(w, 0, ORR_OP_KERNEL, 0, "k");
    push_simple(w, 0, ORR_OP_DEVICE_SYNC, 0, "sync");
    push_simple(w, 0, ORR_OP_HOST, 0, "optimizer");
    CHECK(orr_workload_finalize(w, &err) == 0);
    x = exec_new(w);
    set_time(x, 0, 0, 5, 5, 100);
    set_dep(x, 0, 0, ORR_DEP_ISSUE, 0, 0);
    set_time(x, 0, 1, 6, 6, 100);
    set_dep(x, 0, 1, ORR_DEP_STREAM, 0, 0);
    set_time(x, 0, 2, 100, 100, 110);
    set_dep(x, 0, 2, ORR_DEP_ISSUE, 0, 1);
    x->makespan_ps = 110;
    x->last_op = 2;
    CHECK(orr_result_build(&r, w, x, NULL, &err) == 0);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_COMPUTE], 95);
    CHECK_EQ_I64(r.cp.ps[ORR_CP_HOST], 15);
    CHECK_EQ_I64(r.cp.nops, 3);
    orr_result_free(&r);
    exec_free(x);
    orr_workload_free(w);
}

/* ---- headline numbers ---- */

static void test_headline(void)
{
    orr_workload *w = orr_workload_new(64, 8);
    orr_workload_add_rank(w, 0, 64, "all");
    push_simple(w, 0, ORR_OP_KERNEL, 0, "k");
    w->tokens = 1e6;
    w->model_flops = 64 * 400e12 * 2;  /* 400 TFLOP/s per GPU over 2 s */
    w->hw_flops = 64 * 500e12 * 2;
    snprintf(w->flops_convention, sizeof w->flops_convention, "6*N*tokens + attention");
    orr_err err;
    CHECK(orr_workload_finalize(w, &err) == 0);
    orr_exec_result *x = exec_new(w);
    set_time(x, 0, 0, 0, 0, 2 * ORR_PS_PER_S);
    x->makespan_ps = 2 * ORR_PS_PER_S;
    orr_report_info info = {.title = "test job", .gpu_name = "H100", .peak_flops_per_gpu = 1000e12};
    orr_result r;
    CHECK(orr_result_build(&r, w, x, &info, &err) == 0);
    CHECK_EQ_I64(r.iteration_ps, 2 * ORR_PS_PER_S);
    CHECK_REL(r.iteration_s, 2.0, 1e-15);
    CHECK_REL(r.tokens_per_s, 5e5, 1e-12);
    CHECK_REL(r.tflops_per_gpu, 400, 1e-12);
    CHECK_REL(r.hw_tflops_per_gpu, 500, 1e-12);
    CHECK_REL(r.mfu, 0.4, 1e-12);
    CHECK_REL(r.hfu, 0.5, 1e-12);
    CHECK(strcmp(r.flops_convention, "6*N*tokens + attention") == 0);
    CHECK_EQ_I64(r.mean.compute_ps, 2 * ORR_PS_PER_S);

    orr_buf t1 = {0}, t2 = {0};
    orr_report_text(&r, w, &info, &t1);
    orr_report_text(&r, w, &info, &t2);
    CHECK(t1.n == t2.n && memcmp(t1.s, t2.s, t1.n) == 0);
    CHECK(strstr(t1.s, "test job") != NULL);
    CHECK(strstr(t1.s, "2.000000 s") != NULL);
    CHECK(strstr(t1.s, "500000.0 tokens/s") != NULL);
    CHECK(strstr(t1.s, "400.00 TFLOP/s") != NULL);
    CHECK(strstr(t1.s, "40.00 %") != NULL);
    CHECK(strstr(t1.s, "6*N*tokens + attention") != NULL);
    CHECK(strstr(t1.s, "64 GPUs, 1 unique ranks simulated") != NULL);
    CHECK(strstr(t1.s, "2000.000 ms") != NULL);
    CHECK(strstr(t1.s, "Critical path") != NULL);
    orr_buf_free(&t1);
    orr_buf_free(&t2);

    /* No peak given: MFU is 0 and the text says it is unknown, no division by zero. */
    info.peak_flops_per_gpu = 0;
    orr_result_free(&r);
    CHECK(orr_result_build(&r, w, x, &info, &err) == 0);
    CHECK(r.mfu == 0 && r.hfu == 0);
    orr_report_text(&r, w, &info, &t1);
    CHECK(strstr(t1.s, "n/a") != NULL);
    orr_buf_free(&t1);
    orr_result_free(&r);
    exec_free(x);
    orr_workload_free(w);
}

/* More than 32 ranks: the text lists the 8 with the most bubble + wait + idle. */
static void test_text_many_ranks(void)
{
    enum { N = 40 };
    orr_workload *w = orr_workload_new(N, 8);
    for (uint32_t i = 0; i < N; i++) {
        char label[16];
        snprintf(label, sizeof label, "rank%02u", i);
        orr_workload_add_rank(w, i, 1, label);
        push_simple(w, i, ORR_OP_KERNEL, 0, "k");
    }
    orr_err err;
    CHECK(orr_workload_finalize(w, &err) == 0);
    orr_exec_result *x = exec_new(w);
    for (uint32_t i = 0; i < N; i++) set_time(x, i, 0, 0, 0, 100 + 10 * (int64_t)((i * 7) % N));
    x->makespan_ps = 1000;
    orr_result r;
    CHECK(orr_result_build(&r, w, x, NULL, &err) == 0);
    orr_buf t = {0};
    orr_report_text(&r, w, NULL, &t);
    CHECK(strstr(t.s, "the 8 of 40 ranks") != NULL);
    CHECK(strstr(t.s, "rank00 ") != NULL);      /* (0*7)%40 = 0: the shortest kernel */
    CHECK(strstr(t.s, "rank17 ") == NULL);      /* (17*7)%40 = 39: the longest */
    orr_buf_free(&t);
    orr_result_free(&r);
    exec_free(x);
    orr_workload_free(w);
}

/* ---- JSON ---- */

static void test_json_primitives(void)
{
    orr_buf b = {0};
    orr_json_str(&b, "a\"b\\c\n\x01\x1f/ok");
    CHECK(strcmp(b.s, "\"a\\\"b\\\\c\\u000a\\u0001\\u001f/ok\"") == 0);
    b.n = 0;
    orr_json_str(&b, "caf\xc3\xa9 \xff end \xe2\x82");  /* valid UTF-8 kept; invalid bytes replaced */
    CHECK(strcmp(b.s, "\"caf\xc3\xa9 \\ufffd end \\ufffd\\ufffd\"") == 0);
    b.n = 0;
    orr_json_str(&b, NULL);
    CHECK(strcmp(b.s, "null") == 0);
    b.n = 0;
    orr_json_num(&b, 0.1);
    orr_buf_puts(&b, " ");
    orr_json_num(&b, 1.0 / 3.0);
    orr_buf_puts(&b, " ");
    orr_json_num(&b, NAN);
    orr_buf_puts(&b, " ");
    orr_json_num(&b, INFINITY);
    orr_buf_puts(&b, " ");
    orr_json_num(&b, 1e-12);
    orr_buf_puts(&b, " ");
    orr_json_num(&b, 0.1 + 0.2);
    /* shortest exact form: 16 digits suffice for 1/3, 0.1 + 0.2 needs 17 */
    CHECK(strcmp(b.s, "0.1 0.3333333333333333 null null 1e-12 0.30000000000000004") == 0);
    b.n = 0;
    orr_json_num(&b, 1.0 / 3.0);
    CHECK(strtod(b.s, NULL) == 1.0 / 3.0);
    orr_buf_free(&b);
}

static void test_json_report(void)
{
    orr_exec_result *x;
    orr_workload *w = breakdown_workload(&x);
    w->tokens = 4096;
    w->model_flops = 1e15;
    w->hw_flops = NAN; /* not representable in JSON: written as null */
    snprintf(w->flops_convention, sizeof w->flops_convention, "6ND \"Megatron\"");
    orr_report_info info = {.title = "job \"quoted\"\n", .gpu_name = "H100", .peak_flops_per_gpu = 989e12, .config_json = "{\"tp\": 2, \"pp\": 2}"};
    orr_result r;
    orr_err err;
    CHECK(orr_result_build(&r, w, x, &info, &err) == 0);
    orr_buf a = {0}, b = {0};
    orr_report_json(&r, w, &info, &a);
    orr_report_json(&r, w, &info, &b);
    CHECK(a.n == b.n && memcmp(a.s, b.s, a.n) == 0);
    CHECK(json_valid(a.s));
    static const char *const keys[] = {
        "\"schema_version\": 1", "\"iteration_time_s\": 1e-10", "\"tokens_per_s\":",
        "\"tflops_per_gpu\":", "\"hw_tflops_per_gpu\": null", "\"mfu\":", "\"hfu\": null",
        "\"flops_convention\": \"6ND \\\"Megatron\\\"\"", "\"world_size\": 8",
        "\"unique_ranks_simulated\": 2", "\"breakdown\":", "\"compute_s\":", "\"exposed_comm_s\":",
        "\"tp\":", "\"pp\":", "\"dp\":", "\"emb\":", "\"cp\":", "\"ep\":", "\"other\":",
        "\"bubble_s\":", "\"wait_s\":", "\"idle_s\":", "\"overlapped_comm_s\":", "\"ranks\":",
        "\"label\": \"pp0\"", "\"gpu\": 1", "\"weight\": 3", "\"critical_path\":",
        "\"events\": 42", "\"config\": {\"tp\": 2, \"pp\": 2}", "\"title\": \"job \\\"quoted\\\"\\u000a\"",
        "\"compute_s\": 4e-11"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CHECK_MSG(strstr(a.s, keys[i]) != NULL, "missing %s", keys[i]);
    orr_buf_free(&a);
    orr_buf_free(&b);

    /* Without info the document is still complete and valid, with "config": null. */
    orr_report_json(&r, w, NULL, &a);
    CHECK(json_valid(a.s));
    CHECK(strstr(a.s, "\"config\": null") != NULL);
    orr_buf_free(&a);
    orr_result_free(&r);
    exec_free(x);
    orr_workload_free(w);
}

/* ---- trace ---- */

static void test_trace(void)
{
    orr_exec_result *x;
    orr_workload *w = breakdown_workload(&x);
    /* a second send on stream 2 posted together with the first: it overlaps, so a second lane */
    push_p2p(w, 0, ORR_OP_SEND, 2, 1, ORR_ROLE_PP);
    w->ranks[0].ops[3].flags |= ORR_OPF_BATCH_NEXT;
    orr_err err;
    CHECK(orr_workload_finalize(w, &err) == 0);
    free(x->ranks[0].t);
    x->ranks[0].t = calloc(w->ranks[0].nops, sizeof(orr_op_time));
    set_time(x, 0, 0, 0, 0, 30);
    set_time(x, 0, 1, 10, 20, 40);
    set_time(x, 0, 2, 40, 50, 60);
    set_time(x, 0, 3, 45, 55, 70);
    set_time(x, 0, 4, 80, 80, 90);
    set_time(x, 0, 5, 85, 85, 95);
    set_time(x, 0, 6, 45, 60, 1234567); /* 1.234567 us */
    /* memory over time: a counter track per rank */
    orr_mem_sample samples[2] = {{0, 1000, 2048}, {2500000, 3000, 4096}};
    x->ranks[0].mem.samples = samples;
    x->ranks[0].mem.nsamples = 2;

    char path[128];
    snprintf(path, sizeof path, "/tmp/orrery_test_trace_%d.json", (int)getpid());
    CHECK(orr_report_trace(path, w, x, &err) == 0);
    size_t len = 0;
    char *text = orr_read_file(path, &len, &err);
    CHECK(text != NULL);
    if (text) {
        CHECK(strncmp(text, "{\"traceEvents\":[", 16) == 0);
        CHECK(json_valid(text));
        CHECK(strstr(text, "\"displayTimeUnit\":\"ms\"") != NULL);
        CHECK(strstr(text, "\"process_name\"") != NULL);
        CHECK(strstr(text, "\"pp0 (gpu 0)\"") != NULL);
        CHECK(strstr(text, "\"pp1 (gpu 1, x3)\"") != NULL);
        CHECK(strstr(text, "\"name\":\"host\"") != NULL);
        CHECK(strstr(text, "\"name\":\"stream 2\"") != NULL);
        CHECK(strstr(text, "\"name\":\"stream 2 (concurrent 1)\"") != NULL);
        CHECK(strstr(text, "\"thread_sort_index\"") != NULL);
        CHECK(strstr(text, "\"name\":\"qkv_gemm\",\"cat\":\"gemm\",\"ph\":\"X\",\"pid\":0,\"tid\":1,"
                           "\"ts\":0.000000,\"dur\":0.000030") != NULL);
        CHECK(strstr(text, "\"name\":\"python\",\"cat\":\"host\",\"ph\":\"X\",\"pid\":0,\"tid\":0,") != NULL);
        CHECK(strstr(text, "\"name\":\"bubble\"") != NULL);
        CHECK(strstr(text, "\"name\":\"wait\"") != NULL);
        CHECK(strstr(text, "\"cat\":\"all_reduce,tp\"") != NULL);
        CHECK(strstr(text, "\"ts\":0.000060,\"dur\":1.234507") != NULL);
        CHECK(strstr(text, "\"flops\":1000000000") != NULL);
        CHECK(strstr(text, "{\"name\":\"memory\",\"ph\":\"C\",\"pid\":0,\"ts\":0.000000,\"args\":"
                           "{\"allocated_bytes\":1000,\"reserved_bytes\":2048}}") != NULL);
        CHECK(strstr(text, "\"ts\":2.500000,\"args\":{\"allocated_bytes\":3000,\"reserved_bytes\":4096}}") != NULL);
    }

    /* Identical inputs give an identical file. */
    CHECK(orr_report_trace(path, w, x, &err) == 0);
    char *again = orr_read_file(path, NULL, &err);
    CHECK(again && text && strcmp(again, text) == 0);
    free(again);
    free(text);
    remove(path);

    /* An unwritable path is a one-line error naming it. */
    const char *bad = "/nonexistent-orrery-dir/sub/trace.json";
    err.msg[0] = 0;
    CHECK(orr_report_trace(bad, w, x, &err) == -1);
    CHECK(strstr(err.msg, bad) != NULL);
    CHECK(strchr(err.msg, '\n') == NULL);

    x->ranks[0].mem.samples = NULL; /* on the stack */
    x->ranks[0].mem.nsamples = 0;
    exec_free(x);
    orr_workload_free(w);
}

int main(void)
{
    test_breakdown();
    test_priority();
    test_breakdown_random();
    test_critical_path();
    test_critical_path_host();
    test_headline();
    test_text_many_ranks();
    test_json_primitives();
    test_json_report();
    test_trace();
    return check_done();
}
