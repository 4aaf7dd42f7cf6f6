#!/usr/bin/env python3
"""probe_gpu.py - measure, on one real GPU, the kernels Orrery's compute model prices.

Run on a machine with a CUDA GPU and PyTorch (no other package):

    python3 scripts/probe_gpu.py OUTDIR [--budget-s 330]

It writes, in the column layouts of data/validation/kernels/ (so `orrery validate` and the tests
read them like the public rows):

    gemm.csv       bf16 GEMMs at the exact shapes of the Megatron-Core H100 weak-scaling rows
                   (QKV, projection, FC1, FC2 and the logits; forward, data-gradient and
                   weight-gradient orientations; micro-batch 1 and 4), the weight gradient also
                   accumulated into fp32 as Megatron's gradient-accumulation fusion does, and fp8
                   (tensorwise and rowwise torch._scaled_mm) at Llama-like shapes
    attention.csv  causal SDPA forward and forward+backward, head dim 128, sequence 4096, the heads
                   per GPU of those rows, batch 1 and 4, dropout 0 and 0.1, flash and cuDNN backends
    attention_gqa.csv
                   the same with grouped-query heads (Qwen3, Llama 3 shapes), dropout 0
    gemm_fp8_block.csv
                   fp8 GEMMs by scaling (per-tensor, rowwise, blockwise 1x128 x 128x128 and 1x128 x
                   1x128) against bf16 at the MoE Table 1 experts' and the fp8 section's shapes, and the
                   DeepSeek-V3 proxy's grouped GEMMs (--only fp8_block)
    loss.csv       the LM head's GEMMs and Megatron's vocab-parallel cross-entropy (its arithmetic in eager
                   PyTorch, fp32) at the Megatron-Core rows' TP shards, micro-batch 4 and 1 (--only loss)
    grouped_moe.csv
                   the experts' bf16 grouped GEMMs of MoE Table 2's AutoModel rows (torch._grouped_mm
                   and one torch.mm per expert; forward, data and weight gradient; --only grouped_moe)
    te_grouped_moe.csv
                   the same at the expert shapes of Megatron-Core's MoE rows (Megatron-Bridge's Qwen3-30B-A3B,
                   GPT-OSS 120B, Qwen3-235B-A22B; MoE Table 2 rows 39 and 40), also as Transformer Engine's
                   GroupedLinear issues them on Hopper (one cuBLAS GEMM per expert over 4 streams) with the
                   host's time per GEMM issued (--only te_grouped_moe)
    membw.csv      memory-bound kernels by bytes moved (copy, add, layer norm, GELU, fused AdamW)
    overlap.csv    GEMMs and flash attention alone and while k thread blocks of a copy (NCCL-like)
                   or spin kernel run on another stream: compute's slowdown under communication
    gemm_sweep.csv, overlap_sweep.csv
                   bf16 GEMMs at log-uniform random shapes (a fixed seed), the first 80 also beside
                   16 blocks of each contender
    step.csv       tests/emu/torch/step.py (the emulator test's program) run for real: step time and
                   the allocator's peak, to set beside `orrery emulate` of the same program
    layer.csv      a Megatron GPT layer (LN, QKV, flash attention with dropout, projection,
                   dropout+residual, LN, FC1, GELU, FC2, dropout+residual) at each row's TP shard,
                   forward+backward of two stacked layers, time and peak memory
    gemm_sustained.csv
                   eight of gemm.csv's shapes timed in one burst (as there) and after 2 s of back-to-back
                   large GEMMs, with the clock and power after each: the rate the power cap leaves a
                   training step (--only gemm_sustained)
    kernels_sustained.csv
                   the same burst-against-sustained timing for attention (flash, cuDNN), memory-bound kernels
                   and fp8 GEMMs beside bf16 (--only kernels_sustained)
    layer_sustained.csv
                   layer.csv's two stacked GPT layers at four rows' shapes, burst against sustained, with the
                   GPU's kernel time by kind (GEMMs, attention, the rest) of one step after each
                   (--only layer_sustained)
    env.txt        the GPU, clocks, power limit, driver, torch/CUDA/cuDNN versions

Each kernel is timed with CUDA events around each call after warm-up; the value is the median.
Sections run in order of value and stop when the budget runs out, so a short lease still returns
the most important rows. Nothing here is read at build, test or run time; the measured files are
copied into data/validation/kernels/ with their provenance (docs/models.md).
"""
import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

T0 = time.time()
BUDGET_S = 330.0
SEQ = 4096
HEAD_DIM = 128
VOCAB = 131072

# The Megatron-Core H100 weak-scaling rows (data/validation/megatron_lm_h100_weak_scaling.csv):
# name, hidden, heads, tp.  Every one has head dim 128 and FFN 4 x hidden.
ROWS = [
    ("GPT 1.7B", 2048, 16, 1),
    ("GPT 7.1B", 4096, 32, 2),
    ("GPT 16B", 6144, 48, 4),
    ("GPT 32B", 7168, 56, 8),
    ("GPT 70B", 8192, 64, 8),
    ("GPT 119B", 10240, 80, 8),
    ("GPT 177B", 12288, 96, 8),
    ("GPT 314B", 16384, 128, 8),
    ("GPT 462B", 18432, 144, 8),
]

# fp8 shapes: Llama 3 8B TP 1, 70B TP 4 and TP 8, 405B TP 8 (GQA with 8 KV heads, SwiGLU), and
# GPT-3 175B TP 4; tokens 8192.
FP8_MODELS = [
    ("Llama3 8B tp1", 4096, 32, 8, 14336, True, 1),
    ("Llama3 70B tp4", 8192, 64, 8, 28672, True, 4),
    ("Llama3 70B tp8", 8192, 64, 8, 28672, True, 8),
    ("Llama3 405B tp8", 16384, 128, 8, 53248, True, 8),
    ("GPT3 175B tp4", 12288, 96, 96, 49152, False, 4),
]

# memory-bound kernels: element counts 2^14 .. 2^30 (32 KiB .. 2 GiB of bf16), norm shapes (tokens,
# hidden), fused AdamW sizes (fp32 parameters)
MEM_EXPONENTS = range(14, 31, 2)
NORM_SHAPES = ((16384, 2048), (16384, 4096), (16384, 8192), (4096, 18432))
ADAM_PARAMS = (1 << 26, 1 << 28, 1 << 29)

DEV = "cuda"
SOFTWARE = ""
GPU_NAME = ""
GPU_VARIANT = ""
OUT = {}


def left_s():
    return BUDGET_S - (time.time() - T0)


def log(msg):
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


class Sink:
    """One CSV file, header first, each row flushed as it is written."""

    def __init__(self, path, header):
        self.f = open(path, "w", newline="")
        self.w = csv.writer(self.f)
        self.w.writerow(header)
        self.f.flush()

    def row(self, values):
        self.w.writerow(values)
        self.f.flush()


def once_ms(fn):
    """Milliseconds of one call of fn, between two CUDA events."""
    s = torch.cuda.Event(enable_timing=True)
    e = torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


def time_ms(fn, min_total_ms=40.0, max_iters=30, warmup=3):
    """Median milliseconds of one call of fn, CUDA events around each call after warm-up."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    one = max(once_ms(fn), 1e-3)
    return burst_median_ms(fn, int(max(5, min(max_iters, math.ceil(min_total_ms / one)))))


def burst_median_ms(fn, n):
    """Median milliseconds of one call of fn over n back-to-back calls, a CUDA event after each."""
    evs = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    evs[0].record()
    for i in range(n):
        fn()
        evs[i + 1].record()
    evs[-1].synchronize()
    return statistics.median(evs[i].elapsed_time(evs[i + 1]) for i in range(n))


def env(out_dir):
    global SOFTWARE, GPU_NAME, GPU_VARIANT
    p = torch.cuda.get_device_properties(0)
    GPU_VARIANT = p.name
    # the short name the kernel tables use in their gpu column ("NVIDIA H100 80GB HBM3" -> "H100")
    words = [w for w in p.name.split() if w not in ("NVIDIA", "Tesla")]
    GPU_NAME = words[0] if words else p.name
    cudnn = torch.backends.cudnn.version()
    SOFTWARE = f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {cudnn}"
    lines = [
        f"date_utc {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        f"gpu {p.name} ({GPU_NAME}) sms {p.multi_processor_count} mem_bytes {p.total_memory}",
        f"software {SOFTWARE}",
    ]
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,power.limit,clocks.max.sm,"
                            "clocks.max.mem,clocks.sm,temperature.gpu", "--format=csv"],
                           capture_output=True, text=True, timeout=20)
        lines.append(q.stdout.strip())
    except Exception as exc:  # noqa: BLE001 - a missing nvidia-smi is recorded, not fatal
        lines.append(f"nvidia-smi: {exc}")
    with open(os.path.join(out_dir, "env.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    log(" | ".join(lines))


def smi_clocks():
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        return q.stdout.strip()
    except Exception:  # noqa: BLE001
        return "n/a"


GEMM_HEADER = ["gpu", "gpu_variant", "impl", "op", "dtype_a_b", "scaling", "dtype_out", "M", "N", "K",
               "metric", "value", "unit", "time_us", "software", "notes", "value_origin", "source"]
SOURCE = "measured by scripts/probe_gpu.py on this project's lent GPU"
OVERLAP_HEADER = ["kernel", "M", "N", "K", "contender", "contender_blocks", "contender_alone_GBps", "alone_ms",
                  "contended_ms", "slowdown", "contender_outlasted", "software", "gpu", "source"]


def gemm_row(sink, impl, op, dtype, scaling, dtype_out, m, n, k, t_ms, notes):
    """One row of a gemm.csv-layout file: the GEMM m x n x k that took t_ms."""
    sink.row([GPU_NAME, GPU_VARIANT, impl, op, dtype, scaling, dtype_out, m, n, k, "achieved TFLOP/s",
              f"{2.0 * m * n * k / (t_ms * 1e-3) / 1e12:.1f}", "TFLOP/s", f"{t_ms * 1e3:.1f}", SOFTWARE, notes,
              "measured", SOURCE])


def overlap_row(sink, label, m, n, k, c, cname, alone_ms, contended_ms, outlasted):
    """One row of an overlap.csv-layout file: label alone and beside contender c's kind cname."""
    sink.row([label, m, n, k, cname, c.blocks, f"{c.copy_GBps:.1f}" if cname == "copy" else "", f"{alone_ms:.4f}",
              f"{contended_ms:.4f}", f"{contended_ms / alone_ms - 1:.4f}", outlasted, SOFTWARE, GPU_VARIANT, SOURCE])


