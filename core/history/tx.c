/* history/tx.c — multi-command transactions: a small text record per
 * transaction in <state>/tx/<ID>, rewritten atomically (temp + rename) under
 * an flock on <state>/tx/.lock so that `begin`, `commit` and the runs that
 * join never interleave their updates.
 *
 * Format (one "key value" per line, values to the end of the line):
 *   txguard-tx 1
 *   id NAME
 *   state open|committed|rolled-back|aborted
 *   created <wall ns>
 *   member <txn id> committed|rolled-back      (one per run, in run order)
 */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "history.h"
#include "history_int.h"
#include "base/fs.h"

static const char *const state_names[] = {
	[TG_TX_OPEN] = "open",
	[TG_TX_COMMITTED] = "committed",
	[TG_TX_ROLLED_BACK] = "rolled-back",
	[TG_TX_ABORTED] = "aborted",
};

const char *tg_tx_state_name(enum tg_tx_state s)
{
	return (size_t)s < TG_ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

static int tx_state_from_name(const char *s, enum tg_tx_state *out)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(state_names); i++)
		if (strcmp(s, state_names[i]) == 0) {
			*out = (enum tg_tx_state)i;
			return 0;
		}
	return -EINVAL;
}

void tg_tx_info_clear(struct tg_tx_info *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nmembers; i++)
		free(t->members[i].txn_id);
	free(t->members);
	free(t->id);
	memset(t, 0, sizeof(*t));
}

/* Ids become file names: keep them to a safe alphabet. */
static bool tx_id_valid(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > 64 || id[0] == '.')
		return false;
	return strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

static int tx_dir(const char *workspace, const char *state_dir, bool create, char **out)
{
	_cleanup_free_ char *root = NULL;
	int rc = tg_history_state_root(workspace, state_dir, &root);
	if (rc < 0)
		return rc;
	_cleanup_free_ char *dir = tg_asprintf("%s/tx", root);
	if (!dir)
		return -ENOMEM;
	/* begin may come before any run: the state dir may not exist yet */
	if (create && (rc = tg_fs_mkdir_p(dir)) < 0)
		return rc;
	*out = steal_pointer(&dir);
	return 0;
}

/* The exclusive lock on the tx directory; *fd is closed by the caller. */
static int tx_lock(const char *dir, int *fd)
{
	_cleanup_free_ char *p = tg_asprintf("%s/.lock", dir);
	if (!p)
		return -ENOMEM;
	_cleanup_close_ int l = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (l < 0)
		return -errno;
	while (flock(l, LOCK_EX) < 0)
		if (errno != EINTR)
			return -errno;
	*fd = steal_fd(&l);
	return 0;
}

static int parse_line(struct tg_tx_info *t, char *line)
{
	char *val = strchr(line, ' ');
	if (!val)
		return -EINVAL;
	*val++ = '\0';
	if (strcmp(line, "txguard-tx") == 0)
		return strcmp(val, "1") == 0 ? 0 : -EPROTO;
	if (strcmp(line, "id") == 0)
		return (t->id = tg_strdup(val)) ? 0 : -ENOMEM;
	if (strcmp(line, "state") == 0)
		return tx_state_from_name(val, &t->state);
	if (strcmp(line, "created") == 0) {
		t->created_wall_ns = strtoull(val, NULL, 10);
		return 0;
	}
	if (strcmp(line, "member") != 0)
		return -EINVAL;
	char *how = strchr(val, ' ');
	if (!how)
		return -EINVAL;
	*how++ = '\0';
	struct tg_tx_member *m = realloc(t->members, (t->nmembers + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	t->members = m;
	m[t->nmembers].rolled_back = strcmp(how, "rolled-back") == 0;
	if (!(m[t->nmembers].txn_id = tg_strdup(val)))
		return -ENOMEM;
	t->nmembers++;
	return 0;
}

static int tx_read(const char *dir, const char *id, struct tg_tx_info *out)
{
	if (!tx_id_valid(id))
		return -ENOENT;
	_cleanup_free_ char *p = tg_asprintf("%s/%s", dir, id);
	if (!p)
		return -ENOMEM;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int rc = tg_read_file(p, &buf, &len, 1 << 20);
	if (rc < 0)
		return rc;
	struct tg_tx_info t = { 0 };
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		rc = parse_line(&t, line);
		if (rc < 0) {
			tg_tx_info_clear(&t);
			return rc;
		}
	}
	if (!t.id) {
		tg_tx_info_clear(&t);
		return -EINVAL;
	}
	*out = t;
	return 0;
}

static int tx_format(const struct tg_tx_info *t, char **out)
{
	size_t sz = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &sz);
	if (!f)
		return -ENOMEM;
	fprintf(f, "txguard-tx 1\nid %s\nstate %s\ncreated %llu\n", t->id,
	        tg_tx_state_name(t->state), (unsigned long long)t->created_wall_ns);
	for (size_t i = 0; i < t->nmembers; i++)
		fprintf(f, "member %s %s\n", t->members[i].txn_id,
		        t->members[i].rolled_back ? "rolled-back" : "committed");
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

/* Atomic replace: a crash leaves the old record or the new one, never half. */
static int tx_write(const char *dir, const struct tg_tx_info *t)
{
	_cleanup_free_ char *text = NULL;
	int rc = tx_format(t, &text);
	if (rc < 0)
		return rc;
	_cleanup_free_ char *tmp = tg_asprintf("%s/.%s.tmp", dir, t->id);
	_cleanup_free_ char *dst = tg_asprintf("%s/%s", dir, t->id);
	if (!tmp || !dst)
		return -ENOMEM;
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = tg_write_all(fd, text, strlen(text));
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, dst) < 0)
		rc = -errno;
	if (rc < 0) {
		unlink(tmp);
		return rc;
	}
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		fsync(dfd);
	return 0;
}

