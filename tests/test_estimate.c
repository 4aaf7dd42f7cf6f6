/*
 * Tests of the roofline compute model (src/estimate/roofline.c): GEMM tile/wave quantisation,
 * compute- and memory-bound GEMMs, flash-attention, the piecewise memory-bound curve, dispatch by
 * op, and the cache of orr_estimate_workload. The GPUs are built by hand from
 * data/validation/gpu_specs.csv so this test does not depend on the catalog.
 */
#include "check.h"
#include "orrery/estimate.h"

#include <math.h>
#include <string.h>

/* H100 SXM5 80GB (gpu_specs.csv): 132 SMs, 3.35 TB/s, 50 MB L2, 900 GB/s NVLink both ways,
 * 989.4 dense bf16/fp16, 1978.9 fp8, 494.7 tf32, 66.9 fp32 TFLOP/s. Efficiencies are test values. */
static orr_gpu h100(void)
{
    orr_gpu g;
    memset(&g, 0, sizeof g);
    strcpy(g.name, "H100-test");
    g.sms = 132;
    g.hbm_bytes = 80ull << 30;
    g.hbm_Bps = 3.35e12;
    g.l2_bytes = 50ull << 20;
    g.nvlink_Bps = 450e9;
    g.peak_flops[ORR_BF16] = 989.4e12;
    g.peak_flops[ORR_FP16] = 989.4e12;
    g.peak_flops[ORR_FP8] = 1978.9e12;
    g.peak_flops[ORR_TF32] = 494.7e12;
    g.peak_flops[ORR_FP32] = 66.9e12;
    g.tdp_w = 700;
    g.gemm_eff = 0.75;
    g.attn_fwd_eff = 0.60;
    g.attn_bwd_eff = 0.45;
    g.mem_eff = 0.90;
    g.gemm_tile_m = 128;
    g.gemm_tile_n = 128;
    g.kernel_min_ps = 2500 * ORR_PS_PER_NS; /* 2.5 us */
    return g;
}

/* A100 SXM4 80GB (gpu_specs.csv): 108 SMs, 2.039 TB/s, 40 MB L2, 312 bf16 TFLOP/s, no fp8. */
static orr_gpu a100(void)
{
    orr_gpu g = h100();
    strcpy(g.name, "A100-test");
    g.sms = 108;
    g.hbm_Bps = 2.039e12;
    g.l2_bytes = 40ull << 20;
    g.nvlink_Bps = 300e9;
    g.peak_flops[ORR_BF16] = 312e12;
    g.peak_flops[ORR_FP16] = 312e12;
    g.peak_flops[ORR_FP8] = 0;
    g.peak_flops[ORR_TF32] = 156e12;
    g.peak_flops[ORR_FP32] = 19.5e12;
    return g;
}

static double ps_of(double seconds) { return seconds * (double)ORR_PS_PER_S; }

static void test_wave_quantisation(void)
{
    orr_gpu g = h100();
    /* exactly one full wave: 12 x 11 = 132 tiles */
    CHECK_REL(orr_est_gemm_wave_eff(&g, 12 * 128, 11 * 128, 1), 1.0, 1e-12);
    /* sms + 1 tiles: two waves, the second with one tile: 133 / 264 */
    CHECK_REL(orr_est_gemm_wave_eff(&g, 133 * 128, 128, 1), 133.0 / 264.0, 1e-12);
    /* partial tiles round up: 129 x 129 is 2 x 2 = 4 tiles on 132 SMs */
    CHECK_REL(orr_est_gemm_wave_eff(&g, 129, 129, 1), 4.0 / 132.0, 1e-12);
    /* batch multiplies the tiles */
    CHECK_REL(orr_est_gemm_wave_eff(&g, 128, 128, 132), 1.0, 1e-12);
    /* no shape: no quantisation */
    CHECK_REL(orr_est_gemm_wave_eff(&g, 0, 0, 0), 1.0, 1e-12);

    /* compute-bound, long k: sms + 1 tiles take twice as long as sms tiles (two waves) */
    uint32_t k = 65536;
    int64_t t132 = orr_est_gemm_ps(&g, 132 * 128, 128, k, 1, ORR_BF16, 0, 1); /* bytes 1: no memory bound */
    int64_t t133 = orr_est_gemm_ps(&g, 133 * 128, 128, k, 1, ORR_BF16, 0, 1);
    CHECK_REL((double)t133 / (double)t132, 2.0, 1e-6);
}

