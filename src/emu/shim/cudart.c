/*
 * cudart.c - the CUDA runtime stand-in (libcudart.so.12 and libcudart.so.13 are built from this
 * file with their own soname and symbol-version node, so versioned references resolve to it).
 *
 * Both launch paths of nvcc-generated host code are served: the classic one (push/pop the call
 * configuration, then cudaLaunchKernel with the host stub's address) and CUDA 13's
 * (__cudaGetKernel once per kernel, then __cudaLaunchKernel with the handle). Kernels are known by
 * the names __cudaRegisterFunction gave them. Nothing is executed: launches, copies, memsets,
 * event records and waits and synchronisations are written to the trace (emu.h), device memory is
 * tracked against the configured capacity (an allocation that does not fit returns
 * cudaErrorMemoryAllocation, so the program's own out-of-memory path runs), and device-to-host
 * copies fill the host buffer with zeros.
 */
#include "emu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef EMU_CUDART_VERSION
#define EMU_CUDART_VERSION 13000
#endif

typedef int cudaError_t;
enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999,
};
enum { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault };

typedef struct dim3 {
    unsigned x, y, z;
} dim3;
typedef void *cudaStream_t;
typedef void *cudaEvent_t;

static cudaError_t ret(cudaError_t e)
{
    emu_set_error(e);
    emu_leave();
    return e;
}

static int stream_or_die(cudaStream_t s, const char *api)
{
    int i = emu_stream_index(s);
    if (i < 0) emu_die("%s: stream %p is not a stream this process created", api, s);
    return i;
}

/* ---- errors and versions ---- */

static const char *error_name(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown";
    }
}

EMU_EXPORT const char *cudaGetErrorName(cudaError_t e) { return error_name(e); }

EMU_EXPORT const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    default: return error_name(e);
    }
}

EMU_EXPORT cudaError_t cudaGetLastError(void)
{
    EMU_ENTER("cudaGetLastError");
    cudaError_t e = emu_last_error(1);
    emu_leave();
    return e;
}

EMU_EXPORT cudaError_t cudaPeekAtLastError(void)
{
    EMU_ENTER("cudaPeekAtLastError");
    cudaError_t e = emu_last_error(0);
    emu_leave();
    return e;
}

EMU_EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
    EMU_ENTER("cudaRuntimeGetVersion");
    if (!v) return ret(cudaErrorInvalidValue);
    *v = EMU_CUDART_VERSION;
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
    EMU_ENTER("cudaDriverGetVersion");
    if (!v) return ret(cudaErrorInvalidValue);
    *v = 13000;
    return ret(cudaSuccess);
}

/* ---- devices ---- */

