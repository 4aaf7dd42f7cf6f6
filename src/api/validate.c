/*
 * validate.c - predicting the published training measurements of data/validation (validate.h).
 *
 * Each row's model shape, parallel degrees, GPU count and batch come from the csv; what the source
 * leaves unstated is assumed the same way for every row of a set (its `assumptions`). Each set says
 * whether its rows were used to fit a calibration constant (docs/models.md section 6: gemm_eff and
 * the attention and memory efficiencies of GA100 and GH100 were fitted on the two Megatron-LM sets)
 * or were never used for fitting (held out), and the report gives the median error of each kind.
 * Compared quantities:
 *   Megatron-Core H100 rows: TFLOP/s per GPU by num_floating_point_operations,
 *     72 B s L h^2 (1 + s/6h + V/12Lh);
 *   Selene rows: TFLOP/s per GPU by Narayanan et al. 2021, 96 B s L h^2 (1 + s/6h + V/16Lh), which
 *     counts the full activation recomputation those runs used;
 *   NeMo 24.07 and Megatron-LM's Llama 3 FP8 example: tokens/s per GPU (no FLOP convention needed);
 *   Megatron-LM's 2020 scaling cases: iteration time, as throughput (published / predicted time);
 *   the Ultra-Scale Playbook's nanotron TP scaling: tokens/s per GPU (framework nanotron);
 *   DeepSpeed's Azure ZeRO-3 rows: TFLOP/s per GPU by the post's 96 B s L h^2 (1 + s/6h + V/16Lh)
 *     (framework deepspeed).
 */
#include "orrery/validate.h"
#include "orrery/csv.h"
#include "orrery/orrery.h"
#include "orrery/estimate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum metric { M_TFLOPS, M_TOKENS, M_ITER_MS } metric;

typedef struct set_def set_def;
/* Fills the spec of row r; returns 1 to leave the row out (with why in *skip), -1 on error. */
typedef int (*row_fn)(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err);

struct set_def {
    const char *file;
    const char *title;
    const char *convention;   /* what is compared */
    const char *assumptions;
    int fitted;               /* 1: the rows were used to fit calibration constants; 0: held out */
    metric m;
    const char *col;          /* the published value's column */
    row_fn row;
    double flops_factor, vocab_div; /* M_TFLOPS: 72 and 12, or 96 and 16 */
    const char *max_mbs_col;  /* the largest micro-batch that ran (orr_validate_max_batch), or NULL */
    orr_attention attention;  /* recipe_row, mbridge_row: the attention kernels' rate, by the software's date
                               * (docs/models.md "Attention kernels"): FlashAttention-2's level for releases
                               * before 2025, cuDNN's as measured since */
};

/* The first column of the row being read whose value is not a whole number below 2^32 (NULL: none):
 * a count such as gpus = 2^32 + 48 must not be read as 48. Reset by orr_validate for each row. */
static _Thread_local const char *bad_count;

/* A count column of row r; an empty cell reads 0 (the row functions treat 0 as "not given"). */
static uint32_t csv_u32(const orr_csv *t, int r, const char *col)
{
    const char *text = orr_csv_get(t, r, col);
    double v = orr_csv_num(t, r, col);
    if (text && *text && !(v >= 0 && v < 4294967296.0 && v == floor(v))) {
        if (!bad_count) bad_count = col;
        return 0;
    }
    return v >= 0 && v < 4294967296.0 ? (uint32_t)v : 0;
}

static void gpt_model(orr_model *m, const char *name, const orr_csv *t, int r, const char *layers_col, int tied)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->layers = csv_u32(t, r, layers_col);
    m->hidden = csv_u32(t, r, "hidden");
    m->heads = m->kv_heads = csv_u32(t, r, "heads");
    m->head_dim = m->heads ? m->hidden / m->heads : 0;
    m->ffn = 4 * m->hidden;
    m->vocab = csv_u32(t, r, "vocab");
    m->seq = csv_u32(t, r, "seq_len");
    m->tied_embeddings = tied;
    m->bias = 1;
}

/* The csv's degrees, GPUs and batch; the hardware of the set. */
static int common(const orr_csv *t, int r, orr_spec *s, const char *gpu, const char *cluster, orr_err *err)
{
    s->framework = ORR_FW_MEGATRON; /* every set here is Megatron-LM's or NeMo's (Megatron-Core) */
    s->framework_set = 1;
    if (orr_catalog_gpu(gpu, &s->gpu, err) < 0 || orr_catalog_cluster(cluster, &s->cluster, err) < 0) return -1;
    s->tp = csv_u32(t, r, "tp");
    s->pp = csv_u32(t, r, "pp");
    s->gpus = csv_u32(t, r, "gpus");
    return 0;
}

static int megatron_h100_row(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err)
{
    (void)d, (void)skip;
    gpt_model(&s->model, orr_csv_get(t, r, "model"), t, r, "num_layers", 0);
    if (common(t, r, s, "H100-SXM", "dgx-h100", err) < 0) return -1;
    s->dp = csv_u32(t, r, "dp");
    s->gbs = csv_u32(t, r, "global_batch_seqs");
    s->seq = s->model.seq;
    /* The table does not state the micro-batch. NVIDIA's own performance recipes for these models
     * (NeMo-Framework-Launcher conf/training/gpt3/{5b,20b}_bf16_performance.yaml: PP 1,
     * micro_batch_size 4; 175b_performance.yaml: PP 8, micro_batch_size 1) use 4 without pipeline
     * parallelism and 1 with it; docs/models.md section 6 says why 1 cannot be right for PP 1. */
    s->mbs = s->pp == 1 ? 4 : 1;
    if (s->pp == 1 && (s->dp == 0 || s->gbs % (s->dp * s->mbs) != 0))
        return orr_fail(err, "%s row %d (%s): global_batch_seqs %u is not a multiple of dp x 4 (the "
                        "micro-batch assumed without pipeline parallelism)", t->path, r, s->model.name, s->gbs);
    s->sp = s->tp > 1;
    s->dist_opt = 1;
    s->tp_comm_overlap = 1;
    s->precision = ORR_BF16;
    return 0;
}

static int selene_row(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err)
{
    (void)d;
    if (strcmp(orr_csv_get(t, r, "table_version"), "April-2021") != 0) return *skip = "not the April-2021 table", 1;
    gpt_model(&s->model, orr_csv_get(t, r, "model"), t, r, "num_layers", 1);
    if (common(t, r, s, "A100-SXM4-80GB", "dgx-a100", err) < 0) return -1;
    s->dp = csv_u32(t, r, "dp");
    s->gbs = csv_u32(t, r, "global_batch_seqs");
    s->mbs = 1;
    s->seq = s->model.seq;
    s->recompute = ORR_RECOMPUTE_FULL;
    s->precision = ORR_FP16;
    s->attention = ORR_ATTN_UNFUSED;
    return 0;
}

/* NeMo's and Megatron-LM's names for the models both recipe sets train: a catalog model, or the
 * shape of NeMo-Framework-Launcher's conf/training/gpt3/{5b,20b}_fp8_performance.yaml (GPT-2 BPE
 * vocabulary, 4h GeLU MLP, learned positions, biases). NULL: no known shape (Nemotron). */
static const char *catalog_name(const char *model, orr_model *custom)
{
    static const struct { const char *csv, *catalog; } names[] = {
        {"GPT3-175B", "gpt3-175b"}, {"LLAMA2-7B", "llama2-7b"}, {"LLAMA2-13B", "llama2-13b"},
        {"LLAMA2-70B", "llama2-70b"}, {"LLAMA3-8B", "llama3-8b"}, {"LLAMA3-70B", "llama3-70b"},
        {"Llama3-8B", "llama3-8b"}, {"Llama3-70B", "llama3-70b"}, {"Llama3-405B", "llama3-405b"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(model, names[i].csv) == 0) return names[i].catalog;
    static const struct { const char *csv; uint32_t layers, hidden, heads; } gpt[] = {
        {"GPT3-5B", 24, 4096, 32}, {"GPT3-20B", 44, 6144, 48}};
    for (size_t i = 0; i < sizeof gpt / sizeof gpt[0]; i++)
        if (strcmp(model, gpt[i].csv) == 0) {
            orr_err e;
            if (orr_catalog_model("gpt3-175b", custom, &e) < 0) return NULL;
            snprintf(custom->name, sizeof custom->name, "%s", model);
            custom->layers = gpt[i].layers;
            custom->hidden = gpt[i].hidden;
            custom->heads = custom->kv_heads = gpt[i].heads;
            custom->head_dim = gpt[i].hidden / gpt[i].heads;
            custom->ffn = 4 * gpt[i].hidden;
            return "";
        }
    return NULL;
}

/* A NeMo-style row's batch, sequence, cp and vp ("n/a" or empty: 1). */
static void recipe_batch(const orr_csv *t, int r, orr_spec *s)
{
    s->gbs = csv_u32(t, r, "gbs");
    s->mbs = csv_u32(t, r, "mbs");
    s->seq = csv_u32(t, r, "seq_len");
    double cp = orr_csv_num(t, r, "cp"), vp = orr_csv_num(t, r, "vp");
    s->cp = cp > 1 ? (uint32_t)cp : 1;
    s->vpp = vp > 1 ? (uint32_t)vp : 1;
}

/* NeMo 24.07's performance summary and Megatron-LM's examples/llama FP8 rows: Megatron-Core with
 * Transformer Engine FP8 (hybrid), the distributed optimizer with overlapped reduce-scatter and
 * all-gather, SP and TP communication overlap with TP > 1; mbs, vp, cp as published; selective
 * recompute for GPT-3 (the launcher's gpt3 *_fp8_performance.yaml), none for Llama; gradients in
 * bf16; FP8 parameters for Llama (Megatron-LM's train_llama3_8b_h100_fp8.sh). */
static int recipe_row(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err)
{
    if (orr_csv_col(t, "task") >= 0 && strcmp(orr_csv_get(t, r, "task"), "pretrain") != 0)
        return *skip = "fine-tuning (packed sequences, LoRA adapters): not modelled", 1;
    orr_model custom;
    const char *name = catalog_name(orr_csv_get(t, r, "model"), &custom);
    if (!name) return *skip = "model shape not known (Nemotron)", 1;
    if (name[0]) {
        if (orr_catalog_model(name, &s->model, err) < 0) return -1;
    } else {
        s->model = custom;
    }
    if (common(t, r, s, "H100-SXM", "dgx-h100", err) < 0) return -1;
    recipe_batch(t, r, s);
    s->sp = s->tp > 1;
    s->tp_comm_overlap = s->tp > 1;
    s->dist_opt = 1;
    s->precision = ORR_FP8;
    s->fp8_recipe = ORR_FP8_DELAYED; /* an amax history: the launcher's fp8_amax_history_len, the script's too */
    int gpt = strncmp(s->model.name, "gpt3", 4) == 0 || strncmp(s->model.name, "GPT3", 4) == 0;
    s->recompute = gpt ? ORR_RECOMPUTE_SELECTIVE : ORR_RECOMPUTE_NONE;
    /* gradients reduced in bf16: the launcher's gpt3 configs (grad_sync_dtype: bf16) and Megatron-LM's
     * train_llama3_8b_h100_fp8.sh (--grad-reduce-in-bf16), which "follows NeMo performance scripts";
     * FP8 parameters (--fp8-param-gather) as that script keeps them, for the Llama rows */
    s->grad_reduce_bf16 = 1;
    s->fp8_param_gather = !gpt;
    s->attention = d->attention;
    return 0;
}

/* Megatron-LM's 2020 README scaling cases on DGX A100 (the V100 rows need a V100 in the catalog):
 * the code of the time, fp16, checkpointed activations, unfused attention, no SP, no distributed
 * optimizer; `batch` is the global batch, the micro-batch batch / dp (no accumulation). */
static int megatron2020_row(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err)
{
    (void)d;
    if (strstr(orr_csv_get(t, r, "gpu"), "A100") == NULL) return *skip = "V100: not in the GPU catalog", 1;
    gpt_model(&s->model, orr_csv_get(t, r, "model"), t, r, "num_layers", 1);
    if (common(t, r, s, "A100-SXM4-40GB", "dgx-a100", err) < 0) return -1;
    s->pp = 1;
    s->dp = csv_u32(t, r, "dp");
    s->gbs = csv_u32(t, r, "batch");
    s->mbs = s->dp ? s->gbs / s->dp : 0;
    s->seq = s->model.seq;
    s->recompute = ORR_RECOMPUTE_FULL;
    s->precision = ORR_FP16;
    s->attention = ORR_ATTN_UNFUSED;
    /* Megatron-LM of 2020 (DDP_impl 'local', the default): backward_step runs loss.backward(), then
     * model.allreduce_params(reduce_after=False, fp32_allreduce=args.fp32_allreduce) over the fp16
     * .grad tensors (fp32_allreduce off by default): one all-reduce after the backward, in half
     * precision, nothing overlapped */
    s->overlap_grad_reduce = 0;
    s->grad_reduce_bf16 = 1;
    return 0;
}

/* The Ultra-Scale Playbook's TP scaling runs (nanotron scripts/scaling_benchmarks.py at 2411b022): its
 * "3B" Llama (28 layers, hidden 3072, 32 heads and as many KV heads: NUM_KEY_VALUE_HEADS None, ffn
 * 8192, tied embeddings as for every intermediate_size < 10,000, no biases), DP 1 and one micro-batch
 * per step (batch_accum 1), on AWS p5 (the playbook: "TP > 8 crosses EFA"). SP rows are tp_mode
 * REDUCE_SCATTER with async linears, the others ALL_REDUCE; the SP rows' micro-batch is the one the
 * script's comment says was measured, the TP-only rows', which the source does not give, the largest
 * the figure shows. */
static int nanotron_tp_row(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err)
{
    (void)d, (void)skip;
    orr_model *m = &s->model;
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "3.57B");
    m->layers = csv_u32(t, r, "num_layers");
    m->hidden = csv_u32(t, r, "hidden");
    m->heads = m->kv_heads = csv_u32(t, r, "heads");
    m->head_dim = m->heads ? m->hidden / m->heads : 0;
    m->ffn = csv_u32(t, r, "ffn_hidden");
    m->vocab = csv_u32(t, r, "vocab");
    m->seq = csv_u32(t, r, "seq_len");
    m->gated_mlp = m->rmsnorm = 1;
    m->tied_embeddings = m->ffn < 10000;
    s->framework = ORR_FW_NANOTRON;
    s->framework_set = 1;
    if (orr_catalog_gpu("H100-SXM5-80GB", &s->gpu, err) < 0 || orr_catalog_cluster("aws-p5-efa", &s->cluster, err) < 0)
        return -1;
    s->tp = csv_u32(t, r, "tp");
    s->pp = s->dp = 1;
    s->gpus = s->tp;
    s->sp = strncmp(orr_csv_get(t, r, "experiment"), "TP+SP", 5) == 0; /* not "TP only (no SP)" */
    s->mbs = csv_u32(t, r, "micro_batch");
    if (!s->mbs) s->mbs = csv_u32(t, r, "max_batch_size");
    s->gbs = s->mbs;
    s->seq = m->seq;
    s->precision = ORR_BF16;
    return 0;
}

