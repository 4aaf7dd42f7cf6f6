/*
 * The nanotron recipe (src/models/nanotron.c) against nanotron's own arithmetic, and the three
 * validation tables nothing else checks, all held out (nothing was fitted on them):
 *   - data/validation/nanotron_ultrascale_tp_scaling.csv (the Ultra-Scale Playbook's 3.57B on H100,
 *     TP 2-32 with and without SP): tokens/s per GPU, held-out median within 10% (TP 2
 *     and 4 predicted 5-6% fast, TP 16 and 32 with SP 7-14% slow, TP-only TP 32 +44%; 5.5% today, 7.5%
 *     before GEMMs beside NCCL slowed by the measured 0.22); no row
 *     predicted out of memory at the micro-batch it ran at, nor at the largest the figure shows
 *     (max_batch_size); one more than that is reported row by row (a known miss: the figure implies
 *     out of memory, 53-77 GiB is predicted, none over the 80 GB);
 *   - nanotron_ultrascale_dp_scaling_partial.csv: no row predicted, for the stated reason (the model
 *     is not given; the TP table's model cannot have run at that speed);
 *   - deepspeed_published.csv with framework deepspeed: the one row whose layout and micro-batch are
 *     stated (175B, ZeRO-3 on 256 A100) within 7% (+5.8% today), the other five left out with reasons.
 */
#include "check.h"
#include "orrery/orrery.h"
#include "orrery/validate.h"

#include <math.h>
#include <string.h>

static void print_table(const orr_valid_table *t)
{
    orr_buf b = {0};
    orr_valid_table_print(t, &b);
    fputs(b.s, stdout);
    orr_buf_free(&b);
}

