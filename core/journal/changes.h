/* changes.h — what a run changed, from its journal records (journal.h).
 *
 * One rule for the live summary (txn.c: the report, the commit's counts)
 * and for `txguard show` of a committed run (history.c), so the two always
 * agree. The records are replayed in log order on objects (changes.c):
 * each has the name it had before the run (or none: the run made it) and
 * the name it has at the end, where a directory's move carries what lies
 * below it; whether it is still there the caller says (the tree now, or
 * the run's post-state, which lists every such name: post.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/set.h"

struct tg_jrec;

/* One changed path in the summary. The names (tg_change_kind_name) are
 * also the info file's keys of the counts and the report's words. */
enum tg_change_kind {
	TG_CHANGE_CREATED,
	TG_CHANGE_MODIFIED,
	TG_CHANGE_DELETED,
	TG_CHANGE_RENAMED,
	TG_CHANGE_METADATA,
	TG_CHANGE_KIND_COUNT
};

struct tg_change {
	enum tg_change_kind kind;
	char *path;                 /* workspace-relative */
	char *from;                 /* TG_CHANGE_RENAMED: old workspace-relative path */
};

struct tg_changes {
	struct tg_change *v;
	size_t n;
	size_t count[TG_CHANGE_KIND_COUNT];
	uint64_t bytes_saved;       /* pre-image bytes captured (uncompressed) */
	uint64_t journal_bytes;     /* on-disk size of the journal */
};
void tg_changes_clear(struct tg_changes *c);
const char *tg_change_kind_name(enum tg_change_kind k);
/* Every count is 0: the run changed nothing. */
bool tg_changes_none(const size_t counts[TG_CHANGE_KIND_COUNT]);
/* Append one change (path and from are copied). 0 or -ENOMEM. */
int tg_changes_push(struct tg_changes *c, enum tg_change_kind k, const char *path, const char *from);

/* The events of a run's records, collected by tg_change_events_add (a
 * tg_journal_foreach callback). Zero-initialise;
 * tg_change_events_clear when done. */
struct tg_change_events {
	struct tg_change_ev *v;
	size_t n, cap;
	struct tg_idmap links;      /* (0, seq) of a link's CREATED -> its event */
};
int tg_change_events_add(void *events, const struct tg_jrec *r);
void tg_change_events_clear(struct tg_change_events *s);
/* Whether an original's content, metadata or object was saved (a record an
 * undo restores from), whatever the summary makes of it: a change made
 * through a second hard-link name that the run removed again is in no
 * line, and still something to undo. A removed directory does not count:
 * its rmdir may have failed. */
bool tg_change_events_saved(const struct tg_change_events *s);

/* Where a path is at the end, for tg_changes_classify. */
struct tg_change_probe {
	/* 1 when rel exists at the end (*is_dir set), 0 when not, or -errno. */
	int (*exists)(void *ud, const char *rel, bool *is_dir);
	/* Push a CREATED change for what a created directory holds (those
	 * names have no records of their own). */
	int (*created_subtree)(void *ud, const char *rel, struct tg_changes *out);
	void *ud;
};

/* Every name the run's objects have at the end, the replay's that
 * tg_changes_classify makes (s sorted in place): a file made in b/ before
 * `mv b c` is c/f, a name no record has. add is called once per object,
 * a name maybe more than once. 0 or -errno. */
int tg_changes_final_names(struct tg_change_events *s, int (*add)(void *ud, const char *path), void *ud);

/* Classify every path of s (sorted in place) into out. 0 or -errno. */
int tg_changes_classify(struct tg_change_events *s, const struct tg_change_probe *probe,
                        struct tg_changes *out);
