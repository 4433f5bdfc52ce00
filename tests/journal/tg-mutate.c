/* tg-mutate SEED N DIR [--hook STATE_DIR [--end rollback|commit|none]
 *                      [--die-op K] [--die-undo K]]
 * tg-mutate recover DIR STATE_DIR [--force]
 * tg-mutate undo DIR STATE_DIR [--journaled [--die-step K]]
 * tg-mutate redo DIR STATE_DIR
 *
 * Performs N seeded random filesystem operations inside DIR: create, write,
 * append, overwrite in place, truncate, sparse writes, unlink, rename of
 * files and directories (plain, NOREPLACE, EXCHANGE), mkdir, rmdir,
 * symlink, hard link, chmod, chown (root), utimes, xattrs (user.*; as root
 * also trusted.*, ACLs, file capabilities), mkfifo.
 * Names come from a small pool (spaces, a newline, invalid UTF-8, a 200-byte
 * component) so operations collide: overwrite chains, renames of
 * directories holding modified files, rename over existing names. Most
 * failures (ENOENT, EEXIST, ENOTEMPTY...) are part of the game.
 *
 * Standalone it is a plain mutator (for `txguard -- tg-mutate ...`). With
 * --hook it opens a transaction itself and calls tg_txn_before() before each
 * operation, as the tracer would, then ends it as --end says (default
 * rollback; "none" leaves it open, i.e. interrupted). Exit 0 on success,
 * 3 when tg_txn_before refused a call, 2 on usage/setup errors.
 * Seeds whose remainder by 4 is 0 or 1 journal as the tree's only task
 * (tg_op.alone), the others as one of several.
 * --die-op K: SIGKILL itself right after journaling op K, before making the
 * call; --die-undo K: SIGKILL itself after K records are restored (crash
 * tests). `recover` runs tg_recover_ex() and prints how many it restored
 * (exit 4: refused, paths changed after the crash).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/op.h"
#include "base/util.h"
#include "journal/journal.h"
#include "history/history.h"
#include "txn/txn.h"

static uint64_t rng;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static unsigned pick(unsigned n) { return (unsigned)(rnd() % n); }

static char longname[201];
static const char *dirs[] = { "d0", "d1", "dir with space", "d\xff\xfe", longname };
static const char *files[] = { "f0", "f1", "f2", "file name", "new\nline", "\xc3\x28x", "f3.txt" };

static struct tg_txn *txn;
/* Half the seeds journal their calls as the tree's only task would
 * (tg_op.alone: creations in a directory of the run wait unread, txn.c's
 * "quiet creations"), half as one of several. */
static bool alone;
static long die_op = -1, die_undo = -1, op_index;
static char root[PATH_MAX];

/* A random relative path: 0-2 directory components, then a leaf. */
static void rand_path(char *buf, size_t n, bool dir_leaf)
{
	buf[0] = '\0';
	unsigned depth = pick(20);
	depth = depth < 9 ? 0 : depth < 17 ? 1 : 2;
	for (unsigned i = 0; i < depth; i++) {
		strncat(buf, dirs[pick(TG_ARRAY_SIZE(dirs))], n - strlen(buf) - 1);
		strncat(buf, "/", n - strlen(buf) - 1);
	}
	const char *leaf = dir_leaf || pick(4) == 0 ? dirs[pick(TG_ARRAY_SIZE(dirs))] : files[pick(TG_ARRAY_SIZE(files))];
	strncat(buf, leaf, n - strlen(buf) - 1);
}

/* The path as the tracer would give it: absolute, parents resolved, the last
 * component resolved when the call follows it. NULL: skip this op (a
 * dangling symlink followed, or an escape). */
