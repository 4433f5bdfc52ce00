/* explain.c — `txguard policy explain`: the verdict for one question,
 * without running anything (issue 13).
 *
 *   -- ARGV...                     an exec line (a single word with blanks is
 *                                  split as a shell would, or refused)
 *   --path P --op read|write|unlink|exec
 *   --connect HOST:PORT [--udp]    an address: 1.2.3.4:443, [::1]:80,
 *                                  unix:/path (host names: issue 18's rules)
 *
 * The answer is what a run would do, layer by layer: the tracer's policy
 * first, then Landlock for what the tracer lets through (a write to a
 * writable place that does not exist yet, a read of a secret). Exit status:
 * 0 allow (or audit), 1 deny or kill, 2 a question that cannot be asked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"
#include "base/json.h"
#include "base/path.h"
#include "landlock/landlock.h"
#include "policy/policy.h"
#include "refusal.h"

#define EXPLAIN_BAD 2

static int bad_question(const char *fmt, ...) TG_PRINTF(1, 2);
static int bad_question(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("txguard: policy explain: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return EXPLAIN_BAD;
}

static int status_of(enum tg_action a)
{
	return a == TG_ACT_DENY || a == TG_ACT_KILL ? 1 : 0;
}

/* ---- an exec line ---- */

/* Shell syntax that makes a line more than one command: explain judges one
 * execve, so such a line is refused rather than judged as a program name. */
static bool has_shell_syntax(const char *s)
{
	return strpbrk(s, ";|&<>`$(){}*?[]\n") != NULL;
}

static int explain_argv(const struct tg_policy *p, char **argv, bool json)
{
	_cleanup_strv_ char **split = NULL;
	if (argv[0] && !argv[1] && strpbrk(argv[0], " \t'\"\\")) {
		if (has_shell_syntax(argv[0]))
			return bad_question("'%s' is shell syntax, not one command: pass the words "
			                    "after '--' (policy explain -- git push --force), or judge "
			                    "each command of the line on its own", argv[0]);
		if (tg_argv_split(argv[0], &split) < 0 || !split || !split[0])
			return bad_question("cannot split '%s' into words (unterminated quote?)", argv[0]);
		argv = split;
	}
	return status_of(tg_policy_explain_exec(p, argv, json, stdout));
}

/* ---- what a verdict looks like ---- */

struct answer {
	const char *question;        /* "path" | "connect" */
	const char *subject;         /* the path or the address as normalised */
	const char *op;              /* read, write, unlink, exec, connect, send */
	struct tg_verdict v;
	const char *layer;           /* "tracer" | "landlock" | "fanotify" | "proxy" */
	const char *note;            /* what the caller should know, or NULL */
};

static void print_json(const struct answer *a)
{
	struct tg_json *j = tg_json_new_file(stdout);
	if (!j)
		return;
	const struct tg_verdict *v = &a->v;
	tg_json_begin_object(j);
	tg_json_kv_str(j, "question", a->question);
	tg_json_kv_str(j, strcmp(a->question, "path") == 0 ? "path" : "address", a->subject);
	tg_json_kv_str(j, "op", a->op);
	tg_json_kv_str(j, "verdict", tg_action_name(v->action));
	tg_json_kv_str(j, "errno", v->action == TG_ACT_DENY ? tg_errno_name(v->err) : NULL);
	tg_json_kv_str(j, "rule", v->rule_id);
	tg_json_kv_str(j, "reason", v->reason);
	tg_json_kv_str(j, "source", v->source);
	tg_json_kv_str(j, "enforced_by", a->layer);
	tg_json_kv_str(j, "note", a->note);
	tg_json_end_object(j);
	tg_json_newline(j);
	tg_json_free(j);
}

