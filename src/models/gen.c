/*
 * gen.c - the framework-neutral builder of training workloads for dense decoder-only transformers
 * (orr_gen_training in orrery.h); what differs between frameworks is asked of their recipe
 * (gen.h: megatron.c, torchtitan.c, deepspeed.c, nanotron.c).
 *
 * For every simulated rank it writes the op stream of one training iteration in CUDA terms:
 *   - per layer and micro-batch, the forward and backward kernels (norms, QKV/projection/MLP GEMMs,
 *     flash or unfused attention, elementwise ops, fused or one kernel per ATen op as the recipe
 *     runs them) with their FLOPs and bytes, and the tensor-parallel collectives of the f/g
 *     operators (all-reduce, or all-gather + reduce-scatter with sequence parallelism); in the
 *     backward pass the column-parallel linears' collectives run asynchronously on a side stream,
 *     overlapped with the weight-gradient GEMM;
 *   - pipeline parallelism as real send/recv between stage ranks in the order of the 1F1B and
 *     interleaved (virtual stages) schedules, batched as the p2p calls batch them, so bubbles emerge
 *     from the simulation;
 *   - data parallelism either as gradient buckets (max(40M, 1M x dp) parameters) launched on a
 *     communication stream as the last micro-batch's backward fills each bucket, all-reduced, or
 *     reduce-scattered with the optimizer on the shard and the parameters all-gathered after it
 *     (overlapped with the next forward when the recipe says so); or as per-block sharding units
 *     gathered before use and reduce-scattered after their backward (recipe.shards_params);
 *   - context parallelism (the recipe's attention over the CP group), embedding, LM head and
 *     vocab-parallel cross-entropy, the tied-embedding gradient all-reduce between the first and
 *     last stage, gradient-norm all-reduces, the Adam step;
 *   - activation recomputation: full recompute re-runs each layer's forward (with its TP
 *     collectives) before its backward; selective recompute per the recipe;
 *   - ALLOC/FREE of what each layer keeps for its backward (the recipe's sizes), of the loss and of
 *     what persists, so the memory model sees the peak.
 * Ranks are laid out tp fastest, then cp, then dp, then pp. With symmetry on, one rank per pipeline
 * stage (and cp rank) is simulated and stands for its tp x dp peers.
 */
#include "models/gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rank layout ---- */

/* Megatron's and TorchTitan's order: tp fastest, then cp, then dp, then pp. */
static uint32_t grank4(const gen *G, uint32_t tp, uint32_t cp, uint32_t dp, uint32_t pp)
{
    return tp + G->T * (cp + G->C * (dp + G->D * pp));
}
static uint32_t grank(const gen *G, uint32_t tp, uint32_t dp, uint32_t pp) { return grank4(G, tp, G->cp_r, dp, pp); }

static void qsort_u32(uint32_t *m, uint32_t n);

/* The symmetry behind one simulated rank per (stage, cp rank) (workload.h, orr_sym). A stage's
 * local index tp + T (cp + C dp) has its groups as ranges: TP (T), TP x CP, the FSDP shard group
 * (T C shard_dp), the stage; with experts it is also etp + ETP (ep + EP edp) (moe.c), whose ETP,
 * EP and EDP groups are ranges of that layout. A shift of a digit maps every group onto a group
 * (a shard group onto the next replica's, never across one) when each group's bounds are digit
 * bounds: the cuts must form a chain, each dividing the next, with none inside the cp digit, which
 * is kept (its ranks are all simulated: p2p peers differ from the rank only in pp or cp). The
 * digits are the steps of the chain, every one shifted but cp's, then pp, kept. Where the expert
 * cuts do not chain, none is described (the flow and packet backends then simulate every GPU:
 * orr_predict). Under --moe-imbalance the images run at the simulated rank's load, the most
 * loaded one's. */
static void describe_symmetry(gen *G)
{
    uint32_t shard_dp = G->rp->shards_params ? G->S / G->C : G->D;
    uint32_t T = G->T, TC = G->T * G->C, stage = TC * G->D;
    uint32_t u[8] = {1, T, TC, TC * shard_dp, stage}, n = 5;
    if (G->EP * G->ETP > 1) {
        u[n++] = G->ETP;
        u[n++] = G->ETP * G->EP;
        u[n++] = G->ETP * G->EP * G->EDP;
    }
    qsort_u32(u, n);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (m == 0 || u[i] != u[m - 1]) u[m++] = u[i];
    orr_sym *y = &G->w->sym;
    memset(y, 0, sizeof *y);
    if (u[m - 1] != stage || m > ORR_SYM_MAX_DIGITS) return;
    y->nimages = 1;
    for (uint32_t i = 0; i + 1 < m; i++) {
        if (u[i + 1] % u[i] || (u[i] > T && u[i] < TC)) {
            memset(y, 0, sizeof *y);
            return;
        }
        uint32_t d = y->ndigits++;
        y->radix[d] = u[i + 1] / u[i];
        y->shifted[d] = !(u[i] == T && u[i + 1] == TC); /* the cp digit is kept */
        if (y->shifted[d]) y->nimages *= y->radix[d];
    }
    y->radix[y->ndigits] = G->P;
    y->shifted[y->ndigits++] = 0;
    if (y->nimages != T * G->D) memset(y, 0, sizeof *y);
}

/* salt 0: the communicator of role over members m; else another one over the same members. */
static uint32_t group_salted(gen *G, orr_comm_role role, const uint32_t *m, uint32_t n, const char *label, uint64_t salt)
{
    uint64_t key = orr_hash64(role ^ salt);
    for (uint32_t i = 0; i < n; i++) key = orr_hash64(key ^ m[i]);
    if (key == UINT64_MAX) key--;
    uint32_t *p = orr_map_get(&G->group_ids, key);
    if (p) return *p;
    uint32_t id = orr_workload_add_group(G->w, role, m, n, label);
    orr_map_put(&G->group_ids, key, id);
    return id;
}

static uint32_t group_of(gen *G, orr_comm_role role, const uint32_t *m, uint32_t n, const char *label)
{
    return group_salted(G, role, m, n, label, 0);
}

/* The data-parallel group of the gradient reduction and the optimizer's shard (R ranks): the dp
 * ranks of this (tp, cp, pp) position, or with recipe.reduces_over_cp those of every cp rank too. */
static void dp_group(gen *G, uint32_t *m)
{
    char label[32];
    uint32_t k = 0;
    if (G->R == G->D) {
        for (uint32_t d = 0; d < G->D; d++) m[k++] = grank(G, G->tp_r, d, G->pp_r);
        snprintf(label, sizeof label, "dp(tp%u,pp%u)", G->tp_r, G->pp_r);
    } else {
        for (uint32_t d = 0; d < G->D; d++)
            for (uint32_t c = 0; c < G->C; c++) m[k++] = grank4(G, G->tp_r, c, d, G->pp_r);
        qsort_u32(m, k);
        snprintf(label, sizeof label, "dp_cp(tp%u,pp%u)", G->tp_r, G->pp_r);
    }
    G->g_dp = group_of(G, ORR_ROLE_DP, m, k, label);
}

static void rank_groups(gen *G)
{
    uint32_t n = G->T * G->P > G->D ? G->T * G->P : G->D;
    if (G->T > n) n = G->T;
    if (G->D * G->C > n) n = G->D * G->C;
    uint32_t *m = orr_xmalloc(n * sizeof *m);
    char label[32];
    for (uint32_t t = 0; t < G->T; t++) m[t] = grank(G, t, G->dp_r, G->pp_r);
    snprintf(label, sizeof label, "tp(dp%u,pp%u)", G->dp_r, G->pp_r);
    G->g_tp = group_of(G, ORR_ROLE_TP, m, G->T, label);
    dp_group(G, m);
    uint32_t k = 0;
    for (uint32_t p = 0; p < G->P; p++)
        for (uint32_t t = 0; t < G->T; t++) m[k++] = grank(G, t, G->dp_r, p);
    snprintf(label, sizeof label, "mp(dp%u)", G->dp_r);
    G->g_mp = group_of(G, ORR_ROLE_OTHER, m, k, label);
    G->has_emb_group = G->P > 1 && G->s->model.tied_embeddings && (G->pp_r == 0 || G->pp_r == G->P - 1);
    if (G->has_emb_group) {
        m[0] = grank(G, G->tp_r, G->dp_r, 0);
        m[1] = grank(G, G->tp_r, G->dp_r, G->P - 1);
        snprintf(label, sizeof label, "emb(tp%u,dp%u)", G->tp_r, G->dp_r);
        G->g_emb = group_of(G, ORR_ROLE_EMB, m, 2, label);
    }
    if (G->C > 1) {
        for (uint32_t c = 0; c < G->C; c++) m[c] = grank4(G, G->tp_r, c, G->dp_r, G->pp_r);
        snprintf(label, sizeof label, "cp(tp%u,dp%u,pp%u)", G->tp_r, G->dp_r, G->pp_r);
        G->g_cp = group_of(G, ORR_ROLE_CP, m, G->C, label);
    }
    if (G->rp->shards_params) {
        /* the shard group: the dp ranks of this replica (S / cp of them) times cp */
        uint32_t shard_dp = G->S / G->C, rep = G->dp_r / shard_dp, k2 = 0;
        for (uint32_t d = rep * shard_dp; d < (rep + 1) * shard_dp; d++)
            for (uint32_t c = 0; c < G->C; c++) m[k2++] = grank4(G, G->tp_r, c, d, G->pp_r);
        qsort_u32(m, k2);
        snprintf(label, sizeof label, "fsdp(tp%u,pp%u,r%u)", G->tp_r, G->pp_r, rep);
        G->g_shard = group_of(G, ORR_ROLE_DP, m, k2, label);
        uint32_t nrep = G->D / shard_dp;
        if (nrep > 1) {
            for (uint32_t r = 0; r < nrep; r++) m[r] = grank4(G, G->tp_r, G->cp_r, r * shard_dp + G->dp_r % shard_dp, G->pp_r);
            snprintf(label, sizeof label, "hsdp(tp%u,pp%u)", G->tp_r, G->pp_r);
            G->g_rep = group_of(G, ORR_ROLE_DP, m, nrep, label);
        }
    }
    free(m);
    G->seq_tp = G->seq_dp = G->seq_emb = G->seq_mp = G->seq_cp = G->seq_shard = G->seq_rep = 0;
    moe_groups(G);
}

uint32_t gen_group(gen *G, orr_comm_role role, const uint32_t *m, uint32_t n, const char *label)
{
    return group_of(G, role, m, n, label);
}

uint32_t gen_group_own(gen *G, orr_comm_role role, const uint32_t *m, uint32_t n, const char *label, uint32_t tag)
{
    return group_salted(G, role, m, n, label, (uint64_t)tag << 32);
}

/* ---- op emission ---- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void qsort_u32(uint32_t *m, uint32_t n) { qsort(m, n, sizeof *m, cmp_u32); }

static orr_op *emit(gen *G, orr_op_kind kind, uint8_t stream, const char *name)
{
    orr_op op;
    memset(&op, 0, sizeof op);
    op.kind = (uint8_t)kind;
    op.stream = stream;
    op.dtype = (uint8_t)G->dt;
    op.name = orr_workload_name(G->w, name);
    op.layer = ORR_NO_LAYER;
    op.mb = ORR_NO_MB;
    op.phase = ORR_PHASE_OTHER;
    if (G->rk->nops >= G->rank_op_cap) { /* past the op budget: keep nothing more (gen_one_rank refuses) */
        G->over_budget = 1;
        G->op_sink = op;
        return &G->op_sink;
    }
    return orr_rank_push(G->rk, &op);
}

static void tag_op(orr_op *op, const ctx *c)
{
    op->phase = (uint8_t)c->phase;
    op->layer = c->layer == ORR_NO_LAYER ? ORR_NO_LAYER : (uint16_t)c->layer;
    op->mb = c->mb;
    op->layer_chunk = (uint8_t)c->chunk;
}

/* How an fp8 GEMM's operands are scaled under the run's --fp8-recipe. Blockwise scaling gives a weight
 * 128x128 blocks and an activation or gradient 1x128 ones, so the weight gradient (dY^T x, two
 * activations: every GEMM the generator names *wgrad*) is the 1x128 x 1x128 kind. */
static orr_fp8_scaling fp8_scaling(const gen *G, const char *name)
{
    switch (G->s->fp8_recipe) {
    case ORR_FP8_ROWWISE: return ORR_FP8_SCALE_ROW;
    case ORR_FP8_BLOCKWISE: return strstr(name, "wgrad") ? ORR_FP8_SCALE_BLOCK_1D : ORR_FP8_SCALE_BLOCK;
    case ORR_FP8_TENSORWISE:
    case ORR_FP8_DELAYED: break;
    }
    return ORR_FP8_SCALE_TENSOR;
}

/* A (batched) GEMM: batch x (m x k) x (k x n). */
static void bgemm(gen *G, const ctx *c, const char *name, double m, double n, double k, double batch)
{
    orr_op *op = emit(G, ORR_OP_KERNEL, S_COMPUTE, name);
    tag_op(op, c);
    op->cls = ORR_CLS_GEMM;
    /* float8 training converts the blocks' linear layers only: TorchTitan's converter skips the
     * "output" module, Transformer Engine's fp8 covers the TE layers, not the output layer */
    if (orr_dtype_is_narrow(G->dt) && G->head_gemms) op->dtype = ORR_BF16;
    if (op->dtype == ORR_FP8) op->flags |= (uint8_t)(fp8_scaling(G, name) << ORR_OPF_FP8_SCALING_SHIFT);
    op->flops = 2.0 * m * n * k * batch;
    op->bytes = (uint64_t)(G->act_B * (m * k + k * n + m * n) * batch);
    op->dims[0] = (uint32_t)m;
    op->dims[1] = (uint32_t)n;
    op->dims[2] = (uint32_t)k;
    op->dims[3] = (uint32_t)batch;
}

static void gemm(gen *G, const ctx *c, const char *name, double m, double n, double k)
{
    bgemm(G, c, name, m, n, k, 1);
}

void gen_gemm(gen *G, const ctx *c, const char *name, double m, double n, double k) { gemm(G, c, name, m, n, k); }
void gen_bgemm(gen *G, const ctx *c, const char *name, double m, double n, double k, double batch)
{
    bgemm(G, c, name, m, n, k, batch);
}

void gen_memop(gen *G, const ctx *c, const char *name, orr_op_class cls, double bytes, double flops)
{
    orr_op *op = emit(G, ORR_OP_KERNEL, S_COMPUTE, name);
    tag_op(op, c);
    op->cls = (uint8_t)cls;
    op->bytes = (uint64_t)bytes;
    op->flops = flops;
}

/* Causal flash attention: the fraction of (128 x 128) score blocks computed. */
static double causal_fraction(double s)
{
    double nb = ceil(s / 128.0);
    return (nb + 1.0) / (2.0 * nb);
}

/* A flash-attention kernel op: bf16 under fp8/fp4 training (as Transformer Engine runs it), at cuDNN's
 * level with --attention cudnn; the caller sets its work. */
static orr_op *flash_op(gen *G, const ctx *c, int backward)
{
    orr_op *op = emit(G, ORR_OP_KERNEL, S_COMPUTE, backward ? "flash_attn_bwd" : "flash_attn_fwd");
    tag_op(op, c);
    op->dtype = orr_dtype_is_narrow(G->dt) ? ORR_BF16 : G->dt;
    op->cls = backward ? ORR_CLS_ATTENTION_BWD : ORR_CLS_ATTENTION_FWD;
    if (G->s->attention == ORR_ATTN_CUDNN) op->flags |= ORR_OPF_ATTN_CUDNN;
    return op;
}

/* One flash-attention kernel over q_len queries and kv_len keys with the given causal fraction. */
void gen_flash_block(gen *G, const ctx *c, int backward, double q_len, double kv_len, double frac)
{
    double heads = G->a / G->T, kvh = G->g / G->T;
    double fwd_flops = 4.0 * G->b * heads * q_len * kv_len * G->hd * frac;
    orr_op *op = flash_op(G, c, backward);
    op->flops = backward ? 2.5 * fwd_flops : fwd_flops;
    double qkvo = G->b * G->hd * (2.0 * heads * q_len + 2.0 * kvh * kv_len) * G->act_B;
    op->bytes = (uint64_t)(backward ? 2.0 * qkvo : qkvo);
    op->dims[0] = (uint32_t)(G->b * heads);
    op->dims[1] = (uint32_t)q_len;
    op->dims[2] = (uint32_t)kv_len;
    op->dims[3] = (uint32_t)G->hd;
}

static void cp_p2p(gen *G, const ctx *c, orr_op_kind kind, uint32_t peer, uint32_t tag, double bytes)
{
    orr_op *op = emit(G, kind, S_CP, kind == ORR_OP_SEND ? "cp_send_kv" : "cp_recv_kv");
    tag_op(op, c);
    op->role = ORR_ROLE_CP;
    op->a = peer;
    op->seq = tag;
    op->bytes = (uint64_t)bytes;
    op->flags = kind == ORR_OP_SEND ? ORR_OPF_BATCH_NEXT : 0; /* the send is batched with the recv */
}

/* One hop around the CP ring on the CP stream: a batched send to the next CP rank and receive from
 * the previous one; returns the event of its arrival. */
uint32_t gen_cp_hop(gen *G, const ctx *c, uint32_t tag, double bytes)
{
    cp_p2p(G, c, ORR_OP_SEND, grank4(G, G->tp_r, (G->cp_r + 1) % G->C, G->dp_r, G->pp_r), tag, bytes);
    cp_p2p(G, c, ORR_OP_RECV, grank4(G, G->tp_r, (G->cp_r + G->C - 1) % G->C, G->dp_r, G->pp_r), tag, bytes);
    return gen_record(G, S_CP);
}

/* Ring attention over the CP group (causal load balancing: each rank holds chunks i and 2cp-1-i, so
 * every rank does 1/cp of the causal work): cp steps, each an attention block over the K/V chunk in
 * hand while the next chunk travels one hop around the ring (batched send/recv on the CP stream).
 * Backward passes K/V with the dK/dV accumulators (fp32). Transformer Engine's p2p context
 * parallelism; a recipe may name it as its cp_attention. */
void gen_ring_attention(gen *G, const ctx *c, int backward)
{
    double sl = G->sq / G->C, kvh = G->g / G->T;
    double kv_bytes = 2.0 * G->b * sl * kvh * G->hd * G->act_B;
    double hop_bytes = backward ? kv_bytes * 3.0 : kv_bytes;
    uint32_t tag = backward ? TAG_CP_BWD : TAG_CP_FWD;
    uint32_t e = gen_record(G, S_COMPUTE); /* K and V (and their gradients) are ready */
    gen_wait(G, S_CP, e);
    for (uint32_t j = 0; j < G->C; j++) {
        uint32_t arrived = j + 1 < G->C ? gen_cp_hop(G, c, tag, hop_bytes) : UINT32_MAX;
        /* the diagonal block is causal (half), the others full: 1/cp of the causal work per step on average */
        gen_flash_block(G, c, backward, sl, sl, 0.5);
        if (arrived != UINT32_MAX) gen_wait(G, S_COMPUTE, arrived);
    }
}

