/* txn/alias.h — other names of workspace objects, outside the workspace:
 * a bind mount that shows (part of) the workspace elsewhere, and hard links
 * of workspace files. A call that changes an object through such a name
 * changes the workspace, so the journal must see it by its workspace name.
 * Private to the txn module.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

struct tg_aliases;

/* Nothing is read until the first question. NULL when out of memory. */
struct tg_aliases *tg_aliases_new(const char *workspace);
void tg_aliases_free(struct tg_aliases *a);

/* abs (outside the workspace) under a mount that shows the workspace's
 * filesystem there too: 1 and *rel = the workspace-relative name of the
 * same object (existing or not: a creation there creates in the workspace),
 * 0 when abs is no such name, -errno. The mount table is read once, at the
 * first question (a tree cannot mount: the filter refuses mount(2)). */
int tg_aliases_bind(struct tg_aliases *a, const char *abs, char **rel);

/* The existing non-directory at abs (outside the workspace, lstat st) has
 * other links: 1 and *rel = a workspace name of the same inode, 0 when none
 * of its names is in the workspace, -errno. The workspace's multi-link
 * inodes are listed by one walk at the first question (a file with one
 * link costs nothing), and again when a name found that way has moved. */
int tg_aliases_link(struct tg_aliases *a, const struct stat *st, char **rel);
