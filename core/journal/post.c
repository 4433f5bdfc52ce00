/* journal/post.c — what a run's dir keeps once the run is over, read
 * back: the info file, the pre-images, the post-state written at commit
 * and its comparison with the workspace now; and the sweep of dirs a crash
 * left half-made. Which runs there are and what they mean is history's
 * (history/runs.c).
 */
#include <ctype.h>
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

/* A file of ours that is short but for rare cases (an info with a long
 * command line, a history index of many runs): one read of a page or so
 * holds it (a regular file reads short only at its end), which saves the
 * generic reader's fstat and its read of the end. */
static int small_read_at(int dfd, const char *rel, char **out, size_t *len)
{
	_cleanup_close_ int fd = openat(dfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	enum { SMALL = 8192 };
	_cleanup_free_ char *buf = malloc(SMALL + 1);
	if (!buf)
		return -ENOMEM;
	ssize_t n = read(fd, buf, SMALL);
	if (n < 0)
		return -errno;
	if (n == SMALL)
		return tg_read_file_at(dfd, rel, O_NOFOLLOW, out, len, 16u << 20);
	buf[n] = '\0';
	*out = steal_pointer(&buf);
	*len = (size_t)n;
	return 0;
}

/* An info is written whole and renamed into place; a listing of the
 * history reads one per run. */
static int info_read_at(int dfd, const char *rel, struct tg_txinfo *out)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int e = small_read_at(dfd, rel, &text, &len);
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
	bool moves;               /* a RENAMED record: see write_post */
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
	c->moves |= r->kind == TG_JREC_RENAMED;
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

int tg_journal_write_post(struct tg_journal *j, struct tg_fs_syncset *later)
{
	struct collect c = { .wsfd = j->wsfd };
	int e = tg_journal_foreach(j, collect_paths, &c);
	/* A name no record has, which the summary reports all the same: a
	 * file made in b/ before `mv b c` is c/f (changes.h). show asks the
	 * post-state whether it was there, and undo whether it changed since. */
	if (!e && c.moves) {
		struct tg_change_events ev = { 0 };
		e = tg_journal_foreach(j, tg_change_events_add, &ev);
		e = e ? e : tg_changes_final_names(&ev, add_subtree_path, &c.s);
		tg_change_events_clear(&ev);
	}
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
	if (!e)
		e = tg_fs_syncset_add(later, fd);
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

bool tg_txinfo_newer(const struct tg_txinfo *a, const struct tg_txinfo *b)
{
	if (a->started_ns != b->started_ns)
		return a->started_ns > b->started_ns;
	return strcmp(a->id, b->id) > 0;
}

void tg_runs_clear(struct tg_runs *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		tg_txinfo_clear(&r->v[i]);
	free(r->v);
	free(r->raw);
	*r = (struct tg_runs){ 0 };
}

/* The fields the mark keeps, copied. */
static int run_copy(struct tg_txinfo *d, const struct tg_txinfo *i)
{
	*d = (struct tg_txinfo){ .id = tg_strdup(i->id), .state = i->state, .started_ns = i->started_ns,
	                         .journal_bytes = i->journal_bytes };
	return d->id ? 0 : -ENOMEM;
}

int tg_runs_insert(struct tg_runs *r, const struct tg_txinfo *i)
{
	struct tg_txinfo *nv = realloc(r->v, (r->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	r->v = nv;
	size_t at = 0;
	while (at < r->n && tg_txinfo_newer(&r->v[at], i))
		at++;
	memmove(&r->v[at + 1], &r->v[at], (r->n - at) * sizeof(*nv));
	if (run_copy(&r->v[at], i) < 0) {
		memmove(&r->v[at], &r->v[at + 1], (r->n - at) * sizeof(*nv));
		return -ENOMEM;
	}
	r->n++;
	return 0;
}

/* One line of the index: "ID STATE STARTED_NS JOURNAL_BYTES". */
static bool run_line_parse(const char *p, size_t len, struct tg_txinfo *o)
{
	char line[NAME_MAX + 96];
	if (len >= sizeof(line))
		return false;
	memcpy(line, p, len);
	line[len] = '\0';
	char *f[4], *save = NULL, *w = strtok_r(line, " ", &save);
	int k = 0;
	for (; w && k < 4; w = strtok_r(NULL, " ", &save))
		f[k++] = w;
	if (w || k != 4 || f[0][0] == '.' || strlen(f[0]) > NAME_MAX)
		return false;
	for (const char *c = f[0]; *c; c++)
		if (*c == '/' || !isgraph((unsigned char)*c))
			return false; /* a dir name of txn/, and ours never have these */
	int st = tg_jstate_parse(f[1], strlen(f[1]));
	char *e1, *e2;
	errno = 0;
	o->started_ns = strtoull(f[2], &e1, 10);
	o->journal_bytes = strtoull(f[3], &e2, 10);
	if (st < 0 || errno || *e1 || *e2 || !isdigit((unsigned char)f[2][0]) || !isdigit((unsigned char)f[3][0]))
		return false;
	o->state = (enum tg_jstate)st;
	return (o->id = tg_strdup(f[0])) != NULL;
}

/* The lines after the first: "runs N", then N run lines, newest first, and
 * nothing more. Whatever else (a mark cut short in a crash: it is never
 * synced) is no index. */
static bool runs_parse(const char *p, const char *end, struct tg_runs *out)
{
	*out = (struct tg_runs){ 0 };
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	char *e;
	if (!nl || nl - p < 6 || memcmp(p, "runs ", 5) || !isdigit((unsigned char)p[5]))
		return false;
	unsigned long long n = strtoull(p + 5, &e, 10);
	if (e != nl || n > (size_t)(end - p) / 8)
		return false;
	*out = (struct tg_runs){ .v = calloc(n ? n : 1, sizeof(*out->v)) };
	if (!out->v)
		return false;
	for (p = nl + 1; out->n < n; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		struct tg_txinfo *o = &out->v[out->n];
		if (!nl || !run_line_parse(p, (size_t)(nl - p), o))
			break;
		out->n++;
		if (out->n > 1 && tg_txinfo_newer(o, o - 1))
			break; /* out of order */
	}
	if (out->n == n && p == end)
		return true;
	tg_runs_clear(out);
	return false;
}

int tg_runs_parse(struct tg_runs *r)
{
	if (!r->raw)
		return r->v ? 0 : -ENOENT;
	char *raw = steal_pointer(&r->raw);
	tg_runs_clear(r);
	bool ok = runs_parse(raw, raw + strlen(raw), r);
	free(raw);
	return ok ? 0 : -EBADMSG;
}

int tg_journal_clean_runs(const char *state_dir, struct tg_runs *runs)
{
	if (runs)
		*runs = (struct tg_runs){ 0 };
	_cleanup_close_ int dfd = tg_journal_open_sub(state_dir, "txn");
	char want[96];
	int n = dfd < 0 ? -1 : clean_text(dfd, want, sizeof(want));
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (n <= 0 || small_read_at(dfd, CLEAN_NAME, &text, &len) < 0 || len < (size_t)n ||
	    memcmp(text, want, (size_t)n) != 0)
		return -1;
	if (!runs || len == (size_t)n || memchr(text, '\0', len))
		return 0;
	memmove(text, text + n, len - (size_t)n + 1); /* the lines after the first, kept */
	runs->raw = steal_pointer(&text);
	return 1;
}

bool tg_journal_clean(const char *state_dir)
{
	return tg_journal_clean_runs(state_dir, NULL) >= 0;
}

/* Not synced: a marker lost in a crash costs the next start one full pass. */
void tg_journal_clean_mark(const char *state_dir, const struct tg_runs *runs)
{
	_cleanup_close_ int dfd = tg_journal_open_sub(state_dir, "txn");
	_cleanup_close_ int fd = dfd < 0 ? -1 : openat(dfd, CLEAN_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	                                                                O_CLOEXEC, 0600);
	char first[96];
	int n = fd < 0 ? -1 : clean_text(dfd, first, sizeof(first));
	if (n <= 0)
		return;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		(void)unlinkat(dfd, CLEAN_NAME, 0);
		return;
	}
	fwrite(first, 1, (size_t)n, f);
	if (runs && runs->raw) {
		fputs(runs->raw, f);
	} else if (runs) {
		fprintf(f, "runs %zu\n", runs->n);
		for (size_t i = 0; i < runs->n; i++)
			fprintf(f, "%s %s %llu %llu\n", runs->v[i].id, tg_jstate_name(runs->v[i].state),
			        (unsigned long long)runs->v[i].started_ns, (unsigned long long)runs->v[i].journal_bytes);
	}
	if (fclose(f) != 0 || tg_write_all(fd, text, len) < 0)
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
