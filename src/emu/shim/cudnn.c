/*
 * cudnn.c - the cuDNN stand-in (libcudnn.so.9, version node libcudnn.so.9; docs/emulate.md "cuDNN").
 *
 * PyTorch reaches cuDNN two ways. Convolutions and attention go through cudnn-frontend (compiled
 * into PyTorch) over cuDNN's backend API: descriptors made, given attributes, finalized, queried;
 * an operation graph, engine heuristics, an engine config, an execution plan and a variant pack;
 * then cudnnBackendExecute. Batch norm uses the legacy API (tensor descriptors and
 * cudnnBatchNormalization*Ex). Here a backend descriptor is a bag of the attributes it was given
 * (descriptor-typed ones hold references), plus what the emulator computes where cuDNN would:
 *
 * - an operation graph is classified when finalized: one convolution (forward, backward data or
 *   backward filter) with any pointwise ops fused to it, or scaled dot-product attention (two
 *   matmuls with a softmax between them forward, more backward). Any other graph is refused with
 *   CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN and a message naming its operations;
 * - heuristics offer two engines: 0 uses tensor cores (numerical note TENSOR_CORE), 1 does not, so
 *   PyTorch's filter for torch.backends.cudnn.allow_tf32 decides whether FP32 data runs in TF32
 *   (a plan on engine 0 built for the graph). Engines have no knobs and need no workspace;
 * - cudnnBackendExecute records the graph's work on the handle's stream (emu_lib_op): a
 *   convolution as the implicit GEMM of its work (FLOPs 2 x N x K x C/groups x R x S x P x Q,
 *   priced by the GEMM model; the weight gradient split over the images), attention by the
 *   attention model (FLOPs of its matmuls, halved when the graph masks with generated indices:
 *   causal), with the bytes of the graph's tensors in memory, each read or written once.
 *
 * Attributes the emulator does not hold or compute are refused with CUDNN_STATUS_NOT_SUPPORTED and
 * a warning naming them. Handles and descriptors are checked against a table of live ones, so a
 * stale or foreign pointer is CUDNN_STATUS_BAD_PARAM, never a crash. The enum values below are
 * those of cuDNN 9's public headers (cudnn_graph.h, cudnn_ops.h).
 */
#include "emu.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int cudnnStatus_t;
/* cudnnStatus_t (cudnn_graph.h) */
enum {
    ST_SUCCESS = 0,
    ST_NOT_INITIALIZED = 1001,
    ST_BAD_PARAM = 2000,
    ST_BAD_PARAM_NULL_POINTER = 2002,
    ST_BAD_PARAM_NOT_FINALIZED = 2004,
    ST_BAD_PARAM_OUT_OF_BOUND = 2005,
    ST_BAD_PARAM_SHAPE_MISMATCH = 2008,
    ST_BAD_PARAM_ATTRIBUTE_TYPE = 2010,
    ST_BAD_PARAM_DESCRIPTOR_TYPE = 2012,
    ST_NOT_SUPPORTED = 3000,
    ST_NOT_SUPPORTED_GRAPH_PATTERN = 3001,
    ST_NOT_SUPPORTED_SHAPE = 3002,
    ST_NOT_SUPPORTED_DATA_TYPE = 3003,
    ST_INTERNAL_ERROR_HOST_ALLOCATION_FAILED = 4003,
};

/* The version this stand-in reports: cuDNN 9.10.2, what the torch 2.9.1 CUDA 12.8 wheel depends on
 * (nvidia-cudnn-cu12 9.10.2.21), built for CUDA 12.8. */
#define EMU_CUDNN_VERSION 91002
#define EMU_CUDNN_CUDART_VERSION 12080

/* cudnnDataType_t */
enum {
    DT_FLOAT = 0, DT_DOUBLE = 1, DT_HALF = 2, DT_INT8 = 3, DT_INT32 = 4, DT_UINT8 = 6, DT_BFLOAT16 = 9,
    DT_INT64 = 10, DT_BOOLEAN = 11, DT_FP8_E4M3 = 12, DT_FP8_E5M2 = 13,
};
/* cudnnBackendAttributeType_t */
enum {
    T_HANDLE = 0, T_DATA_TYPE = 1, T_BOOLEAN = 2, T_INT64 = 3, T_FLOAT = 4, T_DOUBLE = 5, T_VOID_PTR = 6,
    T_HEUR_MODE = 8, T_KNOB_TYPE = 9, T_NUMERICAL_NOTE = 11, T_LAYOUT_TYPE = 12, T_POINTWISE_MODE = 14,
    T_BACKEND_DESCRIPTOR = 15, T_BEHAVIOR_NOTE = 19, T_TENSOR_REORDERING_MODE = 20, T_INT32 = 23, T_CHAR = 24,
    T_FRACTION = 26, T_LAST = 30, /* CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE, the last of cuDNN 9.19 */
};
/* cudnnBackendDescriptorType_t */
enum {
    D_POINTWISE = 0, D_CONVOLUTION = 1, D_ENGINE = 2, D_ENGINECFG = 3, D_ENGINEHEUR = 4, D_EXECUTION_PLAN = 5,
    D_KNOB_CHOICE = 7, D_OP_CONV_FWD = 10, D_OP_CONV_BWD_FILTER = 11, D_OP_CONV_BWD_DATA = 12,
    D_OP_POINTWISE = 13, D_OPERATIONGRAPH = 15, D_VARIANT_PACK = 16, D_TENSOR = 17, D_MATMUL = 18,
    D_OP_MATMUL = 19, D_REDUCTION = 21, D_OP_REDUCTION = 22, D_OP_RESHAPE = 31, D_RNG = 32, D_OP_RNG = 33,
    D_KERNEL_CACHE = 34, D_DEVICEPROP = 38, D_LAST = 43, /* CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR */
    D_HANDLE = 1000, /* not cuDNN's: a cudnnHandle_t, kept in the same table */
    D_LEGACY_TENSOR = 1001, /* cudnnTensorDescriptor_t */
    D_LEGACY_ACTIVATION = 1002, /* cudnnActivationDescriptor_t */
};
/* cudnnBackendAttributeName_t */
enum {
    A_POINTWISE_MODE = 0,
    A_CONVOLUTION_DILATIONS = 102, A_CONVOLUTION_FILTER_STRIDES = 103, A_CONVOLUTION_POST_PADDINGS = 104,
    A_CONVOLUTION_PRE_PADDINGS = 105, A_CONVOLUTION_SPATIAL_DIMS = 106,
    A_ENGINEHEUR_MODE = 200, A_ENGINEHEUR_OPERATION_GRAPH = 201, A_ENGINEHEUR_RESULTS = 202,
    A_ENGINECFG_ENGINE = 300, A_ENGINECFG_INTERMEDIATE_INFO = 301, A_ENGINECFG_KNOB_CHOICES = 302,
    A_ENGINECFG_WORKSPACE_SIZE = 303, A_ENGINECFG_SHARED_MEMORY_USED = 304,
    A_EXECUTION_PLAN_HANDLE = 400, A_EXECUTION_PLAN_ENGINE_CONFIG = 401, A_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
    A_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS = 403, A_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS = 404,
    A_OP_CONV_FWD_CONV_DESC = 702, A_OP_CONV_FWD_W = 703, A_OP_CONV_FWD_X = 704, A_OP_CONV_FWD_Y = 705,
    A_OP_CONV_BWD_DATA_CONV_DESC = 708, A_OP_CONV_BWD_DATA_W = 709, A_OP_CONV_BWD_DATA_DX = 710,
    A_OP_CONV_BWD_DATA_DY = 711,
    A_OP_CONV_BWD_FILTER_CONV_DESC = 714, A_OP_CONV_BWD_FILTER_DW = 715, A_OP_CONV_BWD_FILTER_X = 716,
    A_OP_CONV_BWD_FILTER_DY = 717,
    A_OP_POINTWISE_PW_DESCRIPTOR = 750,
    A_OPERATIONGRAPH_HANDLE = 800, A_OPERATIONGRAPH_OPS = 801, A_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT = 802,
    A_TENSOR_BYTE_ALIGNMENT = 900, A_TENSOR_DATA_TYPE = 901, A_TENSOR_DIMENSIONS = 902, A_TENSOR_STRIDES = 903,
    A_TENSOR_VECTOR_COUNT = 904, A_TENSOR_VECTORIZED_DIMENSION = 905, A_TENSOR_UNIQUE_ID = 906,
    A_TENSOR_IS_VIRTUAL = 907, A_TENSOR_IS_BY_VALUE = 908, A_TENSOR_REORDERING_MODE = 909,
    A_VARIANT_PACK_UNIQUE_IDS = 1000, A_VARIANT_PACK_DATA_POINTERS = 1001,
    A_ENGINE_OPERATION_GRAPH = 1300, A_ENGINE_GLOBAL_INDEX = 1301, A_ENGINE_KNOB_INFO = 1302,
    A_ENGINE_NUMERICAL_NOTE = 1303, A_ENGINE_LAYOUT_INFO = 1304, A_ENGINE_BEHAVIOR_NOTE = 1305,
    A_OP_MATMUL_ADESC = 1520, A_OP_MATMUL_BDESC = 1521, A_OP_MATMUL_CDESC = 1522,
};
enum { NOTE_TENSOR_CORE = 0 };          /* cudnnBackendNumericalNote_t */
enum { HEUR_MODE_FALLBACK = 2 };        /* cudnnBackendHeurMode_t */
enum { PW_EXP = 13, PW_GEN_INDEX = 501 }; /* cudnnPointwiseMode_t */
enum { ENGINES = 2 };                   /* engine 0: tensor cores; engine 1: none */
/* cudnnBatchNormOps_t CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION: a z tensor is added */
enum { BN_OPS_ADD_ACTIVATION = 2 };

