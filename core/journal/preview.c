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

struct recs {
	struct tg_jrec *v;
	size_t n, cap;
};

static int keep_rec(void *ud, const struct tg_jrec *r)
{
	struct recs *s = ud;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct tg_jrec *nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	struct tg_jrec *c = &s->v[s->n];
	*c = *r;
	c->path = tg_strdup(r->path);
	c->path2 = r->path2 ? tg_strdup(r->path2) : NULL;
	c->aux = NULL;
	c->aux_len = 0;
	if (!c->path || (r->path2 && !c->path2)) {
		tg_jrec_clear(c);
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

static void recs_clear(struct recs *s)
{
	for (size_t i = 0; i < s->n; i++)
		tg_jrec_clear(&s->v[i]);
	free(s->v);
}

/* The records, BORN folded into CREATED (created nothing: CREATED with the
 * BORN flag and ino 0 is dropped), and the lowest seq a restore already
 * undid (UINT64_MAX: none). */
static int load(struct tg_journal *j, struct recs *s, uint64_t *done_from)
{
	int e = tg_journal_foreach(j, keep_rec, s);
	if (e < 0)
		return e;
	for (size_t i = 0; i < s->n; i++) {
		const struct tg_jrec *b = &s->v[i];
		if (b->kind == TG_JREC_BORN && b->ref && b->ref <= s->n && s->v[b->ref - 1].kind == TG_JREC_CREATED) {
			s->v[b->ref - 1].meta.ino = b->meta.ino;
			s->v[b->ref - 1].ref = 1; /* in memory: a BORN record names it */
		}
	}
	*done_from = UINT64_MAX;
	char buf[32] = { 0 };
	_cleanup_close_ int fd = tg_journal_state(j) == TG_JSTATE_ROLLING_BACK
	                       ? openat(j->dirfd, "progress", O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) >= 21)
		*done_from = strtoull(buf, NULL, 10);
	return 0;
}

static enum tg_step step_of(const struct tg_jrec *r, bool *skip)
{
	*skip = false;
	switch (r->kind) {
	case TG_JREC_CREATED:
		*skip = r->ref == 1 && r->meta.ino == 0; /* the call created nothing */
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
	int e = tg_journal_load(state_dir, id, &j);
	if (e < 0)
		return e;
	struct recs s = { 0 };
	uint64_t done_from;
	e = load(j, &s, &done_from);
	for (size_t i = s.n; e == 0 && i-- > 0;) {
		const struct tg_jrec *r = &s.v[i];
		bool skip;
		enum tg_step st = step_of(r, &skip);
		if (skip || r->seq >= done_from)
			continue;
		/* move back: from where it is now (path2) to where it was */
		e = st == TG_STEP_MOVE_BACK ? cb(ud, st, r->path2, r->path) : cb(ud, st, r->path, NULL);
	}
	recs_clear(&s);
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

int tg_journal_edited_after(const char *state_dir, const char *id, int (*cb)(void *ud, const char *path), void *ud)
{
	struct tg_journal *j;
	int e = tg_journal_load(state_dir, id, &j);
	if (e < 0)
		return e;
	struct recs s = { 0 };
	uint64_t done_from;
	e = load(j, &s, &done_from);
	/* The journal's last write: its last record, or the last restore step. */
	uint64_t last = mtime_ns(j->dirfd, "log"), p = mtime_ns(j->dirfd, "progress"),
	         m = mtime_ns(j->dirfd, "remap");
	last = p > last ? p : last;
	last = m > last ? m : last;
	uint64_t horizon = last + TG_EDIT_MARGIN_NS;
	_cleanup_strv_ char **seen = NULL;
	bool first = true; /* the step in flight of an interrupted restore may have run long */
	for (size_t i = s.n; e == 0 && i-- > 0;) {
		const struct tg_jrec *r = &s.v[i];
		if (r->seq >= done_from)
			continue;
		bool in_flight = first && done_from != UINT64_MAX;
		first = false;
		/* What a restore overwrites or removes: a file's bytes, a created
		 * object, explicit metadata. Parent dirs' times are not edits. */
		bool skip;
		enum tg_step st = step_of(r, &skip);
		if (skip || in_flight || (st != TG_STEP_REWRITE && st != TG_STEP_REMOVE && st != TG_STEP_META))
			continue;
		struct stat cur;
		if (tg_fs_lstat(j->wsfd, r->path, &cur) < 0 || reported(seen, r->path))
			continue;
		bool edited = ctime_ns(&cur) > horizon;
		if (!edited && st == TG_STEP_REMOVE && S_ISDIR(cur.st_mode)) {
			/* A created directory goes whole: an edit anywhere inside. */
			const char *leaf;
			_cleanup_close_ int pfd = tg_fs_parent(j->wsfd, r->path, &leaf);
			_cleanup_close_ int dfd = pfd < 0 ? -1 : openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			edited = dfd >= 0 && tree_edited(dfd, horizon);
		}
		if (edited) {
			e = tg_strv_push(&seen, r->path);
			if (!e)
				e = cb(ud, r->path);
		}
	}
	recs_clear(&s);
	tg_journal_free(j);
	return e < 0 ? e : 0;
}
