/* history_int.h — shared between the history module's own files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The state dir: state_dir itself, or tg_txn_default_state_dir(workspace). */
int tg_history_state_root(const char *workspace, const char *state_dir, char **out);

/* Every member of every multi-command transaction, as pairs
 * {txn id, tx id, txn id, tx id, ..., NULL}. */
int tg_history_tx_map(const char *workspace, const char *state_dir, char ***pairs);

/* A set of strings (paths), open addressing; for the undo check and show. */
struct tg_strset {
	char **slot;
	size_t *val;
	size_t cap, n;
};
int tg_strset_add(struct tg_strset *s, const char *k, size_t val);
/* SIZE_MAX when absent. */
size_t tg_strset_get(const struct tg_strset *s, const char *k);
void tg_strset_clear(struct tg_strset *s);
