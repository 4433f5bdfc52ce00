/* nested.c — txguard run under txguard.
 *
 * The outer txguard denies ptrace and the seccomp listener to its tree and
 * keeps writes inside its workspace, so an inner txguard fails in confusing
 * ways (a denied mkdir of its state dir, a hint about container
 * capabilities). Being traced by a process called txguard says what is
 * going on: the command is already supervised, so run it directly.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common.h"

/* The TracerPid of /proc/self/status, 0 when not traced. One read: the
 * file is ~1.5 KB and TracerPid among its first lines. (stdio and sscanf,
 * at their first use in the process, cost ~0.15 ms of every start.) */
static pid_t tracer_pid(void)
{
	char buf[4096];
	_cleanup_close_ int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strstr(buf, "\nTracerPid:");
	return p ? (pid_t)strtol(p + strlen("\nTracerPid:"), NULL, 10) : 0;
}

int tg_nested_check(char *why, size_t len)
{
	/* txguard's tree always runs under its seccomp filter: without one
	 * (mode 0) this is not its tree, and /proc/self/status, whose first
	 * read costs ~0.1 ms, need not be asked. */
	if (prctl(PR_GET_SECCOMP) == 0)
		return 0;
	pid_t t = tracer_pid();
	if (t <= 0)
		return 0;
	char path[64], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)t);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f || !fgets(comm, sizeof(comm), f))
		return 0;
	comm[strcspn(comm, "\n")] = '\0';
	if (strcmp(comm, "txguard") != 0)
		return 0;
	snprintf(why, len, "already running under txguard (pid %d), which supervises this command "
	         "and denies a second supervisor: run the command directly, without txguard", (int)t);
	return -EBUSY;
}
