/*
 * collate.c - joins the per-process traces of an emulated run into one workload (emulate.h).
 *
 * Pass 1 reads every trace-*.txt of the directory into records (a line each, format in
 * docs/emulate.md; a malformed line is an error naming the file and line). Pass 2 gives each
 * process that used a GPU its global rank (RANK from the environment, as torchrun sets it; else
 * its rank in a communicator that spans every process; a single process is rank 0), builds one
 * group per NCCL communicator with its members' global ranks, and lowers the records of each
 * process into ops in program order. Pass 3 (optional) finds ranks whose op sequences are equal
 * apart from host-time values and keeps one of each class with the class size as its weight.
 */
#include "orrery/emulate.h"

#include <dirent.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
    R_HOST, R_KERNEL, R_COPY, R_SET, R_ALLOC, R_FREE, R_EREC, R_SWAIT, R_ESYNC, R_SSYNC, R_DSYNC, R_GEMM, R_LIB,
    R_COLL, R_SEND, R_RECV, R_GS, R_GE, R_MARK,
    R_RSYNC /* the host waits for a record of an event on another device (route_devices) */
};
enum { CP_H2H, CP_H2D, CP_D2H, CP_D2D, CP_P2P }; /* P2P: between two devices of a process */

/* The device of a record ("D dev" sets it for those that follow); EDEV_ALL: the process's (host
 * time, iteration marks, NCCL group brackets), which every device's rank gets. */
#define EDEV_ALL 0xffu
#define EDEV_MAX 64 /* devices one process may drive (EMU_MAX_DEVICES of the emulator) */

typedef struct erec {
    uint8_t t, sub, sync, dev;
    int32_t stream;
    uint32_t a, b;   /* name / buf / event / comm index; peer */
    uint64_t n;      /* bytes, count, host ns */
    union {
        uint32_t dims[6];
        struct { uint32_t shape[4]; double flops; } lib; /* R_LIB: the op's dims and FLOPs */
    };
    int64_t x;       /* tag id, element size */
    size_t line;
} erec;

typedef struct etag {
    uint32_t name;
    uint8_t cls;
    double flops, bytes;
    uint32_t kernels;
    uint8_t lib;     /* a library op ran under it (L): it carries the tag's FLOPs */
} etag;

typedef struct emember {
    uint32_t comm, rank, nranks;
    uint32_t dev;            /* the device that joined */
} emember;

typedef struct eproc {
    char path[600];
    long pid;
    long env_rank;           /* -1: none */
    erec *r;
    size_t nr, cap_r;
    char **names;
    size_t nnames, cap_names;
    etag *tags;
    size_t ntags, cap_tags;
    emember *mem;
    size_t nmem, cap_mem;
    int active;
    uint32_t grank;
    int oom;
    uint64_t oom_bytes, oom_used;
    uint32_t unimplemented;  /* distinct stubs this process called */
    uint32_t marks;          /* iteration marks */
    uint32_t nbufs;          /* buffers allocated so far: the next A record's id */
    uint32_t cur_dev;        /* the device of the records being read ("D") */
    uint32_t oom_dev;        /* the device of the first OOM */
    int dev;                 /* a process that drove several devices is read as one eproc per device
                              * (split_devices): this one's device; -1: the process's only one */
    int split;               /* 1: a process split into its devices (not a rank itself) */
    int borrowed;            /* names and tags are the split process's */
    size_t phys;             /* index of the traced process (itself, or the one split) */
    uint32_t *er_seq;        /* --live: event records so far, per device (EDEV_MAX); NULL otherwise */
} eproc;

typedef struct ecomm {
    char id[33];
    char label[32];          /* its process group's name ("CN"; empty: none) */
    uint32_t nranks;
    uint32_t *grank;         /* comm rank -> global rank (UINT32_MAX: unknown) */
    uint32_t group;          /* workload group id */
} ecomm;

typedef struct collator {
    eproc *p;
    size_t np, cap_p;
    ecomm *c;
    size_t nc, cap_c;
    orr_emu_info *info;
    const char *dir;
    double flops;            /* FLOPs of the sized kernels (tagged, GEMM), all processes */
    int no_host_time;        /* drop the measured host time (orr_emu_opts) */
    int remote;              /* a stream waits on an event of another device of its process */
    int live;                /* orr_emu_opts.live: every iteration kept, event records numbered */
    uint64_t mem_bytes;      /* the memory the traces read so far will take, estimated (mem_charge) */
    uint64_t mem_budget;     /* at most this (ORR_EMU_MAX_BYTES, ORRERY_EMU_MAX_BYTES) */
    orr_map comm_map;        /* hash of a communicator id -> its index (the first id of that hash) */
    orr_map api_map;         /* hash of an entry point's name -> its index in info->apis */
} collator;

static uint32_t comm_index(collator *k, const char *id)
{
    uint64_t h = orr_hash_str(id); /* a million communicators: a million lookups, not scans */
    uint32_t *v = orr_map_get(&k->comm_map, h);
    if (v && strcmp(k->c[*v].id, id) == 0) return *v;
    if (v) /* another id of the same 64-bit hash: the table the slow way */
        for (size_t i = 0; i < k->nc; i++)
            if (strcmp(k->c[i].id, id) == 0) return (uint32_t)i;
    ecomm c;
    memset(&c, 0, sizeof c);
    snprintf(c.id, sizeof c.id, "%s", id);
    ORR_PUSH(k->c, k->nc, k->cap_c, c);
    if (!v) orr_map_put(&k->comm_map, h, (uint32_t)(k->nc - 1));
    return (uint32_t)(k->nc - 1);
}

static int parse_cls(const char *s, uint8_t *out)
{
    static const struct { const char *name; orr_op_class cls; } m[] = {
        {"gemm", ORR_CLS_GEMM}, {"attention_fwd", ORR_CLS_ATTENTION_FWD}, {"attention_bwd", ORR_CLS_ATTENTION_BWD},
        {"elementwise", ORR_CLS_ELEMENTWISE}, {"reduction", ORR_CLS_REDUCTION}, {"norm", ORR_CLS_NORM},
        {"optimizer", ORR_CLS_OPTIMIZER}, {"other", ORR_CLS_OTHER}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(s, m[i].name) == 0) return *out = (uint8_t)m[i].cls, 0;
    return -1;
}

static int parse_coll(const char *s, uint8_t *out)
{
    static const struct { const char *name; orr_coll_kind k; } m[] = {
        {"allreduce", ORR_COLL_ALLREDUCE}, {"allgather", ORR_COLL_ALLGATHER},
        {"reducescatter", ORR_COLL_REDUCESCATTER}, {"broadcast", ORR_COLL_BROADCAST},
        {"reduce", ORR_COLL_REDUCE}, {"alltoall", ORR_COLL_ALLTOALL}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(s, m[i].name) == 0) return *out = (uint8_t)m[i].k, 0;
    return -1;
}

static int parse_dtype(const char *s, uint8_t *out)
{
    static const struct { const char *name; orr_dtype d; } m[] = {
        {"fp32", ORR_FP32}, {"tf32", ORR_TF32}, {"bf16", ORR_BF16}, {"fp16", ORR_FP16}, {"fp8", ORR_FP8},
        {"mxfp8", ORR_MXFP8}, {"nvfp4", ORR_NVFP4}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(s, m[i].name) == 0) return *out = (uint8_t)m[i].d, 0;
    return -1;
}

static int bad(orr_err *err, const eproc *p, size_t line, const char *what)
{
    return orr_fail(err, "emulation trace %s line %zu: %s", p->path, line, what);
}

/* The memory one line of a trace may come to: its record (erec) and the op it is lowered to, both
 * live while a process is lowered (its records are freed after; deduplication copies at most every
 * op once more, when the records are gone). Names and the trace's text are charged by their size. */
#define EMU_BYTES_PER_LINE (sizeof(erec) + sizeof(orr_op))

/* Adds bytes to the collator's estimate of its memory, refusing (naming the trace, the budget and
 * how to raise it) before the run's records would take more than the budget (docs/spec.md
 * "Limits"). */
static int mem_charge(collator *k, const eproc *p, uint64_t bytes, orr_err *err)
{
    if (bytes <= k->mem_budget && k->mem_bytes <= k->mem_budget - bytes) {
        k->mem_bytes += bytes;
        return 0;
    }
    return orr_fail(err, "emulation trace %s: the run's traces would take about %.0f bytes of memory with this one "
                         "(%zu bytes a line and their names), past the collator's budget of %llu bytes (docs/spec.md "
                         "\"Limits\"; raise it with ORRERY_EMU_MAX_BYTES=N)",
                    p->path, (double)k->mem_bytes + (double)bytes, EMU_BYTES_PER_LINE,
                    (unsigned long long)k->mem_budget);
}

/* The info's entry for an entry point, added the first time. */
static orr_emu_api *api_entry(collator *k, const char *name)
{
    orr_emu_info *in = k->info;
    uint64_t h = orr_hash_str(name);
    uint32_t *v = orr_map_get(&k->api_map, h);
    if (v && strcmp(in->apis[*v].name, name) == 0) return &in->apis[*v];
    size_t i = 0;
    if (v) /* another name of the same hash */
        while (i < in->napis && strcmp(in->apis[i].name, name) != 0) i++;
    else
        i = in->napis;
    if (i == in->napis) {
        if ((in->napis & (in->napis - 1)) == 0) /* 0, 1, 2, 4, ...: the table doubles */
            in->apis = orr_xrealloc(in->apis, (in->napis ? 2 * in->napis : 1) * sizeof *in->apis);
        memset(&in->apis[i], 0, sizeof in->apis[i]);
        snprintf(in->apis[i].name, sizeof in->apis[i].name, "%s", name);
        in->napis++;
        if (!v) orr_map_put(&k->api_map, h, (uint32_t)i);
    }
    return &in->apis[i];
}

/* The most host time one H record may report (1,000 s): a longer gap is a broken trace. */
#define EMU_MAX_HOST_NS 1000000000000LL

