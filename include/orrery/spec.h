/*
 * spec.h - a prediction request: model x parallelism x hardware, from a YAML spec (docs/spec.md)
 * and command-line flags that override it.
 */
#ifndef ORRERY_SPEC_H
#define ORRERY_SPEC_H

#include <stdint.h>
#include "orrery/core.h"
#include "orrery/hw.h"
#include "orrery/model.h"
#include "orrery/net.h"

/* Per-GPU compute speed spread (sigma of a normal around the catalog's speed), the default of
 * --variability: Sinha et al., "Not All GPUs Are Created Equal" (SC'22, arXiv 2208.11035), measured an
 * 8% average spread (max - min) of the same kernels over the GPUs of each of five clusters of
 * thousands of same-SKU GPUs; the expected range of N ~ 2,000-27,000 normal draws is 7.3-8.2 sigma,
 * so sigma ~ 0.011 (docs/models.md "Variability"). */
#define ORR_VARIABILITY_DEFAULT 0.011
#define ORR_VARIABILITY_MAX 0.2

typedef enum orr_recompute { ORR_RECOMPUTE_NONE, ORR_RECOMPUTE_SELECTIVE, ORR_RECOMPUTE_FULL } orr_recompute;
/* Megatron-Core's recompute_modules (TransformerConfig): what --recompute selective re-runs, a bit set
 * in this order (orr_recompute_modules_format names them). core_attn, mlp, moe and shared_experts are
 * checkpointed (their saved tensors dropped, the forward re-run before their backward); layernorm,
 * moe_act and mla_up_proj discard their outputs and re-create them (docs/models.md "Selective
 * recompute"). */
enum {
    ORR_RCM_CORE_ATTN = 1u << 0,      /* the attention core */
    ORR_RCM_LAYERNORM = 1u << 1,      /* the norms that are modules of their own (not fused into a linear) */
    ORR_RCM_MOE_ACT = 1u << 2,        /* the routed experts' activation */
    ORR_RCM_MLP = 1u << 3,            /* a dense layer's MLP */
    ORR_RCM_MOE = 1u << 4,            /* the whole MoE layer */
    ORR_RCM_SHARED_EXPERTS = 1u << 5, /* the shared experts */
    ORR_RCM_MLA_UP_PROJ = 1u << 6,    /* MLA's up projections and rotary */
    ORR_RCM_COUNT = 7
};
/* Attention kernels: flash attention at FlashAttention-2's level (the default), the unfused path of
 * Megatron before 2022 (batched QK^T GEMM, fused scale-mask-softmax, dropout, batched AV GEMM), or
 * cuDNN's fused attention (Transformer Engine's choice on Hopper; the GPU's attn_cudnn_*_eff). */
typedef enum orr_attention { ORR_ATTN_FLASH, ORR_ATTN_UNFUSED, ORR_ATTN_CUDNN } orr_attention;
/* How an MoE layer moves tokens to their experts' ranks (Megatron-Core's token dispatchers): an
 * all-to-all of the routed copies with permute/unpermute kernels around it; an all-gather of the
 * EP group's tokens with a reduce-scatter back; DeepEP's fused dispatch/combine, which sends a token
 * once to each rank that holds one of its experts. */
typedef enum orr_moe_dispatcher { ORR_MOE_ALLTOALL, ORR_MOE_ALLGATHER, ORR_MOE_DEEPEP } orr_moe_dispatcher;
/* Which experts a token is routed to (docs/spec.md options.moe_routing): its top_k drawn uniformly (a
 * trained router on average; Megatron's --moe-router-force-load-balancing), or round-robin, token t to
 * experts t*top_k ... t*top_k + top_k - 1 mod experts (NeMo AutoModel's FakeBalancedGate). */
typedef enum orr_moe_routing { ORR_MOE_ROUTE_RANDOM, ORR_MOE_ROUTE_ROUND_ROBIN } orr_moe_routing;
/* How fp8 training scales its GEMMs' operands (--fp8-recipe; docs/models.md "FP8 recipes"): per
 * tensor, with the scale from the current amax (torchao's and Transformer Engine's tensorwise) or from
 * an amax history (Transformer Engine's delayed scaling, Megatron-LM's default; priced the same), per row
 * (torchao's rowwise), or in blocks (Transformer Engine's Float8BlockScaling, DeepSeek-V3's recipe). */
