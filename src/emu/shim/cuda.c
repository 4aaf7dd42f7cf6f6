/*
 * cuda.c - the CUDA driver API stand-in (libcuda.so.1, unversioned as the real one).
 *
 * PyTorch reaches the driver two ways: by name through cudaGetDriverEntryPoint/cuGetProcAddress
 * (c10's DriverAPI table) and by linking (the NVRTC JIT path). Both land here. Implemented: what
 * a framework asks about the device and its primary context, error strings, pointer queries,
 * the entry-point lookup itself, and modules and kernel launches (what Triton's launcher and
 * PyTorch Inductor's static launcher call for the kernels torch.compile generates). Everything
 * else the PyTorch build names is a stub that records the call
 * (src/emu/shim/syms/libcuda.so.1.syms), so a run that needed it is refused.
 */
#define _GNU_SOURCE
#include "emu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_FILE_NOT_FOUND = 301,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_UNKNOWN = 999,
};

static CUresult ret(CUresult r)
{
    emu_leave();
    return r;
}

static int valid_device(int dev) { return dev >= 0 && dev < emu_device_count(); }

static const char *result_name(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
    case CUDA_ERROR_FILE_NOT_FOUND: return "CUDA_ERROR_FILE_NOT_FOUND";
    case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    default: return NULL;
    }
}

