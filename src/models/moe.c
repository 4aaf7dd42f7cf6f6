/*
 * moe.c - mixture-of-experts layers and MLA attention for the training generator (gen.h), as
 * Megatron-Core runs them (megatron/core/transformer/moe/, multi_latent_attention.py).
 *
 * Layout ("MoE parallel folding", Megatron-Core >= 0.10): within a pipeline stage the tp x cp x dp
 * GPUs (local index tp + T (cp + C dp)) are also laid out for the experts as etp x ep x edp, etp
 * fastest: local index etp + ETP (ep + EP edp). The EP group exchanges tokens; the ETP group splits
 * each expert's GEMMs; the EDP group (same etp and ep position) holds the same experts and reduces
 * their gradients, as the data-parallel group does for the other parameters.
 *
 * An MoE layer's MLP, per micro-batch on one rank, forward (backward in reverse):
 *   router GEMM (tokens x hidden -> experts), top-k with softmax/sigmoid scores and the aux loss;
 *   dispatch: alltoall = permute the top-k copies by destination, an all-to-all of the token counts
 *   (host-synchronising: the grouped GEMM's sizes come back to the host), the all-to-all of the
 *   tokens, a sort by local expert; allgather = an all-gather of the EP group's tokens (and a
 *   reduce-scatter back); deepep = one fused dispatch that sends a token once to each rank holding one
 *   of its experts, with the permutation fused; with etp > 1 the received tokens are all-gathered over
 *   the ETP group and the output reduce-scattered;
 *   grouped GEMMs over the rank's experts (a batched GEMM of m = tokens per local expert, so tile and
 *   wave quantisation and the weight traffic make small groups inefficient, roofline.c), the
 *   activation, the combine (the mirror of the dispatch) and the unpermute weighted by the scores;
 *   shared experts as a dense MLP of shared_experts x shared_expert_ffn with its TP collectives.
 * Load imbalance (--moe-imbalance x): the EP rank at position 0 receives x times the average of
 * routed tokens, the others share the rest evenly; a capacity factor caps what any rank processes at
 * factor x its balanced share (tokens beyond it are dropped). Only the expert computation follows
 * the rank's own load; the all-to-all moves the balanced volume. Since the combine is a collective,
 * the ranks with fewer tokens wait for the most loaded one: the slowest expert rank sets the pace
 * (with symmetry the simulated rank is the most loaded one, position 0).
 */
#include "models/gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const orr_model *model(const gen *G) { return &G->s->model; }

int moe_is_moe_layer(const gen *G, uint32_t layer)
{
    return layer < G->L && orr_model_layer_is_moe(model(G), layer);
}

void moe_setup(gen *G)
{
    const orr_model *m = model(G);
    G->EP = G->s->ep ? G->s->ep : 1;
    G->ETP = G->s->etp ? G->s->etp : 1;
    G->EDP = G->s->edp ? G->s->edp : G->T * G->C * G->D / (G->EP * G->ETP);
    if (G->EDP == 0) G->EDP = 1;
    G->mla = m->attn_kind == ORR_ATTN_KIND_MLA;
    if (G->mla) {
        /* flash attention's work: QK^T over qk_nope + qk_rope, PV over v_head_dim; their mean as the
         * head dimension gives its FLOPs exactly */
        G->hd = (m->qk_nope_dim + m->qk_rope_dim + m->v_head_dim) / 2.0;
        G->g = G->a;
        G->attn_out = G->a * m->v_head_dim;
    }
}

/* ---- the EP, ETP and EDP groups ---- */

static uint32_t stage_local_index(const gen *G) { return G->tp_r + G->T * (G->cp_r + G->C * G->dp_r); }
static uint32_t stage_rank(const gen *G, uint32_t local) { return local + G->T * G->C * G->D * G->pp_r; }

void moe_groups(gen *G)
{
    G->seq_ep = G->seq_etp = G->seq_edp = G->seq_tpep = 0;
    G->ep_r = 0;
    G->g_tpep = UINT32_MAX;
    if (!model(G)->experts) return;
    uint32_t L = stage_local_index(G), etp = L % G->ETP, ep = (L / G->ETP) % G->EP, edp = L / (G->ETP * G->EP);
    G->ep_r = ep;
    uint32_t n = G->EP * G->ETP;
    if (G->EDP > n) n = G->EDP;
    uint32_t *m = orr_xmalloc(n * sizeof *m);
    char label[32];
    for (uint32_t e = 0; e < G->EP; e++) m[e] = stage_rank(G, etp + G->ETP * (e + G->EP * edp));
    snprintf(label, sizeof label, "ep(pp%u,g%u)", G->pp_r, etp + G->ETP * edp);
    G->g_ep = gen_group(G, ORR_ROLE_EP, m, G->EP, label);
    for (uint32_t t = 0; t < G->ETP; t++) m[t] = stage_rank(G, t + G->ETP * (ep + G->EP * edp));
    snprintf(label, sizeof label, "etp(pp%u,g%u)", G->pp_r, ep + G->EP * edp);
    G->g_etp = gen_group(G, ORR_ROLE_EP, m, G->ETP, label);
    /* the alltoall dispatcher's tp_ep process group (parallel_state's expert tensor-and-model-parallel
     * group): the ETP x EP ranks, created apart from the EP group, so its collectives have their own NCCL
     * stream (UINT32_MAX: not used) */
    if (G->rp->moe_counts_tp_ep && G->s->moe_dispatcher == ORR_MOE_ALLTOALL && G->ETP * G->EP > 1) {
        for (uint32_t i = 0; i < G->ETP * G->EP; i++) m[i] = stage_rank(G, i + G->ETP * G->EP * edp);
        snprintf(label, sizeof label, "tp_ep(pp%u,g%u)", G->pp_r, edp);
        G->g_tpep = gen_group_own(G, ORR_ROLE_EP, m, G->ETP * G->EP, label, 1);
    }
    /* Megatron's EDP group spans the stage; FSDP2's (the experts' shard group) its replica only */
    uint32_t base = edp - edp % G->EDP;
    for (uint32_t d = 0; d < G->EDP; d++) m[d] = stage_rank(G, etp + G->ETP * (ep + G->EP * (base + d)));
    if (base) snprintf(label, sizeof label, "edp(pp%u,g%u,r%u)", G->pp_r, etp + G->ETP * ep, edp / G->EDP);
    else snprintf(label, sizeof label, "edp(pp%u,g%u)", G->pp_r, etp + G->ETP * ep);
    G->g_edp = gen_group(G, ORR_ROLE_DP, m, G->EDP, label);
    free(m);
}

