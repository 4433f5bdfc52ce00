/* int80: enter the kernel through `int $0x80` (the 32-bit ia32 table) from a
 * 64-bit process and call unlink (ia32 nr 10) and open(O_WRONLY|O_TRUNC)
 * (ia32 nr 5) on an outside file. The ia32 numbers differ from x86_64 (10 is
 * mprotect there), so a filter without an arch gate would misjudge them.
 * The path must live below 4 GiB: int 0x80 only passes 32-bit pointers. */
#include <sys/mman.h>
#include "../esc.h"

static long int80_2(long nr, long a, long b)
{
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b) : "memory");
	return ret;
}

int main(void)
{
	esc_start("int80");
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
