/* tracer-driver — run tg_tracer_run() with a tiny built-in policy, so the
 * tracer's tests depend on no policy or journal module.
 *
 *   tracer-driver [--timeout MS] [--kill-after MS] [--grace MS]
 *                 [--max-procs N] [--net] -- CMD [ARGS...]
 *
 * Environment:
 *   TG_DRIVER_LOG=FILE        one line per event (op, spawn, exec, exit, kill, result)
 *   TG_DRIVER_DENY=a:EACCES,b:EPERM   deny trapped syscalls by name with an errno
 *   TG_DRIVER_DENY_PATH=SUBSTR:ERRNO  deny any op whose path contains SUBSTR
 *   TG_DRIVER_KILL=name,...   kill the tree at these syscalls
 *   TG_DRIVER_BPF_DENY=name:ERRNO,... extra syscalls denied inside BPF
 *   TG_DRIVER_KEEP_BLOCKED=1  opts.keep_signals_blocked (logged: "after sigint=...")
 *   TG_DRIVER_HANDLERS=1      catch SIGUSR1, SIGUSR2 and SIGRTMIN+2 and ignore SIGWINCH;
 *                             the child's setup fails (125) unless, before its exec,
 *                             the caught ones are SIG_DFL again and SIGWINCH still ignored
 * Exit status: the run's exit_code; 125 when the run could not be set up.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "trace/trace.h"
#include "base/util.h"

struct rule {
	char *name;
	int err;
};

struct driver {
	FILE *log;
	struct rule deny[64];
	size_t ndeny;
	char *kill;
	char *deny_path;
	int deny_path_err;
};

static void noop_handler(int sig)
{
	(void)sig;
}

static const int caught[] = { SIGUSR1, SIGUSR2, -2 /* SIGRTMIN+2 */ };

static int signo(int s)
{
	return s < 0 ? SIGRTMIN - s : s;
}

static void catch_some(void)
{
	struct sigaction sa = { .sa_handler = noop_handler };
	for (size_t i = 0; i < TG_ARRAY_SIZE(caught); i++)
		sigaction(signo(caught[i]), &sa, NULL);
	signal(SIGWINCH, SIG_IGN);
}

/* opts.child_setup: in the child, between its start and its exec. */
static int check_handlers(void *ud)
{
	(void)ud;
	struct sigaction old;
	for (size_t i = 0; i < TG_ARRAY_SIZE(caught); i++)
		if (sigaction(signo(caught[i]), NULL, &old) < 0 || old.sa_handler != SIG_DFL)
			return -EPROTO;
	if (sigaction(SIGWINCH, NULL, &old) < 0 || old.sa_handler != SIG_IGN)
		return -EPROTO;
	return 0;
}

/* "a:EACCES,b:EPERM" → rules. */
static size_t parse_rules(const char *spec, struct rule *out, size_t max)
{
	size_t n = 0;
	char *copy = spec ? strdup(spec) : NULL, *save = NULL;
	for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && n < max;
	     tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		int err = EPERM;
		if (colon) {
			*colon = '\0';
			err = tg_errno_from_name(colon + 1);
			if (err < 0)
				err = atoi(colon + 1);
		}
		out[n].name = strdup(tok);
		out[n].err = err;
		n++;
	}
	free(copy);
	return n;
}

