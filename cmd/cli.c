/* cli.c — dispatch to subcommands, and the one error-reporting family. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "base/path.h"


void tg_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	fputs("txguard: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	errno = saved;
}

int tg_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("txguard: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 125;
}

static int push_env_paths(char ***v)
{
	const char *env = getenv("TXGUARD_POLICY");
	if (!env || !*env)
		return 0;
	_cleanup_free_ char *copy = tg_strdup(env);
	if (!copy)
		return -ENOMEM;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
		if (tg_strv_push(v, tok) < 0)
			return -ENOMEM;
	return 0;
}

/* The installed policy.d, or the source tree's when running from a build
 * directory that was never installed (tests, the quick start). */
static const char *default_policy_dir(void)
{
	const char *env = getenv("TXGUARD_DEFAULT_POLICY_DIR");
	if (env && *env)
		return env;
	if (access(TG_POLICYDIR, R_OK) == 0)
		return TG_POLICYDIR;
	return TG_SOURCE_POLICYDIR;
}

int tg_policy_paths(const struct tg_opts *o, char ***out)
{
	_cleanup_strv_ char **v = calloc(1, sizeof(char *));
	if (!v)
		return -ENOMEM;
	if (!o->no_default_policy && tg_strv_push(&v, default_policy_dir()) < 0)
		return -ENOMEM;
	if (push_env_paths(&v) < 0)
		return -ENOMEM;
	/* The workspace's own policy, when it has one (the command may not
	 * write it: see tg_workspace_policy_file()). */
	_cleanup_free_ char *ws = NULL;
	if (tg_workspace_path(o, &ws) == 0) {
		_cleanup_free_ char *wp = tg_path_join(ws, TG_WORKSPACE_POLICY);
		if (!wp)
			return -ENOMEM;
		if (access(wp, F_OK) == 0 && tg_strv_push(&v, wp) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; o->policies && o->policies[i]; i++)
		if (tg_strv_push(&v, o->policies[i]) < 0)
			return -ENOMEM;
	*out = steal_pointer(&v);
	return 0;
}

int tg_cli_main(int argc, char **argv)
{
	struct tg_opts o;
	int prc = tg_parse_args(argc, argv, &o, stderr);
	if (prc == 0)
		prc = tg_opts_resolve_env(&o, stderr);
	if (prc < 0) {
		tg_opts_free(&o);
		/* Out of memory is txguard failing, not the caller's mistake. */
		if (prc == -ENOMEM) {
			fputs("txguard: out of memory while reading the command line\n", stderr);
			return 125; /* the contract's "txguard failed" */
		}
		return TG_EXIT_USAGE;
	}
	int rc;
	switch (o.cmd) {
	case TG_CMD_HELP:
		rc = tg_print_help(o.help_topic, stdout, stderr) < 0 ? TG_EXIT_USAGE : 0;
		break;
	case TG_CMD_VERSION: printf("txguard %s\n", TG_VERSION); rc = 0; break;
	case TG_CMD_RUN: rc = tg_cmd_run(&o); break;
	case TG_CMD_POLICY_CHECK: rc = tg_cmd_policy_check(&o); break;
	case TG_CMD_POLICY_EXPLAIN: rc = tg_cmd_policy_explain(&o); break;
	case TG_CMD_DOCTOR: rc = tg_cmd_doctor(&o); break;
	case TG_CMD_RECOVER: rc = tg_cmd_recover(&o); break;
	case TG_CMD_STATUS: rc = tg_cmd_status(&o); break;
	default: rc = tg_cmd_history(&o); break;
	}
	tg_opts_free(&o);
	return rc;
}
