/*
 * flags.c - command-line flags that set or override the fields of a spec (docs/spec.md, "Flags").
 *
 * Every flag is in the table below with what its value must be. A value is given as `--tp 8` or
 * `--tp=8`; on/off flags take no value (`--sp`, `--no-sp`). Numbers are parsed strictly: the whole
 * value must be the number, counts must be positive and fit in 32 bits. Like the spec file, flags only
 * record values; the rules that relate them are checked by orr_spec_resolve.
 */
#include "orrery/spec.h"

#include "spec/yaml.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

typedef enum flag_id {
    F_MODEL, F_GPU, F_CLUSTER, F_GPUS, F_GPUS_PER_NODE, F_TP, F_PP, F_DP, F_VPP, F_SP, F_NO_SP,
    F_MBS, F_GBS, F_LBS, F_SEQ, F_RECOMPUTE, F_SAC_OPTION, F_RECOMPUTE_MODULES, F_DIST_OPT, F_NO_DIST_OPT, F_PRECISION, F_FP8_RECIPE,
    F_JSON, F_TRACE,
    F_HTML,
    F_TP_COMM_OVERLAP, F_NO_TP_COMM_OVERLAP, F_NO_P2P_OVERLAP, F_NO_ASYNC_TP_AR, F_NO_ACT_FUSION, F_NO_SYMMETRY, F_LAUNCH_US, F_ATTENTION,
    F_CP, F_FSDP, F_ZERO, F_RESHARD, F_NO_RESHARD, F_FP8_AG, F_BF16_PARAMS, F_PLAIN_EXPERTS, F_COMPILE, F_NO_COMPILE, F_COMPILE_LOSS, F_NO_COMPILE_LOSS, F_MEM_CAPACITY,
    F_CACHING, F_NO_CACHING, F_EXPANDABLE,
    F_NET, F_TOPOLOGY,
    F_TOPOLOGY_FILE, F_OVERSUB, F_PXN, F_NO_PXN, F_CC, F_PACKET_PAYLOAD, F_NO_ACCEL, F_ACCEL, F_NO_MEMO, F_MEMO, F_SS_THETA, F_SS_WINDOW, F_PACKET_SEED,
    F_PP_FIRST, F_PP_LAST, F_PP_LAYERS, F_PP_ACCOUNT_EMB, F_PP_ACCOUNT_LOSS,
    F_NIC_GBPS, F_NICS_PER_NODE, F_NVLINK_GBPS,
    F_EP, F_ETP, F_MOE_DISPATCHER, F_MOE_ROUTING, F_MOE_CAPACITY, F_MOE_IMBALANCE, F_MOE_SHARED_OVERLAP, F_MOE_A2A_OVERLAP,
    F_FSDP_STRATEGY,
    F_FRAMEWORK, F_GRAD_BF16, F_FP8_PARAM, F_PRECISION_AWARE, F_MAIN_PARAMS_DT, F_EXP_AVG_DT, F_EXP_AVG_SQ_DT, F_MAIN_GRADS_DT, F_QUIET, F_TRACE_DIR, F_KERNEL_DB, F_LIB_DIR, F_NO_DEDUP, F_NO_HOST_TIME, F_LIVE, F_TOKENS, F_PROFILE, F_PROFILE_EMULATED, F_EMU_ROUTING,
    F_VARIABILITY, F_VARIABILITY_SEED, F_HW_PROFILE
} flag_id;

/* Where a flag is accepted: predict, emulate, and (with a spec that has jobs:) at the top level of
 * a multi-job predict, where flags may set only what the jobs share. */
enum { SC_PREDICT = 1, SC_EMULATE = 2, SC_JOBS = 4 };

/* One flag: its name, what its value must be (NULL: an on/off flag without a value), its default,
 * one line of meaning, and where it is accepted. `orrery help` prints this table, the parser reads
 * it, and tests/cli_help.sh checks it against docs/spec.md and docs/emulate.md: one home. */
typedef struct flag_def {
    const char *name;
    flag_id id;
    const char *expects;
    const char *def;
    const char *help;
    unsigned scope;
} flag_def;

