/*
 * emu.h - the core of the CUDA/NCCL emulation libraries (liborrery_emu.so), shared by the thin
 * stand-ins for libcudart, libcuda, libcublas, libnccl and NVML that `orrery emulate` preloads.
 *
 * Nothing here runs on a GPU. The core keeps the state a program can observe (device memory as
 * fake addresses with a capacity, streams, events, kernels registered by the fat binary, the last
 * error) and writes every call that matters for timing to the process's trace, one line per call
 * (format: docs/emulate.md). Host CPU time between calls is measured with the thread's CPU clock,
 * so an emulation that shares a core with other ranks still measures each rank's own host work.
 *
 * The shim libraries are plain C with their own declarations of the CUDA/NCCL types they need
 * (ABI facts: enum values, struct layouts); they include no NVIDIA header, so they build on a
 * machine without the CUDA toolkit.
 */
#ifndef ORRERY_EMU_SHIM_H
#define ORRERY_EMU_SHIM_H

#include <stddef.h>
#include <stdint.h>

#define EMU_EXPORT __attribute__((visibility("default")))

/* Streams and events are handles the program holds; their values are addresses inside two
 * static tables of the core, so any shim can map a handle back to its index. Index 0 is the
 * default (legacy) stream; handles 0, 1 (cudaStreamLegacy) and 2 (cudaStreamPerThread) map to it. */
#define EMU_MAX_STREAMS 255
#define EMU_MAX_EVENTS 65536
/* Devices one process may drive (cudaSetDevice): each is its own rank in the collated job. */
#define EMU_MAX_DEVICES 64

/* Every exported entry point starts with EMU_ENTER("name") and ends with emu_leave(): the core
 * closes the host interval since the previous call (a trace line "H ns") and counts the call. */
void emu_enter(const char *api);
void emu_leave(void);
#define EMU_ENTER(api) emu_enter(api)

