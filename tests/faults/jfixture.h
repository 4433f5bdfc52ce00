/* jfixture.h — a throwaway journal to corrupt: a small real workspace, a
 * state dir holding one transaction whose log (and pre.tar.zst) the caller
 * supplies, and things beside the workspace that a restore must never
 * touch (a sentinel file, the target of a symlink that points out).
 *
 *   <root>/outside/sentinel   must keep its content, mode and mtime
 *   <root>/beside             must keep its content
 *   <root>/ws/                the workspace: a, b (hard link of a), d/c,
 *                             out -> ../outside, abs -> <root>/outside,
 *                             fifo, empty dir e
 *   <root>/state/txn/<id>/    info (state=open, workspace=<root>/ws), log,
 *                             pre.tar.zst, stash/1 and stash/2
 *
 * Header-only so the libFuzzer target and the Criterion test share it.
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JFX_ID "20260101T000000.000-f022ed"

struct jfx {
	char root[256];
	char ws[300], state[300], txn[400], outside[300];
	struct timespec sentinel_mtime;
};

static inline int jfx_write(const char *path, const void *buf, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);
		if (w < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		done += (size_t)w;
	}
	return close(fd) < 0 ? -errno : 0;
}

static inline int jfx_rm_cb(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP || type == FTW_D || type == FTW_DNR)
		return rmdir(p) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(p) < 0 && errno != ENOENT ? -1 : 0;
}

/* rm -rf of a path inside the fixture (never follows symlinks). */
static inline int jfx_rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		chmod(path, 0700);
	return nftw(path, jfx_rm_cb, 16, FTW_DEPTH | FTW_PHYS) < 0 ? -EIO : 0;
}

static inline int jfx_path(char *out, size_t n, const char *a, const char *b)
{
	int r = snprintf(out, n, "%s/%s", a, b);
	return r < 0 || (size_t)r >= n ? -ENAMETOOLONG : 0;
}

/* The workspace as every case starts: a few of each kind of entry. */
static inline int jfx_reset_ws(struct jfx *f)
{
	char p[512], q[512];
	int e = jfx_rm_rf(f->ws);
	if (e < 0 || mkdir(f->ws, 0755) < 0)
		return e < 0 ? e : -errno;
	jfx_path(p, sizeof(p), f->ws, "a");
	if ((e = jfx_write(p, "alpha\n", 6, 0644)) < 0)
		return e;
	jfx_path(q, sizeof(q), f->ws, "b");
	if (link(p, q) < 0)
		return -errno;
	jfx_path(p, sizeof(p), f->ws, "d");
	if (mkdir(p, 0755) < 0)
		return -errno;
	jfx_path(p, sizeof(p), f->ws, "d/c");
	if ((e = jfx_write(p, "gamma\n", 6, 0600)) < 0)
		return e;
	jfx_path(p, sizeof(p), f->ws, "out");
	if (symlink("../outside", p) < 0)
		return -errno;
	jfx_path(p, sizeof(p), f->ws, "abs");
	if (symlink(f->outside, p) < 0)
		return -errno;
	jfx_path(p, sizeof(p), f->ws, "fifo");
	if (mkfifo(p, 0644) < 0)
		return -errno;
	jfx_path(p, sizeof(p), f->ws, "e");
	return mkdir(p, 0755) < 0 ? -errno : 0;
}

/* extra: more info lines (fuzzed), written before the fixed ones; any
 * workspace= line in it is dropped, so a restore can only ever aim at
 * f->ws. */
static inline char *jfx_info_text(const struct jfx *f, const char *extra, size_t extralen, size_t *len)
{
	char fixed[768];
	int n = snprintf(fixed, sizeof(fixed),
	                 "version=1\nid=%s\nworkspace=%s\ncommand=fuzz\nstate=open\nstarted_ns=1\nended_ns=0\n",
	                 JFX_ID, f->ws);
	char *out = malloc(extralen + 1 + (size_t)n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t p = 0; p < extralen;) {
		const char *nl = memchr(extra + p, '\n', extralen - p);
		size_t le = nl ? (size_t)(nl - extra) + 1 : extralen;
		bool ws = le - p >= 10 && memcmp(extra + p, "workspace=", 10) == 0;
		if (!ws) {
			memcpy(out + o, extra + p, le - p);
			o += le - p;
		}
		p = le;
	}
	if (o && out[o - 1] != '\n')
		out[o++] = '\n';
	memcpy(out + o, fixed, (size_t)n);
	*len = o + (size_t)n;
	return out;
}

/* Replace the transaction's files: info as an open run on f->ws (plus the
 * extra lines), the given log and tar (tar NULL: none), fresh stash
 * entries, no progress/remap. */