/* One line of a trace. */
static int parse_line(collator *k, eproc *p, char *s, size_t line, orr_err *err)
{
    char tok[8] = {0}, str[300] = {0}, str2[64] = {0};
    erec r;
    memset(&r, 0, sizeof r);
    r.line = line;
    int used = 0;
    if (sscanf(s, "%7s%n", tok, &used) != 1) return 0; /* blank line */
    const char *rest = s + used;
    int n = 0;
    unsigned long long u1 = 0, u2 = 0;
    long long ll = 0;
    int i1 = 0, i2 = 0, i3 = 0;
#define NEED(cond, what)                                 \
    do {                                                 \
        if (!(cond)) return bad(err, p, line, what);     \
    } while (0)
    if (strcmp(tok, "H") == 0) {
        NEED(sscanf(rest, "%lld%n", &ll, &n) == 1 && ll >= 0 && ll <= EMU_MAX_HOST_NS,
             "expected H <host ns> (at most 1e12 ns between two calls)");
        r.t = R_HOST;
        r.n = (uint64_t)ll;
    } else if (strcmp(tok, "N") == 0) {
        NEED(sscanf(rest, "%llu %299s", &u1, str) == 2 && u1 == p->nnames, "expected N <next name id> <name>");
        /* kept here and, once lowered, in the workload's name table */
        if (mem_charge(k, p, 2 * (strlen(str) + 1 + 2 * sizeof(char *)), err) < 0) return -1;
        char *name = orr_xstrdup(str);
        ORR_PUSH(p->names, p->nnames, p->cap_names, name);
        return 0;
    } else if (strcmp(tok, "T") == 0) {
        etag t = {0};
        double fl = 0, by = 0;
        NEED(sscanf(rest, "%llu %llu %63s %lf %lf", &u1, &u2, str2, &fl, &by) == 5 && u1 == p->ntags &&
                 u2 < p->nnames && isfinite(fl) && isfinite(by) && fl >= 0 && by >= 0,
             "expected T <next tag id> <name id> <class> <flops> <bytes>");
        NEED(parse_cls(str2, &t.cls) == 0, "unknown operator class (expected gemm, attention_fwd, attention_bwd, "
                                           "elementwise, reduction, norm, optimizer or other)");
        t.name = (uint32_t)u2;
        t.flops = fl;
        t.bytes = by;
        ORR_PUSH(p->tags, p->ntags, p->cap_tags, t);
        return 0;
    } else if (strcmp(tok, "TC") == 0) {
        double fl = 0, by = 0;
        NEED(sscanf(rest, "%llu %lf %lf", &u1, &fl, &by) == 3 && u1 < p->ntags && isfinite(fl) && isfinite(by) &&
                 fl >= 0 && by >= 0,
             "expected TC <tag id> <flops> <bytes>");
        p->tags[u1].flops = fl;
        p->tags[u1].bytes = by;
        return 0;
    } else if (strcmp(tok, "K") == 0) {
        unsigned g[6];
        unsigned long long shmem;
        NEED(sscanf(rest, "%d %llu %u %u %u %u %u %u %llu %lld", &i1, &u1, &g[0], &g[1], &g[2], &g[3], &g[4], &g[5],
                    &shmem, &ll) == 10 && i1 >= 0 && i1 < 255 && u1 < p->nnames && ll >= -1 &&
                 (ll < 0 || (unsigned long long)ll < p->ntags),
             "expected K <stream> <name id> <grid x y z> <block x y z> <shared bytes> <tag>");
        r.t = R_KERNEL;
        r.stream = i1;
        r.a = (uint32_t)u1;
        memcpy(r.dims, g, sizeof g);
        r.x = ll;
        if (ll >= 0) p->tags[ll].kernels++;
    } else if (strcmp(tok, "G") == 0) {
        unsigned m, nn, kk, batch;
        char ta = 'n', tb = 'n';
        int got = sscanf(rest, "%d %u %u %u %u %63s %c %c", &i1, &m, &nn, &kk, &batch, str2, &ta, &tb);
        NEED((got == 6 || got == 8) && i1 >= 0 && i1 < 255 && batch > 0 && strchr("ntc", ta) && strchr("ntc", tb),
             "expected G <stream> <m> <n> <k> <batch> <dtype> [<transa n|t|c> <transb n|t|c>]");
        NEED(parse_dtype(str2, &r.sub) == 0, "unknown GEMM dtype (expected fp32, tf32, bf16, fp16, fp8, mxfp8 or nvfp4)");
        r.t = R_GEMM;
        r.stream = i1;
        r.dims[0] = m, r.dims[1] = nn, r.dims[2] = kk, r.dims[3] = batch;
    } else if (strcmp(tok, "L") == 0) {
        unsigned d[4];
        double fl = 0, by = 0;
        NEED(sscanf(rest, "%d %llu %63s %15s %u %u %u %u %lf %lf %lld", &i1, &u1, str2, str, &d[0], &d[1], &d[2], &d[3],
                    &fl, &by, &ll) == 11 && i1 >= 0 && i1 < 255 && u1 < p->nnames && isfinite(fl) && isfinite(by) &&
                 fl >= 0 && by >= 0 && by < 1e19 && ll >= -1 && (ll < 0 || (unsigned long long)ll < p->ntags),
             "expected L <stream> <name id> <class> <dtype> <d0 d1 d2 d3> <flops> <bytes> <tag>");
        NEED(parse_cls(str2, &r.sub) == 0, "unknown operator class (expected gemm, attention_fwd, attention_bwd, "
                                           "elementwise, reduction, norm, optimizer or other)");
        NEED(parse_dtype(str, &r.sync) == 0, "unknown dtype (expected fp32, tf32, bf16, fp16, fp8, mxfp8 or nvfp4)");
        r.t = R_LIB;
        r.stream = i1;
        r.a = (uint32_t)u1;
        memcpy(r.lib.shape, d, sizeof d);
        r.lib.flops = fl;
        r.n = (uint64_t)by;
        if (ll >= 0) p->tags[ll].lib = 1;
    } else if (strcmp(tok, "C") == 0) {
        NEED(sscanf(rest, "%d %7s %llu %d", &i1, str2, &u1, &i2) == 4 && i1 >= 0 && i1 < 255 && (i2 == 0 || i2 == 1),
             "expected C <stream> h2d|d2h|d2d|p2p <bytes> <sync 0|1>");
        static const char *const kinds[] = {"h2h", "h2d", "d2h", "d2d", "p2p"};
        int kind = -1;
        for (int i = 0; i < 5; i++)
            if (strcmp(str2, kinds[i]) == 0) kind = i;
        NEED(kind > 0, "unknown copy kind (expected h2d, d2h, d2d or p2p)");
        r.t = R_COPY;
        r.stream = i1;
        r.sub = (uint8_t)kind;
        r.n = u1;
        r.sync = (uint8_t)i2;
    } else if (strcmp(tok, "M") == 0) {
        NEED(sscanf(rest, "%d %llu", &i1, &u1) == 2 && i1 >= 0 && i1 < 255, "expected M <stream> <bytes>");
        r.t = R_SET;
        r.stream = i1;
        r.n = u1;
    } else if (strcmp(tok, "A") == 0 || strcmp(tok, "F") == 0) {
        int alloc = tok[0] == 'A';
        NEED(alloc ? sscanf(rest, "%llu %llu", &u1, &u2) == 2 : sscanf(rest, "%llu", &u1) == 1,
             alloc ? "expected A <buffer> <bytes>" : "expected F <buffer>");
        /* the emulator numbers buffers 0, 1, 2, ... in allocation order (emu.c), so ids stay
         * below the number of A records and every table indexed by them is bounded by the trace */
        NEED(alloc ? u1 == p->nbufs : u1 < p->nbufs,
             alloc ? "buffer id out of sequence (expected the next one)" : "free of a buffer never allocated");
        if (alloc) p->nbufs++;
        r.t = alloc ? R_ALLOC : R_FREE;
        r.a = (uint32_t)u1;
        r.n = u2;
    } else if (strcmp(tok, "ER") == 0 || strcmp(tok, "SW") == 0) {
        NEED(sscanf(rest, "%d %d", &i1, &i2) == 2 && i1 >= 0 && i2 >= 0, "expected two indices");
        r.t = tok[0] == 'E' ? R_EREC : R_SWAIT;
        r.a = (uint32_t)(tok[0] == 'E' ? i1 : i2);
        r.stream = tok[0] == 'E' ? i2 : i1;
        NEED(r.stream < 255 && r.a < 65536, "stream or event index out of range");
        if (k->live && r.t == R_EREC) { /* --live: the record's number on its device, from 1 (b is free) */
            if (!p->er_seq) p->er_seq = orr_xcalloc(EDEV_MAX, sizeof *p->er_seq);
            NEED(p->er_seq[p->cur_dev] < UINT32_MAX, "too many event records");
            r.b = ++p->er_seq[p->cur_dev];
        }
    } else if (strcmp(tok, "ES") == 0 || strcmp(tok, "SS") == 0) {
        NEED(sscanf(rest, "%d", &i1) == 1 && i1 >= 0 && i1 < 65536, "expected an index");
        r.t = tok[0] == 'E' ? R_ESYNC : R_SSYNC;
        if (tok[0] == 'E') r.a = (uint32_t)i1;
        else {
            NEED(i1 < 255, "stream index out of range");
            r.stream = i1;
        }
    } else if (strcmp(tok, "DS") == 0) {
        r.t = R_DSYNC;
    } else if (strcmp(tok, "NC") == 0) {
        NEED(sscanf(rest, "%32s %d %d", str, &i1, &i2) == 3 && strlen(str) == 32 && i1 >= 1 && i2 >= 0 && i2 < i1,
             "expected NC <32-hex-digit id> <nranks> <rank>");
        emember m = {comm_index(k, str), (uint32_t)i2, (uint32_t)i1, p->cur_dev};
        ORR_PUSH(p->mem, p->nmem, p->cap_mem, m);
        return 0;
    } else if (strcmp(tok, "CN") == 0) {
        char name[sizeof k->c->label] = {0};
        NEED(sscanf(rest, "%32s %31s", str, name) == 2 && strlen(str) == 32, "expected CN <32-hex-digit id> <name>");
        uint32_t ci = comm_index(k, str); /* may grow the table: index it after */
        if (!k->c[ci].label[0]) memcpy(k->c[ci].label, name, sizeof name);
        return 0;
    } else if (strcmp(tok, "CO") == 0) {
        NEED(sscanf(rest, "%d %32s %63s %llu %d %d", &i1, str, str2, &u1, &i2, &i3) == 6 && i1 >= 0 && i1 < 255 &&
                 i2 > 0 && i3 >= 0,
             "expected CO <stream> <comm> <op> <count> <element bytes> <root>");
        NEED(parse_coll(str2, &r.sub) == 0, "unknown collective (expected allreduce, allgather, reducescatter, "
                                            "broadcast, reduce or alltoall)");
        r.t = R_COLL;
        r.stream = i1;
        r.a = comm_index(k, str);
        r.n = u1;
        r.x = i2;
    } else if (strcmp(tok, "SE") == 0 || strcmp(tok, "RE") == 0) {
        NEED(sscanf(rest, "%d %32s %d %llu %d", &i1, str, &i3, &u1, &i2) == 5 && i1 >= 0 && i1 < 255 && i3 >= 0 &&
                 i2 > 0,
             "expected SE|RE <stream> <comm> <peer> <count> <element bytes>");
        r.t = tok[0] == 'S' ? R_SEND : R_RECV;
        r.stream = i1;
        r.a = comm_index(k, str);
        r.b = (uint32_t)i3;
        r.n = u1;
        r.x = i2;
    } else if (strcmp(tok, "GS") == 0 || strcmp(tok, "GE") == 0) {
        r.t = tok[1] == 'S' ? R_GS : R_GE;
    } else if (strcmp(tok, "OOM") == 0) {
        NEED(sscanf(rest, "%llu %llu", &u1, &u2) == 2, "expected OOM <bytes> <bytes in use>");
        if (!p->oom) p->oom = 1, p->oom_bytes = u1, p->oom_used = u2, p->oom_dev = p->cur_dev;
        p->active = 1;
        return 0;
    } else if (strcmp(tok, "S") == 0) {
        NEED(sscanf(rest, "%63s %llu", str2, &u1) == 2, "expected S <entry point> <calls>");
        api_entry(k, str2)->calls += u1;
        return 0;
    } else if (strcmp(tok, "U") == 0) {
        NEED(sscanf(rest, "%63s", str2) == 1, "expected U <entry point>");
        orr_emu_api *a = api_entry(k, str2);
        if (!a->unimplemented) p->unimplemented++;
        a->unimplemented = 1;
        return 0;
    } else if (strcmp(tok, "I") == 0) {
        r.t = R_MARK;
        r.dev = EDEV_ALL;
        p->marks++;
        ORR_PUSH(p->r, p->nr, p->cap_r, r);
        return 0;
    } else if (strcmp(tok, "D") == 0) {
        NEED(sscanf(rest, "%d", &i1) == 1 && i1 >= 0 && i1 < EDEV_MAX, "expected D <device 0..63>");
        p->cur_dev = (uint32_t)i1;
        return 0;
    } else if (strcmp(tok, "SC") == 0) {
        return 0; /* stream creation: nothing to lower */
    } else if (strcmp(tok, "X") == 0) {
        return bad(err, p, line, rest[0] ? rest + 1 : "the emulator stopped the program");
    } else {
        return bad(err, p, line, "unknown record");
    }
#undef NEED
    if (r.t != R_HOST && r.t != R_GS && r.t != R_GE) p->active = 1;
    r.dev = r.t == R_HOST || r.t == R_GS || r.t == R_GE ? EDEV_ALL : (uint8_t)p->cur_dev;
    ORR_PUSH(p->r, p->nr, p->cap_r, r);
    return 0;
}

