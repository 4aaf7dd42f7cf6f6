/*
 * netsim.c - `orrery netsim TOPO FLOWS CONFIG`: the packet engine on HPCC-format inputs.
 *
 * Reads the flow list (`N` then `src dst priority_group dst_port size_bytes start_seconds`),
 * runs every flow on a private orr_engine, and produces the FCT file in the reference format
 * (`sip dip sport dport size start_ns fct_ns standalone_fct_ns`, IPs 0x0b000001 + node * 0x100,
 * one line per flow in the order flows finished), the PFC event lines and a summary. Source ports
 * count up from 10000 per (source, destination) pair, as the reference assigns them; paths are
 * the reference's (ns3route.c) unless the config says ECMP_NS3 0 (then the 5-tuple seeds
 * Orrery's ECMP hash).
 */
#include "orrery/packet.h"
#include "orrery/progress.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* mean, median (average of the two middle values when even) and p99 (nearest rank) */
static void stats3(double *v, uint32_t n, double *mean, double *median, double *p99)
{
    *mean = *median = *p99 = 0;
    if (n == 0) return;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) sum += v[i];
    *mean = sum / n;
    *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    uint32_t rank = (uint32_t)ceil(0.99 * n);
    *p99 = v[(rank ? rank : 1) - 1];
}

void orr_fct_summarize(const double *fct_ns, const double *standalone_ns, uint32_t n, orr_fct_summary *out)
{
    double *a = orr_xmalloc((n ? n : 1) * sizeof *a), *b = orr_xmalloc((n ? n : 1) * sizeof *b);
    for (uint32_t i = 0; i < n; i++) {
        a[i] = fct_ns[i];
        b[i] = standalone_ns[i] > 0 ? fct_ns[i] / standalone_ns[i] : 1.0;
    }
    out->flows = n;
    stats3(a, n, &out->mean_fct_ns, &out->median_fct_ns, &out->p99_fct_ns);
    stats3(b, n, &out->mean_slowdown, &out->median_slowdown, &out->p99_slowdown);
    free(a);
    free(b);
}

int orr_fct_read_summary(const char *path, orr_fct_summary *out, orr_err *err)
{
    char *text = orr_read_file(path, NULL, err);
    if (!text) return -1;
    double *fct = NULL, *alone = NULL;
    size_t n = 0, cap = 0;
    int line = 0, rc = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        line++;
        unsigned sip, dip, sport, dport;
        unsigned long long size, start, f, s;
        if (sscanf(l, "%x %x %u %u %llu %llu %llu %llu", &sip, &dip, &sport, &dport, &size, &start, &f, &s) != 8) {
            rc = orr_fail(err, "%s:%d: expected 'sip dip sport dport size start_ns fct_ns standalone_fct_ns'", path, line);
            break;
        }
        if (n == cap) {
            size_t c1 = cap;
            orr_grow((void **)&fct, &c1, n + 1, sizeof *fct);
            orr_grow((void **)&alone, &cap, n + 1, sizeof *alone);
        }
        fct[n] = (double)f;
        alone[n++] = (double)s;
    }
    if (rc == 0) orr_fct_summarize(fct, alone, (uint32_t)n, out);
    free(fct);
    free(alone);
    free(text);
    return rc;
}

/* ---- the flow list ---- */

typedef struct flow_line {
    uint32_t src, dst;
    uint8_t pg;
    uint16_t dport;
    uint64_t bytes;
    int64_t start_ps;
} flow_line;

static int field_u64(const char *tok, uint64_t *v)
{
    char *end;
    errno = 0;
    if (!tok || tok[0] == '-') return -1;
    *v = strtoull(tok, &end, 10);
    return (end == tok || *end || errno) ? -1 : 0;
}