static void flash_attention(gen *G, const ctx *c, int backward)
{
    if (G->C > 1) {
        G->rp->cp_attention(G, c, backward);
        return;
    }
    double heads = G->a / G->T, kvh = G->g / G->T;
    double frac = causal_fraction(G->sq), wf = moe_window_fraction(G, c->layer); /* sliding window */
    if (wf > 0 && wf < frac) frac = wf;
    double fwd_flops = 4.0 * G->b * heads * G->sq * G->sq * G->hd * frac;
    orr_op *op = flash_op(G, c, backward);
    /* backward: dQ, dK, dV, dP and the recomputed S = 2.5x the forward's matmul work (FA2) */
    op->flops = backward ? 2.5 * fwd_flops : fwd_flops;
    double qkvo = G->b * G->sq * G->hd * (2.0 * heads + 2.0 * kvh) * G->act_B;
    op->bytes = (uint64_t)(backward ? 2.0 * qkvo : qkvo);
    op->dims[0] = (uint32_t)(G->b * heads);
    op->dims[1] = (uint32_t)G->sq;
    op->dims[2] = (uint32_t)G->sq;
    op->dims[3] = (uint32_t)G->hd;
}

/* Megatron's unfused attention core (before flash attention): QK^T as a batched GEMM with K = head
 * dim, a fused scale-mask-softmax and a dropout over the b x heads x s x s scores, and the AV batched
 * GEMM; the backward mirrors it (two batched GEMMs each for AV and QK^T, dropout and softmax
 * backward). Scores are in the activation dtype. */
static void unfused_attention(gen *G, const ctx *c, int backward)
{
    double B = G->b * G->a / G->T, s2 = G->sq * G->sq * B, eb = G->act_B;
    if (!backward) {
        bgemm(G, c, "attn_qk_bmm", G->sq, G->sq, G->hd, B);
        gen_memop(G, c, "scale_mask_softmax", ORR_CLS_ELEMENTWISE, 2.0 * s2 * eb, 5.0 * s2);
        gen_memop(G, c, "attn_dropout", ORR_CLS_ELEMENTWISE, 2.0 * s2 * eb + s2, s2);
        bgemm(G, c, "attn_av_bmm", G->sq, G->hd, G->sq, B);
        return;
    }
    bgemm(G, c, "attn_av_dgrad_bmm", G->sq, G->sq, G->hd, B);
    bgemm(G, c, "attn_av_wgrad_bmm", G->sq, G->hd, G->sq, B);
    gen_memop(G, c, "attn_dropout_bwd", ORR_CLS_ELEMENTWISE, 2.0 * s2 * eb + s2, s2);
    gen_memop(G, c, "softmax_bwd", ORR_CLS_ELEMENTWISE, 3.0 * s2 * eb, 4.0 * s2);
    bgemm(G, c, "attn_q_grad_bmm", G->sq, G->hd, G->sq, B);
    bgemm(G, c, "attn_k_grad_bmm", G->sq, G->hd, G->sq, B);
}

static void attention(gen *G, const ctx *c, int backward)
{
    if (G->s->attention == ORR_ATTN_UNFUSED) unfused_attention(G, c, backward);
    else flash_attention(G, c, backward);
}

orr_op *gen_coll(gen *G, const ctx *c, uint8_t stream, const char *name, orr_coll_kind kind, orr_comm_role role,
                 double bytes)
{
    uint32_t group, *seq;
    switch (role) {
    case ORR_ROLE_TP: group = G->g_tp; seq = &G->seq_tp; break;
    case ORR_ROLE_DP: group = G->g_dp; seq = &G->seq_dp; break;
    case ORR_ROLE_EMB: group = G->g_emb; seq = &G->seq_emb; break;
    case ORR_ROLE_CP: group = G->g_cp; seq = &G->seq_cp; break;
    default: group = G->g_mp; seq = &G->seq_mp; break;
    }
    orr_op *op = emit(G, ORR_OP_COLL, stream, name);
    tag_op(op, c);
    op->cls = (uint8_t)kind;
    op->role = (uint8_t)role;
    op->a = group;
    op->seq = (*seq)++;
    op->bytes = (uint64_t)bytes;
    return op;
}

/* A collective on an explicit group (FSDP shard and replicate groups). */
orr_op *gen_coll_group(gen *G, const ctx *c, uint8_t stream, const char *name, orr_coll_kind kind, orr_comm_role role,
                       uint32_t group, uint32_t *seq, double bytes)
{
    orr_op *op = emit(G, ORR_OP_COLL, stream, name);
    tag_op(op, c);
    op->cls = (uint8_t)kind;
    op->role = (uint8_t)role;
    op->a = group;
    op->seq = (*seq)++;
    op->bytes = (uint64_t)bytes;
    return op;
}

static void coll_in(gen *G, const ctx *c, uint8_t stream, const char *name, orr_coll_kind kind, uint32_t group,
                    uint32_t *seq, double bytes)
{
    gen_coll_group(G, c, stream, name, kind, ORR_ROLE_DP, group, seq, bytes);
}

/* One ALLOC or FREE of buffer buf (every memory op of the generator goes through here). */
void gen_mem_op(gen *G, const ctx *c, orr_op_kind kind, uint8_t stream, const char *name, uint32_t buf,
                double bytes, orr_mem_cat cat)
{
    orr_op *op = emit(G, kind, stream, name);
    if (c) tag_op(op, c);
    op->a = buf;
    op->bytes = (uint64_t)(bytes > 0 ? bytes : 0);
    op->cls = (uint8_t)cat;
}

/* ALLOC of an extra buffer (not a per-layer activation): ids after the activation buffers. */
uint32_t gen_mem_alloc(gen *G, const ctx *c, uint8_t stream, const char *name, double bytes, orr_mem_cat cat)
{
    uint32_t buf = G->nbuf++;
    gen_mem_op(G, c, ORR_OP_ALLOC, stream, name, buf, bytes, cat);
    return buf;
}

void gen_mem_free(gen *G, const ctx *c, uint8_t stream, uint32_t buf)
{
    if (buf != UINT32_MAX) gen_mem_op(G, c, ORR_OP_FREE, stream, "free", buf, 0, ORR_MEM_PARAM);
}

uint32_t gen_record(gen *G, uint8_t stream)
{
    orr_op *op = emit(G, ORR_OP_EVENT_RECORD, stream, "event_record");
    op->a = G->nev++;
    return op->a;
}

void gen_wait(gen *G, uint8_t stream, uint32_t ev)
{
    orr_op *op = emit(G, ORR_OP_STREAM_WAIT, stream, "stream_wait");
    op->a = ev;
}

void gen_host_sync(gen *G, const ctx *c, const char *name, uint32_t ev)
{
    orr_op *op = emit(G, ORR_OP_EVENT_SYNC, S_COMPUTE, name);
    tag_op(op, c);
    op->a = ev;
}

void gen_host_work(gen *G, const ctx *c, const char *name, int64_t dur_ps)
{
    orr_op *op = emit(G, ORR_OP_HOST, S_COMPUTE, name);
    tag_op(op, c);
    op->dur_ps = dur_ps;
}

/* A TP collective issued from the compute stream. Synchronous unless async: then it runs on the TP
 * side stream while the compute stream goes on; returns the event to wait on (or UINT32_MAX). Async
 * under tp_comm_overlap it is Transformer Engine's userbuffers, not NCCL (ORR_OPF_USERBUFFERS). */
static uint32_t tp_coll(gen *G, const ctx *c, const char *name, orr_coll_kind kind, double bytes, int async)
{
    if (G->T <= 1) return UINT32_MAX;
    if (!async) {
        gen_coll(G, c, S_COMPUTE, name, kind, ORR_ROLE_TP, bytes);
        return UINT32_MAX;
    }
    uint32_t e = gen_record(G, S_COMPUTE);
    gen_wait(G, S_TP, e);
    orr_op *op = gen_coll(G, c, S_TP, name, kind, ORR_ROLE_TP, bytes);
    if (G->s->tp_comm_overlap) op->flags |= ORR_OPF_USERBUFFERS;
    return gen_record(G, S_TP);
}

static void tp_join(gen *G, uint32_t ev)
{
    if (ev != UINT32_MAX) gen_wait(G, S_COMPUTE, ev);
}

/* ---- per-layer forward and backward ---- */

/* Tokens of one micro-batch on this rank: context parallelism splits the sequence over cp ranks. */
double gen_tokens(const gen *G) { return G->b * G->sq / G->C; }
/* Tokens held per rank by norms, dropout and residuals (split over TP with sequence parallelism). */
static double local_tokens(const gen *G) { return gen_tokens(G) / (G->sp ? G->T : 1); }
double gen_local_tokens(const gen *G) { return local_tokens(G); }
static double hidden_bytes(const gen *G) { return gen_tokens(G) * G->h * G->act_B; }
/* Bytes of a sequence-parallel all-gather that feeds a GEMM. Under fp8 (or fp4) training the blocks'
 * linear layers gather their input already cast, one byte per element (two elements per byte for
 * NVFP4): Transformer Engine casts ln_out, the input and the output gradient before
 * gather_along_first_dim (layernorm_linear.py, linear.py, grad_output_preprocess), torchao's
 * Float8ColwiseParallel casts the input before its redistribute and Float8RowwiseParallel the output
 * gradient, as TorchTitan applies them with float8 and TP. The reduce-scatters carry bf16 outputs,
 * and the LM head stays bf16. */
static double tp_gather_bytes(const gen *G)
{
    if (!orr_dtype_is_narrow(G->dt) || G->head_gemms) return hidden_bytes(G);
    return gen_tokens(G) * G->h * orr_dtype_bytes(G->dt);
}

/* A GEMM with the TP collective that feeds it (the f operator's all-gather before a column-parallel
 * GEMM, with SP) or consumes it (the g operator's all-reduce or reduce-scatter after a row-parallel
 * GEMM). With tp_comm_overlap they run concurrently, as Transformer Engine's userbuffers pipeline
 * them chunk by chunk; otherwise in data order on the compute stream. kind ALLGATHER without SP
 * means no collective. */
static void gemm_tp(gen *G, const ctx *c, const char *gname, double m, double n, double k, const char *cname,
                    orr_coll_kind kind)
{
    int comm_first = kind == ORR_COLL_ALLGATHER;
    if (G->T <= 1 || (comm_first && !G->sp)) {
        gemm(G, c, gname, m, n, k);
        return;
    }
    double bytes = comm_first ? tp_gather_bytes(G) : hidden_bytes(G);
    if (comm_first && G->rp->tp_overlaps_local_shard && !G->s->tp_comm_overlap) {
        /* the gather runs while the GEMM computes the local shard's rows; the other rows wait for it */
        uint32_t e = tp_coll(G, c, cname, kind, bytes, 1);
        gemm(G, c, gname, m / G->T, n, k);
        tp_join(G, e);
        gemm(G, c, gname, m - m / G->T, n, k);
    } else if (G->s->tp_comm_overlap) {
        uint32_t e = tp_coll(G, c, cname, kind, bytes, 1);
        gemm(G, c, gname, m, n, k);
        tp_join(G, e);
    } else if (comm_first) {
        gen_coll(G, c, S_COMPUTE, cname, kind, ORR_ROLE_TP, bytes);
        gemm(G, c, gname, m, n, k);
    } else {
        gemm(G, c, gname, m, n, k);
        gen_coll(G, c, S_COMPUTE, cname, kind, ORR_ROLE_TP, bytes);
    }
}

/* The g operator's forward collective: reduce-scatter with SP, else all-reduce. */
static orr_coll_kind g_fwd_kind(const gen *G) { return G->sp ? ORR_COLL_REDUCESCATTER : ORR_COLL_ALLREDUCE; }
orr_coll_kind gen_g_fwd_kind(const gen *G) { return g_fwd_kind(G); }
void gen_gemm_tp(gen *G, const ctx *c, const char *gname, double m, double n, double k, const char *cname,
                 orr_coll_kind kind)
{
    gemm_tp(G, c, gname, m, n, k, cname, kind);
}

/* ---- eager PyTorch (recipe.eager_unless_compiled, without options.compile) ----
 *
 * Eager mode runs every ATen op of the model's Python code as its own kernel, with fp32
 * intermediates where the code upcasts; torch.compile fuses each group into one kernel (the plain
 * norm(), rotary and swiglu ops below). The sequences are those of a Llama in PyTorch (TorchTitan's
 * model code of 2024-12):
 * RMSNorm `(x.float() * rsqrt(x.pow(2).mean(-1) + eps)).type_as(x) * weight`, rotary via
 * view_as_complex on fp32 copies, repeat_kv's expand+reshape copies for GQA, silu(w1 x) * w3 x.
 * Bytes per element are read + written as the ATen ops' tensors give them (bf16 2 B, fp32 4 B), read
 * off the op-by-op trace of tests/emu/torch/llama_titan.py under `orrery emulate` (torch 2.9.1,
 * Llama-3-8B shapes, AC none): per layer and token, forward 84h + 20(q + kv) + 8q + 10f bytes,
 * backward 206h + 24(q + kv) + 18f, h = hidden, q = heads x head_dim, kv = kv_heads x head_dim,
 * f = ffn (per TP rank). Per-row scalars (eps add, rsqrt, the backward's pow) are 8-12 B a row. */
static int eager(const gen *G) { return G->eager; }
static int eager_norm(const gen *G) { return eager(G) && G->s->model.rmsnorm && !G->rp->te_norm; }

/* An eager op of `bytes` as counted for bf16 activations; scaled for other activation widths (an
 * approximation for fp32 training, where the upcasts are no-ops). */
static void eop(gen *G, const ctx *c, const char *name, orr_op_class cls, double bytes, double n)
{
    gen_memop(G, c, name, cls, bytes * G->act_B / 2.0, n);
}

/* n elements in rows rows (a token's hidden state, or a head's query or key). */
static void eager_rmsnorm(gen *G, const ctx *c, int backward, double n, double rows)
{
    if (!backward) {
        eop(G, c, "rmsnorm_to_fp32", ORR_CLS_ELEMENTWISE, 6.0 * n, n);
        eop(G, c, "rmsnorm_pow", ORR_CLS_ELEMENTWISE, 8.0 * n, n);
        eop(G, c, "rmsnorm_mean", ORR_CLS_REDUCTION, 4.0 * n, n);
        eop(G, c, "rmsnorm_add_eps", ORR_CLS_ELEMENTWISE, 8.0 * rows, rows);
        eop(G, c, "rmsnorm_rsqrt", ORR_CLS_ELEMENTWISE, 8.0 * rows, rows);
        eop(G, c, "rmsnorm_mul", ORR_CLS_ELEMENTWISE, 8.0 * n, n);
        eop(G, c, "rmsnorm_to_bf16", ORR_CLS_ELEMENTWISE, 6.0 * n, n);
        eop(G, c, "rmsnorm_mul_weight", ORR_CLS_ELEMENTWISE, 4.0 * n, n);
        return;
    }
    eop(G, c, "rmsnorm_bwd_mul_normed", ORR_CLS_ELEMENTWISE, 6.0 * n, n);
    eop(G, c, "rmsnorm_bwd_mul_weight", ORR_CLS_ELEMENTWISE, 4.0 * n, n);
    eop(G, c, "rmsnorm_bwd_weight_sum", ORR_CLS_REDUCTION, 2.0 * n, n);
    eop(G, c, "rmsnorm_bwd_to_fp32", ORR_CLS_ELEMENTWISE, 6.0 * n, n);
    eop(G, c, "rmsnorm_bwd_mul_x", ORR_CLS_ELEMENTWISE, 12.0 * n, n);
    eop(G, c, "rmsnorm_bwd_mul_rsqrt", ORR_CLS_ELEMENTWISE, 8.0 * n, n);
    eop(G, c, "rmsnorm_bwd_sum", ORR_CLS_REDUCTION, 4.0 * n, n);
    eop(G, c, "rmsnorm_bwd_pow", ORR_CLS_ELEMENTWISE, 8.0 * rows, rows);
    eop(G, c, "rmsnorm_bwd_scale", ORR_CLS_ELEMENTWISE, 8.0 * rows, rows);
    eop(G, c, "rmsnorm_bwd_mul_rows", ORR_CLS_ELEMENTWISE, 12.0 * rows, rows);
    eop(G, c, "rmsnorm_bwd_div", ORR_CLS_ELEMENTWISE, 8.0 * n, n);
    eop(G, c, "rmsnorm_bwd_mul_2", ORR_CLS_ELEMENTWISE, 8.0 * n, n);
    eop(G, c, "rmsnorm_bwd_mul_x2", ORR_CLS_ELEMENTWISE, 12.0 * n, n);
    eop(G, c, "rmsnorm_bwd_add", ORR_CLS_ELEMENTWISE, 12.0 * n, n);
    eop(G, c, "rmsnorm_bwd_to_bf16", ORR_CLS_ELEMENTWISE, 6.0 * n, n);
}

static void norm_elems(gen *G, const ctx *c, const char *name, int backward, double n, double rows)
{
    if (eager_norm(G)) {
        eager_rmsnorm(G, c, backward, n, rows);
        return;
    }
    gen_memop(G, c, name, ORR_CLS_NORM, (backward ? 3.0 : 2.0) * n * G->act_B, (backward ? 8.0 : 5.0) * n);
}

static void norm(gen *G, const ctx *c, const char *name, int backward)
{
    norm_elems(G, c, name, backward, local_tokens(G) * G->h, local_tokens(G));
}

/* model.qk_norm: an RMSNorm over each head's query and key (Qwen3's q_norm and k_norm), on the
 * column-parallel QKV output (every token of the sequence, the rank's heads), before rotary. */
static void qk_norm(gen *G, const ctx *c, int backward)
{
    if (!G->s->model.qk_norm || G->mla) return;
    double rows = gen_tokens(G) * (G->a + G->g) / G->T;
    norm_elems(G, c, backward ? "qk_norm_bwd" : "qk_norm", backward, rows * G->hd, rows);
}

/* What qk_norm keeps for its backward, per token: its input (2 B an element of q and k) and one
 * fp32 reciprocal RMS per head row. */
static double qk_norm_saved_bytes(const gen *G)
{
    if (!G->s->model.qk_norm || G->mla) return 0;
    double rows = (G->a + G->g) / G->T;
    return (2.0 * rows * G->hd + 4.0 * rows) * gen_tokens(G);
}

