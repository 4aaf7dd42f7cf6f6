/*
 * trace.c - the timeline of a run as a Chrome trace-event JSON file, which ui.perfetto.dev and
 * chrome://tracing open (`orrery predict --trace FILE`). Layout (docs/json.md, "Trace"):
 *
 *   process  pid = simulated rank index, named "<label> (gpu N)"
 *   thread   tid 0 = "host": HOST ops and host-blocking synchronisations
 *            tid s+1 = "stream s": kernels, copies, collectives and p2p ops of device stream s
 *            tid s+1+256*k = "stream s (concurrent k)": ops of stream s that overlap in time the
 *            ones already drawn (the ops of one NCCL group, ORR_OPF_BATCH_NEXT, run together),
 *            because trace viewers require the slices of one thread to nest
 *   slices   complete events ("ph":"X"); a communication op is drawn as its transfer [start,end)
 *            preceded, when it waited, by a "bubble" (p2p) or "wait" (collective) slice
 *            [ready,start). Event records, stream waits, allocations and frees are not drawn.
 *
 *   links    under --net flow / packet, one more process (pid = number of ranks), "network links",
 *            with a counter track per link among the busiest of each tier (orr_link_tracks, by bytes):
 *            "link L node A -> B (tier)" as the text report names links, value "util" = bytes
 *            carried in a fixed window / (raw link rate x window), one sample per window where it
 *            changed and a 0 at the end. The network models accounted the windows as they ran
 *            (linkbins.h), so drawing them changed nothing in the run.
 *
 * Times are integer picoseconds in the run and microseconds in the trace; they are printed as
 * exact decimals with 6 fractional digits by integer arithmetic, so the file is deterministic.
 */
#include "orrery/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_IO_BUFFER_BYTES (4u << 20)
#define ORR_TRACE_MAX_EVENTS 10000000ull /* the default of trace_max_events */
#define STREAMS_PER_RANK 256 /* orr_op.stream is a uint8_t */

/* The thread ids of one stream's lanes: lane k is free again from end_ps[k] on. */
typedef struct stream_lanes {
    int64_t *end_ps;
    size_t n, cap;
} stream_lanes;

/* Writer state: the file, whether an event was written yet, a reused line buffer, the op names
 * already escaped as JSON strings, and the lanes of the rank being written. */
typedef struct trace_writer {
    FILE *f;
    int first;
    orr_buf line;
    char **names_json;
    size_t nnames;
    stream_lanes lanes[STREAMS_PER_RANK];
} trace_writer;

static int tid_of(unsigned stream, size_t lane)
{
    return (int)(1 + stream + STREAMS_PER_RANK * lane);
}

/* Fast appenders for the per-event text (printf costs more than the rest of the writer). */
static void put(orr_buf *b, const char *s)
{
    orr_buf_puts(b, s);
}

/* Appends v in decimal, zero-padded to at least min_digits digits. */
static void put_u64_padded(orr_buf *b, uint64_t v, int min_digits)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v || n < min_digits);
    orr_grow((void **)&b->s, &b->cap, b->n + (size_t)n + 1, 1);
    while (n) b->s[b->n++] = digits[--n];
    b->s[b->n] = 0;
}

static void put_u64(orr_buf *b, uint64_t v)
{
    put_u64_padded(b, v, 1);
}

/* Appends `,"key":v` (key given with its quotes and punctuation, e.g. ",\"layer\":"). */
static void put_key_u64(orr_buf *b, const char *key, uint64_t v)
{
    put(b, key);
    put_u64(b, v);
}

/* Appends key then "s" for a string known to need no escaping (our own enum names). */
static void put_key_name(orr_buf *b, const char *key, const char *s)
{
    put(b, key);
    put(b, "\"");
    put(b, s);
    put(b, "\"");
}

/* Appends a JSON number; whole numbers (FLOP counts, mostly) take the short way. */
static void put_num(orr_buf *b, double v)
{
    if (v >= 0 && v < 9007199254740992.0 && v == (double)(uint64_t)v) put_u64(b, (uint64_t)v);
    else orr_json_num(b, v);
}

/* Appends ps as microseconds with exactly 6 decimals (integer arithmetic: no rounding). */
static void put_us(orr_buf *b, int64_t ps)
{
    if (ps < 0) ps = 0;
    put_u64(b, (uint64_t)(ps / ORR_PS_PER_US));
    put(b, ".");
    put_u64_padded(b, (uint64_t)(ps % ORR_PS_PER_US), 6);
}

