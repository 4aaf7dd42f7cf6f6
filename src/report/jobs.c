/*
 * jobs.c - the report of several jobs sharing one cluster (`orrery predict` with jobs:, docs/spec.md
 * "jobs"): per job its iteration alone on its GPUs and in the shared run, the slowdown, and the
 * exposed communication (per role) and communicator transfer times that sharing changed; then the
 * shared run's fabric. Text and JSON (docs/json.md "Several jobs"). Pure functions of their inputs.
 */
#include "orrery/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUPS_LISTED 8   /* text: communicators listed per job, the most changed first */
#define RANGES_LISTED 8   /* text: GPU ranges listed per job */

static double ms_of(int64_t ps) { return (double)ps / (double)ORR_PS_PER_MS; }
static double s_of(int64_t ps) { return (double)ps / (double)ORR_PS_PER_S; }

static double slowdown_of(const orr_job_report *j)
{
    return j->alone->iteration_ps > 0 ? (double)j->shared->iteration_ps / (double)j->alone->iteration_ps - 1.0 : 0.0;
}

/* A change counts when it exceeds 1e-4 of the job's iteration alone (and 1 ps): tie order between
 * simultaneous events can move single picoseconds. */
static int changed(const orr_job_report *j, int64_t a_ps, int64_t b_ps)
{
    int64_t d = b_ps > a_ps ? b_ps - a_ps : a_ps - b_ps;
    return d > 1 && (double)d > 1e-4 * (double)j->alone->iteration_ps;
}

static const int role_order[] = {ORR_ROLE_TP, ORR_ROLE_CP, ORR_ROLE_EP, ORR_ROLE_PP, ORR_ROLE_DP, ORR_ROLE_EMB,
                                 ORR_ROLE_OTHER, ORR_ROLE_NONE};
#define NROLES (sizeof role_order / sizeof role_order[0])

/* The job's global GPUs as runs first..last; calls emit for each. */
typedef void (*range_fn)(orr_buf *out, size_t k, uint32_t first, uint32_t last);

static size_t gpu_ranges(const orr_job_report *j, orr_buf *out, size_t max, range_fn emit)
{
    size_t n = j->w->world_size, k = 0;
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e + 1 < n && j->gpu_of[e + 1] == j->gpu_of[e] + 1) e++;
        if (k < max) emit(out, k, j->gpu_of[i], j->gpu_of[e]);
        k++;
        i = e + 1;
    }
    return k;
}

static void range_text(orr_buf *out, size_t k, uint32_t first, uint32_t last)
{
    if (first == last) orr_buf_printf(out, "%s%u", k ? ", " : "", first);
    else orr_buf_printf(out, "%s%u-%u", k ? ", " : "", first, last);
}

static void range_json(orr_buf *out, size_t k, uint32_t first, uint32_t last)
{
    orr_buf_printf(out, "%s[%u, %u]", k ? ", " : "", first, last);
}

typedef struct group_change {
    int64_t delta_abs;
    size_t g;
} group_change;

static int cmp_change(const void *a, const void *b)
{
    const group_change *x = a, *y = b;
    if (x->delta_abs != y->delta_abs) return x->delta_abs > y->delta_abs ? -1 : 1;
    return (x->g > y->g) - (x->g < y->g);
}

/* Communicators whose transfer time changed, the most changed first (then by id); returns how many. */
static size_t changed_groups(const orr_job_report *j, group_change **out)
{
    size_t n = j->alone->ngroups < j->shared->ngroups ? j->alone->ngroups : j->shared->ngroups, m = 0;
    group_change *c = orr_xmalloc((n ? n : 1) * sizeof *c);
    for (size_t g = 0; g < n; g++) {
        int64_t a = j->alone->group_comm_ps[g], b = j->shared->group_comm_ps[g];
        if (changed(j, a, b)) c[m++] = (group_change){b > a ? b - a : a - b, g};
    }
    qsort(c, m, sizeof *c, cmp_change);
    *out = c;
    return m;
}

