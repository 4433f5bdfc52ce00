/* txn/alias.c — other names of workspace objects (txn/alias.h).
 *
 * Bind mounts: /proc/self/mountinfo gives, per mount, its device, the path
 * of its root inside that filesystem and where it is mounted. The
 * workspace's own mount (statx STATX_MNT_ID) places the workspace inside
 * its filesystem; any other mount of the same device whose root is above
 * that place shows the whole workspace at a second path, and one whose root
 * is below it shows part of it. Each gives a prefix to translate.
 *
 * Hard links: only an inode with more than one link can have a name outside
 * the workspace as well as inside; those of the workspace are few, and one
 * walk lists them, keyed by (dev, ino).
 */
#include "alias.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/path.h"
#include "base/util.h"

struct bind {
	char *prefix;  /* absolute path outside the workspace */
	char *rel;     /* what it shows: a workspace-relative dir ("" = all) */
};

struct linked {
	uint64_t dev, ino;
	char *rel;
};

struct tg_aliases {
	char *workspace;
	bool binds_read;
	struct bind *binds;
	size_t nbinds;
	bool links_read;
	struct linked *links;  /* sorted by (dev, ino) */
	size_t nlinks, caplinks;
};

struct tg_aliases *tg_aliases_new(const char *workspace)
{
	struct tg_aliases *a = calloc(1, sizeof(*a));
	if (a && !(a->workspace = tg_strdup(workspace))) {
		free(a);
		a = NULL;
	}
	return a;
}

static void clear_links(struct tg_aliases *a)
{
	for (size_t i = 0; i < a->nlinks; i++)
		free(a->links[i].rel);
	a->nlinks = 0;
}

void tg_aliases_free(struct tg_aliases *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nbinds; i++) {
		free(a->binds[i].prefix);
		free(a->binds[i].rel);
	}
	free(a->binds);
	clear_links(a);
	free(a->links);
	free(a->workspace);
	free(a);
}

/* ---- bind mounts ---- */

/* mountinfo escapes space, tab, newline and backslash as \ooo. In place. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
		    r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

struct mnt {
	uint64_t id;
	unsigned maj, min;
	char *root, *point;
};

static char *join(const char *dir, const char *rest)
{
	if (!*rest)
		return tg_strdup(dir);
	return tg_asprintf("%s%s%s", dir, strcmp(dir, "/") ? "/" : "", rest);
}

static int add_bind(struct tg_aliases *a, char *prefix, char *rel)
{
	struct bind *v = realloc(a->binds, (a->nbinds + 1) * sizeof(*v));
	if (!v || !prefix || !rel) {
		free(prefix);
		free(rel);
		return -ENOMEM;
	}
	a->binds = v;
	a->binds[a->nbinds++] = (struct bind){ .prefix = prefix, .rel = rel };
	return 0;
}

static int read_binds(struct tg_aliases *a)
{
	struct statx sx;
	if (statx(AT_FDCWD, a->workspace, 0, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
		return 0; /* no mount ids (Linux < 5.8): no way to place the workspace */
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	struct mnt *v = NULL, ws = { 0 };
	size_t n = 0;
	char *line = NULL;
	size_t cap = 0;
	int e = 0;
	while (!e && getline(&line, &cap, f) > 0) {
		struct mnt m = { 0 };
		char root[4096], point[4096];
		unsigned long long id;
		if (sscanf(line, "%llu %*u %u:%u %4095s %4095s", &id, &m.maj, &m.min, root, point) != 5)
			continue;
		unescape(root);
		unescape(point);
		m.id = id;
		m.root = tg_strdup(root);
		m.point = tg_strdup(point);
		struct mnt *nv = realloc(v, (n + 1) * sizeof(*v));
		if (!m.root || !m.point || !nv) {
			free(m.root);
			free(m.point);
			free(nv ? nv : v);
			v = NULL;
			n = 0;
			e = -ENOMEM;
			break;
		}
		v = nv;
		v[n++] = m;
		if (m.id == sx.stx_mnt_id)
			ws = m;
	}
	free(line);
	/* Where the workspace is inside its filesystem. */
	const char *in_mount = ws.point ? tg_path_below(a->workspace, ws.point) : NULL;
	_cleanup_free_ char *fs_path = in_mount ? join(ws.root, in_mount) : NULL;
	for (size_t i = 0; !e && fs_path && i < n; i++) {
		const struct mnt *m = &v[i];
		if (m->id == ws.id || m->maj != ws.maj || m->min != ws.min)
			continue;
		const char *rest;
		char *prefix = NULL, *rel = NULL;
		if ((rest = tg_path_below(fs_path, m->root))) {
			/* The whole workspace, again, beneath this mount point. */
			prefix = join(m->point, rest);
			rel = tg_strdup("");
		} else if ((rest = tg_path_below(m->root, fs_path))) {
			/* Part of it. */
			prefix = tg_strdup(m->point);
			rel = tg_strdup(rest);
		} else {
			continue;
		}
		/* Inside the workspace, names are the workspace's own already. */
		if (prefix && tg_path_is_under(prefix, a->workspace)) {
			free(prefix);
			free(rel);
			continue;
		}
		e = add_bind(a, prefix, rel);
	}
	for (size_t i = 0; i < n; i++) {
		free(v[i].root);
		free(v[i].point);
	}
	free(v);
	return e;
}

