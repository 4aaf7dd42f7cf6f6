#!/bin/sh
# Command-line tests of `orrery emulate`: a CUDA C program built by the test build (tests/emu)
# runs under emulation and gets a prediction (text and JSON); a failing program, a missing `--`
# and unknown flags give one line on stderr and a non-zero exit.
# Usage: cli_emulate.sh ORRERY_BINARY SOURCE_DIR
. "$2/tests/check.sh"
BIN="$(dirname "$ORR")/emu-tests"

one_line() { [ "$(wc -l < "$1")" -eq 1 ]; }

"$ORR" emulate > "$TMP/e" 2>&1; rc=$?
[ $rc -eq 2 ] && one_line "$TMP/e" && grep -q -- "-- CMD" "$TMP/e" && ok || bad "emulate without -- (rc $rc)"
"$ORR" emulate --tp 2 -- true > "$TMP/e" 2>&1; rc=$?
[ $rc -eq 2 ] && one_line "$TMP/e" && grep -q "unknown flag \"--tp\" (every flag: \`orrery emulate --help\`)" "$TMP/e" && ok || bad "emulate --tp (rc $rc)"
"$ORR" emulate --gpu NoSuchGPU -- true > "$TMP/e" 2>&1; rc=$?
[ $rc -eq 2 ] && one_line "$TMP/e" && grep -q "NoSuchGPU" "$TMP/e" && ok || bad "emulate --gpu NoSuchGPU (rc $rc)"
"$ORR" emulate --profile -- true > "$TMP/e" 2>&1; rc=$?
[ $rc -eq 2 ] && one_line "$TMP/e" && grep -q -- "--kernel-db" "$TMP/e" && ok || bad "emulate --profile without --kernel-db (rc $rc)"
"$ORR" emulate -- false > "$TMP/e" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "exited with status 1" "$TMP/e" && ok || bad "emulate of a failing program (rc $rc)"
"$ORR" emulate -- true > "$TMP/e" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "no process used a GPU" "$TMP/e" && ok || bad "emulate of a program without CUDA (rc $rc)"

if [ -x "$BIN/streams" ]; then
    # the profiler in front of the emulation libraries (no GPU here): every launch of both launch
    # paths is seen and named; the emulator's event times are zero, so nothing is stored
    "$ORR" emulate --profile-on-emulator --kernel-db "$TMP/k.db" -- "$BIN/streams" > "$TMP/o" 2> "$TMP/e"; rc=$?
    [ $rc -eq 0 ] && grep -q "profiled 3 kernel launches of 3 kernels" "$TMP/o" && grep -q "0 median times stored" "$TMP/o" \
        && ok || bad "emulate --profile-on-emulator (rc $rc): $(cat "$TMP/o" "$TMP/e")"
    "$ORR" emulate --gpu H100 -- "$BIN/streams" > "$TMP/out.txt" 2>&1; rc=$?
    [ $rc -eq 0 ] && ok || bad "emulate streams exit code $rc"
    for want in "iteration time" "emulation: 1 process used a GPU" "3 kernels (1 tagged" "Memory per GPU"; do
        grep -q "$want" "$TMP/out.txt" && ok || bad "emulate text lacks '$want'"
    done
    "$ORR" emulate --gpu H100 --json --trace-dir "$TMP/td" -- "$BIN/nccl" 4 > "$TMP/out.json" 2>"$TMP/err"; rc=$?
    [ $rc -eq 0 ] && ok || bad "emulate nccl --json exit code $rc"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d['config']; assert d['iteration_time_s'] > 0 and c['front_end'] == 'emulate' and c['gpus'] == 4 and c['collectives'] == 36" "$TMP/out.json" \
        && ok || bad "emulate JSON does not parse or has wrong values"
    [ "$(ls "$TMP/td" | grep -c '^trace-')" -eq 5 ] && ok || bad "--trace-dir does not keep the 5 traces"
    # --html as for predict (docs/report.md; tests/cli_html.sh renders such pages)
    "$ORR" emulate --gpu H100 --html "$TMP/e.html" -- "$BIN/nccl" 4 > "$TMP/o" 2>&1 && grep -q "HTML report written" "$TMP/o" \
        && grep -q 'id="timeline"' "$TMP/e.html" && grep -q '"coll_dp"' "$TMP/e.html" && grep -q '"rank":"rank0 pid' "$TMP/e.html" \
        && ok || bad "emulate --html: $(cat "$TMP/o")"
    "$ORR" emulate --trace-dir "$TMP/td" -- "$BIN/streams" > "$TMP/e" 2>&1; rc=$?
    [ $rc -eq 2 ] && grep -q "earlier run" "$TMP/e" && ok || bad "emulate into a used --trace-dir (rc $rc)"
    "$ORR" emulate --gpus 2 -- "$BIN/streams" > "$TMP/e" 2>&1; rc=$?
    [ $rc -eq 2 ] && grep -q -- "--gpus 2" "$TMP/e" && ok || bad "emulate --gpus 2 of a 1-process program (rc $rc)"
    # a CUDA graph capture of more records than a graph may hold stops the program, naming the limit
    "$ORR" emulate -- "$BIN/graphs" --overflow > "$TMP/e" 2>&1; rc=$?
    [ $rc -ne 0 ] && grep -q "capture recorded more than 1000000 operations (EMU_GRAPH_MAX_RECORDS" "$TMP/e" \
        && grep -q "exited with status 3" "$TMP/e" && ok || bad "graphs --overflow (rc $rc): $(cat "$TMP/e")"
    # --live (docs/emulate.md "Live time"): the program's own event timing of its GEMM loop, printed
    # by the second run, is the simulated time: within 2% of the predicted (whole-program) time
    "$ORR" emulate --live --json -- "$BIN/live" > "$TMP/live.json" 2> "$TMP/e"; rc=$?
    [ $rc -eq 0 ] && python3 - "$TMP/live.json" "$TMP/e" <<'PY' && ok || bad "emulate --live (rc $rc): $(cat "$TMP/e")"
