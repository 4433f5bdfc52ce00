/* common.c — what the subcommands share: the one error-reporting family and
 * the policy paths. The dispatcher (cli.c) sits above; nothing here calls a
 * subcommand. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "base/path.h"
#include "common.h"
#include "config.h"

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
