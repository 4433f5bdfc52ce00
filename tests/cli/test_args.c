/* test_args.c — tg_parse_args() called directly: every option, the
 * subcommand words, and the errors that must not run anything. */
#include <criterion/criterion.h>
#include <string.h>

#include "audit/audit.h"
#include "cli.h"

static FILE *devnull;

static void setup(void)
{
	devnull = fopen("/dev/null", "w");
}

static void teardown(void)
{
	fclose(devnull);
}

TestSuite(args, .init = setup, .fini = teardown);

/* tg_parse_args() keeps pointers into argv (the command, ids), so the
 * vector must outlive the call: copy it into static storage. */
static char *argv_store[64];

static int parse(struct tg_opts *o, char **v, size_t n)
{
	memcpy(argv_store, v, (n + 1) * sizeof(*v));
	return tg_parse_args((int)n, argv_store, o, devnull);
}

#define PARSE(o, ...)                                                   \
	({                                                              \
		char *v_[] = { "txguard", __VA_ARGS__, NULL };          \
		parse((o), v_, TG_ARRAY_SIZE(v_) - 1);                  \
	})

Test(args, run_with_dashdash_keeps_command_flags)
{
	struct tg_opts o;
	cr_assert_eq(PARSE(&o, "-w", "/tmp", "--", "rm", "-rf", "--help"), 0);
	cr_assert_eq(o.cmd, TG_CMD_RUN);
	cr_assert_str_eq(o.workspace, "/tmp");
	cr_assert_str_eq(o.argv[0], "rm");
	cr_assert_str_eq(o.argv[1], "-rf");
	cr_assert_str_eq(o.argv[2], "--help");
	cr_assert_null(o.argv[3]);
	tg_opts_free(&o);
}

Test(args, run_subcommand_word)
{
	struct tg_opts o;
	cr_assert_eq(PARSE(&o, "run", "--timeout", "1.5s", "--", "true"), 0);
	cr_assert_eq(o.cmd, TG_CMD_RUN);
	cr_assert_eq(o.timeout_ms, 1500);
	tg_opts_free(&o);
}

Test(args, defaults)
{
	struct tg_opts o;
	cr_assert_eq(PARSE(&o, "--", "true"), 0);
	cr_assert_eq(o.kill_after_ms, 2000);
	cr_assert_eq(o.grace_ms, 1000);
	cr_assert_eq(o.max_procs, 0); /* not given: the policy's limit, else 4096 */
	cr_assert_eq(o.rollback_on, TG_RB_FAILURE);
	cr_assert_eq(o.report_fd, -1);
	cr_assert_eq(o.log_fd, -1);
	cr_assert_eq(o.log_level, TG_LOG_DECISIONS);
	cr_assert_not(o.audit_only);
	tg_opts_free(&o);
}

