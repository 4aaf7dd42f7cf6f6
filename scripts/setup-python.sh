#!/bin/sh
# setup-python.sh VENV - a virtual environment with pytest (and pandas) for the Python package's tests
# (tests/cli_python.sh runs python/tests with it, against the source tree's python/orrery and the
# build's liborrery.so). Idempotent: does nothing when VENV already holds the pinned version.
set -eu
venv=${1:?usage: setup-python.sh VENV}
stamp="$venv/.orrery-pytest-9.0.3"
if [ ! -f "$stamp" ]; then
    echo "setup-python: installing pytest 9.0.3 into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check pytest==9.0.3
    touch "$stamp"
fi
# pandas for SearchResult.to_pandas (its own stamp, so a venv made before it gets it too)
stamp="$venv/.orrery-pandas-2.3.3"
if [ ! -f "$stamp" ]; then
    echo "setup-python: installing pandas 2.3.3 into $venv"
    "$venv/bin/pip" install -q --disable-pip-version-check pandas==2.3.3
    touch "$stamp"
fi
