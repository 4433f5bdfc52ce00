/* tracer-fds: change a workspace file (journaled), then steal the tracer's
 * open files with pidfd_open + pidfd_getfd (the tracer is TracerPid from
 * /proc/self/status; natively there is none, so the parent stands in), and
 * append garbage to every regular file it holds open for writing — the
 * journal, among others — then exit 1 so that txguard rolls back. A tracee
 * holding the supervisor's journal fd can spoil the rollback or, through a
 * directory fd, reach places the policy denies. Breach when any fd could be
 * taken (the case says so on stderr, the runner reads it); the runner also
 * checks that the workspace file came back. */
#include <sys/syscall.h>
#include "../esc.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif

/* Append garbage when the stolen fd is a regular file open for writing. */
static void spoil(int fd, int theirs)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
		return;
	ssize_t n = pwrite(fd, "GARBAGE-FROM-A-TRACEE\n", 22, st.st_size);
	esc_log("appended garbage to their fd %d (size %lld) -> %zd", theirs, (long long)st.st_size, n);
}

int main(void)
{
	esc_start("tracer-fds");
	int err = esc_write_file(esc_ws("journaled.txt"), "CHANGED\n", O_TRUNC);
	esc_log("workspace write -> %d", err);
	pid_t tp = esc_tracer_pid();
	pid_t target = tp > 0 ? tp : getppid();
	esc_log("target %d (%s)", target, tp > 0 ? "tracer" : "parent: no tracer");
	int pfd = (int)syscall(__NR_pidfd_open, target, 0);
	if (pfd < 0) {
		esc_log("pidfd_open: %s", strerror(errno));
		return ESC_HELD;
	}
	int stolen = 0;
	for (int theirs = 0; theirs < 256; theirs++) {
		int fd = (int)syscall(__NR_pidfd_getfd, pfd, theirs, 0);
		if (fd < 0) {
			if (errno != EBADF)
				esc_log("pidfd_getfd(%d): %s", theirs, strerror(errno));
			if (errno == EPERM || errno == ENOSYS)
				break;
			continue;
		}
		stolen++;
		spoil(fd, theirs);
		close(fd);
	}
	esc_log("stole %d fds", stolen);
	/* Exit 1 either way: a failed run must be rolled back, which the
	 * runner checks. The exit code says nothing; the evidence does. */
	if (stolen > 0)
		esc_log("BREACH: took the %s's files", tp > 0 ? "tracer" : "parent");
	return ESC_HELD;
}
