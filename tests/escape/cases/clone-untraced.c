/* clone-untraced: raw clone(CLONE_UNTRACED|SIGCHLD) so the tracer is not
 * auto-attached to the child; the child then unlinks an outside file and
 * truncates another. Held when the child is traced anyway, or its trapped
 * calls fail (RET_TRACE without a tracer returns ENOSYS), or clone with
 * CLONE_UNTRACED is refused. */
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "../esc.h"

#ifndef CLONE_UNTRACED
#define CLONE_UNTRACED 0x00800000
#endif

int main(void)
{
	esc_start("clone-untraced");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	long pid = syscall(__NR_clone, (unsigned long)(CLONE_UNTRACED | SIGCHLD), 0L, 0L, 0L, 0L);
	if (pid < 0) {
		esc_log("clone(CLONE_UNTRACED) refused: %s", strerror(errno));
		return esc_verdict_victim(victim);
	}
	if (pid == 0) {
		long r = syscall(__NR_unlink, victim);
		int fd = open(victim2, O_WRONLY | O_TRUNC);
		_exit(r == 0 || fd >= 0 ? 0 : 1);
	}
	int st = 0;
	waitpid((pid_t)pid, &st, 0);
	esc_log("untraced child status 0x%x", st);
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
