/* history/created.c — what is inside the directories a run created.
 *
 * The journal records that a run created a directory, not what the run made
 * inside it (nothing needs saving to undo it: the whole tree goes). Two
 * things follow, both answered by walking that tree as it is now:
 *
 * - undo: the post-state cannot tell the run's own files from files added
 *   there by hand after the commit, and undoing the creation would delete
 *   those silently. An entry whose inode changed (ctime, which no tool sets
 *   back) after the run committed, and that no newer run touched, was made or
 *   changed outside txguard: a conflict like any other (changed_after()
 *   says how that is told from what rollbacks and newer runs do).
 * - show: the run's summary at commit listed every entry of a created tree
 *   as created (txn.c); history lists the entries that are still as the run
 *   left them (same test, the other way round).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "history.h"
#include "history_int.h"
#include "base/fs.h"

/* Called for each entry below the walked directory (depth first, parents
 * first), with whether it changed after the run committed. */
typedef int (*visit_fn)(void *ud, const char *path, bool after_commit);

struct walker {
	uint64_t ended_ns;
	const struct tg_touched *skip;  /* what newer runs touched, or NULL */
	visit_fn fn;
	void *ud;
};

static uint64_t ns_of(const struct statx_timestamp *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + t->tv_nsec;
}

/* Made or changed after the commit? A directory: born after it. Anything
 * else: its inode changed after it (ctime), and either its content or
 * times were set after it (mtime: an edit) or the inode itself was born
 * after it (a file put there by hand, even with an old mtime by cp -p or
 * tar). A failed run's rollback touches ctime too, but puts the old mtime
 * back into the old inode: not a change. */
static bool changed_after(const struct statx *stx, uint64_t ended_ns)
{
	bool born_after = (stx->stx_mask & STATX_BTIME) && ns_of(&stx->stx_btime) > ended_ns;
	if (S_ISDIR(stx->stx_mode))
		return born_after;
	return ns_of(&stx->stx_ctime) > ended_ns &&
	       (ns_of(&stx->stx_mtime) > ended_ns || born_after);
}

static int walk(struct walker *w, int dfd, const char *rel);

static int visit(struct walker *w, int dfd, const char *rel, const char *name)
{
	_cleanup_free_ char *path = tg_asprintf("%s/%s", rel, name);
	if (!path)
		return -ENOMEM;
	struct statx stx;
	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW,
	          STATX_TYPE | STATX_INO | STATX_CTIME | STATX_MTIME | STATX_BTIME, &stx) < 0)
		return errno == ENOENT ? 0 : -errno;
	bool dir = S_ISDIR(stx.stx_mode);
	/* What a newer run created (a whole tree) is that run's to check and
	 * undo; what it touched is checked against its post-state, but what
	 * lies below a touched directory is still looked at: writing a file
	 * in a directory touches that directory too. */
	if (w->skip && tg_strset_has(&w->skip->created, path))
		return 0;
	bool theirs = w->skip && tg_touched_exactly(w->skip, path,
	                                              makedev(stx.stx_dev_major, stx.stx_dev_minor),
	                                              dir ? 0 : stx.stx_ino);
	int rc = theirs ? 0 : w->fn(w->ud, path, changed_after(&stx, w->ended_ns));
	if (rc != 0 || !dir)
		return rc < 0 ? rc : 0;
	_cleanup_close_ int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return errno == ENOENT ? 0 : -errno;
	return walk(w, sub, path);
}

static int walk(struct walker *w, int dfd, const char *rel)
{
	DIR *d = tg_fs_opendir(dfd);
	if (!d)
		return -errno;
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = tg_fs_readdir(d)))
		rc = visit(w, dfd, rel, de->d_name);
	closedir(d);
	return rc;
}

/* Walk below workspace/rel if it is a directory now (else nothing). */
static int walk_below(const char *workspace, const char *rel, struct walker *w)
{
	_cleanup_close_ int wsfd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wsfd < 0)
		return -errno;
	_cleanup_close_ int dfd = tg_fs_open_dir_at(wsfd, rel);
	if (dfd == -ENOENT || dfd == -ENOTDIR || dfd == -ELOOP)
		return 0;
	return dfd < 0 ? dfd : walk(w, dfd, rel);
}

/* ---- undo: hand-made entries are conflicts ---- */

struct conflict_ctx {
	const char *id;
	const struct tg_strset *own;
	struct tg_undo_result *r;
};

static int conflict_if_after(void *ud, const char *path, bool after)
{
	struct conflict_ctx *c = ud;
	/* a path the run recorded was checked against its post-state */
	if (!after || tg_strset_has(c->own, path))
		return 0;
	return tg_history_add_conflict(c->r, c->id, path);
}

static int collect_created(void *ud, const struct tg_jrec *rec)
{
	return rec->kind == TG_JREC_CREATED ? tg_strv_push(ud, rec->path) : 0;
}

int tg_history_check_created(const char *sd, const char *id, const struct tg_touched *newer,
                             const struct tg_strset *own, const struct tg_strset *changed,
                             struct tg_undo_result *r)
{
	struct tg_txinfo info = { 0 };
	int rc = tg_journal_read_info(sd, id, &info);
	if (rc < 0)
		return rc;
	char **made = NULL;
	struct tg_strset dirs = { 0 };
	if (info.ended_ns)
		rc = tg_run_records(sd, id, collect_created, &made);
	if (rc == 0)
		rc = tg_history_post_kinds(sd, id, NULL, &dirs);
	struct conflict_ctx c = { .id = id, .own = own, .r = r };
	struct walker w = { .ended_ns = info.ended_ns, .skip = newer, .fn = conflict_if_after, .ud = &c };
	/* Only a directory the run left, still there: whatever else is at that
	 * path now was put there later, and is checked as such. */
	for (size_t i = 0; rc == 0 && made && made[i]; i++)
		if (tg_strset_has(&dirs, made[i]) && !tg_strset_has(changed, made[i]))
			rc = walk_below(info.workspace, made[i], &w);
	tg_strv_free(made);
	tg_strset_clear(&dirs);
	tg_txinfo_clear(&info);
	return rc;
}

/* ---- show: the entries of a created tree, as the run left them ---- */

static int push_if_as_left(void *ud, const char *path, bool after)
{
	return after ? 0 : tg_changes_push(ud, TG_CHANGE_CREATED, path, NULL);
}

int tg_history_created_subtree(const struct tg_txinfo *run, const char *rel, struct tg_changes *out)
{
	struct walker w = { .ended_ns = run->ended_ns, .fn = push_if_as_left, .ud = out };
	return walk_below(run->workspace, rel, &w);
}
