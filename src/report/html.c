/*
 * html.c - the HTML report (`--html FILE` of predict, emulate and search; docs/report.md): one
 * self-contained page that opens from a file:// with no network. The page is a fixed skeleton (the
 * sections, by element id), the stylesheet and the renderer written for it (src/report/html/,
 * compiled in by cmake/embed.cmake), and the run's data as one inline JSON object, which the
 * renderer draws as inline SVG. When it has drawn everything without an exception it adds
 * <div id="orrery-ok">, which tests/cli_html.sh looks for in a headless browser's DOM.
 *
 * Data of a prediction (the object orr_report_html writes; times in integer nanoseconds, _ns,
 * truncated from the run's picoseconds; sizes in bytes):
 *   headline      iteration time, tokens/s, TFLOP/s, MFU/HFU, memory peaks, the OOM verdict
 *   breakdown     the orr_breakdown parts of the mean GPU and of each rank the text report lists
 *   critical_path the orr_critical_path kinds
 *   timeline      per listed rank, one row per stream (and one for the host when it did host work):
 *                 slices [start, end) of kernels, copies, collectives by role, p2p, and the
 *                 bubble / wait before a communication op, as trace.c draws them
 *   memory        the allocated bytes by category and the reserved bytes of the peak rank after
 *                 each allocation and free, the capacity and the OOM allocation
 *   network       under --net flow / packet: the tiers, the most congested links and the
 *                 utilisation over time of the busiest links per tier (the run's link tracks)
 *
 * Size budget: at most HTML_MAX_SLICES timeline slices over all ranks (a large run has ~10^6 ops: the
 * slices are then coalesced at the finest resolution that fits, and the page says so), at most
 * HTML_MAX_MEM_POINTS memory points (each the highest allocated of consecutive samples), at most
 * HTML_LINKS_PER_TIER links per tier over at most HTML_MAX_LINK_WINDOWS windows, at most HTML_MAX_NAMES
 * op names (further slices show their kind only) cut at HTML_NAME_MAX bytes: with the 35 KB renderer,
 * a page is at most about 3 MB.
 *
 * The page is a pure function of its inputs (no time, no path of the machine): the same run gives
 * byte-identical files.
 */
#include "orrery/report.h"

#include "spec/yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HTML_MAX_SLICES 40000
#define HTML_MAX_MEM_POINTS 2000
#define HTML_LINKS_PER_TIER 4
#define HTML_MAX_LINK_WINDOWS 400
#define HTML_NAME_MAX 120
#define HTML_MAX_NAMES 4096

/* ---- the page ---- */

/* Text for an HTML element or attribute. */
static void html_text(orr_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': orr_buf_puts(b, "&lt;"); break;
        case '>': orr_buf_puts(b, "&gt;"); break;
        case '&': orr_buf_puts(b, "&amp;"); break;
        case '"': orr_buf_puts(b, "&quot;"); break;
        default: orr_buf_printf(b, "%c", *s);
        }
    }
}

/* The sections of each kind of page, in order: element id and heading. */
typedef struct html_section { const char *id, *heading; } html_section;
static const html_section predict_sections[] = {
    {"headline", "Headline"},
    {"timeline", "Timeline of the iteration"},
    {"breakdown", "Where the time goes"},
    {"memory", "Memory of the peak rank"},
    {"critical-path", "Critical path"},
    {"network", "Network links"},
    {"config", "Configuration"},
};
static const html_section search_sections[] = {
    {"summary", "Search"},
    {"heatmap", "Best iteration time by TP x PP"},
    {"pareto", "Pareto front"},
    {"top", "Best configurations"},
};

static const char *embedded(const char *name, orr_err *err)
{
    size_t size;
    const char *s = orr_embedded_data(name, &size);
    if (!s) orr_fail(err, "--html: internal error: %s is not compiled into the library", name);
    return s;
}

