// Shared by the emulator's single-process test programs (gemm.cu, graphs.cu, live.cu, multidev.cu,
// driver_launch.cu):
// CHECK(x) returns 1 from the calling function, naming the call and its error code, when x is not 0
// (cudaSuccess, CUBLAS_STATUS_SUCCESS and ncclSuccess are all 0). ranks.h has the multi-process one.
#include <cstdio>

#define CHECK(x)                                                                   \
    do {                                                                           \
        int e_ = (int)(x);                                                         \
        if (e_ != 0) {                                                             \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, e_); \
            return 1;                                                              \
        }                                                                          \
    } while (0)
