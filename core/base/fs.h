/* base/fs.h — workspace-relative filesystem access that never follows a
 * symlink and never builds one long path (so PATH_MAX cannot bite): every
 * walk is openat() one component at a time from the workspace dirfd with
 * O_NOFOLLOW. Internal to the journal module.
 */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* An O_PATH fd on the directory containing rel, *leaf = its last component.
 * rel must not be "" (the workspace itself has no parent in the workspace).
 * A symlink or non-directory on the way gives -ENOTDIR/-ELOOP. */
int tg_fs_parent(int wsfd, const char *rel, const char **leaf);

/* lstat of rel ("" = the workspace). */
int tg_fs_lstat(int wsfd, const char *rel, struct stat *st);

/* tg_fs_lstat for a run of paths in sorted order: the parent directory of
 * the previous path is kept open (or its error kept), so siblings cost one
 * fstatat each, and the parent's own stat is taken once. Zero-initialise;
 * tg_fs_dircache_clear when done. Only for a tree that nothing else is
 * changing while the cache lives (commit, history, one trapped call: the
 * tree's directory changes are all trapped calls, which wait for it). */
struct tg_fs_dircache {
	char *parent;   /* rel of the cached parent; NULL: empty */
	int fd;         /* its fd, or -errno of opening it */
	bool have_st;   /* st holds the parent's own lstat */
	struct stat st;
	/* One name's lstat through fd, known before the first lookup asks
	 * (tg_fs_dircache_seed): given once, to that first lstat of it. */
	char *leaf;
	int leaf_err;   /* 0: leaf_st; else -errno */
	struct stat leaf_st;
};
int tg_fs_lstat_cached(int wsfd, struct tg_fs_dircache *c, const char *rel, struct stat *st);
/* The same with statx (STATX_BASIC_STATS and the birth time), st filled
 * from it. Asked for the cached directory itself, either answers from its
 * fd (the directory the last lookup went through: one syscall, not three). */
struct statx;
int tg_fs_lstatx_cached(int wsfd, struct tg_fs_dircache *c, const char *rel, struct stat *st, struct statx *sx);
void tg_fs_dircache_clear(struct tg_fs_dircache *c);
/* c holds rel's first plen bytes as its directory, whose O_PATH fd (a
 * directory reached without a symlink, beneath the workspace) it takes
 * over; with leaf_st (leaf_err 0) or leaf_err (-errno), the lstat of rel's
 * last component through it, taken a moment ago (leaf_err 1: none). */
void tg_fs_dircache_seed(struct tg_fs_dircache *c, const char *rel, size_t plen, int fd, int leaf_err,
                         const struct stat *leaf_st);
/* tg_fs_parent through cache c: the fd is c's (or wsfd, for a name with
 * no slash), not the caller's to close; valid until c next changes. */
int tg_fs_parent_cached(int wsfd, struct tg_fs_dircache *c, const char *rel, const char **leaf);

/* st as fstat would fill it, from a statx that asked for STATX_BASIC_STATS:
 * one statx gives both (and the birth time), where fstat+statx are two
 * syscalls. */
void tg_fs_stat_of_statx(struct stat *st, const struct statx *sx);

/* An O_PATH|O_NOFOLLOW fd on rel itself ("" = a dup of wsfd). */
int tg_fs_open_path(int wsfd, const char *rel);

/* The journaled xattrs of the object behind an O_PATH fd (not a symlink),
 * as the blob of journal.h: (u32 nlen, name, u32 vlen, value)*. Journaled:
 * user.*, trusted.* (listed to root only), system.posix_acl_access and
 * _default (ACLs), security.capability; not LSM labels (security.selinux
 * ...), which belong to the system's policy, not to the file's content. */
int tg_fs_get_xattrs(int pathfd, char **blob, size_t *len);
bool tg_fs_xattr_journaled(const char *name);
/* Make the object's user xattrs exactly blob (sets them, removes others). */
int tg_fs_set_xattrs(int pathfd, const char *blob, size_t len);
/* The same for every journaled namespace when all (else user.* only, the
 * records of older versions). Only values that differ are written, so an
 * object already right (an immutable file, a capability the caller may not
 * set) costs no call that could fail. */
