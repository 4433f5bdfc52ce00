/* test_util.h — helpers shared by the policy tests. */
#pragma once

#include <criterion/criterion.h>
#include <string.h>

#include "policy/argv.h"
#include "policy/policy.h"
#include "base/util.h"

#define WS "/home/dev/project"
#define HOME "/home/dev"
#define STATE "/home/dev/.local/state/txguard"

/* Write text to path (created or truncated), or fail the test. */
static inline void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "cannot write %s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0, "cannot write %s", path);
}

static inline struct tg_policy *load_yaml(const char *yaml)
{
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	int r = tg_policy_load_string(&p, "t.yaml", yaml, strlen(yaml), &d);
	if (r < 0)
		tg_policy_diags_print(&d, stderr);
	cr_assert_eq(r, 0, "policy failed to load");
	tg_policy_diags_clear(&d);
	struct tg_policy_ctx ctx = { WS, HOME, STATE };
	tg_policy_set_ctx(p, &ctx);
	return p;
}

static inline struct tg_policy *load_default(void)
{
	const char *paths[] = { TG_TEST_POLICYDIR };
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	int r = tg_policy_load(&p, paths, 1, &d);
	if (r < 0)
		tg_policy_diags_print(&d, stderr);
	cr_assert_eq(r, 0, "default policy failed to load");
	tg_policy_diags_clear(&d);
	struct tg_policy_ctx ctx = { WS, HOME, STATE };
	tg_policy_set_ctx(p, &ctx);
	return p;
}

/* Judge an exec of a shell-quoted line as if run from cwd WS; the program
 * is /usr/bin/NAME unless argv[0] has a slash. */
static inline void judge_line(const struct tg_policy *p, const char *line, struct tg_verdict *v)
{
	char **argv = NULL;
	cr_assert_eq(tg_argv_split(line, &argv), 0, "cannot split %s", line);
	struct tg_op op = { .kind = TG_OP_EXEC, .name = "execve" };
	op.argv = argv;
	op.argc = tg_strv_len(argv);
	op.path = strchr(argv[0], '/') ? tg_strdup(argv[0]) : tg_asprintf("/usr/bin/%s", argv[0]);
	tg_policy_decide(p, &op, v);
	tg_op_clear(&op);
}