def gemm_shapes_megatron():
    """(label, M, N, K) of every GEMM orientation of each row's TP shard, micro-batch 1 and 4."""
    out = []
    for name, h, heads, tp in ROWS:
        for mbs in (4, 1):
            m = mbs * SEQ
            lin = [("qkv", 3 * h // tp, h), ("proj", h, h // tp), ("fc1", 4 * h // tp, h),
                   ("fc2", h, 4 * h // tp), ("logits", VOCAB // tp, h)]
            for lname, n, k in lin:
                out.append((f"{name} mbs{mbs} {lname}", m, n, k))
    return out


def forward_gemm(m, n, k):
    """A call of y = x w^T on fresh random bf16 operands, x (m, k) and w (n, k): the forward orientation."""
    x = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
    w = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
    y = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
    return lambda: torch.mm(x, w.t(), out=y)


def gemm_section(out_dir):
    sink = Sink(os.path.join(out_dir, "gemm.csv"), GEMM_HEADER)
    seen = {}
    for label, m, n, k in gemm_shapes_megatron():
        if left_s() < 200:
            log("gemm: budget, stopping")
            break
        x = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
        dy = torch.randn(m, n, device=DEV, dtype=torch.bfloat16)
        y = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
        dx = torch.empty(m, k, device=DEV, dtype=torch.bfloat16)
        dw = torch.empty(n, k, device=DEV, dtype=torch.bfloat16)
        cases = [
            ("fwd", (m, n, k), lambda: torch.mm(x, w.t(), out=y)),
            ("dgrad", (m, k, n), lambda: torch.mm(dy, w, out=dx)),
            ("wgrad", (n, k, m), lambda: torch.mm(dy.t(), x, out=dw)),
        ]
        for op, (gm, gn, gk), fn in cases:
            key = (op, gm, gn, gk)
            if key in seen:
                continue
            t = time_ms(fn)
            seen[key] = t
            gemm_row(sink, "torch.mm (cuBLAS via PyTorch)", f"{op} ({label})", "bf16", "none", "bf16", gm, gn, gk,
                     t, "median of CUDA-event-timed calls after warm-up")
        # Megatron's gradient-accumulation fusion: the weight gradient accumulated into the fp32
        # main_grad (bf16 inputs, fp32 C, beta 1).
        try:
            g32 = torch.zeros(n, k, device=DEV, dtype=torch.float32)
            t = time_ms(lambda: torch.addmm(g32, dy.t(), x, out_dtype=torch.float32))
            gemm_row(sink, "torch.addmm out_dtype fp32 (cuBLAS via PyTorch)", f"wgrad_accum_fp32 ({label})", "bf16",
                     "none", "fp32 (accumulated, beta 1)", n, k, m, t, "Megatron gradient_accumulation_fusion analogue")
            del g32
        except Exception as exc:  # noqa: BLE001
            if "accum" not in seen:
                log(f"wgrad fp32 accumulate unsupported: {exc!r}"[:300])
            seen["accum"] = 0
        del x, w, dy, y, dx, dw
        log(f"gemm {label} done; clocks {smi_clocks()}")
    torch.cuda.empty_cache()


def sustained_ms(fn, soak_fn, soak_s=2.0, run_s=1.0):
    """Median milliseconds of one call of fn in back-to-back calls lasting run_s, right after soak_fn
    ran back to back for soak_s: the clock a training step's GEMMs see once the power cap holds it."""
    t_end = time.time() + soak_s
    while time.time() < t_end:
        for _ in range(8):
            soak_fn()
        torch.cuda.synchronize()
    one = max(once_ms(fn), 1e-3)
    return burst_median_ms(fn, int(max(5, min(20000, math.ceil(run_s * 1e3 / one)))))


def gemm_sustained_section(out_dir):
    """The GEMMs of gemm.csv whose measured rate depends on how long the probe ran them: gemm.csv times
    each shape in one burst (3 ms of calls for a 100 us kernel, 40-64 ms for the long ones), and the
    log shows 1800-1965 MHz after short bursts, 1305-1530 MHz at 650-690 W after long ones. Here each
    shape is timed twice: in that burst (as gemm.csv), and after 2 s of back-to-back large GEMMs then
    for 1 s, with nvidia-smi's clock and power after each."""
    sink = Sink(os.path.join(out_dir, "gemm_sustained.csv"), GEMM_HEADER)
    shapes = {label: (m, n, k) for label, m, n, k in gemm_shapes_megatron()}
    soak_label = "GPT 1.7B mbs4 logits"  # the longest forward GEMM there, ~12 ms
    soak = forward_gemm(*shapes[soak_label])
    picks = ["GPT 1.7B mbs1 qkv", "GPT 7.1B mbs1 proj", "GPT 119B mbs1 proj", "GPT 32B mbs1 fc1", "GPT 70B mbs1 fc1",
             "GPT 7.1B mbs4 qkv", "GPT 177B mbs4 fc2", "GPT 462B mbs4 fc2"]
    for label in picks:
        if left_s() < 60:
            log("gemm_sustained: budget, stopping")
            break
        m, n, k = shapes[label]
        fn = forward_gemm(m, n, k)
        time.sleep(2.0)  # let the clock recover from the previous shape's soak before the burst
        t_burst = time_ms(fn)
        c_burst = smi_clocks()
        t_sus = sustained_ms(fn, soak)
        c_sus = smi_clocks()
        gemm_row(sink, "torch.mm (cuBLAS via PyTorch)", f"fwd ({label}) burst", "bf16", "none", "bf16", m, n, k,
                 t_burst, f"as gemm.csv: one burst after 2 s idle; then nvidia-smi {c_burst}")
        gemm_row(sink, "torch.mm (cuBLAS via PyTorch)", f"fwd ({label}) sustained", "bf16", "none", "bf16", m, n,
                 k, t_sus, f"1 s of calls after 2 s of {soak_label} forward GEMMs; then nvidia-smi {c_sus}")
        log(f"gemm_sustained {label}: burst {t_burst:.3f} ms ({c_burst}), sustained {t_sus:.3f} ms ({c_sus})")
        del fn
    del soak
    torch.cuda.empty_cache()


SUSTAINED_HEADER = ["kernel", "shape", "dtype", "burst_ms", "sustained_ms", "sustained_over_burst", "burst_clocks",
                    "sustained_clocks", "software", "gpu", "source"]


def kernels_sustained_section(out_dir):
    """gemm_sustained's burst-against-sustained timing for the other kernels of a step: causal attention
    (flash and cuDNN, forward and forward+backward, the Megatron-Core rows' heads per GPU, dropout 0 and
    0.1), memory-bound kernels (copy, layer norm, GELU, fused AdamW), and fp8 GEMMs (tensorwise) beside
    bf16 at the same shapes: does the 700 W cap slow them as it slows bf16 GEMMs?"""
    sink = Sink(os.path.join(out_dir, "kernels_sustained.csv"), SUSTAINED_HEADER)
    from torch.nn.attention import sdpa_kernel
    soak = forward_gemm(*{lb: (m, n, k) for lb, m, n, k in gemm_shapes_megatron()}["GPT 1.7B mbs4 logits"])
    cases = []

    def attn(bname, be, b, nh, p, bwd):
        q = torch.randn(b, nh, SEQ, HEAD_DIM, device=DEV, dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn_like(q, requires_grad=True)
        v = torch.randn_like(q, requires_grad=True)
        do = torch.randn_like(q)

        def fn():
            with sdpa_kernel([be]):
                o = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
                if bwd:
                    torch.autograd.grad(o, (q, k, v), do)
        return fn

    for bname, be, _ in sdpa_backends():
        for b, nh, p in ((4, 16, 0.0), (4, 16, 0.1), (1, 8, 0.0)):
            for bwd in (0, 1):
                cases.append((f"attention {bname} {'fwd+bwd' if bwd else 'fwd'} dropout {p}",
                              f"b{b} h{nh} s{SEQ} d{HEAD_DIM} causal", "bf16",
                              lambda bname=bname, be=be, b=b, nh=nh, p=p, bwd=bwd: attn(bname, be, b, nh, p, bwd)))

    def mem(kind):
        if kind == "copy":
            a = torch.randn(1 << 29, device=DEV, dtype=torch.bfloat16)
            c = torch.empty_like(a)
            return lambda: c.copy_(a)
        if kind == "layer_norm":
            x = torch.randn(16384, 4096, device=DEV, dtype=torch.bfloat16, requires_grad=True)
            wt = torch.ones(4096, device=DEV, dtype=torch.bfloat16, requires_grad=True)
            bs = torch.zeros(4096, device=DEV, dtype=torch.bfloat16, requires_grad=True)
            g = torch.randn(16384, 4096, device=DEV, dtype=torch.bfloat16)
            return lambda: torch.autograd.grad(F.layer_norm(x, (4096,), wt, bs), (x, wt, bs), g)
        if kind == "gelu":
            y = torch.randn(16384, 16384, device=DEV, dtype=torch.bfloat16)
            return lambda: F.gelu(y, approximate="tanh")
        prm = torch.nn.Parameter(torch.randn(1 << 28, device=DEV, dtype=torch.float32))
        prm.grad = torch.randn_like(prm)
        opt = torch.optim.AdamW([prm], lr=1e-4, fused=True)
        return opt.step

    for kind, shape in (("copy", "2^29 bf16"), ("layer_norm", "16384x4096 fwd+bwd"), ("gelu", "16384x16384 tanh"),
                        ("adamw", "2^28 fp32 fused")):
        cases.append((kind, shape, "bf16" if kind != "adamw" else "fp32", lambda kind=kind: mem(kind)))

    def gemm8(m, n, k, fp8):
        a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
        if not fp8:
            return lambda: torch.mm(a, b.t())
        a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        one = torch.ones((), device=DEV, dtype=torch.float32)
        return lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    for label, m, n, k in (("Llama3 70B tp4 fc1", 8192, 14336, 8192), ("Llama3 8B tp1 qkv", 8192, 6144, 4096),
                           ("Llama3 405B tp8 fc2", 8192, 16384, 6656)):
        for fp8 in (0, 1):
            cases.append((f"gemm {label}", f"{m}x{n}x{k}", "fp8 e4m3 tensorwise" if fp8 else "bf16",
                          lambda m=m, n=n, k=k, fp8=fp8: gemm8(m, n, k, fp8)))
    for name, shape, dtype, make in cases:
        if left_s() < 15:
            log("kernels_sustained: budget, stopping")
            break
        try:
            fn = make()
            time.sleep(2.0)
            t_burst = time_ms(fn)
            c_burst = smi_clocks()
            t_sus = sustained_ms(fn, soak)
            c_sus = smi_clocks()
        except Exception as exc:  # noqa: BLE001
            log(f"kernels_sustained {name}: {exc!r}"[:300])
            continue
        sink.row([name, shape, dtype, f"{t_burst:.4f}", f"{t_sus:.4f}", f"{t_sus / t_burst:.4f}", c_burst, c_sus,
                  SOFTWARE, GPU_VARIANT, SOURCE])
        log(f"kernels_sustained {name} {shape} {dtype}: burst {t_burst:.3f} ms, sustained {t_sus:.3f} ms "
            f"(x{t_sus / t_burst:.3f}; {c_sus})")
        del fn
        torch.cuda.empty_cache()
    del soak


def fp8_section(out_dir):
    sink = Sink(os.path.join(out_dir, "gemm_fp8.csv"), GEMM_HEADER)
    m = 8192
    f8 = torch.float8_e4m3fn
    for name, h, heads, kvh, ffn, gated, tp in FP8_MODELS:
        if left_s() < 25:
            log("fp8: budget, stopping")
            break
        lin = [("qkv", (heads + 2 * kvh) * HEAD_DIM // tp, h), ("proj", h, h // tp),
               ("fc1", (2 if gated else 1) * ffn // tp, h), ("fc2", h, ffn // tp)]
        for lname, n, k in lin:
            for op, (gm, gn, gk) in (("fwd", (m, n, k)), ("dgrad", (m, k, n)), ("wgrad", (n, k, m))):
                a = torch.randn(gm, gk, device=DEV, dtype=torch.bfloat16)
                b = torch.randn(gn, gk, device=DEV, dtype=torch.bfloat16)
                t16 = time_ms(lambda: torch.mm(a, b.t()))
                a8, b8 = a.to(f8), b.to(f8)
                one = torch.ones((), device=DEV, dtype=torch.float32)
                rows = [("bf16", "none", t16)]
                try:
                    rows.append(("fp8 e4m3", "tensorwise",
                                 time_ms(lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                                                  out_dtype=torch.bfloat16))))
                except Exception as exc:  # noqa: BLE001
                    log(f"fp8 tensorwise: {exc!r}"[:300])
                try:
                    sa = torch.ones(gm, 1, device=DEV, dtype=torch.float32)
                    sb = torch.ones(1, gn, device=DEV, dtype=torch.float32)
                    rows.append(("fp8 e4m3", "rowwise",
                                 time_ms(lambda: torch._scaled_mm(a8, b8.t(), scale_a=sa, scale_b=sb,
                                                                  out_dtype=torch.bfloat16))))
                except Exception as exc:  # noqa: BLE001
                    log(f"fp8 rowwise: {exc!r}"[:300])
                for dt, scaling, t in rows:
                    gemm_row(sink, "torch.mm / torch._scaled_mm (cuBLASLt via PyTorch)", f"{op} ({name} {lname})",
                             dt, scaling, "bf16", gm, gn, gk, t, "random normal inputs; median of CUDA-event-timed calls")
                del a, b, a8, b8
        log(f"fp8 {name} done")
    # the cast that precedes an fp8 GEMM: amax and scale-and-cast of an activation
    try:
        x = torch.randn(m, 8192, device=DEV, dtype=torch.bfloat16)
        t_amax = time_ms(lambda: x.abs().amax())
        t_cast = time_ms(lambda: (x * 2.0).to(f8))
        log(f"fp8 cast of {m}x8192 bf16: amax {t_amax * 1e3:.1f} us, scale+cast {t_cast * 1e3:.1f} us")
    except Exception as exc:  # noqa: BLE001
        log(f"fp8 cast: {exc!r}"[:300])


# MoE Table 1 (data/validation/moe/moe_public.csv rows 3-14, Megatron-LM's moe_perf test): the
# experts' GEMMs of one EP8 rank at 4096 tokens a rank, balanced routing. Mixtral proxy: hidden 4096,
# expert FFN 14336 (ungated), 8 experts, top 2: one local expert of 8192 tokens. DeepSeek-V3 proxy:
# hidden 7168, expert FFN 2048, 32 experts, top 8: four local experts of 8192 tokens each.
MOE_EXPERTS = [("mixtral proxy", 4096, 14336, 1, 8192), ("dsv3 proxy", 7168, 2048, 4, 8192)]


def blockwise_mm():
    """A function (a8, b8t, scale kinds) -> out for DeepSeek-style blockwise fp8 scaling, or the reason none works.

    a8 is (M, K) row-major, b8t is (K, N) column-major (b8 (N, K) row-major, transposed). kind_b is
    "128x128" (a weight, TE's forward and data gradient) or "1x128" (an activation or gradient, TE's
    weight gradient). torch 2.10+ has torch.nn.functional.scaled_mm with ScalingType; the older
    torch._scaled_mm takes the scales by their shapes and strides (ScaledBlas.cpp)."""
    def scales(a8, b8t, kind_b):
        m, k = a8.shape
        n = b8t.shape[1]
        sa = torch.ones(k // 128, m, device=DEV, dtype=torch.float32).t()  # (M, K/128), stride (1, M)
        if kind_b == "128x128":
            sb = torch.ones(n // 128, k // 128, device=DEV, dtype=torch.float32).t()  # (K/128, N/128)
        else:
            sb = torch.ones(k // 128, n, device=DEV, dtype=torch.float32)  # (K/128, N), b.t() 1x128
        return sa, sb

    candidates = []
    errors = []
    try:
        from torch.nn.functional import ScalingType, scaled_mm  # noqa: PLC0415

        def v2(a8, b8t, kind_b):
            sa, sb = scales(a8, b8t, kind_b)
            rb = ScalingType.BlockWise128x128 if kind_b == "128x128" else ScalingType.BlockWise1x128
            return scaled_mm(a8, b8t, sa, ScalingType.BlockWise1x128, sb, rb, output_dtype=torch.bfloat16)

        candidates.append((v2, "torch.nn.functional.scaled_mm (ScalingType.BlockWise1x128 / BlockWise128x128)"))
    except ImportError as exc:
        errors.append(f"F.scaled_mm: {exc!r}"[:400])

    def v1(a8, b8t, kind_b):
        sa, sb = scales(a8, b8t, kind_b)
        return torch._scaled_mm(a8, b8t, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

    candidates.append((v1, "torch._scaled_mm (blockwise scales by shape and stride)"))
    # the first candidate that runs both kinds on a small shape
    for fn, name in candidates:
        try:
            a = torch.randn(256, 512, device=DEV).to(torch.float8_e4m3fn)
            b = torch.randn(256, 512, device=DEV).to(torch.float8_e4m3fn)
            fn(a, b.t(), "128x128")
            fn(a, b.t(), "1x128")
            return fn, name
        except Exception as exc:  # noqa: BLE001
            errors.append(f"{name}: {exc!r}"[:400])
    return None, "; ".join(errors)


def fp8_block_section(out_dir):
    """bf16 against fp8 tensorwise, rowwise and blockwise (1x128 activations with 128x128 weights as
    Transformer Engine's Float8BlockScaling forward and data gradient, 1x128 by 1x128 as its weight
    gradient) at the MoE Table 1 experts' shapes and the fp8 section's dense shapes; the grouped
    GEMMs of the DeepSeek-V3 proxy's four local experts (torch._grouped_mm bf16, torch._scaled_grouped_mm
    rowwise fp8) against four separate GEMMs."""
    sink = Sink(os.path.join(out_dir, "gemm_fp8_block.csv"), GEMM_HEADER)
    f8 = torch.float8_e4m3fn
    bmm, bimpl = blockwise_mm()
    log(f"blockwise fp8: {bimpl}")
    shapes = []
    for name, h, fe, nloc, tok in MOE_EXPERTS:
        for lname, n, k in (("fc1", fe, h), ("fc2", h, fe)):
            shapes += [(f"{name} {lname} fwd", tok, n, k, "fwd"), (f"{name} {lname} dgrad", tok, k, n, "dgrad"),
                       (f"{name} {lname} wgrad", n, k, tok, "wgrad")]
    for name, h, heads, kvh, ffn, gated, tp in FP8_MODELS:
        lin = [("qkv", (heads + 2 * kvh) * HEAD_DIM // tp, h), ("proj", h, h // tp),
               ("fc1", (2 if gated else 1) * ffn // tp, h), ("fc2", h, ffn // tp)]
        for lname, n, k in lin:
            shapes += [(f"{name} {lname} fwd", 8192, n, k, "fwd"), (f"{name} {lname} dgrad", 8192, k, n, "dgrad"),
                       (f"{name} {lname} wgrad", n, k, 8192, "wgrad")]
    one = torch.ones((), device=DEV, dtype=torch.float32)
    note = "random normal inputs; unit scales; median of CUDA-event-timed calls"
    for label, gm, gn, gk, op in shapes:
        if left_s() < 40:
            log("fp8_block: budget, stopping")
            break
        a = torch.randn(gm, gk, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(gn, gk, device=DEV, dtype=torch.bfloat16)
        rows = [("bf16", "none", time_ms(lambda: torch.mm(a, b.t())))]
        a8, b8 = a.to(f8), b.to(f8)
        rows.append(("fp8 e4m3", "tensorwise", time_ms(lambda: torch._scaled_mm(
            a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))))
        sa = torch.ones(gm, 1, device=DEV, dtype=torch.float32)
        sb = torch.ones(1, gn, device=DEV, dtype=torch.float32)
        try:
            rows.append(("fp8 e4m3", "rowwise", time_ms(lambda: torch._scaled_mm(
                a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16))))
        except Exception as exc:  # noqa: BLE001
            log(f"fp8 rowwise: {exc!r}"[:300])
        if bmm is not None:
            kind = "1x128" if op == "wgrad" else "128x128"
            try:
                rows.append(("fp8 e4m3", f"blockwise 1x128 x {kind}", time_ms(lambda: bmm(a8, b8.t(), kind))))
            except Exception as exc:  # noqa: BLE001
                log(f"fp8 blockwise {label}: {exc!r}"[:300])
        for dt, scaling, t in rows:
            gemm_row(sink, "torch.mm / torch._scaled_mm" + (f" / {bimpl}" if "blockwise" in scaling else ""),
                     f"{op} ({label})", dt, scaling, "bf16", gm, gn, gk, t, note)
        del a, b, a8, b8
    log(f"fp8_block dense done; clocks {smi_clocks()}")
    # grouped: the DeepSeek-V3 proxy's four local experts, 8192 tokens each, FC1 and FC2 forward
    name, h, fe, nloc, tok = MOE_EXPERTS[1]
    offs = torch.arange(1, nloc + 1, device=DEV, dtype=torch.int32) * tok
    for lname, n, k in (("fc1", fe, h), ("fc2", h, fe)):
        a = torch.randn(nloc * tok, k, device=DEV, dtype=torch.bfloat16)
        w = torch.randn(nloc, n, k, device=DEV, dtype=torch.bfloat16)
        loop = time_ms(lambda: [torch.mm(a[i * tok:(i + 1) * tok], w[i].t()) for i in range(nloc)])
        gemm_row(sink, "torch.mm x4 (one per expert)", f"grouped fwd ({name} {lname}, {nloc} experts)", "bf16",
                 "none", "bf16", nloc * tok, n, k, loop, note)
        try:
            t = time_ms(lambda: torch._grouped_mm(a, w.transpose(-2, -1), offs=offs, out_dtype=torch.bfloat16))
            gemm_row(sink, "torch._grouped_mm", f"grouped fwd ({name} {lname}, {nloc} experts)", "bf16", "none",
                     "bf16", nloc * tok, n, k, t, note)
        except Exception as exc:  # noqa: BLE001
            log(f"grouped bf16: {exc!r}"[:300])
        try:
            a8, w8 = a.to(f8), w.to(f8)
            sa = torch.ones(nloc * tok, device=DEV, dtype=torch.float32)
            sw = torch.ones(nloc, n, device=DEV, dtype=torch.float32)
            t = time_ms(lambda: torch._scaled_grouped_mm(a8, w8.transpose(-2, -1), sa, sw, offs=offs,
                                                         out_dtype=torch.bfloat16))
            gemm_row(sink, "torch._scaled_grouped_mm", f"grouped fwd ({name} {lname}, {nloc} experts)", "fp8 e4m3",
                     "rowwise", "bf16", nloc * tok, n, k, t, note)
        except Exception as exc:  # noqa: BLE001
            log(f"grouped fp8 rowwise: {exc!r}"[:300])
        del a, w
    log(f"fp8_block grouped done; clocks {smi_clocks()}")


# MoE Table 2's AutoModel rows (data/validation/moe/moe_public.csv rows 55-60): one EP rank's experts
# under round-robin (balanced) routing: name, hidden, expert FFN (gated: fc1 is 2 x ffn wide), local
# experts, tokens per expert (tokens a rank x top-k x ep / experts).
GROUPED_MOE = [
    ("Qwen3-30B-A3B ep8 mbs4", 2048, 768, 16, 8192),
    ("gpt-oss-20b ep8 mbs2", 2880, 2880, 4, 8192),
    ("gpt-oss-120b ep64 mbs2", 2880, 2880, 2, 16384),
    ("DeepSeek-V3 ep64 mbs1", 7168, 2048, 4, 8192),
    ("Kimi-K2 ep32 mbs1", 7168, 2048, 12, 2731),
]


# The experts' GEMMs on one EP rank of Megatron-Core's MoE rows under balanced routing, as Transformer
# Engine's GroupedLinear runs them on Hopper (te_multi_stream below): Megatron-Bridge's DGX-H100 rows
# (Qwen3-30B-A3B EP16, GPT-OSS 120B EP8, Qwen3-235B-A22B TP2 EP32) and MoE Table 2's ModelZoo rows 39
# and 40 (Qwen3-235B-A22B EP8 at TP2 and TP4): name, hidden, expert FFN, local experts, tokens each.
# These models are predicted 1.2-1.9x too fast where an EP rank holds many experts of few tokens
# (docs/models.md "Megatron-Bridge's MoE rows"); the section times what the batched-GEMM model assumes.
TE_GROUPED_MOE = [
    ("Qwen3-30B-A3B ep16 mbs1", 2048, 768, 8, 4096),
    ("gpt-oss-120b ep8 mbs1", 2880, 2880, 16, 1024),
    ("Qwen3-235B-A22B tp2 ep32 mbs1", 4096, 1536, 4, 4096),
    ("Qwen3-235B-A22B tp2 ep8 mbs1", 4096, 1536, 16, 1024),
    ("Qwen3-235B-A22B tp4 ep8 mbs1", 4096, 1536, 16, 512),
]
TE_GEMM_STREAMS = 4  # transformer_engine/common/util/multi_stream.cpp: num_compute_streams


def te_multi_stream(gemms, streams, start, ends):
    """Transformer Engine's multi_stream_cublas_gemm (common/gemm/cublaslt_gemm.cu, its Hopper path without
    NVTE_USE_CUTLASS_GROUPED_GEMM): the side streams wait for the current one, GEMM i runs on side stream
    i % 4, then the current stream waits for every side stream used."""
    cur = torch.cuda.current_stream()
    used = streams[:min(len(streams), len(gemms))]
    start.record(cur)
    for st in used:
        st.wait_event(start)
    for i, g in enumerate(gemms):
        with torch.cuda.stream(used[i % len(used)]):
            g()
    for st, ev in zip(used, ends):
        ev.record(st)
        cur.wait_event(ev)


def grouped_moe_section(out_dir, shapes=None, csv_name="grouped_moe.csv", te=False):
    """The experts' grouped GEMMs of MoE Table 2's AutoModel rows in bf16: torch._grouped_mm (CUTLASS
    grouped GEMM) and one torch.mm per expert, forward (fc1, fc2), data gradient and weight gradient
    (2-D x 2-D with the groups along K). M, N, K are per expert; the op names the expert count. With te,
    also as Transformer Engine issues them (te_multi_stream), and the host's time to issue that (us per
    GEMM, the GPU kept busy so that no launch waits; Python's loop, so an upper bound of TE's C++ one),
    in the notes."""
    sink = Sink(os.path.join(out_dir, csv_name), GEMM_HEADER)
    note = "random normal inputs; median of CUDA-event-timed calls; M N K per expert"
    streams = [torch.cuda.Stream() for _ in range(TE_GEMM_STREAMS)] if te else []
    start = torch.cuda.Event()
    ends = [torch.cuda.Event() for _ in range(TE_GEMM_STREAMS)]
    for name, h, f, nloc, tok in (shapes or GROUPED_MOE):
        if left_s() < 20:
            log(f"{csv_name}: budget, stopping")
            break
        up = 2 * f  # gated: gate and up projections in one fc1
        offs = torch.arange(1, nloc + 1, device=DEV, dtype=torch.int32) * tok
        x = torch.randn(nloc * tok, h, device=DEV, dtype=torch.bfloat16)
        act = torch.randn(nloc * tok, f, device=DEV, dtype=torch.bfloat16)
        dy1 = torch.randn(nloc * tok, up, device=DEV, dtype=torch.bfloat16)
        dy2 = torch.randn(nloc * tok, h, device=DEV, dtype=torch.bfloat16)
        w1 = torch.randn(nloc, up, h, device=DEV, dtype=torch.bfloat16)
        w2 = torch.randn(nloc, h, f, device=DEV, dtype=torch.bfloat16)
        cases = [  # M, N, K per expert; the grouped kernel; the per-expert GEMMs are per_expert_gemms'
            ("fc1 fwd", tok, up, h, lambda: torch._grouped_mm(x, w1.transpose(-2, -1), offs=offs)),
            ("fc2 fwd", tok, h, f, lambda: torch._grouped_mm(act, w2.transpose(-2, -1), offs=offs)),
            ("fc2 dgrad", tok, f, h, lambda: torch._grouped_mm(dy2, w2, offs=offs)),
            ("fc1 dgrad", tok, h, up, lambda: torch._grouped_mm(dy1, w1, offs=offs)),
            ("fc1 wgrad", up, h, tok, lambda: torch._grouped_mm(dy1.t(), x, offs=offs)),
            ("fc2 wgrad", h, f, tok, lambda: torch._grouped_mm(dy2.t(), act, offs=offs)),
        ]
        for op, m, n, k, grouped in cases:
            label = f"{op} ({name}, {nloc} experts)"
            per = per_expert_gemms(op, tok, nloc, x, act, dy1, dy2, w1, w2)
            try:
                gemm_row(sink, "torch._grouped_mm", label, "bf16", "none", "bf16", m, n, k, time_ms(grouped) / nloc, note)
            except Exception as exc:  # noqa: BLE001
                log(f"grouped {label}: {exc!r}"[:300])
            gemm_row(sink, f"torch.mm x{nloc} (one per expert)", label, "bf16", "none", "bf16", m, n, k,
                     time_ms(lambda: [g() for g in per]) / nloc, note)
            if not te:
                continue
            ms = time_ms(lambda: te_multi_stream(per, streams, start, ends))
            torch.cuda.synchronize()
            torch.cuda._sleep(int(2e8))  # about 0.1 s of GPU work ahead, so that the launches below never wait
            t0 = time.perf_counter()
            for _ in range(10):
                te_multi_stream(per, streams, start, ends)
            host_us = (time.perf_counter() - t0) / (10 * nloc) * 1e6
            torch.cuda.synchronize()
            gemm_row(sink, f"TE multi-stream x{nloc} ({TE_GEMM_STREAMS} streams)", label, "bf16", "none", "bf16",
                     m, n, k, ms / nloc, note + f"; host {host_us:.1f} us per GEMM issued")
        del x, act, dy1, dy2, w1, w2
        log(f"{csv_name} {name} done; clocks {smi_clocks()}")


def per_expert_gemms(op, tok, nloc, x, act, dy1, dy2, w1, w2):
    """One closure per expert for the grouped_moe case op: torch.mm over the expert's rows, in the
    orientation of the case's grouped kernel."""
    def sl(t, i):
        return t[i * tok:(i + 1) * tok]
    make = {
        "fc1 fwd": lambda i: lambda: torch.mm(sl(x, i), w1[i].t()),
        "fc2 fwd": lambda i: lambda: torch.mm(sl(act, i), w2[i].t()),
        "fc2 dgrad": lambda i: lambda: torch.mm(sl(dy2, i), w2[i]),
        "fc1 dgrad": lambda i: lambda: torch.mm(sl(dy1, i), w1[i]),
        "fc1 wgrad": lambda i: lambda: torch.mm(sl(dy1, i).t(), sl(x, i)),
        "fc2 wgrad": lambda i: lambda: torch.mm(sl(dy2, i).t(), sl(act, i)),
    }[op]
    return [make(i) for i in range(nloc)]


def te_grouped_moe_section(out_dir):
    grouped_moe_section(out_dir, TE_GROUPED_MOE, "te_grouped_moe.csv", te=True)


# The LM head and Megatron-style vocab-parallel cross-entropy of the Megatron-Core weak-scaling rows'
# TP shards (vocabulary 131072 / tp), micro-batch 4 and 1 (16384 and 4096 tokens): name, hidden, tp.
LOSS_ROWS = [("GPT 1.7B", 2048, 1), ("GPT 7.1B", 4096, 2), ("GPT 16B", 6144, 4), ("GPT 32B", 7168, 8)]


def loss_section(out_dir):
    """The logits GEMM and the cross-entropy as Megatron-Core's _VocabParallelCrossEntropy computes it on
    one TP rank (its arithmetic written out in eager PyTorch, fp32 after the upcast of the bf16 logits):
    forward max, subtract in place, gather the target logit, exp in place, sum, log, divide in place (the
    softmax kept); backward subtract one at the target, multiply by the loss gradient, cast to bf16, then
    the data- and weight-gradient GEMMs. No TP all-reduces (one rank). Times in ms, medians."""
    sink = Sink(os.path.join(out_dir, "loss.csv"),
                ["model", "hidden", "tp", "vocab_local", "tokens", "logits_gemm_ms", "ce_fwd_ms", "ce_bwd_ms",
                 "head_bwd_gemms_ms", "software", "gpu", "source"])
    for name, h, tp in LOSS_ROWS:
        for tokens in (16384, 4096):
            if left_s() < 20:
                log("loss: budget, stopping")
                return
            v = VOCAB // tp
            x = torch.randn(tokens, h, device=DEV, dtype=torch.bfloat16)
            w = torch.randn(v, h, device=DEV, dtype=torch.bfloat16)
            target = torch.randint(0, v, (tokens,), device=DEV)
            ar = torch.arange(tokens, device=DEV)
            go = torch.ones(tokens, device=DEV, dtype=torch.float32)
            t_gemm = time_ms(lambda: torch.mm(x, w.t()))
            logits = torch.mm(x, w.t())

            def fwd():
                lf = logits.float()
                mx = lf.max(dim=-1)[0]
                lf -= mx.unsqueeze(-1)
                pred = lf[ar, target]
                torch.exp(lf, out=lf)
                se = lf.sum(dim=-1)
                loss = torch.log(se) - pred
                lf.div_(se.unsqueeze(-1))
                return lf, loss

            t_fwd = time_ms(fwd)
            sm, _ = fwd()

            def bwd():
                g = sm.clone()  # the backward works in place on the saved softmax; a copy keeps it for the next call
                g[ar, target] -= 1.0
                g.mul_(go.unsqueeze(-1))
                return g.to(torch.bfloat16)

            t_clone = time_ms(lambda: sm.clone())
            t_bwd = time_ms(bwd) - t_clone
            gb = bwd()
            t_bg = time_ms(lambda: (torch.mm(gb, w), torch.mm(gb.t(), x)))
            sink.row([name, h, tp, v, tokens, f"{t_gemm:.3f}", f"{t_fwd:.3f}", f"{t_bwd:.3f}", f"{t_bg:.3f}",
                      SOFTWARE, GPU_VARIANT, SOURCE])
            log(f"loss {name} tokens {tokens}: gemm {t_gemm:.2f} fwd {t_fwd:.2f} bwd {t_bwd:.2f} head bwd {t_bg:.2f} ms")
            del x, w, logits, sm, gb
            torch.cuda.empty_cache()


ATTN_HEADER = ["gpu", "gpu_variant", "impl", "direction", "dtype", "batch", "seqlen_q", "seqlen_kv", "nheads",
               "nheads_kv", "headdim", "headdim_v", "causal", "varlen", "metric", "value", "unit", "time_ms",
               "software", "notes", "value_origin", "source"]


def sdpa_backends():
    from torch.nn.attention import SDPBackend
    return [("flash", SDPBackend.FLASH_ATTENTION, "PyTorch SDPA flash backend (FlashAttention-2)"),
            ("cudnn", SDPBackend.CUDNN_ATTENTION, "PyTorch SDPA cuDNN backend")]


def time_causal_sdpa(be, b, nq, nkv, p=0.0):
    """(forward ms, forward+backward ms) of causal SDPA on backend be, sequence SEQ, head dim
    HEAD_DIM, nq query and nkv key/value heads (enable_gqa when fewer), dropout p."""
    from torch.nn.attention import sdpa_kernel
    q = torch.randn(b, nq, SEQ, HEAD_DIM, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, nkv, SEQ, HEAD_DIM, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn_like(k, requires_grad=True)
    do = torch.randn_like(q)
    gqa = nkv != nq
    with sdpa_kernel([be]):
        def fwd():
            return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True, enable_gqa=gqa)

        def fwdbwd():  # autograd.grad: no .grad accumulation between calls
            o = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True, enable_gqa=gqa)
            torch.autograd.grad(o, (q, k, v), do)

        return time_ms(fwd), time_ms(fwdbwd)


def attention_rows(sink, impl, b, nq, nkv, tf_ms, tfb_ms, note):
    """The forward, forward+backward and backward rows of one timed shape; FLOPs causal-halved over
    the query heads, as FlashAttention's benchmark counts them: half of 4 b h s^2 d."""
    fl_f = 4.0 * b * nq * SEQ * SEQ * HEAD_DIM / 2
    for direction, t, fl in (("fwd", tf_ms, fl_f), ("fwd+bwd", tfb_ms, 3.5 * fl_f),
                             ("bwd", tfb_ms - tf_ms, 2.5 * fl_f)):
        sink.row([GPU_NAME, GPU_VARIANT, impl, direction, "bf16", b, SEQ, SEQ, nq, nkv, HEAD_DIM, HEAD_DIM, True,
                  False, "achieved TFLOPs/s", f"{fl / (t * 1e-3) / 1e12:.1f}", "TFLOP/s", f"{t:.4f}", SOFTWARE,
                  f"{note}; bwd = fwd_bwd - fwd", "measured", SOURCE])


def attention_section(out_dir):
    sink = Sink(os.path.join(out_dir, "attention.csv"), ATTN_HEADER)
    heads_set = sorted({heads // tp for _, _, heads, tp in ROWS})
    for bname, be, impl in sdpa_backends():
        for b in (4, 1):
            for nh in heads_set:
                for p in (0.0, 0.1):
                    if left_s() < 120:
                        log("attention: budget, stopping")
                        return
                    try:
                        tf_ms, tfb_ms = time_causal_sdpa(be, b, nh, nh, p)
                    except Exception as exc:  # noqa: BLE001
                        log(f"attention {bname} b{b} h{nh} p{p}: {exc!r}"[:300])
                        continue
                    attention_rows(sink, impl, b, nh, nh, tf_ms, tfb_ms,
                                   f"dropout_p {p}; layout bhsd; FLOPs causal-halved (FA benchmark convention)")
            log(f"attention {bname} b{b} done; clocks {smi_clocks()}")


# Grouped-query attention at the shapes of rows Orrery is checked on (query heads, KV heads per GPU,
# batch): Qwen3-30B-A3B (MoE Table 2 row 58, micro-batch 4), Qwen3-235B-A22B at TP 2 (64 / 4 heads
# over 2), Llama 3 8B, Llama 3 70B at TP 8, and 32-head MHA at batch 4 as the reference.
GQA_SHAPES = ((32, 4, 4), (32, 2, 1), (32, 8, 1), (8, 1, 1), (32, 32, 4))


def attention_gqa_section(out_dir):
    """Causal SDPA, dropout 0, flash and cuDNN backends, at GQA_SHAPES: what a Transformer Engine run
    (cuDNN FusedAttention on Hopper) and a PyTorch-SDPA run (FlashAttention-2) get at those shapes.
    K and V are passed with their own head count (enable_gqa); a backend that refuses that gets them
    repeated to the query heads (the note says so)."""
    sink = Sink(os.path.join(out_dir, "attention_gqa.csv"), ATTN_HEADER)
    for bname, be, impl in sdpa_backends():
        for nq, nkv, b in GQA_SHAPES:
            if left_s() < 30:
                log("attention_gqa: budget, stopping")
                return
            times, how = None, ""
            for expand in (False, True):
                try:
                    times = time_causal_sdpa(be, b, nq, nq if expand else nkv)
                    how = "K/V repeated to the query heads" if expand and nkv != nq else (
                        "enable_gqa" if nkv != nq else "MHA")
                    break
                except Exception as exc:  # noqa: BLE001
                    log(f"attention_gqa {bname} q{nq} kv{nkv} b{b} expand {expand}: {exc!r}"[:300])
            if times is None:
                continue
            attention_rows(sink, impl, b, nq, nkv, times[0], times[1],
                           f"dropout_p 0; {how}; layout bhsd; FLOPs causal-halved over the query heads "
                           "(FA benchmark convention)")
            torch.cuda.empty_cache()
        log(f"attention_gqa {bname} done; clocks {smi_clocks()}")


MEM_HEADER = ["gpu", "gpu_variant", "kernel", "dtype", "shape_or_size", "metric", "value", "unit", "time_us",
              "software", "notes", "value_origin", "source"]


def membw_section(out_dir):
    sink = Sink(os.path.join(out_dir, "membw.csv"), MEM_HEADER)

    def put(kernel, dtype, shape, nbytes, t):
        sink.row([GPU_NAME, GPU_VARIANT, kernel, dtype, shape, "achieved HBM bandwidth",
                  f"{nbytes / (t * 1e-3) / 1e12:.3f}", "TB/s", f"{t * 1e3:.2f}", SOFTWARE,
                  f"bytes read+written {nbytes}", "measured", SOURCE])

    for e in MEM_EXPONENTS:
        if left_s() < 20:
            return
        n = 1 << e
        a = torch.randn(n, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(n, device=DEV, dtype=torch.bfloat16)
        c = torch.empty_like(a)
        put("copy (Tensor.copy_)", "bf16", str(n), 4 * n, time_ms(lambda: c.copy_(a)))
        put("add (torch.add out=)", "bf16", str(n), 6 * n, time_ms(lambda: torch.add(a, b, out=c)))
        del a, b, c
    for rows, h in NORM_SHAPES:
        if left_s() < 20:
            return
        x = torch.randn(rows, h, device=DEV, dtype=torch.bfloat16, requires_grad=True)
        wt = torch.ones(h, device=DEV, dtype=torch.bfloat16, requires_grad=True)
        bs = torch.zeros(h, device=DEV, dtype=torch.bfloat16, requires_grad=True)
        g = torch.randn(rows, h, device=DEV, dtype=torch.bfloat16)
        n = rows * h
        put("layer_norm fwd (F.layer_norm)", "bf16", f"{rows}x{h}", 4 * n,
            time_ms(lambda: F.layer_norm(x, (h,), wt, bs)))
        put("layer_norm fwd+bwd (F.layer_norm)", "bf16", f"{rows}x{h}", 4 * n + 6 * n,
            time_ms(lambda: torch.autograd.grad(F.layer_norm(x, (h,), wt, bs), (x, wt, bs), g)))
        y = torch.randn(rows, 4 * h if h <= 8192 else h, device=DEV, dtype=torch.bfloat16)
        put("gelu tanh fwd (F.gelu)", "bf16", f"{tuple(y.shape)}", 4 * y.numel(),
            time_ms(lambda: F.gelu(y, approximate="tanh")))
        del x, wt, bs, g, y
    for nparams in ADAM_PARAMS:
        if left_s() < 20:
            return
        p = torch.nn.Parameter(torch.randn(nparams, device=DEV, dtype=torch.float32))
        p.grad = torch.randn_like(p)
        opt = torch.optim.AdamW([p], lr=1e-4, fused=True)
        opt.step()
        put("AdamW fused step (torch.optim.AdamW fused=True)", "fp32", str(nparams), 28 * nparams,
            time_ms(opt.step, min_total_ms=30, max_iters=10))
        put("grad norm (torch.linalg.vector_norm)", "fp32", str(nparams), 4 * nparams,
            time_ms(lambda: torch.linalg.vector_norm(p.grad)))
        put("zero fill (Tensor.zero_)", "fp32", str(nparams), 4 * nparams, time_ms(lambda: p.grad.zero_()))
        del p, opt
        torch.cuda.empty_cache()
    log(f"membw done; clocks {smi_clocks()}")


class GPTLayer(torch.nn.Module):
    """Megatron's GPT layer as one TP shard computes it, without SP or communication: pre-LN,
    QKV (bias), causal flash attention with dropout 0.1, projection (bias), dropout 0.1 + residual,
    LN, FC1 (bias), GELU (tanh), FC2 (bias), dropout 0.1 + residual."""

    def __init__(self, h, heads_local, tp):
        super().__init__()
        kw = dict(device=DEV, dtype=torch.bfloat16)
        self.nh = heads_local
        self.ln1 = torch.nn.LayerNorm(h, **kw)
        self.qkv = torch.nn.Linear(h, 3 * h // tp, **kw)
        self.proj = torch.nn.Linear(h // tp, h, **kw)
        self.ln2 = torch.nn.LayerNorm(h, **kw)
        self.fc1 = torch.nn.Linear(h, 4 * h // tp, **kw)
        self.fc2 = torch.nn.Linear(4 * h // tp, h, **kw)

    def forward(self, x, b):
        t = x.shape[0]
        q, k, v = self.qkv(self.ln1(x)).view(b, t // b, 3, self.nh, HEAD_DIM).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           dropout_p=0.1, is_causal=True)
        a = a.transpose(1, 2).reshape(t, self.nh * HEAD_DIM)
        x = x + F.dropout(self.proj(a), 0.1)
        return x + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh")), 0.1)


def two_layers(h, heads_local, tp, mbs):
    """Two stacked GPTLayer of a TP shard on mbs sequences: (fwd, step), step being forward+backward
    (autograd.grad: no .grad accumulation between calls)."""
    layers = [GPTLayer(h, heads_local, tp) for _ in range(2)]
    x = torch.randn(mbs * SEQ, h, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(mbs * SEQ, h, device=DEV, dtype=torch.bfloat16)
    params = [x] + [p for layer in layers for p in layer.parameters()]

    def fwd():
        y = x
        for layer in layers:
            y = layer(y, mbs)
        return y

    def step():
        torch.autograd.grad(fwd(), params, g)
    return fwd, step


def layer_section(out_dir):
    sink = Sink(os.path.join(out_dir, "layer.csv"),
                ["model", "hidden", "heads_local", "tp", "mbs", "tokens", "layers", "fwd_ms_per_layer",
                 "fwd_bwd_ms_per_layer", "model_tflops_per_s", "peak_allocated_bytes", "software", "gpu",
                 "notes", "source"])
    for name, h, heads, tp in ROWS:
        for mbs in (4, 1):
            if left_s() < 60:
                log("layer: budget, stopping")
                return
            try:
                tokens = mbs * SEQ
                fwd, step = two_layers(h, heads // tp, tp, mbs)
                torch.cuda.reset_peak_memory_stats()
                t_f = time_ms(fwd, max_iters=10)
                t_fb = time_ms(step, max_iters=10)
                peak = torch.cuda.max_memory_allocated()
                # Megatron's per-layer FLOPs of this shard: 24 t h^2 / tp (GEMMs, fwd) + causal
                # attention 2 t s h / tp (fwd, halved), x3 for fwd+bwd
                fl = 3 * (24.0 * tokens * h * h / tp + 2.0 * tokens * SEQ * h / tp)
                sink.row([name, h, heads // tp, tp, mbs, tokens, 2, f"{t_f / 2:.3f}", f"{t_fb / 2:.3f}",
                          f"{fl / (t_fb / 2 * 1e-3) / 1e12:.1f}", peak, SOFTWARE, GPU_VARIANT,
                          "eager PyTorch, SDPA default backend; no SP (norms on all tokens); no communication",
                          SOURCE])
                log(f"layer {name} mbs{mbs}: fwd {t_f / 2:.2f} ms, fwd+bwd {t_fb / 2:.2f} ms per layer")
                del fwd, step
                torch.cuda.empty_cache()
            except Exception as exc:  # noqa: BLE001
                log(f"layer {name} mbs{mbs}: {exc!r}"[:300])
                torch.cuda.empty_cache()


def kernel_split_ms(fn):
    """One call of fn under torch.profiler: milliseconds of GPU kernels by kind (gemm, attention,
    other), or None where the profiler does not work."""
    try:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        out = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
        for e in prof.events():
            if e.device_type != torch.autograd.DeviceType.CUDA:
                continue
            name = e.name.lower()
            kind = "attention" if any(w in name for w in ("flash", "fmha", "attention", "sdpa")) else \
                "gemm" if any(w in name for w in ("gemm", "nvjet", "xmma", "cutlass", "cublas")) else "other"
            out[kind] += e.time_range.elapsed_us() / 1e3
        return out
    except Exception as exc:  # noqa: BLE001
        log(f"profiler: {exc!r}"[:200])
        return None


LAYER_SUSTAINED_ROWS = [("GPT 1.7B", 2048, 16, 1, 4), ("GPT 7.1B", 4096, 32, 2, 4), ("GPT 32B", 7168, 56, 8, 4),
                        ("GPT 177B", 12288, 96, 8, 1)]


def layer_sustained_section(out_dir):
    """The layer section's two stacked GPT layers (forward+backward) of four Megatron-Core rows, timed in
    a burst after 2 s idle (as layer.csv) and for 1 s after 2 s of the same steps back to back (the clock
    a training step holds), with the GPU's kernel time by kind (GEMMs, attention, the rest; torch.profiler)
    of one step right after each: does attention inside a GEMM-heavy step run at the capped clock?"""
    sink = Sink(os.path.join(out_dir, "layer_sustained.csv"),
                ["model", "hidden", "heads_local", "tp", "mbs", "tokens", "timing", "fwd_bwd_ms_per_layer",
                 "gemm_ms_per_layer", "attention_ms_per_layer", "other_ms_per_layer", "clocks", "software", "gpu",
                 "notes", "source"])
    for name, h, heads, tp, mbs in LAYER_SUSTAINED_ROWS:
        if left_s() < 20:
            log("layer_sustained: budget, stopping")
            return
        try:
            tokens = mbs * SEQ
            _, step = two_layers(h, heads // tp, tp, mbs)
            step()
            time.sleep(2.0)
            t_burst = time_ms(step, max_iters=10)
            split_burst, c_burst = kernel_split_ms(step), smi_clocks()
            t_sus = sustained_ms(step, step)
            split_sus, c_sus = kernel_split_ms(step), smi_clocks()
            for timing, t, split, clocks in (("burst", t_burst, split_burst, c_burst),
                                             ("sustained", t_sus, split_sus, c_sus)):
                parts = [f"{split[k] / 2:.3f}" if split else "" for k in ("gemm", "attention", "other")]
                sink.row([name, h, heads // tp, tp, mbs, tokens, timing, f"{t / 2:.3f}"] + parts +
                         [clocks, SOFTWARE, GPU_VARIANT, "two stacked layers, fwd+bwd, per layer; kernel split of one "
                          "step right after the timing (torch.profiler)", SOURCE])
            log(f"layer_sustained {name} mbs{mbs}: burst {t_burst / 2:.2f} ms {split_burst}, sustained "
                f"{t_sus / 2:.2f} ms {split_sus} per layer ({c_sus})")
            del step
            torch.cuda.empty_cache()
        except Exception as exc:  # noqa: BLE001
            log(f"layer_sustained {name}: {exc!r}"[:300])
            torch.cuda.empty_cache()


STEP_ARGS = ["--steps", "2", "--hidden", "3072", "--heads", "24", "--batch", "32"]


def step_section(out_dir):
    """tests/emu/torch/step.py, the program tests/cli_emulate_torch.sh runs under `orrery emulate`,
    run for real: its own ORRERY_RESULT line (the allocator's peak), then the same training step
    timed (10 steps after 3 of warm-up, CUDA events, median)."""
    here = os.path.dirname(os.path.abspath(__file__))
    step_py = os.path.join(here, "..", "tests", "emu", "torch", "step.py")
    sink = Sink(os.path.join(out_dir, "step.csv"),
                ["program", "args", "step_ms_median", "step_ms_min", "steps_timed", "max_memory_reserved",
                 "max_memory_allocated", "own_result_line", "software", "gpu", "source"])
    r = subprocess.run([sys.executable, step_py] + STEP_ARGS, capture_output=True, text=True, timeout=120)
    own = " ".join(l for l in r.stdout.splitlines() if l.startswith("ORRERY_RESULT"))
    log(f"step.py {' '.join(STEP_ARGS)}: rc {r.returncode} {own} {r.stderr[-300:]}")
    sys.path.insert(0, os.path.dirname(step_py))
    import step  # noqa: E402 - the same model class as the emulated program

    a = dict(zip(STEP_ARGS[::2], STEP_ARGS[1::2]))
    hidden, heads, batch = int(a["--hidden"]), int(a["--heads"]), int(a["--batch"])
    layers, seq, vocab = 4, 1024, 32768  # step.py's defaults
    torch.manual_seed(0)
    torch.cuda.reset_peak_memory_stats()
    model = step.GPT(layers, hidden, heads, vocab, seq).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    idx = torch.randint(0, vocab, (batch, seq), device="cuda")

    def one():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(idx)
        loss = F.cross_entropy(logits.float().view(-1, vocab), idx.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        one()
    torch.cuda.synchronize()
    evs = [torch.cuda.Event(enable_timing=True) for _ in range(11)]
    evs[0].record()
    for i in range(10):
        one()
        evs[i + 1].record()
    evs[-1].synchronize()
    ts = [evs[i].elapsed_time(evs[i + 1]) for i in range(10)]
    sink.row(["tests/emu/torch/step.py", " ".join(STEP_ARGS), f"{statistics.median(ts):.3f}", f"{min(ts):.3f}", 10,
              torch.cuda.max_memory_reserved(), torch.cuda.max_memory_allocated(), own, SOFTWARE, GPU_VARIANT,
              SOURCE])
    log(f"step: median {statistics.median(ts):.2f} ms per step")
    del model, opt, idx


# GEMMs of the Megatron-Core rows (1.7B FC1 at micro-batch 4, 32B FC1 at micro-batch 1, 462B FC2
# data gradient at micro-batch 1) timed while k SMs run a contender kernel, as NCCL's channels do.
OVERLAP_GEMMS = [("1.7B mbs4 fc1 fwd", 16384, 8192, 2048), ("32B mbs1 fc1 fwd", 4096, 3584, 7168),
                 ("462B mbs1 fc2 dgrad", 4096, 9216, 18432)]
OVERLAP_CTAS = (8, 16, 32)
OVERLAP_BUF_ELEMS = 1 << 27  # the copy's buffers: 256 MiB of bf16 each
# what the overlap section times: "gemm", "attention" (batch 4, 16 heads; with "more" also batch 1
# at 8 and 16 heads), "memory" (layer norm, GELU, add)
OVERLAP_KERNELS = ("gemm", "attention")


def triton_contenders():
    """The contender kernels (Triton, compiled on first use): a grid-stride copy through HBM, one
    thread block a channel as NCCL's, and a spin loop that holds its SMs without memory traffic."""
    import triton
    import triton.language as tl

    @triton.jit
    def contend_copy(src, dst, n_elems, passes, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        npg = tl.num_programs(0)
        for _ in range(passes):
            for start in range(pid * BLOCK, n_elems, npg * BLOCK):
                offs = start + tl.arange(0, BLOCK)
                mask = offs < n_elems
                tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)

    @triton.jit
    def contend_spin(out, iters):
        pid = tl.program_id(0)
        acc = pid.to(tl.float32)
        for _ in range(iters):
            acc = acc * 0.999999 + 1.0
        tl.store(out + pid, acc)

    return contend_copy, contend_spin


class Contenders:
    """k thread blocks of each contender, with their rates measured alone."""

    def __init__(self, blocks):
        self.copy, self.spin = triton_contenders()
        self.blocks = blocks
        self.n = OVERLAP_BUF_ELEMS
        self.src = torch.randn(self.n, device=DEV, dtype=torch.bfloat16)
        self.dst = torch.empty_like(self.src)
        self.out = torch.empty(1024, device=DEV, dtype=torch.float32)
        for _ in range(2):  # the second of each: compiled and warm
            self.pass_ms = once_ms(lambda: self.launch("copy", 1))
            self.spin_ms = once_ms(lambda: self.launch("spin", 1 << 20)) / (1 << 20)
        self.copy_GBps = 4.0 * self.n / (self.pass_ms * 1e-3) / 1e9

    def launch(self, kind, reps):
        if kind == "copy":
            self.copy[(self.blocks,)](self.src, self.dst, self.n, reps, BLOCK=4096)
        else:
            self.spin[(self.blocks,)](self.out, reps)

    def contended_ms(self, kind, fn, alone_ms, calls=20):
        """Median ms of fn's calls while the contender runs (started first, on another stream, sized to
        outlast them), and whether it did outlast them."""
        reps = int(math.ceil((3.0 * calls * alone_ms + 20.0) / (self.pass_ms if kind == "copy" else self.spin_ms)))
        side = torch.cuda.Stream()
        torch.cuda.synchronize()
        c_end = torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(side):
            self.launch(kind, reps)
            c_end.record()
        torch.cuda._sleep(2_000_000)  # ~1 ms: the contender's blocks are resident first
        evs = [torch.cuda.Event(enable_timing=True) for _ in range(calls + 1)]
        evs[0].record()
        for i in range(calls):
            fn()
            evs[i + 1].record()
        c_end.synchronize()
        torch.cuda.synchronize()
        return statistics.median(evs[i].elapsed_time(evs[i + 1]) for i in range(calls)), evs[-1].elapsed_time(c_end) > 0


def overlap_section(out_dir):
    """Compute under communication: a GEMM (and flash attention) timed alone and while a contender
    kernel of k thread blocks runs on another stream - a grid-stride copy (NCCL's channels: one block
    each, streaming through HBM) or a spin loop (the SMs held, no memory traffic). The contender is
    started first and outlasts the timed calls (checked by events)."""
    sink = Sink(os.path.join(out_dir, "overlap.csv"), OVERLAP_HEADER)
    kernels = []
    if "gemm" in OVERLAP_KERNELS:
        for label, m, n, k in OVERLAP_GEMMS:
            a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
            w = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
            kernels.append((label, m, n, k, (lambda a=a, w=w: torch.mm(a, w.t()))))
    if "attention" in OVERLAP_KERNELS:
        for b, h in ((4, 16), (1, 8), (1, 16)) if "more" in OVERLAP_KERNELS else ((4, 16),):
            q = torch.randn(b, h, SEQ, HEAD_DIM, device=DEV, dtype=torch.bfloat16, requires_grad=True)
            do = torch.randn_like(q)
            kernels.append((f"flash attention fwd+bwd b{b} h{h}", b * h, SEQ, HEAD_DIM,
                            (lambda q=q, do=do: torch.autograd.grad(
                                F.scaled_dot_product_attention(q, q, q, is_causal=True), (q,), do))))
    if "memory" in OVERLAP_KERNELS:  # memory-bound kernels: M, N = the tensor's shape, K = 0
        x = torch.randn(16384, 4096, device=DEV, dtype=torch.bfloat16)
        wt = torch.ones(4096, device=DEV, dtype=torch.bfloat16)
        g = torch.randn(16384, 16384, device=DEV, dtype=torch.bfloat16)
        z = torch.empty_like(x)
        kernels.append(("layer_norm fwd 16384x4096", 16384, 4096, 0, lambda: F.layer_norm(x, (4096,), wt)))
        kernels.append(("gelu tanh fwd 16384x16384", 16384, 16384, 0, lambda: F.gelu(g, approximate="tanh")))
        kernels.append(("add 16384x4096", 16384, 4096, 0, lambda: torch.add(x, x, out=z)))
    for blocks in OVERLAP_CTAS:
        c = Contenders(blocks)
        for label, m, n, k, fn in kernels:
            if left_s() < 15:
                log("overlap: budget, stopping")
                return
            alone = time_ms(fn, max_iters=20)
            for cname in ("copy", "spin"):
                contended, outlasted = c.contended_ms(cname, fn, alone)
                overlap_row(sink, label, m, n, k, c, cname, alone, contended, outlasted)
                log(f"overlap {label} vs {cname} x{blocks}: {alone:.3f} -> {contended:.3f} ms "
                    f"({100 * (contended / alone - 1):+.1f}%), outlasted {outlasted}"
                    + (f", copy alone {c.copy_GBps:.0f} GB/s" if cname == "copy" else ""))
        del c


# The GEMM sweep: shapes drawn log-uniformly (M, N, K multiples of 64 from 256 to 32768; a fixed
# seed), for a shape model trained on one half and checked on the other; the first
# SWEEP_CONTENDED also beside SWEEP_BLOCKS blocks of each contender.
SWEEP_SHAPES = 400
SWEEP_CONTENDED = 80
SWEEP_BLOCKS = (16,)
SWEEP_SEED = 20261126


def gemm_sweep_section(out_dir):
    import random
    rng = random.Random(SWEEP_SEED)
    sink = Sink(os.path.join(out_dir, "gemm_sweep.csv"), GEMM_HEADER)
    osink = Sink(os.path.join(out_dir, "overlap_sweep.csv"), OVERLAP_HEADER)
    cs = [Contenders(b) for b in SWEEP_BLOCKS]
    for i in range(SWEEP_SHAPES):
        if left_s() < 10:
            log(f"gemm sweep: budget, stopping after {i} shapes")
            return
        m, n, k = (64 * max(4, round(2 ** rng.uniform(8, 15) / 64)) for _ in range(3))
        x = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
        y = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
        fn = lambda: torch.mm(x, w.t(), out=y)  # noqa: E731
        t = time_ms(fn, min_total_ms=20.0, max_iters=20)
        gemm_row(sink, "torch.mm (cuBLAS via PyTorch)", f"fwd (sweep {i})", "bf16", "none", "bf16", m, n, k, t,
                 f"log-uniform shape sweep, seed {SWEEP_SEED}")
        for c in cs if i < SWEEP_CONTENDED else ():
            for cname in ("copy", "spin"):
                contended, outlasted = c.contended_ms(cname, fn, t, calls=10)
                overlap_row(osink, f"sweep {i}", m, n, k, c, cname, t, contended, outlasted)
        del x, w, y
        if i % 50 == 49:
            log(f"gemm sweep: {i + 1} shapes; clocks {smi_clocks()}")


def main():
    global BUDGET_S, OVERLAP_CTAS, OVERLAP_KERNELS, SWEEP_SHAPES, SWEEP_CONTENDED, SWEEP_BLOCKS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--budget-s", type=float, default=BUDGET_S)
    ap.add_argument("--only", default="", help="comma-separated sections to run (default: all)")
    ap.add_argument("--overlap-blocks", default="", help="the overlap section's contender sizes, e.g. 1,2,4 "
                    "(default: %s)" % ",".join(map(str, OVERLAP_CTAS)))
    ap.add_argument("--overlap-kernels", default=",".join(OVERLAP_KERNELS),
                    help="the overlap section's kernels: gemm, attention, more, memory")
    ap.add_argument("--sweep-shapes", type=int, default=SWEEP_SHAPES, help="gemm_sweep: shapes drawn")
    ap.add_argument("--sweep-contended", type=int, default=SWEEP_CONTENDED,
                    help="gemm_sweep: the first N also timed beside the contenders")
    ap.add_argument("--sweep-blocks", default=",".join(map(str, SWEEP_BLOCKS)),
                    help="gemm_sweep: the contenders' sizes in thread blocks, e.g. 1,2,4,8,16,32")
    args = ap.parse_args()
    BUDGET_S = args.budget_s
    SWEEP_SHAPES, SWEEP_CONTENDED = args.sweep_shapes, args.sweep_contended
    SWEEP_BLOCKS = tuple(int(b) for b in args.sweep_blocks.split(","))
    OVERLAP_KERNELS = tuple(args.overlap_kernels.split(","))
    if args.overlap_blocks:
        OVERLAP_CTAS = tuple(int(b) for b in args.overlap_blocks.split(","))
    if not torch.cuda.is_available():
        sys.exit("probe_gpu.py: no CUDA device (torch.cuda.is_available() is False)")
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(0)
    env(args.out_dir)
    sections = [("gemm", gemm_section), ("attention", attention_section), ("layer", layer_section),
                ("step", step_section), ("membw", membw_section), ("fp8", fp8_section),
                ("overlap", overlap_section), ("gemm_sweep", gemm_sweep_section),
                ("attention_gqa", attention_gqa_section), ("fp8_block", fp8_block_section),
                ("grouped_moe", grouped_moe_section), ("loss", loss_section),
                ("te_grouped_moe", te_grouped_moe_section), ("gemm_sustained", gemm_sustained_section),
                ("kernels_sustained", kernels_sustained_section), ("layer_sustained", layer_sustained_section)]
    only = set(filter(None, args.only.split(",")))
    for name, fn in sections:
        if only and name not in only:
            continue
        log(f"section {name} ({left_s():.0f} s left)")
        try:
            fn(args.out_dir)
        except Exception:  # noqa: BLE001 - a failed section must not cost the others
            traceback.print_exc()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    log(f"done; clocks {smi_clocks()}")


if __name__ == "__main__":
    main()
