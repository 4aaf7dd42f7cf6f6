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

checks_done
