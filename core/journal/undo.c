/* journal/undo.c — restore: walk the log backwards and undo each record.
 *
 * Invariant: when record i is undone, every later record has been undone, so
 * the tree is as it was just after the call record i protected (for what the
 * journal watches). Each undo is checked against the tree before it acts:
 * destructive steps (removing what CREATED made, moving back what RENAMED
 * moved) act only on the object with the recorded identity, and the rest
 * are overwrites (content, metadata) that converge when replayed. A crash
 * mid-restore resumes at the step in flight (the progress file, written
 * after every step) and goes on: each step is idempotent against its own
 * partial run. Directory timestamps are put back in a final pass, after every
 * namespace change inside them.
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "journal_int.h"
#include "tar.h"
#include "base/util.h"

int tg_journal_debug;

#define TG_CHECKPOINT_EVERY 256

struct deferred {
	char *path;
	struct timespec ts[2];
	uint64_t dev, ino;     /* the directory the record describes */
};

/* An object the restore recreated (rmdir, saved copy) has a new inode; the
 * records still name the old one. Kept in <txn>/remap too, so a resumed
 * restore knows what the interrupted one recreated. */
struct remap {
	uint64_t odev, oino, ndev, nino;
};

/* A recreated member of a hard-link group (SAVED, any non-directory, with
 * nlink > 1): the next
 * SAVED name of the same original links to it instead of copying again. */
struct anchor {
	uint64_t dev, ino;   /* the original's identity */
	int fd;              /* O_PATH on what the restore made */
};

struct undo {
	struct tg_journal *j;
	const struct tg_restore_opts *o; /* hook, keep list (never NULL) */
	struct remap *m;
	size_t nm, capm;
	int remapfd;
	struct tg_jrecs recs;  /* the records, BORN folded in */
	struct deferred *d;
	size_t nd, capd;
	uint64_t *known;   /* sorted (dev, ino) pairs: objects older than the run */
	size_t nknown;
	uint64_t *freed;   /* sorted (dev, ino): numbers that may have been reused
	                    * (RMDIR, SAVED freed them; born objects come and go) */
	size_t nfreed;
	int tarfd;
	int progfd;
	int err;
	bool in_flight;    /* replaying the very step an interrupted restore was in */
	bool replay;       /* an interrupted restore ran before: the tree may be "earlier" */
	bool unsafe;       /* the last step removed something of unknown identity */
	struct anchor *a;  /* hard-link groups: objects SAVED steps recreated */
	size_t na, capa;
	uint64_t *groups;  /* see build_groups */
	size_t ngroups;
};

struct jrecs_load {
	struct tg_jrecs *s;
	bool aux;
};

