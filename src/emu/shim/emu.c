/*
 * emu.c - the shared core of the emulation libraries: trace writer, host-time accounting, fake
 * device memory, stream/event handles, kernel registry (emu.h).
 *
 * One trace per process, $ORRERY_EMU_DIR/trace-<pid>.txt, written line by line under one lock.
 * A process forked after the libraries were loaded (a launcher that forks its ranks) starts a
 * trace of its own and forgets the parent's device state, as a CUDA context is not inherited;
 * the kernels registered by the parent's constructors stay known.
 */
#define _GNU_SOURCE
#include "emu.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ALIGN_BYTES 512u
#define PAGE_BYTES 4096u

typedef struct alloc_rec {
    uintptr_t addr;
    uint64_t bytes;
    uint32_t buf;
    uint8_t live, backed;
    uint8_t dev;          /* the device it was allocated on */
} alloc_rec;

typedef struct kernel_rec {
    const void *host_fun;
    char *name;
} kernel_rec;

/* The kernel registry is an open-addressing table of records keyed by the host stub's address
 * (PyTorch registers tens of thousands of kernels at load time). A record never moves: its
 * address is the handle __cudaGetKernel gives out. */
#define KERNEL_TABLE_MIN 1024u

typedef struct api_count {
    const char *api;
    uint64_t n;
} api_count;

static struct {
    pthread_mutex_t lock;
    int depth;            /* nesting of emu_enter on the owning thread */
    FILE *f;
    char dir[512];
    pid_t pid;
    /* memory */
    uintptr_t base, top, limit; /* reserved range [base, limit), bump pointer top */
    uint64_t capacity, total;
    uint64_t used[EMU_MAX_DEVICES]; /* allocated, per device (each has the capacity) */
    alloc_rec *allocs;
    size_t nallocs, cap_allocs;
    uint32_t next_buf;
    /* handles */
    unsigned char stream_live[EMU_MAX_STREAMS];
    signed char stream_priority[EMU_MAX_STREAMS];
    unsigned char stream_dev[EMU_MAX_STREAMS]; /* the device a stream was created on */
    signed char event_dev[EMU_MAX_EVENTS];     /* the device of an event's last record, -1: none */
    unsigned char event_live[EMU_MAX_EVENTS];
    int64_t event_ns[EMU_MAX_EVENTS]; /* host time at the event's last record, -1: never recorded */
    int64_t host_ns;                  /* host time recorded so far (the trace's H records) */
    int device, device_count; /* the device set last (by any thread), the devices the process sees */
    int rec_dev;          /* the device of the trace's device records ("D", see emu_rec) */
    int last_error;
    int work_flushed;     /* the first record of device work is on disk (see flush_first_work) */
    int64_t tag;          /* current operator tag from orrery_emu_set_op (-1: none) */
    int64_t ntags;
    /* names interned into the trace */
    char **names;
    size_t nnames, cap_names;
    /* kernels, registered once per process image (kept across fork) */
    kernel_rec **kernels; /* open addressing, cap_kernels a power of two, NULL: empty */
    size_t nkernels, cap_kernels;
    api_count apis[1024];
    size_t napis;
    char warned[32][64];
    size_t nwarned;
    emu_gpu_info gpu;
    /* --live's second run (ORRERY_EMU_LIVE): the simulated time of each of this process's event
     * records per device, by record number, from the first run's simulation */
    int live, live_first;
    long live_rank;                      /* this process's RANK (-1: none), the file's key */
    uint32_t live_n[EMU_MAX_DEVICES];    /* records the first run made on the device */
    int64_t *live_ps[EMU_MAX_DEVICES];   /* [record number - 1]: simulated ps, -1: not in the file */
    int32_t *live_st[EMU_MAX_DEVICES];   /* [record number - 1]: the stream the first run recorded on
                                          * (event indices are not kept: PyTorch's helper threads free
                                          * events at times that differ between runs) */
    uint32_t live_seq[EMU_MAX_DEVICES];  /* records made so far */
    int64_t event_sim_ps[EMU_MAX_EVENTS]; /* simulated time of the event's last record, -1: none */
} E = {.lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, .device_count = 1, .tag = -1};

/* Handle tables: the addresses of their entries are the handles. */
static unsigned char stream_handles[EMU_MAX_STREAMS];
static unsigned char event_handles[EMU_MAX_EVENTS];

static _Thread_local int64_t t_last_leave_ns = -1;
/* The calling thread's current device (cudaSetDevice is per thread), -1: none set, the one set last
 * in the process (so helper threads of a one-GPU process work on its GPU); and the device of the
 * record being written when its caller knows it (emu_rec_device), -1: from the record. */
static _Thread_local int t_device = -1, t_rec_dev = -1;
/* The operator hook's own host time before each operator (orrery_emu_op_begin): t_gap_ns is the host
 * time recorded since the hook's last operator ended, t_credit_ns what is still to be taken off. */
static _Thread_local int64_t t_gap_ns, t_credit_ns;

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

_Noreturn void emu_die(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "orrery emulate: %s\n", msg);
    if (E.f) {
        fprintf(E.f, "X %s\n", msg);
        fflush(E.f);
    }
    _exit(3);
}

int emu_unimplemented(const char *api, int err)
{
    pthread_mutex_lock(&E.lock);
    /* a stable copy: the call counts keep the pointer. The id first: emu_name_id may grow E.names
     * (reading E.names in the same expression could use the old array, or NULL before any name) */
    uint32_t id = emu_name_id(api);
    api = E.names[id];
    pthread_mutex_unlock(&E.lock);
    emu_enter(api);
    emu_rec("U %s", api);
    if (E.f) fflush(E.f); /* the record survives if the program then crashes on the stub's answer */
    emu_warn_once(api, "%s is not implemented by the emulator (the run will not be predicted)", api);
    emu_leave();
    return err;
}

void emu_warn_once(const char *key, const char *fmt, ...)
{
    for (size_t i = 0; i < E.nwarned; i++)
        if (strcmp(E.warned[i], key) == 0) return;
    if (E.nwarned < sizeof E.warned / sizeof E.warned[0])
        snprintf(E.warned[E.nwarned++], sizeof E.warned[0], "%s", key);
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "orrery emulate: warning: %s\n", msg);
}

static void reserve_address_space(void)
{
    /* Fake device addresses come from a reserved, inaccessible range, so they never alias host
     * memory and a host dereference of one faults at once instead of reading garbage. */
    static const uint64_t sizes[] = {16ull << 40, 1ull << 40, 64ull << 30};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        void *p = mmap(NULL, sizes[i], PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            E.base = E.top = (uintptr_t)p;
            E.limit = E.base + sizes[i];
            return;
        }
    }
    emu_die("cannot reserve address space for fake device memory (%s)", strerror(errno));
}

