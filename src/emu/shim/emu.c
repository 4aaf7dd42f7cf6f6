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
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ALIGN_BYTES 512u

typedef struct alloc_rec {
    uintptr_t addr;
    uint64_t bytes;
    uint32_t buf;
    int live;
} alloc_rec;

typedef struct kernel_rec {
    const void *host_fun;
    char *name;
} kernel_rec;

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
    uint64_t capacity, used;
    alloc_rec *allocs;
    size_t nallocs, cap_allocs;
    uint32_t next_buf;
    /* handles */
    unsigned char stream_live[EMU_MAX_STREAMS];
    unsigned char event_live[EMU_MAX_EVENTS];
    int device, device_count;
    int last_error;
    int device_used;      /* a device op has run: the device may no longer change */
    int64_t tag;          /* current operator tag from orrery_emu_set_op (-1: none) */
    int64_t ntags;
    /* names interned into the trace */
    char **names;
    size_t nnames, cap_names;
    /* kernels, registered once per process image (kept across fork) */
    kernel_rec *kernels;
    size_t nkernels, cap_kernels;
    api_count apis[1024];
    size_t napis;
    char warned[32][64];
    size_t nwarned;
} E = {.lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, .device_count = 1, .tag = -1};

/* Handle tables: the addresses of their entries are the handles. */
static unsigned char stream_handles[EMU_MAX_STREAMS];
static unsigned char event_handles[EMU_MAX_EVENTS];

static _Thread_local int64_t t_last_leave_ns = -1;

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
}

static void reset_process_state(void)
{
    free(E.allocs);
    E.allocs = NULL;
    E.nallocs = E.cap_allocs = 0;
    E.used = 0;
    E.top = E.base;
    E.next_buf = 0;
    memset(E.stream_live, 0, sizeof E.stream_live);
    memset(E.event_live, 0, sizeof E.event_live);
    E.device = 0;
    E.device_used = 0;
    E.last_error = 0;
    E.tag = -1;
    E.ntags = 0;
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
    open_trace();
}

