#!/bin/sh
# quickstart.sh — on a fresh Debian 12 machine: install the dependencies,
# build txguard into ./build, and run the demo (scripts/demo.sh).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ ! -d build ]; then
	meson setup build -Dtests=false >/dev/null
fi
ninja -C build >/dev/null
echo "built: $(pwd)/build/cmd/txguard ($(build/cmd/txguard --version))"
exec scripts/demo.sh build/cmd/txguard
