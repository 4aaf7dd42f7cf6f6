/*
 * sim.c - the packet engine: RDMA NICs, links, shared-buffer switches with PFC and ECN.
 *
 * Behaviour follows the HPCC ns-3 code lineage (docs/netsim.md says where it differs):
 * - A host NIC port sends its control queue (ACK/NACK) first, then round-robin over its queue
 *   pairs that have data, are not PFC-paused, not window-bound and whose pacing time has come.
 *   Each data packet carries min(MTU, bytes left) payload; the QP's next send time is now +
 *   packet bytes / QP rate.
 * - A link serialises one packet at a time (bytes / rate) and delivers it after the propagation
 *   delay; a switch forwards it when it has fully arrived (store and forward).
 * - A switch admits a packet into its shared buffer by the ingress rules of the reference MMU
 *   (per-port reserve, dynamic PFC threshold (free buffer >> 3), headroom), pauses the upstream
 *   port when an ingress queue crosses the threshold and resumes it 3 KB below; at dequeue it
 *   marks ECN by RED on the egress queue and stamps INT (HPCC).
 * - The receiver ACKs in-order data every L2_ACK_INTERVAL bytes (and at chunk boundaries), NACKs
 *   a gap (at most once per NACK_INTERVAL for the same sequence), flags a CNP on the ACK when data
 *   came ECN-marked; the sender goes back to the last ACK on a NACK or after RTO without progress.
 *
 * Events (all on the orr_engine given at creation, ctx = the simulator):
 *   ev_flow_start(flow), ev_tx_done(port), ev_link_arrive(port | packet << 32), ev_nic_wake(port|gen), flow timers
 *   (flow|kind|gen), ev_stop. A port with an empty queue sends an arriving packet at once without
 *   a tx-done event; a tx-done event is scheduled only when something waits behind the packet.
 */
#define _DEFAULT_SOURCE 1
#include "pkt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- pools ---- */

#define PKT_HUGE_BYTES ((size_t)2 << 20)

/* n bytes, aligned to a cache line; from 1 MiB up, on 2 MiB pages where the system has them (a
 * hint: the packets in flight and the ports of a large fabric span thousands of 4 KiB pages, and
 * each event's first touch of one would also miss the TLB). Freed with free(). */
void *pkt_alloc_big(size_t n)
{
    if (n < PKT_HUGE_BYTES / 2) return orr_xaligned(64, (n + 63) & ~(size_t)63);
    size_t m = (n + PKT_HUGE_BYTES - 1) & ~(PKT_HUGE_BYTES - 1);
    void *p = orr_xaligned(PKT_HUGE_BYTES, m);
#ifdef MADV_HUGEPAGE
    (void)madvise(p, m, MADV_HUGEPAGE);
#endif
    return p;
}

static uint32_t pkt_alloc(orr_packet_sim *s)
{
    if (s->pfree != PKT_NONE) {
        uint32_t id = s->pfree;
        s->pfree = P(s, id)->next;
        return id;
    }
    if (s->pcount == (uint32_t)(s->n_pchunks << PKT_CHUNK_SHIFT)) {
        if (s->n_pchunks == s->cap_pchunks)
            orr_grow((void **)&s->pchunks, &s->cap_pchunks, s->n_pchunks + 1, sizeof *s->pchunks);
        s->pchunks[s->n_pchunks++] = pkt_alloc_big(sizeof(pkt) << PKT_CHUNK_SHIFT);
    }
    return s->pcount++;
}

static void pkt_free(orr_packet_sim *s, uint32_t id)
{
    P(s, id)->next = s->pfree;
    s->pfree = id;
}

static uint32_t flow_alloc(orr_packet_sim *s)
{
    if (s->nflows == (uint32_t)(s->n_fchunks << FLOW_CHUNK_SHIFT)) {
        if (s->n_fchunks == s->cap_fchunks)
            orr_grow((void **)&s->fchunks, &s->cap_fchunks, s->n_fchunks + 1, sizeof *s->fchunks);
        s->fchunks[s->n_fchunks++] = orr_xcalloc((size_t)1 << FLOW_CHUNK_SHIFT, sizeof(flow));
    }
    return s->nflows++;
}

double pkt_rand(orr_packet_sim *s)
{
    s->rng += 0x9e3779b97f4a7c15ull;
    return (double)(orr_hash64(s->rng) >> 11) * (1.0 / 9007199254740992.0);
}

double pkt_red_prob(uint64_t qbytes, uint64_t kmin, uint64_t kmax, double pmax)
{
    if (qbytes > kmax) return 1.0;
    if (qbytes > kmin && kmax > kmin) return pmax * (double)(qbytes - kmin) / (double)(kmax - kmin);
    return 0.0;
}

/* ---- port queues ---- */

static void q_push(orr_packet_sim *s, port *pt, int q, uint32_t id)
{
    pkt *p = P(s, id);
    p->next = PKT_NONE;
    if (pt->qtail[q] == PKT_NONE) pt->qhead[q] = id;
    else P(s, pt->qtail[q])->next = id;
    pt->qtail[q] = id;
    pt->egress_bytes[q] += p->size;
    pt->queued_bytes += p->size;
}

static uint32_t q_pop(orr_packet_sim *s, port *pt, int q)
{
    uint32_t id = pt->qhead[q];
    pkt *p = P(s, id);
    pt->qhead[q] = p->next;
    if (p->next == PKT_NONE) pt->qtail[q] = PKT_NONE;
    pt->egress_bytes[q] -= p->size;
    pt->queued_bytes -= p->size;
    return id;
}

/* ---- switch MMU (shared buffer, dynamic PFC threshold) ---- */

static uint64_t mmu_pfc_threshold(const orr_packet_sim *s, uint32_t node)
{
    int64_t free_bytes = (int64_t)s->cfg.buffer_bytes - (int64_t)s->static_used[node] - (int64_t)s->shared_used[node];
    return free_bytes > 0 ? (uint64_t)free_bytes >> MMU_PFC_ALPHA_SHIFT : 0;
}

