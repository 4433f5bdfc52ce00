/* filter.c — build and load the seccomp filter (see filter.h). */
#include "filter.h"

#include <errno.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "syscalls.h"
#include "base/cache.h"
#include "base/lazy.h"
#include "base/util.h"

static void ctx_releasep(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}
#define _cleanup_seccomp_ __attribute__((cleanup(ctx_releasep)))

static bool nr_in(const int *nrs, size_t n, int nr)
{
	for (size_t i = 0; i < n; i++)
		if (nrs[i] == nr)
			return true;
	return false;
}

static struct scmp_arg_cmp to_scmp(const struct tg_syscall_cond *c)
{
	if (c->cmp == TG_CMP_NE)
		return (struct scmp_arg_cmp){ .arg = (unsigned)c->arg, .op = SCMP_CMP_NE, .datum_a = c->datum };
	return (struct scmp_arg_cmp){ .arg = (unsigned)c->arg, .op = SCMP_CMP_MASKED_EQ,
	                              .datum_a = c->mask, .datum_b = c->datum };
}

/* One rule per alternative: libseccomp ORs rules of the same syscall. */
static int add_row(scmp_filter_ctx ctx, const struct tg_syscall *sc, uint32_t action, bool conditional)
{
	if (!conditional || sc->ncond == 0)
		return seccomp_rule_add_exact_array(ctx, action, (int)sc->nr, 0, NULL);
	for (unsigned i = 0; i < sc->ncond; i++) {
		struct scmp_arg_cmp cmp = to_scmp(&sc->cond[i]);
		int r = seccomp_rule_add_exact_array(ctx, action, (int)sc->nr, 1, &cmp);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A fixed denial stops once so that the refusal is reported (issue 13):
 * the tracer fails the call with the errno carried in the data and tells
 * on_fixed(). Without a tracer RET_TRACE fails the call with ENOSYS: still
 * refused. clone3's ENOSYS is not a refusal (libc falls back to clone) and
 * stays silent in BPF. */
static uint32_t fixed_action(long nr, int err)
{
	if (nr == SYS_clone3)
		return SCMP_ACT_ERRNO((uint32_t)err);
	return SCMP_ACT_TRACE(TG_FILTER_FIXED | (uint32_t)err);
}

static int add_table(scmp_filter_ctx ctx, const struct tg_filter_config *cfg, const int *skip, size_t nskip)
{
	size_t n;
	const struct tg_syscall *t = tg_syscalls(&n);
	for (size_t i = 0; i < n; i++) {
		const struct tg_syscall *sc = &t[i];
		int r = 0;
		if (nr_in(skip, nskip, (int)sc->nr))
			continue;
		switch (sc->trap) {
		case TG_TRAP_ALWAYS:
		case TG_TRAP_IF:
			r = add_row(ctx, sc, SCMP_ACT_TRACE(0), sc->trap == TG_TRAP_IF);
			break;
		case TG_TRAP_NET:
			if (cfg->trap_network)
				r = add_row(ctx, sc, SCMP_ACT_TRACE(0), true);
			break;
		case TG_DENY:
		case TG_DENY_IF:
			r = add_row(ctx, sc, fixed_action(sc->nr, sc->err), sc->trap == TG_DENY_IF);
			break;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* The config's own denials come first and win over the table's row for the
 * same syscall (a policy may deny outright what would otherwise trap). */
static int add_denied(scmp_filter_ctx ctx, const struct tg_filter_config *cfg, int *nrs, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < cfg->ndenied; i++) {
		int nr = seccomp_syscall_resolve_name(cfg->denied_syscalls[i]);
		int err = cfg->deny_errno ? cfg->deny_errno[i] : EPERM;
		if (nr == __NR_SCMP_ERROR || err <= 0 || err > 4095)
			return -EINVAL;
		if (nr_in(nrs, *n, nr))
			continue;
		nrs[(*n)++] = nr;
		/* Pseudo numbers (syscalls x86_64 lacks) have nothing to deny. */
		if (nr < 0)
			continue;
		int r = seccomp_rule_add_exact_array(ctx, fixed_action(nr, err), nr, 0, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

static int build(const struct tg_filter_config *cfg, scmp_filter_ctx *out)
{
	_cleanup_seccomp_ scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	_cleanup_free_ int *denied = NULL;
	size_t ndenied = 0;
	int r;

	if (!ctx)
		return tg_seccomp_load(NULL, 0) ? -ENOMEM : -ELIBACC;
	/* libseccomp learns what the kernel can do by calling seccomp(2); where
	 * that is not passed through (txguard under valgrind) it would refuse
	 * KILL_PROCESS. txguard needs Linux >= 5.3 anyway, which has API level
	 * 3; a kernel that truly lacks it refuses the load: closed either way. */
	if (seccomp_api_get() < 3 && seccomp_api_set(3) < 0)
		return -EOPNOTSUPP;
	/* Arch gate: only native x86_64 entries reach the rules; int 0x80 and
	 * foreign arches die. libseccomp also sends x32 numbers (nr with
	 * bit 30) of an x86_64-only filter to this action. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r < 0)
		return r;
	/* A binary tree of syscall numbers: the filter runs on every call. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (cfg->ndenied) {
		denied = calloc(cfg->ndenied, sizeof(*denied));
		if (!denied)
			return -ENOMEM;
	}
	r = add_denied(ctx, cfg, denied, &ndenied);
	if (r < 0)
		return r;
	r = add_table(ctx, cfg, denied, ndenied);
	if (r < 0)
		return r;
	*out = steal_pointer(&ctx);
	return 0;
}

static int check_names(const struct tg_filter_config *cfg, const char **bad)
{
	/* Without the library no name resolves: that is not the policy's fault. */
	if (cfg->ndenied && !tg_seccomp_load(NULL, 0))
		return -ELIBACC;
	for (size_t i = 0; i < cfg->ndenied; i++) {
		int err = cfg->deny_errno ? cfg->deny_errno[i] : EPERM;
		if (seccomp_syscall_resolve_name(cfg->denied_syscalls[i]) == __NR_SCMP_ERROR || err <= 0 ||
		    err > 4095) {
			if (bad)
				*bad = cfg->denied_syscalls[i];
			return -EINVAL;
		}
	}
	return 0;
}

int tg_filter_check(const struct tg_filter_config *cfg, const char **bad)
{
	_cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
	int r = check_names(cfg, bad);
	return r < 0 ? r : build(cfg, &ctx);
}

int tg_filter_prepare(const struct tg_filter_config *cfg, struct tg_filter_prog *out, const char **bad)
{
	memset(out, 0, sizeof(*out));
	int r = check_names(cfg, bad);
	return r < 0 ? r : tg_filter_compile(cfg, out);
}

int tg_filter_compile(const struct tg_filter_config *cfg, struct tg_filter_prog *out)
{
	_cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r = build(cfg, &ctx);
	if (r < 0)
		return r;
	/* libseccomp 2.5 exports BPF to an fd only (seccomp_export_bpf_mem
	 * came in 2.6). */
	fd = memfd_create("txguard-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return r;
	if (fstat(fd, &st) < 0)
		return -errno;
	size_t len = (size_t)st.st_size;
	if (len == 0 || len % sizeof(struct sock_filter) || len / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -E2BIG;
	struct sock_filter *insns = malloc(len);
	if (!insns)
		return -ENOMEM;
	if (pread(fd, insns, len, 0) != (ssize_t)len) {
		free(insns);
		return -EIO;
	}
	out->fprog.len = (unsigned short)(len / sizeof(struct sock_filter));
	out->fprog.filter = insns;
	return 0;
}

void tg_filter_prog_free(struct tg_filter_prog *prog)
{
	free(prog->fprog.filter);
	prog->fprog.filter = NULL;
	prog->fprog.len = 0;
}

int tg_filter_load_prog(const struct tg_filter_prog *prog)
{
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog->fprog) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog->fprog, 0, 0) < 0 ? -errno : 0;
}

/* ---- the cache ---- */

/* An entry: the header, the file name of the libseccomp that built the
 * program (lib_len bytes, no NUL), the n instructions, a checksum of all
 * that (uint64_t). */
#define BPF_MAGIC "TGBPF002"

struct bpf_hdr {
	char magic[8];
	uint64_t key;
	uint32_t n;       /* instructions */
	uint32_t lib_len; /* bytes of the library's file name */
	uint64_t lib_id;  /* tg_cache_file_key of that file when it built the program */
};

/* Everything the program depends on, without loading libseccomp (a start
 * that reads the program back never calls it, base/seccomp_lazy.c). The
 * binary itself stands for the code that builds it (tg_cache_self_key:
 * any rebuild is a new key); the table and the config are hashed as
 * values; the kernel (release, build, machine) for the API level that
 * libseccomp finds in it. libseccomp itself is checked by each entry,
 * which names the library file that built it (from_cache). 0 when the
 * binary cannot be stat'ed: no caching then. */
static uint64_t filter_key(const struct tg_filter_config *cfg)
{
	uint64_t self = tg_cache_self_key();
	struct utsname u;
	if (!self || uname(&u) < 0)
		return 0;
	uint64_t h = tg_fnv1a(TG_FNV1A_INIT, &self, sizeof(self));
	h = tg_fnv1a(h, u.release, strlen(u.release) + 1);
	h = tg_fnv1a(h, u.version, strlen(u.version) + 1);
	h = tg_fnv1a(h, u.machine, strlen(u.machine) + 1);
	const uint32_t net = cfg->trap_network;
	h = tg_fnv1a(h, &net, sizeof(net));
	for (size_t i = 0; i < cfg->ndenied; i++) {
		int err = cfg->deny_errno ? cfg->deny_errno[i] : EPERM;
		h = tg_fnv1a(h, cfg->denied_syscalls[i], strlen(cfg->denied_syscalls[i]) + 1);
		h = tg_fnv1a(h, &err, sizeof(err));
	}
	size_t n;
	const struct tg_syscall *t = tg_syscalls(&n);
	for (size_t i = 0; i < n; i++) {
		const int64_t row[] = { t[i].nr, t[i].trap, t[i].err, t[i].ncond };
		h = tg_fnv1a(h, row, sizeof(row));
		for (unsigned c = 0; c < t[i].ncond; c++) {
			const uint64_t cond[] = { (uint64_t)t[i].cond[c].arg, t[i].cond[c].cmp, t[i].cond[c].mask,
				                  t[i].cond[c].datum };
			h = tg_fnv1a(h, cond, sizeof(cond));
		}
	}
	return h ? h : 1;
}

/* The program of a well-formed entry for key whose library is still the
 * file that built it (one stat): 0, else -EINVAL (a miss). */
static int from_cache(const char *buf, size_t len, uint64_t key, struct tg_filter_prog *out)
{
	struct bpf_hdr hd;
	uint64_t sum;
	if (len < sizeof(hd) + sizeof(sum))
		return -EINVAL;
	memcpy(&hd, buf, sizeof(hd));
	if (memcmp(hd.magic, BPF_MAGIC, sizeof(hd.magic)) != 0 || hd.key != key || hd.n == 0 ||
	    hd.n > BPF_MAXINSNS || hd.lib_len == 0 || hd.lib_len >= PATH_MAX ||
	    len != sizeof(hd) + hd.lib_len + hd.n * sizeof(struct sock_filter) + sizeof(sum))
		return -EINVAL;
	memcpy(&sum, buf + len - sizeof(sum), sizeof(sum));
	if (sum != tg_fnv1a(TG_FNV1A_INIT, buf, len - sizeof(sum)))
		return -EINVAL;
	char lib[PATH_MAX];
	memcpy(lib, buf + sizeof(hd), hd.lib_len);
	lib[hd.lib_len] = '\0';
	if (tg_cache_file_key(lib) != hd.lib_id)
		return -EINVAL;
	struct sock_filter *insns = malloc(hd.n * sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	memcpy(insns, buf + sizeof(hd) + hd.lib_len, hd.n * sizeof(*insns));
	out->fprog.len = (unsigned short)hd.n;
	out->fprog.filter = insns;
	return 0;
}

/* Only a program whose library can be named and stat'ed is kept. */
static void to_cache(const char *dir, size_t trusted, const char *name, uint64_t key,
                     const struct tg_filter_prog *prog)
{
	const char *lib = tg_seccomp_file();
	uint64_t lib_id = tg_cache_file_key(lib);
	if (!lib_id || strlen(lib) >= PATH_MAX)
		return;
	struct bpf_hdr hd = { .key = key, .n = prog->fprog.len, .lib_len = (uint32_t)strlen(lib), .lib_id = lib_id };
	size_t body = prog->fprog.len * sizeof(struct sock_filter);
	size_t len = sizeof(hd) + hd.lib_len + body + sizeof(uint64_t);
	_cleanup_free_ char *buf = malloc(len);
	if (!buf)
		return;
	memcpy(hd.magic, BPF_MAGIC, sizeof(hd.magic));
	memcpy(buf, &hd, sizeof(hd));
	memcpy(buf + sizeof(hd), lib, hd.lib_len);
	memcpy(buf + sizeof(hd) + hd.lib_len, prog->fprog.filter, body);
	uint64_t sum = tg_fnv1a(TG_FNV1A_INIT, buf, len - sizeof(sum));
	memcpy(buf + len - sizeof(sum), &sum, sizeof(sum));
	(void)tg_cache_put(dir, trusted, name, buf, len, 128);
}

int tg_filter_prepare_cached(const struct tg_filter_config *cfg, struct tg_filter_prog *out, const char **bad,
                             const char *dir, size_t trusted)
{
	char name[32];
	uint64_t key = dir ? filter_key(cfg) : 0;
	if (!key)
		return tg_filter_prepare(cfg, out, bad);
	snprintf(name, sizeof(name), "%016llx.bpf", (unsigned long long)key);
	memset(out, 0, sizeof(*out));
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r = tg_cache_get(dir, trusted, name, 1u << 20, &buf, &len);
	if (r < 0)
		return r;
	if (r == 1 && from_cache(buf, len, key, out) == 0)
		return 0;
	r = tg_filter_prepare(cfg, out, bad);
	if (r == 0)
		to_cache(dir, trusted, name, key, out);
	return r;
}

