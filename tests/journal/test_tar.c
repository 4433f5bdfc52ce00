/* test_tar.c — the journal's tar (core/journal/tar.c): plain entries are
 * written and read without libarchive, so they must be exactly what
 * libarchive writes for them, read back exactly, and refused when damaged;
 * every other entry still goes through libarchive, in the same file.
 */
#include <archive.h>
#include <archive_entry.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <zstd.h>

#include "base/util.h"
#include "journal/tar.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/tg-tar-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert(tg_zstd_load(NULL, 0) && tg_archive_load(NULL, 0));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(tar, .init = setup, .fini = teardown);

static int dirfd_(void)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	return fd;
}

/* A file of `size` random bytes at dir/name; its fd, read-write. */
static int random_file(const char *name, size_t size, unsigned *seed)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	char *buf = malloc(size + 1);
	for (size_t i = 0; i < size; i++)
		buf[i] = (char)rand_r(seed);
	cr_assert_eq(tg_write_all(fd, buf, size), 0);
	free(buf);
	return fd;
}

/* What libarchive's pax_restricted writer gives for the entry: header,
 * data and padding, no end blocks. */
struct mem {
	char *buf;
	size_t len;
};

static la_ssize_t mem_write(struct archive *a, void *ud, const void *b, size_t n)
{
	struct mem *m = ud;
	m->buf = realloc(m->buf, m->len + n);
	memcpy(m->buf + m->len, b, n);
	m->len += n;
	return (la_ssize_t)n;
}

static struct mem libarchive_entry(const char *name, const struct stat *st, int fd)
{
	struct mem m = { 0 };
	struct archive *a = archive_write_new();
	cr_assert(archive_write_set_format_pax_restricted(a) == ARCHIVE_OK &&
	          archive_write_set_bytes_per_block(a, 0) == ARCHIVE_OK &&
	          archive_write_open(a, &m, NULL, mem_write, NULL) == ARCHIVE_OK);
	struct archive_entry *e = archive_entry_new();
	archive_entry_copy_pathname(e, name);
	archive_entry_copy_stat(e, st);
	cr_assert_eq(archive_write_header(a, e), ARCHIVE_OK);
	archive_entry_free(e);
	char *data = malloc((size_t)st->st_size + 1);
	cr_assert_eq(pread(fd, data, (size_t)st->st_size, 0), st->st_size);
	if (st->st_size)
		cr_assert_eq(archive_write_data(a, data, (size_t)st->st_size), st->st_size);
	free(data);
	cr_assert_eq(archive_write_finish_entry(a), ARCHIVE_OK);
	size_t entry = m.len;
	archive_write_close(a); /* its end blocks: cut below */
	archive_write_free(a);
	m.len = entry;
	return m;
}

/* The frame at off of the tar file, decompressed; *declared gets the size
 * its header states (ZSTD_CONTENTSIZE_UNKNOWN when it states none). */
static struct mem frame_bytes(int tfd, uint64_t off, unsigned long long *declared)
{
	struct stat st;
	cr_assert_eq(fstat(tfd, &st), 0);
	size_t clen = (size_t)((uint64_t)st.st_size - off);
	char *c = malloc(clen);
	cr_assert_eq(pread(tfd, c, clen, (off_t)off), (ssize_t)clen);
	clen = ZSTD_findFrameCompressedSize(c, clen);
	cr_assert(!ZSTD_isError(clen));
	unsigned long long n = *declared = ZSTD_getFrameContentSize(c, clen);
	if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR)
		n = 4u << 20;
	struct mem m = { 0 };
	m.buf = malloc((size_t)n + 1);
	m.len = ZSTD_decompress(m.buf, (size_t)n + 1, c, clen);
	cr_assert(!ZSTD_isError(m.len), "frame at %llu: %s", (unsigned long long)off, ZSTD_getErrorName(m.len));
	free(c);
	return m;
}

