/* args.c — parse txguard's command line into struct tg_opts.
 *
 * Kept apart from main() so tests/cli can call tg_parse_args() directly.
 * The option table is the single source of truth for --help and the man
 * page test (tests/audit/manpage_test.sh compares the two).
 */
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "audit/audit.h"
#include "base/path.h"
#include "cli.h"

enum {
	OPT_NO_DEFAULT_POLICY = 1000, OPT_STATE_DIR, OPT_ROLLBACK_ON, OPT_AUDIT_ONLY,
	OPT_TIMEOUT, OPT_KILL_AFTER, OPT_GRACE, OPT_MAX_PROCS, OPT_MEMORY_LIMIT,
	OPT_MAX_FILE_SIZE, OPT_ENV_ALLOW, OPT_ENV_DENY, OPT_STRIP_SECRETS, OPT_REPORT,
	OPT_REPORT_FD, OPT_LOG, OPT_LOG_FD, OPT_LOG_LEVEL, OPT_LOCK, OPT_TX,
	OPT_TX_FAILURE, OPT_COLOR, OPT_JSON, OPT_FORCE, OPT_JOURNAL_SYNC, OPT_FORCE_WORKSPACE, OPT_DRY_RUN,
	OPT_EXPLAIN_PATH, OPT_EXPLAIN_OP, OPT_EXPLAIN_CONNECT, OPT_EXPLAIN_UDP, OPT_EXPLAIN_SIGNAL,
	OPT_APPROVER, OPT_APPROVER_TIMEOUT,
};

static const struct option long_opts[] = {
	{ "workspace", required_argument, NULL, 'w' },
	{ "force-workspace", no_argument, NULL, OPT_FORCE_WORKSPACE },
	{ "policy", required_argument, NULL, 'p' },
	{ "no-default-policy", no_argument, NULL, OPT_NO_DEFAULT_POLICY },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "rollback-on", required_argument, NULL, OPT_ROLLBACK_ON },
	{ "audit-only", no_argument, NULL, OPT_AUDIT_ONLY },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "kill-after", required_argument, NULL, OPT_KILL_AFTER },
	{ "grace", required_argument, NULL, OPT_GRACE },
	{ "max-procs", required_argument, NULL, OPT_MAX_PROCS },
	{ "memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT },
	{ "max-file-size", required_argument, NULL, OPT_MAX_FILE_SIZE },
	{ "env-allow", required_argument, NULL, OPT_ENV_ALLOW },
	{ "env-deny", required_argument, NULL, OPT_ENV_DENY },
	{ "strip-secrets", no_argument, NULL, OPT_STRIP_SECRETS },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "report-fd", required_argument, NULL, OPT_REPORT_FD },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "log-fd", required_argument, NULL, OPT_LOG_FD },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "lock", required_argument, NULL, OPT_LOCK },
	{ "tx", required_argument, NULL, OPT_TX },
	{ "tx-failure", required_argument, NULL, OPT_TX_FAILURE },
	{ "journal-sync", required_argument, NULL, OPT_JOURNAL_SYNC },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "path", required_argument, NULL, OPT_EXPLAIN_PATH },
	{ "op", required_argument, NULL, OPT_EXPLAIN_OP },
	{ "connect", required_argument, NULL, OPT_EXPLAIN_CONNECT },
	{ "udp", no_argument, NULL, OPT_EXPLAIN_UDP },
	{ "signal", required_argument, NULL, OPT_EXPLAIN_SIGNAL },
	{ "approver", required_argument, NULL, OPT_APPROVER },
	{ "output", required_argument, NULL, 'o' },
	{ "approver-timeout", required_argument, NULL, OPT_APPROVER_TIMEOUT },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static const struct {
	const char *word, *word2;
	enum tg_subcmd cmd;
} subcmds[] = {
	{ "run", NULL, TG_CMD_RUN },
	{ "policy", "check", TG_CMD_POLICY_CHECK },
	{ "policy", "explain", TG_CMD_POLICY_EXPLAIN },
	{ "doctor", NULL, TG_CMD_DOCTOR },
	{ "recover", NULL, TG_CMD_RECOVER },
	{ "log", NULL, TG_CMD_LOG },
	{ "show", NULL, TG_CMD_SHOW },
	{ "diff", NULL, TG_CMD_DIFF },
	{ "undo", NULL, TG_CMD_UNDO },
	{ "redo", NULL, TG_CMD_REDO },
	{ "begin", NULL, TG_CMD_BEGIN },
	{ "commit", NULL, TG_CMD_COMMIT },
	{ "rollback", NULL, TG_CMD_ROLLBACK },
	{ "status", NULL, TG_CMD_STATUS },
	{ "help", NULL, TG_CMD_HELP },
};

