/* journal/tar.c — pre-images as one zstd frame per pax tar entry (journal/tar.h). */
#include "tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/fs.h"
#include "base/util.h"

#define TG_JTAR_CHUNK (1u << 20)
/* Level 1: capture sits on the syscall path; ratio matters less than speed. */
#define TG_JTAR_LEVEL 1

struct tg_jtar {
	int fd;
	uint64_t end;           /* file size: where the next frame starts */
	struct archive *a;
	ZSTD_CCtx *cctx;
	char *out;
	size_t outcap;
	int err;                /* first -errno seen by the write callback */
	bool broken;
	bool finished;          /* the end blocks are out */
	bool discard;           /* write_cb drops bytes: closing an abandoned archive */
};

static int flush_zstd(struct tg_jtar *t, ZSTD_inBuffer *in, ZSTD_EndDirective mode)
{
	for (;;) {
		ZSTD_outBuffer ob = { t->out, t->outcap, 0 };
		size_t rem = ZSTD_compressStream2(t->cctx, &ob, in, mode);
		if (ZSTD_isError(rem))
			return -EIO;
		if (ob.pos > 0) {
			int r = tg_write_all(t->fd, t->out, ob.pos);
			if (r < 0)
				return r;
			t->end += ob.pos;
		}
		bool done = mode == ZSTD_e_continue ? in->pos == in->size : rem == 0;
		if (done)
			return 0;
	}
}

/* Bytes of the current entry into its frame. */
static int put(struct tg_jtar *t, const void *buf, size_t len)
{
	ZSTD_inBuffer in = { buf, len, 0 };
	return flush_zstd(t, &in, ZSTD_e_continue);
}

static la_ssize_t write_cb(struct archive *a, void *ud, const void *buf, size_t len)
{
	struct tg_jtar *t = ud;
	if (t->discard)
		return (la_ssize_t)len;
	int r = put(t, buf, len);
	if (r < 0) {
		if (!t->err)
			t->err = r;
		archive_set_error(a, -r, "journal write failed");
		return -1;
	}
	return (la_ssize_t)len;
}

/* Drop the archive without its end blocks. Close (with write_cb discarding
 * them) rather than archive_write_fail: libarchive up to 3.6 frees its
 * client-side state only in close, so fail+free leaks it. */
static void drop_archive(struct tg_jtar *t)
{
	if (!t->a)
		return;
	t->discard = true;
	archive_write_close(t->a);
	archive_write_free(t->a);
	t->discard = false;
	t->a = NULL;
}