static void test_gemm(void)
{
    orr_gpu g = h100();
    /* big square bf16 GEMM: compute-bound, close to flops / (peak x gemm_eff) */
    uint32_t m = 8192, n = 8192, k = 8192;
    double flops = 2.0 * m * n * (double)k;
    int64_t t = orr_est_gemm_ps(&g, m, n, k, 1, ORR_BF16, flops, 0);
    double wave = orr_est_gemm_wave_eff(&g, m, n, 1); /* 4096 tiles on 132 SMs: 4096/4224 */
    CHECK_REL(wave, 4096.0 / 4224.0, 1e-12);
    CHECK_EQ_I64(t, llround(ps_of(flops / (989.4e12 * 0.75 * wave))));
    CHECK_REL((double)t, ps_of(flops / (989.4e12 * 0.75)), 0.05);
    /* flops derived from the shape when the op carries none */
    CHECK_EQ_I64(orr_est_gemm_ps(&g, m, n, k, 1, ORR_BF16, 0, 0), t);

    /* small k: memory-bound, exactly bytes / (HBM x mem_eff) */
    uint32_t ks = 16;
    uint64_t bytes = ((uint64_t)m * ks + (uint64_t)ks * n + (uint64_t)m * n) * 2;
    int64_t tm = orr_est_gemm_ps(&g, m, n, ks, 1, ORR_BF16, 2.0 * m * n * ks, bytes);
    CHECK_EQ_I64(tm, llround(ps_of((double)bytes / (3.35e12 * 0.9))));
    CHECK(ps_of(2.0 * m * n * ks / (989.4e12 * 0.75)) < (double)tm);

    /* fp8 is about twice bf16 on H100 (1978.9 vs 989.4 TFLOP/s); on A100 (no fp8) it runs at
     * the bf16 rate */
    int64_t t8 = orr_est_gemm_ps(&g, m, n, k, 1, ORR_FP8, flops, 0);
    CHECK_REL((double)t8, (double)t * 989.4 / 1978.9, 1e-6);
    orr_gpu a = a100();
    CHECK_EQ_I64(orr_est_gemm_ps(&a, m, n, k, 1, ORR_FP8, flops, 1),
                 orr_est_gemm_ps(&a, m, n, k, 1, ORR_BF16, flops, 1));

    /* a tiny GEMM costs the floor */
    CHECK_EQ_I64(orr_est_gemm_ps(&g, 16, 16, 16, 1, ORR_BF16, 0, 0), g.kernel_min_ps);
}

/* The shape factor by hand (roofline.c): rate(work, o) = mask x work / (work + o) over the key blocks
 * a query block visits (work = useful x kv / 128), mask 0.916 when masked; o 0.9 forward, 1.8
 * backward; relative to the causal 4096 x 4096 reference (work 16.5). */
static double shape_by_hand(double kv, double useful, double o)
{
    double ref = 0.916 * 16.5 / (16.5 + o), work = useful * kv / 128.0;
    return (useful < 0.999 ? 0.916 : 1.0) * work / (work + o) / ref;
}

