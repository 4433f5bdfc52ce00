/* history/runs.c — the runs of a state dir, one journal dir each, read as
 * history: the list, a run's records, the check of its post-state against
 * the workspace now, and the undo of one committed run. The files
 * themselves (info, log, post) are the journal's: it reads them
 * (journal.h); this file knows which runs there are and what they mean.
 */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "history.h"

void tg_txinfo_free_all(struct tg_txinfo *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tg_txinfo_clear(&v[i]);
	free(v);
}

static int by_newest(const void *a, const void *b)
{
	const struct tg_txinfo *x = a, *y = b;
	return tg_txinfo_newer(x, y) ? -1 : tg_txinfo_newer(y, x) ? 1 : 0;
}

int tg_run_list(const char *state_dir, struct tg_txinfo **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	DIR *d;
	int e = tg_journal_runs_dir(state_dir, &d);
	if (e < 0 || !d)
		return e;
	struct tg_txinfo *v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct tg_txinfo i;
		if (de->d_name[0] == '.' || tg_journal_read_info_at(dirfd(d), de->d_name, &i) < 0)
			continue; /* a dir being created or removed */
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			struct tg_txinfo *nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				tg_txinfo_clear(&i);
				e = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[cnt++] = i;
	}
	closedir(d);
	if (e < 0) {
		tg_txinfo_free_all(v, cnt);
		return e;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), by_newest);
	*out = v;
	*n = cnt;
	return 0;
}

int tg_run_newer_undone(const char *state_dir, const char *id, char ***out)
{
	*out = NULL;
	struct tg_txinfo self = { 0 }, *v = NULL;
	size_t n = 0;
	int e = tg_journal_read_info(state_dir, id, &self);
	if (!e)
		e = tg_run_list(state_dir, &v, &n);
	for (size_t i = n; !e && i-- > 0;) { /* oldest first: later hops come later */
		if (v[i].started_ns <= self.started_ns || strcmp(v[i].id, id) == 0 ||
		    (v[i].state != TG_JSTATE_UNDONE && v[i].state != TG_JSTATE_ROLLING_BACK))
			continue;
		e = tg_strv_push(out, v[i].id);
	}
	tg_txinfo_free_all(v, n);
	tg_txinfo_clear(&self);
	if (e < 0) {
		tg_strv_free(*out);
		*out = NULL;
	}
	return e;
}

int tg_run_records(const char *state_dir, const char *id,
                   int (*cb)(void *ud, const struct tg_jrec *r), void *ud)
{
	struct tg_journal *j;
	int e = tg_journal_load(state_dir, id, &j);
	if (e < 0)
		return e;
	e = tg_journal_foreach(j, cb, ud);
	tg_journal_free(j);
	return e;
}

int tg_run_check(const char *state_dir, const char *id,
                 int (*cb)(void *ud, const char *rel, bool changed), void *ud)
{
	struct tg_journal *j;
	int e = tg_journal_load(state_dir, id, &j);
	if (e < 0)
		return e;
	e = tg_journal_post_check(j, cb, ud);
	tg_journal_free(j);
	return e;
}

struct one_check {
	const char *rel;
	bool *changed;
	bool found;
};

static int check_one(void *ud, const char *rel, bool changed)
{
	struct one_check *c = ud;
	if (strcmp(rel, c->rel) != 0)
		return 0;
	*c->changed = changed;
	c->found = true;
	return 1;
}

int tg_run_changed_since(const char *state_dir, const char *id, const char *rel, bool *changed)
{
	struct one_check c = { rel, changed, false };
	*changed = false;
	int e = tg_run_check(state_dir, id, check_one, &c);
	return e < 0 ? e : c.found ? 0 : -ENOENT;
}

static int any_changed(void *ud, const char *rel, bool changed)
{
	(void)rel;
	if (changed)
		*(bool *)ud = true;
	return changed ? 1 : 0;
}

static int take_lock(const char *state_dir)
{
	_cleanup_free_ char *lockp = tg_asprintf("%s/lock", state_dir);
	if (!lockp)
		return -ENOMEM;
	int lfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0)
		return -errno;
	if (flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(lfd);
		return e;
	}
	return lfd;
}

