"""Which tensors autograd saves in a TorchTitan-style TP + sequence-parallel Llama block (DTensor
plan of torchtitan parallelize_llama: SequenceParallel norms, PrepareModuleInput Shard(1) ->
Replicate, colwise wq/wk/wv/w1/w3, rowwise wo/w2 to Shard(1); no async TP). Evidence for the
generator's dtensor_sp_keeps_gathered (src/models/gen.c, recipe.sp_keeps_gathered); not run by the tests:
  orrery emulate --gpu H100 --gpus 2 -- torchrun --standalone --nproc-per-node 2 tests/emu/torch/tp_saved.py
torch 2.9.1, TP 2, seq 4096, h 1024: among the saved tensors are two (4096, 1024) bf16 ones, the
all-gathered norm outputs (full sequence) that the column-parallel matmuls keep for their weight
gradients; the norm inputs are kept sharded, (1, 2048, 1024)."""
import os, sys, torch, torch.nn as nn, torch.nn.functional as F, torch.distributed as dist
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_titan import Block
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, Replicate
from torch.distributed.tensor.parallel import (parallelize_module, ColwiseParallel, RowwiseParallel,
                                               SequenceParallel, PrepareModuleInput)
torch.cuda.set_device(int(os.environ["LOCAL_RANK"])); dist.init_process_group("nccl")
rank = dist.get_rank(); tp = dist.get_world_size()
mesh = init_device_mesh("cuda", (tp,))
d, h, kv, f, b, s = 1024, 8, 8, 4096, 1, 4096
blk = Block(d, h, kv, f).cuda().to(torch.bfloat16)
plan = {
    "attention_norm": SequenceParallel(),
    "attention": PrepareModuleInput(input_layouts=(Shard(1), None), desired_input_layouts=(Replicate(), None), use_local_output=True),
    "attention.wq": ColwiseParallel(), "attention.wk": ColwiseParallel(), "attention.wv": ColwiseParallel(),
    "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
    "ffn_norm": SequenceParallel(),
    "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),), use_local_output=True),
    "feed_forward.w1": ColwiseParallel(), "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
    "feed_forward.w3": ColwiseParallel(),
}
blk.attention.h //= tp; blk.attention.kv //= tp
parallelize_module(blk, mesh, plan)
hd = d // h
fr = 1.0 / (500000.0 ** (torch.arange(0, hd, 2).float() / hd))
fc = torch.polar(torch.ones(s, hd // 2), torch.outer(torch.arange(s).float(), fr)).cuda().view(1, s, 1, -1)
from torch.distributed.tensor import DTensor
x = torch.randn(b, s // tp, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
seen = {}
def pack(t):
    key = t.untyped_storage().data_ptr() if not isinstance(t, DTensor) else t.to_local().untyped_storage().data_ptr()
    lt = t.to_local() if isinstance(t, DTensor) else t
    seen[key] = (tuple(lt.shape), lt.dtype, lt.untyped_storage().nbytes())
    return t
with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    y = blk(x, fc)
if rank == 0:
    tot = 0
    for k, (shape, dt, nb) in sorted(seen.items(), key=lambda kv: -kv[1][2]):
        print("SAVED", shape, dt, nb); tot += nb
    print("SAVED_TOTAL", tot, "per token", tot / (b * s), "h", d, "tp", tp, flush=True)
(y.to_local() if isinstance(y, DTensor) else y).float().sum().backward()
print(f"ORRERY_RESULT rank={rank} max_memory_reserved={torch.cuda.max_memory_reserved()} max_memory_allocated={torch.cuda.max_memory_allocated()}", flush=True)
dist.destroy_process_group()
