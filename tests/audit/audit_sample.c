/* audit_sample.c — write real tg_report_write()/tg_log output of every shape
 * into a directory, for tests/audit/schema_test.sh to validate against the
 * JSON Schemas. Usage: audit_sample OUTDIR */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "base/util.h"

static int open_out(const char *dir, const char *name)
{
	_cleanup_free_ char *p = tg_asprintf("%s/%s", dir, name);
	return p ? open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
}

static char *argv_bad[] = { "sh", "-c", "rm -rf \xff\xfe", NULL };

static struct tg_change change_v[] = {
	{ TG_CHANGE_CREATED, "new.txt", NULL },
	{ TG_CHANGE_MODIFIED, "m\xc3\xa9.c", NULL },
	{ TG_CHANGE_DELETED, "gone\x80", NULL },
	{ TG_CHANGE_RENAMED, "to\xff", "from" },
	{ TG_CHANGE_METADATA, "x.sh", NULL },
};
static const struct tg_changes changes = {
	.v = change_v, .n = 5, .count = { 1, 1, 1, 1, 1 }, .bytes_saved = 42, .journal_bytes = 4096,
};

/* Every kind of op, each judged once with each action. */
static void ops(struct tg_op *v, size_t *n)
{
	size_t i = 0;
	v[i++] = (struct tg_op){ .kind = TG_OP_EXEC, .name = "execve", .pid = 10, .path = "/bin/sh",
	                         .argv = argv_bad, .argc = 3 };
	v[i++] = (struct tg_op){ .kind = TG_OP_OPEN, .name = "openat", .pid = 10, .path = "/etc/pa\xffss",
	                         .flags = O_WRONLY | O_TRUNC, .mode = 0644 };
	v[i++] = (struct tg_op){ .kind = TG_OP_RENAME, .name = "renameat2", .pid = 11, .path = "/w/a",
	                         .path2 = "/w/b" };
	v[i++] = (struct tg_op){ .kind = TG_OP_SYMLINK, .name = "symlinkat", .pid = 11, .path = "/w/l",
	                         .target = "../../etc" };
	v[i++] = (struct tg_op){ .kind = TG_OP_XATTR, .name = "setxattr", .pid = 11, .path = "/w/f",
	                         .xattr_name = "user.x" };
	v[i++] = (struct tg_op){ .kind = TG_OP_CHOWN, .name = "fchownat", .pid = 11, .path = "/w/f",
	                         .uid = 0, .gid = -1 };
	v[i] = (struct tg_op){ .kind = TG_OP_CONNECT, .name = "connect", .pid = 12 };
	struct sockaddr_in *in = (struct sockaddr_in *)&v[i].addr;
	in->sin_family = AF_INET;
	in->sin_port = htons(80);
	in->sin_addr.s_addr = htonl(0x7f000001);
	v[i++].addrlen = sizeof(*in);
	v[i++] = (struct tg_op){ .kind = TG_OP_SYSCALL, .name = "ptrace", .pid = 12 };
	*n = i;
}

static const struct tg_verdict verdicts[] = {
	{ .action = TG_ACT_ALLOW },
	{ .action = TG_ACT_AUDIT, .rule_id = "audit-net", .reason = "watch", .source = "a.yaml:3" },
	{ .action = TG_ACT_DENY, .err = EACCES, .rule_id = "no-etc", .reason = "system files", .source = "a.yaml:9" },
	{ .action = TG_ACT_KILL, .rule_id = "no-\xffkill", .reason = NULL, .source = NULL },
};