static int read_trace(collator *k, eproc *p, orr_err *err)
{
    size_t len;
    char *text = orr_read_file(p->path, &len, err);
    if (!text) return -1;
    /* every line may become a record and an op: refused here, before they are allocated, when they
     * and the text would pass the budget */
    uint64_t lines = 1;
    for (const char *s = text; (s = memchr(s, '\n', len - (size_t)(s - text))); s++) lines++;
    if (mem_charge(k, p, len, err) < 0 || mem_charge(k, p, lines * EMU_BYTES_PER_LINE, err) < 0) {
        free(text);
        return -1;
    }
    size_t line = 0;
    int ended = 0, rc = 0;
    char *save = NULL;
    for (char *s = strtok_r(text, "\n", &save); s && rc == 0; s = strtok_r(NULL, "\n", &save)) {
        line++;
        if (line == 1) {
            if (strcmp(s, "orrery-emu-trace 1") != 0) rc = bad(err, p, 1, "not an Orrery emulation trace (version 1)");
            continue;
        }
        if (line == 2) {
            char rank[32];
            if (sscanf(s, "P pid=%ld rank=%31s", &p->pid, rank) != 2) {
                rc = bad(err, p, 2, "expected P pid=<pid> rank=<rank or ->");
                continue;
            }
            char *end;
            p->env_rank = strtol(rank, &end, 10);
            if (end == rank || *end || p->env_rank < 0) p->env_rank = -1;
            continue;
        }
        if (strcmp(s, "END") == 0) {
            ended = 1;
            continue;
        }
        if (ended) rc = bad(err, p, line, "records after END");
        else rc = parse_line(k, p, s, line, err);
    }
    free(text);
    k->mem_bytes -= len;
    /* A trace cut short (empty, header only, no END) is of a process that left without its exit
     * handlers: a forked child that called _exit (a DataLoader worker), a shell that exec'd or
     * _exit'ed. The emulator writes the header and the first record of device work to disk at once
     * (emu.c), so such a trace with no device work is of a process that did none: it is ignored as
     * a launcher is. One that did device work lost the rest of its records: refused. */
    if (rc == 0 && !ended && p->active)
        rc = bad(err, p, line, "truncated trace: no END line (the process used the GPU, then did not exit normally "
                               "or was killed)");
    return rc;
}

/* Keeps a process's last full iteration: the records between its last two iteration marks,
 * preceded by the device memory it held at the first of them (its live allocations, as ALLOC
 * records). The warm-up iterations and the set-up before them are dropped, so the prediction is
 * of a steady-state iteration, as `orrery predict` makes it. */
static void keep_last_iteration(eproc *p)
{
    size_t prev = SIZE_MAX, last = SIZE_MAX;
    uint32_t nbuf = 0;
    for (size_t i = 0; i < p->nr; i++) {
        if (p->r[i].t == R_MARK) prev = last, last = i;
        if (p->r[i].t == R_ALLOC && p->r[i].a >= nbuf) nbuf = p->r[i].a + 1;
    }
    if (prev == SIZE_MAX) return;
    size_t *live = orr_xcalloc(nbuf ? nbuf : 1, sizeof *live); /* record index + 1 of a live ALLOC */
    for (size_t i = 0; i < prev; i++) {
        const erec *r = &p->r[i];
        if (r->t == R_ALLOC) live[r->a] = i + 1;
        else if (r->t == R_FREE && r->a < nbuf) live[r->a] = 0;
    }
    erec *out = orr_xmalloc(p->nr * sizeof *out);
    size_t n = 0;
    for (uint32_t b = 0; b < nbuf; b++)
        if (live[b]) out[n++] = p->r[live[b] - 1];
    for (size_t i = prev + 1; i < last; i++) out[n++] = p->r[i];
    free(live);
    free(p->r);
    p->r = out;
    p->nr = n;
    p->cap_r = p->nr;
}

/* Refuses a run that called an entry point the emulator does not implement, naming them. */
static int check_unimplemented(const collator *k, orr_err *err)
{
    const eproc *first = NULL;
    for (size_t i = 0; i < k->np && !first; i++)
        if (k->p[i].unimplemented) first = &k->p[i];
    if (!first) return 0;
    orr_buf b = {0};
    for (size_t i = 0; i < k->info->napis; i++)
        if (k->info->apis[i].unimplemented) orr_buf_printf(&b, "%s%s", b.n ? ", " : "", k->info->apis[i].name);
    int rc = orr_fail(err, "emulation traces in %s: the program called entry points the emulator does not implement "
                           "(%s; first in %s), so it did not run as on a GPU: no prediction", k->dir, b.s, first->path);
    orr_buf_free(&b);
    return rc;
}

/* With iteration marks (two or more in every process, the same number), keeps the last iteration. */
static int select_iteration(collator *k, orr_err *err)
{
    const eproc *ref = NULL;
    for (size_t i = 0; i < k->np; i++) {
        const eproc *p = &k->p[i];
        if (!p->active) continue;
        if (!ref) ref = p;
        else if (p->marks != ref->marks)
            return orr_fail(err, "emulation traces in %s: %s has %u iteration marks but %s has %u (every rank must "
                                 "run the same number of optimizer steps)", k->dir, ref->path, ref->marks, p->path,
                            p->marks);
    }
    k->info->iterations = ref ? ref->marks : 0;
    if (!ref || ref->marks < 2 || k->live) return 0; /* --live times every record: the whole run */
    for (size_t i = 0; i < k->np; i++)
        if (k->p[i].active) keep_last_iteration(&k->p[i]);
    return 0;
}

/* A process that drove several devices (cudaSetDevice, ncclCommInitAll) becomes one eproc per device
 * it did work on, each a rank of the job: the device's records and communicators, and the process's
 * host time, iteration marks and NCCL group brackets (one host thread issued the work of all of
 * them). The process itself stays, as split, for its entry points. */
typedef struct dev_recs {
    erec *r;
    size_t n, cap;
} dev_recs;

static void emit(dev_recs *out, uint64_t *n, uint32_t d, const erec *r)
{
    if (out) ORR_PUSH(out[d].r, out[d].n, out[d].cap, *r);
    n[d]++;
}

/* Streams a device's records name (their stream field). */
static int has_stream(uint8_t t)
{
    return t == R_KERNEL || t == R_GEMM || t == R_LIB || t == R_COPY || t == R_SET || t == R_EREC || t == R_SWAIT || t == R_SSYNC ||
           t == R_COLL || t == R_SEND || t == R_RECV;
}

/* The records of each device (with work) of a process that drove several: the device's own, the
 * process's (host time, marks, NCCL group brackets), and what ties the devices as on the real
 * GPUs (*remote set when any):
 *  - a stream waiting on an event last recorded on another device waits on that record on the
 *    other device's rank (sub 1, b that device, n its records of the event so far); a record
 *    replaces an event's state on whichever device (PyTorch reuses a destroyed event's slot);
 *  - a host synchronisation on one device (stream, device, event sync, a synchronous copy) holds up
 *    the one host thread, so every other device's rank waits on the host there too (R_RSYNC): on
 *    the synchronised device, a record of event 65536 + stream after the work it waits for, and
 *    the others wait for that record.
 * out NULL: counts only (n[d], for the memory budget). */
