/*
 * test_emulate.c - the emulator front end: the collator on hand-written traces (records, errors
 * naming file and line, kernel database), and real CUDA C programs built by nvcc (tests/emu/, one .cu file each)
 * run under the emulation libraries: what each program did is checked in the collated workload
 * and in the prediction.
 */
#include "check.h"
#include "orrery/emulate.h"
#include "orrery/estimate.h"
#include "orrery/orrery.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static orr_gpu G;
static orr_cluster C;

static char *make_dir(void)
{
    static char dirs[32][64];
    static int n;
    char *d = dirs[n++ % 32];
    strcpy(d, "/tmp/orrery-test-emu-XXXXXX");
    if (!mkdtemp(d)) abort();
    return d;
}

static void put(const char *dir, const char *file, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static void rm_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

static orr_workload *collate(const char *dir, int dedup, const char *kdb, orr_emu_info *info, orr_err *err)
{
    orr_emu_opts o = {.trace_dir = dir, .dedup = dedup, .kernel_db = kdb};
    return orr_emu_collate(&o, &G, &C, info, err);
}

static size_t count_kind(const orr_rank *r, orr_op_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nops; i++) n += r->ops[i].kind == k;
    return n;
}

static const orr_op *nth(const orr_rank *r, orr_op_kind k, size_t nth_one, size_t *index)
{
    for (size_t i = 0; i < r->nops; i++)
        if (r->ops[i].kind == k && nth_one-- == 0) {
            if (index) *index = i;
            return &r->ops[i];
        }
    return NULL;
}

static int predict_opts(const orr_emu_opts *o, orr_prediction *p, orr_emu_info *info)
{
    orr_err err = {{0}};
    int rc = orr_emulate_predict(o, &G, &C, 5 * ORR_PS_PER_US, G.hbm_bytes, p, info, &err);
    if (rc < 0) fprintf(stderr, "predict: %s\n", err.msg);
    return rc;
}

static int predict(const char *dir, int dedup, orr_prediction *p, orr_emu_info *info)
{
    orr_emu_opts o = {.trace_dir = dir, .dedup = dedup};
    return predict_opts(&o, p, info);
}

#define HDR "orrery-emu-trace 1\nP pid=7 rank=- local_rank=- world=- capacity=1000000\n"

