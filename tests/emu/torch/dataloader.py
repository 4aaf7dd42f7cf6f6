"""Training fed by a DataLoader with worker processes, for `orrery emulate` tests (issue 23 item 1):
the workers are forked after the CUDA libraries are loaded, do no GPU work and leave by os._exit,
as every DataLoader with num_workers > 0 does; their traces must not break the run. Also a bare
os.fork() + os._exit(0) child. Prints `ORRERY_RESULT steps=N`. Runs unchanged on a GPU.
Usage: dataloader.py [--workers N] [--steps N]
"""
import argparse
import os

import torch
from torch.utils.data import DataLoader, TensorDataset

p = argparse.ArgumentParser()
p.add_argument("--workers", type=int, default=2)
p.add_argument("--steps", type=int, default=4)
a = p.parse_args()

model = torch.nn.Linear(256, 256).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = TensorDataset(torch.randn(a.steps * 16, 256), torch.randn(a.steps * 16, 256))
steps = 0
for x, y in DataLoader(data, batch_size=16, num_workers=a.workers):
    loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
    loss.backward()
    opt.step()
    opt.zero_grad()
    steps += 1
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
print("ORRERY_RESULT steps=%d" % steps, flush=True)
