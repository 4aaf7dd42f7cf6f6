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
 *     dropout masks 2h                                                           = 10h for GPT
 *   inside: Q, K, V 2(q + 2kv), projection input 2q, activation-function input 2f (x2 gated),
 *     FC2 input 2f                                                               = 24h/t for GPT
 *   scores (unfused, no selective recompute): 5 a s / t per token. */
static double layer_saved_bytes(const gen *G, orr_recompute rc)
{
    if (rc == ORR_RECOMPUTE_FULL) return 2.0 * gen_tokens(G) * G->h / (G->sp ? G->T : 1.0);
    double t = G->T, q = G->a * G->hd, kv = G->g * G->hd;
    int flash = G->s->attention == ORR_ATTN_FLASH;
    int sel = rc == ORR_RECOMPUTE_SELECTIVE;
    double outside = 10.0 * G->h;
    double inside = 2.0 * (q + 2.0 * kv) + 2.0 * q + 2.0 * G->f * (G->gated ? 2.0 : 1.0) + 2.0 * G->f;
    double scores = (flash || sel) ? 0.0 : 5.0 * G->a * G->sq / G->C;
    double per_token = outside / (G->sp ? t : 1.0) + (inside + scores) / t;
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

/* Model params in the training dtype, the fp32 main-gradient buffer (fp16 grads for fp16), fp32
 * master params and Adam moments (12 B per parameter, sharded over dp x cp by the distributed
 * optimizer). */
static void persistent_memory(gen *G)
{
    ctx cx = {ORR_PHASE_OTHER, ORR_NO_LAYER, ORR_NO_MB, 0};
    double P = gen_rank_params(G), pb = G->dt == ORR_FP32 ? 4.0 : 2.0;
    gen_persistent_buffers(G, &cx, pb * P, G->grad_B * P);
    gen_mem_alloc(G, &cx, S_COMPUTE, "optimizer_state", 12.0 * P / (G->dist ? G->R : 1.0), ORR_MEM_OPTIM);
}

/* DDP reduces in fp32 for bf16 training (accumulate_allreduce_grads_in_fp32 is forced). Its
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
}

static const recipe megatron = {
    .reduces_over_cp = 1,
    .pads_vocab_to = 128.0, /* --make-vocab-size-divisible-by 128, times tp */
    .setup = setup,
    .layer_saved_bytes = layer_saved_bytes,
    .cp_attention = gen_ring_attention,
    .loss_mem_fwd = loss_mem_fwd,
    .loss_mem_bwd = gen_loss_mem_bwd_plain,
    .persistent_memory = persistent_memory,
};

const recipe *orr_recipe_megatron(const orr_spec *s)
{
    (void)s;
    return &megatron;
}
