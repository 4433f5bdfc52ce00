/* status.c — `txguard status`: what is open on the workspace.
 *
 * The workspace and how it was chosen, its open multi-command transactions
 * (begin without commit or rollback yet), and any run whose journal is still
 * open: "running" while a txguard holds the workspace lock, else
 * "interrupted" (a crashed txguard; `txguard recover`, or the next run,
 * restores it). Read-only: it never recovers anything itself.
 */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>

#include "cli.h"
#include "history/history.h"
#include "base/json.h"

struct status {
	char *workspace;
	enum tg_ws_source src;
	char *state_dir;
	struct tg_tx_info *tx;           /* open transactions */
	size_t ntx;
	struct tg_txinfo *runs;          /* journals still open */
	size_t nruns;
	bool running;                    /* a txguard holds the lock now */
};

/* Whether a txguard holds the workspace lock (txn.c take_lock). */
static bool lock_held(const char *state_dir)
{
	_cleanup_free_ char *p = tg_asprintf("%s/lock", state_dir);
	_cleanup_close_ int fd = p ? open(p, O_RDWR | O_CLOEXEC) : -1;
	if (fd < 0)
		return false;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK;
	flock(fd, LOCK_UN);
	return false;
}

static int load_tx(struct status *s)
{
	_cleanup_free_ char *dir = tg_asprintf("%s/tx", s->state_dir);
	if (!dir)
		return -ENOMEM;
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d))) {
		struct tg_tx_info t = { 0 };
		if (de->d_name[0] == '.' ||
		    tg_history_tx_load(s->workspace, s->state_dir, de->d_name, &t) < 0)
			continue;
		if (t.state != TG_TX_OPEN) {
			tg_tx_info_clear(&t);
			continue;
		}
		struct tg_tx_info *v = realloc(s->tx, (s->ntx + 1) * sizeof(*v));
		if (!v) {
			tg_tx_info_clear(&t);
			rc = -ENOMEM;
			break;
		}
		s->tx = v;
		s->tx[s->ntx++] = t;
	}
	closedir(d);
	return rc;
}

static int load_runs(struct status *s)
{
	struct tg_txinfo *v = NULL;
	size_t n = 0;
	int rc = tg_run_list(s->state_dir, &v, &n);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (v[i].state != TG_JSTATE_OPEN && v[i].state != TG_JSTATE_ROLLING_BACK)
			continue;
		struct tg_txinfo *r = realloc(s->runs, (s->nruns + 1) * sizeof(*r));
		if (!r) {
			tg_txinfo_free_all(v, n);
			return -ENOMEM;
		}
		s->runs = r;
		s->runs[s->nruns++] = v[i];
		memset(&v[i], 0, sizeof(v[i]));
	}
	tg_txinfo_free_all(v, n);
	s->running = s->nruns > 0 && lock_held(s->state_dir);
	return 0;
}

static void status_clear(struct status *s)
{
	for (size_t i = 0; i < s->ntx; i++)
		tg_tx_info_clear(&s->tx[i]);
	free(s->tx);
	tg_txinfo_free_all(s->runs, s->nruns);
	free(s->workspace);
	free(s->state_dir);
}

static void fmt_time(char buf[static 32], uint64_t ns)
{
	if (ns)
		tg_rfc3339(buf, ns);
	else
		strcpy(buf, "-");
}

static const char *run_state(const struct status *s)
{
	return s->running ? "running" : "interrupted";
}

static int print_json(const struct status *s)
{
	struct tg_json *j = tg_json_new_file(stdout);
	if (!j)
		return tg_fail("out of memory");
	char t[32];
	tg_json_begin_object(j);
	tg_json_kv_str(j, "workspace", s->workspace);
	tg_json_kv_str(j, "workspace_source", tg_ws_source_name(s->src));
	tg_json_kv_str(j, "state_dir", s->state_dir);
	tg_json_key(j, "transactions");
	tg_json_begin_array(j);
	for (size_t i = 0; i < s->ntx; i++) {
		tg_json_begin_object(j);
		tg_json_kv_str(j, "id", s->tx[i].id);
		fmt_time(t, s->tx[i].created_wall_ns);
		tg_json_kv_str(j, "created", t);
		tg_json_kv_uint(j, "members", s->tx[i].nmembers);
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
	tg_json_key(j, "runs");
	tg_json_begin_array(j);
	for (size_t i = 0; i < s->nruns; i++) {
		tg_json_begin_object(j);
		tg_json_kv_str(j, "id", s->runs[i].id);
		tg_json_kv_str(j, "command", s->runs[i].command);
		fmt_time(t, s->runs[i].started_ns);
		tg_json_kv_str(j, "time", t);
		tg_json_kv_str(j, "state", run_state(s));
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
	tg_json_end_object(j);
	return tg_json_done(j, "the status");
}

static void print_text(const struct status *s)
{
	char t[32];
	printf("workspace: %s (%s)\n", s->workspace, tg_ws_source_name(s->src));
	printf("state dir: %s\n", s->state_dir);
	if (s->ntx == 0)
		printf("open transactions: none\n");
	for (size_t i = 0; i < s->ntx; i++) {
		fmt_time(t, s->tx[i].created_wall_ns);
		printf("open transaction %s: begun %s, %zu run(s); end it with 'txguard commit %s' "
		       "or 'txguard rollback %s'\n", s->tx[i].id, t, s->tx[i].nmembers, s->tx[i].id,
		       s->tx[i].id);
	}
	for (size_t i = 0; i < s->nruns; i++) {
		fmt_time(t, s->runs[i].started_ns);
		printf("%s run %s: started %s: %s%s\n", run_state(s), s->runs[i].id, t,
		       s->runs[i].command ? s->runs[i].command : "?",
		       s->running ? "" : " (restore it with 'txguard recover')");
	}
	if (s->nruns == 0)
		printf("runs in progress or interrupted: none\n");
}

int tg_cmd_status(struct tg_opts *o)
{
	struct status s = { 0 };
	int rc = tg_workspace_resolve(o, &s.workspace, &s.src);
	if (rc < 0)
		return tg_fail("workspace %s: %s", o->workspace ? o->workspace : ".", strerror(-rc));
	const char *sd = o->state_dir;
	rc = tg_history_state_root(s.workspace, sd && *sd ? sd : NULL, &s.state_dir);
	if (rc == 0)
		rc = load_tx(&s);
	if (rc == 0)
		rc = load_runs(&s);
	if (rc < 0) {
		rc = tg_fail("cannot read the state of %s: %s", s.workspace, strerror(-rc));
	} else if (o->json) {
		rc = print_json(&s);
	} else {
		print_text(&s);
		rc = 0;
	}
	status_clear(&s);
	return rc;
}
