/* util.h — small helpers shared by every core module and by cmd/.
 *
 * core/ never exits the process: functions return 0 / a count on success and
 * -errno on failure, and keep errno intact across their own cleanup.
 * Scope-bound cleanup follows bubblewrap: every _cleanup_ variable starts
 * initialised, ownership is handed on with steal_pointer()/steal_fd().
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define TG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TG_UNUSED __attribute__((unused))
#define TG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TG_NORETURN __attribute__((noreturn))
#define TG_MUST_CHECK __attribute__((warn_unused_result))

static inline void tg_freep(void *p)
{
	int saved = errno;
	free(*(void **)p);
	errno = saved;
}

static inline void tg_closep(int *fd)
{
	int saved = errno;
	if (*fd >= 0)
		close(*fd);
	errno = saved;
}

static inline void tg_fclosep(FILE **f)
{
	int saved = errno;
	if (*f)
		fclose(*f);
	errno = saved;
}

void tg_strv_free(char **strv);
static inline void tg_strv_freep(char ***p)
{
	int saved = errno;
	tg_strv_free(*p);
	errno = saved;
}

#define _cleanup_free_ __attribute__((cleanup(tg_freep)))
#define _cleanup_close_ __attribute__((cleanup(tg_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(tg_fclosep)))
#define _cleanup_strv_ __attribute__((cleanup(tg_strv_freep)))

static inline void *tg_steal_pointer(void *pp)
{
	void **p = pp;
	void *v = *p;
	*p = NULL;
	return v;
}
#define steal_pointer(pp) tg_steal_pointer(pp)

static inline int steal_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}

/* Allocation helpers: return NULL with errno=ENOMEM on failure (no abort). */
char *tg_strdup(const char *s);
char *tg_strndup(const char *s, size_t n);
char *tg_asprintf(const char *fmt, ...) TG_PRINTF(1, 2);
char **tg_strv_dup(char *const *strv);
size_t tg_strv_len(char *const *strv);
/* The first n strings of strv (NULL-terminated) as one block: the pointer
 * array and the strings after it, released by one free(). An exec's argv
 * of 100,000 arguments costs one allocation, not 100,001. */
char **tg_strv_pack(char *const *strv, size_t n);
/* The same from n strings laid end to end in buf, each with its NUL
 * (a /proc/PID/cmdline, an argv read from a tracee). */
char **tg_strv_pack_nul(const char *buf, size_t len, size_t n);
/* Append a copy of s to a NULL-terminated vector; returns 0 or -ENOMEM. */
int tg_strv_push(char ***strv, const char *s);
/* Room for element n of the array v of *cap elements of elem bytes: v
 * itself while n < *cap, else v reallocated to twice *cap (first when
 * *cap is 0), *cap updated. NULL when out of memory: v and *cap are then
 * as they were. The caller stores the result back:
 *     struct x *nv = tg_grow(a->v, a->n, &a->cap, sizeof(*nv), 64);
 *     if (!nv) return -ENOMEM;
 *     a->v = nv; a->v[a->n++] = x; */
void *tg_grow(void *v, size_t n, size_t *cap, size_t elem, size_t first);
/* argv as one line a POSIX shell reads back into the same words: plain
 * words as they are, others in single quotes. NULL on ENOMEM. Linear in
 * the total length (a 100,000-word argv is one pass). */
char *tg_shell_join(char *const *argv);
/* The same, for people, of argv's argc words: past about max bytes the
 * words that do not fit are left out and counted (" ... (N more
 * arguments)"), and not touched: a long argv's pointer pages cost a fault
 * each on first touch. */
char *tg_shell_join_max(char *const *argv, size_t argc, size_t max);

/* Full-length I/O, retrying EINTR and short transfers. Return 0 or -errno. */
int tg_write_all(int fd, const void *buf, size_t len);
/* Read a whole small file (e.g. /proc/PID/cmdline) into a malloc'd buffer. */
int tg_read_file(const char *path, char **out, size_t *len, size_t max);
/* The same for path in dirfd, opened with O_RDONLY|O_CLOEXEC|flags. */
int tg_read_file_at(int dirfd, const char *path, int flags, char **out, size_t *len, size_t max);

/* The cgroup path of a process from the text of /proc/PID/cgroup: the
 * unified (v2) hierarchy's "0::PATH" line; on a v1-only machine, which has
 * none, the "N:name=systemd:PATH" line (the hierarchy systemd places
 * services in). Copies it into out; returns 0, or -ENOENT when the text
 * has neither line, names one twice (a cgroup name holding a newline
 * could forge a line) or the path does not fit: callers then leave the
 * path unknown, which no rule matches. */
int tg_cgroup_from_text(const char *text, char *out, size_t size);
/* The same, read from /proc/PID/cgroup. */
int tg_read_proc_cgroup(pid_t pid, char *out, size_t size);
/* A numeric field of /proc/PID/status ("Tgid", "TracerPid"; "Uid": the
 * real one), or -errno (-ENOENT: no such field). */
long tg_proc_status_num(pid_t pid, const char *field);
/* The thread group (process) of thread tid; -errno. */
pid_t tg_proc_tgid(pid_t tid);

/* The program name, real uid and cgroup of pid (op.h): what the process
 * rules match an outside target by. Unreadable fields stay empty (uid -1). */
struct tg_proc_victim;
void tg_proc_victim_read(pid_t pid, struct tg_proc_victim *v);

/* FNV-1a of a NUL-terminated string: hash tables, stable names. */
uint64_t tg_hash_str(const char *s);

/* Monotonic clock in nanoseconds, and wall clock as an RFC 3339 UTC string
 * with milliseconds ("2026-11-30T16:30:00.123Z") written into buf[32]. */
uint64_t tg_now_ns(void);
void tg_rfc3339(char buf[static 32], uint64_t wall_ns);
uint64_t tg_wall_ns(void);

/* gmtime_r's fields (all of them) for seconds since the epoch, without
 * glibc's gmtime_r: that reads /etc/localtime at its first call (tzset),
 * eight syscalls of every start for a zone that UTC does not use. */
void tg_utc(int64_t secs, struct tm *tm);

/* Parse "250ms", "10s", "2m", "1h", "1.5s" (bare number = seconds) into
 * milliseconds. Return 0 or -EINVAL. */
int tg_parse_duration_ms(const char *s, uint64_t *out_ms);
/* Parse "512K", "64M", "1G" (bare = bytes) into bytes. 0 or -EINVAL. */
int tg_parse_size(const char *s, uint64_t *out);

/* errno <-> name ("EPERM"), for policies and reports. -1 / NULL when unknown. */
int tg_errno_from_name(const char *name);
const char *tg_errno_name(int err);
