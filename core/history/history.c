/* history.c — a workspace's history: list, show and undo committed runs,
 * on top of the runs of its state dir (runs.c). See history.h for the
 * rules and docs/history.md for the design. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "history.h"
#include "history_int.h"

/* ---- the list ---- */

int tg_history_state_root(const char *workspace, const char *state_dir, char **out)
{
	if (state_dir) {
		*out = tg_strdup(state_dir);
		return *out ? 0 : -ENOMEM;
	}
	return tg_journal_default_state_dir(workspace, out);
}

bool tg_run_is_undone(const struct tg_txinfo *i)
{
	return i->state == TG_JSTATE_UNDONE;
}

static bool in_history(const struct tg_txinfo *i, const char *workspace)
{
	if (i->state != TG_JSTATE_COMMITTED && !tg_run_is_undone(i))
		return false;
	return !i->workspace || strcmp(i->workspace, workspace) == 0;
}

void tg_history_clear(struct tg_history *h)
{
	if (!h)
		return;
	tg_txinfo_free_all(h->v, h->n);
	for (size_t i = 0; h->tx && i < h->n; i++)
		free(h->tx[i]);
	free(h->tx);
	free(h->state_dir);
	memset(h, 0, sizeof(*h));
}

/* Keep only this workspace's committed/undone entries, in place. */
static void keep_history(struct tg_history *h, const char *workspace)
{
	size_t k = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (in_history(&h->v[i], workspace))
			h->v[k++] = h->v[i];
		else
			tg_txinfo_clear(&h->v[i]);
	}
	h->n = k;
}

static int attach_tx(struct tg_history *h, const char *workspace)
{
	_cleanup_strv_ char **pairs = NULL;
	int rc = tg_history_tx_map(workspace, h->state_dir, &pairs);
	if (rc < 0)
		return rc;
	h->tx = calloc(h->n + 1, sizeof(*h->tx));
	if (!h->tx)
		return -ENOMEM;
	/* the run's own info names its transaction (--tx); the tx records
	 * also cover runs whose journal predates that field */
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].tx && !(h->tx[i] = tg_strdup(h->v[i].tx)))
			return -ENOMEM;
	for (size_t p = 0; pairs[p] && pairs[p + 1]; p += 2)
		for (size_t i = 0; i < h->n; i++)
			if (!h->tx[i] && strcmp(h->v[i].id, pairs[p]) == 0 &&
			    !(h->tx[i] = tg_strdup(pairs[p + 1])))
				return -ENOMEM;
	return 0;
}

int tg_history_load(const char *workspace, const char *state_dir, struct tg_history *out)
{
	struct tg_history h = { 0 };
	int rc = tg_history_state_root(workspace, state_dir, &h.state_dir);
	if (rc == 0)
		rc = tg_run_list(h.state_dir, &h.v, &h.n);
	if (rc == -ENOENT)
		rc = 0; /* no state dir yet: an empty history */
	if (rc == 0) {
		keep_history(&h, workspace);
		rc = attach_tx(&h, workspace);
	}
	if (rc < 0) {
		tg_history_clear(&h);
		return rc;
	}
	*out = h;
	return 0;
}

/* The random part of a run id: what follows its last '-'. */
static const char *id_suffix(const char *id)
{
	const char *dash = strrchr(id, '-');
	return dash ? dash + 1 : id;
}

int tg_history_find(const struct tg_history *h, const char *id, size_t *idx)
{
	if (!id || strcmp(id, "last") == 0 || strcmp(id, "HEAD") == 0) {
		if (h->n == 0)
			return -ENOENT;
		*idx = 0;
		return 0;
	}
	size_t len = strlen(id), found = SIZE_MAX;
	if (len == 0)
		return -ENOENT;
	for (size_t i = 0; i < h->n; i++) {
		if (strcmp(h->v[i].id, id) == 0) {
			*idx = i;
			return 0;
		}
	}
	for (size_t i = 0; i < h->n; i++) {
		if (strncmp(h->v[i].id, id, len) != 0 && strncmp(id_suffix(h->v[i].id), id, len) != 0)
			continue;
		if (found != SIZE_MAX)
			return -EEXIST;
		found = i;
	}
	if (found == SIZE_MAX)
		return -ENOENT;
	*idx = found;
	return 0;
}

