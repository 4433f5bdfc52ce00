/* journal_gc.h — history pruning off the command's path.
 *
 * A run that leaves the history bound is retired, not removed: its dir
 * moves from <state_dir>/txn/ to <state_dir>/trash/ (one rename, O(1),
 * durable with one fsync of txn/ before the commit returns), and the trash
 * is emptied later where nobody waits for it (tg_journal_gc_spawn after
 * the report is out). A crash at any point leaves each run either whole in
 * txn/ (still history) or in trash/ (no longer referenced by anything), and
 * the next gc empties what a crashed one left.
 */
#pragma once

#include <stdbool.h>

/* Move txn/<id> to trash/<id>. Not yet durable: tg_journal_retire_sync. */
int tg_journal_retire(const char *state_dir, const char *id);
/* Make the retirements so far durable (fsync of txn/ and trash/). */
int tg_journal_retire_sync(const char *state_dir);
/* True when trash/ holds anything. */
bool tg_journal_has_trash(const char *state_dir);
/* Remove everything in trash/ (other gcs may run at the same time). */
int tg_journal_gc(const char *state_dir);
/* Run tg_journal_gc in a detached, niced grandchild with no open fds of
 * ours (a caller reading our stdout sees its end at once) and return at
 * once. 0 or -errno (the fork failed: the trash waits for the next one). */
int tg_journal_gc_spawn(const char *state_dir);