static int parse_flow_line(char *l, const char *path, int line, const orr_topo *t, flow_line *o, orr_err *err)
{
    static const char *names[6] = {"src", "dst", "priority_group", "dst_port", "size_bytes", "start_seconds"};
    char *tok[6] = {0};
    int nt = 0;
    for (char *save = NULL, *x = strtok_r(l, " \t\r", &save); x && nt < 6; x = strtok_r(NULL, " \t\r", &save))
        tok[nt++] = x;
    if (nt < 6)
        return orr_fail(err, "%s:%d: %s: missing (expected 'src dst priority_group dst_port size_bytes start_seconds')",
                        path, line, names[nt]);
    uint64_t v[5];
    for (int i = 0; i < 5; i++)
        if (field_u64(tok[i], &v[i])) return orr_fail(err, "%s:%d: %s: '%s' is not a non-negative integer", path, line, names[i], tok[i]);
    for (int i = 0; i < 2; i++)
        if (v[i] >= t->n_nodes || t->node_host[v[i]] == UINT32_MAX)
            return orr_fail(err, "%s:%d: %s: node %llu is not a host of the topology", path, line, names[i],
                            (unsigned long long)v[i]);
    if (v[0] == v[1]) return orr_fail(err, "%s:%d: dst: same node as src", path, line);
    if (v[2] > 7) return orr_fail(err, "%s:%d: priority_group: %llu is not in 0..7", path, line, (unsigned long long)v[2]);
    if (v[3] > 65535) return orr_fail(err, "%s:%d: dst_port: %llu is not a port number", path, line, (unsigned long long)v[3]);
    if (v[4] == 0) return orr_fail(err, "%s:%d: size_bytes: must be positive", path, line);
    char *end;
    errno = 0;
    double start = strtod(tok[5], &end);
    if (end == tok[5] || *end || errno || !(start >= 0) || start > 1e6)
        return orr_fail(err, "%s:%d: start_seconds: '%s' is not a time in seconds", path, line, tok[5]);
    *o = (flow_line){t->node_host[v[0]], t->node_host[v[1]], (uint8_t)v[2], (uint16_t)v[3], v[4],
                     (int64_t)llround(start * ORR_PS_PER_S)};
    return 0;
}

/* The most flows a flow file may list: 2 GB of the simulator's state at about 750 B a flow (2
 * million flows took 1.5 GB); ORRERY_MAX_FLOWS overrides it (docs/spec.md "Limits"). */
static uint64_t netsim_max_flows(void)
{
    uint64_t v = orr_env_limit("ORRERY_MAX_FLOWS", ORR_NETSIM_MAX_FLOWS);
    return v <= UINT32_MAX ? v : ORR_NETSIM_MAX_FLOWS; /* flows are counted in 32 bits */
}

static int read_flows(const char *path, const orr_topo *t, flow_line **out, uint32_t *n_out, orr_err *err)
{
    char *text = orr_read_file(path, NULL, err);
    if (!text) return -1;
    flow_line *fl = NULL;
    size_t n = 0, cap = 0;
    uint64_t want = 0;
    int line = 0, rc = 0, have_count = 0;
    char *p = text;
    while (*p && rc == 0) {
        line++;
        char *eol = strchr(p, '\n');
        if (eol) *eol = '\0';
        char *l = p;
        p = eol ? eol + 1 : p + strlen(p);
        while (*l == ' ' || *l == '\t' || *l == '\r') l++;
        if (*l == '\0') continue;
        if (!have_count) {
            char *e2 = l + strcspn(l, " \t\r");
            *e2 = '\0';
            if (field_u64(l, &want))
                rc = orr_fail(err, "%s:%d: flow count: '%s' is not a count of flows", path, line, l);
            else if (want > netsim_max_flows())
                rc = orr_fail(err, "%s:%d: flow count %llu: more than %llu flows, the 2 GB budget at about 750 B a "
                                   "flow (ORRERY_MAX_FLOWS=N raises it; docs/spec.md \"Limits\")",
                              path, line, (unsigned long long)want, (unsigned long long)netsim_max_flows());
            have_count = 1;
            continue;
        }
        if (n == want) {
            rc = orr_fail(err, "%s:%d: more flows than the count %llu on the first line", path, line, (unsigned long long)want);
            break;
        }
        flow_line f;
        rc = parse_flow_line(l, path, line, t, &f, err);
        if (rc == 0) ORR_PUSH(fl, n, cap, f);
    }
    if (rc == 0 && !have_count) rc = orr_fail(err, "%s:1: flow count: empty flow file", path);
    if (rc == 0 && n != want)
        rc = orr_fail(err, "%s:%d: expected %llu flows, found %zu", path, line, (unsigned long long)want, n);
    free(text);
    if (rc) {
        free(fl);
        return -1;
    }
    *out = fl;
    *n_out = (uint32_t)n;
    return 0;
}

