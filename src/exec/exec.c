/*
 * exec.c - the cluster executor (include/orrery/exec.h): CUDA semantics on the discrete-event
 * engine, after Maya App. A and TorchSim App. G.
 *
 * State per rank: a host cursor (pc, host_ps), streams that each walk their own ops in issue order
 * (a per-op "next on the same stream" link built once), CUDA events as (records issued, records
 * completed) counters, and one compute engine shared by the kernels of all streams. The host runs
 * ahead of the device in a tight loop, timestamping each launch with its issue time; it stops only
 * at blocking synchronisations. Streams never start an op before its issue time. Collectives and
 * p2p meet in rendezvous tables; their duration comes from the network backend (net.h).
 *
 * Allocation happens once per run (per-rank arrays) plus geometric growth of the engine heap and of
 * the rendezvous pools; nothing is allocated per event.
 */
#include "orrery/exec.h"
#include "orrery/progress.h"
#include "orrery/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* A waiter in a collective rendezvous or a pending p2p post: (rank, op), linked in a pool. */
typedef struct waiter {
    uint32_t rank, op;
    uint32_t next;
} waiter;

typedef struct coll_inst {
    uint32_t group, seq;
    uint32_t joined;
    uint32_t head;        /* waiter list */
    uint32_t last_rank, last_op;
    uint32_t next_free;
} coll_inst;

typedef struct p2p_chan {
    uint32_t head, tail;  /* FIFO of pending posts (waiters) */
    uint8_t side;         /* ORR_OP_SEND or ORR_OP_RECV: which side is pending */
} p2p_chan;

typedef struct xfer {
    uint32_t send_rank, send_op, recv_rank, recv_op;
    uint32_t next_free;
} xfer;

typedef struct stream_st {
    uint32_t head;        /* next op to run, NONE when drained (of what was linked) */
    uint32_t last_done;   /* last op completed (dep for the next), NONE at start */
    uint32_t batch_last;  /* last op of the batch in flight */
    uint32_t pending;     /* ops of the batch not finished */
    uint8_t busy;         /* running an op or batch, or queued for the engine */
    uint8_t kick_pending;
    uint8_t wait_event;   /* blocked on a STREAM_WAIT */
} stream_st;

/* HB_QUEUE: the launch at pc waits for room in its stream's queue (launch_queue_depth). */
typedef enum host_block { HB_NONE, HB_EVENT, HB_STREAM, HB_DEVICE, HB_QUEUE, HB_DONE } host_block;

typedef struct rank_st {
    uint32_t pc;               /* next op the host issues */
    int64_t host_ps;
    uint8_t block;             /* host_block */
    uint8_t queue_lifted;      /* the launch at pc may exceed the queue depth (see lift_queue_blocks) */
    uint32_t prev_host_op;     /* last op the host issued (for ISSUE deps) */
    stream_st *streams;
    uint32_t *next_on_stream;  /* per op */
    uint32_t *wait_target;     /* per op: records of the event to wait for (STREAM_WAIT/EVENT_SYNC) */
    uint32_t *ev_issued, *ev_done, *ev_done_op;
    uint32_t *eng_q;           /* FIFO of streams waiting for the compute engine */
    uint32_t eng_qh, eng_qn;
    uint8_t eng_busy;
    double kern_slow;          /* the running kernel's slowdown factor - 1 from communication in flight */
    uint32_t kern_op;          /* the running kernel (NONE: none) */
    int64_t kern_base_ps;      /* its duration unslowed */
    int64_t kern_end_ps;       /* its end; an end event at another time is stale */
    uint32_t comm_active;      /* collectives/p2p in flight (compute slowdown) */
    uint32_t comm_nccl;        /* of them, NCCL collectives (not userbuffers, not p2p) */
    uint32_t comm_deepep;      /* of them, DeepEP's dispatch and combine (ORR_OPF_DEEPEP) */
    uint32_t *stream_issued;   /* per stream: ops issued so far */
    uint32_t *stream_done;     /* per stream: ops completed so far */
    orr_memtrack mem;          /* ALLOC/FREE played in host order, as PyTorch allocates */
} rank_st;

typedef struct exec {
    const orr_workload *w;
    const orr_gpu *gpu;
    const orr_cluster *cl;
    orr_exec_opts opts;
    orr_engine *eng;   /* the backend's (net->engine) */
    orr_net *net;
    rank_st *rs;
    orr_exec_result *out;
    /* pools */
    waiter *wt; size_t nwt, capwt; uint32_t wt_free;
    coll_inst *ci; size_t nci, capci; uint32_t ci_free;
    xfer *xf; size_t nxf, capxf; uint32_t xf_free;
    p2p_chan *ch; size_t nch, capch;
    orr_map coll_map;   /* (group << 32 | seq) -> coll_inst */
    orr_map chan_map;   /* (src * world + dst) << 16 | tag -> p2p_chan */
    orr_err *err;
    int failed;
    int remote;                   /* some stream waits on another rank's event (ORR_OPF_REMOTE) */
    uint64_t ops_done, ops_total; /* for the progress line */
} exec;

static void stream_try_start(exec *x, uint32_t r, uint32_t s);
static void host_run(exec *x, uint32_t r);

/* The rank index of global rank gpu (a remote wait's, checked to exist before the run). */
static uint32_t remote_rank(const exec *x, uint32_t gpu)
{
    for (uint32_t r = 0; r < x->w->nranks; r++)
        if (x->w->ranks[r].gpu == gpu) return r;
    return 0;
}
static void op_finished(exec *x, uint32_t r, uint32_t i);

static inline orr_op_time *T(exec *x, uint32_t r, uint32_t i) { return &x->out->ranks[r].t[i]; }
static inline const orr_op *OP(exec *x, uint32_t r, uint32_t i) { return &x->w->ranks[r].ops[i]; }

static int is_stream_op(uint8_t kind)
{
    switch (kind) {
    case ORR_OP_KERNEL: case ORR_OP_MEMCPY: case ORR_OP_MEMSET: case ORR_OP_EVENT_RECORD:
    case ORR_OP_STREAM_WAIT: case ORR_OP_COLL: case ORR_OP_SEND: case ORR_OP_RECV:
        return 1;
    default:
        return 0;
    }
}

static int is_comm_op(uint8_t kind) { return kind == ORR_OP_COLL || kind == ORR_OP_SEND || kind == ORR_OP_RECV; }

/* ---- pools ---- */

static uint32_t waiter_new(exec *x, uint32_t r, uint32_t i)
{
    uint32_t id = orr_pool_take((void **)&x->wt, &x->nwt, &x->capwt, sizeof *x->wt, offsetof(waiter, next), &x->wt_free);
    x->wt[id] = (waiter){r, i, NONE};
    return id;
}

