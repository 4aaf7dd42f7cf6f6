"""Llama-3-style training step as TorchTitan (2024-12) runs it, for memory evidence under
`orrery emulate` (not run by the tests): meta init, fully_shard per block (bf16 params, fp32
reduce; the last block not resharded), root fully_shard, AC none / selective (TorchTitan's per-op
policy) / full, eager loss cross_entropy(pred.float()), AdamW foreach; prints memory per phase and
the allocator's segments. T1 row 1 (8 ranks, --ac selective, 2 steps): peak 66.74 GiB allocated,
82.38 GiB reserved (measured 82.4):
  orrery emulate --gpu H100 --mem-capacity 96GiB --gpus 8 -- torchrun --standalone
    --nproc-per-node 8 tests/emu/torch/llama_titan.py --ac selective --steps 2
--tp N applies TorchTitan's TP + sequence-parallel plan on a (world/N, N) mesh and runs the loss
under loss_parallel. A T4-like replica (Llama-3-70B shapes with 8 layers, TP 8, FSDP 1, local
batch 16, full AC, eager, torch 2.9.1; add --tp 8 --ac full --layers 8 --dim 8192 --heads 64
--kv-heads 8 --ffn 28672 --batch 16 --steps 3): step 0 peaks at 40.47 GiB allocated (the loss
backward: four fp32 vocab-parallel logits tensors of 7.83 GiB live), 56.59 reserved; steps 1 and 2
at 48.84 / 64.42 (Adam's state, created in step 0, adds one 7.83 GiB segment). The generator, for
`model: {base: llama3-70b, layers: 8}` with the same flags: 48.50 / 65.98."""
import argparse, os
from collections import defaultdict
import torch, torch.nn as nn, torch.nn.functional as F
import torch.distributed as dist

class RMSNorm(nn.Module):
    def __init__(s, d, eps=1e-5):
        super().__init__(); s.eps = eps; s.weight = nn.Parameter(torch.ones(d))
    def forward(s, x):
        y = x.float(); y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + s.eps)
        return y.type_as(x) * s.weight

def rope(x, fc):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * fc).flatten(3).type_as(x)

class Attn(nn.Module):
    def __init__(s, d, h, kv):
        super().__init__(); s.h, s.kv, s.hd = h, kv, d // h
        s.wq = nn.Linear(d, h * s.hd, bias=False); s.wk = nn.Linear(d, kv * s.hd, bias=False)
        s.wv = nn.Linear(d, kv * s.hd, bias=False); s.wo = nn.Linear(h * s.hd, d, bias=False)
    def forward(s, x, fc):
        b, t, _ = x.shape
        q = s.wq(x).view(b, t, s.h, s.hd); k = s.wk(x).view(b, t, s.kv, s.hd); v = s.wv(x).view(b, t, s.kv, s.hd)
        q, k = rope(q, fc), rope(k, fc)
        r = s.h // s.kv
        k = k[:, :, :, None, :].expand(b, t, s.kv, r, s.hd).reshape(b, t, s.h, s.hd)
        v = v[:, :, :, None, :].expand(b, t, s.kv, r, s.hd).reshape(b, t, s.h, s.hd)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return s.wo(o.transpose(1, 2).contiguous().view(b, t, -1))

class FFN(nn.Module):
    def __init__(s, d, f):
        super().__init__(); s.w1 = nn.Linear(d, f, bias=False); s.w2 = nn.Linear(f, d, bias=False); s.w3 = nn.Linear(d, f, bias=False)
    def forward(s, x): return s.w2(F.silu(s.w1(x)) * s.w3(x))

class Block(nn.Module):
    def __init__(s, d, h, kv, f):
        super().__init__(); s.attention = Attn(d, h, kv); s.feed_forward = FFN(d, f)
        s.attention_norm = RMSNorm(d); s.ffn_norm = RMSNorm(d)
    def forward(s, x, fc):
        h = x + s.attention(s.attention_norm(x), fc)
        return h + s.feed_forward(s.ffn_norm(h))