static void test_attention(void)
{
    orr_gpu g = h100();
    /* batch 2 x 32 heads, 4096 x 4096, head dim 128: 64 x 32 = 2048 query blocks on 132 SMs */
    uint32_t dims[4] = {64, 4096, 4096, 128};
    double fwd_flops = 4.0 * 64 * 4096.0 * 4096 * 128;
    double causal = fwd_flops * 33.0 / 64.0; /* the generator's causal count: 33 of 64 blocks */
    double wave = 2048.0 / (16.0 * 132.0);
    /* the reference shape runs at the GPU's attention efficiency */
    CHECK_REL(orr_est_attention_shape(0, dims, 33.0 / 64.0), 1.0, 1e-12);
    CHECK_EQ_I64(orr_est_attention_ps(&g, 0, dims, ORR_BF16, causal, 0),
                 llround(ps_of(causal / (989.4e12 * 0.60 * wave))));
    /* unmasked: no mask cost and more blocks per fixed cost */
    double sf = shape_by_hand(4096, 1.0, 0.9), sb = shape_by_hand(4096, 1.0, 1.8);
    CHECK_REL(sf, 1.0 / 0.916 * (32.0 / 32.9) / (16.5 / 17.4), 1e-12);
    int64_t tf = orr_est_attention_ps(&g, 0, dims, ORR_BF16, fwd_flops, 0);
    CHECK_EQ_I64(tf, llround(ps_of(fwd_flops / (989.4e12 * 0.60 * wave * sf))));
    /* flops derived when absent: forward 4 b h q kv d, backward 2.5 x forward (unmasked) */
    CHECK_EQ_I64(orr_est_attention_ps(&g, 0, dims, ORR_BF16, 0, 0), tf);
    int64_t tb = orr_est_attention_ps(&g, 1, dims, ORR_BF16, 0, 0);
    CHECK_EQ_I64(tb, llround(ps_of(2.5 * fwd_flops / (989.4e12 * 0.45 * wave * sb))));
    CHECK(tb > 2 * tf);
    /* short sequences pay the fixed cost more, long ones less */
    uint32_t s1k[4] = {64, 1024, 1024, 128}, s16k[4] = {64, 16384, 16384, 128};
    CHECK_REL(orr_est_attention_shape(0, s1k, 9.0 / 16.0), shape_by_hand(1024, 9.0 / 16.0, 0.9), 1e-12);
    CHECK(orr_est_attention_shape(0, s1k, 9.0 / 16.0) < 0.9);
    CHECK(orr_est_attention_shape(0, s16k, 129.0 / 256.0) > 1.03);
    /* head dims below 128: FlashAttention-2's loss at 64, log-interpolated */
    uint32_t d64[4] = {64, 4096, 4096, 64}, d96[4] = {64, 4096, 4096, 96}, d256[4] = {64, 4096, 4096, 256};
    CHECK_REL(orr_est_attention_shape(0, d64, 33.0 / 64.0), 0.88, 1e-12);
    CHECK_REL(orr_est_attention_shape(0, d96, 33.0 / 64.0), 0.88 + 0.12 * log2(1.5), 1e-12);
    CHECK_REL(orr_est_attention_shape(0, d256, 33.0 / 64.0), 1.0, 1e-12);
    /* one (batch, head) and one query block occupies one SM of 132 */
    uint32_t one[4] = {1, 128, 8192, 128};
    double f1 = 4.0 * 128 * 8192.0 * 128;
    CHECK_EQ_I64(orr_est_attention_ps(&g, 0, one, ORR_BF16, f1, 0),
                 llround(ps_of(f1 / (989.4e12 * 0.60 * shape_by_hand(8192, 1.0, 0.9) / 132.0))));
    /* memory can bound it too */
    uint64_t huge = 40ull << 30;
    CHECK_EQ_I64(orr_est_attention_ps(&g, 0, one, ORR_BF16, f1, huge),
                 llround(ps_of((double)huge / (3.35e12 * 0.9))));
    /* cuDNN's fused attention: the same shape at the GPU's attn_cudnn_*_eff */
    g.attn_cudnn_fwd_eff = 0.56;
    g.attn_cudnn_bwd_eff = 0.46;
    CHECK_EQ_I64(orr_est_attention_kernel_ps(&g, 0, 1, dims, ORR_BF16, causal, 0),
                 llround(ps_of(causal / (989.4e12 * 0.56 * wave))));
    CHECK_EQ_I64(orr_est_attention_kernel_ps(&g, 1, 1, dims, ORR_BF16, 0, 0),
                 llround(ps_of(2.5 * fwd_flops / (989.4e12 * 0.46 * wave * sb))));
    CHECK_EQ_I64(orr_est_attention_kernel_ps(&g, 1, 0, dims, ORR_BF16, 0, 0), tb);
}

