/*
 * output.c - a search's results: the ranked table, the counts and a TP x PP heatmap for people; the
 * JSON document (docs/json.md "Search") and a CSV of every trial for programs. Like the predict
 * report, the JSON is a pure function of the results except wall_s.
 */
#include "search/internal.h"
#include "orrery/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

static const char *objective_name(orr_objective o)
{
    return o == ORR_OBJ_COST ? "cost" : o == ORR_OBJ_MFU ? "mfu" : "time";
}

static const char *strategy_name(orr_search_strategy s)
{
    return s == ORR_STRATEGY_RANDOM ? "random" : s == ORR_STRATEGY_CMAES ? "cmaes" : "exhaustive";
}

/* "dist-opt", "ddp", "fsdp 8", "hsdp 4x2", "zero-3": how the trial shards its state. */
static void sharding(const orr_trial *t, char *buf, size_t cap)
{
    switch ((orr_framework)t->v[ORR_AX_FRAMEWORK]) {
    case ORR_FW_MEGATRON: snprintf(buf, cap, "%s", t->v[ORR_AX_DIST_OPT] ? "dist-opt" : "ddp"); return;
    case ORR_FW_DEEPSPEED: snprintf(buf, cap, "zero-%u", t->v[ORR_AX_ZERO]); return;
    case ORR_FW_TORCHTITAN:
    case ORR_FW_AUTOMODEL: {
        uint32_t f = t->fsdp ? t->fsdp : t->v[ORR_AX_FSDP];
        if (f && t->dp > f) snprintf(buf, cap, "hsdp %ux%u", f, t->dp / f);
        else if (f) snprintf(buf, cap, "fsdp %u", f);
        else snprintf(buf, cap, "fsdp");
        return;
    }
    default: snprintf(buf, cap, "-");
    }
}

/* Seconds and USD to train --tokens tokens at a trial's tokens/s (0 when not asked for). */
static double train_s(const orr_search_opts *o, const orr_trial *t)
{
    return o->tokens > 0 && t->tokens_per_s > 0 ? o->tokens / t->tokens_per_s : 0;
}

static double train_usd(const orr_search_opts *o, const orr_trial *t)
{
    return o->price_per_gpu_hour * t->v[ORR_AX_GPUS] * train_s(o, t) / 3600.0;
}

/* Several GPU counts in the space: the table gets a column for them. */
static int gpus_listed(const orr_search_opts *o)
{
    return o->ax[ORR_AX_GPUS].given && o->ax[ORR_AX_GPUS].n > 1;
}

/* An MoE model's search (a trial with expert parallelism): the table gets a column for EP. */
static int ep_listed(const orr_search_result *r)
{
    for (uint32_t i = 0; i < r->ntrials; i++)
        if (r->trials[i].v[ORR_AX_EP] > 1) return 1;
    return 0;
}

static void table_head(orr_buf *out, const orr_search_opts *o, int ep)
{
    orr_buf_printf(out, "%4s  %s%-10s %3s %3s %4s %3s %s%3s %4s %-9s %-10s %-3s %9s %11s %6s %8s %8s", "rank",
                   gpus_listed(o) ? " gpus " : "", "framework", "tp", "pp", "dp", "cp", ep ? " ep " : "", "vpp", "mbs",
                   "recompute", "sharding", "sp", "iter s", "tokens/s", "MFU %", "peak GiB", "free GiB");
    if (o->price_per_gpu_hour > 0) orr_buf_printf(out, " %10s", "$ / iter");
    if (o->tokens > 0) orr_buf_printf(out, " %10s", "train days");
    if (o->tokens > 0 && o->price_per_gpu_hour > 0) orr_buf_printf(out, " %12s", "$ to train");
    orr_buf_puts(out, "\n");
}

