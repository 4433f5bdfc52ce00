/* path.c — what a tracee's paths reach, named in our view, and workspace
 * containment.
 *
 * The pure string functions come first. tg_path_resolve() then walks a path
 * component by component on the real filesystem, the way the kernel's
 * path walk would for the tracee: it reads the tracee's root, cwd and fds
 * from /proc/PID, follows symlinks itself (so that "/proc/self" can mean the
 * tracee, not us) and keeps the resolved prefix symlink-free, which makes
 * ".." physical like the kernel's. The walk is done, and its result named,
 * in the supervisor's view: a chrooted tracee's "/" is its root's path as we
 * see it, so that the policy and the journal judge the file really reached.
 */
#include "path.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "util.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

/* The kernel's MAXSYMLINKS: more links in one walk fail with ELOOP. */
#define TG_MAX_SYMLINKS 40

/* ---- growable string ------------------------------------------------- */

struct sbuf {
	char *s;
	size_t len, cap;
	/* The tracee's root in our view when it is not ours (a chroot):
	 * absolute paths start there and ".." stays there, as the kernel's
	 * walk does at a process's root. NULL: our "/". */
	const char *root;
};

static void sbuf_freep(struct sbuf *b)
{
	int saved = errno;
	free(b->s);
	errno = saved;
}
#define _cleanup_sbuf_ __attribute__((cleanup(sbuf_freep)))

static int sbuf_reserve(struct sbuf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *n = realloc(b->s, cap);
	if (!n)
		return -ENOMEM;
	b->s = n;
	b->cap = cap;
	return 0;
}