/* recipe.rope_bf16, per tensor of n elements (bytes per element, the halves x1, x2 of the head dim
 * read and written at 1 B per element of the tensor each): forward x1 cos, x2 sin, their difference,
 * x2 cos, x1 sin, their sum (2 + 2 + 3 + 2 + 2 + 3) and the cat (4): 18 B in 7 kernels; backward
 * the difference's negated gradient (2), the four products' (8), the two halves' gradients summed
 * (3 + 3) and chunk's backward, a cat (4): 20 B in 8 kernels. */
static void rotary_bf16(gen *G, const ctx *c, const char *x, double n, int backward)
{
    static const char *const fwd[] = {"x1_cos", "x2_sin", "sub", "x2_cos", "x1_sin", "add", "cat"};
    static const double fwd_B[] = {2, 2, 3, 2, 2, 3, 4};
    static const char *const bwd[] = {"neg", "x1_cos", "x2_sin", "x2_cos", "x1_sin", "sum_x1", "sum_x2", "cat"};
    static const double bwd_B[] = {2, 2, 2, 2, 2, 3, 3, 4};
    const char *const *names = backward ? bwd : fwd;
    const double *B = backward ? bwd_B : fwd_B;
    int k = backward ? 8 : 7;
    for (int i = 0; i < k; i++) {
        char name[48];
        snprintf(name, sizeof name, "rotary_%s%s_%s", backward ? "bwd_" : "", x, names[i]);
        eop(G, c, name, ORR_CLS_ELEMENTWISE, B[i] * n, n / 2);
    }
}

/* Whether the model rotates q and k: the Llama-style models (RMSNorm) do; the GPT-style ones (LayerNorm)
 * add learned or no position embeddings. */
static int rope(const gen *G) { return G->s->model.rmsnorm; }

/* Rotary embeddings on q and k (Llama-style models): one fused kernel, or eagerly per tensor an fp32
 * copy (6 B), the complex multiply (8 B) and the cast back (6 B), forward and backward alike; with
 * GQA repeat_kv copies k and v out to all heads (4 B per element of q each), and the backward sums
 * the copies' gradients back (2 B per element of q and of kv each). */
static void rotary(gen *G, const ctx *c, int backward)
{
    if (!rope(G)) return;
    double M = gen_tokens(G), t = G->T, q = M * G->a * G->hd / t, kv = M * G->g * G->hd / t;
    if (!eager(G)) {
        gen_memop(G, c, backward ? "rotary_bwd" : "rotary", ORR_CLS_ELEMENTWISE, 2.0 * (q + kv) * G->act_B,
                  3.0 * (q + kv));
        return;
    }
    if (G->rp->rope_bf16) {
        rotary_bf16(G, c, "q", q, backward);
        rotary_bf16(G, c, "k", kv, backward);
        return;
    }
    if (backward && G->g < G->a) {
        eop(G, c, "repeat_kv_grad_sum_k", ORR_CLS_REDUCTION, 2.0 * (q + kv), q);
        eop(G, c, "repeat_kv_grad_sum_v", ORR_CLS_REDUCTION, 2.0 * (q + kv), q);
    }
    eop(G, c, backward ? "rotary_bwd_k_to_fp32" : "rotary_k_to_fp32", ORR_CLS_ELEMENTWISE, 6.0 * kv, kv);
    eop(G, c, backward ? "rotary_bwd_k_mul" : "rotary_k_mul", ORR_CLS_ELEMENTWISE, 8.0 * kv, 6.0 * kv);
    eop(G, c, backward ? "rotary_bwd_k_to_bf16" : "rotary_k_to_bf16", ORR_CLS_ELEMENTWISE, 6.0 * kv, kv);
    eop(G, c, backward ? "rotary_bwd_q_to_fp32" : "rotary_q_to_fp32", ORR_CLS_ELEMENTWISE, 6.0 * q, q);
    eop(G, c, backward ? "rotary_bwd_q_mul" : "rotary_q_mul", ORR_CLS_ELEMENTWISE, 8.0 * q, 6.0 * q);
    eop(G, c, backward ? "rotary_bwd_q_to_bf16" : "rotary_q_to_bf16", ORR_CLS_ELEMENTWISE, 6.0 * q, q);
    if (!backward && G->g < G->a) {
        eop(G, c, "repeat_kv_k", ORR_CLS_ELEMENTWISE, 4.0 * q, q);
        eop(G, c, "repeat_kv_v", ORR_CLS_ELEMENTWISE, 4.0 * q, q);
    }
}

/* The MLP activation: GeLU, or SwiGLU silu(x W1) * (x W3); eagerly silu (4 B) and the product (6 B)
 * per element, in the backward the two products and silu_backward (6 B each). */
static void mlp_act(gen *G, const ctx *c, int backward)
{
    double fl = gen_tokens(G) * G->f / G->T;
    int unfused = !G->s->bias_activation_fusion; /* Megatron's MLP without bias_activation_fusion */
    if (unfused && !G->gated) { /* the bias added (6 B), then F.gelu (4 B; backward 6) */
        if (G->s->model.bias && !backward) eop(G, c, "mlp_bias_add", ORR_CLS_ELEMENTWISE, 6.0 * fl, fl);
        eop(G, c, backward ? "gelu_bwd" : "gelu", ORR_CLS_ELEMENTWISE, (backward ? 6.0 : 4.0) * fl, 8.0 * fl);
        return;
    }
    if ((eager(G) || unfused) && G->gated) { /* unfused: glu() in mlp.py, chunk then silu and product */
        if (!backward) {
            eop(G, c, "silu", ORR_CLS_ELEMENTWISE, 4.0 * fl, 4.0 * fl);
            eop(G, c, "swiglu_mul", ORR_CLS_ELEMENTWISE, 6.0 * fl, fl);
        } else {
            eop(G, c, "swiglu_bwd_mul_up", ORR_CLS_ELEMENTWISE, 6.0 * fl, fl);
            eop(G, c, "swiglu_bwd_mul_gate", ORR_CLS_ELEMENTWISE, 6.0 * fl, fl);
            eop(G, c, "silu_bwd", ORR_CLS_ELEMENTWISE, 6.0 * fl, 6.0 * fl);
        }
        return;
    }
    if (!backward)
        gen_memop(G, c, G->gated ? "swiglu" : "gelu", ORR_CLS_ELEMENTWISE, (G->gated ? 3.0 : 2.0) * fl * G->act_B,
                  8.0 * fl);
    else
        gen_memop(G, c, G->gated ? "swiglu_bwd" : "gelu_bwd", ORR_CLS_ELEMENTWISE,
                  (G->gated ? 5.0 : 3.0) * fl * G->act_B, 10.0 * fl);
}

/* Eager backward of separate projections sharing an input (TorchTitan's wq/wk/wv, w1/w3): autograd
 * adds their input gradients, 6 B per element of the (unsplit) hidden each. */
static void eager_grad_adds(gen *G, const ctx *c, const char *name, int adds)
{
    if (!eager(G) || !G->s->model.rmsnorm) return;
    double n = gen_tokens(G) * G->h;
    for (int i = 0; i < adds; i++) eop(G, c, name, ORR_CLS_ELEMENTWISE, 6.0 * n, n);
}

static void residual(gen *G, const ctx *c, const char *name)
{
    double n = local_tokens(G) * G->h;
    if (eager(G)) /* a plain add, no dropout mask */
        gen_memop(G, c, name, ORR_CLS_ELEMENTWISE, 3.0 * n * G->act_B, n);
    else
        gen_memop(G, c, name, ORR_CLS_ELEMENTWISE, 3.0 * n * G->act_B + n, 3.0 * n);
}

/* recipe.sp_keeps_gathered: DTensor sequence parallelism without async TP redistributes each norm
 * output from sequence-sharded to replicated before the column-parallel matmuls (wq/wk/wv, w1/w3),
 * and autograd saves the matmul input, i.e. the all-gathered tensor, for the weight gradient; the
 * backward needs no second all-gather (otherwise the shard is kept and re-gathered);
 * tests/emu/torch/tp_saved.py shows the two gathered (full-sequence) tensors among the saved ones
 * under `orrery emulate`. With async TP (torch.compile's micro-pipelined all-gather matmul) the
 * gathered tensor is not kept: TorchTitan's own 70B rows use 4.3 GiB less with it (T4 of
 * torchtitan.csv), about the two gathered norm outputs of the layer being recomputed (2 x 2 GiB). */
static int dtensor_sp_keeps_gathered(const gen *G)
{
    return G->rp->sp_keeps_gathered && G->sp && G->T > 1 && !G->s->tp_comm_overlap;
}

/* What PyTorch autograd keeps per layer in a Llama block (bf16; per token; TP shards
 * q, kv and f; SP shards the rest):
 *   none, eager:    norm inputs and outputs 8h (the outputs all-gathered, h each instead of h/t, when
 *                   dtensor_sp_keeps_gathered); rotary's fp32 copies of q and k 4(q + kv) (none with
 *                   recipe.rope_bf16: its products save cos and sin only; none without rope); bf16 q, k,
 *                   v 2(q + 2kv); attention output 2q; w1, w3 outputs, silu output and the product 8f
 *   none, compiled: the fused rotary and SwiGLU keep bf16 only: 8h + 2(q + 2kv) + 2q + 4f + 2f
 *   selective (per-op SAC: every other matmul output, the attention output, the block input):
 *                   2h + (q + 2kv + 2h + 2f) + 2q
 *   full:           the block input 2h */
double gen_autograd_layer_bytes(const gen *G, orr_recompute rc)
{
    double t = G->T, q = G->a * G->hd / t, kv = G->g * G->hd / t, f = G->f / t, h = G->h;
    double hs = G->sp ? h / t : h;
    double norms = 4.0 * hs + 4.0 * (dtensor_sp_keeps_gathered(G) ? h : hs); /* inputs, outputs */
    double per_token;
    if (rc == ORR_RECOMPUTE_FULL) per_token = 2.0 * hs;
    else if (rc == ORR_RECOMPUTE_SELECTIVE) per_token = 2.0 * hs + (q + 2.0 * kv + 2.0 * hs + 2.0 * f) + 2.0 * q;
    else if (G->s->compile) per_token = norms + 2.0 * (q + 2.0 * kv) + 2.0 * q + 6.0 * f;
    else per_token = norms + (G->rp->rope_bf16 || !rope(G) ? 0.0 : 4.0 * (q + kv)) + 2.0 * (q + 2.0 * kv) + 2.0 * q +
                     8.0 * f;
    /* an ungated MLP (fc1, its activation, fc2): eager, fc1's output and the activation's, 4f where
     * the gated one keeps 8f; compiled or per-op, one up projection less */
    if (!G->gated) per_token -= rc == ORR_RECOMPUTE_FULL ? 0.0 : rc == ORR_RECOMPUTE_NONE && !G->s->compile ? 4.0 * f : 2.0 * f;
    return per_token * gen_tokens(G);
}

/* Bytes a layer keeps under recomputation rc: the recipe's, and qk_norm's unless the layer is
 * recomputed whole, or per op (which re-runs what is not a matmul output). */
static double layer_saved(const gen *G, orr_recompute rc)
{
    int qk = rc == ORR_RECOMPUTE_NONE || (rc == ORR_RECOMPUTE_SELECTIVE && !G->rp->per_op_sac);
    return G->rp->layer_saved_bytes(G, rc) + (qk ? qk_norm_saved_bytes(G) : 0);
}

uint32_t gen_rc_modules(const gen *G, orr_recompute rc)
{
    if (rc != ORR_RECOMPUTE_SELECTIVE || G->rp->per_op_sac) return 0;
    return G->s->recompute_modules ? G->s->recompute_modules : ORR_RCM_CORE_ATTN;
}

/* What layer `layer` keeps under recomputation rc in the activation buffer of its forward: the
 * recipe's layer, less the dense MLP's part in an MoE layer (whose own is moe_layer_saved_bytes). */
static double layer_kept_bytes(const gen *G, uint32_t layer, orr_recompute rc)
{
    return layer_saved(G, rc) - moe_layer_dense_mlp_bytes(G, layer, rc);
}

/* Bytes a recomputed layer re-creates for its backward (all it would keep minus what it kept). */
static double layer_recompute_bytes(const gen *G, uint32_t layer)
{
    orr_recompute rc = gen_layer_rc(G, layer);
    if (rc == ORR_RECOMPUTE_NONE) return 0;
    double full = layer_kept_bytes(G, layer, ORR_RECOMPUTE_NONE) + moe_layer_saved_bytes(G, layer, ORR_RECOMPUTE_NONE);
    double kept = layer_kept_bytes(G, layer, rc) + moe_layer_saved_bytes(G, layer, rc);
    return full > kept ? full - kept : 0;
}

/* Gradient temporaries alive during one layer's backward: the gradients of the MLP's widest
 * intermediate (both halves when gated) and of the layer output. */
static double layer_grad_temp_bytes(const gen *G)
{
    return gen_tokens(G) * G->act_B * (G->f * (G->gated ? 2.0 : 1.0) / G->T + 2.0 * G->h / (G->sp ? G->T : 1.0));
}

/* Bytes an fp8 cast moves per element of bf16 input. Per-tensor and rowwise scaling (torchao's
 * Float8Linear as TorchTitan uses it, Transformer Engine alike): a read for the amax, a read and a
 * one-byte write for the scaled cast and a one-byte transposed copy for the other GEMM that uses it,
 * 6 B, as torch.compile (or TE's fused cast-transpose) leaves them. Blockwise (Transformer Engine's
 * Float8BlockScaling): each block's scale comes from the block itself, so one kernel reads the input
 * once and writes both orientations, 4 B. */
double gen_fp8_cast_B(const gen *G) { return G->s->fp8_recipe == ORR_FP8_BLOCKWISE ? 4.0 : 6.0; }

/* Float8 training: before each fp8 GEMM its operands are cast (gen_fp8_cast_B per element). Forward:
 * the inputs of QKV (shared by wq/wk/wv), of the output projection, of the up projections (shared)
 * and of the down projection, and the layer's weights (2 B per element:
 * the transposed copy only when FSDP all-gathers them already in fp8). Backward: the gradients of
 * every projection's output. Attention and the LM head stay in bf16. */
static double layer_params_local(const gen *G, uint32_t layer);
static void fp8_casts(gen *G, const ctx *c, int backward)
{
    if (!orr_dtype_is_narrow(G->dt)) return;
    int moe = moe_is_moe_layer(G, c->layer); /* an MoE layer's MLP casts its own (moe.c) */
    double M = gen_tokens(G), t = G->T, q = G->a * G->hd / t, kv = G->g * G->hd / t, f = moe ? 0.0 : G->f / t;
    double up = G->gated ? 2.0 * f : f, mlp_h = moe ? 0.0 : G->h, B = gen_fp8_cast_B(G);
    if (!backward) {
        double in = M * (G->h + q + mlp_h + f);
        gen_memop(G, c, "fp8_cast_inputs", ORR_CLS_ELEMENTWISE, B * in, 3.0 * in);
        double wts = layer_params_local(G, c->layer);
        gen_memop(G, c, "fp8_cast_weights", ORR_CLS_ELEMENTWISE, (G->s->fp8_allgather ? 2.0 : B) * wts, 3.0 * wts);
    } else {
        double out = M * (q + 2.0 * kv + G->h + up + mlp_h);
        gen_memop(G, c, "fp8_cast_grads", ORR_CLS_ELEMENTWISE, B * out, 3.0 * out);
    }
}

/* A dense layer's MLP forward: FC1 (with SP, its input all-gathered), the activation, FC2 (its
 * output reduced or reduce-scattered over TP). */
static void dense_mlp_fwd(gen *G, const ctx *c)
{
    double M = gen_tokens(G), t = G->T;
    gemm_tp(G, c, "fc1_gemm", M, G->f * (G->gated ? 2.0 : 1.0) / t, G->h, "tp_allgather_mlp", ORR_COLL_ALLGATHER);
    mlp_act(G, c, 0);
    gemm_tp(G, c, "fc2_gemm", M, G->h, G->f / t, "tp_mlp_out", g_fwd_kind(G));
}

static void layer_fwd(gen *G, const ctx *c)
{
    double M = gen_tokens(G), t = G->T;
    if (G->rp->layer_extra_ops) G->rp->layer_extra_ops(G, c, 0);
    fp8_casts(G, c, 0);
    norm(G, c, "input_norm", 0);
    if (G->mla) mla_qkv(G, c, 0);
    else
        gemm_tp(G, c, "qkv_gemm", M, (G->a + 2.0 * G->g) * G->hd / t, G->h, "tp_allgather_attn", ORR_COLL_ALLGATHER);
    qk_norm(G, c, 0);
    rotary(G, c, 0); /* Llama-style models (RMSNorm) use rotary embeddings on q and k */
    attention(G, c, 0);
    gemm_tp(G, c, "proj_gemm", M, G->h, G->attn_out / t, "tp_attn_out", g_fwd_kind(G));
    residual(G, c, "bias_dropout_add");
    norm(G, c, "post_attn_norm", 0);
    if (moe_is_moe_layer(G, c->layer)) moe_mlp(G, c, 0);
    else dense_mlp_fwd(G, c);
    residual(G, c, "bias_dropout_add");
}

/* Backward of a column-parallel linear (QKV or FC1): input-gradient GEMM, then the f operator's
 * backward collective (all-reduce, or reduce-scatter with SP, after re-gathering the input for the
 * weight gradient) asynchronously, overlapped with the weight-gradient GEMM. A recipe whose SP
 * kept the gathered input (dtensor_sp_keeps_gathered) does not re-gather. */
static void column_linear_bwd(gen *G, const ctx *c, const char *dgrad, const char *wgrad, double n_out)
{
    double M = gen_tokens(G);
    uint32_t ag = UINT32_MAX;
    if (G->sp && G->T > 1 && !dtensor_sp_keeps_gathered(G))
        ag = tp_coll(G, c, "tp_allgather_input", ORR_COLL_ALLGATHER, tp_gather_bytes(G), 1);
    gemm(G, c, dgrad, M, G->h, n_out);
    tp_join(G, ag);
    if (!G->sp && (G->rp->tp_bwd_allreduce_sync || !G->s->async_tp_allreduce)) { /* the f operator's backward,
                                                                                    * after the linear's */
        gemm(G, c, wgrad, n_out, G->h, M);
        tp_coll(G, c, "tp_allreduce_grad", ORR_COLL_ALLREDUCE, hidden_bytes(G), 0);
        return;
    }
    uint32_t e = tp_coll(G, c, G->sp ? "tp_reducescatter_grad" : "tp_allreduce_grad",
                         G->sp ? ORR_COLL_REDUCESCATTER : ORR_COLL_ALLREDUCE, hidden_bytes(G), 1);
    gemm(G, c, wgrad, n_out, G->h, M);
    tp_join(G, e);
}