static int bad(FILE *err, const char *fmt, ...) TG_PRINTF(2, 3);
static int bad(FILE *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("txguard: ", err);
	vfprintf(err, fmt, ap);
	fputc('\n', err);
	va_end(ap);
	return -EINVAL;
}

static int parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end = NULL;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || !*s || *end || *s == '-' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_fd(const char *s, int *out)
{
	unsigned long v;
	if (parse_ulong(s, INT_MAX, &v) < 0)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int parse_rollback_on(const char *s, struct tg_opts *o)
{
	static const struct { const char *name; enum tg_rollback_on v; } words[] = {
		{ "failure", TG_RB_FAILURE }, { "signal", TG_RB_SIGNAL },
		{ "never", TG_RB_NEVER }, { "always", TG_RB_ALWAYS },
	};
	o->rollback_on_text = s;
	for (size_t i = 0; i < TG_ARRAY_SIZE(words); i++) {
		if (strcmp(s, words[i].name) == 0) {
			o->rollback_on = words[i].v;
			return 0;
		}
	}
	/* A comma list of exit codes that count as failure. */
	_cleanup_free_ char *copy = tg_strdup(s);
	if (!copy)
		return -ENOMEM;
	o->nrollback_codes = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long code;
		if (parse_ulong(tok, 255, &code) < 0 || o->nrollback_codes == TG_MAX_CODES)
			return -EINVAL;
		o->rollback_codes[o->nrollback_codes++] = (int)code;
	}
	if (o->nrollback_codes == 0)
		return -EINVAL;
	o->rollback_on = TG_RB_CODES;
	return 0;
}

static int parse_log_level(const char *s, int *out)
{
	if (strcmp(s, "decisions") == 0)
		*out = TG_LOG_DECISIONS;
	else if (strcmp(s, "exec") == 0)
		*out = TG_LOG_EXEC;
	else if (strcmp(s, "all") == 0)
		*out = TG_LOG_ALL;
	else
		return -EINVAL;
	return 0;
}

/* Whether word is an option that takes the next word as its value (-w DIR,
 * -qw DIR, --workspace DIR, --work DIR: getopt_long's unique prefixes). */
static bool takes_value(const char *word)
{
	if (word[1] != '-') {
		size_t n = strlen(word);
		return n >= 2 && (word[n - 1] == 'w' || word[n - 1] == 'p') &&
		       strspn(word + 1, "qvhVwp") == n - 1;
	}
	const char *name = word + 2;
	if (strchr(name, '='))
		return false;
	size_t len = strlen(name);
	const struct option *hit = NULL;
	for (const struct option *lo = long_opts; lo->name; lo++) {
		if (strncmp(lo->name, name, len) != 0)
			continue;
		if (strlen(lo->name) == len)
			return lo->has_arg == required_argument;
		if (hit)
			return false; /* ambiguous: getopt says so */
		hit = lo;
	}
	return hit && hit->has_arg == required_argument;
}

/* The index of the first word that is neither an option nor an option's
 * value: the subcommand, "--", or a bare word; argc when none. */
