/* audit_test.c — unit tests for the event log, the report and the human
 * lines (core/audit/audit.h). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "base/util.h"

/* Everything written to fd so far, as a malloc'd string. */
static char *slurp(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);
	cr_assert_geq(end, 0);
	char *buf = calloc(1, (size_t)end + 1);
	cr_assert_eq(pread(fd, buf, (size_t)end, 0), end);
	return buf;
}

static int tmpfd(void)
{
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	return dup(fileno(f));   /* tmpfile is unlinked; keep an fd past fclose */
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static size_t count_str(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static char *rm_argv[] = { "rm", "-rf", "/", NULL };

static struct tg_op exec_op(void)
{
	return (struct tg_op){ .kind = TG_OP_EXEC, .name = "execve", .pid = 42,
	                       .path = "/usr/bin/rm", .argv = rm_argv, .argc = 3 };
}

static const struct tg_verdict deny_v = { .action = TG_ACT_DENY, .err = EPERM,
                                          .rule_id = "no-rm-root", .reason = "deletes everything",
                                          .source = "base.yaml:12" };
static const struct tg_verdict allow_v = { .action = TG_ACT_ALLOW };

/* Emit one of every event on a log at level, return the text. */
static char *log_everything(enum tg_log_level level)
{
	int fd = tmpfd();
	struct tg_log *log = tg_log_open(fd, level);
	cr_assert_not_null(log);
	struct tg_op op = exec_op();
	struct tg_changes ch = { .n = 0 };
	struct tg_report r = { .outcome = TG_OUTCOME_COMMITTED };
	cr_assert_eq(tg_log_tx_begin(log, "tx-1", "/w"), 0);
	cr_assert_eq(tg_log_decision(log, &op, &allow_v, true), 0);
	cr_assert_eq(tg_log_decision(log, &op, &deny_v, true), 0);
	cr_assert_eq(tg_log_spawn(log, 1, 2, false), 0);
	cr_assert_eq(tg_log_exec(log, 2, "/bin/true", rm_argv), 0);
	cr_assert_eq(tg_log_exit(log, 2, 0), 0);
	cr_assert_eq(tg_log_kill(log, 2, "argv changed"), 0);
	cr_assert_eq(tg_log_tx_commit(log, &ch), 0);
	cr_assert_eq(tg_log_summary(log, &r), 0);
	cr_assert_eq(tg_log_error(log), 0);
	tg_log_close(log);
	char *s = slurp(fd);
	close(fd);
	return s;
}

Test(log, level_decisions)
{
	_cleanup_free_ char *s = log_everything(TG_LOG_DECISIONS);
	/* log_start, tx_begin, deny, kill, tx_commit, summary */
	cr_assert_eq(count_lines(s), 6, "%s", s);
	cr_assert_eq(count_str(s, "\"event\":\"decision\""), 1);
	cr_assert_eq(count_str(s, "\"action\":\"allow\""), 0);
	cr_assert_eq(count_str(s, "\"event\":\"process_start\""), 0);
	cr_assert_eq(count_str(s, "\"event\":\"summary\""), 1);
	cr_assert(strstr(s, "\"level\":\"decisions\""));
}

Test(log, level_exec)
{
	_cleanup_free_ char *s = log_everything(TG_LOG_EXEC);
	cr_assert_eq(count_lines(s), 9, "%s", s);
	cr_assert_eq(count_str(s, "\"event\":\"process_start\""), 1);
	cr_assert_eq(count_str(s, "\"event\":\"exec\""), 1);
	cr_assert_eq(count_str(s, "\"event\":\"process_exit\""), 1);
	cr_assert_eq(count_str(s, "\"action\":\"allow\""), 0);
}

Test(log, level_all)
{
	_cleanup_free_ char *s = log_everything(TG_LOG_ALL);
	cr_assert_eq(count_lines(s), 10, "%s", s);
	cr_assert_eq(count_str(s, "\"action\":\"allow\""), 1);
}

Test(log, seq_and_tx_on_every_event)
{
	_cleanup_free_ char *s = log_everything(TG_LOG_ALL);
	cr_assert(strstr(s, "\"event\":\"log_start\",\"seq\":0,"));
	cr_assert(strstr(s, "\"event\":\"summary\",\"seq\":9,"));
	/* every event after tx_begin carries the id */
	cr_assert_eq(count_str(s, "\"tx\":\"tx-1\""), 9);
}

Test(log, decision_fields)
{
	_cleanup_free_ char *s = log_everything(TG_LOG_DECISIONS);
	cr_assert(strstr(s, "\"pid\":42,\"syscall\":\"execve\",\"op\":\"exec\",\"path\":\"/usr/bin/rm\","
	                    "\"argv\":[\"rm\",\"-rf\",\"/\"],\"action\":\"deny\",\"enforced\":true,"
	                    "\"errno\":\"EPERM\",\"rule\":\"no-rm-root\",\"reason\":\"deletes everything\","
	                    "\"source\":\"base.yaml:12\"}"), "%s", s);
}

Test(log, exit_status_forms)
{
	int fd = tmpfd();
	struct tg_log *log = tg_log_open(fd, TG_LOG_EXEC);
	tg_log_exit(log, 7, 3 << 8);          /* exited 3 */
	tg_log_exit(log, 8, SIGKILL);         /* killed */
	tg_log_close(log);
	_cleanup_free_ char *s = slurp(fd);
	close(fd);
	cr_assert(strstr(s, "\"pid\":7,\"code\":3,\"signal\":null}"), "%s", s);
	cr_assert(strstr(s, "\"pid\":8,\"code\":null,\"signal\":9,\"signal_name\":\"SIGKILL\",\"core_dumped\":false}"), "%s", s);
}

Test(log, rollback_failure)
{
	int fd = tmpfd();
	struct tg_log *log = tg_log_open(fd, TG_LOG_DECISIONS);
	struct tg_changes ch = { .n = 2, .count = { 1, 1 }, .bytes_saved = 10, .journal_bytes = 99 };
	tg_log_tx_rollback(log, &ch, -EIO);
	tg_log_close(log);
	_cleanup_free_ char *s = slurp(fd);
	close(fd);
	cr_assert(strstr(s, "\"event\":\"tx_rollback\""), "%s", s);
	cr_assert(strstr(s, "\"paths\":2,\"counts\":{\"created\":1,\"modified\":1,\"deleted\":0,"
	                    "\"renamed\":0,\"metadata\":0},\"bytes_saved\":10,\"journal_bytes\":99,"
	                    "\"ok\":false,\"errno\":\"EIO\""), "%s", s);
}

Test(log, write_error_is_kept)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	struct tg_log *log = tg_log_open(p[1], TG_LOG_DECISIONS);
	cr_assert_not_null(log);
	cr_assert_eq(tg_log_error(log), -EPIPE);
	struct tg_op op = exec_op();
	cr_assert_eq(tg_log_decision(log, &op, &deny_v, true), -EPIPE);
	tg_log_close(log);
	close(p[1]);
}

Test(log, level_names)
{
	enum tg_log_level l;
	cr_assert_eq(tg_log_level_from_name("exec", &l), 0);
	cr_assert_eq(l, TG_LOG_EXEC);
	cr_assert_eq(tg_log_level_from_name("all", &l), 0);
	cr_assert_eq(l, TG_LOG_ALL);
	cr_assert_eq(tg_log_level_from_name("decisions", &l), 0);
	cr_assert_eq(l, TG_LOG_DECISIONS);
	cr_assert_eq(tg_log_level_from_name("verbose", &l), -EINVAL);
	cr_assert_eq(tg_log_level_from_name(NULL, &l), -EINVAL);
	cr_assert_str_eq(tg_log_level_name(TG_LOG_ALL), "all");
}

/* ---- report ---- */

static struct tg_change change_v[] = {
	{ TG_CHANGE_CREATED, "new.txt", NULL },
	{ TG_CHANGE_MODIFIED, "src/a.c", NULL },
	{ TG_CHANGE_DELETED, "old\xff.bin", NULL },
	{ TG_CHANGE_RENAMED, "b.txt", "a.txt" },
};

static struct tg_changes changes = {
	.v = change_v, .n = 4, .count = { 1, 1, 1, 1, 0 },
	.bytes_saved = 1234, .journal_bytes = 567,
};

static char *write_report(const struct tg_report *r)
{
	int fd = tmpfd();
	cr_assert_eq(tg_report_write(fd, r), 0);
	char *s = slurp(fd);
	close(fd);
	return s;
}

static const char *const policy_files[] = { "/etc/txguard/policy.d/00-base.yaml", "mine.yaml" };

static void fill_rolled_back(struct tg_report *r)
{
	r->argv = rm_argv;
	r->workspace = "/w";
	r->workspace_source = "git";
	r->txid = "20261130-1";
	r->rollback_on = "failure";
	r->policy_files = policy_files;
	r->npolicy_files = 2;
	r->start_wall_ns = 1795000000000000000ull;
	r->end_wall_ns = r->start_wall_ns + 1100000000ull;
	r->ran = true;
	r->run = (struct tg_run_result){ .end = TG_END_EXITED, .exit_code = 1, .main_pid = 42,
	                                 .nprocs = 3, .ntraps = 17 };
	r->exit_status = 1;
	r->outcome = TG_OUTCOME_ROLLED_BACK;
	r->changes = &changes;
}

Test(report, rolled_back_fields)
{
	struct tg_report r = { 0 };
	fill_rolled_back(&r);
	struct tg_op op = exec_op();
	cr_assert_eq(tg_report_add_decision(&r, &op, &deny_v, true), 0);
	cr_assert_eq(tg_report_add_decision(&r, &op, &allow_v, true), 0);
	cr_assert_eq(r.ndecisions, 1);
	_cleanup_free_ char *s = write_report(&r);
	cr_assert_eq(count_lines(s), 1);
	cr_assert(strstr(s, "{\"report_version\":1,\"txguard_version\":\""), "%s", s);
	cr_assert(strstr(s, "\"command\":[\"rm\",\"-rf\",\"/\"],\"workspace\":\"/w\","
	                    "\"transaction_id\":\"20261130-1\",\"start\":\"2026-11-18T11:06:40.000Z\",\"end\":\"2026-11-18T11:06:41.100Z\","), "%s", s);
	cr_assert(strstr(s, "\"duration_ms\":1100,\"duration_s\":1.1,\"outcome\":\"rolled_back\","
	                    "\"end_reason\":\"exited\",\"exit\":{\"status\":1,\"code\":1,\"signal\":null,"
	                    "\"signal_name\":null},\"error\":null"), "%s", s);
	cr_assert(strstr(s, "\"policy_files\":[\"/etc/txguard/policy.d/00-base.yaml\",\"mine.yaml\"],"
	                    "\"processes\":3,\"traps\":17,\"decisions\":[{\"time\":\""), "%s", s);
	cr_assert(strstr(s, "\"rule\":\"no-rm-root\""), "%s", s);
	cr_assert(strstr(s, "\"decisions_dropped\":0,\"decision_counts\":{\"denied\":1,\"killed\":0,\"audited\":0}"), "%s", s);
	cr_assert(strstr(s, "\"changes\":{\"total\":4,\"counts\":{\"created\":1,\"modified\":1,\"deleted\":1,"
	                    "\"renamed\":1,\"metadata\":0},\"bytes_saved\":1234,\"truncated\":false,"
	                    "\"created\":[\"new.txt\"],"
	                    "\"modified\":[\"src/a.c\"],\"deleted\":[\"old\xef\xbf\xbd.bin\"],"
	                    "\"deleted_hex\":[\"6f6c64ff2e62696e\"],\"metadata\":[],"
	                    "\"renamed\":[{\"from\":\"a.txt\",\"to\":\"b.txt\"}]},\"journal_bytes\":567,"
	                    "\"workspace_source\":\"git\"}\n"), "%s", s);
	tg_report_clear(&r);
	cr_assert_null(r.decisions);
}

Test(report, signal_exit)
{
	struct tg_report r = { 0 };
	fill_rolled_back(&r);
	r.run.end = TG_END_TIMEOUT;
	r.run.term_signal = SIGTERM;
	r.run.exit_code = 128 + SIGTERM;
	r.exit_status = 128 + SIGTERM;
	_cleanup_free_ char *s = write_report(&r);
	cr_assert(strstr(s, "\"end_reason\":\"timeout\",\"exit\":{\"status\":143,\"code\":null,"
	                    "\"signal\":15,\"signal_name\":\"SIGTERM\"}"), "%s", s);
}

Test(report, setup_failed)
{
	struct tg_report r = { .argv = rm_argv, .workspace = "/w", .outcome = TG_OUTCOME_SETUP_FAILED,
	                       .exit_status = 125, .error = "ptrace: Operation not permitted" };
	_cleanup_free_ char *s = write_report(&r);
	cr_assert(strstr(s, "\"transaction_id\":null,\"start\":null,\"end\":null,\"duration_ms\":0,"
	                    "\"duration_s\":0,\"outcome\":\"setup_failed\",\"end_reason\":null,"
	                    "\"exit\":{\"status\":125,\"code\":null,\"signal\":null,\"signal_name\":null},"
	                    "\"error\":\"ptrace: Operation not permitted\""), "%s", s);
	cr_assert(strstr(s, "\"changes\":null,\"journal_bytes\":0,\"workspace_source\":null}"), "%s", s);
}

Test(report, decisions_are_capped_and_counted)
{
	struct tg_report r = { 0 };
	struct tg_op op = exec_op();
	struct tg_verdict audit = { .action = TG_ACT_AUDIT, .rule_id = "a" };
	/* distinct threads: a repeat by the same thread is only counted */
	for (int i = 0; i < TG_REPORT_MAX_DECISIONS + 5; i++) {
		op.pid = 1000 + i;
		cr_assert_eq(tg_report_add_decision(&r, &op, &deny_v, true), 0);
	}
	cr_assert_eq(tg_report_add_decision(&r, &op, &audit, true), 0);
	cr_assert_eq(r.ndecisions, TG_REPORT_MAX_DECISIONS);
	cr_assert_eq(r.decisions_dropped, 6);
	cr_assert_eq(r.ndenied, TG_REPORT_MAX_DECISIONS + 5);
	cr_assert_eq(r.naudited, 1);
	/* the copies are deep: the last kept one still reads right */
	cr_assert_str_eq(r.decisions[TG_REPORT_MAX_DECISIONS - 1].op.argv[1], "-rf");
	cr_assert_str_eq(r.decisions[0].rule_id, "no-rm-root");
	tg_report_clear(&r);
}

/* One decision per intent: execvp walking $PATH for a denied program, or a
 * retry of the same call, is one decision with a count (issue 13). */
Test(report, repeats_are_one_decision_with_a_count)
{
	struct tg_report r = { 0 };
	const char *dirs[] = { "/usr/local/sbin/rm", "/usr/local/bin/rm", "/usr/sbin/rm", "/usr/bin/rm", "/bin/rm" };
	struct tg_op op = exec_op();
	for (size_t i = 0; i < 5; i++) {
		op.path = (char *)dirs[i];
		cr_assert_eq(tg_report_add_decision(&r, &op, &deny_v, true), i ? 1 : 0);
	}
	cr_assert_eq(r.ndecisions, 1);
	cr_assert_eq(r.decisions[0].count, 5);
	cr_assert_eq(r.ndenied, 1);
	/* another program name, another thread, another rule: new decisions */
	op.path = "/usr/bin/rmdir";
	cr_assert_eq(tg_report_add_decision(&r, &op, &deny_v, true), 0);
	op.pid = 43;
	cr_assert_eq(tg_report_add_decision(&r, &op, &deny_v, true), 0);
	struct tg_verdict other = deny_v;
	other.rule_id = "other";
	cr_assert_eq(tg_report_add_decision(&r, &op, &other, true), 0);
	/* a path op repeats only on the same path */
	struct tg_op u = { .kind = TG_OP_UNLINK, .name = "unlink", .nr = 87, .pid = 42, .path = "/etc/a" };
	cr_assert_eq(tg_report_add_decision(&r, &u, &deny_v, true), 0);
	cr_assert_eq(tg_report_add_decision(&r, &u, &deny_v, true), 1);
	u.path = "/etc/b";
	cr_assert_eq(tg_report_add_decision(&r, &u, &deny_v, true), 0);
	cr_assert_eq(r.ndecisions, 6);
	cr_assert_eq(r.decisions[4].count, 2);
	_cleanup_free_ char *s = write_report(&r);
	cr_assert(strstr(s, "\"count\":5"), "%s", s);
	tg_report_clear(&r);
}

Test(report, path_lists_are_capped)
{
	size_t n = TG_REPORT_MAX_PATHS + 5;
	struct tg_change *v = calloc(n, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i].kind = i == n - 1 ? TG_CHANGE_DELETED : TG_CHANGE_CREATED;
		v[i].path = tg_asprintf("f%zu", i);
	}
	struct tg_changes big = { .v = v, .n = n, .count = { n - 1, 0, 1 } };
	struct tg_report r = { .outcome = TG_OUTCOME_COMMITTED, .changes = &big };
	_cleanup_free_ char *s = write_report(&r);
	cr_assert(strstr(s, "\"changes\":{\"total\":10005,\"counts\":{\"created\":10004,"
	                    "\"modified\":0,\"deleted\":1,"), "%.300s", s);
	cr_assert(strstr(s, "\"truncated\":true,\"created\":[\"f0\",\"f1\","));
	cr_assert(strstr(s, ",\"f9999\"],\"modified\":[],\"deleted\":[],"));
	cr_assert_null(strstr(s, "\"f10000\""));
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

Test(report, write_error)
{
	struct tg_report r = { .outcome = TG_OUTCOME_COMMITTED };
	cr_assert_eq(tg_report_write(-1, &r), -EBADF);
}

/* ---- human lines ---- */

Test(text, denial_exec)
{
	struct tg_op op = exec_op();
	_cleanup_free_ char *l = tg_audit_denial_line(&op, &deny_v, true);
	cr_assert_str_eq(l, "txguard: denied exec `rm -rf /` by rule no-rm-root: deletes everything");
}

Test(text, denial_quotes_and_escapes)
{
	char *argv[] = { "rm", "my dir", "\x1b[2Jx", NULL };
	struct tg_op op = { .kind = TG_OP_EXEC, .name = "execve", .argv = argv };
	_cleanup_free_ char *l = tg_audit_denial_line(&op, &deny_v, true);
	cr_assert_str_eq(l, "txguard: denied exec `rm 'my dir' '\\x1b[2Jx'` by rule no-rm-root: deletes everything");
}

Test(text, denial_paths)
{
	struct tg_op un = { .kind = TG_OP_UNLINK, .name = "unlinkat", .path = "/home/u/.ssh/id\xc2\x9b" };
	struct tg_op rn = { .kind = TG_OP_RENAME, .name = "renameat2", .path = "/w/a", .path2 = "/etc/x" };
	struct tg_op op = { .kind = TG_OP_OPEN, .name = "openat", .path = "/etc/passwd", .flags = O_WRONLY, .writes = true };
	/* A read-only open: what a fanotify mark on a secret refuses. */
	struct tg_op rd = { .kind = TG_OP_OPEN, .name = "openat", .path = "/etc/shadow", .flags = O_RDONLY };
	struct tg_verdict v = { .action = TG_ACT_DENY, .err = EACCES, .rule_id = "secrets" };
	_cleanup_free_ char *a = tg_audit_denial_line(&un, &v, true);
	_cleanup_free_ char *b = tg_audit_denial_line(&rn, &v, true);
	_cleanup_free_ char *c = tg_audit_denial_line(&op, &v, false);
	_cleanup_free_ char *d = tg_audit_denial_line(&rd, &v, true);
	cr_assert_str_eq(a, "txguard: denied unlink /home/u/.ssh/id\\xc2\\x9b by rule secrets: no reason given");
	cr_assert_str_eq(b, "txguard: denied rename /w/a -> /etc/x by rule secrets: no reason given");
	cr_assert_str_eq(c, "txguard: would deny write to /etc/passwd by rule secrets: no reason given");
	cr_assert_str_eq(d, "txguard: denied read of /etc/shadow by rule secrets: no reason given");
}

Test(text, denial_connect_kill_syscall)
{
	struct tg_op op = { .kind = TG_OP_CONNECT, .name = "connect" };
	struct sockaddr_in *in = (struct sockaddr_in *)&op.addr;
	in->sin_family = AF_INET;
	in->sin_port = htons(443);
	inet_pton(AF_INET, "10.1.2.3", &in->sin_addr);
	op.addrlen = sizeof(*in);
	struct tg_verdict k = { .action = TG_ACT_KILL, .rule_id = "net", .reason = "no network" };
	_cleanup_free_ char *a = tg_audit_denial_line(&op, &k, true);
	cr_assert_str_eq(a, "txguard: killed the tree at connect to 10.1.2.3:443 by rule net: no network");
	struct tg_op sc = { .kind = TG_OP_SYSCALL, .name = "ptrace" };
	_cleanup_free_ char *b = tg_audit_denial_line(&sc, &deny_v, true);
	cr_assert_str_eq(b, "txguard: denied ptrace() by rule no-rm-root: deletes everything");
}

Test(text, denial_long_argv_is_cut)
{
	char big[1000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	char *argv[] = { "echo", big, "tail", NULL };
	struct tg_op op = { .kind = TG_OP_EXEC, .argv = argv };
	_cleanup_free_ char *l = tg_audit_denial_line(&op, &deny_v, true);
	cr_assert_lt(strlen(l), 320, "%zu", strlen(l));
	cr_assert(strstr(l, "...` by rule no-rm-root"), "%s", l);
}

Test(text, summary_lines)
{
	struct tg_change v[3] = { 0 };
	struct tg_changes three = { .v = v, .n = 3 };
	struct tg_changes one = { .v = v, .n = 1 };
	struct tg_report r = { .outcome = TG_OUTCOME_COMMITTED, .ran = true, .changes = &three,
	                       .duration_ns = 420000000ull };
	_cleanup_free_ char *a = tg_audit_summary_line(&r, false);
	cr_assert_str_eq(a, "txguard: committed 3 paths in 0.42s");

	r.outcome = TG_OUTCOME_ROLLED_BACK;
	r.changes = &changes;  /* 4 */
	r.duration_ns = 1100000000ull;
	r.run.end = TG_END_EXITED;
	r.run.exit_code = 1;
	r.exit_status = 1;
	_cleanup_free_ char *b = tg_audit_summary_line(&r, false);
	cr_assert_str_eq(b, "txguard: rolled back 4 paths in 1.1s (exit 1)");

	r.changes = &one;
	r.run.end = TG_END_TIMEOUT;
	r.duration_ns = 61000000000ull;
	_cleanup_free_ char *c = tg_audit_summary_line(&r, true);
	cr_assert_str_eq(c, "\033[33mtxguard: rolled back 1 path in 61s (timeout)\033[0m");

	r.run.end = TG_END_SIGNALED;
	r.run.term_signal = SIGSEGV;
	r.duration_ns = 125000000000ull;
	_cleanup_free_ char *d = tg_audit_summary_line(&r, false);
	cr_assert_str_eq(d, "txguard: rolled back 1 path in 2m05s (SIGSEGV)");

	r.outcome = TG_OUTCOME_RESTORE_FAILED;
	r.error = "rename: No space left on device";
	r.run.end = TG_END_TRACER_KILL;
	r.kill_reason = "argv changed after check";
	_cleanup_free_ char *e = tg_audit_summary_line(&r, false);
	cr_assert_str_eq(e, "txguard: RESTORE FAILED for 1 path after 2m05s (killed by txguard: argv "
	                    "changed after check): rename: No space left on device; run `txguard recover`");
}

Test(text, summary_committed_with_failure_code_and_setup)
{
	struct tg_report r = { .outcome = TG_OUTCOME_COMMITTED, .ran = true, .exit_status = 2,
	                       .run = { .end = TG_END_EXITED, .exit_code = 2 } };
	_cleanup_free_ char *a = tg_audit_summary_line(&r, false);
	cr_assert_str_eq(a, "txguard: committed 0 paths in 0.00s (exit 2)");
	/* A failure that changed nothing says so, not "rolled back 0 paths". */
	struct tg_report n = { .outcome = TG_OUTCOME_ROLLED_BACK, .ran = true, .exit_status = 1,
	                       .run = { .end = TG_END_EXITED, .exit_code = 1 } };
	_cleanup_free_ char *c = tg_audit_summary_line(&n, false);
	cr_assert_str_eq(c, "txguard: exit 1, nothing to roll back");
	struct tg_report s = { .outcome = TG_OUTCOME_SETUP_FAILED, .error = "bad policy" };
	_cleanup_free_ char *b = tg_audit_summary_line(&s, true);
	cr_assert_str_eq(b, "\033[1;31mtxguard: not run: bad policy\033[0m");
}

Test(text, sockaddr_forms)
{
	char buf[160];
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(8080);
	inet_pton(AF_INET6, "::1", &in6->sin6_addr);
	cr_assert_str_eq(tg_sockaddr_format(&ss, sizeof(*in6), buf, sizeof(buf)), "[::1]:8080");

	struct sockaddr_un *un = (struct sockaddr_un *)&ss;
	memset(&ss, 0, sizeof(ss));
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, "/run/x.sock");
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(un->sun_path) + 1);
	cr_assert_str_eq(tg_sockaddr_format(&ss, len, buf, sizeof(buf)), "unix:/run/x.sock");
	memcpy(un->sun_path, "\0abs", 4);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 4);
	cr_assert_str_eq(tg_sockaddr_format(&ss, len, buf, sizeof(buf)), "unix:@abs");
	cr_assert_str_eq(tg_sockaddr_format(&ss, sizeof(sa_family_t), buf, sizeof(buf)), "unix:");
	ss.ss_family = AF_NETLINK;
	cr_assert_str_eq(tg_sockaddr_format(&ss, 12, buf, sizeof(buf)), "family:16");
}