static void layer_bwd(gen *G, const ctx *c)
{
    double M = gen_tokens(G), t = G->T;
    if (G->rp->layer_extra_ops) G->rp->layer_extra_ops(G, c, 1);
    fp8_casts(G, c, 1);
    residual(G, c, "bias_dropout_add_bwd");
    if (moe_is_moe_layer(G, c->layer)) {
        moe_mlp(G, c, 1);
    } else {
        /* the g operator's backward: with SP, the output gradient is all-gathered for the dgrad GEMM */
        gemm_tp(G, c, "fc2_dgrad", M, G->f / t, G->h, "tp_allgather_mlp_grad", ORR_COLL_ALLGATHER);
        gemm(G, c, "fc2_wgrad", G->f / t, G->h, M);
        mlp_act(G, c, 1);
        column_linear_bwd(G, c, "fc1_dgrad", "fc1_wgrad", G->f * (G->gated ? 2.0 : 1.0) / t);
        if (G->gated) eager_grad_adds(G, c, "w1_w3_input_grad_add", 1);
    }
    norm(G, c, "post_attn_norm_bwd", 1);
    residual(G, c, "bias_dropout_add_bwd");
    gemm_tp(G, c, "proj_dgrad", M, G->attn_out / t, G->h, "tp_allgather_attn_grad", ORR_COLL_ALLGATHER);
    gemm(G, c, "proj_wgrad", G->attn_out / t, G->h, M);
    /* Megatron's core_attn recompute re-runs the attention core, fused or not (attention.py's
     * _checkpointed_attention_forward); the per-op recipes' selective recompute the unfused one */
    orr_recompute lrc = gen_layer_rc(G, c->layer);
    int per_op_unfused = lrc == ORR_RECOMPUTE_SELECTIVE && G->rp->per_op_sac && G->s->attention == ORR_ATTN_UNFUSED;
    if ((gen_rc_modules(G, lrc) & ORR_RCM_CORE_ATTN) || per_op_unfused) {
        ctx rc = *c;
        rc.phase = ORR_PHASE_RECOMPUTE;
        attention(G, &rc, 0);
    }
    attention(G, c, 1);
    rotary(G, c, 1);
    qk_norm(G, c, 1);
    if (G->mla) mla_qkv(G, c, 1);
    else column_linear_bwd(G, c, "qkv_dgrad", "qkv_wgrad", (G->a + 2.0 * G->g) * G->hd / t);
    eager_grad_adds(G, c, "wq_wk_wv_input_grad_add", 2);
    norm(G, c, "input_norm_bwd", 1);
}

/* ---- embedding, head, loss ---- */

static void embedding_fwd(gen *G, const ctx *c)
{
    double n = gen_tokens(G) * G->h;
    gen_memop(G, c, "embedding_lookup", ORR_CLS_ELEMENTWISE, 2.0 * n * G->act_B, 0);
    /* vocab-parallel embedding: partial rows are summed over TP (reduce-scatter with SP) */
    uint32_t e = tp_coll(G, c, "tp_embedding", G->sp ? ORR_COLL_REDUCESCATTER : ORR_COLL_ALLREDUCE, hidden_bytes(G), 0);
    tp_join(G, e);
    if (!rope(G)) /* learned position embeddings */
        gen_memop(G, c, "position_embedding_add", ORR_CLS_ELEMENTWISE, 3.0 * local_tokens(G) * G->h * G->act_B, 0);
    residual(G, c, "embedding_dropout");
}

static void embedding_bwd(gen *G, const ctx *c)
{
    if (G->sp && G->T > 1)
        gen_coll(G, c, S_COMPUTE, "tp_embedding_grad", ORR_COLL_ALLGATHER, ORR_ROLE_TP, hidden_bytes(G));
    double n = gen_tokens(G) * G->h;
    gen_memop(G, c, "embedding_grad", ORR_CLS_ELEMENTWISE, 3.0 * n * G->act_B, n);
}

/* recipe.pp_keeps_outputs: torch.distributed.pipelining's last stage appends every
 * micro-batch's model output to output_chunks (stage.py forward_one_chunk) and keeps them until the
 * next step() clears them (clear_runtime_states); at the end of step() _merge_outputs concatenates
 * them into one more tensor of the same size, which the training loop drops. Seen under
 * `orrery emulate` (tests/emu/torch/pp_mem.py). */
int gen_pp_keeps_outputs(const gen *G) { return G->rp->pp_keeps_outputs && G->P > 1; }

/* Bytes of one micro-batch's model output, its logits (this rank's vocabulary shard) in the
 * activation dtype: the model's forward returns `self.output(h)` and the loss does the
 * fp32 upcast (`pred.flatten(0, 1).float()`) since e10cb949 (2024-10-22); before that the model
 * returned `.float()` logits, which only the pipelined last stage would keep longer (no
 * pipelined row of that time is published). */
static double model_output_bytes(const gen *G) { return gen_tokens(G) * G->vocab / G->T * G->act_B; }

/* The model output: a temporary of the loss, or kept by the pipeline's last stage. */
uint32_t gen_model_output_alloc(gen *G, const ctx *c)
{
    double bytes = model_output_bytes(G);
    if (!gen_pp_keeps_outputs(G)) return gen_mem_alloc(G, c, S_COMPUTE, "logits", bytes, ORR_MEM_TEMP);
    gen_mem_op(G, c, ORR_OP_ALLOC, S_COMPUTE, "pp_output_chunk", G->pp_out_base + c->mb, bytes, ORR_MEM_ACT);
    return G->pp_out_base + c->mb;
}

void gen_model_output_release(gen *G, const ctx *c, uint32_t buf)
{
    if (!gen_pp_keeps_outputs(G)) gen_mem_free(G, c, S_COMPUTE, buf);
}

/* Logits of one micro-batch on this rank (its vocabulary shard). */
static double logits_local(const gen *G) { return gen_tokens(G) * G->vocab / G->T; }

/* The eager PyTorch cross-entropy, per logit: the model output (2 B), the loss's fp32 copy (4) and
 * log-softmax's saved fp32 result (4) at once, 10 B at the peak; backward: the nll gradient 4 and the
 * log-softmax gradient 4, then the gradient in the activation dtype (2). */
void gen_loss_mem_fwd_eager(gen *G, const ctx *c)
{
    double logits = logits_local(G);
    uint32_t b = gen_model_output_alloc(G, c);
    uint32_t f = gen_mem_alloc(G, c, S_COMPUTE, "logits_fp32", logits * 4.0, ORR_MEM_TEMP);
    gen_mem_op(G, c, ORR_OP_ALLOC, S_COMPUTE, "loss_saved", G->head_base + c->mb, logits * 4.0, ORR_MEM_ACT);
    gen_mem_free(G, c, S_COMPUTE, f);
    gen_model_output_release(G, c, b);
}

void gen_loss_mem_bwd_eager(gen *G, const ctx *c)
{
    double logits = logits_local(G);
    uint32_t n = gen_mem_alloc(G, c, S_COMPUTE, "nll_grad", logits * 4.0, ORR_MEM_TEMP);
    uint32_t l = gen_mem_alloc(G, c, S_COMPUTE, "log_softmax_grad", logits * 4.0, ORR_MEM_TEMP);
    gen_mem_free(G, c, S_COMPUTE, n);
    gen_mem_free(G, c, S_COMPUTE, G->head_base + c->mb);
    G->head_tmp = gen_mem_alloc(G, c, S_COMPUTE, "logits_grad", logits * G->act_B, ORR_MEM_TEMP);
    gen_mem_free(G, c, S_COMPUTE, l);
}

/* A fused loss's backward: the logits gradient in the activation dtype, the saved tensor freed. */
void gen_loss_mem_bwd_plain(gen *G, const ctx *c)
{
    G->head_tmp = gen_mem_alloc(G, c, S_COMPUTE, "logits_grad", logits_local(G) * G->act_B, ORR_MEM_TEMP);
    gen_mem_free(G, c, S_COMPUTE, G->head_base + c->mb);
}

/* LM head and vocab-parallel cross-entropy, op by op over the b x s x vocab/tp logits: transpose
 * to contiguous (bf16 read + write), cast to fp32, max (all-reduced over TP), subtract the max in
 * place, exp in place, sum (all-reduced), and the softmax division kept for the backward:
 * 4 + 6 + 4 + 8 + 8 + 4 + 8 = 42 bytes per logit (Megatron's tensor_parallel/cross_entropy.py).
 * The loss's memory is the recipe's. */
static void head_fwd(gen *G, const ctx *c)
{
    double M = gen_tokens(G), vloc = G->vocab / G->T, logits = M * vloc, eb = G->act_B;
    norm(G, c, "final_norm", 0);
    /* recipe.keeps_head_input: autograd keeps the output projection's input, the final norm's
     * output, for the weight gradient; with SP the all-gathered one (ColwiseParallel(input_layouts=
     * Shard(1)): the mm saves the redistributed tensor; 2 B x tokens x h per rank under `orrery
     * emulate`) */
    if (G->rp->keeps_head_input)
        gen_mem_op(G, c, ORR_OP_ALLOC, S_COMPUTE, "lm_head_input", G->head_in_base + c->mb, M * G->h * eb, ORR_MEM_ACT);
    G->head_gemms = 1;
    gemm_tp(G, c, "lm_head_gemm", M, vloc, G->h, "tp_allgather_head", ORR_COLL_ALLGATHER);
    G->head_gemms = 0;
    G->rp->loss_mem_fwd(G, c);
    if (G->rp->loss_bf16) { /* log-softmax reads and writes the logits, nll gathers a row each */
        gen_memop(G, c, "log_softmax", ORR_CLS_REDUCTION, logits * 2.0 * eb, 5.0 * logits);
        gen_memop(G, c, "nll_loss", ORR_CLS_ELEMENTWISE, M * 16.0, M);
        return;
    }
    gen_memop(G, c, "logits_transpose", ORR_CLS_ELEMENTWISE, logits * 2.0 * eb, 0);
    gen_memop(G, c, "ce_cast_fp32", ORR_CLS_ELEMENTWISE, logits * (eb + 4.0), logits);
    gen_memop(G, c, "ce_max", ORR_CLS_REDUCTION, logits * 4.0, logits);
    if (G->T > 1) gen_coll(G, c, S_COMPUTE, "tp_ce_max", ORR_COLL_ALLREDUCE, ORR_ROLE_TP, M * 4.0);
    gen_memop(G, c, "ce_sub_max", ORR_CLS_ELEMENTWISE, logits * 8.0, logits);
    gen_memop(G, c, "ce_exp", ORR_CLS_ELEMENTWISE, logits * 8.0, logits);
    gen_memop(G, c, "ce_sum", ORR_CLS_REDUCTION, logits * 4.0, logits);
    if (G->T > 1) gen_coll(G, c, S_COMPUTE, "tp_ce_sum", ORR_COLL_ALLREDUCE, ORR_ROLE_TP, M * 4.0 * 2.0);
    gen_memop(G, c, "ce_softmax_div", ORR_CLS_ELEMENTWISE, logits * 8.0, logits);
    gen_memop(G, c, "ce_loss", ORR_CLS_ELEMENTWISE, M * 16.0, M * 4.0);
}

/* Backward: scale the saved softmax in place (8 B), cast to the activation dtype (4 + 2 B) and
 * transpose back (2 x 2 B), then the head GEMMs. */
static void head_bwd(gen *G, const ctx *c)
{
    double M = gen_tokens(G), vloc = G->vocab / G->T, logits = M * vloc, eb = G->act_B;
    if (G->rp->loss_bf16) { /* nll's gradient (zeros, one value a row), then log-softmax's */
        gen_memop(G, c, "nll_loss_bwd", ORR_CLS_ELEMENTWISE, logits * eb, 0);
        gen_memop(G, c, "log_softmax_bwd", ORR_CLS_ELEMENTWISE, logits * 3.0 * eb, 3.0 * logits);
    } else {
        gen_memop(G, c, "ce_grad", ORR_CLS_ELEMENTWISE, logits * 8.0, 2.0 * logits);
        gen_memop(G, c, "ce_grad_cast", ORR_CLS_ELEMENTWISE, logits * (4.0 + eb), logits);
        gen_memop(G, c, "logits_grad_transpose", ORR_CLS_ELEMENTWISE, logits * 2.0 * eb, 0);
    }
    G->rp->loss_mem_bwd(G, c);
    G->head_gemms = 1;
    column_linear_bwd(G, c, "lm_head_dgrad", "lm_head_wgrad", vloc);
    G->head_gemms = 0;
    if (G->rp->keeps_head_input) gen_mem_free(G, c, S_COMPUTE, G->head_in_base + c->mb);
    gen_mem_free(G, c, S_COMPUTE, G->head_tmp);
    G->head_tmp = UINT32_MAX;
    norm(G, c, "final_norm_bwd", 1);
}

/* ---- model chunks, gradient buckets ---- */

/* Model chunk c of stage p is virtual stage c*P + p (Megatron's and TorchTitan's "loop" layout); the
 * virtual stages hold consecutive layers in that order, as many as orr_pp_split gives each. */
static uint32_t chunk_layers(const gen *G, uint32_t c) { return G->stage_layers[c * G->P + G->pp_r]; }
/* Global index of the first layer of model chunk c on this rank's stage. */
static uint32_t chunk_first_layer(const gen *G, uint32_t c) { return G->stage_first[c * G->P + G->pp_r]; }
static int chunk_has_embedding(const gen *G, uint32_t c) { return G->pp_r == 0 && c == 0; }

/* TorchTitan's apply_ac with an integer selective_ac_option N wraps a block in checkpoint_wrapper when
 * ptd_checkpoint_wrapper._count, a class attribute counted up over every block it is applied to in the
 * process (the rank's model parts in order, each's layers in order), is a multiple of N. */
orr_recompute gen_layer_rc(const gen *G, uint32_t layer)
{
    if (G->s->recompute != ORR_RECOMPUTE_SELECTIVE || !G->s->sac_every) return G->s->recompute;
    uint64_t count = 0;
    for (uint32_t c = 0; c < G->V; c++) {
        uint32_t first = chunk_first_layer(G, c), n = chunk_layers(G, c);
        if (layer >= first && layer - first < n) {
            count += layer - first + 1;
            break;
        }
        count += n;
    }
    return count % G->s->sac_every == 0 ? ORR_RECOMPUTE_FULL : ORR_RECOMPUTE_NONE;
}
static int chunk_has_head(const gen *G, uint32_t c) { return G->pp_r == G->P - 1 && c == G->V - 1; }

/* Parameters of a layer per rank reduced over the data-parallel group: a dense layer's split by tp, or
 * an MoE layer's but its routed experts (reduced over the expert-data-parallel group, moe.c). */
static double layer_params_local(const gen *G, uint32_t layer)
{
    if (moe_is_moe_layer(G, layer)) return moe_layer_dense_params_local(G, layer);
    return orr_model_layer_params(&G->s->model) / G->T;
}
/* The GEMM weights among them (QKV, output projection, up and down projections): what fp8 casts. */
static double layer_linear_params_local(const gen *G)
{
    return (G->h * (G->a + 2.0 * G->g) * G->hd + G->a * G->hd * G->h + G->h * G->f * (G->gated ? 3.0 : 2.0)) / G->T;
}
static double embedding_params_local(const gen *G)
{
    return G->vocab * G->h / G->T + (rope(G) ? 0.0 : G->sq * G->h);
}
/* The LM head's own parameters on the last stage: untied, or a tied copy when PP > 1. */
static double head_params_local(const gen *G)
{
    int own = !G->s->model.tied_embeddings || G->P > 1;
    return (own ? G->vocab * G->h / G->T : 0.0) + 2.0 * G->h;
}

double gen_rank_root_params(const gen *G)
{
    double p = 0;
    for (uint32_t c = 0; c < G->V; c++) {
        if (chunk_has_embedding(G, c)) p += embedding_params_local(G);
        if (chunk_has_head(G, c)) p += head_params_local(G);
    }
    return p;
}

double gen_rank_params(const gen *G)
{
    double p = 0;
    for (uint32_t c = 0; c < G->V; c++) {
        for (uint32_t l = 0; l < chunk_layers(G, c); l++) p += layer_params_local(G, chunk_first_layer(G, c) + l);
        if (chunk_has_embedding(G, c)) p += embedding_params_local(G);
        if (chunk_has_head(G, c)) p += head_params_local(G);
    }
    return p + moe_rank_expert_params(G);
}

/* Buckets of chunk c in the order the backward pass fills them (Megatron DDP: parameters in
 * reverse registration order; a bucket closes once it holds bucket_params). Element e of the
 * backward order: 0 = head (if any), then layers last to first, then the embedding (if any). */
static void build_buckets(gen *G)
{
    G->nbk = 0;
    for (uint32_t c = 0; c < G->V; c++) {
        bucket cur;
        memset(&cur, 0, sizeof cur);
        cur.chunk = c;
        cur.first_layer = UINT32_MAX;
        uint32_t first = chunk_first_layer(G, c);
        int n_el = (int)chunk_layers(G, c) + 2;
        for (int e = 0; e < n_el; e++) {
            double p = 0;
            if (e == 0) {
                if (!chunk_has_head(G, c)) continue;
                p = head_params_local(G);
                cur.has_head = 1;
            } else if (e == n_el - 1) {
                if (!chunk_has_embedding(G, c)) continue;
                p = embedding_params_local(G);
                cur.has_embedding = 1;
            } else {
                uint32_t layer = first + chunk_layers(G, c) - (uint32_t)e;
                p = layer_params_local(G, layer);
                cur.first_layer = layer; /* backward order: layers arrive highest first */
                /* --fp8-param-gather: Megatron keeps the blocks' linear weights as FP8 tensors and
                 * its distributed optimizer all-gathers those bytes (1 B per element); norms,
                 * embedding and head stay bf16. An MoE layer's dense linear weights are its
                 * attention projections (its experts are gathered, or not, with their own group). */
                if (G->s->fp8_param_gather && orr_dtype_is_narrow(G->dt)) {
                    double lin = orr_model_layer_is_moe(&G->s->model, layer)
                                     ? orr_model_attn_params(&G->s->model) / G->T
                                     : layer_linear_params_local(G);
                    if (lin > p) lin = p;
                    cur.gather_bytes -= lin * (G->act_B - orr_dtype_bytes(G->dt));
                }
            }
            cur.params += p;
            cur.gather_bytes += p * G->act_B;
            if (cur.params >= G->s->bucket_params) {
                ORR_PUSH(G->bk, G->nbk, G->capbk, cur);
                memset(&cur, 0, sizeof cur);
                cur.chunk = c;
                cur.first_layer = UINT32_MAX;
            }
        }
        if (cur.params > 0) ORR_PUSH(G->bk, G->nbk, G->capbk, cur);
    }
}

/* Whether micro-batch mb is the last of its pipeline schedule step (of the iteration, unless lbs
 * splits it into several steps): where the gradient sync and the reshard happen. */
static int last_mb(const gen *G, uint32_t mb) { return mb % G->fnmb == G->fnmb - 1; }

