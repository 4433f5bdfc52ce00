/* set.h — small hash sets: strings, and (dev, ino) identities.
 *
 * Open addressing with linear probing in a power-of-two table kept at most
 * half full: a lookup is a hash and a probe or two, which matters on the
 * trapped-call path (txn.c asks on every capture whether an inode was seen).
 * Zero-initialise a set; *_clear frees it and leaves it empty and usable.
 * Only an identity set removes entries (tg_idset_del: a backward shift, no
 * tombstones); the others only ever add.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A set of strings (paths, keys); keys are copied. */
struct tg_strset {
	char **slot;                /* NULL: empty */
	size_t cap, n;
};
/* 1 when k was added, 0 when it was there already, -ENOMEM. */
int tg_strset_add(struct tg_strset *s, const char *k);
bool tg_strset_has(const struct tg_strset *s, const char *k);
/* The keys in no order, as a malloc'd array of s->n pointers into the set
 * (valid until the set changes; free the array only). NULL with errno
 * ENOMEM, or NULL for an empty set. */
const char **tg_strset_keys(const struct tg_strset *s);
void tg_strset_clear(struct tg_strset *s);

/* A set of filesystem identities (st_dev, st_ino). Inode 0 names nothing:
 * adding it is a no-op, and it is never in a set. */
struct tg_idset {
	uint64_t *k;                /* pairs dev, ino; ino 0 = empty slot */
	size_t cap, n;
};
/* 1 when added, 0 when there already (or ino 0), -ENOMEM. */
int tg_idset_add(struct tg_idset *s, uint64_t dev, uint64_t ino);
bool tg_idset_has(const struct tg_idset *s, uint64_t dev, uint64_t ino);
/* 1 when (dev, ino) was in the set and is no more, 0 when it was not. */
int tg_idset_del(struct tg_idset *s, uint64_t dev, uint64_t ino);
void tg_idset_clear(struct tg_idset *s);

/* A map from filesystem identities to a number (an index, say): the same
 * table with the value beside each pair. Inode 0 names nothing. */
struct tg_idmap {
	uint64_t *k;                /* triples dev, ino, value; ino 0 = empty slot */
	size_t cap, n;
};
/* (dev, ino) maps to value from now on, whatever it mapped to before. 0,
 * or -ENOMEM (the map is then as it was); ino 0 is a no-op. */
int tg_idmap_put(struct tg_idmap *m, uint64_t dev, uint64_t ino, uint64_t value);
/* true with *value set, or false when (dev, ino) maps to nothing. */
bool tg_idmap_get(const struct tg_idmap *m, uint64_t dev, uint64_t ino, uint64_t *value);
void tg_idmap_clear(struct tg_idmap *m);
