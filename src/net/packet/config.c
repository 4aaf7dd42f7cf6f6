/*
 * config.c - the HPCC ns-3 `config.txt` reader of the packet engine (docs/netsim.md lists every
 * key). One `KEY value...` per line. Keys are of four sorts:
 *   - modelled: parsed into orr_packet_config, errors name file, line and key;
 *   - accepted without effect (inputs given elsewhere, monitors, PINT parameters);
 *   - fixed: only the value the engine implements is accepted (e.g. MULTI_RATE 0), anything else
 *     is an error saying it is not implemented, never a silently different model;
 *   - unknown: a warning naming the key.
 */
#include "pkt_internal.h"
#include "orrery/net.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void orr_packet_config_default(orr_packet_config *c)
{
    memset(c, 0, sizeof *c);
    c->cc = ORR_CC_HPCC;
    c->mtu_bytes = 1000;
    c->ack_interval_bytes = 1;
    c->chunk_bytes = 4000;
    c->ecn_enabled = 1;
    c->pfc_enabled = 1;
    c->buffer_bytes = 32ull << 20;
    c->n_red = 3;
    const double rates[3] = {25e9 / 8, 50e9 / 8, 100e9 / 8};
    const uint64_t kmin[3] = {100, 200, 400}, kmax[3] = {400, 800, 1600};
    for (int i = 0; i < 3; i++) {
        c->red_rate_Bps[i] = rates[i];
        c->kmin_bytes[i] = kmin[i] * 1000;
        c->kmax_bytes[i] = kmax[i] * 1000;
        c->pmax[i] = 0.2;
    }
    c->has_win = c->global_t = c->var_win = 1;
    c->rate_bound = 1;
    c->fast_react = 1;
    c->u_target = 0.95;
    c->alpha_resume_interval_ps = 1 * ORR_PS_PER_US;
    c->rate_decrease_interval_ps = 4 * ORR_PS_PER_US;
    c->rp_timer_ps = 900 * ORR_PS_PER_US;
    c->ewma_gain = 1.0 / 256;
    c->fast_recovery_times = 1;
    c->rate_ai_Bps = 50e6 / 8;
    c->rate_hai_Bps = 100e6 / 8;
    c->min_rate_Bps = 100e6 / 8;
    c->dctcp_rate_ai_Bps = 1000e6 / 8;
    c->rate_on_first_cnp = 1.0;
    c->nack_interval_ps = 500 * ORR_PS_PER_US;
    c->rto_ps = 1000 * ORR_PS_PER_US;
    c->timely_alpha = 0.875;
    c->timely_beta = 0.8;
    c->timely_t_low_ps = 50 * ORR_PS_PER_US;
    c->timely_t_high_ps = 500 * ORR_PS_PER_US;
    c->timely_min_rtt_ps = 20 * ORR_PS_PER_US;
    c->seed = 1;
    c->ecmp_ns3 = 1;
    c->accel = 1;
    c->memo = 1;
    c->ss_theta = ORR_SS_THETA_DEFAULT;
    c->ss_window = ORR_SS_WINDOW_DEFAULT;
}

/* run.py writes its presets for a NIC of `bw` Gb/s; these are its quantities per bit/s of NIC
 * rate (RATE_AI 5*bw/25 Mb/s for DCQCN, ...), per byte/s here. */
#define PER_NIC(mbps_per_gbps) ((mbps_per_gbps) * 1e-3) /* Mb/s per Gb/s -> (B/s)/(B/s) */