EMU_EXPORT CUresult cuGetErrorName(CUresult r, const char **s)
{
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    *s = result_name(r);
    return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EMU_EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    switch (r) {
    case CUDA_SUCCESS: *s = "no error"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory"; break;
    case CUDA_ERROR_INVALID_DEVICE: *s = "invalid device ordinal"; break;
    case CUDA_ERROR_INVALID_IMAGE: *s = "device kernel image is invalid"; break;
    case CUDA_ERROR_FILE_NOT_FOUND: *s = "file not found"; break;
    case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *s = "operation not supported (not implemented by orrery emulate)"; break;
    default: *s = result_name(r);
    }
    return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EMU_EXPORT CUresult cuInit(unsigned flags)
{
    (void)flags;
    EMU_ENTER("cuInit");
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuDriverGetVersion(int *v)
{
    EMU_ENTER("cuDriverGetVersion");
    if (!v) return ret(CUDA_ERROR_INVALID_VALUE);
    *v = 13000;
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuDeviceGetCount(int *n)
{
    EMU_ENTER("cuDeviceGetCount");
    if (!n) return ret(CUDA_ERROR_INVALID_VALUE);
    *n = emu_device_count();
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuDeviceGet(int *dev, int ordinal)
{
    EMU_ENTER("cuDeviceGet");
    if (!dev) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!valid_device(ordinal)) return ret(CUDA_ERROR_INVALID_DEVICE);
    *dev = ordinal;
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
    EMU_ENTER("cuDeviceGetAttribute");
    if (!v) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!valid_device(dev)) return ret(CUDA_ERROR_INVALID_DEVICE);
    if (emu_device_attribute(attr, v) < 0) {
        emu_warn_once("cudevattr", "cuDeviceGetAttribute: attribute %d is not known to the emulator", attr);
        return ret(CUDA_ERROR_INVALID_VALUE);
    }
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuDeviceGetName(char *name, int len, int dev)
{
    EMU_ENTER("cuDeviceGetName");
    if (!name || len <= 0) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!valid_device(dev)) return ret(CUDA_ERROR_INVALID_DEVICE);
    snprintf(name, (size_t)len, "%s", emu_gpu()->name);
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
    EMU_ENTER("cuDeviceTotalMem_v2");
    if (!bytes) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!valid_device(dev)) return ret(CUDA_ERROR_INVALID_DEVICE);
    *bytes = (size_t)emu_mem_total();
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuDeviceGetUuid(unsigned char uuid[16], int dev)
{
    EMU_ENTER("cuDeviceGetUuid");
    if (!uuid) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!valid_device(dev)) return ret(CUDA_ERROR_INVALID_DEVICE);
    emu_device_uuid(dev, uuid);
    return ret(CUDA_SUCCESS);
}

/* Primary contexts: one per device; the one of the device the process uses is active (PyTorch
 * asks so as not to create contexts on devices it does not use). The context handle is the
 * address of a static byte per device. */
static unsigned char contexts[64];

EMU_EXPORT CUresult cuDevicePrimaryCtxGetState(int dev, unsigned *flags, int *active)
{
    EMU_ENTER("cuDevicePrimaryCtxGetState");
    if (!flags || !active) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!valid_device(dev)) return ret(CUDA_ERROR_INVALID_DEVICE);
    *flags = 0;
    *active = dev == emu_device();
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    EMU_ENTER("cuDevicePrimaryCtxRetain");
    if (!ctx) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!valid_device(dev) || dev >= (int)sizeof contexts) return ret(CUDA_ERROR_INVALID_DEVICE);
    *ctx = &contexts[dev];
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(int dev)
{
    EMU_ENTER("cuDevicePrimaryCtxRelease_v2");
    return ret(valid_device(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE);
}

EMU_EXPORT CUresult cuCtxGetCurrent(void **ctx)
{
    EMU_ENTER("cuCtxGetCurrent");
    if (!ctx) return ret(CUDA_ERROR_INVALID_VALUE);
    int dev = emu_device();
    *ctx = dev < (int)sizeof contexts ? &contexts[dev] : NULL;
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuCtxSetCurrent(void *ctx)
{
    EMU_ENTER("cuCtxSetCurrent");
    if (!ctx) return ret(CUDA_SUCCESS);
    uintptr_t c = (uintptr_t)ctx, b = (uintptr_t)contexts;
    if (c < b || c >= b + sizeof contexts || !valid_device((int)(c - b))) return ret(CUDA_ERROR_INVALID_CONTEXT);
    emu_set_device((int)(c - b));
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuCtxGetDevice(int *dev)
{
    EMU_ENTER("cuCtxGetDevice");
    if (!dev) return ret(CUDA_ERROR_INVALID_VALUE);
    *dev = emu_device();
    return ret(CUDA_SUCCESS);
}

/* cuPointerGetAttribute: the attributes frameworks ask (CU_POINTER_ATTRIBUTE_CONTEXT 1,
 * MEMORY_TYPE 2, DEVICE_POINTER 3, HOST_POINTER 4, DEVICE_ORDINAL 9). */
EMU_EXPORT CUresult cuPointerGetAttribute(void *data, int attribute, uintptr_t ptr)
{
    EMU_ENTER("cuPointerGetAttribute");
    if (!data) return ret(CUDA_ERROR_INVALID_VALUE);
    int dev = emu_is_device_ptr(ptr), ord = dev ? emu_ptr_device(ptr) : -1; /* the device it was allocated on */
    switch (attribute) {
    case 1: *(void **)data = dev ? &contexts[ord % (int)sizeof contexts] : NULL; break;
    case 2: *(unsigned *)data = dev ? 2u : 1u; break; /* CU_MEMORYTYPE_DEVICE / HOST */
    case 3: *(uintptr_t *)data = dev ? ptr : 0; break;
    case 4: *(uintptr_t *)data = dev ? 0 : ptr; break;
    case 9: *(int *)data = ord; break;
    default: return ret(emu_unimplemented("cuPointerGetAttribute(attribute)", CUDA_ERROR_NOT_SUPPORTED));
    }
    return ret(dev || attribute == 2 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

/* The entry-point lookup: every name PyTorch knows is defined in this library, implemented or
 * as a recording stub; a name that is not is reported as not found, as the real driver does for
 * an unknown symbol. */
static void *emu_driver_symbol(const char *name)
{
    static void *self;
    if (!self) self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return self && name ? dlsym(self, name) : NULL;
}

EMU_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
    (void)version, (void)flags;
    EMU_ENTER("cuGetProcAddress_v2");
    if (!symbol || !pfn) return ret(CUDA_ERROR_INVALID_VALUE);
    *pfn = emu_driver_symbol(symbol);
    if (status) *status = *pfn ? 0 : 1; /* CU_GET_PROC_ADDRESS_SUCCESS / _SYMBOL_NOT_FOUND */
    return ret(*pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND);
}

EMU_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags)
{
    (void)version, (void)flags;
    EMU_ENTER("cuGetProcAddress");
    if (!symbol || !pfn) return ret(CUDA_ERROR_INVALID_VALUE);
    *pfn = emu_driver_symbol(symbol);
    return ret(*pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND);
}

/* ---- modules and kernel launches (Triton, PyTorch Inductor) ----
 *
 * A module is loaded from a cubin (cuModuleLoadData: Triton's launcher; cuModuleLoad of a file:
 * Inductor's static launcher) and its functions are looked up by name. Nothing is run, so the
 * image is not read: a function is its name, and a launch of it is a kernel launch on its stream
 * under that name ("K" record), as a runtime launch is. Its time comes from the operator tag the
 * PyTorch hook puts around Inductor's kernel launches (docs/emulate.md, "Triton kernel times"), else
 * from its launch geometry. A function reports the resources of the most permissive kernel, as
 * cudaFuncGetAttributes does (cudart.c): 32 registers, no spills, no static shared memory. */
#define MODULE_MAGIC 0x6d6f64756c65u   /* "module" */
#define FUNCTION_MAGIC 0x66756e6374u   /* "funct" */

typedef struct cu_function {
    uint64_t magic;
    struct cu_function *next;  /* the module's functions */
    _Atomic int max_dynamic_shmem_bytes; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (set and read by any thread) */
    char name[];
} cu_function;

typedef struct cu_module {
    uint64_t magic;
    cu_function *functions;
} cu_module;

static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult module_new(void **mod)
{
    cu_module *m = calloc(1, sizeof *m);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = MODULE_MAGIC;
    *mod = m;
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuModuleLoadData(void **mod, const void *image)
{
    EMU_ENTER("cuModuleLoadData");
    if (!mod) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!image) return ret(CUDA_ERROR_INVALID_IMAGE);
    return ret(module_new(mod));
}

EMU_EXPORT CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned nopts, int *opts, void **values)
{
    (void)nopts, (void)opts, (void)values;
    EMU_ENTER("cuModuleLoadDataEx");
    if (!mod) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!image) return ret(CUDA_ERROR_INVALID_IMAGE);
    return ret(module_new(mod));
}

EMU_EXPORT CUresult cuModuleLoad(void **mod, const char *path)
{
    EMU_ENTER("cuModuleLoad");
    if (!mod || !path) return ret(CUDA_ERROR_INVALID_VALUE);
    FILE *f = fopen(path, "rb");
    if (!f) return ret(CUDA_ERROR_FILE_NOT_FOUND);
    fclose(f);
    return ret(module_new(mod));
}

static cu_module *module_of(void *mod)
{
    cu_module *m = mod;
    return m && m->magic == MODULE_MAGIC ? m : NULL;
}

static cu_function *function_of(void *fn)
{
    cu_function *f = fn;
    return f && f->magic == FUNCTION_MAGIC ? f : NULL;
}

EMU_EXPORT CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
    EMU_ENTER("cuModuleGetFunction");
    cu_module *m = module_of(mod);
    if (!fn || !name || !*name) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!m) return ret(CUDA_ERROR_INVALID_HANDLE);
    pthread_mutex_lock(&module_lock);
    cu_function *f = m->functions;
    while (f && strcmp(f->name, name) != 0) f = f->next;
    if (!f) {
        size_t n = strlen(name);
        f = calloc(1, sizeof *f + n + 1);
        if (f) {
            f->magic = FUNCTION_MAGIC;
            f->max_dynamic_shmem_bytes = 48 << 10;
            memcpy(f->name, name, n + 1);
            f->next = m->functions;
            m->functions = f;
        }
    }
    pthread_mutex_unlock(&module_lock);
    if (!f) return ret(CUDA_ERROR_OUT_OF_MEMORY);
    *fn = f;
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuModuleUnload(void *mod)
{
    EMU_ENTER("cuModuleUnload");
    cu_module *m = module_of(mod);
    if (!m) return ret(CUDA_ERROR_INVALID_HANDLE);
    pthread_mutex_lock(&module_lock);
    for (cu_function *f = m->functions, *next; f; f = next) {
        next = f->next;
        f->magic = 0;
        free(f);
    }
    m->magic = 0;
    free(m);
    pthread_mutex_unlock(&module_lock);
    return ret(CUDA_SUCCESS);
}

