/* journal.h — the on-disk journal of one transaction: the record codec and
 * the live journal (captures, commit, rollback), and what a run's dir keeps
 * afterwards (info, post-state, pre-images). It knows nothing of history:
 * which runs a state dir holds and what undoing them means is
 * history/history.h's, above it.
 *
 * A transaction lives in <state_dir>/txn/<id>/:
 *   info          key=value lines (id, workspace, command, times, state, counts),
 *                 replaced atomically (write + fsync + rename + fsync dir)
 *   log           append-only binary records, each CRC-checked, fdatasync'd
 *                 before the syscall it protects runs
 *   pre.tar.zst   pre-image content: one pax tar entry per zstd frame, so
 *                 `zstd -dc pre.tar.zst | tar -tv` lists it (end blocks at commit)
 *   stash/<seq>   keep-alive hard links (unlink, rename-over) and reflinks
 *   post          (committed) the post-state of every journaled path, for undo
 *   progress      (rollback) the last durable rollback checkpoint
 *
 * Paths in records are workspace-relative ("" = the workspace itself).
 * docs/journal.md explains the design; see txn.h for the op-level API.
 */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "base/op.h"
#include "changes.h"

enum tg_jrec_kind {
	TG_JREC_CREATED = 1,  /* path did not exist: undo removes it (path2: a
	                       * link's source name, which undo does not read) */
	TG_JREC_BORN,         /* the outcome of the call whose first record is `ref`:
	                       * the identity (dev, ino) of what its CREATED made
	                       * (0: nothing); flag VOID: the call failed, and its
	                       * records ref..tar_off describe nothing that happened */
	TG_JREC_CONTENT,      /* regular file's content + metadata before an in-place write */
	TG_JREC_META,         /* metadata (mode, owner, times, user xattrs) before a change */
	TG_JREC_STASHED,      /* path unlinked (or replaced): its inode kept at stash/<seq> */
	TG_JREC_RMDIR,        /* empty directory removed: metadata to recreate it */
	TG_JREC_RENAMED,      /* path moved to path2 (flags: RENAME_EXCHANGE) */
	TG_JREC_SAVED,        /* path removed, no hard link possible: the object is in
	                       * the tar (files) or the record (symlink target, fifo) */
	TG_JREC_KIND_COUNT    /* one past the last kind: the bound of tables by kind
	                       * (0 is no kind). docs/journal.md: adding a kind. */
};

#define TG_JREC_F_IMPLICIT 0x1u  /* META of a parent dir: not a change to report */
#define TG_JREC_F_REFLINK  0x2u  /* CONTENT kept as reflink at stash/<seq>, not in the tar */
#define TG_JREC_F_EXCHANGE 0x4u  /* RENAMED with RENAME_EXCHANGE */
#define TG_JREC_F_BORN     0x8u  /* STASHED or RENAMED object was created by this
                                  * run: its number is no original's */
#define TG_JREC_F_VOID     0x40u /* BORN: the call of records ref..tar_off failed */
#define TG_JREC_F_ALLOC    0x20u /* CONTENT/SAVED file had blocks for all its
                                  * bytes: the restore allocates them again */
#define TG_JREC_F_XALL     0x10u /* aux holds every xattr namespace journaled
                                  * (base/fs.h), not only user.* (older
                                  * records: a restore leaves the others be) */

/* Metadata of one filesystem object, as captured. */
struct tg_jmeta {
	uint32_t mode;               /* st_mode: type and permission bits */
	uint32_t uid, gid;
	uint32_t nlink;              /* links at capture (0 in older records) */
	uint64_t size;
	uint64_t dev, ino;           /* identity: restores act only on this object */
	uint64_t rdev;
	struct timespec atime, mtime;
};

