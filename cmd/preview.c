/* preview.c — `txguard undo --dry-run [ID]` and `txguard recover
 * [--dry-run] [--force]`: what a restore would do, step by step, and what
 * stands in its way, without changing anything (text, or --json). */
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "history/history.h"
#include "base/json.h"
#include "txn/txn.h"

struct pv {
	struct tg_json *j;   /* --json, else text on stdout */
	size_t steps, conflicts;
};

static int print_step(void *ud, enum tg_step s, const char *path, const char *path2)
{
	struct pv *p = ud;
	p->steps++;
	if (p->j) {
		tg_json_begin_object(p->j);
		tg_json_kv_str(p->j, "step", tg_step_name(s));
		tg_json_kv_str(p->j, "path", path);
		if (path2)
			tg_json_kv_str(p->j, "to", path2);
		tg_json_end_object(p->j);
	} else if (path2) {
		printf("  %-10s %s -> %s\n", tg_step_name(s), path[0] ? path : ".", path2[0] ? path2 : ".");
	} else {
		printf("  %-10s %s\n", tg_step_name(s), path[0] ? path : ".");
	}
	return 0;
}

static int print_conflict(void *ud, const char *path)
{
	struct pv *p = ud;
	p->conflicts++;
	if (p->j)
		tg_json_string(p->j, path);
	else
		printf("  changed    %s\n", path[0] ? path : ".");
	return 0;
}

static int print_changed(void *ud, const char *rel, bool changed)
{
	return changed ? print_conflict(ud, rel) : 0;
}

/* One run's preview: {id, steps[], conflicts[]} or its text block. */
static int preview_one(struct pv *p, const char *sd, const char *id, bool interrupted, const char *label)
{
	int rc;
	if (p->j) {
		tg_json_begin_object(p->j);
		tg_json_kv_str(p->j, "id", id);
		tg_json_key(p->j, "steps");
		tg_json_begin_array(p->j);
	} else {
		printf("%s %s:\n", label, id);
	}
	rc = tg_journal_preview(sd, id, print_step, p);
	if (p->j) {
		tg_json_end_array(p->j);
		tg_json_key(p->j, "conflicts");
		tg_json_begin_array(p->j);
	}
	if (rc == 0)
		rc = interrupted ? tg_journal_edited_after(sd, id, print_conflict, p)
		                 : tg_run_check(sd, id, print_changed, p);
	if (p->j) {
		tg_json_end_array(p->j);
		tg_json_end_object(p->j);
	}
	return rc;
}

static int begin(struct pv *p, bool json, const char *what)
{
	if (!json)
		return 0;
	p->j = tg_json_new_file(stdout);
	if (!p->j)
		return -ENOMEM;
	tg_json_begin_object(p->j);
	tg_json_kv_str(p->j, "dry_run", what);
	tg_json_key(p->j, "runs");
	tg_json_begin_array(p->j);
	return 0;
}

static void end(struct pv *p)
{
	if (!p->j)
		return;
	tg_json_end_array(p->j);
	tg_json_kv_uint(p->j, "steps", p->steps);
	tg_json_kv_uint(p->j, "conflicts", p->conflicts);
	tg_json_end_object(p->j);
	tg_json_newline(p->j);
	tg_json_free(p->j);
	p->j = NULL;
}

/* The runs a real undo of id would undo: tg_history_undo's choice. */
int tg_cmd_undo_preview(struct tg_opts *o, const char *workspace, const char *state_dir)
{
	_cleanup_strv_ char **ids = NULL;
	_cleanup_free_ char *sd = NULL;
	int rc = tg_history_undo_plan(workspace, state_dir, o->id, &ids);
	if (rc == -ENOENT || rc == -EALREADY || rc == -EISDIR) {
		tg_warn("undo --dry-run: %s", rc == -EALREADY ? "that run is already undone"
		                              : rc == -EISDIR ? "that is an undo: 'txguard redo --dry-run' previews its undo"
		                                              : "nothing to undo");
		return 1;
	}
	if (rc == 0)
		rc = tg_history_state_root(workspace, state_dir, &sd);
	if (rc < 0)
		return tg_fail("cannot read the history of %s: %s", workspace, strerror(-rc));
	struct pv p = { 0 };
	rc = begin(&p, o->json, "undo");
	for (size_t i = 0; rc == 0 && ids[i]; i++)
		rc = preview_one(&p, sd, ids[i], false, "would undo");
	end(&p);
	if (rc == 0 && !o->json)
		printf("%zu step(s); %zu path(s) changed outside txguard since%s\n", p.steps, p.conflicts,
		       p.conflicts ? ": undo refuses them without --force" : "");
	return rc < 0 ? tg_fail("undo --dry-run: %s", strerror(-rc)) : 0;
}

