/*
 * text.c - the human-readable summary of a prediction (what `orrery predict` prints).
 *
 * Layout: the headline numbers (iteration time, throughput, TFLOP/s per GPU, MFU/HFU with the FLOP
 * convention), the time breakdown of the mean GPU, a per-rank table (every simulated rank when there
 * are at most 32, else the 8 with the most bubble + wait + idle time), the critical path and the
 * number of engine events. Every number carries its unit. The text is a pure function of its
 * inputs (no wall time: the caller prints how long the simulation took).
 */
#include "orrery/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static double ms_of(int64_t ps)
{
    return (double)ps / (double)ORR_PS_PER_MS;
}

static double pct_of(int64_t ps, int64_t total_ps)
{
    return total_ps > 0 ? 100.0 * (double)ps / (double)total_ps : 0.0;
}

/* One "  name ... ms  %" line. */
static void part_line(orr_buf *out, const char *name, int64_t ps, int64_t total_ps)
{
    orr_buf_printf(out, "  %-34s %12.3f ms %6.1f %%\n", name, ms_of(ps), pct_of(ps, total_ps));
}

static void headline_text(const orr_result *r, const orr_workload *w, const orr_report_info *info,
                          orr_buf *out)
{
    const char *title = info && info->title ? info->title : "Orrery prediction";
    double peak_tflops = info ? info->peak_flops_per_gpu / 1e12 : 0.0;
    orr_buf_printf(out, "%s\n", title);
    orr_buf_printf(out, "  %-34s %.6f s\n", "iteration time", r->iteration_s);
    if (w->tokens > 0)
        orr_buf_printf(out, "  %-34s %.1f tokens/s (%.0f tokens per iteration)\n", "throughput",
                       r->tokens_per_s, w->tokens);
    else
        orr_buf_printf(out, "  %-34s n/a (tokens per iteration not known)\n", "throughput");
    orr_buf_printf(out, "  %-34s %.2f TFLOP/s\n", "model TFLOP/s per GPU", r->tflops_per_gpu);
    orr_buf_printf(out, "  %-34s %.2f TFLOP/s\n", "executed TFLOP/s per GPU",
                   r->hw_tflops_per_gpu);
    if (peak_tflops > 0) {
        orr_buf_printf(out, "  %-34s %.2f %% (HFU %.2f %%) of %.1f TFLOP/s peak%s%s\n", "MFU",
                       100.0 * r->mfu, 100.0 * r->hfu, peak_tflops,
                       info->gpu_name ? " per " : "", info->gpu_name ? info->gpu_name : "");
    } else {
        orr_buf_printf(out, "  %-34s n/a (no peak FLOP/s given)\n", "MFU");
    }
    orr_buf_printf(out, "  %-34s %s\n", "FLOP convention",
                   r->flops_convention[0] ? r->flops_convention : "not stated");
    orr_buf_printf(out, "  %-34s %u GPUs, %u unique ranks simulated\n", "cluster", r->world_size,
                   r->unique_ranks);
}

/* The mean GPU's breakdown, one part per line; roles beyond TP/PP/DP only when present. */
static void mean_text(const orr_result *r, orr_buf *out)
{
    const orr_breakdown *b = &r->mean;
    int64_t T = b->total_ps;
    orr_buf_printf(out, "\nTime per iteration, mean GPU (weighted by the ranks each stands for):\n");
    part_line(out, "compute (kernels, copies)", b->compute_ps, T);
    static const struct { int role; const char *name; int always; } roles[] = {
        {ORR_ROLE_TP, "exposed TP communication", 1},
        {ORR_ROLE_CP, "exposed CP communication", 0},
        {ORR_ROLE_EP, "exposed EP communication", 0},
        {ORR_ROLE_PP, "exposed PP communication", 1},
        {ORR_ROLE_DP, "exposed DP communication", 1},
        {ORR_ROLE_EMB, "exposed embedding communication", 0},
        {ORR_ROLE_OTHER, "exposed other communication", 0},
        {ORR_ROLE_NONE, "exposed unattributed communication", 0},
    };
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (roles[i].always || b->comm_ps[roles[i].role])
            part_line(out, roles[i].name, b->comm_ps[roles[i].role], T);
    part_line(out, "pipeline bubble", b->bubble_ps, T);
    part_line(out, "wait for stragglers", b->wait_ps, T);
    if (b->ep_wait_ps) part_line(out, "  of which expert imbalance wait", b->ep_wait_ps, T);
    part_line(out, "idle (host-bound or drained)", b->idle_ps, T);
    part_line(out, "total", T, T);
    part_line(out, "communication hidden under compute", b->overlapped_comm_ps, T);
}

