/*
 * sched.c - collectives as DAGs of flows (NCCL's ring, tree, hierarchical, all-to-all and p2p
 * steps) and the transport-agnostic runner that executes them. include/orrery/collsched.h says
 * how each algorithm is decomposed; docs/models.md ("Flow-level collectives") why it agrees with
 * the analytic model when nothing else is on the network.
 *
 * Rings are the building block. A ring phase is a set of rings of equal length (the channels of
 * one ring algorithm, or the per-node / per-rail rings of a hierarchical phase); it runs its steps
 * in rounds (one flow per ring edge per round). In lock step, the flow of edge i in round r waits
 * for edge i's and edge i-1's flows of round r-1: a rank forwards what it received in the previous
 * step, once its own previous send is done. Streamed phases (pipelined chains, the tree's loads,
 * all-to-all) are one round of concurrent flows. Every flow is charged its rounds' share of the
 * algorithm's latency as a delay before it starts.
 */
#include "orrery/collsched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define DEFAULT_MAX_FLOWS 65536u

/* ---- schedules ---- */

void orr_sched_clear(orr_sched *s)
{
    s->nflows = 0;
    s->nedges = 0;
    s->rotation_invariant = 0;
}

void orr_sched_free(orr_sched *s)
{
    free(s->flows);
    free(s->edges);
    free(s->tmp);
    memset(s, 0, sizeof *s);
}

uint32_t orr_sched_add(orr_sched *s, uint32_t src, uint32_t dst, uint64_t bytes, int64_t delay_ps)
{
    orr_sched_flow f = {src, dst, bytes, delay_ps > 0 ? delay_ps : 0, 0};
    ORR_PUSH(s->flows, s->nflows, s->cap_flows, f);
    return (uint32_t)(s->nflows - 1);
}

void orr_sched_dep(orr_sched *s, uint32_t from, uint32_t to)
{
    if (s->nedges >= s->cap_edges) orr_grow((void **)&s->edges, &s->cap_edges, s->nedges + 1, sizeof *s->edges);
    s->edges[s->nedges][0] = from;
    s->edges[s->nedges][1] = to;
    s->nedges++;
}

void orr_sched_append(orr_sched *s, const orr_sched *src)
{
    uint32_t base = (uint32_t)s->nflows;
    if (src->nflows == 0) return;
    if (s->nflows + src->nflows > s->cap_flows)
        orr_grow((void **)&s->flows, &s->cap_flows, s->nflows + src->nflows, sizeof *s->flows);
    memcpy(s->flows + s->nflows, src->flows, src->nflows * sizeof *s->flows);
    s->nflows += src->nflows;
    if (s->nedges + src->nedges > s->cap_edges)
        orr_grow((void **)&s->edges, &s->cap_edges, s->nedges + src->nedges, sizeof *s->edges);
    for (size_t e = 0; e < src->nedges; e++) {
        s->edges[s->nedges + e][0] = src->edges[e][0] + base;
        s->edges[s->nedges + e][1] = src->edges[e][1] + base;
    }
    s->nedges += src->nedges;
}

static uint32_t *tmp_array(orr_sched *s, size_t n)
{
    if (n > s->cap_tmp) orr_grow((void **)&s->tmp, &s->cap_tmp, n, sizeof *s->tmp);
    return s->tmp;
}

/* ---- ring phases ---- */

typedef struct ring_phase {
    const uint32_t *order; /* nrings x len global ranks, ring by ring */
    uint32_t nrings, len;
    uint32_t steps;        /* algorithm steps the phase stands for (latency and bytes) */
    double step_bytes;     /* wire bytes per ring edge per step */
    double step_lat_ps;    /* latency charged per step */
    int64_t first_delay_ps;/* extra delay of the first round (coll_base) */
    int chain;             /* open chain: no edge from the last position back to the first */
    int lockstep;          /* rounds with dependencies; else one streamed round */
    uint32_t max_flows;
} ring_phase;

/* Adds the phase's flows after join point `after` (NONE: none); returns a join point that waits
 * for all of its last round. */