import json, sys
pred = json.load(open(sys.argv[1]))['iteration_time_s'] * 1e3
lines = [l for l in open(sys.argv[2]) if l.startswith('elapsed_ms ')]
assert len(lines) == 1, lines  # the second run's output only (the first run's is discarded)
ms = float(lines[0].split()[1])
assert abs(ms - pred) <= 0.02 * pred, (ms, pred)
assert 'host time between the two records' not in open(sys.argv[2]).read()
PY
    "$ORR" emulate -- "$BIN/live" > "$TMP/o" 2> "$TMP/e"; rc=$?  # without --live: host time, with the warning
    [ $rc -eq 0 ] && grep -q "host time between the two records" "$TMP/e" && ok || bad "emulate live without --live (rc $rc)"
    # a program whose event records differ between the two runs is refused, naming --live
    for how in fewer more; do
        "$ORR" emulate --live -- "$BIN/live" --$how "$TMP/flag-$how" > "$TMP/o" 2> "$TMP/e"; rc=$?
        [ $rc -ne 0 ] && grep -q -- "--live: .*differ between runs" "$TMP/e" && ! grep -q "iteration time" "$TMP/o" \
            && ok || bad "emulate --live of a non-deterministic program ($how, rc $rc): $(cat "$TMP/e")"
    done
    "$ORR" emulate --live --profile-on-emulator --kernel-db "$TMP/k2.db" -- "$BIN/live" > "$TMP/e" 2>&1; rc=$?
    [ $rc -eq 2 ] && one_line "$TMP/e" && grep -q -- "--live: not with --profile" "$TMP/e" && ok || bad "emulate --live --profile (rc $rc)"
    # two processes without RANK (forked ranks of one communicator) cannot be told apart in the second run
    "$ORR" emulate --live -- "$BIN/nccl" 2 > "$TMP/o" 2> "$TMP/e"; rc=$?
    [ $rc -ne 0 ] && grep -q -- "--live: processes .* both have no RANK" "$TMP/e" && ok || bad "emulate --live of two processes without RANK (rc $rc): $(cat "$TMP/e")"
else
    echo "SKIP: $BIN/streams not built (no nvcc)"
fi

checks_done