#define COUNT "a positive integer"
#define P SC_PREDICT
#define E SC_EMULATE
#define J SC_JOBS
static const flag_def flags[] = {
    /* the job */
    {"--framework", F_FRAMEWORK, "megatron, megatron-fsdp, torchtitan, deepspeed, nanotron or automodel", "megatron",
     "the training framework whose recipe is modelled (what it saves, how it shards)", P},
    {"--model", F_MODEL, "a catalog model name, a YAML model file, or a Hugging Face config.json or its directory", "required",
     "the model (`orrery list models`)", P},
    {"--gpu", F_GPU, "a catalog GPU name", "the cluster's GPU", "the GPU (`orrery list gpus`)", P | E | J},
    {"--cluster", F_CLUSTER, "a catalog cluster name or a YAML cluster file", "the GPU's node type",
     "the node type and network (`orrery list clusters`); a file holds cluster fields with base: NAME", P | E | J},
    {"--gpus", F_GPUS, COUNT, "tp*cp*pp*dp", "GPUs in the job (emulate: processes expected)", P | E | J},
    {"--gpus-per-node", F_GPUS_PER_NODE, COUNT, "the cluster's", "GPUs in one NVLink domain", P | E | J},
    {"--nic-gbps", F_NIC_GBPS, "a rate in Gb/s, above 0 up to 1e7", "the cluster's",
     "scale-out NIC bandwidth per NIC per direction, Gb/s (cluster.nic_gbps)", P | E | J},
    {"--nics-per-node", F_NICS_PER_NODE, COUNT, "one per GPU",
     "scale-out NICs per node, shared evenly by its GPUs (cluster.nics_per_node)", P | E | J},
    {"--profile", F_HW_PROFILE, "a calibration profile file (orrery calibrate's YAML)", "none",
     "measured GPU and cluster values over the catalog's (docs/calibrate.md)", P | J},
    {"--nvlink-gbps", F_NVLINK_GBPS, "a rate in Gb/s, above 0 up to 1e7", "the GPU's",
     "NVLink bandwidth per GPU per direction, Gb/s (gpu.nvlink_gbps; H100: 3600)", P | E | J},
    /* parallelism */
    {"--tp", F_TP, COUNT, "1", "tensor-parallel degree", P},
    {"--pp", F_PP, COUNT, "1", "pipeline-parallel degree (stages)", P},
    {"--dp", F_DP, COUNT, "gpus/(tp*cp*pp)", "data-parallel degree (with --fsdp: the HSDP replicate degree)", P},
    {"--vpp", F_VPP, COUNT, "1", "virtual pipeline stages per rank (interleaved 1F1B when > 1)", P},
    {"--decoder-first-pipeline-num-layers", F_PP_FIRST, COUNT, "even split", "layers of the first pipeline stage", P},
    {"--decoder-last-pipeline-num-layers", F_PP_LAST, COUNT, "even split", "layers of the last pipeline stage", P},
    {"--num-layers-in-first-pipeline-stage", F_PP_FIRST, COUNT, "even split",
     "Megatron-Core's later name of --decoder-first-pipeline-num-layers", P},
    {"--num-layers-in-last-pipeline-stage", F_PP_LAST, COUNT, "even split",
     "Megatron-Core's later name of --decoder-last-pipeline-num-layers", P},
    {"--account-for-embedding-in-pipeline-split", F_PP_ACCOUNT_EMB, NULL, "off",
     "megatron: the embedding counts as one layer of the first virtual stage in the even split", P},
    {"--account-for-loss-in-pipeline-split", F_PP_ACCOUNT_LOSS, NULL, "off",
     "megatron: the loss (LM head) counts as one layer of the last virtual stage in the even split", P},
    {"--pp-layers", F_PP_LAYERS, "comma-separated positive layer counts, one per virtual pipeline stage", "none",
     "explicit layers of each of the pp*vpp virtual stages, in model order", P},
    {"--sp", F_SP, NULL, "off", "sequence parallelism (tp > 1)", P},
    {"--no-sp", F_NO_SP, NULL, NULL, "no sequence parallelism", P},
    {"--cp", F_CP, COUNT, "1", "context-parallel degree", P},
    {"--dist-opt", F_DIST_OPT, NULL, "off", "distributed optimizer: optimizer state sharded over DP", P},
    {"--no-dist-opt", F_NO_DIST_OPT, NULL, NULL, "no distributed optimizer", P},
    {"--fsdp", F_FSDP, COUNT, "0 (off)", "FSDP2 shard degree, as TorchTitan applies it", P},
    {"--zero", F_ZERO, "0, 1, 2 or 3", "0", "DeepSpeed ZeRO stage over DP (nanotron: 0 or 1)", P},
    {"--reshard-after-forward", F_RESHARD, NULL, "on (off with pp > 1)", "FSDP: free unsharded parameters after forward", P},
    {"--no-reshard-after-forward", F_NO_RESHARD, NULL, NULL, "FSDP: keep unsharded parameters until backward", P},
    {"--ep", F_EP, COUNT, "1", "expert-parallel degree (MoE models): the experts split over ep ranks", P},
    {"--etp", F_ETP, COUNT, "tp under megatron (Megatron-Core's), else 1",
     "expert-tensor-parallel degree (MoE models): each expert split over etp ranks", P},
    {"--fp8-allgather", F_FP8_AG, NULL, "off", "FSDP: all-gather linear weights in float8 (--precision fp8)", P},
    {"--bf16-params", F_BF16_PARAMS, NULL, "off (fp32)",
     "FSDP: parameters, sharded gradients and Adam state in bf16 (a bf16 model, as NeMo AutoModel's)", P},
    {"--plain-experts", F_PLAIN_EXPERTS, NULL, "off",
     "FSDP + EP: routed experts left out of FSDP2 where fsdp*cp/ep is 1 (as NeMo AutoModel)", P},
    /* training */
    {"--mbs", F_MBS, COUNT, "1", "micro-batch size, sequences", P},
    {"--gbs", F_GBS, COUNT, "mbs*dp", "global batch size, sequences per iteration", P},
    {"--lbs", F_LBS, COUNT, "gbs/dp",
     "torchtitan/automodel with pp > 1: sequences per DP rank in one pipeline schedule step", P},
    {"--seq", F_SEQ, COUNT, "the model's seq", "sequence length, tokens", P},
    {"--recompute", F_RECOMPUTE, "none, selective or full", "none", "activation recomputation", P},
    {"--selective-ac-option", F_SAC_OPTION, "op or a positive integer N", "op",
     "torchtitan with --recompute selective: TorchTitan's activation_checkpoint.selective_ac_option, per-op SAC "
     "or every N-th block checkpointed whole (layer SAC)", P},
    {"--recompute-modules", F_RECOMPUTE_MODULES,
     "comma-separated core_attn, layernorm, moe_act, mlp, moe, shared_experts, mla_up_proj", "core_attn",
     "megatron with --recompute selective: what is recomputed (Megatron-Core's recompute_modules)", P},
    {"--precision", F_PRECISION, "bf16, fp16, fp8, mxfp8 or nvfp4", "bf16", "compute precision of the GEMMs", P},
    {"--fp8-recipe", F_FP8_RECIPE, "tensorwise, delayed, rowwise or blockwise", "tensorwise",
     "--precision fp8: how the GEMMs' operands are scaled (per tensor; Transformer Engine's delayed or blockwise; "
     "torchao's rowwise)", P},
    /* options */
    {"--tp-comm-overlap", F_TP_COMM_OVERLAP, NULL, "off", "TP collectives overlapped with the GEMMs", P},
    {"--async-tp", F_TP_COMM_OVERLAP, NULL, "off", "TorchTitan's name of --tp-comm-overlap", P},
    {"--no-tp-comm-overlap", F_NO_TP_COMM_OVERLAP, NULL, NULL, "TP collectives not overlapped", P},
    {"--no-overlap-p2p-comm", F_NO_P2P_OVERLAP, NULL, "overlapped",
     "megatron with --vpp: pipeline send/recv synchronous (Megatron-LM's no-overlap-p2p-communication)", P},
    {"--no-async-tensor-model-parallel-allreduce", F_NO_ASYNC_TP_AR, NULL, "asynchronous",
     "megatron without SP: a column-parallel linear's backward all-reduce after its weight gradient, not under it "
     "(Megatron-LM's flag; its code before 2021-08-30)", P},
    {"--no-bias-activation-fusion", F_NO_ACT_FUSION, NULL, "fused",
     "megatron: the MLP and MoE expert activations eager (Megatron's bias_activation_fusion off)", P},
    {"--grad-reduce-in-bf16", F_GRAD_BF16, NULL, "off (fp32)", "megatron: gradient buffer and reduction in bf16", P},
    {"--fp8-param-gather", F_FP8_PARAM, NULL, "off",
     "megatron: linear weights kept and all-gathered in FP8 (--precision fp8 --dist-opt)", P},
    {"--use-precision-aware-optimizer", F_PRECISION_AWARE, NULL, "off",
     "megatron with --dist-opt: Transformer Engine's FusedAdam keeps the optimizer's tensors in the dtypes below and "
     "a bf16 parameter's fp32 master copy as 16-bit remainders", P},
    {"--main-params-dtype", F_MAIN_PARAMS_DT, "fp32 or fp16", "fp32",
     "megatron, precision-aware optimizer: the master parameters' dtype", P},
    {"--exp-avg-dtype", F_EXP_AVG_DT, "fp32, fp16, bf16 or fp8", "fp32",
     "megatron, precision-aware optimizer: Adam's first moment's dtype", P},
    {"--exp-avg-sq-dtype", F_EXP_AVG_SQ_DT, "fp32, fp16, bf16 or fp8", "fp32",
     "megatron, precision-aware optimizer: Adam's second moment's dtype", P},
    {"--main-grads-dtype", F_MAIN_GRADS_DT, "fp32 or bf16", "fp32",
     "megatron, precision-aware optimizer: the dtype of the gradients the optimizer reads", P},
    {"--moe-dispatcher", F_MOE_DISPATCHER, "alltoall, allgather or deepep", "alltoall",
     "MoE token dispatcher: all-to-all with permute kernels, all-gather, or DeepEP's fused one", P},
    {"--moe-routing", F_MOE_ROUTING, "random or round-robin", "random",
     "MoE: a token's experts drawn uniformly, or round-robin (NeMo AutoModel's fake_balanced_gate)", P},
    {"--moe-capacity-factor", F_MOE_CAPACITY, "a number above 0 up to 1000", "none (dropless)",
     "MoE: tokens an expert takes at most, x its balanced share (the rest are dropped)", P},
    {"--moe-imbalance", F_MOE_IMBALANCE, "balanced, a number from 1 up to ep, or a CSV file of per-rank tokens",
     "balanced", "MoE: tokens the most loaded expert-parallel rank receives, x the average (or each rank's)", P},
    {"--moe-shared-expert-overlap", F_MOE_SHARED_OVERLAP, NULL, "off",
     "MoE: shared experts computed while the dispatch and combine all-to-alls are in flight", P},
    {"--data-parallel-sharding-strategy", F_FSDP_STRATEGY, "no_shard, optim, optim_grads or optim_grads_params",
     "optim_grads_params", "megatron-fsdp: what Megatron-FSDP shards over dp x cp (optimizer state; and gradients; and "
     "parameters)", P},
    {"--overlap-moe-expert-parallel-comm", F_MOE_A2A_OVERLAP, NULL, "off",
     "megatron MoE: one micro-batch's forward and another's backward co-scheduled layer by layer, each's "
     "all-to-alls under the other's compute (combined 1F1B)", P},
    {"--attention", F_ATTENTION, "flash, cudnn or unfused", "flash", "attention kernels: FlashAttention-2, cuDNN's fused attention (Transformer Engine's FusedAttention, SDPA's cuDNN backend) or unfused", P},
    {"--compile", F_COMPILE, NULL, "off", "torch.compile's fused kernels and saved tensors", P},
    {"--no-compile", F_NO_COMPILE, NULL, NULL, "eager PyTorch", P},
    {"--compile-loss", F_COMPILE_LOSS, NULL, "as --compile", "the loss under torch.compile too", P},
    {"--no-compile-loss", F_NO_COMPILE_LOSS, NULL, NULL, "an eager loss", P},
    {"--launch-us", F_LAUNCH_US, "a non-negative number of microseconds, up to 1e6", "5",
     "host time to launch one kernel or collective, us", P | E | J},
    {"--variability", F_VARIABILITY, "a standard deviation from 0 to 0.2, or none", "0.011",
     "per-GPU compute speed spread (sigma); the slowest GPU of each synchronising group sets the pace", P | J},
    {"--variability-seed", F_VARIABILITY_SEED, "a non-negative integer", "1", "which draw of the GPUs' speeds", P | J},
    {"--no-symmetry", F_NO_SYMMETRY, NULL, "symmetry on", "simulate every GPU, not one per identical group", P | J},
    {"--mem-capacity", F_MEM_CAPACITY, "a memory size like 80GiB, 96GB or 81920MiB", "the GPU's HBM",
     "device memory for the OOM verdict", P | E | J},
    {"--caching-allocator", F_CACHING, NULL, "on", "model PyTorch's caching allocator (reserved memory)", P | J},
    {"--no-caching-allocator", F_NO_CACHING, NULL, NULL, "count raw live bytes only", P | J},
    {"--expandable-segments", F_EXPANDABLE, NULL, "off",
     "the caching allocator with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", P | J},
    /* network */
    {"--net", F_NET, "analytic, flow or packet", "analytic", "network backend", P | J},
    {"--topology", F_TOPOLOGY, "rail-fat-tree, fat-tree, clos3 or hpcc", "the cluster's", "scale-out fabric", P | J},
    {"--topology-file", F_TOPOLOGY_FILE, "an HPCC/SimAI topology file", "none",
     "the fabric's links from a file (implies --topology hpcc)", P | J},
    {"--oversub", F_OVERSUB, "a ratio from 1 to 1000", "1", "leaf downlink / uplink bandwidth", P | J},
    {"--pxn", F_PXN, NULL, "off", "flow backend: NCCL's PXN rail-local routing", P | J},
    {"--no-pxn", F_NO_PXN, NULL, NULL, "no PXN routing", P | J},
    {"--cc", F_CC, "dcqcn, hpcc, timely or dctcp", "dcqcn", "packet backend: congestion control", P | J},
    {"--packet-payload", F_PACKET_PAYLOAD, "a payload size in bytes from 256 to 16777216", "65536",
     "packet backend: bytes one simulated packet carries", P | J},
    {"--no-accel", F_NO_ACCEL, NULL, "accelerated",
     "packet backend: simulate every packet (no Wormhole fast-forward, docs/netsim.md)", P | J},
    {"--accel", F_ACCEL, NULL, NULL, "packet backend: Wormhole acceleration (the default)", P | J},
    {"--no-memo", F_NO_MEMO, NULL, "on",
     "packet backend: no memoization of repeated flows (docs/netsim.md \"Memoization\")", P | J},
    {"--memo", F_MEMO, "a SQLite file path", "none",
     "packet backend: read the memo from this file and add what the run learnt to it", P},
    {"--ss-theta", F_SS_THETA, "a fraction in (0, 1)", "0.05",
     "packet backend: a flow is steady when its rate varies by less than this over a window", P | J},
    {"--ss-window", F_SS_WINDOW, "a count of rate samples from 4 to 100000000", "2000",
     "packet backend: rate samples (one per ACK) per steady-state window", P | J},
    {"--packet-seed", F_PACKET_SEED, "a positive integer", "1",
     "packet backend: the RANDOM_SEED of its RED marking and loss draws (another sample of a congested run)", P | J},
    /* output */
    {"--json", F_JSON, NULL, "text", "print the result as JSON (docs/json.md)", P | E | J},
    {"--trace", F_TRACE, "an output file path", "none", "write a Perfetto trace (ui.perfetto.dev)", P | E | J},
    {"--html", F_HTML, "an output file path", "none",
     "write a self-contained HTML report: timeline, breakdown, memory (docs/report.md)", P | E | J},
    {"--quiet", F_QUIET, NULL, "a progress line on a terminal",
     "no progress line on stderr (there is none when stderr is not a terminal)", P | E | J},
    /* emulate */
    {"--trace-dir", F_TRACE_DIR, "a directory", "a temporary one, removed", "keep the per-process traces there", E},
    {"--kernel-db", F_KERNEL_DB, "an SQLite kernel database file", "none",
     "measured kernel times: read when emulating, written with --profile", E},
    {"--lib-dir", F_LIB_DIR, "a directory", "the build's", "where the emulation libraries are", E},
    {"--no-dedup", F_NO_DEDUP, NULL, "dedup on", "simulate every process, not one per identical trace", E},
    {"--no-host-time", F_NO_HOST_TIME, NULL, "host time on (a PyTorch program's from a 2nd run without the hook)",
     "drop measured host CPU time: device-bound time", E},
    {"--live", F_LIVE, NULL, "off",
     "run the program twice: the second sees simulated GPU time in its event timings (docs/emulate.md)", E},
    {"--tokens", F_TOKENS, "a positive number of tokens, up to 1e15", "unknown",
     "tokens per iteration of the whole job, for tokens/s", E},
    {"--moe-imbalance", F_EMU_ROUTING, "balanced, a number from 1 up, or a CSV file of per-expert tokens", "balanced",
     "routing model of histograms read back (bincount, histc): expert 0's tokens x the average (or each's)", E},
    {"--profile", F_PROFILE, NULL, "off", "on a GPU: measure kernel times into --kernel-db", E},
    {"--profile-on-emulator", F_PROFILE_EMULATED, NULL, "off", "the profiler in front of the emulator (a check)", E},
};
#undef P
#undef E
#undef J
#define NFLAGS (sizeof flags / sizeof flags[0])

