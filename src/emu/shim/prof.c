/*
 * prof.c - the kernel profiler of `orrery emulate --profile` (liborrery_prof12.so and
 * liborrery_prof13.so, one per CUDA runtime major version, each with that runtime's symbol-version
 * node so that the program's versioned references reach it first).
 *
 * On a machine with a GPU the program runs for real: this library sits in front of the real CUDA
 * runtime, learns kernel names from the fat-binary registration, brackets every kernel launch with
 * two events on the launch's stream, and at device synchronisations, every 4096 launches and at
 * exit reads the elapsed
 * times. Each process writes "K name gx gy gz bx by bz ns" lines to $ORRERY_EMU_DIR/prof-<pid>.txt;
 * `orrery emulate --profile` then stores the median per (name, grid, block) in the kernel database
 * that GPU-free runs read (docs/emulate.md). Kernels launched inside libraries through the driver
 * API (cuBLAS, cuDNN, NCCL) are not seen; their time comes from Orrery's models.
 *
 * Standalone: it does not use the emulation core, and forwards every call to the next definition
 * of the same versioned symbol (dlvsym(RTLD_NEXT, ...)).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracename.h"

#ifndef PROF_NODE
#define PROF_NODE "libcudart.so.13"
#endif
#define EXPORT __attribute__((visibility("default")))

typedef int cudaError_t;
typedef struct dim3 {
    unsigned x, y, z;
} dim3;
typedef void *cudaStream_t;
typedef void *cudaEvent_t;

/* The next definitions (the real runtime). */
static struct {
    void (*reg)(void **, const char *, char *, const char *, int, void *, void *, void *, void *, int *);
    cudaError_t (*launch)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
    cudaError_t (*get_kernel)(void **, const void *);
    cudaError_t (*launch13)(void *, dim3, dim3, void **, size_t, cudaStream_t);
    cudaError_t (*launch13_ptsz)(void *, dim3, dim3, void **, size_t, cudaStream_t);
    cudaError_t (*ev_create)(cudaEvent_t *);
    cudaError_t (*ev_record)(cudaEvent_t, cudaStream_t);
    cudaError_t (*ev_sync)(cudaEvent_t);
    cudaError_t (*ev_elapsed)(float *, cudaEvent_t, cudaEvent_t);
    int emulated; /* the next library is the emulator's */
    cudaError_t (*dev_sync)(void);
} N;

static void *next(const char *name)
{
    void *f = dlvsym(RTLD_NEXT, name, PROF_NODE);
    if (!f) f = dlsym(RTLD_NEXT, name);
    return f;
}

static void bind_next(void)
{
    static int done;
    if (done) return;
    done = 1;
    *(void **)&N.reg = next("__cudaRegisterFunction");
    *(void **)&N.launch = next("cudaLaunchKernel");
    *(void **)&N.get_kernel = next("__cudaGetKernel");
    *(void **)&N.launch13 = next("__cudaLaunchKernel");
    *(void **)&N.launch13_ptsz = next("__cudaLaunchKernel_ptsz");
    *(void **)&N.ev_create = next("cudaEventCreate");
    *(void **)&N.ev_record = next("cudaEventRecord");
    *(void **)&N.ev_sync = next("cudaEventSynchronize");
    *(void **)&N.ev_elapsed = next("cudaEventElapsedTime");
    *(void **)&N.dev_sync = next("cudaDeviceSynchronize");
    /* in front of the emulation libraries (--profile-on-emulator): their event times are host
     * time, not device time, and are never stored */
    N.emulated = dlsym(RTLD_DEFAULT, "orrery_emu_iteration") != NULL;
}

/* Kernel names by host stub and by CUDA 13 kernel handle: an open-addressing table of keys. */
typedef struct name_slot {
    const void *key;
    const char *name;
} name_slot;

typedef struct pending {
    const char *name;
    unsigned g[3], b[3];
    cudaEvent_t start, end;
} pending;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static name_slot *names;
static size_t nnames, cap_names;
static pending *pend;
static size_t npend, cap_pend;
static cudaEvent_t *free_events;
static size_t nfree, cap_free;
static FILE *out;
static pid_t out_pid;