struct tg_jrec {
	enum tg_jrec_kind kind;
	uint32_t flags;
	uint64_t seq;                /* 1, 2, ... in log order */
	uint64_t ref;                /* BORN: seq of the CREATED record */
	char *path;                  /* workspace-relative */
	char *path2;                 /* RENAMED destination */
	struct tg_jmeta meta;        /* object at path before the op (CREATED: none) */
	uint64_t tar_off;            /* CONTENT/SAVED: offset of its zstd frame in pre.tar.zst */
	char *aux;                   /* xattrs blob (u32 nlen,name,u32 vlen,value)*, or
	                              * symlink target for SAVED symlinks */
	size_t aux_len;
};
void tg_jrec_clear(struct tg_jrec *r);

/* Encode/decode one record (with its frame: magic, length, CRC32). decode
 * returns the bytes consumed, 0 at a clean end, -EBADMSG on a torn/corrupt
 * record (readers stop there: a torn tail is a record that never became
 * durable, so its syscall never ran). */
int tg_jrec_encode(const struct tg_jrec *r, char **buf, size_t *len);
ssize_t tg_jrec_decode(const char *buf, size_t len, struct tg_jrec *out);
uint32_t tg_crc32(uint32_t crc, const void *buf, size_t len);
const char *tg_jrec_kind_name(enum tg_jrec_kind k);

/* Restore tracing on stderr: 0 none, 1 each failed step, 2 every step.
 * Set once by the caller (the CLI: $TG_JOURNAL_DEBUG); read by the undo walk. */
extern int tg_journal_debug;

/* The default state directory for a workspace (absolute): outside the
 * workspace on the same filesystem (the stash hard-links into it), else
 * <workspace>/.txguard/state; docs/journal.md gives the rule. */
int tg_journal_default_state_dir(const char *workspace, char **out);
/* txguard's state home: $XDG_STATE_HOME/txguard or ~/.local/state/txguard;
 * *base_len (if given): the length of the variable's part. -ENOENT when
 * neither variable holds an absolute path. */
int tg_journal_state_home(char **out, size_t *base_len);

/* ---- one transaction's journal (used by txn.c) ---- */

/* Where a run's journal is in its life: the info file's state= line
 * (tg_jstate_name gives the string written there). */
enum tg_jstate {
	TG_JSTATE_OPEN,              /* the run goes on, or crashed: recovery restores it */
	TG_JSTATE_ROLLING_BACK,      /* a restore is under way, or was interrupted: it resumes */
	TG_JSTATE_ROLLED_BACK,       /* restored: the dir goes next */
	TG_JSTATE_COMMITTED,         /* its effects kept: in history */
	TG_JSTATE_UNDONE,            /* a committed run restored later: stays in history */
	TG_JSTATE_COUNT
};
const char *tg_jstate_name(enum tg_jstate s);

/* The info file's format: `version=` is written first and checked on
 * read; a file of another version is refused (-EPROTO), never guessed at.
 * A file without the line is of the first version. */
#define TG_JOURNAL_INFO_VERSION 1

/* What a run's info file says. */
struct tg_txinfo {
	char *id;
	char *workspace;
	char *command;
	enum tg_jstate state;
	uint64_t started_ns, ended_ns;  /* wall clock */
	size_t counts[TG_CHANGE_KIND_COUNT]; /* per tg_change_kind (changes.h) */
	uint64_t bytes_saved;        /* pre-image bytes (uncompressed) */
	uint64_t journal_bytes;      /* on-disk size of the transaction dir */
	char *tx;                    /* multi-command transaction it joined (--tx), or NULL */
	char *undoes;                /* an undo's own journal (`txguard undo`): the ids of
	                              * the runs it undid, space-separated; NULL for a run */
};
void tg_txinfo_clear(struct tg_txinfo *i);
/* Read <state_dir>/txn/<id>/info without opening the journal: -EPROTO for
 * an unknown version, -EBADMSG for a file without id, workspace or a known
 * state. */
int tg_journal_read_info(const char *state_dir, const char *id, struct tg_txinfo *out);
/* The same, with txnfd open on <state_dir>/txn. */
int tg_journal_read_info_at(int txnfd, const char *id, struct tg_txinfo *out);

