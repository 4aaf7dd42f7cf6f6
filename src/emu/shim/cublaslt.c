/*
 * cublaslt.c - the cuBLASLt stand-in (libcublasLt.so.12, version node libcublasLt.so.12).
 *
 * PyTorch runs its addmm/linear GEMMs through cublasLtMatmul: descriptors for the operation and
 * the three matrix layouts, a preference, a heuristic query that must return a usable algorithm,
 * then the call. The descriptors keep what sizes the GEMM (types, rows/cols, transposes, batch);
 * the heuristic returns one algorithm that needs no workspace; each cublasLtMatmul is recorded as
 * a GEMM (emu_gemm) on the stream it is given. The Lt handle PyTorch passes is its cuBLAS handle
 * (cublasLtHandle_t and cublasHandle_t are interchangeable in cuBLAS 12), never dereferenced here.
 */
#include "emu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;
enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
/* cublasComputeType_t (cublas_api.h) */
enum { CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };
/* cublasLtMatmulDescAttributes_t (cublasLt.h) */
enum { DESC_COMPUTE_TYPE = 0, DESC_SCALE_TYPE = 1, DESC_TRANSA = 3, DESC_TRANSB = 4 };
/* cublasLtMatrixLayoutAttribute_t */
enum { LAYOUT_TYPE = 0, LAYOUT_ROWS = 2, LAYOUT_COLS = 3, LAYOUT_BATCH_COUNT = 5 };

typedef struct lt_desc {
    int compute, scale;
    int32_t transa, transb;
} lt_desc;

typedef struct lt_layout {
    int type;
    uint64_t rows, cols;
    int32_t batch;
} lt_layout;

typedef struct lt_pref {
    int unused;
} lt_pref;

/* cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t (cublasLt.h) */
typedef struct lt_algo {
    uint64_t data[8];
} lt_algo;
typedef struct lt_heuristic {
    lt_algo algo;
    size_t workspaceSize;
    cublasStatus_t state;
    float wavesCount;
    int reserved[4];
} lt_heuristic;

static cublasStatus_t done(cublasStatus_t s)
{
    emu_leave();
    return s;
}

/* Copies an attribute value of the size the caller gives (int32 or int64 by attribute). */
static int64_t attr_value(const void *buf, size_t size)
{
    if (size == sizeof(int32_t)) {
        int32_t v;
        memcpy(&v, buf, sizeof v);
        return v;
    }
    if (size == sizeof(int64_t)) {
        int64_t v;
        memcpy(&v, buf, sizeof v);
        return v;
    }
    return -1;
}

