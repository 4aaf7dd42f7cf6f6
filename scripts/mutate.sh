#!/bin/sh
# mutate.sh - mutation testing (make mutate; issue 26): applies each mutant of scripts/mutants.txt
# to a copy of the repository, rebuilds, runs the plain test suite (ctest, without the PyTorch
# emulation test), and prints which tests killed it. A mutant no test kills is a SURVIVOR: either a
# test is missing, or docs/mutate.md says why it cannot be caught. Takes a few minutes per mutant
# on 2 cores (incremental builds); MUTANTS=name1,name2 runs a subset. Never touches this work tree.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
work=${MUTATE_DIR:-/tmp/orrery-mutate}
rm -rf "$work"
mkdir -p "$work/repo"
(cd "$src" && git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) \
    | tar -xf - -C "$work/repo"
cd "$work/repo"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j "$(nproc)" > /dev/null
echo "baseline: $(cd build && ctest -j "$(nproc)" -E torch 2>&1 | grep 'tests passed')"
killed=0 survived=0 stale=0
grep -v '^#' "$src/scripts/mutants.txt" | grep -v '^ *$' > "$work/list"
while IFS= read -r line; do
    name=$(printf '%s' "$line" | awk -F ' \\|\\|\\| ' '{print $1}')
    if [ -n "${MUTANTS:-}" ] && ! printf ',%s,' "$MUTANTS" | grep -q ",$name,"; then continue; fi
    file=$(printf '%s' "$line" | awk -F ' \\|\\|\\| ' '{print $2}')
    cp "$file" "$work/orig"
    if ! python3 - "$file" "$line" <<'PY'
import sys
path, line = sys.argv[1], sys.argv[2]
name, f, count, old, new = [x.strip() for x in line.split(" ||| ")]
text = open(path).read()
if text.count(old) != int(count):
    print("  stale: %s occurs %d times in %s, expected %s" % (old, text.count(old), f, count))
    sys.exit(1)
open(path, "w").write(text.replace(old, new))
PY
    then
        stale=$((stale + 1))
        echo "$name: STALE (the text moved: update scripts/mutants.txt)"
        continue
    fi
    if ! cmake --build build -j "$(nproc)" > "$work/build.log" 2>&1; then
        echo "$name: killed by the compiler"
        killed=$((killed + 1))
    else
        failed=$(cd build && ctest -j "$(nproc)" -E torch --timeout 600 2>&1 | sed -n 's/^[[:space:]]*[0-9]* - \([a-z_0-9]*\) (.*/\1/p' | tr '\n' ' ')
        if [ -n "$failed" ]; then
            echo "$name: killed by $failed"
            killed=$((killed + 1))
        else
            echo "$name: SURVIVED"
            survived=$((survived + 1))
        fi
    fi
    cp "$work/orig" "$file"
done < "$work/list"
echo "mutants: $killed killed, $survived survived, $stale stale"
[ "$stale" -eq 0 ]
