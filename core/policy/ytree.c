/* ytree.c — the YAML tree's cache on disk (see ytree.h).
 *
 * One file per source text, named by its hash and length:
 *   header | nodes in preorder, 16 bytes each | scalars' text, each NUL-ended
 * A decoder that trusts nothing but the header's checksum would still be
 * one bit flip from a wild pointer, so every count and offset is checked
 * against the sizes it indexes; anything off is a miss.
 */
#include "ytree.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cache.h"
#include "base/util.h"

#define Y_MAGIC "TGYTREE1"
#define Y_MAX_ENTRY (16u << 20)
/* Entries kept: one per policy text ever loaded (each edit makes a new
 * one); past this many a store clears the others. */
#define Y_MAX_ENTRIES 128

struct yhdr {
	char magic[8];
	uint64_t hash;   /* of the source bytes */
	uint64_t srclen;
	uint64_t sum;    /* of everything after the header */
	uint32_t nnodes;
	uint32_t ntext;
};

struct yenc {
	uint32_t line, col;
	uint32_t n;      /* kids of a list or mapping; length of a scalar */
	uint8_t type, plain, pad[2];
};

void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkid; i++)
		ynode_free(n->kid[i]);
	free(n->kid);
	free(n->s);
	free(n);
}

void ytree_clear(struct ytree *t)
{
	if (!t)
		return;
	if (t->nodes) {
		free(t->nodes);
		free(t->kids);
		free(t->text);
	} else {
		ynode_free(t->root);
	}
	*t = (struct ytree){ 0 };
}

/* A word at a time (FNV-1a byte by byte took 0.1 ms for the shipped
 * policy), murmur3's finaliser at the end. Not meant to resist a chosen
 * collision: whoever could craft one could edit the policy itself. */
static uint64_t fmix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

uint64_t ytree_hash(const char *buf, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, buf + i, 8);
		h ^= rotl(w * 0x87c37b91114253d5ull, 31) * 0x4cf5ad432745937full;
		h = rotl(h, 27) * 5 + 0x52dce729;
	}
	w = 0;
	memcpy(&w, buf + i, len - i);
	return fmix(h ^ w ^ ((uint64_t)(len - i) << 56));
}

/* ---- encoding ---- */

static void count(const struct ynode *n, size_t *nodes, size_t *text)
{
	(*nodes)++;
	if (n->type == Y_SCALAR)
		*text += strlen(n->s) + 1;
	for (size_t i = 0; i < n->nkid; i++)
		count(n->kid[i], nodes, text);
}

static void put(const struct ynode *n, struct yenc **e, char **t)
{
	struct yenc *x = (*e)++;
	*x = (struct yenc){ .line = n->line, .col = n->col, .type = (uint8_t)n->type, .plain = n->plain };
	if (n->type == Y_SCALAR) {
		size_t l = strlen(n->s);
		x->n = (uint32_t)l;
		memcpy(*t, n->s, l + 1);
		*t += l + 1;
		return;
	}
	x->n = (uint32_t)n->nkid;
	for (size_t i = 0; i < n->nkid; i++)
		put(n->kid[i], e, t);
}

int ytree_encode(const struct ynode *root, uint64_t hash, size_t srclen, char **buf, size_t *len)
{
	size_t nodes = 0, text = 0;
	if (!root)
		return -EINVAL;
	count(root, &nodes, &text);
	if (nodes > Y_MAX_NODES || text > UINT32_MAX)
		return -E2BIG;
	size_t total = sizeof(struct yhdr) + nodes * sizeof(struct yenc) + text;
	char *b = malloc(total);
	if (!b)
		return -ENOMEM;
	struct yenc *e = (struct yenc *)(b + sizeof(struct yhdr));
	char *t = (char *)(e + nodes);
	put(root, &e, &t);
	struct yhdr h = { .hash = hash, .srclen = srclen, .nnodes = (uint32_t)nodes, .ntext = (uint32_t)text };
	memcpy(h.magic, Y_MAGIC, sizeof(h.magic));
	h.sum = ytree_hash(b + sizeof(h), total - sizeof(h));
	memcpy(b, &h, sizeof(h));
	*buf = b;
	*len = total;
	return 0;
}

/* ---- decoding ---- */

struct open_parent {
	struct ynode *n;
	uint32_t want;
};

