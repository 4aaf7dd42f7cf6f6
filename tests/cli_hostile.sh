#!/bin/sh
# Hostile and careless input (issue 24): every case is one line on stderr naming the flag or file, a
# non-zero exit, and no unbounded time or memory (docs/spec.md "Limits").
. "$2/tests/check.sh"
cd "$TMP"

# expect RC SUBSTRING CMD...: exit status RC and one line on stderr containing SUBSTRING
expect() {
    want_rc=$1 want=$2
    shift 2
    "$@" > out.txt 2> err.txt; rc=$?
    [ "$rc" -eq "$want_rc" ] && [ "$(wc -l < err.txt)" -eq 1 ] && grep -qF -- "$want" err.txt && ok \
        || bad "$* -> rc $rc, stderr: $(cat err.txt)"
}
M="--model llama3-8b --gpu H100 --gpus 8"
# the iteration would hold 4e9 micro-batches (15.6 GB before this bound)
expect 2 "--gbs 4294967288 (training.gbs): 536870911 micro-batches" "$ORR" predict $M --gbs 4294967288
# a sequence whose kernel times would overflow the clock (MFU 5723% before)
expect 2 "--seq 4294967295 (training.seq): at most 16777216 tokens" "$ORR" predict $M --seq 4294967295
expect 2 "tokens per micro-batch" "$ORR" predict $M --seq 16777216 --mbs 64 --gbs 512
# a model of absurd width: its kernels take days, the iteration passes the 2^62 ps clock; refused
# there (it used to overflow the clock and report a deadlock), and its optimizer step is not split
# into billions of launches on the way
printf 'model: {layers: 7, hidden: 184320000, heads: 96, ffn: 737280000, vocab: 131072, seq: 4096}\n' > wide.yaml
expect 2 "runs past 53 days of simulated time" "$ORR" predict wide.yaml --gpu H100 --gpus 2304 --tp 8 --pp 6 --mbs 1 \
    --gbs 1152 --sp --dist-opt
# a packet-level fabric too large to route, refused before the workload of every GPU is built
expect 2 "--gpus 65536 with --net packet: a fabric of this many GPUs needs routing tables" \
    "$ORR" predict --model gpt3-125m --gpu H100 --gpus 65536 --net packet --gbs 65536
# a trace past the events a viewer opens is refused, naming the limit and what to do (a 100,000-GPU
# job's trace grows with its unique ranks' ops: tens of GB without this bound)
ORRERY_TRACE_MAX_EVENTS=1000 expect 2 "--trace t.json: the trace would hold about" \
    "$ORR" predict --model gpt3-1.3b --gpu A100 --gpus 16 --tp 2 --pp 2 --gbs 16 --trace t.json
[ ! -e t.json ] && ok || bad "a refused trace was written"
# a workload past the op budget (2 GB by default) is refused before its other ranks are built, naming
# the budget and ORRERY_MAX_OPS (was 150 million ops, about 30 GB)
ORRERY_MAX_OPS=1000 expect 2 "more than the 0.0 million of the 2 GB budget" \
    "$ORR" predict --model gpt3-1.3b --gpu A100 --gpus 16 --tp 2 --pp 2 --gbs 16
expect 2 "raise the budget with ORRERY_MAX_OPS=N" "$ORR" predict --model llama3-8b --gpu H100 --gpus 64 --tp 8 --pp 4 \
    --gbs 16384 --mbs 1 --no-symmetry
# one simulated rank of 65,536 micro-batches stops at its share of the budget while it is built
# (about 420 MB; it built 90 million ops, some 18 GB, before)
expect 2 "this job would need more than 6.7 million ops" "$ORR" predict --model llama3-8b --gpu H100 --gpus 8 --tp 8 \
    --gbs 65536 --mbs 1 --dist-opt