static char *resolve(const char *rel, bool follow)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s", rel);
	struct stat st;
	for (int i = 0; follow && i < 40 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode); i++) {
		char t[PATH_MAX];
		ssize_t n = readlink(path, t, sizeof(t) - 1);
		if (n < 0)
			return NULL;
		t[n] = '\0';
		char *slash = strrchr(path, '/');
		if (t[0] == '/' || !slash) {
			snprintf(path, sizeof(path), "%s", t);
		} else {
			slash[1] = '\0';
			strncat(path, t, sizeof(path) - strlen(path) - 1);
		}
	}
	char dir[PATH_MAX * 2];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	const char *leaf = slash ? slash + 1 : dir;
	if (slash)
		*slash = '\0';
	char *parent = realpath(slash ? dir : ".", NULL);
	if (!parent)
		return NULL; /* the call fails with ENOENT/ENOTDIR */
	char out[PATH_MAX * 3];
	snprintf(out, sizeof(out), "%s/%s", parent, leaf);
	free(parent);
	return strdup(out);
}

static void hook(enum tg_op_kind kind, const char *rel, const char *rel2, bool follow, int flags)
{
	if (getenv("TG_MUTATE_TRACE"))
		fprintf(stderr, "op %s '%s' '%s' flags=%#x\n", tg_op_kind_name(kind), rel, rel2 ? rel2 : "", flags);
	if (!txn)
		return;
	struct tg_op op = { .kind = kind, .flags = flags, .follow = follow, .writes = true, .alone = alone };
	op.path = resolve(rel, follow);
	op.path2 = rel2 ? resolve(rel2, false) : NULL;
	int e = op.path && (!rel2 || op.path2) ? tg_txn_before(txn, &op) : 0;
	free(op.path);
	free(op.path2);
	if (op_index == die_op)
		raise(SIGKILL); /* journaled, the call not yet made: the worst moment */
	if (e < 0) {
		fprintf(stderr, "tg-mutate: tg_txn_before(%s, %s): %s\n", tg_op_kind_name(kind), rel, strerror(-e));
		exit(3);
	}
}

static void fill(char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(pick(4) ? 'a' + pick(26) : pick(256));
}

static void do_write(const char *p, int flags)
{
	static char buf[20000];
	hook(TG_OP_OPEN, p, NULL, true, flags);
	int fd = open(p, flags | O_NONBLOCK, 0600 | (pick(2) ? 0044 : 0));
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		size_t n = pick(5) ? pick(8192) : pick(sizeof(buf));
		fill(buf, n);
		off_t off = (flags & O_APPEND) ? 0 : (off_t)(st.st_size ? pick((unsigned)st.st_size + 1) : 0);
		if (pick(8) == 0)
			off += 1 << 20; /* leaves a hole: sparse */
		if (pwrite(fd, buf, n, (flags & O_APPEND) ? st.st_size : off) < 0 && flags & O_APPEND)
			(void)!write(fd, buf, n);
	}
	close(fd);
}

/* A valid POSIX ACL xattr (version 2): owner, one named user, group, mask,
 * other, in the kernel's order. */
static size_t acl_blob(char *name, size_t nsize, char *val, bool dflt)
{
	snprintf(name, nsize, "system.posix_acl_%s", dflt ? "default" : "access");
	struct { uint16_t tag, perm; uint32_t id; } e[] = {
		{ 0x01, 6, UINT32_MAX }, { 0x02, (uint16_t)pick(8), 1000 + pick(3) },
		{ 0x04, 4, UINT32_MAX }, { 0x10, (uint16_t)pick(8), UINT32_MAX }, { 0x20, 4, UINT32_MAX },
	};
	uint32_t version = 2;
	memcpy(val, &version, 4);
	memcpy(val + 4, e, sizeof(e));
	return 4 + sizeof(e);
}

/* security.capability, VFS_CAP_REVISION_2: a permitted set, effective or not. */
static size_t cap_blob(char *name, size_t nsize, char *val)
{
	snprintf(name, nsize, "security.capability");
	uint32_t v[5] = { 0x02000000u | pick(2), 1u << pick(20), 0, 0, 0 };
	memcpy(val, v, sizeof(v));
	return sizeof(v);
}

