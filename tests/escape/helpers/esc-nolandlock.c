/* esc-nolandlock CMD [ARGS...]: run CMD as if the kernel had no Landlock:
 * a seccomp filter makes landlock_create_ruleset, landlock_add_rule and
 * landlock_restrict_self fail with ENOSYS, as on a kernel built without it.
 * run-battery.sh --no-landlock wraps txguard in it to show which attacks
 * only Landlock holds. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 444 /* landlock_create_ruleset */, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 446 /* landlock_restrict_self */, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	if (argc < 2) {
		fputs("usage: esc-nolandlock CMD [ARGS...]\n", stderr);
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("esc-nolandlock: seccomp");
		return 125;
	}
	execvp(argv[1], argv + 1);
	perror("esc-nolandlock: exec");
	return 127;
}
