/* decode.c — seccomp stop → struct tg_op (see decode.h). */
#include "decode.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/path.h"
#include "syscalls.h"
#include "base/util.h"

#define TG_PAGE 4096UL
/* The kernel's own limits: MAX_ARG_STRLEN and a sane cap on argc (the
 * real bound is the stack rlimit; 1M arguments is far beyond any build). */
#define TG_MAX_ARG_STRLEN (32 * TG_PAGE)
#define TG_MAX_ARGC (1u << 20)
#define TG_MAX_MMSG 1024u
#ifndef OPEN_HOW_SIZE_VER0
#define OPEN_HOW_SIZE_VER0 24
#endif

static int mem_read_procfs(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = pread(fd, buf, len, (off_t)addr);
	if (n < 0)
		return errno == EIO ? -EFAULT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int tg_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	if (len == 0)
		return 0;
	if (addr == 0)
		return -EFAULT;
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0 || errno == EFAULT)
		return -EFAULT;
	/* ENOSYS (kernel without CONFIG_CROSS_MEMORY_ATTACH) or EPERM from a
	 * hardened kernel: the tracer may still read /proc/PID/mem. */
	return mem_read_procfs(pid, addr, buf, len);
}

int tg_mem_read_string(pid_t pid, uint64_t addr, size_t max, char **out)
{
	_cleanup_free_ char *buf = malloc(max);
	size_t got = 0;

	if (!buf)
		return -ENOMEM;
	if (addr == 0)
		return -EFAULT;
	/* Never read across a page boundary in one go: the string may end
	 * just before an unmapped page. */
	while (got < max) {
		size_t chunk = TG_PAGE - ((addr + got) % TG_PAGE);
		if (chunk > max - got)
			chunk = max - got;
		int r = tg_mem_read(pid, addr + got, buf + got, chunk);
		if (r < 0)
			return r;
		char *nul = memchr(buf + got, '\0', chunk);
		if (nul) {
			*out = tg_strndup(buf, (size_t)(nul - buf));
			return *out ? 0 : -ENOMEM;
		}
		got += chunk;
	}
	return -ENAMETOOLONG;
}

/* Up to len bytes from addr: how many could be read (> 0), or -errno. A
 * read that meets an unmapped page stops there. */
static ssize_t mem_read_some(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	if (addr == 0)
		return -EFAULT;
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n > 0)
		return n;
	if (n == 0 || errno == EFAULT)
		return -EFAULT;
	/* No cross-memory attach here: to the end of addr's page, as tg_mem_read does. */
	size_t chunk = TG_PAGE - addr % TG_PAGE;
	if (chunk > len)
		chunk = len;
	int r = tg_mem_read(pid, addr, buf, chunk);
	return r < 0 ? r : (ssize_t)chunk;
}

/* A window onto the tracee's memory. argv's strings usually sit next to
 * each other (the caller built them in one go), so one read serves
 * thousands of them: reading argv is one syscall per TG_WIN bytes, not one
 * (or more) per argument. */
#define TG_WIN (64u * 1024u)

struct memwin {
	pid_t pid;
	uint64_t base;
	size_t len;
	char *buf;
};

/* argv as tg_strv_pack_nul lays it out, built in place: the pointer
 * array, then the strings end to end, each with its NUL, in one block
 * (one free()). While it is read, slot i holds string i's offset. */
struct strbuf {
	char *v;
	size_t len, cap;
};

static int strbuf_add(struct strbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *v = realloc(b->v, cap); /* a big block moves by mremap: no copy */
		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	memcpy(b->v + b->len, s, n);
	b->v[b->len + n] = '\0';
	b->len += n + 1;
	return 0;
}