void orr_packet_config_preset(orr_packet_config *c, orr_cc cc, double nic_Bps, uint32_t payload_bytes)
{
    orr_packet_config_default(c);
    double gbps = nic_Bps * 8 / 1e9;
    c->cc = cc;
    c->mtu_bytes = payload_bytes;
    c->min_packets_per_flow = 64;
    c->min_payload_bytes = 4096; /* a RoCE MTU */
    c->ack_interval_bytes = 1; /* every packet */
    c->chunk_bytes = 0;        /* no extra ACKs at 4000-byte chunk boundaries (one per packet anyway) */
    c->pfc_enabled = 1;
    c->ecn_enabled = 1;
    c->buffer_bytes = (uint64_t)llround(16.0 * 1024 * 1024 * gbps / 50); /* BUFFER_SIZE 16 MB per 50 Gb/s */
    c->alpha_resume_interval_ps = 1 * ORR_PS_PER_US;
    c->rate_decrease_interval_ps = 4 * ORR_PS_PER_US;
    c->rp_timer_ps = 300 * ORR_PS_PER_US;
    c->ewma_gain = 1.0 / 256;
    c->fast_recovery_times = 1;
    c->clamp_target_rate = 0;
    c->min_rate_Bps = 1000e6 / 8;
    c->dctcp_rate_ai_Bps = 1000e6 / 8;
    c->global_t = 1;
    c->rate_bound = 1;
    c->mi_thresh = 0;
    c->u_target = 0.95;
    /* RED for a link of the NIC's rate: KMIN 100 KB, KMAX 400 KB per 25 Gb/s, PMAX 0.2 */
    c->n_red = 1;
    c->red_rate_Bps[0] = nic_Bps;
    c->kmin_bytes[0] = (uint64_t)llround(100e3 * gbps / 25);
    c->kmax_bytes[0] = (uint64_t)llround(400e3 * gbps / 25);
    c->pmax[0] = 0.2;
    switch (cc) {
    case ORR_CC_DCQCN:
        c->rate_ai_Bps = nic_Bps * PER_NIC(5.0 / 25);
        c->rate_hai_Bps = nic_Bps * PER_NIC(50.0 / 25);
        c->has_win = c->var_win = 0;
        c->fast_react = 0;
        c->ack_high_prio = 1;
        break;
    case ORR_CC_HPCC:
        c->rate_ai_Bps = c->rate_hai_Bps = nic_Bps * PER_NIC(10.0 / 25);
        c->has_win = c->var_win = 1;
        c->fast_react = 1;
        c->ack_high_prio = 0;
        break;
    case ORR_CC_TIMELY:
        c->rate_ai_Bps = nic_Bps * PER_NIC(10.0 / 10);
        c->rate_hai_Bps = nic_Bps * PER_NIC(50.0 / 10);
        c->has_win = c->var_win = 0;
        c->fast_react = 0;
        c->ack_high_prio = 1;
        break;
    case ORR_CC_DCTCP:
        c->rate_ai_Bps = c->rate_hai_Bps = 10e6 / 8;
        c->dctcp_rate_ai_Bps = 615e6 / 8;
        c->ewma_gain = 0.0625;
        c->has_win = c->var_win = 1;
        c->fast_react = 0;
        c->ack_high_prio = 0;
        c->kmin_bytes[0] = c->kmax_bytes[0] = (uint64_t)llround(30e3 * gbps / 10); /* 30 KB per 10 Gb/s */
        c->pmax[0] = 1.0;
        break;
    }
}

void orr_packet_config_red_for_topology(orr_packet_config *c, const orr_topo *t)
{
    if (c->n_red == 0) return;
    double base = c->red_rate_Bps[0], kmin = (double)c->kmin_bytes[0], kmax = (double)c->kmax_bytes[0];
    double pmax = c->pmax[0];
    uint32_t n = 0;
    for (uint32_t l = 0; l < t->n_links && n < ORR_PKT_RED_MAX; l++) {
        int tier = t->links[l].tier < ORR_TIER_COUNT ? t->links[l].tier : ORR_TIER_AGG;
        double scale = c->rate_scale[tier] > 0 ? c->rate_scale[tier] : 1.0;
        double r = t->links[l].rate_Bps * scale;
        uint32_t i = 0;
        while (i < n && fabs(c->red_rate_Bps[i] - r) >= 1e-6 * r) i++;
        if (i < n) continue;
        c->red_rate_Bps[n] = r;
        c->kmin_bytes[n] = (uint64_t)llround(kmin * r / base);
        c->kmax_bytes[n] = (uint64_t)llround(kmax * r / base);
        c->pmax[n] = pmax;
        n++;
    }
    if (n) c->n_red = n;
}

double orr_packet_wire_per_payload(const orr_packet_config *c)
{
    uint32_t hdr = PKT_DATA_HDR_BYTES + (c->cc == ORR_CC_HPCC ? PKT_INT_HPCC_BYTES : c->cc == ORR_CC_TIMELY ? PKT_INT_TS_BYTES : 0);
    return c->mtu_bytes ? (double)(c->mtu_bytes + hdr) / c->mtu_bytes : 1.0;
}

typedef enum key_kind {
    K_BOOL,     /* int 0/1 */
    K_U32,      /* uint32_t > 0 */
    K_U64,      /* uint64_t > 0 */
    K_U32_0,    /* uint32_t >= 0 */
    K_PROB,     /* double in [0,1] */
    K_POS,      /* double > 0 */
    K_US,       /* microseconds -> int64_t ps */
    K_RATE,     /* rate like 50Mb/s -> double Bps */
    K_PATH,     /* output file name -> char[512] */
    K_IGNORED,  /* accepted, no effect */
} key_kind;