struct tg_journal;

/* Create a new journal dir <state_dir>/txn/<id> for the workspace (absolute);
 * command and tx (a multi-command transaction joined, or NULL) go into info. */
int tg_journal_create(const char *state_dir, const char *workspace, const char *command,
                      const char *tx, struct tg_journal **out);
/* The same, but the dir is made at the first record (before it is
 * written, with the same durability): a run that records nothing touches
 * nothing on disk. tg_journal_on_disk() tells whether it was made. */
int tg_journal_create_deferred(const char *state_dir, const char *workspace, const char *command,
                               const char *tx, struct tg_journal **out);
bool tg_journal_on_disk(const struct tg_journal *j);
/* Open an existing transaction dir (recovery, history undo). */
int tg_journal_load(const char *state_dir, const char *id, struct tg_journal **out);
void tg_journal_free(struct tg_journal *j);
const char *tg_journal_id(const struct tg_journal *j);
const char *tg_journal_workspace(const struct tg_journal *j);

/* Captures, before the op runs (first touch is txn.c's business). rel is
 * workspace-relative. Each is durable when it returns 0. */
int tg_journal_created(struct tg_journal *j, const char *rel);
/* The same for a new name link() gives the object at `from` (path2 of the
 * record): a change made through it is that object's too (changes.c). */
int tg_journal_linked(struct tg_journal *j, const char *rel, const char *from);
int tg_journal_content(struct tg_journal *j, const char *rel, const struct stat *st);
int tg_journal_meta(struct tg_journal *j, const char *rel, const struct stat *st, bool implicit);
/* born: the object was created by this run (kept only because a restore
 * step needs it in place; it is not expected back at the end). dc: the
 * calling op's directory cache, which then opens rel's parent (or NULL). */
struct tg_fs_dircache;
int tg_journal_remove(struct tg_journal *j, struct tg_fs_dircache *dc, const char *rel, const struct stat *st,
                      bool born);
/* born: src was created by this run (TG_JREC_F_BORN). */
int tg_journal_renamed(struct tg_journal *j, const char *from, const char *to,
                       const struct stat *src, bool exchange, bool born);
/* When records reach the disk. FULL: each record is fdatasync'd before
 * the call it protects runs (survives a power cut). BATCH: at most one
 * fdatasync per 20 ms (survives a killed txguard; a power cut may lose the
 * last records, and with them the undo of the calls they protected). */
enum tg_sync_mode { TG_SYNC_FULL = 0, TG_SYNC_BATCH };
void tg_journal_set_sync(struct tg_journal *j, enum tg_sync_mode mode);
int tg_journal_sync(struct tg_journal *j);
/* Between hold and release, records are written but synced once, by
 * release (0 or -errno): all the captures one call needs, one fdatasync.
 * Nothing of the call runs before release returns, so that is enough. */
void tg_journal_hold(struct tg_journal *j);
int tg_journal_release(struct tg_journal *j);

/* What the last CREATED made (dev, ino), or ino 0 when it does not exist. */
int tg_journal_born(struct tg_journal *j, uint64_t ref, uint64_t dev, uint64_t ino);
/* The call whose records are first..last failed (a BORN flagged VOID). */
int tg_journal_void(struct tg_journal *j, uint64_t first, uint64_t last);
uint64_t tg_journal_last_seq(const struct tg_journal *j);
/* When the transaction began, by the filesystem's clock as much as the wall
 * clock's (the earlier of both): an inode or name with a ctime at or after it
 * was made during the transaction. */
uint64_t tg_journal_started_ns(const struct tg_journal *j);
uint64_t tg_journal_bytes_saved(const struct tg_journal *j);
uint64_t tg_journal_disk_bytes(struct tg_journal *j);

/* lstat a workspace-relative path without following any symlink (openat walk).
 * 0, -ENOENT, or -errno. */