/* What every Megatron-Bridge row shares: catalog model `name` shown as "<label> <container>", the row's
 * H100 layout, batch, sequence, CP and VP, SP with TP, and the set's attention kernels. */
static int mbridge_common(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char *name, const char *label,
                          orr_err *err)
{
    if (orr_catalog_model(name, &s->model, err) < 0) return -1;
    snprintf(s->model.name, sizeof s->model.name, "%s %s", label, orr_csv_get(t, r, "container"));
    if (common(t, r, s, "H100-SXM", "dgx-h100", err) < 0) return -1;
    recipe_batch(t, r, s);
    s->sp = s->tp > 1;
    s->attention = d->attention;
    return 0;
}

/* The performance scripts' fp8_cs: FP8 with per-tensor current scaling, the parameters kept in FP8. */
static void mbridge_fp8_cs(orr_spec *s)
{
    s->precision = ORR_FP8;
    s->fp8_recipe = ORR_FP8_TENSORWISE;
    s->fp8_param_gather = 1;
}

/* Megatron-Bridge's DGX-H100 performance summaries (NeMo containers 25.09 to 26.06), their dense
 * pre-training rows as the performance scripts of the time configure them (scripts/performance/configs/
 * llama3 and llama31 at 2637e6ca, 2025-11; src/megatron/bridge/perf_recipes/llama/h100 at 067f987d):
 * FP8 with per-tensor current scaling (fp8_cs: Transformer Engine's Float8CurrentScaling, per-tensor,
 * no amax history; first and last layers in FP8 too), FP8 parameters (fp8_param_gather), gradients
 * reduced in bf16 (grad_reduce_in_fp32 False), the distributed optimizer, SP and the userbuffers TP
 * overlap with TP > 1, no recompute; Llama 3 8B over Megatron-FSDP (use_megatron_fsdp, FSDP 8); Llama
 * 3.1 405B's 126 layers split with the embedding and the loss each counted as a layer
 * (account_for_embedding/loss_in_pipeline_split: 64 virtual stages of 2, the first and last of 1);
 * Llama 3 70B evenly (its explicit layout came in August 2026, after these rows); cuDNN's fused
 * attention (2025-2026 software: docs/models.md "Attention kernels"). */
static int mbridge_row(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err)
{
    if (strcmp(orr_csv_get(t, r, "task"), "pretrain") != 0)
        return *skip = "fine-tuning (SFT on packed sequences, LoRA adapters): not modelled", 1;
    const char *model = orr_csv_get(t, r, "model"), *name = NULL;
    if (strcmp(model, "LLAMA3_8B") == 0) name = "llama3-8b";
    else if (strcmp(model, "LLAMA3_70B") == 0) name = "llama3-70b";
    else if (strcmp(model, "LLAMA3.1_405B") == 0) name = "llama3-405b";
    else if (strncmp(model, "Nemotron_3", 10) == 0)
        return *skip = "Nemotron 3 (hybrid Mamba-Transformer MoE): not modelled", 1;
    else
        return *skip = "MoE (set mbridge-moe-h100)", 1;
    const char *size = strrchr(model, '_'); /* "LLAMA3.1_405B" -> "405B 26.06" */
    if (mbridge_common(d, t, r, s, name, size ? size + 1 : model, err) < 0) return -1;
    if (csv_u32(t, r, "fsdp") > 1) s->framework = ORR_FW_MEGATRON_FSDP;
    s->tp_comm_overlap = s->tp > 1;
    s->dist_opt = s->framework == ORR_FW_MEGATRON;
    mbridge_fp8_cs(s);
    s->grad_reduce_bf16 = s->framework == ORR_FW_MEGATRON;
    /* the 405B recipe counts the embedding and the loss as pipeline layers (its 126 layers in 64 virtual
     * stages); the 8B and 70B ones split evenly */
    s->pp_account_embedding = s->pp_account_loss = strcmp(name, "llama3-405b") == 0;
    return 0;
}

/* Megatron-Bridge's DGX-H100 MoE pre-training rows of NeMo 26.02-26.06 (Megatron-Bridge v0.3.0, v0.3.1,
 * v0.4.0, v0.4.1 assumed for 26.04.01, v0.5.0; docs/releases/software-versions.md @067f987d), as
 * scripts/performance/configs/{qwen,gpt_oss} of those tags configure them (set ORR_VALID_MBRIDGE_MOE_H100's
 * assumptions; docs/models.md "Megatron-Bridge's MoE rows"). The 25.09 and 25.11 rows are left out:
 * precision not published or token-dropping runs (25.09), micro-batch and layout of the table not those of
 * the config (25.11). A row the docs list twice is counted once. */
static int mbridge_moe_row(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err)
{
    if (strcmp(orr_csv_get(t, r, "task"), "pretrain") != 0) return *skip = "fine-tuning: not modelled", 1;
    const char *model = orr_csv_get(t, r, "model"), *c = orr_csv_get(t, r, "container"), *name = NULL;
    int q235 = strcmp(model, "Qwen3_235B_a22B") == 0, q30 = strcmp(model, "Qwen3_30B_a3B") == 0,
        oss = strcmp(model, "GPT OSS 120B") == 0;
    if (!q235 && !q30 && !oss)
        return *skip = "dense (set mbridge-h100), Nemotron 3, or DeepSeek-V3 (MTP and its layout not modelled)", 1;
    if (strncmp(c, "25.", 3) == 0)
        return *skip = "25.09/25.11: precision not published or token dropping (25.09); the table's micro-batch and "
                       "layout are not the config's (25.11)", 1;
    if (q30 && (strcmp(c, "26.02") == 0 || strcmp(c, "26.02.01") == 0))
        return *skip = "Qwen3-30B 26.02/26.02.01: DeepEP unsupported in 26.02 (its known issues), what ran is unknown; "
                       "the 26.02.01 table's PP 2 x VP 12, EP 8 is not its config's PP 1, EP 16", 1;
    int dup = r > 1 && r < t->nrows; /* rows[0] is the header */
    for (int k = 0; dup && k < t->ncols; k++) dup = strcmp(t->rows[r][k], t->rows[r - 1][k]) == 0;
    if (dup) return *skip = "listed twice in the docs: counted once", 1;
    name = q235 ? "qwen3-235b-a22b" : q30 ? "qwen3-30b-a3b" : "gpt-oss-120b";
    if (mbridge_common(d, t, r, s, name, q235 ? "Qwen3-235B" : q30 ? "Qwen3-30B" : "GPT-OSS-120B", err) < 0)
        return -1;
    s->ep = csv_u32(t, r, "ep");
    /* the Qwen3 configs' WorkloadBaseConfig sets expert_tensor_parallel_size=1 (Megatron-Core's default
     * would be the tp: 2 for Qwen3-235B); GPT-OSS runs at TP 1 */
    s->etp_given = 1;
    s->dist_opt = 1;
    s->grad_reduce_bf16 = 1;
    /* PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: set by the DGX Cloud launcher from v0.3.0 and for
     * every job from 26.06, not by the Slurm one for these models before; which launcher made the published
     * numbers is not stated (without it the Qwen3-235B rows come out out of memory, 79.6 GiB reserved for
     * 69.0 allocated: the modelled fragmentation alone) */
    s->expandable_segments = 1;
    if (oss) {
        s->recompute = ORR_RECOMPUTE_SELECTIVE;
        s->recompute_modules = ORR_RCM_LAYERNORM | ORR_RCM_MOE_ACT;
        s->moe_dispatcher = ORR_MOE_ALLTOALL;
        return 0;
    }
    mbridge_fp8_cs(s);
    if (q30) {
        s->moe_dispatcher = ORR_MOE_DEEPEP; /* HybridEP */
        return 0;
    }
    s->moe_dispatcher = ORR_MOE_ALLTOALL;
    s->moe_a2a_overlap = 1;
    s->pp_account_embedding = s->pp_account_loss = 1;
    return 0;
}

/* NVIDIA's DGX Cloud benchmarking recipes (NVIDIA/dgxc-benchmarking v25.01, NeMo 24.09 on H100; the
 * CSV's columns come from each recipe's yaml with configure.sh's overrides, data/validation/README.md):
 * NeMo's Megatron-Core GPT with distributed_fused_adam (the distributed optimizer, bf16 gradient
 * reduction), SP and userbuffers TP overlap where the config turns them on, FP8 hybrid with delayed
 * scaling and FP8 weights (fp8_params) on the FP8 rows. The models: Llama 3.1 8B and 70B from the
 * catalog; 405B as the recipe builds it (16 query groups, GPT-2's 50,257-token vocabulary, and 7, 21 or 42
 * layers for the 32-, 96- and 192-GPU proxies); Nemotron-4 15B and 340B from their shapes (LayerNorm,
 * an ungated MLP whose squared ReLU is taken as a GELU of the same shapes, no biases, untied; the partial
 * rotary embedding is not modelled). The 340B recipe's optimizer state is bf16 (dtype: bf16), taken as
 * the precision-aware optimizer's bf16 moments. */
static int dgxc_row(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err)
{
    (void)d, (void)skip;
    orr_model *m = &s->model;
    const char *base = orr_csv_get(t, r, "catalog_base");
    if (base[0]) {
        if (orr_catalog_model(base, m, err) < 0) return -1;
    } else {
        memset(m, 0, sizeof *m);
        m->hidden = csv_u32(t, r, "hidden");
        m->heads = csv_u32(t, r, "heads");
        m->ffn = csv_u32(t, r, "ffn");
        m->head_dim = m->heads ? m->hidden / m->heads : 0;
    }
    snprintf(m->name, sizeof m->name, "%.30s %.8s", orr_csv_get(t, r, "model"), orr_csv_get(t, r, "precision"));
    if (csv_u32(t, r, "num_layers")) m->layers = csv_u32(t, r, "num_layers");
    if (csv_u32(t, r, "kv_heads")) m->kv_heads = csv_u32(t, r, "kv_heads");
    if (csv_u32(t, r, "vocab")) m->vocab = csv_u32(t, r, "vocab");
    m->seq = csv_u32(t, r, "seq_len");
    if (common(t, r, s, "H100-SXM", "dgx-h100", err) < 0) return -1;
    s->cp = csv_u32(t, r, "cp");
    s->vpp = csv_u32(t, r, "vp") ? csv_u32(t, r, "vp") : 1; /* "null": no interleaving */
    s->mbs = csv_u32(t, r, "mbs");
    s->gbs = csv_u32(t, r, "gbs");
    s->seq = m->seq;
    s->sp = s->tp > 1;
    s->tp_comm_overlap = csv_u32(t, r, "tp_comm_overlap") && s->tp > 1;
    s->dist_opt = 1;
    s->grad_reduce_bf16 = 1;
    s->recompute = strncmp(orr_csv_get(t, r, "recompute"), "selective", 9) == 0 ? ORR_RECOMPUTE_SELECTIVE
                                                                               : ORR_RECOMPUTE_NONE;
    /* The kernels' level by the software's date (docs/models.md "Attention kernels"): NeMo 24.09 is a 2024
     * release, predicted at FlashAttention-2's level as NeMo 24.07 and Megatron-Core r0.8.0 are, whichever
     * backend the recipe picks (the `attention` column: cuDNN's but 340B's) */
    s->attention = d->attention;
    if (strcmp(orr_csv_get(t, r, "precision"), "FP8") == 0) {
        s->precision = ORR_FP8;
        s->fp8_recipe = ORR_FP8_DELAYED;
        s->fp8_param_gather = csv_u32(t, r, "fp8_params") != 0;
    }
    if (strcmp(orr_csv_get(t, r, "optimizer_state_dtype"), "bf16") == 0) {
        s->precision_aware_opt = 1;
        s->opt_dtype[ORR_OPT_EXP_AVG] = s->opt_dtype[ORR_OPT_EXP_AVG_SQ] = ORR_BF16;
    }
    return 0;
}

