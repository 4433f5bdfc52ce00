/* trapcost — time N calls of one syscall, from inside the process.
 *
 * Usage: trapcost MODE N PATH
 *   chmod      chmod(PATH) alternating 0600/0644      (trapped by txguard)
 *   unlink     unlinkat(PATH + ".missing") -> ENOENT  (trapped; nothing to journal)
 *   openwr     open(PATH, O_WRONLY) + close           (trapped: write-open)
 *   openrd     open(PATH, O_RDONLY) + close           (not trapped: decided in BPF)
 *   getppid    getppid()                              (not trapped: filter cost only)
 *
 * Prints "MODE N NS_PER_CALL". The timing is taken inside the process so that
 * txguard's own start and commit are not part of the figure, and one call is made
 * before the clock starts so the journal's first-touch capture is excluded: what is
 * left is the pure cost of a stop, a decision and a resume.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char missing[4096];

static int call_chmod(const char *path, long i)
{
	return chmod(path, (i & 1) ? 0600 : 0644);
}

static int call_unlink(const char *path, long i)
{
	(void)path;
	(void)i;
	return unlinkat(AT_FDCWD, missing, 0) == -1 && errno == ENOENT ? 0 : -1;
}

static int call_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		return -1;
	return close(fd);
}

static int call_openwr(const char *path, long i)
{
	(void)i;
	return call_open(path, O_WRONLY);
}

static int call_openrd(const char *path, long i)
{
	(void)i;
	return call_open(path, O_RDONLY);
}

static int call_getppid(const char *path, long i)
{
	(void)path;
	(void)i;
	return getppid() > 0 ? 0 : -1;
}

struct mode {
	const char *name;
	int (*call)(const char *path, long i);
};

static const struct mode modes[] = {
	{ "chmod", call_chmod },
	{ "unlink", call_unlink },
	{ "openwr", call_openwr },
	{ "openrd", call_openrd },
	{ "getppid", call_getppid },
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const struct mode *m = NULL;
	const char *path;
	double t0;
	long n;

	if (argc != 4) {
		fprintf(stderr, "usage: trapcost chmod|unlink|openwr|openrd|getppid N PATH\n");
		return 2;
	}
	for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++)
		if (strcmp(argv[1], modes[k].name) == 0)
			m = &modes[k];
	n = strtol(argv[2], NULL, 10);
	path = argv[3];
	if (!m || n <= 0) {
		fprintf(stderr, "trapcost: bad mode or count\n");
		return 2;
	}
	snprintf(missing, sizeof(missing), "%s.missing", path);

	/* Warm-up: the journal's first touch of PATH happens here, off the clock. */
	if (m->call(path, 1) < 0) {
		perror("trapcost: warm-up call");
		return 1;
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		if (m->call(path, i) < 0) {
			perror("trapcost");
			return 1;
		}
	}
	printf("%s %ld %.1f\n", m->name, n, (now_ns() - t0) / n);
	return 0;
}