/* Exposed communication not shown in its own column of the rank table. */
static int64_t other_comm_ps(const orr_breakdown *b)
{
    return b->comm_ps[ORR_ROLE_EMB] + b->comm_ps[ORR_ROLE_CP] + b->comm_ps[ORR_ROLE_EP] +
           b->comm_ps[ORR_ROLE_OTHER] + b->comm_ps[ORR_ROLE_NONE];
}

static int64_t slack_ps(const orr_breakdown *b)
{
    return b->bubble_ps + b->wait_ps + b->idle_ps;
}

enum { NCOLS = 9 };

/* The values of a rank-table row, in the column order of the header. */
static void row_values(const orr_breakdown *b, int64_t v[NCOLS])
{
    v[0] = b->compute_ps;
    v[1] = b->comm_ps[ORR_ROLE_TP];
    v[2] = b->comm_ps[ORR_ROLE_PP];
    v[3] = b->comm_ps[ORR_ROLE_DP];
    v[4] = other_comm_ps(b);
    v[5] = b->bubble_ps;
    v[6] = b->wait_ps;
    v[7] = b->idle_ps;
    v[8] = b->overlapped_comm_ps;
}

/* Two lines per rank: the parts in ms, then in % of the iteration. */
static void rank_rows(orr_buf *out, const char *label, const orr_breakdown *b)
{
    int64_t v[NCOLS];
    row_values(b, v);
    orr_buf_printf(out, "  %-26.26s ms", label);
    for (int c = 0; c < NCOLS; c++) orr_buf_printf(out, " %10.3f", ms_of(v[c]));
    orr_buf_printf(out, "\n  %-26s  %%", "");
    for (int c = 0; c < NCOLS; c++) orr_buf_printf(out, " %10.1f", pct_of(v[c], b->total_ps));
    orr_buf_puts(out, "\n");
}

/* A rank and its bubble + wait + idle time, for choosing the ranks to list. */
typedef struct rank_slack {
    int64_t slack_ps;
    size_t index;
} rank_slack;