# an input over the limit, an endless device, a directory
printf 'model: llama3-8b\n' > s.yaml
ORRERY_MAX_INPUT_BYTES=4 expect 2 "s.yaml: larger than 4 bytes, the input limit" "$ORR" predict s.yaml
expect 2 "/dev/zero: larger than 1073741824 bytes" "$ORR" predict /dev/zero
mkdir d.yaml
expect 2 "d.yaml: is a directory, not a file" "$ORR" predict d.yaml
# netsim: a link rate that overflowed the engine (1e40Gbps: a 1 MB flow 23x slower) or let a flow
# cross a dead link (1e-20Gbps), and a 1-byte payload (every byte a packet)
printf '3 1 0 1 2 NONE\n2\n0 2 1e40Gbps 1us 0\n1 2 100Gbps 1us 0\n' > t1.txt
printf '3 1 0 1 2 NONE\n2\n0 2 1e-20Gbps 1us 0\n1 2 100Gbps 1us 0\n' > t2.txt
printf '3 1 0 1 2 NONE\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n' > t3.txt
printf '1\n0 1 3 100 1000000 0\n' > f.txt
: > c.txt
printf 'PACKET_PAYLOAD_SIZE 1\n' > c1.txt
expect 2 "t1.txt:3: link rate: '1e40Gbps' is outside 1Mbps to 100Tbps" "$ORR" netsim t1.txt f.txt c.txt
expect 2 "t2.txt:3: link rate: '1e-20Gbps' is outside 1Mbps to 100Tbps" "$ORR" netsim t2.txt f.txt c.txt
expect 2 "c1.txt: PACKET_PAYLOAD_SIZE 1: expected 64 to 16777216 bytes" "$ORR" netsim t3.txt f.txt c1.txt
"$ORR" netsim t3.txt f.txt c.txt > out.txt 2>&1 && grep -q "flows 1 finished of 1" out.txt && ok || bad "netsim t3: $(cat out.txt)"

# netsim: a config's output path cannot leave --out (or the current directory)
mkdir -p sub
printf 'FCT_OUTPUT_FILE ../escaped.txt\nPFC_OUTPUT_FILE /tmp/orrery-hostile-pfc.txt\n' > sub/cout.txt
(cd sub && "$ORR" netsim ../t3.txt ../f.txt cout.txt > out.txt 2>&1) && [ -f sub/escaped.txt ] && [ ! -e escaped.txt ] \
    && [ -f sub/orrery-hostile-pfc.txt ] && [ ! -e /tmp/orrery-hostile-pfc.txt ] && ok || bad "netsim output escaped: $(cat sub/out.txt)"

# netsim: a flow that would take hours of packets without SIMULATOR_STOP_TIME (1e18 B ran forever)
printf '1\n0 1 3 100 1000000000000000000 0\n' > fbig.txt
expect 2 "fbig.txt: the flows need about 1e+15 packets of 1000 bytes" "$ORR" netsim t3.txt fbig.txt c.txt
printf 'SIMULATOR_STOP_TIME 0.001\n' > cstop.txt
"$ORR" netsim t3.txt fbig.txt cstop.txt > out.txt 2>&1 && grep -q "flows 0 finished of 1" out.txt && ok \
    || bad "netsim with a stop time: $(cat out.txt)"

# netsim: a flow file past the 2 GB budget (2.5 million flows; the old cap, 100 million, was 75 GB) is
# refused on its count line; ORRERY_MAX_FLOWS moves the budget
printf '3000000\n0 1 3 100 1000 0\n' > fmany.txt
expect 2 "fmany.txt:1: flow count 3000000: more than 2500000 flows" "$ORR" netsim t3.txt fmany.txt c.txt
printf '2\n0 1 3 100 1000 0\n1 0 3 100 1000 0\n' > ftwo.txt
ORRERY_MAX_FLOWS=1 expect 2 "ftwo.txt:1: flow count 2: more than 1 flows" "$ORR" netsim t3.txt ftwo.txt c.txt

