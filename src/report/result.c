/*
 * result.c - turns an executed workload into the numbers the reports print (include/orrery/report.h):
 * the headline figures (iteration time, tokens/s, TFLOP/s per GPU, MFU/HFU), the per-rank time
 * breakdown and the critical path.
 *
 * Breakdown. Each simulated rank's timeline [0, iteration_ps] is cut into elementary segments at
 * every endpoint of the intervals that matter:
 *   compute   [start,end) of kernels, memcpys and memsets
 *   comm      [start,end) of collectives and p2p transfers, one state per role
 *   bubble    [ready,start) of p2p sends/recvs (waiting for the pipeline peer) and of the
 *             collectives that span pipeline stages (roles EMB and OTHER: the pipeline drains)
 *   wait      [ready,start) of other collectives (waiting for straggling members)
 * Each segment goes to the highest-priority state active in it (compute > comm by role TP > CP >
 * EP > PP > DP > EMB > OTHER > bubble > wait), or to idle when none is. This is a sweep: one array
 * of +1/-1 endpoint events per rank, sorted once (O(n log n)), with a counter per state. Because
 * the segments tile [0, iteration_ps], the parts sum exactly to it.
 *
 * Critical path. Starting from the op that finished last, follow the dependency that determined
 * each op's start (orr_op_time.dep_*) backwards. A cursor walks from the iteration end down to 0;
 * each op contributes the part of its [start,end) below the cursor to its kind, and a gap between a
 * dependency's end and its successor's start (launch latency, host work not in the IR) counts as
 * host time. The kinds therefore sum to the iteration time as well. An ISSUE link (the host
 * launched the op late) continues on the host thread: see host_chain_op. A synchronisation that
 * blocked the host is linked to the op that released it: the path goes there directly.
 */
#include "orrery/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- breakdown states, in priority order (lowest index wins) ---- */

enum {
    ST_COMPUTE,
    ST_COMM_TP,
    ST_COMM_CP,
    ST_COMM_EP,
    ST_COMM_PP,
    ST_COMM_DP,
    ST_COMM_EMB,
    ST_COMM_OTHER,
    ST_BUBBLE,
    ST_WAIT,
    ST_WAIT_EP, /* waiting in an expert-parallel collective: part of wait, also counted on its own */
    ST_COUNT
};
#define ST_FIRST_COMM ST_COMM_TP
#define ST_LAST_COMM ST_COMM_OTHER

/* The breakdown state of communication of role `role`. Role NONE counts as OTHER. */
static int comm_state_of_role(unsigned role)
{
    switch (role) {
    case ORR_ROLE_TP: return ST_COMM_TP;
    case ORR_ROLE_CP: return ST_COMM_CP;
    case ORR_ROLE_EP: return ST_COMM_EP;
    case ORR_ROLE_PP: return ST_COMM_PP;
    case ORR_ROLE_DP: return ST_COMM_DP;
    case ORR_ROLE_EMB: return ST_COMM_EMB;
    default: return ST_COMM_OTHER;
    }
}

/* The orr_comm_role a communication state is reported under. */
static int role_of_comm_state(int st)
{
    static const int roles[] = {ORR_ROLE_TP, ORR_ROLE_CP, ORR_ROLE_EP, ORR_ROLE_PP,
                                ORR_ROLE_DP, ORR_ROLE_EMB, ORR_ROLE_OTHER};
    return roles[st - ST_FIRST_COMM];
}

/* One endpoint of an interval: at time_ps, state `state` gains (+1) or loses (-1) an active op. */
typedef struct sweep_ev {
    int64_t time_ps;
    int32_t state;
    int32_t delta;
} sweep_ev;

/* Sorts ev[0..n) by time, stably, through tmp (room for n): a merge sort of runs made by insertion.
 * qsort's comparison callback was a fifth of a search's time (issue 21, bench/search.c); the order
 * of events at equal times does not matter to the sweep, which skips empty segments. */
static void sort_sweep(sweep_ev *ev, sweep_ev *tmp, size_t n)
{
    enum { RUN = 16 };
    for (size_t lo = 0; lo < n; lo += RUN) {
        size_t hi = lo + RUN < n ? lo + RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            sweep_ev x = ev[i];
            size_t j = i;
            for (; j > lo && ev[j - 1].time_ps > x.time_ps; j--) ev[j] = ev[j - 1];
            ev[j] = x;
        }
    }
    sweep_ev *src = ev, *dst = tmp;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, k = lo;
            while (i < mid && j < hi) dst[k++] = src[j].time_ps < src[i].time_ps ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        sweep_ev *t = src;
        src = dst;
        dst = t;
    }
    if (src != ev) memcpy(ev, src, n * sizeof *ev);
}

