/*
 * workload.h - the IR: what every front end lowers into and the executor runs (docs/design.md).
 *
 * A workload is a set of ranks. Each rank is one GPU with one host thread that issues operations in
 * program order, and device streams that run the device operations in issue order. The operations
 * are the CUDA ones: kernels, copies, allocations, events and waits, synchronisations, NCCL
 * collectives (group + sequence number) and point-to-point send/recv, and host work.
 *
 * Symmetry: a simulated rank may stand for several real GPUs that do identical work (e.g. all the DP
 * replicas and TP peers of one pipeline stage). `weight` says how many; collectives of a group rendez-
 * vous only among the simulated ranks that are members of it (the others are, by construction, at
 * the same point at the same time). Costs always use the group's real size and placement.
 * A front end that collapses ranks can also say which real GPUs a simulated rank stands for, as
 * the images of the job's symmetry (orr_sym below): backends that must see every GPU's traffic
 * (--net flow) replay each collective and send on every image instead of simulating every rank.
 */
#ifndef ORRERY_WORKLOAD_H
#define ORRERY_WORKLOAD_H

#include <stdint.h>
#include <stddef.h>
#include "orrery/core.h"

typedef enum orr_op_kind {
    ORR_OP_KERNEL,       /* compute kernel on a stream: cls, flops, bytes, shape */
    ORR_OP_MEMCPY,       /* copy on a stream: bytes */
    ORR_OP_MEMSET,       /* memset on a stream: bytes */
    ORR_OP_ALLOC,        /* host-side allocation: bytes, mem_cat, buf id (a) */
    ORR_OP_FREE,         /* host-side free of buf id (a) */
    ORR_OP_EVENT_RECORD, /* record event a on stream */
    ORR_OP_STREAM_WAIT,  /* stream waits for the latest record (at issue time) of event a */
    ORR_OP_EVENT_SYNC,   /* host blocks until the latest record of event a has completed */
    ORR_OP_STREAM_SYNC,  /* host blocks until stream has run everything issued to it */
    ORR_OP_DEVICE_SYNC,  /* host blocks until every stream of the rank is drained */
    ORR_OP_COLL,         /* collective on a stream: coll kind, group a, seq, bytes */
    ORR_OP_SEND,         /* p2p send to global rank a, tag seq, bytes */
    ORR_OP_RECV,         /* p2p recv from global rank a, tag seq, bytes */
    ORR_OP_HOST,         /* host CPU work of dur_ps */
    ORR_OP_KIND_COUNT
} orr_op_kind;

/* Compute op classes: the cost model is chosen per class. */
typedef enum orr_op_class {
    ORR_CLS_GEMM,
    ORR_CLS_ATTENTION_FWD,
    ORR_CLS_ATTENTION_BWD,
    ORR_CLS_ELEMENTWISE,
    ORR_CLS_REDUCTION,
    ORR_CLS_NORM,
    ORR_CLS_OPTIMIZER,
    ORR_CLS_OTHER,
    ORR_CLS_COUNT
} orr_op_class;

typedef enum orr_coll_kind {
    ORR_COLL_ALLREDUCE,
    ORR_COLL_ALLGATHER,
    ORR_COLL_REDUCESCATTER,
    ORR_COLL_BROADCAST,
    ORR_COLL_REDUCE,
    ORR_COLL_ALLTOALL,
    ORR_COLL_COUNT
} orr_coll_kind;

/* Compute dtypes of kernels. ORR_FP8 is per-tensor-scaled FP8 (Hopper's Transformer Engine / torchao
 * float8); ORR_MXFP8 block-scaled FP8 (OCP MX: E4M3/E5M2 elements, one E8M0 scale per 32), run by
 * Blackwell's tensor cores at the FP8 rate; ORR_NVFP4 NVIDIA's FP4 (E2M1 elements, one E4M3 scale per
 * 16 and an FP32 tensor scale) at the FP4 rate. docs/models.md, "Blackwell and the narrow formats". */