int tg_run_undo(const char *state_dir, const char *id, bool force)
{
	const struct tg_undo_opts o = { .force = force };
	return tg_run_undo_ex(state_dir, id, &o);
}

int tg_run_undo_ex(const char *state_dir, const char *id, const struct tg_undo_opts *o)
{
	_cleanup_close_ int lfd = o->locked ? -1 : take_lock(state_dir);
	if (!o->locked && lfd < 0)
		return lfd;
	struct tg_journal *j;
	int e = tg_journal_load(state_dir, id, &j);
	if (e < 0)
		return e;
	enum tg_jstate st = tg_journal_state(j);
	if (st != TG_JSTATE_COMMITTED && st != TG_JSTATE_ROLLING_BACK)
		e = -EINVAL;
	bool changed = false;
	if (!e && !o->force && st == TG_JSTATE_COMMITTED)
		e = tg_run_check(state_dir, id, any_changed, &changed);
	if (!e && changed)
		e = -ESTALE;
	_cleanup_strv_ char **newer = NULL;
	if (!e)
		(void)tg_run_newer_undone(state_dir, id, &newer); /* none known: none imported */
	const struct tg_restore_opts ro = { .newer = (const char *const *)newer, .before = o->before,
	                                    .ud = o->ud };
	if (!e)
		e = tg_journal_restore(j, &ro);
	tg_journal_free(j);
	return e;
}

bool tg_run_is_undo(const struct tg_txinfo *i)
{
	return i->undoes != NULL;
}

/* The ids an undo entry names (space-separated in its info). */
static int undoes_of(const struct tg_txinfo *i, char ***out)
{
	*out = calloc(1, sizeof(char *));
	if (!*out)
		return -ENOMEM;
	_cleanup_free_ char *copy = tg_strdup(i->undoes ? i->undoes : "");
	if (!copy)
		return -ENOMEM;
	char *save = NULL;
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (tg_strv_push(out, t) < 0)
			return -ENOMEM;
	return 0;
}

struct keep_ctx {
	struct tg_keep *v;
	size_t n;
	const char *run;
};

static int collect_keep(void *ud, const struct tg_jrec *r)
{
	struct keep_ctx *k = ud;
	if (r->kind != TG_JREC_STASHED)
		return 0;
	struct tg_keep *nv = realloc(k->v, (k->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	k->v = nv;
	k->v[k->n++] = (struct tg_keep){ r->meta.dev, r->meta.ino, k->run, r->seq };
	return 0;
}

int tg_run_revert_undo(const char *state_dir, const char *id)
{
	struct tg_journal *j;
	int e = tg_journal_load(state_dir, id, &j);
	if (e < 0)
		return e;
	struct tg_txinfo info = { 0 };
	_cleanup_strv_ char **runs = NULL, **newer = NULL;
	struct keep_ctx k = { 0 };
	e = tg_journal_read_info(state_dir, id, &info);
	if (!e)
		e = undoes_of(&info, &runs);
	/* Every stashed original of those runs: the undo put it back and
	 * dropped the run's link to it; the restore below removes it from the
	 * tree again, and the run keeps it for its next undo. A run that left
	 * history has nothing to keep it in. */
	for (size_t i = 0; !e && runs[i]; i++) {
		k.run = runs[i];
		e = tg_run_records(state_dir, runs[i], collect_keep, &k);
		if (e == -ENOENT)
			e = 0;
	}
	if (!e)
		(void)tg_run_newer_undone(state_dir, id, &newer);
	const struct tg_restore_opts ro = { .newer = (const char *const *)newer, .keep = k.v, .nkeep = k.n };
	if (!e)
		e = tg_journal_restore(j, &ro);
	tg_journal_free(j);
	/* The runs are in effect again: committed, and a later undo starts
	 * afresh. One the interrupted undo never reached is committed still. */
	for (size_t i = 0; !e && runs[i]; i++) {
		struct tg_txinfo ri = { 0 };
		int r = tg_journal_read_info(state_dir, runs[i], &ri);
		bool back = r == 0 && (ri.state == TG_JSTATE_UNDONE || ri.state == TG_JSTATE_ROLLING_BACK);
		tg_txinfo_clear(&ri);
		if (back)
			e = tg_journal_recommit(state_dir, runs[i]);
	}
	free(k.v);
	tg_txinfo_clear(&info);
	return e;
}