static int is_compute_kind(unsigned kind)
{
    return kind == ORR_OP_KERNEL || kind == ORR_OP_MEMCPY || kind == ORR_OP_MEMSET;
}

static int is_comm_kind(unsigned kind)
{
    return kind == ORR_OP_COLL || kind == ORR_OP_SEND || kind == ORR_OP_RECV;
}

/* Upper bound on the sweep events one rank produces: 4 per compute op (its time and a straggler
 * tail), 4 per comm op. */
static size_t sweep_events_needed(const orr_rank *rk)
{
    size_t n = 0;
    for (size_t i = 0; i < rk->nops; i++) {
        if (is_compute_kind(rk->ops[i].kind)) n += 4;
        else if (is_comm_kind(rk->ops[i].kind)) n += 4;
    }
    return n;
}

/* Appends the interval [a_ps, b_ps) of `state`, clipped to [0, end_ps]; empty ones are dropped. */
static size_t push_interval(sweep_ev *ev, size_t n, int state, int64_t a_ps, int64_t b_ps,
                            int64_t end_ps)
{
    if (a_ps < 0) a_ps = 0;
    if (b_ps > end_ps) b_ps = end_ps;
    if (a_ps >= b_ps) return n;
    ev[n++] = (sweep_ev){a_ps, state, +1};
    ev[n++] = (sweep_ev){b_ps, state, -1};
    return n;
}

/* Collects the intervals of one rank into ev (room for sweep_events_needed); returns the count. */
static size_t collect_intervals(const orr_rank *rk, const orr_op_time *t, int64_t end_ps,
                                double slowdown, sweep_ev *ev)
{
    size_t n = 0;
    for (size_t i = 0; i < rk->nops; i++) {
        const orr_op *op = &rk->ops[i];
        if (t[i].end_ps < 0) continue; /* never ran */
        if (op->kind == ORR_OP_KERNEL && slowdown > 1.0) {
            /* a kernel of a rank whose slowest GPU sets the pace (orr_exec_rank_slowdown): the
             * catalog speed's share is compute, the rest waiting for that straggler */
            int64_t mid = t[i].start_ps + (int64_t)((double)(t[i].end_ps - t[i].start_ps) / slowdown + 0.5);
            n = push_interval(ev, n, ST_COMPUTE, t[i].start_ps, mid, end_ps);
            n = push_interval(ev, n, ST_WAIT, mid, t[i].end_ps, end_ps);
        } else if (is_compute_kind(op->kind)) {
            n = push_interval(ev, n, ST_COMPUTE, t[i].start_ps, t[i].end_ps, end_ps);
        } else if (is_comm_kind(op->kind)) {
            /* Waiting in p2p, and in the collectives that span pipeline stages (the tied-embedding
             * and model-parallel gradient-norm all-reduces), is the pipeline draining: bubble.
             * Waiting in any other collective is waiting for stragglers. */
            int cross_stage = op->role == ORR_ROLE_EMB || op->role == ORR_ROLE_OTHER;
            int waiting = op->kind == ORR_OP_COLL && !cross_stage ? ST_WAIT : ST_BUBBLE;
            if (waiting == ST_WAIT && op->role == ORR_ROLE_EP) waiting = ST_WAIT_EP;
            n = push_interval(ev, n, waiting, t[i].ready_ps, t[i].start_ps, end_ps);
            n = push_interval(ev, n, comm_state_of_role(op->role), t[i].start_ps, t[i].end_ps,
                              end_ps);
        }
    }
    return n;
}

/* Adds the segment of len_ps to the part of the breakdown that the active counters select. */
static void attribute_segment(orr_breakdown *b, const int64_t active[ST_COUNT], int64_t comm_active,
                              int64_t len_ps)
{
    int st = 0;
    while (st < ST_COUNT && active[st] <= 0) st++;
    if (st == ST_COMPUTE) {
        b->compute_ps += len_ps;
        if (comm_active > 0) b->overlapped_comm_ps += len_ps;
    } else if (st >= ST_FIRST_COMM && st <= ST_LAST_COMM) {
        b->comm_ps[role_of_comm_state(st)] += len_ps;
    } else if (st == ST_BUBBLE) {
        b->bubble_ps += len_ps;
    } else if (st == ST_WAIT || st == ST_WAIT_EP) {
        b->wait_ps += len_ps;
        if (st == ST_WAIT_EP) b->ep_wait_ps += len_ps;
    } else {
        b->idle_ps += len_ps;
    }
}

