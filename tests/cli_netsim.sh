#!/bin/sh
# Command-line tests of `orrery netsim`: the k=4 HPCC scenario of data/validation/ns3 writes an
# FCT file of 12 lines in the reference format into --out DIR and a summary; two runs give identical
# FCT files; bad input gives one line on stderr naming the file, line and field, exit code 2.
# Usage: cli_netsim.sh ORRERY_BINARY SOURCE_DIR
. "$2/tests/check.sh"
V="$SRC/data/validation/ns3"

mkdir "$TMP/a" "$TMP/b"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$V/config_hpcc.txt" --out "$TMP/a" > "$TMP/out.txt" 2>&1
[ $? -eq 0 ] && ok || bad "netsim exit code"
for want in "flows 12 finished of 12" "events/s" "slowdown" "p99"; do
    grep -q "$want" "$TMP/out.txt" && ok || bad "summary lacks '$want'"
done
[ "$(wc -l < "$TMP/a/out_hpcc_fct.txt")" -eq 12 ] && ok || bad "FCT file should have 12 lines"
grep -q "^0b000801 0b000001 10000 100 1000000 2000000000 [0-9]* 96640$" "$TMP/a/out_hpcc_fct.txt" && ok || bad "FCT line format"
[ -f "$TMP/a/out_hpcc_pfc.txt" ] && ok || bad "PFC file written"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$V/config_hpcc.txt" --out "$TMP/b" > /dev/null 2>&1
cmp -s "$TMP/a/out_hpcc_fct.txt" "$TMP/b/out_hpcc_fct.txt" && ok || bad "FCT files differ between identical runs"

# bad input: one line naming file, line and field; exit 2
printf '2\n8 0 3 100 1000000 2.0\n9 0 3 100 lots 2.0\n' > "$TMP/flows.txt"
"$ORR" netsim "$V/topo_k4.txt" "$TMP/flows.txt" "$V/config_hpcc.txt" --out "$TMP/a" > /dev/null 2> "$TMP/err.txt"
[ $? -eq 2 ] && ok || bad "bad flow exit code"
[ "$(wc -l < "$TMP/err.txt")" -eq 1 ] && grep -q "flows.txt:3: size_bytes" "$TMP/err.txt" && ok || bad "bad flow message: $(cat "$TMP/err.txt")"
printf 'CC_MODE 3\nU_TARGET high\n' > "$TMP/cfg.txt"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$TMP/cfg.txt" > /dev/null 2> "$TMP/err.txt"
[ $? -eq 2 ] && ok || bad "bad config exit code"
grep -q "cfg.txt:2: U_TARGET" "$TMP/err.txt" && ok || bad "bad config message: $(cat "$TMP/err.txt")"
printf 'CC_MODE 3\nFANCY_KNOB 1\n' > "$TMP/cfg.txt"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$TMP/cfg.txt" --out "$TMP/a" > /dev/null 2> "$TMP/err.txt"
[ $? -eq 0 ] && grep -q "cfg.txt:2: unknown key FANCY_KNOB" "$TMP/err.txt" && ok || bad "unknown key warning"
"$ORR" netsim "$V/topo_k4.txt" > /dev/null 2>&1
[ $? -eq 2 ] && ok || bad "missing arguments exit code"

# Wormhole flags: the summary's line, --no-accel, and bad values named (exit 2)
mkdir -p "$TMP/c" "$TMP/d"
grep -q "^wormhole (theta 0.05, window 2000 samples): 1 partitions formed" "$TMP/out.txt" && ok || bad "wormhole line"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$V/config_hpcc.txt" --no-accel --out "$TMP/c" > "$TMP/off.txt" 2>&1
grep -q "^wormhole: off (--no-accel)" "$TMP/off.txt" && ok || bad "--no-accel line"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$V/config_hpcc.txt" --ss-window 200 --ss-theta 0.1 --out "$TMP/d" > "$TMP/w.txt" 2>&1
grep -q "^wormhole (theta 0.1, window 200 samples)" "$TMP/w.txt" && ok || bad "--ss-window/--ss-theta: $(cat "$TMP/w.txt")"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$V/config_hpcc.txt" --ss-theta 1.5 --out "$TMP/d" > /dev/null 2> "$TMP/err.txt"
[ $? -eq 2 ] && grep -q -- "--ss-theta 1.5: expected a fraction in (0, 1)" "$TMP/err.txt" && ok || bad "bad --ss-theta"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$V/config_hpcc.txt" --ss-window 3 --out "$TMP/d" > /dev/null 2> "$TMP/err.txt"
[ $? -eq 2 ] && grep -q -- "--ss-window 3: expected a count of rate samples from 4" "$TMP/err.txt" && ok || bad "bad --ss-window"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$V/config_hpcc.txt" --out "$TMP/d" --ss-window > /dev/null 2> "$TMP/err.txt"
[ $? -eq 2 ] && grep -q -- "--ss-window needs a value" "$TMP/err.txt" && ok || bad "--ss-window without value"