int orr_report_html_page(const char *path, const char *kind, const char *title, const orr_buf *data_json,
                         orr_err *err)
{
    const char *css = embedded("report.css", err), *js = css ? embedded("report.js", err) : NULL;
    if (!js) return -1;
    int search = strcmp(kind, "search") == 0;
    const html_section *sec = search ? search_sections : predict_sections;
    size_t nsec = search ? sizeof search_sections / sizeof search_sections[0]
                         : sizeof predict_sections / sizeof predict_sections[0];
    orr_buf b = {0};
    orr_buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<meta name=\"generator\" content=\"orrery\">\n<title>");
    html_text(&b, title);
    orr_buf_puts(&b, "</title>\n<style>\n");
    orr_buf_puts(&b, css);
    orr_buf_puts(&b, "</style>\n</head>\n<body>\n<header>\n<h1 id=\"title\">");
    html_text(&b, title);
    orr_buf_printf(&b, "</h1>\n<p class=\"sub\">Orrery %s report</p>\n</header>\n<main id=\"report\" data-kind=\"%s\">\n",
                   search ? "search" : "prediction", kind);
    for (size_t i = 0; i < nsec; i++)
        orr_buf_printf(&b, "<section id=\"%s\">\n<h2>%s</h2>\n<div class=\"body\"></div>\n</section>\n", sec[i].id,
                       sec[i].heading);
    orr_buf_puts(&b, "</main>\n<noscript><p>This report draws its charts with JavaScript; enable it to see "
                     "them.</p></noscript>\n<script type=\"application/json\" id=\"orrery-data\">\n");
    /* '<' only occurs inside JSON strings, where \u003c means the same: no "</script>" can end the
     * element early. */
    for (size_t i = 0; i < data_json->n;) {
        const char *lt = memchr(data_json->s + i, '<', data_json->n - i);
        size_t span = lt ? (size_t)(lt - (data_json->s + i)) : data_json->n - i;
        orr_buf_printf(&b, "%.*s", (int)span, data_json->s + i);
        i += span;
        if (lt) {
            orr_buf_puts(&b, "\\u003c");
            i++;
        }
    }
    orr_buf_puts(&b, "\n</script>\n<script>\n");
    orr_buf_puts(&b, js);
    orr_buf_puts(&b, "</script>\n</body>\n</html>\n");

    int rc = 0;
    FILE *f = fopen(path, "wb");
    if (!f) {
        rc = orr_fail(err, "--html %s: cannot write: %s", path, strerror(errno));
    } else {
        int bad = fwrite(b.s, 1, b.n, f) != b.n;
        int saved = errno;
        if (fclose(f) != 0 && !bad) {
            bad = 1;
            saved = errno;
        }
        if (bad) rc = orr_fail(err, "--html %s: error writing: %s", path, strerror(saved ? saved : EIO));
    }
    orr_buf_free(&b);
    return rc;
}

/* ---- JSON pieces ---- */

static long long ns_of(int64_t ps)
{
    return (long long)(ps / ORR_PS_PER_NS);
}

/* ,"key":number */
static void key_num(orr_buf *b, const char *key, double v)
{
    orr_buf_printf(b, ",\"%s\":", key);
    orr_json_num(b, v);
}

static void key_u64(orr_buf *b, const char *key, uint64_t v)
{
    orr_buf_printf(b, ",\"%s\":%llu", key, (unsigned long long)v);
}

static void key_str(orr_buf *b, const char *key, const char *s)
{
    orr_buf_printf(b, ",\"%s\":", key);
    orr_json_str(b, s);
}

/* "label (gpu N, xW)": a rank as the text report names it. */
static void rank_label(const orr_rank *rk, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s (gpu %u, x%u)", rk->label, rk->gpu, rk->weight);
}

/* ---- headline and breakdown ---- */

static void headline_json(orr_buf *b, const orr_result *r, const orr_workload *w, const orr_report_info *info)
{
    orr_buf_printf(b, "\"headline\":{\"iteration_ns\":%lld", ns_of(r->iteration_ps));
    key_num(b, "iteration_s", r->iteration_s);
    key_num(b, "tokens_per_s", w->tokens > 0 ? r->tokens_per_s : 0);
    key_num(b, "tokens_per_iteration", w->tokens);
    key_num(b, "tflops_per_gpu", r->tflops_per_gpu);
    key_num(b, "hw_tflops_per_gpu", r->hw_tflops_per_gpu);
    key_num(b, "mfu", r->mfu);
    key_num(b, "hfu", r->hfu);
    key_num(b, "peak_tflops", info ? info->peak_flops_per_gpu / 1e12 : 0);
    key_str(b, "gpu", info && info->gpu_name ? info->gpu_name : "");
    key_str(b, "flops_convention", r->flops_convention);
    key_u64(b, "world_size", r->world_size);
    key_u64(b, "unique_ranks", r->unique_ranks);
    key_u64(b, "events", r->events);
    key_u64(b, "peak_reserved_bytes", r->mem.peak_reserved_bytes);
    key_u64(b, "peak_allocated_bytes", r->mem.peak_allocated_bytes);
    key_u64(b, "capacity_bytes", r->mem.capacity_bytes);
    key_u64(b, "device_bytes", info ? info->device_bytes : 0);
    orr_buf_printf(b, ",\"caching_allocator\":%s,\"oom\":%s}", info && info->caching_allocator ? "true" : "false",
                   r->mem.oom ? "true" : "false");
}

