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
#define _GNU_SOURCE
#include "emu.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
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
    cudaErrorSymbolNotFound = 500,
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
    case cudaErrorSymbolNotFound: return "cudaErrorSymbolNotFound";
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
    *total_bytes = (size_t)emu_mem_total();
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
    if (bytes && (!dst || !src)) return cudaErrorInvalidValue;
    void *bd = kind != cudaMemcpyDeviceToHost ? emu_backed((uintptr_t)dst, bytes) : NULL;
    void *bs = kind != cudaMemcpyHostToDevice ? emu_backed((uintptr_t)src, bytes) : NULL;
    if (kind == cudaMemcpyDeviceToHost && bytes) {
        if (bs) memcpy(dst, bs, bytes);
        else memset(dst, 0, bytes); /* unbacked device memory reads as zeros */
    } else if (kind == cudaMemcpyHostToDevice && bd && bytes) {
        memcpy(bd, src, bytes);
    } else if (kind == cudaMemcpyDeviceToDevice && bd && bytes) {
        if (bs) memmove(bd, bs, bytes);
        else memset(bd, 0, bytes);
    }
    static const char *const names[] = {"h2h", "h2d", "d2h", "d2d"};
    int dd = kind != cudaMemcpyDeviceToHost ? emu_ptr_device((uintptr_t)dst) : -1,
        sd = kind != cudaMemcpyHostToDevice ? emu_ptr_device((uintptr_t)src) : -1;
    /* on the default stream, the copy is the device's whose memory it reads (else writes); one
     * between two devices ("p2p") crosses NVLink */
    if (stream == 0) emu_rec_device(sd >= 0 ? sd : dd);
    emu_rec("C %d %s %zu %d", stream, dd >= 0 && sd >= 0 && dd != sd ? "p2p" : names[kind], bytes, sync);
    emu_rec_device(-1);
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

static void backed_set(void *p, int v, size_t bytes)
{
    void *b = emu_backed((uintptr_t)p, bytes);
    if (b) memset(b, v, bytes);
}

EMU_EXPORT cudaError_t cudaMemset(void *p, int v, size_t bytes)
{
    EMU_ENTER("cudaMemset");
    if (bytes && !emu_is_live((uintptr_t)p, bytes)) return ret(cudaErrorInvalidValue); /* freed, or not device */
    backed_set(p, v, bytes);
    emu_rec("M 0 %zu", bytes);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s)
{
    EMU_ENTER("cudaMemsetAsync");
    if (bytes && !emu_is_live((uintptr_t)p, bytes)) return ret(cudaErrorInvalidValue); /* freed, or not device */
    backed_set(p, v, bytes);
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
    emu_rec("SW %d %d", si, ei); /* on an event of another device: the collator joins the two ranks */
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
    int si = stream_or_die(s, api);
    emu_rec("ER %d %d", ei, si);
    emu_event_stamp(ei, emu_stream_device(si));
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
    int ed = emu_event_device(ei); /* the host waits for the device the event was recorded on */
    emu_rec_device(ed >= 0 ? ed : emu_device());
    emu_rec("ES %d", ei);
    emu_rec_device(-1);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
    EMU_ENTER("cudaEventQuery");
    if (emu_event_index(e) < 0) return ret(cudaErrorInvalidResourceHandle);
    return ret(cudaSuccess);
}

/* Device time exists only in the prediction made after the program ends; a program that times
 * itself with events sees the host time between the two records (emu_event_elapsed_ms), a lower
 * bound of the device time, and a warning says so. An event never recorded is an error, as on a GPU. */