/* The flag of that name the command accepts (scope): a name may mean different things to two
 * commands (--profile: predict's calibration profile, emulate's kernel profiler). */
static const flag_def *find_flag(const char *arg, size_t len, unsigned scope)
{
    for (size_t i = 0; i < NFLAGS; i++)
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, arg, len) == 0 && (flags[i].scope & scope))
            return &flags[i];
    return NULL;
}

static int bad_value(const flag_def *f, const char *val, orr_err *err)
{
    char q[80];
    orr_quote(val, q, sizeof q);
    return orr_fail(err, "%s: expected %s, got %s", f->name, f->expects, q);
}

static int parse_count(const flag_def *f, const char *val, uint32_t *out, orr_err *err)
{
    uint64_t v;
    if (orr_parse_u64(val, &v) || v == 0 || v > UINT32_MAX) return bad_value(f, val, err);
    *out = (uint32_t)v;
    return 0;
}

/* --pp-layers 15,16,...: one positive count per virtual stage, in model order. */
static int parse_pp_layers(const flag_def *f, const char *val, orr_spec *s, orr_err *err)
{
    uint32_t k = 0;
    const char *p = val;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char num[24];
        uint64_t v;
        if (len == 0 || len >= sizeof num) return bad_value(f, val, err);
        memcpy(num, p, len);
        num[len] = 0;
        if (orr_parse_u64(num, &v) || v == 0 || v > UINT32_MAX) return bad_value(f, val, err);
        if (k == ORR_PP_LAYERS_MAX)
            return orr_fail(err, "%s: more than %d layer counts", f->name, ORR_PP_LAYERS_MAX);
        s->pp_layers[k++] = (uint32_t)v;
        if (!comma) break;
        p = comma + 1;
    }
    s->npp_layers = k;
    return 0;
}

