#!/bin/sh
# The Python package's tests (python/tests, pytest): `import orrery` from the source tree's python/
# over this build's liborrery.so (ORRERY_LIBRARY), compared with this build's `orrery predict --json`
# (ORRERY_BIN). pytest comes from BUILD/py-venv, made here if missing (scripts/setup-python.sh,
# idempotent; `make test` runs it first). Not under the sanitizers: Python cannot load an ASan
# library (tests/test_bind.c checks the same entry points there).
# Usage: cli_python.sh ORRERY_BINARY SOURCE_DIR
. "$2/tests/check.sh"
BUILD=$(cd "$(dirname "$ORR")" && pwd)
sh "$SRC/scripts/setup-python.sh" "$BUILD/py-venv" || { echo "FAIL: scripts/setup-python.sh $BUILD/py-venv" >&2; exit 1; }
cd "$TMP" # pytest writes nothing into the source tree (no cache, bytecode in TMP)
PYTHONPATH="$SRC/python" PYTHONPYCACHEPREFIX="$TMP/pycache" ORRERY_LIBRARY="$BUILD/liborrery.so" ORRERY_BIN="$ORR" \
    "$BUILD/py-venv/bin/python" -m pytest -q -p no:cacheprovider "$SRC/python/tests"