static uint64_t mmu_shared_used(const port *in, int q)
{
    return in->ingress_bytes[q] > MMU_RESERVE_BYTES ? in->ingress_bytes[q] - MMU_RESERVE_BYTES : 0;
}

static int mmu_admit(const orr_packet_sim *s, uint32_t node, const port *in, int q, uint32_t size)
{
    if (!s->cfg.pfc_enabled) return s->buf_used[node] + size <= s->cfg.buffer_bytes;
    return !(size + in->hdrm_bytes[q] > in->headroom &&
             size + mmu_shared_used(in, q) > mmu_pfc_threshold(s, node));
}

static void mmu_ingress_add(orr_packet_sim *s, uint32_t node, port *in, int q, uint32_t size)
{
    uint64_t nb = in->ingress_bytes[q] + size;
    s->buf_used[node] += size;
    if (nb <= MMU_RESERVE_BYTES) {
        in->ingress_bytes[q] = nb;
    } else if (s->cfg.pfc_enabled && nb - MMU_RESERVE_BYTES > mmu_pfc_threshold(s, node)) {
        in->hdrm_bytes[q] += size;
    } else {
        in->ingress_bytes[q] = nb;
        uint64_t over = nb - MMU_RESERVE_BYTES;
        s->shared_used[node] += size < over ? size : over;
    }
}

static void mmu_ingress_remove(orr_packet_sim *s, uint32_t node, port *in, int q, uint32_t size)
{
    uint64_t from_hdrm = in->hdrm_bytes[q] < size ? in->hdrm_bytes[q] : size;
    uint64_t above = in->ingress_bytes[q] > MMU_RESERVE_BYTES ? in->ingress_bytes[q] - MMU_RESERVE_BYTES : 0;
    uint64_t from_shared = size - from_hdrm < above ? size - from_hdrm : above;
    in->hdrm_bytes[q] -= from_hdrm;
    in->ingress_bytes[q] -= size - from_hdrm;
    s->shared_used[node] -= from_shared;
    s->buf_used[node] -= size;
}

static void port_kick(orr_packet_sim *s, uint32_t l);
static void ev_link_arrive(void *ctx, uint64_t l);

static void ev_tx_done(void *ctx, uint64_t l);

/* On a large fabric the packets in flight and the ports outgrow the caches, and each event's first
 * read of its port and its packet is a miss. Where the engine knows its next event without work
 * (orr_engine_peek; what this event schedules comes later, so it stays next), its port and packet
 * are fetched into the cache while this event runs. Only a hint: no effect on what is computed. */
static inline void prefetch_next(const orr_packet_sim *s)
{
    const orr_event *nx = orr_engine_peek(s->e);
    if (!nx || nx->ctx != (const void *)s) return;
    if (nx->fn == ev_link_arrive) {
        const port *pt = &s->ports[(uint32_t)nx->arg];
        PKT_PREFETCH(P(s, (uint32_t)(nx->arg >> 32)));
        PKT_PREFETCH(&pt->events);
        if (pt->wire_n > 1) PKT_PREFETCH(&pt->wire[(pt->wire_head + 1) & (pt->wire_cap - 1)]); /* the one after */
    } else if (nx->fn == ev_tx_done) {
        const port *pt = &s->ports[(uint32_t)nx->arg];
        PKT_PREFETCH(pt);
        PKT_PREFETCH(&pt->busy_until_ps);
    }
}

static void enqueue(orr_packet_sim *s, uint32_t l, int q, uint32_t id)
{
    q_push(s, &s->ports[l], q, id);
    port_kick(s, l);
}

/* Ifindex of link l at its source node, as ns-3 numbers devices (1-based). */
static uint32_t port_ifindex(const orr_topo *t, uint32_t l)
{
    uint32_t v = t->links[l].src;
    for (uint32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++)
        if (t->out[i] == l) return i - t->out_start[v] + 1;
    return 0;
}

/* Sends a PFC pause (or resume) for priority q upstream over the reverse of ingress link in. */
static void send_pfc(orr_packet_sim *s, uint32_t in, int q, int pause)
{
    uint32_t id = pkt_alloc(s);
    pkt *p = P(s, id);
    memset(p, 0, offsetof(pkt, ih));
    p->kind = PK_PFC;
    p->pg = (uint8_t)q;
    p->pause = (uint8_t)pause;
    p->size = PKT_PFC_BYTES;
    p->flow = PKT_NONE;
    p->in_link = PKT_NONE;
    s->st.pfc_frames++;
    enqueue(s, in ^ 1u, 0, id);
}

static void check_pause(orr_packet_sim *s, uint32_t node, uint32_t in, int q)
{
    port *pi = &s->ports[in];
    if (!s->cfg.pfc_enabled || pi->up_paused[q]) return;
    if (pi->hdrm_bytes[q] > 0 || mmu_shared_used(pi, q) >= mmu_pfc_threshold(s, node)) {
        pi->up_paused[q] = 1;
        send_pfc(s, in, q, 1);
    }
}

static void check_resume(orr_packet_sim *s, uint32_t node, uint32_t in, int q)
{
    port *pi = &s->ports[in];
    if (!pi->up_paused[q] || pi->hdrm_bytes[q] > 0) return;
    uint64_t shared = mmu_shared_used(pi, q);
    if (shared == 0 || shared + MMU_RESUME_OFFSET_BYTES <= mmu_pfc_threshold(s, node)) {
        pi->up_paused[q] = 0;
        send_pfc(s, in, q, 0);
    }
}

/* ---- sending ---- */

static inline int flow_win_bound(const orr_packet_sim *s, const flow *f)
{
    if (!s->cfg.has_win || f->win == 0) return 0;
    uint64_t w = f->win;
    if (s->cfg.var_win) {
        w = (uint64_t)((double)f->win * f->rate_Bps / f->max_rate_Bps);
        if (w == 0) w = 1;
    }
    return f->snd_nxt - f->snd_una >= w;
}

