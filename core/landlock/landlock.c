/* landlock.c — Landlock as a race-free second line (see landlock.h).
 *
 * The kernel's uapi header on build machines often lags the running kernel,
 * so the few structures and access bits used here are declared locally;
 * rights the running kernel does not know are masked off by ABI version.
 */
#include "landlock_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "base/path.h"
#include "base/util.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_EXECUTE      (1ULL << 0)
#define LL_WRITE_FILE   (1ULL << 1)
#define LL_READ_FILE    (1ULL << 2)
#define LL_READ_DIR     (1ULL << 3)
#define LL_REMOVE_DIR   (1ULL << 4)
#define LL_REMOVE_FILE  (1ULL << 5)
#define LL_MAKE_CHAR    (1ULL << 6)
#define LL_MAKE_DIR     (1ULL << 7)
#define LL_MAKE_REG     (1ULL << 8)
#define LL_MAKE_SOCK    (1ULL << 9)
#define LL_MAKE_FIFO    (1ULL << 10)
#define LL_MAKE_BLOCK   (1ULL << 11)
#define LL_MAKE_SYM     (1ULL << 12)
#define LL_REFER        (1ULL << 13) /* ABI 2 */
#define LL_TRUNCATE     (1ULL << 14) /* ABI 3 */

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_READ (LL_EXECUTE | LL_READ_FILE | LL_READ_DIR)
#define LL_WRITE (LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_CHAR | LL_MAKE_DIR | \
		  LL_MAKE_REG | LL_MAKE_SOCK | LL_MAKE_FIFO | LL_MAKE_BLOCK | LL_MAKE_SYM | \
		  LL_REFER | LL_TRUNCATE)
/* The only rights a rule on a non-directory may carry. */
#define LL_FILE_RIGHTS (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE)

/* Devices every process expects to write; ptys for interactive tools. */
static const char *const default_writable[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm", NULL,
};

int tg_landlock_probe(void)
{
#ifdef TG_HAVE_LANDLOCK
	static int abi = -1;
	if (abi < 0) {
		long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
		abi = v > 0 ? (int)v : 0;
	}
	return abi;
#else
	return 0;
#endif
}

/* Filesystem rights this ABI handles. IOCTL_DEV (ABI 5) is left unhandled
 * on purpose: terminal ioctls must keep working and ioctls are not what
 * this boundary is for. Network rights (ABI 4) and scopes (ABI 6) are not
 * handled either: connect() is judged by the tracer's policy, and scoping
 * signals or abstract sockets would break ordinary process trees. */
static uint64_t handled_for_abi(int abi)
{
	uint64_t h = LL_READ | LL_WRITE;
	if (abi < 2)
		h &= ~LL_REFER;
	if (abi < 3)
		h &= ~LL_TRUNCATE;
	return h;
}

/* One ruleset under construction. */
struct ll {
	int fd;
	uint64_t handled;
	size_t nrules;
	char **excl;          /* canonical excluded paths that exist */
	char **places;        /* canonical writable places, the devices first */
	/* Per place, what proving it canonical opened (tg_path_open_plain): an
	 * fd for its rule, ABSENT (no rule), or UNOPENED (build opens it). */
	int *place_fd;
	size_t nfd;           /* place_fd's entries: one per place */
	char **roots;         /* the places build() granted whole: one rule each */
};

enum { UNOPENED = -1, ABSENT = -2 };

/* Rights a rule on an object of this type may carry. */
static uint64_t rights_for(mode_t mode, uint64_t rights)
{
	return S_ISDIR(mode) ? rights : rights & LL_FILE_RIGHTS;
}

static int add_rule_fd(struct ll *ll, int fd, unsigned char type, uint64_t rights);

/* A rule for `name` in dirfd (AT_FDCWD and a full path, or a directory
 * being listed and an entry's name). type is the entry's DT_* from
 * readdir, DT_UNKNOWN when unknown: a known type saves an fstat per rule,
 * which adds up at every start (/etc alone is ~140 rules). */
