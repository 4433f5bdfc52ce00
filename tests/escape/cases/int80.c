/* int80: enter the kernel through `int $0x80` (the 32-bit ia32 table) from a
 * 64-bit process and call unlink (ia32 nr 10) and open(O_WRONLY|O_TRUNC)
 * (ia32 nr 5) on an outside file. The ia32 numbers differ from x86_64 (10 is
 * mprotect there), so a filter without an arch gate would misjudge them.
 * The path must live below 4 GiB: int 0x80 only passes 32-bit pointers.
 * Where the kernel refuses int 0x80 altogether (IA-32 emulation off: a CPU
 * fault, SIGSEGV, before seccomp), there is nothing to attack: n/a. */
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "../esc.h"

static long int80_2(long nr, long a, long b)
{
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b) : "memory");
	return ret;
}

/* Does this kernel run int 0x80 at all? A child tries the harmless ia32
 * getpid (20) with SIGSEGV's default action restored by the raw syscall (a
 * sanitizer would turn the fault into an abort). Under txguard the child
 * dies by SIGSYS instead: the kernel runs it, and the arch gate answers. */
static int kernel_refuses_int80(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct { void *h; unsigned long f; void *r; uint64_t m; } dfl = { SIG_DFL, 0, NULL, 0 };
		syscall(SYS_rt_sigaction, SIGSEGV, &dfl, NULL, sizeof(dfl.m));
		int80_2(20, 0, 0);
		_exit(0);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 0;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

int main(void)
{
	esc_start("int80");
	if (kernel_refuses_int80()) {
		esc_log("n/a: this kernel refuses int 0x80 (IA-32 emulation off)");
		return ESC_HELD;
	}
	char *victim = esc_out("victim");
	char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (low == MAP_FAILED || strlen(victim) >= 4096) {
		esc_log("setup: mmap(MAP_32BIT) failed");
		return 3;
	}
	strcpy(low, victim);
	long r = int80_2(5 /* ia32 open */, (long)low, 01 | 01000 /* O_WRONLY|O_TRUNC */);
	esc_log("int80 open(O_TRUNC) -> %ld", r);
	r = int80_2(10 /* ia32 unlink */, (long)low, 0);
	esc_log("int80 unlink -> %ld", r);
	return esc_verdict_victim(victim);
}