static void table_row(orr_buf *out, uint32_t rank, const orr_trial *t, const orr_search_opts *o, int ep)
{
    char sh[32];
    sharding(t, sh, sizeof sh);
    double headroom = ((double)t->capacity_bytes - (double)t->peak_bytes) / GiB;
    orr_buf_printf(out, "%4u  ", rank);
    if (gpus_listed(o)) orr_buf_printf(out, "%5u ", t->v[ORR_AX_GPUS]);
    orr_buf_printf(out, "%-10s %3u %3u %4u %3u ", orr_framework_name((orr_framework)t->v[ORR_AX_FRAMEWORK]),
                   t->v[ORR_AX_TP], t->v[ORR_AX_PP], t->dp, t->v[ORR_AX_CP]);
    if (ep) orr_buf_printf(out, "%3u ", t->v[ORR_AX_EP]);
    orr_buf_printf(out, "%3u %4u %-9s %-10s %-3s %9.4f %11.0f %6.1f %8.2f %8.2f", t->v[ORR_AX_VPP], t->v[ORR_AX_MBS],
                   orr_recompute_name((orr_recompute)t->v[ORR_AX_RECOMPUTE]), sh, t->v[ORR_AX_SP] ? "on" : "off",
                   t->iteration_s, t->tokens_per_s, 100.0 * t->mfu, (double)t->peak_bytes / GiB, headroom);
    if (o->price_per_gpu_hour > 0) orr_buf_printf(out, " %10.4f", t->cost_usd);
    if (o->tokens > 0) orr_buf_printf(out, " %10.2f", train_s(o, t) / 86400.0);
    if (o->tokens > 0 && o->price_per_gpu_hour > 0) orr_buf_printf(out, " %12.0f", train_usd(o, t));
    orr_buf_puts(out, "\n");
}

static void counts_line(orr_buf *out, const char *what, const orr_reason_count *c, uint32_t n)
{
    orr_buf_printf(out, "%s:", what);
    if (!n) orr_buf_puts(out, " none");
    for (uint32_t i = 0; i < n; i++) orr_buf_printf(out, "%s %s %u", i ? "," : "", c[i].key, c[i].n);
    orr_buf_puts(out, "\n");
}

uint32_t search_axis_values(const orr_search_result *r, int ax, uint32_t *vals, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->ntrials; i++) {
        uint32_t v = r->trials[i].v[ax], k = 0;
        while (k < n && vals[k] < v) k++;
        if ((k < n && vals[k] == v) || n == cap) continue;
        memmove(vals + k + 1, vals + k, (n - k) * sizeof *vals);
        vals[k] = v;
        n++;
    }
    return n;
}

/* What the trials of one TP x PP cell came to, over the other axes. */
typedef struct heat {
    double best_s;    /* the best time of a trial that fits (0: none) */
    int oom;          /* a trial was out of memory (simulated, or proven by the memory bound) */
    int slow;         /* a trial was proven no better than the best (time bound) */
    uint32_t valid;   /* trials that resolved (not invalid) */
} heat;

static heat heat_of(const orr_search_result *r, uint32_t tp, uint32_t pp)
{
    heat h = {0, 0, 0, 0};
    for (uint32_t i = 0; i < r->ntrials; i++) {
        const orr_trial *t = &r->trials[i];
        if (t->v[ORR_AX_TP] != tp || t->v[ORR_AX_PP] != pp) continue;
        if (t->status == ORR_TRIAL_OK && (h.best_s == 0 || t->iteration_s < h.best_s)) h.best_s = t->iteration_s;
        if (t->status == ORR_TRIAL_OOM || strcmp(t->key, "memory_lower_bound") == 0) h.oom = 1;
        if (strcmp(t->key, "compute_time_bound") == 0) h.slow = 1;
        if (t->status != ORR_TRIAL_INVALID) h.valid++;
    }
    return h;
}

/* One heatmap cell: the best time over the other axes, OOM where every trial that resolved was out
 * of memory (simulated or proven by the bound), "slow" where the others were proven no better than
 * the best (time bound), "-" where none resolved or was simulated. */
static void heat_cell(const orr_search_result *r, uint32_t tp, uint32_t pp, char *buf, size_t cap)
{
    heat h = heat_of(r, tp, pp);
    if (h.best_s > 0) snprintf(buf, cap, "%.4f", h.best_s);
    else snprintf(buf, cap, "%s", h.slow ? "slow" : h.oom ? "OOM" : "-");
}

