/*
 * memo.c - memoization of unsteady phases (paper 000 §4.2-4.4) for the packet engine: a unit of
 * flows that was simulated once is replayed, not simulated, when it starts again in the same
 * state. docs/netsim.md "Memoization".
 *
 * The unit. A flow that starts with no other flow sending data over any of the ports of its data
 * path (its "data partition" is the flow alone) and whose congestion control is DCQCN. The
 * partition of wormhole.c also joins flows that only share a port with ACKs (a ring's steps,
 * linked by their ACK paths); a high-priority ACK delays a data packet by its own 62 bytes on the
 * wire (1.5 ns at 340 Gb/s), so the memo treats those flows as independent (with ACKs in the data
 * queues, ACK_HIGH_PRIO 0, data on another's ACK path or ACKs on another's data path is a conflict
 * too; so are PFC pause and injected loss on its data path). It is what repeats in
 * LLM traffic: an NCCL ring step between two GPUs, thousands of times per iteration. The phase
 * memoized is the whole life of the flow, from its start to its last ACK (an unsteady phase that
 * ends with the flow, §4.3 "the partition encounters a flow completion event").
 *
 * The key. The canonical form of the unit's Flow Conflict Graph (fcg.c, nauty) with, per flow,
 * its quantised state: size and packet payload; the rates and delays of the ports of its data and
 * ACK paths; its DCQCN state (rate and target relative to line rate to 2^-20, alpha to 1/4096,
 * increase stage, pending CNP bits, the phases of its alpha, decrease and increase timers to 1/8
 * of their periods); and what is still on its path: a flow continuing a queue pair whose previous
 * message has sent everything but not yet delivered it starts behind that message's last packets,
 * so the key holds the time since that message sent its last byte (to 1 ns), whether it took the
 * same path and the size of its last packet.
 *
 * The value. What happened until the flow finished, relative to its start: when the last byte was
 * received (the callback of orrery predict), when it had sent everything, when the last ACK came
 * back; its congestion-control state (timers relative to its start) and rate at those two
 * instants; its packet, ACK, CNP and ECN counts; the back-to-back time of its data ports.
 *
 * Recording. A flow that misses is simulated packet by packet and recorded at its end if it stayed
 * alone on its data path all along (a flow that starts on one of its data ports while it is still
 * delivering makes it "disturbed": not recorded) and RED never marked its packets (RED draws at
 * random: that outcome is one sample, not the unit's; "noisy").
 *
 * Replay. A flow that hits is a ghost: no packets; two events, at its receive and finish instants,
 * run its callback and complete it with the recorded state (its port byte counters and link windows
 * get the wire bytes it stands for, the packet counters its packets). A flow whose key is being
 * recorded by a flow that started no later follows it: its events are scheduled as the recording
 * reaches the same instants after its own start, so one flow per key is simulated in a run, and a
 * second run with --memo FILE repeats the first's results. A flow that starts on a ghost's data
 * path while the ghost is still sending turns it back into a simulated flow: it has sent (and
 * delivered) the share of its bytes the recorded phase had sent by then, in whole packets, and goes
 * on packet by packet from there at its start state (counter memo_aborts); so do the followers of
 * a recording given up, in an event of their own at that instant.
 *
 * Size: at most ORR_MEMO_MAX_ENTRIES entries (ORRERY_MAX_MEMO); new keys beyond are simulated.
 *
 * Persistence (--memo FILE): the memo is a SQLite table (cfg, key, val) read at the start and
 * written at the end; cfg is a hash of everything outside the key that changes an outcome (the
 * ports' rates, delays and RED thresholds, the config's CC, packet, buffer and timer settings, the
 * Wormhole parameters), so a file serves every topology and configuration without mixing them.
 * Values read from a file are checked (times in order and bounded, rates finite) before use.
 */
#include "pkt_internal.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_FORMAT 1u
#define MEMO_SAT_HOPS 8 /* data-path ports whose back-to-back time a value keeps */
/* Entries kept at the most (about 800 bytes each: two CC states and a key): 256 MB. Flows of new
 * keys beyond it are simulated and not recorded; a file's entries beyond it are not read. */
#define ORR_MEMO_MAX_ENTRIES 320000u
#define ORR_MEMO_MAX_PS (1000ll * ORR_PS_PER_S) /* bound on any time in a value read from a file */

typedef struct memo_val {
    int64_t recv_dt_ps, sent_dt_ps, fin_dt_ps;
    double sent_rate_Bps, end_rate_Bps;
    cc_state sent_cc, end_cc;  /* absolute times relative to the flow's start */
    uint64_t data_pkts, acks, cnps, ecn_marks;
    int64_t sat_ps[MEMO_SAT_HOPS]; /* time the first ports of its data path sent back to back */
} memo_val;

typedef struct memo_entry {
    uint64_t hash;
    size_t key_off;
    uint32_t key_len;
    uint32_t owner;            /* the flow recording it, or PKT_NONE */
    uint32_t followers;        /* replays waiting for the recording (flow.memo_next), or PKT_NONE */
    uint8_t valid, has_sent, from_file;
    int64_t sat0_ps[MEMO_SAT_HOPS]; /* recording: its data ports' back-to-back time at its start */
    memo_val v;
} memo_entry;

