/* The Megatron workload generator: per-layer op counts and FLOPs against closed forms, TP
 * collectives with and without sequence parallelism, recomputation, DP buckets, the 1F1B and
 * interleaved orders per stage, deadlock-free schedules over many shapes, and symmetry (one rank per
 * stage) giving exactly the iteration time of simulating every rank; uneven pipeline splits
 * (orr_pp_split: TorchTitan's default rule, Megatron's first/last stage counts, explicit lists) with
 * each stage's own layers and the whole model's GEMM work over the stages. */
#include "check.h"
#include "spec_text.h"
#include "orrery/estimate.h"
#include "orrery/orrery.h"

#include <math.h>
#include <string.h>

static orr_spec base_spec(void)
{
    orr_spec s;
    orr_spec_init(&s);
    orr_model *m = &s.model;
    snprintf(m->name, sizeof m->name, "test-gpt");
    m->layers = 8;
    m->hidden = 1024;
    m->heads = 16;
    m->kv_heads = 16;
    m->head_dim = 64;
    m->ffn = 4096;
    m->vocab = 51200;
    m->seq = 1024;
    m->tied_embeddings = 1;
    m->bias = 1;
    orr_err err;
    if (orr_catalog_gpu("H100-SXM", &s.gpu, &err) < 0 || orr_catalog_cluster("dgx-h100", &s.cluster, &err) < 0) {
        fprintf(stderr, "catalog: %s\n", err.msg);
        exit(1);
    }
    s.tp = 2;
    s.pp = 1;
    s.dp = 1;
    s.vpp = 1;
    s.mbs = 1;
    s.gbs = 1;
    s.seq = 1024;
    s.gpus = 2;
    s.precision = ORR_BF16;
    s.bucket_params = 40e6;
    return s;
}

