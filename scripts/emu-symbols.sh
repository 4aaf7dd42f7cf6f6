#!/bin/sh
# emu-symbols.sh TORCH_LIB_DIR OUT_DIR - lists, per CUDA library, the entry points a PyTorch build
# links against, so that the emulation libraries can define every one of them (implemented ones
# for real, the rest as stubs that fail loudly with their name; docs/emulate.md).
#
# The lists in src/emu/shim/syms/ were made with this script from torch 2.9.1 (PyPI wheel
# torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl, CUDA 12.8 build):
#   scripts/emu-symbols.sh build/venv/lib/python3.11/site-packages/torch/lib src/emu/shim/syms
# A reference with a version node (cublasGemmEx@libcublas.so.12) belongs to that library; an
# unversioned one is assigned by its prefix.
# Needs nm and strings (binutils).
set -eu
lib=${1:?usage: emu-symbols.sh TORCH_LIB_DIR OUT_DIR}
out=${2:?usage: emu-symbols.sh TORCH_LIB_DIR OUT_DIR}
mkdir -p "$out"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# Link-time references, plus the driver API and NVML functions PyTorch looks up by name at run
# time (cudaGetDriverEntryPoint, dlsym): their names appear as strings in its libraries.
for f in "$lib"/*.so*; do
    nm -D --undefined-only "$f" 2>/dev/null | awk '{print $NF}'
    strings -n 6 "$f" | grep -E '^(cu[A-Z][a-z][A-Za-z0-9_]+|nvml[A-Z][A-Za-z0-9_]+)$' | grep -v '^cuFile' || true
done | sort -u > "$tmp"
owner() {
    case $1 in
    *@NVSHMEM) echo libnvshmem_host.so.3 ;;
    *@lib*) echo "${1#*@}" ;;
    *@*) echo - ;;
    cusparseLt*) echo libcusparseLt.so.0 ;;
    cuFile*) echo libcufile.so.0 ;;
    nccl*) echo libnccl.so.2 ;;
    nvshmem*) echo libnvshmem_host.so.3 ;;
    nvml*) echo libnvidia-ml.so.1 ;;
    cu[A-Z]*) echo libcuda.so.1 ;;
    *) echo - ;;
    esac
}
rm -f "$out"/*.syms
while read -r sym; do
    o=$(owner "$sym")
    case $o in lib*) echo "${sym%%@*}" >> "$out/$o.syms" ;; esac
done < "$tmp"
for f in "$out"/*.syms; do sort -u -o "$f" "$f"; done
wc -l "$out"/*.syms
