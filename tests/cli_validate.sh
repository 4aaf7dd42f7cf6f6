#!/bin/sh
# `orrery validate`: every table of the published rows in data/validation (the repository's own copy
# when no folder is named), printed whole once; the folder named and --set give the same tables;
# bad arguments are refused naming them. Its own test, started first (CMakeLists.txt: COST), as the
# whole run is the longest single command of the suite under the sanitizers.
# Usage: cli_validate.sh ORRERY_BINARY SOURCE_DIR
. "$2/tests/check.sh"

# validate: the published Megatron rows, with a table per source
# (no argument: the repository's own copy, data/validation; and the folder named explicitly)
"$ORR" validate > "$TMP/v.txt" 2>&1 && grep -q "median |error|" "$TMP/v.txt" \
    && grep -q "GPT 462B" "$TMP/v.txt" && ok || bad "validate"
# the folder named, and --set: one table, as the whole run prints it (the first; the last, the kernels)
"$ORR" validate "$SRC/data/validation" --set megatron-h100 > "$TMP/v2.txt" 2>&1 \
    && sed '/^$/q' "$TMP/v.txt" | cmp -s - "$TMP/v2.txt" && ok || bad "validate DIR --set megatron-h100"
"$ORR" validate --set kernels-h100 > "$TMP/v3.txt" 2>&1 && sed -n '/^Kernels measured/,$p' "$TMP/v.txt" | cmp -s - "$TMP/v3.txt" \
    && ok || bad "validate --set kernels-h100"
[ "$("$ORR" validate --set list | wc -l)" -eq 13 ] && ok || bad "validate --set list"

# bad arguments (expect_error, tests/check.sh)
expect_error 'nowhere' validate "$TMP/nowhere"
expect_error 'validate: --set "bogus": expected one of megatron-h100' validate --set bogus
expect_error 'validate: unexpected argument "--sets"' validate --sets megatron-h100
expect_error 'validate: --set: expected a table' validate --set
# a name given twice prints its table once
"$ORR" validate --set megatron-h100 --set megatron-h100 > "$TMP/v4.txt" 2>&1 && cmp -s "$TMP/v2.txt" "$TMP/v4.txt" \
    && ok || bad "validate --set twice"

checks_done