static bool in_list(const char *list, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == len && strncmp(p, name, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static void log_argv(FILE *f, char *const *argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		fprintf(f, "%s%s", i ? "|" : "", argv[i]);
}

static void on_op(void *ud, const struct tg_op *op, struct tg_decision *out)
{
	struct driver *d = ud;
	const char *verdict = "allow";

	for (size_t i = 0; i < d->ndeny; i++)
		if (strcmp(d->deny[i].name, op->name) == 0) {
			out->kind = TG_DEC_DENY;
			out->err = d->deny[i].err;
		}
	if (d->deny_path && ((op->path && strstr(op->path, d->deny_path)) ||
	                     (op->path2 && strstr(op->path2, d->deny_path)))) {
		out->kind = TG_DEC_DENY;
		out->err = d->deny_path_err;
	}
	if (in_list(d->kill, op->name))
		out->kind = TG_DEC_KILL;
	if (out->kind == TG_DEC_DENY)
		verdict = "deny";
	else if (out->kind == TG_DEC_KILL)
		verdict = "kill";
	if (!d->log)
		return;
	fprintf(d->log, "op %s kind=%s pid=%d verdict=%s path=%s path2=%s follow=%d flags=0x%x mode=0%o writes=%d",
	        op->name, tg_op_kind_name(op->kind), (int)op->pid, verdict, op->path ? op->path : "-",
	        op->path2 ? op->path2 : "-", op->follow, (unsigned)op->flags, op->mode, op->writes);
	if (op->target)
		fprintf(d->log, " target=%s", op->target);
	if (op->xattr_name)
		fprintf(d->log, " xattr=%s", op->xattr_name);
	if (op->addrlen)
		fprintf(d->log, " addrlen=%u family=%u", (unsigned)op->addrlen, (unsigned)op->addr.ss_family);
	if (op->argv) {
		fprintf(d->log, " argv=");
		log_argv(d->log, op->argv);
	}
	fputc('\n', d->log);
	fflush(d->log);
}

static void on_spawn(void *ud, pid_t parent, pid_t child, bool thread)
{
	struct driver *d = ud;
	if (d->log)
		fprintf(d->log, "spawn %d %d %s\n", (int)parent, (int)child, thread ? "thread" : "process");
}

static void on_exec(void *ud, pid_t pid, const char *exe, char *const *argv)
{
	struct driver *d = ud;
	if (!d->log)
		return;
	fprintf(d->log, "exec %d exe=%s argv=", (int)pid, exe);
	log_argv(d->log, argv);
	fputc('\n', d->log);
}

static void on_exit_(void *ud, pid_t pid, int status)
{
	struct driver *d = ud;
	if (d->log)
		fprintf(d->log, "exit %d status=0x%x\n", (int)pid, (unsigned)status);
}

static void on_kill(void *ud, pid_t pid, const char *why)
{
	struct driver *d = ud;
	if (d->log)
		fprintf(d->log, "kill %d %s\n", (int)pid, why);
}

static const char *end_name(enum tg_run_end e)
{
	static const char *const names[] = {
		[TG_END_EXITED] = "exited", [TG_END_SIGNALED] = "signaled",
		[TG_END_POLICY_KILL] = "policy-kill", [TG_END_TRACER_KILL] = "tracer-kill",
		[TG_END_TIMEOUT] = "timeout", [TG_END_INTERRUPTED] = "interrupted",
		[TG_END_EXEC_FAILED] = "exec-failed",
	};
	return (size_t)e < TG_ARRAY_SIZE(names) ? names[e] : "?";
}

int main(int argc, char **argv)
{
	struct tg_tracer_opts opts = { .kill_after_ms = 2000, .grace_ms = 1000, .max_procs = 4096 };
	struct driver d = { 0 };
	struct rule bpf[64];
	const char *names[64];
	int errs[64];
	int i = 1;

	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "0";
		if (strcmp(argv[i], "--timeout") == 0)
			opts.timeout_ms = strtoull(v, NULL, 0), i++;
		else if (strcmp(argv[i], "--kill-after") == 0)
			opts.kill_after_ms = strtoull(v, NULL, 0), i++;
		else if (strcmp(argv[i], "--grace") == 0)
			opts.grace_ms = strtoull(v, NULL, 0), i++;
		else if (strcmp(argv[i], "--max-procs") == 0)
			opts.max_procs = strtoul(v, NULL, 0), i++;
		else if (strcmp(argv[i], "--net") == 0)
			opts.filter.trap_network = true;
		else {
			fprintf(stderr, "tracer-driver: unknown option %s\n", argv[i]);
			return 125;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: tracer-driver [OPTIONS] -- CMD [ARGS...]\n");
		return 125;
	}
	opts.argv = argv + i + 1;

	const char *logp = getenv("TG_DRIVER_LOG");
	if (logp) {
		int fd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		d.log = fd >= 0 ? fdopen(fd, "a") : NULL;
		if (d.log)
			setvbuf(d.log, NULL, _IOLBF, 0);
	}
	d.ndeny = parse_rules(getenv("TG_DRIVER_DENY"), d.deny, TG_ARRAY_SIZE(d.deny));
	d.kill = getenv("TG_DRIVER_KILL");
	struct rule dp = { 0 };
	if (parse_rules(getenv("TG_DRIVER_DENY_PATH"), &dp, 1) == 1) {
		d.deny_path = dp.name;
		d.deny_path_err = dp.err;
	}
	size_t nbpf = parse_rules(getenv("TG_DRIVER_BPF_DENY"), bpf, TG_ARRAY_SIZE(bpf));
	for (size_t k = 0; k < nbpf; k++) {
		names[k] = bpf[k].name;
		errs[k] = bpf[k].err;
	}
	opts.filter.denied_syscalls = names;
	opts.filter.deny_errno = errs;
	opts.filter.ndenied = nbpf;

	struct tg_tracer_hooks hooks = {
		.ud = &d, .on_op = on_op, .on_spawn = on_spawn, .on_exec = on_exec,
		.on_exit = on_exit_, .on_kill = on_kill,
	};
	struct tg_run_result res;
	opts.keep_signals_blocked = getenv("TG_DRIVER_KEEP_BLOCKED") != NULL;
	if (getenv("TG_DRIVER_HANDLERS")) {
		catch_some();
		opts.child_setup = check_handlers;
	}
	int r = tg_tracer_run(&opts, &hooks, &res);
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	if (d.log)
		fprintf(d.log, "after sigint=%s\n", sigismember(&now, SIGINT) ? "blocked" : "unblocked");
	if (r < 0) {
		fprintf(stderr, "tracer-driver: cannot run %s: %s\n", opts.argv[0], strerror(-r));
		return 125;
	}
	if (d.log)
		fprintf(d.log, "result end=%s code=%d signal=%d nprocs=%lu ntraps=%lu ms=%llu\n",
		        end_name(res.end), res.exit_code, res.term_signal, res.nprocs, res.ntraps,
		        (unsigned long long)(res.duration_ns / 1000000));
	/* Freed so that a LeakSanitizer run of the driver reports the tracer only. */
	for (size_t k = 0; k < d.ndeny; k++)
		free(d.deny[k].name);
	for (size_t k = 0; k < nbpf; k++)
		free(bpf[k].name);
	free(d.deny_path);
	if (d.log)
		fclose(d.log);
	return res.exit_code;
}
