/* shebang: write a `#!` script into the workspace whose interpreter is the
 * denied program (ESC_BIN/esc-denied) and execve the script. The exec the
 * supervisor sees names the script; the kernel runs the interpreter.
 * esc-denied exits 42 when it runs. */
#include <sys/wait.h>
#include "../esc.h"

int main(void)
{
	esc_start("shebang");
	char *script = esc_ws("innocent.sh");
	char text[4200];
	snprintf(text, sizeof(text), "#!%s\n", esc_path("ESC_BIN", "esc-denied"));
	int err = esc_write_file(script, text, O_TRUNC);
	if (err < 0 || chmod(script, 0755) < 0) {
		esc_log("writing the script: %s", strerror(err < 0 ? -err : errno));
		return 3;
	}
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = { script, NULL };
		extern char **environ;
		execve(script, argv, environ);
		esc_log("execve(script): %s", strerror(errno));
		_exit(1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	esc_log("child status 0x%x", status);
	return WIFEXITED(status) && WEXITSTATUS(status) == 42 ? ESC_BREACH : ESC_HELD;
}
