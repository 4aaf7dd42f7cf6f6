/*
 * nvml.c - the NVML stand-in (libnvidia-ml.so.1, unversioned). PyTorch loads it by name for the
 * device count, for the process list it prints with an out-of-memory error, and for NVLink
 * queries; monitoring code (pynvml, torch.cuda.utilization/temperature/power_draw/memory_used,
 * nvidia-smi-like tools) asks for names, memory, utilisation, clocks, power, PCI, versions and
 * processes. Devices are the emulated ones (the --gpu of the run, emu.h); device handles are
 * addresses of static bytes, one per device. What a device that runs nothing reports (docs/emulate.md,
 * "NVML"): utilisation 0 %, a constant 30 C, power draw 0 mW against the catalog's TDP as its limit,
 * the maximum clocks as the current ones, the memory of the process's own device as cudaMemGetInfo
 * gives it (the CUDA context's share counted as used), and one process, this one, on its device.
 */
#include "emu.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* An entry point that forwards to a helper: the call counted, the helper's status returned. */
#define FORWARD(name, params, call)    \
    EMU_EXPORT nvmlReturn_t name params \
    {                                   \
        EMU_ENTER(#name);               \
        return ret(call);               \
    }
/* A device query with a constant answer of type T. */
#define DEVICE_CONST(name, T, value)                                              \
    EMU_EXPORT nvmlReturn_t name(void *h, T *out)                                \
    {                                                                             \
        EMU_ENTER(#name);                                                         \
        if (device_index(h) < 0 || !out) return ret(NVML_ERROR_INVALID_ARGUMENT); \
        *out = (value);                                                           \
        return ret(NVML_SUCCESS);                                                 \
    }

FORWARD(nvmlInit_v2, (void), NVML_SUCCESS)

FORWARD(nvmlInit, (void), NVML_SUCCESS)

EMU_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned flags)
{
    (void)flags;
    EMU_ENTER("nvmlInitWithFlags");
    return ret(NVML_SUCCESS);
}

FORWARD(nvmlShutdown, (void), NVML_SUCCESS)

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

static nvmlReturn_t device_count(unsigned *n)
{
    if (!n) return NVML_ERROR_INVALID_ARGUMENT;
    *n = (unsigned)emu_device_count();
    return NVML_SUCCESS;
}

static nvmlReturn_t handle_at(unsigned i, void **h)
{
    if (!h || i >= (unsigned)emu_device_count() || i >= sizeof devices) return NVML_ERROR_INVALID_ARGUMENT;
    *h = &devices[i];
    return NVML_SUCCESS;
}

FORWARD(nvmlDeviceGetCount_v2, (unsigned *n), device_count(n))

FORWARD(nvmlDeviceGetCount, (unsigned *n), device_count(n))

FORWARD(nvmlDeviceGetHandleByIndex_v2, (unsigned i, void **h), handle_at(i, h))

FORWARD(nvmlDeviceGetHandleByIndex, (unsigned i, void **h), handle_at(i, h))

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

static void uuid_text(int d, char *out, size_t len)
{
    unsigned char u[16];
    emu_device_uuid(d, u);
    snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetUUID(void *h, char *uuid, unsigned len)
{
    EMU_ENTER("nvmlDeviceGetUUID");
    int d = device_index(h);
    if (d < 0 || !uuid || len < 41) return ret(NVML_ERROR_INVALID_ARGUMENT);
    uuid_text(d, uuid, len);
    return ret(NVML_SUCCESS);
}


EMU_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    EMU_ENTER("nvmlSystemGetCudaDriverVersion_v2");
    if (!v) return ret(NVML_ERROR_INVALID_ARGUMENT);
    *v = 13000;
    return ret(NVML_SUCCESS);
}

/* ---- monitoring: versions, identity, memory, utilisation, clocks, power, PCI, processes ---- */

#define EMU_DRIVER_VERSION "580.65.06" /* an R580 driver: CUDA 13.0, as cudaDriverGetVersion says */

static nvmlReturn_t copy_str(const char *v, char *buf, unsigned len)
{
    if (!buf) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(v) + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, v, strlen(v) + 1);
    return NVML_SUCCESS;
}

FORWARD(nvmlSystemGetDriverVersion, (char *v, unsigned len), copy_str(EMU_DRIVER_VERSION, v, len))

FORWARD(nvmlSystemGetNVMLVersion, (char *v, unsigned len), copy_str("13." EMU_DRIVER_VERSION, v, len))