typedef enum orr_fp8_recipe { ORR_FP8_TENSORWISE, ORR_FP8_DELAYED, ORR_FP8_ROWWISE, ORR_FP8_BLOCKWISE } orr_fp8_recipe;
/* Megatron-FSDP's --data-parallel-sharding-strategy: what it shards over dp x cp (the optimizer state; and the
 * gradients; and the parameters). The default is Megatron-LM's CLI default, optim_grads_params. */
typedef enum orr_fsdp_strategy {
    ORR_FSDP_OPTIM_GRADS_PARAMS, ORR_FSDP_NO_SHARD, ORR_FSDP_OPTIM, ORR_FSDP_OPTIM_GRADS
} orr_fsdp_strategy;

/* The optimizer's tensors whose dtype Megatron-Core's precision-aware optimizer sets
 * (OptimizerConfig main_params_dtype, exp_avg_dtype, exp_avg_sq_dtype, main_grads_dtype). */
typedef enum orr_opt_state { ORR_OPT_MAIN_PARAMS, ORR_OPT_EXP_AVG, ORR_OPT_EXP_AVG_SQ, ORR_OPT_MAIN_GRADS, ORR_OPT_STATES } orr_opt_state;

/* The training framework whose recipe the workload generator follows (what it saves for the
 * backward, how it shards and reduces, its loss path, its schedules and defaults); chosen by the
 * spec's `framework:` key or --framework, never guessed from other options (docs/spec.md). */
typedef enum orr_framework {
    ORR_FW_MEGATRON,       /* Megatron-LM / Megatron-Core: DDP buckets or the distributed optimizer (default) */
    ORR_FW_MEGATRON_FSDP,  /* Megatron-Core's own FSDP (Megatron-FSDP v1, --data-parallel-sharding-strategy):
                            * Megatron's layers, each TransformerLayer a unit of a flat sharded buffer (megatron.c) */
    ORR_FW_TORCHTITAN,     /* TorchTitan: FSDP2 (HSDP), DTensor TP/SP, context_parallel, torch.compile */
    ORR_FW_DEEPSPEED,      /* DeepSpeed ZeRO stage 1, 2 or 3 */
    ORR_FW_NANOTRON,       /* nanotron's Llama: TP/SP with its async linears, ZeRO-1, fp32 gradient accumulation */
    ORR_FW_AUTOMODEL,      /* NeMo AutoModel's PyTorch path: FSDP2 + EP as TorchTitan's, a bf16 model, its own loss */
    ORR_FW_COUNT
} orr_framework;

/* The frameworks built on PyTorch's FSDP2 (fully_shard per block): TorchTitan and NeMo AutoModel. */
static inline int orr_fw_fsdp2(orr_framework f) { return f == ORR_FW_TORCHTITAN || f == ORR_FW_AUTOMODEL; }
/* Megatron-LM's recipe family: its layers, loss, schedules and options (with or without Megatron-FSDP). */
static inline int orr_fw_megatron(orr_framework f) { return f == ORR_FW_MEGATRON || f == ORR_FW_MEGATRON_FSDP; }

struct orr_job;

/* Bounds on one prediction (docs/spec.md "Limits"), checked by resolve. */
#define ORR_SEQ_MAX (16u << 20)                         /* tokens in one sequence */
#define ORR_MICROBATCH_TOKENS_MAX (1ull << 28)          /* mbs x seq */
#define ORR_MICROBATCHES_MAX 65536u                     /* gbs / (mbs x dp) per iteration */

/* Most expert-parallel ranks a --moe-imbalance file may give loads for. */
#define ORR_MOE_LOADS_MAX 1024

/* Most virtual pipeline stages an explicit parallel.pp_layers list may name. */
#define ORR_PP_LAYERS_MAX 1024

