/* Mixture of experts (issue 20): the catalog's MoE models against their published total and active
 * parameter counts, the model fields' checks, and (below) the expert-parallel layout, the MoE
 * layer's ops and the load-imbalance model against hand calculations. */
#include "check.h"
#include "orrery/estimate.h"
#include "orrery/orrery.h"
#include "spec_text.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Published totals and active parameters (model cards / papers): Mixtral 46.7B / 12.9B and 141B /
 * 39B (Mistral AI), DeepSeek-V2 236B / 21B, V3 671B / 37B (technical reports, without MTP), Qwen3
 * 30.5B / 3.3B and 235B / 22B (Qwen3 model cards), Llama 4 Scout 109B / 17B (Meta's card counts the
 * vision encoder too, hence 3%), Kimi K2 1.04T / 32B (Moonshot's card). gpt-oss 21B / 3.6B and 117B /
 * 5.1B: OpenAI's active counts leave out the embedding (1.16B); ours count both embeddings. */
static void catalog_params(void)
{
    static const struct { const char *name; double total, active, tol_total, tol_active; } cases[] = {
        {"mixtral-8x7b", 46.7e9, 12.9e9, 0.01, 0.01},
        {"mixtral-8x22b", 141e9, 39e9, 0.01, 0.01},
        {"deepseek-v2", 236e9, 21e9, 0.01, 0.03},
        {"deepseek-v3", 671e9, 37e9, 0.01, 0.02},
        {"qwen3-30b-a3b", 30.5e9, 3.3e9, 0.01, 0.02},
        {"qwen3-235b-a22b", 235e9, 22e9, 0.01, 0.01},
        {"gpt-oss-20b", 20.9e9, 3.6e9 + 1.16e9, 0.01, 0.13},
        {"gpt-oss-120b", 116.8e9, 5.1e9 + 1.16e9, 0.01, 0.1},
        {"llama4-scout", 109e9, 17e9, 0.03, 0.02},
        {"kimi-k2", 1.04e12, 32e9, 0.02, 0.03},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        orr_model m;
        orr_err err;
        CHECK(orr_catalog_model(cases[i].name, &m, &err) == 0);
        CHECK_REL(orr_model_params(&m), cases[i].total, cases[i].tol_total);
        CHECK_REL(orr_model_active_params(&m), cases[i].active, cases[i].tol_active);
    }
    /* DeepSeek-V3 by hand: MLA attention per layer
     * q: 7168*1536 + 1536 + 1536*128*192; kv: 7168*(512+64) + 512 + 512*128*(128+128); out 128*128*7168 */
    orr_model m;
    orr_err err;
    CHECK(orr_catalog_model("deepseek-v3", &m, &err) == 0);
    double attn = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
    CHECK_REL(orr_model_attn_params(&m), attn, 1e-12);
    CHECK(!orr_model_layer_is_moe(&m, 2) && orr_model_layer_is_moe(&m, 3) && orr_model_moe_layers(&m) == 58);
    double expert = 3.0 * 7168 * 2048;
    CHECK_REL(orr_model_layer_params_at(&m, 3), attn + 2 * 7168.0 + 256.0 * 7168 + 257 * expert, 1e-12);
    CHECK(strcmp(orr_model_attn_kind_name(&m), "mla") == 0);
}

/* The MoE and attention fields of a custom model: what is given, what is derived, what is refused. */
static void model_fields(void)
{
    orr_spec s;
    orr_err err;
    const char *ok = "model: {base: mixtral-8x7b, experts: 16, top_k: 4, dense_layers: 2, moe_layer_freq: 2}\n";
    orr_spec_init(&s);
    CHECK(orr_spec_load_text(&s, "t.yaml", ok, strlen(ok), &err) == 0);
    CHECK(s.model.experts == 16 && orr_model_moe_layers(&s.model) == 15); /* 2, 4, ..., 30 */
    static const struct { const char *yaml, *msg; } bad[] = {
        {"model: {base: mixtral-8x7b, top_k: 9}\n", "top_k (9) must be at most experts (8)"},
        {"model: {base: llama3-8b, top_k: 2}\n", "only with experts"},
        {"model: {base: llama3-8b, attention: mha}\n", "attention: mha needs kv_heads (8) equal to heads (32)"},
        {"model: {base: llama3-8b, attention: mla}\n", "mla needs kv_lora_rank"},
        {"model: {base: mixtral-8x7b, dense_layers: 32}\n", "dense_layers (32) must be fewer than layers (32)"},
        {"model: {base: mixtral-8x7b, shared_experts: 1}\n", "shared_experts and shared_expert_ffn go together"},
        {"model: {base: llama3-8b, experts: 8, top_k: 2}\n", "needs top_k and expert_ffn"},
        {"model: {base: deepseek-v3, router_group_topk: 0}\n", "router_groups and router_group_topk go together"},
        {"model: {base: deepseek-v3, router_groups: 7}\n", "router_groups (7) must be at least 2 and divide experts"},
        {"model: {base: mixtral-8x7b, router_groups: 8, router_group_topk: 1}\n", "its groups must hold top_k (2) experts"},
        {"model: {base: llama3-8b, router_groups: 8, router_group_topk: 4}\n", "only with experts"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        orr_spec_init(&s);
        int rc = orr_spec_load_text(&s, "t.yaml", bad[i].yaml, strlen(bad[i].yaml), &err);
        CHECK_MSG(rc != 0 && strstr(err.msg, bad[i].msg), "%s -> %s", bad[i].yaml, rc ? err.msg : "accepted");
    }
}

/* A small MoE model on 8 GPUs, EP 8 (one expert per rank), every GPU simulated, all at the same speed
 * (no GPU-to-GPU variability: the imbalance alone makes the stragglers). */
static int small_moe(orr_spec *s, const char *extra_flags, orr_err *err)
{
    static const char *yaml = "model: {layers: 2, hidden: 1024, heads: 8, ffn: 4096, vocab: 1024, seq: 4096, mlp: "
                              "swiglu, norm: rmsnorm, bias: false, dropout: 0, tied_embeddings: false, experts: 8, "
                              "top_k: 2, expert_ffn: 4096}\n";
    char flags[256];
    snprintf(flags, sizeof flags, "--gpu H100-SXM --gpus 8 --ep 8 --mbs 1 --gbs 8 --no-symmetry --variability none %s",
             extra_flags);
    return spec_from_text(s, "t.yaml", yaml, flags, err);
}

/* The experts' kernels of one MoE layer and micro-batch, forward and backward, on a rank whose one
 * expert computes m tokens (hidden 1024, expert_ffn 4096, SwiGLU, bf16): grouped FC1 (m x 8192 x 1024),
 * SwiGLU (3 x m x 4096 x 2 B), FC2 (m x 1024 x 4096); backward FC2 dgrad and wgrad, SwiGLU backward
 * (5 x m x 4096 x 2 B), FC1 dgrad and wgrad. */
static int64_t expert_kernels_ps(const orr_gpu *g, uint32_t m)
{
    const uint32_t h = 1024, fe = 4096;
    return orr_est_gemm_ps(g, m, 2 * fe, h, 1, ORR_BF16, 0, 0) +
           orr_est_memory_bound_ps(g, 3ull * m * fe * 2) + orr_est_gemm_ps(g, m, h, fe, 1, ORR_BF16, 0, 0) +
           orr_est_gemm_ps(g, m, fe, h, 1, ORR_BF16, 0, 0) + orr_est_gemm_ps(g, fe, h, m, 1, ORR_BF16, 0, 0) +
           orr_est_memory_bound_ps(g, 5ull * m * fe * 2) + orr_est_gemm_ps(g, m, h, 2 * fe, 1, ORR_BF16, 0, 0) +
           orr_est_gemm_ps(g, 2 * fe, h, m, 1, ORR_BF16, 0, 0);
}

/* --moe-imbalance 2: EP rank 0 receives twice the average of routed tokens (4096 tokens x top-2 =
 * 8192 copies on average, 16384 on rank 0), the other seven share the rest. Every rank simulated: the
 * iteration must slow by exactly what rank 0's extra expert work costs, per MoE layer (2) and
 * micro-batch (1): sum over its expert kernels of t(16384 tokens) - t(8192 tokens); the all-to-alls
 * move the balanced volume, so nothing else changes. The other ranks wait that long in the
 * combine all-to-all (expert imbalance wait, less their own saving). */
static void imbalance(void)
{
    orr_spec bal, imb;
    orr_err err;
    CHECK(small_moe(&bal, "", &err) == 0);
    CHECK_MSG(small_moe(&imb, "--moe-imbalance 2", &err) == 0, "%s", err.msg);
    orr_prediction pb, pi;
    CHECK(orr_predict(&bal, &pb, &err) == 0);
    CHECK(orr_predict(&imb, &pi, &err) == 0);
    int64_t hand = 2 * (expert_kernels_ps(&bal.gpu, 16384) - expert_kernels_ps(&bal.gpu, 8192));
    int64_t sim = pi.r.iteration_ps - pb.r.iteration_ps;
    printf("imbalance 2x on one of 8 EP ranks: iteration %.3f -> %.3f ms, slowdown %.3f ms, hand calculation %.3f ms\n",
           pb.r.iteration_ps / 1e9, pi.r.iteration_ps / 1e9, sim / 1e9, hand / 1e9);
    CHECK(hand > 0);
    CHECK_MSG(llabs(sim - hand) <= 1000, "simulated %lld ps, hand %lld ps", (long long)sim, (long long)hand);
    /* the cold ranks (7 of 8, with 8192 x 6/7 copies each) wait for rank 0 in the EP collectives: the
     * mean expert imbalance wait is 7/8 of the hot-cold difference */
    int64_t cold = 2 * (expert_kernels_ps(&bal.gpu, 16384) - expert_kernels_ps(&bal.gpu, 8192 * 6 / 7));
    CHECK(pb.r.mean.ep_wait_ps == 0);
    CHECK_REL((double)pi.r.mean.ep_wait_ps, 7.0 / 8.0 * cold, 0.02);
    /* the same loads from a file (tokens per EP rank, in any order): 14 and seven 6s, mean 7, so 2x
     * and 6/7 of the average: the same prediction */
    char dir[] = "/tmp/orr_test_moe_XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/loads.csv", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("tokens\n6\n6\n6\n14\n6\n6\n6\n6\n", f);
        fclose(f);
    }
    char flag[96];
    snprintf(flag, sizeof flag, "--moe-imbalance %s", path);
    orr_spec fs;
    orr_prediction pf;
    CHECK_MSG(small_moe(&fs, flag, &err) == 0, "%s", err.msg);
    CHECK(fs.nmoe_loads == 8 && fabs(fs.moe_loads[0] - 2.0) < 1e-12);
    CHECK(orr_predict(&fs, &pf, &err) == 0);
    CHECK_EQ_I64(pf.r.iteration_ps, pi.r.iteration_ps);
    orr_prediction_free(&pf);
    orr_spec_free(&fs);
    f = fopen(path, "w");
    if (f) {
        fputs("tokens\n1\n2\n", f);
        fclose(f);
    }
    CHECK(small_moe(&fs, flag, &err) != 0 && strstr(err.msg, "2 rows of tokens, expected one per expert-parallel rank"));
    remove(path);
    rmdir(dir);
    orr_prediction_free(&pb);
    orr_prediction_free(&pi);
    orr_spec_free(&bal);
    orr_spec_free(&imb);
    /* a capacity factor of 1.25 caps rank 0 at 1.25 x its share: the slowdown shrinks to that */
    orr_spec cap;
    CHECK(small_moe(&cap, "--moe-imbalance 2 --moe-capacity-factor 1.25", &err) == 0);
    orr_spec_init(&bal);
    CHECK(small_moe(&bal, "", &err) == 0);
    CHECK(orr_predict(&bal, &pb, &err) == 0);
    CHECK(orr_predict(&cap, &pi, &err) == 0);
    hand = 2 * (expert_kernels_ps(&bal.gpu, 10240) - expert_kernels_ps(&bal.gpu, 8192));
    CHECK_MSG(llabs(pi.r.iteration_ps - pb.r.iteration_ps - hand) <= 1000, "capacity: %lld vs %lld",
              (long long)(pi.r.iteration_ps - pb.r.iteration_ps), (long long)hand);
    orr_prediction_free(&pb);
    orr_prediction_free(&pi);
    orr_spec_free(&bal);
    orr_spec_free(&cap);
}

/* A resolved spec on an H100 from YAML text and flags. */
static int resolve_text(orr_spec *s, const char *yaml, const char *flags, orr_err *err)
{
    char f[256];
    snprintf(f, sizeof f, "--gpu H100-SXM %s", flags);
    return spec_from_text(s, "t.yaml", yaml, f, err);
}

/* etp not given: Megatron-Core's --expert-tensor-parallel-size None is the tp (arguments.py
 * _add_moe_args, TransformerConfig); TorchTitan's experts are not split; given, it is taken. */
static void etp_default(void)
{
    static const struct { const char *yaml, *flags; uint32_t etp, edp; } cases[] = {
        {"model: mixtral-8x22b\n", "--gpus 128 --tp 4 --sp --pp 8 --ep 2", 4, 2}, /* Megatron's MoE README mapping */
        {"model: mixtral-8x22b\nparallel: {etp: 1}\n", "--gpus 128 --tp 4 --sp --pp 8 --ep 2", 1, 8},
        {"model: mixtral-8x22b\n", "--gpus 128 --tp 4 --sp --pp 8 --ep 2 --etp 2", 2, 4},
        {"model: mixtral-8x7b\n", "--gpus 16 --tp 2 --sp --ep 4 --framework megatron-fsdp", 2, 2},
        {"model: mixtral-8x7b\n", "--gpus 8 --fsdp 8 --ep 4 --framework torchtitan", 1, 2},
        {"model: llama3-8b\n", "--gpus 8 --tp 4 --sp", 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        orr_spec s;
        orr_err err;
        CHECK_MSG(resolve_text(&s, cases[i].yaml, cases[i].flags, &err) == 0, "%s: %s", cases[i].flags, err.msg);
        CHECK_MSG(s.etp == cases[i].etp && s.edp == cases[i].edp, "%s%s: etp %u edp %u", cases[i].yaml, cases[i].flags,
                  s.etp, s.edp);
        orr_spec_free(&s);
    }
    /* the default follows the tp of each resolve (a search changes tp on one spec) */
    orr_spec s;
    orr_err err;
    CHECK(resolve_text(&s, "model: mixtral-8x22b\n", "--gpus 128 --tp 4 --sp --pp 8 --ep 2 --gbs 64", &err) == 0);
    s.tp = 2;
    s.dp = 0;
    CHECK(orr_spec_resolve(&s, &err) == 0 && s.etp == 2);
    orr_spec_free(&s);
    /* a default that does not fit names itself: Megatron rejects TP 2 x EP 8 on a stage of 8 GPUs too */
    CHECK(resolve_text(&s, "model: mixtral-8x7b\n", "--gpus 16 --tp 2 --sp --pp 2 --ep 8", &err) != 0);
    CHECK_MSG(strstr(err.msg, "ep*etp (16) must divide") && strstr(err.msg, "not given: Megatron-Core's default"),
              "%s", err.msg);
    orr_spec_free(&s);
    CHECK(resolve_text(&s, "model: mixtral-8x7b\n", "--gpus 16 --tp 2 --sp --pp 2 --ep 8 --etp 1", &err) == 0);
    orr_spec_free(&s);
}

/* Invalid layouts are errors that say why. */
static void layouts(void)
{
    static const struct { const char *yaml, *flags, *msg; } bad[] = {
        {"model: llama3-8b\n", "--gpus 8 --ep 8", "model llama3-8b has no experts"},
        {"model: mixtral-8x7b\n", "--gpus 8 --ep 16", "ep*etp (16) must divide the GPUs of a pipeline stage"},
        {"model: mixtral-8x7b\n", "--gpus 16 --ep 16", "experts (8) must be divisible by ep"},
        {"model: mixtral-8x7b\n", "--gpus 8 --tp 2 --ep 4", "needs --sp"},
        {"model: mixtral-8x7b\n", "--gpus 8 --ep 4 --moe-imbalance 5", "at most 4 x the average"},
        {"model: mixtral-8x7b\n", "--gpus 8 --ep 8 --framework deepspeed --zero 1", "--framework deepspeed with model"},
        {"model: mixtral-8x7b\n", "--gpus 8 --ep 8 --framework nanotron", "--framework nanotron with model"},
        {"model: mixtral-8x7b\n", "--gpus 8 --fsdp 4 --ep 8 --framework torchtitan", "--ep 8 (parallel.ep) with framework torchtitan"},
        {"model: mixtral-8x7b\n", "--gpus 8 --tp 2 --sp --ep 4 --framework torchtitan", "--tp 2 (parallel.tp) with framework torchtitan"},
        {"model: mixtral-8x7b\n", "--gpus 8 --ep 4 --etp 2 --framework torchtitan", "--etp 2 (parallel.etp) with framework torchtitan"},
        {"model: mixtral-8x7b\n", "--gpus 8 --ep 8 --bf16-params", "--bf16-params (parallel.bf16_params) with"},
        {"model: mixtral-8x7b\n", "--gpus 8 --ep 8 --plain-experts", "--plain-experts (parallel.plain_experts) with"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        orr_spec s;
        orr_err err;
        orr_spec_init(&s);
        CHECK(orr_spec_load_text(&s, "t.yaml", bad[i].yaml, strlen(bad[i].yaml), &err) == 0);
        char buf[256];
        snprintf(buf, sizeof buf, "--gpu H100-SXM %s", bad[i].flags);
        char *argv[32];
        int argc = 0;
        for (char *t = strtok(buf, " "); t && argc < 32; t = strtok(NULL, " ")) argv[argc++] = t;
        int rc = orr_spec_apply_flags(&s, argc, argv, &err) || orr_spec_resolve(&s, &err);
        CHECK_MSG(rc && strstr(err.msg, bad[i].msg), "%s -> %s", bad[i].flags, rc ? err.msg : "accepted");
        orr_spec_free(&s);
    }
    /* parallel folding: 16 GPUs, tp 2, ep 4, etp 1: edp = 2*8/4 = 4; expert optimizer state over edp */
    orr_spec s;
    orr_err err;
    orr_spec_init(&s);
    const char *y = "model: mixtral-8x7b\n";
    CHECK(orr_spec_load_text(&s, "t.yaml", y, strlen(y), &err) == 0);
    char *argv[] = {"--gpu", "H100-SXM", "--gpus", "16", "--tp", "2", "--sp", "--ep", "4", "--etp", "1", "--gbs", "8",
                    "--seq", "1024"};
    CHECK(orr_spec_apply_flags(&s, 15, argv, &err) == 0 && orr_spec_resolve(&s, &err) == 0);
    CHECK_EQ_I64(s.edp, 4);
    orr_workload *w = orr_gen_training(&s, &err);
    CHECK(w != NULL);
    int ep_groups = 0, a2a = 0, counts = 0;
    uint32_t a2a_group = UINT32_MAX, counts_group = UINT32_MAX;
    for (size_t g = 0; w && g < w->ngroups; g++)
        if (w->groups[g].role == ORR_ROLE_EP && w->groups[g].size == 4) ep_groups++;
    for (size_t i = 0; w && i < w->ranks[0].nops; i++) {
        const orr_op *op = &w->ranks[0].ops[i];
        if (op->kind != ORR_OP_COLL || op->role != ORR_ROLE_EP) continue;
        if (op->cls == ORR_COLL_ALLTOALL) a2a++, a2a_group = op->a;
        if (op->cls == ORR_COLL_ALLGATHER) counts++, counts_group = op->a;
    }
    CHECK(ep_groups >= 2); /* the EP group and the tp_ep group over the same 4 ranks (etp 1) */
    CHECK_EQ_I64(a2a, 32 * 2 * 2); /* layers x (dispatch, combine) x (fwd, bwd) */
    /* token_dispatcher.py preprocess: the tokens per expert all-gathered over tp_ep in the forward only
     * (the backward's all-to-alls reuse the forward's splits), on a communicator of its own */
    CHECK_EQ_I64(counts, 32);
    CHECK(counts_group != a2a_group);
    orr_workload_free(w);
    orr_spec_free(&s);
    /* TorchTitan's AllToAllTokenDispatcher (models/common/token_dispatcher.py _token_count_exchange):
     * the counts all-to-all'ed on the EP group itself, in the forward only (2 layers, 1 micro-batch) */
    CHECK(small_moe(&s, "--framework torchtitan", &err) == 0);
    w = orr_gen_training(&s, &err);
    CHECK(w != NULL);
    int tt_counts = 0, tt_gathers = 0;
    uint32_t tt_counts_group = UINT32_MAX, tt_a2a_group = UINT32_MAX;
    for (size_t i = 0; w && i < w->ranks[0].nops; i++) {
        const orr_op *op = &w->ranks[0].ops[i];
        if (op->kind != ORR_OP_COLL || op->role != ORR_ROLE_EP) continue;
        int is_counts = strncmp(w->names[op->name], "ep_alltoall_counts_", 19) == 0;
        if (is_counts) tt_counts++, tt_counts_group = op->a;
        else if (op->cls == ORR_COLL_ALLTOALL) tt_a2a_group = op->a;
        /* after the reorder, as dispatch issues it */
        CHECK(!is_counts || (i > 0 && strcmp(w->names[w->ranks[0].ops[i - 1].name], "moe_permute") == 0));
        tt_gathers += op->cls == ORR_COLL_ALLGATHER;
        CHECK(!is_counts || op->phase == ORR_PHASE_FWD);
    }
    CHECK_EQ_I64(tt_counts, 2);
    CHECK_EQ_I64(tt_gathers, 0);
    CHECK(tt_counts_group == tt_a2a_group);
    orr_workload_free(w);
    orr_spec_free(&s);
}

/* Sum of the bytes of rank 0's ALLOCs named `name`. */
static double alloc_sum(const orr_workload *w, const char *name)
{
    double b = 0;
    for (size_t i = 0; i < w->ranks[0].nops; i++) {
        const orr_op *op = &w->ranks[0].ops[i];
        if (op->kind == ORR_OP_ALLOC && strcmp(w->names[op->name], name) == 0) b += (double)op->bytes;
    }
    return b;
}

/* Rank 0's kernels whose names start with `prefix`: how many, and their bytes. */
static int kernels_prefixed(const orr_workload *w, const char *prefix, double *bytes)
{
    int n = 0;
    *bytes = 0;
    for (size_t i = 0; i < w->ranks[0].nops; i++) {
        const orr_op *op = &w->ranks[0].ops[i];
        if (op->kind == ORR_OP_KERNEL && strncmp(w->names[op->name], prefix, strlen(prefix)) == 0)
            n++, *bytes += (double)op->bytes;
    }
    return n;
}

/* Rank 0's collectives named `name`: how many, the size of the group of each (0 if none or mixed). */
static int colls_named(const orr_workload *w, const char *name, uint32_t *group_size, double *bytes)
{
    int n = 0;
    *group_size = 0;
    for (size_t i = 0; i < w->ranks[0].nops; i++) {
        const orr_op *op = &w->ranks[0].ops[i];
        if (op->kind != ORR_OP_COLL || strcmp(w->names[op->name], name) != 0) continue;
        uint32_t g = w->groups[op->a].size;
        *group_size = n == 0 || *group_size == g ? g : 0;
        *bytes = (double)op->bytes;
        n++;
    }
    return n;
}

/* FSDP2 + EP (--framework torchtitan) against a hand calculation: 8 GPUs, fsdp 8, 2 layers of hidden
 * 1024, 8 heads, 8 experts of expert_ffn 512 (SwiGLU), top 2, vocabulary 1024 untied.
 * Per layer, dense: attention 4 x 1024^2 = 4,194,304, two RMSNorms 2,048, router 8 x 1024 = 8,192:
 * 4,204,544; one expert 3 x 1024 x 512 = 1,572,864. Root: embedding 1,048,576, output 1,048,576 and
 * the final norm as the recipe counts it (2 x 1024): 2,099,200. Dense in all 2 x 4,204,544 + 2,099,200
 * = 10,508,288 over the fsdp group (8); the experts, 8/ep per EP rank and 2 layers, over
 * efsdp = 8/ep: per GPU 2 x 1,572,864 x (8/ep) / (8/ep) = 3,145,728 whatever ep. Per GPU
 * 10,508,288 / 8 + 3,145,728 = 4,459,264 parameters: fp32 shards 17,837,056 B, fp32 sharded gradients
 * 17,837,056 B, Adam's two fp32 moments 35,674,112 B. Collectives per MoE block: the dense all-gather
 * 4,204,544 x 2 B = 8,409,088 B over 8 GPUs; with ep 2 the experts' all-gather (4 local experts,
 * 6,291,456 x 2 B = 12,582,912 B) and reduce-scatter (x 4 B = 25,165,824 B) over efsdp = 4; with
 * ep 8 (efsdp 1) no expert collective. With --bf16-params (ep 2) the shards, their gradients and
 * Adam's moments are bf16: 8,918,528 B, 8,918,528 B and 17,837,056 B; the collectives as in fp32 (the
 * gather in bf16, the reduction in fp32). With --plain-experts (ep 8, efsdp 1) the experts leave the
 * units: sharded gradients 4 x 1,313,536 = 5,254,144 B, the experts' own 4 x 3,145,728 = 12,582,912 B.
 * The gathered unit of an MoE block then holds its dense part only. */
static void fsdp_ep(void)
{
    static const char *yaml = "model: {layers: 2, hidden: 1024, heads: 8, ffn: 4096, vocab: 1024, seq: 1024, mlp: "
                              "swiglu, norm: rmsnorm, bias: false, dropout: 0, tied_embeddings: false, experts: 8, "
                              "top_k: 2, expert_ffn: 512}\n";
    const uint32_t eps[4] = {2, 8, 2, 8};
    const char *const extra[4] = {"", "", " --bf16-params", " --plain-experts"};
    for (int i = 0; i < 4; i++) {
        char flags[160];
        snprintf(flags, sizeof flags, "--gpu H100-SXM --gpus 8 --framework torchtitan --ep %u --mbs 1 --gbs 8%s", eps[i],
                 extra[i]);
        orr_spec s;
        orr_err err;
        CHECK_MSG(spec_from_text(&s, "t.yaml", yaml, flags, &err) == 0, "%s", err.msg);
        CHECK_EQ_I64(s.fsdp, 8);
        CHECK_EQ_I64(s.edp, 8 / eps[i]);
        orr_workload *w = orr_gen_training(&s, &err);
        CHECK_MSG(w != NULL, "%s", err.msg);
        if (!w) {
            orr_spec_free(&s);
            continue;
        }
        const double per_gpu = 10508288.0 / 8 + 3145728.0, B = i == 2 ? 2.0 : 4.0; /* --bf16-params: bf16 */
        CHECK_REL(alloc_sum(w, "parameters"), B * per_gpu, 1e-6);
        if (i == 3) { /* plain experts: their fp32 gradients a buffer of their own, no unit holds them */
            CHECK_REL(alloc_sum(w, "fsdp_sharded_grads"), 4.0 * 10508288.0 / 8, 1e-6);
            CHECK_REL(alloc_sum(w, "gradients"), 4.0 * 3145728.0, 1e-6);
        } else {
            CHECK_REL(alloc_sum(w, "fsdp_sharded_grads"), B * per_gpu, 1e-6);
            CHECK_EQ_I64(alloc_sum(w, "gradients"), 0);
        }
        CHECK_REL(alloc_sum(w, "adam_exp_avg") + alloc_sum(w, "adam_exp_avg_sq"), 2.0 * B * per_gpu, 1e-6);
        uint32_t g = 0;
        double bytes = 0;
        CHECK(colls_named(w, "fsdp_allgather", &g, &bytes) > 0);
        CHECK_EQ_I64(g, 8);
        CHECK(colls_named(w, "fsdp_reducescatter", &g, &bytes) > 0);
        CHECK_EQ_I64(g, 8);
        int ag = colls_named(w, "fsdp_allgather_experts", &g, &bytes);
        if (eps[i] == 2) {
            CHECK(ag >= 2 && g == 4);
            CHECK_REL(bytes, 12582912.0, 1e-9);
            CHECK(colls_named(w, "fsdp_reducescatter_experts", &g, &bytes) == 2 && g == 4);
            CHECK_REL(bytes, 25165824.0, 1e-9);
        } else {
            CHECK_EQ_I64(ag, 0);
            CHECK_EQ_I64(colls_named(w, "fsdp_reducescatter_experts", &g, &bytes), 0);
        }
        /* the MoE MLP's token exchange is the same all-to-all as under Megatron, over the EP group */
        CHECK(colls_named(w, "ep_alltoall_dispatch", &g, &bytes) == 2 && g == eps[i]);
        orr_workload_free(w);
        orr_spec_free(&s);
    }
}

/* NeMo AutoModel's recipe (torchtitan.c) against TorchTitan's with the same two switches it implies
 * (--bf16-params --plain-experts): the same parameters and collectives; the routing scores applied
 * inside the compiled expert activation, so each routed copy keeps 2h bytes less (h = 1024; balanced
 * routing: 1024 tokens x top 2 copies received per rank, 2 layers: 8 MiB); its bf16 cross-entropy
 * keeps 2 B per logit instead of the eager fp32 log-softmax's 4 (1024 tokens x 1024 vocabulary). And
 * what the framework decides or refuses. */
static void automodel(void)
{
    static const char *yaml = "model: {layers: 2, hidden: 1024, heads: 8, ffn: 4096, vocab: 1024, seq: 1024, mlp: "
                              "swiglu, norm: rmsnorm, bias: false, dropout: 0, tied_embeddings: false, experts: 8, "
                              "top_k: 2, expert_ffn: 512}\n";
    const char *const fw[2] = {"--framework torchtitan --bf16-params --plain-experts", "--framework automodel"};
    double moe[2] = {0}, loss[2] = {0}, nll[2] = {0}, params[2] = {0}, grads[2] = {0};
    int eager_norms[2] = {0}, norms[2] = {0}, ropes_fwd[2] = {0}, ropes_bwd[2] = {0}, softmax[2] = {0};
    double b_norm = 0, b_rope_fwd = 0, b_rope_bwd = 0, b_softmax = 0, b_unused;
    for (int i = 0; i < 2; i++) {
        char flags[160];
        snprintf(flags, sizeof flags, "--gpu H100-SXM --gpus 8 --ep 8 --mbs 1 --gbs 8 %s", fw[i]);
        orr_spec s;
        orr_err err;
        CHECK_MSG(spec_from_text(&s, "t.yaml", yaml, flags, &err) == 0, "%s", err.msg);
        CHECK(s.bf16_params == 1 && s.plain_experts == 1 && s.fsdp == 8);
        orr_workload *w = orr_gen_training(&s, &err);
        CHECK_MSG(w != NULL, "%s", err.msg);
        if (w) {
            moe[i] = alloc_sum(w, "moe_activations");
            loss[i] = alloc_sum(w, "loss_saved");
            nll[i] = alloc_sum(w, "nll_grad");
            params[i] = alloc_sum(w, "parameters");
            grads[i] = alloc_sum(w, "gradients");
            eager_norms[i] = kernels_prefixed(w, "rmsnorm_", &b_unused);
            norms[i] = kernels_prefixed(w, "input_norm", &b_norm);
            ropes_fwd[i] = kernels_prefixed(w, "rotary_q_", &b_rope_fwd);
            ropes_bwd[i] = kernels_prefixed(w, "rotary_bwd_q_", &b_rope_bwd);
            softmax[i] = kernels_prefixed(w, "log_softmax", &b_softmax);
            orr_workload_free(w);
        }
        orr_spec_free(&s);
    }
    CHECK_REL(moe[0] - moe[1], 2.0 * 1024 * 2 * 2.0 * 1024, 1e-9);
    CHECK_REL(loss[0], 4.0 * 1024 * 1024, 1e-9);
    CHECK_REL(loss[1], 2.0 * 1024 * 1024, 1e-9);
    CHECK_REL(nll[0], 4.0 * 1024 * 1024, 1e-9);
    CHECK_REL(nll[1], 2.0 * 1024 * 1024, 1e-9);
    CHECK_REL(params[1], params[0], 1e-12);
    CHECK_REL(grads[1], grads[0], 1e-12);
    /* its Transformer Engine RMSNorm: one kernel each way (input_norm, input_norm_bwd in 2 layers),
     * 4 B an element forward, 6 backward, over 1024 x 1024 elements; TorchTitan's eager norm is
     * op by op. Its bf16 rotary on q (1024 x 1024 elements): 7 kernels and 18 B an element forward, 8
     * and 20 backward, per layer. Its loss: log-softmax forward and backward, 4 and 6 B a logit. */
    CHECK(eager_norms[0] > 0 && eager_norms[1] == 0);
    CHECK(norms[0] == 0 && norms[1] == 4);
    CHECK_REL(b_norm, 2 * (4.0 + 6.0) * 1024 * 1024, 1e-9);
    CHECK(ropes_fwd[1] == 2 * 7 && ropes_bwd[1] == 2 * 8);
    CHECK_REL(b_rope_fwd, 2 * 18.0 * 1024 * 1024, 1e-9);
    CHECK_REL(b_rope_bwd, 2 * 20.0 * 1024 * 1024, 1e-9);
    CHECK(softmax[0] == 0 && softmax[1] == 2);
    CHECK_REL(b_softmax, (4.0 + 6.0) * 1024 * 1024, 1e-9);
    static const struct {
        const char *flags, *msg;
    } bad[] = {
        {"--gpus 8 --tp 2 --framework automodel", "--tp 2 (parallel.tp) with framework automodel"},
        {"--gpus 8 --ep 8 --compile --framework automodel", "--compile (options.compile) with framework automodel"},
        {"--gpus 8 --ep 8 --dist-opt --framework automodel", "--dist-opt (parallel.dist_opt) with framework automodel"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        orr_spec s;
        orr_err err;
        char flags[160];
        snprintf(flags, sizeof flags, "--gpu H100-SXM %s", bad[i].flags);
        CHECK(spec_from_text(&s, "t.yaml", yaml, flags, &err) != 0);
        CHECK_MSG(strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) == 0, "%s", err.msg);
        orr_spec_free(&s);
    }
}

/* The EP all-to-all through the three network backends: 16 experts over 16 GPUs on two nodes (every
 * GPU's all-to-all crosses the fabric for half its peers), every GPU simulated. The flow and packet
 * backends schedule its pairwise flows on the rail-optimised fat tree; alone on the fabric they must
 * agree with the analytic cost (docs/models.md section 7) within 2%, and the all-to-all must show as
 * exposed EP communication in each. */
/* DeepEP sends a token once to each EP rank holding one of its experts. The DeepSeek-V3 proxy layer
 * of Megatron-Core's MoE performance test (32 experts, top 8, EP 8: 4 experts a rank): ungrouped, a
 * rank misses all 8 with C(28,8)/C(32,8) = 3108105/10518300, so 8 (1 - 0.29550) = 5.6360 ranks per
 * token; with its 8 groups, top 4 (one group a rank), a token's experts lie in 4 ranks' 16 experts
 * and each of them misses all 8 with C(12,8)/C(16,8) = 495/12870: 4 (1 - 0.038462) = 3.8462. The
 * dispatch's bytes (4096 tokens x 7168 x 2 B x ranks per token) follow. */
static double deepep_dispatch_bytes_with(const char *groups, const char *routing);
static double deepep_dispatch_bytes(const char *groups) { return deepep_dispatch_bytes_with(groups, "random"); }
static double deepep_dispatch_bytes_with(const char *groups, const char *routing)
{
    char yaml[512];
    snprintf(yaml, sizeof yaml, "model: {layers: 1, hidden: 7168, heads: 8, ffn: 2048, vocab: 1024, seq: 4096, mlp: "
                                "swiglu, norm: rmsnorm, bias: false, dropout: 0, experts: 32, top_k: 8, expert_ffn: "
                                "2048%s}\n", groups);
    orr_spec s;
    orr_err err;
    orr_spec_init(&s);
    CHECK(orr_spec_load_text(&s, "t.yaml", yaml, strlen(yaml), &err) == 0);
    char *argv[] = {"--gpu", "H100-SXM", "--gpus", "8", "--ep", "8", "--gbs", "8", "--moe-dispatcher", "deepep",
                    "--moe-routing", (char *)routing};
    CHECK(orr_spec_apply_flags(&s, 12, argv, &err) == 0 && orr_spec_resolve(&s, &err) == 0);
    orr_workload *w = orr_gen_training(&s, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    double bytes = 0;
    for (size_t i = 0; w && i < w->ranks[0].nops && !bytes; i++) {
        const orr_op *op = &w->ranks[0].ops[i];
        if (op->kind == ORR_OP_COLL && strstr(w->names[op->name], "dispatch") && !strstr(w->names[op->name], "count")) {
            bytes = (double)op->bytes;
            CHECK(op->flags & ORR_OPF_DEEPEP); /* a kernel holding its SMs: deepep_gemm_slowdown beside it */
        }
    }
    orr_workload_free(w);
    orr_spec_free(&s);
    return bytes;
}

static void group_limited_routing(void)
{
    double tok = 4096.0 * 7168 * 2;
    double plain = deepep_dispatch_bytes(""), grouped = deepep_dispatch_bytes(", router_groups: 8, router_group_topk: 4");
    printf("DeepEP dispatch of the DeepSeek-V3 proxy: %.4f ranks per token ungrouped, %.4f with 8 groups top 4\n",
           plain / tok, grouped / tok);
    CHECK_REL(plain, tok * 8 * (1 - 3108105.0 / 10518300.0), 1e-6);
    CHECK_REL(grouped, tok * 4 * (1 - 495.0 / 12870.0), 1e-6);
}

/* Round-robin routing (NeMo AutoModel's FakeBalancedGate: token t to experts t*k .. t*k+k-1 mod E),
 * by hand: a run of k consecutive experts from t*k touches one part when k divides the experts per
 * part; DeepSeek-V3 on EP 64 (256 experts, 4 a rank, top 8): always 2 ranks; Kimi K2 on EP 32 (384
 * experts, 12 a rank): runs start at offsets 0, 8, 4 of a rank, touching 1, 2, 1 ranks: 4/3;
 * gpt-oss-120b on EP 64 (128 experts, 2 a rank, top 4): 2; 60 experts, top 4, 6 parts of 10: the 15
 * runs of a period start at 0, 4, ..., 56, at offsets 0, 4, 8, 2, 6 within their part (three times
 * each), and only those at 8 cross into the next part: (3 x 2 + 12 x 1) / 15 = 1.2. k = E touches
 * every part. The DeepEP dispatch of the proxy layer (32 experts, top 8, EP 8: 4 a
 * rank) then sends each token to 2 ranks, not 5.64; the gate computes no router GEMM. */
static void round_robin_routing(void)
{
    CHECK_REL(orr_moe_round_robin_parts(128, 8, 8), 1.0, 1e-12);
    CHECK_REL(orr_moe_round_robin_parts(256, 8, 64), 2.0, 1e-12);
    CHECK_REL(orr_moe_round_robin_parts(384, 8, 32), 4.0 / 3.0, 1e-12);
    CHECK_REL(orr_moe_round_robin_parts(128, 4, 64), 2.0, 1e-12);
    CHECK_REL(orr_moe_round_robin_parts(128, 4, 8), 1.0, 1e-12);
    CHECK_REL(orr_moe_round_robin_parts(60, 4, 6), 1.2, 1e-12);
    CHECK_REL(orr_moe_round_robin_parts(8, 8, 8), 8.0, 1e-12);
    CHECK_REL(orr_moe_round_robin_parts(16, 3, 1), 1.0, 1e-12);
    double tok = 4096.0 * 7168 * 2;
    CHECK_REL(deepep_dispatch_bytes_with("", "round-robin"), tok * 2, 1e-9);
    static const char *yaml = "model: {layers: 1, hidden: 1024, heads: 8, ffn: 4096, vocab: 1024, seq: 1024, mlp: "
                              "swiglu, norm: rmsnorm, bias: false, dropout: 0, experts: 8, top_k: 2, expert_ffn: 512}\n";
    orr_spec s;
    orr_err err;
    CHECK_MSG(spec_from_text(&s, "t.yaml", yaml, "--gpu H100-SXM --gpus 8 --ep 8 --gbs 8 --moe-routing round-robin",
                             &err) == 0, "%s", err.msg);
    orr_workload *w = orr_gen_training(&s, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    int router = 0, fake = 0;
    for (size_t i = 0; w && i < w->ranks[0].nops; i++) {
        const char *name = w->names[w->ranks[0].ops[i].name];
        router += strncmp(name, "router_", 7) == 0;
        fake += strcmp(name, "fake_gate_indices") == 0;
    }
    CHECK(router == 0 && fake == 1);
    orr_workload_free(w);
    orr_spec_free(&s);
    CHECK(spec_from_text(&s, "t.yaml", yaml, "--gpu H100-SXM --gpus 8 --ep 8 --gbs 8 --moe-routing round-robin "
                                             "--moe-imbalance 2", &err) != 0);
    CHECK_MSG(strstr(err.msg, "--moe-routing round-robin (options.moe_routing) with --moe-imbalance") != NULL, "%s",
              err.msg);
    orr_spec_free(&s);
    CHECK(spec_from_text(&s, "t.yaml", yaml, "--gpu H100-SXM --gpus 8 --moe-routing sorted", &err) != 0);
    CHECK_MSG(strstr(err.msg, "--moe-routing") != NULL, "%s", err.msg);
    orr_spec_free(&s);
}

/* A layer's kernels and saved activations with and without model.qk_norm (dense, 2 layers, hidden
 * 1024, 8 heads of 128, 2 KV heads; one micro-batch of 1024 tokens on one GPU): one qk_norm kernel a
 * layer each way over (8 + 2) x 128 elements a token (fused: 4 B forward, 6 backward; megatron); its
 * saved input 2 B an element plus 4 B a head row, 2 x 1024 x (2560 + 40) bytes kept more without
 * recompute, none with full; 2 x 128 parameters a layer; refused with MLA. */
static void qk_norm(void)
{
    const char *base = "model: {layers: 2, hidden: 1024, heads: 8, kv_heads: 2, ffn: 4096, vocab: 1024, seq: 1024, "
                       "mlp: swiglu, norm: rmsnorm, bias: false, dropout: 0, tied_embeddings: false%s}\n";
    double act[2][2] = {{0}}, params[2] = {0};
    int kernels[2] = {0};
    double kbytes = 0, unused;
    for (int qk = 0; qk < 2; qk++)
        for (int full = 0; full < 2; full++) {
            char yaml[320];
            snprintf(yaml, sizeof yaml, base, qk ? ", qk_norm: true" : "");
            orr_spec s;
            orr_err err;
            const char *flags = full ? "--gpu H100-SXM --gpus 1 --gbs 1 --recompute full" : "--gpu H100-SXM --gpus 1 --gbs 1";
            CHECK_MSG(spec_from_text(&s, "t.yaml", yaml, flags, &err) == 0, "%s", err.msg);
            params[qk] = orr_model_params(&s.model);
            orr_workload *w = orr_gen_training(&s, &err);
            CHECK_MSG(w != NULL, "%s", err.msg);
            if (w) {
                act[qk][full] = alloc_sum(w, "alloc_activations");
                if (!full) kernels[qk] = kernels_prefixed(w, "qk_norm", qk ? &kbytes : &unused);
                orr_workload_free(w);
            }
            orr_spec_free(&s);
        }
    CHECK(kernels[0] == 0 && kernels[1] == 4);
    CHECK_REL(kbytes, 2 * (4.0 + 6.0) * 1024 * 10 * 128, 1e-9);
    CHECK_REL(act[1][0] - act[0][0], 2 * 1024 * (2.0 * 10 * 128 + 4.0 * 10), 1e-9);
    CHECK_REL(act[1][1], act[0][1], 1e-12);
    CHECK_REL(params[1] - params[0], 2 * 2.0 * 128, 1e-12);
    orr_spec s;
    orr_err err;
    orr_spec_init(&s);
    const char *mla = "model: {base: deepseek-v3, qk_norm: true}\n";
    CHECK(orr_spec_load_text(&s, "t.yaml", mla, strlen(mla), &err) != 0);
    CHECK_MSG(strstr(err.msg, "qk_norm: not with attention: mla") != NULL, "%s", err.msg);
    orr_spec_free(&s);
}

/* AutoModel adds a model's expert biases per expert (GroupedExpertsDeepEP._apply_bias): with biases
 * (hidden 1024, expert_ffn 512, SwiGLU: up 1024; 8 experts, top 2, EP 8: 2048 copies of 1024 tokens
 * received a rank a layer, 2 layers) forward 8 B an element of the FC1 output and 12 of the FC2
 * output, backward 2 and 12: 2 x 2048 x (8 x 1024 + 12 x 1024) forward, 2 x 2048 x (2 x 1024 + 12 x
 * 1024) backward. TorchTitan's recipe has no such kernels. */
static void expert_bias(void)
{
    static const char *yaml = "model: {layers: 2, hidden: 1024, heads: 8, ffn: 4096, vocab: 1024, seq: 1024, mlp: "
                              "swiglu, norm: rmsnorm, bias: true, dropout: 0, tied_embeddings: false, experts: 8, "
                              "top_k: 2, expert_ffn: 512}\n";
    const char *const fw[2] = {"torchtitan --bf16-params --plain-experts", "automodel"};
    double fwd[2] = {0}, bwd[2] = {0}, b1, b2;
    for (int i = 0; i < 2; i++) {
        char flags[160];
        snprintf(flags, sizeof flags, "--gpu H100-SXM --gpus 8 --ep 8 --mbs 1 --gbs 8 --framework %s", fw[i]);
        orr_spec s;
        orr_err err;
        CHECK_MSG(spec_from_text(&s, "t.yaml", yaml, flags, &err) == 0, "%s", err.msg);
        orr_workload *w = orr_gen_training(&s, &err);
        CHECK_MSG(w != NULL, "%s", err.msg);
        if (w) {
            int n = kernels_prefixed(w, "moe_fc1_bias_add", &b1) + kernels_prefixed(w, "moe_fc1_bias_cat", &b2);
            fwd[i] = b1 + b2;
            n += kernels_prefixed(w, "moe_fc2_bias_scale", &b1) + kernels_prefixed(w, "moe_fc2_bias_add", &b2);
            fwd[i] += b1 + b2;
            n += kernels_prefixed(w, "moe_fc2_bias_cat", &b1);
            fwd[i] += b1;
            n += kernels_prefixed(w, "moe_fc1_bias_grad", &b1) + kernels_prefixed(w, "moe_fc2_bias_grad", &b2);
            bwd[i] = b1 + b2;
            n += kernels_prefixed(w, "moe_fc2_score_grad", &b1);
            bwd[i] += b1;
            CHECK(n == (i ? 2 * 8 : 0));
            orr_workload_free(w);
        }
        orr_spec_free(&s);
    }
    CHECK(fwd[0] == 0 && bwd[0] == 0);
    CHECK_REL(fwd[1], 2 * 2048.0 * (8.0 * 1024 + 12.0 * 1024), 1e-9);
    CHECK_REL(bwd[1], 2 * 2048.0 * (2.0 * 1024 + 12.0 * 1024), 1e-9);
}

/* Megatron's experts without bias_activation_fusion (TEGroupedMLP's eager bias_act_func): hidden
 * 1024, 8 experts of 512 (ungated GeLU), top 2, EP 8, 1024 tokens: 2048 routed copies a rank a layer,
 * n x fe = 2048 x 512 elements. Forward gelu 4 B an element, the fp32 score product 6, the cast 6;
 * backward 6 + 8 + 10 + 4 + 6 + 6 (gelu's last). Kept per copy: the gelu output 2 fe more, the expert
 * output 2 h less (the scores are applied inside); the backward's gradients 8 fe more (fp32), the
 * forward's fp32 product 4 fe while it lives. Refused with other frameworks. */
static void unfused_expert_activation(void)
{
    static const char *yaml = "model: {layers: 1, hidden: 1024, heads: 8, ffn: 4096, vocab: 1024, seq: 1024, mlp: "
                              "gelu, norm: rmsnorm, bias: false, dropout: 0, tied_embeddings: false, experts: 8, "
                              "top_k: 2, expert_ffn: 512}\n";
    const double n = 2048, fe = 512, h = 1024, e = n * fe;
    double act[2] = {0}, grads[2] = {0}, fwd = 0, bwd = 0, b, fp32 = 0;
    for (int k = 0; k < 2; k++) {
        orr_spec s;
        orr_err err;
        const char *flags = k ? "--gpu H100-SXM --gpus 8 --ep 8 --gbs 8 --no-bias-activation-fusion"
                              : "--gpu H100-SXM --gpus 8 --ep 8 --gbs 8";
        CHECK_MSG(spec_from_text(&s, "t.yaml", yaml, flags, &err) == 0, "%s", err.msg);
        orr_workload *w = orr_gen_training(&s, &err);
        CHECK_MSG(w != NULL, "%s", err.msg);
        if (w) {
            act[k] = alloc_sum(w, "moe_activations");
            grads[k] = alloc_sum(w, "moe_expert_grads");
            if (k) {
                fp32 = alloc_sum(w, "moe_score_product_fp32");
                static const char *const f[] = {"moe_gelu", "moe_score_mul_fp32", "moe_score_cast"};
                static const char *const g[] = {"moe_score_grad_to_fp32", "moe_score_mul_bwd", "moe_score_grad_mul",
                                                "moe_score_grad_sum", "moe_score_grad_cast", "moe_gelu_bwd"};
                for (size_t i = 0; i < 3; i++) {
                    CHECK(kernels_prefixed(w, f[i], &b) >= 1);
                    fwd += b;
                }
                for (size_t i = 0; i < 6; i++) {
                    CHECK(kernels_prefixed(w, g[i], &b) == 1);
                    bwd += b;
                }
            }
            orr_workload_free(w);
        }
        orr_spec_free(&s);
    }
    /* moe_gelu matches moe_gelu_bwd too: the forward's three are 4 + 6 + 6, and gelu_bwd's 6 */
    CHECK_REL(fwd, (4.0 + 6.0 + 6.0 + 6.0) * e, 1e-9);
    CHECK_REL(bwd, (6.0 + 8.0 + 10.0 + 4.0 + 6.0 + 6.0) * e, 1e-9); /* gelu_bwd counted in both */
    CHECK_REL(act[1] - act[0], n * (2.0 * fe - 2.0 * h), 1e-9);
    CHECK_REL(grads[1] - grads[0], 8.0 * e, 1e-9);
    CHECK_REL(fp32, 4.0 * e, 1e-9);
    /* a dense SwiGLU MLP (ffn 4096, 1024 tokens, 2 layers): glu's silu and product as two kernels (and
     * silu's backward), the silu output kept, 2 B x 4096 x 1024 a layer more */
    static const char *dense = "model: {layers: 2, hidden: 1024, heads: 8, ffn: 4096, vocab: 1024, seq: 1024, mlp: "
                               "swiglu, norm: rmsnorm, bias: false, dropout: 0, tied_embeddings: false}\n";
    double dact[2] = {0};
    int silu[2] = {0};
    for (int k = 0; k < 2; k++) {
        orr_spec s;
        orr_err err;
        CHECK_MSG(spec_from_text(&s, "t.yaml", dense, k ? "--gpu H100-SXM --gpus 1 --no-bias-activation-fusion"
                                                        : "--gpu H100-SXM --gpus 1", &err) == 0, "%s", err.msg);
        orr_workload *w = orr_gen_training(&s, &err);
        if (w) {
            dact[k] = alloc_sum(w, "alloc_activations");
            silu[k] = kernels_prefixed(w, "silu", &b) + kernels_prefixed(w, "swiglu_mul", &b);
            orr_workload_free(w);
        }
        orr_spec_free(&s);
    }
    CHECK(silu[0] == 0 && silu[1] == 2 * 3); /* silu, swiglu_mul and silu_bwd in each layer */
    CHECK_REL(dact[1] - dact[0], 2 * 2.0 * 4096 * 1024, 1e-9);
    orr_spec s;
    orr_err err;
    CHECK(spec_from_text(&s, "t.yaml", yaml, "--gpu H100-SXM --gpus 8 --ep 8 --framework torchtitan "
                                             "--no-bias-activation-fusion", &err) != 0);
    CHECK_MSG(strstr(err.msg, "--no-bias-activation-fusion (options.bias_activation_fusion)") != NULL, "%s", err.msg);
    orr_spec_free(&s);
}

static void backends(void)
{
    static const char *yaml = "model: {layers: 1, hidden: 4096, heads: 8, ffn: 14336, vocab: 1024, seq: 1024, mlp: "
                              "swiglu, norm: rmsnorm, bias: false, dropout: 0, experts: 16, top_k: 2, "
                              "expert_ffn: 14336}\n";
    static const char *nets[] = {"analytic", "flow", "packet"};
    int64_t it[3] = {0}, ep[3] = {0};
    for (int i = 0; i < 3; i++) {
        orr_spec s;
        orr_err err;
        orr_spec_init(&s);
        CHECK(orr_spec_load_text(&s, "t.yaml", yaml, strlen(yaml), &err) == 0);
        char *argv[] = {"--gpu", "H100-SXM", "--gpus", "16", "--ep", "16", "--gbs", "16", "--no-symmetry", "--net",
                        (char *)nets[i]};
        CHECK(orr_spec_apply_flags(&s, 11, argv, &err) == 0 && orr_spec_resolve(&s, &err) == 0);
        orr_prediction p;
        CHECK_MSG(orr_predict(&s, &p, &err) == 0, "%s: %s", nets[i], err.msg);
        it[i] = p.r.iteration_ps;
        ep[i] = p.r.mean.comm_ps[ORR_ROLE_EP];
        orr_prediction_free(&p);
        orr_spec_free(&s);
    }
    printf("EP16 over 2 nodes: iteration analytic %.3f ms, flow %.3f ms, packet %.3f ms; exposed EP %.3f / %.3f / %.3f ms\n",
           it[0] / 1e9, it[1] / 1e9, it[2] / 1e9, ep[0] / 1e9, ep[1] / 1e9, ep[2] / 1e9);
    for (int i = 0; i < 3; i++) CHECK(ep[i] > 0);
    CHECK_REL((double)it[1], (double)it[0], 0.02);
    CHECK_REL((double)it[2], (double)it[0], 0.02);
}

/* --moe-shared-expert-overlap: the shared experts run while the EP exchanges are in flight, so the
 * iteration gets faster, by about the shared experts' own kernel time (what can hide; 10% of room for
 * the exchanges' changed overlap with the gradient reduction on the DP stream) and by less than the EP
 * communication that was exposed (what there is to hide). */
static void shared_overlap(void)
{
    static const char *yaml = "model: {layers: 2, hidden: 4096, heads: 32, ffn: 8192, vocab: 1024, seq: 4096, mlp: "
                              "swiglu, norm: rmsnorm, bias: false, dropout: 0, experts: 16, top_k: 4, "
                              "expert_ffn: 1024, shared_experts: 1, shared_expert_ffn: 4096}\n";
    int64_t it[2], ep[2], shared_ps = 0;
    for (int ov = 0; ov < 2; ov++) {
        orr_spec s;
        orr_err err;
        orr_spec_init(&s);
        CHECK(orr_spec_load_text(&s, "t.yaml", yaml, strlen(yaml), &err) == 0);
        char *argv[] = {"--gpu", "H100-SXM", "--gpus", "16", "--ep", "16", "--gbs", "16", "--moe-shared-expert-overlap"};
        CHECK(orr_spec_apply_flags(&s, ov ? 9 : 8, argv, &err) == 0 && orr_spec_resolve(&s, &err) == 0);
        orr_prediction p;
        CHECK(orr_predict(&s, &p, &err) == 0);
        it[ov] = p.r.iteration_ps;
        ep[ov] = p.r.mean.comm_ps[ORR_ROLE_EP];
        const orr_rank *rk = &p.w->ranks[0];
        for (size_t i = 0; !ov && i < rk->nops; i++)
            if (rk->ops[i].kind == ORR_OP_KERNEL && strncmp(p.w->names[rk->ops[i].name], "shared_", 7) == 0)
                shared_ps += rk->ops[i].dur_ps;
        orr_prediction_free(&p);
        orr_spec_free(&s);
    }
    int64_t gain = it[0] - it[1];
    printf("shared-expert overlap: iteration %.3f -> %.3f ms (exposed EP %.3f -> %.3f ms; shared experts %.3f ms)\n",
           it[0] / 1e9, it[1] / 1e9, ep[0] / 1e9, ep[1] / 1e9, shared_ps / 1e9);
    CHECK(gain > 0 && ep[1] < ep[0]);
    CHECK(gain <= 1.1 * shared_ps && gain < ep[0]);
}

/* --overlap-moe-expert-parallel-comm (Megatron-Core's combined 1F1B): without pipelining, micro-batch
 * k+1's forward and k's backward are issued as one, layer by layer: their EP all-to-alls move to the
 * EP stream (gen.h's S_EP), the forward of micro-batch 1 starts before the backward of micro-batch 0
 * has issued its last exchange, the exchanges hide under the other micro-batch's compute (exposed EP
 * time shrinks, the iteration too) and two micro-batches' activations are live at once. Megatron's
 * preconditions are errors naming the flag. */
static void a2a_overlap(void)
{
    enum { S_COMPUTE_ = 0, S_EP_ = 5 };
    orr_spec s[2];
    orr_prediction p[2];
    orr_err err = {{0}};
    for (int ov = 0; ov < 2; ov++) {
        CHECK_MSG(small_moe(&s[ov], ov ? "--gbs 32 --moe-dispatcher deepep --overlap-moe-expert-parallel-comm"
                                       : "--gbs 32 --moe-dispatcher deepep", &err) == 0, "%s", err.msg);
        CHECK_MSG(orr_predict(&s[ov], &p[ov], &err) == 0, "%s", err.msg);
        const orr_workload *w = p[ov].w;
        const orr_rank *rk = &w->ranks[0];
        size_t on_ep = 0, on_compute = 0, first_fwd1 = 0, last_bwd0_a2a = 0;
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            if (op->kind == ORR_OP_COLL && op->role == ORR_ROLE_EP) {
                if (op->mb == 1) { /* in combined steps: its forward with 0's backward, its backward with 2's forward */
                    on_ep += op->stream == S_EP_;
                    on_compute += op->stream == S_COMPUTE_;
                }
                if (op->phase == ORR_PHASE_BWD && op->mb == 0) last_bwd0_a2a = i;
            }
            if (op->kind == ORR_OP_KERNEL && op->phase == ORR_PHASE_FWD && op->mb == 1 && !first_fwd1) first_fwd1 = i;
        }
        CHECK_MSG(ov ? on_compute == 0 && on_ep > 0 : on_ep == 0 && on_compute > 0,
                  "overlap %d: %zu exchanges on the EP stream, %zu on the compute stream", ov, on_ep, on_compute);
        CHECK_MSG(ov ? first_fwd1 < last_bwd0_a2a : first_fwd1 > last_bwd0_a2a,
                  "overlap %d: micro-batch 1's first forward kernel at op %zu, micro-batch 0's last backward "
                  "exchange at %zu", ov, first_fwd1, last_bwd0_a2a);
    }
    int64_t ep0 = p[0].r.mean.comm_ps[ORR_ROLE_EP], ep1 = p[1].r.mean.comm_ps[ORR_ROLE_EP];
    printf("combined 1F1B: iteration %.3f -> %.3f ms, exposed EP %.3f -> %.3f ms, peak %.2f -> %.2f GiB\n",
           p[0].r.iteration_ps / 1e9, p[1].r.iteration_ps / 1e9, ep0 / 1e9, ep1 / 1e9,
           p[0].r.mem.peak_reserved_bytes / 1073741824.0, p[1].r.mem.peak_reserved_bytes / 1073741824.0);
    CHECK(ep1 < ep0 / 2);
    CHECK(p[1].r.iteration_ps < p[0].r.iteration_ps);
    CHECK(p[1].r.mem.peak_allocated_bytes > p[0].r.mem.peak_allocated_bytes);
    for (int ov = 0; ov < 2; ov++) orr_prediction_free(&p[ov]), orr_spec_free(&s[ov]);
    /* the alltoall dispatcher: the token counts' all-gather (over tp_ep, a communicator of its own) is part
     * of the forward's pre-dispatch compute, so it stays on the compute stream; were it taken for an
     * exchange, the cut at the exchanges would fall between it and the dispatch, and the pairing go wrong */
    for (int ov = 0; ov < 2; ov++) {
        CHECK_MSG(small_moe(&s[ov], ov ? "--gbs 32 --overlap-moe-expert-parallel-comm" : "--gbs 32", &err) == 0, "%s",
                  err.msg);
        CHECK_MSG(orr_predict(&s[ov], &p[ov], &err) == 0, "%s", err.msg);
        const orr_rank *rk = &p[ov].w->ranks[0];
        size_t counts = 0, counts_on_compute = 0, a2a_on_ep = 0;
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            if (op->kind != ORR_OP_COLL || op->role != ORR_ROLE_EP) continue;
            if (op->cls == ORR_COLL_ALLGATHER) counts++, counts_on_compute += op->stream == S_COMPUTE_;
            if (op->cls == ORR_COLL_ALLTOALL && op->mb == 1) a2a_on_ep += op->stream == S_EP_;
        }
        CHECK_MSG(counts > 0 && counts_on_compute == counts && (ov ? a2a_on_ep > 0 : a2a_on_ep == 0),
                  "alltoall, overlap %d: %zu counts' all-gathers, %zu on the compute stream; %zu all-to-alls of "
                  "micro-batch 1 on the EP stream", ov, counts, counts_on_compute, a2a_on_ep);
    }
    ep0 = p[0].r.mean.comm_ps[ORR_ROLE_EP], ep1 = p[1].r.mean.comm_ps[ORR_ROLE_EP];
    printf("combined 1F1B, alltoall: iteration %.3f -> %.3f ms, exposed EP %.3f -> %.3f ms\n", p[0].r.iteration_ps / 1e9,
           p[1].r.iteration_ps / 1e9, ep0 / 1e9, ep1 / 1e9);
    CHECK(ep1 < ep0 / 2);
    CHECK(p[1].r.iteration_ps < p[0].r.iteration_ps);
    for (int ov = 0; ov < 2; ov++) orr_prediction_free(&p[ov]), orr_spec_free(&s[ov]);

    static const char *const bad[][2] = {
        {"--moe-dispatcher allgather", "alltoall or deepep"},
        {"--recompute full", "--recompute full"},
        {"--moe-shared-expert-overlap", "--moe-shared-expert-overlap"},
        {"--framework torchtitan --fsdp 8", "megatron"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char flags[128];
        snprintf(flags, sizeof flags, "%.80s --overlap-moe-expert-parallel-comm", bad[i][0]);
        orr_spec b;
        int rc = small_moe(&b, flags, &err);
        CHECK_MSG(rc != 0 && strstr(err.msg, "--overlap-moe-expert-parallel-comm") && strstr(err.msg, bad[i][1]),
                  "%s: rc %d, %s", bad[i][0], rc, err.msg);
        if (rc == 0) orr_spec_free(&b);
    }
    static const char *yaml = "model: {layers: 2, hidden: 1024, heads: 8, ffn: 4096, vocab: 1024, seq: 4096, "
                              "experts: 8, top_k: 2, expert_ffn: 4096}\n";
    orr_spec b;
    int rc = spec_from_text(&b, "t.yaml", yaml, "--gpu H100-SXM --gpus 16 --pp 2 --ep 8 --overlap-moe-expert-parallel-comm",
                            &err);
    CHECK_MSG(rc != 0 && strstr(err.msg, "--vpp"), "pp 2 without vpp: rc %d, %s", rc, err.msg);
    if (rc == 0) orr_spec_free(&b);
}

/* Forward steps (micro-batch, model chunk) rank 0 issues before its first backward op. */
static int forwards_before_backward(const orr_rank *rk)
{
    uint64_t seen[64];
    int n = 0;
    for (size_t i = 0; i < rk->nops; i++) {
        const orr_op *op = &rk->ops[i];
        if (op->phase == ORR_PHASE_BWD) break;
        if (op->kind != ORR_OP_KERNEL || op->phase != ORR_PHASE_FWD || op->mb == ORR_NO_MB) continue;
        uint64_t key = (uint64_t)op->mb << 8 | op->layer_chunk;
        int dup = 0;
        for (int j = 0; j < n; j++) dup |= seen[j] == key;
        if (!dup && n < 64) seen[n++] = key;
    }
    return n;
}

/* The interleaved schedule with the combined 1F1B (combined_1f1b_schedule_for_interleaved_pipelining):
 * one more warm-up forward (get_pp_rank_microbatches: without it the last stage would pair a
 * micro-batch's forward with its own backward), the steady state's exchanges on the EP stream, the
 * same kernels, less exposed EP time. Not a shorter iteration in general: each combined step waits
 * for both pipeline receives first (Megatron's pre-processing of both), which on this small model
 * costs more pipeline time than the overlap saves. */
static void a2a_overlap_interleaved(void)
{
    static const char *yaml = "model: {layers: 4, hidden: 1024, heads: 8, ffn: 4096, vocab: 1024, seq: 4096, mlp: "
                              "swiglu, norm: rmsnorm, bias: false, dropout: 0, tied_embeddings: false, experts: 8, "
                              "top_k: 2, expert_ffn: 4096}\n";
    orr_spec s[2];
    orr_prediction p[2];
    orr_err err = {{0}};
    int fwd[2] = {0, 0};
    size_t on_ep[2] = {0, 0}, kernels[2] = {0, 0};
    for (int ov = 0; ov < 2; ov++) {
        CHECK_MSG(spec_from_text(&s[ov], "t.yaml", yaml,
                                 ov ? "--gpu H100-SXM --gpus 16 --pp 2 --vpp 2 --ep 8 --gbs 64 --moe-dispatcher deepep "
                                      "--variability none --overlap-moe-expert-parallel-comm"
                                    : "--gpu H100-SXM --gpus 16 --pp 2 --vpp 2 --ep 8 --gbs 64 --moe-dispatcher deepep "
                                      "--variability none",
                                 &err) == 0, "%s", err.msg);
        CHECK_MSG(orr_predict(&s[ov], &p[ov], &err) == 0, "%s", err.msg);
        const orr_rank *rk = &p[ov].w->ranks[0];
        fwd[ov] = forwards_before_backward(rk);
        for (size_t i = 0; i < rk->nops; i++) {
            on_ep[ov] += rk->ops[i].kind == ORR_OP_COLL && rk->ops[i].role == ORR_ROLE_EP && rk->ops[i].stream == 5;
            kernels[ov] += rk->ops[i].kind == ORR_OP_KERNEL;
        }
    }
    int64_t ep0 = p[0].r.mean.comm_ps[ORR_ROLE_EP], ep1 = p[1].r.mean.comm_ps[ORR_ROLE_EP];
    printf("combined 1F1B, pp 2 vpp 2: forwards before the first backward %d -> %d, exposed EP %.3f -> %.3f ms, "
           "PP %.3f -> %.3f ms, iteration %.3f -> %.3f ms\n", fwd[0], fwd[1], ep0 / 1e9, ep1 / 1e9,
           p[0].r.mean.comm_ps[ORR_ROLE_PP] / 1e9, p[1].r.mean.comm_ps[ORR_ROLE_PP] / 1e9, p[0].r.iteration_ps / 1e9,
           p[1].r.iteration_ps / 1e9);
    CHECK_EQ_I64(fwd[1], fwd[0] + 1);
    CHECK(on_ep[0] == 0 && on_ep[1] > 0);
    CHECK_EQ_I64(kernels[1], kernels[0]);
    CHECK(ep1 < ep0 / 2);
    for (int ov = 0; ov < 2; ov++) orr_prediction_free(&p[ov]), orr_spec_free(&s[ov]);
}

/* Megatron's dispatchers synchronise the host once per MoE layer forward (recipe moe_syncs_host,
 * megatron.c): in layer 0's forward of micro-batch 0, the alltoall dispatcher records an event after the
 * token counts' exchange (after the router at EP 1, which has none), launches the permutation, waits on
 * that event and runs the host work (moe_sync_host_ps) before the token all-to-all; DeepEP waits before
 * its dispatch; nothing in the backward or under the combined 1F1B overlap. TorchTitan's waits after its
 * counts' all-to-all, which follows the permutation, with no host work modelled, and not at EP 1 (local
 * dispatch). On the timeline the host work shows as the GPU's idle time where the queued permutation does
 * not cover it. */
static void dispatch_host_sync(void)
{
    static const char *y4 = "model: {layers: 4, hidden: 1024, heads: 8, ffn: 4096, vocab: 1024, seq: 4096, mlp: swiglu, "
                            "norm: rmsnorm, bias: false, dropout: 0, tied_embeddings: false, experts: 8, top_k: 2, "
                            "expert_ffn: 4096}\n";
    static const struct { const char *flags; int deepep, syncs, torchtitan; } cases[] = {
        {"", 0, 1, 0},
        {"--ep 1", 0, 1, 0}, /* no exchange; the sync "before_finish", after the permutation */
        {"--moe-dispatcher deepep", 1, 1, 0},
        {"--framework torchtitan", 0, 1, 1},
        {"--framework torchtitan --ep 1", 0, 0, 1},
        {"--pp 2 --vpp 2 --overlap-moe-expert-parallel-comm", 0, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        orr_spec s;
        orr_err err;
        int rc = strstr(cases[k].flags, "--pp")
                 ? spec_from_text(&s, "t.yaml", y4, "--gpu H100-SXM --gpus 16 --ep 8 --mbs 1 --gbs 16 --no-symmetry "
                                  "--variability none --pp 2 --vpp 2 --overlap-moe-expert-parallel-comm", &err)
                 : small_moe(&s, cases[k].flags, &err);
        CHECK_MSG(rc == 0, "%s: %s", cases[k].flags, err.msg);
        if (rc) continue;
        orr_workload *w = orr_gen_training(&s, &err);
        CHECK_MSG(w != NULL, "%s", err.msg);
        if (!w) {
            orr_spec_free(&s);
            continue;
        }
        const orr_rank *rk = &w->ranks[0];
        int syncs = 0, ok = 1;
        for (size_t i = 2; i + 1 < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            if (strcmp(w->names[op->name], "moe_dispatch_host_sync") != 0) continue;
            syncs += op->layer == 0 && op->mb == 0 && op->phase == ORR_PHASE_FWD;
            ok &= op->kind == ORR_OP_EVENT_SYNC && op->phase != ORR_PHASE_BWD;
            if (cases[k].torchtitan) { /* the counts' all-to-all, its event, the wait; no host work after it */
                ok &= rk->ops[i - 1].kind == ORR_OP_EVENT_RECORD && rk->ops[i + 1].kind != ORR_OP_HOST &&
                      strncmp(w->names[rk->ops[i - 2].name], "ep_alltoall_counts_", 19) == 0;
                continue;
            }
            ok &= rk->ops[i + 1].kind == ORR_OP_HOST && rk->ops[i + 1].dur_ps == INT64_C(300000000);
            if (cases[k].deepep) ok &= rk->ops[i - 1].kind == ORR_OP_EVENT_RECORD; /* the router's output */
            else /* the counts' event, then the permutation queued behind it */
                ok &= strcmp(w->names[rk->ops[i - 1].name], "moe_permute") == 0 && rk->ops[i - 2].kind == ORR_OP_EVENT_RECORD;
        }
        CHECK_MSG(syncs == cases[k].syncs && ok, "%s: %d syncs in layer 0's first forward (want %d), order %s",
                  cases[k].flags, syncs, cases[k].syncs, ok ? "right" : "wrong");
        orr_workload_free(w);
        orr_spec_free(&s);
    }
    /* TorchTitan with EP prefetches the next block explicitly (distributed/fsdp.py: "D2H syncs in EP could
     * interfere with implicit prefetching"): block 1's all-gather is issued before block 0 waits on the host */
    {
        orr_spec s;
        orr_err err;
        CHECK(small_moe(&s, "--framework torchtitan", &err) == 0);
        orr_workload *w = orr_gen_training(&s, &err);
        CHECK_MSG(w != NULL, "%s", err.msg);
        size_t sync = SIZE_MAX, ag1 = SIZE_MAX;
        for (size_t i = 0; w && i < w->ranks[0].nops; i++) {
            const orr_op *op = &w->ranks[0].ops[i];
            if (op->phase != ORR_PHASE_FWD || (op->mb > 0 && op->mb != ORR_NO_MB)) continue;
            const char *n = w->names[op->name];
            if (sync == SIZE_MAX && op->layer == 0 && strcmp(n, "moe_dispatch_host_sync") == 0) sync = i;
            if (ag1 == SIZE_MAX && op->layer == 1 && op->kind == ORR_OP_COLL && strcmp(n, "fsdp_allgather") == 0) ag1 = i;
        }
        CHECK_MSG(sync != SIZE_MAX && ag1 < sync, "block 1's all-gather at op %zu, block 0's host wait at op %zu", ag1,
                  sync);
        orr_workload_free(w);
        orr_spec_free(&s);
    }
    /* on the timeline: each of the 2 layers' forward host work (1 micro-batch), less the permutation queued
     * behind the event (about 10 us here), is time the GPU waits; TorchTitan's wait costs only the launches
     * after it */
    int64_t idle[2];
    for (int megatron = 0; megatron < 2; megatron++) {
        orr_spec s;
        orr_err err;
        CHECK(small_moe(&s, megatron ? "" : "--framework torchtitan", &err) == 0);
        orr_prediction p;
        CHECK_MSG(orr_predict(&s, &p, &err) == 0, "%s", err.msg);
        idle[megatron] = p.r.mean.idle_ps;
        orr_prediction_free(&p);
        orr_spec_free(&s);
    }
    printf("dispatcher host sync: GPU idle %.3f ms (Megatron) against %.3f ms (TorchTitan)\n", idle[1] / 1e9,
           idle[0] / 1e9);
    CHECK(idle[0] < INT64_C(50000000));
    CHECK(idle[1] - idle[0] > 2 * (INT64_C(300000000) - INT64_C(50000000)) && idle[1] - idle[0] < 2 * INT64_C(300000000));
}

int main(void)
{
    dispatch_host_sync();
    fsdp_ep();
    automodel();
    shared_overlap();
    group_limited_routing();
    round_robin_routing();
    qk_norm();
    expert_bias();
    unfused_expert_activation();
    backends();
    layouts();
    etp_default();
    catalog_params();
    model_fields();
    imbalance();
    a2a_overlap();
    a2a_overlap_interleaved();
    return check_done();
}