struct pkt_memo {
    memo_entry *e;
    size_t n, cap;
    uint8_t *arena;
    size_t alen, acap;
    orr_map idx;               /* key hash -> entry */
    uint32_t *dcount;          /* [n_links] flows delivering data over each port */
    uint32_t *owner;           /* [n_links] the last flow that started delivering over it */
    uint32_t *acount, *aowner; /* [n_links] the same for ACK paths (flows not finished) */
    struct future { int64_t *t_ps; uint32_t n, cap; uint8_t sorted; } *future; /* [n_links] starts of
                               * flows added ahead of time, on their data ports (NULL: none yet) */
    uint8_t *k;                /* the key being built */
    size_t klen, kcap;
    uint64_t cfg_hash;
    size_t max_entries;        /* ORR_MEMO_MAX_ENTRIES (ORRERY_MAX_MEMO) */
};

/* ---- keys ---- */

static void kput(pkt_memo *m, const void *p, size_t n)
{
    if (m->klen + n > m->kcap) orr_grow((void **)&m->k, &m->kcap, m->klen + n, 1);
    memcpy(m->k + m->klen, p, n);
    m->klen += n;
}

static void kput64(pkt_memo *m, uint64_t x) { kput(m, &x, sizeof x); }

static uint64_t q_ratio(double x, double of, double scale)
{
    return of > 0 ? (uint64_t)llround(x / of * scale) : 0;
}

/* The phase of a periodic timer due at due_ps (period step) seen from now, in eighths. */
static uint64_t q_phase(int64_t due_ps, int64_t now, int64_t step)
{
    if (step <= 0) return 0;
    int64_t d = (due_ps - now) % step;
    if (d < 0) d += step;
    return (uint64_t)(d * 8 / step);
}

/* A key's hash, a word at a time (keys are whole words; lookup compares the bytes, so a collision
 * costs a miss, never a wrong entry; files keep keys, not hashes). */
static uint64_t bytes_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, sizeof w);
        h = (h ^ w) * 1099511628211ull;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return orr_hash64(h);
}

static uint64_t hmix(uint64_t h, uint64_t x) { return orr_hash64(h ^ orr_hash64(x + 0x9e3779b97f4a7c15ull)); }
static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* The quantised state of flow f (its CC state already what it starts with) as a vertex signature;
 * pred: the queue pair's previous message still delivering (its last packets are ahead), or NULL. */
static void vertex_sig(orr_packet_sim *s, pkt_memo *m, const flow *f, const flow *pred, int64_t pred_sent_ps)
{
    int64_t now = s->e->now_ps;
    const cc_state *c = &f->cc;
    kput64(m, f->size);
    kput64(m, f->mtu);
    kput64(m, f->pg);
    kput64(m, (uint64_t)f->nroute << 32 | f->naroute);
    for (uint32_t i = 0; i < f->nroute; i++) {
        const port *pt = &s->ports[s->routes[f->route + i]];
        kput64(m, dbits(pt->rate_Bps));
        kput64(m, (uint64_t)pt->delay_ps);
    }
    for (uint32_t i = 0; i < f->naroute; i++) {
        const port *pt = &s->ports[s->routes[f->aroute + i]];
        kput64(m, dbits(pt->rate_Bps));
        kput64(m, (uint64_t)pt->delay_ps);
    }
    kput64(m, dbits(f->max_rate_Bps));
    kput64(m, q_ratio(f->rate_Bps, f->max_rate_Bps, 1048576.0));
    kput64(m, c->first_cnp);
    if (!c->first_cnp) {
        kput64(m, q_ratio(c->target_Bps, f->max_rate_Bps, 1048576.0));
        kput64(m, (uint64_t)llround(c->alpha * 4096.0));
        kput64(m, c->rp_stage > s->cfg.fast_recovery_times ? s->cfg.fast_recovery_times + 1 : c->rp_stage);
        kput64(m, (uint64_t)c->alpha_cnp << 2 | (uint64_t)c->decrease_cnp << 1 | c->decrease_armed);
        kput64(m, q_phase(c->alpha_next_ps, now, s->cfg.alpha_resume_interval_ps));
        kput64(m, q_phase(c->decrease_next_ps, now, s->cfg.rate_decrease_interval_ps));
        kput64(m, c->rp_due_ps ? 1 + q_phase(c->rp_due_ps, now, s->cfg.rp_timer_ps) : 0);
    }
    if (pred) {
        uint64_t psize = pred->size + pred->ff_bytes, last = psize % pred->mtu ? psize % pred->mtu : pred->mtu;
        int same = pred->nroute == f->nroute &&
                   memcmp(&s->routes[pred->route], &s->routes[f->route], f->nroute * sizeof *s->routes) == 0;
        kput64(m, 1 + (uint64_t)same);
        kput64(m, last);
        kput64(m, (uint64_t)((now - pred_sent_ps) / ORR_PS_PER_NS));
    } else {
        kput64(m, 0);
    }
}

/* The key of the unit of flow f: the canonical FCG of its flows (one here), each with its
 * signature, in canonical order, then the weights. */
static void unit_key(orr_packet_sim *s, pkt_memo *m, const flow *f, const flow *pred, int64_t pred_sent_ps)
{
    m->klen = 0;
    uint32_t n = 1, rank[1] = {0}, weight[1] = {0}, order[1];
    memo_fcg_canon(n, rank, weight, order);
    kput64(m, MEMO_FORMAT);
    kput64(m, n);
    for (uint32_t i = 0; i < n; i++) vertex_sig(s, m, f, pred, pred_sent_ps);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) kput64(m, weight[order[i] * n + order[j]]);
}

/* The entry of the key being built, or PKT_NONE; *h its hash. */
static uint32_t lookup(pkt_memo *m, uint64_t *h)
{
    *h = bytes_hash(m->k, m->klen);
    const uint32_t *i = orr_map_get(&m->idx, *h);
    if (!i) return PKT_NONE;
    const memo_entry *e = &m->e[*i];
    if (e->key_len != m->klen || memcmp(m->arena + e->key_off, m->k, m->klen) != 0) return UINT32_MAX - 1; /* collision */
    return *i;
}