# the memo (docs/netsim.md "Memoization"): its line, --no-memo, --memo FILE twice (the second run
# reads the first's entries and writes the same FCT file), and refusals named (exit 2)
W="$SRC/data/validation/wormhole"
mkdir -p "$TMP/m1" "$TMP/m2"
grep -q "^memo: 0 hits" "$TMP/out.txt" && ok || bad "memo line (HPCC: nothing eligible)"
grep -q "^memo:" "$TMP/off.txt" && bad "a memo line under --no-accel" || ok
"$ORR" netsim "$V/topo_k4.txt" "$W/flows_k4_pairs_steps.txt" "$V/config_dcqcn.txt" --memo "$TMP/memo.db" --out "$TMP/m1" > "$TMP/m1.txt" 2>&1
[ $? -eq 0 ] && grep -q "^memo: 61 hits (7 following a recording), 1 misses, 3 not eligible, 1 recorded, 0 disturbed, 0 aborted, 0 noisy; 0 loaded, 1 saved" "$TMP/m1.txt" && ok || bad "--memo first run: $(grep memo "$TMP/m1.txt")"
"$ORR" netsim "$V/topo_k4.txt" "$W/flows_k4_pairs_steps.txt" "$V/config_dcqcn.txt" --memo "$TMP/memo.db" --out "$TMP/m2" > "$TMP/m2.txt" 2>&1
[ $? -eq 0 ] && grep -q "^memo: 62 hits (0 following a recording), 0 misses, 3 not eligible, 0 recorded, 0 disturbed, 0 aborted, 0 noisy; 1 loaded, 0 saved" "$TMP/m2.txt" && ok || bad "--memo second run: $(grep memo "$TMP/m2.txt")"
cmp -s "$TMP/m1/out_dcqcn_fct.txt" "$TMP/m2/out_dcqcn_fct.txt" && ok || bad "--memo: the second run's FCT file differs"
"$ORR" netsim "$V/topo_k4.txt" "$W/flows_k4_pairs_steps.txt" "$V/config_dcqcn.txt" --no-memo --out "$TMP/m1" > "$TMP/nm.txt" 2>&1
grep -q "^memo: off (--no-memo)" "$TMP/nm.txt" && ok || bad "--no-memo line"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$V/config_dcqcn.txt" --memo > /dev/null 2> "$TMP/err.txt"
[ $? -eq 2 ] && grep -q -- "--memo needs a file name" "$TMP/err.txt" && ok || bad "--memo without value"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$V/config_dcqcn.txt" --no-accel --memo "$TMP/memo.db" > /dev/null 2> "$TMP/err.txt"
[ $? -eq 2 ] && grep -q -- "--memo $TMP/memo.db: the memo is off" "$TMP/err.txt" && ok || bad "--memo with --no-accel"
printf 'not a database, not at all; a text file long enough to be read as one' > "$TMP/bad.db"
"$ORR" netsim "$V/topo_k4.txt" "$V/flows_k4.txt" "$V/config_dcqcn.txt" --memo "$TMP/bad.db" > /dev/null 2> "$TMP/err.txt"
[ $? -ne 0 ] && grep -q -- "--memo $TMP/bad.db: not a memo database" "$TMP/err.txt" && ok || bad "--memo on a text file: $(cat "$TMP/err.txt")"

checks_done
