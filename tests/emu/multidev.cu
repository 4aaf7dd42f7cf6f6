// Emulator test program: one process driving two GPUs (issue 23 item 8), as nccl-tests -g 2 and
// model parallelism by hand do. Device d gets its own stream, (d + 1) x 64 MiB of memory and d + 1
// kernels; ncclCommInitAll makes a communicator of both devices, and a grouped all-reduce runs on
// each. Checks what the program observes: the current device, each allocation's device, each
// device's free memory.
// Usage: multidev [--pipe | --sync | --split]
//   --pipe: then 2 x 64 MiB copied from device 0 to device 1 on device 0's stream, an event recorded
//           after it that device 1's stream waits on, and a kernel on device 1 (a pipeline's hand-off)
//   --sync: then the host synchronises with device 0's stream and launches a kernel on device 1
//   --split: ncclCommSplit of ncclCommInitAll's communicator (refused: not modelled yet)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <nccl.h>

#include "check.h"
#define EXPECT(c)                                                                          \
    do {                                                                                   \
        if (!(c)) {                                                                        \
            fprintf(stderr, "multidev: %s:%d: expected %s\n", __FILE__, __LINE__, #c);     \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

__global__ void scale(float *x, size_t n, float a)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int ndev = 0;
    CHECK(cudaGetDeviceCount(&ndev));
    EXPECT(ndev >= 2);
    const size_t mib = 1 << 20;
    cudaStream_t s[2];
    float *buf[2];
    size_t free_b[2], total_b[2];
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        int cur = -1;
        CHECK(cudaGetDevice(&cur));
        EXPECT(cur == d);
        CHECK(cudaStreamCreate(&s[d]));
        CHECK(cudaMalloc(&buf[d], (d + 1) * 64 * mib));
        cudaPointerAttributes a;
        CHECK(cudaPointerGetAttributes(&a, buf[d]));
        EXPECT(a.device == d);
        size_t n = (d + 1) * 16 * mib; /* floats */
        for (int k = 0; k <= d; k++) scale<<<(unsigned)((n + 255) / 256), 256, 0, s[d]>>>(buf[d], n, 2.0f);
        CHECK(cudaGetLastError());
        CHECK(cudaMemGetInfo(&free_b[d], &total_b[d]));
    }
    EXPECT(free_b[0] - free_b[1] == 64 * mib); /* each device counts its own allocations */
    if (!strcmp(mode, "--pipe")) {
        cudaEvent_t e;
        CHECK(cudaSetDevice(0));
        CHECK(cudaEventCreate(&e));
        CHECK(cudaMemcpyPeerAsync(buf[1], 1, buf[0], 0, 64 * mib, s[0]));
        CHECK(cudaMemcpyPeerAsync(buf[1] + 16 * mib, 1, buf[0], 0, 64 * mib, s[0]));
        CHECK(cudaEventRecord(e, s[0]));
        CHECK(cudaSetDevice(1));
        CHECK(cudaStreamWaitEvent(s[1], e, 0));
        scale<<<1024, 256, 0, s[1]>>>(buf[1], 1024 * 256, 0.5f);
        CHECK(cudaGetLastError());
        CHECK(cudaEventDestroy(e));
    }
    if (!strcmp(mode, "--sync")) {
        CHECK(cudaSetDevice(0));
        CHECK(cudaStreamSynchronize(s[0]));
        CHECK(cudaSetDevice(1));
        scale<<<1024, 256, 0, s[1]>>>(buf[1], 1024 * 256, 0.5f);
        CHECK(cudaGetLastError());
    }
    ncclComm_t comms[2];
    int devs[2] = {0, 1};
    CHECK(ncclCommInitAll(comms, 2, devs));
    for (int d = 0; d < 2; d++) {
        int cd = -1, r = -1, n = 0;
        CHECK(ncclCommCuDevice(comms[d], &cd));
        CHECK(ncclCommUserRank(comms[d], &r));
        CHECK(ncclCommCount(comms[d], &n));
        EXPECT(cd == d && r == d && n == 2);
    }
    if (!strcmp(mode, "--split")) {
        ncclComm_t half;
        CHECK(ncclCommSplit(comms[0], 0, 0, &half, NULL));
    }
    CHECK(ncclGroupStart());
    for (int d = 0; d < 2; d++) CHECK(ncclAllReduce(buf[d], buf[d], 16 * mib, ncclFloat32, ncclSum, comms[d], s[d]));
    CHECK(ncclGroupEnd());
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamSynchronize(s[d]));
    }
    for (int d = 0; d < 2; d++) {
        CHECK(ncclCommDestroy(comms[d]));
        CHECK(cudaFree(buf[d])); /* a free is the allocation's device's, whatever the current one */
    }
    printf("multidev ok\n");
    return 0;
}
