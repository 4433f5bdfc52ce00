/* floor — the least any seccomp supervisor can cost on this machine.
 *
 * Usage: floor [--unotify | --unotify-sync] CMD [ARGS...]
 * Runs CMD (one process, no fork following) under a filter that traps chmod,
 * unlinkat and openat, and a supervisor that does nothing with a trapped call but
 * let it go on: no decoding, no policy, no journal. trapcost under `floor` minus
 * trapcost native is the price of the two context switches of a stop on this kernel
 * and hypervisor, the floor under txguard's per-call figure.
 *
 * By default the trap is SECCOMP_RET_TRACE and the supervisor a ptrace tracer that
 * answers each stop with PTRACE_CONT, as txguard's is. --unotify traps with
 * SECCOMP_RET_USER_NOTIF instead and answers each notification "continue"
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE): no ptrace stop, two ioctls per call.
 * --unotify-sync also asks for synchronous wake-ups (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
 * Linux 6.6): the notifying task and the supervisor hand the CPU to each other
 * instead of waking one another across CPUs. Exits 125 when the kernel lacks what
 * the mode needs, so that the bench can leave the row out.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Newer than the uapi headers of Debian 12. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

enum mode { PTRACE, UNOTIFY, UNOTIFY_SYNC };

/* The filter for the calling thread: chmod, unlinkat and openat get `trap`.
 * With SECCOMP_RET_USER_NOTIF, the listener's fd; else 0. -1 on failure. */
static int install_filter(unsigned int trap)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_chmod, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unlinkat, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, trap),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	unsigned long flags = trap == SECCOMP_RET_USER_NOTIF ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static void child_exec(char **argv)
{
	execvp(argv[0], argv);
	perror("floor: exec");
	_exit(127);
}

/* ---- ptrace ---- */

static int run_ptrace(char **argv)
{
	int status, sig;
	pid_t pid = fork();

	if (pid < 0)
		return 125;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0 || raise(SIGSTOP) < 0 || install_filter(SECCOMP_RET_TRACE) < 0) {
			perror("floor: child setup");
			_exit(125);
		}
		child_exec(argv);
	}
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

/* ---- user notifications ---- */

static int send_fd(int sock, int fd)
{
	char byte = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	memset(ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char byte, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &m, 0) != 1 || !(c = CMSG_FIRSTHDR(&m)) || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The filter is the child's own (it applies to the caller): its listener comes to
 * the parent through the socket, and the child waits for the parent's byte so that
 * no trapped call is made before anyone listens. */
static void unotify_child(int sock, char **argv)
{
	char go;
	int fd = install_filter(SECCOMP_RET_USER_NOTIF);

	if (fd < 0 || send_fd(sock, fd) < 0 || read(sock, &go, 1) != 1) {
		perror("floor: child setup");
		_exit(125);
	}
	close(fd);
	close(sock);
	child_exec(argv);
}

static int serve(int fd)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (;;) {
		/* POLLHUP: every task of the filter is gone. */
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p.revents & POLLHUP)
			return 0;
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			return -1;
		}
		resp = (struct seccomp_notif_resp){ .id = req.id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
		/* ENOENT: the task died or was interrupted meanwhile. */
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
			return -1;
	}
}

static int run_unotify(char **argv, int sync)
{
	int sv[2], fd, status, r;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 125;
	pid = fork();
	if (pid < 0)
		return 125;
	if (pid == 0) {
		close(sv[0]);
		unotify_child(sv[1], argv);
	}
	close(sv[1]);
	fd = recv_fd(sv[0]);
	if (fd < 0 || (sync && ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 0) < 0)) {
		if (fd >= 0)
			perror("floor: SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 125;
	}
	if (write(sv[0], "g", 1) != 1)
		return 125;
	close(sv[0]);
	r = serve(fd);
	if (waitpid(pid, &status, 0) < 0 || r < 0)
		return 125;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	enum mode mode = PTRACE;

	if (argc > 1 && strcmp(argv[1], "--unotify") == 0)
		mode = UNOTIFY;
	else if (argc > 1 && strcmp(argv[1], "--unotify-sync") == 0)
		mode = UNOTIFY_SYNC;
	argv += mode == PTRACE ? 1 : 2;
	if (!argv[0]) {
		fprintf(stderr, "usage: floor [--unotify | --unotify-sync] CMD [ARGS...]\n");
		return 2;
	}
	return mode == PTRACE ? run_ptrace(argv) : run_unotify(argv, mode == UNOTIFY_SYNC);
}