typedef enum orr_dtype { ORR_FP32, ORR_TF32, ORR_BF16, ORR_FP16, ORR_FP8, ORR_MXFP8, ORR_NVFP4, ORR_DTYPE_COUNT } orr_dtype;

/* A training precision narrower than 16 bits: only the decoder blocks' linear layers run in it; the
 * LM head and attention stay in bf16, and the linear inputs are cast (quantized) before each GEMM. */
static inline int orr_dtype_is_narrow(orr_dtype d) { return d == ORR_FP8 || d == ORR_MXFP8 || d == ORR_NVFP4; }

/* What a communication op is for, so exposed communication can be reported per parallelism. */
typedef enum orr_comm_role {
    ORR_ROLE_NONE,
    ORR_ROLE_TP,
    ORR_ROLE_PP,
    ORR_ROLE_DP,
    ORR_ROLE_EMB, /* embedding-gradient all-reduce between first and last pipeline stage */
    ORR_ROLE_CP,
    ORR_ROLE_EP,
    ORR_ROLE_OTHER,
    ORR_ROLE_COUNT
} orr_comm_role;

/* Training phase of an op (for the breakdown and the trace). */
typedef enum orr_phase {
    ORR_PHASE_FWD,
    ORR_PHASE_BWD,
    ORR_PHASE_RECOMPUTE,
    ORR_PHASE_OPTIM,
    ORR_PHASE_OTHER,
    ORR_PHASE_COUNT
} orr_phase;

/* Memory categories of allocations (the memory model of issue 3 extends their use). */
typedef enum orr_mem_cat {
    ORR_MEM_PARAM,
    ORR_MEM_GRAD,
    ORR_MEM_OPTIM,
    ORR_MEM_ACT,
    ORR_MEM_TEMP,
    ORR_MEM_COMM,
    ORR_MEM_OTHER,
    ORR_MEM_CAT_COUNT
} orr_mem_cat;

/* op flags */
#define ORR_OPF_BATCH_NEXT 0x01u /* p2p: the next op is in the same NCCL group (posted together) */
#define ORR_OPF_REMOTE 0x02u     /* STREAM_WAIT, EVENT_SYNC: on an event of another rank (a process that
                                  * drove several devices, emulate): dims[0] = that rank's global rank,
                                  * dims[1] = the records of the event there to wait for, a = its event
                                  * id there */
#define ORR_OPF_USERBUFFERS 0x04u /* COLL: Transformer Engine's userbuffers (tp_comm_overlap), not NCCL:
                                   * copy engines or a few SMs the GEMM beside it is sized around, so it
                                   * slows kernels by overlap_slowdown, not nccl_gemm_slowdown */
/* KERNEL (GEMM in ORR_FP8): how its operands are scaled, (flags & ORR_OPF_FP8_SCALING) >>
 * ORR_OPF_FP8_SCALING_SHIFT, an orr_fp8_scaling; the rate is the GPU's fp8 rate times its
 * fp8_{rowwise,block,block_1d}_rate (estimate.h) */
#define ORR_OPF_FP8_SCALING 0x18u
#define ORR_OPF_FP8_SCALING_SHIFT 3
/* KERNEL (ATTENTION_FWD/BWD): cuDNN's fused attention (--attention cudnn), at the GPU's
 * attn_cudnn_{fwd,bwd}_eff instead of FlashAttention-2's attn_{fwd,bwd}_eff */
#define ORR_OPF_ATTN_CUDNN 0x20u
/* COLL: DeepEP's dispatch or combine (--moe-dispatcher deepep): a kernel that holds its SMs while it
 * runs (Megatron's moe_flex_dispatcher_num_sms, 20 by default), so a GEMM beside it slows by the
 * GPU's deepep_gemm_slowdown */
#define ORR_OPF_DEEPEP 0x40u
typedef enum orr_fp8_scaling {
    ORR_FP8_SCALE_TENSOR,   /* one scale per tensor */
    ORR_FP8_SCALE_ROW,      /* one per row of A and per column of B */
    ORR_FP8_SCALE_BLOCK,    /* 1x128 blocks of A, 128x128 of B (a weight) */
    ORR_FP8_SCALE_BLOCK_1D, /* 1x128 blocks of both (a weight gradient: two activations) */
} orr_fp8_scaling;

