// Emulator test program: an allocation larger than the device must fail with
// cudaErrorMemoryAllocation (the program's own out-of-memory path runs), and the error is sticky
// until cudaGetLastError; a later allocation that fits succeeds.
#include <cstdio>

int main()
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return 1;
    void *big = nullptr;
    cudaError_t e = cudaMalloc(&big, total_b + (1ull << 30));
    if (e != cudaErrorMemoryAllocation || big != nullptr) {
        fprintf(stderr, "expected cudaErrorMemoryAllocation, got %s\n", cudaGetErrorName(e));
        return 1;
    }
    if (cudaGetLastError() != cudaErrorMemoryAllocation || cudaGetLastError() != cudaSuccess) return 1;
    void *small = nullptr;
    if (cudaMalloc(&small, 1 << 20) != cudaSuccess) return 1;
    cudaFree(small);
    printf("out of memory handled: %s\n", cudaGetErrorString(e));
    return 0;
}
