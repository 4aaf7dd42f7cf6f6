/*
 * wormhole.c - the Wormhole acceleration of the packet engine (paper 000): port-level network
 * partitioning (§4.1), rate-based steady-state identification (§5.1) and fast-forwarding of steady
 * partitions (§5.2-5.3) with packet pausing and per-partition timestamp offsets (§6.2-6.3).
 * Memoization of unsteady phases (§4.2-4.4) is memo.c; its replayed flows are in no partition.
 *
 * Partitions. A flow's ports are the links of its data path and of its ACK path, each with its
 * reverse (PFC frames go upstream over the reverse of the link a packet came in on, and ACKs share
 * egress queues with data). Two flows that share a port are in one partition; partitions are kept
 * by union-find over ports: a starting flow unites its ports' partitions; when a flow finishes,
 * its partition is taken apart and its other flows put back (so it splits where it fell apart).
 * Nothing outside a partition ever touches its ports.
 *
 * Steady state. Every ACK is a sample R(t_k) of its flow's sending rate (the congestion control's
 * rate). Samples are taken in consecutive windows of l samples, l being --ss-window for packets of
 * ORR_SS_SAMPLE_BYTES (the paper's ns-3 runs) and proportionally fewer for larger ones, so that a
 * window spans the same time whatever a simulated packet stands for (at least 4); a window is steady
 * when (max - min) / mean < theta (--ss-theta; the paper's eq. 6) and the goodput (bytes
 * acknowledged per second) of its first and second halves differ by less than theta, which
 * catches a flow held back by PFC or by its window (its CC rate says nothing about what it sends).
 * The flow's steady rate is the window's goodput (eq. 7, measured on what was acknowledged). A
 * partition is steady when all its flows' last windows were; a flow entering or leaving the
 * partition makes every flow of the partition start a new window (the contention changed), except
 * the next message of a queue pair (orr_packet_flow_continue: NCCL's steps on one connection),
 * which goes on with its predecessor's steady state, as it goes on with its CC state: a message
 * starting on a connection whose previous message has sent everything, or a message finishing
 * when its successor has started, leaves the partition's set of connections as it was.
 *
 * Fast-forward. When a partition becomes steady, it is frozen: its queued engine events (port
 * transmissions, arrivals and wake-ups on its ports, its flows' timers) are taken off the engine,
 * its packets stay where they are (queues keep their occupancy, so the shared buffers of its
 * switches look the same to other partitions), and a resume is scheduled at its next disruptive
 * event: the instant the first of its flows would be one packet from sending its last byte at
 * its steady rate. On resume after dt, every flow has delivered steady rate x dt bytes, which are
 * taken off its size (so the sequence numbers of packets in flight stay valid), and every time
 * stamp of the partition (events, packets on wires and in queues, INT records, pacing and CC
 * timers) moves dt later, as if the partition had been paused; then packets resume. A flow that
 * starts on a frozen partition's ports before the planned resume wakes it at that instant
 * instead (the skip-back of §5.3: the partition processed nothing while frozen, so resuming it
 * earlier is the same as skipping back). Flows then finish packet by packet, so FCTs include the
 * real last packets and ACKs.
 *
 * Error: per steady period, the rate error is below theta / (1 - theta) and the duration error
 * below theta (the paper's Theorems 2-3); docs/netsim.md "Wormhole acceleration".
 */
#include "pkt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct wh_port {
    uint32_t parent, size;   /* union-find over ports */
    uint32_t next;           /* the next port of its partition (a list from the root) */
    /* at a root */
    uint32_t tail;           /* the last port of the list */
    uint32_t fhead, ftail;   /* the partition's flows (flow.wh_next / wh_prev) */
    uint32_t nflows;
    uint8_t frozen;
    uint32_t gen;            /* bumping it cancels a pending resume */
    int64_t t0_ps;           /* frozen at */
    orr_event *parked;       /* its events while frozen */
    size_t nparked, capparked;
} wh_port;

static void ev_wh_resume(void *ctx, uint64_t arg);

int wh_is_resume(const orr_event *ev) { return ev->fn == ev_wh_resume; }

static void port_reset(wh_port *w, uint32_t p)
{
    w->parent = p;
    w->size = 1;
    w->next = PKT_NONE;
    w->tail = p;
    w->fhead = w->ftail = PKT_NONE;
    w->nflows = 0;
    w->frozen = 0;
}

void wh_create(orr_packet_sim *s)
{
    if (!s->cfg.accel) return;
    uint32_t n = s->t->n_links;
    s->wh = orr_xcalloc(n ? n : 1, sizeof *s->wh);
    for (uint32_t p = 0; p < n; p++) port_reset(&s->wh[p], p);
    s->acc.enabled = 1;
}

