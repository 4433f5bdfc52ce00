/* history.h — committed transactions as history: list, show, undo, and
 * multi-command transactions layered on top.
 *
 * The journal (journal.h) keeps each committed run's journal as a history
 * entry (bounded: oldest dropped first). This module reads those entries and
 * restores them; it never writes a journal itself.
 *
 * Undo. `undo ID` restores the workspace to how it was before run ID by
 * undoing every not-yet-undone run from the newest down to ID, newest first.
 * Before anything is touched, every path of every run in that set is checked
 * against the post-state the journal recorded at commit: a path whose current
 * state differs was changed OUTSIDE txguard since (a hand edit), and so is
 * an entry made or edited by hand inside a directory the run created
 * (history/created.c). Then the
 * WHOLE undo is refused (nothing changes, every such path is named) unless
 * `force`: a partial undo would leave a tree that never existed, mixing
 * states of different runs. Nothing is ever silently overwritten: a forced
 * undo names each path it overwrites.
 *
 * Multi-command transactions. `begin` writes a record in the state dir
 * (`<state>/tx/<ID>`); each `txguard --tx ID -- CMD` is an ordinary run with
 * its own journal, committed to history on success, and reported here with
 * tg_history_tx_record(). `commit` closes the record (the members stay in
 * history, each undoable on its own); `rollback` undoes the committed members
 * newest first (same refusal rule). Each member is a natural savepoint: undo
 * of a member rolls the transaction back to just before that member.
 *
 * Names. tg_run_* is one run of a state dir, by id: a journal dir read as
 * history (history/runs.c). tg_history_* is the workspace's history: the
 * runs of one workspace that reached history, ids resolved, undo of a set
 * of runs (history.c), and its multi-command transactions
 * (tg_history_tx_*, tx.c).
 *
 * All functions return 0 (or a count) on success and -errno on failure.
 * workspace is absolute and normalised; state_dir NULL means the default
 * (tg_journal_default_state_dir()).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "journal/journal.h"

/* ---- runs: one journal dir of the state dir each (runs.c) ---- */

/* All runs in state_dir (any state), newest first (by started_ns). *out is
 * a malloc'd array of *n entries; free with tg_txinfo_free_all. */
int tg_run_list(const char *state_dir, struct tg_txinfo **out, size_t *n);
void tg_txinfo_free_all(struct tg_txinfo *v, size_t n);
/* The runs started after run id that were undone or are being undone,
 * oldest first (NULL-terminated, *out malloc'd): what the rollback of a
 * committed run needs to know (tg_journal_rollback_after). */
int tg_run_newer_undone(const char *state_dir, const char *id, char ***out);
/* Records of one run, in log order. */
int tg_run_records(const char *state_dir, const char *id,
                   int (*cb)(void *ud, const struct tg_jrec *r), void *ud);
/* Post-state check for undo: is rel (workspace-relative) still as run id
 * left it at commit? *changed = true when it was changed outside since. */
int tg_run_changed_since(const char *state_dir, const char *id, const char *rel, bool *changed);
/* Visit every path of the post-state with whether it changed since commit
 * (tg_journal_post_check). */
int tg_run_check(const char *state_dir, const char *id,
                 int (*cb)(void *ud, const char *rel, bool changed), void *ud);
/* Undo one committed run (= rollback of it). Newer ones must be undone
 * first (the caller walks the list). Without force, fails with -ESTALE and
 * changes nothing when a path changed outside since (tg_run_check names
 * them). On success the run's state becomes "undone". */
int tg_run_undo(const char *state_dir, const char *id, bool force);
bool tg_run_is_undone(const struct tg_txinfo *i);
/* An undo's own history entry (`txguard undo` journals itself: its journal
 * holds the post-images of the runs it undid, info.undoes names them). */
bool tg_run_is_undo(const struct tg_txinfo *i);

/* How an undo runs: force as tg_run_undo; locked: the caller holds the
 * state dir's lock (an undo journaling itself holds it throughout);
 * before/ud: called before each change, as tg_restore_opts.before. */
struct tg_undo_opts {
	bool force;
	bool locked;
	int (*before)(void *ud, const struct tg_op *op);
	void *ud;
};
int tg_run_undo_ex(const char *state_dir, const char *id, const struct tg_undo_opts *o);
/* Restore undo entry id (its journal), giving the runs it undid their
 * stash links back, then mark those runs committed again: a redo, and
 * also what finishes an interrupted redo or reverts an interrupted undo
 * (recovery: the entry is open or rolling-back). The caller holds the
 * state dir's lock and has checked for edits made since. */
int tg_run_revert_undo(const char *state_dir, const char *id);

/* What one run changed, path by path: the rule of the run's own summary at
 * commit (txn.c), with "exists at commit" from the post-state; the entries
 * of a directory the run created are listed as created while they are still
 * as the run left them. */
int tg_run_changes(const char *state_dir, const char *id, struct tg_changes *out);

/* ---- history entries ---- */
/* The state dir: state_dir itself, or tg_journal_default_state_dir(workspace). */
int tg_history_state_root(const char *workspace, const char *state_dir, char **out);

/* The workspace's transactions that reached history (committed or undone),
 * newest first, with the multi-command transaction each belongs to. */
struct tg_history {
	struct tg_txinfo *v;        /* journal.h; v[i].state committed or undone */
	char **tx;                  /* tx[i]: its transaction id, or NULL */
	size_t n;
	char *state_dir;            /* the resolved state dir */
};
int tg_history_load(const char *workspace, const char *state_dir, struct tg_history *out);
void tg_history_clear(struct tg_history *h);