EMU_EXPORT cublasStatus_t cublasLtMatmulDescCreate(lt_desc **d, int compute, int scale)
{
    EMU_ENTER("cublasLtMatmulDescCreate");
    if (!d) return done(CUBLAS_STATUS_INVALID_VALUE);
    *d = calloc(1, sizeof **d);
    if (!*d) return done(CUBLAS_STATUS_ALLOC_FAILED);
    (*d)->compute = compute;
    (*d)->scale = scale;
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(lt_desc *d)
{
    EMU_ENTER("cublasLtMatmulDescDestroy");
    free(d);
    return done(CUBLAS_STATUS_SUCCESS);
}

/* Attributes that do not change a GEMM's size (epilogue, bias and scale pointers, fast
 * accumulation, ...) are accepted and ignored. */
EMU_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(lt_desc *d, int attr, const void *buf, size_t size)
{
    EMU_ENTER("cublasLtMatmulDescSetAttribute");
    if (!d || !buf) return done(CUBLAS_STATUS_INVALID_VALUE);
    if (attr == DESC_TRANSA || attr == DESC_TRANSB || attr == DESC_COMPUTE_TYPE || attr == DESC_SCALE_TYPE) {
        int64_t v = attr_value(buf, size);
        if (v < 0) return done(CUBLAS_STATUS_INVALID_VALUE);
        if (attr == DESC_TRANSA) d->transa = (int32_t)v;
        else if (attr == DESC_TRANSB) d->transb = (int32_t)v;
        else if (attr == DESC_COMPUTE_TYPE) d->compute = (int)v;
        else d->scale = (int)v;
    }
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(lt_layout **l, int type, uint64_t rows, uint64_t cols, int64_t ld)
{
    (void)ld;
    EMU_ENTER("cublasLtMatrixLayoutCreate");
    if (!l) return done(CUBLAS_STATUS_INVALID_VALUE);
    *l = calloc(1, sizeof **l);
    if (!*l) return done(CUBLAS_STATUS_ALLOC_FAILED);
    (*l)->type = type;
    (*l)->rows = rows;
    (*l)->cols = cols;
    (*l)->batch = 1;
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(lt_layout *l)
{
    EMU_ENTER("cublasLtMatrixLayoutDestroy");
    free(l);
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(lt_layout *l, int attr, const void *buf, size_t size)
{
    EMU_ENTER("cublasLtMatrixLayoutSetAttribute");
    if (!l || !buf) return done(CUBLAS_STATUS_INVALID_VALUE);
    int64_t v = attr_value(buf, size);
    switch (attr) {
    case LAYOUT_TYPE: l->type = (int)v; break;
    case LAYOUT_ROWS: l->rows = (uint64_t)v; break;
    case LAYOUT_COLS: l->cols = (uint64_t)v; break;
    case LAYOUT_BATCH_COUNT:
        if (v < 1 || v > INT32_MAX) return done(CUBLAS_STATUS_INVALID_VALUE);
        l->batch = (int32_t)v;
        break;
    default: break; /* order, leading dimension, strides: no effect on the cost */
    }
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(lt_pref **p)
{
    EMU_ENTER("cublasLtMatmulPreferenceCreate");
    if (!p) return done(CUBLAS_STATUS_INVALID_VALUE);
    *p = calloc(1, sizeof **p);
    return done(*p ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED);
}

EMU_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(lt_pref *p)
{
    EMU_ENTER("cublasLtMatmulPreferenceDestroy");
    free(p);
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(lt_pref *p, int attr, const void *buf, size_t size)
{
    (void)attr, (void)size;
    EMU_ENTER("cublasLtMatmulPreferenceSetAttribute");
    return done(p && buf ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE);
}

/* One algorithm, needing no workspace, always applicable. */
EMU_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(void *handle, lt_desc *d, lt_layout *a, lt_layout *b,
                                                         lt_layout *c, lt_layout *dl, lt_pref *p, int requested,
                                                         lt_heuristic *results, int *returned)
{
    (void)handle, (void)c, (void)dl, (void)p;
    EMU_ENTER("cublasLtMatmulAlgoGetHeuristic");
    if (!d || !a || !b || !results || !returned || requested < 1) return done(CUBLAS_STATUS_INVALID_VALUE);
    memset(&results[0], 0, sizeof results[0]);
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return done(CUBLAS_STATUS_SUCCESS);
}

/* D = op(A) op(B): m, n are D's rows and columns, k the inner dimension of op(A). */
EMU_EXPORT cublasStatus_t cublasLtMatmul(void *handle, lt_desc *d, const void *alpha, const void *A, lt_layout *a,
                                         const void *B, lt_layout *b, const void *beta, const void *C, lt_layout *c,
                                         void *D, lt_layout *dl, const lt_algo *algo, void *ws, size_t ws_bytes,
                                         void *stream)
{
    (void)handle, (void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)c, (void)D, (void)algo, (void)ws,
        (void)ws_bytes;
    EMU_ENTER("cublasLtMatmul");
    if (!d || !a || !b || !dl) return done(CUBLAS_STATUS_INVALID_VALUE);
    int s = emu_stream_index(stream);
    if (s < 0) emu_die("cublasLtMatmul: stream %p is not a stream this process created", stream);
    uint64_t m = dl->rows, n = dl->cols, k = d->transa ? a->rows : a->cols;
    long long batch = dl->batch > 0 ? dl->batch : 1;
    int tf32 = d->compute == CUBLAS_COMPUTE_32F_FAST_TF32;
    if (emu_gemm(s, (long long)m, (long long)n, (long long)k, batch, a->type, tf32, d->transa, d->transb) < 0)
        return done(CUBLAS_STATUS_NOT_SUPPORTED);
    return done(CUBLAS_STATUS_SUCCESS);
}