static void one_op(void)
{
	char a[PATH_MAX], b[PATH_MAX];
	rand_path(a, sizeof(a), false);
	switch (pick(23)) {
	case 0: case 1: case 2:
		do_write(a, O_WRONLY | O_CREAT | O_TRUNC);
		break;
	case 3:
		do_write(a, O_WRONLY | O_APPEND);
		break;
	case 4:
		do_write(a, O_RDWR);
		break;
	case 5: {
		off_t sz = pick(3) ? pick(5000) : (off_t)pick(4) << 20;
		hook(TG_OP_TRUNCATE, a, NULL, true, 0);
		(void)!truncate(a, sz);
		break;
	}
	case 6:
		hook(TG_OP_UNLINK, a, NULL, false, 0);
		unlink(a);
		break;
	case 7: case 8: {
		rand_path(b, sizeof(b), pick(2));
		unsigned fl = pick(6) == 0 ? RENAME_EXCHANGE : pick(6) == 0 ? RENAME_NOREPLACE : 0;
		if (pick(2))
			rand_path(a, sizeof(a), true);
		hook(TG_OP_RENAME, a, b, false, (int)fl);
		renameat2(AT_FDCWD, a, AT_FDCWD, b, fl);
		break;
	}
	case 9: case 10: case 19:
		rand_path(a, sizeof(a), true);
		hook(TG_OP_MKDIR, a, NULL, false, 0);
		mkdir(a, pick(4) ? 0755 : 0700);
		break;
	case 11:
		rand_path(a, sizeof(a), true);
		hook(TG_OP_RMDIR, a, NULL, false, 0);
		rmdir(a);
		break;
	case 12: {
		const char *t = pick(2) ? files[pick(TG_ARRAY_SIZE(files))] : "d0/f1";
		hook(TG_OP_SYMLINK, a, NULL, false, 0);
		(void)!symlink(t, a);
		break;
	}
	case 13:
		rand_path(b, sizeof(b), false);
		hook(TG_OP_LINK, b, a, false, 0);
		(void)!link(b, a);
		break;
	case 14: {
		static const mode_t modes[] = { 0644, 0600, 0755, 0444, 0640, 04755, 0700 };
		if (pick(2))
			rand_path(a, sizeof(a), true);
		hook(TG_OP_CHMOD, a, NULL, true, 0);
		(void)!chmod(a, modes[pick(TG_ARRAY_SIZE(modes))]);
		break;
	}
	case 15: {
		struct timespec ts[2] = { { 1000000000 + pick(1000000), pick(1000000000) },
		                          { 1000000000 + pick(1000000), pick(1000000000) } };
		hook(TG_OP_UTIMES, a, NULL, false, 0);
		utimensat(AT_FDCWD, a, ts, AT_SYMLINK_NOFOLLOW);
		break;
	}
	case 16: {
		char name[32], val[64];
		size_t vl = 1 + pick(sizeof(val) - 1);
		snprintf(name, sizeof(name), "user.k%u", pick(3));
		fill(val, sizeof(val));
		/* As root, every namespace the journal keeps: trusted.*, ACLs
		 * (access, and default on directories), file capabilities. */
		unsigned ns = geteuid() == 0 ? pick(6) : 0;
		if (ns == 1)
			snprintf(name, sizeof(name), "trusted.t%u", pick(2));
		else if (ns == 2 || ns == 3)
			vl = acl_blob(name, sizeof(name), val, ns == 3);
		else if (ns == 4)
			vl = cap_blob(name, sizeof(name), val);
		if (pick(2))
			rand_path(a, sizeof(a), true);
		hook(TG_OP_XATTR, a, NULL, false, 0);
		if (pick(3))
			lsetxattr(a, name, val, vl, 0);
		else
			lremovexattr(a, name);
		break;
	}
	case 17:
		hook(TG_OP_MKNOD, a, NULL, false, 0);
		mkfifo(a, 0644);
		break;
	case 18:
		if (geteuid() == 0) {
			hook(TG_OP_CHOWN, a, NULL, false, 0);
			(void)!lchown(a, pick(2) ? 0 : 1000 + pick(3), pick(2) ? 0 : 1000);
		}
		break;
	default:
		do_write(a, O_WRONLY | O_CREAT | O_EXCL);
		break;
	case 20: case 21:
		rand_path(a, sizeof(a), pick(3) == 0);
		strcpy(b, pick(2) ? "d1" : "f0"); /* rename over a busy top-level name */
		hook(TG_OP_RENAME, a, b, false, 0);
		(void)!rename(a, b);
		break;
	}
}

