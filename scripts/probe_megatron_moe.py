#!/usr/bin/env python3
"""probe_megatron_moe.py - time Megatron-Core's own MoE transformer layer on one GPU: is it host-bound?

Megatron-Core's MoE rows with many local experts of few tokens are predicted 1.2-1.9x too fast
(docs/models.md "Megatron-Bridge's MoE rows": Qwen3-30B-A3B, GPT-OSS 120B, MoE Table 2 rows 39 and
40), and the same model runs 1.35x faster per GPU on NeMo AutoModel at micro-batch 4 than on
Megatron-Bridge at micro-batch 1. One suspect is the host: Megatron's Python and its per-layer
host synchronisation (the dispatcher brings the tokens per expert to the host) against kernels that
are short at these widths. This script builds one TransformerLayer with an MoE MLP through
Megatron-Core's own layer spec and times, per configuration, forward and backward:

    wall_ms        from the call to the end of the GPU's work (torch.cuda.synchronize), median
    host_ms        until the Python call returned (the backward's: until backward() returned)
    gpu_busy_ms    the GPU's own time for the same work when the host is far ahead: the layer run
                   after a torch.cuda._sleep that keeps the GPU busy, so that launches never wait,
                   minus the sleep; only meaningful when the layer has no host synchronisation,
                   so it is reported with the number of synchronising calls seen (cuda_syncs)

An EP rank's expert work is reproduced on one GPU with expert parallelism 1: E local experts,
top k, T tokens, so that each expert gets T*k/E tokens as on one rank of the real job (the
all-to-all itself is not timed). Transformer Engine's layer spec is used when transformer_engine
imports, else the local one (SequentialMLP: one GEMM per expert, as TE's GroupedLinear issues them on
Hopper).

Run on a machine with a CUDA GPU, PyTorch and megatron-core importable (its wheel is built per Python
version, 2.6 MB: pip download --no-deps --python-version 3.12 megatron-core==0.16.1 where there is a
network, pip install --no-index --no-deps --target DIR on the machine; or --megatron DIR with the
package's parent directory; it needs packaging, einops and numpy beside it):

    python3 scripts/probe_megatron_moe.py OUTDIR [--megatron DIR] [--budget-s 240] [--sweep]

It writes OUTDIR/megatron_moe_layer.csv (each configuration's MoE MLP alone, part "moe", and, up to
4,096 tokens, the whole layer, part "layer") and OUTDIR/megatron_moe_env.txt (the GPU, the versions,
the host CPU). With --sweep, instead, OUTDIR/megatron_moe_sweep.csv: the MoE MLP alone at Qwen3-30B-A3B's
widths by local experts and tokens, its experts swapped for a scaling by the routing probabilities
("identity": the router, permutation, dispatcher and combine alone), two torch._grouped_mm ("grouped")
or Megatron's SequentialMLP ("local"), with the GPU operations of one call (torch.profiler). Run on the
H100 lent on 2026-11-27: data/validation/measured/h100_2026-11-27. Nothing here is read at build, test
or run time.
"""
import argparse
import csv
import os
import statistics
import sys
import time
import traceback

# name, hidden, query heads, kv heads, head dim, expert FFN, local experts, top k, tokens, qk norm:
# one EP rank's share of the rows above (tokens per expert = tokens x top k / experts)
CONFIGS = [
    ("Qwen3-30B-A3B ep16 rank", 2048, 32, 4, 128, 768, 8, 8, 4096, True),
    ("gpt-oss-120b ep8 rank", 2880, 64, 8, 64, 2880, 16, 4, 4096, False),
    # 4 local experts cannot take top 8 at EP 1: top 4 of 4 over twice the tokens gives each the
    # row's 4,096
    ("Qwen3-235B-A22B tp2 ep32 rank (top 4)", 4096, 32, 2, 128, 1536, 4, 4, 4096, True),
    ("Qwen3-235B-A22B tp4 ep8 rank", 4096, 16, 1, 128, 1536, 16, 8, 1024, True),
    ("Qwen3-30B-A3B ep8 mbs4 rank (AutoModel row 58's work)", 2048, 32, 4, 128, 768, 16, 8, 16384, True),
]
HEADER = ["config", "part", "impl", "dispatcher", "hidden", "experts", "top_k", "tokens", "tokens_per_expert", "phase",
          "wall_ms", "host_ms", "gpu_busy_ms", "cuda_syncs", "software", "notes"]