static char *parent_of(const char *abs)
{
	const char *slash = strrchr(abs, '/');
	return slash && slash != abs ? tg_strndup(abs, (size_t)(slash - abs)) : tg_strdup("/");
}

/* Same object, or for a name not there yet, same parent directory: a mount
 * inside the bind (not shown in the workspace) breaks the translation. */
static bool same_place(const char *abs, const char *ws_abs)
{
	struct stat x, y;
	if (lstat(abs, &x) == 0 && lstat(ws_abs, &y) == 0)
		return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
	_cleanup_free_ char *pa = parent_of(abs), *pw = parent_of(ws_abs);
	if (!pa || !pw || stat(pa, &x) < 0 || stat(pw, &y) < 0)
		return false;
	return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int tg_aliases_bind(struct tg_aliases *a, const char *abs, char **rel)
{
	*rel = NULL;
	if (!a->binds_read) {
		int e = read_binds(a);
		if (e < 0)
			return e;
		a->binds_read = true;
	}
	for (size_t i = 0; i < a->nbinds; i++) {
		const char *rest = tg_path_below(abs, a->binds[i].prefix);
		if (!rest)
			continue;
		_cleanup_free_ char *r = *a->binds[i].rel ? join(a->binds[i].rel, rest) : tg_strdup(rest);
		_cleanup_free_ char *ws_abs = r ? join(a->workspace, r) : NULL;
		if (!ws_abs)
			return -ENOMEM;
		if (!same_place(abs, ws_abs))
			continue;
		*rel = steal_pointer(&r);
		return 1;
	}
	return 0;
}

/* ---- hard links ---- */

static int cmp_linked(const void *x, const void *y)
{
	const struct linked *p = x, *q = y;
	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	return p->ino < q->ino ? -1 : p->ino > q->ino;
}

static int walk_links(struct tg_aliases *a, int dfd, const char *rel)
{
	DIR *d = tg_fs_opendir(dfd);
	if (!d)
		return 0; /* unreadable: nothing listed there */
	int e = 0;
	struct dirent *de;
	while (!e && (de = tg_fs_readdir(d))) {
		if (de->d_type != DT_DIR && de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
			continue; /* symlinks, devices: not files a write-open reaches */
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		_cleanup_free_ char *sub = *rel ? tg_asprintf("%s/%s", rel, de->d_name) : tg_strdup(de->d_name);
		if (!sub) {
			e = -ENOMEM;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int s = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (s >= 0)
				e = walk_links(a, s, sub);
			continue;
		}
		if (st.st_nlink < 2)
			continue;
		if (a->nlinks == a->caplinks) {
			size_t cap = a->caplinks ? a->caplinks * 2 : 64;
			struct linked *v = realloc(a->links, cap * sizeof(*v));
			if (!v) {
				e = -ENOMEM;
				break;
			}
			a->links = v;
			a->caplinks = cap;
		}
		a->links[a->nlinks++] = (struct linked){ .dev = st.st_dev, .ino = st.st_ino, .rel = steal_pointer(&sub) };
	}
	closedir(d);
	return e;
}

static int read_links(struct tg_aliases *a)
{
	clear_links(a);
	_cleanup_close_ int ws = open(a->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ws < 0)
		return -errno;
	int e = walk_links(a, ws, "");
	if (e == 0)
		qsort(a->links, a->nlinks, sizeof(*a->links), cmp_linked);
	a->links_read = e == 0;
	return e;
}

static const struct linked *find_link(const struct tg_aliases *a, const struct stat *st)
{
	struct linked key = { .dev = st->st_dev, .ino = st->st_ino };
	return a->nlinks ? bsearch(&key, a->links, a->nlinks, sizeof(key), cmp_linked) : NULL;
}

int tg_aliases_link(struct tg_aliases *a, const struct stat *st, char **rel)
{
	*rel = NULL;
	if (S_ISDIR(st->st_mode) || st->st_nlink < 2)
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		if (!a->links_read || pass == 1) {
			int e = read_links(a);
			if (e < 0)
				return e;
		}
		const struct linked *l = find_link(a, st);
		if (!l)
			return 0; /* a link made since came from outside: the run's
			           * new name, which the journal removes anyway */
		_cleanup_free_ char *ws_abs = join(a->workspace, l->rel);
		struct stat now;
		if (!ws_abs)
			return -ENOMEM;
		if (lstat(ws_abs, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino) {
			*rel = tg_strdup(l->rel);
			return *rel ? 1 : -ENOMEM;
		}
		/* That name moved on: walk again. */
	}
	return 0;
}