Test(args, every_run_option)
{
	struct tg_opts o;
	cr_assert_eq(PARSE(&o, "-p", "a.yaml", "--policy", "b.d", "--no-default-policy",
	                   "--state-dir", "/s", "--rollback-on", "2,3", "--audit-only",
	                   "--timeout", "2m", "--kill-after", "500ms", "--grace", "0",
	                   "--max-procs", "64", "--memory-limit", "512M", "--max-file-size", "1G",
	                   "--env-allow", "PATH", "--env-deny", "AWS_*", "--strip-secrets",
	                   "--report", "r.json", "--report-fd", "7", "--log", "l.jsonl",
	                   "--log-fd", "8", "--log-level", "all", "--lock", "fail", "--tx", "t1",
	                   "--tx-failure", "all", "--journal-sync", "batch", "-q", "--color", "never", "--", "make"), 0);
	cr_assert_str_eq(o.policies[0], "a.yaml");
	cr_assert_str_eq(o.policies[1], "b.d");
	cr_assert(o.no_default_policy);
	cr_assert_str_eq(o.state_dir, "/s");
	cr_assert_eq(o.rollback_on, TG_RB_CODES);
	cr_assert_eq(o.nrollback_codes, 2);
	cr_assert_eq(o.rollback_codes[1], 3);
	cr_assert(o.audit_only);
	cr_assert_eq(o.timeout_ms, 120000);
	cr_assert_eq(o.kill_after_ms, 500);
	cr_assert_eq(o.grace_ms, 0);
	cr_assert_eq(o.max_procs, 64);
	cr_assert_eq(o.memory_limit, 512ull << 20);
	cr_assert_eq(o.max_file_size, 1ull << 30);
	cr_assert_str_eq(o.env_allow[0], "PATH");
	cr_assert_str_eq(o.env_deny[0], "AWS_*");
	cr_assert(o.strip_secrets);
	cr_assert_str_eq(o.report_path, "r.json");
	cr_assert_eq(o.report_fd, 7);
	cr_assert_str_eq(o.log_path, "l.jsonl");
	cr_assert_eq(o.log_fd, 8);
	cr_assert_eq(o.log_level, TG_LOG_ALL);
	cr_assert(o.lock_fail);
	cr_assert_str_eq(o.tx, "t1");
	cr_assert(o.tx_failure_all);
	cr_assert_eq(o.journal_sync, TG_SYNC_CHOICE_BATCH);
	cr_assert(o.quiet);
	cr_assert_eq(o.color, TG_COLOR_NEVER);
	cr_assert_str_eq(o.argv[0], "make");
	tg_opts_free(&o);
}

Test(args, bad_values_are_errors)
{
	struct tg_opts o;
	const char *bad[][3] = {
		{ "--timeout", "soon", "--" }, { "--timeout", "0", "--" },
		{ "--max-procs", "-1", "--" }, { "--max-procs", "x", "--" },
		{ "--rollback-on", "sometimes", "--" }, { "--rollback-on", "256", "--" },
		{ "--log-level", "verbose", "--" }, { "--lock", "maybe", "--" },
		{ "--color", "blue", "--" }, { "--memory-limit", "lots", "--" },
		{ "--report-fd", "x", "--" }, { "--tx-failure", "some", "--" }, { "--journal-sync", "never", "--" },
	};
	for (size_t i = 0; i < TG_ARRAY_SIZE(bad); i++) {
		char *v[] = { "txguard", (char *)bad[i][0], (char *)bad[i][1], "--", "true", NULL };
		cr_assert_eq(tg_parse_args(5, v, &o, devnull), -EINVAL, "%s %s accepted", bad[i][0], bad[i][1]);
		tg_opts_free(&o);
	}
}

Test(args, no_command_is_an_error)
{
	struct tg_opts o;
	cr_assert_eq(PARSE(&o, "-w", "/tmp"), -EINVAL);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "--bogus", "--", "true"), -EINVAL);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "frobnicate"), -EINVAL);
	tg_opts_free(&o);
}

Test(args, subcommands)
{
	struct tg_opts o;
	cr_assert_eq(PARSE(&o, "policy", "check", "x.yaml", "y.yaml"), 0);
	cr_assert_eq(o.cmd, TG_CMD_POLICY_CHECK);
	cr_assert_str_eq(o.policies[1], "y.yaml");
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "policy", "explain", "--json", "--", "rm", "-rf", "/"), 0);
	cr_assert_eq(o.cmd, TG_CMD_POLICY_EXPLAIN);
	cr_assert(o.json);
	cr_assert_str_eq(o.explain_argv[2], "/");
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "policy", "explain", "rm"), -EINVAL);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "policy", "frob"), -EINVAL);
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "undo", "--force", "abc"), 0);
	cr_assert_eq(o.cmd, TG_CMD_UNDO);
	cr_assert(o.force);
	cr_assert_str_eq(o.id, "abc");
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "undo", "abc", "--force", "-w", "/ws"), 0);
	cr_assert(o.force);
	cr_assert_str_eq(o.id, "abc");
	cr_assert_str_eq(o.workspace, "/ws");
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "show", "id1", "--json"), 0);
	cr_assert(o.json);
	cr_assert_str_eq(o.id, "id1");
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "undo"), 0);
	cr_assert_null(o.id);
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "redo", "--force", "--json", "--dry-run"), 0);
	cr_assert_eq(o.cmd, TG_CMD_REDO);
	cr_assert(o.force && o.json && o.dry_run);
	cr_assert_null(o.id);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "redo", "abc"), -EINVAL); /* the last undo only */
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "diff", "id1", "src/a.c"), 0);
	cr_assert_str_eq(o.path, "src/a.c");
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "show"), -EINVAL);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "doctor", "--json"), 0);
	cr_assert_eq(o.cmd, TG_CMD_DOCTOR);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "recover", "-w", "/ws"), 0);
	cr_assert_eq(o.cmd, TG_CMD_RECOVER);
	tg_opts_free(&o);
}

