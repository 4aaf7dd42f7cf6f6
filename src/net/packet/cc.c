/*
 * cc.c - congestion control of the packet engine's queue pairs, as the HPCC ns-3 lineage does it.
 *
 * DCQCN (Mellanox): a CNP (the CNP flag on an ACK) sets two bits; every ALPHA_RESUME_INTERVAL
 *   alpha <- (1-g) alpha + g*bit; every RATE_DECREASE_INTERVAL, if a CNP came, target <- rate
 *   (unless in the first stage and CLAMP_TARGET_RATE is 0), rate <- max(MIN_RATE, rate (1 -
 *   alpha/2)) and the increase timer restarts; every RP_TIMER the rate moves half way to the
 *   target, the target growing by RATE_AI after FAST_RECOVERY_TIMES stages and by RATE_HAI after.
 * HPCC: each ACK echoes the INT records of its data packet; per hop u = txRate/lineRate +
 *   min(qlen)/ (lineRate * T) with T = the window's time at line rate; U = max over hops, EWMA
 *   over the base RTT; once per RTT (and on every ACK with FAST_REACT, without committing) rate <-
 *   curRate / (U / U_TARGET) + RATE_AI (additive only while U < U_TARGET for MI_THRESH stages).
 * TIMELY: RTT gradient with the reference's thresholds; DCTCP: ECN fraction per window, rate form.
 */
#include "pkt_internal.h"

#include <math.h>
#include <strings.h>

const char *orr_cc_name(orr_cc cc)
{
    switch (cc) {
    case ORR_CC_DCQCN: return "DCQCN";
    case ORR_CC_HPCC: return "HPCC";
    case ORR_CC_TIMELY: return "TIMELY";
    case ORR_CC_DCTCP: return "DCTCP";
    }
    return "unknown";
}

const char *orr_cc_key(orr_cc cc)
{
    switch (cc) {
    case ORR_CC_DCQCN: return "dcqcn";
    case ORR_CC_HPCC: return "hpcc";
    case ORR_CC_TIMELY: return "timely";
    case ORR_CC_DCTCP: return "dctcp";
    }
    return "unknown";
}

int orr_cc_parse(const char *name, orr_cc *out)
{
    static const orr_cc all[] = {ORR_CC_DCQCN, ORR_CC_HPCC, ORR_CC_TIMELY, ORR_CC_DCTCP};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcasecmp(name, orr_cc_name(all[i])) == 0) return *out = all[i], 0;
    return -1;
}

static double clamp_rate(const orr_packet_sim *s, const flow *f, double r)
{
    if (r < s->cfg.min_rate_Bps) r = s->cfg.min_rate_Bps;
    if (r > f->max_rate_Bps) r = f->max_rate_Bps;
    return r;
}

void cc_init(orr_packet_sim *s, flow *f)
{
    cc_state *c = &f->cc;
    f->rate_Bps = f->max_rate_Bps;
    c->alpha = 1.0;
    c->target_Bps = f->max_rate_Bps;
    c->first_cnp = 1;
    c->cur_Bps = f->max_rate_Bps;
    c->u = 1.0;
    (void)s;
}

/* ---- DCQCN ---- */

/* The reference runs two per-QP timers from the first CNP on, for as long as the flow lives: the
 * alpha update every ALPHA_RESUME_INTERVAL (1 us) and the rate decrease every
 * RATE_DECREASE_INTERVAL (4 us), which does nothing unless a CNP came. In a long flow they are
 * most of the events. Here both run on the same grid of instants without events:
 *   - the alpha updates due at or before now are applied, in order and with the same arithmetic,
 *     whenever alpha or its CNP bit is about to be used (at a CNP, at a decrease);
 *   - a decrease event is scheduled only for the first grid instant after a CNP (the instants
 *     without a CNP would change nothing).
 * The result is the reference's, except that an alpha update falling on the very picosecond of a
 * CNP is taken to come first (the eager order there depended on which event was scheduled first),
 * and that a run of more than DCQCN_ALPHA_STEPS updates without a CNP (a connection idle between
 * NCCL's steps, or one that never sees a CNP again: 100 ms is 100,000 updates, and they were most
 * of the time of a 1,024-GPU --net packet run) is applied at once as alpha (1 - g)^n, which differs
 * from n roundings of alpha (1 - g) in the last bits of an alpha already below (1 - g)^64 of its
 * value (0.78 at g = 1/256). */
#define DCQCN_ALPHA_STEPS 64