static int keep_rec(void *ud, const struct tg_jrec *r)
{
	struct jrecs_load *l = ud;
	struct tg_jrecs *s = l->s;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct tg_jrec *nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	struct tg_jrec *c = &s->v[s->n];
	*c = *r;
	c->path = tg_strdup(r->path);
	c->path2 = r->path2 ? tg_strdup(r->path2) : NULL;
	c->aux = NULL;
	if (l->aux && r->aux_len) {
		c->aux = malloc(r->aux_len + 1); /* a symlink target is used as a string */
		if (c->aux) {
			memcpy(c->aux, r->aux, r->aux_len);
			c->aux[r->aux_len] = '\0';
		}
	}
	if (!l->aux)
		c->aux_len = 0;
	if (!c->path || (r->path2 && !c->path2) || (c->aux_len && !c->aux)) {
		tg_jrec_clear(c);
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

/* Fold BORN identities into their CREATED records (meta.ino != 0: known). */
static void fold_born(struct tg_jrecs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct tg_jrec *b = &s->v[i];
		if (b->kind != TG_JREC_BORN || b->ref == 0 || b->ref > s->n)
			continue;
		struct tg_jrec *c = &s->v[b->ref - 1];
		if (c->seq == b->ref && c->kind == TG_JREC_CREATED) {
			c->meta.dev = b->meta.dev;
			c->meta.ino = b->meta.ino;
			c->flags |= TG_JREC_F_BORN_SEEN;
		}
	}
}

int tg_jrecs_load(const struct tg_journal *j, struct tg_jrecs *s, bool aux)
{
	struct jrecs_load l = { s, aux };
	int e = tg_journal_foreach(j, keep_rec, &l);
	if (!e)
		fold_born(s);
	return e;
}

void tg_jrecs_clear(struct tg_jrecs *s)
{
	for (size_t i = 0; i < s->n; i++)
		tg_jrec_clear(&s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static bool remap_push(struct undo *u, const struct remap *r)
{
	struct remap *nm = tg_grow(u->m, u->nm, &u->capm, sizeof(*nm), 64);
	if (!nm)
		return false;
	u->m = nm;
	u->m[u->nm++] = *r;
	return true;
}

static void remap_add(struct undo *u, const struct tg_jmeta *old, int pfd, const char *leaf, bool persist)
{
	struct stat st;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	struct remap r = { old->dev, old->ino, st.st_dev, st.st_ino };
	if (!remap_push(u, &r)) {
		u->err = u->err ? u->err : -ENOMEM;
		return;
	}
	/* Made durable with the step's checkpoint (progress_write). */
	if (persist && u->remapfd >= 0 && tg_write_all(u->remapfd, &r, sizeof(r)) < 0)
		u->err = u->err ? u->err : -EIO;
}

static bool is_mark(const struct remap *r);

/* An absolute path of rel in the workspace, for a hook's op. */
static char *abs_of(const struct undo *u, const char *rel)
{
	return rel[0] ? tg_asprintf("%s/%s", u->j->info.workspace, rel) : tg_strdup(u->j->info.workspace);
}

/* Tell the hook (an undo journaling itself) what the next step changes,
 * as the trapped call that would change it: its capture is durable when
 * this returns 0, and the step must not run otherwise. rel NULL: a source
 * outside the workspace (a stash link). */
static int before(struct undo *u, enum tg_op_kind kind, const char *rel, const char *rel2, int flags)
{
	if (!u->o->before)
		return 0;
	_cleanup_free_ char *a = rel ? abs_of(u, rel) : NULL;
	_cleanup_free_ char *b = rel2 ? abs_of(u, rel2) : NULL;
	if ((rel && !a) || (rel2 && !b))
		return -ENOMEM;
	struct tg_op op = { .kind = kind, .pid = getpid(), .path = a, .path2 = b, .flags = flags,
	                    .writes = true };
	return u->o->before(u->o->ud, &op);
}

/* A redo removes what the undo put back from a run's stash: give that run
 * its stash link again first (tg_keep), so it can be undone once more. */
static int keep_links(struct undo *u, const struct stat *st, int pfd, const char *leaf)
{
	for (size_t i = 0; i < u->o->nkeep; i++) {
		const struct tg_keep *k = &u->o->keep[i];
		if (k->dev != (uint64_t)st->st_dev || k->ino != (uint64_t)st->st_ino)
			continue;
		_cleanup_free_ char *p = tg_asprintf("%s/txn/%s/stash", u->j->state_dir, k->run);
		_cleanup_close_ int sfd = p ? open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		if (sfd < 0)
			return p ? -errno : -ENOMEM;
		char name[32];
		snprintf(name, sizeof(name), "%llu", (unsigned long long)k->seq);
		struct stat ks;
		if (linkat(pfd, leaf, sfd, name, 0) < 0) {
			/* already there (a replay): only if it is this object */
			if (errno != EEXIST)
				return -errno;
			if (fstatat(sfd, name, &ks, AT_SYMLINK_NOFOLLOW) < 0 || ks.st_ino != st->st_ino ||
			    ks.st_dev != st->st_dev)
				return -EEXIST;
		}
		if (fsync(sfd) < 0)
			return -errno;
	}
	return 0;
}

/* Remove rel (at pfd/leaf) with all it holds, one entry at a time, for a
 * hook that journals each removal (children first) or a keep list. */
static int remove_walk(struct undo *u, int pfd, const char *leaf, const char *rel)
{
	struct stat st;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode)) {
		int e = keep_links(u, &st, pfd, leaf);
		if (!e)
			e = before(u, TG_OP_UNLINK, rel, NULL, 0);
		if (e < 0)
			return e;
		return unlinkat(pfd, leaf, 0) < 0 && errno != ENOENT ? -errno : 0;
	}
	int fd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int e = -errno;
		if (fd >= 0)
			close(fd);
		return e;
	}
	int e = 0;
	struct dirent *de;
	while (!e && (de = tg_fs_readdir(d))) {
		_cleanup_free_ char *sub = rel[0] ? tg_asprintf("%s/%s", rel, de->d_name) : tg_strdup(de->d_name);
		e = sub ? remove_walk(u, dirfd(d), de->d_name, sub) : -ENOMEM;
	}
	closedir(d);
	if (!e)
		e = before(u, TG_OP_RMDIR, rel, NULL, 0);
	if (e < 0)
		return e;
	return unlinkat(pfd, leaf, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

/* Unchanged since before the transaction began (its ctime, which nothing
 * but the kernel sets, is older): a call journaled but refused by the
 * kernel (an append-only or immutable file, EACCES) left nothing to undo,
 * and the restore must not fail trying to rewrite what it may not write. */
static bool untouched(const struct undo *u, const struct stat *st, const struct tg_jmeta *m)
{
	uint64_t c = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
	return st->st_dev == m->dev && st->st_ino == m->ino && c < u->j->info.started_ns;
}

/* Undoing a committed run after newer ones were undone: their restores may
 * have recreated objects this run's records name (a directory this run made,
 * removed by a newer run, is back with a new inode). Their remaps, not their
 * rename decisions, say what became of them. */
static void remap_import_file(struct undo *u, const char *path)
{
	_cleanup_close_ int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	struct remap r;
	while (fd >= 0 && read(fd, &r, sizeof(r)) == (ssize_t)sizeof(r))
		if (!is_mark(&r) && !remap_push(u, &r))
			break;
}

static void remap_import_newer(struct undo *u, const char *const *newer)
{
	for (size_t i = 0; newer && newer[i]; i++) {
		_cleanup_free_ char *p = tg_asprintf("%s/txn/%s/remap", u->j->state_dir, newer[i]);
		remap_import_file(u, p);
	}
	/* Rolled-back runs are gone, but what their restores recreated (a
	 * directory this run captured, removed and put back by a failed run)
	 * is kept in the state dir's own remap. */
	_cleanup_free_ char *p = tg_asprintf("%s/remap", u->j->state_dir);
	remap_import_file(u, p);
}

/* A rolled-back run's dir is removed: keep its remap (the objects its
 * restore recreated) for the undo of older committed runs. Appended and
 * synced before the dir goes; a crash in between appends it twice, which
 * is harmless. */
static int remap_keep(struct undo *u)
{
	if (u->nm == 0)
		return 0;
	_cleanup_free_ char *p = tg_asprintf("%s/remap", u->j->state_dir);
	_cleanup_close_ int fd = p ? open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
	if (fd < 0)
		return p ? -errno : -ENOMEM;
	for (size_t i = 0; i < u->nm; i++) {
		if (is_mark(&u->m[i]))
			continue;
		int e = tg_write_all(fd, &u->m[i], sizeof(u->m[i]));
		if (e < 0)
			return e;
	}
	return fdatasync(fd) < 0 ? -errno : 0;
}

static void remap_load(struct undo *u)
{
	u->remapfd = openat(u->j->dirfd, "remap", O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	struct remap r;
	while (u->remapfd >= 0 && read(u->remapfd, &r, sizeof(r)) == (ssize_t)sizeof(r))
		if (!remap_push(u, &r))
			return;
}

/* Is st the object the records call (dev, ino), or what restore made of it?
 * Follows chains: a newer run's undo may have recreated it, and this restore
 * again. A number can stand for two objects (a removed original's, freed,
 * then a new file's), each with its own chain (the original recreated by
 * this restore, the new file by the redo of an undo): any chain that ends
 * at st names it. budget bounds the walk. */
static bool same_from(const struct undo *u, const struct stat *st, uint64_t dev, uint64_t ino, size_t *budget)
{
	if (st->st_dev == dev && st->st_ino == ino)
		return true;
	for (size_t i = u->nm; i-- > 0;) {
		if (!(u->m[i].odev == dev && u->m[i].oino == ino))
			continue;
		if (*budget == 0)
			return false;
		(*budget)--;
		if (same_from(u, st, u->m[i].ndev, u->m[i].nino, budget))
			return true;
	}
	return false;
}

static bool same_object(const struct undo *u, const struct stat *st, uint64_t dev, uint64_t ino)
{
	size_t budget = 64;
	return same_from(u, st, dev, ino, &budget);
}

static void undo_clear(struct undo *u)
{
	for (size_t i = 0; i < u->na; i++)
		close(u->a[i].fd);
	free(u->a);
	free(u->groups);
	free(u->known);
	free(u->freed);
	free(u->m);
	if (u->remapfd >= 0)
		close(u->remapfd);
	tg_jrecs_clear(&u->recs);
	for (size_t i = 0; i < u->nd; i++)
		free(u->d[i].path);
	free(u->d);
	if (u->tarfd >= 0)
		close(u->tarfd);
	if (u->progfd >= 0)
		close(u->progfd);
}

static void fail(struct undo *u, int e)
{
	if (e < 0 && !u->err)
		u->err = e;
}

static void defer_times(struct undo *u, const char *path, const struct tg_jmeta *m)
{
	if (u->nd == u->capd) {
		size_t cap = u->capd ? u->capd * 2 : 64;
		struct deferred *nd = realloc(u->d, cap * sizeof(*nd));
		if (!nd) {
			fail(u, -ENOMEM);
			return;
		}
		u->d = nd;
		u->capd = cap;
	}
	char *p = tg_strdup(path);
	if (!p) {
		fail(u, -ENOMEM);
		return;
	}
	u->d[u->nd++] = (struct deferred){ p, { m->atime, m->mtime }, m->dev, m->ino };
}

/* Deferred paths named `from`-prefix now live under `to`. */
static void translate(struct undo *u, const char *from, const char *to)
{
	size_t fl = strlen(from);
	for (size_t i = 0; i < u->nd; i++) {
		char *p = u->d[i].path;
		if (strncmp(p, from, fl) != 0 || (p[fl] != '\0' && p[fl] != '/'))
			continue;
		char *np = tg_asprintf("%s%s", to, p + fl);
		if (!np) {
			fail(u, -ENOMEM);
			return;
		}
		free(p);
		u->d[i].path = np;
	}
}

static void translate_rename(struct undo *u, const struct tg_jrec *r)
{
	if (r->flags & TG_JREC_F_EXCHANGE) {
		translate(u, r->path2, "\x01");
		translate(u, r->path, r->path2);
		translate(u, "\x01", r->path);
	} else {
		translate(u, r->path2, r->path);
	}
}

/* Owner, mode, xattrs, and (non-directories) times of pfd/leaf. */
static int apply_meta(struct undo *u, const char *rel, const struct tg_jmeta *m, const char *x, size_t xl,
                      bool xall)
{
	int wsfd = u->j->wsfd;
	const char *leaf = NULL;
	_cleanup_close_ int pfd = rel[0] ? tg_fs_parent(wsfd, rel, &leaf) : -1;
	if (rel[0] && pfd < 0)
		return pfd == -ENOENT || pfd == -ENOTDIR || pfd == -ELOOP ? 0 : pfd;
	struct stat st;
	int e = rel[0] ? fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) : fstat(wsfd, &st);
	if (e < 0)
		return errno == ENOENT ? 0 : -errno;
	if ((st.st_mode & S_IFMT) != (m->mode & S_IFMT))
		return 0; /* not the object this record describes */
	if (untouched(u, &st, m))
		return 0;
	e = before(u, TG_OP_CHMOD, rel, NULL, 0);
	if (e < 0)
		return e;
	if (st.st_uid != m->uid || st.st_gid != m->gid) {
		e = rel[0] ? fchownat(pfd, leaf, m->uid, m->gid, AT_SYMLINK_NOFOLLOW) : fchown(wsfd, m->uid, m->gid);
		if (e < 0 && (errno != EPERM || geteuid() == 0))
			return -errno;
	}
	bool lnk = S_ISLNK(st.st_mode);
	if (!lnk && (st.st_mode & 07777) != (m->mode & 07777)) {
		e = rel[0] ? fchmodat(pfd, leaf, m->mode & 07777, 0) : fchmod(wsfd, m->mode & 07777);
		if (e < 0)
			return -errno;
	}
	if (!lnk && !S_ISSOCK(st.st_mode)) {
		_cleanup_close_ int fd = tg_fs_open_path(wsfd, rel);
		e = fd < 0 ? fd : tg_fs_set_xattrs_ns(fd, x, xl, xall);
		if (e < 0 && e != -ENOTSUP)
			return e;
		/* An access ACL and the group bits are one thing to the kernel:
		 * setting or removing one may have moved the other. */
		struct stat now;
		if (fd >= 0 && fstat(fd, &now) == 0 && (now.st_mode & 07777) != (m->mode & 07777) &&
		    (rel[0] ? fchmodat(pfd, leaf, m->mode & 07777, 0) : fchmod(wsfd, m->mode & 07777)) < 0)
			return -errno;
	}
	if (S_ISDIR(st.st_mode))
		return 0;
	struct timespec ts[2] = { m->atime, m->mtime };
	return utimensat(pfd, leaf, ts, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int cmp_id(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	if (x[1] != y[1])
		return x[1] < y[1] ? -1 : 1;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* A record of an object this run made (a rename or removal of it): its
 * number tells nothing of an original. Such an object may be removed
 * later with no record, and its number then given to a new file, which
 * may be the one a creation was making when txguard was killed: that
 * file must not be taken for an original and left in the way. */
static bool of_born(const struct tg_jrec *r)
{
	return (r->kind == TG_JREC_RENAMED || r->kind == TG_JREC_STASHED) && (r->flags & TG_JREC_F_BORN);
}

/* Identities (dev, ino) of every object the records describe as existing
 * before its call: sorted pairs for bsearch. */
static int build_known(struct undo *u)
{
	u->known = malloc((u->recs.n + 1) * 2 * sizeof(uint64_t));
	u->freed = malloc((u->recs.n + 1) * 2 * sizeof(uint64_t));
	if (!u->known || !u->freed)
		return -ENOMEM;
	for (size_t i = 0; i < u->recs.n; i++) {
		const struct tg_jrec *r = &u->recs.v[i];
		if (r->kind == TG_JREC_CREATED || r->kind == TG_JREC_BORN || !r->meta.ino || of_born(r))
			continue;
		u->known[2 * u->nknown] = r->meta.dev;
		u->known[2 * u->nknown + 1] = r->meta.ino;
		u->nknown++;
		if (r->kind == TG_JREC_RMDIR || r->kind == TG_JREC_SAVED) {
			u->freed[2 * u->nfreed] = r->meta.dev;
			u->freed[2 * u->nfreed + 1] = r->meta.ino;
			u->nfreed++;
		}
	}
	if (u->nknown)
		qsort(u->known, u->nknown, 2 * sizeof(uint64_t), cmp_id);
	/* Born objects (BORN identities) come and go: a record describing one
	 * (a rename of a born file) says nothing of an original, and its
	 * number may have been freed and reused since. */
	for (size_t i = 0; i < u->recs.n; i++) {
		const struct tg_jrec *r = &u->recs.v[i];
		if (r->kind != TG_JREC_CREATED || !r->meta.ino)
			continue;
		u->freed[2 * u->nfreed] = r->meta.dev;
		u->freed[2 * u->nfreed + 1] = r->meta.ino;
		u->nfreed++;
	}
	if (u->nfreed)
		qsort(u->freed, u->nfreed, 2 * sizeof(uint64_t), cmp_id);
	return 0;
}

static bool known_id(const struct undo *u, uint64_t dev, uint64_t ino)
{
	uint64_t key[2] = { dev, ino };
	return u->nknown && bsearch(key, u->known, u->nknown, 2 * sizeof(uint64_t), cmp_id);
}

/* A creation without a BORN record: still pending when the run was killed
 * (with several threads, several may be) or its BORN lost. What is at its
 * name may be what it made, or something else that came there later — an
 * original only through a journaled call, so: never remove an object the
 * journal knows existed before the run (except one more name of it, made by
 * link(): the inode keeps its other names — not in a replayed restore, where
 * that other name may be the stash), and only what was made or changed
 * (ctime, by the filesystem's clock) after the transaction began: an
 * untouched original never qualifies. */
/* Known to the journal and still that object: a removal that freed the inode
 * (RMDIR, SAVED) lets a new file take its number; what this restore
 * recreated of it is the original again. */
static bool known_original(const struct undo *u, const struct stat *st)
{
	uint64_t key[2] = { st->st_dev, st->st_ino };
	bool freed = u->nfreed && bsearch(key, u->freed, u->nfreed, 2 * sizeof(uint64_t), cmp_id);
	if (known_id(u, st->st_dev, st->st_ino) && !freed)
		return true;
	for (size_t i = 0; i < u->nm; i++)
		if (u->m[i].ndev == st->st_dev && u->m[i].nino == st->st_ino && known_id(u, u->m[i].odev, u->m[i].oino))
			return true;
	return false;
}

static bool unnamed_is_new(const struct undo *u, const struct stat *st)
{
	if (known_original(u, st) && (u->replay || S_ISDIR(st->st_mode) || st->st_nlink < 2))
		return false;
	uint64_t c = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
	return c >= u->j->info.started_ns;
}

/* The object at path now: 1 with *pfd on its parent, *leaf and *st; 0
 * when it is gone (nothing to undo there); or -errno. */
static int find_target(struct undo *u, const char *path, int *pfd, const char **leaf, struct stat *st)
{
	*pfd = tg_fs_parent(u->j->wsfd, path, leaf);
	if (*pfd < 0)
		return *pfd == -ENOENT || *pfd == -ENOTDIR || *pfd == -ELOOP ? 0 : *pfd;
	if (fstatat(*pfd, *leaf, st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 1;
}

static int undo_created(struct undo *u, const struct tg_jrec *r)
{
	const char *leaf;
	struct stat st;
	_cleanup_close_ int pfd = -1;
	int there = find_target(u, r->path, &pfd, &leaf, &st);
	if (there <= 0)
		return there;
	bool seen = r->flags & TG_JREC_F_BORN_SEEN;
	if (seen && !r->meta.ino)
		return 0; /* the call created nothing */
	if (r->meta.ino && !same_object(u, &st, r->meta.dev, r->meta.ino))
		return 0; /* something else lives here now: not ours to remove */
	if (!seen && !unnamed_is_new(u, &st))
		return 0;
	u->unsafe = r->meta.ino == 0;
	if (u->o->before || u->o->nkeep)
		return remove_walk(u, pfd, leaf, r->path);
	if (!S_ISDIR(st.st_mode))
		return unlinkat(pfd, leaf, 0) < 0 && errno != ENOENT ? -errno : 0;
	return tg_fs_remove_tree(pfd, leaf);
}

static int stash_name(char buf[static 32], uint64_t seq)
{
	snprintf(buf, 32, "%llu", (unsigned long long)seq);
	return 0;
}

static int write_bytes(struct undo *u, const struct tg_jrec *r, int fd);

/* The bytes, then the allocation: a fully allocated file (fallocate -l)
 * whose zero ranges the pre-image kept as holes gets its blocks back. */
static int write_content(struct undo *u, const struct tg_jrec *r, int fd)
{
	int e = write_bytes(u, r, fd);
	struct stat st;
	if (!e && (r->flags & TG_JREC_F_ALLOC) && fstat(fd, &st) == 0 &&
	    (uint64_t)st.st_blocks * 512u < r->meta.size && fallocate(fd, 0, 0, (off_t)r->meta.size) < 0 &&
	    errno != EOPNOTSUPP)
		e = -errno;
	return e;
}

static int write_bytes(struct undo *u, const struct tg_jrec *r, int fd)
{
	if (r->flags & TG_JREC_F_REFLINK) {
		char name[32];
		stash_name(name, r->seq);
		_cleanup_close_ int src = openat(u->j->stashfd, name, O_RDONLY | O_CLOEXEC);
		if (src < 0)
			return -errno;
		if (ftruncate(fd, 0) < 0 || ioctl(fd, FICLONE, src) < 0)
			return -errno;
		return ftruncate(fd, (off_t)r->meta.size) < 0 ? -errno : 0;
	}
	if (u->tarfd < 0) {
		u->tarfd = openat(u->j->dirfd, "pre.tar.zst", O_RDONLY | O_CLOEXEC);
		if (u->tarfd < 0)
			return -errno;
	}
	return tg_jtar_extract(u->tarfd, r->tar_off, fd, NULL);
}

/* Open a regular file for writing without following a symlink; a read-only
 * mode is lifted for the write (the record's own mode is put back after). */
static int open_for_restore(int pfd, const char *leaf, int extra)
{
	int fd = openat(pfd, leaf, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | extra, 0600);
	if (fd < 0 && errno == EACCES) {
		struct stat st;
		if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    fchmodat(pfd, leaf, (st.st_mode & 07777) | S_IWUSR, 0) == 0)
			fd = openat(pfd, leaf, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | extra, 0600);
	}
	return fd < 0 ? -errno : fd;
}

static int set_inode_flags(int pfd, const char *leaf, int flags)
{
	_cleanup_close_ int fd = openat(pfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0 ? -errno : 0;
}

/* Clear FS_APPEND_FL and FS_IMMUTABLE_FL (needs CAP_LINUX_IMMUTABLE):
 * the flags it had, or -errno when it had neither or they stay. */
static int lift_inode_flags(int pfd, const char *leaf)
{
	_cleanup_close_ int fd = openat(pfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int flags = 0;
	if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		return -EPERM;
	if (!(flags & (FS_APPEND_FL | FS_IMMUTABLE_FL)))
		return -EPERM;
	int lifted = flags & ~(FS_APPEND_FL | FS_IMMUTABLE_FL);
	return ioctl(fd, FS_IOC_SETFLAGS, &lifted) < 0 ? -EPERM : flags;
}

static int undo_content(struct undo *u, const struct tg_jrec *r)
{
	const char *leaf;
	struct stat st;
	_cleanup_close_ int pfd = -1;
	int there = find_target(u, r->path, &pfd, &leaf, &st);
	if (there <= 0)
		return there;
	if (!S_ISREG(st.st_mode) || untouched(u, &st, &r->meta))
		return 0;
	int e = 0;
	/* A read-only file is made writable for the rewrite (open_for_restore):
	 * an undo journaling itself must capture its content first, which the
	 * capture skips as a write the kernel would refuse. Lift the mode here,
	 * journaled as the chmod it is. */
	if (u->o->before && geteuid() != 0 && faccessat(pfd, leaf, W_OK, AT_EACCESS) < 0 && errno == EACCES &&
	    st.st_uid == geteuid()) {
		e = before(u, TG_OP_CHMOD, r->path, NULL, 0);
		if (!e && fchmodat(pfd, leaf, (st.st_mode & 07777) | S_IWUSR, 0) < 0)
			e = -errno;
	}
	if (!e)
		e = before(u, TG_OP_OPEN, r->path, NULL, O_WRONLY | O_APPEND);
	if (e < 0)
		return e;
	/* Into the same inode: every hard link of the group sees the old bytes. */
	_cleanup_close_ int fd = open_for_restore(pfd, leaf, 0);
	int saved = -1;
	if (fd == -EPERM) {
		/* An append-only (or immutable) file the run appended to as root:
		 * lift the flag for the restore, put it back after. */
		saved = lift_inode_flags(pfd, leaf);
		if (saved >= 0)
			fd = open_for_restore(pfd, leaf, 0);
	}
	e = fd < 0 ? fd : write_content(u, r, fd);
	if (!e)
		e = apply_meta(u, r->path, &r->meta, r->aux, r->aux_len, r->flags & TG_JREC_F_XALL);
	if (saved >= 0)
		set_inode_flags(pfd, leaf, saved);
	return e;
}

/* The same file stashed at the same name by an earlier record: one removal
 * journaled twice. Two tasks' calls on one name each trapped while it held
 * this file (`rm x` while another task's `mv y x` replaced it), and the
 * call that ran second met another object there, or none. The earlier
 * record puts the file back, once the undo of the records between has
 * cleared the name. Only met at a taken name: never in a run whose calls
 * ran in their records' order. */
static bool stashed_before(const struct undo *u, const struct tg_jrec *r)
{
	for (size_t i = 0; i < u->recs.n && u->recs.v[i].seq < r->seq; i++) {
		const struct tg_jrec *o = &u->recs.v[i];
		if (o->kind == TG_JREC_STASHED && o->meta.ino == r->meta.ino && o->meta.dev == r->meta.dev &&
		    !strcmp(o->path, r->path))
			return true;
	}
	return false;
}

static int undo_stashed(struct undo *u, const struct tg_jrec *r)
{
	char name[32];
	stash_name(name, r->seq);
	const char *leaf;
	_cleanup_close_ int pfd = tg_fs_parent(u->j->wsfd, r->path, &leaf);
	if (pfd < 0)
		return pfd;
	struct stat st, sst;
	if (fstatat(u->j->stashfd, name, &sst, AT_SYMLINK_NOFOLLOW) < 0) {
		/* An undo that finished its walk drops its stash links (a replay
		 * after a crash in between): the inode must be back at its name. */
		int e = errno;
		if (e == ENOENT && fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_ino == r->meta.ino && st.st_dev == r->meta.dev)
			return 0;
		return -e;
	}
	/* Taken by another object: a change txguard never saw; fail and keep
	 * the journal (check_stash() refuses to drop an inode never put back). */
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return (st.st_ino == sst.st_ino && st.st_dev == sst.st_dev) || u->in_flight || stashed_before(u, r)
		               ? 0
		               : -EEXIST;
	int e = before(u, TG_OP_LINK, NULL, r->path, 0);
	if (e < 0)
		return e;
	return linkat(u->j->stashfd, name, pfd, leaf, 0) < 0 ? -errno : 0;
}

static int undo_rmdir(struct undo *u, const struct tg_jrec *r)
{
	const char *leaf;
	_cleanup_close_ int pfd = tg_fs_parent(u->j->wsfd, r->path, &leaf);
	if (pfd < 0)
		return pfd;
	int e = before(u, TG_OP_MKDIR, r->path, NULL, 0);
	if (e < 0)
		return e;
	if (mkdirat(pfd, leaf, 0700) == 0) {
		remap_add(u, &r->meta, pfd, leaf, true);
		u->unsafe = true; /* checkpoint now: the remap must be durable */
	} else if (errno != EEXIST) {
		return -errno;
	} else if (u->in_flight) {
		/* The interrupted restore died inside this very step, after its
		 * mkdir: the dir is the one it made. */
		remap_add(u, &r->meta, pfd, leaf, true);
	}
	return apply_meta(u, r->path, &r->meta, r->aux, r->aux_len, r->flags & TG_JREC_F_XALL);
}

static int recreate(struct undo *u, const struct tg_jrec *r, int pfd, const char *leaf)
{
	mode_t type = r->meta.mode & S_IFMT;
	int e = before(u, type == S_IFLNK ? TG_OP_SYMLINK : type == S_IFREG ? TG_OP_OPEN : TG_OP_MKNOD,
	               r->path, NULL, O_WRONLY | O_CREAT | O_EXCL);
	if (e < 0)
		return e;
	if (type == S_IFLNK)
		return symlinkat(r->aux ? r->aux : "", pfd, leaf) < 0 ? -errno : 0;
	if (type != S_IFREG)
		return mknodat(pfd, leaf, r->meta.mode, r->meta.rdev) < 0 ? -errno : 0;
	_cleanup_close_ int fd = open_for_restore(pfd, leaf, O_CREAT | O_EXCL);
	if (fd < 0)
		return fd;
	e = write_content(u, r, fd);
	if (e < 0)
		unlinkat(pfd, leaf, 0); /* never leave a half-written stand-in */
	return e;
}

static void anchor_add(struct undo *u, const struct tg_jmeta *m, int pfd, const char *leaf)
{
	if (u->na == u->capa) {
		size_t cap = u->capa ? u->capa * 2 : 16;
		struct anchor *na = realloc(u->a, cap * sizeof(*na));
		if (!na)
			return; /* only the group's next member becomes a copy */
		u->a = na;
		u->capa = cap;
	}
	int fd = openat(pfd, leaf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		u->a[u->na++] = (struct anchor){ m->dev, m->ino, fd };
}

/* A non-directory named by identity somewhere under dfd (rel: its path):
 * the walk behind link_group, only for groups the restore must rejoin. */
static int find_ino(int dfd, const char *rel, const struct stat *skip, uint64_t dev, uint64_t ino,
                    char **out)
{
	DIR *d = tg_fs_opendir(dfd);
	if (!d)
		return -ENOENT;
	int e = -ENOENT;
	struct dirent *de;
	while (e == -ENOENT && (de = tg_fs_readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		_cleanup_free_ char *p = rel[0] ? tg_asprintf("%s/%s", rel, de->d_name) : tg_strdup(de->d_name);
		if (!p) {
			e = -ENOMEM;
			break;
		}
		if (!S_ISDIR(st.st_mode) && st.st_dev == dev && st.st_ino == ino) {
			*out = steal_pointer(&p);
			e = 0;
		} else if (S_ISDIR(st.st_mode) && !(st.st_dev == skip->st_dev && st.st_ino == skip->st_ino)) {
			_cleanup_close_ int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				e = find_ino(sub, p, skip, dev, ino, out);
		}
	}
	closedir(d);
	return e;
}

/* Originals some record saw with several links: sorted (dev, ino, most
 * links seen, SAVED records), built once per restore. The last name
 * removed was captured with one link: the group is known by its others. */
static int build_groups(struct undo *u)
{
	size_t n = 0;
	for (size_t i = 0; i < u->recs.n; i++)
		n += u->recs.v[i].kind != TG_JREC_CREATED && u->recs.v[i].kind != TG_JREC_BORN && u->recs.v[i].meta.nlink > 1;
	u->groups = calloc(n + 1, 4 * sizeof(uint64_t));
	if (!u->groups)
		return -ENOMEM;
	for (size_t i = 0; i < u->recs.n; i++) {
		const struct tg_jrec *r = &u->recs.v[i];
		if (r->kind == TG_JREC_CREATED || r->kind == TG_JREC_BORN || r->meta.nlink < 2)
			continue;
		uint64_t *g = &u->groups[4 * u->ngroups++];
		g[0] = r->meta.dev;
		g[1] = r->meta.ino;
	}
	qsort(u->groups, u->ngroups, 4 * sizeof(uint64_t), cmp_id);
	size_t w = 0; /* dedupe, then count */
	for (size_t i = 0; i < u->ngroups; i++)
		if (!w || cmp_id(&u->groups[4 * (w - 1)], &u->groups[4 * i]) != 0)
			memmove(&u->groups[4 * w++], &u->groups[4 * i], 4 * sizeof(uint64_t));
	u->ngroups = w;
	for (size_t i = 0; i < u->recs.n; i++) {
		const struct tg_jrec *r = &u->recs.v[i];
		uint64_t key[2] = { r->meta.dev, r->meta.ino };
		uint64_t *g = r->kind == TG_JREC_CREATED || r->kind == TG_JREC_BORN || !u->ngroups ? NULL
		            : bsearch(key, u->groups, u->ngroups, 4 * sizeof(uint64_t), cmp_id);
		if (!g)
			continue;
		g[2] = r->meta.nlink > g[2] ? r->meta.nlink : g[2];
		g[3] += r->kind == TG_JREC_SAVED;
	}
	return 0;
}

static const uint64_t *group_of(const struct undo *u, const struct tg_jmeta *m)
{
	uint64_t key[2] = { m->dev, m->ino };
	return u->ngroups ? bsearch(key, u->groups, u->ngroups, 4 * sizeof(uint64_t), cmp_id) : NULL;
}

static uint32_t group_links(const struct undo *u, const struct tg_jmeta *m)
{
	const uint64_t *g = group_of(u, m);
	return g ? (uint32_t)g[2] : 0;
}

/* Can the original inode of a SAVED record still be in the tree? Only if
 * the run removed fewer of its names than it had, and its number is not
 * one a born object used (it could be a new file's then). */
static bool group_may_live(const struct undo *u, const struct tg_jmeta *m)
{
	uint64_t key[2] = { m->dev, m->ino };
	if (u->nfreed && bsearch(key, u->freed, u->nfreed, 2 * sizeof(uint64_t), cmp_id)) {
		size_t born = 0; /* RMDIR/SAVED free numbers too: only born ones disqualify */
		for (size_t i = 0; i < u->recs.n; i++)
			born += u->recs.v[i].kind == TG_JREC_CREATED && u->recs.v[i].meta.ino == m->ino &&
			        u->recs.v[i].meta.dev == m->dev;
		if (born)
			return false;
	}
	const uint64_t *g = group_of(u, m);
	return g && g[3] < g[2];
}

/* Rejoin a hard-link group (the state dir is on another filesystem, so no
 * stash link kept the inode): link to the member this restore recreated,
 * or to a name of the original still in the tree. 0 when linked, -ENOENT
 * when there is nothing to link to (make a copy). */
static int link_group(struct undo *u, const struct tg_jrec *r, int pfd, const char *leaf)
{
	if (S_ISDIR(r->meta.mode) || group_links(u, &r->meta) < 2)
		return -ENOENT;
	int e = before(u, TG_OP_LINK, NULL, r->path, 0);
	if (e < 0)
		return e;
	for (size_t i = 0; i < u->na; i++) {
		if (u->a[i].dev != r->meta.dev || u->a[i].ino != r->meta.ino)
			continue;
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", u->a[i].fd);
		if (linkat(AT_FDCWD, proc, pfd, leaf, AT_SYMLINK_FOLLOW) == 0)
			return 0;
	}
	if (!group_may_live(u, &r->meta))
		return -ENOENT;
	struct stat sd = { 0 };
	(void)stat(u->j->state_dir, &sd);
	_cleanup_free_ char *found = NULL;
	_cleanup_close_ int ws = openat(u->j->wsfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ws < 0 || find_ino(ws, "", &sd, r->meta.dev, r->meta.ino, &found) < 0)
		return -ENOENT;
	const char *fleaf;
	_cleanup_close_ int fpfd = tg_fs_parent(u->j->wsfd, found, &fleaf);
	if (fpfd < 0 || linkat(fpfd, fleaf, pfd, leaf, 0) < 0)
		return -ENOENT;
	return 0;
}

static int undo_saved(struct undo *u, const struct tg_jrec *r)
{
	const char *leaf;
	_cleanup_close_ int pfd = tg_fs_parent(u->j->wsfd, r->path, &leaf);
	if (pfd < 0)
		return pfd;
	struct stat st;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 0; /* already back (a replayed step) */
	bool lnk = (r->meta.mode & S_IFMT) == S_IFLNK;
	int e = link_group(u, r, pfd, leaf);
	if (e < 0 && e != -ENOENT)
		return e;
	if (e == 0)
		return apply_meta(u, r->path, &r->meta, lnk ? NULL : r->aux, lnk ? 0 : r->aux_len,
		                  r->flags & TG_JREC_F_XALL);
	e = recreate(u, r, pfd, leaf);
	if (!e)
		remap_add(u, &r->meta, pfd, leaf, true);
	if (!e && group_links(u, &r->meta) > 1)
		anchor_add(u, &r->meta, pfd, leaf);
	return e ? e : apply_meta(u, r->path, &r->meta, lnk ? NULL : r->aux, lnk ? 0 : r->aux_len,
	                       r->flags & TG_JREC_F_XALL);
}

/* Decisions about renames, kept in the remap file under device numbers no
 * filesystem has, so that a resumed restore replays them exactly. */
#define TG_MARK_VOID  UINT64_MAX        /* rename seq never happened */
#define TG_MARK_MOVED (UINT64_MAX - 1)  /* rename seq is being moved back */
#define TG_MARK_FAILED (UINT64_MAX - 2) /* step seq failed: not a step in flight */

static void mark(struct undo *u, uint64_t tag, uint64_t seq)
{
	struct remap r = { tag, seq, 0, 0 };
	if (!remap_push(u, &r)) {
		u->err = u->err ? u->err : -ENOMEM;
		return;
	}
	if (u->remapfd >= 0 && tg_write_all(u->remapfd, &r, sizeof(r)) < 0)
		u->err = u->err ? u->err : -EIO;
}

static bool is_mark(const struct remap *r)
{
	return r->odev == TG_MARK_VOID || r->odev == TG_MARK_MOVED || r->odev == TG_MARK_FAILED;
}

static bool marked(const struct undo *u, uint64_t tag, uint64_t seq)
{
	for (size_t i = 0; i < u->nm; i++)
		if (u->m[i].odev == tag && u->m[i].oino == seq)
			return true;
	return false;
}

/* Is the recorded source object at rel? */
static bool holds(struct undo *u, const char *rel, const struct tg_jrec *r)
{
	struct stat st;
	return tg_fs_lstat(u->j->wsfd, rel, &st) == 0 && same_object(u, &st, r->meta.dev, r->meta.ino);
}

/* Directory times under path2 follow the move back, unless the move never
 * happened (a call that failed after it was journaled): then the source is
 * still at path. Only the step in flight of a resumed restore may find it
 * there because it already moved it back. */
static int undo_renamed(struct undo *u, const struct tg_jrec *r)
{
	const char *la, *lb;
	_cleanup_close_ int pa = tg_fs_parent(u->j->wsfd, r->path, &la);
	_cleanup_close_ int pb = tg_fs_parent(u->j->wsfd, r->path2, &lb);
	bool at_dst = pb >= 0 && holds(u, r->path2, r);
	if (at_dst)
		mark(u, TG_MARK_MOVED, r->seq);
	/* MOVED: this restore found it at path2 and moved it back (any replay,
	 * not only the step in flight: a step after a failed one is replayed). */
	if (at_dst || marked(u, TG_MARK_MOVED, r->seq) || !holds(u, r->path, r))
		translate_rename(u, r);
	else
		mark(u, TG_MARK_VOID, r->seq); /* never happened: a resumed dry pass must agree */
	if (!at_dst || pa < 0)
		return 0; /* never happened, or already undone */
	unsigned flags = r->flags & TG_JREC_F_EXCHANGE ? RENAME_EXCHANGE : RENAME_NOREPLACE;
	int e = before(u, TG_OP_RENAME, r->path2, r->path, (int)flags);
	if (e < 0)
		return e;
	return renameat2(pb, lb, pa, la, flags) < 0 ? -errno : 0;
}

static int undo_meta(struct undo *u, const struct tg_jrec *r)
{
	return apply_meta(u, r->path, &r->meta, r->aux, r->aux_len, r->flags & TG_JREC_F_XALL);
}

/* The restore step of each record kind; NULL: nothing to undo (BORN only
 * tells what a CREATED made). */
static int (*const undo_by_kind[])(struct undo *u, const struct tg_jrec *r) = {
	[TG_JREC_CREATED] = undo_created,
	[TG_JREC_BORN] = NULL,
	[TG_JREC_CONTENT] = undo_content,
	[TG_JREC_META] = undo_meta,
	[TG_JREC_STASHED] = undo_stashed,
	[TG_JREC_RMDIR] = undo_rmdir,
	[TG_JREC_RENAMED] = undo_renamed,
	[TG_JREC_SAVED] = undo_saved,
};
_Static_assert(TG_ARRAY_SIZE(undo_by_kind) == TG_JREC_KIND_COUNT, "an undo step for every record kind");

static int undo_one(struct undo *u, const struct tg_jrec *r)
{
	bool known = (unsigned)r->kind < TG_JREC_KIND_COUNT; /* the decoder saw to it */
	return known && undo_by_kind[r->kind] ? undo_by_kind[r->kind](u, r) : 0;
}

/* The deferred list of directory times, built the same way whether the step
 * runs or is a step an interrupted restore already finished (dry). */
static void dry_one(struct undo *u, const struct tg_jrec *r)
{
	if (r->kind == TG_JREC_RENAMED && !marked(u, TG_MARK_VOID, r->seq))
		translate_rename(u, r);
	else if ((r->kind == TG_JREC_META || r->kind == TG_JREC_RMDIR) && S_ISDIR(r->meta.mode))
		defer_times(u, r->path, &r->meta);
}

uint64_t tg_journal_read_progress(const struct tg_journal *j)
{
	char buf[32] = { 0 };
	_cleanup_close_ int fd = openat(j->dirfd, "progress", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 21)
		return UINT64_MAX;
	return strtoull(buf, NULL, 10);
}

/* The progress file holds the lowest seq already undone, as a fixed-width
 * decimal so every update is one pwrite in place. It is written after every
 * step (a killed process loses nothing of the page cache, so a resumed
 * restore starts exactly at the step in flight) and made durable every
 * TG_CHECKPOINT_EVERY steps and after steps that must not be replayed. */
static int progress_open(struct undo *u)
{
	u->progfd = openat(u->j->dirfd, "progress", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	return u->progfd < 0 ? -errno : 0;
}

static int progress_write(struct undo *u, uint64_t done_from, bool sync)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "%020llu\n", (unsigned long long)done_from);
	/* UINT64_MAX: a step failed, the resume point stays where it is. */
	if (done_from != UINT64_MAX && pwrite(u->progfd, buf, 21, 0) != 21)
		return -EIO;
	if (!sync)
		return 0;
	if (u->remapfd >= 0 && fdatasync(u->remapfd) < 0)
		return -errno;
	return fdatasync(u->progfd) < 0 ? -errno : 0;
}

/* Only the owner (or root) may set explicit times: a directory of another
 * user's that an unprivileged run changed (a shared workspace root) keeps
 * its new mtime rather than fail the whole restore and leave it stuck. */
static int times_result(int r, const struct stat *st)
{
	if (r == 0)
		return 0;
	if (errno == EPERM && geteuid() != 0 && st && st->st_uid != geteuid())
		return 0;
	return -errno;
}

static void final_pass(struct undo *u)
{
	/* In collected order: the earliest record of a directory is applied last. */
	for (size_t i = 0; i < u->nd; i++) {
		const char *rel = u->d[i].path, *leaf;
		if (u->o->before)
			fail(u, before(u, TG_OP_UTIMES, rel, NULL, 0));
		if (!rel[0]) {
			struct stat wst;
			bool have = fstat(u->j->wsfd, &wst) == 0;
			fail(u, times_result(futimens(u->j->wsfd, u->d[i].ts), have ? &wst : NULL));
			continue;
		}
		_cleanup_close_ int pfd = tg_fs_parent(u->j->wsfd, rel, &leaf);
		struct stat st;
		/* Only the directory the record describes (or what the restore
		 * recreated of it): a name can end up on another directory. */
		if (pfd < 0 || fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    !same_object(u, &st, u->d[i].dev, u->d[i].ino))
			continue;
		fail(u, times_result(utimensat(pfd, leaf, u->d[i].ts, AT_SYMLINK_NOFOLLOW), &st));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every kept-alive inode that existed before the run must be back in the
 * tree (a second link besides the stash's) before the journal may go: a
 * restore that could not put one back keeps the journal. */
static int check_stash(struct undo *u)
{
	size_t nb = 0;
	_cleanup_free_ uint64_t *born = malloc((u->recs.n + 1) * sizeof(*born));
	if (!born)
		return -ENOMEM;
	for (size_t i = 0; i < u->recs.n; i++)
		if (u->recs.v[i].kind == TG_JREC_CREATED && u->recs.v[i].meta.ino)
			born[nb++] = u->recs.v[i].meta.ino;
	qsort(born, nb, sizeof(*born), cmp_u64);
	for (size_t i = 0; i < u->recs.n; i++) {
		const struct tg_jrec *r = &u->recs.v[i];
		char name[32];
		struct stat st;
		if (r->kind != TG_JREC_STASHED || (r->flags & TG_JREC_F_BORN))
			continue;
		stash_name(name, r->seq);
		if (fstatat(u->j->stashfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_nlink > 1 ||
		    bsearch(&r->meta.ino, born, nb, sizeof(*born), cmp_u64))
			continue;
		return -EEXIST;
	}
	return 0;
}

/* A restored inode is back at its name: the stash's link to it must go, or
 * the workspace and the history share an inode (a later edit in the tree
 * would edit the history's copy, and the link count would say 2). The
 * rollback of a failed run removes its whole dir; an undone run's dir stays
 * as history, so its links are dropped here, before it is marked undone. */
static void drop_stash_links(struct undo *u)
{
	for (size_t i = 0; i < u->recs.n; i++) {
		const struct tg_jrec *r = &u->recs.v[i];
		char name[32];
		if (r->kind != TG_JREC_STASHED)
			continue;
		stash_name(name, r->seq);
		if (unlinkat(u->j->stashfd, name, 0) < 0 && errno != ENOENT)
			fail(u, -errno);
	}
	if (fsync(u->j->stashfd) < 0)
		fail(u, -errno);
}

static uint64_t first_step(const struct undo *u, uint64_t done_from)
{
	for (size_t i = u->recs.n; i-- > 0;)
		if (u->recs.v[i].seq < done_from)
			return u->recs.v[i].seq;
	return 0;
}

static void walk(struct undo *u, uint64_t done_from, void (*progress)(void *, size_t, size_t), void *ud)
{
	size_t since = 0;
	bool frozen = false;
	for (size_t i = u->recs.n; i-- > 0;) {
		const struct tg_jrec *r = &u->recs.v[i];
		if (r->seq >= done_from) {
			dry_one(u, r);
			continue;
		}
		u->unsafe = false;
		if (r->kind != TG_JREC_RENAMED)
			dry_one(u, r);
		int e = undo_one(u, r);
		u->in_flight = false;
		if (tg_journal_debug > 1 || (tg_journal_debug && e < 0))
			fprintf(stderr, "txguard journal: undo %llu (%s %s): %s\n", (unsigned long long)r->seq,
			        tg_jrec_kind_name(r->kind), r->path, strerror(-e));
		if (e < 0) {
			/* Never marked done: the resume point stays at the first
			 * failed step (later steps run now and replay then), and a
			 * resumed restore must not take it for a step in flight. */
			mark(u, TG_MARK_FAILED, r->seq);
			frozen = true;
		}
		fail(u, e);
		bool sync = u->unsafe || e < 0 || ++since >= TG_CHECKPOINT_EVERY;
		fail(u, progress_write(u, frozen ? UINT64_MAX : r->seq, sync));
		if (sync)
			since = 0;
		if (progress)
			progress(ud, u->recs.n - i, u->recs.n);
	}
}

int tg_journal_rollback(struct tg_journal *j, void (*progress)(void *ud, size_t done, size_t total), void *ud)
{
	return tg_journal_rollback_after(j, NULL, progress, ud);
}

int tg_journal_rollback_after(struct tg_journal *j, const char *const *newer,
                              void (*progress)(void *ud, size_t done, size_t total), void *ud)
{
	const struct tg_restore_opts o = { .newer = newer, .progress = progress, .progress_ud = ud };
	return tg_journal_restore(j, &o);
}

int tg_journal_restore(struct tg_journal *j, const struct tg_restore_opts *o)
{
	const char *const *newer = o->newer;
	struct undo u = { .j = j, .o = o, .tarfd = -1, .remapfd = -1, .progfd = -1 };
	bool was_committed = j->info.ended_ns != 0;
	u.replay = tg_journal_state(j) == TG_JSTATE_ROLLING_BACK;
	tg_journal_drop_reserve(j); /* the room info.tmp, progress and remap need */
	/* A committed run's state changes inside its own dir, which leaves
	 * txn/'s marker valid: it goes first, durably (journal.h). */
	int e = tg_journal_clean_drop(j->state_dir, true);
	if (!e)
		e = tg_journal_set_state(j, TG_JSTATE_ROLLING_BACK);
	if (!e)
		e = tg_jrecs_load(j, &u.recs, true);
	if (e < 0) {
		undo_clear(&u);
		return e;
	}
	if (was_committed)
		remap_import_newer(&u, newer);
	remap_load(&u);
	e = build_known(&u);
	if (!e)
		e = build_groups(&u);
	if (e < 0) {
		undo_clear(&u);
		return e;
	}
	e = progress_open(&u);
	if (e < 0) {
		undo_clear(&u);
		return e;
	}
	uint64_t done_from = tg_journal_read_progress(j);
	/* The first step to run was in flight when a restore was interrupted,
	 * unless that restore ran it to a failure. */
	u.in_flight = u.replay && !marked(&u, TG_MARK_FAILED, first_step(&u, done_from));
	walk(&u, done_from, o->progress, o->progress_ud);
	final_pass(&u);
	e = u.err ? u.err : check_stash(&u);
	if (!e && was_committed) {
		drop_stash_links(&u);
		e = u.err;
	} else if (!e) {
		e = remap_keep(&u);
	}
	undo_clear(&u);
	if (e < 0)
		return e;
	return tg_journal_set_state(j, was_committed ? TG_JSTATE_UNDONE : TG_JSTATE_ROLLED_BACK);
}