/* Append the string at addr to b, through the window. */
static int win_string(struct memwin *w, uint64_t addr, struct strbuf *b)
{
	for (int pass = 0; pass < 2; pass++) {
		if (addr >= w->base && addr < w->base + w->len) {
			size_t off = (size_t)(addr - w->base);
			const char *nul = memchr(w->buf + off, '\0', w->len - off);
			if (nul)
				return strbuf_add(b, w->buf + off, (size_t)(nul - w->buf - off));
			if (pass == 1)
				break; /* longer than the window: read it on its own */
		}
		ssize_t n = mem_read_some(w->pid, addr, w->buf, TG_WIN);
		if (n < 0)
			return (int)n;
		w->base = addr;
		w->len = (size_t)n;
	}
	if (w->len < TG_WIN)
		return -EFAULT; /* the string runs into an unmapped page */
	_cleanup_free_ char *one = NULL;
	int r = tg_mem_read_string(w->pid, addr, TG_MAX_ARG_STRLEN, &one);
	if (r == -ENAMETOOLONG)
		return -E2BIG;
	return r < 0 ? r : strbuf_add(b, one, strlen(one));
}

/* Pointer k of the array at addr, through ptrs (TG_WIN bytes of it, from *base). */
static int argv_ptr(pid_t pid, uint64_t addr, size_t k, uint64_t *ptrs, uint64_t *base, size_t *have,
                    uint64_t *out)
{
	uint64_t at = addr + k * 8;
	if (at < *base || at >= *base + *have) {
		/* The array may end just before an unmapped page: take what was read. */
		ssize_t got = mem_read_some(pid, at, ptrs, TG_WIN);
		if (got < 8)
			return got < 0 ? (int)got : -EFAULT;
		*base = at;
		*have = (size_t)got / 8 * 8;
	}
	*out = ptrs[(at - *base) / 8];
	return 0;
}

/* Read in two passes, so that no byte is copied twice: the first counts
 * the pointers, the second lays the strings after a pointer array of that
 * size. Between them another thread may change the array: the second pass
 * stops at the first NULL or at the count, and the exec event compares
 * what the kernel took with what was vetted (tracer.c, exec_matches). */
int tg_mem_read_argv(pid_t pid, uint64_t addr, char ***out, size_t *argc)
{
	_cleanup_free_ char *wbuf = malloc(TG_WIN);
	_cleanup_free_ uint64_t *ptrs = malloc(TG_WIN);
	struct memwin w = { .pid = pid, .buf = wbuf };
	uint64_t base = 0, p = 1;
	size_t have = 0, n = 0;
	int e = 0;

	if (!wbuf || !ptrs)
		return -ENOMEM;
	while (addr && !e && (e = argv_ptr(pid, addr, n, ptrs, &base, &have, &p)) == 0 && p)
		if (++n > TG_MAX_ARGC)
			e = -E2BIG;
	if (e)
		return e;
	/* The strings: at least a byte each; room for 8 guessed. */
	struct strbuf b = { .len = (n + 1) * sizeof(char *), .cap = (n + 1) * sizeof(char *) + n * 8 + 64 };
	if (!(b.v = malloc(b.cap)))
		return -ENOMEM;
	size_t i = 0;
	for (; i < n && !e; i++) {
		e = argv_ptr(pid, addr, i, ptrs, &base, &have, &p);
		if (e || !p)
			break;
		size_t off = b.len;
		e = win_string(&w, p, &b);
		((size_t *)(void *)b.v)[i] = off;
	}
	if (e) {
		free(b.v);
		return e;
	}
	char **r = (char **)(void *)b.v;
	for (size_t k = 0; k < i; k++)
		r[k] = b.v + ((size_t *)(void *)b.v)[k];
	r[i] = NULL;
	*out = r;
	*argc = i;
	return 0;
}

/* The raw arguments of one call, by role. */
struct raw {
	uint64_t v[TG_A_COUNT];
	uint64_t have;
};

static bool has(const struct raw *r, enum tg_arg_role role)
{
	return r->have & (1ull << role);
}

static uint64_t val(const struct raw *r, enum tg_arg_role role, uint64_t dflt)
{
	return has(r, role) ? r->v[role] : dflt;
}

static void collect(const struct tg_syscall *sc, const uint64_t args[6], struct raw *r)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 6; i++) {
		if (sc->arg[i] == TG_A_NONE)
			continue;
		r->v[sc->arg[i]] = args[i];
		r->have |= 1ull << sc->arg[i];
	}
}