static void ev_nic_wake(void *ctx, uint64_t arg)
{
    orr_packet_sim *s = ctx;
    if (s->stopped) return;
    uint32_t l = (uint32_t)arg;
    port *pt = &s->ports[l];
    if ((uint32_t)(arg >> 32) != pt->wake_gen) return;
    s->st.events++;
    pt->events++;
    pt->wake_at_ps = INT64_MAX;
    port_kick(s, l);
}

static void nic_wake_at(orr_packet_sim *s, uint32_t l, port *pt, int64_t t)
{
    if (pt->wake_at_ps <= t) return;
    pt->wake_at_ps = t;
    pt->wake_gen++;
    orr_engine_at(s->e, t, ev_nic_wake, s, (uint64_t)l | ((uint64_t)pt->wake_gen << 32));
}

static uint32_t make_data(orr_packet_sim *s, uint32_t fid, flow *f)
{
    uint32_t id = pkt_alloc(s);
    pkt *p = P(s, id);
    uint64_t left = f->size - f->snd_nxt;
    uint32_t payload = left < f->mtu ? (uint32_t)left : f->mtu;
    p->flow = fid;
    p->seq = f->snd_nxt;
    p->ts_ps = s->e->now_ps;
    p->in_link = PKT_NONE;
    p->size = payload + PKT_DATA_HDR_BYTES + s->int_bytes;
    p->kind = PK_DATA;
    p->pg = p->prio = f->pg;
    p->ecn = p->cnp = p->hop = p->nhop = p->pause = 0;
    f->snd_nxt += payload;
    f->n_data++;
    if (f->snd_nxt >= f->size) {
        f->allsent_ps = s->e->now_ps;
        if (f->memo_state == MEMO_REC) memo_on_all_sent(s, f);
    }
    f->next_avail_ps = s->e->now_ps + (int64_t)llround((double)p->size * 1e12 / f->rate_Bps);
    s->st.data_packets++;
    return id;
}

/* The next packet a host NIC port sends: control queue first, then queue pairs round robin. */
static uint32_t nic_dequeue(orr_packet_sim *s, uint32_t l, port *pt)
{
    if (pt->qhead[0] != PKT_NONE) return q_pop(s, pt, 0);
    int64_t now = s->e->now_ps, min_avail = INT64_MAX;
    uint32_t n = pt->nqp;
    for (uint32_t i = 1; i <= n; i++) {
        uint32_t idx = (pt->rr_qp + i) % n;
        uint32_t fid = pt->qps[idx];
        flow *f = F(s, fid);
        if (pt->paused[f->pg] || f->snd_nxt >= f->size || flow_win_bound(s, f)) continue;
        if (s->cfg.rate_bound && f->next_avail_ps > now) {
            if (f->next_avail_ps < min_avail) min_avail = f->next_avail_ps;
            continue;
        }
        pt->rr_qp = idx;
        f->events++;
        return make_data(s, fid, f);
    }
    if (min_avail != INT64_MAX) nic_wake_at(s, l, pt, min_avail);
    return PKT_NONE;
}

/* The next packet a switch port sends: priority 0 first, then round robin over unpaused queues.
 * Dequeue releases the buffer, marks ECN, may resume the upstream, and stamps INT. */
static uint32_t switch_dequeue(orr_packet_sim *s, uint32_t l, port *pt)
{
    int q = -1;
    if (pt->qhead[0] != PKT_NONE) {
        q = 0;
    } else {
        for (int i = 1; i <= PKT_NPRIO; i++) {
            int c = (pt->rr + i) % PKT_NPRIO;
            if (c != 0 && !pt->paused[c] && pt->qhead[c] != PKT_NONE) {
                q = c;
                break;
            }
        }
        if (q < 0) return PKT_NONE;
        pt->rr = (uint8_t)q;
    }
    uint32_t id = q_pop(s, pt, q);
    pkt *p = P(s, id);
    uint32_t node = s->t->links[l].src;
    if (q != 0) {
        port *in = &s->ports[p->in_link];
        mmu_ingress_remove(s, node, in, q, p->size);
        if (s->cfg.ecn_enabled && p->kind == PK_DATA && pt->egress_bytes[q] > pt->kmin) {
            double prob = pkt_red_prob(pt->egress_bytes[q], pt->kmin, pt->kmax, pt->pmax);
            if (prob >= 1.0 || pkt_rand(s) < prob) {
                p->ecn = 1;
                s->st.ecn_marks++;
                flow *mf = F(s, p->flow);
                mf->n_ecn++;
                if (mf->memo_state == MEMO_REC) memo_noisy(s, p->flow, mf);
            }
        }
        check_resume(s, node, p->in_link, q);
    } else if (p->in_link != PKT_NONE) {
        s->buf_used[node] -= p->size;
    }
    if (s->cfg.cc == ORR_CC_HPCC && p->kind == PK_DATA && p->nhop < PKT_MAX_INT_HOPS)
        p->ih[p->nhop++] = (int_hop){s->e->now_ps, pt->tx_bytes, pt->queued_bytes, pt->rate_Bps};
    return id;
}

static void ev_tx_done(void *ctx, uint64_t l)
{
    orr_packet_sim *s = ctx;
    if (s->stopped) return;
    prefetch_next(s);
    s->st.events++;
    s->ports[l].events++;
    s->ports[l].tx_pending = 0;
    port_kick(s, (uint32_t)l);
}

static void wire_push(port *pt, int64_t t_ps, uint32_t id)
{
    if (pt->wire_n == pt->wire_cap) {
        uint32_t cap = pt->wire_cap ? 2 * pt->wire_cap : 16;
        struct wire_slot *w = orr_xmalloc((size_t)cap * sizeof *w);
        for (uint32_t i = 0; i < pt->wire_n; i++) w[i] = pt->wire[(pt->wire_head + i) & (pt->wire_cap - 1)];
        if (pt->wire_own) free(pt->wire); /* else its first ring, in the sim's wire_mem */
        pt->wire = w;
        pt->wire_own = 1;
        pt->wire_cap = cap;
        pt->wire_head = 0;
    }
    pt->wire[(pt->wire_head + pt->wire_n++) & (pt->wire_cap - 1)] = (struct wire_slot){t_ps, id}; /* cap: a power of 2 */
}

