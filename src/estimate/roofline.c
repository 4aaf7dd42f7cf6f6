/*
 * roofline.c - the default compute cost model: how long a kernel, copy or memset takes on a GPU.
 *
 * Three models, chosen by op class (docs/models.md has the formulas and where each constant
 * comes from):
 *
 *   GEMM        max(compute, memory) where
 *                 compute = FLOPs / (peak[dtype] x gemm_eff x wave_eff)
 *                 memory  = bytes / (HBM bw x mem_eff)
 *               and wave_eff is the useful fraction of the SM-waves after the output is cut into
 *               gemm_tile_m x gemm_tile_n tiles (tile and wave quantisation).
 *   attention   the same with attn_{fwd,bwd}_eff, the work units being one 128-row query block of
 *               one (batch, head): FlashAttention-2's grid.
 *   memory-bound (elementwise, reduction, norm, optimizer, other, memcpy, memset): piecewise in the
 *               bytes moved on a log-log scale (TorchSim App. E): a floor, a power-law transition
 *               from the floor to the HBM asymptote, reached at the L2 size, then bytes / bandwidth.
 *
 * Every result is floored at the GPU's kernel_min_ps and rounded to integer picoseconds.
 * orr_estimate_workload fills the durations of a whole workload through a small cache, so a
 * million identical ops cost one estimate and a million hash lookups.
 */
#include "orrery/estimate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Query rows per FlashAttention-2 thread block: the unit of attention's wave quantisation. */
#define ATTN_QUERY_BLOCK 128u
/* Bytes one SM keeps in flight in a full wave of a grid-stride elementwise kernel: 2048 resident
 * threads x 16 bytes (one 128-bit load or store each). Below sms x this, a memory-bound kernel
 * does not fill the GPU and costs its floor. */
#define MEM_WAVE_BYTES_PER_SM (2048.0 * 16.0)
/* CTA tile used when a catalog entry has none (cuBLAS's common 128 x 128 tile on Ampere/Hopper). */
#define DEFAULT_GEMM_TILE 128u

/* Longest duration reported (about 11.6 days), so that sums of durations cannot overflow. */
#define EST_MAX_PS (ORR_PS_PER_S * 1000000LL)

/* Seconds to picoseconds, rounded; never negative, never NaN, saturating at EST_MAX_PS. */
static int64_t seconds_to_ps(double s)
{
    if (!(s > 0)) return 0; /* also catches NaN */
    double ps = s * (double)ORR_PS_PER_S;
    return ps >= (double)EST_MAX_PS ? EST_MAX_PS : (int64_t)llround(ps);
}

static int64_t floor_at_min(const orr_gpu *g, int64_t t_ps)
{
    return t_ps < g->kernel_min_ps ? g->kernel_min_ps : t_ps;
}

/* Dense tensor-core peak for dtype in FLOP/s; a dtype the GPU lacks (e.g. fp8 on A100) runs at
 * its bf16 rate, then fp16, then fp32. 0 if the catalog entry has no peak at all. */
static double peak_flops_for_dtype(const orr_gpu *g, orr_dtype dt)
{
    if ((unsigned)dt < ORR_DTYPE_COUNT && g->peak_flops[dt] > 0) return g->peak_flops[dt];
    if (g->peak_flops[ORR_BF16] > 0) return g->peak_flops[ORR_BF16];
    if (g->peak_flops[ORR_FP16] > 0) return g->peak_flops[ORR_FP16];
    return g->peak_flops[ORR_FP32] > 0 ? g->peak_flops[ORR_FP32] : 0;
}

/* Seconds to compute flops at peak x eff x wave_eff; 0 when the rate is unknown (no peak). An
 * efficiency left unset (0) means the peak. */
static double compute_seconds(double flops, double peak_flops, double eff, double wave_eff)
{
    double rate = peak_flops * (eff > 0 ? eff : 1.0) * wave_eff;
    return rate > 0 && flops > 0 ? flops / rate : 0;
}