/* The parts of a breakdown that tile the iteration, as the text report names them. */
static const struct { int role; const char *label; } comm_parts[] = {
    {ORR_ROLE_TP, "exposed TP communication"},   {ORR_ROLE_CP, "exposed CP communication"},
    {ORR_ROLE_EP, "exposed EP communication"},   {ORR_ROLE_PP, "exposed PP communication"},
    {ORR_ROLE_DP, "exposed DP communication"},   {ORR_ROLE_EMB, "exposed embedding communication"},
    {ORR_ROLE_OTHER, "exposed other communication"}, {ORR_ROLE_NONE, "exposed unattributed communication"},
};
#define NCOMM_PARTS (sizeof comm_parts / sizeof comm_parts[0])

static void parts_ns(orr_buf *b, const orr_breakdown *x)
{
    orr_buf_printf(b, "[%lld", ns_of(x->compute_ps));
    for (size_t k = 0; k < NCOMM_PARTS; k++) orr_buf_printf(b, ",%lld", ns_of(x->comm_ps[comm_parts[k].role]));
    orr_buf_printf(b, ",%lld,%lld,%lld]", ns_of(x->bubble_ps), ns_of(x->wait_ps), ns_of(x->idle_ps));
}

static void breakdown_json(orr_buf *b, const orr_result *r, const orr_workload *w, const size_t *idx, size_t nidx)
{
    orr_buf_puts(b, ",\n\"breakdown\":{\"parts\":[\"compute (kernels, copies)\"");
    for (size_t k = 0; k < NCOMM_PARTS; k++) orr_buf_printf(b, ",\"%s\"", comm_parts[k].label);
    orr_buf_puts(b, ",\"pipeline bubble\",\"wait for stragglers\",\"idle (host-bound or drained)\"],\"mean_ns\":");
    parts_ns(b, &r->mean);
    orr_buf_printf(b, ",\"mean_overlapped_ns\":%lld,\"ranks_total\":%zu,\"ranks\":[",
                   ns_of(r->mean.overlapped_comm_ps), r->nranks);
    for (size_t k = 0; k < nidx; k++) {
        char label[96];
        rank_label(&w->ranks[idx[k]], label, sizeof label);
        orr_buf_puts(b, k ? ",\n{\"label\":" : "\n{\"label\":");
        orr_json_str(b, label);
        orr_buf_puts(b, ",\"ns\":");
        parts_ns(b, &r->ranks[idx[k]]);
        orr_buf_printf(b, ",\"overlapped_ns\":%lld}", ns_of(r->ranks[idx[k]].overlapped_comm_ps));
    }
    orr_buf_puts(b, "]}");
}

static void critical_path_json(orr_buf *b, const orr_result *r)
{
    static const char *const labels[ORR_CP_KIND_COUNT] = {
        "compute", "TP communication", "PP communication", "DP communication",
        "other communication", "host (launches, host work)", "memcpy/memset"};
    orr_buf_printf(b, ",\n\"critical_path\":{\"nops\":%u,\"rank_hops\":%u,\"kinds\":[", r->cp.nops, r->cp.rank_hops);
    for (int k = 0; k < ORR_CP_KIND_COUNT; k++)
        orr_buf_printf(b, "%s{\"kind\":\"%s\",\"label\":\"%s\",\"ns\":%lld}", k ? "," : "",
                       orr_cp_kind_name((orr_cp_kind)k), labels[k], ns_of(r->cp.ps[k]));
    orr_buf_puts(b, "]}");
}

/* ---- timeline ---- */

/* What a slice is, for its colour: kernels, copies, collectives by role, p2p, the waits, host. */
enum { C_KERNEL, C_MEMCPY, C_COLL, C_P2P = C_COLL + ORR_ROLE_COUNT, C_BUBBLE, C_WAIT, C_HOST, C_COUNT };

static void cat_label(int c, char *buf, size_t cap)
{
    static const char *const upper[ORR_ROLE_COUNT] = {"unattributed", "TP", "PP", "DP", "embedding", "CP", "EP",
                                                      "other"};
    if (c == C_KERNEL) snprintf(buf, cap, "compute kernel");
    else if (c == C_MEMCPY) snprintf(buf, cap, "memcpy / memset");
    else if (c < C_P2P) snprintf(buf, cap, "%s collective", upper[c - C_COLL]);
    else if (c == C_P2P) snprintf(buf, cap, "p2p send / recv");
    else if (c == C_BUBBLE) snprintf(buf, cap, "bubble (p2p waits for its peer)");
    else if (c == C_WAIT) snprintf(buf, cap, "wait (collective waits for members)");
    else snprintf(buf, cap, "host work / sync");
}

