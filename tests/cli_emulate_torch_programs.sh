#!/bin/sh
# `orrery emulate` on real PyTorch (as tests/cli_emulate_torch.sh): what real programs do that the
# emulator must carry (issue 23): DataLoader workers and fork, MoE dispatch over expert-parallel ranks
# with counts read back, values read back, NVML, what a program observes of its GPU, model parallelism
# by hand, CUDA graphs, cuDNN, live time and torch.compile.
# Usage: cli_emulate_torch_programs.sh ORRERY_BINARY SOURCE_DIR
. "$2/tests/check.sh"
. "$SRC/tests/emu/torch/common.sh"

# --- issue 23 items 1, 2, 3, 7, 9: what real programs do that the emulator must carry ---

# item 1: a DataLoader with worker processes (forked after the libraries load, leaving by
# os._exit) and a bare os.fork() + os._exit(0): the run is predicted, the 3 children ignored
"$ORR" emulate --gpu H100 -- "$PY" "$SRC/tests/emu/torch/dataloader.py" --workers 2 --steps 4 > "$TMP/o" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "ORRERY_RESULT steps=4" "$TMP/o" && grep -q "1 process used a GPU (3 others ignored)" "$TMP/o" \
    && ok || bad "dataloader workers (rc $rc): $(grep -E 'orrery|Error' "$TMP/o" | tail -2)"

