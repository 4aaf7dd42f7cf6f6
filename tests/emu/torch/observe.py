"""What a PyTorch program observes of its GPU under `orrery emulate` (issue 23 item 9): the device
count, the device's total memory, CUDA event timings, and (under torchrun) the process group a
tensor-parallel all-reduce runs on. Prints `ORRERY_RESULT rank=R devices=N total_mib=M event_ms=T`;
with --tp, all-reduces over a 1-D DeviceMesh whose dimension is named "tp" (as tensor parallelism
makes them), which Orrery must report as tensor-parallel communication. Runs unchanged on a GPU.
Usage: observe.py [--tp]   (under torchrun for --tp)
"""
import sys

import torch

tp = "--tp" in sys.argv
rank = 0
if tp:
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    mesh = init_device_mesh("cuda", (dist.get_world_size(),), mesh_dim_names=("tp",))
props = torch.cuda.get_device_properties(0)
a = torch.randn(2048, 2048, device="cuda")
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(20):
    b = a @ a
    if tp:
        dist.all_reduce(b, group=mesh.get_group("tp"))
end.record()
end.synchronize()
print("ORRERY_RESULT rank=%d devices=%d total_mib=%d event_ms=%.6f" % (rank, torch.cuda.device_count(),
      props.total_memory // (1 << 20), start.elapsed_time(end)), flush=True)
if tp:
    dist.destroy_process_group()