/* The bucket (index) that closes after element e of chunk c's backward order, or -1. */
static int bucket_closing(const gen *G, uint32_t c, int is_head, int is_emb, uint32_t layer)
{
    for (size_t i = 0; i < G->nbk; i++) {
        const bucket *b = &G->bk[i];
        if (b->chunk != c) continue;
        /* the last element a bucket receives in backward order is its embedding, else its lowest
         * layer, else its head */
        if (b->has_embedding) {
            if (is_emb) return (int)i;
        } else if (b->first_layer != UINT32_MAX) {
            if (!is_head && !is_emb && layer == b->first_layer) return (int)i;
        } else if (b->has_head && is_head) {
            return (int)i;
        }
    }
    return -1;
}

static void dp_reduce_bucket(gen *G, const bucket *b, int overlap)
{
    if (G->R <= 1 || G->rp->shards_params) return;
    ctx c = {ORR_PHASE_BWD, ORR_NO_LAYER, ORR_NO_MB, b->chunk};
    orr_coll_kind k = G->dist ? ORR_COLL_REDUCESCATTER : ORR_COLL_ALLREDUCE;
    const char *name = G->dist ? "dp_grad_reducescatter" : "dp_grad_allreduce";
    if (!overlap) {
        gen_coll(G, &c, S_COMPUTE, name, k, ORR_ROLE_DP, b->params * G->grad_B);
        return;
    }
    uint32_t e = gen_record(G, S_COMPUTE);
    gen_wait(G, S_DP, e);
    gen_coll(G, &c, S_DP, name, k, ORR_ROLE_DP, b->params * G->grad_B);
}

static void after_bwd_element(gen *G, uint32_t c, uint32_t mb, int is_head, int is_emb, uint32_t layer)
{
    if (!last_mb(G, mb) || !G->s->overlap_grad_reduce) return;
    int i = bucket_closing(G, c, is_head, is_emb, layer);
    if (i >= 0) dp_reduce_bucket(G, &G->bk[i], 1);
}

/* Per-op selective checkpointing (recipe.per_op_sac) re-runs, before a block's backward, what it did not
 * save: the norms, rotary and SwiGLU elementwise ops and every other matmul (about half of the
 * block's projection GEMMs: here K, output and up projections). */
static void sac_recompute(gen *G, const ctx *c)
{
    double M = gen_tokens(G), t = G->T;
    norm(G, c, "input_norm", 0);
    gemm(G, c, "k_gemm", M, G->g * G->hd / t, G->h);
    rotary(G, c, 0);
    gemm(G, c, "proj_gemm", M, G->h, G->attn_out / t);
    if (eager(G)) residual(G, c, "residual_add");
    norm(G, c, "post_attn_norm", 0);
    gemm(G, c, "fc_up_gemm", M, G->f / t, G->h);
    mlp_act(G, c, 0);
    if (eager(G)) residual(G, c, "residual_add");
}

/* Megatron's selective recompute (gen_rc_modules) re-runs, before a layer's backward, what its modules
 * discarded or checkpointed: the norms that are modules of their own (MLA's input norm, an MoE
 * layer's pre-MLP norm), MLA's up projections and rotary, a dense layer's MLP with its fused norm and
 * its TP collectives, and an MoE layer's parts (moe.c). The attention core is re-run in layer_bwd,
 * just before its backward. */
static void module_recompute(gen *G, const ctx *c)
{
    uint32_t m = gen_rc_modules(G, G->s->recompute);
    int moe = moe_is_moe_layer(G, c->layer);
    if ((m & ORR_RCM_LAYERNORM) && G->mla) norm(G, c, "input_norm", 0);
    if ((m & ORR_RCM_LAYERNORM) && moe) norm(G, c, "post_attn_norm", 0);
    if ((m & ORR_RCM_MLA_UP_PROJ) && G->mla) {
        mla_up_proj(G, c);
        rotary(G, c, 0);
    }
    if ((m & ORR_RCM_MLP) && !moe) {
        norm(G, c, "post_attn_norm", 0);
        dense_mlp_fwd(G, c);
    }
    moe_module_recompute(G, c, m);
}

/* ---- sharding units (recipe.shards_params): each block, and the root (embedding, final norm,
 * output), gathered before use and reduce-scattered after its backward ---- */

/* Unit ids of the rank: chunk c's root is chunk_base[c] + c, its layer li the ids after it. */
static uint32_t unit_id(const gen *G, uint32_t c, int root, uint32_t li)
{
    return G->chunk_base[c] + c + (root ? 0 : 1 + li);
}
static uint32_t rank_units(const gen *G) { return G->rank_layers + G->V; }

/* A unit's parameters per rank before sharding, those sharded over the shard group: a block's all but
 * its routed experts (layer li of chunk c), the root's embedding, final norm and output. */
static double unit_params(const gen *G, uint32_t c, int root, uint32_t li)
{
    if (!root) return layer_params_local(G, chunk_first_layer(G, c) + li);
    double p = 0;
    if (chunk_has_embedding(G, c)) p += embedding_params_local(G);
    if (chunk_has_head(G, c)) p += head_params_local(G);
    return p;
}

/* A block's routed experts per rank before sharding (an MoE layer's; 0 for the root and a dense
 * layer): their own FSDP unit over the expert-data-parallel group (TorchTitan fully_shard-s
 * moe.experts on the dp_shard_mod_ep mesh), gathered and reduced with their block. */
static double unit_expert_params(const gen *G, uint32_t c, int root, uint32_t li)
{
    return root || G->plain_experts ? 0 : moe_layer_expert_params_local(G, chunk_first_layer(G, c) + li);
}

/* Bytes per parameter in a unit's all-gather: bf16, or fp8 for a block's with --fp8-allgather (FSDP2) or
 * --fp8-param-gather (Megatron-FSDP's FP8 compute buffer). */
static double unit_gather_B(const gen *G, int root)
{
    return (G->s->fp8_allgather || G->s->fp8_param_gather) && !root ? 1.0 : G->act_B;
}

/* How many units the all-gathers run ahead of the one computing (recipe.prefetch_elems): at least one, or
 * as many as fit the recipe's budget of parameters, counted by the rank's average unsharded block. */
static uint32_t prefetch_units(const gen *G)
{
    if (!(G->rp->prefetch_elems > 0) || !G->rank_layers) return 1;
    double avg = 0;
    for (uint32_t c = 0; c < G->V; c++)
        for (uint32_t li = 0; li < chunk_layers(G, c); li++) avg += layer_params_local(G, chunk_first_layer(G, c) + li);
    avg /= G->rank_layers;
    double n = avg > 0 ? ceil(G->rp->prefetch_elems / avg) : 1;
    return n < 1 ? 1 : n > G->rank_layers ? G->rank_layers : (uint32_t)n;
}

/* The unit's all-gather (if it is not gathered): on the all-gather stream, after the forward of unit
 * after_unit has finished (prefetch_units + 1 before it: FSDP2 keeps about two unsharded blocks in
 * flight); the compute stream waits for it. */
static void unit_gather(gen *G, uint32_t c, int root, uint32_t li, orr_phase ph, uint32_t after_unit)
{
    double p = unit_params(G, c, root, li), pe = unit_expert_params(G, c, root, li), B = unit_gather_B(G, root);
    if (!G->rp->shards_params || p + pe <= 0) return;
    uint32_t u = unit_id(G, c, root, li);
    if (G->unit_buf[u] == UINT32_MAX && G->unit_cp_buf[u] == UINT32_MAX) {
        ctx cx = {ph, root ? ORR_NO_LAYER : chunk_first_layer(G, c) + li, ORR_NO_MB, c};
        if (after_unit != UINT32_MAX && G->unit_fwd_ev[after_unit] != UINT32_MAX)
            gen_wait(G, S_AG, G->unit_fwd_ev[after_unit]);
        G->unit_buf[u] = gen_mem_alloc(G, &cx, S_AG, "fsdp_allgather_output", (p + pe) * B, ORR_MEM_COMM);
        if (G->S > 1) coll_in(G, &cx, S_AG, "fsdp_allgather", ORR_COLL_ALLGATHER, G->g_shard, &G->seq_shard, p * B);
        if (pe > 0 && G->EDP > 1) /* the experts' unit, prefetched with its block */
            coll_in(G, &cx, S_AG, "fsdp_allgather_experts", ORR_COLL_ALLGATHER, G->g_edp, &G->seq_edp, pe * B);
        G->unit_ag_ev[u] = gen_record(G, S_AG);
    }
}

/* The routed experts' parameter tensors of an MoE layer (GroupedExperts' w1, w3 when gated, w2;
 * each of all the rank's local experts), elements per rank before FSDP sharding; how many (0 for a
 * dense layer). */
static uint32_t layer_expert_elems(const gen *G, uint32_t layer, double *out)
{
    double e = moe_layer_expert_params_local(G, layer);
    uint32_t n = e > 0 ? (G->gated ? 3 : 2) : 0;
    for (uint32_t i = 0; i < n; i++) out[i] = e / n;
    return n;
}

/* The parameter tensors of one layer, elements per rank before FSDP sharding, in model order: wq,
 * wk, wv, wo, w1, w3 (gated), w2, then the rest (the two RMSNorm weights, or one tensor for the
 * norms and biases of other models); an MoE layer's: its attention projections (as one), router and
 * shared experts (as one), the norms, then its routed experts (layer_expert_elems, the last
 * *nexp). Returns how many (at most 9), the first *nmats of them the dense linear weights. */
static uint32_t layer_param_elems(const gen *G, uint32_t layer, double *out, uint32_t *nmats, uint32_t *nexp)
{
    uint32_t n = 0;
    *nexp = 0;
    if (moe_is_moe_layer(G, layer)) {
        const orr_model *m = &G->s->model;
        double attn = orr_model_attn_params(m) / G->T, mlp = orr_model_router_params(m) +
                                                            orr_model_shared_expert_params(m) / G->T;
        double rest = layer_params_local(G, layer) - attn - mlp;
        out[n++] = attn;
        out[n++] = mlp;
        *nmats = n;
        if (rest > 0) out[n++] = rest;
        *nexp = layer_expert_elems(G, layer, out + n);
        return n + *nexp;
    }
    double t = G->T, q = G->a * G->hd, kv = G->g * G->hd, h = G->h, f = G->f;
    const double mats[7] = {h * q / t, h * kv / t, h * kv / t, q * h / t, h * f / t, G->gated ? h * f / t : 0, f * h / t};
    double lsum = 0;
    for (int i = 0; i < 7; i++) {
        lsum += mats[i];
        if (mats[i] > 0) out[n++] = mats[i];
    }
    *nmats = n;
    double rest = layer_params_local(G, layer) - lsum;
    if (rest > 0 && G->s->model.rmsnorm) {
        out[n++] = rest / 2.0;
        out[n++] = rest / 2.0;
    } else if (rest > 0) {
        out[n++] = rest;
    }
    return n;
}

/* The parameter tensors of the LM head's chunk after the last layer, elements per rank: the final
 * norm (2h, as head_params_local counts it) and the output projection when it has its own;
 * returns how many (1 or 2). */
static uint32_t head_param_elems(const gen *G, double *out)
{
    uint32_t n = 0;
    out[n++] = 2.0 * G->h;
    if (head_params_local(G) > 2.0 * G->h) out[n++] = head_params_local(G) - 2.0 * G->h;
    return n;
}

/* Bytes of each unsharded parameter of a unit (bf16; fp8 linear weights with --fp8-allgather), in
 * model order; out has room for 9. */
static uint32_t unit_param_parts(const gen *G, uint32_t c, int root, uint32_t li, double *out)
{
    double B = G->act_B;
    uint32_t n = 0, nmats = 0, nexp = 0;
    if (root) {
        if (chunk_has_embedding(G, c)) out[n++] = embedding_params_local(G);
        if (chunk_has_head(G, c)) n += head_param_elems(G, out + n);
        for (uint32_t i = 0; i < n; i++) out[i] *= B;
        return n;
    }
    n = layer_param_elems(G, chunk_first_layer(G, c) + li, out, &nmats, &nexp);
    if (G->plain_experts) n -= nexp, nexp = 0; /* not copied out: the plain parameters are used */
    for (uint32_t i = 0; i < n; i++) out[i] *= (i < nmats || i >= n - nexp) && G->s->fp8_allgather ? 1.0 : B;
    return n;
}

/* The compute stream waits for the unit's all-gather. With recipe.copies_out_params (FSDP2's
 * foreach_all_gather_copy_out)
 * then gives every parameter its own unsharded tensor, allocated on the compute stream among the
 * activations, and frees the all-gather output (seen under `orrery emulate`, torch 2.9.1,
 * tests/emu/torch/llama_titan.py: nine tensors per Llama block on the default stream, the output
 * freed on the all-gather stream); otherwise the parameters are views of the gathered buffer. */
static void unit_wait(gen *G, uint32_t c, int root, uint32_t li)
{
    if (!G->rp->shards_params || unit_params(G, c, root, li) + unit_expert_params(G, c, root, li) <= 0) return;
    uint32_t u = unit_id(G, c, root, li);
    if (G->unit_ag_ev[u] != UINT32_MAX) gen_wait(G, S_COMPUTE, G->unit_ag_ev[u]);
    if (G->unit_buf[u] == UINT32_MAX || !G->rp->copies_out_params) return;
    ctx cx = {ORR_PHASE_OTHER, root ? ORR_NO_LAYER : chunk_first_layer(G, c) + li, ORR_NO_MB, c};
    double part[9];
    uint32_t n = unit_param_parts(G, c, root, li, part);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = gen_mem_alloc(G, &cx, S_COMPUTE, "fsdp_unsharded_param", part[i], ORR_MEM_COMM);
        if (i == 0) G->unit_cp_buf[u] = b;
    }
    G->unit_cp_n[u] = n;
    gen_mem_free(G, &cx, S_COMPUTE, G->unit_buf[u]);
    G->unit_buf[u] = UINT32_MAX;
}

/* Frees what the unit holds unsharded: its copied-out parameters, or an all-gather output that no
 * one waited for. */
static void unit_release(gen *G, const ctx *cx, uint32_t u)
{
    gen_mem_free(G, cx, S_COMPUTE, G->unit_buf[u]);
    G->unit_buf[u] = UINT32_MAX;
    if (G->unit_cp_buf[u] != UINT32_MAX)
        for (uint32_t i = 0; i < G->unit_cp_n[u]; i++) gen_mem_free(G, cx, S_COMPUTE, G->unit_cp_buf[u] + i);
    G->unit_cp_buf[u] = UINT32_MAX;
    G->unit_cp_n[u] = 0;
}

static void unit_reshard(gen *G, uint32_t c, int root, uint32_t li)
{
    uint32_t u = unit_id(G, c, root, li);
    if (!G->rp->shards_params || (G->unit_buf[u] == UINT32_MAX && G->unit_cp_buf[u] == UINT32_MAX)) return;
    unit_release(G, NULL, u);
    G->unit_ag_ev[u] = UINT32_MAX;
}

/* Whether a sharded recipe's gradient sync waits for the last micro-batch: always under
 * torch.distributed.pipelining (its schedule turns sync off for every backward but the last), and
 * without PP where the recipe turns it off itself (recipe.defers_grad_sync: AutoModel's get_sync_ctx).
 * TorchTitan's train loop without PP runs forward_backward_step per gradient-accumulation step with
 * sync on (torchtitan/trainer.py at b5bcd76), so every micro-batch reduce-scatters. */
static int defers_sync(const gen *G) { return G->fnmb > 1 && (G->P > 1 || G->rp->defers_grad_sync); }

/* recipe.unit_grads: FSDP2 with gradient accumulation and deferred sync (defers_sync) accumulates
 * each unit's unsharded gradients in the reduce dtype (FSDPParam.to_accumulated_grad_if_needed: fp32
 * under TorchTitan's mixed_precision_reduce) from the unit's first backward of the step until its
 * reduce-scatter in the last micro-batch, which copies them into the reduce-scatter input and drops
 * them (seen under `orrery emulate`, tests/emu/torch/pp_mem.py). Otherwise they are the
 * reduce-scatter input itself, every micro-batch. */
static void unit_accumulate(gen *G, const ctx *cx, uint32_t c, int root, uint32_t li)
{
    double p = unit_params(G, c, root, li) + unit_expert_params(G, c, root, li);
    if (!G->rp->shards_params || !G->rp->unit_grads || !defers_sync(G) || p <= 0) return;
    uint32_t u = unit_id(G, c, root, li);
    if (G->unit_acc_buf[u] == UINT32_MAX)
        G->unit_acc_buf[u] = gen_mem_alloc(G, cx, S_COMPUTE, "fsdp_accumulated_grads", p * G->grad_B, ORR_MEM_GRAD);
}

/* After a unit's backward in the last micro-batch (in every one without defers_sync): cast the
 * gradients to the reduce dtype (grad_B, the recipe's) and reduce-scatter them on the reduce-scatter stream, the block's over the shard
 * group and its routed experts' over the expert-data-parallel group; with replicas (HSDP) all-reduce
 * the shards over them. The input buffer is freed when the next reduce-scatter is issued (one is
 * kept in flight). */
static void unit_reduce(gen *G, uint32_t c, int root, uint32_t li, uint32_t mb)
{
    double p = unit_params(G, c, root, li), pe = unit_expert_params(G, c, root, li), rb = G->grad_B;
    if (!G->rp->shards_params || p + pe <= 0 || (defers_sync(G) && !last_mb(G, mb))) return;
    ctx cx = {ORR_PHASE_BWD, root ? ORR_NO_LAYER : chunk_first_layer(G, c) + li, mb, c};
    uint32_t buf = gen_mem_alloc(G, &cx, S_COMPUTE, "fsdp_reduce_scatter_input", (p + pe) * rb, ORR_MEM_COMM);
    gen_memop(G, &cx, "fsdp_grad_cast", ORR_CLS_ELEMENTWISE, (p + pe) * (G->act_B + rb), p + pe);
    uint32_t u = unit_id(G, c, root, li);
    gen_mem_free(G, &cx, S_COMPUTE, G->unit_acc_buf[u]);
    G->unit_acc_buf[u] = UINT32_MAX;
    uint32_t e = gen_record(G, S_COMPUTE);
    gen_wait(G, S_DP, e);
    if (G->S > 1) coll_in(G, &cx, S_DP, "fsdp_reducescatter", ORR_COLL_REDUCESCATTER, G->g_shard, &G->seq_shard, p * rb);
    if (pe > 0 && G->EDP > 1)
        coll_in(G, &cx, S_DP, "fsdp_reducescatter_experts", ORR_COLL_REDUCESCATTER, G->g_edp, &G->seq_edp, pe * rb);
    if (G->D / (G->S / G->C) > 1)
        coll_in(G, &cx, S_DP, "hsdp_allreduce", ORR_COLL_ALLREDUCE, G->g_rep, &G->seq_rep,
                p * rb / G->S + pe * rb / G->EDP);
    if (G->rp->unit_grads && G->unit_grad_buf[u] == UINT32_MAX)
        G->unit_grad_buf[u] = gen_mem_alloc(G, &cx, S_DP, "fsdp_sharded_grads",
                                            G->shard_B * p / G->S + G->shard_B * pe / G->EDP,
                                            ORR_MEM_GRAD);
    gen_mem_free(G, &cx, S_COMPUTE, G->rs_buf_pending);
    G->rs_buf_pending = buf;
}