/* The breakdown of one rank over [0, end_ps], using ev (room for its events) as scratch. */
static void rank_breakdown(const orr_rank *rk, const orr_op_time *t, int64_t end_ps, double slowdown,
                           sweep_ev *ev, orr_breakdown *b)
{
    memset(b, 0, sizeof *b);
    b->total_ps = end_ps;
    size_t n = t ? collect_intervals(rk, t, end_ps, slowdown, ev) : 0;
    if (n) {
        sweep_ev *tmp = orr_xmalloc(n * sizeof *tmp);
        sort_sweep(ev, tmp, n);
        free(tmp);
    }

    int64_t active[ST_COUNT] = {0};
    int64_t comm_active = 0, prev_ps = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].time_ps > prev_ps) {
            attribute_segment(b, active, comm_active, ev[i].time_ps - prev_ps);
            prev_ps = ev[i].time_ps;
        }
        active[ev[i].state] += ev[i].delta;
        if (ev[i].state >= ST_FIRST_COMM && ev[i].state <= ST_LAST_COMM) comm_active += ev[i].delta;
    }
    if (end_ps > prev_ps) attribute_segment(b, active, comm_active, end_ps - prev_ps);
}

int64_t orr_breakdown_comm_ps(const orr_breakdown *b)
{
    int64_t sum = 0;
    for (int r = 0; r < ORR_ROLE_COUNT; r++) sum += b->comm_ps[r];
    return sum;
}

/* ---- weighted mean ---- */

/* The parts of a breakdown that tile total_ps, numbered 0..NPARTS-1: compute, comm by role,
 * bubble, wait, idle (not overlapped_comm_ps, which is time inside compute). */
enum { NPARTS = 4 + ORR_ROLE_COUNT };
static int64_t *breakdown_part(orr_breakdown *b, int k)
{
    if (k == 0) return &b->compute_ps;
    if (k <= ORR_ROLE_COUNT) return &b->comm_ps[k - 1];
    if (k == ORR_ROLE_COUNT + 1) return &b->bubble_ps;
    if (k == ORR_ROLE_COUNT + 2) return &b->wait_ps;
    return &b->idle_ps;
}

static int64_t breakdown_part_value(const orr_breakdown *b, int k)
{
    return *breakdown_part((orr_breakdown *)b, k);
}

/* The breakdown averaged over ranks weighted by rank weight, rounded to integer ps. The rounding
 * residual (a few ps at most) goes to the largest part, so the parts still sum to total_ps. */
static void mean_breakdown(const orr_workload *w, const orr_breakdown *ranks, int64_t total_ps,
                           orr_breakdown *mean)
{
    memset(mean, 0, sizeof *mean);
    mean->total_ps = total_ps;
    double weight_sum = 0, sum[NPARTS] = {0}, overlapped_sum = 0, ep_wait_sum = 0;
    for (size_t i = 0; i < w->nranks; i++) {
        double wt = w->ranks[i].weight;
        for (int k = 0; k < NPARTS; k++) sum[k] += wt * (double)breakdown_part_value(&ranks[i], k);
        overlapped_sum += wt * (double)ranks[i].overlapped_comm_ps;
        ep_wait_sum += wt * (double)ranks[i].ep_wait_ps;
        weight_sum += wt;
    }
    if (weight_sum <= 0) {
        mean->idle_ps = total_ps;
        return;
    }
    int64_t assigned = 0;
    int largest = 0;
    for (int k = 0; k < NPARTS; k++) {
        int64_t *part = breakdown_part(mean, k);
        *part = llround(sum[k] / weight_sum);
        assigned += *part;
        if (*part > *breakdown_part(mean, largest)) largest = k;
    }
    *breakdown_part(mean, largest) += total_ps - assigned;
    mean->overlapped_comm_ps = llround(overlapped_sum / weight_sum);
    mean->ep_wait_ps = llround(ep_wait_sum / weight_sum);
    if (mean->ep_wait_ps > mean->wait_ps) mean->ep_wait_ps = mean->wait_ps;
}