static void heatmap(const orr_search_result *r, orr_buf *out)
{
    uint32_t tps[ORR_SEARCH_MAX_VALUES], pps[ORR_SEARCH_MAX_VALUES];
    uint32_t ntp = search_axis_values(r, ORR_AX_TP, tps, ORR_SEARCH_MAX_VALUES);
    uint32_t npp = search_axis_values(r, ORR_AX_PP, pps, ORR_SEARCH_MAX_VALUES);
    if (ntp < 2 || npp < 2) return;
    orr_buf_puts(out, "\nbest iteration time (s) by TP x PP, over the other axes (OOM: out of memory; slow: no better than the best, by the time bound; -: none valid)\n");
    orr_buf_printf(out, "%7s", "");
    for (uint32_t j = 0; j < npp; j++) {
        char label[24];
        snprintf(label, sizeof label, "PP=%u", pps[j]);
        orr_buf_printf(out, " %12s", label);
    }
    orr_buf_puts(out, "\n");
    for (uint32_t i = 0; i < ntp; i++) {
        orr_buf_printf(out, "TP=%-4u", tps[i]);
        for (uint32_t j = 0; j < npp; j++) {
            char cell[32];
            heat_cell(r, tps[i], pps[j], cell, sizeof cell);
            orr_buf_printf(out, " %12s", cell);
        }
        orr_buf_puts(out, "\n");
    }
}

void orr_search_text(const orr_search_result *r, const orr_search_opts *o, orr_buf *out)
{
    orr_buf_printf(out, "search: %s (objective %s, strategy %s)\n\n", r->title, objective_name(o->objective),
                   strategy_name(o->strategy));
    int ep = ep_listed(r);
    table_head(out, o, ep);
    uint32_t top = o->top < r->nranked ? o->top : r->nranked;
    for (uint32_t k = 0; k < top; k++) table_row(out, k + 1, &r->trials[r->ranked[k]], o, ep);
    if (!r->nranked) orr_buf_puts(out, "  (no configuration fits: see the counts and reasons below)\n");
    orr_buf_printf(out, "\ntrials: %u in the space, %u valid, %u simulated (%u fit, %u out of memory)\n", r->ntrials,
                   r->valid, r->evaluated, r->ok, r->oom);
    counts_line(out, "pruned (not simulated; trials each tactic saved)", r->pruned, r->npruned);
    counts_line(out, "rejected", r->rejected, r->nrejected);
    orr_buf_printf(out, "wall time %.2f s (-j %u)\n", r->wall_s, o->jobs);
    if (r->npareto) {
        orr_buf_printf(out, "\nPareto front (time against %s: no configuration is both faster and %s)\n",
                       o->price_per_gpu_hour > 0 ? "cost per iteration" : "GPUs",
                       o->price_per_gpu_hour > 0 ? "cheaper" : "on fewer GPUs");
        table_head(out, o, ep);
        for (uint32_t k = 0; k < r->npareto; k++) {
            uint32_t rank = 0;
            while (rank < r->nranked && r->ranked[rank] != r->pareto[k]) rank++;
            table_row(out, rank + 1, &r->trials[r->pareto[k]], o, ep);
        }
    }
    if (r->nrefined) {
        orr_buf_printf(out, "\nthe best %u re-simulated with --net %s (rank: analytic -> %s)\n", r->nrefined,
                       o->refine_net, o->refine_net);
        for (uint32_t k = 0; k < r->nrefined; k++) {
            const orr_refined *x = &r->refined[k];
            const orr_trial *t = &r->trials[x->index];
            orr_buf_printf(out, "  %3u -> %3u  trial %u: tp %u pp %u dp %u mbs %u %s, %.4f s -> ", x->rank, x->new_rank,
                           x->index, t->v[ORR_AX_TP], t->v[ORR_AX_PP], t->dp, t->v[ORR_AX_MBS],
                           orr_recompute_name((orr_recompute)t->v[ORR_AX_RECOMPUTE]), t->iteration_s);
            if (x->iteration_s > 0) orr_buf_printf(out, "%.4f s (%+.1f%%)%s\n", x->iteration_s,
                                                  100 * (x->iteration_s / t->iteration_s - 1), x->oom ? ", OOM" : "");
            else orr_buf_printf(out, "failed: %s\n", x->reason);
        }
    }
    heatmap(r, out);
}

/* ---- JSON and CSV ---- */