static void cat_key(int c, char *buf, size_t cap)
{
    static const char *const keys[] = {"kernel", "memcpy"};
    if (c < C_COLL) snprintf(buf, cap, "%s", keys[c]);
    else if (c < C_P2P) snprintf(buf, cap, "coll_%s", orr_role_name((orr_comm_role)(c - C_COLL)));
    else snprintf(buf, cap, "%s", c == C_P2P ? "p2p" : c == C_BUBBLE ? "bubble" : c == C_WAIT ? "wait" : "host");
}

typedef struct slice {
    int64_t start_ps, end_ps;
    int32_t name; /* the op's name index, -1: none */
    uint8_t cat;
} slice;

typedef struct row {
    slice *s;
    size_t n, cap;
} row;

/* One listed rank's rows: [0] the host, [1 + s] stream s. */
typedef struct rank_rows {
    size_t index;
    row *rows;
    size_t nrows;
} rank_rows;

static void add_slice(row *rw, int64_t start_ps, int64_t end_ps, int cat, const orr_op *op, const orr_workload *w)
{
    slice s = {start_ps, end_ps, op->name < w->nnames ? (int32_t)op->name : -1, (uint8_t)cat};
    ORR_PUSH(rw->s, rw->n, rw->cap, s);
}

/* The slices of a rank, as trace.c draws its ops. */
static void gather_rank(rank_rows *rr, const orr_workload *w, const orr_exec_result *x, size_t ri)
{
    const orr_rank *rk = &w->ranks[ri];
    const orr_op_time *t = x->ranks[ri].t;
    rr->index = ri;
    rr->nrows = 1 + (rk->nstreams ? rk->nstreams : 1);
    rr->rows = orr_xcalloc(rr->nrows, sizeof *rr->rows);
    for (size_t i = 0; t && i < rk->nops; i++) {
        const orr_op *op = &rk->ops[i];
        const orr_op_time *ti = &t[i];
        if (ti->end_ps < 0) continue;
        int host_sync = op->kind == ORR_OP_EVENT_SYNC || op->kind == ORR_OP_STREAM_SYNC ||
                        op->kind == ORR_OP_DEVICE_SYNC;
        if (op->kind == ORR_OP_HOST || (host_sync && ti->end_ps > ti->start_ps)) {
            add_slice(&rr->rows[0], ti->start_ps, ti->end_ps, C_HOST, op, w);
            continue;
        }
        if (op->stream + 1u >= rr->nrows) continue;
        row *rw = &rr->rows[1 + op->stream];
        int cat;
        switch (op->kind) {
        case ORR_OP_KERNEL: cat = C_KERNEL; break;
        case ORR_OP_MEMCPY:
        case ORR_OP_MEMSET: cat = C_MEMCPY; break;
        case ORR_OP_COLL: cat = C_COLL + (op->role < ORR_ROLE_COUNT ? op->role : ORR_ROLE_OTHER); break;
        case ORR_OP_SEND:
        case ORR_OP_RECV: cat = C_P2P; break;
        default: continue;
        }
        if (cat >= C_COLL && ti->start_ps > ti->ready_ps)
            add_slice(rw, ti->ready_ps, ti->start_ps, op->kind == ORR_OP_COLL ? C_WAIT : C_BUBBLE, op, w);
        add_slice(rw, ti->start_ps, ti->end_ps, cat, op, w);
    }
}

/* A run of slices drawn as one: [start, end), how many, and their time by category. */
typedef struct run {
    int64_t start_ps, end_ps;
    uint32_t count;
    int32_t name;
    int cat0, pure;
    int64_t busy_ps[C_COUNT];
} run;

static void run_begin(run *u, const slice *s)
{
    memset(u, 0, sizeof *u);
    u->start_ps = s->start_ps;
    u->end_ps = s->end_ps;
    u->count = 1;
    u->name = s->name;
    u->cat0 = s->cat;
    u->pure = 1;
    u->busy_ps[s->cat] = s->end_ps - s->start_ps;
}

/* Whether s joins run u at resolution res_ps (0: every slice drawn): it starts at most res_ps after
 * the run ends, and it or the run is shorter than res_ps, or both are of one category. */
static int joins(const run *u, const slice *s, int64_t res_ps)
{
    if (res_ps <= 0 || s->start_ps - u->end_ps > res_ps) return 0;
    return s->end_ps - s->start_ps < res_ps || u->end_ps - u->start_ps < res_ps || (u->pure && s->cat == u->cat0);
}