EMU_EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
    EMU_ENTER("cudaGetDeviceCount");
    if (!n) return ret(cudaErrorInvalidValue);
    *n = emu_device_count();
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaSetDevice(int dev)
{
    EMU_ENTER("cudaSetDevice");
    if (dev < 0 || dev >= emu_device_count()) return ret(cudaErrorInvalidDevice);
    emu_set_device(dev);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaGetDevice(int *dev)
{
    EMU_ENTER("cudaGetDevice");
    if (!dev) return ret(cudaErrorInvalidValue);
    *dev = emu_device();
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    EMU_ENTER("cudaDeviceSynchronize");
    emu_rec("DS");
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaDeviceReset(void)
{
    EMU_ENTER("cudaDeviceReset");
    emu_rec("DS");
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaFree(void *p);

EMU_EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    EMU_ENTER("cudaMemGetInfo");
    if (!free_bytes || !total_bytes) return ret(cudaErrorInvalidValue);
    *total_bytes = (size_t)emu_mem_capacity();
    *free_bytes = (size_t)(emu_mem_capacity() - emu_mem_used());
    return ret(cudaSuccess);
}

/* ---- memory ---- */

static cudaError_t device_alloc(void **p, size_t bytes)
{
    if (!p) return cudaErrorInvalidValue;
    uintptr_t a;
    if (emu_malloc(bytes, &a) < 0) {
        *p = NULL;
        return cudaErrorMemoryAllocation;
    }
    *p = (void *)a;
    return cudaSuccess;
}

EMU_EXPORT cudaError_t cudaMalloc(void **p, size_t bytes)
{
    EMU_ENTER("cudaMalloc");
    return ret(device_alloc(p, bytes));
}

EMU_EXPORT cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s)
{
    EMU_ENTER("cudaMallocAsync");
    (void)stream_or_die(s, "cudaMallocAsync");
    return ret(device_alloc(p, bytes));
}

EMU_EXPORT cudaError_t cudaFree(void *p)
{
    EMU_ENTER("cudaFree");
    if (!p) return ret(cudaSuccess);
    if (emu_free((uintptr_t)p) < 0) return ret(cudaErrorInvalidDevicePointer);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    EMU_ENTER("cudaFreeAsync");
    (void)stream_or_die(s, "cudaFreeAsync");
    if (p && emu_free((uintptr_t)p) < 0) return ret(cudaErrorInvalidDevicePointer);
    return ret(cudaSuccess);
}

/* Pinned host memory is real host memory. */
static cudaError_t host_alloc(void **p, size_t bytes)
{
    if (!p) return cudaErrorInvalidValue;
    *p = malloc(bytes ? bytes : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

EMU_EXPORT cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    EMU_ENTER("cudaMallocHost");
    return ret(host_alloc(p, bytes));
}

EMU_EXPORT cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned flags)
{
    (void)flags;
    EMU_ENTER("cudaHostAlloc");
    return ret(host_alloc(p, bytes));
}

EMU_EXPORT cudaError_t cudaFreeHost(void *p)
{
    EMU_ENTER("cudaFreeHost");
    free(p);
    return ret(cudaSuccess);
}

static int copy_kind(const void *dst, const void *src, int kind)
{
    if (kind != cudaMemcpyDefault) return kind;
    int d = emu_is_device_ptr((uintptr_t)dst), s = emu_is_device_ptr((uintptr_t)src);
    return d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
             : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
}

static cudaError_t do_copy(void *dst, const void *src, size_t bytes, int kind, int stream, int sync)
{
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return cudaErrorInvalidValue;
    kind = copy_kind(dst, src, kind);
    if (kind == cudaMemcpyHostToHost) {
        if (bytes) memmove(dst, src, bytes);
        return cudaSuccess;
    }
    if (kind == cudaMemcpyDeviceToHost && bytes) {
        if (!dst) return cudaErrorInvalidValue;
        memset(dst, 0, bytes); /* device memory is not backed: it reads as zeros */
    }
    static const char *const names[] = {"h2h", "h2d", "d2h", "d2d"};
    emu_rec("C %d %s %zu %d", stream, names[kind], bytes, sync);
    return cudaSuccess;
}

EMU_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, int kind)
{
    EMU_ENTER("cudaMemcpy");
    return ret(do_copy(dst, src, bytes, kind, 0, 1));
}

EMU_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, cudaStream_t s)
{
    EMU_ENTER("cudaMemcpyAsync");
    return ret(do_copy(dst, src, bytes, kind, stream_or_die(s, "cudaMemcpyAsync"), 0));
}

EMU_EXPORT cudaError_t cudaMemset(void *p, int v, size_t bytes)
{
    (void)p;
    (void)v;
    EMU_ENTER("cudaMemset");
    emu_rec("M 0 %zu", bytes);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s)
{
    (void)p;
    (void)v;
    EMU_ENTER("cudaMemsetAsync");
    emu_rec("M %d %zu", stream_or_die(s, "cudaMemsetAsync"), bytes);
    return ret(cudaSuccess);
}

/* ---- streams ---- */