static int add_rule_at(struct ll *ll, int dirfd, const char *name, unsigned char type, uint64_t rights)
{
	/* A symlink needs no rule: access is checked on what it points to. */
	if (type == DT_LNK)
		return 0;
	_cleanup_close_ int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	/* EACCES: we cannot reach it, and the tree runs with our credentials,
	 * so it could not either: no rule is needed (as nobody, dirs of other
	 * users sit on the way to the secrets in $HOME). */
	if (fd < 0)
		return errno == ENOENT || errno == ELOOP || errno == EACCES ? 0 : -errno;
	return add_rule_fd(ll, fd, type, rights);
}

/* The rule for what fd (O_PATH) names, of DT_* type (DT_UNKNOWN: fstat). */
static int add_rule_fd(struct ll *ll, int fd, unsigned char type, uint64_t rights)
{
	struct stat st = { .st_mode = type == DT_DIR ? S_IFDIR : S_IFREG };
	bool stated = type == DT_UNKNOWN;
	if (stated && fstat(fd, &st) < 0)
		return -errno;
	for (;;) {
		if (S_ISLNK(st.st_mode))
			return 0;
		struct ll_path_beneath_attr attr = {
			.allowed_access = rights_for(st.st_mode, rights) & ll->handled,
			.parent_fd = fd,
		};
		if (attr.allowed_access == 0)
			return 0;
		if (syscall(SYS_landlock_add_rule, ll->fd, LL_RULE_PATH_BENEATH, &attr, 0) == 0)
			break;
		/* EINVAL: directory rights on what is no longer a directory
		 * (replaced since readdir): ask the inode itself, once. */
		if (errno != EINVAL || stated)
			return -errno;
		if (fstat(fd, &st) < 0)
			return -errno;
		stated = true;
	}
	ll->nrules++;
	return 0;
}

static int add_rule(struct ll *ll, const char *path, uint64_t rights)
{
	return add_rule_at(ll, AT_FDCWD, path, DT_UNKNOWN, rights);
}

static bool is_excluded(const struct ll *ll, const char *path)
{
	for (size_t i = 0; ll->excl && ll->excl[i]; i++)
		if (tg_path_is_under(path, ll->excl[i]))
			return true;
	return false;
}

/* Some excluded path lies strictly beneath `path`. */
static bool excl_beneath(const struct ll *ll, const char *path)
{
	for (size_t i = 0; ll->excl && ll->excl[i]; i++)
		if (tg_path_is_under(ll->excl[i], path) && strcmp(ll->excl[i], path) != 0)
			return true;
	return false;
}

static void closedirp(DIR **d)
{
	int saved = errno;
	if (*d)
		closedir(*d);
	errno = saved;
}

static int grant_except(struct ll *ll, int dirfd, const char *name, unsigned char type, const char *path,
                        uint64_t rights);

/* path is an ancestor of an excluded path: grant each entry separately. */
static int grant_entries(struct ll *ll, const char *path, uint64_t rights)
{
	__attribute__((cleanup(closedirp))) DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -errno;
	struct dirent *de;
	while ((errno = 0, de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		_cleanup_free_ char *child = tg_asprintf("%s%s%s", path, strcmp(path, "/") ? "/" : "", de->d_name);
		if (!child)
			return -ENOMEM;
		int r = grant_except(ll, dirfd(d), de->d_name, de->d_type, child, rights);
		if (r < 0)
			return r;
	}
	return errno ? -errno : 0;
}

/* Grant `rights` beneath path (name in dirfd, of DT_* type), minus the
 * excluded subtrees. */
static int grant_except(struct ll *ll, int dirfd, const char *name, unsigned char type, const char *path,
                        uint64_t rights)
{
	if (is_excluded(ll, path))
		return 0;
	if (!excl_beneath(ll, path))
		return add_rule_at(ll, dirfd, name, type, rights);
	if (type == DT_UNKNOWN) {
		struct stat st;
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT || errno == EACCES ? 0 : -errno;
		type = S_ISLNK(st.st_mode) ? DT_LNK : DT_DIR;
	}
	if (type == DT_LNK)
		return 0;
	return grant_entries(ll, path, rights);
}

static int grant_except_path(struct ll *ll, const char *path, uint64_t rights)
{
	return grant_except(ll, AT_FDCWD, path, DT_UNKNOWN, path, rights);
}

/* Place i: through the fd that proved it canonical, when it is granted
 * whole; else as any path. */
static int grant_place(struct ll *ll, size_t i, uint64_t rights)
{
	const char *place = ll->places[i];
	int fd = i < ll->nfd ? ll->place_fd[i] : UNOPENED;
	if (fd == UNOPENED || is_excluded(ll, place) || excl_beneath(ll, place))
		return grant_except_path(ll, place, rights);
	return fd == ABSENT ? 0 : add_rule_fd(ll, fd, DT_UNKNOWN, rights);
}

/* Directories on the way to an excluded path keep their listing: READ_DIR
 * on "/" (it applies beneath, to directories only). */
static int grant_listing(struct ll *ll)
{
	if (!ll->excl)
		return 0;
	return add_rule(ll, "/", LL_READ_DIR);
}

/* Canonical form of an absolute path in our own view: symlinks resolved as
 * far as the path exists, the rest kept lexically. */
static int canonical(pid_t self, const char *p, char **out)
{
	if (!p || p[0] != '/')
		return -EINVAL;
	return tg_path_resolve(self, AT_FDCWD, p, true, false, out);
}

/* Nor does a secret that we cannot read (a file) or enter and list (a
 * directory): the tree runs with our credentials under no_new_privs, so it
 * cannot either. Unprivileged, that spares /etc/shadow & co. the ~140
 * rules it takes to keep one file of /etc from being read. */
static bool unreadable(const char *path, mode_t mode)
{
	if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0 || errno != EACCES)
		return false;
	return !S_ISDIR(mode) || (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) < 0 && errno == EACCES);
}