/* Starts one trace event in the line buffer (with the separating comma). */
static void event_begin(trace_writer *tw)
{
    tw->line.n = 0;
    orr_buf_puts(&tw->line, tw->first ? "\n" : ",\n");
    tw->first = 0;
}

static void event_end(trace_writer *tw)
{
    fwrite(tw->line.s, 1, tw->line.n, tw->f);
}

/* A metadata event: {"name":what,"ph":"M","pid":..,"tid":..,"args":{"name"|"sort_index":..}}. */
static void meta_name(trace_writer *tw, const char *what, int pid, int tid, const char *name)
{
    event_begin(tw);
    orr_buf_printf(&tw->line, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
                   what, pid, tid);
    orr_json_str(&tw->line, name);
    orr_buf_puts(&tw->line, "}}");
    event_end(tw);
}

static void meta_sort(trace_writer *tw, const char *what, int pid, int tid, long long index)
{
    event_begin(tw);
    orr_buf_printf(&tw->line,
                   "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%lld}}",
                   what, pid, tid, index);
    event_end(tw);
}

/* The escaped name of op (from the workload's name table, else its kind). */
static const char *op_name_json(const trace_writer *tw, const orr_op *op)
{
    static const char *const fallback[ORR_OP_KIND_COUNT] = {
        "\"kernel\"", "\"memcpy\"", "\"memset\"", "\"alloc\"", "\"free\"", "\"event_record\"",
        "\"stream_wait\"", "\"event_sync\"", "\"stream_sync\"", "\"device_sync\"",
        "\"collective\"", "\"send\"", "\"recv\"", "\"host\""};
    if (op->name < tw->nnames) return tw->names_json[op->name];
    return op->kind < ORR_OP_KIND_COUNT ? fallback[op->kind] : "\"op\"";
}

/* Opens a complete event: {"name":<name_json>,"cat":"<cat>","ph":"X","pid":..,"tid":..,"ts":..,"dur":.. */
static void slice_begin(trace_writer *tw, const char *name_json, const char *cat, int pid, int tid,
                        int64_t start_ps, int64_t end_ps)
{
    event_begin(tw);
    orr_buf *b = &tw->line;
    put(b, "{\"name\":");
    put(b, name_json);
    put_key_name(b, ",\"cat\":", cat);
    put_key_u64(b, ",\"ph\":\"X\",\"pid\":", (uint64_t)pid);
    put_key_u64(b, ",\"tid\":", (uint64_t)tid);
    put(b, ",\"ts\":");
    put_us(b, start_ps);
    orr_buf_puts(b, ",\"dur\":");
    put_us(b, end_ps - start_ps);
}

/* The args every op slice has: phase, and layer, micro-batch and model chunk when known. */
static void common_args(orr_buf *b, const orr_op *op)
{
    put_key_name(b, "\"phase\":", orr_phase_name((orr_phase)op->phase));
    if (op->layer != ORR_NO_LAYER) put_key_u64(b, ",\"layer\":", op->layer);
    if (op->mb != ORR_NO_MB) put_key_u64(b, ",\"mb\":", op->mb);
    put_key_u64(b, ",\"chunk\":", op->layer_chunk);
}

/* The category of an op's slice: kernel class, copy kind, collective and role, or p2p and role. */
static void op_category(const orr_op *op, char *cat, size_t n)
{
    const char *role = orr_role_name((orr_comm_role)op->role);
    switch (op->kind) {
    case ORR_OP_KERNEL: snprintf(cat, n, "%s", orr_op_class_name((orr_op_class)op->cls)); break;
    case ORR_OP_MEMCPY:
    case ORR_OP_MEMSET: snprintf(cat, n, "memcpy"); break;
    case ORR_OP_COLL:
        snprintf(cat, n, "%s,%s", orr_coll_kind_name((orr_coll_kind)op->cls), role);
        break;
    case ORR_OP_SEND: snprintf(cat, n, "send,%s", role); break;
    case ORR_OP_RECV: snprintf(cat, n, "recv,%s", role); break;
    case ORR_OP_HOST: snprintf(cat, n, "host"); break;
    default: snprintf(cat, n, "sync"); break;
    }
}