EMU_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    EMU_ENTER("cudaEventElapsedTime");
    if (!ms || emu_event_index(a) < 0 || emu_event_index(b) < 0) return ret(cudaErrorInvalidValue);
    double v = emu_event_elapsed_ms(emu_event_index(a), emu_event_index(b));
    if (v < 0) return ret(cudaErrorInvalidResourceHandle);
    if (emu_live()) { /* --live: the simulated time between the two records (docs/emulate.md "Live time") */
        double sim = emu_event_live_ms(emu_event_index(a), emu_event_index(b));
        if (isnan(sim))
            emu_die("--live: cudaEventElapsedTime on an event whose record has no simulated time (recorded only "
                    "inside a CUDA graph capture, or not in the first run's simulation)");
        *ms = (float)sim;
        return ret(cudaSuccess);
    }
    if (!emu_live_first())
        emu_warn_once("elapsed", "cudaEventElapsedTime gives the host time between the two records under emulation "
                             "(a lower bound); the device times are in Orrery's prediction");
    *ms = (float)v;
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

static cudaError_t launch(const void *kernel, dim3 grid, dim3 block, void **args, size_t shmem,
                          cudaStream_t s, const char *api)
{
    int si = stream_or_die(s, api);
    const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2]) return cudaErrorInvalidValue;
    emu_launch(emu_kernel_name(kernel), g, b, shmem, si);
    emu_kernel_values(emu_kernel_name(kernel), args);
    return cudaSuccess;
}

EMU_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                                        cudaStream_t s)
{
    EMU_ENTER("cudaLaunchKernel");
    const void *k = emu_kernel_lookup(func);
    if (!k) return ret(cudaErrorInvalidDeviceFunction);
    return ret(launch(k, grid, block, args, shmem, s, "cudaLaunchKernel"));
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
    EMU_ENTER("__cudaLaunchKernel");
    if (!kernel) return ret(cudaErrorInvalidDeviceFunction);
    return ret(launch(kernel, grid, block, args, shmem, s, "__cudaLaunchKernel"));
}

EMU_EXPORT cudaError_t __cudaLaunchKernel_ptsz(void *kernel, dim3 grid, dim3 block, void **args, size_t shmem,
                                               cudaStream_t s)
{
    EMU_ENTER("__cudaLaunchKernel_ptsz");
    if (!kernel) return ret(cudaErrorInvalidDeviceFunction);
    return ret(launch(kernel, grid, block, args, shmem, s, "__cudaLaunchKernel_ptsz"));
}

EMU_EXPORT cudaError_t cudaLaunchKernelExC(const void *config, const void *func, void **args)
{
    /* cudaLaunchConfig_t: dim3 grid, dim3 block, size_t dynamic shared memory, stream, ... */
    typedef struct {
        dim3 grid, block;
        size_t shmem;
        cudaStream_t stream;
    } launch_config;
    EMU_ENTER("cudaLaunchKernelExC");
    if (!config) return ret(cudaErrorInvalidValue);
    const launch_config *c = config;
    const void *k = emu_kernel_lookup(func);
    if (!k) return ret(cudaErrorInvalidDeviceFunction);
    return ret(launch(k, c->grid, c->block, args, c->shmem, c->stream, "cudaLaunchKernelExC"));
}

/* ---- device properties and attributes ---- */

static int attr(int a)
{
    int v = 0;
    (void)emu_device_attribute(a, &v);
    return v;
}

EMU_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, int attr, int dev)
{
    EMU_ENTER("cudaDeviceGetAttribute");
    if (!value) return ret(cudaErrorInvalidValue);
    if (dev < 0 || dev >= emu_device_count()) return ret(cudaErrorInvalidDevice);
    if (emu_device_attribute(attr, value) < 0) {
        emu_warn_once("devattr", "cudaDeviceGetAttribute: attribute %d is not known to the emulator", attr);
        return ret(cudaErrorInvalidValue);
    }
    return ret(cudaSuccess);
}