typedef struct names_out {
    orr_map index;   /* workload name index -> place in the page's table */
    uint32_t n;
    uint64_t dropped;/* slices drawn without their name: the table was full */
    orr_buf json;    /* the table */
} names_out;

/* Emits run u after the row's previous slice (at *prev_ns); returns nothing, appends
 * start delta, duration, category, name (the page's name index; -count for a run of several). */
static void run_emit(orr_buf *b, const run *u, long long *prev_ns, int *first, names_out *no, const orr_workload *w)
{
    int cat = 0;
    for (int c = 1; c < C_COUNT; c++)
        if (u->busy_ps[c] > u->busy_ps[cat]) cat = c;
    long long name = -(long long)u->count;
    if (u->count == 1 && u->name >= 0) {
        uint32_t *at = orr_map_get(&no->index, (uint64_t)u->name);
        if (!at && no->n >= HTML_MAX_NAMES) {
            no->dropped++;
        } else if (!at) {
            char cut[HTML_NAME_MAX + 1];
            snprintf(cut, sizeof cut, "%s", w->names[u->name]);
            orr_buf_puts(&no->json, no->n ? "," : "");
            orr_json_str(&no->json, cut);
            orr_map_put(&no->index, (uint64_t)u->name, no->n++);
            at = orr_map_get(&no->index, (uint64_t)u->name);
        }
        name = at ? (long long)*at : -1;
    } else if (u->count == 1) {
        name = -1;
    }
    long long s_ns = ns_of(u->start_ps), e_ns = ns_of(u->end_ps);
    orr_buf_printf(b, "%s%lld,%lld,%d,%lld", *first ? "" : ",", s_ns - *prev_ns, e_ns - s_ns, cat, name);
    *prev_ns = s_ns;
    *first = 0;
}

/* The slices row rw is drawn as at resolution res_ps: their number, and with b, the slices. */
static size_t row_runs(const row *rw, int64_t res_ps, orr_buf *b, names_out *no, const orr_workload *w)
{
    if (!rw->n) return 0;
    run u;
    size_t count = 0;
    long long prev_ns = 0;
    int first = 1;
    run_begin(&u, &rw->s[0]);
    for (size_t i = 1; i < rw->n; i++) {
        const slice *s = &rw->s[i];
        if (joins(&u, s, res_ps)) {
            if (s->end_ps > u.end_ps) u.end_ps = s->end_ps;
            u.count++;
            u.busy_ps[s->cat] += s->end_ps - s->start_ps;
            if (s->cat != u.cat0) u.pure = 0;
            continue;
        }
        if (b) run_emit(b, &u, &prev_ns, &first, no, w);
        count++;
        run_begin(&u, s);
    }
    if (b) run_emit(b, &u, &prev_ns, &first, no, w);
    return count + 1;
}

static size_t total_runs(const rank_rows *rr, size_t n, int64_t res_ps)
{
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < rr[k].nrows; j++) total += row_runs(&rr[k].rows[j], res_ps, NULL, NULL, NULL);
    return total;
}

