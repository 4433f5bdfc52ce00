#!/bin/bash
# deb_test.sh — the Debian package round trip: `dpkg-buildpackage -us -uc
# -b` on a copy of the source tree builds a .deb with the binary, the policy
# as conffiles, the man pages, completions, schemas and the Python adapter;
# inside the throwaway arena (never on the machine itself) it is installed,
# the demo runs with the installed binary, then it is removed (the policy
# stays, as conffiles do) and purged (nothing stays).
#
# The package's meson build directory is kept in the build tree between runs
# (TXGUARD_DEB_MESON_BUILD, see debian/rules): only what changed is rebuilt.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "the arena needs root"
for tool in dpkg-buildpackage dh meson ninja; do
	command -v "$tool" >/dev/null || skip "$tool is missing (scripts/install-deps.sh installs it)"
done
D=$TXGUARD_BUILD_DIR/deb-test
rm -rf "$D/src" "$D"/*.deb "$D"/*.changes "$D"/*.buildinfo
mkdir -p "$D/src"
# The tree as it is (committed or not), without builds and VCS data.
(cd "$TXGUARD_SOURCE_DIR" && tar --exclude=.git --exclude='./build*' --exclude='./obj-*' \
	--exclude='./debian/txguard' --exclude='./debian/.debhelper' --exclude=__pycache__ -cf - .) |
	tar -xf - -C "$D/src" || fail "cannot copy the source tree"
if [ ! -f "$D/meson/build.ninja" ]; then
	meson setup "$D/meson" "$D/src" --prefix=/usr -Dtests=false -Dman=enabled >"$D/setup.log" 2>&1 ||
		fail "meson setup: $(tail -5 "$D/setup.log")"
fi
(cd "$D/src" && DEB_BUILD_OPTIONS="noautodbgsym nocheck" TXGUARD_DEB_MESON_BUILD="$D/meson" dpkg-buildpackage -us -uc -b) >"$D/build.log" 2>&1 ||
	fail "dpkg-buildpackage failed: $(tail -15 "$D/build.log")"
deb=$(ls "$D"/txguard_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "no .deb in $D: $(tail -5 "$D/build.log")"

# --- what the package holds (read, not installed) -------------------------------------
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$D/contents"
for f in /usr/bin/txguard /etc/txguard/policy.d/00-base.yaml /etc/txguard/policy.d/40-limits.yaml \
	/usr/share/man/man1/txguard.1.gz /usr/share/man/man5/txguard-policy.5.gz \
	/usr/share/bash-completion/completions/txguard /usr/share/zsh/site-functions/_txguard \
	/usr/share/txguard/schema/report.schema.json /usr/share/txguard/schema/log.schema.json \
	/usr/lib/python3/dist-packages/txguard_adapter/__init__.py \
	/usr/lib/python3/dist-packages/txguard_adapter/mcp.py /usr/share/doc/txguard/copyright; do
	grep -qx "$f" "$D/contents" || fail "the package lacks $f"
done
dpkg-deb -e "$deb" "$D/control"
npolicy=$(ls "$TXGUARD_SOURCE_DIR"/policy.d/*.yaml | wc -l)
assert_eq "every policy file is a conffile" "$npolicy" "$(grep -c '^/etc/txguard/policy.d/.*\.yaml$' "$D/control/conffiles")"
# Loaded at first use (core/base/lazy.h): no NEEDED entry for dh_shlibdeps to find.
for lib in libarchive13 libseccomp2 libyaml-0-2 libzstd1; do
	grep -q "^Depends:.*$lib" "$D/control/control" || fail "Depends lacks $lib: $(cat "$D/control/control")"
done

# --- install, use, remove, purge: in the arena ---------------------------------------------
out=$("$TXGUARD_SOURCE_DIR/scripts/arena" -- sh -c '
	set -u
	say() { echo "$*"; }
	dpkg -i "$1" >/tmp/i.log 2>&1 || { say "install failed: $(tail -3 /tmp/i.log)"; exit 1; }
	say "installed $(/usr/bin/txguard --version)"
	dpkg-query -W -f="\${Status}\n" txguard
	/usr/bin/txguard policy check >/dev/null 2>&1 && say "policy check ok"
	MANWIDTH=80 man txguard 2>/dev/null | grep -q "force-workspace" && say "man page ok"
	env -u TXGUARD /usr/bin/python3 -c "import txguard_adapter.mcp, txguard_adapter as t; print(\"adapter\", t.find_txguard())"
	cd / && HOME=/root sh "$2" /usr/bin/txguard >/tmp/demo.log 2>&1 && say "demo ok" ||
		say "demo failed: $(tail -5 /tmp/demo.log)"
	dpkg -r txguard >/dev/null 2>&1 || say "remove failed"
	[ -e /usr/bin/txguard ] && say "binary left after remove"
	[ -e /etc/txguard/policy.d/00-base.yaml ] && say "conffiles kept after remove"
	dpkg -P txguard >/dev/null 2>&1 || say "purge failed"
	[ -e /etc/txguard ] && say "left after purge: $(find /etc/txguard)"
	dpkg-query -W txguard >/dev/null 2>&1 && say "still known to dpkg"
	say "done"
' arena "$deb" "$TXGUARD_SOURCE_DIR/scripts/demo.sh" 2>&1)
rc=$?
if [ "$rc" = 77 ]; then
	case $out in
	*"no overlayfs"*) skip_kernel "the arena cannot run here: $out" ;;
	*) skip "the arena cannot run here: $out" ;;
	esac
fi
expected="installed txguard 0.1.0
install ok installed
policy check ok
man page ok
adapter /usr/bin/txguard
demo ok
conffiles kept after remove
done"
assert_eq "arena round trip" "$expected" "$out"
echo "deb: ok ($(basename "$deb"), $(du -k "$deb" | cut -f1) KiB)"
