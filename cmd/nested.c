/* nested.c — txguard run under txguard.
 *
 * The outer txguard denies ptrace and the seccomp listener to its tree and
 * keeps writes inside its workspace, so an inner txguard fails in confusing
 * ways (a denied mkdir of its state dir, a hint about container
 * capabilities). Being traced by a process called txguard says what is
 * going on: the command is already supervised, so run it directly.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"

/* The TracerPid of /proc/self/status, 0 when not traced. */
static pid_t tracer_pid(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long pid = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &pid) == 1)
			break;
	return (pid_t)pid;
}

int tg_nested_check(char *why, size_t len)
{
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