#define MAX_DEPTH 32           /* descriptors referencing descriptors, at most this deep */
#define MAX_ELEMENTS (1 << 20) /* elements of one attribute */
#define MAX_DIMS 8             /* CUDNN_DIM_MAX */

/* ---- descriptors ---- */

typedef struct attr {
    int name, type;
    int64_t n;
    unsigned char *v; /* n elements of elem_size(type); T_BACKEND_DESCRIPTOR: desc pointers, each referenced */
} attr;

/* What executing a finalized operation graph records (classify). */
typedef enum { G_NONE, G_CONV_FWD, G_CONV_DGRAD, G_CONV_WGRAD, G_ATTN_FWD, G_ATTN_BWD } gkind;
typedef struct gcost {
    gkind kind;
    int dt;            /* cudnnDataType_t of the inputs */
    uint32_t dims[4];  /* GEMM: m, n, k, batch; attention: batch x heads, q, kv, head dim */
    double flops, bytes;
} gcost;

typedef struct desc {
    int type;
    int finalized;
    int user;          /* the program holds it (not destroyed) */
    int depth;         /* 1 + the deepest descriptor it references */
    unsigned refs;     /* references from other descriptors' attributes */
    attr *a;
    int na, cap;
    gcost cost;        /* an operation graph's, once finalized */
    int tensor_core;   /* an operation graph: a plan on engine 0 (tensor cores) was built for it */
    void *stream;      /* D_HANDLE: the stream of cudnnSetStream */
    /* D_LEGACY_TENSOR: cudnnSetTensorNdDescriptor's */
    int ldt, lnd;
    int ldims[MAX_DIMS], lstrides[MAX_DIMS];
} desc;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local char last_error[512];

/* The table of descriptors the program holds: open addressing on the pointer, with tombstones. */
#define TOMB ((desc *)1)
static desc **live;
static size_t live_cap, live_used;

static size_t slot_of(const void *p, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33, x *= 0xff51afd7ed558ccdULL, x ^= x >> 33;
    return (size_t)(x & (cap - 1));
}

static int live_find(const void *p, size_t *at)
{
    if (!live_cap || !p || p == TOMB) return 0;
    for (size_t i = slot_of(p, live_cap), n = 0; n < live_cap; i = (i + 1) & (live_cap - 1), n++) {
        if (!live[i]) return 0;
        if (live[i] == p) {
            if (at) *at = i;
            return 1;
        }
    }
    return 0;
}

static int live_add(desc *d)
{
    if (2 * (live_used + 1) > live_cap) { /* grow (or clear tombstones) and rehash */
        size_t n = 0;
        for (size_t i = 0; i < live_cap; i++) n += live[i] && live[i] != TOMB;
        size_t cap = live_cap ? live_cap : 256;
        while (4 * (n + 1) > cap) cap *= 2;
        desc **t = calloc(cap, sizeof *t);
        if (!t) return -1;
        for (size_t i = 0; i < live_cap; i++)
            if (live[i] && live[i] != TOMB) {
                size_t j = slot_of(live[i], cap);
                while (t[j]) j = (j + 1) & (cap - 1);
                t[j] = live[i];
            }
        free(live);
        live = t, live_cap = cap, live_used = n;
    }
    size_t j = slot_of(d, live_cap);
    while (live[j] && live[j] != TOMB) j = (j + 1) & (live_cap - 1);
    if (!live[j]) live_used++;
    live[j] = d;
    return 0;
}

static void live_del(const desc *d)
{
    size_t at;
    if (live_find(d, &at)) live[at] = TOMB;
}

/* The program's descriptor p of type type (-1: any), or NULL. */
static desc *D(const void *p, int type)
{
    desc *d = live_find(p, NULL) ? (desc *)p : NULL;
    return d && (type < 0 || d->type == type) ? d : NULL;
}