static uint32_t add_ring_phase(orr_sched *s, const ring_phase *ph, uint32_t after)
{
    uint32_t edges = ph->chain ? ph->len - 1 : ph->len;
    if (edges == 0 || ph->nrings == 0) return after;
    uint64_t per_round = (uint64_t)edges * ph->nrings;
    uint32_t rounds = 1;
    if (ph->lockstep && ph->steps > 1) {
        uint64_t cap = ph->max_flows / per_round;
        rounds = cap < 1 ? 1 : cap >= ph->steps ? ph->steps : (uint32_t)cap;
    }
    uint32_t first = (uint32_t)s->nflows, prev_round = 0;
    for (uint32_t r = 0; r < rounds; r++) {
        uint32_t steps = (uint32_t)((uint64_t)(r + 1) * ph->steps / rounds - (uint64_t)r * ph->steps / rounds);
        uint64_t bytes = (uint64_t)llround(steps * ph->step_bytes);
        int64_t delay = llround(steps * ph->step_lat_ps) + (r == 0 ? ph->first_delay_ps : 0);
        uint32_t round0 = (uint32_t)s->nflows;
        for (uint32_t c = 0; c < ph->nrings; c++) {
            const uint32_t *o = ph->order + (size_t)c * ph->len;
            for (uint32_t i = 0; i < edges; i++) {
                uint32_t f = orr_sched_add(s, o[i], o[(i + 1) % ph->len], bytes, delay);
                if (r == 0) {
                    if (after != NONE) orr_sched_dep(s, after, f);
                    continue;
                }
                uint32_t base = prev_round + c * edges;
                orr_sched_dep(s, base + i, f);
                if (i > 0) orr_sched_dep(s, base + i - 1, f);
                else if (!ph->chain) orr_sched_dep(s, base + edges - 1, f);
            }
        }
        prev_round = round0;
    }
    (void)first;
    uint32_t join = orr_sched_add(s, 0, 0, 0, 0);
    for (uint32_t f = prev_round; f < join; f++) orr_sched_dep(s, f, join);
    return join;
}

/* ---- shapes ---- */

/* Members grouped by node: node j holds members [start[j], start[j+1]) (members ascending, so a
 * node's are contiguous). Returns the node count; start is scratch of size + 1 entries. */
static uint32_t group_nodes(const uint32_t *m, uint32_t n, uint32_t gpn, uint32_t *start, uint32_t *kmin)
{
    uint32_t nodes = 0;
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 || m[i] / gpn != m[i - 1] / gpn) start[nodes++] = i;
    start[nodes] = n;
    *kmin = n;
    for (uint32_t j = 0; j < nodes; j++)
        if (start[j + 1] - start[j] < *kmin) *kmin = start[j + 1] - start[j];
    return nodes;
}

/* Local index at which channel c's ring enters node j of `nodes` (k members): c + 0 or 1
 * alternately, and c + 2 for the last of an odd number of nodes, so consecutive nodes (the last and
 * the first included) never share an entry. */
static uint32_t entry_of(uint32_t c, uint32_t j, uint32_t nodes, uint32_t k)
{
    uint32_t par = j % 2;
    if (nodes % 2 && j == nodes - 1 && nodes > 1 && k >= 3) par = 2;
    return (c + par) % k;
}

/* The ring of channel c over all members, node by node. It leaves node j from the GPU on the rail
 * where it enters node j+1, so every inter-node hop stays on one rail (NCCL's rings do the same),
 * and each GPU of a node is the exit of exactly one channel, so the channels use all the NICs.
 * Inside a node: the entry, the others in rotation, the exit. */
static void channel_order(const uint32_t *m, const uint32_t *start, uint32_t nodes, uint32_t c, uint32_t *out)
{
    uint32_t p = 0;
    for (uint32_t j = 0; j < nodes; j++) {
        uint32_t k = start[j + 1] - start[j];
        uint32_t e = nodes == 1 ? 0 : entry_of(c, j, nodes, k);
        uint32_t x = nodes == 1 ? e : entry_of(c, (j + 1) % nodes, nodes, k);
        if (x == e) { /* one GPU, or two on an odd number of nodes: plain rotation */
            for (uint32_t q = 0; q < k; q++) out[p++] = m[start[j] + (e + q) % k];
            continue;
        }
        out[p++] = m[start[j] + e];
        for (uint32_t q = 1; q < k; q++)
            if ((e + q) % k != x) out[p++] = m[start[j] + (e + q) % k];
        out[p++] = m[start[j] + x];
    }
}