/* Resolve a user-given id: an exact id, any unique prefix of an id or of
 * its random suffix (after the last '-': 5776db of 20261201T225922.791-5776db),
 * or "last"/"HEAD" for the newest. -ENOENT when none matches, -EEXIST when
 * the prefix is ambiguous. *idx is the entry's index in h. */
int tg_history_find(const struct tg_history *h, const char *id, size_t *idx);

/* ---- undo ---- */

struct tg_undo_conflict {
	char *txn_id;               /* the run whose post-state the path no longer has */
	char *path;                 /* workspace-relative */
};

struct tg_undo_result {
	char **undone;              /* ids undone, in order (newest first), NULL-terminated */
	size_t nundone;
	struct tg_undo_conflict *conflicts;
	size_t nconflicts;
	bool refused;               /* conflicts and !force: nothing was changed */
	bool partial;               /* stopped midway (see tg_history_undo_set) */
	char *entry;                /* redo: the undo entry restored */
};
void tg_undo_result_clear(struct tg_undo_result *r);

/* Undo run id (NULL = the newest not-undone run that changed something) and
 * every newer run not yet
 * undone, newest first. -ENOENT: no such run, or nothing left to undo;
 * -EALREADY: that run is already undone; -ESTALE with r->refused: paths
 * changed outside since (r->conflicts), nothing was changed. */
int tg_history_undo(const char *workspace, const char *state_dir, const char *id, bool force,
                 struct tg_undo_result *r);

/* Undo exactly the runs in ids (NULL-terminated, newest first; runs undone
 * already are skipped, a run gone from history is -ENOENT), with the same
 * check first. The check compares each path with the post-state of the
 * newest run in the set that touched it; a hand edit made BETWEEN two runs of
 * the set shows only once the newer run is undone: the undo then stops there
 * (r->partial, -ESTALE, that path in r->conflicts), newer runs stay undone,
 * and nothing is overwritten. */
int tg_history_undo_set(const char *workspace, const char *state_dir, const char *const *ids,
                     bool force, struct tg_undo_result *r);
int tg_history_undo_set_ex(const char *workspace, const char *state_dir, const char *const *ids,
                           const struct tg_undo_opts *o, struct tg_undo_result *r);
/* The runs tg_history_undo(id) would undo, newest first (NULL-terminated,
 * *ids malloc'd; undo entries are never among them), with its errors:
 * -ENOENT, -EALREADY, and -EISDIR when id names an undo entry (redo is
 * its undo). */
int tg_history_undo_plan(const char *workspace, const char *state_dir, const char *id, char ***ids);

/* ---- redo: undo of the last undo ---- */

/* The undo entry a redo would restore: the newest undo entry not redone.
 * -ENOENT: none; -ENOTEMPTY: a run newer than it is in history (the
 * workspace moved on; *id is still set); -ENOLINK: a run it undid left
 * history (the bound) or is not undone any more. *id malloc'd. */
int tg_history_redo_target(const char *workspace, const char *state_dir, char **id);
/* Redo: restore that entry, with undo's refusal rule (its post-state
 * against the tree: -ESTALE with r->refused and r->conflicts unless
 * force). r->entry: the entry; r->undone: the runs back in effect (their
 * `undone` mark cleared, so a later undo undoes them again). -EBUSY while
 * a run holds the workspace; -EINPROGRESS while an interrupted transaction
 * waits for recovery. */
int tg_history_redo(const char *workspace, const char *state_dir, bool force, struct tg_undo_result *r);

/* ---- multi-command transactions ---- */

enum tg_tx_state { TG_TX_OPEN, TG_TX_COMMITTED, TG_TX_ROLLED_BACK, TG_TX_ABORTED };
const char *tg_tx_state_name(enum tg_tx_state s);

/* Start a transaction. name NULL: a fresh id ("tx-" + 8 hex digits); else
 * the id is name ([A-Za-z0-9._-], 1..64 bytes, not starting with '.'):
 * -EINVAL for a bad name, -EEXIST when that id exists. *out_id: malloc'd. */
int tg_history_tx_begin(const char *workspace, const char *state_dir, const char *name,
                        char **out_id);

/* Before a `--tx ID` run: 0 if the transaction exists and is open,
 * -ENOENT if there is none, -ESTALE if it was committed/rolled back/aborted. */
int tg_history_tx_check(const char *workspace, const char *state_dir, const char *tx_id);

/* After a `--tx ID` run has been committed or rolled back (and its txn freed:
 * the workspace lock must be released), record it as a member. txn_id may be
 * NULL when no journal was opened. abandon_all (`--tx-failure all` and the run
 * failed): undo every committed member too, newest first, and mark the
 * transaction aborted; a conflict keeps it open and returns -EEXIST. */
int tg_history_tx_record(const char *workspace, const char *state_dir, const char *tx_id,
                         const char *txn_id, bool rolled_back, bool abandon_all);

/* `txguard commit ID`: close it. -ESTALE when not open. */
int tg_history_tx_commit(const char *workspace, const char *state_dir, const char *tx_id);

/* `txguard rollback ID`: undo its committed members newest first (refusal
 * rule as for undo), then mark it rolled back. -ESTALE when not open. */
int tg_history_tx_rollback(const char *workspace, const char *state_dir, const char *tx_id,
                           bool force, struct tg_undo_result *r);

struct tg_tx_member {
	char *txn_id;
	bool rolled_back;           /* the run itself failed and was restored */
};
struct tg_tx_info {
	char *id;
	enum tg_tx_state state;
	uint64_t created_wall_ns;
	struct tg_tx_member *members; /* in run order */
	size_t nmembers;
};
void tg_tx_info_clear(struct tg_tx_info *t);
int tg_history_tx_load(const char *workspace, const char *state_dir, const char *tx_id,
                       struct tg_tx_info *out);
