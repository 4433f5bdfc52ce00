/* path.h — paths as a tracee sees them, and workspace containment.
 *
 * Pure string functions (normalise, join, is-under) are separate from the
 * /proc-based resolution so that the former can be unit tested exhaustively.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Lexically normalise an absolute path: collapse "//", drop ".", resolve ".."
 * (never above "/"), drop a trailing "/". Returns a malloc'd string or NULL
 * (errno set). "" and relative input give NULL/EINVAL. */
char *tg_path_normalize(const char *abs);

/* Join base (absolute) and rel; if rel is absolute, base is ignored. Result
 * normalised. NULL on error. */
char *tg_path_join(const char *base, const char *rel);

/* Names the kernel makes up for an open file without one ("/memfd:x
 * (deleted)", "/ws/tool (deleted)"), as /proc/PID/fd/N and /proc/PID/exe
 * show them: no lookup finds them, yet an exec through the fd runs. */
bool tg_path_is_kernel_name(const char *path);

/* True when path equals dir or lies beneath it (both normalised, absolute). */
bool tg_path_is_under(const char *path, const char *dir);
/* The part of path beneath dir ("" when equal; no leading "/"), pointing
 * into path, or NULL when path is not under dir (tg_path_is_under). */
const char *tg_path_below(const char *path, const char *dir);

/* Expand a leading "~" or "$HOME" with home; other text unchanged. */
char *tg_path_expand_home(const char *p, const char *home);

/* Resolve `path` as thread `pid` would see it for a syscall relative to
 * `dirfd` (AT_FDCWD, or an fd number in the tracee): the tracee's root and
 * cwd (/proc/PID/root, /proc/PID/cwd) or /proc/PID/fd/DIRFD are the base.
 * Every component but the last is resolved through symlinks (as the kernel
 * does); the last one only when `follow`. "/proc/self" and "/proc/thread-self"
 * are mapped to the tracee. An empty path with AT_EMPTY_PATH names dirfd
 * itself. Returns 0 with *out malloc'd, or -errno. A path whose parent does
 * not exist is still resolved as far as it goes and returned lexically. */
int tg_path_resolve(pid_t pid, int dirfd, const char *path, bool follow, bool empty_path, char **out);

/* Our own absolute path, when it is its own resolution (as tg_path_resolve
 * would give it, following the last component): plainly named (no ".",
 * "..", empty component, not under /proc) and no symlink on the way. 1:
 * it is, with *fd an O_PATH fd of what it names, or -1 when a component is
 * missing; 0: the walk must tell (a symlink, another name, any error). One
 * openat2(2) where resolving and then opening it takes two. */
int tg_path_open_plain(const char *abs, int *fd);

/* True when thread pid's root cannot be named in our view (another mount
 * namespace's root, after a setns): tg_path_resolve then fails with EACCES
 * rather than judge a path in the tracee's own view. */
bool tg_path_root_unnamed(pid_t pid);

/* True when thread pid's root and mount namespace are ours, so that its
 * paths are ours too: one statx of /proc/PID/root, which every resolution
 * for a tracee otherwise makes itself. */
bool tg_path_shares_root(pid_t pid);

/* The tracer's word, until it says otherwise (0): thread pid's root and
 * mount namespace are ours, as tg_path_shares_root() found them since the
 * last call that could change them (core/trace/tracer.c, "root epochs"),
 * so the resolutions for pid skip that statx. Per thread of txguard. */
void tg_path_vouch_root(pid_t pid);

/* The tracer's word for one stop (pid 0 ends it): thread pid's cwd is cwd
 * (core/trace/tracer.c, "cwd epochs"), so its relative names skip the
 * readlink of /proc/PID/cwd. With cwd NULL the tracer does not know it
 * and asks to: the first resolution that reads it keeps a copy for
 * tg_path_take_cwd(). Not copied. Per thread of txguard. */
void tg_path_vouch_cwd(pid_t pid, const char *cwd);

/* What this stop read of the vouched thread's cwd (free()), or NULL. */
char *tg_path_take_cwd(void);

/* While on, the directory a resolution without follow opened to prove
 * its path (every component but the last, no symlink) stays open for the
 * journal, which looks up the same call's name through it: one openat2
 * for both (the tracer turns it on for a stop; off closes what is left). */
void tg_path_keep_parent(bool on);

/* A followed name is proved the same way, through its directory and an
 * lstat of its last component, when it lies in a directory below dir (the
 * workspace: the journal looks it up there too). Not copied. */
void tg_path_keep_under(const char *dir);

/* The kept directory, if it is path's first len bytes (its directory): an
 * O_PATH fd, now the caller's to close. Else -1. With the lstat of path's
 * last component, when that is the name kept: *leaf_err 0 and *leaf_st,
 * or -ENOENT; else 1. */
struct stat;
int tg_path_take_parent(const char *path, size_t len, int *leaf_err, struct stat *leaf_st);

/* While on, every symlink a resolution follows (not /proc's magic links)
 * is noted, by its own absolute path in our view: the names a call goes
 * through besides the ones it acts on, which another task may change
 * before the call runs (the tracer notes them for a stop; on or off drops
 * what was noted and not taken). */
void tg_path_note_links(bool on);
/* What was noted since, as a NULL-terminated vector (tg_strv_free), now
 * the caller's; NULL when no symlink was followed. */
char **tg_path_take_links(void);

/* Tests only: true makes tg_path_resolve always walk component by component
 * (its fast path proves "no symlink on the way" with one openat2 call), so
 * that a test can compare the two answers. */
extern bool tg_path_fast_disabled;

/* The path of a tracee's open file descriptor (readlink /proc/PID/fd/N). */
int tg_path_of_fd(pid_t pid, int fd, char **out);
