/* ytree.h — the policy loader's YAML tree, and its cache on disk.
 * Internal to the policy module: policy/load.c builds trees from libyaml's
 * events and walks them against the schema; ytree.c stores them by content.
 *
 * Parsing the shipped policy (~75 KB of YAML) is most of what a start costs
 * before anything runs: libyaml reads ~25 MB/s. A tree stored under the hash
 * of the very bytes it was parsed from skips that; the schema walk still
 * runs on it, so a cached tree is judged exactly as a parsed one. (A start
 * whose files are all as before needs no tree at all: the walk's result is
 * cached whole, model.c.)
 * The cache dir must be one the command cannot write (txguard's state
 * home, denied by the builtin "state-dir" rule): a tree read from it is
 * trusted like the policy file itself. Whatever is wrong with an entry
 * (torn write, other format, bit rot) makes it a miss, never an error.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ytype { Y_SCALAR, Y_SEQ, Y_MAP };

struct ynode {
	enum ytype type;
	unsigned line, col;
	char *s;               /* scalar text */
	bool plain;            /* unquoted scalar */
	struct ynode **kid;    /* seq items; map: key, value, key, value... */
	size_t nkid, cap;
};

#define Y_MAX_DEPTH 32
#define Y_MAX_NODES 200000

/* A tree parsed node by node (ynode_free), or read from the cache as a
 * few blocks (ytree_clear). */
struct ytree {
	struct ynode *root;
	void *nodes, *kids, *text; /* the cached tree's blocks; NULL when parsed */
};

void ynode_free(struct ynode *n);
void ytree_clear(struct ytree *t);

/* FNV-1a 64 of the source bytes: the cache key. */
uint64_t ytree_hash(const char *buf, size_t len);

/* The cached tree of `len` source bytes hashing to `hash`, if dir holds a
 * sound one: 1 and *out set, 0 when not (*out cleared), -ENOMEM. Below
 * dir's first `trusted` bytes no symlink is followed (tg_policy_cache). */
int ytree_load(const char *dir, size_t trusted, uint64_t hash, size_t len, struct ytree *out);
/* Store root as the tree of those bytes (temp file + rename; no fsync: a
 * torn entry is a miss). Failures are not errors: 0 or -errno, ignorable. */
int ytree_store(const char *dir, size_t trusted, uint64_t hash, size_t len, const struct ynode *root);

/* The encoding itself, for tests: *buf malloc'ed. */
int ytree_encode(const struct ynode *root, uint64_t hash, size_t srclen, char **buf, size_t *len);
int ytree_decode(const char *buf, size_t len, uint64_t hash, size_t srclen, struct ytree *out);

/* libyaml is loaded at its first use (yaml_lazy.c), to parse a file the
 * cache does not hold: true once loaded, else false and why (may be NULL). */
bool tg_yaml_load(char *why, size_t size);
