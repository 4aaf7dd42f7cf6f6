# Shared by tests/cli_emulate_torch*.sh (sourced after tests/check.sh): PY, the venv's python (the
# test fails when scripts/setup-torch.sh has not made it), STEP, and helpers over the JSON report and
# the programs' ORRERY_RESULT lines.
PY="$(dirname "$ORR")/torch-venv/bin/python"
STEP="$SRC/tests/emu/torch/step.py"
if [ ! -x "$PY" ]; then
    echo "FAIL: $PY missing: run scripts/setup-torch.sh $(dirname "$ORR")/torch-venv (make test does)" >&2
    exit 1
fi
# json FILE EXPR: prints a value of the JSON report (EXPR over d, the parsed report)
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# agree EMULATE_JSON PREDICT_JSON WHAT: iteration times within 15%; executed FLOPs per iteration (the
# emulator's from GEMM shapes and PyTorch's FLOP formulas, predict's from the model) within 3%
agree() {
    e=$(json "$1" "d['iteration_time_s']")
    p=$(json "$2" "d['iteration_time_s']")
    echo "$3: emulate $e s, predict $p s"
    python3 -c "import sys; e, p = map(float, sys.argv[1:]); sys.exit(0 if p > 0 and abs(e - p) <= 0.15 * p else 1)" \
        "$e" "$p" && ok || bad "$3: emulate $e s vs predict $p s (more than 15% apart)"
    e=$(json "$1" "d['hw_flops_per_iteration']")
    p=$(json "$2" "d['hw_flops_per_iteration']")
    python3 -c "import sys; e, p = map(float, sys.argv[1:]); sys.exit(0 if p > 0 and abs(e - p) <= 0.03 * p else 1)" \
        "$e" "$p" && ok || bad "$3: executed FLOPs per iteration: emulate $e vs predict $p (more than 3% apart)"
}
# result FILE KEY: the largest value of KEY over the program's ORRERY_RESULT lines (one per rank; the
# ranks' allocators need not end alike, and Orrery's peak is the largest over ranks)
result() { grep ORRERY_RESULT "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | sort -n | tail -1; }
# results FILE: the program's ORRERY_RESULT records one a line, split at each ORRERY_RESULT rather than
# by line (ranks that share the stream can end a line inside another's)
results() { python3 -c "import sys; print('\n'.join('ORRERY_RESULT' + r.split(chr(10))[0].rstrip() for r in open(sys.argv[1]).read().split('ORRERY_RESULT')[1:]))" "$1"; }