static void test_collate_records(void)
{
    char *d = make_dir();
    put(d, "trace-7.txt",
        HDR "A 0 4096\nH 500\nH 250\nSC 1 0\nN 0 k1\nK 1 0 8 1 1 128 1 1 0 -1\nER 0 1\nSW 0 0\nN 1 op\n"
            "T 0 1 gemm 1e9 3e6\nK 0 0 4 1 1 64 1 1 0 0\nK 0 0 4 1 1 64 1 1 0 0\nC 0 d2h 4096 1\nM 1 64\n"
            "G 1 64 32 16 2 bf16\nSS 1\nES 0\nF 0\nDS\nS cudaMalloc 1\nEND\n");
    orr_emu_info info;
    orr_err err = {{0}};
    orr_workload *w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        CHECK_EQ_I64(w->nranks, 1);
        const orr_rank *r = &w->ranks[0];
        CHECK_EQ_I64(r->ops[0].kind, ORR_OP_ALLOC);
        CHECK_EQ_I64(r->ops[0].bytes, 4096);
        CHECK_EQ_I64(r->ops[1].kind, ORR_OP_HOST); /* the two H lines are one host op */
        CHECK_EQ_I64(r->ops[1].dur_ps, 750 * ORR_PS_PER_NS);
        CHECK_EQ_I64(count_kind(r, ORR_OP_KERNEL), 4);
        const orr_op *k0 = nth(r, ORR_OP_KERNEL, 0, NULL);
        CHECK(k0 && k0->stream == 1 && k0->cls == ORR_CLS_ELEMENTWISE && k0->bytes == 8 * 128 * 8);
        /* the operator's FLOPs and bytes are divided over its two kernels */
        const orr_op *k1 = nth(r, ORR_OP_KERNEL, 1, NULL);
        CHECK(k1 && k1->cls == ORR_CLS_GEMM && k1->flops == 5e8 && k1->bytes == 1500000);
        const orr_op *g = nth(r, ORR_OP_KERNEL, 3, NULL);
        CHECK(g && g->cls == ORR_CLS_GEMM && g->dims[0] == 64 && g->dims[1] == 32 && g->dims[2] == 16 &&
              g->dims[3] == 2 && g->dtype == ORR_BF16 && g->flops == 2.0 * 64 * 32 * 16 * 2);
        size_t ci = 0;
        const orr_op *cp = nth(r, ORR_OP_MEMCPY, 0, &ci);
        CHECK(cp && cp->bytes == 4096 && cp->dur_ps > 0 && r->ops[ci + 1].kind == ORR_OP_STREAM_SYNC);
        CHECK_EQ_I64(count_kind(r, ORR_OP_EVENT_RECORD), 1);
        CHECK_EQ_I64(count_kind(r, ORR_OP_STREAM_WAIT), 1);
        CHECK_EQ_I64(count_kind(r, ORR_OP_EVENT_SYNC), 1);
        CHECK_EQ_I64(count_kind(r, ORR_OP_DEVICE_SYNC), 1);
        CHECK_EQ_I64(info.kernels, 4);
        CHECK_EQ_I64(info.kernels_tagged, 2);
        CHECK_EQ_I64(info.kernels_gemm, 1);
        CHECK_EQ_I64(info.kernels_geometry, 1);
        CHECK(info.napis == 1 && strcmp(info.apis[0].name, "cudaMalloc") == 0 && info.apis[0].calls == 1);
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* The host time of a run without the PyTorch hook (opts.host_dir): each process takes its twin's host
 * time between the same calls (the twin by RANK, else by trace order); where the calls differ, its own
 * stays. Tags and iteration marks are the hooked run's. */
static orr_workload *collate_rerun(const char *dir, const char *host_dir, int no_host_time, orr_emu_info *info,
                                   orr_err *err)
{
    orr_emu_opts o = {.trace_dir = dir, .host_dir = host_dir, .no_host_time = no_host_time};
    return orr_emu_collate(&o, &G, &C, info, err);
}

/* Two processes' traces in a (hooked: a tag, 5,000 ns of host) and their twins in b (without the hook:
 * 100 and 200 ns), pids pa and pb; with ranked, RANK 0 and 1, else a communicator of both gives their
 * ranks. Process i runs kernel k<i> in both runs, so a twin taken from the other process differs. */
static void put_twins(const char *a, const char *b, int ranked, const int pa[2], const int pb[2])
{
    for (int run = 0; run < 2; run++)
        for (int i = 0; i < 2; i++) {
            int pid = run ? pb[i] : pa[i];
            const char *rank = ranked ? (i ? "1" : "0") : "-";
            char name[32], nc[64] = "", text[512];
            if (!ranked) snprintf(nc, sizeof nc, "NC %s 2 %d\n", run ? "fedcba9876543210fedcba9876543210"
                                                                     : "0123456789abcdef0123456789abcdef", i);
            snprintf(name, sizeof name, "trace-%d.txt", pid);
            snprintf(text, sizeof text, "orrery-emu-trace 1\nP pid=%d rank=%s local_rank=%s world=%s capacity=1000000\n"
                                        "%sN 0 k%d\nH %d\n%sK 0 0 4 1 1 64 1 1 0 %d\nEND\n", pid, rank, rank,
                     ranked ? "2" : "-", nc, i, run ? 100 * (i + 1) : 5000, run ? "" : "T 0 0 elementwise 0 64\n",
                     run ? -1 : 0);
            put(run ? b : a, name, text);
        }
}

/* Each of put_twins's ranks has its twin's host time: 100 (rank + 1) ns. */
static void check_twins(const char *a, const char *b)
{
    orr_emu_info info;
    orr_err err = {{0}};
    orr_workload *w = collate_rerun(a, b, 0, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        CHECK(w->nranks == 2 && info.host_rerun == 2 && info.host_rerun_differ == 0);
        for (uint32_t i = 0; i < w->nranks && i < 2; i++) {
            const orr_op *h = nth(&w->ranks[i], ORR_OP_HOST, 0, NULL);
            CHECK(h && h->dur_ps == (int64_t)(100 * (w->ranks[i].gpu + 1)) * ORR_PS_PER_NS);
        }
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
}

/* The JSON report's config of a's prediction, with host_dir's host time (NULL: none), holds want. */
static void check_host_json(const char *a, const char *host_dir, int no_host_time, const char *want)
{
    orr_emu_opts o = {.trace_dir = a, .host_dir = host_dir, .no_host_time = no_host_time};
    orr_prediction p;
    orr_emu_info info;
    int rc = predict_opts(&o, &p, &info);
    CHECK_MSG(rc == 0 && strstr(p.info.config_json, want), "wanted %s in %s", want, rc == 0 ? p.info.config_json : "no prediction");
    if (rc == 0) orr_prediction_free(&p);
    orr_emu_info_free(&info);
}

static void test_host_from_rerun(void)
{
    char *a = make_dir(), *b = make_dir(), *c = make_dir();
    /* hooked: 900 + 400 ns before the first kernel (its tag between), 800 before the second, 50 after */
    put(a, "trace-7.txt", HDR "N 0 k1\nH 900\nT 0 0 elementwise 0 4096\nH 400\nK 0 0 4 1 1 64 1 1 0 0\n"
                             "TC 0 0 4096\nH 800\nA 0 4096\nK 0 0 4 1 1 64 1 1 0 -1\nH 50\nEND\n");
    /* the same calls without the hook: 100, 200 (split by the allocation: 150 + 50), 30 */
    put(b, "trace-8.txt", "orrery-emu-trace 1\nP pid=8 rank=- local_rank=- world=- capacity=1000000\n"
                          "N 0 k1\nH 100\nK 0 0 4 1 1 64 1 1 0 -1\nH 150\nA 0 4096\nH 50\nK 0 0 4 1 1 64 1 1 0 -1\n"
                          "H 30\nEND\n");
    /* another kernel second: a path that differs */
    put(c, "trace-9.txt", "orrery-emu-trace 1\nP pid=9 rank=- local_rank=- world=- capacity=1000000\n"
                          "N 0 k1\nN 1 k2\nH 100\nK 0 0 4 1 1 64 1 1 0 -1\nH 200\nA 0 4096\nK 0 1 4 1 1 64 1 1 0 -1\n"
                          "END\n");
    orr_emu_info info;
    orr_err err = {{0}};
    orr_workload *w = collate_rerun(a, b, 0, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        const orr_rank *r = &w->ranks[0];
        int64_t want[] = {100, 150, 50, 30};
        CHECK_EQ_I64(count_kind(r, ORR_OP_HOST), 4);
        for (size_t i = 0; i < 4; i++) {
            const orr_op *h = nth(r, ORR_OP_HOST, i, NULL);
            CHECK(h && h->dur_ps == want[i] * ORR_PS_PER_NS);
        }
        const orr_op *k0 = nth(r, ORR_OP_KERNEL, 0, NULL);
        CHECK(k0 && k0->bytes == 4096); /* the hooked run's tag still sizes it */
        CHECK(info.host_rerun == 1 && info.host_rerun_differ == 0);
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    /* the JSON report says where the host time came from: the second run; the hooked run's where the
     * calls differ there (c), for its one process; none with --no-host-time */
    check_host_json(a, b, 0, "\"host_time\": \"second run\", \"host_time_second_run\": 1, \"host_time_hooked_run\": 0");
    check_host_json(a, c, 0, "\"host_time\": \"hooked run\", \"host_time_second_run\": 0, \"host_time_hooked_run\": 1");
    check_host_json(a, c, 1, "\"host_time\": \"dropped\"");
    w = collate_rerun(a, c, 0, &info, &err); /* the calls differ: the hooked host time stays */
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        const orr_op *h = nth(&w->ranks[0], ORR_OP_HOST, 0, NULL);
        CHECK(h && h->dur_ps == 1300 * ORR_PS_PER_NS);
        CHECK(info.host_rerun == 0 && info.host_rerun_differ == 1);
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    put(c, "trace-9.txt", "orrery-emu-trace 1\nP pid=9 rank=- local_rank=- world=- capacity=1000000\nQ\nEND\n");
    w = collate_rerun(a, c, 0, &info, &err); /* a run whose traces cannot be read: the same, and why */
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        const orr_op *h = nth(&w->ranks[0], ORR_OP_HOST, 0, NULL);
        CHECK(h && h->dur_ps == 1300 * ORR_PS_PER_NS);
        CHECK(info.host_rerun_differ == 1 && strstr(info.host_rerun_error, "trace-9.txt line 3: unknown record"));
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    w = collate_rerun(a, b, 1, &info, &err); /* --no-host-time: not read */
    CHECK(w && info.host_rerun == 0 && info.host_rerun_differ == 0);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    /* twins by RANK whatever the trace order (b's rank 1 is pid 20, first), and without RANKs by
     * process id where the trace order differs (b's pid 100 sorts before 99) */
    static const int ra[2] = {10, 11}, rb[2] = {21, 20}, pa[2] = {8, 9}, pb[2] = {99, 100};
    for (int ranked = 1; ranked >= 0; ranked--) {
        rm_dir(a);
        rm_dir(b);
        a = make_dir();
        b = make_dir();
        put_twins(a, b, ranked, ranked ? ra : pa, ranked ? rb : pb);
        check_twins(a, b);
    }
    rm_dir(a);
    rm_dir(b);
    rm_dir(c);
}

/* A library op of known shape (cuDNN, "L"): a kernel of its class, dims, dtype, FLOPs and bytes; the
 * tag it ran under gives it its FLOPs, so the tag's other kernel is sized by its launch geometry. */
static void test_collate_library_ops(void)
{
    char *d = make_dir();
    put(d, "trace-7.txt",
        HDR "A 0 4096\nN 0 convolution\nT 0 0 elementwise 0 0\nN 1 cudnn_conv_fprop\n"
            "L 0 1 gemm tf32 512 8 36 2 589824 25728 0\nN 2 bias_add\nK 0 2 4 1 1 128 1 1 0 0\nTC 0 589824 30000\n"
            "N 3 cudnn_sdpa_fwd\nL 0 3 attention_fwd bf16 32 1024 1024 64 2147483648 16908288 -1\nEND\n");
    orr_emu_info info;
    orr_err err = {{0}};
    orr_workload *w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        const orr_rank *r = &w->ranks[0];
        const orr_op *conv = nth(r, ORR_OP_KERNEL, 0, NULL), *bias = nth(r, ORR_OP_KERNEL, 1, NULL);
        const orr_op *attn = nth(r, ORR_OP_KERNEL, 2, NULL);
        CHECK(conv && conv->cls == ORR_CLS_GEMM && conv->dtype == ORR_TF32 && conv->dims[0] == 512 &&
              conv->dims[1] == 8 && conv->dims[2] == 36 && conv->dims[3] == 2 && conv->flops == 589824 &&
              conv->bytes == 25728 && strcmp(w->names[conv->name], "cudnn_conv_fprop") == 0);
        CHECK(bias && bias->cls == ORR_CLS_ELEMENTWISE && bias->bytes == 4 * 128 * 8); /* geometry, not the tag */
        CHECK(attn && attn->cls == ORR_CLS_ATTENTION_FWD && attn->dtype == ORR_BF16 && attn->dims[1] == 1024 &&
              attn->flops == 2147483648.0 && attn->bytes == 16908288);
        /* cuDNN's attention at cuDNN's rates (the GPU's attn_cudnn_*_eff), not FlashAttention-2's */
        CHECK(attn && (attn->flags & ORR_OPF_ATTN_CUDNN) && conv && !(conv->flags & ORR_OPF_ATTN_CUDNN));
        orr_gpu g;
        if (attn && orr_catalog_gpu("H100", &g, &err) == 0) {
            orr_estimate_workload(w, &g);
            int64_t cudnn = orr_est_attention_kernel_ps(&g, 0, 1, attn->dims, ORR_BF16, attn->flops, attn->bytes);
            CHECK_EQ_I64(attn->dur_ps, cudnn);
            CHECK(cudnn < orr_est_attention_kernel_ps(&g, 0, 0, attn->dims, ORR_BF16, attn->flops, attn->bytes));
        }
        CHECK_EQ_I64(info.kernels, 3);
        CHECK_EQ_I64(info.kernels_lib, 2);
        CHECK_EQ_I64(info.kernels_tagged, 0);
        CHECK_EQ_I64(info.kernels_geometry, 1);
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    rm_dir(d);
}

static void expect_error(const char *trace, const char *needle)
{
    char *d = make_dir();
    put(d, "trace-9.txt", trace);
    orr_emu_info info;
    orr_err err = {{0}};
    orr_workload *w = collate(d, 1, NULL, &info, &err);
    /* errors of one file name it and its line; errors across files name the directory */
    CHECK_MSG(w == NULL && strstr(err.msg, needle) && (strstr(err.msg, "trace-9.txt") || strstr(err.msg, d)),
              "expected \"%s\", got \"%s\"", needle, err.msg);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    rm_dir(d);
}

static void test_collate_errors(void)
{
    expect_error("hello\n", "line 1: not an Orrery emulation trace");
    expect_error(HDR "A 0 10\nK 0 5 1 1 1 1 1 1 0 -1\nEND\n", "line 4: expected K");
    expect_error(HDR "A 0 10\nZZ 1\nEND\n", "line 4: unknown record");
    expect_error(HDR "A 0 10\nH 5\n", "no END line");
    expect_error(HDR "A 0 10\n", "the process used the GPU"); /* cut short after GPU work */
    expect_error(HDR "A 0 10\nX cudaFoo is not implemented\n", "cudaFoo is not implemented");
    expect_error(HDR "N 0 a\nT 0 0 matmul 1 1\nEND\n", "unknown operator class");
    expect_error(HDR "C 0 h2x 10 0\nEND\n", "unknown copy kind");
    expect_error(HDR "N 0 a\nL 0 0 gemm bf16 1 1 1 1 2 6\nEND\n", "line 4: expected L");
    expect_error(HDR "N 0 a\nL 0 0 gemm bf16 1 1 1 1 2 6 0\nEND\n", "line 4: expected L"); /* tag 0 never made */
    expect_error(HDR "N 0 a\nL 0 0 gemm int4 1 1 1 1 2 6 -1\nEND\n", "unknown dtype");
    expect_error(HDR "CO 0 0123456789abcdef0123456789abcdef allreduce 10 4 0\nEND\n", "never created");
    /* a communicator of 2 with only one rank traced */
    expect_error(HDR "NC 0123456789abcdef0123456789abcdef 2 0\nCO 0 0123456789abcdef0123456789abcdef allreduce 10 4 0\n"
                     "END\n",
                 "never joined");
    /* a communicator of two billion ranks is refused before a table of them is allocated */
    expect_error(HDR "NC 0123456789abcdef0123456789abcdef 2000000000 0\n"
                     "CO 0 0123456789abcdef0123456789abcdef allreduce 10 4 0\nEND\n",
                 "1999999999 of them never joined");
    /* buffer ids are the emulator's allocation sequence: a large one would size a table by it */
    expect_error(HDR "A 862036851 10\nEND\n", "line 3: buffer id out of sequence");
    expect_error(HDR "A 0 10\nA 0 10\nEND\n", "line 4: buffer id out of sequence");
    expect_error(HDR "A 0 10\nF 1\nEND\n", "line 4: free of a buffer never allocated");
    expect_error(HDR "D 64\nA 0 10\nEND\n", "line 3: expected D <device 0..63>");
    /* a device of a process that drove several which joined a communicator and did nothing else */
    expect_error(HDR "A 0 10\nD 1\nA 1 10\nD 2\nNC 0123456789abcdef0123456789abcdef 1 0\nEND\n",
                 "device 2 joined communicator 0123456789abcdef0123456789abcdef but did no GPU work");
    /* an empty directory */
    char *d = make_dir();
    orr_emu_info info;
    orr_err err = {{0}};
    CHECK(collate(d, 1, NULL, &info, &err) == NULL && strstr(err.msg, "no trace-*.txt"));
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* The collator's memory budget (issue 24): the records of a run's traces are estimated before they
 * are made (text, and a record and an op a line; names by their size) and refused past the budget,
 * naming the trace, the budget and ORRERY_EMU_MAX_BYTES. The default is 2 GB; a small budget from the
 * environment stands in for a trace of gigabytes. */
/* A trace naming many communicators and entry points: each is looked up by a hash of its name, not
 * by scanning those read before (200,000 of each took 2 x 2e10 string comparisons, about an hour under
 * the sanitizers); every one is counted once, and a repeated name finds its entry. */
static void test_collate_many_names(void)
{
    enum { N = 200000 };
    orr_buf t = {0};
    orr_buf_puts(&t, HDR "N 0 k\nA 0 64\nH 100\nK 0 0 1 1 1 32 1 1 0 -1\n");
    for (int i = 0; i < N; i++) orr_buf_printf(&t, "NC %032x 1 0\nS entry_point_%d 1\n", i, i);
    orr_buf_puts(&t, "S entry_point_7 2\nEND\n");
    char *d = make_dir();
    put(d, "trace-1.txt", t.s);
    orr_emu_info info;
    orr_err err = {{0}};
    orr_workload *w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    CHECK_EQ_I64(info.comms, N);
    CHECK_EQ_I64(info.napis, N);
    for (size_t i = 0; i < info.napis; i++)
        if (strcmp(info.apis[i].name, "entry_point_7") == 0) CHECK_EQ_I64(info.apis[i].calls, 3);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    rm_dir(d);
    orr_buf_free(&t);
}

static void test_collate_memory_budget(void)
{
    orr_buf t = {0};
    orr_buf_puts(&t, HDR "N 0 k\nA 0 64\n");
    for (int i = 0; i < 1000; i++) orr_buf_puts(&t, "H 100\nK 0 0 1 1 1 32 1 1 0 -1\n");
    orr_buf_puts(&t, "END\n");
    char *d = make_dir();
    put(d, "trace-1.txt", t.s);
    orr_emu_info info;
    orr_err err = {{0}};
    /* 2,005 lines: about 256,000 bytes of records and ops */
    setenv("ORRERY_EMU_MAX_BYTES", "200000", 1);
    orr_workload *w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w == NULL && strstr(err.msg, "trace-1.txt") && strstr(err.msg, "budget of 200000 bytes") &&
                  strstr(err.msg, "ORRERY_EMU_MAX_BYTES=N"),
              "got \"%s\"", err.msg);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    /* raised, it is read */
    setenv("ORRERY_EMU_MAX_BYTES", "400000", 1);
    w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w != NULL && w->ranks[0].nops >= 2000, "%s", err.msg);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    /* the budget is the run's: a second trace that fits alone but not with the first is named */
    put(d, "trace-2.txt", t.s);
    w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w == NULL && strstr(err.msg, "trace-2.txt") && strstr(err.msg, "budget of 400000 bytes"), "got \"%s\"",
              err.msg);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    rm_dir(d);
    /* names are charged as they are read: few lines of long names */
    orr_buf_free(&t);
    orr_buf_puts(&t, HDR);
    for (int i = 0; i < 600; i++) { /* 600 names of 290 characters: 370,000 bytes kept */
        orr_buf_printf(&t, "N %d ", i);
        for (int j = 0; j < 290; j++) orr_buf_puts(&t, "n");
        orr_buf_puts(&t, "\n");
    }
    orr_buf_puts(&t, "END\n");
    d = make_dir();
    put(d, "trace-1.txt", t.s);
    w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w == NULL && strstr(err.msg, "trace-1.txt") && strstr(err.msg, "and their names"), "got \"%s\"", err.msg);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    unsetenv("ORRERY_EMU_MAX_BYTES");
    rm_dir(d);
    orr_buf_free(&t);
}