void wh_free(orr_packet_sim *s)
{
    if (!s->wh) return;
    for (uint32_t p = 0; p < s->t->n_links; p++) free(s->wh[p].parked);
    free(s->wh);
    s->wh = NULL;
}

static uint32_t find(wh_port *w, uint32_t p)
{
    while (w[p].parent != p) {
        w[p].parent = w[w[p].parent].parent; /* path halving */
        p = w[p].parent;
    }
    return p;
}

/* Joins the partitions of roots a and b; returns the new root. */
static uint32_t unite(orr_packet_sim *s, uint32_t a, uint32_t b)
{
    wh_port *w = s->wh;
    if (w[a].size < w[b].size) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    w[b].parent = a;
    w[a].size += w[b].size;
    w[w[a].tail].next = b;
    w[a].tail = w[b].tail;
    if (w[b].fhead != PKT_NONE) {
        if (w[a].fhead == PKT_NONE) {
            w[a].fhead = w[b].fhead;
        } else {
            F(s, w[a].ftail)->wh_next = w[b].fhead;
            F(s, w[b].fhead)->wh_prev = w[a].ftail;
        }
        w[a].ftail = w[b].ftail;
    }
    w[a].nflows += w[b].nflows;
    w[b].fhead = w[b].ftail = PKT_NONE;
    w[b].nflows = 0;
    return a;
}

/* A new steady-state window for flow f (the contention it sees has changed). */
static void window_reset(flow *f)
{
    f->win_n = 0;
    f->steady = 0;
}

static void windows_reset(orr_packet_sim *s, uint32_t r)
{
    for (uint32_t i = s->wh[r].fhead; i != PKT_NONE; i = F(s, i)->wh_next) window_reset(F(s, i));
}

/* The ports of flow f: both paths, each link with its reverse. fn(s, link, arg) for each. */
static void flow_ports(orr_packet_sim *s, const flow *f, void (*fn)(orr_packet_sim *, uint32_t, void *), void *arg)
{
    for (uint32_t i = 0; i < f->nroute; i++) {
        fn(s, s->routes[f->route + i], arg);
        fn(s, s->routes[f->route + i] ^ 1u, arg);
    }
    for (uint32_t i = 0; i < f->naroute; i++) {
        fn(s, s->routes[f->aroute + i], arg);
        fn(s, s->routes[f->aroute + i] ^ 1u, arg);
    }
}

static void resume(orr_packet_sim *s, uint32_t r, int early);
static uint32_t join(orr_packet_sim *s, uint32_t id, flow *f);
static void maybe_freeze(orr_packet_sim *s, uint32_t r);

static void wake_port(orr_packet_sim *s, uint32_t l, void *arg)
{
    (void)arg;
    if (l >= s->t->n_links) return;
    uint32_t r = find(s->wh, l);
    if (s->wh[r].frozen) resume(s, r, 1);
}

typedef struct join_ctx {
    uint32_t root, busy;
} join_ctx;

static void join_port(orr_packet_sim *s, uint32_t l, void *arg)
{
    join_ctx *j = arg;
    if (l >= s->t->n_links) return;
    uint32_t r = find(s->wh, l);
    if (r == j->root) return;
    if (s->wh[r].nflows) j->busy++;
    j->root = unite(s, j->root, r);
}

/* Puts flow id into the partition of its ports, uniting them; returns how many partitions with
 * flows it joined (0: it forms a new one). */
static uint32_t join(orr_packet_sim *s, uint32_t id, flow *f)
{
    join_ctx j = {find(s->wh, f->nic), 0};
    j.busy = s->wh[j.root].nflows ? 1 : 0;
    flow_ports(s, f, join_port, &j);
    wh_port *w = &s->wh[j.root];
    f->wh_next = PKT_NONE;
    f->wh_prev = w->ftail;
    if (w->ftail == PKT_NONE) w->fhead = id;
    else F(s, w->ftail)->wh_next = id;
    w->ftail = id;
    w->nflows++;
    return j.busy;
}

void wh_flow_start(orr_packet_sim *s, uint32_t id, flow *f, flow *prev)
{
    if (!s->wh) return;
    flow_ports(s, f, wake_port, NULL);
    uint32_t busy = join(s, id, f);
    if (busy == 0) s->acc.partitions++;
    else s->acc.merges += busy - 1;
    uint32_t r = find(s->wh, f->nic);
    f->qp_next = PKT_NONE;
    if (!prev) {
        windows_reset(s, r);
        return;
    }
    /* The next message on a queue pair: the connection's steady state goes on (its CC state did,
     * cc_continue), and the partition's contention is what it was, so nothing is reset. */
    prev->qp_next = id;
    window_reset(f);
    f->steady = prev->steady;
    f->steady_Bps = prev->steady_Bps;
    f->steady_rate_Bps = prev->steady_rate_Bps;
}