#if EMU_CUDART_VERSION < 13000
/* struct cudaDeviceProp of CUDA 12 (driver_types.h), the layout cudaGetDeviceProperties_v2 fills. */
typedef struct cuda12_device_prop {
    char name[256];
    unsigned char uuid[16];
    char luid[8];
    unsigned luidDeviceNodeMask;
    size_t totalGlobalMem, sharedMemPerBlock;
    int regsPerBlock, warpSize;
    size_t memPitch;
    int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
    size_t totalConstMem;
    int major, minor;
    size_t textureAlignment, texturePitchAlignment;
    int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated, canMapHostMemory, computeMode;
    int maxTexture1D, maxTexture1DMipmap, maxTexture1DLinear, maxTexture2D[2], maxTexture2DMipmap[2];
    int maxTexture2DLinear[3], maxTexture2DGather[2], maxTexture3D[3], maxTexture3DAlt[3], maxTextureCubemap;
    int maxTexture1DLayered[2], maxTexture2DLayered[3], maxTextureCubemapLayered[2], maxSurface1D, maxSurface2D[2];
    int maxSurface3D[3], maxSurface1DLayered[2], maxSurface2DLayered[3], maxSurfaceCubemap,
        maxSurfaceCubemapLayered[2];
    size_t surfaceAlignment;
    int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver, asyncEngineCount,
        unifiedAddressing, memoryClockRate, memoryBusWidth, l2CacheSize, persistingL2CacheMaxSize,
        maxThreadsPerMultiProcessor, streamPrioritiesSupported, globalL1CacheSupported, localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID, hostNativeAtomicSupported,
        singleToDoublePrecisionPerfRatio, pageableMemoryAccess, concurrentManagedAccess, computePreemptionSupported,
        canUseHostPointerForRegisteredMem, cooperativeLaunch, cooperativeMultiDeviceLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost, maxBlocksPerMultiProcessor,
        accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported, sparseCudaArraySupported, hostRegisterReadOnlySupported,
        timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported;
    unsigned gpuDirectRDMAFlushWritesOptions;
    int gpuDirectRDMAWritesOrdering;
    unsigned memoryPoolSupportedHandleTypes;
    int deferredMappingCudaArraySupported, ipcEventSupported, clusterLaunch, unifiedFunctionPointers;
    int reserved[63];
} cuda12_device_prop;
_Static_assert(sizeof(cuda12_device_prop) == 1032, "struct cudaDeviceProp of CUDA 12 is 1032 bytes");

static void fill_props(cuda12_device_prop *p, int dev)
{
    memset(p, 0, sizeof *p);
    const emu_gpu_info *g = emu_gpu();
    snprintf(p->name, sizeof p->name, "%s", g->name);
    emu_device_uuid(dev, p->uuid);
    p->totalGlobalMem = (size_t)emu_mem_total();
    p->sharedMemPerBlock = (size_t)attr(8);
    p->regsPerBlock = attr(12);
    p->warpSize = attr(10);
    p->memPitch = (size_t)attr(11);
    p->maxThreadsPerBlock = attr(1);
    p->maxThreadsDim[0] = attr(2), p->maxThreadsDim[1] = attr(3), p->maxThreadsDim[2] = attr(4);
    p->maxGridSize[0] = attr(5), p->maxGridSize[1] = attr(6), p->maxGridSize[2] = attr(7);
    p->clockRate = attr(13);
    p->totalConstMem = (size_t)attr(9);
    p->major = g->cc_major;
    p->minor = g->cc_minor;
    p->textureAlignment = (size_t)attr(14);
    p->texturePitchAlignment = 32;
    p->deviceOverlap = 1;
    p->multiProcessorCount = g->sms;
    p->canMapHostMemory = 1;
    p->surfaceAlignment = (size_t)attr(30);
    p->concurrentKernels = 1;
    p->ECCEnabled = 1;
    p->pciBusID = dev + 1;
    p->asyncEngineCount = attr(40);
    p->unifiedAddressing = 1;
    p->memoryClockRate = attr(36);
    p->memoryBusWidth = attr(37);
    p->l2CacheSize = attr(38);
    p->persistingL2CacheMaxSize = attr(108);
    p->maxThreadsPerMultiProcessor = attr(39);
    p->streamPrioritiesSupported = p->globalL1CacheSupported = p->localL1CacheSupported = 1;
    p->sharedMemPerMultiprocessor = (size_t)attr(81);
    p->regsPerMultiprocessor = attr(82);
    p->managedMemory = 1;
    p->singleToDoublePrecisionPerfRatio = attr(87);
    p->concurrentManagedAccess = p->computePreemptionSupported = p->canUseHostPointerForRegisteredMem = 1;
    p->cooperativeLaunch = 1;
    p->sharedMemPerBlockOptin = (size_t)attr(97);
    p->maxBlocksPerMultiProcessor = attr(106);
    p->accessPolicyMaxWindowSize = attr(109);
    p->reservedSharedMemPerBlock = (size_t)attr(111);
    p->hostRegisterSupported = 1;
    p->memoryPoolsSupported = p->gpuDirectRDMASupported = 1;
    p->memoryPoolSupportedHandleTypes = 1;
    p->ipcEventSupported = 1;
    p->clusterLaunch = attr(120);
}