static cudnnStatus_t fail(cudnnStatus_t s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A refusal: the message is cudnnGetLastErrorString's, and a warning (once per message). */
static cudnnStatus_t fail(cudnnStatus_t s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    char key[64]; /* emu_warn_once keeps keys of up to 63 characters: the message's hash */
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = last_error; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    snprintf(key, sizeof key, "cudnn %016llx", (unsigned long long)h);
    emu_warn_once(key, "cuDNN: %s", last_error);
    return s;
}

static size_t elem_size(int type)
{
    switch (type) {
    case T_HANDLE: case T_VOID_PTR: case T_BACKEND_DESCRIPTOR: return sizeof(void *);
    case T_BOOLEAN: return sizeof(bool);
    case T_INT64: case T_DOUBLE: return 8;
    case T_FLOAT: case T_INT32: return 4;
    case T_CHAR: return 1;
    case T_FRACTION: return 16;
    default: return type >= 0 && type <= T_LAST ? sizeof(int) : 0; /* the enumerated types */
    }
}

static desc *desc_new(int type, int user)
{
    desc *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->type = type;
    d->user = user;
    d->depth = 1;
    if (user && live_add(d) < 0) {
        free(d);
        return NULL;
    }
    return d;
}

static void desc_release(desc *d);

static void attr_clear(attr *a)
{
    if (a->type == T_BACKEND_DESCRIPTOR)
        for (int64_t i = 0; i < a->n; i++) {
            desc *c;
            memcpy(&c, a->v + i * sizeof c, sizeof c);
            c->refs--;
            desc_release(c);
        }
    free(a->v);
    a->v = NULL;
    a->n = 0;
}

static void desc_clear(desc *d)
{
    for (int i = 0; i < d->na; i++) attr_clear(&d->a[i]);
    d->na = 0;
}

/* Frees d once neither the program nor another descriptor holds it (depth-bounded recursion). */
static void desc_release(desc *d)
{
    if (d->user || d->refs) return;
    desc_clear(d);
    free(d->a);
    free(d);
}

static attr *find_attr(const desc *d, int name)
{
    for (int i = 0; i < d->na; i++)
        if (d->a[i].name == name) return &d->a[i];
    return NULL;
}

/* Sets (or replaces) an attribute; descriptor elements gain a reference. */
static cudnnStatus_t put_attr(desc *d, int name, int type, int64_t n, const void *v)
{
    size_t es = elem_size(type);
    unsigned char *copy = NULL;
    if (n > 0) {
        copy = malloc((size_t)n * es);
        if (!copy) return ST_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
        memcpy(copy, v, (size_t)n * es);
    }
    if (type == T_BACKEND_DESCRIPTOR)
        for (int64_t i = 0; i < n; i++) {
            desc *c;
            memcpy(&c, copy + i * sizeof c, sizeof c);
            c->refs++;
            if (c->depth + 1 > d->depth) d->depth = c->depth + 1;
        }
    attr *a = find_attr(d, name);
    if (a) {
        attr_clear(a);
    } else {
        if (d->na == d->cap) {
            int cap = d->cap ? 2 * d->cap : 8;
            attr *t = realloc(d->a, (size_t)cap * sizeof *t);
            if (!t) {
                attr tmp = {name, type, n, copy};
                attr_clear(&tmp);
                return ST_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
            }
            d->a = t, d->cap = cap;
        }
        a = &d->a[d->na++];
    }
    a->name = name, a->type = type, a->n = n, a->v = copy;
    return ST_SUCCESS;
}

/* dst becomes a copy of src (cuDNN's get of a descriptor-typed attribute fills the caller's). */
static cudnnStatus_t copy_into(desc *dst, desc *src)
{
    if (dst == src) return ST_SUCCESS;
    if (dst->refs) /* references share: a copy would change what another descriptor holds */
        return fail(ST_BAD_PARAM, "a descriptor another descriptor holds cannot receive a copy");
    if (dst->type != src->type)
        return fail(ST_BAD_PARAM_DESCRIPTOR_TYPE, "a descriptor of type %d cannot receive one of type %d", dst->type,
                    src->type);
    src->refs++; /* held while dst lets go of what it held, src among it perhaps */
    desc_clear(dst);
    dst->depth = 1;
    cudnnStatus_t s = ST_SUCCESS;
    for (int i = 0; i < src->na && !s; i++) s = put_attr(dst, src->a[i].name, src->a[i].type, src->a[i].n, src->a[i].v);
    dst->finalized = src->finalized;
    dst->cost = src->cost;
    dst->tensor_core = src->tensor_core;
    src->refs--;
    desc_release(src);
    return s;
}

static int64_t get_i64(const desc *d, int name, int64_t def)
{
    const attr *a = find_attr(d, name);
    int64_t v = def;
    if (a && a->n >= 1 && a->type == T_INT64) memcpy(&v, a->v, sizeof v);
    return v;
}

static int get_enum(const desc *d, int name, int def)
{
    const attr *a = find_attr(d, name);
    int v = def;
    if (a && a->n >= 1 && elem_size(a->type) == sizeof(int) && a->type != T_FLOAT && a->type != T_INT32)
        memcpy(&v, a->v, sizeof v);
    return v;
}

static int get_bool(const desc *d, int name)
{
    const attr *a = find_attr(d, name);
    bool v = false;
    if (a && a->n >= 1 && a->type == T_BOOLEAN) memcpy(&v, a->v, sizeof v);
    return v;
}

/* The i-th descriptor of a descriptor-typed attribute, of type type (-1: any), or NULL. */
static desc *get_desc(const desc *d, int name, int64_t i, int type)
{
    const attr *a = find_attr(d, name);
    if (!a || a->type != T_BACKEND_DESCRIPTOR || i < 0 || i >= a->n) return NULL;
    desc *c;
    memcpy(&c, a->v + i * sizeof c, sizeof c);
    return type < 0 || c->type == type ? c : NULL;
}

/* A handle or legacy descriptor of type for the program (called locked). */
static cudnnStatus_t create_own(void **out, int type)
{
    if (!out) return ST_BAD_PARAM_NULL_POINTER;
    *out = desc_new(type, 1);
    return *out ? ST_SUCCESS : ST_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

/* Destroys the program's handle or legacy descriptor p of type (NULL: nothing, as cuDNN). */
static cudnnStatus_t destroy_own(void *p, int type)
{
    desc *d = p ? D(p, type) : NULL;
    if (p && !d) return ST_BAD_PARAM;
    if (d) {
        live_del(d);
        d->user = 0;
        desc_release(d);
    }
    return ST_SUCCESS;
}

/* ---- operation graphs: what executing one does ---- */

static int dt_bytes(int dt)
{
    switch (dt) {
    case DT_DOUBLE: case DT_INT64: return 8;
    case DT_FLOAT: case DT_INT32: return 4;
    case DT_HALF: case DT_BFLOAT16: return 2;
    case DT_INT8: case DT_UINT8: case DT_BOOLEAN: case DT_FP8_E4M3: case DT_FP8_E5M2: return 1;
    default: return 0;
    }
}

/* A tensor's dimensions (at most MAX_DIMS); its element count through *numel. -1: not a tensor. */
static int tensor_dims(const desc *t, int64_t dims[MAX_DIMS], double *numel)
{
    const attr *a = t ? find_attr(t, A_TENSOR_DIMENSIONS) : NULL;
    if (!a || a->type != T_INT64 || a->n < 1 || a->n > MAX_DIMS) return -1;
    memcpy(dims, a->v, (size_t)a->n * sizeof dims[0]);
    double n = 1;
    for (int64_t i = 0; i < a->n; i++) {
        if (dims[i] < 1) return -1;
        n *= (double)dims[i];
    }
    if (numel) *numel = n;
    return (int)a->n;
}

/* The bytes of the graph's tensors that live in memory (not virtual, not by value), each once by
 * unique id: what a fused kernel reads and writes. -1 when one has a data type not modelled. */
static double graph_bytes(const desc *g, int64_t nops)
{
    int64_t seen[256];
    int nseen = 0;
    double bytes = 0;
    for (int64_t i = 0; i < nops; i++) {
        const desc *op = get_desc(g, A_OPERATIONGRAPH_OPS, i, -1);
        for (int j = 0; op && j < op->na; j++) {
            if (op->a[j].type != T_BACKEND_DESCRIPTOR) continue;
            for (int64_t k = 0; k < op->a[j].n; k++) {
                const desc *t = get_desc(op, op->a[j].name, k, D_TENSOR);
                if (!t || get_bool(t, A_TENSOR_IS_VIRTUAL) || get_bool(t, A_TENSOR_IS_BY_VALUE)) continue;
                int64_t uid = get_i64(t, A_TENSOR_UNIQUE_ID, -1), dims[MAX_DIMS];
                int dup = 0;
                for (int s = 0; s < nseen; s++) dup |= seen[s] == uid;
                if (dup) continue;
                if (nseen < (int)(sizeof seen / sizeof seen[0])) seen[nseen++] = uid;
                double n;
                int eb = dt_bytes(get_enum(t, A_TENSOR_DATA_TYPE, -1));
                if (tensor_dims(t, dims, &n) < 0 || !eb) return -1;
                bytes += n * eb;
            }
        }
    }
    return bytes;
}

static int fits_u32(double v) { return v >= 1 && v <= 4294967295.0; }

/* One convolution: x (N, C, spatial...), w (K, C/groups, filter...), y (N, K, output spatial...). */
static cudnnStatus_t conv_cost(const desc *op, gcost *c)
{
    static const int roles[3][4] = {
        /* x, w, y, conv */
        {A_OP_CONV_FWD_X, A_OP_CONV_FWD_W, A_OP_CONV_FWD_Y, A_OP_CONV_FWD_CONV_DESC},
        {A_OP_CONV_BWD_DATA_DX, A_OP_CONV_BWD_DATA_W, A_OP_CONV_BWD_DATA_DY, A_OP_CONV_BWD_DATA_CONV_DESC},
        {A_OP_CONV_BWD_FILTER_X, A_OP_CONV_BWD_FILTER_DW, A_OP_CONV_BWD_FILTER_DY, A_OP_CONV_BWD_FILTER_CONV_DESC},
    };
    int r = op->type == D_OP_CONV_FWD ? 0 : op->type == D_OP_CONV_BWD_DATA ? 1 : 2;
    const desc *x = get_desc(op, roles[r][0], 0, D_TENSOR), *w = get_desc(op, roles[r][1], 0, D_TENSOR);
    const desc *y = get_desc(op, roles[r][2], 0, D_TENSOR), *cv = get_desc(op, roles[r][3], 0, D_CONVOLUTION);
    int64_t xd[MAX_DIMS], wd[MAX_DIMS], yd[MAX_DIMS];
    int nx = tensor_dims(x, xd, NULL), nw = tensor_dims(w, wd, NULL), ny = tensor_dims(y, yd, NULL);
    if (!cv || nx < 3 || nw != nx || ny != nx)
        return fail(ST_BAD_PARAM, "convolution operation (descriptor type %d) without its x, w, y tensors "
                                  "(3 to 8 dimensions each) or its convolution descriptor", op->type);
    double n = (double)xd[0], ch = (double)xd[1], k = (double)wd[0], cg = (double)wd[1], rs = 1, pq = 1;
    for (int i = 2; i < nx; i++) rs *= (double)wd[i], pq *= (double)yd[i];
    double groups = ch / cg;
    if (yd[0] != xd[0] || yd[1] != wd[0] || xd[1] % wd[1] || wd[0] % (xd[1] / wd[1]))
        return fail(ST_BAD_PARAM_SHAPE_MISMATCH, "convolution shapes do not agree: x [%lld, %lld, ...], w [%lld, "
                    "%lld, ...], y [%lld, %lld, ...]", (long long)xd[0], (long long)xd[1], (long long)wd[0],
                    (long long)wd[1], (long long)yd[0], (long long)yd[1]);
    double kg = k / groups;
    double m, nn, kk;
    if (r == 0) m = n * pq, nn = kg, kk = cg * rs, c->kind = G_CONV_FWD;       /* y = x * w */
    else if (r == 1) m = n * pq, nn = cg, kk = kg * rs, c->kind = G_CONV_DGRAD; /* dx = dy * w */
    else m = kg, nn = cg * rs, kk = pq, c->kind = G_CONV_WGRAD; /* dw = sum over images of dy * x */
    /* the weight gradient's reduction over N x P x Q is split over the images (split-K, as cuDNN's
     * wgrad kernels split it): a GEMM batched over images and groups, whose output alone (K x C R S)
     * would leave most SMs idle */
    double batch = r == 2 ? groups * n : groups;
    if (!fits_u32(m) || !fits_u32(nn) || !fits_u32(kk) || !fits_u32(batch))
        return fail(ST_NOT_SUPPORTED_SHAPE, "convolution whose implicit GEMM (%.0f x %.0f x %.0f, batch %.0f) "
                                            "exceeds 32-bit dimensions", m, nn, kk, batch);
    c->dims[0] = (uint32_t)m, c->dims[1] = (uint32_t)nn, c->dims[2] = (uint32_t)kk, c->dims[3] = (uint32_t)batch;
    c->flops = 2.0 * n * k * cg * rs * pq;
    c->dt = get_enum(r == 1 ? y : x, A_TENSOR_DATA_TYPE, -1);
    return ST_SUCCESS;
}

/* Attention: the matmuls' FLOPs (2 x M x N x K x batch each), the shape of the largest score matmul
 * (batch x heads, q, kv, head dim), halved when a generated index masks it (causal). */
static cudnnStatus_t attention_cost(const desc *g, int64_t nops, int nmm, int masked, gcost *c)
{
    double flops = 0, best = 0;
    for (int64_t i = 0; i < nops; i++) {
        const desc *op = get_desc(g, A_OPERATIONGRAPH_OPS, i, D_OP_MATMUL);
        if (!op) continue;
        int64_t ad[MAX_DIMS], bd[MAX_DIMS], cd[MAX_DIMS];
        int na = tensor_dims(get_desc(op, A_OP_MATMUL_ADESC, 0, D_TENSOR), ad, NULL);
        int nb = tensor_dims(get_desc(op, A_OP_MATMUL_BDESC, 0, D_TENSOR), bd, NULL);
        int nc = tensor_dims(get_desc(op, A_OP_MATMUL_CDESC, 0, D_TENSOR), cd, NULL);
        if (na < 2 || nb != na || nc != na)
            return fail(ST_BAD_PARAM, "matmul operation without its a, b, c tensors of equal rank");
        double m = (double)cd[nc - 2], n = (double)cd[nc - 1], k = (double)ad[na - 1], batch = 1;
        for (int j = 0; j < nc - 2; j++) batch *= (double)cd[j];
        flops += 2.0 * m * n * k * batch;
        /* the score matmuls (Q K^T, dO V^T) have the largest output per inner dimension */
        if (m * n / k > best) {
            best = m * n / k;
            if (!fits_u32(batch) || !fits_u32(m) || !fits_u32(n) || !fits_u32(k))
                return fail(ST_NOT_SUPPORTED_SHAPE, "attention shape beyond 32-bit dimensions");
            c->dims[0] = (uint32_t)batch, c->dims[1] = (uint32_t)m, c->dims[2] = (uint32_t)n, c->dims[3] = (uint32_t)k;
            c->dt = get_enum(get_desc(op, A_OP_MATMUL_ADESC, 0, D_TENSOR), A_TENSOR_DATA_TYPE, -1);
        }
    }
    c->kind = nmm == 2 ? G_ATTN_FWD : G_ATTN_BWD;
    c->flops = masked ? flops / 2 : flops;
    return ST_SUCCESS;
}

/* Classifies a finalized operation graph (docs/emulate.md "cuDNN"); refuses what it cannot time. */
static cudnnStatus_t classify(desc *g)
{
    const attr *ops = find_attr(g, A_OPERATIONGRAPH_OPS);
    if (!ops || ops->type != T_BACKEND_DESCRIPTOR || ops->n < 1)
        return fail(ST_BAD_PARAM, "operation graph without operations");
    int nconv = 0, nmm = 0, nother = 0, masked = 0, softmax = 0;
    const desc *conv = NULL;
    char kinds[160] = "";
    for (int64_t i = 0; i < ops->n; i++) {
        const desc *op = get_desc(g, A_OPERATIONGRAPH_OPS, i, -1);
        if (!op->finalized) return fail(ST_BAD_PARAM_NOT_FINALIZED, "operation graph with an operation not finalized");
        size_t l = strlen(kinds);
        if (l + 8 < sizeof kinds) snprintf(kinds + l, sizeof kinds - l, "%s%d", l ? "," : "", op->type);
        switch (op->type) {
        case D_OP_CONV_FWD: case D_OP_CONV_BWD_DATA: case D_OP_CONV_BWD_FILTER: nconv++, conv = op; break;
        case D_OP_MATMUL: nmm++; break;
        case D_OP_POINTWISE: {
            const desc *pw = get_desc(op, A_OP_POINTWISE_PW_DESCRIPTOR, 0, D_POINTWISE);
            int mode = pw ? get_enum(pw, A_POINTWISE_MODE, -1) : -1;
            masked |= mode == PW_GEN_INDEX;
            softmax |= mode == PW_EXP;
            break;
        }
        case D_OP_REDUCTION: case D_OP_RNG: case D_OP_RESHAPE: break;
        default: nother++; break;
        }
    }
    memset(&g->cost, 0, sizeof g->cost);
    cudnnStatus_t s;
    if (nconv == 1 && nmm == 0 && nother == 0) s = conv_cost(conv, &g->cost);
    else if (nconv == 0 && nmm >= 2 && softmax && nother == 0) s = attention_cost(g, ops->n, nmm, masked, &g->cost);
    else
        return fail(ST_NOT_SUPPORTED_GRAPH_PATTERN, "operation graph of operations (descriptor types) %s: the "
                    "emulator times one convolution with pointwise ops, or scaled dot-product attention", kinds);
    if (s) return s;
    int dt = g->cost.dt;
    if (dt != DT_FLOAT && dt != DT_HALF && dt != DT_BFLOAT16 && dt != DT_FP8_E4M3 && dt != DT_FP8_E5M2)
        return fail(ST_NOT_SUPPORTED_DATA_TYPE, "operation graph on data type %d (cudnnDataType_t): the emulator "
                                                "times FLOAT, HALF, BFLOAT16 and FP8", dt);
    g->cost.bytes = graph_bytes(g, ops->n);
    if (g->cost.bytes < 0)
        return fail(ST_NOT_SUPPORTED_DATA_TYPE, "operation graph with a tensor of a data type the emulator does not size");
    return ST_SUCCESS;
}

/* ---- the backend API ---- */

static cudnnStatus_t done(cudnnStatus_t s)
{
    pthread_mutex_unlock(&lock);
    emu_leave();
    return s;
}

#define ENTER(api) (EMU_ENTER(api), pthread_mutex_lock(&lock))

EMU_EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(int type, void **out)
{
    ENTER("cudnnBackendCreateDescriptor");
    if (!out) return done(ST_BAD_PARAM_NULL_POINTER);
    if (type < 0 || type > D_LAST) return done(fail(ST_BAD_PARAM, "descriptor type %d is not cuDNN 9's", type));
    desc *d = desc_new(type, 1);
    *out = d;
    return done(d ? ST_SUCCESS : ST_INTERNAL_ERROR_HOST_ALLOCATION_FAILED);
}

EMU_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(void *p)
{
    ENTER("cudnnBackendDestroyDescriptor");
    const desc *d = D(p, -1);
    if (!d || d->type >= D_HANDLE) return done(ST_BAD_PARAM);
    return done(destroy_own(p, d->type));
}

EMU_EXPORT cudnnStatus_t cudnnBackendSetAttribute(void *p, int name, int type, int64_t n, const void *v)
{
    ENTER("cudnnBackendSetAttribute");
    desc *d = D(p, -1);
    if (!d || d->type >= D_HANDLE) return done(ST_BAD_PARAM);
    if (d->finalized) return done(fail(ST_BAD_PARAM, "attribute %d set on a finalized descriptor", name));
    if (elem_size(type) == 0) return done(ST_BAD_PARAM_ATTRIBUTE_TYPE);
    if (n < 0 || n > MAX_ELEMENTS) return done(ST_BAD_PARAM_OUT_OF_BOUND);
    if (n > 0 && !v) return done(ST_BAD_PARAM_NULL_POINTER);
    if (type == T_BACKEND_DESCRIPTOR)
        for (int64_t i = 0; i < n; i++) {
            const void *e;
            memcpy(&e, (const unsigned char *)v + i * sizeof e, sizeof e);
            const desc *c = D(e, -1);
            if (!c || c->type >= D_HANDLE || c == d) return done(ST_BAD_PARAM);
            if (c->depth + 1 > MAX_DEPTH) return done(fail(ST_BAD_PARAM, "descriptors nested deeper than %d", MAX_DEPTH));
        }
    return done(put_attr(d, name, type, n, v));
}

/* Writes up to requested elements of n (each es bytes) from src; *count gets n. */
static cudnnStatus_t give(const void *src, int64_t n, size_t es, int64_t requested, int64_t *count, void *dst)
{
    if (count) *count = n;
    if (dst && requested > 0 && n > 0) memcpy(dst, src, (size_t)(requested < n ? requested : n) * es);
    return ST_SUCCESS;
}

/* Fills the caller's engine configs (the heuristics' results) for graph g. */
static cudnnStatus_t heuristics_results(desc *h, int64_t requested, int64_t *count, void *out)
{
    desc *g = get_desc(h, A_ENGINEHEUR_OPERATION_GRAPH, 0, D_OPERATIONGRAPH);
    int fallback = get_enum(h, A_ENGINEHEUR_MODE, 0) == HEUR_MODE_FALLBACK;
    int64_t first = fallback ? 1 : 0, n = ENGINES - first;
    if (count) *count = n;
    for (int64_t i = 0; out && i < requested && i < n; i++) {
        void *e;
        memcpy(&e, (unsigned char *)out + i * sizeof e, sizeof e);
        desc *cfg = D(e, D_ENGINECFG);
        if (!cfg) return fail(ST_BAD_PARAM, "heuristics results: element %lld is not an engine config descriptor",
                              (long long)i);
        desc *eng = desc_new(D_ENGINE, 0), *tmp = desc_new(D_ENGINECFG, 0);
        if (!eng || !tmp) {
            free(eng), free(tmp);
            return ST_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
        }
        eng->refs++, tmp->refs++; /* held here until the end, whatever references them */
        int64_t idx = first + i;
        cudnnStatus_t s = put_attr(eng, A_ENGINE_OPERATION_GRAPH, T_BACKEND_DESCRIPTOR, 1, &g);
        if (!s) s = put_attr(eng, A_ENGINE_GLOBAL_INDEX, T_INT64, 1, &idx);
        if (!s) eng->finalized = 1, s = put_attr(tmp, A_ENGINECFG_ENGINE, T_BACKEND_DESCRIPTOR, 1, &eng);
        if (!s) tmp->finalized = 1, s = copy_into(cfg, tmp);
        tmp->refs--;
        desc_release(tmp); /* eng is still held: tmp's reference to it goes first */
        eng->refs--;
        desc_release(eng);
        if (s) return s;
    }
    return ST_SUCCESS;
}

EMU_EXPORT cudnnStatus_t cudnnBackendGetAttribute(void *p, int name, int type, int64_t requested, int64_t *count,
                                                  void *out)
{
    ENTER("cudnnBackendGetAttribute");
    desc *d = D(p, -1);
    if (!d || d->type >= D_HANDLE) return done(ST_BAD_PARAM);
    if (elem_size(type) == 0) return done(ST_BAD_PARAM_ATTRIBUTE_TYPE);
    if (requested < 0) return done(ST_BAD_PARAM_OUT_OF_BOUND);
    static const int64_t zero = 0, one = 1, minus1 = -1;
    static const bool no = false;
    const int64_t engines = ENGINES;
    /* computed where cuDNN computes */
    if (d->type == D_ENGINEHEUR && name == A_ENGINEHEUR_RESULTS && type == T_BACKEND_DESCRIPTOR) {
        if (!d->finalized) return done(ST_BAD_PARAM_NOT_FINALIZED);
        return done(heuristics_results(d, requested, count, out));
    }
    if (d->type == D_OPERATIONGRAPH && name == A_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT && type == T_INT64)
        return done(give(&engines, 1, 8, requested, count, out));
    if (d->type == D_ENGINE && name == A_ENGINE_NUMERICAL_NOTE && type == T_NUMERICAL_NOTE) {
        static const int tensor_core = NOTE_TENSOR_CORE;
        return done(give(&tensor_core, get_i64(d, A_ENGINE_GLOBAL_INDEX, 0) == 0, sizeof(int), requested, count, out));
    }
    if (d->type == D_ENGINE && (name == A_ENGINE_BEHAVIOR_NOTE || name == A_ENGINE_KNOB_INFO || name == A_ENGINE_LAYOUT_INFO))
        return done(give(NULL, 0, elem_size(type), requested, count, out));
    if ((d->type == D_ENGINECFG && name == A_ENGINECFG_WORKSPACE_SIZE && type == T_INT64) ||
        (d->type == D_EXECUTION_PLAN && name == A_EXECUTION_PLAN_WORKSPACE_SIZE && type == T_INT64))
        return done(give(&zero, 1, 8, requested, count, out)); /* the emulated engines need none */
    if (d->type == D_ENGINECFG && name == A_ENGINECFG_SHARED_MEMORY_USED && type == T_INT32) {
        static const int32_t none = 0; /* nor shared memory: they run nothing */
        return done(give(&none, 1, sizeof none, requested, count, out));
    }
    if ((d->type == D_ENGINECFG && name == A_ENGINECFG_INTERMEDIATE_INFO) ||
        (d->type == D_EXECUTION_PLAN && name == A_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS))
        return done(give(NULL, 0, elem_size(type), requested, count, out));
    const attr *a = find_attr(d, name);
    if (!a && d->type == D_ENGINECFG && name == A_ENGINECFG_KNOB_CHOICES)
        return done(give(NULL, 0, elem_size(type), requested, count, out)); /* no knobs */
    if (!a && d->type == D_TENSOR) { /* defaults of what the program did not set */
        if (name == A_TENSOR_IS_VIRTUAL || name == A_TENSOR_IS_BY_VALUE)
            return done(type == T_BOOLEAN ? give(&no, 1, sizeof no, requested, count, out) : ST_BAD_PARAM_ATTRIBUTE_TYPE);
        if (name == A_TENSOR_VECTOR_COUNT || name == A_TENSOR_VECTORIZED_DIMENSION) {
            if (type != T_INT64) return done(ST_BAD_PARAM_ATTRIBUTE_TYPE);
            return done(give(name == A_TENSOR_VECTOR_COUNT ? &one : &minus1, 1, 8, requested, count, out));
        }
        if (name == A_TENSOR_REORDERING_MODE && type == T_TENSOR_REORDERING_MODE) {
            static const int none = 0;
            return done(give(&none, 1, sizeof none, requested, count, out));
        }
    }
    if (!a)
        return done(fail(ST_NOT_SUPPORTED, "cudnnBackendGetAttribute: attribute %d of a descriptor of type %d is not "
                                           "modelled by the emulator", name, d->type));
    if (a->type != type) return done(ST_BAD_PARAM_ATTRIBUTE_TYPE);
    if (type != T_BACKEND_DESCRIPTOR) return done(give(a->v, a->n, elem_size(type), requested, count, out));
    if (count) *count = a->n;
    for (int64_t i = 0; out && i < requested && i < a->n; i++) {
        void *e;
        memcpy(&e, (unsigned char *)out + i * sizeof e, sizeof e);
        desc *dst = D(e, -1);
        if (!dst || dst->type >= D_HANDLE || dst == d) return done(ST_BAD_PARAM);
        cudnnStatus_t s = copy_into(dst, get_desc(d, name, i, -1));
        if (s) return done(s);
    }
    return done(ST_SUCCESS);
}

/* d's attribute name must be a finalized descriptor of type type; what: d, in the message. */
static cudnnStatus_t needs(const desc *d, int name, int type, const char *what)
{
    const desc *c = get_desc(d, name, 0, type);
    if (c && c->finalized) return ST_SUCCESS;
    return fail(ST_BAD_PARAM, "%s without a finalized descriptor of type %d (attribute %d)", what, type, name);
}

/* What finalizing each kind of descriptor needs; the operation graph is classified. */
EMU_EXPORT cudnnStatus_t cudnnBackendFinalize(void *p)
{
    ENTER("cudnnBackendFinalize");
    desc *d = D(p, -1);
    if (!d || d->type >= D_HANDLE) return done(ST_BAD_PARAM);
    if (d->finalized) return done(ST_BAD_PARAM);
    cudnnStatus_t s = ST_SUCCESS;
    switch (d->type) {
    case D_TENSOR: {
        const attr *dims = find_attr(d, A_TENSOR_DIMENSIONS), *strides = find_attr(d, A_TENSOR_STRIDES);
        int64_t dd[MAX_DIMS];
        if (!dims || !strides || dims->n != strides->n || tensor_dims(d, dd, NULL) < 0 ||
            !find_attr(d, A_TENSOR_UNIQUE_ID) || get_enum(d, A_TENSOR_DATA_TYPE, -1) < 0)
            s = fail(ST_BAD_PARAM, "tensor descriptor without its data type, unique id, or 1 to %d positive "
                                   "dimensions with as many strides", MAX_DIMS);
        break;
    }
    case D_CONVOLUTION:
        if (get_i64(d, A_CONVOLUTION_SPATIAL_DIMS, 0) < 1) s = fail(ST_BAD_PARAM, "convolution descriptor without spatial dimensions");
        break;
    case D_OPERATIONGRAPH: s = classify(d); break;
    case D_ENGINEHEUR: s = needs(d, A_ENGINEHEUR_OPERATION_GRAPH, D_OPERATIONGRAPH, "engine heuristics"); break;
    case D_ENGINE: {
        int64_t i = get_i64(d, A_ENGINE_GLOBAL_INDEX, -1);
        s = needs(d, A_ENGINE_OPERATION_GRAPH, D_OPERATIONGRAPH, "engine");
        if (!s && (i < 0 || i >= ENGINES))
            s = fail(ST_BAD_PARAM_OUT_OF_BOUND, "engine global index %lld: the emulator has engines 0 and 1", (long long)i);
        break;
    }
    case D_ENGINECFG: s = needs(d, A_ENGINECFG_ENGINE, D_ENGINE, "engine config"); break;
    case D_EXECUTION_PLAN: {
        const desc *c = get_desc(d, A_EXECUTION_PLAN_ENGINE_CONFIG, 0, D_ENGINECFG);
        const desc *e = c ? get_desc(c, A_ENGINECFG_ENGINE, 0, D_ENGINE) : NULL;
        desc *g = e ? get_desc(e, A_ENGINE_OPERATION_GRAPH, 0, D_OPERATIONGRAPH) : NULL;
        if (!c || !c->finalized || !g) s = fail(ST_BAD_PARAM, "execution plan without a finalized engine config");
        else if (get_i64(e, A_ENGINE_GLOBAL_INDEX, -1) == 0) g->tensor_core = 1; /* the program allows it */
        break;
    }
    case D_VARIANT_PACK: {
        const attr *u = find_attr(d, A_VARIANT_PACK_UNIQUE_IDS), *ptrs = find_attr(d, A_VARIANT_PACK_DATA_POINTERS);
        if ((u ? u->n : 0) != (ptrs ? ptrs->n : 0)) s = fail(ST_BAD_PARAM, "variant pack with unequal counts of unique ids and pointers");
        break;
    }
    case D_OP_CONV_FWD: case D_OP_CONV_BWD_DATA: case D_OP_CONV_BWD_FILTER: {
        gcost c;
        s = conv_cost(d, &c);
        break;
    }
    default: break; /* pointwise, matmul, reduction, rng, knob choices, ...: what they hold is checked with their graph */
    }
    if (!s) d->finalized = 1;
    return done(s);
}

/* The trace dtype of data of cudnnDataType_t dt; tf32: FP32 data on tensor cores. */
static const char *trace_dtype(int dt, int tf32)
{
    switch (dt) {
    case DT_HALF: return "fp16";
    case DT_BFLOAT16: return "bf16";
    case DT_FP8_E4M3: case DT_FP8_E5M2: return "fp8";
    default: return dt == DT_FLOAT && tf32 ? "tf32" : "fp32";
    }
}

EMU_EXPORT cudnnStatus_t cudnnBackendExecute(void *handle, void *plan, void *pack)
{
    ENTER("cudnnBackendExecute");
    desc *h = D(handle, D_HANDLE), *p = D(plan, D_EXECUTION_PLAN), *v = D(pack, D_VARIANT_PACK);
    if (!h) return done(ST_NOT_INITIALIZED);
    if (!p || !v) return done(ST_BAD_PARAM);
    if (!p->finalized || !v->finalized) return done(ST_BAD_PARAM_NOT_FINALIZED);
    const desc *cfg = get_desc(p, A_EXECUTION_PLAN_ENGINE_CONFIG, 0, D_ENGINECFG);
    const desc *eng = cfg ? get_desc(cfg, A_ENGINECFG_ENGINE, 0, D_ENGINE) : NULL;
    const desc *g = eng ? get_desc(eng, A_ENGINE_OPERATION_GRAPH, 0, D_OPERATIONGRAPH) : NULL;
    if (!g || g->cost.kind == G_NONE) return done(ST_BAD_PARAM);
    int s = emu_stream_index(h->stream);
    if (s < 0) emu_die("cudnnBackendExecute: stream %p is not a stream this process created", h->stream);
    static const char *const names[] = {"", "cudnn_conv_fprop", "cudnn_conv_dgrad", "cudnn_conv_wgrad",
                                        "cudnn_sdpa_fwd", "cudnn_sdpa_bwd"};
    const gcost *c = &g->cost;
    const char *cls = c->kind == G_ATTN_FWD ? "attention_fwd" : c->kind == G_ATTN_BWD ? "attention_bwd" : "gemm";
    /* FP32 data runs in TF32 when the program allowed the tensor-core engine for this graph (PyTorch
     * drops engines with the TENSOR_CORE note unless torch.backends.cudnn.allow_tf32), whichever plan
     * it runs: under cudnn.benchmark PyTorch keeps the plan its CUDA events time fastest, which here
     * measure host time, so that choice is arbitrary; a GPU's timing picks the tensor-core engine */
    emu_lib_op(s, names[c->kind], cls, trace_dtype(c->dt, g->tensor_core), c->dims, c->flops, c->bytes);
    return done(ST_SUCCESS);
}

/* ---- handles, versions, errors ---- */

EMU_EXPORT size_t cudnnGetVersion(void)
{
    EMU_ENTER("cudnnGetVersion");
    emu_leave();
    return EMU_CUDNN_VERSION;
}

EMU_EXPORT size_t cudnnGetCudartVersion(void)
{
    EMU_ENTER("cudnnGetCudartVersion");
    emu_leave();
    return EMU_CUDNN_CUDART_VERSION;
}

/* libraryPropertyType: MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2 */
EMU_EXPORT cudnnStatus_t cudnnGetProperty(int type, int *value)
{
    if (!value) return ST_BAD_PARAM_NULL_POINTER;
    if (type < 0 || type > 2) return ST_BAD_PARAM;
    *value = type == 0 ? EMU_CUDNN_VERSION / 10000 : type == 1 ? EMU_CUDNN_VERSION / 100 % 100 : EMU_CUDNN_VERSION % 100;
    return ST_SUCCESS;
}

EMU_EXPORT const char *cudnnGetErrorString(cudnnStatus_t s)
{
    switch (s) {
    case ST_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case ST_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case ST_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case ST_BAD_PARAM_NULL_POINTER: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case ST_BAD_PARAM_NOT_FINALIZED: return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
    case ST_BAD_PARAM_OUT_OF_BOUND: return "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND";
    case ST_BAD_PARAM_SHAPE_MISMATCH: return "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH";
    case ST_BAD_PARAM_ATTRIBUTE_TYPE: return "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE";
    case ST_BAD_PARAM_DESCRIPTOR_TYPE: return "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE";
    case ST_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case ST_NOT_SUPPORTED_GRAPH_PATTERN: return "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN";
    case ST_NOT_SUPPORTED_SHAPE: return "CUDNN_STATUS_NOT_SUPPORTED_SHAPE";
    case ST_NOT_SUPPORTED_DATA_TYPE: return "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE";
    case ST_INTERNAL_ERROR_HOST_ALLOCATION_FAILED: return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
    default: return "CUDNN_STATUS_UNKNOWN (an error code the emulator does not return)";
    }
}

EMU_EXPORT void cudnnGetLastErrorString(char *message, size_t max)
{
    if (message && max) {
        snprintf(message, max, "%s", last_error);
        last_error[0] = 0;
    }
}

EMU_EXPORT cudnnStatus_t cudnnCreate(void **h)
{
    ENTER("cudnnCreate");
    return done(create_own(h, D_HANDLE));
}

EMU_EXPORT cudnnStatus_t cudnnDestroy(void *h)
{
    ENTER("cudnnDestroy");
    return done(h ? destroy_own(h, D_HANDLE) : ST_BAD_PARAM);
}

EMU_EXPORT cudnnStatus_t cudnnSetStream(void *h, void *stream)
{
    ENTER("cudnnSetStream");
    desc *d = D(h, D_HANDLE);
    if (!d) return done(ST_NOT_INITIALIZED);
    if (emu_stream_index(stream) < 0) emu_die("cudnnSetStream: stream %p is not a stream this process created", stream);
    d->stream = stream;
    return done(ST_SUCCESS);
}

EMU_EXPORT cudnnStatus_t cudnnGetStream(void *h, void **stream)
{
    ENTER("cudnnGetStream");
    desc *d = D(h, D_HANDLE);
    if (!d) return done(ST_NOT_INITIALIZED);
    if (!stream) return done(ST_BAD_PARAM_NULL_POINTER);
    *stream = d->stream;
    return done(ST_SUCCESS);
}

/* ---- the legacy API: tensor and activation descriptors, batch norm ---- */

EMU_EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(void **t)
{
    ENTER("cudnnCreateTensorDescriptor");
    return done(create_own(t, D_LEGACY_TENSOR));
}

EMU_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(void *t, int dt, int nd, const int dims[], const int strides[])
{
    ENTER("cudnnSetTensorNdDescriptor");
    desc *d = D(t, D_LEGACY_TENSOR);
    if (!d) return done(ST_BAD_PARAM);
    if (nd < 1 || nd > MAX_DIMS || !dims || !strides) return done(ST_BAD_PARAM);
    for (int i = 0; i < nd; i++)
        if (dims[i] < 1) return done(ST_BAD_PARAM);
    if (!dt_bytes(dt)) return done(fail(ST_NOT_SUPPORTED_DATA_TYPE, "tensor descriptor of data type %d", dt));
    d->ldt = dt, d->lnd = nd;
    memcpy(d->ldims, dims, (size_t)nd * sizeof *dims);
    memcpy(d->lstrides, strides, (size_t)nd * sizeof *strides);
    return done(ST_SUCCESS);
}

EMU_EXPORT cudnnStatus_t cudnnGetTensorNdDescriptor(const void *t, int requested, int *dt, int *nd, int dims[],
                                                    int strides[])
{
    ENTER("cudnnGetTensorNdDescriptor");
    desc *d = D(t, D_LEGACY_TENSOR);
    if (!d || !d->lnd) return done(ST_BAD_PARAM);
    if (requested < 0) return done(ST_BAD_PARAM);
    if (dt) *dt = d->ldt;
    if (nd) *nd = d->lnd;
    for (int i = 0; i < requested && i < d->lnd; i++) {
        if (dims) dims[i] = d->ldims[i];
        if (strides) strides[i] = d->lstrides[i];
    }
    return done(ST_SUCCESS);
}

EMU_EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(void *t)
{
    ENTER("cudnnDestroyTensorDescriptor");
    return done(destroy_own(t, D_LEGACY_TENSOR));
}

EMU_EXPORT cudnnStatus_t cudnnCreateActivationDescriptor(void **a)
{
    ENTER("cudnnCreateActivationDescriptor");
    return done(create_own(a, D_LEGACY_ACTIVATION));
}

EMU_EXPORT cudnnStatus_t cudnnSetActivationDescriptor(void *a, int mode, int nan, double coef)
{
    (void)mode, (void)nan, (void)coef;
    ENTER("cudnnSetActivationDescriptor");
    return done(D(a, D_LEGACY_ACTIVATION) ? ST_SUCCESS : ST_BAD_PARAM); /* an activation costs no extra pass */
}

EMU_EXPORT cudnnStatus_t cudnnDestroyActivationDescriptor(void *a)
{
    ENTER("cudnnDestroyActivationDescriptor");
    return done(destroy_own(a, D_LEGACY_ACTIVATION));
}

/* The bytes of a legacy tensor (its elements, dense), 0 for none; -1: not a set tensor descriptor. */
static double tensor_bytes(const void *t)
{
    if (!t) return 0;
    const desc *d = D(t, D_LEGACY_TENSOR);
    if (!d || !d->lnd) return -1;
    double n = dt_bytes(d->ldt);
    for (int i = 0; i < d->lnd; i++) n *= d->ldims[i];
    return n;
}

/* Batch norm: a memory-bound pass over its tensors (class norm), each read or written once. */
static cudnnStatus_t batch_norm(void *handle, const char *name, const void *x, const void *const *more, int nmore)
{
    desc *h = D(handle, D_HANDLE);
    if (!h) return ST_NOT_INITIALIZED;
    double bytes = tensor_bytes(x);
    if (bytes <= 0) return fail(ST_BAD_PARAM, "%s: x is not a tensor descriptor that was set", name);
    for (int i = 0; i < nmore; i++) {
        double b = tensor_bytes(more[i]);
        if (b < 0) return fail(ST_BAD_PARAM, "%s: tensor descriptor %d is not one that was set", name, i + 1);
        bytes += b;
    }
    int s = emu_stream_index(h->stream);
    if (s < 0) emu_die("%s: stream %p is not a stream this process created", name, h->stream);
    const desc *xd = D(x, D_LEGACY_TENSOR);
    static const uint32_t nodims[4];
    emu_lib_op(s, name, "norm", trace_dtype(xd->ldt, 0), nodims, 0, bytes);
    return ST_SUCCESS;
}

/* The workspace and reserve space batch norm needs: none (the emulated kernels keep nothing). */
static cudnnStatus_t no_space(size_t *bytes)
{
    if (!bytes) return ST_BAD_PARAM_NULL_POINTER;
    *bytes = 0;
    return ST_SUCCESS;
}

EMU_EXPORT cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    void *handle, int mode, int ops, const void *x, const void *z, const void *y, const void *bn, const void *act,
    size_t *bytes)
{
    (void)handle, (void)mode, (void)ops, (void)x, (void)z, (void)y, (void)bn, (void)act;
    ENTER("cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize");
    return done(no_space(bytes));
}

EMU_EXPORT cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    void *handle, int mode, int ops, const void *x, const void *y, const void *dy, const void *dz, const void *dx,
    const void *dbn, const void *act, size_t *bytes)
{
    (void)handle, (void)mode, (void)ops, (void)x, (void)y, (void)dy, (void)dz, (void)dx, (void)dbn, (void)act;
    ENTER("cudnnGetBatchNormalizationBackwardExWorkspaceSize");
    return done(no_space(bytes));
}

