/* exec-race MODE: a second thread rewrites what execve() will read while
 * the supervisor is checking it. MODE:
 *   argv  argv[1] flips between "--inspect" (allowed) and "--destroy"
 *         (denied for esc-tool by the battery policy)
 *   path  the filename flips between ESC_BIN/esc-allowd (allowed, exits 7)
 *         and ESC_BIN/esc-denied (denied, exits 42): same length
 *   interp  as path, and in step the argv array grows from {"x"} to
 *         {"x", ESC_BIN/esc-allowd}: what a #! interpreter of the vetted
 *         file would receive. A re-check that accepts "another program
 *         whose argv looks like an interpreter's" without asking whether
 *         that program may run lets the denied one through.
 * Each try is a fresh child (a successful exec replaces it); a child exit of
 * 42 means the denied thing ran. Bounded by ESC_TRIES / 4 (a fork+exec each).
 * Held when the re-check at PTRACE_EVENT_EXEC kills it every time. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include "../esc.h"

enum mode { M_ARGV, M_PATH, M_INTERP };

static char slot[4096];
static const char *alt[2];
static char *argv_i[3] = { "x", NULL, NULL };
static enum mode mode;
static atomic_uint flips;

static void *flipper(void *arg)
{
	(void)arg;
	for (unsigned i = 0;; i++) {
		/* State 1 (denied) sets the name first, then grows argv; state 0
		 * shrinks argv first: each state is whole as soon as it ends. */
		if (mode == M_INTERP && !(i & 1))
			argv_i[1] = NULL;
		memcpy(slot, alt[i & 1], strlen(alt[0]) + 1);
		if (mode == M_INTERP && (i & 1))
			argv_i[1] = (char *)alt[0];
		atomic_store_explicit(&flips, i, memory_order_relaxed);
	}
	return NULL;
}

static int one_try(const char *tool)
{
	pid_t pid = fork();
	if (pid == 0) {
		extern char **environ;
		pthread_t t;
		memcpy(slot, alt[0], strlen(alt[0]) + 1);
		if (pthread_create(&t, NULL, flipper, NULL) != 0)
			_exit(3);
		/* Exec only once the flipper really runs, else there is no race. */
		while (atomic_load_explicit(&flips, memory_order_relaxed) < 1000)
			;
		char *argv_a[] = { (char *)tool, slot, NULL };
		char *argv_p[] = { slot, NULL };
		if (mode == M_ARGV)
			execve(tool, argv_a, environ);
		else if (mode == M_PATH)
			execve(slot, argv_p, environ);
		else
			execve(slot, argv_i, environ);
		_exit(5);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	mode = strcmp(m, "argv") == 0 ? M_ARGV : strcmp(m, "interp") == 0 ? M_INTERP : M_PATH;
	esc_start(mode == M_ARGV ? "argv-race" : mode == M_PATH ? "exec-path-race" : "exec-interp-race");
	char *tool = esc_path("ESC_BIN", "esc-tool");
	if (mode == M_ARGV) {
		alt[0] = "--inspect";
		alt[1] = "--destroy";
	} else {
		alt[0] = esc_path("ESC_BIN", "esc-allowd");
		alt[1] = esc_path("ESC_BIN", "esc-denied");
	}
	long n = esc_tries() / 4, i;
	int counts[256] = { 0 };
	for (i = 0; i < n; i++) {
		int code = one_try(tool) & 0xff;
		counts[code]++;
		if (code == 42)
			break;
	}
	for (int c = 0; c < 256; c++)
		if (counts[c])
			esc_log("exit %d: %d times", c, counts[c]);
	return counts[42] ? ESC_BREACH : ESC_HELD;
}
