/* journal/tar.c — pre-images as one zstd frame per pax tar entry (journal/tar.h). */
#include "tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

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

static la_ssize_t write_cb(struct archive *a, void *ud, const void *buf, size_t len)
{
	struct tg_jtar *t = ud;
	if (t->discard)
		return (la_ssize_t)len;
	ZSTD_inBuffer in = { buf, len, 0 };
	int r = flush_zstd(t, &in, ZSTD_e_continue);
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

/* Both libraries the tar needs, loaded at their first use (tar.h). */
static bool libraries_loaded(void)
{
	return tg_zstd_load(NULL, 0) && tg_archive_load(NULL, 0);
}

int tg_jtar_open(int dirfd, const char *name, struct tg_jtar **out)
{
	if (!libraries_loaded())
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
	if (!r)
		r = new_archive(t);
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

static int add_entry(struct tg_jtar *t, int srcfd, const char *name, const struct stat *st,
                     const char *xattrs, size_t xattrs_len)
{
	_cleanup_free_ off_t *reg = NULL;
	int nreg = data_regions(srcfd, st->st_size, &reg);
	if (nreg < 0)
		return nreg;
	_cleanup_free_ char *buf = malloc(TG_JTAR_CHUNK);
	struct archive_entry *e = buf ? make_entry(name, st, reg, nreg, xattrs, xattrs_len) : NULL;
	if (!e)
		return -ENOMEM;
	int r = archive_write_header(t->a, e) < ARCHIVE_WARN ? (t->err ? t->err : -EIO) : 0;
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
	int r = new_archive(t);
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
	if (t->broken || !t->a)
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

int tg_jtar_finish(struct tg_jtar *t)
{
	int r = archive_write_close(t->a) == ARCHIVE_OK ? 0 : (t->err ? t->err : -EIO);
	if (!r) {
		ZSTD_inBuffer in = { NULL, 0, 0 };
		r = flush_zstd(t, &in, ZSTD_e_end);
	}
	if (!r && fsync(t->fd) < 0)
		r = -errno;
	archive_write_free(t->a);
	t->a = NULL;
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
	bool done;
	int err;
};

static la_ssize_t read_cb(struct archive *a, void *ud, const void **buf)
{
	struct frame_reader *f = ud;
	while (!f->done) {
		if (f->ib.pos == f->ib.size) {
			ssize_t n = pread(f->fd, f->in, f->incap, (off_t)f->pos);
			if (n <= 0) {
				f->err = n < 0 ? -errno : -EBADMSG;
				archive_set_error(a, EIO, "journal frame truncated");
				return -1;
			}
			f->pos += (uint64_t)n;
			f->ib = (ZSTD_inBuffer){ f->in, (size_t)n, 0 };
		}
		ZSTD_outBuffer ob = { f->out, f->outcap, 0 };
		size_t rem = ZSTD_decompressStream(f->dctx, &ob, &f->ib);
		if (ZSTD_isError(rem)) {
			f->err = -EBADMSG;
			archive_set_error(a, EIO, "journal frame corrupt");
			return -1;
		}
		if (rem == 0)
			f->done = true; /* our frame ends here: never read the next one */
		if (ob.pos > 0) {
			*buf = f->out;
			return (la_ssize_t)ob.pos;
		}
	}
	return 0;
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
		size_t done = 0;
		while (done < size) {
			ssize_t w = pwrite(dstfd, (const char *)buf + done, size - done, off + (off_t)done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			done += (size_t)w;
		}
	}
}

int tg_jtar_extract(int tarfd, uint64_t off, int dstfd, uint64_t *size)
{
	if (!libraries_loaded())
		return -ELIBACC;
	struct frame_reader f = { .fd = tarfd, .pos = off };
	f.dctx = ZSTD_createDCtx();
	f.incap = ZSTD_DStreamInSize();
	f.outcap = ZSTD_DStreamOutSize();
	f.in = malloc(f.incap);
	f.out = malloc(f.outcap);
	struct archive *a = archive_read_new();
	int r = f.dctx && f.in && f.out && a ? 0 : -ENOMEM;
	struct archive_entry *e = NULL;
	if (!r && (archive_read_support_format_tar(a) != ARCHIVE_OK ||
	           archive_read_open(a, &f, NULL, read_cb, NULL) != ARCHIVE_OK ||
	           archive_read_next_header(a, &e) < ARCHIVE_WARN)) {
		r = f.err ? f.err : -EBADMSG;
	}
	if (!r && ftruncate(dstfd, 0) < 0)
		r = -errno;
	if (!r)
		r = copy_entry_data(a, dstfd);
	if (!r && f.err)
		r = f.err;
	if (!r && ftruncate(dstfd, archive_entry_size(e)) < 0)
		r = -errno;
	if (!r && size)
		*size = (uint64_t)archive_entry_size(e);
	if (a)
		archive_read_free(a);
	ZSTD_freeDCtx(f.dctx);
	free(f.in);
	free(f.out);
	return r;
}