Test(args, help_and_version)
{
	struct tg_opts o;
	cr_assert_eq(PARSE(&o, "--help"), 0);
	cr_assert_eq(o.cmd, TG_CMD_HELP);
	cr_assert_null(o.help_topic);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "undo", "--help"), 0);
	cr_assert_eq(o.cmd, TG_CMD_HELP);
	cr_assert_str_eq(o.help_topic, "undo");
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "redo", "--help"), 0);
	cr_assert_eq(o.cmd, TG_CMD_HELP);
	cr_assert_str_eq(o.help_topic, "redo");
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "policy", "check", "-h"), 0);
	cr_assert_str_eq(o.help_topic, "policy check");
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "help", "log"), 0);
	cr_assert_str_eq(o.help_topic, "log");
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "-V"), 0);
	cr_assert_eq(o.cmd, TG_CMD_VERSION);
	tg_opts_free(&o);
}

Test(args, rollback_rules)
{
	struct tg_opts o;
	cr_assert_eq(PARSE(&o, "--", "true"), 0);
	cr_assert_not(tg_should_rollback(&o, false, false, 0));
	cr_assert(tg_should_rollback(&o, false, false, 1));
	cr_assert(tg_should_rollback(&o, true, false, 143));
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "--rollback-on", "2", "--", "grep"), 0);
	cr_assert_not(tg_should_rollback(&o, false, false, 1));
	cr_assert(tg_should_rollback(&o, false, false, 2));
	cr_assert(tg_should_rollback(&o, false, true, 0));
	tg_opts_free(&o);

	cr_assert_eq(PARSE(&o, "--rollback-on", "never", "--", "x"), 0);
	cr_assert_not(tg_should_rollback(&o, true, true, 9));
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "--rollback-on", "always", "--", "x"), 0);
	cr_assert(tg_should_rollback(&o, false, false, 0));
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "--rollback-on", "signal", "--", "x"), 0);
	cr_assert_not(tg_should_rollback(&o, false, false, 1));
	cr_assert(tg_should_rollback(&o, true, false, 137));
	tg_opts_free(&o);
}

/* ---- one grammar: txguard [OPTIONS] SUBCOMMAND, txguard [OPTIONS] -- CMD ---- */

/* Parse with errors captured: returns what tg_parse_args() printed. */
static char errbuf[1024];

static int parse_err(struct tg_opts *o, char **v, size_t n)
{
	memcpy(argv_store, v, (n + 1) * sizeof(*v));
	memset(errbuf, 0, sizeof(errbuf));
	FILE *f = fmemopen(errbuf, sizeof(errbuf) - 1, "w");
	int rc = tg_parse_args((int)n, argv_store, o, f);
	fclose(f);
	return rc;
}

#define PARSE_ERR(o, ...)                                               \
	({                                                              \
		char *v_[] = { "txguard", __VA_ARGS__, NULL };          \
		parse_err((o), v_, TG_ARRAY_SIZE(v_) - 1);              \
	})