/* Starts sending on port l if it is idle and has something to send. */
static void port_kick(orr_packet_sim *s, uint32_t l)
{
    port *pt = &s->ports[l];
    int64_t now = s->e->now_ps;
    if (now < pt->busy_until_ps) {
        if (!pt->tx_pending) {
            pt->tx_pending = 1;
            orr_engine_at(s->e, pt->busy_until_ps, ev_tx_done, s, l);
        }
        return;
    }
    uint32_t id = pt->is_host_nic ? nic_dequeue(s, l, pt) : switch_dequeue(s, l, pt);
    if (id == PKT_NONE) return;
    pkt *p = P(s, id);
    int64_t tx = (int64_t)llround((double)p->size * pt->ps_per_byte);
    if (pt->busy_until_ps > 0 && now == pt->busy_until_ps) pt->saturated_ps += tx; /* back to back */
    pt->tx_bytes += p->size;
    if (s->bins) orr_link_bins_spread(s->bins, l, now, now + tx, (double)p->size); /* while on the wire */
    pt->busy_until_ps = now + tx;
    /* Arrivals on a link come in send order, so the link keeps them in a ring and only the head
     * has an engine event: the event queue holds one entry per busy link, not one per packet. */
    wire_push(pt, now + tx + pt->delay_ps, id);
    if (pt->wire_n == 1) orr_engine_at(s->e, now + tx + pt->delay_ps, ev_link_arrive, s, (uint64_t)l | (uint64_t)id << 32);
    if (!pt->tx_pending && (pt->queued_bytes > 0 || (pt->is_host_nic && pt->nqp > 0))) {
        pt->tx_pending = 1;
        orr_engine_at(s->e, pt->busy_until_ps, ev_tx_done, s, l);
    }
}

/* ---- flows ---- */

void pkt_flow_timer(orr_packet_sim *s, uint32_t id, int kind, int64_t delay_ps, orr_event_fn fn)
{
    flow *f = F(s, id);
    uint64_t arg = (uint64_t)id | ((uint64_t)kind << 32) | ((uint64_t)(f->tgen[kind] & 0xffffffu) << 40);
    orr_engine_after(s->e, delay_ps, fn, s, arg);
}

flow *pkt_timer_flow(orr_packet_sim *s, uint64_t arg, uint32_t *id)
{
    if (s->stopped) return NULL;
    *id = (uint32_t)arg;
    int kind = (int)((arg >> 32) & 0xff);
    flow *f = F(s, *id);
    if (f->finished || (uint32_t)(arg >> 40) != (f->tgen[kind] & 0xffffffu)) return NULL;
    s->st.events++;
    f->events++;
    return f;
}

void pkt_change_rate(orr_packet_sim *s, flow *f, double new_Bps)
{
    /* Move the next send time as if the last packet had been paced at the new rate (reference). */
    double mtu = (double)f->mtu;
    f->next_avail_ps += (int64_t)llround(mtu * 1e12 / new_Bps - mtu * 1e12 / f->rate_Bps);
    f->rate_Bps = new_Bps;
}

static void nic_remove_qp(orr_packet_sim *s, flow *f, uint32_t fid)
{
    port *pt = &s->ports[f->nic];
    for (uint32_t i = 0; i < pt->nqp; i++)
        if (pt->qps[i] == fid) {
            memmove(&pt->qps[i], &pt->qps[i + 1], (pt->nqp - i - 1) * sizeof *pt->qps);
            pt->nqp--;
            if (pt->rr_qp >= i && pt->rr_qp > 0) pt->rr_qp--;
            return;
        }
}

void pkt_flow_complete(orr_packet_sim *s, uint32_t fid, flow *f)
{
    f->finished = 1;
    f->finish_ps = s->e->now_ps;
    nic_remove_qp(s, f, fid);
    if (s->nfinished == s->capfinished)
        orr_grow((void **)&s->finished, &s->capfinished, s->nfinished + 1, sizeof *s->finished);
    s->finished[s->nfinished++] = fid;
    s->st.flows_finished++;
    s->st.last_finish_ps = s->e->now_ps;
    if (s->memo) memo_flow_finish(s, fid, f);
    wh_flow_finish(s, fid, f);
}

static void ev_rto(void *ctx, uint64_t arg)
{
    orr_packet_sim *s = ctx;
    uint32_t id;
    flow *f = pkt_timer_flow(s, arg, &id);
    if (!f) return;
    if (f->snd_una == f->rto_una && f->snd_nxt > f->snd_una) {
        f->snd_nxt = f->snd_una;
        f->retransmits++;
        port_kick(s, f->nic);
    }
    f->rto_una = f->snd_una;
    pkt_flow_timer(s, id, TIMER_RTO, s->cfg.rto_ps, ev_rto);
}

/* Flow id goes on its NIC: its partition, its CC state (continuing prev's queue pair, or fresh, or
 * as it is when resumed), its timers, its first packet. */
static void flow_go(orr_packet_sim *s, uint32_t id, flow *f, flow *prev, int resumed)
{
    wh_flow_start(s, id, f, prev);
    port *pt = &s->ports[f->nic];
    if (pt->nqp == pt->capqp) {
        size_t cap = pt->capqp;
        orr_grow((void **)&pt->qps, &cap, pt->nqp + 1, sizeof *pt->qps);
        pt->capqp = (uint32_t)cap;
    }
    pt->qps[pt->nqp++] = id;
    if (resumed) {
        cc_resume_timers(s, id, f);
    } else if (prev) {
        flow view;
        cc_continue(s, id, f, memo_prev_view(s, prev, &view));
    } else {
        cc_init(s, f);
    }
    if (s->cfg.rto_ps > 0) pkt_flow_timer(s, id, TIMER_RTO, s->cfg.rto_ps, ev_rto);
    port_kick(s, f->nic);
    wh_flow_started(s, f);
}