static inline int jfx_write_txn_info(struct jfx *f, const void *log, size_t loglen, const void *tar,
                                     size_t tarlen, const char *extra, size_t extralen)
{
	char p[512];
	int e = jfx_rm_rf(f->txn);
	if (e < 0 || mkdir(f->txn, 0700) < 0)
		return e < 0 ? e : -errno;
	size_t ilen;
	char *info = jfx_info_text(f, extra, extralen, &ilen);
	if (!info)
		return -ENOMEM;
	jfx_path(p, sizeof(p), f->txn, "info");
	e = jfx_write(p, info, ilen, 0600);
	free(info);
	if (e < 0)
		return e;
	jfx_path(p, sizeof(p), f->txn, "log");
	if ((e = jfx_write(p, log, loglen, 0600)) < 0)
		return e;
	if (tar) {
		jfx_path(p, sizeof(p), f->txn, "pre.tar.zst");
		if ((e = jfx_write(p, tar, tarlen, 0600)) < 0)
			return e;
	}
	jfx_path(p, sizeof(p), f->txn, "stash");
	if (mkdir(p, 0700) < 0)
		return -errno;
	jfx_path(p, sizeof(p), f->txn, "stash/1");
	if ((e = jfx_write(p, "stashed one\n", 12, 0644)) < 0)
		return e;
	jfx_path(p, sizeof(p), f->txn, "stash/2");
	return jfx_write(p, "stashed two\n", 12, 0644);
}

static inline int jfx_write_txn(struct jfx *f, const void *log, size_t loglen, const void *tar, size_t tarlen)
{
	return jfx_write_txn_info(f, log, loglen, tar, tarlen, NULL, 0);
}

static inline int jfx_setup(struct jfx *f)
{
	memset(f, 0, sizeof(*f));
	const char *tmp = getenv("TMPDIR");
	struct stat st;
	/* tmpfs when there is one: the journal fsyncs every step. */
	if (!tmp || !*tmp)
		tmp = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	if (snprintf(f->root, sizeof(f->root), "%s/tg-jfx.XXXXXX", tmp) >= (int)sizeof(f->root) || !mkdtemp(f->root))
		return -errno;
	char p[512];
	jfx_path(f->ws, sizeof(f->ws), f->root, "ws");
	jfx_path(f->state, sizeof(f->state), f->root, "state");
	jfx_path(f->outside, sizeof(f->outside), f->root, "outside");
	snprintf(f->txn, sizeof(f->txn), "%s/txn/%s", f->state, JFX_ID);
	if (mkdir(f->outside, 0755) < 0 || mkdir(f->state, 0700) < 0)
		return -errno;
	jfx_path(p, sizeof(p), f->state, "txn");
	if (mkdir(p, 0700) < 0)
		return -errno;
	jfx_path(p, sizeof(p), f->outside, "sentinel");
	int e = jfx_write(p, "sentinel\n", 9, 0644);
	if (e < 0 || lstat(p, &st) < 0)
		return e < 0 ? e : -errno;
	f->sentinel_mtime = st.st_mtim;
	jfx_path(p, sizeof(p), f->root, "beside");
	e = jfx_write(p, "beside\n", 7, 0644);
	return e < 0 ? e : jfx_reset_ws(f);
}

static inline void jfx_teardown(struct jfx *f)
{
	if (f->root[0])
		jfx_rm_rf(f->root);
}

static inline bool jfx_file_is(const char *path, const char *want)
{
	char buf[64] = { 0 };
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == (ssize_t)strlen(want) && memcmp(buf, want, (size_t)n) == 0;
}

/* NULL when nothing outside the workspace changed, else what did. */
static inline const char *jfx_outside_changed(const struct jfx *f)
{
	char p[512];
	struct stat st;
	jfx_path(p, sizeof(p), f->outside, "sentinel");
	if (!jfx_file_is(p, "sentinel\n"))
		return "outside/sentinel content";
	if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 07777) != 0644 || st.st_nlink != 1 ||
	    st.st_mtim.tv_sec != f->sentinel_mtime.tv_sec || st.st_mtim.tv_nsec != f->sentinel_mtime.tv_nsec)
		return "outside/sentinel metadata";
	jfx_path(p, sizeof(p), f->root, "beside");
	if (!jfx_file_is(p, "beside\n"))
		return "beside";
	if (lstat(f->ws, &st) < 0 || !S_ISDIR(st.st_mode))
		return "the workspace itself is gone or replaced";
	if (lstat(f->outside, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 07777) != 0755)
		return "outside/ metadata";
	/* No new entries beside the workspace or in outside/. */
	const char *dirs[2] = { f->root, f->outside };
	const size_t want[2] = { 4, 1 };
	for (int i = 0; i < 2; i++) {
		DIR *d = opendir(dirs[i]);
		size_t n = 0;
		struct dirent *de;
		if (!d)
			return "cannot list a directory outside";
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				n++;
		closedir(d);
		if (n != want[i])
			return i ? "new entry in outside/" : "new entry beside the workspace";
	}
	return NULL;
}