/* Parameters stay gathered through the backward of every micro-batch but the last with PP (FSDP2
 * under torch.distributed.pipelining); otherwise they are resharded after each backward. */
static void unit_after_bwd(gen *G, uint32_t c, int root, uint32_t li, uint32_t mb)
{
    unit_reduce(G, c, root, li, mb);
    int keep = root && G->rp->keeps_root_gathered;
    if (last_mb(G, mb) || (orr_spec_reshard_after_forward(G->s) && !keep)) unit_reshard(G, c, root, li);
}

/* ---- forward and backward steps of one micro-batch through one model chunk ---- */

static uint32_t act_buf(const gen *G, uint32_t c, uint32_t li, uint32_t mb)
{
    return mb * G->rank_layers + G->chunk_base[c] + li;
}

/* With the distributed optimizer's overlapped parameter gather, the first forward of each part of a
 * chunk waits for the all-gather of the bucket that holds its parameters. what: 0 = embedding,
 * 1 = a layer, 2 = the head. */
static void wait_param_gather(gen *G, uint32_t c, uint32_t mb, int what, uint32_t layer)
{
    if (mb != 0 || !G->dist || !G->overlap_pg || G->R <= 1) return;
    for (size_t i = 0; i < G->nbk; i++) {
        const bucket *b = &G->bk[i];
        if (b->chunk != c) continue;
        int has_layers = b->first_layer != UINT32_MAX;
        int hit = what == 0 ? b->has_embedding
                : what == 1 ? (has_layers && b->first_layer == layer)
                            : (b->has_head && !has_layers && !b->has_embedding);
        if (hit) gen_wait(G, S_COMPUTE, b->ag_event);
    }
}

/* Block li's forward all-gather, which waits for the forward of the block ahead + 1 before it (FSDP2 keeps
 * two units in flight). */
static void fwd_gather(gen *G, uint32_t c, uint32_t li, uint32_t ahead)
{
    unit_gather(G, c, 0, li, ORR_PHASE_FWD, li > ahead ? unit_id(G, c, 0, li - ahead - 1) : UINT32_MAX);
}

static void fwd_step(gen *G, uint32_t c, uint32_t mb)
{
    ctx cx = {ORR_PHASE_FWD, ORR_NO_LAYER, mb, c};
    unit_gather(G, c, 1, 0, ORR_PHASE_FWD, UINT32_MAX);
    unit_wait(G, c, 1, 0);
    if (chunk_has_embedding(G, c)) {
        wait_param_gather(G, c, mb, 0, 0);
        embedding_fwd(G, &cx);
    }
    uint32_t first = chunk_first_layer(G, c), ahead = G->prefetch_units;
    for (uint32_t li = 0; li < chunk_layers(G, c); li++) {
        cx.layer = first + li;
        fwd_gather(G, c, li, ahead);
        for (uint32_t j = 1; j < ahead && li == 0 && j < chunk_layers(G, c); j++) /* the first window at once */
            unit_gather(G, c, 0, j, ORR_PHASE_FWD, UINT32_MAX);
        if (G->rp->fwd_prefetch_ep && G->EP > 1 && li + 1 < chunk_layers(G, c)) /* the next block's, now */
            fwd_gather(G, c, li + 1, ahead);
        unit_wait(G, c, 0, li);
        wait_param_gather(G, c, mb, 1, cx.layer);
        layer_fwd(G, &cx);
        gen_mem_op(G, &cx, ORR_OP_ALLOC, S_COMPUTE, "alloc_activations", act_buf(G, c, li, mb),
                   layer_kept_bytes(G, cx.layer, gen_layer_rc(G, cx.layer)), ORR_MEM_ACT);
        moe_save_activations(G, &cx, G->moe_buf_base + act_buf(G, c, li, mb));
        if (G->rp->shards_params) {
            G->unit_fwd_ev[unit_id(G, c, 0, li)] = gen_record(G, S_COMPUTE);
            /* the last block is not resharded (its backward comes next) */
            if (orr_spec_reshard_after_forward(G->s) && cx.layer != G->L - 1) unit_reshard(G, c, 0, li);
        }
    }
    cx.layer = ORR_NO_LAYER;
    if (chunk_has_head(G, c)) {
        wait_param_gather(G, c, mb, 2, 0);
        head_fwd(G, &cx);
    }
    if (G->rp->shards_params && orr_spec_reshard_after_forward(G->s) && !chunk_has_head(G, c)) unit_reshard(G, c, 1, 0);
}

static void bwd_step(gen *G, uint32_t c, uint32_t mb)
{
    ctx cx = {ORR_PHASE_BWD, ORR_NO_LAYER, mb, c};
    int has_root = G->rp->shards_params && unit_params(G, c, 1, 0) > 0;
    if (has_root) {
        unit_gather(G, c, 1, 0, ORR_PHASE_BWD, UINT32_MAX);
        unit_wait(G, c, 1, 0);
    }
    if (has_root) unit_accumulate(G, &cx, c, 1, 0);
    if (chunk_has_head(G, c)) {
        head_bwd(G, &cx);
        after_bwd_element(G, c, mb, 1, 0, 0);
    }
    uint32_t first = chunk_first_layer(G, c), ahead = G->prefetch_units;
    for (uint32_t k = chunk_layers(G, c); k-- > 0;) {
        cx.layer = first + k;
        unit_gather(G, c, 0, k, ORR_PHASE_BWD, UINT32_MAX);
        for (uint32_t j = 1; j <= ahead && j <= k; j++) /* backward prefetch */
            unit_gather(G, c, 0, k - j, ORR_PHASE_BWD, UINT32_MAX);
        unit_wait(G, c, 0, k);
        uint32_t rbuf = UINT32_MAX;
        double rbytes = layer_recompute_bytes(G, cx.layer);
        if (rbytes > 0) rbuf = gen_mem_alloc(G, &cx, S_COMPUTE, "recomputed_activations", rbytes, ORR_MEM_ACT);
        orr_recompute lrc = gen_layer_rc(G, cx.layer);
        if (lrc == ORR_RECOMPUTE_FULL) {
            ctx rc = cx;
            rc.phase = ORR_PHASE_RECOMPUTE;
            layer_fwd(G, &rc);
        } else if (lrc == ORR_RECOMPUTE_SELECTIVE && G->rp->per_op_sac) {
            ctx rc = cx;
            rc.phase = ORR_PHASE_RECOMPUTE;
            sac_recompute(G, &rc);
        } else if (gen_rc_modules(G, lrc)) {
            ctx rc = cx;
            rc.phase = ORR_PHASE_RECOMPUTE;
            module_recompute(G, &rc);
        }
        uint32_t gbuf = gen_mem_alloc(G, &cx, S_COMPUTE, "activation_grads", layer_grad_temp_bytes(G), ORR_MEM_TEMP);
        unit_accumulate(G, &cx, c, 0, k);
        layer_bwd(G, &cx);
        gen_mem_free(G, &cx, S_COMPUTE, gbuf);
        gen_mem_free(G, &cx, S_COMPUTE, rbuf);
        gen_mem_op(G, &cx, ORR_OP_FREE, S_COMPUTE, "free_activations", act_buf(G, c, k, mb),
                   layer_kept_bytes(G, cx.layer, lrc), ORR_MEM_ACT);
        moe_free_activations(G, &cx, G->moe_buf_base + act_buf(G, c, k, mb));
        after_bwd_element(G, c, mb, 0, 0, cx.layer);
        if (last_mb(G, mb)) moe_expert_grad_reduce(G, &cx);
        unit_after_bwd(G, c, 0, k, mb);
    }
    cx.layer = ORR_NO_LAYER;
    if (chunk_has_embedding(G, c)) {
        embedding_bwd(G, &cx);
        after_bwd_element(G, c, mb, 0, 1, 0);
    }
    if (has_root) unit_after_bwd(G, c, 1, 0, mb);
    /* FSDP2's root post-backward callback with sync on and is_last_backward (every micro-batch
     * without defers_sync, which implies no PP): the compute stream waits for the last reduce-scatter
     * and its input is freed (FSDPState._root_post_backward_final_callback clears
     * reduce_scatter_state); the last micro-batch's is finish_grad_sync's. */
    if (G->rp->shards_params && !defers_sync(G) && !last_mb(G, mb) && G->rs_buf_pending != UINT32_MAX) {
        gen_wait(G, S_COMPUTE, gen_record(G, S_DP));
        gen_mem_free(G, &cx, S_COMPUTE, G->rs_buf_pending);
        G->rs_buf_pending = UINT32_MAX;
    }
    if (G->rp->after_backward) G->rp->after_backward(G, &cx);
}

/* ---- pipeline p2p ---- */

/* Bytes one rank sends to the next stage per micro-batch. With TP, each TP rank sends only its 1/tp
 * share: the scatter/gather optimisation of Narayanan et al. 2021 (Sec. 4.1); without SP the
 * receiver all-gathers the shares over NVLink (pp_gather), with SP the tensor is split anyway. */
static double pp_bytes(const gen *G) { return hidden_bytes(G) / G->T; }

static void pp_gather(gen *G, uint32_t tag)
{
    if (G->sp || G->T <= 1) return;
    ctx c = {tag == TAG_FWD ? ORR_PHASE_FWD : ORR_PHASE_BWD, ORR_NO_LAYER, ORR_NO_MB, 0};
    gen_coll(G, &c, S_COMPUTE, "pp_scatter_gather", ORR_COLL_ALLGATHER, ORR_ROLE_TP, hidden_bytes(G));
}

static void p2p(gen *G, int stream, orr_op_kind kind, uint32_t peer_pp, uint32_t tag, int batch_next)
{
    orr_op *op = emit(G, kind, stream, kind == ORR_OP_SEND ? (tag == TAG_FWD ? "pp_send_activation" : "pp_send_grad")
                                                               : (tag == TAG_FWD ? "pp_recv_activation" : "pp_recv_grad"));
    op->role = ORR_ROLE_PP;
    op->phase = tag == TAG_FWD ? ORR_PHASE_FWD : ORR_PHASE_BWD;
    op->a = grank(G, G->tp_r, G->dp_r, peer_pp);
    op->seq = tag;
    op->bytes = (uint64_t)pp_bytes(G);
    op->flags = batch_next ? ORR_OPF_BATCH_NEXT : 0;
}

/* A batched group of p2p ops (torch.distributed.batch_isend_irecv): up to four, any may be absent. */
typedef struct p2p_req {
    int on;
    orr_op_kind kind;
    uint32_t peer, tag;
} p2p_req;

/* Posts the batch's ops on `stream`, the last without ORR_OPF_BATCH_NEXT. */
static void p2p_post(gen *G, int stream, const p2p_req *r, int n)
{
    int last = -1;
    for (int i = 0; i < n; i++)
        if (r[i].on) last = i;
    for (int i = 0; i <= last; i++)
        if (r[i].on) p2p(G, stream, r[i].kind, r[i].peer, r[i].tag, i != last);
}

/* The receives' TP all-gathers (pp_gather), on the compute stream once the batch is done. */
static void p2p_gathers(gen *G, const p2p_req *r, int n)
{
    for (int i = 0; i < n; i++)
        if (r[i].on && r[i].kind == ORR_OP_RECV) pp_gather(G, r[i].tag);
}

/* The batch on the compute stream, then its receives' gathers. */
static void p2p_batch(gen *G, const p2p_req *r, int n)
{
    p2p_post(G, S_COMPUTE, r, n);
    p2p_gathers(G, r, n);
}

/* Megatron's overlap_p2p_comm: the batch posted on the pipeline stream once the compute stream has
 * produced what it sends; returns the event the step that needs its tensors waits for (UINT32_MAX:
 * nothing posted). The receiver's TP all-gather (pp_gather, without SP) stays on the compute stream
 * after that wait. */
static uint32_t p2p_async(gen *G, const p2p_req *r, int n)
{
    int any = 0;
    for (int i = 0; i < n; i++) any |= r[i].on;
    if (!any) return UINT32_MAX;
    gen_wait(G, S_PP, gen_record(G, S_COMPUTE));
    p2p_post(G, S_PP, r, n);
    return gen_record(G, S_PP);
}

/* Waits for a p2p_async batch, then runs its receives' TP all-gathers. */
static void p2p_join(gen *G, uint32_t *ev, const p2p_req *r, int n)
{
    if (*ev == UINT32_MAX) return;
    gen_wait(G, S_COMPUTE, *ev);
    *ev = UINT32_MAX;
    p2p_gathers(G, r, n);
}

static uint32_t prev_stage(const gen *G) { return (G->pp_r + G->P - 1) % G->P; }
static uint32_t next_stage(const gen *G) { return (G->pp_r + 1) % G->P; }

/* ---- Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm) ----
 *
 * combined_1f1b.py and schedule_chunk_1f1b / schedule_layer_1f1b: a forward step and a backward step
 * of other micro-batches run as one, layer by layer (forward layer i with the backward's i-th), on one
 * compute stream, their EP all-to-alls on one communication stream, so that each micro-batch's
 * token exchanges run under the other's compute. Both steps are generated as usual, then their ops
 * are cut at the EP all-to-alls and re-issued in Megatron's order. Per layer pair (F forward, B
 * backward; R0 compute, R1 first exchange, R2 middle, R3 last exchange, R4 compute after it):
 * F.R3 of the previous layer (the combine) | B.R4 of the previous layer (router and attention
 * backward) | B.R0, B.R1 (the combine's gradient exchange) | F.R4 of the previous layer, F.R0
 * (attention, router, permute), F.R1 (the dispatch) | B.R2 (the experts' backward), B.R3 (the
 * dispatch's gradient exchange) | F.R2 (the experts). Then the backward's tail, the forward's tail.
 * A compute piece waits for its own micro-batch's exchange before it, never the other's. */

typedef struct a2a_layer {
    size_t r[6]; /* R0 = [r[0], r[1]), R1 = [r[1], r[2]), ... R4 = [r[4], r[5]) */
} a2a_layer;

typedef struct a2a_step {
    const orr_op *ops;
    uint32_t counts_group; /* the tp_ep group: its collective (the routing counts' all-gather) is compute's */
    size_t pre_end;    /* ops before the first layer (embedding; the head's backward) */
    a2a_layer *layer;
    size_t nlayer;
    uint32_t pending;  /* the event of this step's last exchange, not yet waited for (UINT32_MAX: none) */
} a2a_step;

/* A token exchange: an EP collective issued on the compute stream, other than the routing counts' all-gather
 * over the tp_ep group, which Megatron runs inside pre_dispatch_computation on the compute stream. */
static int ep_exchange_op(const a2a_step *st, const orr_op *op)
{
    return op->kind == ORR_OP_COLL && op->role == ORR_ROLE_EP && op->stream == S_COMPUTE && op->a != st->counts_group;
}

/* Cuts ops [0, n) of one step into the part before its first layer and its layers, each at its first
 * and last run of EP exchanges. An op of no layer belongs to the layer before it. */
static void a2a_cut(const gen *G, a2a_step *st, const orr_op *ops, size_t n)
{
    st->ops = ops;
    st->counts_group = G->g_tpep;
    st->layer = orr_xcalloc(n ? n : 1, sizeof *st->layer);
    st->nlayer = 0;
    st->pending = UINT32_MAX;
    size_t i = 0;
    while (i < n && ops[i].layer == ORR_NO_LAYER) i++;
    st->pre_end = i;
    while (i < n) {
        size_t a = i;
        uint16_t l = ops[i].layer;
        while (i < n && (ops[i].layer == l || ops[i].layer == ORR_NO_LAYER)) i++;
        a2a_layer *L = &st->layer[st->nlayer++];
        size_t first = i, first_end = i, last = i, last_end = i;
        for (size_t j = a; j < i; j++) {
            if (!ep_exchange_op(st, &ops[j])) continue;
            size_t k = j;
            while (k < i && ep_exchange_op(st, &ops[k])) k++;
            if (first == i) first = j, first_end = k;
            else last = j, last_end = k;
            j = k - 1;
        }
        size_t r[6] = {a, first, first_end, last, last_end, i};
        memcpy(L->r, r, sizeof r);
    }
}

/* Re-issues ops [a, b) of a step: its EP exchanges on the EP stream after the compute issued before
 * them, the next compute op of the step after the exchange. */
static void a2a_emit(gen *G, a2a_step *st, size_t a, size_t b)
{
    for (size_t i = a; i < b; i++) {
        if (ep_exchange_op(st, &st->ops[i])) {
            gen_wait(G, S_EP, gen_record(G, S_COMPUTE));
            for (; i < b && ep_exchange_op(st, &st->ops[i]); i++) {
                orr_op op = st->ops[i];
                op.stream = S_EP;
                orr_rank_push(G->rk, &op);
            }
            st->pending = gen_record(G, S_EP);
            i--;
            continue;
        }
        if (st->pending != UINT32_MAX) {
            gen_wait(G, S_COMPUTE, st->pending);
            st->pending = UINT32_MAX;
        }
        orr_rank_push(G->rk, &st->ops[i]);
    }
}

static void a2a_emit_region(gen *G, a2a_step *st, size_t layer, int region)
{
    if (layer < st->nlayer) a2a_emit(G, st, st->layer[layer].r[region], st->layer[layer].r[region + 1]);
}

static void a2a_emit_layers(gen *G, a2a_step *st, size_t from)
{
    for (size_t l = from; l < st->nlayer; l++) a2a_emit(G, st, st->layer[l].r[0], st->layer[l].r[5]);
}