/* The playbook's DP scaling figure states no model, sequence or micro-batch: nothing to predict. */
static int nanotron_dp_row(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err)
{
    (void)d, (void)t, (void)r, (void)s, (void)err;
    *skip = "model, sequence length, micro-batch and ZeRO stage not stated; the 3.57B model of the TP figure "
            "would need 1,030 TFLOP/s per GPU at DP 8 (above H100's 989 dense bf16 peak), so it is not that "
            "model, and any other choice would be a fit to these rows";
    return 1;
}

/* DeepSpeed's Azure post (2022-07-26), run as its own recipes, Megatron-DeepSpeed
 * examples_deepspeed/azure/run-175b.sh and run-1t.sh: TP 1 and PP 1 ("no tensor/pipeline
 * parallelism", as the 530B row says), ZeRO-3 over every GPU, fp16, --checkpoint-activations
 * (full recompute), the 2022 Megatron's unfused attention, the GPT-2 vocabulary (50,257), no gradient
 * accumulation (gbs = mbs x GPUs). A row without its micro-batch (530B: 1, 2, 4 and 8 swept) is not
 * predicted. run-1t.sh offloads the optimizer to the CPU (offload_optimizer
 * cpu, --cpu-optimizer), which Orrery does not model: the 1T and 2T rows are not predicted, nor those
 * without a configuration or on V100. */
static int deepspeed_row(const set_def *d, const orr_csv *t, int r, orr_spec *s, const char **skip, orr_err *err)
{
    (void)d;
    if (!csv_u32(t, r, "num_layers")) return *skip = "no model configuration given", 1;
    if (strstr(orr_csv_get(t, r, "gpu"), "A100") == NULL) return *skip = "not an A100 row", 1;
    gpt_model(&s->model, orr_csv_get(t, r, "model"), t, r, "num_layers", 1);
    s->model.vocab = 50257;
    double params = orr_model_params(&s->model);
    if (params >= 1e12) return *skip = "optimizer offloaded to the CPU (run-1t.sh): not modelled", 1;
    if (!csv_u32(t, r, "micro_batch_per_gpu")) return *skip = "micro-batch not stated (1, 2, 4 and 8 swept)", 1;
    s->framework = ORR_FW_DEEPSPEED;
    s->framework_set = 1;
    if (orr_catalog_gpu("A100-SXM4-80GB", &s->gpu, err) < 0 || orr_catalog_cluster("dgx-a100", &s->cluster, err) < 0)
        return -1;
    s->tp = s->pp = 1;
    s->gpus = csv_u32(t, r, "gpus");
    s->dp = s->gpus;
    s->zero = 3;
    s->mbs = csv_u32(t, r, "micro_batch_per_gpu");
    s->gbs = s->mbs * s->gpus;
    s->seq = s->model.seq;
    s->recompute = ORR_RECOMPUTE_FULL;
    s->precision = ORR_FP16;
    s->attention = ORR_ATTN_UNFUSED;
    return 0;
}

static const set_def sets[ORR_VALID_SET_COUNT] = {
    [ORR_VALID_MEGATRON_H100] = {
        "megatron_lm_h100_weak_scaling.csv", "Megatron-Core weak scaling on H100 (r0.8.0, seq 4096)",
        "TFLOP/s per GPU by Megatron-Core num_floating_point_operations: 72 B s L h^2 (1 + s/6h + V/12Lh)",
        "micro-batch 4 without pipeline parallelism and 1 with it (NVIDIA's NeMo GPT-3 performance recipes); "
        "SP when TP > 1; distributed optimizer with overlapped grad reduce-scatter and param "
        "all-gather; TP comm overlap; no recompute; no virtual stages; untied embeddings (the table's parameter "
        "counts); bf16 (fp32 grad reduction)",
        1, M_TFLOPS, "tflops_per_gpu", megatron_h100_row, 72.0, 12.0, NULL, ORR_ATTN_FLASH},
    [ORR_VALID_SELENE_A100] = {
        "megatron_lm_a100_selene.csv", "Megatron-LM on A100 Selene (April 2021, seq 2048)",
        "TFLOP/s per GPU by Narayanan et al. 2021: 96 B s L h^2 (1 + s/6h + V/16Lh), counts full recompute",
        "micro-batch 1; full recompute; fp16; unfused attention; no SP; no distributed optimizer; no virtual stages",
        1, M_TFLOPS, "tflops_per_gpu", selene_row, 96.0, 16.0, NULL, ORR_ATTN_FLASH},
    [ORR_VALID_NEMO_H100] = {
        "nemo_24_07_perf_summary.csv", "NeMo 24.07 performance summary, DGX-H100, FP8 (pre-training rows)",
        "tokens/s per GPU",
        "Megatron-Core recipe; FP8 (Transformer Engine hybrid, delayed scaling); distributed optimizer, overlapped; "
        "SP and TP comm overlap when TP > 1; mbs, vp and cp as published, with vp the interleaved schedule's p2p overlapped (the "
        "launcher's overlap_p2p_comm: true); selective recompute for GPT-3, none for Llama; gradients "
        "reduced in bf16 (the launcher's grad_sync_dtype: bf16; Megatron-LM's Llama 3 FP8 script, which follows "
        "NeMo's); Llama weights in FP8 (--fp8-param-gather, as that script); GPT3-5B "
        "and GPT3-20B shapes from NeMo-Framework-Launcher's gpt3 *_fp8_performance.yaml; Nemotron rows not "
        "predicted (shapes not in the catalog); fine-tuning rows not modelled",
        0, M_TOKENS, "tokens_per_sec_per_gpu", recipe_row, 0, 0, NULL, ORR_ATTN_FLASH},
    [ORR_VALID_LLAMA3_FP8] = {
        "megatron_lm_llama3_fp8_example.csv", "Megatron-LM examples/llama FP8 performance, H100",
        "tokens/s per GPU",
        "train_llama3_8b_h100_fp8.sh's flags (the README: \"follows NeMo performance scripts\"): FP8 hybrid with "
        "delayed scaling, --grad-reduce-in-bf16, --fp8-param-gather, distributed optimizer, SP and TP comm overlap when TP > 1, no "
        "recompute, no dropout; cp and vp as the README's table gives them (the 8B script itself sets CP 1), with vp "
        "Megatron-LM's default overlap_p2p_comm; cuDNN fused attention at its measured rate (Transformer Engine's "
        "FusedAttention, its choice on Hopper; the README of June 2025)",
        0, M_TOKENS, "tokens_per_sec_per_gpu", recipe_row, 0, 0, NULL, ORR_ATTN_CUDNN},
    [ORR_VALID_MEGATRON_2020] = {
        "megatron_lm_2020_v100_a100.csv", "Megatron-LM 2020 README scaling cases, DGX A100 (seq 1024)",
        "iteration time (the error is on throughput: published / predicted time - 1)",
        "fp16; full recompute; unfused attention; no SP; no distributed optimizer; micro-batch batch / dp; the "
        "gradient all-reduce after the backward, in fp16 (2020's local DDP); A100 40GB; V100 rows not predicted (no "
        "V100 in the GPU catalog)",
        0, M_ITER_MS, "iteration_time_ms", megatron2020_row, 0, 0, NULL, ORR_ATTN_FLASH},
    [ORR_VALID_NANOTRON_TP] = {
        "nanotron_ultrascale_tp_scaling.csv", "Ultra-Scale Playbook TP scaling, nanotron 3.57B on H100 (seq 4096)",
        "tokens/s per GPU",
        "framework nanotron as scripts/scaling_benchmarks.py configures it: the \"3B\" Llama (28 layers, hidden "
        "3072, 32 heads, no GQA, ffn 8192, vocab 131072, tied embeddings), bf16 with fp32 gradient accumulation, "
        "DP 1, one micro-batch per step; SP rows tp_mode REDUCE_SCATTER with async linears, TP-only rows "
        "ALL_REDUCE; micro-batch as measured for SP rows (the script's comment), the figure's largest for TP-only "
        "rows (not given); AWS p5 (aws-p5-efa: TP 16 and 32 cross EFA); no recompute",
        0, M_TOKENS, "tokens_per_sec_per_gpu", nanotron_tp_row, 0, 0, "max_batch_size", ORR_ATTN_FLASH},
    [ORR_VALID_NANOTRON_DP] = {
        "nanotron_ultrascale_dp_scaling_partial.csv", "Ultra-Scale Playbook DP scaling (nanotron, H100)",
        "tokens/s per GPU",
        "none: the rows are not predicted (model, sequence length, micro-batch and ZeRO stage not stated)",
        0, M_TOKENS, "tokens_per_sec_per_gpu", nanotron_dp_row, 0, 0, NULL, ORR_ATTN_FLASH},
    [ORR_VALID_DEEPSPEED] = {
        "deepspeed_published.csv", "DeepSpeed ZeRO-3 on Azure A100 80GB (2022, peak TFLOP/s)",
        "TFLOP/s per GPU by the post's formula: 96 B s L h^2 (1 + s/6h + V/16Lh), counts full recompute",
        "the post's own recipes (Megatron-DeepSpeed examples_deepspeed/azure run-175b.sh, run-1t.sh): TP 1, PP 1, "
        "ZeRO-3 over every GPU, fp16, activation checkpointing (full recompute), unfused attention, GPT-2 "
        "vocabulary 50257, no gradient accumulation; the 530B row not predicted (micro-batch not stated: 1, 2, 4 "
        "and 8 swept); 1T and 2T rows not predicted (run-1t.sh offloads the optimizer to the CPU: not modelled), nor the rows "
        "without a configuration (V100 ZeRO-Offload, Ulysses)",
        0, M_TFLOPS, "tflops_per_gpu", deepspeed_row, 96.0, 16.0, NULL, ORR_ATTN_FLASH},
    [ORR_VALID_MBRIDGE_H100] = {
        "megatron_bridge_h100_perf_summary.csv",
        "Megatron-Bridge performance summaries, DGX-H100 (NeMo containers 25.09-26.06, dense pre-training rows)",
        "tokens/s per GPU",
        "the performance scripts' recipes: FP8 with per-tensor current scaling (the 25.09 rows state no precision; the "
        "25.11 rows of the same configurations say FP8-CS), FP8 parameters, bf16 gradient reduction, distributed "
        "optimizer, SP and TP comm overlap when TP > 1, no recompute; Llama 3 8B on Megatron-FSDP (FSDP 8); 405B's "
        "embedding and loss counted as pipeline layers; 70B split evenly; cuDNN fused attention (2025-2026 software); "
        "MoE rows in set mbridge-moe-h100; Nemotron 3 and fine-tuning rows not predicted",
        0, M_TOKENS, "tokens_per_sec_per_gpu", mbridge_row, 0, 0, NULL, ORR_ATTN_CUDNN},
    [ORR_VALID_MBRIDGE_MOE_H100] = {
        "megatron_bridge_h100_perf_summary.csv",
        "Megatron-Bridge performance summaries, DGX-H100 (NeMo containers 26.02-26.06, MoE pre-training rows)",
        "tokens/s per GPU",
        "scripts/performance/configs/{qwen,gpt_oss} at the containers' Megatron-Bridge tags (v0.3.0-v0.5.0): bf16 "
        "gradient reduction, distributed optimizer, forced load balancing (random routing, dropless), cuDNN fused "
        "attention, expandable segments (the DGX Cloud launcher sets it, the Slurm one did not before 26.06; which "
        "launcher ran the rows is not stated); Qwen3-235B-A22B TP 2 SP, PP 8 x VP 4, EP 32, FP8 per-tensor current "
        "scaling with FP8 parameters, "
        "no recompute, alltoall with the combined 1F1B EP overlap (its delay_wgrad_compute not modelled), embedding "
        "and loss counted as pipeline layers; Qwen3-30B-A3B TP 1, PP 1, EP 16, FP8 as above, HybridEP as DeepEP, no "
        "overlap; GPT-OSS 120B TP 1, PP 4, EP 8, bf16, selective recompute of layernorm and moe_act, alltoall; the "
        "25.09/25.11 rows, Qwen3-30B of 26.02 and 26.02.01 (dispatcher unknown; the table's layout disagrees with the "
        "config) and DeepSeek-V3 (MTP layout) not predicted",
        0, M_TOKENS, "tokens_per_sec_per_gpu", mbridge_moe_row, 0, 0, NULL, ORR_ATTN_CUDNN},
    [ORR_VALID_DGXC_H100] = {
        "dgxc_h100_nemo.csv", "DGX Cloud benchmarking recipes, H100 (dgxc-benchmarking v25.01, NeMo 24.09)",
        "tokens/s per GPU (the README's printed total over the GPUs)",
        "each recipe's yaml with configure.sh's overrides: distributed optimizer (distributed_fused_adam), bf16 "
        "gradient reduction, SP and TP comm overlap where the config sets them (70B, 405B, Nemotron-4), no "
        "recompute but Nemotron-4 340B's selective; FP8 rows: hybrid delayed scaling with FP8 weights; attention at "
        "FlashAttention-2's level, as every 2024 release (the recipes run cuDNN's fused attention but 340B's "
        "FlashAttention); 405B as the recipe builds "
        "it (16 query groups, vocabulary 50,257; 7/21/42-layer proxies on 32/96/192 GPUs); Nemotron-4's squared "
        "ReLU as an ungated GELU MLP of the same shapes, its partial rotary not modelled; 340B's bf16 optimizer "
        "state as the precision-aware optimizer's bf16 moments",
        0, M_TOKENS, "tokens_per_s_per_gpu", dgxc_row, 0, 0, NULL, ORR_ATTN_FLASH},
};