static void route_devices(const eproc *p, const uint64_t *work, dev_recs *out, uint64_t *n, int *remote)
{
    uint8_t *ev_dev = orr_xmalloc(65536);
    memset(ev_dev, EDEV_ALL, 65536);
    uint8_t(*seen)[32] = orr_xcalloc(EDEV_MAX, sizeof *seen); /* streams each device used */
    orr_map count = {0}; /* event << 8 | device -> records of the event on the device */
    for (size_t i = 0; i < p->nr; i++) {
        erec r = p->r[i];
        if (r.dev == EDEV_ALL) {
            for (uint32_t d = 0; d < EDEV_MAX; d++)
                if (work[d]) emit(out, n, d, &r);
            continue;
        }
        uint32_t a = r.dev;
        if (has_stream(r.t)) seen[a][(uint32_t)r.stream / 8] |= (uint8_t)(1u << ((uint32_t)r.stream % 8));
        if (r.t == R_EREC) {
            ev_dev[r.a] = (uint8_t)a;
            uint32_t *c = orr_map_get(&count, (uint64_t)r.a << 8 | a);
            if (c) (*c)++;
            else orr_map_put(&count, (uint64_t)r.a << 8 | a, 1);
        } else if (r.t == R_SWAIT && ev_dev[r.a] != EDEV_ALL && ev_dev[r.a] != a) {
            r.sub = 1;
            r.b = ev_dev[r.a];
            r.n = *orr_map_get(&count, (uint64_t)r.a << 8 | r.b);
            *remote = 1;
        }
        int sync = r.t == R_SSYNC || r.t == R_DSYNC || (r.t == R_COPY && r.sync);
        if (r.t == R_COPY) emit(out, n, a, &r); /* the host waits for the copy: the record after it */
        if (sync) {
            for (uint32_t s = 0; s < 255; s++) {
                if (r.t == R_DSYNC ? !(seen[a][s / 8] & (1u << (s % 8))) : s != (uint32_t)r.stream) continue;
                erec e = {.t = R_EREC, .dev = (uint8_t)a, .stream = (int32_t)s, .a = 65536 + s, .line = r.line};
                uint32_t *c = orr_map_get(&count, (uint64_t)e.a << 8 | a), cnt = c ? ++*c : 1;
                if (!c) orr_map_put(&count, (uint64_t)e.a << 8 | a, 1);
                emit(out, n, a, &e);
                for (uint32_t b = 0; b < EDEV_MAX; b++) {
                    if (!work[b] || b == a) continue;
                    erec w = {.t = R_RSYNC, .dev = (uint8_t)b, .a = e.a, .b = a, .n = cnt, .line = r.line};
                    emit(out, n, b, &w);
                    *remote = 1;
                }
            }
        } else if (r.t == R_ESYNC && ev_dev[r.a] == a) {
            uint32_t cnt = *orr_map_get(&count, (uint64_t)r.a << 8 | a);
            for (uint32_t b = 0; b < EDEV_MAX; b++) {
                if (!work[b] || b == a) continue;
                erec w = {.t = R_RSYNC, .dev = (uint8_t)b, .a = r.a, .b = a, .n = cnt, .line = r.line};
                emit(out, n, b, &w);
                *remote = 1;
            }
        }
        if (r.t != R_COPY) emit(out, n, a, &r);
    }
    free(ev_dev);
    free(seen);
    orr_map_free(&count);
}

/* A process that drove several devices (cudaSetDevice, ncclCommInitAll) becomes one eproc per device
 * it did work on, each a rank of the job, with route_devices' records. The process itself stays,
 * as split, for its entry points. */
static int split_devices(collator *k, size_t pi, orr_err *err)
{
    uint64_t work[EDEV_MAX] = {0}, ndev = 0, n[EDEV_MAX] = {0}, total = 0;
    const eproc *p = &k->p[pi];
    for (size_t i = 0; i < p->nr; i++)
        if (p->r[i].dev != EDEV_ALL) work[p->r[i].dev]++;
    if (p->oom) work[p->oom_dev]++;
    for (uint32_t d = 0; d < EDEV_MAX; d++) ndev += work[d] > 0;
    if (ndev < 2) return 0;
    /* the devices' records and their ops, counted before they are made, while the process's are
     * still held */
    int remote = 0;
    route_devices(p, work, NULL, n, &remote);
    for (uint32_t d = 0; d < EDEV_MAX; d++) total += n[d];
    if (mem_charge(k, p, total * EMU_BYTES_PER_LINE, err) < 0) return -1;
    dev_recs *out = orr_xcalloc(EDEV_MAX, sizeof *out);
    memset(n, 0, sizeof n);
    route_devices(p, work, out, n, &k->remote);
    for (uint32_t d = 0; d < EDEV_MAX; d++) {
        if (!work[d]) continue;
        eproc c;
        memset(&c, 0, sizeof c);
        p = &k->p[pi]; /* the table may have moved */
        snprintf(c.path, sizeof c.path, "%.560s (device %u)", p->path, d);
        c.pid = p->pid;
        c.env_rank = p->env_rank;
        c.names = p->names, c.nnames = p->nnames;
        c.tags = p->tags, c.ntags = p->ntags;
        c.borrowed = 1;
        c.r = out[d].r, c.nr = out[d].n, c.cap_r = out[d].cap;
        for (size_t m = 0; m < p->nmem; m++)
            if (p->mem[m].dev == d) ORR_PUSH(c.mem, c.nmem, c.cap_mem, p->mem[m]);
        c.active = 1;
        c.marks = p->marks;
        c.nbufs = p->nbufs;
        if (p->oom && p->oom_dev == d) c.oom = 1, c.oom_bytes = p->oom_bytes, c.oom_used = p->oom_used;
        c.dev = (int)d;
        c.phys = pi;
        ORR_PUSH(k->p, k->np, k->cap_p, c);
    }
    free(out);
    eproc *q = &k->p[pi];
    for (size_t m = 0; m < q->nmem; m++)
        if (!work[q->mem[m].dev]) /* a device that joined a communicator and did nothing else */
            return orr_fail(err, "emulation trace %s: device %u joined communicator %s but did no GPU work", q->path,
                            q->mem[m].dev, k->c[q->mem[m].comm].id);
    k->mem_bytes -= (uint64_t)q->nr * EMU_BYTES_PER_LINE; /* the process's records, freed */
    free(q->r);
    q->r = NULL;
    q->nr = q->cap_r = 0;
    free(q->mem);
    q->mem = NULL;
    q->nmem = q->cap_mem = 0;
    q->active = 0;
    q->split = 1;
    return 0;
}

static int by_path(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int read_dir(collator *k, const char *dir, orr_err *err)
{
    DIR *d = opendir(dir);
    if (!d) return orr_fail(err, "emulation trace directory %s: cannot open", dir);
    char **paths = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, "trace-", 6) == 0 && l > 10 && strcmp(e->d_name + l - 4, ".txt") == 0) {
            char *s = orr_xmalloc(strlen(dir) + l + 2);
            sprintf(s, "%s/%s", dir, e->d_name);
            ORR_PUSH(paths, n, cap, s);
        }
    }
    closedir(d);
    if (n) qsort(paths, n, sizeof *paths, by_path);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            eproc p;
            memset(&p, 0, sizeof p);
            snprintf(p.path, sizeof p.path, "%s", paths[i]);
            p.dev = -1;
            p.phys = k->np;
            ORR_PUSH(k->p, k->np, k->cap_p, p);
            rc = read_trace(k, &k->p[k->np - 1], err);
        }
        free(paths[i]);
    }
    free(paths);
    if (rc == 0 && n == 0) rc = orr_fail(err, "emulation trace directory %s: no trace-*.txt (did the program use CUDA?)", dir);
    return rc;
}

/* Processes that drove several devices, without a communicator spanning every device: ranks in the
 * order of the processes (by RANK when every one has it, else by trace file) and of their devices.
 * Returns -1 when two processes claim the same RANK. */
static int order_by_device(collator *k, int all_env)
{
    size_t n = 0;
    uint64_t *key = orr_xmalloc((k->np ? k->np : 1) * sizeof *key);
    for (size_t i = 0; i < k->np; i++) {
        const eproc *p = &k->p[i];
        if (!p->active) continue;
        uint64_t proc = all_env ? (uint64_t)p->env_rank : (uint64_t)p->phys;
        key[n++] = (proc * EDEV_MAX + (uint64_t)(p->dev < 0 ? 0 : p->dev)) << 32 | (uint64_t)i;
    }
    for (size_t a = 1; a < n; a++) /* insertion sort: a job has few processes */
        for (size_t b = a; b > 0 && key[b - 1] > key[b]; b--) {
            uint64_t t = key[b];
            key[b] = key[b - 1];
            key[b - 1] = t;
        }
    int rc = 0;
    for (size_t j = 0; j < n; j++) {
        if (j > 0 && key[j] >> 32 == key[j - 1] >> 32) rc = -1;
        k->p[key[j] & 0xffffffffu].grank = (uint32_t)j;
    }
    free(key);
    return rc;
}

