/*
 * nanotron.c - the nanotron recipe of the training generator (gen.h), as huggingface/nanotron trains
 * its Llama (src/nanotron/models/llama.py) with the Ultra-Scale Playbook's benchmark settings
 * (scripts/scaling_benchmarks.py and examples/config_tiny_llama_bench.yaml: bf16,
 * accumulate_grad_in_fp32, ddp_bucket_cap_mb 25, fused AdamW). Line references are to nanotron at
 * 2411b022 unless said.
 *   - TP: sequence parallelism is tp_mode REDUCE_SCATTER, whose linears scaling_benchmarks.py always
 *     runs with tp_linear_async_communication (`True if tp_mode == "REDUCE_SCATTER"`):
 *     _ColumnLinearAsyncCommunication starts the all-gather, multiplies the local shard's rows while
 *     it runs, then the other rows; its backward re-gathers the input under the dgrad GEMM
 *     (tp_recompute_allgather, on by default) and reduce-scatters under the wgrad GEMM;
 *     _RowLinearAsyncCommunication reduce-scatters after its GEMM and in the backward all-gathers the
 *     output gradient under the local shard's dgrad rows (parallel/tensor_parallel/functional.py).
 *     Without SP, tp_mode ALL_REDUCE runs synchronously: the row linear's all-reduce after its GEMM,
 *     the column linear's (differentiable_identity's backward) after both of its GEMMs.
 *   - Gradients: FP32GradientAccumulator (optim/gradient_accumulator.py) keeps an fp32 gradient
 *     buffer for every parameter, even under ZeRO-1 ("we need to accumulate gradients for all
 *     parameters"), and an fp32 copy of the parameters the optimizer updates; after each backward it
 *     adds every bf16 .grad into the buffer and drops it. Data parallelism is torch DDP over dp
 *     (bucket_cap_mb 25, its own bf16 bucket buffers) with the fp32 accumulation hook, synced on the
 *     last micro-batch only (no_sync before, pipeline_parallel/engine.py): all-reduce of the fp32
 *     buffers, or with ZeRO-1 their reduce-scatter (get_fp32_accum_hook(reduce_scatter=True) as of
 *     7bc99232^, the code of the playbook's runs; 7bc99232 made it raise NotImplementedError).
 *   - ZeRO-1 (optim/zero.py, ZeroDistributedOptimizer): the fp32 parameters and AdamW's two moments
 *     sharded over dp; after the step _all_gather_params gathers the bf16 parameters, not overlapped.
 *   - What a layer saves (llama.py, bf16): the two TritonRMSNorm inputs; the QKV and gate_up inputs
 *     (sharded with SP: tp_recompute_allgather saves the shard); flash-attn's q, k, v, output and
 *     fp32 softmax_lse, where without GQA q is a view into the contiguous [3, b, s, heads, d]
 *     tensor of the split QKV (all of it is kept) and k, v are the separate [b, s, 2, heads, d]
 *     tensor the rotary embedding rotates in place; o_proj's input is flash-attn's output; the
 *     gate_up output (silu's input and the product's other factor), silu's output and the product
 *     (down_proj's input). recompute_layer keeps the layer input only.
 *   - The loss: cast_to_fp32 makes the model output fp32 (bf16 logits 2 B + fp32 4 B per logit);
 *     _ShardedCrossEntropy subtracts the max into a new fp32 tensor it keeps as the softmax (4 B);
 *     the backward turns that into the gradient in place and casts it to bf16 (2 B).
 */
#include "models/gen.h"

/* Per token of one layer, bytes saved for the backward (see above); hs is h/tp with SP. */
static double layer_saved_bytes(const gen *G, orr_recompute rc)
{
    double t = G->T, h = G->h, hs = G->sp ? h / t : h;
    if (rc == ORR_RECOMPUTE_FULL) return 2.0 * hs * gen_tokens(G);
    double q = G->a * G->hd / t, kv = G->g * G->hd / t, f = G->f / t;
    int gqa = G->g < G->a;
    double norms = 2.0 * 2.0 * hs, linear_inputs = 2.0 * 2.0 * hs;
    /* GQA: q, k and v are made contiguous one by one; MHA: q keeps the whole QKV tensor alive */
    double attn = gqa ? 2.0 * q + 4.0 * kv : 2.0 * (q + 2.0 * kv) + 4.0 * kv;
    double out_lse = 2.0 * q + 4.0 * G->a / t;
    double mlp = 2.0 * 2.0 * f + 2.0 * f + 2.0 * f;
    return (norms + linear_inputs + attn + out_lse + mlp) * gen_tokens(G);
}

/* The layout copies of llama.py's attention and GLU, per token in bytes read + written (bf16):
 *   forward: the split QKV made contiguous (MHA: one permute of the whole tensor; GQA: q, k and v
 *     each) 4(q + 2kv); torch.cat of k and v, then its permute made contiguous, 8kv each; flash-attn's
 *     output transposed to [s, b] for o_proj, which F.linear copies to a matrix when b > 1, 4q;
 *     GLUActivation's silu and product as two kernels (4f + 6f) where the builder's fused SwiGLU
 *     counts 6f: 4f more;
 *   backward: the same copies of the gradients (4(q + 2kv) + 16kv + 4q), o_proj's saved input made
 *     contiguous for its weight gradient (4q), the two products and silu's backward (18f) where the
 *     fused backward counts 10f, and the gate and up gradients concatenated (8f). */