static void waiter_release(exec *x, uint32_t id)
{
    orr_pool_give(x->wt, sizeof *x->wt, offsetof(waiter, next), &x->wt_free, id);
}

static uint32_t xfer_new(exec *x)
{
    return orr_pool_take((void **)&x->xf, &x->nxf, &x->capxf, sizeof *x->xf, offsetof(xfer, next_free), &x->xf_free);
}

static uint32_t coll_new(exec *x, uint32_t group, uint32_t seq)
{
    uint32_t id = orr_pool_take((void **)&x->ci, &x->nci, &x->capci, sizeof *x->ci, offsetof(coll_inst, next_free),
                                &x->ci_free);
    x->ci[id] = (coll_inst){group, seq, 0, NONE, NONE, NONE, NONE};
    return id;
}

/* ---- dependency bookkeeping ---- */

static void set_dep(orr_op_time *t, orr_dep_kind k, uint32_t rank, uint32_t op)
{
    t->dep_kind = (uint8_t)k;
    t->dep_rank = rank;
    t->dep_op = op;
}

/* The constraint that released op i of rank r when it became ready on its stream at time now:
 * the later of its issue and the previous op of the stream. */
static void dep_ready(exec *x, uint32_t r, uint32_t s, uint32_t i)
{
    orr_op_time *t = T(x, r, i);
    uint32_t prev = x->rs[r].streams[s].last_done;
    int64_t prev_end = prev == NONE ? 0 : T(x, r, prev)->end_ps;
    if (prev != NONE && prev_end >= t->issue_ps) set_dep(t, ORR_DEP_STREAM, r, prev);
    else if (t->issue_ps > 0) set_dep(t, ORR_DEP_ISSUE, r, i);
    else set_dep(t, ORR_DEP_NONE, r, i);
}

/* ---- host ---- */

static void host_resume_ev(void *ctx, uint64_t arg)
{
    exec *x = ctx;
    uint32_t r = (uint32_t)arg;
    host_run(x, r);
}

static void kick_ev(void *ctx, uint64_t arg)
{
    exec *x = ctx;
    uint32_t r = (uint32_t)(arg >> 8), s = (uint32_t)(arg & 0xff);
    x->rs[r].streams[s].kick_pending = 0;
    stream_try_start(x, r, s);
}

static void kick_at(exec *x, uint32_t r, uint32_t s, int64_t t_ps)
{
    stream_st *st = &x->rs[r].streams[s];
    if (st->kick_pending) return;
    st->kick_pending = 1;
    orr_engine_at(x->eng, t_ps, kick_ev, x, ((uint64_t)r << 8) | s);
}

static int stream_drained(const rank_st *rs, uint32_t s) { return rs->stream_done[s] == rs->stream_issued[s]; }

/* The launch queue (launch_queue_depth): a launch into a full stream blocks the host, and the host
 * goes on once an eighth of that queue has drained. CUDA frees entries one at a time; releasing
 * in eighths costs one host event per 128 ops instead of one per op (it doubled the events of the
 * 175B benchmark), and launches that waited are up to 128 ops later, against a run-ahead of 1,024. */
static uint32_t queue_unfinished(const rank_st *rs, uint32_t s) { return rs->stream_issued[s] - rs->stream_done[s]; }

static int queue_full(const exec *x, const rank_st *rs, uint32_t s)
{
    uint32_t depth = x->opts.launch_queue_depth;
    return depth > 0 && !rs->queue_lifted && queue_unfinished(rs, s) >= depth;
}

static int queue_drained(const exec *x, const rank_st *rs, uint32_t s)
{
    uint32_t depth = x->opts.launch_queue_depth, refill = depth / 8 ? depth / 8 : 1;
    return rs->queue_lifted || queue_unfinished(rs, s) + refill <= depth;
}

/* Is the blocking op at the host's pc satisfied now? Sets the op's dep if so. */
static int host_sync_ready(exec *x, uint32_t r)
{
    rank_st *rs = &x->rs[r];
    const orr_op *op = OP(x, r, rs->pc);
    orr_op_time *t = T(x, r, rs->pc);
    const orr_rank *rk = &x->w->ranks[r];
    if (rs->block == HB_QUEUE) return queue_drained(x, rs, op->stream);
    switch (op->kind) {
    case ORR_OP_EVENT_SYNC: { /* on this rank's event, or another's (ORR_OPF_REMOTE) */
        uint32_t er = op->flags & ORR_OPF_REMOTE ? remote_rank(x, op->dims[0]) : r;
        if (x->rs[er].ev_done[op->a] < rs->wait_target[rs->pc]) return 0;
        if (rs->wait_target[rs->pc] > 0) set_dep(t, ORR_DEP_EVENT, er, x->rs[er].ev_done_op[op->a]);
        return 1;
    }
    case ORR_OP_STREAM_SYNC:
        if (op->stream >= rk->nstreams || !stream_drained(rs, op->stream)) return 0;
        if (rs->streams[op->stream].last_done != NONE) set_dep(t, ORR_DEP_STREAM, r, rs->streams[op->stream].last_done);
        return 1;
    case ORR_OP_DEVICE_SYNC: {
        int64_t latest = -1;
        for (uint32_t s = 0; s < rk->nstreams; s++) {
            if (!stream_drained(rs, s)) return 0;
            uint32_t l = rs->streams[s].last_done;
            if (l != NONE && T(x, r, l)->end_ps > latest) {
                latest = T(x, r, l)->end_ps;
                set_dep(t, ORR_DEP_STREAM, r, l);
            }
        }
        return 1;
    }
    default:
        return 1;
    }
}

/* Plays an ALLOC/FREE in the rank's memory tracker at the host's time. A double allocation or a
 * free of a buffer that is not live is a workload error. */
static int memory_op(exec *x, uint32_t r, uint32_t i)
{
    rank_st *rs = &x->rs[r];
    const orr_op *op = OP(x, r, i);
    int rc = op->kind == ORR_OP_ALLOC
           ? orr_mem_alloc(&rs->mem, op->a, op->bytes, (orr_mem_cat)op->cls, op->stream, rs->host_ps, i)
           : orr_mem_release(&rs->mem, op->a, rs->host_ps);
    if (rc >= 0) return 0;
    if (!x->failed) {
        x->failed = 1;
        orr_fail(x->err, "workload: rank %u op %u %s buffer %u, which is %s", x->w->ranks[r].gpu, i,
                 op->kind == ORR_OP_ALLOC ? "allocates" : "frees", op->a,
                 op->a >= x->w->ranks[r].nbufs ? "beyond the rank's buffer count"
                 : op->kind == ORR_OP_ALLOC ? "already allocated" : "not allocated");
    }
    rs->block = HB_DONE;
    return -1;
}

