/*
 * megatron.c - the Megatron-LM / Megatron-Core recipe of the training generator (gen.h): what a
 * layer saves for its backward (Korthikanti et al.'s sizes), the vocabulary padded to 128 x tp,
 * DDP gradient buckets in fp32 or the distributed optimizer (reduce-scatter, optimizer on the
 * shard, parameter all-gather overlapped with the next forward), the fused vocab-parallel
 * cross-entropy's memory, and ring attention (Transformer Engine's p2p context parallelism).
 */
#include "models/gen.h"

/* Bytes of activations one layer keeps for its backward, per rank (Korthikanti et al. 2022,
 * "Reducing Activation Recomputation in Large Transformer Models", Table 2):
 *   no recompute:      s*b*h*(10 + 24/t + 5*a*s/(h*t)),  with SP: s*b*h*(34/t + 5*a*s/(h*t))
 *   selective:         the 5*a*s/h attention-score term is dropped
 *   full:              only the layer input, 2*s*b*h (with SP: 2*s*b*h/t)
 * Flash attention never materialises the s x s scores, so the score term is dropped for it too.
 * Generalised to GQA and gated MLPs term by term (per token, 2-byte activations, TP degree t):
 *   outside TP regions (split by t only with SP): 2 norm inputs 4h, QKV and FC1 inputs 4h, two
 *     dropout masks 2h (none when the recipe trains without dropout: ATen's dropout returns its
 *     input at p = 0)                                                            = 10h for GPT
 *   inside: Q, K, V 2(q + 2kv), projection input 2q, activation-function input 2f (x2 gated),
 *     FC2 input 2f                                                               = 24h/t for GPT
 *   scores (unfused, no selective recompute): 5 a s / t per token.
 * Under FP8 (Transformer Engine's Linear, LayerNormLinear, LayerNormMLP) each GEMM saves its input
 * as the FP8 tensor it casts for the weight gradient, 1 B per element: the QKV and FC1 inputs h
 * instead of 2h, the FC2 input f instead of 2f; the projection's FP8 input q comes on top of the
 * attention output the bf16 fused attention keeps for its own backward (2q).
 * Selective recompute drops what its recompute_modules (gen_rc_modules) re-create (Megatron-Core's
 * transformer_layer.py, attention.py, mlp.py; docs/models.md "Selective recompute"):
 *   core_attn: the attention core is checkpointed (tensor_parallel.checkpoint: only its inputs Q, K,
 *     V kept): the scores of unfused attention; under FP8 the bf16 attention output, which then only
 *     the projection's FP8 cast outlives (in bf16 the projection keeps that output as its input);
 *   layernorm: a norm that is a module of its own has its output discarded; in the layer specs of
 *     Transformer Engine that is MLA's input norm (the QKV input here: the down projections'), and an
 *     MoE layer's pre-MLP norm (moe.c); elsewhere the norms are fused into the next linear;
 *   mlp: a dense layer's MLP checkpointed, its input (the pre-MLP residual, one of the norm inputs)
 *     kept: the FC1 input and everything inside the MLP dropped (an MoE layer has none: moe.c);
 *   mla_up_proj: MLA's up projections and rotary discard their outputs, the Q, K, V. */