static uint32_t insert(pkt_memo *m, uint64_t h, const uint8_t *key, size_t len)
{
    if (m->n == m->cap) orr_grow((void **)&m->e, &m->cap, m->n + 1, sizeof *m->e);
    if (m->alen + len > m->acap) orr_grow((void **)&m->arena, &m->acap, m->alen + len, 1);
    memcpy(m->arena + m->alen, key, len);
    memo_entry *e = &m->e[m->n];
    memset(e, 0, sizeof *e);
    e->hash = h;
    e->key_off = m->alen;
    e->key_len = (uint32_t)len;
    e->owner = e->followers = PKT_NONE;
    m->alen += len;
    orr_map_put(&m->idx, h, (uint32_t)m->n);
    return (uint32_t)m->n++;
}

/* ---- CC state relative to a flow's start ---- */

static void cc_shift(cc_state *c, int64_t dt)
{
    c->alpha_next_ps += dt;
    c->decrease_next_ps += dt;
    if (c->rp_due_ps) c->rp_due_ps += dt;
    for (uint32_t k = 0; k < c->nhop && k < PKT_MAX_INT_HOPS; k++) c->hop[k].t_ps += dt;
}

/* ---- setup ---- */

static uint64_t config_hash(const orr_packet_sim *s)
{
    const orr_packet_config *c = &s->cfg;
    uint64_t h = hmix(0x6d656d6fu, MEMO_FORMAT);
    h = hmix(h, sizeof(memo_val));
    uint64_t ints[] = {(uint64_t)c->cc, c->mtu_bytes, c->min_packets_per_flow, c->min_payload_bytes,
                       c->ack_interval_bytes, c->chunk_bytes, (uint64_t)c->back_to_zero, (uint64_t)c->ecn_enabled,
                       (uint64_t)c->pfc_enabled, c->buffer_bytes, (uint64_t)c->has_win, (uint64_t)c->global_t,
                       (uint64_t)c->var_win, (uint64_t)c->rate_bound, (uint64_t)c->ack_high_prio,
                       (uint64_t)c->clamp_target_rate, (uint64_t)c->fast_react, c->mi_thresh,
                       (uint64_t)c->alpha_resume_interval_ps, (uint64_t)c->rate_decrease_interval_ps,
                       (uint64_t)c->rp_timer_ps, c->fast_recovery_times, (uint64_t)c->nack_interval_ps,
                       (uint64_t)c->rto_ps, c->seed, (uint64_t)c->accel, c->ss_window, s->t->n_links, s->t->n_nodes};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) h = hmix(h, ints[i]);
    double dbl[] = {c->error_rate, c->u_target, c->ewma_gain, c->rate_ai_Bps, c->rate_hai_Bps, c->min_rate_Bps,
                    c->dctcp_rate_ai_Bps, c->rate_on_first_cnp, c->ss_theta};
    for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++) h = hmix(h, dbits(dbl[i]));
    for (uint32_t l = 0; l < s->t->n_links; l++) {
        const port *pt = &s->ports[l];
        h = hmix(h, (uint64_t)s->t->links[l].src << 32 | s->t->links[l].dst);
        h = hmix(h, dbits(pt->rate_Bps));
        h = hmix(h, (uint64_t)pt->delay_ps);
        h = hmix(h, pt->kmin);
        h = hmix(h, pt->kmax);
        h = hmix(h, dbits(pt->pmax));
        h = hmix(h, dbits(pt->error_rate));
    }
    for (uint32_t v = 0; v < s->t->n_nodes; v++) h = hmix(h, (uint64_t)s->t->kind[v]);
    return h;
}

void memo_create(orr_packet_sim *s)
{
    if (!s->cfg.accel || !s->cfg.memo) return;
    pkt_memo *m = orr_xcalloc(1, sizeof *m);
    uint32_t n = s->t->n_links ? s->t->n_links : 1;
    m->dcount = orr_xcalloc(n, sizeof *m->dcount);
    m->owner = orr_xmalloc(n * sizeof *m->owner);
    m->acount = orr_xcalloc(n, sizeof *m->acount);
    m->aowner = orr_xmalloc(n * sizeof *m->aowner);
    for (uint32_t l = 0; l < n; l++) m->owner[l] = m->aowner[l] = PKT_NONE;
    m->cfg_hash = config_hash(s);
    m->max_entries = (size_t)orr_env_limit("ORRERY_MAX_MEMO", ORR_MEMO_MAX_ENTRIES);
    s->memo = m;
    s->acc.memo_enabled = 1;
}

void memo_free(orr_packet_sim *s)
{
    pkt_memo *m = s->memo;
    if (!m) return;
    free(m->e);
    free(m->arena);
    orr_map_free(&m->idx);
    free(m->dcount);
    free(m->owner);
    free(m->acount);
    free(m->aowner);
    if (m->future)
        for (uint32_t l = 0; l < s->t->n_links; l++) free(m->future[l].t_ps);
    free(m->future);
    free(m->k);
    free(m);
    s->memo = NULL;
}

/* ---- the data ports a flow delivers over ---- */

static int on_route(const orr_packet_sim *s, const flow *f, uint32_t l)
{
    for (uint32_t i = 0; i < f->nroute; i++)
        if (s->routes[f->route + i] == l) return 1;
    return 0;
}

