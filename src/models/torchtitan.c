/*
 * torchtitan.c - the TorchTitan recipe of the training generator (gen.h): FSDP2 (fully_shard per
 * block and the root; HSDP with replicas) with per-parameter copy-out, fp32 reduce-scatter, per-unit
 * sharded and accumulated gradients, resharding after forward; what PyTorch autograd saves, eager
 * kernels unless torch.compile; DTensor sequence parallelism keeping the gathered norm outputs;
 * the loss eager, under loss_parallel with TP, or compiled; torch.distributed.pipelining keeping
 * the last stage's outputs; torch's context_parallel; foreach AdamW's per-parameter state. NeMo
 * AutoModel's recipe (FSDP2 + EP like TorchTitan's, its own loss and MoE activation) at the end.
 */
#include "models/gen.h"

#include <stdlib.h>

/* TorchTitan's context parallelism: torch.distributed.tensor.experimental's context_parallel, whose
 * _templated_ring_attention (and _backward) run one flash-attention block per CP step with
 * round-robin causal load balancing, under TorchTitan's default rotate method "allgather"
 * (experimental.context_parallel_rotate_method at 9dec370 and after). Per attention call:
 *   forward: K and V (expanded to every query head by repeat_kv before SDPA) are concatenated and
 *     all-gathered once over the CP group, launched before the first (diagonal) block and waited
 *     for at the second; every step's out and lse go through _SDPAMerger in fp32: the cast (6 B per
 *     output element), then out - sigmoid(block_lse - lse) * (out - block_out) (32 B), and for a
 *     block of the second half of the queries only (step i > cp rank) _partial_update's torch.cat,
 *     which rewrites the whole fp32 output (8 B); at the end the cast back (6 B);
 *   backward: fp32 zeros for dQ, dK, dV (12 B), the same all-gather of K and V, and per step after
 *     the block: dK and dV added into the fp32 accumulators (10 B each; for steps 0 < i <= rank a
 *     half added and the whole rewritten by torch.cat, 13 B), dQ likewise (10 B; 13 B for i > rank),
 *     the concatenation of dK and dV (16 B) and its hop to the next CP rank (the all-to-all
 *     "permute", always that method for the gradients), waited for after the next step's block;
 *     at the end the casts of dQ, dK and dV back (18 B). */
static void cp_attention(gen *G, const ctx *c, int backward)
{
    double sl = G->sq / G->C, elems = G->b * sl * (G->a / G->T) * G->hd;
    double kv = 2.0 * elems * G->act_B;
    uint32_t C = G->C, me = G->cp_r;
    gen_memop(G, c, "cp_kv_cat", ORR_CLS_ELEMENTWISE, 2.0 * kv, 0);
    uint32_t gath = gen_mem_alloc(G, c, S_COMPUTE, "cp_kv_gathered", C * kv, ORR_MEM_TEMP);
    uint32_t acc = gen_mem_alloc(G, c, S_COMPUTE, backward ? "cp_grad_qkv_fp32" : "cp_out_fp32",
                                 (backward ? 12.0 : 4.0) * elems, ORR_MEM_TEMP);
    if (backward) gen_memop(G, c, "cp_grad_zeros", ORR_CLS_ELEMENTWISE, 12.0 * elems, 0);
    gen_wait(G, S_CP, gen_record(G, S_COMPUTE));
    gen_coll(G, c, S_CP, "cp_allgather_kv", ORR_COLL_ALLGATHER, ORR_ROLE_CP, C * kv);
    uint32_t gathered = gen_record(G, S_CP), dkv = UINT32_MAX;
    for (uint32_t i = 0; i < C; i++) {
        if (i == 1) gen_wait(G, S_COMPUTE, gathered);
        gen_flash_block(G, c, backward, sl, sl, 0.5);
        if (!backward) {
            double b = i == 0 ? 6.0 : i <= me ? 38.0 : 27.0;
            gen_memop(G, c, "cp_sdpa_merge", ORR_CLS_ELEMENTWISE, b * elems, 0);
            continue;
        }
        if (dkv != UINT32_MAX) gen_wait(G, S_COMPUTE, dkv);
        double b = (i > 0 && i <= me ? 26.0 : 20.0) + (i <= me ? 10.0 : 13.0) + 16.0;
        gen_memop(G, c, "cp_grad_accumulate", ORR_CLS_ELEMENTWISE, b * elems, 0);
        gen_wait(G, S_CP, gen_record(G, S_COMPUTE));
        dkv = gen_cp_hop(G, c, TAG_CP_BWD, 8.0 * elems);
    }
    if (dkv != UINT32_MAX) gen_wait(G, S_COMPUTE, dkv);
    gen_memop(G, c, backward ? "cp_grad_cast" : "cp_out_cast", ORR_CLS_ELEMENTWISE, (backward ? 18.0 : 6.0) * elems,
              0);
    gen_mem_free(G, c, S_COMPUTE, acc);
    gen_mem_free(G, c, S_COMPUTE, gath);
}