static void json_trial(orr_buf *b, const orr_trial *t, const orr_search_opts *o)
{
    int cost = o->price_per_gpu_hour > 0;
    uint32_t gpus = t->v[ORR_AX_GPUS];
    int sim = t->status == ORR_TRIAL_OK || t->status == ORR_TRIAL_OOM;
    orr_buf_printf(b, "{\"index\": %u, \"tp\": %u, \"pp\": %u, \"dp\": ", t->index, t->v[ORR_AX_TP], t->v[ORR_AX_PP]);
    if (t->dp) orr_buf_printf(b, "%u", t->dp);
    else orr_buf_puts(b, "null");
    orr_buf_printf(b, ", \"cp\": %u, \"ep\": %u, \"vpp\": %u, \"mbs\": %u, \"recompute\": \"%s\", \"zero\": %u, "
                      "\"fsdp\": %u, \"sp\": %s, \"dist_opt\": %s, \"gpus\": %u, \"framework\": \"%s\"",
                   t->v[ORR_AX_CP], t->v[ORR_AX_EP], t->v[ORR_AX_VPP], t->v[ORR_AX_MBS],
                   orr_recompute_name((orr_recompute)t->v[ORR_AX_RECOMPUTE]), t->v[ORR_AX_ZERO],
                   t->fsdp ? t->fsdp : t->v[ORR_AX_FSDP], t->v[ORR_AX_SP] ? "true" : "false",
                   t->v[ORR_AX_DIST_OPT] ? "true" : "false", gpus, orr_framework_name((orr_framework)t->v[ORR_AX_FRAMEWORK]));
    const char *k[] = {"iteration_time_s", "tokens_per_s", "mfu"};
    const double v[] = {t->iteration_s, t->tokens_per_s, t->mfu};
    for (int i = 0; i < 3; i++) {
        orr_buf_printf(b, ", \"%s\": ", k[i]);
        if (sim) orr_json_num(b, v[i]);
        else orr_buf_puts(b, "null");
    }
    if (sim) orr_buf_printf(b, ", \"peak_memory_bytes\": %llu", (unsigned long long)t->peak_bytes);
    else orr_buf_puts(b, ", \"peak_memory_bytes\": null");
    orr_buf_printf(b, ", \"oom\": %s", !sim ? "null" : t->status == ORR_TRIAL_OOM ? "true" : "false");
    if (o->tokens > 0) {
        orr_buf_puts(b, ", \"time_to_train_s\": ");
        if (sim) orr_json_num(b, train_s(o, t));
        else orr_buf_puts(b, "null");
        if (cost) {
            orr_buf_puts(b, ", \"cost_to_train_usd\": ");
            if (sim) orr_json_num(b, train_usd(o, t));
            else orr_buf_puts(b, "null");
        }
    }
    if (cost) {
        orr_buf_puts(b, ", \"cost_usd\": ");
        if (sim) orr_json_num(b, t->cost_usd);
        else orr_buf_puts(b, "null");
    }
    if (t->dp) {
        orr_buf_printf(b, ", \"memory_lower_bound_bytes\": %llu, \"capacity_bytes\": %llu, \"time_lower_bound_s\": ",
                       (unsigned long long)t->bound_bytes, (unsigned long long)t->capacity_bytes);
        orr_json_num(b, t->bound_s);
    }
    orr_buf_printf(b, ", \"order\": %u", t->order);
    orr_buf_printf(b, ", \"status\": \"%s\", \"reason_key\": ", orr_trial_status_name(t->status));
    orr_json_str(b, t->key);
    orr_buf_puts(b, ", \"reason\": ");
    orr_json_str(b, t->reason);
    orr_buf_puts(b, "}");
}

static void json_counts(orr_buf *b, const char *name, const orr_reason_count *c, uint32_t n)
{
    orr_buf_printf(b, "  \"%s\": {", name);
    for (uint32_t i = 0; i < n; i++) {
        orr_buf_puts(b, i ? ", " : "");
        orr_json_str(b, c[i].key);
        orr_buf_printf(b, ": %u", c[i].n);
    }
    orr_buf_puts(b, "},\n");
}

