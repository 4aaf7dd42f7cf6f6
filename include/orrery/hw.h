/*
 * hw.h - hardware descriptions: GPUs, nodes and clusters, and their catalogs (data/gpus.yaml,
 * data/clusters.yaml, compiled into the binary). Every calibration constant is documented with its
 * source in the data file that sets it.
 */
#ifndef ORRERY_HW_H
#define ORRERY_HW_H

#include <stdint.h>
#include "orrery/core.h"
#include "orrery/workload.h"

typedef struct orr_gpu {
    char name[48];
    uint32_t sms;
    double compute_capability;            /* major.minor as cudaGetDeviceProperties reports it (9.0) */
    uint64_t hbm_bytes;
    uint64_t device_bytes;                /* device memory as the driver reports it (totalGlobalMem,
                                             nvidia-smi's total; 0: unmeasured, take hbm_bytes) */
    double hbm_Bps;                       /* HBM bandwidth, bytes/s */
    uint64_t l2_bytes;
    double nvlink_Bps;                    /* NVLink bandwidth per GPU per direction, bytes/s */
    double peak_flops[ORR_DTYPE_COUNT];   /* dense tensor-core peak, FLOP/s (0: unsupported); [ORR_NVFP4]
                                             is fp4_tflops, [ORR_MXFP8] derived (orr_gpu_fill_peaks) */
    double tdp_w;
    /* Calibration of the roofline (fractions of peak, per op class). */
    double gemm_eff;                      /* large, well-shaped GEMMs: achieved / peak */
    double attn_fwd_eff;                  /* flash-attention forward: achieved / peak */
    double attn_bwd_eff;                  /* flash-attention backward */
    double attn_cudnn_fwd_eff;            /* cuDNN fused attention (--attention cudnn) forward, backward:
                                             achieved / peak (0: not measured, so refused) */
    double attn_cudnn_bwd_eff;
    double mem_eff;                       /* streaming memory-bound kernels: achieved / HBM bw */
    uint32_t gemm_tile_m, gemm_tile_n;    /* CTA tile of the typical cuBLAS kernel (wave quantisation) */
    double gemm_k_overhead;               /* per-tile fixed cost (prologue, epilogue) in K elements:
                                             a GEMM's efficiency scales by k / (k + gemm_k_overhead) */
    int64_t kernel_min_ps;                /* floor of any kernel's duration */
    double overlap_slowdown;              /* compute slowdown factor - 1 while communication runs */
    double nccl_gemm_slowdown;            /* a GEMM's slowdown factor - 1 while an NCCL collective runs
                                             (its channels hold SMs the GEMM's tiles wait for) */
    double deepep_gemm_slowdown;          /* the same beside DeepEP's dispatch or combine, which holds 20
                                             SMs (0: not measured, nccl_gemm_slowdown applies) */
    /* An fp8 GEMM's rate by its scaling, relative to per-tensor scaling's (0: not measured on this GPU,
     * so --fp8-recipe refuses it): rowwise (per row of A, per column of B), blockwise with 1x128
     * blocks of A and 128x128 of B (DeepSeek-V3's and Transformer Engine's forward and data gradient),
     * and blockwise with 1x128 blocks of both (their weight gradient). */
    double fp8_rowwise_rate, fp8_block_rate, fp8_block_1d_rate;
    uint64_t runtime_reserved_bytes;      /* device memory outside the framework's allocator: CUDA
                                             context and modules, NCCL's own buffers */
} orr_gpu;

/* Set the peaks derived from others ([ORR_MXFP8] = fp8 peak where the GPU runs MX formats: compute
 * capability 10.0+ or an FP4 peak; else 0). The catalog readers call it; call it after changing a
 * GPU's fp8 peak, compute capability or fp4 peak by hand. */
void orr_gpu_fill_peaks(orr_gpu *g);

typedef struct orr_cluster {
    char name[48];
    uint32_t gpus_per_node;
    double nic_Bps;            /* bandwidth of one scale-out NIC per direction, bytes/s */
    uint32_t nics_per_node;    /* scale-out NICs per node (0: one per GPU); a GPU's share of the
                                  node's NICs is orr_cluster_gpu_nic_Bps */
    char topology[32];         /* e.g. "rail-fat-tree" */
    /* Calibration of the communication model (NCCL), documented in data/clusters.yaml. */
    double nvlink_eff;         /* achieved bus bandwidth / NVLink bandwidth for large messages */
    double net_eff;            /* achieved bus bandwidth / NIC bandwidth for large messages */
    int64_t nvlink_lat_ps;     /* per-step latency of an intra-node ring/tree step */
    int64_t net_lat_ps;        /* per-step latency of an inter-node step, Simple protocol */
    int64_t net_plugin_lat_ps; /* latency the network plugin adds to every inter-node step, any
                                  protocol (NCCL's latencyInter; aws-ofi-nccl reports 75 us on EFA) */
    int64_t coll_base_ps;      /* fixed launch+setup cost of one collective */
    int nvls;                  /* 1: the NVLink switch reduces in the fabric (NVSwitch 3+ with
                                  NVLink SHARP), so NCCL has its NVLS / NVLS-tree all-reduce */
    int64_t nvls_lat_ps;       /* fixed latency of an NVLS all-reduce over coll_base */
    int64_t p2p_base_ps;       /* fixed cost of one p2p transfer */
} orr_cluster;