EMU_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority)
{
    (void)flags;
    EMU_ENTER("cudaStreamCreateWithPriority");
    if (!s) return ret(cudaErrorInvalidValue);
    *s = emu_stream_create(priority);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    (void)flags;
    EMU_ENTER("cudaStreamCreateWithFlags");
    if (!s) return ret(cudaErrorInvalidValue);
    *s = emu_stream_create(0);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    EMU_ENTER("cudaStreamCreate");
    if (!s) return ret(cudaErrorInvalidValue);
    *s = emu_stream_create(0);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    EMU_ENTER("cudaStreamDestroy");
    if (emu_stream_index(s) <= 0) return ret(cudaErrorInvalidResourceHandle);
    emu_stream_destroy(s);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    EMU_ENTER("cudaStreamSynchronize");
    emu_rec("SS %d", stream_or_die(s, "cudaStreamSynchronize"));
    return ret(cudaSuccess);
}

/* The emulated device has run everything by the time anyone asks. */
EMU_EXPORT cudaError_t cudaStreamQuery(cudaStream_t s)
{
    EMU_ENTER("cudaStreamQuery");
    (void)stream_or_die(s, "cudaStreamQuery");
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags)
{
    (void)flags;
    EMU_ENTER("cudaStreamWaitEvent");
    int si = stream_or_die(s, "cudaStreamWaitEvent"), ei = emu_event_index(e);
    if (ei < 0) return ret(cudaErrorInvalidResourceHandle);
    emu_rec("SW %d %d", si, ei);
    return ret(cudaSuccess);
}

/* ---- events ---- */

EMU_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    EMU_ENTER("cudaEventCreate");
    if (!e) return ret(cudaErrorInvalidValue);
    *e = emu_event_create();
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    (void)flags;
    EMU_ENTER("cudaEventCreateWithFlags");
    if (!e) return ret(cudaErrorInvalidValue);
    *e = emu_event_create();
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    EMU_ENTER("cudaEventDestroy");
    if (emu_event_index(e) < 0) return ret(cudaErrorInvalidResourceHandle);
    emu_event_destroy(e);
    return ret(cudaSuccess);
}

static cudaError_t event_record(cudaEvent_t e, cudaStream_t s, const char *api)
{
    int ei = emu_event_index(e);
    if (ei < 0) return cudaErrorInvalidResourceHandle;
    emu_rec("ER %d %d", ei, stream_or_die(s, api));
    return cudaSuccess;
}

EMU_EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    EMU_ENTER("cudaEventRecord");
    return ret(event_record(e, s, "cudaEventRecord"));
}

EMU_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned flags)
{
    (void)flags;
    EMU_ENTER("cudaEventRecordWithFlags");
    return ret(event_record(e, s, "cudaEventRecordWithFlags"));
}

EMU_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    EMU_ENTER("cudaEventSynchronize");
    int ei = emu_event_index(e);
    if (ei < 0) return ret(cudaErrorInvalidResourceHandle);
    emu_rec("ES %d", ei);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
    EMU_ENTER("cudaEventQuery");
    if (emu_event_index(e) < 0) return ret(cudaErrorInvalidResourceHandle);
    return ret(cudaSuccess);
}

/* Device time exists only in the prediction made after the program ends; a program that prints
 * event timings sees 0 ms (and a warning says so). */
EMU_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    EMU_ENTER("cudaEventElapsedTime");
    if (!ms || emu_event_index(a) < 0 || emu_event_index(b) < 0) return ret(cudaErrorInvalidValue);
    emu_warn_once("elapsed", "cudaEventElapsedTime returns 0 ms under emulation; the timings are in "
                             "Orrery's prediction");
    *ms = 0.0f;
    return ret(cudaSuccess);
}

/* ---- kernels ---- */

typedef struct call_config {
    dim3 grid, block;
    size_t shmem;
    void *stream;
} call_config;

