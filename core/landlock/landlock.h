/* landlock.h — Landlock as a race-free second line behind the tracer.
 *
 * Called in the child after fork, before the seccomp filter and exec: the
 * restriction is inherited by the whole tree and no later syscall can lift
 * it. Writes are allowed only beneath spec->writable (and a few devices);
 * everything else stays readable and executable, except beneath
 * spec->deny_read and spec->hidden.
 *
 * Landlock only grants, so "readable except X" is built as grants on the
 * complement of X: from "/" down to each excluded path, every sibling at
 * each level gets its own rule. Consequences (documented in the README):
 *   - an entry created LATER in a directory on the way to an excluded path
 *     (e.g. a new file in $HOME when ~/.ssh is denied, or in "/") has no
 *     rule: it is neither readable nor writable by the tree;
 *   - likewise a writable tree that CONTAINS an excluded path (workspace =
 *     $HOME with ~/.ssh denied) loses the right to create entries in the
 *     directories on the way to it, its own top included: keep secrets and
 *     the state dir out of writable trees (or leave such entries out);
 *   - directory listings stay allowed everywhere (file names of a denied
 *     directory are visible, its contents are not);
 *   - a second name for a denied file (hard link, bind mount) is not denied;
 *   - the walk costs one rule per sibling along each path (tens to a few
 *     hundred rules; tg_landlock_build() reports the count).
 * Excluded paths are canonicalised first (symlinks resolved), so a denied
 * path reached through a symlinked ancestor is still denied.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tg_landlock_spec {
	/* Absolute paths where the tree may write (create, remove, rename,
	 * truncate, write). Missing paths are skipped. /dev/null, /dev/zero,
	 * /dev/full, /dev/tty, /dev/ptmx, /dev/pts and /dev/shm are always
	 * added; /tmp is not (list it if the policy allows it). */
	const char *const *writable;
	size_t nwritable;
	/* Absolute paths (files or directories) the tree may not read, execute
	 * or write, e.g. ~/.ssh, ~/.aws/credentials. */
	const char *const *deny_read;
	size_t ndeny_read;
	/* Same treatment as deny_read, for txguard's own state (journal and
	 * history directory): neither readable nor writable. Optional. */
	const char *const *hidden;
	size_t nhidden;
};

/* The Landlock ABI version the running kernel supports, or 0 when it has
 * none (not built in, not in lsm=, or txguard built without Landlock).
 * Probed once and cached. */
int tg_landlock_probe(void);

/* Build the ruleset for spec without enforcing it. Returns the ruleset fd
 * (>= 0) and the number of rules added in *nrules (may be NULL), or -errno:
 * -EOPNOTSUPP when the kernel has no Landlock, -EINVAL for a relative path. */
int tg_landlock_build(const struct tg_landlock_spec *spec, size_t *nrules);

/* The same, and (view not NULL) the supervisor's view of the ruleset: as
 * tg_landlock_view_new's, but with the places the build granted whole
 * rather than those an lstat finds (no second walk of the places, and a
 * place that could not be opened is known to get no rule). *view is NULL
 * on failure. */
struct tg_landlock_view;
int tg_landlock_build_viewed(const struct tg_landlock_spec *spec, size_t *nrules,
                             struct tg_landlock_view **view);

/* Let the caller write its own /proc/PID files (coredump_filter, comm) once
 * the ruleset is enforced: the tracer allows those to the command's main
 * process alone (a JVM sets its coredump_filter at start), and a rule on a
 * /proc/PID that does not exist yet cannot be made in advance. Called by
 * the child between fork and exec, before tg_landlock_enforce. 0 or -errno. */
int tg_landlock_grant_own_proc(int ruleset_fd);

/* Enforce a ruleset tg_landlock_build made (in this process or before a
 * fork): sets no_new_privs and restricts the calling thread and its future
 * children. Async-signal-safe: two syscalls. 0 or -errno. */
int tg_landlock_enforce(int ruleset_fd);

/* Build and enforce: sets no_new_privs (which the seccomp filter needs
 * anyway) and restricts the calling thread and its future children.
 * Returns 0 or -errno. Never weakens silently: -EOPNOTSUPP when Landlock is
 * unavailable, whatever the spec (the caller decides whether a spec without
 * deny_read may run on without it; one with deny_read must fail closed). */
int tg_landlock_restrict(const struct tg_landlock_spec *spec);

/* What a ruleset built from a spec refuses, seen from outside the domain,
 * so that a refusal can be reported (the kernel says nothing to the
 * supervisor unless audit is on, and stops nothing for ptrace). Built in
 * the supervisor from the same spec the child enforces. */
struct tg_landlock_view;

/* 0 or -errno (-ENOMEM, -EINVAL for a relative path). */
int tg_landlock_view_new(const struct tg_landlock_spec *spec, struct tg_landlock_view **out);
void tg_landlock_view_free(struct tg_landlock_view *v);

