"""A TorchTitan-style Llama training step with torch.compile, run by tests/cli_emulate_torch.sh under
`orrery emulate` (issue 23 item 4): the blocks of tests/emu/torch/llama_titan.py (RMSNorm, RoPE,
grouped-query attention through SDPA, SwiGLU), each compiled on its own as TorchTitan compiles them
(torch.compile per block, fullgraph), the loss eager (cross_entropy of the float logits), AdamW.
--backend inductor (default) generates Triton kernels; --backend eager runs dynamo's graphs
through ATen. Prints PyTorch's own max_memory_reserved(), which the test compares with Orrery's peak.
  orrery emulate --gpu H100 -- python tests/emu/torch/compile_llama.py [--backend eager]"""
import argparse, os, sys
import torch, torch.nn.functional as F
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_titan import Llama

p = argparse.ArgumentParser()
for k, v in dict(layers=2, dim=256, heads=4, kv_heads=2, ffn=512, vocab=1024, seq=128, batch=4, steps=3).items():
    p.add_argument("--" + k.replace("_", "-"), type=int, default=v)
p.add_argument("--backend", default="inductor")
a = p.parse_args()
torch.manual_seed(0)
model = Llama(a).cuda()
for k, b in model.layers.named_children():
    model.layers.register_module(k, torch.compile(b, backend=a.backend, fullgraph=True))
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
tok = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device="cuda")
for step in range(a.steps):
    pred = model(tok[:, :-1])
    loss = F.cross_entropy(pred.flatten(0, 1).float(), tok[:, 1:].flatten(0, 1))
    loss.backward()
    opt.step()
    opt.zero_grad()
torch.cuda.synchronize()
# frames dynamo compiled: the blocks share their code, so one forward graph; more is a recompile
graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
print("ORRERY_RESULT backend=%s steps=%d graphs=%d max_memory_reserved=%d"
      % (a.backend, a.steps, graphs, torch.cuda.max_memory_reserved()), file=sys.stderr)