int tg_journal_lstat(const struct tg_journal *j, const char *rel, struct stat *st);
/* The same for sorted runs of paths in a tree nothing else changes: the
 * previous path's parent stays open in c (base/fs.h). */
struct tg_fs_dircache;
struct statx;
int tg_journal_lstat_cached(const struct tg_journal *j, struct tg_fs_dircache *c, const char *rel,
                            struct stat *st);
/* The same through statx: st, and sx with the birth time where the
 * filesystem keeps one. */
int tg_journal_lstatx_cached(const struct tg_journal *j, struct tg_fs_dircache *c, const char *rel,
                             struct stat *st, struct statx *sx);
/* An O_PATH fd on rel's parent directory in the workspace (no symlink
 * followed on the way), *leaf = rel's last component. fd or -errno. */
int tg_journal_parent(const struct tg_journal *j, const char *rel, const char **leaf);

/* Iterate the records in log order. cb returns 0 to go on, >0 to stop, <0 error. */
int tg_journal_foreach(const struct tg_journal *j, int (*cb)(void *ud, const struct tg_jrec *r), void *ud);

/* Undo every record, newest first; idempotent; resumes from the last
 * checkpoint. State goes open → rolling-back → rolled-back (a committed
 * run: committed → rolling-back → undone). */
int tg_journal_rollback(struct tg_journal *j, void (*progress)(void *ud, size_t done, size_t total), void *ud);
/* The same for a committed run after newer runs were undone: newer holds
 * their ids (NULL-terminated, oldest first; NULL for none), whose restores'
 * remaps say what became of the objects this run's records name. The
 * caller (history) knows which runs those are; the journal does not. */
int tg_journal_rollback_after(struct tg_journal *j, const char *const *newer,
                              void (*progress)(void *ud, size_t done, size_t total), void *ud);
/* Write the post-state, finish the tar, mark committed. counts per
 * tg_change_kind (changes.h) for the history listing. */
int tg_journal_commit(struct tg_journal *j, const size_t counts[TG_CHANGE_KIND_COUNT]);
/* An undo's own journal: ids (space-separated) are the runs it undoes
 * (written into info at once when the journal is on disk). */
int tg_journal_set_undoes(struct tg_journal *j, const char *ids);
/* A run undone and then put back by a redo: committed again, its
 * restore's progress and remap dropped (a later undo starts afresh). */
int tg_journal_recommit(const char *state_dir, const char *id);

/* The restore with every option: tg_journal_rollback_after is it with
 * newer and progress only. */
struct tg_keep {                 /* before removing object (dev, ino), link it */
	uint64_t dev, ino;           /* at <state>/txn/<run>/stash/<seq>: a redo */
	const char *run;             /* gives back the stash links the undo of */
	uint64_t seq;                /* run dropped, so that run can be undone again */
};
struct tg_restore_opts {
	const char *const *newer;    /* as tg_journal_rollback_after */
	/* Called before each change the restore makes to the workspace, with
	 * the change as a trapped call would be (absolute paths, pid = ours):
	 * an undo journals itself this way (txn.h: tg_txn_before). A negative
	 * return fails that step, which then does not run. */
	int (*before)(void *ud, const struct tg_op *op);
	void *ud;
	const struct tg_keep *keep;
	size_t nkeep;
	void (*progress)(void *ud, size_t done, size_t total);
	void *progress_ud;
};
int tg_journal_restore(struct tg_journal *j, const struct tg_restore_opts *o);
/* Mark the state (rewrites the info file). */
int tg_journal_set_state(struct tg_journal *j, enum tg_jstate state);
enum tg_jstate tg_journal_state(const struct tg_journal *j);

/* The post-state written at commit, path by path (sorted), with whether
 * the path changed outside since (type, mode, size, mtime, symlink target,
 * or presence differ). cb returns 0 to go on, >0 to stop, <0 error. */
int tg_journal_post_check(const struct tg_journal *j,
                          int (*cb)(void *ud, const char *rel, bool changed), void *ud);