/* A run without SIMULATOR_STOP_TIME ends only when every flow has: refuse one whose packets alone
 * (bytes / PACKET_PAYLOAD_SIZE, about four events each) would take hours (docs/netsim.md "Limits";
 * a 1e18-byte flow ran forever). */
static int check_work(const char *path, const orr_packet_config *cfg, const flow_line *fl, uint32_t nf, orr_err *err)
{
    if (cfg->stop_ps > 0) return 0;
    double packets = 0, mtu = cfg->mtu_bytes ? cfg->mtu_bytes : 1000;
    for (uint32_t i = 0; i < nf; i++) packets += ceil((double)fl[i].bytes / mtu);
    if (packets <= ORR_NETSIM_MAX_PACKETS) return 0;
    return orr_fail(err, "%s: the flows need about %.3g packets of %.0f bytes, more than %.3g (hours of simulation): "
                         "set SIMULATOR_STOP_TIME or a larger PACKET_PAYLOAD_SIZE", path, packets, mtu,
                    (double)ORR_NETSIM_MAX_PACKETS);
}

/* ---- the run ---- */

static uint32_t host_ip(const orr_topo *t, uint32_t host) { return orr_ns3_ip(t->host_node[host]); }

typedef struct pair_ix {
    uint32_t src, dst, i;
} pair_ix;

static int cmp_pair(const void *a, const void *b)
{
    const pair_ix *x = a, *y = b;
    if (x->src != y->src) return (x->src > y->src) - (x->src < y->src);
    if (x->dst != y->dst) return (x->dst > y->dst) - (x->dst < y->dst);
    return (x->i > y->i) - (x->i < y->i);
}

/* Source ports as the reference assigns them: from 10000 for each (src, dst) pair, in the order of
 * the flow file (third.cc / SimAI ScheduleFlowInputs: portNumber[src][dst]++, a uint16_t). */
static uint16_t *source_ports(const flow_line *fl, uint32_t n)
{
    pair_ix *ix = orr_xmalloc((n ? n : 1) * sizeof *ix);
    for (uint32_t i = 0; i < n; i++) ix[i] = (pair_ix){fl[i].src, fl[i].dst, i};
    qsort(ix, n, sizeof *ix, cmp_pair);
    uint16_t *port = orr_xmalloc((n ? n : 1) * sizeof *port);
    uint16_t next = 10000;
    for (uint32_t k = 0; k < n; k++) {
        if (k == 0 || ix[k].src != ix[k - 1].src || ix[k].dst != ix[k - 1].dst) next = 10000;
        port[ix[k].i] = next++;
    }
    free(ix);
    return port;
}

/* The engine's tick: the progress line, flows finished of the flow list. */
typedef struct netsim_tick {
    orr_progress *p;
    orr_packet_sim *s;
    uint32_t nflows;
} netsim_tick;

static void netsim_tick_fn(void *ctx, const orr_engine *e)
{
    const netsim_tick *k = ctx;
    uint32_t nfin;
    orr_packet_finished(k->s, &nfin);
    orr_progress_tick(k->p, e->now_ps, e->events_run, nfin, k->nflows, "flows");
}

