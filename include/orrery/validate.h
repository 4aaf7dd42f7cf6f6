/*
 * validate.h - predictions of the published training measurements in data/validation, row by
 * row, with the configuration read from the csv and what the source leaves unstated assumed the
 * same way for every row (listed in each table's `assumptions`). Used by `orrery validate` and by
 * tests/test_valid_megatron.c, which holds the errors to the tolerances, the rows used for fitting
 * and the held-out rows separately.
 */
#ifndef ORRERY_VALIDATE_H
#define ORRERY_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include "orrery/core.h"
#include "orrery/spec.h"

typedef enum orr_valid_set {
    ORR_VALID_MEGATRON_H100, /* megatron_lm_h100_weak_scaling.csv: Megatron-Core r0.8, H100 (fitting) */
    ORR_VALID_SELENE_A100,   /* megatron_lm_a100_selene.csv, April-2021 rows: Megatron on A100 (fitting) */
    ORR_VALID_NEMO_H100,     /* nemo_24_07_perf_summary.csv, pre-training rows: NeMo 24.07 FP8 (held out) */
    ORR_VALID_LLAMA3_FP8,    /* megatron_lm_llama3_fp8_example.csv: Megatron-LM Llama 3 FP8 (held out) */
    ORR_VALID_MEGATRON_2020, /* megatron_lm_2020_v100_a100.csv, A100 rows (held out) */
    ORR_VALID_NANOTRON_TP,   /* nanotron_ultrascale_tp_scaling.csv: nanotron 3.57B, TP 2-32 (held out) */
    ORR_VALID_NANOTRON_DP,   /* nanotron_ultrascale_dp_scaling_partial.csv: no row predicted (model not stated) */
    ORR_VALID_DEEPSPEED,     /* deepspeed_published.csv: DeepSpeed ZeRO-3 on Azure A100 (held out) */
    ORR_VALID_MBRIDGE_H100,  /* megatron_bridge_h100_perf_summary.csv: Megatron-Bridge 25.09-26.06 (held out) */
    ORR_VALID_MBRIDGE_MOE_H100, /* the same file's MoE rows, NeMo 26.02-26.06 (held out) */
    ORR_VALID_DGXC_H100,     /* dgxc_h100_nemo.csv: DGX Cloud benchmarking recipes, NeMo 24.09 (held out) */
    ORR_VALID_SET_COUNT
} orr_valid_set;

typedef struct orr_valid_row {
    char model[48];
    uint32_t tp, pp, dp, cp, vpp, gpus, gbs, mbs;
    double published;         /* as published, in the table's unit */
    double predicted;         /* from the predicted iteration time, in the same unit and convention */
    double error;             /* throughput error: positive = predicted faster than measured */
    int fitted;               /* 1: the row was used to fit calibration constants; 0: held out */
    double iteration_s;       /* predicted */
    double peak_gib;          /* predicted peak reserved memory per GPU, GiB */
    int oom;                  /* predicted out of memory, though the source ran it */
} orr_valid_row;

typedef struct orr_valid_table {
    const char *title;
    const char *convention;   /* what is compared (the FLOP formula for TFLOP/s) */
    const char *assumptions;  /* what the source does not state, assumed for every row */
    const char *unit;         /* of published and predicted */
    orr_valid_row *rows;
    size_t n;
    size_t skipped;           /* rows not predicted (a reason in the assumptions) */
    const char *skip_why;     /* the first left-out row's reason (static text), NULL if none */
    double median_abs_error;  /* over every row */
    double median_fit, median_heldout; /* over the rows used for fitting / held out */
    size_t n_fit, n_heldout;
} orr_valid_table;

/* "megatron-h100", "selene-a100", "nemo-h100", "llama3-fp8", "megatron-2020", "nanotron-tp", "nanotron-dp",
 * "deepspeed-azure", "mbridge-h100", "mbridge-moe-h100". */
const char *orr_valid_set_name(orr_valid_set set);

/* Predicts every row of the set; dir is the data/validation folder. */
int orr_validate(orr_valid_set set, const char *dir, orr_valid_table *out, orr_err *err);
/* The same with the set's GPU at gemm_eff (0: the catalog's): re-running a fit's neighbourhood. */
int orr_validate_gemm_eff(orr_valid_set set, const char *dir, double gemm_eff, orr_valid_table *out, orr_err *err);
/* Every row of a set that gives the largest micro-batch that ran (nanotron-tp's max_batch_size) at
 * that micro-batch plus extra: extra 0 must not be predicted out of memory, 1 is expected to be. */
int orr_validate_max_batch(orr_valid_set set, const char *dir, unsigned extra, orr_valid_table *out, orr_err *err);
void orr_valid_table_free(orr_valid_table *t);