static void timeline_json(orr_buf *b, const orr_result *r, const orr_workload *w, const orr_exec_result *x,
                          const size_t *idx, size_t nidx)
{
    rank_rows *rr = orr_xcalloc(nidx ? nidx : 1, sizeof *rr);
    for (size_t k = 0; k < nidx; k++) gather_rank(&rr[k], w, x, idx[k]);
    /* rank rows in rank order */
    for (size_t k = 1; k < nidx; k++)
        for (size_t j = k; j > 0 && rr[j - 1].index > rr[j].index; j--) {
            rank_rows tmp = rr[j];
            rr[j] = rr[j - 1];
            rr[j - 1] = tmp;
        }
    size_t ops = total_runs(rr, nidx, 0);
    int64_t res_ps = 0, end_ps = r->iteration_ps > 0 ? r->iteration_ps : 1;
    if (ops > HTML_MAX_SLICES) { /* the finest resolution that fits, to 1/64 of itself */
        int64_t lo_ps = 0; /* too fine */
        res_ps = end_ps >> 20 > ORR_PS_PER_NS ? end_ps >> 20 : ORR_PS_PER_NS;
        while (total_runs(rr, nidx, res_ps) > HTML_MAX_SLICES && res_ps <= 2 * end_ps) {
            lo_ps = res_ps;
            res_ps *= 2;
        }
        for (int k = 0; k < 6 && res_ps - lo_ps > ORR_PS_PER_NS; k++) {
            int64_t mid_ps = lo_ps + (res_ps - lo_ps) / 2;
            if (total_runs(rr, nidx, mid_ps) > HTML_MAX_SLICES) lo_ps = mid_ps;
            else res_ps = mid_ps;
        }
    }
    orr_buf_printf(b, ",\n\"timeline\":{\"iteration_ns\":%lld,\"resolution_ns\":%lld,\"slices_full\":%zu"
                      ",\"ranks_total\":%zu,\"max_slices\":%d,\"cats\":[",
                   ns_of(r->iteration_ps), ns_of(res_ps), ops, r->nranks, HTML_MAX_SLICES);
    for (int c = 0; c < C_COUNT; c++) {
        char key[32], label[64];
        cat_key(c, key, sizeof key);
        cat_label(c, label, sizeof label);
        orr_buf_printf(b, "%s{\"key\":\"%s\",\"label\":\"%s\"}", c ? "," : "", key, label);
    }
    orr_buf_puts(b, "],\"ranks\":[");
    names_out no;
    memset(&no, 0, sizeof no);
    size_t drawn = 0;
    for (size_t k = 0; k < nidx; k++) {
        const orr_rank *rk = &w->ranks[rr[k].index];
        char label[96];
        rank_label(rk, label, sizeof label);
        orr_buf_puts(b, k ? ",\n{\"label\":" : "\n{\"label\":");
        orr_json_str(b, label);
        orr_buf_printf(b, ",\"gpu\":%u,\"weight\":%u,\"rows\":[", rk->gpu, rk->weight);
        int firstrow = 1;
        for (size_t j = 0; j < rr[k].nrows; j++) {
            const row *rw = &rr[k].rows[j];
            if (j == 0 && !rw->n) continue; /* no host row without host work */
            char name[32];
            if (j == 0) snprintf(name, sizeof name, "host");
            else snprintf(name, sizeof name, "stream %zu", j - 1);
            orr_buf_printf(b, "%s{\"name\":\"%s\",\"s\":[", firstrow ? "" : ",", name);
            drawn += row_runs(rw, res_ps, b, &no, w);
            orr_buf_puts(b, "]}");
            firstrow = 0;
        }
        orr_buf_puts(b, "]}");
    }
    orr_buf_printf(b, "],\"slices\":%zu,\"names_dropped\":%llu,\"names\":[", drawn, (unsigned long long)no.dropped);
    if (no.json.n) orr_buf_puts(b, no.json.s);
    orr_buf_puts(b, "]}");
    orr_buf_free(&no.json);
    orr_map_free(&no.index);
    for (size_t k = 0; k < nidx; k++) {
        for (size_t j = 0; j < rr[k].nrows; j++) free(rr[k].rows[j].s);
        free(rr[k].rows);
    }
    free(rr);
}

/* ---- memory ---- */

typedef struct mem_point {
    int64_t t_ps;
    uint64_t reserved_bytes, allocated_bytes;
    uint64_t cat_bytes[ORR_MEM_CAT_COUNT];
} mem_point;

/* The peak rank's memory after each allocation and free: the tracker's samples (one per ALLOC or
 * FREE that ran, in host order) with the allocated bytes split by category, replayed from the ops. */
static size_t mem_points(const orr_workload *w, const orr_exec_result *x, size_t ri, mem_point **out)
{
    const orr_rank *rk = &w->ranks[ri];
    const orr_mem_rank *m = &x->ranks[ri].mem;
    const orr_op_time *t = x->ranks[ri].t;
    mem_point *p = orr_xmalloc((m->nsamples ? m->nsamples : 1) * sizeof *p);
    uint8_t *buf_cat = orr_xcalloc(rk->nbufs ? rk->nbufs : 1, 1);
    uint64_t *buf_bytes = orr_xcalloc(rk->nbufs ? rk->nbufs : 1, sizeof *buf_bytes);
    uint64_t cat[ORR_MEM_CAT_COUNT] = {0};
    size_t k = 0;
    for (size_t i = 0; t && i < rk->nops && k < m->nsamples; i++) {
        const orr_op *op = &rk->ops[i];
        if ((op->kind != ORR_OP_ALLOC && op->kind != ORR_OP_FREE) || t[i].end_ps < 0 || op->a >= rk->nbufs) continue;
        if (op->kind == ORR_OP_ALLOC) {
            buf_cat[op->a] = op->cls < ORR_MEM_CAT_COUNT ? op->cls : ORR_MEM_OTHER;
            buf_bytes[op->a] = op->bytes;
            cat[buf_cat[op->a]] += op->bytes;
        } else {
            uint64_t *c = &cat[buf_cat[op->a]];
            *c -= *c >= buf_bytes[op->a] ? buf_bytes[op->a] : *c;
        }
        p[k].t_ps = m->samples[k].t_ps;
        p[k].reserved_bytes = m->samples[k].reserved_bytes;
        p[k].allocated_bytes = m->samples[k].allocated_bytes;
        memcpy(p[k].cat_bytes, cat, sizeof cat);
        k++;
    }
    free(buf_cat);
    free(buf_bytes);
    *out = p;
    return k;
}

