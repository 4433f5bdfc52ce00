/* base/fs.c — symlink-proof workspace walks (base/fs.h). */
#include "fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util.h"

/* The parent directory in one openat2(2): no symlink, no escape from the
 * workspace, the same guarantees as the component walk below at a fraction
 * of its syscalls (it runs at every journaled call). Returns -ENOSYS when
 * openat2 cannot do it (old kernel, a path longer than PATH_MAX), and the
 * caller walks instead. */
static int parent_openat2(int wsfd, const char *rel, size_t dirlen)
{
	static bool unsupported;
	if (unsupported || dirlen >= PATH_MAX)
		return -ENOSYS;
	char dir[PATH_MAX];
	memcpy(dir, rel, dirlen);
	dir[dirlen] = '\0';
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, wsfd, dir, &how, sizeof(how));
	if (fd >= 0)
		return fd;
	switch (errno) {
	case ENOSYS:
	case E2BIG:
		unsupported = true;
		return -ENOSYS;
	case EAGAIN:
	case ENAMETOOLONG:
		return -ENOSYS;
	case EXDEV:
		return -ELOOP;   /* an escape: as a symlink component would be */
	default:
		return -errno;
	}
}

/* The directories of rel's first len bytes under rootfd, one openat each,
 * never through a symlink (empty components skipped): a close-on-exec
 * O_DIRECTORY fd (with `oflags`, O_RDONLY or O_PATH), or -errno. */
static int walk_dirs(int rootfd, const char *rel, size_t len, int oflags)
{
	_cleanup_free_ char *copy = tg_strndup(rel, len);
	if (!copy)
		return -ENOMEM;
	int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	char *save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, c, oflags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		if (next < 0)
			return -e;
		fd = next;
	}
	return fd;
}

int tg_fs_parent(int wsfd, const char *rel, const char **leaf)
{
	if (!rel[0])
		return -EINVAL;
	const char *slash = strrchr(rel, '/');
	*leaf = slash ? slash + 1 : rel;
	if (slash) {
		int pfd = parent_openat2(wsfd, rel, (size_t)(slash - rel));
		if (pfd != -ENOSYS)
			return pfd;
	}
	return walk_dirs(wsfd, rel, slash ? (size_t)(slash - rel) : 0, O_PATH);
}

/* A parent that is not a directory (any more) holds nothing. */
static int lstat_err(int e)
{
	return e == -ENOTDIR || e == -ELOOP ? -ENOENT : e;
}

