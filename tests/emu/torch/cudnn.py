"""cuDNN under `orrery emulate` (issue 23 item 6): a small conv net and cuDNN attention, one step.

The conv net (FP32, TF32 allowed, as PyTorch's default for cuDNN): Conv2d(3, 64, 3x3) + BatchNorm2d +
ReLU, Conv2d(64, 128, 3x3, stride 2) + BatchNorm2d + ReLU, average pool, Linear(128, 10), cross
entropy on a batch of 16 64x64 images. The attention block (bf16): a Linear(512, 3 x 512) makes
Q, K, V of 8 heads of 64 over 1024 tokens x 4 sequences, and F.scaled_dot_product_attention runs
under sdpa_kernel(SDPBackend.CUDNN_ATTENTION), causal. Both losses are summed, backward, an SGD step;
--steps steps (the hook marks each: the last is predicted). --benchmark sets
torch.backends.cudnn.benchmark. Prints ORRERY_RESULT with torch.cuda.max_memory_reserved()."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=2)
p.add_argument("--benchmark", action="store_true")
a = p.parse_args()
torch.backends.cudnn.benchmark = a.benchmark
assert torch.backends.cudnn.is_available() and torch.backends.cudnn.enabled

convnet = nn.Sequential(
    nn.Conv2d(3, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
    nn.Conv2d(64, 128, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(128), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)).cuda()
qkv = nn.Linear(512, 3 * 512).cuda().to(torch.bfloat16)
opt = torch.optim.SGD(list(convnet.parameters()) + list(qkv.parameters()), lr=1e-3)
images = torch.randn(16, 3, 64, 64, device="cuda")
labels = torch.randint(0, 10, (16,), device="cuda")
tokens = torch.randn(4, 1024, 512, device="cuda", dtype=torch.bfloat16)
for _ in range(a.steps):
    loss = F.cross_entropy(convnet(images), labels)
    q, k, v = qkv(tokens).view(4, 1024, 3, 8, 64).permute(2, 0, 3, 1, 4)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    (loss + out.float().pow(2).mean()).backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()
print("ORRERY_RESULT max_memory_reserved=%d" % torch.cuda.max_memory_reserved())