/* dirfd arguments are ints: the kernel looks at the low 32 bits only. */
static int as_fd(uint64_t v)
{
	return (int)(int32_t)v;
}

static bool want_follow(const struct tg_syscall *sc, const struct tg_op *op, uint64_t resolve)
{
	switch ((enum tg_follow)sc->follow) {
	case TG_FOLLOW_YES:
		return true;
	case TG_FOLLOW_AT:
		return !(op->flags & AT_SYMLINK_NOFOLLOW);
	case TG_FOLLOW_AT_LINK:
		return op->flags & AT_SYMLINK_FOLLOW;
	case TG_FOLLOW_OPEN:
		if (op->flags & O_NOFOLLOW || resolve & RESOLVE_NO_SYMLINKS)
			return false;
		return (op->flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
	case TG_FOLLOW_NO:
		break;
	}
	return false;
}

/* openat2(RESOLVE_BENEATH | RESOLVE_IN_ROOT) resolves under dirfd: "/" and
 * ".." stop there. Resolve the path relative to dirfd; a result that leaves
 * it is refused with EXDEV (BENEATH's own error) rather than guessed at, so
 * the policy never judges a different file than the one opened. */
static int resolve_beneath(pid_t pid, int dirfd, const char *s, bool follow, char **out)
{
	_cleanup_free_ char *base = NULL, *res = NULL;
	int e = dirfd == AT_FDCWD ? tg_path_resolve(pid, AT_FDCWD, ".", true, false, &base)
	                          : tg_path_of_fd(pid, dirfd, &base);
	if (e < 0)
		return e;
	while (*s == '/')
		s++;
	e = tg_path_resolve(pid, dirfd, *s ? s : ".", follow, false, &res);
	if (e < 0)
		return e;
	if (!tg_path_is_under(res, base))
		return -EXDEV;
	*out = steal_pointer(&res);
	return 0;
}

/* Path argument `prole` relative to `drole`, as the kernel would see it. */
static int decode_path(pid_t pid, const struct tg_syscall *sc, const struct raw *r, enum tg_arg_role prole,
                       enum tg_arg_role drole, bool follow, bool at_flags_apply, uint64_t resolve,
                       char **out, char **raw_out)
{
	int dirfd = as_fd(val(r, drole, (uint64_t)AT_FDCWD));
	_cleanup_free_ char *s = NULL;
	uint64_t ptr = r->v[prole];

	/* futimens(fd) is utimensat(fd, NULL, ...); with AT_FDCWD the kernel
	 * says EFAULT, like any NULL path. */
	if (ptr == 0 && sc->null_path_is_fd && dirfd != AT_FDCWD)
		return tg_path_of_fd(pid, dirfd, out);
	int e = tg_mem_read_string(pid, ptr, PATH_MAX, &s);
	if (e < 0)
		return e;
	if (raw_out && !(*raw_out = tg_strdup(s)))
		return -ENOMEM;
	if (s[0] == '\0') {
		/* execveat(fd, "", AT_EMPTY_PATH) of a memfd reads "/memfd:x
		 * (deleted)": kept as is so a policy can refuse it. */
		if (at_flags_apply && (val(r, TG_A_ATFLAGS, 0) & AT_EMPTY_PATH))
			return tg_path_of_fd(pid, dirfd, out);
		return -ENOENT;
	}
	if (resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT))
		return resolve_beneath(pid, dirfd, s, follow, out);
	return tg_path_resolve(pid, dirfd, s, follow, false, out);
}

static int decode_openat2(pid_t pid, const struct raw *r, struct tg_op *op, uint64_t *resolve)
{
	struct open_how how = { 0 };
	uint64_t size = val(r, TG_A_HOWSIZE, 0);

	if (size < OPEN_HOW_SIZE_VER0)
		return -EINVAL;
	int e = tg_mem_read(pid, r->v[TG_A_HOW], &how, sizeof(how));
	if (e < 0)
		return e;
	op->flags = (int)how.flags;
	op->mode = (unsigned)how.mode;
	*resolve = how.resolve;
	return 0;
}