static int fresh_id(char **out)
{
	uint32_t r = 0;
	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint32_t)(tg_wall_ns() ^ (uint64_t)getpid());
	*out = tg_asprintf("tx-%08x", r);
	return *out ? 0 : -ENOMEM;
}

int tg_history_tx_begin(const char *workspace, const char *state_dir, const char *name,
                        char **out_id)
{
	if (name && !tx_id_valid(name))
		return -EINVAL;
	_cleanup_free_ char *dir = NULL;
	int rc = tx_dir(workspace, state_dir, true, &dir);
	if (rc < 0)
		return rc;
	_cleanup_close_ int lock = -1;
	if ((rc = tx_lock(dir, &lock)) < 0)
		return rc;
	struct tg_tx_info t = { .state = TG_TX_OPEN, .created_wall_ns = tg_wall_ns() };
	rc = name ? ((t.id = tg_strdup(name)) ? 0 : -ENOMEM) : fresh_id(&t.id);
	if (rc < 0)
		return rc;
	_cleanup_free_ char *p = tg_asprintf("%s/%s", dir, t.id);
	if (!p)
		rc = -ENOMEM;
	else if (access(p, F_OK) == 0)
		rc = -EEXIST;
	else
		rc = tx_write(dir, &t);
	if (rc == 0)
		*out_id = steal_pointer(&t.id);
	tg_tx_info_clear(&t);
	return rc;
}

int tg_history_tx_load(const char *workspace, const char *state_dir, const char *tx_id,
                       struct tg_tx_info *out)
{
	_cleanup_free_ char *dir = NULL;
	int rc = tx_dir(workspace, state_dir, false, &dir);
	if (rc < 0)
		return rc;
	return tx_read(dir, tx_id, out);
}

int tg_history_tx_check(const char *workspace, const char *state_dir, const char *tx_id)
{
	struct tg_tx_info t = { 0 };
	int rc = tg_history_tx_load(workspace, state_dir, tx_id, &t);
	if (rc == 0 && t.state != TG_TX_OPEN)
		rc = -ESTALE;
	tg_tx_info_clear(&t);
	return rc;
}

/* Members still to undo: committed ones not undone yet, newest first. */
static int members_to_undo(const struct tg_tx_info *t, char ***out)
{
	_cleanup_strv_ char **v = calloc(1, sizeof(char *));
	if (!v)
		return -ENOMEM;
	for (size_t i = t->nmembers; i-- > 0;)
		if (!t->members[i].rolled_back && tg_strv_push(&v, t->members[i].txn_id) < 0)
			return -ENOMEM;
	*out = steal_pointer(&v);
	return 0;
}

/* Undo every committed member and set the final state. Called with the tx
 * lock held; on a refusal the transaction stays open. */
