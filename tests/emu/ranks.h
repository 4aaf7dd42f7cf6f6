// Shared by the emulator's multi-process NCCL test programs (nccl.cu, alltoallv.cu): CHECK, which
// names the rank and the call that failed, and run_ranks, which makes a unique id and forks one
// child per rank (one GPU each), as a launcher would, then waits for them all.
#include <cstdio>
#include <cstdlib>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(x)                                                                                     \
    do {                                                                                             \
        int e_ = (int)(x);                                                                           \
        if (e_ != 0) {                                                                               \
            fprintf(stderr, "rank %d: %s:%d: %s failed: %d\n", rank, __FILE__, __LINE__, #x, e_); \
            return 1;                                                                                \
        }                                                                                            \
    } while (0)

// worker(rank, nranks, id, arg) runs in each child; the exit status is 0 when every child's was.
static int run_ranks(int nranks, int (*worker)(int, int, ncclUniqueId, int), int arg)
{
    ncclUniqueId id;
    if (ncclGetUniqueId(&id) != ncclSuccess) return 1;
    fflush(NULL);
    for (int r = 0; r < nranks; r++) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) exit(worker(r, nranks, id, arg)); /* exit, not _exit: the libraries flush */
    }
    int failed = 0, status = 0;
    while (wait(&status) > 0)
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
    if (!failed) printf("%d ranks ok\n", nranks);
    return failed ? 1 : 0;
}