static int decode_flags(pid_t pid, const struct tg_syscall *sc, const struct raw *r, struct tg_op *op,
                        uint64_t *resolve)
{
	if (has(r, TG_A_HOW)) {
		int e = decode_openat2(pid, r, op, resolve);
		if (e < 0)
			return e;
	} else if (has(r, TG_A_OFLAGS)) {
		op->flags = (int)val(r, TG_A_OFLAGS, 0);
	} else if (sc->kind == TG_OP_OPEN) {
		op->flags = O_CREAT | O_WRONLY | O_TRUNC; /* creat() */
	} else if (has(r, TG_A_ATFLAGS)) {
		op->flags = (int)val(r, TG_A_ATFLAGS, 0);
	} else if (has(r, TG_A_RENFLAGS)) {
		op->flags = (int)val(r, TG_A_RENFLAGS, 0);
	}
	if (has(r, TG_A_MODE))
		op->mode = (unsigned)val(r, TG_A_MODE, 0);
	return 0;
}

/* With O_PATH the kernel drops every other flag but O_CLOEXEC,
 * O_DIRECTORY and O_NOFOLLOW (openat2 refuses them): nothing is written. */
static bool open_writes(int flags)
{
	if (flags & O_PATH)
		return false;
	return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0;
}

static int decode_msghdr(pid_t pid, uint64_t addr, struct tg_op *op)
{
	struct msghdr m;
	int e = tg_mem_read(pid, addr, &m, sizeof(m));
	if (e < 0)
		return e;
	if (!m.msg_name || m.msg_namelen == 0)
		return TG_DECODE_SKIP;
	if (m.msg_namelen > sizeof(op->addr))
		return -EINVAL;
	e = tg_mem_read(pid, (uintptr_t)m.msg_name, &op->addr, m.msg_namelen);
	if (e < 0)
		return e;
	op->addrlen = m.msg_namelen;
	return 0;
}

/* sendmmsg: the first message with an address is the one judged. */
static int decode_mmsg(pid_t pid, const struct raw *r, struct tg_op *op)
{
	uint64_t vlen = val(r, TG_A_VLEN, 0);
	if (vlen > TG_MAX_MMSG)
		vlen = TG_MAX_MMSG;
	for (uint64_t i = 0; i < vlen; i++) {
		int e = decode_msghdr(pid, r->v[TG_A_MMSG] + i * sizeof(struct mmsghdr), op);
		if (e != TG_DECODE_SKIP)
			return e;
	}
	return TG_DECODE_SKIP;
}

static int decode_addr(pid_t pid, const struct raw *r, struct tg_op *op)
{
	if (has(r, TG_A_MSG))
		return decode_msghdr(pid, r->v[TG_A_MSG], op);
	if (has(r, TG_A_MMSG))
		return decode_mmsg(pid, r, op);
	uint64_t len = val(r, TG_A_ADDRLEN, 0);
	if ((uint32_t)len > sizeof(op->addr))
		return -EINVAL;
	int e = tg_mem_read(pid, r->v[TG_A_ADDR], &op->addr, (uint32_t)len);
	if (e < 0)
		return e;
	op->addrlen = (socklen_t)len;
	return 0;
}

static int decode_strings(pid_t pid, const struct raw *r, struct tg_op *op)
{
	int e = 0;
	if (has(r, TG_A_TARGET))
		e = tg_mem_read_string(pid, r->v[TG_A_TARGET], PATH_MAX, &op->target);
	if (e == 0 && has(r, TG_A_XNAME)) {
		e = tg_mem_read_string(pid, r->v[TG_A_XNAME], XATTR_NAME_MAX + 1, &op->xattr_name);
		if (e == -ENAMETOOLONG)
			e = -ERANGE;
	}
	if (e == 0 && has(r, TG_A_ARGV))
		e = tg_mem_read_argv(pid, r->v[TG_A_ARGV], &op->argv, &op->argc);
	return e;
}

static void decode_ids(const struct raw *r, struct tg_op *op)
{
	/* uid_t/gid_t are 32-bit: (uid_t)-1 means "unchanged". */
	op->uid = has(r, TG_A_UID) ? (long)(int32_t)r->v[TG_A_UID] : -1;
	op->gid = has(r, TG_A_GID) ? (long)(int32_t)r->v[TG_A_GID] : -1;
	op->dev = (unsigned long)val(r, TG_A_DEV, 0);
}