/* Whether the loss runs under torch.compile (spec.compile_loss; as compile if not given). */
static int loss_compiled(const gen *G) { return orr_spec_compile_loss(G->s); }

/* With TP the eager loss runs under loss_parallel() (on unless training.disable_loss_parallel): the
 * logits stay vocab-sharded and DTensor's own log-softmax and nll-loss backward run
 * (torch/distributed/tensor/parallel/loss.py, torch 2.9.1):
 *   forward _log_softmax: bf16 logits 2, fp32 copy 4, shifted = x - max 4, exp(shifted) 4 (summed,
 *     freed), result = shifted - logsumexp 4 (kept): 14 B per logit at its peak;
 *   backward _nll_loss_and_log_softmax_backward: the kept result 4, grad_input = zeros_like 4,
 *     exp(x) 4 and (grad_input + exp(x)) 4, then that times grad_output 4: 16 B per logit at its
 *     peak; then the bf16 gradient 2. */
static int loss_parallel(const gen *G) { return G->T > 1 && !loss_compiled(G); }

static void loss_parallel_mem_fwd(gen *G, const ctx *c, double logits)
{
    uint32_t b = gen_model_output_alloc(G, c);
    uint32_t f = gen_mem_alloc(G, c, S_COMPUTE, "logits_fp32", logits * 4.0, ORR_MEM_TEMP);
    uint32_t sh = gen_mem_alloc(G, c, S_COMPUTE, "log_softmax_shifted", logits * 4.0, ORR_MEM_TEMP);
    uint32_t e = gen_mem_alloc(G, c, S_COMPUTE, "log_softmax_exp", logits * 4.0, ORR_MEM_TEMP);
    gen_mem_free(G, c, S_COMPUTE, e);
    gen_mem_op(G, c, ORR_OP_ALLOC, S_COMPUTE, "loss_saved", G->head_base + c->mb, logits * 4.0, ORR_MEM_ACT);
    gen_mem_free(G, c, S_COMPUTE, sh);
    gen_mem_free(G, c, S_COMPUTE, f);
    gen_model_output_release(G, c, b);
}

static void loss_parallel_mem_bwd(gen *G, const ctx *c, double logits)
{
    uint32_t z = gen_mem_alloc(G, c, S_COMPUTE, "nll_grad_zeros", logits * 4.0, ORR_MEM_TEMP);
    uint32_t e = gen_mem_alloc(G, c, S_COMPUTE, "nll_grad_exp", logits * 4.0, ORR_MEM_TEMP);
    uint32_t a = gen_mem_alloc(G, c, S_COMPUTE, "nll_grad_sum", logits * 4.0, ORR_MEM_TEMP);
    gen_mem_free(G, c, S_COMPUTE, e);
    uint32_t g = gen_mem_alloc(G, c, S_COMPUTE, "log_softmax_grad", logits * 4.0, ORR_MEM_TEMP);
    gen_mem_free(G, c, S_COMPUTE, a);
    gen_mem_free(G, c, S_COMPUTE, z);
    gen_mem_free(G, c, S_COMPUTE, G->head_base + c->mb);
    G->head_tmp = gen_mem_alloc(G, c, S_COMPUTE, "logits_grad", logits * G->act_B, ORR_MEM_TEMP);
    gen_mem_free(G, c, S_COMPUTE, g);
}

