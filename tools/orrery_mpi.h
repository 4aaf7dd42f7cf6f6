/*
 * orrery_mpi.h - `mpirun -n P orrery search ...`: the MPI job's ranks as the search's
 * orr_search_ranks (search.h). Built into the orrery executable only when CMake finds MPI
 * (ORRERY_HAVE_MPI); the library itself never links MPI.
 */
#ifndef ORRERY_TOOLS_MPI_H
#define ORRERY_TOOLS_MPI_H

#include "orrery/search.h"

/* Initialises MPI when this process was started by mpirun with more than one rank (OpenMPI's
 * OMPI_COMM_WORLD_SIZE) and fills k: returns 1. Returns 0 (k untouched, MPI not initialised) for a
 * process started alone. */
int orr_mpi_begin(orr_search_ranks *k);
/* Finalises MPI; with failed, aborts every rank (one that failed alone would leave the others
 * waiting in a collective). */
void orr_mpi_end(int failed);

#endif
