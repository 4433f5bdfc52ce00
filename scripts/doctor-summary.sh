#!/bin/sh
# doctor-summary.sh — build txguard into build-test (the directory
# scripts/test.sh uses next) and print `txguard doctor` with the kernel
# facts the tests branch on, so a CI log shows them next to the results.
set -eu
cd "$(dirname "$0")/.."
[ -d build-test ] || meson setup build-test -Dtests=true >/dev/null
ninja -C build-test cmd/txguard >/dev/null
echo "== kernel: $(uname -srm)"
build-test/cmd/txguard doctor || true
fs=$(grep -wo -e overlay -e btrfs -e xfs /proc/filesystems | sort -u | tr '\n' ' ')
echo "filesystems (of those the tests ask for): ${fs:-none}"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo "cgroup: v2"; else echo "cgroup: v1 or hybrid"; fi
echo "CPUs: $(nproc)"