static void open_trace(void)
{
    E.pid = getpid();
    char path[600];
    snprintf(path, sizeof path, "%s/trace-%ld.txt", E.dir, (long)E.pid);
    E.f = fopen(path, "w");
    if (!E.f) emu_die("cannot write trace %s: %s", path, strerror(errno));
    setvbuf(E.f, NULL, _IOFBF, 1 << 20);
    const char *rank = getenv("RANK"), *local = getenv("LOCAL_RANK"), *world = getenv("WORLD_SIZE");
    fprintf(E.f, "orrery-emu-trace 1\nP pid=%ld rank=%s local_rank=%s world=%s capacity=%llu\n", (long)E.pid,
            rank && *rank ? rank : "-", local && *local ? local : "-", world && *world ? world : "-",
            (unsigned long long)E.capacity);
    /* on disk at once: a process that leaves without running its exit handlers (os._exit in a
     * forked child, a shell that execs or _exits) keeps a trace that says it did no GPU work */
    fflush(E.f);
}

/* The first record of device work (an allocation, a kernel, a GEMM) goes to disk at once, so a
 * trace cut short (the process left by _exit or was killed before its buffer was written) still
 * shows that the process used the GPU, and the collator refuses it as truncated instead of taking
 * it for a process that did no GPU work. */
static void flush_first_work(void)
{
    pthread_mutex_lock(&E.lock);
    if (!E.work_flushed && E.f) {
        E.work_flushed = 1;
        fflush(E.f);
    }
    pthread_mutex_unlock(&E.lock);
}

static void reset_process_state(void)
{
    free(E.allocs);
    E.allocs = NULL;
    E.nallocs = E.cap_allocs = 0;
    memset(E.used, 0, sizeof E.used);
    if (E.top > E.base) { /* the parent's backed pages: dropped and fenced */
        madvise((void *)E.base, E.top - E.base, MADV_DONTNEED);
        mprotect((void *)E.base, E.top - E.base, PROT_NONE);
    }
    E.top = E.base;
    E.next_buf = 0;
    memset(E.stream_live, 0, sizeof E.stream_live);
    memset(E.event_live, 0, sizeof E.event_live);
    E.device = 0;
    E.rec_dev = 0;
    t_device = -1;
    E.work_flushed = 0;
    E.last_error = 0;
    E.tag = -1;
    E.ntags = 0;
    E.host_ns = 0;
    memset(E.live_seq, 0, sizeof E.live_seq);
    for (size_t i = 0; i < E.nnames; i++) free(E.names[i]);
    E.nnames = 0;
    E.napis = 0;
    E.nwarned = 0;
}

static void write_summary(void)
{
    if (!E.f) return;
    for (size_t i = 0; i < E.napis; i++) fprintf(E.f, "S %s %llu\n", E.apis[i].api, (unsigned long long)E.apis[i].n);
    fprintf(E.f, "END\n");
    fclose(E.f);
    E.f = NULL;
}

static void at_fork_prepare(void)
{
    pthread_mutex_lock(&E.lock);
    if (E.f) fflush(E.f); /* so the child's copy of the stream holds nothing of the parent's */
}
static void at_fork_parent(void) { pthread_mutex_unlock(&E.lock); }
static void at_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    E.lock = fresh;
    E.depth = 0;
    /* The parent's trace stays the parent's: the inherited stream is empty (flushed before the
     * fork), so closing it writes nothing. */
    if (E.f) fclose(E.f);
    E.f = NULL;
    reset_process_state();
    t_last_leave_ns = -1;
    t_gap_ns = t_credit_ns = 0;
    open_trace();
}

static void live_load(const char *path);

__attribute__((constructor)) static void emu_init(void)
{
    const char *dir = getenv("ORRERY_EMU_DIR");
    if (!dir || !*dir)
        emu_die("ORRERY_EMU_DIR is not set: the emulation libraries run under `orrery emulate -- CMD`");
    snprintf(E.dir, sizeof E.dir, "%s", dir);
    /* The GPU's facts come from the catalog (data/gpus.yaml) through `orrery emulate`; the
     * libraries keep no defaults of their own, so a missing one is refused, not guessed. */
    const char *cap = getenv("ORRERY_EMU_MEM_BYTES"), *gn = getenv("ORRERY_EMU_GPU"), *sms = getenv("ORRERY_EMU_SMS"),
               *cc = getenv("ORRERY_EMU_CC"), *l2 = getenv("ORRERY_EMU_L2_BYTES"),
               *total = getenv("ORRERY_EMU_TOTAL_BYTES"), *tdp = getenv("ORRERY_EMU_TDP_W");
    if (!cap || !*cap || !gn || !*gn || !sms || !*sms || !cc || !*cc || !l2 || !*l2 || !total || !*total || !tdp ||
        !*tdp)
        emu_die("ORRERY_EMU_MEM_BYTES, _TOTAL_BYTES, _GPU, _SMS, _CC, _L2_BYTES and _TDP_W must all be set (run "
                "under `orrery emulate`)");
    E.capacity = strtoull(cap, NULL, 10);
    E.total = strtoull(total, NULL, 10);
    if (E.total < E.capacity) E.total = E.capacity;
    E.gpu.tdp_w = atof(tdp);
    snprintf(E.gpu.name, sizeof E.gpu.name, "NVIDIA %s", gn);
    E.gpu.sms = atoi(sms);
    int ccv = atoi(cc);
    E.gpu.cc_major = ccv / 10;
    E.gpu.cc_minor = ccv % 10;
    E.gpu.l2_bytes = strtoull(l2, NULL, 10);
    if (E.gpu.sms < 1 || E.gpu.cc_major < 7) emu_die("ORRERY_EMU_SMS/ORRERY_EMU_CC: need SMs >= 1 and compute capability >= 7.0");
    const char *nd = getenv("ORRERY_EMU_DEVICES");
    E.device_count = nd && *nd ? atoi(nd) : 1;
    if (E.device_count < 1) E.device_count = 1;
    if (E.device_count > EMU_MAX_DEVICES) E.device_count = EMU_MAX_DEVICES;
    reserve_address_space();
    const char *live = getenv("ORRERY_EMU_LIVE");
    if (live && *live) live_load(live);
    else if (live) E.live_first = 1; /* --live's first run: its event timings are not what it reports */
    open_trace();
    pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
}

__attribute__((destructor)) static void emu_fini(void)
{
    pthread_mutex_lock(&E.lock);
    write_summary();
    pthread_mutex_unlock(&E.lock);
}

