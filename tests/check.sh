# Shared by the tests/cli_*.sh scripts, which source it as `. "$2/tests/check.sh"`: their arguments
# ($1 the orrery binary, $2 the source tree) as ORR and SRC, a scratch directory TMP removed on exit,
# ok/bad to count checks (bad prints why), expect_error for bad input, and checks_done, the closing
# summary line and exit status.
ORR="$1"
SRC="$2"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
checks_done() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
# expect_error WANT ARGS...: orrery ARGS is bad input: exit 2, exactly one line on stderr, naming what is wrong
expect_error() { # expected-substring, then the arguments
    want="$1"
    shift
    "$ORR" "$@" > "$TMP/o.txt" 2> "$TMP/e.txt"
    rc=$?
    lines=$(wc -l < "$TMP/e.txt")
    if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -q -- "$want" "$TMP/e.txt"; then ok; else
        bad "orrery $* -> rc $rc, $lines lines: $(cat "$TMP/e.txt") (wanted '$want')"
    fi
}