static int write_log(const char *dir, const char *name, enum tg_log_level level, struct tg_report *r)
{
	int fd = open_out(dir, name);
	if (fd < 0)
		return -1;
	struct tg_log *log = tg_log_open(fd, level);
	struct tg_op v[16];
	size_t n;
	ops(v, &n);
	tg_log_tx_begin(log, "20261130T160000-abc", "/w\xff");
	tg_log_spawn(log, 1, 10, false);
	tg_log_spawn(log, 10, 11, true);
	tg_log_exec(log, 10, "/usr/bin/dash", argv_bad);
	tg_log_exec(log, 10, NULL, NULL);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < TG_ARRAY_SIZE(verdicts); k++)
			tg_log_decision(log, &v[i], &verdicts[k], k != 3);
	tg_log_kill(log, 11, "argv changed after the check");
	tg_log_exit(log, 11, SIGKILL);
	tg_log_exit(log, 10, 0x8b);   /* SIGSEGV + core */
	tg_log_exit(log, 12, 3 << 8);
	tg_log_tx_commit(log, &changes);
	tg_log_tx_rollback(log, &changes, 0);
	tg_log_tx_rollback(log, NULL, -ENOSPC);
	tg_log_summary(log, r);
	int err = tg_log_error(log);
	tg_log_close(log);
	close(fd);
	return err;
}

static int write_report(const char *dir, const char *name, const struct tg_report *r)
{
	int fd = open_out(dir, name);
	if (fd < 0)
		return -1;
	int err = tg_report_write(fd, r);
	close(fd);
	return err;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: audit_sample OUTDIR\n");
		return 2;
	}
	const char *dir = argv[1];
	static const char *const files[] = { "/etc/txguard/policy.d/00-base.yaml" };
	struct tg_report r = {
		.argv = argv_bad, .workspace = "/w\xff", .txid = "20261130T160000-abc",
		.rollback_on = "2,3", .policy_files = files, .npolicy_files = 1,
		.start_wall_ns = tg_wall_ns(), .ran = true,
		.run = { .end = TG_END_SIGNALED, .term_signal = SIGSEGV, .exit_code = 139,
		         .nprocs = 3, .ntraps = 40 },
		.exit_status = 139, .outcome = TG_OUTCOME_ROLLED_BACK, .changes = &changes,
	};
	r.end_wall_ns = r.start_wall_ns + 2500000;
	struct tg_op v[16];
	size_t n;
	ops(v, &n);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < TG_ARRAY_SIZE(verdicts); k++)
			tg_report_add_decision(&r, &v[i], &verdicts[k], k != 3);
	int err = 0;
	err |= write_report(dir, "report-rolled-back.json", &r);
	err |= write_log(dir, "log-decisions.jsonl", TG_LOG_DECISIONS, &r);
	err |= write_log(dir, "log-exec.jsonl", TG_LOG_EXEC, &r);
	err |= write_log(dir, "log-all.jsonl", TG_LOG_ALL, &r);

	struct tg_report c = { .argv = (char *[]){ "make", "test", NULL }, .workspace = "/w", .workspace_source = "git",
	                       .txid = "t2", .rollback_on = "failure", .start_wall_ns = tg_wall_ns(),
	                       .duration_ns = 420000000, .ran = true,
	                       .run = { .end = TG_END_EXITED, .nprocs = 1 },
	                       .outcome = TG_OUTCOME_COMMITTED, .changes = &changes, .audit_only = true };
	c.end_wall_ns = c.start_wall_ns + c.duration_ns;
	err |= write_report(dir, "report-committed.json", &c);

	struct tg_report s = { .argv = (char *[]){ "x", NULL }, .workspace = "/w",
	                       .outcome = TG_OUTCOME_SETUP_FAILED, .exit_status = 125,
	                       .error = "ptrace(PTRACE_SEIZE): Operation not permitted" };
	err |= write_report(dir, "report-setup-failed.json", &s);

	struct tg_report t = c;
	t.audit_only = false;
	t.run = (struct tg_run_result){ .end = TG_END_TIMEOUT, .term_signal = SIGTERM, .exit_code = 143 };
	t.exit_status = 143;
	t.outcome = TG_OUTCOME_RESTORE_FAILED;
	t.error = "restore: No space left on device";
	t.kill_reason = NULL;
	err |= write_report(dir, "report-restore-failed.json", &t);

	tg_report_clear(&r);
	if (err) {
		fprintf(stderr, "audit_sample: a write failed\n");
		return 1;
	}
	return 0;
}