static cudaError_t device_properties(cuda12_device_prop *p, int dev)
{
    if (!p) return cudaErrorInvalidValue;
    if (dev < 0 || dev >= emu_device_count()) return cudaErrorInvalidDevice;
    fill_props(p, dev);
    return cudaSuccess;
}

EMU_EXPORT cudaError_t cudaGetDeviceProperties_v2(cuda12_device_prop *p, int dev)
{
    EMU_ENTER("cudaGetDeviceProperties_v2");
    return ret(device_properties(p, dev));
}

EMU_EXPORT cudaError_t cudaGetDeviceProperties(cuda12_device_prop *p, int dev)
{
    EMU_ENTER("cudaGetDeviceProperties");
    return ret(device_properties(p, dev));
}
#endif

EMU_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    EMU_ENTER("cudaDeviceGetStreamPriorityRange");
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t s, int *priority)
{
    EMU_ENTER("cudaStreamGetPriority");
    if (!priority) return ret(cudaErrorInvalidValue);
    *priority = emu_stream_priority(stream_or_die(s, "cudaStreamGetPriority"));
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaDeviceGetPCIBusId(char *buf, int len, int dev)
{
    EMU_ENTER("cudaDeviceGetPCIBusId");
    if (!buf || len <= 0) return ret(cudaErrorInvalidValue);
    if (dev < 0 || dev >= emu_device_count()) return ret(cudaErrorInvalidDevice);
    snprintf(buf, (size_t)len, "00000000:%02X:00.0", dev + 1);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaDeviceCanAccessPeer(int *can, int dev, int peer)
{
    EMU_ENTER("cudaDeviceCanAccessPeer");
    if (!can) return ret(cudaErrorInvalidValue);
    *can = dev != peer;
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags)
{
    (void)peer, (void)flags;
    EMU_ENTER("cudaDeviceEnablePeerAccess");
    return ret(cudaSuccess);
}

/* ---- kernels' attributes and occupancy ---- */

typedef struct cuda_func_attributes {
    size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
    int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, cacheModeCA, maxDynamicSharedSizeBytes,
        preferredShmemCarveout, clusterDimMustBeSet, requiredClusterWidth, requiredClusterHeight,
        requiredClusterDepth, clusterSchedulingPolicyPreference, nonPortableClusterSizeAllowed, reserved[16];
} cuda_func_attributes;

/* The binary's real resource use is unknown: a kernel is reported as the most permissive one
 * (1024 threads, 32 registers, no static shared memory), which is what launch-bound checks need. */
EMU_EXPORT cudaError_t cudaFuncGetAttributes(cuda_func_attributes *a, const void *func)
{
    EMU_ENTER("cudaFuncGetAttributes");
    if (!a) return ret(cudaErrorInvalidValue);
    if (!emu_kernel_lookup(func)) return ret(cudaErrorInvalidDeviceFunction);
    memset(a, 0, sizeof *a);
    const emu_gpu_info *g = emu_gpu();
    a->maxThreadsPerBlock = 1024;
    a->numRegs = 32;
    a->ptxVersion = a->binaryVersion = g->cc_major * 10 + g->cc_minor;
    a->maxDynamicSharedSizeBytes = 48 << 10;
    a->preferredShmemCarveout = -1;
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, int attr_id, int value)
{
    (void)attr_id, (void)value;
    EMU_ENTER("cudaFuncSetAttribute");
    if (!emu_kernel_lookup(func)) return ret(cudaErrorInvalidDeviceFunction);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *func, int block,
                                                                                size_t shmem, unsigned flags)
{
    (void)flags;
    EMU_ENTER("cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
    if (!n || block <= 0) return ret(cudaErrorInvalidValue);
    if (!emu_kernel_lookup(func)) return ret(cudaErrorInvalidDeviceFunction);
    int by_threads = 2048 / block, by_smem = shmem ? (int)((size_t)attr(81) / shmem) : 32;
    *n = by_threads < by_smem ? by_threads : by_smem;
    if (*n > 32) *n = 32;
    return ret(cudaSuccess);
}

/* ---- the driver entry points handed to the program: the driver stand-in's (libcuda.so.1) ---- */

static cudaError_t driver_entry_point(const char *symbol, void **fn, int *status)
{
    if (!symbol || !fn) return cudaErrorInvalidValue;
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    *fn = drv ? dlsym(drv, symbol) : NULL;
    if (status) *status = *fn ? 0 : 1; /* cudaDriverEntryPointSuccess / SymbolNotFound */
    if (!drv) emu_die("cudaGetDriverEntryPoint(%s): the driver stand-in libcuda.so.1 cannot be loaded: %s", symbol,
                      dlerror());
    return *fn ? cudaSuccess : cudaErrorSymbolNotFound;
}

EMU_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags, int *status)
{
    (void)flags;
    EMU_ENTER("cudaGetDriverEntryPoint");
    return ret(driver_entry_point(symbol, fn, status));
}

EMU_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned version,
                                                        unsigned long long flags, int *status)
{
    (void)flags, (void)version;
    EMU_ENTER("cudaGetDriverEntryPointByVersion");
    return ret(driver_entry_point(symbol, fn, status));
}

/* ---- CUDA graphs: stream capture, instantiation and launch (emu.h, docs/emulate.md) ---- */

enum {
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureUnmatched = 903,
    cudaErrorIllegalState = 401,
};
enum { cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1 };

/* The graphs and executable graphs the program holds: a handle is valid while it is listed. An
 * executable graph is its own small object holding a reference to the graph it was made from, so
 * the program may destroy the graph after instantiating it (PyTorch does). */
typedef struct graph_exec {
    emu_graph *g;
} graph_exec;

typedef struct handle_list {
    void **h;
    size_t n, cap;
} handle_list;

static handle_list graphs, execs;
static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;

static void list_add(handle_list *l, void *h)
{
    pthread_mutex_lock(&lists_lock);
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        void **v = realloc(l->h, cap * sizeof *v);
        if (!v) emu_die("out of host memory");
        l->h = v, l->cap = cap;
    }
    l->h[l->n++] = h;
    pthread_mutex_unlock(&lists_lock);
}

