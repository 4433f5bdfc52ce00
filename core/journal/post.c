/* journal/post.c — what a run's dir keeps once the run is over, read
 * back: the info file, the pre-images, the post-state written at commit
 * and its comparison with the workspace now; and the sweep of dirs a crash
 * left half-made. Which runs there are and what they mean is history's
 * (history/runs.c).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/set.h"
#include "journal_int.h"
#include "tar.h"
#include "base/util.h"

/* ---- %XX escaping: paths may hold any byte but '\0' ---- */

static char *esc(const char *s)
{
	size_t n = strlen(s);
	char *o = malloc(n * 3 + 1), *q = o;
	if (!o)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x21 || *p > 0x7e || *p == '%' || *p == '=')
			q += sprintf(q, "%%%02X", *p);
		else
			*q++ = (char)*p;
	}
	*q = '\0';
	return o;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static char *unesc(const char *s, size_t n)
{
	char *o = malloc(n + 1), *q = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		/* Not sscanf: it measures the rest of the string at every '%',
		 * and a command line of 100,000 arguments has as many. */
		int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = hi >= 0 ? hexval(s[i + 2]) : -1;
		if (s[i] == '%' && lo >= 0) {
			*q++ = (char)(hi << 4 | lo);
			i += 2;
		} else {
			*q++ = s[i];
		}
	}
	*q = '\0';
	return o;
}

/* ---- info ---- */

void tg_txinfo_clear(struct tg_txinfo *i)
{
	if (!i)
		return;
	free(i->id);
	free(i->workspace);
	free(i->command);
	free(i->tx);
	free(i->undoes);
	memset(i, 0, sizeof(*i));
}

static int info_set(struct tg_txinfo *o, const char *k, size_t kl, const char *v, size_t vl)
{
	char **s = NULL;
	uint64_t *num = NULL;
	if (kl == 2 && !memcmp(k, "id", 2))
		s = &o->id;
	else if (kl == 9 && !memcmp(k, "workspace", 9))
		s = &o->workspace;
	else if (kl == 7 && !memcmp(k, "command", 7))
		s = &o->command;
	else if (kl == 5 && !memcmp(k, "state", 5)) {
		int st = tg_jstate_parse(v, vl);
		if (st >= 0)
			o->state = (enum tg_jstate)st;
		return st < 0 ? st : 0;
	}
	else if (kl == 2 && !memcmp(k, "tx", 2))
		s = &o->tx;
	else if (kl == 6 && !memcmp(k, "undoes", 6))
		s = &o->undoes;
	else if (kl == 10 && !memcmp(k, "started_ns", 10))
		num = &o->started_ns;
	else if (kl == 8 && !memcmp(k, "ended_ns", 8))
		num = &o->ended_ns;
	else if (kl == 11 && !memcmp(k, "bytes_saved", 11))
		num = &o->bytes_saved;
	else if (kl == 13 && !memcmp(k, "journal_bytes", 13))
		num = &o->journal_bytes;
	if (s) {
		free(*s);
		*s = unesc(v, vl);
		return *s ? 0 : -ENOMEM;
	}
	_cleanup_free_ char *val = tg_strndup(v, vl);
	if (!val)
		return -ENOMEM;
	if (kl == 7 && !memcmp(k, "version", 7))
		return strtoull(val, NULL, 10) == TG_JOURNAL_INFO_VERSION ? 0 : -EPROTO;
	if (num)
		*num = strtoull(val, NULL, 10);
	for (int c = 0; c < TG_CHANGE_KIND_COUNT; c++) {
		const char *name = tg_change_kind_name((enum tg_change_kind)c);
		if (strlen(name) == kl && !memcmp(k, name, kl))
			o->counts[c] = (size_t)strtoull(val, NULL, 10);
	}
	return 0;
}

