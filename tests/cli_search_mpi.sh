#!/bin/sh
# mpirun -n 3 orrery search (tools/orrery_mpi.c): the same JSON (wall time aside: best, trial table,
# every count) as -j 1 and -j 2, for exhaustive and CMA-ES searches. Where MPI is not installed the
# check is skipped; where orrery was built without MPI (the sanitizer build), mpirun must get the
# error that says so.
. "$2/tests/check.sh"
B="--model gpt3-125m --gpu A100-SXM4-80GB --gpus 8 --gbs 16 --recompute none,full --json --quiet"
if ! command -v mpirun > /dev/null; then
    echo "mpirun not found: MPI check skipped"
    checks_done
    exit $?
fi
MPI="mpirun --allow-run-as-root --oversubscribe -n 3"
if ! $MPI "$ORR" search $B > "$TMP/m" 2> "$TMP/e"; then
    grep -q "built without MPI" "$TMP/e" && ok || bad "mpirun: $(cat "$TMP/e")"
    checks_done
    exit $?
fi
for extra in "" "--strategy cmaes --budget 20 --seed 5"; do
    $MPI "$ORR" search $B $extra | grep -v '"wall_s"' > "$TMP/m3"
    "$ORR" search $B $extra -j 1 | grep -v '"wall_s"' > "$TMP/j1"
    "$ORR" search $B $extra -j 2 | grep -v '"wall_s"' > "$TMP/j2"
    [ -s "$TMP/j1" ] && grep -q '"best": {"index"' "$TMP/j1" && cmp -s "$TMP/m3" "$TMP/j1" && cmp -s "$TMP/j2" "$TMP/j1" \
        && ok || bad "search $extra: mpirun -n 3, -j 1 and -j 2 differ"
done
# a user error: every rank refuses it, mpirun exits non-zero
$MPI "$ORR" search $B --tp 2,x > "$TMP/o" 2>&1 && bad "mpirun with a bad flag succeeded" || ok
checks_done
