/* common.c — what the subcommands share: the one error-reporting family and
 * the policy paths. The dispatcher (cli.c) sits above; nothing here calls a
 * subcommand. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "base/json.h"
#include "base/path.h"
#include "common.h"
#include "config.h"
#include "txn/txn.h"

static void say(const char *fmt, va_list ap)
{
	int saved = errno;
	fputs("txguard: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	errno = saved;
}

void tg_say_recovered(const struct tg_recovery *r, const char *state_dir, const char *where)
{
	fprintf(stderr, "txguard: restored %d interrupted transaction(s) %s", r->restored, where);
	if (r->kept)
		fprintf(stderr, "; %zu path(s) changed after its last record kept in %s/aside", r->kept, state_dir);
	fputc('\n', stderr);
}

void tg_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

int tg_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	return 125;
}

int tg_json_done(struct tg_json *j, const char *what)
{
	int rc = tg_json_newline(j);
	tg_json_free(j);
	return rc < 0 ? tg_fail("cannot write %s: %s", what, strerror(-rc)) : 0;
}

/* The installed policy.d, or the source tree's when running from a build
 * directory that was never installed (tests, the quick start); the
 * environment's (args.c) beats both. */
static const char *default_policy_dir(const struct tg_opts *o)
{
	if (o->default_policy_dir)
		return o->default_policy_dir;
	if (access(TG_POLICYDIR, R_OK) == 0)
		return TG_POLICYDIR;
	return TG_SOURCE_POLICYDIR;
}

static int push_all(char ***v, char *const *more)
{
	for (size_t i = 0; more && more[i]; i++)
		if (tg_strv_push(v, more[i]) < 0)
			return -ENOMEM;
	return 0;
}

int tg_policy_paths(const struct tg_opts *o, const char *workspace, char ***out)
{
	_cleanup_strv_ char **v = calloc(1, sizeof(char *));
	if (!v)
		return -ENOMEM;
	if (!o->no_default_policy && tg_strv_push(&v, default_policy_dir(o)) < 0)
		return -ENOMEM;
	if (push_all(&v, o->env_policies) < 0)
		return -ENOMEM;
	/* The workspace's own policy, when it has one (the command may not
	 * write it: run.c refuses that as the rule txguard.workspace-policy). */
	_cleanup_free_ char *resolved = NULL;
	const char *ws = workspace;
	if (!ws && tg_workspace_path(o, &resolved) == 0)
		ws = resolved;
	if (ws) {
		_cleanup_free_ char *wp = tg_path_join(ws, TG_WORKSPACE_POLICY);
		if (!wp)
			return -ENOMEM;
		if (access(wp, F_OK) == 0 && tg_strv_push(&v, wp) < 0)
			return -ENOMEM;
	}
	if (push_all(&v, o->policies) < 0)
		return -ENOMEM;
	*out = steal_pointer(&v);
	return 0;
}