# items 2 and 3: MoE dispatch over 4 expert-parallel ranks (tests/emu/torch/moe_a2a.py: 512 tokens,
# top-2 of 8 experts, hidden 256, bf16): bincount's counts come from the routing model, their
# all_to_all_single and the .tolist() of their per-rank sums give the split sizes, and the dispatch
# and combine all_to_all_single send to every rank, itself included. Checked: every rank's counts
# and splits are the model's, and the bytes sent to other ranks are those the model implies:
# dispatch and combine each move sum over ranks s, d != s of send[d] rows of 256 x 2 bytes, and the
# counts exchange 2 int64 per pair of ranks.
# moe_expect FACTOR: the routing model's counts of 1024 items over 8 bins (route.c: bin 0 gets
# FACTOR x the average, the others share the rest; largest remainder), as "c0,c1,...".
moe_expect() {
    python3 -c "
import sys
f, n, total = float(sys.argv[1]), 8, 1024
w = [f] + [(n - f) / (n - 1)] * (n - 1)
share = [total * x / sum(w) for x in w]
c = [int(x) for x in share]
frac = [x - int(x) for x in share]
while sum(c) < total:
    i = max(range(n), key=lambda j: (frac[j], -j)); c[i] += 1; frac[i] = -1
print(','.join(map(str, c)))" "$1"
}
for f in 1 3; do
    "$ORR" emulate --json --no-host-time --gpu H100 --gpus 4 --moe-imbalance $f -- "$(dirname "$PY")/torchrun" --standalone \
        --nproc-per-node 4 "$SRC/tests/emu/torch/moe_a2a.py" > "$TMP/moe$f.json" 2> "$TMP/e"; rc=$?
    if [ $rc -ne 0 ]; then
        bad "moe --moe-imbalance $f (rc $rc): $(grep -E 'Error|orrery' "$TMP/e" | tail -2)"
        continue
    fi
    ok
    want=$(moe_expect $f)
    # the ranks' results, split at each ORRERY_RESULT rather than by line: four processes share the
    # stream, and a line can end inside another's (CI, 2026-11-26, twice: rank 0's text ran into
    # rank 2's line when print wrote its text and newline apart; moe_a2a.py now writes a line whole)
    results "$TMP/e" > "$TMP/r"
    got=$(tr '\n' ';' < "$TMP/r")
    if [ "$(grep -c "counts=$want " "$TMP/r")" = 4 ]; then
        ok
    else
        bad "moe $f: counts are not the routing model's $want; the ranks printed: ${got:-nothing}"
        tail -n 20 "$TMP/e" >&2
    fi
    check=$(python3 -c "
import sys
c = list(map(int, sys.argv[1].split(',')))
send = [c[2 * r] + c[2 * r + 1] for r in range(4)]
lines = [l for l in open(sys.argv[2]) if 'ORRERY_RESULT' in l]  # one result a line (results above)
bad = [l for l in lines if 'send=%s ' % ','.join(map(str, send)) not in l
       or 'recv=%s' % ','.join([str(send[int(l.split('rank=')[1].split()[0])])] * 4) not in l]
rows = sum(send[d] for s in range(4) for d in range(4) if d != s)
print(len(lines) == 4 and not bad, 2 * rows * 256 * 2 + 4 * 3 * 2 * 8)" "$want" "$TMP/r")
    [ "${check%% *}" = True ] && ok || bad "moe $f: split sizes are not those of the routing model"
    got=$(json "$TMP/moe$f.json" "d['config']['p2p_bytes']")
    echo "moe --moe-imbalance $f: all-to-all bytes sent to other ranks: predicted $got, routing model ${check#* }"
    [ "$got" = "${check#* }" ] && ok || bad "moe $f: p2p_bytes $got != ${check#* } of the routing model"
done
# the rank that holds the loaded experts receives 3 x as much: the imbalanced step is slower
python3 -c "import json,sys; a, b = (json.load(open(f))['iteration_time_s'] for f in sys.argv[1:]); sys.exit(0 if b > a else 1)" \
    "$TMP/moe1.json" "$TMP/moe3.json" && ok || bad "moe: --moe-imbalance 3 is not slower than balanced"

# item 3: values read back: the loss is finite and nonzero, GradScaler's scale is its initial 65536
# and the optimizer steps (found-inf stays 0), bincount's counts and their per-rank sums
"$ORR" emulate --gpu H100 -- "$PY" "$SRC/tests/emu/torch/readback.py" > "$TMP/o" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "ORRERY_RESULT loss_ok=1 scale=65536 stepped=4 counts=8,8,8,8,8,8,8,8 per_rank=16,16,16,16" "$TMP/o" \
    && ok || bad "read-back values (rc $rc): $(grep -E 'ORRERY|Error|orrery' "$TMP/o" | tail -2)"

# item 7: pynvml and PyTorch's NVML wrappers (tests/emu/torch/nvml_probe.py) on an emulated H100 (an
# 8-GPU node, its SXM power limit 700 W, the maximum SM clock, this process holding 1 GiB)
"$ORR" emulate --gpu H100 -- "$PY" "$SRC/tests/emu/torch/nvml_probe.py" > "$TMP/o" 2>&1; rc=$?
for want in "count=8 " "name=NVIDIA_H100-SXM5-80GB " "uuid_ok=1 " "total_mib=81559 " "used_ge_1gib=1 " "util_gpu=0 " \
    "sm_mhz=1980 " "power_limit_w=700 " "temp_c=30 " "bus_id=00000000:01:00.0 " "driver=580.65.06 " "my_process_mib=1024 " \
    "torch_util=0 " "torch_temp=30 " "torch_power=0 " "torch_device_memory_used_ge_1gib=1 " "torch_clock=1980"; do
    [ $rc -eq 0 ] && grep "ORRERY_RESULT" "$TMP/o" | grep -q -- "$want" && ok || { bad "nvml (rc $rc): no '$want' in $(grep -E 'ORRERY|Error' "$TMP/o" | tail -1)"; break; }
done

# item 9: one GPU asked for, one seen; an H100 80GB's memory as its driver reports it (81559 MiB);
# event timings not zero; a tensor-parallel all-reduce (a DeviceMesh dimension named "tp" over the
# whole job) reported as tensor-parallel communication, not data-parallel
"$ORR" emulate --gpu H100 --gpus 1 -- "$PY" "$SRC/tests/emu/torch/observe.py" > "$TMP/o" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "ORRERY_RESULT rank=0 devices=1 total_mib=81559 event_ms=" "$TMP/o" \
    && ! grep -q "event_ms=0.000000" "$TMP/o" && ok || bad "observe (rc $rc): $(grep -E 'ORRERY|Error' "$TMP/o" | tail -1)"
"$ORR" emulate --json --gpu H100 --gpus 4 -- "$(dirname "$PY")/torchrun" --standalone --nproc-per-node 4 \
    "$SRC/tests/emu/torch/observe.py" --tp > "$TMP/j" 2> "$TMP/e"; rc=$?
[ $rc -eq 0 ] && [ "$(json "$TMP/j" "d['ranks'][0]['breakdown']['exposed_comm_s']['tp'] > 0 and d['ranks'][0]['breakdown']['exposed_comm_s']['dp'] == 0")" = True ] \
    && ok || bad "observe --tp (rc $rc): TP all-reduces not reported as tp: $(json "$TMP/j" "d['ranks'][0]['breakdown']['exposed_comm_s']" 2>&1)"

# item 8: model parallelism by hand in one process (tests/emu/torch/model_parallel.py): an MLP's first
# half on cuda:0, its second on cuda:1, .to('cuda:1') between them. Each device is a rank: 2 simulated,
# the peak is PyTorch's larger max_memory_reserved of the two, the last step's 8 GEMMs (3 forward, 5
# backward), and the step is serial across the two GPUs (no pipelining): the critical path crosses
# from one to the other and back (the activation's copy, its gradient's), and the iteration is the
# two devices' compute one after the other.
"$ORR" emulate --json --no-host-time --gpu H100 -- "$PY" "$SRC/tests/emu/torch/model_parallel.py" > "$TMP/j" 2> "$TMP/e"; rc=$?
if [ $rc -ne 0 ]; then
    bad "model parallel (rc $rc): $(grep -E 'orrery|Error' "$TMP/e" | tail -2)"
else
    [ "$(json "$TMP/j" "d['unique_ranks_simulated']")" = 2 ] && ok || bad "model parallel: ranks simulated"
    res=$(result "$TMP/e" max_memory_reserved0); res1=$(result "$TMP/e" max_memory_reserved1)
    [ "$res1" -gt "$res" ] 2>/dev/null && res=$res1
    [ "$(json "$TMP/j" "d['peak_memory_bytes']")" = "$res" ] && ok || bad "model parallel: peak $(json "$TMP/j" "d['peak_memory_bytes']") != torch's $res"
    [ "$(json "$TMP/j" "d['config']['kernels_gemm']")" = 8 ] && ok || bad "model parallel: GEMMs $(json "$TMP/j" "d['config']['kernels_gemm']") != 8"
    [ "$(json "$TMP/j" "d['critical_path']['rank_hops'] >= 2")" = True ] && ok || bad "model parallel: critical path hops $(json "$TMP/j" "d['critical_path']['rank_hops']")"
    [ "$(json "$TMP/j" "d['iteration_time_s'] >= 0.95 * sum(r['breakdown']['compute_s'] for r in d['ranks'])")" = True ] \
        && ok || bad "model parallel: the two devices overlapped (iteration $(json "$TMP/j" "d['iteration_time_s']") s)"
fi

# item 5: CUDA graphs (tests/emu/torch/graphs.py): an MLP's forward, backward and capturable Adam
# step warmed up on a side stream, captured whole with torch.cuda.graph and replayed 4 times. The
# run completes; each replay is an iteration (3 warm-up steps + 4 replays = 7 marks) and the last
# one is predicted with the step's 5 GEMMs and as many kernels as the same step run eagerly
# (--eager), its time within 15% of the eager one's.
"$ORR" emulate --json --no-host-time --gpu H100 -- "$PY" "$SRC/tests/emu/torch/graphs.py" > "$TMP/j" 2> "$TMP/e"; rc=$?
"$ORR" emulate --json --no-host-time --gpu H100 -- "$PY" "$SRC/tests/emu/torch/graphs.py" --eager > "$TMP/j2" 2> "$TMP/e2"; rc2=$?
if [ $rc -ne 0 ] || [ $rc2 -ne 0 ]; then
    bad "CUDA graphs (rc $rc, eager rc $rc2): $(grep -E 'orrery|Error' "$TMP/e" | tail -2)"
else
    grep -q "ORRERY_RESULT warmup=3 replays=4 gemms_per_step=5 capturing_seen=1" "$TMP/e" && ok || bad "graphs: the program's result"
    [ "$(json "$TMP/j" "d['config']['iteration_marks']")" = 7 ] && ok || bad "graphs: iteration marks $(json "$TMP/j" "d['config']['iteration_marks']") != 7"
    [ "$(json "$TMP/j" "d['config']['kernels_gemm']")" = 5 ] && ok || bad "graphs: GEMMs of a replay $(json "$TMP/j" "d['config']['kernels_gemm']") != 5"
    k=$(json "$TMP/j" "d['config']['kernels']"); k2=$(json "$TMP/j2" "d['config']['kernels']")
    [ "$k" -gt 5 ] && [ "$k" = "$k2" ] && ok || bad "graphs: kernels of a replay $k != eager step's $k2"
    [ "$(json "$TMP/j" "'cudaGraphLaunch' in d['config']['entry_points'] and 'cudaStreamBeginCapture' in d['config']['entry_points']")" = True ] \
        && ok || bad "graphs: entry points"
    e=$(json "$TMP/j" "d['iteration_time_s']"); p=$(json "$TMP/j2" "d['iteration_time_s']")
    python3 -c "import sys; e, p = map(float, sys.argv[1:]); sys.exit(0 if p > 0 and abs(e - p) <= 0.15 * p else 1)" "$e" "$p" \
        && ok || bad "graphs: replayed iteration $e s vs eager $p s (more than 15% apart)"
fi
# and per layer, as Transformer Engine and Megatron graph a model (make_graphed_callables: a forward
# and a backward graph for each of the 2 layers, launched 4 times each over 4 steps): 6 GEMMs a step
"$ORR" emulate --json --no-host-time --gpu H100 -- "$PY" "$SRC/tests/emu/torch/graphs.py" --callables > "$TMP/j" 2> "$TMP/e"; rc=$?
[ $rc -eq 0 ] && grep -q "ORRERY_RESULT callables replays=4 gemms_per_step=6" "$TMP/e" \
    && [ "$(json "$TMP/j" "d['config']['kernels_gemm'], d['config']['iteration_marks'], d['config']['entry_points']['cudaGraphLaunch']")" = "6 4 16" ] \
    && ok || bad "graphs --callables (rc $rc): $(json "$TMP/j" "d['config']['kernels_gemm'], d['config']['iteration_marks']" 2>&1) $(grep -E 'orrery|Error' "$TMP/e" | tail -2)"

# item 6: cuDNN (tests/emu/torch/cudnn.py): a conv net step (convolutions and batch norm through cuDNN,
# FP32 data in TF32) and causal cuDNN attention in bf16, forward and backward; then again with
# cudnn.benchmark (PyTorch times every plan with events first). Checked: the run completes with
# PyTorch's own peak; the predicted iteration has each convolution (2 forward, 1 data gradient, 2
# weight gradients), the attention forward and backward and the 4 batch norms, each timed (> 0), the
# convolutions and attention with the FLOPs of the hand formulas (2 N K C R S P Q; 4 B H S^2 D, halved
# causal, backward 2.5 x); the executed FLOPs per iteration are theirs and the GEMMs' (each counted
# once, though the PyTorch hook tags the same operators).
for bench in "" --benchmark; do
    "$ORR" emulate --json --no-host-time --gpu H100 --trace "$TMP/t.json" -- "$PY" "$SRC/tests/emu/torch/cudnn.py" $bench \
        > "$TMP/j" 2> "$TMP/e"; rc=$?
    if [ $rc -ne 0 ]; then
        bad "cuDNN $bench (rc $rc): $(grep -E 'orrery|Error' "$TMP/e" | tail -2)"
        continue
    fi
    res=$(result "$TMP/e" max_memory_reserved)
    peak=$(json "$TMP/j" "d['peak_memory_bytes']")
    [ -n "$res" ] && [ "$res" = "$peak" ] && ok || bad "cuDNN $bench: torch max_memory_reserved $res != Orrery peak $peak"
    python3 -c "
import json, sys
conv = lambda n, k, c, r, s, p, q: 2 * n * k * c * r * s * p * q
c1, c2 = conv(16, 64, 3, 3, 3, 64, 64), conv(16, 128, 64, 3, 3, 32, 32)
attn = 4 * 4 * 8 * 1024 * 1024 * 64 // 2
want = {'cudnn_conv_fprop': [c1, c2], 'cudnn_conv_dgrad': [c2], 'cudnn_conv_wgrad': [c1, c2],
        'cudnn_sdpa_fwd': [attn], 'cudnn_sdpa_bwd': [attn * 5 // 2], 'cudnn_batch_norm_fwd': [0, 0],
        'cudnn_batch_norm_bwd': [0, 0]}
gemms = 2 * (2 * 4096 * 512 * 1536) + 3 * (2 * 16 * 128 * 10)
t = json.load(open(sys.argv[1]))
ops = [e for e in (t['traceEvents'] if isinstance(t, dict) else t) if e.get('ph') == 'X' and e['name'].startswith('cudnn_')]
got = {}
for e in ops:
    got.setdefault(e['name'], []).append(e['args']['flops'])
    print('%-22s %9.3f us %14.0f FLOPs %s' % (e['name'], e['dur'], e['args']['flops'], e['args'].get('dtype')))
flops = json.load(open(sys.argv[2]))['hw_flops_per_iteration']
print('executed FLOPs per iteration %.0f, hand formula %.0f' % (flops, sum(sum(v) for v in want.values()) + gemms))
ok = {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()} and all(e['dur'] > 0 for e in ops)
sys.exit(0 if ok and flops == sum(sum(v) for v in want.values()) + gemms else 1)" "$TMP/t.json" "$TMP/j" \
        && ok || bad "cuDNN $bench: ops, times or FLOPs not those of the hand formulas"
done

# item 10: live time (tests/emu/torch/live_ddp.py): a 2-rank DDP loop times each step with
# torch.cuda.Event and prints it; under --live the program runs twice and the second run's printed
# step time is simulated GPU time: its last step within 2% of the predicted iteration time, the same
# on both ranks, and the first run's output is not shown (3 steps, 3 lines per rank)
"$ORR" emulate --live --json --no-host-time --gpu H100 --gpus 2 -- "$(dirname "$PY")/torchrun" --standalone --nproc-per-node 2 \
    "$SRC/tests/emu/torch/live_ddp.py" > "$TMP/j" 2> "$TMP/e"; rc=$?
if [ $rc -ne 0 ]; then
    bad "--live DDP (rc $rc): $(grep -E 'orrery|Error' "$TMP/e" | tail -2)"
else
    pred=$(json "$TMP/j" "d['iteration_time_s'] * 1e3")
    last=$(sed -n 's/^ORRERY_STEP rank=0 step=2 ms=\([0-9.]*\).*/\1/p' "$TMP/e")
    last1=$(sed -n 's/^ORRERY_STEP rank=1 step=2 ms=\([0-9.]*\).*/\1/p' "$TMP/e")
    echo "--live DDP: printed step time $last ms (rank 1: $last1 ms), predicted iteration $pred ms"
    python3 -c "import sys; m, p = map(float, sys.argv[1:]); sys.exit(0 if p > 0 and abs(m - p) <= 0.02 * p else 1)" "$last" "$pred" \
        && ok || bad "--live DDP: printed step time $last ms vs predicted $pred ms (more than 2% apart)"
    [ "$last" = "$last1" ] && [ "$(grep -c '^ORRERY_STEP' "$TMP/e")" = 6 ] && ok || bad "--live DDP: step lines $(grep -c '^ORRERY_STEP' "$TMP/e"), rank 1 $last1"
fi

# item 4: torch.compile (tests/emu/torch/compile_llama.py: a 2-layer TorchTitan-style Llama, each block
# compiled, AdamW, 3 steps). With Inductor, Triton compiles the blocks' kernels (its launcher linked
# against the driver stand-in), which load as modules and launch through the driver API: Inductor's
# own launcher (cuModuleLoad, cuLaunchKernel), and Triton's (cuModuleLoadData, cuLaunchKernelEx) when
# Inductor's is turned off. Checked: the run completes with one graph compiled (the hook's dispatch
# mode once made every call recompile), PyTorch's max_memory_reserved equals Orrery's peak, and the
# generated kernels are on the predicted timeline with a time (every kernel tagged: the Triton ones by
# the hook's wrapper of Inductor's launch). backend="eager" (a segmentation fault once: the mode,
# popped and pushed back by dynamo, was freed in between) completes with the same checks. Fresh caches
# under $TMP, one compile process, so the runs do the same work each time.
for variant in inductor triton-launcher eager; do
    backend=inductor static=1 launch=cuLaunchKernel
    [ $variant = eager ] && backend=eager
    [ $variant = triton-launcher ] && static=0 launch=cuLaunchKernelEx
    rm -rf "$TMP/inductor" "$TMP/triton"
    TORCHINDUCTOR_CACHE_DIR="$TMP/inductor" TRITON_CACHE_DIR="$TMP/triton" TORCHINDUCTOR_COMPILE_THREADS=1 \
        TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=$static "$ORR" emulate --json --no-host-time --gpu H100 \
        --trace "$TMP/compile.json" -- "$PY" "$SRC/tests/emu/torch/compile_llama.py" --backend $backend > "$TMP/j" 2> "$TMP/e"; rc=$?
    if [ $rc -ne 0 ] || ! grep -q "ORRERY_RESULT backend=$backend steps=3 graphs=1 " "$TMP/e"; then
        bad "torch.compile $variant (rc $rc): $(grep -E 'ORRERY|orrery|Error|Fatal' "$TMP/e" | tail -2)"
        continue
    fi
    res=$(result "$TMP/e" max_memory_reserved)
    peak=$(json "$TMP/j" "d['peak_memory_bytes']")
    echo "torch.compile $variant: torch max_memory_reserved $res, Orrery peak $peak, iteration $(json "$TMP/j" "d['iteration_time_s']") s"
    [ -n "$res" ] && [ "$res" = "$peak" ] && ok || bad "torch.compile $variant: torch max_memory_reserved $res != Orrery peak $peak"
    # the same program run for real on an H100 (torch 2.11, triton 3.6 there): the same peak, to the byte
    if [ $variant != triton-launcher ]; then
        real=$(python3 -c "import csv,sys; print(*[r['max_memory_reserved'] for r in csv.DictReader(open(sys.argv[1])) if r['args'] == '--backend ' + sys.argv[2]])" \
            "$SRC/data/validation/measured/h100_2026-11-26/emulate_real.csv" $backend)
        [ -n "$real" ] && [ "$real" = "$peak" ] && ok || bad "torch.compile $variant: Orrery peak $peak != the H100's max_memory_reserved $real"
    fi
    [ "$(json "$TMP/j" "d['config']['kernels_geometry'], d['config']['iteration_marks']")" = "0 3" ] \
        && ok || bad "torch.compile $variant: untagged kernels, iteration marks: $(json "$TMP/j" "d['config']['kernels_geometry'], d['config']['iteration_marks']")"
    # the predicted iteration's Triton kernels (names triton_poi_/triton_red_/triton_per_...), each with a time
    n=$(python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))
k = [e for e in (t['traceEvents'] if isinstance(t, dict) else t) if e.get('name', '').startswith('triton_')]
print(len(k) if all(e.get('dur', 0) > 0 for e in k) else -1)" "$TMP/compile.json")
    if [ $backend = inductor ]; then
        [ "$n" -gt 0 ] && [ "$(json "$TMP/j" "'$launch' in d['config']['entry_points']")" = True ] \
            && ok || bad "torch.compile $variant: Triton kernels on the timeline with a time: $n, $launch called: $(json "$TMP/j" "'$launch' in d['config']['entry_points']")"
    else
        [ "$n" = 0 ] && ok || bad "torch.compile eager: Triton kernels $n"
    fi
done

checks_done