/* Catalog lookups (case-insensitive, also accept aliases listed in the data files). Return -1
 * with an error naming the known entries if absent. */
int orr_catalog_gpu(const char *name, orr_gpu *out, orr_err *err);
int orr_catalog_cluster(const char *name, orr_cluster *out, orr_err *err);
/* Number of entries and their names, for `orrery list`. */
size_t orr_catalog_gpu_count(void);
const orr_gpu *orr_catalog_gpu_at(size_t i);
size_t orr_catalog_cluster_count(void);
const orr_cluster *orr_catalog_cluster_at(size_t i);
/* For `orrery list` and the spec's defaults: the aliases of entry i joined by ", " ("" if none;
 * NULL if i is out of range), the default node type of a catalog GPU (data/gpus.yaml `cluster:`)
 * and the GPU a node type ships with (data/clusters.yaml `gpu:`); NULL for names not in the
 * catalog. Names are matched as in the lookups above. */
const char *orr_catalog_gpu_aliases(size_t i);
const char *orr_catalog_cluster_aliases(size_t i);
const char *orr_catalog_gpu_default_cluster(const char *gpu);
const char *orr_catalog_cluster_default_gpu(const char *cluster);
/* The catalog's default GPU (data/gpus.yaml `default: true`), for `orrery emulate` without --gpu. */
const char *orr_catalog_default_gpu(void);

/*
 * A calibration profile (docs/calibrate.md): what `orrery calibrate` measured about one GPU and one
 * node type, as a few fields (the keys of data/gpus.yaml and data/clusters.yaml, in their units)
 * over the catalog entries named by `base:`. predict and search take it with --profile FILE or the
 * spec's `profile: FILE`; orr_spec_resolve_hardware applies it to the job's GPU and cluster, the one
 * place where it changes anything. A profile holds a `gpu:` part, a `cluster:` part or both.
 */
#define ORR_PROFILE_VERSION 1
typedef struct orr_hw_profile {
    char path[256];               /* where it was read, for messages ("": no profile) */
    int has_gpu, has_cluster;     /* the parts present */
    orr_gpu gpu;                  /* the catalog entry of gpu.base with the profile's fields over it */
    orr_cluster cluster;          /* the same for cluster.base */
    uint64_t gpu_set, cluster_set;/* bit i: key i of the GPU / cluster field table is set */
} orr_hw_profile;

/* Reads a profile file (or YAML text[0..len), name standing for the file in messages): unknown
 * keys, a base not in the catalog, a missing version or bad values are errors naming the line. */
int orr_hw_profile_load(orr_hw_profile *p, const char *path, orr_err *err);
int orr_hw_profile_parse(orr_hw_profile *p, const char *name, const char *text, size_t len, orr_err *err);
/* Starts a profile over catalog entries (gpu and/or cluster may be NULL: that part absent); fields
 * are then changed in p->gpu / p->cluster and marked with orr_hw_profile_mark. */
int orr_hw_profile_init(orr_hw_profile *p, const char *gpu, const char *cluster, orr_err *err);
/* Marks key (a key of the GPU table when is_gpu, else of the cluster table) as set; -1 if unknown. */
int orr_hw_profile_mark(orr_hw_profile *p, int is_gpu, const char *key);
/* Marks and takes every field of g (c) that differs from the catalog entry p's GPU (cluster) part
 * is based on: the hardware as it was measured, overrides and flags included. */
void orr_hw_profile_take_changes(orr_hw_profile *p, const orr_gpu *g, const orr_cluster *c);
/* Applies p to a job's GPU and cluster: each part to the job whose GPU (cluster) it is based on, and
 * an error if a part does not match the job's hardware, or if a field it sets was also changed from
 * the catalog by the spec or a flag. A profile with no path and no parts does nothing. */
int orr_hw_profile_apply(const orr_hw_profile *p, orr_gpu *g, orr_cluster *c, orr_err *err);
/* The profile as YAML (version, then each part's base and its set keys in the file's units). */
void orr_hw_profile_yaml(const orr_hw_profile *p, orr_buf *out);

/* Scale-out bandwidth of one GPU per direction, bytes/s: its NIC's, or with nics_per_node NICs
 * shared by the node's GPUs, an even share of them (the collectives and their flows send from every
 * GPU of a node at once, so a GPU cannot borrow an idle neighbour's share). */
static inline double orr_cluster_gpu_nic_Bps(const orr_cluster *c)
{
    if (!c->nics_per_node || !c->gpus_per_node || c->nics_per_node >= c->gpus_per_node) return c->nic_Bps;
    return c->nic_Bps * c->nics_per_node / c->gpus_per_node;
}

/* Node index of a global rank. */
static inline uint32_t orr_node_of(const orr_cluster *c, uint32_t gpu) { return gpu / c->gpus_per_node; }

#endif