void cc_dcqcn_alpha_catch_up(const orr_packet_sim *s, cc_state *c, int64_t now)
{
    if (c->alpha_next_ps > now) return;
    double g = s->cfg.ewma_gain;
    int64_t step = s->cfg.alpha_resume_interval_ps, n = (now - c->alpha_next_ps) / step + 1; /* updates due */
    c->alpha_next_ps += n * step;
    if (c->alpha_cnp) { /* the first update due has the CNP */
        c->alpha = (1 - g) * c->alpha + g;
        c->alpha_cnp = 0;
        n--;
    }
    if (c->alpha == 0 || n == 0) return;
    if (n > DCQCN_ALPHA_STEPS) c->alpha *= pow(1 - g, (double)n);
    else
        while (n-- > 0) c->alpha = (1 - g) * c->alpha;
}

/* One stage of rate increase (fast recovery, then additive, then hyper-additive). */
static void dcqcn_raise(const orr_packet_sim *s, flow *f)
{
    cc_state *c = &f->cc;
    if (c->rp_stage == s->cfg.fast_recovery_times) c->target_Bps += s->cfg.rate_ai_Bps;
    else if (c->rp_stage > s->cfg.fast_recovery_times) c->target_Bps += s->cfg.rate_hai_Bps;
    if (c->target_Bps > f->max_rate_Bps) c->target_Bps = f->max_rate_Bps;
    f->rate_Bps = f->rate_Bps / 2 + c->target_Bps / 2;
    c->rp_stage++;
}

static void dcqcn_increase(void *ctx, uint64_t arg)
{
    orr_packet_sim *s = ctx;
    uint32_t id;
    flow *f = pkt_timer_flow(s, arg, &id);
    if (!f) return;
    pkt_flow_timer(s, id, TIMER_RP, s->cfg.rp_timer_ps, dcqcn_increase);
    f->cc.rp_due_ps = s->e->now_ps + s->cfg.rp_timer_ps;
    dcqcn_raise(s, f);
}

static void dcqcn_decrease(void *ctx, uint64_t arg)
{
    orr_packet_sim *s = ctx;
    uint32_t id;
    flow *f = pkt_timer_flow(s, arg, &id);
    if (!f) return;
    cc_state *c = &f->cc;
    c->decrease_armed = 0;
    c->decrease_next_ps += s->cfg.rate_decrease_interval_ps;
    if (!c->decrease_cnp) return;
    cc_dcqcn_alpha_catch_up(s, c, s->e->now_ps);
    if (s->cfg.clamp_target_rate || c->rp_stage != 0) c->target_Bps = f->rate_Bps;
    f->rate_Bps = clamp_rate(s, f, f->rate_Bps * (1 - c->alpha / 2));
    c->rp_stage = 0;
    c->decrease_cnp = 0;
    f->tgen[TIMER_RP]++;
    pkt_flow_timer(s, id, TIMER_RP, s->cfg.rp_timer_ps, dcqcn_increase);
    c->rp_due_ps = s->e->now_ps + s->cfg.rp_timer_ps;
}

/* Schedules the rate decrease at the first instant of its grid after now (none passed before it
 * had a CNP to act on). */
static void dcqcn_arm_decrease(orr_packet_sim *s, uint32_t id, cc_state *c, int64_t now)
{
    if (c->decrease_next_ps <= now) {
        int64_t step = s->cfg.rate_decrease_interval_ps;
        c->decrease_next_ps += (now - c->decrease_next_ps) / step * step + step;
    }
    c->decrease_armed = 1;
    pkt_flow_timer(s, id, TIMER_DECREASE, c->decrease_next_ps - now, dcqcn_decrease);
}

static void dcqcn_cnp(orr_packet_sim *s, uint32_t id, flow *f)
{
    cc_state *c = &f->cc;
    int64_t now = s->e->now_ps;
    if (c->first_cnp) {
        c->first_cnp = 0;
        c->alpha = 1;
        c->alpha_cnp = 0;
        c->decrease_cnp = 1;
        c->alpha_next_ps = now + s->cfg.alpha_resume_interval_ps;
        /* 1 ns later than the alpha update, as the reference does */
        c->decrease_next_ps = now + s->cfg.rate_decrease_interval_ps + ORR_PS_PER_NS;
        c->decrease_armed = 1;
        pkt_flow_timer(s, id, TIMER_DECREASE, c->decrease_next_ps - now, dcqcn_decrease);
        c->target_Bps = f->rate_Bps = s->cfg.rate_on_first_cnp * f->rate_Bps;
        return;
    }
    cc_dcqcn_alpha_catch_up(s, c, now);
    c->alpha_cnp = c->decrease_cnp = 1;
    if (!c->decrease_armed) dcqcn_arm_decrease(s, id, c, now);
}