/* The op-specific args of an op's slice (after common_args). */
static void op_args(orr_buf *b, const orr_workload *w, const orr_op *op, const orr_op_time *t)
{
    switch (op->kind) {
    case ORR_OP_KERNEL:
        orr_buf_puts(b, ",\"flops\":");
        put_num(b, op->flops);
        put_key_u64(b, ",\"bytes\":", op->bytes);
        put_key_name(b, ",\"dtype\":", orr_dtype_name((orr_dtype)op->dtype));
        break;
    case ORR_OP_MEMCPY:
    case ORR_OP_MEMSET:
        put_key_u64(b, ",\"bytes\":", op->bytes);
        break;
    case ORR_OP_COLL:
    case ORR_OP_SEND:
    case ORR_OP_RECV:
        put_key_u64(b, ",\"bytes\":", op->bytes);
        put_key_name(b, ",\"role\":", orr_role_name((orr_comm_role)op->role));
        if (op->kind == ORR_OP_COLL) {
            put_key_name(b, ",\"collective\":", orr_coll_kind_name((orr_coll_kind)op->cls));
            put_key_u64(b, ",\"seq\":", op->seq);
            if (op->a < w->ngroups) {
                orr_buf_puts(b, ",\"group\":");
                orr_json_str(b, w->groups[op->a].label);
                put_key_u64(b, ",\"group_size\":", w->groups[op->a].size);
            }
        } else {
            put_key_u64(b, ",\"peer\":", op->a);
            put_key_u64(b, ",\"tag\":", op->seq);
        }
        orr_buf_puts(b, ",\"waited_us\":");
        put_us(b, t->start_ps > t->ready_ps ? t->start_ps - t->ready_ps : 0);
        break;
    default:
        break;
    }
}

/* Draws op (which ran from t->start_ps to t->end_ps) on thread tid of process pid. */
static void op_slice(trace_writer *tw, const orr_workload *w, int pid, int tid, const orr_op *op,
                     const orr_op_time *t)
{
    char cat[64];
    op_category(op, cat, sizeof cat);
    slice_begin(tw, op_name_json(tw, op), cat, pid, tid, t->start_ps, t->end_ps);
    orr_buf_puts(&tw->line, ",\"args\":{");
    common_args(&tw->line, op);
    op_args(&tw->line, w, op, t);
    orr_buf_puts(&tw->line, "}}");
    event_end(tw);
}

/* Draws the waiting part [ready,start) of a communication op, named "bubble" or "wait". */
static void wait_slice(trace_writer *tw, int pid, int tid, const orr_op *op, const orr_op_time *t)
{
    const char *what = op->kind == ORR_OP_COLL ? "wait" : "bubble";
    char name_json[16];
    snprintf(name_json, sizeof name_json, "\"%s\"", what);
    slice_begin(tw, name_json, what, pid, tid, t->ready_ps, t->start_ps);
    orr_buf_puts(&tw->line, ",\"args\":{\"for\":");
    orr_buf_puts(&tw->line, op_name_json(tw, op));
    put_key_name(&tw->line, ",\"role\":", orr_role_name((orr_comm_role)op->role));
    put(&tw->line, "}}");
    event_end(tw);
}

/* The lane of stream for a slice starting at from_ps and ending at to_ps: the first one free by
 * then (a new one if none is), which is then busy until to_ps. */
static size_t take_lane(stream_lanes *sl, int64_t from_ps, int64_t to_ps)
{
    size_t k = 0;
    while (k < sl->n && sl->end_ps[k] > from_ps) k++;
    if (k == sl->n) ORR_PUSH(sl->end_ps, sl->n, sl->cap, to_ps);
    else sl->end_ps[k] = to_ps;
    return k;
}

static int is_device_kind(unsigned kind)
{
    return kind == ORR_OP_KERNEL || kind == ORR_OP_MEMCPY || kind == ORR_OP_MEMSET ||
           kind == ORR_OP_COLL || kind == ORR_OP_SEND || kind == ORR_OP_RECV;
}

static int is_host_sync_kind(unsigned kind)
{
    return kind == ORR_OP_EVENT_SYNC || kind == ORR_OP_STREAM_SYNC || kind == ORR_OP_DEVICE_SYNC;
}

/* Draws one op of rank pid, if it is drawn at all. */
static void write_op(trace_writer *tw, const orr_workload *w, int pid, const orr_op *op,
                     const orr_op_time *t)
{
    if (t->end_ps < 0) return; /* never ran */
    if (op->kind == ORR_OP_HOST || (is_host_sync_kind(op->kind) && t->end_ps > t->start_ps)) {
        op_slice(tw, w, pid, 0, op, t);
        return;
    }
    if (!is_device_kind(op->kind)) return;
    int comm = op->kind == ORR_OP_COLL || op->kind == ORR_OP_SEND || op->kind == ORR_OP_RECV;
    int waited = comm && t->start_ps > t->ready_ps;
    int64_t from_ps = waited ? t->ready_ps : t->start_ps;
    int tid = tid_of(op->stream, take_lane(&tw->lanes[op->stream], from_ps, t->end_ps));
    if (waited) wait_slice(tw, pid, tid, op, t);
    op_slice(tw, w, pid, tid, op, t);
}

