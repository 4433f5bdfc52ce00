/* audit.h — what txguard tells machines and people about a run.
 *
 * Three outputs, all built on core/base/json.h:
 *  - the event log (--log / --log-fd): JSON Lines, one event per line, each
 *    line written whole and flushed as it happens (a crash loses no line);
 *  - the report (--report / --report-fd): ONE JSON object at the end of a run;
 *  - the text for people: the stderr line for a denial and the end-of-run
 *    summary line.
 * The schemas are docs/schema/log.schema.json and docs/schema/report.schema.json;
 * tests/audit validates real output against them. Field names are stable:
 * adding a field is compatible, renaming or removing one is not (bump
 * TG_REPORT_VERSION / TG_LOG_VERSION).
 *
 * audit knows nothing of ptrace or journals: it formats what the glue
 * (cmd/run.c) hands it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "base/op.h"
#include "policy/policy.h"
#include "trace/trace.h"
#include "journal/journal.h"

#define TG_REPORT_VERSION 1
#define TG_LOG_VERSION 1

/* ------------------------------------------------------------------ */
/* The event log                                                       */

enum tg_log_level {
	TG_LOG_DECISIONS = 0,   /* deny/kill/audit decisions, tracer kills, transaction events, summary */
	TG_LOG_EXEC,            /* ... plus process start, exec, exit */
	TG_LOG_ALL,             /* ... plus every allowed trapped call */
};

/* "decisions" | "exec" | "all" → level. 0 or -EINVAL. */
int tg_log_level_from_name(const char *name, enum tg_log_level *out);
const char *tg_log_level_name(enum tg_log_level level);

struct tg_log;

/* A log writing to fd. The fd stays the caller's (tg_log_close does not
 * close it). NULL with errno=ENOMEM on failure. Writes the "log_start" event. */
struct tg_log *tg_log_open(int fd, enum tg_log_level level);
/* Free the log (accepts NULL). Does not close the fd. */
void tg_log_close(struct tg_log *log);
/* The first write error (-errno), or 0. Events never fail the run: the glue
 * checks this once at the end and warns. */
int tg_log_error(const struct tg_log *log);
/* Every tg_log_* function below accepts log == NULL (no --log) and then
 * does nothing and returns 0, so the glue need not test for it. */

/* Tag every later event with "tx": id (copied; NULL clears). */
int tg_log_set_txid(struct tg_log *log, const char *txid);

/* One policy decision on a trapped call. `enforced` is false in --audit-only
 * mode, when a deny/kill was logged but the call ran. Allowed calls are
 * written only at TG_LOG_ALL; anything else at every level. Every event
 * function returns 0 (also when the level filters the event out) or -errno. */
int tg_log_decision(struct tg_log *log, const struct tg_op *op, const struct tg_verdict *v,
                    bool enforced);
/* A process or thread joined the tree (TG_LOG_EXEC and up). */
int tg_log_spawn(struct tg_log *log, pid_t parent, pid_t child, bool thread);
/* An exec completed with this real exe and argv (TG_LOG_EXEC and up). */
int tg_log_exec(struct tg_log *log, pid_t pid, const char *exe, char *const *argv);
/* A process ended; status as from waitpid (TG_LOG_EXEC and up). */
int tg_log_exit(struct tg_log *log, pid_t pid, int status);
/* The tracer killed the tree on its own (every level). */
int tg_log_kill(struct tg_log *log, pid_t pid, const char *why);
/* Transaction events (every level). changes may be NULL. For a rollback,
 * err is 0 when the restore succeeded, else the -errno it failed with. */
int tg_log_tx_begin(struct tg_log *log, const char *txid, const char *workspace);
int tg_log_tx_commit(struct tg_log *log, const struct tg_changes *changes);
int tg_log_tx_rollback(struct tg_log *log, const struct tg_changes *changes, int err);

/* One connection through the egress proxy (core/proxy/proxy.c): the host asked
 * for, the verdict of `network: hosts:`, and the bytes each way. */