/* Global ranks of the active processes: RANK, else the rank in a communicator spanning all. */
static int assign_ranks(collator *k, uint32_t nact, orr_err *err)
{
    int all_env = 1, devices = 0; /* devices: some process drove several (its RANK is not a GPU's) */
    for (size_t i = 0; i < k->np; i++) {
        if (k->p[i].active && k->p[i].env_rank < 0) all_env = 0;
        devices |= k->p[i].split;
    }
    if (all_env && !devices) {
        for (size_t i = 0; i < k->np; i++)
            if (k->p[i].active) k->p[i].grank = (uint32_t)k->p[i].env_rank;
    } else if (nact == 1) {
        for (size_t i = 0; i < k->np; i++)
            if (k->p[i].active) k->p[i].grank = 0;
    } else {
        /* the first communicator (in trace order) that every active process belongs to: each process
         * counted once per communicator of nact ranks it joined, in one pass over the memberships */
        int found = 0;
        uint32_t *have = orr_xcalloc(k->nc ? k->nc : 1, sizeof *have);
        uint32_t *last = orr_xmalloc((k->nc ? k->nc : 1) * sizeof *last);
        for (size_t ci = 0; ci < k->nc; ci++) last[ci] = UINT32_MAX;
        for (size_t i = 0; i < k->np; i++) {
            if (!k->p[i].active) continue;
            for (size_t m = 0; m < k->p[i].nmem; m++) {
                const emember *e = &k->p[i].mem[m];
                if (e->nranks == nact && last[e->comm] != (uint32_t)i) last[e->comm] = (uint32_t)i, have[e->comm]++;
            }
        }
        size_t first = 0;
        while (first < k->nc && have[first] != nact) first++;
        if (first < k->nc) {
            found = 1;
            for (size_t i = 0; i < k->np; i++) {
                if (!k->p[i].active) continue;
                for (size_t m = 0; m < k->p[i].nmem; m++)
                    if (k->p[i].mem[m].comm == first && k->p[i].mem[m].nranks == nact) {
                        k->p[i].grank = k->p[i].mem[m].rank;
                        break;
                    }
            }
        }
        free(have);
        free(last);
        if (!found && devices && order_by_device(k, all_env) == 0) found = 1;
        if (!found)
            return orr_fail(err, "emulation traces in %s: %u processes used a GPU but neither RANK is set in their "
                                 "environment nor do they share a communicator of all of them; cannot tell their "
                                 "global ranks",
                            k->np ? k->p[0].path : "?", nact);
    }
    /* ranks must be 0..nact-1, each once */
    char *seen = orr_xcalloc(nact, 1);
    int rc = 0;
    for (size_t i = 0; i < k->np && rc == 0; i++) {
        if (!k->p[i].active) continue;
        if (k->p[i].grank >= nact || seen[k->p[i].grank])
            rc = orr_fail(err, "emulation trace %s: global rank %u is out of range or taken twice (%u processes used "
                               "a GPU)",
                          k->p[i].path, k->p[i].grank, nact);
        else seen[k->p[i].grank] = 1;
    }
    free(seen);
    return rc;
}

/* A communicator's role: from its process group's name (DeviceMesh's dimension names, PyTorch's
 * "mesh_tp" etc.: tp, pp, cp, ep, and dp, fsdp, ddp, dp_shard, dp_replicate as data parallel);
 * for other names and none, data parallel when it spans the whole job, else other. */
static orr_comm_role comm_role(const ecomm *c, uint32_t world)
{
    const char *l = c->label;
    if (strncmp(l, "mesh_", 5) == 0) l += 5;
    static const struct { const char *name; orr_comm_role role; } m[] = {
        {"tp", ORR_ROLE_TP}, {"pp", ORR_ROLE_PP}, {"cp", ORR_ROLE_CP}, {"ep", ORR_ROLE_EP}, {"dp", ORR_ROLE_DP},
        {"fsdp", ORR_ROLE_DP}, {"ddp", ORR_ROLE_DP}, {"dp_shard", ORR_ROLE_DP}, {"dp_replicate", ORR_ROLE_DP}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(l, m[i].name) == 0) return m[i].role;
    return c->nranks == world && world > 1 ? ORR_ROLE_DP : ORR_ROLE_OTHER;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The communicators as groups: their rank counts agree across the memberships, every rank joined once
 * by a process that did GPU work. Two passes over all memberships, whatever the number of
 * communicators (a pass per communicator was quadratic in a trace that names many). */
static int build_comms(collator *k, orr_workload *w, orr_err *err)
{
    int rc = 0;
    size_t *joined = orr_xcalloc(k->nc ? k->nc : 1, sizeof *joined);
    for (size_t ci = 0; ci < k->nc; ci++) k->c[ci].nranks = 0;
    for (size_t i = 0; i < k->np && rc == 0; i++)
        for (size_t m = 0; m < k->p[i].nmem && rc == 0; m++) {
            const emember *e = &k->p[i].mem[m];
            ecomm *c = &k->c[e->comm];
            if (c->nranks && c->nranks != e->nranks)
                rc = orr_fail(err, "emulation trace %s: communicator %s has %u ranks here and %u elsewhere",
                              k->p[i].path, c->id, e->nranks, c->nranks);
            c->nranks = e->nranks;
            joined[e->comm]++;
        }
    for (size_t ci = 0; ci < k->nc && rc == 0; ci++) {
        ecomm *c = &k->c[ci];
        if (c->nranks == 0)
            rc = orr_fail(err, "emulation traces in %s: communicator %s is used but never created", k->dir, c->id);
        else if (c->nranks > joined[ci]) /* each rank is one process's membership */
            rc = orr_fail(err, "emulation traces in %s: communicator %s has %u ranks and %zu of them never "
                               "joined (a process of the job was not traced?)",
                          k->dir, c->id, c->nranks, (size_t)c->nranks - joined[ci]);
        else {
            c->grank = orr_xmalloc(c->nranks * sizeof *c->grank);
            for (uint32_t r = 0; r < c->nranks; r++) c->grank[r] = UINT32_MAX;
        }
    }
    free(joined);
    for (size_t i = 0; i < k->np && rc == 0; i++)
        for (size_t m = 0; m < k->p[i].nmem && rc == 0; m++) {
            const emember *e = &k->p[i].mem[m];
            ecomm *c = &k->c[e->comm];
            if (!k->p[i].active)
                rc = orr_fail(err, "emulation trace %s: joined communicator %s but did no GPU work", k->p[i].path, c->id);
            else if (c->grank[e->rank] != UINT32_MAX)
                rc = orr_fail(err, "emulation trace %s: rank %u of communicator %s is claimed twice", k->p[i].path,
                              e->rank, c->id);
            else
                c->grank[e->rank] = k->p[i].grank;
        }
    for (size_t ci = 0; ci < k->nc && rc == 0; ci++) {
        ecomm *c = &k->c[ci];
        uint32_t *members = orr_xmalloc(c->nranks * sizeof *members);
        for (uint32_t r = 0; r < c->nranks && rc == 0; r++) {
            if (c->grank[r] == UINT32_MAX)
                rc = orr_fail(err, "emulation traces in %s: rank %u of communicator %s (%u ranks) never joined (a "
                                   "process of the job was not traced?)",
                              k->dir, r, c->id, c->nranks);
            members[r] = c->grank[r];
        }
        if (rc == 0) {
            qsort(members, c->nranks, sizeof *members, cmp_u32); /* ascending, as groups keep them */
            char label[32];
            if (c->label[0]) snprintf(label, sizeof label, "%s", c->label);
            else snprintf(label, sizeof label, "comm%zu", ci);
            c->group = orr_workload_add_group(w, comm_role(c, w->world_size), members, c->nranks, label);
        }
        free(members);
    }
    return rc;
}

/* Host <-> device copies cross PCIe: 24 GB/s, what a pinned cudaMemcpy reaches on a PCIe Gen4 x16
 * link (Gen5 parts reach about twice that; this underestimates their speed for large copies). */
#define PCIE_BPS 24e9

static orr_dtype dtype_of_size(int64_t bytes)
{
    return bytes == 2 ? ORR_BF16 : bytes == 1 ? ORR_FP8 : ORR_FP32;
}

typedef struct kdb {
    sqlite3 *db;
    sqlite3_stmt *q;
} kdb;

static int kdb_open(kdb *d, const char *path, orr_err *err)
{
    memset(d, 0, sizeof d[0]);
    if (!path) return 0;
    if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, "SELECT dur_ps FROM kernels WHERE gpu = ?1 AND name = ?2 AND grid = ?3 AND block = ?4",
                           -1, &d->q, NULL) != SQLITE_OK) {
        orr_fail(err, "--kernel-db %s: not a kernel database (%s)", path, d->db ? sqlite3_errmsg(d->db) : "cannot open");
        sqlite3_close(d->db);
        d->db = NULL;
        return -1;
    }
    return 0;
}

static int64_t kdb_get(kdb *d, const char *gpu, const char *name, const uint32_t g[6])
{
    if (!d->q) return 0;
    char grid[48], block[48];
    snprintf(grid, sizeof grid, "%u,%u,%u", g[0], g[1], g[2]);
    snprintf(block, sizeof block, "%u,%u,%u", g[3], g[4], g[5]);
    sqlite3_reset(d->q);
    sqlite3_bind_text(d->q, 1, gpu, -1, SQLITE_STATIC);
    sqlite3_bind_text(d->q, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(d->q, 3, grid, -1, SQLITE_STATIC);
    sqlite3_bind_text(d->q, 4, block, -1, SQLITE_STATIC);
    int64_t v = 0;
    if (sqlite3_step(d->q) == SQLITE_ROW) v = sqlite3_column_int64(d->q, 0);
    return v > 0 ? v : 0;
}

static void kdb_close(kdb *d)
{
    sqlite3_finalize(d->q);
    sqlite3_close(d->db);
}

/* The class of an untagged kernel from its name (the families of PyTorch's, FlashAttention's,
 * Apex's and CUTLASS's kernel names); elementwise when nothing matches. */
static uint8_t class_of_kernel(const char *name)
{
    static const struct { const char *part; orr_op_class cls; } m[] = {
        {"flash_bwd", ORR_CLS_ATTENTION_BWD}, {"fmha_bwd", ORR_CLS_ATTENTION_BWD},
        {"attention_backward", ORR_CLS_ATTENTION_BWD}, {"flash", ORR_CLS_ATTENTION_FWD},
        {"fmha", ORR_CLS_ATTENTION_FWD}, {"attention", ORR_CLS_ATTENTION_FWD}, {"layer_norm", ORR_CLS_NORM},
        {"LayerNorm", ORR_CLS_NORM}, {"rms_norm", ORR_CLS_NORM}, {"RMSNorm", ORR_CLS_NORM},
        {"softmax", ORR_CLS_REDUCTION}, {"Softmax", ORR_CLS_REDUCTION}, {"reduce_kernel", ORR_CLS_REDUCTION},
        {"nll_loss", ORR_CLS_REDUCTION}, {"adam", ORR_CLS_OPTIMIZER}, {"Adam", ORR_CLS_OPTIMIZER},
        {"multi_tensor_apply", ORR_CLS_OPTIMIZER}, {"gemm", ORR_CLS_GEMM}, {"Gemm", ORR_CLS_GEMM},
        {"cutlass", ORR_CLS_GEMM}, {"xmma", ORR_CLS_GEMM}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strstr(name, m[i].part)) return (uint8_t)m[i].cls;
    return ORR_CLS_ELEMENTWISE;
}

/* An op of the emulated program: no layer, micro-batch or training phase is known. */
static orr_op plain_op(orr_op_kind kind, uint8_t stream, uint16_t name)
{
    orr_op op;
    memset(&op, 0, sizeof op);
    op.kind = (uint8_t)kind;
    op.stream = stream;
    op.name = name;
    op.layer = ORR_NO_LAYER;
    op.mb = ORR_NO_MB;
    op.phase = ORR_PHASE_OTHER;
    return op;
}

/* ncclGroupEnd: the host time spent inside the group, then the group's operations, launched
 * together; those on one stream are posted as one batch (ORR_OPF_BATCH_NEXT: batched with the next
 * op on the same stream), so a send and a recv to the same peer progress together as NCCL fuses
 * them, whatever order the two ranks issued them in. */
/* Host time added to a host op: saturating, so a trace of many long gaps cannot wrap the clock. */
static int64_t host_ps_add(int64_t ps, uint64_t ns)
{
    int64_t add = ns > (uint64_t)(INT64_MAX / ORR_PS_PER_NS) ? INT64_MAX : (int64_t)ns * ORR_PS_PER_NS;
    return ps > INT64_MAX - add ? INT64_MAX : ps + add;
}

static void group_end(orr_workload *w, orr_rank *rk, orr_op *ops, size_t n, uint64_t host_ns)
{
    if (host_ns) {
        orr_op h = plain_op(ORR_OP_HOST, 0, orr_workload_name(w, "host"));
        h.dur_ps = host_ps_add(0, host_ns);
        if (rk->nops && rk->ops[rk->nops - 1].kind == ORR_OP_HOST)
            rk->ops[rk->nops - 1].dur_ps = host_ps_add(rk->ops[rk->nops - 1].dur_ps, host_ns);
        else orr_rank_push(rk, &h);
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++)
            if (ops[j].stream == ops[i].stream) {
                ops[i].flags |= ORR_OPF_BATCH_NEXT;
                break;
            }
        orr_rank_push(rk, &ops[i]);
    }
}

