/* eio_preload.c — an LD_PRELOAD shim that makes the disk fail under txguard.
 *
 * Every write, pwrite, writev, fsync and fdatasync on a file whose path
 * contains $TG_EIO_MATCH fails with EIO (no bytes written), as a dying disk
 * would. txguard's journal must then refuse the call it was protecting
 * (never let it run unjournaled). With $TG_EIO_SYNC_ONLY set, only fsync
 * and fdatasync fail: the bytes are written, and it is the flush to disk
 * that reports the error. Used by tests/faults/eio.sh only; not installed,
 * not linked into anything.
 */
/* Both pwrite and pwrite64 are interposed by name: no 64-bit aliasing. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

static bool hit_sync(int fd);

static bool hit(int fd)
{
	const char *only = getenv("TG_EIO_SYNC_ONLY");
	if (only && *only)
		return false;
	return hit_sync(fd);
}

static bool hit_sync(int fd)
{
	const char *match = getenv("TG_EIO_MATCH");
	char link[64], path[4096];
	if (!match || !*match)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	return strstr(path, match) != NULL;
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
	if (hit_sync(fd)) {
		errno = EIO;
		return -1;
	}
	return NEXT(fsync)(fd);
}

int fdatasync(int fd)
{
	if (hit_sync(fd)) {
		errno = EIO;
		return -1;
	}
	return NEXT(fdatasync)(fd);
}
