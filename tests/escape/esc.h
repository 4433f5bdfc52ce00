/* esc.h — shared helpers for the escape battery cases.
 *
 * Convention (issue 6): a case exits 0 when its attack WORKED (breach) and
 * non-zero when it was held. The runner (run-battery.sh) does not trust the
 * exit code alone: it also fingerprints the outside directory and checks the
 * listener's log, so a case that lies or dies still cannot hide a breach.
 *
 * Every case reads its targets from the environment set by the runner:
 *   ESC_OUT   a directory outside the workspace (read-only by policy) holding
 *             `victim` ("ORIGINAL\n"), `victim2`, `gitdir/config`
 *   ESC_WS    the workspace (also the cwd)
 *   ESC_BIN   where esc-denied / esc-tool / esc-allowd live
 *   ESC_SOCK  a listening unix socket at a denied path
 *   ESC_DSOCK a unix datagram socket at a denied path
 *   ESC_ADDR, ESC_PORT   a denied IPv4 address never routable (10.255.255.1:9)
 *   ESC_LADDR the denied loopback address where the runner's witness listens
 *   ESC_TRIES bound for the race cases (default 2000)
 */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ESC_BREACH 0
#define ESC_HELD 1
#define ESC_ORIGINAL "ORIGINAL\n"

/* The first line of every case: the runner refuses to call a case "held"
 * unless it saw this line (otherwise a txguard setup failure would pass). */
static inline void esc_start(const char *name)
{
	fprintf(stderr, "esc: start %s\n", name);
}

__attribute__((format(printf, 1, 2))) static inline void esc_log(const char *fmt, ...)
{
	va_list ap;
	fputs("esc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static inline const char *esc_env(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v) {
		esc_log("%s is not set (run through run-battery.sh)", name);
		exit(2);
	}
	return v;
}

/* $ESC_OUT/rel, or $ESC_WS/rel, in a static-lifetime buffer. */
static inline char *esc_path(const char *var, const char *rel)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", esc_env(var), rel) < 0)
		exit(2);
	return p;
}

static inline char *esc_out(const char *rel) { return esc_path("ESC_OUT", rel); }
static inline char *esc_ws(const char *rel) { return esc_path("ESC_WS", rel); }

static inline long esc_tries(void)
{
	const char *t = getenv("ESC_TRIES");
	long n = t ? strtol(t, NULL, 10) : 0;
	return n > 0 ? n : 2000;
}

/* True when `path` still holds exactly ESC_ORIGINAL (what the runner put
 * there). Uses a read-only open, which never traps. */
static inline bool esc_intact(const char *path)
{
	char buf[64] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == (ssize_t)strlen(ESC_ORIGINAL) && memcmp(buf, ESC_ORIGINAL, (size_t)n) == 0;
}

/* Write a small file (used for workspace-side setup). */
static inline int esc_write_file(const char *path, const char *text, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

/* The tracer's pid from /proc/self/status, 0 when not traced (native). */
static inline pid_t esc_tracer_pid(void)
{
	char line[256];
	pid_t tp = 0;
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &tp) == 1)
			break;
	fclose(f);
	return tp;
}

/* Final verdict for cases whose proof is the outside victim. */
static inline int esc_verdict_victim(const char *victim)
{
	if (!esc_intact(victim)) {
		esc_log("BREACH: %s was changed or removed", victim);
		return ESC_BREACH;
	}
	esc_log("held: %s intact", victim);
	return ESC_HELD;
}