/* ---- token counts ---- */

/* Routed copies (tokens x top_k) this rank sends per micro-batch. */
static double routed_sent(const gen *G) { return gen_local_tokens(G) * model(G)->top_k; }

/* Routed copies this rank's experts receive: its share of the load (--moe-imbalance), capped by the
 * capacity factor. */
static double routed_received(const gen *G)
{
    double avg = routed_sent(G), x = G->s->moe_imbalance > 1 ? G->s->moe_imbalance : 1.0;
    double load = G->s->nmoe_loads == G->EP ? G->s->moe_loads[G->ep_r]
                : G->EP <= 1                  ? 1.0
                : G->ep_r == 0                ? x
                                              : (G->EP - x) / (G->EP - 1.0);
    double recv = avg * load;
    double cf = G->s->moe_capacity_factor;
    if (cf > 0 && recv > cf * avg) recv = cf * avg;
    return recv;
}

/* Bytes of one routed copy of a token's hidden state. */
static double token_bytes(const gen *G) { return G->h * G->act_B; }

/* Tokens each of the rank's experts computes (over its ETP group's gathered tokens). */
static double local_experts(const gen *G) { return (double)model(G)->experts / G->EP; }
static double tokens_per_expert(const gen *G) { return routed_received(G) * G->ETP / local_experts(G); }

/* C(pool - x, k) / C(pool, k): the chance that k of pool experts drawn without repetition miss x
 * given ones. */
static double miss_all(double pool, double x, double k)
{
    double p = 1.0;
    for (double i = 0; i < k; i++) p *= (pool - x - i) / (pool - i);
    return p > 0 ? p : 0;
}

/* log C(n, r). */
static double log_choose(double n, double r) { return lgamma(n + 1) - lgamma(r + 1) - lgamma(n - r + 1); }

/* Round-robin routing (NeMo AutoModel's FakeBalancedGate, components/moe/layers.py: indices =
 * arange(tokens * top_k).view(-1, top_k) % experts): token t goes to the top_k consecutive experts
 * from t*top_k mod experts. The mean, over one period of tokens (experts / gcd(top_k, experts)), of
 * the parts (of experts/parts contiguous experts each) such a run touches: 1 when top_k divides the
 * experts per part (all of a token's experts on one rank), about 1 + top_k/(experts/parts) otherwise. */
double orr_moe_round_robin_parts(uint32_t experts, uint32_t top_k, uint32_t parts)
{
    if (!experts || !top_k || !parts || experts % parts) return parts ? parts : 1;
    uint32_t per = experts / parts, a = top_k % experts, b = experts;
    while (a) { /* gcd(top_k, experts) */
        uint32_t r = b % a;
        b = a;
        a = r;
    }
    uint32_t period = experts / b, k = top_k < experts ? top_k : experts;
    uint64_t sum = 0;
    for (uint32_t t = 0; t < period; t++) {
        uint32_t first = (uint32_t)(((uint64_t)t * top_k) % experts), seen = 1;
        for (uint32_t j = 1; j < k; j++) {
            uint32_t e = (first + j) % experts;
            if (e % per == 0) seen++; /* a run enters the next part at its first expert */
        }
        sum += seen < parts ? seen : parts; /* a run back in its first part has seen them all */
    }
    return (double)sum / period;
}

/* The expected number of `parts` (ranks, nodes) holding at least one of a token's top_k experts,
 * the experts split evenly and contiguously over the parts. Routing picks top_k of the E experts
 * uniformly without repetition: parts (1 - C(E - E/parts, k) / C(E, k)). With group-limited
 * routing (router_groups G, router_group_topk g: DeepSeek-V3's device-limited routing) a token
 * first picks g of the G contiguous groups, then its k experts among their g E/G, uniformly:
 *   a part of q = G/parts whole groups (G a multiple of parts) is hit unless none of the j of its
 *   groups picked (hypergeometric: C(q,j) C(G-q,g-j) / C(G,g)) holds one of the k experts;
 *   a part inside a group (parts a multiple of G) needs its group picked (g/G) and an expert in it.
 * Other shapes fall back to ungrouped routing (docs/models.md "MoE"). */
static double parts_per_token(const gen *G, double parts)
{
    const orr_model *m = model(G);
    double E = m->experts, k = m->top_k, NG = m->router_groups, g = m->router_group_topk;
    uint32_t P = (uint32_t)parts;
    if (G->s->moe_routing == ORR_MOE_ROUTE_ROUND_ROBIN) return orr_moe_round_robin_parts(m->experts, m->top_k, P);
    if (!m->router_groups || m->router_group_topk >= m->router_groups || !P ||
        (m->router_groups % P && P % m->router_groups))
        return parts * (1.0 - miss_all(E, E / parts, k));
    double pool = g * E / NG, hit;
    if (m->router_groups % P == 0) {
        double q = NG / parts, none = 0;
        for (double j = 0; j <= q && j <= g; j++) {
            if (g - j > NG - q) continue;
            double h = exp(log_choose(q, j) + log_choose(NG - q, g - j) - log_choose(NG, g));
            none += h * miss_all(pool, j * E / NG, k);
        }
        hit = 1.0 - none;
    } else {
        hit = g / NG * (1.0 - miss_all(pool, E / parts, k));
    }
    return parts * hit;
}

/* Bytes one rank's DeepEP dispatch (or combine) puts in the EP all-to-all. Within a node DeepEP
 * sends a token once to every rank holding one of its experts. Across nodes (its internode
 * kernels) it sends a token once over RDMA to every other node holding one of its experts, to the
 * GPU on the sender's rail, which forwards it over NVLink: the all-to-all is sized so that its
 * inter-node part, (n - per_node)/n of it, is that RDMA volume. */
static double deepep_bytes(const gen *G)
{
    double tok = gen_local_tokens(G) * token_bytes(G);
    const orr_group *g = &G->w->groups[G->g_ep];
    if (g->nodes <= 1 || g->per_node >= g->size) return tok * parts_per_token(G, G->EP);
    double remote_nodes = parts_per_token(G, g->nodes) * (g->nodes - 1.0) / g->nodes;
    return tok * remote_nodes * g->size / (double)(g->size - g->per_node);
}

