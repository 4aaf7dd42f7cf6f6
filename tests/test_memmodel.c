/*
 * Tests of the memory model end to end (generator ALLOC/FREE + executor tracker):
 *   1. Korthikanti et al. 2022 closed form of the activations a layer keeps, per rank, against the
 *      generator's allocations, within 5%: s*b*h*(10 + 24/t + 5as/(ht)) without SP, (34/t + ...)
 *      with SP, the score term gone with selective recompute, 2sbh (/t with SP) with full recompute;
 *   2. the simulated activation memory of a 1F1B pipeline: stage 0 keeps pp micro-batches in flight;
 *   3. OOM verdicts at the 80 GB boundary, with the allocation they name.
 */
#include "check.h"
#include "orrery/orrery.h"

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

int main(void)
{
    test_korthikanti();
    test_pipeline_inflight();
    test_oom();
    return check_done();
}