static _Thread_local call_config t_config[16];
static _Thread_local int t_nconfig;

EMU_EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, void *stream)
{
    if (t_nconfig == 16) emu_die("__cudaPushCallConfiguration: more than 16 nested launch configurations");
    t_config[t_nconfig++] = (call_config){grid, block, shmem, stream};
    return 0;
}

EMU_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, void *stream)
{
    if (t_nconfig == 0) return cudaErrorInvalidValue;
    call_config c = t_config[--t_nconfig];
    *grid = c.grid;
    *block = c.block;
    *shmem = c.shmem;
    *(void **)stream = c.stream;
    return cudaSuccess;
}

static char fatbin_handle_dummy;

EMU_EXPORT void **__cudaRegisterFatBinary(void *fat_cubin)
{
    (void)fat_cubin;
    static void *handle = &fatbin_handle_dummy;
    return &handle;
}

EMU_EXPORT void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
EMU_EXPORT void __cudaUnregisterFatBinary(void **h) { (void)h; }
EMU_EXPORT char __cudaInitModule(void **h)
{
    (void)h;
    return 1;
}

EMU_EXPORT void __cudaRegisterFunction(void **h, const char *host_fun, char *device_fun, const char *device_name,
                                       int thread_limit, void *tid, void *bid, void *bdim, void *gdim, int *wsize)
{
    (void)h, (void)device_fun, (void)thread_limit, (void)tid, (void)bid, (void)bdim, (void)gdim, (void)wsize;
    emu_kernel_register(host_fun, device_name);
}

/* __device__ variables: nothing to back them with; registration is accepted. */
EMU_EXPORT void __cudaRegisterVar(void **h, char *host_var, char *device_address, const char *device_name, int ext,
                                  size_t size, int constant, int global)
{
    (void)h, (void)host_var, (void)device_address, (void)device_name, (void)ext, (void)size, (void)constant,
        (void)global;
}

static cudaError_t launch(const void *kernel, dim3 grid, dim3 block, size_t shmem,
                          cudaStream_t s, const char *api)
{
    int si = stream_or_die(s, api);
    const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2]) return cudaErrorInvalidValue;
    emu_launch(emu_kernel_name(kernel), g, b, shmem, si);
    return cudaSuccess;
}

EMU_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                                        cudaStream_t s)
{
    (void)args;
    EMU_ENTER("cudaLaunchKernel");
    const void *k = emu_kernel_lookup(func);
    if (!k) return ret(cudaErrorInvalidDeviceFunction);
    return ret(launch(k, grid, block, shmem, s, "cudaLaunchKernel"));
}

EMU_EXPORT cudaError_t __cudaGetKernel(void **kernel, const void *host_fun)
{
    EMU_ENTER("__cudaGetKernel");
    if (!kernel) return ret(cudaErrorInvalidValue);
    *kernel = (void *)emu_kernel_lookup(host_fun);
    return ret(*kernel ? cudaSuccess : cudaErrorInvalidDeviceFunction);
}

EMU_EXPORT cudaError_t __cudaLaunchKernel(void *kernel, dim3 grid, dim3 block, void **args, size_t shmem,
                                          cudaStream_t s)
{
    (void)args;
    EMU_ENTER("__cudaLaunchKernel");
    if (!kernel) return ret(cudaErrorInvalidDeviceFunction);
    return ret(launch(kernel, grid, block, shmem, s, "__cudaLaunchKernel"));
}

EMU_EXPORT cudaError_t __cudaLaunchKernel_ptsz(void *kernel, dim3 grid, dim3 block, void **args, size_t shmem,
                                               cudaStream_t s)
{
    (void)args;
    EMU_ENTER("__cudaLaunchKernel_ptsz");
    if (!kernel) return ret(cudaErrorInvalidDeviceFunction);
    return ret(launch(kernel, grid, block, shmem, s, "__cudaLaunchKernel_ptsz"));
}
