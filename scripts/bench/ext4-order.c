/* ext4-order.c — does a journal commit write another file's appended data
 * first? (docs/journal.md, "What ext4 really orders")
 *
 *   cc -O2 -o /tmp/ext4-order scripts/bench/ext4-order.c
 *   /tmp/ext4-order DIR     (DIR on the filesystem to ask; as root, it syncs)
 *
 * Appends 8 MiB to DIR/append (no sync), then unlinks DIR/victim and fsyncs
 * DIR/other, which commits the filesystem's journal and with it the unlink.
 * It prints the Dirty page cache (/proc/meminfo) before and after that
 * fsync: if the appended 8 MiB are still dirty, the commit made the later
 * unlink durable without the earlier append, which is what a journal record
 * batched in page cache is to the workspace call after it. Run it on an
 * otherwise quiet machine: Dirty is system-wide. Not a test (it needs a
 * quiet machine and reads a global counter); a measurement to repeat. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long dirty_kib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Dirty:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

static int at(const char *dir, const char *name, int flags)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, flags | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(p);
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	static char buf[1 << 20];
	memset(buf, 'r', sizeof(buf));
	close(at(dir, "victim", O_WRONLY | O_CREAT));
	sync();
	sleep(1);
	int a = at(dir, "append", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
	for (int i = 0; i < 8; i++)
		if (write(a, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return perror("write"), 1;
	long before = dirty_kib();
	int b = at(dir, "other", O_WRONLY | O_CREAT | O_TRUNC);
	char p[4096];
	snprintf(p, sizeof(p), "%s/victim", dir);
	if (write(b, "x", 1) != 1 || unlink(p) < 0 || fsync(b) < 0)
		return perror("unlink/fsync"), 1;
	long after = dirty_kib();
	printf("Dirty: %ld KiB after the append, %ld KiB after the unlink's commit (8192 appended)\n", before, after);
	printf("%s\n", after >= 8000 ? "the commit did not write the append first"
	                             : "the append was written (by the commit, or by writeback meanwhile)");
	close(a);
	close(b);
	snprintf(p, sizeof(p), "%s/append", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/other", dir);
	unlink(p);
	return 0;
}