static void layer_extra_ops(gen *G, const ctx *c, int backward)
{
    double t = G->T, q = G->a * G->hd / t, kv = G->g * G->hd / t, f = G->f / t;
    double M = gen_tokens(G), bt = G->b > 1 ? 4.0 * q : 0.0;
    double attn = 4.0 * (q + 2.0 * kv) + 16.0 * kv + bt + (backward ? bt : 0.0);
    double glu = backward ? 8.0 * f + 8.0 * f : 4.0 * f;
    gen_memop(G, c, backward ? "attn_layout_copies_bwd" : "attn_layout_copies", ORR_CLS_ELEMENTWISE, attn * M, 0);
    gen_memop(G, c, backward ? "glu_unfused_bwd" : "glu_unfused", ORR_CLS_ELEMENTWISE, glu * M, f * M);
}

/* cast_to_fp32's bf16 input and fp32 output, then the cross-entropy's kept softmax (fp32); the fp32
 * model output goes when the loss returns. */
static void loss_mem_fwd(gen *G, const ctx *c)
{
    double logits = gen_tokens(G) * G->vocab / G->T;
    uint32_t b = gen_mem_alloc(G, c, S_COMPUTE, "logits", logits * G->act_B, ORR_MEM_TEMP);
    uint32_t f = gen_mem_alloc(G, c, S_COMPUTE, "logits_fp32", logits * 4.0, ORR_MEM_TEMP);
    gen_mem_free(G, c, S_COMPUTE, b);
    gen_mem_op(G, c, ORR_OP_ALLOC, S_COMPUTE, "loss_saved", G->head_base + c->mb, logits * 4.0, ORR_MEM_ACT);
    gen_mem_free(G, c, S_COMPUTE, f);
}

/* bf16 parameters; the fp32 gradient buffer of every parameter; with dp > 1 DDP's bf16 bucket
 * buffers; fp32 parameters and AdamW's moments (12 B), over dp with ZeRO-1; the all-gather buffers
 * of the async linears (MemoryBuffer "allgather" and "allgather2", one micro-batch's gathered
 * hidden states each, kept once created). */
static void persistent_memory(gen *G)
{
    ctx cx = {ORR_PHASE_OTHER, ORR_NO_LAYER, ORR_NO_MB, 0};
    double P = gen_rank_params(G);
    gen_persistent_buffers(G, &cx, G->act_B * P, 4.0 * P);
    if (G->D > 1) gen_mem_alloc(G, &cx, S_COMPUTE, "ddp_buckets", G->act_B * P, ORR_MEM_COMM);
    gen_mem_alloc(G, &cx, S_COMPUTE, "optimizer_state", 12.0 * P / (G->dist ? G->R : 1.0), ORR_MEM_OPTIM);
    if (G->sp && G->T > 1)
        gen_mem_alloc(G, &cx, S_COMPUTE, "tp_allgather_buffers", 2.0 * gen_tokens(G) * G->h * G->act_B, ORR_MEM_COMM);
}

/* FP32GradientAccumulator.backward: every parameter's bf16 .grad, complete at the end of the
 * backward, added into its fp32 buffer (read 2 + 4, write 4 B) and dropped. */
static void after_backward(gen *G, const ctx *c)
{
    double P = gen_rank_params(G);
    uint32_t g = gen_mem_alloc(G, c, S_COMPUTE, "param_grads_bf16", G->act_B * P, ORR_MEM_GRAD);
    gen_memop(G, c, "fp32_grad_accumulate", ORR_CLS_ELEMENTWISE, (G->act_B + 8.0) * P, P);
    gen_mem_free(G, c, S_COMPUTE, g);
}

/* ZeRO-1: the fp32 gradients reduce-scattered per DDP bucket, the optimizer on the shard, the bf16
 * parameters all-gathered after the step (not overlapped); else all-reduced. Gradients travel in
 * fp32 (the accumulator's buffers). */
static void setup(gen *G)
{
    G->dist = G->s->zero == 1;
    G->overlap_pg = 0;
    G->grad_B = 4.0;
}

static const recipe nanotron = {
    .pads_vocab_to = 1.0, /* make_vocab_size_divisible_by: 1 in the benchmark config */
    /* clip_grad 1.0 in the benchmark config: optim/clip_grads.py multiplies every fp32 gradient buffer
     * by the clamped coefficient ("avoids a `if clip_coef < 1:` conditional") */
    .clips_always = 1,
    .tp_overlaps_local_shard = 1,
    .tp_bwd_allreduce_sync = 1,
    .setup = setup,
    .layer_saved_bytes = layer_saved_bytes,
    .cp_attention = gen_ring_attention, /* not reached: resolve refuses cp > 1 */
    .loss_mem_fwd = loss_mem_fwd,
    .loss_mem_bwd = gen_loss_mem_bwd_plain,
    .persistent_memory = persistent_memory,
    .layer_extra_ops = layer_extra_ops,
    .after_backward = after_backward,
};

const recipe *orr_recipe_nanotron(const orr_spec *s)
{
    (void)s;
    return &nanotron;
}
