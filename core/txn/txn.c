/* txn.c — a transaction on a workspace: state dir and lock, recovery, and
 * the mapping of a decoded syscall (struct tg_op) onto journal captures.
 *
 * First touch is keyed by inode (dev, ino), not by path: a file renamed and
 * written again needs no second capture, and a rename needs no invalidation
 * of path prefixes. Pre-existing inodes cannot be recycled during the run
 * because every one that loses its last name is kept alive in the stash.
 */
#include "txn.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alias.h"
#include "journal/journal.h"
#include "history/history.h"
#include "base/fs.h"
#include "base/path.h"
#include "base/set.h"
#include "base/util.h"

#define TG_HISTORY_RUNS 50
#define TG_HISTORY_BYTES (1ull << 30)

/* Has st's inode been seen (content, meta, born, ...)? */
static bool idset_has(const struct tg_idset *s, const struct stat *st)
{
	return tg_idset_has(s, st->st_dev, st->st_ino);
}

static int idset_add(struct tg_idset *s, uint64_t dev, uint64_t ino)
{
	return tg_idset_add(s, dev, ino) < 0 ? -ENOMEM : 0;
}

/* ---- the transaction ---- */

/* A creation journaled before its call ran. What it made is learnt from
 * the call's own result (tg_txn_after: the fd an open returned, else the
 * name at the call's exit); without one, by the name once that thread makes
 * its next call or is gone, or at the end. Never from another thread's
 * call: the name may hold another call's object by then, or nothing. */
struct pending {
	pid_t tid;               /* the thread that made the call (op->pid) */
	uint64_t seq;            /* its CREATED record, or 0 (no record needed) */
	char *rel;
	bool link;               /* made by link(): a new name, not a new inode */
	bool watch;              /* O_CREAT of an existing name: if another thread
	                          * removes it before the call runs, the call
	                          * creates a new file no record names */
	bool await;              /* the caller may hand over the call's result */
	bool by_fd;              /* an open: its result is an fd on the object */
	bool moved_in;           /* a rename from outside: the object is dev, ino */
	bool alone;              /* its thread acted alone until it is settled
	                          * (tg_txn_alone): its name holds what it made */
	uint64_t dev, ino;       /* watch: what the name held; moved_in: what arrives */
	uint64_t at;             /* when it was journaled (await only: see "calls
	                          * on one name") */
	char **via;              /* the symlinks its path went through (names in
	                          * the workspace; NULL: none) */
};

/* A removal, move or object change of a task that is not alone,
 * journaled, until it has surely returned: its result, awaited while tasks
 * take turns (see "failed calls"), or its thread's next call, fork event or
 * end (see "calls on one name"). */
struct voidable {
	pid_t tid;
	uint64_t first, last;    /* its records (first > last: none) */
	uint64_t at;             /* when it was journaled */
	char **names;            /* the names it removes or moves, and the
	                          * symlinks its paths went through (NULL: none) */
	bool watched;            /* its result is awaited (else: its thread's
	                          * next call or end tells it has returned) */
};

static void pend_free(struct pending *p)
{
	free(p->rel);
	tg_strv_free(p->via);
}

static void vw_free(struct voidable *v)
{
	tg_strv_free(v->names);
}

struct tg_txn {
	char *workspace;
	char *state_dir;
	int lockfd;
	struct tg_journal *j;
	uint64_t max_runs, max_bytes;
	struct tg_idset content; /* content (and metadata) already saved */
	struct tg_idset meta;    /* metadata already saved */
	struct tg_idset meta_said; /* ... in a record of its own, not as a parent's */
	struct tg_idset born;    /* created by this transaction: nothing to save */
	struct tg_idset unborn;  /* ... and its last name removed since: the
	                          * number may be a new object's (born_add) */
	struct tg_strset vacated; /* names a restore must be able to put back, as
	                          * "dev:ino/leaf" of their directory: the
	                          * directory may move (and keep its entries) */
	struct tg_idset moved;   /* objects not born here that a rename moved */
	struct tg_idset pinned;  /* born, but an exchange's undo needs them in place */
	struct tg_idset removed; /* originals that lost a name: kept by the journal */
	struct pending *pend;    /* creations whose object is not known yet */
	size_t npend, cappend;
	/* Quiet creations (see quiet_add): names whose object joins `born`
	 * only when a later call could look at it. */
	char **quiet;
	size_t nquiet, capquiet;
	struct voidable *vw;     /* removals and moves awaiting their result */
	size_t nvw, capvw;
	pid_t last_tid;          /* the task of the last call journaled */
	uint64_t company_until;  /* tg_now_ns() until which tasks take turns */
	pid_t tid;               /* the thread whose call is being journaled */
	bool alone;              /* ... and it is the tree's only task (tg_op.alone) */
	const struct tg_op *op;  /* the call itself, while it is journaled */
	bool ending;             /* tg_txn_end: nothing runs any more */
	bool finished;
	bool counts_valid;       /* counts of the last tg_txn_changes after the end */
	uint64_t counts_seq;     /* ... at this last journal record */
	bool saved;              /* ... and whether an original was saved
	                          * (tg_change_events_saved) */
	size_t counts[TG_CHANGE_KIND_COUNT];
	pid_t owner;             /* the process that opened it (not a forked child) */
	struct tg_recovery recovery; /* what tg_txn_open's automatic recovery did */
	struct tg_aliases *aliases;  /* names of workspace objects outside it */
	bool join;               /* a member of a multi-command transaction */
	/* The history as the clean mark kept it at the start (journal.h,
	 * tg_journal_clean_runs), for a plain run: what its commit prunes by
	 * without reading every run's info, and the index of the mark it
	 * leaves. A member of a multi-command transaction or an undo (whose
	 * restore changes runs' states) goes by the listing, as before. */
	struct tg_runs hist;
	bool hist_known;
	bool trash;              /* pruned runs wait in the trash (tg_txn_collect) */
	bool sync_set;           /* the journal's sync mode is chosen (first capture) */
	enum tg_sync_choice sync; /* what it is chosen from */
	/* One call's lookups (its path, its parent for the parent's mtime and
	 * for "made in a directory of this run?", the object it made) go
	 * through the directory of its path, opened once: op_begin/op_end
	 * bracket the call, and nothing outside them sees the cache (the
	 * directory may be renamed between two calls). */
	struct tg_fs_dircache dc;
	bool in_op;
};