/* Write a CONTENT/SAVED record's pre-image bytes into fd (a regular file,
 * e.g. a tmpfile for diff). Sparse holes are kept. */
int tg_journal_preimage(const char *state_dir, const char *id, const struct tg_jrec *r, int fd);

/* Remove transaction dirs that a crash left half-created (no info file, no
 * records). Call under the workspace lock. */
int tg_journal_sweep(const char *state_dir);
/* The directory of a state dir's runs (<state_dir>/txn), for listing:
 * 0 with *out NULL when there is none yet, or -errno. */
int tg_journal_runs_dir(const char *state_dir, DIR **out);
/* Remove a transaction dir (after rollback, or pruning). */
int tg_journal_remove_dir(const char *state_dir, const char *id);

/* ---- "nothing to recover", kept (post.c) ----
 *
 * Knowing that no run needs recovery took reading every run's info at
 * every start: 250 syscalls with the default 50 runs of history.
 * <state_dir>/txn/.clean says it instead, for as long as it holds:
 *   - it is made when no run is open, rolling back or rolled back, and
 *     every run dir has its info (after a commit or a rollback, or a
 *     recovery that left nothing to do), and holds txn/'s inode, link
 *     count and mtime as they were once it was made;
 *   - it counts only while txn/ still has them: a run dir made, removed
 *     or retired since (by any txguard, of any version) moves them;
 *   - a new run's dir is made only after it is removed, and the fsync of
 *     txn/ that makes the dir durable makes its removal durable too;
 *   - a restore (rollback, undo, redo) removes it, durably, before its
 *     run's state says "rolling back".
 * A start takes it; `txguard recover` does not (txn.c, recover_locked).
 * Call all three under the workspace lock. */
bool tg_journal_clean(const char *state_dir);
/*
 * The mark also keeps what a commit's prune needs of the history, so that
 * a commit need not read every run's info again (about 150 syscalls with
 * the default 50 runs; one per run however many a bound lets in): every
 * run dir of txn/ with its id, state, started_ns and journal_bytes, newest
 * first. It is as good as the mark: a run dir made, removed or retired
 * voids both, and the one change of state that does not move txn/, a
 * restore's, removes the mark first. tg_journal_clean_mark writes it when
 * runs is given. tg_journal_clean_runs gives -1 for no valid mark, 0 for
 * a mark without an index, 1 for one with lines after the first, kept
 * unread in runs->raw: a start that changes nothing never parses them.
 * tg_runs_parse reads them (-EBADMSG for anything but an index, as a mark
 * cut short: it is never synced); a mark written from runs still unparsed
 * holds them as they were.
 */
struct tg_runs {
	struct tg_txinfo *v; /* id, state, started_ns and journal_bytes; the rest empty */
	size_t n;
	char *raw;           /* the index as the mark had it, until tg_runs_parse */
};
int tg_journal_clean_runs(const char *state_dir, struct tg_runs *runs);
void tg_journal_clean_mark(const char *state_dir, const struct tg_runs *runs);
int tg_runs_parse(struct tg_runs *r);
/* Add a copy of what the mark keeps of i, in the history's order. */
int tg_runs_insert(struct tg_runs *r, const struct tg_txinfo *i);
void tg_runs_clear(struct tg_runs *r);
/* The history's order, newest first: by started_ns, then by id. */
bool tg_txinfo_newer(const struct tg_txinfo *a, const struct tg_txinfo *b);
/* 0 when there is none (any more), or -errno: then nothing may go on. */
int tg_journal_clean_drop(const char *state_dir, bool sync);

/* ---- history pruning off the command's path (gc.c) ----
 *
 * A run that leaves the history bound is retired, not removed: its dir
 * moves from <state_dir>/txn/ to <state_dir>/trash/ (one rename, O(1),
 * durable with one fsync of txn/ before the commit returns), and the trash
 * is emptied later where nobody waits for it (tg_journal_gc_spawn after
 * the report is out), or right then when it is only a few names
 * (tg_journal_gc_upto). A crash at any point leaves each run either whole in
 * txn/ (still history) or in trash/ (no longer referenced by anything), and
 * the next gc empties what a crashed one left.
 */
