"""A Megatron-style training step with CUDA graphs, for `orrery emulate` (tests/cli_emulate_torch.sh):
a small MLP's forward, backward and Adam step (capturable, as Megatron's and Transformer Engine's
graphed steps) warmed up on a side stream, captured whole with torch.cuda.graph (the "whole network
capture" of PyTorch's CUDA graphs documentation), then replayed --replays times with fresh inputs
copied into the static ones. Per step: 2 GEMMs forward, 3 backward (the first layer's input needs
no gradient). With --eager the same steps run without a graph (the reference). With --callables
each layer is graphed instead (make_graphed_callables: forward and backward graphs per layer, sample
inputs that require grad, so 6 GEMMs a step) and the optimizer steps eagerly. Prints `ORRERY_RESULT warmup=.. replays=.. gemms_per_step=5 capturing_seen=..`."""
import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--replays", type=int, default=4)
p.add_argument("--eager", action="store_true", help="run the replayed steps without a graph (the reference)")
p.add_argument("--callables", action="store_true",
               help="graph each layer's forward and backward with torch.cuda.make_graphed_callables (Transformer "
                    "Engine's and Megatron's per-layer graphs), the optimizer step eager")
a = p.parse_args()

torch.manual_seed(0)
N, D_in, H, D_out = 256, 1024, 2048, 512
model = torch.nn.Sequential(torch.nn.Linear(D_in, H), torch.nn.ReLU(), torch.nn.Linear(H, D_out)).cuda()
loss_fn = torch.nn.MSELoss()
opt = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
static_input = torch.randn(N, D_in, device="cuda")
static_target = torch.randn(N, D_out, device="cuda")


def step():
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(static_input), static_target)
    loss.backward()
    opt.step()
    return loss


if a.callables:
    layers = [(model[0], torch.randn(N, D_in, device="cuda", requires_grad=True)),
              (model[2], torch.randn(N, H, device="cuda", requires_grad=True))]
    g1, g2 = torch.cuda.make_graphed_callables(tuple(m for m, _ in layers), tuple((x,) for _, x in layers))
    graphed = torch.nn.Sequential(g1, torch.nn.ReLU(), g2)
    for _ in range(a.replays):
        opt.zero_grad(set_to_none=True)
        loss_fn(graphed(torch.randn(N, D_in, device="cuda")), static_target).backward()
        opt.step()
    torch.cuda.synchronize()
    print("ORRERY_RESULT callables replays=%d gemms_per_step=6" % a.replays, flush=True)
    raise SystemExit(0)

# warm-up on a side stream, as torch.cuda.graph requires
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(a.warmup):
        step()
torch.cuda.current_stream().wait_stream(s)

g = torch.cuda.CUDAGraph()
capturing_seen = False
if not a.eager:
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        capturing_seen = torch.cuda.is_current_stream_capturing()
        static_loss = step()

for _ in range(a.replays):
    static_input.copy_(torch.randn(N, D_in, device="cuda"))
    static_target.copy_(torch.randn(N, D_out, device="cuda"))
    if a.eager:
        step()
    else:
        g.replay()
torch.cuda.synchronize()
print("ORRERY_RESULT warmup=%d replays=%d gemms_per_step=5 capturing_seen=%d" % (
    a.warmup, a.replays, int(capturing_seen)), flush=True)