/* A queue pair carries consecutive messages (NCCL keeps one per connection for the life of the
 * communicator), so a flow that continues one that has sent everything starts at its rate with its congestion
 * control state, timers included, rather than at line rate: the per-message state (sequence
 * numbers of the previous message) is reset. DCQCN's timers run while a queue pair is idle, as a
 * NIC's do: the rate-increase stages that fell due between the two messages are applied (until
 * the rate is back at line rate), alpha's updates on its next use. */
/* The idle catch-up of a DCQCN queue pair at now: the decrease grid moves past now (armed when a
 * CNP is pending) and the increase stages that fell due are applied. No events. */
static void dcqcn_catch_up_idle(const orr_packet_sim *s, flow *f, int64_t now)
{
    cc_state *c = &f->cc;
    c->decrease_armed = 0;
    if (s->cfg.cc != ORR_CC_DCQCN || c->first_cnp) return;
    if (c->decrease_cnp) {
        if (c->decrease_next_ps <= now) {
            int64_t step = s->cfg.rate_decrease_interval_ps;
            c->decrease_next_ps += (now - c->decrease_next_ps) / step * step + step;
        }
        c->decrease_armed = 1;
    }
    if (!c->rp_due_ps) return;
    while (c->rp_due_ps <= now) {
        if (f->rate_Bps >= f->max_rate_Bps && c->target_Bps >= f->max_rate_Bps) { /* nothing left to raise */
            int64_t step = s->cfg.rp_timer_ps;
            c->rp_due_ps += (now - c->rp_due_ps) / step * step + step;
            break;
        }
        dcqcn_raise(s, f);
        c->rp_due_ps += s->cfg.rp_timer_ps;
    }
}

void cc_continue_state(orr_packet_sim *s, flow *f, const flow *prev)
{
    f->cc = prev->cc;
    f->rate_Bps = prev->rate_Bps < f->max_rate_Bps ? prev->rate_Bps : f->max_rate_Bps;
    cc_state *c = &f->cc;
    if (c->cur_Bps > f->max_rate_Bps) c->cur_Bps = f->max_rate_Bps;
    if (c->target_Bps > f->max_rate_Bps) c->target_Bps = f->max_rate_Bps;
    c->last_update_seq = 0;
    c->high_seq = 0;
    c->batch = 0;
    c->ecn_cnt = 0;
    c->ca_state = 0;
    c->nhop = 0;
    dcqcn_catch_up_idle(s, f, s->e->now_ps);
}

static void dcqcn_schedule(orr_packet_sim *s, uint32_t id, flow *f)
{
    cc_state *c = &f->cc;
    int64_t now = s->e->now_ps;
    if (s->cfg.cc != ORR_CC_DCQCN || c->first_cnp) return;
    if (c->decrease_armed) pkt_flow_timer(s, id, TIMER_DECREASE, c->decrease_next_ps - now, dcqcn_decrease);
    if (c->rp_due_ps) pkt_flow_timer(s, id, TIMER_RP, c->rp_due_ps - now, dcqcn_increase);
}

void cc_resume_timers(orr_packet_sim *s, uint32_t id, flow *f)
{
    dcqcn_catch_up_idle(s, f, s->e->now_ps);
    dcqcn_schedule(s, id, f);
}

void cc_continue(orr_packet_sim *s, uint32_t id, flow *f, const flow *prev)
{
    cc_continue_state(s, f, prev);
    dcqcn_schedule(s, id, f);
}

/* ---- HPCC ---- */

static void hpcc_update(orr_packet_sim *s, flow *f, const pkt *ack, int fast_react)
{
    cc_state *c = &f->cc;
    uint64_t next_seq = f->snd_nxt;
    if (c->last_update_seq == 0) { /* first RTT: remember the INT records */
        c->last_update_seq = next_seq;
        c->nhop = ack->nhop;
        for (uint32_t i = 0; i < ack->nhop; i++) c->hop[i] = ack->ih[i];
        return;
    }
    double U = 0;
    int64_t dt = 0;
    int updated = 0;
    double T_s = (double)f->win / f->max_rate_Bps; /* window at line rate, seconds */
    for (uint32_t i = 0; i < ack->nhop && i < c->nhop; i++) {
        const int_hop *h = &ack->ih[i], *o = &c->hop[i];
        int64_t tau = h->t_ps - o->t_ps;
        if (tau <= 0) continue;
        double tx_Bps = (double)(h->tx_bytes - o->tx_bytes) / ((double)tau * 1e-12);
        uint64_t q = h->qlen_bytes < o->qlen_bytes ? h->qlen_bytes : o->qlen_bytes;
        double u = tx_Bps / h->rate_Bps + (double)q / (h->rate_Bps * T_s);
        if (u > U) {
            U = u;
            dt = tau;
        }
        updated = 1;
    }
    c->nhop = ack->nhop;
    for (uint32_t i = 0; i < ack->nhop; i++) c->hop[i] = ack->ih[i];
    if (updated) {
        int64_t rtt = f->base_rtt_ps;
        if (dt > rtt) dt = rtt;
        c->u = (c->u * (double)(rtt - dt) + U * (double)dt) / (double)rtt;
        double max_c = c->u / s->cfg.u_target;
        double nr;
        uint32_t stage;
        if (max_c >= 1 || c->inc_stage >= s->cfg.mi_thresh) {
            nr = c->cur_Bps / max_c + s->cfg.rate_ai_Bps;
            stage = 0;
        } else {
            nr = c->cur_Bps + s->cfg.rate_ai_Bps;
            stage = c->inc_stage + 1;
        }
        nr = clamp_rate(s, f, nr);
        pkt_change_rate(s, f, nr);
        if (!fast_react) {
            c->cur_Bps = nr;
            c->inc_stage = stage;
        }
    }
    if (!fast_react && next_seq > c->last_update_seq) c->last_update_seq = next_seq;
}

