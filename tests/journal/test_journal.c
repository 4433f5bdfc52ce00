/* Criterion unit tests of the journal: records, the zstd tar, each op kind's
 * capture and restore through the txn API, locking, history. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <dirent.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "journal/journal.h"
#include "history/history.h"
#include "base/fs.h"
#include "journal/tar.h"
#include "txn/txn.h"
#include "base/util.h"

static char ws[256], sd[256], outside[256];
static struct tg_txn *t;

static void setup(void)
{
	snprintf(ws, sizeof(ws), "/tmp/tg-jt-ws.XXXXXX");
	snprintf(sd, sizeof(sd), "/tmp/tg-jt-sd.XXXXXX");
	snprintf(outside, sizeof(outside), "/tmp/tg-jt-out.XXXXXX");
	cr_assert(mkdtemp(ws) && mkdtemp(sd) && mkdtemp(outside));
	t = NULL;
}

static void teardown(void)
{
	tg_txn_free(t);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s'", ws, sd, outside);
	(void)!system(cmd);
}

TestSuite(journal, .init = setup, .fini = teardown);

static char *P(const char *rel)
{
	static char buf[8][8192];
	static int i;
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", ws, rel);
	return buf[i];
}

static void put(const char *rel, const char *content)
{
	int fd = open(P(rel), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert(fd >= 0, "open %s: %s", rel, strerror(errno));
	cr_assert(write(fd, content, strlen(content)) == (ssize_t)strlen(content));
	close(fd);
}

/* Kernels with multigrain timestamps (6.13+) stamp a file changed right
 * after someone read its ctime with the fine clock, and every later stamp,
 * births included, with at least that "floor": a file made just before a
 * transaction may then be born later than the coarse clock says the
 * transaction started. Raise the floor, as a busy machine does. */
static void raise_timestamp_floor(void)
{
	int fd = open(P(".floor"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert(fd >= 0);
	struct stat st;
	cr_assert(write(fd, "a", 1) == 1 && fstat(fd, &st) == 0 && write(fd, "b", 1) == 1);
	close(fd);
	cr_assert_eq(unlink(P(".floor")), 0);
}

static char *get(const char *rel)
{
	char *s = NULL;
	size_t n;
	if (tg_read_file(P(rel), &s, &n, 1 << 20) < 0)
		return NULL;
	return s;
}

/* The files a test puts before the transaction are originals: born before
 * its first tick (docs/journal.md, Known limits: one born in the very tick
 * the transaction starts may look new). Wait for the coarse clock to move. */
static void next_tick(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_REALTIME_COARSE, &a);
	do {
		usleep(500);
		clock_gettime(CLOCK_REALTIME_COARSE, &b);
	} while (b.tv_sec == a.tv_sec && b.tv_nsec == a.tv_nsec);
}

static void open_txn(void)
{
	next_tick();
	struct tg_txn_opts o = { .workspace = ws, .state_dir = sd, .command = "unit", .lock = TG_LOCK_FAIL };
	cr_assert_eq(tg_txn_open(&t, &o), 0);
}

static int before(enum tg_op_kind kind, const char *rel, const char *rel2, int flags)
{
	struct tg_op op = { .kind = kind, .flags = flags, .writes = true };
	op.path = rel ? P(rel) : NULL;
	op.path2 = rel2 ? P(rel2) : NULL;
	return tg_txn_before(t, &op);
}

/* In the open transaction: create f<k> holding "x", then commit, free
 * what the commit pruned (as txguard does once its report is out) and
 * close. */
static void commit_new_file(int k)
{
	char name[16];
	snprintf(name, sizeof(name), "f%d", k);
	cr_assert_eq(before(TG_OP_OPEN, name, NULL, O_WRONLY | O_CREAT), 0);
	put(name, "x");
	cr_assert_eq(tg_txn_commit(t), 0);
	tg_txn_collect(t);
	tg_txn_free(t);
	t = NULL;
}

static void rollback(void)
{
	cr_assert_eq(tg_txn_rollback(t, NULL, NULL), 0);
}

/* ---- records ---- */

/* The records' CRC is zlib's crc32(): the standard check value, and a
 * byte-at-a-time reference over every length and alignment of random
 * bytes, whole and in pieces (the journal CRCs each record's payload). */
static uint32_t crc_bytewise(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
	}
	return ~crc;
}

Test(journal, crc32_is_zlibs)
{
	cr_assert_eq(tg_crc32(0, "123456789", 9), 0xcbf43926u);
	cr_assert_eq(tg_crc32(0, "", 0), 0);
	unsigned char buf[300];
	unsigned seed = 1;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(rand_r(&seed) >> 7);
	for (size_t off = 0; off < 8; off++)
		for (size_t n = 0; off + n <= sizeof(buf); n++) {
			uint32_t want = crc_bytewise(0, buf + off, n);
			cr_assert_eq(tg_crc32(0, buf + off, n), want, "offset %zu length %zu", off, n);
			size_t half = n / 3;
			cr_assert_eq(tg_crc32(tg_crc32(0, buf + off, half), buf + off + half, n - half), want);
		}
}

Test(journal, record_roundtrip_and_torn_tail)
{
	struct tg_jrec r = { .kind = TG_JREC_RENAMED, .flags = TG_JREC_F_EXCHANGE, .seq = 7,
	                     .path = "a\nb \xff", .path2 = "c", .aux = "x\0y", .aux_len = 3 };
	r.meta.mode = 0100644;
	r.meta.mtime.tv_sec = 12345;
	r.meta.mtime.tv_nsec = 678;
	char *buf;
	size_t len;
	cr_assert_eq(tg_jrec_encode(&r, &buf, &len), 0);
	struct tg_jrec d;
	cr_assert_eq(tg_jrec_decode(buf, len, &d), (ssize_t)len);
	cr_assert_str_eq(d.path, "a\nb \xff");
	cr_assert_str_eq(d.path2, "c");
	cr_assert_eq(d.aux_len, 3);
	cr_assert_eq(memcmp(d.aux, "x\0y", 3), 0);
	cr_assert_eq(d.kind, TG_JREC_RENAMED);
	cr_assert_eq(d.flags, TG_JREC_F_EXCHANGE);
	cr_assert_eq(d.seq, 7);
	cr_assert_eq(d.meta.mtime.tv_nsec, 678);
	tg_jrec_clear(&d);
	/* a torn record (short) and a flipped bit are both rejected */
	cr_assert_eq(tg_jrec_decode(buf, len - 1, &d), -EBADMSG);
	buf[len - 2] ^= 1;
	cr_assert_eq(tg_jrec_decode(buf, len, &d), -EBADMSG);
	cr_assert_eq(tg_jrec_decode(buf, 0, &d), 0);
	free(buf);
}

/* A well-formed record of nonsense: the CRC checks out, the content does not. */
Test(journal, record_with_impossible_content_is_rejected)
{
	struct tg_jrec r = { .kind = TG_JREC_RENAMED, .seq = 1, .path = "a" };
	char *buf;
	size_t len;
	cr_assert_eq(tg_jrec_encode(&r, &buf, &len), 0);
	struct tg_jrec d;
	cr_assert_eq(tg_jrec_decode(buf, len, &d), -EBADMSG, "RENAMED without path2");
	free(buf);
	r.kind = (enum tg_jrec_kind)99;
	r.path2 = "b";
	cr_assert_eq(tg_jrec_encode(&r, &buf, &len), 0);
	cr_assert_eq(tg_jrec_decode(buf, len, &d), -EBADMSG, "unknown kind");
	free(buf);
	r.kind = TG_JREC_CREATED;
	cr_assert_eq(tg_jrec_encode(&r, &buf, &len), 0);
	cr_assert_eq(tg_jrec_decode(buf, len, &d), (ssize_t)len);
	tg_jrec_clear(&d);
	free(buf);
}

/* An xattr blob whose lengths run past its end is refused before anything
 * is touched (no read past the buffer, no xattr removed). */
Test(journal, corrupt_xattr_blob_is_refused)
{
	put("x", "x");
	if (setxattr(P("x"), "user.keep", "1", 1, 0) < 0)
		cr_skip_test("no user xattrs here: %s", strerror(errno));
	int fd = open(P("x"), O_PATH | O_CLOEXEC);
	cr_assert(fd >= 0);
	char blob[32];
	uint32_t nl = 6, vl = 1000;
	memcpy(blob, &nl, 4);
	memcpy(blob + 4, "user.k", 6);
	memcpy(blob + 10, &vl, 4);
	memcpy(blob + 14, "v", 1);
	cr_assert_eq(tg_fs_set_xattrs(fd, blob, 15), -EBADMSG, "value past the end");
	nl = 1000;
	memcpy(blob, &nl, 4);
	cr_assert_eq(tg_fs_set_xattrs(fd, blob, 15), -EBADMSG, "name past the end");
	cr_assert_eq(tg_fs_set_xattrs(fd, blob, 3), -EBADMSG, "short header");
	char v[4];
	cr_assert_eq(getxattr(P("x"), "user.keep", v, sizeof(v)), 1, "nothing removed");
	nl = 6;
	vl = 1;
	memcpy(blob, &nl, 4);
	memcpy(blob + 10, &vl, 4);
	cr_assert_eq(tg_fs_set_xattrs(fd, blob, 15), 0);
	cr_assert_eq(getxattr(P("x"), "user.k", v, sizeof(v)), 1);
	cr_assert_eq(getxattr(P("x"), "user.keep", v, sizeof(v)), -1, "not in the blob: removed");
	close(fd);
}

/* Path of file NAME in the only transaction dir (NULL: none). core/policy/glob.h
 * shadows <glob.h> here, hence the readdir. */
static char *txn_file(const char *name)
{
	static char out[1024];
	char txn[300], p[1024];
	snprintf(txn, sizeof(txn), "%s/txn", sd);
	DIR *d = opendir(txn);
	if (!d && errno == ENOENT)
		return NULL; /* no transaction has made its dir yet */
	cr_assert(d);
	int found = 0;
	for (struct dirent *de; (de = readdir(d));) {
		snprintf(p, sizeof(p), "%s/%s/%s", txn, de->d_name, name);
		if (de->d_name[0] != '.' && access(p, F_OK) == 0 && found++ == 0)
			memcpy(out, p, sizeof(out));
	}
	closedir(d);
	cr_assert_leq(found, 1);
	return found ? out : NULL;
}

/* Room for the way back is set aside with the journal's dir, at the first
 * record, with real blocks; commit releases it and neither the summary nor
 * the history counts it. */
Test(journal, reserve_is_set_aside_and_released)
{
	put("a", "a");
	open_txn();
	cr_assert_null(txn_file("info"), "no record yet: no dir");
	cr_assert_eq(before(TG_OP_OPEN, "a", NULL, O_WRONLY | O_TRUNC), 0);
	char *rp = txn_file("reserve");
	cr_assert(rp, "an open transaction holds a reserve");
	struct stat st;
	cr_assert_eq(stat(rp, &st), 0);
	cr_assert_eq(st.st_size, 64 * 1024);
	cr_assert_geq((long long)st.st_blocks * 512, 64 * 1024, "real blocks, not a hole");
	struct tg_changes c;
	cr_assert_eq(tg_txn_changes(t, &c), 0);
	cr_assert_lt(c.journal_bytes, 64 * 1024, "the reserve is not journal: %llu",
	             (unsigned long long)c.journal_bytes);
	tg_changes_clear(&c);
	cr_assert_eq(tg_txn_commit(t), 0);
	cr_assert_null(txn_file("reserve"), "commit releases the reserve");
}

/* Files added to a syncset are all still open for the flush (dups: the
 * caller's fds may close at once), an error of any one is the flush's,
 * and a NULL set syncs at once. */
