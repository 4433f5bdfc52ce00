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

static void judge_cgroup(const struct tg_policy *p, const char *cgroup, struct tg_verdict *v)
{
	struct tg_op op = { .kind = TG_OP_PROCESS, .name = "kill" };
	op.proc.scope = TG_PROC_PID;
	op.proc.pid = 4242;
	op.proc.sig = 15;
	op.proc.nvictims = 1;
	op.proc.victims[0] = (struct tg_proc_victim){ 4242, 1000, "node", "" };
	snprintf(op.proc.victims[0].cgroup, sizeof(op.proc.victims[0].cgroup), "%s", cgroup);
	tg_policy_decide(p, &op, v);
}

Test(process, allow_rule_names_cgroups)
{
	struct tg_policy *p = load_yaml(
		"version: 1\nrules:\n"
		"  - id: dev-cgroups\n    reason: the dev server's units\n    action: allow\n"
		"    process:\n      cgroup: [/system.slice/devserver.service, \"/user.slice/*\",\n"
		"               \"/work.slice/**\"]\n"
		"    examples:\n      match: [\"node cgroup=/system.slice/devserver.service\",\n"
		"               \"node cgroup=/work.slice/a/b.scope uid=1000\"]\n"
		"      not_match: [node, \"node cgroup=/system.slice/sshd.service\"]\n");
	struct tg_verdict v;
	cr_expect_eq(tg_policy_check_examples(p, stderr), 0);
	judge_cgroup(p, "/system.slice/devserver.service", &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
	judge_cgroup(p, "/user.slice/user-1000.slice", &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
	judge_cgroup(p, "/work.slice/x/y.scope", &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
	/* '*' stays within one level, as in path rules. */
	judge_cgroup(p, "/user.slice/user-1000.slice/session-2.scope", &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	cr_expect_str_eq(v.rule_id, "signal-outside-tree");
	judge_cgroup(p, "/system.slice/devserver.service.evil", &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	judge_cgroup(p, "/system.slice/postgresql.service", &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	/* An unknown cgroup (unreadable, too long) matches no rule. */
	judge_cgroup(p, "", &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	tg_policy_free(p);
}

Test(process, cgroup_with_program_needs_both)
{
	struct tg_policy *p = load_yaml(
		"version: 1\nrules:\n"
		"  - id: a\n    reason: r\n    action: allow\n"
		"    process: {program: [vite], cgroup: [/user.slice/**]}\n");
	struct tg_verdict v;
	judge_cgroup(p, "/user.slice/u.slice/s.scope", &v);
	cr_expect_eq(v.action, TG_ACT_DENY, "node is not vite");
	tg_policy_free(p);
}

static void expect_load_error(const char *yaml, const char *where)
{
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	cr_expect_eq(tg_policy_load_string(&p, "t.yaml", yaml, strlen(yaml), &d), -EINVAL,
	             "accepted: %s", yaml);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	tg_policy_diags_print(&d, f);
	fclose(f);
	cr_expect(buf && strstr(buf, where), "no %s in: %s", where, buf ? buf : "");
	free(buf);
	tg_policy_diags_clear(&d);
	tg_policy_free(p);
}

Test(process, bad_cgroups_are_refused_with_their_place)
{
	static const char head[] =
		"version: 1\nrules:\n  - id: a\n    reason: r\n    action: allow\n    process:\n";
	char y[512];
	snprintf(y, sizeof(y), "%s      cgroup: [system.slice/x.service]\n", head);
	expect_load_error(y, "t.yaml:7:16:");
	snprintf(y, sizeof(y), "%s      cgroup: [/ok, {a: b}]\n", head);
	expect_load_error(y, "t.yaml:7:21:");
	snprintf(y, sizeof(y), "%s      cgroup: {a: b}\n", head);
	expect_load_error(y, "t.yaml:7:15:");
	snprintf(y, sizeof(y), "%s      cgroup: [\"/x[\"]\n", head);
	expect_load_error(y, "t.yaml:7:");
	snprintf(y, sizeof(y), "%s      cgroups: [/x]\n", head);
	expect_load_error(y, "t.yaml:7:7:");
}

Test(process, cgroup_line_of_proc_pid_cgroup)
{
	char out[64];
	/* v2 */
	cr_expect_eq(tg_cgroup_from_text("0::/user.slice/u.slice/s.scope\n", out, sizeof(out)), 0);
	cr_expect_str_eq(out, "/user.slice/u.slice/s.scope");
	/* hybrid: the unified line wins over systemd's v1 one */
	cr_expect_eq(tg_cgroup_from_text("12:cpu,cpuacct:/x\n1:name=systemd:/v1/a.service\n"
	                                 "0::/system.slice/a.service\n", out, sizeof(out)), 0);
	cr_expect_str_eq(out, "/system.slice/a.service");
	/* v1 only: systemd's named hierarchy */
	cr_expect_eq(tg_cgroup_from_text("3:memory:/m\n1:name=systemd:/system.slice/b.service\n",
	                                 out, sizeof(out)), 0);
	cr_expect_str_eq(out, "/system.slice/b.service");
	/* neither, a forged second line, too long: unknown */
	cr_expect_eq(tg_cgroup_from_text("3:memory:/m\n", out, sizeof(out)), -ENOENT);
	cr_expect_str_eq(out, "");
	cr_expect_eq(tg_cgroup_from_text("0::/a\n0::/b\n", out, sizeof(out)), -ENOENT);
	cr_expect_eq(tg_cgroup_from_text("0::/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	                                 out, sizeof(out)), -ENOENT);
	/* this very process, when /proc/self/cgroup shows a line */
	char self[256];
	if (tg_read_proc_cgroup(getpid(), self, sizeof(self)) == 0)
		cr_expect(self[0] == '/', "%s", self);
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
