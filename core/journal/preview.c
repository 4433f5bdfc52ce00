/* journal/preview.c — what a restore would do, without doing it (undo
 * --dry-run, recover --dry-run), and which paths an interrupted
 * transaction's recovery would overwrite although they changed after the
 * crash (hand edits: recover refuses them unless forced).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "journal_int.h"
#include "base/util.h"

/* A path changed this long after the journal's last write is taken for an
 * edit made after the crash. The traced tree dies with txguard
 * (PTRACE_O_EXITKILL), so the run's own last changes come within moments
 * of its last record; the margin absorbs a loaded machine. */
#define TG_EDIT_MARGIN_NS (5ull * 1000000000ull)

/* Open run id's journal and read its records, and the lowest seq a
 * restore already undid (UINT64_MAX: none; only an interrupted restore has
 * undone any). On failure nothing is left to free. */
static int load(const char *state_dir, const char *id, struct tg_journal **j, struct tg_jrecs *s,
                uint64_t *done_from)
{
	int e = tg_journal_load(state_dir, id, j);
	if (e < 0)
		return e;
	*done_from = tg_journal_state(*j) == TG_JSTATE_ROLLING_BACK ? tg_journal_read_progress(*j) : UINT64_MAX;
	e = tg_jrecs_load(*j, s, false);
	if (e < 0) {
		tg_jrecs_clear(s);
		tg_journal_free(*j);
	}
	return e;
}

static enum tg_step step_of(const struct tg_jrec *r, bool *skip)
{
	*skip = false;
	switch (r->kind) {
	case TG_JREC_CREATED:
		/* the call created nothing */
		*skip = (r->flags & TG_JREC_F_BORN_SEEN) && r->meta.ino == 0;
		return TG_STEP_REMOVE;
	case TG_JREC_CONTENT: return TG_STEP_REWRITE;
	case TG_JREC_META:
		*skip = r->flags & TG_JREC_F_IMPLICIT; /* a parent's times: not a change */
		return TG_STEP_META;
	case TG_JREC_STASHED:
		*skip = r->flags & TG_JREC_F_BORN;
		return TG_STEP_RELINK;
	case TG_JREC_RMDIR: return TG_STEP_MKDIR;
	case TG_JREC_RENAMED: return TG_STEP_MOVE_BACK;
	case TG_JREC_SAVED: return TG_STEP_RECREATE;
	case TG_JREC_BORN:
	default:
		*skip = true;
		return TG_STEP_META;
	}
}

const char *tg_step_name(enum tg_step s)
{
	static const char *const names[] = {
		[TG_STEP_REMOVE] = "remove", [TG_STEP_REWRITE] = "rewrite", [TG_STEP_META] = "metadata",
		[TG_STEP_RELINK] = "put back", [TG_STEP_MKDIR] = "mkdir", [TG_STEP_MOVE_BACK] = "move back",
		[TG_STEP_RECREATE] = "recreate",
	};
	return (unsigned)s < TG_ARRAY_SIZE(names) && names[s] ? names[s] : "?";
}

int tg_journal_preview(const char *state_dir, const char *id,
                       int (*cb)(void *ud, enum tg_step s, const char *path, const char *path2), void *ud)
{
	struct tg_journal *j;
	struct tg_jrecs s = { 0 };
	uint64_t done_from;
	int e = load(state_dir, id, &j, &s, &done_from);
	if (e < 0)
		return e;
	for (size_t i = s.n; e == 0 && i-- > 0;) {
		const struct tg_jrec *r = &s.v[i];
		bool skip;
		enum tg_step st = step_of(r, &skip);
		if (skip || r->seq >= done_from)
			continue;
		/* move back: from where it is now (path2) to where it was */
		e = st == TG_STEP_MOVE_BACK ? cb(ud, st, r->path2, r->path) : cb(ud, st, r->path, NULL);
	}
	tg_jrecs_clear(&s);
	tg_journal_free(j);
	return e < 0 ? e : 0;
}

static uint64_t mtime_ns(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, 0) < 0)
		return 0;
	return (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
}