void emu_enter(const char *api)
{
    int64_t now = thread_cpu_ns();
    pthread_mutex_lock(&E.lock);
    if (E.depth++ > 0) return; /* a call made from inside another entry point */
    if (t_last_leave_ns >= 0 && now > t_last_leave_ns && E.f) {
        int64_t host = now - t_last_leave_ns, take = host < t_credit_ns ? host : t_credit_ns;
        host -= take;
        t_credit_ns -= take;
        t_gap_ns += host;
        if (host > 0) fprintf(E.f, "H %lld\n", (long long)host);
        if (host > 0) E.host_ns += host;
    }
    size_t i = 0;
    while (i < E.napis && E.apis[i].api != api && strcmp(E.apis[i].api, api) != 0) i++;
    if (i == E.napis && E.napis < sizeof E.apis / sizeof E.apis[0]) E.apis[E.napis++] = (api_count){api, 0};
    if (i < E.napis) E.apis[i].n++;
}

void emu_leave(void)
{
    if (--E.depth == 0) t_last_leave_ns = thread_cpu_ns();
    pthread_mutex_unlock(&E.lock);
}

/* ---- CUDA graphs: stream capture (docs/emulate.md, "CUDA graphs") ----
 *
 * A graph is the trace records its capture would have written, kept in order. While a stream
 * captures, a record of device work on it (K, G, L, C, M, ER, SW, CO, SE, RE) goes into the graph
 * instead of the trace; a stream that waits on an event recorded in the capture joins it, as in
 * CUDA's cross-stream capture. An iteration mark (I) and NCCL's group brackets (GS, GE) during a
 * capture go into the capture begun last: a captured training step ends an iteration at each
 * launch, and a captured group of sends and receives is replayed as a group. Every other record
 * (memory, names, operator tags, host time) is written at once: memory allocated during capture
 * stays allocated. A launch writes the graph's records to the trace with the capture's origin
 * stream replaced by the launching stream. */

struct emu_graph {
    char *buf; /* the records, each ending in '\n' */
    size_t len, cap, n;
    int origin;    /* the stream the capture began on, -1: a graph not made by capture */
    int refs;      /* the graph handle and each executable made from it */
    int capturing; /* still being captured */
    unsigned long long id;
};

static emu_graph *cap_stream[EMU_MAX_STREAMS]; /* the graph a stream captures into, or NULL */
static emu_graph *cap_event[EMU_MAX_EVENTS];   /* the capture an event was last recorded in */
static unsigned long long cap_ids;
static emu_graph *cap_latest; /* the capture begun last of those under way: takes iteration marks */

/* The stream of a record of device work, and where its field lies in the line; -1: no stream. */
static int record_stream(const char *line, size_t *off, size_t *len)
{
    size_t t = strcspn(line, " ");
    int field;
    if ((t == 1 && strchr("KGCML", line[0])) || (t == 2 && (!strncmp(line, "SW", 2) || !strncmp(line, "CO", 2) ||
                                                           !strncmp(line, "SE", 2) || !strncmp(line, "RE", 2))))
        field = 1;
    else if (t == 2 && !strncmp(line, "ER", 2))
        field = 2;
    else
        return -1;
    const char *p = line;
    for (int i = 0; i < field; i++) {
        p += strcspn(p, " ");
        if (*p != ' ') return -1;
        p++;
    }
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 0 || v >= EMU_MAX_STREAMS) return -1;
    *off = (size_t)(p - line);
    *len = (size_t)(end - p);
    return (int)v;
}

/* The event of an ER or SW record, -1 for others. */
static int record_event(const char *line)
{
    int a, b;
    if (sscanf(line, "ER %d %d", &a, &b) == 2) return a;
    if (sscanf(line, "SW %d %d", &a, &b) == 2) return b;
    return -1;
}

static void graph_append(emu_graph *g, const char *line, size_t l)
{
    if (g->n >= EMU_GRAPH_MAX_RECORDS)
        emu_die("a CUDA graph capture recorded more than %d operations (EMU_GRAPH_MAX_RECORDS in src/emu/shim/emu.h), "
                "the most one graph may hold under emulation", EMU_GRAPH_MAX_RECORDS);
    if (g->len + l + 1 > g->cap) {
        size_t cap = g->cap ? g->cap : 4096;
        while (cap < g->len + l + 1) cap *= 2;
        char *b = realloc(g->buf, cap);
        if (!b) emu_die("out of host memory");
        g->buf = b, g->cap = cap;
    }
    memcpy(g->buf + g->len, line, l);
    g->buf[g->len + l] = '\n';
    g->len += l + 1;
    g->n++;
}

/* Routes one formatted record: into the graph its stream captures into (1), or not (0). */
static int capture_record(const char *line, size_t l)
{
    size_t off, len;
    if (!cap_latest) return 0; /* no capture under way (and no event recorded in one) */
    if (!strcmp(line, "I") || !strcmp(line, "GS") || !strcmp(line, "GE")) {
        graph_append(cap_latest, line, l);
        return 1;
    }
    int s = record_stream(line, &off, &len);
    if (s < 0) return 0;
    int ev = record_event(line);
    emu_graph *g = cap_stream[s];
    if (!g && ev >= 0 && ev < EMU_MAX_EVENTS && line[0] == 'S' && cap_event[ev] && cap_event[ev]->capturing)
        g = cap_stream[s] = cap_event[ev]; /* a wait on a captured event: s joins the capture */
    if (ev >= 0 && ev < EMU_MAX_EVENTS && line[0] == 'E') cap_event[ev] = g;
    if (!g) return 0;
    graph_append(g, line, l);
    return 1;
}

/* The device a record of device work belongs to, -1 for the others (names, tags, host time,
 * iteration marks, NCCL group brackets: the process's). Work on a stream is its device's (the
 * default stream: the current device's); memory, syncs of the device and stream creation are the
 * current device's; a free, an event sync and NCCL's records say theirs (emu_rec_device). */
static int record_device(const char *line)
{
    if (t_rec_dev >= 0) return t_rec_dev;
    size_t off, len, t = strcspn(line, " ");
    int s = record_stream(line, &off, &len);
    if (s < 0 && t == 2 && !strncmp(line, "SS", 2)) s = atoi(line + 3);
    if (s > 0 && s < EMU_MAX_STREAMS) return E.stream_dev[s];
    if (s == 0 || (t == 1 && line[0] == 'A') || (t == 3 && !strncmp(line, "OOM", 3)) ||
        (t == 2 && (!strncmp(line, "DS", 2) || !strncmp(line, "SC", 2) || !strncmp(line, "NC", 2))))
        return emu_device();
    return -1;
}

void emu_rec_device(int dev) { t_rec_dev = dev; }

/* --live: an event record was written (on device E.rec_dev): the next record number there, whose
 * simulated time the event now has. More records than the first run made: the program is not the
 * same twice, and no time can be given. */