static int first_word(int argc, char **argv)
{
	int i = 1;
	while (i < argc && argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--") != 0)
		i += takes_value(argv[i]) ? 2 : 1;
	return i < argc ? i : argc;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[32];
	if (la >= 31 || lb >= 31)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t sub = diag + (a[i - 1] != b[j - 1]);
			size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
			row[j] = sub < best ? sub : best;
			diag = up;
		}
	}
	return row[lb];
}

/* "txguard lgo": a typo of a subcommand, or a program meant to run. */
static int bare_word(int k, int argc, char **argv, FILE *err)
{
	const char *w = argv[k];
	for (size_t i = 0; i < TG_ARRAY_SIZE(subcmds); i++) {
		if (strlen(w) >= 3 && edit_distance(w, subcmds[i].word) <= 2) {
			fprintf(err, "txguard: '%s' is not a subcommand; did you mean 'txguard %s'? "
			        "(to run a program '%s': txguard -- %s)\n", w, subcmds[i].word, w, w);
			return -EINVAL;
		}
	}
	fputs("txguard: '", err);
	fputs(w, err);
	fputs("' is not a subcommand; did you mean 'txguard", err);
	for (int i = 1; i < k; i++)
		fprintf(err, " %s", argv[i]);
	fprintf(err, " -- %s%s'? (commands go after '--')\n", w, k + 1 < argc ? " ..." : "");
	return -EINVAL;
}

/* Find the subcommand: the first word that is not an option (txguard -q
 * log). Returns how many words it takes, 0 for the implicit run, and sets
 * *at to where they start. */
static int parse_subcmd(int argc, char **argv, struct tg_opts *o, FILE *err, int *at)
{
	int k = first_word(argc, argv);
	*at = k;
	if (k >= argc || strcmp(argv[k], "--") == 0) {
		o->cmd = TG_CMD_RUN;
		return 0;
	}
	/* `txguard learn [-o FILE] [RUN OPTIONS] -- CMD` is a run that drafts. */
	if (strcmp(argv[1], "learn") == 0) {
		o->cmd = TG_CMD_RUN;
		o->learn = true;
		o->audit_only = true;
		return 1;
	}
	for (size_t i = 0; i < TG_ARRAY_SIZE(subcmds); i++) {
		if (strcmp(argv[k], subcmds[i].word) != 0)
			continue;
		if (!subcmds[i].word2) {
			o->cmd = subcmds[i].cmd;
			return 1;
		}
		if (k + 1 < argc && strcmp(argv[k + 1], subcmds[i].word2) == 0) {
			o->cmd = subcmds[i].cmd;
			return 2;
		}
	}
	if (strcmp(argv[k], "policy") == 0) {
		const char *next = k + 1 < argc ? argv[k + 1] : NULL;
		if (next && (strcmp(next, "--help") == 0 || strcmp(next, "-h") == 0)) {
			o->cmd = TG_CMD_HELP;
			o->help_topic = "policy";
			return -1;
		}
		return bad(err, "'policy' needs 'check' or 'explain'%s%s%s: txguard policy check, "
		           "or txguard policy explain -- CMD", next ? " (got '" : "", next ? next : "",
		           next ? "')" : "");
	}
	return bare_word(k, argc, argv, err);
}

/* argv without the n subcommand words at k: what getopt sees. */
static char **drop_words(int argc, char **argv, int k, int n)
{
	char **v = calloc((size_t)(argc - n + 1), sizeof(char *));
	if (!v)
		return NULL;
	int j = 0;
	for (int i = 0; i < argc; i++)
		if (i < k || i >= k + n)
			v[j++] = argv[i];
	return v;
}

