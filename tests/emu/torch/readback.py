"""Values a training loop reads back from the device to decide what to do, for `orrery emulate`
tests (issue 23 item 3): the loss (.item(), checked finite and nonzero as loops do), mixed precision
with torch.amp.GradScaler (its scale, and the found-inf check that decides whether the optimizer
steps), and MoE-style token counts (torch.bincount over router choices, summed per rank with
.tolist()). Prints `ORRERY_RESULT loss_ok=.. scale=.. stepped=.. counts=.. per_rank=..`. Runs
unchanged on a GPU (where the values are real).
"""
import math

import torch

model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.GELU(), torch.nn.Linear(512, 8)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
x, y = torch.randn(64, 512, device="cuda"), torch.randn(64, 8, device="cuda")
losses = []
for _ in range(2):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
    v = loss.item()
    if not math.isfinite(v) or v == 0.0:
        raise SystemExit("loss %r: training diverged or has nothing to learn" % v)
    losses.append(v)
stepped = sum(1 for s in opt.state.values() if "step" in s and float(s["step"]) > 0)
router = model(x).argmax(dim=-1)  # an expert per token, 8 experts
counts = torch.bincount(router, minlength=8)
per_rank = counts.view(4, 2).sum(1).tolist()  # 4 expert-parallel ranks of 2 experts
print("ORRERY_RESULT loss_ok=%d scale=%g stepped=%d counts=%s per_rank=%s" % (
    len(losses) == 2, scaler.get_scale(), stepped, ",".join(map(str, counts.tolist())),
    ",".join(map(str, per_rank))), flush=True)