Test(args, options_before_a_subcommand)
{
	struct tg_opts o;
	cr_assert_eq(PARSE(&o, "-q", "log"), 0);
	cr_assert_eq(o.cmd, TG_CMD_LOG);
	cr_assert(o.quiet);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "-w", "log", "--state-dir=/s", "show", "abc"), 0);
	cr_assert_eq(o.cmd, TG_CMD_SHOW, "-w's value 'log' is not the subcommand");
	cr_assert_str_eq(o.workspace, "log");
	cr_assert_str_eq(o.state_dir, "/s");
	cr_assert_str_eq(o.id, "abc");
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "--work", "/w", "-qv", "undo", "--force"), 0);
	cr_assert_eq(o.cmd, TG_CMD_UNDO);
	cr_assert_str_eq(o.workspace, "/w");
	cr_assert(o.force && o.quiet && o.verbose);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "-qw", "/w", "policy", "check"), 0);
	cr_assert_eq(o.cmd, TG_CMD_POLICY_CHECK);
	cr_assert_str_eq(o.workspace, "/w");
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "status", "--json"), 0);
	cr_assert_eq(o.cmd, TG_CMD_STATUS);
	cr_assert(o.json);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "--force-workspace", "-w", "/", "--", "log"), 0);
	cr_assert_eq(o.cmd, TG_CMD_RUN, "after '--' log is a program");
	cr_assert(o.force_workspace);
	cr_assert_str_eq(o.argv[0], "log");
	cr_assert_null(o.argv[1]);
	tg_opts_free(&o);
}

Test(args, bare_word_suggests_dashdash)
{
	struct tg_opts o;
	cr_assert_eq(PARSE_ERR(&o, "-q", "ls", "-l"), -EINVAL);
	cr_assert_str_eq(errbuf, "txguard: 'ls' is not a subcommand; did you mean "
	                         "'txguard -q -- ls ...'? (commands go after '--')\n");
	tg_opts_free(&o);
	cr_assert_eq(PARSE_ERR(&o, "lgo"), -EINVAL);
	cr_assert(strstr(errbuf, "did you mean 'txguard log'?"), "%s", errbuf);
	cr_assert_eq(strchr(errbuf, '\n'), errbuf + strlen(errbuf) - 1, "one line: %s", errbuf);
	tg_opts_free(&o);
}

Test(args, every_error_is_one_line)
{
	struct tg_opts o;
	const char *cases[][3] = {
		{ "--timeout", "soon", "--" }, { "--nosuch", "--", "true" },
		{ "policy", "nosuch", NULL }, { "show", NULL, NULL }, { "-q", NULL, NULL },
	};
	for (size_t i = 0; i < TG_ARRAY_SIZE(cases); i++) {
		char *v[5] = { "txguard", NULL };
		size_t n = 1;
		for (size_t k = 0; k < 3 && cases[i][k]; k++)
			v[n++] = (char *)cases[i][k];
		v[n] = NULL;
		cr_assert_eq(parse_err(&o, v, n), -EINVAL, "case %zu", i);
		size_t len = strlen(errbuf);
		cr_assert(len > 10 && errbuf[len - 1] == '\n' && !memchr(errbuf, '\n', len - 1),
		          "case %zu: not one line: %s", i, errbuf);
		cr_assert(strncmp(errbuf, "txguard: ", 9) == 0, "%s", errbuf);
		tg_opts_free(&o);
	}
}

/* ---- the environment, resolved once at the edge (tg_opts_resolve_env) ---- */

static const char *const env_names[] = {
	"TXGUARD_STATE_DIR", "TXGUARD_JOURNAL_SYNC", "TXGUARD_HISTORY_MAX_RUNS",
	"TXGUARD_HISTORY_MAX_BYTES", "TG_JOURNAL_DEBUG", "TXGUARD_POLICY",
	"TXGUARD_DEFAULT_POLICY_DIR", "TXGUARD_PROXY_RESOLVE", "TXGUARD_PROXY_TIMEOUT",
};

/* Each Criterion test runs in its own process: setenv stays in it. */
static void env_clear(void)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(env_names); i++)
		unsetenv(env_names[i]);
}