static void live_record(const char *args)
{
    int ei = -1, si = -1, dev = E.rec_dev;
    if (sscanf(args, "%d %d", &ei, &si) != 2 || ei < 0 || ei >= EMU_MAX_EVENTS || dev < 0 || dev >= EMU_MAX_DEVICES) return;
    uint32_t seq = ++E.live_seq[dev];
    char who[40];
    if (E.live_rank < 0) snprintf(who, sizeof who, "this process (no RANK)");
    else snprintf(who, sizeof who, "this process (RANK %ld)", E.live_rank);
    if (seq > E.live_n[dev])
        emu_die("--live: %s made %u event records on device %d in the first run and more in the second: the "
                "program's event records differ between runs, and --live needs the same sequence", who,
                E.live_n[dev], dev);
    if (E.live_st[dev][seq - 1] != si)
        emu_die("--live: %s's event record %u on device %d was on stream %d in the first run and on stream %d in the "
                "second: the program's event records differ between runs, and --live needs the same sequence", who,
                seq, dev, E.live_st[dev][seq - 1], si);
    E.event_sim_ps[ei] = E.live_ps[dev][seq - 1];
}

/* --live: reads the first run's times (orr_emu_live_write's file) for this process's RANK. */
static void live_load(const char *path)
{
    const char *rank = getenv("RANK");
    char *end = NULL;
    E.live_rank = rank && *rank ? strtol(rank, &end, 10) : -1;
    if (!rank || !*rank || *end || E.live_rank < 0) E.live_rank = -1;
    FILE *f = fopen(path, "r");
    if (!f) emu_die("--live: cannot read the first run's event times %s: %s", path, strerror(errno));
    char line[256];
    if (!fgets(line, sizeof line, f) || strcmp(line, "orrery-live 1\n") != 0)
        emu_die("--live: %s is not a file of event times (orrery-live 1)", path);
    for (int i = 0; i < EMU_MAX_EVENTS; i++) E.event_sim_ps[i] = -1;
    while (fgets(line, sizeof line, f)) {
        long r;
        unsigned d, n;
        long long ps;
        int ev;
        if (line[0] == 'N' && sscanf(line + 1, "%ld %u %u", &r, &d, &n) == 3) {
            if (r != E.live_rank || d >= EMU_MAX_DEVICES || n == 0 || n > (1u << 28)) continue;
            E.live_n[d] = n;
            free(E.live_ps[d]);
            free(E.live_st[d]);
            E.live_ps[d] = malloc(n * sizeof *E.live_ps[d]);
            E.live_st[d] = malloc(n * sizeof *E.live_st[d]);
            if (!E.live_ps[d] || !E.live_st[d]) emu_die("--live: out of memory for %u event times", n);
            for (unsigned i = 0; i < n; i++) E.live_ps[d][i] = -1, E.live_st[d][i] = -1;
        } else if (line[0] == 'E' && sscanf(line + 1, "%ld %u %u %lld %d", &r, &d, &n, &ps, &ev) == 5) {
            if (r == E.live_rank && d < EMU_MAX_DEVICES && n >= 1 && n <= E.live_n[d])
                E.live_ps[d][n - 1] = ps, E.live_st[d][n - 1] = ev;
        } else {
            emu_die("--live: %s: unreadable line \"%.60s\"", path, line);
        }
    }
    fclose(f);
    E.live = 1;
}

int emu_live(void) { return E.live; }

int emu_live_first(void) { return E.live_first; }

double emu_event_live_ms(int a, int b)
{
    if (a < 0 || b < 0 || a >= EMU_MAX_EVENTS || b >= EMU_MAX_EVENTS || E.event_sim_ps[a] < 0 || E.event_sim_ps[b] < 0)
        return NAN;
    return (double)(E.event_sim_ps[b] - E.event_sim_ps[a]) / 1e9;
}

void emu_rec(const char *fmt, ...)
{
    if (!E.f) return;
    pthread_mutex_lock(&E.lock);
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int l = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (l >= 0 && (size_t)l < sizeof line && capture_record(line, (size_t)l)) {
        pthread_mutex_unlock(&E.lock);
        return;
    }
    if (l >= 0 && (size_t)l < sizeof line) {
        int dev = record_device(line); /* the records that follow "D dev" are that device's */
        if (dev >= 0 && dev != E.rec_dev) fprintf(E.f, "D %d\n", E.rec_dev = dev);
        fwrite(line, 1, (size_t)l, E.f);
        if (E.live && line[0] == 'E' && line[1] == 'R' && line[2] == ' ') live_record(line + 3);
    } else { /* a longer line (a long name) is never device work */
        va_start(ap, fmt);
        vfprintf(E.f, fmt, ap);
        va_end(ap);
    }
    fputc('\n', E.f);
    pthread_mutex_unlock(&E.lock);
}

/* After a capture ends: the capture still under way begun last, if any. */
static void latest_capture(void)
{
    cap_latest = NULL;
    for (int i = 0; i < EMU_MAX_STREAMS; i++)
        if (cap_stream[i] && cap_stream[i]->capturing && (!cap_latest || cap_stream[i]->id > cap_latest->id))
            cap_latest = cap_stream[i];
}

int emu_capture_begin(int stream, emu_graph *into)
{
    pthread_mutex_lock(&E.lock);
    int rc = -1;
    if (stream > 0 && stream < EMU_MAX_STREAMS && !cap_stream[stream]) {
        emu_graph *g = into;
        if (!g) {
            g = calloc(1, sizeof *g);
            if (!g) emu_die("out of host memory");
            g->origin = stream;
            g->refs = 1;
        } else if (g->refs > 1) {
            emu_die("cudaStreamBeginCaptureToGraph: capturing into a graph already instantiated is not modelled "
                    "(its executable graphs would see the new work)");
        } else if (g->origin < 0) {
            g->origin = stream;
        }
        g->capturing = 1;
        g->id = ++cap_ids;
        cap_stream[stream] = g;
        cap_latest = g;
        rc = 0;
    }
    pthread_mutex_unlock(&E.lock);
    return rc;
}

emu_graph *emu_capture_end(int stream)
{
    pthread_mutex_lock(&E.lock);
    emu_graph *g = stream >= 0 && stream < EMU_MAX_STREAMS ? cap_stream[stream] : NULL;
    if (g && g->origin != stream) g = NULL; /* only the stream that began a capture ends it */
    if (g) {
        g->capturing = 0;
        for (int i = 0; i < EMU_MAX_STREAMS; i++)
            if (cap_stream[i] == g) cap_stream[i] = NULL;
        for (int i = 0; i < EMU_MAX_EVENTS; i++)
            if (cap_event[i] == g) cap_event[i] = NULL;
        latest_capture();
    }
    pthread_mutex_unlock(&E.lock);
    return g;
}