/* The rows of a set as jobs and measurements, for fitting on some rows and checking on others
 * (`orrery calibrate`'s round trip): the spec orr_validate predicts for the row (not yet resolved),
 * the published value, and the iteration time it implies. */
typedef struct orr_valid_case {
    orr_spec spec;
    double published;         /* as published, in the set's unit */
    double measured_s;        /* the measured iteration time the published value stands for, s */
    int csv_row;              /* row of the csv (1: the first after the header) */
} orr_valid_case;
/* Every predicted row of the set (*n of them, heap; rows the set leaves out are not there). */
int orr_valid_cases(orr_valid_set set, const char *dir, orr_valid_case **out, size_t *n, orr_err *err);
void orr_valid_cases_free(orr_valid_case *c, size_t n);
/* A text table with units: one line per row, then the median. */
void orr_valid_table_print(const orr_valid_table *t, orr_buf *out);

/* The compute model's flash-attention shape terms (orr_est_attention_shape) against the kernel
 * measurements of kernels/attention.csv: each series (one kernel on one GPU, direction, mask, head
 * dim, source and the notes' variant; flash kernels only, at least 3 sequence lengths, queries = keys;
 * sliding windows as cudnn-frontend's benchmark counts them) compared in shape,
 * each point's measured throughput over the series' point nearest 4096 against the predicted ratio,
 * so a kernel's own level does not enter. The constants were fitted on the H100 FlashAttention-2
 * series of head dim 128 (fitted = 1); every other series is held out. Not compared, and counted:
 * FP8 attention kernels and deterministic backward passes, which no job Orrery predicts runs (the
 * generator keeps attention in bf16 under FP8 training; frameworks default to the non-deterministic
 * backward). */
typedef struct orr_valid_kernel_series {
    char label[128];          /* gpu, kernel, direction, causal, head dim */
    int fitted;
    size_t n;                 /* points compared (the reference point excluded) */
    double median_abs_error;  /* of predicted ratio / measured ratio - 1 */
} orr_valid_kernel_series;

typedef struct orr_valid_kernels {
    orr_valid_kernel_series *series;
    size_t n;
    double median_fit, median_heldout; /* over the points of the fitted / held-out series */
    size_t n_fit, n_heldout;           /* points */
    size_t skipped_fp8, skipped_deterministic; /* rows out of the model's scope (not compared) */
} orr_valid_kernels;

int orr_validate_attention_shape(const char *dir, orr_valid_kernels *out, orr_err *err);
void orr_valid_kernels_print(const orr_valid_kernels *k, orr_buf *out);
void orr_valid_kernels_free(orr_valid_kernels *k);

/* The compute model against this project's own kernel measurements on one H100
 * (validation/measured/h100_2026-11-26: scripts/probe_gpu.py; nothing fitted to them):
 *   - bf16 GEMMs at the Megatron-Core weak-scaling rows' shapes: orr_est_gemm_ps against the measured
 *     time, median |error| and median signed error, overall and by tokens (micro-batch 4 and 1);
 *   - fp8 against bf16 at Llama and GPT-3 shapes: the predicted speed-up over the measured one;
 *   - fp8 rowwise and blockwise against per-tensor scaling: the GPU's rates for them were fitted on the
 *     dense shapes of two runs; the MoE experts' shapes and a run on a second machine are held out;
 *   - the experts' bf16 grouped GEMMs of MoE Table 2's AutoModel rows against the batched-GEMM model;
 *   - causal flash attention (PyTorch's flash and cuDNN kernels, dropout 0 and 0.1, batch 1 and 4,
 *     7-18 heads): orr_est_attention_kernel_ps (FlashAttention-2's level, or cuDNN's for its rows)
 *     against the measured time, median signed error per series; cuDNN's level was fitted on its
 *     dropout-0 rows, and the grouped-query shapes of attention_gqa.csv are held out.
 * Errors are predicted throughput over measured - 1 (positive: predicted faster). */
typedef struct orr_valid_attn_series {
    char label[96];           /* kernel, dropout, direction, batch */
    size_t n;                 /* head counts compared */
    double median_error;      /* signed */
} orr_valid_attn_series;

enum { ORR_KS_GEMM_BF16, ORR_KS_GEMM_FP8, ORR_KS_FLASH, ORR_KS_CUDNN, ORR_KS_MEMORY, ORR_KS_CLASSES };

