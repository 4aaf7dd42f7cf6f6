"""Pipeline-parallel memory as TorchTitan (2024-12) runs it, for evidence under `orrery emulate` (not
run by the tests): torch.distributed.pipelining stages (Schedule1F1B, or ScheduleInterleaved1F1B
with --vpp 2), FSDP2 per block and per stage root (bf16 params, fp32 reduce, no reshard after
forward; a one-rank mesh per stage here), full AC, the model returning bf16 logits (TorchTitan since
e10cb949, 2024-10-22), eager cross-entropy with the fp32 upcast as the schedule's loss_fn, AdamW
foreach. Prints each rank's peaks in the second step.
  orrery emulate --gpu H100 --gpus 4 -- torchrun --standalone --nproc-per-node 4 \
      tests/emu/torch/pp_mem.py [--vpp 2]
torch 2.9.1, defaults (16 layers of dim 2048, vocab 32768, seq 4096, batch 8 in 4 micro-batches),
peak allocated / reserved GiB per rank, emulated vs `orrery predict --model <same shape> --gpus 4
--pp 4 [--vpp 2] --fsdp 1 --mbs 2 --gbs 8 --seq 4096 --recompute full --no-compile-loss`:
  1F1B         pp0 7.16/8.71 vs 6.84/8.60, pp1 6.10/7.30 vs 5.69/7.09, pp3 10.85/13.31 vs 10.50/15.16
  interleaved  pp0 7.15/8.82 vs 6.66/8.42, pp3 10.82/12.82 vs 10.22/14.46
What the last stage holds at its peak (torch.cuda.memory history): the four bf16 logits of the
micro-batches, kept in the stage's output_chunks, and their torch.cat from _merge_outputs at the
end of step() (4 x 0.5 GiB + 2 GiB), the sharded gradients, parameters and Adam state; the unsharded
fp32 gradients accumulated over the micro-batches are gone after the last reduce-scatter."""
import argparse, os, sys, torch, torch.nn as nn, torch.nn.functional as F, torch.distributed as dist
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_titan import Block, RMSNorm, apply_ac
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleInterleaved1F1B

class Part(nn.Module):
    def __init__(s, a, layer_ids, first, last):
        super().__init__()
        s.tok_embeddings = nn.Embedding(a.vocab, a.dim) if first else None
        s.layers = nn.ModuleDict({str(i): Block(a.dim, a.heads, a.kv_heads, a.ffn) for i in layer_ids})
        s.norm = RMSNorm(a.dim) if last else None
        s.output = nn.Linear(a.dim, a.vocab, bias=False) if last else None
        hd = a.dim // a.heads
        fr = 1.0 / (500000.0 ** (torch.arange(0, hd, 2).float() / hd))
        s.register_buffer("freqs_cis", torch.polar(torch.ones(a.seq, hd // 2), torch.outer(torch.arange(a.seq).float(), fr)), persistent=True)
    def forward(s, h):
        if s.tok_embeddings is not None: h = s.tok_embeddings(h)
        fc = s.freqs_cis[: h.shape[1]].view(1, h.shape[1], 1, -1)
        for l in s.layers.values(): h = l(h, fc)
        if s.output is not None: h = s.output(s.norm(h))  # bf16 logits: the loss upcasts (TorchTitan since 2024-10)
        return h

def main():
    p = argparse.ArgumentParser()
    for k, v in dict(layers=16, dim=2048, heads=16, kv_heads=8, ffn=8192, vocab=32768, seq=4096, batch=8, mb=4, vpp=1).items():
        p.add_argument("--" + k.replace("_", "-"), type=int, default=v)
    p.add_argument("--ac", default="full")
    p.add_argument("--fsdp", type=int, default=1)
    a = p.parse_args()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"])); dist.init_process_group("nccl")
    rank, pp = dist.get_rank(), dist.get_world_size()
    S = pp * a.vpp
    per = a.layers // S
    stages, models = [], []
    solo = None
    for r in range(pp):  # every rank creates every group, in the same order
        g = dist.new_group([r])
        if r == rank: solo = g
    for v in range(a.vpp):
        si = rank + v * pp
        with torch.device("meta"): m = Part(a, range(si * per, (si + 1) * per), si == 0, si == S - 1)
        apply_ac(m, a.ac)
        if a.fsdp:
            from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
            from torch.distributed.device_mesh import DeviceMesh
            mesh = DeviceMesh.from_group(solo, "cuda")
            mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
            for i, b in m.layers.items(): fully_shard(b, mesh=mesh, mp_policy=mp, reshard_after_forward=False)
            fully_shard(m, mesh=mesh, mp_policy=mp, reshard_after_forward=False)
            m.to_empty(device="cuda")
        else:
            m = m.to_empty(device="cuda").to(torch.bfloat16)
        models.append(m)
        mbs = a.batch // a.mb
        hid = torch.empty(mbs, a.seq, a.dim, dtype=torch.bfloat16, device="meta")
        inp = torch.empty(mbs, a.seq, dtype=torch.long, device="meta") if si == 0 else hid
        out = torch.empty(mbs, a.seq, a.vocab, dtype=torch.bfloat16, device="meta") if si == S - 1 else hid
        stages.append(PipelineStage(m, si, S, torch.device("cuda"), input_args=inp, output_args=out))
    lossf = lambda pred, lab: F.cross_entropy(pred.flatten(0, 1).float(), lab.flatten(0, 1))
    sch = Schedule1F1B(stages[0], a.mb, loss_fn=lossf) if a.vpp == 1 else ScheduleInterleaved1F1B(stages, a.mb, loss_fn=lossf)
    GiB = 2 ** 30
    if a.fsdp: opt = torch.optim.AdamW([p for m in models for p in m.parameters()], lr=1e-4, foreach=True)
    for st in range(2):
        tok = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda"); lab = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")
        torch.cuda.reset_peak_memory_stats()
        if rank == 0: sch.step(tok)
        elif any(s.is_last for s in stages): sch.step(target=lab, losses=[])
        else: sch.step()
        if a.fsdp:
            opt.step(); opt.zero_grad()
        print(f"MEM rank={rank} step={st} alloc={torch.cuda.memory_allocated()/GiB:.3f} peak_alloc={torch.cuda.max_memory_allocated()/GiB:.3f} peak_resv={torch.cuda.max_memory_reserved()/GiB:.3f}", flush=True)
    print(f"ORRERY_RESULT rank={rank} max_memory_reserved={torch.cuda.max_memory_reserved()} max_memory_allocated={torch.cuda.max_memory_allocated()}", flush=True)
    dist.destroy_process_group()
main()