__attribute__((constructor)) static void emu_init(void)
{
    const char *dir = getenv("ORRERY_EMU_DIR");
    if (!dir || !*dir)
        emu_die("ORRERY_EMU_DIR is not set: the emulation libraries run under `orrery emulate -- CMD`");
    snprintf(E.dir, sizeof E.dir, "%s", dir);
    const char *cap = getenv("ORRERY_EMU_MEM_BYTES");
    E.capacity = cap && *cap ? strtoull(cap, NULL, 10) : 80ull << 30;
    const char *nd = getenv("ORRERY_EMU_DEVICES");
    E.device_count = nd && *nd ? atoi(nd) : 1;
    if (E.device_count < 1) E.device_count = 1;
    reserve_address_space();
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
    if (t_last_leave_ns >= 0 && now > t_last_leave_ns && E.f)
        fprintf(E.f, "H %lld\n", (long long)(now - t_last_leave_ns));
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

void emu_rec(const char *fmt, ...)
{
    if (!E.f) return;
    pthread_mutex_lock(&E.lock);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(E.f, fmt, ap);
    va_end(ap);
    fputc('\n', E.f);
    pthread_mutex_unlock(&E.lock);
}

const char *emu_dir(void) { return E.dir; }

/* ---- memory ---- */

int emu_malloc(uint64_t bytes, uintptr_t *addr)
{
    pthread_mutex_lock(&E.lock);
    uint64_t rounded = (bytes + ALIGN_BYTES - 1) / ALIGN_BYTES * ALIGN_BYTES;
    if (rounded == 0) rounded = ALIGN_BYTES;
    E.device_used = 1;
    if (E.used + bytes > E.capacity) {
        emu_rec("OOM %llu %llu", (unsigned long long)bytes, (unsigned long long)E.used);
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
    E.top += rounded;
    E.used += bytes;
    *addr = a->addr;
    emu_rec("A %u %llu", a->buf, (unsigned long long)bytes);
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
    E.used -= a->bytes;
    emu_rec("F %u", a->buf);
    pthread_mutex_unlock(&E.lock);
    return 0;
}

int emu_is_device_ptr(uintptr_t addr) { return addr >= E.base && addr < E.top; }
uint64_t emu_mem_capacity(void) { return E.capacity; }
uint64_t emu_mem_used(void) { return E.used; }

/* ---- streams and events ---- */

void *emu_stream_create(int priority)
{
    pthread_mutex_lock(&E.lock);
    for (int i = 1; i < EMU_MAX_STREAMS; i++) {
        if (E.stream_live[i]) continue;
        E.stream_live[i] = 1;
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

void emu_event_destroy(const void *handle)
{
    int i = emu_event_index(handle);
    if (i >= 0) E.event_live[i] = 0;
}

/* ---- kernels and names ---- */

void emu_kernel_register(const void *host_fun, const char *name)
{
    pthread_mutex_lock(&E.lock);
    for (size_t i = 0; i < E.nkernels; i++)
        if (E.kernels[i].host_fun == host_fun) {
            pthread_mutex_unlock(&E.lock);
            return;
        }
    if (E.nkernels == E.cap_kernels) {
        E.cap_kernels = E.cap_kernels ? 2 * E.cap_kernels : 64;
        E.kernels = realloc(E.kernels, E.cap_kernels * sizeof *E.kernels);
        if (!E.kernels) emu_die("out of host memory");
    }
    E.kernels[E.nkernels].host_fun = host_fun;
    E.kernels[E.nkernels].name = strdup(name ? name : "?");
    E.nkernels++;
    pthread_mutex_unlock(&E.lock);
}

const void *emu_kernel_lookup(const void *host_fun)
{
    const void *k = NULL;
    pthread_mutex_lock(&E.lock);
    for (size_t i = 0; i < E.nkernels && !k; i++)
        if (E.kernels[i].host_fun == host_fun) k = &E.kernels[i];
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
        /* names may not contain spaces or newlines in the trace */
        char clean[256];
        snprintf(clean, sizeof clean, "%s", name);
        for (char *c = clean; *c; c++)
            if (*c == ' ' || *c == '\n' || *c == '\t') *c = '_';
        emu_rec("N %zu %s", i, clean);
    }
    pthread_mutex_unlock(&E.lock);
    return (uint32_t)i;
}

void emu_launch(const char *name, const unsigned grid[3], const unsigned block[3], size_t shmem, int stream)
{
    uint32_t id = emu_name_id(name);
    E.device_used = 1;
    emu_rec("K %d %u %u %u %u %u %u %u %zu %lld", stream, id, grid[0], grid[1], grid[2], block[0], block[1],
            block[2], shmem, (long long)E.tag);
}

/* The operator hook: a framework (or a test program) names the operator whose kernels follow,
 * with its class and the FLOPs and bytes of the whole operator; the collator divides them over
 * the kernels launched until the next call. cls: gemm, attention_fwd, attention_bwd,
 * elementwise, reduction, norm, optimizer, other. A NULL name ends the operator. Looked up with
 * dlsym so that a program runs unchanged on a real GPU where the symbol does not exist. */
EMU_EXPORT void orrery_emu_set_op(const char *name, const char *cls, double flops, double bytes)
{
    pthread_mutex_lock(&E.lock);
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
    pthread_mutex_unlock(&E.lock);
}

/* ---- device, errors ---- */

int emu_device(void) { return E.device; }

void emu_set_device(int dev)
{
    if (dev == E.device) return;
    if (E.device_used)
        emu_die("cudaSetDevice(%d) after work on device %d: the emulator models one GPU per process "
                "(run one process per GPU, as torchrun does)", dev, E.device);
    E.device = dev;
    emu_rec("D %d", dev);
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