/* A process that drove several devices ("D dev" before the records of each): a rank per device, in
 * device order without a communicator of them all; the host time goes to every device's rank (one
 * host thread issued their work), a free to its allocation's device. */
static void test_collate_devices(void)
{
    char *d = make_dir();
    put(d, "trace-5.txt", HDR "N 0 k\nD 3\nA 0 100\nH 1000\nK 0 0 1 1 1 32 1 1 0 -1\nD 1\nA 1 300\nK 0 0 1 1 1 32 1 1 0 -1\n"
                              "K 0 0 1 1 1 32 1 1 0 -1\nH 500\nD 3\nF 0\nD 1\nF 1\nEND\n");
    orr_emu_info info;
    orr_err err = {{0}};
    orr_workload *w = collate(d, 0, NULL, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        CHECK_EQ_I64(w->nranks, 2);
        CHECK_EQ_I64(info.processes, 2);
        CHECK_EQ_I64(info.host_processes, 1);
        CHECK_EQ_I64(info.ignored, 0);
        /* rank 0 is device 1, rank 1 device 3 */
        CHECK(strstr(w->ranks[0].label, "dev1") && strstr(w->ranks[1].label, "dev3"));
        CHECK_EQ_I64(count_kind(&w->ranks[0], ORR_OP_KERNEL), 2);
        CHECK_EQ_I64(count_kind(&w->ranks[1], ORR_OP_KERNEL), 1);
        const orr_op *a0 = nth(&w->ranks[0], ORR_OP_ALLOC, 0, NULL), *a1 = nth(&w->ranks[1], ORR_OP_ALLOC, 0, NULL);
        CHECK(a0 && a0->bytes == 300 && a1 && a1->bytes == 100);
        CHECK_EQ_I64(count_kind(&w->ranks[0], ORR_OP_FREE), 1);
        CHECK_EQ_I64(count_kind(&w->ranks[1], ORR_OP_FREE), 1);
        for (int r = 0; r < 2; r++) {
            int64_t host = 0;
            for (size_t i = 0; i < w->ranks[r].nops; i++)
                if (w->ranks[r].ops[i].kind == ORR_OP_HOST) host += w->ranks[r].ops[i].dur_ps;
            CHECK_EQ_I64(host, 1500 * ORR_PS_PER_NS);
        }
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    /* --gpus counts the devices */
    orr_emu_opts o = {.trace_dir = d, .dedup = 1, .gpus = 1};
    w = orr_emu_collate(&o, &G, &C, &info, &err);
    CHECK_MSG(w == NULL && strstr(err.msg, "--gpus 1: the program used 2 GPUs (1 process;"), "got \"%s\"", err.msg);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* An NCCL group launches its operations at ncclGroupEnd. PyTorch's batch_isend_irecv issues, for
 * each p2p op of the group, an event record on the compute stream and a wait on the NCCL stream
 * before it; those take effect at once, and the group's send and recv are one launch. Two ranks
 * that both send first must not deadlock (torch.distributed.pipelining's 1F1B does this). */
static void test_collate_group_p2p(void)
{
    char *d = make_dir();
    const char *body = "SC 1 0\nNC 0123456789abcdef0123456789abcdef 2 %d\nGS\nH 100\nER 0 0\nSW 1 0\n"
                       "SE 1 0123456789abcdef0123456789abcdef %d 262144 2\nH 100\nER 0 0\nSW 1 0\n"
                       "RE 1 0123456789abcdef0123456789abcdef %d 262144 2\nGE\nER 1 1\nSW 0 1\nEND\n";
    for (int rk = 0; rk < 2; rk++) {
        char text[1024], name[32];
        int n = snprintf(text, sizeof text, "orrery-emu-trace 1\nP pid=%d rank=%d local_rank=%d world=2 capacity=1000000\n",
                         20 + rk, rk, rk);
        snprintf(text + n, sizeof text - (size_t)n, body, rk, 1 - rk, 1 - rk);
        snprintf(name, sizeof name, "trace-%d.txt", 20 + rk);
        put(d, name, text);
    }
    orr_prediction p;
    orr_emu_info info;
    int rc = predict(d, 1, &p, &info);
    CHECK(rc == 0); /* it was a deadlock when the ops stayed in issue order */
    if (rc == 0) {
        CHECK_EQ_I64(p.w->nranks, 2);
        for (uint32_t rk = 0; rk < 2; rk++) {
            const orr_rank *r = &p.w->ranks[rk];
            size_t is = 0;
            const orr_op *snd = nth(r, ORR_OP_SEND, 0, &is);
            /* the waits come first, then the host time of the group, then its two ops as one batch */
            CHECK(snd && (snd->flags & ORR_OPF_BATCH_NEXT) && r->ops[is + 1].kind == ORR_OP_RECV);
            CHECK(is >= 2 && r->ops[is - 1].kind == ORR_OP_HOST && r->ops[is - 1].dur_ps == 200 * ORR_PS_PER_NS);
            size_t iw = 0;
            CHECK(nth(r, ORR_OP_STREAM_WAIT, 1, &iw) && iw < is);
        }
        CHECK(p.r.iteration_ps > 0);
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    rm_dir(d);
}

static void test_kernel_db(void)
{
    char *d = make_dir();
    put(d, "trace-7.txt", HDR "N 0 my_kernel\nK 0 0 8 1 1 128 1 1 0 -1\nK 0 0 16 1 1 128 1 1 0 -1\nEND\n");
    char db[128];
    snprintf(db, sizeof db, "%s/k.db", d);
    orr_err err = {{0}};
    const unsigned grid[3] = {8, 1, 1}, block[3] = {128, 1, 1};
    CHECK_MSG(orr_kdb_put(db, G.name, "my_kernel", grid, block, 123456789, "test", &err) == 0, "%s", err.msg);
    orr_emu_info info;
    orr_workload *w = collate(d, 1, db, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        /* the measured time for the geometry in the database; the other geometry is not in it */
        CHECK_EQ_I64(w->ranks[0].ops[0].dur_ps, 123456789);
        CHECK_EQ_I64(w->ranks[0].ops[1].dur_ps, 0);
        CHECK_EQ_I64(info.kernels_db, 1);
        CHECK_EQ_I64(info.kernels_geometry, 1);
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    put(d, "bad.db", "this is not sqlite");
    snprintf(db, sizeof db, "%s/bad.db", d);
    CHECK(collate(d, 1, db, &info, &err) == NULL && strstr(err.msg, "--kernel-db"));
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* Profiles (prof-<pid>.txt of `--profile`): the median per kernel and geometry goes to the database,
 * where a later GPU-free collation finds it; launches with no time are counted, not stored. */
static void test_profile_store(void)
{
    char *d = make_dir();
    put(d, "prof-1.txt", "K k_a 8 1 1 128 1 1 10000\nK k_a 8 1 1 128 1 1 30000\nK k_b 4 1 1 64 1 1 0\n");
    put(d, "prof-2.txt", "K k_a 8 1 1 128 1 1 20000\nK k_a 16 1 1 128 1 1 5000\n");
    char db[128];
    snprintf(db, sizeof db, "%s/k.db", d);
    orr_err err = {{0}};
    orr_emu_profile_stats st;
    CHECK_MSG(orr_emu_profile_store(d, G.name, db, &st, &err) == 0, "%s", err.msg);
    CHECK_EQ_I64(st.launches, 5);
    CHECK_EQ_I64(st.kernels, 3);
    CHECK_EQ_I64(st.stored, 2);
    /* the first launch is tagged: a measured time still comes first */
    put(d, "trace-7.txt", HDR "N 0 k_a\nT 0 0 elementwise 0 4096\nK 0 0 8 1 1 128 1 1 0 0\nK 0 0 16 1 1 128 1 1 0 -1\n"
                          "N 1 k_b\nK 0 1 4 1 1 64 1 1 0 -1\nEND\n");
    orr_emu_info info;
    orr_workload *w = collate(d, 1, db, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        CHECK_EQ_I64(w->ranks[0].ops[0].dur_ps, 20000 * ORR_PS_PER_NS); /* median of 10, 20, 30 us */
        CHECK_EQ_I64(w->ranks[0].ops[1].dur_ps, 5000 * ORR_PS_PER_NS);
        CHECK_EQ_I64(info.kernels_db, 2);
        CHECK_EQ_I64(info.kernels_geometry, 1); /* k_b had no time */
        CHECK_EQ_I64(info.kernels_tagged, 0);
        CHECK(w->ranks[0].ops[0].cls == ORR_CLS_ELEMENTWISE);
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    put(d, "prof-3.txt", "K k_a 8 1 1\n");
    CHECK(orr_emu_profile_store(d, G.name, db, &st, &err) < 0 && strstr(err.msg, "prof-3.txt line 1"));
    rm_dir(d);
}

/* Iteration marks keep the last iteration, with the memory live at its start; operator costs given
 * after the op (TC) size its kernels; a stub's call (U) refuses the run, naming it. */
static void test_iterations_and_stubs(void)
{
    char *d = make_dir();
    put(d, "trace-7.txt", HDR "A 0 1000\nN 0 k\nK 0 0 8 1 1 128 1 1 0 -1\nA 1 50\nF 1\nI\n"
                          "A 2 300\nT 0 0 elementwise 0 0\nK 0 0 8 1 1 128 1 1 0 0\nTC 0 0 4096\nF 2\nI\n"
                          "K 0 0 8 1 1 128 1 1 0 -1\nEND\n");
    orr_err err = {{0}};
    orr_emu_info info;
    orr_workload *w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        const orr_rank *r = &w->ranks[0];
        CHECK_EQ_I64(info.iterations, 2);
        /* buffer 0 (live), then the window: alloc 2, the tagged kernel, free 2 */
        CHECK_EQ_I64(count_kind(r, ORR_OP_ALLOC), 2);
        CHECK_EQ_I64(count_kind(r, ORR_OP_FREE), 1);
        CHECK_EQ_I64(count_kind(r, ORR_OP_KERNEL), 1);
        const orr_op *k = nth(r, ORR_OP_KERNEL, 0, NULL);
        CHECK(k && k->bytes == 4096 && k->cls == ORR_CLS_ELEMENTWISE);
        const orr_op *a = nth(r, ORR_OP_ALLOC, 0, NULL);
        CHECK(a && a->bytes == 1000);
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    /* an untagged kernel gets its class from its name */
    put(d, "trace-7.txt", HDR "N 0 void_at::native::vectorized_layer_norm_kernel<float>\nK 0 0 8 1 1 128 1 1 0 -1\n"
                          "N 1 flash_bwd_dq_dk_dv_loop_kernel\nK 0 1 8 1 1 128 1 1 0 -1\nN 2 some_kernel\n"
                          "K 0 2 8 1 1 128 1 1 0 -1\nEND\n");
    w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (w) {
        CHECK(w->ranks[0].ops[0].cls == ORR_CLS_NORM && w->ranks[0].ops[1].cls == ORR_CLS_ATTENTION_BWD &&
              w->ranks[0].ops[2].cls == ORR_CLS_ELEMENTWISE);
        CHECK_EQ_I64(info.kernels_geometry, 3);
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    put(d, "trace-8.txt", HDR "S cudaMalloc 1\nU cufftExecC2C\nS cufftExecC2C 2\nA 0 10\nEND\n");
    CHECK(collate(d, 1, NULL, &info, &err) == NULL && strstr(err.msg, "does not implement") &&
          strstr(err.msg, "cufftExecC2C") && strstr(err.msg, "trace-8.txt"));
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* --live (docs/emulate.md "Live time"): the whole run is simulated (every iteration, not only the
 * last), each event record of the program gets its simulated time by process (RANK) and device in
 * record order, and a second run with other records is refused naming --live. */
static void test_live_times(void)
{
    char *d = make_dir(), *d2 = make_dir();
    const char *hdr = "orrery-emu-trace 1\nP pid=9 rank=0 local_rank=0 world=1 capacity=1000000\n";
    const char *body = "N 0 k\nER 0 0\nK 0 0 4096 1 1 256 1 1 0 -1\nER 1 0\nI\n"
                       "ER 0 0\nK 0 0 4096 1 1 256 1 1 0 -1\nER 1 0\nI\n"
                       "ER 0 0\nK 0 0 4096 1 1 256 1 1 0 -1\nER 1 0\nI\nEND\n";
    char text[1024];
    snprintf(text, sizeof text, "%s%s", hdr, body);
    put(d, "trace-9.txt", text);
    char path[128];
    snprintf(path, sizeof path, "%s/live-times.txt", d2);
    orr_emu_opts o = {.trace_dir = d, .dedup = 1};
    orr_err err = {{0}};
    uint64_t records = 0;
    int rc = orr_emu_live_write(&o, &G, &C, 5 * ORR_PS_PER_US, G.hbm_bytes, path, &records, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    CHECK_EQ_I64(records, 6); /* every iteration's records, though only the last is predicted */
    size_t len = 0;
    char *f = orr_read_file(path, &len, &err);
    CHECK(f != NULL);
    if (f) {
        CHECK(strncmp(f, "orrery-live 1\nN 0 0 6\n", 22) == 0);
        long long ps[7] = {0};
        int n = 0;
        for (char *l = strstr(f, "\nE "); l && n < 6; l = strstr(l + 1, "\nE ")) {
            long r;
            unsigned dev, seq, st;
            if (sscanf(l + 3, "%ld %u %u %lld %u", &r, &dev, &seq, &ps[n + 1], &st) == 5 && r == 0 && dev == 0 &&
                seq == (unsigned)n + 1 && st == 0)
                n++;
        }
        CHECK_EQ_I64(n, 6);
        /* a kernel between each pair of records: the times rise along the one timeline */
        CHECK(ps[2] > ps[1] && ps[4] > ps[3] && ps[6] > ps[5] && ps[3] >= ps[2] && ps[5] >= ps[4]);
        free(f);
    }
    /* the same records again: accepted; one record fewer: refused, naming --live */
    CHECK_MSG(orr_emu_live_check(&o, &G, &C, path, &err) == 0, "%s", err.msg);
    snprintf(text, sizeof text, "%sN 0 k\n%s", hdr, body + strlen("N 0 k\nER 0 0\n"));
    put(d, "trace-9.txt", text);
    CHECK(orr_emu_live_check(&o, &G, &C, path, &err) < 0 && strstr(err.msg, "--live") &&
          strstr(err.msg, "differ between runs"));
    rm_dir(d);
    rm_dir(d2);
}

/* ---- real programs ---- */

static const uint64_t MEM = 8ull << 30;

/* The GPU the programs run on: the catalog's default, as `orrery emulate` picks it. */
static const orr_gpu *emu_gpu(void)
{
    static orr_gpu g;
    orr_err e;
    if (!g.name[0] && orr_catalog_gpu(orr_catalog_default_gpu(), &g, &e)) return NULL;
    return &g;
}

static int run_program(const char *dir, const char *prog, const char *arg1, const char *arg2)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", ORRERY_EMU_TEST_BIN, prog);
    char *argv[] = {path, (char *)arg1, (char *)arg2, NULL};
    if (!arg1) argv[1] = NULL;
    orr_emu_run_opts o = {.trace_dir = dir, .mem_bytes = MEM, .total_bytes = MEM, .devices = 8, .gpu = emu_gpu()};
    int status = -1;
    orr_err err = {{0}};
    if (orr_emu_run(argv, &o, &status, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    return status;
}

static void test_streams_program(void)
{
    char *d = make_dir();
    CHECK_EQ_I64(run_program(d, "streams", NULL, NULL), 0);
    orr_prediction p;
    orr_emu_info info;
    if (predict(d, 1, &p, &info) == 0) {
        const orr_rank *r = &p.w->ranks[0];
        CHECK_EQ_I64(p.w->nranks, 1);
        CHECK_EQ_I64(info.kernels, 3);
        CHECK_EQ_I64(info.kernels_tagged, 1);
        size_t i_fill = 0, i_axpy = 0, i_rt = 0;
        const orr_op *fill = nth(r, ORR_OP_KERNEL, 0, &i_fill), *axpy = nth(r, ORR_OP_KERNEL, 1, &i_axpy),
                     *viart = nth(r, ORR_OP_KERNEL, 2, &i_rt);
        CHECK(fill && strcmp(p.w->names[fill->name], "_Z4fillPffi") == 0 && fill->stream == 1);
        CHECK(axpy && strcmp(p.w->names[axpy->name], "_Z4axpyPfPKffi") == 0 && axpy->stream == 2);
        CHECK(axpy && axpy->flops == 2.0 * (1 << 20) && axpy->bytes == 12ull << 20);
        /* the cudaLaunchKernel path: fill again, 2048 blocks of 512 threads, on stream 2 */
        CHECK(viart && viart->name == fill->name && viart->stream == 2 && viart->bytes == 8ull << 20);
        size_t i_rec = 0, i_wait = 0;
        const orr_op *rec = nth(r, ORR_OP_EVENT_RECORD, 0, &i_rec), *wait = nth(r, ORR_OP_STREAM_WAIT, 0, &i_wait);
        CHECK(rec && wait && rec->stream == 1 && wait->stream == 2 && rec->a == wait->a);
        CHECK(i_fill < i_rec && i_rec < i_wait && i_wait < i_axpy);
        CHECK_EQ_I64(count_kind(r, ORR_OP_MEMCPY), 2);
        CHECK_EQ_I64(count_kind(r, ORR_OP_MEMSET), 1);
        CHECK_EQ_I64(count_kind(r, ORR_OP_ALLOC), 2);
        CHECK_EQ_I64(count_kind(r, ORR_OP_FREE), 2);
        const orr_op *h2d = nth(r, ORR_OP_MEMCPY, 0, NULL);
        CHECK(h2d && h2d->stream == 1 && h2d->bytes == 4ull << 20);
        /* executed: axpy waited for fill on the other stream, and for the host to launch it */
        const orr_op_time *t = p.x.ranks[0].t;
        CHECK(t[i_axpy].start_ps >= t[i_fill].end_ps);
        CHECK(t[i_rt].start_ps >= t[i_axpy].end_ps);
        /* the iteration is at least the host's own time (the 4 MiB fill loop of the program) */
        int64_t host_ps = 0;
        for (size_t i = 0; i < r->nops; i++)
            if (r->ops[i].kind == ORR_OP_HOST) host_ps += r->ops[i].dur_ps;
        CHECK(host_ps > 100 * ORR_PS_PER_US);
        CHECK(p.r.iteration_ps >= host_ps);
        /* peak live device memory: the two 4 MiB buffers */
        CHECK_EQ_I64(p.x.ranks[0].mem.peak_reserved_bytes, 8ull << 20);
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* The i-th kernel of rank 0 is a GEMM-class op on stream 1 of dims want (m, n, k, batch) and dtype
 * want[4], of 2 m n k batch FLOPs, timed by the same GEMM model as `orrery predict`; it is returned. */
static const orr_op *check_gemm_op(const orr_prediction *p, size_t i, const uint32_t want[5])
{
    size_t idx = 0;
    const orr_op *g = nth(&p->w->ranks[0], ORR_OP_KERNEL, i, &idx);
    CHECK(g && g->cls == ORR_CLS_GEMM && g->stream == 1);
    if (!g) return NULL;
    CHECK(g->dims[0] == want[0] && g->dims[1] == want[1] && g->dims[2] == want[2] && g->dims[3] == want[3] &&
          g->dtype == want[4]);
    CHECK(g->flops == 2.0 * want[0] * want[1] * want[2] * want[3]);
    CHECK_EQ_I64(p->x.ranks[0].t[idx].end_ps - p->x.ranks[0].t[idx].start_ps,
                 orr_est_gemm_ps(&G, g->dims[0], g->dims[1], g->dims[2], g->dims[3], (orr_dtype)g->dtype, g->flops,
                                 g->bytes));
    return g;
}

static void test_gemm_program(void)
{
    char *d = make_dir();
    CHECK_EQ_I64(run_program(d, "gemm", NULL, NULL), 0);
    orr_prediction p;
    orr_emu_info info;
    if (predict(d, 1, &p, &info) == 0) {
        CHECK_EQ_I64(info.kernels_gemm, 3);
        static const uint32_t want[3][5] = {{1024, 2048, 512, 1, ORR_TF32}, {4096, 4096, 4096, 1, ORR_BF16},
                                            {128, 128, 64, 32, ORR_FP16}};
        for (size_t i = 0; i < 3; i++) check_gemm_op(&p, i, want[i]);
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* cuDNN's backend API by hand (tests/emu/cudnn.cu): a grouped BF16 convolution executed on a stream
 * is one GEMM-class op of the implicit GEMM's dims (m = N P Q, n = K / g, k = C / g R S, batch g), the
 * hand formula's FLOPs and the bytes of x, w and y, timed as cuBLAS's GEMM of those dims; the calls
 * refused on the way returned cuDNN's statuses (checked by the program). */
static void test_cudnn_program(void)
{
    char *d = make_dir();
    CHECK_EQ_I64(run_program(d, "cudnn", NULL, NULL), 0);
    orr_prediction p;
    orr_emu_info info;
    if (predict(d, 1, &p, &info) == 0) {
        CHECK_EQ_I64(info.kernels, 1);
        CHECK_EQ_I64(info.kernels_lib, 1);
        static const uint32_t want[5] = {512, 8, 36, 2, ORR_BF16}; /* FLOPs: 2 x 2 x 16 x 4 x 3 x 3 x 16 x 16 */
        const orr_op *c = check_gemm_op(&p, 0, want);
        CHECK(c && c->bytes == (2 * 8 * 256 + 16 * 36 + 2 * 16 * 256) * 2);
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* A CUDA graph (tests/emu/graphs.cu): the captured work (kernels, a GEMM, a memset, an all-reduce)
 * runs once per launch, none of it at capture time, on the launching stream, with the captured
 * branch on s2 ordered by its events. */
static void test_graphs_program(void)
{
    char *d = make_dir();
    CHECK_EQ_I64(run_program(d, "graphs", NULL, NULL), 0);
    orr_prediction p;
    orr_emu_info info;
    if (predict(d, 1, &p, &info) == 0) {
        const orr_rank *r = &p.w->ranks[0];
        CHECK_EQ_I64(info.kernels_gemm, 3);
        CHECK_EQ_I64(count_kind(r, ORR_OP_MEMSET), 3);
        CHECK_EQ_I64(info.collectives, 3);
        size_t nscale = 0, nside = 0, nmarker = 0, i_marker = 0, i_scale[3] = {0}, i_side[3] = {0};
        int scale_stream[3] = {0};
        for (size_t i = 0; i < r->nops; i++) {
            const orr_op *o = &r->ops[i];
            if (o->kind != ORR_OP_KERNEL || o->cls == ORR_CLS_GEMM) continue;
            const char *nm = p.w->names[o->name];
            if (strcmp(nm, "_Z6markerPf") == 0) nmarker++, i_marker = i;
            if (strcmp(nm, "_Z5scalePffi") == 0) {
                if (nscale < 3) i_scale[nscale] = i, scale_stream[nscale] = (int)o->stream;
                nscale++;
            }
            if (strcmp(nm, "_Z4sidePfi") == 0) {
                if (nside < 3) i_side[nside] = i;
                CHECK(o->stream == 2);
                nside++;
            }
        }
        CHECK_EQ_I64(nmarker, 1);
        CHECK_EQ_I64(nscale, 3); /* launched only during capture: once per graph launch */
        CHECK_EQ_I64(nside, 3);
        CHECK_EQ_I64(info.kernels, 13); /* fill, scale, side and the GEMM three times, and the marker */
        /* nothing ran at capture time: the marker, launched after the capture, comes first */
        CHECK(i_marker < i_scale[0]);
        CHECK(scale_stream[0] == 1 && scale_stream[1] == 1 && scale_stream[2] == 3);
        const orr_op_time *t = p.x.ranks[0].t;
        for (int k = 0; k < 3; k++) CHECK(t[i_side[k]].start_ps >= t[i_scale[k]].end_ps);
        CHECK(t[i_scale[1]].start_ps >= t[i_scale[0]].end_ps);
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    rm_dir(d);
}

static void test_oom_program(void)
{
    char *d = make_dir();
    CHECK_EQ_I64(run_program(d, "oom", NULL, NULL), 0); /* the program saw cudaErrorMemoryAllocation */
    orr_emu_info info;
    orr_err err = {{0}};
    orr_workload *w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    CHECK(info.oom == 1 && info.oom_bytes == MEM + (1ull << 30) && info.oom_used_bytes == 0);
    if (w) CHECK_EQ_I64(count_kind(&w->ranks[0], ORR_OP_ALLOC), 1); /* only the allocation that fitted */
    orr_workload_free(w);
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* cudaMemset(Async) of freed or host memory returns cudaErrorInvalidValue, as a GPU does (issue 24). */
static void test_memset_freed_program(void)
{
    char *d = make_dir();
    CHECK_EQ_I64(run_program(d, "memset_freed", NULL, NULL), 0);
    rm_dir(d);
}

static void test_nccl_program(void)
{
    char *d = make_dir();
    CHECK_EQ_I64(run_program(d, "nccl", "4", NULL), 0);
    orr_prediction p;
    orr_emu_info info;
    if (predict(d, 1, &p, &info) == 0) {
        const orr_workload *w = p.w;
        CHECK_EQ_I64(info.processes, 4);
        CHECK_EQ_I64(info.ignored, 1); /* the launcher, which only made the unique id */
        CHECK_EQ_I64(w->nranks, 4);    /* send/recv: no rank is folded into another */
        CHECK_EQ_I64(w->ngroups, 3);   /* the world and its two halves */
        CHECK(w->groups[0].size == 4 && w->groups[1].size == 2 && w->groups[2].size == 2);
        CHECK(w->groups[1].members[1] - w->groups[1].members[0] == 2); /* split by rank % 2 */
        for (uint32_t rk = 0; rk < 4; rk++) {
            const orr_rank *r = &w->ranks[rk];
            CHECK_EQ_I64(r->gpu, rk);
            CHECK_EQ_I64(count_kind(r, ORR_OP_COLL), 9);
            const orr_op *ar = nth(r, ORR_OP_COLL, 0, NULL), *ag = nth(r, ORR_OP_COLL, 1, NULL),
                         *rs = nth(r, ORR_OP_COLL, 2, NULL), *bc = nth(r, ORR_OP_COLL, 3, NULL);
            CHECK(ar && ar->cls == ORR_COLL_ALLREDUCE && ar->bytes == (16ull << 20) * 2 && ar->dtype == ORR_BF16);
            CHECK(ag && ag->cls == ORR_COLL_ALLGATHER && ag->bytes == (16ull << 20) * 4);
            CHECK(rs && rs->cls == ORR_COLL_REDUCESCATTER && rs->bytes == (16ull << 20) * 4);
            CHECK(bc && bc->cls == ORR_COLL_BROADCAST && bc->bytes == 4096);
            const orr_op *ar2 = nth(r, ORR_OP_COLL, 4, NULL);
            CHECK(ar2 && ar2->seq == 4 && ar2->a == ar->a);
            size_t is = 0;
            const orr_op *snd = nth(r, ORR_OP_SEND, 0, &is);
            CHECK(snd && snd->a == (rk + 1) % 4 && (snd->flags & ORR_OPF_BATCH_NEXT) && r->ops[is + 1].kind == ORR_OP_RECV &&
                  r->ops[is + 1].a == (rk + 3) % 4);
            const orr_op *half = nth(r, ORR_OP_COLL, 8, NULL);
            CHECK(half && half->a == 1 + rk % 2 && half->seq == 0);
        }
        CHECK(p.r.iteration_ps > 0);
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    rm_dir(d);

    /* identical ranks (collectives only) are simulated once, and predict the same as all four. The
     * processes' measured host times differ (by much more on a loaded machine), so the comparison is
     * of the device-bound time (--no-host-time), which must agree exactly. */
    d = make_dir();
    CHECK_EQ_I64(run_program(d, "nccl", "4", "--no-p2p"), 0);
    orr_prediction a, b;
    orr_emu_info ia, ib;
    orr_emu_opts oa = {.trace_dir = d, .dedup = 1, .no_host_time = 1}, ob = oa;
    ob.dedup = 0;
    if (predict_opts(&oa, &a, &ia) == 0) {
        CHECK_EQ_I64(a.w->nranks, 1);
        CHECK_EQ_I64(a.w->ranks[0].weight, 4);
        CHECK_EQ_I64(count_kind(&a.w->ranks[0], ORR_OP_HOST), 0);
        if (predict_opts(&ob, &b, &ib) == 0) {
            CHECK_EQ_I64(b.w->nranks, 4);
            CHECK_EQ_I64(a.r.iteration_ps, b.r.iteration_ps);
            orr_prediction_free(&b);
        }
        orr_emu_info_free(&ib);
        orr_prediction_free(&a);
    }
    orr_emu_info_free(&ia);
    rm_dir(d);
}

/* Issue 23 item 8: one process driving two GPUs (tests/emu/multidev.cu). Each device is a rank of
 * its own: its allocations (64 and 128 MiB: each device's own peak), its kernels (1 and 2), and the
 * all-reduce of ncclCommInitAll's communicator, grouped, on both timelines; a hand-off between the
 * devices (a copy and an event wait across them) orders the two ranks' timelines. */
/* Runs tests/emu/multidev.cu with mode (NULL: none) and predicts it: 1 when it did (free p). */
static int predict_multidev(const char *mode, orr_prediction *p, orr_emu_info *info)
{
    char *d = make_dir();
    CHECK_EQ_I64(run_program(d, "multidev", mode, NULL), 0);
    orr_emu_opts o = {.trace_dir = d, .dedup = 1};
    int predicted = predict_opts(&o, p, info) == 0;
    CHECK_MSG(predicted, "multidev %s", mode ? mode : "");
    rm_dir(d);
    return predicted;
}

static void test_multidev_program(void)
{
    orr_prediction p;
    orr_emu_info info;
    if (predict_multidev(NULL, &p, &info)) {
        const orr_workload *w = p.w;
        CHECK_EQ_I64(info.processes, 2);
        CHECK_EQ_I64(info.host_processes, 1);
        CHECK_EQ_I64(w->nranks, 2);
        CHECK_EQ_I64(w->ngroups, 1);
        CHECK(w->groups[0].size == 2 && w->groups[0].role == ORR_ROLE_DP);
        for (uint32_t rk = 0; rk < 2 && w->nranks == 2; rk++) {
            const orr_rank *r = &w->ranks[rk];
            CHECK_EQ_I64(r->gpu, rk);
            CHECK(strstr(r->label, rk ? "dev1" : "dev0") != NULL);
            CHECK_EQ_I64(count_kind(r, ORR_OP_KERNEL), rk + 1);
            CHECK_EQ_I64(count_kind(r, ORR_OP_ALLOC), 1);
            CHECK_EQ_I64(count_kind(r, ORR_OP_FREE), 1);
            const orr_op *a = nth(r, ORR_OP_ALLOC, 0, NULL);
            CHECK(a && a->bytes == (rk + 1) * (64ull << 20));
            size_t ic = 0;
            const orr_op *ar = nth(r, ORR_OP_COLL, 0, &ic);
            CHECK(ar && ar->cls == ORR_COLL_ALLREDUCE && ar->bytes == (64ull << 20) && ar->a == 0 && ar->seq == 0);
            CHECK_EQ_I64(count_kind(r, ORR_OP_COLL), 1);
            /* on both timelines, at the same time (a collective starts when both have joined) */
            const orr_op_time *t = &p.x.ranks[rk].t[ic], *t0 = p.x.ranks[0].t;
            size_t ic0 = 0;
            nth(&w->ranks[0], ORR_OP_COLL, 0, &ic0);
            CHECK(t->end_ps > t->start_ps && t->start_ps == t0[ic0].start_ps);
            /* each GPU's own peak */
            CHECK_EQ_I64(p.x.ranks[rk].mem.peak_reserved_bytes, (rk + 1) * (64ull << 20));
        }
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    /* a hand-off from device 0 to device 1: 2 x 64 MiB over NVLink on device 0's stream, an event after
     * it that device 1's stream waits on (a wait on the other rank's event), then a kernel there */
    if (predict_multidev("--pipe", &p, &info)) {
        const orr_workload *w = p.w;
        CHECK_EQ_I64(w->nranks, 2);
        size_t ic = 0, iw = 0, ik = 0;
        const orr_op *cp = nth(&w->ranks[0], ORR_OP_MEMCPY, 0, &ic);
        CHECK(cp && cp->bytes == 64ull << 20 && strcmp(w->names[cp->name], "memcpy_p2p") == 0 &&
              cp->dur_ps == (int64_t)llround((64ull << 20) / emu_gpu()->nvlink_Bps * 1e12) + 1);
        const orr_op *wt = nth(&w->ranks[1], ORR_OP_STREAM_WAIT, 0, &iw);
        CHECK(wt && (wt->flags & ORR_OPF_REMOTE) && wt->dims[0] == 0 && wt->dims[1] == 1);
        CHECK(nth(&w->ranks[1], ORR_OP_KERNEL, 2, &ik) != NULL && ik > iw);
        /* device 1's stream, done with its two kernels (230 us) before device 0's kernel and two
         * copies (about 360 us), waits for them: released by device 0's record after the second copy,
         * its kernel starts after */
        CHECK_EQ_I64(count_kind(&w->ranks[0], ORR_OP_MEMCPY), 2);
        size_t ic2 = 0;
        nth(&w->ranks[0], ORR_OP_MEMCPY, 1, &ic2);
        CHECK_EQ_I64(p.x.ranks[1].t[iw].dep_rank, 0);
        CHECK(p.x.ranks[1].t[iw].start_ps >= p.x.ranks[0].t[ic2].end_ps);
        CHECK(p.x.ranks[1].t[ik].start_ps >= p.x.ranks[0].t[ic2].end_ps);
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    /* the host waits for device 0's stream, then launches on device 1: device 1's rank waits for
     * the host there too (one host thread drives both), so its kernel starts after device 0's work */
    if (predict_multidev("--sync", &p, &info)) {
        const orr_workload *w = p.w;
        size_t i0 = 0, ik = 0, is = 0;
        const orr_op *k0 = nth(&w->ranks[0], ORR_OP_KERNEL, 0, &i0);
        const orr_op *hs = nth(&w->ranks[1], ORR_OP_EVENT_SYNC, 0, &is);
        CHECK(k0 && hs && (hs->flags & ORR_OPF_REMOTE) && hs->dims[0] == 0);
        CHECK(nth(&w->ranks[1], ORR_OP_KERNEL, 2, &ik) != NULL && ik > is);
        CHECK(p.x.ranks[1].t[ik].start_ps >= p.x.ranks[0].t[i0].end_ps);
        /* the kernels before the sync ran side by side */
        size_t j1 = 0;
        nth(&w->ranks[1], ORR_OP_KERNEL, 0, &j1);
        CHECK(p.x.ranks[1].t[j1].start_ps < p.x.ranks[0].t[i0].end_ps);
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    /* splitting a communicator with both its ranks in the process is refused */
    char *d = make_dir();
    CHECK_EQ_I64(run_program(d, "multidev", "--split", NULL), 3);
    orr_err err = {{0}};
    orr_workload *w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w == NULL && strstr(err.msg, "ncclCommSplit: communicator") &&
                  strstr(err.msg, "has several ranks in this process"),
              "got \"%s\"", err.msg);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* Issue 23 item 2: all_to_all_single's uneven all-to-all, a group of sends and receives to every
 * rank, itself included (NCCL Error 4 before). Rank s sends (s + d + 1) MiB to rank d: over 4
 * ranks, sum over s != d of (s + d + 1) MiB = 64 - 16 = 48 MiB cross the network; the 4 chunks a rank sends
 * itself (1, 3, 5, 7 MiB) are device copies. */
static void test_alltoallv_program(void)
{
    char *d = make_dir();
    CHECK_EQ_I64(run_program(d, "alltoallv", "4", NULL), 0);
    orr_prediction p;
    orr_emu_info info;
    if (predict(d, 1, &p, &info) == 0) {
        CHECK_EQ_I64(info.processes, 4);
        CHECK_EQ_I64(info.p2p, 24); /* 3 sends and 3 receives a rank */
        CHECK_EQ_I64(info.p2p_bytes, 48ull << 20);
        CHECK_EQ_I64(info.alltoall_bytes, 4 * 4 * 8); /* the splits: 4 ranks x 4 int64 */
        for (uint32_t rk = 0; rk < 4; rk++) {
            const orr_op *self = nth(&p.w->ranks[rk], ORR_OP_MEMCPY, 2, NULL); /* after the two H2D/D2H */
            CHECK(self && self->bytes == (uint64_t)(2 * rk + 1) << 20);
        }
        CHECK(p.r.iteration_ps > 0);
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* Issue 23 item 4: kernels loaded and launched through the driver API (Triton's and Inductor's
 * launchers; tests/emu/driver_launch.cu): each launch is a kernel of its function's name on its
 * stream, sized by its tag or its launch geometry; an over-large dynamic shared memory request is
 * refused until the function opts in. The module file is the program itself (not read). */
static void test_driver_launch_program(void)
{
    char module[512], *d = make_dir();
    snprintf(module, sizeof module, "%s/driver_launch", ORRERY_EMU_TEST_BIN);
    CHECK_EQ_I64(run_program(d, "driver_launch", module, NULL), 0);
    orr_prediction p;
    orr_emu_info info;
    if (predict(d, 1, &p, &info) == 0) {
        CHECK(info.kernels == 3 && info.kernels_tagged == 1 && info.kernels_geometry == 2);
        const orr_rank *r = &p.w->ranks[0];
        size_t i_add = 0, i_sum = 0, i_add2 = 0;
        const orr_op *add = nth(r, ORR_OP_KERNEL, 0, &i_add), *sum = nth(r, ORR_OP_KERNEL, 1, &i_sum),
                     *add2 = nth(r, ORR_OP_KERNEL, 2, &i_add2);
        CHECK(add && strcmp(p.w->names[add->name], "triton_poi_fused_add_0") == 0 && add->stream == 1);
        CHECK(add && add->cls == ORR_CLS_ELEMENTWISE && add->bytes == 8ull << 20 && add->flops == 0);
        /* cuLaunchKernelEx: 64 x 2 blocks of 256 threads, 8 bytes a thread */
        CHECK(sum && strcmp(p.w->names[sum->name], "triton_red_fused_sum_1") == 0 && sum->stream == 1);
        CHECK(sum && sum->bytes == 64 * 2 * 256 * 8);
        CHECK(add2 && add2->name == add->name && add2->stream == 0 && add2->bytes == 4 * 32 * 8);
        const orr_op_time *t = p.x.ranks[0].t;
        CHECK(t[i_add].end_ps > t[i_add].start_ps && t[i_sum].start_ps >= t[i_add].end_ps);
        orr_prediction_free(&p);
    }
    orr_emu_info_free(&info);
    rm_dir(d);
}

/* Issue 23 item 1: processes that leave without their exit handlers. A child forked after the
 * libraries loaded that does no GPU work and calls _exit (a DataLoader worker's os._exit), and a
 * shell (dash) that runs the program and _exits, leave traces without END: ignored, the run
 * collates. A child that used the GPU before _exit is refused as truncated. */
static void test_fork_exit_program(void)
{
    char *d = make_dir();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s/fork_exit; true", ORRERY_EMU_TEST_BIN); /* dash forks, then _exits */
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    orr_emu_run_opts o = {.trace_dir = d, .mem_bytes = MEM, .devices = 1, .gpu = emu_gpu()};
    int status = -1;
    orr_err err = {{0}};
    CHECK(orr_emu_run(argv, &o, &status, &err) == 0 && status == 0);
    orr_emu_info info;
    orr_workload *w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    CHECK_EQ_I64(info.processes, 1);
    CHECK_EQ_I64(info.ignored, 2); /* the shell and the forked child */
    CHECK_EQ_I64(info.kernels, 2);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    rm_dir(d);

    d = make_dir();
    CHECK_EQ_I64(run_program(d, "fork_exit", "--child-work", NULL), 0);
    w = collate(d, 1, NULL, &info, &err);
    CHECK_MSG(w == NULL && strstr(err.msg, "truncated trace: no END line (the process used the GPU"), "got \"%s\"",
              err.msg);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    rm_dir(d);
}

static void test_run_errors(void)
{
    char *d = make_dir();
    char *argv[] = {"/nonexistent/program", NULL};
    orr_emu_run_opts o = {.trace_dir = d, .mem_bytes = MEM, .devices = 1, .gpu = emu_gpu()};
    int status = 0;
    orr_err err = {{0}};
    CHECK(orr_emu_run(argv, &o, &status, &err) < 0 && strstr(err.msg, "/nonexistent/program"));
    o.lib_dir = "/nonexistent-lib-dir";
    CHECK(orr_emu_run(argv, &o, &status, &err) < 0 && strstr(err.msg, "emulation library"));
    char *f[] = {"false", NULL};
    o.lib_dir = NULL;
    CHECK(orr_emu_run(f, &o, &status, &err) == 0 && status == 1);
    /* a time limit (the host-time run's): a shell and its child sleeping past it are stopped, both */
    char *slow[] = {"sh", "-c", "sleep 30 & wait", NULL};
    o.limit_s = 0.3;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(orr_emu_run(slow, &o, &status, &err) == 0 && status == -1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(t1.tv_sec - t0.tv_sec < 10);
    CHECK(orr_emu_run(f, &o, &status, &err) == 0 && status == 1); /* within it: its own status */
    rm_dir(d);
}

int main(void)
{
    orr_err err = {{0}};
    if (orr_catalog_gpu("H100", &G, &err) || orr_catalog_cluster(orr_catalog_gpu_default_cluster("H100"), &C, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    test_collate_records();
    test_collate_errors();
    test_collate_library_ops();
    test_host_from_rerun();
    test_collate_group_p2p();
    test_collate_memory_budget();
    test_collate_many_names();
    test_collate_devices();
    test_kernel_db();
    test_profile_store();
    test_iterations_and_stubs();
    test_live_times();
    test_run_errors();
    if (ORRERY_HAVE_NVCC) {
        test_streams_program();
        test_gemm_program();
        test_oom_program();
        test_memset_freed_program();
        test_nccl_program();
        test_fork_exit_program();
        test_alltoallv_program();
        test_graphs_program();
        test_cudnn_program();
        test_multidev_program();
        test_driver_launch_program();
    } else {
        printf("SKIP: no nvcc at configure time; the CUDA C programs of tests/emu were not built or run\n");
    }
    return check_done();
}