/* False when a write at `path` is certainly granted: path lies beneath a
 * writable place that existed when the ruleset was built and holds no
 * excluded path (or is such a place itself and `entry` is false, i.e. the
 * call writes the object, not its name in the parent). True when Landlock
 * may refuse it: only such calls are worth watching. */
bool tg_landlock_view_may_refuse(const struct tg_landlock_view *v, const char *path, bool entry);

/* The excluded path (deny_read or hidden, canonical) that `path` lies
 * beneath, or NULL. */
const char *tg_landlock_view_excluded(const struct tg_landlock_view *v, const char *path);

/* ---- fanotify: secret reads seen one by one (fanotify.c) ----
 *
 * Where the kernel allows fanotify permission events (CAP_SYS_ADMIN in the
 * initial user namespace, CONFIG_FANOTIFY_ACCESS_PERMISSIONS), a secret is
 * better enforced by an inode mark than by Landlock: the open waits in the
 * kernel for the supervisor's answer, so a refusal is seen and reported.
 * A tracee (TracerPid = the tracer) is refused; any other opener, txguard
 * itself included, is allowed at once. Files are marked with
 * FAN_OPEN_PERM|FAN_OPEN_EXEC_PERM; directories with those plus
 * FAN_EVENT_ON_CHILD|FAN_ONDIR, and so is each subdirectory (up to 1000 per
 * entry, 32 deep). A directory created inside a marked one after the
 * marks were set is not covered, nor is a file put in place of a marked one
 * (a rename over it: a new inode).
 */
struct tg_fanguard;

/* One refused open, as the guard's thread saw it. */
struct tg_fan_refusal {
	pid_t pid;                /* the thread that opened */
	const char *path;         /* the file, in txguard's view */
	bool exec;                /* FAN_OPEN_EXEC_PERM: an exec of it */
	int err;                  /* what the opener got: EPERM (EACCES where the kernel takes it) */
	const char *syscall;      /* from /proc/TID/syscall: "openat", "execve"... */
	int flags;                /* the open flags where a register holds them, else O_RDONLY */
};
/* Called from the guard's own thread, after the answer (the opener runs
 * on already): the callee locks what it shares with the main thread, and
 * must not open a marked file itself. */
typedef void (*tg_fanguard_hook)(void *ud, const struct tg_fan_refusal *f);

/* 1 when this process may use fanotify permission events, else 0. Probed
 * once (a group and a mark on "/" that no open triggers) and cached. */
int tg_fanguard_probe(void);

/* A group and its answering thread. tracer: the thread that traces the
 * tree (tracees show it as TracerPid). 0 or -errno (-EOPNOTSUPP where the
 * probe would say no: it makes the same check). The thread runs from here
 * on. */
int tg_fanguard_new(pid_t tracer, tg_fanguard_hook hook, void *ud, struct tg_fanguard **out);

/* Mark path (followed): a file, or a directory and its subdirectories. 0,
 * or -errno (-E2BIG past the bounds: nothing is marked; -ENOENT when it
 * does not exist). After another failure (or a tree that grew between
 * the count and the marks) some marks may stay, which is harmless: the
 * path is then still Landlock's, which refuses first. */
int tg_fanguard_mark(struct tg_fanguard *g, const char *path);

/* How many inodes are marked. */
size_t tg_fanguard_nmarks(const struct tg_fanguard *g);

/* Tell the thread to stop, and hand the group's teardown (the kernel's
 * wait to forget the marks: up to 20 ms) to a process of its own, the
 * unmarker, so that neither the caller nor our exit waits for it. The
 * thread closes our fd of the group and then the unmarker's gate; the
 * unmarker closes the last one (the kernel then allows every open still
 * waiting) and ends. The thread may still be calling the hook for an event
 * it had read: tg_fanguard_free joins it. Accepts NULL; once is enough. */
void tg_fanguard_stop(struct tg_fanguard *g);

/* The unmarker's pid once stopped, or 0 when there is none (one was still
 * running, or it could not start: the thread's close was then the last).
 * It is our child, with no exit signal: waitpid(pid, ..., __WALL) reaps
 * it, and it exits 0 when its close of the group succeeded. */
pid_t tg_fanguard_unmarker(const struct tg_fanguard *g);
/* Until the last unmarker holds no fd of ours but the group's (at most a
 * second; at once when it does, or ended, or none was started). It starts
 * with a copy of every fd we have: the state dir's lock among them (flock
 * is per open file, so its copy holds the lock too) and a pipe to our
 * caller. Called before we exit, so that neither outlives us: a 'txguard
 * undo' right after a run found the lock held ("a txguard run is in
 * progress"), about once in 60 runs on a loaded machine. */
void tg_fanguard_unmarker_wait(void);

/* Stop the thread (if not yet), wait for it, close what is left, free.
 * After it the hook is never called again. Accepts NULL. */
void tg_fanguard_free(struct tg_fanguard *g);
