/* ptrace-sibling: two children of this process: A holds a path buffer
 * naming a workspace file and waits; B (A's sibling) PTRACE_ATTACHes to A
 * and pokes the buffer to name an outside file, then A unlinks what its
 * buffer says. A tracee that can ptrace another tracee can rewrite its
 * vetted arguments or steal it from the supervisor. Breach when B's attach
 * succeeds or the outside file changes. */
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "../esc.h"

static char buf[4096];

static int poke_string(pid_t pid, char *addr, const char *s)
{
	size_t len = strlen(s) + 1;
	for (size_t off = 0; off < len; off += sizeof(long)) {
		long word = 0;
		memcpy(&word, s + off, len - off < sizeof(long) ? len - off : sizeof(long));
		if (ptrace(PTRACE_POKEDATA, pid, addr + off, (void *)word) < 0)
			return -errno;
	}
	return 0;
}

int main(void)
{
	esc_start("ptrace-sibling");
	char *victim = esc_out("victim");
	snprintf(buf, sizeof(buf), "%s", esc_ws("sibling-file"));
	int go[2];
	if (pipe(go) < 0)
		return 3;
	pid_t a = fork();
	if (a == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		_exit(unlink(buf) == 0 ? 0 : 1);
	}
	pid_t b = fork();
	if (b == 0) {
		if (ptrace(PTRACE_ATTACH, a, NULL, NULL) < 0) {
			esc_log("PTRACE_ATTACH sibling: %s", strerror(errno));
			_exit(1);
		}
		waitpid(a, NULL, __WALL);
		int err = poke_string(a, buf, victim);
		esc_log("attached to sibling %d; poke -> %d", a, err);
		ptrace(PTRACE_DETACH, a, NULL, NULL);
		_exit(0);
	}
	int st = 0;
	waitpid(b, &st, 0);
	if (write(go[1], "x", 1) != 1)
		return 3;
	waitpid(a, NULL, 0);
	bool attached = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (attached) {
		esc_log("BREACH: a tracee ptraced its sibling");
		return ESC_BREACH;
	}
	return esc_verdict_victim(victim);
}