static void print_text(const struct answer *a)
{
	const struct tg_verdict *v = &a->v;
	printf("%s: %s\noperation: %s\nverdict: %s", strcmp(a->question, "path") == 0 ? "path" : "address",
	       a->subject, a->op, tg_action_name(v->action));
	if (v->action == TG_ACT_DENY)
		printf(" (%s)", tg_errno_name(v->err) ? tg_errno_name(v->err) : "?");
	if (v->rule_id)
		printf("\nrule: %s (%s)\nreason: %s", v->rule_id, v->source ? v->source : "builtin",
		       v->reason ? v->reason : "");
	else
		fputs("\nrule: none matched", stdout);
	printf("\nenforced by: %s\n", a->layer);
	if (a->note)
		printf("note: %s\n", a->note);
}

static int answer(const struct answer *a, bool json)
{
	if (json)
		print_json(a);
	else
		print_text(a);
	return status_of(a->v.action);
}

/* ---- a path ---- */

/* The Landlock ruleset a run in this workspace would build. */
static int landlock_view(const struct tg_policy *p, const char *ws, struct tg_refusals **out)
{
	size_t nw = 0, nd = 0;
	const char *const *writable = tg_policy_writable_paths(p, &nw);
	const char *const *deny_read = tg_policy_deny_read_paths(p, &nd);
	_cleanup_free_ const char **w = calloc(nw + 1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	size_t n = 0;
	if (ws)
		w[n++] = ws;
	for (size_t i = 0; i < nw; i++)
		w[n++] = writable[i];
	struct tg_landlock_spec spec = {
		.writable = w, .nwritable = n, .deny_read = deny_read, .ndeny_read = nd,
	};
	return tg_refusals_new(&spec, NULL, out);
}

static int path_op(const char *opname, const char *path, struct tg_op *op)
{
	static char *exec_argv[2];
	memset(op, 0, sizeof(*op));
	op->pid = getpid();
	op->path = (char *)path;
	op->follow = true;
	if (strcmp(opname, "read") == 0) {
		op->kind = TG_OP_OPEN;
		op->name = "openat";
		op->flags = O_RDONLY;
	} else if (strcmp(opname, "write") == 0) {
		op->kind = TG_OP_OPEN;
		op->name = "openat";
		op->flags = O_WRONLY | O_CREAT | O_TRUNC;
		op->mode = 0644;
		op->writes = true;
	} else if (strcmp(opname, "unlink") == 0) {
		op->kind = TG_OP_UNLINK;
		op->name = "unlinkat";
		op->follow = false;
		op->writes = true;
	} else if (strcmp(opname, "exec") == 0) {
		op->kind = TG_OP_EXEC;
		op->name = "execve";
		exec_argv[0] = (char *)path;
		op->argv = exec_argv;
		op->argc = 1;
	} else {
		return -EINVAL;
	}
	return 0;
}

/* As root (fanotify permission events), a run marks each existing secret
 * instead of leaving it to Landlock: the refusal is seen (EPERM) and
 * reported. A path too deep below a marked directory, or one created after
 * the marks, is not told apart here. */
static bool marked_secret(const struct tg_policy *p, const char *ws, const char *path, struct answer *a)
{
	struct stat st;
	size_t n = 0, nw = 0;
	const char *const *secrets = tg_policy_deny_read_paths(p, &n);
	const char *const *writable = tg_policy_writable_paths(p, &nw);
	const char *entry = NULL;
	for (size_t i = 0; i < n && !entry; i++)
		if (!strpbrk(secrets[i], "*?[") && tg_path_is_under(path, secrets[i]))
			entry = secrets[i];
	/* In a writable place the secret stays Landlock's (cmd/run.c). */
	bool placed = entry && ws && tg_path_is_under(entry, ws);
	for (size_t i = 0; entry && i < nw && !placed; i++)
		placed = tg_path_is_under(entry, writable[i]);
	if (!entry || placed || tg_fanguard_probe() <= 0 || lstat(path, &st) < 0)
		return false;
	a->layer = "fanotify";
	a->v.err = EPERM;
	a->v.source = "fanotify";
	a->note = "a read-only open or exec never stops the command, but a run as root marks the "
	          "secret with fanotify: the read fails with EPERM and the run reports it as a decision";
	return true;
}

static int explain_path(const struct tg_opts *o, const struct tg_policy *p, const char *ws)
{
	const char *opname = o->explain_op ? o->explain_op : "write";
	char abs[PATH_MAX * 2];
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!*o->explain_path || tg_arg_to_path(o->explain_path, cwd ? cwd : "/", getenv("HOME"), abs, sizeof(abs)) < 0)
		return bad_question("--path '%s' is not a path", o->explain_path);
	struct tg_op op;
	if (path_op(opname, abs, &op) < 0)
		return bad_question("--op '%s' is not read, write, unlink or exec", opname);
	struct answer a = { .question = "path", .subject = abs, .op = opname, .layer = "tracer" };
	tg_policy_decide(p, &op, &a.v);
	bool untrapped = op.kind == TG_OP_OPEN && !op.writes;
	if (a.v.action == TG_ACT_DENY && untrapped) {
		/* A read-only open never stops the command: only Landlock sees it,
		 * or, as root, a fanotify mark on the secret. */
		a.layer = "landlock";
		a.note = "a read-only open never stops the command: Landlock refuses it (EACCES) and "
		         "the run's report lists the rule under \"unobserved\"";
		if (a.v.rule_id && !strcmp(a.v.rule_id, "deny-read"))
			(void)marked_secret(p, ws, abs, &a);
	}
	if (a.v.action == TG_ACT_ALLOW || a.v.action == TG_ACT_AUDIT) {
		struct tg_refusals *rf = NULL;
		struct tg_verdict lv;
		if (tg_landlock_probe() > 0 && landlock_view(p, ws, &rf) == 0 &&
		    tg_refusals_predict(rf, &op, &lv)) {
			a.v = lv;
			a.layer = "landlock";
			a.note = untrapped || op.kind == TG_OP_EXEC
			         ? "reads and execs never stop the command: Landlock refuses it (EACCES) and "
			           "the run's report lists the rule under \"unobserved\""
			         : "the tracer allows it, Landlock refuses it; the run reports it as a decision";
			if ((untrapped || op.kind == TG_OP_EXEC) && !strcmp(lv.rule_id, "deny-read"))
				(void)marked_secret(p, ws, abs, &a);
		}
		int rc = answer(&a, o->json);
		tg_refusals_free(rf);
		return rc;
	}
	return answer(&a, o->json);
}

