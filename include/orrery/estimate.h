/*
 * estimate.h - compute cost models: how long a kernel, copy or memset takes on a GPU.
 *
 * The default model is a roofline with efficiency curves per GPU and op class:
 *   GEMM: max(FLOPs / (peak x gemm_eff x wave efficiency), bytes / (HBM bw x mem_eff)), where the
 *         wave efficiency comes from tile and wave quantisation of the output over the SMs;
 *   flash-attention: FLOPs / (peak x attn_{fwd,bwd}_eff), with the same wave quantisation over
 *         (batch x heads x query blocks);
 *   memory-bound ops: piecewise in bytes on a log-log scale (TorchSim App. E): a floor below the
 *         L2-resident size, a transition segment, then bytes / (HBM bw x mem_eff).
 * Every estimate can say which model produced it.
 */
#ifndef ORRERY_ESTIMATE_H
#define ORRERY_ESTIMATE_H

#include <stdint.h>
#include "orrery/hw.h"
#include "orrery/workload.h"

typedef enum orr_est_model { ORR_EST_ROOFLINE, ORR_EST_GIVEN, ORR_EST_MODEL_COUNT } orr_est_model;

/* Duration of a GEMM of m x n x k (x batch) in dtype; flops and bytes as in the op. */
int64_t orr_est_gemm_ps(const orr_gpu *g, uint32_t m, uint32_t n, uint32_t k, uint32_t batch,
                        orr_dtype dt, double flops, uint64_t bytes);
/* An fp8 GEMM's rate under scaling sc relative to per-tensor scaling: the GPU's fp8_rowwise_rate,
 * fp8_block_rate or fp8_block_1d_rate (1 for per-tensor scaling, or where the GPU has none measured:
 * the spec refuses such a recipe). A GEMM op in ORR_FP8 carries sc in its ORR_OPF_FP8_SCALING bits. */
double orr_est_fp8_scaling_rate(const orr_gpu *g, orr_fp8_scaling sc);
/* Fraction of the SMs' work that is useful after tile and wave quantisation (0..1]. */
double orr_est_gemm_wave_eff(const orr_gpu *g, uint32_t m, uint32_t n, uint32_t batch);
/* Flash attention's rate at a shape relative to the reference shape (causal, 4096 x 4096, head dim
 * 128): the key blocks each query block visits against a fixed cost per query block, the masked
 * kernel's rate, the head dim (roofline.c). useful: the op's flops over the unmasked count
 * 4 x dims[0] x dims[1] x dims[2] x dims[3] (x 2.5 backward), i.e. the share of key blocks visited. */
double orr_est_attention_shape(int backward, const uint32_t dims[4], double useful);
/* Duration of a flash-attention kernel (forward or backward). dims as in orr_op. FlashAttention-2's
 * (attn_*_eff), or with cudnn cuDNN's fused attention (attn_cudnn_*_eff; same shape model). */
int64_t orr_est_attention_kernel_ps(const orr_gpu *g, int backward, int cudnn, const uint32_t dims[4], orr_dtype dt,
                                    double flops, uint64_t bytes);
int64_t orr_est_attention_ps(const orr_gpu *g, int backward, const uint32_t dims[4], orr_dtype dt,
                             double flops, uint64_t bytes);
/* Duration of a memory-bound kernel moving bytes (read + written). */
int64_t orr_est_memory_bound_ps(const orr_gpu *g, uint64_t bytes);
/* Duration of one op (kernel, memcpy, memset); which model was used goes to *model if not NULL. */
int64_t orr_est_op_ps(const orr_gpu *g, const orr_op *op, orr_est_model *model);
/* Fills dur_ps of every kernel, memcpy and memset of the workload that has none (dur_ps == 0). */
void orr_estimate_workload(orr_workload *w, const orr_gpu *g);

const char *orr_est_model_name(orr_est_model m);

#endif