void orr_search_json(const orr_search_result *r, const orr_search_opts *o, orr_buf *b)
{
    orr_buf_printf(b, "{\n  \"schema_version\": %d,\n  \"kind\": \"search\",\n  \"title\": ", ORR_JSON_SCHEMA_VERSION);
    orr_json_str(b, r->title);
    orr_buf_printf(b, ",\n  \"objective\": \"%s\",\n  \"strategy\": \"%s\",\n", objective_name(o->objective),
                   strategy_name(o->strategy));
    orr_buf_printf(b, "  \"space_size\": %u,\n  \"valid\": %u,\n  \"evaluated\": %u,\n  \"ok\": %u,\n  \"oom\": %u,\n",
                   r->ntrials, r->valid, r->evaluated, r->ok, r->oom);
    json_counts(b, "pruned", r->pruned, r->npruned);
    json_counts(b, "rejected", r->rejected, r->nrejected);
    orr_buf_puts(b, "  \"wall_s\": ");
    orr_json_num(b, r->wall_s);
    orr_buf_puts(b, ",\n  \"best\": ");
    if (r->nranked) json_trial(b, &r->trials[r->ranked[0]], o);
    else orr_buf_puts(b, "null");
    orr_buf_puts(b, ",\n  \"ranked\": [");
    for (uint32_t k = 0; k < r->nranked; k++) orr_buf_printf(b, "%s%u", k ? ", " : "", r->ranked[k]);
    orr_buf_puts(b, "],\n  \"pareto\": [");
    for (uint32_t k = 0; k < r->npareto; k++) orr_buf_printf(b, "%s%u", k ? ", " : "", r->pareto[k]);
    orr_buf_puts(b, "],\n  \"refined\": [");
    for (uint32_t k = 0; k < r->nrefined; k++) {
        const orr_refined *x = &r->refined[k];
        orr_buf_printf(b, "%s{\"index\": %u, \"rank\": %u, \"refined_rank\": %u, \"net\": \"%s\", "
                          "\"iteration_time_s\": ", k ? ", " : "", x->index, x->rank, x->new_rank, o->refine_net);
        if (x->iteration_s > 0) orr_json_num(b, x->iteration_s);
        else orr_buf_puts(b, "null");
        orr_buf_printf(b, ", \"oom\": %s, \"reason\": ", x->oom ? "true" : "false");
        orr_json_str(b, x->reason);
        orr_buf_puts(b, "}");
    }
    orr_buf_puts(b, "],\n  \"trials\": [");
    for (uint32_t i = 0; i < r->ntrials; i++) {
        orr_buf_puts(b, i ? ",\n    " : "\n    ");
        json_trial(b, &r->trials[i], o);
    }
    orr_buf_puts(b, "\n  ]\n}\n");
}

/* A CSV field: quoted, with quotes doubled. */
static void csv_str(orr_buf *b, const char *s)
{
    orr_buf_puts(b, "\"");
    for (; *s; s++) orr_buf_printf(b, "%s", *s == '"' ? "\"\"" : (char[2]){*s, 0});
    orr_buf_puts(b, "\"");
}

void orr_search_csv(const orr_search_result *r, orr_buf *b)
{
    orr_buf_puts(b, "index,framework,tp,pp,dp,cp,ep,vpp,mbs,recompute,zero,fsdp,sp,dist_opt,gpus,status,reason_key,"
                    "iteration_time_s,tokens_per_s,mfu,peak_memory_bytes,memory_lower_bound_bytes,capacity_bytes,"
                    "cost_usd,reason\n");
    for (uint32_t i = 0; i < r->ntrials; i++) {
        const orr_trial *t = &r->trials[i];
        int sim = t->status == ORR_TRIAL_OK || t->status == ORR_TRIAL_OOM;
        orr_buf_printf(b, "%u,%s,%u,%u,%u,%u,%u,%u,%u,%s,%u,%u,%d,%d,%u,%s,%s,", t->index,
                       orr_framework_name((orr_framework)t->v[ORR_AX_FRAMEWORK]), t->v[ORR_AX_TP], t->v[ORR_AX_PP], t->dp,
                       t->v[ORR_AX_CP], t->v[ORR_AX_EP], t->v[ORR_AX_VPP], t->v[ORR_AX_MBS],
                       orr_recompute_name((orr_recompute)t->v[ORR_AX_RECOMPUTE]), t->v[ORR_AX_ZERO],
                       t->fsdp ? t->fsdp : t->v[ORR_AX_FSDP], (int)t->v[ORR_AX_SP], (int)t->v[ORR_AX_DIST_OPT],
                       t->v[ORR_AX_GPUS],
                       orr_trial_status_name(t->status), t->key);
        if (sim) orr_buf_printf(b, "%.9g,%.9g,%.9g,%llu,", t->iteration_s, t->tokens_per_s, t->mfu,
                                (unsigned long long)t->peak_bytes);
        else orr_buf_puts(b, ",,,,");
        if (t->dp) orr_buf_printf(b, "%llu,%llu,", (unsigned long long)t->bound_bytes, (unsigned long long)t->capacity_bytes);
        else orr_buf_puts(b, ",,");
        if (sim && t->cost_usd > 0) orr_buf_printf(b, "%.9g", t->cost_usd);
        orr_buf_puts(b, ",");
        csv_str(b, t->reason);
        orr_buf_puts(b, "\n");
    }
}

