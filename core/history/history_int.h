/* history_int.h — shared between the history module's own files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/set.h"
#include "history.h"


/* Every member of every multi-command transaction, as pairs
 * {txn id, tx id, txn id, tx id, ..., NULL}. */
int tg_history_tx_map(const char *workspace, const char *state_dir, char ***pairs);


/* rel or one of its ancestors is in s. */
bool tg_history_path_in(const struct tg_strset *s, const char *rel);

/* What newer runs touched: their paths, and the inodes those paths name now
 * (a file changed through one hard link changes its other names too). */
struct tg_touched {
	struct tg_strset paths;
	struct tg_idset inodes;         /* (dev, ino) of non-directories */
	struct tg_strset created;       /* paths they created (their whole trees) */
	int wsfd;                       /* the workspace, for lstat */
};
int tg_touched_add(struct tg_touched *t, const char *rel);
/* Add every path of run id: its post-state and what it created. */
int tg_touched_add_run(struct tg_touched *t, const char *sd, const char *id);
/* rel, a directory above it, or (when ino != 0) its inode was touched. */
bool tg_touched_covers(const struct tg_touched *t, const char *rel, uint64_t dev, uint64_t ino);
/* rel itself or (when ino != 0) its inode was touched: no ancestors (a
 * newer run's file inside a directory also touches that directory). */
bool tg_touched_exactly(const struct tg_touched *t, const char *rel, uint64_t dev, uint64_t ino);
void tg_touched_clear(struct tg_touched *t);

int tg_history_add_conflict(struct tg_undo_result *r, const char *id, const char *path);

/* Entries below the directories run id created (still the directories it
 * left: a directory at commit, not in changed) that changed after it
 * committed, are not in own (its recorded paths, checked against the
 * post-state) and that newer runs did not touch: conflicts, added to r. */
int tg_history_check_created(const char *sd, const char *id, const struct tg_touched *newer,
                             const struct tg_strset *own, const struct tg_strset *changed,
                             struct tg_undo_result *r);

/* From run id's post-state: the paths absent at commit, and those that were
 * directories. Either set may be NULL. */
int tg_history_post_kinds(const char *sd, const char *id, struct tg_strset *absent,
                          struct tg_strset *dirs);

/* show: push a CREATED change for every entry below the directory rel that
 * run created and that is still as the run left it (history/created.c). */
int tg_history_created_subtree(const struct tg_txinfo *run, const char *rel, struct tg_changes *out);
