/*
 * orrery_mpi.c - the MPI side of `orrery search` (orrery_mpi.h): every rank runs the same search
 * (enumeration, pruning and strategy are deterministic), simulates its share of each batch, and
 * MPI_Allgatherv gives every rank the whole batch's trial records, so each goes on with the same
 * results; rank 0 prints.
 */
#include "orrery_mpi.h"

#include <mpi.h>
#include <stdlib.h>

static int allgather(void *ctx, const orr_trial *mine, uint32_t n_mine, orr_trial *all, uint32_t n_all)
{
    (void)ctx;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *counts = malloc((size_t)size * sizeof *counts), *displs = malloc((size_t)size * sizeof *displs);
    int rc = -1, mine_bytes = (int)(n_mine * sizeof *mine);
    if (counts && displs && MPI_Allgather(&mine_bytes, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS) {
        long long total = 0;
        for (int r = 0; r < size; r++) displs[r] = (int)total, total += counts[r];
        if (total == (long long)n_all * (long long)sizeof *all &&
            MPI_Allgatherv(mine, mine_bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD) == MPI_SUCCESS)
            rc = 0;
    }
    free(counts);
    free(displs);
    return rc;
}

int orr_mpi_begin(orr_search_ranks *k)
{
    const char *n = getenv("OMPI_COMM_WORLD_SIZE");
    if (!n || atoi(n) <= 1) return 0;
    MPI_Init(NULL, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *k = (orr_search_ranks){.rank = (uint32_t)rank, .size = (uint32_t)size, .allgather = allgather, .ctx = NULL};
    return 1;
}

void orr_mpi_end(int failed)
{
    if (failed) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Finalize();
}