/* The undo entry a redo would restore: its steps, and the paths changed
 * since the undo (what a redo refuses without --force). */
int tg_cmd_redo_preview(struct tg_opts *o, const char *workspace, const char *state_dir)
{
	_cleanup_free_ char *id = NULL, *sd = NULL;
	int rc = tg_history_redo_target(workspace, state_dir, &id);
	if (rc == -ENOENT || rc == -ENOTEMPTY || rc == -ENOLINK) {
		tg_warn("redo --dry-run: %s", rc == -ENOENT ? "nothing to redo"
		                             : rc == -ENOTEMPTY ? "refused: a run came after the last undo (the workspace moved on)"
		                                                : "a run the last undo undid left the history");
		return 1;
	}
	if (rc == 0)
		rc = tg_history_state_root(workspace, state_dir, &sd);
	if (rc < 0)
		return tg_fail("cannot read the history of %s: %s", workspace, strerror(-rc));
	struct pv p = { 0 };
	rc = begin(&p, o->json, "redo");
	if (rc == 0)
		rc = preview_one(&p, sd, id, false, "would redo (undo of)");
	end(&p);
	if (rc == 0 && !o->json)
		printf("%zu step(s); %zu path(s) changed outside txguard since%s\n", p.steps, p.conflicts,
		       p.conflicts ? ": redo refuses them without --force" : "");
	return rc < 0 ? tg_fail("redo --dry-run: %s", strerror(-rc)) : 0;
}

static bool interrupted(const struct tg_txinfo *i)
{
	return i->state == TG_JSTATE_OPEN || i->state == TG_JSTATE_ROLLING_BACK;
}

static int recover_preview(struct tg_opts *o, const char *sd)
{
	struct tg_txinfo *v = NULL;
	size_t n = 0;
	struct stat st;
	int rc = stat(sd, &st) < 0 ? 0 : tg_run_list(sd, &v, &n);
	struct pv p = { 0 };
	if (rc == 0)
		rc = begin(&p, o->json, "recover");
	size_t found = 0;
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (interrupted(&v[i]) && ++found)
			rc = preview_one(&p, sd, v[i].id, true, "would restore interrupted");
	end(&p);
	tg_txinfo_free_all(v, n);
	if (rc < 0)
		return tg_fail("recover --dry-run: %s", strerror(-rc));
	if (!o->json)
		printf("%zu interrupted transaction(s), %zu step(s); %zu path(s) changed after the crash%s\n",
		       found, p.steps, p.conflicts, p.conflicts ? ": recover refuses them without --force" : "");
	return 0;
}

static int name_edits(void *ud, const char *path)
{
	(void)ud;
	fprintf(stderr, "  changed after the crash: %s\n", path[0] ? path : ".");
	return 0;
}

/* What recover copied aside before overwriting it. */
static int name_kept(void *ud, const char *id, const char *path)
{
	const struct tg_opts *o = ud;
	if (!o->quiet)
		printf("  kept aside: %s (aside/%s/%s)\n", path, id, path);
	return 0;
}

int tg_cmd_recover(struct tg_opts *o)
{
	_cleanup_free_ char *ws = NULL, *sd = NULL;
	enum tg_ws_source src;
	char why[512];
	int rc = tg_workspace_for_writing(o, &ws, &src, why, sizeof(why));
	if (rc < 0)
		return tg_fail("%s", why);
	const char *given = o->state_dir;
	if ((rc = tg_recover_state_dir(ws, given, &sd)) < 0)
		return tg_fail("recover %s: %s", ws, strerror(-rc));
	if (o->dry_run)
		return recover_preview(o, sd);
	struct tg_recovery r = { .force = o->force, .on_kept = name_kept, .ud = o };
	rc = tg_recover_ex(ws, given, &r);
	if (rc == -ESTALE) {
		tg_warn("recover refused: restoring would overwrite paths changed after the crash; nothing was changed:");
		struct tg_txinfo *v = NULL;
		size_t nv = 0;
		if (tg_run_list(sd, &v, &nv) == 0)
			for (size_t i = 0; i < nv; i++)
				if (interrupted(&v[i]))
					(void)tg_journal_edited_after(sd, v[i].id, name_edits, NULL);
		tg_txinfo_free_all(v, nv);
		fprintf(stderr, "Hint: keep your edits elsewhere first, or use --force to overwrite them.\n");
		return 1;
	}
	if (rc < 0)
		return tg_fail("recover %s: %s", ws, strerror(-rc));
	if (!o->quiet) {
		printf("txguard: %d interrupted transaction(s) restored in %s\n", r.restored, ws);
		if (r.kept)
			printf("txguard: %zu path(s) changed after the last record kept in %s/aside\n", r.kept, sd);
	}
	return 0;
}