typedef struct orr_valid_measured {
    size_t gemm_n, gemm_n_mbs4, gemm_n_mbs1;
    double gemm_median_abs, gemm_median_signed;
    double gemm_mbs4_median_signed, gemm_mbs1_median_signed;
    size_t fp8_n;                      /* tensorwise pairs */
    double fp8_speedup_measured;       /* median measured fp8 / bf16 throughput */
    double fp8_speedup_median_error;   /* median of predicted / measured speed-up - 1 */
    orr_valid_attn_series attn[32];
    size_t attn_n;
    /* cuDNN's fused attention at the GPU's attn_cudnn_{fwd,bwd}_eff ([0] forward, [1] backward): the
     * median signed error over the rows that level was fitted on (attention.csv, dropout 0) and over
     * the held-out grouped-query shapes (attention_gqa.csv) */
    size_t cudnn_n[2][2];
    double cudnn_error[2][2];
    /* compute beside a contender holding k SMs (overlap.csv): the median measured slowdown of the
     * GEMMs and of attention at each k, against the GPU's overlap_slowdown and nccl_gemm_slowdown */
    uint32_t overlap_blocks[4];
    double overlap_gemm[4], overlap_attn[4];
    size_t overlap_k, overlap_rows, overlap_skipped; /* k values; rows compared; rows whose contender ended first */
    double overlap_model, overlap_model_nccl_gemm, overlap_model_deepep_gemm;
    /* bf16 GEMMs at random shapes (gemm_sweep.csv), kernels of at least 100 us (below, the timing is
     * the host's), and the first of them beside 16 held SMs (overlap_sweep.csv) */
    size_t sweep_n, sweep_short;       /* compared; left out as host-bound */
    double sweep_median_abs, sweep_median_signed;
    /* the bf16 GEMMs above (Megatron-Core shapes and the sweep's kernels of at least 100 us) by their
     * measured duration: [0] under 0.8 ms, [1] 0.8-3 ms, [2] 3 ms and over. The probe times each shape
     * in one burst of back-to-back calls (3 ms for a 100 us kernel, 40-64 ms from 1.3 ms up), so the
     * long ones ran at the clock the 700 W cap allows, the short ones near the boost clock */
    size_t dur_n[3];
    double dur_median_signed[3];
    /* the same kind of GEMMs after 2 s of large ones (gemm_sustained.csv, the next day): shapes timed both
     * ways; the model's median error on the bursts and, |error| and signed, on the sustained rows; the
     * sustained time over the burst's - 1, median and least */
    size_t sustained_n;
    double sustained_burst_median_signed, sustained_median_abs, sustained_median_signed;
    double sustained_slowdown_median, sustained_slowdown_min;
    /* kernels_sustained.csv: sustained over burst time by class (ORR_KS_*: bf16 GEMMs, fp8 GEMMs, flash
     * attention, cuDNN attention, memory-bound kernels): rows, median, least and most; and fp8 over bf16
     * at the same shapes, medians of the burst's, the sustained and the model's speed-up */
    size_t ks_n[ORR_KS_CLASSES];
    double ks_ratio_median[ORR_KS_CLASSES], ks_ratio_min[ORR_KS_CLASSES], ks_ratio_max[ORR_KS_CLASSES];
    size_t ks_fp8_pairs;
    double ks_fp8_speedup_burst, ks_fp8_speedup_sustained, ks_fp8_speedup_model;
    /* layer_sustained.csv: the GEMMs of eager GPT layers inside steps run back to back against the
     * model's: rows, median error, largest |error| */
    size_t layer_gemm_n;
    double layer_gemm_median_signed, layer_gemm_max_abs;
    size_t sweep_overlap_n;            /* copy and spin rows compared */
    double sweep_overlap_copy, sweep_overlap_spin; /* median slowdowns */
    /* fp8 GEMMs by scaling against per-tensor at the same shape (gemm_fp8_block*.csv): [s - 1] for
     * orr_fp8_scaling s (rowwise, blockwise, blockwise 1x128 x 1x128), [..][0] the dense shapes of the two
     * runs the GPU's fp8_*_rate were fitted on, [..][1] held out (the MoE experts' shapes of those runs and
     * every row of a run on a second machine): rows, the median measured rate over per-tensor, the
     * median error of the model's rate (predicted / measured - 1) */
    size_t fp8_scaling_n[3][2];
    double fp8_scaling_measured[3][2], fp8_scaling_error[3][2];
    /* the experts' bf16 GEMMs of MoE Table 2's AutoModel rows (grouped_moe.csv) against the model's
     * batched GEMM: rows and median error, torch._grouped_mm and one torch.mm per expert */
    size_t grouped_n, grouped_loop_n;
    double grouped_median_error, grouped_loop_median_error;
    /* the same at the expert shapes of Megatron-Core's MoE rows (te_grouped_moe.csv, the next day) */
    size_t mcore_grouped_n, mcore_grouped_loop_n;
    double mcore_grouped_median_error, mcore_grouped_loop_median_error;
} orr_valid_measured;

/* gemm_eff > 0: the H100's at that value (the fit's check), else the catalog's. */
int orr_validate_measured(const char *dir, double gemm_eff, orr_valid_measured *out, orr_err *err);
void orr_valid_measured_print(const orr_valid_measured *m, orr_buf *out);

#endif