class Llama(nn.Module):
    def __init__(s, a):
        super().__init__()
        s.tok_embeddings = nn.Embedding(a.vocab, a.dim)
        s.layers = nn.ModuleDict({str(i): Block(a.dim, a.heads, a.kv_heads, a.ffn) for i in range(a.layers)})
        s.norm = RMSNorm(a.dim); s.output = nn.Linear(a.dim, a.vocab, bias=False)
        hd = a.dim // a.heads
        fr = 1.0 / (500000.0 ** (torch.arange(0, hd, 2).float() / hd))
        s.register_buffer("freqs_cis", torch.polar(torch.ones(a.seq, hd // 2), torch.outer(torch.arange(a.seq).float(), fr)), persistent=True)
    def forward(s, tok):
        h = s.tok_embeddings(tok)
        fc = s.freqs_cis[: tok.shape[1]].view(1, tok.shape[1], 1, -1)
        for l in s.layers.values(): h = l(h, fc)
        return s.output(s.norm(h))

def apply_ac(model, mode):
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper as cw
    if mode == "none": return
    if mode == "full":
        for k, b in model.layers.named_children(): model.layers.register_module(k, cw(b, preserve_rng_state=False))
        return
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    ops = torch.ops
    save = {ops.aten.mm.default, ops.aten._scaled_dot_product_efficient_attention.default,
            ops.aten._scaled_dot_product_flash_attention.default, ops._c10d_functional.reduce_scatter_tensor.default,
            ops.aten.max.default}
    def ctx_fn():
        meta = defaultdict(int)
        def pol(ctx, func, *a, **k):
            mode = "recompute" if ctx.is_recompute else "forward"
            if func == ops.aten.mm.default: meta[mode] += 1
            keep = func in save and not (func == ops.aten.mm.default and meta[mode] % 2 == 0)
            return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE
        return create_selective_checkpoint_contexts(pol)
    for k, b in model.layers.named_children():
        model.layers.register_module(k, cw(b, context_fn=ctx_fn, preserve_rng_state=False))

def apply_tp(model, tp_mesh):
    """TorchTitan's plan (parallelize_llama.apply_tp at 9dec370): sequence-parallel norms, colwise
    wq/wk/wv/w1/w3, rowwise wo/w2 to Shard(1), the output colwise to Shard(-1) for loss_parallel."""
    from torch.distributed.tensor import Shard, Replicate
    from torch.distributed.tensor.parallel import (parallelize_module, ColwiseParallel, RowwiseParallel,
                                                   SequenceParallel, PrepareModuleInput)
    tp = tp_mesh.size()
    parallelize_module(model, tp_mesh, {
        "tok_embeddings": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
        "norm": SequenceParallel(),
        "output": ColwiseParallel(input_layouts=Shard(1), output_layouts=Shard(-1), use_local_output=False)})
    for blk in model.layers.values():
        blk.attention.h //= tp; blk.attention.kv //= tp
        parallelize_module(blk, tp_mesh, {
            "attention_norm": SequenceParallel(),
            "attention": PrepareModuleInput(input_layouts=(Shard(1), None), desired_input_layouts=(Replicate(), None)),
            "attention.wq": ColwiseParallel(), "attention.wk": ColwiseParallel(), "attention.wv": ColwiseParallel(),
            "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
            "ffn_norm": SequenceParallel(),
            "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            "feed_forward.w1": ColwiseParallel(), "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
            "feed_forward.w3": ColwiseParallel()})

def main():
    p = argparse.ArgumentParser()
    for k, v in dict(layers=32, dim=4096, heads=32, kv_heads=8, ffn=14336, vocab=128256, seq=8192, batch=2, steps=2).items():
        p.add_argument("--" + k.replace("_", "-"), type=int, default=v)
    p.add_argument("--ac", default="selective")
    p.add_argument("--tp", type=int, default=1)
    a = p.parse_args()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"])); dist.init_process_group("nccl")
    rank = dist.get_rank()
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.device_mesh import init_device_mesh
    import contextlib
    with torch.device("meta"): model = Llama(a)
    mesh = init_device_mesh("cuda", (dist.get_world_size() // a.tp, a.tp), mesh_dim_names=("dp", "tp"))
    loss_ctx = contextlib.nullcontext
    if a.tp > 1:
        apply_tp(model, mesh["tp"])
        from torch.distributed.tensor.parallel import loss_parallel
        loss_ctx = loss_parallel
    apply_ac(model, a.ac)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    n = len(model.layers)
    for i, b in model.layers.items(): fully_shard(b, mesh=mesh["dp"], mp_policy=mp, reshard_after_forward=int(i) < n - 1)
    fully_shard(model, mesh=mesh["dp"], mp_policy=mp, reshard_after_forward=True)
    model.to_empty(device="cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=8e-4, weight_decay=0.1, foreach=True)
    GiB = 2 ** 30
    m = torch.cuda
    def rep(tag):
        if rank == 0:
            print(f"MEM step={st} {tag:10s} alloc={m.memory_allocated()/GiB:6.2f} resv={m.memory_reserved()/GiB:6.2f} "
                  f"phase_peak_alloc={m.max_memory_allocated()/GiB:6.2f} peak_resv={m.max_memory_reserved()/GiB:6.2f}", flush=True)
    for st in range(a.steps):
        tok = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda"); lab = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")
        rep("start")
        with loss_ctx():
            pred = model(tok); rep("fwd")
            loss = F.cross_entropy(pred.flatten(0, 1).float(), lab.flatten(0, 1)); del pred; rep("loss")
            loss.backward(); rep("bwd")
        opt.step(); rep("opt")
        opt.zero_grad(); rep("zero")
    m.synchronize()
    if rank == 0:
        import collections
        snap = m.memory._snapshot()
        agg = collections.defaultdict(lambda: [0, 0, 0, 0])
        for seg in snap["segments"]:
            k = (seg["stream"], seg["segment_type"])
            a = agg[k]; a[0] += 1; a[1] += seg["total_size"]; a[2] += seg["allocated_size"]
            a[3] = max(a[3], seg["total_size"])
        for k, a in sorted(agg.items()):
            print(f"SEG stream={k[0]} {k[1]} n={a[0]} total={a[1]/GiB:.2f} alloc={a[2]/GiB:.2f} maxseg={a[3]/GiB:.3f}", flush=True)
        big = sorted(snap["segments"], key=lambda g: -g["total_size"])[:25]
        for g in big:
            print(f"BIG stream={g['stream']} size={g['total_size']/GiB:.3f} alloc={g['allocated_size']/GiB:.3f} blocks=" +
                  ",".join(f"{b['size']/2**20:.0f}{b['state'][0]}" for b in g['blocks'][:12]), flush=True)
        st = m.memory_stats()
        print("STATS", {k: round(v/GiB, 2) for k, v in st.items() if k.endswith("all.peak") and "bytes" in k}, st.get("num_alloc_retries"), flush=True)
    print(f"ORRERY_RESULT rank={rank} max_memory_reserved={m.max_memory_reserved()} max_memory_allocated={m.max_memory_allocated()}", flush=True)
    dist.destroy_process_group()

if __name__ == "__main__": main()