static double layer_saved_bytes(const gen *G, orr_recompute rc)
{
    if (rc == ORR_RECOMPUTE_FULL) return 2.0 * gen_tokens(G) * G->h / (G->sp ? G->T : 1.0);
    uint32_t m = gen_rc_modules(G, rc);
    double t = G->T, q = G->a * G->hd, kv = G->g * G->hd;
    int flash = G->s->attention != ORR_ATTN_UNFUSED; /* flash or cuDNN: fused, no scores kept */
    int core = (m & ORR_RCM_CORE_ATTN) != 0, narrow = orr_dtype_is_narrow(G->dt);
    double gemm_in_B = narrow ? 1.0 : 2.0; /* a GEMM's saved input, per element */
    double masks = G->s->model.dropout > 0 ? 2.0 * G->h : 0.0;
    double qkv_in = G->mla && (m & ORR_RCM_LAYERNORM) ? 0.0 : gemm_in_B * G->h;
    double fc1_in = gemm_in_B * G->h;
    double mlp = 2.0 * G->f * (G->gated ? 2.0 : 1.0) + gemm_in_B * G->f;
    if (!G->s->bias_activation_fusion && G->gated) mlp += 2.0 * G->f; /* glu's silu output, kept by its product */
    if (m & ORR_RCM_MLP) fc1_in = mlp = 0;
    double outside = 4.0 * G->h + qkv_in + fc1_in + masks;
    double qkv = G->mla && (m & ORR_RCM_MLA_UP_PROJ) ? 0.0 : 2.0 * (q + 2.0 * kv);
    double proj_in = narrow ? gemm_in_B * q + (core ? 0.0 : 2.0 * q) : 2.0 * q;
    double scores = (flash || core) ? 0.0 : 5.0 * G->a * G->sq / G->C;
    double per_token = outside / (G->sp ? t : 1.0) + (qkv + proj_in + mlp + scores) / t;
    return per_token * gen_tokens(G);
}

/* The bf16 logits while the fused vocab-parallel cross-entropy builds the fp32 softmax (4 B per
 * logit), kept for the backward; the backward turns it into the gradient in place and casts it to
 * bf16 (2 B) for the head GEMMs. */
static void loss_mem_fwd(gen *G, const ctx *c)
{
    double logits = gen_tokens(G) * G->vocab / G->T;
    uint32_t b = gen_mem_alloc(G, c, S_COMPUTE, "logits", logits * G->act_B, ORR_MEM_TEMP);
    gen_mem_op(G, c, ORR_OP_ALLOC, S_COMPUTE, "loss_saved", G->head_base + c->mb, logits * 4.0, ORR_MEM_ACT);
    gen_mem_free(G, c, S_COMPUTE, b);
}

/* Weights of this rank's decoder linear layers (QKV, projection, MLP), the ones Transformer Engine
 * runs in FP8: per layer h q + 2 h kv + q h + (3 or 2) h f, split by tp. */
static double rank_linear_params(const gen *G)
{
    if (G->s->model.experts) /* MoE: every parameter of its layers (the embedding and head stay bf16) */
        return gen_rank_params(G) - gen_rank_root_params(G);
    double q = G->a * G->hd, kv = G->g * G->hd;
    double per_layer = G->h * q + 2.0 * G->h * kv + q * G->h + (G->gated ? 3.0 : 2.0) * G->h * G->f;
    return G->rank_layers * per_layer / G->T;
}

/* Model params in the training dtype, the main-gradient buffer (fp32; bf16 with
 * --grad-reduce-in-bf16; fp16 for fp16), fp32 master params and Adam moments (12 B per parameter,
 * sharded over dp x cp by the distributed optimizer; less with the precision-aware optimizer,
 * gen_optim_state_B). Under FP8 Transformer Engine keeps, across
 * micro-batches and iterations, an FP8 copy of every linear weight and its FP8 transpose (the
 * "weight_fp8" / "weight_t_fp8" workspaces cached on the first micro-batch): 2 B per linear
 * parameter. With --fp8-param-gather the weights themselves are FP8 tensors (1 B, with their 1 B
 * transpose): the bf16 copy and the cast are gone, 2 B in all as in bf16. */
static void persistent_memory(gen *G)
{
    ctx cx = {ORR_PHASE_OTHER, ORR_NO_LAYER, ORR_NO_MB, 0};
    double P = gen_rank_params(G), pb = G->dt == ORR_FP32 ? 4.0 : 2.0;
    double param_bytes = pb * P;
    if (orr_dtype_is_narrow(G->dt) && !G->s->fp8_param_gather) param_bytes += 2.0 * rank_linear_params(G);
    gen_persistent_buffers(G, &cx, param_bytes, G->grad_B * P);
    /* MoE: the routed experts' state is sharded over the expert-data-parallel group */
    double Pe = moe_rank_expert_params(G);
    double optim = gen_optim_state_B(G) * ((P - Pe) / (G->dist ? G->R : 1.0) + Pe / (G->dist ? G->EDP : 1.0));
    gen_mem_alloc(G, &cx, S_COMPUTE, "optimizer_state", optim, ORR_MEM_OPTIM);
}

