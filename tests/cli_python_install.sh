#!/bin/sh
# The Python package as a user installs it (issue 25's acceptance): `pip install ./python` into a
# fresh virtual environment (scikit-build-core, from PyPI, runs the CMake build of liborrery.so),
# then the README's Python example, run as written from the repository root, prints the same
# iteration time as `orrery predict` with the same inputs; and the installed package is the one
# imported (no ORRERY_LIBRARY, no source tree on the path). Slow (a whole build): plain build only.
# Usage: cli_python_install.sh ORRERY_BINARY SOURCE_DIR
. "$2/tests/check.sh"
python3 -m venv "$TMP/venv" || { echo "FAIL: python3 -m venv" >&2; exit 1; }
if "$TMP/venv/bin/pip" install -q --disable-pip-version-check "$SRC/python" > "$TMP/pip.log" 2>&1; then ok; else
    cat "$TMP/pip.log" >&2
    bad "pip install ./python"
    checks_done
    exit 1
fi
# the first ```python block of README.md
awk '/^```python/ {on = 1; next} on && /^```/ {exit} on' "$SRC/README.md" > "$TMP/example.py"
[ "$(grep -c . "$TMP/example.py")" -eq 5 ] && ok || bad "README's Python example is not five lines"
where=$(cd "$TMP" && env -u ORRERY_LIBRARY -u PYTHONPATH "$TMP/venv/bin/python" -c "import orrery; print(orrery.__file__)")
case "$where" in "$TMP/venv/"*) ok ;; *) bad "imported orrery from $where, not the venv" ;; esac
out=$(cd "$SRC" && env -u ORRERY_LIBRARY -u PYTHONPATH PYTHONDONTWRITEBYTECODE=1 "$TMP/venv/bin/python" "$TMP/example.py") \
    && ok || bad "the README example failed"
echo "$out"
# its first line says "iteration time X s"; `orrery predict` with the same inputs (the keywords of
# the example's first predict call as flags: k=v -> --k v, k=True -> --k, k=False -> --no-k, _ -> -)
# prints "iteration time X s" too
py_t=$(echo "$out" | sed -n '1s/.*iteration time \([0-9.]*\) s.*/\1/p')
flags=$(python3 - "$TMP/example.py" <<'PY'
import ast, sys
call = next(n for n in ast.walk(ast.parse(open(sys.argv[1]).read()))
            if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "predict")
out = []
for k in call.keywords:
    v, name = ast.literal_eval(k.value), k.arg.replace("_", "-")
    out += ["--" + name] if v is True else ["--no-" + name] if v is False else ["--" + name, str(v)]
print(" ".join(out))
PY
)
cli_t=$(cd "$SRC" && $ORR predict $flags | sed -n 's/^ *iteration time *\([0-9.]*\) s$/\1/p')
echo "README example: $py_t s; orrery predict $flags: $cli_t s"
[ -n "$py_t" ] && [ "$py_t" = "$cli_t" ] && ok || bad "iteration time: Python $py_t s vs orrery predict $cli_t s"
checks_done