/* Runs the host of rank r from its pc until it blocks or finishes. */
static void host_run(exec *x, uint32_t r)
{
    rank_st *rs = &x->rs[r];
    const orr_rank *rk = &x->w->ranks[r];
    int64_t now = orr_engine_now(x->eng);
    if (rs->block == HB_DONE) return;
    if (rs->block != HB_NONE) {
        if (!host_sync_ready(x, r)) return;
        orr_op_time *t = T(x, r, rs->pc);
        if (now > rs->host_ps) rs->host_ps = now;
        if (rs->block == HB_QUEUE) { /* the launch goes ahead below */
            const orr_op *op = OP(x, r, rs->pc);
            uint32_t room = rs->streams[op->stream].last_done;
            if (!rs->queue_lifted && room != NONE) t->queue_op = room + 1;
        } else {
            t->start_ps = t->ready_ps;
            t->end_ps = rs->host_ps;
            rs->prev_host_op = rs->pc;
            rs->pc++;
        }
        rs->block = HB_NONE;
    }
    while (rs->pc < rk->nops) {
        uint32_t i = rs->pc;
        const orr_op *op = &rk->ops[i];
        orr_op_time *t = T(x, r, i);
        t->issue_ps = rs->host_ps;
        switch (op->kind) {
        case ORR_OP_HOST:
            t->ready_ps = t->start_ps = rs->host_ps;
            rs->host_ps += op->dur_ps > 0 ? op->dur_ps : 0;
            t->end_ps = rs->host_ps;
            set_dep(t, ORR_DEP_ISSUE, r, rs->prev_host_op == NONE ? i : rs->prev_host_op);
            break;
        case ORR_OP_ALLOC:
        case ORR_OP_FREE:
            t->ready_ps = t->start_ps = t->end_ps = rs->host_ps;
            set_dep(t, ORR_DEP_ISSUE, r, rs->prev_host_op == NONE ? i : rs->prev_host_op);
            if (memory_op(x, r, i) < 0) return;
            break;
        case ORR_OP_EVENT_SYNC:
        case ORR_OP_STREAM_SYNC:
        case ORR_OP_DEVICE_SYNC:
            if (op->kind == ORR_OP_EVENT_SYNC)
                rs->wait_target[i] = op->flags & ORR_OPF_REMOTE ? op->dims[1] : rs->ev_issued[op->a];
            t->ready_ps = rs->host_ps;
            set_dep(t, ORR_DEP_ISSUE, r, rs->prev_host_op == NONE ? i : rs->prev_host_op);
            if (!host_sync_ready(x, r)) {
                rs->block = op->kind == ORR_OP_EVENT_SYNC ? HB_EVENT
                          : op->kind == ORR_OP_STREAM_SYNC ? HB_STREAM : HB_DEVICE;
                return;
            }
            t->start_ps = t->end_ps = rs->host_ps;
            break;
        default: { /* a device op: launch it onto its stream */
            uint32_t s = op->stream;
            if (queue_full(x, rs, s)) {
                rs->block = HB_QUEUE;
                return;
            }
            rs->queue_lifted = 0;
            if (op->kind != ORR_OP_EVENT_RECORD && op->kind != ORR_OP_STREAM_WAIT)
                rs->host_ps += x->opts.launch_ps;
            t->issue_ps = rs->host_ps;
            if (op->kind == ORR_OP_STREAM_WAIT)
                rs->wait_target[i] = op->flags & ORR_OPF_REMOTE ? op->dims[1] : rs->ev_issued[op->a];
            if (op->kind == ORR_OP_EVENT_RECORD) rs->ev_issued[op->a]++;
            rs->stream_issued[s]++;
            rs->pc = i + 1;
            rs->prev_host_op = i;
            stream_st *st = &rs->streams[s];
            /* An idle stream may be waiting for this op, or for the rest of a batch it heads. */
            if (!st->busy && !st->wait_event && st->head != NONE) kick_at(x, r, s, t->issue_ps);
            continue;
        }
        }
        rs->prev_host_op = i;
        rs->pc = i + 1;
    }
    rs->block = HB_DONE;
}

static void wake_host(exec *x, uint32_t r)
{
    rank_st *rs = &x->rs[r];
    if (rs->block == HB_NONE || rs->block == HB_DONE) return;
    if (host_sync_ready(x, r)) orr_engine_at(x->eng, orr_engine_now(x->eng), host_resume_ev, x, r);
}

/* ---- compute engine ---- */

static void kernel_end_ev(void *ctx, uint64_t arg);

/* How much communication in flight slows a kernel (factor - 1). An NCCL collective's channels hold
 * SMs for its whole run, one thread block each; a GEMM whose tiles are handed to its blocks up front
 * waits for them (nccl_gemm_slowdown, measured on the H100), and for DeepEP's 20 SMs by
 * deepep_gemm_slowdown where the GPU has it. Other kernels, and kernels beside p2p (one or two
 * channels) or userbuffers, by overlap_slowdown. docs/models.md, "Compute under communication". */
static double overlap_factor(const exec *x, const rank_st *rs, const orr_op *op)
{
    if (rs->comm_active == 0) return 0;
    int gemm = op->kind == ORR_OP_KERNEL && op->cls == ORR_CLS_GEMM;
    if (gemm && rs->comm_deepep > 0 && x->gpu->deepep_gemm_slowdown > 0) return x->gpu->deepep_gemm_slowdown;
    if (gemm && rs->comm_nccl > 0) return x->gpu->nccl_gemm_slowdown;
    return x->gpu->overlap_slowdown;
}

static void kernel_start(exec *x, uint32_t r, uint32_t i)
{
    rank_st *rs = &x->rs[r];
    const orr_op *op = OP(x, r, i);
    orr_op_time *t = T(x, r, i);
    int64_t now = orr_engine_now(x->eng);
    int64_t dur = op->dur_ps;
    double slow = x->out->ranks[r].slowdown; /* orr_exec_rank_slowdown */
    if (slow > 1.0) dur = (int64_t)((double)dur * slow + 0.5);
    rs->kern_base_ps = dur;
    rs->kern_slow = overlap_factor(x, rs, op);
    if (rs->kern_slow > 0) dur += (int64_t)((double)dur * rs->kern_slow);
    t->start_ps = now;
    rs->eng_busy = 1;
    rs->kern_op = i;
    rs->kern_end_ps = now + dur;
    orr_engine_at(x->eng, now + dur, kernel_end_ev, x, ((uint64_t)r << 32) | i);
}

/* A collective that begins in the picosecond its GPU's kernel started slows that kernel as if it had
 * begun first: which of two same-time events the engine runs first must not decide a duration (it
 * differs between a collapsed and a full run of the same job). The kernel's end moves; the end event
 * already queued becomes stale (kernel_end_ev ignores it). */
