/* cache.c — a directory of reusable start-up work (see cache.h). */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "util.h"

/* dir, without following a symlink below its first `trusted` bytes; with
 * create, missing directories are made 0700. */
static int open_dir(const char *dir, size_t trusted, bool create)
{
	size_t len = strlen(dir);
	if (dir[0] != '/' || trusted > len || strstr(dir + trusted, "/.."))
		return -EINVAL;
	_cleanup_free_ char *base = tg_strndup(dir, trusted ? trusted : 1);
	if (!base)
		return -ENOMEM;
	_cleanup_close_ int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return -errno;
	const char *rel = dir + trusted;
	while (*rel == '/')
		rel++;
	return create ? tg_fs_mkdirs_at(bfd, rel, 0700) : tg_fs_open_dir_at(bfd, rel);
}

/* The directory the last lookup opened, kept for the next: a start-up
 * reads one entry per policy file and the filter's, all in one directory,
 * and each open walks it component by component (five opens). Kept for
 * the process's life, close-on-exec. */
static struct {
	char *dir;
	size_t trusted;
	int fd;
} last = { .fd = -1 };

static int open_dir_for_get(const char *dir, size_t trusted)
{
	if (last.fd >= 0 && last.trusted == trusted && strcmp(last.dir, dir) == 0)
		return last.fd;
	int fd = open_dir(dir, trusted, false);
	char *copy = fd >= 0 ? tg_strdup(dir) : NULL;
	if (!copy)
		return fd < 0 ? fd : (close(fd), -ENOMEM);
	if (last.fd >= 0)
		close(last.fd);
	free(last.dir);
	last.dir = copy;
	last.trusted = trusted;
	last.fd = fd;
	return fd;
}

int tg_cache_get(const char *dir, size_t trusted, const char *name, size_t max, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	if (!dir || strchr(name, '/'))
		return 0;
	int dfd = open_dir_for_get(dir, trusted);
	if (dfd < 0)
		return dfd == -ENOMEM ? -ENOMEM : 0;
	int r = tg_read_file_at(dfd, name, O_NOFOLLOW, buf, len, max);
	if (r == -ENOMEM)
		return r;
	return r < 0 ? 0 : 1;
}

/* Past max entries, drop every entry but `keep` (inputs change rarely; a
 * cleared cache costs one round of the work per entry). */
static void prune(int dfd, const char *keep, size_t max)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t n = 0;
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	if (n > max) {
		rewinddir(d);
		for (struct dirent *de; (de = readdir(d));)
			if (de->d_name[0] != '.' && strcmp(de->d_name, keep) != 0)
				(void)unlinkat(dfd, de->d_name, 0);
	}
	closedir(d);
}

int tg_cache_put(const char *dir, size_t trusted, const char *name, const void *buf, size_t len,
                 size_t max_entries)
{
	char tmp[PATH_MAX];
	if (!dir || strchr(name, '/'))
		return -EINVAL;
	_cleanup_close_ int dfd = open_dir(dir, trusted, true);
	if (dfd < 0)
		return dfd;
	/* A name of our own: concurrent runs store the same entry alike. */
	int n = snprintf(tmp, sizeof(tmp), ".tmp-%d-%s", (int)getpid(), name);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = tg_write_all(fd, buf, len);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlinkat(dfd, tmp, 0);
		return r;
	}
	prune(dfd, name, max_entries);
	return 0;
}

uint64_t tg_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

uint64_t tg_cache_file_key(const char *path)
{
	struct stat st;
	if (!path || stat(path, &st) < 0)
		return 0;
	const uint64_t id[] = { st.st_dev, st.st_ino, (uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec,
		                (uint64_t)st.st_mtim.tv_nsec };
	uint64_t h = tg_fnv1a(TG_FNV1A_INIT, id, sizeof(id));
	return h ? h : 1;
}

uint64_t tg_cache_self_key(void)
{
	static uint64_t key; /* 0: not yet, or no key */
	static bool done;
	if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&key, __ATOMIC_RELAXED);
	uint64_t h = tg_cache_file_key("/proc/self/exe");
	__atomic_store_n(&key, h, __ATOMIC_RELAXED);
	__atomic_store_n(&done, true, __ATOMIC_RELEASE);
	return h;
}
