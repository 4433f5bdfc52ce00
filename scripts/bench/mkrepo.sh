#!/bin/sh
# mkrepo.sh DIR — a git repository of real source files, made locally (no
# network), for bench.sh's session and bigchange sections:
#   rev "old": /usr/include and Python's standard library as they are here;
#   rev "new": many commits later: half the files edited, a tenth removed,
#   2,000 added. `git checkout old` from "new" changes thousands of files.
# Written to DIR.partial and renamed at the end.
set -eu
dir=$1
[ -d "$dir" ] && exit 0
rm -rf "$dir.partial"
mkdir -p "$dir.partial"
cd "$dir.partial"
git init -q -b main .
git config user.email bench@txguard.invalid
git config user.name bench
git config gc.auto 0
mkdir -p include lib
cp -a /usr/include/. include/
find /usr/lib/python3*/ -maxdepth 2 -name '*.py' -exec cp -t lib/ {} + 2>/dev/null || true
git add -A
git commit -q -m old
git tag old
# Twenty commits of edits, removals and additions.
i=0
find include lib -type f | sort >"$dir.files"
while [ $i -lt 20 ]; do
	awk -v k="$i" 'NR % 40 == k * 2 % 40 || NR % 40 == (k * 2 + 1) % 40' "$dir.files" |
		while read -r f; do [ -f "$f" ] && printf '/* edit %s */\n' "$i" >>"$f"; done
	awk -v k="$i" 'NR % 200 == k * 10 % 200' "$dir.files" | xargs -r rm -f
	mkdir -p "new/$i"
	j=0
	while [ $j -lt 100 ]; do printf 'int new_%s_%s;\n' "$i" "$j" >"new/$i/n$j.c"; j=$((j + 1)); done
	git add -A
	git commit -q -m "step $i"
	i=$((i + 1))
done
git tag new
rm -f "$dir.files"
cd /
mv "$dir.partial" "$dir"