typedef struct key_def {
    const char *name;
    key_kind kind;
    size_t off;
} key_def;

#define OFF(field) offsetof(orr_packet_config, field)
static const key_def keys[] = {
    {"ENABLE_QCN", K_BOOL, OFF(ecn_enabled)},
    {"ENABLE_PFC", K_BOOL, OFF(pfc_enabled)},
    {"PACKET_PAYLOAD_SIZE", K_U32, OFF(mtu_bytes)},
    {"L2_CHUNK_SIZE", K_U64, OFF(chunk_bytes)},
    {"L2_ACK_INTERVAL", K_U64, OFF(ack_interval_bytes)},
    {"L2_BACK_TO_ZERO", K_BOOL, OFF(back_to_zero)},
    {"ALPHA_RESUME_INTERVAL", K_US, OFF(alpha_resume_interval_ps)},
    {"RATE_DECREASE_INTERVAL", K_US, OFF(rate_decrease_interval_ps)},
    {"RP_TIMER", K_US, OFF(rp_timer_ps)},
    {"NACK_INTERVAL", K_US, OFF(nack_interval_ps)},
    {"RTO", K_US, OFF(rto_ps)},
    {"CLAMP_TARGET_RATE", K_BOOL, OFF(clamp_target_rate)},
    {"EWMA_GAIN", K_PROB, OFF(ewma_gain)},
    {"FAST_RECOVERY_TIMES", K_U32_0, OFF(fast_recovery_times)},
    {"RATE_AI", K_RATE, OFF(rate_ai_Bps)},
    {"RATE_HAI", K_RATE, OFF(rate_hai_Bps)},
    {"MIN_RATE", K_RATE, OFF(min_rate_Bps)},
    {"DCTCP_RATE_AI", K_RATE, OFF(dctcp_rate_ai_Bps)},
    {"ERROR_RATE_PER_LINK", K_PROB, OFF(error_rate)},
    {"HAS_WIN", K_BOOL, OFF(has_win)},
    {"GLOBAL_T", K_BOOL, OFF(global_t)},
    {"VAR_WIN", K_BOOL, OFF(var_win)},
    {"FAST_REACT", K_BOOL, OFF(fast_react)},
    {"U_TARGET", K_POS, OFF(u_target)},
    {"MI_THRESH", K_U32_0, OFF(mi_thresh)},
    {"RATE_BOUND", K_BOOL, OFF(rate_bound)},
    {"ACK_HIGH_PRIO", K_BOOL, OFF(ack_high_prio)},
    {"FCT_OUTPUT_FILE", K_PATH, OFF(fct_output)},
    {"PFC_OUTPUT_FILE", K_PATH, OFF(pfc_output)},
    {"RANDOM_SEED", K_U64, OFF(seed)},
    {"ECMP_NS3", K_BOOL, OFF(ecmp_ns3)},
    {"FLOW_FILE", K_IGNORED, 0},
    {"TOPOLOGY_FILE", K_IGNORED, 0},
    {"TRACE_FILE", K_IGNORED, 0},
    {"TRACE_OUTPUT_FILE", K_IGNORED, 0},
    {"QLEN_MON_FILE", K_IGNORED, 0},
    {"BW_MON_FILE", K_IGNORED, 0},
    {"RATE_MON_FILE", K_IGNORED, 0},
    {"CNP_MON_FILE", K_IGNORED, 0},
    {"MON_START", K_IGNORED, 0},
    {"MON_END", K_IGNORED, 0},
    {"PINT_LOG_BASE", K_IGNORED, 0},
    {"PINT_PROB", K_IGNORED, 0},
    {"INT_MULTI", K_IGNORED, 0},
};

/* Keys whose only implemented value is `value`. */
static const struct { const char *name; long value; } fixed_keys[] = {
    {"USE_DYNAMIC_PFC_THRESHOLD", 1},
    {"MULTI_RATE", 0},
    {"SAMPLE_FEEDBACK", 0},
};

typedef struct line_ctx {
    const char *path;
    int line;
    const char *key;
    orr_err *err;
} line_ctx;

static int bad(const line_ctx *x, const char *value, const char *expected)
{
    return orr_fail(x->err, "%s:%d: %s: '%s' is not %s", x->path, x->line, x->key, value, expected);
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return (end == s || *end || errno || !isfinite(*out)) ? -1 : 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (s[0] == '-') return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end || errno) return -1;
    *out = v;
    return 0;
}