typedef struct orr_spec {
    orr_framework framework; /* default megatron */
    int framework_set;       /* framework: or --framework was given (for messages) */
    orr_model model;
    orr_gpu gpu;
    orr_cluster cluster;
    orr_hw_profile profile; /* --profile / profile: (docs/calibrate.md), applied by resolve */
    uint32_t gpus;        /* total GPUs */
    uint32_t tp, pp, dp;  /* dp 0 until resolved: derived from gpus / (tp*pp) */
    uint32_t vpp;         /* virtual pipeline stages (model chunks) per rank; 1 = plain 1F1B */
    /* How the layers are split over the pp*vpp virtual stages (orr_pp_split). At most one of:
     * Megatron's --decoder-first/last-pipeline-num-layers (layers of pipeline rank 0 / pp-1, over
     * all its chunks; the rest split evenly; 0 = not given), or an explicit count per virtual stage
     * (parallel.pp_layers). Neither: TorchTitan's generate_split_points (even when divisible). */
    uint32_t pp_first_layers;
    uint32_t pp_last_layers;
    /* megatron: the embedding and/or the loss counted as one layer each in the even split (Megatron-Core's
     * account_for_{embedding,loss}_in_pipeline_split), so the first / last virtual stage holds one decoder
     * layer fewer than the others (possibly none). Not with the two above or pp_layers. */
    int pp_account_embedding, pp_account_loss;
    uint32_t npp_layers;                  /* entries of pp_layers given (0: none) */
    uint32_t pp_layers[ORR_PP_LAYERS_MAX];/* layers of virtual stage v = chunk*pp + stage, model order */
    uint32_t mbs, gbs, seq;
    /* FSDP2 frameworks with pp > 1: sequences per data-parallel rank in one pipeline schedule step
     * (TorchTitan's training.local_batch_size, AutoModel's step_scheduler.local_batch_size); an
     * iteration accumulates gradients over gbs / (lbs * dp) such steps. 0: gbs / dp, one step. */
    uint32_t lbs;
    int sp;               /* sequence parallelism (with TP > 1) */
    int dist_opt;         /* megatron: distributed optimizer (ZeRO-1-like sharding over DP) */
    uint32_t cp;          /* context parallelism: the sequence split over cp ranks (Megatron's ring
                           * attention; torchtitan: torch's context_parallel, all-gathered K/V) */
    uint32_t fsdp;        /* torchtitan: FSDP2 shard degree (resolve: the data parallelism left after
                           * the replicas when not given, as data_parallel_shard_degree -1 does); dp
                           * is then the HSDP replicate degree until resolve, which sets dp to the
                           * total data parallelism fsdp*replicate */
    uint32_t dp_replicate;/* resolve: HSDP replicas (1 without HSDP) */
    uint32_t zero;        /* deepspeed: ZeRO stage 1..3 over DP (0: not given) */
    int reshard_after_forward; /* torchtitan: free unsharded params after forward (-1: not given) */
    int fp8_allgather;    /* torchtitan: all-gather float8 weights (float8 training only) */
    int bf16_params;      /* torchtitan: the model's parameters in bf16, so FSDP2's sharded parameters,
                           * gradients and Adam state too (NeMo AutoModel's torch_dtype bf16); else fp32 */
    int plain_experts;    /* torchtitan, MoE: where the experts' FSDP degree fsdp*cp/ep is 1 (and no HSDP
                           * replicas), the routed experts left out of FSDP2 (NeMo AutoModel's apply_fsdp) */
    int compile;          /* torchtitan: torch.compile, fused elementwise kernels and their saved tensors */
    int compile_loss;     /* torchtitan: the loss compiled too (-1: not given). TorchTitan compiles
                           * its loss only from 2025 (components/loss.py); before, train.py left it
                           * eager ("compiling loss function causes CUDA errors") */
    /* Mixture of experts (docs/spec.md "MoE"): Megatron-Core's parallel folding, the experts laid out
     * as etp x ep x edp over the same tp x cp x dp GPUs of a pipeline stage (edp derived). */
    uint32_t ep;          /* expert-parallel degree (default 1) */
    uint32_t etp_given;   /* --etp / parallel.etp; 0: not given (orr_spec_resolve sets etp) */
    uint32_t etp;         /* resolve: expert-tensor-parallel degree, etp_given or the framework's default:
                           * Megatron-Core's --expert-tensor-parallel-size None is the tp; 1 elsewhere */
    uint32_t edp;         /* resolve: expert data parallelism tp*cp*dp / (ep*etp) */
    orr_moe_dispatcher moe_dispatcher; /* default alltoall */
    orr_moe_routing moe_routing;       /* default random */
    double moe_capacity_factor; /* tokens an expert takes at most, x its balanced share (0: dropless) */
    int moe_shared_expert_overlap; /* shared experts computed while the dispatch/combine are in flight */
    int moe_a2a_overlap;  /* megatron: one micro-batch's forward and another's backward co-scheduled layer by
                           * layer, each's EP all-to-alls under the other's compute (Megatron-Core's
                           * overlap_moe_expert_parallel_comm, combined 1F1B) */
    double moe_imbalance; /* tokens the most loaded EP rank receives, x the average (1: balanced) */
    /* A measured load per EP rank instead (--moe-imbalance FILE, options.moe_imbalance_file): a CSV
     * with a `tokens` column, one row per EP rank. Resolve reads it: moe_loads[0..ep) relative to
     * their mean, most loaded first (EP position 0, the rank symmetry simulates). */
    char moe_load_file[256];
    uint32_t nmoe_loads;
    double moe_loads[ORR_MOE_LOADS_MAX];
    orr_recompute recompute;
    uint32_t sac_every;   /* torchtitan --selective-ac-option N with --recompute selective: every N-th block of
                           * a rank checkpointed whole, the others keeping everything (layer SAC); 0: "op",
                           * per-op SAC */
    uint32_t recompute_modules; /* ORR_RCM_* (--recompute-modules); resolve: core_attn when megatron's
                                 * selective recompute names none, 0 otherwise */
    orr_dtype precision;  /* bf16 / fp16 / fp8 */
    orr_fp8_recipe fp8_recipe; /* precision fp8: how the GEMMs' operands are scaled (default tensorwise) */
    int fp8_recipe_set;   /* fp8_recipe was given (an error without --precision fp8) */
    int overlap_grad_reduce;   /* DP gradient reduction overlapped with backward (default 1) */
    int overlap_param_gather;  /* dist-opt parameter all-gather overlapped with forward (default 1) */
    int tp_comm_overlap;       /* TP collectives overlapped with the GEMMs (default 0) */
    int bias_activation_fusion; /* megatron: the MLP activation (with its bias, and an MoE expert's routing
                                * score) one fused kernel (default 1); off: Megatron's eager path */
    int async_tp_allreduce;    /* megatron without SP: a column-parallel linear's backward all-reduce of its
                                * input gradient runs under its weight-gradient GEMM (default 1, Megatron-LM
                                * since 2021-08-30); 0: --no-async-tensor-model-parallel-allreduce, or the code
                                * before it: on the compute stream after both GEMMs */
    int overlap_p2p_comm;      /* megatron, interleaved schedule: pipeline send/recv asynchronous, waited for
                                * only by the step that needs the tensor (default 1, as Megatron-LM) */
    int grad_reduce_bf16;      /* megatron: --grad-reduce-in-bf16, the gradient buffer and its reduction
                                * in bf16 (default: fp32 for bf16 training, as Megatron-LM forces) */
    orr_fsdp_strategy fsdp_strategy; /* megatron-fsdp: --data-parallel-sharding-strategy */
    int fsdp_strategy_set;     /* given (an error under any other framework) */
    int fp8_param_gather;      /* megatron: --fp8-param-gather, the linear layers' parameters kept in FP8
                                * (Transformer Engine Float8Tensor) and gathered in FP8 */
    int precision_aware_opt;   /* megatron: --use-precision-aware-optimizer (Transformer Engine's FusedAdam:
                                * the optimizer's tensors in opt_dtype, bf16 parameters' fp32 master copy
                                * as 16-bit remainders, store_param_remainders) */
    orr_dtype opt_dtype[ORR_OPT_STATES]; /* --main-params-dtype ... (default fp32, all of them) */
    orr_attention attention;   /* attention kernels (default flash) */
    double bucket_params;      /* DDP bucket size in parameters (Megatron: max(40M, 1M*dp)) */
    int64_t launch_ps;         /* host time to launch one kernel or collective */
    double variability;        /* sigma of the per-GPU compute speed (docs/models.md "Variability";
                                * default ORR_VARIABILITY_DEFAULT; 0: identical GPUs) */
    uint64_t variability_seed; /* which draw of the GPUs' speeds (default 1) */
    int symmetry;              /* simulate identical ranks once (default 1; off under --net flow/packet) */
    uint64_t mem_capacity_bytes; /* device memory for the OOM verdict (0: the GPU's HBM) */
    int caching_allocator;     /* model PyTorch's caching allocator (default 1), else raw live bytes */
    int expandable_segments;   /* the caching allocator with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
                                * (default 0): under memory pressure it unmaps every free cached block */
    /* Network (docs/spec.md "network"). */
    orr_net_kind net;          /* analytic (default), flow or packet */
    int topology_set;          /* topo.kind was given (else: the cluster's topology) */
    orr_topo_spec topo;        /* the fabric of the flow and packet backends */
    int pxn;                   /* PXN rail-local routing (default 0; flow backend only) */
    orr_cc cc;                 /* packet backend: congestion control (default DCQCN) */
    uint32_t packet_payload_bytes; /* packet backend: payload per packet (default 65536) */
    int no_accel;              /* packet backend: no Wormhole acceleration (default 0: accelerated) */
    int no_memo;               /* packet backend: no memoization of unsteady phases (default 0: on) */
    char memo_path[512];       /* packet backend: --memo FILE, the SQLite memo (empty: in memory only) */
    double ss_theta;           /* packet backend: steady-state threshold (0: ORR_SS_THETA_DEFAULT) */
    uint32_t ss_window;        /* packet backend: steady-state window in samples (0: ORR_SS_WINDOW_DEFAULT) */
    uint64_t packet_seed;      /* packet backend: RANDOM_SEED of its RED and loss draws (default 1) */
    char spec_path[256];       /* where the spec came from, for messages */
    /* Several jobs on one cluster (docs/spec.md "jobs"): njobs > 0 when the spec has a `jobs:`
     * list. Each job is a spec of its own (the top level's keys overlaid by the job's entry); gpus
     * is then the cluster's GPU count (0: just enough nodes for the jobs, set by resolve). */
    uint32_t njobs;
    struct orr_job *jobs;      /* heap, njobs entries; freed by orr_spec_free */
    /* Hardware flags (--nic-gbps, --nics-per-node, --nvlink-gbps; 0: not given): applied by resolve
     * to the GPU and cluster in effect after every flag and the spec file. */
    struct {
        double nic_gbps, nvlink_gbps;
        uint32_t nics_per_node;
    } hw_flags;
    /* `orrery emulate`'s own flags (docs/emulate.md); empty strings and 0 when not given. */
    struct {
        char trace_dir[256], kernel_db[256], lib_dir[256];
        char routing[256]; /* --moe-imbalance: balanced, a factor or a CSV file (orr_emu_routing) */
        int no_dedup, no_host_time, live;
        int profile;   /* 0, 1 (--profile: ORR_EMU_PROFILE) or 2 (--profile-on-emulator) */
        double tokens; /* tokens per iteration of the whole job (0: unknown) */
    } emu;
    /* Output options (front door). */
    int json;
    char trace_path[256];
    char html_path[256];           /* --html FILE: the HTML report (src/report/html.c) */
    int quiet;                     /* --quiet: no progress line */
    struct orr_progress *progress; /* the caller's progress line (progress.h); NULL: none */
} orr_spec;

