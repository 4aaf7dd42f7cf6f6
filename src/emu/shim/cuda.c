/*
 * cuda.c - the CUDA driver API stand-in (libcuda.so.1, unversioned as the real one).
 *
 * PyTorch reaches the driver two ways: by name through cudaGetDriverEntryPoint/cuGetProcAddress
 * (c10's DriverAPI table) and by linking (the NVRTC JIT path). Both land here. Implemented: what
 * a framework asks about the device and its primary context, error strings, pointer queries and
 * the entry-point lookup itself. Everything else the PyTorch build names is a stub that records
 * the call (src/emu/shim/syms/libcuda.so.1.syms), so a run that needed it is refused.
 */
#define _GNU_SOURCE
#include "emu.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_CONTEXT = 201,
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