/* ---- an address ---- */

static int parse_addr(const char *s, struct tg_op *op)
{
	struct sockaddr_storage *ss = &op->addr;
	memset(ss, 0, sizeof(*ss));
	if (strncmp(s, "unix:", 5) == 0) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;
		const char *path = s + 5;
		size_t n = strlen(path);
		if (n == 0 || n >= sizeof(un->sun_path))
			return -EINVAL;
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, path, n);
		if (path[0] == '@')
			un->sun_path[0] = '\0';   /* abstract */
		else if (path[0] == '/')
			op->path = (char *)path;
		else
			return -EINVAL;
		op->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] != '@'));
		return 0;
	}
	const char *colon = strrchr(s, ':');
	if (!colon || !colon[1])
		return -EINVAL;
	char *end = NULL;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || port > 65535)
		return -EINVAL;
	char host[INET6_ADDRSTRLEN + 2];
	size_t hl = (size_t)(colon - s);
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			return -EINVAL;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		op->addrlen = sizeof(*a6);
		return 0;
	}
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return -ENOENT;   /* a name: see explain_connect */
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	op->addrlen = sizeof(*a4);
	return 0;
}

/* A host name under network: hosts: rules: the proxy's verdict. */
static int explain_host(const struct tg_opts *o, const struct tg_policy *p)
{
	char host[256], subject[300];
	unsigned port = 0;
	if (tg_policy_host_split(o->explain_connect, host, sizeof(host), &port) < 0)
		return bad_question("--connect '%s' is not HOST:PORT", o->explain_connect);
	snprintf(subject, sizeof(subject), "%s:%u", host, port);
	struct answer a = {
		.question = "connect",
		.subject = subject,
		.op = "connect",
		.layer = "proxy",
		.note = "through the egress proxy that txguard runs for network: hosts: rules "
		        "(HTTP_PROXY/HTTPS_PROXY); direct connects outside loopback are refused",
	};
	tg_policy_host_verdict(p, host, port, &a.v, NULL);
	return answer(&a, o->json);
}

