// Emulator test program for `orrery emulate --live` (tests/cli_emulate.sh): times a loop of cuBLAS
// GEMMs with two events, as a benchmark does, and prints the elapsed milliseconds. Under --live the
// value is the simulated GPU time between the two records, so it matches Orrery's prediction of the
// whole program (the GEMMs dominate it). `--fewer FILE` makes one more record when FILE does not
// exist (and creates it), `--more FILE` when it does: a program whose record sequence differs
// between runs (fewer or more records in the second), which --live refuses.
#include <cstdio>
#include <cublas_v2.h>

#include "check.h"

int main(int argc, char **argv)
{
    const int n = 4096, iters = 20;
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, (size_t)n * n * sizeof(float)));
    CHECK(cudaMalloc(&b, (size_t)n * n * sizeof(float)));
    CHECK(cudaMalloc(&c, (size_t)n * n * sizeof(float)));
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    if (argc > 2) { // --fewer/--more FILE: an extra record in the first or the second run only
        FILE *f = fopen(argv[2], "r");
        int exists = f != NULL;
        if (f) fclose(f);
        else if ((f = fopen(argv[2], "w"))) fclose(f);
        if (exists == (argv[1][2] == 'm')) CHECK(cudaEventRecord(start, 0));
    }
    const float one = 1.0f, zero = 0.0f;
    CHECK(cudaEventRecord(start, 0));
    for (int i = 0; i < iters; i++)
        CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    printf("elapsed_ms %.6f\n", ms);
    CHECK(cublasDestroy(h));
    return 0;
}