void wh_flow_started(orr_packet_sim *s, flow *f)
{
    if (s->wh && f->steady) maybe_freeze(s, find(s->wh, f->nic));
}

void wh_flow_finish(orr_packet_sim *s, uint32_t id, flow *f)
{
    if (!s->wh || !f->started || f->memo_state == MEMO_GHOST) return;
    uint32_t r = find(s->wh, f->nic);
    wh_port *w = &s->wh[r];
    if (w->frozen) resume(s, r, 1);
    if (f->wh_prev == PKT_NONE) w->fhead = f->wh_next;
    else F(s, f->wh_prev)->wh_next = f->wh_next;
    if (f->wh_next == PKT_NONE) w->ftail = f->wh_prev;
    else F(s, f->wh_next)->wh_prev = f->wh_prev;
    w->nflows--;
    s->acc.flow_ps += (double)(f->finish_ps - f->start_ps);
    (void)id;
    uint32_t head = w->fhead;
    /* its queue pair goes on with a started message: the contention has not changed */
    int same = f->qp_next != PKT_NONE && F(s, f->qp_next)->started;
    for (uint32_t p = r, next; p != PKT_NONE; p = next) { /* take the partition apart */
        next = s->wh[p].next;
        port_reset(&s->wh[p], p);
    }
    /* and put its other flows back: it may have split in two or more (kept exact, §4.1) */
    uint32_t parts = 0;
    for (uint32_t i = head, next; i != PKT_NONE; i = next) {
        flow *g = F(s, i);
        next = g->wh_next;
        if (!same) window_reset(g); /* the contention it sees has changed */
        parts += join(s, i, g) == 0;
    }
    if (parts > 1) s->acc.splits += parts - 1;
}

/* ---- freezing and resuming ---- */

typedef struct part_ctx {
    orr_packet_sim *s;
    uint32_t root;
} part_ctx;

static int event_in_partition(void *ctx, const orr_event *ev)
{
    part_ctx *c = ctx;
    uint32_t idx;
    int kind = pkt_event_owner(c->s, ev, &idx);
    if (kind == 1) return idx < c->s->t->n_links && find(c->s->wh, idx) == c->root;
    if (kind == 2) return idx < c->s->nflows && find(c->s->wh, F(c->s, idx)->nic) == c->root;
    return 0;
}

static void freeze(orr_packet_sim *s, uint32_t r, int64_t dt_ps)
{
    wh_port *w = &s->wh[r];
    w->frozen = 1;
    w->t0_ps = s->e->now_ps;
    w->gen++;
    w->nparked = 0;
    part_ctx c = {s, r};
    orr_engine_take(s->e, event_in_partition, &c, &w->parked, &w->nparked, &w->capparked);
    orr_engine_at(s->e, s->e->now_ps + dt_ps, ev_wh_resume, s, (uint64_t)r | ((uint64_t)w->gen << 32));
    s->acc.fast_forwards++;
}

/* Has flow g's rate left its last steady window's band since (in the window now filling)? Then
 * its steady state is over, though no window has said so yet. */
static int drifted(const orr_packet_sim *s, const flow *g)
{
    double band = s->cfg.ss_theta * g->steady_rate_Bps;
    return g->win_n > 0 && (g->win_max_Bps > g->steady_rate_Bps + band || g->win_min_Bps < g->steady_rate_Bps - band);
}

/* Fast-forwards partition r if all its flows are steady and the next disruptive event is far
 * enough ahead to be worth the freeze (8 base RTTs of its slowest-reacting flow). */
static void maybe_freeze(orr_packet_sim *s, uint32_t r)
{
    wh_port *w = &s->wh[r];
    if (w->frozen) return;
    double dt_ps = INFINITY;
    int64_t rtt_ps = 0;
    for (uint32_t i = w->fhead; i != PKT_NONE; i = F(s, i)->wh_next) {
        const flow *g = F(s, i);
        if (!g->steady || !(g->steady_Bps > 0) || drifted(s, g)) return;
        uint64_t left = g->size - g->snd_nxt;
        if (left <= g->mtu) return; /* about to end: its last packets are simulated */
        double t = (double)(left - g->mtu) / g->steady_Bps * 1e12;
        if (t < dt_ps) dt_ps = t;
        if (g->base_rtt_ps > rtt_ps) rtt_ps = g->base_rtt_ps;
    }
    if (!(dt_ps >= 8.0 * (double)rtt_ps) || !(dt_ps >= 1.0) || dt_ps > 1e18) return;
    freeze(s, r, (int64_t)dt_ps);
}

