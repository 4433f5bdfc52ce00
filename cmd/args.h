/* args.h — the command line read into struct tg_opts: the arguments
 * (tg_parse_args, tested directly, minijail's split) and the environment
 * (tg_opts_resolve_env). args.c; nothing else reads the command line or a
 * TXGUARD_* variable. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum tg_subcmd {
	TG_CMD_NONE = 0,
	TG_CMD_RUN,
	TG_CMD_POLICY_CHECK,
	TG_CMD_POLICY_EXPLAIN,
	TG_CMD_DOCTOR,
	TG_CMD_RECOVER,
	TG_CMD_LOG,
	TG_CMD_SHOW,
	TG_CMD_DIFF,
	TG_CMD_UNDO,
	TG_CMD_BEGIN,
	TG_CMD_COMMIT,
	TG_CMD_ROLLBACK,
	TG_CMD_HELP,
	TG_CMD_VERSION,
	TG_CMD_STATUS,
	TG_CMD_REDO,
};

enum tg_rollback_on {
	TG_RB_FAILURE = 0,   /* non-zero exit, signal, kill, timeout */
	TG_RB_SIGNAL,        /* only signals, kills and timeouts */
	TG_RB_NEVER,
	TG_RB_ALWAYS,
	TG_RB_CODES,         /* only the listed exit codes (and signals, kills, timeouts) */
};

enum tg_color { TG_COLOR_AUTO = 0, TG_COLOR_ALWAYS, TG_COLOR_NEVER };

#define TG_MAX_CODES 64

struct tg_opts {
	enum tg_subcmd cmd;
	const char *help_topic;          /* `txguard help X` / `X --help` */

	/* shared */
	const char *workspace;
	bool force_workspace;            /* accept a too-wide workspace (/, $HOME) */
	const char *state_dir;           /* --state-dir (made absolute), else $TXGUARD_STATE_DIR */
	char *state_dir_own;             /* a relative --state-dir against the cwd (owned) */
	char **policies;                 /* -p, in order */
	bool no_default_policy;
	bool json;
	/* Borrowed strings point into argv or the environment, which txguard
	 * never frees (filtering the command's environment only unsets names). */
	char **env_policies;             /* $TXGUARD_POLICY split at ':' (owned) */
	const char *default_policy_dir;  /* $TXGUARD_DEFAULT_POLICY_DIR; NULL = the installed one */

	/* run */
	char **argv;                     /* the command (points into the caller's argv) */
	size_t argc;                     /* its words */
	enum tg_rollback_on rollback_on;
	int rollback_codes[TG_MAX_CODES];
	size_t nrollback_codes;
	const char *rollback_on_text;
	bool audit_only;
	uint64_t timeout_ms, kill_after_ms, grace_ms;
	unsigned long max_procs;
	uint64_t memory_limit, max_file_size;
	char **env_allow, **env_deny;
	bool strip_secrets;
	const char *report_path, *log_path;
	int report_fd, log_fd;
	int log_level;                   /* enum tg_log_level */
	bool lock_fail;
	const char *tx;
	bool tx_failure_all;
	int journal_sync;                /* --journal-sync: enum tg_sync_choice */
	bool journal_sync_set;           /* given on the command line (beats the environment) */
	uint64_t history_max_runs;       /* $TXGUARD_HISTORY_MAX_RUNS; 0 = the default */
	uint64_t history_max_bytes;      /* $TXGUARD_HISTORY_MAX_BYTES; 0 = the default */
	bool quiet;
	bool verbose;                    /* -v: the summary line even when nothing happened */
	enum tg_color color;
	const char *approver;            /* --approver CMD: answers `action: ask` */
	bool learn;                      /* `txguard learn`: a run in audit mode drafting a policy */
	const char *learn_out;           /* -o FILE (default txguard-learned.yaml) */
	uint64_t approver_timeout_ms;
	const char *proxy_resolve;       /* $TXGUARD_PROXY_RESOLVE: name:address[,...] for the proxy */
	unsigned proxy_timeout_ms;       /* $TXGUARD_PROXY_TIMEOUT; 0 = the proxy's own */
	bool no_policy_cache;            /* $TXGUARD_POLICY_CACHE=0 */

	/* history and subcommand positionals */
	const char *id;
	const char *path;
	bool force;
	bool dry_run;                    /* undo, recover: say what, change nothing */
	char **explain_argv;
	char **argv_copy;                /* argv without the subcommand words (owned) */
	/* policy explain's other questions (issue 13) */
	const char *explain_path, *explain_op, *explain_connect;
	const char *explain_signal;      /* --signal PID[:SIG] (issue 14) */
	bool explain_udp;
};

/* Parse argv into *o. Returns 0, or -EINVAL after printing one line
 * "txguard: ..." to err that says what is wrong and how to fix it (the
 * caller exits TG_EXIT_USAGE). */
int tg_parse_args(int argc, char **argv, struct tg_opts *o, FILE *err);
/* The environment's settings (TXGUARD_*, TG_JOURNAL_DEBUG), read once here
 * and nowhere else (core/ reads none of them). A flag beats its variable:
 * --state-dir beats TXGUARD_STATE_DIR, --journal-sync beats
 * TXGUARD_JOURNAL_SYNC. A bad value is an error naming the variable
 * (-EINVAL, said on err); -ENOMEM. */
int tg_opts_resolve_env(struct tg_opts *o, FILE *err);
void tg_opts_free(struct tg_opts *o);

/* Whether an exit status counts as failure under --rollback-on. */
bool tg_should_rollback(const struct tg_opts *o, bool signaled, bool killed, int exit_code);

/* A command line txguard does not understand: nothing ran. */
#define TG_EXIT_USAGE 2
