/* journal_int.h — what journal*.c share; not for other modules. */
#pragma once

#include "journal.h"
#include "base/fs.h"

struct tg_jtar;

struct tg_journal {
	char *state_dir;
	char *dir;                 /* <state_dir>/txn/<id> */
	struct tg_txinfo info;     /* what the info file says */
	int wsfd;                  /* workspace, O_RDONLY|O_DIRECTORY */
	int dirfd;                 /* the transaction dir */
	int stashfd;
	int logfd;                 /* keep last: tg_journal_free walks wsfd..logfd */
	uint64_t log_end;
	uint64_t seq;              /* last record appended */
	struct tg_jtar *tar;       /* opened at the first content capture */
	bool no_reflink;           /* FICLONE failed once: the filesystem cannot */
	bool no_stash;             /* linkat into the stash gave EXDEV */
	bool broken;               /* a torn append could not be cut off */
	bool deferred;             /* the dir is not made yet (no record so far) */
	bool start_stamped;        /* started_ns is the workspace filesystem's stamp */
	enum tg_sync_mode sync;
	bool held, dirty;          /* tg_journal_hold(): one sync for a call's records */
	uint64_t last_sync;
	bool log_unsynced;         /* the log was written since its last fdatasync */
	uint64_t du_bytes, du_seq; /* tg_journal_disk_bytes at record du_seq */
	bool du_valid;
	uint64_t stash_du, stash_du_seq; /* its stash's part (du_fd) */
	bool stash_du_valid;
};

/* <state_dir>/<sub> (txn, trash) opened as a directory: an fd, or -errno. */
int tg_journal_open_sub(const char *state_dir, const char *sub);
void tg_jmeta_from_stat(struct tg_jmeta *m, const struct stat *st);
int tg_journal_write_info(struct tg_journal *j);
/* post, written; durable now, or by tg_fs_syncset_flush(later) when later
 * is not NULL. */
int tg_journal_write_post(struct tg_journal *j, struct tg_fs_syncset *later);
/* Release the room tg_journal_create set aside for the way back (rollback,
 * commit); no-op when already gone. */
void tg_journal_drop_reserve(struct tg_journal *j);
int tg_journal_keep_last(void *ud, const struct tg_jrec *r);
/* A journal's records in memory, in log order, each BORN identity folded
 * into its CREATED record (meta.dev, meta.ino, TG_JREC_F_BORN_SEEN): what
 * the restore (undo.c) and its preview (preview.c) walk. aux: keep each
 * record's aux (xattrs, symlink target; NUL-terminated), else drop it. */
#define TG_JREC_F_BORN_SEEN 0x80000000u /* in memory only: a BORN names it */
struct tg_jrecs {
	struct tg_jrec *v;
	size_t n, cap;
};
int tg_jrecs_load(const struct tg_journal *j, struct tg_jrecs *s, bool aux);
void tg_jrecs_clear(struct tg_jrecs *s);
/* The lowest seq an interrupted restore already undid (its progress
 * file), or UINT64_MAX: none. */
uint64_t tg_journal_read_progress(const struct tg_journal *j);

/* The state named by the len bytes at s, or -EBADMSG. */
int tg_jstate_parse(const char *s, size_t len);