/* Every absolute time of flow f moves dt later (the partition was paused). */
static void shift_flow(flow *f, int64_t dt)
{
    f->next_avail_ps += dt;
    if (f->nack_timer_ps) f->nack_timer_ps += dt;
    f->cc.alpha_next_ps += dt;
    f->cc.decrease_next_ps += dt;
    if (f->cc.rp_due_ps) f->cc.rp_due_ps += dt;
    for (uint32_t k = 0; k < f->cc.nhop && k < PKT_MAX_INT_HOPS; k++) f->cc.hop[k].t_ps += dt;
}

static void shift_packet(pkt *p, int64_t dt)
{
    if (p->nhop == 0) p->ts_ps += dt; /* TIMELY's send time shares its place with INT's records */
    for (uint32_t k = 0; k < p->nhop && k < PKT_MAX_INT_HOPS; k++) p->ih[k].t_ps += dt;
}

static void shift_port(orr_packet_sim *s, port *pt, int64_t dt)
{
    if (pt->busy_until_ps > 0) pt->busy_until_ps += dt;
    if (pt->wake_at_ps != INT64_MAX) pt->wake_at_ps += dt;
    for (int q = 0; q < PKT_NPRIO; q++)
        for (uint32_t i = pt->qhead[q]; i != PKT_NONE; i = P(s, i)->next) shift_packet(P(s, i), dt);
    for (uint32_t i = 0; i < pt->wire_n; i++) {
        struct wire_slot *ws = &pt->wire[(pt->wire_head + i) & (pt->wire_cap - 1)];
        ws->t_ps += dt;
        shift_packet(P(s, ws->id), dt);
    }
}

/* The wire bytes that bytes of payload of flow f put on each port of its paths (data packets on
 * the data path, ACKs on the ACK path), for the port statistics and link windows. */
void wh_account_ports(orr_packet_sim *s, const flow *f, uint64_t bytes, int64_t t0, int64_t t1)
{
    double pkts = ceil((double)bytes / (double)f->mtu);
    double data = (double)bytes + pkts * (PKT_DATA_HDR_BYTES + s->int_bytes);
    uint64_t per_ack = s->cfg.ack_interval_bytes > f->mtu ? s->cfg.ack_interval_bytes : f->mtu;
    double acks = ceil((double)bytes / (double)per_ack) * (PKT_ACK_BYTES + s->int_bytes);
    for (uint32_t i = 0; i < f->nroute; i++) {
        uint32_t l = s->routes[f->route + i];
        s->ports[l].ff_tx_bytes += data;
        if (s->bins) orr_link_bins_spread(s->bins, l, t0, t1, data);
    }
    for (uint32_t i = 0; i < f->naroute; i++) {
        uint32_t l = s->routes[f->aroute + i];
        s->ports[l].ff_tx_bytes += acks;
        if (s->bins) orr_link_bins_spread(s->bins, l, t0, t1, acks);
    }
}

/* Partition r resumes now: its flows advance by what they sent at their steady rates while it was
 * frozen, its times move by that long, its events go back on the engine. */
static void resume(orr_packet_sim *s, uint32_t r, int early)
{
    wh_port *w = &s->wh[r];
    int64_t t0 = w->t0_ps, now = s->e->now_ps, dt = now - t0;
    w->gen++; /* a pending resume event is stale now */
    if (early) s->acc.skip_backs++;
    s->acc.skipped_ps += dt;
    for (uint32_t i = w->fhead; i != PKT_NONE; i = F(s, i)->wh_next) {
        flow *f = F(s, i);
        uint64_t b = wh_frozen_progress(s, f);
        f->size -= b;
        f->ff_bytes += b;
        s->acc.skipped_bytes += b;
        s->acc.steady_flow_ps += (double)dt;
        if (b) wh_account_ports(s, f, b, t0, now);
        shift_flow(f, dt);
    }
    w->frozen = 0;
    for (uint32_t p = r; p != PKT_NONE; p = s->wh[p].next) {
        port *pt = &s->ports[p];
        if (pt->busy_until_ps >= t0) pt->saturated_ps += dt; /* it was sending when frozen */
        shift_port(s, pt, dt);
    }
    for (size_t i = 0; i < w->nparked; i++) {
        w->parked[i].t_ps += dt;
        orr_engine_put(s->e, &w->parked[i]);
    }
    w->nparked = 0;
    windows_reset(s, r);
}

