/* journal/tar.h — pre-image content as a zstd-compressed pax tar.
 *
 * Each captured file is one tar entry compressed as its own zstd frame and
 * fsync'd before the call returns: the file is always a valid sequence of
 * frames (concatenated frames decompress as one stream), a record can point
 * at its frame by byte offset for random access on restore, and a failed
 * capture is cut off (ftruncate to the frame start) without leaving garbage
 * in the middle. tg_jtar_finish() appends the tar end blocks as a last frame.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct tg_jtar;

/* Open (create or append to) dirfd/name. */
int tg_jtar_open(int dirfd, const char *name, struct tg_jtar **out);
void tg_jtar_free(struct tg_jtar *t);

/* Append srcfd (a regular file, read from offset 0, streamed; holes found with
 * SEEK_DATA/SEEK_HOLE are stored as a pax sparse map) as entry `name` with
 * st's metadata and the user xattrs blob (journal.h format). *frame_off gets
 * the frame's offset. Durable (fdatasync) on return. 0 or -errno. */
int tg_jtar_add(struct tg_jtar *t, int srcfd, const char *name, const struct stat *st,
                const char *xattrs, size_t xattrs_len, uint64_t *frame_off);

/* Append the end-of-archive blocks; durable now, or by
 * tg_fs_syncset_flush(later) when later is not NULL. */
struct tg_fs_syncset;
int tg_jtar_finish(struct tg_jtar *t, struct tg_fs_syncset *later);

/* Write the data of the entry whose frame starts at off in tarfd into dstfd
 * (pwrite at the entry's offsets, so holes stay holes) and set dstfd's size.
 * *size (may be NULL) gets the entry size. 0 or -errno. */
int tg_jtar_extract(int tarfd, uint64_t off, int dstfd, uint64_t *size);

/* libzstd and libarchive are loaded at their first use (zstd_lazy.c,
 * archive_lazy.c): true once loaded, else false and why (may be NULL).
 * tg_jtar_open and tg_jtar_extract fail with -ELIBACC without libzstd;
 * tg_jtar_add and tg_jtar_extract without libarchive, for an entry that is
 * not plain (a regular file with a short ASCII name, no holes, no xattrs:
 * tar.c writes and reads its ustar header itself). */
bool tg_zstd_load(char *why, size_t size);
bool tg_archive_load(char *why, size_t size);