static void progress(void *ud, size_t done, size_t total)
{
	(void)ud;
	(void)total;
	if ((long)done == die_undo)
		raise(SIGKILL);
}

/* tg-mutate undo DIR STATE_DIR: undo the newest committed run. */
static int undo_newest(const char *dir, const char *state)
{
	char sd[PATH_MAX];
	if (!realpath(state, sd)) {
		perror("realpath");
		return 2;
	}
	(void)dir;
	struct tg_txinfo *v;
	size_t n;
	int e = tg_run_list(sd, &v, &n);
	size_t i = 0;
	while (e == 0 && i < n && v[i].state != TG_JSTATE_COMMITTED)
		i++;
	if (e == 0)
		e = i < n ? tg_run_undo(sd, v[i].id, false) : -ENOENT;
	if (e == 0 || e == -ENOENT)
		tg_txinfo_free_all(v, n);
	/* No committed run: the sequence added up to no change, and a run
	 * that changes nothing leaves no history entry. The caller checks. */
	if (e == -ENOENT)
		return 4;
	if (e < 0)
		fprintf(stderr, "tg-mutate: undo: %s\n", strerror(-e));
	return e < 0 ? 3 : 0;
}

static long die_step = -1, steps;

/* --die-step K: SIGKILL once K restore steps of the undo are journaled
 * (the K-th one's record durable, its change not made). */
static int txn_before(void *ud, const struct tg_op *op)
{
	int e = tg_txn_before(ud, op);
	if (++steps == die_step)
		raise(SIGKILL);
	return e;
}

/* tg-mutate undo DIR STATE_DIR --journaled: undo the newest run as
 * `txguard undo` does, journaling itself (its entry is what redo restores).
 * tg-mutate redo DIR STATE_DIR: `txguard redo`. */
static int undo_journaled(const char *dir, const char *state)
{
	char ws[PATH_MAX], sd[PATH_MAX];
	if (!realpath(dir, ws) || !realpath(state, sd)) {
		perror("realpath");
		return 2;
	}
	char **ids = NULL;
	int e = tg_history_undo_plan(ws, sd, NULL, &ids);
	if (e == -ENOENT)
		return 4;
	struct tg_txn *t = NULL;
	const struct tg_txn_opts to = { .workspace = ws, .state_dir = sd, .lock = TG_LOCK_FAIL,
	                                .command = "tg-mutate undo", .undoes = ids ? ids[0] : NULL };
	if (!e)
		e = tg_txn_open(&t, &to);
	struct tg_undo_result r = { 0 };
	const struct tg_undo_opts uo = { .locked = true, .before = txn_before, .ud = t };
	if (!e)
		e = tg_history_undo_set_ex(ws, sd, (const char *const *)ids, &uo, &r);
	/* one run per sequence: the set is that run alone */
	if (!e && (r.nundone != 1 || ids[1]))
		e = -EPROTO;
	if (!e) {
		tg_txn_end(t);
		e = tg_txn_commit(t);
	}
	tg_txn_free(t);
	tg_undo_result_clear(&r);
	tg_strv_free(ids);
	if (e < 0)
		fprintf(stderr, "tg-mutate: journaled undo: %s\n", strerror(-e));
	return e < 0 ? 3 : 0;
}