static int decode_paths(pid_t pid, const struct tg_syscall *sc, const struct raw *r, struct tg_op *op,
                        uint64_t resolve, char **raw_path)
{
	int e = 0;
	bool at = has(r, TG_A_ATFLAGS);

	if (has(r, TG_A_FD)) {
		if (sc->kind == TG_OP_CONNECT || sc->kind == TG_OP_SENDTO)
			return 0;
		return tg_path_of_fd(pid, as_fd(r->v[TG_A_FD]), &op->path);
	}
	if (has(r, TG_A_PATH)) {
		op->follow = want_follow(sc, op, resolve);
		e = decode_path(pid, sc, r, TG_A_PATH, TG_A_DIRFD, op->follow, at, resolve, &op->path, raw_path);
	}
	if (e == 0 && has(r, TG_A_PATH2))
		e = decode_path(pid, sc, r, TG_A_PATH2, TG_A_DIRFD2, false, false, 0, &op->path2, NULL);
	return e;
}

/* bind(AF_UNIX, "path"): the op becomes the mknod of a socket at path,
 * resolved like the kernel's (relative to cwd, last link not followed). An
 * abstract or unnamed address, or another family, touches no file. */
static int decode_unix_bind(pid_t pid, struct tg_op *op)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&op->addr;
	size_t max = op->addrlen > offsetof(struct sockaddr_un, sun_path)
	                     ? op->addrlen - offsetof(struct sockaddr_un, sun_path)
	                     : 0;
	if (op->addr.ss_family != AF_UNIX || max == 0 || un->sun_path[0] == '\0')
		return TG_DECODE_SKIP;
	if (max > sizeof(un->sun_path))
		max = sizeof(un->sun_path);
	_cleanup_free_ char *p = tg_strndup(un->sun_path, max);
	if (!p)
		return -ENOMEM;
	op->mode = S_IFSOCK;
	return tg_path_resolve(pid, AT_FDCWD, p, false, false, &op->path);
}

/* connect/sendto/sendmsg to a named AF_UNIX socket: the kernel looks the
 * name up like any path (relative to cwd, through symlinks and
 * /proc/self/fd/N), so the policy must judge the socket it reaches, not the
 * name as written. The resolved path goes to op->path (these calls have no
 * other); an abstract or unnamed address, or another family, has none. */
static int decode_unix_peer(pid_t pid, struct tg_op *op)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&op->addr;
	size_t max = op->addrlen > offsetof(struct sockaddr_un, sun_path)
	                     ? op->addrlen - offsetof(struct sockaddr_un, sun_path)
	                     : 0;
	if (op->addr.ss_family != AF_UNIX || max == 0 || un->sun_path[0] == '\0')
		return 0;
	if (max > sizeof(un->sun_path))
		max = sizeof(un->sun_path);
	_cleanup_free_ char *p = tg_strndup(un->sun_path, max);
	if (!p)
		return -ENOMEM;
	return tg_path_resolve(pid, AT_FDCWD, p, true, false, &op->path);
}

/* The process a pidfd (or a /proc/PID directory fd, which
 * pidfd_send_signal also takes) of `pid` refers to: fdinfo's "Pid:" line.
 * -1 there means the process is gone; 0 that it lives in a pid namespace
 * we cannot see. -EBADF when the fd is neither. */