static void expect_extract(int tfd, uint64_t off, int srcfd, off_t size)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/out", dir);
	int ofd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert_geq(ofd, 0);
	cr_assert_eq(pwrite(ofd, "stale bytes that must go", 24, 0), 24);
	uint64_t got = 0;
	cr_assert_eq(tg_jtar_extract(tfd, off, ofd, &got), 0, "extract at %llu", (unsigned long long)off);
	cr_assert_eq(got, (uint64_t)size);
	struct stat st;
	cr_assert_eq(fstat(ofd, &st), 0);
	cr_assert_eq(st.st_size, size);
	char *a = malloc((size_t)size + 1), *b = malloc((size_t)size + 1);
	cr_assert_eq(pread(ofd, a, (size_t)size, 0), size);
	cr_assert_eq(pread(srcfd, b, (size_t)size, 0), size);
	cr_assert(memcmp(a, b, (size_t)size) == 0, "content at %llu", (unsigned long long)off);
	free(a);
	free(b);
	close(ofd);
}

/* Property: for random plain entries (names, modes, ids, times and sizes at
 * and around the block size and the 1 MiB read chunk), the frame holds
 * libarchive's bytes exactly, and the entry reads back as the file. */
Test(tar, plain_entries_are_what_libarchive_writes)
{
	static const size_t sizes[] = { 0, 1, 511, 512, 513, 1024, 4097, (1u << 20) + 7, 3u << 19 };
	unsigned seed = 2026;
	int dfd = dirfd_();
	struct tg_jtar *tar;
	cr_assert_eq(tg_jtar_open(dfd, "t.tar.zst", &tar), 0);
	enum { N = 120 };
	uint64_t offs[N];
	struct stat sts[N];
	char names[N][300];
	int fds[N];
	for (int i = 0; i < N; i++) {
		/* A third short, a third around the name field's 100 bytes, a
		 * third up to past what a prefix split can hold; with a '/'
		 * often enough that some split and some cannot. */
		size_t len = i % 3 == 0 ? 1 + (size_t)rand_r(&seed) % 99
		             : i % 3 == 1 ? 95 + (size_t)rand_r(&seed) % 11
		                          : 100 + (size_t)rand_r(&seed) % 190;
		for (size_t k = 0; k < len; k++) {
			/* A relative path, as the journal names entries: no
			 * empty component, no '/' first or last. */
			bool slash = k > 0 && k + 1 < len && names[i][k - 1] != '/' && rand_r(&seed) % 9 == 0;
			do
				names[i][k] = slash ? '/' : (char)(0x20 + rand_r(&seed) % 95);
			while (!slash && names[i][k] == '/');
		}
		names[i][len] = '\0';
		size_t size = i < (int)(sizeof(sizes) / sizeof(sizes[0])) ? sizes[i] : (size_t)rand_r(&seed) % 70000;
		char fname[32];
		snprintf(fname, sizeof(fname), "src%d", i);
		fds[i] = random_file(fname, size, &seed);
		cr_assert_eq(fstat(fds[i], &sts[i]), 0);
		/* What the header says comes from the stat given, not the file. */
		sts[i].st_mode = S_IFREG | ((mode_t)rand_r(&seed) & 07777);
		/* Most within the plain entry's bounds, a quarter anywhere. */
		bool wide = rand_r(&seed) % 4 == 0;
		sts[i].st_uid = (uid_t)((unsigned)rand_r(&seed) % (wide ? 02000000 : 01000000));
		sts[i].st_gid = (gid_t)((unsigned)rand_r(&seed) % (wide ? 02000000 : 01000000));
		sts[i].st_mtim.tv_sec = wide ? (time_t)(((uint64_t)rand_r(&seed) << 3) % 0100000000000ull)
		                             : (time_t)rand_r(&seed);
		sts[i].st_mtim.tv_nsec = rand_r(&seed) % 1000000000;
		cr_assert_eq(tg_jtar_add(tar, fds[i], names[i], &sts[i], NULL, 0, &offs[i]), 0);
	}
	cr_assert_eq(tg_jtar_finish(tar, NULL), 0);
	tg_jtar_free(tar);

	int tfd = openat(dfd, "t.tar.zst", O_RDONLY | O_CLOEXEC);
	int nplain = 0, nsplit = 0, nunsplit = 0;
	for (int i = 0; i < N; i++) {
		unsigned long long declared;
		struct mem got = frame_bytes(tfd, offs[i], &declared);
		struct mem want = libarchive_entry(names[i], &sts[i], fds[i]);
		cr_assert_eq(got.len, want.len, "entry %d (%s): %zu bytes, libarchive %zu", i, names[i], got.len,
		             want.len);
		cr_assert(memcmp(got.buf, want.buf, want.len) == 0, "entry %d (%s)", i, names[i]);
		/* A plain entry's frame states its size (zstd sized its tables
		 * to it); libarchive's frames are streamed without one. Plain:
		 * libarchive wrote a bare ustar header, no pax record first. */
		bool plain = ((const char *)want.buf)[156] == '0';
		if (plain) {
			cr_assert_eq(declared, (unsigned long long)got.len, "entry %d: frame states %llu", i, declared);
			nplain++;
			nsplit += strlen(names[i]) > 100;
		} else {
			nunsplit += strlen(names[i]) > 100 && sts[i].st_uid <= 0777777 && sts[i].st_gid <= 0777777 &&
			            sts[i].st_mtim.tv_sec < 0x7fffffff;
			cr_assert_eq(declared, ZSTD_CONTENTSIZE_UNKNOWN, "entry %d", i);
		}
		free(got.buf);
		free(want.buf);
		expect_extract(tfd, offs[i], fds[i], sts[i].st_size);
		close(fds[i]);
	}
	cr_assert_gt(nplain, N / 2, "only %d plain entries of %d", nplain, N);
	/* Long names both ways: split into the prefix, and not splittable. */
	cr_assert_geq(nsplit, 5, "%d plain entries with a prefix", nsplit);
	cr_assert_geq(nunsplit, 5, "%d long names that cannot be split", nunsplit);
	close(tfd);
	close(dfd);
}