/* --recompute-modules layernorm,moe_act: Megatron-Core's module names, each at most once. */
static int parse_recompute_modules(const flag_def *f, const char *val, orr_spec *s, orr_err *err)
{
    uint32_t set = 0, bit;
    const char *p = val;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[24];
        if (len == 0 || len >= sizeof name) return bad_value(f, val, err);
        memcpy(name, p, len);
        name[len] = 0;
        if (orr_recompute_module_parse(name, &bit)) return bad_value(f, val, err);
        if (set & bit) return orr_fail(err, "%s: %s is listed twice", f->name, name);
        set |= bit;
        if (!comma) break;
        p = comma + 1;
    }
    s->recompute_modules = set;
    return 0;
}

/* --model takes a file if it names one, or looks like one (so a typo in a path is not reported as
 * an unknown model). */
static int looks_like_file(const char *val)
{
    struct stat st;
    size_t n = strlen(val);
    if (stat(val, &st) == 0 && S_ISREG(st.st_mode)) return 1;
    return (n > 5 && strcasecmp(val + n - 5, ".yaml") == 0) || (n > 4 && strcasecmp(val + n - 4, ".yml") == 0);
}

/* A catalog lookup whose error is prefixed with the flag. */
static int flag_lookup(const flag_def *f, int rc, const orr_err *e, orr_err *err)
{
    if (rc) return orr_fail(err, "%s: %s", f->name, e->msg);
    return 0;
}