/* Flow id stops using the n ports of routes[off..]: their counts and last users. */
static void ports_release(orr_packet_sim *s, uint32_t id, uint32_t off, uint32_t n, uint32_t *count, uint32_t *last)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = s->routes[off + i];
        if (count[l]) count[l]--;
        if (last[l] == id) last[l] = PKT_NONE;
    }
}

/* its data ports (once it has delivered everything), its ACK ports (once it has finished) */
static void links_release(orr_packet_sim *s, uint32_t id, flow *f)
{
    if (f->memo_links) ports_release(s, id, f->route, f->nroute, s->memo->dcount, s->memo->owner);
    f->memo_links = 0;
}

static void acks_release(orr_packet_sim *s, uint32_t id, flow *f)
{
    if (f->memo_alinks) ports_release(s, id, f->aroute, f->naroute, s->memo->acount, s->memo->aowner);
    f->memo_alinks = 0;
}

void memo_note_future(orr_packet_sim *s, const flow *f)
{
    pkt_memo *m = s->memo;
    if (!m->future) m->future = orr_xcalloc(s->t->n_links ? s->t->n_links : 1, sizeof *m->future);
    for (uint32_t i = 0; i < f->nroute; i++) {
        struct future *u = &m->future[s->routes[f->route + i]];
        if (u->n == u->cap) {
            size_t cap = u->cap;
            orr_grow((void **)&u->t_ps, &cap, (size_t)u->n + 1, sizeof *u->t_ps);
            u->cap = (uint32_t)cap;
        }
        u->t_ps[u->n++] = f->start_ps;
        u->sorted = 0;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Will a flow added ahead of time start on a data port of f after now and no later than end_ps?
 * (A replay it entered would be turned back into a flow at an estimated state: not replayed.) */
static int future_entry(orr_packet_sim *s, const flow *f, int64_t end_ps)
{
    pkt_memo *m = s->memo;
    int64_t now = s->e->now_ps;
    if (!m->future) return 0;
    for (uint32_t i = 0; i < f->nroute; i++) {
        struct future *u = &m->future[s->routes[f->route + i]];
        if (!u->n) continue;
        if (!u->sorted) {
            qsort(u->t_ps, u->n, sizeof *u->t_ps, cmp_i64);
            u->sorted = 1;
        }
        uint32_t lo = 0, hi = u->n; /* the first start after now */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (u->t_ps[mid] <= now) lo = mid + 1;
            else hi = mid;
        }
        if (lo < u->n && u->t_ps[lo] <= end_ps) return 1;
    }
    return 0;
}

/* ---- ghosts ---- */

static void ev_memo_recv(void *ctx, uint64_t arg);
static void ev_memo_fin(void *ctx, uint64_t arg);

static void ev_memo_drop(void *ctx, uint64_t arg);

int memo_is_event(const orr_event *ev) { return ev->fn == ev_memo_recv || ev->fn == ev_memo_fin || ev->fn == ev_memo_drop; }

static const memo_val *val_of(const orr_packet_sim *s, const flow *f) { return &s->memo->e[f->memo_idx].v; }

int memo_all_sent(const orr_packet_sim *s, const flow *f)
{
    if (f->memo_state == MEMO_GHOST && !f->finished) {
        const memo_entry *e = &s->memo->e[f->memo_idx];
        if (!e->valid && !e->has_sent) return 0; /* its recording has not sent everything: nor has it */
        return s->e->now_ps >= f->memo_t0_ps + e->v.sent_dt_ps;
    }
    return f->snd_nxt >= f->size;
}

const flow *memo_prev_view(const orr_packet_sim *s, const flow *prev, flow *tmp)
{
    if (!prev || prev->memo_state != MEMO_GHOST || prev->finished) return prev;
    const memo_val *v = val_of(s, prev);
    *tmp = *prev;
    tmp->cc = v->sent_cc;
    cc_shift(&tmp->cc, prev->memo_t0_ps);
    tmp->rate_Bps = v->sent_rate_Bps;
    return tmp;
}

static void add_counts(orr_packet_sim *s, const memo_val *v)
{
    s->st.data_packets += v->data_pkts;
    s->st.ack_packets += v->acks;
    s->st.cnps += v->cnps;
    s->st.ecn_marks += v->ecn_marks;
}

/* The replay an event of arg (flow id | generation << 32) is for, counted, or NULL if it is stale. */
static flow *ghost_event(orr_packet_sim *s, uint64_t arg, uint32_t *id)
{
    *id = (uint32_t)arg;
    if (s->stopped || *id >= s->nflows) return NULL;
    flow *f = F(s, *id);
    if (f->memo_state != MEMO_GHOST || f->finished || (uint32_t)(arg >> 32) != f->memo_gen) return NULL;
    s->st.events++;
    f->events++;
    return f;
}

static void ev_memo_recv(void *ctx, uint64_t arg)
{
    orr_packet_sim *s = ctx;
    uint32_t id;
    flow *f = ghost_event(s, arg, &id);
    if (!f) return;
    f->recv_done = 1;
    f->recv_done_ps = s->e->now_ps;
    links_release(s, id, f);
    if (f->done) f->done(f->ctx, f->arg);
}

static void ev_memo_fin(void *ctx, uint64_t arg)
{
    orr_packet_sim *s = ctx;
    uint32_t id;
    flow *f = ghost_event(s, arg, &id);
    if (!f) return;
    const memo_val *v = val_of(s, f);
    f->snd_nxt = f->snd_una = f->rcv_nxt = f->size;
    f->allsent_ps = f->memo_t0_ps + v->sent_dt_ps;
    f->cc = v->end_cc;
    cc_shift(&f->cc, f->memo_t0_ps);
    f->rate_Bps = v->end_rate_Bps;
    add_counts(s, v);
    wh_account_ports(s, f, f->size, f->memo_t0_ps, s->e->now_ps);
    for (uint32_t i = 0; i < f->nroute && i < MEMO_SAT_HOPS; i++) s->ports[s->routes[f->route + i]].saturated_ps += v->sat_ps[i];
    pkt_flow_complete(s, id, f);
}

/* Ghost id is met by a flow on its data path before it has sent everything: it becomes a
 * simulated flow, having sent and delivered its recorded share of bytes by now. */
static void unfollow(orr_packet_sim *s, memo_entry *e, flow *f);

/* The share of its bytes replay f is credited with by now (materialize: sent and delivered): its
 * recording's after as long; while the recording is still sending, the share its owner has had
 * acknowledged, scaled to f's elapsed time. Acknowledged, not sent: a follower never queued what
 * its owner has queued at a congested port, and crediting those bytes made it finish early
 * (docs/netsim.md "Memoization"). A replay's bytes in flight are credited (its recording sent
 * them on an uncongested path, where they arrive within a round trip). */
static double credited_share(orr_packet_sim *s, const memo_entry *e, const flow *f)
{
    int64_t now = s->e->now_ps, el = now - f->memo_t0_ps;
    double frac = e->v.sent_dt_ps > 0 ? (double)el / (double)e->v.sent_dt_ps : 0;
    if (f->memo_wait == 1 && !e->has_sent) {
        const flow *o = e->owner != PKT_NONE ? F(s, e->owner) : NULL;
        int64_t oel = o ? now - o->memo_t0_ps : 0;
        frac = o && oel > 0 ? (double)(o->snd_una + o->ff_bytes) / (double)(o->size + o->ff_bytes) * (double)el / (double)oel : 0;
    }
    return frac > 1 ? 1 : frac;
}

static void materialize(orr_packet_sim *s, uint32_t id, flow *f)
{
    memo_entry *e = &s->memo->e[f->memo_idx];
    int64_t now = s->e->now_ps;
    double frac = f->memo_wait == 2 ? f->memo_frac : credited_share(s, e, f);
    if (f->memo_wait == 1) unfollow(s, e, f);
    f->memo_wait = 0; /* (a given-up follower keeps memo_next: ev_memo_drop walks that list) */
    uint64_t b = (uint64_t)(frac * (double)f->size) / f->mtu * f->mtu;
    if (b >= f->size) b = (f->size - 1) / f->mtu * f->mtu;
    f->snd_nxt = f->snd_una = f->rcv_nxt = b;
    f->milestone = (b / s->cfg.ack_interval_bytes + 1) * s->cfg.ack_interval_bytes;
    s->st.data_packets += b / f->mtu;
    s->st.ack_packets += b / f->mtu;
    if (b) wh_account_ports(s, f, b, f->memo_t0_ps, now);
    f->memo_state = MEMO_NONE;
    f->memo_gen++;
    s->acc.memo_aborts++;
    pkt_flow_go(s, id, f, 1);
}

/* Removes follower f from the list of entry e. */
static void unfollow(orr_packet_sim *s, memo_entry *e, flow *f)
{
    uint32_t *p = &e->followers;
    while (*p != PKT_NONE) {
        flow *g = F(s, *p);
        if (g == f) {
            *p = g->memo_next;
            break;
        }
        p = &g->memo_next;
    }
    f->memo_wait = 0;
    f->memo_next = PKT_NONE;
}

static void ev_memo_drop(void *ctx, uint64_t arg)
{
    orr_packet_sim *s = ctx;
    if (s->stopped) return;
    s->st.events++;
    for (uint32_t i = (uint32_t)arg, next; i != PKT_NONE; i = next) {
        flow *g = F(s, i);
        next = g->memo_next;
        g->memo_next = PKT_NONE;
        if (g->memo_state == MEMO_GHOST && g->memo_wait == 2 && !g->finished) materialize(s, i, g);
    }
}

/* The recording of entry e stops before its end (its owner still set): its followers become
 * simulated flows, at the share of their bytes sent by now, in an event of their own at this
 * instant (this may run inside a switch's dequeue); what it had recorded is forgotten. */
static void followers_drop(orr_packet_sim *s, memo_entry *e)
{
    for (uint32_t i = e->followers; i != PKT_NONE; i = F(s, i)->memo_next) {
        flow *g = F(s, i);
        g->memo_frac = credited_share(s, e, g);
        g->memo_wait = 2;
    }
    if (e->followers != PKT_NONE) orr_engine_at(s->e, s->e->now_ps, ev_memo_drop, s, e->followers);
    e->followers = PKT_NONE;
    memset(&e->v, 0, sizeof e->v);
    e->has_sent = 0;
}

/* A flow starts delivering over port l, which flow o (the last to start there) delivers over too. */
static void disturb(orr_packet_sim *s, uint32_t o)
{
    flow *g = F(s, o);
    if (g->finished || (!g->memo_links && !g->memo_alinks)) return;
    if (g->memo_state == MEMO_REC) {
        /* delivering still: its outcome is not the unit's any more; only ACKs left: they may wait
         * behind the new flow's data (low-priority ACKs), which the recording keeps */
        if (!g->memo_links) return;
        memo_entry *e = &s->memo->e[g->memo_idx];
        if (e->owner == o) {
            followers_drop(s, e);
            e->owner = PKT_NONE;
        }
        g->memo_state = MEMO_NONE;
        s->acc.memo_disturbed++;
    } else if (g->memo_state == MEMO_GHOST && !memo_all_sent(s, g)) {
        materialize(s, o, g);
    }
}

int memo_flow_start(orr_packet_sim *s, uint32_t id, flow *f, flow *prev, int *cont_out)
{
    pkt_memo *m = s->memo;
    int64_t now = s->e->now_ps;
    /* the flows already delivering over its data ports: the queue pair's previous message, once
     * it has sent everything, is only its last packets ahead (in the key); any other is a conflict */
    int cont = prev && prev->started && memo_all_sent(s, prev);
    int pred_counted = cont && prev->memo_links && !prev->finished;
    /* ACKs in the data queues (ACK_HIGH_PRIO 0) wait behind the data of the ports they cross: a
     * flow's data on another's ACK path, or its ACKs on another's data path, is a conflict too
     * (high-priority ACKs wait for at most the packet on the wire) */
    int conflict = 0, paused = 0, low_acks = !s->cfg.ack_high_prio;
    for (uint32_t i = 0; i < f->nroute; i++) {
        uint32_t l = s->routes[f->route + i];
        uint32_t others = m->dcount[l];
        if (pred_counted && others && on_route(s, prev, l)) others--;
        if (others) {
            conflict = 1;
            if (m->owner[l] != PKT_NONE) disturb(s, m->owner[l]);
        }
        if (low_acks && m->acount[l]) {
            conflict = 1;
            if (m->aowner[l] != PKT_NONE) disturb(s, m->aowner[l]);
        }
        if (s->ports[l].paused[f->pg] || s->ports[l].error_rate > 0) paused = 1; /* paused, or random losses */
    }
    for (uint32_t i = 0; low_acks && i < f->naroute; i++) {
        uint32_t l = s->routes[f->aroute + i];
        if (m->dcount[l] > (pred_counted && on_route(s, prev, l) ? 1u : 0u)) conflict = 1;
    }
    /* a ghost turned back into a simulated flow above may have been the previous message */
    cont = prev && prev->started && memo_all_sent(s, prev);
    pred_counted = cont && prev->memo_links && !prev->finished;
    *cont_out = cont;
    for (uint32_t i = 0; i < f->nroute; i++) {
        uint32_t l = s->routes[f->route + i];
        m->dcount[l]++;
        m->owner[l] = id;
    }
    for (uint32_t i = 0; i < f->naroute; i++) {
        uint32_t l = s->routes[f->aroute + i];
        m->acount[l]++;
        m->aowner[l] = id;
    }
    f->memo_links = f->memo_alinks = 1;
    f->memo_state = MEMO_NONE;
    if (conflict || paused || s->cfg.cc != ORR_CC_DCQCN || (cont && prev->memo_state != MEMO_GHOST && wh_flow_frozen(s, prev))) {
        s->acc.memo_ineligible++;
        return 0;
    }
    /* the state it starts with */
    flow st = *f, pv;
    if (cont) cc_continue_state(s, &st, memo_prev_view(s, prev, &pv));
    else cc_init(s, &st);
    const flow *pred = pred_counted && !prev->recv_done ? prev : NULL;
    int64_t pred_sent = 0;
    if (pred) pred_sent = prev->memo_state == MEMO_GHOST && !prev->finished ? prev->memo_t0_ps + val_of(s, prev)->sent_dt_ps : prev->allsent_ps;
    unit_key(s, m, &st, pred, pred_sent);
    uint64_t h;
    uint32_t ei = lookup(m, &h);
    if (ei == UINT32_MAX - 1) { /* another key with this hash: neither replayed nor recorded */
        s->acc.memo_misses++;
        return 0;
    }
    if (ei != PKT_NONE && (m->e[ei].valid || m->e[ei].owner != PKT_NONE)) {
        /* a flow known to start on its data path while it delivers would abort the replay */
        int64_t until = m->e[ei].valid ? m->e[ei].v.recv_dt_ps : 2 * f->standalone_ps; /* following: not known yet */
        if (future_entry(s, f, now + until)) {
            s->acc.memo_ineligible++;
            return 0;
        }
    }
    if (ei != PKT_NONE && m->e[ei].valid) { /* a hit: replay */
        const memo_val *v = &m->e[ei].v;
        f->cc = st.cc;
        f->rate_Bps = st.rate_Bps;
        f->memo_state = MEMO_GHOST;
        f->memo_idx = ei;
        f->memo_t0_ps = now;
        f->memo_gen++;
        uint64_t arg = (uint64_t)id | (uint64_t)f->memo_gen << 32;
        orr_engine_at(s->e, now + v->recv_dt_ps, ev_memo_recv, s, arg);
        orr_engine_at(s->e, now + v->fin_dt_ps, ev_memo_fin, s, arg);
        s->acc.memo_hits++;
        return 1;
    }
    if (ei != PKT_NONE && m->e[ei].owner != PKT_NONE) {
        /* being recorded (by a flow that started no later): replayed from the recording when it
         * is known (a follower); its outcome is the recording's, shifted by the start times */
        f->cc = st.cc;
        f->rate_Bps = st.rate_Bps;
        f->memo_state = MEMO_GHOST;
        f->memo_wait = 1;
        f->memo_idx = ei;
        f->memo_t0_ps = now;
        f->memo_gen++;
        f->memo_next = PKT_NONE; /* appended: they complete in the order they started, as replays do */
        uint32_t *p = &m->e[ei].followers;
        while (*p != PKT_NONE) p = &F(s, *p)->memo_next;
        *p = id;
        if (m->e[ei].v.recv_dt_ps > 0) /* the recording has delivered everything: so will it, as long after its start */
            orr_engine_at(s->e, now + m->e[ei].v.recv_dt_ps, ev_memo_recv, s, (uint64_t)id | (uint64_t)f->memo_gen << 32);
        s->acc.memo_hits++;
        s->acc.memo_followers++;
        return 1;
    }
    s->acc.memo_misses++;
    if (ei == PKT_NONE && m->n >= m->max_entries) return 0; /* full: simulated, not recorded */
    if (ei == PKT_NONE) ei = insert(m, h, m->k, m->klen);
    if (m->e[ei].owner == PKT_NONE) {
        m->e[ei].owner = id;
        for (uint32_t i = 0; i < f->nroute && i < MEMO_SAT_HOPS; i++)
            m->e[ei].sat0_ps[i] = s->ports[s->routes[f->route + i]].saturated_ps;
        f->memo_state = MEMO_REC;
        f->memo_idx = ei;
        f->memo_t0_ps = now;
    }
    return 0;
}

void memo_noisy(orr_packet_sim *s, uint32_t id, flow *f)
{
    memo_entry *e = &s->memo->e[f->memo_idx];
    f->memo_state = MEMO_NONE;
    s->acc.memo_noisy++;
    if (e->owner != id) return;
    followers_drop(s, e);
    e->owner = PKT_NONE;
}

void memo_on_all_sent(orr_packet_sim *s, flow *f)
{
    memo_entry *e = &s->memo->e[f->memo_idx];
    e->v.sent_dt_ps = s->e->now_ps - f->memo_t0_ps;
    e->v.sent_cc = f->cc;
    cc_shift(&e->v.sent_cc, -f->memo_t0_ps);
    e->v.sent_rate_Bps = f->rate_Bps;
    e->has_sent = 1;
}

void memo_on_recv_done(orr_packet_sim *s, uint32_t id, flow *f)
{
    links_release(s, id, f);
    if (f->memo_state != MEMO_REC) return;
    memo_entry *e = &s->memo->e[f->memo_idx];
    if (e->owner != id || e->valid) return;
    e->v.recv_dt_ps = f->recv_done_ps - f->memo_t0_ps;
    for (uint32_t i = e->followers; i != PKT_NONE; i = F(s, i)->memo_next) {
        flow *g = F(s, i);
        orr_engine_at(s->e, g->memo_t0_ps + e->v.recv_dt_ps, ev_memo_recv, s, (uint64_t)i | (uint64_t)g->memo_gen << 32);
    }
}

void memo_flow_finish(orr_packet_sim *s, uint32_t id, flow *f)
{
    links_release(s, id, f);
    acks_release(s, id, f);
    if (f->memo_state != MEMO_REC) return;
    f->memo_state = MEMO_NONE;
    memo_entry *e = &s->memo->e[f->memo_idx];
    if (e->owner != id) return;
    e->owner = PKT_NONE;
    if (!e->has_sent || f->recv_done_ps < 0 || e->valid) {
        followers_drop(s, e);
        return;
    }
    memo_val *v = &e->v;
    v->recv_dt_ps = f->recv_done_ps - f->memo_t0_ps;
    v->fin_dt_ps = s->e->now_ps - f->memo_t0_ps;
    v->end_cc = f->cc;
    cc_shift(&v->end_cc, -f->memo_t0_ps);
    v->end_rate_Bps = f->rate_Bps;
    /* its packets, with those a fast-forward stood for (wormhole.c takes them off its size) */
    uint64_t ack_every = s->cfg.ack_interval_bytes > f->mtu ? s->cfg.ack_interval_bytes : f->mtu;
    v->data_pkts = f->n_data + (f->ff_bytes + f->mtu - 1) / f->mtu;
    v->acks = f->n_ack + (f->ff_bytes + ack_every - 1) / ack_every;
    /* alone on its data path: the back-to-back time its ports gained while it lived is its own */
    for (uint32_t i = 0; i < f->nroute && i < MEMO_SAT_HOPS; i++) {
        int64_t d = s->ports[s->routes[f->route + i]].saturated_ps - e->sat0_ps[i];
        v->sat_ps[i] = d > 0 ? d : 0;
    }
    v->cnps = f->n_cnp;
    v->ecn_marks = f->n_ecn;
    e->valid = 1;
    s->acc.memo_recorded++;
    /* its followers finish as long after their starts */
    while (e->followers != PKT_NONE) {
        uint32_t i = e->followers;
        flow *g = F(s, i);
        e->followers = g->memo_next;
        g->memo_wait = 0;
        g->memo_next = PKT_NONE;
        orr_engine_at(s->e, g->memo_t0_ps + v->fin_dt_ps, ev_memo_fin, s, (uint64_t)i | (uint64_t)g->memo_gen << 32);
    }
}

uint64_t memo_ghost_progress(const orr_packet_sim *s, const flow *f)
{
    if (f->memo_state != MEMO_GHOST || f->finished) return 0;
    const memo_val *v = val_of(s, f);
    if (f->memo_wait && v->recv_dt_ps <= 0) return 0;
    if (f->recv_done) return f->size;
    int64_t el = s->e->now_ps - f->memo_t0_ps;
    if (el <= 0 || v->recv_dt_ps <= 0) return 0;
    double b = floor((double)f->size * (double)el / (double)v->recv_dt_ps);
    return b >= (double)f->size ? f->size : (uint64_t)b;
}

/* ---- persistence ---- */

#define MEMO_SCHEMA "CREATE TABLE IF NOT EXISTS memo(cfg INTEGER NOT NULL, key BLOB NOT NULL, val BLOB NOT NULL, PRIMARY KEY(cfg, key))"

/* The memo file at path, opened (created if absent) with its table, and sql prepared in *st (in a
 * transaction when writing); NULL after an error naming --memo. */
static sqlite3 *memo_db(const char *path, const char *sql, int write, sqlite3_stmt **st, orr_err *err)
{
    sqlite3 *db = NULL;
    *st = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        orr_fail(err, "--memo %s: cannot open it as a SQLite database: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    if (sqlite3_exec(db, MEMO_SCHEMA, NULL, NULL, NULL) != SQLITE_OK ||
        (write && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) ||
        sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
        orr_fail(err, "--memo %s: not a memo database or not writable (%s)", path, sqlite3_errmsg(db));
        sqlite3_finalize(*st);
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static int time_ok(int64_t t) { return t >= -ORR_MEMO_MAX_PS && t <= ORR_MEMO_MAX_PS; }
static int rate_ok(double r) { return isfinite(r) && r > 0 && r < 1e15; }

static int cc_ok(const cc_state *c)
{
    if (!time_ok(c->alpha_next_ps) || !time_ok(c->decrease_next_ps) || !time_ok(c->rp_due_ps) || c->nhop > PKT_MAX_INT_HOPS)
        return 0;
    for (uint32_t k = 0; k < c->nhop; k++)
        if (!time_ok(c->hop[k].t_ps)) return 0;
    return isfinite(c->alpha) && c->alpha >= 0 && c->alpha <= 1 && isfinite(c->target_Bps) && isfinite(c->cur_Bps) &&
           isfinite(c->u) && isfinite(c->rtt_diff_ps);
}

static int sat_ok(const memo_val *v)
{
    for (int i = 0; i < MEMO_SAT_HOPS; i++)
        if (v->sat_ps[i] < 0 || v->sat_ps[i] > ORR_MEMO_MAX_PS) return 0;
    return 1;
}

/* A value read from a file is used only if it could have been recorded: times in order and
 * bounded, rates finite and positive (a damaged file must not move the clock backwards). */
static int val_ok(const memo_val *v)
{
    return v->recv_dt_ps >= 0 && v->sent_dt_ps >= 0 && v->fin_dt_ps >= v->recv_dt_ps && v->fin_dt_ps >= v->sent_dt_ps &&
           v->fin_dt_ps <= ORR_MEMO_MAX_PS && rate_ok(v->sent_rate_Bps) && rate_ok(v->end_rate_Bps) &&
           cc_ok(&v->sent_cc) && cc_ok(&v->end_cc) && v->data_pkts < (1ull << 40) && v->acks < (1ull << 40) &&
           v->cnps < (1ull << 40) && v->ecn_marks < (1ull << 40) && sat_ok(v);
}

int orr_packet_memo_load(orr_packet_sim *s, const char *path, orr_err *err)
{
    pkt_memo *m = s->memo;
    if (!m) return 0;
    sqlite3_stmt *st;
    sqlite3 *db = memo_db(path, "SELECT key, val FROM memo WHERE cfg = ?1 ORDER BY rowid", 0, &st, err);
    int rc = -1;
    if (!db) return -1;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)m->cfg_hash);
    int r = SQLITE_DONE;
    while (m->n < m->max_entries && (r = sqlite3_step(st)) == SQLITE_ROW) {
        const void *k = sqlite3_column_blob(st, 0);
        int kn = sqlite3_column_bytes(st, 0);
        const void *vb = sqlite3_column_blob(st, 1);
        int vn = sqlite3_column_bytes(st, 1);
        if (!k || kn <= 0 || !vb || vn != (int)sizeof(memo_val)) continue; /* another format: ignored */
        memo_val v;
        memcpy(&v, vb, sizeof v);
        if (!val_ok(&v)) continue; /* damaged: ignored */
        m->klen = 0;
        kput(m, k, (size_t)kn);
        uint64_t h;
        uint32_t ei = lookup(m, &h);
        if (ei != PKT_NONE) continue;
        ei = insert(m, h, m->k, m->klen);
        m->e[ei].v = v;
        m->e[ei].valid = m->e[ei].from_file = 1;
        s->acc.memo_loaded++;
    }
    if (r != SQLITE_DONE && r != SQLITE_ROW) {
        orr_fail(err, "--memo %s: reading it failed: %s", path, sqlite3_errmsg(db));
        goto done;
    }
    rc = 0;
done:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

int orr_packet_memo_save(orr_packet_sim *s, const char *path, orr_err *err)
{
    pkt_memo *m = s->memo;
    if (!m) return 0;
    sqlite3_stmt *st;
    sqlite3 *db = memo_db(path, "INSERT OR IGNORE INTO memo(cfg, key, val) VALUES (?1, ?2, ?3)", 1, &st, err);
    int rc = -1;
    if (!db) return -1;
    for (size_t i = 0; i < m->n; i++) {
        const memo_entry *e = &m->e[i];
        if (!e->valid || e->from_file) continue;
        sqlite3_bind_int64(st, 1, (sqlite3_int64)m->cfg_hash);
        sqlite3_bind_blob(st, 2, m->arena + e->key_off, (int)e->key_len, SQLITE_STATIC);
        sqlite3_bind_blob(st, 3, &e->v, (int)sizeof e->v, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) {
            orr_fail(err, "--memo %s: cannot write it: %s", path, sqlite3_errmsg(db));
            goto done;
        }
        sqlite3_reset(st);
        s->acc.memo_saved++;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        orr_fail(err, "--memo %s: cannot write it: %s", path, sqlite3_errmsg(db));
        goto done;
    }
    rc = 0;
done:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}
