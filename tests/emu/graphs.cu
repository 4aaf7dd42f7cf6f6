// Emulator test program (tests/test_emulate.c): a CUDA graph made by stream capture. Captured on
// stream s: a kernel, a cuBLAS GEMM, a memset, an NCCL all-reduce (a one-rank communicator), and a
// branch on stream s2 joined through events (a
// kernel there); `scale` is launched only during capture. After instantiation `marker` runs on s,
// then the graph is launched twice on s and once on s3. Exits non-zero if anything the program
// can check is wrong (the capture status, the graph's node count, an error). With --overflow it
// captures 1,000,001 kernels, one more than the emulator keeps in a graph (cli_emulate.sh).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <cublas_v2.h>
#include <nccl.h>

__global__ void fill(float *a, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = v;
}

__global__ void scale(float *a, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= v;
}

__global__ void side(float *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += 1.0f;
}

__global__ void marker(float *a)
{
    a[0] = 0.0f;
}

#include "check.h"

int main(int argc, char **argv)
{
    const int n = 1 << 20;
    if (argc > 1 && strcmp(argv[1], "--overflow") == 0) { // a capture past the emulator's limit per graph
        cudaStream_t s;
        CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        float *a;
        CHECK(cudaMalloc(&a, 4));
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i <= 1000000; i++) marker<<<1, 1, 0, s>>>(a);
        cudaGraph_t g;
        CHECK(cudaStreamEndCapture(s, &g));
        CHECK(cudaGraphDestroy(g));
        return 0;
    }
    cudaStream_t s, s2, s3;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    CHECK(cublasSetStream(h, s));
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, 4 << 20));
    CHECK(cudaMalloc(&b, 4 << 20));
    CHECK(cudaMalloc(&c, 4 << 20));
    cudaEvent_t fork, join;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    float one = 1.0f, zero = 0.0f;
    ncclUniqueId id;
    CHECK(ncclGetUniqueId(&id));
    ncclComm_t comm;
    CHECK(ncclCommInitRank(&comm, 1, id, 0));

    cudaStreamCaptureStatus st;
    CHECK(cudaStreamIsCapturing(s, &st));
    if (st != cudaStreamCaptureStatusNone) return 2;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    CHECK(cudaStreamIsCapturing(s, &st));
    if (st != cudaStreamCaptureStatusActive) return 3;
    fill<<<n / 256, 256, 0, s>>>(a, 1.0f, n);
    scale<<<n / 256, 256, 0, s>>>(a, 2.0f, n);
    CHECK(cudaEventRecord(fork, s));
    CHECK(cudaStreamWaitEvent(s2, fork, 0)); // s2 joins the capture
    CHECK(cudaStreamIsCapturing(s2, &st));
    if (st != cudaStreamCaptureStatusActive) return 4;
    side<<<n / 256, 256, 0, s2>>>(c, n);
    CHECK(cudaEventRecord(join, s2));
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 512, 512, 512, &one, a, 512, b, 512, &zero, c, 512));
    CHECK(cudaMemsetAsync(b, 0, 4 << 20, s));
    CHECK(ncclAllReduce(c, c, 1 << 20, ncclFloat32, ncclSum, comm, s));
    CHECK(cudaStreamWaitEvent(s, join, 0)); // the branch rejoins
    cudaGraph_t g;
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaStreamIsCapturing(s2, &st));
    if (st != cudaStreamCaptureStatusNone) return 5;
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &nodes));
    if (nodes == 0) return 6;
    cudaGraphNode_t *node = (cudaGraphNode_t *)calloc(nodes + 1, sizeof *node);
    size_t asked = nodes + 1;
    CHECK(cudaGraphGetNodes(g, node, &asked));
    if (asked != nodes || !node[0] || node[nodes]) return 7;
    for (size_t i = 1; i < nodes; i++)
        if (!node[i] || node[i] == node[i - 1]) return 7;
    free(node);
    char dot[] = "/tmp/graphs-dot-XXXXXX";
    int fd = mkstemp(dot);
    if (fd < 0) return 8;
    close(fd);
    CHECK(cudaGraphDebugDotPrint(g, dot, 0));
    FILE *f = fopen(dot, "r");
    char line[512];
    size_t edges = 0, digraph = 0;
    while (f && fgets(line, sizeof line, f)) edges += strstr(line, "->") != NULL, digraph += strstr(line, "digraph") != NULL;
    if (f) fclose(f);
    unlink(dot);
    if (digraph != 1 || edges + 1 < nodes) return 9; // the nodes are connected
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiateWithFlags(&x, g, 0));
    CHECK(cudaGraphDestroy(g)); // the executable graph outlives its graph
    marker<<<1, 1, 0, s>>>(a);
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaGraphLaunch(x, s3));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError());
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cublasDestroy(h));
    CHECK(ncclCommDestroy(comm));
    printf("graphs ok: %zu nodes\n", nodes);
    return 0;
}