static int unknown_flag(const char *arg, size_t len, unsigned scope, orr_err *err)
{
    char name[64], q[80], hint[160];
    snprintf(name, sizeof name, "%.*s", (int)(len < 60 ? len : 60), arg);
    orr_quote(name, q, sizeof q);
    const char *names[NFLAGS];
    size_t n = 0;
    for (size_t i = 0; i < NFLAGS; i++)
        if (flags[i].scope & scope) names[n++] = flags[i].name;
    orr_did_you_mean(name, names, n, hint, sizeof hint);
    return orr_fail(err, "unknown flag %s (%severy flag: `orrery %s --help`)", q, hint,
                    scope & SC_EMULATE ? "emulate" : "predict");
}

/* A value of the flag that must be a rate in Gb/s. */
static int parse_gbps(const flag_def *f, const char *val, double *out, orr_err *err)
{
    double d;
    if (orr_parse_num(val, &d) || !(d > 0) || d > 1e7) return bad_value(f, val, err);
    *out = d;
    return 0;
}

/* A path value that must fit its buffer. */
static int copy_path(const flag_def *f, const char *val, char *dst, size_t cap, orr_err *err)
{
    if (strlen(val) >= cap) return orr_fail(err, "%s: path longer than %zu characters", f->name, cap - 1);
    strcpy(dst, val);
    return 0;
}

/* --cluster NAME, or --cluster FILE holding cluster fields with base: NAME (docs/spec.md). */
static int apply_cluster(orr_spec *s, const flag_def *f, const char *val, orr_err *err)
{
    orr_err e;
    if (!looks_like_file(val)) return flag_lookup(f, orr_catalog_cluster(val, &s->cluster, &e), &e, err);
    orr_ydoc doc;
    if (orr_yaml_load_file(&doc, val, err)) return -1;
    int rc = doc.root ? orr_cluster_from_yaml(&s->cluster, doc.root, err)
                      : orr_fail(err, "%s: empty cluster file (expected cluster fields with base: NAME)", val);
    orr_yaml_free(&doc);
    return rc;
}