static void test_memory_bound(void)
{
    orr_gpu g = h100();
    double bw = 3.35e12 * 0.9;
    /* the floor */
    CHECK_EQ_I64(orr_est_memory_bound_ps(&g, 0), g.kernel_min_ps);
    CHECK_EQ_I64(orr_est_memory_bound_ps(&g, 4096), g.kernel_min_ps);
    CHECK_EQ_I64(orr_est_memory_bound_ps(&g, 132 * 32768), g.kernel_min_ps);
    /* above L2: the streaming asymptote exactly */
    uint64_t big = 1ull << 30;
    CHECK_EQ_I64(orr_est_memory_bound_ps(&g, big), llround(ps_of((double)big / bw)));
    /* continuous at L2 */
    double at_l2 = (double)orr_est_memory_bound_ps(&g, g.l2_bytes);
    double past_l2 = (double)orr_est_memory_bound_ps(&g, g.l2_bytes + 1);
    CHECK_REL(at_l2, past_l2, 1e-4);
    /* in the transition: above the asymptote and the floor, a straight line in log-log */
    uint64_t x1 = 8ull << 20, x2 = 16ull << 20, x3 = 32ull << 20;
    double t1 = (double)orr_est_memory_bound_ps(&g, x1);
    double t2 = (double)orr_est_memory_bound_ps(&g, x2);
    double t3 = (double)orr_est_memory_bound_ps(&g, x3);
    CHECK(t1 > (double)g.kernel_min_ps && t1 > ps_of((double)x1 / bw));
    CHECK_REL(log(t2 / t1), log(t3 / t2), 1e-4);
    /* monotone over the whole range */
    int64_t prev = 0;
    int mono = 1;
    for (double x = 1; x < 64e9; x *= 1.07) {
        int64_t t = orr_est_memory_bound_ps(&g, (uint64_t)x);
        if (t < prev) mono = 0;
        prev = t;
    }
    CHECK(mono);
    /* a GPU without HBM bandwidth gets the floor, not a division by zero */
    orr_gpu z = g;
    z.hbm_Bps = 0;
    CHECK_EQ_I64(orr_est_memory_bound_ps(&z, big), g.kernel_min_ps);
}

static orr_op kernel_op(orr_op_class cls, uint32_t m, uint32_t n, uint32_t k, uint64_t bytes)
{
    orr_op op;
    memset(&op, 0, sizeof op);
    op.kind = ORR_OP_KERNEL;
    op.cls = (uint8_t)cls;
    op.dtype = ORR_BF16;
    op.dims[0] = m;
    op.dims[1] = n;
    op.dims[2] = k;
    op.dims[3] = cls == ORR_CLS_GEMM ? 1 : 128;
    op.bytes = bytes;
    return op;
}

