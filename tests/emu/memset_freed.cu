// Emulator test program: memset on device memory that was freed (or was never allocated) fails
// with cudaErrorInvalidValue, as on a GPU, and a memset of live memory succeeds.
#include <cstdio>

int main()
{
    void *p = nullptr;
    if (cudaMalloc(&p, 1 << 20) != cudaSuccess) return 1;
    if (cudaMemsetAsync(p, 0, 1 << 20, 0) != cudaSuccess) return 1;
    if (cudaMemset((char *)p + 4096, 1, 4096) != cudaSuccess) return 1;
    if (cudaMemset(p, 0, (1 << 20) + 1) != cudaErrorInvalidValue) return 2; /* past its end */
    cudaGetLastError();
    cudaFree(p);
    cudaError_t e = cudaMemsetAsync(p, 0, 1 << 20, 0);
    if (e != cudaErrorInvalidValue) {
        fprintf(stderr, "memset of freed memory: expected cudaErrorInvalidValue, got %s\n", cudaGetErrorName(e));
        return 3;
    }
    cudaGetLastError();
    int host = 0;
    if (cudaMemset(&host, 0, sizeof host) != cudaErrorInvalidValue) return 4;
    printf("memset of freed memory refused: %s\n", cudaGetErrorString(e));
    return 0;
}
