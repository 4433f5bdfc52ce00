/* txn.h — one transaction on a workspace: the glue between a decoded
 * operation and the journal (journal.h), plus commit, rollback and recovery.
 *
 * The journal knows paths and inodes; txn.c maps a struct tg_op (what the
 * syscall is about to do) onto journal captures (what must be saved first).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "journal/journal.h"
#include "base/op.h"

struct tg_txn;

enum tg_lock_mode {
	TG_LOCK_WAIT = 0,    /* a second txguard on the workspace waits */
	TG_LOCK_FAIL,        /* ... or fails at once with -EBUSY */
};

struct tg_txn_opts {
	const char *workspace;      /* absolute, normalised, must exist */
	const char *state_dir;      /* NULL = default (see tg_journal_default_state_dir) */
	enum tg_lock_mode lock;
	const char *command;        /* for history: the command line as text */
	const char *join_id;        /* multi-command transaction to join, or NULL */
	/* `txguard undo` journaling itself: the ids (space-separated) of the
	 * runs it is about to undo, or NULL for a run. Its journal is on disk
	 * (and says so) before any of those runs is touched: an interrupted
	 * undo is then reverted as a whole by recovery (tg_run_revert_undo). */
	const char *undoes;
	uint64_t history_max_runs;  /* 0 = default (50) */
	uint64_t history_max_bytes; /* 0 = default (1 GiB) */
	/* When journal records reach the disk (the CLI: --journal-sync, else
	 * $TXGUARD_JOURNAL_SYNC):
	 * AUTO (0): batched where the filesystem orders them for us (the state
	 * dir on the workspace's ext4 with ordered data, or tmpfs), else FULL;
	 * FULL: fdatasync before every journaled call; BATCH: at most every
	 * 20 ms (safe against a killed txguard, not a power cut). */
	enum tg_sync_choice { TG_SYNC_CHOICE_AUTO = 0, TG_SYNC_CHOICE_FULL, TG_SYNC_CHOICE_BATCH } sync;
};


/* Locks the workspace, recovers an interrupted transaction left by a crashed
 * txguard (restoring it; -ESTALE when that would overwrite paths changed
 * after the crash: `txguard recover --force`), and opens a new journal.
 * 0 or -errno. */
int tg_txn_open(struct tg_txn **out, const struct tg_txn_opts *opts);

/* Called at a trapped syscall that the policy allowed and that writes (op->writes),
 * BEFORE it runs. Saves what is needed to undo it, durably (fsync), first
 * touch only. Paths outside the workspace are ignored (returns 0). Returns
 * 0, or -errno: then the syscall must be failed with that errno, never run
 * unjournaled. */
int tg_txn_before(struct tg_txn *t, const struct tg_op *op);

/* True when the call tg_txn_before() just journaled for thread tid creates
 * a name whose object the journal must identify: the caller should hand
 * the call's result to tg_txn_after() (a syscall-exit stop). Other threads
 * may act on the name before tid makes its next call, so the name alone
 * cannot tell what the call made. */
bool tg_txn_awaits(const struct tg_txn *t, pid_t tid);

/* True when op must not be journaled yet: another thread's call on one of
 * its names (or a name above or below one) was journaled and may still be
 * running. The caller keeps op's thread at its stop and asks again after
 * the next event (that call's result); after TG_WAIT_NS (50 ms) or once
 * that thread is gone it is false. op's thread's own earlier calls are
 * taken to have returned (it is at a new stop). */
bool tg_txn_must_wait(struct tg_txn *t, const struct tg_op *op);

/* Process tid has exited (it may be a zombie, not yet reaped): none of
 * its calls is running, and no call waits for them any more. */
void tg_txn_gone(struct tg_txn *t, pid_t tid);

/* Thread tid is in a call past its last trapped one (it made a task: the
 * fork event stops it in the clone): that call has returned, and no call
 * waits for it any more. A parent that chmods a file and then waits for
 * the child that writes it holds nobody back. */
void tg_txn_returned(struct tg_txn *t, pid_t tid);

/* Instead of the result: tid is the only task of the tree (tg_op.alone),
 * so until it makes another call nothing but the call tg_txn_awaits()
 * named acts on that name, and the name will tell what the call made.
 * It is read at tid's next call, at its end, or at tg_txn_company(),
 * whichever comes first: no syscall-exit stop is needed. */