/* ---- show: changes from records and the post-state ---- */

/* Paths absent at commit, from the journal's post file (journal/post.c:
 * one "ESCAPED-PATH\tSTATE" line per path, STATE "-" when absent, %XX
 * escapes). */
static int unhex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static char *unescape(const char *s, size_t n)
{
	char *o = malloc(n + 1), *q = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n + 1 && unhex(s[i + 1]) >= 0 && unhex(s[i + 2]) >= 0) {
			*q++ = (char)(unhex(s[i + 1]) * 16 + unhex(s[i + 2]));
			i += 2;
		} else {
			*q++ = s[i];
		}
	}
	*q = '\0';
	return o;
}

/* The journal's post file (journal/post.c): one "ESCAPED-PATH\tSTATE"
 * line per path, STATE "-" when absent, else "MODE\t..." with MODE in
 * octal. Fills absent and dirs (directories at commit); either may be NULL. */
int tg_history_post_kinds(const char *sd, const char *id, struct tg_strset *absent,
                          struct tg_strset *dirs)
{
	_cleanup_free_ char *p = tg_asprintf("%s/txn/%s/post", sd, id);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int rc = p ? tg_read_file(p, &text, &len, 1u << 30) : -ENOMEM;
	if (rc < 0)
		return rc;
	for (char *l = text; l < text + len;) {
		char *nl = memchr(l, '\n', (size_t)(text + len - l));
		char *tab = nl ? memchr(l, '\t', (size_t)(nl - l)) : NULL;
		if (!tab)
			break;
		bool gone = nl - tab == 2 && tab[1] == '-';
		bool dir = !gone && S_ISDIR((mode_t)strtoul(tab + 1, NULL, 8));
		struct tg_strset *into = gone ? absent : dir ? dirs : NULL;
		if (into) {
			_cleanup_free_ char *rel = unescape(l, (size_t)(tab - l));
			if (!rel || tg_strset_add(into, rel) < 0)
				return -ENOMEM;
		}
		l = nl + 1;
	}
	return 0;
}

/* show classifies with the rule of the live summary (changes.h), so that
 * it agrees with the counts in the log; "exists at the end" is the run's
 * post-state. */
struct probe_post {
	const struct tg_txinfo *run;
	struct tg_strset absent, dirs;
};

static int exists_at_commit(void *ud, const char *rel, bool *is_dir)
{
	struct probe_post *p = ud;
	*is_dir = tg_strset_has(&p->dirs, rel);
	return !tg_strset_has(&p->absent, rel);
}

static int created_subtree_at_commit(void *ud, const char *rel, struct tg_changes *out)
{
	struct probe_post *p = ud;
	return tg_history_created_subtree(p->run, rel, out);
}

int tg_run_changes(const char *state_dir, const char *id, struct tg_changes *out)
{
	memset(out, 0, sizeof(*out));
	struct tg_change_events s = { 0 };
	struct tg_txinfo info = { 0 };
	struct probe_post post = { .run = &info };
	const struct tg_change_probe probe = { exists_at_commit, created_subtree_at_commit, &post };
	int rc = tg_journal_read_info(state_dir, id, &info);
	if (rc == 0)
		rc = tg_run_records(state_dir, id, tg_change_events_add, &s);
	if (rc == 0)
		rc = tg_history_post_kinds(state_dir, id, &post.absent, &post.dirs);
	if (rc == 0)
		rc = tg_changes_classify(&s, &probe, out);
	tg_change_events_clear(&s);
	tg_strset_clear(&post.absent);
	tg_strset_clear(&post.dirs);
	tg_txinfo_clear(&info);
	if (rc < 0)
		tg_changes_clear(out);
	return rc;
}

