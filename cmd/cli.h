/* cli.h — txguard's command line: parsing (tested directly, minijail's
 * split), dispatch and the subcommands. main() only calls tg_cli_main(). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "txn/txn.h"
#include "base/util.h"

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
	const char *state_dir;
	char **policies;                 /* -p, in order */
	bool no_default_policy;
	bool json;

	/* run */
	char **argv;                     /* the command (points into the caller's argv) */
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
/* The environment's settings, read once here and nowhere else (core/ reads
 * none of them). A flag beats its variable: --state-dir beats
 * TXGUARD_STATE_DIR, --journal-sync beats TXGUARD_JOURNAL_SYNC. A bad value
 * is an error naming the variable (-EINVAL, said on err). */
int tg_opts_resolve_env(struct tg_opts *o, FILE *err);
void tg_opts_free(struct tg_opts *o);

/* Whether an exit status counts as failure under --rollback-on. */
bool tg_should_rollback(const struct tg_opts *o, bool signaled, bool killed, int exit_code);

/* A command line txguard does not understand: nothing ran. */
#define TG_EXIT_USAGE 2

/* Usage text of the tool or one subcommand (NULL = main). -ENOENT, after
 * one line on err naming the topics, when topic is not one. */
int tg_print_help(const char *topic, FILE *out, FILE *err);
/* Whether word names a help topic (a subcommand). */
bool tg_help_has_topic(const char *word);

int tg_cli_main(int argc, char **argv);

/* cli.c: one error family; messages go to stderr prefixed "txguard: ". */
void tg_warn(const char *fmt, ...) TG_PRINTF(1, 2);
/* Print and return 125 (the contract's "txguard failed"). */
int tg_fail(const char *fmt, ...) TG_PRINTF(1, 2);

/* Subcommands (subcmds.c / run.c). Each returns the process exit code. */
int tg_cmd_run(struct tg_opts *o);
int tg_cmd_policy_check(struct tg_opts *o);
int tg_cmd_policy_explain(struct tg_opts *o);
/* The question policy explain was asked (cmd/explain.c): 0 allow, 1 deny
 * or kill, 2 a bad question; -1 when none was asked (dump the rules). */
struct tg_policy;
int tg_explain_question(const struct tg_opts *o, const struct tg_policy *p, const char *ws);
int tg_cmd_doctor(struct tg_opts *o);
int tg_cmd_recover(struct tg_opts *o);
/* undo --dry-run (preview.c): workspace absolute, state_dir as given. */
int tg_cmd_undo_preview(struct tg_opts *o, const char *workspace, const char *state_dir);
int tg_cmd_history(struct tg_opts *o);
int tg_cmd_status(struct tg_opts *o);

/* nested.c: -EBUSY, with the one-line reason in why, when this process is
 * traced by a txguard (txguard under txguard); else 0. */
int tg_nested_check(char *why, size_t len);

/* Policy paths in load order: installed policy.d (unless --no-default-policy),
 * $TXGUARD_POLICY entries, then -p. Returns a NULL-terminated vector. */
int tg_policy_paths(const struct tg_opts *o, char ***out);
/* The per-workspace policy file, relative to the workspace root: loaded
 * after $TXGUARD_POLICY and before -p, and never writable by the command. */
#define TG_WORKSPACE_POLICY ".txguard.yaml"

/* workspace.c: how the workspace was chosen (the report's workspace_source). */
enum tg_ws_source { TG_WS_OPTION = 0, TG_WS_GIT, TG_WS_POLICY_FILE, TG_WS_CWD };
const char *tg_ws_source_name(enum tg_ws_source src);
/* Absolute, normalised workspace: -w, else the nearest ancestor of the
 * current directory holding .txguard.yaml or .git (unless too wide), else
 * the current directory. -ENOTDIR when it is not a directory. */
int tg_workspace_resolve(const struct tg_opts *o, char **out, enum tg_ws_source *src);
int tg_workspace_path(const struct tg_opts *o, char **out);
/* Why ws is too wide to be a workspace ("your home directory"), or NULL. */
const char *tg_workspace_too_wide(const char *ws);
/* tg_workspace_resolve() plus the too-wide refusal (unless
 * --force-workspace), for commands that write. On failure -errno, and why
 * holds the one-line error (what is wrong, what to do). */
int tg_workspace_for_writing(const struct tg_opts *o, char **out, enum tg_ws_source *src,
                             char *why, size_t len);