Test(journal, syncset_flushes_every_file_and_reports_the_first_error)
{
	struct tg_fs_syncset s = { 0 };
	for (int i = 0; i < TG_FS_SYNCSET_MAX + 2; i++) {
		char name[16];
		snprintf(name, sizeof(name), "s%d", i);
		int fd = open(P(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		cr_assert(fd >= 0);
		cr_assert(write(fd, "x", 1) == 1);
		/* Past the room: synced at once, still 0. */
		cr_assert_eq(tg_fs_syncset_add(&s, fd), 0, "add %d", i);
		close(fd);
	}
	cr_assert_eq(s.n, TG_FS_SYNCSET_MAX);
	for (size_t i = 0; i < s.n; i++)
		cr_assert_geq(fcntl(s.fd[i], F_GETFD), 0, "the set keeps its own fd %zu", i);
	cr_assert_eq(tg_fs_syncset_flush(&s), 0);
	cr_assert_eq(s.n, 0, "empty after a flush");

	int pipefd[2];
	cr_assert_eq(pipe(pipefd), 0);
	cr_assert_eq(tg_fs_syncset_add(&s, pipefd[1]), 0, "a pipe is kept (its fsync fails later)");
	close(pipefd[0]);
	close(pipefd[1]);
	cr_assert_eq(tg_fs_syncset_flush(&s), -EINVAL, "fsync of a pipe: EINVAL, reported by the flush");
	cr_assert_eq(tg_fs_syncset_add(NULL, -1), -EBADF, "no set: fsync now");
	cr_assert_eq(tg_fs_syncset_add(&s, -1), -EBADF, "a bad fd fails the add");
	cr_assert_eq(tg_fs_syncset_flush(&s), -EBADF, "and the flush after it");
}

/* The commit writes post, the tar's end and info.tmp before syncing them
 * together: what it leaves is a whole committed run, with no info.tmp. */
Test(journal, commit_leaves_post_tar_and_info_whole)
{
	put("a", "before");
	open_txn();
	cr_assert_eq(before(TG_OP_OPEN, "a", NULL, O_WRONLY | O_TRUNC), 0);
	put("a", "after");
	cr_assert_eq(tg_txn_commit(t), 0);
	cr_assert_null(txn_file("info.tmp"), "info.tmp became info");
	char *ip = txn_file("info");
	cr_assert(ip);
	char info[4096] = { 0 };
	FILE *f = fopen(ip, "r");
	cr_assert(f);
	size_t n = fread(info, 1, sizeof(info) - 1, f);
	fclose(f);
	cr_assert_gt(n, 0);
	cr_assert(strstr(info, "\nstate=committed\n"), "committed: %s", info);
	cr_assert(strstr(info, "\nmodified=1\n"), "its counts: %s", info);
	char *pp = txn_file("post");
	cr_assert(pp);
	struct stat st;
	cr_assert_eq(stat(pp, &st), 0);
	cr_assert_gt(st.st_size, 0, "post lists a");
	/* The tar ends with its end blocks: libarchive reads it to the end. */
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "zstd -dc '%s' | tar -tf - >/dev/null 2>&1", txn_file("pre.tar.zst"));
	cr_assert_eq(system(cmd), 0, "the pre-image tar is whole");
}

/* A removed file is kept by a link in the stash: its blocks are journal,
 * in the summary and in what commit records for the history's byte bound
 * (which counts the stash once per record, not again at commit). */
Test(journal, stash_counts_in_the_committed_size)
{
	enum { SIZE = 1 << 20 };
	static char big[SIZE];
	memset(big, 'x', sizeof(big) - 1);
	put("big", big);
	open_txn();
	cr_assert_eq(before(TG_OP_UNLINK, "big", NULL, 0), 0);
	cr_assert_eq(unlink(P("big")), 0);
	struct tg_changes c;
	cr_assert_eq(tg_txn_changes(t, &c), 0);
	unsigned long long summary = c.journal_bytes;
	tg_changes_clear(&c);
	cr_assert_geq(summary, SIZE - 1, "the stash's link: %llu", summary);
	_cleanup_free_ char *id = tg_strdup(tg_txn_id(t));
	cr_assert_eq(tg_txn_commit(t), 0);
	struct tg_txinfo i;
	cr_assert_eq(tg_journal_read_info(sd, id, &i), 0);
	/* Commit adds its post file and drops nothing that was journal. */
	cr_assert_geq(i.journal_bytes, summary, "%llu < %llu", (unsigned long long)i.journal_bytes, summary);
	cr_assert_lt(i.journal_bytes, summary + 64 * 1024, "%llu", (unsigned long long)i.journal_bytes);
	tg_txinfo_clear(&i);
}

Test(journal, rollback_releases_the_reserve_first)
{
	put("a", "a");
	open_txn();
	cr_assert_eq(before(TG_OP_UNLINK, "a", NULL, 0), 0);
	cr_assert(txn_file("reserve"));
	cr_assert_eq(unlink(P("a")), 0);
	rollback();
	cr_assert_null(txn_file("reserve"));
	cr_assert_str_eq(get("a"), "a");
}

/* A run that changed nothing takes no history slot: no record at all (no
 * dir was ever made), or records that add up to no change. */
Test(journal, commit_without_change_leaves_no_history)
{
	open_txn();
	cr_assert_eq(tg_txn_commit(t), 0);
	tg_txn_free(t);
	t = NULL;
	struct tg_txinfo *v;
	size_t n;
	cr_assert_eq(tg_run_list(sd, &v, &n), 0);
	cr_assert_eq(n, 0);
	open_txn();
	cr_assert_eq(before(TG_OP_OPEN, "tmp", NULL, O_WRONLY | O_CREAT), 0);
	put("tmp", "x");
	cr_assert(txn_file("info"), "a record makes the dir");
	cr_assert_eq(before(TG_OP_UNLINK, "tmp", NULL, 0), 0);
	cr_assert_eq(unlink(P("tmp")), 0);
	cr_assert_eq(tg_txn_commit(t), 0);
	tg_txn_free(t);
	t = NULL;
	cr_assert_null(txn_file("info"), "made and removed: no change, no entry");
	put("kept", "k");
	open_txn();
	cr_assert_eq(before(TG_OP_UNLINK, "kept", NULL, 0), 0);
	cr_assert_eq(unlink(P("kept")), 0);
	cr_assert_eq(tg_txn_commit(t), 0);
	cr_assert_eq(tg_run_list(sd, &v, &n), 0);
	cr_assert_eq(n, 1, "a change is history");
	cr_assert_str_eq(tg_jstate_name(v[0].state), "committed");
	cr_assert_eq(v[0].counts[2], 1);
	tg_txinfo_free_all(v, n);
}

/* A run that fails before it starts: its empty transaction leaves nothing,
 * rolled back or just freed. */
Test(journal, empty_transaction_leaves_no_open_state)
{
	char txn[300];
	snprintf(txn, sizeof(txn), "%s/txn", sd);
	open_txn();
	cr_assert_eq(tg_txn_rollback(t, NULL, NULL), 0);
	tg_txn_free(t);
	t = NULL;
	cr_assert_null(txn_file("info"), "rolled back: gone");
	open_txn();
	cr_assert_null(txn_file("info"), "no record: nothing on disk");
	tg_txn_free(t);
	t = NULL;
	cr_assert_null(txn_file("info"), "freed unfinished and empty: gone");
	/* one with a record stays for recovery */
	put("a", "a");
	open_txn();
	cr_assert_eq(before(TG_OP_UNLINK, "a", NULL, 0), 0);
	cr_assert_eq(unlink(P("a")), 0);
	tg_txn_free(t);
	t = NULL;
	cr_assert(txn_file("info"), "a journaled run is kept for recovery");
	int n = -1;
	cr_assert_eq(tg_recover(ws, sd, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(get("a"), "a");
}

/* ---- tar ---- */

static int sparse_file(const char *path, off_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, size), 0);
	cr_assert_eq(pwrite(fd, "head", 4, 0), 4);
	cr_assert_eq(pwrite(fd, "middle", 6, size / 2), 6);
	return fd;
}

Test(journal, tar_entries_roundtrip_sparse_and_listable)
{
	_cleanup_close_ int dfd = open(sd, O_RDONLY | O_DIRECTORY);
	struct tg_jtar *tar;
	cr_assert_eq(tg_jtar_open(dfd, "t.tar.zst", &tar), 0);
	char p1[512];
	snprintf(p1, sizeof(p1), "%s/sparse", outside);
	int fd = sparse_file(p1, 64 << 20);
	struct stat st;
	fstat(fd, &st);
	uint64_t off1, off2;
	cr_assert_eq(tg_jtar_add(tar, fd, "sparse file", &st, NULL, 0, &off1), 0);
	close(fd);
	put("plain", "plain content\n");
	fd = open(P("plain"), O_RDONLY);
	fstat(fd, &st);
	cr_assert_eq(tg_jtar_add(tar, fd, "dir/plain", &st, NULL, 0, &off2), 0);
	close(fd);
	cr_assert_eq(tg_jtar_finish(tar, NULL), 0);
	tg_jtar_free(tar);

	_cleanup_close_ int tfd = openat(dfd, "t.tar.zst", O_RDONLY);
	char out[512];
	snprintf(out, sizeof(out), "%s/out", outside);
	int ofd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600);
	uint64_t size;
	cr_assert_eq(tg_jtar_extract(tfd, off1, ofd, &size), 0);
	cr_assert_eq(size, 64u << 20);
	fstat(ofd, &st);
	cr_assert_eq(st.st_size, 64 << 20);
	cr_assert_lt(st.st_blocks * 512, 1 << 20, "holes must stay holes (%lld blocks)", (long long)st.st_blocks);
	char b[8] = { 0 };
	cr_assert_eq(pread(ofd, b, 6, 32 << 20), 6);
	cr_assert_str_eq(b, "middle");
	cr_assert_eq(tg_jtar_extract(tfd, off2, ofd, &size), 0);
	cr_assert_eq(size, 14);
	close(ofd);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "zstd -dc '%s/t.tar.zst' | tar -t > '%s/list'", sd, outside);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/list", outside);
	char *list;
	size_t n;
	cr_assert_eq(tg_read_file(cmd, &list, &n, 4096), 0);
	cr_assert_str_eq(list, "sparse file\ndir/plain\n");
	free(list);
}

/* ---- each op kind: capture, then restore ---- */

Test(journal, write_truncate_restore_content_mode_times_xattr)
{
	put("f", "original");
	cr_assert_eq(setxattr(P("f"), "user.tag", "v1", 2, 0), 0);
	struct timespec ts[2] = { { 1000, 0 }, { 2000, 5 } };
	utimensat(AT_FDCWD, P("f"), ts, 0);
	open_txn();
	cr_assert_eq(before(TG_OP_OPEN, "f", NULL, O_WRONLY | O_TRUNC), 0);
	put("f", "clobbered and longer");
	cr_assert_eq(before(TG_OP_CHMOD, "f", NULL, 0), 0);
	chmod(P("f"), 0600);
	cr_assert_eq(before(TG_OP_XATTR, "f", NULL, 0), 0);
	setxattr(P("f"), "user.tag", "v2", 2, 0);
	setxattr(P("f"), "user.new", "n", 1, 0);
	cr_assert_eq(before(TG_OP_TRUNCATE, "f", NULL, 0), 0);
	cr_assert_eq(truncate(P("f"), 3), 0);
	rollback();
	_cleanup_free_ char *s = get("f");
	cr_assert_str_eq(s, "original");
	struct stat st;
	stat(P("f"), &st);
	cr_assert_eq(st.st_mode & 07777, 0644);
	cr_assert_eq(st.st_mtim.tv_sec, 2000);
	cr_assert_eq(st.st_mtim.tv_nsec, 5);
	char v[8] = { 0 };
	cr_assert_eq(getxattr(P("f"), "user.tag", v, sizeof(v)), 2);
	cr_assert_str_eq(v, "v1");
	cr_assert_eq(getxattr(P("f"), "user.new", v, sizeof(v)), -1);
}

Test(journal, hard_link_group_survives_content_restore_and_unlink)
{
	put("a", "shared");
	cr_assert_eq(link(P("a"), P("b")), 0);
	struct stat st0;
	stat(P("a"), &st0);
	open_txn();
	cr_assert_eq(before(TG_OP_OPEN, "b", NULL, O_RDWR | O_TRUNC), 0);
	put("b", "changed via b");
	cr_assert_eq(before(TG_OP_UNLINK, "a", NULL, 0), 0);
	cr_assert_eq(unlink(P("a")), 0);
	rollback();
	struct stat sa, sb;
	cr_assert_eq(stat(P("a"), &sa), 0);
	cr_assert_eq(stat(P("b"), &sb), 0);
	cr_assert_eq(sa.st_ino, st0.st_ino, "the original inode is back");
	cr_assert_eq(sb.st_ino, st0.st_ino);
	cr_assert_eq(sa.st_nlink, 2);
	_cleanup_free_ char *s = get("a");
	cr_assert_str_eq(s, "shared");
}

