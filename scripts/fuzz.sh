#!/bin/sh
# fuzz.sh BUILD SECONDS [JOBS] - runs every libFuzzer harness of BUILD (built by make fuzz from fuzz/*.c)
# for SECONDS each, from its seed corpus in fuzz/corpus/NAME (read only) and a working corpus in
# BUILD/corpus/NAME, under ASan and UBSan, with a 10 s per-input timeout and a 2 GiB memory limit.
# JOBS harnesses run at once (default: the number of processors), each on one core, so every
# harness still gets SECONDS of its own. Prints each target's executions and coverage, in the
# harnesses' order, and exits non-zero on any finding (the reproducer stays in BUILD/findings/NAME).
# Run by make test (30 s each) and make fuzz (FUZZ_SECONDS).
set -u
build=${1:?usage: fuzz.sh BUILD SECONDS [JOBS]}
secs=${2:-30}
jobs=${3:-$(nproc 2>/dev/null || echo 1)}
src=$(cd "$(dirname "$0")/.." && pwd)

# run NAME BIN: one harness; its exit status goes to BUILD/fuzz_NAME.rc
run() {
    work="$build/corpus/$1" finds="$build/findings/$1"
    mkdir -p "$work" "$finds"
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$2" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$finds/" "$work" "$src/fuzz/corpus/$1" > "$build/fuzz_$1.log" 2>&1
    echo $? > "$build/fuzz_$1.rc"
}

names=""
running=0
for bin in "$build"/fuzz_*; do
    [ -x "$bin" ] && [ -f "$bin" ] || continue
    name=${bin##*/fuzz_}
    names="$names $name"
    rm -f "$build/fuzz_$name.rc"
    run "$name" "$bin" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait
        running=0
    fi
done
wait

fail=0 ran=0
for name in $names; do
    log="$build/fuzz_$name.log"
    rc=$(cat "$build/fuzz_$name.rc" 2>/dev/null || echo "?")
    ran=$((ran + 1))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    if [ "$rc" = 0 ]; then
        echo "fuzz $name: ${execs:-?} executions in ${secs} s, ${cov:-cov: ?}, no finding"
    else
        fail=$((fail + 1))
        echo "fuzz $name: FINDING (exit $rc), reproducer in $build/findings/$name; log $log:"
        grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -8
    fi
done
echo "$((ran - fail)) passed, $fail failed"
[ "$ran" -gt 0 ] && [ "$fail" -eq 0 ]