static void test_dispatch(void)
{
    orr_gpu g = h100();
    orr_est_model model = ORR_EST_GIVEN;
    orr_op gemm = kernel_op(ORR_CLS_GEMM, 4096, 4096, 4096, 0);
    CHECK_EQ_I64(orr_est_op_ps(&g, &gemm, &model), orr_est_gemm_ps(&g, 4096, 4096, 4096, 1, ORR_BF16, 0, 0));
    CHECK(model == ORR_EST_ROOFLINE);
    orr_op att = kernel_op(ORR_CLS_ATTENTION_BWD, 64, 2048, 2048, 0);
    CHECK_EQ_I64(orr_est_op_ps(&g, &att, NULL), orr_est_attention_ps(&g, 1, att.dims, ORR_BF16, 0, 0));
    g.attn_cudnn_fwd_eff = 0.56, g.attn_cudnn_bwd_eff = 0.46;
    att.flags |= ORR_OPF_ATTN_CUDNN; /* the flag picks cuDNN's level */
    CHECK_EQ_I64(orr_est_op_ps(&g, &att, NULL), orr_est_attention_kernel_ps(&g, 1, 1, att.dims, ORR_BF16, 0, 0));
    CHECK(orr_est_op_ps(&g, &att, NULL) < orr_est_attention_ps(&g, 1, att.dims, ORR_BF16, 0, 0));
    orr_op norm = kernel_op(ORR_CLS_NORM, 0, 0, 0, 100ull << 20);
    CHECK_EQ_I64(orr_est_op_ps(&g, &norm, NULL), orr_est_memory_bound_ps(&g, 100ull << 20));
    orr_op cp = norm;
    cp.kind = ORR_OP_MEMCPY;
    CHECK_EQ_I64(orr_est_op_ps(&g, &cp, NULL), orr_est_memory_bound_ps(&g, 100ull << 20));
    cp.kind = ORR_OP_MEMSET;
    CHECK_EQ_I64(orr_est_op_ps(&g, &cp, NULL), orr_est_memory_bound_ps(&g, 100ull << 20));
    /* a given duration is kept and says so */
    norm.dur_ps = 12345;
    CHECK_EQ_I64(orr_est_op_ps(&g, &norm, &model), 12345);
    CHECK(model == ORR_EST_GIVEN);
    /* non-compute ops are not estimated */
    orr_op host = norm;
    host.kind = ORR_OP_HOST;
    host.dur_ps = 0;
    CHECK_EQ_I64(orr_est_op_ps(&g, &host, &model), 0);
    CHECK(model == ORR_EST_GIVEN);
    CHECK(strcmp(orr_est_model_name(ORR_EST_ROOFLINE), "roofline") == 0);
    CHECK(strcmp(orr_est_model_name(ORR_EST_GIVEN), "given") == 0);
}

/* orr_estimate_workload through its cache gives what orr_est_op_ps gives, op by op. */
static void test_workload_cache(void)
{
    orr_gpu g = h100();
    g.attn_cudnn_fwd_eff = 0.56, g.attn_cudnn_bwd_eff = 0.46;
    orr_workload *w = orr_workload_new(4, 4);
    for (uint32_t r = 0; r < 4; r++) orr_workload_add_rank(w, r, 1, "r");
    orr_op shapes[7] = {
        kernel_op(ORR_CLS_GEMM, 4096, 4096, 4096, 0),
        kernel_op(ORR_CLS_GEMM, 4096, 12288, 4096, 0),
        kernel_op(ORR_CLS_ATTENTION_FWD, 64, 4096, 4096, 0),
        kernel_op(ORR_CLS_ELEMENTWISE, 0, 0, 0, 64ull << 20),
        kernel_op(ORR_CLS_OPTIMIZER, 0, 0, 0, 3ull << 30),
        kernel_op(ORR_CLS_REDUCTION, 0, 0, 0, 1ull << 20),
        kernel_op(ORR_CLS_ATTENTION_FWD, 64, 4096, 4096, 0), /* as the third, but cuDNN's: its own cache entry */
    };
    shapes[6].flags |= ORR_OPF_ATTN_CUDNN;
    orr_op given = shapes[0];
    given.dur_ps = 777;
    orr_op host;
    memset(&host, 0, sizeof host);
    host.kind = ORR_OP_HOST;
    for (uint32_t r = 0; r < 4; r++) {
        for (int i = 0; i < 3000; i++) {
            orr_op op = shapes[(i * 7 + r) % 7];
            op.bytes += (uint64_t)(i % 5); /* a few distinct sizes */
            orr_rank_push(&w->ranks[r], &op);
        }
        orr_rank_push(&w->ranks[r], &given);
        orr_rank_push(&w->ranks[r], &host);
    }
    orr_estimate_workload(w, &g);
    size_t bad = 0, zero = 0;
    for (uint32_t r = 0; r < 4; r++) {
        orr_rank *rk = &w->ranks[r];
        for (size_t i = 0; i < rk->nops; i++) {
            orr_op copy = rk->ops[i];
            if (copy.kind == ORR_OP_HOST) {
                if (copy.dur_ps != 0) bad++;
                continue;
            }
            if (i == 3000) {
                if (copy.dur_ps != 777) bad++;
                continue;
            }
            if (copy.dur_ps <= 0) zero++;
            int64_t got = copy.dur_ps;
            copy.dur_ps = 0;
            if (orr_est_op_ps(&g, &copy, NULL) != got) bad++;
        }
    }
    CHECK_EQ_I64(bad, 0);
    CHECK_EQ_I64(zero, 0);
    orr_workload_free(w);
}