/* Applies one flag with its value (NULL for on/off flags). gpn receives --gpus-per-node. */
static int apply_flag(orr_spec *s, const flag_def *f, const char *val, uint32_t *gpn, orr_err *err)
{
    orr_err e;
    double d;
    switch (f->id) {
    case F_FRAMEWORK:
        if (orr_framework_parse(val, &s->framework)) return bad_value(f, val, err);
        s->framework_set = 1;
        return 0;
    case F_MODEL:
        if (orr_model_is_hf_path(val)) return orr_model_load_hf(&s->model, val, err);
        if (looks_like_file(val)) return orr_model_load_file(&s->model, val, err);
        return flag_lookup(f, orr_catalog_model(val, &s->model, &e), &e, err);
    case F_GPU: return flag_lookup(f, orr_catalog_gpu(val, &s->gpu, &e), &e, err);
    case F_CLUSTER: return apply_cluster(s, f, val, err);
    case F_NIC_GBPS: return parse_gbps(f, val, &s->hw_flags.nic_gbps, err);
    case F_NVLINK_GBPS: return parse_gbps(f, val, &s->hw_flags.nvlink_gbps, err);
    case F_NICS_PER_NODE: return parse_count(f, val, &s->hw_flags.nics_per_node, err);
    case F_TRACE_DIR: return copy_path(f, val, s->emu.trace_dir, sizeof s->emu.trace_dir, err);
    case F_KERNEL_DB: return copy_path(f, val, s->emu.kernel_db, sizeof s->emu.kernel_db, err);
    case F_LIB_DIR: return copy_path(f, val, s->emu.lib_dir, sizeof s->emu.lib_dir, err);
    case F_NO_DEDUP: s->emu.no_dedup = 1; return 0;
    case F_NO_HOST_TIME: s->emu.no_host_time = 1; return 0;
    case F_LIVE: s->emu.live = 1; return 0;
    case F_PROFILE: s->emu.profile = 1; return 0;
    case F_PROFILE_EMULATED: s->emu.profile = 2; return 0;
    case F_HW_PROFILE: return orr_hw_profile_load(&s->profile, val, err);
    case F_EMU_ROUTING: /* checked and turned into the libraries' form by orr_emu_routing (emulate.c) */
        if (!orr_parse_num(val, &d) && (!(d >= 1) || d > 1e6)) return bad_value(f, val, err);
        return copy_path(f, val, s->emu.routing, sizeof s->emu.routing, err);
    case F_TOKENS:
        if (orr_parse_num(val, &d) || !(d > 0) || d > 1e15) return bad_value(f, val, err);
        s->emu.tokens = d;
        return 0;
    case F_GPUS: return parse_count(f, val, &s->gpus, err);
    case F_GPUS_PER_NODE: return parse_count(f, val, gpn, err);
    case F_TP: return parse_count(f, val, &s->tp, err);
    case F_PP: return parse_count(f, val, &s->pp, err);
    case F_DP: return parse_count(f, val, &s->dp, err);
    case F_VPP: return parse_count(f, val, &s->vpp, err);
    case F_PP_FIRST: return parse_count(f, val, &s->pp_first_layers, err);
    case F_PP_LAST: return parse_count(f, val, &s->pp_last_layers, err);
    case F_PP_LAYERS: return parse_pp_layers(f, val, s, err);
    case F_PP_ACCOUNT_EMB: s->pp_account_embedding = 1; return 0;
    case F_PP_ACCOUNT_LOSS: s->pp_account_loss = 1; return 0;
    case F_SAC_OPTION:
        if (strcasecmp(val, "op") == 0) return s->sac_every = 0, 0;
        return parse_count(f, val, &s->sac_every, err);
    case F_RECOMPUTE_MODULES: return parse_recompute_modules(f, val, s, err);
    case F_MBS: return parse_count(f, val, &s->mbs, err);
    case F_GBS: return parse_count(f, val, &s->gbs, err);
    case F_LBS: return parse_count(f, val, &s->lbs, err);
    case F_SEQ: return parse_count(f, val, &s->seq, err);
    case F_SP: s->sp = 1; return 0;
    case F_NO_SP: s->sp = 0; return 0;
    case F_DIST_OPT: s->dist_opt = 1; return 0;
    case F_NO_DIST_OPT: s->dist_opt = 0; return 0;
    case F_JSON: s->json = 1; return 0;
    case F_QUIET: s->quiet = 1; return 0;
    case F_GRAD_BF16: s->grad_reduce_bf16 = 1; return 0;
    case F_PRECISION_AWARE: s->precision_aware_opt = 1; return 0;
    case F_MAIN_PARAMS_DT:
    case F_EXP_AVG_DT:
    case F_EXP_AVG_SQ_DT:
    case F_MAIN_GRADS_DT: {
        orr_opt_state st = f->id == F_MAIN_PARAMS_DT ? ORR_OPT_MAIN_PARAMS
                         : f->id == F_EXP_AVG_DT     ? ORR_OPT_EXP_AVG
                         : f->id == F_EXP_AVG_SQ_DT  ? ORR_OPT_EXP_AVG_SQ
                                                     : ORR_OPT_MAIN_GRADS;
        return orr_opt_dtype_parse(st, val, &s->opt_dtype[st]) ? bad_value(f, val, err) : 0;
    }
    case F_FP8_PARAM: s->fp8_param_gather = 1; return 0;
    case F_TP_COMM_OVERLAP: s->tp_comm_overlap = 1; return 0;
    case F_NO_TP_COMM_OVERLAP: s->tp_comm_overlap = 0; return 0;
    case F_NO_P2P_OVERLAP: s->overlap_p2p_comm = 0; return 0;
    case F_NO_ASYNC_TP_AR: s->async_tp_allreduce = 0; return 0;
    case F_NO_ACT_FUSION: s->bias_activation_fusion = 0; return 0;
    case F_NO_SYMMETRY: s->symmetry = 0; return 0;
    case F_RECOMPUTE:
        for (int r = ORR_RECOMPUTE_NONE; r <= ORR_RECOMPUTE_FULL; r++)
            if (strcasecmp(val, orr_recompute_name((orr_recompute)r)) == 0) return s->recompute = (orr_recompute)r, 0;
        return bad_value(f, val, err);
    case F_ATTENTION:
        if (strcasecmp(val, "flash") == 0) s->attention = ORR_ATTN_FLASH;
        else if (strcasecmp(val, "unfused") == 0) s->attention = ORR_ATTN_UNFUSED;
        else if (strcasecmp(val, "cudnn") == 0) s->attention = ORR_ATTN_CUDNN;
        else return bad_value(f, val, err);
        return 0;
    case F_PRECISION:
        if (strcasecmp(val, "bf16") == 0) s->precision = ORR_BF16;
        else if (strcasecmp(val, "fp16") == 0) s->precision = ORR_FP16;
        else if (strcasecmp(val, "fp8") == 0) s->precision = ORR_FP8;
        else if (strcasecmp(val, "mxfp8") == 0) s->precision = ORR_MXFP8;
        else if (strcasecmp(val, "nvfp4") == 0) s->precision = ORR_NVFP4;
        else return bad_value(f, val, err);
        return 0;
    case F_FP8_RECIPE:
        for (int r = ORR_FP8_TENSORWISE; r <= ORR_FP8_BLOCKWISE; r++)
            if (strcasecmp(val, orr_fp8_recipe_name((orr_fp8_recipe)r)) == 0)
                return s->fp8_recipe = (orr_fp8_recipe)r, s->fp8_recipe_set = 1, 0;
        return bad_value(f, val, err);
    case F_TRACE: return copy_path(f, val, s->trace_path, sizeof s->trace_path, err);
    case F_HTML: return copy_path(f, val, s->html_path, sizeof s->html_path, err);
    case F_CP: return parse_count(f, val, &s->cp, err);
    case F_EP: return parse_count(f, val, &s->ep, err);
    case F_MOE_SHARED_OVERLAP: s->moe_shared_expert_overlap = 1; return 0;
    case F_MOE_A2A_OVERLAP: s->moe_a2a_overlap = 1; return 0;
    case F_FSDP_STRATEGY:
        for (int x = ORR_FSDP_OPTIM_GRADS_PARAMS; x <= ORR_FSDP_OPTIM_GRADS; x++)
            if (strcasecmp(val, orr_fsdp_strategy_name((orr_fsdp_strategy)x)) == 0)
                return s->fsdp_strategy = (orr_fsdp_strategy)x, s->fsdp_strategy_set = 1, 0;
        return bad_value(f, val, err);
    case F_ETP: return parse_count(f, val, &s->etp_given, err);
    case F_MOE_DISPATCHER:
        for (int k = ORR_MOE_ALLTOALL; k <= ORR_MOE_DEEPEP; k++)
            if (strcasecmp(val, orr_moe_dispatcher_name((orr_moe_dispatcher)k)) == 0)
                return s->moe_dispatcher = (orr_moe_dispatcher)k, 0;
        return bad_value(f, val, err);
    case F_MOE_ROUTING:
        for (int k = ORR_MOE_ROUTE_RANDOM; k <= ORR_MOE_ROUTE_ROUND_ROBIN; k++)
            if (strcasecmp(val, orr_moe_routing_name((orr_moe_routing)k)) == 0)
                return s->moe_routing = (orr_moe_routing)k, 0;
        return bad_value(f, val, err);
    case F_MOE_CAPACITY:
        if (orr_parse_num(val, &d) || !(d > 0) || d > 1000) return bad_value(f, val, err);
        s->moe_capacity_factor = d;
        return 0;
    case F_MOE_IMBALANCE:
        s->moe_load_file[0] = 0;
        if (strcasecmp(val, "balanced") == 0) d = 1.0;
        else if (orr_parse_num(val, &d)) return copy_path(f, val, s->moe_load_file, sizeof s->moe_load_file, err);
        else if (!(d >= 1) || d > 1e6) return bad_value(f, val, err);
        s->moe_imbalance = d;
        return 0;
    case F_FSDP: return parse_count(f, val, &s->fsdp, err);
    case F_ZERO: {
        uint64_t z;
        if (orr_parse_u64(val, &z) || z > 3) return bad_value(f, val, err);
        s->zero = (uint32_t)z;
        return 0;
    }
    case F_RESHARD: s->reshard_after_forward = 1; return 0;
    case F_NO_RESHARD: s->reshard_after_forward = 0; return 0;
    case F_FP8_AG: s->fp8_allgather = 1; return 0;
    case F_BF16_PARAMS: s->bf16_params = 1; return 0;
    case F_PLAIN_EXPERTS: s->plain_experts = 1; return 0;
    case F_COMPILE: s->compile = 1; return 0;
    case F_NO_COMPILE: s->compile = 0; return 0;
    case F_COMPILE_LOSS: s->compile_loss = 1; return 0;
    case F_NO_COMPILE_LOSS: s->compile_loss = 0; return 0;
    case F_CACHING: s->caching_allocator = 1; return 0;
    case F_NO_CACHING: s->caching_allocator = 0; return 0;
    case F_EXPANDABLE: s->expandable_segments = 1; return 0;
    case F_MEM_CAPACITY: {
        static const struct { const char *unit; double mul; } units[] = {
            {"GiB", 1073741824.0}, {"GB", 1e9}, {"MiB", 1048576.0}, {"MB", 1e6}, {"TiB", 1099511627776.0}};
        size_t n = strlen(val);
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
            size_t k = strlen(units[u].unit);
            if (n <= k || strcmp(val + n - k, units[u].unit) != 0) continue;
            char num[64];
            if (n - k >= sizeof num) break;
            memcpy(num, val, n - k);
            num[n - k] = 0;
            if (orr_parse_num(num, &d) || !(d > 0) || d * units[u].mul > 1e15) break;
            s->mem_capacity_bytes = (uint64_t)(d * units[u].mul + 0.5);
            return 0;
        }
        return bad_value(f, val, err);
    }
    case F_NET: return orr_net_kind_parse(val, &s->net) ? bad_value(f, val, err) : 0;
    case F_TOPOLOGY:
        if (orr_topo_kind_parse(val, &s->topo.kind)) return bad_value(f, val, err);
        s->topology_set = 1;
        return 0;
    case F_TOPOLOGY_FILE:
        if (copy_path(f, val, s->topo.path, sizeof s->topo.path, err)) return -1;
        if (!s->topology_set) s->topo.kind = ORR_TOPO_HPCC;
        s->topology_set = 1;
        return 0;
    case F_OVERSUB:
        if (orr_parse_num(val, &d) || !(d >= 1) || d > 1000) return bad_value(f, val, err);
        s->topo.oversub = d;
        return 0;
    case F_PXN: s->pxn = 1; return 0;
    case F_CC:
        return orr_cc_parse(val, &s->cc) ? bad_value(f, val, err) : 0;
    case F_PACKET_PAYLOAD: {
        uint64_t v;
        if (orr_parse_u64(val, &v) || v < ORR_PACKET_PAYLOAD_MIN || v > ORR_PACKET_PAYLOAD_MAX)
            return bad_value(f, val, err);
        s->packet_payload_bytes = (uint32_t)v;
        return 0;
    }
    case F_NO_PXN: s->pxn = 0; return 0;
    case F_NO_ACCEL: s->no_accel = 1; return 0;
    case F_ACCEL: s->no_accel = 0; return 0;
    case F_NO_MEMO: s->no_memo = 1; return 0;
    case F_MEMO: return copy_path(f, val, s->memo_path, sizeof s->memo_path, err);
    case F_SS_THETA:
        if (orr_parse_num(val, &d) || !(d > 0 && d < 1)) return bad_value(f, val, err);
        s->ss_theta = d;
        return 0;
    case F_SS_WINDOW: {
        uint64_t v;
        if (orr_parse_u64(val, &v) || v < ORR_SS_WINDOW_MIN || v > ORR_SS_WINDOW_MAX) return bad_value(f, val, err);
        s->ss_window = (uint32_t)v;
        return 0;
    }
    case F_PACKET_SEED:
        if (orr_parse_u64(val, &s->packet_seed) || s->packet_seed == 0) return bad_value(f, val, err);
        return 0;
    case F_LAUNCH_US:
        if (orr_parse_num(val, &d) || d < 0 || d > 1e6) return bad_value(f, val, err);
        s->launch_ps = (int64_t)(d * ORR_PS_PER_US + 0.5);
        return 0;
    case F_VARIABILITY:
        if (strcasecmp(val, "none") == 0) d = 0;
        else if (orr_parse_num(val, &d) || !(d >= 0) || d > ORR_VARIABILITY_MAX) return bad_value(f, val, err);
        s->variability = d;
        return 0;
    case F_VARIABILITY_SEED:
        if (orr_parse_num(val, &d) || !(d >= 0) || d > 1e18 || d != (double)(uint64_t)d) return bad_value(f, val, err);
        s->variability_seed = (uint64_t)d;
        return 0;
    }
    return orr_fail(err, "%s: internal error: flag without a handler", f->name);
}

