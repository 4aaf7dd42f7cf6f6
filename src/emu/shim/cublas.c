/*
 * cublas.c - the cuBLAS stand-in (libcublas.so.12 and libcublas.so.13 from this file, each with
 * its soname and version node). A handle carries its stream and math mode; every GEMM is recorded
 * as "G stream m n k batch dtype ta tb" so the estimators size it. Entry points PyTorch links
 * against that are not here are stubs that record the call (src/emu/shim/syms), so a run that
 * needed one is refused; any other name fails at symbol lookup.
 */
#include "emu.h"

#include <stdlib.h>

typedef int cublasStatus_t;
enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
enum { CUBLAS_TF32_TENSOR_OP_MATH = 3 };
/* cudaDataType_t values (library_types.h) */
enum { CUDA_R_32F = 0, CUDA_R_16F = 2 };
/* cublasComputeType_t values that ask for TF32 on FP32 data */
enum { CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };

#ifndef EMU_CUBLAS_VERSION
#define EMU_CUBLAS_VERSION 130000
#endif

typedef struct emu_blas {
    void *stream;
    int math_mode;
    int pointer_mode;
} emu_blas;
typedef emu_blas *cublasHandle_t;

static cublasStatus_t done(cublasStatus_t s)
{
    emu_leave();
    return s;
}

EMU_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    EMU_ENTER("cublasCreate_v2");
    if (!h) return done(CUBLAS_STATUS_INVALID_VALUE);
    *h = calloc(1, sizeof **h);
    return done(*h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED);
}

EMU_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    EMU_ENTER("cublasDestroy_v2");
    free(h);
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int *v)
{
    (void)h;
    EMU_ENTER("cublasGetVersion_v2");
    if (!v) return done(CUBLAS_STATUS_INVALID_VALUE);
    *v = EMU_CUBLAS_VERSION;
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t h, void *stream)
{
    EMU_ENTER("cublasSetStream_v2");
    if (!h) return done(CUBLAS_STATUS_NOT_INITIALIZED);
    if (emu_stream_index(stream) < 0) emu_die("cublasSetStream: stream %p is not a stream this process created", stream);
    h->stream = stream;
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t h, void **stream)
{
    EMU_ENTER("cublasGetStream_v2");
    if (!h || !stream) return done(CUBLAS_STATUS_INVALID_VALUE);
    *stream = h->stream;
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t h, int mode)
{
    EMU_ENTER("cublasSetMathMode");
    if (!h) return done(CUBLAS_STATUS_NOT_INITIALIZED);
    h->math_mode = mode;
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t h, int *mode)
{
    EMU_ENTER("cublasGetMathMode");
    if (!h || !mode) return done(CUBLAS_STATUS_INVALID_VALUE);
    *mode = h->math_mode;
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, int mode)
{
    EMU_ENTER("cublasSetPointerMode_v2");
    if (!h) return done(CUBLAS_STATUS_NOT_INITIALIZED);
    h->pointer_mode = mode;
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, int *mode)
{
    EMU_ENTER("cublasGetPointerMode_v2");
    if (!h || !mode) return done(CUBLAS_STATUS_INVALID_VALUE);
    *mode = h->pointer_mode;
    return done(CUBLAS_STATUS_SUCCESS);
}

EMU_EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *ws, size_t bytes)
{
    (void)ws, (void)bytes;
    EMU_ENTER("cublasSetWorkspace_v2");
    return done(h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED);
}

EMU_EXPORT const char *cublasGetStatusString(cublasStatus_t s)
{
    return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_INVALID_VALUE";
}

static cublasStatus_t gemm(cublasHandle_t h, int ta, int tb, long long m, long long n, long long k, long long batch,
                           int dtype, int compute)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    int tf32 = compute == CUBLAS_COMPUTE_32F_FAST_TF32 || h->math_mode == CUBLAS_TF32_TENSOR_OP_MATH;
    if (emu_gemm(emu_stream_index(h->stream), m, n, k, batch, dtype, tf32, ta, tb) < 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    return CUBLAS_STATUS_SUCCESS;
}

EMU_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha,
                                         const float *A, int lda, const float *B, int ldb, const float *beta, float *C,
                                         int ldc)
{
    (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
    EMU_ENTER("cublasSgemm_v2");
    return done(gemm(h, ta, tb, m, n, k, 1, CUDA_R_32F, 0));
}

EMU_EXPORT cublasStatus_t cublasHgemm(cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha,
                                      const void *A, int lda, const void *B, int ldb, const void *beta, void *C, int ldc)
{
    (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
    EMU_ENTER("cublasHgemm");
    return done(gemm(h, ta, tb, m, n, k, 1, CUDA_R_16F, 0));
}

EMU_EXPORT cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                                                    const float *alpha, const float *A, int lda, long long sa,
                                                    const float *B, int ldb, long long sb, const float *beta, float *C,
                                                    int ldc, long long sc, int batch)
{
    (void)alpha, (void)A, (void)lda, (void)sa, (void)B, (void)ldb, (void)sb, (void)beta, (void)C,
        (void)ldc, (void)sc;
    EMU_ENTER("cublasSgemmStridedBatched");
    return done(gemm(h, ta, tb, m, n, k, batch, CUDA_R_32F, 0));
}

EMU_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha,
                                       const void *A, int atype, int lda, const void *B, int btype, int ldb,
                                       const void *beta, void *C, int ctype, int ldc, int compute, int algo)
{
    (void)alpha, (void)A, (void)lda, (void)B, (void)btype, (void)ldb, (void)beta, (void)C,
        (void)ctype, (void)ldc, (void)algo;
    EMU_ENTER("cublasGemmEx");
    return done(gemm(h, ta, tb, m, n, k, 1, atype, compute));
}

EMU_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                                                     const void *alpha, const void *A, int atype, int lda, long long sa,
                                                     const void *B, int btype, int ldb, long long sb, const void *beta,
                                                     void *C, int ctype, int ldc, long long sc, int batch, int compute,
                                                     int algo)
{
    (void)alpha, (void)A, (void)lda, (void)sa, (void)B, (void)btype, (void)ldb, (void)sb,
        (void)beta, (void)C, (void)ctype, (void)ldc, (void)sc, (void)algo;
    EMU_ENTER("cublasGemmStridedBatchedEx");
    return done(gemm(h, ta, tb, m, n, k, batch, atype, compute));
}