/* Eager: the model output (bf16), the loss's fp32 copy and log-softmax's saved fp32 result, 10 B per
 * logit at the peak. Compiled: the fused kernel saves only the model output itself for its
 * backward (when the pipeline keeps that output anyway, the saved tensor is the same storage: a
 * 0-byte placeholder keeps the free in the backward paired) and writes the bf16 gradient. */
static void loss_mem_fwd(gen *G, const ctx *c)
{
    double logits = gen_tokens(G) * G->vocab / G->T;
    if (loss_parallel(G)) {
        loss_parallel_mem_fwd(G, c, logits);
        return;
    }
    if (!loss_compiled(G)) {
        gen_loss_mem_fwd_eager(G, c);
        return;
    }
    int kept = gen_pp_keeps_outputs(G);
    if (kept) gen_model_output_alloc(G, c);
    gen_mem_op(G, c, ORR_OP_ALLOC, S_COMPUTE, "loss_saved", G->head_base + c->mb, kept ? 0.0 : logits * G->act_B,
               ORR_MEM_ACT);
}

static void loss_mem_bwd(gen *G, const ctx *c)
{
    if (loss_parallel(G)) loss_parallel_mem_bwd(G, c, gen_tokens(G) * G->vocab / G->T);
    else if (!loss_compiled(G)) gen_loss_mem_bwd_eager(G, c);
    else gen_loss_mem_bwd_plain(G, c);
}

/* FSDP2: Adam's exp_avg and exp_avg_sq, one shard each per parameter in the parameter's dtype
 * (shard_B x elements over the group the parameter is sharded on: the shard group, or a routed
 * expert's expert-data-parallel group). */
static void optimizer_state(gen *G, const ctx *cx)
{
    uint32_t cap = gen_param_tensor_count(G);
    double *el = orr_xmalloc(cap * sizeof *el), *sh = orr_xmalloc(cap * sizeof *sh);
    uint32_t n = gen_param_tensors(G, el, sh, cap);
    for (uint32_t i = 0; i < n; i++) {
        gen_mem_alloc(G, cx, S_COMPUTE, "adam_exp_avg", G->shard_B * el[i] / sh[i], ORR_MEM_OPTIM);
        gen_mem_alloc(G, cx, S_COMPUTE, "adam_exp_avg_sq", G->shard_B * el[i] / sh[i], ORR_MEM_OPTIM);
    }
    free(el);
    free(sh);
}

/* FSDP2: torch.optim.AdamW(foreach=True), _multi_tensor_adam: exp_avg_sq_sqrt = _foreach_sqrt(...)
 * is one fp32 temporary per parameter shard, freed when the step returns (seen under `orrery
 * emulate`, torch 2.9.1, tests/emu/torch/llama_titan.py). */
static void adam_temporaries(gen *G, const ctx *cx, int alloc, uint32_t *first)
{
    uint32_t cap = gen_param_tensor_count(G);
    double *el = orr_xmalloc(cap * sizeof *el), *sh = orr_xmalloc(cap * sizeof *sh);
    uint32_t n = gen_param_tensors(G, el, sh, cap);
    for (uint32_t i = 0; i < n; i++) {
        if (alloc) {
            uint32_t b = gen_mem_alloc(G, cx, S_COMPUTE, "adam_exp_avg_sq_sqrt", G->shard_B * el[i] / sh[i], ORR_MEM_TEMP);
            if (i == 0) *first = b;
        } else {
            gen_mem_free(G, cx, S_COMPUTE, *first + i);
        }
    }
    free(el);
    free(sh);
}