static int resolve_err(struct tg_opts *o)
{
	memset(errbuf, 0, sizeof(errbuf));
	FILE *f = fmemopen(errbuf, sizeof(errbuf) - 1, "w");
	int rc = tg_opts_resolve_env(o, f);
	fclose(f);
	return rc;
}

Test(env, nothing_set_leaves_the_defaults)
{
	struct tg_opts o;
	env_clear();
	cr_assert_eq(PARSE(&o, "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), 0);
	cr_assert_null(o.state_dir);
	cr_assert_not(o.journal_sync_set);
	cr_assert_eq(o.journal_sync, TG_SYNC_CHOICE_AUTO);
	cr_assert_eq(o.history_max_runs, 0);
	cr_assert_eq(o.history_max_bytes, 0);
	cr_assert_null(o.env_policies);
	cr_assert_null(o.default_policy_dir);
	cr_assert_null(o.proxy_resolve);
	cr_assert_eq(o.proxy_timeout_ms, 0);
	tg_opts_free(&o);
}

Test(env, bad_journal_sync_names_the_variable)
{
	struct tg_opts o;
	env_clear();
	setenv("TXGUARD_JOURNAL_SYNC", "sometimes", 1);
	cr_assert_eq(PARSE(&o, "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), -EINVAL);
	cr_assert(strstr(errbuf, "TXGUARD_JOURNAL_SYNC"), "%s", errbuf);
	tg_opts_free(&o);
}

Test(env, journal_sync_flag_beats_the_variable)
{
	struct tg_opts o;
	env_clear();
	setenv("TXGUARD_JOURNAL_SYNC", "batch", 1);
	cr_assert_eq(PARSE(&o, "--journal-sync", "full", "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), 0);
	cr_assert_eq(o.journal_sync, TG_SYNC_CHOICE_FULL);
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), 0);
	cr_assert_eq(o.journal_sync, TG_SYNC_CHOICE_BATCH);
	tg_opts_free(&o);
}

Test(env, state_dir_must_be_absolute_and_the_flag_beats_it)
{
	struct tg_opts o;
	env_clear();
	setenv("TXGUARD_STATE_DIR", "rel/state", 1);
	cr_assert_eq(PARSE(&o, "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), -EINVAL);
	cr_assert(strstr(errbuf, "TXGUARD_STATE_DIR"), "%s", errbuf);
	tg_opts_free(&o);
	setenv("TXGUARD_STATE_DIR", "/srv/state", 1);
	cr_assert_eq(PARSE(&o, "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), 0);
	cr_assert_str_eq(o.state_dir, "/srv/state");
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "--state-dir", "/given", "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), 0);
	cr_assert_str_eq(o.state_dir, "/given");
	tg_opts_free(&o);
}

/* A relative --state-dir is the cwd's (it was refused later, as "cannot
 * open the journal: Invalid argument"); an empty one names no place. */
Test(env, relative_state_dir_flag_is_made_absolute)
{
	struct tg_opts o;
	env_clear();
	char *cwd = getcwd(NULL, 0);
	cr_assert_not_null(cwd);
	cr_assert_eq(chdir("/usr/share"), 0);
	cr_assert_eq(PARSE(&o, "--state-dir", "../st/./x", "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), 0);
	cr_assert_str_eq(o.state_dir, "/usr/st/x");
	tg_opts_free(&o);
	cr_assert_eq(PARSE(&o, "--state-dir", "", "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), -EINVAL);
	cr_assert(strstr(errbuf, "--state-dir"), "%s", errbuf);
	tg_opts_free(&o);
	cr_assert_eq(chdir(cwd), 0);
	free(cwd);
}

Test(env, history_bounds)
{
	struct tg_opts o;
	const char *bad_runs[] = { "0", "-3", "ten", "5x" };
	env_clear();
	for (size_t i = 0; i < TG_ARRAY_SIZE(bad_runs); i++) {
		setenv("TXGUARD_HISTORY_MAX_RUNS", bad_runs[i], 1);
		cr_assert_eq(PARSE(&o, "--", "true"), 0);
		cr_assert_eq(resolve_err(&o), -EINVAL, "%s", bad_runs[i]);
		cr_assert(strstr(errbuf, "TXGUARD_HISTORY_MAX_RUNS"), "%s", errbuf);
		tg_opts_free(&o);
	}
	setenv("TXGUARD_HISTORY_MAX_RUNS", "7", 1);
	setenv("TXGUARD_HISTORY_MAX_BYTES", "2M", 1);
	cr_assert_eq(PARSE(&o, "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), 0);
	cr_assert_eq(o.history_max_runs, 7);
	cr_assert_eq(o.history_max_bytes, 2u << 20);
	tg_opts_free(&o);
}

Test(env, policy_paths_and_default_dir)
{
	struct tg_opts o;
	env_clear();
	setenv("TXGUARD_POLICY", "/a.yaml::/b.d", 1);
	setenv("TXGUARD_DEFAULT_POLICY_DIR", "/defaults", 1);
	cr_assert_eq(PARSE(&o, "-p", "/c.yaml", "-w", "/", "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), 0);
	cr_assert_str_eq(o.default_policy_dir, "/defaults");
	char **paths = NULL;
	cr_assert_eq(tg_policy_paths(&o, NULL, &paths), 0);
	cr_assert_str_eq(paths[0], "/defaults");
	cr_assert_str_eq(paths[1], "/a.yaml");
	cr_assert_str_eq(paths[2], "/b.d");
	cr_assert_str_eq(paths[3], "/c.yaml");
	cr_assert_null(paths[4]);
	tg_strv_free(paths);
	tg_opts_free(&o);
	/* --no-default-policy drops the default dir, not $TXGUARD_POLICY. */
	cr_assert_eq(PARSE(&o, "--no-default-policy", "-w", "/", "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), 0);
	cr_assert_eq(tg_policy_paths(&o, NULL, &paths), 0);
	cr_assert_str_eq(paths[0], "/a.yaml");
	cr_assert_str_eq(paths[1], "/b.d");
	cr_assert_null(paths[2]);
	tg_strv_free(paths);
	/* A workspace the caller resolved already: its policy file when it
	 * has one, after $TXGUARD_POLICY and before -p. */
	char dir[] = "/tmp/tg-paths-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(tg_policy_paths(&o, dir, &paths), 0);
	cr_assert_null(paths[2], "no .txguard.yaml, no entry");
	tg_strv_free(paths);
	char *wp = tg_asprintf("%s/.txguard.yaml", dir);
	FILE *f = fopen(wp, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(tg_policy_paths(&o, dir, &paths), 0);
	cr_assert_str_eq(paths[2], wp);
	cr_assert_null(paths[3]);
	tg_strv_free(paths);
	unlink(wp);
	rmdir(dir);
	free(wp);
	tg_opts_free(&o);
}

Test(env, proxy_settings)
{
	struct tg_opts o;
	env_clear();
	setenv("TXGUARD_PROXY_RESOLVE", "a.test:127.0.0.1", 1);
	setenv("TXGUARD_PROXY_TIMEOUT", "2s", 1);
	cr_assert_eq(PARSE(&o, "--", "true"), 0);
	cr_assert_eq(resolve_err(&o), 0);
	cr_assert_str_eq(o.proxy_resolve, "a.test:127.0.0.1");
	cr_assert_eq(o.proxy_timeout_ms, 2000);
	tg_opts_free(&o);
	const char *bad_timeouts[] = { "soon", "0", "2h" };
	for (size_t i = 0; i < TG_ARRAY_SIZE(bad_timeouts); i++) {
		setenv("TXGUARD_PROXY_TIMEOUT", bad_timeouts[i], 1);
		cr_assert_eq(PARSE(&o, "--", "true"), 0);
		cr_assert_eq(resolve_err(&o), -EINVAL, "%s", bad_timeouts[i]);
		cr_assert(strstr(errbuf, "TXGUARD_PROXY_TIMEOUT"), "%s", errbuf);
		tg_opts_free(&o);
	}
}