/* Most bubble + wait + idle first, then by rank index (a total order: output is deterministic). */
static int cmp_slack_desc(const void *a, const void *b)
{
    const rank_slack *x = a, *y = b;
    if (x->slack_ps != y->slack_ps) return x->slack_ps > y->slack_ps ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

size_t orr_report_ranks_listed(const orr_result *r, const orr_workload *w, size_t *idx)
{
    size_t n = r->nranks < w->nranks ? r->nranks : w->nranks;
    if (n <= ORR_RANKS_LISTED) {
        for (size_t i = 0; i < n; i++) idx[i] = i;
        return n;
    }
    rank_slack *order = orr_xmalloc(n * sizeof *order);
    for (size_t i = 0; i < n; i++) order[i] = (rank_slack){slack_ps(&r->ranks[i]), i};
    qsort(order, n, sizeof *order, cmp_slack_desc);
    for (size_t k = 0; k < ORR_WORST_RANKS_LISTED; k++) idx[k] = order[k].index;
    free(order);
    return ORR_WORST_RANKS_LISTED;
}

static void ranks_text(const orr_result *r, const orr_workload *w, orr_buf *out)
{
    size_t n = r->nranks < w->nranks ? r->nranks : w->nranks;
    size_t idx[ORR_RANKS_LISTED];
    size_t shown = orr_report_ranks_listed(r, w, idx);
    orr_buf_printf(out, "\nPer simulated rank (ms and %% of the iteration");
    if (shown < n)
        orr_buf_printf(out, "; the %zu of %zu ranks with the most bubble+wait+idle", shown, n);
    orr_buf_printf(out, "):\n  %-29s %10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "rank",
                   "compute", "TP", "PP", "DP", "EMB/other", "bubble", "wait", "idle",
                   "overlapped");
    rank_rows(out, "mean", &r->mean);
    for (size_t k = 0; k < shown; k++) {
        const orr_rank *rk = &w->ranks[idx[k]];
        char label[80];
        snprintf(label, sizeof label, "%s (gpu %u, x%u)", rk->label, rk->gpu, rk->weight);
        rank_rows(out, label, &r->ranks[idx[k]]);
    }
    orr_buf_puts(out, "  (TP/PP/DP/EMB/other: exposed communication; EMB/other includes CP and EP;"
                      " overlapped: communication hidden under compute)\n");
}

static void critical_path_text(const orr_result *r, orr_buf *out)
{
    static const char *const labels[ORR_CP_KIND_COUNT] = {
        "compute", "TP communication", "PP communication", "DP communication",
        "other communication", "host (launches, host work)", "memcpy/memset"};
    orr_buf_printf(out, "\nCritical path (%u ops, %u rank hops):\n", r->cp.nops, r->cp.rank_hops);
    for (int k = 0; k < ORR_CP_KIND_COUNT; k++)
        part_line(out, labels[k], r->cp.ps[k], r->iteration_ps);
}

static double gib_of(uint64_t bytes) { return (double)bytes / 1073741824.0; }

/* The settings that would make an OOM job fit (orr_search_fixes), fastest first. */
static void fixes_text(const orr_fit_fixes *f, orr_buf *out)
{
    if (!f->searched) return;
    if (!f->n) {
        orr_buf_printf(out, "  no configuration within %u changed settings of this one fits (%u simulated): more GPUs, "
                            "or `orrery search` over a wider space\n", f->max_changes, f->tried);
        return;
    }
    orr_buf_printf(out, "  fits with (fastest of %u configurations simulated around this one, analytic network):\n",
                   f->tried);
    for (uint32_t i = 0; i < f->n; i++)
        orr_buf_printf(out, "    %-44s peak %7.2f GiB, iteration %.3f s\n", f->fix[i].flags, gib_of(f->fix[i].peak_bytes),
                       f->fix[i].iteration_s);
}

static void memory_text(const orr_result *r, const orr_workload *w, const orr_report_info *info, orr_buf *out)
{
    const orr_mem_summary *m = &r->mem;
    if (m->peak_rank >= w->nranks) return;
    int caching = info && info->caching_allocator;
    orr_buf_printf(out, "\nMemory per GPU (%s; peak over ranks at %s, %.3f ms into the iteration):\n",
                   caching ? "PyTorch caching allocator" : "raw live bytes, no caching allocator",
                   w->ranks[m->peak_rank].label, (double)m->peak_t_ps / ORR_PS_PER_MS);
    orr_buf_printf(out, "  %-34s %10.2f GiB\n", caching ? "peak reserved" : "peak live", gib_of(m->peak_reserved_bytes));
    orr_buf_printf(out, "  %-34s %10.2f GiB\n", "peak allocated", gib_of(m->peak_allocated_bytes));
    for (int c = 0; c < ORR_MEM_CAT_COUNT; c++) {
        if (!m->cat_bytes[c]) continue;
        char label[48];
        snprintf(label, sizeof label, "  %s", orr_mem_cat_name((orr_mem_cat)c));
        orr_buf_printf(out, "  %-34s %10.2f GiB\n", label, gib_of(m->cat_bytes[c]));
    }
    if (caching) orr_buf_printf(out, "  %-34s %10.2f GiB\n", "  allocator overhead", gib_of(m->overhead_bytes));
    orr_buf_printf(out, "  %-34s %s (allocation %s)\n", "at the peak, running",
                   m->running_op >= 0 ? orr_workload_op_name(w, m->peak_rank, (uint32_t)m->running_op) : "nothing",
                   orr_workload_op_name(w, m->peak_rank, m->peak_op));
    if (info)
        orr_buf_printf(out, "  %-34s %10.2f GiB (%.2f GiB device - %.2f GiB CUDA context and NCCL)\n",
                       "capacity for the allocator", gib_of(m->capacity_bytes), gib_of(info->device_bytes),
                       gib_of(info->runtime_reserved_bytes));
    if (m->oom) {
        const orr_op *op = &w->ranks[m->oom_rank].ops[m->oom_op];
        orr_buf_printf(out, "  verdict: OUT OF MEMORY on %s: op %u %s (%s, %.2f GiB) with %.2f GiB in use, at %.3f ms\n",
                       w->ranks[m->oom_rank].label, m->oom_op, orr_workload_op_name(w, m->oom_rank, m->oom_op),
                       orr_mem_cat_name((orr_mem_cat)op->cls), gib_of(m->oom_bytes), gib_of(m->oom_in_use_bytes),
                       (double)m->oom_t_ps / ORR_PS_PER_MS);
        if (info && info->fixes) fixes_text(info->fixes, out);
    } else {
        orr_buf_printf(out, "  verdict: fits (%.2f GiB headroom)\n", gib_of(m->capacity_bytes - m->peak_reserved_bytes));
    }
}

/* Link use per tier and the most congested links (flow and packet backends). */
static void network_text(const orr_net_summary *n, orr_buf *out)
{
    if (!n->present) return;
    int pkt = n->backend == ORR_NET_PACKET;
    orr_buf_printf(out, "\nNetwork (%s backend, %llu flows): link utilisation = bytes / (rate x iteration)\n",
                   orr_net_kind_name(n->backend), (unsigned long long)n->flows);
    if (n->mirrored_servers)
        orr_buf_printf(out, "  %llu of them inside %u mirrored servers, not simulated (docs/models.md section 7)\n",
                       (unsigned long long)n->mirrored_flows, n->mirrored_servers);
    if (n->rotated_flows)
        orr_buf_printf(out, "  %llu of them rotations of a simulated flow inside its server, not simulated (docs/models.md section 7)\n",
                       (unsigned long long)n->rotated_flows);
    if (pkt) {
        orr_buf_printf(out, "  packet engine: %s, %u-byte packets, %llu inter-node flows (NVLink flows on the flow model)\n",
                       orr_cc_name(n->packet.cc), n->packet.payload_bytes, (unsigned long long)n->packet.flows);
        orr_buf_printf(out, "  %llu data packets, %llu ACKs, %llu ECN marks, %llu CNPs, %llu PFC pauses, %llu drops, "
                            "%llu retransmissions, %llu events\n",
                       (unsigned long long)n->packet.data_packets, (unsigned long long)n->packet.ack_packets,
                       (unsigned long long)n->packet.ecn_marks, (unsigned long long)n->packet.cnps,
                       (unsigned long long)n->packet.pfc_pauses, (unsigned long long)n->packet.drops,
                       (unsigned long long)n->packet.retransmits, (unsigned long long)n->packet.events);
        const orr_packet_accel_stats *a = &n->packet.accel;
        if (a->enabled)
            orr_buf_printf(out, "  Wormhole: %llu partitions formed, %llu fast-forwards (%llu cut short), %.6f s skipped, "
                                "%.3f GB fast-forwarded, steady fraction %.4f\n",
                           (unsigned long long)a->partitions, (unsigned long long)a->fast_forwards,
                           (unsigned long long)a->skip_backs, (double)a->skipped_ps / ORR_PS_PER_S,
                           (double)a->skipped_bytes / 1e9, orr_packet_steady_fraction(a));
        if (a->enabled && a->memo_enabled)
            orr_buf_printf(out, "  Memo: %llu hits (%llu following a recording), %llu misses, %llu not eligible, %llu recorded, %llu aborted, %llu noisy; %llu loaded (--memo)\n",
                           (unsigned long long)a->memo_hits, (unsigned long long)a->memo_followers,
                           (unsigned long long)a->memo_misses, (unsigned long long)a->memo_ineligible,
                           (unsigned long long)a->memo_recorded, (unsigned long long)a->memo_aborts,
                           (unsigned long long)a->memo_noisy, (unsigned long long)a->memo_loaded);
        else if (a->enabled)
            orr_buf_printf(out, "  Memo: off (--no-memo)\n");
        if (!a->enabled)
            orr_buf_printf(out, "  Wormhole: off (--no-accel)\n");
        orr_buf_printf(out, "  (packet-level links: bytes on the wire; bottleneck = time sending back to back)\n");
    }
    orr_buf_printf(out, "  %-12s %8s %14s %12s %14s\n", "tier", "links", "GB carried", "mean util", "bottleneck");
    for (int t = 0; t < ORR_TIER_COUNT; t++)
        if (n->tier[t].links)
            orr_buf_printf(out, "  %-12s %8u %14.3f %10.2f %% %12.2f %%\n", orr_tier_name(t), n->tier[t].links,
                           n->tier[t].bytes / 1e9, 100 * n->tier[t].util, 100 * n->tier[t].bottleneck_frac);
    if (n->ntop) orr_buf_printf(out, "  most congested links (time as a bottleneck, then bytes):\n");
    for (uint32_t i = 0; i < n->ntop; i++) {
        const orr_link_use *u = &n->top[i];
        orr_buf_printf(out, "    link %-7u node %u -> %u (%s): %.3f GB, util %.2f %%, bottleneck %.2f %% of the time\n",
                       u->link, u->src, u->dst, orr_tier_name(u->tier), u->bytes / 1e9, 100 * u->util,
                       100 * u->bottleneck_frac);
    }
}

void orr_report_net_text(const orr_net_summary *n, orr_buf *out)
{
    network_text(n, out);
}

void orr_report_text(const orr_result *r, const orr_workload *w, const orr_report_info *info,
                     orr_buf *out)
{
    headline_text(r, w, info, out);
    mean_text(r, out);
    ranks_text(r, w, out);
    critical_path_text(r, out);
    memory_text(r, w, info, out);
    network_text(&r->net, out);
    orr_buf_printf(out, "\nEngine events simulated: %llu\n", (unsigned long long)r->events);
}