static void slow_kernel_started_now(exec *x, uint32_t r)
{
    rank_st *rs = &x->rs[r];
    if (!rs->eng_busy || rs->kern_op == NONE) return;
    double slow = overlap_factor(x, rs, OP(x, r, rs->kern_op));
    if (slow <= rs->kern_slow) return;
    int64_t now = orr_engine_now(x->eng);
    if (T(x, r, rs->kern_op)->start_ps != now) return;
    int64_t extra = (int64_t)((double)rs->kern_base_ps * slow);
    rs->kern_slow = slow;
    if (extra <= 0) return;
    rs->kern_end_ps = now + rs->kern_base_ps + extra;
    orr_engine_at(x->eng, rs->kern_end_ps, kernel_end_ev, x, ((uint64_t)r << 32) | rs->kern_op);
}

static void kernel_end_ev(void *ctx, uint64_t arg)
{
    exec *x = ctx;
    uint32_t r = (uint32_t)(arg >> 32), i = (uint32_t)arg;
    rank_st *rs = &x->rs[r];
    if (rs->kern_op != i || orr_engine_now(x->eng) != rs->kern_end_ps) return; /* stale: the kernel was slowed */
    rs->kern_op = NONE;
    rs->eng_busy = 0;
    /* Hand the engine to the stream that has waited longest (FIFO) before this kernel's stream
     * moves on, so a stream cannot overtake others that queued earlier. */
    if (rs->eng_qn > 0) {
        uint32_t nst = x->w->ranks[r].nstreams;
        uint32_t s = rs->eng_q[rs->eng_qh];
        rs->eng_qh = (rs->eng_qh + 1) % nst;
        rs->eng_qn--;
        uint32_t j = rs->streams[s].head;
        orr_op_time *t = T(x, r, j);
        if (orr_engine_now(x->eng) > t->ready_ps) set_dep(t, ORR_DEP_ENGINE, r, i);
        kernel_start(x, r, j);
    }
    op_finished(x, r, i);
}

static void copy_end_ev(void *ctx, uint64_t arg)
{
    exec *x = ctx;
    op_finished(x, (uint32_t)(arg >> 32), (uint32_t)arg);
}

/* ---- communication ---- */

static int is_nccl_coll(const orr_op *op) { return op->kind == ORR_OP_COLL && !(op->flags & ORR_OPF_USERBUFFERS); }

static void comm_begin(exec *x, uint32_t r, uint32_t i, uint32_t dep_rank, uint32_t dep_op)
{
    orr_op_time *t = T(x, r, i);
    t->start_ps = orr_engine_now(x->eng);
    if (dep_rank != NONE && (dep_rank != r || dep_op != i) && t->start_ps > t->ready_ps)
        set_dep(t, ORR_DEP_PEER, dep_rank, dep_op);
    x->rs[r].comm_active++;
    if (is_nccl_coll(OP(x, r, i))) x->rs[r].comm_nccl++;
    if (OP(x, r, i)->flags & ORR_OPF_DEEPEP) x->rs[r].comm_deepep++;
    slow_kernel_started_now(x, r);
}

static void comm_end(exec *x, uint32_t r, uint32_t i)
{
    x->rs[r].comm_active--;
    if (is_nccl_coll(OP(x, r, i))) x->rs[r].comm_nccl--;
    if (OP(x, r, i)->flags & ORR_OPF_DEEPEP) x->rs[r].comm_deepep--;
    op_finished(x, r, i);
}

static void coll_done_ev(void *ctx, uint64_t arg)
{
    exec *x = ctx;
    uint32_t id = (uint32_t)arg;
    uint32_t w = x->ci[id].head;
    while (w != NONE) {
        uint32_t nx = x->wt[w].next;
        comm_end(x, x->wt[w].rank, x->wt[w].op);
        waiter_release(x, w);
        w = nx;
    }
    orr_pool_give(x->ci, sizeof *x->ci, offsetof(coll_inst, next_free), &x->ci_free, id);
}

static void coll_join(exec *x, uint32_t r, uint32_t i)
{
    const orr_op *op = OP(x, r, i);
    const orr_group *g = &x->w->groups[op->a];
    uint32_t id;
    uint64_t key = ((uint64_t)op->a << 32) | op->seq;
    if (g->nsim <= 1) {
        id = coll_new(x, op->a, op->seq);
    } else {
        uint32_t *p = orr_map_get(&x->coll_map, key);
        if (p) {
            id = *p;
        } else {
            id = coll_new(x, op->a, op->seq);
            orr_map_put(&x->coll_map, key, id);
        }
    }
    coll_inst *c = &x->ci[id];
    uint32_t wid = waiter_new(x, r, i);
    x->wt[wid].next = c->head;
    c->head = wid;
    c->joined++;
    c->last_rank = r;
    c->last_op = i;
    if (c->joined < (g->nsim ? g->nsim : 1)) return;
    if (g->nsim > 1) orr_map_del(&x->coll_map, key);
    for (uint32_t w = c->head; w != NONE; w = x->wt[w].next)
        comm_begin(x, x->wt[w].rank, x->wt[w].op, c->last_rank, c->last_op);
    orr_coll_desc d = {(orr_coll_kind)op->cls, op->bytes, g->size, g->nodes, g->per_node, ORR_ALGO_AUTO};
    x->net->collective(x->net, &d, g->members, coll_done_ev, x, id);
}

static void xfer_done_ev(void *ctx, uint64_t arg)
{
    exec *x = ctx;
    xfer f = x->xf[(uint32_t)arg];
    orr_pool_give(x->xf, sizeof *x->xf, offsetof(xfer, next_free), &x->xf_free, (uint32_t)arg);
    comm_end(x, f.send_rank, f.send_op);
    comm_end(x, f.recv_rank, f.recv_op);
}