static void combined_step(gen *G, uint32_t fc, uint32_t fmb, uint32_t bc, uint32_t bmb)
{
    if (fc == bc && fmb == bmb) { /* a micro-batch's own forward and backward: not independent (the
                                   * schedules' extra warm-up micro-batch keeps this from happening) */
        fwd_step(G, fc, fmb);
        bwd_step(G, bc, bmb);
        return;
    }
    orr_rank *rk = G->rk;
    size_t s0 = rk->nops;
    fwd_step(G, fc, fmb);
    size_t s1 = rk->nops;
    bwd_step(G, bc, bmb);
    size_t s2 = rk->nops;
    if (G->over_budget) return; /* the job is refused anyway */
    orr_op *ops = orr_xmalloc((s2 - s0 ? s2 - s0 : 1) * sizeof *ops);
    memcpy(ops, rk->ops + s0, (s2 - s0) * sizeof *ops);
    rk->nops = s0;
    a2a_step f, b;
    a2a_cut(G, &f, ops, s1 - s0);
    a2a_cut(G, &b, ops + (s1 - s0), s2 - s1);
    a2a_emit(G, &f, 0, f.pre_end);
    a2a_emit(G, &b, 0, b.pre_end);
    size_t o = f.nlayer < b.nlayer ? f.nlayer : b.nlayer;
    for (size_t i = 0; i < o; i++) {
        if (i > 0) {
            a2a_emit_region(G, &f, i - 1, 3);
            a2a_emit_region(G, &b, i - 1, 4);
        }
        a2a_emit_region(G, &b, i, 0);
        a2a_emit_region(G, &b, i, 1);
        if (i > 0) a2a_emit_region(G, &f, i - 1, 4);
        a2a_emit_region(G, &f, i, 0);
        a2a_emit_region(G, &f, i, 1);
        a2a_emit_region(G, &b, i, 2);
        a2a_emit_region(G, &b, i, 3);
        a2a_emit_region(G, &f, i, 2);
    }
    if (o > 0) a2a_emit_region(G, &b, o - 1, 4);
    a2a_emit_layers(G, &b, o);
    if (b.pending != UINT32_MAX) gen_wait(G, S_COMPUTE, b.pending);
    if (o > 0) {
        a2a_emit_region(G, &f, o - 1, 3);
        a2a_emit_region(G, &f, o - 1, 4);
    }
    a2a_emit_layers(G, &f, o);
    if (f.pending != UINT32_MAX) gen_wait(G, S_COMPUTE, f.pending);
    free(f.layer);
    free(b.layer);
    free(ops);
}

/* Megatron's forward_backward_pipelining_without_interleaving. */
static void schedule_1f1b(gen *G)
{
    int first = G->pp_r == 0, last = G->pp_r == G->P - 1;
    uint32_t warm = G->P - G->pp_r - 1;
    if (warm > G->fnmb) warm = G->fnmb;
    uint32_t rem = G->fnmb - warm, fmb = G->mb0, bmb = G->mb0;
    p2p_req rf = {!first, ORR_OP_RECV, prev_stage(G), TAG_FWD}, sf = {!last, ORR_OP_SEND, next_stage(G), TAG_FWD};
    p2p_req rb = {!last, ORR_OP_RECV, next_stage(G), TAG_BWD}, sb = {!first, ORR_OP_SEND, prev_stage(G), TAG_BWD};
    for (uint32_t i = 0; i < warm; i++) {
        p2p_batch(G, &rf, 1);
        fwd_step(G, 0, fmb++);
        p2p_batch(G, &sf, 1);
    }
    if (rem > 0) p2p_batch(G, &rf, 1);
    for (uint32_t i = 0; i < rem; i++) {
        fwd_step(G, 0, fmb++);
        p2p_req a[2] = {sf, rb};
        p2p_batch(G, a, 2);
        bwd_step(G, 0, bmb++);
        if (i == rem - 1) {
            p2p_batch(G, &sb, 1);
        } else {
            p2p_req b2[2] = {sb, rf};
            p2p_batch(G, b2, 2);
        }
    }
    for (uint32_t i = 0; i < warm; i++) {
        p2p_batch(G, &rb, 1);
        bwd_step(G, 0, bmb++);
        p2p_batch(G, &sb, 1);
    }
}

static uint32_t pymod(int64_t x, int64_t n) { return (uint32_t)(((x % n) + n) % n); }

/* Megatron's get_model_chunk_id and the micro-batch of virtual micro-batch k (of the schedule step
 * that starts at micro-batch mb0). */
static uint32_t chunk_id(const gen *G, int64_t k, int forward)
{
    uint32_t c = pymod(k, (int64_t)G->P * G->V) / G->P;
    return forward ? c : G->V - 1 - c;
}
static uint32_t mb_id(const gen *G, int64_t k)
{
    return G->mb0 + (uint32_t)(k / ((int64_t)G->P * G->V)) * G->P + pymod(k, G->P);
}

/* Megatron's forward_backward_pipelining_with_interleaving. With overlap_p2p_comm (recipe.overlaps_p2p
 * and options.overlap_p2p_comm, Megatron-LM's default with virtual stages) the warm-up and steady
 * state post each forward's send/recv and each backward's as their own asynchronous batch (isend /
 * irecv, batch_p2p_comm off), waited for just before the next forward (backward): a forward's
 * transfers run under the backward that follows it and the other way round; the cool-down is
 * synchronous. Without it every step's transfers are one batch on the compute stream. */
static void schedule_interleaved(gen *G)
{
    uint32_t P = G->P, V = G->V, p = G->pp_r;
    int64_t total = (int64_t)G->fnmb * V;
    int64_t warm = (int64_t)(P - p - 1) * 2 + (int64_t)(V - 1) * P;
    int combined = G->s->moe_a2a_overlap; /* combined_1f1b_schedule_for_interleaved_pipelining */
    if (combined) warm += 1;              /* get_pp_rank_microbatches: one more warm-up micro-batch */
    int all_warm = 0;
    if (warm >= total) {
        warm = total;
        all_warm = 1;
    }
    int64_t rem = total - warm;
    uint32_t prev = prev_stage(G), next = next_stage(G);
#define LAST_VIRTUAL(c) (p == P - 1 && (c) == V - 1)
#define FIRST_VIRTUAL(c) (p == 0 && (c) == 0)
    int ov = G->rp->overlaps_p2p && G->s->overlap_p2p_comm;
    uint32_t fev = UINT32_MAX, bev = UINT32_MAX; /* the pending forward and backward batches */
    p2p_req fr[2] = {{0}}, br[2] = {{0}};
    p2p_req r0 = {p != 0, ORR_OP_RECV, prev, TAG_FWD};
    p2p_batch(G, &r0, 1);
    for (int64_t k = 0; k < warm; k++) {
        uint32_t c = chunk_id(G, k, 1);
        p2p_join(G, &fev, fr, 2);
        fwd_step(G, c, mb_id(G, k));
        uint32_t nc = chunk_id(G, k + 1, 1);
        int recv_prev = !(p == 0 && nc == 0) && k != total - 1;
        int send = !LAST_VIRTUAL(c);
        if (ov) {
            fr[0] = (p2p_req){send, ORR_OP_SEND, next, TAG_FWD};
            fr[1] = (p2p_req){recv_prev, ORR_OP_RECV, prev, TAG_FWD};
            fev = p2p_async(G, fr, 2);
            if (k == warm - 1 && !all_warm) {
                br[0] = (p2p_req){0, ORR_OP_SEND, prev, TAG_BWD};
                br[1] = (p2p_req){p != P - 1, ORR_OP_RECV, next, TAG_BWD};
                bev = p2p_async(G, br, 2);
            }
        } else if (k == warm - 1 && !all_warm) {
            p2p_req a[3] = {{send, ORR_OP_SEND, next, TAG_FWD}, {recv_prev, ORR_OP_RECV, prev, TAG_FWD},
                            {p != P - 1, ORR_OP_RECV, next, TAG_BWD}};
            p2p_batch(G, a, 3);
        } else {
            p2p_req a[2] = {{send, ORR_OP_SEND, next, TAG_FWD}, {recv_prev, ORR_OP_RECV, prev, TAG_FWD}};
            p2p_batch(G, a, 2);
        }
    }
    for (int64_t k = 0; k < rem; k++) {
        int64_t fk = k + warm, bk = k;
        uint32_t fc = chunk_id(G, fk, 1), bc = chunk_id(G, bk, 0);
        int recv_prev = 1, recv_next = 1;
        if (p == 0 && chunk_id(G, fk - (int64_t)(P - 1), 1) == V - 1) recv_prev = 0;
        if (p == P - 1 && chunk_id(G, bk - (int64_t)(P - 1), 0) == 0) recv_next = 0;
        if (k == rem - 1) recv_prev = 0;
        if (ov && combined) {
            p2p_join(G, &fev, fr, 2);
            p2p_join(G, &bev, br, 2);
            combined_step(G, fc, mb_id(G, fk), bc, mb_id(G, bk));
            fr[0] = (p2p_req){!LAST_VIRTUAL(fc), ORR_OP_SEND, next, TAG_FWD};
            fr[1] = (p2p_req){recv_prev, ORR_OP_RECV, prev, TAG_FWD};
            fev = p2p_async(G, fr, 2);
            br[0] = (p2p_req){!FIRST_VIRTUAL(bc), ORR_OP_SEND, prev, TAG_BWD};
            br[1] = (p2p_req){recv_next, ORR_OP_RECV, next, TAG_BWD};
            bev = p2p_async(G, br, 2);
            continue;
        }
        if (ov) {
            p2p_join(G, &fev, fr, 2);
            fwd_step(G, fc, mb_id(G, fk));
            fr[0] = (p2p_req){!LAST_VIRTUAL(fc), ORR_OP_SEND, next, TAG_FWD};
            fr[1] = (p2p_req){recv_prev, ORR_OP_RECV, prev, TAG_FWD};
            fev = p2p_async(G, fr, 2);
            p2p_join(G, &bev, br, 2);
            bwd_step(G, bc, mb_id(G, bk));
            br[0] = (p2p_req){!FIRST_VIRTUAL(bc), ORR_OP_SEND, prev, TAG_BWD};
            br[1] = (p2p_req){recv_next, ORR_OP_RECV, next, TAG_BWD};
            bev = p2p_async(G, br, 2);
            continue;
        }
        if (combined) {
            combined_step(G, fc, mb_id(G, fk), bc, mb_id(G, bk));
        } else {
            fwd_step(G, fc, mb_id(G, fk));
            bwd_step(G, bc, mb_id(G, bk));
        }
        p2p_req a[4] = {{!LAST_VIRTUAL(fc), ORR_OP_SEND, next, TAG_FWD}, {!FIRST_VIRTUAL(bc), ORR_OP_SEND, prev, TAG_BWD},
                        {recv_prev, ORR_OP_RECV, prev, TAG_FWD}, {recv_next, ORR_OP_RECV, next, TAG_BWD}};
        p2p_batch(G, a, 4);
    }
    p2p_join(G, &fev, fr, 2);
    p2p_join(G, &bev, br, 2);
    if (all_warm) {
        p2p_req a = {p != P - 1, ORR_OP_RECV, next, TAG_BWD};
        p2p_batch(G, &a, 1);
    }
    for (int64_t k = rem; k < total; k++) {
        uint32_t c = chunk_id(G, k, 0);
        bwd_step(G, c, mb_id(G, k));
        uint32_t nc = chunk_id(G, k + 1, 0);
        int recv_next = !(p == P - 1 && nc == V - 1) && k != total - 1;
        p2p_req a[2] = {{!FIRST_VIRTUAL(c), ORR_OP_SEND, prev, TAG_BWD}, {recv_next, ORR_OP_RECV, next, TAG_BWD}};
        p2p_batch(G, a, 2);
    }
#undef LAST_VIRTUAL
#undef FIRST_VIRTUAL
}

/* combined_1f1b_schedule_for_no_pipelining: the first forward alone, then each forward with the
 * previous micro-batch's backward, then the last backward alone. */
static void schedule_no_pipeline(gen *G)
{
    if (G->s->moe_a2a_overlap && G->nmb > 0) {
        fwd_step(G, 0, 0);
        for (uint32_t mb = 1; mb < G->nmb; mb++) combined_step(G, 0, mb, 0, mb - 1);
        bwd_step(G, 0, G->nmb - 1);
        return;
    }
    for (uint32_t mb = 0; mb < G->nmb; mb++) {
        fwd_step(G, 0, mb);
        bwd_step(G, 0, mb);
    }
}

/* ---- iteration: zero grads, (param gather), schedule, grad sync, optimizer ---- */

static void param_gather_prefetch(gen *G)
{
    /* The distributed optimizer's parameter all-gather, overlapped with the forward pass: issued on
     * the DP stream in forward order; each layer's first forward waits for its bucket. */
    for (uint32_t c = 0; c < G->V; c++)
        for (size_t i = G->nbk; i-- > 0;) {
            if (G->bk[i].chunk != c) continue;
            ctx cx = {ORR_PHASE_FWD, ORR_NO_LAYER, ORR_NO_MB, c};
            gen_coll(G, &cx, S_DP, "dp_param_allgather", ORR_COLL_ALLGATHER, ORR_ROLE_DP, G->bk[i].gather_bytes);
            G->bk[i].ag_event = gen_record(G, S_DP);
        }
}

/* Megatron-Core's precision-aware optimizer keeps a bf16 parameter's fp32 master copy as the 16
 * bits the parameter lacks (OptimizerConfig.store_param_remainders, on by default from Transformer
 * Engine 2.1): with fp32 master parameters and parameters held in bf16. */
static int param_remainders(const gen *G)
{
    const orr_spec *s = G->s;
    return s->precision_aware_opt && s->opt_dtype[ORR_OPT_MAIN_PARAMS] == ORR_FP32 &&
           (s->precision == ORR_BF16 || (orr_dtype_is_narrow(s->precision) && !s->fp8_param_gather));
}

double gen_optim_state_B(const gen *G)
{
    const orr_spec *s = G->s;
    if (!s->precision_aware_opt) return 12.0;
    double main = param_remainders(G) ? 2.0 : orr_dtype_bytes(s->opt_dtype[ORR_OPT_MAIN_PARAMS]);
    return main + orr_dtype_bytes(s->opt_dtype[ORR_OPT_EXP_AVG]) + orr_dtype_bytes(s->opt_dtype[ORR_OPT_EXP_AVG_SQ]);
}

#define GEN_MAX_ADAM_LAUNCHES 1024u /* optimizer_step: multi-tensor-apply launches at most */

static void optimizer_step(gen *G)
{
    ctx cx = {ORR_PHASE_OPTIM, ORR_NO_LAYER, ORR_NO_MB, 0};
    double params = gen_rank_params(G), experts = moe_rank_expert_params(G);
    double local = G->rp->shards_params ? gen_rank_shard_bytes(G, 1.0)
                 : G->dist                ? (params - experts) / G->R + experts / G->EDP
                                          : params;
    gen_memop(G, &cx, "grad_norm", ORR_CLS_REDUCTION, local * 4.0, 2.0 * local);
    if (G->T * G->P > 1) gen_coll(G, &cx, S_COMPUTE, "grad_norm_allreduce", ORR_COLL_ALLREDUCE, ORR_ROLE_OTHER, 4.0);
    if (G->dist && G->R > 1)
        gen_coll(G, &cx, S_COMPUTE, "grad_norm_dp_allreduce", ORR_COLL_ALLREDUCE, ORR_ROLE_DP, 4.0);
    if (G->rp->shards_params && G->S > 1)
        coll_in(G, &cx, S_COMPUTE, "grad_norm_fsdp_allreduce", ORR_COLL_ALLREDUCE, G->g_shard, &G->seq_shard, 4.0);
    if (G->rp->clips_always) /* read and write every local fp32 gradient */
        gen_memop(G, &cx, "grad_clip_scale", ORR_CLS_ELEMENTWISE, local * 8.0, local);
    if (G->dt == ORR_FP16) {
        gen_memop(G, &cx, "unscale_found_inf", ORR_CLS_ELEMENTWISE, local * 8.0, local);
        if (G->T * G->P > 1)
            gen_coll(G, &cx, S_COMPUTE, "found_inf_allreduce", ORR_COLL_ALLREDUCE, ORR_ROLE_OTHER, 4.0);
    }
    /* Adam on fp32 master weights: read param, grad, m, v (16 B), write param, m, v (12 B) and the
     * half-precision copy (2 B): 30 bytes per parameter, in multi-tensor-apply launches of ~50M; at
     * most GEN_MAX_ADAM_LAUNCHES of them (5.1e10 parameters on one GPU, 600 GB of optimizer state, no
     * GPU holds: a hostile model's launches would otherwise be billions of ops, and beyond 2^32 the
     * count's conversion undefined). The precision-aware optimizer reads and writes its state in its
     * dtypes (gen_optim_state_B), reads the gradients in main_grads_dtype and, with remainders, reads
     * the bf16 parameter too. */
    double state_B = gen_optim_state_B(G);
    double grad_B = G->s->precision_aware_opt ? orr_dtype_bytes(G->s->opt_dtype[ORR_OPT_MAIN_GRADS]) : 4.0;
    double step_B = 2.0 * state_B + grad_B + 2.0 + (param_remainders(G) ? 2.0 : 0.0);
    double nl = ceil(local / 5e7);
    uint32_t launches = nl < 1.0 ? 1u : nl > GEN_MAX_ADAM_LAUNCHES ? GEN_MAX_ADAM_LAUNCHES : (uint32_t)nl;
    uint32_t tmp0 = UINT32_MAX;
    if (G->rp->optimizer_temps) G->rp->optimizer_temps(G, &cx, 1, &tmp0);
    for (uint32_t i = 0; i < launches; i++)
        gen_memop(G, &cx, "adam_step", ORR_CLS_OPTIMIZER, local / launches * step_B, local / launches * 12.0);
    if (G->rp->optimizer_temps) G->rp->optimizer_temps(G, &cx, 0, &tmp0);
    if (G->dist && G->R > 1 && !G->overlap_pg)
        for (size_t i = G->nbk; i-- > 0;)
            gen_coll(G, &cx, S_COMPUTE, "dp_param_allgather", ORR_COLL_ALLGATHER, ORR_ROLE_DP,
                     G->bk[i].gather_bytes);
}

/* The parameter tensors of this rank in model order (PyTorch's model.parameters(): embedding, each
 * layer's (layer_param_elems), final norm and output), elements per rank before FSDP sharding, and
 * the size of the group each is sharded over (the shard group, S; a routed expert's the
 * expert-data-parallel group, EDP); returns how many (at most cap). PyTorch's Adam keeps one exp_avg
 * and one exp_avg_sq tensor per parameter, and its foreach step one temporary per parameter. */
uint32_t gen_param_tensors(const gen *G, double *out, double *shard, uint32_t cap)
{
    uint32_t n = 0, nmats, nexp;
    double layer[9];
    for (uint32_t c = 0; c < G->V; c++) {
        if (chunk_has_embedding(G, c) && n < cap) shard[n] = G->S, out[n++] = embedding_params_local(G);
        for (uint32_t l = 0; l < chunk_layers(G, c); l++) {
            uint32_t nl = layer_param_elems(G, chunk_first_layer(G, c) + l, layer, &nmats, &nexp);
            for (uint32_t i = 0; i < nl && n < cap; i++) shard[n] = i >= nl - nexp ? G->EDP : G->S, out[n++] = layer[i];
        }
        if (chunk_has_head(G, c) && n + 2 <= cap) {
            uint32_t k = head_param_elems(G, out + n);
            for (uint32_t i = 0; i < k; i++) shard[n + i] = G->S;
            n += k;
        }
    }
    return n;
}