/* An fp8 GEMM's scaling (ORR_OPF_FP8_SCALING bits) scales its compute rate by the GPU's measured
 * rate for that scaling: rowwise, blockwise 1x128 x 128x128, blockwise 1x128 x 1x128; per-tensor
 * scaling, a rate left unmeasured (0) and a bf16 GEMM are unchanged; the workload cache tells the
 * scalings apart. */
static void test_fp8_scaling(void)
{
    orr_gpu g = h100();
    g.fp8_rowwise_rate = 0.5;
    g.fp8_block_rate = 0.8;
    g.fp8_block_1d_rate = 0.25;
    orr_op op = kernel_op(ORR_CLS_GEMM, 8192, 8192, 8192, 0);
    op.dtype = ORR_FP8;
    int64_t t[4];
    for (int sc = 0; sc < 4; sc++) {
        op.flags = (uint8_t)(sc << ORR_OPF_FP8_SCALING_SHIFT);
        t[sc] = orr_est_op_ps(&g, &op, NULL);
    }
    CHECK_EQ_I64(t[ORR_FP8_SCALE_TENSOR], orr_est_gemm_ps(&g, 8192, 8192, 8192, 1, ORR_FP8, 0, 0));
    /* compute-bound: the time is the rate's inverse */
    CHECK_REL((double)t[ORR_FP8_SCALE_ROW], t[ORR_FP8_SCALE_TENSOR] / 0.5, 1e-9);
    CHECK_REL((double)t[ORR_FP8_SCALE_BLOCK], t[ORR_FP8_SCALE_TENSOR] / 0.8, 1e-9);
    CHECK_REL((double)t[ORR_FP8_SCALE_BLOCK_1D], t[ORR_FP8_SCALE_TENSOR] / 0.25, 1e-9);
    CHECK(orr_est_fp8_scaling_rate(&g, ORR_FP8_SCALE_TENSOR) == 1.0);
    g.fp8_block_rate = 0; /* not measured: per-tensor's rate (the spec refuses such a recipe) */
    op.flags = ORR_FP8_SCALE_BLOCK << ORR_OPF_FP8_SCALING_SHIFT;
    CHECK_EQ_I64(orr_est_op_ps(&g, &op, NULL), t[ORR_FP8_SCALE_TENSOR]);
    g.fp8_block_rate = 0.8;
    orr_op b16 = op; /* the bits mean nothing outside fp8 */
    b16.dtype = ORR_BF16;
    CHECK_EQ_I64(orr_est_op_ps(&g, &b16, NULL), orr_est_gemm_ps(&g, 8192, 8192, 8192, 1, ORR_BF16, 0, 0));
    /* the cache: one shape in each scaling, several times, each as orr_est_op_ps prices it */
    orr_workload *w = orr_workload_new(1, 1);
    orr_workload_add_rank(w, 0, 1, "r");
    for (int i = 0; i < 40; i++) {
        orr_op x = op;
        x.flags = (uint8_t)((i % 4) << ORR_OPF_FP8_SCALING_SHIFT);
        orr_rank_push(&w->ranks[0], &x);
    }
    orr_estimate_workload(w, &g);
    for (size_t i = 0; i < w->ranks[0].nops; i++) CHECK_EQ_I64(w->ranks[0].ops[i].dur_ps, t[i % 4]);
    orr_workload_free(w);
}

int main(void)
{
    test_wave_quantisation();
    test_gemm();
    test_attention();
    test_memory_bound();
    test_dispatch();
    test_workload_cache();
    test_fp8_scaling();
    return check_done();
}