static void ev_flow_start(void *ctx, uint64_t id)
{
    orr_packet_sim *s = ctx;
    if (s->stopped) return;
    flow *f = F(s, (uint32_t)id);
    s->st.events++;
    f->events++;
    if (f->finished) return; /* fast-forwarded to its end before it started */
    f->started = 1;
    s->st.flows_started++;
    flow *prev = f->prev_qp != PKT_NONE ? F(s, f->prev_qp) : NULL;
    int cont;
    if (s->memo) {
        if (memo_flow_start(s, (uint32_t)id, f, prev, &cont)) return; /* replayed from the memo */
    } else {
        cont = prev && prev->started && prev->snd_nxt >= prev->size; /* the previous message is all sent */
    }
    flow_go(s, (uint32_t)id, f, cont ? prev : NULL, 0);
}

void pkt_flow_go(orr_packet_sim *s, uint32_t id, flow *f, int resumed) { flow_go(s, id, f, NULL, resumed); }

/* ---- receiving ---- */

/* Data at the destination: advance in order, ACK/NACK by turning the packet around. */
static void receive_data(orr_packet_sim *s, uint32_t id, pkt *p)
{
    uint32_t fid = p->flow;
    flow *f = F(s, fid);
    const orr_packet_config *c = &s->cfg;
    int reply = -1, call_done = 0;
    f->events++;
    if (p->ecn) f->ecn_pending = 1;
    if (p->seq == f->rcv_nxt) {
        f->rcv_nxt += pkt_payload(s, p);
        if (f->rcv_nxt >= f->size && !f->recv_done) {
            f->recv_done = 1;
            f->recv_done_ps = s->e->now_ps;
            if (s->memo) memo_on_recv_done(s, fid, f);
            call_done = f->done != NULL;
        }
        if (f->rcv_nxt >= f->milestone) {
            f->milestone = (f->rcv_nxt / c->ack_interval_bytes + 1) * c->ack_interval_bytes;
            reply = PK_ACK;
        } else if ((c->chunk_bytes && f->rcv_nxt % c->chunk_bytes == 0) || f->rcv_nxt >= f->size) {
            reply = PK_ACK;
        }
    } else if (p->seq > f->rcv_nxt) {
        if (s->e->now_ps >= f->nack_timer_ps || f->last_nack != f->rcv_nxt) {
            f->nack_timer_ps = s->e->now_ps + c->nack_interval_ps;
            f->last_nack = f->rcv_nxt;
            if (c->back_to_zero && c->chunk_bytes) f->rcv_nxt = f->rcv_nxt / c->chunk_bytes * c->chunk_bytes;
            reply = PK_NACK;
        }
    }
    if (reply < 0) {
        pkt_free(s, id);
    } else {
        p->kind = (uint8_t)reply;
        p->seq = f->rcv_nxt;
        p->cnp = f->ecn_pending;
        if (p->cnp) s->st.cnps++, f->n_cnp++;
        f->n_ack++;
        f->ecn_pending = 0;
        p->ecn = 0;
        p->size = PKT_ACK_BYTES + s->int_bytes;
        p->hop = 0;
        p->prio = c->ack_high_prio ? 0 : f->pg;
        p->in_link = PKT_NONE;
        s->st.ack_packets++;
        enqueue(s, s->routes[f->aroute], 0, id);
    }
    if (call_done) f->done(f->ctx, f->arg);
}

/* ACK or NACK at the sender. */
static void receive_ack(orr_packet_sim *s, uint32_t id, pkt *p)
{
    uint32_t fid = p->flow;
    flow *f = F(s, fid);
    f->events++;
    if (f->finished) {
        pkt_free(s, id);
        return;
    }
    uint64_t seq = p->seq;
    if (s->cfg.back_to_zero && s->cfg.chunk_bytes) seq = seq / s->cfg.chunk_bytes * s->cfg.chunk_bytes;
    if (seq > f->snd_una) f->snd_una = seq;
    if (f->snd_nxt < f->snd_una) f->snd_nxt = f->snd_una;
    if (p->kind == PK_NACK) {
        if (f->snd_nxt > f->snd_una) f->retransmits++;
        f->snd_nxt = f->snd_una;
    }
    cc_on_ack(s, fid, f, p);
    pkt_free(s, id);
    if (f->snd_una >= f->size) pkt_flow_complete(s, fid, f);
    port_kick(s, f->nic);
    if (!f->finished) wh_on_ack(s, fid, f);
}

static void receive_pfc(orr_packet_sim *s, uint32_t l, pkt *p)
{
    uint32_t target = l ^ 1u; /* our egress port toward the node that sent the frame */
    port *pt = &s->ports[target];
    pt->paused[p->pg] = p->pause;
    if (p->pause) s->st.pfc_pauses++;
    else s->st.pfc_resumes++;
    if (s->pfc_log) {
        uint32_t node = s->t->links[l].dst;
        orr_buf_printf(s->pfc_log, "%lld %u %d %u %d\n", (long long)(s->e->now_ps / ORR_PS_PER_NS), node,
                       s->t->kind[node] == ORR_NODE_HOST ? 0 : 1, port_ifindex(s->t, target), p->pause ? 1 : 0);
    }
    if (!p->pause) port_kick(s, target);
}

