/* floor — the least any seccomp+ptrace supervisor can cost on this machine.
 *
 * Usage: floor CMD [ARGS...]
 * Runs CMD (one process, no fork following) under a filter that returns
 * SECCOMP_RET_TRACE for chmod, unlinkat and openat, and a tracer that does nothing at
 * each stop but PTRACE_CONT: no decoding, no policy, no journal. trapcost under
 * `floor` minus trapcost native is the price of the two context switches of a stop on
 * this kernel and hypervisor, the floor under txguard's per-call figure.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_chmod, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unlinkat, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static void child(char **argv)
{
	if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0 || raise(SIGSTOP) < 0 || install_filter() < 0) {
		perror("floor: child setup");
		_exit(125);
	}
	execvp(argv[0], argv);
	perror("floor: exec");
	_exit(127);
}

int main(int argc, char **argv)
{
	int status, sig;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: floor CMD [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 125;
	if (pid == 0)
		child(argv + 1);
	if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
		return 125;
	if (ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL) < 0) {
		perror("floor: PTRACE_SETOPTIONS");
		return 125;
	}
	sig = 0;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, 0, sig) < 0 && errno != ESRCH)
			return 125;
		if (waitpid(pid, &status, 0) < 0)
			return 125;
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		if (WIFSIGNALED(status))
			return 128 + WTERMSIG(status);
		/* A seccomp stop or exec stop carries no signal; anything else is delivered. */
		sig = (status >> 8 == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8)) ||
		       WSTOPSIG(status) == SIGTRAP) ? 0 : WSTOPSIG(status);
	}
}
