#!/bin/bash
# fetch-zlib.sh DIR — put Debian's zlib source, unpacked, in DIR/zlib-src (once; cached).
# Needs a deb-src entry: if apt has none for bookworm main, write
# /etc/apt/sources.list.d/txguard-bench-src.list (and say so). Root only for that step.
set -eu
dir=$1
[ -d "$dir/zlib-src" ] && [ -x "$dir/zlib-src/configure" ] && exit 0
mkdir -p "$dir"

if ! grep -rqsE '^[[:space:]]*(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	list=/etc/apt/sources.list.d/txguard-bench-src.list
	[ "$(id -u)" = 0 ] || { echo "fetch-zlib: no deb-src entry in apt's sources; as root, add one (e.g. $list)" >&2; exit 1; }
	. /etc/os-release
	# Same Signed-By as Debian's own entry, or apt refuses the conflicting pair.
	opt=
	key=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -f "$key" ] && opt="[signed-by=$key] "
	echo "deb-src ${opt}http://deb.debian.org/debian ${VERSION_CODENAME:-bookworm} main" >"$list"
	echo "fetch-zlib: wrote $list (a deb-src entry, needed by apt-get source); remove it when done" >&2
	apt-get update -qq
fi

tmp=$(mktemp -d "$dir/fetch.XXXXXX")
chmod 755 "$tmp"  # apt fetches as _apt when it can
(cd "$tmp" && apt-get source -qq --download-only zlib >/dev/null && dpkg-source -x --no-check ./zlib_*.dsc src >/dev/null)
rm -rf "$dir/zlib-src"
mv "$tmp/src" "$dir/zlib-src"
rm -rf "$tmp"
echo "fetch-zlib: zlib source in $dir/zlib-src" >&2