const char *orr_valid_set_name(orr_valid_set set)
{
    static const char *const names[ORR_VALID_SET_COUNT] = {"megatron-h100", "selene-a100", "nemo-h100",
                                                            "llama3-fp8", "megatron-2020", "nanotron-tp",
                                                            "nanotron-dp", "deepspeed-azure", "mbridge-h100",
                                                            "mbridge-moe-h100", "dgxc-h100"};
    return (unsigned)set < ORR_VALID_SET_COUNT ? names[set] : "?";
}

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

/* Median |error| of the rows whose fitted flag is want (-1: all); *n gets their count. */
static double median_abs(const orr_valid_table *t, int want, size_t *n)
{
    double *e = orr_xmalloc((t->n ? t->n : 1) * sizeof *e);
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (want < 0 || t->rows[i].fitted == want) e[k++] = t->rows[i].error;
    qsort(e, k, sizeof *e, cmp_abs);
    double m = !k ? 0 : k % 2 ? fabs(e[k / 2]) : 0.5 * (fabs(e[k / 2 - 1]) + fabs(e[k / 2]));
    free(e);
    *n = k;
    return m;
}

/* The predicted value of row in the set's metric, from the prediction of spec s. */
static double predicted_value(const set_def *d, const orr_spec *s, const orr_prediction *p)
{
    double it = p->r.iteration_s;
    if (d->m == M_TOKENS) return (double)s->gbs * s->seq / it / s->gpus;
    if (d->m == M_ITER_MS) return it * 1e3;
    double B = s->gbs, sq = s->seq, L = s->model.layers, h = s->model.hidden, V = s->model.vocab;
    double flops = d->flops_factor * B * sq * L * h * h * (1 + sq / (6 * h) + V / (d->vocab_div * L * h));
    return flops / it / s->gpus / 1e12;
}

static void fill_row(orr_valid_row *row, const set_def *d, const orr_spec *s, const orr_prediction *p, double pub)
{
    snprintf(row->model, sizeof row->model, "%s", s->model.name);
    row->tp = s->tp;
    row->pp = s->pp;
    row->dp = s->dp;
    row->cp = s->cp;
    row->vpp = s->vpp;
    row->gpus = s->gpus;
    row->gbs = s->gbs;
    row->mbs = s->mbs;
    row->fitted = d->fitted;
    row->iteration_s = p->r.iteration_s;
    row->peak_gib = (double)p->r.mem.peak_reserved_bytes / (1024.0 * 1024 * 1024);
    row->oom = p->r.mem.oom;
    row->published = pub;
    row->predicted = predicted_value(d, s, p);
    /* positive: predicted faster than measured, whatever the metric */
    row->error = d->m == M_ITER_MS ? pub / row->predicted - 1 : (row->predicted - pub) / pub;
}

/* Every row of the set; gemm_eff > 0 sets the GPU's, extra_mbs >= 0 runs each row at the largest
 * micro-batch that ran plus extra_mbs (the set's max_mbs_col). */
static int validate_set(orr_valid_set set, const char *dir, double gemm_eff, int extra_mbs, orr_valid_table *out,
                        orr_err *err);

int orr_validate(orr_valid_set set, const char *dir, orr_valid_table *out, orr_err *err)
{
    return validate_set(set, dir, 0, -1, out, err);
}

int orr_validate_gemm_eff(orr_valid_set set, const char *dir, double gemm_eff, orr_valid_table *out, orr_err *err)
{
    return validate_set(set, dir, gemm_eff, -1, out, err);
}

int orr_validate_max_batch(orr_valid_set set, const char *dir, unsigned extra, orr_valid_table *out, orr_err *err)
{
    memset(out, 0, sizeof *out);
    if ((unsigned)set >= ORR_VALID_SET_COUNT || !sets[set].max_mbs_col)
        return orr_fail(err, "validate: set %s has no largest micro-batch column", orr_valid_set_name(set));
    return validate_set(set, dir, 0, (int)extra, out, err);
}

/* The set's csv (its path into path[512]), with the published value's column. */
static int load_set_csv(const set_def *d, const char *dir, char *path, orr_csv *t, orr_err *err)
{
    snprintf(path, 512, "%s/%s", dir, d->file);
    if (orr_csv_load(t, path, err) < 0) return -1;
    if (orr_csv_col(t, d->col) >= 0) return 0;
    int rc = orr_fail(err, "%s: no column %s", path, d->col);
    orr_csv_free(t);
    return rc;
}

static int validate_set(orr_valid_set set, const char *dir, double gemm_eff, int extra_mbs, orr_valid_table *out,
                        orr_err *err)
{
    memset(out, 0, sizeof *out);
    if ((unsigned)set >= ORR_VALID_SET_COUNT) return orr_fail(err, "validate: unknown set %d", (int)set);
    const set_def *d = &sets[set];
    char path[512];
    orr_csv t;
    if (load_set_csv(d, dir, path, &t, err) < 0) return -1;
    out->title = d->title;
    out->convention = d->convention;
    out->assumptions = d->assumptions;
    out->unit = d->m == M_TFLOPS ? "TFLOP/s/GPU" : d->m == M_TOKENS ? "tokens/s/GPU" : "iteration ms";
    out->rows = orr_xcalloc((size_t)t.nrows, sizeof *out->rows);
    int rc = 0;
    for (int r = 1; r < t.nrows && rc == 0; r++) {
        orr_spec s;
        orr_spec_init(&s);
        const char *skip = NULL;
        bad_count = NULL;
        int k = d->row(d, &t, r, &s, &skip, err);
        if (gemm_eff > 0) s.gpu.gemm_eff = gemm_eff; /* the fit's check: the set's GPU at another value */
        if (k == 0 && extra_mbs >= 0) { /* the largest micro-batch that ran, or one more */
            s.mbs = csv_u32(&t, r, d->max_mbs_col) + (uint32_t)extra_mbs;
            s.gbs = s.mbs * (s.dp ? s.dp : 1);
        }
        if (k == 0 && bad_count) {
            rc = orr_fail(err, "%s row %d: %s: expected a whole number below 2^32, got '%s'", path, r, bad_count,
                          orr_csv_get(&t, r, bad_count));
            break;
        }
        if (k > 0) {
            if (!out->skip_why) out->skip_why = skip;
            out->skipped++;
            continue;
        }
        double pub = orr_csv_num(&t, r, d->col);
        if (k < 0) {
            rc = -1;
            break;
        }
        if (!(pub > 0) || !isfinite(pub)) {
            rc = orr_fail(err, "%s row %d: %s must be a positive number", path, r, d->col);
            break;
        }
        orr_prediction p;
        if (orr_spec_resolve(&s, err) < 0 || orr_predict(&s, &p, err) < 0) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            rc = orr_fail(err, "%s row %d (%s): %s", path, r, s.model.name, msg);
            break;
        }
        fill_row(&out->rows[out->n], d, &s, &p, pub);
        /* a fitted set is fitted on every other row (the first, third, ...); the rest is held out
         * (issue 18: fit on part of each table, report the rest) */
        out->rows[out->n].fitted = d->fitted && out->n % 2 == 0;
        out->n++;
        orr_prediction_free(&p);
    }
    size_t file_rows = t.nrows > 0 ? (size_t)t.nrows - 1 : 0;
    orr_csv_free(&t);
    /* a header-only file used to "pass" at 0.0% over 0 rows; a set whose every row is left out for a
     * stated reason reports that reason instead */
    if (rc == 0 && out->n == 0 && out->skipped == 0)
        rc = orr_fail(err, "%s: no row predicted (%zu rows in the file)", path, file_rows);
    if (rc < 0) {
        orr_valid_table_free(out);
        return -1;
    }
    out->median_abs_error = median_abs(out, -1, &out->n);
    out->median_fit = median_abs(out, 1, &out->n_fit);
    out->median_heldout = median_abs(out, 0, &out->n_heldout);
    return 0;
}

void orr_valid_table_free(orr_valid_table *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}

void orr_valid_table_print(const orr_valid_table *t, orr_buf *out)
{
    orr_buf_printf(out, "%s\n  compared: %s\n  assumed for every row: %s\n", t->title, t->convention, t->assumptions);
    orr_buf_printf(out, "  %-11s %3s %3s %4s %3s %3s %5s %5s %3s %12s %12s %8s %11s %9s  %s\n", "model", "tp", "pp", "dp",
                   "cp", "vpp", "gpus", "gbs", "mbs", "published", "predicted", "error", "iteration", "peak mem",
                   "rows used for");
    for (size_t i = 0; i < t->n; i++) {
        const orr_valid_row *r = &t->rows[i];
        orr_buf_printf(out, "  %-11s %3u %3u %4u %3u %3u %5u %5u %3u %12.1f %12.1f %+7.1f%% %9.3f s %5.1f GiB  %s%s\n",
                       r->model, r->tp, r->pp, r->dp, r->cp, r->vpp, r->gpus, r->gbs, r->mbs, r->published, r->predicted,
                       100 * r->error, r->iteration_s, r->peak_gib, r->fitted ? "fitting" : "held out",
                       r->oom ? "  OOM (it ran)" : "");
    }
    orr_buf_printf(out, "  (%s; error: positive = predicted faster)\n", t->unit);
    if (t->n_fit) orr_buf_printf(out, "  median |error| %.1f%% over %zu rows used for fitting\n", 100 * t->median_fit, t->n_fit);
    if (t->n_heldout)
        orr_buf_printf(out, "  median |error| %.1f%% over %zu held-out rows (never used for fitting)\n",
                       100 * t->median_heldout, t->n_heldout);
    if (t->skipped && t->n == 0)
        orr_buf_printf(out, "  no row predicted (%zu rows): %s\n", t->skipped, t->skip_why ? t->skip_why : "?");
    else if (t->skipped)
        orr_buf_printf(out, "  %zu rows not predicted (see the assumptions)\n", t->skipped);
}

/* ---- The rows as jobs and measurements (orr_valid_cases) ---- */

/* One row's job, published value and the iteration time that value stands for (the set's metric at
 * an iteration of 1 s, divided by the published value); 1 if the set leaves the row out. */
static int read_case(const set_def *d, const orr_csv *t, int r, const char *path, orr_valid_case *c, orr_err *err)
{
    const char *skip = NULL;
    orr_spec_init(&c->spec);
    bad_count = NULL;
    int k = d->row(d, t, r, &c->spec, &skip, err);
    if (k == 0 && bad_count)
        return orr_fail(err, "%s row %d: %s: expected a whole number below 2^32, got '%s'", path, r, bad_count,
                        orr_csv_get(t, r, bad_count));
    if (k != 0) return k;
    c->published = orr_csv_num(t, r, d->col);
    c->csv_row = r;
    if (!(c->published > 0) || !isfinite(c->published))
        return orr_fail(err, "%s row %d: %s must be a positive number", path, r, d->col);
    orr_spec s = c->spec;
    orr_err e;
    if (orr_spec_resolve(&s, &e) < 0) return orr_fail(err, "%s row %d (%s): %s", path, r, s.model.name, e.msg);
    orr_prediction one_second;
    memset(&one_second, 0, sizeof one_second);
    one_second.r.iteration_s = 1.0;
    c->measured_s = d->m == M_ITER_MS ? c->published / 1e3 : predicted_value(d, &s, &one_second) / c->published;
    return 0;
}