struct tg_net_conn {
	uint64_t wall_ns;            /* when the request arrived */
	char *host;                  /* as requested, lowercase */
	unsigned port;
	char *method;                /* "CONNECT", "GET", ... */
	enum tg_action action;       /* allow or deny */
	const char *rule_id;         /* static or owned by the policy */
	const char *reason;          /* static or owned by the policy */
	const char *source;          /* owned by the policy; may be NULL */
	const char *entry;           /* the host entry as written (owned by the policy) or NULL */
	char *error;                 /* why an allowed connection failed, or NULL */
	char *sni;                   /* the TLS server name seen (CONNECT), or NULL */
	uint64_t bytes_up;           /* client → host */
	uint64_t bytes_down;         /* host → client */
};
/* Free what a struct tg_net_conn owns and zero it. */
void tg_net_conn_clear(struct tg_net_conn *c);
/* A "connection" event (every level). Unlike the other tg_log_* functions
 * this one may be called from the proxy's thread: every event holds the
 * log's lock while it is written. */
int tg_log_connection(struct tg_log *log, const struct tg_net_conn *c);

struct tg_report;
/* The last event: outcome, exit, duration and counts taken from the report. */
int tg_log_summary(struct tg_log *log, const struct tg_report *r);

/* ------------------------------------------------------------------ */
/* The report                                                          */

enum tg_outcome {
	TG_OUTCOME_COMMITTED = 0,
	TG_OUTCOME_ROLLED_BACK,
	TG_OUTCOME_RESTORE_FAILED,   /* the rollback failed: `txguard recover` is needed */
	TG_OUTCOME_SETUP_FAILED,     /* nothing ran (exit 125) */
};
const char *tg_outcome_name(enum tg_outcome o);
/* "exited" | "signaled" | "timeout" | "policy_kill" | "tracer_kill" |
 * "interrupted" | "exec_failed". */
const char *tg_run_end_name(enum tg_run_end e);

/* One non-allow decision, owned by the report (deep copy of the op). */
struct tg_report_decision {
	uint64_t wall_ns;
	struct tg_op op;             /* op.name points at the static syscall table */
	enum tg_action action;
	int err;                     /* errno of a deny; 0 otherwise */
	bool enforced;               /* false under --audit-only */
	char *rule_id;
	char *reason;
	char *source;                /* "file:line" of the rule */
	unsigned long count;         /* the same refusal repeated (a $PATH search, retries): >= 1 */
	const char *decided_by;      /* static: "approver", "txguard", or NULL (the policy) */
};

/* A rule the kernel enforces where txguard cannot see a refusal (e.g.
 * Landlock refusing a read-only open, which never stops the command). */
struct tg_unobserved {
	const char *rule_id;
	const char *enforced_by;     /* "landlock" */
	const char *ops;             /* space-separated operations: "read exec" */
	const char *const *paths;
	size_t npaths;
	const char *why;
};

/* Most decisions the report keeps; later ones are only counted
 * (decisions_dropped) so a loop of denied calls cannot grow it unbounded. */
#define TG_REPORT_MAX_DECISIONS 1000

/* Most changed paths the report lists (all kinds together, in the order of
 * struct tg_changes); the counts and total stay exact and
 * changes.truncated says that paths were left out (`txguard show ID` has
 * them all). Bounds the report of an `rm -rf node_modules`. */
#define TG_REPORT_MAX_PATHS 10000

/* Filled by the glue. Pointer fields marked "borrowed" are not copied: they
 * must stay valid until tg_report_write(); tg_report_clear() frees only what
 * the report owns (the decisions). Zero-initialise, then fill. */
struct tg_report {
	char *const *argv;           /* borrowed: the command */
	const char *workspace;       /* borrowed */
	const char *workspace_source; /* borrowed: option, git, policy_file, cwd; NULL = unknown */
	const char *txid;            /* borrowed; NULL when no transaction was opened */
	const char *rollback_on;     /* borrowed: the --rollback-on text ("failure") */
	bool audit_only;
	const char *const *policy_files;   /* borrowed: files loaded, in order */
	size_t npolicy_files;

