"""Expert-parallel MoE dispatch as real programs write it, for `orrery emulate` tests (issue 23
items 2 and 3): a router picks top-k experts per token, torch.bincount counts the tokens per expert,
the counts travel by all_to_all_single, and .tolist() of them gives the data-dependent split sizes of
the dispatch and combine all_to_all_single (send/recv to every rank, itself included). Every rank
prints `ORRERY_RESULT rank=R counts=c0,c1,... send=s0,... recv=r0,...` so the test can compare the
splits with the emulator's routing model. Runs unchanged on real GPUs (where the counts are real).
Usage: torchrun --nproc-per-node EP moe_a2a.py [--experts E] [--tokens T] [--topk K] [--hidden H]
"""
import argparse
import sys

import torch
import torch.distributed as dist

p = argparse.ArgumentParser()
p.add_argument("--experts", type=int, default=8)
p.add_argument("--tokens", type=int, default=512)
p.add_argument("--topk", type=int, default=2)
p.add_argument("--hidden", type=int, default=256)
a = p.parse_args()

dist.init_process_group("nccl")
rank, ep = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(rank % torch.cuda.device_count())
dev = torch.device("cuda")
x = torch.randn(a.tokens, a.hidden, device=dev, dtype=torch.bfloat16)
router = torch.randn(a.hidden, a.experts, device=dev, dtype=torch.bfloat16)
w = torch.randn(a.experts // ep, a.hidden, a.hidden, device=dev, dtype=torch.bfloat16)

idx = (x @ router).topk(a.topk, dim=-1).indices.flatten()  # token-expert pairs
counts = torch.bincount(idx, minlength=a.experts)
order = idx.argsort()
sorted_x = x[order // a.topk]
recv_counts = torch.empty_like(counts)
dist.all_to_all_single(recv_counts, counts)  # tokens for my experts, from each rank
send = counts.view(ep, -1).sum(1).tolist()
recv = recv_counts.view(ep, -1).sum(1).tolist()
got = x.new_empty(sum(recv), a.hidden)
dist.all_to_all_single(got, sorted_x, recv, send)  # dispatch
y = got @ w[0]  # the local experts (one weight for the test)
back = x.new_empty(sum(send), a.hidden)
dist.all_to_all_single(back, y, send, recv)  # combine
torch.cuda.synchronize()
# one write per line: four ranks share the stream, and print's text and newline can be two writes
sys.stdout.write("ORRERY_RESULT rank=%d counts=%s send=%s recv=%s\n" % (rank, ",".join(map(str, counts.tolist())),
                                                                      ",".join(map(str, send)),
                                                                      ",".join(map(str, recv))))
sys.stdout.flush()
dist.destroy_process_group()
