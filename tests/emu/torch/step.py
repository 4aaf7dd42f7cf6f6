"""Training steps of a small GPT-style transformer, for `orrery emulate` tests: on one GPU, or
under torchrun with DDP (--dist ddp) or FSDP2 (--dist fsdp), one process per GPU.

Prints one line `ORRERY_RESULT key=value ...` with what PyTorch itself saw (the allocator's peak
reserved bytes), so the test can compare it with Orrery's report. Runs unchanged on a real GPU.
Usage: step.py [--layers N] [--hidden N] [--heads N] [--seq N] [--batch N] [--vocab N] [--steps N]
               [--dist none|ddp|fsdp]
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.fc2 = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, layers, hidden, heads, vocab, seq):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.emb(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--dist", choices=("none", "ddp", "fsdp"), default="none")
    a = p.parse_args()
    if a.dist != "none":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        dist.init_process_group("nccl")
    torch.manual_seed(0)
    model = GPT(a.layers, a.hidden, a.heads, a.vocab, a.seq).cuda()
    if a.dist == "ddp":
        model = torch.nn.parallel.DistributedDataParallel(model)
    elif a.dist == "fsdp":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

        # as TorchTitan: bf16 parameters for compute (all-gathered in bf16), fp32 gradient reduction
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for blk in model.blocks:
            fully_shard(blk, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    idx = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")
    for _ in range(a.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(idx)
        loss = F.cross_entropy(logits.float().view(-1, a.vocab), idx.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    params = sum(p.numel() for p in model.parameters())
    rank = dist.get_rank() if a.dist != "none" else 0
    print(f"ORRERY_RESULT rank={rank} params={params} loss={loss.item():.4f} "
          f"max_memory_reserved={torch.cuda.max_memory_reserved()} "
          f"max_memory_allocated={torch.cuda.max_memory_allocated()}", flush=True)
    if a.dist != "none":
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