# validate: a count past 2^32 (was read as 48), a nan measurement, a header-only table
mkdir v && cp "$SRC"/data/validation/*.csv v/
python3 - <<'PY'
import csv
def edit(name, col, value, version=None):
    rows = list(csv.reader(open("v/" + name)))
    i = rows[0].index(col)
    for r in rows[1:]:
        if version is None or r[rows[0].index("table_version")] == version:
            r[i] = value
            break
    csv.writer(open("v/" + name, "w", newline="")).writerows(rows)
edit("megatron_lm_a100_selene.csv", "gpus", str(2**32 + 48), "April-2021")
edit("megatron_lm_h100_weak_scaling.csv", "tflops_per_gpu", "nan")
PY
expect 2 "megatron_lm_h100_weak_scaling.csv row 1: tflops_per_gpu must be a positive number" "$ORR" validate v
head -1 "$SRC/data/validation/megatron_lm_h100_weak_scaling.csv" > v/megatron_lm_h100_weak_scaling.csv
expect 2 "megatron_lm_h100_weak_scaling.csv: no row predicted (0 rows in the file)" "$ORR" validate v
cp "$SRC/data/validation/megatron_lm_h100_weak_scaling.csv" v/
expect 2 "megatron_lm_a100_selene.csv row 1: gpus: expected a whole number below 2^32, got '4294967344'" "$ORR" validate v

# emulate: a run stopped by a signal passes it to the program and removes its temporary traces
printf '#!/bin/sh\nexec sleep 20\n' > sleeper.sh
chmod +x sleeper.sh
"$ORR" emulate -- ./sleeper.sh > out.txt 2> err.txt &
pid=$!
sleep 1
kill -TERM $pid
wait $pid; rc=$?
[ "$rc" -eq 1 ] && grep -q "exited with status 143 under emulation; no prediction (traces removed)" err.txt && ok \
    || bad "emulate stopped by SIGTERM -> rc $rc: $(cat err.txt)"
grep -q "orrery: orrery emulate" err.txt && bad "doubled prefix: $(cat err.txt)" || ok

# emulate: the collator's memory (2 GB by default; a 200 MB trace of kernel launches took 2.2 GB, about
# 11x its size) is estimated before the records are made and refused past the budget, naming the
# trace and ORRERY_EMU_MAX_BYTES (a small budget stands in for a trace of gigabytes)
{ printf 'orrery-emu-trace 1\nP pid=1 rank=0\nN 0 k\nA 0 64\n'
  i=0; while [ $i -lt 2000 ]; do printf 'H 100\nK 0 0 1 1 1 32 1 1 0 -1\n'; i=$((i + 1)); done
  printf 'END\n'; } > emu-trace.txt
printf '#!/bin/sh\ncp emu-trace.txt "$ORRERY_EMU_DIR/trace-1.txt"\n' > put-trace.sh
chmod +x put-trace.sh
ORRERY_EMU_MAX_BYTES=100000 expect 2 "td1/trace-1.txt: the run's traces would take about" \
    "$ORR" emulate --trace-dir td1 -- ./put-trace.sh
grep -qF "past the collator's budget of 100000 bytes (docs/spec.md \"Limits\"; raise it with ORRERY_EMU_MAX_BYTES=N)" \
    err.txt && ok || bad "emulate budget message: $(cat err.txt)"
ORRERY_EMU_MAX_BYTES=1000000 "$ORR" emulate --trace-dir td2 -- ./put-trace.sh > out.txt 2> err.txt && ok \
    || bad "emulate within a raised budget: $(cat err.txt)"

# output to a full disk: the reason, exit 1, for each command that prints
if [ -w /dev/full ]; then
    for c in "list gpus" "predict $M --mbs 1 --seq 128" "validate --set megatron-h100"; do
        "$ORR" $c > /dev/full 2> err.txt; rc=$?
        [ "$rc" -eq 1 ] && grep -q "cannot write the output: No space left on device" err.txt && ok \
            || bad "$c > /dev/full -> rc $rc: $(cat err.txt)"
    done
fi
# orrery calibrate (docs/calibrate.md "Tests and limits"): more rows, ranks or step times than it
# takes, a file of zeros
{ printf '#  Rank 0 Group 0 Pid 1 on h device 0\n'; i=0; while [ $i -lt 4097 ]; do echo "8 2 float sum -1 1.0 0 0 0 1.0 0 0 0"; i=$((i + 1)); done; } > all_reduce_big.txt
expect 2 "all_reduce_big.txt:4098: more than 4096 nccl-tests rows" "$ORR" calibrate --gpu H100 --nccl all_reduce_big.txt
awk 'BEGIN { for (i = 0; i <= 65536; i++) printf "#  Rank %d Group 0 Pid 1 on h%d device 0\n", i, i / 8 }' > all_reduce_ranks.txt
expect 2 "all_reduce_ranks.txt:65537: more than 65536 ranks in one run" "$ORR" calibrate --gpu H100 --nccl all_reduce_ranks.txt
head -c 100000 /dev/zero > zeros.txt
expect 2 "zeros.txt: no nccl-tests result rows" "$ORR" calibrate --gpu H100 --nccl zeros.txt
{ echo step_ms,tp; i=0; while [ $i -lt 257 ]; do echo 100,1; i=$((i + 1)); done; } > runs.csv
expect 2 "runs.csv row 257: more than 256 measured step times" "$ORR" calibrate $M --steps runs.csv
checks_done