static void memory_json(orr_buf *b, const orr_result *r, const orr_workload *w, const orr_exec_result *x)
{
    const orr_mem_summary *m = &r->mem;
    if (m->peak_rank >= w->nranks || m->peak_rank >= x->nranks) {
        orr_buf_puts(b, ",\n\"memory\":null");
        return;
    }
    mem_point *p;
    size_t n = mem_points(w, x, m->peak_rank, &p);
    char label[96];
    rank_label(&w->ranks[m->peak_rank], label, sizeof label);
    orr_buf_puts(b, ",\n\"memory\":{\"rank\":");
    orr_json_str(b, label);
    orr_buf_puts(b, ",\"cats\":[");
    for (int c = 0; c < ORR_MEM_CAT_COUNT; c++)
        orr_buf_printf(b, "%s\"%s\"", c ? "," : "", orr_mem_cat_name((orr_mem_cat)c));
    size_t shown = n > HTML_MAX_MEM_POINTS ? HTML_MAX_MEM_POINTS : n;
    orr_buf_printf(b, "],\"samples\":%zu,\"points_drawn\":%zu", n, shown);
    key_u64(b, "capacity_bytes", m->capacity_bytes);
    key_u64(b, "peak_reserved_bytes", x->ranks[m->peak_rank].mem.peak_reserved_bytes);
    key_u64(b, "peak_allocated_bytes", x->ranks[m->peak_rank].mem.peak_allocated_bytes);
    orr_buf_printf(b, ",\"peak_ns\":%lld,\"end_ns\":%lld", ns_of(m->peak_t_ps), ns_of(r->iteration_ps));
    orr_buf_puts(b, ",\"oom\":");
    if (m->oom && m->oom_rank < w->nranks) {
        rank_label(&w->ranks[m->oom_rank], label, sizeof label);
        orr_buf_puts(b, "{\"rank\":");
        orr_json_str(b, label);
        orr_buf_printf(b, ",\"on_this_rank\":%s,\"t_ns\":%lld", m->oom_rank == m->peak_rank ? "true" : "false",
                       ns_of(m->oom_t_ps));
        key_u64(b, "bytes", m->oom_bytes);
        key_u64(b, "in_use_bytes", m->oom_in_use_bytes);
        key_str(b, "allocation", orr_workload_op_name(w, m->oom_rank, m->oom_op));
        orr_buf_puts(b, "}");
    } else {
        orr_buf_puts(b, "null");
    }
    /* points: [t_ns, reserved, cat 0, ..., cat n-1]; each the highest allocated of its bucket of
     * consecutive samples (the peak is always one), with the highest reserved of the bucket */
    orr_buf_puts(b, ",\"points\":[");
    for (size_t k = 0; k < shown; k++) {
        size_t lo = k * n / shown, hi = (k + 1) * n / shown, best = lo;
        uint64_t reserved = 0;
        for (size_t j = lo; j < hi; j++) {
            if (p[j].allocated_bytes > p[best].allocated_bytes) best = j;
            if (p[j].reserved_bytes > reserved) reserved = p[j].reserved_bytes;
        }
        orr_buf_printf(b, "%s[%lld,%llu", k ? ",\n" : "\n", ns_of(p[best].t_ps), (unsigned long long)reserved);
        for (int c = 0; c < ORR_MEM_CAT_COUNT; c++) orr_buf_printf(b, ",%llu", (unsigned long long)p[best].cat_bytes[c]);
        orr_buf_puts(b, "]");
    }
    orr_buf_puts(b, "]}");
    free(p);
}

/* ---- network ---- */