emu_graph *emu_capture_graph(int stream, unsigned long long *id)
{
    pthread_mutex_lock(&E.lock);
    emu_graph *g = stream >= 0 && stream < EMU_MAX_STREAMS ? cap_stream[stream] : NULL;
    if (id) *id = g ? g->id : 0;
    pthread_mutex_unlock(&E.lock);
    return g;
}

emu_graph *emu_graph_new(void)
{
    emu_graph *g = calloc(1, sizeof *g);
    if (!g) emu_die("out of host memory");
    g->origin = -1;
    g->refs = 1;
    return g;
}

void emu_graph_ref(emu_graph *g)
{
    pthread_mutex_lock(&E.lock);
    g->refs++;
    pthread_mutex_unlock(&E.lock);
}

void emu_graph_unref(emu_graph *g)
{
    pthread_mutex_lock(&E.lock);
    int last = --g->refs == 0;
    if (last) {
        for (int i = 0; i < EMU_MAX_STREAMS; i++)
            if (cap_stream[i] == g) cap_stream[i] = NULL;
        for (int i = 0; i < EMU_MAX_EVENTS; i++)
            if (cap_event[i] == g) cap_event[i] = NULL;
        if (cap_latest == g) latest_capture();
        free(g->buf);
        free(g);
    }
    pthread_mutex_unlock(&E.lock);
}

size_t emu_graph_nodes(const emu_graph *g) { return g->n; }

const char *emu_graph_next(const emu_graph *g, const char *prev, size_t *len)
{
    const char *p = prev ? prev + strcspn(prev, "\n") + 1 : g->buf;
    if (!p || p >= g->buf + g->len) return NULL;
    *len = strcspn(p, "\n");
    return p;
}

int emu_graph_launch(const emu_graph *g, int stream)
{
    pthread_mutex_lock(&E.lock);
    if (g->capturing) {
        pthread_mutex_unlock(&E.lock);
        return -1;
    }
    for (const char *p = g->buf, *end = g->buf + g->len; p < end;) {
        size_t l = (size_t)(strchr(p, '\n') - p), off, len;
        char line[1024];
        if (l >= sizeof line) emu_die("a CUDA graph record is longer than %zu bytes", sizeof line);
        memcpy(line, p, l);
        line[l] = 0;
        int s = record_stream(line, &off, &len);
        if (s >= 0 && s == g->origin)
            emu_rec("%.*s%d%s", (int)off, line, stream, line + off + len);
        else
            emu_rec("%s", line);
        p += l + 1;
    }
    pthread_mutex_unlock(&E.lock);
    if (g->n) flush_first_work();
    return 0;
}

const char *emu_dir(void) { return E.dir; }

/* ---- memory ---- */

int emu_malloc(uint64_t bytes, uintptr_t *addr)
{
    pthread_mutex_lock(&E.lock);
    int backed = bytes <= EMU_BACKED_MAX_BYTES;
    uint64_t align = backed ? PAGE_BYTES : ALIGN_BYTES; /* a backed range is whole pages */
    uint64_t rounded = (bytes + align - 1) / align * align;
    if (rounded == 0) rounded = align;
    E.top = (E.top + align - 1) / align * align;
    int dev = emu_device();
    if (E.used[dev] + bytes > E.capacity) {
        emu_rec("OOM %llu %llu", (unsigned long long)bytes, (unsigned long long)E.used[dev]);
        flush_first_work();
        pthread_mutex_unlock(&E.lock);
        return -1;
    }
    if (E.top + rounded > E.limit || E.top + rounded < E.top)
        emu_die("fake device address space exhausted after %llu bytes of allocations",
                (unsigned long long)(E.top - E.base));
    if (E.nallocs == E.cap_allocs) {
        E.cap_allocs = E.cap_allocs ? 2 * E.cap_allocs : 256;
        E.allocs = realloc(E.allocs, E.cap_allocs * sizeof *E.allocs);
        if (!E.allocs) emu_die("out of host memory");
    }
    alloc_rec *a = &E.allocs[E.nallocs++];
    a->addr = E.top;
    a->bytes = bytes;
    a->buf = E.next_buf++;
    a->live = 1;
    a->backed = backed;
    a->dev = (uint8_t)dev;
    if (backed && mprotect((void *)E.top, rounded, PROT_READ | PROT_WRITE) != 0)
        emu_die("cannot back a device allocation of %llu bytes with host memory: %s", (unsigned long long)bytes,
                strerror(errno));
    E.top += rounded;
    E.used[dev] += bytes;
    *addr = a->addr;
    emu_rec("A %u %llu", a->buf, (unsigned long long)bytes);
    flush_first_work();
    pthread_mutex_unlock(&E.lock);
    return 0;
}

/* Allocations are handed out at increasing addresses, so the table is sorted by address. */
static alloc_rec *find_alloc(uintptr_t addr)
{
    size_t lo = 0, hi = E.nallocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (E.allocs[mid].addr < addr) lo = mid + 1;
        else hi = mid;
    }
    return lo < E.nallocs && E.allocs[lo].addr == addr ? &E.allocs[lo] : NULL;
}

int emu_free(uintptr_t addr)
{
    pthread_mutex_lock(&E.lock);
    alloc_rec *a = find_alloc(addr);
    if (!a || !a->live) {
        pthread_mutex_unlock(&E.lock);
        return -1;
    }
    a->live = 0;
    E.used[a->dev] -= a->bytes;
    if (a->backed) { /* addresses are never reused: give the pages back and fence the range again */
        size_t len = (a->bytes + PAGE_BYTES - 1) / PAGE_BYTES * PAGE_BYTES;
        madvise((void *)a->addr, len ? len : PAGE_BYTES, MADV_DONTNEED);
        mprotect((void *)a->addr, len ? len : PAGE_BYTES, PROT_NONE);
    }
    emu_rec_device(a->dev);
    emu_rec("F %u", a->buf);
    emu_rec_device(-1);
    pthread_mutex_unlock(&E.lock);
    return 0;
}

int emu_is_device_ptr(uintptr_t addr) { return addr >= E.base && addr < E.top; }