static uint64_t ctime_ns(const struct stat *st)
{
	return (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
}

static bool reported(char **seen, const char *path)
{
	for (size_t i = 0; seen && seen[i]; i++)
		if (!strcmp(seen[i], path))
			return true;
	return false;
}

static bool tree_edited(int dfd, uint64_t horizon)
{
	DIR *d = tg_fs_opendir(dfd);
	if (!d)
		return false;
	bool edited = false;
	struct dirent *de;
	while (!edited && (de = tg_fs_readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		edited = ctime_ns(&st) > horizon;
		if (!edited && S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			edited = sub >= 0 && tree_edited(sub, horizon);
		}
	}
	closedir(d);
	return edited;
}

/* The journal's last write: its last record, or the last restore step. */
static uint64_t last_write(const struct tg_journal *j)
{
	uint64_t last = mtime_ns(j->dirfd, "log"), p = mtime_ns(j->dirfd, "progress"), m = mtime_ns(j->dirfd, "remap");
	last = p > last ? p : last;
	return m > last ? m : last;
}

/* Call cb for each record whose target a restore of the interrupted
 * transaction would overwrite or remove (a file's bytes, a created object,
 * explicit metadata; parents' times are not edits) and that exists now,
 * each path once, newest record first. The step in flight of an
 * interrupted restore is left out: one big file may have taken long. */
static int each_target(const struct tg_journal *j, const struct tg_jrecs *s, uint64_t done_from,
                       int (*cb)(void *ud, const struct tg_jrec *r, enum tg_step st, const struct stat *cur),
                       void *ud)
{
	_cleanup_strv_ char **seen = NULL;
	bool first = true;
	int e = 0;
	for (size_t i = s->n; e == 0 && i-- > 0;) {
		const struct tg_jrec *r = &s->v[i];
		if (r->seq >= done_from)
			continue;
		bool in_flight = first && done_from != UINT64_MAX;
		first = false;
		bool skip;
		enum tg_step st = step_of(r, &skip);
		if (skip || in_flight || (st != TG_STEP_REWRITE && st != TG_STEP_REMOVE && st != TG_STEP_META))
			continue;
		struct stat cur;
		if (!r->path[0] || tg_fs_lstat(j->wsfd, r->path, &cur) < 0 || reported(seen, r->path))
			continue;
		e = tg_strv_push(&seen, r->path);
		if (!e)
			e = cb(ud, r, st, &cur);
	}
	return e;
}

struct edits {
	const struct tg_journal *j;
	uint64_t horizon;
	int (*cb)(void *ud, const char *path);
	void *ud;
};

static int edited_one(void *ud, const struct tg_jrec *r, enum tg_step st, const struct stat *cur)
{
	struct edits *x = ud;
	bool edited = ctime_ns(cur) > x->horizon;
	if (!edited && st == TG_STEP_REMOVE && S_ISDIR(cur->st_mode)) {
		/* A created directory goes whole: an edit anywhere inside. */
		const char *leaf;
		_cleanup_close_ int pfd = tg_fs_parent(x->j->wsfd, r->path, &leaf);
		_cleanup_close_ int dfd = pfd < 0 ? -1 : openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		edited = dfd >= 0 && tree_edited(dfd, x->horizon);
	}
	return edited ? x->cb(x->ud, r->path) : 0;
}

int tg_journal_edited_after(const char *state_dir, const char *id, int (*cb)(void *ud, const char *path), void *ud)
{
	struct tg_journal *j;
	struct tg_jrecs s = { 0 };
	uint64_t done_from;
	int e = load(state_dir, id, &j, &s, &done_from);
	if (e < 0)
		return e;
	struct edits x = { .j = j, .horizon = last_write(j) + TG_EDIT_MARGIN_NS, .cb = cb, .ud = ud };
	e = each_target(j, &s, done_from, edited_one, &x);
	tg_jrecs_clear(&s);
	tg_journal_free(j);
	return e < 0 ? e : 0;
}

/* ---- keeping aside what changed after the last record ---------------------- */

struct aside {
	const struct tg_journal *j;
	const char *state_dir, *id;
	uint64_t since;  /* the journal's last write; a change in the same
	                  * clock tick may be later: >= keeps it */
	int fd;          /* aside/<id>, opened on first need; -1 before */
	size_t kept;
	int (*cb)(void *ud, const char *path);
	void *ud;
};

/* Copy what is at pfd/leaf (rel in the workspace, lstat st) to aside/<id>/rel. */
static int keep(struct aside *a, int pfd, const char *leaf, const char *rel, const struct stat *st)
{
	if (a->fd < 0) {
		_cleanup_free_ char *dir = tg_asprintf("aside/%s", a->id);
		_cleanup_close_ int sd = open(a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (!dir || sd < 0)
			return dir ? -errno : -ENOMEM;
		a->fd = tg_fs_mkdirs_at(sd, dir, 0700);
		if (a->fd < 0)
			return a->fd;
	}
	_cleanup_free_ char *parent = tg_fs_dirname(rel);
	if (!parent)
		return -ENOMEM;
	if (S_ISDIR(st->st_mode)) {
		int d = tg_fs_mkdirs_at(a->fd, rel, 0700);
		return d < 0 ? d : (close(d), 0);
	}
	_cleanup_close_ int dfd = tg_fs_mkdirs_at(a->fd, parent, 0700);
	if (dfd < 0)
		return dfd;
	const char *slash = strrchr(rel, '/');
	int e = tg_fs_copy_node(pfd, leaf, st, dfd, slash ? slash + 1 : rel);
	if (e == -EEXIST) /* kept by a recovery that was interrupted */
		return 0;
	if (e < 0)
		return e;
	a->kept++;
	return a->cb ? a->cb(a->ud, rel) : 0;
}

/* Everything under the created directory dfd (rel) changed since the last write. */
static int keep_tree(struct aside *a, int dfd, const char *rel)
{
	DIR *d = tg_fs_opendir(dfd);
	if (!d)
		return -errno;
	int e = 0;
	struct dirent *de;
	while (!e && (de = tg_fs_readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		_cleanup_free_ char *sub = tg_asprintf("%s/%s", rel, de->d_name);
		if (!sub) {
			e = -ENOMEM;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int s = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			e = s < 0 ? -errno : keep_tree(a, s, sub);
		} else if (ctime_ns(&st) >= a->since) {
			e = keep(a, dirfd(d), de->d_name, sub, &st);
		}
	}
	closedir(d);
	return e;
}

static int aside_one(void *ud, const struct tg_jrec *r, enum tg_step st, const struct stat *cur)
{
	struct aside *a = ud;
	const char *leaf;
	_cleanup_close_ int pfd = tg_fs_parent(a->j->wsfd, r->path, &leaf);
	if (pfd < 0)
		return pfd;
	if (st == TG_STEP_REMOVE && S_ISDIR(cur->st_mode)) {
		_cleanup_close_ int dfd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		return dfd < 0 ? -errno : keep_tree(a, dfd, r->path);
	}
	/* A directory's own metadata is not kept: only files hold data. */
	if (S_ISDIR(cur->st_mode) || ctime_ns(cur) < a->since)
		return 0;
	return keep(a, pfd, leaf, r->path, cur);
}

int tg_journal_keep_aside(const char *state_dir, const char *id, size_t *kept,
                          int (*cb)(void *ud, const char *path), void *ud)
{
	struct tg_journal *j;
	struct tg_jrecs s = { 0 };
	uint64_t done_from;
	if (kept)
		*kept = 0;
	int e = load(state_dir, id, &j, &s, &done_from);
	if (e < 0)
		return e;
	struct aside a = {
		.j = j, .state_dir = state_dir, .id = id, .since = last_write(j), .fd = -1, .cb = cb, .ud = ud,
	};
	e = each_target(j, &s, done_from, aside_one, &a);
	if (!e && a.fd >= 0 && fsync(a.fd) < 0)
		e = -errno;
	if (a.fd >= 0)
		close(a.fd);
	if (kept)
		*kept = a.kept;
	tg_jrecs_clear(&s);
	tg_journal_free(j);
	return e < 0 ? e : 0;
}