/* DDP reduces in fp32 for bf16 training (accumulate_allreduce_grads_in_fp32 is forced) unless
 * --grad-reduce-in-bf16 says bf16. Its
 * gradient buffers, and the distributed optimizer's shards and parameter all-gather, use the
 * data-parallel group with the context-parallel ranks (reduces_over_cp): Megatron-Core's
 * DistributedDataParallel reduces each bucket over intra_dp_cp_group and get_megatron_optimizer
 * gives the DistributedOptimizer that group (dp_cp when there is one optimizer instance), since
 * every CP rank holds the same weights and computes gradients for its part of the sequence. The
 * bucket size stays max(40M, 1M x dp) without cp (DistributedDataParallel sizes it by dp_group).
 * The gather is overlapped with the next forward unless options.overlap_param_gather is off. */
static void setup(gen *G)
{
    G->dist = G->s->dist_opt;
    G->overlap_pg = G->s->overlap_param_gather;
    if (G->s->grad_reduce_bf16 && G->dt != ORR_FP32) G->grad_B = 2.0; /* --grad-reduce-in-bf16 */
}

/* Megatron's MoE dispatchers synchronise the host once per MoE layer forward (token_dispatcher.py: the
 * alltoall dispatcher's cuda_sync_point "before_ep_alltoall", its token counts copied to the host for the
 * all-to-all's splits; the flex dispatcher's DeepEP waits on the CPU for its receive counts), then run
 * Python (the splits, the all-to-all call, the sort, Transformer Engine's grouped linear) before the next
 * launch. Its length is fitted (docs/models.md "The dispatcher's host synchronisation"): 300 us makes the
 * six bf16 rows of MoE Table 1 (Megatron's own single-layer benchmark) as far off in the forward as in the
 * backward on average (forward minus backward error +0.4 points; -4.9 without it); the six fp8 rows, MoE
 * Table 2 and Megatron-Bridge's MoE rows are held out. A host property as much as Megatron's. */
#define MEGATRON_MOE_SYNC_HOST_PS INT64_C(300000000)

/* What the Megatron recipes share (with and without Megatron-FSDP): the layers, loss, CP and schedules. */
#define MEGATRON_RECIPE                                                                                    \
    .reduces_over_cp = 1, .overlaps_p2p = 1, .moe_syncs_host = 1, .moe_sync_host_ps = MEGATRON_MOE_SYNC_HOST_PS, \
    .moe_counts_tp_ep = 1, /* token_dispatcher.py preprocess: gather_from_sequence_parallel_region(tp_ep) */ \
    .pads_vocab_to = 128.0, /* --make-vocab-size-divisible-by 128, times tp */                             \
    .layer_saved_bytes = layer_saved_bytes, .cp_attention = gen_ring_attention, .loss_mem_fwd = loss_mem_fwd, \
    .loss_mem_bwd = gen_loss_mem_bwd_plain

static const recipe megatron = {
    MEGATRON_RECIPE,
    .setup = setup,
    .persistent_memory = persistent_memory,
};

const recipe *orr_recipe_megatron(const orr_spec *s)
{
    (void)s;
    return &megatron;
}