/* job: s is one job of a multi-job spec; the flags that are the top level's own (the cluster's GPU
 * count, the output) are left to it. scope: the command's (SC_PREDICT or SC_EMULATE). */
static int apply_flags_to(orr_spec *s, int argc, char **argv, int job, unsigned scope, orr_err *err)
{
    uint32_t gpn = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (!arg || strncmp(arg, "--", 2) != 0) {
            char q[80];
            orr_quote(arg ? arg : "", q, sizeof q);
            return orr_fail(err, "unexpected argument %s (flags start with --)", q);
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const flag_def *f = find_flag(arg, len, scope);
        if (!f) return unknown_flag(arg, len, scope, err);
        const char *val = NULL;
        if (f->expects) {
            if (eq) val = eq + 1;
            else if (i + 1 < argc && argv[i + 1] && strncmp(argv[i + 1], "--", 2) != 0) val = argv[++i];
            if (!val || !*val) return orr_fail(err, "%s: missing value (%s)", f->name, f->expects);
        } else if (eq) {
            return orr_fail(err, "%s takes no value", f->name);
        }
        if (!job && s->njobs && !(f->scope & SC_JOBS)) {
            orr_buf list = {0};
            for (size_t k = 0; k < NFLAGS; k++)
                if (flags[k].scope & SC_JOBS) orr_buf_printf(&list, "%s%s", list.n ? " " : "", flags[k].name);
            int rc = orr_fail(err, "%s: the spec has jobs:, so this is set per job in the spec file (jobs[].*); "
                                   "flags may set only what the jobs share: %s", f->name, list.s);
            orr_buf_free(&list);
            return rc;
        }
        if (job && (f->id == F_GPUS || f->id == F_JSON || f->id == F_TRACE || f->id == F_HTML)) continue;
        if (apply_flag(s, f, val, &gpn, err)) return -1;
    }
    /* --gpus-per-node applies to the cluster in effect after all the flags, whatever their order. If
     * none is named yet, it is kept in the unnamed cluster for resolve to apply to the default. */
    if (gpn) s->cluster.gpus_per_node = gpn;
    return 0;
}