/* Achieved streaming HBM bandwidth in bytes/s (0 if unknown). */
static double streaming_hbm_Bps(const orr_gpu *g)
{
    double eff = g->mem_eff > 0 ? g->mem_eff : 1.0;
    return g->hbm_Bps > 0 ? g->hbm_Bps * eff : 0;
}

/* Seconds to stream bytes through HBM at the achieved bandwidth; 0 when it is unknown. */
static double memory_seconds(const orr_gpu *g, uint64_t bytes)
{
    double bw = streaming_hbm_Bps(g);
    return bw > 0 ? (double)bytes / bw : 0;
}

/* Useful fraction of waves-of-SMs when work_units equal units are spread over the SMs. */
static double wave_efficiency(uint64_t work_units, uint32_t sms)
{
    if (work_units == 0 || sms == 0) return 1.0;
    uint64_t waves = (work_units + sms - 1) / sms;
    return (double)work_units / ((double)waves * (double)sms);
}

static uint64_t ceil_div_u64(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

double orr_est_gemm_wave_eff(const orr_gpu *g, uint32_t m, uint32_t n, uint32_t batch)
{
    if (m == 0 || n == 0) return 1.0; /* no shape known: no quantisation to model */
    uint32_t tm = g->gemm_tile_m ? g->gemm_tile_m : DEFAULT_GEMM_TILE;
    uint32_t tn = g->gemm_tile_n ? g->gemm_tile_n : DEFAULT_GEMM_TILE;
    uint64_t tiles = ceil_div_u64(m, tm) * ceil_div_u64(n, tn) * (batch ? batch : 1);
    return wave_efficiency(tiles, g->sms);
}

/* A tile's main loop runs over K; its prologue (first loads) and epilogue (output write-back) are a
 * fixed cost worth about gemm_k_overhead iterations of K, so short-K GEMMs (attention's QK^T with
 * K = head_dim, projections of small models) reach a smaller fraction of peak. */
static double gemm_k_efficiency(const orr_gpu *g, uint32_t k)
{
    if (g->gemm_k_overhead <= 0 || k == 0) return 1.0;
    return (double)k / ((double)k + g->gemm_k_overhead);
}

/* A GEMM at rate x its dtype's peak x gemm_eff x the wave and K efficiencies, or its bytes at the
 * streaming bandwidth, whichever is longer. */
static int64_t gemm_ps(const orr_gpu *g, uint32_t m, uint32_t n, uint32_t k, uint32_t batch, orr_dtype dt,
                       double flops, uint64_t bytes, double rate)
{
    double b = batch ? batch : 1;
    if (flops <= 0) flops = 2.0 * m * (double)n * k * b;
    if (bytes == 0)
        bytes = (uint64_t)(((double)m * k + (double)k * n + (double)m * n) * b * orr_dtype_bytes(dt));
    double wave = orr_est_gemm_wave_eff(g, m, n, batch) * gemm_k_efficiency(g, k);
    double tc = compute_seconds(flops, peak_flops_for_dtype(g, dt) * rate, g->gemm_eff, wave);
    double tm = memory_seconds(g, bytes);
    return floor_at_min(g, seconds_to_ps(tc > tm ? tc : tm));
}

int64_t orr_est_gemm_ps(const orr_gpu *g, uint32_t m, uint32_t n, uint32_t k, uint32_t batch,
                        orr_dtype dt, double flops, uint64_t bytes)
{
    return gemm_ps(g, m, n, k, batch, dt, flops, bytes, 1.0);
}

double orr_est_fp8_scaling_rate(const orr_gpu *g, orr_fp8_scaling sc)
{
    double r = 1.0;
    switch (sc) {
    case ORR_FP8_SCALE_TENSOR: break;
    case ORR_FP8_SCALE_ROW: r = g->fp8_rowwise_rate; break;
    case ORR_FP8_SCALE_BLOCK: r = g->fp8_block_rate; break;
    case ORR_FP8_SCALE_BLOCK_1D: r = g->fp8_block_1d_rate; break;
    }
    return r > 0 ? r : 1.0;
}

/* FLOPs of attention when the op does not carry them: forward is QK^T and PV, 2 x 2 x q x kv x d
 * per (batch, head); backward recomputes QK^T and does four more GEMMs, 2.5 x the forward. */
static double attention_flops(int backward, const uint32_t dims[4])
{
    double fwd = 4.0 * dims[0] * (double)dims[1] * dims[2] * dims[3];
    return backward ? 2.5 * fwd : fwd;
}

/* Flash attention's rate by shape (docs/models.md "Flash-attention"). Each 128-row query block visits
 * the key blocks it needs, under a causal (or windowed) mask the boundary one whole, plus a fixed cost
 * worth ATTN_BLOCK_OVERHEAD_{FWD,BWD} key blocks (loading Q, the final rescale, writing O and the
 * log-sum-exp; the backward's dQ accumulation); a masked kernel's blocks run at ATTN_MASK_RATE of an
 * unmasked one's; head dims below 128 lose what FlashAttention-2 loses at 64 (ATTN_HEAD_DIM_64_RATE,
 * log-interpolated; above 128 the kernels disagree and nothing changes). The three block constants
 * were fitted on 20 H100 FlashAttention-2 rows (head dim 128, forward and forward+backward, causal
 * and not, sequences 512 to 16384) of data/validation/kernels/attention.csv; tests/test_estimate.c
 * checks them, and the held-out series of other kernels and GPUs, shape by shape. The result is
 * relative to the reference shape (causal, 4096 x 4096, head dim 128), where the GPU's
 * attn_{fwd,bwd}_eff, its level, were set. */
#define ATTN_BLOCK_OVERHEAD_FWD 0.9
#define ATTN_BLOCK_OVERHEAD_BWD 1.8
#define ATTN_MASK_RATE 0.916
#define ATTN_HEAD_DIM_64_RATE 0.88
#define ATTN_REF_KV 4096.0

/* The op's flops count the key blocks a query block visits (the generator's causal_fraction counts the
 * diagonal block whole), so useful x kv_blocks is the blocks visited. */
static double attn_block_rate(double kv_blocks, double useful, double overhead)
{
    double work = useful * kv_blocks;
    return (useful < 0.999 ? ATTN_MASK_RATE : 1.0) * work / (work + overhead);
}

double orr_est_attention_shape(int backward, const uint32_t dims[4], double useful)
{
    if (dims[2] == 0 || dims[3] == 0 || !(useful > 0)) return 1.0;
    if (useful > 1.0) useful = 1.0;
    double o = backward ? ATTN_BLOCK_OVERHEAD_BWD : ATTN_BLOCK_OVERHEAD_FWD;
    double ref_blocks = ATTN_REF_KV / ATTN_QUERY_BLOCK;
    double rel = attn_block_rate(dims[2] / (double)ATTN_QUERY_BLOCK, useful, o) /
                 attn_block_rate(ref_blocks, (ref_blocks + 1.0) / (2.0 * ref_blocks), o);
    double d = dims[3];
    if (d < 128.0) rel *= d <= 64.0 ? ATTN_HEAD_DIM_64_RATE : ATTN_HEAD_DIM_64_RATE + (1.0 - ATTN_HEAD_DIM_64_RATE) * log2(d / 64.0);
    return rel;
}

int64_t orr_est_attention_kernel_ps(const orr_gpu *g, int backward, int cudnn, const uint32_t dims[4], orr_dtype dt,
                                    double flops, uint64_t bytes)
{
    double full = attention_flops(backward, dims);
    if (flops <= 0) flops = full;
    uint64_t units = (uint64_t)dims[0] * ceil_div_u64(dims[1], ATTN_QUERY_BLOCK);
    double wave = wave_efficiency(units, g->sms) * orr_est_attention_shape(backward, dims, full > 0 ? flops / full : 1.0);
    double eff = backward ? g->attn_bwd_eff : g->attn_fwd_eff;
    double cudnn_eff = backward ? g->attn_cudnn_bwd_eff : g->attn_cudnn_fwd_eff;
    if (cudnn && cudnn_eff > 0) eff = cudnn_eff; /* not measured (0): the spec refuses --attention cudnn there */
    double tc = compute_seconds(flops, peak_flops_for_dtype(g, dt), eff, wave);
    double tm = memory_seconds(g, bytes);
    return floor_at_min(g, seconds_to_ps(tc > tm ? tc : tm));
}

int64_t orr_est_attention_ps(const orr_gpu *g, int backward, const uint32_t dims[4], orr_dtype dt,
                             double flops, uint64_t bytes)
{
    return orr_est_attention_kernel_ps(g, backward, 0, dims, dt, flops, bytes);
}

/*
 * Memory-bound kernels, piecewise on a log-log scale (TorchSim App. E, with its K1 and K2 set
 * from the hardware instead of fitted):
 *   x <= x0:        t = max(kernel_min, x / bw)                 (the floor)
 *   x0 < x <= L2:   t = t_min * (x / x0)^s                      (power law, a line in log-log)
 *   x > L2:         t = x / bw                                  (the streaming asymptote)
 * where x is bytes read + written, bw = HBM bw x mem_eff, x0 = sms x MEM_WAVE_BYTES_PER_SM (one
 * full wave of resident threads), t_min = max(kernel_min, x0 / bw) (the floor at x0), and
 * s = log(t_L2 / t_min) / log(L2 / x0) with t_L2 = L2 / bw, so the curve is continuous at both
 * knees, monotone, and never below x / bw (0 < s <= 1). When the transition is empty (x0 >= L2,
 * or t_L2 <= t_min) the model is max(kernel_min, x / bw).
 */
int64_t orr_est_memory_bound_ps(const orr_gpu *g, uint64_t bytes)
{
    double bw = streaming_hbm_Bps(g);
    if (bw <= 0) return g->kernel_min_ps > 0 ? g->kernel_min_ps : 0;
    double x = (double)bytes;
    double x0 = (double)g->sms * MEM_WAVE_BYTES_PER_SM;
    double l2 = (double)g->l2_bytes;
    double t_floor = (double)g->kernel_min_ps / (double)ORR_PS_PER_S;
    double t_min = t_floor > x0 / bw ? t_floor : x0 / bw;
    double t_l2 = l2 / bw;
    if (x <= x0 || x > l2 || x0 >= l2 || t_l2 <= t_min)
        return floor_at_min(g, seconds_to_ps(x / bw));
    double slope = log(t_l2 / t_min) / log(l2 / x0);
    return floor_at_min(g, seconds_to_ps(t_min * pow(x / x0, slope)));
}

/* Duration of a compute kernel by its class. */
static int64_t kernel_ps(const orr_gpu *g, const orr_op *op)
{
    orr_dtype dt = (orr_dtype)op->dtype;
    switch ((orr_op_class)op->cls) {
    case ORR_CLS_GEMM: {
        double rate = dt == ORR_FP8 ? orr_est_fp8_scaling_rate(g, (orr_fp8_scaling)((op->flags & ORR_OPF_FP8_SCALING) >>
                                                                                    ORR_OPF_FP8_SCALING_SHIFT))
                                    : 1.0;
        return gemm_ps(g, op->dims[0], op->dims[1], op->dims[2], op->dims[3], dt, op->flops, op->bytes, rate);
    }
    case ORR_CLS_ATTENTION_FWD:
    case ORR_CLS_ATTENTION_BWD:
        return orr_est_attention_kernel_ps(g, op->cls == ORR_CLS_ATTENTION_BWD, (op->flags & ORR_OPF_ATTN_CUDNN) != 0,
                                           op->dims, dt, op->flops, op->bytes);
    default:
        return orr_est_memory_bound_ps(g, op->bytes);
    }
}

int64_t orr_est_op_ps(const orr_gpu *g, const orr_op *op, orr_est_model *model)
{
    int estimable = op->kind == ORR_OP_KERNEL || op->kind == ORR_OP_MEMCPY || op->kind == ORR_OP_MEMSET;
    if (!estimable || op->dur_ps > 0) {
        if (model) *model = ORR_EST_GIVEN;
        return op->dur_ps > 0 ? op->dur_ps : 0;
    }
    if (model) *model = ORR_EST_ROOFLINE;
    if (op->kind == ORR_OP_KERNEL) return kernel_ps(g, op);
    return orr_est_memory_bound_ps(g, op->bytes); /* memcpy (device to device) and memset */
}

/*
 * The cache of orr_estimate_workload: what determines an estimate (kind, class, dtype, dims, bytes,
 * flops) is packed into a key; a 64-bit hash of it indexes an orr_map whose value is the slot in
 * an array of (key, duration). A slot whose full key differs (a hash collision) is not used: the
 * op is estimated directly, so the cache can never change a result.
 */
typedef struct est_key { /* no implicit padding: keys are compared with memcmp */
    uint8_t kind, cls, dtype, kflags; /* kflags: a kernel's ORR_OPF_FP8_SCALING and ORR_OPF_ATTN_CUDNN bits */
    uint32_t dims[4];
    uint32_t pad2;
    uint64_t bytes;
    double flops;
} est_key;

typedef struct est_slot {
    est_key key;
    int64_t dur_ps;
} est_slot;

static est_key key_of(const orr_op *op)
{
    est_key k;
    memset(&k, 0, sizeof k);
    k.kind = op->kind;
    k.cls = op->kind == ORR_OP_KERNEL ? op->cls : 0;
    k.dtype = op->dtype;
    k.kflags = op->kind == ORR_OP_KERNEL ? (uint8_t)(op->flags & (ORR_OPF_FP8_SCALING | ORR_OPF_ATTN_CUDNN)) : 0;
    memcpy(k.dims, op->dims, sizeof k.dims);
    k.bytes = op->bytes;
    k.flops = op->flops;
    return k;
}

static uint64_t hash_key(const est_key *k)
{
    uint64_t fbits;
    memcpy(&fbits, &k->flops, sizeof fbits);
    uint64_t h = orr_hash64(((uint64_t)k->kflags << 24) | ((uint64_t)k->kind << 16) | ((uint64_t)k->cls << 8) | k->dtype);
    h = orr_hash64(h ^ (((uint64_t)k->dims[0] << 32) | k->dims[1]));
    h = orr_hash64(h ^ (((uint64_t)k->dims[2] << 32) | k->dims[3]));
    h = orr_hash64(h ^ k->bytes);
    h = orr_hash64(h ^ fbits);
    return h == UINT64_MAX ? 0 : h;
}

void orr_estimate_workload(orr_workload *w, const orr_gpu *g)
{
    orr_map index = {0};
    est_slot *slots = NULL;
    size_t nslots = 0, cap = 0;
    for (size_t r = 0; r < w->nranks; r++) {
        orr_rank *rank = &w->ranks[r];
        for (size_t i = 0; i < rank->nops; i++) {
            orr_op *op = &rank->ops[i];
            if (op->dur_ps != 0) continue;
            if (op->kind != ORR_OP_KERNEL && op->kind != ORR_OP_MEMCPY && op->kind != ORR_OP_MEMSET)
                continue;
            est_key k = key_of(op);
            uint64_t h = hash_key(&k);
            uint32_t *slot = orr_map_get(&index, h);
            if (slot && memcmp(&slots[*slot].key, &k, sizeof k) == 0) {
                op->dur_ps = slots[*slot].dur_ps;
                continue;
            }
            op->dur_ps = orr_est_op_ps(g, op, NULL);
            if (!slot && nslots < UINT32_MAX) {
                est_slot s = {k, op->dur_ps};
                orr_map_put(&index, h, (uint32_t)nslots);
                ORR_PUSH(slots, nslots, cap, s);
            }
        }
    }
    orr_map_free(&index);
    free(slots);
}

const char *orr_est_model_name(orr_est_model m)
{
    switch (m) {
    case ORR_EST_ROOFLINE: return "roofline";
    case ORR_EST_GIVEN: return "given";
    default: return "unknown";
    }
}