/* Names and orders the process of a rank (pid = its index) and its threads (the lanes used). */
static void write_rank_metadata(trace_writer *tw, const orr_rank *rk, int pid)
{
    char name[96];
    /* a simulated rank stands for weight GPUs (symmetry): say so, as the text report does */
    if (rk->weight > 1) snprintf(name, sizeof name, "%s (gpu %u, x%u)", rk->label, rk->gpu, rk->weight);
    else snprintf(name, sizeof name, "%s (gpu %u)", rk->label, rk->gpu);
    meta_name(tw, "process_name", pid, 0, name);
    meta_sort(tw, "process_sort_index", pid, 0, pid);
    meta_name(tw, "thread_name", pid, 0, "host");
    meta_sort(tw, "thread_sort_index", pid, 0, 0);
    for (unsigned s = 0; s < STREAMS_PER_RANK; s++) {
        size_t nlanes = tw->lanes[s].n;
        if (s < rk->nstreams && nlanes == 0) nlanes = 1; /* every stream gets its track */
        for (size_t k = 0; k < nlanes; k++) {
            int tid = tid_of(s, k);
            if (k == 0) snprintf(name, sizeof name, "stream %u", s);
            else snprintf(name, sizeof name, "stream %u (concurrent %zu)", s, k);
            meta_name(tw, "thread_name", pid, tid, name);
            /* streams in order, each stream's extra lanes right below it */
            meta_sort(tw, "thread_sort_index", pid, tid, 1 + (long long)s * 1024 + (long long)k);
        }
    }
}

/* The rank's device memory over time: a counter track "memory" (Perfetto draws one line per
 * argument: allocated and reserved bytes), one sample per allocation or free that changed them. */
static void write_memory_counter(trace_writer *tw, const orr_mem_rank *m, int pid)
{
    for (size_t i = 0; i < m->nsamples; i++) {
        const orr_mem_sample *s = &m->samples[i];
        event_begin(tw);
        orr_buf *b = &tw->line;
        put_key_u64(b, "{\"name\":\"memory\",\"ph\":\"C\",\"pid\":", (uint64_t)pid);
        put(b, ",\"ts\":");
        put_us(b, s->t_ps);
        put_key_u64(b, ",\"args\":{\"allocated_bytes\":", s->allocated_bytes);
        put_key_u64(b, ",\"reserved_bytes\":", s->reserved_bytes);
        put(b, "}}");
        event_end(tw);
    }
}

static void write_rank(trace_writer *tw, const orr_workload *w, const orr_exec_result *x, size_t ri)
{
    const orr_rank *rk = &w->ranks[ri];
    const orr_op_time *t = x->ranks[ri].t;
    for (unsigned s = 0; s < STREAMS_PER_RANK; s++) tw->lanes[s].n = 0;
    for (size_t i = 0; t && i < rk->nops; i++) write_op(tw, w, (int)ri, &rk->ops[i], &t[i]);
    write_memory_counter(tw, &x->ranks[ri].mem, (int)ri);
    write_rank_metadata(tw, rk, (int)ri);
}

/* The link counter tracks of the run (if it kept any) as process pid, "network links". */
static void write_link_tracks(trace_writer *tw, const orr_link_tracks *lt, int pid)
{
    if (!lt->nlinks || lt->window_ps <= 0) return;
    char name[160];
    snprintf(name, sizeof name, "network links: utilisation of the busiest per tier (of raw rate, %lld.%06lld us windows)",
              (long long)(lt->window_ps / ORR_PS_PER_US), (long long)(lt->window_ps % ORR_PS_PER_US));
    meta_name(tw, "process_name", pid, 0, name);
    meta_sort(tw, "process_sort_index", pid, 0, pid);
    orr_buf track = {0};
    for (uint32_t i = 0; i < lt->nlinks; i++) {
        const orr_link_track *k = &lt->links[i];
        snprintf(name, sizeof name, "link %u node %u -> %u (%s)", k->link, k->src, k->dst, orr_tier_name(k->tier));
        track.n = 0;
        orr_json_str(&track, name);
        double last = -1;
        for (uint32_t w = 0; w <= lt->nwindows; w++) {
            int64_t t0_ps = (int64_t)w * lt->window_ps;
            double util = 0; /* after the last window: the track ends at 0 */
            if (w < lt->nwindows) {
                int64_t t1_ps = t0_ps + lt->window_ps < lt->end_ps ? t0_ps + lt->window_ps : lt->end_ps;
                util = k->window_bytes[w] / (k->rate_Bps * (double)(t1_ps - t0_ps) / (double)ORR_PS_PER_S);
            } else {
                t0_ps = lt->end_ps;
            }
            if (util == last && w < lt->nwindows) continue;
            last = util;
            event_begin(tw);
            orr_buf *b = &tw->line;
            put(b, "{\"name\":");
            put(b, track.s);
            put_key_u64(b, ",\"ph\":\"C\",\"pid\":", (uint64_t)pid);
            put(b, ",\"ts\":");
            put_us(b, t0_ps);
            put(b, ",\"args\":{\"util\":");
            put_num(b, util);
            put(b, "}}");
            event_end(tw);
        }
    }
    orr_buf_free(&track);
}

