/*
 * deepspeed.c - the DeepSpeed ZeRO recipes of the training generator (gen.h), for a PyTorch model
 * under DeepSpeed's engine (what autograd saves; the eager cross-entropy; ring attention for cp):
 *   ZeRO-1/2: gradients reduce-scattered in the model dtype in buckets, the optimizer on the shard,
 *     the parameters all-gathered after the step; ZeRO-2 keeps only the gradient partition and one
 *     5e8-element reduce bucket;
 *   ZeRO-3: per-block parameter gathering (the parameters are views of the gathered buffer, no
 *     copy-out), bf16 reduce-scatter, always resharded; parameter, gradient and optimizer
 *     partitions over the data-parallel ranks (with cp, over dp x cp), unsharded model-dtype
 *     gradients kept through gradient accumulation; eager kernels.
 */
#include "models/gen.h"

/* Bytes per parameter of the model dtype. */
static double param_B(const gen *G) { return G->dt == ORR_FP32 ? 4.0 : 2.0; }

/* bf16 params; gradients in full (ZeRO-1) or the partition plus one reduce bucket (ZeRO-2); 12 B of
 * optimizer state over dp. */
static void zero12_memory(gen *G)
{
    ctx cx = {ORR_PHASE_OTHER, ORR_NO_LAYER, ORR_NO_MB, 0};
    double P = gen_rank_params(G), pb = param_B(G), D = G->R;
    double reduce_bucket = P < 5e8 ? P : 5e8;
    gen_persistent_buffers(G, &cx, pb * P, G->s->zero == 2 ? pb * (P / D + reduce_bucket) : pb * P);
    gen_mem_alloc(G, &cx, S_COMPUTE, "optimizer_state", 12.0 * P / D, ORR_MEM_OPTIM);
}

/* bf16 parameter and gradient partitions and 12 B of optimizer state, all over the shard group;
 * with gradient accumulation the unsharded gradients in the model dtype too. */
static void zero3_memory(gen *G)
{
    ctx cx = {ORR_PHASE_OTHER, ORR_NO_LAYER, ORR_NO_MB, 0};
    double P = gen_rank_params(G), pb = param_B(G), S = G->S;
    gen_persistent_buffers(G, &cx, pb * P / S, pb * P / S);
    gen_mem_alloc(G, &cx, S_COMPUTE, "optimizer_state", 12.0 * P / S, ORR_MEM_OPTIM);
    if (G->nmb > 1) gen_mem_alloc(G, &cx, S_COMPUTE, "unsharded_gradients", pb * P, ORR_MEM_GRAD);
}

/* DeepSpeed communicates gradients in the model dtype. */
static void zero12_setup(gen *G)
{
    G->dist = 1;
    G->grad_B = G->act_B;
}

static void zero3_setup(gen *G)
{
    G->S = G->D * G->C;
    G->grad_B = G->act_B;
}

static const recipe zero12 = {
    .per_op_sac = 1,
    .pads_vocab_to = 1.0,
    .setup = zero12_setup,
    .layer_saved_bytes = gen_autograd_layer_bytes,
    .cp_attention = gen_ring_attention,
    .loss_mem_fwd = gen_loss_mem_fwd_eager,
    .loss_mem_bwd = gen_loss_mem_bwd_plain,
    .persistent_memory = zero12_memory,
};

static const recipe zero3 = {
    .shards_params = 1,
    .eager_unless_compiled = 1,
    .per_op_sac = 1,
    .pads_vocab_to = 1.0,
    .setup = zero3_setup,
    .layer_saved_bytes = gen_autograd_layer_bytes,
    .cp_attention = gen_ring_attention,
    .loss_mem_fwd = gen_loss_mem_fwd_eager,
    .loss_mem_bwd = gen_loss_mem_bwd_eager,
    .persistent_memory = zero3_memory,
};

const recipe *orr_recipe_deepspeed(const orr_spec *s) { return s->zero == 3 ? &zero3 : &zero12; }