static void job_text(const orr_jobs_report *rep, const orr_job_report *j, orr_buf *out)
{
    const orr_result *a = j->alone, *s = j->shared;
    orr_buf_printf(out, "\nJob \"%s\": %s\n", j->name, j->info && j->info->title ? j->info->title : "");
    orr_buf_printf(out, "  %-34s ", "GPUs of the cluster");
    size_t nr = gpu_ranges(j, out, RANGES_LISTED, range_text);
    if (nr > RANGES_LISTED) orr_buf_printf(out, ", ... (%zu ranges)", nr);
    orr_buf_puts(out, "\n");
    orr_buf_printf(out, "  %-34s %.6f s\n", "iteration time alone", a->iteration_s);
    orr_buf_printf(out, "  %-34s %.6f s\n", "iteration time shared", s->iteration_s);
    orr_buf_printf(out, "  %-34s %+.2f %%%s\n", "slowdown from sharing", 100.0 * slowdown_of(j),
                   rep->backend == ORR_NET_ANALYTIC ? " (analytic backend: no interaction modelled)" : "");
    if (j->w->tokens > 0)
        orr_buf_printf(out, "  %-34s %.1f / %.1f tokens/s\n", "throughput alone / shared", a->tokens_per_s,
                       s->tokens_per_s);
    orr_buf_printf(out, "  %-34s %.2f %% / %.2f %%\n", "MFU alone / shared", 100.0 * a->mfu, 100.0 * s->mfu);
    int any = 0;
    for (size_t k = 0; k < NROLES; k++) {
        int r = role_order[k];
        if (!changed(j, a->mean.comm_ps[r], s->mean.comm_ps[r])) continue;
        if (!any)
            orr_buf_printf(out, "  exposed communication that sharing changed (mean GPU):\n    %-32s %12s %12s %12s\n",
                           "role", "alone ms", "shared ms", "change");
        any = 1;
        char label[48];
        snprintf(label, sizeof label, "%s", orr_role_name((orr_comm_role)r));
        for (char *p = label; *p; p++)
            if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
        int64_t d = s->mean.comm_ps[r] - a->mean.comm_ps[r];
        orr_buf_printf(out, "    %-32s %12.3f %12.3f %+11.2f %%\n", label, ms_of(a->mean.comm_ps[r]),
                       ms_of(s->mean.comm_ps[r]),
                       a->mean.comm_ps[r] > 0 ? 100.0 * (double)d / (double)a->mean.comm_ps[r] : 100.0);
    }
    if (!any) orr_buf_puts(out, "  exposed communication: unchanged by sharing (every role within 1e-4 of the iteration)\n");
    group_change *c;
    size_t m = changed_groups(j, &c);
    if (m) {
        orr_buf_printf(out, "  communicators whose transfer time sharing changed (per iteration, mean member):\n"
                            "    %-32s %12s %12s %12s\n", "group (role, GPUs)", "alone ms", "shared ms", "change");
        for (size_t k = 0; k < m && k < GROUPS_LISTED; k++) {
            const orr_group *g = &j->w->groups[c[k].g];
            char label[80];
            snprintf(label, sizeof label, "%s (%s, %u)", g->label[0] ? g->label : "group",
                     orr_role_name((orr_comm_role)g->role), g->size);
            int64_t ga = a->group_comm_ps[c[k].g], gs = s->group_comm_ps[c[k].g];
            orr_buf_printf(out, "    %-32.32s %12.3f %12.3f %+11.2f %%\n", label, ms_of(ga), ms_of(gs),
                           ga > 0 ? 100.0 * (double)(gs - ga) / (double)ga : 100.0);
        }
        if (m > GROUPS_LISTED) orr_buf_printf(out, "    ... and %zu more\n", m - GROUPS_LISTED);
    }
    free(c);
}

void orr_report_jobs_text(const orr_jobs_report *rep, orr_buf *out)
{
    const char *gpu = rep->njobs && rep->jobs[0].info ? rep->jobs[0].info->gpu_name : NULL;
    orr_buf_printf(out, "%zu jobs on a cluster of %u x %s (%s backend%s%s)\n", rep->njobs, rep->cluster_gpus,
                   gpu ? gpu : "GPU", orr_net_kind_name(rep->backend), rep->fabric ? ", " : "",
                   rep->fabric ? rep->fabric : "");
    if (rep->backend == ORR_NET_ANALYTIC)
        orr_buf_puts(out, "  note: under --net analytic the jobs do not interact (closed-form collective times, no shared "
                          "links), so each job's shared run equals its run alone; use --net flow to model contention\n");
    else
        orr_buf_puts(out, "  each job run alone on its GPUs, then all jobs in one run whose flows share the fabric\n");
    orr_buf_printf(out, "  %-34s %.6f s\n", "shared run, until the last job ends", s_of(rep->makespan_ps));
    for (size_t i = 0; i < rep->njobs; i++) job_text(rep, &rep->jobs[i], out);
    if (rep->net) orr_report_net_text(rep->net, out);
    orr_buf_printf(out, "\nEngine events simulated (shared run): %llu\n", (unsigned long long)rep->events);
}

/* Copies a JSON document into out, indenting its continuation lines by `indent` spaces and
 * dropping its final newline. */
static void embed(orr_buf *out, const orr_buf *doc, int indent)
{
    size_t n = doc->n;
    while (n > 0 && doc->s[n - 1] == '\n') n--;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(doc->s + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - doc->s) + 1 : n;
        orr_buf_printf(out, "%.*s", (int)(e - i), doc->s + i);
        if (nl) orr_buf_printf(out, "%*s", indent, "");
        i = e;
    }
}