/*
 * One operation. 64 bytes; a rank's ops live in one array in host program order.
 * Field use by kind:
 *   KERNEL: cls, dtype, flops, bytes (read+written), dims (GEMM: m,n,k,batch; attention:
 *           batch*heads, q len, kv len, head dim), dur_ps filled by the estimator.
 *   MEMCPY/MEMSET: bytes; dur_ps filled by the estimator.
 *   COLL: coll, dtype, a = group id, seq = sequence number within the group, bytes = the
 *         per-rank buffer in NCCL's convention (all-reduce: the buffer; all-gather: the output;
 *         reduce-scatter: the input).
 *   SEND/RECV: a = peer global rank, seq = tag, bytes.
 *   EVENT_RECORD/STREAM_WAIT/EVENT_SYNC: a = event id (per rank).
 *   ALLOC/FREE: a = buffer id (per rank), bytes, mem_cat (in cls).
 *   HOST: dur_ps.
 */
typedef struct orr_op {
    uint8_t kind;   /* orr_op_kind */
    uint8_t stream; /* device stream index within the rank */
    uint8_t cls;    /* orr_op_class (kernels), orr_coll_kind (collectives), orr_mem_cat (alloc) */
    uint8_t dtype;  /* orr_dtype */
    uint8_t role;   /* orr_comm_role */
    uint8_t phase;  /* orr_phase */
    uint8_t flags;  /* ORR_OPF_* */
    uint8_t layer_chunk; /* model chunk (virtual stage) the op belongs to, for the trace */
    uint16_t name;  /* index into the workload's name table */
    uint16_t layer; /* layer index within the model (0xffff: none) */
    uint32_t a;
    uint32_t seq;
    uint32_t mb;    /* micro-batch index (0xffffffff: none) */
    uint64_t bytes;
    double flops;
    int64_t dur_ps;
    uint32_t dims[4];
} orr_op;

#define ORR_NO_LAYER 0xffffu
#define ORR_NO_MB 0xffffffffu

typedef struct orr_rank {
    uint32_t gpu;      /* global rank (GPU index in the cluster) */
    uint32_t weight;   /* real ranks this simulated rank stands for */
    uint32_t nstreams; /* streams used: 0..nstreams-1 */
    uint32_t nevents;  /* event ids used: 0..nevents-1 */
    uint32_t nbufs;    /* buffer ids used by ALLOC/FREE */
    orr_op *ops;
    size_t nops, cap;
    char label[48];    /* e.g. "pp3" or "tp0 pp3 dp0" */
} orr_rank;

typedef struct orr_group {
    uint32_t size;         /* real members */
    uint32_t nodes;        /* distinct nodes spanned by the members */
    uint32_t per_node;     /* members per node (max) */
    uint8_t role;          /* orr_comm_role */
    uint32_t *members;     /* global ranks, size entries, ascending */
    uint32_t nsim;         /* simulated ranks that are members (computed by orr_workload_finalize) */
    char label[32];
} orr_group;

/*
 * The symmetry of a job, as the front end knows it: a group of permutations of the global ranks
 * (images), each an automorphism of the whole job (it maps every rank's op stream onto its image's,
 * every group onto a group, every p2p peer onto the image's peer). Global ranks are written in a
 * mixed radix, digit 0 fastest (Megatron: tp, cp, dp within a shard, dp replica, pp); an image adds
 * a shift to each of the `shifted` digits modulo its radix and keeps the others, so image k of
 * rank g is g with its shifted digits advanced by k written in their mixed radix (image 0 is g).
 * Every simulated rank stands for its nimages images (its weight), and no two simulated ranks are
 * images of each other (orr_workload_finalize checks both). nimages 0 or 1: none described.
 */
#define ORR_SYM_MAX_DIGITS 8
typedef struct orr_sym {
    uint32_t ndigits;
    uint32_t radix[ORR_SYM_MAX_DIGITS];
    uint8_t shifted[ORR_SYM_MAX_DIGITS];
    uint32_t nimages; /* product of the shifted digits' radices */
} orr_sym;