static void link_tracks_json(orr_buf *b, const orr_link_tracks *lt)
{
    if (!lt->nlinks || lt->window_ps <= 0 || !lt->nwindows) {
        orr_buf_puts(b, "null");
        return;
    }
    uint32_t group = (lt->nwindows + HTML_MAX_LINK_WINDOWS - 1) / HTML_MAX_LINK_WINDOWS;
    uint32_t nbins = (lt->nwindows + group - 1) / group;
    orr_buf_printf(b, "{\"window_ns\":%lld,\"end_ns\":%lld,\"links\":[", ns_of(lt->window_ps * group), ns_of(lt->end_ps));
    int first = 1, tier = -1;
    uint32_t in_tier = 0;
    for (uint32_t i = 0; i < lt->nlinks; i++) {
        const orr_link_track *k = &lt->links[i];
        if (k->tier != tier) tier = k->tier, in_tier = 0;
        if (in_tier++ >= HTML_LINKS_PER_TIER) continue;
        char name[96];
        snprintf(name, sizeof name, "link %u node %u -> %u (%s)", k->link, k->src, k->dst, orr_tier_name(k->tier));
        orr_buf_printf(b, "%s{\"name\":\"%s\",\"tier\":\"%s\",\"util\":[", first ? "" : ",\n", name,
                       orr_tier_name(k->tier));
        first = 0;
        for (uint32_t bin = 0; bin < nbins; bin++) {
            double bytes = 0;
            uint32_t w0 = bin * group, w1 = w0 + group < lt->nwindows ? w0 + group : lt->nwindows;
            for (uint32_t wi = w0; wi < w1; wi++) bytes += k->window_bytes[wi];
            int64_t t0_ps = (int64_t)w0 * lt->window_ps, t1_ps = (int64_t)w1 * lt->window_ps;
            if (t1_ps > lt->end_ps) t1_ps = lt->end_ps;
            double util = t1_ps > t0_ps && k->rate_Bps > 0
                              ? bytes / (k->rate_Bps * (double)(t1_ps - t0_ps) / (double)ORR_PS_PER_S) : 0;
            orr_buf_printf(b, "%s%.4f", bin ? "," : "", util);
        }
        orr_buf_puts(b, "]}");
    }
    orr_buf_puts(b, "]}");
}

static void network_json(orr_buf *b, const orr_net_summary *n, const orr_link_tracks *lt)
{
    if (!n->present) {
        orr_buf_puts(b, ",\n\"network\":null");
        return;
    }
    orr_buf_printf(b, ",\n\"network\":{\"backend\":\"%s\"", orr_net_kind_name(n->backend));
    key_u64(b, "flows", n->flows);
    orr_buf_puts(b, ",\"tiers\":[");
    int first = 1;
    for (int t = 0; t < ORR_TIER_COUNT; t++) {
        if (!n->tier[t].links) continue;
        orr_buf_printf(b, "%s{\"tier\":\"%s\",\"links\":%u", first ? "" : ",", orr_tier_name(t), n->tier[t].links);
        key_num(b, "bytes", n->tier[t].bytes);
        key_num(b, "mean_util", n->tier[t].util);
        key_num(b, "bottleneck_frac", n->tier[t].bottleneck_frac);
        orr_buf_puts(b, "}");
        first = 0;
    }
    orr_buf_puts(b, "],\"top\":[");
    for (uint32_t i = 0; i < n->ntop; i++) {
        const orr_link_use *u = &n->top[i];
        orr_buf_printf(b, "%s{\"link\":%u,\"src\":%u,\"dst\":%u,\"tier\":\"%s\"", i ? "," : "", u->link, u->src, u->dst,
                       orr_tier_name(u->tier));
        key_num(b, "bytes", u->bytes);
        key_num(b, "util", u->util);
        key_num(b, "bottleneck_frac", u->bottleneck_frac);
        orr_buf_puts(b, "}");
    }
    orr_buf_puts(b, "],\"tracks\":");
    link_tracks_json(b, lt);
    orr_buf_puts(b, "}");
}

int orr_report_html(const char *path, const orr_result *r, const orr_workload *w, const orr_exec_result *x,
                    const orr_report_info *info, orr_err *err)
{
    if (x->nranks != w->nranks || r->nranks != w->nranks)
        return orr_fail(err, "--html %s: cannot write the report: the run has %zu ranks but the workload %zu", path,
                        x->nranks, w->nranks);
    const char *title = info && info->title ? info->title : "Orrery prediction";
    size_t idx[ORR_RANKS_LISTED];
    size_t nidx = orr_report_ranks_listed(r, w, idx);
    orr_buf d = {0};
    orr_buf_puts(&d, "{\"kind\":\"predict\",\"title\":");
    orr_json_str(&d, title);
    orr_buf_puts(&d, ",\n");
    headline_json(&d, r, w, info);
    breakdown_json(&d, r, w, idx, nidx);
    critical_path_json(&d, r);
    timeline_json(&d, r, w, x, idx, nidx);
    memory_json(&d, r, w, x);
    network_json(&d, &r->net, &x->link_tracks);
    orr_buf_printf(&d, ",\n\"config\":%s}\n", info && info->config_json ? info->config_json : "null");
    int rc = orr_report_html_page(path, "predict", title, &d, err);
    orr_buf_free(&d);
    return rc;
}
