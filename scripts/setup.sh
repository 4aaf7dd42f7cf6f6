#!/bin/sh
# Installs the Debian packages Orrery needs to build and test. Idempotent: does nothing when
# everything is already there. Run as root on Debian 12 (the Makefile calls it).
set -eu
PKGS="build-essential cmake ninja-build pkg-config libyaml-dev libsqlite3-dev libjansson-dev liblapacke-dev libnauty2-dev libopenmpi-dev openmpi-bin python3 python3-venv python3-dev clang libclang-rt-14-dev chromium"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing$missing"
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: packages missing ($missing) and not root; install them or run as root" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends $missing
fi