/* Writes one trace line (printf format; the newline is added). */
void emu_rec(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The device of the records the calling thread writes next, when the record does not say it by its
 * stream (a free, an event sync, an NCCL communicator's work); -1 when done. A device record of
 * another device than the last one is preceded by "D dev" in the trace. */
void emu_rec_device(int dev);
/* Prints "orrery emulate: <msg>" to stderr and ends the process with status 3: for calls the
 * emulator does not implement and states it cannot represent, which must never pass silently. */
_Noreturn void emu_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An entry point the emulator does not implement (the generated stubs of every shim, see
 * src/emu/shim/syms): writes "U name" to the trace, warns once on stderr and returns err, the
 * library's own "not supported" status. The collator refuses a trace with a U line, so a run
 * that needed one never yields a prediction. */
int emu_unimplemented(const char *api, int err);
/* Prints a warning once per key. */
void emu_warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Device memory. emu_malloc returns 0 and a fake address, or -1 when the allocation would exceed
 * the capacity (the trace gets an "OOM" line). emu_free returns -1 for an address it never gave. */
int emu_malloc(uint64_t bytes, uintptr_t *addr);
int emu_free(uintptr_t addr);
int emu_is_device_ptr(uintptr_t addr);
/* 1 if [addr, addr + bytes) lies in one live allocation (not freed, not host memory). */
int emu_is_live(uintptr_t addr, size_t bytes);
/* Small allocations (up to EMU_BACKED_MAX_BYTES: PyTorch's small-pool segments, where its
 * metadata tensors live) are backed by host memory, so what a program copies in reads back and
 * framework sanity checks (DDP's parameter-count agreement) pass; bigger ones read as zeros.
 * Returns the host address of [addr, addr + bytes) when that range is backed, else NULL. */
#define EMU_BACKED_MAX_BYTES (2u << 20)
void *emu_backed(uintptr_t addr, size_t bytes);
uint64_t emu_mem_capacity(void);
/* The device's total memory as the driver reports it (totalGlobalMem, cudaMemGetInfo's total,
 * NVML's total): the catalog's device_mib, or --mem-capacity. At least the capacity. */
uint64_t emu_mem_total(void);
uint64_t emu_mem_used(void); /* on the current device */
uint64_t emu_mem_used_on(int dev);
/* The device of the allocation holding addr (live or freed), -1: not device memory. */
int emu_ptr_device(uintptr_t addr);

/* Stream and event handles. Index -1: not a handle of ours. */
void *emu_stream_create(int priority);
int emu_stream_index(const void *handle);
int emu_stream_priority(int index);
/* The device stream index was created on (the default stream, 0: the current device). */
int emu_stream_device(int index);
void emu_stream_destroy(const void *handle);
void *emu_event_create(void);
int emu_event_index(const void *handle);
void emu_event_destroy(const void *handle);
/* cudaEventRecord: the event takes the process's host time so far (the sum of the trace's H
 * records); cudaEventElapsedTime gives the difference of two events' times in ms (-1: an event
 * never recorded). Device time is known only in the prediction: this is the host's share, a lower
 * bound of what a GPU would measure. */
void emu_event_stamp(int index, int dev);
/* The device of the event's last record (emu_event_stamp), -1: never recorded. */
int emu_event_device(int index);
double emu_event_elapsed_ms(int a, int b);
/* --live's second run (ORRERY_EMU_LIVE): 1, and the simulated ms between the two events' last
 * records (NaN when one has no simulated time). */
int emu_live(void);
int emu_live_first(void); /* --live's first run (ORRERY_EMU_LIVE empty): no warning on host-time timings */
double emu_event_live_ms(int a, int b);

/* CUDA graphs made by stream capture (docs/emulate.md, "CUDA graphs"). While a stream captures,
 * the records of device work on it (and on the streams joined to the capture by waiting on an
 * event recorded in it) go into the graph, not the trace; a launch writes them to the trace with
 * the origin stream replaced by the launching one. A graph holds at most EMU_GRAPH_MAX_RECORDS
 * records (a capture beyond that ends the program with a message naming the limit); each record
 * is one trace line, so a graph takes at most about 100 bytes a record of host memory. */
#define EMU_GRAPH_MAX_RECORDS 1000000
typedef struct emu_graph emu_graph;
/* Starts capturing on stream (not the legacy default stream) into a new graph, or into `into`
 * when given. Returns -1 when the stream already captures or cannot capture. */
int emu_capture_begin(int stream, emu_graph *into);
/* Ends the capture begun on stream; returns its graph (the caller holds its one reference), or
 * NULL when the stream began no capture. */
emu_graph *emu_capture_end(int stream);
/* The graph the stream captures into (and the capture's id), or NULL. */
emu_graph *emu_capture_graph(int stream, unsigned long long *id);
emu_graph *emu_graph_new(void);
void emu_graph_ref(emu_graph *g);
void emu_graph_unref(emu_graph *g);
size_t emu_graph_nodes(const emu_graph *g);
/* The graph's record after prev (the first for NULL), not NUL-terminated (*len bytes); NULL after
 * the last. */
const char *emu_graph_next(const emu_graph *g, const char *prev, size_t *len);
/* Writes the graph's records to the trace for a launch on stream; -1 (nothing written) while the
 * graph is still being captured. */
int emu_graph_launch(const emu_graph *g, int stream);

/* Kernels registered from fat binaries: host stub address -> name. */
void emu_kernel_register(const void *host_fun, const char *name);
/* Returns the kernel's registration (opaque, stable), or NULL. */
const void *emu_kernel_lookup(const void *host_fun);
const char *emu_kernel_name(const void *kernel);
/* Records a kernel launch on a stream (the name is interned into the trace's name table). */
void emu_launch(const char *name, const unsigned grid[3], const unsigned block[3], size_t shmem, int stream);
/* The values a launched kernel leaves that a program reads back to decide its control flow
 * (route.c): a histogram kernel (bincount, histc) gets the routing model's counts. args: the
 * kernel's arguments as cudaLaunchKernel gets them (may be NULL). */
void emu_kernel_values(const char *name, void **args);
/* Records a GEMM of cuBLAS or cuBLASLt ("G" line). dtype: cudaDataType_t of A; tf32: FP32 data
 * computed in TF32; ta, tb: cublasOperation_t (0 N, 1 T, 2 C). Returns 0, or -1 for a data type
 * the emulator cannot size (the caller returns its library's status). */
int emu_gemm(int stream, long long m, long long n, long long k, long long batch, int dtype, int tf32, int ta, int tb);
/* Records an operation a library runs whose shape and cost it knows (a cuDNN convolution, attention
 * or batch norm): "L stream name-id class dtype d0 d1 d2 d3 flops bytes tag". cls as
 * orrery_emu_set_op's; dtype a trace dtype (fp32, tf32, bf16, fp16, fp8); dims as the workload op's
 * (GEMM: m, n, k, batch; attention: batch x heads, query length, key length, head dim). The
 * collator prices it with its class's estimator, as a cuBLAS GEMM; tag: the operator tag current
 * when it ran, whose FLOPs it then carries (counted once). */
void emu_lib_op(int stream, const char *name, const char *cls, const char *dtype, const uint32_t dims[4], double flops,
                double bytes);
/* The form of a kernel or operator name in traces and profiles: emu_trace_name (tracename.h, shared
 * with the profiler, prof.c). */
#include "tracename.h"
/* Interns a name into the trace (an "N id name" line the first time); returns its id. */
uint32_t emu_name_id(const char *name);

/* The emulated GPU, from the environment `orrery emulate` sets (ORRERY_EMU_GPU, _SMS, _CC,
 * _L2_BYTES; an H100 SXM when unset). */
typedef struct emu_gpu_info {
    char name[256];
    int sms;
    int cc_major, cc_minor;
    uint64_t l2_bytes;
    double tdp_w;   /* board power (the catalog's tdp_w): NVML's power limit */
} emu_gpu_info;
const emu_gpu_info *emu_gpu(void);
/* A device attribute (the CUDA runtime's cudaDeviceAttr and the driver's CUdevice_attribute share
 * their numbering). Returns 0, or -1 for an attribute the emulator does not know. */
int emu_device_attribute(int attr, int *value);
/* The UUID of emulated device dev, the same from the runtime, the driver and NVML. */
void emu_device_uuid(int dev, unsigned char uuid[16]);

/* The calling thread's current device (cudaSetDevice; a thread that set none: the one set last in the
 * process). A process may drive several devices: each becomes its own rank when collated. */
int emu_device(void);
void emu_set_device(int dev);
int emu_device_count(void);

/* The name of the process group whose collective the calling thread is issuing (the PyTorch
 * hook sets it from the ProcessGroup's description, DeviceMesh's dimension name: "tp", "dp", ...;
 * orrery_emu_comm_label), or NULL. The NCCL stand-in records it for the communicator ("CN"). */
const char *emu_comm_label(void);

/* The last-error state of the runtime. */
int emu_last_error(int clear);
int emu_set_error(int err);

/* The trace directory shared by every process of the run (NCCL split rendezvous files). */
const char *emu_dir(void);

#endif