/* One job of a multi-job spec and where it runs. Placement: `first_gpu` (contiguous GPUs from
 * there), `nodes` (whole nodes, in the order given), or neither (packed after the previous job).
 * Resolve fills gpu_of: the global GPU (host of the shared topology) of each of the job's ranks. */
#define ORR_JOBS_MAX 256
#define ORR_JOB_NODES_MAX 4096
typedef struct orr_job {
    char name[32];
    int line;                  /* line of the entry in the spec file (0: unknown) */
    int placement_line;        /* line of first_gpu: or nodes: */
    int first_gpu_set;
    uint32_t first_gpu;
    uint32_t nnodes;           /* nodes: given (0: not) */
    uint32_t *nodes;           /* heap */
    uint32_t *gpu_of;          /* resolve: s.gpus entries (heap) */
    orr_spec s;                /* the job's own spec (njobs 0) */
} orr_job;

/* Defaults: everything unset except the tunables with documented defaults. */
void orr_spec_init(orr_spec *s);
/* Reads a YAML spec (docs/spec.md). Unknown keys, wrong types and bad values are errors naming
 * the file and the field. */
int orr_spec_load_file(orr_spec *s, const char *path, orr_err *err);
/* The same for YAML text in memory, text[0..len); name stands for the file in messages. */
int orr_spec_load_text(orr_spec *s, const char *name, const char *text, size_t len, orr_err *err);
/* Reads a YAML model file (the `model:` mapping of a spec, on its own). */
int orr_model_load_file(orr_model *m, const char *path, orr_err *err);
/* Applies command-line flags (docs/spec.md lists them). argv[0..argc-1] are flags only; a spec
 * path is handled by the caller. Errors name the flag. */