EMU_EXPORT cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(void *handle, int mode, int ops,
                                                                              const void *act, const void *x,
                                                                              size_t *bytes)
{
    (void)handle, (void)mode, (void)ops, (void)act, (void)x;
    ENTER("cudnnGetBatchNormalizationTrainingExReserveSpaceSize");
    return done(no_space(bytes));
}

EMU_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    void *handle, int mode, int ops, const void *alpha, const void *beta, const void *xd, const void *x,
    const void *zd, const void *z, const void *yd, void *y, const void *bnd, const void *scale, const void *bias,
    double factor, void *rmean, void *rvar, double eps, void *smean, void *sinv, void *act, void *ws,
    size_t ws_bytes, void *reserve, size_t reserve_bytes)
{
    (void)mode, (void)alpha, (void)beta, (void)x, (void)z, (void)y, (void)bnd, (void)scale, (void)bias, (void)factor,
        (void)rmean, (void)rvar, (void)eps, (void)smean, (void)sinv, (void)act, (void)ws, (void)ws_bytes,
        (void)reserve, (void)reserve_bytes;
    ENTER("cudnnBatchNormalizationForwardTrainingEx");
    const void *more[] = {yd, ops == BN_OPS_ADD_ACTIVATION ? zd : NULL};
    return done(batch_norm(handle, "cudnn_batch_norm_fwd", xd, more, 2));
}

