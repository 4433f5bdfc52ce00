/* test_process.c — calls on other processes (issue 14): the default keeps
 * them inside the tree, a `process:` allow rule names outside programs. */
#include "test_util.h"

#include <errno.h>
#include <unistd.h>

static void judge_kill(const struct tg_policy *p, const char *comm, long uid, int sig,
                       struct tg_verdict *v)
{
	struct tg_op op = { .kind = TG_OP_PROCESS, .name = "kill" };
	op.proc.scope = TG_PROC_PID;
	op.proc.pid = 4242;
	op.proc.sig = sig;
	if (comm) {
		op.proc.nvictims = 1;
		op.proc.victims[0].pid = 4242;
		op.proc.victims[0].uid = uid;
		snprintf(op.proc.victims[0].comm, sizeof(op.proc.victims[0].comm), "%s", comm);
	}
	tg_policy_decide(p, &op, v);
}

Test(process, inside_the_tree_is_allowed_outside_denied)
{
	struct tg_policy *p = load_default();
	struct tg_verdict v;
	judge_kill(p, NULL, -1, 9, &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
	judge_kill(p, "postgres", 999, 9, &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	cr_expect_eq(v.err, EPERM);
	cr_expect_str_eq(v.rule_id, "signal-outside-tree");
	judge_kill(p, "postgres", 999, 0, &v);
	cr_expect_str_eq(v.rule_id, "process-outside-tree");
	tg_policy_free(p);
}

Test(process, allow_rule_names_programs_and_uids)
{
	struct tg_policy *p = load_yaml(
		"version: 1\nrules:\n"
		"  - id: dev-server\n    reason: the dev server\n    action: allow\n"
		"    process:\n      program: [node, \"vite*\"]\n      uid: [1000]\n"
		"    examples:\n      match: [node uid=1000, vite-dev uid=1000]\n"
		"      not_match: [postgres uid=1000, node uid=0, node]\n");
	struct tg_verdict v;
	cr_expect_eq(tg_policy_check_examples(p, stderr), 0);
	judge_kill(p, "node", 1000, 15, &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
	judge_kill(p, "node", 0, 15, &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	/* A whole group: every outside member must be named. */
	struct tg_op op = { .kind = TG_OP_PROCESS, .name = "kill" };
	op.proc.scope = TG_PROC_PGRP;
	op.proc.sig = 15;
	op.proc.nvictims = 2;
	op.proc.victims[0] = (struct tg_proc_victim){ 1, 1000, "node" };
	op.proc.victims[1] = (struct tg_proc_victim){ 2, 1000, "bash" };
	tg_policy_decide(p, &op, &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	op.proc.nvictims = 1;
	tg_policy_decide(p, &op, &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
	/* kill(-1): no rule can name every process. */
	op.proc.scope = TG_PROC_ALL;
	op.proc.nvictims = 0;
	op.proc.whole_user = true;
	tg_policy_decide(p, &op, &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	tg_policy_free(p);
}

Test(process, bad_process_rules_are_refused)
{
	static const char *const bad[] = {
		"version: 1\nrules:\n  - id: a\n    reason: r\n    action: deny\n    process:\n      program: [x]\n",
		"version: 1\nrules:\n  - id: a\n    reason: r\n    action: allow\n    process:\n      uid: [-1]\n",
		"version: 1\nrules:\n  - id: a\n    reason: r\n    action: allow\n    process:\n      name: [x]\n",
		"version: 1\nrules:\n  - id: a\n    reason: r\n    action: allow\n    process: {}\n",
	};
	for (size_t i = 0; i < TG_ARRAY_SIZE(bad); i++) {
		struct tg_policy *p = NULL;
		struct tg_policy_diags d = { 0 };
		cr_expect_eq(tg_policy_load_string(&p, "t.yaml", bad[i], strlen(bad[i]), &d), -EINVAL,
		             "accepted: %s", bad[i]);
		tg_policy_diags_clear(&d);
		tg_policy_free(p);
	}
}

Test(process, explain_a_signal)
{
	struct tg_policy *p = load_default();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	tg_policy_explain_signal(p, getpid(), 9, true, f);
	fclose(f);
	cr_expect(strstr(buf, "\"verdict\":\"deny\"") != NULL, "%s", buf);
	cr_expect(strstr(buf, "\"rule\":\"signal-outside-tree\"") != NULL, "%s", buf);
	cr_expect(strstr(buf, "\"comm\":\"test-policy-pro") != NULL, "%s", buf);
	free(buf);
	tg_policy_free(p);
}