int orr_spec_apply_flags(orr_spec *s, int argc, char **argv, orr_err *err);
/* The same for `orrery emulate`: its own flags and the hardware and output flags it shares. */
int orr_spec_apply_emulate_flags(orr_spec *s, int argc, char **argv, orr_err *err);

/* The flag table, for help text and for checking the docs against the parser (src/spec/flags.c). */
typedef struct orr_flag_info {
    const char *name;     /* "--tp" */
    const char *expects;  /* what the value must be; NULL for an on/off flag */
    const char *def;      /* the default, in words (NULL for the "--no-" half of a pair) */
    const char *help;     /* one line of meaning, with its unit */
    int predict, emulate; /* accepted by `orrery predict` / `orrery emulate` */
    int jobs;             /* accepted at the top level of a spec with jobs: */
} orr_flag_info;
size_t orr_flag_count(void);
int orr_flag_info_at(size_t i, orr_flag_info *out);
/* Appends one line per flag of command ("predict" or "emulate") to out; -1 for another command. */
int orr_flags_help(const char *command, orr_buf *out);

/* Derives what was left out (dp, seq, ...) and checks every divisibility and range rule. */
int orr_spec_resolve(orr_spec *s, orr_err *err);

/* The hardware part of resolve: the GPU (given, the cluster's, else default_gpu; NULL: an error),
 * the cluster (given, else the GPU's node type), the calibration profile over both, then the
 * hardware flags. */
