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
	if (x->started_ns != y->started_ns)
		return x->started_ns < y->started_ns ? 1 : -1;
	return -strcmp(x->id, y->id);
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
		if (de->d_name[0] == '.' || tg_journal_read_info(state_dir, de->d_name, &i) < 0)
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

int tg_run_undo(const char *state_dir, const char *id, bool force)
{
	_cleanup_free_ char *lockp = tg_asprintf("%s/lock", state_dir);
	if (!lockp)
		return -ENOMEM;
	_cleanup_close_ int lfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0)
		return -errno;
	if (flock(lfd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	struct tg_journal *j;
	int e = tg_journal_load(state_dir, id, &j);
	if (e < 0)
		return e;
	enum tg_jstate st = tg_journal_state(j);
	if (st != TG_JSTATE_COMMITTED && st != TG_JSTATE_ROLLING_BACK)
		e = -EINVAL;
	bool changed = false;
	if (!e && !force && st == TG_JSTATE_COMMITTED)
		e = tg_run_check(state_dir, id, any_changed, &changed);
	if (!e && changed)
		e = -ESTALE;
	_cleanup_strv_ char **newer = NULL;
	if (!e)
		(void)tg_run_newer_undone(state_dir, id, &newer); /* none known: none imported */
	if (!e)
		e = tg_journal_rollback_after(j, (const char *const *)newer, NULL, NULL);
	tg_journal_free(j);
	return e;
}
