/*
 * nccl.c - the NCCL stand-in (libnccl.so.2).
 *
 * A communicator is what the program says it is: a unique id, its size and this rank. Init needs
 * no exchange between processes (no data moves), so every rank records "NC id nranks rank" and the
 * collator joins the ranks by id. ncclCommSplit does need to know the other ranks' colours: the
 * ranks meet through files in the trace directory (each writes its colour and key, then reads
 * everyone's), the same way the real one meets through its bootstrap network. Collectives and
 * send/recv are recorded with their stream, communicator, element count and element size;
 * ncclGroupStart/End are recorded so the collator posts grouped operations together.
 */
#define _GNU_SOURCE
#include "emu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

typedef int ncclResult_t;
enum { ncclSuccess = 0, ncclInvalidArgument = 4, ncclInvalidUsage = 5 };
#define NCCL_SPLIT_NOCOLOR (-1)
#define EMU_NCCL_VERSION 22809 /* the NCCL whose ABI this follows: 2.28.9 */

typedef struct {
    char internal[128];
} ncclUniqueId;

typedef struct emu_comm {
    char id[33]; /* 32 hex digits */
    int nranks, rank, device;
    unsigned splits; /* splits made from this communicator, for the rendezvous file names */
    int labelled;    /* its process group's name is in the trace ("CN") */
    struct emu_comm *next, *prev; /* the process's live communicators */
} emu_comm;
static emu_comm *live_comms;
typedef emu_comm *ncclComm_t;

static ncclResult_t done(ncclResult_t r)
{
    emu_leave();
    return r;
}

static int dtype_bytes(int dt)
{
    static const int sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return dt >= 0 && dt < (int)(sizeof sizes / sizeof sizes[0]) ? sizes[dt] : 0;
}

static int stream_of(void *s, const char *api)
{
    int i = emu_stream_index(s);
    if (i < 0) emu_die("%s: stream %p is not a stream this process created", api, s);
    return i;
}

EMU_EXPORT ncclResult_t ncclGetVersion(int *v)
{
    EMU_ENTER("ncclGetVersion");
    if (!v) return done(ncclInvalidArgument);
    *v = EMU_NCCL_VERSION;
    return done(ncclSuccess);
}

EMU_EXPORT const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    default: return "unknown result code";
    }
}

EMU_EXPORT const char *ncclGetLastError(ncclComm_t c)
{
    (void)c;
    return "";
}

EMU_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *u)
{
    EMU_ENTER("ncclGetUniqueId");
    if (!u) return done(ncclInvalidArgument);
    memset(u, 0, sizeof *u);
    unsigned char r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        /* fall back on pid and time: unique enough among the processes of one run */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t a = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_nsec, b = (uint64_t)ts.tv_sec;
        memcpy(r, &a, 8);
        memcpy(r + 8, &b, 8);
    }
    memcpy(u->internal, "orrery", 6);
    memcpy(u->internal + 8, r, sizeof r);
    return done(ncclSuccess);
}

/* A communicator's rank on device dev (the current device, or ncclCommInitAll's list): its records
 * are that device's (emu_rec_device), so a process driving several devices gives each its rank. */
static emu_comm *comm_new(const char *id, int nranks, int rank, int dev)
{
    emu_comm *c = calloc(1, sizeof *c);
    if (!c) emu_die("out of host memory");
    snprintf(c->id, sizeof c->id, "%s", id);
    c->nranks = nranks;
    c->rank = rank;
    c->device = dev;
    c->next = live_comms;
    if (live_comms) live_comms->prev = c;
    live_comms = c;
    emu_rec_device(dev);
    emu_rec("NC %s %d %d", c->id, nranks, rank);
    emu_rec_device(-1);
    return c;
}

static void comm_free(emu_comm *c)
{
    if (!c) return;
    if (c->prev) c->prev->next = c->next;
    else if (live_comms == c) live_comms = c->next;
    if (c->next) c->next->prev = c->prev;
    free(c);
}