/* ---- the MoE MLP ---- */

/* DeepEP's exchanges are kernels that hold their SMs (ORR_OPF_DEEPEP). */
static void ep_flag(const gen *G, orr_op *op)
{
    if (G->s->moe_dispatcher == ORR_MOE_DEEPEP) op->flags |= ORR_OPF_DEEPEP;
}

static void ep_coll(gen *G, const ctx *c, const char *name, orr_coll_kind kind, double bytes)
{
    if (G->EP > 1) ep_flag(G, gen_coll_group(G, c, S_COMPUTE, name, kind, ORR_ROLE_EP, G->g_ep, &G->seq_ep, bytes));
}

static void etp_coll(gen *G, const ctx *c, const char *name, orr_coll_kind kind, double bytes)
{
    if (G->ETP > 1) gen_coll_group(G, c, S_COMPUTE, name, kind, ORR_ROLE_EP, G->g_etp, &G->seq_etp, bytes);
}

/* Router: the gate GEMM, top-k over softmax (or sigmoid) scores with their normalisation, and the
 * load-balancing loss (a reduction over tokens and experts); fp32 scores. Round-robin routing is
 * AutoModel's FakeBalancedGate, which computes none of it: it fills the indices (int64) and equal
 * weights 1/top_k. */
static void router(gen *G, const ctx *c, int backward)
{
    double N = gen_local_tokens(G), E = model(G)->experts, h = G->h;
    if (G->s->moe_routing == ORR_MOE_ROUTE_ROUND_ROBIN) { /* FakeBalancedGate: no scores, no gradient */
        double k = model(G)->top_k;
        if (!backward) gen_memop(G, c, "fake_gate_indices", ORR_CLS_ELEMENTWISE, N * k * (8.0 + G->act_B), N * k);
        return;
    }
    if (!backward) {
        gen_gemm(G, c, "router_gemm", N, E, h);
        gen_memop(G, c, "router_topk", ORR_CLS_REDUCTION, N * E * 4.0 * 3.0, N * E * 8.0);
        gen_memop(G, c, "router_aux_loss", ORR_CLS_REDUCTION, N * E * 4.0 * 2.0, N * E * 3.0);
    } else {
        gen_memop(G, c, "router_topk_bwd", ORR_CLS_ELEMENTWISE, N * E * 4.0 * 3.0, N * E * 6.0);
        gen_gemm(G, c, "router_dgrad", N, h, E);
        gen_gemm(G, c, "router_wgrad", E, h, N);
    }
}

/* Shared experts: a dense MLP of shared_experts x shared_expert_ffn over the layer's tokens, split
 * by tp with its f/g collectives like the dense MLP; in two halves (forward: FC1 and the activation,
 * then FC2; backward: FC2's gradients and the activation's, then FC1's), which run while the
 * dispatch and the combine are in flight with --moe-shared-expert-overlap. */
static int has_shared(const gen *G) { return model(G)->shared_experts > 0; }
static int shared_overlap(const gen *G) { return has_shared(G) && G->s->moe_shared_expert_overlap && G->EP > 1; }

static void shared_half(gen *G, const ctx *c, int backward, int half)
{
    const orr_model *m = model(G);
    if (!has_shared(G)) return;
    double M = gen_tokens(G), fs = (double)m->shared_experts * m->shared_expert_ffn / G->T;
    double up = G->gated ? 2.0 * fs : fs;
    if (half == 0 && orr_dtype_is_narrow(G->dt)) { /* their fp8 casts, as the dense MLP's */
        double x = backward ? M * (G->h + up) : M * (G->h + fs);
        gen_memop(G, c, backward ? "shared_fp8_cast_grads" : "shared_fp8_cast_inputs", ORR_CLS_ELEMENTWISE,
                  gen_fp8_cast_B(G) * x, 3.0 * x);
    }
    if (!backward && half == 0) {
        gen_gemm_tp(G, c, "shared_fc1_gemm", M, up, G->h, "tp_allgather_shared", ORR_COLL_ALLGATHER);
        gen_memop(G, c, "shared_swiglu", ORR_CLS_ELEMENTWISE, 3.0 * M * fs * G->act_B, 8.0 * M * fs);
    } else if (!backward) {
        gen_gemm_tp(G, c, "shared_fc2_gemm", M, G->h, fs, "tp_shared_out", gen_g_fwd_kind(G));
    } else if (half == 0) {
        gen_gemm_tp(G, c, "shared_fc2_dgrad", M, fs, G->h, "tp_allgather_shared_grad", ORR_COLL_ALLGATHER);
        gen_gemm(G, c, "shared_fc2_wgrad", fs, G->h, M);
        gen_memop(G, c, "shared_swiglu_bwd", ORR_CLS_ELEMENTWISE, 5.0 * M * fs * G->act_B, 10.0 * M * fs);
    } else {
        gen_gemm_tp(G, c, "shared_fc1_dgrad", M, G->h, up, "tp_reducescatter_shared_grad", gen_g_fwd_kind(G));
        gen_gemm(G, c, "shared_fc1_wgrad", up, G->h, M);
    }
}

/* The token exchange of the dispatch or combine on the EP group; with the shared-expert overlap it
 * runs on its own stream while the compute stream runs the shared experts' half, then waits for it. */
static void ep_exchange(gen *G, const ctx *c, const char *name, orr_coll_kind kind, double bytes, int backward, int half)
{
    if (!shared_overlap(G)) {
        ep_coll(G, c, name, kind, bytes);
        return;
    }
    uint32_t ready = gen_record(G, S_COMPUTE);
    gen_wait(G, S_EP, ready);
    ep_flag(G, gen_coll_group(G, c, S_EP, name, kind, ORR_ROLE_EP, G->g_ep, &G->seq_ep, bytes));
    uint32_t done = gen_record(G, S_EP);
    shared_half(G, c, backward, half);
    gen_wait(G, S_COMPUTE, done);
}

/* The dispatch's (or combine's) transient buffers, live while it runs: alltoall the permuted copies
 * and the all-to-all's output before the sort (the sorted copy is the experts' saved input);
 * allgather the gathered tokens of the EP group; deepep its receive buffer. */