/* Move txn/<id> to trash/<id>. Not yet durable: tg_journal_retire_sync. */
int tg_journal_retire(const char *state_dir, const char *id);
/* Make the retirements so far durable (fsync of txn/ and trash/). */
int tg_journal_retire_sync(const char *state_dir);
/* True when trash/ holds anything. */
bool tg_journal_has_trash(const char *state_dir);
/* Remove everything in trash/ (other gcs may run at the same time). */
int tg_journal_gc(const char *state_dir);
/* tg_journal_gc here and now, but of at most max names (files and dirs):
 * 0 when the trash is empty, 1 when more is left (part of a run may be
 * gone: the trash holds nothing anyone reads), or -errno. A small run's
 * dir is a handful of names, cheaper to remove than a gc to start. */
int tg_journal_gc_upto(const char *state_dir, size_t max);
/* Run tg_journal_gc in a detached, niced process with no open fds of ours
 * (a caller reading our stdout sees its end at once) and return at once.
 * With an executable set (tg_journal_gc_set_exe), that process is a new
 * exec of it, with argv { TG_GC_ARGV0, state_dir }, left to init (or a
 * subreaper) when we exit: the caller waits for one vfork and exec. Without
 * one (a library user, a test), a forked grandchild, whose two forks copy
 * our page tables: 2 to 4 ms of a run that pruned. 0 or -errno (nothing
 * started: the trash waits for the next one). */
int tg_journal_gc_spawn(const char *state_dir);
#define TG_GC_ARGV0 "txguard-gc"
void tg_journal_gc_set_exe(const char *exe);
/* The exec'd process's whole work: niced, tg_journal_gc. Exit status. */
int tg_journal_gc_main(const char *state_dir);

/* ---- previews (undo --dry-run, recover --dry-run) ---- */

enum tg_step {
	TG_STEP_REMOVE,      /* path: what the run created goes */
	TG_STEP_REWRITE,     /* path: its bytes and metadata as before */
	TG_STEP_META,        /* path: owner, mode, xattrs, times */
	TG_STEP_RELINK,      /* path: the removed object comes back */
	TG_STEP_MKDIR,       /* path: a removed directory comes back */
	TG_STEP_MOVE_BACK,   /* path (where it is now) back to path2 */
	TG_STEP_RECREATE,    /* path: a removed object comes back (a copy) */
};
const char *tg_step_name(enum tg_step s);
/* The steps a restore of transaction id would take, in its order (newest
 * record first), skipping what an interrupted restore already did. Nothing
 * is changed. */
int tg_journal_preview(const char *state_dir, const char *id,
                       int (*cb)(void *ud, enum tg_step s, const char *path, const char *path2), void *ud);
/* Paths that restoring interrupted transaction id would overwrite or
 * remove although they changed after the journal's last write (plus a
 * margin): edits made after the crash. Each path once. */
int tg_journal_edited_after(const char *state_dir, const char *id, int (*cb)(void *ud, const char *path), void *ud);
/* Before a recovery overwrites them: copy every object the restore of
 * interrupted transaction id would overwrite or remove and that changed
 * after the journal's last write (files, symlinks, special files; inside a
 * created directory, each entry that changed) to STATE_DIR/aside/ID/PATH,
 * with its mode, times and owner. Those are the crashed run's last writes
 * or edits made within the margin above, which no rule can tell apart: so
 * nothing is lost either way. *kept = how many; cb (may be NULL) gets each
 * path. Idempotent (a copy already there is kept). 0 or -errno. */
int tg_journal_keep_aside(const char *state_dir, const char *id, size_t *kept,
                          int (*cb)(void *ud, const char *path), void *ud);