void tg_txn_alone(struct tg_txn *t, pid_t tid);

/* Another task joined the tree, before it or the first task runs on: the
 * creations tg_txn_alone() left to their names are settled now. 0 or
 * -errno (a record could not be written). */
int tg_txn_company(struct tg_txn *t);

/* The result of tid's call that tg_txn_awaits() named, as the tracee sees
 * it (an fd, 0, or -errno), at the call's exit: the journal learns what
 * the call made from the fd it returned (an open) or its name at once (the
 * other creations), or that it made nothing. 0 or -errno (a record could
 * not be written: the creation is then settled later, by name). */
int tg_txn_after(struct tg_txn *t, pid_t tid, long rval);

/* Before the command starts: every fd the command would inherit (not
 * close-on-exec, above 2: the standard streams are the caller's own output,
 * kept as they are) that is open for writing on a regular file of the
 * workspace. Its content is captured first, as at a write-open, so a
 * rollback undoes writes through it too. cb(ud, fd, rel, err) is told of
 * each: err 0 captured, -EBADF the file has no name in the workspace any
 * more (nothing to capture by: the caller should refuse the run), other
 * -errno a failed capture; cb's non-zero return stops. skip: fds txguard
 * uses itself (report, log). */
int tg_txn_inherited(struct tg_txn *t, const int *skip, size_t nskip,
                     int (*cb)(void *ud, int fd, const char *rel, int err), void *ud);

/* True when path (absolute) is txguard's own state: the tracee must not touch it. */
bool tg_txn_is_private(const struct tg_txn *t, const char *path);

/* The command is over: nothing runs any more, so a pending creation whose
 * name is empty failed. Call before the final tg_txn_changes (commit and
 * rollback imply it). */
void tg_txn_end(struct tg_txn *t);

/* What changed so far, computed from the journal and the current tree. */
int tg_txn_changes(struct tg_txn *t, struct tg_changes *out);

/* An undo: the runs it did undo in the end (an undo may stop part-way). */
int tg_txn_set_undoes(struct tg_txn *t, const char *ids);

/* Commit: the journal becomes history (bounded). 0 or -errno. */
int tg_txn_commit(struct tg_txn *t);
/* Free the runs the last commit pruned from the history: a few names at
 * once, more in a detached background process. Call it once the caller has
 * nothing left to do for whoever waits on it (the report is out). No-op
 * when nothing was pruned. */
void tg_txn_collect(struct tg_txn *t);
/* Restore the workspace to its state at tg_txn_open(). Idempotent.
 * progress (may be NULL) is called with done/total records. 0 or -errno. */
int tg_txn_rollback(struct tg_txn *t, void (*progress)(void *ud, size_t done, size_t total), void *ud);
/* Unlock and free; a transaction neither committed nor rolled back stays on
 * disk as "interrupted" and is restored by the next open or tg_recover(). */
void tg_txn_free(struct tg_txn *t);

const char *tg_txn_id(const struct tg_txn *t);
const char *tg_txn_state_dir(const struct tg_txn *t);


/* A recovery of interrupted transactions: what it may do, what it did. */
struct tg_recovery {
	bool force;      /* in: restore over paths edited after the crash */
	/* in, may be NULL: each path copied to STATE_DIR/aside/ID first */
	int (*on_kept)(void *ud, const char *id, const char *path);
	void *ud;
	int restored;    /* out: transactions restored */
	size_t kept;     /* out: paths kept aside (tg_journal_keep_aside) */
};

/* `txguard recover`: restore any interrupted transaction of the workspace.
 * 0 or -errno. -ESTALE: a restore would overwrite paths changed after the
 * crash (tg_journal_edited_after names them); r->force restores anyway.
 * Paths changed after the journal's last write but within the margin are
 * copied aside before the restore (with force: every such path).
 * tg_recover is tg_recover_ex without force; *recovered = r.restored. */
int tg_recover(const char *workspace, const char *state_dir, int *recovered);
int tg_recover_ex(const char *workspace, const char *state_dir, struct tg_recovery *r);
/* The state dir tg_recover would use (malloc'd). */
int tg_recover_state_dir(const char *workspace, const char *state_dir, char **out);
/* What tg_txn_open's automatic recovery did (the caller says so in one
 * line). */
const struct tg_recovery *tg_txn_recovery(const struct tg_txn *t);