Test(journal, created_paths_are_removed_and_deleted_come_back)
{
	cr_assert_eq(mkdir(P("d"), 0750), 0);
	put("d/keep", "k");
	cr_assert_eq(symlink("keep", P("d/ln")), 0);
	cr_assert_eq(mkfifo(P("d/fifo"), 0640), 0);
	open_txn();
	cr_assert_eq(before(TG_OP_MKDIR, "new", NULL, 0), 0);
	mkdir(P("new"), 0755);
	cr_assert_eq(before(TG_OP_OPEN, "new/file", NULL, O_WRONLY | O_CREAT), 0);
	put("new/file", "x");
	cr_assert_eq(before(TG_OP_SYMLINK, "new/sl", NULL, 0), 0);
	cr_assert_eq(symlink("/etc/passwd", P("new/sl")), 0);
	cr_assert_eq(before(TG_OP_MKNOD, "new/ff", NULL, 0), 0);
	cr_assert_eq(mkfifo(P("new/ff"), 0600), 0);
	cr_assert_eq(before(TG_OP_LINK, "d/keep", "hl", 0), 0);
	cr_assert_eq(link(P("d/keep"), P("hl")), 0);
	const char *gone[] = { "d/keep", "d/ln", "d/fifo" };
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(before(TG_OP_UNLINK, gone[i], NULL, 0), 0);
		cr_assert_eq(unlink(P(gone[i])), 0);
	}
	cr_assert_eq(before(TG_OP_RMDIR, "d", NULL, 0), 0);
	cr_assert_eq(rmdir(P("d")), 0);
	rollback();
	struct stat st;
	cr_assert_eq(lstat(P("new"), &st), -1);
	cr_assert_eq(lstat(P("hl"), &st), -1);
	cr_assert_eq(lstat(P("d"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0750);
	cr_assert_eq(lstat(P("d/ln"), &st), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_eq(lstat(P("d/fifo"), &st), 0);
	cr_assert(S_ISFIFO(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0640);
	cr_assert_eq(lstat(P("d/keep"), &st), 0);
	cr_assert_eq(st.st_nlink, 1);
}

Test(journal, directory_rename_over_empty_dir_with_modified_files)
{
	cr_assert_eq(mkdir(P("src"), 0755), 0);
	cr_assert_eq(mkdir(P("dst"), 0700), 0);
	put("src/f", "before");
	open_txn();
	cr_assert_eq(before(TG_OP_RENAME, "src", "dst", 0), 0);
	cr_assert_eq(rename(P("src"), P("dst")), 0);
	cr_assert_eq(before(TG_OP_OPEN, "dst/f", NULL, O_WRONLY | O_TRUNC), 0);
	put("dst/f", "after");
	cr_assert_eq(before(TG_OP_RENAME, "dst/f", "g", 0), 0);
	cr_assert_eq(rename(P("dst/f"), P("g")), 0);
	rollback();
	_cleanup_free_ char *s = get("src/f");
	cr_assert_str_eq(s, "before");
	struct stat st;
	cr_assert_eq(stat(P("dst"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0700);
	cr_assert_eq(lstat(P("g"), &st), -1);
}

Test(journal, exchange_rename_is_swapped_back)
{
	put("x", "X");
	put("y", "Y");
	open_txn();
	cr_assert_eq(before(TG_OP_RENAME, "x", "y", RENAME_EXCHANGE), 0);
	cr_assert_eq(renameat2(AT_FDCWD, P("x"), AT_FDCWD, P("y"), RENAME_EXCHANGE), 0);
	rollback();
	_cleanup_free_ char *a = get("x"), *b = get("y");
	cr_assert_str_eq(a, "X");
	cr_assert_str_eq(b, "Y");
}

Test(journal, restore_never_follows_a_symlink_out_of_the_workspace)
{
	cr_assert_eq(mkdir(P("d"), 0755), 0);
	put("d/f", "mine");
	open_txn();
	cr_assert_eq(before(TG_OP_OPEN, "d/f", NULL, O_WRONLY | O_TRUNC), 0);
	put("d/f", "changed");
	/* Something swaps the directory for a symlink to a place outside. */
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/d' && ln -s '%s' '%s/d'", ws, outside, ws);
	cr_assert_eq(system(cmd), 0);
	char victim[512];
	snprintf(victim, sizeof(victim), "%s/f", outside);
	int fd = open(victim, O_WRONLY | O_CREAT, 0644);
	cr_assert_eq(write(fd, "outside", 7), 7);
	close(fd);
	tg_txn_rollback(t, NULL, NULL);
	char *s;
	size_t n;
	cr_assert_eq(tg_read_file(victim, &s, &n, 100), 0);
	cr_assert_str_eq(s, "outside", "restore wrote through a symlink");
	free(s);
}

Test(journal, long_paths_beyond_path_max)
{
	/* 20 levels of 250-byte names: ~5 KB, past PATH_MAX. */
	char name[251];
	memset(name, 'n', 250);
	name[250] = '\0';
	int dfd = open(ws, O_RDONLY | O_DIRECTORY);
	char rel[8192] = "";
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(mkdirat(dfd, name, 0755), 0);
		int nfd = openat(dfd, name, O_RDONLY | O_DIRECTORY);
		close(dfd);
		dfd = nfd;
		strcat(rel, name);
		strcat(rel, "/");
	}
	int fd = openat(dfd, "deep", O_WRONLY | O_CREAT, 0644);
	cr_assert_eq(write(fd, "deep", 4), 4);
	close(fd);
	strcat(rel, "deep");
	cr_assert_gt(strlen(rel) + strlen(ws), 4096);
	open_txn();
	cr_assert_eq(before(TG_OP_OPEN, rel, NULL, O_WRONLY | O_TRUNC), 0);
	fd = openat(dfd, "deep", O_WRONLY | O_TRUNC);
	close(fd);
	cr_assert_eq(before(TG_OP_UNLINK, rel, NULL, 0), 0);
	cr_assert_eq(unlinkat(dfd, "deep", 0), 0);
	rollback();
	char b[8] = { 0 };
	fd = openat(dfd, "deep", O_RDONLY);
	cr_assert(fd >= 0);
	cr_assert_eq(read(fd, b, 8), 4);
	cr_assert_str_eq(b, "deep");
	close(fd);
	close(dfd);
}

Test(journal, capture_failure_fails_the_call_and_keeps_the_tar_valid)
{
	char big[4096];
	srand(42);
	int fd = open(P("big"), O_WRONLY | O_CREAT, 0644);
	for (int i = 0; i < 256; i++) { /* 1 MiB that zstd cannot shrink */
		for (size_t k = 0; k < sizeof(big); k++)
			big[k] = (char)rand();
		cr_assert_eq(write(fd, big, sizeof(big)), (ssize_t)sizeof(big));
	}
	close(fd);
	put("small", "s");
	open_txn();
	/* The journal's dir (and its 64 KiB reserve) exists before the limit. */
	cr_assert_eq(before(TG_OP_OPEN, "other", NULL, O_WRONLY | O_CREAT), 0);
	/* Output limited to 1 KiB: the journal cannot hold the pre-image. */
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit old, lim = { 1024, 1024 };
	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_FSIZE, &lim);
	int e = before(TG_OP_OPEN, "big", NULL, O_WRONLY | O_TRUNC);
	setrlimit(RLIMIT_FSIZE, &old);
	cr_assert_eq(e, -EFBIG, "got %d", e);
	cr_assert_eq(before(TG_OP_OPEN, "small", NULL, O_WRONLY | O_TRUNC), 0);
	put("small", "changed");
	rollback();
	_cleanup_free_ char *s = get("small");
	cr_assert_str_eq(s, "s");
}

Test(journal, second_transaction_is_busy_and_state_is_private)
{
	open_txn();
	struct tg_txn *t2 = NULL;
	struct tg_txn_opts o = { .workspace = ws, .state_dir = sd, .lock = TG_LOCK_FAIL };
	cr_assert_eq(tg_txn_open(&t2, &o), -EBUSY);
	char p[512];
	snprintf(p, sizeof(p), "%s/txn/x", sd);
	cr_assert(tg_txn_is_private(t, p));
	cr_assert(!tg_txn_is_private(t, P("f")));
	struct tg_op op = { .kind = TG_OP_UNLINK, .path = p };
	cr_assert_eq(tg_txn_before(t, &op), -EPERM);
}

Test(journal, default_state_dir_same_fs_else_dot_txguard)
{
	char *d = NULL;
	setenv("XDG_STATE_HOME", outside, 1);
	unsetenv("TXGUARD_STATE_DIR");
	cr_assert_eq(tg_journal_default_state_dir(ws, &d), 0);
	cr_assert_eq(strncmp(d, outside, strlen(outside)), 0, "%s", d);
	free(d);
	setenv("XDG_STATE_HOME", "/proc/txguard-test", 1); /* another filesystem */
	cr_assert_eq(tg_journal_default_state_dir(ws, &d), 0);
	char want[512];
	snprintf(want, sizeof(want), "%s/.txguard/state", ws);
	cr_assert_str_eq(d, want);
	free(d);
	/* inside the workspace: ignored by git, and private */
	struct tg_txn_opts o = { .workspace = ws, .lock = TG_LOCK_FAIL };
	cr_assert_eq(tg_txn_open(&t, &o), 0);
	_cleanup_free_ char *gi = get(".txguard/.gitignore");
	cr_assert_str_eq(gi, "*\n");
	_cleanup_free_ char *gi2 = get(".txguard/state/.gitignore");
	cr_assert_str_eq(gi2, "*\n");
	cr_assert(tg_txn_is_private(t, want));
	rollback();
	struct stat st;
	cr_assert_eq(stat(want, &st), 0, "the fallback dir stays");
	unsetenv("XDG_STATE_HOME");
}

Test(journal, interrupted_transaction_is_recovered_by_next_open)
{
	put("f", "v1");
	open_txn();
	cr_assert_eq(before(TG_OP_OPEN, "f", NULL, O_WRONLY | O_TRUNC), 0);
	put("f", "v2");
	cr_assert_eq(before(TG_OP_OPEN, "g", NULL, O_WRONLY | O_CREAT), 0);
	put("g", "new");
	tg_txn_free(t); /* neither committed nor rolled back: interrupted */
	t = NULL;
	int n = -1;
	cr_assert_eq(tg_recover(ws, sd, &n), 0);
	cr_assert_eq(n, 1);
	_cleanup_free_ char *s = get("f");
	cr_assert_str_eq(s, "v1");
	struct stat st;
	cr_assert_eq(stat(P("g"), &st), -1);
}

/* A history with nothing to recover is read once (recover_locked's quiet
 * path); what the full pass does must still happen when the listing and
 * the directory disagree: a run dir without its info (a creation cut
 * short) is dropped, and the committed runs stay. */
/* A start with history reads no run's info when the last end left
 * txn/.clean (journal.h): made by a clean commit, it stops counting when a
 * run dir is made, by this txguard (which removes it first) or by any
 * other (txn/ moved), and a crash between then and the commit finds no
 * marker: the next start recovers. tg_recover never takes it. */
Test(journal, clean_marker_spares_the_listing_until_a_run_dir_moves)
{
	put("f", "v1");
	cr_assert_not(tg_journal_clean(sd), "no history yet");
	open_txn();
	commit_new_file(0);
	cr_assert(tg_journal_clean(sd), "a clean commit leaves the marker");
	open_txn();
	cr_assert(tg_journal_clean(sd), "a start that found it keeps it");
	cr_assert_eq(before(TG_OP_OPEN, "f", NULL, O_WRONLY | O_TRUNC), 0);
	cr_assert_not(tg_journal_clean(sd), "a run dir made: not clean");
	char mark[512];
	snprintf(mark, sizeof(mark), "%s/txn/.clean", sd);
	cr_assert_eq(access(mark, F_OK), -1, "removed before the dir was made, not just outdated");
	put("f", "v2");
	tg_txn_free(t); /* interrupted */
	t = NULL;
	int n = -1;
	cr_assert_eq(tg_recover(ws, sd, &n), 0);
	cr_assert_eq(n, 1, "the interrupted run is restored");
	_cleanup_free_ char *s1 = get("f");
	cr_assert_str_eq(s1, "v1");
	cr_assert(tg_journal_clean(sd), "a recovery that left nothing marks it");
	char other[512];
	snprintf(other, sizeof(other), "%s/txn/20990101T000000.000-fedcba", sd);
	cr_assert_eq(mkdir(other, 0700), 0);
	cr_assert_not(tg_journal_clean(sd), "a dir made behind its back: not clean");
	open_txn();
	struct stat st;
	cr_assert_eq(stat(other, &st), -1, "the start read the history and swept the half-made dir");
	commit_new_file(1);
	cr_assert(tg_journal_clean(sd));
	/* Explicit recovery reads every run: a half-made dir the mark cannot
	 * see (made, then the mark made anew by hand) is swept all the same. */
	cr_assert_eq(mkdir(other, 0700), 0);
	tg_journal_clean_mark(sd, NULL);
	cr_assert(tg_journal_clean(sd));
	cr_assert_eq(tg_recover(ws, sd, &n), 0);
	cr_assert_eq(stat(other, &st), -1, "tg_recover trusted the mark");
	int fd = open(mark, O_WRONLY | O_TRUNC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "0 0 0.0\n", 8), 8);
	close(fd);
	cr_assert_not(tg_journal_clean(sd), "what it holds must be txn/ as it is");
}

Test(journal, quiet_history_still_drops_a_half_made_run_dir)
{
	for (int k = 0; k < 3; k++) {
		open_txn();
		commit_new_file(k);
	}
	int n = -1;
	cr_assert_eq(tg_recover(ws, sd, &n), 0);
	cr_assert_eq(n, 0, "nothing to restore in a committed history");
	char half[512];
	snprintf(half, sizeof(half), "%s/txn/20990101T000000.000-abcdef", sd);
	cr_assert_eq(mkdir(half, 0700), 0);
	cr_assert_eq(tg_recover(ws, sd, &n), 0);
	cr_assert_eq(n, 0);
	struct stat st;
	cr_assert_eq(stat(half, &st), -1, "a run dir without info is swept");
	struct tg_txinfo *v;
	size_t nv;
	cr_assert_eq(tg_run_list(sd, &v, &nv), 0);
	cr_assert_eq(nv, 3, "the committed runs stay: %zu", nv);
	for (size_t i = 0; i < nv; i++)
		cr_expect_str_eq(tg_jstate_name(v[i].state), "committed");
	tg_txinfo_free_all(v, nv);
	for (int k = 0; k < 3; k++) {
		char name[16];
		snprintf(name, sizeof(name), "f%d", k);
		_cleanup_free_ char *c = get(name);
		cr_expect_str_eq(c, "x", "%s kept", name);
	}
}

/* ---- the clean mark's index of the history ---- */

static bool counted_state(enum tg_jstate s)
{
	return s == TG_JSTATE_COMMITTED || s == TG_JSTATE_UNDONE;
}

/* The mark's index, when there is one, is the listing: same runs, same
 * order, same state, start and size. */
static void expect_index_is_listing(const char *what)
{
	struct tg_runs r;
	int c = tg_journal_clean_runs(sd, &r);
	if (c != 1)
		return;
	cr_assert_eq(tg_runs_parse(&r), 0, "%s: an index that does not parse", what);
	struct tg_txinfo *v;
	size_t n;
	cr_assert_eq(tg_run_list(sd, &v, &n), 0);
	cr_assert_eq(r.n, n, "%s: the index holds %zu runs, txn/ %zu", what, r.n, n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_str_eq(r.v[i].id, v[i].id, "%s: run %zu", what, i);
		cr_assert_eq(r.v[i].state, v[i].state, "%s: %s", what, v[i].id);
		cr_assert_eq(r.v[i].started_ns, v[i].started_ns, "%s: %s", what, v[i].id);
		cr_assert_eq(r.v[i].journal_bytes, v[i].journal_bytes, "%s: %s", what, v[i].id);
	}
	tg_txinfo_free_all(v, n);
	tg_runs_clear(&r);
}

/* What a commit keeps: of the history before it and its own run, newest
 * first, each committed or undone run while within both bounds (the
 * newest always), and every run of another state. */
static void expect_pruned(struct tg_txinfo *l0, size_t n0, struct tg_txinfo *l1, size_t n1, uint64_t max_runs,
                          uint64_t max_bytes)
{
	struct tg_runs all = { 0 };
	for (size_t i = 0; i < n0; i++)
		cr_assert_eq(tg_runs_insert(&all, &l0[i]), 0);
	for (size_t i = 0; i < n1; i++) {
		bool known = false;
		for (size_t k = 0; k < n0 && !known; k++)
			known = !strcmp(l0[k].id, l1[i].id);
		if (!known)
			cr_assert_eq(tg_runs_insert(&all, &l1[i]), 0);
	}
	uint64_t runs = 0, bytes = 0;
	size_t kept = 0;
	for (size_t i = 0; i < all.n; i++) {
		bool keep = true;
		if (counted_state(all.v[i].state)) {
			runs++;
			bytes += all.v[i].journal_bytes;
			keep = runs == 1 || (runs <= max_runs && bytes <= max_bytes);
		}
		bool there = false;
		for (size_t k = 0; k < n1 && !there; k++)
			there = !strcmp(l1[k].id, all.v[i].id);
		cr_assert_eq(there, keep, "%s: kept %d, the bounds say %d (run %zu of %zu, %llu bytes)", all.v[i].id,
		             there, keep, i, all.n, (unsigned long long)bytes);
		kept += keep;
	}
	cr_assert_eq(kept, n1);
	tg_runs_clear(&all);
}

static void put_random(const char *rel, size_t len, unsigned *seed)
{
	char *buf = malloc(len + 1);
	cr_assert(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)('!' + rand_r(seed) % 90);
	buf[len] = '\0';
	put(rel, buf);
	free(buf);
}

/* Random runs, rollbacks, recoveries, undos and stray dirs: each commit
 * keeps what the bounds say of the history as it really is, and whenever
 * the mark has an index, it is the listing. Most commits prune by the
 * index (the test counts them). */
Test(journal, history_index_follows_the_history)
{
	unsigned seed = 1605;
	int by_index = 0, commits = 0;
	for (int step = 0; step < 160; step++) {
		int op = rand_r(&seed) % 10;
		uint64_t max_runs = 1 + (uint64_t)(rand_r(&seed) % 6);
		uint64_t max_bytes = rand_r(&seed) % 3 ? (1ull << 30) : 40000 + (uint64_t)(rand_r(&seed) % 40000);
		struct tg_txn_opts o = { .workspace = ws, .state_dir = sd, .command = "unit", .lock = TG_LOCK_FAIL,
		                         .history_max_runs = max_runs, .history_max_bytes = max_bytes };
		char what[64];
		snprintf(what, sizeof(what), "step %d, op %d", step, op);
		if (op <= 5) { /* a run that changes one to three files, committed */
			struct tg_txinfo *l0, *l1;
			size_t n0, n1;
			cr_assert_eq(tg_run_list(sd, &l0, &n0), 0);
			struct tg_runs idx;
			by_index += tg_journal_clean_runs(sd, &idx) == 1 && tg_runs_parse(&idx) == 0 && n0 > 0;
			tg_runs_clear(&idx);
			next_tick();
			cr_assert_eq(tg_txn_open(&t, &o), 0, "%s", what);
			int files = 1 + rand_r(&seed) % 3;
			for (int f = 0; f < files; f++) {
				char name[16];
				snprintf(name, sizeof(name), "g%d", rand_r(&seed) % 8);
				cr_assert_eq(before(TG_OP_OPEN, name, NULL, O_WRONLY | O_CREAT | O_TRUNC), 0);
				put_random(name, 1 + (size_t)(rand_r(&seed) % 30000), &seed);
			}
			cr_assert_eq(tg_txn_commit(t), 0, "%s", what);
			tg_txn_collect(t);
			tg_txn_free(t);
			t = NULL;
			commits++;
			cr_assert_eq(tg_run_list(sd, &l1, &n1), 0);
			expect_pruned(l0, n0, l1, n1, max_runs, max_bytes);
			tg_txinfo_free_all(l0, n0);
			tg_txinfo_free_all(l1, n1);
		} else if (op == 6) { /* a run that changes nothing, or one rolled back */
			next_tick();
			cr_assert_eq(tg_txn_open(&t, &o), 0, "%s", what);
			if (rand_r(&seed) % 2) {
				cr_assert_eq(before(TG_OP_OPEN, "g0", NULL, O_WRONLY | O_CREAT | O_TRUNC), 0);
				put("g0", "rolled back");
				rollback();
			} else {
				cr_assert_eq(tg_txn_commit(t), 0, "%s", what);
			}
			tg_txn_free(t);
			t = NULL;
		} else if (op == 7) { /* a dir half made by something else */
			char half[512];
			snprintf(half, sizeof(half), "%s/txn/20990101T000000.%03d-abcdef", sd, step);
			(void)mkdir(half, 0700);
		} else if (op == 8) { /* txguard recover */
			int n = -1;
			cr_assert_eq(tg_recover(ws, sd, &n), 0, "%s", what);
		} else { /* an undo of the newest run still in effect */
			struct tg_txinfo *v;
			size_t n;
			cr_assert_eq(tg_run_list(sd, &v, &n), 0);
			for (size_t i = 0; i < n; i++)
				if (v[i].state == TG_JSTATE_COMMITTED) {
					cr_assert_eq(tg_run_undo(sd, v[i].id, true), 0, "%s: undo %s", what, v[i].id);
					break;
				}
			tg_txinfo_free_all(v, n);
		}
		expect_index_is_listing(what);
	}
	cr_assert_geq(commits, 60);
	cr_assert_geq(by_index, commits / 2, "%d of %d commits found an index", by_index, commits);
	cr_log_info("%d of %d commits found an index", by_index, commits);
}

/* Run id's info with key=value in place of its line, written whole and
 * renamed into place as txguard does: txn/ does not move. */
static void edit_info(const char *id, const char *key, const char *value)
{
	char info[600], tmp[620], k[64];
	snprintf(info, sizeof(info), "%s/txn/%s/info", sd, id);
	snprintf(tmp, sizeof(tmp), "%s.tmp", info);
	snprintf(k, sizeof(k), "\n%s=", key);
	_cleanup_free_ char *text = NULL;
	size_t len;
	cr_assert_eq(tg_read_file(info, &text, &len, 1 << 20), 0);
	char *at = strstr(text, k), *end = at ? strchr(at + 1, '\n') : NULL;
	cr_assert(at && end, "%s has no %s line", info, key);
	FILE *f = fopen(tmp, "w");
	cr_assert(f);
	fprintf(f, "%.*s%s%s%s", (int)(at - text), text, k, value, end);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rename(tmp, info), 0);
}

/* n runs committed with options o, each creating f<k>; *r: the mark's
 * index after them, parsed. */
static void commit_runs(const struct tg_txn_opts *o, int n, struct tg_runs *r)
{
	for (int k = 0; k < n; k++) {
		next_tick();
		cr_assert_eq(tg_txn_open(&t, o), 0);
		commit_new_file(k);
	}
	cr_assert_eq(tg_journal_clean_runs(sd, r), 1, "a commit leaves the index");
	cr_assert_eq(tg_runs_parse(r), 0);
}

static bool run_dir_there(const char *id)
{
	char dir[600];
	struct stat sb;
	snprintf(dir, sizeof(dir), "%s/txn/%s", sd, id);
	return stat(dir, &sb) == 0;
}

/* A run the index says is committed, but whose info says otherwise (a
 * state the mark cannot see change) is not retired on the index's word:
 * the prune reads each run it retires, and goes by the listing then. */
Test(journal, prune_reads_each_run_it_retires)
{
	struct tg_txn_opts o = { .workspace = ws, .state_dir = sd, .command = "unit", .lock = TG_LOCK_FAIL,
	                         .history_max_runs = 2 };
	struct tg_runs r;
	commit_runs(&o, 3, &r);
	cr_assert_eq(r.n, 2);
	/* The oldest kept run, made "open" without moving txn/. */
	edit_info(r.v[1].id, "state", "open");
	cr_assert_eq(tg_journal_clean_runs(sd, NULL), 0, "still a valid mark");
	next_tick();
	cr_assert_eq(tg_txn_open(&t, &o), 0);
	commit_new_file(3);
	cr_assert(run_dir_there(r.v[1].id), "the open run was retired on the index's word");
	tg_runs_clear(&r);
	expect_index_is_listing("after");
}

/* The commit prunes by the index, not by every run's info: an info edited
 * behind the mark's back (a size the bound would drop) is not read. */
Test(journal, prune_goes_by_the_index)
{
	struct tg_txn_opts o = { .workspace = ws, .state_dir = sd, .command = "unit", .lock = TG_LOCK_FAIL,
	                         .history_max_runs = 3, .history_max_bytes = 1u << 30 };
	struct tg_runs r;
	commit_runs(&o, 2, &r);
	cr_assert_eq(r.n, 2);
	edit_info(r.v[1].id, "journal_bytes", "1099511627776");
	next_tick();
	cr_assert_eq(tg_txn_open(&t, &o), 0);
	commit_new_file(2);
	cr_assert(run_dir_there(r.v[1].id), "the commit read the old run's info");
	tg_runs_clear(&r);
}

/* A mark cut short (it is never synced) has no index, and is still a mark
 * while its first line is whole; shorter than that, no mark. */
Test(journal, cut_index_is_no_index)
{
	for (int k = 0; k < 4; k++) {
		open_txn();
		commit_new_file(k);
	}
	char mark[512];
	snprintf(mark, sizeof(mark), "%s/txn/.clean", sd);
	_cleanup_free_ char *text = NULL;
	size_t len;
	cr_assert_eq(tg_read_file(mark, &text, &len, 1 << 20), 0);
	size_t first = (size_t)(strchr(text, '\n') - text) + 1;
	cr_assert_eq(tg_journal_clean_runs(sd, NULL), 0);
	struct tg_runs r;
	cr_assert_eq(tg_journal_clean_runs(sd, &r), 1);
	cr_assert_eq(tg_runs_parse(&r), 0);
	cr_assert_eq(r.n, 4);
	tg_runs_clear(&r);
	for (size_t cut = 0; cut < len; cut++) {
		cr_assert_eq(truncate(mark, (off_t)cut), 0);
		int c = tg_journal_clean_runs(sd, &r);
		cr_assert_eq(c, cut < first ? -1 : cut == first ? 0 : 1, "cut at %zu of %zu: %d", cut, len, c);
		if (c == 1)
			cr_assert_eq(tg_runs_parse(&r), -EBADMSG, "cut at %zu of %zu taken for an index", cut, len);
		cr_assert_eq(r.n, 0);
		tg_runs_clear(&r);
		int fd = open(mark, O_WRONLY);
		cr_assert_geq(fd, 0);
		cr_assert_eq(pwrite(fd, text, len, 0), (ssize_t)len);
		close(fd);
	}
	cr_assert_eq(tg_journal_clean_runs(sd, &r), 1, "whole again");
	cr_assert_eq(tg_runs_parse(&r), 0);
	tg_runs_clear(&r);
	/* Bytes changed at random after the first line: an index or none,
	 * never a crash; one it takes is in order and of sane names. */
	unsigned seed = 77;
	for (int round = 0; round < 2000; round++) {
		_cleanup_free_ char *bad = tg_strdup(text);
		cr_assert(bad);
		for (int k = 1 + rand_r(&seed) % 3; k > 0; k--)
			bad[first + (size_t)rand_r(&seed) % (len - first)] = "0123456789 \n.-/azc\x01\xff"[rand_r(&seed) % 20];
		int fd = open(mark, O_WRONLY | O_TRUNC);
		cr_assert_geq(fd, 0);
		cr_assert_eq(write(fd, bad, len), (ssize_t)len);
		close(fd);
		int c = tg_journal_clean_runs(sd, &r);
		cr_assert(c == 0 || c == 1, "round %d: %d", round, c);
		if (c == 1 && tg_runs_parse(&r) < 0)
			cr_assert_eq(r.n, 0);
		for (size_t i = 0; i < r.n; i++) {
			cr_assert(r.v[i].id[0] && r.v[i].id[0] != '.' && !strchr(r.v[i].id, '/'), "round %d: id '%s'", round,
			          r.v[i].id);
			cr_assert(i == 0 || !tg_txinfo_newer(&r.v[i], &r.v[i - 1]), "round %d: out of order", round);
		}
		tg_runs_clear(&r);
	}
}

/* ---- several threads: a creation is known only once its call ran ---- */

static int before_by(pid_t tid, enum tg_op_kind kind, const char *rel, const char *rel2, int flags)
{
	struct tg_op op = { .kind = kind, .flags = flags, .writes = true, .pid = tid };
	op.path = rel ? P(rel) : NULL;
	op.path2 = rel2 ? P(rel2) : NULL;
	return tg_txn_before(t, &op);
}

/* Two live threads (this process and its parent stand in for them): A's
 * creation is journaled, B's call comes before A's create has run; the
 * empty name must not be taken for a failed create. */
Test(journal, creation_settled_only_when_its_own_thread_moves_on)
{
	pid_t a = getpid(), b = getppid();
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_OPEN, "new-a", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_eq(before_by(b, TG_OP_OPEN, "new-b", NULL, O_WRONLY | O_CREAT), 0);
	put("new-b", "b");
	put("new-a", "a"); /* A's create runs only now */
	cr_assert_eq(before_by(b, TG_OP_OPEN, "new-c", NULL, O_WRONLY | O_CREAT), 0);
	put("new-c", "c");
	rollback();
	struct stat st;
	cr_assert_eq(lstat(P("new-a"), &st), -1, "A's file is removed");
	cr_assert_eq(lstat(P("new-b"), &st), -1);
	cr_assert_eq(lstat(P("new-c"), &st), -1);
}

/* A creates a file and makes no further call (it exited, say); B removes
 * it: that is no original to stash, and the restore must neither bring it
 * back nor fail. */
Test(journal, file_made_by_one_thread_removed_by_another)
{
	pid_t a = getpid(), b = getppid();
	put("orig", "o");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_OPEN, "tmp", NULL, O_WRONLY | O_CREAT), 0);
	put("tmp", "t");
	cr_assert_eq(before_by(b, TG_OP_UNLINK, "tmp", NULL, 0), 0);
	cr_assert_eq(unlink(P("tmp")), 0);
	cr_assert_eq(before_by(b, TG_OP_UNLINK, "orig", NULL, 0), 0);
	cr_assert_eq(unlink(P("orig")), 0);
	rollback();
	struct stat st;
	cr_assert_eq(lstat(P("tmp"), &st), -1, "not brought back");
	_cleanup_free_ char *o = get("orig");
	cr_assert_str_eq(o, "o");
}

