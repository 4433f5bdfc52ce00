/* archive_lazy.c — libarchive, loaded at its first use.
 *
 * Linked normally, libarchive costs every start of txguard its whole
 * dependency closure (libxml2, ICU, libstdc++, nettle, lzma, lz4, bz2,
 * acl): about a millisecond of dynamic loading and relocation on every
 * `txguard -- CMD`, which is most of what a run that changes nothing costs
 * beyond the fork. Only the journal's tar needs it, and only for a
 * pre-image that is not a plain file (tar.c): a long or non-ASCII name,
 * xattrs, holes.
 *
 * So journal/tar.c calls these functions, which have libarchive's names
 * and prototypes (checked against <archive.h>): the first call loads the
 * library (base/lazy.h) and each function looks its real self up once.
 * The executable is linked with --as-needed and never names libarchive
 * itself. Where the library cannot be loaded, constructors return NULL and
 * the rest ARCHIVE_FATAL: the capture fails and its call is refused (fail
 * closed), as on any journal error.
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "base/lazy.h"
#include "tar.h"

/* The soname of libarchive 3.x. */
#define TG_LIBARCHIVE "libarchive.so.13"

static struct tg_lazy_lib archive = TG_LAZY_LIB(TG_LIBARCHIVE);

bool tg_archive_load(char *why, size_t size)
{
	return tg_lazy_load(&archive, why, size);
}

struct archive *archive_write_new(void)
{
	TG_LAZY_FN(archive, archive_write_new);
	return fn_ ? fn_() : NULL;
}

struct archive *archive_read_new(void)
{
	TG_LAZY_FN(archive, archive_read_new);
	return fn_ ? fn_() : NULL;
}

struct archive_entry *archive_entry_new(void)
{
	TG_LAZY_FN(archive, archive_entry_new);
	return fn_ ? fn_() : NULL;
}

void archive_entry_free(struct archive_entry *e)
{
	TG_LAZY_FN(archive, archive_entry_free);
	if (fn_)
		fn_(e);
}

void archive_entry_copy_pathname(struct archive_entry *e, const char *name)
{
	TG_LAZY_FN(archive, archive_entry_copy_pathname);
	if (fn_)
		fn_(e, name);
}

void archive_entry_copy_stat(struct archive_entry *e, const struct stat *st)
{
	TG_LAZY_FN(archive, archive_entry_copy_stat);
	if (fn_)
		fn_(e, st);
}

la_int64_t archive_entry_size(struct archive_entry *e)
{
	TG_LAZY_FN(archive, archive_entry_size);
	return fn_ ? fn_(e) : 0;
}

void archive_entry_sparse_add_entry(struct archive_entry *e, la_int64_t off, la_int64_t len)
{
	TG_LAZY_FN(archive, archive_entry_sparse_add_entry);
	if (fn_)
		fn_(e, off, len);
}

void archive_entry_xattr_add_entry(struct archive_entry *e, const char *name, const void *value,
                                   size_t size)
{
	TG_LAZY_FN(archive, archive_entry_xattr_add_entry);
	if (fn_)
		fn_(e, name, value, size);
}

void archive_set_error(struct archive *a, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	TG_LAZY_FN(archive, archive_set_error);
	if (fn_)
		fn_(a, err, "%s", msg);
}

int archive_write_set_format_pax_restricted(struct archive *a)
{
	TG_LAZY_FN(archive, archive_write_set_format_pax_restricted);
	return fn_ ? fn_(a) : ARCHIVE_FATAL;
}

int archive_write_set_bytes_per_block(struct archive *a, int bytes)
{
	TG_LAZY_FN(archive, archive_write_set_bytes_per_block);
	return fn_ ? fn_(a, bytes) : ARCHIVE_FATAL;
}

int archive_write_open(struct archive *a, void *ud, archive_open_callback *open,
                       archive_write_callback *write, archive_close_callback *close)
{
	TG_LAZY_FN(archive, archive_write_open);
	return fn_ ? fn_(a, ud, open, write, close) : ARCHIVE_FATAL;
}

int archive_write_header(struct archive *a, struct archive_entry *e)
{
	TG_LAZY_FN(archive, archive_write_header);
	return fn_ ? fn_(a, e) : ARCHIVE_FATAL;
}

la_ssize_t archive_write_data(struct archive *a, const void *buf, size_t len)
{
	TG_LAZY_FN(archive, archive_write_data);
	return fn_ ? fn_(a, buf, len) : ARCHIVE_FATAL;
}

int archive_write_finish_entry(struct archive *a)
{
	TG_LAZY_FN(archive, archive_write_finish_entry);
	return fn_ ? fn_(a) : ARCHIVE_FATAL;
}

int archive_write_close(struct archive *a)
{
	TG_LAZY_FN(archive, archive_write_close);
	return fn_ ? fn_(a) : ARCHIVE_FATAL;
}

int archive_write_free(struct archive *a)
{
	TG_LAZY_FN(archive, archive_write_free);
	return fn_ ? fn_(a) : ARCHIVE_FATAL;
}

int archive_read_support_format_tar(struct archive *a)
{
	TG_LAZY_FN(archive, archive_read_support_format_tar);
	return fn_ ? fn_(a) : ARCHIVE_FATAL;
}

int archive_read_open(struct archive *a, void *ud, archive_open_callback *open,
                      archive_read_callback *read, archive_close_callback *close)
{
	TG_LAZY_FN(archive, archive_read_open);
	return fn_ ? fn_(a, ud, open, read, close) : ARCHIVE_FATAL;
}

int archive_read_next_header(struct archive *a, struct archive_entry **e)
{
	TG_LAZY_FN(archive, archive_read_next_header);
	return fn_ ? fn_(a, e) : ARCHIVE_FATAL;
}

int archive_read_data_block(struct archive *a, const void **buf, size_t *size, la_int64_t *off)
{
	TG_LAZY_FN(archive, archive_read_data_block);
	return fn_ ? fn_(a, buf, size, off) : ARCHIVE_FATAL;
}

int archive_read_free(struct archive *a)
{
	TG_LAZY_FN(archive, archive_read_free);
	return fn_ ? fn_(a) : ARCHIVE_FATAL;
}
