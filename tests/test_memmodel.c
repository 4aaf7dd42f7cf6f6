/*
 * Tests of the memory model end to end (generator ALLOC/FREE + executor tracker):
 *   1. Korthikanti et al. 2022 closed form of the activations a layer keeps, per rank, against the
 *      generator's allocations, within 5%: s*b*h*(10 + 24/t + 5as/(ht)) without SP, (34/t + ...)
 *      with SP, the score term gone with selective recompute, 2sbh (/t with SP) with full recompute;
 *   2. the simulated activation memory of a 1F1B pipeline: stage 0 keeps pp micro-batches in flight;
 *   3. OOM verdicts at the 80 GB boundary, with the allocation they name;
 *   4. the Megatron-LM / Transformer Engine recipe's own arithmetic: no dropout masks without dropout,
 *      FP8 GEMM inputs saved at 1 B (the projection's on top of the attention output), TE's cached FP8
 *      weight and transpose (2 B per linear parameter) unless --fp8-param-gather, the gradient buffer
 *      and its reduction in bf16 with --grad-reduce-in-bf16 — each exact;
 *   5. Megatron-Core's recompute_modules (--recompute-modules), each module's saved bytes exact and
 *      the ops it re-runs before the layer's backward (transformer_layer.py, attention.py, experts.py).
 */
