/* journal.c — one transaction's on-disk journal: records, captures, info
 * file, commit. Restore lives in journal/undo.c, reading back what a run
 * leaves (info, post-state, pre-images) in journal/post.c.
 * Layout and reasons: journal.h and docs/journal.md.
 */
#include "journal.h"

#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/fs.h"
#include "journal_int.h"
#include "tar.h"
#include "base/util.h"

#define TG_JREC_MAGIC 0x524a4754u /* "TGJR" little-endian */
#define TG_JREC_MAX (64u << 20)

/* ---- CRC32 (IEEE), table built once ---- */

/* CRC-32 as zlib's crc32() computes it, eight bytes a step (slicing-by-8:
 * crc_table[k][b] is the CRC of byte b followed by k zero bytes). Every
 * pass over the journal checks every record: a commit after 30,000
 * removals spent 5% of its tracer's time here a byte at a time. */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (int t = 1; t < 8; t++)
		for (uint32_t i = 0; i < 256; i++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

uint32_t tg_crc32(uint32_t crc, const void *buf, size_t len)
{
	(void)pthread_once(&crc_once, crc_init);
	const unsigned char *p = buf;
	crc = ~crc;
	for (; len >= 8; len -= 8, p += 8) {
		uint32_t lo, hi;
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo = le32toh(lo) ^ crc;
		hi = le32toh(hi);
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^ crc_table[5][(lo >> 16) & 0xff] ^
		      crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
	}
	for (; len; len--, p++)
		crc = crc_table[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- record encoding: little-endian fixed fields, then u32-length strings ---- */

struct wbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void put(struct wbuf *b, const void *v, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = (b->cap + n) * 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

static void put_u32(struct wbuf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct wbuf *b, uint64_t v) { put(b, &v, 8); }
static void put_bytes(struct wbuf *b, const char *s, size_t n)
{
	put_u32(b, (uint32_t)n);
	if (n)
		put(b, s, n);
}

int tg_jrec_encode(const struct tg_jrec *r, char **buf, size_t *len)
{
	struct wbuf b = { 0 };
	put_u32(&b, TG_JREC_MAGIC);
	put_u32(&b, 0); /* payload length, patched below */
	put_u32(&b, 0); /* crc */
	put_u32(&b, (uint32_t)r->kind);
	put_u32(&b, r->flags);
	put_u64(&b, r->seq);
	put_u64(&b, r->ref);
	const struct tg_jmeta *m = &r->meta;
	put_u32(&b, m->mode);
	put_u32(&b, m->uid);
	put_u32(&b, m->gid);
	put_u32(&b, m->nlink); /* was padding: older records read 0 */
	put_u64(&b, m->size);
	put_u64(&b, m->dev);
	put_u64(&b, m->ino);
	put_u64(&b, m->rdev);
	put_u64(&b, (uint64_t)m->atime.tv_sec);
	put_u64(&b, (uint64_t)m->atime.tv_nsec);
	put_u64(&b, (uint64_t)m->mtime.tv_sec);
	put_u64(&b, (uint64_t)m->mtime.tv_nsec);
	put_u64(&b, r->tar_off);
	put_bytes(&b, r->path, r->path ? strlen(r->path) : 0);
	put_bytes(&b, r->path2, r->path2 ? strlen(r->path2) : 0);
	put_bytes(&b, r->aux, r->aux_len);
	if (b.err) {
		free(b.p);
		return b.err;
	}
	uint32_t plen = (uint32_t)(b.len - 12);
	uint32_t crc = tg_crc32(0, b.p + 12, plen);
	memcpy(b.p + 4, &plen, 4);
	memcpy(b.p + 8, &crc, 4);
	*buf = b.p;
	*len = b.len;
	return 0;
}

struct rbuf {
	const char *p;
	size_t len, pos;
	bool bad;
};

static void get(struct rbuf *b, void *v, size_t n)
{
	if (b->bad || b->pos + n > b->len) {
		b->bad = true;
		memset(v, 0, n);
		return;
	}
	memcpy(v, b->p + b->pos, n);
	b->pos += n;
}

static uint32_t get_u32(struct rbuf *b) { uint32_t v; get(b, &v, 4); return v; }
static uint64_t get_u64(struct rbuf *b) { uint64_t v; get(b, &v, 8); return v; }

/* A string field; NULL for empty when nul_empty (path2), else "". */
static char *get_bytes(struct rbuf *b, size_t *n, bool nul_empty)
{
	uint32_t l = get_u32(b);
	if (b->bad || b->pos + l > b->len) {
		b->bad = true;
		return NULL;
	}
	if (n)
		*n = l;
	if (l == 0 && nul_empty)
		return NULL;
	char *s = malloc((size_t)l + 1);
	if (!s) {
		b->bad = true;
		return NULL;
	}
	memcpy(s, b->p + b->pos, l);
	s[l] = '\0';
	b->pos += l;
	return s;
}

ssize_t tg_jrec_decode(const char *buf, size_t len, struct tg_jrec *out)
{
	memset(out, 0, sizeof(*out));
	if (len == 0)
		return 0;
	uint32_t magic, plen, crc;
	if (len < 12)
		return -EBADMSG;
	memcpy(&magic, buf, 4);
	memcpy(&plen, buf + 4, 4);
	memcpy(&crc, buf + 8, 4);
	if (magic != TG_JREC_MAGIC || plen > TG_JREC_MAX || 12 + (size_t)plen > len ||
	    tg_crc32(0, buf + 12, plen) != crc)
		return -EBADMSG;
	struct rbuf b = { buf + 12, plen, 0, false };
	out->kind = (enum tg_jrec_kind)get_u32(&b);
	out->flags = get_u32(&b);
	out->seq = get_u64(&b);
	out->ref = get_u64(&b);
	struct tg_jmeta *m = &out->meta;
	m->mode = get_u32(&b);
	m->uid = get_u32(&b);
	m->gid = get_u32(&b);
	m->nlink = get_u32(&b);
	m->size = get_u64(&b);
	m->dev = get_u64(&b);
	m->ino = get_u64(&b);
	m->rdev = get_u64(&b);
	m->atime.tv_sec = (time_t)get_u64(&b);
	m->atime.tv_nsec = (long)get_u64(&b);
	m->mtime.tv_sec = (time_t)get_u64(&b);
	m->mtime.tv_nsec = (long)get_u64(&b);
	out->tar_off = get_u64(&b);
	out->path = get_bytes(&b, NULL, false);
	out->path2 = get_bytes(&b, NULL, true);
	out->aux = get_bytes(&b, &out->aux_len, true);
	/* A CRC only proves the bytes are what was written, not that a writer
	 * wrote sense: an unknown kind, or a RENAMED without its destination,
	 * would send the undo through a NULL path2. */
	bool kind_ok = out->kind >= TG_JREC_CREATED && out->kind < TG_JREC_KIND_COUNT;
	if (b.bad || !out->path || !kind_ok || (out->kind == TG_JREC_RENAMED && !out->path2)) {
		tg_jrec_clear(out);
		return -EBADMSG;
	}
	return (ssize_t)(12 + plen);
}

void tg_jrec_clear(struct tg_jrec *r)
{
	if (!r)
		return;
	free(r->path);
	free(r->path2);
	free(r->aux);
	memset(r, 0, sizeof(*r));
}

static const char *const jrec_kind_names[] = {
	[TG_JREC_CREATED] = "created", [TG_JREC_BORN] = "born",
	[TG_JREC_CONTENT] = "content", [TG_JREC_META] = "meta",
	[TG_JREC_STASHED] = "stashed", [TG_JREC_RMDIR] = "rmdir",
	[TG_JREC_RENAMED] = "renamed", [TG_JREC_SAVED] = "saved",
};
_Static_assert(TG_ARRAY_SIZE(jrec_kind_names) == TG_JREC_KIND_COUNT, "a name for every record kind");

const char *tg_jrec_kind_name(enum tg_jrec_kind k)
{
	return (unsigned)k < TG_JREC_KIND_COUNT && jrec_kind_names[k] ? jrec_kind_names[k] : "unknown";
}

void tg_jmeta_from_stat(struct tg_jmeta *m, const struct stat *st)
{
	m->mode = st->st_mode;
	m->uid = st->st_uid;
	m->gid = st->st_gid;
	m->size = (uint64_t)st->st_size;
	m->dev = st->st_dev;
	m->ino = st->st_ino;
	m->rdev = st->st_rdev;
	m->nlink = st->st_nlink > UINT32_MAX ? UINT32_MAX : (uint32_t)st->st_nlink;
	m->atime = st->st_atim;
	m->mtime = st->st_mtim;
}

/* The room set aside for the way back (see write_reserve). */
#define TG_RESERVE_NAME "reserve"
#define TG_RESERVE_BYTES (64u * 1024u)

/* ---- journal object ---- */

static int open_dirs(struct tg_journal *j)
{
	j->dirfd = open(j->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (j->dirfd < 0)
		return -errno;
	if (mkdirat(j->dirfd, "stash", 0700) < 0 && errno != EEXIST)
		return -errno;
	j->stashfd = openat(j->dirfd, "stash", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (j->stashfd < 0)
		return -errno;
	j->logfd = openat(j->dirfd, "log", O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (j->logfd < 0)
		return -errno;
	struct stat st;
	if (fstat(j->logfd, &st) < 0)
		return -errno;
	j->log_end = (uint64_t)st.st_size;
	/* What an earlier process wrote may not be on disk yet. */
	j->log_unsynced = st.st_size > 0;
	return 0;
}

static int open_workspace(struct tg_journal *j)
{
	j->wsfd = open(j->info.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return j->wsfd < 0 ? -errno : 0;
}

static struct tg_journal *journal_new(void)
{
	struct tg_journal *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->wsfd = j->dirfd = j->stashfd = j->logfd = -1;
	return j;
}

void tg_journal_free(struct tg_journal *j)
{
	if (!j)
		return;
	int saved = errno;
	tg_jtar_free(j->tar);
	for (int *fd = &j->wsfd; fd <= &j->logfd; fd++)
		if (*fd >= 0)
			close(*fd);
	tg_txinfo_clear(&j->info);
	free(j->state_dir);
	free(j->dir);
	free(j);
	errno = saved;
}

static char *new_id(void)
{
	uint64_t now = tg_wall_ns();
	struct tm tm;
	tg_utc((int64_t)(now / 1000000000u), &tm);
	uint32_t rnd = 0;
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (uint32_t)(now ^ (uint64_t)getpid());
	return tg_asprintf("%04d%02d%02dT%02d%02d%02d.%03u-%06x", tm.tm_year + 1900, tm.tm_mon + 1,
	                   tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	                   (unsigned)(now / 1000000u % 1000u), rnd & 0xffffffu);
}

/* len zero bytes, one page of them repeated: one writev for the reserve. */
static int write_zeros(int fd, size_t len)
{
	static const char zero[4096];
	struct iovec iov[16];
	while (len > 0) {
		int n = 0;
		for (size_t left = len; left > 0 && n < (int)TG_ARRAY_SIZE(iov); n++) {
			iov[n] = (struct iovec){ (void *)zero, left < sizeof(zero) ? left : sizeof(zero) };
			left -= iov[n].iov_len;
		}
		ssize_t w = writev(fd, iov, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -ENOSPC;
		len -= (size_t)w;
	}
	return 0;
}

/* Room kept for the way back. A restore needs new space of its own (info.tmp,
 * progress, remap, recreated directories): on a journal filesystem filled up
 * by the run's captures it would fail, and the transaction would stay
 * "rolling-back" for good. The reserve is written with real bytes (a sparse
 * or fallocate'd-then-punched file would hold nothing) and released first
 * thing by rollback and commit. */
static int write_reserve(struct tg_journal *j)
{
	int fd = openat(j->dirfd, TG_RESERVE_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int e = write_zeros(fd, TG_RESERVE_BYTES);
	/* Where the start could not be stamped in the workspace (stamp_start),
	 * it is the coarse clock's, which may lag the filesystem's stamps by a
	 * tick: the reserve's ctime lowers it to the filesystem's idea. */
	struct stat st;
	if (!e && !j->start_stamped && fstat(fd, &st) == 0) {
		uint64_t c = (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec;
		if (c < j->info.started_ns)
			j->info.started_ns = c;
	}
	close(fd);
	if (e < 0)
		(void)unlinkat(j->dirfd, TG_RESERVE_NAME, 0);
	return e;
}

void tg_journal_drop_reserve(struct tg_journal *j)
{
	if (j->dirfd >= 0)
		(void)unlinkat(j->dirfd, TG_RESERVE_NAME, 0);
}

/* The dir, its files and its entry in txn/, durable before any record counts. */
static int make_dir(struct tg_journal *j)
{
	/* Not clean from here on: durable with the dir, by txn/'s fsync below. */
	int r = tg_journal_clean_drop(j->state_dir, false);
	/* Where txn/ is there already (every run but the first), one mkdir;
	 * its own entry is as durable as the run that made it left it. A
	 * name that is there already is another run's: never share it. */
	bool made_txn = false;
	if (!r && mkdir(j->dir, 0700) < 0) {
		r = errno == ENOENT ? 0 : -errno;
		made_txn = !r;
		if (!r)
			r = tg_fs_mkdir_p(j->dir);
	}
	if (!r)
		r = open_dirs(j);
	if (!r)
		r = write_reserve(j);
	if (!r)
		r = tg_journal_write_info(j);
	_cleanup_close_ int sfd = r ? -1 : open(j->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!r) {
		_cleanup_close_ int tfd = openat(sfd, "txn", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (tfd < 0 || tg_fs_fsync_dir(tfd) < 0 || (made_txn && tg_fs_fsync_dir(sfd) < 0))
			r = -EIO;
	}
	return r;
}

/* Files get their times from the coarse clock, which may lag the wall
 * clock by a tick: "made during the transaction" (ctime >= start) needs the
 * earlier of the two. */
static uint64_t start_ns(void)
{
	struct timespec c;
	uint64_t now = tg_wall_ns();
	if (clock_gettime(CLOCK_REALTIME_COARSE, &c) < 0)
		return now;
	uint64_t coarse = (uint64_t)c.tv_sec * 1000000000u + (uint64_t)c.tv_nsec;
	return coarse < now ? coarse : now;
}

/* The workspace filesystem's own stamp for "now", from a nameless file
 * made there and dropped: what anything the run changes will be stamped at
 * or after, and anything changed before strictly before (undo's untouched()
 * takes "ctime < start" for "not changed by the run"). The coarse clock is
 * not that: with multigrain timestamps (Linux 6.13+) a stamp follows the
 * latest fine-grained one handed out anywhere and runs ahead of it, by up
 * to a few ms on an idle tickless machine. Nor is the new file's own birth:
 * it is that latest stamp itself, which a file changed just before the run
 * (a chattr, then txguard) may carry too. So the file's ctime is queried,
 * which makes its next change fine-grained (later than every stamp handed
 * out so far, and the floor of every one after), and changed by a chmod.
 * Where the filesystem has no multigrain stamps, that is its coarse stamp,
 * as before. Without O_TMPFILE (or on a read-only workspace) start_ns()
 * stands, lowered by the reserve's ctime. */
static void stamp_start(struct tg_journal *j)
{
	_cleanup_close_ int fd = openat(j->wsfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	struct statx sx;
	if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, STATX_BTIME | STATX_CTIME, &sx) < 0 ||
	    !(sx.stx_mask & (STATX_BTIME | STATX_CTIME)))
		return;
	const struct statx_timestamp *t = sx.stx_mask & STATX_BTIME ? &sx.stx_btime : &sx.stx_ctime;
	struct statx after;
	if (fchmod(fd, 0600) == 0 && statx(fd, "", AT_EMPTY_PATH, STATX_CTIME, &after) == 0 &&
	    (after.stx_mask & STATX_CTIME))
		t = &after.stx_ctime;
	j->info.started_ns = (uint64_t)t->tv_sec * 1000000000u + t->tv_nsec;
	j->start_stamped = true;
}

static int journal_prepare(const char *state_dir, const char *workspace, const char *command,
                           const char *tx, struct tg_journal **out)
{
	struct tg_journal *j = journal_new();
	if (!j)
		return -ENOMEM;
	j->state_dir = tg_strdup(state_dir);
	j->info.id = new_id();
	j->info.workspace = tg_strdup(workspace);
	j->info.command = tg_strdup(command ? command : "");
	j->info.state = TG_JSTATE_OPEN;
	j->info.tx = tx ? tg_strdup(tx) : NULL;
	j->info.started_ns = start_ns();
	j->dir = j->info.id ? tg_asprintf("%s/txn/%s", state_dir, j->info.id) : NULL;
	int r = j->state_dir && j->dir && j->info.workspace && j->info.command &&
	        (!tx || j->info.tx) ? 0 : -ENOMEM;
	if (!r)
		r = open_workspace(j);
	if (!r)
		stamp_start(j);
	if (r < 0) {
		tg_journal_free(j);
		return r;
	}
	*out = j;
	return 0;
}

int tg_journal_create_deferred(const char *state_dir, const char *workspace, const char *command,
                               const char *tx, struct tg_journal **out)
{
	int r = journal_prepare(state_dir, workspace, command, tx, out);
	if (!r)
		(*out)->deferred = true;
	return r;
}

int tg_journal_create(const char *state_dir, const char *workspace, const char *command,
                      const char *tx, struct tg_journal **out)
{
	int r = journal_prepare(state_dir, workspace, command, tx, out);
	if (!r && (r = make_dir(*out)) < 0) {
		tg_journal_free(*out);
		*out = NULL;
	}
	return r;
}

bool tg_journal_on_disk(const struct tg_journal *j)
{
	return !j->deferred;
}

int tg_journal_load(const char *state_dir, const char *id, struct tg_journal **out)
{
	if (!id[0] || strchr(id, '/') || id[0] == '.')
		return -EINVAL;
	struct tg_journal *j = journal_new();
	if (!j)
		return -ENOMEM;
	j->state_dir = tg_strdup(state_dir);
	j->dir = tg_asprintf("%s/txn/%s", state_dir, id);
	int r = j->state_dir && j->dir ? 0 : -ENOMEM;
	if (!r)
		r = tg_journal_read_info(state_dir, id, &j->info);
	if (!r)
		r = open_dirs(j);
	if (!r)
		r = open_workspace(j);
	if (!r) {
		/* Continue numbering after the last durable record. */
		struct tg_jrec last = { 0 };
		r = tg_journal_foreach(j, tg_journal_keep_last, &last);
		j->seq = last.seq;
		tg_jrec_clear(&last);
	}
	if (r < 0) {
		tg_journal_free(j);
		return r;
	}
	*out = j;
	return 0;
}

int tg_journal_keep_last(void *ud, const struct tg_jrec *r)
{
	struct tg_jrec *last = ud;
	last->seq = r->seq;
	return 0;
}

const char *tg_journal_id(const struct tg_journal *j) { return j->info.id; }
const char *tg_journal_workspace(const struct tg_journal *j) { return j->info.workspace; }
enum tg_jstate tg_journal_state(const struct tg_journal *j) { return j->info.state; }
uint64_t tg_journal_last_seq(const struct tg_journal *j) { return j->seq; }
uint64_t tg_journal_started_ns(const struct tg_journal *j) { return j->info.started_ns; }
uint64_t tg_journal_bytes_saved(const struct tg_journal *j) { return j->info.bytes_saved; }

int tg_journal_lstat(const struct tg_journal *j, const char *rel, struct stat *st)
{
	return tg_fs_lstat(j->wsfd, rel, st);
}

int tg_journal_lstat_cached(const struct tg_journal *j, struct tg_fs_dircache *c, const char *rel,
                            struct stat *st)
{
	return tg_fs_lstat_cached(j->wsfd, c, rel, st);
}

int tg_journal_lstatx_cached(const struct tg_journal *j, struct tg_fs_dircache *c, const char *rel,
                             struct stat *st, struct statx *sx)
{
	return tg_fs_lstatx_cached(j->wsfd, c, rel, st, sx);
}

int tg_journal_parent(const struct tg_journal *j, const char *rel, const char **leaf)
{
	return tg_fs_parent(j->wsfd, rel, leaf);
}

/* The bytes beneath dfd. top: dfd is that journal's dir, whose stash is
 * counted once per record: only a record adds to it (a pre-image, a kept
 * inode), and commit, which writes post and the tar's end, adds none. So
 * the size commit records costs a stat of the few files at the top, not
 * one per pre-image again. */
static uint64_t du_fd(int dfd, struct tg_journal *top)
{
	DIR *d = tg_fs_opendir(dfd);
	if (!d)
		return 0;
	uint64_t total = 0;
	struct dirent *de;
	while ((de = tg_fs_readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		bool stash = top && S_ISDIR(st.st_mode) && strcmp(de->d_name, "stash") == 0;
		if (stash && top->stash_du_valid && top->stash_du_seq == top->seq) {
			total += top->stash_du;
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			uint64_t n = sub >= 0 ? du_fd(sub, NULL) : 0;
			if (sub >= 0)
				close(sub);
			if (stash && sub >= 0) {
				top->stash_du = n;
				top->stash_du_seq = top->seq;
				top->stash_du_valid = true;
			}
			total += n;
		} else {
			total += (uint64_t)st.st_blocks * 512u;
		}
	}
	closedir(d);
	return total;
}

/* The reserve is not the run's journal: an open transaction's summary must
 * not report it, nor a history bound count it. */
uint64_t tg_journal_disk_bytes(struct tg_journal *j)
{
	/* Files are added with records only (stash, tar, log), so the same
	 * last seq means the same size; commit drops the memo (post, tar end). */
	if (j->du_valid && j->du_seq == j->seq)
		return j->du_bytes;
	if (j->deferred)
		return 0;
	uint64_t total = du_fd(j->dirfd, j);
	struct stat st;
	if (fstatat(j->dirfd, TG_RESERVE_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		uint64_t r = (uint64_t)st.st_blocks * 512u;
		total = total > r ? total - r : 0;
	}
	j->du_bytes = total;
	j->du_seq = j->seq;
	j->du_valid = true;
	return total;
}

/* ---- appending records ---- */

/* Append one record; durable on return when sync. A failed append is cut off
 * so later records never sit behind a torn one. */
/* TG_SYNC_BATCH: at most one fdatasync per TG_SYNC_BATCH_NS; records in
 * between are in the page cache, safe from a killed txguard, not from a
 * power cut. */
#define TG_SYNC_BATCH_NS 20000000u

static bool want_sync(struct tg_journal *j)
{
	if (j->sync != TG_SYNC_BATCH)
		return true;
	uint64_t now = tg_now_ns();
	if (now - j->last_sync < TG_SYNC_BATCH_NS)
		return false;
	j->last_sync = now;
	return true;
}

void tg_journal_set_sync(struct tg_journal *j, enum tg_sync_mode mode)
{
	j->sync = mode;
}

int tg_journal_sync(struct tg_journal *j)
{
	/* Nothing written since the last fdatasync returned: it is on disk. */
	if (j->deferred || !j->log_unsynced)
		return 0;
	if (fdatasync(j->logfd) < 0)
		return -errno;
	j->log_unsynced = false;
	return 0;
}

void tg_journal_hold(struct tg_journal *j)
{
	j->held = true;
	j->dirty = false;
}

int tg_journal_release(struct tg_journal *j)
{
	j->held = false;
	if (!j->dirty)
		return 0;
	j->dirty = false;
	if (!want_sync(j))
		return 0;
	return tg_journal_sync(j);
}

static int append(struct tg_journal *j, struct tg_jrec *r, bool sync)
{
	r->seq = j->seq + 1;
	/* Every blob this version writes holds all the namespaces it journals. */
	if (r->kind == TG_JREC_META || r->kind == TG_JREC_CONTENT || r->kind == TG_JREC_RMDIR ||
	    (r->kind == TG_JREC_SAVED && (r->meta.mode & S_IFMT) != S_IFLNK))
		r->flags |= TG_JREC_F_XALL;
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int e = tg_jrec_encode(r, &buf, &len);
	if (e < 0)
		return e;
	j->log_unsynced = true; /* even a failed write may have written some */
	e = tg_write_all(j->logfd, buf, len);
	if (!e && sync && j->held) {
		j->dirty = true; /* synced once, when the call's captures are all written */
		sync = false;
	}
	if (!e && sync && want_sync(j))
		e = tg_journal_sync(j);
	if (e < 0) {
		if (ftruncate(j->logfd, (off_t)j->log_end) < 0) {
			/* The torn tail stays; readers stop at it and so do we. */
			j->broken = true;
		}
		return e;
	}
	j->log_end += len;
	j->seq = r->seq;
	return 0;
}

/* Every capture starts here: a deferred journal gets its dir now, before
 * its first record. A dir that could not be made (a full disk) fails this
 * call and is taken away again: the next capture tries anew. */
static int check_usable(struct tg_journal *j)
{
	if (j->broken)
		return -EIO;
	if (!j->deferred)
		return 0;
	int e = make_dir(j);
	if (e == 0) {
		j->deferred = false;
		return 0;
	}
	for (int *fd = &j->dirfd; fd <= &j->logfd; fd++)
		if (*fd >= 0) {
			close(*fd);
			*fd = -1;
		}
	(void)tg_journal_remove_dir(j->state_dir, j->info.id);
	return e;
}

int tg_journal_created(struct tg_journal *j, const char *rel)
{
	return tg_journal_linked(j, rel, NULL);
}

int tg_journal_linked(struct tg_journal *j, const char *rel, const char *from)
{
	struct tg_jrec r = { .kind = TG_JREC_CREATED, .path = (char *)rel, .path2 = (char *)from };
	int e = check_usable(j);
	return e ? e : append(j, &r, true);
}

int tg_journal_born(struct tg_journal *j, uint64_t ref, uint64_t dev, uint64_t ino)
{
	/* Not synced on its own: the next record's fdatasync carries it, and a
	 * rollback that finds it missing falls back to removing by path. */
	struct tg_jrec r = { .kind = TG_JREC_BORN, .ref = ref, .path = (char *)"" };
	r.meta.dev = dev;
	r.meta.ino = ino;
	int e = check_usable(j);
	return e ? e : append(j, &r, false);
}

int tg_journal_void(struct tg_journal *j, uint64_t first, uint64_t last)
{
	/* A BORN, which older readers take for "created nothing" when ref is
	 * a CREATED (true of a failed call) and skip otherwise. Not synced on
	 * its own either: only the summary reads it. */
	struct tg_jrec r = { .kind = TG_JREC_BORN, .flags = TG_JREC_F_VOID, .ref = first, .tar_off = last,
		             .path = (char *)"" };
	int e = check_usable(j);
	return e ? e : append(j, &r, false);
}

static int read_xattrs(struct tg_journal *j, const char *rel, const struct stat *st, char **blob, size_t *len)
{
	*blob = NULL;
	*len = 0;
	if (S_ISLNK(st->st_mode) || S_ISSOCK(st->st_mode))
		return 0;
	_cleanup_close_ int fd = tg_fs_open_path(j->wsfd, rel);
	if (fd < 0)
		return fd;
	return tg_fs_get_xattrs(fd, blob, len);
}

int tg_journal_meta(struct tg_journal *j, const char *rel, const struct stat *st, bool implicit)
{
	struct tg_jrec r = { .kind = TG_JREC_META, .path = (char *)rel };
	r.flags = implicit ? TG_JREC_F_IMPLICIT : 0;
	tg_jmeta_from_stat(&r.meta, st);
	_cleanup_free_ char *x = NULL;
	int e = check_usable(j);
	if (!e)
		e = read_xattrs(j, rel, st, &x, &r.aux_len);
	r.aux = x;
	return e ? e : append(j, &r, true);
}

static int ensure_tar(struct tg_journal *j)
{
	return j->tar ? 0 : tg_jtar_open(j->dirfd, "pre.tar.zst", &j->tar);
}

/* FICLONE src into stash/<name>: 0, or -EOPNOTSUPP when the filesystem cannot. */
static int try_reflink(struct tg_journal *j, int srcfd, const char *name)
{
	if (j->no_reflink)
		return -EOPNOTSUPP;
	int fd = openat(j->stashfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int e = ioctl(fd, FICLONE, srcfd) < 0 ? -errno : 0;
	if (!e && fsync(fd) < 0)
		e = -errno;
	close(fd);
	if (!e)
		return tg_fs_fsync_dir(j->stashfd);
	unlinkat(j->stashfd, name, 0);
	if (e == -EOPNOTSUPP || e == -EXDEV || e == -EINVAL || e == -ENOTTY || e == -EBADF) {
		j->no_reflink = true;
		return -EOPNOTSUPP;
	}
	return e;
}

/* Save a regular file's bytes: reflink into the stash, else a tar frame. */
static int save_bytes(struct tg_journal *j, int fd, const char *rel, const struct stat *st, struct tg_jrec *r)
{
	char name[32];
	snprintf(name, sizeof(name), "%llu", (unsigned long long)(j->seq + 1));
	int e = try_reflink(j, fd, name);
	if (e == 0) {
		r->flags |= TG_JREC_F_REFLINK;
		return 0;
	}
	if (e != -EOPNOTSUPP)
		return e;
	e = ensure_tar(j);
	if (!e)
		e = tg_jtar_add(j->tar, fd, rel, st, r->aux, r->aux_len, &r->tar_off);
	return e;
}

static int open_regular(struct tg_journal *j, const char *rel, struct stat *st)
{
	const char *leaf;
	_cleanup_close_ int pfd = tg_fs_parent(j->wsfd, rel, &leaf);
	if (pfd < 0)
		return pfd;
	/* O_NONBLOCK: never hang on a FIFO swapped in under us. */
	int fd = openat(pfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		int e = S_ISREG(st->st_mode) ? -errno : -EINVAL;
		close(fd);
		return e;
	}
	return fd;
}

static int capture_file(struct tg_journal *j, const char *rel, enum tg_jrec_kind kind)
{
	struct stat st;
	_cleanup_close_ int fd = open_regular(j, rel, &st);
	if (fd < 0)
		return fd;
	struct tg_jrec r = { .kind = kind, .path = (char *)rel };
	tg_jmeta_from_stat(&r.meta, &st);
	/* Blocks for every byte: allocated ranges that read as zeros
	 * (fallocate's unwritten extents) look like holes to SEEK_DATA. */
	if (st.st_size > 0 && (uint64_t)st.st_blocks * 512u >= (uint64_t)st.st_size)
		r.flags |= TG_JREC_F_ALLOC;
	_cleanup_free_ char *x = NULL;
	int e = read_xattrs(j, rel, &st, &x, &r.aux_len);
	r.aux = x;
	if (!e)
		e = save_bytes(j, fd, rel, &st, &r);
	if (!e)
		e = append(j, &r, true);
	if (!e)
		j->info.bytes_saved += (uint64_t)st.st_size;
	return e;
}

int tg_journal_content(struct tg_journal *j, const char *rel, const struct stat *st)
{
	int e = check_usable(j);
	if (e)
		return e;
	(void)st;
	return capture_file(j, rel, TG_JREC_CONTENT);
}

/* A removed object that no hard link can keep (the stash is on another
 * filesystem): its bytes go to the tar, a symlink's target into the record. */
static int save_object(struct tg_journal *j, const char *rel, const struct stat *st)
{
	if (S_ISREG(st->st_mode))
		return capture_file(j, rel, TG_JREC_SAVED);
	struct tg_jrec r = { .kind = TG_JREC_SAVED, .path = (char *)rel };
	tg_jmeta_from_stat(&r.meta, st);
	_cleanup_free_ char *target = NULL;
	if (S_ISLNK(st->st_mode)) {
		const char *leaf;
		_cleanup_close_ int pfd = tg_fs_parent(j->wsfd, rel, &leaf);
		if (pfd < 0)
			return pfd;
		target = calloc(1, (size_t)st->st_size + 2);
		if (!target)
			return -ENOMEM;
		ssize_t n = readlinkat(pfd, leaf, target, (size_t)st->st_size + 1);
		if (n < 0)
			return -errno;
		r.aux = target;
		r.aux_len = (size_t)n;
		return append(j, &r, true);
	}
	_cleanup_free_ char *x = NULL;
	int e = read_xattrs(j, rel, st, &x, &r.aux_len);
	r.aux = x;
	return e ? e : append(j, &r, true);
}

/* Keep the inode alive: a hard link into the stash, durable before the
 * unlink runs. Link groups survive because restore re-links this inode. */
static int stash_link(struct tg_journal *j, struct tg_fs_dircache *dc, const char *rel, const struct stat *st,
                      uint32_t flags)
{
	char name[32];
	snprintf(name, sizeof(name), "%llu", (unsigned long long)(j->seq + 1));
	const char *leaf;
	_cleanup_close_ int own = -1;
	int pfd = dc ? tg_fs_parent_cached(j->wsfd, dc, rel, &leaf) : (own = tg_fs_parent(j->wsfd, rel, &leaf));
	if (pfd < 0)
		return pfd;
	if (linkat(pfd, leaf, j->stashfd, name, 0) < 0)
		return -errno;
	struct stat lst;
	int e = fstatat(j->stashfd, name, &lst, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	if (!e && lst.st_ino != st->st_ino)
		e = -EAGAIN; /* replaced between our lstat and link: try again */
	/* No fsync of the stash dir: the record's fdatasync below commits the
	 * filesystem's metadata journal, and journaling filesystems (ext4, xfs,
	 * btrfs transactions) never make the later unlink durable before this
	 * earlier link. */
	struct tg_jrec r = { .kind = TG_JREC_STASHED, .flags = flags, .path = (char *)rel };
	tg_jmeta_from_stat(&r.meta, st);
	if (!e)
		e = append(j, &r, true);
	if (e < 0)
		unlinkat(j->stashfd, name, 0);
	return e;
}

int tg_journal_remove(struct tg_journal *j, struct tg_fs_dircache *dc, const char *rel, const struct stat *st,
                      bool born)
{
	int e = check_usable(j);
	if (e)
		return e;
	if (S_ISDIR(st->st_mode)) {
		struct tg_jrec r = { .kind = TG_JREC_RMDIR, .path = (char *)rel };
		tg_jmeta_from_stat(&r.meta, st);
		_cleanup_free_ char *x = NULL;
		e = read_xattrs(j, rel, st, &x, &r.aux_len);
		r.aux = x;
		return e ? e : append(j, &r, true);
	}
	e = j->no_stash ? -EXDEV : stash_link(j, dc, rel, st, born ? TG_JREC_F_BORN : 0);
	if (e == -EXDEV || e == -EPERM || e == -EMLINK) {
		if (e == -EXDEV)
			j->no_stash = true;
		e = save_object(j, rel, st);
	}
	return e;
}

int tg_journal_renamed(struct tg_journal *j, const char *from, const char *to,
                       const struct stat *src, bool exchange, bool born)
{
	int e = check_usable(j);
	if (e)
		return e;
	struct tg_jrec r = { .kind = TG_JREC_RENAMED, .path = (char *)from, .path2 = (char *)to };
	r.flags = (exchange ? TG_JREC_F_EXCHANGE : 0) | (born ? TG_JREC_F_BORN : 0);
	tg_jmeta_from_stat(&r.meta, src);
	return append(j, &r, true);
}

int tg_journal_foreach(const struct tg_journal *j, int (*cb)(void *ud, const struct tg_jrec *r), void *ud)
{
	/* Records are small; read in chunks, decoding whole records. */
	size_t cap = 1u << 16, len = 0;
	uint64_t off = 0;
	if (j->deferred)
		return 0; /* no record yet */
	_cleanup_free_ char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = pread(j->logfd, buf + len, cap - len, (off_t)off);
		if (n < 0)
			return -errno;
		off += (uint64_t)n;
		len += (size_t)n;
		size_t pos = 0;
		for (;;) {
			struct tg_jrec r;
			ssize_t used = tg_jrec_decode(buf + pos, len - pos, &r);
			if (used <= 0)
				break;
			int cr = cb(ud, &r);
			tg_jrec_clear(&r);
			if (cr != 0)
				return cr < 0 ? cr : 0;
			pos += (size_t)used;
		}
		memmove(buf, buf + pos, len - pos);
		len -= pos;
		if (n == 0)
			return 0; /* end, or a torn tail we stop at */
		if (len == cap) {
			uint32_t need;
			memcpy(&need, buf + 4, 4);
			if (need > TG_JREC_MAX)
				return 0;
			char *nb = realloc(buf, cap = (size_t)need + 12);
			if (!nb)
				return -ENOMEM;
			buf = nb;
		}
	}
}

/* ---- info file ---- */

static void put_escaped(struct wbuf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x21 || *p > 0x7e || *p == '%' || *p == '=') {
			char hex[4];
			snprintf(hex, sizeof(hex), "%%%02X", *p);
			put(b, hex, 3);
		} else {
			put(b, p, 1);
		}
	}
}

static void put_kv(struct wbuf *b, const char *k, const char *v)
{
	put(b, k, strlen(k));
	put(b, "=", 1);
	put_escaped(b, v ? v : "");
	put(b, "\n", 1);
}

static void put_kn(struct wbuf *b, const char *k, uint64_t v)
{
	char num[32];
	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	put_kv(b, k, num);
}

/* info.tmp, from j->info: durable now, or by tg_fs_syncset_flush(later). */
static int info_stage(struct tg_journal *j, struct tg_fs_syncset *later)
{
	struct wbuf b = { 0 };
	const struct tg_txinfo *i = &j->info;
	put_kn(&b, "version", TG_JOURNAL_INFO_VERSION);
	put_kv(&b, "id", i->id);
	put_kv(&b, "workspace", i->workspace);
	put_kv(&b, "command", i->command);
	put_kv(&b, "state", tg_jstate_name(i->state));
	if (i->tx)
		put_kv(&b, "tx", i->tx);
	if (i->undoes)
		put_kv(&b, "undoes", i->undoes);
	put_kn(&b, "started_ns", i->started_ns);
	put_kn(&b, "ended_ns", i->ended_ns);
	for (int k = 0; k < TG_CHANGE_KIND_COUNT; k++)
		put_kn(&b, tg_change_kind_name((enum tg_change_kind)k), i->counts[k]);
	put_kn(&b, "bytes_saved", i->bytes_saved);
	put_kn(&b, "journal_bytes", i->journal_bytes);
	if (b.err)
		return b.err;
	_cleanup_free_ char *data = b.p;
	int fd = openat(j->dirfd, "info.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int e = tg_write_all(fd, data, b.len);
	if (!e)
		e = tg_fs_syncset_add(later, fd);
	close(fd);
	return e;
}

/* info.tmp, durable, becomes info. */
static int info_publish(struct tg_journal *j)
{
	if (renameat(j->dirfd, "info.tmp", j->dirfd, "info") < 0)
		return -errno;
	return tg_fs_fsync_dir(j->dirfd);
}

int tg_journal_write_info(struct tg_journal *j)
{
	int e = info_stage(j, NULL);
	return e ? e : info_publish(j);
}

static const char *const jstate_names[] = {
	[TG_JSTATE_OPEN] = "open",
	[TG_JSTATE_ROLLING_BACK] = "rolling-back",
	[TG_JSTATE_ROLLED_BACK] = "rolled-back",
	[TG_JSTATE_COMMITTED] = "committed",
	[TG_JSTATE_UNDONE] = "undone",
};
_Static_assert(TG_ARRAY_SIZE(jstate_names) == TG_JSTATE_COUNT, "a name for every journal state");

const char *tg_jstate_name(enum tg_jstate s)
{
	return (unsigned)s < TG_JSTATE_COUNT ? jstate_names[s] : "unknown";
}

int tg_jstate_parse(const char *s, size_t len)
{
	for (int k = 0; k < TG_JSTATE_COUNT; k++)
		if (strlen(jstate_names[k]) == len && !memcmp(s, jstate_names[k], len))
			return k;
	return -EBADMSG;
}

/* Ended: the run's end time is set when it enters this state. */
static bool jstate_is_final(enum tg_jstate s)
{
	return s != TG_JSTATE_OPEN && s != TG_JSTATE_ROLLING_BACK;
}

static void enter_state(struct tg_journal *j, enum tg_jstate state)
{
	j->info.state = state;
	if (jstate_is_final(state))
		j->info.ended_ns = tg_wall_ns();
}

int tg_journal_set_state(struct tg_journal *j, enum tg_jstate state)
{
	enter_state(j, state);
	return tg_journal_write_info(j);
}

int tg_journal_set_undoes(struct tg_journal *j, const char *ids)
{
	char *v = tg_strdup(ids);
	if (!v)
		return -ENOMEM;
	free(j->info.undoes);
	j->info.undoes = v;
	return j->deferred ? 0 : tg_journal_write_info(j);
}

int tg_journal_recommit(const char *state_dir, const char *id)
{
	struct tg_journal *j;
	int e = tg_journal_load(state_dir, id, &j);
	if (e < 0)
		return e;
	/* The progress file says how far the last restore got, the remap
	 * holds its decisions (marks): both would mislead the next one. */
	if (unlinkat(j->dirfd, "progress", 0) < 0 && errno != ENOENT)
		e = -errno;
	if (!e && unlinkat(j->dirfd, "remap", 0) < 0 && errno != ENOENT)
		e = -errno;
	if (!e)
		e = tg_journal_set_state(j, TG_JSTATE_COMMITTED);
	tg_journal_free(j);
	return e;
}

int tg_journal_remove_dir(const char *state_dir, const char *id)
{
	_cleanup_close_ int fd = tg_journal_open_sub(state_dir, "txn");
	if (fd < 0)
		return fd;
	int e = tg_fs_remove_tree(fd, id);
	return e ? e : tg_fs_fsync_dir(fd);
}

/* ---- commit ---- */

/* The log's tail, post, the tar's end and the new info.tmp are all durable
 * before info says "committed", as each was when it was synced on its own;
 * they are written first and synced together (tg_fs_syncset), so the
 * filesystem commits their allocations once. */
int tg_journal_commit(struct tg_journal *j, const size_t counts[TG_CHANGE_KIND_COUNT])
{
	/* post and the tar's end need room; the history must not count it. */
	tg_journal_drop_reserve(j);
	int e = check_usable(j);
	if (!e)
		e = tg_journal_sync(j);
	struct tg_fs_syncset later = { 0 };
	if (!e)
		e = tg_journal_write_post(j, &later);
	if (!e && j->tar)
		e = tg_jtar_finish(j->tar, &later);
	if (e < 0) {
		tg_fs_syncset_drop(&later);
		return e;
	}
	for (int k = 0; k < TG_CHANGE_KIND_COUNT; k++)
		j->info.counts[k] = counts[k];
	j->du_valid = false;
	j->info.journal_bytes = tg_journal_disk_bytes(j);
	enter_state(j, TG_JSTATE_COMMITTED);
	e = info_stage(j, &later);
	int f = tg_fs_syncset_flush(&later);
	e = e ? e : f;
	return e ? e : info_publish(j);
}