static size_t slot_of(const name_slot *t, size_t cap, const void *key)
{
    size_t i = (size_t)(((uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
    while (t[i].key && t[i].key != key) i = (i + 1) & (cap - 1);
    return i;
}

static void name_put(const void *key, const char *name)
{
    if (!key || !name) return;
    if (2 * (nnames + 1) > cap_names) {
        size_t cap = cap_names ? 2 * cap_names : 4096;
        name_slot *t = calloc(cap, sizeof *t);
        if (!t) return; /* out of memory: the kernel stays unnamed, its launches untimed */
        for (size_t i = 0; i < cap_names; i++)
            if (names[i].key) t[slot_of(t, cap, names[i].key)] = names[i];
        free(names);
        names = t;
        cap_names = cap;
    }
    name_slot *s = &names[slot_of(names, cap_names, key)];
    if (!s->key) nnames++;
    s->key = key;
    s->name = name;
}

static const char *name_get(const void *key)
{
    return key && cap_names ? names[slot_of(names, cap_names, key)].name : NULL;
}

static cudaEvent_t event_get(void)
{
    if (nfree) return free_events[--nfree];
    cudaEvent_t e = NULL;
    return N.ev_create && N.ev_create(&e) == 0 ? e : NULL;
}

static void event_put(cudaEvent_t e)
{
    if (nfree == cap_free) {
        size_t cap = cap_free ? 2 * cap_free : 256;
        cudaEvent_t *t = realloc(free_events, cap * sizeof *t);
        if (!t) return;
        free_events = t;
        cap_free = cap;
    }
    free_events[nfree++] = e;
}


/* Reads the times of every pending launch (after a synchronisation, or waiting for them). */
static void harvest(void)
{
    if (!npend) return;
    if (!out || out_pid != getpid()) { /* first harvest of this process (or a forked child) */
        const char *dir = getenv("ORRERY_EMU_DIR");
        char path[600];
        snprintf(path, sizeof path, "%s/prof-%ld.txt", dir && *dir ? dir : ".", (long)getpid());
        out = fopen(path, "w");
        out_pid = getpid();
        if (!out) {
            fprintf(stderr, "orrery emulate --profile: cannot write %s\n", path);
            npend = 0;
            return;
        }
    }
    for (size_t i = 0; i < npend; i++) {
        pending *p = &pend[i];
        float ms = 0;
        if (N.ev_sync(p->end) == 0 && N.ev_elapsed(&ms, p->start, p->end) == 0 && ms >= 0) {
            if (N.emulated) ms = 0; /* no device time */
            char clean[EMU_NAME_MAX + 1];
            emu_trace_name(p->name, clean); /* profiled kernels carry the names of emulation traces */
            fprintf(out, "K %s %u %u %u %u %u %u %.0f\n", clean, p->g[0], p->g[1], p->g[2], p->b[0], p->b[1], p->b[2],
                    (double)ms * 1e6);
        }
        event_put(p->start);
        event_put(p->end);
    }
    npend = 0;
    fflush(out);
}

static void at_exit(void)
{
    pthread_mutex_lock(&lock);
    harvest();
    pthread_mutex_unlock(&lock);
}

static cudaError_t timed(const char *name, dim3 g, dim3 b, cudaStream_t s, cudaError_t (*call)(void *),
                         void *ctx)
{
    static int registered;
    if (!name) return call(ctx);
    pthread_mutex_lock(&lock);
    if (!registered) {
        registered = 1;
        atexit(at_exit); /* after the runtime's own: runs before its teardown */
    }
    cudaEvent_t e0 = event_get(), e1 = event_get();
    pthread_mutex_unlock(&lock);
    if (e0) N.ev_record(e0, s);
    cudaError_t rc = call(ctx);
    if (e1) N.ev_record(e1, s);
    pthread_mutex_lock(&lock);
    if (rc == 0 && e0 && e1) {
        if (npend == cap_pend) {
            size_t cap = cap_pend ? 2 * cap_pend : 1024;
            pending *t = realloc(pend, cap * sizeof *t);
            if (t) pend = t, cap_pend = cap;
        }
        if (npend < cap_pend) {
            pend[npend++] = (pending){name, {g.x, g.y, g.z}, {b.x, b.y, b.z}, e0, e1};
            e0 = e1 = NULL;
        }
        if (npend >= 4096) harvest(); /* bounds the events held; waits for the oldest */
    }
    if (e0) event_put(e0);
    if (e1) event_put(e1);
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT void __cudaRegisterFunction(void **h, const char *host_fun, char *device_fun, const char *device_name,
                                   int thread_limit, void *tid, void *bid, void *bdim, void *gdim, int *wsize)
{
    bind_next();
    pthread_mutex_lock(&lock);
    name_put(host_fun, device_name);
    pthread_mutex_unlock(&lock);
    if (N.reg) N.reg(h, host_fun, device_fun, device_name, thread_limit, tid, bid, bdim, gdim, wsize);
}

typedef struct launch_args {
    const void *f;
    dim3 g, b;
    void **args;
    size_t shmem;
    cudaStream_t s;
    cudaError_t (*fn)(void *, dim3, dim3, void **, size_t, cudaStream_t);
} launch_args;

static cudaError_t call_launch(void *ctx)
{
    launch_args *a = ctx;
    return N.launch(a->f, a->g, a->b, a->args, a->shmem, a->s);
}

static cudaError_t call_launch13(void *ctx)
{
    launch_args *a = ctx;
    return a->fn((void *)a->f, a->g, a->b, a->args, a->shmem, a->s);
}

EXPORT cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{
    bind_next();
    if (!N.launch) return 999; /* cudaErrorUnknown: no runtime behind us */
    pthread_mutex_lock(&lock);
    const char *name = name_get(f);
    pthread_mutex_unlock(&lock);
    launch_args a = {f, g, b, args, shmem, s, NULL};
    return timed(name, g, b, s, call_launch, &a);
}

EXPORT cudaError_t __cudaGetKernel(void **kernel, const void *host_fun)
{
    bind_next();
    if (!N.get_kernel) return 999;
    cudaError_t rc = N.get_kernel(kernel, host_fun);
    if (rc == 0 && kernel) {
        pthread_mutex_lock(&lock);
        name_put(*kernel, name_get(host_fun));
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

static cudaError_t launch13(cudaError_t (*fn)(void *, dim3, dim3, void **, size_t, cudaStream_t), void *k, dim3 g,
                            dim3 b, void **args, size_t shmem, cudaStream_t s)
{
    if (!fn) return 999;
    pthread_mutex_lock(&lock);
    const char *name = name_get(k);
    pthread_mutex_unlock(&lock);
    launch_args a = {k, g, b, args, shmem, s, fn};
    return timed(name, g, b, s, call_launch13, &a);
}

EXPORT cudaError_t __cudaLaunchKernel(void *k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{
    bind_next();
    return launch13(N.launch13, k, g, b, args, shmem, s);
}

EXPORT cudaError_t __cudaLaunchKernel_ptsz(void *k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{
    bind_next();
    return launch13(N.launch13_ptsz, k, g, b, args, shmem, s);
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    bind_next();
    if (!N.dev_sync) return 999;
    cudaError_t rc = N.dev_sync();
    pthread_mutex_lock(&lock);
    harvest();
    pthread_mutex_unlock(&lock);
    return rc;
}