/* ---- HTML (src/report/html.c draws it) ---- */

/* A trial as the page's tables show it: its axes, sharding and results. */
static void html_trial(orr_buf *b, uint32_t rank, const orr_trial *t, const orr_search_opts *o)
{
    char sh[32];
    sharding(t, sh, sizeof sh);
    orr_buf_printf(b, "{\"rank\":%u,\"index\":%u,\"gpus\":%u,\"framework\":\"%s\",\"tp\":%u,\"pp\":%u,\"dp\":%u,"
                      "\"cp\":%u,\"ep\":%u,\"vpp\":%u,\"mbs\":%u,\"recompute\":\"%s\",\"sharding\":\"%s\",\"sp\":%s",
                   rank, t->index, t->v[ORR_AX_GPUS], orr_framework_name((orr_framework)t->v[ORR_AX_FRAMEWORK]),
                   t->v[ORR_AX_TP], t->v[ORR_AX_PP], t->dp, t->v[ORR_AX_CP], t->v[ORR_AX_EP], t->v[ORR_AX_VPP],
                   t->v[ORR_AX_MBS],
                   orr_recompute_name((orr_recompute)t->v[ORR_AX_RECOMPUTE]), sh, t->v[ORR_AX_SP] ? "true" : "false");
    const char *k[] = {"iteration_s", "tokens_per_s", "mfu", "cost_usd", "train_s", "train_usd"};
    const double v[] = {t->iteration_s, t->tokens_per_s, t->mfu, t->cost_usd, train_s(o, t), train_usd(o, t)};
    for (int i = 0; i < 6; i++) {
        orr_buf_printf(b, ",\"%s\":", k[i]);
        orr_json_num(b, v[i]);
    }
    orr_buf_printf(b, ",\"peak_bytes\":%llu,\"capacity_bytes\":%llu}", (unsigned long long)t->peak_bytes,
                   (unsigned long long)t->capacity_bytes);
}

/* The rank (1-based) of an ok trial among the ranked, 0 if it is not ranked. */
static uint32_t rank_of(const orr_search_result *r, uint32_t index)
{
    for (uint32_t k = 0; k < r->nranked; k++)
        if (r->ranked[k] == index) return k + 1;
    return 0;
}

#define HTML_MAX_SCATTER 5000 /* trials drawn behind the Pareto front: the best by rank */
#define HTML_MAX_TOP 1000     /* rows of the page's table of the best (--top may ask for more) */

static void html_heatmap(orr_buf *b, const orr_search_result *r)
{
    uint32_t tps[ORR_SEARCH_MAX_VALUES], pps[ORR_SEARCH_MAX_VALUES];
    uint32_t ntp = search_axis_values(r, ORR_AX_TP, tps, ORR_SEARCH_MAX_VALUES);
    uint32_t npp = search_axis_values(r, ORR_AX_PP, pps, ORR_SEARCH_MAX_VALUES);
    orr_buf_puts(b, ",\n\"heatmap\":{\"tp\":[");
    for (uint32_t i = 0; i < ntp; i++) orr_buf_printf(b, "%s%u", i ? "," : "", tps[i]);
    orr_buf_puts(b, "],\"pp\":[");
    for (uint32_t j = 0; j < npp; j++) orr_buf_printf(b, "%s%u", j ? "," : "", pps[j]);
    orr_buf_puts(b, "],\"cells\":[");
    for (uint32_t i = 0; i < ntp; i++) {
        orr_buf_puts(b, i ? ",\n[" : "\n[");
        for (uint32_t j = 0; j < npp; j++) {
            heat h = heat_of(r, tps[i], pps[j]);
            const char *state = h.best_s > 0 ? "ok" : h.slow ? "slow" : h.oom ? "oom" : h.valid ? "none" : "invalid";
            orr_buf_printf(b, "%s{\"state\":\"%s\",\"best_s\":", j ? "," : "", state);
            orr_json_num(b, h.best_s);
            orr_buf_puts(b, "}");
        }
        orr_buf_puts(b, "]");
    }
    orr_buf_puts(b, "]}");
}