EMU_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(void *handle, int mode, const void *alpha,
                                                                 const void *beta, const void *xd, const void *x,
                                                                 const void *yd, void *y, const void *bnd,
                                                                 const void *scale, const void *bias, const void *mean,
                                                                 const void *var, double eps)
{
    (void)mode, (void)alpha, (void)beta, (void)x, (void)y, (void)bnd, (void)scale, (void)bias, (void)mean, (void)var,
        (void)eps;
    ENTER("cudnnBatchNormalizationForwardInference");
    const void *more[] = {yd};
    return done(batch_norm(handle, "cudnn_batch_norm_inference", xd, more, 1));
}

EMU_EXPORT cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    void *handle, int mode, int ops, const void *ad, const void *bd, const void *ap, const void *bp, const void *xd,
    const void *x, const void *yd, const void *y, const void *dyd, const void *dy, const void *dzd, void *dz,
    const void *dxd, void *dx, const void *dbnd, const void *scale, const void *bias, void *dscale, void *dbias,
    double eps, const void *smean, const void *sinv, void *act, void *ws, size_t ws_bytes, void *reserve,
    size_t reserve_bytes)
{
    (void)mode, (void)ad, (void)bd, (void)ap, (void)bp, (void)x, (void)y, (void)dy, (void)dz, (void)dx, (void)dbnd,
        (void)scale, (void)bias, (void)dscale, (void)dbias, (void)eps, (void)smean, (void)sinv, (void)act, (void)ws,
        (void)ws_bytes, (void)reserve, (void)reserve_bytes;
    ENTER("cudnnBatchNormalizationBackwardEx");
    int add = ops == BN_OPS_ADD_ACTIVATION;
    const void *more[] = {dyd, dxd, ops ? yd : NULL, add ? dzd : NULL};
    return done(batch_norm(handle, "cudnn_batch_norm_bwd", xd, more, 4));
}
