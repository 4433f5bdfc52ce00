/* set.c — the hash sets of set.h. */
#include "set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define TG_SET_MIN 64 /* first table: most sets of a run stay this small */

/* ---- strings ---- */

/* The slot of k, or of the empty slot where it would go. cap > 0. */
static size_t str_slot(char *const *slot, size_t cap, const char *k)
{
	size_t i = (size_t)tg_hash_str(k) & (cap - 1);
	while (slot[i] && strcmp(slot[i], k) != 0)
		i = (i + 1) & (cap - 1);
	return i;
}

static int strset_grow(struct tg_strset *s)
{
	size_t cap = s->cap ? s->cap * 2 : TG_SET_MIN;
	char **slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i])
			slot[str_slot(slot, cap, s->slot[i])] = s->slot[i];
	free(s->slot);
	s->slot = slot;
	s->cap = cap;
	return 0;
}

int tg_strset_add(struct tg_strset *s, const char *k)
{
	size_t i = s->cap ? str_slot(s->slot, s->cap, k) : 0;
	if (s->cap && s->slot[i])
		return 0;
	if ((s->n + 1) * 2 > s->cap) { /* one probe when there is room */
		if (strset_grow(s) < 0)
			return -ENOMEM;
		i = str_slot(s->slot, s->cap, k);
	}
	if (!(s->slot[i] = tg_strdup(k)))
		return -ENOMEM;
	s->n++;
	return 1;
}

bool tg_strset_has(const struct tg_strset *s, const char *k)
{
	return s->cap && s->slot[str_slot(s->slot, s->cap, k)];
}

const char **tg_strset_keys(const struct tg_strset *s)
{
	if (!s->n)
		return NULL;
	const char **v = malloc(s->n * sizeof(*v));
	if (!v)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i])
			v[n++] = s->slot[i];
	return v;
}

void tg_strset_clear(struct tg_strset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slot[i]);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

/* ---- (dev, ino) ----
 *
 * One table for the set and the map: entries of `stride` words, dev and
 * ino first (the map's value after them); ino 0 marks an empty one. */

/* Where the probe for (dev, ino) starts. */
static size_t id_home(size_t cap, uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino * 0x9e3779b97f4a7c15ull) ^ (dev * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h >> 17) & (cap - 1);
}

static size_t id_slot(const uint64_t *k, size_t stride, size_t cap, uint64_t dev, uint64_t ino)
{
	size_t i = id_home(cap, dev, ino);
	while (k[stride * i + 1] && (k[stride * i] != dev || k[stride * i + 1] != ino))
		i = (i + 1) & (cap - 1);
	return i;
}

static int id_grow(uint64_t **kp, size_t *capp, size_t stride)
{
	size_t cap = *capp ? *capp * 2 : TG_SET_MIN;
	uint64_t *k = calloc(stride * cap, sizeof(*k)), *old = *kp;
	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < *capp; i++) {
		if (!old[stride * i + 1])
			continue;
		size_t j = id_slot(k, stride, cap, old[stride * i], old[stride * i + 1]);
		memcpy(&k[stride * j], &old[stride * i], stride * sizeof(*k));
	}
	free(old);
	*kp = k;
	*capp = cap;
	return 0;
}

/* The entry of (dev, ino) in the table, made (dev and ino set) when it
 * had none: *fresh tells. NULL: out of memory. ino != 0. */
static uint64_t *id_entry(uint64_t **kp, size_t *capp, size_t *np, size_t stride, uint64_t dev, uint64_t ino,
                          bool *fresh)
{
	size_t i = *capp ? id_slot(*kp, stride, *capp, dev, ino) : 0;
	*fresh = !*capp || !(*kp)[stride * i + 1];
	if (!*fresh)
		return &(*kp)[stride * i];
	if ((*np + 1) * 2 > *capp) {
		if (id_grow(kp, capp, stride) < 0)
			return NULL;
		i = id_slot(*kp, stride, *capp, dev, ino);
	}
	uint64_t *e = &(*kp)[stride * i];
	e[0] = dev;
	e[1] = ino;
	(*np)++;
	return e;
}

int tg_idset_add(struct tg_idset *s, uint64_t dev, uint64_t ino)
{
	bool fresh;
	if (ino == 0)
		return 0;
	if (!id_entry(&s->k, &s->cap, &s->n, 2, dev, ino, &fresh))
		return -ENOMEM;
	return fresh;
}

bool tg_idset_has(const struct tg_idset *s, uint64_t dev, uint64_t ino)
{
	return ino && s->cap && s->k[2 * id_slot(s->k, 2, s->cap, dev, ino) + 1];
}

/* Empty slot i of a full one by backward shift: each later entry of the
 * run of full slots that follows moves into the hole when its probe starts
 * at the hole or before it (cyclically), so that every entry stays
 * reachable from its home without tombstones. */
static void id_erase(uint64_t *k, size_t stride, size_t cap, size_t i)
{
	size_t hole = i;
	for (size_t j = (i + 1) & (cap - 1); k[stride * j + 1]; j = (j + 1) & (cap - 1)) {
		size_t home = id_home(cap, k[stride * j], k[stride * j + 1]);
		if (((j - home) & (cap - 1)) >= ((j - hole) & (cap - 1))) {
			memcpy(&k[stride * hole], &k[stride * j], stride * sizeof(*k));
			hole = j;
		}
	}
	memset(&k[stride * hole], 0, stride * sizeof(*k));
}

int tg_idset_del(struct tg_idset *s, uint64_t dev, uint64_t ino)
{
	if (!ino || !s->cap)
		return 0;
	size_t i = id_slot(s->k, 2, s->cap, dev, ino);
	if (!s->k[2 * i + 1])
		return 0;
	id_erase(s->k, 2, s->cap, i);
	s->n--;
	return 1;
}

int tg_idmap_put(struct tg_idmap *m, uint64_t dev, uint64_t ino, uint64_t value)
{
	bool fresh;
	if (ino == 0)
		return 0;
	uint64_t *e = id_entry(&m->k, &m->cap, &m->n, 3, dev, ino, &fresh);
	if (!e)
		return -ENOMEM;
	e[2] = value;
	return 0;
}

bool tg_idmap_get(const struct tg_idmap *m, uint64_t dev, uint64_t ino, uint64_t *value)
{
	if (!ino || !m->cap)
		return false;
	const uint64_t *e = &m->k[3 * id_slot(m->k, 3, m->cap, dev, ino)];
	if (!e[1])
		return false;
	*value = e[2];
	return true;
}

void tg_idmap_clear(struct tg_idmap *m)
{
	free(m->k);
	memset(m, 0, sizeof(*m));
}

void tg_idset_clear(struct tg_idset *s)
{
	free(s->k);
	memset(s, 0, sizeof(*s));
}