static void p2p_post(exec *x, uint32_t r, uint32_t i)
{
    const orr_op *op = OP(x, r, i);
    uint32_t me = x->w->ranks[r].gpu, peer = op->a;
    uint32_t src = op->kind == ORR_OP_SEND ? me : peer, dst = op->kind == ORR_OP_SEND ? peer : me;
    uint64_t key = (((uint64_t)src * x->w->world_size + dst) << 16) | (op->seq & 0xffffu);
    uint32_t *p = orr_map_get(&x->chan_map, key), cid;
    if (p) {
        cid = *p;
    } else {
        orr_grow((void **)&x->ch, &x->capch, x->nch + 1, sizeof *x->ch);
        cid = (uint32_t)x->nch++;
        x->ch[cid] = (p2p_chan){NONE, NONE, op->kind};
        orr_map_put(&x->chan_map, key, cid);
    }
    p2p_chan *c = &x->ch[cid];
    if (c->head == NONE || c->side == op->kind) { /* nothing to match: queue this post */
        uint32_t wid = waiter_new(x, r, i);
        if (c->head == NONE) c->head = wid;
        else x->wt[c->tail].next = wid;
        c->tail = wid;
        c->side = op->kind;
        return;
    }
    uint32_t wid = c->head; /* match the oldest post of the other side */
    c->head = x->wt[wid].next;
    uint32_t pr = x->wt[wid].rank, pi = x->wt[wid].op;
    waiter_release(x, wid);
    const orr_op *pop = OP(x, pr, pi);
    if (pop->bytes != op->bytes && !x->failed) {
        x->failed = 1;
        orr_fail(x->err, "workload: rank %u op %u %s of %llu bytes is matched by rank %u op %u of %llu bytes",
                 x->w->ranks[r].gpu, i, orr_op_kind_name(op->kind), (unsigned long long)op->bytes,
                 x->w->ranks[pr].gpu, pi, (unsigned long long)pop->bytes);
    }
    uint32_t fid = xfer_new(x);
    xfer *f = &x->xf[fid];
    if (op->kind == ORR_OP_SEND) *f = (xfer){r, i, pr, pi, NONE};
    else *f = (xfer){pr, pi, r, i, NONE};
    comm_begin(x, r, i, pr, pi);
    comm_begin(x, pr, pi, r, i);
    x->net->send(x->net, src, dst, op->bytes, xfer_done_ev, x, fid);
}

static void comm_post(exec *x, uint32_t r, uint32_t i)
{
    if (OP(x, r, i)->kind == ORR_OP_COLL) coll_join(x, r, i);
    else p2p_post(x, r, i);
}

/* ---- streams ---- */

/* Op i of rank r finished now: record it, wake what waits on it, move its stream on. */
static void op_finished(exec *x, uint32_t r, uint32_t i)
{
    rank_st *rs = &x->rs[r];
    const orr_op *op = OP(x, r, i);
    orr_op_time *t = T(x, r, i);
    uint32_t s = op->stream;
    stream_st *st = &rs->streams[s];
    t->end_ps = orr_engine_now(x->eng);
    x->ops_done++;
    st->last_done = i;
    rs->stream_done[s]++;
    if (op->kind == ORR_OP_EVENT_RECORD) {
        rs->ev_done[op->a]++;
        rs->ev_done_op[op->a] = i;
        for (uint32_t k = 0; k < x->w->ranks[r].nstreams; k++)
            if (rs->streams[k].wait_event && k != s) stream_try_start(x, r, k);
        for (uint32_t r2 = 0; x->remote && r2 < x->w->nranks; r2++) { /* other ranks waiting on it */
            if (r2 == r) continue;
            for (uint32_t k = 0; k < x->w->ranks[r2].nstreams; k++)
                if (x->rs[r2].streams[k].wait_event) stream_try_start(x, r2, k);
            if (x->rs[r2].block == HB_EVENT) wake_host(x, r2);
        }
    }
    if (st->pending > 0) {
        if (--st->pending > 0) return;
        st->head = x->rs[r].next_on_stream[st->batch_last];
    } else {
        st->head = rs->next_on_stream[i];
    }
    st->busy = 0;
    wake_host(x, r);
    if (op->kind != ORR_OP_EVENT_RECORD && op->kind != ORR_OP_STREAM_WAIT) stream_try_start(x, r, s);
}

static void stream_try_start(exec *x, uint32_t r, uint32_t s)
{
    rank_st *rs = &x->rs[r];
    stream_st *st = &rs->streams[s];
    for (;;) {
        if (st->busy || x->failed) return;
        uint32_t i = st->head;
        if (i == NONE || i >= rs->pc) return; /* drained, or not launched yet: the host kicks us */
        const orr_op *op = OP(x, r, i);
        orr_op_time *t = T(x, r, i);
        int64_t now = orr_engine_now(x->eng);
        if (t->issue_ps > now) {
            kick_at(x, r, s, t->issue_ps);
            return;
        }
        if (!st->wait_event) {
            t->ready_ps = now;
            dep_ready(x, r, s, i);
        }
        switch (op->kind) {
        case ORR_OP_EVENT_RECORD:
            t->start_ps = now;
            op_finished(x, r, i);
            continue;
        case ORR_OP_STREAM_WAIT: {
            /* the event is this rank's, or another's (ORR_OPF_REMOTE) */
            uint32_t er = op->flags & ORR_OPF_REMOTE ? remote_rank(x, op->dims[0]) : r;
            const rank_st *es = &x->rs[er];
            if (es->ev_done[op->a] < rs->wait_target[i]) {
                st->wait_event = 1;
                return;
            }
            if (st->wait_event && rs->wait_target[i] > 0) set_dep(t, ORR_DEP_EVENT, er, es->ev_done_op[op->a]);
            st->wait_event = 0;
            t->start_ps = now;
            op_finished(x, r, i);
            continue;
        }
        case ORR_OP_KERNEL:
            st->busy = 1;
            if (rs->eng_busy) {
                uint32_t nst = x->w->ranks[r].nstreams;
                rs->eng_q[(rs->eng_qh + rs->eng_qn) % nst] = s;
                rs->eng_qn++;
            } else {
                kernel_start(x, r, i);
            }
            return;
        case ORR_OP_MEMCPY:
        case ORR_OP_MEMSET:
            st->busy = 1;
            t->start_ps = now;
            orr_engine_at(x->eng, now + op->dur_ps, copy_end_ev, x, ((uint64_t)r << 32) | i);
            return;
        default: { /* COLL / SEND / RECV, possibly a batch (an NCCL group) */
            uint32_t last = i, n = 1;
            while ((OP(x, r, last)->flags & ORR_OPF_BATCH_NEXT) && rs->next_on_stream[last] != NONE) {
                last = rs->next_on_stream[last];
                n++;
            }
            if (last >= rs->pc) return; /* the batch is not fully launched yet */
            if (T(x, r, last)->issue_ps > now) {
                kick_at(x, r, s, T(x, r, last)->issue_ps);
                return;
            }
            st->busy = 1;
            st->batch_last = last;
            st->pending = n; /* posting never completes an op synchronously */
            for (uint32_t j = i;; j = rs->next_on_stream[j]) {
                if (j != i) {
                    T(x, r, j)->ready_ps = now;
                    dep_ready(x, r, s, j);
                }
                comm_post(x, r, j);
                if (j == last || x->failed) break;
            }
            return;
        }
        }
    }
}

/* ---- setup, run, deadlock report ---- */

