"""A DDP training loop that times its own steps with torch.cuda.Event and prints them, as training
scripts log step time and throughput, for `orrery emulate --live` (issue 23 item 10,
docs/emulate.md "Live time"). Under --live the printed step time is the simulated GPU time, which the
test compares with Orrery's predicted iteration time. Runs unchanged on a real GPU.
Prints `ORRERY_STEP rank=R step=S ms=T tokens_per_s=X` per step.
Usage: torchrun --nproc-per-node 2 live_ddp.py [--steps N] [--hidden N] [--layers N] [--batch N] [--seq N]
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    a = p.parse_args()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.manual_seed(0)
    layers = []
    for _ in range(a.layers):
        layers += [nn.Linear(a.hidden, 4 * a.hidden), nn.GELU(), nn.Linear(4 * a.hidden, a.hidden)]
    model = torch.nn.parallel.DistributedDataParallel(nn.Sequential(*layers).cuda())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(a.batch, a.seq, a.hidden, device="cuda")
    for step in range(a.steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
        tokens = a.batch * a.seq * dist.get_world_size()
        # one write per line: both ranks share the stream, and print's text and newline can be two writes
        os.write(1, f"ORRERY_STEP rank={rank} step={step} ms={ms:.6f} tokens_per_s={tokens / (ms / 1e3):.1f}\n".encode())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
