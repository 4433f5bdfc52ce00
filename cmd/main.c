/* main.c — txguard's entry point: ready the heap, parse, dispatch, exit. */
#include "cli.h"
#include "journal/journal.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* What a start allocates: the policy, its trees, the tracer's tables. */
#define TG_START_HEAP (256u << 10)

/* A start's heap grows page by page, and each new page is a page fault:
 * about 60 of them, at ~13 us each on a VM, 8% of `txguard -- true`.
 * Grown once by all of it and populated in one call, it costs one
 * syscall. glibc's heap grows by brk: M_TOP_PAD makes the first growth
 * that large, and the range from the first block to the break is what it
 * grew. Where that does not hold (another allocator, ASan's, valgrind's;
 * a kernel before 5.14), nothing is done and pages fault as before. */
static void populate_heap(void)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0 || mallopt(M_TOP_PAD, (int)TG_START_HEAP) != 1)
		return;
	void *first = malloc(1);
	uintptr_t lo = (uintptr_t)first & ~((uintptr_t)page - 1), hi = (uintptr_t)sbrk(0);
	if (first && hi > lo && hi - lo <= 2 * TG_START_HEAP)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	free(first);
}

int main(int argc, char **argv)
{
	/* The history's trash, freed in the background after a commit that
	 * pruned (journal.h, tg_journal_gc_spawn): a new exec of this very
	 * binary, argv[0] saying so, costs the run less than a fork. */
	if (argc == 2 && strcmp(argv[0], TG_GC_ARGV0) == 0)
		return tg_journal_gc_main(argv[1]);
	tg_journal_gc_set_exe("/proc/self/exe");
	populate_heap();
	return tg_cli_main(argc, argv);
}