/* Removes h; returns 0, or -1 when h is not listed. */
static int list_remove(handle_list *l, const void *h)
{
    int rc = -1;
    pthread_mutex_lock(&lists_lock);
    for (size_t i = 0; rc < 0 && i < l->n; i++)
        if (l->h[i] == h) {
            l->h[i] = l->h[--l->n];
            rc = 0;
        }
    pthread_mutex_unlock(&lists_lock);
    return rc;
}

static int list_has(const handle_list *l, const void *h)
{
    int has = 0;
    pthread_mutex_lock(&lists_lock);
    for (size_t i = 0; h && !has && i < l->n; i++) has = l->h[i] == h;
    pthread_mutex_unlock(&lists_lock);
    return has;
}

EMU_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s, int mode)
{
    (void)mode;
    EMU_ENTER("cudaStreamBeginCapture");
    int si = stream_or_die(s, "cudaStreamBeginCapture");
    if (si == 0) return ret(cudaErrorStreamCaptureUnsupported); /* the legacy stream cannot capture */
    if (emu_capture_begin(si, NULL) < 0) return ret(cudaErrorIllegalState);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, emu_graph *g, const void *deps,
                                                     const void *edges, size_t ndeps, int mode)
{
    (void)deps, (void)edges, (void)ndeps, (void)mode;
    EMU_ENTER("cudaStreamBeginCaptureToGraph");
    int si = stream_or_die(s, "cudaStreamBeginCaptureToGraph");
    if (!list_has(&graphs, g)) return ret(cudaErrorInvalidValue);
    if (si == 0) return ret(cudaErrorStreamCaptureUnsupported);
    if (emu_capture_begin(si, g) < 0) return ret(cudaErrorIllegalState);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t s, emu_graph **out)
{
    EMU_ENTER("cudaStreamEndCapture");
    int si = stream_or_die(s, "cudaStreamEndCapture");
    if (!out) return ret(cudaErrorInvalidValue);
    emu_graph *g = emu_capture_end(si);
    if (!g) return ret(cudaErrorStreamCaptureUnmatched);
    if (!list_has(&graphs, g)) list_add(&graphs, g); /* a graph begun by capture, not ...ToGraph */
    *out = g;
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t s, int *status)
{
    EMU_ENTER("cudaStreamIsCapturing");
    if (!status) return ret(cudaErrorInvalidValue);
    int si = stream_or_die(s, "cudaStreamIsCapturing");
    *status = emu_capture_graph(si, NULL) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return ret(cudaSuccess);
}

