#!/bin/sh
# fuzz.sh BUILD SECONDS - runs every libFuzzer harness of BUILD (built by make fuzz from fuzz/*.c)
# for SECONDS each, from its seed corpus in fuzz/corpus/NAME (read only) and a working corpus in
# BUILD/corpus/NAME, under ASan and UBSan, with a 10 s per-input timeout and a 2 GiB memory limit.
# Prints each target's executions and coverage, and exits non-zero on any finding (the reproducer
# stays in BUILD/findings/NAME). Run by make test (30 s each) and make fuzz (FUZZ_SECONDS).
set -u
build=${1:?usage: fuzz.sh BUILD SECONDS}
secs=${2:-30}
src=$(cd "$(dirname "$0")/.." && pwd)
fail=0 ran=0
for bin in "$build"/fuzz_*; do
    [ -x "$bin" ] || continue
    name=${bin##*/fuzz_}
    work="$build/corpus/$name" finds="$build/findings/$name"
    mkdir -p "$work" "$finds"
    log="$build/fuzz_$name.log"
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$finds/" "$work" "$src/fuzz/corpus/$name" > "$log" 2>&1
    rc=$?
    ran=$((ran + 1))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    if [ "$rc" -eq 0 ]; then
        echo "fuzz $name: ${execs:-?} executions in ${secs} s, ${cov:-cov: ?}, no finding"
    else
        fail=$((fail + 1))
        echo "fuzz $name: FINDING (exit $rc), reproducer in $finds; log $log:"
        grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -8
    fi
done
echo "$((ran - fail)) passed, $fail failed"
[ "$ran" -gt 0 ] && [ "$fail" -eq 0 ]
