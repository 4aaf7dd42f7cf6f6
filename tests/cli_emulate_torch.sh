#!/bin/sh
# `orrery emulate` on real PyTorch (torch 2.9.1, CUDA 12.8 build, in BUILD/torch-venv, installed by
# scripts/setup-torch.sh from `make test`): a training step of a small GPT on one process, then
# torchrun with 4 processes under DDP and under FSDP2 (tests/emu/torch/step.py), and a pipelined
# program (tests/emu/torch/pp_mem.py), on this CPU-only machine. Checked: the runs complete; no
# entry point the emulator does not implement was called (such a run is refused); the GEMM,
# collective and p2p counts are those of the model; PyTorch's own torch.cuda.max_memory_reserved()
# equals Orrery's peak; a too-small --mem-capacity gives PyTorch's OutOfMemoryError; the predicted
# iteration time is within 15% of `orrery predict` of the same model and parallelism
# (tests/emu/torch/gpt_small.yaml). The emulated runs drop the measured host time
# (--no-host-time): on this loaded 2-core machine it grows with whatever else runs, and the
# comparison is of the device-bound time, as predict's; one check is of the host time itself (a
# PyTorch program's own, from a second run without the hook: docs/emulate.md "Host time").
# The programs of issue 23 (workers, MoE dispatch, NVML, CUDA graphs, cuDNN, torch.compile, ...)
# are in tests/cli_emulate_torch_programs.sh; the two run beside each other.
# Usage: cli_emulate_torch.sh ORRERY_BINARY SOURCE_DIR
. "$2/tests/check.sh"
. "$SRC/tests/emu/torch/common.sh"

SPEC="$SRC/tests/emu/torch/gpt_small.yaml"
# one process, 4 layers of hidden 3072, micro-batch 32, 2 optimizer steps: the last is predicted
"$ORR" emulate --json --no-host-time --gpu H100 --tokens 32768 -- "$PY" "$STEP" --steps 2 --hidden 3072 --heads 24 --batch 32 > "$TMP/j" 2> "$TMP/e"; rc=$?
if [ $rc -ne 0 ]; then
    bad "single-process step (rc $rc)"
    tail -20 "$TMP/e" >&2
else
    ok
    # per iteration: 4 layers x 4 Linear + LM head = 17 GEMMs forward, 34 backward (data, weight)
    [ "$(json "$TMP/j" "d['config']['kernels_gemm']")" = 51 ] && ok || bad "single: GEMMs $(json "$TMP/j" "d['config']['kernels_gemm']") != 51"
    [ "$(json "$TMP/j" "d['config']['iteration_marks']")" = 2 ] && ok || bad "single: iteration marks"
    [ "$(json "$TMP/j" "d['config']['collectives']")" = 0 ] && ok || bad "single: collectives"
    res=$(result "$TMP/e" max_memory_reserved)
    peak=$(json "$TMP/j" "d['peak_memory_bytes']")
    [ -n "$res" ] && [ "$res" = "$peak" ] && ok || bad "single: torch max_memory_reserved $res != Orrery peak $peak"
    [ "$(json "$TMP/j" "'cublasLtMatmul' in d['config']['entry_points'] and 'cudaLaunchKernel' in d['config']['entry_points']")" = True ] \
        && ok || bad "single: entry points"
    [ "$(json "$TMP/j" "d['config']['kernels_geometry']")" = 0 ] && ok || bad "single: kernels not tagged by the hook"
    [ "$(json "$TMP/j" "int(d['tokens_per_iteration'])")" = 32768 ] && ok || bad "single: --tokens"
    "$ORR" predict "$SPEC" --json > "$TMP/p" && agree "$TMP/j" "$TMP/p" "single process" || bad "predict $SPEC"
    # the same program run for real on an H100 (data/validation/measured/h100_2026-11-26/step.csv,
    # torch 2.11 there, this venv's torch here): the allocator's peak is the real GPU's to the byte,
    # and the predicted step within 10% of the measured median (nothing was fitted to it)
    M="$SRC/data/validation/measured/h100_2026-11-26/step.csv"
    real_peak=$(python3 -c "import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(r['own_result_line'].split('max_memory_reserved=')[1].split()[0])" "$M")
    real_ms=$(python3 -c "import csv,sys; print(next(csv.DictReader(open(sys.argv[1])))['step_ms_median'])" "$M")
    [ -n "$real_peak" ] && [ "$real_peak" = "$peak" ] && ok || bad "single: Orrery peak $peak != the H100's max_memory_reserved $real_peak"
    e=$(json "$TMP/j" "d['iteration_time_s']")
    echo "single process: emulate $e s, measured on an H100 $real_ms ms"
    python3 -c "import sys; e, m = float(sys.argv[1]), float(sys.argv[2]) / 1e3; sys.exit(0 if abs(e - m) <= 0.10 * m else 1)" \
        "$e" "$real_ms" && ok || bad "single: emulate $e s vs $real_ms ms measured on an H100 (more than 10% apart)"
fi

# host time (docs/emulate.md "Host time"): a PyTorch program's own, from a second run without the hook.
# step.py's defaults are device-bound (here about 14 ms of host time a step against 16.7 ms of kernels);
# with the hooked run's host time (about 35 ms a step) they came out host-bound at 28-45 ms
"$ORR" emulate --gpu H100 -- "$PY" "$STEP" --steps 2 > "$TMP/h" 2>&1; rc=$?
"$ORR" emulate --gpu H100 --no-host-time -- "$PY" "$STEP" --steps 2 > "$TMP/d" 2>&1
[ $rc -eq 0 ] && grep -q "^host time: the program's own, from a second run without the PyTorch hook (1 process)" "$TMP/h" \
    && ok || bad "host time from the run without the hook (rc $rc): $(grep -E 'host time|warning' "$TMP/h")"