static int set_option(int c, const char *arg, struct tg_opts *o, FILE *err)
{
	int r = 0;
	switch (c) {
	case 'w': o->workspace = arg; break;
	case OPT_FORCE_WORKSPACE: o->force_workspace = true; break;
	case 'p': r = tg_strv_push(&o->policies, arg); break;
	case OPT_NO_DEFAULT_POLICY: o->no_default_policy = true; break;
	case OPT_STATE_DIR: o->state_dir = arg; break;
	case OPT_ROLLBACK_ON:
		if (parse_rollback_on(arg, o) < 0)
			return bad(err, "--rollback-on: '%s' is not failure, signal, never, always or a list of exit codes (e.g. 2,3)", arg);
		break;
	case OPT_AUDIT_ONLY: o->audit_only = true; break;
	case OPT_TIMEOUT:
		if (tg_parse_duration_ms(arg, &o->timeout_ms) < 0 || o->timeout_ms == 0)
			return bad(err, "--timeout: '%s' is not a duration like 30s, 500ms, 2m", arg);
		break;
	case OPT_KILL_AFTER:
		if (tg_parse_duration_ms(arg, &o->kill_after_ms) < 0)
			return bad(err, "--kill-after: '%s' is not a duration like 2s", arg);
		break;
	case OPT_GRACE:
		if (tg_parse_duration_ms(arg, &o->grace_ms) < 0)
			return bad(err, "--grace: '%s' is not a duration like 1s", arg);
		break;
	case OPT_MAX_PROCS:
		if (parse_ulong(arg, 1ul << 22, &o->max_procs) < 0 || o->max_procs == 0)
			return bad(err, "--max-procs: '%s' is not a number between 1 and 4194304", arg);
		break;
	case OPT_MEMORY_LIMIT:
		if (tg_parse_size(arg, &o->memory_limit) < 0 || o->memory_limit == 0)
			return bad(err, "--memory-limit: '%s' is not a size like 512M or 2G", arg);
		break;
	case OPT_MAX_FILE_SIZE:
		if (tg_parse_size(arg, &o->max_file_size) < 0 || o->max_file_size == 0)
			return bad(err, "--max-file-size: '%s' is not a size like 100M", arg);
		break;
	case OPT_ENV_ALLOW: r = tg_strv_push(&o->env_allow, arg); break;
	case OPT_ENV_DENY: r = tg_strv_push(&o->env_deny, arg); break;
	case OPT_STRIP_SECRETS: o->strip_secrets = true; break;
	case OPT_REPORT: o->report_path = arg; break;
	case OPT_REPORT_FD:
		if (parse_fd(arg, &o->report_fd) < 0)
			return bad(err, "--report-fd: '%s' is not a file descriptor number", arg);
		break;
	case OPT_LOG: o->log_path = arg; break;
	case OPT_LOG_FD:
		if (parse_fd(arg, &o->log_fd) < 0)
			return bad(err, "--log-fd: '%s' is not a file descriptor number", arg);
		break;
	case OPT_LOG_LEVEL:
		if (parse_log_level(arg, &o->log_level) < 0)
			return bad(err, "--log-level: '%s' is not decisions, exec or all", arg);
		break;
	case OPT_LOCK:
		if (strcmp(arg, "wait") == 0)
			o->lock_fail = false;
		else if (strcmp(arg, "fail") == 0)
			o->lock_fail = true;
		else
			return bad(err, "--lock: '%s' is not wait or fail", arg);
		break;
	case OPT_TX: o->tx = arg; break;
	case OPT_TX_FAILURE:
		if (strcmp(arg, "self") == 0)
			o->tx_failure_all = false;
		else if (strcmp(arg, "all") == 0)
			o->tx_failure_all = true;
		else
			return bad(err, "--tx-failure: '%s' is not self or all", arg);
		break;
	case OPT_JOURNAL_SYNC:
		if (strcmp(arg, "auto") == 0)
			o->journal_sync = TG_SYNC_CHOICE_AUTO;
		else if (strcmp(arg, "full") == 0)
			o->journal_sync = TG_SYNC_CHOICE_FULL;
		else if (strcmp(arg, "batch") == 0)
			o->journal_sync = TG_SYNC_CHOICE_BATCH;
		else
			return bad(err, "--journal-sync: '%s' is not auto, full or batch", arg);
		o->journal_sync_set = true;
		break;
	case 'q': o->quiet = true; break;
	case 'v': o->verbose = true; break;
	case 'o':
		if (!o->learn)
			return bad(err, "%s", "-o/--output goes with 'txguard learn'");
		o->learn_out = arg;
		break;
	case OPT_COLOR:
		if (strcmp(arg, "auto") == 0)
			o->color = TG_COLOR_AUTO;
		else if (strcmp(arg, "always") == 0)
			o->color = TG_COLOR_ALWAYS;
		else if (strcmp(arg, "never") == 0)
			o->color = TG_COLOR_NEVER;
		else
			return bad(err, "--color: '%s' is not auto, always or never", arg);
		break;
	case OPT_JSON: o->json = true; break;
	case OPT_FORCE: o->force = true; break;
	case OPT_DRY_RUN: o->dry_run = true; break;
	/* Checked together by policy explain (cmd/explain.c), which exits 2. */
	case OPT_EXPLAIN_PATH: o->explain_path = arg; break;
	case OPT_EXPLAIN_OP: o->explain_op = arg; break;
	case OPT_EXPLAIN_CONNECT: o->explain_connect = arg; break;
	case OPT_EXPLAIN_UDP: o->explain_udp = true; break;
	case OPT_EXPLAIN_SIGNAL: o->explain_signal = arg; break;
	case OPT_APPROVER: o->approver = arg; break;
	case OPT_APPROVER_TIMEOUT:
		if (tg_parse_duration_ms(arg, &o->approver_timeout_ms) < 0 || o->approver_timeout_ms == 0)
			return bad(err, "--approver-timeout: '%s' is not a duration like 30s", arg);
		break;
	default:
		return -EINVAL;
	}
	return r;
}

