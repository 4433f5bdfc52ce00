/* history.c — `txguard log | show | diff | undo | begin | commit | rollback`:
 * the CLI over core/history/history.h. Output for people on stdout, --json for
 * programs; errors on stderr. Exit codes: 0 done, 1 refused (an undo or
 * rollback that would overwrite paths changed outside txguard; an id that
 * does not exist), 125 txguard failed. */
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "history/history.h"
#include "base/set.h"
#include "base/path.h"
#include "base/json.h"

extern char **environ;

struct hctx {
	struct tg_opts *o;
	char *workspace;
	const char *state_dir;       /* as given (NULL = default) */
};


static void fmt_time(char buf[static 32], uint64_t ns)
{
	if (ns)
		tg_rfc3339(buf, ns);
	else
		strcpy(buf, "-");
}

static void fmt_size(char buf[static 16], uint64_t b)
{
	static const char units[] = "BKMGT";
	double v = (double)b;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof(units) - 1) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, 16, "%lluB", (unsigned long long)b);
	else
		snprintf(buf, 16, "%.1f%c", v, units[u]);
}

static const char *outcome_of(const struct tg_txinfo *i)
{
	return tg_jstate_name(i->state); /* committed or undone: in history */
}

static int load_or_fail(struct hctx *c, struct tg_history *h)
{
	int rc = tg_history_load(c->workspace, c->state_dir, h);
	if (rc < 0)
		return tg_fail("cannot read the history of %s: %s", c->workspace, strerror(-rc));
	return 0;
}

static int find_or_fail(const struct tg_history *h, const char *id, size_t *idx)
{
	int rc = tg_history_find(h, id, idx);
	if (rc == -EEXIST) {
		tg_warn("'%s' matches several runs: give more of the id ('txguard log' lists them)", id);
		return 1;
	}
	if (rc < 0) {
		tg_warn("no run '%s' in this workspace's history ('txguard log' lists them)", id ? id : "last");
		return 1;
	}
	return 0;
}

/* ---- log ---- */

static void json_entry(struct tg_json *j, const struct tg_txinfo *i, const char *tx)
{
	char t[32];
	tg_json_kv_str(j, "id", i->id);
	fmt_time(t, i->started_ns);
	tg_json_kv_str(j, "time", t);
	fmt_time(t, i->ended_ns);
	tg_json_kv_str(j, "end_time", t);
	tg_json_kv_str(j, "command", i->command);
	tg_json_kv_str(j, "outcome", outcome_of(i));
	tg_json_key(j, "counts");
	tg_json_begin_object(j);
	for (int k = 0; k < TG_CHANGE_KIND_COUNT; k++)
		tg_json_kv_uint(j, tg_change_kind_name((enum tg_change_kind)k), i->counts[k]);
	tg_json_end_object(j);
	tg_json_kv_uint(j, "bytes_saved", i->bytes_saved);
	tg_json_kv_uint(j, "journal_bytes", i->journal_bytes);
	tg_json_kv_str(j, "tx", tx);
	tg_json_kv_str(j, "kind", tg_run_is_undo(i) ? "undo" : "run");
	if (tg_run_is_undo(i))
		tg_json_kv_str(j, "undoes", i->undoes);
}

