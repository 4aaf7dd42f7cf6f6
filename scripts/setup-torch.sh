#!/bin/sh
# setup-torch.sh VENV - a virtual environment with a CUDA build of PyTorch for the emulator's
# PyTorch tests (tests/cli_emulate_torch.sh). Idempotent: does nothing when VENV already holds the
# pinned versions. The CUDA libraries torch depends on (the nvidia-* wheels) are NOT installed:
# under `orrery emulate` Orrery's stand-ins take their place, and nothing runs on a GPU. Triton is
# (below): torch.compile's Inductor generates and compiles Triton kernels on the host.
# torch 2.9.1 is the PyPI wheel built for CUDA 12.8 (cp311: Debian 12's Python 3.11); the
# emulator's stub lists (src/emu/shim/syms) were made from it (scripts/emu-symbols.sh).
set -eu
venv=${1:?usage: setup-torch.sh VENV}
stamp="$venv/.orrery-torch-2.9.1"
if [ ! -f "$stamp" ]; then
    echo "setup-torch: installing torch 2.9.1 (CUDA 12.8 build, ~900 MB) into $venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps torch==2.9.1 \
        filelock==4.2.11 fsspec==2026.9.0 Jinja2==3.1.6 MarkupSafe==3.0.4 mpmath==1.3.0 networkx==3.6.1 \
        sympy==1.14.0 typing_extensions==4.16.0 numpy==2.4.6
    touch "$stamp"
fi
# pynvml (nvidia-ml-py), what monitoring code and torch.cuda.utilization() etc. call NVML through
# (tests/emu/torch/nvml_probe.py); added after the torch pin, so it has a stamp of its own
nvml="$venv/.orrery-nvidia-ml-py-13.615.71"
if [ ! -f "$nvml" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps nvidia-ml-py==13.615.71
    touch "$nvml"
fi
# triton, at the version torch 2.9.1 pins (its Requires-Dist), for torch.compile with Inductor
# (tests/emu/torch/compile_llama.py): it compiles kernels on the host and builds its launcher with the
# C compiler and Python's headers (python3-dev, scripts/setup.sh); added after the torch pin, so it
# has a stamp of its own
triton="$venv/.orrery-triton-3.5.1"
if [ ! -f "$triton" ]; then
    echo "setup-torch: installing triton 3.5.1 (594 MB installed) into $venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps triton==3.5.1
    touch "$triton"
fi