/* A packet at a switch: route, admit into the buffer, account, maybe pause upstream, queue. */
static void switch_receive(orr_packet_sim *s, uint32_t id, pkt *p, uint32_t l, uint32_t node)
{
    const flow *f = F(s, p->flow);
    p->hop++;
    uint32_t out;
    if (p->kind == PK_DATA) out = p->hop < f->nroute ? s->routes[f->route + p->hop] : PKT_NONE;
    else out = p->hop < f->naroute ? s->routes[f->aroute + p->hop] : PKT_NONE;
    if (out == PKT_NONE) { /* cannot happen with a finished topology; drop rather than misroute */
        s->st.drops++;
        pkt_free(s, id);
        return;
    }
    int q = p->prio;
    port *in = &s->ports[l];
    if (q != 0) {
        if (!mmu_admit(s, node, in, q, p->size)) {
            s->st.drops++;
            pkt_free(s, id);
            return;
        }
        mmu_ingress_add(s, node, in, q, p->size);
        check_pause(s, node, l, q);
    } else {
        s->buf_used[node] += p->size;
    }
    p->in_link = l;
    enqueue(s, out, q, id);
}

/* The packet at the head of link l's wire has arrived at links[l].dst. */
static void ev_link_arrive(void *ctx, uint64_t arg)
{
    orr_packet_sim *s = ctx;
    if (s->stopped) return;
    uint32_t l = (uint32_t)arg, id = (uint32_t)(arg >> 32); /* the packet at the head of the wire */
    prefetch_next(s);
    port *pt = &s->ports[l];
    pt->wire_head = (pt->wire_head + 1) & (pt->wire_cap - 1);
    if (--pt->wire_n) {
        const struct wire_slot *w = &pt->wire[pt->wire_head];
        orr_engine_at(s->e, w->t_ps, ev_link_arrive, s, (uint64_t)l | (uint64_t)w->id << 32);
    }
    pkt *p = P(s, id);
    s->st.events++;
    pt->events++;
    if (p->kind == PK_PFC) {
        receive_pfc(s, l, p);
        pkt_free(s, id);
        return;
    }
    if (p->kind == PK_DATA && pt->error_rate > 0 && pkt_rand(s) < pt->error_rate) {
        s->st.loss_drops++;
        pkt_free(s, id);
        return;
    }
    uint32_t node = s->t->links[l].dst;
    if (s->t->kind[node] != ORR_NODE_HOST) switch_receive(s, id, p, l, node);
    else if (p->kind == PK_DATA) receive_data(s, id, p);
    else receive_ack(s, id, p);
}

static void ev_stop(void *ctx, uint64_t arg)
{
    orr_packet_sim *s = ctx;
    s->stopped = 1;
}

int pkt_event_owner(const orr_packet_sim *s, const orr_event *ev, uint32_t *idx)
{
    if (ev->ctx != (const void *)s || ev->fn == ev_flow_start || ev->fn == ev_stop || wh_is_resume(ev) ||
        memo_is_event(ev))
        return 0;
    *idx = (uint32_t)ev->arg;
    return ev->fn == ev_tx_done || ev->fn == ev_link_arrive || ev->fn == ev_nic_wake ? 1 : 2;
}

/* ---- set-up ---- */

/* Base RTT, bottleneck rate and hop count of a path (the reference's pairRtt: propagation both
 * ways plus one MTU's serialisation per hop). */
static void path_metrics(const orr_packet_sim *s, const uint32_t *links, int n, int64_t *rtt_ps, double *bw_Bps)
{
    int64_t delay = 0;
    double tx = 0, bw = INFINITY;
    for (int i = 0; i < n; i++) {
        const port *pt = &s->ports[links[i]];
        delay += pt->delay_ps;
        tx += (double)s->cfg.mtu_bytes * 1e12 / pt->rate_Bps;
        if (pt->rate_Bps < bw) bw = pt->rate_Bps;
    }
    *rtt_ps = 2 * delay + (int64_t)llround(tx);
    *bw_Bps = bw;
}

/* The reference's maxRtt / maxBdp over host pairs (window and base RTT with GLOBAL_T 1). */
static void global_window(orr_packet_sim *s)
{
    const orr_topo *t = s->t;
    uint32_t path[ORR_PKT_PATH_MAX];
    /* All pairs up to 256 hosts; beyond, evenly spaced sources so that at most ~64K paths are walked
     * (the topologies are regular, so the longest path is found from a few sources). */
    uint32_t sources = t->n_hosts <= 256 ? t->n_hosts : 65536 / t->n_hosts;
    if (sources == 0) sources = 1;
    uint32_t step = (t->n_hosts + sources - 1) / sources;
    for (uint32_t a = 0; a < t->n_hosts; a += step)
        for (uint32_t b = 0; b < t->n_hosts; b++) {
            if (a == b) continue;
            int n = orr_topo_path(t, a, b, 0, 0, path, ORR_PKT_PATH_MAX);
            if (n <= 0) continue;
            int64_t rtt;
            double bw;
            path_metrics(s, path, n, &rtt, &bw);
            uint64_t bdp = (uint64_t)((double)rtt * 1e-12 * bw);
            if (rtt > s->max_rtt_ps) s->max_rtt_ps = rtt;
            if (bdp > s->max_win) s->max_win = bdp;
        }
}

static void red_for_rate(const orr_packet_config *c, double rate, port *pt)
{
    if (c->n_red == 0) {
        pt->kmin = pt->kmax = UINT64_MAX;
        pt->pmax = 0;
        return;
    }
    uint32_t best = 0;
    for (uint32_t i = 0; i < c->n_red; i++) {
        if (fabs(c->red_rate_Bps[i] - rate) < 1e-6 * rate) {
            best = i;
            break;
        }
        if (c->red_rate_Bps[i] <= rate && c->red_rate_Bps[i] >= c->red_rate_Bps[best]) best = i;
    }
    pt->kmin = c->kmin_bytes[best];
    pt->kmax = c->kmax_bytes[best];
    pt->pmax = c->pmax[best];
}

