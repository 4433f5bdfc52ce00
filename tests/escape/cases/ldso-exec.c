/* ldso-exec: run the denied program without ever exec'ing it: exec the
 * dynamic loader (ld-linux-x86-64.so.2) with the denied program as its
 * argument. The kernel runs the loader, which maps esc-denied itself and
 * jumps into it; no execve names esc-denied as the program. esc-denied
 * exits 42 when it runs. */
#include <sys/wait.h>
#include "../esc.h"

static const char *const loaders[] = {
	"/lib64/ld-linux-x86-64.so.2",
	"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	"/usr/lib64/ld-linux-x86-64.so.2",
};

int main(void)
{
	esc_start("ldso-exec");
	const char *ld = NULL;
	for (size_t i = 0; i < sizeof(loaders) / sizeof(loaders[0]) && !ld; i++)
		if (access(loaders[i], X_OK) == 0)
			ld = loaders[i];
	if (!ld) {
		esc_log("n/a: no x86_64 dynamic loader found");
		return ESC_HELD;
	}
	pid_t pid = fork();
	if (pid == 0) {
		extern char **environ;
		char *argv[] = { (char *)ld, esc_path("ESC_BIN", "esc-denied"), NULL };
		execve(ld, argv, environ);
		esc_log("execve(%s): %s", ld, strerror(errno));
		_exit(1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	esc_log("%s esc-denied: child status 0x%x", ld, st);
	return WIFEXITED(st) && WEXITSTATUS(st) == 42 ? ESC_BREACH : ESC_HELD;
}