static int check_batches(const orr_workload *w, const rank_st *rs, uint32_t r, orr_err *err)
{
    const orr_rank *rk = &w->ranks[r];
    for (uint32_t i = 0; i < rk->nops; i++) {
        const orr_op *op = &rk->ops[i];
        if (!(op->flags & ORR_OPF_BATCH_NEXT)) continue;
        uint32_t nx = rs[r].next_on_stream[i];
        if (!is_comm_op(op->kind) || nx == NONE || !is_comm_op(rk->ops[nx].kind))
            return orr_fail(err, "workload: rank %u op %u is batched with a following op, but only collectives and "
                            "send/recv on one stream can be batched", rk->gpu, i);
    }
    return 0;
}

static void rank_init(exec *x, uint32_t r)
{
    const orr_rank *rk = &x->w->ranks[r];
    rank_st *rs = &x->rs[r];
    uint32_t ns = rk->nstreams ? rk->nstreams : 1;
    rs->prev_host_op = NONE;
    rs->kern_op = NONE;
    rs->streams = orr_xcalloc(ns, sizeof *rs->streams);
    rs->next_on_stream = orr_xmalloc((rk->nops ? rk->nops : 1) * sizeof(uint32_t));
    rs->wait_target = orr_xcalloc(rk->nops ? rk->nops : 1, sizeof(uint32_t));
    rs->ev_issued = orr_xcalloc(rk->nevents + 1, sizeof(uint32_t));
    rs->ev_done = orr_xcalloc(rk->nevents + 1, sizeof(uint32_t));
    rs->ev_done_op = orr_xcalloc(rk->nevents + 1, sizeof(uint32_t));
    rs->eng_q = orr_xcalloc(ns, sizeof(uint32_t));
    rs->stream_issued = orr_xcalloc(ns, sizeof(uint32_t));
    rs->stream_done = orr_xcalloc(ns, sizeof(uint32_t));
    uint32_t *tail = orr_xmalloc(ns * sizeof(uint32_t));
    for (uint32_t s = 0; s < ns; s++) {
        rs->streams[s].head = NONE;
        rs->streams[s].last_done = NONE;
        tail[s] = NONE;
    }
    for (uint32_t i = 0; i < rk->nops; i++) {
        rs->next_on_stream[i] = NONE;
        if (!is_stream_op(rk->ops[i].kind)) continue;
        uint32_t s = rk->ops[i].stream;
        if (tail[s] == NONE) rs->streams[s].head = i;
        else rs->next_on_stream[tail[s]] = i;
        tail[s] = i;
    }
    free(tail);
    orr_mem_init(&rs->mem, rk->nbufs, x->opts.mem_capacity_bytes, x->opts.mem_caching, &x->out->ranks[r].mem);
    orr_op_time *t = x->out->ranks[r].t;
    for (uint32_t i = 0; i < rk->nops; i++) {
        t[i].issue_ps = t[i].ready_ps = t[i].start_ps = t[i].end_ps = -1;
        t[i].dep_rank = r;
        t[i].dep_op = i;
        t[i].dep_kind = ORR_DEP_NONE;
        t[i].queue_op = 0;
    }
}

static void rank_free(rank_st *rs)
{
    orr_mem_free_tracker(&rs->mem);
    free(rs->streams);
    free(rs->next_on_stream);
    free(rs->wait_target);
    free(rs->ev_issued);
    free(rs->ev_done);
    free(rs->ev_done_op);
    free(rs->eng_q);
    free(rs->stream_issued);
    free(rs->stream_done);
}

static const char *op_brief(const exec *x, uint32_t r, uint32_t i, char *buf, size_t n)
{
    const orr_op *op = &x->w->ranks[r].ops[i];
    const char *name = op->name < x->w->nnames ? x->w->names[op->name] : "";
    switch (op->kind) {
    case ORR_OP_COLL:
        snprintf(buf, n, "%s %s of group %s seq %u", name, orr_coll_kind_name((orr_coll_kind)op->cls),
                 x->w->groups[op->a].label, op->seq);
        break;
    case ORR_OP_SEND:
    case ORR_OP_RECV:
        snprintf(buf, n, "%s %s rank %u tag %u", op->kind == ORR_OP_SEND ? "send to" : "recv from",
                 name, op->a, op->seq);
        break;
    default:
        snprintf(buf, n, "%s %s", orr_op_kind_name((orr_op_kind)op->kind), name);
    }
    return buf;
}

/* Called when the engine ran dry. A host waiting for room in a stream's queue can be part of the
 * stall: its stream waits for a collective that a peer joins only after something this host has
 * yet to launch. CUDA would hang there too at this depth, but a generated order is not a real
 * program's, so the blocked launches go ahead past the depth instead. Returns how many hosts were
 * let go; each release launches an op, so the loop that calls this ends. */
static uint32_t lift_queue_blocks(exec *x)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < x->w->nranks; r++) {
        rank_st *rs = &x->rs[r];
        if (rs->block != HB_QUEUE) continue;
        rs->queue_lifted = 1;
        orr_engine_at(x->eng, orr_engine_now(x->eng), host_resume_ev, x, r);
        n++;
    }
    return n;
}

/* Called when the engine ran dry: every rank must be done, or it is a deadlock. */
static int check_finished(exec *x)
{
    orr_buf b = {0};
    int stuck = 0;
    for (uint32_t r = 0; r < x->w->nranks && stuck < 4; r++) {
        const orr_rank *rk = &x->w->ranks[r];
        rank_st *rs = &x->rs[r];
        char brief[160];
        for (uint32_t s = 0; s < rk->nstreams && stuck < 4; s++) {
            uint32_t h = rs->streams[s].head;
            if (h == NONE) continue;
            orr_buf_printf(&b, "%s rank %u (%s) stream %u at op %u: %s", stuck ? ";" : "", rk->gpu, rk->label, s, h,
                           op_brief(x, r, h, brief, sizeof brief));
            stuck++;
        }
        if (rs->block != HB_DONE && stuck < 4) {
            orr_buf_printf(&b, "%s rank %u (%s) host at op %u: %s", stuck ? ";" : "", rk->gpu, rk->label, rs->pc,
                           rs->pc < rk->nops ? op_brief(x, r, rs->pc, brief, sizeof brief) : "end");
            stuck++;
        }
    }
    if (stuck) orr_fail(x->err, "deadlock: the workload cannot finish:%s", b.s ? b.s : "");
    orr_buf_free(&b);
    return stuck ? -1 : 0;
}

const char *orr_tier_name(int tier)
{
    static const char *const names[ORR_TIER_COUNT] = {"nvlink", "nic", "leaf-spine", "core"};
    return tier >= 0 && tier < ORR_TIER_COUNT ? names[tier] : "?";
}

/* Is link use a more congested than b (longer a bottleneck, then more bytes, then lower id)? */
static int more_congested(const orr_link_use *a, const orr_link_use *b)
{
    if (a->bottleneck_frac != b->bottleneck_frac) return a->bottleneck_frac > b->bottleneck_frac;
    if (a->bytes != b->bytes) return a->bytes > b->bytes;
    return a->link < b->link;
}