/* The live allocation holding [addr, addr + bytes), or NULL (a freed or foreign range). */
static const alloc_rec *live_range(uintptr_t addr, size_t bytes)
{
    size_t lo = 0, hi = E.nallocs; /* the last allocation starting at or below addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (E.allocs[mid].addr <= addr) lo = mid + 1;
        else hi = mid;
    }
    const alloc_rec *a = lo ? &E.allocs[lo - 1] : NULL;
    return a && a->live && addr - a->addr <= a->bytes && bytes <= a->bytes - (addr - a->addr) ? a : NULL;
}

void *emu_backed(uintptr_t addr, size_t bytes)
{
    if (!emu_is_device_ptr(addr)) return NULL;
    pthread_mutex_lock(&E.lock);
    const alloc_rec *a = live_range(addr, bytes);
    int ok = a && a->backed;
    pthread_mutex_unlock(&E.lock);
    return ok ? (void *)addr : NULL;
}

int emu_is_live(uintptr_t addr, size_t bytes)
{
    if (!emu_is_device_ptr(addr)) return 0;
    pthread_mutex_lock(&E.lock);
    int ok = live_range(addr, bytes) != NULL;
    pthread_mutex_unlock(&E.lock);
    return ok;
}
int emu_ptr_device(uintptr_t addr)
{
    if (!emu_is_device_ptr(addr)) return -1;
    pthread_mutex_lock(&E.lock);
    size_t lo = 0, hi = E.nallocs; /* the last allocation starting at or below addr, live or not */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (E.allocs[mid].addr <= addr) lo = mid + 1;
        else hi = mid;
    }
    int dev = lo ? E.allocs[lo - 1].dev : -1;
    pthread_mutex_unlock(&E.lock);
    return dev;
}
uint64_t emu_mem_capacity(void) { return E.capacity; }
uint64_t emu_mem_total(void) { return E.total; }
uint64_t emu_mem_used(void) { return E.used[emu_device()]; }
uint64_t emu_mem_used_on(int dev) { return dev >= 0 && dev < EMU_MAX_DEVICES ? E.used[dev] : 0; }

/* ---- streams and events ---- */

void *emu_stream_create(int priority)
{
    pthread_mutex_lock(&E.lock);
    for (int i = 1; i < EMU_MAX_STREAMS; i++) {
        if (E.stream_live[i]) continue;
        E.stream_live[i] = 1;
        E.stream_dev[i] = (unsigned char)emu_device();
        E.stream_priority[i] = (signed char)(priority < -100 ? -100 : priority > 100 ? 100 : priority);
        emu_rec("SC %d %d", i, priority);
        pthread_mutex_unlock(&E.lock);
        return &stream_handles[i];
    }
    emu_die("more than %d live streams in one process", EMU_MAX_STREAMS - 1);
}

int emu_stream_index(const void *handle)
{
    uintptr_t h = (uintptr_t)handle;
    if (h <= 2) return 0; /* NULL, cudaStreamLegacy, cudaStreamPerThread: the default stream */
    uintptr_t b = (uintptr_t)stream_handles;
    if (h < b || h >= b + EMU_MAX_STREAMS) return -1;
    int i = (int)(h - b);
    return E.stream_live[i] ? i : -1;
}

int emu_stream_device(int index)
{
    return index > 0 && index < EMU_MAX_STREAMS ? E.stream_dev[index] : emu_device(); /* 0: the current device's */
}

int emu_stream_priority(int index) { return index > 0 && index < EMU_MAX_STREAMS ? E.stream_priority[index] : 0; }

void emu_stream_destroy(const void *handle)
{
    int i = emu_stream_index(handle);
    if (i > 0) E.stream_live[i] = 0;
}

void *emu_event_create(void)
{
    pthread_mutex_lock(&E.lock);
    for (int i = 0; i < EMU_MAX_EVENTS; i++) {
        if (E.event_live[i]) continue;
        E.event_live[i] = 1;
        E.event_ns[i] = -1;
        E.event_dev[i] = -1;
        pthread_mutex_unlock(&E.lock);
        return &event_handles[i];
    }
    emu_die("more than %d live events in one process", EMU_MAX_EVENTS);
}

int emu_event_index(const void *handle)
{
    uintptr_t h = (uintptr_t)handle, b = (uintptr_t)event_handles;
    if (h < b || h >= b + EMU_MAX_EVENTS) return -1;
    int i = (int)(h - b);
    return E.event_live[i] ? i : -1;
}

void emu_event_stamp(int index, int dev)
{
    pthread_mutex_lock(&E.lock);
    if (index >= 0 && index < EMU_MAX_EVENTS) E.event_ns[index] = E.host_ns, E.event_dev[index] = (signed char)dev;
    pthread_mutex_unlock(&E.lock);
}

int emu_event_device(int index) { return index >= 0 && index < EMU_MAX_EVENTS ? E.event_dev[index] : -1; }

double emu_event_elapsed_ms(int a, int b)
{
    if (a < 0 || b < 0 || a >= EMU_MAX_EVENTS || b >= EMU_MAX_EVENTS || E.event_ns[a] < 0 || E.event_ns[b] < 0)
        return -1;
    return (double)(E.event_ns[b] - E.event_ns[a]) / 1e6;
}

void emu_event_destroy(const void *handle)
{
    int i = emu_event_index(handle);
    if (i >= 0) E.event_live[i] = 0;
}

/* ---- kernels and names ---- */

static size_t kernel_slot(kernel_rec *const *t, size_t cap, const void *host_fun)
{
    uint64_t h = (uint64_t)(uintptr_t)host_fun * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 32) & (cap - 1);
    while (t[i] && t[i]->host_fun != host_fun) i = (i + 1) & (cap - 1);
    return i;
}

void emu_kernel_register(const void *host_fun, const char *name)
{
    if (!host_fun) return;
    pthread_mutex_lock(&E.lock);
    if (2 * (E.nkernels + 1) > E.cap_kernels) {
        size_t cap = E.cap_kernels ? 2 * E.cap_kernels : KERNEL_TABLE_MIN;
        kernel_rec **t = calloc(cap, sizeof *t);
        if (!t) emu_die("out of host memory");
        for (size_t i = 0; i < E.cap_kernels; i++)
            if (E.kernels[i]) t[kernel_slot(t, cap, E.kernels[i]->host_fun)] = E.kernels[i];
        free(E.kernels);
        E.kernels = t;
        E.cap_kernels = cap;
    }
    kernel_rec **slot = &E.kernels[kernel_slot(E.kernels, E.cap_kernels, host_fun)];
    if (!*slot) {
        kernel_rec *k = malloc(sizeof *k);
        if (!k || !(k->name = strdup(name ? name : "?"))) emu_die("out of host memory");
        k->host_fun = host_fun;
        *slot = k;
        E.nkernels++;
    }
    pthread_mutex_unlock(&E.lock);
}

const void *emu_kernel_lookup(const void *host_fun)
{
    const void *k = NULL;
    pthread_mutex_lock(&E.lock);
    if (host_fun && E.cap_kernels) k = E.kernels[kernel_slot(E.kernels, E.cap_kernels, host_fun)];
    pthread_mutex_unlock(&E.lock);
    return k;
}

const char *emu_kernel_name(const void *kernel) { return kernel ? ((const kernel_rec *)kernel)->name : "?"; }