/* Positional words after the options, per subcommand. */
static int take_positionals(int n, char **rest, struct tg_opts *o, FILE *err, bool saw_dashdash)
{
	switch (o->cmd) {
	case TG_CMD_RUN:
		if (n == 0)
			return bad(err, "%s", "no command to run: put it after '--', e.g. txguard -- make test (txguard --help lists the subcommands)");
		o->argv = rest;
		o->argc = (size_t)n;
		return 0;
	case TG_CMD_POLICY_CHECK:
		for (int i = 0; i < n; i++)
			if (tg_strv_push(&o->policies, rest[i]) < 0)
				return -ENOMEM;
		return 0;
	case TG_CMD_POLICY_EXPLAIN:
		if (n > 0 && !saw_dashdash)
			return bad(err, "%s", "policy explain: put the command after '--', e.g. txguard policy explain -- rm -rf /");
		o->explain_argv = n > 0 ? rest : NULL;
		return 0;
	case TG_CMD_SHOW:
	case TG_CMD_COMMIT:
	case TG_CMD_ROLLBACK:
		if (n != 1)
			return bad(err, "%s", "this subcommand takes exactly one ID ('txguard log' and 'txguard status' list them)");
		o->id = rest[0];
		return 0;
	case TG_CMD_DIFF:
		if (n < 1 || n > 2)
			return bad(err, "%s", "usage: txguard diff ID [PATH]");
		o->id = rest[0];
		o->path = n > 1 ? rest[1] : NULL;
		return 0;
	case TG_CMD_UNDO:
		if (n > 1)
			return bad(err, "%s", "usage: txguard undo [ID] [--force] [--dry-run]");
		o->id = n ? rest[0] : NULL;
		return 0;
	case TG_CMD_REDO:
		if (n > 0)
			return bad(err, "%s", "usage: txguard redo [--force] [--dry-run] [--json] (it redoes the last undo; it takes no ID)");
		return 0;
	case TG_CMD_HELP:
		if (n > 1)
			return bad(err, "%s", "usage: txguard help [SUBCOMMAND]");
		o->help_topic = n ? rest[0] : NULL;
		return 0;
	default:
		if (n > 0)
			return bad(err, "unexpected argument '%s'", rest[0]);
		return 0;
	}
}