typedef struct coll_ctx {
    orr_sched *s;
    const uint32_t *m;
    uint32_t n, nodes, kmin;
    uint32_t *start;      /* nodes + 1 */
    uint32_t *order;      /* scratch for ring orders */
    double S;             /* payload bytes (NCCL convention) */
    double wire;          /* 1 / protocol bandwidth fraction */
    double step_lat_ps;
    int64_t base_ps;
    uint32_t max_flows;
} coll_ctx;

static ring_phase phase_of(const coll_ctx *x, uint32_t nrings, uint32_t len, uint32_t steps, double step_payload,
                           int lockstep, int chain)
{
    ring_phase ph = {x->order, nrings, len, steps, step_payload * x->wire, x->step_lat_ps, 0, chain, lockstep,
                     x->max_flows};
    return ph;
}

/* The flat ring (or chain) of kind k over all members. */
static void flat_ring(coll_ctx *x, orr_coll_kind k)
{
    uint32_t ch = x->nodes == 1 ? 1 : x->kmin;
    for (uint32_t c = 0; c < ch; c++) channel_order(x->m, x->start, x->nodes, c, x->order + (size_t)c * x->n);
    ring_phase ph;
    if (k == ORR_COLL_BROADCAST || k == ORR_COLL_REDUCE)
        ph = phase_of(x, ch, x->n, x->n - 1, x->S / ch / (x->n - 1), 0, 1);
    else
        ph = phase_of(x, ch, x->n, (k == ORR_COLL_ALLREDUCE ? 2 : 1) * (x->n - 1), x->S / ((double)x->n * ch), 1, 0);
    ph.first_delay_ps = x->base_ps;
    add_ring_phase(x->s, &ph, NONE);
}

/* Orders of the per-node rings (nodes rings of kmin) or the per-rail rings (kmin rings of nodes). */
static void node_rings(coll_ctx *x)
{
    for (uint32_t j = 0; j < x->nodes; j++)
        for (uint32_t q = 0; q < x->kmin; q++) x->order[(size_t)j * x->kmin + q] = x->m[x->start[j] + q];
}

static void rail_rings(coll_ctx *x)
{
    for (uint32_t q = 0; q < x->kmin; q++)
        for (uint32_t j = 0; j < x->nodes; j++) x->order[(size_t)q * x->nodes + j] = x->m[x->start[j] + q];
}

/* Hierarchical: intra-node rings and per-rail rings, phase after phase. */
static void hier(coll_ctx *x, orr_coll_kind kind)
{
    uint32_t k = x->kmin, N = x->nodes;
    double slice = x->S / k;
    uint32_t join = NONE;
    int64_t base = x->base_ps;
    if (kind == ORR_COLL_ALLREDUCE || kind == ORR_COLL_REDUCESCATTER) {
        node_rings(x);
        ring_phase ph = phase_of(x, N, k, k - 1, x->S / k, 1, 0);
        ph.first_delay_ps = base;
        base = 0;
        join = add_ring_phase(x->s, &ph, join);
    }
    rail_rings(x);
    uint32_t rail_steps = (kind == ORR_COLL_ALLREDUCE ? 2 : 1) * (N - 1);
    ring_phase ph = phase_of(x, k, N, rail_steps, slice / N, 1, 0);
    ph.first_delay_ps = base;
    base = 0;
    join = add_ring_phase(x->s, &ph, join);
    if (kind == ORR_COLL_ALLREDUCE || kind == ORR_COLL_ALLGATHER) {
        node_rings(x);
        ring_phase ag = phase_of(x, N, k, k - 1, x->S / k, 1, 0);
        add_ring_phase(x->s, &ag, join);
    }
}

/* Tree all-reduce at the analytic model's loads: a chain through each node carrying 2S, and per
 * rail a ring between nodes carrying 2(N-1)/N x S / k per hop, all streamed concurrently. */