static int tx_undo_all(const char *workspace, const char *state_dir, const char *dir,
                       struct tg_tx_info *t, enum tg_tx_state final, bool force,
                       struct tg_undo_result *r)
{
	_cleanup_strv_ char **ids = NULL;
	int rc = members_to_undo(t, &ids);
	if (rc < 0)
		return rc;
	rc = tg_history_undo_set(workspace, state_dir, (const char *const *)ids, force, r);
	if (rc < 0)
		return rc;
	t->state = final;
	return tx_write(dir, t);
}

/* Load the open transaction under the lock; -ESTALE when not open. */
static int tx_open_locked(const char *workspace, const char *state_dir, const char *tx_id,
                          char **dir, int *lock, struct tg_tx_info *t)
{
	int rc = tx_dir(workspace, state_dir, false, dir);
	if (rc < 0)
		return rc;
	if (access(*dir, F_OK) < 0)
		return -ENOENT;
	if ((rc = tx_lock(*dir, lock)) < 0)
		return rc;
	if ((rc = tx_read(*dir, tx_id, t)) < 0)
		return rc;
	return t->state == TG_TX_OPEN ? 0 : -ESTALE;
}

int tg_history_tx_record(const char *workspace, const char *state_dir, const char *tx_id,
                         const char *txn_id, bool rolled_back, bool abandon_all)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int lock = -1;
	struct tg_tx_info t = { 0 };
	int rc = tx_open_locked(workspace, state_dir, tx_id, &dir, &lock, &t);
	if (rc == 0 && txn_id) {
		struct tg_tx_member *m = realloc(t.members, (t.nmembers + 1) * sizeof(*m));
		if (!m)
			rc = -ENOMEM;
		else {
			t.members = m;
			m[t.nmembers].rolled_back = rolled_back;
			m[t.nmembers].txn_id = tg_strdup(txn_id);
			rc = m[t.nmembers].txn_id ? 0 : -ENOMEM;
			if (rc == 0)
				t.nmembers++;
		}
	}
	if (rc == 0)
		rc = tx_write(dir, &t);
	if (rc == 0 && abandon_all) {
		struct tg_undo_result r = { 0 };
		rc = tx_undo_all(workspace, state_dir, dir, &t, TG_TX_ABORTED, false, &r);
		tg_undo_result_clear(&r);
		if (rc == -ESTALE)
			rc = -EEXIST; /* a conflict, not a closed transaction */
	}
	tg_tx_info_clear(&t);
	return rc;
}

int tg_history_tx_commit(const char *workspace, const char *state_dir, const char *tx_id)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int lock = -1;
	struct tg_tx_info t = { 0 };
	int rc = tx_open_locked(workspace, state_dir, tx_id, &dir, &lock, &t);
	if (rc == 0) {
		t.state = TG_TX_COMMITTED;
		rc = tx_write(dir, &t);
	}
	tg_tx_info_clear(&t);
	return rc;
}

int tg_history_tx_rollback(const char *workspace, const char *state_dir, const char *tx_id,
                           bool force, struct tg_undo_result *r)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int lock = -1;
	struct tg_tx_info t = { 0 };
	int rc = tx_open_locked(workspace, state_dir, tx_id, &dir, &lock, &t);
	if (rc == 0)
		rc = tx_undo_all(workspace, state_dir, dir, &t, TG_TX_ROLLED_BACK, force, r);
	tg_tx_info_clear(&t);
	return rc;
}

/* txn id -> tx id, for the log: every member of every transaction. */
int tg_history_tx_map(const char *workspace, const char *state_dir, char ***pairs)
{
	_cleanup_free_ char *dir = NULL;
	int rc = tx_dir(workspace, state_dir, false, &dir);
	if (rc < 0)
		return rc;
	_cleanup_strv_ char **v = calloc(1, sizeof(char *));
	if (!v)
		return -ENOMEM;
	DIR *d = opendir(dir);
	if (!d) {
		*pairs = steal_pointer(&v);
		return 0;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		struct tg_tx_info t = { 0 };
		if (de->d_name[0] == '.' || tx_read(dir, de->d_name, &t) < 0)
			continue;
		for (size_t i = 0; i < t.nmembers && rc == 0; i++)
			if (tg_strv_push(&v, t.members[i].txn_id) < 0 || tg_strv_push(&v, t.id) < 0)
				rc = -ENOMEM;
		tg_tx_info_clear(&t);
	}
	closedir(d);
	if (rc == 0)
		*pairs = steal_pointer(&v);
	return rc;
}