static void job_json(const orr_job_report *j, orr_buf *out)
{
    const orr_result *a = j->alone, *s = j->shared;
    orr_buf_puts(out, "\n    {\"name\": ");
    orr_json_str(out, j->name);
    orr_buf_printf(out, ",\n     \"gpus\": %u, \"gpu_ranges\": [", j->w->world_size);
    gpu_ranges(j, out, (size_t)-1, range_json);
    orr_buf_puts(out, "],\n     \"iteration_time_alone_s\": ");
    orr_json_num(out, a->iteration_s);
    orr_buf_puts(out, ", \"iteration_time_shared_s\": ");
    orr_json_num(out, s->iteration_s);
    orr_buf_printf(out, ",\n     \"iteration_time_alone_ps\": %lld, \"iteration_time_shared_ps\": %lld, \"slowdown\": ",
                   (long long)a->iteration_ps, (long long)s->iteration_ps);
    orr_json_num(out, slowdown_of(j));
    orr_buf_puts(out, ",\n     \"tokens_per_s_alone\": ");
    orr_json_num(out, a->tokens_per_s);
    orr_buf_puts(out, ", \"tokens_per_s_shared\": ");
    orr_json_num(out, s->tokens_per_s);
    orr_buf_puts(out, ",\n     \"exposed_comm_change_s\": {");
    static const int roles[] = {ORR_ROLE_TP, ORR_ROLE_PP, ORR_ROLE_DP, ORR_ROLE_EMB, ORR_ROLE_CP, ORR_ROLE_EP};
    int64_t other_a = a->mean.comm_ps[ORR_ROLE_OTHER] + a->mean.comm_ps[ORR_ROLE_NONE];
    int64_t other_s = s->mean.comm_ps[ORR_ROLE_OTHER] + s->mean.comm_ps[ORR_ROLE_NONE];
    for (size_t k = 0; k < sizeof roles / sizeof roles[0]; k++) {
        orr_buf_printf(out, "%s\"%s\": ", k ? ", " : "", orr_role_name((orr_comm_role)roles[k]));
        orr_json_num(out, s_of(s->mean.comm_ps[roles[k]] - a->mean.comm_ps[roles[k]]));
    }
    orr_buf_puts(out, ", \"other\": ");
    orr_json_num(out, s_of(other_s - other_a));
    orr_buf_puts(out, "},\n     \"groups_changed\": [");
    group_change *c;
    size_t m = changed_groups(j, &c);
    for (size_t k = 0; k < m; k++) {
        const orr_group *g = &j->w->groups[c[k].g];
        orr_buf_printf(out, "%s\n       {\"group\": %zu, \"label\": ", k ? "," : "", c[k].g);
        orr_json_str(out, g->label);
        orr_buf_printf(out, ", \"role\": \"%s\", \"size\": %u, \"comm_alone_s\": ", orr_role_name((orr_comm_role)g->role),
                       g->size);
        orr_json_num(out, s_of(a->group_comm_ps[c[k].g]));
        orr_buf_puts(out, ", \"comm_shared_s\": ");
        orr_json_num(out, s_of(s->group_comm_ps[c[k].g]));
        orr_buf_puts(out, "}");
    }
    free(c);
    orr_buf_puts(out, m ? "\n     ],\n     \"alone\": " : "],\n     \"alone\": ");
    orr_buf doc = {0};
    orr_report_json(a, j->w, j->info, &doc);
    embed(out, &doc, 5);
    orr_buf_puts(out, ",\n     \"shared\": ");
    orr_buf_free(&doc);
    orr_report_json(s, j->w, j->info, &doc);
    embed(out, &doc, 5);
    orr_buf_free(&doc);
    orr_buf_puts(out, "}");
}

void orr_report_jobs_json(const orr_jobs_report *rep, orr_buf *out)
{
    orr_buf_printf(out, "{\n  \"schema_version\": %d,\n  \"backend\": \"%s\",\n  \"jobs_interact\": %s,\n"
                        "  \"world_size\": %u,\n  \"iteration_time_s\": ",
                   ORR_JSON_SCHEMA_VERSION, orr_net_kind_name(rep->backend),
                   rep->backend == ORR_NET_ANALYTIC ? "false" : "true", rep->cluster_gpus);
    orr_json_num(out, s_of(rep->makespan_ps));
    orr_buf_printf(out, ",\n  \"iteration_time_ps\": %lld,\n  \"events\": %llu,", (long long)rep->makespan_ps,
                   (unsigned long long)rep->events);
    orr_net_summary none;
    memset(&none, 0, sizeof none);
    orr_report_net_json(rep->net ? rep->net : &none, out);
    orr_buf_puts(out, "\n  \"jobs\": [");
    for (size_t i = 0; i < rep->njobs; i++) {
        if (i) orr_buf_puts(out, ",");
        job_json(&rep->jobs[i], out);
    }
    orr_buf_puts(out, "\n  ]\n}\n");
}
