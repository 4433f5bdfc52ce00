# common.sh — sourced by shell tests. Keep it small and boring.
set -eu

: "${TXGUARD:?run through meson test (TXGUARD unset)}"
TXGUARD_SOURCE_DIR=${TXGUARD_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

# skip MESSAGE: exit 77, unless TXGUARD_TESTS_MUST_WORK=1 makes it a failure
# (bubblewrap's BWRAP_MUST_WORK).
skip() {
	if [ "${TXGUARD_TESTS_MUST_WORK:-0}" = 1 ]; then
		echo "FAIL (skip not allowed here): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

# skip_kernel MESSAGE: exit 77 whatever TXGUARD_TESTS_MUST_WORK says. For a
# skip that only describes this kernel or machine (no IA-32 emulation, no
# overlayfs, a Landlock ABI too old for the case, no second CPU): machines
# of one kind differ there, and CI must pass on all of them. A missing
# ptrace or seccomp is not such a skip: that is skip().
skip_kernel() {
	echo "SKIP (this kernel): $*" >&2
	exit 77
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	if [ "$2" != "$3" ]; then
		fail "$1: expected '$2', got '$3'"
	fi
}

# tg_tmpdir_outside: tg_tmpdir outside every place the default policy makes
# writable (/tmp, /var/tmp, /dev/shm), for tests whose "outside the
# workspace" must really be read-only: the build dir, unless the project was
# cloned under one of those (CI may), else /var/lib (as root).
tg_tmpdir_outside() {
	_base=$(cd "${TXGUARD_BUILD_DIR:?}" && pwd -P)
	case $_base/ in
	/tmp/* | /var/tmp/* | /dev/shm/*)
		[ "$(id -u)" = 0 ] || skip "the build dir is in a writable place (/tmp...) and /var/lib needs root"
		_base=/var/lib ;;
	esac
	TMPDIR=$_base tg_tmpdir
}

# A fresh temporary directory, removed when the test exits. txguard's
# default state dirs (one per workspace) and its policy cache go under it
# too, not into the user's ~/.local/state/txguard. The directory must
# exist: the cache is only kept below a state home that does. A test that
# runs txguard as another user passes that user's HOME and
# `env -u XDG_STATE_HOME` (TG_TMP is 0700).
tg_tmpdir() {
	TG_TMP=$(mktemp -d "${TMPDIR:-/tmp}/txguard-test.XXXXXX")
	trap 'rm -rf "$TG_TMP"' EXIT
	if [ -z "${XDG_STATE_HOME:-}" ]; then
		XDG_STATE_HOME=$TG_TMP/.state
		mkdir "$XDG_STATE_HOME"
		export XDG_STATE_HOME
	fi
}

# tg_int80_expect BARE_EXIT: the exit codes (space-separated) that a traced
# `probe int80 DIR` may end with, given how the same probe ended with no
# tracer at all. The expectation comes from the kernel, never assumed:
#   0..125  the kernel ran the call (IA-32 emulation on): the arch gate must
#           kill the traced run by SIGSYS (159) before the call runs;
#   139     the kernel refuses int 0x80 (IA-32 emulation off: the CPU fault
#           comes first, SIGSEGV): seccomp never sees the call, and the
#           traced run must die too, by that SIGSEGV or by SIGSYS.
# Any other bare exit means the probe itself is broken: status 1.
tg_int80_expect() {
	case $1 in
	139) echo "139 159" ;;
	[0-9] | [0-9][0-9] | 1[01][0-9] | 12[0-5]) echo 159 ;;
	*) return 1 ;;
	esac
}

# tg_int80_kernel BARE_EXIT: one word for the log, what the kernel did.
tg_int80_kernel() {
	if [ "$1" = 139 ]; then echo "refuses int 0x80 (IA-32 emulation off)"; else echo "runs int 0x80 (IA-32 emulation on)"; fi
}

# tg_need_arena: return when scripts/arena works here; otherwise skip with
# the reason. No overlayfs describes the kernel (skip_kernel); a machine
# where we are not root and have no user namespaces, or any other refusal,
# is a skip that TXGUARD_TESTS_MUST_WORK=1 turns into a failure.
tg_need_arena() {
	_rc=0
	_err=$("$TXGUARD_SOURCE_DIR/scripts/arena" true 2>&1) || _rc=$?
	case $_rc in
	0) return 0 ;;
	77)
		case $_err in
		*"no overlayfs"*) skip_kernel "$_err" ;;
		*) skip "$_err" ;;
		esac ;;
	*) fail "scripts/arena does not work (exit $_rc): $_err" ;;
	esac
}

# tg_cannot_run ERRFILE: a preflight `txguard -- true` failed with the
# messages in ERRFILE; skip with what stops it. A kernel without Landlock is
# a kernel fact (the default policy's deny_read needs Landlock, and txguard
# refuses to run it unenforced, by design): skip_kernel. Anything else, such
# as no ptrace or no seccomp, is a skip that MUST_WORK turns into a failure.
tg_cannot_run() {
	if "$TXGUARD" doctor --json 2>/dev/null | grep -q '"landlock_abi":0[,}]' && grep -qi landlock "$1"; then
		skip_kernel "no Landlock in this kernel, and the policy needs it: $(head -c 300 "$1")"
	fi
	skip "txguard cannot run a command here: $(head -c 300 "$1")"
}

# tg_make_wheel FILE NAME VALUE: a pure-Python wheel NAME-1.0 at FILE whose
# package sets VALUE, for offline `pip install --no-index` (needs python3).
tg_make_wheel() {
	python3 - "$1" "$2" "$3" <<'EOP'
import sys, zipfile
path, name, value = sys.argv[1:4]
info = f"{name}-1.0.dist-info"
files = {
    f"{name}/__init__.py": f"VALUE = {value}\n",
    f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
    f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: txguard-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
files[f"{info}/RECORD"] = "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n"
with zipfile.ZipFile(path, "w") as z:
    for n, t in files.items():
        z.writestr(n, t)
EOP
}