# --sweep: the MoE MLP alone at Qwen3-30B-A3B's widths (hidden 2048, expert FFN 768, top 8), by local
# experts and tokens, with the experts as Megatron's SequentialMLP ("local"), as two grouped GEMMs
# (torch._grouped_mm, about what TE's GroupedLinear leaves on the host: "grouped"), and as a scaling
# by the router's probabilities ("identity": the router, permutation, dispatcher and combine alone)
SWEEP = [(E, T) for E in (8, 16, 32, 64) for T in (1024, 4096)] + [(128, 4096), (16, 16384)]
SWEEP_HEADER = ["experts_impl", "hidden", "expert_ffn", "experts", "top_k", "tokens", "phase", "wall_ms", "host_ms",
                "gpu_busy_ms", "cuda_syncs", "gpu_ops", "software", "notes"]


def log(t0, msg):
    print(f"[{time.time() - t0:7.1f}s] {msg}", flush=True)


def median_ms(samples):
    return statistics.median(samples) if samples else float("nan")


def build_layer(torch, F, h, nq, nkv, hd, fe, E, k, qk, te):
    from megatron.core.transformer.transformer_config import TransformerConfig
    from megatron.core.transformer.spec_utils import build_module
    import megatron.core.transformer.moe.moe_utils as mu
    if not hasattr(mu, "te_general_gemm"):
        mu.te_general_gemm = None  # megatron-core 0.16 names it only when transformer_engine imports
    cfg = TransformerConfig(num_layers=1, hidden_size=h, num_attention_heads=nq, num_query_groups=nkv, kv_channels=hd,
                            ffn_hidden_size=4 * h, moe_ffn_hidden_size=fe, num_moe_experts=E, moe_router_topk=k,
                            moe_token_dispatcher_type="alltoall", moe_grouped_gemm=te, gated_linear_unit=True,
                            activation_func=F.silu, normalization="RMSNorm", bf16=True, params_dtype=torch.bfloat16,
                            add_bias_linear=False, moe_router_load_balancing_type="aux_loss", moe_aux_loss_coeff=1e-3,
                            qk_layernorm=qk, hidden_dropout=0.0, attention_dropout=0.0)
    if te:
        from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_with_transformer_engine_spec as spec_fn
    else:
        from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec as spec_fn
    spec = spec_fn(num_experts=E, moe_grouped_gemm=te, qk_layernorm=qk)
    return build_module(spec, config=cfg, layer_number=1).cuda()


class SyncCounter:
    """Counts the host synchronisations PyTorch makes (torch.cuda.set_sync_debug_mode's warnings)."""

    def __init__(self, torch):
        self.torch, self.n = torch, 0

    def __enter__(self):
        import warnings
        self.cm = warnings.catch_warnings(record=True)
        self.log = self.cm.__enter__()
        warnings.simplefilter("always")
        self.torch.cuda.set_sync_debug_mode("warn")
        return self

    def __exit__(self, *a):
        self.torch.cuda.set_sync_debug_mode("default")
        self.n = sum(1 for w in self.log if "synchroniz" in str(w.message).lower())
        self.cm.__exit__(*a)