/* want_rows predicted, skipped left out; held-out median within tol; none predicted out of memory. */
static void check_set(orr_valid_set set, size_t want_rows, size_t want_skipped, double tol)
{
    orr_valid_table t;
    orr_err err = {{0}};
    if (orr_validate(set, ORRERY_VALIDATION_DIR, &t, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    print_table(&t);
    CHECK_EQ_I64(t.n, want_rows);
    CHECK_EQ_I64(t.skipped, want_skipped);
    for (size_t i = 0; i < t.n; i++) {
        CHECK_MSG(!t.rows[i].fitted, "%s: a row of a held-out table marked fitting", t.rows[i].model);
        CHECK_MSG(!t.rows[i].oom, "%s tp %u mbs %u: predicted out of memory (%.1f GiB), but it ran", t.rows[i].model,
                  t.rows[i].tp, t.rows[i].mbs, t.rows[i].peak_gib);
    }
    if (t.n) {
        printf("  tolerance: held-out median %.0f%%; predicted OOM though it ran: none allowed\n\n", 100 * tol);
        CHECK_MSG(t.median_heldout <= tol, "held-out median %.1f%%, bound %.0f%%", 100 * t.median_heldout, 100 * tol);
    } else {
        CHECK_MSG(t.skip_why != NULL && strstr(t.skip_why, "not stated") != NULL, "no reason given for leaving the rows out");
        printf("\n");
    }
    orr_valid_table_free(&t);
}

/* The figure's largest micro-batch must fit; one more is expected not to (reported, count held). */
static void max_batch(void)
{
    orr_err err = {{0}};
    orr_valid_table at, over;
    if (orr_validate_max_batch(ORR_VALID_NANOTRON_TP, ORRERY_VALIDATION_DIR, 0, &at, &err) < 0 ||
        orr_validate_max_batch(ORR_VALID_NANOTRON_TP, ORRERY_VALIDATION_DIR, 1, &over, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    CHECK_EQ_I64(at.n, 10);
    CHECK_EQ_I64(over.n, 10);
    size_t oom_over = 0;
    for (size_t i = 0; i < at.n && i < over.n; i++) {
        printf("nanotron %s tp %2u: largest micro-batch %3u predicted %5.1f GiB (%s); %3u: %5.1f GiB (%s)\n",
               i < 5 ? "TP+SP  " : "TP only", at.rows[i].tp, at.rows[i].mbs, at.rows[i].peak_gib,
               at.rows[i].oom ? "OOM" : "fits", over.rows[i].mbs, over.rows[i].peak_gib, over.rows[i].oom ? "OOM" : "fits");
        CHECK_MSG(!at.rows[i].oom, "tp %u: the figure's largest micro-batch %u predicted out of memory (%.1f GiB)",
                  at.rows[i].tp, at.rows[i].mbs, at.rows[i].peak_gib);
        CHECK(over.rows[i].peak_gib > at.rows[i].peak_gib);
        oom_over += over.rows[i].oom != 0;
    }
    /* a known miss: the figure's limits imply out of memory one above them, but 53-77 GiB is predicted */
    printf("one above the largest micro-batch: %zu of %zu predicted out of memory (the figure implies all)\n\n",
           oom_over, over.n);
    orr_valid_table_free(&at);
    orr_valid_table_free(&over);
}

/* Bytes of the first ALLOC named name on rank 0 at layer (ORR_NO_LAYER: any), -1 if none; n counts them. */
static double alloc_bytes(const orr_workload *w, const char *name, uint32_t layer, size_t *n)
{
    const orr_rank *r = &w->ranks[0];
    double b = -1;
    *n = 0;
    for (size_t i = 0; i < r->nops; i++) {
        const orr_op *op = &r->ops[i];
        if (op->kind != ORR_OP_ALLOC || strcmp(w->names[op->name], name) != 0) continue;
        if (layer != ORR_NO_LAYER && op->layer != layer) continue;
        if (b < 0) b = (double)op->bytes;
        (*n)++;
    }
    return b;
}

static size_t count_ops(const orr_workload *w, const char *name, double *bytes)
{
    const orr_rank *r = &w->ranks[0];
    size_t n = 0;
    *bytes = 0;
    for (size_t i = 0; i < r->nops; i++)
        if (strcmp(w->names[r->ops[i].name], name) == 0) {
            n++;
            *bytes += (double)r->ops[i].bytes;
        }
    return n;
}

/* What nanotron keeps, by its source (nanotron.c's comment): for the 3.57B (MHA) at TP 2 with SP,
 * per token and layer, bf16: norm inputs 2 x 2 h/2 = 6,144; QKV and gate_up shards 6,144; the
 * contiguous QKV tensor q's view keeps 2 (q + 2kv) = 9,216 and the rotated k, v copy 4kv = 6,144; the
 * attention output 2q = 3,072 and softmax_lse 4 x 16 heads = 64; gate_up output 4f, silu output 2f,
 * product 2f = 32,768 (q = kv = 1,536, f = 4,096): 63,552 B. Persistent: bf16 params 2 B, the fp32
 * gradient buffer of every parameter 4 B, 12 B of fp32 params and AdamW moments, over dp with ZeRO-1,
 * and with dp > 1 DDP's bf16 buckets 2 B; the gradients reduce-scattered in fp32 per 25 MiB DDP
 * bucket (13.1M parameters), the bf16 parameters all-gathered after the step. */
static void recipe_arithmetic(void)
{
    orr_spec s;
    const char *argv[] = {"--framework", "nanotron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--tp", "2",
                          "--sp", "--mbs", "1", "--seq", "4096", "--zero", "1"};
    orr_err err = {{0}};
    orr_spec_init(&s);
    if (orr_spec_apply_flags(&s, (int)(sizeof argv / sizeof argv[0]), (char **)argv, &err) < 0 ||
        orr_spec_resolve(&s, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    /* the 3.57B of scaling_benchmarks.py */
    s.model.layers = 28, s.model.hidden = 3072, s.model.heads = s.model.kv_heads = 32, s.model.head_dim = 96;
    s.model.ffn = 8192, s.model.vocab = 131072, s.model.tied_embeddings = 1;
    s.mbs = 3;
    s.gbs = 3 * s.dp;
    CHECK_EQ_I64(s.dp, 4);
    CHECK(fabs(s.bucket_params - 25.0 * 1024 * 1024 / 2) < 1);
    orr_workload *w = orr_gen_training(&s, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (!w) return;
    size_t n;
    double tok = 3.0 * 4096, act = alloc_bytes(w, "alloc_activations", 5, &n);
    printf("nanotron 3.57B TP 2 SP: %.0f B per token and layer saved (63,552 by nanotron's source)\n", act / tok);
    CHECK(fabs(act / tok - 63552) < 1);
    double P = 0;
    {
        const orr_rank *r = &w->ranks[0];
        for (size_t i = 0; i < r->nops; i++)
            if (r->ops[i].kind == ORR_OP_ALLOC && strcmp(w->names[r->ops[i].name], "parameters") == 0) P = r->ops[i].bytes / 2.0;
    }
    double want_P = (28 * (4.0 * 3072 * 3072 + 3.0 * 3072 * 8192) + 131072.0 * 3072) / 2 + 28 * 2 * 3072 / 2.0 + 2 * 3072;
    printf("parameters per rank %.4g (by hand %.4g)\n", P, want_P);
    CHECK(fabs(P - want_P) / want_P < 1e-3);
    CHECK(fabs(alloc_bytes(w, "gradients", ORR_NO_LAYER, &n) - 4 * P) < 16);
    CHECK(fabs(alloc_bytes(w, "ddp_buckets", ORR_NO_LAYER, &n) - 2 * P) < 16);
    CHECK(fabs(alloc_bytes(w, "optimizer_state", ORR_NO_LAYER, &n) - 12 * P / 4) < 16);
    double rs_bytes, ag_bytes, ar_bytes;
    size_t rs = count_ops(w, "dp_grad_reducescatter", &rs_bytes), ag = count_ops(w, "dp_param_allgather", &ag_bytes);
    size_t ar = count_ops(w, "dp_grad_allreduce", &ar_bytes);
    printf("ZeRO-1 dp 4: %zu fp32 reduce-scatters (%.4g B), %zu bf16 all-gathers (%.4g B), %zu all-reduces\n", rs,
           rs_bytes, ag, ag_bytes, ar);
    CHECK(rs == 29 && ar == 0); /* a bucket per layer (each over 13.1M parameters) and the embedding's */
    CHECK(fabs(rs_bytes - 4 * P) / (4 * P) < 1e-6);
    CHECK(fabs(ag_bytes - 2 * P) / (2 * P) < 1e-6);
    orr_workload_free(w);
    /* ZeRO 0: all-reduced, the optimizer state whole */
    s.zero = 0;
    w = orr_gen_training(&s, &err);
    CHECK_MSG(w != NULL, "%s", err.msg);
    if (!w) return;
    CHECK(count_ops(w, "dp_grad_allreduce", &ar_bytes) > 0 && count_ops(w, "dp_param_allgather", &ag_bytes) == 0);
    CHECK(fabs(alloc_bytes(w, "optimizer_state", ORR_NO_LAYER, &n) - 12 * P) < 16);
    orr_workload_free(w);
}

/* What the recipe cannot do is refused with a message naming the flag. */
static void refusals(void)
{
    static const struct { const char *flag, *value, *want; } cases[] = {
        {"--zero", "2", "--zero 2 (parallel.zero) with framework nanotron"},
        {"--cp", "2", "--cp 2 (parallel.cp) with framework nanotron"},
        {"--recompute", "selective", "--recompute selective (training.recompute) with framework nanotron"},
        {"--precision", "fp8", "--precision (training.precision) with framework nanotron"},
        {"--model", "gpt3-175b", "with framework nanotron: the recipe follows nanotron's Llama"},
        {"--dist-opt", NULL, "--dist-opt (parallel.dist_opt) with framework nanotron"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        orr_spec s;
        orr_err err = {{0}};
        orr_spec_init(&s);
        const char *argv[] = {"--framework", "nanotron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "16",
                              "--seq", "4096", cases[i].flag, cases[i].value};
        int argc = cases[i].value ? 12 : 11;
        int rc = orr_spec_apply_flags(&s, argc, (char **)argv, &err);
        if (rc == 0) rc = orr_spec_resolve(&s, &err);
        CHECK_MSG(rc != 0 && strstr(err.msg, cases[i].want) != NULL, "%s %s: got \"%s\"", cases[i].flag,
                  cases[i].value ? cases[i].value : "", rc ? err.msg : "accepted");
    }
}

int main(void)
{
    recipe_arithmetic();
    refusals();
    check_set(ORR_VALID_NANOTRON_TP, 10, 0, 0.10);
    max_batch();
    check_set(ORR_VALID_NANOTRON_DP, 0, 6, 0);
    check_set(ORR_VALID_DEEPSPEED, 1, 5, 0.07);
    return check_done();
}