/* Entries plain and not (a long name, a non-ASCII one, a sparse file,
 * xattrs, an id past six octal digits, a time before 1970) side by side
 * in one file: each reads back, and tar lists them all in order. */
Test(tar, plain_and_pax_entries_share_a_file)
{
	unsigned seed = 7;
	int dfd = dirfd_();
	struct tg_jtar *tar;
	cr_assert_eq(tg_jtar_open(dfd, "m.tar.zst", &tar), 0);
	char longname[160];
	memset(longname, 'l', 150);
	longname[150] = '\0';
	const char *names[] = { "plain", longname, "caf\xc3\xa9", "sparse", "xattrs", "bigid", "old", "plain2" };
	enum { N = sizeof(names) / sizeof(names[0]) };
	uint64_t offs[N];
	int fds[N];
	struct stat sts[N];
	for (int i = 0; i < N; i++) {
		char fname[32];
		snprintf(fname, sizeof(fname), "m%d", i);
		/* bigid spans several of the reader's 128 KiB chunks: the
		 * first, decoded to tell a plain entry, is handed to libarchive. */
		fds[i] = random_file(fname, !strcmp(names[i], "bigid") ? 300000 : 3000 + (size_t)i, &seed);
		if (!strcmp(names[i], "sparse")) {
			cr_assert_eq(ftruncate(fds[i], 8 << 20), 0);
			cr_assert_eq(pwrite(fds[i], "tail", 4, (8 << 20) - 4), 4);
		}
		cr_assert_eq(fstat(fds[i], &sts[i]), 0);
		if (!strcmp(names[i], "bigid"))
			sts[i].st_uid = 01000000;
		if (!strcmp(names[i], "old"))
			sts[i].st_mtim.tv_sec = -86400;
		static const char x[] = "\x08\0\0\0user.tag\x02\0\0\0v1";
		bool xa = !strcmp(names[i], "xattrs");
		cr_assert_eq(tg_jtar_add(tar, fds[i], names[i], &sts[i], xa ? x : NULL, xa ? sizeof(x) - 1 : 0,
		                         &offs[i]), 0, "%s", names[i]);
	}
	cr_assert_eq(tg_jtar_finish(tar, NULL), 0);
	tg_jtar_free(tar);
	int tfd = openat(dfd, "m.tar.zst", O_RDONLY | O_CLOEXEC);
	for (int i = 0; i < N; i++) {
		expect_extract(tfd, offs[i], fds[i], sts[i].st_size);
		close(fds[i]);
	}
	close(tfd);
	char cmd[256], want[1024] = "";
	snprintf(cmd, sizeof(cmd), "zstd -qdc '%s/m.tar.zst' | tar --warning=no-unknown-keyword -t > '%s/list'", dir, dir);
	cr_assert_eq(system(cmd), 0);
	for (int i = 0; i < N; i++)
		strcat(strcat(want, names[i]), "\n");
	snprintf(cmd, sizeof(cmd), "%s/list", dir);
	char *list;
	size_t n;
	cr_assert_eq(tg_read_file(cmd, &list, &n, 4096), 0);
	cr_assert_str_eq(list, want);
	free(list);
	close(dfd);
}