static orr_workload *gen(const orr_spec *s)
{
    orr_err err = {{0}};
    orr_workload *w = orr_gen_training(s, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    return w;
}

typedef struct counts {
    double gemm_flops[ORR_PHASE_COUNT];
    double attn_flops[ORR_PHASE_COUNT];
    int coll[ORR_PHASE_COUNT][ORR_COLL_COUNT];
} counts;

static counts layer_counts(const orr_workload *w, uint32_t rank, uint32_t layer, uint32_t mb)
{
    counts c;
    memset(&c, 0, sizeof c);
    const orr_rank *r = &w->ranks[rank];
    for (size_t i = 0; i < r->nops; i++) {
        const orr_op *op = &r->ops[i];
        if (op->layer != layer || op->mb != mb) continue;
        if (op->kind == ORR_OP_KERNEL && op->cls == ORR_CLS_GEMM) c.gemm_flops[op->phase] += op->flops;
        if (op->kind == ORR_OP_KERNEL && (op->cls == ORR_CLS_ATTENTION_FWD || op->cls == ORR_CLS_ATTENTION_BWD))
            c.attn_flops[op->phase] += op->flops;
        if (op->kind == ORR_OP_COLL && op->role == ORR_ROLE_TP) c.coll[op->phase][op->cls]++;
    }
    return c;
}

static void test_layer_ops(void)
{
    orr_spec s = base_spec();
    double b = 1, sq = 1024, h = 1024, f = 4096, t = 2, a = 16, d = 64;
    double gemm_fwd = 2 * b * sq * (3 * h * h / t + h * h / t + 2 * h * f / t);
    double nb = 8; /* 1024 / 128 query blocks: causal computes (nb+1)/(2nb) of the blocks */
    double attn_fwd = 4 * b * (a / t) * sq * sq * d * (nb + 1) / (2 * nb);
    for (int sp = 0; sp <= 1; sp++) {
        for (int rc = 0; rc <= 1; rc++) {
            s.sp = sp;
            s.recompute = rc ? ORR_RECOMPUTE_FULL : ORR_RECOMPUTE_NONE;
            orr_workload *w = gen(&s);
            if (!w) return;
            CHECK_EQ_I64(w->nranks, 1); /* symmetry: one rank per stage */
            CHECK_EQ_I64(w->ranks[0].weight, 2);
            counts c = layer_counts(w, 0, 3, 0);
            CHECK_REL(c.gemm_flops[ORR_PHASE_FWD], gemm_fwd, 1e-12);
            CHECK_REL(c.gemm_flops[ORR_PHASE_BWD], 2 * gemm_fwd, 1e-12);
            CHECK_REL(c.attn_flops[ORR_PHASE_FWD], attn_fwd, 1e-12);
            CHECK_REL(c.attn_flops[ORR_PHASE_BWD], 2.5 * attn_fwd, 1e-12);
            CHECK_REL(c.gemm_flops[ORR_PHASE_RECOMPUTE], rc ? gemm_fwd : 0, 1e-12);
            if (!sp) {
                CHECK_EQ_I64(c.coll[ORR_PHASE_FWD][ORR_COLL_ALLREDUCE], 2);
                CHECK_EQ_I64(c.coll[ORR_PHASE_BWD][ORR_COLL_ALLREDUCE], 2);
                CHECK_EQ_I64(c.coll[ORR_PHASE_FWD][ORR_COLL_ALLGATHER], 0);
            } else {
                CHECK_EQ_I64(c.coll[ORR_PHASE_FWD][ORR_COLL_ALLGATHER], 2);
                CHECK_EQ_I64(c.coll[ORR_PHASE_FWD][ORR_COLL_REDUCESCATTER], 2);
                CHECK_EQ_I64(c.coll[ORR_PHASE_BWD][ORR_COLL_ALLGATHER], 4);
                CHECK_EQ_I64(c.coll[ORR_PHASE_BWD][ORR_COLL_REDUCESCATTER], 2);
                CHECK_EQ_I64(c.coll[ORR_PHASE_BWD][ORR_COLL_ALLREDUCE], 0);
            }
            CHECK_EQ_I64(c.coll[ORR_PHASE_RECOMPUTE][sp ? ORR_COLL_REDUCESCATTER : ORR_COLL_ALLREDUCE], rc ? 2 : 0);
            orr_workload_free(w);
        }
    }
    /* GQA + SwiGLU: the QKV GEMM shrinks with kv heads, the MLP has three matrices */
    s = base_spec();
    s.model.kv_heads = 4;
    s.model.gated_mlp = 1;
    s.model.rmsnorm = 1;
    s.model.bias = 0;
    orr_workload *w = gen(&s);
    if (!w) return;
    counts c = layer_counts(w, 0, 0, 0);
    double g = 4;
    CHECK_REL(c.gemm_flops[ORR_PHASE_FWD], 2 * b * sq * ((a + 2 * g) * d * h / t + h * h / t + 3 * h * f / t), 1e-12);
    orr_workload_free(w);
}

static void test_model_flops(void)
{
    /* Megatron's formula for a GPT with MHA and a 4h MLP is 72 B s L h^2 (1 + s/6h + V/12Lh) */
    orr_spec s = base_spec();
    s.gbs = 4;
    orr_workload *w = gen(&s);
    if (!w) return;
    double B = 4, sq = 1024, L = 8, h = 1024, V = 51200;
    CHECK_REL(w->model_flops, 72 * B * sq * L * h * h * (1 + sq / (6 * h) + V / (12 * L * h)), 1e-12);
    CHECK_REL(w->tokens, 4096, 0);
    orr_workload_free(w);
    /* Megatron pads the vocabulary to a multiple of 128 x tp (--make-vocab-size-divisible-by): GPT-2's
     * 50257 becomes 50304 at TP 1 and 51200 at TP 8, in the LM head's GEMMs and in the FLOPs */
    s.model.vocab = 50257;
    for (uint32_t tp = 1; tp <= 8; tp *= 8) {
        s.tp = tp;
        s.sp = tp > 1;
        s.gbs = 4;
        w = gen(&s);
        if (!w) return;
        double Vp = tp == 1 ? 50304 : 51200;
        CHECK_REL(w->model_flops, 72 * B * sq * L * h * h * (1 + sq / (6 * h) + Vp / (12 * L * h)), 1e-12);
        orr_workload_free(w);
    }
}

/* The (F|B, chunk, mb) order of compute on a rank, read off its first-layer-of-chunk QKV GEMMs. */
static int step_order(const orr_workload *w, uint32_t rank, const orr_spec *s, char *out, size_t n)
{
    uint32_t Lc = s->model.layers / (s->pp * s->vpp);
    size_t k = 0;
    const orr_rank *r = &w->ranks[rank];
    for (size_t i = 0; i < r->nops && k + 8 < n; i++) {
        const orr_op *op = &r->ops[i];
        if (op->kind != ORR_OP_KERNEL || op->layer == ORR_NO_LAYER || op->layer % Lc) continue;
        const char *nm = w->names[op->name];
        if (op->phase == ORR_PHASE_FWD && strcmp(nm, "qkv_gemm") == 0)
            k += (size_t)snprintf(out + k, n - k, "F%u.%u ", op->layer_chunk, op->mb);
        else if (op->phase == ORR_PHASE_BWD && strcmp(nm, "qkv_wgrad") == 0)
            k += (size_t)snprintf(out + k, n - k, "B%u.%u ", op->layer_chunk, op->mb);
    }
    return (int)k;
}

static void test_schedules(void)
{
    char got[512];
    orr_spec s = base_spec();
    s.tp = 1;
    s.pp = 4;
    s.gbs = 8;
    s.gpus = 4;
    orr_workload *w = gen(&s);
    if (!w) return;
    const char *want_1f1b[4] = {
        "F0.0 F0.1 F0.2 F0.3 B0.0 F0.4 B0.1 F0.5 B0.2 F0.6 B0.3 F0.7 B0.4 B0.5 B0.6 B0.7 ",
        "F0.0 F0.1 F0.2 B0.0 F0.3 B0.1 F0.4 B0.2 F0.5 B0.3 F0.6 B0.4 F0.7 B0.5 B0.6 B0.7 ",
        "F0.0 F0.1 B0.0 F0.2 B0.1 F0.3 B0.2 F0.4 B0.3 F0.5 B0.4 F0.6 B0.5 F0.7 B0.6 B0.7 ",
        "F0.0 B0.0 F0.1 B0.1 F0.2 B0.2 F0.3 B0.3 F0.4 B0.4 F0.5 B0.5 F0.6 B0.6 F0.7 B0.7 "};
    for (uint32_t p = 0; p < 4; p++) {
        step_order(w, p, &s, got, sizeof got);
        CHECK_MSG(strcmp(got, want_1f1b[p]) == 0, "stage %u: %s", p, got);
    }
    orr_workload_free(w);

    /* Interleaved, pp 2, 2 model chunks, 4 micro-batches: Megatron's order on stage 0 and 1 */
    s.pp = 2;
    s.vpp = 2;
    s.gbs = 4;
    s.gpus = 2;
    w = gen(&s);
    if (!w) return;
    step_order(w, 0, &s, got, sizeof got);
    CHECK_MSG(strcmp(got, "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3 ") == 0,
              "stage 0: %s", got);
    step_order(w, 1, &s, got, sizeof got);
    CHECK_MSG(strcmp(got, "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 B0.2 B0.3 ") == 0,
              "stage 1: %s", got);
    orr_workload_free(w);
}

static int64_t predict_ps(orr_spec *s, uint32_t *unique)
{
    orr_prediction p;
    orr_err err = {{0}};
    if (orr_predict(s, &p, &err) < 0) {
        CHECK_MSG(0, "tp%u pp%u dp%u vpp%u gbs%u: %s", s->tp, s->pp, s->dp, s->vpp, s->gbs, err.msg);
        return -1;
    }
    int64_t t = p.r.iteration_ps;
    if (unique) *unique = p.r.unique_ranks;
    orr_prediction_free(&p);
    return t;
}

/* TP x PP x DP on servers of 4 with SP, the distributed optimizer and small buckets: symmetry (one
 * simulated rank per pipeline stage) gives the same iteration time, to the picosecond, as
 * simulating all gpus ranks. */
static void check_symmetry_exact(orr_spec s, uint32_t stages, uint32_t gpus)
{
    s.cluster.gpus_per_node = 4;
    s.tp = 2;
    s.pp = stages;
    s.dp = 2;
    s.gpus = gpus;
    s.gbs = gpus;
    s.sp = 1;
    s.dist_opt = 1;
    s.bucket_params = 5e6;
    s.variability = 0; /* identical GPUs: with variability the simulated rank runs at its group's
                        * slowest GPU's pace, the full run at each GPU's own */
    uint32_t u_sym = 0, u_full = 0;
    int64_t sym = predict_ps(&s, &u_sym);
    s.symmetry = 0;
    int64_t full = predict_ps(&s, &u_full);
    CHECK_EQ_I64(u_sym, stages);
    CHECK_EQ_I64(u_full, gpus);
    CHECK_EQ_I64(sym, full);
    CHECK(sym > 0);
}

static void test_schedules_complete_and_symmetry(void)
{
    /* every (pp, vpp, micro-batches) runs to the end: no deadlock, no unmatched p2p */
    uint32_t pps[] = {2, 3, 4}, vpps[] = {1, 2, 4};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (uint32_t k = 1; k <= 3; k++) {
                orr_spec s = base_spec();
                s.model.layers = 24;
                s.tp = 1;
                s.pp = pps[i];
                s.vpp = vpps[j];
                if (s.model.layers % (s.pp * s.vpp)) continue;
                s.gbs = s.vpp > 1 ? s.pp * k : k + 1;
                s.gpus = s.pp;
                s.symmetry = 0;
                CHECK(predict_ps(&s, NULL) > 0);
            }
    /* symmetry: one simulated rank per stage gives the same iteration time as all ranks */
    check_symmetry_exact(base_spec(), 2, 8);
}

/* Layers of rank r (fwd qkv_gemm of micro-batch 0): how many, the lowest and highest index. */
static uint32_t rank_layers(const orr_workload *w, uint32_t r, uint32_t *lo, uint32_t *hi)
{
    uint32_t n = 0;
    *lo = UINT32_MAX;
    *hi = 0;
    const orr_rank *rk = &w->ranks[r];
    for (size_t i = 0; i < rk->nops; i++) {
        const orr_op *op = &rk->ops[i];
        if (op->kind != ORR_OP_KERNEL || op->phase != ORR_PHASE_FWD || op->mb != 0 ||
            strcmp(w->names[op->name], "qkv_gemm") != 0)
            continue;
        n++;
        if (op->layer < *lo) *lo = op->layer;
        if (op->layer > *hi) *hi = op->layer;
    }
    return n;
}

/* GEMM FLOPs of the whole job (every rank times the ranks it stands for). */
static double job_gemm_flops(const orr_workload *w)
{
    double f = 0;
    for (size_t r = 0; r < w->nranks; r++)
        for (size_t i = 0; i < w->ranks[r].nops; i++)
            if (w->ranks[r].ops[i].kind == ORR_OP_KERNEL && w->ranks[r].ops[i].cls == ORR_CLS_GEMM)
                f += w->ranks[r].ops[i].flops * w->ranks[r].weight;
    return f;
}

static void test_uneven_split(void)
{
    /* TorchTitan's generate_split_points (9dec370): Llama 3.1 405B, 126 layers */
    orr_spec s = base_spec();
    orr_err err = {{0}};
    uint32_t out[64];
    s.model.layers = 126;
    s.pp = 8;
    CHECK(orr_pp_split(&s, out, &err) == 0);
    const uint32_t want8[8] = {15, 16, 16, 16, 16, 16, 16, 15};
    for (int v = 0; v < 8; v++) CHECK_EQ_I64(out[v], want8[v]);
    s.vpp = 2; /* interleaved: 16 virtual stages of 7 or 8; rank 0 holds stages 0 and 8 */
    CHECK(orr_pp_split(&s, out, &err) == 0);
    for (int v = 0; v < 16; v++) CHECK_EQ_I64(out[v], v == 0 || v == 15 ? 7 : 8);
    /* a split that divides stays even */
    s.model.layers = 128;
    CHECK(orr_pp_split(&s, out, &err) == 0);
    for (int v = 0; v < 16; v++) CHECK_EQ_I64(out[v], 8);
    /* Megatron's --decoder-first/last-pipeline-num-layers, per chunk with vpp */
    s.model.layers = 96;
    s.pp = 4;
    s.vpp = 2;
    s.pp_first_layers = 22;
    s.pp_last_layers = 22;
    CHECK(orr_pp_split(&s, out, &err) == 0);
    const uint32_t wantm[8] = {11, 13, 13, 11, 11, 13, 13, 11};
    for (int v = 0; v < 8; v++) CHECK_EQ_I64(out[v], wantm[v]);
    s.pp_first_layers = 23;
    CHECK(orr_pp_split(&s, out, &err) < 0 && strstr(err.msg, "--decoder-first-pipeline-num-layers") != NULL);

    /* the generator: 10 layers over 4 stages = 2, 3, 3, 2; each stage runs its own layers, in order */
    s = base_spec();
    s.model.layers = 10;
    s.tp = 1;
    s.pp = 4;
    s.gpus = 4;
    s.gbs = 6;
    s.symmetry = 0;
    orr_workload *w = gen(&s);
    if (!w) return;
    const uint32_t n4[4] = {2, 3, 3, 2}, lo4[4] = {0, 2, 5, 8};
    for (uint32_t p = 0; p < 4; p++) {
        uint32_t lo, hi, n = rank_layers(w, p, &lo, &hi);
        CHECK_MSG(n == n4[p] && lo == lo4[p] && hi == lo4[p] + n4[p] - 1, "stage %u: %u layers %u..%u", p, n, lo, hi);
    }
    double uneven = job_gemm_flops(w);
    orr_workload_free(w);
    /* the same model without pipelining does the same GEMM work */
    s.pp = 1;
    s.gpus = 1;
    w = gen(&s);
    if (!w) return;
    CHECK_REL(uneven, job_gemm_flops(w), 1e-12);
    orr_workload_free(w);

    /* interleaved, explicit counts: 10 layers over pp 2 x vpp 2 = 4, 1, 2, 3 (rank 0: 4 + 2, rank 1: 1 + 3) */
    s.pp = 2;
    s.vpp = 2;
    s.gpus = 2;
    s.npp_layers = 4;
    const uint32_t list[4] = {4, 1, 2, 3};
    memcpy(s.pp_layers, list, sizeof list);
    w = gen(&s);
    if (!w) return;
    uint32_t lo, hi;
    CHECK_EQ_I64(rank_layers(w, 0, &lo, &hi), 6);
    CHECK(lo == 0 && hi == 6);
    CHECK_EQ_I64(rank_layers(w, 1, &lo, &hi), 4);
    CHECK(lo == 4 && hi == 9);
    CHECK_REL(job_gemm_flops(w), uneven, 1e-12);
    orr_workload_free(w);
    CHECK(predict_ps(&s, NULL) > 0);

    /* uneven 1F1B and interleaved schedules run to the end, and symmetry (one rank per stage, each
     * with its own layers) gives the iteration time of simulating every rank */
    for (uint32_t vpp = 1; vpp <= 2; vpp++) {
        s = base_spec();
        s.model.layers = 11;
        s.vpp = vpp;
        check_symmetry_exact(s, 3, 12);
    }
    /* FSDP over an uneven split (TorchTitan's recipe): per-block units of each stage's own layers */
    s = base_spec();
    s.model.layers = 11;
    s.tp = 1;
    s.pp = 3;
    s.framework = ORR_FW_TORCHTITAN;
    s.fsdp = 2;
    s.dp = 2;
    s.gpus = 6;
    s.gbs = 6;
    s.reshard_after_forward = 0;
    CHECK(predict_ps(&s, NULL) > 0);
}

static void test_dp_buckets(void)
{
    orr_spec s = base_spec();
    s.tp = 1;
    s.dp = 4;
    s.gpus = 4;
    s.gbs = 8;
    s.bucket_params = 20e6;
    for (int dist = 0; dist <= 1; dist++) {
        s.dist_opt = dist;
        orr_workload *w = gen(&s);
        if (!w) return;
        /* 8 layers of 12.6M params + 52.4M embedding params: buckets close after layers 6, 4, 2, 0, and
         * at the embedding: 5 reductions of gradients, in fp32, on the DP stream */
        int n = 0;
        double bytes = 0;
        const orr_rank *r = &w->ranks[0];
        for (size_t i = 0; i < r->nops; i++) {
            const orr_op *op = &r->ops[i];
            if (op->kind == ORR_OP_COLL && op->role == ORR_ROLE_DP && op->phase == ORR_PHASE_BWD) {
                n++;
                bytes += (double)op->bytes;
                CHECK_EQ_I64(op->cls, dist ? ORR_COLL_REDUCESCATTER : ORR_COLL_ALLREDUCE);
                CHECK_EQ_I64(op->stream, 1);
            }
        }
        CHECK_EQ_I64(n, 5);
        double params = 8 * orr_model_layer_params(&s.model) + 51200.0 * 1024 + 1024.0 * 1024 + 2 * 1024;
        CHECK_REL(bytes, params * 4, 1e-6);
        orr_workload_free(w);
    }
}

/* Eager TorchTitan (FSDP, no torch.compile): the memory-bound ops of one Llama layer move, per
 * token, forward 84h + 20(q + kv) + 8q + 10f bytes and backward 206h + 24(q + kv) + 18f (plus
 * 8-12 B per row for the norms' scalars), as the op-by-op trace of tests/emu/torch/llama_titan.py
 * under `orrery emulate` (torch 2.9.1, Llama-3-8B) gives them: forward 622,592 B and backward
 * 1,224,704 B per token. Compiled, the fused kernels move much less; selective AC re-runs the
 * forward's. */
static double layer_membytes(const orr_workload *w, uint32_t layer, orr_phase ph)
{
    double b = 0;
    const orr_rank *r = &w->ranks[0];
    for (size_t i = 0; i < r->nops; i++) {
        const orr_op *op = &r->ops[i];
        if (op->layer != layer || op->mb != 0 || op->phase != ph || op->kind != ORR_OP_KERNEL) continue;
        if (op->cls == ORR_CLS_GEMM || op->cls == ORR_CLS_ATTENTION_FWD || op->cls == ORR_CLS_ATTENTION_BWD) continue;
        if (strncmp(w->names[op->name], "fsdp_", 5) == 0) continue; /* FSDP's gradient cast, not the model's */
        b += (double)op->bytes;
    }
    return b;
}

/* A resolved spec from command-line flags; 0 (and a failed check) if they do not resolve. */
static int flag_spec(orr_spec *s, int argc, const char *const *argv)
{
    orr_err err;
    orr_spec_init(s);
    int ok = orr_spec_apply_flags(s, argc, (char **)argv, &err) == 0 && orr_spec_resolve(s, &err) == 0;
    CHECK_MSG(ok, "%s", err.msg);
    return ok;
}
#define FLAG_SPEC(s, argv) flag_spec(s, (int)(sizeof argv / sizeof argv[0]), argv)

static void test_eager_torch(void)
{
    orr_spec s;
    const char *argv[] = {"--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                          "--fsdp", "8", "--mbs", "2", "--seq", "8192", "--no-compile-loss", "--recompute", "none"};
    if (!FLAG_SPEC(&s, argv)) return;
    const double tok = 2.0 * 8192, h = 4096, q = 4096, kv = 1024, f = 14336;
    orr_workload *w = gen(&s);
    if (!w) return;
    double fwd = layer_membytes(w, 1, ORR_PHASE_FWD) / tok, bwd = layer_membytes(w, 1, ORR_PHASE_BWD) / tok;
    double want_f = 84 * h + 20 * (q + kv) + 8 * q + 10 * f, want_b = 206 * h + 24 * (q + kv) + 18 * f;
    printf("eager Llama-3-8B layer: forward %.0f B/token (trace %.0f), backward %.0f (trace %.0f)\n", fwd, want_f, bwd,
           want_b);
    CHECK_MSG(fwd >= want_f && fwd <= want_f + 64, "forward %.0f vs %.0f", fwd, want_f);
    CHECK_MSG(bwd >= want_b && bwd <= want_b + 64, "backward %.0f vs %.0f", bwd, want_b);
    orr_workload_free(w);
    s.compile = 1;
    s.compile_loss = 0;
    w = gen(&s);
    if (!w) return;
    double cf = layer_membytes(w, 1, ORR_PHASE_FWD) / tok, cb = layer_membytes(w, 1, ORR_PHASE_BWD) / tok;
    CHECK_MSG(cf < 0.5 * fwd && cb < 0.5 * bwd, "compiled %.0f/%.0f vs eager %.0f/%.0f", cf, cb, fwd, bwd);
    orr_workload_free(w);
    s.compile = 0;
    s.recompute = ORR_RECOMPUTE_SELECTIVE;
    w = gen(&s);
    if (!w) return;
    double rf = layer_membytes(w, 1, ORR_PHASE_RECOMPUTE) / tok;
    CHECK_MSG(rf >= fwd - 4 && rf <= fwd + 4, "selective AC recompute %.0f vs forward %.0f", rf, fwd);
    orr_workload_free(w);
}

/* TorchTitan's DTensor SP without async TP keeps the all-gathered norm outputs for the weight
 * gradients (no backward re-gather); with async TP, as Megatron, it keeps the shard and re-gathers. */
static double alloc_bytes(const orr_workload *w, const char *name, uint32_t layer)
{
    const orr_rank *r = &w->ranks[0];
    for (size_t i = 0; i < r->nops; i++) {
        const orr_op *op = &r->ops[i];
        if (op->kind == ORR_OP_ALLOC && op->layer == layer && strcmp(w->names[op->name], name) == 0)
            return (double)op->bytes;
    }
    return -1;
}

/* A GPT-style block (LayerNorm, learned positions, an ungated GELU MLP) under eager autograd keeps the
 * norms' inputs and outputs 8h, q, k and v 6h (MHA), the attention output 2h, fc1's output (GELU's
 * input) and GELU's output (fc2's input) 2 x 2f: 32h per token at f = 4h; no rotary copies. */
static void test_gpt_autograd(void)
{
    orr_spec s;
    orr_err err;
    CHECK_MSG(spec_from_text(&s, "t.yaml", "model: {base: gpt3-1.3b, dropout: 0}\n",
                             "--framework torchtitan --gpu H100 --gpus 8 --fsdp 8 --mbs 1 --seq 2048 --recompute none",
                             &err) == 0, "%s", err.msg);
    orr_workload *w = gen(&s);
    if (w) {
        double per = alloc_bytes(w, "alloc_activations", 1) / (2048.0 * 2048.0);
        CHECK_MSG(per == 32.0, "GPT block keeps %.3f h per token, want 32", per);
    }
    orr_workload_free(w);
    orr_spec_free(&s);
}

/* The bytes of the first allocation named `name` and of the first kernel named `kname` on rank 0. */
static double named_bytes(const orr_workload *w, orr_op_kind kind, const char *name)
{
    const orr_rank *r = &w->ranks[0];
    for (size_t i = 0; i < r->nops; i++)
        if (r->ops[i].kind == kind && strcmp(w->names[r->ops[i].name], name) == 0) return (double)r->ops[i].bytes;
    return -1;
}

/* Megatron-Core's precision-aware optimizer (Transformer Engine's FusedAdam): the state per parameter
 * is the master copy (16-bit remainders of bf16 parameters by default, store_param_remainders; fp32
 * for fp16 training; 2 B in fp16) and the two moments in their dtypes; the Adam step reads and writes
 * it all, reads the gradient in main_grads_dtype and writes the bf16 parameter (reading it too with
 * remainders). One GPU, so the distributed optimizer's shard is everything. */
static void test_precision_aware_optimizer(void)
{
    static const struct {
        const char *flags;
        double state_B, step_B;
    } cases[] = {
        {"", 12, 30},
        {"--use-precision-aware-optimizer", 10, 28},
        {"--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --main-grads-dtype bf16", 6, 18},
        {"--use-precision-aware-optimizer --main-params-dtype fp16 --exp-avg-dtype fp8 --exp-avg-sq-dtype fp16", 5, 16},
        {"--use-precision-aware-optimizer --precision fp16", 12, 30},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char f[320];
        snprintf(f, sizeof f, "--gpu H100 --gpus 1 --dist-opt --mbs 1 --gbs 1 --seq 1024 %s", cases[i].flags);
        orr_spec s;
        orr_err err;
        if (spec_from_text(&s, "t.yaml", "model: {base: llama3-8b, layers: 2}\n", f, &err)) {
            CHECK_MSG(0, "%s: %s", f, err.msg);
            orr_spec_free(&s);
            continue;
        }
        orr_workload *w = gen(&s);
        if (w) {
            double P = 0, state = named_bytes(w, ORR_OP_ALLOC, "optimizer_state"), step = 0;
            const orr_rank *r = &w->ranks[0];
            for (size_t k = 0; k < r->nops; k++)
                if (r->ops[k].kind == ORR_OP_KERNEL && strcmp(w->names[r->ops[k].name], "adam_step") == 0) {
                    step += (double)r->ops[k].bytes;
                    P += r->ops[k].flops / 12.0;
                }
            CHECK_MSG(P > 0 && fabs(state / P - cases[i].state_B) < 1e-6 && fabs(step / P - cases[i].step_B) < 1e-6,
                      "%s: state %.4f B, step %.4f B per parameter; want %.0f, %.0f", cases[i].flags, state / P,
                      step / P, cases[i].state_B, cases[i].step_B);
        }
        orr_workload_free(w);
        orr_spec_free(&s);
    }
    /* YAML keys; the dtypes without the optimizer, and the optimizer without --dist-opt, are errors */
    orr_spec s;
    orr_err err;
    CHECK(spec_from_text(&s, "t.yaml",
                         "model: llama3-8b\nparallel: {dist_opt: true}\noptions: {use_precision_aware_optimizer: true, "
                         "exp_avg_dtype: bf16, exp_avg_sq_dtype: fp8}\n",
                         "--gpu H100 --gpus 8", &err) == 0 &&
          s.opt_dtype[ORR_OPT_EXP_AVG] == ORR_BF16 && s.opt_dtype[ORR_OPT_EXP_AVG_SQ] == ORR_FP8);
    orr_spec_free(&s);
    static const struct { const char *yaml, *flags, *msg; } bad[] = {
        {"model: llama3-8b\noptions: {main_params_dtype: bf16}\n", "", "options.main_params_dtype"},
        {"model: llama3-8b\n", "--dist-opt --exp-avg-dtype bf16", "can only be fp32 without --use-precision-aware"},
        {"model: llama3-8b\n", "--use-precision-aware-optimizer", "needs --dist-opt"},
        {"model: llama3-8b\n", "--framework torchtitan --use-precision-aware-optimizer", "framework megatron's"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char f[200];
        snprintf(f, sizeof f, "--gpu H100 --gpus 8 %s", bad[i].flags);
        int rc = spec_from_text(&s, "t.yaml", bad[i].yaml, f, &err);
        CHECK_MSG(rc != 0 && strstr(err.msg, bad[i].msg), "%s %s -> %s", bad[i].yaml, f, rc ? err.msg : "accepted");
        orr_spec_free(&s);
    }
}

/* TorchTitan's layer SAC (selective_ac_option "3"): the rank's 3rd, 6th, ... block in model order,
 * counted over its pipeline chunks, is recomputed whole and keeps only its input; the others keep
 * what --recompute none keeps and re-run nothing. PP 2 x 2 virtual stages of 8 layers: rank 0 holds
 * layers 0-1 and 4-5 (the 1st to 4th blocks it wraps), so layer 4 alone is recomputed. */
static void test_layer_sac(void)
{
    orr_spec s, none, full;
    orr_err err;
    const char *base = "--framework torchtitan --gpu H100 --gpus 4 --fsdp 2 --pp 2 --vpp 2 --mbs 1 --gbs 4 --seq 1024";
    char f[256];
    snprintf(f, sizeof f, "%s --recompute selective --selective-ac-option 3", base);
    const char *yaml = "model: {base: llama3-8b, layers: 8}\n";
    int ok = spec_from_text(&s, "t.yaml", yaml, f, &err) == 0;
    snprintf(f, sizeof f, "%s --recompute none", base);
    ok = ok && spec_from_text(&none, "t.yaml", yaml, f, &err) == 0;
    snprintf(f, sizeof f, "%s --recompute full", base);
    ok = ok && spec_from_text(&full, "t.yaml", yaml, f, &err) == 0;
    CHECK_MSG(ok, "%s", err.msg);
    if (!ok) return;
    orr_workload *w = gen(&s), *wn = gen(&none), *wf = gen(&full);
    if (w && wn && wf) {
        const uint32_t layers[] = {0, 1, 4, 5};
        for (size_t i = 0; i < 4; i++) {
            uint32_t l = layers[i];
            const orr_workload *want = l == 4 ? wf : wn;
            double a = alloc_bytes(w, "alloc_activations", l), b = alloc_bytes(want, "alloc_activations", l);
            CHECK_MSG(a > 0 && a == b, "layer %u keeps %.0f B, want %.0f (%s)", l, a, b, l == 4 ? "full" : "none");
            double rc = layer_counts(w, 0, l, 0).gemm_flops[ORR_PHASE_RECOMPUTE],
                   rw = layer_counts(want, 0, l, 0).gemm_flops[ORR_PHASE_RECOMPUTE];
            CHECK_MSG(rc == rw, "layer %u: %.3g recomputed GEMM FLOPs, want %.3g", l, rc, rw);
        }
        CHECK(layer_counts(w, 0, 4, 0).gemm_flops[ORR_PHASE_RECOMPUTE] > 0);
    }
    orr_workload_free(w);
    orr_workload_free(wn);
    orr_workload_free(wf);
    orr_spec_free(&s);
    orr_spec_free(&none);
    orr_spec_free(&full);
    /* the option is TorchTitan's, read in mode selective only */
    static const struct { const char *flags, *msg; } bad[] = {
        {"--framework megatron --gpus 8 --recompute selective --selective-ac-option 2",
         "--selective-ac-option N (training.selective_ac_option) with"},
        {"--framework torchtitan --gpus 8 --recompute full --selective-ac-option 2", "in mode selective only"},
        {"--framework torchtitan --gpus 8 --recompute selective --selective-ac-option 0", "--selective-ac-option"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(f, sizeof f, "--gpu H100 %s", bad[i].flags);
        int rc = spec_from_text(&s, "t.yaml", "model: llama3-8b\n", f, &err);
        CHECK_MSG(rc != 0 && strstr(err.msg, bad[i].msg), "%s -> %s", bad[i].flags, rc ? err.msg : "accepted");
        orr_spec_free(&s);
    }
    /* YAML: training.selective_ac_option, op or an integer */
    CHECK(spec_from_text(&s, "t.yaml", "model: llama3-8b\ntraining: {recompute: selective, selective_ac_option: 2}\n",
                         "--framework torchtitan --gpu H100 --gpus 8", &err) == 0 && s.sac_every == 2);
    orr_spec_free(&s);
    CHECK(spec_from_text(&s, "t.yaml", "model: llama3-8b\ntraining: {recompute: selective, selective_ac_option: op}\n",
                         "--framework torchtitan --gpu H100 --gpus 8", &err) == 0 && s.sac_every == 0);
    orr_spec_free(&s);
    CHECK(spec_from_text(&s, "t.yaml", "model: llama3-8b\ntraining: {recompute: selective, selective_ac_option: x2}\n",
                         "--framework torchtitan --gpu H100 --gpus 8", &err) != 0 &&
          strstr(err.msg, "expected op or a positive integer"));
    orr_spec_free(&s);
}

static void test_dtensor_sp(void)
{
    double act[2];
    for (int async = 0; async <= 1; async++) {
        orr_spec s;
        const char *argv[] = {"--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                              "--tp", "2", "--fsdp", "4", "--sp", "--mbs", "1", "--seq", "2048", "--recompute", "none",
                              "--compile", async ? "--async-tp" : "--no-tp-comm-overlap"};
        if (!FLAG_SPEC(&s, argv)) return;
        orr_workload *w = gen(&s);
        if (!w) return;
        counts c = layer_counts(w, 0, 1, 0);
        CHECK_EQ_I64(c.coll[ORR_PHASE_FWD][ORR_COLL_ALLGATHER], 2);
        CHECK_EQ_I64(c.coll[ORR_PHASE_BWD][ORR_COLL_ALLGATHER], async ? 4 : 2);
        CHECK_EQ_I64(c.coll[ORR_PHASE_BWD][ORR_COLL_REDUCESCATTER], 2);
        act[async] = alloc_bytes(w, "alloc_activations", 1);
        orr_workload_free(w);
    }
    /* the two norm outputs: 2 B x h per token each instead of h / tp */
    const double tok = 2048, h = 4096, t = 2;
    CHECK_REL(act[0] - act[1], 2 * 2 * tok * (h - h / t), 1e-9);
}

/* Float8 training converts the blocks' linear layers: the LM head's GEMMs stay bf16. */
static void test_fp8_head(void)
{
    orr_spec s;
    const char *argv[] = {"--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                          "--fsdp", "8", "--mbs", "1", "--seq", "4096", "--precision", "fp8"};
    if (!FLAG_SPEC(&s, argv)) return;
    orr_workload *w = gen(&s);
    if (!w) return;
    int head = 0, block = 0;
    const orr_rank *rk = &w->ranks[0];
    for (size_t i = 0; i < rk->nops; i++) {
        const orr_op *op = &rk->ops[i];
        if (op->kind != ORR_OP_KERNEL || op->cls != ORR_CLS_GEMM) continue;
        if (strncmp(w->names[op->name], "lm_head_", 8) == 0) {
            head++;
            CHECK_EQ_I64(op->dtype, ORR_BF16);
        } else {
            block++;
            CHECK_EQ_I64(op->dtype, ORR_FP8);
        }
    }
    CHECK_EQ_I64(head, 3); /* forward, data gradient, weight gradient */
    CHECK(block > 0);
    orr_workload_free(w);
}

/* --fp8-recipe marks each fp8 GEMM with its operands' scaling: Transformer Engine's blockwise recipe
 * 1x128 x 128x128 blocks for a forward or data-gradient GEMM (a weight operand) and 1x128 x 1x128 for a
 * weight gradient (two activations), dense and MoE experts alike; torchao's rowwise every GEMM rowwise;
 * per-tensor (the default) and delayed nothing. The LM head stays bf16 without a scaling. Blockwise
 * casts move 4 B per element where per-tensor ones move 6 (one pass writes both orientations). */
static void test_fp8_recipes(void)
{
    const char *recipes[] = {"tensorwise", "delayed", "blockwise", "rowwise"};
    double cast_B[4] = {0};
    for (int rc = 0; rc < 4; rc++) {
        int tt = rc == 3; /* rowwise is torchao's: TorchTitan */
        orr_spec s;
        const char *mg[] = {"--model", "mixtral-8x7b", "--gpu", "H100", "--gpus", "8", "--ep", "8", "--mbs", "1",
                            "--seq", "4096", "--precision", "fp8", "--fp8-recipe", recipes[rc]};
        const char *ti[] = {"--framework", "torchtitan", "--model", "mixtral-8x7b", "--gpu", "H100", "--gpus", "8",
                            "--fsdp", "8", "--ep", "8", "--mbs", "1", "--seq", "4096", "--precision", "fp8",
                            "--fp8-recipe", recipes[rc]};
        if (!(tt ? FLAG_SPEC(&s, ti) : FLAG_SPEC(&s, mg))) return;
        orr_workload *w = gen(&s);
        if (!w) return;
        int n[4] = {0}, head = 0, experts_1d = 0, bad = 0;
        const orr_rank *rk = &w->ranks[0];
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            const char *name = w->names[op->name];
            if (op->kind != ORR_OP_KERNEL) continue;
            if (strstr(name, "fp8_cast")) cast_B[rc] += (double)op->bytes;
            if (op->cls != ORR_CLS_GEMM) continue;
            int sc = (op->flags & ORR_OPF_FP8_SCALING) >> ORR_OPF_FP8_SCALING_SHIFT;
            if (op->dtype != ORR_FP8) {
                head += strncmp(name, "lm_head_", 8) == 0;
                bad += sc != 0;
                continue;
            }
            n[sc]++;
            int wgrad = strstr(name, "wgrad") != NULL;
            int want = rc < 2 ? ORR_FP8_SCALE_TENSOR : rc == 3 ? ORR_FP8_SCALE_ROW
                                                      : wgrad ? ORR_FP8_SCALE_BLOCK_1D : ORR_FP8_SCALE_BLOCK;
            CHECK_MSG(sc == want, "%s: %s has scaling %d, want %d", recipes[rc], name, sc, want);
            experts_1d += sc == ORR_FP8_SCALE_BLOCK_1D && strstr(name, "moe_grouped_fc") != NULL;
        }
        CHECK_EQ_I64(bad, 0);
        CHECK_EQ_I64(head, 3);
        CHECK(n[rc < 2 ? 0 : rc == 3 ? 1 : 2] > 0);
        if (rc == 2) CHECK(n[ORR_FP8_SCALE_BLOCK_1D] > 0 && experts_1d > 0);
        orr_workload_free(w);
    }
    CHECK(cast_B[0] > 0);
    CHECK_REL(cast_B[1], cast_B[0], 1e-12);
    CHECK_REL(cast_B[2], cast_B[0] * 4.0 / 6.0, 1e-9);
}

/* FSDP2 all-gathers a block's parameters into one buffer on the all-gather stream; the copy-out
 * gives each parameter its own unsharded tensor on the compute stream and frees the buffer. A
 * Llama block has nine (wq, wk, wv, wo, w1, w3, w2, two norms); ZeRO-3 keeps the gathered buffer. */
static void test_fsdp_copy_out(void)
{
    for (int zero3 = 0; zero3 < 2; zero3++) {
        orr_spec s;
        const char *fsdp[] = {"--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                              "--fsdp", "8", "--mbs", "1", "--seq", "4096"};
        const char *z3[] = {"--framework", "deepspeed", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                            "--zero", "3", "--mbs", "1", "--seq", "4096"};
        if (zero3 ? !FLAG_SPEC(&s, z3) : !FLAG_SPEC(&s, fsdp)) return;
        orr_workload *w = gen(&s);
        if (!w) return;
        const orr_rank *rk = &w->ranks[0];
        int gathers = 0, parts = 0;
        double part_bytes = 0, gather_bytes = 0;
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            if (op->kind != ORR_OP_ALLOC || op->layer != 5) continue;
            const char *n = w->names[op->name];
            if (strcmp(n, "fsdp_allgather_output") == 0) {
                CHECK(op->stream != 0); /* the all-gather stream */
                gathers++;
                gather_bytes += (double)op->bytes;
            } else if (strcmp(n, "fsdp_unsharded_param") == 0) {
                CHECK_EQ_I64(op->stream, 0); /* the compute stream */
                parts++;
                part_bytes += (double)op->bytes;
            }
        }
        CHECK_EQ_I64(gathers, 2); /* forward, and again for the backward (resharded after forward) */
        CHECK_EQ_I64(parts, zero3 ? 0 : 9 * gathers);
        if (!zero3) CHECK_REL(part_bytes, gather_bytes, 1e-9);
        orr_workload_free(w);
    }
}

/* Megatron-FSDP (--framework megatron-fsdp, optim_grads_params) on Llama 3 8B, 8 GPUs, 4 micro-batches:
 * persistent 6 B per parameter of parameters (bf16 shard + fp32 main) and 2 B of gradients and 8 B of
 * Adam state, all over the 8 ranks; each block a view of its gathered buffer (no copy-out), gathered for
 * the forward and again for the backward of every micro-batch; the gradients reduce-scattered in bf16
 * after every micro-batch's backward (2 B per parameter); the root (embedding, final norm, output)
 * gathered once a step; the all-gathers 5e8 parameters ahead: ceil(5e8 / 218M) = 3 blocks beyond the
 * one computing, where FSDP2 runs one ahead (the all-gather stream's first wait comes after 1 + 4
 * gathers, TorchTitan's after 1 + 2). */
static void test_megatron_fsdp(void)
{
    for (int titan = 0; titan < 2; titan++) {
        orr_spec s;
        const char *argv[] = {"--framework", titan ? "torchtitan" : "megatron-fsdp", "--model", "llama3-8b", "--gpu",
                              "H100", "--gpus", "8", "--mbs", "1", "--gbs", "32", "--seq", "2048"};
        if (!FLAG_SPEC(&s, argv)) return;
        CHECK(titan || s.dist_opt); /* Megatron-FSDP implies the distributed optimizer */
        orr_workload *w = gen(&s);
        if (!w) return;
        const orr_rank *rk = &w->ranks[0];
        const double P = 8030261248.0; /* llama3-8b's parameters (orrery list models) */
        int gathers5 = 0, rs5 = 0, copies = 0, root_gathers = 0, before_wait = 0, waited = 0;
        double rs5_bytes = 0, layer5_params = 0;
        double param = alloc_bytes(w, "parameters", ORR_NO_LAYER), grad = alloc_bytes(w, "gradients", ORR_NO_LAYER);
        double optim = alloc_bytes(w, "optimizer_state", ORR_NO_LAYER);
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            const char *n = w->names[op->name];
            if (op->kind == ORR_OP_ALLOC && strcmp(n, "fsdp_unsharded_param") == 0) copies++;
            if (op->kind == ORR_OP_ALLOC && strcmp(n, "fsdp_allgather_output") == 0) {
                if (op->layer == 5) gathers5++, layer5_params = (double)op->bytes / 2.0;
                if (op->layer == ORR_NO_LAYER) root_gathers++;
            }
            if (op->kind == ORR_OP_COLL && op->layer == 5 && strcmp(n, "fsdp_reducescatter") == 0)
                rs5++, rs5_bytes = (double)op->bytes;
            if (op->stream == 3 && !waited) { /* the all-gather stream, until its first wait */
                if (op->kind == ORR_OP_STREAM_WAIT) waited = 1;
                else if (op->kind == ORR_OP_COLL) before_wait++;
            }
        }
        if (!titan) {
            CHECK_REL(param, 6.0 * P / 8, 1e-6);
            CHECK_REL(grad, 2.0 * P / 8, 1e-6);
            CHECK_REL(optim, 8.0 * P / 8, 1e-6);
            CHECK_EQ_I64(copies, 0);
            CHECK_EQ_I64(root_gathers, 1);
            CHECK_EQ_I64(before_wait, 5);
            CHECK_REL(rs5_bytes, 2.0 * layer5_params, 1e-9);
        } else {
            CHECK(copies > 0);
            CHECK_EQ_I64(root_gathers, 4);
            CHECK_EQ_I64(before_wait, 3);
            CHECK_REL(rs5_bytes, 4.0 * layer5_params, 1e-9); /* FSDP2 reduces in fp32 */
        }
        CHECK_EQ_I64(gathers5, 2 * 4);
        CHECK_EQ_I64(rs5, 4);
        orr_workload_free(w);
    }
}

/* Megatron-FSDP's strategies that keep the parameters whole: optim shards the fp32 main parameters and
 * Adam's moments (12 B / 8), keeps bf16 parameters and gradients whole (2 + 2 B) and reduce-scatters the
 * gradients in bf16 buckets; no_shard keeps all 16 B and all-reduces them. */
static void test_megatron_fsdp_flat(void)
{
    const double P = 8030261248.0; /* llama3-8b */
    for (int optim = 0; optim < 2; optim++) {
        orr_spec s;
        const char *argv[] = {"--framework", "megatron-fsdp", "--data-parallel-sharding-strategy",
                              optim ? "optim" : "no_shard", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                              "--mbs", "1", "--gbs", "8", "--seq", "2048"};
        if (!FLAG_SPEC(&s, argv)) return;
        orr_workload *w = gen(&s);
        if (!w) return;
        const orr_rank *rk = &w->ranks[0];
        double reduced = 0, gathered = 0;
        double param = alloc_bytes(w, "parameters", ORR_NO_LAYER), grad = alloc_bytes(w, "gradients", ORR_NO_LAYER);
        double optim_B = alloc_bytes(w, "optimizer_state", ORR_NO_LAYER);
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            const char *n = w->names[op->name];
            if (op->kind == ORR_OP_COLL && strcmp(n, optim ? "dp_grad_reducescatter" : "dp_grad_allreduce") == 0)
                reduced += (double)op->bytes;
            if (op->kind == ORR_OP_COLL && strncmp(n, "fsdp_", 5) == 0) gathered += (double)op->bytes;
        }
        CHECK_REL(param, 2.0 * P, 1e-6);
        CHECK_REL(grad, 2.0 * P, 1e-6);
        CHECK_REL(optim_B, 12.0 * P / (optim ? 8 : 1), 1e-6);
        CHECK_REL(reduced, 2.0 * P, 1e-6); /* every gradient once, in bf16 */
        CHECK(gathered == 0);
        orr_workload_free(w);
    }
}

/* Megatron-FSDP with experts (Mixtral 8x7B, 16 GPUs, EP 8: the expert-data-parallel group has 2 ranks):
 * the routed experts are sharded over that group, the rest over all 16 (6 B of parameters, 2 of
 * gradients, 8 of Adam state per parameter), and each MoE block's experts gathered and reduce-scattered
 * with it over the expert group. */
static void test_megatron_fsdp_moe(void)
{
    orr_spec s;
    const char *argv[] = {"--framework", "megatron-fsdp", "--model", "mixtral-8x7b", "--gpu", "H100", "--gpus", "16",
                          "--ep", "8", "--mbs", "1", "--gbs", "16", "--seq", "2048"};
    if (!FLAG_SPEC(&s, argv)) return;
    orr_workload *w = gen(&s);
    if (!w) return;
    const orr_model *m = &s.model;
    double experts = (double)orr_model_moe_layers(m) * m->experts / 8 * orr_model_expert_params(m);
    double dense = orr_model_params(m) - (double)orr_model_moe_layers(m) * m->experts * orr_model_expert_params(m);
    double want = dense / 16 + experts / 2;
    double param = alloc_bytes(w, "parameters", ORR_NO_LAYER), grad = alloc_bytes(w, "gradients", ORR_NO_LAYER);
    double optim = alloc_bytes(w, "optimizer_state", ORR_NO_LAYER);
    int expert_gathers = 0, expert_rs = 0;
    const orr_rank *rk = &w->ranks[0];
    for (size_t i = 0; i < rk->nops; i++) {
        const orr_op *op = &rk->ops[i];
        const char *n = w->names[op->name];
        if (op->kind == ORR_OP_COLL && op->layer == 3) {
            expert_gathers += strcmp(n, "fsdp_allgather_experts") == 0;
            expert_rs += strcmp(n, "fsdp_reducescatter_experts") == 0;
            if (strcmp(n, "fsdp_allgather_experts") == 0) CHECK_EQ_I64(w->groups[op->a].size, 2);
        }
    }
    CHECK_REL(param, 6.0 * want, 1e-6);
    CHECK_REL(grad, 2.0 * want, 1e-6);
    CHECK_REL(optim, 8.0 * want, 1e-6);
    CHECK_EQ_I64(expert_gathers, 2); /* forward and backward, one micro-batch */
    CHECK_EQ_I64(expert_rs, 1);
    orr_workload_free(w);
}

/* FSDP2 with gradient accumulation (4 micro-batches): TorchTitan without PP reduce-scatters every
 * micro-batch (its train loop leaves gradient sync on), so no unsharded gradients are accumulated;
 * under PP (torch.distributed.pipelining) and under AutoModel (get_sync_ctx) the sync waits for the
 * last micro-batch, the unsharded fp32 gradients of each unit accumulated until then. Layer 5's
 * reduce-scatters and accumulation buffers are counted. */
static void test_fsdp_grad_sync(void)
{
    static const char *const fw[3] = {"torchtitan", "torchtitan", "automodel"};
    static const char *const pp[3] = {"1", "2", "1"};
    for (int k = 0; k < 3; k++) {
        orr_spec s;
        const char *argv[] = {"--framework", fw[k], "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                              "--pp", pp[k], "--mbs", "1", "--gbs", k == 1 ? "16" : "32", "--seq", "2048"};
        if (!FLAG_SPEC(&s, argv)) return;
        orr_workload *w = gen(&s);
        if (!w) return;
        const orr_rank *rk = &w->ranks[0];
        int rs = 0, acc = 0;
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            if (op->layer != 5) continue;
            const char *n = w->names[op->name];
            if (op->kind == ORR_OP_COLL && strcmp(n, "fsdp_reducescatter") == 0) rs++;
            if (op->kind == ORR_OP_ALLOC && strcmp(n, "fsdp_accumulated_grads") == 0) acc++;
        }
        CHECK_MSG(rs == (k == 0 ? 4 : 1), "%s pp %s: %d reduce-scatters of layer 5", fw[k], pp[k], rs);
        CHECK_MSG(acc == (k == 0 ? 0 : 1), "%s pp %s: %d accumulation buffers of layer 5", fw[k], pp[k], acc);
        orr_workload_free(w);
    }
}

/* Megatron's overlap_p2p_comm with virtual stages (its default): in the warm-up and steady state
 * every send and receive runs on the pipeline stream (6), the compute stream waiting only before the
 * step that needs the tensor; the cool-down's stay on the compute stream. Llama 3 8B, PP 4, VPP 2,
 * 8 micro-batches: the same p2p ops either way, the iteration shorter with the overlap, and the
 * exposed PP communication too. */
static void test_p2p_overlap(void)
{
    int64_t t[2] = {0};
    int on_pp[2] = {0}, p2p_ops[2] = {0};
    double exposed[2] = {0};
    for (int k = 0; k < 2; k++) {
        orr_spec s;
        orr_err err;
        const char *flags = k ? "--model llama3-8b --gpu H100 --gpus 8 --pp 4 --vpp 2 --gbs 16 --seq 4096 "
                                "--no-overlap-p2p-comm"
                              : "--model llama3-8b --gpu H100 --gpus 8 --pp 4 --vpp 2 --gbs 16 --seq 4096";
        CHECK_MSG(spec_from_text(&s, "t.yaml", "", flags, &err) == 0, "%s", err.msg);
        orr_workload *w = gen(&s);
        if (!w) return;
        for (uint32_t r = 0; r < w->nranks; r++)
            for (size_t i = 0; i < w->ranks[r].nops; i++) {
                const orr_op *op = &w->ranks[r].ops[i];
                if (op->kind != ORR_OP_SEND && op->kind != ORR_OP_RECV) continue;
                p2p_ops[k]++;
                on_pp[k] += op->stream == 6;
            }
        orr_workload_free(w);
        orr_prediction p;
        if (orr_predict(&s, &p, &err) == 0) {
            t[k] = p.r.iteration_ps;
            exposed[k] = (double)p.r.mean.comm_ps[ORR_ROLE_PP];
            orr_prediction_free(&p);
        }
        orr_spec_free(&s);
    }
    CHECK(p2p_ops[0] == p2p_ops[1] && p2p_ops[0] > 0);
    CHECK_MSG(on_pp[0] > p2p_ops[0] / 2 && on_pp[1] == 0, "%d of %d p2p ops on the pipeline stream, %d without overlap",
              on_pp[0], p2p_ops[0], on_pp[1]);
    CHECK_MSG(t[0] > 0 && t[0] < t[1], "iteration %lld ps overlapped, %lld synchronous", (long long)t[0], (long long)t[1]);
    CHECK_MSG(exposed[0] < exposed[1], "exposed PP %.0f ps overlapped, %.0f synchronous", exposed[0], exposed[1]);
}

/* --lbs: TorchTitan and AutoModel under PP run one pipeline schedule step per local batch, gradient
 * accumulation over the steps (torchtitan/trainer.py's accumulation loop around pp_schedule.step;
 * AutoModel's pp_batch_size = local_batch_size). Llama 3 8B, PP 2 on 8 GPUs (dp 4), 1F1B, gbs 16: 4
 * micro-batches a rank in one step, or two steps of 2 with --lbs 2. Stage 0's 1F1B runs F0 F1 B0 F2
 * B1 F3 B2 B3 in one step: micro-batch 2's forward before micro-batch 1's backward; in two steps the
 * pipeline drains in between (F0 F1 B0 B1 | F2 F3 B2 B3). Each step's last backward reduce-scatters
 * (torch.distributed.pipelining turns the sync on for it): layer 5's twice, once per step. And what
 * --lbs refuses. */
static void test_local_batch_steps(void)
{
    for (int k = 0; k < 2; k++) {
        orr_spec s;
        const char *argv[] = {"--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                              "--pp", "2", "--mbs", "1", "--gbs", "16", "--seq", "2048", "--lbs", k ? "2" : "4"};
        if (!FLAG_SPEC(&s, argv)) return;
        orr_workload *w = gen(&s);
        if (!w) return;
        const orr_rank *rk = &w->ranks[0];
        int rs = 0;
        size_t first_f2 = SIZE_MAX, last_b1 = 0;
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            if (op->kind != ORR_OP_KERNEL && op->kind != ORR_OP_COLL) continue;
            if (op->layer == 5 && op->kind == ORR_OP_COLL && strcmp(w->names[op->name], "fsdp_reducescatter") == 0) rs++;
            if (op->phase == ORR_PHASE_FWD && op->mb == 2 && first_f2 == SIZE_MAX) first_f2 = i;
            if (op->phase == ORR_PHASE_BWD && op->mb == 1) last_b1 = i;
        }
        CHECK_MSG(rs == (k ? 2 : 1), "lbs %s: %d reduce-scatters of layer 5", k ? "2" : "4", rs);
        CHECK_MSG(k ? last_b1 < first_f2 : first_f2 < last_b1, "lbs %s: F2 at op %zu, B1 ends at op %zu",
                  k ? "2" : "4", first_f2, last_b1);
        orr_workload_free(w);
    }
    static const struct {
        const char *fw, *pp, *lbs, *msg;
    } bad[] = {
        {"megatron", "2", "2", "--lbs 2 (training.lbs) with framework megatron"},
        {"torchtitan", "1", "2", "--lbs 2 (training.lbs): a local batch size other than gbs/dp"},
        {"torchtitan", "2", "3", "--lbs 3 (training.lbs): must be a multiple of mbs (1) and divide gbs/dp (4)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        orr_spec s;
        orr_err err;
        char flags[200];
        snprintf(flags, sizeof flags, "--framework %s --model llama3-8b --gpu H100 --gpus 8 --pp %s --mbs 1 --gbs %s "
                                      "--seq 2048 --lbs %s", bad[i].fw, bad[i].pp, strcmp(bad[i].pp, "1") ? "16" : "32",
                 bad[i].lbs);
        CHECK(spec_from_text(&s, "t.yaml", "", flags, &err) != 0);
        CHECK_MSG(strstr(err.msg, bad[i].msg) != NULL, "%s", err.msg);
        orr_spec_free(&s);
    }
}

/* Context parallelism: TorchTitan (torch's context_parallel, "allgather" rotation) all-gathers the
 * repeat_kv-expanded K and V once per attention call and passes fp32 dK/dV one hop per backward
 * step, merging each step's output in fp32 (less on ranks whose later steps take half the queries);
 * Megatron's ring passes the GQA K/V chunk one hop per step both ways. */
static void test_context_parallel(void)
{
    const double elems = 8192.0 / 4 * 32 * 128; /* local tokens x query heads x head dim */
    for (int titan = 0; titan < 2; titan++) {
        orr_spec s;
        /* TorchTitan shards over the data parallelism the CP ranks leave: --fsdp 1 */
        const char *argv[] = {"--framework", titan ? "torchtitan" : "megatron", "--model", "llama3-8b", "--gpu",
                              "H100", "--gpus", "4", "--cp", "4", "--mbs", "1", "--seq", "8192", "--recompute", "none"};
        if (!FLAG_SPEC(&s, argv)) return;
        CHECK_EQ_I64(s.fsdp, titan ? 1 : 0);
        orr_workload *w = gen(&s);
        if (!w) return;
        CHECK_EQ_I64(w->nranks, 4);
        double merge_min = 1e300, merge_max = 0;
        for (uint32_t r = 0; r < w->nranks; r++) {
            const orr_rank *rk = &w->ranks[r];
            int ag = 0, sends = 0;
            double merge = 0;
            for (size_t i = 0; i < rk->nops; i++) {
                const orr_op *op = &rk->ops[i];
                const char *n = w->names[op->name];
                if (op->kind == ORR_OP_COLL && strcmp(n, "cp_allgather_kv") == 0) {
                    ag++;
                    CHECK_REL((double)op->bytes, 4 * 2 * elems * 2, 1e-9);
                }
                if (op->kind == ORR_OP_SEND) {
                    sends++;
                    CHECK(op->role == ORR_ROLE_CP);
                    /* TorchTitan: fp32 dK and dV; Megatron: the bf16 GQA K and V (8 of 32 heads), three times that backward */
                    if (titan) CHECK_REL((double)op->bytes, 8 * elems, 1e-9);
                }
                if (op->kind == ORR_OP_KERNEL && strcmp(n, "cp_sdpa_merge") == 0) merge += (double)op->bytes;
            }
            CHECK_EQ_I64(ag, titan ? 2 * 32 : 0);          /* forward and backward of every layer */
            CHECK_EQ_I64(sends, titan ? 4 * 32 : 2 * 3 * 32); /* one per backward step, or cp - 1 each way */
            if (titan) merge_min = merge < merge_min ? merge : merge_min, merge_max = merge > merge_max ? merge : merge_max;
        }
        if (titan) {
            CHECK_REL(merge_min, 32 * (6 + 3 * 27) * elems, 1e-9); /* CP rank 0: every later step is partial */
            CHECK_REL(merge_max, 32 * (6 + 3 * 38) * elems, 1e-9); /* CP rank 3: none is */
        }
        orr_workload_free(w);
    }
}

/* TorchTitan's pipelining (torch.distributed.pipelining): the last stage keeps every micro-batch's
 * logits, bf16 as TorchTitan's model returns them since 2024-10 (the eager loss's fp32 upcast is a
 * temporary), until the step ends and concatenates them once at its end; a compiled loss saves the
 * kept logits themselves, nothing more. FSDP2's accumulated gradients live per unit from its first
 * backward to its reduce-scatter. */
static void test_pp_outputs(void)
{
    for (int compiled = 0; compiled < 2; compiled++) {
        orr_spec s;
        const char *argv[] = {"--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "4",
                              "--pp", "4", "--fsdp", "1", "--mbs", "1", "--gbs", "4", "--seq", "1024", "--recompute",
                              "full", compiled ? "--compile-loss" : "--no-compile-loss"};
        if (!FLAG_SPEC(&s, argv)) return;
        orr_workload *w = gen(&s);
        if (!w) return;
        CHECK_EQ_I64(w->nranks, 4);
        const double logits = 1024.0 * 128256;
        for (uint32_t r = 0; r < w->nranks; r++) {
            int chunks = 0, merged = 0, upcasts = 0, acc = 0, acc_freed_before_rs = 0, live_acc = 0;
            double merged_bytes = 0, saved_bytes = 0;
            const orr_rank *rk = &w->ranks[r];
            for (size_t i = 0; i < rk->nops; i++) {
                const orr_op *op = &rk->ops[i];
                const char *n = w->names[op->name];
                if (op->kind == ORR_OP_ALLOC && strcmp(n, "pp_output_chunk") == 0) {
                    chunks++;
                    CHECK_REL((double)op->bytes, 2 * logits, 1e-9);
                }
                if (op->kind == ORR_OP_ALLOC && strcmp(n, "logits_fp32") == 0) {
                    upcasts++;
                    CHECK_REL((double)op->bytes, 4 * logits, 1e-9);
                }
                if (op->kind == ORR_OP_ALLOC && strcmp(n, "loss_saved") == 0) saved_bytes += (double)op->bytes;
                if (op->kind == ORR_OP_ALLOC && strcmp(n, "pp_merged_outputs") == 0) {
                    merged++;
                    merged_bytes = (double)op->bytes;
                }
                if (op->kind == ORR_OP_ALLOC && strcmp(n, "fsdp_accumulated_grads") == 0) acc++, live_acc++;
                if (op->kind == ORR_OP_FREE && strcmp(n, "free") == 0 && live_acc > 0 && i > 0 &&
                    strcmp(w->names[rk->ops[i - 1].name], "fsdp_grad_cast") == 0)
                    acc_freed_before_rs++, live_acc--;
            }
            int last = r == w->nranks - 1;
            CHECK_EQ_I64(chunks, last ? 4 : 0);
            CHECK_EQ_I64(merged, last ? 1 : 0);
            CHECK_EQ_I64(upcasts, last && !compiled ? 4 : 0);
            if (last) CHECK_REL(merged_bytes, 4 * 2 * logits, 1e-9);
            /* eager: log-softmax's fp32 result per micro-batch; compiled: the kept logits are what it saves */
            if (last) CHECK_REL(saved_bytes, compiled ? 0.0 : 4 * 4 * logits, 1e-9);
            CHECK_EQ_I64(acc, 8 + (r == 0 || last)); /* 32 layers / 4 stages, and a root with parameters */
            CHECK_EQ_I64(acc_freed_before_rs, acc);  /* each dropped at its reduce-scatter's cast */
        }
        orr_workload_free(w);
    }
}

/* Megatron-Core reduces the gradient buckets and shards the distributed optimizer over the
 * data-parallel group with the context-parallel ranks (DistributedDataParallel's intra_dp_cp_group,
 * the DistributedOptimizer's data_parallel_group): every CP rank holds the same weights. Its
 * arithmetic: fp32 main params and Adam moments, 12 B x params / (dp x cp) per rank; the fp32
 * gradient buffer reduce-scattered and the bf16 params all-gathered in full over dp x cp ranks. */
static void test_megatron_dp_cp(void)
{
    for (int dist = 0; dist < 2; dist++)
        for (uint32_t dp = 1; dp <= 4; dp *= 4) {
            orr_spec s;
            char gpus[8];
            snprintf(gpus, sizeof gpus, "%u", 2 * 2 * dp); /* tp 2, cp 2 */
            const char *argv[] = {"--framework", "megatron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", gpus,
                                  "--tp", "2", "--cp", "2", "--sp", "--mbs", "1", "--seq", "8192", "--recompute",
                                  "full", dist ? "--dist-opt" : "--no-dist-opt"};
            if (!FLAG_SPEC(&s, argv)) return;
            orr_workload *w = gen(&s);
            if (!w) return;
            const double R = dp * 2.0; /* dp x cp */
            CHECK_EQ_I64(w->nranks, 2); /* one per cp rank */
            for (uint32_t r = 0; r < w->nranks; r++) {
                const orr_rank *rk = &w->ranks[r];
                double P = -1, optim = -1, rs = 0, ar = 0, ag = 0, adam = 0;
                for (size_t i = 0; i < rk->nops; i++) {
                    const orr_op *op = &rk->ops[i];
                    const char *n = w->names[op->name];
                    if (op->kind == ORR_OP_ALLOC && strcmp(n, "parameters") == 0) P = (double)op->bytes / 2.0;
                    if (op->kind == ORR_OP_ALLOC && strcmp(n, "optimizer_state") == 0) optim = (double)op->bytes;
                    if (op->kind == ORR_OP_KERNEL && strcmp(n, "adam_step") == 0) adam += (double)op->bytes;
                    if (op->kind != ORR_OP_COLL || op->role != ORR_ROLE_DP) continue;
                    const orr_group *g = &w->groups[op->a];
                    int every = g->size == (uint32_t)R; /* tp rank 0's peers: every dp and cp rank */
                    for (uint32_t m = 0; m < g->size && every; m++) every = g->members[m] == 2 * m + rk->gpu % 2;
                    CHECK_MSG(every, "%s: group %s of %u ranks, not the %g of dp x cp", n, g->label, g->size, R);
                    if (strcmp(n, "dp_grad_reducescatter") == 0) rs += (double)op->bytes;
                    else if (strcmp(n, "dp_grad_allreduce") == 0) ar += (double)op->bytes;
                    else if (strcmp(n, "dp_param_allgather") == 0) ag += (double)op->bytes;
                }
                CHECK(P > 0);
                CHECK_REL(optim, 12.0 * P / (dist ? R : 1.0), 1e-9);
                CHECK_REL(adam, 30.0 * P / (dist ? R : 1.0), 1e-6); /* Adam on the local shard */
                CHECK_REL(dist ? rs : ar, 4.0 * P, 1e-6); /* the whole fp32 gradient buffer */
                CHECK_EQ_I64((int64_t)(dist ? ar : rs), 0);
                CHECK_REL(ag, dist ? 2.0 * P : 0.0, 1e-6);
            }
            orr_workload_free(w);
        }
}

/* Megatron without SP: a column-parallel linear's backward all-reduce of its input gradient runs on
 * the TP stream under the weight-gradient GEMM (LinearWithGradAccumulationAndAsyncCommunication; the
 * default), or, with --no-async-tensor-model-parallel-allreduce (and in Megatron-LM before
 * 2021-08-30: copy_to_model_parallel_region's blocking backward), on the compute stream after it. */
static void test_async_tp_allreduce(void)
{
    enum { COMPUTE_STREAM = 0, TP_STREAM = 2 }; /* gen.h's S_COMPUTE and S_TP */
    for (int async = 0; async < 2; async++) {
        orr_spec s;
        const char *argv[] = {"--framework", "megatron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "2",
                              "--tp", "2", "--mbs", "1", "--gbs", "1", "--seq", "2048",
                              async ? "--no-sp" : "--no-async-tensor-model-parallel-allreduce"};
        if (!FLAG_SPEC(&s, argv)) return;
        orr_workload *w = gen(&s);
        if (!w) return;
        const orr_rank *rk = &w->ranks[0];
        size_t wgrad = 0, ar = 0;
        int ar_stream = -1;
        for (size_t i = 0; i < rk->nops; i++) { /* layer 3's MLP input: fc1's weight gradient, its all-reduce */
            const orr_op *op = &rk->ops[i];
            if (op->layer != 3 || op->phase != ORR_PHASE_BWD) continue;
            const char *n = w->names[op->name];
            if (strcmp(n, "fc1_wgrad") == 0 && !wgrad) wgrad = i;
            if (strcmp(n, "tp_allreduce_grad") == 0 && !ar) ar = i, ar_stream = op->stream;
        }
        CHECK_MSG(wgrad && ar, "async %d: fc1_wgrad at %zu, its all-reduce at %zu", async, wgrad, ar);
        CHECK_MSG(async ? ar < wgrad : ar > wgrad, "async %d: all-reduce at op %zu, weight gradient at %zu", async, ar,
                  wgrad);
        CHECK_EQ_I64(ar_stream, async ? TP_STREAM : COMPUTE_STREAM);
        orr_workload_free(w);
    }
    orr_spec s;
    orr_err err = {{0}};
    const char *argv[] = {"--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "2", "--tp", "2",
                          "--no-async-tensor-model-parallel-allreduce"};
    orr_spec_init(&s);
    int rc = orr_spec_apply_flags(&s, (int)(sizeof argv / sizeof *argv), (char **)argv, &err);
    if (rc == 0) rc = orr_spec_resolve(&s, &err);
    CHECK_MSG(rc < 0 && strstr(err.msg, "no-async-tensor-model-parallel-allreduce") && strstr(err.msg, "megatron"),
              "torchtitan with the megatron flag: rc %d, %s", rc, err.msg);
    orr_spec_free(&s);
}

/* Transformer Engine's userbuffers (--tp-comm-overlap) are not NCCL: the TP collectives it overlaps
 * with the GEMMs carry ORR_OPF_USERBUFFERS (the executor slows a GEMM beside them by overlap_slowdown,
 * not nccl_gemm_slowdown); Megatron's asynchronous NCCL all-reduce without it does not, nor does
 * any DP collective. */
static void test_userbuffers_flag(void)
{
    for (int ub = 0; ub < 2; ub++) {
        orr_spec s;
        const char *argv[] = {"--framework", "megatron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "4",
                              "--tp", "2", "--dp", "2", "--mbs", "1", "--gbs", "2", "--seq", "2048", "--dist-opt",
                              ub ? "--sp" : "--no-sp", ub ? "--tp-comm-overlap" : "--no-tp-comm-overlap"};
        if (!FLAG_SPEC(&s, argv)) return;
        orr_workload *w = gen(&s);
        if (!w) return;
        const orr_rank *rk = &w->ranks[0];
        size_t tp_async = 0, flagged = 0, dp = 0, dp_flagged = 0;
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            if (op->kind != ORR_OP_COLL) continue;
            int f = (op->flags & ORR_OPF_USERBUFFERS) != 0;
            if (op->role == ORR_ROLE_TP && op->stream == 2) tp_async++, flagged += (size_t)f; /* gen.h's S_TP */
            if (op->role == ORR_ROLE_DP) dp++, dp_flagged += (size_t)f;
        }
        CHECK_MSG(tp_async > 0 && dp > 0, "tp-comm-overlap %d: %zu async TP, %zu DP collectives", ub, tp_async, dp);
        CHECK_MSG(flagged == (ub ? tp_async : 0) && dp_flagged == 0,
                  "tp-comm-overlap %d: %zu of %zu async TP collectives flagged as userbuffers, %zu DP", ub, flagged,
                  tp_async, dp_flagged);
        orr_workload_free(w);
    }
}

/* Gradient clipping: TorchTitan (torch.nn.utils.clip_grads_with_norm_) and nanotron
 * (optim/clip_grads.py) multiply every fp32 gradient by the clamped coefficient each step, 8 B per
 * local parameter (FSDP2: the rank's shard; nanotron, DP 1: all of its parameters), after the norm
 * (4 B); Megatron-LM scales only when the norm exceeds the limit (a host-side test), so not here. */
static void test_grad_clip(void)
{
    static const char *const fw[3] = {"torchtitan", "nanotron", "megatron"};
    for (int k = 0; k < 3; k++) {
        orr_spec s;
        const char *argv[] = {"--framework", fw[k], "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                              k == 0 ? "--fsdp" : "--tp", "8", "--mbs", "1", "--gbs", k == 0 ? "8" : "1",
                              "--seq", "2048"};
        if (!FLAG_SPEC(&s, argv)) return;
        orr_workload *w = gen(&s);
        if (!w) return;
        const orr_rank *rk = &w->ranks[0];
        double P = -1, norm = 0, clip = 0;
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            const char *n = w->names[op->name];
            if (op->kind == ORR_OP_ALLOC && strcmp(n, "parameters") == 0) P = (double)op->bytes / 2.0;
            if (op->kind == ORR_OP_KERNEL && strcmp(n, "grad_norm") == 0) norm += (double)op->bytes;
            if (op->kind == ORR_OP_KERNEL && strcmp(n, "grad_clip_scale") == 0) clip += (double)op->bytes;
        }
        CHECK_MSG(P > 0 && norm > 0, "%s: parameters %g, norm %g", fw[k], P, norm);
        CHECK_REL(clip, k == 2 ? 0.0 : 2.0 * norm, 1e-9);
        if (k == 1) CHECK_REL(clip, 8.0 * P, 1e-6); /* nanotron at DP 1: every parameter of the rank */
        orr_workload_free(w);
    }
}

/* Under fp8 the blocks' sequence-parallel all-gathers carry fp8 (1 B per element: Transformer
 * Engine and torchao cast before they gather), the reduce-scatters and the LM head's gather bf16;
 * --fp8-param-gather makes the distributed optimizer's parameter all-gather move the linear weights
 * in FP8 too. Checked against the bf16 run of the same job, op by op. */
static void test_fp8_gathers(void)
{
    double ag[2][2], rs[2][2], head[2][2], pg[2][2];
    for (int fp8 = 0; fp8 < 2; fp8++)
        for (int pgather = 0; pgather < 2; pgather++) {
            orr_spec s;
            const char *argv[] = {"--framework", "megatron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "16",
                                  "--tp", "8", "--sp", "--mbs", "1", "--seq", "4096", "--dist-opt",
                                  "--precision", fp8 ? "fp8" : "bf16", pgather && fp8 ? "--fp8-param-gather" : "--sp"};
            if (!FLAG_SPEC(&s, argv)) return;
            orr_workload *w = gen(&s);
            if (!w) return;
            ag[fp8][pgather] = rs[fp8][pgather] = head[fp8][pgather] = pg[fp8][pgather] = 0;
            const orr_rank *rk = &w->ranks[0];
            for (size_t i = 0; i < rk->nops; i++) {
                const orr_op *op = &rk->ops[i];
                const char *n = w->names[op->name];
                if (op->kind != ORR_OP_COLL) continue;
                if (strcmp(n, "dp_param_allgather") == 0) pg[fp8][pgather] += (double)op->bytes;
                if (op->role != ORR_ROLE_TP || op->layer != 0) {
                    if (strcmp(n, "tp_allgather_head") == 0) head[fp8][pgather] += (double)op->bytes;
                    continue;
                }
                if (op->cls == ORR_COLL_ALLGATHER) ag[fp8][pgather] += (double)op->bytes;
                if (op->cls == ORR_COLL_REDUCESCATTER) rs[fp8][pgather] += (double)op->bytes;
            }
            orr_workload_free(w);
        }
    const double tok = 4096, h = 4096; /* llama3-8b, one micro-batch */
    /* forward: QKV and FC1 inputs; backward: FC2 and projection output gradients, QKV and FC1 inputs
     * re-gathered for the weight gradients: six gathers of tok x h per layer */
    CHECK_REL(ag[0][0], 6 * tok * h * 2, 1e-9);
    CHECK_REL(ag[1][0], 6 * tok * h * 1, 1e-9);
    CHECK_REL(rs[1][0], rs[0][0], 1e-12);
    CHECK(rs[0][0] > 0);
    CHECK(head[0][0] > 0);
    CHECK_REL(head[1][0], head[0][0], 1e-12);
    /* the parameter all-gather: bf16 for everything, or FP8 for the 32 layers' linear weights */
    double linear = (4096.0 * (32 + 2 * 8) * 128 + 32 * 128 * 4096.0 + 4096.0 * 14336 * 3) / 8;
    CHECK(pg[0][0] > 0);
    CHECK_REL(pg[1][0], pg[0][0], 1e-12);
    CHECK_REL(pg[0][0] - pg[1][1], 32 * linear, 1e-9);
}

int main(void)
{
    test_fp8_gathers();
    test_layer_ops();
    test_model_flops();
    test_schedules();
    test_schedules_complete_and_symmetry();
    test_dp_buckets();
    test_eager_torch();
    test_layer_sac();
    test_gpt_autograd();
    test_precision_aware_optimizer();
    test_uneven_split();
    test_dtensor_sp();
    test_context_parallel();
    test_fp8_head();
    test_fp8_recipes();
    test_megatron_fsdp();
    test_megatron_fsdp_moe();
    test_megatron_fsdp_flat();
    test_fsdp_copy_out();
    test_fsdp_grad_sync();
    test_local_batch_steps();
    test_p2p_overlap();
    test_pp_outputs();
    test_megatron_dp_cp();
    test_grad_clip();
    test_async_tp_allreduce();
    test_userbuffers_flag();
    return check_done();
}