/* The global rank of device dev of p's process (split_devices made an eproc of it: it recorded
 * work there). */
static uint32_t device_rank(const collator *k, const eproc *p, uint32_t dev)
{
    for (size_t i = 0; i < k->np; i++)
        if (k->p[i].active && k->p[i].phys == p->phys && k->p[i].dev == (int)dev) return k->p[i].grank;
    return p->grank;
}

static int lower(collator *k, eproc *p, orr_workload *w, uint32_t ri, const orr_gpu *g, kdb *db, orr_err *err)
{
    orr_rank *rk = &w->ranks[ri];
    orr_emu_info *in = k->info;
    uint32_t *seq = orr_xcalloc(k->nc ? k->nc : 1, sizeof *seq);
    int in_group = 0;
    /* NCCL launches a group's operations at ncclGroupEnd: they wait here, while the stream waits
     * and event records issued inside the group (PyTorch's syncStream before each p2p op) take
     * effect on their streams at once, ahead of the group's launch */
    orr_op *gops = NULL;
    size_t ngops = 0, capgops = 0;
    uint64_t group_host_ns = 0;
    int rc = 0;
    for (size_t i = 0; i < p->nr && rc == 0; i++) {
        const erec *r = &p->r[i];
        orr_op op = plain_op(ORR_OP_HOST, (uint8_t)r->stream, 0);
        switch (r->t) {
        case R_HOST:
            if (k->no_host_time) continue;
            if (in_group) { /* host time inside an NCCL group: counted after it, so the group stays one batch */
                group_host_ns += r->n;
                continue;
            }
            if (rk->nops && rk->ops[rk->nops - 1].kind == ORR_OP_HOST) {
                rk->ops[rk->nops - 1].dur_ps = host_ps_add(rk->ops[rk->nops - 1].dur_ps, r->n);
                continue;
            }
            op.kind = ORR_OP_HOST;
            op.dur_ps = host_ps_add(0, r->n);
            op.name = orr_workload_name(w, "host");
            break;
        case R_KERNEL: {
            const char *name = p->names[r->a];
            op.kind = ORR_OP_KERNEL;
            op.name = orr_workload_name(w, name);
            op.dtype = ORR_BF16;
            in->kernels++;
            int64_t d = kdb_get(db, g->name, name, r->dims); /* a measured time first (--profile) */
            if (d > 0) {
                op.cls = r->x >= 0 ? p->tags[r->x].cls : ORR_CLS_OTHER;
                op.dur_ps = d;
                in->kernels_db++;
                if (r->x >= 0) k->flops += p->tags[r->x].flops / p->tags[r->x].kernels;
            } else if (r->x >= 0 && !p->tags[r->x].lib) {
                const etag *t = &p->tags[r->x];
                op.cls = t->cls;
                op.flops = t->flops / t->kernels;
                op.bytes = (uint64_t)llround(t->bytes / t->kernels);
                in->kernels_tagged++;
                k->flops += op.flops;
            } else {
                /* launch geometry only: moving 8 bytes per thread, its class from its name (also the
                 * other kernels of an operator whose work a library op carries: a cuDNN convolution
                 * under aten.convolution, whose bias add is such a kernel) */
                double threads = (double)r->dims[0] * r->dims[1] * r->dims[2] * r->dims[3] * r->dims[4] * r->dims[5];
                op.cls = class_of_kernel(name);
                op.flops = threads;
                op.bytes = (uint64_t)(threads * 8.0);
                in->kernels_geometry++;
            }
            break;
        }
        case R_GEMM: {
            op.kind = ORR_OP_KERNEL;
            op.cls = ORR_CLS_GEMM;
            op.dtype = r->sub;
            op.name = orr_workload_name(w, "cublas_gemm");
            memcpy(op.dims, r->dims, sizeof op.dims);
            double m = r->dims[0], n = r->dims[1], kk = r->dims[2], b = r->dims[3];
            double eb = orr_dtype_bytes((orr_dtype)r->sub);
            op.flops = 2.0 * m * n * kk * b;
            op.bytes = (uint64_t)((m * kk + kk * n + m * n) * b * eb);
            in->kernels++;
            in->kernels_gemm++;
            k->flops += op.flops;
            break;
        }
        case R_LIB: /* a library op of known shape and cost (cuDNN): priced by its class's model */
            op.kind = ORR_OP_KERNEL;
            op.cls = r->sub;
            op.dtype = r->sync;
            op.name = orr_workload_name(w, p->names[r->a]);
            memcpy(op.dims, r->lib.shape, sizeof r->lib.shape);
            op.flops = r->lib.flops;
            op.bytes = r->n;
            /* every library op is cuDNN's: its attention runs at cuDNN's fused-attention rates */
            if (op.cls == ORR_CLS_ATTENTION_FWD || op.cls == ORR_CLS_ATTENTION_BWD) op.flags |= ORR_OPF_ATTN_CUDNN;
            in->kernels++;
            in->kernels_lib++;
            k->flops += op.flops;
            break;
        case R_COPY:
            op.kind = ORR_OP_MEMCPY;
            op.bytes = r->n;
            op.name = orr_workload_name(w, r->sub == CP_H2D ? "memcpy_h2d" : r->sub == CP_D2H ? "memcpy_d2h"
                                           : r->sub == CP_P2P ? "memcpy_p2p" : "memcpy_d2d");
            if (r->sub == CP_P2P) /* between two devices: over NVLink (PCIe without it) */
                op.dur_ps = (int64_t)llround((double)r->n / (g->nvlink_Bps > 0 ? g->nvlink_Bps : PCIE_BPS) * 1e12) + 1;
            else if (r->sub != CP_D2D) op.dur_ps = (int64_t)llround((double)r->n / PCIE_BPS * 1e12) + 1;
            in->copies++;
            break;
        case R_SET:
            op.kind = ORR_OP_MEMSET;
            op.bytes = r->n;
            op.name = orr_workload_name(w, "memset");
            break;
        case R_ALLOC:
        case R_FREE:
            op.kind = r->t == R_ALLOC ? ORR_OP_ALLOC : ORR_OP_FREE;
            op.a = r->a;
            op.bytes = r->n;
            op.cls = ORR_MEM_OTHER;
            op.stream = 0;
            op.name = orr_workload_name(w, r->t == R_ALLOC ? "cudaMalloc" : "cudaFree");
            if (r->t == R_ALLOC) in->allocs++;
            break;
        case R_EREC:
            op.kind = ORR_OP_EVENT_RECORD, op.a = r->a, op.name = orr_workload_name(w, "event_record");
            if (k->live && r->b) op.seq = r->b, op.dims[0] = (uint32_t)r->dev + 1; /* the program's own record */
            break;
        case R_SWAIT:
            op.kind = ORR_OP_STREAM_WAIT, op.a = r->a, op.name = orr_workload_name(w, "stream_wait");
            if (r->sub) { /* on the event of another device of the process: that device's rank */
                op.flags |= ORR_OPF_REMOTE;
                op.dims[0] = device_rank(k, p, r->b);
                op.dims[1] = (uint32_t)r->n;
            }
            break;
        case R_ESYNC: op.kind = ORR_OP_EVENT_SYNC, op.a = r->a, op.name = orr_workload_name(w, "event_sync"); break;
        case R_SSYNC: op.kind = ORR_OP_STREAM_SYNC, op.name = orr_workload_name(w, "stream_sync"); break;
        case R_DSYNC: op.kind = ORR_OP_DEVICE_SYNC, op.name = orr_workload_name(w, "device_sync"); break;
        case R_RSYNC: /* the host synchronised with another device of the process */
            op.kind = ORR_OP_EVENT_SYNC, op.a = r->a, op.name = orr_workload_name(w, "host_sync_other_device");
            op.stream = 0;
            op.flags |= ORR_OPF_REMOTE;
            op.dims[0] = device_rank(k, p, r->b);
            op.dims[1] = (uint32_t)r->n;
            break;
        case R_COLL: {
            const ecomm *c = &k->c[r->a];
            uint64_t n = c->nranks, bytes = r->n * (uint64_t)r->x;
            op.kind = ORR_OP_COLL;
            op.cls = r->sub;
            op.dtype = (uint8_t)dtype_of_size(r->x);
            op.a = c->group;
            op.seq = seq[r->a]++;
            op.role = w->groups[c->group].role;
            /* NCCL's per-rank buffer convention of workload.h */
            op.bytes = r->sub == ORR_COLL_ALLGATHER || r->sub == ORR_COLL_REDUCESCATTER || r->sub == ORR_COLL_ALLTOALL
                           ? bytes * n : bytes;
            op.name = orr_workload_name(w, orr_coll_kind_name((orr_coll_kind)r->sub));
            in->collectives++;
            if (r->sub == ORR_COLL_ALLTOALL) in->alltoall_bytes += op.bytes;
            break;
        }
        case R_SEND:
        case R_RECV: {
            const ecomm *c = &k->c[r->a];
            if (r->b >= c->nranks) {
                rc = bad(err, p, r->line, "peer rank beyond the communicator's size");
                continue;
            }
            if (c->grank[r->b] == p->grank) {
                /* to itself (all_to_all_single's own chunk): NCCL copies it on the device; the
                 * receive is that same copy */
                if (r->t == R_RECV) continue;
                op.kind = ORR_OP_MEMCPY;
                op.bytes = r->n * (uint64_t)r->x;
                op.name = orr_workload_name(w, "memcpy_d2d");
                in->copies++;
                break;
            }
            op.kind = r->t == R_SEND ? ORR_OP_SEND : ORR_OP_RECV;
            op.a = c->grank[r->b];
            op.seq = c->group; /* tag: order is kept per communicator, as NCCL keeps it */
            op.bytes = r->n * (uint64_t)r->x;
            op.dtype = (uint8_t)dtype_of_size(r->x);
            op.role = w->groups[c->group].role;
            op.name = orr_workload_name(w, r->t == R_SEND ? "nccl_send" : "nccl_recv");
            in->p2p++;
            if (r->t == R_SEND) in->p2p_bytes += op.bytes;
            break;
        }
        case R_GS:
            in_group = 1;
            continue;
        case R_GE:
            in_group = 0;
            group_end(w, rk, gops, ngops, group_host_ns);
            ngops = 0;
            group_host_ns = 0;
            continue;
        default: continue;
        }
        if (in_group && (op.kind == ORR_OP_COLL || op.kind == ORR_OP_SEND || op.kind == ORR_OP_RECV)) {
            orr_grow((void **)&gops, &capgops, ngops + 1, sizeof *gops);
            gops[ngops++] = op;
            continue;
        }
        orr_rank_push(rk, &op);
        /* a synchronous cudaMemcpy returns when the copy is done */
        if (r->t == R_COPY && r->sync) {
            orr_op s = plain_op(ORR_OP_STREAM_SYNC, op.stream, orr_workload_name(w, "stream_sync"));
            orr_rank_push(rk, &s);
        }
    }
    if (ngops || group_host_ns) group_end(w, rk, gops, ngops, group_host_ns); /* a group the program left open */
    free(gops);
    free(seq);
    return rc;
}