static double exchange_buffer_bytes(const gen *G)
{
    double sent = routed_sent(G), recv = routed_received(G);
    switch (G->s->moe_dispatcher) {
    case ORR_MOE_ALLGATHER: return gen_local_tokens(G) * G->EP * token_bytes(G);
    case ORR_MOE_DEEPEP: return recv * token_bytes(G);
    default: return (sent + recv) * token_bytes(G);
    }
}

/* The forward dispatch's host synchronisation (recipe.moe_syncs_host): the host waits for what the GPU
 * has reached at event ev (the token counts), then spends the recipe's time in Python (moe_sync_host_ps,
 * where measured) before its next launch; the GPU idles for whatever of it the work queued behind ev does
 * not cover, and for the next launch. */
static void dispatch_host_sync(gen *G, const ctx *c, uint32_t ev)
{
    gen_host_sync(G, c, "moe_dispatch_host_sync", ev);
    if (G->rp->moe_sync_host_ps > 0) gen_host_work(G, c, "moe_dispatch_host", G->rp->moe_sync_host_ps);
}

static void dispatch(gen *G, const ctx *c, const char *dir, int backward)
{
    char name[48];
    double sent = routed_sent(G), recv = routed_received(G);
    /* not under the combined 1F1B overlap: TransformerLayerSchedulePlan.run (model_chunk_schedule_plan.py)
     * issues one micro-batch's pre-dispatch forward (the routing and its copy to the host), then the other's
     * MLP backward, then the dispatch that waits: the GPU has that backward queued through the wait and the
     * Python after it */
    int host_sync = !backward && G->rp->moe_syncs_host && !G->s->moe_a2a_overlap;
    uint32_t buf = gen_mem_alloc(G, c, S_COMPUTE, "moe_dispatch_buffers", exchange_buffer_bytes(G), ORR_MEM_COMM);
    switch (G->s->moe_dispatcher) {
    case ORR_MOE_ALLGATHER:
        /* every rank gathers the EP group's tokens and picks its experts' copies */
        snprintf(name, sizeof name, "ep_allgather_%s", dir);
        ep_exchange(G, c, name, ORR_COLL_ALLGATHER, gen_local_tokens(G) * G->EP * token_bytes(G), backward, 0);
        gen_memop(G, c, "moe_gather_local", ORR_CLS_ELEMENTWISE, 2.0 * recv * token_bytes(G), 0);
        break;
    case ORR_MOE_DEEPEP:
        /* DeepEP's dispatch waits on the CPU for the receive counts its notify kernel writes (the router's
         * output), then allocates and launches the dispatch */
        if (host_sync && G->EP > 1) dispatch_host_sync(G, c, gen_record(G, S_COMPUTE));
        snprintf(name, sizeof name, "ep_deepep_%s", dir);
        ep_exchange(G, c, name, ORR_COLL_ALLTOALL, deepep_bytes(G), backward, 0);
        gen_memop(G, c, "moe_permute_fused", ORR_CLS_ELEMENTWISE, 2.0 * recv * token_bytes(G), 0);
        break;
    default: {
        /* Megatron's MoEAlltoAllTokenDispatcher with EP or expert TP (token_dispatcher.py preprocess): the
         * forward all-gathers every rank's tokens per expert over the tp_ep group (int64 each;
         * gather_from_sequence_parallel_region), copies them to the host on a side stream
         * ("before_permutation_1"), launches the permutation, and synchronises the host on the copies
         * before the token all-to-all, whose splits it needs ("before_ep_alltoall"); with neither EP nor
         * expert TP it has no exchange but still waits, at the end of the dispatch ("before_finish"), for the
         * counts the experts' grouped GEMM takes as a list. TorchTitan's AllToAllTokenDispatcher
         * (models/common/token_dispatcher.py dispatch) reorders the tokens first, then all-to-alls the counts
         * on the EP group itself (_token_count_exchange) and waits for them on the host
         * (_sync_token_count_exchange); at EP 1 it dispatches locally, with neither. Either way the backward's
         * all-to-alls reuse the forward's splits: no exchange there. */
        if (!backward && G->rp->moe_counts_tp_ep && G->g_tpep != UINT32_MAX) {
            snprintf(name, sizeof name, "tp_ep_allgather_counts_%s", dir);
            gen_coll_group(G, c, S_COMPUTE, name, ORR_COLL_ALLGATHER, ORR_ROLE_EP, G->g_tpep, &G->seq_tpep,
                           (double)G->ETP * G->EP * model(G)->experts * 8.0);
        }
        if (!G->rp->moe_counts_tp_ep && G->EP == 1) host_sync = 0; /* TorchTitan's local dispatch: no wait */
        uint32_t counts = host_sync && G->rp->moe_counts_tp_ep ? gen_record(G, S_COMPUTE) : UINT32_MAX;
        /* reads each token once, writes its top_k copies */
        gen_memop(G, c, "moe_permute", ORR_CLS_ELEMENTWISE, (gen_local_tokens(G) + sent) * token_bytes(G), 0);
        if (!backward && !G->rp->moe_counts_tp_ep) {
            snprintf(name, sizeof name, "ep_alltoall_counts_%s", dir);
            ep_coll(G, c, name, ORR_COLL_ALLTOALL, model(G)->experts * 8.0);
            if (host_sync) counts = gen_record(G, S_COMPUTE);
        }
        if (host_sync) dispatch_host_sync(G, c, counts);
        snprintf(name, sizeof name, "ep_alltoall_%s", dir);
        ep_exchange(G, c, name, ORR_COLL_ALLTOALL, sent * token_bytes(G), backward, 0);
        if (local_experts(G) > 1)
            gen_memop(G, c, "moe_sort_chunks", ORR_CLS_ELEMENTWISE, 2.0 * recv * token_bytes(G), 0);
        break;
    }
    }
    gen_mem_free(G, c, S_COMPUTE, buf);
    snprintf(name, sizeof name, "etp_allgather_%s", dir);
    etp_coll(G, c, name, ORR_COLL_ALLGATHER, recv * G->ETP * token_bytes(G));
}