static int write_gitignore(const char *dir)
{
	_cleanup_free_ char *gi = tg_asprintf("%s/.gitignore", dir);
	if (!gi)
		return -ENOMEM;
	int fd = open(gi, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;
	int e = tg_write_all(fd, "*\n", 2);
	if (!e && fsync(fd) < 0)
		e = -errno;
	close(fd);
	return e;
}

/* A state dir inside the workspace hides from git with a `*` .gitignore,
 * in it and, for the .txguard/state fallback, in .txguard. */
static int prepare_state_dir(const char *workspace, const char *state_dir)
{
	int e = tg_fs_mkdir_p(state_dir);
	if (e < 0 || !tg_path_is_under(state_dir, workspace))
		return e;
	e = write_gitignore(state_dir);
	_cleanup_free_ char *parent = tg_strndup(state_dir, (size_t)(strrchr(state_dir, '/') - state_dir));
	if (!e && parent && strcmp(parent, workspace) != 0 && tg_path_is_under(parent, workspace))
		e = write_gitignore(parent);
	return e;
}

static int take_lock(const char *state_dir, enum tg_lock_mode mode)
{
	_cleanup_free_ char *p = tg_asprintf("%s/lock", state_dir);
	if (!p)
		return -ENOMEM;
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int op = LOCK_EX | (mode == TG_LOCK_FAIL ? LOCK_NB : 0);
	while (flock(fd, op) < 0) {
		int e = errno;
		if (e == EINTR)
			continue;
		close(fd);
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	return fd;
}

static int count_edit(void *ud, const char *path)
{
	(void)path;
	(*(size_t *)ud)++;
	return 0;
}

struct kept_cb {
	struct tg_recovery *r;
	const char *id;
};

static int on_kept(void *ud, const char *path)
{
	struct kept_cb *k = ud;
	return k->r->on_kept ? k->r->on_kept(k->r->ud, k->id, path) : 0;
}

/* Under the lock, no live owner holds an open transaction: restore each one
 * (and clear the leftovers of finished rollbacks). Without force, a
 * transaction whose restore would overwrite paths changed after the crash
 * (tg_journal_edited_after) stops the recovery with -ESTALE, nothing of it
 * restored: like undo, recovery never silently overwrites hand edits. What
 * changed after the journal's last write but within the margin (the
 * crashed run's last writes, or a quick edit: nothing tells them apart) is
 * copied aside first (tg_journal_keep_aside); if that fails, nothing of the
 * transaction is restored. */
static int check_and_keep(const char *state_dir, const char *id, struct tg_recovery *r)
{
	size_t edits = 0, kept = 0;
	int e = 0;
	if (!r->force && (e = tg_journal_edited_after(state_dir, id, count_edit, &edits)) == 0 && edits)
		e = -ESTALE;
	struct kept_cb k = { .r = r, .id = id };
	if (!e)
		e = tg_journal_keep_aside(state_dir, id, &kept, on_kept, &k);
	r->kept += kept;
	return e;
}

/* An undo journaling itself, interrupted (open), or a redo interrupted
 * (rolling-back): restore its journal and put the runs it undid back in
 * effect, before anything else. Otherwise the loop below would resume
 * the undo of a run it had reached, on a tree the undo's own restore then
 * changes back. Either way the workspace ends as before the undo. */
static int recover_undos(const char *state_dir, struct tg_recovery *r)
{
	struct tg_txinfo *v;
	size_t n;
	int e = tg_run_list(state_dir, &v, &n);
	for (size_t i = 0; i < n && !e; i++) {
		enum tg_jstate st = v[i].state;
		if (!tg_run_is_undo(&v[i]) || (st != TG_JSTATE_OPEN && st != TG_JSTATE_ROLLING_BACK))
			continue;
		e = check_and_keep(state_dir, v[i].id, r);
		if (!e)
			e = tg_run_revert_undo(state_dir, v[i].id);
		struct tg_txinfo now = { 0 };
		if (!e && tg_journal_read_info(state_dir, v[i].id, &now) == 0 && now.state == TG_JSTATE_ROLLED_BACK)
			e = tg_journal_remove_dir(state_dir, v[i].id);
		tg_txinfo_clear(&now);
		if (!e)
			r->restored++;
	}
	tg_txinfo_free_all(v, n);
	return e;
}

/* The states recovery acts on: an interrupted run or undo (restored), a
 * rolled-back run (its dir dropped). */
static bool recovery_acts_on(enum tg_jstate st)
{
	return st == TG_JSTATE_OPEN || st == TG_JSTATE_ROLLING_BACK || st == TG_JSTATE_ROLLED_BACK;
}

/* The runs' dir entries that may be run dirs (tg_journal_sweep looks at
 * each): not hidden, a directory or of a type readdir does not say. */
static int count_run_dirs(const char *state_dir, size_t *n)
{
	DIR *d;
	*n = 0;
	int e = tg_journal_runs_dir(state_dir, &d);
	if (e < 0 || !d)
		return e;
	for (struct dirent *de; (de = readdir(d));)
		if (de->d_name[0] != '.' && (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN))
			(*n)++;
	closedir(d);
	return 0;
}

/* Whether the history holds nothing for recovery to do, from one listing:
 * every run dir has its info (none half made, for tg_journal_sweep to
 * drop) and none is in a state recovery acts on. That is every start but
 * the one after a crash, and the full pass below reads each run's info
 * three times: 600 syscalls, about 1 ms, in a workspace with the default
 * 50 runs of history. Anything unexpected (a count that differs, an info
 * that cannot be read) takes the full pass. */
static bool nothing_to_recover(const char *state_dir, struct tg_runs *runs)
{
	struct tg_txinfo *v;
	size_t n, dirs;
	if (tg_run_list(state_dir, &v, &n) < 0)
		return false;
	bool quiet = count_run_dirs(state_dir, &dirs) == 0 && dirs == n;
	for (size_t i = 0; quiet && i < n; i++)
		quiet = !recovery_acts_on(v[i].state);
	if (!quiet) {
		tg_txinfo_free_all(v, n);
		return false;
	}
	/* The listing is the history: an empty one is an index too. */
	*runs = (struct tg_runs){ .v = v ? v : calloc(1, sizeof(*v)), .n = n };
	return true;
}

/* mark_ok: a start, which takes the mark a clean end left (journal.h);
 * `txguard recover` never does, it reads every run. *hist: the history,
 * when a clean mark (hist->raw, unparsed) or a listing that found nothing
 * to do (hist->v) told it, else empty. */
static int recover_locked(const char *state_dir, struct tg_recovery *r, bool mark_ok, struct tg_runs *hist)
{
	struct tg_txinfo *v;
	size_t n;
	*hist = (struct tg_runs){ 0 };
	if (mark_ok && tg_journal_clean_runs(state_dir, hist) >= 0)
		return 0;
	if (nothing_to_recover(state_dir, hist)) {
		tg_journal_clean_mark(state_dir, hist->v ? hist : NULL);
		return 0;
	}
	int e = tg_journal_sweep(state_dir);
	if (!e)
		e = recover_undos(state_dir, r);
	if (!e)
		e = tg_run_list(state_dir, &v, &n);
	if (e < 0)
		return e;
	for (size_t i = 0; i < n && !e; i++) {
		enum tg_jstate st = v[i].state;
		if (st == TG_JSTATE_ROLLED_BACK) {
			e = tg_journal_remove_dir(state_dir, v[i].id);
			continue;
		}
		if (st != TG_JSTATE_OPEN && st != TG_JSTATE_ROLLING_BACK)
			continue;
		e = check_and_keep(state_dir, v[i].id, r);
		if (e < 0)
			break;
		/* An interrupted undo of a committed run goes on after the newer
		 * runs undone before it (ignored by a live run's rollback). */
		_cleanup_strv_ char **newer = NULL;
		(void)tg_run_newer_undone(state_dir, v[i].id, &newer);
		struct tg_journal *j;
		e = tg_journal_load(state_dir, v[i].id, &j);
		if (!e)
			e = tg_journal_rollback_after(j, (const char *const *)newer, NULL, NULL);
		bool remove = !e && tg_journal_state(j) == TG_JSTATE_ROLLED_BACK;
		tg_journal_free(j);
		if (remove)
			e = tg_journal_remove_dir(state_dir, v[i].id);
		if (!e)
			r->restored++;
	}
	tg_txinfo_free_all(v, n);
	if (!e)
		tg_journal_clean_mark(state_dir, NULL);
	return e;
}

static int resolve_state_dir(const char *workspace, const char *given, char **out)
{
	if (given) {
		*out = tg_path_normalize(given);
		return *out ? 0 : -errno;
	}
	return tg_journal_default_state_dir(workspace, out);
}

int tg_recover(const char *workspace, const char *state_dir, int *recovered)
{
	struct tg_recovery r = { 0 };
	int e = tg_recover_ex(workspace, state_dir, &r);
	if (recovered)
		*recovered = r.restored;
	return e;
}

int tg_recover_state_dir(const char *workspace, const char *state_dir, char **out)
{
	_cleanup_free_ char *ws = tg_path_normalize(workspace);
	if (!ws)
		return -errno;
	return resolve_state_dir(ws, state_dir, out);
}

int tg_recover_ex(const char *workspace, const char *state_dir, struct tg_recovery *r)
{
	r->restored = 0;
	r->kept = 0;
	_cleanup_free_ char *ws = tg_path_normalize(workspace);
	_cleanup_free_ char *sd = NULL;
	if (!ws)
		return -errno;
	int e = resolve_state_dir(ws, state_dir, &sd);
	if (e < 0)
		return e;
	struct stat st;
	if (stat(sd, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	_cleanup_close_ int lock = take_lock(sd, TG_LOCK_FAIL);
	if (lock < 0)
		return lock;
	struct tg_runs hist;
	e = recover_locked(sd, r, false, &hist);
	tg_runs_clear(&hist);
	return e;
}

/* The quiet creations' names (see "quiet creations"), forgotten. */
static void quiet_drop(struct tg_txn *t)
{
	for (size_t i = 0; i < t->nquiet; i++)
		free(t->quiet[i]);
	t->nquiet = 0;
}

void tg_txn_free(struct tg_txn *t)
{
	if (!t)
		return;
	int saved = errno;
	/* Opened, never finished, nothing journaled (the run failed before it
	 * started): there is nothing to restore, so leave no "open" transaction
	 * for the next run to recover. Only the opener, still under the lock. */
	if (t->j && !t->finished && t->lockfd >= 0 && t->owner == getpid() &&
	    tg_journal_on_disk(t->j) && tg_journal_last_seq(t->j) == 0)
		(void)tg_journal_remove_dir(t->state_dir, tg_journal_id(t->j));
	tg_journal_free(t->j);
	if (t->lockfd >= 0)
		close(t->lockfd);
	tg_idset_clear(&t->content);
	tg_idset_clear(&t->meta);
	tg_idset_clear(&t->meta_said);
	tg_idset_clear(&t->born);
	tg_idset_clear(&t->unborn);
	tg_idset_clear(&t->pinned);
	tg_idset_clear(&t->removed);
	tg_idset_clear(&t->moved);
	tg_strset_clear(&t->vacated);
	for (size_t i = 0; i < t->npend; i++)
		pend_free(&t->pend[i]);
	free(t->pend);
	quiet_drop(t);
	free(t->quiet);
	for (size_t i = 0; i < t->nvw; i++)
		vw_free(&t->vw[i]);
	free(t->vw);
	tg_aliases_free(t->aliases);
	tg_runs_clear(&t->hist);
	free(t->workspace);
	free(t->state_dir);
	free(t);
	errno = saved;
}

/* ext4 mounted with data=ordered (its default) or data=journal commits its
 * metadata changes in order, so the stash hard link made before a workspace
 * call is on disk before that call's effect is. The record's appended data
 * is ordered only once its blocks are allocated, which delalloc (ext4's
 * default) defers to writeback: docs/journal.md, "What ext4 really orders",
 * measured with scripts/bench/ext4-order.c. So on such an ext4, auto gives
 * batch's guarantee (a killed txguard loses nothing; a power cut may lose
 * the last records). tmpfs does not survive a power cut at all. */
static bool ordered_fs(const char *path)
{
	struct statfs sf;
	if (statfs(path, &sf) < 0)
		return false;
	if (sf.f_type == TMPFS_MAGIC)
		return true;
	if (sf.f_type != EXT4_SUPER_MAGIC)
		return false;
	struct stat st;
	if (stat(path, &st) < 0)
		return false;
	/* data=writeback gives no data ordering: look at the mount options. */
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	bool writeback = false, found = false;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2)
			continue;
		if (makedev(maj, min) != st.st_dev)
			continue;
		found = true;
		writeback = writeback || strstr(line, "data=writeback") != NULL;
	}
	return found && !writeback;
}

static enum tg_sync_mode sync_mode(enum tg_sync_choice c, const char *workspace, const char *state_dir)
{
	switch (c) {
	case TG_SYNC_CHOICE_FULL:
		return TG_SYNC_FULL;
	case TG_SYNC_CHOICE_BATCH:
		return TG_SYNC_BATCH;
	case TG_SYNC_CHOICE_AUTO:
	default: {
		/* Same filesystem with ordered commits: the per-call sync buys
		 * nothing, so sync in batches; anything else: every record. */
		struct stat a, b;
		if (stat(workspace, &a) == 0 && stat(state_dir, &b) == 0 && a.st_dev == b.st_dev &&
		    ordered_fs(state_dir))
			return TG_SYNC_BATCH;
		return TG_SYNC_FULL;
	}
	}
}

int tg_txn_open(struct tg_txn **out, const struct tg_txn_opts *opts)
{
	if (!opts || !opts->workspace || opts->workspace[0] != '/')
		return -EINVAL;
	struct tg_txn *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->lockfd = -1;
	t->owner = getpid();
	t->max_runs = opts->history_max_runs ? opts->history_max_runs : TG_HISTORY_RUNS;
	t->max_bytes = opts->history_max_bytes ? opts->history_max_bytes : TG_HISTORY_BYTES;
	t->workspace = tg_path_normalize(opts->workspace);
	int e = t->workspace ? 0 : -errno;
	if (!e && !(t->aliases = tg_aliases_new(t->workspace)))
		e = -ENOMEM;
	struct stat st;
	if (!e && (stat(t->workspace, &st) < 0 || !S_ISDIR(st.st_mode)))
		e = errno ? -errno : -ENOTDIR;
	if (!e)
		e = resolve_state_dir(t->workspace, opts->state_dir, &t->state_dir);
	if (!e)
		e = prepare_state_dir(t->workspace, t->state_dir);
	if (!e)
		e = t->lockfd = take_lock(t->state_dir, opts->lock);
	if (e >= 0)
		e = recover_locked(t->state_dir, &t->recovery, true, &t->hist);
	/* A member of a multi-command transaction is named in its history
	 * at once; a plain run makes its journal dir at its first record
	 * (tg_journal_create_deferred): one that changes nothing leaves no
	 * trace and waits for no disk. */
	t->join = opts->join_id != NULL;
	t->hist_known = (t->hist.v || t->hist.raw) && !t->join && !opts->undoes;
	t->sync = opts->sync;
	if (!e && (t->join || opts->undoes))
		e = tg_journal_create(t->state_dir, t->workspace, opts->command, opts->join_id, &t->j);
	else if (!e)
		e = tg_journal_create_deferred(t->state_dir, t->workspace, opts->command, NULL, &t->j);
	if (!e && opts->undoes)
		e = tg_journal_set_undoes(t->j, opts->undoes);
	if (e < 0) {
		tg_txn_free(t);
		return e;
	}
	*out = t;
	return 0;
}

int tg_txn_set_undoes(struct tg_txn *t, const char *ids)
{
	t->hist_known = false; /* an undo: see hist */
	return tg_journal_set_undoes(t->j, ids);
}

const char *tg_txn_id(const struct tg_txn *t) { return tg_journal_id(t->j); }
const struct tg_recovery *tg_txn_recovery(const struct tg_txn *t) { return &t->recovery; }
const char *tg_txn_state_dir(const struct tg_txn *t) { return t->state_dir; }

bool tg_txn_is_private(const struct tg_txn *t, const char *path)
{
	return path && tg_path_is_under(path, t->state_dir);
}

/* ---- ops → captures ---- */

/* Workspace-relative form of abs, or NULL when outside. */
static const char *rel_of(const struct tg_txn *t, const char *abs)
{
	return tg_path_below(abs, t->workspace);
}

/* Append abs's name in the workspace to the vector *v (nothing when it
 * lies outside, or is NULL). */
static int push_rel(const struct tg_txn *t, char ***v, const char *abs)
{
	const char *rel = rel_of(t, abs);
	return rel && tg_strv_push(v, rel) < 0 ? -ENOMEM : 0;
}

/* The same for each of abs (NULL-terminated; NULL: none). */
static int push_rels(const struct tg_txn *t, char ***v, char *const *abs)
{
	for (size_t i = 0; abs && abs[i]; i++)
		if (push_rel(t, v, abs[i]) < 0)
			return -ENOMEM;
	return 0;
}

/* The journal captured it, saw it moved or removed: an original — or a
 * new object that took a number the run freed (a removed directory), or
 * one another thread captured before its creation was settled. */
static bool known_original(struct tg_txn *t, const struct stat *st)
{
	return idset_has(&t->content, st) || idset_has(&t->meta, st) || idset_has(&t->moved, st) ||
	       idset_has(&t->removed, st);
}

/* Made during this transaction, by the filesystem's own clock: the birth
 * time where the filesystem keeps one (exact: a rename, link(), write or
 * chmod does not change it, nor does a reused inode number), else the
 * ctime — which those set on an original too: objects the journal knows,
 * and names with other links, are then not taken for new. A birth at the
 * very stamp the transaction started at (the workspace filesystem's, or
 * the coarse clock's where that cannot be had) may be an original's made
 * just before: by_name (found at a name, not by the call's fd), one the
 * journal knows is then taken for an original. sx: a
 * statx of the same object with STATX_BTIME asked, or an empty mask. */
static bool made_in_run(struct tg_txn *t, const struct stat *st, const struct statx *sx, bool by_name)
{
	uint64_t start = tg_journal_started_ns(t->j);
	if ((sx->stx_mask & STATX_BTIME) && sx->stx_ino == st->st_ino) {
		uint64_t b = (uint64_t)sx->stx_btime.tv_sec * 1000000000u + sx->stx_btime.tv_nsec;
		return b > start || (b == start && !(by_name && known_original(t, st)));
	}
	if (known_original(t, st))
		return false;
	if (!S_ISDIR(st->st_mode) && st->st_nlink > 1)
		return false;
	return (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec >= start;
}

static void op_begin(struct tg_txn *t)
{
	tg_fs_dircache_clear(&t->dc);
	t->in_op = true;
}

static void op_end(struct tg_txn *t)
{
	t->in_op = false;
	tg_fs_dircache_clear(&t->dc);
}

/* lstat of rel: within a call, through its directory cache. */
static int op_lstat(struct tg_txn *t, const char *rel, struct stat *st)
{
	return t->in_op ? tg_journal_lstat_cached(t->j, &t->dc, rel, st) : tg_journal_lstat(t->j, rel, st);
}

/* The object at rel now: 0, or -errno (-ENOENT: nothing there). */
static int ident_of_name(struct tg_txn *t, const char *rel, struct stat *st, struct statx *sx)
{
	struct tg_fs_dircache once = { 0 };
	int e = tg_journal_lstatx_cached(t->j, t->in_op ? &t->dc : &once, rel, st, sx);
	tg_fs_dircache_clear(&once);
	return e;
}

/* The object thread tid's fd refers to, whatever its name is now (or if it
 * has none left): what an open made or opened. One statx through the
 * /proc link (it leads to the open file's own object, not to a name). */
static int ident_of_fd(pid_t tid, long fd, struct stat *st, struct statx *sx)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/fd/%ld", (int)tid, fd);
	if (statx(AT_FDCWD, p, AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS | STATX_BTIME, sx) < 0) {
		sx->stx_mask = 0;
		return -errno;
	}
	tg_fs_stat_of_statx(st, sx);
	return 0;
}

/* Where the object tid's fd refers to is named in the workspace now, or
 * NULL (removed, or out of reach). */
static char *name_of_fd(struct tg_txn *t, pid_t tid, long fd)
{
	char p[64], text[PATH_MAX + 1];
	snprintf(p, sizeof(p), "/proc/%d/fd/%ld", (int)tid, fd);
	ssize_t l = readlink(p, text, sizeof(text) - 1);
	if (l <= 0 || text[0] != '/')
		return NULL;
	text[l] = '\0';
	const char *rel = rel_of(t, text);
	return rel && !tg_txn_is_private(t, text) ? tg_strdup(rel) : NULL;
}

/* ---- numbers used twice ----
 *
 * `born` keeps the identities of what the run made. When the run removes
 * the last name of such an object, the call frees its inode number once it
 * has run, and the filesystem may give that number to the next new file
 * (ext4 gives it to the next file of the directory). Every new object the
 * run makes joins `born` when it is known (born_add), and that is all the
 * set's other readers need to be right. One reader asks more: a creation
 * that met an existing name (settle_made's watch) takes an object already
 * in `born` for another call's creation, which has a record of its own. A
 * new file under a freed number would then be on no record: the summary
 * left it out, and a rollback failed at its name
 * (new_file_under_the_number_of_a_removed_creation in the journal's unit
 * tests). So such a removal marks the identity `unborn`
 * (born_loses_last_name) until a new object of the run takes the number,
 * and the watch records an unborn one. A removal that fails leaves an
 * object marked that is still the run's earlier creation; a watch that
 * then finds it records it once more, where it is now, and the restore
 * removes it there, as the run's. */

static int born_add(struct tg_txn *t, uint64_t dev, uint64_t ino)
{
	int e = idset_add(&t->born, dev, ino);
	if (!e && t->unborn.n)
		(void)tg_idset_del(&t->unborn, dev, ino);
	return e;
}

/* st, which the run made, is about to lose a name: its last, if it is a
 * directory or a file of one link. (A file the journal keeps alive for an
 * exchange's undo, pinned, is stashed instead: its number stays taken.) */
static int born_loses_last_name(struct tg_txn *t, const struct stat *st)
{
	if ((!S_ISDIR(st->st_mode) && st->st_nlink > 1) || !idset_has(&t->born, st))
		return 0;
	return idset_add(&t->unborn, st->st_dev, st->st_ino);
}

/* The outcome of pending creation p: st (and sx) is what its call made or
 * opened, NULL when it made nothing; where: the object's name now (NULL:
 * it has none in the workspace). by_name: st is what the name holds, not
 * what the call's fd refers to. */
static int settle_made(struct tg_txn *t, const struct pending *p, const struct stat *st,
                       const struct statx *sx, const char *where, bool by_name)
{
	int e = 0;
	if (p->watch) {
		/* A new object no record names: record it now, under the name
		 * it has now; its seq is later than any removal of the old object
		 * or move of the new one, so a restore removes it first. */
		if (!st || ((uint64_t)st->st_dev == p->dev && (uint64_t)st->st_ino == p->ino) ||
		    (idset_has(&t->born, st) && !idset_has(&t->unborn, st)) || !made_in_run(t, st, sx, by_name))
			return 0; /* what was there, another call's creation, or an original moved here */
		e = born_add(t, st->st_dev, st->st_ino);
		if (!e && where && st->st_nlink > 0)
			e = tg_journal_created(t->j, where);
		if (!e && where && st->st_nlink > 0)
			e = tg_journal_born(t->j, tg_journal_last_seq(t->j), st->st_dev, st->st_ino);
		return e;
	}
	/* The call failed, or opened an original that another thread moved
	 * or linked to the name first: a restore must not remove whatever it
	 * later finds at that name (it may be an original put back). */
	/* A move from outside brings an object born before the run: it is
	 * the run's if it is the very one that was moved. */
	bool moved = st && p->moved_in && (uint64_t)st->st_dev == p->dev && (uint64_t)st->st_ino == p->ino;
	if (!st || (p->moved_in && !moved) || (!p->link && !moved && !made_in_run(t, st, sx, by_name)))
		return p->seq ? tg_journal_born(t->j, p->seq, 0, 0) : 0;
	if (!p->link)
		e = born_add(t, st->st_dev, st->st_ino);
	if (!e && p->seq)
		e = tg_journal_born(t->j, p->seq, st->st_dev, st->st_ino);
	return e;
}

static void pend_drop(struct tg_txn *t, size_t i)
{
	pend_free(&t->pend[i]);
	t->pend[i] = t->pend[--t->npend];
}

/* Settle pending creation i by its name: its call has surely run (its
 * thread moved on or is gone, or the run ended) but its result never came. */
static int settle_by_name(struct tg_txn *t, size_t i)
{
	struct pending *p = &t->pend[i];
	struct stat st;
	struct statx sx;
	int e = ident_of_name(t, p->rel, &st, &sx);
	if (e < 0 && e != -ENOENT)
		return e;
	/* Alone, the call's object is the name's, as its own result would
	 * have said (by its fd, for an open). */
	e = settle_made(t, p, e == 0 ? &st : NULL, &sx, p->rel, !(p->alone && p->by_fd));
	if (e < 0)
		return e;
	pend_drop(t, i);
	return 0;
}

/* ---- quiet creations ----
 *
 * A file that the tree's only task creates in a directory of this run
 * needs no record (skip_created), and joining `born` is all that settling
 * it does: so that a later write, chmod, move or removal of it saves
 * nothing. Until its thread calls again, its name holds what the call made
 * (tg_txn_alone); past that, too, while every later call only makes new
 * names: a creation at a free name, a mkdir, a mknod or a symlink look at
 * nothing but the new name's parent, a directory. So the names wait here,
 * and are settled only before a call that could look at an existing file
 * (settle_quiet), when another task joins (tg_txn_company), or when the
 * list is full. At the end nothing reads `born` any more: they are dropped
 * unread. A pip install --target or an npm ci that writes 20,000 files
 * then makes no lookup of its own per file. */

#define TG_QUIET_MAX 65536

/* Each name's object joins `born` if the run made it (settle_made's way
 * for a creation without a record; by the name, which held the call's
 * object as its fd would have: by_name false). An empty name: the call
 * failed, or made nothing. */
static int settle_quiet(struct tg_txn *t)
{
	/* Outside a call (a task joining), one directory cache for the whole
	 * list: every task is stopped meanwhile, and the names of one
	 * directory come one after another. */
	struct tg_fs_dircache own = { 0 };
	struct tg_fs_dircache *dc = t->in_op ? &t->dc : &own;
	int e = 0;
	for (size_t i = 0; i < t->nquiet && e >= 0; i++) {
		struct stat st;
		struct statx sx;
		e = tg_journal_lstatx_cached(t->j, dc, t->quiet[i], &st, &sx);
		if (e == 0 && made_in_run(t, &st, &sx, false))
			e = born_add(t, st.st_dev, st.st_ino);
		else if (e == -ENOENT)
			e = 0;
	}
	tg_fs_dircache_clear(&own);
	quiet_drop(t);
	return e;
}

static int quiet_add(struct tg_txn *t, const char *rel)
{
	if (t->nquiet == TG_QUIET_MAX) {
		int e = settle_quiet(t);
		if (e < 0)
			return e;
	}
	char **nq = tg_grow(t->quiet, t->nquiet, &t->capquiet, sizeof(*nq), 64);
	if (!nq)
		return -ENOMEM;
	t->quiet = nq;
	if (!(t->quiet[t->nquiet] = tg_strdup(rel)))
		return -ENOMEM;
	t->nquiet++;
	return 0;
}

static bool thread_gone(pid_t tid)
{
	return tid > 0 && kill(tid, 0) < 0 && errno == ESRCH;
}

/* Before a call of thread tid (0: none, e.g. a summary), settle the
 * creations whose call has run: tid's own earlier ones and those of threads
 * that are gone. Another live thread's creation waits for its result or
 * its thread's next call, whatever its name holds: that may be another
 * call's object. final: nothing runs any more. */
static int settle(struct tg_txn *t, pid_t tid, bool final)
{
	if (final)
		quiet_drop(t);
	for (size_t i = 0; i < t->npend;) {
		const struct pending *p = &t->pend[i];
		if (!final && p->tid != tid && !thread_gone(p->tid)) {
			i++;
			continue;
		}
		int e = settle_by_name(t, i);
		if (e < 0)
			return e;
	}
	return 0;
}

/* ---- failed calls ----
 *
 * A call's records are written at its stop, before it runs. Alone in the
 * tree, a task's calls run in the order of their records, and a removal
 * that fails (an rmdir of a directory that is not empty) is told by the
 * names that follow (the summary's replay, changes.c). With company,
 * another task may have done the same call first: two tasks trap one
 * rename while its object is still at the source, and the call that runs
 * second fails (ENOENT). Its records describe nothing that happened, and
 * nothing after them tells. So a removal or move waits for its result (a
 * syscall-exit stop) while tasks take turns making calls, and a failure
 * voids its records (tg_journal_void), which the summary then skips. A
 * task that is not alone only because a shell waits for it (the usual
 * `bash -c '...'`) takes no turns with anyone: its calls are not watched
 * (an rm -rf of 30,000 files would pay 24% more). The first race after
 * TG_COMPANY_NS of one task's calls is not seen either. The restore needs
 * none of it: a failed call's records converge. */

#define TG_COMPANY_NS (10u * 1000 * 1000)
/* How long a call waits at most for another task's call on its name (see
 * "calls on one name"). */
#define TG_WAIT_NS (50u * 1000 * 1000)

/* Another task's call than the last one journaled: tasks take turns. */
static void note_turn(struct tg_txn *t, pid_t tid)
{
	if (t->last_tid && tid != t->last_tid)
		t->company_until = tg_now_ns() + TG_COMPANY_NS;
	t->last_tid = tid;
}

static bool removes_or_moves(const struct tg_op *op)
{
	return op->kind == TG_OP_UNLINK || op->kind == TG_OP_RMDIR || op->kind == TG_OP_RENAME;
}

/* Tasks take turns making calls, and this one is among them. */
static bool takes_turns(const struct tg_txn *t)
{
	return !t->alone && t->company_until && tg_now_ns() < t->company_until;
}

static bool may_fail_unseen(const struct tg_txn *t, const struct tg_op *op)
{
	return removes_or_moves(op) && takes_turns(t);
}

static void vw_drop(struct tg_txn *t, size_t i)
{
	vw_free(&t->vw[i]);
	t->vw[i] = t->vw[--t->nvw];
}

static int void_watch(struct tg_txn *t, const struct tg_op *op, uint64_t first, uint64_t last, bool watched)
{
	/* An unwatched call's thread may never call again (it exited): past
	 * TG_WAIT_NS nothing waits for it, so it goes. */
	if (t->nvw >= 64 && !(t->nvw & 63)) {
		uint64_t now = tg_now_ns();
		for (size_t i = 0; i < t->nvw;) {
			if (!t->vw[i].watched && now - t->vw[i].at >= TG_WAIT_NS)
				vw_drop(t, i);
			else
				i++;
		}
	}
	struct voidable *nv = tg_grow(t->vw, t->nvw, &t->capvw, sizeof(*nv), 8);
	if (!nv)
		return -ENOMEM;
	t->vw = nv;
	struct voidable v = { .tid = t->tid, .first = first, .last = last, .at = tg_now_ns(), .watched = watched };
	if (push_rel(t, &v.names, op->path) < 0 || push_rel(t, &v.names, op->path2) < 0 ||
	    push_rels(t, &v.names, op->via) < 0) {
		vw_free(&v);
		return -ENOMEM;
	}
	t->vw[t->nvw++] = v;
	return 0;
}

/* tid's watched calls end: failed (rval < 0), their records are void; else,
 * or unknown (rval 0 and !failed: its next call came), they stand. */
static int void_settle(struct tg_txn *t, pid_t tid, bool failed)
{
	int e = 0;
	for (size_t i = 0; i < t->nvw;) {
		if (t->vw[i].tid != tid) {
			i++;
			continue;
		}
		if (failed && !e && t->vw[i].first <= t->vw[i].last)
			e = tg_journal_void(t->j, t->vw[i].first, t->vw[i].last);
		vw_drop(t, i);
	}
	return e;
}

bool tg_txn_awaits(const struct tg_txn *t, pid_t tid)
{
	for (size_t i = 0; t && i < t->nvw; i++)
		if (t->vw[i].tid == tid && t->vw[i].watched)
			return true;
	for (size_t i = 0; t && i < t->npend; i++)
		if (t->pend[i].tid == tid && t->pend[i].await)
			return true;
	return false;
}

/* ---- calls on one name ----
 *
 * A call is journaled at its stop for what its names hold then, and runs
 * after the stop. Another task's call on the same name that was journaled
 * just before and may still be running (a removal or move of a task with
 * company, a creation awaiting its result) may change what the name holds
 * in between: task A's `rm x` journaled while x held the original, then
 * B's `mv y x` ran, then A's unlink removed y's file, which nothing had
 * saved, and a rollback lost it (tests/faults/race.sh: 8 to 23 files of
 * 500 such pairs). So a
 * call that names what another task's running call names, or lies below it
 * or above it, waits at its stop until that call has returned (its result,
 * or its thread's next call), then is journaled for what it meets. A call
 * waits TG_WAIT_NS at most for one that does not return (blocked, or its
 * thread busy elsewhere); a thread gone waits for nothing. */

/* a and b are one name, or one lies below the other. */
static bool names_meet(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la == lb)
		return memcmp(a, b, la) == 0;
	const char *longer = la > lb ? a : b;
	size_t l = la > lb ? lb : la;
	return l > 0 && memcmp(a, b, l) == 0 && longer[l] == '/';
}

/* The names a call is on: its own two, and the symlinks its paths went
 * through (absolute; those outside the workspace meet nothing). */
struct call_names {
	const char *own[2];
	char *const *via;
};

static bool meets(const struct tg_txn *t, const struct call_names *mine, const char *name)
{
	if ((mine->own[0] && names_meet(mine->own[0], name)) || (mine->own[1] && names_meet(mine->own[1], name)))
		return true;
	for (size_t i = 0; mine->via && mine->via[i]; i++) {
		const char *rel = rel_of(t, mine->via[i]);
		if (rel && names_meet(rel, name))
			return true;
	}
	return false;
}

static bool meets_any(const struct tg_txn *t, const struct call_names *mine, char *const *names)
{
	for (size_t i = 0; names && names[i]; i++)
		if (meets(t, mine, names[i]))
			return true;
	return false;
}

/* Another thread's call on name, journaled at `at`, that may still run. */
static bool still_running(pid_t tid, uint64_t at, uint64_t *now)
{
	if (!*now)
		*now = tg_now_ns();
	return *now - at < TG_WAIT_NS && !thread_gone(tid);
}

bool tg_txn_must_wait(struct tg_txn *t, const struct tg_op *op)
{
	if (!t || t->finished)
		return false;
	/* Its thread is at a new stop: its own calls have returned. Two
	 * tasks would otherwise wait for each other's last call. */
	(void)void_settle(t, op->pid, false);
	if (!op->writes || (!t->nvw && !t->npend))
		return false;
	struct call_names mine = { { rel_of(t, op->path), rel_of(t, op->path2) }, op->via };
	if (!mine.own[0] && !mine.own[1] && !mine.via)
		return false;
	uint64_t now = 0;
	for (size_t i = 0; i < t->nvw; i++) {
		const struct voidable *v = &t->vw[i];
		if (v->tid != op->pid && meets_any(t, &mine, v->names) && still_running(v->tid, v->at, &now))
			return true;
	}
	for (size_t i = 0; i < t->npend; i++) {
		const struct pending *p = &t->pend[i];
		if (p->await && p->at && p->tid != op->pid && (meets(t, &mine, p->rel) || meets_any(t, &mine, p->via)) &&
		    still_running(p->tid, p->at, &now))
			return true;
	}
	return false;
}

void tg_txn_returned(struct tg_txn *t, pid_t tid)
{
	if (t)
		(void)void_settle(t, tid, false);
}

void tg_txn_gone(struct tg_txn *t, pid_t tid)
{
	if (!t)
		return;
	(void)void_settle(t, tid, false);
	for (size_t i = 0; i < t->npend; i++)
		if (t->pend[i].tid == tid)
			t->pend[i].at = 0; /* settled later, by its name; nobody waits */
}

/* One awaited creation, from its call's result: 1 settled, 0 left for
 * settle() (no identity to be had), or -errno. */
static int settle_result(struct tg_txn *t, size_t i, long rval)
{
	struct pending *p = &t->pend[i];
	struct stat st;
	struct statx sx;
	int e;
	if (rval < 0)
		return (e = settle_made(t, p, NULL, NULL, NULL, false)) < 0 ? e : 1;
	e = p->by_fd ? ident_of_fd(p->tid, rval, &st, &sx) : ident_of_name(t, p->rel, &st, &sx);
	if (e < 0)
		return 0; /* the thread died, or the name was emptied since */
	_cleanup_free_ char *where = NULL;
	if (p->by_fd && p->watch) {
		struct stat now;
		if (op_lstat(t, p->rel, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
			where = tg_strdup(p->rel);
		else if (st.st_nlink > 0)
			where = name_of_fd(t, p->tid, rval);
	}
	e = settle_made(t, p, &st, &sx, p->by_fd ? where : p->rel, !p->by_fd);
	return e < 0 ? e : 1;
}

void tg_txn_alone(struct tg_txn *t, pid_t tid)
{
	for (size_t i = 0; t && i < t->npend; i++) {
		struct pending *p = &t->pend[i];
		if (p->tid == tid && p->await) {
			p->await = false;
			p->alone = true;
		}
	}
}

int tg_txn_company(struct tg_txn *t)
{
	if (!t || t->finished)
		return 0;
	tg_journal_hold(t->j);
	int e = settle_quiet(t);
	for (size_t i = 0; i < t->npend && e >= 0;) {
		if (t->pend[i].alone)
			e = settle_by_name(t, i);
		else
			i++;
	}
	int s = tg_journal_release(t->j);
	return e < 0 ? e : s;
}

int tg_txn_after(struct tg_txn *t, pid_t tid, long rval)
{
	/* -ERESTART*: the call starts again, and traps again. */
	if (t->finished || (rval <= -512 && rval >= -516))
		return 0;
	tg_journal_hold(t->j);
	op_begin(t);
	int e = void_settle(t, tid, rval < 0);
	for (size_t i = 0; i < t->npend && e >= 0;) {
		struct pending *p = &t->pend[i];
		if (p->tid != tid || !p->await) {
			i++;
			continue;
		}
		p->await = false;
		e = settle_result(t, i, rval);
		if (e > 0)
			pend_drop(t, i);
		else
			i++;
	}
	op_end(t);
	int s = tg_journal_release(t->j);
	return e < 0 ? e : s;
}

static int save_meta(struct tg_txn *t, const char *rel, const struct stat *st, bool implicit)
{
	if (idset_has(&t->born, st) || idset_has(&t->content, st))
		return 0;
	/* A change of its own to a directory whose metadata was saved as a
	 * parent's (mkdir d/x; chmod 600 d) is a change to report: one more
	 * record, not implicit. A restore applies both, the first last. */
	bool saved = idset_has(&t->meta, st);
	if (saved && (implicit || idset_has(&t->meta_said, st)))
		return 0;
	int e = tg_journal_meta(t->j, rel, st, implicit);
	if (!e && !implicit)
		e = idset_add(&t->meta_said, st->st_dev, st->st_ino);
	return e || saved ? e : idset_add(&t->meta, st->st_dev, st->st_ino);
}

/* The parent's mtime changes with every namespace op in it. */
static int save_parent(struct tg_txn *t, const char *rel)
{
	if (!rel[0])
		return 0;
	_cleanup_free_ char *parent = tg_fs_dirname(rel);
	if (!parent)
		return -ENOMEM;
	struct stat st;
	if (op_lstat(t, parent, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0; /* the call will fail with ENOENT/ENOTDIR: nothing changes */
	return save_meta(t, parent, &st, true);
}

/* Inside a directory this run created, a new name needs no record: the
 * restore removes that directory with everything in it (what was moved in
 * from outside is moved back out first, by its own RENAMED record) —
 * unless the name was vacated earlier (moved away, removed): the restore
 * must then find it free to put the old object back. */
/* "dev:ino/leaf" of rel's directory entry, or NULL (errno set). */
static char *entry_key(struct tg_txn *t, const char *rel, struct stat *parent)
{
	_cleanup_free_ char *dir = tg_fs_dirname(rel);
	struct stat st;
	if (!parent)
		parent = &st;
	if (!dir || op_lstat(t, dir, parent) < 0)
		return NULL;
	const char *slash = strrchr(rel, '/');
	return tg_asprintf("%llx:%llx/%s", (unsigned long long)parent->st_dev,
	                   (unsigned long long)parent->st_ino, slash ? slash + 1 : rel);
}

static int vacate(struct tg_txn *t, const char *rel)
{
	_cleanup_free_ char *key = entry_key(t, rel, NULL);
	if (!key)
		return 0; /* no parent: nothing to put back there */
	return tg_strset_add(&t->vacated, key) < 0 ? -ENOMEM : 0;
}

static bool skip_created(struct tg_txn *t, const char *rel)
{
	struct stat parent;
	_cleanup_free_ char *key = strchr(rel, '/') ? entry_key(t, rel, &parent) : NULL;
	return key && idset_has(&t->born, &parent) && !tg_strset_has(&t->vacated, key);
}

static int pend_room(struct tg_txn *t)
{
	struct pending *np = tg_grow(t->pend, t->npend, &t->cappend, sizeof(*np), 16);
	if (!np)
		return -ENOMEM;
	t->pend = np;
	return 0;
}

/* Append p, at rel, to the pendings (room made by pend_room). */
static int pend_push(struct tg_txn *t, struct pending *p, const char *rel)
{
	p->at = t->alone ? 0 : tg_now_ns();
	if (!(p->rel = tg_strdup(rel)) || (p->at && push_rels(t, &p->via, t->op->via) < 0)) {
		pend_free(p);
		return -ENOMEM;
	}
	t->pend[t->npend++] = *p;
	return 0;
}

/* by_fd: an O_CREAT open; else a mkdir, symlink or mknod of a name that
 * exists, which fails unless another task removes the name before the
 * call runs. */
static int watch_create(struct tg_txn *t, const char *rel, const struct stat *st, bool by_fd)
{
	if (pend_room(t) < 0)
		return -ENOMEM;
	struct pending p = { .tid = t->tid, .watch = true, .await = true, .by_fd = by_fd,
	                     .dev = st->st_dev, .ino = st->st_ino };
	return pend_push(t, &p, rel);
}

/* by_fd: the call is an open (its result is an fd on what it made);
 * moved: a rename from outside, of that object. */
static int save_created_as(struct tg_txn *t, const char *rel, bool link, bool by_fd, const struct stat *moved)
{
	if (pend_room(t) < 0)
		return -ENOMEM;
	const char *from = link ? rel_of(t, t->op->path) : NULL; /* its source, in the workspace */
	struct pending p = { .tid = t->tid, .link = link, .await = true, .by_fd = by_fd, .moved_in = moved != NULL,
	                     .dev = moved ? moved->st_dev : 0, .ino = moved ? moved->st_ino : 0 };
	if (!skip_created(t, rel)) {
		int e = save_parent(t, rel);
		if (!e)
			e = tg_journal_linked(t->j, rel, from);
		if (e < 0)
			return e;
		p.seq = tg_journal_last_seq(t->j);
	} else if (!moved) {
		/* No record to complete: the object only joins `born` (a later
		 * write to it captures nothing), and its name tells as much at
		 * the thread's next call (made_in_run: an original moved there
		 * meanwhile is not taken for the run's). No stop at the call's
		 * exit, which a tree of many new files would pay per file. */
		p.await = false;
		if (t->alone && by_fd && !link)
			return quiet_add(t, rel);
	}
	return pend_push(t, &p, rel);
}

static int save_created(struct tg_txn *t, const char *rel, bool link, bool by_fd)
{
	return save_created_as(t, rel, link, by_fd, NULL);
}

/* Another thread's creation of rel is in flight (its result not in yet),
 * and st is not the object an O_CREAT open of the existing name found. */
static bool created_elsewhere(const struct tg_txn *t, const char *rel, const struct stat *st)
{
	for (size_t i = 0; i < t->npend; i++) {
		const struct pending *p = &t->pend[i];
		if (p->tid != t->tid && strcmp(p->rel, rel) == 0 &&
		    (p->dev != (uint64_t)st->st_dev || p->ino != (uint64_t)st->st_ino))
			return true;
	}
	return false;
}

/* A file made during the run at a name another thread is creating (and
 * not the object an O_CREAT open of the existing name found there): most
 * likely what that call made, not settled yet; no original in any case:
 * nothing to give back. A stash would put it back at the name, and for an
 * O_CREAT open of an existing name the creation's record, written after
 * this removal at the open's result, could no longer remove it before the
 * original's turn. */
static bool fresh_at(struct tg_txn *t, const char *rel, const struct stat *st)
{
	struct stat now;
	struct statx sx;
	if (S_ISDIR(st->st_mode) || idset_has(&t->moved, st) || idset_has(&t->removed, st) ||
	    !created_elsewhere(t, rel, st) || ident_of_name(t, rel, &now, &sx) < 0 ||
	    now.st_ino != st->st_ino || now.st_dev != st->st_dev)
		return false;
	return made_in_run(t, st, &sx, true);
}

/* Keep what is about to lose a name; a file this run created has nothing
 * to give back. */
static int save_removal(struct tg_txn *t, const char *rel, const struct stat *st)
{
	if (!S_ISDIR(st->st_mode) && !idset_has(&t->born, st) && fresh_at(t, rel, st)) {
		int e = born_add(t, st->st_dev, st->st_ino);
		if (e < 0)
			return e;
	}
	bool born = !S_ISDIR(st->st_mode) && idset_has(&t->born, st);
	if (born && !idset_has(&t->pinned, st))
		return born_loses_last_name(t, st);
	int e = tg_journal_remove(t->j, t->in_op ? &t->dc : NULL, rel, st, born);
	if (!e && !born && !S_ISDIR(st->st_mode))
		e = idset_add(&t->removed, st->st_dev, st->st_ino);
	if (!e && S_ISDIR(st->st_mode))
		e = born_loses_last_name(t, st);
	return e ? e : vacate(t, rel);
}

static int save_content(struct tg_txn *t, const char *rel, const struct stat *st)
{
	if (!S_ISREG(st->st_mode) || idset_has(&t->born, st) || idset_has(&t->content, st))
		return 0;
	int e = tg_journal_content(t->j, rel, st);
	return e ? e : idset_add(&t->content, st->st_dev, st->st_ino);
}

/* What the kernel will do with a write to the regular file rel (flags: the
 * open's, O_TRUNC for truncate): 0 when it may change it (capture first),
 * 1 when it surely refuses (EPERM on an append-only or immutable file,
 * EACCES without write permission: nothing to capture, nothing to report),
 * -EPERM when it would append to an append-only file that only a caller
 * with CAP_LINUX_IMMUTABLE could cut back: refused, since no restore could
 * undo it. Inode flags cannot change during the run (their ioctl is refused
 * as unjournaled). */
static int write_fate(struct tg_txn *t, const char *rel, int flags)
{
	const char *leaf;
	_cleanup_close_ int pfd = tg_journal_parent(t->j, rel, &leaf);
	_cleanup_close_ int fd = pfd < 0 ? -1 : openat(pfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int iflags = 0;
	if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &iflags) == 0) {
		if (iflags & FS_IMMUTABLE_FL)
			return 1;
		if ((iflags & FS_APPEND_FL) && (!(flags & O_APPEND) || (flags & O_TRUNC)))
			return 1;
		if ((iflags & FS_APPEND_FL) && geteuid() != 0)
			return -EPERM;
	}
	if (pfd >= 0 && geteuid() != 0 && faccessat(pfd, leaf, W_OK, AT_EACCESS) < 0 &&
	    (errno == EACCES || errno == EROFS))
		return 1;
	return 0;
}

static int before_open(struct tg_txn *t, const struct tg_op *op, const char *rel)
{
	struct stat st;
	int e = op_lstat(t, rel, &st);
	if (e == -ENOENT)
		return op->flags & O_CREAT ? save_created(t, rel, false, true) : 0;
	if (e < 0)
		return e;
	/* An existing file: it may be a quiet creation's. */
	if (t->nquiet && (e = settle_quiet(t)) < 0)
		return e;
	if ((op->flags & O_CREAT) && (op->flags & O_EXCL))
		return 0; /* fails with EEXIST */
	if ((op->flags & O_CREAT) && !S_ISDIR(st.st_mode)) {
		e = save_parent(t, rel); /* in case it creates after all */
		if (!e)
			e = watch_create(t, rel, &st, true);
		if (e < 0)
			return e;
	}
	if (!(op->flags & (O_WRONLY | O_RDWR | O_TRUNC)))
		return 0;
	if (S_ISREG(st.st_mode) && !idset_has(&t->content, &st) && !idset_has(&t->born, &st)) {
		e = write_fate(t, rel, op->flags);
		if (e != 0)
			return e < 0 ? e : 0;
	}
	return save_content(t, rel, &st);
}

static int before_remove(struct tg_txn *t, const char *rel, bool dir)
{
	struct stat st;
	int e = op_lstat(t, rel, &st);
	if (e == -ENOENT)
		return 0;
	if (e < 0)
		return e;
	/* The kernel lets a process remove the workspace itself (an empty
	 * directory that is only a cwd): nothing could be restored into it. */
	if (!rel[0])
		return dir ? -EBUSY : 0;
	if (S_ISDIR(st.st_mode) != dir)
		return 0; /* EISDIR / ENOTDIR: nothing changes */
	e = save_parent(t, rel);
	return e ? e : save_removal(t, rel, &st);
}

static bool dir_is_empty(struct tg_txn *t, const char *rel)
{
	const char *leaf;
	_cleanup_close_ int pfd = tg_journal_parent(t->j, rel, &leaf);
	int fd = pfd >= 0 ? openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return true; /* cannot tell: journal it (an extra record is harmless) */
	}
	bool empty = tg_fs_readdir(d) == NULL;
	closedir(d);
	return empty;
}

/* Renames the kernel refuses for the types involved: journaling them would
 * make restore believe in a move that never happened. */
static bool rename_will_fail(struct tg_txn *t, const char *from, const char *to,
                             const struct stat *src, const struct stat *dst, bool exchange)
{
	size_t fl = strlen(from), tl = strlen(to);
	if ((!strncmp(to, from, fl) && to[fl] == '/') || (!strncmp(from, to, tl) && from[tl] == '/'))
		return true; /* one end inside the other: EINVAL, ENOTEMPTY... */
	const char *leaf;
	_cleanup_close_ int pfd = tg_journal_parent(t->j, to, &leaf);
	if (pfd < 0)
		return true; /* ENOENT / ENOTDIR on the way to the destination */
	if (!dst || exchange)
		return false;
	if (S_ISDIR(src->st_mode) != S_ISDIR(dst->st_mode))
		return true; /* EISDIR / ENOTDIR */
	return S_ISDIR(dst->st_mode) && !dir_is_empty(t, to);
}

/* A move into the workspace from outside (pip --target, a build's staging
 * dir): what arrives is a creation at `to`, a whole tree for a directory,
 * which a restore removes whole like any directory made in the run; what
 * it replaces is saved like any removal. The source's side is outside the
 * workspace, which no restore writes to, as for a copy and a delete. */
static int before_rename_in(struct tg_txn *t, const struct tg_op *op, const char *to)
{
	struct stat src, dst;
	if (lstat(op->path, &src) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno; /* fails alike */
	const char *leaf;
	_cleanup_close_ int pfd = tg_journal_parent(t->j, to, &leaf);
	if (pfd < 0)
		return 0; /* ENOENT / ENOTDIR on the way to the destination */
	int de = op_lstat(t, to, &dst);
	if (de < 0 && de != -ENOENT)
		return de;
	if (de == 0) {
		if ((op->flags & RENAME_NOREPLACE) || (src.st_dev == dst.st_dev && src.st_ino == dst.st_ino))
			return 0; /* EEXIST, or two names of one inode: nothing changes */
		if (S_ISDIR(src.st_mode) != S_ISDIR(dst.st_mode) || (S_ISDIR(dst.st_mode) && !dir_is_empty(t, to)))
			return 0; /* EISDIR / ENOTDIR / ENOTEMPTY */
	}
	int e = de == 0 ? save_parent(t, to) : 0;
	if (!e && de == 0)
		e = save_removal(t, to, &dst);
	return e ? e : save_created_as(t, to, false, false, &src);
}

static int before_rename(struct tg_txn *t, const struct tg_op *op)
{
	const char *from = rel_of(t, op->path), *to = rel_of(t, op->path2);
	if (!from && !to)
		return 0;
	if (!from && to[0] && !(op->flags & (RENAME_EXCHANGE | RENAME_WHITEOUT)))
		return before_rename_in(t, op, to);
	/* Out of the workspace (or an exchange across it): refuse with EXDEV,
	 * the errno of a cross-device rename, and tools (mv, rename(1)...)
	 * fall back to copy + delete, which is journaled like any other write.
	 * Restoring the move would mean writing outside the workspace. */
	if (!from || !to)
		return -EXDEV;
	if (!from[0] || !to[0])
		return 0; /* renaming the workspace root fails (EBUSY) */
	struct stat src, dst;
	int e = op_lstat(t, from, &src);
	if (e < 0)
		return e == -ENOENT ? 0 : e;
	int de = op_lstat(t, to, &dst);
	if (de < 0 && de != -ENOENT)
		return de;
	bool exchange = op->flags & RENAME_EXCHANGE;
	if (exchange && de < 0)
		return 0;
	if (rename_will_fail(t, from, to, &src, de == 0 ? &dst : NULL, exchange))
		return 0;
	if (de == 0 && !exchange && (op->flags & RENAME_NOREPLACE))
		return 0;
	if (de == 0 && dst.st_ino == src.st_ino && dst.st_dev == src.st_dev)
		return 0; /* two names of one inode: rename does nothing */
	e = save_parent(t, from);
	if (!e)
		e = save_parent(t, to);
	/* A moved directory's ".." changes (and with it, on some filesystems, its times). */
	if (!e && S_ISDIR(src.st_mode))
		e = save_meta(t, from, &src, true);
	if (!e && de == 0 && exchange && S_ISDIR(dst.st_mode))
		e = save_meta(t, to, &dst, true);
	/* Swapping back needs both objects: a born one must then be kept alive
	 * like any other when it is removed later. */
	if (!e && exchange)
		e = idset_add(&t->pinned, src.st_dev, src.st_ino);
	if (!e && exchange)
		e = idset_add(&t->pinned, dst.st_dev, dst.st_ino);
	if (!e && de == 0 && !exchange)
		e = save_removal(t, to, &dst);
	bool born = idset_has(&t->born, &src);
	if (!e && !born)
		e = idset_add(&t->moved, src.st_dev, src.st_ino);
	if (!e)
		e = tg_journal_renamed(t->j, from, to, &src, exchange, born);
	if (!e)
		e = vacate(t, from);
	/* RENAME_WHITEOUT leaves a whiteout (a 0:0 character device) at the
	 * source: a creation, removed before the move back. */
	if (!e && (op->flags & RENAME_WHITEOUT) && !exchange)
		e = save_created(t, from, false, false);
	return e;
}

static int before_new_name(struct tg_txn *t, const char *rel, bool link)
{
	if (!rel)
		return 0;
	struct stat st;
	int e = op_lstat(t, rel, &st);
	/* EEXIST, unless another task removes the name first: then its
	 * result tells what it made (settle_made). Alone, nothing can. A
	 * link's object is an original, which the result cannot tell from
	 * one another task moved there: not watched (docs/journal.md). */
	if (e == 0 && (t->alone || link))
		return 0;
	if (e == 0) {
		e = save_parent(t, rel); /* in case it creates after all */
		return e ? e : watch_create(t, rel, &st, false);
	}
	return e == -ENOENT ? save_created(t, rel, link, false) : e;
}

static int before_meta(struct tg_txn *t, const char *rel)
{
	struct stat st;
	int e = op_lstat(t, rel, &st);
	if (e < 0)
		return e == -ENOENT ? 0 : e;
	return save_meta(t, rel, &st, false);
}

static int before_op(struct tg_txn *t, const struct tg_op *op);

/* A call through a file descriptor (fchmod, a reopen of /proc/self/fd/N)
 * names its file by the fd's link text; for a file that lost its name the
 * kernel prints "PATH (deleted)". If that inode is an original the journal
 * keeps (stashed, or copied with other names left in the tree), a write or
 * a metadata change through the fd would change what the restore puts
 * back, or another name of it, unjournaled: refused. Found by the tracee's
 * fds whose link text is the path (rare: only for such names). */
static bool reaches_removed(struct tg_txn *t, const struct tg_op *op)
{
	static const char sfx[] = " (deleted)";
	size_t n = op->path ? strlen(op->path) : 0;
	if (!t->removed.n || n < sizeof(sfx) || strcmp(op->path + n - (sizeof(sfx) - 1), sfx) != 0)
		return false;
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)op->pid);
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? tg_fs_opendir(dfd) : NULL;
	if (!d)
		return false;
	bool hit = false;
	struct dirent *de;
	while (!hit && (de = tg_fs_readdir(d))) {
		char text[PATH_MAX + 1];
		ssize_t l = readlinkat(dfd, de->d_name, text, sizeof(text) - 1);
		if (l < 0 || (size_t)l != n)
			continue;
		text[l] = '\0';
		struct stat st; /* both in our view, a chrooted tracee's too */
		if (strcmp(text, op->path) == 0 && fstatat(dfd, de->d_name, &st, 0) == 0)
			hit = idset_has(&t->removed, &st);
	}
	closedir(d);
	return hit;
}

/* Changes what an existing object holds: its bytes or its metadata. */
static bool changes_object(const struct tg_op *op)
{
	switch (op->kind) {
	case TG_OP_OPEN:
	case TG_OP_TRUNCATE:
	case TG_OP_CHMOD:
	case TG_OP_CHOWN:
	case TG_OP_UTIMES:
	case TG_OP_XATTR:
		return true;
	default:
		return false;
	}
}

/* The workspace name of path, outside the workspace: a bind mount of the
 * workspace's filesystem (any call), or a hard link of a workspace file (a
 * call that changes it). 1 and *abs = that name, 0, -errno. */
static int alias_of(struct tg_txn *t, const struct tg_op *op, const char *path, bool first, char **abs)
{
	*abs = NULL;
	if (!path || rel_of(t, path) || tg_txn_is_private(t, path))
		return 0;
	_cleanup_free_ char *rel = NULL;
	int e = tg_aliases_bind(t->aliases, path, &rel);
	struct stat st;
	if (e == 0 && first && changes_object(op) && lstat(path, &st) == 0)
		e = tg_aliases_link(t->aliases, &st, &rel);
	if (e <= 0)
		return e;
	*abs = tg_path_join(t->workspace, rel);
	return *abs ? 1 : -ENOMEM;
}

/* A call through another name of a workspace object (txn/alias.h) is
 * journaled as made through its workspace name: *copy is op with the names
 * translated (1), or op is left as it is (0). A new hard link from the
 * workspace to outside it would make such a name the journal cannot undo
 * writes through: refused with EXDEV, as across filesystems (ln and cp -l
 * say so; tools that link fall back to copying). */
static int through_alias(struct tg_txn *t, const struct tg_op *op, struct tg_op *copy, char **p1, char **p2)
{
	*p1 = *p2 = NULL;
	if (!op->writes)
		return 0;
	int e = alias_of(t, op, op->path, true, p1);
	if (e >= 0)
		e = alias_of(t, op, op->path2, false, p2);
	if (e < 0)
		return e;
	const char *src = *p1 ? *p1 : op->path, *dst = *p2 ? *p2 : op->path2;
	if (op->kind == TG_OP_LINK && rel_of(t, src) && dst && !rel_of(t, dst))
		return -EXDEV;
	if (!*p1 && !*p2)
		return 0;
	*copy = *op;
	copy->path = *p1 ? *p1 : op->path;
	copy->path2 = *p2 ? *p2 : op->path2;
	return 1;
}

int tg_txn_before(struct tg_txn *t, const struct tg_op *op)
{
	if (t->finished)
		return -EINVAL;
	/* Chosen at the first capture: a run that writes nothing never reads
	 * the mount table. */
	if (!t->sync_set) {
		tg_journal_set_sync(t->j, sync_mode(t->sync, t->workspace, t->state_dir));
		t->sync_set = true;
	}
	struct tg_op copy;
	_cleanup_free_ char *p1 = NULL, *p2 = NULL;
	int a = through_alias(t, op, &copy, &p1, &p2);
	if (a < 0)
		return a;
	tg_journal_hold(t->j);
	op_begin(t);
	int e = before_op(t, a ? &copy : op);
	t->op = NULL;
	op_end(t);
	int s = tg_journal_release(t->j);
	return e < 0 ? e : s;
}

/* The call's directory, if the tracer's resolution of its path opened it
 * (tg_path_take_parent): its lookups start there instead of opening it
 * again. The same directory: that resolution named op->path, reached
 * from / with no symlink and no "..", and rel lies below the workspace's
 * own path in it. */
static void seed_dircache(struct tg_txn *t, const char *abs, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	if (!slash)
		return; /* the workspace itself: its own fd */
	int leaf_err = 1;
	struct stat leaf;
	int fd = tg_path_take_parent(abs, (size_t)(slash - abs), &leaf_err, &leaf);
	if (fd >= 0)
		tg_fs_dircache_seed(&t->dc, rel, (size_t)(slash - rel), fd, leaf_err, &leaf);
}

/* Whether a call may look at an existing file, and so at a quiet
 * creation's: one that changes or moves an object; not a call that only
 * makes a new name, nor an open (before_open asks once the name is found
 * to exist). */
static bool looks_at_files(const struct tg_op *op)
{
	switch (op->kind) {
	case TG_OP_UNLINK:
	case TG_OP_RMDIR:
	case TG_OP_RENAME:
	case TG_OP_LINK:
		return true;
	case TG_OP_OPEN:
		return false;
	default:
		return changes_object(op);
	}
}

static int journal_op_met(struct tg_txn *t, const struct tg_op *op, const char *rel);

static int before_op(struct tg_txn *t, const struct tg_op *op)
{
	if ((op->path && tg_txn_is_private(t, op->path)) || (op->path2 && tg_txn_is_private(t, op->path2)))
		return -EPERM;
	t->tid = op->pid;
	t->alone = op->alone;
	t->op = op;
	const char *rel = rel_of(t, op->path);
	/* First: the earlier creations settled below are most often in the
	 * same directory (a git checkout's rewrites). */
	if (rel)
		seed_dircache(t, op->path, rel);
	int e = settle(t, op->pid, false);
	if (e < 0)
		return e;
	(void)void_settle(t, op->pid, false); /* its last call returned, unseen */
	note_turn(t, op->pid);
	if (rel && reaches_removed(t, op))
		return -EPERM;
	if (t->nquiet && looks_at_files(op) && (e = settle_quiet(t)) < 0)
		return e;
	uint64_t first = tg_journal_last_seq(t->j) + 1;
	e = journal_op_met(t, op, rel);
	/* Every removal or move of a task with company is known while it may
	 * run (tg_txn_must_wait); its result is awaited while tasks take
	 * turns. So is every call that changes an object by its name: its
	 * capture saved what the name holds now, and a move onto the name
	 * before it runs would make it change an object nothing saved. And
	 * so is a link: of a name that exists it has no record (EEXIST), and
	 * a removal of that name run first would let it make a name no record
	 * has. Their failure voids nothing (first > last: no records). */
	if (!e && !t->alone && removes_or_moves(op))
		e = void_watch(t, op, first, tg_journal_last_seq(t->j), may_fail_unseen(t, op));
	else if (!e && !t->alone && ((rel && changes_object(op)) || op->kind == TG_OP_LINK))
		e = void_watch(t, op, 1, 0, takes_turns(t));
	return e;
}

/* Whether journal_op's failure e for op may be a race lost to the tree:
 * its one object, found at rel, was moved or removed (-ENOENT) or replaced
 * (-EAGAIN, stash_link) before it could be saved. For these calls the
 * saving is the last step, after records that stand whatever the call
 * meets (the parent's metadata) and a pending creation that is dropped. */
static bool may_have_lost_race(const struct tg_op *op, int e)
{
	return (e == -ENOENT || e == -EAGAIN) &&
	       (changes_object(op) || op->kind == TG_OP_UNLINK || op->kind == TG_OP_RMDIR);
}

#define TG_RACE_TRIES 3

static int journal_op(struct tg_txn *t, const struct tg_op *op, const char *rel);

/* journal_op, met again when the object moved away under it: the name is
 * looked at anew and the call is journaled for what it will meet there
 * now, as if it had been trapped a moment later (for an open without
 * O_CREAT of a name now empty: nothing, and the kernel's own ENOENT). A
 * refusal would tell the caller a policy or the journal failed, where only
 * the tree raced with itself. Bounded: a name that keeps changing fails
 * the call, closed. */
static int journal_op_met(struct tg_txn *t, const struct tg_op *op, const char *rel)
{
	size_t npend = t->npend;
	int e = journal_op(t, op, rel);
	for (int i = 1; i < TG_RACE_TRIES && may_have_lost_race(op, e); i++) {
		while (t->npend > npend)
			pend_drop(t, t->npend - 1);
		tg_fs_dircache_clear(&t->dc);
		e = journal_op(t, op, rel);
	}
	return e;
}

/* The records of op itself, before it runs. */
static int journal_op(struct tg_txn *t, const struct tg_op *op, const char *rel)
{
	int e;
	switch (op->kind) {
	case TG_OP_OPEN:
		return rel ? before_open(t, op, rel) : 0;
	case TG_OP_TRUNCATE: {
		struct stat st;
		e = rel ? op_lstat(t, rel, &st) : -ENOENT;
		if (!e && S_ISREG(st.st_mode) && !idset_has(&t->content, &st) && !idset_has(&t->born, &st))
			e = write_fate(t, rel, O_WRONLY | O_TRUNC);
		return e == -ENOENT || e == 1 ? 0 : e ? e : save_content(t, rel, &st);
	}
	case TG_OP_UNLINK:
		return rel ? before_remove(t, rel, false) : 0;
	case TG_OP_RMDIR:
		return rel ? before_remove(t, rel, true) : 0;
	case TG_OP_RENAME:
		return before_rename(t, op);
	case TG_OP_LINK:
		return before_new_name(t, rel_of(t, op->path2), true);
	case TG_OP_SYMLINK:
	case TG_OP_MKDIR:
	case TG_OP_MKNOD:
		return before_new_name(t, rel, false);
	case TG_OP_CHMOD:
	case TG_OP_CHOWN:
	case TG_OP_UTIMES:
	case TG_OP_XATTR:
		return rel ? before_meta(t, rel) : 0;
	default:
		return 0;
	}
}

/* ---- fds the command inherits ---- */

/* Open for writing: the access mode of the open file itself (F_GETFL,
 * what /proc/self/fdinfo's "flags" show, in one syscall instead of three). */
static bool fd_writes(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	return flags >= 0 && ((flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR);
}

/* One inherited fd: capture the file it writes, by its name in the
 * workspace (the same inode), or -EBADF when it has none there. */
static int capture_inherited(struct tg_txn *t, int fd, const char *rel)
{
	struct stat fst, st;
	if (fstat(fd, &fst) < 0 || !S_ISREG(fst.st_mode))
		return 0; /* a tty, pipe, socket, directory: nothing of the tree's */
	int e = tg_journal_lstat(t->j, rel, &st);
	if (e < 0 || st.st_ino != fst.st_ino || st.st_dev != fst.st_dev)
		return -EBADF; /* renamed or removed since it was opened */
	tg_journal_hold(t->j);
	e = save_content(t, rel, &st);
	int r = tg_journal_release(t->j);
	return e < 0 ? e : r;
}

int tg_txn_inherited(struct tg_txn *t, const int *skip, size_t nskip,
                     int (*cb)(void *ud, int fd, const char *rel, int err), void *ud)
{
	_cleanup_close_ int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? tg_fs_opendir(dfd) : NULL;
	if (!d)
		return -errno;
	int e = 0;
	struct dirent *de;
	while (e == 0 && (de = tg_fs_readdir(d))) {
		int fd = atoi(de->d_name);
		bool skipped = fd <= 2 || fd == dirfd(d) || fd == dfd; /* std streams: the caller's output */
		for (size_t i = 0; i < nskip; i++)
			skipped = skipped || skip[i] == fd;
		int fl = skipped ? -1 : fcntl(fd, F_GETFD);
		if (fl < 0 || (fl & FD_CLOEXEC) || !fd_writes(fd))
			continue;
		char text[PATH_MAX + 1];
		ssize_t l = readlinkat(dfd, de->d_name, text, sizeof(text) - 1);
		if (l <= 0 || text[0] != '/')
			continue;
		text[l] = '\0';
		/* A removed file reads "PATH (deleted)": no name to capture by. */
		const char *rel = rel_of(t, text);
		if (!rel || tg_txn_is_private(t, text))
			continue;
		int r = capture_inherited(t, fd, rel);
		e = cb ? cb(ud, fd, rel, r) : r;
	}
	closedir(d);
	return e;
}

/* ---- summary ---- */

/* The end state for the classification: the tree as it is now. */
struct probe_now {
	struct tg_txn *t;
	struct tg_fs_dircache dc;
};

static int exists_now(void *ud, const char *rel, bool *is_dir)
{
	struct probe_now *p = ud;
	struct stat st;
	int e = tg_journal_lstat_cached(p->t->j, &p->dc, rel, &st);
	if (e == -ENOENT)
		return 0;
	if (e < 0)
		return e;
	*is_dir = S_ISDIR(st.st_mode);
	return 1;
}

/* What a created directory holds was created too. */
static int push_created_path(void *ud, const char *path)
{
	return tg_changes_push(ud, TG_CHANGE_CREATED, path, NULL);
}

static int created_subtree_now(void *ud, const char *rel, struct tg_changes *out)
{
	struct probe_now *p = ud;
	const char *leaf;
	_cleanup_close_ int pfd = tg_journal_parent(p->t->j, rel, &leaf);
	_cleanup_close_ int dfd = pfd < 0 ? -1 : openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return dfd < 0 ? 0 : tg_fs_walk_subtree(dfd, rel, push_created_path, out);
}

int tg_txn_changes(struct tg_txn *t, struct tg_changes *out)
{
	memset(out, 0, sizeof(*out));
	int e = settle(t, 0, t->ending);
	struct tg_change_events s = { 0 };
	struct probe_now now = { .t = t };
	const struct tg_change_probe probe = { exists_now, created_subtree_now, &now };
	if (!e)
		e = tg_journal_foreach(t->j, tg_change_events_add, &s);
	if (!e)
		e = tg_changes_classify(&s, &probe, out);
	bool saved = tg_change_events_saved(&s);
	tg_fs_dircache_clear(&now.dc);
	tg_change_events_clear(&s);
	out->bytes_saved = tg_journal_bytes_saved(t->j);
	out->journal_bytes = tg_journal_disk_bytes(t->j);
	if (e < 0)
		tg_changes_clear(out);
	/* After the end only txguard writes records: the same last record
	 * means the same changes, and commit need not classify them again. */
	t->counts_valid = !e && t->ending;
	if (t->counts_valid) {
		t->saved = saved;
		t->counts_seq = tg_journal_last_seq(t->j);
		memcpy(t->counts, out->count, sizeof(t->counts));
	}
	return e;
}

/* ---- commit, rollback ---- */

static bool counted(enum tg_jstate s)
{
	return s == TG_JSTATE_COMMITTED || s == TG_JSTATE_UNDONE;
}

/* The history now, newest first: this run's entry, read back from its
 * info as a listing would, added to the start's (t->hist). */
static int add_self(struct tg_txn *t)
{
	struct tg_txinfo self;
	int e = tg_runs_parse(&t->hist);
	if (!e)
		e = tg_journal_read_info(t->state_dir, tg_journal_id(t->j), &self);
	if (e < 0)
		return e;
	e = tg_runs_insert(&t->hist, &self);
	tg_txinfo_clear(&self);
	return e;
}

/* Keep the newest committed runs within the count and size bounds. The
 * others are retired to the trash (a rename each, one fsync): freeing a big
 * run's journal costs what the rm -rf it recorded cost, and is done later by
 * tg_txn_collect, where no command waits for it (but for a few names).
 * The history comes from the start's clean mark when it had one (each run
 * it retires is read first: one that is not a committed or undone run
 * after all sends it to the listing), else from a listing. What is left is
 * the mark's index after (t->hist). */
static int prune_history(struct tg_txn *t)
{
	struct tg_runs h = { 0 };
	bool indexed = t->hist_known && add_self(t) == 0;
	int e = 0;
	if (indexed) {
		h = t->hist;
		t->hist = (struct tg_runs){ 0 };
	} else if ((e = tg_run_list(t->state_dir, &h.v, &h.n)) < 0) {
		return e;
	}
	_cleanup_free_ bool *drop = calloc(h.n ? h.n : 1, sizeof(*drop));
	if (!drop)
		e = -ENOMEM;
	uint64_t runs = 0, bytes = 0;
	for (size_t i = 0; i < h.n && !e; i++) {
		if (!counted(h.v[i].state))
			continue;
		runs++;
		bytes += h.v[i].journal_bytes;
		drop[i] = !(runs == 1 || (runs <= t->max_runs && bytes <= t->max_bytes));
		struct tg_txinfo now = { 0 };
		if (drop[i] && indexed &&
		    (tg_journal_read_info(t->state_dir, h.v[i].id, &now) < 0 || !counted(now.state)))
			e = -ESTALE;
		tg_txinfo_clear(&now);
	}
	if (e == -ESTALE) { /* the mark's history is not the history */
		tg_runs_clear(&h);
		t->hist_known = false;
		return prune_history(t);
	}
	for (size_t i = 0; i < h.n && !e; i++)
		if (drop[i] && !(e = tg_journal_retire(t->state_dir, h.v[i].id)))
			t->trash = true;
	/* The runs kept are the history the mark's index holds after. */
	tg_runs_clear(&t->hist);
	t->hist_known = false;
	if (!e && (t->hist.v = calloc(h.n ? h.n : 1, sizeof(*t->hist.v)))) {
		for (size_t i = 0; i < h.n; i++)
			if (!drop[i]) {
				t->hist.v[t->hist.n++] = h.v[i];
				h.v[i] = (struct tg_txinfo){ 0 };
			}
		t->hist_known = true;
	}
	tg_runs_clear(&h);
	if (t->trash) {
		int s = tg_journal_retire_sync(t->state_dir);
		e = e ? e : s;
	}
	/* What a gc that died (power cut, kill) left is freed with the rest. */
	t->trash = t->trash || tg_journal_has_trash(t->state_dir);
	return e;
}

/* The most names freed here, before a gc is left the rest: a retired run
 * of a few changes is 5 to 10 names, a few µs each, where starting the gc
 * costs 0.3 to 0.5 ms of exec (docs/benchmarks.md). */
#define GC_HERE_MAX 32

void tg_txn_collect(struct tg_txn *t)
{
	if (t && t->trash && t->owner == getpid() && tg_journal_gc_upto(t->state_dir, GC_HERE_MAX) != 0)
		(void)tg_journal_gc_spawn(t->state_dir);
	if (t)
		t->trash = false;
}

void tg_txn_end(struct tg_txn *t)
{
	t->ending = true; /* an empty name is now a failed call */
}

int tg_txn_commit(struct tg_txn *t)
{
	if (t->finished)
		return -EINVAL;
	tg_txn_end(t);
	if (!tg_journal_on_disk(t->j)) {
		t->finished = true; /* nothing recorded: nothing to keep */
		return 0;
	}
	if (!t->counts_valid || t->counts_seq != tg_journal_last_seq(t->j)) {
		struct tg_changes c;
		int e = tg_txn_changes(t, &c);
		tg_changes_clear(&c);
		if (e < 0)
			return e;
	}
	/* Records, but no change (a temporary file made and removed): no
	 * history entry either, unless an original was saved (an undo has
	 * something to restore). A member of a multi-command transaction is
	 * kept, its transaction names it. */
	if (!t->join && tg_changes_none(t->counts) && !t->saved) {
		int d = tg_journal_remove_dir(t->state_dir, tg_journal_id(t->j));
		t->finished = d == 0;
		if (!d)
			tg_journal_clean_mark(t->state_dir, t->hist_known ? &t->hist : NULL);
		return d;
	}
	int e = tg_journal_commit(t->j, t->counts);
	if (e < 0) {
		/* The command succeeded and its effects are what the caller asked
		 * for: a journal that could not be committed must not be found
		 * "open" by the next start and replayed as an interrupted run.
		 * Drop it (this run loses its history entry, nothing else). */
		int d = tg_journal_remove_dir(t->state_dir, tg_journal_id(t->j));
		t->finished = d == 0;
		return e;
	}
	t->finished = true;
	/* After the prune: the marker holds txn/ as the retirements left it. */
	e = prune_history(t);
	if (!e)
		tg_journal_clean_mark(t->state_dir, t->hist_known ? &t->hist : NULL);
	return e;
}

int tg_txn_rollback(struct tg_txn *t, void (*progress)(void *ud, size_t done, size_t total), void *ud)
{
	if (t->finished)
		return -EINVAL;
	if (!tg_journal_on_disk(t->j)) {
		t->finished = true; /* nothing recorded: nothing to restore */
		return 0;
	}
	/* Nothing runs any more: a creation whose name is empty failed. */
	(void)settle(t, 0, true);
	int e = tg_journal_rollback(t->j, progress, ud);
	if (e < 0)
		return e;
	t->finished = true;
	e = tg_journal_remove_dir(t->state_dir, tg_journal_id(t->j));
	if (!e)
		tg_journal_clean_mark(t->state_dir, t->hist_known ? &t->hist : NULL);
	return e;
}