Test(text, names)
{
	cr_assert_str_eq(tg_signal_name(SIGKILL), "SIGKILL");
	cr_assert_str_eq(tg_signal_name(40), "SIG40");
	cr_assert_str_eq(tg_outcome_name(TG_OUTCOME_RESTORE_FAILED), "restore_failed");
	cr_assert_str_eq(tg_run_end_name(TG_END_POLICY_KILL), "policy_kill");
	cr_assert_str_eq(tg_run_end_name(TG_END_EXEC_FAILED), "exec_failed");
}

Test(log, null_log_is_a_no_op)
{
	struct tg_op op = exec_op();
	struct tg_report r = { 0 };
	cr_assert_eq(tg_log_decision(NULL, &op, &deny_v, true), 0);
	cr_assert_eq(tg_log_spawn(NULL, 1, 2, false), 0);
	cr_assert_eq(tg_log_exec(NULL, 1, "x", rm_argv), 0);
	cr_assert_eq(tg_log_exit(NULL, 1, 0), 0);
	cr_assert_eq(tg_log_kill(NULL, 1, "x"), 0);
	cr_assert_eq(tg_log_set_txid(NULL, "t"), 0);
	cr_assert_eq(tg_log_tx_begin(NULL, "t", "/w"), 0);
	cr_assert_eq(tg_log_tx_commit(NULL, NULL), 0);
	cr_assert_eq(tg_log_tx_rollback(NULL, NULL, -EIO), 0);
	cr_assert_eq(tg_log_summary(NULL, &r), 0);
	cr_assert_eq(tg_log_error(NULL), 0);
	tg_log_close(NULL);
}
