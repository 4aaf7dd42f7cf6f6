// Emulator test program: cuBLAS GEMMs (FP32 with TF32 math, BF16 GemmEx, strided-batched FP16)
// on a stream set on the handle.
#include <cstdio>
#include <cublas_v2.h>

#include "check.h"

int main()
{
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cublasSetStream(h, s));
    void *a, *b, *c;
    CHECK(cudaMalloc(&a, 64 << 20));
    CHECK(cudaMalloc(&b, 64 << 20));
    CHECK(cudaMalloc(&c, 64 << 20));
    float one = 1.0f, zero = 0.0f;
    CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1024, 2048, 512, &one, (float *)a, 1024, (float *)b, 512, &zero,
                      (float *)c, 1024));
    CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 4096, 4096, 4096, &one, a, CUDA_R_16BF, 4096, b, CUDA_R_16BF, 4096,
                       &zero, c, CUDA_R_16BF, 4096, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 128, 64, &one, a, CUDA_R_16F, 128, 128 * 64, b,
                                     CUDA_R_16F, 64, 64 * 128, &zero, c, CUDA_R_16F, 128, 128 * 128, 32,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cublasDestroy(h));
    printf("gemm ok\n");
    return 0;
}
