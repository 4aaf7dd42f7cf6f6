/*
 * emulate.h - the emulator front end (docs/design.md "Front-ends" 2; Maya §4, Phantora §4).
 *
 * `orrery emulate -- CMD` runs an unmodified CUDA or PyTorch program with the emulation libraries
 * of src/emu/shim preloaded; each process writes a trace of its CUDA/NCCL calls and of the host CPU
 * time between them (docs/emulate.md). The collator reads the traces of one run and joins them
 * into one workload (the IR of workload.h): one rank per process that used a GPU, its calls as
 * ops in program order, NCCL communicators as groups, collectives matched across ranks by
 * communicator and sequence, send/recv by peer and order, ncclGroupStart/End as posted-together
 * batches. Ranks whose op sequences are identical are simulated once (Maya §4.2).
 *
 * Kernel durations come, in this order, from: the operator tag the program gave
 * (orrery_emu_set_op: class, FLOPs, bytes, divided over the operator's kernels, then the
 * estimators); cuBLAS GEMM arguments (m, n, k, batch, dtype); the kernel database (SQLite, measured
 * times by GPU, kernel name and launch geometry); and last the launch geometry alone (a memory-
 * bound kernel moving 8 bytes per thread), which the info counts so the report can say how many
 * kernels were timed that way.
 */
#ifndef ORRERY_EMULATE_H
#define ORRERY_EMULATE_H

#include <stdint.h>
#include "orrery/core.h"
#include "orrery/hw.h"
#include "orrery/workload.h"

/* The memory the collator may use for one run's traces: 2 GB, estimated before each trace's records
 * are made (its text, and a record and an op for each of its lines) and as names are read; the
 * run is refused past it, naming the trace (docs/spec.md "Limits"). ORRERY_EMU_MAX_BYTES raises it. */
#define ORR_EMU_MAX_BYTES 2000000000ull

typedef struct orr_emu_opts {
    const char *trace_dir;   /* the run's traces (trace-<pid>.txt) */
    uint32_t gpus;           /* expected processes (0: as many as were traced) */
    uint32_t gpus_per_node;  /* 0: the cluster's */
    const char *kernel_db;   /* SQLite kernel database (NULL: none) */
    int dedup;               /* simulate identical ranks once */
    double tokens;           /* tokens per iteration, whole job (0: unknown; tokens/s is then n/a) */
    int no_host_time;        /* drop the host CPU time measured between calls (only the launch cost
                              * per device op remains): the device-bound time of the program */
    struct orr_progress *progress; /* a progress line while simulating (progress.h); NULL: none */
    int live;                /* --live's timeline: every iteration kept (not only the last), no
                              * deduplication, and each event record the program made lowered with
                              * seq = its number on its device (from 1) and dims[0] = device + 1 */
    const char *host_dir;    /* traces of a second run of the same program without the PyTorch hook
                              * (NULL: none): each process's host time is taken from its run there
                              * when the two made the same calls (docs/emulate.md "Host time") */
} orr_emu_opts;

typedef struct orr_emu_api {
    char name[64];
    uint64_t calls;
    int unimplemented;       /* a stub of the emulator: a run that called it is refused */
} orr_emu_api;

typedef struct orr_emu_info {
    uint32_t processes;      /* GPUs the traced processes used (= world size): one per process, or each
                              * device of a process that drove several */
    uint32_t host_processes; /* traced processes that used a GPU */
    uint32_t ignored;        /* traced processes that did not (launchers) */
    uint32_t simulated;      /* ranks simulated after deduplication */
    uint32_t comms;          /* NCCL communicators */
    /* kernels: all; tagged by an operator hook; cuBLAS(Lt) GEMMs; library ops of known shape (cuDNN);
     * timed from the kernel database; from launch geometry alone */
    uint64_t kernels, kernels_tagged, kernels_gemm, kernels_lib, kernels_db, kernels_geometry;
    uint64_t collectives, p2p, copies, allocs;
    uint64_t p2p_bytes;      /* bytes sent to other ranks by send/recv, over all processes (a send to
                              * oneself is a device copy, not counted) */
    uint64_t alltoall_bytes; /* bytes of ncclAlltoAll, NCCL's per-rank convention, over all processes */
    int oom;                 /* some allocation did not fit the capacity */
    uint32_t oom_rank;
    uint64_t oom_bytes, oom_used_bytes;
    orr_emu_api *apis;       /* every entry point called, over all processes, by name */
    size_t napis;
    uint32_t iterations;     /* iteration marks per process ("I", the PyTorch hook's optimizer
                              * steps); with 2 or more only the last iteration is simulated */
    uint32_t host_rerun;     /* with opts.host_dir: processes whose host time came from that run */
    uint32_t host_rerun_differ; /* and those whose calls differed there (the hooked run's host time kept) */
    char host_rerun_error[200]; /* why that run's traces could not be read (then every process is in
                                 * host_rerun_differ); empty when they were */
    long *rank_env;          /* with opts.live: per workload rank, its process's RANK (-1: none) */
    long *rank_pid;          /* and its process id */
} orr_emu_info;

/* Reads the traces of o->trace_dir and returns the collated workload (durations of kernels that
 * had a tag, a GEMM shape or a database entry are set or left to the estimators, see above).
 * Errors name the trace file and line. */
orr_workload *orr_emu_collate(const orr_emu_opts *o, const orr_gpu *g, const orr_cluster *c, orr_emu_info *info,
                              orr_err *err);