	uint64_t start_wall_ns;      /* tg_wall_ns() at start / end */
	uint64_t end_wall_ns;
	uint64_t duration_ns;        /* monotonic; 0 = end_wall - start_wall */

	bool ran;                    /* the command was started: `run` is valid */
	struct tg_run_result run;    /* from tg_tracer_run() */
	int exit_status;             /* txguard's own exit code (the contract's; 125 on setup failure) */
	const char *kill_reason;     /* borrowed: tracer on_kill why, or NULL */

	enum tg_outcome outcome;
	const char *error;           /* borrowed: setup / restore error message, or NULL */
	const struct tg_changes *changes;  /* borrowed; NULL = none known */

	/* Owned: tg_report_add_decision() appends, tg_report_clear() frees. */
	struct tg_report_decision *decisions;
	size_t ndecisions;
	size_t decisions_dropped;
	size_t ndenied, nkilled, naudited;   /* counts of every non-allow decision */

	/* Owned: tg_report_add_conn() appends (the proxy's connections, allowed
	 * and denied; a denied one also counts in ndenied). */
	struct tg_net_conn *conns;
	size_t nconns;
	size_t conns_dropped;
	bool proxy;                  /* the egress proxy ran */
	/* Borrowed: rules enforced without a way to observe their refusals. */
	const struct tg_unobserved *unobserved;
	size_t nunobserved;
};

/* Record one proxy connection (deep copy). Bounded like the decisions. 0 or -ENOMEM. */
int tg_report_add_conn(struct tg_report *r, const struct tg_net_conn *c);

/* Record a decision that was not a plain allow (an allow is ignored and
 * returns 0, unless an approver decided it: v->decided_by). Copies what it needs. 0, or 1 when it repeats the last
 * decision of the same thread (same rule and action, same path or
 * address, or for an exec the same argv and program name: execvp walking
 * $PATH, a retry) and was only counted there; 2 when such a repeat turned
 * an exec's ENOENT (a missing $PATH entry) into the real refusal, which
 * the decision now shows; or -ENOMEM. */
int tg_report_add_decision(struct tg_report *r, const struct tg_op *op,
                           const struct tg_verdict *v, bool enforced);
/* Free what the report owns and zero it. Accepts NULL. */
void tg_report_clear(struct tg_report *r);

/* Write the report as ONE JSON object followed by "\n". 0 or -errno. */
int tg_report_write(int fd, const struct tg_report *r);

/* ------------------------------------------------------------------ */
/* Text for people                                                     */

/* "txguard: denied <what> by rule <id>: <reason>" (no newline), e.g.
 *   txguard: denied exec `rm -rf /` by rule no-rm-root: deletes the filesystem
 *   txguard: denied unlink /home/u/.ssh/id_rsa by rule secrets: ...
 * with "killed the tree at" for a kill and "would deny" when not enforced
 * (--audit-only). Control characters and invalid UTF-8 in paths and argv are
 * shown as \xNN, so a hostile file name cannot drive the terminal; long
 * argv is cut with "...". malloc'd; NULL with errno=ENOMEM. */
char *tg_audit_denial_line(const struct tg_op *op, const struct tg_verdict *v, bool enforced);

/* The end-of-run line, e.g. "txguard: committed 3 paths in 0.42s",
 * "txguard: rolled back 12 paths in 1.1s (exit 1)",
 * "txguard: rolled back 2 paths in 1.0s (timeout)",
 * "txguard: RESTORE FAILED ...: <error>; run `txguard recover`",
 * "txguard: not run: <error>". With color, wrapped in ANSI SGR (green,
 * yellow, red); the caller decides (tty, NO_COLOR, --color). malloc'd. */
char *tg_audit_summary_line(const struct tg_report *r, bool color);

/* Format a socket address: "1.2.3.4:80", "[::1]:443", "unix:/path",
 * "unix:@abstract", "unix:" (unnamed), "family:N". Returns buf. */
const char *tg_sockaddr_format(const struct sockaddr_storage *ss, socklen_t len,
                               char *buf, size_t size);
/* "SIGKILL" or "SIG<n>". Static or thread-local storage. */
const char *tg_signal_name(int sig);