static int log_json(const struct tg_history *h)
{
	struct tg_json *j = tg_json_new_file(stdout);
	if (!j)
		return tg_fail("out of memory");
	tg_json_begin_array(j);
	for (size_t i = 0; i < h->n; i++) {
		tg_json_begin_object(j);
		json_entry(j, &h->v[i], h->tx[i]);
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
	return tg_json_done(j, "the log");
}

static int cmd_log(struct hctx *c)
{
	struct tg_history h = { 0 };
	if (load_or_fail(c, &h))
		return 125;
	int rc = 0;
	if (c->o->json) {
		rc = log_json(&h);
	} else if (h.n == 0) {
		printf("no transactions in the history of %s\n", c->workspace);
	} else {
		printf("%-26s %-24s %-9s %7s %7s %7s %7s %7s %8s  %s\n", "ID", "TIME", "OUTCOME",
		       "CREATED", "MODIFIED", "DELETED", "RENAMED", "META", "JOURNAL", "COMMAND");
		for (size_t i = 0; i < h.n; i++) {
			const struct tg_txinfo *e = &h.v[i];
			char t[32], sz[16];
			fmt_time(t, e->started_ns);
			fmt_size(sz, e->journal_bytes);
			printf("%-26s %-24s %-9s %7zu %7zu %7zu %7zu %7zu %8s  %s", e->id, t,
			       outcome_of(e), e->counts[0], e->counts[1], e->counts[2], e->counts[3],
			       e->counts[4], sz, e->command ? e->command : "");
			if (h.tx[i])
				printf("  [tx %s]", h.tx[i]);
			putchar('\n');
		}
	}
	tg_history_clear(&h);
	return rc;
}

/* ---- show ---- */

static void show_text(const struct tg_txinfo *e, const char *tx, const struct tg_changes *ch)
{
	char t[32];
	fmt_time(t, e->started_ns);
	printf("run %s  %s  %s%s%s\n", e->id, t, outcome_of(e), tx ? "  tx " : "", tx ? tx : "");
	printf("command: %s\n", e->command ? e->command : "");
	for (size_t i = 0; i < ch->n; i++) {
		const struct tg_change *x = &ch->v[i];
		if (x->kind == TG_CHANGE_RENAMED)
			printf("  %-9s %s -> %s\n", tg_change_kind_name(x->kind), x->from, x->path);
		else
			printf("  %-9s %s\n", tg_change_kind_name(x->kind), x->path);
	}
	printf("%zu path(s): %zu created, %zu modified, %zu deleted, %zu renamed, %zu metadata\n",
	       ch->n, ch->count[0], ch->count[1], ch->count[2], ch->count[3], ch->count[4]);
}

static int show_json(const struct tg_txinfo *e, const char *tx, const struct tg_changes *ch)
{
	struct tg_json *j = tg_json_new_file(stdout);
	if (!j)
		return tg_fail("out of memory");
	tg_json_begin_object(j);
	json_entry(j, e, tx);
	tg_json_key(j, "changes");
	tg_json_begin_array(j);
	for (size_t i = 0; i < ch->n; i++) {
		tg_json_begin_object(j);
		tg_json_kv_str(j, "kind", tg_change_kind_name(ch->v[i].kind));
		tg_json_kv_str(j, "path", ch->v[i].path);
		if (ch->v[i].from)
			tg_json_kv_str(j, "from", ch->v[i].from);
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
	tg_json_end_object(j);
	return tg_json_done(j, "the run");
}

static int cmd_show(struct hctx *c)
{
	struct tg_history h = { 0 };
	if (load_or_fail(c, &h))
		return 125;
	size_t at = 0;
	int rc = find_or_fail(&h, c->o->id, &at);
	struct tg_changes ch = { 0 };
	if (rc == 0 && (rc = tg_run_changes(h.state_dir, h.v[at].id, &ch)) < 0)
		rc = tg_fail("cannot read run %s: %s", h.v[at].id, strerror(-rc));
	if (rc == 0 && c->o->json)
		rc = show_json(&h.v[at], h.tx[at], &ch);
	else if (rc == 0)
		show_text(&h.v[at], h.tx[at], &ch);
	tg_changes_clear(&ch);
	tg_history_clear(&h);
	return rc;
}

/* ---- undo, rollback ---- */

static void print_conflicts(const struct tg_undo_result *r, bool forced)
{
	for (size_t i = 0; i < r->nconflicts; i++)
		fprintf(stderr, "  %s%s  (changed outside txguard since run %s)\n",
		        forced ? "overwritten: " : "", r->conflicts[i].path, r->conflicts[i].txn_id);
}

/* --json: one object {ok, refused, partial, error, undone[], conflicts[]}. */
static void undo_json(int rc, const struct tg_undo_result *r, bool forced, const char *entry)
{
	struct tg_json *j = tg_json_new_file(stdout);
	if (!j)
		return;
	tg_json_begin_object(j);
	tg_json_kv_bool(j, "ok", rc == 0);
	tg_json_kv_bool(j, "refused", r->refused);
	tg_json_kv_bool(j, "partial", r->partial);
	tg_json_kv_str(j, "error", rc < 0 ? tg_errno_name(-rc) : NULL);
	char *none[] = { NULL };
	tg_json_kv_strv(j, "undone", r->undone ? r->undone : none);
	tg_json_kv_str(j, "entry", entry);
	tg_json_key(j, "conflicts");
	tg_json_begin_array(j);
	for (size_t i = 0; i < r->nconflicts; i++) {
		tg_json_begin_object(j);
		tg_json_kv_str(j, "path", r->conflicts[i].path);
		tg_json_kv_str(j, "run", r->conflicts[i].txn_id);
		tg_json_kv_bool(j, "overwritten", rc == 0 && forced);
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
	tg_json_end_object(j);
	tg_json_newline(j);
	tg_json_free(j);
}

/* Shared report of an undo or a rollback; returns the exit code. */
static int undo_report(struct hctx *c, const char *what, int rc, const struct tg_undo_result *r,
                       const char *entry)
{
	if (c->o->json)
		undo_json(rc, r, c->o->force, entry);
	for (size_t i = 0; !c->o->json && i < r->nundone; i++)
		printf("undone: %s\n", r->undone[i]);
	if (rc == -ESTALE) {
		if (r->refused)
			tg_warn("%s refused: %zu path(s) changed outside txguard since; nothing was changed:",
			        what, r->nconflicts);
		else
			tg_warn("%s stopped: %zu path(s) were changed outside txguard between runs; the runs "
			        "listed as undone above stay undone, nothing else was changed:", what, r->nconflicts);
		print_conflicts(r, false);
		fprintf(stderr, "Hint: keep your edits elsewhere first, or use --force to overwrite them.\n");
		return 1;
	}
	if (rc == -ENOENT) {
		tg_warn("%s: nothing to undo (no such run, or it left history)", what);
		return 1;
	}
	if (rc == -EBUSY) {
		tg_warn("%s: a txguard run is in progress on this workspace; try again when it ends", what);
		return 1;
	}
	if (rc == -EALREADY) {
		tg_warn("%s: run %s is already undone", what, c->o->id);
		return 1;
	}
	if (rc == -EISDIR) {
		tg_warn("%s: %s is an undo, not a run: 'txguard redo' undoes the last undo", what, c->o->id);
		return 1;
	}
	if (rc < 0)
		return tg_fail("%s failed: %s", what, strerror(-rc));
	if (r->nconflicts) {
		tg_warn("--force: %zu path(s) changed outside txguard were overwritten:", r->nconflicts);
		print_conflicts(r, true);
	}
	if (r->nundone == 0 && !c->o->json)
		printf("nothing to undo\n");
	return 0;
}

/* The undo journals itself (txn.h): each of its restore steps is captured
 * first, as a trapped call of a run would be. */
static int before_step(void *ud, const struct tg_op *op)
{
	return tg_txn_before(ud, op);
}

static char *join_ids(char *const *ids)
{
	size_t len = 1;
	for (size_t i = 0; ids && ids[i]; i++)
		len += strlen(ids[i]) + 1;
	char *s = calloc(1, len);
	for (size_t i = 0; s && ids && ids[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, ids[i]);
	}
	return s;
}

/* The undo is a history entry of its own (kind "undo", naming the runs it
 * undid) whose journal holds what the undo overwrote: `redo` restores it.
 * Its journal is on disk before the first run is touched; an undo that
 * fails part-way is left open, and recovery reverts it as a whole. */
static int undo_journaled(struct hctx *c, char ***idsp, struct tg_undo_result *r, char **entry)
{
	char **ids = *idsp;
	_cleanup_free_ char *all = join_ids(ids);
	_cleanup_free_ char *cmdline = tg_asprintf("txguard undo%s%s", c->o->id ? " " : "", c->o->id ? c->o->id : "");
	if (!all || !cmdline)
		return -ENOMEM;
	const struct tg_txn_opts to = {
		.workspace = c->workspace, .state_dir = c->state_dir, .lock = TG_LOCK_FAIL,
		.command = cmdline, .undoes = all,
		.history_max_runs = c->o->history_max_runs, .history_max_bytes = c->o->history_max_bytes,
	};
	struct tg_txn *t = NULL;
	int rc = tg_txn_open(&t, &to);
	if (rc == -ESTALE) {
		tg_warn("undo: an interrupted transaction waits to be restored, and paths were changed since: "
		        "see 'txguard recover --dry-run'");
		return -ECANCELED;
	}
	if (rc < 0)
		return rc;
	if (tg_txn_recovery(t)->restored > 0) {
		if (!c->o->quiet)
			tg_say_recovered(tg_txn_recovery(t), tg_txn_state_dir(t), "first");
		/* Recovery may have put runs back in effect (an interrupted undo
		 * reverted): choose again, under the lock now. */
		tg_strv_free(ids);
		*idsp = ids = NULL;
		rc = tg_history_undo_plan(c->workspace, tg_txn_state_dir(t), c->o->id, idsp);
		ids = *idsp;
		free(all);
		all = rc == 0 ? join_ids(ids) : NULL;
		if (rc == 0)
			rc = all ? tg_txn_set_undoes(t, all) : -ENOMEM;
		if (rc < 0) {
			(void)tg_txn_rollback(t, NULL, NULL);
			tg_txn_free(t);
			return rc;
		}
	}
	const struct tg_undo_opts uo = { .force = c->o->force, .locked = true, .before = before_step, .ud = t };
	rc = tg_history_undo_set_ex(c->workspace, tg_txn_state_dir(t), (const char *const *)ids, &uo, r);
	if ((rc == 0 || rc == -ESTALE) && r->nundone > 0) {
		_cleanup_free_ char *done = join_ids(r->undone);
		int e = done ? tg_txn_set_undoes(t, done) : -ENOMEM;
		tg_txn_end(t);
		if (!e)
			e = tg_txn_commit(t);
		struct tg_txinfo kept = { 0 };
		/* an undo whose steps added up to no change leaves no entry */
		if (!e && tg_journal_read_info(tg_txn_state_dir(t), tg_txn_id(t), &kept) == 0)
			*entry = tg_strdup(tg_txn_id(t));
		tg_txinfo_clear(&kept);
		if (e < 0)
			tg_warn("undo: the runs are undone, but the undo could not be kept for a redo: %s", strerror(-e));
		tg_txn_collect(t);
	} else if (rc == 0 || rc == -ESTALE || rc == -ENOENT) {
		(void)tg_txn_rollback(t, NULL, NULL); /* nothing was touched */
	} else {
		tg_warn("undo: failed part-way; 'txguard recover' puts the workspace back as it was before the undo");
	}
	tg_txn_free(t);
	return rc;
}

static int cmd_undo(struct hctx *c)
{
	if (c->o->dry_run)
		return tg_cmd_undo_preview(c->o, c->workspace, c->state_dir);
	struct tg_undo_result r = { 0 };
	_cleanup_strv_ char **ids = NULL;
	_cleanup_free_ char *entry = NULL;
	/* An interrupted transaction first (an interrupted undo is reverted
	 * whole): what is in effect, and so what to undo, depends on it. */
	struct tg_recovery rec = { 0 };
	int rc = tg_recover_ex(c->workspace, c->state_dir, &rec);
	if (rc == -ESTALE) {
		tg_warn("undo: an interrupted transaction waits to be restored, and paths were changed since: "
		        "see 'txguard recover --dry-run'");
		return 1;
	}
	if (rec.restored > 0 && !c->o->quiet) {
		_cleanup_free_ char *sd = NULL;
		(void)tg_recover_state_dir(c->workspace, c->state_dir, &sd);
		tg_say_recovered(&rec, sd ? sd : "the state dir", "first");
	}
	if (rc == 0)
		rc = tg_history_undo_plan(c->workspace, c->state_dir, c->o->id, &ids);
	if (rc == 0)
		rc = undo_journaled(c, &ids, &r, &entry);
	if (rc == -ECANCELED) {
		tg_undo_result_clear(&r);
		return 1;
	}
	rc = undo_report(c, "undo", rc, &r, entry);
	tg_undo_result_clear(&r);
	return rc;
}

/* --json of a redo: {ok, refused, error, entry, redone[], conflicts[]}. */
static void redo_json(int rc, const struct tg_undo_result *r, bool forced)
{
	struct tg_json *j = tg_json_new_file(stdout);
	if (!j)
		return;
	tg_json_begin_object(j);
	tg_json_kv_bool(j, "ok", rc == 0);
	tg_json_kv_bool(j, "refused", r->refused);
	tg_json_kv_str(j, "error", rc < 0 ? tg_errno_name(-rc) : NULL);
	tg_json_kv_str(j, "entry", r->entry);
	char *none[] = { NULL };
	tg_json_kv_strv(j, "redone", rc == 0 && r->undone ? r->undone : none);
	tg_json_key(j, "conflicts");
	tg_json_begin_array(j);
	for (size_t i = 0; i < r->nconflicts; i++) {
		tg_json_begin_object(j);
		tg_json_kv_str(j, "path", r->conflicts[i].path);
		tg_json_kv_bool(j, "overwritten", rc == 0 && forced);
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
	tg_json_end_object(j);
	tg_json_newline(j);
	tg_json_free(j);
}

/* Exit codes as undo's: 0 done, 1 refused or nothing to redo, 125 failed. */
static int cmd_redo(struct hctx *c)
{
	if (c->o->dry_run)
		return tg_cmd_redo_preview(c->o, c->workspace, c->state_dir);
	struct tg_undo_result r = { 0 };
	int rc = tg_history_redo(c->workspace, c->state_dir, c->o->force, &r);
	if (c->o->json)
		redo_json(rc, &r, c->o->force);
	for (size_t i = 0; rc == 0 && !c->o->json && i < r.nundone; i++)
		printf("redone: %s\n", r.undone[i]);
	int code = 1;
	if (rc == 0) {
		code = 0;
		if (r.nconflicts) {
			tg_warn("--force: %zu path(s) changed outside txguard were overwritten:", r.nconflicts);
			for (size_t i = 0; i < r.nconflicts; i++)
				fprintf(stderr, "  overwritten: %s\n", r.conflicts[i].path);
		}
	} else if (rc == -ENOENT) {
		tg_warn("redo: nothing to redo (no 'txguard undo' in this workspace's history that is not redone)");
	} else if (rc == -ENOTEMPTY) {
		tg_warn("redo: refused: a run came after undo %s (the workspace moved on); "
		        "undo that run first, or run the command again under txguard", r.entry);
	} else if (rc == -ENOLINK) {
		tg_warn("redo: a run that undo %s undid left the history (bound) or is not undone any more", r.entry);
	} else if (rc == -EBUSY) {
		tg_warn("redo: a txguard run is in progress on this workspace; try again when it ends");
	} else if (rc == -EINPROGRESS) {
		tg_warn("redo: an interrupted transaction waits to be restored; run 'txguard recover' first");
	} else if (rc == -ESTALE) {
		tg_warn("redo refused: %zu path(s) changed outside txguard since the undo; nothing was changed:",
		        r.nconflicts);
		for (size_t i = 0; i < r.nconflicts; i++)
			fprintf(stderr, "  %s\n", r.conflicts[i].path);
		fprintf(stderr, "Hint: keep your edits elsewhere first, or use --force to overwrite them.\n");
	} else {
		code = tg_fail("redo failed: %s", strerror(-rc));
	}
	tg_undo_result_clear(&r);
	return code;
}

/* ---- transactions ---- */

static int tx_error(const char *what, const char *id, int rc)
{
	if (rc == -ENOENT)
		tg_warn("%s: no transaction '%s' (start one with 'txguard begin')", what, id);
	else if (rc == -ESTALE)
		tg_warn("%s: transaction '%s' is not open any more", what, id);
	else if (rc == -EEXIST)
		tg_warn("%s: transaction '%s' exists already", what, id);
	else if (rc == -EINVAL)
		tg_warn("%s: '%s' is not a valid transaction name (letters, digits, . _ -; 64 at most)", what, id);
	else
		return tg_fail("%s %s: %s", what, id, strerror(-rc));
	return 1;
}

static int cmd_begin(struct hctx *c)
{
	_cleanup_free_ char *id = NULL;
	int rc = tg_history_tx_begin(c->workspace, c->state_dir, c->o->tx, &id);
	if (rc < 0)
		return tx_error("begin", c->o->tx ? c->o->tx : "", rc);
	printf("%s\n", id);
	return 0;
}

static int cmd_commit(struct hctx *c)
{
	int rc = tg_history_tx_commit(c->workspace, c->state_dir, c->o->id);
	if (rc < 0)
		return tx_error("commit", c->o->id, rc);
	if (!c->o->quiet)
		printf("transaction %s committed\n", c->o->id);
	return 0;
}

static int cmd_rollback(struct hctx *c)
{
	struct tg_undo_result r = { 0 };
	int rc = tg_history_tx_rollback(c->workspace, c->state_dir, c->o->id, c->o->force, &r);
	if (rc == -ENOENT && r.nundone == 0 && r.nconflicts == 0) {
		struct tg_tx_info t = { 0 };
		if (tg_history_tx_load(c->workspace, c->state_dir, c->o->id, &t) < 0) {
			tg_undo_result_clear(&r);
			return tx_error("rollback", c->o->id, rc);
		}
		tg_tx_info_clear(&t);
	}
	if (rc == -ESTALE && !r.refused && r.nconflicts == 0) {
		tg_undo_result_clear(&r);
		return tx_error("rollback", c->o->id, rc);
	}
	rc = undo_report(c, "rollback", rc, &r, NULL);
	if (rc == 0 && !c->o->json)
		printf("transaction %s rolled back\n", c->o->id);
	tg_undo_result_clear(&r);
	return rc;
}

/* ---- diff ---- */

/* Run argv with stdout on out_fd (-1: ours); *status gets the exit code. */
static int spawn_wait(char *const argv[], int out_fd, int *status)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
	fflush(stdout);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -rc;
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return 0;
}

/* SHA-256 of a file as hex, by sha256sum (coreutils, on every Debian). */
static int sha256_of(const char *file, char out[static 65])
{
	char tmpl[] = "/tmp/txguard-sha.XXXXXX";
	_cleanup_close_ int fd = mkstemp(tmpl);
	if (fd < 0)
		return -errno;
	unlink(tmpl);
	char *argv[] = { "sha256sum", "--", (char *)file, NULL };
	int st = 0, rc = spawn_wait(argv, fd, &st);
	if (rc == 0 && st != 0)
		rc = -EIO;
	char buf[65] = { 0 };
	ssize_t n = rc == 0 ? pread(fd, buf, 64, 0) : -1;
	if (rc == 0 && n != 64)
		rc = -EIO;
	if (rc == 0)
		memcpy(out, buf, 65);
	return rc;
}

static bool looks_binary(const char *file)
{
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char buf[8192];
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : 0;
	return n > 0 && memchr(buf, '\0', (size_t)n) != NULL;
}

static uint64_t file_size(const char *file)
{
	struct stat st;
	return lstat(file, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int diff_binary(const char *rel, const char *before, const char *now)
{
	char h1[65] = "-", h2[65] = "-";
	if ((strcmp(before, "/dev/null") != 0 && sha256_of(before, h1) < 0) ||
	    (strcmp(now, "/dev/null") != 0 && sha256_of(now, h2) < 0))
		return -EIO;
	if (strcmp(h1, h2) == 0)
		return 0;
	printf("Binary file %s differs:\n  before: %llu bytes, sha256 %s\n  now:    %llu bytes, sha256 %s\n",
	       rel, (unsigned long long)file_size(before), h1, (unsigned long long)file_size(now), h2);
	return 0;
}

/* diff -u between two regular files (either may be /dev/null). */
static int diff_files(const char *rel, const char *before, const char *now)
{
	if (looks_binary(before) || looks_binary(now))
		return diff_binary(rel, before, now);
	_cleanup_free_ char *la = tg_asprintf("a/%s", rel);
	_cleanup_free_ char *lb = tg_asprintf("b/%s", rel);
	if (!la || !lb)
		return -ENOMEM;
	char *argv[] = { "diff", "-u", "--label", la, "--label", lb, (char *)before, (char *)now, NULL };
	int st = 0;
	int rc = spawn_wait(argv, -1, &st);
	if (rc == 0 && st > 1)
		rc = -EIO;
	return rc;
}

struct diff_ctx {
	struct hctx *c;
	const char *sd, *id;
	struct tg_strset seen;
	size_t shown;
};

static void describe_current(const char *cur, char *buf, size_t len)
{
	struct stat st;
	char target[256];
	ssize_t n;
	if (lstat(cur, &st) < 0)
		snprintf(buf, len, "absent");
	else if (S_ISLNK(st.st_mode) && (n = readlink(cur, target, sizeof(target) - 1)) >= 0)
		snprintf(buf, len, "symlink -> %.*s", (int)n, target);
	else
		snprintf(buf, len, "%s, mode %04o, %llu bytes",
		         S_ISDIR(st.st_mode) ? "directory" : S_ISLNK(st.st_mode) ? "symlink" :
		         S_ISREG(st.st_mode) ? "file" : "special file",
		         (unsigned)(st.st_mode & 07777), (unsigned long long)st.st_size);
}

/* Anything but regular content: one line saying what it was and what it is. */
static void diff_describe(const struct tg_jrec *r, const char *cur)
{
	char now[128];
	describe_current(cur, now, sizeof(now));
	const struct tg_jmeta *m = &r->meta;
	if (r->kind == TG_JREC_RENAMED)
		printf("renamed %s -> %s\n", r->path, r->path2);
	else if (r->kind == TG_JREC_CREATED)
		printf("created %s: now %s\n", r->path, now);
	else if (S_ISLNK(m->mode) && r->aux)
		printf("symlink %s: was -> %.*s; now %s\n", r->path, (int)r->aux_len, r->aux, now);
	else
		printf("%s %s: was %s, mode %04o, uid %u gid %u, %llu bytes; now %s\n",
		       r->kind == TG_JREC_META ? "metadata" : "deleted", r->path,
		       S_ISDIR(m->mode) ? "directory" : S_ISLNK(m->mode) ? "symlink" :
		       S_ISREG(m->mode) ? "file" : "special file",
		       (unsigned)(m->mode & 07777), m->uid, m->gid, (unsigned long long)m->size, now);
}

/* The pre-image of a regular file into a temp file (CONTENT, SAVED) or the
 * stash hard link itself (STASHED). *path: what to give diff. */
static int preimage_file(struct diff_ctx *d, const struct tg_jrec *r, char **path, bool *temp)
{
	if (r->kind == TG_JREC_STASHED) {
		*temp = false;
		*path = tg_asprintf("%s/txn/%s/stash/%llu", d->sd, d->id, (unsigned long long)r->seq);
		return *path ? 0 : -ENOMEM;
	}
	char tmpl[] = "/tmp/txguard-pre.XXXXXX";
	_cleanup_close_ int fd = mkstemp(tmpl);
	if (fd < 0)
		return -errno;
	int rc = tg_journal_preimage(d->sd, d->id, r, fd);
	if (rc < 0) {
		unlink(tmpl);
		return rc;
	}
	*temp = true;
	*path = tg_strdup(tmpl);
	return *path ? 0 : -ENOMEM;
}

static bool has_content(const struct tg_jrec *r)
{
	if (!S_ISREG(r->meta.mode))
		return false;
	return r->kind == TG_JREC_CONTENT || r->kind == TG_JREC_SAVED || r->kind == TG_JREC_STASHED;
}

static int diff_one(struct diff_ctx *d, const struct tg_jrec *r)
{
	_cleanup_free_ char *cur = tg_path_join(d->c->workspace, r->path);
	if (!cur)
		return -ENOMEM;
	struct stat st;
	int lrc = lstat(cur, &st) == 0 ? 0 : -errno;
	bool cur_reg = lrc == 0 && S_ISREG(st.st_mode);
	bool cur_none = lrc == -ENOENT;
	if (r->kind == TG_JREC_CREATED && (cur_reg || cur_none)) {
		if (cur_none)
			return 0; /* made and removed again in the run: nothing to show */
		return diff_files(r->path, "/dev/null", cur);
	}
	if (!has_content(r) || !(cur_reg || cur_none)) {
		diff_describe(r, cur);
		return 0;
	}
	_cleanup_free_ char *pre = NULL;
	bool temp = false;
	int rc = preimage_file(d, r, &pre, &temp);
	if (rc < 0)
		return rc;
	rc = diff_files(r->path, pre, cur_reg ? cur : "/dev/null");
	if (temp)
		unlink(pre);
	return rc;
}

static int diff_record(void *ud, const struct tg_jrec *r)
{
	struct diff_ctx *d = ud;
	if (r->kind == TG_JREC_BORN || (r->kind == TG_JREC_META && (r->flags & TG_JREC_F_IMPLICIT)))
		return 0;
	const char *want = d->c->o->path;
	if (want && strcmp(r->path, want) != 0 &&
	    !(r->kind == TG_JREC_RENAMED && strcmp(r->path2, want) == 0))
		return 0;
	int rc = tg_strset_add(&d->seen, r->path);
	if (rc <= 0)
		return rc; /* first record of a path only: it holds the pre-image */
	d->shown++;
	return diff_one(d, r);
}

static int cmd_diff(struct hctx *c)
{
	struct tg_history h = { 0 };
	if (load_or_fail(c, &h))
		return 125;
	size_t at = 0;
	int rc = find_or_fail(&h, c->o->id, &at);
	if (rc == 0) {
		struct diff_ctx d = { .c = c, .sd = h.state_dir, .id = h.v[at].id };
		rc = tg_run_records(h.state_dir, h.v[at].id, diff_record, &d);
		tg_strset_clear(&d.seen);
		if (rc < 0)
			rc = tg_fail("diff of run %s: %s", h.v[at].id, strerror(-rc));
		else if (d.shown == 0 && c->o->path) {
			tg_warn("run %s did not change %s", h.v[at].id, c->o->path);
			rc = 1;
		}
	}
	tg_history_clear(&h);
	return rc;
}

int tg_cmd_history(struct tg_opts *o)
{
	struct hctx c = { .o = o };
	/* Commands that change the workspace refuse a too-wide one, as a run does. */
	bool writes = o->cmd == TG_CMD_UNDO || o->cmd == TG_CMD_REDO || o->cmd == TG_CMD_BEGIN ||
	              o->cmd == TG_CMD_COMMIT || o->cmd == TG_CMD_ROLLBACK;
	enum tg_ws_source src;
	char why[512];
	int rc = writes ? tg_workspace_for_writing(o, &c.workspace, &src, why, sizeof(why))
	                : tg_workspace_resolve(o, &c.workspace, &src);
	if (rc < 0 && writes)
		return tg_fail("%s", why);
	if (rc < 0)
		return tg_fail("workspace %s: %s", o->workspace ? o->workspace : ".", strerror(-rc));
	c.state_dir = o->state_dir;
	if (c.state_dir && !*c.state_dir)
		c.state_dir = NULL;
	switch (o->cmd) {
	case TG_CMD_LOG: rc = cmd_log(&c); break;
	case TG_CMD_SHOW: rc = cmd_show(&c); break;
	case TG_CMD_DIFF: rc = cmd_diff(&c); break;
	case TG_CMD_UNDO: rc = cmd_undo(&c); break;
	case TG_CMD_REDO: rc = cmd_redo(&c); break;
	case TG_CMD_BEGIN: rc = cmd_begin(&c); break;
	case TG_CMD_COMMIT: rc = cmd_commit(&c); break;
	case TG_CMD_ROLLBACK: rc = cmd_rollback(&c); break;
	default: rc = tg_fail("internal error: subcommand %d is not a history command", (int)o->cmd); break;
	}
	free(c.workspace);
	return rc;
}