static int sbuf_addn(struct sbuf *b, const char *s, size_t n)
{
	int r = sbuf_reserve(b, n);
	if (r < 0)
		return r;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

/* Append "/name" to a resolved path kept without trailing slash ("" = "/"). */
static int sbuf_push(struct sbuf *b, const char *name, size_t n)
{
	int r = sbuf_addn(b, "/", 1);
	return r < 0 ? r : sbuf_addn(b, name, n);
}

/* At the tracee's root (not above or below it). */
static bool sbuf_at_root(const struct sbuf *b)
{
	size_t n = b->root ? strlen(b->root) : 0;
	return b->len == n && (n == 0 || memcmp(b->s, b->root, n) == 0);
}

/* Drop the last component; never goes above the root. */
static void sbuf_pop(struct sbuf *b)
{
	if (sbuf_at_root(b))
		return;
	while (b->len > 0 && b->s[b->len - 1] != '/')
		b->len--;
	if (b->len > 0)
		b->len--;
	if (b->s)
		b->s[b->len] = '\0';
}

/* Start again at the tracee's root: an absolute path or symlink text. */
static int sbuf_to_root(struct sbuf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
	return b->root ? sbuf_addn(b, b->root, strlen(b->root)) : 0;
}

/* Hand the resolved path out, "" meaning "/". */
static char *sbuf_finish(struct sbuf *b)
{
	if (b->len == 0 && sbuf_addn(b, "/", 1) < 0)
		return NULL;
	if (!b->s && sbuf_reserve(b, 0) < 0)
		return NULL;
	return steal_pointer(&b->s);
}

/* Next component of *p: skips slashes, returns its length (0 at the end). */
static size_t next_component(const char **p, const char **name)
{
	const char *s = *p;
	while (*s == '/')
		s++;
	const char *e = s;
	while (*e && *e != '/')
		e++;
	*name = s;
	*p = e;
	return (size_t)(e - s);
}

static bool is_dot(const char *n, size_t len)
{
	return len == 1 && n[0] == '.';
}

static bool is_dotdot(const char *n, size_t len)
{
	return len == 2 && n[0] == '.' && n[1] == '.';
}

/* Lexically apply the components of rel to b. */
static int lexical_apply(struct sbuf *b, const char *rel)
{
	const char *name;
	size_t n;
	while ((n = next_component(&rel, &name)) > 0) {
		if (is_dot(name, n))
			continue;
		if (is_dotdot(name, n)) {
			sbuf_pop(b);
			continue;
		}
		int r = sbuf_push(b, name, n);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- pure string functions ------------------------------------------- */

char *tg_path_normalize(const char *abs)
{
	if (!abs || abs[0] != '/') {
		errno = EINVAL;
		return NULL;
	}
	_cleanup_sbuf_ struct sbuf b = {0};
	int r = lexical_apply(&b, abs);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return sbuf_finish(&b);
}

char *tg_path_join(const char *base, const char *rel)
{
	if (!rel) {
		errno = EINVAL;
		return NULL;
	}
	if (rel[0] == '/')
		return tg_path_normalize(rel);
	if (!base || base[0] != '/') {
		errno = EINVAL;
		return NULL;
	}
	_cleanup_sbuf_ struct sbuf b = {0};
	int r = lexical_apply(&b, base);
	if (r >= 0)
		r = lexical_apply(&b, rel);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return sbuf_finish(&b);
}

bool tg_path_is_kernel_name(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t l = strlen(path);
	return strncmp(path, "/memfd:", 7) == 0 ||
	       (l >= sizeof(deleted) - 1 && strcmp(path + l - (sizeof(deleted) - 1), deleted) == 0);
}

bool tg_path_is_under(const char *path, const char *dir)
{
	if (!path || !dir || path[0] != '/' || dir[0] != '/')
		return false;
	size_t n = strlen(dir);
	while (n > 0 && dir[n - 1] == '/')
		n--;
	/* dir was "/": everything absolute lies beneath it. */
	if (n == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const char *tg_path_below(const char *path, const char *dir)
{
	if (!tg_path_is_under(path, dir))
		return NULL;
	size_t n = strlen(dir);
	if (n == 1)
		return path + 1;
	return path[n] == '/' ? path + n + 1 : path + n;
}

/* Length of the home prefix p starts with ("~", "$HOME", "${HOME}"), when
 * it is followed by "/" or the end; 0 otherwise. */
static size_t home_prefix_len(const char *p)
{
	static const char *const prefixes[] = { "~", "${HOME}", "$HOME" };
	for (size_t i = 0; i < TG_ARRAY_SIZE(prefixes); i++) {
		size_t n = strlen(prefixes[i]);
		if (strncmp(p, prefixes[i], n) == 0 && (p[n] == '\0' || p[n] == '/'))
			return n;
	}
	return 0;
}

char *tg_path_expand_home(const char *p, const char *home)
{
	if (!p) {
		errno = EINVAL;
		return NULL;
	}
	size_t skip = home_prefix_len(p);
	if (skip == 0)
		return tg_strdup(p);
	/* Failing is better than leaving "~/.ssh" unexpanded: a rule about a
	 * secret that silently matches nothing is a hole. */
	if (!home || home[0] == '\0') {
		errno = ENOENT;
		return NULL;
	}
	size_t hn = strlen(home);
	while (hn > 1 && home[hn - 1] == '/')
		hn--;
	const char *rest = p + skip;
	if (hn == 1 && home[0] == '/' && rest[0] == '/')
		hn = 0;
	return tg_asprintf("%.*s%s", (int)hn, home, rest);
}

/* ---- /proc helpers --------------------------------------------------- */

/* readlinkat() into a malloc'd, NUL-terminated string of any length. */
static int readlink_alloc(int dirfd, const char *path, char **out)
{
	for (size_t size = 256; size <= 1 << 20; size *= 2) {
		_cleanup_free_ char *buf = malloc(size);
		if (!buf)
			return -ENOMEM;
		ssize_t n = readlinkat(dirfd, path, buf, size);
		if (n < 0)
			return -errno;
		if ((size_t)n < size) {
			buf[n] = '\0';
			*out = steal_pointer(&buf);
			return 0;
		}
	}
	return -ENAMETOOLONG;
}

/* ---- paths longer than PATH_MAX --------------------------------------- *
 *
 * A tree may be deeper than PATH_MAX (4096 bytes): the kernel walks it
 * through directory fds (rm -rf does), but takes no such path as one string
 * and prints none (readlink of /proc/PID/cwd or fd/N: ENAMETOOLONG). Such
 * paths are looked at here a piece at a time, each under PATH_MAX. */

/* An O_PATH fd on the directory holding the last component of the absolute
 * path p, *leaf = that component (not empty: p has no trailing slash).
 * Every directory on the way is followed as the kernel would (the callers
 * pass a prefix with no symlink in it). fd or -errno. */
static int open_parent_long(const char *p, const char **leaf)
{
	const char *slash = strrchr(p, '/');
	*leaf = slash + 1;
	if (slash == p)
		return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int dfd = AT_FDCWD;
	for (const char *at = p; at < slash;) {
		/* The longest run of whole components under PATH_MAX / 2. */
		const char *end = slash;
		if ((size_t)(end - at) >= PATH_MAX / 2) {
			end = at + PATH_MAX / 2;
			while (end > at + 1 && *end != '/')
				end--;
			if (end <= at + 1) {
				if (dfd != AT_FDCWD)
					close(dfd);
				return -ENAMETOOLONG; /* one name longer than NAME_MAX */
			}
		}
		char chunk[PATH_MAX / 2 + 1];
		memcpy(chunk, at, (size_t)(end - at));
		chunk[end - at] = '\0';
		int nfd = openat(dfd, chunk, O_PATH | O_DIRECTORY | O_CLOEXEC);
		int e = errno;
		if (dfd != AT_FDCWD)
			close(dfd);
		if (nfd < 0)
			return -e;
		dfd = nfd;
		at = end + 1;
	}
	return dfd;
}

/* fstatat(AT_FDCWD, p, st, AT_SYMLINK_NOFOLLOW) for a path of any length. */
static int lstat_any(const char *p, struct stat *st)
{
	if (strlen(p) < PATH_MAX)
		return fstatat(AT_FDCWD, p, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	const char *leaf;
	_cleanup_close_ int dfd = open_parent_long(p, &leaf);
	if (dfd < 0)
		return dfd;
	return fstatat(dfd, leaf, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* readlink_alloc for a symlink whose path may be of any length. */
static int readlink_any(const char *p, char **out)
{
	if (strlen(p) < PATH_MAX)
		return readlink_alloc(AT_FDCWD, p, out);
	const char *leaf;
	_cleanup_close_ int dfd = open_parent_long(p, &leaf);
	if (dfd < 0)
		return dfd;
	return readlink_alloc(dfd, leaf, out);
}

/* The entry of directory pfd that is the object st (dev, ino): by d_ino
 * first, then by fstatat for a mount point (whose d_ino is the directory
 * beneath the mount). 0 with *name (malloc'd), or -errno. */
static int name_in_parent(int pfd, const struct stat *st, char **name)
{
	for (int pass = 0; pass < 2; pass++) {
		int dfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return -errno;
		DIR *d = fdopendir(dfd);
		if (!d) {
			close(dfd);
			return -errno;
		}
		struct dirent *de;
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (pass == 0 && de->d_ino != st->st_ino)
				continue;
			if (pass == 1 && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
				continue;
			struct stat cs;
			if (fstatat(pfd, de->d_name, &cs, AT_SYMLINK_NOFOLLOW) == 0 &&
			    cs.st_dev == st->st_dev && cs.st_ino == st->st_ino) {
				*name = tg_strdup(de->d_name);
				closedir(d);
				return *name ? 0 : -ENOMEM;
			}
		}
		closedir(d);
	}
	return -ENOENT;
}

/* The absolute path, in our view, of the directory that link (a magic
 * link such as /proc/PID/cwd, whose text the kernel cannot print) leads
 * to: found by walking "..", as getcwd(3) once did. Any length. */
static int dir_path_by_parents(const char *link, char **out)
{
	int cur = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	char **names = NULL;
	int r = 0;
	for (;;) {
		struct stat st, pst;
		int pfd = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0 || fstat(cur, &st) < 0 || fstat(pfd, &pst) < 0) {
			r = -errno;
			if (pfd >= 0)
				close(pfd);
			break;
		}
		close(cur);
		cur = pfd;
		if (st.st_dev == pst.st_dev && st.st_ino == pst.st_ino)
			break; /* "/" is its own parent */
		char *name = NULL;
		if ((r = name_in_parent(pfd, &st, &name)) < 0 || (r = tg_strv_push(&names, name)) < 0) {
			free(name);
			break;
		}
		free(name);
	}
	close(cur);
	_cleanup_sbuf_ struct sbuf b = {0};
	for (size_t i = tg_strv_len(names); r == 0 && i-- > 0;)
		r = sbuf_push(&b, names[i], strlen(names[i]));
	tg_strv_free(names);
	if (r < 0)
		return r;
	*out = sbuf_finish(&b);
	return *out ? 0 : -ENOMEM;
}

/* What one resolution needs to know about the tracee. */
struct walk {
	pid_t pid;
	pid_t tgid;          /* read lazily, for "/proc/self" */
	/* The tracee's root as we see it (kernel-printed paths, of fd and cwd
	 * links, are already in our view: d_path prints for the reader). NULL
	 * when it is our "/". */
	char *root_host;
	int links;           /* symlinks followed so far */
};

static void walk_done(struct walk *w)
{
	int saved = errno;
	free(w->root_host);
	errno = saved;
}

/* Our own root and mount namespace, looked up once: the common case is a
 * tracee that shares both, and then its paths are ours. The namespace is
 * kept as the name readlink gives ("mnt:[4026531841]"): the inode number
 * is unique among live namespaces, and readlink of /proc/PID/ns/mnt only
 * formats it, where stat would build a dentry for it on every stop. The
 * root's mount id (STATX_MNT_ID, Linux 5.8) lets one statx answer both. */
struct self_id {
	dev_t root_dev;
	ino_t root_ino;
	uint64_t root_mnt;
	bool mnt_ok;
	char ns[64];
	bool ok;
};

static const struct self_id *self_id(void)
{
	static struct self_id id;
	static bool done;
	if (!done) {
		struct stat r;
		struct statx sx;
		ssize_t n = readlink("/proc/self/ns/mnt", id.ns, sizeof(id.ns) - 1);
		id.ok = stat("/", &r) == 0 && n > 0 && (size_t)n < sizeof(id.ns) - 1;
		if (id.ok)
			id.ns[n] = '\0';
		id.root_dev = r.st_dev, id.root_ino = r.st_ino;
		id.mnt_ok = id.ok && statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID, &sx) == 0 &&
		            (sx.stx_mask & STATX_MNT_ID) && sx.stx_ino == r.st_ino &&
		            makedev(sx.stx_dev_major, sx.stx_dev_minor) == r.st_dev;
		id.root_mnt = id.mnt_ok ? sx.stx_mnt_id : 0;
		done = true;
	}
	return &id;
}

/* Our pid, asked of the kernel once per process (a syscall costs
 * microseconds on a VM, and a start canonicalises some 70 paths of its
 * own); a fork's child asks again. */
static pid_t cached_pid;

static void forget_pid(void)
{
	cached_pid = 0;
}

static pid_t self_pid(void)
{
	static bool registered;
	if (!registered)
		registered = pthread_atfork(NULL, NULL, forget_pid) == 0;
	if (!registered)
		return getpid();
	if (!cached_pid)
		cached_pid = getpid();
	return cached_pid;
}

/* The tracee's root and mount namespace are ours. The root by stat, not by
 * readlink: d_path prints "/" for roots it cannot reach from ours. */
static bool shares_our_root(pid_t pid)
{
	const struct self_id *me = self_id();
	char path[64], ns[64];
	struct stat st;
	if (!me->ok)
		return false;
	/* One statx: the very mount and directory that are our root. Every
	 * mount namespace has mount objects of its own, so a tracee in another
	 * one has another root mount; and one whose root is ours (an fd kept
	 * across a setns, then chroot(".")) walks our mount tree from it: its
	 * paths are ours. */
	if (me->mnt_ok) {
		struct statx sx;
		snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
		if (statx(AT_FDCWD, path, 0, STATX_INO | STATX_MNT_ID, &sx) < 0)
			return false;
		if (sx.stx_mask & STATX_MNT_ID)
			return sx.stx_mnt_id == me->root_mnt && sx.stx_ino == me->root_ino &&
			       makedev(sx.stx_dev_major, sx.stx_dev_minor) == me->root_dev;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	ssize_t n = readlink(path, ns, sizeof(ns));
	if (n <= 0 || (size_t)n != strlen(me->ns) || memcmp(ns, me->ns, (size_t)n) != 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	return stat(path, &st) == 0 && st.st_dev == me->root_dev && st.st_ino == me->root_ino;
}

/* The tracee's root in our view: readlink of /proc/PID/root, proved by
 * identity (d_path prints something, often "/", for a root it cannot reach
 * from ours: another mount namespace's pivot_root, a root a setns() left
 * behind). A root we cannot name is refused (EACCES): its paths would be
 * judged in the tracee's own view, where "/f" may be anything. */
static __thread pid_t vouched; /* tg_path_vouch_root */

void tg_path_vouch_root(pid_t pid)
{
	vouched = pid;
}

bool tg_path_shares_root(pid_t pid)
{
	return shares_our_root(pid);
}

static int root_of(pid_t pid, char **out)
{
	char proc[64];
	*out = NULL;
	if (pid == self_pid() || (pid > 0 && pid == vouched) || shares_our_root(pid))
		return 0;
	snprintf(proc, sizeof(proc), "/proc/%d/root", (int)pid);
	_cleanup_free_ char *root = NULL;
	int r = readlink_alloc(AT_FDCWD, proc, &root);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	struct stat theirs, ours;
	if (stat(proc, &theirs) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	/* -EREMOTE: the unnamed root, told apart from an unreadable link
	 * (EACCES too: a non-dumpable process, unprivileged). */
	if (root[0] != '/' || stat(root, &ours) < 0 || ours.st_dev != theirs.st_dev ||
	    ours.st_ino != theirs.st_ino)
		return -EREMOTE;
	if (strcmp(root, "/") != 0 && !(*out = tg_path_normalize(root)))
		return -ENOMEM;
	return 0;
}

static int walk_init(struct walk *w, pid_t pid)
{
	*w = (struct walk){ .pid = pid };
	int r = root_of(pid, &w->root_host);
	return r == -EREMOTE ? -EACCES : r;
}

bool tg_path_root_unnamed(pid_t pid)
{
	_cleanup_free_ char *root = NULL;
	return root_of(pid, &root) == -EREMOTE;
}

static pid_t walk_tgid(struct walk *w)
{
	if (w->tgid > 0)
		return w->tgid;
	/* Our own pid is our group's: no /proc/PID/status to read (the
	 * kernel formats all of it, ~20 us, and a start resolves /dev/stdout,
	 * /dev/stderr and /dev/fd through /proc/self when they are pipes). */
	if (w->pid == self_pid())
		return w->tgid = w->pid;
	pid_t g = tg_proc_tgid(w->pid);
	w->tgid = g > 0 ? g : w->pid;
	return w->tgid;
}

/* readlink /proc/PID/<what>: the kernel prints it in our view, also for a
 * chrooted tracee (and also when it lies outside the tracee's root: an fd
 * or a cwd kept from before a chroot). */
static int read_proc_link(const struct walk *w, const char *what, char **out)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)w->pid, what);
	int r = readlink_alloc(AT_FDCWD, path, out);
	/* A directory deeper than PATH_MAX: the kernel cannot print it, but
	 * its path can be found (by its parents, in our view). */
	if (r == -ENAMETOOLONG)
		r = dir_path_by_parents(path, out);
	return r;
}

/* ---- the walk -------------------------------------------------------- */

static char *host_path(const struct sbuf *res, const char *name, size_t n)
{
	return tg_asprintf("%s/%.*s", res->s ? res->s : "", (int)n, name);
}

/* A symlink on procfs is a "magic" link (fd/N, cwd, exe, ns/...): its text
 * is printed by the kernel for the reader, not stored. */
static bool is_magic_link(const char *hpath)
{
	_cleanup_close_ int fd = open(hpath, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct statfs sf;
	return fd >= 0 && fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* Replace *rest with link text + "/" + remaining. */
static int splice_link(char **rest, const char *text, const char *remaining)
{
	char *n = tg_asprintf("%s/%s", text, remaining);
	if (!n)
		return -ENOMEM;
	free(*rest);
	*rest = n;
	return 0;
}

/* The symlinks the resolutions followed while the tracer notes them
 * (tg_path_note_links). Per thread of txguard. */
static __thread struct {
	bool on;
	char **v;
} noted;

void tg_path_note_links(bool on)
{
	tg_strv_free(noted.v);
	noted.v = NULL;
	noted.on = on;
}

char **tg_path_take_links(void)
{
	return steal_pointer(&noted.v);
}

/* Follow the symlink res/name[n]; *rest becomes what is left to walk. On a
 * non-path magic link as the last component, *final gets its text. */
static int follow_link(struct walk *w, struct sbuf *res, const char *hpath, char **rest,
		       const char *remaining, bool last, char **final)
{
	if (++w->links > TG_MAX_SYMLINKS)
		return -ELOOP;
	_cleanup_free_ char *text = NULL;
	int r = readlink_any(hpath, &text);
	if (r < 0)
		return r;
	bool magic = strlen(hpath) < PATH_MAX && is_magic_link(hpath);
	if (noted.on && !magic && (r = tg_strv_push(&noted.v, hpath)) < 0)
		return r;
	if (magic && text[0] != '/' && strchr(text, ':')) {
		/* "pipe:[..]", "socket:[..]", "anon_inode:[..]": not a path.
		 * (Plain procfs links like "mounts" -> "self/mounts" are
		 * relative paths and carry no ':'.) */
		if (!last)
			return -ENOTDIR;
		*final = steal_pointer(&text);
		return 0;
	}
	/* A magic link's text is printed in our view; a stored one is the
	 * tracee's, and an absolute one starts at its root. */
	if (text[0] == '/' && magic) {
		res->len = 0;
		if (res->s)
			res->s[0] = '\0';
		return splice_link(rest, text, remaining);
	}
	if (text[0] == '/' && (r = sbuf_to_root(res)) < 0)
		return r;
	if (res->s)
		res->s[res->len] = '\0';
	return splice_link(rest, text[0] == '/' ? text + 1 : text, remaining);
}

/* "/proc/self" and "/proc/thread-self" name whoever looks them up: map them
 * to the tracee before we look (we would otherwise see ourselves). */
static int map_proc_self(struct walk *w, struct sbuf *res, const char *name, size_t n, bool *mapped)
{
	*mapped = false;
	char buf[64];
	if (n == 4 && memcmp(name, "self", 4) == 0)
		snprintf(buf, sizeof(buf), "%d", (int)walk_tgid(w));
	else if (n == 11 && memcmp(name, "thread-self", 11) == 0)
		snprintf(buf, sizeof(buf), "%d/task/%d", (int)walk_tgid(w), (int)w->pid);
	else
		return 0;
	/* The root of any procfs (its inode 1): "/proc" for us, a chroot's
	 * "/proc" (in our view, under its root), ours reached through an fd
	 * kept from before the chroot: "self" is whoever looks. */
	struct statfs sf;
	struct stat st;
	if (!res->s || !res->len || statfs(res->s, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC ||
	    stat(res->s, &st) < 0 || st.st_ino != 1)
		return 0;
	*mapped = true;
	return lexical_apply(res, buf);
}

/* Walk `path` (relative to res, or absolute) component by component. */
static int walk_path(struct walk *w, struct sbuf *res, const char *path, bool follow, char **out)
{
	/* A trailing slash makes the kernel follow the last component too. */
	size_t plen = strlen(path);
	if (plen > 0 && path[plen - 1] == '/')
		follow = true;
	_cleanup_free_ char *rest = tg_strdup(path);
	if (!rest)
		return -ENOMEM;
	int r0 = rest[0] == '/' ? sbuf_to_root(res) : 0;
	if (r0 < 0)
		return r0;

	for (;;) {
		const char *p = rest, *name;
		size_t n = next_component(&p, &name);
		if (n == 0)
			break;
		const char *after = p;
		const char *peek;
		bool last = next_component(&after, &peek) == 0;
		int r;

		if (is_dot(name, n) || is_dotdot(name, n)) {
			if (is_dotdot(name, n))
				sbuf_pop(res);
			memmove(rest, p, strlen(p) + 1);
			continue;
		}
		if (!last || follow) {
			bool mapped;
			r = map_proc_self(w, res, name, n, &mapped);
			if (r < 0)
				return r;
			if (mapped) {
				memmove(rest, p, strlen(p) + 1);
				continue;
			}
		}
		if (last && !follow) {
			r = sbuf_push(res, name, n);
			if (r < 0)
				return r;
			break;
		}
		_cleanup_free_ char *hpath = host_path(res, name, n);
		if (!hpath)
			return -ENOMEM;
		struct stat st;
		if (lstat_any(hpath, &st) < 0) {
			/* Missing (or unreadable) from here on: the syscall will
			 * fail; name what it would have touched. */
			r = lexical_apply(res, rest);
			if (r < 0)
				return r;
			break;
		}
		if (!S_ISLNK(st.st_mode)) {
			r = sbuf_push(res, name, n);
			if (r < 0)
				return r;
			memmove(rest, p, strlen(p) + 1);
			continue;
		}
		_cleanup_free_ char *remaining = tg_strdup(p);
		if (!remaining)
			return -ENOMEM;
		char *final = NULL;
		r = follow_link(w, res, hpath, &rest, remaining, last, &final);
		if (r < 0)
			return r;
		if (final) {
			*out = final;
			return 0;
		}
	}
	*out = sbuf_finish(res);
	return *out ? 0 : -ENOMEM;
}

/* The cwd the tracer vouches for this stop (tg_path_vouch_cwd). */
static __thread struct {
	pid_t pid;
	const char *known; /* the tracer's */
	char *read;        /* ours, for tg_path_take_cwd */
} cwd_hint;

void tg_path_vouch_cwd(pid_t pid, const char *cwd)
{
	free(cwd_hint.read);
	cwd_hint.pid = pid;
	cwd_hint.known = cwd;
	cwd_hint.read = NULL;
}

char *tg_path_take_cwd(void)
{
	return steal_pointer(&cwd_hint.read);
}

/* The directory a relative path starts from, in the tracee's view. */
static int walk_base(struct walk *w, int dirfd, char **base)
{
	char what[48];
	bool hinted = dirfd == AT_FDCWD && w->pid > 0 && w->pid == cwd_hint.pid;
	if (hinted && (cwd_hint.known || cwd_hint.read)) {
		*base = tg_strdup(cwd_hint.known ? cwd_hint.known : cwd_hint.read);
		return *base ? 0 : -ENOMEM;
	}
	if (dirfd == AT_FDCWD)
		snprintf(what, sizeof(what), "cwd");
	else if (dirfd < 0)
		return -EBADF;
	else
		snprintf(what, sizeof(what), "fd/%d", dirfd);
	int r = read_proc_link(w, what, base);
	if (r == -ENOENT)
		return dirfd == AT_FDCWD ? -ESRCH : -EBADF;
	/* A removed cwd ("... (deleted)") is read again each time. */
	if (r == 0 && hinted && (*base)[0] == '/' && !tg_path_is_kernel_name(*base))
		cwd_hint.read = tg_strdup(*base);
	return r;
}

/* A path the fast path may take: absolute, and every component a plain
 * name (no ".", "..", empty component or trailing slash), not under /proc
 * (whose "self" must be mapped to the tracee). */
static bool plainly_named(const char *p)
{
	if (p[0] != '/' || !p[1] || !strncmp(p, "/proc/", 6) || !strcmp(p, "/proc"))
		return false;
	for (const char *c = p + 1;;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		if (n == 0 || is_dot(c, n) || is_dotdot(c, n))
			return false;
		if (!e)
			return true;
		c = e + 1;
	}
}

bool tg_path_fast_disabled; /* tests: force the walk, to compare the two */

/* The directory of the name the last resolution opened (resolve_plain,
 * without follow), while the tracer keeps it for the journal's lookups of
 * the same call (tg_path_keep_parent). Per thread of txguard. */
static __thread struct {
	bool on;
	int fd;
	size_t len;
	char dir[PATH_MAX];
	/* A followed name's last component, looked at (lstat) through fd:
	 * leaf_err 0 with leaf_st, or -ENOENT; 1 when none was. */
	int leaf_err;
	struct stat leaf_st;
	char leaf[NAME_MAX + 1];
} kept = { .fd = -1, .leaf_err = 1 };

/* Where a followed name's directory is worth keeping (the workspace):
 * tg_path_keep_under. */
static const char *keep_under;

void tg_path_keep_under(const char *dir)
{
	keep_under = dir;
}

static void kept_drop(void)
{
	if (kept.fd >= 0)
		close(kept.fd);
	kept.fd = -1;
}

void tg_path_keep_parent(bool on)
{
	kept_drop();
	kept.on = on;
}

int tg_path_take_parent(const char *path, size_t len, int *leaf_err, struct stat *leaf_st)
{
	if (kept.fd < 0 || len != kept.len || memcmp(path, kept.dir, len) != 0)
		return -1;
	int fd = kept.fd;
	kept.fd = -1;
	/* The lstat only for the very name it was made for. */
	bool same = kept.leaf_err <= 0 && path[len] == '/' && strcmp(path + len + 1, kept.leaf) == 0;
	*leaf_err = same ? kept.leaf_err : 1;
	if (same && kept.leaf_err == 0)
		*leaf_st = kept.leaf_st;
	return fd;
}

/* fd is dir's, an O_PATH directory reached without a symlink: kept while
 * the tracer wants it (taken over), else closed. */
static void keep_or_close(const char *dir, int fd)
{
	size_t len = strlen(dir);
	if (!kept.on || len >= sizeof(kept.dir)) {
		close(fd);
		return;
	}
	kept_drop();
	memcpy(kept.dir, dir, len + 1);
	kept.len = len;
	kept.fd = fd;
	kept.leaf_err = 1;
}

/* A followed name in a directory below the workspace (keep_under): its
 * directory opened, and its last component looked at through it, prove
 * what the one openat2 of the whole path would (no symlink anywhere), and
 * the journal takes both (tg_path_take_parent): its own open of the
 * directory and lstat of the name are saved, one syscall in all. 1: not
 * taken (the directory cannot be opened, or the name is a symlink to
 * follow); 0: proved, kept. A name right in the workspace is not taken:
 * the journal looks it up through its own fd of the workspace. */
static int resolve_followed(char *full)
{
	char *cut = strrchr(full, '/');
	if (!kept.on || !keep_under || cut == full || !tg_path_is_under(full, keep_under))
		return 1;
	*cut = '\0';
	int fd = -1, r = -1, e = 0;
	struct stat st;
	if (strcmp(full, keep_under) != 0) {
		struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
		fd = (int)syscall(SYS_openat2, AT_FDCWD, full, &how, sizeof(how));
		r = fd >= 0 ? fstatat(fd, cut + 1, &st, AT_SYMLINK_NOFOLLOW) : -1;
		e = r < 0 ? errno : 0;
	}
	bool proved = fd >= 0 && ((r == 0 && !S_ISLNK(st.st_mode)) || (r < 0 && e == ENOENT));
	if (proved) {
		keep_or_close(full, fd);
		if (kept.fd == fd && strlen(cut + 1) < sizeof(kept.leaf)) {
			strcpy(kept.leaf, cut + 1);
			kept.leaf_err = r == 0 ? 0 : -ENOENT;
			if (r == 0)
				kept.leaf_st = st;
		}
	} else if (fd >= 0) {
		close(fd);
	}
	*cut = '/';
	return proved ? 0 : 1;
}

/* For a tracee that shares our root: when no component the walk would look
 * at is a symlink, the path is its own resolution. One openat2(2) with
 * RESOLVE_NO_SYMLINKS proves that where the walk makes one lstat per
 * component. 1: not shown (walk instead), 0: *out is *fullp, taken. */
static int resolve_plain(char **fullp, bool follow, char **out)
{
	char *full = *fullp;
	if (!plainly_named(full))
		return 1;
	if (follow && resolve_followed(full) == 0) {
		*out = steal_pointer(fullp);
		return 0;
	}
	/* Without follow the last component is not looked at: its parent is,
	 * unless that is / itself. */
	char *cut = follow ? NULL : strrchr(full, '/');
	if (cut != full) {
		if (cut)
			*cut = '\0';
		/* A parent is opened as a directory, for the journal to look
		 * through (keep_or_close); one that is none, as before. */
		struct open_how how = { .flags = O_PATH | O_CLOEXEC | (cut ? O_DIRECTORY : 0),
			                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
		int fd = (int)syscall(SYS_openat2, AT_FDCWD, full, &how, sizeof(how));
		bool dir = cut && fd >= 0;
		if (cut && fd < 0 && errno == ENOTDIR) {
			how.flags = O_PATH | O_CLOEXEC;
			fd = (int)syscall(SYS_openat2, AT_FDCWD, full, &how, sizeof(how));
		}
		int e = errno;
		if (dir)
			keep_or_close(full, fd);
		else if (fd >= 0)
			close(fd);
		if (cut)
			*cut = '/';
		/* ENOENT: a component is missing (a name about to be created, a
		 * secret this machine does not have), and none before it is a
		 * symlink, which would have been ELOOP. The walk names what is
		 * missing as given: so does this. */
		if (fd < 0 && e != ENOENT)
			return 1;
	}
	*out = steal_pointer(fullp);
	return 0;
}

int tg_path_open_plain(const char *abs, int *fd)
{
	*fd = -1;
	if (!abs || !plainly_named(abs))
		return 0;
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int f = (int)syscall(SYS_openat2, AT_FDCWD, abs, &how, sizeof(how));
	if (f >= 0) {
		*fd = f;
		return 1;
	}
	/* ENOENT: missing, none before it a symlink (that is ELOOP). Any
	 * other failure is the walk's to name. */
	return errno == ENOENT;
}

/* For ourselves, when the fast path above met a symlink: the kernel follows
 * them all, magic links too (/dev/stdout -> /proc/self/fd/1 -> the file),
 * and prints the path of what it reached, in our view, as the walk would
 * name it: four syscalls where the walk makes ~25 for a magic link. Only
 * a path that exists whole and names a file (not "pipe:[..]", not one
 * unlinked meanwhile) is taken; else the walk. Not for a tracee: its
 * "/proc/self" is not ours. 1: not shown (walk instead), 0: *out set,
 * -ENOMEM. */
static int resolve_own(const char *full, bool follow, char **out)
{
	if (strlen(full) >= PATH_MAX)
		return 1;
	_cleanup_close_ int fd = open(full, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return 1;
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	_cleanup_free_ char *text = NULL;
	int r = readlink_alloc(AT_FDCWD, link, &text);
	if (r == -ENOMEM)
		return r;
	static const char deleted[] = " (deleted)";
	size_t n = r == 0 ? strlen(text) : 0;
	if (r < 0 || text[0] != '/' ||
	    (n >= sizeof(deleted) - 1 && !strcmp(text + n - (sizeof(deleted) - 1), deleted)))
		return 1;
	*out = steal_pointer(&text);
	return 0;
}

int tg_path_resolve(pid_t pid, int dirfd, const char *path, bool follow, bool empty_path, char **out)
{
	if (!path || !out)
		return -EINVAL;
	if (path[0] == '\0' && !empty_path)
		return -ENOENT;

	struct walk w __attribute__((cleanup(walk_done))) = {0};
	int r = walk_init(&w, pid);
	if (r < 0)
		return r;

	_cleanup_free_ char *base = NULL;
	if (path[0] != '/') {
		r = walk_base(&w, dirfd, &base);
		if (r < 0)
			return r;
		if (path[0] == '\0') {
			*out = steal_pointer(&base);
			return 0;
		}
		if (base[0] != '/')
			return -ENOTDIR;
	}

	if (!w.root_host && !tg_path_fast_disabled) {
		_cleanup_free_ char *full = path[0] == '/' ? tg_strdup(path) : tg_asprintf("%s/%s", base, path);
		if (!full)
			return -ENOMEM;
		r = resolve_plain(&full, follow, out);
		if (r == 1 && pid == self_pid() && !noted.on) /* the walk notes links */
			r = resolve_own(full, follow, out);
		if (r <= 0)
			return r;
	}

	_cleanup_sbuf_ struct sbuf res = { .root = w.root_host };
	/* cwd and fd links are printed by the kernel fully resolved: no
	 * symlink in them, so they seed the walk lexically. */
	if (base && (r = lexical_apply(&res, base)) < 0)
		return r;
	return walk_path(&w, &res, path, follow, out);
}

int tg_path_of_fd(pid_t pid, int fd, char **out)
{
	if (fd < 0 || !out)
		return fd < 0 ? -EBADF : -EINVAL;
	struct walk w __attribute__((cleanup(walk_done))) = {0};
	int r = walk_init(&w, pid);
	if (r < 0)
		return r;
	char what[48];
	snprintf(what, sizeof(what), "fd/%d", fd);
	r = read_proc_link(&w, what, out);
	return r == -ENOENT ? -EBADF : r;
}