/* The backend's counters into the summary. */
static void summarise_counters(const orr_net *n, orr_net_summary *out)
{
    orr_net_counters c;
    orr_net_summarise(n, &c);
    out->flows = c.flows;
    out->mirrored_flows = c.mirrored_flows;
    out->mirrored_servers = c.mirrored_servers;
    out->unmatched_flows = c.unmatched_flows;
    out->rotated_flows = c.rotated_flows;
    out->rotation_overlaps = c.rotation_overlaps;
    if (!(n->caps & ORR_NET_CAP_PACKETS)) return;
    out->packet.cc = c.cc;
    out->packet.payload_bytes = c.payload_bytes;
    out->packet.flows = c.packet.flows_started;
    out->packet.data_packets = c.packet.data_packets;
    out->packet.ack_packets = c.packet.ack_packets;
    out->packet.ecn_marks = c.packet.ecn_marks;
    out->packet.cnps = c.packet.cnps;
    out->packet.pfc_pauses = c.packet.pfc_pauses;
    out->packet.drops = c.packet.drops + c.packet.loss_drops;
    out->packet.events = c.packet.events;
    out->packet.retransmits = c.retransmits;
    out->packet.accel = c.accel;
}

/* A topology backend's link statistics over [0, makespan] into the result's network summary. */
static void summarise_net(orr_net *n, int64_t makespan_ps, orr_net_summary *out)
{
    const orr_topo *t = orr_net_topo(n);
    memset(out, 0, sizeof *out);
    if (!t || makespan_ps <= 0) return;
    orr_net_sync(n);
    out->present = 1;
    out->backend = n->kind;
    summarise_counters(n, out);
    double span_s = (double)makespan_ps / (double)ORR_PS_PER_S;
    for (uint32_t l = 0; l < t->n_links; l++) {
        orr_net_link_use st;
        orr_net_link_use_get(n, l, &st);
        const orr_link *k = &t->links[l];
        int tier = k->tier < ORR_TIER_COUNT ? k->tier : ORR_TIER_AGG;
        orr_link_use u = {l, k->src, k->dst, (uint8_t)tier, st.bytes, st.bytes / (k->rate_Bps * span_s),
                          (double)st.bottleneck_ps / (double)makespan_ps};
        out->tier[tier].links++;
        out->tier[tier].bytes += u.bytes;
        out->tier[tier].util += u.util;
        out->tier[tier].bottleneck_frac += u.bottleneck_frac;
        if (u.bytes <= 0) continue;
        uint32_t i = out->ntop < ORR_NET_TOP_LINKS ? out->ntop++ : ORR_NET_TOP_LINKS;
        if (i == ORR_NET_TOP_LINKS) {
            if (!more_congested(&u, &out->top[i - 1])) continue;
            i--;
        }
        while (i > 0 && more_congested(&u, &out->top[i - 1])) {
            out->top[i] = out->top[i - 1];
            i--;
        }
        out->top[i] = u;
    }
    for (int k = 0; k < ORR_TIER_COUNT; k++)
        if (out->tier[k].links) {
            out->tier[k].util /= out->tier[k].links;
            out->tier[k].bottleneck_frac /= out->tier[k].links;
        }
}

/* Is link a busier than b for the link tracks (more bytes, then lower id)? */
static int busier(const orr_link_track *a, const orr_link_track *b)
{
    if (a->bytes != b->bytes) return a->bytes > b->bytes;
    return a->link < b->link;
}

/* The max busiest links of each tier of a tracked topology backend (orr_net_track_links) and their
 * windows up to end_ps, into out. The backend accounted the windows as it went; this only reads
 * them, after summarise_net has brought the statistics to the engine's time. */
static void collect_link_tracks(orr_net *n, int64_t end_ps, uint32_t max, orr_link_tracks *out)
{
    const orr_topo *t = orr_net_topo(n);
    memset(out, 0, sizeof *out);
    if (!t || !n->link_bins || end_ps <= 0 || max == 0) return;
    orr_net_sync(n); /* a no-op after summarise_net */
    orr_link_track *top = orr_xcalloc((size_t)max * ORR_TIER_COUNT, sizeof *top);
    uint32_t ntier[ORR_TIER_COUNT] = {0};
    for (uint32_t l = 0; l < t->n_links; l++) {
        orr_net_link_use st;
        orr_net_link_use_get(n, l, &st);
        if (!(st.bytes > 0)) continue;
        const orr_link *k = &t->links[l];
        int tier = k->tier < ORR_TIER_COUNT ? k->tier : ORR_TIER_AGG;
        orr_link_track u = {l, k->src, k->dst, (uint8_t)tier, k->rate_Bps, st.bytes, NULL};
        orr_link_track *tt = top + (size_t)tier * max; /* this tier's, busiest first */
        uint32_t i = ntier[tier] < max ? ntier[tier]++ : max;
        if (i == max) {
            if (!busier(&u, &tt[i - 1])) continue;
            i--;
        }
        while (i > 0 && busier(&u, &tt[i - 1])) {
            tt[i] = tt[i - 1];
            i--;
        }
        tt[i] = u;
    }
    uint32_t ntop = 0; /* the tiers one after the other */
    for (int tier = 0; tier < ORR_TIER_COUNT; tier++)
        for (uint32_t i = 0; i < ntier[tier]; i++) top[ntop++] = top[(size_t)tier * max + i];
    /* the backend's windows, merged f at a time until at most ORR_LINK_BINS cover end_ps */
    int64_t width_ps = ORR_LINK_BIN0_PS;
    for (uint32_t i = 0; i < ntop; i++)
        if (orr_net_link_windows(n, top[i].link, &width_ps)) break;
    int64_t f = 1;
    while ((end_ps + width_ps * f - 1) / (width_ps * f) > ORR_LINK_BINS) f *= 2;
    out->window_ps = width_ps * f;
    out->end_ps = end_ps;
    out->nwindows = (uint32_t)((end_ps + out->window_ps - 1) / out->window_ps);
    for (uint32_t i = 0; i < ntop; i++) {
        int64_t wps;
        const double *v = orr_net_link_windows(n, top[i].link, &wps);
        top[i].window_bytes = orr_xcalloc(out->nwindows, sizeof *top[i].window_bytes);
        for (uint32_t w = 0; v && w < out->nwindows; w++)
            for (int64_t j = w * f; j < (w + 1) * f && j < ORR_LINK_BINS; j++) top[i].window_bytes[w] += v[j];
    }
    out->links = top;
    out->nlinks = ntop;
}