static bool listed(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static int push_canonical(pid_t self, char ***v, const char *p, bool existing)
{
	/* Most secrets a policy names do not exist on a given machine: one
	 * lstat (which follows the symlinks on the way as the walk would)
	 * settles those without resolving them component by component. */
	struct stat st;
	if (existing && p && p[0] == '/' && lstat(p, &st) < 0 && errno == ENOENT)
		return 0;
	/* The policy's writable places repeat the devices above: a name
	 * already in the list is its own canonical form (resolving is
	 * idempotent), no need to resolve it again. */
	if (p && listed(*v, p))
		return 0;
	_cleanup_free_ char *c = NULL;
	int r = canonical(self, p, &c);
	if (r < 0)
		return r;
	if (existing) {
		int e = lstat(c, &st) < 0 ? errno : 0;
		if (e == ENOENT || unreadable(c, e ? 0 : st.st_mode))
			return 0;
	}
	/* Or name them another way (a symlink, "/tmp/"). */
	return listed(*v, c) ? 0 : tg_strv_push(v, c);
}

/* A writable place, with what proving it canonical opened: a place that
 * is its own canonical form (most are) is opened once, for both. */
static int push_place(pid_t self, struct ll *ll, const char *p)
{
	size_t n = tg_strv_len(ll->places);
	int *v = realloc(ll->place_fd, (n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ll->place_fd = v;
	int fd = UNOPENED;
	int r = p && !listed(ll->places, p) ? tg_path_open_plain(p, &fd) : 0;
	if (r == 0) {
		fd = UNOPENED;
		r = push_canonical(self, &ll->places, p, false);
	} else if ((r = tg_strv_push(&ll->places, p)) == 0 && fd < 0) {
		fd = ABSENT;
	}
	if (r == 0 && tg_strv_len(ll->places) > n) {
		v[n] = fd;
		ll->nfd = n + 1;
	} else if (fd >= 0) {
		close(fd);
	}
	return r;
}

static void places_clear(struct ll *ll)
{
	for (size_t i = 0; i < ll->nfd; i++)
		if (ll->place_fd[i] >= 0)
			close(ll->place_fd[i]);
	free(ll->place_fd);
	ll->place_fd = NULL;
	ll->nfd = 0;
	tg_strv_free(ll->places);
	ll->places = NULL;
}

/* The spec's places in canonical form, once for the ruleset and its view. */
static int collect(struct ll *ll, const struct tg_landlock_spec *spec)
{
	const char *const *lists[] = { spec->deny_read, spec->hidden };
	size_t counts[] = { spec->ndeny_read, spec->nhidden };
	pid_t self = getpid();
	int r = 0;
	/* A secret that does not exist has nothing to hide, and excluding it
	 * would cost every directory on its way the right to get new entries
	 * (~/.cargo/credentials.toml would make ~/.cargo half-writable). */
	for (size_t l = 0; l < TG_ARRAY_SIZE(lists); l++)
		for (size_t i = 0; r == 0 && i < counts[l]; i++)
			r = push_canonical(self, &ll->excl, lists[l][i], true);
	for (size_t i = 0; r == 0 && default_writable[i]; i++)
		r = push_place(self, ll, default_writable[i]);
	for (size_t i = 0; r == 0 && i < spec->nwritable; i++)
		r = push_place(self, ll, spec->writable[i]);
	return r;
}

static int build(struct ll *ll)
{
	int r = grant_except_path(ll, "/", LL_READ);
	if (r < 0)
		return r;
	r = grant_listing(ll);
	for (size_t i = 0; r >= 0 && ll->places && ll->places[i]; i++) {
		const char *place = ll->places[i];
		size_t before = ll->nrules;
		r = grant_place(ll, i, LL_READ | LL_WRITE);
		/* Granted whole: its one rule, and no exclusion at or in it
		 * (then its entries were granted one by one, if any). */
		if (r >= 0 && ll->nrules == before + 1 && !is_excluded(ll, place) && !excl_beneath(ll, place))
			r = tg_strv_push(&ll->roots, place);
	}
	return r;
}

int tg_landlock_view_new(const struct tg_landlock_spec *spec, struct tg_landlock_view **out)
{
	*out = NULL;
	struct ll ll = { .fd = -1 };
	int r = collect(&ll, spec);
	if (r == 0)
		r = tg_landlock_view_from(ll.excl, ll.places, out);
	tg_strv_free(ll.excl);
	places_clear(&ll);
	return r;
}

int tg_landlock_build(const struct tg_landlock_spec *spec, size_t *nrules)
{
	return tg_landlock_build_viewed(spec, nrules, NULL);
}

int tg_landlock_build_viewed(const struct tg_landlock_spec *spec, size_t *nrules,
                             struct tg_landlock_view **view)
{
	if (view)
		*view = NULL;
	if (!spec)
		return -EINVAL;
	int abi = tg_landlock_probe();
	if (abi <= 0)
		return -EOPNOTSUPP;
	struct ll ll = { .fd = -1, .handled = handled_for_abi(abi) };
	struct ll_ruleset_attr attr = { .handled_access_fs = ll.handled };
	ll.fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ll.fd < 0)
		return -errno;
	int r = collect(&ll, spec);
	if (r == 0)
		r = build(&ll);
	if (r >= 0 && view)
		r = tg_landlock_view_of(ll.excl, ll.roots, view);
	tg_strv_free(ll.excl);
	places_clear(&ll);
	tg_strv_free(ll.roots);
	if (r < 0) {
		close(ll.fd);
		return r;
	}
	if (nrules)
		*nrules = ll.nrules;
	return ll.fd;
}

int tg_landlock_grant_own_proc(int ruleset_fd)
{
	/* /proc/self names the caller's own /proc/PID: the rule is on that
	 * inode, so it lasts across exec (the pid stays) and no other process
	 * gets it. */
	_cleanup_close_ int fd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct ll_path_beneath_attr attr = {
		.allowed_access = (LL_WRITE_FILE | LL_TRUNCATE) & handled_for_abi(tg_landlock_probe()),
		.parent_fd = fd,
	};
	if (syscall(SYS_landlock_add_rule, ruleset_fd, LL_RULE_PATH_BENEATH, &attr, 0) < 0)
		return -errno;
	return 0;
}

int tg_landlock_enforce(int ruleset_fd)
{
	/* Required by landlock_restrict_self() without CAP_SYS_ADMIN, and by
	 * the seccomp filter installed right after. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_landlock_restrict_self, ruleset_fd, 0) < 0)
		return -errno;
	return 0;
}

int tg_landlock_restrict(const struct tg_landlock_spec *spec)
{
	int fd = tg_landlock_build(spec, NULL);
	if (fd < 0)
		return fd;
	_cleanup_close_ int rfd = fd;
	return tg_landlock_enforce(rfd);
}