! grep -q "^host time" "$TMP/d" && ok || bad "--no-host-time: no second run"
th=$(sed -n 's/^ *iteration time *\([0-9.]*\) s$/\1/p' "$TMP/h")
td=$(sed -n 's/^ *iteration time *\([0-9.]*\) s$/\1/p' "$TMP/d")
echo "step.py defaults: iteration $th s with host time, $td s without"
python3 -c "import sys; h, d = map(float, sys.argv[1:]); sys.exit(0 if d <= h <= 1.5 * d else 1)" "$th" "$td" \
    && ok || bad "host time: iteration $th s, more than 1.5 x the device-bound $td s"

# too little memory: PyTorch's own out-of-memory error, no prediction
"$ORR" emulate --gpu H100 --mem-capacity 4GiB -- "$PY" "$STEP" --steps 1 > "$TMP/o" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "torch.OutOfMemoryError: CUDA out of memory" "$TMP/o" && ok || bad "OOM (rc $rc)"

# an operator whose library the emulator only stubs (cuFFT): PyTorch's own error, and the stub named
"$ORR" emulate -- "$PY" -c "import torch; torch.fft.fft(torch.ones(64, device='cuda'))" > "$TMP/o" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "does not implement: cufftCreate" "$TMP/o" && ok || bad "cuFFT stub (rc $rc): $(tail -3 "$TMP/o")"

# torchrun, 4 processes, hidden 3072, micro-batch 32, 3 steps (the last is predicted): DDP, then FSDP2
for mode in ddp fsdp; do
    "$ORR" emulate --json --no-host-time --gpu H100 --gpus 4 -- "$(dirname "$PY")/torchrun" --standalone --nproc-per-node 4 \
        "$STEP" --steps 3 --dist $mode --hidden 3072 --heads 24 --batch 32 > "$TMP/j" 2> "$TMP/e"; rc=$?
    if [ $rc -ne 0 ]; then
        bad "$mode (rc $rc)"
        grep -E "Error|orrery" "$TMP/e" | tail -10 >&2
        continue
    fi
    ok
    [ "$(grep -c ORRERY_RESULT "$TMP/e")" = 4 ] && ok || bad "$mode: not every rank finished"
    [ "$(json "$TMP/j" "d['config']['kernels_gemm']")" = 204 ] && ok || bad "$mode: GEMMs $(json "$TMP/j" "d['config']['kernels_gemm']") != 4 x 51"
    [ "$(json "$TMP/j" "d['world_size']")" = 4 ] && ok || bad "$mode: world size"
    n=$(json "$TMP/j" "d['config']['collectives']")
    if [ $mode = fsdp ]; then
        # per rank: all-gather of 5 units forward (4 blocks, the root), of the 4 resharded blocks
        # backward, 5 reduce-scatters
        [ "$n" = 56 ] && ok || bad "fsdp: collectives $n != 4 x 14"
        par="--framework torchtitan --fsdp 4"
    else
        # per rank: one all-reduce per gradient bucket (DDP's 25 MiB buckets; the embedding and the LM
        # head are a bucket each), the same on every rank
        [ "$n" -gt 0 ] && [ $((n % 4)) -eq 0 ] && ok || bad "ddp: collectives $n"
        par="--dp 4"
    fi
    res=$(result "$TMP/e" max_memory_reserved)
    peak=$(json "$TMP/j" "d['peak_memory_bytes']")
    [ -n "$res" ] && [ "$res" = "$peak" ] && ok || bad "$mode: torch max_memory_reserved $res != Orrery peak $peak"
    "$ORR" predict "$SPEC" --gpus 4 $par --mbs 32 --gbs 128 --json > "$TMP/p" && agree "$TMP/j" "$TMP/p" "$mode" \
        || bad "predict $SPEC $par"
done

# torch.distributed.pipelining, interleaved 1F1B over 4 ranks x 2 stages, 4 micro-batches, FSDP2 per
# stage (tests/emu/torch/pp_mem.py, small): its batch_isend_irecv groups have a stream wait before
# each op, and two neighbours both send first; the run must finish (it once deadlocked in the
# collated workload). Per iteration 4 micro-batches cross 7 stage boundaries forward and backward:
# 56 transfers, a send and a recv each.
"$ORR" emulate --json --no-host-time --gpu H100 --gpus 4 -- "$(dirname "$PY")/torchrun" --standalone \
    --nproc-per-node 4 "$SRC/tests/emu/torch/pp_mem.py" --vpp 2 --layers 8 --dim 256 --heads 4 --kv-heads 2 \
    --ffn 512 --vocab 1024 --seq 256 --batch 8 --mb 4 > "$TMP/j" 2> "$TMP/e"; rc=$?
if [ $rc -ne 0 ]; then
    bad "pipelining (rc $rc): $(grep orrery "$TMP/e" | tail -1)"
else
    ok
    [ "$(grep -c ORRERY_RESULT "$TMP/e")" = 4 ] && ok || bad "pipelining: not every rank finished"
    [ "$(json "$TMP/j" "d['config']['p2p']")" = 112 ] && ok || bad "pipelining: p2p $(json "$TMP/j" "d['config']['p2p']") != 112"
    res=$(result "$TMP/e" max_memory_reserved)
    peak=$(json "$TMP/j" "d['peak_memory_bytes']")
    [ -n "$res" ] && [ "$res" = "$peak" ] && ok || bad "pipelining: torch max_memory_reserved $res != Orrery peak $peak"
fi

checks_done