orr_packet_sim *orr_packet_sim_create(orr_engine *e, const orr_topo *t, const orr_packet_config *cfg,
                                      orr_err *err)
{
    if (!t->finished) {
        orr_fail(err, "packet engine: topology is not finished");
        return NULL;
    }
    if (cfg->mtu_bytes == 0 || cfg->ack_interval_bytes == 0) {
        orr_fail(err, "packet engine: PACKET_PAYLOAD_SIZE and L2_ACK_INTERVAL must be positive");
        return NULL;
    }
    orr_packet_sim *s = orr_xcalloc(1, sizeof *s);
    s->e = e;
    s->t = t;
    s->cfg = *cfg;
    s->pfree = PKT_NONE;
    s->rng = cfg->seed;
    s->stop_ps = INT64_MAX;
    s->events0 = e->events_run;
    s->int_bytes = cfg->cc == ORR_CC_HPCC ? PKT_INT_HPCC_BYTES : cfg->cc == ORR_CC_TIMELY ? PKT_INT_TS_BYTES : 0;
    size_t port_bytes = (t->n_links ? t->n_links : 1) * sizeof *s->ports;
    s->ports = pkt_alloc_big(port_bytes);
    memset(s->ports, 0, port_bytes);
    /* every port's first wire ring in one block (large pages): PKT_WIRE_SLOTS slots each */
    s->wire_mem = pkt_alloc_big((t->n_links ? t->n_links : 1) * (size_t)PKT_WIRE_SLOTS * sizeof *s->wire_mem);
    for (uint32_t l = 0; l < t->n_links; l++) {
        s->ports[l].wire = s->wire_mem + (size_t)l * PKT_WIRE_SLOTS;
        s->ports[l].wire_cap = PKT_WIRE_SLOTS;
    }
    s->shared_used = orr_xcalloc(t->n_nodes, sizeof *s->shared_used);
    s->static_used = orr_xcalloc(t->n_nodes, sizeof *s->static_used);
    s->buf_used = orr_xcalloc(t->n_nodes, sizeof *s->buf_used);
    for (uint32_t l = 0; l < t->n_links; l++) {
        const orr_link *k = &t->links[l];
        port *pt = &s->ports[l];
        for (int q = 0; q < PKT_NPRIO; q++) pt->qhead[q] = pt->qtail[q] = PKT_NONE;
        int tier = k->tier < ORR_TIER_COUNT ? k->tier : ORR_TIER_AGG;
        pt->rate_Bps = k->rate_Bps * (cfg->rate_scale[tier] > 0 ? cfg->rate_scale[tier] : 1.0);
        pt->ps_per_byte = 1e12 / pt->rate_Bps;
        pt->delay_ps = k->delay_ps;
        pt->error_rate = k->error_rate > 0 ? k->error_rate : cfg->error_rate;
        pt->is_host_nic = t->kind[k->src] == ORR_NODE_HOST;
        pt->wake_at_ps = INT64_MAX;
        /* The reference's headroom (3 x rate x delay), but never less than three full data
         * packets: the one arriving, the one the upstream port is sending when the pause reaches
         * it, and one for the pause frame's own wait; on links with (next to) no delay, e.g. the
         * zero-delay fabrics of `orrery predict`, the reference's formula gives none. */
        uint64_t min_headroom = 3ull * (cfg->mtu_bytes + PKT_DATA_HDR_BYTES + s->int_bytes);
        pt->headroom = (uint64_t)(pt->rate_Bps * (double)k->delay_ps * 1e-12 * 3);
        if (pt->headroom < min_headroom) pt->headroom = min_headroom;
        red_for_rate(cfg, pt->rate_Bps, pt);
        if (t->kind[k->dst] != ORR_NODE_HOST) s->static_used[k->dst] += pt->headroom + MMU_RESERVE_BYTES;
    }
    global_window(s);
    wh_create(s);
    memo_create(s);
    return s;
}

void orr_packet_sim_free(orr_packet_sim *s)
{
    if (!s) return;
    for (uint32_t l = 0; l < s->t->n_links; l++) {
        free(s->ports[l].qps);
        if (s->ports[l].wire_own) free(s->ports[l].wire);
    }
    free(s->ports);
    free(s->wire_mem);
    free(s->shared_used);
    free(s->static_used);
    free(s->buf_used);
    for (size_t i = 0; i < s->n_pchunks; i++) free(s->pchunks[i]);
    free(s->pchunks);
    for (size_t i = 0; i < s->n_fchunks; i++) free(s->fchunks[i]);
    free(s->fchunks);
    free(s->routes);
    free(s->finished);
    wh_free(s);
    memo_free(s);
    free(s);
}

/* Payload per full packet of a flow of `bytes` (orr_packet_config.min_packets_per_flow). */
static uint32_t flow_mtu(const orr_packet_config *c, uint64_t bytes)
{
    uint32_t n = c->min_packets_per_flow;
    if (n == 0 || bytes / n >= c->mtu_bytes) return c->mtu_bytes;
    uint64_t m = (bytes + n - 1) / n;
    if (m < c->min_payload_bytes) m = c->min_payload_bytes;
    return m < c->mtu_bytes ? (uint32_t)m : c->mtu_bytes;
}

static uint32_t store_route(orr_packet_sim *s, const uint32_t *links, int n)
{
    if (s->nroutes + (size_t)n > s->caproutes)
        orr_grow((void **)&s->routes, &s->caproutes, s->nroutes + (size_t)n, sizeof *s->routes);
    memcpy(s->routes + s->nroutes, links, (size_t)n * sizeof *links);
    uint32_t off = (uint32_t)s->nroutes;
    s->nroutes += (size_t)n;
    return off;
}

uint32_t orr_packet_add_flow(orr_packet_sim *s, uint32_t src_host, uint32_t dst_host, uint64_t bytes,
                             int64_t start_ps, uint8_t pg, uint16_t sport, uint16_t dport, uint64_t hash,
                             orr_event_fn done, void *ctx, uint64_t arg)
{
    uint32_t path[ORR_PKT_PATH_MAX], back[ORR_PKT_PATH_MAX];
    int n = orr_topo_path(s->t, src_host, dst_host, hash, 1, path, ORR_PKT_PATH_MAX);
    int nb = orr_topo_path(s->t, dst_host, src_host, orr_hash64(hash ^ 0xacull), 1, back, ORR_PKT_PATH_MAX);
    return orr_packet_add_flow_on(s, src_host, dst_host, bytes, start_ps, pg, sport, dport, path, n, back, nb, done,
                                  ctx, arg);
}

