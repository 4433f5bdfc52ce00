/* tg-treehash DIR [--no-mtime] [--exclude NAME]...
 *
 * Prints a canonical manifest of the tree under DIR, one line per entry in
 * byte order of the path: type, mode, owner, size, content hash, symlink
 * target, hard-link group (the first path of the group), xattrs (user.*,
 * trusted.* as root, ACLs, security.capability), mtime.
 * The root itself is printed as ".". Paths are %XX-escaped. Walks with
 * openat() so long paths never hit PATH_MAX. --no-mtime leaves out mtimes
 * (to compare two runs of the same ops done at different times).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int no_mtime;
static char **excludes;
static int nexcludes;

struct ino_seen {
	dev_t dev;
	ino_t ino;
	char *path;
};
static struct ino_seen *seen;
static size_t nseen, capseen;

static uint64_t fnv(uint64_t h, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void put_esc(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x21 || *p > 0x7e || *p == '%')
			printf("%%%02X", *p);
		else
			putchar(*p);
	}
}

static uint64_t hash_fd(int fd)
{
	static char buf[1 << 16];
	uint64_t h = 0xcbf29ce484222325ull;
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		h = fnv(h, buf, (size_t)n);
	if (n < 0) {
		perror("read");
		exit(2);
	}
	return h;
}

static const char *hardlink_group(const struct stat *st, const char *path)
{
	if (S_ISDIR(st->st_mode) || st->st_nlink < 2)
		return NULL;
	for (size_t i = 0; i < nseen; i++)
		if (seen[i].dev == st->st_dev && seen[i].ino == st->st_ino)
			return seen[i].path;
	if (nseen == capseen) {
		capseen = capseen ? capseen * 2 : 64;
		seen = realloc(seen, capseen * sizeof(*seen));
		if (!seen)
			exit(2);
	}
	seen[nseen++] = (struct ino_seen){ st->st_dev, st->st_ino, strdup(path) };
	return NULL;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_xattrs(int pfd, const char *name, const struct stat *st)
{
	if (S_ISLNK(st->st_mode) || S_ISSOCK(st->st_mode))
		return;
	int fd = openat(pfd, name, O_PATH | O_NOFOLLOW);
	if (fd < 0)
		return;
	char proc[64], list[8192];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ssize_t n = listxattr(proc, list, sizeof(list));
	char *names[256];
	int cnt = 0;
	for (ssize_t i = 0; n > 0 && i < n && cnt < 256; i += (ssize_t)strlen(list + i) + 1)
		if (!strncmp(list + i, "user.", 5) || !strncmp(list + i, "trusted.", 8) ||
		    !strncmp(list + i, "system.posix_acl_", 17) || !strcmp(list + i, "security.capability"))
			names[cnt++] = list + i;
	if (cnt)
		qsort(names, (size_t)cnt, sizeof(*names), cmp_name);
	for (int i = 0; i < cnt; i++) {
		char val[65536];
		ssize_t vl = getxattr(proc, names[i], val, sizeof(val));
		printf(" xattr:%s=%016llx", names[i],
		       (unsigned long long)fnv(0xcbf29ce484222325ull, val, vl > 0 ? (size_t)vl : 0));
	}
	close(fd);
}

static void entry(int pfd, const char *name, const char *path, const struct stat *st)
{
	put_esc(path);
	printf(" type=%o mode=%04o owner=%u:%u", st->st_mode >> 12, st->st_mode & 07777, st->st_uid, st->st_gid);
	if (S_ISREG(st->st_mode)) {
		int fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0) {
			perror(path);
			exit(2);
		}
		printf(" size=%lld hash=%016llx", (long long)st->st_size, (unsigned long long)hash_fd(fd));
		close(fd);
	} else if (S_ISLNK(st->st_mode)) {
		char t[4096];
		ssize_t n = readlinkat(pfd, name, t, sizeof(t) - 1);
		t[n < 0 ? 0 : n] = '\0';
		printf(" target=");
		put_esc(t);
	} else if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
		printf(" rdev=%llx", (unsigned long long)st->st_rdev);
	}
	const char *grp = hardlink_group(st, path);
	if (grp) {
		printf(" link=");
		put_esc(grp);
	}
	print_xattrs(pfd, name, st);
	if (!no_mtime)
		printf(" mtime=%lld.%09ld", (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	putchar('\n');
}

static int excluded(const char *path)
{
	for (int i = 0; i < nexcludes; i++)
		if (!strcmp(path, excludes[i]))
			return 1;
	return 0;
}

static void walk(int dfd, const char *prefix)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		perror(prefix);
		exit(2);
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			names = realloc(names, cap * sizeof(*names));
		}
		names[n++] = strdup(de->d_name);
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	for (size_t i = 0; i < n; i++) {
		size_t pl = strlen(prefix) + strlen(names[i]) + 2;
		char *path = malloc(pl);
		snprintf(path, pl, "%s%s%s", prefix, prefix[0] ? "/" : "", names[i]);
		struct stat st;
		if (excluded(path) || fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			free(path);
			free(names[i]);
			continue;
		}
		entry(dirfd(d), names[i], path, &st);
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			if (sub < 0) {
				perror(path);
				exit(2);
			}
			walk(sub, path);
			close(sub);
		}
		free(path);
		free(names[i]);
	}
	free(names);
	closedir(d);
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	excludes = calloc((size_t)argc, sizeof(*excludes));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-mtime"))
			no_mtime = 1;
		else if (!strcmp(argv[i], "--exclude") && i + 1 < argc)
			excludes[nexcludes++] = argv[++i];
		else
			dir = argv[i];
	}
	if (!dir) {
		fprintf(stderr, "usage: tg-treehash DIR [--no-mtime] [--exclude PATH]...\n");
		return 2;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		perror(dir);
		return 2;
	}
	struct stat st;
	fstat(fd, &st);
	entry(AT_FDCWD, dir, ".", &st);
	walk(fd, "");
	return 0;
}
