/* clone3-untraced: clone3() keeps its flags in memory where BPF cannot read
 * them; ask for CLONE_UNTRACED there, then the child unlinks an outside file
 * and truncates another. Held when clone3 is refused (ENOSYS) or the child
 * is still supervised. */
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "../esc.h"

#ifndef CLONE_UNTRACED
#define CLONE_UNTRACED 0x00800000
#endif

int main(void)
{
	esc_start("clone3-untraced");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	struct clone_args ca;
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_UNTRACED;
	ca.exit_signal = SIGCHLD;
	long pid = syscall(__NR_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		esc_log("clone3(CLONE_UNTRACED) refused: %s", strerror(errno));
		return esc_verdict_victim(victim);
	}
	if (pid == 0) {
		long r = syscall(__NR_unlink, victim);
		int fd = open(victim2, O_WRONLY | O_TRUNC);
		_exit(r == 0 || fd >= 0 ? 0 : 1);
	}
	int st = 0;
	waitpid((pid_t)pid, &st, 0);
	esc_log("clone3 child status 0x%x", st);
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