/* Combine (forward) or the backward's dispatch-gradient exchange: the mirror of dispatch. */
static void combine(gen *G, const ctx *c, const char *dir, int backward)
{
    char name[48];
    double sent = routed_sent(G), recv = routed_received(G);
    snprintf(name, sizeof name, "etp_reducescatter_%s", dir);
    etp_coll(G, c, name, ORR_COLL_REDUCESCATTER, recv * G->ETP * token_bytes(G));
    uint32_t buf = gen_mem_alloc(G, c, S_COMPUTE, "moe_combine_buffers", exchange_buffer_bytes(G), ORR_MEM_COMM);
    switch (G->s->moe_dispatcher) {
    case ORR_MOE_ALLGATHER:
        gen_memop(G, c, "moe_scatter_local", ORR_CLS_ELEMENTWISE, 2.0 * recv * token_bytes(G), 0);
        snprintf(name, sizeof name, "ep_reducescatter_%s", dir);
        ep_exchange(G, c, name, ORR_COLL_REDUCESCATTER, gen_local_tokens(G) * G->EP * token_bytes(G), backward, 1);
        break;
    case ORR_MOE_DEEPEP:
        gen_memop(G, c, "moe_unpermute_fused", ORR_CLS_ELEMENTWISE, 2.0 * recv * token_bytes(G), 0);
        snprintf(name, sizeof name, "ep_deepep_combine_%s", dir);
        ep_exchange(G, c, name, ORR_COLL_ALLTOALL, deepep_bytes(G), backward, 1);
        break;
    default:
        if (local_experts(G) > 1)
            gen_memop(G, c, "moe_unsort_chunks", ORR_CLS_ELEMENTWISE, 2.0 * recv * token_bytes(G), 0);
        snprintf(name, sizeof name, "ep_alltoall_combine_%s", dir);
        ep_exchange(G, c, name, ORR_COLL_ALLTOALL, sent * token_bytes(G), backward, 1);
        /* reads the top_k copies and their scores, writes each token's weighted sum */
        gen_memop(G, c, "moe_unpermute", ORR_CLS_ELEMENTWISE, (gen_local_tokens(G) + sent) * token_bytes(G) + sent * 4.0,
                  sent);
        break;
    }
    gen_mem_free(G, c, S_COMPUTE, buf);
}

/* Float8 training (gen.c's fp8_casts, gen_fp8_cast_B per cast element): the grouped GEMMs' inputs (the
 * routed copies and the activation output) and the local experts' weights in the forward, the gradients
 * of their outputs in the backward. */
static void experts_fp8_casts(gen *G, const ctx *c, int backward)
{
    if (!orr_dtype_is_narrow(G->dt)) return;
    const orr_model *m = model(G);
    double n = tokens_per_expert(G) * local_experts(G), fe = (double)m->expert_ffn / G->ETP;
    double up = G->gated ? 2.0 * fe : fe, B = gen_fp8_cast_B(G);
    if (!backward) {
        gen_memop(G, c, "moe_fp8_cast_inputs", ORR_CLS_ELEMENTWISE, B * n * (G->h + fe), 3.0 * n * (G->h + fe));
        double wts = moe_layer_expert_params_local(G, c->layer);
        gen_memop(G, c, "moe_fp8_cast_weights", ORR_CLS_ELEMENTWISE, B * wts, 3.0 * wts);
    } else {
        gen_memop(G, c, "moe_fp8_cast_grads", ORR_CLS_ELEMENTWISE, B * n * (G->h + up), 3.0 * n * (G->h + up));
    }
}

/* recipe.expert_bias_eager (NeMo AutoModel's GroupedExpertsDeepEP._apply_bias, the experts of a
 * model with biases: gpt-oss): each grouped GEMM's output split per local expert, its bias added by
 * one kernel per expert (the FC2's scaled by the routing score first, one more), and the pieces
 * concatenated: per element of the output, FC1 2 + 2 B (add) and 2 + 2 (cat), FC2 2 (bias x score),
 * 2 + 2 + 2 (add), 2 + 2 (cat). Backward: each bias's gradient a sum over its tokens (FC1 2 B an
 * element); FC2 also the score's, the products g x p and g x b and their sums (2 + 2 + 2 each). The
 * split sizes come from tokens_per_expert.tolist(), a host synchronisation, not modelled. */
static void experts_bias(gen *G, const ctx *c, int fc2, int backward, double n, double width)
{
    if (!model(G)->bias || !G->rp->expert_bias_eager) return;
    double e = n * width, B = G->act_B / 2.0;
    if (!backward && !fc2) {
        gen_memop(G, c, "moe_fc1_bias_add", ORR_CLS_ELEMENTWISE, 4.0 * B * e, e);
        gen_memop(G, c, "moe_fc1_bias_cat", ORR_CLS_ELEMENTWISE, 4.0 * B * e, 0);
    } else if (!backward) {
        gen_memop(G, c, "moe_fc2_bias_scale", ORR_CLS_ELEMENTWISE, 2.0 * B * e, e);
        gen_memop(G, c, "moe_fc2_bias_add", ORR_CLS_ELEMENTWISE, 6.0 * B * e, e);
        gen_memop(G, c, "moe_fc2_bias_cat", ORR_CLS_ELEMENTWISE, 4.0 * B * e, 0);
    } else if (!fc2) {
        gen_memop(G, c, "moe_fc1_bias_grad", ORR_CLS_REDUCTION, 2.0 * B * e, e);
    } else {
        gen_memop(G, c, "moe_fc2_bias_grad", ORR_CLS_REDUCTION, 6.0 * B * e, 2.0 * e);
        gen_memop(G, c, "moe_fc2_score_grad", ORR_CLS_REDUCTION, 6.0 * B * e, 2.0 * e);
    }
}

/* Megatron's TEGroupedMLP without bias_activation_fusion (options.bias_activation_fusion off; what
 * TransformerConfig defaults to, so its moe_perf harness): bias_act_func runs the activation eagerly
 * (ungated F.gelu, or glu(): silu of one half times the other), multiplies by the routing scores in
 * their dtype (the router's fp32, so an fp32 product) and casts back. Per element of the activation's
 * output: gelu 4 B (glu: silu 4, product 6), score product 2 + 4, cast 4 + 2. Backward: the gradient
 * cast to fp32 (2 + 4), the product's input gradient (4 + 4), its score gradient (the product 4 + 2 +
 * 4 and the row sum 4), the input gradient cast back (4 + 2), then the activation's (gelu 6; glu 6 +
 * 6 + 6). Fused: one kernel each way. */
static int expert_act_unfused(const gen *G) { return !G->s->bias_activation_fusion; }