static int set_value(orr_packet_config *c, const key_def *k, char **tok, int nt, const line_ctx *x)
{
    char *base = (char *)c + k->off;
    if (k->kind == K_IGNORED) return 0;
    if (nt < 1) return orr_fail(x->err, "%s:%d: %s: missing value", x->path, x->line, x->key);
    const char *v = tok[0];
    uint64_t u;
    double d;
    switch (k->kind) {
    case K_BOOL:
        if (parse_u64(v, &u) || u > 1) return bad(x, v, "0 or 1");
        *(int *)base = (int)u;
        break;
    case K_U32:
    case K_U32_0:
        if (parse_u64(v, &u) || u > UINT32_MAX || (k->kind == K_U32 && u == 0))
            return bad(x, v, k->kind == K_U32 ? "a positive integer" : "a non-negative integer");
        *(uint32_t *)base = (uint32_t)u;
        break;
    case K_U64:
        if (parse_u64(v, &u) || u == 0) return bad(x, v, "a positive integer");
        *(uint64_t *)base = u;
        break;
    case K_PROB:
        if (parse_double(v, &d) || d < 0 || d > 1) return bad(x, v, "a number in [0,1]");
        *(double *)base = d;
        break;
    case K_POS:
        if (parse_double(v, &d) || !(d > 0)) return bad(x, v, "a positive number");
        *(double *)base = d;
        break;
    case K_US:
        if (parse_double(v, &d) || !(d * ORR_PS_PER_US >= 0.5) || d > 1e12)
            return bad(x, v, "a positive time in microseconds (at least 0.0000005, one picosecond)");
        *(int64_t *)base = (int64_t)llround(d * ORR_PS_PER_US);
        break;
    case K_RATE:
        if (orr_parse_rate_Bps(v, &d)) return bad(x, v, "a rate like 50Mb/s");
        *(double *)base = d;
        break;
    case K_PATH:
        if (strlen(v) >= sizeof c->fct_output) return bad(x, v, "a file name shorter than 512 bytes");
        strcpy(base, v);
        break;
    case K_IGNORED:
        break;
    }
    return 0;
}

/* KMIN_MAP / KMAX_MAP / PMAX_MAP: "n rate1 v1 rate2 v2 ..." (rates in bit/s, K in KB). */
static int set_red_map(orr_packet_config *c, int which, char **tok, int nt, const line_ctx *x)
{
    uint64_t n;
    if (nt < 1 || parse_u64(tok[0], &n) || n == 0 || n > ORR_PKT_RED_MAX)
        return bad(x, nt ? tok[0] : "", "a count of rate classes (1..16)");
    if ((uint64_t)nt != 1 + 2 * n)
        return orr_fail(x->err, "%s:%d: %s: expected %llu 'rate value' pairs after the count, got %d values",
                        x->path, x->line, x->key, (unsigned long long)n, nt - 1);
    for (uint64_t i = 0; i < n; i++) {
        double rate, v;
        if (parse_double(tok[1 + 2 * i], &rate) || !(rate > 0)) return bad(x, tok[1 + 2 * i], "a link rate in bit/s");
        if (parse_double(tok[2 + 2 * i], &v) || v < 0 || (which == 2 && v > 1))
            return bad(x, tok[2 + 2 * i], which == 2 ? "a probability in [0,1]" : "a threshold in KB");
        c->red_rate_Bps[i] = rate / 8;
        if (which == 0) c->kmin_bytes[i] = (uint64_t)llround(v * 1000);
        else if (which == 1) c->kmax_bytes[i] = (uint64_t)llround(v * 1000);
        else c->pmax[i] = v;
    }
    c->n_red = (uint32_t)n;
    return 0;
}