def time_layer(torch, call, T, h, iters, sleep_cycles):
    """Medians of forward and backward of call(x) -> tensor: wall, host and GPU-busy ms; and the
    synchronising calls."""
    x = torch.randn(T, 1, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    layer = lambda x, attention_mask=None: (call(x),)  # noqa: E731 - the loop below reads [0]
    fw, bw, fh, bh, fb, bb = [], [], [], [], [], []
    for it in range(iters + 2):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = layer(x, attention_mask=None)[0]
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        loss = out.float().sum()
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        loss.backward()
        t4 = time.perf_counter()
        torch.cuda.synchronize()
        t5 = time.perf_counter()
        x.grad = None
        if it >= 2:  # two warm-up iterations
            fw.append((t2 - t0) * 1e3), fh.append((t1 - t0) * 1e3)
            bw.append((t5 - t3) * 1e3), bh.append((t4 - t3) * 1e3)
    # the GPU's own time: the same work queued behind a sleep kernel that outlasts the launches
    after_sleep, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for it in range(iters):
        for phase, sink in ((0, fb), (1, bb)):
            loss = layer(x, attention_mask=None)[0].float().sum() if phase else None
            torch.cuda.synchronize()
            torch.cuda._sleep(sleep_cycles)
            after_sleep.record()
            if phase:
                loss.backward()
            else:
                layer(x, attention_mask=None)
            end.record()
            end.synchronize()
            sink.append(after_sleep.elapsed_time(end))
            x.grad = None
    with SyncCounter(torch) as sc:
        layer(x, attention_mask=None)[0].float().sum().backward()
        torch.cuda.synchronize()
    x.grad = None
    return median_ms(fw), median_ms(fh), median_ms(fb), median_ms(bw), median_ms(bh), median_ms(bb), sc.n


def grouped_experts(torch, F, E, h, fe):
    """Experts as two torch._grouped_mm calls over the permuted tokens (SwiGLU, probabilities applied
    after the activation as Megatron's MLP does): forward(x, tokens_per_expert, probs)."""
    class Grouped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = torch.nn.Parameter(0.02 * torch.randn(E, 2 * fe, h, device="cuda", dtype=torch.bfloat16))
            self.w2 = torch.nn.Parameter(0.02 * torch.randn(E, h, fe, device="cuda", dtype=torch.bfloat16))

        def forward(self, x, tokens_per_expert, probs):
            counts = torch.as_tensor(tokens_per_expert).to(device=x.device, non_blocking=True)
            offs = torch.cumsum(counts, 0).to(torch.int32)
            y = torch._grouped_mm(x, self.w1.transpose(-2, -1), offs=offs)
            g, u = y.chunk(2, dim=-1)
            a = F.silu(g) * u * probs.unsqueeze(-1).to(y.dtype)
            return torch._grouped_mm(a, self.w2.transpose(-2, -1), offs=offs), None
    return Grouped()


def identity_experts(torch):
    class Identity(torch.nn.Module):
        def forward(self, x, tokens_per_expert, probs):
            return x * probs.unsqueeze(-1).to(x.dtype), None
    return Identity()


def gpu_ops(torch, fn):
    """Kernels and copies the GPU ran for one call of fn (torch.profiler), or -1."""
    try:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    except Exception:  # noqa: BLE001
        return -1


def sweep(args, torch, F, te, software, t0, sleep_cycles):
    h, nq, nkv, hd, fe, k = 2048, 32, 4, 128, 768, 8
    with open(os.path.join(args.out_dir, "megatron_moe_sweep.csv"), "w", newline="") as fcsv:
        w = csv.writer(fcsv)
        w.writerow(SWEEP_HEADER)
        for impl in ("identity", "grouped", "local"):
            for E, T in SWEEP:
                if time.time() - t0 > args.budget_s:
                    log(t0, "budget, stopping")
                    return
                if impl == "local" and E > 32:
                    continue  # one Python MLP module per expert: the slope shows by 32
                try:
                    layer = build_layer(torch, F, h, nq, nkv, hd, fe, E, k, True, te)
                    if impl == "grouped":
                        layer.mlp.experts = grouped_experts(torch, F, E, h, fe)
                    elif impl == "identity":
                        layer.mlp.experts = identity_experts(torch)
                    call = lambda x: layer.mlp(x)[0]  # noqa: E731
                    r = time_layer(torch, call, T, h, args.iters, sleep_cycles)
                    x = torch.randn(T, 1, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                    nf = gpu_ops(torch, lambda: call(x))
                    out = call(x).float().sum()
                    torch.cuda.synchronize()
                    nb = gpu_ops(torch, lambda: out.backward())
                except Exception:  # noqa: BLE001 - one configuration's failure must not cost the others
                    traceback.print_exc()
                    continue
                fw, fh, fb, bw, bh, bb, syncs = r
                for phase, wall, host, busy, n in (("fwd", fw, fh, fb, nf), ("bwd", bw, bh, bb, nb)):
                    w.writerow([impl, h, fe, E, k, T, phase, f"{wall:.3f}", f"{host:.3f}", f"{busy:.3f}", syncs, n,
                                software, "median of --iters after 2 warm-up; gpu_busy_ms behind a sleep kernel; "
                                "gpu_ops: kernels and copies of one call (torch.profiler)"])
                fcsv.flush()
                log(t0, f"sweep {impl} E {E} T {T}: fwd wall {fw:.2f} host {fh:.2f} gpu {fb:.2f} ms {nf} ops; "
                        f"bwd wall {bw:.2f} host {bh:.2f} gpu {bb:.2f} ms {nb} ops; {syncs} syncs")
                del layer
                torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--megatron", default="", help="a directory holding the megatron package (megatron-core)")
    ap.add_argument("--budget-s", type=float, default=240.0)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated indexes into CONFIGS (default: all)")
    ap.add_argument("--sweep", action="store_true", help="the MoE MLP alone by experts, tokens and expert "
                    "implementation (megatron_moe_sweep.csv) instead of CONFIGS")
    args = ap.parse_args()
    t0 = time.time()
    if args.megatron:
        sys.path.insert(0, args.megatron)
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        sys.exit("probe_megatron_moe.py: no CUDA device")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    torch.cuda.set_device(0)
    torch.distributed.init_process_group("nccl", rank=0, world_size=1)
    import megatron.core
    from megatron.core import parallel_state
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
    parallel_state.initialize_model_parallel(1, 1, expert_model_parallel_size=1)
    model_parallel_cuda_manual_seed(1234)
    try:
        import transformer_engine  # noqa: F401
        te = True
    except Exception:  # noqa: BLE001 - any failure to import it means the local spec
        te = False
    os.makedirs(args.out_dir, exist_ok=True)
    software = f"torch {torch.__version__}, megatron-core {getattr(megatron.core, '__version__', '?')}, " \
               f"transformer_engine {'yes' if te else 'no'}"
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    except OSError:
        pass
    with open(os.path.join(args.out_dir, "megatron_moe_env.txt"), "w") as f:
        f.write(f"{torch.cuda.get_device_name(0)}\n{software}\nhost CPU {cpu}, {os.cpu_count()} CPUs\n")
    log(t0, software + f"; host CPU {cpu}")
    sleep_cycles = int(5e8)  # about 0.3 s at H100 clocks: outlasts one layer's launches
    if args.sweep:
        sweep(args, torch, F, te, software, t0, sleep_cycles)
        torch.distributed.destroy_process_group()
        return
    only = {int(i) for i in args.only.split(",") if i}
    with open(os.path.join(args.out_dir, "megatron_moe_layer.csv"), "w", newline="") as fcsv:
        w = csv.writer(fcsv)
        w.writerow(HEADER)
        for i, (name, h, nq, nkv, hd, fe, E, k, T, qk) in enumerate(CONFIGS):
            if only and i not in only:
                continue
            if time.time() - t0 > args.budget_s:
                log(t0, "budget, stopping")
                break
            try:
                layer = build_layer(torch, F, h, nq, nkv, hd, fe, E, k, qk, te)
            except Exception:  # noqa: BLE001 - one configuration's failure must not cost the others
                traceback.print_exc()
                continue
            # the MoE MLP alone (router, dispatch, experts, combine), then the whole layer; the
            # local spec's attention is Megatron's unfused one, whose scores at 16,384 tokens would
            # not fit, so the layer is timed up to 4,096 tokens
            parts = [("moe", lambda x: layer.mlp(x)[0])]
            if T <= 4096:
                parts.append(("layer", lambda x: layer(x, attention_mask=None)[0]))
            for part, call in parts:
                try:
                    fw, fh, fb, bw, bh, bb, syncs = time_layer(torch, call, T, h, args.iters, sleep_cycles)
                except Exception:  # noqa: BLE001
                    traceback.print_exc()
                    continue
                for phase, wall, host, busy in (("fwd", fw, fh, fb), ("bwd", bw, bh, bb)):
                    w.writerow([name, part, "transformer_engine" if te else "local", "alltoall (ep 1)", h, E, k, T,
                                T * k // E, phase, f"{wall:.3f}", f"{host:.3f}", f"{busy:.3f}", syncs, software,
                                "median of --iters after 2 warm-up; gpu_busy_ms behind a sleep kernel"])
                fcsv.flush()
                log(t0, f"{name} {part}: fwd wall {fw:.2f} host {fh:.2f} gpu {fb:.2f} ms; bwd wall {bw:.2f} "
                        f"host {bh:.2f} gpu {bb:.2f} ms; {syncs} syncs")
            del layer, parts
            torch.cuda.empty_cache()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
