/* eio_preload.c — an LD_PRELOAD shim that makes the disk fail under txguard.
 *
 * Every write, pwrite, writev, fsync and fdatasync on a file whose path
 * contains $TG_EIO_MATCH fails with EIO (no bytes written), as a dying disk
 * would. txguard's journal must then refuse the call it was protecting
 * (never let it run unjournaled). With $TG_EIO_SYNC_ONLY set, only fsync
 * and fdatasync fail: the bytes are written, and it is the flush to disk
 * that reports the error. With $TG_SYNC_LOG set to a file instead, nothing
 * fails: each fsync or fdatasync of such a file appends a line ("fsync" or
 * "fdatasync" and the path) to it, so a test can count the syncs a run
 * makes. Used by tests/faults/eio.sh only; not installed, not linked into
 * anything.
 */
/* Both pwrite and pwrite64 are interposed by name: no 64-bit aliasing. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

static bool matches(int fd, char *path, size_t size)
{
	const char *match = getenv("TG_EIO_MATCH");
	char link[64];
	if (!match || !*match)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, size - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	return strstr(path, match) != NULL;
}

static bool counting(void)
{
	const char *log = getenv("TG_SYNC_LOG");
	return log && *log;
}

static bool hit(int fd)
{
	const char *only = getenv("TG_EIO_SYNC_ONLY");
	char path[4096];
	if ((only && *only) || counting())
		return false;
	return matches(fd, path, sizeof(path));
}

/* A sync of a matching file: counted (TG_SYNC_LOG), else failed. Raw
 * syscalls for the count, so that it is not itself interposed. */
static bool hit_sync(int fd, const char *what)
{
	char path[4096];
	if (!matches(fd, path, sizeof(path)))
		return false;
	if (!counting())
		return true;
	int lfd = (int)syscall(SYS_open, getenv("TG_SYNC_LOG"), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (lfd >= 0) {
		char line[4200];
		int n = snprintf(line, sizeof(line), "%s %s\n", what, path);
		(void)!syscall(SYS_write, lfd, line, (size_t)n);
		syscall(SYS_close, lfd);
	}
	return false;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void *buf, size_t len)
{
	if (hit(fd)) {
		errno = EIO;
		return -1;
	}
	return NEXT(write)(fd, buf, len);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	if (hit(fd)) {
		errno = EIO;
		return -1;
	}
	return NEXT(pwrite)(fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	if (hit(fd)) {
		errno = EIO;
		return -1;
	}
	return NEXT(pwrite64)(fd, buf, len, off);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	if (hit(fd)) {
		errno = EIO;
		return -1;
	}
	return NEXT(writev)(fd, iov, n);
}

int fsync(int fd)
{
	if (hit_sync(fd, "fsync")) {
		errno = EIO;
		return -1;
	}
	return NEXT(fsync)(fd);
}

int fdatasync(int fd)
{
	if (hit_sync(fd, "fdatasync")) {
		errno = EIO;
		return -1;
	}
	return NEXT(fdatasync)(fd);
}