uint32_t emu_name_id(const char *name)
{
    pthread_mutex_lock(&E.lock);
    size_t i = 0;
    while (i < E.nnames && strcmp(E.names[i], name) != 0) i++;
    if (i == E.nnames) {
        if (E.nnames == E.cap_names) {
            E.cap_names = E.cap_names ? 2 * E.cap_names : 64;
            E.names = realloc(E.names, E.cap_names * sizeof *E.names);
            if (!E.names) emu_die("out of host memory");
        }
        E.names[E.nnames++] = strdup(name);
        char clean[EMU_NAME_MAX + 1];
        emu_trace_name(name, clean);
        emu_rec("N %zu %s", i, clean);
    }
    pthread_mutex_unlock(&E.lock);
    return (uint32_t)i;
}

void emu_launch(const char *name, const unsigned grid[3], const unsigned block[3], size_t shmem, int stream)
{
    uint32_t id = emu_name_id(name);
    emu_rec("K %d %u %u %u %u %u %u %u %zu %lld", stream, id, grid[0], grid[1], grid[2], block[0], block[1],
            block[2], shmem, (long long)E.tag);
    flush_first_work();
}

int emu_gemm(int stream, long long m, long long n, long long k, long long batch, int dtype, int tf32, int ta, int tb)
{
    const char *name;
    switch (dtype) { /* cudaDataType_t (library_types.h) */
    case 0: name = tf32 ? "tf32" : "fp32"; break; /* CUDA_R_32F */
    case 2: name = "fp16"; break;                 /* CUDA_R_16F */
    case 14: name = "bf16"; break;                /* CUDA_R_16BF */
    case 28: case 29: name = "fp8"; break;        /* CUDA_R_8F_E4M3, _E5M2 */
    default: {
        char what[64];
        snprintf(what, sizeof what, "GEMM(cudaDataType_t=%d)", dtype);
        emu_unimplemented(what, 0);
        return -1;
    }
    }
    if (m < 0 || n < 0 || k < 0 || batch < 0 || m > UINT32_MAX || n > UINT32_MAX || k > UINT32_MAX || batch > UINT32_MAX)
        return -1;
    if (m == 0 || n == 0 || batch == 0) return 0; /* nothing to do, as cuBLAS does */
    emu_rec("G %d %lld %lld %lld %lld %s %c %c", stream, m, n, k, batch, name, "ntc"[ta >= 0 && ta <= 2 ? ta : 0],
            "ntc"[tb >= 0 && tb <= 2 ? tb : 0]);
    flush_first_work();
    return 0;
}

void emu_lib_op(int stream, const char *name, const char *cls, const char *dtype, const uint32_t dims[4], double flops,
                double bytes)
{
    uint32_t id = emu_name_id(name);
    emu_rec("L %d %u %s %s %u %u %u %u %.17g %.17g %lld", stream, id, cls, dtype, dims[0], dims[1], dims[2], dims[3],
            flops, bytes, (long long)E.tag);
    flush_first_work();
}

static void set_op_locked(const char *name, const char *cls, double flops, double bytes);

/* The operator hook: a framework (or a test program) names the operator whose kernels follow,
 * with its class and the FLOPs and bytes of the whole operator; the collator divides them over
 * the kernels launched until the next call. cls: gemm, attention_fwd, attention_bwd,
 * elementwise, reduction, norm, optimizer, other. A NULL name ends the operator. Looked up with
 * dlsym so that a program runs unchanged on a real GPU where the symbol does not exist. */
EMU_EXPORT void orrery_emu_set_op(const char *name, const char *cls, double flops, double bytes)
{
    emu_enter("orrery_emu_set_op"); /* closes the program's host interval */
    set_op_locked(name, cls, flops, bytes);
    emu_leave();
}

/* orrery_emu_set_op for a hook that knows its own cost: hook_ns of the host time since the hook's
 * previous operator ended was spent in the hook (the PyTorch dispatch mode's measured overhead of
 * entering an operator), not in the program, and is not counted (at most that gap). */
EMU_EXPORT void orrery_emu_op_begin(const char *name, const char *cls, double hook_ns)
{
    if (t_last_leave_ns >= 0 && hook_ns > 0) {
        int64_t gap = t_gap_ns + (thread_cpu_ns() - t_last_leave_ns), d = (int64_t)hook_ns;
        t_credit_ns += d < gap ? d : gap;
    }
    emu_enter("orrery_emu_op_begin");
    set_op_locked(name, cls, 0, 0);
    emu_leave();
}

static void set_op_locked(const char *name, const char *cls, double flops, double bytes)
{
    if (!name) {
        E.tag = -1;
    } else {
        E.tag = E.ntags++;
        uint32_t id = emu_name_id(name);
        char c[32];
        snprintf(c, sizeof c, "%s", cls && *cls ? cls : "other");
        for (char *p = c; *p; p++)
            if (*p == ' ') *p = '_';
        emu_rec("T %lld %u %s %.17g %.17g", (long long)E.tag, id, c, flops, bytes);
    }
}

/* Ends the current operator, giving its FLOPs and bytes when they are known only once it has run
 * (the PyTorch hook computes them from the op's outputs): "TC tag flops bytes". The host time
 * since the op's last CUDA call is not counted: it is the hook's own bookkeeping (sizing the op's
 * tensors, its FLOP formula), most of a small op's host time under the hook, not the program's. */
EMU_EXPORT void orrery_emu_op_end(double flops, double bytes)
{
    pthread_mutex_lock(&E.lock);
    if (E.tag >= 0 && flops >= 0 && bytes >= 0)
        emu_rec("TC %lld %.17g %.17g", (long long)E.tag, flops, bytes);
    E.tag = -1;
    pthread_mutex_unlock(&E.lock);
    t_last_leave_ns = thread_cpu_ns();
    t_gap_ns = 0;
}

/* The PyTorch hook's access to backed device memory (small allocations, emu_backed), recording
 * nothing: it computes operations on small tensors on the host (docs/emulate.md, "Values read
 * back") and writes their results where the program will read them. Return 0, or -1 when
 * [addr, addr + bytes) is not backed. */
EMU_EXPORT int orrery_emu_peek(uintptr_t addr, void *dst, size_t bytes)
{
    const void *b = emu_backed(addr, bytes);
    if (!b || !dst) return -1;
    memcpy(dst, b, bytes);
    return 0;
}

EMU_EXPORT int orrery_emu_poke(uintptr_t addr, const void *src, size_t bytes)
{
    void *b = emu_backed(addr, bytes);
    if (!b || !src) return -1;
    memmove(b, src, bytes);
    return 0;
}

/* Zeros [addr, addr + bytes) where backed: what a kernel that never ran leaves, rather than what
 * an earlier tensor left in reused memory. */
