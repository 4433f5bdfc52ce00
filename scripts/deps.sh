#!/bin/bash
# deps.sh — the include graph of core/ and cmd/, module by module, checked
# against the layers of docs/architecture.md.
#
# Usage: scripts/deps.sh [--quiet]
#
# A module is a folder of core/ (base, trace, ...) or cmd/. The rules:
#   1. an include points down: the included module's layer is below the
#      includer's (modules on one layer do not include each other);
#   2. another module's code includes only that module's public header,
#      <module>/<module>.h (base is a toolbox: all its headers are public);
#   3. a bare include ("x.h") names a header of the includer's own folder
#      (or config.h, the build's own);
#   4. every folder of core/ has a layer below.
# Rule 1 makes a circle impossible. Prints the graph (module: what it
# includes), then every breach; exits 1 when there is one.
set -u
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
QUIET=0
[ "${1:-}" = --quiet ] && QUIET=1

# Bottom first. Keep in step with docs/architecture.md.
declare -A LAYER=(
	[base]=0
	[trace]=1 [policy]=1 [journal]=1 [landlock]=1
	[history]=2 [audit]=2
	[txn]=3 [proxy]=3
	[cmd]=4
)

bad=0
breach() { echo "deps: $*"; bad=1; }

for d in core/*/; do
	m=$(basename "$d")
	[ -n "${LAYER[$m]:-}" ] || breach "core/$m has no layer in scripts/deps.sh (rule 4)"
done

declare -A EDGES=()
# One pass over every file (no process per file): "FILE:INCLUDED".
files=$(git ls-files 'core/*.c' 'core/*.h' 'cmd/*.c' 'cmd/*.h' 2>/dev/null || find core cmd -name '*.[ch]')
while IFS=: read -r f inc; do
	case $f in
	core/*/*) from=${f#core/}; from=${from%%/*} ;;
	cmd/*) from=cmd ;;
	*) continue ;;
	esac
	dir=${f%/*}
	case $inc in
	*/*)
		to=${inc%%/*}
		[ -n "${LAYER[$to]:-}" ] || { breach "$f includes \"$inc\": no module $to"; continue; }
		[ "$to" = "$from" ] && { breach "$f includes its own module's \"$inc\" by folder"; continue; }
		EDGES["$from $to"]=1
		[ "${LAYER[$to]}" -lt "${LAYER[$from]}" ] ||
			breach "$f ($from, layer ${LAYER[$from]}) includes \"$inc\" ($to, layer ${LAYER[$to]}): not below (rule 1)"
		[ "$to" = base ] || [ "$inc" = "$to/$to.h" ] ||
			breach "$f includes \"$inc\": outside $to only $to/$to.h (rule 2)"
		;;
	config.h) ;;
	*) [ -e "$dir/$inc" ] || breach "$f includes \"$inc\", which is not in $dir (rule 3)" ;;
	esac
done < <(printf '%s\n' $files | xargs sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/; T; F; p' |
	sed -n 'N; s/\n/:/p')

if [ "$QUIET" = 0 ]; then
	for m in $(for k in "${!LAYER[@]}"; do echo "${LAYER[$k]} $k"; done | sort -n | cut -d' ' -f2); do
		deps=$(for e in "${!EDGES[@]}"; do [ "${e%% *}" = "$m" ] && echo "${e#* }"; done | sort | tr '\n' ' ')
		printf '%-9s layer %s: %s\n' "$m" "${LAYER[$m]}" "${deps:-(nothing)}"
	done
fi
[ "$bad" = 0 ] && { [ "$QUIET" = 1 ] || echo "deps: every include points down; no circle"; }
exit $bad