/* The reader takes a plain entry only as written: a frame crafted with a
 * bad checksum, a short or long body, or bytes after the padding, or cut
 * short, fails; the well-formed one passes (it is what makes the others
 * worth checking). */
static uint64_t append_frame(int fd, const char *tarbytes, size_t len)
{
	size_t cap = ZSTD_compressBound(len);
	char *c = malloc(cap);
	size_t n = ZSTD_compress(c, cap, tarbytes, len, 1);
	cr_assert(!ZSTD_isError(n));
	off_t off = lseek(fd, 0, SEEK_END);
	cr_assert_eq(tg_write_all(fd, c, n), 0);
	free(c);
	return (uint64_t)off;
}

static void make_header(char *h, uint64_t size, bool bad_sum)
{
	memset(h, 0, 512);
	strcpy(h, "f");
	memcpy(h + 100, "000644 \0" "000000 \0" "000000 \0", 24);
	snprintf(h + 124, 13, "%011llo ", (unsigned long long)size);
	memcpy(h + 136, "00000000000 ", 12);
	memset(h + 148, ' ', 8);
	h[156] = '0';
	memcpy(h + 257, "ustar\0" "00", 8);
	memcpy(h + 329, "000000 \0" "000000 \0", 16);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum + (bad_sum ? 1 : 0));
	h[155] = ' ';
}

Test(tar, damaged_plain_frames_are_refused)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/crafted", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	snprintf(path, sizeof(path), "%s/out", dir);
	int ofd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	char t[4096];
	uint64_t size;

	memset(t, 0, sizeof(t));
	make_header(t, 5, false);
	memcpy(t + 512, "hello", 5);
	uint64_t good = append_frame(fd, t, 1024);
	cr_assert_eq(tg_jtar_extract(fd, good, ofd, &size), 0);
	cr_assert_eq(size, 5);
	char b[8] = { 0 };
	cr_assert_eq(pread(ofd, b, 8, 0), 5);
	cr_assert_str_eq(b, "hello");

	make_header(t, 5, true);
	cr_assert_neq(tg_jtar_extract(fd, append_frame(fd, t, 1024), ofd, &size), 0, "bad checksum");
	make_header(t, 600, false);
	cr_assert_neq(tg_jtar_extract(fd, append_frame(fd, t, 1024), ofd, &size), 0, "body short of its size");
	make_header(t, 5, false);
	cr_assert_neq(tg_jtar_extract(fd, append_frame(fd, t, 1536), ofd, &size), 0, "a block after the padding");
	cr_assert_neq(tg_jtar_extract(fd, append_frame(fd, t, 1000), ofd, &size), 0, "padding cut short");

	/* The good frame cut short, at every length: never read as whole. */
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	char *c = malloc((size_t)st.st_size);
	cr_assert_eq(pread(fd, c, (size_t)st.st_size, 0), st.st_size);
	size_t glen = ZSTD_findFrameCompressedSize(c + good, (size_t)st.st_size - good);
	cr_assert(!ZSTD_isError(glen));
	for (size_t cut = 1; cut < glen; cut++) {
		snprintf(path, sizeof(path), "%s/cut", dir);
		int cfd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		cr_assert_eq(tg_write_all(cfd, c + good, cut), 0);
		cr_assert_neq(tg_jtar_extract(cfd, 0, ofd, &size), 0, "cut at %zu of %zu", cut, glen);
		close(cfd);
	}
	free(c);
	close(ofd);
	close(fd);
}