static void tree(coll_ctx *x)
{
    uint32_t k = x->kmin, N = x->nodes;
    uint32_t steps = 2 * (N > 1 ? N - 1 : 0) + 2 * (k - 1);
    double lat = x->step_lat_ps * steps;
    if (k > 1) {
        node_rings(x);
        ring_phase ph = phase_of(x, N, k, 1, 2.0 * x->S, 0, 1);
        ph.step_lat_ps = 0;
        ph.first_delay_ps = x->base_ps + llround(lat);
        add_ring_phase(x->s, &ph, NONE);
    }
    if (N > 1) {
        rail_rings(x);
        ring_phase ph = phase_of(x, k, N, 1, 2.0 * (N - 1) / N * x->S / k, 0, 0);
        ph.step_lat_ps = 0;
        ph.first_delay_ps = x->base_ps + llround(lat);
        add_ring_phase(x->s, &ph, NONE);
    }
}

/* NVLS all-reduce: inside each node every GPU sends S/(k-1) to each other GPU of the node, so its
 * NVLink carries S each way, the in-switch reduction's load (the switch itself is not a flow
 * endpoint); across nodes (NVLS-tree) the tree's per-rail rings at the analytic model's load, all
 * streamed concurrently after coll_base and the whole latency, as the analytic model pipelines them. */
static void nvls(coll_ctx *x)
{
    uint32_t k = x->kmin, N = x->nodes;
    int64_t delay = x->base_ps + llround(x->step_lat_ps);
    double share = x->S / (k - 1) * x->wire;
    for (uint32_t j = 0; j < N; j++)
        for (uint32_t a = x->start[j]; a < x->start[j + 1]; a++)
            for (uint32_t b = x->start[j]; b < x->start[j + 1]; b++)
                if (b != a) orr_sched_add(x->s, x->m[a], x->m[b], (uint64_t)llround(share), delay);
    if (N > 1) {
        rail_rings(x);
        ring_phase ph = phase_of(x, k, N, 1, 2.0 * (N - 1) / N * x->S / k, 0, 0);
        ph.step_lat_ps = 0;
        ph.first_delay_ps = delay;
        add_ring_phase(x->s, &ph, NONE);
    }
}

/* All-to-all: every GPU sends S/n to each GPU of its node and, to every other node, that node's
 * slices in one flow to its GPU on the sender's rail. */
static void alltoall(coll_ctx *x)
{
    int64_t delay = x->base_ps + llround(x->step_lat_ps);
    double slice = x->S / x->n * x->wire;
    for (uint32_t j = 0; j < x->nodes; j++)
        for (uint32_t a = x->start[j]; a < x->start[j + 1]; a++) {
            uint32_t q = a - x->start[j];
            for (uint32_t jj = 0; jj < x->nodes; jj++) {
                uint32_t k = x->start[jj + 1] - x->start[jj];
                if (jj == j) {
                    for (uint32_t b = x->start[j]; b < x->start[j + 1]; b++)
                        if (b != a) orr_sched_add(x->s, x->m[a], x->m[b], (uint64_t)llround(slice), delay);
                } else {
                    orr_sched_add(x->s, x->m[a], x->m[x->start[jj] + q % k], (uint64_t)llround(slice * k), delay);
                }
            }
        }
}