static void ev_wh_resume(void *ctx, uint64_t arg)
{
    orr_packet_sim *s = ctx;
    uint32_t r = (uint32_t)arg;
    if (s->stopped || !s->wh || r >= s->t->n_links) return;
    wh_port *w = &s->wh[r];
    if (!w->frozen || w->parent != r || (uint32_t)(arg >> 32) != w->gen) return;
    resume(s, r, 0);
}

int wh_flow_frozen(const orr_packet_sim *s, const flow *f)
{
    if (!s->wh || !f->started || f->finished || f->memo_state == MEMO_GHOST) return 0;
    uint32_t r = f->nic;
    while (s->wh[r].parent != r) r = s->wh[r].parent;
    return s->wh[r].frozen;
}

uint64_t wh_frozen_progress(const orr_packet_sim *s, const flow *f)
{
    if (!s->wh || !f->started || f->finished) return 0;
    uint32_t r = f->nic;
    while (s->wh[r].parent != r) r = s->wh[r].parent;
    const wh_port *w = &s->wh[r];
    if (!w->frozen) return 0;
    uint64_t left = f->size - f->snd_nxt, most = left > f->mtu ? left - f->mtu : 0;
    double want = floor(f->steady_Bps * (double)(s->e->now_ps - w->t0_ps) * 1e-12);
    return want >= (double)most ? most : (uint64_t)want;
}

/* ---- steady-state identification ---- */

uint32_t wh_window(const orr_packet_config *c, uint32_t mtu_bytes)
{
    uint64_t l = ((uint64_t)c->ss_window * ORR_SS_SAMPLE_BYTES + mtu_bytes - 1) / (mtu_bytes ? mtu_bytes : 1);
    return l < ORR_SS_WINDOW_MIN ? ORR_SS_WINDOW_MIN : l > c->ss_window ? c->ss_window : (uint32_t)l;
}

void wh_on_ack(orr_packet_sim *s, uint32_t id, flow *f)
{
    (void)id;
    if (!s->wh || f->finished) return;
    int64_t now = s->e->now_ps;
    double rate = f->rate_Bps;
    uint32_t l = wh_window(&s->cfg, f->mtu);
    if (f->win_n == 0) {
        f->win_t0_ps = now;
        f->win_una0 = f->snd_una;
        f->win_cnp0 = f->n_cnp;
        f->win_min_Bps = f->win_max_Bps = rate;
        f->win_sum_Bps = 0;
    }
    if (f->win_n == l / 2) { /* the middle of the window: the first half's goodput */
        f->win_tmid_ps = now;
        f->win_unamid = f->snd_una;
    }
    if (rate < f->win_min_Bps) f->win_min_Bps = rate;
    if (rate > f->win_max_Bps) f->win_max_Bps = rate;
    f->win_sum_Bps += rate;
    if (++f->win_n < l) return;
    double theta = s->cfg.ss_theta, mean = f->win_sum_Bps / (double)f->win_n;
    f->win_n = 0;
    int64_t t1 = f->win_tmid_ps - f->win_t0_ps, t2 = now - f->win_tmid_ps;
    double g1 = t1 > 0 ? (double)(f->win_unamid - f->win_una0) * 1e12 / (double)t1 : 0;
    double g2 = t2 > 0 ? (double)(f->snd_una - f->win_unamid) * 1e12 / (double)t2 : 0;
    double good = (double)(f->snd_una - f->win_una0) * 1e12 / (double)(now - f->win_t0_ps > 0 ? now - f->win_t0_ps : 1);
    f->steady = mean > 0 && good > 0 && (f->win_max_Bps - f->win_min_Bps) / mean < theta && fabs(g1 - g2) < theta * good;
    /* DCQCN moves its rate on timers far longer than a window (RP_TIMER: hundreds of
     * microseconds, a window tens), so a flat window is not enough. A rate more than theta below
     * its target is recovering from a cut, and the next RP_TIMER moves it half way to the target
     * (frozen there, a partition ran at its cut rate); a CNP in the window means a cut in it, or
     * one due at the next RATE_DECREASE_INTERVAL (docs/netsim.md "Wormhole acceleration"). */
    if (s->cfg.cc == ORR_CC_DCQCN &&
        (f->cc.target_Bps - f->rate_Bps > theta * f->rate_Bps || f->n_cnp != f->win_cnp0))
        f->steady = 0;
    f->steady_Bps = good;
    f->steady_rate_Bps = mean;
    if (f->steady) maybe_freeze(s, find(s->wh, f->nic));
}
