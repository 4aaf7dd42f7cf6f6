/*
 * test_cudnn_shim.c - the cuDNN stand-in (src/emu/shim/cudnn.c) in this process, under the build's
 * sanitizers (the stand-in libraries themselves never are: they load into programs that are not).
 * The emulation core is replaced by stubs that keep the operations executed. Checked: cudnn-frontend's
 * way to an attention forward (matmul, generated-index mask, exp, matmul; the program destroying its
 * descriptors as soon as it has set them) runs one attention op of the matmuls' FLOPs, halved for the
 * mask; heuristics give two engines, the first with the TENSOR_CORE note; and calls a stand-in must
 * refuse give cuDNN's statuses, with everything freed (LeakSanitizer) and nothing read after free.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "emu.h"

/* the emulation core, as the stand-in sees it */
static int lib_ops;
static char lib_name[64], lib_cls[32];
static uint32_t lib_dims[4];
static double lib_flops, lib_bytes;
void emu_enter(const char *api) { (void)api; }
void emu_leave(void) {}
void emu_warn_once(const char *key, const char *fmt, ...) { (void)key, (void)fmt; }
_Noreturn void emu_die(const char *fmt, ...)
{
    (void)fmt;
    abort();
}
int emu_stream_index(const void *handle) { return handle ? -1 : 0; }
void emu_lib_op(int stream, const char *name, const char *cls, const char *dtype, const uint32_t dims[4], double flops,
                double bytes)
{
    (void)stream, (void)dtype;
    lib_ops++;
    snprintf(lib_name, sizeof lib_name, "%s", name);
    snprintf(lib_cls, sizeof lib_cls, "%s", cls);
    memcpy(lib_dims, dims, sizeof lib_dims);
    lib_flops = flops, lib_bytes = bytes;
}

int cudnnBackendCreateDescriptor(int type, void **d);
int cudnnBackendDestroyDescriptor(void *d);
int cudnnBackendSetAttribute(void *d, int name, int type, int64_t n, const void *v);
int cudnnBackendGetAttribute(void *d, int name, int type, int64_t requested, int64_t *count, void *out);
int cudnnBackendFinalize(void *d);
int cudnnBackendExecute(void *h, void *plan, void *pack);
int cudnnCreate(void **h);
int cudnnDestroy(void *h);

/* cuDNN 9's numbering (cudnn_graph.h): attribute types, descriptor types, attributes used below */
enum { T_HANDLE = 0, T_DATA_TYPE = 1, T_BOOLEAN = 2, T_INT64 = 3, T_HEUR_MODE = 8, T_NUMERICAL_NOTE = 11,
       T_POINTWISE_MODE = 14, T_DESC = 15 };
enum { D_POINTWISE = 0, D_ENGINE = 2, D_ENGINECFG = 3, D_ENGINEHEUR = 4, D_PLAN = 5, D_OP_POINTWISE = 13,
       D_GRAPH = 15, D_PACK = 16, D_TENSOR = 17, D_MATMUL = 18, D_OP_MATMUL = 19 };
enum { BAD_PARAM = 2000, OUT_OF_BOUND = 2005, ATTRIBUTE_TYPE = 2010, NOT_INITIALIZED = 1001, NOT_SUPPORTED = 3000 };