static void expert_act(gen *G, const ctx *c, int backward, double n, double fe)
{
    double e = n * fe, B = G->act_B / 2.0;
    if (!expert_act_unfused(G)) {
        if (!backward)
            gen_memop(G, c, G->gated ? "moe_swiglu" : "moe_gelu", ORR_CLS_ELEMENTWISE,
                      (G->gated ? 3.0 : 2.0) * e * G->act_B, 8.0 * e);
        else
            gen_memop(G, c, G->gated ? "moe_swiglu_bwd" : "moe_gelu_bwd", ORR_CLS_ELEMENTWISE,
                      (G->gated ? 5.0 : 3.0) * e * G->act_B, 10.0 * e);
        return;
    }
    if (!backward) {
        if (G->gated) {
            gen_memop(G, c, "moe_silu", ORR_CLS_ELEMENTWISE, 4.0 * B * e, 4.0 * e);
            gen_memop(G, c, "moe_glu_mul", ORR_CLS_ELEMENTWISE, 6.0 * B * e, e);
        } else {
            gen_memop(G, c, "moe_gelu", ORR_CLS_ELEMENTWISE, 4.0 * B * e, 8.0 * e);
        }
        /* the fp32 score product, live until its cast */
        uint32_t t = gen_mem_alloc(G, c, S_COMPUTE, "moe_score_product_fp32", e * 4.0, ORR_MEM_TEMP);
        gen_memop(G, c, "moe_score_mul_fp32", ORR_CLS_ELEMENTWISE, (2.0 * B + 4.0) * e, e);
        gen_memop(G, c, "moe_score_cast", ORR_CLS_ELEMENTWISE, (4.0 + 2.0 * B) * e, 0);
        gen_mem_free(G, c, S_COMPUTE, t);
        return;
    }
    gen_memop(G, c, "moe_score_grad_to_fp32", ORR_CLS_ELEMENTWISE, (2.0 * B + 4.0) * e, 0);
    gen_memop(G, c, "moe_score_mul_bwd", ORR_CLS_ELEMENTWISE, 8.0 * e, e);
    gen_memop(G, c, "moe_score_grad_mul", ORR_CLS_ELEMENTWISE, (8.0 + 2.0 * B) * e, e);
    gen_memop(G, c, "moe_score_grad_sum", ORR_CLS_REDUCTION, 4.0 * e, e);
    gen_memop(G, c, "moe_score_grad_cast", ORR_CLS_ELEMENTWISE, (4.0 + 2.0 * B) * e, 0);
    if (G->gated) {
        gen_memop(G, c, "moe_glu_bwd_mul_up", ORR_CLS_ELEMENTWISE, 6.0 * B * e, e);
        gen_memop(G, c, "moe_glu_bwd_mul_gate", ORR_CLS_ELEMENTWISE, 6.0 * B * e, e);
        gen_memop(G, c, "moe_silu_bwd", ORR_CLS_ELEMENTWISE, 6.0 * B * e, 6.0 * e);
    } else {
        gen_memop(G, c, "moe_gelu_bwd", ORR_CLS_ELEMENTWISE, 6.0 * B * e, 10.0 * e);
    }
}

/* The experts' grouped GEMMs and activation on this rank's received tokens. */
static void experts_fwd(gen *G, const ctx *c)
{
    const orr_model *m = model(G);
    double mpe = tokens_per_expert(G), El = local_experts(G), fe = (double)m->expert_ffn / G->ETP;
    double up = G->gated ? 2.0 * fe : fe, n = mpe * El;
    experts_fp8_casts(G, c, 0);
    gen_bgemm(G, c, "moe_grouped_fc1", mpe, up, G->h, El);
    experts_bias(G, c, 0, 0, n, up);
    expert_act(G, c, 0, n, fe);
    gen_bgemm(G, c, "moe_grouped_fc2", mpe, G->h, fe, El);
    experts_bias(G, c, 1, 0, n, G->h);
}

static void experts_bwd(gen *G, const ctx *c)
{
    const orr_model *m = model(G);
    double mpe = tokens_per_expert(G), El = local_experts(G), fe = (double)m->expert_ffn / G->ETP;
    double up = G->gated ? 2.0 * fe : fe, n = mpe * El;
    experts_fp8_casts(G, c, 1);
    /* the gradients of the FC2 input and of the FC1 output, live through the experts' backward; unfused,
     * also the fp32 gradient of the score product and the two fp32 products of its backward */
    double grads = n * (fe + up) * G->act_B + (expert_act_unfused(G) ? n * fe * 8.0 : 0.0);
    uint32_t buf = gen_mem_alloc(G, c, S_COMPUTE, "moe_expert_grads", grads, ORR_MEM_TEMP);
    experts_bias(G, c, 1, 1, n, G->h);
    gen_bgemm(G, c, "moe_grouped_fc2_dgrad", mpe, fe, G->h, El);
    gen_bgemm(G, c, "moe_grouped_fc2_wgrad", fe, G->h, mpe, El);
    expert_act(G, c, 1, n, fe);
    experts_bias(G, c, 0, 1, n, up);
    gen_bgemm(G, c, "moe_grouped_fc1_dgrad", mpe, G->h, up, El);
    gen_bgemm(G, c, "moe_grouped_fc1_wgrad", up, G->h, mpe, El);
    gen_mem_free(G, c, S_COMPUTE, buf);
}

void moe_mlp(gen *G, const ctx *c, int backward)
{
    int ov = shared_overlap(G);
    if (!backward) {
        router(G, c, 0);
        dispatch(G, c, "dispatch", 0);
        experts_fwd(G, c);
        combine(G, c, "combine", 0);
        if (!ov) shared_half(G, c, 0, 0), shared_half(G, c, 0, 1);
        return;
    }
    if (!ov) shared_half(G, c, 1, 0), shared_half(G, c, 1, 1);
    dispatch(G, c, "combine_bwd", 1);
    experts_bwd(G, c);
    combine(G, c, "dispatch_bwd", 1);
    router(G, c, 1);
}

/* ---- parameters, saved bytes, gradient reduction ---- */

double moe_layer_dense_params_local(const gen *G, uint32_t layer)
{
    const orr_model *m = model(G);
    if (!moe_is_moe_layer(G, layer)) return orr_model_layer_params(m) / G->T;
    double norms = m->rmsnorm ? 2.0 * G->h : 4.0 * G->h;
    return (orr_model_attn_params(m) + norms + orr_model_shared_expert_params(m)) / G->T + orr_model_router_params(m);
}