int tg_fs_set_xattrs_ns(int pathfd, const char *blob, size_t len, bool all);

/* The entries of the directory dfd: a DIR on a new fd (dfd stays open, its
 * offset untouched), or NULL with errno set. tg_fs_readdir is readdir(3)
 * without "." and "..". */
DIR *tg_fs_opendir(int dfd);
struct dirent *tg_fs_readdir(DIR *d);

/* Remove rel and, if it is a directory, everything under it (no symlink is
 * ever followed). ENOENT is success. */
int tg_fs_remove_tree(int dirfd, const char *name);
/* The same, removing at most *left names (files and directories, each
 * counted in *left): 0 when the tree is gone, 1 when the budget ran out
 * first (part of it may be gone, the rest is still a tree), or -errno. */
int tg_fs_remove_tree_upto(int dirfd, const char *name, size_t *left);

/* mkdir -p of an absolute path, mode 0700 for what it creates. */
int tg_fs_mkdir_p(const char *abs);

/* The directory rel under rootfd, opened one component at a time, never
 * through a symlink ("" = a dup of rootfd). A close-on-exec fd, or -errno:
 * -ENOTDIR / -ELOOP / -ENOENT when rel is not a directory there now. */
int tg_fs_open_dir_at(int rootfd, const char *rel);

/* mkdir -p of rel under the directory rootfd, component by component,
 * never through a symlink ("" = rootfd itself); mode for what it creates.
 * Returns an O_DIRECTORY fd on rel, or -errno. */
int tg_fs_mkdirs_at(int rootfd, const char *rel, mode_t mode);

/* Copy one object, as lstat st describes it, from sdir/sname to a new
 * ddir/dname: a regular file's bytes (a reflink where the filesystem can),
 * a symlink's target, a special file's node; then its mode, times and,
 * where permitted, owner. -EISDIR for a directory (tg_fs_mkdirs_at makes
 * containers), -EEXIST when dname exists (nothing changed), else 0 or
 * -errno. */
int tg_fs_copy_node(int sdir, const char *sname, const struct stat *st, int ddir, const char *dname);

/* Call cb(ud, "PREFIX/NAME...") for every entry beneath the directory dfd,
 * parents before children, never following a symlink. A directory that
 * cannot be opened counts as empty. Stops at the first cb error. */
int tg_fs_walk_subtree(int dfd, const char *prefix, int (*cb)(void *ud, const char *path), void *ud);
/* fsync a directory by path or fd. */
int tg_fs_fsync_dir(int dirfd);

/* Files written one after another and made durable together: each one's
 * writeback starts when it is added (sync_file_range), and all are
 * fsync'd by tg_fs_syncset_flush. Each file still gets its own fsync
 * before flush returns, so what is durable when is unchanged; but a
 * journaling filesystem commits their block allocations once, where an
 * fsync after each write commits once per file (ext4: 5 small files
 * 0.9 ms -> 0.5 ms on a virtio disk). */
#define TG_FS_SYNCSET_MAX 4
struct tg_fs_syncset {
	int fd[TG_FS_SYNCSET_MAX];
	size_t n;
	int err; /* the first failure, reported by flush */
};
/* Keep a dup of fd (the caller closes its own) and start its writeback.
 * NULL set: fsync fd now. 0 or -errno. */
int tg_fs_syncset_add(struct tg_fs_syncset *set, int fd);
/* fsync every file added, in order, and close them: 0 or the first
 * -errno (of an add or an fsync). The set is empty after. */
int tg_fs_syncset_flush(struct tg_fs_syncset *set);
/* Close what was added without syncing (an error path). */
void tg_fs_syncset_drop(struct tg_fs_syncset *set);

/* "a/b/c" -> "a/b"; "c" -> "". malloc'd. */
char *tg_fs_dirname(const char *rel);