static int set_special(orr_packet_config *c, char **tok, int nt, const line_ctx *x, orr_buf *warnings, int *done)
{
    const char *k = x->key;
    double d;
    uint64_t u;
    *done = 1;
    if (strcmp(k, "CC_MODE") == 0) {
        if (nt < 1 || parse_u64(tok[0], &u)) return bad(x, nt ? tok[0] : "", "a CC mode (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP)");
        if (u != 1 && u != 3 && u != 7 && u != 8)
            return orr_fail(x->err, "%s:%d: CC_MODE: %llu is not implemented (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP)",
                            x->path, x->line, (unsigned long long)u);
        c->cc = (orr_cc)u;
    } else if (strcmp(k, "BUFFER_SIZE") == 0) {
        if (nt < 1 || parse_double(tok[0], &d) || !(d > 0) || d > 1e6) return bad(x, nt ? tok[0] : "", "a buffer size in MB");
        c->buffer_bytes = (uint64_t)llround(d * 1024 * 1024);
    } else if (strcmp(k, "SIMULATOR_STOP_TIME") == 0) {
        if (nt < 1 || parse_double(tok[0], &d) || !(d > 0) || d > 1e6) return bad(x, nt ? tok[0] : "", "a time in seconds");
        c->stop_ps = (int64_t)llround(d * ORR_PS_PER_S);
    } else if (strcmp(k, "KMIN_MAP") == 0 || strcmp(k, "KMAX_MAP") == 0 || strcmp(k, "PMAX_MAP") == 0) {
        return set_red_map(c, strcmp(k, "KMIN_MAP") == 0 ? 0 : strcmp(k, "KMAX_MAP") == 0 ? 1 : 2, tok, nt, x);
    } else if (strcmp(k, "LINK_DOWN") == 0) {
        for (int i = 0; i < nt; i++)
            if (strcmp(tok[i], "0") != 0)
                return orr_fail(x->err, "%s:%d: LINK_DOWN: taking links down is not implemented (expected '0 0 0')",
                                x->path, x->line);
    } else if (strcmp(k, "ENABLE_TRACE") == 0) {
        if (nt >= 1 && strcmp(tok[0], "0") != 0)
            orr_buf_printf(warnings, "%s:%d: ENABLE_TRACE: the packet trace is not written by orrery netsim\n",
                           x->path, x->line);
    } else {
        for (size_t i = 0; i < sizeof fixed_keys / sizeof fixed_keys[0]; i++) {
            if (strcmp(k, fixed_keys[i].name) != 0) continue;
            if (nt < 1 || parse_u64(tok[0], &u)) return bad(x, nt ? tok[0] : "", "an integer");
            if ((long)u != fixed_keys[i].value)
                return orr_fail(x->err, "%s:%d: %s: %llu is not implemented (only %ld)", x->path, x->line, k,
                                (unsigned long long)u, fixed_keys[i].value);
            return 0;
        }
        *done = 0;
    }
    return 0;
}

static int parse_lines(orr_packet_config *c, const char *text, const char *path, orr_buf *warnings, orr_err *err)
{
    int line = 0;
    const char *p = text;
    while (*p) {
        line++;
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char buf[4096];
        if (len >= sizeof buf) return orr_fail(err, "%s:%d: line longer than %zu bytes", path, line, sizeof buf - 1);
        memcpy(buf, p, len);
        buf[len] = '\0';
        p = eol ? eol + 1 : p + len;
        char *hash = strchr(buf, '#');
        if (hash) *hash = '\0';
        char *tok[64];
        int nt = 0;
        for (char *save = NULL, *t = strtok_r(buf, " \t\r", &save); t && nt < 64; t = strtok_r(NULL, " \t\r", &save))
            tok[nt++] = t;
        if (nt == 0) continue;
        line_ctx x = {path, line, tok[0], err};
        int done;
        if (set_special(c, tok + 1, nt - 1, &x, warnings, &done)) return -1;
        if (done) continue;
        const key_def *k = NULL;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (strcmp(keys[i].name, tok[0]) == 0) k = &keys[i];
        if (!k) {
            orr_buf_printf(warnings, "%s:%d: unknown key %s (ignored)\n", path, line, tok[0]);
            continue;
        }
        if (set_value(c, k, tok + 1, nt - 1, &x)) return -1;
    }
    return 0;
}

int orr_packet_config_parse(orr_packet_config *c, const char *text, const char *path, orr_buf *warnings,
                            orr_err *err)
{
    orr_buf local = {0};
    int rc = parse_lines(c, text, path, warnings ? warnings : &local, err);
    orr_buf_free(&local);
    /* the bounds `orrery predict --packet-payload` has: a 1-byte payload would simulate every byte
     * as a packet (docs/netsim.md) */
    if (rc == 0 && (c->mtu_bytes < ORR_NETSIM_PAYLOAD_MIN || c->mtu_bytes > ORR_PACKET_PAYLOAD_MAX))
        rc = orr_fail(err, "%s: PACKET_PAYLOAD_SIZE %u: expected %u to %u bytes", path, c->mtu_bytes,
                      (unsigned)ORR_NETSIM_PAYLOAD_MIN, (unsigned)ORR_PACKET_PAYLOAD_MAX);
    return rc;
}

int orr_packet_config_read(orr_packet_config *c, const char *path, orr_buf *warnings, orr_err *err)
{
    char *text = orr_read_file(path, NULL, err);
    if (!text) return -1;
    int rc = orr_packet_config_parse(c, text, path, warnings, err);
    free(text);
    return rc;
}