void orr_sched_coll(orr_sched *s, const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d,
                    const uint32_t *members, const orr_sched_opts *o, orr_coll_plan *plan)
{
    orr_sched_clear(s);
    orr_coll_plan pl;
    orr_comm_plan(g, c, d, &pl);
    if (plan) *plan = pl;
    if (pl.total_ps == 0 || d->size <= 1 || !members) return;
    uint32_t n = d->size, gpn = o && o->gpus_per_node ? o->gpus_per_node : (c->gpus_per_node ? c->gpus_per_node : 1);
    uint32_t *scratch = tmp_array(s, (size_t)n + 1 + (size_t)n * (gpn < n ? gpn : n));
    coll_ctx x = {s, members, n, 0, 0, scratch, scratch + n + 1, (double)d->bytes, 1.0 / pl.bw_frac, 0, pl.base_ps,
                  o && o->max_flows ? o->max_flows : DEFAULT_MAX_FLOWS};
    x.nodes = group_nodes(members, n, gpn, x.start, &x.kmin);
    int hier_ok = x.nodes > 1 && x.kmin > 1 && x.kmin * x.nodes == n;
    orr_coll_algo a = pl.algo;
    if ((a == ORR_ALGO_HIER && !(hier_ok && d->kind <= ORR_COLL_REDUCESCATTER)) ||
        ((a == ORR_ALGO_TREE || a == ORR_ALGO_NVLS) && !(d->kind == ORR_COLL_ALLREDUCE && x.kmin * x.nodes == n)) ||
        (a == ORR_ALGO_NVLS && x.kmin < 2))
        a = ORR_ALGO_RING;
    double steps;
    if (d->kind == ORR_COLL_ALLTOALL || a == ORR_ALGO_NVLS) steps = 1;
    else if (a == ORR_ALGO_TREE) steps = 2.0 * (x.nodes - 1) + 2.0 * (x.kmin - 1);
    else if (a == ORR_ALGO_HIER)
        steps = (d->kind == ORR_COLL_ALLREDUCE ? 2.0 : 1.0) * (x.nodes - 1) +
                (d->kind == ORR_COLL_ALLREDUCE ? 2.0 : 1.0) * (x.kmin - 1);
    else steps = (d->kind == ORR_COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1);
    x.step_lat_ps = steps > 0 ? (double)pl.latency_ps / steps : 0;
    if (d->kind == ORR_COLL_ALLTOALL) alltoall(&x);
    else if (a == ORR_ALGO_TREE) tree(&x);
    else if (a == ORR_ALGO_NVLS) nvls(&x);
    else if (a == ORR_ALGO_HIER) hier(&x, d->kind);
    else flat_ring(&x, d->kind);
    /* Inside one node: all-to-all and NVLS send between every pair alike, and the flat ring is one
     * channel in member order (channel_order), a closed ring for these three kinds. The tree's
     * chain and broadcast's and reduce's are open, so not invariant. */
    s->rotation_invariant = x.nodes == 1 && (d->kind == ORR_COLL_ALLTOALL || a == ORR_ALGO_NVLS ||
                                             (a == ORR_ALGO_RING && d->kind <= ORR_COLL_REDUCESCATTER));
}

void orr_sched_p2p(orr_sched *s, const orr_gpu *g, const orr_cluster *c, uint32_t src, uint32_t dst,
                   uint64_t bytes)
{
    (void)g;
    orr_sched_clear(s);
    int same = c->gpus_per_node == 0 || orr_node_of(c, src) == orr_node_of(c, dst);
    orr_sched_add(s, src, dst, src == dst ? 0 : bytes, c->p2p_base_ps + (same ? 0 : c->net_lat_ps + c->net_plugin_lat_ps));
}

/* ---- the runner ---- */

typedef struct run_slot {
    orr_sched_flow *flows;
    uint32_t *succ_start, *succ, *indeg;
    size_t cap_flows, cap_start, cap_succ, cap_indeg;
    uint32_t nflows, left, next_free;
    orr_event_fn done;
    void *ctx;
    uint64_t arg;
} run_slot;

struct orr_runner {
    orr_transport *t;
    run_slot *slots;
    size_t nslots, cap_slots;
    uint32_t free_slot;
    uint64_t next_flow_id;
    uint64_t flows;
};

orr_runner *orr_runner_create(orr_transport *t)
{
    orr_runner *r = orr_xcalloc(1, sizeof *r);
    r->t = t;
    r->free_slot = NONE;
    return r;
}

void orr_runner_free(orr_runner *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nslots; i++) {
        free(r->slots[i].flows);
        free(r->slots[i].succ_start);
        free(r->slots[i].succ);
        free(r->slots[i].indeg);
    }
    free(r->slots);
    free(r);
}

uint64_t orr_runner_flows(const orr_runner *r) { return r->flows; }

static void flow_done_ev(void *ctx, uint64_t arg);