/* Hash of a rank's op sequence, host durations left out (they differ run to run). */
static uint64_t rank_hash(const orr_rank *r)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < r->nops; i++) {
        const orr_op *o = &r->ops[i];
        uint64_t v = (uint64_t)o->kind | (uint64_t)o->stream << 8 | (uint64_t)o->cls << 16 | (uint64_t)o->dtype << 24 |
                     (uint64_t)o->flags << 32 | (uint64_t)o->name << 40;
        h = orr_hash64(h ^ v);
        h = orr_hash64(h ^ o->bytes);
        h = orr_hash64(h ^ ((uint64_t)o->a << 32 | o->seq));
        if (o->kind != ORR_OP_HOST) h = orr_hash64(h ^ (uint64_t)o->dur_ps);
        uint64_t f;
        memcpy(&f, &o->flops, sizeof f);
        h = orr_hash64(h ^ f ^ ((uint64_t)o->dims[0] << 32 | o->dims[1]) ^ ((uint64_t)o->dims[2] << 16 | o->dims[3]));
    }
    return h;
}

static int ops_equal(const orr_rank *a, const orr_rank *b)
{
    if (a->nops != b->nops) return 0;
    for (size_t i = 0; i < a->nops; i++) {
        orr_op x = a->ops[i], y = b->ops[i];
        if (x.kind == ORR_OP_HOST) x.dur_ps = y.dur_ps = 0;
        if (memcmp(&x, &y, sizeof x) != 0) return 0;
    }
    return 1;
}

/* Keeps one rank of each class of equal op sequences (no p2p: a peer must be simulated). */
static orr_workload *dedup(orr_workload *w)
{
    size_t n = w->nranks;
    uint32_t *rep = orr_xmalloc(n * sizeof *rep);
    uint64_t *h = orr_xmalloc(n * sizeof *h);
    int *p2p = orr_xcalloc(n, sizeof *p2p);
    for (size_t i = 0; i < n; i++) {
        h[i] = rank_hash(&w->ranks[i]);
        for (size_t j = 0; j < w->ranks[i].nops; j++)
            if (w->ranks[i].ops[j].kind == ORR_OP_SEND || w->ranks[i].ops[j].kind == ORR_OP_RECV) p2p[i] = 1;
        rep[i] = (uint32_t)i;
        if (p2p[i]) continue;
        for (size_t j = 0; j < i; j++)
            if (rep[j] == j && !p2p[j] && h[j] == h[i] && ops_equal(&w->ranks[j], &w->ranks[i])) {
                rep[i] = (uint32_t)j;
                break;
            }
    }
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) distinct += rep[i] == i;
    orr_workload *out = w;
    if (distinct < n) {
        out = orr_workload_new(w->world_size, w->gpus_per_node);
        for (size_t i = 0; i < w->nnames; i++) orr_workload_name(out, w->names[i]);
        for (size_t i = 0; i < w->ngroups; i++)
            orr_workload_add_group(out, (orr_comm_role)w->groups[i].role, w->groups[i].members, w->groups[i].size,
                                   w->groups[i].label);
        for (size_t i = 0; i < n; i++) {
            if (rep[i] != i) continue;
            uint32_t weight = 0;
            for (size_t j = 0; j < n; j++) weight += rep[j] == i;
            uint32_t ri = orr_workload_add_rank(out, w->ranks[i].gpu, weight, w->ranks[i].label);
            for (size_t j = 0; j < w->ranks[i].nops; j++) orr_rank_push(&out->ranks[ri], &w->ranks[i].ops[j]);
        }
        orr_workload_free(w);
    }
    free(rep);
    free(h);
    free(p2p);
    return out;
}

static void collator_free(collator *k)
{
    for (size_t i = 0; i < k->np; i++) {
        eproc *p = &k->p[i];
        free(p->r);
        for (size_t j = 0; j < p->nnames && !p->borrowed; j++) free(p->names[j]);
        if (!p->borrowed) {
            free(p->names);
            free(p->tags);
        }
        free(p->mem);
        free(p->er_seq);
    }
    free(k->p);
    for (size_t i = 0; i < k->nc; i++) free(k->c[i].grank);
    free(k->c);
    orr_map_free(&k->comm_map);
    orr_map_free(&k->api_map);
}

/* ---- host time from a run without the PyTorch hook (opts.host_dir; docs/emulate.md "Host time") ----
 *
 * The hook's dispatch mode costs the host far more per operator than the program itself (wrapping
 * the operator's arguments for Python, its bookkeeping), and more than it can take off. So the
 * program is run a second time without the hook, and each process's host time is taken from its
 * twin there, between the same calls: every record but host time and iteration marks (the hook's)
 * must be the same call in the same order (kind, stream, device, bytes; a kernel's name and launch
 * geometry, a GEMM's shape). A program whose path depends on values it reads back (which the hook
 * computes and the run without it reads as zeros) can differ: that process keeps the hooked run's
 * host time. */

static int anchored(const erec *r) { return r->t != R_HOST && r->t != R_MARK; }

static int same_call(const eproc *a, const erec *x, const eproc *b, const erec *y)
{
    if (x->t != y->t || x->stream != y->stream || x->dev != y->dev || x->n != y->n) return 0;
    if (x->t == R_KERNEL || x->t == R_LIB)
        if (strcmp(a->names[x->a], b->names[y->a]) != 0) return 0;
    if (x->t == R_KERNEL || x->t == R_GEMM || x->t == R_LIB) return memcmp(x->dims, y->dims, sizeof x->dims) == 0;
    return 1;
}

/* Replaces a's host records by b's host time between the same calls; 0 (a unchanged) when b's calls
 * differ, -1 when the records would pass the memory budget. */
static int take_host(collator *k, eproc *a, const eproc *b, orr_err *err)
{
    size_t na = 0, nb = 0;
    for (size_t i = 0; i < a->nr; i++) na += (size_t)anchored(&a->r[i]);
    for (size_t i = 0; i < b->nr; i++) nb += (size_t)anchored(&b->r[i]);
    if (na != nb) return 0;
    for (size_t i = 0, j = 0;; i++, j++) {
        while (i < a->nr && !anchored(&a->r[i])) i++;
        while (j < b->nr && !anchored(&b->r[j])) j++;
        if (i == a->nr || j == b->nr) break;
        if (!same_call(a, &a->r[i], b, &b->r[j])) return 0;
    }
    /* b's host time before each of its calls, and after the last */
    if (mem_charge(k, a, (nb + 1) * (sizeof(uint64_t) + sizeof(erec)), err) < 0) return -1;
    uint64_t *gap = orr_xcalloc(nb + 1, sizeof *gap);
    for (size_t i = 0, j = 0; i < b->nr; i++) {
        if (b->r[i].t == R_HOST) gap[j] = gap[j] + b->r[i].n > (uint64_t)EMU_MAX_HOST_NS ? (uint64_t)EMU_MAX_HOST_NS : gap[j] + b->r[i].n;
        else if (anchored(&b->r[i])) j++;
    }
    erec *out = orr_xmalloc((a->nr + nb + 1) * sizeof *out), h;
    memset(&h, 0, sizeof h);
    h.t = R_HOST;
    h.dev = EDEV_ALL;
    size_t n = 0, j = 0;
    for (size_t i = 0; i < a->nr; i++) {
        const erec *r = &a->r[i];
        if (r->t == R_HOST) continue;
        if (anchored(r)) {
            h.n = gap[j++];
            h.line = r->line;
            if (h.n) out[n++] = h;
        }
        out[n++] = *r;
    }
    h.n = gap[nb];
    h.line = a->nr ? a->r[a->nr - 1].line : 0;
    if (h.n) out[n++] = h;
    free(gap);
    free(a->r);
    a->r = out;
    a->nr = a->cap_r = n;
    k->mem_bytes -= (nb + 1) * sizeof(uint64_t);
    return 1;
}