/* Image k (0 <= k < s->nimages) of global rank gpu. */
uint32_t orr_sym_image(const orr_sym *s, uint32_t k, uint32_t gpu);
/* The image that undoes image k. */
uint32_t orr_sym_inverse(const orr_sym *s, uint32_t k);

typedef struct orr_workload {
    orr_rank *ranks;
    size_t nranks, cap_ranks;
    orr_group *groups;
    size_t ngroups, cap_groups;
    char **names;            /* op name table */
    size_t nnames, cap_names;
    orr_map name_index;      /* hash of name -> index */
    uint32_t world_size;     /* real GPUs in the job */
    uint32_t gpus_per_node;
    orr_map gpu_to_rank;     /* global rank -> index into ranks (simulated ranks only) */
    orr_sym sym;             /* the real GPUs each simulated rank stands for (nimages <= 1: none) */
    /* Accounting for the reports, filled by the front end. */
    double model_flops;      /* model FLOPs per iteration, whole job (MFU convention of the front end) */
    double hw_flops;         /* FLOPs actually executed per iteration, whole job (incl. recompute) */
    double tokens;           /* tokens per iteration, whole job */
    char flops_convention[160];
} orr_workload;

orr_workload *orr_workload_new(uint32_t world_size, uint32_t gpus_per_node);
void orr_workload_free(orr_workload *w);
/* Adds a simulated rank for global rank gpu standing for weight real ranks; returns its index. */
uint32_t orr_workload_add_rank(orr_workload *w, uint32_t gpu, uint32_t weight, const char *label);
/* Adds a communicator with the given members (global ranks); returns its id. */
uint32_t orr_workload_add_group(orr_workload *w, orr_comm_role role, const uint32_t *members,
                                uint32_t n, const char *label);
/* Interns an op name; returns its index. */
uint16_t orr_workload_name(orr_workload *w, const char *name);
/* Appends an op to rank r (copied); returns a pointer to the stored op (valid until the next add). */
orr_op *orr_rank_push(orr_rank *r, const orr_op *op);
/* Checks references (streams, events, groups, peers), fills nsim/nstreams/nevents.
 * Returns -1 with a message for an inconsistent workload. */
int orr_workload_finalize(orr_workload *w, orr_err *err);
/* Appends every rank and communicator of src to dst, with src's global rank g moved to gpu_of[g]
 * (src->world_size entries, each below dst->world_size, distinct): rank GPUs, group members and
 * p2p peers are mapped, collectives are renumbered onto dst's new groups, op names re-interned and
 * labels prefixed with "prefix " when prefix is not empty. This places a job on part of a larger
 * cluster, several jobs in one workload (multi-job prediction). src must simulate every GPU (no
 * rank standing for others); dst gets no symmetry. Finalize dst afterwards. Returns the index of
 * the first appended rank, or -1 with a message. */
int64_t orr_workload_append(orr_workload *dst, const orr_workload *src, const uint32_t *gpu_of, const char *prefix,
                            orr_err *err);
/* Index of the simulated rank for global rank gpu, or -1. */
int64_t orr_workload_rank_of(const orr_workload *w, uint32_t gpu);

const char *orr_op_kind_name(orr_op_kind k);
const char *orr_op_class_name(orr_op_class c);
const char *orr_coll_kind_name(orr_coll_kind c);
const char *orr_dtype_name(orr_dtype d);
/* Bytes per element, scale factors included (mxfp8 1 + 1/32, nvfp4 0.5 + 1/16); 2 if unknown. */
double orr_dtype_bytes(orr_dtype d);
const char *orr_role_name(orr_comm_role r);
const char *orr_phase_name(orr_phase p);
const char *orr_mem_cat_name(orr_mem_cat c);
/* Name of op i of simulated rank r ("" if either is out of range). */
const char *orr_workload_op_name(const orr_workload *w, size_t r, size_t i);

#endif