/* Killed with creations of several threads pending (no identity on disk):
 * recovery removes what they made, a name link() added to an original, and
 * never the original itself. */
Test(journal, recovery_removes_pending_creations_never_originals)
{
	pid_t a = getpid(), b = getppid();
	put("orig", "o");
	put("orig2", "o2");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_OPEN, "orig", NULL, O_WRONLY | O_TRUNC), 0);
	put("orig", "changed");
	cr_assert_eq(before_by(a, TG_OP_OPEN, "na", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_eq(before_by(b, TG_OP_OPEN, "nb", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_eq(before_by(b, TG_OP_MKDIR, "nd", NULL, 0), 0); /* b's own: settles nb (absent: failed) */
	cr_assert_eq(mkdir(P("nd"), 0755), 0);
	put("na", "a");
	cr_assert_eq(before_by(a, TG_OP_LINK, "orig2", "ln", 0), 0); /* settles na */
	cr_assert_eq(link(P("orig2"), P("ln")), 0);
	tg_txn_free(t); /* killed: nd (b) and ln (a) pending */
	t = NULL;
	int n = -1;
	cr_assert_eq(tg_recover(ws, sd, &n), 0);
	cr_assert_eq(n, 1);
	struct stat st;
	cr_assert_eq(lstat(P("na"), &st), -1);
	cr_assert_eq(lstat(P("nd"), &st), -1, "pending mkdir undone");
	cr_assert_eq(lstat(P("ln"), &st), -1, "pending link undone");
	_cleanup_free_ char *o = get("orig");
	cr_assert_str_eq(o, "o");
	cr_assert_eq(lstat(P("orig2"), &st), 0, "the original keeps its name");
	cr_assert_eq(st.st_nlink, 1);
}

/* A pending creation whose name ends up holding an original (moved there by
 * another thread, journaled after it): recovery moves it back and removes
 * nothing. */
Test(journal, recovery_never_removes_an_original_at_a_pending_name)
{
	pid_t a = getpid(), b = getppid();
	put("orig", "o");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_OPEN, "p", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_eq(before_by(b, TG_OP_RENAME, "orig", "p", 0), 0);
	cr_assert_eq(rename(P("orig"), P("p")), 0);
	tg_txn_free(t); /* killed: A's create never ran */
	t = NULL;
	cr_assert_eq(tg_recover(ws, sd, NULL), 0);
	_cleanup_free_ char *o = get("orig");
	cr_assert_str_eq(o, "o");
	struct stat st;
	cr_assert_eq(lstat(P("p"), &st), -1);
}

/* A file made in a directory of the run has no record of its own, so its
 * move out is the only record with its number. Removed later (born: no
 * record either), it frees that number, and the kernel may give it to the
 * file of a creation txguard was killed at (its record written, its result
 * never seen). Recovery must remove that file: the number was never an
 * original's, and a file left there is in the way of whatever comes back
 * to the name (recover failed with EEXIST; found by journal-it-crash_txguard).
 * Here the born file is moved to the pending name unseen, which hands its
 * number over as the reuse would. */
Test(journal, number_of_a_moved_born_file_is_no_originals)
{
	pid_t a = getpid();
	raise_timestamp_floor();
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_MKDIR, "d", NULL, 0), 0);
	cr_assert_eq(mkdir(P("d"), 0755), 0);
	cr_assert_eq(before_by(a, TG_OP_OPEN, "d/x", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_not(tg_txn_awaits(t, a), "a file in a new directory: no record");
	put("d/x", "new");
	cr_assert_eq(before_by(a, TG_OP_RENAME, "d/x", "y", 0), 0);
	cr_assert_eq(rename(P("d/x"), P("y")), 0);
	cr_assert_eq(before_by(a, TG_OP_OPEN, "c", NULL, O_WRONLY | O_CREAT | O_EXCL), 0);
	cr_assert_eq(rename(P("y"), P("c")), 0); /* the number reused, at the pending name */
	tg_txn_free(t); /* killed at the creation */
	t = NULL;
	int n = -1;
	cr_assert_eq(tg_recover(ws, sd, &n), 0);
	cr_assert_eq(n, 1);
	struct stat st;
	cr_assert_eq(lstat(P("c"), &st), -1, "the pending creation's file is removed");
	cr_assert_eq(lstat(P("y"), &st), -1);
	cr_assert_eq(lstat(P("d"), &st), -1);
}

/* Two tasks taking turns both trap `mv x y` while x still holds the
 * original, so both journal it (y's original stashed, the move) before
 * either call runs. A's runs first; B's fails (ENOENT), and its result
 * voids its records: the summary says what happened, x renamed over y.
 * Replayed, B's records had the moved file removed and x taken for an
 * untouched original: "deleted x" besides the rename (the summary
 * property's concurrent mode, seed 15). Without B's result its records
 * stand, and that is still the summary: checked too, so that the test
 * cannot pass for another reason. */
static void raced_rename(bool result)
{
	pid_t a = getpid(), b = getppid();
	put("x", "moved");
	put("y", "replaced");
	open_txn();
	cr_assert_eq(before_by(b, TG_OP_CHMOD, "x", NULL, 0), 0); /* the tasks take turns */
	cr_assert_eq(before_by(a, TG_OP_RENAME, "x", "y", 0), 0);
	cr_assert_eq(before_by(b, TG_OP_RENAME, "x", "y", 0), 0);
	cr_assert(tg_txn_awaits(t, b), "a move while tasks take turns waits for its result");
	cr_assert_eq(rename(P("x"), P("y")), 0); /* A's call */
	cr_assert_eq(rename(P("x"), P("y")), -1); /* B's */
	cr_assert_eq(errno, ENOENT);
	if (result) {
		cr_assert_eq(tg_txn_after(t, b, -ENOENT), 0);
		cr_assert_not(tg_txn_awaits(t, b));
	}
	struct tg_changes c;
	cr_assert_eq(tg_txn_changes(t, &c), 0);
	bool renamed = false, x_deleted = false;
	for (size_t i = 0; i < c.n; i++) {
		renamed |= c.v[i].kind == TG_CHANGE_RENAMED && !strcmp(c.v[i].from, "x") && !strcmp(c.v[i].path, "y");
		x_deleted |= c.v[i].kind == TG_CHANGE_DELETED && !strcmp(c.v[i].path, "x");
	}
	cr_assert(renamed, "x renamed to y");
	cr_assert_eq(x_deleted, !result, "x deleted as well (the old summary)");
	if (result)
		cr_assert_eq(c.n, 1, "x renamed to y (its chmod with it), nothing else");
	tg_changes_clear(&c);
	rollback();
	_cleanup_free_ char *x = get("x"), *y = get("y");
	cr_assert_str_eq(x, "moved");
	cr_assert_str_eq(y, "replaced");
}

/* A's `mv x f0` is journaled; B's write-open of x traps while x still
 * holds the original, so B's capture of it is journaled under x. A's move
 * runs first, and B's open makes a new x. The capture is the moved
 * original's (one link: one name, and it had left x): the summary says x
 * renamed to f0 and a new x. Replayed by names, the capture went to an
 * original taken to be still at x: "modified x" here, and with seed 144's
 * records (the summary property's concurrent mode) "deleted x", x there. */
Test(journal, capture_journaled_before_a_move_ran_follows_the_file)
{
	pid_t a = getppid(), b = getpid(); /* b's result is an fd of ours */
	raise_timestamp_floor();
	put("x", "original");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_RENAME, "x", "f0", 0), 0);
	cr_assert_eq(before_by(b, TG_OP_OPEN, "x", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_eq(rename(P("x"), P("f0")), 0); /* A's call */
	int fd = open(P("x"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644); /* B's: a new file */
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "new", 3), 3);
	cr_assert_eq(tg_txn_after(t, b, fd), 0);
	close(fd);
	struct tg_changes c;
	cr_assert_eq(tg_txn_changes(t, &c), 0);
	bool renamed = false, created = false, deleted = false;
	for (size_t i = 0; i < c.n; i++) {
		renamed |= c.v[i].kind == TG_CHANGE_RENAMED && !strcmp(c.v[i].from, "x") && !strcmp(c.v[i].path, "f0");
		created |= c.v[i].kind == TG_CHANGE_CREATED && !strcmp(c.v[i].path, "x");
		deleted |= c.v[i].kind == TG_CHANGE_DELETED;
	}
	cr_assert(renamed, "x renamed to f0");
	cr_assert(created, "a new x");
	cr_assert_not(deleted, "nothing deleted");
	cr_assert_eq(c.n, 2);
	tg_changes_clear(&c);
	rollback();
	_cleanup_free_ char *x = get("x");
	cr_assert_str_eq(x, "original");
	struct stat st;
	cr_assert_eq(lstat(P("f0"), &st), -1);
}

/* The run makes f1 and removes it: f1's inode number is free again, and
 * ext4 gives it to the next new file of the directory. B's O_CREAT open of
 * `name` trapped while `name` held the original; A moved that away, and B's
 * call made a new file there, under f1's old number. Its record is written
 * once its object is known, and the number was taken for the run's earlier
 * creation, which has a record: none was written. The summary left the new
 * file out, and the rollback failed, the original unable to come back to
 * its taken name. */
/* One try: the run's calls up to B's open, done. Its fd, on a new file at
 * `name`, in *fd; true when that file got f1's number. */
static bool new_file_on_a_freed_number(pid_t a, pid_t b, int *fd)
{
	put("name", "original");
	open_txn();
	cr_assert_eq(before_by(b, TG_OP_OPEN, "f1", NULL, O_WRONLY | O_CREAT), 0);
	*fd = open(P("f1"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(*fd, 0);
	struct stat f1;
	cr_assert_eq(fstat(*fd, &f1), 0);
	cr_assert_eq(tg_txn_after(t, b, *fd), 0);
	close(*fd);
	cr_assert_eq(before_by(b, TG_OP_OPEN, "name", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_eq(before_by(a, TG_OP_RENAME, "name", "away", 0), 0);
	cr_assert_eq(before_by(a, TG_OP_UNLINK, "f1", NULL, 0), 0);
	cr_assert_eq(rename(P("name"), P("away")), 0); /* A's calls */
	cr_assert_eq(unlink(P("f1")), 0);
	*fd = open(P("name"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644); /* B's: a new file */
	cr_assert_geq(*fd, 0);
	struct stat now;
	cr_assert_eq(fstat(*fd, &now), 0);
	return now.st_ino == f1.st_ino;
}

Test(journal, new_file_under_the_number_of_a_removed_creation)
{
	pid_t a = getppid(), b = getpid(); /* results are fds of ours */
	raise_timestamp_floor();
	/* Another process may take the freed number first (the suite runs
	 * tests side by side): try again, from the start. */
	int fd, tries = 0;
	while (!new_file_on_a_freed_number(a, b, &fd)) {
		cr_assert_eq(tg_txn_after(t, b, fd), 0);
		close(fd);
		rollback();
		tg_txn_free(t);
		t = NULL;
		if (++tries < 50)
			continue;
		/* tmpfs, for one, never gives a number twice */
		const char *must = getenv("TXGUARD_TESTS_MUST_WORK");
		cr_assert(!must || strcmp(must, "1") != 0, "%s gave the new file a new number, %d times", ws, tries);
		cr_skip_test("%s gives a new file a new number: no reuse to test", ws);
	}
	cr_assert_eq(write(fd, "new", 3), 3);
	cr_assert_eq(tg_txn_after(t, b, fd), 0);
	close(fd);
	struct tg_changes c;
	cr_assert_eq(tg_txn_changes(t, &c), 0);
	bool renamed = false, created = false;
	for (size_t i = 0; i < c.n; i++) {
		renamed |= c.v[i].kind == TG_CHANGE_RENAMED && !strcmp(c.v[i].from, "name") && !strcmp(c.v[i].path, "away");
		created |= c.v[i].kind == TG_CHANGE_CREATED && !strcmp(c.v[i].path, "name");
	}
	cr_assert(renamed, "name renamed to away");
	cr_assert(created, "a new file at name");
	cr_assert_eq(c.n, 2, "nothing of f1, which came and went");
	tg_changes_clear(&c);
	rollback();
	_cleanup_free_ char *name = get("name");
	cr_assert_str_eq(name, "original");
	struct stat st;
	cr_assert_eq(lstat(P("away"), &st), -1);
	cr_assert_eq(lstat(P("f1"), &st), -1);
}

/* B's `mv m f0` and A's `rm f0` are both journaled while f0 holds the
 * original: each removal record names the original. unlink_first: A's
 * call runs first (the move then replaces nothing, and m ends at f0);
 * else B's move replaces the original and A's unlink removes m. Replayed
 * by name, A's record removed m at f0 in both: "deleted f0" while m was
 * there (seed 3384 of the concurrent mode). */
static void removal_raced_by_a_move(bool unlink_first)
{
	pid_t a = getpid(), b = getppid();
	put("f0", "original");
	put("m", "mover");
	open_txn();
	cr_assert_eq(before_by(b, TG_OP_RENAME, "m", "f0", 0), 0);
	cr_assert_eq(before_by(a, TG_OP_UNLINK, "f0", NULL, 0), 0);
	if (unlink_first)
		cr_assert_eq(unlink(P("f0")), 0);
	cr_assert_eq(rename(P("m"), P("f0")), 0);
	if (!unlink_first)
		cr_assert_eq(unlink(P("f0")), 0);
	struct tg_changes c;
	int ce = tg_txn_changes(t, &c);
	cr_assert_eq(ce, 0, "changes: %s", strerror(-ce));
	bool renamed = false, f0_deleted = false, m_deleted = false;
	for (size_t i = 0; i < c.n; i++) {
		renamed |= c.v[i].kind == TG_CHANGE_RENAMED && !strcmp(c.v[i].from, "m") && !strcmp(c.v[i].path, "f0");
		f0_deleted |= c.v[i].kind == TG_CHANGE_DELETED && !strcmp(c.v[i].path, "f0");
		m_deleted |= c.v[i].kind == TG_CHANGE_DELETED && !strcmp(c.v[i].path, "m");
	}
	/* m's line says it replaced f0 where it ends there. */
	cr_assert_eq(renamed, unlink_first, "m renamed to f0 where it is there");
	cr_assert_eq(f0_deleted, !unlink_first, "f0 deleted on a line of its own where m is gone too");
	cr_assert_eq(m_deleted, !unlink_first, "m deleted where the unlink removed it");
	cr_assert_eq(c.n, unlink_first ? 1 : 2);
	tg_changes_clear(&c);
	rollback();
	_cleanup_free_ char *f0 = get("f0"), *m = get("m");
	cr_assert_str_eq(f0, "original");
	/* Where the unlink removed m, nothing had saved m: its stop saw the
	 * original. Under the tracer A's stop waits for B's running call
	 * (tg_txn_must_wait, below), so A meets m's file and saves it; this
	 * order is what the wait prevents. */
	if (unlink_first)
		cr_assert_str_eq(m, "mover");
}

Test(journal, removal_raced_by_a_move_that_ran_last) { removal_raced_by_a_move(true); }
Test(journal, removal_raced_by_a_move_that_ran_first) { removal_raced_by_a_move(false); }

/* B's `mv m f0` is journaled and may be running: A's calls on f0, on a
 * name below it or above it, wait until B's result is in; A's calls on
 * other names, and B's own, do not. */
Test(journal, call_on_a_name_waits_for_another_tasks_running_call)
{
	pid_t a = getpid(), b = getppid();
	put("f0", "original");
	put("m", "mover");
	put("other", "x");
	open_txn();
	cr_assert_eq(before_by(b, TG_OP_RENAME, "m", "f0", 0), 0);
	struct tg_op op = { .kind = TG_OP_UNLINK, .writes = true, .pid = a, .path = P("f0") };
	cr_assert(tg_txn_must_wait(t, &op), "A's unlink of f0 waits");
	op.path = P("f0/x");
	cr_assert(tg_txn_must_wait(t, &op), "a name below f0 waits");
	op = (struct tg_op){ .kind = TG_OP_OPEN, .flags = O_WRONLY | O_TRUNC, .writes = true, .pid = a,
	                     .path = P("m") };
	cr_assert(tg_txn_must_wait(t, &op), "a write-open of m waits");
	op.path = P("other");
	cr_assert_not(tg_txn_must_wait(t, &op), "another name does not wait");
	op.path = P("f0");
	op.writes = false;
	cr_assert_not(tg_txn_must_wait(t, &op), "a read does not wait");
	op.writes = true;
	cr_assert_eq(rename(P("m"), P("f0")), 0);
	/* B's call returned, and B is at its next stop: B's own call on f0
	 * does not wait, and A goes on. */
	struct tg_op next = op;
	next.pid = b;
	cr_assert_not(tg_txn_must_wait(t, &next), "B's own next call does not wait");
	cr_assert_not(tg_txn_must_wait(t, &op), "B's call returned: A goes on");
	cr_assert_eq(before_by(a, TG_OP_UNLINK, "f0", NULL, 0), 0);
	cr_assert_eq(unlink(P("f0")), 0);
	rollback();
	_cleanup_free_ char *f0 = get("f0"), *m = get("m");
	cr_assert_str_eq(f0, "original");
	cr_assert_str_eq(m, "mover");
}

/* A symlink a call's path went through is one of its names: B's write of
 * `ln`, a symlink to t, is journaled as a creation of t; A's move onto
 * ln would make B's call write m's file instead, so A waits for B's call.
 * And the other way round: B's call waits for A's move. */
Test(journal, symlink_a_path_went_through_is_one_of_its_names)
{
	pid_t a = getppid(), b = getpid(); /* B's result is an fd of ours */
	put("m", "mover");
	cr_assert_eq(symlink("t", P("ln")), 0);
	open_txn();
	char *via[] = { P("ln"), NULL };
	struct tg_op open_b = { .kind = TG_OP_OPEN, .flags = O_WRONLY | O_CREAT | O_TRUNC, .writes = true,
	                        .pid = b, .path = P("t"), .follow = true, .via = via };
	struct tg_op move_a = { .kind = TG_OP_RENAME, .writes = true, .pid = a, .path = P("m"), .path2 = P("ln") };
	cr_assert_eq(tg_txn_before(t, &open_b), 0);
	cr_assert(tg_txn_must_wait(t, &move_a), "A's move onto the symlink B's call goes through waits");
	int fd = open(P("ln"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); /* B's call: makes t */
	cr_assert_geq(fd, 0);
	cr_assert_eq(tg_txn_after(t, b, fd), 0);
	close(fd);
	cr_assert_not(tg_txn_must_wait(t, &move_a), "B's call returned: A goes on");
	cr_assert_eq(tg_txn_before(t, &move_a), 0);
	cr_assert(tg_txn_must_wait(t, &open_b), "B's next call through ln waits for A's move onto ln");
	open_b.via = NULL;
	cr_assert_not(tg_txn_must_wait(t, &open_b), "on t alone, it would not");
	cr_assert_eq(rename(P("m"), P("ln")), 0); /* A's call */
	rollback();
	_cleanup_free_ char *m = get("m");
	cr_assert_str_eq(m, "mover");
	char text[8] = "";
	cr_assert_eq(readlink(P("ln"), text, sizeof(text)), 1);
	cr_assert_eq(text[0], 't');
	struct stat st;
	cr_assert_eq(lstat(P("t"), &st), -1, "t, made through ln, is gone");
}

/* A call that changes an object by its name is kept too: B's chmod of f0
 * saved f0's mode, and A's move onto f0 run first would make it change
 * m's file, which nothing saved. B at a fork event is past that call. */
Test(journal, call_that_changes_an_object_by_its_name_is_kept)
{
	pid_t a = getpid(), b = getppid();
	put("f0", "original");
	put("m", "mover");
	cr_assert_eq(chmod(P("f0"), 0644) | chmod(P("m"), 0644), 0);
	open_txn();
	struct tg_op chmod_b = { .kind = TG_OP_CHMOD, .mode = 0600, .writes = true, .pid = b, .path = P("f0") };
	struct tg_op move_a = { .kind = TG_OP_RENAME, .writes = true, .pid = a, .path = P("m"), .path2 = P("f0") };
	cr_assert_eq(tg_txn_before(t, &chmod_b), 0);
	cr_assert(tg_txn_must_wait(t, &move_a), "A's move onto f0 waits for B's chmod");
	tg_txn_returned(t, b);
	cr_assert_not(tg_txn_must_wait(t, &move_a), "B made a task: its chmod returned");
	cr_assert_eq(chmod(P("f0"), 0600), 0); /* B's call */
	cr_assert_eq(tg_txn_before(t, &move_a), 0);
	cr_assert_eq(rename(P("m"), P("f0")), 0);
	rollback();
	struct stat st;
	cr_assert_eq(stat(P("f0"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0644);
	cr_assert_eq(stat(P("m"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0644);
	_cleanup_free_ char *f0 = get("f0"), *m = get("m");
	cr_assert_str_eq(f0, "original");
	cr_assert_str_eq(m, "mover");
}

/* B's `ln m x` while x exists is journaled as nothing (EEXIST); A's `rm x`
 * run first would let B's link make x, on no record: the restore then
 * found x taken. So A's removal waits for B's link. */
Test(journal, link_to_a_name_that_exists_is_kept)
{
	pid_t a = getpid(), b = getppid();
	put("x", "original");
	put("m", "mover");
	open_txn();
	struct tg_op link_b = { .kind = TG_OP_LINK, .writes = true, .pid = b, .path = P("m"), .path2 = P("x") };
	struct tg_op rm_a = { .kind = TG_OP_UNLINK, .writes = true, .pid = a, .path = P("x") };
	cr_assert_eq(tg_txn_before(t, &link_b), 0);
	cr_assert(tg_txn_must_wait(t, &rm_a), "A's removal of x waits for B's link");
	tg_txn_returned(t, b); /* B's link failed: EEXIST */
	cr_assert_not(tg_txn_must_wait(t, &rm_a));
	cr_assert_eq(tg_txn_before(t, &rm_a), 0);
	cr_assert_eq(unlink(P("x")), 0);
	rollback();
	_cleanup_free_ char *x = get("x"), *m = get("m");
	cr_assert_str_eq(x, "original");
	cr_assert_str_eq(m, "mover");
}

/* ln f g; then a write or chmod through g; rm g. The change is f's: the
 * summary said nothing of f, whose only records are g's (the hard-link
 * limit that seeds 54 and 393 of the concurrent summary mode met). */
static void change_through_a_link_the_run_made(bool content)
{
	put("f", "original");
	cr_assert_eq(chmod(P("f"), 0644), 0);
	open_txn();
	cr_assert_eq(before(TG_OP_LINK, "f", "g", 0), 0);
	cr_assert_eq(link(P("f"), P("g")), 0);
	if (content) {
		cr_assert_eq(before(TG_OP_OPEN, "g", NULL, O_WRONLY | O_TRUNC), 0);
		put("g", "changed");
	} else {
		cr_assert_eq(before(TG_OP_CHMOD, "g", NULL, 0), 0);
		cr_assert_eq(chmod(P("g"), 0600), 0);
	}
	cr_assert_eq(before(TG_OP_UNLINK, "g", NULL, 0), 0);
	cr_assert_eq(unlink(P("g")), 0);
	struct tg_changes c;
	cr_assert_eq(tg_txn_changes(t, &c), 0);
	cr_assert_eq(c.n, 1, "one line, f's");
	cr_assert_str_eq(c.v[0].path, "f");
	cr_assert_eq(c.v[0].kind, content ? TG_CHANGE_MODIFIED : TG_CHANGE_METADATA);
	tg_changes_clear(&c);
	rollback();
	_cleanup_free_ char *f = get("f");
	cr_assert_str_eq(f, "original");
	struct stat st;
	cr_assert_eq(stat(P("f"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0644);
	cr_assert_eq(st.st_nlink, 1);
	cr_assert_eq(lstat(P("g"), &st), -1);
}

Test(journal, write_through_a_link_the_run_made_is_its_sources) { change_through_a_link_the_run_made(true); }
Test(journal, chmod_through_a_link_the_run_made_is_its_sources) { change_through_a_link_the_run_made(false); }

/* B is gone (a zombie its waiting parent cannot reap is still there for
 * kill(2)): its kept calls hold nobody back. */
Test(journal, calls_of_a_task_gone_hold_nobody_back)
{
	pid_t a = getpid(), b = getppid();
	put("f0", "original");
	open_txn();
	struct tg_op op = { .kind = TG_OP_OPEN, .flags = O_WRONLY | O_CREAT, .writes = true, .pid = a,
	                    .path = P("f0") };
	cr_assert_eq(before_by(b, TG_OP_UNLINK, "f0", NULL, 0), 0);
	cr_assert(tg_txn_must_wait(t, &op), "B's unlink of f0 is kept");
	tg_txn_gone(t, b);
	cr_assert_not(tg_txn_must_wait(t, &op), "B gone: nobody waits for its unlink");
	cr_assert_eq(before_by(b, TG_OP_OPEN, "new", NULL, O_WRONLY | O_CREAT), 0);
	op.path = P("new");
	cr_assert(tg_txn_must_wait(t, &op), "B's creation of new is kept");
	tg_txn_gone(t, b);
	cr_assert_not(tg_txn_must_wait(t, &op), "nor for its creation");
	rollback();
}

/* Not alone only because a shell waits for it (bash -c 'rm -rf d'): a task
 * whose calls no other task's come between pays no result stop for them. */
Test(journal, removal_of_a_task_taking_no_turns_is_not_watched)
{
	pid_t a = getpid();
	put("x", "1");
	put("y", "2");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_UNLINK, "x", NULL, 0), 0);
	cr_assert_not(tg_txn_awaits(t, a));
	cr_assert_eq(unlink(P("x")), 0);
	cr_assert_eq(before_by(a, TG_OP_RENAME, "y", "z", 0), 0);
	cr_assert_not(tg_txn_awaits(t, a));
	cr_assert_eq(rename(P("y"), P("z")), 0);
	rollback();
	_cleanup_free_ char *x = get("x"), *y = get("y");
	cr_assert_str_eq(x, "1");
	cr_assert_str_eq(y, "2");
}

Test(journal, raced_rename_that_failed_is_voided) { raced_rename(true); }
Test(journal, raced_rename_without_its_result_stands) { raced_rename(false); }

/* A's creation is pending (not run) when B moves an original to its name:
 * that original must not be taken for what A made (it would then count as
 * born, and B's later overwrite would not be saved). */
Test(journal, original_moved_to_a_pending_name_is_not_born)
{
	pid_t a = getpid(), b = getppid();
	put("orig", "precious");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_OPEN, "x", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_eq(before_by(b, TG_OP_RENAME, "orig", "x", 0), 0);
	cr_assert_eq(rename(P("orig"), P("x")), 0);
	cr_assert_eq(before_by(b, TG_OP_OPEN, "x", NULL, O_WRONLY | O_TRUNC), 0);
	put("x", "clobbered");
	rollback();
	_cleanup_free_ char *o = get("orig");
	cr_assert_str_eq(o, "precious");
	struct stat st;
	cr_assert_eq(lstat(P("x"), &st), -1);
}

/* A opens an existing name with O_CREAT; B removes it before A's call runs,
 * so A's call creates a new file that no record names: it must be found
 * and removed before the original is put back (else: EEXIST, journal kept). */
Test(journal, create_over_a_name_another_thread_just_removed)
{
	pid_t a = getpid(), b = getppid();
	put("g", "orig");
	put("h", "orig-h");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_OPEN, "g", NULL, O_WRONLY | O_CREAT | O_TRUNC), 0);
	cr_assert_eq(before_by(b, TG_OP_UNLINK, "g", NULL, 0), 0);
	cr_assert_eq(unlink(P("g")), 0);
	put("g", "new"); /* A's call runs now: a new file */
	cr_assert_eq(before_by(a, TG_OP_OPEN, "h", NULL, O_WRONLY | O_CREAT | O_TRUNC), 0);
	cr_assert_eq(before_by(b, TG_OP_UNLINK, "h", NULL, 0), 0);
	cr_assert_eq(unlink(P("h")), 0);
	put("h", "new-h"); /* the same, A never calls again: the rollback finds it */
	rollback();
	_cleanup_free_ char *g = get("g");
	_cleanup_free_ char *h = get("h");
	cr_assert_str_eq(g, "orig");
	cr_assert_str_eq(h, "orig-h");
}

/* The interleaving faults-concurrent's "shared names" round hit about once
 * in 60 rounds: A's O_CREAT open of an emptied name makes a file; before
 * A's call returns, B captures that file and removes it; by A's next call
 * the name is empty. Learnt by the name, A's creation "made nothing", the
 * file stayed unknown, was put back by the restore and the original could
 * not follow (EEXIST, journal kept). Its result (the fd) says what it made. */
Test(journal, creation_known_by_its_result_whatever_the_name_holds)
{
	pid_t a = getpid(), b = getppid();
	put("g", "orig");
	open_txn();
	cr_assert_eq(before_by(b, TG_OP_UNLINK, "g", NULL, 0), 0);
	cr_assert_eq(unlink(P("g")), 0);
	cr_assert_eq(before_by(a, TG_OP_OPEN, "g", NULL, O_WRONLY | O_CREAT | O_TRUNC), 0);
	cr_assert(tg_txn_awaits(t, a), "the creation waits for its result");
	cr_assert_not(tg_txn_awaits(t, b));
	int fd = open(P("g"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); /* A's call runs */
	cr_assert_geq(fd, 0);
	cr_assert_eq(before_by(b, TG_OP_OPEN, "g", NULL, O_WRONLY | O_TRUNC), 0);
	put("g", "b");
	cr_assert_eq(before_by(b, TG_OP_UNLINK, "g", NULL, 0), 0);
	cr_assert_eq(unlink(P("g")), 0);
	cr_assert_eq(tg_txn_after(t, a, fd), 0); /* A's call returns */
	cr_assert_not(tg_txn_awaits(t, a));
	close(fd);
	cr_assert_eq(before_by(a, TG_OP_OPEN, "g", NULL, O_WRONLY | O_CREAT | O_TRUNC), 0);
	put("g", "a again");
	rollback();
	_cleanup_free_ char *g = get("g");
	cr_assert_str_eq(g, "orig");
}

/* A, alone in the tree, rewrites g (unlink, create at the vacated name)
 * and is not stopped at the create's exit (tg_txn_alone). Then B joins the
 * tree and moves the new file away before A's next call: tg_txn_company,
 * at B's first stop, settles A's creation by the name first, so the
 * restore takes the new file away and puts the original back. Without
 * it, the name would be empty at A's next call ("created nothing"), and
 * the restore would find the moved-back new file where the original goes. */
Test(journal, alone_creation_settled_when_company_comes)
{
	pid_t a = getpid(), b = getppid();
	put("g", "orig");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_UNLINK, "g", NULL, 0), 0);
	cr_assert_eq(unlink(P("g")), 0);
	cr_assert_eq(before_by(a, TG_OP_OPEN, "g", NULL, O_WRONLY | O_CREAT | O_EXCL), 0);
	cr_assert(tg_txn_awaits(t, a));
	tg_txn_alone(t, a);
	cr_assert_not(tg_txn_awaits(t, a), "alone: no stop at the call's exit");
	put("g", "new"); /* A's call runs, then A forks B */
	cr_assert_eq(tg_txn_company(t), 0);
	cr_assert_eq(before_by(b, TG_OP_RENAME, "g", "moved", 0), 0);
	cr_assert_eq(rename(P("g"), P("moved")), 0);
	rollback();
	_cleanup_free_ char *g = get("g");
	cr_assert_str_eq(g, "orig");
	struct stat st;
	cr_assert_eq(lstat(P("moved"), &st), -1);
}

/* B's rename of an original over a name A is creating traps while the
 * name is empty and runs after A's create: the name then holds the
 * original, which must not be taken for what A made (it would count as
 * born, and A's overwrite would not be saved). With A's result (the fd of
 * the file the rename freed) and without one (settled by the name). */
static void original_renamed_over_a_creation(bool result)
{
	pid_t a = getpid(), b = getppid();
	raise_timestamp_floor();
	put("h", "precious");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_OPEN, "g", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_eq(before_by(b, TG_OP_RENAME, "h", "g", 0), 0);
	int fd = open(P("g"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644); /* A's call */
	cr_assert_geq(fd, 0);
	cr_assert_eq(rename(P("h"), P("g")), 0); /* B's call */
	if (result)
		cr_assert_eq(tg_txn_after(t, a, fd), 0);
	close(fd);
	cr_assert_eq(before_by(a, TG_OP_OPEN, "g", NULL, O_WRONLY | O_TRUNC), 0);
	put("g", "clobbered");
	rollback();
	_cleanup_free_ char *h = get("h");
	cr_assert_str_eq(h, "precious");
	struct stat st;
	cr_assert_eq(lstat(P("g"), &st), -1);
}

Test(journal, original_renamed_over_a_creation_with_result) { original_renamed_over_a_creation(true); }
Test(journal, original_renamed_over_a_creation_by_name) { original_renamed_over_a_creation(false); }

/* A's O_CREAT open of an existing name creates a new file because B
 * removed the name first; before A's call returns, B moves (or removes)
 * the new file. Its record must name it where it is, after B's records, so
 * that the restore takes it away before the original comes back. */
static void new_file_moved_before_its_result(bool remove)
{
	pid_t a = getpid(), b = getppid();
	put("g", "orig");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_OPEN, "g", NULL, O_WRONLY | O_CREAT | O_TRUNC), 0);
	cr_assert_eq(before_by(b, TG_OP_UNLINK, "g", NULL, 0), 0);
	cr_assert_eq(unlink(P("g")), 0);
	int fd = open(P("g"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); /* A's call: a new file */
	cr_assert_geq(fd, 0);
	if (remove) {
		cr_assert_eq(before_by(b, TG_OP_UNLINK, "g", NULL, 0), 0);
		cr_assert_eq(unlink(P("g")), 0);
	} else {
		cr_assert_eq(before_by(b, TG_OP_RENAME, "g", "k", 0), 0);
		cr_assert_eq(rename(P("g"), P("k")), 0);
	}
	cr_assert_eq(tg_txn_after(t, a, fd), 0);
	close(fd);
	rollback();
	_cleanup_free_ char *g = get("g");
	cr_assert_str_eq(g, "orig");
	struct stat st;
	cr_assert_eq(lstat(P("k"), &st), -1, "the new file is gone");
}

Test(journal, new_file_removed_before_its_result) { new_file_moved_before_its_result(true); }
Test(journal, new_file_renamed_before_its_result) { new_file_moved_before_its_result(false); }

/* A new file in a directory the run made writes no record, so its call
 * gets no exit stop: the name settles it at A's next call. Meanwhile B
 * rewrites it (a capture the restore does not need, and harmless) and
 * moves an original over the name of A's next creation, which A then
 * overwrites: that original is not the run's, and comes back intact. */
Test(journal, creation_without_record_settles_by_name)
{
	pid_t a = getpid(), b = getppid();
	raise_timestamp_floor();
	put("orig", "precious");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_MKDIR, "d", NULL, 0), 0);
	cr_assert(tg_txn_awaits(t, a), "a recorded creation waits for its result");
	cr_assert_eq(mkdir(P("d"), 0755), 0);
	cr_assert_eq(before_by(a, TG_OP_OPEN, "d/x", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_not(tg_txn_awaits(t, a), "no record, no exit stop");
	put("d/x", "a");
	cr_assert_eq(before_by(b, TG_OP_OPEN, "d/x", NULL, O_WRONLY | O_TRUNC), 0);
	put("d/x", "b");
	cr_assert_eq(before_by(a, TG_OP_OPEN, "d/y", NULL, O_WRONLY | O_CREAT), 0);
	cr_assert_eq(before_by(b, TG_OP_RENAME, "orig", "d/y", 0), 0);
	cr_assert_eq(rename(P("orig"), P("d/y")), 0); /* A's create then opens it */
	cr_assert_eq(before_by(a, TG_OP_OPEN, "d/y", NULL, O_WRONLY | O_TRUNC), 0);
	put("d/y", "clobbered");
	rollback();
	_cleanup_free_ char *o = get("orig");
	cr_assert_str_eq(o, "precious");
	struct stat st;
	cr_assert_eq(lstat(P("d"), &st), -1, "the new directory goes whole");
}

/* A failed call's result: its name is never removed, whatever comes there. */
Test(journal, failed_creation_by_its_result)
{
	pid_t a = getpid(), b = getppid();
	put("orig", "o");
	open_txn();
	cr_assert_eq(before_by(a, TG_OP_MKDIR, "d", NULL, 0), 0);
	cr_assert_eq(tg_txn_after(t, a, -EACCES), 0);
	cr_assert_eq(before_by(b, TG_OP_RENAME, "orig", "d", 0), 0);
	cr_assert_eq(rename(P("orig"), P("d")), 0);
	rollback();
	_cleanup_free_ char *o = get("orig");
	cr_assert_str_eq(o, "o");
	struct stat st;
	cr_assert_eq(lstat(P("d"), &st), -1);
}

static int count_records(void *ud, const struct tg_jrec *r)
{
	(void)r;
	(*(int *)ud)++;
	return 0;
}

Test(journal, changes_commit_history_and_undo)
{
	put("mod", "m");
	put("del", "d");
	put("ren", "r");
	put("meta", "x");
	open_txn();
	cr_assert_eq(before(TG_OP_OPEN, "new", NULL, O_WRONLY | O_CREAT), 0);
	put("new", "n");
	cr_assert_eq(before(TG_OP_MKDIR, "newdir", NULL, 0), 0);
	mkdir(P("newdir"), 0755);
	cr_assert_eq(before(TG_OP_OPEN, "newdir/inner", NULL, O_WRONLY | O_CREAT), 0);
	put("newdir/inner", "no record of its own");
	cr_assert_eq(before(TG_OP_OPEN, "mod", NULL, O_WRONLY | O_TRUNC), 0);
	put("mod", "m2");
	cr_assert_eq(before(TG_OP_UNLINK, "del", NULL, 0), 0);
	unlink(P("del"));
	cr_assert_eq(before(TG_OP_RENAME, "ren", "ren2", 0), 0);
	rename(P("ren"), P("ren2"));
	cr_assert_eq(before(TG_OP_CHMOD, "meta", NULL, 0), 0);
	chmod(P("meta"), 0600);
	struct tg_changes c;
	cr_assert_eq(tg_txn_changes(t, &c), 0);
	cr_assert_eq(c.count[TG_CHANGE_CREATED], 3, "new, newdir, newdir/inner");
	cr_assert_eq(c.count[TG_CHANGE_MODIFIED], 1);
	cr_assert_eq(c.count[TG_CHANGE_DELETED], 1);
	cr_assert_eq(c.count[TG_CHANGE_RENAMED], 1);
	cr_assert_eq(c.count[TG_CHANGE_METADATA], 1);
	for (size_t i = 0; i < c.n; i++)
		if (c.v[i].kind == TG_CHANGE_RENAMED) {
			cr_assert_str_eq(c.v[i].path, "ren2");
			cr_assert_str_eq(c.v[i].from, "ren");
		}
	cr_assert_eq(c.bytes_saved, 1);
	tg_changes_clear(&c);
	_cleanup_free_ char *id = tg_strdup(tg_txn_id(t));
	cr_assert_eq(tg_txn_commit(t), 0);
	tg_txn_free(t);
	t = NULL;
	_cleanup_free_ char *s = get("mod");
	cr_assert_str_eq(s, "m2");

	struct tg_txinfo *v;
	size_t n;
	cr_assert_eq(tg_run_list(sd, &v, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(v[0].id, id);
	cr_assert_str_eq(tg_jstate_name(v[0].state), "committed");
	cr_assert_str_eq(v[0].command, "unit");
	cr_assert_eq(v[0].counts[TG_CHANGE_CREATED], 3);
	tg_txinfo_free_all(v, n);
	int nrec = 0;
	cr_assert_eq(tg_run_records(sd, id, count_records, &nrec), 0);
	cr_assert_gt(nrec, 5);

	/* A hand edit since: undo refuses, names it, and --force overrides. */
	bool changed = false;
	put("newdir/inner", "edited inside a created dir");
	cr_assert_eq(tg_run_changed_since(sd, id, "newdir/inner", &changed), 0);
	cr_assert(changed, "an edit under a created dir must count");
	put("new", "edited by hand");
	cr_assert_eq(tg_run_changed_since(sd, id, "new", &changed), 0);
	cr_assert(changed);
	cr_assert_eq(tg_run_changed_since(sd, id, "mod", &changed), 0);
	cr_assert(!changed);
	cr_assert_eq(tg_run_undo(sd, id, false), -ESTALE);
	cr_assert_eq(tg_run_undo(sd, id, true), 0);
	_cleanup_free_ char *m = get("mod"), *d = get("del"), *r = get("ren");
	cr_assert_str_eq(m, "m");
	cr_assert_str_eq(d, "d");
	cr_assert_str_eq(r, "r");
	struct stat st;
	cr_assert_eq(stat(P("new"), &st), -1);
	cr_assert_eq(stat(P("newdir"), &st), -1);
	struct tg_txinfo i;
	cr_assert_eq(tg_journal_read_info(sd, id, &i), 0);
	cr_assert_str_eq(tg_jstate_name(i.state), "undone");
	tg_txinfo_clear(&i);
}

Test(journal, history_is_bounded_by_count)
{
	struct tg_txn_opts o = { .workspace = ws, .state_dir = sd, .lock = TG_LOCK_FAIL, .history_max_runs = 3 };
	for (int k = 0; k < 5; k++) {
		cr_assert_eq(tg_txn_open(&t, &o), 0);
		commit_new_file(k);
	}
	struct tg_txinfo *v;
	size_t n;
	cr_assert_eq(tg_run_list(sd, &v, &n), 0);
	cr_assert_eq(n, 3, "kept %zu", n);
	tg_txinfo_free_all(v, n);
}

/* An info longer than the page its reader tries first (a long command
 * line) is read whole, by the listing and by id. */
Test(journal, long_command_info_is_listed_whole)
{
	char cmd[9000];
	for (size_t i = 0; i < sizeof(cmd) - 1; i++)
		cmd[i] = (char)('a' + i % 26);
	cmd[sizeof(cmd) - 1] = '\0';
	next_tick();
	struct tg_txn_opts o = { .workspace = ws, .state_dir = sd, .command = cmd, .lock = TG_LOCK_FAIL };
	cr_assert_eq(tg_txn_open(&t, &o), 0);
	commit_new_file(0);
	struct tg_txinfo *v;
	size_t n;
	cr_assert_eq(tg_run_list(sd, &v, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(v[0].command, cmd);
	cr_assert_eq(v[0].counts[TG_CHANGE_CREATED], 1);
	struct tg_txinfo i;
	cr_assert_eq(tg_journal_read_info(sd, v[0].id, &i), 0);
	cr_assert_str_eq(i.command, cmd);
	tg_txinfo_clear(&i);
	tg_txinfo_free_all(v, n);
}

/* Names under and including path (files, dirs, symlinks), or 0 when it
 * is gone. */
static size_t count_names(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	size_t n = 1;
	if (!S_ISDIR(st.st_mode))
		return n;
	DIR *d = opendir(path);
	cr_assert(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char sub[4096];
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		n += count_names(sub);
	}
	closedir(d);
	return n;
}

/* A random tree at ws/t: nested dirs, files, symlinks, empty dirs. */
static void random_tree(unsigned *seed, const char *dir, int depth)
{
	cr_assert_eq(mkdir(dir, 0755), 0);
	int kids = rand_r(seed) % 6;
	for (int i = 0; i < kids; i++) {
		char sub[4096];
		snprintf(sub, sizeof(sub), "%s/n%d", dir, i);
		int kind = rand_r(seed) % 4;
		if (kind == 0 && depth < 4) {
			random_tree(seed, sub, depth + 1);
		} else if (kind == 1) {
			cr_assert_eq(symlink("..", sub), 0);
		} else {
			int fd = open(sub, O_WRONLY | O_CREAT | O_EXCL, 0644);
			cr_assert_geq(fd, 0);
			close(fd);
		}
	}
}

/* The budget counts every name it removes: with b names allowed of a tree
 * of n, exactly min(b, n) go; the call says 0 only when the tree is gone. */
Test(journal, remove_tree_upto_removes_exactly_its_budget)
{
	unsigned seed = 16;
	for (int round = 0; round < 200; round++) {
		char top[300];
		snprintf(top, sizeof(top), "%s/t", ws);
		random_tree(&seed, top, 0);
		size_t n = count_names(top);
		size_t b = (size_t)rand_r(&seed) % (n + 3), left = b;
		_cleanup_close_ int wfd = open(ws, O_RDONLY | O_DIRECTORY);
		int r = tg_fs_remove_tree_upto(wfd, "t", &left);
		size_t after = count_names(top);
		if (b >= n) {
			cr_assert_eq(r, 0, "round %d: budget %zu of %zu names", round, b, n);
			cr_assert_eq(after, 0);
			cr_assert_eq(left, b - n);
		} else {
			cr_assert_eq(r, 1, "round %d: budget %zu of %zu names gave %d", round, b, n, r);
			cr_assert_eq(after, n - b, "round %d: %zu of %zu left after %zu", round, after, n, b);
			cr_assert_eq(left, 0);
			cr_assert_eq(tg_fs_remove_tree(wfd, "t"), 0);
		}
	}
}

/* A retired run of a few names is freed by tg_journal_gc_upto at once; a
 * bigger one is left, in part, to the gc; the history is not touched. */
Test(journal, trash_of_a_few_names_is_freed_at_once)
{
	char run[512], p[600];
	snprintf(run, sizeof(run), "%s/txn", sd);
	cr_assert_eq(mkdir(run, 0700), 0);
	snprintf(run, sizeof(run), "%s/txn/20990101T000000.000-aaaaaa", sd);
	cr_assert_eq(mkdir(run, 0700), 0);
	cr_assert_eq(tg_journal_gc_upto(sd, 100), 0, "no trash dir: nothing to do");
	snprintf(run, sizeof(run), "%s/trash", sd);
	cr_assert_eq(mkdir(run, 0700), 0);
	/* run dir, info, log, post, stash/, stash/1..k: 5 + k names */
	for (int k = 1; k <= 40; k += 39) {
		snprintf(run, sizeof(run), "%s/trash/20000101T000000.000-%06d", sd, k);
		cr_assert_eq(mkdir(run, 0700), 0);
		const char *files[] = { "info", "log", "post" };
		for (int i = 0; i < 3; i++) {
			snprintf(p, sizeof(p), "%s/%s", run, files[i]);
			cr_assert_eq(close(open(p, O_WRONLY | O_CREAT, 0600)), 0);
		}
		snprintf(p, sizeof(p), "%s/stash", run);
		cr_assert_eq(mkdir(p, 0700), 0);
		for (int i = 1; i <= k; i++) {
			snprintf(p, sizeof(p), "%s/stash/%d", run, i);
			cr_assert_eq(close(open(p, O_WRONLY | O_CREAT, 0600)), 0);
		}
	}
	snprintf(run, sizeof(run), "%s/trash", sd);
	cr_assert_eq(count_names(run), 1 + 6 + 45);
	cr_assert_eq(tg_journal_gc_upto(sd, 50), 1, "51 names: one is left");
	cr_assert_eq(count_names(run), 2, "the trash dir and one name in it");
	cr_assert_eq(tg_journal_gc_upto(sd, 1), 0);
	cr_assert_eq(count_names(run), 1, "an empty trash");
	cr_assert_eq(tg_journal_gc_upto(sd, 0), 0, "an empty trash needs no budget");
	snprintf(run, sizeof(run), "%s/txn/20990101T000000.000-aaaaaa", sd);
	cr_assert_eq(count_names(run), 1, "the history is not the trash");
}

/* The commit that prunes a small run leaves the caller an empty trash: the
 * run is freed here, not by a gc started for it. */
Test(journal, a_small_pruned_run_is_freed_by_collect)
{
	struct tg_txn_opts o = { .workspace = ws, .state_dir = sd, .lock = TG_LOCK_FAIL, .history_max_runs = 1 };
	for (int k = 0; k < 2; k++) {
		next_tick();
		cr_assert_eq(tg_txn_open(&t, &o), 0);
		commit_new_file(k);
	}
	char p[512];
	snprintf(p, sizeof(p), "%s/trash", sd);
	cr_assert_eq(count_names(p), 1, "the trash still holds %zu names", count_names(p) - 1);
	struct tg_txinfo *v;
	size_t n;
	cr_assert_eq(tg_run_list(sd, &v, &n), 0);
	cr_assert_eq(n, 1);
	tg_txinfo_free_all(v, n);
}

Test(journal, stash_on_another_filesystem_saves_copies)
{
	/* State on tmpfs, workspace on /tmp: no hard link can keep the inode,
	 * so removed objects are saved (tar / record) and recreated. */
	struct stat a, b;
	if (stat("/dev/shm", &a) < 0 || stat(ws, &b) < 0 || a.st_dev == b.st_dev)
		cr_skip_test("needs /dev/shm on another filesystem than /tmp");
	char shm[] = "/dev/shm/tg-jt-sd.XXXXXX";
	cr_assert(mkdtemp(shm));
	put("file", "content of file");
	chmod(P("file"), 0640);
	cr_assert_eq(symlink("file", P("sym")), 0);
	cr_assert_eq(mkfifo(P("fifo"), 0600), 0);
	struct tg_txn_opts o = { .workspace = ws, .state_dir = shm, .lock = TG_LOCK_FAIL };
	cr_assert_eq(tg_txn_open(&t, &o), 0);
	const char *gone[] = { "file", "sym", "fifo" };
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(before(TG_OP_UNLINK, gone[i], NULL, 0), 0);
		cr_assert_eq(unlink(P(gone[i])), 0);
	}
	rollback();
	_cleanup_free_ char *s = get("file");
	cr_assert_str_eq(s, "content of file");
	struct stat st;
	cr_assert_eq(lstat(P("file"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640);
	char tgt[16] = { 0 };
	cr_assert_eq(lstat(P("sym"), &st), 0, "sym: %s", strerror(errno));
	cr_assert(S_ISLNK(st.st_mode), "sym mode %o", st.st_mode);
	ssize_t tn = readlink(P("sym"), tgt, sizeof(tgt));
	cr_assert_eq(tn, 4, "target '%s' (%zd bytes)", tgt, tn);
	cr_assert_str_eq(tgt, "file");
	cr_assert_eq(lstat(P("fifo"), &st), 0);
	cr_assert(S_ISFIFO(st.st_mode));
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", shm);
	(void)!system(cmd);
}

/* tg_fs_lstat_cached gives what tg_fs_lstat gives, for sorted runs of
 * paths: siblings, a missing parent, a parent that is a symlink or a file,
 * a switch back to an earlier parent, and top-level names. */
Test(journal, cached_lstat_agrees_with_lstat)
{
	cr_assert(mkdir(P("a"), 0755) == 0 && mkdir(P("a/b"), 0755) == 0 && mkdir(P("c"), 0755) == 0);
	put("a/f1", "1");
	put("a/f2", "22");
	put("a/b/g", "333");
	put("top", "4444");
	cr_assert(symlink("a", P("link")) == 0);
	int wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert(wsfd >= 0);
	const char *paths[] = { "a/f1", "a/f2", "a/missing", "a/b/g", "a/b/nope", "a/f1", "c/x",
		                "gone/x", "gone/y", "link/f1", "top", "top/x", "a", "" };
	struct tg_fs_dircache dc = { 0 };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct stat a, b;
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		int ra = tg_fs_lstat(wsfd, paths[i], &a);
		int rb = tg_fs_lstat_cached(wsfd, &dc, paths[i], &b);
		cr_assert_eq(rb, ra, "%s: cached %d, plain %d", paths[i], rb, ra);
		if (ra == 0)
			cr_assert(a.st_ino == b.st_ino && a.st_size == b.st_size, "%s: another object", paths[i]);
	}
	struct stat st;
	cr_assert_eq(tg_fs_lstat_cached(wsfd, &dc, "link/f1", &st), -ENOENT, "through a symlink");
	cr_assert_eq(tg_fs_lstat_cached(wsfd, &dc, "a/b/g", &st), 0);
	cr_assert_eq(st.st_size, 3);
	tg_fs_dircache_clear(&dc);
	close(wsfd);
}

/* The cached parent's own stat is taken once for the cache's life (one
 * trapped call, during which nothing changes the tree): a change made
 * meanwhile shows only once the cache is cleared or moves to another
 * directory. lstatx of the parent fills it too; the workspace itself ("")
 * is never taken for the cached directory. */
Test(journal, cached_parent_stat_lives_as_long_as_the_cache)
{
	cr_assert(mkdir(P("d"), 0755) == 0 && mkdir(P("e"), 0755) == 0);
	put("d/f", "1");
	int wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert(wsfd >= 0);
	struct tg_fs_dircache dc = { 0 };
	struct stat st, again;
	cr_assert_eq(tg_fs_lstat_cached(wsfd, &dc, "d/f", &st), 0);
	cr_assert_eq(tg_fs_lstat_cached(wsfd, &dc, "d", &st), 0);
	nlink_t before = st.st_nlink;
	cr_assert(mkdir(P("d/sub"), 0755) == 0); /* d's link count grows */
	cr_assert_eq(tg_fs_lstat_cached(wsfd, &dc, "d", &again), 0);
	cr_assert_eq(again.st_nlink, before, "the parent's stat was taken again within the cache's life");
	cr_assert_eq(again.st_ino, st.st_ino);
	/* Another directory, then back: a fresh stat. */
	cr_assert_eq(tg_fs_lstat_cached(wsfd, &dc, "e/x", &st), -ENOENT);
	cr_assert_eq(tg_fs_lstat_cached(wsfd, &dc, "d/f", &st), 0);
	cr_assert_eq(tg_fs_lstat_cached(wsfd, &dc, "d", &again), 0);
	cr_assert_eq(again.st_nlink, before + 1);
	/* Cleared: fresh again; lstatx fills the cache for lstat. */
	tg_fs_dircache_clear(&dc);
	struct statx sx;
	cr_assert_eq(tg_fs_lstatx_cached(wsfd, &dc, "d/f", &st, &sx), 0);
	cr_assert_eq(tg_fs_lstatx_cached(wsfd, &dc, "d", &st, &sx), 0);
	cr_assert_eq(st.st_nlink, before + 1);
	cr_assert(rmdir(P("d/sub")) == 0);
	cr_assert_eq(tg_fs_lstat_cached(wsfd, &dc, "d", &again), 0);
	cr_assert_eq(again.st_nlink, before + 1, "lstatx did not fill the cache");
	/* "" is the workspace, whatever the cache holds. */
	struct stat wst;
	cr_assert(fstat(wsfd, &wst) == 0);
	cr_assert_eq(tg_fs_lstatx_cached(wsfd, &dc, "", &st, &sx), 0);
	cr_assert_eq(st.st_ino, wst.st_ino);
	cr_assert_eq(tg_fs_lstat_cached(wsfd, &dc, "d", &again), 0);
	cr_assert_neq(again.st_ino, wst.st_ino, "the workspace's stat was taken for the cached directory's");
	tg_fs_dircache_clear(&dc);
	close(wsfd);
}

/* The info file's version is read back: a file of another version is
 * refused, with a state name we do not know too; the strings on disk stay
 * those of the names table. */
Test(journal, info_version_is_checked)
{
	struct tg_journal *j;
	cr_assert_eq(tg_journal_create(sd, ws, "unit", NULL, &j), 0);
	_cleanup_free_ char *id = tg_strdup(tg_journal_id(j));
	cr_assert_eq(tg_journal_set_state(j, TG_JSTATE_COMMITTED), 0);
	tg_journal_free(j);
	char path[512];
	snprintf(path, sizeof(path), "%s/txn/%s/info", sd, id);
	_cleanup_free_ char *text = NULL;
	size_t len;
	cr_assert_eq(tg_read_file(path, &text, &len, 1 << 20), 0);
	cr_assert(strstr(text, "version=1\n") == text, "%s", text);
	cr_assert(strstr(text, "\nstate=committed\n"), "%s", text);
	struct tg_txinfo i;
	cr_assert_eq(tg_journal_read_info(sd, id, &i), 0);
	cr_assert_eq(i.state, TG_JSTATE_COMMITTED);
	tg_txinfo_clear(&i);

	FILE *f = fopen(path, "w");
	cr_assert(f);
	fprintf(f, "version=2\n%s", text + strlen("version=1\n"));
	fclose(f);
	cr_assert_eq(tg_journal_read_info(sd, id, &i), -EPROTO);
	cr_assert_eq(tg_journal_load(sd, id, &j), -EPROTO);

	f = fopen(path, "w");
	cr_assert(f);
	fprintf(f, "version=1\nid=%s\nworkspace=%s\nstate=half-done\n", id, ws);
	fclose(f);
	cr_assert_eq(tg_journal_read_info(sd, id, &i), -EBADMSG);
}

Test(journal, state_names_are_the_files_strings)
{
	const char *want[] = { "open", "rolling-back", "rolled-back", "committed", "undone" };
	cr_assert_eq(TG_ARRAY_SIZE(want), TG_JSTATE_COUNT);
	for (int s = 0; s < TG_JSTATE_COUNT; s++)
		cr_assert_str_eq(tg_jstate_name((enum tg_jstate)s), want[s]);
}