EMU_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
    EMU_ENTER("nvmlSystemGetCudaDriverVersion");
    if (!v) return ret(NVML_ERROR_INVALID_ARGUMENT);
    *v = 13000;
    return ret(NVML_SUCCESS);
}

EMU_EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned pid, char *name, unsigned len)
{
    EMU_ENTER("nvmlSystemGetProcessName");
    char path[64], exe[256];
    snprintf(path, sizeof path, "/proc/%u/exe", pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n < 0) return ret(NVML_ERROR_NOT_FOUND);
    exe[n] = 0;
    return ret(copy_str(exe, name, len));
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, void **h)
{
    EMU_ENTER("nvmlDeviceGetHandleByUUID");
    if (!uuid || !h) return ret(NVML_ERROR_INVALID_ARGUMENT);
    for (int d = 0; d < emu_device_count() && d < (int)sizeof devices; d++) {
        char u[48];
        uuid_text(d, u, sizeof u);
        if (strcmp(u, uuid) == 0) {
            *h = &devices[d];
            return ret(NVML_SUCCESS);
        }
    }
    return ret(NVML_ERROR_NOT_FOUND);
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetIndex(void *h, unsigned *i)
{
    EMU_ENTER("nvmlDeviceGetIndex");
    int d = device_index(h);
    if (d < 0 || !i) return ret(NVML_ERROR_INVALID_ARGUMENT);
    *i = (unsigned)d;
    return ret(NVML_SUCCESS);
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(void *h, unsigned *i)
{
    EMU_ENTER("nvmlDeviceGetMinorNumber");
    int d = device_index(h);
    if (d < 0 || !i) return ret(NVML_ERROR_INVALID_ARGUMENT);
    *i = (unsigned)d;
    return ret(NVML_SUCCESS);
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetName(void *h, char *name, unsigned len)
{
    EMU_ENTER("nvmlDeviceGetName");
    if (device_index(h) < 0) return ret(NVML_ERROR_INVALID_ARGUMENT);
    return ret(copy_str(emu_gpu()->name, name, len));
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetSerial(void *h, char *serial, unsigned len)
{
    EMU_ENTER("nvmlDeviceGetSerial");
    int d = device_index(h);
    if (d < 0) return ret(NVML_ERROR_INVALID_ARGUMENT);
    char s[32];
    snprintf(s, sizeof s, "EMU%010d", d);
    return ret(copy_str(s, serial, len));
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(void *h, int *major, int *minor)
{
    EMU_ENTER("nvmlDeviceGetCudaComputeCapability");
    if (device_index(h) < 0 || !major || !minor) return ret(NVML_ERROR_INVALID_ARGUMENT);
    *major = emu_gpu()->cc_major;
    *minor = emu_gpu()->cc_minor;
    return ret(NVML_SUCCESS);
}

/* NVML_DEVICE_ARCH_*: 7 Ampere, 9 Hopper, 10 Blackwell (by compute capability) */
EMU_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(void *h, unsigned *arch)
{
    EMU_ENTER("nvmlDeviceGetArchitecture");
    if (device_index(h) < 0 || !arch) return ret(NVML_ERROR_INVALID_ARGUMENT);
    int cc = emu_gpu()->cc_major;
    *arch = cc >= 10 ? 10 : cc == 9 ? 9 : cc == 8 ? 7 : 5;
    return ret(NVML_SUCCESS);
}

typedef struct {
    unsigned long long total, free, used;
} nvml_memory;
typedef struct {
    unsigned version;
    unsigned long long total, reserved, free, used;
} nvml_memory_v2;

/* free as cudaMemGetInfo gives it on device d (this process's allocations there); used: the rest of
 * the total (the CUDA context's share too) */
static void memory(int d, unsigned long long *total, unsigned long long *free_b, unsigned long long *used)
{
    *total = emu_mem_total();
    *free_b = emu_mem_capacity() - emu_mem_used_on(d);
    *used = *total - *free_b;
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(void *h, nvml_memory *m)
{
    EMU_ENTER("nvmlDeviceGetMemoryInfo");
    if (device_index(h) < 0 || !m) return ret(NVML_ERROR_INVALID_ARGUMENT);
    memory(device_index(h), &m->total, &m->free, &m->used);
    return ret(NVML_SUCCESS);
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(void *h, nvml_memory_v2 *m)
{
    EMU_ENTER("nvmlDeviceGetMemoryInfo_v2");
    if (device_index(h) < 0 || !m) return ret(NVML_ERROR_INVALID_ARGUMENT);
    memory(device_index(h), &m->total, &m->free, &m->used);
    m->reserved = 0;
    return ret(NVML_SUCCESS);
}

typedef struct {
    unsigned gpu, memory;
} nvml_utilization;

EMU_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(void *h, nvml_utilization *u)
{
    EMU_ENTER("nvmlDeviceGetUtilizationRates");
    if (device_index(h) < 0 || !u) return ret(NVML_ERROR_INVALID_ARGUMENT);
    u->gpu = u->memory = 0; /* nothing runs on the device */
    return ret(NVML_SUCCESS);
}

EMU_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(void *h, int sensor, unsigned *t)
{
    EMU_ENTER("nvmlDeviceGetTemperature");
    if (device_index(h) < 0 || sensor != 0 || !t) return ret(NVML_ERROR_INVALID_ARGUMENT); /* NVML_TEMPERATURE_GPU */
    *t = 30;
    return ret(NVML_SUCCESS);
}

/* nvmlClockType_t: 0 graphics, 1 SM, 2 memory, 3 video; MHz. The SM clock is the one
 * cudaDevAttrClockRate gives, the memory clock cudaDevAttrMemoryClockRate's. */
static nvmlReturn_t clock_mhz(void *h, int type, unsigned *mhz)
{
    if (device_index(h) < 0 || !mhz || type < 0 || type > 3) return NVML_ERROR_INVALID_ARGUMENT;
    int khz = 0;
    emu_device_attribute(type == 2 ? 36 : 13, &khz);
    *mhz = (unsigned)(khz / 1000);
    return NVML_SUCCESS;
}

FORWARD(nvmlDeviceGetClockInfo, (void *h, int type, unsigned *mhz), clock_mhz(h, type, mhz))

FORWARD(nvmlDeviceGetMaxClockInfo, (void *h, int type, unsigned *mhz), clock_mhz(h, type, mhz))

EMU_EXPORT nvmlReturn_t nvmlDeviceGetClock(void *h, int type, int id, unsigned *mhz)
{
    (void)id;
    EMU_ENTER("nvmlDeviceGetClock");
    return ret(clock_mhz(h, type, mhz));
}

/* milliwatts: the catalog's TDP as every limit; nothing runs, so 0 mW drawn and no energy used */
static nvmlReturn_t power_limit(void *h, unsigned *mw)
{
    if (device_index(h) < 0 || !mw) return NVML_ERROR_INVALID_ARGUMENT;
    *mw = (unsigned)(emu_gpu()->tdp_w * 1000.0);
    return NVML_SUCCESS;
}

DEVICE_CONST(nvmlDeviceGetPowerUsage, unsigned, 0)

DEVICE_CONST(nvmlDeviceGetTotalEnergyConsumption, unsigned long long, 0)

FORWARD(nvmlDeviceGetEnforcedPowerLimit, (void *h, unsigned *mw), power_limit(h, mw))

FORWARD(nvmlDeviceGetPowerManagementLimit, (void *h, unsigned *mw), power_limit(h, mw))

FORWARD(nvmlDeviceGetPowerManagementDefaultLimit, (void *h, unsigned *mw), power_limit(h, mw))

/* nvmlPstates_t: P0, maximum performance */
DEVICE_CONST(nvmlDeviceGetPerformanceState, int, 0)

/* nvmlPciInfo_t; bus ids as cudaDeviceGetPCIBusId gives them (00000000:<device + 1>:00.0), NVIDIA's
 * vendor id 0x10de with device id 0 (the emulated GPU's PCI device id is not in the catalog) */
typedef struct {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci_info;

static nvmlReturn_t pci_info(void *h, nvml_pci_info *p)
{
    int d = device_index(h);
    if (d < 0 || !p) return NVML_ERROR_INVALID_ARGUMENT;
    memset(p, 0, sizeof *p);
    p->bus = (unsigned)d + 1;
    p->pci_device_id = 0x10de;
    snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", p->bus);
    snprintf(p->bus_id_legacy, sizeof p->bus_id_legacy, "0000:%02X:00.0", p->bus);
    return NVML_SUCCESS;
}

FORWARD(nvmlDeviceGetPciInfo, (void *h, nvml_pci_info *p), pci_info(h, p))

FORWARD(nvmlDeviceGetPciInfo_v2, (void *h, nvml_pci_info *p), pci_info(h, p))

FORWARD(nvmlDeviceGetPciInfo_v3, (void *h, nvml_pci_info *p), pci_info(h, p))

/* PCIe Gen4 x16: the link the collator's host<->device copies assume (24 GB/s) */
static nvmlReturn_t pcie(void *h, unsigned *v, unsigned value)
{
    if (device_index(h) < 0 || !v) return NVML_ERROR_INVALID_ARGUMENT;
    *v = value;
    return NVML_SUCCESS;
}

FORWARD(nvmlDeviceGetCurrPcieLinkGeneration, (void *h, unsigned *v), pcie(h, v, 4))

FORWARD(nvmlDeviceGetMaxPcieLinkGeneration, (void *h, unsigned *v), pcie(h, v, 4))

FORWARD(nvmlDeviceGetCurrPcieLinkWidth, (void *h, unsigned *v), pcie(h, v, 16))

FORWARD(nvmlDeviceGetMaxPcieLinkWidth, (void *h, unsigned *v), pcie(h, v, 16))

/* nvmlProcessInfo_t (v2/v3 layout): this process on its own device, with the device memory it
 * holds; none on the others. */
typedef struct {
    unsigned pid;
    unsigned long long used_gpu_memory;
    unsigned gpu_instance_id, compute_instance_id;
} nvml_process_info;

typedef struct {
    unsigned pid;
    unsigned long long used_gpu_memory;
} nvml_process_info_v1;

/* v1: infos is an array of nvml_process_info_v1, else of nvml_process_info */
static nvmlReturn_t processes(void *h, unsigned *count, void *infos, int v1)
{
    int d = device_index(h);
    if (d < 0 || !count) return NVML_ERROR_INVALID_ARGUMENT;
    /* this process, on its current device and on any other it holds memory on */
    unsigned n = d == emu_device() || emu_mem_used_on(d) > 0 ? 1 : 0, cap = *count;
    *count = n;
    if (n > cap) return NVML_ERROR_INSUFFICIENT_SIZE;
    if (n && !infos) return NVML_ERROR_INVALID_ARGUMENT;
    if (n && v1) *(nvml_process_info_v1 *)infos = (nvml_process_info_v1){(unsigned)getpid(), emu_mem_used_on(d)};
    else if (n) *(nvml_process_info *)infos = (nvml_process_info){(unsigned)getpid(), emu_mem_used_on(d), 0xffffffffu, 0xffffffffu};
    return NVML_SUCCESS;
}

FORWARD(nvmlDeviceGetComputeRunningProcesses, (void *h, unsigned *count, void *infos), processes(h, count, infos, 1))

FORWARD(nvmlDeviceGetComputeRunningProcesses_v2, (void *h, unsigned *count, nvml_process_info *infos), processes(h, count, infos, 0))

FORWARD(nvmlDeviceGetComputeRunningProcesses_v3, (void *h, unsigned *count, nvml_process_info *infos), processes(h, count, infos, 0))

EMU_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(void *h, unsigned *count, nvml_process_info *infos)
{
    (void)infos;
    EMU_ENTER("nvmlDeviceGetGraphicsRunningProcesses_v3");
    if (device_index(h) < 0 || !count) return ret(NVML_ERROR_INVALID_ARGUMENT);
    *count = 0;
    return ret(NVML_SUCCESS);
}

/* nvmlEnableState_t: persistence on, ECC on (current and pending), MIG off */
static nvmlReturn_t enable_state(void *h, unsigned *a, unsigned *b, unsigned value)
{
    if (device_index(h) < 0 || !a) return NVML_ERROR_INVALID_ARGUMENT;
    *a = value;
    if (b) *b = value;
    return NVML_SUCCESS;
}

FORWARD(nvmlDeviceGetPersistenceMode, (void *h, unsigned *mode), enable_state(h, mode, NULL, 1))

FORWARD(nvmlDeviceGetEccMode, (void *h, unsigned *current, unsigned *pending), enable_state(h, current, pending, 1))

FORWARD(nvmlDeviceGetMigMode, (void *h, unsigned *current, unsigned *pending), enable_state(h, current, pending, 0))

/* nvmlComputeMode_t: default */
DEVICE_CONST(nvmlDeviceGetComputeMode, int, 0)

/* no clock event (throttle) reasons: the device idles */
DEVICE_CONST(nvmlDeviceGetCurrentClocksEventReasons, unsigned long long, 0)

DEVICE_CONST(nvmlDeviceGetCurrentClocksThrottleReasons, unsigned long long, 0)
