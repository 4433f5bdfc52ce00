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

/* ---- (dev, ino) ---- */

static size_t id_slot(const uint64_t *k, size_t cap, uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino * 0x9e3779b97f4a7c15ull) ^ (dev * 0xc2b2ae3d27d4eb4full);
	size_t i = (size_t)(h >> 17) & (cap - 1);
	while (k[2 * i + 1] && (k[2 * i] != dev || k[2 * i + 1] != ino))
		i = (i + 1) & (cap - 1);
	return i;
}

static int idset_grow(struct tg_idset *s)
{
	size_t cap = s->cap ? s->cap * 2 : TG_SET_MIN;
	uint64_t *k = calloc(2 * cap, sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->k[2 * i + 1])
			continue;
		size_t j = id_slot(k, cap, s->k[2 * i], s->k[2 * i + 1]);
		k[2 * j] = s->k[2 * i];
		k[2 * j + 1] = s->k[2 * i + 1];
	}
	free(s->k);
	s->k = k;
	s->cap = cap;
	return 0;
}

int tg_idset_add(struct tg_idset *s, uint64_t dev, uint64_t ino)
{
	if (ino == 0)
		return 0;
	size_t i = s->cap ? id_slot(s->k, s->cap, dev, ino) : 0;
	if (s->cap && s->k[2 * i + 1])
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		if (idset_grow(s) < 0)
			return -ENOMEM;
		i = id_slot(s->k, s->cap, dev, ino);
	}
	s->k[2 * i] = dev;
	s->k[2 * i + 1] = ino;
	s->n++;
	return 1;
}

bool tg_idset_has(const struct tg_idset *s, uint64_t dev, uint64_t ino)
{
	return ino && s->cap && s->k[2 * id_slot(s->k, s->cap, dev, ino) + 1];
}

void tg_idset_clear(struct tg_idset *s)
{
	free(s->k);
	memset(s, 0, sizeof(*s));
}