static int info_parse(const char *text, size_t len, struct tg_txinfo *out)
{
	memset(out, 0, sizeof(*out));
	out->state = TG_JSTATE_COUNT; /* none yet */
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *eq = memchr(p, '=', (size_t)(le - p));
		if (eq) {
			int e = info_set(out, p, (size_t)(eq - p), eq + 1, (size_t)(le - eq - 1));
			if (e < 0) {
				tg_txinfo_clear(out);
				return e;
			}
		}
		p = le + 1;
	}
	if (!out->id || !out->workspace || out->state == TG_JSTATE_COUNT) {
		tg_txinfo_clear(out);
		return -EBADMSG;
	}
	if (!out->command)
		out->command = tg_strdup("");
	return out->command ? 0 : -ENOMEM;
}

/* An info is written whole and renamed into place, and is short unless its
 * command line is long: one read of a page holds it (a regular file reads
 * short only at its end), which saves the generic reader's fstat and its
 * read of the end. A listing of the history reads one per run. */
static int info_read_at(int dfd, const char *rel, struct tg_txinfo *out)
{
	_cleanup_close_ int fd = openat(dfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char page[4096];
	ssize_t n = read(fd, page, sizeof(page));
	if (n < 0)
		return -errno;
	if ((size_t)n < sizeof(page))
		return info_parse(page, (size_t)n, out);
	_cleanup_free_ char *text = NULL;
	size_t len;
	int e = tg_read_file_at(dfd, rel, O_NOFOLLOW, &text, &len, 1u << 20);
	return e < 0 ? e : info_parse(text, len, out);
}

int tg_journal_read_info(const char *state_dir, const char *id, struct tg_txinfo *out)
{
	_cleanup_free_ char *path = tg_asprintf("%s/txn/%s/info", state_dir, id);
	return path ? info_read_at(AT_FDCWD, path, out) : -ENOMEM;
}

int tg_journal_read_info_at(int txnfd, const char *id, struct tg_txinfo *out)
{
	char rel[NAME_MAX + sizeof("/info")];
	int n = snprintf(rel, sizeof(rel), "%s/info", id);
	return n > 0 && (size_t)n < sizeof(rel) ? info_read_at(txnfd, rel, out) : -ENAMETOOLONG;
}

int tg_journal_preimage(const char *state_dir, const char *id, const struct tg_jrec *r, int fd)
{
	bool reflink = r->flags & TG_JREC_F_REFLINK;
	if (r->kind != TG_JREC_CONTENT && r->kind != TG_JREC_SAVED)
		return -EINVAL;
	_cleanup_free_ char *path = reflink
		? tg_asprintf("%s/txn/%s/stash/%llu", state_dir, id, (unsigned long long)r->seq)
		: tg_asprintf("%s/txn/%s/pre.tar.zst", state_dir, id);
	if (!path)
		return -ENOMEM;
	_cleanup_close_ int src = open(path, O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return -errno;
	if (!reflink)
		return tg_jtar_extract(src, r->tar_off, fd, NULL);
	if (ftruncate(fd, 0) < 0)
		return -errno;
	char buf[65536];
	for (off_t off = 0;;) {
		ssize_t n = pread(src, buf, sizeof(buf), off);
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		if (pwrite(fd, buf, (size_t)n, off) != n)
			return -errno;
		off += n;
	}
}

/* ---- post-state: one line per journaled path, written at commit ---- */

struct collect {
	struct tg_strset s;
	int wsfd;
	struct tg_fs_dircache dc; /* the records' parents: a run creates dir by dir */
};

/* Everything under a directory the run created: undo removes it all, so a
 * file edited in there by hand since must be noticed too. */
static int add_subtree_path(void *ud, const char *path)
{
	return tg_strset_add(ud, path) < 0 ? -ENOMEM : 0;
}

static int collect_paths(void *ud, const struct tg_jrec *r)
{
	struct collect *c = ud;
	if (r->kind == TG_JREC_BORN)
		return 0;
	for (int k = 0; k < 2; k++) {
		const char *p = k ? r->path2 : r->path;
		int e = p && tg_strset_add(&c->s, p) < 0 ? -ENOMEM : 0;
		if (e < 0)
			return e;
	}
	if (r->kind != TG_JREC_CREATED || !r->path[0])
		return 0;
	/* Most creations are files: one lstat through the cached parent
	 * tells, where opening each as a directory took three calls. */
	struct stat st;
	const char *leaf;
	if (tg_fs_lstat_cached(c->wsfd, &c->dc, r->path, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	int pfd = tg_fs_parent_cached(c->wsfd, &c->dc, r->path, &leaf);
	_cleanup_close_ int dfd = pfd < 0 ? -1 : openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return dfd < 0 ? 0 : tg_fs_walk_subtree(dfd, r->path, add_subtree_path, &c->s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* What identifies a path's state for "changed outside since?": presence,
 * type, mode, size, mtime; for a symlink its target's CRC. Inode numbers are
 * left out on purpose: undoing a newer run may recreate a directory. */
static char *state_line(int wsfd, struct tg_fs_dircache *dc, const char *rel)
{
	struct stat st;
	_cleanup_free_ char *e = esc(rel);
	if (!e)
		return NULL;
	if (tg_fs_lstat_cached(wsfd, dc, rel, &st) < 0)
		return tg_asprintf("%s\t-\n", e);
	uint32_t crc = 0;
	if (S_ISLNK(st.st_mode)) {
		const char *leaf;
		char target[4096];
		_cleanup_close_ int pfd = tg_fs_parent(wsfd, rel, &leaf);
		ssize_t n = pfd >= 0 ? readlinkat(pfd, leaf, target, sizeof(target)) : -1;
		crc = n > 0 ? tg_crc32(0, target, (size_t)n) : 0;
	}
	bool dir = S_ISDIR(st.st_mode);
	return tg_asprintf("%s\t%o\t%llu\t%lld.%09ld\t%08x\n", e, st.st_mode,
	                   dir ? 0ULL : (unsigned long long)st.st_size,
	                   dir ? 0LL : (long long)st.st_mtim.tv_sec, dir ? 0L : st.st_mtim.tv_nsec, crc);
}

int tg_journal_write_post(struct tg_journal *j)
{
	struct collect c = { .wsfd = j->wsfd };
	int e = tg_journal_foreach(j, collect_paths, &c);
	tg_fs_dircache_clear(&c.dc);
	size_t n = c.s.n;
	_cleanup_free_ const char **v = e ? NULL : tg_strset_keys(&c.s);
	if (!e && n && !v)
		e = -ENOMEM;
	if (!e && n)
		qsort(v, n, sizeof(*v), cmp_str);
	int fd = e ? -1 : openat(j->dirfd, "post", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!e && fd < 0)
		e = -errno;
	/* Sorted: siblings share the cached parent; lines go out in blocks. */
	struct tg_fs_dircache dc = { 0 };
	char buf[1 << 16];
	size_t used = 0;
	for (size_t i = 0; !e && i < n; i++) {
		_cleanup_free_ char *line = state_line(j->wsfd, &dc, v[i]);
		if (!line) {
			e = -ENOMEM;
			break;
		}
		size_t len = strlen(line);
		if (used + len > sizeof(buf)) {
			e = tg_write_all(fd, buf, used);
			used = 0;
		}
		if (!e && len > sizeof(buf))
			e = tg_write_all(fd, line, len);
		else if (!e) {
			memcpy(buf + used, line, len);
			used += len;
		}
	}
	tg_fs_dircache_clear(&dc);
	if (!e && used)
		e = tg_write_all(fd, buf, used);
	if (!e && fsync(fd) < 0)
		e = -errno;
	if (fd >= 0)
		close(fd);
	tg_strset_clear(&c.s);
	return e;
}

int tg_journal_post_check(const struct tg_journal *j,
                          int (*cb)(void *ud, const char *rel, bool changed), void *ud)
{
	int e = 0;
	_cleanup_free_ char *path = tg_asprintf("%s/post", j->dir);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	e = path ? tg_read_file(path, &text, &len, 1u << 30) : -ENOMEM;
	struct tg_fs_dircache dc = { 0 }; /* post is sorted; cb only looks */
	for (char *p = text; !e && p && p < text + len;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		char *tab = memchr(p, '\t', (size_t)((nl ? nl : text + len) - p));
		if (!nl || !tab)
			break;
		_cleanup_free_ char *rel = unesc(p, (size_t)(tab - p));
		_cleanup_free_ char *now = rel ? state_line(j->wsfd, &dc, rel) : NULL;
		if (!now) {
			e = -ENOMEM;
			break;
		}
		bool changed = strlen(now) != (size_t)(nl - p + 1) || memcmp(now, p, (size_t)(nl - p + 1)) != 0;
		e = cb(ud, rel, changed);
		p = nl + 1;
	}
	tg_fs_dircache_clear(&dc);
	return e < 0 ? e : 0;
}

int tg_journal_runs_dir(const char *state_dir, DIR **out)
{
	_cleanup_free_ char *txn = tg_asprintf("%s/txn", state_dir);
	if (!txn)
		return -ENOMEM;
	*out = opendir(txn);
	return *out || errno == ENOENT ? 0 : -errno;
}

#define CLEAN_NAME ".clean"

/* What of txn/ the marker holds: a run dir made, removed or retired moves
 * its link count (where subdirectories count, as on ext4, xfs, tmpfs) and
 * its mtime. */
static int clean_text(int txnfd, char *buf, size_t size)
{
	struct stat st;
	if (fstat(txnfd, &st) < 0)
		return -errno;
	int n = snprintf(buf, size, "%llu %llu %lld.%09ld\n", (unsigned long long)st.st_ino,
	                 (unsigned long long)st.st_nlink, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return n > 0 && (size_t)n < size ? n : -EOVERFLOW;
}

bool tg_journal_clean(const char *state_dir)
{
	_cleanup_close_ int dfd = tg_journal_open_sub(state_dir, "txn");
	_cleanup_close_ int fd = dfd < 0 ? -1 : openat(dfd, CLEAN_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char want[96], have[96];
	int n = fd < 0 ? -1 : clean_text(dfd, want, sizeof(want));
	return n > 0 && read(fd, have, sizeof(have)) == n && memcmp(have, want, (size_t)n) == 0;
}

/* Not synced: a marker lost in a crash costs the next start one full pass. */
void tg_journal_clean_mark(const char *state_dir)
{
	_cleanup_close_ int dfd = tg_journal_open_sub(state_dir, "txn");
	_cleanup_close_ int fd = dfd < 0 ? -1 : openat(dfd, CLEAN_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	                                                                O_CLOEXEC, 0600);
	char text[96];
	int n = fd < 0 ? -1 : clean_text(dfd, text, sizeof(text));
	if (n > 0 && tg_write_all(fd, text, (size_t)n) < 0)
		(void)unlinkat(dfd, CLEAN_NAME, 0);
}

int tg_journal_clean_drop(const char *state_dir, bool sync)
{
	_cleanup_close_ int dfd = tg_journal_open_sub(state_dir, "txn");
	if (dfd < 0)
		return dfd == -ENOENT ? 0 : dfd;
	if (unlinkat(dfd, CLEAN_NAME, 0) < 0)
		return errno == ENOENT ? 0 : -errno;
	return sync ? tg_fs_fsync_dir(dfd) : 0;
}

int tg_journal_sweep(const char *state_dir)
{
	DIR *d;
	int e = tg_journal_runs_dir(state_dir, &d);
	if (e < 0 || !d)
		return e;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		_cleanup_free_ char *info = tg_asprintf("%s/info", de->d_name);
		_cleanup_free_ char *log = tg_asprintf("%s/log", de->d_name);
		if (!info || !log) {
			e = -ENOMEM;
			break;
		}
		if (fstatat(dirfd(d), info, &st, 0) == 0)
			continue;
		/* Records are only appended once info exists: no info, no records. */
		if (fstatat(dirfd(d), log, &st, 0) == 0 && st.st_size > 0)
			continue;
		int q = tg_fs_remove_tree(dirfd(d), de->d_name);
		if (q < 0 && !e)
			e = q;
	}
	closedir(d);
	return e;
}