int orr_spec_apply_flags(orr_spec *s, int argc, char **argv, orr_err *err)
{
    if (apply_flags_to(s, argc, argv, 0, SC_PREDICT, err)) return -1;
    for (uint32_t j = 0; j < s->njobs; j++)
        if (apply_flags_to(&s->jobs[j].s, argc, argv, 1, SC_PREDICT, err)) return -1;
    return 0;
}

int orr_spec_apply_emulate_flags(orr_spec *s, int argc, char **argv, orr_err *err)
{
    return apply_flags_to(s, argc, argv, 0, SC_EMULATE, err);
}

/* ---- The flag table for help and for the docs check ---- */

static unsigned scope_of(const char *command)
{
    if (!command || strcmp(command, "predict") == 0) return SC_PREDICT;
    if (strcmp(command, "emulate") == 0) return SC_EMULATE;
    return 0;
}

size_t orr_flag_count(void) { return NFLAGS; }

int orr_flag_info_at(size_t i, orr_flag_info *out)
{
    if (i >= NFLAGS) return -1;
    out->name = flags[i].name;
    out->expects = flags[i].expects;
    out->def = flags[i].def;
    out->help = flags[i].help;
    out->predict = (flags[i].scope & SC_PREDICT) != 0;
    out->emulate = (flags[i].scope & SC_EMULATE) != 0;
    out->jobs = (flags[i].scope & SC_JOBS) != 0;
    return 0;
}

/* "--tp N": a short value name for the usage column, from what the value must be. */
static const char *value_word(const flag_def *f)
{
    if (!f->expects) return "";
    if (strcmp(f->expects, COUNT) == 0) return " N";
    if (strstr(f->expects, "catalog") && strstr(f->expects, "file")) return " NAME|FILE";
    if (strstr(f->expects, "file") || strstr(f->expects, "path")) return " FILE";
    if (strstr(f->expects, "directory")) return " DIR";
    if (strstr(f->expects, "Gb/s")) return " GBPS";
    if (strstr(f->expects, "memory size")) return " SIZE";
    if (strstr(f->expects, "microseconds")) return " US";
    if (strstr(f->expects, "bytes")) return " BYTES";
    if (strstr(f->expects, "ratio")) return " R";
    if (strstr(f->expects, "tokens")) return " T";
    if (strstr(f->expects, "comma")) return " N,N,...";
    if (strstr(f->expects, "catalog")) return " NAME";
    return " X";
}

int orr_flags_help(const char *command, orr_buf *out)
{
    unsigned scope = scope_of(command);
    if (!scope) return -1;
    for (size_t i = 0; i < NFLAGS; i++) {
        const flag_def *f = &flags[i];
        if (!(f->scope & scope)) continue;
        char use[64];
        snprintf(use, sizeof use, "%s%s", f->name, value_word(f));
        orr_buf_printf(out, "  %-38s %s", use, f->help);
        if (f->expects) orr_buf_printf(out, "; %s", f->expects);
        if (f->def) orr_buf_printf(out, " [default: %s]", f->def);
        orr_buf_puts(out, "\n");
    }
    return 0;
}