EMU_EXPORT int orrery_emu_zero(uintptr_t addr, size_t bytes)
{
    void *b = emu_backed(addr, bytes);
    if (!b) return -1;
    memset(b, 0, bytes);
    return 0;
}

/* The process group a framework is about to issue a collective on (emu_comm_label): a name of
 * letters, digits, '_', '.' and '-' (others become '_'), at most 31 characters; NULL clears it. */
static _Thread_local char t_comm_label[32];

EMU_EXPORT void orrery_emu_comm_label(const char *label)
{
    size_t n = 0;
    for (; label && label[n] && n < sizeof t_comm_label - 1; n++) {
        char c = label[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                 c == '-';
        t_comm_label[n] = ok ? c : '_';
    }
    t_comm_label[n] = 0;
}

const char *emu_comm_label(void) { return t_comm_label[0] ? t_comm_label : NULL; }

/* Does nothing: the PyTorch hook calls it in place of the two above to measure its own cost. */
EMU_EXPORT void orrery_emu_hook_nop(void) {}

/* The iteration hook: a framework marks the end of each training iteration (the PyTorch hook
 * does after every optimizer step); with two or more marks the collator predicts the last
 * iteration alone. */
EMU_EXPORT void orrery_emu_iteration(void)
{
    emu_rec("I");
}

/* ---- device, errors ---- */

const emu_gpu_info *emu_gpu(void) { return &E.gpu; }

void emu_device_uuid(int dev, unsigned char uuid[16])
{
    for (int i = 0; i < 16; i++) uuid[i] = (unsigned char)(0x40 + dev * 16 + i);
}

/* Shared memory per SM and the opt-in maximum per block, by compute capability (CUDA C
 * Programming Guide, "Technical Specifications per Compute Capability"). */
static void smem_limits(int *per_sm, int *optin)
{
    int cc = E.gpu.cc_major * 10 + E.gpu.cc_minor;
    if (cc == 80 || cc == 87) *per_sm = 164 << 10, *optin = 163 << 10;
    else if (cc >= 90 && cc != 120 && cc != 121) *per_sm = 228 << 10, *optin = 227 << 10;
    else *per_sm = 100 << 10, *optin = 99 << 10;
}

int emu_device_attribute(int attr, int *value)
{
    int per_sm, optin;
    smem_limits(&per_sm, &optin);
    int v;
    switch (attr) {
    case 1: v = 1024; break;                 /* max threads per block */
    case 2: case 3: v = 1024; break;         /* max block dim x, y */
    case 4: v = 64; break;                   /* max block dim z */
    case 5: v = 2147483647; break;           /* max grid dim x */
    case 6: case 7: v = 65535; break;        /* max grid dim y, z */
    case 8: v = 48 << 10; break;             /* shared memory per block */
    case 9: v = 64 << 10; break;             /* constant memory */
    case 10: v = 32; break;                  /* warp size */
    case 11: v = 2147483647; break;          /* max pitch */
    case 12: v = 65536; break;               /* registers per block */
    case 13: v = 1980000; break;             /* clock rate, kHz */
    case 14: v = 512; break;                 /* texture alignment */
    case 15: v = 1; break;                   /* copy/compute overlap */
    case 16: v = E.gpu.sms; break;           /* multiprocessors */
    case 17: case 18: v = 0; break;          /* kernel timeout, integrated */
    case 19: v = 1; break;                   /* can map host memory */
    case 20: v = 0; break;                   /* compute mode: default */
    case 30: v = 512; break;                 /* surface alignment */
    case 31: case 32: v = 1; break;          /* concurrent kernels, ECC */
    case 33: v = emu_device() + 1; break;    /* PCI bus id */
    case 34: case 50: v = 0; break;          /* PCI device id, domain id */
    case 35: v = 0; break;                   /* TCC driver */
    case 36: v = 2619000; break;             /* memory clock, kHz */
    case 37: v = 5120; break;                /* memory bus width, bits */
    case 38: v = (int)E.gpu.l2_bytes; break; /* L2 size */
    case 39: v = 2048; break;                /* threads per SM */
    case 40: v = 5; break;                   /* async engines */
    case 41: v = 1; break;                   /* unified addressing */
    case 75: v = E.gpu.cc_major; break;
    case 76: v = E.gpu.cc_minor; break;
    case 78: case 79: case 80: v = 1; break; /* stream priorities, global/local L1 */
    case 81: v = per_sm; break;              /* shared memory per SM */
    case 82: v = 65536; break;               /* registers per SM */
    case 83: v = 1; break;                   /* managed memory */
    case 84: case 85: case 86: v = 0; break; /* multi-GPU board, group, host native atomics */
    case 87: v = 2; break;                   /* single/double precision ratio */
    case 88: v = 0; break;                   /* pageable memory access */
    case 89: case 90: case 91: v = 1; break; /* concurrent managed access, preemption, host ptr */
    case 95: v = 1; break;                   /* cooperative launch */
    case 96: v = 0; break;                   /* cooperative multi-device launch */
    case 97: v = optin; break;               /* shared memory per block, opt-in */
    case 98: v = 0; break;                   /* can flush remote writes */
    case 99: v = 1; break;                   /* host register */
    case 100: case 101: v = 0; break;        /* pageable uses host page tables, direct managed */
    case 106: v = 32; break;                 /* blocks per SM */
    case 108: v = (int)(E.gpu.l2_bytes * 3 / 4); break; /* persisting L2 */
    case 109: v = 134213632; break;          /* access policy window */
    case 111: v = 1024; break;               /* reserved shared memory per block */
    case 112: case 113: case 114: v = 0; break;
    case 115: case 116: v = 1; break;        /* memory pools, GPUDirect RDMA */
    case 117: case 118: v = 0; break;
    case 119: v = 1; break;                  /* pool handle types: POSIX fd */
    case 120: v = E.gpu.cc_major >= 9; break;/* cluster launch */
    case 121: v = 0; break;
    case 125: v = 1; break;                  /* IPC events */
    case 126: v = E.gpu.cc_major >= 9 ? 4 : 1; break; /* memory sync domains */
    case 130: case 133: v = 0; break;        /* NUMA config, MPS */
    case 131: case 134: v = -1; break;       /* NUMA ids */
    default: return -1;
    }
    *value = v;
    return 0;
}

int emu_device(void) { return t_device >= 0 ? t_device : E.device; }

void emu_set_device(int dev)
{
    if (dev < 0 || dev >= E.device_count) return;
    t_device = dev;
    E.device = dev;
}
int emu_device_count(void) { return E.device_count; }

int emu_last_error(int clear)
{
    int e = E.last_error;
    if (clear) E.last_error = 0;
    return e;
}

int emu_set_error(int err)
{
    if (err) E.last_error = err;
    return err;
}