int orr_netsim_run_with(const orr_topo *t, const orr_packet_config *cfg, const char *flows_path,
                        orr_netsim_result *r, orr_err *err)
{
    double t0 = now_s();
    memset(r, 0, sizeof *r);
    flow_line *fl;
    uint32_t nf;
    if (read_flows(flows_path, t, &fl, &nf, err)) return -1;
    if (check_work(flows_path, cfg, fl, nf, err)) {
        free(fl);
        return -1;
    }
    orr_engine e;
    orr_engine_init(&e);
    orr_packet_sim *s = orr_packet_sim_create(&e, t, cfg, err);
    if (!s) {
        free(fl);
        orr_engine_free(&e);
        return -1;
    }
    if (cfg->memo_path[0] && orr_packet_memo_load(s, cfg->memo_path, err)) {
        orr_packet_sim_free(s);
        free(fl);
        orr_engine_free(&e);
        return -1;
    }
    orr_packet_record_pfc(s, &r->pfc_text);
    uint16_t *sport = source_ports(fl, nf);
    orr_ns3_router *router = cfg->ecmp_ns3 ? orr_ns3_router_create(t) : NULL;
    for (uint32_t i = 0; i < nf; i++) {
        if (router) {
            uint32_t path[ORR_PKT_PATH_MAX], back[ORR_PKT_PATH_MAX];
            int n = orr_ns3_router_path(router, fl[i].src, fl[i].dst, sport[i], fl[i].dport, path, ORR_PKT_PATH_MAX);
            int nb = orr_ns3_router_path(router, fl[i].dst, fl[i].src, fl[i].dport, sport[i], back, ORR_PKT_PATH_MAX);
            orr_packet_add_flow_on(s, fl[i].src, fl[i].dst, fl[i].bytes, fl[i].start_ps, fl[i].pg, sport[i],
                                   fl[i].dport, path, n, back, nb, NULL, NULL, 0);
        } else {
            uint64_t tuple = ((uint64_t)host_ip(t, fl[i].src) << 32 | host_ip(t, fl[i].dst)) ^
                             orr_hash64(((uint64_t)sport[i] << 16 | fl[i].dport) ^ ((uint64_t)fl[i].pg << 40));
            orr_packet_add_flow(s, fl[i].src, fl[i].dst, fl[i].bytes, fl[i].start_ps, fl[i].pg, sport[i], fl[i].dport,
                                orr_hash64(tuple), NULL, NULL, 0);
        }
    }
    orr_ns3_router_free(router);
    free(sport);
    free(fl);
    if (cfg->stop_ps > 0) orr_packet_set_stop(s, cfg->stop_ps);
    double t1 = now_s();
    netsim_tick tick = {cfg->progress, s, nf};
    if (cfg->progress) {
        e.tick_fn = netsim_tick_fn;
        e.tick_ctx = &tick;
    }
    orr_engine_run(&e);
    orr_progress_done(cfg->progress);
    double t2 = now_s();
    if (e.overflow) {
        orr_netsim_result_free(r);
        orr_packet_sim_free(s);
        orr_engine_free(&e);
        return orr_fail(err, "%s: the simulation ran past %.0f days of simulated time (the 2^62 ps clock); set "
                             "SIMULATOR_STOP_TIME or check the flows' sizes and start times",
                        flows_path, (double)ORR_ENGINE_MAX_PS / ORR_PS_PER_S / 86400.0);
    }

    uint32_t nfin;
    const uint32_t *fin = orr_packet_finished(s, &nfin);
    double *fct = orr_xmalloc((nfin ? nfin : 1) * sizeof *fct), *alone = orr_xmalloc((nfin ? nfin : 1) * sizeof *alone);
    for (uint32_t i = 0; i < nfin; i++) {
        orr_packet_flow_info fi;
        orr_packet_flow_get(s, fin[i], &fi);
        int64_t start_ns = fi.start_ps / ORR_PS_PER_NS, fct_ns = (fi.finish_ps - fi.start_ps) / ORR_PS_PER_NS;
        int64_t alone_ns = fi.standalone_ps / ORR_PS_PER_NS;
        orr_buf_printf(&r->fct_text, "%08x %08x %u %u %llu %lld %lld %lld\n", host_ip(t, fi.src_host),
                       host_ip(t, fi.dst_host), fi.sport, fi.dport, (unsigned long long)fi.bytes, (long long)start_ns,
                       (long long)fct_ns, (long long)alone_ns);
        fct[i] = (double)fct_ns;
        alone[i] = (double)alone_ns;
    }
    orr_fct_summarize(fct, alone, nfin, &r->fct);
    free(fct);
    free(alone);
    if (cfg->memo_path[0] && orr_packet_memo_save(s, cfg->memo_path, err)) {
        orr_netsim_result_free(r);
        orr_packet_sim_free(s);
        orr_engine_free(&e);
        return -1;
    }
    orr_packet_stats_get(s, &r->stats);
    orr_packet_accel_stats_get(s, &r->accel);
    r->flows_total = nf;
    r->sim_end_ps = r->stats.last_finish_ps;
    r->setup_wall_s = t1 - t0;
    r->wall_s = t2 - t1;
    if (!r->pfc_text.s) orr_buf_puts(&r->pfc_text, "");
    if (!r->fct_text.s) orr_buf_puts(&r->fct_text, "");
    orr_packet_sim_free(s);
    orr_engine_free(&e);
    return 0;
}