static void start_flow_now(orr_runner *r, uint32_t slot, uint32_t i)
{
    const orr_sched_flow *f = &r->slots[slot].flows[i];
    uint64_t arg = ((uint64_t)slot << 32) | i;
    if (f->bytes == 0) {
        orr_engine_after(r->t->engine, 0, flow_done_ev, r, arg);
        return;
    }
    r->flows++;
    uint64_t id = ++r->next_flow_id;
    r->next_flow_id += f->stands_for; /* the flows it stands for keep their numbers (ECMP draws) */
    r->t->start_flow(r->t, f->src, f->dst, f->bytes, id, flow_done_ev, r, arg);
}

static void launch_ev(void *ctx, uint64_t arg)
{
    start_flow_now(ctx, (uint32_t)(arg >> 32), (uint32_t)arg);
}

static void launch(orr_runner *r, uint32_t slot, uint32_t i)
{
    int64_t delay = r->slots[slot].flows[i].delay_ps;
    if (delay > 0) orr_engine_after(r->t->engine, delay, launch_ev, r, ((uint64_t)slot << 32) | i);
    else start_flow_now(r, slot, i);
}

static void flow_done_ev(void *ctx, uint64_t arg)
{
    orr_runner *r = ctx;
    uint32_t slot = (uint32_t)(arg >> 32), i = (uint32_t)arg;
    run_slot *s = &r->slots[slot];
    for (uint32_t k = s->succ_start[i]; k < s->succ_start[i + 1]; k++) {
        uint32_t j = r->slots[slot].succ[k];
        if (--r->slots[slot].indeg[j] == 0) launch(r, slot, j);
    }
    s = &r->slots[slot];
    if (--s->left > 0) return;
    orr_event_fn done = s->done;
    void *dctx = s->ctx;
    uint64_t darg = s->arg;
    s->next_free = r->free_slot;
    r->free_slot = slot;
    done(dctx, darg);
}

void orr_runner_run(orr_runner *r, const orr_sched *sc, orr_event_fn done, void *ctx, uint64_t arg)
{
    if (sc->nflows == 0) {
        orr_engine_after(r->t->engine, 0, done, ctx, arg);
        return;
    }
    uint32_t slot;
    if (r->free_slot != NONE) {
        slot = r->free_slot;
        r->free_slot = r->slots[slot].next_free;
    } else {
        orr_grow((void **)&r->slots, &r->cap_slots, r->nslots + 1, sizeof *r->slots);
        slot = (uint32_t)r->nslots++;
        memset(&r->slots[slot], 0, sizeof r->slots[slot]);
    }
    run_slot *s = &r->slots[slot];
    size_t n = sc->nflows;
    if (n > s->cap_flows) orr_grow((void **)&s->flows, &s->cap_flows, n, sizeof *s->flows);
    if (n + 1 > s->cap_start) orr_grow((void **)&s->succ_start, &s->cap_start, n + 1, sizeof *s->succ_start);
    if (n > s->cap_indeg) orr_grow((void **)&s->indeg, &s->cap_indeg, n, sizeof *s->indeg);
    if (sc->nedges > s->cap_succ) orr_grow((void **)&s->succ, &s->cap_succ, sc->nedges, sizeof *s->succ);
    memcpy(s->flows, sc->flows, n * sizeof *s->flows);
    memset(s->succ_start, 0, (n + 1) * sizeof *s->succ_start);
    memset(s->indeg, 0, n * sizeof *s->indeg);
    for (size_t e = 0; e < sc->nedges; e++) {
        s->succ_start[sc->edges[e][0] + 1]++;
        s->indeg[sc->edges[e][1]]++;
    }
    for (size_t i = 0; i < n; i++) s->succ_start[i + 1] += s->succ_start[i];
    /* fill successors using indeg-free cursors: reuse succ_start shifted by one */
    for (size_t e = 0; e < sc->nedges; e++) s->succ[s->succ_start[sc->edges[e][0]]++] = sc->edges[e][1];
    for (size_t i = n; i > 0; i--) s->succ_start[i] = s->succ_start[i - 1];
    s->succ_start[0] = 0;
    s->nflows = (uint32_t)n;
    s->left = (uint32_t)n;
    s->done = done;
    s->ctx = ctx;
    s->arg = arg;
    for (uint32_t i = 0; i < n; i++)
        if (r->slots[slot].indeg[i] == 0) launch(r, slot, i);
}
