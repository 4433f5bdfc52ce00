/* x32: call unlinkat through the x32 syscall table (__X32_SYSCALL_BIT |
 * __NR_unlinkat) on an outside file, and openat(O_WRONLY|O_TRUNC) the same
 * way. A filter that only checks x86_64 numbers without masking the x32 bit
 * would let these through untraced. Held: the arch gate kills or fails them.
 * Natively this only breaches on a kernel built with CONFIG_X86_X32_ABI. */
#include <sys/syscall.h>
#include "../esc.h"

#define X32_BIT 0x40000000L

int main(void)
{
	esc_start("x32");
	char *victim = esc_out("victim");
	long r = syscall(X32_BIT | __NR_unlinkat, AT_FDCWD, victim, 0);
	esc_log("x32 unlinkat -> %ld (%s)", r, r < 0 ? strerror(errno) : "ok");
	r = syscall(X32_BIT | __NR_openat, AT_FDCWD, victim, O_WRONLY | O_TRUNC, 0);
	esc_log("x32 openat(O_TRUNC) -> %ld (%s)", r, r < 0 ? strerror(errno) : "ok");
	if (r < 0 && errno == ENOSYS && esc_intact(victim)) {
		/* Tell the runner's --native mode this kernel has no x32 ABI. */
		esc_log("n/a: no x32 ABI in this kernel");
	}
	return esc_verdict_victim(victim);
}