/* ---- a signal to a process that runs already (outside any tree) ---- */

static int explain_signal(const struct tg_opts *o, const struct tg_policy *p)
{
	char *end;
	errno = 0;
	long pid = strtol(o->explain_signal, &end, 10);
	long sig = 9;
	if (*end == ':') {
		const char *s = end + 1;
		sig = strtol(s, &end, 10);
		if (end == s)
			return bad_question("--signal '%s': the signal after ':' is a number (9, 15...)",
			                    o->explain_signal);
	}
	if (errno || *end || pid <= 0 || pid > INT_MAX || sig < 0 || sig > 64)
		return bad_question("--signal '%s' is not PID or PID:SIGNAL (e.g. 1234 or 1234:15)",
		                    o->explain_signal);
	return status_of(tg_policy_explain_signal(p, (pid_t)pid, (int)sig, o->json, stdout));
}

static int explain_connect(const struct tg_opts *o, const struct tg_policy *p)
{
	struct tg_op op = { .pid = getpid() };
	op.kind = o->explain_udp ? TG_OP_SENDTO : TG_OP_CONNECT;
	op.name = o->explain_udp ? "sendto" : "connect";
	int r = parse_addr(o->explain_connect, &op);
	/* A name: with network: hosts: rules the proxy judges it by name;
	 * without them the tracer judges the address the name resolves to at
	 * connect time, and explain never resolves a name itself. */
	if (r == -ENOENT && !o->explain_udp && tg_policy_has_hosts(p))
		return explain_host(o, p);
	if (r == -ENOENT)
		return bad_question("--connect '%s': the policy has no network: hosts: rules, so a "
		                    "connection is judged by the address a name resolves to; give an "
		                    "address (1.2.3.4:443, [::1]:80, unix:/path)", o->explain_connect);
	if (r < 0)
		return bad_question("--connect '%s' is not HOST:PORT, [V6]:PORT or unix:/path",
		                    o->explain_connect);
	char buf[256];
	struct answer a = {
		.question = "connect",
		.subject = tg_sockaddr_format(&op.addr, op.addrlen, buf, sizeof(buf)),
		.op = o->explain_udp ? "send" : "connect",
		.layer = "tracer",
	};
	tg_policy_decide(p, &op, &a.v);
	return answer(&a, o->json);
}

/* ---- dispatch ---- */

int tg_explain_question(const struct tg_opts *o, const struct tg_policy *p, const char *ws)
{
	int kinds = !!o->explain_argv + !!o->explain_path + !!o->explain_connect + !!o->explain_signal;
	if (kinds > 1)
		return bad_question("%s", "ask one question at a time: -- ARGV, --path, --connect or --signal");
	if (o->explain_op && !o->explain_path)
		return bad_question("%s", "--op goes with --path (--path FILE --op read|write|unlink|exec)");
	if (o->explain_udp && !o->explain_connect)
		return bad_question("%s", "--udp goes with --connect HOST:PORT");
	if (o->explain_argv)
		return explain_argv(p, o->explain_argv, o->json);
	if (o->explain_path)
		return explain_path(o, p, ws);
	if (o->explain_connect)
		return explain_connect(o, p);
	if (o->explain_signal)
		return explain_signal(o, p);
	return -1;
}