/* CUfunction_attribute: MAX_THREADS_PER_BLOCK 0, SHARED_SIZE_BYTES 1, CONST_SIZE_BYTES 2,
 * LOCAL_SIZE_BYTES 3, NUM_REGS 4, PTX_VERSION 5, BINARY_VERSION 6, CACHE_MODE_CA 7,
 * MAX_DYNAMIC_SHARED_SIZE_BYTES 8, PREFERRED_SHARED_MEMORY_CARVEOUT 9, cluster attributes 10-15. */
EMU_EXPORT CUresult cuFuncGetAttribute(int *v, int attr, void *fn)
{
    EMU_ENTER("cuFuncGetAttribute");
    cu_function *f = function_of(fn);
    if (!v) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!f) return ret(CUDA_ERROR_INVALID_HANDLE);
    const emu_gpu_info *g = emu_gpu();
    switch (attr) {
    case 0: *v = 1024; break;
    case 4: *v = 32; break;
    case 5: case 6: *v = g->cc_major * 10 + g->cc_minor; break;
    case 8: *v = f->max_dynamic_shmem_bytes; break;
    case 9: *v = -1; break;
    case 1: case 2: case 3: case 7: case 10: case 11: case 12: case 13: case 14: case 15: *v = 0; break;
    default: return ret(CUDA_ERROR_INVALID_VALUE);
    }
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuFuncSetAttribute(void *fn, int attr, int value)
{
    EMU_ENTER("cuFuncSetAttribute");
    cu_function *f = function_of(fn);
    if (!f) return ret(CUDA_ERROR_INVALID_HANDLE);
    if (attr == 8) {
        int optin = 0; /* shared memory per block, opt-in */
        if (value < 0 || (emu_device_attribute(97, &optin) == 0 && value > optin)) return ret(CUDA_ERROR_INVALID_VALUE);
        f->max_dynamic_shmem_bytes = value;
    }
    return ret(CUDA_SUCCESS);
}