int orr_spec_resolve_hardware(orr_spec *s, const char *default_gpu, orr_err *err);

/* The values in effect of the options that stay -1 when not given (so a resolved spec can be
 * resolved again): FSDP2's reshard after forward, on without PP as TorchTitan sets it; the loss
 * compiled as the model is. */
int orr_spec_reshard_after_forward(const orr_spec *s);
/* The expert-tensor-parallel degree of s's MoE model under framework fw with tp: --etp when given,
 * else Megatron-Core's default (its expert_tensor_parallel_size None becomes the tp), 1 elsewhere
 * and for a dense model. resolve sets s->etp from it; search asks it for each trial's fw and tp. */
uint32_t orr_spec_etp_for(const orr_spec *s, orr_framework fw, uint32_t tp);
int orr_spec_compile_loss(const orr_spec *s);

/* Frees what a spec holds on the heap (the jobs of a multi-job spec); the spec can be reused
 * after orr_spec_init. */
void orr_spec_free(orr_spec *s);

/* Bytes the framework's allocator may use on one GPU: --mem-capacity (or the GPU's HBM) minus the
 * memory outside it (gpu.runtime_reserved_gib). */
uint64_t orr_spec_alloc_capacity(const orr_spec *s);

/* The layers of each of the pp*vpp virtual stages, in model order (virtual stage v = chunk*pp +
 * pipeline rank holds the layers after those of stages 0..v-1): out[0..pp*vpp). Without an explicit
 * split this is TorchTitan's generate_split_points (torchtitan/parallelisms/pipelining_utils.py at
 * 9dec370): base = layers / stages, stage 0 and the stages after the first layers % stages middle
 * ones get base, those middle ones base + 1. Errors name the flag or field at fault. */
int orr_pp_split(const orr_spec *s, uint32_t *out, orr_err *err);

const char *orr_recompute_name(orr_recompute r);
/* The set's names, comma-separated ("layernorm,moe_act"; "" for none), into buf. */
void orr_recompute_modules_format(uint32_t set, char *buf, size_t cap);
/* One module's name to its bit; -1 if it names none. */
int orr_recompute_module_parse(const char *name, uint32_t *bit);
const char *orr_fp8_recipe_name(orr_fp8_recipe r);
const char *orr_fsdp_strategy_name(orr_fsdp_strategy x);
/* "megatron", "megatron-fsdp", "torchtitan", "deepspeed", "nanotron", "automodel". */
const char *orr_framework_name(orr_framework f);
/* The framework of a name (case ignored); -1 if none. */
int orr_framework_parse(const char *name, orr_framework *out);
/* The spec key of an optimizer tensor whose dtype the precision-aware optimizer sets
 * ("main_params_dtype", ...), the dtypes Megatron-LM accepts for it ("fp32 or fp16", ...), and the
 * dtype of a name among those; -1 if it is not one of them. */
const char *orr_opt_state_key(orr_opt_state st);
const char *orr_opt_state_choices(orr_opt_state st);
int orr_opt_dtype_parse(orr_opt_state st, const char *name, orr_dtype *out);
const char *orr_attention_name(orr_attention a);
const char *orr_moe_dispatcher_name(orr_moe_dispatcher d);
const char *orr_moe_routing_name(orr_moe_routing r);

#endif
