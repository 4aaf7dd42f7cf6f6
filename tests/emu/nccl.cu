// Emulator test program: NCCL across processes. The parent makes a unique id and forks NRANKS
// children (one GPU each); each joins the world communicator, runs every collective, a ring of
// grouped send/recv, splits the world into two halves and all-reduces within its half.
// Usage: nccl [NRANKS] [--no-p2p]   (--no-p2p: only identical collectives, for deduplication)
#include "ranks.h"
#include <cstring>

static int worker(int rank, int nranks, ncclUniqueId id, int p2p)
{
    CHECK(cudaSetDevice(rank % 8));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    ncclComm_t world;
    CHECK(ncclCommInitRank(&world, nranks, id, rank));
    int n = 0, r = -1;
    CHECK(ncclCommCount(world, &n));
    CHECK(ncclCommUserRank(world, &r));
    if (n != nranks || r != rank) return 1;
    const size_t count = 16 << 20; /* elements */
    void *buf;
    CHECK(cudaMalloc(&buf, count * 4 * nranks));
    for (int it = 0; it < 2; it++) {
        CHECK(ncclAllReduce(buf, buf, count, ncclBfloat16, ncclSum, world, s));
        CHECK(ncclAllGather(buf, buf, count / nranks, ncclFloat32, world, s));
        CHECK(ncclReduceScatter(buf, buf, count / nranks, ncclFloat32, ncclSum, world, s));
        CHECK(ncclBroadcast(buf, buf, 1024, ncclFloat32, 0, world, s));
    }
    if (p2p) {
        CHECK(ncclGroupStart());
        CHECK(ncclSend(buf, 1 << 20, ncclFloat32, (rank + 1) % nranks, world, s));
        CHECK(ncclRecv(buf, 1 << 20, ncclFloat32, (rank + nranks - 1) % nranks, world, s));
        CHECK(ncclGroupEnd());
        ncclComm_t half;
        CHECK(ncclCommSplit(world, rank % 2, rank, &half, NULL));
        CHECK(ncclCommCount(half, &n));
        CHECK(ncclCommUserRank(half, &r));
        if (n != nranks / 2 || r != rank / 2) {
            fprintf(stderr, "rank %d: split gave %d ranks, rank %d\n", rank, n, r);
            return 1;
        }
        CHECK(ncclAllReduce(buf, buf, 1 << 20, ncclFloat32, ncclSum, half, s));
        CHECK(ncclCommDestroy(half));
    }
    CHECK(cudaStreamSynchronize(s));
    CHECK(ncclCommDestroy(world));
    CHECK(cudaFree(buf));
    return 0;
}

int main(int argc, char **argv)
{
    int nranks = argc > 1 ? atoi(argv[1]) : 4;
    int p2p = !(argc > 2 && strcmp(argv[2], "--no-p2p") == 0);
    if (nranks < 2 || nranks % 2) return 2;
    return run_ranks(nranks, worker, p2p);
}
