/* alias-exec: run the denied program (ESC_BIN/esc-denied) under other
 * names without copying it: execve("/proc/self/fd/N") of a read-only fd on
 * it, execveat(fd, "", AT_EMPTY_PATH) on that fd (a real file this time,
 * not a memfd), and execve of a workspace symlink "tool" pointing at it. A
 * check on the name the caller passed, rather than on the file the kernel
 * runs, lets all three through. esc-denied exits 42 when it runs. */
#include <sys/syscall.h>
#include <sys/wait.h>
#include "../esc.h"

extern char **environ;

static bool ran(const char *how, int dirfd, const char *path, int flags)
{
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = { "tool", NULL };
		syscall(__NR_execveat, dirfd, path, argv, environ, flags);
		esc_log("%s: %s", how, strerror(errno));
		_exit(1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	bool r = WIFEXITED(st) && WEXITSTATUS(st) == 42;
	esc_log("%s: child status 0x%x%s", how, st, r ? " (the denied program ran)" : "");
	return r;
}

int main(void)
{
	esc_start("alias-exec");
	char *denied = esc_path("ESC_BIN", "esc-denied");
	int fd = open(denied, O_RDONLY);
	if (fd < 0 || chdir(esc_env("ESC_WS")) < 0)
		return 3;
	char magic[64];
	snprintf(magic, sizeof(magic), "/proc/self/fd/%d", fd);
	bool breach = ran("execve(/proc/self/fd/N)", AT_FDCWD, magic, 0);
	breach |= ran("execveat(fd, \"\", AT_EMPTY_PATH)", fd, "", AT_EMPTY_PATH);
	if (symlink(denied, "tool") == 0)
		breach |= ran("execve(ws/tool -> esc-denied)", AT_FDCWD, "./tool", 0);
	else
		esc_log("symlink ws/tool: %s", strerror(errno));
	return breach ? ESC_BREACH : ESC_HELD;
}