/* Escapes every op name once, so each event only copies it. */
static void escape_names(trace_writer *tw, const orr_workload *w)
{
    tw->nnames = w->nnames;
    tw->names_json = orr_xcalloc(w->nnames ? w->nnames : 1, sizeof *tw->names_json);
    for (size_t i = 0; i < w->nnames; i++) {
        orr_buf b = {0};
        orr_json_str(&b, w->names[i]);
        tw->names_json[i] = b.s;
    }
}

static void writer_free(trace_writer *tw)
{
    for (size_t i = 0; i < tw->nnames; i++) free(tw->names_json[i]);
    free(tw->names_json);
    for (unsigned s = 0; s < STREAMS_PER_RANK; s++) free(tw->lanes[s].end_ps);
    orr_buf_free(&tw->line);
}

/* The most events a trace holds (about 230 bytes each: 10 million is 2.3 GB, about what a trace
 * viewer opens); ORRERY_TRACE_MAX_EVENTS overrides it (docs/json.md "The trace"). */
static uint64_t trace_max_events(void) { return orr_env_limit("ORRERY_TRACE_MAX_EVENTS", ORR_TRACE_MAX_EVENTS); }

int orr_report_trace(const char *path, const orr_workload *w, const orr_exec_result *x,
                     orr_err *err)
{
    if (x->nranks != w->nranks)
        return orr_fail(err, "%s: cannot write trace: the run has %zu ranks but the workload %zu",
                        path, x->nranks, w->nranks);
    /* slices and samples, counted before anything is written */
    uint64_t events = (uint64_t)x->link_tracks.nlinks * x->link_tracks.nwindows, cap = trace_max_events();
    for (size_t i = 0; i < w->nranks; i++) events += w->ranks[i].nops + x->ranks[i].mem.nsamples;
    if (events > cap)
        return orr_fail(err, "--trace %s: the trace would hold about %llu events (%.1f GB), more than %llu (a trace "
                             "viewer's reach; ORRERY_TRACE_MAX_EVENTS raises it): trace the job with a smaller --gbs "
                             "(each micro-batch repeats the pattern) or see it with --html, which stays bounded",
                        path, (unsigned long long)events, (double)events * 230e-9, (unsigned long long)cap);
    FILE *f = fopen(path, "wb");
    if (!f) return orr_fail(err, "%s: cannot write trace: %s", path, strerror(errno));
    char *iobuf = orr_xmalloc(TRACE_IO_BUFFER_BYTES);
    setvbuf(f, iobuf, _IOFBF, TRACE_IO_BUFFER_BYTES);

    trace_writer *tw = orr_xcalloc(1, sizeof *tw);
    tw->f = f;
    tw->first = 1;
    escape_names(tw, w);
    fputs("{\"traceEvents\":[", f);
    for (size_t ri = 0; ri < w->nranks; ri++) write_rank(tw, w, x, ri);
    write_link_tracks(tw, &x->link_tracks, (int)w->nranks);
    fprintf(f, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"orrery\","
               "\"time_unit_of_ts\":\"us\",\"schema_version\":%d}}\n", ORR_JSON_SCHEMA_VERSION);
    writer_free(tw);
    free(tw);

    int write_failed = ferror(f);
    int saved_errno = errno;
    if (fclose(f) != 0 && !write_failed) {
        write_failed = 1;
        saved_errno = errno;
    }
    free(iobuf); /* after fclose: stdio used it until then */
    if (write_failed)
        return orr_fail(err, "%s: error writing trace: %s", path, strerror(saved_errno));
    return 0;
}