void orr_emu_info_free(orr_emu_info *info);

/* Running a program under emulation: the shims of lib_dir preloaded, traces into trace_dir (which
 * must exist), the device memory the program sees (bytes) and the GPUs per process's node it may
 * pick from (cudaGetDeviceCount). *status gets the program's exit status (128+signal if killed, -1
 * if stopped at o->limit_s). Returns -1 only when the program could not be started. */
enum {
    ORR_EMU_EMULATE = 0,          /* the emulation libraries (no GPU) */
    ORR_EMU_PROFILE = 1,          /* the profiler in front of the real CUDA runtime (a GPU) */
    ORR_EMU_PROFILE_EMULATED = 2  /* the profiler in front of the emulation libraries: checks the
                                   * profiler without a GPU (the times it reads are zero) */
};
/* The routing model of histograms a program reads back (emulate's --moe-imbalance, src/emu/shim/route.c)
 * in the form the libraries take (ORRERY_EMU_ROUTING): "balanced" (also for an empty value), the
 * factor, or a CSV file's `tokens` column as comma-separated weights, one per expert in file order.
 * Errors name the flag and the file. */
int orr_emu_routing(const char *value, orr_buf *out, orr_err *err);

typedef struct orr_emu_run_opts {
    const char *lib_dir;   /* NULL: the build's emu/ directory */
    const char *routing;   /* orr_emu_routing's form; NULL: balanced */
    const char *trace_dir;
    uint64_t mem_bytes;    /* what the program may allocate */
    uint64_t total_bytes;  /* its device's total memory (totalGlobalMem); 0: the GPU's device_bytes, else
                            * its hbm_bytes (--mem-capacity gives it) */
    uint32_t devices;
    const orr_gpu *gpu;   /* what the program sees as its device (name, SMs, L2, compute capability) */
    int profile;          /* ORR_EMU_PROFILE_*: run on the real libraries with the kernel profiler */
    int stdout_to_stderr; /* the program's standard output goes to stderr (keeps ours clean for JSON) */
    int stdout_to_null;   /* the program's standard output is discarded (--live's first run) */
    int quiet;            /* its standard output and error are discarded (the host-time run) */
    int no_torch_hook;    /* the PyTorch hook is not installed (ORRERY_EMU_TORCH_HOOK=0): the host-time run */
    double limit_s;       /* > 0: past this many seconds the program (its own process group) is stopped,
                           * TERM then KILL 5 s later, and *status is -1 */
    const char *live_times; /* --live's second run: the simulated time of every event record
                             * (orr_emu_live_write's file, ORRERY_EMU_LIVE); "": --live's first
                             * run (no warning that its event timings are host time); NULL: none */
} orr_emu_run_opts;
int orr_emu_run(char *const argv[], const orr_emu_run_opts *o, int *status, orr_err *err);
/* 1 when a trace of dir has operator tags ("T" records: the PyTorch hook ran in it), else 0. */
int orr_emu_traces_tagged(const char *dir);
const char *orr_emu_default_lib_dir(void);

/* --live (docs/emulate.md "Live time"): simulates the whole run of eo->trace_dir (every iteration,
 * every process: eo->live is set here) and writes to path, per process (RANK) and device, the
 * simulated time of each event record the program made, in record order:
 *   orrery-live 1
 *   N <rank> <device> <records>
 *   E <rank> <device> <record number from 1> <simulated ps> <the emulator's stream index>
 * Refuses a run whose processes cannot be told apart in a second run (several without distinct
 * RANK). *records gets the number of records timed. */
int orr_emu_live_write(const orr_emu_opts *eo, const orr_gpu *g, const orr_cluster *c, int64_t launch_ps,
                       uint64_t device_bytes, const char *path, uint64_t *records, orr_err *err);
/* After the second run: its traces (trace_dir) must hold the same event records per process and
 * device as the first run's file; otherwise a message naming --live (the program is not
 * deterministic in its records). */
int orr_emu_live_check(const orr_emu_opts *eo, const orr_gpu *g, const orr_cluster *c, const char *path,
                       orr_err *err);

/* The entry points the emulator does not implement that the run's processes called (the U records
 * of trace_dir), comma-separated into *names, each once; returns how many (0 when none or the
 * directory cannot be read). For the message when a program fails under emulation. */
size_t orr_emu_unimplemented_calls(const char *trace_dir, orr_buf *names);

/* After a profiled run: reads the prof-<pid>.txt files of trace_dir and stores, per kernel name and
 * launch geometry, the median measured time into the kernel database under the GPU's name
 * (source "profile"); launches with no time (under the emulator) are counted, not stored. */
typedef struct orr_emu_profile_stats {
    uint64_t launches;     /* timed kernel launches read */
    uint64_t kernels;      /* distinct (name, grid, block) */
    uint64_t stored;       /* of which stored (median time > 0) */
} orr_emu_profile_stats;
int orr_emu_profile_store(const char *trace_dir, const char *gpu, const char *db, orr_emu_profile_stats *st,
                          orr_err *err);

/* Kernel database (SQLite): measured kernel times by GPU, kernel name and launch geometry.
 * Creates the table if the file is new. */
int orr_kdb_put(const char *path, const char *gpu, const char *kernel, const unsigned grid[3], const unsigned block[3],
                int64_t dur_ps, const char *source, orr_err *err);

#endif