double moe_layer_expert_params_local(const gen *G, uint32_t layer)
{
    if (!moe_is_moe_layer(G, layer)) return 0;
    return local_experts(G) * orr_model_expert_params(model(G)) / G->ETP;
}

double moe_rank_expert_params(const gen *G)
{
    if (!model(G)->experts) return 0;
    double p = 0;
    for (uint32_t c = 0; c < G->V; c++) {
        uint32_t first = G->stage_first[c * G->P + G->pp_r], n = G->stage_layers[c * G->P + G->pp_r];
        for (uint32_t l = 0; l < n; l++) p += moe_layer_expert_params_local(G, first + l);
    }
    return p;
}

/* What an MoE layer keeps under recomputation rc (Megatron's recompute_modules m, gen_rc_modules).
 * Per routed copy received: the grouped FC1 input (FP8 under fp8 training, as Transformer Engine
 * saves it), its output (both halves when gated) and the activation's output (the FC2 input), and
 * the expert output kept for the score-weighted unpermute (none where the recipe multiplies the
 * scores inside its fused activation: recipe.moe_scores_in_act); per token: the scores and routing
 * map (fp32, per expert) and the shared experts' tensors like a dense MLP's. In Megatron's MoE layer
 * the pre-MLP norm is a module of its own (gpt_layer_specs: TENorm, not fused into a linear): its
 * output is the router's saved input (bf16) and, under FP8, the shared experts' FP8 cast; in the
 * autograd recipes it is among the layer's norm outputs (gen_autograd_layer_bytes).
 *   layernorm: that output discarded and re-created (Transformer Engine then keeps the original
 *     input, set_save_original_input, which is the discarded tensor);
 *   moe_act: the activation's output discarded and re-created from FC1's (and, unfused, what its
 *     eager ops keep);
 *   shared_experts: the shared experts checkpointed, their tensors dropped;
 *   moe: the whole layer checkpointed, its input (the norm's output) kept unless layernorm. */
double moe_layer_saved_bytes(const gen *G, uint32_t layer, orr_recompute rc)
{
    if (!moe_is_moe_layer(G, layer) || rc == ORR_RECOMPUTE_FULL) return 0;
    const orr_model *m = model(G);
    uint32_t rm = gen_rc_modules(G, rc);
    int narrow = orr_dtype_is_narrow(G->dt);
    double in_B = narrow ? 1.0 : 2.0, fe = (double)m->expert_ffn / G->ETP, N = gen_local_tokens(G);
    double norm_in = 0, norm_fp8 = 0;
    if (G->rp->layer_saved_bytes != gen_autograd_layer_bytes && !(rm & ORR_RCM_LAYERNORM)) {
        norm_in = N * 2.0 * G->h;
        if (narrow && m->shared_experts && !(rm & (ORR_RCM_MOE | ORR_RCM_SHARED_EXPERTS))) norm_fp8 = N * in_B * G->h;
    }
    if (rm & ORR_RCM_MOE) return norm_in;
    /* unfused (expert_act): the activation's output kept by the score product (and glu's silu output by
     * its product), and the scores applied inside, so no expert output kept for the combine */
    int unfused = expert_act_unfused(G), act_rc = (rm & ORR_RCM_MOE_ACT) != 0;
    double act = unfused && !act_rc ? 2.0 * fe * (G->gated ? 2.0 : 1.0) : 0.0;
    double per_copy = in_B * G->h + 2.0 * fe * (G->gated ? 2.0 : 1.0) + (act_rc ? 0.0 : in_B * fe) + act +
                      (G->rp->moe_scores_in_act || unfused ? 0.0 : 2.0 * G->h);
    double routed = routed_received(G) * G->ETP * per_copy;
    double fs = (double)m->shared_experts * m->shared_expert_ffn / G->T;
    double shared = m->shared_experts && !(rm & ORR_RCM_SHARED_EXPERTS)
                        ? gen_tokens(G) * (2.0 * fs * (G->gated ? 2.0 : 1.0) + in_B * fs) : 0;
    double scores = N * m->experts * 4.0 * 2.0;
    return norm_in + norm_fp8 + routed + shared + scores;
}

/* The recipe's dense-MLP terms: PyTorch autograd's (gen_autograd_layer_bytes) those that depend on
 * the MLP width; megatron.c's layer_saved_bytes inside TP 2f (x2 gated) and the FC2 input, the FC1
 * input 2h (1 B under fp8) outside, split by tp with SP (none left to take when mlp recompute
 * dropped them: megatron.c). */
double moe_layer_dense_mlp_bytes(const gen *G, uint32_t layer, orr_recompute rc)
{
    if (!moe_is_moe_layer(G, layer) || rc == ORR_RECOMPUTE_FULL) return 0;
    if (G->rp->layer_saved_bytes == gen_autograd_layer_bytes) {
        gen no_mlp = *G;
        no_mlp.f = 0;
        return gen_autograd_layer_bytes(G, rc) - gen_autograd_layer_bytes(&no_mlp, rc);
    }
    if (gen_rc_modules(G, rc) & ORR_RCM_MLP) return 0;
    double in_B = orr_dtype_is_narrow(G->dt) ? 1.0 : 2.0, t = G->T;
    double inside = 2.0 * G->f * (G->gated ? 2.0 : 1.0) + in_B * G->f;
    if (!G->s->bias_activation_fusion && G->gated) inside += 2.0 * G->f;
    return gen_tokens(G) * (inside / t + in_B * G->h / (G->sp ? t : 1.0));
}

void moe_save_activations(gen *G, const ctx *c, uint32_t buf)
{
    if (!moe_is_moe_layer(G, c->layer)) return;
    orr_recompute rc = gen_layer_rc(G, c->layer);
    if (rc == ORR_RECOMPUTE_FULL) return;
    gen_mem_op(G, c, ORR_OP_ALLOC, S_COMPUTE, "moe_activations", buf, moe_layer_saved_bytes(G, c->layer, rc),
               ORR_MEM_ACT);
}

void moe_free_activations(gen *G, const ctx *c, uint32_t buf)
{
    if (!moe_is_moe_layer(G, c->layer) || gen_layer_rc(G, c->layer) == ORR_RECOMPUTE_FULL) return;
    gen_mem_free(G, c, S_COMPUTE, buf);
}