static void *tensor(int64_t uid, const int64_t d[4], int dt, bool virt)
{
    void *t = NULL;
    int64_t strides[4] = {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
    CHECK_EQ_I64(cudnnBackendCreateDescriptor(D_TENSOR, &t), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(t, 901, T_DATA_TYPE, 1, &dt), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(t, 902, T_INT64, 4, d), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(t, 903, T_INT64, 4, strides), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(t, 906, T_INT64, 1, &uid), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(t, 907, T_BOOLEAN, 1, &virt), 0);
    CHECK_EQ_I64(cudnnBackendFinalize(t), 0);
    return t;
}

/* An operation on x (and b) into y; the descriptors it was made of are destroyed at once. */
static void *operation(int type, int mode, void *x, void *b, void *y)
{
    void *desc = NULL, *op = NULL;
    CHECK_EQ_I64(cudnnBackendCreateDescriptor(type == D_OP_MATMUL ? D_MATMUL : D_POINTWISE, &desc), 0);
    if (type == D_OP_POINTWISE) CHECK_EQ_I64(cudnnBackendSetAttribute(desc, 0, T_POINTWISE_MODE, 1, &mode), 0);
    CHECK_EQ_I64(cudnnBackendFinalize(desc), 0);
    CHECK_EQ_I64(cudnnBackendCreateDescriptor(type, &op), 0);
    int base = type == D_OP_MATMUL ? 1520 : 750;
    void *const ab[4] = {x, b, y, desc}; /* matmul: A, B, C, desc; pointwise: desc, x, (b), y */
    if (type == D_OP_MATMUL) {
        for (int i = 0; i < 4; i++) CHECK_EQ_I64(cudnnBackendSetAttribute(op, base + i, T_DESC, 1, &ab[i]), 0);
    } else {
        CHECK_EQ_I64(cudnnBackendSetAttribute(op, 750, T_DESC, 1, &desc), 0);
        CHECK_EQ_I64(cudnnBackendSetAttribute(op, 751, T_DESC, 1, &x), 0);
        CHECK_EQ_I64(cudnnBackendSetAttribute(op, 753, T_DESC, 1, &y), 0);
    }
    CHECK_EQ_I64(cudnnBackendFinalize(op), 0);
    CHECK_EQ_I64(cudnnBackendDestroyDescriptor(desc), 0);
    return op;
}

int main(void)
{
    void *h = NULL;
    CHECK_EQ_I64(cudnnCreate(&h), 0);
    int bf16 = 9, f32 = 0, boolean = 11;
    static const int64_t q[4] = {2, 4, 128, 64}, kt[4] = {2, 4, 64, 256}, s[4] = {2, 4, 128, 256}, v[4] = {2, 4, 256, 64};
    void *Q = tensor(1, q, bf16, false), *K = tensor(2, kt, bf16, false), *S = tensor(3, s, f32, true);
    void *M = tensor(4, s, boolean, true), *P = tensor(5, s, f32, true), *V = tensor(6, v, bf16, false);
    void *O = tensor(7, q, bf16, false);
    void *ops[4] = {operation(D_OP_MATMUL, 0, Q, K, S), operation(D_OP_POINTWISE, 501, S, NULL, M),
                    operation(D_OP_POINTWISE, 13, S, NULL, P), operation(D_OP_MATMUL, 0, P, V, O)};
    void *const tensors[] = {Q, K, S, M, P, V, O};
    for (size_t i = 0; i < sizeof tensors / sizeof tensors[0]; i++) CHECK_EQ_I64(cudnnBackendDestroyDescriptor(tensors[i]), 0);

    void *g = NULL, *heur = NULL, *cfg[3] = {NULL}, *eng = NULL, *plan = NULL, *pack = NULL;
    CHECK_EQ_I64(cudnnBackendCreateDescriptor(D_GRAPH, &g), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(g, 800, T_HANDLE, 1, &h), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(g, 801, T_DESC, 4, ops), 0);
    CHECK_EQ_I64(cudnnBackendFinalize(g), 0);
    for (int i = 0; i < 4; i++) CHECK_EQ_I64(cudnnBackendDestroyDescriptor(ops[i]), 0);
    int mode = 3; /* CUDNN_HEUR_MODE_A */
    int64_t n = -1;
    CHECK_EQ_I64(cudnnBackendCreateDescriptor(D_ENGINEHEUR, &heur), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(heur, 201, T_DESC, 1, &g), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(heur, 200, T_HEUR_MODE, 1, &mode), 0);
    CHECK_EQ_I64(cudnnBackendFinalize(heur), 0);
    CHECK_EQ_I64(cudnnBackendGetAttribute(heur, 202, T_DESC, 0, &n, NULL), 0);
    CHECK_EQ_I64(n, 2);
    for (int i = 0; i < 3; i++) CHECK_EQ_I64(cudnnBackendCreateDescriptor(D_ENGINECFG, &cfg[i]), 0);
    CHECK_EQ_I64(cudnnBackendGetAttribute(heur, 202, T_DESC, 3, &n, cfg), 0);
    CHECK_EQ_I64(cudnnBackendDestroyDescriptor(heur), 0);
    CHECK_EQ_I64(cudnnBackendDestroyDescriptor(g), 0);
    /* the first engine's notes: TENSOR_CORE */
    int notes[10] = {-1};
    CHECK_EQ_I64(cudnnBackendCreateDescriptor(D_ENGINE, &eng), 0);
    CHECK_EQ_I64(cudnnBackendGetAttribute(cfg[0], 300, T_DESC, 1, &n, &eng), 0);
    CHECK_EQ_I64(cudnnBackendGetAttribute(eng, 1303, T_NUMERICAL_NOTE, 10, &n, notes), 0);
    CHECK(n == 1 && notes[0] == 0);
    /* a descriptor cannot receive a copy into itself, nor once another holds it */
    CHECK_EQ_I64(cudnnBackendGetAttribute(cfg[0], 300, T_DESC, 1, &n, &cfg[0]), BAD_PARAM);
    CHECK_EQ_I64(cudnnBackendCreateDescriptor(D_PLAN, &plan), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(plan, 400, T_HANDLE, 1, &h), 0);
    CHECK_EQ_I64(cudnnBackendSetAttribute(plan, 401, T_DESC, 1, &cfg[0]), 0);
    CHECK_EQ_I64(cudnnBackendFinalize(plan), 0);
    CHECK_EQ_I64(cudnnBackendGetAttribute(cfg[1], 300, T_DESC, 1, &n, &cfg[0]), BAD_PARAM);
    CHECK_EQ_I64(cudnnBackendDestroyDescriptor(eng), 0);
    for (int i = 0; i < 3; i++) CHECK_EQ_I64(cudnnBackendDestroyDescriptor(cfg[i]), 0);
    CHECK_EQ_I64(cudnnBackendCreateDescriptor(D_PACK, &pack), 0);
    CHECK_EQ_I64(cudnnBackendFinalize(pack), 0);
    CHECK_EQ_I64(cudnnBackendExecute(h, plan, pack), 0);
    /* one attention op: 2 x (2 x 128 x 256 x 64 x 8) FLOPs, halved by the mask; Q, K, V, O in memory */
    CHECK(lib_ops == 1 && strcmp(lib_name, "cudnn_sdpa_fwd") == 0 && strcmp(lib_cls, "attention_fwd") == 0);
    CHECK(lib_dims[0] == 8 && lib_dims[1] == 128 && lib_dims[2] == 256 && lib_dims[3] == 64);
    CHECK(lib_flops == 2.0 * 2 * 128 * 256 * 64 * 8 / 2 && lib_bytes == 2.0 * 2 * (2 * 4 * 128 * 64 + 2 * 4 * 256 * 64));
    CHECK_EQ_I64(cudnnBackendDestroyDescriptor(plan), 0);
    CHECK_EQ_I64(cudnnBackendDestroyDescriptor(pack), 0);

    /* refused: stale, foreign and NULL descriptors, bad counts and types, what is not modelled */
    int nope = 0;
    int64_t big = (int64_t)1 << 40;
    void *t = NULL;
    CHECK_EQ_I64(cudnnBackendExecute(h, plan, pack), BAD_PARAM);
    CHECK_EQ_I64(cudnnBackendDestroyDescriptor(&nope), BAD_PARAM);
    CHECK_EQ_I64(cudnnBackendDestroyDescriptor(NULL), BAD_PARAM);
    CHECK_EQ_I64(cudnnBackendDestroyDescriptor(h), BAD_PARAM); /* a handle is no descriptor */
    CHECK_EQ_I64(cudnnBackendSetAttribute(&nope, 902, T_INT64, 1, &big), BAD_PARAM);
    CHECK_EQ_I64(cudnnBackendCreateDescriptor(D_TENSOR, &t), 0);
    CHECK_EQ_I64(cudnnBackendFinalize(t), BAD_PARAM);
    CHECK_EQ_I64(cudnnBackendSetAttribute(t, 902, T_INT64, big, &big), OUT_OF_BOUND);
    CHECK_EQ_I64(cudnnBackendSetAttribute(t, 902, T_INT64, -1, &big), OUT_OF_BOUND);
    CHECK_EQ_I64(cudnnBackendSetAttribute(t, 902, 99, 1, &big), ATTRIBUTE_TYPE);
    CHECK_EQ_I64(cudnnBackendSetAttribute(t, 801, T_DESC, 1, &t), BAD_PARAM); /* itself */
    CHECK_EQ_I64(cudnnBackendGetAttribute(t, 902, T_INT64, 1, NULL, &big), NOT_SUPPORTED);
    CHECK_EQ_I64(cudnnBackendGetAttribute(t, 907, T_INT64, 1, NULL, &big), ATTRIBUTE_TYPE);
    for (int i = 0; i < 5000; i++) { /* the table of live descriptors grows and reuses its slots */
        void *z = NULL;
        CHECK_EQ_I64(cudnnBackendCreateDescriptor(D_TENSOR, &z) | cudnnBackendDestroyDescriptor(z), 0);
    }
    CHECK_EQ_I64(cudnnBackendDestroyDescriptor(t), 0);
    CHECK_EQ_I64(cudnnDestroy(h), 0);
    CHECK_EQ_I64(cudnnBackendExecute(h, NULL, NULL), NOT_INITIALIZED);
    return check_done();
}