uint32_t orr_packet_add_flow_on(orr_packet_sim *s, uint32_t src_host, uint32_t dst_host, uint64_t bytes,
                                int64_t start_ps, uint8_t pg, uint16_t sport, uint16_t dport, const uint32_t *path,
                                int n, const uint32_t *back, int nb, orr_event_fn done, void *ctx, uint64_t arg)
{
    uint32_t id = flow_alloc(s);
    flow *f = F(s, id);
    memset(f, 0, sizeof *f);
    f->src = src_host;
    f->dst = dst_host;
    f->sport = sport;
    f->dport = dport;
    f->pg = pg < PKT_NPRIO ? pg : PKT_NPRIO - 1;
    f->size = bytes;
    f->mtu = flow_mtu(&s->cfg, bytes);
    f->milestone = s->cfg.ack_interval_bytes;
    f->start_ps = start_ps > s->e->now_ps ? start_ps : s->e->now_ps;
    f->finish_ps = f->recv_done_ps = -1;
    f->prev_qp = PKT_NONE;
    f->done = done;
    f->ctx = ctx;
    f->arg = arg;
    if (n <= 0 || nb <= 0 || bytes == 0) { /* same host or nothing to send: done at once */
        f->finished = f->recv_done = 1;
        f->finish_ps = f->recv_done_ps = f->start_ps;
        if (done) orr_engine_at(s->e, f->start_ps, done, ctx, arg);
        return id;
    }
    f->route = store_route(s, path, n);
    f->nroute = (uint32_t)n;
    f->aroute = store_route(s, back, nb);
    f->naroute = (uint32_t)nb;
    f->nic = path[0];
    f->max_rate_Bps = f->rate_Bps = s->ports[path[0]].rate_Bps;
    int64_t rtt;
    double bw;
    path_metrics(s, path, n, &rtt, &bw);
    if (s->cfg.global_t) {
        f->win = s->max_win;
        f->base_rtt_ps = s->max_rtt_ps;
    } else {
        f->win = (uint64_t)((double)rtt * 1e-12 * bw);
        f->base_rtt_ps = rtt;
    }
    uint64_t npkts = (bytes + f->mtu - 1) / f->mtu;
    double total = (double)bytes + (double)npkts * PKT_DATA_HDR_BYTES;
    f->standalone_ps = rtt + (int64_t)llround(total * 1e12 / bw);
    if (s->memo && f->start_ps > s->e->now_ps) memo_note_future(s, f);
    orr_engine_at(s->e, f->start_ps, ev_flow_start, s, id);
    return id;
}

uint32_t orr_packet_flow_count(const orr_packet_sim *s) { return s->nflows; }

void orr_packet_flow_continue(orr_packet_sim *s, uint32_t id, uint32_t prev)
{
    if (id < s->nflows && prev < id) F(s, id)->prev_qp = prev;
}

void orr_packet_flow_get(const orr_packet_sim *s, uint32_t id, orr_packet_flow_info *o)
{
    const flow *f = F(s, id);
    /* fast-forwarded bytes were taken off size (they come before the sequence numbers in use); a
     * frozen flow is where its steady rate has taken it by now */
    uint64_t ff = f->ff_bytes + wh_frozen_progress(s, f) + memo_ghost_progress(s, f);
    *o = (orr_packet_flow_info){f->src, f->dst, f->sport, f->dport, f->pg, f->size + f->ff_bytes, f->snd_nxt + ff,
                                f->snd_una + ff, f->rcv_nxt + ff, f->start_ps, f->recv_done_ps, f->finish_ps, f->standalone_ps,
                                f->rate_Bps, f->retransmits};
}

const uint32_t *orr_packet_finished(const orr_packet_sim *s, uint32_t *n)
{
    *n = (uint32_t)s->nfinished;
    return s->finished;
}

uint64_t orr_packet_flow_advance(orr_packet_sim *s, uint32_t id, uint64_t bytes)
{
    flow *f = F(s, id);
    if (f->finished || f->memo_state == MEMO_GHOST || f->snd_nxt != f->snd_una || f->rcv_nxt != f->snd_una) return 0;
    uint64_t n = f->size - f->snd_una < bytes ? f->size - f->snd_una : bytes;
    f->snd_nxt = f->snd_una = f->rcv_nxt = f->snd_una + n;
    f->milestone = (f->rcv_nxt / s->cfg.ack_interval_bytes + 1) * s->cfg.ack_interval_bytes;
    if (f->rcv_nxt >= f->size) {
        f->recv_done = 1;
        f->recv_done_ps = s->e->now_ps;
        pkt_flow_complete(s, id, f);
        if (f->done) f->done(f->ctx, f->arg);
    }
    return n;
}

void orr_packet_set_stop(orr_packet_sim *s, int64_t stop_ps)
{
    s->stop_ps = stop_ps;
    orr_engine_at(s->e, stop_ps, ev_stop, s, 0);
}

void orr_packet_stats_get(const orr_packet_sim *s, orr_packet_stats *out) { *out = s->st; }

void orr_packet_accel_stats_get(const orr_packet_sim *s, orr_packet_accel_stats *out) { *out = s->acc; }

void orr_packet_port_stats_get(const orr_packet_sim *s, uint32_t link, orr_packet_port_stats *out)
{
    const port *pt = &s->ports[link];
    *out = (orr_packet_port_stats){pt->tx_bytes + (uint64_t)llround(pt->ff_tx_bytes), pt->saturated_ps, pt->events};
}

void orr_packet_record_pfc(orr_packet_sim *s, orr_buf *out) { s->pfc_log = out; }

void orr_packet_set_link_bins(orr_packet_sim *s, orr_link_bins *bins) { s->bins = bins; }
