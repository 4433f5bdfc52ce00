/* kill-tracer: change a workspace file (journaled), then SIGKILL the tracer
 * found in /proc/self/status (TracerPid), then try to unlink and truncate
 * outside files, both at once and from a child that waits a second first.
 * Held when the writes fail or the tree dies with the tracer (EXITKILL);
 * the runner then checks that no process of the tree is left and that
 * `txguard recover` puts the workspace file back. Natively there is no
 * tracer to kill, so the writes go through (breach): that proves the
 * writes themselves work. Never kills anything but its own tracer. */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "../esc.h"

static void try_writes(const char *victim, const char *victim2)
{
	unlink(victim);
	int fd = open(victim2, O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	esc_start("kill-tracer");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	int err = esc_write_file(esc_ws("journaled.txt"), "CHANGED\n", O_TRUNC);
	esc_log("workspace write -> %d", err);
	pid_t late = fork();
	if (late == 0) {
		struct timespec ts = { 1, 0 };
		nanosleep(&ts, NULL);
		try_writes(victim, victim2);
		_exit(0);
	}
	esc_log("late child %d", late);
	pid_t tp = esc_tracer_pid();
	esc_log("TracerPid %d", tp);
	if (tp > 0 && kill(tp, SIGKILL) < 0)
		esc_log("kill(tracer) failed: %s", strerror(errno));
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	try_writes(victim, victim2);
	waitpid(late, NULL, 0);
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
