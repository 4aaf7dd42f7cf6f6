"""Model parallelism by hand in one process (issue 23 item 8): the first half of an MLP on cuda:0,
the second on cuda:1, the activations moved with .to('cuda:1') and their gradient back, an SGD
step; 3 steps (the hook marks each optimizer step: the last is predicted). Under `orrery emulate`
each device is a rank of its own; PyTorch orders the copy between the two with events on both
devices' streams, which the prediction keeps (the critical path crosses from one GPU to the other).
Prints ORRERY_RESULT with each device's torch.cuda.max_memory_reserved()."""
import argparse, torch, torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--hidden", type=int, default=4096)
p.add_argument("--batch", type=int, default=8192)
p.add_argument("--steps", type=int, default=3)
a = p.parse_args()
assert torch.cuda.device_count() >= 2
h = a.hidden
first = nn.Sequential(nn.Linear(h, 4 * h), nn.GELU()).to("cuda:0")
second = nn.Sequential(nn.Linear(4 * h, h), nn.GELU(), nn.Linear(h, h)).to("cuda:1")
opt = torch.optim.SGD(list(first.parameters()) + list(second.parameters()), lr=1e-3)
x = torch.randn(a.batch, h, device="cuda:0")
for _ in range(a.steps):
    act = first(x)
    out = second(act.to("cuda:1"))
    assert out.device == torch.device("cuda:1")
    out.float().pow(2).mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize(0)
torch.cuda.synchronize(1)
print("ORRERY_RESULT", " ".join("max_memory_reserved%d=%d" % (d, torch.cuda.max_memory_reserved(d)) for d in range(2)))