static int new_archive(struct tg_jtar *t)
{
	drop_archive(t);
	t->a = archive_write_new();
	if (!t->a)
		return -ENOMEM;
	/* No blocking: every byte goes straight to the frame of its entry, and
	 * the end blocks are written only by tg_jtar_finish(). */
	if (archive_write_set_format_pax_restricted(t->a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(t->a, 0) != ARCHIVE_OK ||
	    archive_write_open(t->a, t, NULL, write_cb, NULL) != ARCHIVE_OK)
		return -EIO;
	return 0;
}

/* libarchive, for an entry that is not plain (below), made at its first
 * use: loading it (and libxml2, ICU, libstdc++ with it) costs a run that
 * saves a pre-image 4 to 5 ms. */
static int need_archive(struct tg_jtar *t)
{
	if (t->a)
		return 0;
	return tg_archive_load(NULL, 0) ? new_archive(t) : -ELIBACC;
}

int tg_jtar_open(int dirfd, const char *name, struct tg_jtar **out)
{
	if (!tg_zstd_load(NULL, 0))
		return -ELIBACC;
	struct tg_jtar *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int r = t->fd < 0 ? -errno : 0;
	struct stat st;
	if (!r && fstat(t->fd, &st) < 0)
		r = -errno;
	if (!r) {
		t->end = (uint64_t)st.st_size;
		t->outcap = ZSTD_CStreamOutSize();
		t->out = malloc(t->outcap);
		t->cctx = ZSTD_createCCtx();
		r = t->out && t->cctx ? 0 : -ENOMEM;
	}
	if (!r && ZSTD_isError(ZSTD_CCtx_setParameter(t->cctx, ZSTD_c_compressionLevel, TG_JTAR_LEVEL)))
		r = -EINVAL;
	if (r < 0) {
		tg_jtar_free(t);
		return r;
	}
	*out = t;
	return 0;
}

void tg_jtar_free(struct tg_jtar *t)
{
	if (!t)
		return;
	int saved = errno;
	/* Only finish() may append the end blocks. */
	drop_archive(t);
	ZSTD_freeCCtx(t->cctx);
	free(t->out);
	if (t->fd >= 0)
		close(t->fd);
	free(t);
	errno = saved;
}

static void add_xattrs(struct archive_entry *e, const char *x, size_t len)
{
	size_t p = 0;
	while (p + 4 <= len) {
		uint32_t nl, vl;
		memcpy(&nl, x + p, 4);
		if (p + 4 + nl + 4 > len)
			return;
		_cleanup_free_ char *name = tg_strndup(x + p + 4, nl);
		memcpy(&vl, x + p + 4 + nl, 4);
		if (!name || p + 8 + nl + vl > len)
			return;
		archive_entry_xattr_add_entry(e, name, x + p + 8 + nl, vl);
		p += 8 + nl + vl;
	}
}

/* The data regions of fd: SEEK_DATA/SEEK_HOLE, ending at size. Returns the
 * count (0 for an all-hole file) or -errno; regions as (off, len) pairs. */
static int data_regions(int fd, off_t size, off_t **out)
{
	size_t n = 0, cap = 0;
	off_t *v = NULL;
	off_t pos = 0;
	while (pos < size) {
		off_t d = lseek(fd, pos, SEEK_DATA);
		if (d < 0 && errno == ENXIO)
			break;
		if (d < 0) {
			/* No SEEK_DATA support: one region, the whole file. */
			d = pos;
		}
		off_t h = lseek(fd, d, SEEK_HOLE);
		if (h < 0 || h > size)
			h = size;
		if (n + 2 > cap) {
			cap = cap ? cap * 2 : 16;
			off_t *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = d;
		v[n++] = h - d;
		pos = h;
	}
	*out = v;
	return (int)(n / 2);
}

static int feed(struct tg_jtar *t, const void *buf, size_t len)
{
	la_ssize_t w = archive_write_data(t->a, buf, len);
	if (w < 0)
		return t->err ? t->err : -EIO;
	return 0;
}

/* Stream the logical content, data regions read from fd, holes fed as zeroes
 * (the pax writer skips them: they are only counted). */
static int feed_hole(struct tg_jtar *t, off_t *pos, off_t to, char *buf)
{
	memset(buf, 0, TG_JTAR_CHUNK);
	while (*pos < to) {
		size_t n = (size_t)(to - *pos < TG_JTAR_CHUNK ? to - *pos : TG_JTAR_CHUNK);
		int r = feed(t, buf, n);
		if (r < 0)
			return r;
		*pos += (off_t)n;
	}
	return 0;
}

/* The pax writer emits the sparse map with the first data call, so an
 * all-hole file is fed its zeroes too. */
static int stream_regions(struct tg_jtar *t, int fd, const off_t *reg, int nreg, off_t size, char *buf)
{
	off_t pos = 0;
	for (int i = 0; i < nreg; i++) {
		off_t off = reg[2 * i], len = reg[2 * i + 1];
		int r = feed_hole(t, &pos, off, buf);
		if (r < 0)
			return r;
		while (pos < off + len) {
			size_t want = (size_t)(off + len - pos < TG_JTAR_CHUNK ? off + len - pos : TG_JTAR_CHUNK);
			ssize_t got = pread(fd, buf, want, pos);
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				return -errno;
			if (got == 0)
				return -EIO; /* shrank under us: the pre-image would be a lie */
			r = feed(t, buf, (size_t)got);
			if (r < 0)
				return r;
			pos += got;
		}
	}
	return feed_hole(t, &pos, size, buf);
}

static struct archive_entry *make_entry(const char *name, const struct stat *st, const off_t *reg,
                                        int nreg, const char *xattrs, size_t xattrs_len)
{
	struct archive_entry *e = archive_entry_new();
	if (!e)
		return NULL;
	archive_entry_copy_pathname(e, name);
	archive_entry_copy_stat(e, st);
	bool sparse = st->st_size > 0 && (nreg != 1 || reg[0] != 0 || reg[1] != st->st_size);
	for (int i = 0; sparse && i < nreg; i++)
		archive_entry_sparse_add_entry(e, reg[2 * i], reg[2 * i + 1]);
	if (sparse && (nreg == 0 || reg[2 * nreg - 2] + reg[2 * nreg - 1] < st->st_size))
		archive_entry_sparse_add_entry(e, st->st_size, 0); /* trailing hole */
	add_xattrs(e, xattrs, xattrs_len);
	return e;
}

/* ---- plain entries, without libarchive ----
 *
 * Most pre-images are a regular file with an ASCII name (up to 100 bytes,
 * or up to 256 split at a '/' into the ustar prefix), no holes and no
 * xattrs. For such an entry libarchive's pax_restricted writer emits a
 * bare ustar header, which is written here byte for byte the same
 * (tests/journal/test_tar.c compares them), and read back here too: a run
 * that saves such pre-images, or restores them, never loads libarchive.
 * Every other entry (pax records: longer or non-ASCII names, sparse maps,
 * xattrs, large ids, sizes or times) is libarchive's, both ways. */

#define TAR_BLOCK 512
/* Past these, libarchive's pax_restricted writer adds a pax record. */
#define TAR_MAX_ID 0777777ull          /* uid, gid: six octal digits */
#define TAR_MAX_SIZE 077777777777ull   /* eleven */
#define TAR_MAX_MTIME 0x7ffffffell     /* a time that fits 32 bits, signed */

/* A name longer than the ustar name field (100 bytes) is split at a '/'
 * into the prefix field (at most 155 bytes, not empty) and the name field,
 * where libarchive's pax_restricted writer splits it: at the first '/' that
 * leaves at most 100 bytes after it. The index of that '/'; 0 when the name
 * fits whole; -1 when it cannot be split (libarchive writes a pax record). */
static long ustar_split(const char *name, size_t n)
{
	if (n <= 100)
		return 0;
	const char *s = strchr(name + n - 101, '/');
	if (s == name)
		s = strchr(s + 1, '/');
	if (!s || s[1] == '\0' || s - name > 155)
		return -1;
	return s - name;
}

static bool plain_entry(const char *name, const struct stat *st, const off_t *reg, int nreg, size_t xattrs_len)
{
	size_t n = strlen(name);
	if (!S_ISREG(st->st_mode) || xattrs_len || n == 0 || ustar_split(name, n) < 0)
		return false;
	for (const char *c = name; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			return false;
	bool holes = st->st_size > 0 && (nreg != 1 || reg[0] != 0 || reg[1] != st->st_size);
	return !holes && (uint64_t)st->st_size <= TAR_MAX_SIZE && st->st_uid <= TAR_MAX_ID &&
	       st->st_gid <= TAR_MAX_ID && st->st_mtim.tv_sec >= 0 && st->st_mtim.tv_sec <= TAR_MAX_MTIME;
}

static void put_octal(char *field, size_t digits, uint64_t v)
{
	for (size_t i = digits; i-- > 0; v >>= 3)
		field[i] = (char)('0' + (v & 7));
}

static unsigned header_sum(const unsigned char *h)
{
	unsigned sum = 0;
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	return sum;
}

/* The ustar header: numbers in octal, each followed by a space (and a NUL
 * where the field has room), the checksum as "dddddd\0 ". */
static void plain_header(char h[TAR_BLOCK], const char *name, const struct stat *st)
{
	size_t n = strlen(name);
	long cut = ustar_split(name, n);
	memset(h, 0, TAR_BLOCK);
	if (cut > 0) {
		memcpy(h + 345, name, (size_t)cut);
		memcpy(h, name + cut + 1, n - (size_t)cut - 1);
	} else {
		memcpy(h, name, n);
	}
	put_octal(h + 100, 6, st->st_mode & 07777), h[106] = ' ';
	put_octal(h + 108, 6, st->st_uid), h[114] = ' ';
	put_octal(h + 116, 6, st->st_gid), h[122] = ' ';
	put_octal(h + 124, 11, (uint64_t)st->st_size), h[135] = ' ';
	put_octal(h + 136, 11, (uint64_t)st->st_mtim.tv_sec), h[147] = ' ';
	h[156] = '0';
	memcpy(h + 257, "ustar\0" "00", 8);
	put_octal(h + 329, 6, 0), h[335] = ' ';
	put_octal(h + 337, 6, 0), h[343] = ' ';
	put_octal(h + 148, 6, header_sum((const unsigned char *)h));
	h[154] = '\0', h[155] = ' ';
}

static int add_plain(struct tg_jtar *t, int srcfd, const char *name, const struct stat *st, char *buf)
{
	/* The frame's exact size, told first: zstd sizes its window and
	 * tables to it (a few KiB for a small file, where level 1's defaults
	 * take 1.3 MiB to allocate and clear), and the frame header records it.
	 * A frame that would not match fails, as any failed capture. */
	size_t pad = (size_t)(-(uint64_t)st->st_size % TAR_BLOCK);
	if (ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(t->cctx, TAR_BLOCK + (uint64_t)st->st_size + pad)))
		return -EIO;
	plain_header(buf, name, st);
	int r = put(t, buf, TAR_BLOCK);
	off_t pos = 0;
	while (!r && pos < st->st_size) {
		size_t want = (size_t)(st->st_size - pos < TG_JTAR_CHUNK ? st->st_size - pos : TG_JTAR_CHUNK);
		ssize_t got = pread(srcfd, buf, want, pos);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO; /* shrank under us: the pre-image would be a lie */
		r = put(t, buf, (size_t)got);
		pos += got;
	}
	if (!r && pad) {
		memset(buf, 0, pad);
		r = put(t, buf, pad);
	}
	return r;
}

static int add_entry(struct tg_jtar *t, int srcfd, const char *name, const struct stat *st,
                     const char *xattrs, size_t xattrs_len)
{
	_cleanup_free_ off_t *reg = NULL;
	int nreg = data_regions(srcfd, st->st_size, &reg);
	if (nreg < 0)
		return nreg;
	bool plain = plain_entry(name, st, reg, nreg, xattrs_len);
	/* A plain entry reads no more than its size at a time (a small file's
	 * buffer comes from the heap, not from an mmap of 1 MiB). */
	size_t bufsz = plain && (uint64_t)st->st_size < TG_JTAR_CHUNK
	               ? (st->st_size > TAR_BLOCK ? (size_t)st->st_size : TAR_BLOCK) : TG_JTAR_CHUNK;
	_cleanup_free_ char *buf = malloc(bufsz);
	if (!buf)
		return -ENOMEM;
	if (plain)
		return add_plain(t, srcfd, name, st, buf);
	int r = need_archive(t);
	if (r < 0)
		return r;
	struct archive_entry *e = make_entry(name, st, reg, nreg, xattrs, xattrs_len);
	if (!e)
		return -ENOMEM;
	r = archive_write_header(t->a, e) < ARCHIVE_WARN ? (t->err ? t->err : -EIO) : 0;
	archive_entry_free(e);
	if (!r)
		r = stream_regions(t, srcfd, reg, nreg, st->st_size, buf);
	if (!r && archive_write_finish_entry(t->a) < ARCHIVE_WARN)
		r = t->err ? t->err : -EIO;
	return r;
}

/* Cut a failed frame off so the file stays a clean sequence of frames. */
static int undo_frame(struct tg_jtar *t, uint64_t start, int err)
{
	t->err = 0;
	int r = t->a ? new_archive(t) : 0;
	ZSTD_CCtx_reset(t->cctx, ZSTD_reset_session_only);
	if (ftruncate(t->fd, (off_t)start) == 0)
		t->end = start;
	else
		t->broken = true; /* garbage after the last good frame: no more appends */
	return r < 0 && err == 0 ? r : err;
}

int tg_jtar_add(struct tg_jtar *t, int srcfd, const char *name, const struct stat *st,
                const char *xattrs, size_t xattrs_len, uint64_t *frame_off)
{
	if (t->broken || t->finished)
		return -EIO;
	uint64_t start = t->end;
	int r = add_entry(t, srcfd, name, st, xattrs, xattrs_len);
	if (!r) {
		ZSTD_inBuffer in = { NULL, 0, 0 };
		r = flush_zstd(t, &in, ZSTD_e_end);
	}
	if (!r && fdatasync(t->fd) < 0)
		r = -errno;
	if (r < 0)
		return undo_frame(t, start, r);
	*frame_off = start;
	return 0;
}

int tg_jtar_finish(struct tg_jtar *t, struct tg_fs_syncset *later)
{
	if (t->broken || t->finished)
		return -EIO;
	/* The end blocks, written here: libarchive's, if it wrote entries,
	 * are dropped (they are the same two zero blocks). */
	drop_archive(t);
	t->finished = true;
	static const char end[2 * TAR_BLOCK];
	int r = put(t, end, sizeof(end));
	if (!r) {
		ZSTD_inBuffer in = { NULL, 0, 0 };
		r = flush_zstd(t, &in, ZSTD_e_end);
	}
	if (!r)
		r = tg_fs_syncset_add(later, t->fd);
	return r;
}

/* ---- reading one frame back ---- */

struct frame_reader {
	int fd;
	uint64_t pos;
	ZSTD_DCtx *dctx;
	char *in, *out;
	size_t incap, outcap;
	ZSTD_inBuffer ib;
	size_t held;     /* bytes already decoded in out, handed out first */
	bool done;
	int err;
};

/* The frame's next decompressed bytes: *len 0 at its end. 0 or -errno. */
static int next_chunk(struct frame_reader *f, const char **buf, size_t *len)
{
	*len = 0;
	if (f->held) {
		*buf = f->out;
		*len = f->held;
		f->held = 0;
		return 0;
	}
	while (!f->done) {
		if (f->ib.pos == f->ib.size) {
			ssize_t n = pread(f->fd, f->in, f->incap, (off_t)f->pos);
			if (n <= 0)
				return f->err = n < 0 ? -errno : -EBADMSG; /* truncated */
			f->pos += (uint64_t)n;
			f->ib = (ZSTD_inBuffer){ f->in, (size_t)n, 0 };
		}
		ZSTD_outBuffer ob = { f->out, f->outcap, 0 };
		size_t rem = ZSTD_decompressStream(f->dctx, &ob, &f->ib);
		if (ZSTD_isError(rem))
			return f->err = -EBADMSG;
		if (rem == 0)
			f->done = true; /* our frame ends here: never read the next one */
		if (ob.pos > 0) {
			*buf = f->out;
			*len = ob.pos;
			return 0;
		}
	}
	return 0;
}

static la_ssize_t read_cb(struct archive *a, void *ud, const void **buf)
{
	struct frame_reader *f = ud;
	const char *b;
	size_t n;
	if (next_chunk(f, &b, &n) < 0) {
		archive_set_error(a, EIO, "journal frame truncated or corrupt");
		return -1;
	}
	*buf = b;
	return (la_ssize_t)n;
}

static int pwrite_all(int fd, const char *buf, size_t len, off_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t w = pwrite(fd, buf + done, len - done, off + (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		done += (size_t)w;
	}
	return 0;
}

static bool parse_octal(const unsigned char *field, size_t digits, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < digits; i++) {
		if (field[i] < '0' || field[i] > '7')
			return false;
		*v = *v << 3 | (uint64_t)(field[i] - '0');
	}
	return true;
}

/* A header plain_header() would write (or libarchive for such an entry,
 * the same bytes): ustar, a regular file, its checksum right. */
static bool plain_size(const unsigned char *h, uint64_t *size)
{
	uint64_t sum;
	return memcmp(h + 257, "ustar\0" "00", 8) == 0 && h[156] == '0' &&
	       parse_octal(h + 148, 6, &sum) && h[154] == '\0' && sum == header_sum(h) &&
	       parse_octal(h + 124, 11, size) && h[135] == ' ';
}

/* The data of a plain entry whose header was the frame's first block:
 * rest (nrest bytes) follows it in the first chunk, the remainder is still
 * in f. Exactly size bytes, then the padding, then the frame's end. */
static int extract_plain(struct frame_reader *f, const char *rest, size_t nrest, uint64_t size, int dstfd)
{
	uint64_t want = size + (-size % TAR_BLOCK), got = 0;
	for (;;) {
		if (got + nrest > want)
			return -EBADMSG;
		if (got < size) {
			size_t n = (size_t)(size - got < nrest ? size - got : nrest);
			int r = pwrite_all(dstfd, rest, n, (off_t)got);
			if (r < 0)
				return r;
		}
		got += nrest;
		if (f->done || got == want)
			break;
		int r = next_chunk(f, &rest, &nrest);
		if (r < 0)
			return r;
	}
	/* Nothing after the padding, and the frame's own end reached. */
	size_t n = 0;
	const char *b;
	int r = f->done ? 0 : next_chunk(f, &b, &n);
	if (r < 0)
		return r;
	return got == want && n == 0 && f->done ? 0 : -EBADMSG;
}

static void reader_reset(struct frame_reader *f, int fd, uint64_t off)
{
	ZSTD_DCtx_reset(f->dctx, ZSTD_reset_session_only);
	f->fd = fd, f->pos = off, f->held = 0, f->done = false, f->err = 0;
	f->ib = (ZSTD_inBuffer){ f->in, 0, 0 };
}

static int copy_entry_data(struct archive *a, int dstfd)
{
	for (;;) {
		const void *buf;
		size_t size;
		la_int64_t off;
		int r = archive_read_data_block(a, &buf, &size, &off);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r < ARCHIVE_WARN)
			return -EIO;
		int w = pwrite_all(dstfd, buf, size, (off_t)off);
		if (w < 0)
			return w;
	}
}

/* The entry, by libarchive: f's first chunk, already decoded to tell a
 * plain entry, is handed to it again (held), then the rest. */
static int extract_archive(struct frame_reader *f, int dstfd, uint64_t *size)
{
	if (!tg_archive_load(NULL, 0))
		return -ELIBACC;
	struct archive *a = archive_read_new();
	int r = a ? 0 : -ENOMEM;
	struct archive_entry *e = NULL;
	if (!r && (archive_read_support_format_tar(a) != ARCHIVE_OK ||
	           archive_read_open(a, f, NULL, read_cb, NULL) != ARCHIVE_OK ||
	           archive_read_next_header(a, &e) < ARCHIVE_WARN)) {
		r = f->err ? f->err : -EBADMSG;
	}
	if (!r)
		r = copy_entry_data(a, dstfd);
	if (!r && f->err)
		r = f->err;
	if (!r)
		*size = (uint64_t)archive_entry_size(e);
	if (a)
		archive_read_free(a);
	return r;
}

int tg_jtar_extract(int tarfd, uint64_t off, int dstfd, uint64_t *size)
{
	if (!tg_zstd_load(NULL, 0))
		return -ELIBACC;
	struct frame_reader f = { 0 };
	f.dctx = ZSTD_createDCtx();
	f.incap = ZSTD_DStreamInSize();
	f.outcap = ZSTD_DStreamOutSize(); /* 128 KiB: a header's 512 bytes come in one chunk */
	f.in = malloc(f.incap);
	f.out = malloc(f.outcap);
	int r = f.dctx && f.in && f.out ? 0 : -ENOMEM;
	if (!r)
		reader_reset(&f, tarfd, off);
	if (!r && ftruncate(dstfd, 0) < 0)
		r = -errno;
	const char *first = NULL;
	size_t n = 0;
	if (!r)
		r = next_chunk(&f, &first, &n);
	uint64_t len = 0;
	if (!r && n >= TAR_BLOCK && plain_size((const unsigned char *)first, &len)) {
		r = extract_plain(&f, first + TAR_BLOCK, n - TAR_BLOCK, len, dstfd);
	} else if (!r) {
		f.held = n;
		r = extract_archive(&f, dstfd, &len);
	}
	if (!r && ftruncate(dstfd, (off_t)len) < 0)
		r = -errno;
	if (!r && size)
		*size = len;
	ZSTD_freeDCtx(f.dctx);
	free(f.in);
	free(f.out);
	return r;
}