int tg_fs_lstat(int wsfd, const char *rel, struct stat *st)
{
	if (!rel[0])
		return fstat(wsfd, st) < 0 ? -errno : 0;
	/* One component: nothing to resolve but the name itself. */
	if (!strchr(rel, '/'))
		return fstatat(wsfd, rel, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	const char *leaf;
	_cleanup_close_ int pfd = tg_fs_parent(wsfd, rel, &leaf);
	if (pfd < 0)
		return lstat_err(pfd);
	return fstatat(pfd, leaf, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

void tg_fs_dircache_clear(struct tg_fs_dircache *c)
{
	if (c->parent && c->fd >= 0)
		close(c->fd);
	free(c->parent);
	c->parent = NULL;
	c->have_st = false;
	free(c->leaf);
	c->leaf = NULL;
}

void tg_fs_dircache_seed(struct tg_fs_dircache *c, const char *rel, size_t plen, int fd, int leaf_err,
                         const struct stat *leaf_st)
{
	tg_fs_dircache_clear(c);
	if (!(c->parent = tg_strndup(rel, plen))) {
		close(fd);
		return;
	}
	c->fd = fd;
	if (leaf_err <= 0 && (c->leaf = tg_strdup(rel + plen + 1))) {
		c->leaf_err = leaf_err;
		if (leaf_err == 0)
			c->leaf_st = *leaf_st;
	}
}

/* Where rel's last component is to be looked up through cache c: *dfd
 * (c's fd, or wsfd for a name with no slash) and *name. 1: rel is c's
 * directory itself (*dfd is its fd, *name ""). 0, or -errno from the
 * parent's resolution (lstat's view: a parent that is no directory holds
 * nothing). */
int tg_fs_parent_cached(int wsfd, struct tg_fs_dircache *c, const char *rel, const char **leaf)
{
	const char *slash = strrchr(rel, '/');
	if (!slash) {
		*leaf = rel;
		return wsfd;
	}
	size_t plen = (size_t)(slash - rel);
	if (!c->parent || strlen(c->parent) != plen || memcmp(c->parent, rel, plen) != 0) {
		tg_fs_dircache_clear(c);
		const char *l;
		c->parent = tg_strndup(rel, plen);
		if (!c->parent)
			return -ENOMEM;
		c->fd = tg_fs_parent(wsfd, rel, &l);
	}
	*leaf = slash + 1;
	return c->fd;
}

static int cached_at(int wsfd, struct tg_fs_dircache *c, const char *rel, int *dfd, const char **name)
{
	if (c->parent && c->fd >= 0 && strcmp(rel, c->parent) == 0) {
		*dfd = c->fd, *name = "";
		return 1;
	}
	int fd = tg_fs_parent_cached(wsfd, c, rel, name);
	if (fd < 0)
		return lstat_err(fd);
	*dfd = fd;
	return 0;
}

int tg_fs_lstat_cached(int wsfd, struct tg_fs_dircache *c, const char *rel, struct stat *st)
{
	if (!rel[0])
		return tg_fs_lstat(wsfd, rel, st);
	int dfd;
	const char *name;
	int r = cached_at(wsfd, c, rel, &dfd, &name);
	if (r < 0)
		return r;
	if (r == 1 && c->have_st) {
		*st = c->st;
		return 0;
	}
	if (r == 0 && c->leaf && dfd == c->fd && strcmp(name, c->leaf) == 0) {
		int e = c->leaf_err;
		if (e == 0)
			*st = c->leaf_st;
		free(c->leaf);
		c->leaf = NULL;
		return e;
	}
	if (fstatat(dfd, name, st, r == 1 ? AT_EMPTY_PATH : AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (r == 1)
		c->st = *st, c->have_st = true;
	return 0;
}

int tg_fs_lstatx_cached(int wsfd, struct tg_fs_dircache *c, const char *rel, struct stat *st, struct statx *sx)
{
	int dfd = wsfd;
	const char *name = "";
	int r = rel[0] ? cached_at(wsfd, c, rel, &dfd, &name) : 1;
	if (r < 0)
		return r;
	int flags = AT_STATX_SYNC_AS_STAT | (r == 1 ? AT_EMPTY_PATH : AT_SYMLINK_NOFOLLOW);
	if (statx(dfd, name, flags, STATX_BASIC_STATS | STATX_BTIME, sx) < 0) {
		sx->stx_mask = 0;
		return -errno;
	}
	tg_fs_stat_of_statx(st, sx);
	/* The cached directory's own (not the workspace's, for rel ""). */
	if (r == 1 && rel[0])
		c->st = *st, c->have_st = true;
	return 0;
}

void tg_fs_stat_of_statx(struct stat *st, const struct statx *sx)
{
	*st = (struct stat){
		.st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor),
		.st_ino = sx->stx_ino,
		.st_mode = sx->stx_mode,
		.st_nlink = sx->stx_nlink,
		.st_uid = sx->stx_uid,
		.st_gid = sx->stx_gid,
		.st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor),
		.st_size = (off_t)sx->stx_size,
		.st_blksize = (blksize_t)sx->stx_blksize,
		.st_blocks = (blkcnt_t)sx->stx_blocks,
		.st_atim = { sx->stx_atime.tv_sec, sx->stx_atime.tv_nsec },
		.st_mtim = { sx->stx_mtime.tv_sec, sx->stx_mtime.tv_nsec },
		.st_ctim = { sx->stx_ctime.tv_sec, sx->stx_ctime.tv_nsec },
	};
}

int tg_fs_open_path(int wsfd, const char *rel)
{
	if (!rel[0]) {
		int fd = fcntl(wsfd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	const char *leaf;
	_cleanup_close_ int pfd = tg_fs_parent(wsfd, rel, &leaf);
	if (pfd < 0)
		return pfd;
	int fd = openat(pfd, leaf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int blob_add(char **blob, size_t *len, const char *name, const char *val, uint32_t vl)
{
	uint32_t nl = (uint32_t)strlen(name);
	char *nb = realloc(*blob, *len + 8 + nl + vl);
	if (!nb)
		return -ENOMEM;
	memcpy(nb + *len, &nl, 4);
	memcpy(nb + *len + 4, name, nl);
	memcpy(nb + *len + 4 + nl, &vl, 4);
	memcpy(nb + *len + 8 + nl, val, vl);
	*blob = nb;
	*len += 8 + nl + vl;
	return 0;
}

/* listxattr into a malloc'd buffer; *n = its length (0: none). */
/* The xattr names of the object behind an O_PATH fd, through its
 * /proc/self/fd link (the *xattr calls take no O_PATH fd); proc receives
 * that link for the calls that follow. */
static int list_names(int pathfd, char proc[static 64], char **out, ssize_t *n)
{
	snprintf(proc, 64, "/proc/self/fd/%d", pathfd);
	*out = NULL;
	*n = listxattr(proc, NULL, 0);
	if (*n < 0)
		return errno == ENOTSUP || errno == EPERM ? (*n = 0) : -errno;
	if (*n == 0)
		return 0;
	*out = malloc((size_t)*n);
	if (!*out)
		return -ENOMEM;
	*n = listxattr(proc, *out, (size_t)*n);
	return *n < 0 ? -errno : 0;
}

bool tg_fs_xattr_journaled(const char *name)
{
	return !strncmp(name, "user.", 5) || !strncmp(name, "trusted.", 8) ||
	       !strcmp(name, "system.posix_acl_access") || !strcmp(name, "system.posix_acl_default") ||
	       !strcmp(name, "security.capability");
}

int tg_fs_get_xattrs(int pathfd, char **blob, size_t *len)
{
	char proc[64];
	*blob = NULL;
	*len = 0;
	_cleanup_free_ char *names = NULL;
	ssize_t n;
	int r = list_names(pathfd, proc, &names, &n);
	for (ssize_t i = 0; r == 0 && i < n; i += (ssize_t)strlen(names + i) + 1) {
		const char *name = names + i;
		if (!tg_fs_xattr_journaled(name))
			continue;
		ssize_t vl = getxattr(proc, name, NULL, 0);
		_cleanup_free_ char *val = vl >= 0 ? malloc((size_t)vl + 1) : NULL;
		if (vl < 0 || !val) {
			r = vl < 0 ? -errno : -ENOMEM;
			break;
		}
		vl = getxattr(proc, name, val, (size_t)vl);
		r = vl < 0 ? -errno : blob_add(blob, len, name, val, (uint32_t)vl);
	}
	if (r < 0) {
		free(*blob);
		*blob = NULL;
		*len = 0;
	}
	return r;
}

/* One entry of an xattr blob at *p: false at the end, or (*bad) when the blob
 * is corrupt — a name or value length running past the bytes left must never
 * be read through (the blob comes from a journal record, i.e. from disk). */
static bool blob_next(const char *blob, size_t len, size_t *p, const char **name,
                      uint32_t *nl, const char **val, uint32_t *vl, bool *bad)
{
	*bad = false;
	if (*p >= len)
		return false;
	if (len - *p < 8) {
		*bad = true;
		return false;
	}
	memcpy(nl, blob + *p, 4);
	if (*nl > len - *p - 8) {
		*bad = true;
		return false;
	}
	memcpy(vl, blob + *p + 4 + *nl, 4);
	if (*vl > len - *p - 8 - *nl) {
		*bad = true;
		return false;
	}
	*name = blob + *p + 4;
	*val = blob + *p + 8 + *nl;
	*p += 8 + (size_t)*nl + *vl;
	return true;
}

static bool blob_has(const char *blob, size_t len, const char *name)
{
	size_t p = 0;
	const char *n, *v;
	uint32_t nl, vl;
	bool bad;
	while (blob_next(blob, len, &p, &n, &nl, &v, &vl, &bad))
		if (strlen(name) == nl && memcmp(n, name, nl) == 0)
			return true;
	return false;
}

/* Does the object already hold exactly this value? */
static bool xattr_is(const char *proc, const char *name, const char *val, uint32_t vl)
{
	char small[256];
	ssize_t n = getxattr(proc, name, small, sizeof(small));
	if (n >= 0)
		return (size_t)n == vl && memcmp(small, val, vl) == 0;
	if (errno != ERANGE)
		return false;
	_cleanup_free_ char *big = malloc((size_t)vl + 1);
	n = big ? getxattr(proc, name, big, (size_t)vl + 1) : -1;
	return n >= 0 && (size_t)n == vl && memcmp(big, val, vl) == 0;
}

/* Whole blob well formed? Checked before anything is removed, so a corrupt
 * record changes nothing. */
static bool blob_valid(const char *blob, size_t len)
{
	size_t p = 0;
	const char *n, *v;
	uint32_t nl, vl;
	bool bad = false;
	while (blob_next(blob, len, &p, &n, &nl, &v, &vl, &bad))
		;
	return !bad;
}

int tg_fs_set_xattrs(int pathfd, const char *blob, size_t len)
{
	return tg_fs_set_xattrs_ns(pathfd, blob, len, false);
}

int tg_fs_set_xattrs_ns(int pathfd, const char *blob, size_t len, bool all)
{
	if (len > 0 && !blob)
		return -EBADMSG;
	if (!blob_valid(blob, len))
		return -EBADMSG;
	char proc[64];
	_cleanup_free_ char *names = NULL;
	ssize_t n;
	int r = list_names(pathfd, proc, &names, &n);
	for (ssize_t i = 0; r == 0 && i < n; i += (ssize_t)strlen(names + i) + 1) {
		bool ours = all ? tg_fs_xattr_journaled(names + i) : strncmp(names + i, "user.", 5) == 0;
		if (ours && !blob_has(blob, len, names + i) && removexattr(proc, names + i) < 0 &&
		    errno != ENODATA)
			r = -errno;
	}
	size_t p = 0;
	const char *nm, *val;
	uint32_t nl, vl;
	bool bad;
	while (r == 0 && blob_next(blob, len, &p, &nm, &nl, &val, &vl, &bad)) {
		_cleanup_free_ char *name = tg_strndup(nm, nl);
		if (!name)
			return -ENOMEM;
		if (!xattr_is(proc, name, val, vl) && setxattr(proc, name, val, vl, 0) < 0)
			r = -errno;
	}
	return r;
}

DIR *tg_fs_opendir(int dfd)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return d;
}

struct dirent *tg_fs_readdir(DIR *d)
{
	struct dirent *de;
	while ((de = readdir(d)) && (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")))
		;
	return de;
}

static int remove_children(int dfd, size_t *left)
{
	DIR *d = tg_fs_opendir(dfd);
	if (!d)
		return -errno;
	int r = 0;
	struct dirent *de;
	while ((de = tg_fs_readdir(d))) {
		int q = tg_fs_remove_tree_upto(dirfd(d), de->d_name, left);
		if (q > 0) { /* out of budget: what is left stays */
			r = r ? r : q;
			break;
		}
		if (q < 0 && !r)
			r = q;
	}
	closedir(d);
	return r;
}

int tg_fs_remove_tree_upto(int dirfd, const char *name, size_t *left)
{
	if (!*left)
		return 1;
	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) {
		--*left;
		return 0;
	}
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	int r = remove_children(fd, left);
	close(fd);
	if (r)
		return r;
	if (!*left)
		return 1;
	--*left;
	return unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : -errno;
}

int tg_fs_remove_tree(int dirfd, const char *name)
{
	size_t all = SIZE_MAX;
	return tg_fs_remove_tree_upto(dirfd, name, &all);
}

int tg_fs_mkdir_p(const char *abs)
{
	/* Mostly there already, or only the last name missing: one call. */
	if (mkdir(abs, 0700) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
	_cleanup_free_ char *p = tg_strdup(abs);
	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -errno;
		*s = c;
		if (!c)
			return 0;
	}
}

int tg_fs_open_dir_at(int rootfd, const char *rel)
{
	return walk_dirs(rootfd, rel, strlen(rel), O_RDONLY);
}

int tg_fs_mkdirs_at(int rootfd, const char *rel, mode_t mode)
{
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (const char *p = rel; fd >= 0 && *p;) {
		size_t n = strcspn(p, "/");
		_cleanup_free_ char *name = tg_strndup(p, n);
		p += n + (p[n] == '/');
		if (!name) {
			close(fd);
			return -ENOMEM;
		}
		if (!*name)
			continue;
		if (mkdirat(fd, name, mode) < 0 && errno != EEXIST) {
			int e = -errno;
			close(fd);
			return e;
		}
		int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = sub < 0 ? -errno : 0;
		close(fd);
		if (e < 0)
			return e;
		fd = sub;
	}
	return fd < 0 ? -errno : fd;
}

/* Bytes of in into out: a reflink, else copy_file_range, else read/write. */
static int copy_bytes(int in, int out)
{
	if (ioctl(out, FICLONE, in) == 0)
		return 0;
	for (;;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
		if (n == 0)
			return 0;
		if (n > 0)
			continue;
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			return -errno;
		break;
	}
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno != EINTR)
				return -errno;
			off += w > 0 ? w : 0;
		}
	}
}

int tg_fs_copy_node(int sdir, const char *sname, const struct stat *st, int ddir, const char *dname)
{
	const struct timespec times[2] = { st->st_atim, st->st_mtim };
	const mode_t perm = st->st_mode & 07777;
	int e = 0;
	if (S_ISREG(st->st_mode)) {
		_cleanup_close_ int in = openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (in < 0)
			return -errno;
		_cleanup_close_ int out = openat(ddir, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0)
			return -errno;
		e = copy_bytes(in, out);
		if (!e && fchown(out, st->st_uid, st->st_gid) < 0 && errno != EPERM)
			e = -errno;
		if (!e && (fchmod(out, perm) < 0 || futimens(out, times) < 0))
			e = -errno;
		if (e < 0)
			(void)unlinkat(ddir, dname, 0);
		return e;
	}
	if (S_ISLNK(st->st_mode)) {
		char target[PATH_MAX + 1];
		ssize_t n = readlinkat(sdir, sname, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (symlinkat(target, ddir, dname) < 0)
			return -errno;
	} else if (S_ISDIR(st->st_mode)) {
		return -EISDIR;
	} else if (mknodat(ddir, dname, (st->st_mode & S_IFMT) | 0600, st->st_rdev) < 0) {
		return -errno;
	}
	if (fchownat(ddir, dname, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != EPERM)
		return -errno;
	if (!S_ISLNK(st->st_mode) && fchmodat(ddir, dname, perm, 0) < 0)
		return -errno;
	return utimensat(ddir, dname, times, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int fsync_fd(int fd)
{
	return fsync(fd) < 0 ? -errno : 0;
}

int tg_fs_fsync_dir(int dirfd)
{
	return fsync_fd(dirfd);
}

int tg_fs_syncset_add(struct tg_fs_syncset *set, int fd)
{
	if (!set)
		return fsync_fd(fd);
	int e = 0, dup = -1;
	if (set->n == TG_FS_SYNCSET_MAX)
		e = fsync_fd(fd); /* no room: durable now, as without a set */
	else if ((dup = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		e = -errno;
	else {
		/* Only a hint: where it is not supported, the fsync does it all. */
		(void)sync_file_range(dup, 0, 0, SYNC_FILE_RANGE_WRITE);
		set->fd[set->n++] = dup;
	}
	if (e && !set->err)
		set->err = e;
	return e;
}

int tg_fs_syncset_flush(struct tg_fs_syncset *set)
{
	int e = set->err;
	for (size_t i = 0; !e && i < set->n; i++)
		if (fsync(set->fd[i]) < 0)
			e = -errno;
	tg_fs_syncset_drop(set);
	return e;
}

void tg_fs_syncset_drop(struct tg_fs_syncset *set)
{
	for (size_t i = 0; i < set->n; i++)
		close(set->fd[i]);
	set->n = 0;
	set->err = 0;
}

char *tg_fs_dirname(const char *rel)
{
	const char *slash = strrchr(rel, '/');
	return slash ? tg_strndup(rel, (size_t)(slash - rel)) : tg_strdup("");
}

int tg_fs_walk_subtree(int dfd, const char *prefix, int (*cb)(void *ud, const char *path), void *ud)
{
	DIR *d = tg_fs_opendir(dfd);
	if (!d)
		return 0;
	int e = 0;
	struct dirent *de;
	while (!e && (de = tg_fs_readdir(d))) {
		_cleanup_free_ char *p = tg_asprintf("%s/%s", prefix, de->d_name);
		e = p ? cb(ud, p) : -ENOMEM;
		/* Only a directory has entries; d_type spares an open of each
		 * file (DT_UNKNOWN: the filesystem does not say, so try). */
		bool may_dir = de->d_type == DT_DIR || de->d_type == DT_UNKNOWN;
		int sub = e || !may_dir ? -1 : openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			e = tg_fs_walk_subtree(sub, p, cb, ud);
			close(sub);
		}
	}
	closedir(d);
	return e;
}
