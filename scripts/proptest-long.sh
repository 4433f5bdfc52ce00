#!/bin/sh
# proptest-long.sh [COUNT] [BUILD_DIR]: the journal's property and crash tests
# with a long count (default 5000 sequences, 2000 crashes). Seeded and
# reproducible: a failure prints its seed; rerun one with
#   TG_MUTATE=... TG_TREEHASH=... tests/journal/proptest.sh 1 SEED
set -eu
count=${1:-5000}
build=${2:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
ninja -C "$build" tests/journal/tg-mutate tests/journal/tg-treehash >/dev/null
export TG_MUTATE="$build/tests/journal/tg-mutate" TG_TREEHASH="$build/tests/journal/tg-treehash"
first=${TG_FIRST_SEED:-$(date +%s)}
echo "property test: $count sequences from seed $first"
sh "$src/tests/journal/proptest.sh" "$count" "$first"
echo "crash test: $((count * 2 / 5)) crashes from seed $first"
sh "$src/tests/journal/crashtest.sh" "$((count * 2 / 5))" "$first"
