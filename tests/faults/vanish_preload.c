/* vanish_preload.c — an LD_PRELOAD shim that moves a workspace file away
 * while txguard's journal is about to save it, as another task of the tree
 * would by renaming it between txguard's lstat and its capture.
 *
 * The first time txguard opens (O_NOFOLLOW) or links the name
 * $TG_VANISH_NAME (a leaf), the shim first renames it to NAME.gone in the
 * same directory. One time only: the shim claims $TG_VANISH_ONCE, a file it
 * creates with O_EXCL. The commands under txguard load the shim too, but
 * they never open with O_NOFOLLOW the names the tests choose. Used by
 * tests/faults/vanish.sh only; not installed, not linked into anything.
 */
/* openat and openat64 are interposed by name: no 64-bit aliasing. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static bool is_target(const char *path)
{
	const char *name = getenv("TG_VANISH_NAME");
	const char *leaf = strrchr(path, '/');
	return name && *name && strcmp(leaf ? leaf + 1 : path, name) == 0;
}

/* The first caller only: whoever creates the marker. */
static bool claim(void)
{
	const char *once = getenv("TG_VANISH_ONCE");
	if (!once || !*once)
		return false;
	int fd = NEXT(open)(once, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void vanish(int dirfd, const char *path)
{
	char gone[4096];
	int saved = errno;
	if (snprintf(gone, sizeof(gone), "%s.gone", path) < (int)sizeof(gone))
		(void)renameat(dirfd, path, dirfd, gone);
	errno = saved;
}

static int open_at(int (*real)(int, const char *, int, ...), int dirfd, const char *path, int flags,
                   mode_t mode)
{
	if ((flags & O_NOFOLLOW) && is_target(path) && claim())
		vanish(dirfd, path);
	return real(dirfd, path, flags, mode);
}

/* The mode argument, there only with O_CREAT or O_TMPFILE. */
static mode_t mode_arg(int flags, va_list ap)
{
	return flags & (O_CREAT | O_TMPFILE) ? (mode_t)va_arg(ap, int) : 0;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return open_at(NEXT(openat), dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return open_at(NEXT(openat64), dirfd, path, flags, mode);
}

int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
	if (is_target(oldpath) && claim())
		vanish(olddirfd, oldpath);
	return NEXT(linkat)(olddirfd, oldpath, newdirfd, newpath, flags);
}