int orr_search_html(const orr_search_result *r, const orr_search_opts *o, const char *path, orr_err *err)
{
    orr_buf b = {0};
    orr_buf_puts(&b, "{\"kind\":\"search\",\"title\":");
    orr_json_str(&b, r->title);
    orr_buf_printf(&b, ",\"objective\":\"%s\",\"strategy\":\"%s\",\"gpus_listed\":%s,\"price_per_gpu_hour\":",
                   objective_name(o->objective), strategy_name(o->strategy), gpus_listed(o) ? "true" : "false");
    orr_json_num(&b, o->price_per_gpu_hour);
    orr_buf_puts(&b, ",\"tokens\":");
    orr_json_num(&b, o->tokens);
    orr_buf_printf(&b, ",\n\"counts\":{\"space\":%u,\"valid\":%u,\"simulated\":%u,\"fit\":%u,\"oom\":%u},\n",
                   r->ntrials, r->valid, r->evaluated, r->ok, r->oom);
    json_counts(&b, "pruned", r->pruned, r->npruned);
    json_counts(&b, "rejected", r->rejected, r->nrejected);
    uint32_t top = o->top < r->nranked ? o->top : r->nranked;
    orr_buf_printf(&b, "\"top_asked\":%u,\"top\":[", top);
    if (top > HTML_MAX_TOP) top = HTML_MAX_TOP;
    for (uint32_t k = 0; k < top; k++) {
        orr_buf_puts(&b, k ? ",\n" : "\n");
        html_trial(&b, k + 1, &r->trials[r->ranked[k]], o);
    }
    orr_buf_puts(&b, "]");
    html_heatmap(&b, r);
    orr_buf_puts(&b, ",\n\"pareto\":");
    if (r->npareto) {
        orr_buf_printf(&b, "{\"against\":\"%s\",\"front\":[", o->price_per_gpu_hour > 0 ? "cost" : "gpus");
        for (uint32_t k = 0; k < r->npareto; k++) {
            orr_buf_puts(&b, k ? ",\n" : "\n");
            html_trial(&b, rank_of(r, r->pareto[k]), &r->trials[r->pareto[k]], o);
        }
        /* every ranked trial behind the front, [gpus, cost_usd, iteration_s] */
        uint32_t n = r->nranked < HTML_MAX_SCATTER ? r->nranked : HTML_MAX_SCATTER;
        orr_buf_printf(&b, "],\"ranked_total\":%u,\"others\":[", r->nranked);
        for (uint32_t k = 0; k < n; k++) {
            const orr_trial *t = &r->trials[r->ranked[k]];
            orr_buf_printf(&b, "%s[%u,", k ? "," : "", t->v[ORR_AX_GPUS]);
            orr_json_num(&b, t->cost_usd);
            orr_buf_puts(&b, ",");
            orr_json_num(&b, t->iteration_s);
            orr_buf_puts(&b, "]");
        }
        orr_buf_puts(&b, "]}");
    } else {
        orr_buf_puts(&b, "null");
    }
    orr_buf_puts(&b, "}\n");
    int rc = orr_report_html_page(path, "search", r->title, &b, err);
    orr_buf_free(&b);
    return rc;
}

int orr_search_write_files(const orr_search_result *r, const orr_search_opts *o, orr_err *err)
{
    if (o->csv_path[0]) {
        orr_buf out = {0};
        orr_search_csv(r, &out);
        FILE *f = fopen(o->csv_path, "w");
        int bad = !f || fwrite(out.s, 1, out.n, f) != out.n;
        int e = errno;
        if (f && fclose(f) && !bad) bad = 1, e = errno;
        orr_buf_free(&out);
        if (bad) return orr_fail(err, "--csv %s: cannot write the file: %s", o->csv_path, strerror(e));
    }
    return o->html_path[0] ? orr_search_html(r, o, o->html_path, err) : 0;
}