int tg_parse_args(int argc, char **argv, struct tg_opts *o, FILE *err)
{
	memset(o, 0, sizeof(*o));
	o->report_fd = -1;
	o->log_fd = -1;
	o->kill_after_ms = 2000;
	o->grace_ms = 1000;
	o->rollback_on_text = "failure";
	o->log_level = TG_LOG_DECISIONS;

	int at = 0;
	int skip = parse_subcmd(argc, argv, o, err, &at);
	if (skip < 0)
		return skip == -1 ? 0 : skip;
	const char *topic = skip ? argv[at] : NULL;
	if (o->cmd == TG_CMD_POLICY_CHECK || o->cmd == TG_CMD_POLICY_EXPLAIN)
		topic = o->cmd == TG_CMD_POLICY_CHECK ? "policy check" : "policy explain";

	/* getopt_long over argv without the subcommand words. For a run '+'
	 * stops at the first non-option so the command's own flags stay its
	 * own; other subcommands take options before or after their
	 * positionals (txguard -q undo ID --force). */
	int sargc = argc - skip;
	char **sargv = argv;
	/* Without subcommand words getopt reads argv itself: a run's argv
	 * may hold 100,000 words, not worth a copy. */
	if (skip > 0 && !(sargv = o->argv_copy = drop_words(argc, argv, at, skip)))
		return -ENOMEM;
	optind = 0;
	opterr = 0;
	int c;
	const char *shortopts = o->cmd == TG_CMD_RUN ? "+w:p:o:qvhV" : "w:p:qvhV";
	while ((c = getopt_long(sargc, sargv, shortopts, long_opts, NULL)) != -1) {
		if (c == 'h') {
			o->help_topic = topic;
			o->cmd = TG_CMD_HELP;
			return 0;
		}
		if (c == 'V') {
			o->cmd = TG_CMD_VERSION;
			return 0;
		}
		if (c == '?' || c == ':') {
			const char *w = sargv[optind - 1];
			if (optopt && optopt < 256 && c == '?')
				return bad(err, "unknown or incomplete option '%s' ('txguard --help' lists the options)", w);
			return bad(err, "unknown option or missing value: '%s' ('txguard --help' lists the options)", w);
		}
		int r = set_option(c, optarg, o, err);
		if (r < 0)
			return r;
	}
	bool saw_dashdash = optind > 1 && strcmp(sargv[optind - 1], "--") == 0;
	return take_positionals(sargc - optind, sargv + optind, o, err, saw_dashdash);
}

/* "a:b::c" → a, b, c appended to *v. */
static int split_paths(const char *list, char ***v)
{
	_cleanup_free_ char *copy = tg_strdup(list);
	if (!copy)
		return -ENOMEM;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
		if (tg_strv_push(v, tok) < 0)
			return -ENOMEM;
	return 0;
}

/* A positive count, or a size like 512M. */
static int env_bound(const char *v, bool size, uint64_t *out)
{
	if (size)
		return tg_parse_size(v, out) < 0 || *out == 0 ? -EINVAL : 0;
	char *end = NULL;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || n == 0 || *v == '-')
		return -EINVAL;
	*out = n;
	return 0;
}

/* Where policies come from and what the egress proxy is told. */
static int resolve_policy_env(struct tg_opts *o, FILE *err)
{
	const char *v;
	if ((v = getenv("TXGUARD_POLICY")) && *v && split_paths(v, &o->env_policies) < 0)
		return -ENOMEM;
	if ((v = getenv("TXGUARD_DEFAULT_POLICY_DIR")) && *v)
		o->default_policy_dir = v;
	if ((v = getenv("TXGUARD_PROXY_RESOLVE")) && *v)
		o->proxy_resolve = v;
	if ((v = getenv("TXGUARD_POLICY_CACHE")) && *v) {
		if (strcmp(v, "0") && strcmp(v, "1"))
			return bad(err, "TXGUARD_POLICY_CACHE: '%s' is not 0 or 1", v);
		o->no_policy_cache = *v == '0';
	}
	if ((v = getenv("TXGUARD_PROXY_TIMEOUT")) && *v) {
		uint64_t ms = 0;
		if (tg_parse_duration_ms(v, &ms) < 0 || ms == 0 || ms > 3600000)
			return bad(err, "TXGUARD_PROXY_TIMEOUT: '%s' is not a duration from 1ms to 1h (30s, 2m)", v);
		o->proxy_timeout_ms = (unsigned)ms;
	}
	return 0;
}