/* ---- TIMELY ---- */

static void timely_update(orr_packet_sim *s, flow *f, const pkt *ack)
{
    cc_state *c = &f->cc;
    const orr_packet_config *g = &s->cfg;
    int64_t rtt = s->e->now_ps - ack->ts_ps;
    if (c->last_update_seq != 0) {
        double diff = (1 - g->timely_alpha) * c->rtt_diff_ps + g->timely_alpha * (double)(rtt - c->last_rtt_ps);
        double gradient = diff / (double)g->timely_min_rtt_ps;
        double nr;
        if (rtt < g->timely_t_low_ps || (rtt <= g->timely_t_high_ps && gradient <= 0)) {
            nr = c->cur_Bps + (c->inc_stage < 5 ? g->rate_ai_Bps : g->rate_hai_Bps);
            if (nr > f->max_rate_Bps) nr = f->max_rate_Bps;
            c->inc_stage++;
        } else {
            double k = rtt > g->timely_t_high_ps ? 1 - g->timely_beta * (1 - (double)g->timely_t_high_ps / (double)rtt)
                                                 : 1 - g->timely_beta * gradient;
            if (k < 0) k = 0;
            nr = c->cur_Bps * k;
            if (nr < g->min_rate_Bps) nr = g->min_rate_Bps;
            c->inc_stage = 0;
        }
        f->rate_Bps = nr;
        c->cur_Bps = nr;
        c->rtt_diff_ps = diff;
    }
    if (f->snd_nxt > c->last_update_seq) {
        c->last_update_seq = f->snd_nxt;
        c->last_rtt_ps = rtt;
    }
}

/* ---- DCTCP ---- */

static void dctcp_update(orr_packet_sim *s, flow *f, const pkt *ack)
{
    cc_state *c = &f->cc;
    uint64_t mtu = f->mtu;
    int new_batch = 0;
    c->ecn_cnt += ack->cnp != 0;
    if (ack->seq > c->last_update_seq) {
        new_batch = 1;
        if (c->last_update_seq == 0) {
            c->batch = f->snd_nxt / mtu + 1;
        } else {
            double frac = (double)c->ecn_cnt / (double)c->batch;
            if (frac > 1) frac = 1;
            c->alpha = (1 - s->cfg.ewma_gain) * c->alpha + s->cfg.ewma_gain * frac;
            c->ecn_cnt = 0;
            c->batch = (f->snd_nxt - ack->seq) / mtu + 1;
        }
        c->last_update_seq = f->snd_nxt;
    }
    if (c->ca_state == 1 && ack->seq > c->high_seq) c->ca_state = 0;
    if (ack->cnp && c->ca_state == 0) {
        c->ca_state = 1;
        c->high_seq = f->snd_nxt;
        pkt_change_rate(s, f, clamp_rate(s, f, f->rate_Bps * (1 - c->alpha / 2)));
    }
    if (c->ca_state == 0 && new_batch)
        pkt_change_rate(s, f, clamp_rate(s, f, f->rate_Bps + s->cfg.dctcp_rate_ai_Bps));
}

void cc_on_ack(orr_packet_sim *s, uint32_t id, flow *f, const pkt *ack)
{
    switch (s->cfg.cc) {
    case ORR_CC_DCQCN:
        if (ack->cnp) dcqcn_cnp(s, id, f);
        break;
    case ORR_CC_HPCC:
        if (ack->seq > f->cc.last_update_seq) hpcc_update(s, f, ack, 0);
        else if (s->cfg.fast_react) hpcc_update(s, f, ack, 1);
        break;
    case ORR_CC_TIMELY:
        if (ack->seq > f->cc.last_update_seq) timely_update(s, f, ack);
        break;
    case ORR_CC_DCTCP:
        dctcp_update(s, f, ack);
        break;
    }
}
