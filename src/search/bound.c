/*
 * bound.c - what the search can prove about a trial without simulating it: a lower bound on the
 * memory every GPU must hold (a trial over its capacity cannot fit) and a lower bound on the
 * iteration time (a trial whose bound is above the best time simulated cannot be the best).
 * docs/spec.md "Search" defines both; tests/test_search.c checks them against simulations.
 */
#include "search/internal.h"

/* Allocation sizes are rounded per tensor in the generator; the bound keeps this much below its
 * arithmetic so rounding can never make it exceed what the prediction allocates. */
#define BOUND_SLACK_BYTES (1024.0 * 1024.0)
/* The time bound counts every transformer-layer parameter as a weight of a matrix multiply; the few
 * that are not (norms, biases: O(1/hidden) of them) are covered by keeping the bound this much lower. */
#define TIME_BOUND_MARGIN 0.95

/* Parameters of the busiest GPU, at least: the model's parameters over the tp x pp model-parallel
 * positions (each layer's parameters are split evenly over tp and every layer, the embedding and the
 * head live on some stage, so the positions hold all of them at least once, and the busiest one at
 * least their average). Bytes per parameter: only what each framework's recipe allocates before the
 * first micro-batch and never frees (src/models/megatron.c, torchtitan.c, deepspeed.c), at its
 * smallest setting: half-precision parameters and gradients (2 B each; fp32 ones are larger) and 12 B
 * of fp32 master weights and Adam moments, each divided by the degree it is sharded over. */
uint64_t orr_search_memory_lower_bound(const orr_spec *s)
{
    /* An MoE model's routed experts are sharded over ep x etp (and their optimizer over the expert
     * data-parallel group), not over tp: they are left out, which keeps this a lower bound. */
    double routed = s->model.experts > 0
                        ? (double)orr_model_moe_layers(&s->model) * s->model.experts * orr_model_expert_params(&s->model)
                        : 0;
    double P = (orr_model_params(&s->model) - routed) / ((double)s->tp * s->pp);
    double shard = (double)s->dp * s->cp, per_param = 0;
    switch (s->framework) {
    case ORR_FW_MEGATRON: per_param = 2.0 + 2.0 + 12.0 / (s->dist_opt ? shard : 1.0); break;
    case ORR_FW_MEGATRON_FSDP: /* what --data-parallel-sharding-strategy shards over dp x cp */
        per_param = s->fsdp_strategy == ORR_FSDP_OPTIM_GRADS_PARAMS ? 16.0 / shard
                  : s->fsdp_strategy == ORR_FSDP_OPTIM         ? 4.0 + 12.0 / shard
                  : s->fsdp_strategy == ORR_FSDP_NO_SHARD      ? 16.0
                                                               : 2.0 + 14.0 / shard;
        break;
    case ORR_FW_TORCHTITAN:
    case ORR_FW_AUTOMODEL: /* FSDP2: parameter shards and the two Adam moments in the parameters' dtype,
                             * fp32, or bf16 with --bf16-params (gradients come later) */
        per_param = (s->bf16_params ? 6.0 : 12.0) / ((double)(s->fsdp ? s->fsdp : 1) * s->cp);
        break;
    case ORR_FW_DEEPSPEED:
        per_param = s->zero == 3 ? 16.0 / shard : s->zero == 2 ? 2.0 + 14.0 / shard : 4.0 + 12.0 / shard;
        break;
    default: break;
    }
    double bytes = P * per_param - BOUND_SLACK_BYTES;
    return bytes > 0 ? (uint64_t)bytes : 0;
}

/* The highest dense peak the trial's matrix multiplies may run at, FLOP/s: its precision's, or the
 * half-precision one where that is higher. */
static double peak_flops(const orr_spec *s)
{
    const orr_gpu *g = &s->gpu;
    double p = (unsigned)s->precision < ORR_DTYPE_COUNT ? g->peak_flops[s->precision] : 0;
    if (g->peak_flops[ORR_BF16] > p) p = g->peak_flops[ORR_BF16];
    if (g->peak_flops[ORR_FP16] > p) p = g->peak_flops[ORR_FP16];
    return p;
}

/* The iteration's compute on the critical path, at least, in seconds. One micro-batch's forward and
 * backward on one pipeline stage multiply every weight of the stage's layers (their parameters over
 * tp) with the micro-batch's tokens over cp: 2 FLOPs per weight and token forward, 4 backward, 2 more
 * when full recomputation repeats the forward; at the GPU's peak (no kernel runs faster). The
 * busiest stage holds at least layers/pp of the layers and runs all m = gbs/(dp mbs) micro-batches
 * one after the other on its compute stream; with an even split every (virtual) stage has exactly
 * layers/(pp vpp) and the last stage's first forward and the first stage's last backward add the
 * pipeline's fill and drain, (pp - 1)/vpp micro-batch times (1F1B and interleaved; GPipe's is larger).
 * Attention scores, embeddings, the head, communication and the optimizer only add to this.
 * 0 when the spec gives no peak, and for a model whose layers hold experts: most of their weights
 * sit idle for a given token, and a capacity factor may drop tokens, so the bound above would not
 * be one (no trial of an MoE model is pruned by time). */
double orr_search_time_lower_bound_s(const orr_spec *s)
{
    double peak = peak_flops(s);
    if (!(peak > 0) || !s->tp || !s->pp || !s->dp || !s->mbs || s->model.experts > 0) return 0;
    uint32_t cp = s->cp ? s->cp : 1, vpp = s->vpp ? s->vpp : 1;
    double flops_per_weight = s->recompute == ORR_RECOMPUTE_FULL ? 8.0 : 6.0;
    double stage_weights = orr_model_layer_params(&s->model) * s->model.layers / ((double)s->pp * s->tp);
    double tokens = (double)s->mbs * s->seq / cp;
    double mb_s = flops_per_weight * stage_weights * tokens / peak;
    double m = (double)s->gbs / ((double)s->dp * s->mbs);
    int even = !s->pp_first_layers && !s->pp_last_layers && !s->npp_layers;
    double fill = even ? (double)(s->pp - 1) / vpp : 0;
    return TIME_BOUND_MARGIN * (m + fill) * mb_s;
}