/* Sharded parameters and Adam moments over the shard group (fp32: 4 + 8 B per parameter; bf16 with
 * --bf16-params: 2 + 4; an MoE model's routed experts over the expert-data-parallel group); the
 * sharded gradients, in the parameters' dtype, come per unit with its reduce-scatter (unit_grads).
 * Plain experts (setup) keep their gradients in their own dtype through the iteration: autograd
 * accumulates them into .grad, which zero_grad(set_to_none) drops after the step (here from the start,
 * as they are from the first backward of every iteration but the first). */
static void persistent_memory(gen *G)
{
    ctx cx = {ORR_PHASE_OTHER, ORR_NO_LAYER, ORR_NO_MB, 0};
    gen_persistent_buffers(G, &cx, gen_rank_shard_bytes(G, G->shard_B),
                           G->plain_experts ? moe_rank_expert_params(G) * G->shard_B : 0);
    optimizer_state(G, &cx);
}

/* FSDP2 shards over fsdp x cp ranks (the CP ranks join the shard group: TorchTitan's dp_shard_cp
 * mesh) and reduces in fp32 (mixed_precision_reduce). An MoE model's routed experts are sharded over
 * fsdp x cp / ep ranks instead (G->EDP, spec.c resolve_moe_fsdp; the groups moe.c's moe_groups). */
static void setup(gen *G)
{
    G->S = G->s->fsdp * G->C;
    /* FSDP2 keeps the sharded parameters in the model's dtype (MixedPrecisionPolicy casts only the
     * gathered copy to param_dtype) and casts each reduced gradient back to it; torch.optim's Adam
     * keeps its moments like the parameter. TorchTitan builds its model in fp32; --bf16-params is a
     * model built in bf16 (NeMo AutoModel's from_config: torch_dtype "auto" -> bfloat16). */
    G->shard_B = G->s->bf16_params ? 2.0 : 4.0;
    /* --plain-experts: NeMo AutoModel's apply_fsdp (components/moe/parallelizer.py) fully_shard-s the
     * experts only when their ep_shard mesh has more than one rank; else they are ignored_params of
     * their block, plain EP-sharded parameters. TorchTitan fully_shard-s them on a mesh of one rank. */
    G->plain_experts = G->s->plain_experts && G->s->model.experts && G->EDP == 1 && G->D == G->S / G->C;
}

/* What the FSDP2 recipes share: TorchTitan's, and NeMo AutoModel's (below). */
#define FSDP2_RECIPE                                                                                     \
    .shards_params = 1, .copies_out_params = 1, .unit_grads = 1, .eager_unless_compiled = 1, .per_op_sac = 1, \
    .sp_keeps_gathered = 1, .keeps_head_input = 1, .pp_keeps_outputs = 1,                                  \
    .pads_vocab_to = 1.0, /* their tokenizers' vocabularies divide by the TP degrees used */              \
    .setup = setup, .layer_saved_bytes = gen_autograd_layer_bytes, .cp_attention = cp_attention,           \
    .persistent_memory = persistent_memory, .optimizer_temps = adam_temporaries

/* TorchTitan clips every step (training.max_norm, 1.0 by default): trainer.py calls
 * dist_utils.clip_grad_norm_, which ends in torch.nn.utils.clip_grads_with_norm_, a foreach multiply
 * of every gradient by the coefficient clamped at 1 (recipe.clips_always). */
/* Its alltoall dispatcher (models/common/token_dispatcher.py _sync_token_count_exchange) waits on the host
 * for the token counts' all-to-all (.to("cpu", non_blocking=False)) before the token all-to-all, whose
 * splits it needs; the Python after the wait is not measured (recipe.moe_sync_host_ps 0). */
static const recipe torchtitan = {
    FSDP2_RECIPE,
    .clips_always = 1,
    .moe_syncs_host = 1,
    /* distributed/fsdp.py apply_fsdp: with EP, each block prefetches the next in the forward
     * (set_modules_to_forward_prefetch), "as D2H syncs in EP could interfere with implicit prefetching" */
    .fwd_prefetch_ep = 1,
    .loss_mem_fwd = loss_mem_fwd,
    .loss_mem_bwd = loss_mem_bwd,
};

