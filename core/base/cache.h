/* cache.h — a directory of small files that start-up can reuse: parsed
 * policy trees (policy/ytree.c), the compiled seccomp filter
 * (trace/filter.c). Each entry is named by a key of its inputs; its reader
 * checks what it reads (magic, sizes, checksum) and takes anything off as
 * a miss. A cache that cannot be read or written only costs the work it
 * would have saved: nothing here is an error a caller must act on.
 *
 * Below dir's first `trusted` bytes (the user's HOME or XDG_STATE_HOME,
 * which may well be reached through a symlink) no symlink is followed, and
 * missing directories are made 0700: the command may create what is
 * missing in ~/.local/state, and a symlink it planted there would send the
 * cache where it writes. */
#ifndef TG_BASE_CACHE_H
#define TG_BASE_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* The entry `name` (no slash) if dir holds one of at most max bytes: 1 with
 * *buf (malloc'ed, NUL-terminated) and *len, 0 when not, or -ENOMEM. */
int tg_cache_get(const char *dir, size_t trusted, const char *name, size_t max, char **buf, size_t *len);

/* Store buf as `name`: a temp file of this process renamed into place (no
 * fsync: a torn entry is a miss). Past max_entries entries in dir, the
 * others are dropped. 0 or -errno, which callers may ignore. */
int tg_cache_put(const char *dir, size_t trusted, const char *name, const void *buf, size_t len,
                 size_t max_entries);

/* FNV-1a, 64 bits, over n bytes, from h (TG_FNV1A_INIT to start): how
 * the caches make a key of their inputs. */
#define TG_FNV1A_INIT 0xcbf29ce484222325ull
uint64_t tg_fnv1a(uint64_t h, const void *p, size_t n);

/* What stands for a file in a cache key: a hash of its device, inode,
 * size and mtime (symlinks followed; a file rebuilt or upgraded in place
 * is a new key). 0 when it cannot be stat'ed: no key. */
uint64_t tg_cache_file_key(const char *path);

/* tg_cache_file_key of this binary (/proc/self/exe): what stands for its
 * code. Computed once per process. */
uint64_t tg_cache_self_key(void);

#endif