static void id_hex(const ncclUniqueId *u, char id[33])
{
    for (int i = 0; i < 16; i++) snprintf(id + 2 * i, 3, "%02x", (unsigned char)u->internal[8 + i]);
}

static ncclResult_t init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *u, int rank)
{
    if (!comm || !u || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
    if (memcmp(u->internal, "orrery", 6) != 0)
        emu_die("ncclCommInitRank: the unique id was not made by the emulator's ncclGetUniqueId");
    char id[33];
    id_hex(u, id);
    *comm = comm_new(id, nranks, rank, emu_device());
    return ncclSuccess;
}

EMU_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId u, int rank)
{
    EMU_ENTER("ncclCommInitRank");
    return done(init_rank(comm, nranks, &u, rank));
}

EMU_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId u, int rank, void *config)
{
    (void)config;
    EMU_ENTER("ncclCommInitRankConfig");
    return done(init_rank(comm, nranks, &u, rank));
}

EMU_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nids, ncclUniqueId *ids,
                                                 void *config)
{
    (void)config;
    EMU_ENTER("ncclCommInitRankScalable");
    if (nids < 1 || !ids) return done(ncclInvalidArgument);
    return done(init_rank(comm, nranks, &ids[0], rank));
}

EMU_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *u);

/* One communicator of ndev ranks, rank i on device devlist[i] (device i without a list), all in this
 * process: each device is its own rank of the collated job. */
