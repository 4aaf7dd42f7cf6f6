// Emulator test program (tests/test_emulate.c): kernels loaded and launched through the driver API,
// as Triton's launcher and PyTorch Inductor's static launcher do (issue 23 item 4): a module from an
// image in memory (cuModuleLoadData) and from a file (cuModuleLoad), functions looked up by name and
// queried, dynamic shared memory opted in, cuLaunchKernel and cuLaunchKernelEx on a stream the
// runtime created, one launch under an operator tag. Exits non-zero if anything it checks is wrong.
// Argument: a file to load as a module (its contents are not read by the emulator).
#include "check.h"
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

typedef void (*set_op_fn)(const char *, const char *, double, double);

// what a module image looks like to the emulator: anything (it is not read); on a GPU a real one
static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry triton_poi_fused_add_0(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n"
                          ".visible .entry triton_red_fused_sum_1(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: driver_launch MODULE_FILE\n");
        return 2;
    }
    CHECK(cudaFree(0)); // the runtime makes the primary context current
    CUmodule mod, mod2;
    CUfunction add, sum, add2;
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&add, mod, "triton_poi_fused_add_0"));
    CHECK(cuModuleGetFunction(&sum, mod, "triton_red_fused_sum_1"));
    CHECK(cuModuleLoad(&mod2, argv[1]));
    CHECK(cuModuleGetFunction(&add2, mod2, "triton_poi_fused_add_0"));
    CUmodule none;
    if (cuModuleLoad(&none, "/nonexistent/orrery-emu.cubin") != CUDA_ERROR_FILE_NOT_FOUND) return 1;
    int regs = 0, spills = -1, threads = 0, smem = 0;
    CHECK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, add));
    CHECK(cuFuncGetAttribute(&spills, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, add));
    CHECK(cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, add));
    if (regs <= 0 || spills != 0 || threads < 128) return 1;
    // 96 KiB of dynamic shared memory: refused until the function opts in, as on a GPU
    CUstream s;
    CHECK(cudaStreamCreate((cudaStream_t *)&s));
    float *buf;
    CHECK(cudaMalloc(&buf, 1 << 20));
    unsigned n = 1 << 18;
    void *params[] = {&buf, &n};
    if (cuLaunchKernel(sum, 1024, 1, 1, 128, 1, 1, 96 << 10, s, params, NULL) != CUDA_ERROR_INVALID_VALUE) return 1;
    int optin = 0;
    CHECK(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0));
    CHECK(cuFuncSetCacheConfig(sum, CU_FUNC_CACHE_PREFER_SHARED));
    CHECK(cuFuncSetAttribute(sum, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
    CHECK(cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sum));
    if (smem != optin) return 1;
    // the kernels: add on the stream (under a tag of 8 MiB), sum on it with cuLaunchKernelEx, add2
    // on the default stream
    set_op_fn set_op = (set_op_fn)dlsym(RTLD_DEFAULT, "orrery_emu_set_op");
    if (set_op) { // under emulation: Triton would link its launcher against the stand-in found here
        const char *dir = getenv("TRITON_LIBCUDA_PATH");
        char lib[4096];
        snprintf(lib, sizeof lib, "%s/libcuda.so", dir ? dir : "");
        if (!dir || access(lib, R_OK) != 0) {
            fprintf(stderr, "TRITON_LIBCUDA_PATH %s: no libcuda.so there\n", dir ? dir : "(unset)");
            return 1;
        }
    }
    if (set_op) set_op("triton_poi_fused_add_0", "elementwise", 0, 8 << 20);
    CHECK(cuLaunchKernel(add, 2048, 1, 1, 128, 1, 1, 0, s, params, NULL));
    if (set_op) set_op(NULL, NULL, 0, 0);
    CUlaunchAttribute attr = {};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = 2, attr.value.clusterDim.y = 1, attr.value.clusterDim.z = 1;
    CUlaunchConfig cfg = {};
    cfg.gridDimX = 64, cfg.gridDimY = 2, cfg.gridDimZ = 1;
    cfg.blockDimX = 256, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 96 << 10;
    cfg.hStream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    CHECK(cuOccupancyMaxActiveClusters(&clusters, sum, &cfg));
    if (clusters <= 0) return 1;
    CHECK(cuLaunchKernelEx(&cfg, sum, params, NULL));
    CHECK(cuLaunchKernel(add2, 4, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    CHECK(cudaStreamSynchronize((cudaStream_t)s));
    CHECK(cuModuleUnload(mod));
    CHECK(cuModuleUnload(mod2));
    CHECK(cudaFree(buf));
    CHECK(cudaStreamDestroy((cudaStream_t)s));
    printf("driver_launch: ok (%d clusters of 2 resident)\n", clusters);
    return 0;
}