int orr_valid_cases(orr_valid_set set, const char *dir, orr_valid_case **out, size_t *n, orr_err *err)
{
    *out = NULL;
    *n = 0;
    if ((unsigned)set >= ORR_VALID_SET_COUNT) return orr_fail(err, "validate: unknown set %d", (int)set);
    const set_def *d = &sets[set];
    char path[512];
    orr_csv t;
    if (load_set_csv(d, dir, path, &t, err) < 0) return -1;
    orr_valid_case *cases = orr_xcalloc(t.nrows > 0 ? (size_t)t.nrows : 1, sizeof *cases);
    int rc = 0;
    for (int r = 1; r < t.nrows && rc >= 0; r++) {
        rc = read_case(d, &t, r, path, &cases[*n], err);
        if (rc == 0) (*n)++;
    }
    orr_csv_free(&t);
    if (rc >= 0 && *n == 0) rc = orr_fail(err, "%s: no row predicted", path);
    if (rc < 0) {
        orr_valid_cases_free(cases, *n);
        *n = 0;
        return -1;
    }
    *out = cases;
    return 0;
}

void orr_valid_cases_free(orr_valid_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) orr_spec_free(&c[i].spec);
    free(c);
}

/* ---- The flash-attention shape terms against kernels/attention.csv (orr_validate_attention_shape) ---- */

/* Throughput in the benchmarks' convention (a causal kernel's FLOPs counted as half the square; a
 * sliding window of w tokens, cudnn-frontend's sdpa_benchmark_training, as w(w + 1)/2 + (s - w)w
 * scores) at sequence s, relative units: the shape rate of the generator's convention (key blocks
 * visited: half the square and the diagonal causal, the window's blocks and the diagonal one
 * windowed, moe_window_fraction) times counted / visited; forward and backward combined as the
 * benchmarks time them (FLOPs 1 : 2.5). */
static double attn_throughput(double s, int causal, double window, uint32_t hd, int fwd, int bwd)
{
    double nb = ceil(s / 128.0), useful = causal ? (nb + 1.0) / (2.0 * nb) : 1.0;
    double ideal = causal ? nb / (nb + 1.0) : 1.0;
    double wb = ceil(window / 128.0) + 1.0;
    if (causal && window > 0 && window < s && wb / nb < useful) {
        useful = wb / nb;
        ideal = (window * (window + 1.0) / 2.0 + (s - window) * window) / (s * s) / useful;
    }
    uint32_t dims[4] = {1, (uint32_t)s, (uint32_t)s, hd};
    double rf = orr_est_attention_shape(0, dims, useful) * ideal, rb = orr_est_attention_shape(1, dims, useful) * ideal;
    if (fwd && bwd) return 3.5 / (1.0 / rf + 2.5 / rb);
    return bwd ? rb : rf;
}

#define KSERIES_MAX 4096 /* series (2.2 KB each) one file may hold: the repository's has under 160 */

typedef struct kseries {
    char key[1024];
    orr_valid_kernel_series out;
    int causal, fwd, bwd;
    uint32_t hd;
    double window;        /* sliding window in tokens (the notes' sliding_window_size), 0: none */
    double seq[64], val[64];
    size_t n;
} kseries;

/* Median of |v[i]| (v sorted in place by magnitude, cmp_abs). */
static double median_of_abs(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_abs);
    return !n ? 0 : n % 2 ? fabs(v[n / 2]) : 0.5 * (fabs(v[n / 2 - 1]) + fabs(v[n / 2]));
}

int orr_validate_attention_shape(const char *dir, orr_valid_kernels *out, orr_err *err)
{
    memset(out, 0, sizeof *out);
    char path[1024];
    snprintf(path, sizeof path, "%s/kernels/attention.csv", dir);
    orr_csv t;
    if (orr_csv_load(&t, path, err) < 0) return -1;
    kseries *ks = NULL;
    size_t nks = 0;
    for (int r = 1; r < t.nrows; r++) {
        const char *impl = orr_csv_get(&t, r, "impl"), *dirn = orr_csv_get(&t, r, "direction");
        const char *causal = orr_csv_get(&t, r, "causal"), *kv = orr_csv_get(&t, r, "seqlen_kv");
        double s = orr_csv_num(&t, r, "seqlen_q"), hd = orr_csv_num(&t, r, "headdim"), v = orr_csv_num(&t, r, "value");
        int fwd = strcmp(dirn, "fwd") == 0 || strcmp(dirn, "fwd+bwd") == 0;
        int bwd = strcmp(dirn, "bwd") == 0 || strcmp(dirn, "fwd+bwd") == 0;
        int is_causal = strncmp(causal, "True", 4) == 0;
        if (strncmp(orr_csv_get(&t, r, "metric"), "achieved TFLOP", 14) != 0 || !(fwd || bwd) || !(s >= 128) ||
            !(s <= 1048576) || !(hd >= 16) || !(hd <= 1024) || !(v > 0) || !isfinite(v))
            continue;
        if (!is_causal && strncmp(causal, "False", 5) != 0) continue;
        if (kv[0] && orr_csv_num(&t, r, "seqlen_kv") != s) continue;
        if (strstr(impl, "Standard") || strstr(impl, "math")) continue; /* not flash kernels */
        const char *dtype = orr_csv_get(&t, r, "dtype"), *notes = orr_csv_get(&t, r, "notes");
        if (strstr(dtype, "fp8") || strstr(dtype, "FP8")) { /* attention stays bf16 under FP8 training */
            out->skipped_fp8++;
            continue;
        }
        if (strstr(notes, "deterministic_bwd=True")) { /* not a framework default */
            out->skipped_deterministic++;
            continue;
        }
        /* one series is one configuration swept over the sequence: the notes tell apart what else a
         * sweep varied (cudnn-frontend's deterministic backward on and off, its model presets) */
        const char *w = strstr(notes, "sliding_window_size=");
        double window = w ? strtod(w + strlen("sliding_window_size="), NULL) : 0;
        if (w && !(window >= 1 && window <= 1048576)) {
            free(ks);
            orr_csv_free(&t);
            return orr_fail(err, "%s row %d, notes: sliding_window_size must be a window of 1 to 1048576 tokens",
                            path, r);
        }
        char key[1024];
        snprintf(key, sizeof key, "%s|%s|%s|%d|%g|%s|%s|%s|%s", orr_csv_get(&t, r, "gpu"), impl, dirn, is_causal, hd,
                 orr_csv_get(&t, r, "software"), orr_csv_get(&t, r, "dtype"), orr_csv_get(&t, r, "source"), notes);
        size_t i = 0;
        while (i < nks && strcmp(ks[i].key, key) != 0) i++;
        if (i == nks) {
            if (nks == KSERIES_MAX) {
                free(ks);
                orr_csv_free(&t);
                return orr_fail(err, "%s row %d: more than %d attention series (kernel, GPU, direction, mask, head "
                                     "dim, source): expected a table of kernel measurements", path, r, KSERIES_MAX);
            }
            ks = orr_xrealloc(ks, (nks + 1) * sizeof *ks);
            memset(&ks[nks], 0, sizeof ks[nks]);
            snprintf(ks[nks].key, sizeof ks[nks].key, "%s", key);
            int at = snprintf(ks[nks].out.label, sizeof ks[nks].out.label, "%s, %s, %s, %s, head dim %g",
                              orr_csv_get(&t, r, "gpu"), impl, dirn, is_causal ? "causal" : "full", hd);
            if (window > 0 && at > 0 && (size_t)at < sizeof ks[nks].out.label)
                snprintf(ks[nks].out.label + at, sizeof ks[nks].out.label - (size_t)at, ", window %g", window);
            ks[nks].out.fitted = strcmp(orr_csv_get(&t, r, "gpu"), "H100") == 0 &&
                                 strcmp(impl, "FlashAttention-2") == 0 && hd == 128;
            ks[nks].causal = is_causal, ks[nks].fwd = fwd, ks[nks].bwd = bwd, ks[nks].hd = (uint32_t)hd;
            ks[nks].window = window;
            nks++;
        }
        kseries *k = &ks[i];
        size_t j = 0;
        while (j < k->n && k->seq[j] != s) j++;
        if (j == k->n && k->n < sizeof k->seq / sizeof k->seq[0]) k->seq[k->n] = s, k->val[k->n++] = v;
    }
    size_t cap = (size_t)t.nrows + 1;
    orr_csv_free(&t);
    double *fit = orr_xmalloc(cap * sizeof *fit), *held = orr_xmalloc(cap * sizeof *held), e[64];
    out->series = orr_xmalloc((nks ? nks : 1) * sizeof *out->series);
    for (size_t i = 0; i < nks; i++) {
        kseries *k = &ks[i];
        if (k->n < 3) continue;
        size_t ref = 0;
        for (size_t j = 1; j < k->n; j++)
            if (fabs(log(k->seq[j] / 4096.0)) < fabs(log(k->seq[ref] / 4096.0))) ref = j;
        double pref = attn_throughput(k->seq[ref], k->causal, k->window, k->hd, k->fwd, k->bwd);
        size_t m = 0;
        for (size_t j = 0; j < k->n; j++) {
            if (j == ref) continue;
            double pred = attn_throughput(k->seq[j], k->causal, k->window, k->hd, k->fwd, k->bwd) / pref;
            e[m] = pred / (k->val[j] / k->val[ref]) - 1.0;
            if (k->out.fitted) fit[out->n_fit++] = e[m];
            else held[out->n_heldout++] = e[m];
            m++;
        }
        k->out.n = m;
        k->out.median_abs_error = median_of_abs(e, m);
        out->series[out->n++] = k->out;
    }
    out->median_fit = median_of_abs(fit, out->n_fit);
    out->median_heldout = median_of_abs(held, out->n_heldout);
    free(fit);
    free(held);
    free(ks);
    if (out->n_fit == 0 || out->n_heldout == 0) {
        orr_valid_kernels_free(out);
        return orr_fail(err, "%s: expected flash-attention series of at least 3 sequence lengths (H100 "
                             "FlashAttention-2 at head dim 128 and others), found none", path);
    }
    return 0;
}

void orr_valid_kernels_print(const orr_valid_kernels *k, orr_buf *out)
{
    orr_buf_printf(out, "Flash-attention shape (kernels/attention.csv; orr_est_attention_shape)\n"
                        "  compared: throughput at each sequence length over the series' point nearest 4096, "
                        "predicted against measured (the kernel's level does not enter)\n"
                        "  fitted on: H100 FlashAttention-2, head dim 128 (3 constants: the fixed cost per query "
                        "block, forward and backward, and the masked rate); every other series held out\n");
    for (size_t i = 0; i < k->n; i++)
        orr_buf_printf(out, "  %-92s %3zu points %6.1f%%  %s\n", k->series[i].label, k->series[i].n,
                       100 * k->series[i].median_abs_error, k->series[i].fitted ? "fitting" : "held out");
    if (k->skipped_fp8 || k->skipped_deterministic)
        orr_buf_printf(out, "  not compared: %zu FP8 rows (Orrery runs attention in bf16 under FP8 training) and %zu "
                            "deterministic-backward rows (no framework's default)\n",
                       k->skipped_fp8, k->skipped_deterministic);
    orr_buf_printf(out, "  median |error| %.1f%% over %zu points used for fitting\n", 100 * k->median_fit, k->n_fit);
    orr_buf_printf(out, "  median |error| %.1f%% over %zu held-out points (never used for fitting)\n",
                   100 * k->median_heldout, k->n_heldout);
}

void orr_valid_kernels_free(orr_valid_kernels *k)
{
    free(k->series);
    memset(k, 0, sizeof *k);
}

/* ---- The compute model against this project's H100 measurements (orr_validate_measured) ---- */

#define MEASURED_DIR "measured/h100_2026-11-26"