/*
 * Megatron-FSDP (Megatron-Core's own FSDP, megatron/core/distributed/fsdp, version 1 as Megatron-LM
 * runs it by default; the mechanism from its source at d98e8a64, docs/models.md "The Megatron-FSDP
 * recipe"), with --data-parallel-sharding-strategy optim_grads_params (Megatron-LM's CLI default):
 *   - Megatron's layers, loss, attention and options (the megatron recipe's), one FSDP unit per
 *     TransformerLayer; the embedding, final norm and output are not units: gathered once a step and
 *     kept (recipe.keeps_root_gathered);
 *   - each unit a flat buffer, sharded over dp x cp: the parameters are views of the gathered buffer
 *     (no copy-out), freed after the unit's forward and re-gathered for its backward;
 *   - the all-gathers run ahead by at least 5e8 parameters (half the suggested communication unit
 *     size, max(1e9, 2 x the average unit)), at least one unit (recipe.prefetch_elems);
 *   - gradients in the model dtype (the main-grads dtype "auto": bf16), scaled by 1/dp, reduce-scattered
 *     after each unit's backward in every micro-batch and added into the persistent sharded gradient;
 *     the compute stream waits for the outstanding reduce-scatters at the end of each backward;
 *   - persistent per parameter: the model-dtype shard (2 B; 1 B with --fp8-param-gather), fp32 main
 *     parameters (4 B), the gradient shard (2 B) and Adam's moments (8 B), all over dp x cp: 16 B / N;
 *     the optimizer step casts the gradient shard to fp32 (4 B / N, a temporary);
 *   - the distributed optimizer is implied (Megatron-LM forces it); --grad-reduce-in-bf16 changes nothing
 *     (version 1 reads only its own --megatron-fsdp-*-dtype flags, left at their defaults here);
 *   - an MoE block's routed experts a second bucket group, sharded over the expert-data-parallel group.
 * Not modelled (refused by resolve): pipeline parallelism, the combined 1F1B schedule.
 */
static void fsdp_setup(gen *G)
{
    G->S = G->D * G->C;
    G->dist = 0;
    G->grad_B = G->act_B;
    G->shard_B = G->act_B; /* the sharded gradients' dtype (the persistent buffer below) */
}

static void fsdp_persistent_memory(gen *G)
{
    ctx cx = {ORR_PHASE_OTHER, ORR_NO_LAYER, ORR_NO_MB, 0};
    double pb = G->s->fp8_param_gather ? 1.0 : G->act_B;
    gen_persistent_buffers(G, &cx, gen_rank_shard_bytes(G, pb + 4.0), gen_rank_shard_bytes(G, G->grad_B));
    gen_mem_alloc(G, &cx, S_COMPUTE, "optimizer_state", gen_rank_shard_bytes(G, 8.0), ORR_MEM_OPTIM);
}

/* Without the precision-aware optimizer the step reads an fp32 copy of the gradient shard. */
static void fsdp_optimizer_temps(gen *G, const ctx *cx, int alloc, uint32_t *first)
{
    if (alloc) *first = gen_mem_alloc(G, cx, S_COMPUTE, "fp32_grad_shard", gen_rank_shard_bytes(G, 4.0), ORR_MEM_TEMP);
    else gen_mem_free(G, cx, S_COMPUTE, *first);
}

static const recipe megatron_fsdp = {
    MEGATRON_RECIPE,
    .shards_params = 1,
    .keeps_root_gathered = 1,
    .prefetch_elems = 5e8,
    .setup = fsdp_setup,
    .persistent_memory = fsdp_persistent_memory,
    .optimizer_temps = fsdp_optimizer_temps,
};

/* The strategies that keep the parameters whole (--data-parallel-sharding-strategy optim or no_shard):
 * one full bf16 buffer of parameters and one of gradients in the model dtype, accumulated locally and
 * reduced over dp x cp in buckets in the last micro-batch's backward (reduce-scattered with optim, whose
 * fp32 main parameters and Adam moments are sharded and whose parameters are all-gathered after the step,
 * overlapped with the next forward under --overlap-param-gather; all-reduced with no_shard, nothing
 * sharded): the megatron recipe's distributed optimizer or DDP buckets with model-dtype gradients,
 * 4 + 12 / N and 16 B per parameter. */
static void fsdp_flat_setup(gen *G)
{
    G->dist = G->s->fsdp_strategy == ORR_FSDP_OPTIM;
    G->overlap_pg = G->s->overlap_param_gather;
    G->grad_B = G->act_B;
}

static const recipe megatron_fsdp_flat = {
    MEGATRON_RECIPE,
    .setup = fsdp_flat_setup,
    .persistent_memory = persistent_memory,
};

const recipe *orr_recipe_megatron_fsdp(const orr_spec *s)
{
    return s->fsdp_strategy == ORR_FSDP_OPTIM_GRADS_PARAMS ? &megatron_fsdp : &megatron_fsdp_flat;
}