static int redo(const char *dir, const char *state)
{
	char ws[PATH_MAX], sd[PATH_MAX];
	if (!realpath(dir, ws) || !realpath(state, sd)) {
		perror("realpath");
		return 2;
	}
	struct tg_undo_result r = { 0 };
	int e = tg_history_redo(ws, sd, false, &r);
	if (e < 0)
		fprintf(stderr, "tg-mutate: redo: %s (%zu conflicts%s%s)\n", strerror(-e), r.nconflicts,
		        r.nconflicts ? ", first " : "", r.nconflicts ? r.conflicts[0].path : "");
	tg_undo_result_clear(&r);
	return e < 0 ? 3 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: tg-mutate SEED N DIR [--hook STATE_DIR [--end rollback|commit|none]]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *dbg = getenv("TG_JOURNAL_DEBUG");
	tg_journal_debug = dbg ? atoi(dbg) : 0;
	if ((argc == 4 || (argc == 5 && !strcmp(argv[4], "--force"))) && !strcmp(argv[1], "recover")) {
		char ws[PATH_MAX], sd[PATH_MAX];
		if (!realpath(argv[2], ws) || !realpath(argv[3], sd)) {
			perror("realpath");
			return 2;
		}
		struct tg_recovery r = { .force = argc == 5 };
		int e = tg_recover_ex(ws, sd, &r);
		if (e < 0)
			fprintf(stderr, "tg-mutate: recover: %s\n", strerror(-e));
		else
			printf("%d\n", r.restored);
		return e == -ESTALE ? 4 : e < 0 ? 3 : 0;
	}
	if (argc == 4 && !strcmp(argv[1], "undo"))
		return undo_newest(argv[2], argv[3]);
	if (argc >= 5 && !strcmp(argv[1], "undo") && !strcmp(argv[4], "--journaled")) {
		if (argc == 7 && !strcmp(argv[5], "--die-step"))
			die_step = strtol(argv[6], NULL, 10);
		return undo_journaled(argv[2], argv[3]);
	}
	if (argc == 4 && !strcmp(argv[1], "redo"))
		return redo(argv[2], argv[3]);
	if (argc < 4)
		return usage();
	rng = strtoull(argv[1], NULL, 10) * 0x9e3779b97f4a7c15ull + 1;
	alone = strtoull(argv[1], NULL, 10) % 4 < 2;
	long n = strtol(argv[2], NULL, 10);
	const char *state = NULL, *end = "rollback";
	for (int i = 4; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--hook"))
			state = argv[i + 1];
		else if (!strcmp(argv[i], "--end"))
			end = argv[i + 1];
		else if (!strcmp(argv[i], "--die-op"))
			die_op = strtol(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--die-undo"))
			die_undo = strtol(argv[i + 1], NULL, 10);
		else
			return usage();
	}
	memset(longname, 'L', 200);
	if (!realpath(argv[3], root) || chdir(root) < 0) {
		perror(argv[3]);
		return 2;
	}
	if (state) {
		struct tg_txn_opts o = { .workspace = root, .state_dir = state, .command = "tg-mutate" };
		/* As the CLI does (cmd/args.c): the caller resolves the variable. */
		const char *sync = getenv("TXGUARD_JOURNAL_SYNC");
		if (sync && !strcmp(sync, "batch"))
			o.sync = TG_SYNC_CHOICE_BATCH;
		else if (sync && !strcmp(sync, "full"))
			o.sync = TG_SYNC_CHOICE_FULL;
		int e = tg_txn_open(&txn, &o);
		if (e < 0) {
			fprintf(stderr, "tg-mutate: tg_txn_open: %s\n", strerror(-e));
			return 2;
		}
	}
	for (op_index = 0; op_index < n; op_index++)
		one_op();
	if (!txn)
		return 0;
	int e = 0;
	if (!strcmp(end, "rollback"))
		e = tg_txn_rollback(txn, progress, NULL);
	else if (!strcmp(end, "commit"))
		e = tg_txn_commit(txn);
	else
		_exit(0); /* leave it interrupted, lock released by exit */
	if (e < 0) {
		fprintf(stderr, "tg-mutate: %s: %s\n", end, strerror(-e));
		return 3;
	}
	tg_txn_free(txn);
	return 0;
}