static int cmp_plain(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v (sorted in place); 0 when empty. */
static double median_of(double *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_plain);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A positive whole-number column of row r below 2^31, or 0. */
static uint32_t measured_dim(const orr_csv *t, int r, const char *col)
{
    double v = orr_csv_num(t, r, col);
    return v >= 1 && v < 2147483648.0 && v == floor(v) ? (uint32_t)v : 0;
}

/* Row r's GEMM shape (its M, N and K columns); 0 when one is not a positive whole number. */
static int measured_mnk(const orr_csv *t, int r, uint32_t *m, uint32_t *n, uint32_t *k)
{
    *m = measured_dim(t, r, "M"), *n = measured_dim(t, r, "N"), *k = measured_dim(t, r, "K");
    return *m && *n && *k;
}

/* The duration bins of orr_valid_measured.dur_*: under 0.8 ms, 0.8-3 ms, 3 ms and over. */
static int duration_bin(double us) { return us < 800.0 ? 0 : us < 3000.0 ? 1 : 2; }

/* Row r's measured bf16 GEMM (time_us) against orr_est_gemm_ps: *e = predicted throughput over
 * measured - 1. 0 when the row has no shape or time, or the GPU no bf16 rate. */
static int measured_gemm_error(const orr_csv *t, int r, const orr_gpu *g, double *us, double *e)
{
    uint32_t m, n, k;
    *us = orr_csv_num(t, r, "time_us");
    if (!measured_mnk(t, r, &m, &n, &k) || !(*us > 0) || !isfinite(*us)) return 0;
    double pred_s = (double)orr_est_gemm_ps(g, m, n, k, 1, ORR_BF16, 0, 0) / (double)ORR_PS_PER_S;
    if (!(pred_s > 0)) return 0;
    *e = *us * 1e-6 / pred_s - 1.0;
    return 1;
}

/* The next day's lease: GEMMs timed after the power cap had set in, Megatron-Core's MoE layer. */
#define MEASURED_DIR_SUSTAINED "measured/h100_2026-11-27"

/* Loads DIR/sub/name into t, naming the file on failure. */
static int measured_load_from(orr_csv *t, const char *dir, const char *sub, const char *name, orr_err *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    return orr_csv_load(t, path, err);
}

static int measured_load(orr_csv *t, const char *dir, const char *name, orr_err *err)
{
    return measured_load_from(t, dir, MEASURED_DIR, name, err);
}

/* Errors of bf16 GEMMs by duration_bin, gathered over gemm.csv and gemm_sweep.csv. */
typedef struct dur_errors {
    double *e[3];
    size_t n[3], cap[3];
} dur_errors;

static void dur_add(dur_errors *d, double us, double e)
{
    int b = duration_bin(us);
    if (d->n[b] == d->cap[b]) orr_grow((void **)&d->e[b], &d->cap[b], d->n[b] + 1, sizeof *d->e[b]);
    d->e[b][d->n[b]++] = e;
}

static int measured_gemm(const char *dir, const orr_gpu *g, orr_valid_measured *out, dur_errors *dur, orr_err *err)
{
    orr_csv t;
    if (measured_load(&t, dir, "gemm.csv", err) < 0) return -1;
    size_t cap = (size_t)t.nrows + 1;
    double *all = orr_xmalloc(cap * sizeof *all);
    double *e4 = orr_xmalloc(cap * sizeof *e4), *e1 = orr_xmalloc(cap * sizeof *e1);
    for (int r = 1; r < t.nrows; r++) {
        /* plain bf16 torch.mm rows; the fp32-accumulating weight gradients are an analogue, not compared */
        if (strcmp(orr_csv_get(&t, r, "impl"), "torch.mm (cuBLAS via PyTorch)") != 0) continue;
        double us, e;
        if (!measured_gemm_error(&t, r, g, &us, &e)) continue;
        all[out->gemm_n++] = e;
        dur_add(dur, us, e);
        /* micro-batch 4: 16384 tokens in M (forward, data gradient) or K (weight gradient) */
        if (strstr(orr_csv_get(&t, r, "op"), " mbs4 ")) e4[out->gemm_n_mbs4++] = e;
        else e1[out->gemm_n_mbs1++] = e;
    }
    orr_csv_free(&t);
    out->gemm_median_abs = median_of_abs(all, out->gemm_n);
    out->gemm_median_signed = median_of(all, out->gemm_n);
    out->gemm_mbs4_median_signed = median_of(e4, out->gemm_n_mbs4);
    out->gemm_mbs1_median_signed = median_of(e1, out->gemm_n_mbs1);
    free(all), free(e4), free(e1);
    return 0;
}

/* fp8 (tensorwise) against bf16 at the same shape: the file lists each shape's bf16 row first. */
static int measured_fp8(const char *dir, const orr_gpu *g, orr_valid_measured *out, orr_err *err)
{
    orr_csv t;
    if (measured_load(&t, dir, "gemm_fp8.csv", err) < 0) return -1;
    size_t cap = (size_t)t.nrows + 1;
    double *meas = orr_xmalloc(cap * sizeof *meas), *e = orr_xmalloc(cap * sizeof *e);
    double bf16_tflops = 0;
    const char *bf16_op = "";
    for (int r = 1; r < t.nrows; r++) {
        const char *dt = orr_csv_get(&t, r, "dtype_a_b"), *op = orr_csv_get(&t, r, "op");
        double v = orr_csv_num(&t, r, "value");
        if (!(v > 0) || !isfinite(v)) continue;
        if (strcmp(dt, "bf16") == 0) {
            bf16_tflops = v, bf16_op = op;
            continue;
        }
        if (strcmp(orr_csv_get(&t, r, "scaling"), "tensorwise") != 0 || strcmp(op, bf16_op) != 0 || !(bf16_tflops > 0))
            continue;
        uint32_t m, n, k;
        if (!measured_mnk(&t, r, &m, &n, &k)) continue;
        double t8 = (double)orr_est_gemm_ps(g, m, n, k, 1, ORR_FP8, 0, 0);
        if (!(t8 > 0)) continue;
        double pred = (double)orr_est_gemm_ps(g, m, n, k, 1, ORR_BF16, 0, 0) / t8;
        meas[out->fp8_n] = v / bf16_tflops;
        e[out->fp8_n] = pred / meas[out->fp8_n] - 1.0;
        out->fp8_n++;
    }
    orr_csv_free(&t);
    out->fp8_speedup_measured = median_of(meas, out->fp8_n);
    out->fp8_speedup_median_error = median_of(e, out->fp8_n);
    free(meas), free(e);
    return 0;
}

/* fp8 GEMMs by scaling against per-tensor at the same shape (each shape's rows: bf16, tensorwise, then
 * the others): the measured rate and the model's, by scaling. The GPU's fp8_*_rate were fitted on the
 * dense shapes of the two runs on one machine; held out are the MoE experts' shapes (ops naming a
 * "proxy") and every row of the run on a second machine. */
static int measured_fp8_scaling(const char *dir, const orr_gpu *g, orr_valid_measured *out, orr_err *err)
{
    static const char *const files[] = {"gemm_fp8_block.csv", "gemm_fp8_block_repeat.csv",
                                        "gemm_fp8_block_machine2.csv"};
    static const char *const names[] = {"rowwise", "blockwise 1x128 x 128x128", "blockwise 1x128 x 1x128"};
    double *meas[3][2] = {{0}}, *e[3][2] = {{0}};
    size_t cap = 0;
    for (int f = 0; f < 3; f++) {
        orr_csv t;
        if (measured_load(&t, dir, files[f], err) < 0) goto fail;
        if ((size_t)t.nrows + 1 > cap) { /* enough for every row of all three files in each series */
            cap = 3 * ((size_t)t.nrows + 1);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 2; j++) {
                    meas[i][j] = orr_xrealloc(meas[i][j], cap * sizeof **meas);
                    e[i][j] = orr_xrealloc(e[i][j], cap * sizeof **e);
                }
        }
        double tw_tflops = 0;
        const char *tw_op = "";
        for (int r = 1; r < t.nrows; r++) {
            const char *op = orr_csv_get(&t, r, "op"), *sc = orr_csv_get(&t, r, "scaling");
            double v = orr_csv_num(&t, r, "value");
            if (!(v > 0) || !isfinite(v) || strncmp(op, "grouped", 7) == 0) continue;
            if (strcmp(sc, "tensorwise") == 0) {
                tw_tflops = v, tw_op = op;
                continue;
            }
            int kind = -1;
            for (int i = 0; i < 3; i++)
                if (strcmp(sc, names[i]) == 0) kind = i;
            uint32_t m, n, k;
            if (kind < 0 || strcmp(op, tw_op) != 0 || !(tw_tflops > 0) || !measured_mnk(&t, r, &m, &n, &k)) continue;
            orr_op x;
            memset(&x, 0, sizeof x);
            x.kind = ORR_OP_KERNEL, x.cls = ORR_CLS_GEMM, x.dtype = ORR_FP8;
            x.dims[0] = m, x.dims[1] = n, x.dims[2] = k, x.dims[3] = 1;
            double t_tw = (double)orr_est_op_ps(g, &x, NULL);
            x.flags = (uint8_t)((kind + 1) << ORR_OPF_FP8_SCALING_SHIFT);
            double t_sc = (double)orr_est_op_ps(g, &x, NULL);
            if (!(t_sc > 0)) continue;
            int held = f == 2 || strstr(op, "proxy") != NULL;
            size_t *cnt = &out->fp8_scaling_n[kind][held];
            meas[kind][held][*cnt] = v / tw_tflops;
            e[kind][held][*cnt] = (t_tw / t_sc) / (v / tw_tflops) - 1.0;
            (*cnt)++;
        }
        orr_csv_free(&t);
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            out->fp8_scaling_measured[i][j] = median_of(meas[i][j], out->fp8_scaling_n[i][j]);
            out->fp8_scaling_error[i][j] = median_of(e[i][j], out->fp8_scaling_n[i][j]);
            free(meas[i][j]), free(e[i][j]);
        }
    return 0;
fail:
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) free(meas[i][j]), free(e[i][j]);
    return -1;
}

/* The experts' GEMMs of a grouped-MoE file (M, N, K per expert; the op names the expert count) against
 * the model's batched GEMM: errors of the torch._grouped_mm rows into eg, of the one-torch.mm-per-expert
 * rows into el (other rows, such as the Python emulation of Transformer Engine's streams, left out). */
static void grouped_errors(const orr_csv *t, const orr_gpu *g, double *eg, size_t *ng, double *el, size_t *nl)
{
    for (int r = 1; r < t->nrows; r++) {
        const char *op = orr_csv_get(t, r, "op"), *ex = strstr(op, " experts)"), *impl = orr_csv_get(t, r, "impl");
        uint32_t m, n, k;
        double us = orr_csv_num(t, r, "time_us");
        if (!ex || !(us > 0) || !measured_mnk(t, r, &m, &n, &k)) continue;
        while (ex > op && ex[-1] >= '0' && ex[-1] <= '9') ex--;
        uint32_t groups = (uint32_t)atoi(ex);
        if (!groups) continue;
        double pred_us = (double)orr_est_gemm_ps(g, m, n, k, groups, ORR_BF16, 0, 0) / 1e6;
        double e = us * groups / pred_us - 1.0; /* predicted throughput over measured - 1 */
        if (strcmp(impl, "torch._grouped_mm") == 0) eg[(*ng)++] = e;
        else if (strncmp(impl, "torch.mm x", 10) == 0) el[(*nl)++] = e;
    }
}

/* The experts' bf16 GEMMs of MoE Table 2's AutoModel rows (grouped_moe.csv: M, N, K per expert, the
 * expert count in the op, the time per expert), and at the expert shapes of Megatron-Core's MoE rows
 * (te_grouped_moe.csv): the model's batched GEMM (the experts as the batch, as moe.c prices them)
 * against torch._grouped_mm and against one torch.mm per expert. */
static int measured_grouped(const char *dir, const orr_gpu *g, orr_valid_measured *out, orr_err *err)
{
    orr_csv t, u;
    if (measured_load(&t, dir, "grouped_moe.csv", err) < 0) return -1;
    if (measured_load_from(&u, dir, MEASURED_DIR_SUSTAINED, "te_grouped_moe.csv", err) < 0) {
        orr_csv_free(&t);
        return -1;
    }
    size_t cap = (size_t)(t.nrows > u.nrows ? t.nrows : u.nrows) + 1;
    double *eg = orr_xmalloc(cap * sizeof *eg), *el = orr_xmalloc(cap * sizeof *el);
    grouped_errors(&t, g, eg, &out->grouped_n, el, &out->grouped_loop_n);
    out->grouped_median_error = median_of(eg, out->grouped_n);
    out->grouped_loop_median_error = median_of(el, out->grouped_loop_n);
    grouped_errors(&u, g, eg, &out->mcore_grouped_n, el, &out->mcore_grouped_loop_n);
    out->mcore_grouped_median_error = median_of(eg, out->mcore_grouped_n);
    out->mcore_grouped_loop_median_error = median_of(el, out->mcore_grouped_loop_n);
    orr_csv_free(&t), orr_csv_free(&u);
    free(eg), free(el);
    return 0;
}

/* One causal attention row of attention*.csv: measured time over the model's (FlashAttention-2's level,
 * or cuDNN's for the cuDNN backend) - 1, i.e. predicted throughput over measured - 1; 0 with *ok 0 when
 * the row is not a forward or backward time. */