int tg_opts_resolve_env(struct tg_opts *o, FILE *err)
{
	const char *v;
	/* --state-dir ../st: the state dir of every later step (the journal,
	 * the history, the background gc) must not depend on a cwd. */
	if (o->state_dir && *o->state_dir != '/') {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);
		if (!*o->state_dir || !cwd || !(o->state_dir_own = tg_path_join(cwd, o->state_dir)))
			return bad(err, "--state-dir: cannot make '%s' an absolute path: %s", o->state_dir,
			           *o->state_dir ? strerror(errno) : "empty");
		o->state_dir = o->state_dir_own;
	}
	if (!o->state_dir && (v = getenv("TXGUARD_STATE_DIR")) && *v) {
		if (*v != '/')
			return bad(err, "TXGUARD_STATE_DIR: '%s' is not an absolute path", v);
		o->state_dir = v;
	}
	if (!o->journal_sync_set && (v = getenv("TXGUARD_JOURNAL_SYNC")) && *v) {
		if (strcmp(v, "auto") == 0)
			o->journal_sync = TG_SYNC_CHOICE_AUTO;
		else if (strcmp(v, "full") == 0)
			o->journal_sync = TG_SYNC_CHOICE_FULL;
		else if (strcmp(v, "batch") == 0)
			o->journal_sync = TG_SYNC_CHOICE_BATCH;
		else
			return bad(err, "TXGUARD_JOURNAL_SYNC: '%s' is not auto, full or batch", v);
	}
	if ((v = getenv("TXGUARD_HISTORY_MAX_RUNS")) && *v && env_bound(v, false, &o->history_max_runs) < 0)
		return bad(err, "TXGUARD_HISTORY_MAX_RUNS: '%s' is not a positive number", v);
	if ((v = getenv("TXGUARD_HISTORY_MAX_BYTES")) && *v && env_bound(v, true, &o->history_max_bytes) < 0)
		return bad(err, "TXGUARD_HISTORY_MAX_BYTES: '%s' is not a positive size (512M, 2G)", v);
	if ((v = getenv("TG_JOURNAL_DEBUG")) && *v) {
		if (strcmp(v, "0") && strcmp(v, "1") && strcmp(v, "2"))
			return bad(err, "TG_JOURNAL_DEBUG: '%s' is not 0, 1 or 2", v);
		tg_journal_debug = *v - '0';
	}
	return resolve_policy_env(o, err);
}

void tg_opts_free(struct tg_opts *o)
{
	tg_strv_free(o->policies);
	tg_strv_free(o->env_policies);
	tg_strv_free(o->env_allow);
	tg_strv_free(o->env_deny);
	free(o->argv_copy);
	o->argv_copy = NULL;
	free(o->state_dir_own);
	o->state_dir_own = NULL;
	o->policies = o->env_policies = o->env_allow = o->env_deny = NULL;
}

bool tg_should_rollback(const struct tg_opts *o, bool signaled, bool killed, int exit_code)
{
	switch (o->rollback_on) {
	case TG_RB_NEVER:
		return false;
	case TG_RB_ALWAYS:
		return true;
	case TG_RB_SIGNAL:
		return signaled || killed;
	case TG_RB_CODES:
		if (signaled || killed)
			return true;
		for (size_t i = 0; i < o->nrollback_codes; i++)
			if (o->rollback_codes[i] == exit_code)
				return true;
		return false;
	case TG_RB_FAILURE:
	default:
		return signaled || killed || exit_code != 0;
	}
}