/* 1: *out holds the tree; 0: not a sound entry for these bytes. */
static int decode(const char *buf, size_t len, uint64_t hash, size_t srclen, struct ytree *out)
{
	struct yhdr h;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, Y_MAGIC, sizeof(h.magic)) != 0 || h.hash != hash || h.srclen != srclen ||
	    h.nnodes == 0 || h.nnodes > Y_MAX_NODES ||
	    len != sizeof(h) + (size_t)h.nnodes * sizeof(struct yenc) + h.ntext ||
	    h.sum != ytree_hash(buf + sizeof(h), len - sizeof(h)))
		return 0;
	struct ynode *nodes = calloc(h.nnodes, sizeof(*nodes));
	struct ynode **kids = calloc(h.nnodes, sizeof(*kids));
	char *text = malloc((size_t)h.ntext + 1);
	*out = (struct ytree){ .root = nodes, .nodes = nodes, .kids = kids, .text = text };
	if (!nodes || !kids || !text)
		return -ENOMEM;
	const char *enc = buf + sizeof(h);
	memcpy(text, enc + (size_t)h.nnodes * sizeof(struct yenc), h.ntext);
	text[h.ntext] = '\0';

	struct open_parent stack[Y_MAX_DEPTH + 1];
	int depth = 0;
	size_t toff = 0, koff = 0;
	for (uint32_t i = 0; i < h.nnodes; i++) {
		struct yenc e;
		memcpy(&e, enc + (size_t)i * sizeof(e), sizeof(e));
		if (e.plain > 1 || e.pad[0] || e.pad[1])
			return 0;
		struct ynode *n = &nodes[i];
		*n = (struct ynode){ .type = (enum ytype)e.type, .line = e.line, .col = e.col, .plain = e.plain };
		if (i > 0 && depth == 0)
			return 0; /* a second root */
		if (depth > 0) {
			struct open_parent *p = &stack[depth - 1];
			p->n->kid[p->n->nkid++] = n;
			if (p->n->nkid == p->want)
				depth--;
		}
		switch (e.type) {
		case Y_SCALAR:
			if (e.n >= h.ntext - toff || text[toff + e.n] != '\0' || memchr(text + toff, '\0', e.n))
				return 0;
			n->s = text + toff;
			toff += (size_t)e.n + 1;
			break;
		case Y_MAP:
			if (e.n % 2)
				return 0;
			/* fall through */
		case Y_SEQ:
			if (e.n > h.nnodes - 1 - koff)
				return 0;
			n->kid = kids + koff;
			n->cap = e.n;
			koff += e.n;
			if (e.n == 0)
				break;
			if (depth >= Y_MAX_DEPTH)
				return 0;
			stack[depth++] = (struct open_parent){ n, e.n };
			break;
		default:
			return 0;
		}
	}
	/* Every list filled, every byte of text used, no kid slot left over. */
	return depth == 0 && toff == h.ntext && koff == h.nnodes - 1 ? 1 : 0;
}

int ytree_decode(const char *buf, size_t len, uint64_t hash, size_t srclen, struct ytree *out)
{
	*out = (struct ytree){ 0 };
	int r = decode(buf, len, hash, srclen, out);
	if (r <= 0)
		ytree_clear(out);
	return r;
}

/* ---- the directory (base/cache.h) ---- */

static int entry_name(char *buf, size_t size, uint64_t hash, size_t len)
{
	int n = snprintf(buf, size, "%016llx-%zx.tree", (unsigned long long)hash, len);
	return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

int ytree_load(const char *dir, size_t trusted, uint64_t hash, size_t len, struct ytree *out)
{
	char name[64];
	*out = (struct ytree){ 0 };
	if (entry_name(name, sizeof(name), hash, len) < 0)
		return 0;
	_cleanup_free_ char *buf = NULL;
	size_t n = 0;
	int r = tg_cache_get(dir, trusted, name, Y_MAX_ENTRY, &buf, &n);
	return r <= 0 ? r : ytree_decode(buf, n, hash, len, out);
}

int ytree_store(const char *dir, size_t trusted, uint64_t hash, size_t len, const struct ynode *root)
{
	char name[64];
	_cleanup_free_ char *buf = NULL;
	size_t n = 0;
	int r = entry_name(name, sizeof(name), hash, len);
	if (r < 0 || (r = ytree_encode(root, hash, len, &buf, &n)) < 0)
		return r;
	return tg_cache_put(dir, trusted, name, buf, n, Y_MAX_ENTRIES);
}
