# Shared by the tests/cli_*.sh scripts, which source it as `. "$2/tests/check.sh"`: their arguments
# ($1 the orrery binary, $2 the source tree) as ORR and SRC, a scratch directory TMP removed on exit,
# ok/bad to count checks (bad prints why), and checks_done, the closing summary line and exit status.
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