/* The dependencies of the capture's next node are not modelled: none are reported. */
static cudaError_t capture_info(cudaStream_t s, int *status, unsigned long long *id, emu_graph **graph,
                                const void **deps, const void **edges, size_t *ndeps, const char *api)
{
    if (!status) return cudaErrorInvalidValue;
    unsigned long long cid;
    emu_graph *g = emu_capture_graph(stream_or_die(s, api), &cid);
    *status = g ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    if (id) *id = cid;
    if (graph) *graph = g;
    if (deps) *deps = NULL;
    if (edges) *edges = NULL;
    if (ndeps) *ndeps = 0;
    return cudaSuccess;
}

EMU_EXPORT cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t s, int *status, unsigned long long *id,
                                                   emu_graph **graph, const void **deps, size_t *ndeps)
{
    EMU_ENTER("cudaStreamGetCaptureInfo_v2");
    return ret(capture_info(s, status, id, graph, deps, NULL, ndeps, "cudaStreamGetCaptureInfo_v2"));
}

EMU_EXPORT cudaError_t cudaStreamGetCaptureInfo_v3(cudaStream_t s, int *status, unsigned long long *id,
                                                   emu_graph **graph, const void **deps, const void **edges,
                                                   size_t *ndeps)
{
    EMU_ENTER("cudaStreamGetCaptureInfo_v3");
    return ret(capture_info(s, status, id, graph, deps, edges, ndeps, "cudaStreamGetCaptureInfo_v3"));
}

#if EMU_CUDART_VERSION >= 13000
/* CUDA 13's cudaStreamGetCaptureInfo has CUDA 12's _v3 signature. */
EMU_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, int *status, unsigned long long *id,
                                                emu_graph **graph, const void **deps, const void **edges,
                                                size_t *ndeps)
{
    EMU_ENTER("cudaStreamGetCaptureInfo");
    return ret(capture_info(s, status, id, graph, deps, edges, ndeps, "cudaStreamGetCaptureInfo"));
}
#endif

