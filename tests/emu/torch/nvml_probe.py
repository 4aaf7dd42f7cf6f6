"""GPU monitoring as training scripts and their loggers do it, for `orrery emulate` tests (issue 23
item 7): pynvml (nvidia-ml-py) for names, memory, utilisation, clocks, power, PCI, the driver and
the processes on the device, and PyTorch's own wrappers of it (torch.cuda.utilization, temperature,
power_draw, device_memory_used, memory_usage, clock_rate). Prints one `ORRERY_RESULT key=value ...` line. Runs unchanged
on a GPU.
"""
import os

import pynvml
import torch

x = torch.empty(1 << 28, device="cuda")  # 1 GiB held by this process
pynvml.nvmlInit()
n = pynvml.nvmlDeviceGetCount()
h = pynvml.nvmlDeviceGetHandleByIndex(0)
mem = pynvml.nvmlDeviceGetMemoryInfo(h)
util = pynvml.nvmlDeviceGetUtilizationRates(h)
procs = pynvml.nvmlDeviceGetComputeRunningProcesses(h)
mine = [p for p in procs if p.pid == os.getpid()]
res = {
    "count": n,
    "name": pynvml.nvmlDeviceGetName(h).replace(" ", "_"),
    "uuid_ok": int(pynvml.nvmlDeviceGetHandleByUUID(pynvml.nvmlDeviceGetUUID(h)) is not None),
    "total_mib": mem.total >> 20,
    "used_ge_1gib": int(mem.used >= 1 << 30 and mem.used + mem.free <= mem.total),
    "util_gpu": util.gpu,
    "sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
    "max_sm_mhz": pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM),
    "power_limit_w": pynvml.nvmlDeviceGetEnforcedPowerLimit(h) // 1000,
    "power_mw": pynvml.nvmlDeviceGetPowerUsage(h),
    "temp_c": pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
    "bus_id": pynvml.nvmlDeviceGetPciInfo(h).busId,
    "driver": pynvml.nvmlSystemGetDriverVersion(),
    "cuda_driver": pynvml.nvmlSystemGetCudaDriverVersion(),
    "my_process_mib": (mine[0].usedGpuMemory >> 20) if mine else -1,
    "torch_util": torch.cuda.utilization(),
    "torch_temp": torch.cuda.temperature(),
    "torch_power": torch.cuda.power_draw(),
    "torch_device_memory_used_ge_1gib": int(torch.cuda.device_memory_used() >= 1 << 30),
    "torch_memory_usage": torch.cuda.memory_usage(),
    "torch_clock": torch.cuda.clock_rate(),
}
pynvml.nvmlShutdown()
print("ORRERY_RESULT " + " ".join("%s=%s" % kv for kv in res.items()), flush=True)
