// Emulator test program (issue 23 item 1): a process that used the GPU forks a child that does no
// GPU work and leaves by _exit, as a DataLoader worker (os._exit) does; the child's trace must not
// break the run. With --child-work the child allocates device memory before _exit: its trace is
// cut short after GPU work, which the collator must refuse.
// Usage: fork_exit [--child-work]
#include <cstdio>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

__global__ void touch(float *p) { p[threadIdx.x] = 1.0f; }

int main(int argc, char **argv)
{
    int child_work = argc > 1 && strcmp(argv[1], "--child-work") == 0;
    float *p = nullptr;
    if (cudaMalloc(&p, 1 << 20) != cudaSuccess) return 1;
    touch<<<1, 128>>>(p);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        if (child_work) {
            void *q = nullptr;
            cudaMalloc(&q, 4096);
        }
        _exit(0); /* no exit handlers, no stdio flush: os._exit */
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 3;
    touch<<<1, 128>>>(p);
    if (cudaDeviceSynchronize() != cudaSuccess) return 4;
    cudaFree(p);
    return 0;
}