const recipe *orr_recipe_torchtitan(const orr_spec *s)
{
    (void)s;
    return &torchtitan;
}

/* NeMo AutoModel's loss as its benchmark recipes configure it (examples/benchmark/configs/ at
 * 89e3a9f: components/loss/masked_ce.MaskedCrossEntropy with fp32_upcast: false): F.cross_entropy on
 * the bf16 logits, so log-softmax saves its bf16 result (2 B per logit, the model output freed after
 * it unless the pipeline keeps it); backward: nll_loss's bf16 gradient (2 B), then log-softmax's, the
 * logits gradient itself (2 B). */
static void automodel_loss_mem_fwd(gen *G, const ctx *c)
{
    double logits = gen_tokens(G) * G->vocab / G->T;
    uint32_t b = gen_model_output_alloc(G, c);
    gen_mem_op(G, c, ORR_OP_ALLOC, S_COMPUTE, "loss_saved", G->head_base + c->mb, logits * G->act_B, ORR_MEM_ACT);
    gen_model_output_release(G, c, b);
}

static void automodel_loss_mem_bwd(gen *G, const ctx *c)
{
    double logits = gen_tokens(G) * G->vocab / G->T;
    uint32_t n = gen_mem_alloc(G, c, S_COMPUTE, "nll_grad", logits * G->act_B, ORR_MEM_TEMP);
    G->head_tmp = gen_mem_alloc(G, c, S_COMPUTE, "logits_grad", logits * G->act_B, ORR_MEM_TEMP);
    gen_mem_free(G, c, S_COMPUTE, G->head_base + c->mb);
    gen_mem_free(G, c, S_COMPUTE, n);
}

/* NeMo AutoModel's PyTorch path (NVIDIA-NeMo/Automodel at 89e3a9f, the commit of its performance
 * summary): TorchTitan's FSDP2 + EP (components/moe/parallelizer.py apply_fsdp: fully_shard per block,
 * embedding, head and root; MixedPrecisionPolicy bf16 parameters, fp32 reduction), with
 *   - the model built in bf16 and the routed experts outside FSDP2 where their ep_shard mesh has one
 *     rank (resolve sets --bf16-params and --plain-experts);
 *   - the routing scores applied inside the experts' torch.compile-d activation
 *     (components/moe/layers.py GroupedExpertsDeepEP: quick_geglu_deepep / weighted_bias_swiglu_impl
 *     take permuted_probs), so the grouped FC2 output is not kept for the combine;
 *   - its bf16 cross-entropy (above), its kernels on the bf16 logits (recipe.loss_bf16);
 *   - gradient sync deferred to the last micro-batch (distributed/utils.py get_sync_ctx:
 *     set_requires_gradient_sync(is_optim_step)), as recipe.unit_grads accumulates them;
 *   - the benchmark configs' Transformer Engine modules (backend: rms_norm te, linear te, attn te or
 *     flex): TE's fused RMSNorm (recipe.te_norm, components/moe/utils.py initialize_rms_norm_module)
 *     in otherwise eager code, and the models' own rotary in bf16 (models/gpt_oss/layers.py
 *     _apply_rotary_emb, also used by qwen3_moe; recipe.rope_bf16);
 *   - gpt-oss's expert biases added per expert in eager code (recipe.expert_bias_eager, moe.c). */
static const recipe automodel = {
    FSDP2_RECIPE,
    .defers_grad_sync = 1,
    .moe_scores_in_act = 1,
    .te_norm = 1,
    .rope_bf16 = 1,
    .expert_bias_eager = 1,
    .loss_bf16 = 1,
    .loss_mem_fwd = automodel_loss_mem_fwd,
    .loss_mem_bwd = automodel_loss_mem_bwd,
};

const recipe *orr_recipe_automodel(const orr_spec *s)
{
    (void)s;
    return &automodel;
}
