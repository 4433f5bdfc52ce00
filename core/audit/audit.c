/* audit.c — the event log, the report and the human lines (see audit.h). */
#include "audit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "config.h"
#include "base/json.h"
#include "base/util.h"

/* ------------------------------------------------------------------ */
/* Names                                                               */

static const char *const level_names[] = {
	[TG_LOG_DECISIONS] = "decisions",
	[TG_LOG_EXEC] = "exec",
	[TG_LOG_ALL] = "all",
};

int tg_log_level_from_name(const char *name, enum tg_log_level *out)
{
	for (size_t i = 0; name && i < TG_ARRAY_SIZE(level_names); i++) {
		if (strcmp(name, level_names[i]) == 0) {
			*out = (enum tg_log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *tg_log_level_name(enum tg_log_level level)
{
	if ((size_t)level < TG_ARRAY_SIZE(level_names))
		return level_names[level];
	return "unknown";
}

const char *tg_outcome_name(enum tg_outcome o)
{
	static const char *const names[] = {
		[TG_OUTCOME_COMMITTED] = "committed",
		[TG_OUTCOME_ROLLED_BACK] = "rolled_back",
		[TG_OUTCOME_RESTORE_FAILED] = "restore_failed",
		[TG_OUTCOME_SETUP_FAILED] = "setup_failed",
	};
	if ((size_t)o < TG_ARRAY_SIZE(names))
		return names[o];
	return "unknown";
}

const char *tg_run_end_name(enum tg_run_end e)
{
	static const char *const names[] = {
		[TG_END_EXITED] = "exited",
		[TG_END_SIGNALED] = "signaled",
		[TG_END_POLICY_KILL] = "policy_kill",
		[TG_END_TRACER_KILL] = "tracer_kill",
		[TG_END_TIMEOUT] = "timeout",
		[TG_END_INTERRUPTED] = "interrupted",
		[TG_END_EXEC_FAILED] = "exec_failed",
	};
	if ((size_t)e < TG_ARRAY_SIZE(names))
		return names[e];
	return "unknown";
}

const char *tg_signal_name(int sig)
{
	static const char *const names[] = {
		[SIGHUP] = "SIGHUP", [SIGINT] = "SIGINT", [SIGQUIT] = "SIGQUIT",
		[SIGILL] = "SIGILL", [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
		[SIGBUS] = "SIGBUS", [SIGFPE] = "SIGFPE", [SIGKILL] = "SIGKILL",
		[SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
		[SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
		[SIGSTKFLT] = "SIGSTKFLT", [SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT",
		[SIGSTOP] = "SIGSTOP", [SIGTSTP] = "SIGTSTP", [SIGTTIN] = "SIGTTIN",
		[SIGTTOU] = "SIGTTOU", [SIGURG] = "SIGURG", [SIGXCPU] = "SIGXCPU",
		[SIGXFSZ] = "SIGXFSZ", [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",
		[SIGWINCH] = "SIGWINCH", [SIGIO] = "SIGIO", [SIGPWR] = "SIGPWR",
		[SIGSYS] = "SIGSYS",
	};
	static __thread char buf[16];
	if (sig > 0 && (size_t)sig < TG_ARRAY_SIZE(names) && names[sig])
		return names[sig];
	snprintf(buf, sizeof(buf), "SIG%d", sig);
	return buf;
}

const char *tg_sockaddr_format(const struct sockaddr_storage *ss, socklen_t len,
                               char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN];
	if (len < sizeof(sa_family_t)) {
		snprintf(buf, size, "none");
	} else if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(buf, size, "%s:%u", ip, ntohs(in->sin_port));
	} else if (ss->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, size, "[%s]:%u", ip, ntohs(in6->sin6_port));
	} else if (ss->ss_family == AF_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *)ss;
		size_t off = offsetof(struct sockaddr_un, sun_path);
		size_t n = len > off ? (size_t)len - off : 0;
		if (n > sizeof(un->sun_path))
			n = sizeof(un->sun_path);
		if (n == 0) {
			snprintf(buf, size, "unix:");
		} else if (un->sun_path[0] == '\0') {
			/* Abstract names are bytes, not C strings. */
			snprintf(buf, size, "unix:@%.*s", (int)(n - 1), un->sun_path + 1);
		} else {
			snprintf(buf, size, "unix:%.*s", (int)strnlen(un->sun_path, n), un->sun_path);
		}
	} else {
		snprintf(buf, size, "family:%u", (unsigned)ss->ss_family);
	}
	return buf;
}

/* ------------------------------------------------------------------ */
/* JSON pieces shared by the log and the report                        */

static const char *proc_scope_name(enum tg_proc_scope s)
{
	switch (s) {
	case TG_PROC_PGRP:
		return "group";
	case TG_PROC_USER:
		return "user";
	case TG_PROC_ALL:
		return "all";
	case TG_PROC_PID:
		break;
	}
	return "process";
}

/* Whom a process call reached, and who of them is outside the tree. */
static void json_proc(struct tg_json *j, const struct tg_proc_target *t)
{
	tg_json_kv_str(j, "scope", proc_scope_name(t->scope));
	tg_json_kv_int(j, "target_pid", t->pid);
	if (t->sig)
		tg_json_kv_int(j, "signal", t->sig);
	if (!t->nvictims)
		return;
	tg_json_key(j, "outside");
	tg_json_begin_array(j);
	for (size_t i = 0; i < t->nvictims; i++) {
		tg_json_begin_object(j);
		tg_json_kv_int(j, "pid", t->victims[i].pid);
		tg_json_kv_int(j, "uid", t->victims[i].uid);
		tg_json_kv_str(j, "comm", t->victims[i].comm);
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
	if (t->nmore)
		tg_json_kv_uint(j, "outside_more", t->nmore);
}

static void json_op(struct tg_json *j, const struct tg_op *op)
{
	tg_json_kv_int(j, "pid", op->pid);
	tg_json_kv_str(j, "syscall", op->name);
	tg_json_kv_str(j, "op", tg_op_kind_name(op->kind));
	if (op->path)
		tg_json_kv_str(j, "path", op->path);
	if (op->path2)
		tg_json_kv_str(j, "path2", op->path2);
	if (op->target)
		tg_json_kv_str(j, "target", op->target);
	if (op->xattr_name)
		tg_json_kv_str(j, "xattr", op->xattr_name);
	if (op->kind == TG_OP_EXEC && op->argv)
		tg_json_kv_strv(j, "argv", op->argv);
	if ((op->kind == TG_OP_CONNECT || op->kind == TG_OP_SENDTO) && op->addrlen > 0) {
		char a[160];
		tg_json_kv_str(j, "addr", tg_sockaddr_format(&op->addr, op->addrlen, a, sizeof(a)));
	}
	if (op->kind == TG_OP_OPEN || op->kind == TG_OP_RENAME)
		tg_json_kv_int(j, "flags", op->flags);
	if (op->kind == TG_OP_OPEN || op->kind == TG_OP_CHMOD || op->kind == TG_OP_MKDIR ||
	    op->kind == TG_OP_MKNOD)
		tg_json_kv_uint(j, "mode", op->mode);
	if (op->kind == TG_OP_CHOWN) {
		tg_json_kv_int(j, "uid", op->uid);
		tg_json_kv_int(j, "gid", op->gid);
	}
	if (op->kind == TG_OP_PROCESS)
		json_proc(j, &op->proc);
}

static void json_verdict(struct tg_json *j, enum tg_action action, int err, bool enforced,
                         const char *rule, const char *reason, const char *source,
                         const char *decided_by)
{
	tg_json_kv_str(j, "action", tg_action_name(action));
	tg_json_kv_bool(j, "enforced", enforced);
	if (action == TG_ACT_DENY)   /* policy.h: err 0 means the default, EPERM */
		tg_json_kv_str(j, "errno", tg_errno_name(err > 0 ? err : EPERM));
	else
		tg_json_kv_null(j, "errno");
	tg_json_kv_str(j, "rule", rule);
	tg_json_kv_str(j, "reason", reason);
	tg_json_kv_str(j, "source", source);
	/* Only for `ask` rules: who answered (approver, or txguard when it
	 * could not). Absent when the policy decided alone. */
	if (decided_by)
		tg_json_kv_str(j, "decided_by", decided_by);
}

static void json_time(struct tg_json *j, const char *key, uint64_t wall_ns)
{
	if (!wall_ns) {
		tg_json_kv_null(j, key);
		return;
	}
	char t[32];
	tg_rfc3339(t, wall_ns);
	tg_json_kv_str(j, key, t);
}

static void json_counts(struct tg_json *j, const struct tg_changes *c)
{
	tg_json_key(j, "counts");
	tg_json_begin_object(j);
	for (int k = 0; k < TG_CHANGE_KIND_COUNT; k++)
		tg_json_kv_uint(j, tg_change_kind_name((enum tg_change_kind)k), c ? c->count[k] : 0);
	tg_json_end_object(j);
}

static void put_hex_string(struct tg_json *j, const char *p)
{
	size_t n = strlen(p);
	_cleanup_free_ char *h = malloc(2 * n + 1);
	if (!h) {
		tg_json_null(j);
		return;
	}
	for (size_t b = 0; b < n; b++)
		sprintf(h + 2 * b, "%02x", (unsigned char)p[b]);
	h[2 * n] = '\0';
	tg_json_string(j, h);
}

/* "created": [...] and, when a path is not UTF-8, "created_hex": [...],
 * over the first `listed` changes. */
static void json_paths(struct tg_json *j, const struct tg_changes *c, size_t listed,
                       enum tg_change_kind kind)
{
	const char *key = tg_change_kind_name(kind);
	bool any_bad = false;
	tg_json_key(j, key);
	tg_json_begin_array(j);
	for (size_t i = 0; i < listed; i++) {
		if (c->v[i].kind != kind)
			continue;
		tg_json_string(j, c->v[i].path);
		if (c->v[i].path && !tg_utf8_valid(c->v[i].path, strlen(c->v[i].path)))
			any_bad = true;
	}
	tg_json_end_array(j);
	if (!any_bad)
		return;
	_cleanup_free_ char *hkey = tg_asprintf("%s_hex", key);
	tg_json_key(j, hkey ? hkey : "hex");
	tg_json_begin_array(j);
	for (size_t i = 0; i < listed; i++) {
		if (c->v[i].kind != kind)
			continue;
		const char *p = c->v[i].path ? c->v[i].path : "";
		if (tg_utf8_valid(p, strlen(p)))
			tg_json_null(j);
		else
			put_hex_string(j, p);
	}
	tg_json_end_array(j);
}

static void json_changes(struct tg_json *j, const struct tg_changes *c)
{
	tg_json_key(j, "changes");
	if (!c) {
		tg_json_null(j);
		return;
	}
	size_t listed = c->n < TG_REPORT_MAX_PATHS ? c->n : TG_REPORT_MAX_PATHS;
	tg_json_begin_object(j);
	tg_json_kv_uint(j, "total", c->n);
	json_counts(j, c);
	tg_json_kv_uint(j, "bytes_saved", c->bytes_saved);
	tg_json_kv_bool(j, "truncated", listed < c->n);
	json_paths(j, c, listed, TG_CHANGE_CREATED);
	json_paths(j, c, listed, TG_CHANGE_MODIFIED);
	json_paths(j, c, listed, TG_CHANGE_DELETED);
	json_paths(j, c, listed, TG_CHANGE_METADATA);
	tg_json_key(j, "renamed");
	tg_json_begin_array(j);
	for (size_t i = 0; i < listed; i++) {
		if (c->v[i].kind != TG_CHANGE_RENAMED)
			continue;
		tg_json_begin_object(j);
		tg_json_kv_str(j, "from", c->v[i].from);
		tg_json_kv_str(j, "to", c->v[i].path);
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
	tg_json_end_object(j);
}

static uint64_t report_duration_ns(const struct tg_report *r)
{
	if (r->duration_ns)
		return r->duration_ns;
	if (r->end_wall_ns > r->start_wall_ns && r->start_wall_ns)
		return r->end_wall_ns - r->start_wall_ns;
	return 0;
}

/* The command's exit: txguard's status plus either the code or the signal. */
static void json_exit(struct tg_json *j, const struct tg_report *r)
{
	tg_json_key(j, "exit");
	tg_json_begin_object(j);
	tg_json_kv_int(j, "status", r->exit_status);
	if (r->ran && r->run.term_signal > 0) {
		tg_json_kv_null(j, "code");
		tg_json_kv_int(j, "signal", r->run.term_signal);
		tg_json_kv_str(j, "signal_name", tg_signal_name(r->run.term_signal));
	} else if (r->ran) {
		tg_json_kv_int(j, "code", r->run.exit_code);
		tg_json_kv_null(j, "signal");
		tg_json_kv_null(j, "signal_name");
	} else {
		tg_json_kv_null(j, "code");
		tg_json_kv_null(j, "signal");
		tg_json_kv_null(j, "signal_name");
	}
	tg_json_end_object(j);
}

static void json_duration(struct tg_json *j, uint64_t ns)
{
	uint64_t ms = ns / 1000000u;
	tg_json_kv_uint(j, "duration_ms", ms);
	tg_json_kv_double(j, "duration_s", (double)ms / 1000.0);
}

/* ------------------------------------------------------------------ */
/* The event log                                                       */

struct tg_log {
	pthread_mutex_t lock;        /* the proxy's thread logs too (tg_log_connection) */
	struct tg_json *j;
	enum tg_log_level level;
	uint64_t seq;
	char *txid;
};

static void event_begin(struct tg_log *log, const char *name)
{
	pthread_mutex_lock(&log->lock);
	tg_json_begin_object(log->j);
	tg_json_kv_str(log->j, "event", name);
	tg_json_kv_uint(log->j, "seq", log->seq++);
	json_time(log->j, "time", tg_wall_ns());
	if (log->txid)
		tg_json_kv_str(log->j, "tx", log->txid);
}

static int event_end(struct tg_log *log)
{
	tg_json_end_object(log->j);
	int rc = tg_json_newline(log->j);
	pthread_mutex_unlock(&log->lock);
	return rc;
}

struct tg_log *tg_log_open(int fd, enum tg_log_level level)
{
	struct tg_log *log = calloc(1, sizeof(*log));
	if (!log) {
		errno = ENOMEM;
		return NULL;
	}
	log->j = tg_json_new_fd(fd);
	if (!log->j) {
		free(log);
		errno = ENOMEM;
		return NULL;
	}
	log->level = level;
	pthread_mutex_init(&log->lock, NULL);
	event_begin(log, "log_start");
	tg_json_kv_int(log->j, "log_version", TG_LOG_VERSION);
	tg_json_kv_str(log->j, "txguard_version", TG_VERSION);
	tg_json_kv_str(log->j, "level", tg_log_level_name(level));
	event_end(log);
	return log;
}

void tg_log_close(struct tg_log *log)
{
	if (!log)
		return;
	int saved = errno;
	tg_json_free(log->j);
	pthread_mutex_destroy(&log->lock);
	free(log->txid);
	free(log);
	errno = saved;
}

int tg_log_error(const struct tg_log *log)
{
	if (!log)
		return 0;
	return tg_json_error(log->j);
}

int tg_log_set_txid(struct tg_log *log, const char *txid)
{
	if (!log)
		return 0;
	char *copy = NULL;
	if (txid && !(copy = tg_strdup(txid)))
		return -ENOMEM;
	free(log->txid);
	log->txid = copy;
	return 0;
}

int tg_log_decision(struct tg_log *log, const struct tg_op *op, const struct tg_verdict *v,
                    bool enforced)
{
	if (!log)
		return 0;
	if (v->action == TG_ACT_ALLOW && !v->decided_by && log->level < TG_LOG_ALL)
		return 0;
	event_begin(log, "decision");
	json_op(log->j, op);
	json_verdict(log->j, v->action, v->err, enforced, v->rule_id, v->reason, v->source, v->decided_by);
	return event_end(log);
}

int tg_log_spawn(struct tg_log *log, pid_t parent, pid_t child, bool thread)
{
	if (!log)
		return 0;
	if (log->level < TG_LOG_EXEC)
		return 0;
	event_begin(log, "process_start");
	tg_json_kv_int(log->j, "pid", child);
	tg_json_kv_int(log->j, "ppid", parent);
	tg_json_kv_bool(log->j, "thread", thread);
	return event_end(log);
}

int tg_log_exec(struct tg_log *log, pid_t pid, const char *exe, char *const *argv)
{
	if (!log)
		return 0;
	if (log->level < TG_LOG_EXEC)
		return 0;
	event_begin(log, "exec");
	tg_json_kv_int(log->j, "pid", pid);
	tg_json_kv_str(log->j, "exe", exe);
	tg_json_kv_strv(log->j, "argv", argv);
	return event_end(log);
}

int tg_log_exit(struct tg_log *log, pid_t pid, int status)
{
	if (!log)
		return 0;
	if (log->level < TG_LOG_EXEC)
		return 0;
	event_begin(log, "process_exit");
	tg_json_kv_int(log->j, "pid", pid);
	if (WIFSIGNALED(status)) {
		tg_json_kv_null(log->j, "code");
		tg_json_kv_int(log->j, "signal", WTERMSIG(status));
		tg_json_kv_str(log->j, "signal_name", tg_signal_name(WTERMSIG(status)));
		tg_json_kv_bool(log->j, "core_dumped", WCOREDUMP(status));
	} else {
		tg_json_kv_int(log->j, "code", WEXITSTATUS(status));
		tg_json_kv_null(log->j, "signal");
	}
	return event_end(log);
}

int tg_log_kill(struct tg_log *log, pid_t pid, const char *why)
{
	if (!log)
		return 0;
	event_begin(log, "kill");
	tg_json_kv_int(log->j, "pid", pid);
	tg_json_kv_str(log->j, "reason", why);
	return event_end(log);
}

int tg_log_tx_begin(struct tg_log *log, const char *txid, const char *workspace)
{
	if (!log)
		return 0;
	if (txid)
		tg_log_set_txid(log, txid);
	event_begin(log, "tx_begin");
	tg_json_kv_str(log->j, "workspace", workspace);
	return event_end(log);
}

static void tx_counts(struct tg_log *log, const struct tg_changes *c)
{
	tg_json_kv_uint(log->j, "paths", c ? c->n : 0);
	json_counts(log->j, c);
	tg_json_kv_uint(log->j, "bytes_saved", c ? c->bytes_saved : 0);
	tg_json_kv_uint(log->j, "journal_bytes", c ? c->journal_bytes : 0);
}

int tg_log_tx_commit(struct tg_log *log, const struct tg_changes *changes)
{
	if (!log)
		return 0;
	event_begin(log, "tx_commit");
	tx_counts(log, changes);
	return event_end(log);
}

int tg_log_tx_rollback(struct tg_log *log, const struct tg_changes *changes, int err)
{
	if (!log)
		return 0;
	event_begin(log, "tx_rollback");
	tx_counts(log, changes);
	tg_json_kv_bool(log->j, "ok", err == 0);
	if (err) {
		tg_json_kv_str(log->j, "errno", tg_errno_name(-err));
		tg_json_kv_str(log->j, "error", strerror(-err));
	}
	return event_end(log);
}

int tg_log_summary(struct tg_log *log, const struct tg_report *r)
{
	if (!log)
		return 0;
	event_begin(log, "summary");
	tg_json_kv_str(log->j, "outcome", tg_outcome_name(r->outcome));
	tg_json_kv_str(log->j, "end_reason", r->ran ? tg_run_end_name(r->run.end) : NULL);
	json_exit(log->j, r);
	json_duration(log->j, report_duration_ns(r));
	tg_json_kv_uint(log->j, "processes", r->ran ? r->run.nprocs : 0);
	tg_json_kv_uint(log->j, "traps", r->ran ? r->run.ntraps : 0);
	tg_json_kv_uint(log->j, "denied", r->ndenied);
	tg_json_kv_uint(log->j, "killed", r->nkilled);
	tg_json_kv_uint(log->j, "audited", r->naudited);
	tg_json_kv_uint(log->j, "paths", r->changes ? r->changes->n : 0);
	tg_json_kv_str(log->j, "error", r->error);
	return event_end(log);
}

void tg_net_conn_clear(struct tg_net_conn *c)
{
	free(c->host);
	free(c->method);
	free(c->error);
	free(c->sni);
	memset(c, 0, sizeof(*c));
}

static void json_conn(struct tg_json *j, const struct tg_net_conn *c)
{
	tg_json_kv_str(j, "host", c->host);
	tg_json_kv_uint(j, "port", c->port);
	tg_json_kv_str(j, "method", c->method);
	tg_json_kv_str(j, "sni", c->sni);
	json_verdict(j, c->action, EACCES, true, c->rule_id, c->reason, c->source, NULL);
	tg_json_kv_str(j, "entry", c->entry);
	tg_json_kv_str(j, "error", c->error);
	tg_json_kv_uint(j, "bytes_up", c->bytes_up);
	tg_json_kv_uint(j, "bytes_down", c->bytes_down);
}

int tg_log_connection(struct tg_log *log, const struct tg_net_conn *c)
{
	if (!log)
		return 0;
	event_begin(log, "connection");
	json_time(log->j, "started", c->wall_ns);
	json_conn(log->j, c);
	return event_end(log);
}

/* ------------------------------------------------------------------ */
/* The report                                                          */

static int op_copy(struct tg_op *dst, const struct tg_op *src)
{
	*dst = *src;
	dst->path = dst->path2 = dst->target = dst->xattr_name = NULL;
	dst->argv = NULL;
	dst->via = NULL; /* the decision's names are path and path2 */
	if ((src->path && !(dst->path = tg_strdup(src->path))) ||
	    (src->path2 && !(dst->path2 = tg_strdup(src->path2))) ||
	    (src->target && !(dst->target = tg_strdup(src->target))) ||
	    (src->xattr_name && !(dst->xattr_name = tg_strdup(src->xattr_name))) ||
	    (src->argv && !(dst->argv = tg_strv_pack(src->argv, tg_strv_len(src->argv))))) {
		tg_op_clear(dst);
		return -ENOMEM;
	}
	return 0;
}

static int dup_opt(char **dst, const char *src)
{
	*dst = NULL;
	if (src && !(*dst = tg_strdup(src)))
		return -ENOMEM;
	return 0;
}

static void decision_clear(struct tg_report_decision *d)
{
	tg_op_clear(&d->op);
	free(d->rule_id);
	free(d->reason);
	free(d->source);
	memset(d, 0, sizeof(*d));
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

static bool argv_eq(char *const *a, char *const *b)
{
	size_t i = 0;
	for (; a && b && a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return (!a || !a[i]) && (!b || !b[i]);
}

/* The same intent as d: one decision with a count, not one per try. */
static bool same_intent(const struct tg_report_decision *d, const struct tg_op *op,
                        const struct tg_verdict *v, bool enforced)
{
	const struct tg_op *o = &d->op;
	if (o->pid != op->pid || o->kind != op->kind || d->action != v->action ||
	    d->enforced != enforced || !str_eq(d->rule_id, v->rule_id) ||
	    (op->kind != TG_OP_EXEC && !str_eq(d->decided_by, v->decided_by)))
		return false;
	/* execvp tries each $PATH entry: the missing ones fail ENOENT, the
	 * one that exists with the rule's errno; all one intent. */
	if (v->action == TG_ACT_DENY && d->err != v->err && op->kind != TG_OP_EXEC)
		return false;
	if (op->kind == TG_OP_EXEC)
		return argv_eq(o->argv, op->argv) && str_eq(base_name(o->path), base_name(op->path));
	if (op->kind == TG_OP_CONNECT || op->kind == TG_OP_SENDTO)
		return o->addrlen == op->addrlen && memcmp(&o->addr, &op->addr, op->addrlen) == 0;
	return o->nr == op->nr && str_eq(o->path, op->path) && str_eq(o->path2, op->path2);
}

int tg_report_add_decision(struct tg_report *r, const struct tg_op *op,
                           const struct tg_verdict *v, bool enforced)
{
	/* An allow is a decision only when someone was asked for it. */
	if (v->action == TG_ACT_ALLOW && !v->decided_by)
		return 0;
	if (r->ndecisions && same_intent(&r->decisions[r->ndecisions - 1], op, v, enforced)) {
		struct tg_report_decision *d = &r->decisions[r->ndecisions - 1];
		d->count++;
		if (d->err == ENOENT && v->action == TG_ACT_DENY && v->err != ENOENT) {
			/* The program was found: that try is the one to show
			 * (and, for an `ask` rule, the one the approver saw). */
			char *p = op->path ? tg_strdup(op->path) : NULL;
			char *why = v->reason ? tg_strdup(v->reason) : NULL;
			if ((op->path && !p) || (v->reason && !why)) {
				free(p);
				free(why);
				return -ENOMEM;
			}
			free(d->op.path);
			d->op.path = p;
			free(d->reason);
			d->reason = why;
			d->err = v->err;
			d->decided_by = v->decided_by;
			return 2;
		}
		return 1;
	}
	switch (v->action) {
	case TG_ACT_ALLOW: break;   /* an approver's allow: counted nowhere */
	case TG_ACT_AUDIT: r->naudited++; break;
	case TG_ACT_ASK: break;   /* resolved before it gets here */
	case TG_ACT_DENY: r->ndenied++; break;
	case TG_ACT_KILL: r->nkilled++; break;
	}
	if (r->ndecisions >= TG_REPORT_MAX_DECISIONS) {
		r->decisions_dropped++;
		return 0;
	}
	/* Grow by doubling; the cap above bounds it. */
	if ((r->ndecisions & (r->ndecisions - 1)) == 0) {
		size_t cap = r->ndecisions ? 2 * r->ndecisions : 1;
		void *nv = realloc(r->decisions, cap * sizeof(*r->decisions));
		if (!nv)
			return -ENOMEM;
		r->decisions = nv;
	}
	struct tg_report_decision *d = &r->decisions[r->ndecisions];
	memset(d, 0, sizeof(*d));
	d->wall_ns = tg_wall_ns();
	d->action = v->action;
	d->err = v->action == TG_ACT_DENY ? v->err : 0;
	d->enforced = enforced;
	d->count = 1;
	d->decided_by = v->decided_by;
	if (op_copy(&d->op, op) < 0 || dup_opt(&d->rule_id, v->rule_id) < 0 ||
	    dup_opt(&d->reason, v->reason) < 0 || dup_opt(&d->source, v->source) < 0) {
		decision_clear(d);
		return -ENOMEM;
	}
	r->ndecisions++;
	return 0;
}

int tg_report_add_conn(struct tg_report *r, const struct tg_net_conn *c)
{
	if (c->action == TG_ACT_DENY)
		r->ndenied++;
	if (r->nconns >= TG_REPORT_MAX_DECISIONS) {
		r->conns_dropped++;
		return 0;
	}
	if ((r->nconns & (r->nconns - 1)) == 0) {
		size_t cap = r->nconns ? 2 * r->nconns : 1;
		void *nv = realloc(r->conns, cap * sizeof(*r->conns));
		if (!nv)
			return -ENOMEM;
		r->conns = nv;
	}
	struct tg_net_conn *d = &r->conns[r->nconns];
	*d = *c;
	d->host = d->method = d->error = d->sni = NULL;
	if (dup_opt(&d->host, c->host) < 0 || dup_opt(&d->method, c->method) < 0 ||
	    dup_opt(&d->error, c->error) < 0 || dup_opt(&d->sni, c->sni) < 0) {
		tg_net_conn_clear(d);
		return -ENOMEM;
	}
	r->nconns++;
	return 0;
}

void tg_report_clear(struct tg_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nconns; i++)
		tg_net_conn_clear(&r->conns[i]);
	free(r->conns);
	for (size_t i = 0; i < r->ndecisions; i++)
		decision_clear(&r->decisions[i]);
	free(r->decisions);
	memset(r, 0, sizeof(*r));
}

static void json_decisions(struct tg_json *j, const struct tg_report *r)
{
	tg_json_key(j, "decisions");
	tg_json_begin_array(j);
	for (size_t i = 0; i < r->ndecisions; i++) {
		const struct tg_report_decision *d = &r->decisions[i];
		tg_json_begin_object(j);
		json_time(j, "time", d->wall_ns);
		json_op(j, &d->op);
		json_verdict(j, d->action, d->err, d->enforced, d->rule_id, d->reason, d->source,
		             d->decided_by);
		tg_json_kv_uint(j, "count", d->count);
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
	tg_json_kv_uint(j, "decisions_dropped", r->decisions_dropped);
	tg_json_key(j, "decision_counts");
	tg_json_begin_object(j);
	tg_json_kv_uint(j, "denied", r->ndenied);
	tg_json_kv_uint(j, "killed", r->nkilled);
	tg_json_kv_uint(j, "audited", r->naudited);
	tg_json_end_object(j);
}

/* Only when the proxy ran, so reports of runs without host rules keep
 * their shape. */
static void json_conns(struct tg_json *j, const struct tg_report *r)
{
	if (!r->proxy)
		return;
	tg_json_key(j, "connections");
	tg_json_begin_array(j);
	for (size_t i = 0; i < r->nconns; i++) {
		tg_json_begin_object(j);
		json_time(j, "started", r->conns[i].wall_ns);
		json_conn(j, &r->conns[i]);
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
	tg_json_kv_uint(j, "connections_dropped", r->conns_dropped);
}

static void json_unobserved(struct tg_json *j, const struct tg_report *r)
{
	tg_json_key(j, "unobserved");
	tg_json_begin_array(j);
	for (size_t i = 0; r->unobserved && i < r->nunobserved; i++) {
		const struct tg_unobserved *u = &r->unobserved[i];
		tg_json_begin_object(j);
		tg_json_kv_str(j, "rule", u->rule_id);
		tg_json_kv_str(j, "enforced_by", u->enforced_by);
		tg_json_key(j, "operations");
		tg_json_begin_array(j);
		for (const char *p = u->ops; p && *p;) {
			size_t n = strcspn(p, " ");
			_cleanup_free_ char *w = tg_strndup(p, n);
			tg_json_string(j, w ? w : "");
			p += n + (p[n] == ' ');
		}
		tg_json_end_array(j);
		tg_json_key(j, "paths");
		tg_json_begin_array(j);
		for (size_t k = 0; k < u->npaths; k++)
			tg_json_string(j, u->paths[k]);
		tg_json_end_array(j);
		tg_json_kv_str(j, "why", u->why);
		tg_json_end_object(j);
	}
	tg_json_end_array(j);
}

static void json_policy_files(struct tg_json *j, const struct tg_report *r)
{
	tg_json_key(j, "policy_files");
	tg_json_begin_array(j);
	for (size_t i = 0; r->policy_files && i < r->npolicy_files; i++)
		tg_json_string(j, r->policy_files[i]);
	tg_json_end_array(j);
}

int tg_report_write(int fd, const struct tg_report *r)
{
	struct tg_json *j = tg_json_new_fd(fd);
	if (!j)
		return -ENOMEM;
	tg_json_begin_object(j);
	tg_json_kv_int(j, "report_version", TG_REPORT_VERSION);
	tg_json_kv_str(j, "txguard_version", TG_VERSION);
	tg_json_kv_strv(j, "command", r->argv);
	tg_json_kv_str(j, "workspace", r->workspace);
	tg_json_kv_str(j, "transaction_id", r->txid);
	json_time(j, "start", r->start_wall_ns);
	json_time(j, "end", r->end_wall_ns);
	json_duration(j, report_duration_ns(r));
	tg_json_kv_str(j, "outcome", tg_outcome_name(r->outcome));
	tg_json_kv_str(j, "end_reason", r->ran ? tg_run_end_name(r->run.end) : NULL);
	json_exit(j, r);
	tg_json_kv_str(j, "error", r->error);
	tg_json_kv_str(j, "kill_reason", r->kill_reason);
	tg_json_kv_bool(j, "audit_only", r->audit_only);
	tg_json_kv_str(j, "rollback_on", r->rollback_on);
	json_policy_files(j, r);
	tg_json_kv_uint(j, "processes", r->ran ? r->run.nprocs : 0);
	tg_json_kv_uint(j, "traps", r->ran ? r->run.ntraps : 0);
	json_decisions(j, r);
	json_conns(j, r);
	json_unobserved(j, r);
	json_changes(j, r->changes);
	tg_json_kv_uint(j, "journal_bytes", r->changes ? r->changes->journal_bytes : 0);
	tg_json_kv_str(j, "workspace_source", r->workspace_source);
	tg_json_end_object(j);
	int ret = tg_json_newline(j);
	tg_json_free(j);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Text for people                                                     */

/* Put s on f with every control byte, DEL and byte of an ill-formed UTF-8
 * sequence as \xNN: names come from the tracee and must not reach a
 * terminal raw. At most max bytes of s are shown, then "...". */
static void put_safe(FILE *f, const char *s, size_t max)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		if (i >= max) {
			fputs("...", f);
			return;
		}
		unsigned char c = (unsigned char)s[i];
		size_t k = 1;
		if (c >= 0x80) {
			for (k = 2; k <= 4 && i + k <= n; k++)
				if (tg_utf8_valid(s + i, k))
					break;
			if (k > 4 || i + k > n)
				k = 0;
			/* C1 controls (U+0080..U+009F) are terminal controls too. */
			if (k == 2 && c == 0xC2 && (unsigned char)s[i + 1] < 0xA0)
				k = 0;
		}
		if (k > 1) {
			fwrite(s + i, 1, k, f);
			i += k;
		} else if (k == 0 || c < 0x20 || c == 0x7f) {
			fprintf(f, "\\x%02x", c);
			i++;
		} else {
			fputc(c, f);
			i++;
		}
	}
}

/* Shell-ish quoting so that `rm -rf 'my dir'` reads back as typed. */
static void put_arg(FILE *f, const char *a, size_t max)
{
	bool plain = *a != '\0';
	for (const char *p = a; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+@%^-", *p))
			plain = false;
	if (plain) {
		put_safe(f, a, max);
		return;
	}
	fputc('\'', f);
	put_safe(f, a, max);
	fputc('\'', f);
}

#define TG_LINE_ARGV_MAX 200

static void put_argv(FILE *f, char *const *argv)
{
	long room = TG_LINE_ARGV_MAX;
	for (size_t i = 0; argv[i]; i++) {
		if (room <= 0) {
			fputs(" ...", f);
			return;
		}
		if (i)
			fputc(' ', f);
		put_arg(f, argv[i], (size_t)room);
		room -= (long)strlen(argv[i]) + 1;
	}
}

/* "kill(SIGKILL) of process 1234 (node, uid 1000)". */
static void put_proc(FILE *f, const struct tg_op *op)
{
	const struct tg_proc_target *t = &op->proc;
	fprintf(f, "%s(", op->name ? op->name : "syscall");
	if (t->sig > 0 && t->sig < NSIG && sigabbrev_np(t->sig))
		fprintf(f, "SIG%s", sigabbrev_np(t->sig));
	else if (t->sig)
		fprintf(f, "%d", t->sig);
	fputc(')', f);
	if (t->scope == TG_PROC_ALL) {
		fputs(" of every process", f);
		return;
	}
	fprintf(f, " of %s %d", proc_scope_name(t->scope), (int)t->pid);
	if (t->nvictims) {
		fputs(t->scope == TG_PROC_PID ? " (" : " (outside: ", f);
		for (size_t i = 0; i < t->nvictims; i++) {
			if (i)
				fputs(", ", f);
			if (t->scope != TG_PROC_PID)
				fprintf(f, "%d ", (int)t->victims[i].pid);
			put_safe(f, t->victims[i].comm[0] ? t->victims[i].comm : "?", 16);
			if (t->victims[i].uid >= 0)
				fprintf(f, " uid %ld", t->victims[i].uid);
		}
		if (t->nmore)
			fprintf(f, ", %zu more", t->nmore);
		fputc(')', f);
	}
}

static void put_what(FILE *f, const struct tg_op *op)
{
	const char *kind = tg_op_kind_name(op->kind);
	char a[160];
	switch (op->kind) {
	case TG_OP_EXEC:
		fputs("exec `", f);
		if (op->argv && op->argv[0])
			put_argv(f, op->argv);
		else if (op->path)
			put_safe(f, op->path, TG_LINE_ARGV_MAX);
		fputc('`', f);
		return;
	case TG_OP_OPEN:
		/* A read-only open is judged where a kernel mark sees it (a
		 * secret under fanotify): say what it was. */
		fputs(op->writes || (op->flags & (O_ACCMODE | O_CREAT | O_TRUNC)) ? "write to " : "read of ", f);
		break;
	case TG_OP_CONNECT:
	case TG_OP_SENDTO:
		fprintf(f, "%s to %s", kind,
		        op->addrlen ? tg_sockaddr_format(&op->addr, op->addrlen, a, sizeof(a)) : "?");
		return;
	case TG_OP_SYSCALL:
	case TG_OP_NONE:
		fprintf(f, "%s()", op->name ? op->name : "syscall");
		return;
	case TG_OP_PROCESS:
		put_proc(f, op);
		return;
	default:
		fprintf(f, "%s ", kind);
		break;
	}
	put_safe(f, op->path ? op->path : "?", 4096);
	const char *second = op->kind == TG_OP_SYMLINK ? op->target : op->path2;
	if (second) {
		fputs(" -> ", f);
		put_safe(f, second, 4096);
	}
}

static char *memstream_done(FILE *f, char **buf)
{
	if (fclose(f) != 0) {
		free(*buf);
		errno = ENOMEM;
		return NULL;
	}
	return *buf;
}

char *tg_audit_denial_line(const struct tg_op *op, const struct tg_verdict *v, bool enforced)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	const char *verb;
	if (v->action == TG_ACT_KILL)
		verb = enforced ? "killed the tree at" : "would kill the tree at";
	else if (v->action == TG_ACT_DENY)
		verb = enforced ? "denied" : "would deny";
	else if (v->action == TG_ACT_AUDIT)
		verb = "audited";
	else
		verb = "allowed";
	fprintf(f, "txguard: %s ", verb);
	put_what(f, op);
	fputs(" by rule ", f);
	put_safe(f, v->rule_id ? v->rule_id : "(default)", 200);
	fputs(": ", f);
	put_safe(f, v->reason ? v->reason : "no reason given", 1000);
	return memstream_done(f, &buf);
}

static void put_duration(FILE *f, uint64_t ns)
{
	double s = (double)ns / 1e9;
	if (s < 1.0)
		fprintf(f, "%.2fs", s);
	else if (s < 10.0)
		fprintf(f, "%.1fs", s);
	else if (s < 120.0)
		fprintf(f, "%.0fs", s);
	else
		fprintf(f, "%um%02us", (unsigned)(s / 60), (unsigned)s % 60);
}

/* Why the run counts as failed (or how it ended), for the parenthesis. */
static void put_why(FILE *f, const struct tg_report *r)
{
	if (!r->ran) {
		fputs("not run", f);
		return;
	}
	switch (r->run.end) {
	case TG_END_EXITED:
	case TG_END_EXEC_FAILED:
		fprintf(f, "exit %d", r->run.exit_code);
		return;
	case TG_END_SIGNALED:
		fprintf(f, "%s", tg_signal_name(r->run.term_signal));
		return;
	case TG_END_TIMEOUT:
		fputs("timeout", f);
		return;
	case TG_END_POLICY_KILL:
		fputs("killed by policy", f);
		return;
	case TG_END_TRACER_KILL:
		fputs("killed by txguard", f);
		if (r->kill_reason) {
			fputs(": ", f);
			put_safe(f, r->kill_reason, 200);
		}
		return;
	case TG_END_INTERRUPTED:
		fputs("interrupted", f);
		return;
	}
	fputs("unknown end", f);
}

char *tg_audit_summary_line(const struct tg_report *r, bool color)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	size_t n = r->changes ? r->changes->n : 0;
	const char *paths = n == 1 ? "path" : "paths";
	static const char *const sgr[] = {
		[TG_OUTCOME_COMMITTED] = "\033[32m",
		[TG_OUTCOME_ROLLED_BACK] = "\033[33m",
		[TG_OUTCOME_RESTORE_FAILED] = "\033[1;31m",
		[TG_OUTCOME_SETUP_FAILED] = "\033[1;31m",
	};
	if (color && (size_t)r->outcome < TG_ARRAY_SIZE(sgr))
		fputs(sgr[r->outcome], f);
	switch (r->outcome) {
	case TG_OUTCOME_COMMITTED:
		fprintf(f, "txguard: committed %zu %s in ", n, paths);
		put_duration(f, report_duration_ns(r));
		if (r->exit_status != 0) {
			fputs(" (", f);
			put_why(f, r);
			fputc(')', f);
		}
		break;
	case TG_OUTCOME_ROLLED_BACK:
		if (n == 0) {
			/* "rolled back 0 paths" reads as if something happened. */
			fputs("txguard: ", f);
			put_why(f, r);
			fputs(", nothing to roll back", f);
			break;
		}
		fprintf(f, "txguard: rolled back %zu %s in ", n, paths);
		put_duration(f, report_duration_ns(r));
		fputs(" (", f);
		put_why(f, r);
		fputc(')', f);
		break;
	case TG_OUTCOME_RESTORE_FAILED:
		fprintf(f, "txguard: RESTORE FAILED for %zu %s after ", n, paths);
		put_duration(f, report_duration_ns(r));
		fputs(" (", f);
		put_why(f, r);
		fputs("): ", f);
		put_safe(f, r->error ? r->error : "unknown error", 1000);
		fputs("; run `txguard recover`", f);
		break;
	case TG_OUTCOME_SETUP_FAILED:
		fputs("txguard: not run: ", f);
		put_safe(f, r->error ? r->error : "setup failed", 1000);
		break;
	}
	if (color)
		fputs("\033[0m", f);
	return memstream_done(f, &buf);
}