static int pidfd_target(pid_t pid, int fd, pid_t *out)
{
	char path[64];
	_cleanup_free_ char *buf = NULL, *link = NULL;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	if (tg_read_file(path, &buf, &len, 1 << 16) < 0)
		return -EBADF;
	const char *p = strstr(buf, "\nPid:");
	if (p) {
		*out = (pid_t)strtol(p + 5, NULL, 10);
		return 0;
	}
	/* A /proc/PID directory: in our view, "/proc/PID" — or, for a
	 * chrooted tracee, under its root ("/jail/proc/PID"): any procfs's
	 * root (its inode 1) holding a number. */
	if (tg_path_of_fd(pid, fd, &link) < 0)
		return -EBADF;
	char *slash = strrchr(link, '/');
	char *end = NULL;
	long n = slash ? strtol(slash + 1, &end, 10) : 0;
	if (!slash || end == slash + 1 || *end || n <= 0)
		return -EBADF;
	*slash = '\0';
	struct statfs sf;
	struct stat st;
	if (statfs(slash == link ? "/" : link, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC ||
	    stat(slash == link ? "/" : link, &st) < 0 || st.st_ino != 1)
		return -EBADF;
	*out = (pid_t)n;
	return 0;
}

/* 0 when the group's leader lives in an ancestor pid namespace (txguard
 * run in a container that kept its starter's group): /proc shows such a
 * group as 0 for every member, and the tracer matches it that way. */
static pid_t own_pgrp(pid_t pid)
{
	pid_t g = getpgid(pid);
	return g > 0 ? g : 0;
}

/* setpriority/ioprio_set: `which` counted from `base` (0 or 1). */
static int decode_which(const struct raw *r, int base, pid_t caller, struct tg_proc_target *t)
{
	int which = (int)(int32_t)val(r, TG_A_WHICH, 0) - base;
	pid_t who = (pid_t)(int32_t)val(r, TG_A_PID, 0);
	switch (which) {
	case 0:
		t->scope = TG_PROC_PID;
		t->pid = who ? who : caller;
		return 0;
	case 1:
		t->scope = TG_PROC_PGRP;
		t->pid = who ? who : own_pgrp(caller);
		return 0;
	case 2:
		t->scope = TG_PROC_USER;
		t->pid = who;
		return 0;
	default:
		return TG_DECODE_SKIP; /* EINVAL from the kernel */
	}
}

static int decode_kill_pid(pid_t caller, pid_t p, struct tg_proc_target *t)
{
	if (p > 0) {
		t->scope = TG_PROC_PID;
		t->pid = p;
	} else if (p == 0) {
		t->scope = TG_PROC_PGRP;
		t->pid = own_pgrp(caller);
	} else if (p == -1) {
		t->scope = TG_PROC_ALL;
		t->pid = -1;
	} else if (p == INT32_MIN) {
		return TG_DECODE_SKIP; /* -INT_MIN overflows: ESRCH from the kernel */
	} else {
		t->scope = TG_PROC_PGRP;
		t->pid = -p;
	}
	return 0;
}

/* Whom a TG_OP_PROCESS call reaches, from its arguments alone; the tracer
 * then finds which of those are outside the tree. */
static int decode_proc(pid_t pid, const struct tg_syscall *sc, const struct raw *r, struct tg_op *op)
{
	struct tg_proc_target *t = &op->proc;
	t->sig = (int)(int32_t)val(r, TG_A_SIG, 0);
	if (has(r, TG_A_NEWLIM) && val(r, TG_A_NEWLIM, 0) == 0)
		return TG_DECODE_SKIP; /* prlimit64 that only reads */
	if (has(r, TG_A_PID2))
		t->pid2 = (pid_t)(int32_t)val(r, TG_A_PID2, 0);
	if (has(r, TG_A_PIDFD)) {
		int e = pidfd_target(pid, as_fd(r->v[TG_A_PIDFD]), &t->pid);
		if (e < 0)
			return e;
		return t->pid == -1 ? TG_DECODE_SKIP : 0; /* gone: ESRCH from the kernel */
	}
	switch ((enum tg_procarg)sc->procarg) {
	case TG_PROCARG_KILL:
		return decode_kill_pid(pid, (pid_t)(int32_t)val(r, TG_A_PID, 0), t);
	case TG_PROCARG_PRIO:
		return decode_which(r, 0, pid, t);
	case TG_PROCARG_IOPRIO:
		return decode_which(r, 1, pid, t);
	case TG_PROCARG_SELF0:
	case TG_PROCARG_NONE:
		break;
	}
	/* tgkill(tgid, tid): the thread is what the signal reaches. */
	enum tg_arg_role role = has(r, TG_A_TID) ? TG_A_TID : TG_A_PID;
	pid_t p = (pid_t)(int32_t)val(r, role, 0);
	t->scope = TG_PROC_PID;
	t->pid = p ? p : pid;
	if (t->pid < 0)
		return TG_DECODE_SKIP; /* EINVAL/ESRCH from the kernel */
	return 0;
}

/* An execve of a program that is not there (in our view of the tracee's
 * resolved path) fails with ENOENT or ENOTDIR before the kernel looks at
 * argv: nothing to read. AT_EMPTY_PATH, or a path through a magic link to
 * a memfd or a deleted file (/proc/PID/fd/N: a kernel-made name), runs an
 * open file: judged as ever. Whatever else the kernel might still run (a
 * name made in between) is why this is TG_DECODE_ABSENT, not an error. */
static bool exec_absent(const struct tg_op *op, const char *raw)
{
	struct stat st;
	if (!raw || !raw[0] || !op->path || tg_path_is_kernel_name(op->path))
		return false;
	if ((op->follow ? stat(op->path, &st) : lstat(op->path, &st)) == 0)
		return false;
	return errno == ENOENT || errno == ENOTDIR;
}

int tg_decode(pid_t pid, long nr, const uint64_t args[6], struct tg_op *op)
{
	return tg_decode_full(pid, nr, args, op, NULL);
}

int tg_decode_full(pid_t pid, long nr, const uint64_t args[6], struct tg_op *op, char **raw_path)
{
	const struct tg_syscall *sc = tg_syscall_by_nr(nr);
	uint64_t resolve = 0;
	struct raw r;
	int e;

	memset(op, 0, sizeof(*op));
	op->nr = nr;
	op->pid = pid;
	op->uid = op->gid = -1;
	/* Not ours: a filter the tracee stacked itself returned RET_TRACE,
	 * and we are the tracer it reaches. Nothing to judge. */
	if (!sc)
		return TG_DECODE_SKIP;
	op->kind = sc->kind;
	op->name = sc->name;
	op->writes = sc->writes;
	collect(sc, args, &r);
	if (sc->kind == TG_OP_PROCESS)
		return decode_proc(pid, sc, &r, op);
	e = decode_flags(pid, sc, &r, op, &resolve);
	if (e < 0)
		return e;
	if (sc->kind == TG_OP_OPEN || has(&r, TG_A_OFLAGS)) {
		op->writes = open_writes(op->flags);
		if (!op->writes)
			return TG_DECODE_SKIP;
	}
	if (sc->kind == TG_OP_UNLINK && (op->flags & AT_REMOVEDIR))
		op->kind = TG_OP_RMDIR;
	decode_ids(&r, op);
	if (has(&r, TG_A_ADDR) || has(&r, TG_A_MSG) || has(&r, TG_A_MMSG)) {
		e = decode_addr(pid, &r, op);
		if (e != 0)
			return e;
		if (sc->unix_path)
			return decode_unix_bind(pid, op);
		if (sc->kind == TG_OP_CONNECT || sc->kind == TG_OP_SENDTO) {
			e = decode_unix_peer(pid, op);
			if (e < 0)
				return e;
		}
	}
	if (sc->kind == TG_OP_EXEC) {
		/* The program first: execvp's PATH search (env, xargs) tries
		 * names that do not exist, and each would otherwise cost a
		 * read of the whole argv (100,000 arguments: 17 ms, times
		 * the PATH entries before the right one). */
		_cleanup_free_ char *raw = NULL;
		e = decode_paths(pid, sc, &r, op, resolve, &raw);
		bool absent = e == 0 && exec_absent(op, raw);
		/* The raw path also names an unnamed root's refusal (EACCES). */
		if (raw_path)
			*raw_path = steal_pointer(&raw);
		if (e == -EACCES)
			(void)decode_strings(pid, &r, op); /* ... with the argv refused */
		if (e < 0)
			return e;
		return absent ? TG_DECODE_ABSENT : decode_strings(pid, &r, op);
	}
	e = decode_strings(pid, &r, op);
	if (e < 0)
		return e;
	return decode_paths(pid, sc, &r, op, resolve, raw_path);
}