EMU_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    EMU_ENTER("ncclCommInitAll");
    if (!comms || ndev < 1) return done(ncclInvalidArgument);
    for (int i = 0; i < ndev; i++) {
        int dev = devlist ? devlist[i] : i;
        if (dev < 0 || dev >= emu_device_count()) return done(ncclInvalidArgument);
        for (int j = 0; j < i; j++)
            if ((devlist ? devlist[j] : j) == dev) return done(ncclInvalidArgument); /* a device twice */
    }
    ncclUniqueId u;
    ncclGetUniqueId(&u);
    char id[33];
    id_hex(&u, id);
    for (int i = 0; i < ndev; i++) comms[i] = comm_new(id, ndev, i, devlist ? devlist[i] : i);
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t c)
{
    EMU_ENTER("ncclCommDestroy");
    comm_free(c);
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclCommAbort(ncclComm_t c)
{
    EMU_ENTER("ncclCommAbort");
    comm_free(c);
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t c)
{
    (void)c;
    EMU_ENTER("ncclCommFinalize");
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *r)
{
    (void)c;
    EMU_ENTER("ncclCommGetAsyncError");
    if (!r) return done(ncclInvalidArgument);
    *r = ncclSuccess;
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclCommCount(const ncclComm_t c, int *n)
{
    EMU_ENTER("ncclCommCount");
    if (!c || !n) return done(ncclInvalidArgument);
    *n = c->nranks;
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t c, int *dev)
{
    EMU_ENTER("ncclCommCuDevice");
    if (!c || !dev) return done(ncclInvalidArgument);
    *dev = c->device;
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t c, int *rank)
{
    EMU_ENTER("ncclCommUserRank");
    if (!c || !rank) return done(ncclInvalidArgument);
    *rank = c->rank;
    return done(ncclSuccess);
}

/* ---- split: a rendezvous through files ---- */

typedef struct split_entry {
    int color, key, rank;
} split_entry;

static int by_key_then_rank(const void *a, const void *b)
{
    const split_entry *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

EMU_EXPORT ncclResult_t ncclCommSplit(ncclComm_t c, int color, int key, ncclComm_t *out, void *config)
{
    (void)config;
    EMU_ENTER("ncclCommSplit");
    if (!c || !out) return done(ncclInvalidArgument);
    for (const emu_comm *o = live_comms; o; o = o->next)
        if (o != c && strcmp(o->id, c->id) == 0) /* the rendezvous would wait on this very thread */
            emu_die("ncclCommSplit: communicator %s has several ranks in this process (ncclCommInitAll, or one "
                    "rank per device): splitting it is not modelled yet", c->id);
    unsigned seq = c->splits++;
    char path[700], tmp[720];
    snprintf(path, sizeof path, "%s/split-%s-%u-%d.txt", emu_dir(), c->id, seq, c->rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d %d\n", color, key) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
        emu_die("ncclCommSplit: cannot write %s: %s", path, strerror(errno));
    split_entry *all = calloc((size_t)c->nranks, sizeof *all);
    if (!all) emu_die("out of host memory");
    const int timeout_s = 600;
    for (int r = 0; r < c->nranks; r++) {
        snprintf(path, sizeof path, "%s/split-%s-%u-%d.txt", emu_dir(), c->id, seq, r);
        int got = 0;
        for (long waited_ms = 0; !got; waited_ms += 2) {
            FILE *g = fopen(path, "r");
            if (g) {
                got = fscanf(g, "%d %d", &all[r].color, &all[r].key) == 2;
                fclose(g);
            }
            if (got) break;
            if (waited_ms > timeout_s * 1000L)
                emu_die("ncclCommSplit on communicator %s: rank %d did not join within %d s", c->id, r, timeout_s);
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
        all[r].rank = r;
    }
    if (color == NCCL_SPLIT_NOCOLOR) {
        free(all);
        *out = NULL;
        return done(ncclSuccess);
    }
    /* members of my colour, ordered by key then parent rank, as NCCL orders them */
    int n = 0;
    for (int r = 0; r < c->nranks; r++)
        if (all[r].color == color) all[n++] = all[r];
    qsort(all, (size_t)n, sizeof *all, by_key_then_rank);
    int mine = 0;
    while (mine < n && all[mine].rank != c->rank) mine++;
    free(all);
    /* the child's id is a function of the parent's, the split's number and the colour */
    uint64_t h = 1469598103934665603ull;
    for (const char *p = c->id; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ seq) * 1099511628211ull;
    h = (h ^ (uint64_t)(unsigned)color) * 1099511628211ull;
    uint64_t h2 = (h ^ 0x5bd1e995u) * 0x9e3779b97f4a7c15ull;
    char id[33];
    snprintf(id, sizeof id, "%016llx%016llx", (unsigned long long)h, (unsigned long long)h2);
    *out = comm_new(id, n, mine, c->device);
    return done(ncclSuccess);
}

/* ---- operations ---- */

/* The first operation on a communicator issued under a process group's name records the name. */
static void label(ncclComm_t c)
{
    const char *l = emu_comm_label();
    if (!c || c->labelled || !l) return;
    emu_rec("CN %s %s", c->id, l);
    c->labelled = 1;
}

static ncclResult_t coll(const char *api, const char *op, size_t count, int dt, int root, ncclComm_t c, void *s)
{
    if (!c || dtype_bytes(dt) == 0) return ncclInvalidArgument;
    if (root >= c->nranks) return ncclInvalidArgument;
    label(c);
    emu_rec_device(c->device); /* the communicator's device, whatever the current one */
    emu_rec("CO %d %s %s %zu %d %d", stream_of(s, api), c->id, op, count, dtype_bytes(dt), root);
    emu_rec_device(-1);
    return ncclSuccess;
}

EMU_EXPORT ncclResult_t ncclAllReduce(const void *sb, void *rb, size_t count, int dt, int op, ncclComm_t c, void *s)
{
    (void)sb, (void)rb, (void)op;
    EMU_ENTER("ncclAllReduce");
    return done(coll("ncclAllReduce", "allreduce", count, dt, 0, c, s));
}

/* On backed (small) buffers an all-gather fills every rank's slot with this rank's data: the
 * ranks of an emulated job are taken to agree, which is what the framework checks that gather
 * metadata (DDP's parameter shapes) test. Other collectives leave the data as it is. */
static void gather_backed(const void *sb, void *rb, size_t sendcount, int dt, ncclComm_t c)
{
    size_t n = sendcount * (size_t)dtype_bytes(dt);
    if (!c || !n || c->nranks < 1) return;
    const void *src = emu_backed((uintptr_t)sb, n);
    char *dst = emu_backed((uintptr_t)rb, n * (size_t)c->nranks);
    if (!src || !dst) return;
    char *mine = malloc(n);
    if (!mine) emu_die("out of host memory");
    memcpy(mine, src, n); /* the send buffer may be a slot of the receive buffer (in place) */
    for (int r = 0; r < c->nranks; r++) memcpy(dst + (size_t)r * n, mine, n);
    free(mine);
}

EMU_EXPORT ncclResult_t ncclAllGather(const void *sb, void *rb, size_t sendcount, int dt, ncclComm_t c, void *s)
{
    EMU_ENTER("ncclAllGather");
    gather_backed(sb, rb, sendcount, dt, c);
    return done(coll("ncclAllGather", "allgather", sendcount, dt, 0, c, s));
}

EMU_EXPORT ncclResult_t ncclReduceScatter(const void *sb, void *rb, size_t recvcount, int dt, int op, ncclComm_t c,
                                          void *s)
{
    (void)sb, (void)rb, (void)op;
    EMU_ENTER("ncclReduceScatter");
    return done(coll("ncclReduceScatter", "reducescatter", recvcount, dt, 0, c, s));
}

EMU_EXPORT ncclResult_t ncclBroadcast(const void *sb, void *rb, size_t count, int dt, int root, ncclComm_t c, void *s)
{
    (void)sb, (void)rb;
    EMU_ENTER("ncclBroadcast");
    return done(coll("ncclBroadcast", "broadcast", count, dt, root, c, s));
}

EMU_EXPORT ncclResult_t ncclBcast(void *b, size_t count, int dt, int root, ncclComm_t c, void *s)
{
    (void)b;
    EMU_ENTER("ncclBcast");
    return done(coll("ncclBcast", "broadcast", count, dt, root, c, s));
}

EMU_EXPORT ncclResult_t ncclReduce(const void *sb, void *rb, size_t count, int dt, int op, int root, ncclComm_t c,
                                   void *s)
{
    (void)sb, (void)rb, (void)op;
    EMU_ENTER("ncclReduce");
    return done(coll("ncclReduce", "reduce", count, dt, root, c, s));
}

/* On backed buffers an all-to-all fills every slot of the receive buffer with this rank's own
 * chunk (the one it sends to itself): the ranks are taken to agree, as for all-gather, so what
 * rank r sends here is what this rank sends itself. MoE dispatch exchanges its token counts so. */
static void alltoall_backed(const void *sb, void *rb, size_t count, int dt, ncclComm_t c)
{
    size_t n = count * (size_t)dtype_bytes(dt);
    if (!c || !n || c->nranks < 1) return;
    const char *src = emu_backed((uintptr_t)sb, n * (size_t)c->nranks);
    char *dst = emu_backed((uintptr_t)rb, n * (size_t)c->nranks);
    if (!src || !dst) return;
    char *mine = malloc(n);
    if (!mine) emu_die("out of host memory");
    memcpy(mine, src + (size_t)c->rank * n, n); /* in place: the send buffer may be the receive buffer */
    for (int r = 0; r < c->nranks; r++) memcpy(dst + (size_t)r * n, mine, n);
    free(mine);
}

EMU_EXPORT ncclResult_t ncclAlltoAll(const void *sb, void *rb, size_t count, int dt, ncclComm_t c, void *s)
{
    EMU_ENTER("ncclAlltoAll");
    alltoall_backed(sb, rb, count, dt, c);
    return done(coll("ncclAlltoAll", "alltoall", count, dt, 0, c, s));
}

/* Send/recv to one's own rank is allowed, as in NCCL (a local copy; all_to_all_single sends each
 * rank its own chunk). Data on backed buffers follows the all-to-all rule: within a group, every
 * receive gets what this rank sends itself (copied at the outermost ncclGroupEnd), the ranks being
 * taken to agree. */
typedef struct pending_recv {
    void *buf;
    size_t bytes;
} pending_recv;

static _Thread_local int t_group_depth;
static _Thread_local const void *t_self_send; /* this group's send to self */
static _Thread_local size_t t_self_bytes;
static _Thread_local pending_recv *t_recvs;   /* this group's receives into backed buffers */
static _Thread_local size_t t_nrecvs, t_cap_recvs;

static ncclResult_t p2p(const char *api, const char *kind, const void *buf, size_t count, int dt, int peer,
                        ncclComm_t c, void *s)
{
    if (!c || dtype_bytes(dt) == 0 || peer < 0 || peer >= c->nranks) return ncclInvalidArgument;
    size_t bytes = count * (size_t)dtype_bytes(dt);
    label(c);
    if (t_group_depth > 0 && kind[0] == 'S' && peer == c->rank) {
        t_self_send = buf;
        t_self_bytes = bytes;
    } else if (t_group_depth > 0 && kind[0] == 'R' && bytes && emu_backed((uintptr_t)buf, bytes)) {
        if (t_nrecvs == t_cap_recvs) {
            t_cap_recvs = t_cap_recvs ? 2 * t_cap_recvs : 16;
            t_recvs = realloc(t_recvs, t_cap_recvs * sizeof *t_recvs);
            if (!t_recvs) emu_die("out of host memory");
        }
        t_recvs[t_nrecvs++] = (pending_recv){(void *)buf, bytes};
    }
    emu_rec_device(c->device);
    emu_rec("%s %d %s %d %zu %d", kind, stream_of(s, api), c->id, peer, count, dtype_bytes(dt));
    emu_rec_device(-1);
    return ncclSuccess;
}

EMU_EXPORT ncclResult_t ncclSend(const void *b, size_t count, int dt, int peer, ncclComm_t c, void *s)
{
    EMU_ENTER("ncclSend");
    return done(p2p("ncclSend", "SE", b, count, dt, peer, c, s));
}

EMU_EXPORT ncclResult_t ncclRecv(void *b, size_t count, int dt, int peer, ncclComm_t c, void *s)
{
    EMU_ENTER("ncclRecv");
    return done(p2p("ncclRecv", "RE", b, count, dt, peer, c, s));
}

EMU_EXPORT ncclResult_t ncclGroupStart(void)
{
    EMU_ENTER("ncclGroupStart");
    if (t_group_depth++ == 0) {
        emu_rec("GS");
        t_self_send = NULL;
        t_self_bytes = t_nrecvs = 0;
    }
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclGroupEnd(void)
{
    EMU_ENTER("ncclGroupEnd");
    if (t_group_depth == 0) return done(ncclInvalidUsage);
    if (--t_group_depth == 0) {
        emu_rec("GE");
        const void *src = t_self_send ? emu_backed((uintptr_t)t_self_send, t_self_bytes) : NULL;
        for (size_t i = 0; src && i < t_nrecvs; i++) {
            void *dst = emu_backed((uintptr_t)t_recvs[i].buf, t_recvs[i].bytes);
            size_t n = t_recvs[i].bytes < t_self_bytes ? t_recvs[i].bytes : t_self_bytes;
            if (dst && dst != src) memmove(dst, src, n);
        }
        t_nrecvs = 0;
    }
    return done(ncclSuccess);
}

/* ---- reduction operators and registration: accepted, nothing to do ---- */

EMU_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(int *op, void *scalar, int dt, int residence, ncclComm_t c)
{
    (void)scalar, (void)dt, (void)residence, (void)c;
    EMU_ENTER("ncclRedOpCreatePreMulSum");
    if (!op) return done(ncclInvalidArgument);
    *op = 5; /* ncclNumOps: the first user-defined operator */
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclRedOpDestroy(int op, ncclComm_t c)
{
    (void)op, (void)c;
    EMU_ENTER("ncclRedOpDestroy");
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclCommRegister(const ncclComm_t c, void *buf, size_t size, void **handle)
{
    (void)c, (void)buf, (void)size;
    EMU_ENTER("ncclCommRegister");
    if (handle) *handle = NULL;
    return done(ncclSuccess);
}

EMU_EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t c, void *handle)
{
    (void)c, (void)handle;
    EMU_ENTER("ncclCommDeregister");
    return done(ncclSuccess);
}
