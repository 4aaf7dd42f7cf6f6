// Emulator test program (issue 23 item 2): an all-to-all with uneven splits as PyTorch's
// all_to_all_single makes it, a group of ncclSend/ncclRecv to every rank, this one included.
// Rank s sends (s + d + 1) MiB of floats to rank d (so it receives (s + d + 1) MiB from each s).
// The split sizes travel first through ncclAlltoAll on small (backed) buffers, and each rank
// checks what it received against the emulator's rule: every slot gets this rank's own chunk.
// Usage: alltoallv [NRANKS]
#include "ranks.h"

static int worker(int rank, int nranks, ncclUniqueId id, int unused)
{
    (void)unused;
    CHECK(cudaSetDevice(rank));
    ncclComm_t comm;
    CHECK(ncclCommInitRank(&comm, nranks, id, rank));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    /* the splits: what this rank sends to each rank, in elements */
    long long counts[64], got[64];
    for (int d = 0; d < nranks; d++) counts[d] = (long long)(rank + d + 1) << 18;
    long long *dc, *dg;
    CHECK(cudaMalloc(&dc, sizeof counts));
    CHECK(cudaMalloc(&dg, sizeof got));
    CHECK(cudaMemcpy(dc, counts, nranks * sizeof *counts, cudaMemcpyHostToDevice));
    CHECK(ncclAlltoAll(dc, dg, 1, ncclInt64, comm, s));
    CHECK(cudaMemcpy(got, dg, nranks * sizeof *got, cudaMemcpyDeviceToHost));
    for (int d = 0; d < nranks; d++)
        if (got[d] != counts[rank]) {
            fprintf(stderr, "rank %d: split from %d: %lld, expected %lld\n", rank, d, got[d], counts[rank]);
            return 1;
        }
    float *in, *out;
    CHECK(cudaMalloc(&in, 64 << 20));
    CHECK(cudaMalloc(&out, 64 << 20));
    size_t off = 0;
    CHECK(ncclGroupStart());
    for (int d = 0; d < nranks; d++) {
        CHECK(ncclSend(in + off, counts[d], ncclFloat32, d, comm, s));
        CHECK(ncclRecv(out + off, (size_t)(d + rank + 1) << 18, ncclFloat32, d, comm, s));
        off += (size_t)counts[d];
    }
    CHECK(ncclGroupEnd());
    CHECK(cudaStreamSynchronize(s));
    CHECK(ncclCommDestroy(comm));
    return 0;
}

int main(int argc, char **argv)
{
    int nranks = argc > 1 ? atoi(argv[1]) : 4;
    if (nranks < 2 || nranks > 8) return 2;
    return run_ranks(nranks, worker, 0);
}