static double attention_row_error(const orr_csv *t, int r, const orr_gpu *g, int *bwd, int *cudnn, int *ok)
{
    const char *dirn = orr_csv_get(t, r, "direction");
    *ok = 0;
    *bwd = strcmp(dirn, "bwd") == 0;
    *cudnn = strstr(orr_csv_get(t, r, "impl"), "cuDNN") != NULL;
    if (!*bwd && strcmp(dirn, "fwd") != 0) return 0; /* fwd+bwd is their sum */
    uint32_t b = measured_dim(t, r, "batch"), h = measured_dim(t, r, "nheads"), s = measured_dim(t, r, "seqlen_q");
    uint32_t d = measured_dim(t, r, "headdim");
    double ms = orr_csv_num(t, r, "time_ms");
    if (!b || !h || !s || !d || !(ms > 0) || !isfinite(ms) || (uint64_t)b * h > UINT32_MAX) return 0;
    /* the generator's causal count: (nq + 1) / 2nq of the unmasked FLOPs */
    uint32_t dims[4] = {b * h, s, s, d};
    double nq = ceil(s / 128.0), full = 4.0 * b * h * (double)s * s * d * (*bwd ? 2.5 : 1.0);
    double pred_s = (double)orr_est_attention_kernel_ps(g, *bwd, *cudnn, dims, ORR_BF16, full * (nq + 1) / (2 * nq), 0) /
                    (double)ORR_PS_PER_S;
    if (!(pred_s > 0)) return 0;
    *ok = 1;
    return ms * 1e-3 / pred_s - 1.0;
}

static int measured_attention(const char *dir, const orr_gpu *g, orr_valid_measured *out, orr_err *err)
{
    orr_csv t;
    if (measured_load(&t, dir, "attention.csv", err) < 0) return -1;
    double e[32][16], cf[2][64], ch[2][64];
    size_t ncf[2] = {0, 0}, nch[2] = {0, 0};
    for (int r = 1; r < t.nrows; r++) {
        int bwd, cudnn, ok;
        double x = attention_row_error(&t, r, g, &bwd, &cudnn, &ok);
        if (!ok) continue;
        const char *p = strstr(orr_csv_get(&t, r, "notes"), "dropout_p ");
        double dropout = p ? strtod(p + 10, NULL) : 0.0;
        char label[96];
        snprintf(label, sizeof label, "%s, dropout %.1f, %s, batch %u", cudnn ? "cuDNN" : "flash (FlashAttention-2)",
                 dropout, bwd ? "bwd" : "fwd", measured_dim(&t, r, "batch"));
        size_t i = 0;
        while (i < out->attn_n && strcmp(out->attn[i].label, label) != 0) i++;
        if (i == out->attn_n) {
            if (out->attn_n == sizeof out->attn / sizeof out->attn[0]) continue;
            snprintf(out->attn[out->attn_n++].label, sizeof out->attn[0].label, "%s", label);
        }
        if (out->attn[i].n == sizeof e[0] / sizeof e[0][0]) continue;
        e[i][out->attn[i].n++] = x;
        if (cudnn && dropout == 0.0 && ncf[bwd] < 64) cf[bwd][ncf[bwd]++] = x; /* what attn_cudnn_*_eff was fitted on */
    }
    orr_csv_free(&t);
    for (size_t i = 0; i < out->attn_n; i++) out->attn[i].median_error = median_of(e[i], out->attn[i].n);
    /* held out: the grouped-query shapes (attention_gqa.csv), cuDNN's rows */
    if (measured_load(&t, dir, "attention_gqa.csv", err) < 0) return -1;
    for (int r = 1; r < t.nrows; r++) {
        int bwd, cudnn, ok;
        double x = attention_row_error(&t, r, g, &bwd, &cudnn, &ok);
        if (ok && cudnn && nch[bwd] < 64) ch[bwd][nch[bwd]++] = x;
    }
    orr_csv_free(&t);
    for (int b = 0; b < 2; b++) {
        out->cudnn_n[b][0] = ncf[b], out->cudnn_n[b][1] = nch[b];
        out->cudnn_error[b][0] = median_of(cf[b], ncf[b]);
        out->cudnn_error[b][1] = median_of(ch[b], nch[b]);
    }
    return 0;
}

static int measured_overlap(const char *dir, const orr_gpu *g, orr_valid_measured *out, orr_err *err)
{
    orr_csv t;
    if (measured_load(&t, dir, "overlap.csv", err) < 0) return -1;
    enum { KMAX = sizeof out->overlap_blocks / sizeof out->overlap_blocks[0], NMAX = 64 };
    double ge[KMAX][NMAX], ae[KMAX][NMAX];
    size_t gn[KMAX] = {0}, an[KMAX] = {0};
    for (int r = 1; r < t.nrows; r++) {
        uint32_t k = measured_dim(&t, r, "contender_blocks");
        double alone = orr_csv_num(&t, r, "alone_ms"), with = orr_csv_num(&t, r, "contended_ms");
        if (!k || !(alone > 0) || !(with > 0) || !isfinite(alone) || !isfinite(with)) continue;
        if (strcmp(orr_csv_get(&t, r, "contender_outlasted"), "True") != 0) { /* the contender ended first */
            out->overlap_skipped++;
            continue;
        }
        size_t i = 0;
        while (i < out->overlap_k && out->overlap_blocks[i] != k) i++;
        if (i == out->overlap_k) {
            if (out->overlap_k == KMAX) continue;
            out->overlap_blocks[out->overlap_k++] = k;
        }
        int attn = strstr(orr_csv_get(&t, r, "kernel"), "attention") != NULL;
        if (attn && an[i] < NMAX) ae[i][an[i]++] = with / alone - 1.0;
        else if (!attn && gn[i] < NMAX) ge[i][gn[i]++] = with / alone - 1.0;
        out->overlap_rows++;
    }
    orr_csv_free(&t);
    for (size_t i = 0; i < out->overlap_k; i++) {
        out->overlap_gemm[i] = median_of(ge[i], gn[i]);
        out->overlap_attn[i] = median_of(ae[i], an[i]);
    }
    out->overlap_model = g->overlap_slowdown;
    out->overlap_model_nccl_gemm = g->nccl_gemm_slowdown;
    out->overlap_model_deepep_gemm = g->deepep_gemm_slowdown;
    return 0;
}

/* Kernels shorter than this are timed with PyTorch's host time between the events in the files. */
#define MEASURED_MIN_KERNEL_US 100.0

static int measured_sweep(const char *dir, const orr_gpu *g, orr_valid_measured *out, dur_errors *dur, orr_err *err)
{
    orr_csv t;
    if (measured_load(&t, dir, "gemm_sweep.csv", err) < 0) return -1;
    size_t cap = (size_t)t.nrows + 1;
    double *e = orr_xmalloc(cap * sizeof *e);
    for (int r = 1; r < t.nrows; r++) {
        double us, err_r;
        if (!measured_gemm_error(&t, r, g, &us, &err_r)) continue;
        if (us < MEASURED_MIN_KERNEL_US) {
            out->sweep_short++;
        } else {
            e[out->sweep_n++] = err_r;
            dur_add(dur, us, err_r);
        }
    }
    orr_csv_free(&t);
    out->sweep_median_abs = median_of_abs(e, out->sweep_n);
    out->sweep_median_signed = median_of(e, out->sweep_n);
    free(e);
    if (measured_load(&t, dir, "overlap_sweep.csv", err) < 0) return -1;
    cap = (size_t)t.nrows + 1;
    double *c = orr_xmalloc(cap * sizeof *c), *sp = orr_xmalloc(cap * sizeof *sp);
    size_t nc = 0, ns = 0;
    for (int r = 1; r < t.nrows; r++) {
        double alone = orr_csv_num(&t, r, "alone_ms"), with = orr_csv_num(&t, r, "contended_ms");
        if (!(alone * 1e3 >= MEASURED_MIN_KERNEL_US) || !(with > 0) || !isfinite(alone) || !isfinite(with) ||
            strcmp(orr_csv_get(&t, r, "contender_outlasted"), "True") != 0)
            continue;
        if (strcmp(orr_csv_get(&t, r, "contender"), "copy") == 0) c[nc++] = with / alone - 1.0;
        else sp[ns++] = with / alone - 1.0;
    }
    orr_csv_free(&t);
    out->sweep_overlap_n = nc + ns;
    out->sweep_overlap_copy = median_of(c, nc);
    out->sweep_overlap_spin = median_of(sp, ns);
    free(c), free(sp);
    return 0;
}

/* gemm_sustained.csv: each shape's burst row (as gemm.csv times it) then its sustained row (after 2 s of
 * large GEMMs, the clock held down by the 700 W cap). */
static int measured_sustained(const char *dir, const orr_gpu *g, orr_valid_measured *out, orr_err *err)
{
    orr_csv t;
    if (measured_load_from(&t, dir, MEASURED_DIR_SUSTAINED, "gemm_sustained.csv", err) < 0) return -1;
    size_t cap = (size_t)t.nrows + 1;
    double *eb = orr_xmalloc(cap * sizeof *eb), *es = orr_xmalloc(cap * sizeof *es);
    double *slow = orr_xmalloc(cap * sizeof *slow);
    size_t nb = 0;
    double burst_us = 0;
    for (int r = 1; r < t.nrows; r++) {
        const char *op = orr_csv_get(&t, r, "op");
        size_t len = strlen(op);
        double us, e;
        if (!measured_gemm_error(&t, r, g, &us, &e)) continue;
        if (len > 6 && strcmp(op + len - 6, " burst") == 0) {
            eb[nb++] = e, burst_us = us;
        } else if (len > 10 && strcmp(op + len - 10, " sustained") == 0 && burst_us > 0 && out->sustained_n < nb) {
            slow[out->sustained_n] = us / burst_us - 1.0;
            es[out->sustained_n++] = e;
            burst_us = 0;
        }
    }
    orr_csv_free(&t);
    out->sustained_burst_median_signed = median_of(eb, nb);
    out->sustained_median_abs = median_of_abs(es, out->sustained_n);
    out->sustained_median_signed = median_of(es, out->sustained_n);
    out->sustained_slowdown_median = median_of(slow, out->sustained_n);
    out->sustained_slowdown_min = out->sustained_n ? slow[0] : 0; /* sorted by median_of */
    free(eb), free(es), free(slow);
    return 0;
}

/* kernels_sustained.csv: the other kernels of a step timed the same two ways, as
 * orr_valid_measured.ks_* sorts them: bf16 GEMMs, fp8 GEMMs, flash attention, cuDNN attention and
 * memory-bound kernels; and each fp8 GEMM's speed-up over the bf16 row before it (same shape). */
static int measured_kernels_sustained(const char *dir, const orr_gpu *g, orr_valid_measured *out, orr_err *err)
{
    orr_csv t;
    if (measured_load_from(&t, dir, MEASURED_DIR_SUSTAINED, "kernels_sustained.csv", err) < 0) return -1;
    size_t cap = (size_t)t.nrows + 1;
    double *ratio[ORR_KS_CLASSES], *sp[3];
    for (int c = 0; c < ORR_KS_CLASSES; c++) ratio[c] = orr_xmalloc(cap * sizeof **ratio);
    for (int i = 0; i < 3; i++) sp[i] = orr_xmalloc(cap * sizeof **sp);
    double b16_burst = 0, b16_sus = 0;
    const char *b16_shape = "";
    for (int r = 1; r < t.nrows; r++) {
        const char *kernel = orr_csv_get(&t, r, "kernel"), *dt = orr_csv_get(&t, r, "dtype");
        const char *shape = orr_csv_get(&t, r, "shape");
        double burst = orr_csv_num(&t, r, "burst_ms"), sus = orr_csv_num(&t, r, "sustained_ms");
        if (!(burst > 0) || !(sus > 0) || !isfinite(burst) || !isfinite(sus)) continue;
        int gemm = strncmp(kernel, "gemm ", 5) == 0, fp8 = strncmp(dt, "fp8", 3) == 0;
        int c = gemm ? (fp8 ? ORR_KS_GEMM_FP8 : ORR_KS_GEMM_BF16)
              : strncmp(kernel, "attention flash", 15) == 0 ? ORR_KS_FLASH
              : strncmp(kernel, "attention cudnn", 15) == 0 ? ORR_KS_CUDNN : ORR_KS_MEMORY;
        ratio[c][out->ks_n[c]++] = sus / burst;
        if (gemm && !fp8) {
            b16_burst = burst, b16_sus = sus, b16_shape = shape;
        } else if (gemm && fp8 && b16_burst > 0 && strcmp(shape, b16_shape) == 0) {
            unsigned m, n, k;
            if (sscanf(shape, "%ux%ux%u", &m, &n, &k) != 3 || !m || !n || !k) continue;
            double t8 = (double)orr_est_gemm_ps(g, m, n, k, 1, ORR_FP8, 0, 0);
            if (!(t8 > 0)) continue;
            sp[0][out->ks_fp8_pairs] = b16_burst / burst;
            sp[1][out->ks_fp8_pairs] = b16_sus / sus;
            sp[2][out->ks_fp8_pairs++] = (double)orr_est_gemm_ps(g, m, n, k, 1, ORR_BF16, 0, 0) / t8;
            b16_burst = 0;
        }
    }
    orr_csv_free(&t);
    for (int c = 0; c < ORR_KS_CLASSES; c++) {
        size_t n = out->ks_n[c];
        out->ks_ratio_median[c] = median_of(ratio[c], n); /* sorts */
        out->ks_ratio_min[c] = n ? ratio[c][0] : 0;
        out->ks_ratio_max[c] = n ? ratio[c][n - 1] : 0;
        free(ratio[c]);
    }
    out->ks_fp8_speedup_burst = median_of(sp[0], out->ks_fp8_pairs);
    out->ks_fp8_speedup_sustained = median_of(sp[1], out->ks_fp8_pairs);
    out->ks_fp8_speedup_model = median_of(sp[2], out->ks_fp8_pairs);
    for (int i = 0; i < 3; i++) free(sp[i]);
    return 0;
}