/* The engine's tick: the progress line, ops done of all ranks' ops. */
static void exec_tick(void *ctx, const orr_engine *e)
{
    exec *x = ctx;
    orr_progress_tick(x->opts.progress, e->now_ps, e->events_run, x->ops_done, x->ops_total, "ops");
}

int orr_execute_on(const orr_workload *w, orr_net *net, const orr_exec_opts *opts, orr_exec_result *out,
                   orr_err *err)
{
    memset(out, 0, sizeof *out);
    exec x;
    memset(&x, 0, sizeof x);
    x.w = w;
    x.gpu = net->gpu;
    x.cl = net->cluster;
    x.opts = *opts;
    x.err = err;
    x.out = out;
    x.wt_free = x.ci_free = x.xf_free = NONE;
    x.eng = net->engine;
    x.net = net;
    if (opts->link_tracks) orr_net_track_links(x.net);
    out->nranks = w->nranks;
    out->ranks = orr_xcalloc(w->nranks ? w->nranks : 1, sizeof *out->ranks);
    x.rs = orr_xcalloc(w->nranks ? w->nranks : 1, sizeof *x.rs);
    int rc = 0;
    for (uint32_t r = 0; r < w->nranks; r++) {
        out->ranks[r].t = orr_xmalloc((w->ranks[r].nops ? w->ranks[r].nops : 1) * sizeof(orr_op_time));
        rank_init(&x, r);
        out->ranks[r].slowdown = orr_exec_rank_slowdown(w, r, opts->variability, opts->variability_seed);
        if (rc == 0 && check_batches(w, x.rs, r, err) < 0) rc = -1;
        for (size_t i = 0; rc == 0 && i < w->ranks[r].nops; i++) {
            const orr_op *op = &w->ranks[r].ops[i];
            if ((op->kind == ORR_OP_SEND || op->kind == ORR_OP_RECV) && op->seq > 0xffffu)
                rc = orr_fail(err, "workload: rank %u op %zu has p2p tag %u (at most 65535)", w->ranks[r].gpu, i, op->seq);
            if ((op->kind == ORR_OP_STREAM_WAIT || op->kind == ORR_OP_EVENT_SYNC) && (op->flags & ORR_OPF_REMOTE)) {
                uint32_t pr = 0;
                while (pr < w->nranks && w->ranks[pr].gpu != op->dims[0]) pr++;
                if (pr == w->nranks || op->a >= w->ranks[pr].nevents || pr == r)
                    rc = orr_fail(err, "workload: rank %u op %zu waits on event %u of rank %u, which it does not record",
                                  w->ranks[r].gpu, i, op->a, op->dims[0]);
                x.remote = 1;
            }
        }
    }
    if (rc == 0 && opts->progress) {
        for (uint32_t r = 0; r < w->nranks; r++) x.ops_total += w->ranks[r].nops;
        x.eng->tick_fn = exec_tick;
        x.eng->tick_ctx = &x;
    }
    if (rc == 0) {
        for (uint32_t r = 0; r < w->nranks; r++) orr_engine_at(x.eng, 0, host_resume_ev, &x, r);
        do orr_engine_run(x.eng);
        while (!x.failed && !x.eng->overflow && lift_queue_blocks(&x) > 0);
        if (x.failed) rc = -1;
        else if (x.eng->overflow)
            rc = orr_fail(err, "simulation: the iteration runs past %.0f days of simulated time (the 2^62 ps "
                               "clock); a kernel or transfer of this job takes days: check the model's dimensions "
                               "and the batch", (double)ORR_ENGINE_MAX_PS / ORR_PS_PER_S / 86400.0);
        else rc = check_finished(&x);
        orr_progress_done(opts->progress);
    }
    out->events = x.eng->events_run;
    if (rc == 0) {
        for (uint32_t r = 0; r < w->nranks; r++) {
            int64_t end = x.rs[r].host_ps;
            uint32_t last = NONE;
            for (uint32_t i = 0; i < w->ranks[r].nops; i++) {
                if (out->ranks[r].t[i].end_ps >= end) {
                    end = out->ranks[r].t[i].end_ps;
                    last = i;
                }
            }
            out->ranks[r].end_ps = end;
            if (r == 0 || end > out->makespan_ps) {
                out->makespan_ps = end;
                out->last_rank = r;
                out->last_op = last == NONE ? 0 : last;
            }
        }
    }
    if (rc == 0) summarise_net(x.net, out->makespan_ps, &out->net);
    if (rc == 0 && opts->link_tracks) /* network activity after the last op (ACKs) included */
        collect_link_tracks(x.net, x.eng->now_ps > out->makespan_ps ? x.eng->now_ps : out->makespan_ps,
                            opts->link_tracks, &out->link_tracks);
    for (uint32_t r = 0; r < w->nranks; r++) rank_free(&x.rs[r]);
    free(x.rs);
    free(x.wt);
    free(x.ci);
    free(x.xf);
    free(x.ch);
    orr_map_free(&x.coll_map);
    orr_map_free(&x.chan_map);
    if (opts->progress) x.eng->tick_fn = NULL; /* the engine outlives this call */
    if (rc != 0) orr_exec_result_free(out);
    return rc;
}

int orr_execute(const orr_workload *w, const orr_gpu *g, const orr_cluster *c, const orr_exec_opts *opts,
                orr_exec_result *out, orr_err *err)
{
    orr_net_config cfg;
    if (opts->net_cfg) cfg = *opts->net_cfg;
    else orr_net_config_default(&cfg, c);
    for (;;) {
        memset(out, 0, sizeof *out);
        orr_engine eng;
        orr_engine_init(&eng);
        orr_net *net = orr_net_create_for(opts->net, &eng, g, c, &cfg, w, err);
        int rc = net ? orr_execute_on(w, net, opts, out, err) : -1;
        orr_net_destroy(net);
        orr_engine_free(&eng);
        /* Rotated servers were not exact for this job (src/net/images.c, the guard): again without. */
        if (rc != 0 || out->net.rotation_overlaps == 0 || cfg.no_rotate) return rc;
        orr_exec_result_free(out);
        cfg.no_rotate = 1;
    }
}

void orr_exec_result_free(orr_exec_result *r)
{
    for (size_t i = 0; i < r->nranks; i++) {
        free(r->ranks[i].t);
        orr_mem_rank_free(&r->ranks[i].mem);
    }
    free(r->ranks);
    for (uint32_t i = 0; i < r->link_tracks.nlinks; i++) free(r->link_tracks.links[i].window_bytes);
    free(r->link_tracks.links);
    memset(r, 0, sizeof *r);
}

const char *orr_dep_kind_name(orr_dep_kind k)
{
    static const char *const names[] = {"none", "issue", "stream", "engine", "event", "peer"};
    return (size_t)k < sizeof names / sizeof names[0] ? names[k] : "?";
}