/* What a process's twin has the same: its RANK, or without one -1 - its place by process id among the
 * processes of its run that used a GPU without a RANK (the order they were started in, but for a wrap of
 * the ids). */
static long twin_key(const collator *k, const eproc *p)
{
    if (p->env_rank >= 0) return p->env_rank;
    long n = 0;
    for (size_t i = 0; i < k->np; i++) n += k->p[i].active && k->p[i].env_rank < 0 && k->p[i].pid < p->pid;
    return -1 - n;
}

/* Each process of k that used a GPU takes its host time from its twin in the traces of dir: the
 * process with the same twin_key. A run that cannot be read leaves every process as it was (counted in
 * host_rerun_differ). */
static int host_from_rerun(collator *k, const char *dir, orr_err *err)
{
    collator b;
    orr_emu_info binfo;
    memset(&b, 0, sizeof b);
    memset(&binfo, 0, sizeof binfo);
    b.info = &binfo;
    b.dir = dir;
    b.mem_budget = k->mem_budget > k->mem_bytes ? k->mem_budget - k->mem_bytes : 0;
    orr_err berr = {{0}};
    int read = read_dir(&b, dir, &berr) == 0, rc = 0;
    if (!read) /* the start of the message: it names the file and the line first */
        snprintf(k->info->host_rerun_error, sizeof k->info->host_rerun_error, "%.199s", berr.msg);
    long *bkey = orr_xmalloc((b.np ? b.np : 1) * sizeof *bkey); /* b's twin keys, once */
    for (size_t j = 0; read && j < b.np; j++) bkey[j] = twin_key(&b, &b.p[j]);
    for (size_t i = 0; i < k->np && rc == 0; i++) {
        eproc *a = &k->p[i];
        if (!a->active) continue;
        const eproc *twin = NULL;
        long key = twin_key(k, a);
        for (size_t j = 0; read && j < b.np && !twin; j++)
            if (b.p[j].active && bkey[j] == key) twin = &b.p[j];
        int took = twin ? take_host(k, a, twin, err) : 0;
        if (took < 0) rc = -1;
        else if (took) k->info->host_rerun++;
        else k->info->host_rerun_differ++;
    }
    free(bkey);
    collator_free(&b);
    orr_emu_info_free(&binfo);
    return rc;
}

orr_workload *orr_emu_collate(const orr_emu_opts *o, const orr_gpu *g, const orr_cluster *c, orr_emu_info *info,
                              orr_err *err)
{
    memset(info, 0, sizeof *info);
    collator k;
    memset(&k, 0, sizeof k);
    k.info = info;
    k.dir = o->trace_dir;
    k.no_host_time = o->no_host_time;
    k.live = o->live;
    k.mem_budget = orr_env_limit("ORRERY_EMU_MAX_BYTES", ORR_EMU_MAX_BYTES);
    orr_workload *w = NULL;
    kdb db;
    if (kdb_open(&db, o->kernel_db, err) < 0) return NULL;
    if (read_dir(&k, o->trace_dir, err) < 0 || check_unimplemented(&k, err) < 0 ||
        (o->host_dir && !o->no_host_time && host_from_rerun(&k, o->host_dir, err) < 0) || select_iteration(&k, err) < 0)
        goto out;
    /* after the iteration is chosen, so that waits between devices count the records kept */
    for (size_t i = 0, n = k.np; i < n; i++)
        if (k.p[i].active && split_devices(&k, i, err) < 0) goto out;
    uint32_t nact = 0, nsplit = 0, nchild = 0;
    for (size_t i = 0; i < k.np; i++) {
        nact += (uint32_t)k.p[i].active;
        nsplit += (uint32_t)k.p[i].split;
        nchild += k.p[i].dev >= 0;
    }
    info->processes = nact;
    info->ignored = (uint32_t)(k.np - nact - nsplit);
    info->host_processes = nact - nchild + nsplit;
    if (nact == 0) {
        orr_fail(err, "emulation traces in %s: no process used a GPU", o->trace_dir);
        goto out;
    }
    if (o->gpus && o->gpus != nact) {
        orr_fail(err, "--gpus %u: the program used %u GPUs (%u process%s; a process that drives several devices uses "
                      "a GPU for each)", o->gpus, nact, info->host_processes, info->host_processes == 1 ? "" : "es");
        goto out;
    }
    if (assign_ranks(&k, nact, err) < 0) goto out;
    uint32_t gpn = o->gpus_per_node ? o->gpus_per_node : c->gpus_per_node;
    if (gpn > nact) gpn = nact;
    w = orr_workload_new(nact, gpn);
    if (build_comms(&k, w, err) < 0) goto fail;
    info->comms = (uint32_t)k.nc;
    /* ranks in global-rank order */
    for (uint32_t gr = 0; gr < nact; gr++) {
        for (size_t i = 0; i < k.np; i++) {
            eproc *p = &k.p[i];
            if (!p->active || p->grank != gr) continue;
            char label[48];
            if (p->dev >= 0) snprintf(label, sizeof label, "rank%u pid%ld dev%d", gr, p->pid, p->dev);
            else snprintf(label, sizeof label, "rank%u pid%ld", gr, p->pid);
            uint32_t ri = orr_workload_add_rank(w, gr, 1, label);
            if (o->live) {
                if (!info->rank_env) info->rank_env = orr_xcalloc(nact, sizeof *info->rank_env);
                if (!info->rank_pid) info->rank_pid = orr_xcalloc(nact, sizeof *info->rank_pid);
                info->rank_env[ri] = p->env_rank;
                info->rank_pid[ri] = p->pid;
            }
            if (lower(&k, p, w, ri, g, &db, err) < 0) goto fail;
            free(p->r); /* lowered: the ops hold it now (and the budget counted both) */
            p->r = NULL;
            p->nr = p->cap_r = 0;
            if (p->oom && !info->oom) {
                info->oom = 1;
                info->oom_rank = gr;
                info->oom_bytes = p->oom_bytes;
                info->oom_used_bytes = p->oom_used;
            }
        }
    }
    if (o->dedup && !k.remote && !o->live) w = dedup(w); /* a remote wait names its rank: none is folded */
    /* FLOPs: what the kernels that carry a size execute (operator tags and GEMM shapes; kernels
     * sized from launch geometry alone have no FLOP count). Counted in lowering, before deduplication, so
     * over every process; they are the job's per iteration when the run had iteration marks. */
    w->hw_flops = w->model_flops = k.flops;
    w->tokens = o->tokens;
    snprintf(w->flops_convention, sizeof w->flops_convention, "%s",
             "executed FLOPs of the emulated program: GEMM shapes, PyTorch's flop_counter formulas (causal attention halved)");
    info->simulated = (uint32_t)w->nranks;
    if (orr_workload_finalize(w, err) < 0) goto fail;
    goto out;
fail:
    orr_workload_free(w);
    w = NULL;
out:
    kdb_close(&db);
    collator_free(&k);
    return w;
}

void orr_emu_info_free(orr_emu_info *info)
{
    free(info->apis);
    free(info->rank_env);
    free(info->rank_pid);
    memset(info, 0, sizeof *info);
}

int orr_emu_traces_tagged(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int tagged = 0;
    struct dirent *e;
    while (!tagged && (e = readdir(d))) {
        if (strncmp(e->d_name, "trace-", 6) != 0) continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        char line[512];
        int start = 1; /* the piece read begins a line (a longer line comes in pieces) */
        while (f && !tagged && fgets(line, sizeof line, f)) {
            if (start && strncmp(line, "T ", 2) == 0) tagged = 1;
            start = strchr(line, '\n') != NULL;
        }
        if (f) fclose(f);
    }
    closedir(d);
    return tagged;
}

size_t orr_emu_unimplemented_calls(const char *trace_dir, orr_buf *names)
{
    DIR *d = opendir(trace_dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "trace-", 6) != 0) continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", trace_dir, e->d_name);
        FILE *f = fopen(path, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            if (strncmp(line, "U ", 2) != 0) continue;
            line[strcspn(line, "\n")] = 0;
            const char *name = line + 2;
            size_t len = strlen(name);
            int seen = 0; /* already listed? */
            for (const char *p = names->s; p && (p = strstr(p, name)); p += len)
                if ((p == names->s || p[-1] == ' ') && (p[len] == ',' || p[len] == 0)) seen = 1;
            if (!seen) {
                orr_buf_printf(names, "%s%s", n ? ", " : "", name);
                n++;
            }
        }
        if (f) fclose(f);
    }
    closedir(d);
    return n;
}

int orr_kdb_put(const char *path, const char *gpu, const char *kernel, const unsigned grid[3], const unsigned block[3],
                int64_t dur_ps, const char *source, orr_err *err)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_open(path, &db) != SQLITE_OK) goto done;
    if (sqlite3_exec(db,
                     "CREATE TABLE IF NOT EXISTS kernels (gpu TEXT NOT NULL, name TEXT NOT NULL, grid TEXT NOT NULL, "
                     "block TEXT NOT NULL, dur_ps INTEGER NOT NULL, source TEXT, PRIMARY KEY (gpu, name, grid, block))",
                     NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO kernels VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &st, NULL) !=
        SQLITE_OK)
        goto done;
    char gs[48], bs[48];
    snprintf(gs, sizeof gs, "%u,%u,%u", grid[0], grid[1], grid[2]);
    snprintf(bs, sizeof bs, "%u,%u,%u", block[0], block[1], block[2]);
    sqlite3_bind_text(st, 1, gpu, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, kernel, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, gs, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, bs, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, dur_ps);
    sqlite3_bind_text(st, 6, source ? source : "", -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_DONE) rc = 0;
done:
    if (rc < 0) orr_fail(err, "kernel database %s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}
