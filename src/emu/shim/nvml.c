/*
 * nvml.c - the NVML stand-in (libnvidia-ml.so.1, unversioned). PyTorch loads it by name for the
 * device count, for the process list it prints with an out-of-memory error, and for NVLink
 * queries. Devices are the emulated ones; no process is reported running on them. Device
 * handles are addresses of static bytes, one per device.
 */
#include "emu.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
};

static unsigned char devices[64];

static nvmlReturn_t ret(nvmlReturn_t r)
{
    emu_leave();
    return r;
}

static int device_index(const void *h)
{
    uintptr_t a = (uintptr_t)h, b = (uintptr_t)devices;
    if (a < b || a >= b + sizeof devices) return -1;
    int i = (int)(a - b);
    return i < emu_device_count() ? i : -1;
}

EMU_EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    EMU_ENTER("nvmlInit_v2");
    return ret(NVML_SUCCESS);
}

EMU_EXPORT nvmlReturn_t nvmlShutdown(void)
{
    EMU_ENTER("nvmlShutdown");
    return ret(NVML_SUCCESS);
}

EMU_EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported (not implemented by orrery emulate)";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    default: return "Unknown Error";
    }
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n)
{
    EMU_ENTER("nvmlDeviceGetCount_v2");
    if (!n) return ret(NVML_ERROR_INVALID_ARGUMENT);
    *n = (unsigned)emu_device_count();
    return ret(NVML_SUCCESS);
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
    EMU_ENTER("nvmlDeviceGetHandleByIndex_v2");
    if (!h || i >= (unsigned)emu_device_count() || i >= sizeof devices) return ret(NVML_ERROR_INVALID_ARGUMENT);
    *h = &devices[i];
    return ret(NVML_SUCCESS);
}

/* Bus ids as cudaDeviceGetPCIBusId gives them: 00000000:<device + 1>:00.0 */
EMU_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **h)
{
    EMU_ENTER("nvmlDeviceGetHandleByPciBusId_v2");
    unsigned dom, b, dev, fn;
    if (!bus || !h || sscanf(bus, "%x:%x:%x.%x", &dom, &b, &dev, &fn) != 4) return ret(NVML_ERROR_INVALID_ARGUMENT);
    if (b < 1 || b > (unsigned)emu_device_count() || b > sizeof devices) return ret(NVML_ERROR_NOT_FOUND);
    *h = &devices[b - 1];
    return ret(NVML_SUCCESS);
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetUUID(void *h, char *uuid, unsigned len)
{
    EMU_ENTER("nvmlDeviceGetUUID");
    int d = device_index(h);
    if (d < 0 || !uuid || len < 41) return ret(NVML_ERROR_INVALID_ARGUMENT);
    unsigned char u[16];
    emu_device_uuid(d, u);
    snprintf(uuid, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return ret(NVML_SUCCESS);
}

/* No process of the emulated machine holds device memory outside the program's own view. */
EMU_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(void *h, unsigned *count, void *infos)
{
    (void)infos;
    EMU_ENTER("nvmlDeviceGetComputeRunningProcesses");
    if (device_index(h) < 0 || !count) return ret(NVML_ERROR_INVALID_ARGUMENT);
    *count = 0;
    return ret(NVML_SUCCESS);
}

EMU_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    EMU_ENTER("nvmlSystemGetCudaDriverVersion_v2");
    if (!v) return ret(NVML_ERROR_INVALID_ARGUMENT);
    *v = 13000;
    return ret(NVML_SUCCESS);
}