int orr_netsim_run(const char *topo_path, const char *flows_path, const char *config_path,
                   orr_netsim_result *r, orr_buf *warnings, orr_err *err)
{
    orr_packet_config cfg;
    orr_packet_config_default(&cfg);
    if (orr_packet_config_read(&cfg, config_path, warnings, err)) return -1;
    orr_topo t;
    if (orr_topo_read_hpcc(&t, topo_path, err)) return -1;
    int rc = orr_netsim_run_with(&t, &cfg, flows_path, r, err);
    orr_topo_free(&t);
    return rc;
}

void orr_netsim_result_free(orr_netsim_result *r)
{
    orr_buf_free(&r->fct_text);
    orr_buf_free(&r->pfc_text);
}

void orr_netsim_summary(const orr_netsim_result *r, const orr_packet_config *cfg, orr_buf *out)
{
    const orr_packet_stats *st = &r->stats;
    const orr_fct_summary *f = &r->fct;
    orr_buf_printf(out, "cc %s, flows %u finished of %u\n", orr_cc_name(cfg->cc), f->flows, r->flows_total);
    orr_buf_printf(out, "events %llu, simulated time %.6f s (last flow end), wall %.3f s run + %.3f s setup, %.2f M events/s\n",
                   (unsigned long long)st->events, (double)r->sim_end_ps / ORR_PS_PER_S, r->wall_s, r->setup_wall_s,
                   r->wall_s > 0 ? (double)st->events / r->wall_s / 1e6 : 0.0);
    orr_buf_printf(out, "packets: data %llu, ack %llu, pfc frames %llu; ecn marks %llu, cnps %llu; drops %llu (buffer), %llu (loss)\n",
                   (unsigned long long)st->data_packets, (unsigned long long)st->ack_packets,
                   (unsigned long long)st->pfc_frames, (unsigned long long)st->ecn_marks, (unsigned long long)st->cnps,
                   (unsigned long long)st->drops, (unsigned long long)st->loss_drops);
    orr_buf_printf(out, "pfc: %llu pauses, %llu resumes\n", (unsigned long long)st->pfc_pauses,
                   (unsigned long long)st->pfc_resumes);
    orr_buf_printf(out, "fct us: mean %.3f, median %.3f, p99 %.3f\n", f->mean_fct_ns / 1e3, f->median_fct_ns / 1e3,
                   f->p99_fct_ns / 1e3);
    orr_buf_printf(out, "slowdown (fct / standalone fct): mean %.4f, median %.4f, p99 %.4f\n", f->mean_slowdown,
                   f->median_slowdown, f->p99_slowdown);
    orr_packet_accel_summary(&r->accel, cfg, out);
}

void orr_packet_accel_summary(const orr_packet_accel_stats *a, const orr_packet_config *cfg, orr_buf *out)
{
    if (!a->enabled) {
        orr_buf_printf(out, "wormhole: off (--no-accel)\n");
        return;
    }
    orr_buf_printf(out, "wormhole (theta %.3g, window %u samples): %llu partitions formed, %llu merges, %llu splits; "
                        "%llu fast-forwards "
                        "(%llu cut short by a flow entering), %.6f s skipped, %.3f GB fast-forwarded, steady fraction %.4f\n",
                   cfg->ss_theta, cfg->ss_window, (unsigned long long)a->partitions, (unsigned long long)a->merges, (unsigned long long)a->splits,
                   (unsigned long long)a->fast_forwards, (unsigned long long)a->skip_backs,
                   (double)a->skipped_ps / ORR_PS_PER_S, (double)a->skipped_bytes / 1e9, orr_packet_steady_fraction(a));
    if (a->memo_enabled)
        orr_buf_printf(out, "memo: %llu hits (%llu following a recording), %llu misses, %llu not eligible, %llu recorded, %llu disturbed, "
                            "%llu aborted, %llu noisy; %llu loaded, %llu saved\n",
                       (unsigned long long)a->memo_hits, (unsigned long long)a->memo_followers, (unsigned long long)a->memo_misses,
                       (unsigned long long)a->memo_ineligible, (unsigned long long)a->memo_recorded,
                       (unsigned long long)a->memo_disturbed, (unsigned long long)a->memo_aborts,
                       (unsigned long long)a->memo_noisy, (unsigned long long)a->memo_loaded, (unsigned long long)a->memo_saved);
    else
        orr_buf_printf(out, "memo: off (--no-memo)\n");
}

double orr_packet_steady_fraction(const orr_packet_accel_stats *a)
{
    return a->flow_ps > 0 ? a->steady_flow_ps / a->flow_ps : 0.0;
}