EMU_EXPORT cudaError_t cudaGraphCreate(emu_graph **out, unsigned flags)
{
    (void)flags;
    EMU_ENTER("cudaGraphCreate");
    if (!out) return ret(cudaErrorInvalidValue);
    *out = emu_graph_new();
    list_add(&graphs, *out);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaGraphDestroy(emu_graph *g)
{
    EMU_ENTER("cudaGraphDestroy");
    if (list_remove(&graphs, g) < 0) return ret(cudaErrorInvalidValue);
    emu_graph_unref(g);
    return ret(cudaSuccess);
}

static cudaError_t instantiate(graph_exec **out, emu_graph *g)
{
    if (!out || !list_has(&graphs, g)) return cudaErrorInvalidValue;
    graph_exec *x = malloc(sizeof *x);
    if (!x) emu_die("out of host memory");
    emu_graph_ref(g);
    x->g = g;
    list_add(&execs, x);
    *out = x;
    return cudaSuccess;
}

EMU_EXPORT cudaError_t cudaGraphInstantiate(graph_exec **out, emu_graph *g, unsigned long long flags)
{
    (void)flags;
    EMU_ENTER("cudaGraphInstantiate");
    return ret(instantiate(out, g));
}

EMU_EXPORT cudaError_t cudaGraphInstantiateWithFlags(graph_exec **out, emu_graph *g, unsigned long long flags)
{
    (void)flags;
    EMU_ENTER("cudaGraphInstantiateWithFlags");
    return ret(instantiate(out, g));
}

EMU_EXPORT cudaError_t cudaGraphExecDestroy(graph_exec *x)
{
    EMU_ENTER("cudaGraphExecDestroy");
    if (list_remove(&execs, x) < 0) return ret(cudaErrorInvalidValue);
    emu_graph_unref(x->g);
    free(x);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaGraphLaunch(graph_exec *x, cudaStream_t s)
{
    EMU_ENTER("cudaGraphLaunch");
    int si = stream_or_die(s, "cudaGraphLaunch");
    if (!list_has(&execs, x)) return ret(cudaErrorInvalidValue);
    if (emu_graph_launch(x->g, si) < 0) return ret(cudaErrorIllegalState); /* its graph is capturing */
    return ret(cudaSuccess);
}

/* Uploading an executable graph to the device costs nothing the prediction models. */
EMU_EXPORT cudaError_t cudaGraphUpload(graph_exec *x, cudaStream_t s)
{
    EMU_ENTER("cudaGraphUpload");
    (void)stream_or_die(s, "cudaGraphUpload");
    if (!list_has(&execs, x)) return ret(cudaErrorInvalidValue);
    return ret(cudaSuccess);
}

/* A graph's nodes are its records; a node handle names one (its address inside the graph's
 * records), usable only to count them: the node entry points are not implemented. */
EMU_EXPORT cudaError_t cudaGraphGetNodes(emu_graph *g, const void **nodes, size_t *n)
{
    EMU_ENTER("cudaGraphGetNodes");
    if (!n || !list_has(&graphs, g)) return ret(cudaErrorInvalidValue);
    size_t total = emu_graph_nodes(g);
    if (nodes) {
        size_t len;
        const char *r = NULL;
        for (size_t i = 0; i < *n; i++) nodes[i] = r = i < total ? emu_graph_next(g, r, &len) : NULL;
        if (*n > total) *n = total;
    } else {
        *n = total;
    }
    return ret(cudaSuccess);
}

/* Writes the graph as a chain of its records in Graphviz's language. */
EMU_EXPORT cudaError_t cudaGraphDebugDotPrint(emu_graph *g, const char *path, unsigned flags)
{
    (void)flags;
    EMU_ENTER("cudaGraphDebugDotPrint");
    if (!path || !list_has(&graphs, g)) return ret(cudaErrorInvalidValue);
    FILE *f = fopen(path, "w");
    if (!f) return ret(cudaErrorInvalidValue);
    fprintf(f, "digraph emulated_cuda_graph {\n");
    size_t i = 0, len;
    for (const char *r = emu_graph_next(g, NULL, &len); r; r = emu_graph_next(g, r, &len), i++) {
        fprintf(f, "  n%zu [label=\"%.*s\"];\n", i, (int)len, r);
        if (i) fprintf(f, "  n%zu -> n%zu;\n", i - 1, i);
    }
    fprintf(f, "}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return ret(cudaErrorUnknown);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(int *mode)
{
    EMU_ENTER("cudaThreadExchangeStreamCaptureMode");
    if (!mode) return ret(cudaErrorInvalidValue);
    static _Thread_local int t_mode; /* cudaStreamCaptureModeGlobal */
    int old = t_mode;
    t_mode = *mode;
    *mode = old;
    return ret(cudaSuccess);
}

/* ---- pointers, host memory, host functions ---- */

typedef struct cuda_pointer_attributes {
    int type; /* cudaMemoryType: 0 unregistered, 1 host, 2 device */
    int device;
    void *devicePointer, *hostPointer;
} cuda_pointer_attributes;

EMU_EXPORT cudaError_t cudaPointerGetAttributes(cuda_pointer_attributes *a, const void *p)
{
    EMU_ENTER("cudaPointerGetAttributes");
    if (!a) return ret(cudaErrorInvalidValue);
    int dev = emu_is_device_ptr((uintptr_t)p);
    a->type = dev ? 2 : 0;
    a->device = dev ? emu_ptr_device((uintptr_t)p) : -2;
    a->devicePointer = dev ? (void *)p : NULL;
    a->hostPointer = dev ? NULL : (void *)p;
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaHostRegister(void *p, size_t bytes, unsigned flags)
{
    (void)p, (void)bytes, (void)flags;
    EMU_ENTER("cudaHostRegister");
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaHostUnregister(void *p)
{
    (void)p;
    EMU_ENTER("cudaHostUnregister");
    return ret(cudaSuccess);
}

/* A host function enqueued on a stream runs when the stream reaches it; the emulated device has
 * always reached it, so it runs now, on the caller's thread. */
EMU_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t s, void (*fn)(void *), void *data)
{
    EMU_ENTER("cudaLaunchHostFunc");
    if (!fn) return ret(cudaErrorInvalidValue);
    (void)stream_or_die(s, "cudaLaunchHostFunc");
    emu_leave();
    fn(data);
    return cudaSuccess;
}

EMU_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t s, void (*fn)(cudaStream_t, cudaError_t, void *), void *data,
                                             unsigned flags)
{
    (void)flags;
    EMU_ENTER("cudaStreamAddCallback");
    if (!fn) return ret(cudaErrorInvalidValue);
    (void)stream_or_die(s, "cudaStreamAddCallback");
    emu_leave();
    fn(s, cudaSuccess, data);
    return cudaSuccess;
}

EMU_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                         size_t height, int kind, cudaStream_t s)
{
    EMU_ENTER("cudaMemcpy2DAsync");
    int si = stream_or_die(s, "cudaMemcpy2DAsync");
    if (width > dpitch || width > spitch) return ret(cudaErrorInvalidValue);
    kind = copy_kind(dst, src, kind);
    if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost) {
        for (size_t r = 0; r < height; r++) {
            if (kind == cudaMemcpyDeviceToHost) memset((char *)dst + r * dpitch, 0, width);
            else memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
        }
        if (kind == cudaMemcpyHostToHost) return ret(cudaSuccess);
    }
    static const char *const names[] = {"h2h", "h2d", "d2h", "d2d"};
    emu_rec("C %d %s %zu 0", si, names[kind], width * height);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes,
                                           cudaStream_t s)
{
    (void)dst, (void)src;
    EMU_ENTER("cudaMemcpyPeerAsync");
    int si = stream_or_die(s, "cudaMemcpyPeerAsync");
    if (src_dev < 0 || src_dev >= emu_device_count() || dst_dev < 0 || dst_dev >= emu_device_count())
        return ret(cudaErrorInvalidDevice);
    if (si == 0) emu_rec_device(src_dev);
    emu_rec("C %d %s %zu 0", si, src_dev != dst_dev ? "p2p" : "d2d", bytes);
    emu_rec_device(-1);
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaProfilerStart(void)
{
    EMU_ENTER("cudaProfilerStart");
    return ret(cudaSuccess);
}

EMU_EXPORT cudaError_t cudaProfilerStop(void)
{
    EMU_ENTER("cudaProfilerStop");
    return ret(cudaSuccess);
}
