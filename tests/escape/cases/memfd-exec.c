/* memfd-exec: copy the denied program (ESC_BIN/esc-denied) into a memfd
 * named "cc" and run it with execveat(memfd, "", argv={"cc"},
 * AT_EMPTY_PATH): no path, an innocent name. esc-denied exits 42 when it
 * runs, so the parent sees from the child's status whether it did. */
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "../esc.h"

int main(void)
{
	esc_start("memfd-exec");
	char *denied = esc_path("ESC_BIN", "esc-denied");
	int src = open(denied, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (src < 0 || fstat(src, &st) < 0)
		return 3;
	int mfd = memfd_create("cc", 0);
	if (mfd < 0) {
		esc_log("memfd_create: %s", strerror(errno));
		return ESC_HELD;
	}
	if (sendfile(mfd, src, NULL, (size_t)st.st_size) != st.st_size)
		return 3;
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = { "cc", "--version", NULL };
		extern char **environ;
		syscall(__NR_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
		esc_log("execveat(memfd): %s", strerror(errno));
		_exit(1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	esc_log("child status 0x%x", status);
	return WIFEXITED(status) && WEXITSTATUS(status) == 42 ? ESC_BREACH : ESC_HELD;
}