void moe_module_recompute(gen *G, const ctx *c, uint32_t m)
{
    if (!moe_is_moe_layer(G, c->layer)) return;
    if (m & ORR_RCM_MOE) {
        moe_mlp(G, c, 0);
        return;
    }
    if (m & ORR_RCM_MOE_ACT) {
        double fe = (double)model(G)->expert_ffn / G->ETP;
        expert_act(G, c, 0, tokens_per_expert(G) * local_experts(G), fe);
    }
    if ((m & ORR_RCM_SHARED_EXPERTS) && has_shared(G)) {
        shared_half(G, c, 0, 0);
        shared_half(G, c, 0, 1);
    }
}

/* The expert gradients of one MoE layer reduced over the expert-data-parallel group on the DP
 * stream (Megatron's expert-parallel buckets): reduce-scatter with the distributed optimizer (the
 * experts' optimizer state sharded over edp), else all-reduce; fp32 unless --grad-reduce-in-bf16. */
void moe_expert_grad_reduce(gen *G, const ctx *c)
{
    double p = moe_layer_expert_params_local(G, c->layer);
    if (p <= 0 || G->EDP <= 1 || G->rp->shards_params) return; /* sharded: with the block's unit (gen.c) */
    ctx cx = *c;
    cx.mb = ORR_NO_MB;
    uint32_t e = gen_record(G, S_COMPUTE);
    gen_wait(G, S_DP, e);
    orr_coll_kind k = G->dist ? ORR_COLL_REDUCESCATTER : ORR_COLL_ALLREDUCE;
    gen_coll_group(G, &cx, S_DP, G->dist ? "edp_grad_reducescatter" : "edp_grad_allreduce", k, ORR_ROLE_DP, G->g_edp,
                   &G->seq_edp, p * G->grad_B);
}

/* ---- MLA (DeepSeek-V2 section 2.1): down-projections of the queries (q_lora_rank) and of the
 * keys/values (kv_lora_rank + the shared rotary key), their RMSNorms, and the up-projections split
 * by tp; the down-projections are replicated over tp (their input all-gathered with SP). ---- */
void mla_qkv(gen *G, const ctx *c, int backward)
{
    const orr_model *m = model(G);
    double M = gen_tokens(G), t = G->T, a = G->a;
    double qk = (double)m->qk_nope_dim + m->qk_rope_dim, ql = m->q_lora_rank, kvl = m->kv_lora_rank;
    double q_up = a * qk / t, kv_up = a * ((double)m->qk_nope_dim + m->v_head_dim) / t;
    double down = (ql > 0 ? ql : 0) + kvl + m->qk_rope_dim;
    if (!backward) {
        gen_gemm_tp(G, c, "mla_down_gemm", M, down, G->h, "tp_allgather_attn", ORR_COLL_ALLGATHER);
        gen_memop(G, c, "mla_latent_norms", ORR_CLS_NORM, 2.0 * M * (ql + kvl) * G->act_B, 5.0 * M * (ql + kvl));
        mla_up_proj(G, c);
        return;
    }
    gen_gemm(G, c, "mla_kv_up_dgrad", M, kvl, kv_up);
    gen_gemm(G, c, "mla_kv_up_wgrad", kv_up, kvl, M);
    if (ql > 0) {
        gen_gemm(G, c, "mla_q_up_dgrad", M, ql, q_up);
        gen_gemm(G, c, "mla_q_up_wgrad", q_up, ql, M);
    } else {
        gen_gemm(G, c, "mla_q_dgrad", M, G->h, q_up);
        gen_gemm(G, c, "mla_q_wgrad", q_up, G->h, M);
    }
    gen_memop(G, c, "mla_latent_norms_bwd", ORR_CLS_NORM, 3.0 * M * (ql + kvl) * G->act_B, 8.0 * M * (ql + kvl));
    gen_gemm_tp(G, c, "mla_down_dgrad", M, G->h, down, "tp_reducescatter_grad", gen_g_fwd_kind(G));
    gen_gemm(G, c, "mla_down_wgrad", down, G->h, M);
}

void mla_up_proj(gen *G, const ctx *c)
{
    const orr_model *m = model(G);
    double M = gen_tokens(G), t = G->T, a = G->a;
    double qk = (double)m->qk_nope_dim + m->qk_rope_dim, ql = m->q_lora_rank, kvl = m->kv_lora_rank;
    double q_up = a * qk / t, kv_up = a * ((double)m->qk_nope_dim + m->v_head_dim) / t;
    if (ql > 0) gen_gemm(G, c, "mla_q_up_gemm", M, q_up, ql);
    else gen_gemm(G, c, "mla_q_gemm", M, q_up, G->h);
    gen_gemm(G, c, "mla_kv_up_gemm", M, kv_up, kvl);
}

double moe_window_fraction(const gen *G, uint32_t layer)
{
    const orr_model *m = model(G);
    if (!m->window_tokens || layer >= G->L || layer % m->window_pattern == m->window_pattern - 1) return 0;
    /* 128 x 128 score blocks: each query block sees the blocks of its window and the diagonal one */
    double nb = ceil(G->sq / 128.0), wb = ceil(m->window_tokens / 128.0) + 1.0;
    return wb >= nb ? 0 : wb / nb;
}

/* 3 x the forward matmul FLOPs per token of the active parameters: per layer the attention
 * projections, the router and the top_k routed plus the shared experts (an MoE layer) or the dense
 * MLP, and the attention scores over the full sequence (QK^T and PV, no causal discount, as
 * Megatron-LM counts them); the LM head over the padded vocabulary. */
double moe_model_flops(const gen *G, double gbs)
{
    const orr_model *m = model(G);
    double h = G->h, s = G->sq, per_token = 2.0 * h * G->vocab;
    double qk = G->mla ? (double)m->qk_nope_dim + m->qk_rope_dim : G->hd, v = G->mla ? m->v_head_dim : G->hd;
    double attn_proj = orr_model_attn_params(m), scores = 2.0 * s * G->a * (qk + v);
    for (uint32_t l = 0; l < G->L; l++) {
        double mlp = moe_is_moe_layer(G, l) ? orr_model_router_params(m) + m->top_k * orr_model_expert_params(m) +
                                                  orr_model_shared_expert_params(m)
                                            : (G->gated ? 3.0 : 2.0) * h * G->f;
        per_token += 2.0 * (attn_proj + mlp) + scores;
    }
    return 3.0 * per_token * gbs * s;
}