double gen_rank_shard_bytes(const gen *G, double bytes_per_param)
{
    double params = gen_rank_params(G), experts = moe_rank_expert_params(G);
    if (experts <= 0) return params * bytes_per_param / G->S;
    return ((params - experts) / G->S + experts / G->EDP) * bytes_per_param;
}

uint32_t gen_param_tensor_count(const gen *G) { return G->V * 3 + G->rank_layers * 9; }

void gen_persistent_buffers(gen *G, const ctx *cx, double param, double grad)
{
    gen_mem_alloc(G, cx, S_COMPUTE, "parameters", param, ORR_MEM_PARAM);
    if (grad > 0) gen_mem_alloc(G, cx, S_COMPUTE, "gradients", grad, ORR_MEM_GRAD);
}

/* Per-rank state: event and buffer ids (activation buffers first, act_buf), units not gathered. */
static void rank_reset(gen *G)
{
    G->nev = 0;
    G->rank_layers = 0;
    for (uint32_t c = 0; c < G->V; c++) {
        G->chunk_base[c] = G->rank_layers;
        G->rank_layers += chunk_layers(G, c);
    }
    G->nbuf = G->nmb * G->rank_layers;
    G->head_base = G->nbuf;
    G->nbuf += G->nmb;
    G->head_in_base = G->nbuf;
    G->nbuf += G->nmb;
    G->pp_out_base = G->nbuf;
    G->nbuf += G->nmb;
    G->moe_buf_base = G->nbuf; /* an MoE layer's own saved tensors, as act_buf numbers them */
    G->nbuf += G->nmb * G->rank_layers;
    G->head_tmp = UINT32_MAX;
    G->rs_buf_pending = UINT32_MAX;
    G->prefetch_units = prefetch_units(G);
    if (G->rp->shards_params) {
        uint32_t nu = rank_units(G);
        for (uint32_t u = 0; u < nu; u++)
            G->unit_buf[u] = G->unit_cp_buf[u] = G->unit_ag_ev[u] = G->unit_fwd_ev[u] = G->unit_grad_buf[u] =
                G->unit_acc_buf[u] = UINT32_MAX;
    }
}

/* After the schedule: sharded, wait for the last reduce-scatters and free what is still gathered;
 * else finish_grad_sync, waiting for the overlapped bucket reductions or issuing them all now. */
static void finish_grad_sync(gen *G, const ctx *cx)
{
    if (G->rp->shards_params) {
        uint32_t e = gen_record(G, S_DP);
        gen_wait(G, S_COMPUTE, e);
        gen_mem_free(G, cx, S_COMPUTE, G->rs_buf_pending);
        G->rs_buf_pending = UINT32_MAX;
        for (uint32_t u = 0; u < rank_units(G); u++)
            unit_release(G, cx, u);
    } else if (G->R > 1) {
        if (G->s->overlap_grad_reduce) {
            uint32_t e = gen_record(G, S_DP);
            gen_wait(G, S_COMPUTE, e);
        } else {
            for (size_t i = 0; i < G->nbk; i++) dp_reduce_bucket(G, &G->bk[i], 0);
        }
    }
}

/* The pipeline's kept outputs (pp_keeps_outputs): at the end of step() _merge_outputs concatenates
 * them (a temporary the caller drops); they are freed when the next step() clears output_chunks. */
static void merge_kept_outputs(gen *G, const ctx *cx)
{
    double out = G->fnmb * model_output_bytes(G);
    uint32_t m = gen_mem_alloc(G, cx, S_COMPUTE, "pp_merged_outputs", out, ORR_MEM_TEMP);
    gen_memop(G, cx, "pp_merge_outputs", ORR_CLS_ELEMENTWISE, 2.0 * out, 0);
    gen_mem_free(G, cx, S_COMPUTE, m);
}

/* One training iteration of the current rank. */
static void gen_rank(gen *G)
{
    rank_reset(G);
    rank_groups(G);
    build_buckets(G);
    G->rp->persistent_memory(G);
    ctx cx = {ORR_PHASE_OTHER, ORR_NO_LAYER, ORR_NO_MB, 0};
    orr_op *z = emit(G, ORR_OP_MEMSET, S_COMPUTE, "zero_grad_buffer");
    tag_op(z, &cx);
    z->bytes = (uint64_t)(G->rp->shards_params ? gen_rank_shard_bytes(G, G->grad_B) : gen_rank_params(G) * G->grad_B);
    if (G->dist && G->overlap_pg && G->R > 1) param_gather_prefetch(G);

    int keeps_outputs = gen_pp_keeps_outputs(G) && G->pp_r == G->P - 1;
    /* lbs: gradient accumulation over pipeline schedule steps, each a fill and drain of the pipeline
     * whose last backward syncs and reshards (torch.distributed.pipelining); the next step() clears
     * the outputs the last stage kept */
    for (uint32_t f = 0; f < G->nfl; f++) {
        G->mb0 = f * G->fnmb;
        if (G->P == 1) schedule_no_pipeline(G);
        else if (G->V == 1) schedule_1f1b(G);
        else schedule_interleaved(G);
        if (f + 1 == G->nfl) break;
        finish_grad_sync(G, &cx);
        if (keeps_outputs) {
            merge_kept_outputs(G, &cx);
            for (uint32_t mb = G->mb0; mb < G->mb0 + G->fnmb; mb++) gen_mem_free(G, &cx, S_COMPUTE, G->pp_out_base + mb);
        }
    }

    finish_grad_sync(G, &cx);
    if (keeps_outputs) merge_kept_outputs(G, &cx);
    if (G->has_emb_group) {
        ctx ec = {ORR_PHASE_BWD, ORR_NO_LAYER, ORR_NO_MB, 0};
        gen_coll(G, &ec, S_COMPUTE, "embedding_grad_allreduce", ORR_COLL_ALLREDUCE, ORR_ROLE_EMB,
                 G->vocab * G->h / G->T * G->grad_B);
    }
    optimizer_step(G);
    if (G->rp->unit_grads) /* zero_grad(set_to_none): the sharded gradients are freed */
        for (uint32_t u = 0; u < rank_units(G); u++) {
            gen_mem_free(G, &cx, S_COMPUTE, G->unit_grad_buf[u]);
            G->unit_grad_buf[u] = UINT32_MAX;
        }
    if (keeps_outputs)
        for (uint32_t mb = G->mb0; mb < G->nmb; mb++) gen_mem_free(G, &cx, S_COMPUTE, G->pp_out_base + mb);
    orr_op *sy = emit(G, ORR_OP_DEVICE_SYNC, S_COMPUTE, "iteration_end_sync");
    tag_op(sy, &cx);
}

/* Model FLOPs of one iteration, Megatron-LM's num_floating_point_operations (training.py): 3x the
 * forward matmul FLOPs (no recomputation), attention scores counted in full (no causal discount),
 * with GQA and gated-MLP terms. */
static double megatron_model_flops(const gen *G, double gbs)
{
    double h = G->h, L = G->L, s = G->sq;
    double q_ratio = G->a * G->hd / h;
    double attn = (1.0 + G->g / G->a + s / h) * q_ratio;
    double mlp = G->f / h * (G->gated ? 1.5 : 1.0);
    double logit = G->vocab / (2.0 * L * h);
    return 12.0 * gbs * s * L * h * h * (attn + mlp + logit);
}

static void gen_free(gen *G)
{
    free(G->bk);
    free(G->unit_buf);
    free(G->unit_cp_buf);
    free(G->unit_cp_n);
    free(G->unit_ag_ev);
    free(G->unit_fwd_ev);
    free(G->unit_grad_buf);
    free(G->unit_acc_buf);
    free(G->stage_layers);
    free(G->stage_first);
    free(G->chunk_base);
    orr_map_free(&G->group_ids);
}

/* The recipe of the framework the spec names (resolve refuses those without one). */
static const recipe *recipe_of(const orr_spec *s)
{
    static const recipe *(*const of[ORR_FW_COUNT])(const orr_spec *) = {
        [ORR_FW_MEGATRON] = orr_recipe_megatron,
        [ORR_FW_MEGATRON_FSDP] = orr_recipe_megatron_fsdp,
        [ORR_FW_TORCHTITAN] = orr_recipe_torchtitan,
        [ORR_FW_DEEPSPEED] = orr_recipe_deepspeed,
        [ORR_FW_NANOTRON] = orr_recipe_nanotron,
        [ORR_FW_AUTOMODEL] = orr_recipe_automodel,
    };
    return (unsigned)s->framework < ORR_FW_COUNT && of[s->framework] ? of[s->framework](s) : NULL;
}

/* The shapes of the job and what the recipe decides of them; -1 (err set) if the spec cannot be
 * generated. */
static int gen_shapes(gen *G, const orr_spec *s, orr_err *err)
{
    G->s = s;
    G->T = s->tp;
    G->P = s->pp;
    G->D = s->dp;
    G->V = s->vpp ? s->vpp : 1;
    G->L = s->model.layers;
    G->C = s->cp ? s->cp : 1;
    if (!G->T || !G->P || !G->D || !s->mbs || !s->gbs || !s->seq)
        return orr_fail(err, "generator: the spec is not resolved (tp/pp/dp/mbs/gbs/seq)");
    G->rp = recipe_of(s);
    if (!G->rp) return orr_fail(err, "generator: framework %s is not modelled", orr_framework_name(s->framework));
    if (G->C > 1 && s->attention == ORR_ATTN_UNFUSED)
        return orr_fail(err, "--cp %u: context parallelism needs flash attention (options.attention: flash)", G->C);
    G->nmb = s->gbs / (s->mbs * G->D);
    G->b = s->mbs;
    G->sq = s->seq;
    G->h = s->model.hidden;
    G->a = s->model.heads;
    G->g = s->model.kv_heads ? s->model.kv_heads : s->model.heads;
    G->hd = s->model.head_dim ? s->model.head_dim : s->model.hidden / s->model.heads;
    G->f = s->model.ffn;
    double mult = G->rp->pads_vocab_to * G->T;
    G->vocab = ceil(s->model.vocab / mult) * mult;
    G->sp = s->sp && G->T > 1;
    G->gated = s->model.gated_mlp;
    G->dt = s->precision;
    G->act_B = s->precision == ORR_FP32 ? 4.0 : 2.0;
    G->eager = G->rp->eager_unless_compiled && !s->compile;
    G->S = G->D;
    G->R = G->rp->reduces_over_cp ? G->D * G->C : G->D;
    G->grad_B = s->precision == ORR_FP16 ? 2.0 : 4.0; /* bf16 training reduces in fp32 unless the recipe says */
    G->shard_B = 4.0;
    G->attn_out = G->a * G->hd;
    moe_setup(G);
    G->rp->setup(G);
    G->nfl = s->lbs ? s->gbs / G->D / s->lbs : 1;
    if (!G->nfl || G->nmb % G->nfl)
        return orr_fail(err, "--lbs %u: must divide gbs/dp (%u/%u) and be a multiple of mbs (%u)", s->lbs, s->gbs,
                        G->D, s->mbs);
    G->fnmb = G->nmb / G->nfl;
    G->mb0 = 0;
    if (G->V > 1 && G->fnmb % G->P)
        return orr_fail(err, "--vpp %u: the interleaved schedule needs the number of micro-batches of a schedule "
                             "step (%u) to be a multiple of pp (%u)", G->V, G->fnmb, G->P);
    return 0;
}

/* The layers of every virtual stage and where each starts; the most layers one rank holds, or -1. */
static int64_t stage_split(gen *G, orr_err *err)
{
    uint32_t nv = G->P * G->V, max_rank_layers = 0;
    G->stage_layers = orr_xmalloc(nv * sizeof *G->stage_layers);
    if (orr_pp_split(G->s, G->stage_layers, err)) return -1;
    G->stage_first = orr_xmalloc(nv * sizeof *G->stage_first);
    G->chunk_base = orr_xmalloc(G->V * sizeof *G->chunk_base);
    for (uint32_t v = 0, first = 0; v < nv; v++) {
        G->stage_first[v] = first;
        first += G->stage_layers[v];
    }
    for (uint32_t p = 0; p < G->P; p++) {
        uint32_t n = 0;
        for (uint32_t c = 0; c < G->V; c++) n += G->stage_layers[c * G->P + p];
        if (n > max_rank_layers) max_rank_layers = n;
    }
    return max_rank_layers;
}

/* Room for the sharding units of the rank with the most layers. */
static void alloc_units(gen *G, uint32_t max_rank_layers)
{
    uint32_t nu = max_rank_layers + G->V;
    G->unit_buf = orr_xmalloc(nu * sizeof *G->unit_buf);
    G->unit_cp_buf = orr_xmalloc(nu * sizeof *G->unit_cp_buf);
    G->unit_cp_n = orr_xcalloc(nu, sizeof *G->unit_cp_n);
    G->unit_ag_ev = orr_xmalloc(nu * sizeof *G->unit_ag_ev);
    G->unit_fwd_ev = orr_xmalloc(nu * sizeof *G->unit_fwd_ev);
    G->unit_grad_buf = orr_xmalloc(nu * sizeof *G->unit_grad_buf);
    G->unit_acc_buf = orr_xmalloc(nu * sizeof *G->unit_acc_buf);
}

/* What one op costs in memory with its timeline and events: about 200 B measured (llama3-8b on 8
 * H100s, TP 8: gbs 1024, 1.4 million ops, 281 MB of RSS; gbs 8192, 11.3 million ops, 2.2 GB), 300
 * with room. The default budget is 2 GB of ops; ORRERY_MAX_OPS raises or lowers it (docs/spec.md
 * "Limits"). */
#define GEN_BYTES_PER_OP 300
#define GEN_MAX_OPS_DEFAULT (2e9 / GEN_BYTES_PER_OP)

static double gen_max_ops(void) { return (double)orr_env_limit("ORRERY_MAX_OPS", (uint64_t)GEN_MAX_OPS_DEFAULT); }

/* Generates the simulated rank (tp t, cp c, dp d, pp p); -1 (err set) when the job would need more
 * ops than fit in memory. With symmetry one rank per (pipeline stage, cp rank) is simulated and
 * stands for its tp x dp peers; cp ranks are all simulated because ring attention talks to them
 * point to point. */
static int gen_one_rank(gen *G, uint32_t t, uint32_t c, uint32_t d, uint32_t p, orr_err *err)
{
    int sym = G->s->symmetry;
    char label[64];
    if (sym && G->C > 1) snprintf(label, sizeof label, "pp%u cp%u", p, c);
    else if (sym) snprintf(label, sizeof label, "pp%u", p);
    else if (G->C > 1) snprintf(label, sizeof label, "tp%u cp%u dp%u pp%u", t, c, d, p);
    else snprintf(label, sizeof label, "tp%u dp%u pp%u", t, d, p);
    G->cp_r = c;
    uint32_t r = orr_workload_add_rank(G->w, grank(G, t, d, p), sym ? G->T * G->D : 1, label);
    G->rk = &G->w->ranks[r];
    G->tp_r = t;
    G->dp_r = d;
    G->pp_r = p;
    /* Every simulated rank holds about as many ops as this one (without symmetry every GPU gets
     * its own op stream): the budget's share of one rank bounds it while it is built, and the
     * estimate for all of them refuses the job before the others are. */
    double ranks = sym ? G->P : (double)G->w->world_size, cap = gen_max_ops();
    G->rank_op_cap = (size_t)(cap / ranks) + 1;
    G->over_budget = 0;
    gen_rank(G);
    double est_ops = G->over_budget ? cap + 1 : (double)G->rk->nops * ranks;
    if (est_ops > cap)
        return orr_fail(err, "%s: this job would need %s%.1f million ops (%s%.1f GB at %d B each) to simulate, "
                             "more than the %.1f million of the 2 GB budget; %s, or raise the budget with "
                             "ORRERY_MAX_OPS=N (docs/spec.md \"Limits\")",
                        sym ? "model" : "--no-symmetry", G->over_budget ? "more than " : "about ", est_ops / 1e6,
                        G->over_budget ? "over " : "about ", est_ops * GEN_BYTES_PER_OP / 1e9, GEN_BYTES_PER_OP,
                        cap / 1e6,
                        sym ? "use fewer layers or micro-batches (a smaller --gbs or a larger --mbs)"
                            : "leave symmetry on for jobs this large");
    return 0;
}

/* The FLOPs and tokens of one iteration, for the reports. */
static void account(gen *G)
{
    double hw = 0;
    for (size_t r = 0; r < G->w->nranks; r++) {
        const orr_rank *rk = &G->w->ranks[r];
        double f = 0;
        for (size_t i = 0; i < rk->nops; i++)
            if (rk->ops[i].kind == ORR_OP_KERNEL) f += rk->ops[i].flops;
        hw += f * rk->weight;
    }
    G->w->hw_flops = hw;
    G->w->model_flops = G->s->model.experts ? moe_model_flops(G, G->s->gbs) : megatron_model_flops(G, G->s->gbs);
    G->w->tokens = (double)G->s->gbs * G->s->seq;
    if (G->s->model.experts)
        snprintf(G->w->flops_convention, sizeof G->w->flops_convention,
                 "MoE: 3 x forward matmul FLOPs of the active parameters (top_k routed + shared experts, router), "
                 "no recompute, full s^2 attention, vocab padded to %u", (unsigned)G->vocab);
    else
        snprintf(G->w->flops_convention, sizeof G->w->flops_convention,
                 "Megatron-LM num_floating_point_operations: 3 x forward matmul FLOPs, no recompute, "
                 "full s^2 attention, vocab padded to %u", (unsigned)G->vocab);
}

orr_workload *orr_gen_training(const orr_spec *s, orr_err *err)
{
    gen G;
    memset(&G, 0, sizeof G);
    int64_t max_rank_layers = gen_shapes(&G, s, err) ? -1 : stage_split(&G, err);
    if (max_rank_layers < 0) {
        gen_free(&G);
        return NULL;
    }
    uint32_t gpn = s->cluster.gpus_per_node ? s->cluster.gpus_per_node : 8;
    G.w = orr_workload_new(G.T * G.P * G.D * G.C, gpn);
    alloc_units(&G, (uint32_t)max_rank_layers);
    int sym = s->symmetry;
    for (uint32_t p = 0; p < G.P; p++)
        for (uint32_t d = 0; d < (sym ? 1 : G.D); d++)
            for (uint32_t c = 0; c < G.C; c++)
                for (uint32_t t = 0; t < (sym ? 1 : G.T); t++)
                    if (gen_one_rank(&G, t, c, d, p, err)) {
                        orr_workload_free(G.w);
                        gen_free(&G);
                        return NULL;
                    }
    gen_free(&G);
    if (sym) describe_symmetry(&G);
    if (orr_workload_finalize(G.w, err) < 0) {
        orr_workload_free(G.w);
        return NULL;
    }
    account(&G);
    return G.w;
}