/* ---- undo ---- */

void tg_undo_result_clear(struct tg_undo_result *r)
{
	if (!r)
		return;
	tg_strv_free(r->undone);
	free(r->entry);
	for (size_t i = 0; i < r->nconflicts; i++) {
		free(r->conflicts[i].txn_id);
		free(r->conflicts[i].path);
	}
	free(r->conflicts);
	memset(r, 0, sizeof(*r));
}

int tg_history_add_conflict(struct tg_undo_result *r, const char *id, const char *path)
{
	struct tg_undo_conflict *v = realloc(r->conflicts, (r->nconflicts + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->conflicts = v;
	v[r->nconflicts].txn_id = tg_strdup(id);
	v[r->nconflicts].path = tg_strdup(path);
	if (!v[r->nconflicts].txn_id || !v[r->nconflicts].path) {
		free(v[r->nconflicts].txn_id);
		free(v[r->nconflicts].path);
		return -ENOMEM;
	}
	r->nconflicts++;
	return 0;
}

struct check_ctx {
	const char *id;
	struct tg_undo_result *r;
	const struct tg_touched *newer;  /* what newer runs of the set (or undone) touched */
	struct tg_strset mine;           /* paths this run touched */
	struct tg_strset changed;        /* ... and changed since its commit */
	bool all;                        /* report every changed path (no newer filter) */
};

/* rel or one of its ancestors is in s (a newer run that renamed or removed
 * a directory changed everything below it). */
bool tg_history_path_in(const struct tg_strset *s, const char *rel)
{
	if (tg_strset_has(s, rel))
		return true;
	_cleanup_free_ char *p = tg_strdup(rel);
	if (!p)
		return false;
	for (char *slash = strrchr(p, '/'); slash; slash = strrchr(p, '/')) {
		*slash = '\0';
		if (tg_strset_has(s, p))
			return true;
	}
	return false;
}

static int check_path(void *ud, const char *rel, bool changed)
{
	struct check_ctx *c = ud;
	if (tg_strset_add(&c->mine, rel) < 0)
		return -ENOMEM;
	/* A newer run of the set changed it: it is checked again, against this
	 * run's post-state, after that run is undone (tg_run_undo). */
	if (!changed)
		return 0;
	if (tg_strset_add(&c->changed, rel) < 0)
		return -ENOMEM;
	if (!c->all) {
		struct stat st;
		bool file = fstatat(c->newer->wsfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		            !S_ISDIR(st.st_mode);
		if (tg_touched_covers(c->newer, rel, file ? st.st_dev : 0, file ? st.st_ino : 0))
			return 0;
	}
	return tg_history_add_conflict(c->r, c->id, rel);
}

int tg_touched_add(struct tg_touched *t, const char *rel)
{
	if (tg_strset_add(&t->paths, rel) < 0)
		return -ENOMEM;
	struct stat st;
	if (fstatat(t->wsfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
		return 0;
	return tg_idset_add(&t->inodes, st.st_dev, st.st_ino) < 0 ? -ENOMEM : 0;
}

static bool inode_in(const struct tg_touched *t, uint64_t dev, uint64_t ino)
{
	return tg_idset_has(&t->inodes, dev, ino);
}

bool tg_touched_covers(const struct tg_touched *t, const char *rel, uint64_t dev, uint64_t ino)
{
	return tg_history_path_in(&t->paths, rel) || inode_in(t, dev, ino);
}

bool tg_touched_exactly(const struct tg_touched *t, const char *rel, uint64_t dev, uint64_t ino)
{
	return tg_strset_has(&t->paths, rel) || inode_in(t, dev, ino);
}

static int collect_path(void *ud, const char *rel, bool changed)
{
	(void)changed;
	return tg_touched_add(ud, rel);
}

static int collect_created(void *ud, const struct tg_jrec *r)
{
	struct tg_touched *t = ud;
	if (r->kind != TG_JREC_CREATED)
		return 0;
	return tg_strset_add(&t->created, r->path) < 0 ? -ENOMEM : 0;
}

int tg_touched_add_run(struct tg_touched *t, const char *sd, const char *id)
{
	int rc = tg_run_check(sd, id, collect_path, t);
	return rc < 0 ? rc : tg_run_records(sd, id, collect_created, t);
}

void tg_touched_clear(struct tg_touched *t)
{
	tg_strset_clear(&t->paths);
	tg_idset_clear(&t->inodes);
	tg_strset_clear(&t->created);
	if (t->wsfd >= 0)
		close(t->wsfd);
	t->wsfd = -1;
}

/* Paths of runs already undone that are newer than the set's oldest run:
 * what their undo restored is not a hand edit (a savepoint undo inside a
 * transaction, then its rollback). */
static int seed_undone(const char *sd, const char *const *ids, struct tg_touched *newer)
{
	struct tg_txinfo *v = NULL, oldest = { 0 };
	size_t n = 0;
	size_t last = 0;
	while (ids[last + 1])
		last++;
	int rc = tg_journal_read_info(sd, ids[last], &oldest);
	if (rc == 0 && (newer->wsfd = open(oldest.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (rc == 0)
		rc = tg_run_list(sd, &v, &n);
	/* An undo entry that a redo restored touched the same paths as the
	 * runs it put back: counting them would excuse every edit since. */
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (tg_run_is_undone(&v[i]) && !tg_run_is_undo(&v[i]) && v[i].started_ns > oldest.started_ns)
			rc = tg_touched_add_run(newer, sd, v[i].id);
	tg_txinfo_free_all(v, n);
	tg_txinfo_clear(&oldest);
	return rc;
}

/* Phase 1: name every path changed outside since, before touching anything:
 * the paths each run recorded, against its post-state, and what is inside
 * the directories it created (history/created.c). */
static int check_set(const char *sd, const char *const *ids, struct tg_undo_result *r)
{
	struct tg_touched newer = { .wsfd = -1 };
	int rc = seed_undone(sd, ids, &newer);
	for (size_t i = 0; ids[i] && rc == 0; i++) {
		struct check_ctx c = { .id = ids[i], .r = r, .newer = &newer };
		rc = tg_run_check(sd, ids[i], check_path, &c);
		if (rc == 0)
			rc = tg_history_check_created(sd, ids[i], &newer, &c.mine, &c.changed, r);
		tg_strset_clear(&c.mine);
		tg_strset_clear(&c.changed);
		if (rc == 0)
			rc = tg_touched_add_run(&newer, sd, ids[i]);
	}
	tg_touched_clear(&newer);
	return rc;
}

/* A run of the set refused midway: name its paths (newer runs stay undone). */
static int stopped_at(const char *sd, const char *id, struct tg_undo_result *r)
{
	struct check_ctx c = { .id = id, .r = r, .all = true };
	int rc = tg_run_check(sd, id, check_path, &c);
	tg_strset_clear(&c.mine);
	tg_strset_clear(&c.changed);
	r->partial = r->nundone > 0;
	return rc < 0 ? rc : -ESTALE;
}

static int undo_checked(const char *sd, const char *const *ids, const struct tg_undo_opts *o,
                       struct tg_undo_result *r)
{
	int rc = check_set(sd, ids, r);
	if (rc < 0)
		return rc;
	if (r->nconflicts > 0 && !o->force) {
		r->refused = true;
		return -ESTALE;
	}
	for (size_t i = 0; ids[i]; i++) {
		rc = tg_run_undo_ex(sd, ids[i], o);
		if (rc == -ESTALE && !o->force)
			return stopped_at(sd, ids[i], r);
		if (rc < 0)
			return rc;
		if (tg_strv_push(&r->undone, ids[i]) < 0)
			return -ENOMEM;
		r->nundone++;
	}
	return 0;
}

/* Runs undone already (a savepoint undo inside a transaction) are skipped; a
 * run no longer in history (dropped by the bound) cannot be undone: -ENOENT. */
static int not_undone(const char *sd, const char *const *ids, char ***out)
{
	_cleanup_strv_ char **v = calloc(1, sizeof(char *));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; ids[i]; i++) {
		struct tg_txinfo info = { 0 };
		int rc = tg_journal_read_info(sd, ids[i], &info);
		if (rc < 0)
			return rc;
		bool skip = tg_run_is_undone(&info);
		tg_txinfo_clear(&info);
		if (!skip && tg_strv_push(&v, ids[i]) < 0)
			return -ENOMEM;
	}
	*out = steal_pointer(&v);
	return 0;
}

int tg_history_undo_set(const char *workspace, const char *state_dir, const char *const *ids,
                     bool force, struct tg_undo_result *r)
{
	const struct tg_undo_opts o = { .force = force };
	return tg_history_undo_set_ex(workspace, state_dir, ids, &o, r);
}

int tg_history_undo_set_ex(const char *workspace, const char *state_dir, const char *const *ids,
                           const struct tg_undo_opts *o, struct tg_undo_result *r)
{
	_cleanup_free_ char *sd = NULL;
	int rc = tg_history_state_root(workspace, state_dir, &sd);
	if (rc < 0)
		return rc;
	/* No lock is held across the set: tg_run_undo() takes the state
	 * dir's lock for each run (and fails with -EBUSY while a run is in
	 * progress) and re-checks that run's paths itself, so a hand edit made
	 * after the check below is still never overwritten. */
	_cleanup_strv_ char **todo = NULL;
	if ((rc = not_undone(sd, ids, &todo)) < 0)
		return rc;
	if (!todo[0])
		return 0;
	return undo_checked(sd, (const char *const *)todo, o, r);
}

int tg_history_undo_plan(const char *workspace, const char *state_dir, const char *id, char ***out)
{
	*out = NULL;
	struct tg_history h = { 0 };
	int rc = tg_history_load(workspace, state_dir, &h);
	if (rc < 0)
		return rc;
	size_t at = 0;
	if (!id) {
		/* the newest run not undone yet that changed something: `ls` run
		 * after `rm -rf src` should not make a bare `undo` a no-op (the
		 * empty runs newer than it are undone with it); an undo entry is
		 * undone by `redo` only */
		while (at < h.n && (tg_run_is_undone(&h.v[at]) || tg_run_is_undo(&h.v[at]) ||
		                    tg_changes_none(h.v[at].counts)))
			at++;
		rc = at < h.n ? 0 : -ENOENT;
	} else {
		rc = tg_history_find(&h, id, &at);
		if (rc == 0 && tg_run_is_undo(&h.v[at]))
			rc = -EISDIR;
		else if (rc == 0 && tg_run_is_undone(&h.v[at]))
			rc = -EALREADY;
	}
	_cleanup_strv_ char **ids = calloc(1, sizeof(char *));
	if (!ids)
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i <= at; i++)
		if (!tg_run_is_undone(&h.v[i]) && !tg_run_is_undo(&h.v[i]) && tg_strv_push(&ids, h.v[i].id) < 0)
			rc = -ENOMEM;
	tg_history_clear(&h);
	if (rc == 0)
		*out = steal_pointer(&ids);
	return rc;
}

int tg_history_undo(const char *workspace, const char *state_dir, const char *id, bool force,
                 struct tg_undo_result *r)
{
	_cleanup_strv_ char **ids = NULL;
	int rc = tg_history_undo_plan(workspace, state_dir, id, &ids);
	_cleanup_free_ char *sd = NULL;
	if (rc == 0)
		rc = tg_history_state_root(workspace, state_dir, &sd);
	if (rc == 0)
		rc = tg_history_undo_set(workspace, sd, (const char *const *)ids, force, r);
	return rc;
}

/* ---- redo ---- */

int tg_history_redo_target(const char *workspace, const char *state_dir, char **id)
{
	*id = NULL;
	struct tg_history h = { 0 };
	int rc = tg_history_load(workspace, state_dir, &h);
	if (rc < 0)
		return rc;
	size_t at = 0;
	while (at < h.n && !(tg_run_is_undo(&h.v[at]) && !tg_run_is_undone(&h.v[at])))
		at++;
	rc = at < h.n ? 0 : -ENOENT;
	if (rc == 0 && !(*id = tg_strdup(h.v[at].id)))
		rc = -ENOMEM;
	/* the workspace moved on: a run came after the undo */
	for (size_t i = 0; rc == 0 && i < at; i++)
		if (!tg_run_is_undo(&h.v[i]))
			rc = -ENOTEMPTY;
	/* every run it undid must still be in history, and undone */
	_cleanup_free_ char *copy = rc == 0 ? tg_strdup(h.v[at].undoes) : NULL;
	char *save = NULL;
	for (char *t = copy ? strtok_r(copy, " ", &save) : NULL; rc == 0 && t; t = strtok_r(NULL, " ", &save)) {
		struct tg_txinfo ri = { 0 };
		if (tg_journal_read_info(h.state_dir, t, &ri) < 0 || ri.state != TG_JSTATE_UNDONE)
			rc = -ENOLINK;
		tg_txinfo_clear(&ri);
	}
	tg_history_clear(&h);
	return rc;
}

int tg_history_redo(const char *workspace, const char *state_dir, bool force, struct tg_undo_result *r)
{
	_cleanup_free_ char *sd = NULL;
	int rc = tg_history_state_root(workspace, state_dir, &sd);
	if (rc < 0)
		return rc;
	_cleanup_free_ char *lockp = tg_asprintf("%s/lock", sd);
	_cleanup_close_ int lfd = lockp ? open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600) : -1;
	if (lfd < 0)
		return lockp ? -errno : -ENOMEM;
	if (flock(lfd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	/* An interrupted transaction (an undo among them) is recovery's to
	 * finish first: redoing under it would restore out of order. */
	struct tg_txinfo *v = NULL;
	size_t n = 0;
	rc = tg_run_list(sd, &v, &n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (v[i].state == TG_JSTATE_OPEN || v[i].state == TG_JSTATE_ROLLING_BACK)
			rc = -EINPROGRESS;
	tg_txinfo_free_all(v, n);
	if (rc < 0)
		return rc;
	rc = tg_history_redo_target(workspace, sd, &r->entry);
	if (rc < 0)
		return rc;
	/* Undo's refusal rule, on the undo entry: its post-state is the tree
	 * the undo left; a path changed since was changed outside txguard. */
	const char *const ids[] = { r->entry, NULL };
	rc = check_set(sd, ids, r);
	if (rc < 0)
		return rc;
	if (r->nconflicts > 0 && !force) {
		r->refused = true;
		return -ESTALE;
	}
	struct tg_txinfo info = { 0 };
	rc = tg_journal_read_info(sd, r->entry, &info);
	if (rc == 0)
		rc = tg_run_revert_undo(sd, r->entry);
	char *save = NULL;
	for (char *t = rc == 0 ? strtok_r(info.undoes, " ", &save) : NULL; t; t = strtok_r(NULL, " ", &save)) {
		if (tg_strv_push(&r->undone, t) < 0) {
			rc = -ENOMEM;
			break;
		}
		r->nundone++;
	}
	tg_txinfo_clear(&info);
	return rc;
}