#include "check.h"
#include "orrery/orrery.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static int build_spec(orr_spec *s, const char *const *flags)
{
    orr_err err;
    int n = 0;
    while (flags[n]) n++;
    orr_spec_init(s);
    if (orr_spec_apply_flags(s, n, (char **)flags, &err) || orr_spec_resolve(s, &err)) {
        fprintf(stderr, "spec: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* Bytes of the first alloc_activations op of rank 0. */
static double layer_alloc_bytes(const orr_spec *s)
{
    orr_err err;
    orr_workload *w = orr_gen_training(s, &err);
    if (!w) return -1;
    double b = -1;
    const orr_rank *rk = &w->ranks[0];
    for (size_t i = 0; i < rk->nops; i++)
        if (rk->ops[i].kind == ORR_OP_ALLOC && strcmp(w->names[rk->ops[i].name], "alloc_activations") == 0) {
            b = (double)rk->ops[i].bytes;
            break;
        }
    orr_workload_free(w);
    return b;
}

static void test_korthikanti(void)
{
    /* GPT-3 13B shape: h 5120, a 40, s 2048, b 2 */
    const double s = 2048, b = 2, h = 5120, a = 40;
    struct { const char *tp, *sp, *rc, *attn; double expect; } cases[] = {
        {"1", "--no-sp", "none", "unfused", s * b * h * (10 + 24.0 / 1 + 5 * a * s / (h * 1))},
        {"4", "--no-sp", "none", "unfused", s * b * h * (10 + 24.0 / 4 + 5 * a * s / (h * 4))},
        {"4", "--sp", "none", "unfused", s * b * h * (34.0 / 4 + 5 * a * s / (h * 4))},
        {"4", "--no-sp", "selective", "unfused", s * b * h * (10 + 24.0 / 4)},
        {"4", "--sp", "selective", "unfused", s * b * h * (34.0 / 4)},
        {"8", "--sp", "none", "flash", s * b * h * (34.0 / 8)}, /* flash never keeps the scores */
        {"4", "--no-sp", "full", "unfused", 2 * s * b * h},
        {"4", "--sp", "full", "unfused", 2 * s * b * h / 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *f[] = {"--model", "gpt3-13b", "--gpu", "A100", "--gpus", cases[i].tp, "--tp", cases[i].tp,
                           cases[i].sp, "--mbs", "2", "--seq", "2048", "--recompute", cases[i].rc,
                           "--attention", cases[i].attn, NULL};
        orr_spec sp;
        if (build_spec(&sp, f)) {
            CHECK(0);
            continue;
        }
        double got = layer_alloc_bytes(&sp);
        printf("korthikanti tp %s %s %-9s %-7s: formula %.4g B, generator %.4g B\n", cases[i].tp, cases[i].sp,
               cases[i].rc, cases[i].attn, cases[i].expect, got);
        CHECK_REL(got, cases[i].expect, 0.05);
    }
}

/* 1F1B on 4 stages: stage 0 holds 4 micro-batches of its layers at its first backward. */
static void test_pipeline_inflight(void)
{
    const char *f[] = {"--model", "gpt3-1.3b", "--gpu", "A100", "--gpus", "4", "--pp", "4", "--mbs", "1",
                       "--gbs", "8", "--seq", "2048", "--recompute", "selective", NULL};
    orr_spec s;
    if (build_spec(&s, f)) {
        CHECK(0);
        return;
    }
    double per_layer = layer_alloc_bytes(&s);
    orr_prediction p;
    orr_err err;
    int rc = orr_predict(&s, &p, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    const orr_mem_rank *m = &p.x.ranks[0].mem; /* stage 0 */
    double layers = 24.0 / 4;
    printf("pipeline: stage 0 activation at peak %.4g B, 4 micro-batches x %g layers x %.4g B = %.4g B\n",
           (double)m->peak_cat_bytes[ORR_MEM_ACT], layers, per_layer, 4 * layers * per_layer);
    CHECK_REL((double)m->peak_cat_bytes[ORR_MEM_ACT], 4 * layers * per_layer, 0.05);
    /* the last stage keeps one micro-batch (plus its loss) */
    const orr_mem_rank *last = &p.x.ranks[3].mem;
    CHECK(last->peak_cat_bytes[ORR_MEM_ACT] < 2 * layers * per_layer + 4.0 * 2048 * 51200 * 1.01);
    orr_prediction_free(&p);
}

static void check_verdict(const char *const *flags, int want_oom, const char *want_name)
{
    orr_spec s;
    if (build_spec(&s, flags)) {
        CHECK(0);
        return;
    }
    orr_prediction p;
    orr_err err;
    int rc = orr_predict(&s, &p, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    const orr_mem_summary *m = &p.r.mem;
    const char *name = "";
    if (m->oom) name = orr_workload_op_name(p.w, m->oom_rank, m->oom_op);
    printf("verdict %-60s: peak %.2f GiB of %.2f, %s %s\n", p.title, m->peak_reserved_bytes / 1073741824.0,
           m->capacity_bytes / 1073741824.0, m->oom ? "OOM at" : "fits", name);
    CHECK_EQ_I64(m->oom, want_oom);
    if (want_oom && want_name) CHECK_MSG(strcmp(name, want_name) == 0, "named %s, wanted %s", name, want_name);
    if (!want_oom) CHECK(m->peak_reserved_bytes <= m->capacity_bytes);
    orr_prediction_free(&p);
}

static void test_oom(void)
{
    /* Llama 3 70B, no sharding (Megatron-LM without the distributed optimizer), on 8 H100: the bf16
     * weights alone are 131 GiB */
    const char *a[] = {"--framework", "megatron", "--model", "llama3-70b", "--gpu", "H100", "--gpus", "8",
                       "--mbs", "1", "--seq", "8192", "--recompute", "full", NULL};
    check_verdict(a, 1, "parameters");
    /* sharded over 64 GPUs with FSDP: fits */
    const char *b[] = {"--framework", "torchtitan", "--model", "llama3-70b", "--gpu", "H100", "--gpus", "64",
                       "--fsdp", "64", "--mbs", "1", "--seq", "8192", "--recompute", "full", NULL};
    check_verdict(b, 0, NULL);
    /* Llama 3 8B on one H100 with Adam: 2 + 4 + 12 bytes per parameter = 134 GiB */
    const char *c[] = {"--model", "llama3-8b", "--gpu", "H100", "--gpus", "1", "--mbs", "1", "--seq", "8192",
                       "--recompute", "full", NULL};
    check_verdict(c, 1, "optimizer_state");
    /* 8B, FSDP over 8, selective recompute, local batch 2: fits in 80 GB... */
    const char *d[] = {"--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                       "--fsdp", "8", "--mbs", "2", "--seq", "8192", "--recompute", "selective", NULL};
    check_verdict(d, 0, NULL);
    /* ...but not without recompute: the activations no longer fit */
    const char *e[] = {"--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                       "--fsdp", "8", "--mbs", "2", "--seq", "8192", "--recompute", "none", NULL};
    check_verdict(e, 1, NULL);
    /* ...nor in a 40 GiB --mem-capacity */
    const char *g[] = {"--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                       "--fsdp", "8", "--mbs", "2", "--seq", "8192", "--recompute", "selective", "--mem-capacity",
                       "40GiB", NULL};
    check_verdict(g, 1, NULL);
}

/* Bytes of rank 0's first ALLOC named name, and the bytes its DP gradient collectives carry. */
static double alloc_named(const orr_spec *s, const char *name, double *dp_bytes)
{
    orr_err err;
    orr_workload *w = orr_gen_training(s, &err);
    if (!w) return -1;
    double b = -1, dp = 0;
    const orr_rank *rk = &w->ranks[0];
    for (size_t i = 0; i < rk->nops; i++) {
        const orr_op *op = &rk->ops[i];
        const char *n = w->names[op->name];
        if (op->kind == ORR_OP_ALLOC && b < 0 && strcmp(n, name) == 0) b = (double)op->bytes;
        if (op->kind == ORR_OP_COLL && op->role == ORR_ROLE_DP && strncmp(n, "dp_grad_", 8) == 0) dp += (double)op->bytes;
    }
    orr_workload_free(w);
    if (dp_bytes) *dp_bytes = dp;
    return b;
}

static void test_megatron_te_recipe(void)
{
    /* Llama 3 8B, TP 1, one micro-batch of 4096 tokens: h 4096, q 4096, kv 1024, f 14336 (SwiGLU) */
    const double T = 4096, h = 4096, q = 4096, kv = 1024, f = 14336;
    const double P_lin = 32 * (h * q + 2 * h * kv + q * h + 3 * h * f); /* decoder linear weights */
    struct { const char *prec, *pg, *gb; double act; } cases[] = {
        /* bf16, no dropout (the Llama recipes): norm inputs 4h, QKV and FC1 inputs 4h; inside
         * Q,K,V 2(q+2kv), projection input 2q, SwiGLU input 4f, FC2 input 2f */
        {"bf16", NULL, NULL, T * (8 * h + 2 * (q + 2 * kv) + 2 * q + 4 * f + 2 * f)},
        /* fp8: QKV and FC1 inputs 1 B each (2h), projection input 2q + q, FC2 input f */
        {"fp8", NULL, NULL, T * (6 * h + 2 * (q + 2 * kv) + 3 * q + 4 * f + f)},
        {"fp8", "--fp8-param-gather", "--grad-reduce-in-bf16", T * (6 * h + 2 * (q + 2 * kv) + 3 * q + 4 * f + f)},
    };
    double P = -1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *fl[24] = {"--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--mbs", "1", "--seq", "4096",
                              "--dist-opt", "--precision", cases[i].prec};
        int n = 13;
        if (cases[i].pg) fl[n++] = cases[i].pg;
        if (cases[i].gb) fl[n++] = cases[i].gb;
        fl[n] = NULL;
        orr_spec sp;
        if (build_spec(&sp, fl)) {
            CHECK(0);
            continue;
        }
        double act = layer_alloc_bytes(&sp), dp = 0;
        double params = alloc_named(&sp, "parameters", NULL), grads = alloc_named(&sp, "gradients", &dp);
        if (i == 0) P = params / 2.0;
        printf("megatron/TE %s%s%s: layer %.6g B (formula %.6g), parameters %.6g B, gradients %.6g B, DP "
               "gradient traffic %.6g B\n", cases[i].prec, cases[i].pg ? " fp8-param-gather" : "",
               cases[i].gb ? " grad-reduce-in-bf16" : "", act, cases[i].act, params, grads, dp);
        CHECK_REL(act, cases[i].act, 1e-9);
        int fp8 = strcmp(cases[i].prec, "fp8") == 0, pg = cases[i].pg != NULL, gb = cases[i].gb != NULL;
        CHECK_REL(params, 2.0 * P + (fp8 && !pg ? 2.0 * P_lin : 0.0), 1e-9);
        CHECK_REL(grads, (gb ? 2.0 : 4.0) * P, 1e-9);
        CHECK_REL(dp, (gb ? 2.0 : 4.0) * P, 1e-6);
    }
    /* the dropout masks, 2h per token outside the TP region, only with dropout */
    const char *g[] = {"--model", "gpt3-13b", "--gpu", "A100", "--gpus", "1", "--mbs", "2", "--seq", "2048",
                       "--recompute", "selective", NULL};
    orr_spec sp;
    if (build_spec(&sp, g)) {
        CHECK(0);
        return;
    }
    double with = layer_alloc_bytes(&sp);
    sp.model.dropout = 0;
    double without = layer_alloc_bytes(&sp);
    CHECK_REL(with - without, 2.0 * 2048 * 2 * 5120, 1e-9);
}

/* Bytes of rank 0's first ALLOC named name (-1: none) and how many ops of the recompute phase it
 * runs whose name starts with prefix. */
static double alloc_and_recomputed(const orr_spec *s, const char *name, const char *prefix, int *nrc)
{
    orr_err err;
    orr_workload *w = orr_gen_training(s, &err);
    *nrc = -1;
    if (!w) return -1;
    double b = -1;
    int n = 0;
    const orr_rank *rk = &w->ranks[0];
    for (size_t i = 0; i < rk->nops; i++) {
        const orr_op *op = &rk->ops[i];
        const char *nm = w->names[op->name];
        if (op->kind == ORR_OP_ALLOC && b < 0 && strcmp(nm, name) == 0) b = (double)op->bytes;
        if (op->phase == ORR_PHASE_RECOMPUTE && strncmp(nm, prefix, strlen(prefix)) == 0) n++;
    }
    orr_workload_free(w);
    *nrc = n;
    return b;
}

static void test_recompute_modules(void)
{
    /* Llama 3 8B as in test_megatron_te_recipe: T tokens, h 4096, q 4096, kv 1024, f 14336, 32 layers */
    const double T = 4096, h = 4096, q = 4096, kv = 1024, f = 14336;
    struct { const char *prec, *mods, *prefix; double act; int reruns; } dense[] = {
        /* core_attn (the default) keeps Q, K, V; flash keeps no scores, bf16's projection keeps the
         * attention output: as without recompute, and the fused attention re-run once a layer */
        {"bf16", NULL, "flash_attn", T * (8 * h + 2 * (q + 2 * kv) + 2 * q + 6 * f), 32},
        /* under fp8 the bf16 attention output goes (the projection keeps its FP8 cast, q) */
        {"fp8", NULL, "flash_attn", T * (6 * h + 2 * (q + 2 * kv) + q + 5 * f), 32},
        /* the dense norms are fused into the QKV and FC1 linears: layernorm has nothing to recompute */
        {"bf16", "layernorm", "post_attn_norm", T * (8 * h + 2 * (q + 2 * kv) + 2 * q + 6 * f), 0},
        /* mlp: FC1's input and everything inside the MLP dropped, the MLP re-run with its fused norm */
        {"bf16", "mlp", "fc", T * (6 * h + 2 * (q + 2 * kv) + 2 * q), 64},
    };
    for (size_t i = 0; i < sizeof dense / sizeof dense[0]; i++) {
        const char *fl[24] = {"--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--mbs", "1", "--seq", "4096",
                              "--dist-opt", "--attention", "cudnn", "--precision", dense[i].prec, "--recompute",
                              "selective"};
        int n = 17;
        if (dense[i].mods) fl[n++] = "--recompute-modules", fl[n++] = dense[i].mods;
        fl[n] = NULL;
        orr_spec sp;
        if (build_spec(&sp, fl)) {
            CHECK(0);
            continue;
        }
        int reruns;
        double act = alloc_and_recomputed(&sp, "alloc_activations", dense[i].prefix, &reruns);
        printf("recompute_modules %-9s %s: layer %.6g B (formula %.6g), %d %s* ops re-run\n",
               dense[i].mods ? dense[i].mods : "(default)", dense[i].prec, act, dense[i].act, reruns, dense[i].prefix);
        CHECK_REL(act, dense[i].act, 1e-9);
        CHECK_EQ_I64(reruns, dense[i].reruns);
    }
    /* Qwen3-30B-A3B, every layer MoE (h 2048, 8 of 128 experts of width 768), one GPU: what the MoE
     * layer keeps beyond the attention part (moe_activations) */
    const double h3 = 2048, k = 8, fe = 768;
    struct { const char *mods, *prefix; double delta; int reruns; } moe[] = {
        {"core_attn", "moe_", 0, 0},
        /* moe_act: each routed copy's activation output (FC2's input, 2 B) re-created */
        {"core_attn,moe_act", "moe_swiglu", -T * k * 2 * fe, 48},
        /* layernorm: the pre-MLP norm's output, the router's saved input, re-created */
        {"core_attn,layernorm", "post_attn_norm", -T * 2 * h3, 48},
    };
    double base = 0;
    for (size_t i = 0; i < sizeof moe / sizeof moe[0]; i++) {
        const char *fl[] = {"--model", "qwen3-30b-a3b", "--gpu", "H100", "--gpus", "1", "--mbs", "1", "--seq", "4096",
                            "--attention", "cudnn", "--recompute", "selective", "--recompute-modules", moe[i].mods, NULL};
        orr_spec sp;
        if (build_spec(&sp, fl)) {
            CHECK(0);
            continue;
        }
        int reruns;
        double b = alloc_and_recomputed(&sp, "moe_activations", moe[i].prefix, &reruns);
        if (i == 0) base = b;
        printf("recompute_modules %-20s: MoE layer keeps %.6g B (%+.6g, expected %+.6g), %d %s* ops re-run\n",
               moe[i].mods, b, b - base, moe[i].delta, reruns, moe[i].prefix);
        CHECK_MSG(fabs(b - base - moe[i].delta) < 1.0, "kept %.0f B more, expected %.0f", b - base, moe[i].delta);
        CHECK_EQ_I64(reruns, moe[i].reruns);
    }
    /* moe: the layer checkpointed whole, its input (the norm's output) kept; with layernorm nothing,
     * the whole MoE forward re-run, its router included */
    const char *m1[] = {"--model", "qwen3-30b-a3b", "--gpu", "H100", "--gpus", "1", "--mbs", "1", "--seq", "4096",
                        "--recompute", "selective", "--recompute-modules", "moe", NULL};
    const char *m2[] = {"--model", "qwen3-30b-a3b", "--gpu", "H100", "--gpus", "1", "--mbs", "1", "--seq", "4096",
                        "--recompute", "selective", "--recompute-modules", "moe,layernorm", NULL};
    orr_spec sp;
    int reruns;
    if (build_spec(&sp, m1) == 0) {
        CHECK_REL(alloc_and_recomputed(&sp, "moe_activations", "router_gemm", &reruns), T * 2 * h3, 1e-12);
        CHECK_EQ_I64(reruns, 48);
    } else CHECK(0);
    if (build_spec(&sp, m2) == 0) CHECK(alloc_and_recomputed(&sp, "moe_activations", "router", &reruns) == 0);
    else CHECK(0);
}

int main(void)
{
    test_korthikanti();
    test_pipeline_inflight();
    test_oom();
    test_megatron_te_recipe();
    test_recompute_modules();
    return check_done();
}
