/*
 * json.c - the machine-readable report (`orrery predict --json`) and the JSON primitives every
 * writer in Orrery uses: string escaping and round-trip-exact numbers.
 *
 * The document's schema is docs/json.md; ORR_JSON_SCHEMA_VERSION changes whenever a key is renamed
 * or removed or its meaning or unit changes (adding keys does not). Output is a pure function of
 * the inputs: no wall time, no pointers, no hash order, numbers formatted without locale-dependent
 * or platform-dependent shortcuts beyond C's printf, so identical inputs give identical bytes.
 */
#include "orrery/report.h"
#include "orrery/packet.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- primitives ---- */

/* Length (2..4) of the well-formed UTF-8 sequence at p, or 0 if p does not start one (stray
 * continuation byte, overlong form, surrogate, beyond U+10FFFF, or truncated by the NUL). */
static size_t utf8_seq_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07, min = 0x10000;
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0; /* also stops at the terminating NUL */
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

void orr_json_str(orr_buf *b, const char *s)
{
    if (!s) {
        orr_buf_puts(b, "null");
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    /* Reserve the common case (nothing to escape) at once; escapes grow the buffer as they go. */
    orr_grow((void **)&b->s, &b->cap, b->n + strlen(s) + 3, 1);
    b->s[b->n++] = '"';
    while (*p) {
        size_t run = 0;
        /* A run of bytes copied as they are: printable ASCII other than '"' and '\\'. */
        while (p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\') run++;
        if (run) {
            orr_grow((void **)&b->s, &b->cap, b->n + run + 2, 1);
            memcpy(b->s + b->n, p, run);
            b->n += run;
            p += run;
            continue;
        }
        if (*p == '"' || *p == '\\') {
            orr_buf_printf(b, "\\%c", *p);
            p++;
        } else if (*p < 0x20) {
            orr_buf_printf(b, "\\u%04x", *p);
            p++;
        } else {
            size_t n = utf8_seq_len(p);
            if (n) {
                orr_grow((void **)&b->s, &b->cap, b->n + n + 2, 1);
                memcpy(b->s + b->n, p, n);
                b->n += n;
                p += n;
            } else {
                orr_buf_puts(b, "\\ufffd"); /* a byte that is not UTF-8: the replacement char */
                p++;
            }
        }
    }
    orr_grow((void **)&b->s, &b->cap, b->n + 2, 1);
    b->s[b->n++] = '"';
    b->s[b->n] = 0;
}

void orr_json_num(orr_buf *b, double v)
{
    if (!isfinite(v)) {
        orr_buf_puts(b, "null");
        return;
    }
    char text[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        if (strtod(text, NULL) == v) break;
    }
    orr_buf_puts(b, text);
}

/* ---- the report document ---- */

static double seconds_of(int64_t ps)
{
    return (double)ps / (double)ORR_PS_PER_S;
}

/* `"key": ` preceded by a newline and indent spaces (indent < 0: no newline, a space). */
static void key(orr_buf *b, int indent, const char *name)
{
    if (indent >= 0) orr_buf_printf(b, "\n%*s", indent, "");
    else orr_buf_puts(b, " ");
    orr_json_str(b, name);
    orr_buf_puts(b, ": ");
}

static void key_num(orr_buf *b, int indent, const char *name, double v, int last)
{
    key(b, indent, name);
    orr_json_num(b, v);
    if (!last) orr_buf_puts(b, ",");
}

static void key_u64(orr_buf *b, int indent, const char *name, uint64_t v, int last)
{
    key(b, indent, name);
    orr_buf_printf(b, "%llu%s", (unsigned long long)v, last ? "" : ",");
}

/* The memo's counters (docs/netsim.md "Memoization"), a "memo" member of the acceleration's object. */
static void memo_json(orr_buf *b, const orr_packet_accel_stats *a)
{
    key(b, -1, "memo");
    orr_buf_printf(b, "{\"enabled\": %s,", a->memo_enabled ? "true" : "false");
    const char *name[] = {"hits", "misses", "ineligible", "recorded", "disturbed", "aborts", "followers", "noisy", "loaded", "saved"};
    uint64_t v[] = {a->memo_hits, a->memo_misses, a->memo_ineligible, a->memo_recorded, a->memo_disturbed,
                    a->memo_aborts, a->memo_followers, a->memo_noisy, a->memo_loaded, a->memo_saved};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) key_u64(b, -1, name[i], v[i], i + 1 == sizeof v / sizeof v[0]);
    orr_buf_puts(b, "},");
}

static void key_str(orr_buf *b, int indent, const char *name, const char *s, int last)
{
    key(b, indent, name);
    orr_json_str(b, s);
    if (!last) orr_buf_puts(b, ",");
}

/* A topology backend's link use: "network": {"backend", "flows", "mirrored_flows", "mirrored_servers", "rotated_flows", "packet", "tiers": [...], "top_links": [...]}, or null. */
static void network_json(orr_buf *b, const orr_net_summary *n)
{
    key(b, 2, "network");
    if (!n->present) {
        orr_buf_puts(b, "null,");
        return;
    }
    orr_buf_puts(b, "{");
    key_str(b, 4, "backend", orr_net_kind_name(n->backend), 0);
    key_u64(b, 4, "flows", n->flows, 0);
    key_u64(b, 4, "mirrored_flows", n->mirrored_flows, 0);
    key_u64(b, 4, "mirrored_servers", n->mirrored_servers, 0);
    key_u64(b, 4, "rotated_flows", n->rotated_flows, 0);
    key(b, 4, "packet");
    if (n->backend != ORR_NET_PACKET) {
        orr_buf_puts(b, "null,");
    } else {
        orr_buf_puts(b, "{");
        key_str(b, -1, "cc", orr_cc_key(n->packet.cc), 0);
        key_u64(b, -1, "payload_bytes", n->packet.payload_bytes, 0);
        key_u64(b, -1, "flows", n->packet.flows, 0);
        key_u64(b, -1, "data_packets", n->packet.data_packets, 0);
        key_u64(b, -1, "ack_packets", n->packet.ack_packets, 0);
        key_u64(b, -1, "ecn_marks", n->packet.ecn_marks, 0);
        key_u64(b, -1, "cnps", n->packet.cnps, 0);
        key_u64(b, -1, "pfc_pauses", n->packet.pfc_pauses, 0);
        key_u64(b, -1, "drops", n->packet.drops, 0);
        key_u64(b, -1, "retransmits", n->packet.retransmits, 0);
        key_u64(b, -1, "events", n->packet.events, 0);
        const orr_packet_accel_stats *a = &n->packet.accel;
        key(b, -1, "accel");
        orr_buf_printf(b, "{\"enabled\": %s,", a->enabled ? "true" : "false");
        key_u64(b, -1, "partitions", a->partitions, 0);
        key_u64(b, -1, "merges", a->merges, 0);
        key_u64(b, -1, "splits", a->splits, 0);
        key_u64(b, -1, "fast_forwards", a->fast_forwards, 0);
        key_u64(b, -1, "skip_backs", a->skip_backs, 0);
        key_num(b, -1, "skipped_s", (double)a->skipped_ps / ORR_PS_PER_S, 0);
        key_u64(b, -1, "skipped_bytes", a->skipped_bytes, 0);
        memo_json(b, a);
        key_num(b, -1, "steady_fraction", orr_packet_steady_fraction(a), 1);
        orr_buf_puts(b, "}}");
        orr_buf_puts(b, ",");
    }
    key(b, 4, "tiers");
    orr_buf_puts(b, "[");
    int first = 1;
    for (int t = 0; t < ORR_TIER_COUNT; t++) {
        if (!n->tier[t].links) continue;
        orr_buf_printf(b, "%s\n      {", first ? "" : ",");
        first = 0;
        key_str(b, -1, "tier", orr_tier_name(t), 0);
        key_u64(b, -1, "links", n->tier[t].links, 0);
        key_num(b, -1, "bytes", n->tier[t].bytes, 0);
        key_num(b, -1, "mean_util", n->tier[t].util, 0);
        key_num(b, -1, "bottleneck_frac", n->tier[t].bottleneck_frac, 1);
        orr_buf_puts(b, "}");
    }
    orr_buf_puts(b, "],");
    key(b, 4, "top_links");
    orr_buf_puts(b, "[");
    for (uint32_t i = 0; i < n->ntop; i++) {
        const orr_link_use *u = &n->top[i];
        orr_buf_printf(b, "%s\n      {", i ? "," : "");
        key_u64(b, -1, "link", u->link, 0);
        key_u64(b, -1, "src_node", u->src, 0);
        key_u64(b, -1, "dst_node", u->dst, 0);
        key_str(b, -1, "tier", orr_tier_name(u->tier), 0);
        key_num(b, -1, "bytes", u->bytes, 0);
        key_num(b, -1, "util", u->util, 0);
        key_num(b, -1, "bottleneck_frac", u->bottleneck_frac, 1);
        orr_buf_puts(b, "}");
    }
    orr_buf_puts(b, "]},");
}

/* A breakdown as one-line object, every part in seconds. */
static void breakdown_json(orr_buf *b, const orr_breakdown *bd)
{
    const int64_t *c = bd->comm_ps;
    orr_buf_puts(b, "{");
    key_num(b, -1, "total_s", seconds_of(bd->total_ps), 0);
    key_num(b, -1, "compute_s", seconds_of(bd->compute_ps), 0);
    key(b, -1, "exposed_comm_s");
    orr_buf_puts(b, "{");
    key_num(b, -1, "tp", seconds_of(c[ORR_ROLE_TP]), 0);
    key_num(b, -1, "pp", seconds_of(c[ORR_ROLE_PP]), 0);
    key_num(b, -1, "dp", seconds_of(c[ORR_ROLE_DP]), 0);
    key_num(b, -1, "emb", seconds_of(c[ORR_ROLE_EMB]), 0);
    key_num(b, -1, "cp", seconds_of(c[ORR_ROLE_CP]), 0);
    key_num(b, -1, "ep", seconds_of(c[ORR_ROLE_EP]), 0);
    key_num(b, -1, "other", seconds_of(c[ORR_ROLE_OTHER] + c[ORR_ROLE_NONE]), 1);
    orr_buf_puts(b, " },");
    key_num(b, -1, "exposed_comm_total_s", seconds_of(orr_breakdown_comm_ps(bd)), 0);
    key_num(b, -1, "bubble_s", seconds_of(bd->bubble_ps), 0);
    key_num(b, -1, "wait_s", seconds_of(bd->wait_ps), 0);
    key_num(b, -1, "expert_imbalance_wait_s", seconds_of(bd->ep_wait_ps), 0);
    key_num(b, -1, "idle_s", seconds_of(bd->idle_ps), 0);
    key_num(b, -1, "overlapped_comm_s", seconds_of(bd->overlapped_comm_ps), 1);
    orr_buf_puts(b, " }");
}

static void ranks_json(orr_buf *b, const orr_result *r, const orr_workload *w)
{
    key(b, 2, "ranks");
    orr_buf_puts(b, "[");
    for (size_t i = 0; i < r->nranks && i < w->nranks; i++) {
        const orr_rank *rk = &w->ranks[i];
        orr_buf_puts(b, i ? ",\n    {" : "\n    {");
        key_u64(b, -1, "index", i, 0);
        key_str(b, -1, "label", rk->label, 0);
        key_u64(b, -1, "gpu", rk->gpu, 0);
        key_u64(b, -1, "weight", rk->weight, 0);
        key(b, -1, "breakdown");
        breakdown_json(b, &r->ranks[i]);
        orr_buf_puts(b, " }");
    }
    orr_buf_puts(b, r->nranks ? "\n  ]," : "],");
}

static void critical_path_json(orr_buf *b, const orr_critical_path *cp)
{
    key(b, 2, "critical_path");
    orr_buf_puts(b, "{");
    int64_t total_ps = 0;
    for (int k = 0; k < ORR_CP_KIND_COUNT; k++) {
        char name[32];
        snprintf(name, sizeof name, "%s_s", orr_cp_kind_name((orr_cp_kind)k));
        key_num(b, 4, name, seconds_of(cp->ps[k]), 0);
        total_ps += cp->ps[k];
    }
    key_num(b, 4, "total_s", seconds_of(total_ps), 0);
    key_u64(b, 4, "ops", cp->nops, 0);
    key_u64(b, 4, "rank_hops", cp->rank_hops, 1);
    orr_buf_puts(b, "\n  },");
}

/* "fits_with": the settings that would make an OOM job fit, fastest first ([] when the local search
 * found none), with "fits_with_search": {"simulated", "max_changes"}; both null when it did not run. */
static void fixes_json(orr_buf *b, const orr_fit_fixes *f)
{
    key(b, 4, "fits_with");
    if (!f || !f->searched) {
        orr_buf_puts(b, "null,");
        key(b, 4, "fits_with_search");
        orr_buf_puts(b, "null");
        return;
    }
    orr_buf_puts(b, "[");
    for (uint32_t i = 0; i < f->n; i++) {
        orr_buf_puts(b, i ? ", {" : "{");
        key_str(b, -1, "flags", f->fix[i].flags, 0);
        key_u64(b, -1, "changes", f->fix[i].changes, 0);
        key_num(b, -1, "iteration_time_s", f->fix[i].iteration_s, 0);
        key_u64(b, -1, "peak_memory_bytes", f->fix[i].peak_bytes, 1);
        orr_buf_puts(b, "}");
    }
    orr_buf_puts(b, "],");
    key(b, 4, "fits_with_search");
    orr_buf_puts(b, "{");
    key_u64(b, -1, "simulated", f->tried, 0);
    key_u64(b, -1, "max_changes", f->max_changes, 1);
    orr_buf_puts(b, "}");
}

/* Memory keys: peak_memory_bytes (max over ranks, reserved by the allocator), peak_allocated_bytes,
 * oom, memory_breakdown (bytes per category at the peak, plus allocator_overhead), and memory with
 * the details (capacity, where and when the peak is, the first allocation that did not fit). */
static void memory_json(orr_buf *b, const orr_result *r, const orr_workload *w, const orr_report_info *info)
{
    const orr_mem_summary *m = &r->mem;
    key_u64(b, 2, "peak_memory_bytes", m->peak_reserved_bytes, 0);
    key_u64(b, 2, "peak_allocated_bytes", m->peak_allocated_bytes, 0);
    key(b, 2, "oom");
    orr_buf_puts(b, m->oom ? "true," : "false,");
    key(b, 2, "memory_breakdown");
    orr_buf_puts(b, "{");
    for (int c = 0; c < ORR_MEM_CAT_COUNT; c++) key_u64(b, 4, orr_mem_cat_name((orr_mem_cat)c), m->cat_bytes[c], 0);
    key_u64(b, 4, "allocator_overhead", m->overhead_bytes, 1);
    orr_buf_puts(b, "\n  },");
    key(b, 2, "memory");
    orr_buf_puts(b, "{");
    key_u64(b, 4, "device_bytes", info ? info->device_bytes : 0, 0);
    key_u64(b, 4, "runtime_reserved_bytes", info ? info->runtime_reserved_bytes : 0, 0);
    key_u64(b, 4, "allocator_capacity_bytes", m->capacity_bytes, 0);
    key(b, 4, "caching_allocator");
    orr_buf_puts(b, info && info->caching_allocator ? "true," : "false,");
    const char *label = m->peak_rank < w->nranks ? w->ranks[m->peak_rank].label : "";
    key_str(b, 4, "peak_rank", label, 0);
    key_num(b, 4, "peak_time_s", seconds_of(m->peak_t_ps), 0);
    key_str(b, 4, "peak_allocation", orr_workload_op_name(w, m->peak_rank, m->peak_op), 0);
    key_str(b, 4, "running_at_peak", m->running_op >= 0 ? orr_workload_op_name(w, m->peak_rank, (uint32_t)m->running_op) : NULL,
            0);
    key(b, 4, "oom_allocation");
    if (!m->oom) {
        orr_buf_puts(b, "null");
    } else {
        const orr_op *op = &w->ranks[m->oom_rank].ops[m->oom_op];
        orr_buf_puts(b, "{");
        key_str(b, 6, "rank", w->ranks[m->oom_rank].label, 0);
        key_u64(b, 6, "op", m->oom_op, 0);
        key_str(b, 6, "name", orr_workload_op_name(w, m->oom_rank, m->oom_op), 0);
        key_str(b, 6, "category", orr_mem_cat_name((orr_mem_cat)op->cls), 0);
        key_u64(b, 6, "bytes", m->oom_bytes, 0);
        key_u64(b, 6, "in_use_bytes", m->oom_in_use_bytes, 0);
        key_num(b, 6, "time_s", seconds_of(m->oom_t_ps), 1);
        orr_buf_puts(b, "\n    }");
    }
    orr_buf_puts(b, ",");
    fixes_json(b, info ? info->fixes : NULL);
    orr_buf_puts(b, "\n  },");
}

/* 1 if s holds something other than white space (an empty config would break the document). */
static int has_text(const char *s)
{
    for (; s && *s; s++)
        if (!isspace((unsigned char)*s)) return 1;
    return 0;
}

void orr_report_net_json(const orr_net_summary *n, orr_buf *out)
{
    network_json(out, n);
}

void orr_report_json(const orr_result *r, const orr_workload *w, const orr_report_info *info,
                     orr_buf *out)
{
    orr_buf_puts(out, "{");
    key_u64(out, 2, "schema_version", ORR_JSON_SCHEMA_VERSION, 0);
    key_str(out, 2, "title", info ? info->title : NULL, 0);
    key_str(out, 2, "gpu_name", info ? info->gpu_name : NULL, 0);
    key_num(out, 2, "peak_flops_per_gpu", info ? info->peak_flops_per_gpu : 0.0, 0);
    key_num(out, 2, "iteration_time_s", r->iteration_s, 0);
    key_u64(out, 2, "iteration_time_ps", (uint64_t)r->iteration_ps, 0);
    key_num(out, 2, "tokens_per_s", r->tokens_per_s, 0);
    key_num(out, 2, "tflops_per_gpu", r->tflops_per_gpu, 0);
    key_num(out, 2, "hw_tflops_per_gpu", r->hw_tflops_per_gpu, 0);
    key_num(out, 2, "mfu", r->mfu, 0);
    key_num(out, 2, "hfu", r->hfu, 0);
    key_str(out, 2, "flops_convention", r->flops_convention, 0);
    key_num(out, 2, "model_flops_per_iteration", w->model_flops, 0);
    key_num(out, 2, "hw_flops_per_iteration", w->hw_flops, 0);
    key_num(out, 2, "tokens_per_iteration", w->tokens, 0);
    key_u64(out, 2, "world_size", r->world_size, 0);
    key_u64(out, 2, "unique_ranks_simulated", r->unique_ranks, 0);
    memory_json(out, r, w, info);
    key(out, 2, "breakdown");
    breakdown_json(out, &r->mean);
    orr_buf_puts(out, ",");
    ranks_json(out, r, w);
    critical_path_json(out, &r->cp);
    key_u64(out, 2, "events", r->events, 0);
    network_json(out, &r->net);
    key(out, 2, "config");
    if (info && has_text(info->config_json)) orr_buf_puts(out, info->config_json);
    else orr_buf_puts(out, "null");
    orr_buf_puts(out, "\n}\n");
}

/* ---- orrery netsim --json ---- */

void orr_netsim_json(const orr_netsim_result *r, const orr_packet_config *cfg, orr_buf *out)
{
    const orr_packet_stats *st = &r->stats;
    const orr_fct_summary *f = &r->fct;
    const orr_packet_accel_stats *a = &r->accel;
    orr_buf_puts(out, "{");
    key_u64(out, 2, "schema_version", ORR_NETSIM_JSON_SCHEMA_VERSION, 0);
    key_str(out, 2, "cc", orr_cc_name(cfg->cc), 0);
    key_u64(out, 2, "flows_total", r->flows_total, 0);
    key_u64(out, 2, "flows_finished", f->flows, 0);
    key_num(out, 2, "simulated_s", (double)r->sim_end_ps / ORR_PS_PER_S, 0);
    key_num(out, 2, "wall_s", r->wall_s + r->setup_wall_s, 0);
    key_u64(out, 2, "events", st->events, 0);
    key(out, 2, "packets");
    orr_buf_puts(out, "{");
    key_u64(out, -1, "data", st->data_packets, 0);
    key_u64(out, -1, "ack", st->ack_packets, 0);
    key_u64(out, -1, "pfc_frames", st->pfc_frames, 0);
    key_u64(out, -1, "ecn_marks", st->ecn_marks, 0);
    key_u64(out, -1, "cnps", st->cnps, 0);
    key_u64(out, -1, "drops", st->drops, 0);
    key_u64(out, -1, "loss_drops", st->loss_drops, 0);
    key_u64(out, -1, "pfc_pauses", st->pfc_pauses, 0);
    key_u64(out, -1, "pfc_resumes", st->pfc_resumes, 1);
    orr_buf_puts(out, "},");
    key(out, 2, "fct");
    orr_buf_puts(out, "{");
    key_num(out, -1, "mean_s", f->mean_fct_ns * 1e-9, 0);
    key_num(out, -1, "median_s", f->median_fct_ns * 1e-9, 0);
    key_num(out, -1, "p99_s", f->p99_fct_ns * 1e-9, 0);
    key_num(out, -1, "mean_slowdown", f->mean_slowdown, 0);
    key_num(out, -1, "median_slowdown", f->median_slowdown, 0);
    key_num(out, -1, "p99_slowdown", f->p99_slowdown, 1);
    orr_buf_puts(out, "},");
    key(out, 2, "wormhole");
    orr_buf_puts(out, "{");
    key(out, -1, "enabled");
    orr_buf_puts(out, a->enabled ? "true," : "false,");
    key_u64(out, -1, "partitions", a->partitions, 0);
    key_u64(out, -1, "merges", a->merges, 0);
    key_u64(out, -1, "splits", a->splits, 0);
    key_u64(out, -1, "fast_forwards", a->fast_forwards, 0);
    key_u64(out, -1, "skip_backs", a->skip_backs, 0);
    memo_json(out, a);
    key_num(out, -1, "skipped_s", (double)a->skipped_ps / ORR_PS_PER_S, 0);
    key_u64(out, -1, "skipped_bytes", a->skipped_bytes, 1);
    orr_buf_puts(out, "},");
    /* the flows, from the FCT file's lines (the reference format: docs/netsim.md) */
    key(out, 2, "flows");
    orr_buf_puts(out, "[");
    const char *p = r->fct_text.s ? r->fct_text.s : "";
    int nflow = 0;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[256], ip[2][16];
        unsigned sip, dip, sport, dport;
        unsigned long long size;
        long long start_ns, fct_ns, alone_ns;
        if (len < sizeof line) {
            memcpy(line, p, len);
            line[len] = 0;
            if (sscanf(line, "%x %x %u %u %llu %lld %lld %lld", &sip, &dip, &sport, &dport, &size, &start_ns, &fct_ns,
                       &alone_ns) == 8) {
                snprintf(ip[0], sizeof ip[0], "%08x", sip);
                snprintf(ip[1], sizeof ip[1], "%08x", dip);
                orr_buf_puts(out, nflow++ ? ",\n    {" : "\n    {");
                key_str(out, -1, "src", ip[0], 0);
                key_str(out, -1, "dst", ip[1], 0);
                key_u64(out, -1, "sport", sport, 0);
                key_u64(out, -1, "dport", dport, 0);
                key_u64(out, -1, "size_bytes", size, 0);
                key_num(out, -1, "start_s", (double)start_ns * 1e-9, 0);
                key_num(out, -1, "fct_s", (double)fct_ns * 1e-9, 0);
                key_num(out, -1, "standalone_fct_s", (double)alone_ns * 1e-9, 1);
                orr_buf_puts(out, "}");
            }
        }
        p += len + (nl ? 1 : 0);
    }
    orr_buf_puts(out, "]\n}\n");
}