/* layer_sustained.csv: the GEMMs of two stacked eager GPT layers (QKV, projection, FC1, FC2 of a TP shard;
 * forward, data and weight gradient), their kernel time per layer inside steps run back to back (the
 * profiler's split), against the model's twelve GEMMs of that layer. */
static int measured_layer_gemms(const char *dir, const orr_gpu *g, orr_valid_measured *out, orr_err *err)
{
    orr_csv t;
    if (measured_load_from(&t, dir, MEASURED_DIR_SUSTAINED, "layer_sustained.csv", err) < 0) return -1;
    size_t cap = (size_t)t.nrows + 1;
    double *e = orr_xmalloc(cap * sizeof *e);
    for (int r = 1; r < t.nrows; r++) {
        uint32_t h = measured_dim(&t, r, "hidden"), tp = measured_dim(&t, r, "tp"), tok = measured_dim(&t, r, "tokens");
        double ms = orr_csv_num(&t, r, "gemm_ms_per_layer");
        if (strcmp(orr_csv_get(&t, r, "timing"), "sustained") != 0 || !h || h >= (1u << 28) || !tp || !tok ||
            h % tp || !(ms > 0) || !isfinite(ms)) /* 4h stays a uint32_t */
            continue;
        const uint32_t lin[4][2] = {{3 * h / tp, h}, {h, h / tp}, {4 * h / tp, h}, {h, 4 * h / tp}}; /* N, K */
        double ps = 0;
        for (int i = 0; i < 4; i++) {
            uint32_t n = lin[i][0], k = lin[i][1];
            ps += (double)orr_est_gemm_ps(g, tok, n, k, 1, ORR_BF16, 0, 0) +
                  (double)orr_est_gemm_ps(g, tok, k, n, 1, ORR_BF16, 0, 0) +
                  (double)orr_est_gemm_ps(g, n, k, tok, 1, ORR_BF16, 0, 0);
        }
        if (ps > 0) e[out->layer_gemm_n++] = ms * 1e9 / ps - 1.0; /* predicted throughput over measured - 1 */
    }
    orr_csv_free(&t);
    out->layer_gemm_median_signed = median_of(e, out->layer_gemm_n);
    out->layer_gemm_max_abs = 0;
    for (size_t i = 0; i < out->layer_gemm_n; i++)
        if (fabs(e[i]) > out->layer_gemm_max_abs) out->layer_gemm_max_abs = fabs(e[i]);
    free(e);
    return 0;
}

int orr_validate_measured(const char *dir, double gemm_eff, orr_valid_measured *out, orr_err *err)
{
    memset(out, 0, sizeof *out);
    orr_gpu g;
    if (orr_catalog_gpu("H100-SXM5-80GB", &g, err) < 0) return -1;
    if (gemm_eff > 0) g.gemm_eff = gemm_eff;
    dur_errors dur = {{0}, {0}, {0}};
    int rc = measured_gemm(dir, &g, out, &dur, err) < 0 || measured_fp8(dir, &g, out, err) < 0 ||
             measured_fp8_scaling(dir, &g, out, err) < 0 || measured_grouped(dir, &g, out, err) < 0 ||
             measured_attention(dir, &g, out, err) < 0 || measured_overlap(dir, &g, out, err) < 0 ||
             measured_sweep(dir, &g, out, &dur, err) < 0 || measured_sustained(dir, &g, out, err) < 0 ||
             measured_kernels_sustained(dir, &g, out, err) < 0 || measured_layer_gemms(dir, &g, out, err) < 0;
    for (int b = 0; b < 3; b++) {
        out->dur_n[b] = dur.n[b];
        out->dur_median_signed[b] = median_of(dur.e[b], dur.n[b]);
        free(dur.e[b]);
    }
    if (rc) return -1;
    if (out->gemm_n == 0 || out->fp8_n == 0 || out->attn_n == 0)
        return orr_fail(err, "%s/" MEASURED_DIR ": expected bf16 GEMM, fp8 GEMM and attention rows, found %zu, %zu "
                             "and %zu", dir, out->gemm_n, out->fp8_n, out->attn_n);
    return 0;
}

void orr_valid_measured_print(const orr_valid_measured *m, orr_buf *out)
{
    orr_buf_printf(out, "Kernels measured on one H100 (" MEASURED_DIR
                        "; nothing fitted to them but the fp8 scaling rates)\n"
                        "  error: predicted throughput / measured - 1 (positive = predicted faster)\n");
    orr_buf_printf(out, "  bf16 GEMMs at the Megatron-Core rows' shapes: %zu, median |error| %.1f%%, median error %+.1f%% "
                        "(micro-batch 4: %+.1f%% over %zu; micro-batch 1: %+.1f%% over %zu)\n",
                   m->gemm_n, 100 * m->gemm_median_abs, 100 * m->gemm_median_signed, 100 * m->gemm_mbs4_median_signed,
                   m->gemm_n_mbs4, 100 * m->gemm_mbs1_median_signed, m->gemm_n_mbs1);
    orr_buf_printf(out, "  bf16 GEMMs at random shapes (M, N, K 256-32768): %zu of at least 100 us, median |error| "
                        "%.1f%%, median error %+.1f%% (%zu shorter ones left out: host-bound timing)\n", m->sweep_n,
                   100 * m->sweep_median_abs, 100 * m->sweep_median_signed, m->sweep_short);
    orr_buf_printf(out, "  the same bf16 GEMMs by measured duration, median error: under 0.8 ms %+.1f%% (%zu kernels), "
                        "0.8-3 ms %+.1f%% (%zu), 3 ms and over %+.1f%% (%zu): the probe times a shape in one burst of calls "
                        "(3-64 ms), long kernels at the clock the 700 W cap allows, short ones near boost "
                        "(docs/models.md \"Power-capped clocks\")\n",
                   100 * m->dur_median_signed[0], m->dur_n[0], 100 * m->dur_median_signed[1], m->dur_n[1],
                   100 * m->dur_median_signed[2], m->dur_n[2]);
    orr_buf_printf(out, "  the power cap (" MEASURED_DIR_SUSTAINED "/gemm_sustained.csv): %zu bf16 GEMMs (0.1-7 ms) "
                        "timed in one burst after 2 s idle, median error %+.1f%%, and after 2 s of large GEMMs "
                        "(700 W, 1,350-1,515 MHz), median |error| %.1f%%, median error %+.1f%%; sustained over burst "
                        "+%.1f%% (median; at least +%.1f%%)\n",
                   m->sustained_n, 100 * m->sustained_burst_median_signed, 100 * m->sustained_median_abs,
                   100 * m->sustained_median_signed, 100 * m->sustained_slowdown_median, 100 * m->sustained_slowdown_min);
    static const char *const ks[ORR_KS_CLASSES] = {"bf16 GEMMs", "fp8 GEMMs", "flash attention", "cuDNN attention",
                                                   "memory-bound"};
    orr_buf_printf(out, "  other kernels the same two ways (kernels_sustained.csv), sustained over burst time, median "
                        "(range):");
    for (int c = 0; c < ORR_KS_CLASSES; c++)
        orr_buf_printf(out, "%s %s %zu x%.3f (%.3f-%.3f)", c ? "," : "", ks[c], m->ks_n[c], m->ks_ratio_median[c],
                       m->ks_ratio_min[c], m->ks_ratio_max[c]);
    orr_buf_printf(out, "; fp8 over bf16 at %zu shapes: burst %.2fx, sustained %.2fx, Orrery %.2fx\n", m->ks_fp8_pairs,
                   m->ks_fp8_speedup_burst, m->ks_fp8_speedup_sustained, m->ks_fp8_speedup_model);
    orr_buf_printf(out, "  the GEMMs of eager GPT layers inside steps run back to back (layer_sustained.csv, the "
                        "profiler's kernel time; 1.7B, 7.1B, 32B at micro-batch 4, 177B at 1): %zu rows, median error "
                        "%+.1f%%, largest |error| %.1f%%\n", m->layer_gemm_n, 100 * m->layer_gemm_median_signed,
                   100 * m->layer_gemm_max_abs);
    orr_buf_printf(out, "  fp8 (tensorwise) over bf16 GEMMs: %zu shapes, measured speed-up %.2fx (median), predicted / "
                        "measured %+.1f%%\n", m->fp8_n, m->fp8_speedup_measured, 100 * m->fp8_speedup_median_error);
    static const char *const sc[] = {"rowwise", "blockwise 1x128 x 128x128", "blockwise 1x128 x 1x128"};
    orr_buf_printf(out, "  fp8 scaling over tensorwise (the GPU's fp8_*_rate fitted on the dense shapes of two runs; "
                        "held out: the MoE experts' shapes and a run on a second machine):\n");
    for (int i = 0; i < 3; i++)
        orr_buf_printf(out, "    %-26s fitted: %3zu rows, measured %.3fx, error %+5.1f%%; held out: %2zu rows, measured "
                            "%.3fx, error %+5.1f%%\n", sc[i], m->fp8_scaling_n[i][0], m->fp8_scaling_measured[i][0],
                       100 * m->fp8_scaling_error[i][0], m->fp8_scaling_n[i][1], m->fp8_scaling_measured[i][1],
                       100 * m->fp8_scaling_error[i][1]);
    orr_buf_printf(out, "  bf16 grouped GEMMs of MoE Table 2's AutoModel experts (forward, data and weight gradient; "
                        "the experts as a batched GEMM): torch._grouped_mm %zu, median error %+.1f%%; one torch.mm per "
                        "expert %zu, %+.1f%%\n", m->grouped_n, 100 * m->grouped_median_error, m->grouped_loop_n,
                   100 * m->grouped_loop_median_error);
    orr_buf_printf(out, "  the same at the expert shapes of Megatron-Core's MoE rows (" MEASURED_DIR_SUSTAINED
                        "/te_grouped_moe.csv: Qwen3-30B-A3B, GPT-OSS 120B, Qwen3-235B-A22B, 4-16 experts of 512-4,096 "
                        "tokens): torch._grouped_mm %zu, %+.1f%%; one torch.mm per expert %zu, %+.1f%%\n",
                   m->mcore_grouped_n, 100 * m->mcore_grouped_median_error, m->mcore_grouped_loop_n,
                   100 * m->mcore_grouped_loop_median_error);
    orr_buf_printf(out, "  causal attention, sequence 4096, head dim 128, median error over the head counts:\n");
    for (size_t i = 0; i < m->attn_n; i++)
        orr_buf_printf(out, "    %-52s %2zu  %+6.1f%%\n", m->attn[i].label, m->attn[i].n, 100 * m->attn[i].median_error);
    for (int b = 0; b < 2; b++)
        orr_buf_printf(out, "  cuDNN's level (attn_cudnn_%s_eff) fitted on %zu dropout-0 rows: %+.1f%%; held out, %zu "
                            "grouped-query rows (attention_gqa.csv): %+.1f%%\n", b ? "bwd" : "fwd", m->cudnn_n[b][0],
                       100 * m->cudnn_error[b][0], m->cudnn_n[b][1], 100 * m->cudnn_error[b][1]);
    orr_buf_printf(out, "  compute beside a kernel holding k SMs (a copy or a spin loop, as NCCL's channels), median "
                        "slowdown over %zu rows (%zu not compared: the contender ended first); Orrery slows a GEMM that "
                        "starts under an NCCL collective by %.0f%% (beside DeepEP's 20 SMs by %.0f%%), any other kernel "
                        "under communication by %.0f%%:\n",
                   m->overlap_rows, m->overlap_skipped, 100 * m->overlap_model_nccl_gemm,
                   100 * (m->overlap_model_deepep_gemm > 0 ? m->overlap_model_deepep_gemm : m->overlap_model_nccl_gemm),
                   100 * m->overlap_model);
    for (size_t i = 0; i < m->overlap_k; i++)
        orr_buf_printf(out, "    k = %2u: GEMMs %+6.1f%%, flash attention %+6.1f%%\n", m->overlap_blocks[i],
                       100 * m->overlap_gemm[i], 100 * m->overlap_attn[i]);
    orr_buf_printf(out, "    k = 16, random-shape GEMMs of at least 100 us (%zu rows): %+.1f%% beside the copy, %+.1f%% "
                        "beside the spin loop\n", m->sweep_overlap_n, 100 * m->sweep_overlap_copy,
                   100 * m->sweep_overlap_spin);
}