EMU_EXPORT CUresult cuFuncSetCacheConfig(void *fn, int config)
{
    (void)config;
    EMU_ENTER("cuFuncSetCacheConfig");
    return ret(function_of(fn) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

static CUresult launch(cu_function *f, const unsigned grid[3], const unsigned block[3], unsigned shmem_bytes,
                       void *stream, const char *api)
{
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2]) return CUDA_ERROR_INVALID_VALUE;
    if (shmem_bytes > (unsigned)f->max_dynamic_shmem_bytes) return CUDA_ERROR_INVALID_VALUE; /* as the driver refuses it */
    int si = emu_stream_index(stream);
    if (si < 0) emu_die("%s: stream %p is not a stream this process created", api, stream);
    emu_launch(f->name, grid, block, shmem_bytes, si);
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shmem_bytes, void *stream, void **params, void **extra)
{
    (void)params, (void)extra;
    EMU_ENTER("cuLaunchKernel");
    const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    return ret(launch(function_of(fn), g, b, shmem_bytes, stream, "cuLaunchKernel"));
}

/* CUlaunchConfig and CUlaunchAttribute (cuda.h): the attribute's value is a 64-byte union after
 * its id and 4 bytes of padding; CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION (4) holds x, y, z. */
typedef struct {
    int id;
    char pad[4];
    union {
        char bytes[64];
        struct {
            unsigned x, y, z;
        } cluster;
    } value;
} cu_launch_attribute;

typedef struct {
    unsigned grid[3], block[3], shmem_bytes;
    void *stream;
    cu_launch_attribute *attrs;
    unsigned nattrs;
} cu_launch_config;

EMU_EXPORT CUresult cuLaunchKernelEx(const cu_launch_config *config, void *fn, void **params, void **extra)
{
    (void)params, (void)extra;
    EMU_ENTER("cuLaunchKernelEx");
    if (!config) return ret(CUDA_ERROR_INVALID_VALUE);
    return ret(launch(function_of(fn), config->grid, config->block, config->shmem_bytes, config->stream,
                      "cuLaunchKernelEx"));
}

/* How many clusters of the configuration's size may be resident at once: one block per SM (the
 * most permissive kernel's resources do not bound it further), so the SMs over the cluster size. */
EMU_EXPORT CUresult cuOccupancyMaxActiveClusters(int *n, void *fn, const cu_launch_config *config)
{
    EMU_ENTER("cuOccupancyMaxActiveClusters");
    if (!n || !config) return ret(CUDA_ERROR_INVALID_VALUE);
    if (!function_of(fn)) return ret(CUDA_ERROR_INVALID_HANDLE);
    unsigned size = 1;
    for (unsigned i = 0; i < config->nattrs && config->attrs; i++)
        if (config->attrs[i].id == 4) {
            unsigned x = config->attrs[i].value.cluster.x, y = config->attrs[i].value.cluster.y,
                     z = config->attrs[i].value.cluster.z;
            if (!x || !y || !z || x > 16 || y > 16 || z > 16) return ret(CUDA_ERROR_INVALID_VALUE);
            size = x * y * z;
        }
    *n = emu_gpu()->sms / (int)size;
    return ret(CUDA_SUCCESS);
}