/* ---- critical path ---- */

const char *orr_cp_kind_name(orr_cp_kind k)
{
    static const char *const names[] = {"compute", "comm_tp", "comm_pp", "comm_dp",
                                        "comm_other", "host", "memcpy"};
    return (size_t)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* What time spent running op counts as on the critical path. */
static orr_cp_kind cp_kind_of(const orr_op *op)
{
    switch (op->kind) {
    case ORR_OP_KERNEL: return ORR_CP_COMPUTE;
    case ORR_OP_MEMCPY:
    case ORR_OP_MEMSET: return ORR_CP_MEMCPY;
    case ORR_OP_COLL:
    case ORR_OP_SEND:
    case ORR_OP_RECV:
        if (op->role == ORR_ROLE_TP) return ORR_CP_COMM_TP;
        if (op->role == ORR_ROLE_PP) return ORR_CP_COMM_PP;
        if (op->role == ORR_ROLE_DP) return ORR_CP_COMM_DP;
        return ORR_CP_COMM_OTHER;
    default: return ORR_CP_HOST; /* host work, syncs, allocations, event bookkeeping */
    }
}

/* 1 if (rank, op) names an op of the run. */
static int op_exists(const orr_workload *w, const orr_exec_result *x, uint32_t rank, uint32_t op)
{
    return rank < w->nranks && op < w->ranks[rank].nops && x->ranks[rank].t != NULL;
}

/* Ops the host thread executes itself (their [start,end) is host time, blocking included). */
static int is_host_executed(unsigned kind)
{
    return kind == ORR_OP_HOST || kind == ORR_OP_ALLOC || kind == ORR_OP_FREE ||
           kind == ORR_OP_EVENT_SYNC || kind == ORR_OP_STREAM_SYNC || kind == ORR_OP_DEVICE_SYNC;
}

/* A host-blocking synchronisation that had to wait: the executor links it to the device op whose
 * completion released it, so that op determined its end, and the blocked time is not on the path. */
static int released_by_dep(const orr_op *op, const orr_op_time *t)
{
    int sync = op->kind == ORR_OP_EVENT_SYNC || op->kind == ORR_OP_STREAM_SYNC ||
               op->kind == ORR_OP_DEVICE_SYNC;
    return sync && t->dep_kind != ORR_DEP_NONE && t->dep_kind != ORR_DEP_ISSUE;
}

/*
 * An ISSUE link means the op started as soon as the host launched it, so the path goes on along
 * the host thread. The host got there by launching the device ops issued since the last op it
 * executed itself (HOST work, a sync, an allocation) or since a launch that waited for room in its
 * stream's queue: the next op on the path is that op, or for a launch that waited, the device op
 * whose completion made the room; the launches in between are the gap before the issue, counted
 * as host time. Returns its index, or -1 if the host did nothing but launch ops from the start.
 * `from` is the first op to consider (the link's target, or the linking op itself when the link
 * points at itself); every op looked at costs one unit of *budget.
 */
static int64_t host_chain_op(const orr_rank *rk, const orr_op_time *t, int64_t from, size_t *budget)
{
    int64_t j = from;
    while (j >= 0 && *budget > 0 && !is_host_executed(rk->ops[j].kind) && !t[j].queue_op) {
        j--;
        (*budget)--;
    }
    if (*budget == 0 || j < 0) return -1;
    return is_host_executed(rk->ops[j].kind) ? j : (int64_t)t[j].queue_op - 1;
}

/* Follows the dependency chain back from the last op; see the file comment. The walk is bounded
 * by a budget of twice the ops of the run, which a consistent run never needs (along one rank the
 * links lead to earlier ops), so links that form a cycle end it instead of hanging. */
static int critical_path(const orr_workload *w, const orr_exec_result *x, orr_critical_path *cp,
                         orr_err *err)
{
    memset(cp, 0, sizeof *cp);
    int64_t cursor_ps = x->makespan_ps;
    size_t total_ops = 0;
    for (size_t k = 0; k < w->nranks; k++) total_ops += w->ranks[k].nops;
    if (total_ops == 0 || cursor_ps <= 0) {
        if (cursor_ps > 0) cp->ps[ORR_CP_HOST] = cursor_ps;
        return 0;
    }
    uint32_t r = x->last_rank, i = x->last_op;
    if (!op_exists(w, x, r, i))
        return orr_fail(err, "report: the run's last op (rank %u, op %u) is not in the workload", r, i);

    size_t budget = 2 * total_ops;
    while (budget > 0) {
        budget--;
        const orr_op_time *t = &x->ranks[r].t[i];
        if (t->end_ps < 0) break;
        int64_t end_ps = t->end_ps < cursor_ps ? t->end_ps : cursor_ps;
        int64_t start_ps = t->start_ps < end_ps ? t->start_ps : end_ps;
        if (released_by_dep(&w->ranks[r].ops[i], t)) start_ps = end_ps;
        if (start_ps < 0) start_ps = 0;
        cp->ps[ORR_CP_HOST] += cursor_ps - end_ps; /* gap after this op: launch latency */
        cp->ps[cp_kind_of(&w->ranks[r].ops[i])] += end_ps - start_ps;
        cp->nops++;
        cursor_ps = start_ps;
        if (t->dep_kind == ORR_DEP_NONE || t->dep_kind >= ORR_DEP_KIND_COUNT) break;
        if (!op_exists(w, x, t->dep_rank, t->dep_op))
            return orr_fail(err, "report: rank %u op %u depends on rank %u op %u, which does not exist",
                            r, i, t->dep_rank, t->dep_op);
        uint32_t next_rank = t->dep_rank, next_op = t->dep_op;
        if (t->dep_kind == ORR_DEP_ISSUE) {
            const orr_op_time *nt = x->ranks[next_rank].t;
            int64_t from = next_op;
            if (next_rank == r && next_op == i && !t->queue_op) from = (int64_t)i - 1;
            int64_t j = host_chain_op(&w->ranks[next_rank], nt, from, &budget);
            if (j < 0) break;
            next_op = (uint32_t)j;
        } else if (next_rank == r && next_op == i) {
            break; /* a link to itself: nothing earlier determined this op */
        }
        if (next_rank != r) cp->rank_hops++;
        r = next_rank;
        i = next_op;
    }
    /* Whatever precedes the first op on the path (host launches, normally) is host time. */
    cp->ps[ORR_CP_HOST] += cursor_ps;
    return 0;
}

/* ---- headline numbers ---- */

static double per_second(double amount, double seconds)
{
    return seconds > 0 ? amount / seconds : 0.0;
}

static void headline(orr_result *r, const orr_workload *w, const orr_report_info *info)
{
    r->iteration_s = (double)r->iteration_ps / (double)ORR_PS_PER_S;
    r->tokens_per_s = per_second(w->tokens, r->iteration_s);
    double gpus = w->world_size ? (double)w->world_size : 1.0;
    r->tflops_per_gpu = per_second(w->model_flops, r->iteration_s) / gpus / 1e12;
    r->hw_tflops_per_gpu = per_second(w->hw_flops, r->iteration_s) / gpus / 1e12;
    double peak = info ? info->peak_flops_per_gpu : 0.0;
    r->mfu = peak > 0 ? r->tflops_per_gpu * 1e12 / peak : 0.0;
    r->hfu = peak > 0 ? r->hw_tflops_per_gpu * 1e12 / peak : 0.0;
    r->world_size = w->world_size;
    r->unique_ranks = (uint32_t)w->nranks;
    memcpy(r->flops_convention, w->flops_convention, sizeof r->flops_convention);
    r->flops_convention[sizeof r->flops_convention - 1] = 0;
}

/* ---- memory ---- */

/* The op of rank r's compute stream (stream 0) running at t, or -1. */
static int32_t running_at(const orr_rank *rk, const orr_op_time *t, int64_t at)
{
    for (size_t i = 0; i < rk->nops; i++) {
        const orr_op *op = &rk->ops[i];
        if (op->stream != 0 || (op->kind != ORR_OP_KERNEL && op->kind != ORR_OP_COLL && op->kind != ORR_OP_SEND &&
                                op->kind != ORR_OP_RECV && op->kind != ORR_OP_MEMCPY && op->kind != ORR_OP_MEMSET))
            continue;
        if (t[i].start_ps <= at && at < t[i].end_ps) return (int32_t)i;
    }
    return -1;
}

static void mem_summary(orr_mem_summary *m, const orr_workload *w, const orr_exec_result *x,
                        const orr_report_info *info)
{
    memset(m, 0, sizeof *m);
    m->running_op = -1;
    if (info) {
        uint64_t dev = info->device_bytes, rt = info->runtime_reserved_bytes;
        m->capacity_bytes = dev > rt ? dev - rt : 0;
    }
    for (size_t i = 0; i < x->nranks; i++) {
        const orr_mem_rank *k = &x->ranks[i].mem;
        if (k->peak_allocated_bytes > m->peak_allocated_bytes) m->peak_allocated_bytes = k->peak_allocated_bytes;
        if (k->peak_reserved_bytes > m->peak_reserved_bytes || i == 0) {
            m->peak_reserved_bytes = k->peak_reserved_bytes;
            m->peak_rank = (uint32_t)i;
            memcpy(m->cat_bytes, k->peak_cat_bytes, sizeof m->cat_bytes);
            m->overhead_bytes = k->peak_overhead_bytes;
            m->peak_t_ps = k->peak_t_ps;
            m->peak_op = k->peak_op;
        }
        if (k->oom && (!m->oom || k->oom_t_ps < m->oom_t_ps)) {
            m->oom = 1;
            m->oom_rank = (uint32_t)i;
            m->oom_op = k->oom_op;
            m->oom_bytes = k->oom_bytes;
            m->oom_in_use_bytes = k->oom_in_use_bytes;
            m->oom_t_ps = k->oom_t_ps;
        }
    }
    if (x->nranks > 0 && m->peak_rank < w->nranks)
        m->running_op = running_at(&w->ranks[m->peak_rank], x->ranks[m->peak_rank].t, m->peak_t_ps);
}

/* Transfer time of each communicator's collectives, mean over its simulated members. */
static void group_comm(orr_result *r, const orr_workload *w, const orr_exec_result *x)
{
    r->ngroups = w->ngroups;
    r->group_comm_ps = orr_xcalloc(w->ngroups ? w->ngroups : 1, sizeof *r->group_comm_ps);
    for (size_t k = 0; k < w->nranks; k++)
        for (size_t i = 0; i < w->ranks[k].nops; i++) {
            const orr_op *op = &w->ranks[k].ops[i];
            const orr_op_time *t = &x->ranks[k].t[i];
            if (op->kind == ORR_OP_COLL && op->a < w->ngroups && t->end_ps > t->start_ps)
                r->group_comm_ps[op->a] += t->end_ps - t->start_ps;
        }
    for (size_t g = 0; g < w->ngroups; g++)
        if (w->groups[g].nsim) r->group_comm_ps[g] /= w->groups[g].nsim;
}

int orr_result_headline(orr_result *r, const orr_workload *w, const orr_exec_result *x,
                        const orr_report_info *info, orr_err *err)
{
    memset(r, 0, sizeof *r);
    if (x->nranks != w->nranks)
        return orr_fail(err, "report: the run has %zu ranks but the workload %zu", x->nranks,
                        w->nranks);
    r->iteration_ps = x->makespan_ps > 0 ? x->makespan_ps : 0;
    r->events = x->events;
    r->net = x->net;
    headline(r, w, info);
    mem_summary(&r->mem, w, x, info);
    return 0;
}

int orr_result_build(orr_result *r, const orr_workload *w, const orr_exec_result *x,
                     const orr_report_info *info, orr_err *err)
{
    if (orr_result_headline(r, w, x, info, err) < 0) return -1;

    size_t cap = 0;
    for (size_t i = 0; i < w->nranks; i++) {
        size_t need = sweep_events_needed(&w->ranks[i]);
        if (need > cap) cap = need;
    }
    sweep_ev *ev = orr_xmalloc((cap ? cap : 1) * sizeof *ev);
    r->nranks = w->nranks;
    r->ranks = orr_xcalloc(w->nranks ? w->nranks : 1, sizeof *r->ranks);
    for (size_t i = 0; i < w->nranks; i++)
        rank_breakdown(&w->ranks[i], x->ranks[i].t, r->iteration_ps, x->ranks[i].slowdown, ev, &r->ranks[i]);
    free(ev);
    mean_breakdown(w, r->ranks, r->iteration_ps, &r->mean);
    group_comm(r, w, x);

    if (critical_path(w, x, &r->cp, err) < 0) {
        orr_result_free(r);
        return -1;
    }
    return 0;
}

void orr_result_free(orr_result *r)
{
    if (!r) return;
    free(r->ranks);
    r->ranks = NULL;
    r->nranks = 0;
    free(r->group_comm_ps);
    r->group_comm_ps = NULL;
    r->ngroups = 0;
}
