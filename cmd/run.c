/* run.c — `txguard -- CMD`: the glue of one transaction.
 *
 *   policy ← load        txn ← open (lock, recover, journal)
 *   tracer runs CMD; at each trapped call: policy → verdict → txn_before → audit
 *   end: commit (exit 0) or restore (failure, signal, kill, timeout) → report
 *
 * Each arrow crosses a module boundary: the modules of core/ never call
 * one another upward (scripts/deps.sh checks their layers), so a run's glue
 * between policy, tracer, transaction and audit lives here, in cmd/.
 */
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "approver.h"
#include "audit/audit.h"
#include "cli.h"
#include "common.h"
#include "config.h"
#include "history/history.h"
#include "journal/journal.h"
#include "landlock/landlock.h"
#include "learn.h"
#include "base/fs.h"
#include "base/path.h"
#include "policy/policy.h"
#include "run_proxy.h"
#include "refusal.h"
#include "trace/trace.h"
#include "txn/txn.h"

struct run {
	struct tg_opts *o;
	struct tg_policy *policy;
	struct tg_txn *txn;
	struct tg_log *log;
	struct tg_report report;
	char *workspace;
	char *home;
	const char *kill_rule;           /* the rule that killed the tree */
	const char *kill_reason;         /* why the tracer killed the tree on its own */
	bool chdir_workspace;            /* -w given and cwd outside it: run CMD there */
	char error[512];                 /* why setup failed, for the report */
	char *ws_policy;                 /* <workspace>/.txguard.yaml */
	char *policy_cache;              /* parsed policy trees and the compiled filter, or NULL */
	size_t policy_cache_trusted;     /* its leading part that may hold symlinks */
	pid_t main_pid;                  /* the command's main process, once it ran; -1 once gone */
	char *last_denial;               /* the last denial line printed, and by whom */
	pid_t last_denial_pid;
	bool color;
	struct tg_run_proxy proxy;       /* network: hosts: (run_proxy.h) */
	struct tg_refusals *refusals;    /* Landlock refusals seen at the calls' return */
	int landlock_fd;                 /* the ruleset, built before the fork; -1: none */
	int landlock_err;                /* why it could not be built (-errno), said by the child */
	struct tg_approver *approver;    /* answers `action: ask` (none: deny) */
	struct tg_learn *learn;          /* `txguard learn`: what the draft must allow */
	struct tg_fanguard *fan;         /* secrets under fanotify marks (root), or NULL */
	/* record_decision's: the fanotify guard's thread records too. */
	pthread_mutex_t decision_lock;
};

/* ---- the environment the command gets (--env-allow/--env-deny/--strip-secrets) ---- */

static const char *const secret_patterns[] = {
	"*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*_KEY", "*_KEY_*", "*APIKEY*",
	"*API_KEY*", "*CREDENTIAL*", "*PRIVATE*", "AWS_*", "GITHUB_TOKEN", "GH_TOKEN",
	"NPM_TOKEN", "*_PAT", "SSH_AUTH_SOCK",
};

static bool name_matches(const char *name, char *const *pats, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(pats[i], name, 0) == 0)
			return true;
	return false;
}

static bool env_keep(const struct tg_opts *o, const char *name)
{
	size_t nallow = tg_strv_len(o->env_allow);
	if (nallow && !name_matches(name, o->env_allow, nallow))
		return false;
	if (name_matches(name, o->env_deny, tg_strv_len(o->env_deny)))
		return false;
	if (o->strip_secrets &&
	    name_matches(name, (char *const *)secret_patterns, TG_ARRAY_SIZE(secret_patterns)))
		return false;
	return true;
}

/* txguard needs nothing from its environment after startup, so the
 * command's environment is filtered in place before the fork. */
static int filter_environment(const struct tg_opts *o)
{
	extern char **environ;
	_cleanup_strv_ char **drop = NULL;
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = tg_strndup(*e, (size_t)(eq - *e));
		if (!name)
			return -ENOMEM;
		if (!env_keep(o, name) && tg_strv_push(&drop, name) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; drop && drop[i]; i++)
		unsetenv(drop[i]);
	return 0;
}

/* ---- the child's own setup: limits and Landlock (before the filter) ---- */

static int child_setup(void *ud)
{
	struct run *r = ud;
	struct rlimit rl;
	tg_run_proxy_child(&r->proxy);
	if (r->chdir_workspace && chdir(r->workspace) < 0)
		return -errno;
	if (r->o->memory_limit) {
		rl.rlim_cur = rl.rlim_max = r->o->memory_limit;
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			return -errno;
	}
	if (r->o->max_file_size) {
		rl.rlim_cur = rl.rlim_max = r->o->max_file_size;
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			return -errno;
	}
	/* Built by the supervisor (build_landlock); a failure to build is the
	 * child's setup failure, as if it had built it itself. */
	if (r->landlock_err)
		return r->landlock_err;
	if (r->landlock_fd < 0)
		return 0;
	int rc = tg_landlock_grant_own_proc(r->landlock_fd);
	return rc < 0 ? rc : tg_landlock_enforce(r->landlock_fd);
}

/* Landlock: the race-free second line. Writes only beneath the workspace and
 * the policy's writable places; secret paths unreadable. The state dir is
 * not beneath either, so the tracee cannot touch its own journal. When the
 * kernel has no Landlock the tracer alone enforces writes (documented), but
 * read-deny rules cannot be enforced at all: that fails closed. */
struct ll_spec {
	struct tg_landlock_spec spec;
	const char **w;
	const char **d;     /* the secrets left to Landlock, when fanotify takes some */
	const char *hidden[1];
	char *root; /* hidden[0] when it is the state home's txguard/ */
};

/* Secrets under fanotify marks leave the Landlock ruleset: Landlock's
 * hook runs first, and a read it refused would never reach fanotify. What
 * cannot be marked (globs, more subdirectories than the bounds, a mark the
 * filesystem refuses) stays Landlock's, enforced and unobserved. So does a
 * secret inside the workspace or a writable place: there Landlock's
 * exclusion is also what keeps it from being removed or renamed (the
 * policy judges writes by place, and a mark sees only opens). A secret
 * that does not exist leaves the list: Landlock skips it as well, and the
 * report does not list it as unobserved. */
static bool in_writable_place(const struct run *r, const char *path, const char *const *writable, size_t nw)
{
	if (tg_path_is_under(path, r->workspace))
		return true;
	for (size_t i = 0; i < nw; i++)
		if (tg_path_is_under(path, writable[i]))
			return true;
	return false;
}

static int fanotify_take(struct run *r, const char *const *deny_read, size_t *nd,
                         const char *const *writable, size_t nw, struct ll_spec *ls)
{
	const char **d = ls->d = calloc(*nd + 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < *nd; i++) {
		int rc = strpbrk(deny_read[i], "*?[") || in_writable_place(r, deny_read[i], writable, nw)
		         ? -EINVAL : tg_fanguard_mark(r->fan, deny_read[i]);
		if (rc < 0 && rc != -ENOENT)
			d[n++] = deny_read[i];
	}
	*nd = n;
	return 0;
}

static int landlock_spec(struct run *r, struct ll_spec *ls)
{
	size_t nw = 0, nd = 0;
	const char *const *writable = tg_policy_writable_paths(r->policy, &nw);
	const char *const *deny_read = tg_policy_deny_read_paths(r->policy, &nd);
	if (r->fan) {
		int rc = fanotify_take(r, deny_read, &nd, writable, nw, ls);
		if (rc < 0)
			return rc;
		deny_read = ls->d;
	}
	const char **w = ls->w = calloc(nw + 2, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w[0] = r->workspace;
	for (size_t i = 0; i < nw; i++)
		w[i + 1] = writable[i];
	/* Landlock only grants: hiding the state dir inside a writable place
	 * (a state dir under /tmp, or the <workspace>/.txguard fallback)
	 * would take away the right to create anything next to it. There the
	 * tracer alone keeps the command out (the policy's built-in rule
	 * "state-dir"). */
	const char **hidden = ls->hidden;
	hidden[0] = tg_txn_state_dir(r->txn);
	/* In the shared state home (~/.local/state/txguard/NAME) all of it is
	 * hidden: the other workspaces' journals are none of the command's
	 * business either, and hiding one dir there takes a rule per sibling,
	 * one per workspace ever run. */
	_cleanup_free_ char *dflt = NULL, *root = NULL;
	if (hidden[0] && tg_journal_default_state_dir(r->workspace, &dflt) == 0 && !strcmp(dflt, hidden[0]) &&
	    !tg_path_is_under(hidden[0], r->workspace) && (root = tg_fs_dirname(hidden[0])) && root[0] == '/')
		hidden[0] = ls->root = steal_pointer(&root);
	bool hide = hidden[0] != NULL;
	for (size_t i = 0; hide && i < nw + 1; i++)
		if (tg_path_is_under(hidden[0], w[i]))
			hide = false;
	ls->spec = (struct tg_landlock_spec){
		.writable = w,
		.nwritable = nw + 1,
		.deny_read = deny_read,
		.ndeny_read = nd,
		.hidden = hidden,
		.nhidden = hide ? 1 : 0,
	};
	return 0;
}

/* The ruleset the child enforces, built once here, with the supervisor's
 * view of it (to report its refusals) from the same walk of the policy's
 * places: the child between fork and exec then makes two syscalls for
 * Landlock. A ruleset that cannot be built is the child's setup failure,
 * as if it had built it itself. --audit-only denies nothing: no Landlock. */
static void on_secret_open(void *ud, const struct tg_fan_refusal *f);

static int prepare_landlock(struct run *r)
{
	if (r->o->audit_only)
		return 0;
	/* As root (CAP_SYS_ADMIN): secret reads seen one by one. Else, or
	 * when the guard cannot start, Landlock enforces them all, as ever. */
	(void)tg_fanguard_new(getpid(), on_secret_open, r, &r->fan);
	struct ll_spec ls = { 0 };
	struct tg_landlock_view *view = NULL;
	int rc = landlock_spec(r, &ls);
	if (rc == 0)
		rc = tg_landlock_build_viewed(&ls.spec, NULL, &view);
	if (rc >= 0) {
		r->landlock_fd = rc;
		rc = tg_refusals_new(&ls.spec, view, &r->refusals);
		if (rc == 0)
			r->report.unobserved = tg_refusals_unobserved(r->refusals, &r->report.nunobserved);
	} else {
		if (!(rc == -EOPNOTSUPP && ls.spec.ndeny_read == 0))
			r->landlock_err = rc;
		rc = 0;
	}
	free(ls.w);
	free(ls.d);
	free(ls.root);
	return rc;
}

/* ---- one trapped call: the verdict, txguard's own next to the policy's ---- */

static bool is_error_action(enum tg_action a)
{
	return a == TG_ACT_DENY || a == TG_ACT_KILL;
}

/* The line an agent reads in the tool output: which rule, why. */
static void say_denied(struct run *r, const struct tg_op *op, const struct tg_verdict *v)
{
	/* An exec of a program that does not exist fails with ENOENT as it
	 * would anyway (a shell walking $PATH): no line for that. */
	if (op->kind == TG_OP_EXEC && v->err == ENOENT)
		return;
	char *line = tg_audit_denial_line(op, v, !r->o->audit_only);
	if (!line)
		return;
	/* A shell walking $PATH tries /usr/bin/rm then /bin/rm: one line is
	 * enough for the reader, the report keeps every decision. */
	if (r->last_denial && strcmp(line, r->last_denial) == 0 && r->last_denial_pid == op->pid) {
		free(line);
		return;
	}
	free(r->last_denial);
	r->last_denial = line;
	r->last_denial_pid = op->pid;
	if (r->color)
		fprintf(stderr, "\033[1;31m%s\033[0m\n", line);
	else
		fprintf(stderr, "%s\n", line);
}

/* The one place a decision is recorded: into the report, as a denial line,
 * into the log. A repeat of the last decision ($PATH search, retry) is only
 * counted: one decision, one line, one log event per intent. */
static void record_decision(struct run *r, const struct tg_op *op, const struct tg_verdict *v,
                            bool enforced)
{
	pthread_mutex_lock(&r->decision_lock);
	/* mkdir of an existing directory fails with EEXIST natively too: the
	 * tracer's EEXIST refuses nothing the kernel would have done. */
	bool native = op->kind == TG_OP_MKDIR && v->action == TG_ACT_DENY && v->err == EEXIST;
	bool repeat = !native && tg_report_add_decision(&r->report, op, v, enforced) == 1;
	if (!native && !repeat && is_error_action(v->action))
		say_denied(r, op, v);
	/* The log keeps the try that counts: not a missing $PATH entry. */
	bool missing = op->kind == TG_OP_EXEC && v->err == ENOENT;
	if (!repeat && !missing)
		tg_log_decision(r->log, op, v, enforced);
	pthread_mutex_unlock(&r->decision_lock);
}

static bool is_ws_policy(const struct run *r, const char *path)
{
	return path && r->ws_policy && strcmp(path, r->ws_policy) == 0;
}

static void refuse(struct tg_verdict *v, int err, const char *rule_id, const char *reason)
{
	*v = (struct tg_verdict){ .action = TG_ACT_DENY, .err = err, .rule_id = rule_id, .reason = reason };
}

/* txguard's own verdict before the policy's: the workspace's policy file
 * is never the tracee's to change, whatever the policy says, or the command
 * could loosen the policy of the next run. txguard's state dir needs no
 * check here: the policy knows it (tg_policy_set_ctx) and refuses it first
 * of all, as its built-in rule "state-dir". */
static bool builtin_before(const struct run *r, const struct tg_op *op, struct tg_verdict *v)
{
	if (!op->writes || !(is_ws_policy(r, op->path) || is_ws_policy(r, op->path2)))
		return false;
	refuse(v, EACCES, "txguard.workspace-policy",
	       "the workspace's " TG_WORKSPACE_POLICY " is edited outside txguard, never by the command it governs");
	return true;
}

/* The files of its own /proc/PID a process may set: a JVM writes its
 * coredump_filter at start, runtimes name their threads through comm. */
static bool own_proc_file(const char *rest)
{
	if (!strcmp(rest, "coredump_filter") || !strcmp(rest, "comm"))
		return true;
	if (strncmp(rest, "task/", 5))
		return false;
	rest += 5;
	size_t digits = strspn(rest, "0123456789");
	return digits > 0 && !strcmp(rest + digits, "/comm");
}

/* The command's main process writing one of those files of its own: the
 * Landlock ruleset lets that process alone (tg_landlock_grant_own_proc),
 * so the tracer allows it to that process alone, and every other process
 * still meets the read-only default, with a decision. */
static bool own_proc_write(const struct run *r, const struct tg_op *op)
{
	char pre[32];
	if (r->main_pid <= 0 || op->kind != TG_OP_OPEN || !op->writes || !op->path)
		return false;
	int n = snprintf(pre, sizeof(pre), "/proc/%d/", (int)r->main_pid);
	if (strncmp(op->path, pre, (size_t)n) || !own_proc_file(op->path + n))
		return false;
	return tg_proc_tgid(op->pid) == r->main_pid;
}

static void decide(struct run *r, const struct tg_op *op, struct tg_verdict *v)
{
	if (builtin_before(r, op, v))
		return;
	if (own_proc_write(r, op)) {
		*v = (struct tg_verdict){ .action = TG_ACT_ALLOW };
		return;
	}
	tg_policy_decide(r->policy, op, v);
	/* `ask`: the tracee waits while the approver decides. */
	if (v->action == TG_ACT_ASK)
		tg_approver_resolve(r->approver, op, v);
}

/* txguard's own verdict after the policy allowed a call: what the journal
 * cannot undo is refused. Saving the pre-image happens here, durably,
 * before the call runs; a journal that cannot keep it fails the call:
 * never "ran but not journaled". */
static bool builtin_after(struct run *r, const struct tg_op *op, struct tg_verdict *v)
{
	if (!op->writes)
		return false;
	/* A mutation the journal has no record for (inode flags by ioctl,
	 * opens by file handle) could not be undone. */
	if (op->kind == TG_OP_SYSCALL) {
		refuse(v, EPERM, "txguard.unjournaled",
		       "txguard cannot undo this call (inode flags, open by handle), so it is refused");
		return true;
	}
	int rc = r->txn ? tg_txn_before(r->txn, op) : 0;
	if (rc >= 0)
		return false;
	refuse(v, -rc, "txguard.journal",
	       "the journal cannot save or undo what this call changes (docs/journal.md), so the call was refused");
	return true;
}

/* What the tracer does with the call; the verdict enforces nothing under
 * --audit-only. Returns false for a call that goes on. */
static bool enforce_verdict(struct run *r, const struct tg_verdict *v, struct tg_decision *out)
{
	if (v->action == TG_ACT_KILL) {
		r->kill_rule = v->rule_id;
		out->kind = TG_DEC_KILL;
		return true;
	}
	if (v->action == TG_ACT_DENY) {
		out->kind = TG_DEC_DENY;
		out->err = v->err ? v->err : EPERM;
		return true;
	}
	return false;
}

static void on_op(void *ud, const struct tg_op *op, struct tg_decision *out)
{
	struct run *r = ud;
	struct tg_verdict v = { 0 };
	bool enforce = !r->o->audit_only;

	/* Another task's running call on the same name first: its result
	 * decides what this call meets (docs/journal.md, "Calls on one
	 * name"). Nothing is decided or recorded until then. */
	if (r->txn && tg_txn_must_wait(r->txn, op)) {
		out->kind = TG_DEC_WAIT;
		return;
	}
	decide(r, op, &v);
	tg_learn_note(r->learn, op, &v);
	record_decision(r, op, &v, enforce);
	if (enforce && enforce_verdict(r, &v, out))
		return;
	if (builtin_after(r, op, &v)) {
		record_decision(r, op, &v, true);
		enforce_verdict(r, &v, out);
		return;
	}
	out->kind = TG_DEC_ALLOW;
	out->watch_result = tg_refusals_watch(r->refusals, op);
	/* What a creation made is learnt from its own result: by the next
	 * trapped call, another thread may have changed the name. A thread
	 * alone in the tree has no other: its name will tell, and the call
	 * needs no second stop (a git checkout's every rewritten file). */
	if (r->txn && tg_txn_awaits(r->txn, op->pid)) {
		if (op->alone) {
			tg_txn_alone(r->txn, op->pid);
			/* It fills what it made before its next trapped call: the
			 * tracer waits as it did after the exit stop. Spinning
			 * through that gap cost a git checkout 9% more CPU time. */
			out->no_spin = !out->watch_result;
		} else
			out->watch_result = true;
	}
}

/* A call the filter refused on its own: one decision like any other. The
 * policy names its own syscall denials; the fixed set is txguard's. */
static void on_fixed(void *ud, const struct tg_op *op, int err)
{
	struct run *r = ud;
	struct tg_verdict v = { 0 };
	tg_policy_decide(r->policy, op, &v);
	if (v.action != TG_ACT_DENY) {
		v = (struct tg_verdict){
			.action = TG_ACT_DENY, .rule_id = "txguard.fixed-syscall", .source = "builtin",
			.reason = "never allowed under txguard: it could reach around the tracer (ptrace, "
			          "io_uring, bpf, seccomp listeners, untraced clones, terminal injection) "
			          "or change the machine outside the journal (mount, modules, kexec, clock)",
		};
	}
	v.err = err;
	tg_learn_note(r->learn, op, &v);
	record_decision(r, op, &v, true);
}

/* A tracee that entered another mount namespace (setns) has a root
 * txguard cannot name: its path calls fail with EACCES, one decision each. */
static void on_unnamed_root(void *ud, const struct tg_op *op, int err)
{
	struct run *r = ud;
	struct tg_verdict v = {
		.action = TG_ACT_DENY, .err = err, .rule_id = "txguard.unnamed-root", .source = "builtin",
		.reason = "the process entered another mount namespace (setns), whose root txguard cannot "
		          "name: its paths cannot be judged or journaled, so its path calls are refused (the "
		          "path shown is the process's own)",
	};
	tg_learn_note(r->learn, op, &v);
	record_decision(r, op, &v, true);
}

/* A watched call returned: the journal learns what a creation made, and a
 * Landlock refusal becomes a decision. A record that cannot be written
 * here is written later, by name (tg_txn_after). */
static void on_result(void *ud, pid_t pid, long rval)
{
	struct run *r = ud;
	struct tg_verdict v;
	if (r->txn)
		(void)tg_txn_after(r->txn, pid, rval);
	const struct tg_op *op = tg_refusals_result(r->refusals, pid, rval, &v);
	if (op)
		record_decision(r, op, &v, true);
}

/* A tracee opened a secret under a fanotify mark and was refused (from
 * the guard's thread: record_decision locks). */
static void on_secret_open(void *ud, const struct tg_fan_refusal *f)
{
	struct run *r = ud;
	struct tg_op op = {
		.kind = f->exec ? TG_OP_EXEC : TG_OP_OPEN, .pid = f->pid, .name = f->syscall,
		.path = (char *)f->path, .flags = f->flags, .uid = -1, .gid = -1,
		.writes = !f->exec && (f->flags & (O_ACCMODE | O_CREAT | O_TRUNC)) != O_RDONLY,
	};
	struct tg_verdict v = {
		.action = TG_ACT_DENY, .err = f->err, .rule_id = "deny-read", .source = "fanotify",
		.reason = "secrets (keys, tokens, credentials) are not readable under txguard",
	};
	record_decision(r, &op, &v, true);
}

/* After a failed run: the rules whose refusals could not be seen. */
static void say_unobserved(const struct run *r)
{
	const struct tg_report *rep = &r->report;
	/* A run with a denial of its own has its explanation already, and one
	 * that changed paths before failing got past its opens: the note is for
	 * a failure that nothing else explains (a refused read fails early,
	 * with nothing done). */
	if (r->o->quiet || rep->exit_status == 0 || rep->ndenied || rep->nkilled ||
	    (rep->changes && rep->changes->n > 0))
		return;
	for (size_t i = 0; i < rep->nunobserved; i++) {
		const struct tg_unobserved *u = &rep->unobserved[i];
		fprintf(stderr, "txguard: note: %s enforces rule %s on %s%s%s (%s) where txguard cannot "
		        "see a refusal: a \"Permission denied\" on those paths comes from it\n",
		        u->enforced_by, u->rule_id, u->npaths ? u->paths[0] : "?",
		        u->npaths > 1 ? " and other" : "", u->npaths > 1 ? " paths" : "", u->ops);
	}
}

static void on_spawn(void *ud, pid_t parent, pid_t child, bool thread)
{
	struct run *r = ud;
	tg_log_spawn(r->log, parent, child, thread);
	if (r->txn)
		tg_txn_returned(r->txn, parent);
}

/* Its creations are settled as their results would have been: a failure
 * to write a record leaves them for later, by name, as in on_result. */
static void on_company(void *ud)
{
	struct run *r = ud;
	if (r->txn)
		(void)tg_txn_company(r->txn);
}

static void on_exec(void *ud, pid_t pid, const char *exe, char *const *argv)
{
	struct run *r = ud;
	/* The first exec is the main child's: nothing else runs before it. */
	if (r->main_pid == 0)
		r->main_pid = pid;
	tg_log_exec(r->log, pid, exe, argv);
	tg_learn_exec(r->learn, exe);
}

static void on_exit_hook(void *ud, pid_t pid, int status)
{
	struct run *r = ud;
	/* Its /proc/PID is gone with it: a process given the pid later
	 * does not have the Landlock rule. */
	if (pid == r->main_pid)
		r->main_pid = -1;
	/* A zombie that its parent, kept waiting at a stop, cannot reap is
	 * still there for kill(2): its calls are over all the same. */
	tg_txn_gone(r->txn, pid);
	tg_log_exit(r->log, pid, status);
}

static void on_kill(void *ud, pid_t pid, const char *why)
{
	struct run *r = ud;
	r->kill_reason = why;
	tg_log_kill(r->log, pid, why);
	/* Like a denial, what txguard did to the tree is never quiet. */
	fprintf(stderr, "txguard: killed the tree (pid %d): %s\n", (int)pid, why);
}

/* ---- setup ---- */

/* An fd the caller passed in, open for writing on a workspace file: its
 * content is saved first (a rollback undoes writes through it), or, when
 * the file has no name to save it by, the run is refused. */
static int on_inherited(void *ud, int fd, const char *rel, int err)
{
	const struct tg_opts *o = ud;
	if (err == 0 && !o->quiet)
		fprintf(stderr, "txguard: fd %d is open for writing on %s: saved first, a rollback undoes writes through it\n",
		        fd, rel);
	else if (err < 0)
		fprintf(stderr, "txguard: fd %d is open for writing on %s, which cannot be saved\n", fd, rel);
	return err;
}

static int open_output(const char *path, int fd, const char *what, int *out)
{
	*out = -1;
	if (path) {
		*out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (*out < 0) {
			tg_warn("cannot open %s file %s: %s", what, path, strerror(errno));
			return -1;
		}
	} else if (fd >= 0) {
		if (fcntl(fd, F_GETFD) < 0) {
			tg_warn("--%s-fd %d is not an open file descriptor", what, fd);
			return -1;
		}
		/* Our copy is close-on-exec; the command must not write into it. */
		*out = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (*out < 0)
			return -1;
		close(fd);
	}
	return 0;
}

/* The policy cache lives in the state home, next to the workspaces' state
 * dirs, and is denied to the command like them. TXGUARD_POLICY_CACHE=0
 * turns it off (every file is parsed, as `policy check` always does). */
static char *policy_cache_dir(const struct tg_opts *o, size_t *trusted)
{
	_cleanup_free_ char *home = NULL;
	if (o->no_policy_cache || tg_journal_state_home(&home, trusted) < 0)
		return NULL;
	return tg_path_join(home, "policy-cache");
}

static int load_policy(struct run *r)
{
	_cleanup_strv_ char **paths = NULL;
	if (tg_policy_paths(r->o, r->workspace, &paths) < 0)
		return -ENOMEM;
	struct tg_policy_cache cache = { 0 };
	cache.dir = r->policy_cache = policy_cache_dir(r->o, &cache.trusted);
	r->policy_cache_trusted = cache.trusted;
	struct tg_policy_diags diags = { 0 };
	int rc = tg_policy_load_cached(&r->policy, (const char *const *)paths, tg_strv_len(paths), &diags,
	                               &cache);
	if (rc == 0)
		r->report.policy_files = tg_policy_files(r->policy, &r->report.npolicy_files);
	if (rc < 0) {
		tg_policy_diags_print(&diags, stderr);
		if (diags.n == 0)
			tg_warn("cannot load the policy: %s", strerror(-rc));
	}
	tg_policy_diags_clear(&diags);
	return rc;
}

static void progress(void *ud, size_t done, size_t total)
{
	struct run *r = ud;
	static uint64_t started, last;
	uint64_t now = tg_now_ns();
	if (!started)
		started = now;
	/* Only restores that take longer than a second get a progress line. */
	if (r->o->quiet || !isatty(STDERR_FILENO) || now - started < 1000000000ull ||
	    (now - last < 200000000ull && done != total))
		return;
	last = now;
	fprintf(stderr, "\rtxguard: restoring %zu/%zu%s", done, total, done == total ? "\n" : "");
}

static bool want_color(const struct tg_opts *o)
{
	if (o->color == TG_COLOR_ALWAYS)
		return true;
	if (o->color == TG_COLOR_NEVER || getenv("NO_COLOR"))
		return false;
	return isatty(STDERR_FILENO);
}

/* The summary line is for runs where something happened: paths changed
 * (committed or rolled back), txguard ended the tree, or a restore failed.
 * A denial already had its own line; a failing command that changed
 * nothing needs none (-v prints "exit N, nothing to roll back"). */
static bool want_summary(const struct run *r, const struct tg_run_result *res)
{
	if (r->o->quiet)
		return false;
	if (r->o->verbose || r->report.outcome == TG_OUTCOME_RESTORE_FAILED)
		return true;
	if (r->report.changes && r->report.changes->n > 0)
		return true;
	return res->end == TG_END_POLICY_KILL || res->end == TG_END_TRACER_KILL ||
	       res->end == TG_END_TIMEOUT || res->end == TG_END_INTERRUPTED;
}

/* The command itself could not be executed: say why, unless the policy's
 * denial of that very exec already did (one line per refusal). */
static void say_exec_failed(const struct run *r, const struct tg_run_result *res)
{
	if (res->end != TG_END_EXEC_FAILED || !res->exec_errno)
		return;
	if (r->last_denial && r->last_denial_pid == res->main_pid)
		return;
	tg_warn("%s: %s%s", r->o->argv[0], strerror(res->exec_errno),
	        res->exec_errno == ENOENT ? " (not found: check the name and $PATH)" : "");
}

/* Finish: commit or restore, then the report. Returns the exit code. */
static int finish(struct run *r, const struct tg_run_result *res, int report_fd)
{
	struct tg_opts *o = r->o;
	bool signaled = res->end == TG_END_SIGNALED;
	bool killed = res->end == TG_END_POLICY_KILL || res->end == TG_END_TRACER_KILL ||
	              res->end == TG_END_TIMEOUT || res->end == TG_END_INTERRUPTED;
	bool rollback = tg_should_rollback(o, signaled, killed, res->exit_code);

	r->report.ran = true;
	r->report.run = *res;
	r->report.kill_reason = r->kill_reason;

	struct tg_changes changes = { 0 };
	tg_txn_end(r->txn);
	int rc = tg_txn_changes(r->txn, &changes);
	if (rc < 0)
		tg_warn("cannot summarise the changes: %s", strerror(-rc));
	r->report.changes = &changes;

	int status = res->exit_code;
	if (rollback) {
		rc = tg_txn_rollback(r->txn, progress, r);
		tg_log_tx_rollback(r->log, &changes, rc < 0 ? rc : 0);
		r->report.outcome = TG_OUTCOME_ROLLED_BACK;
		if (rc < 0) {
			/* The contract's 125: txguard failed, the workspace is not
			 * what the caller expects; the journal stays for recover. */
			r->report.outcome = TG_OUTCOME_RESTORE_FAILED;
			r->report.error = strerror(-rc);
			status = 125;
		}
	} else {
		/* A failed commit leaves the command's effects in place (they are
		 * what the user asked for); only the history entry is lost. */
		rc = tg_txn_commit(r->txn);
		tg_log_tx_commit(r->log, &changes);
		r->report.outcome = TG_OUTCOME_COMMITTED;
		if (rc < 0)
			tg_warn("commit could not record history: %s", strerror(-rc));
	}
	/* From here on the report is the main thread's alone: a refusal the
	 * secrets' thread was still reporting is in it. */
	tg_fanguard_free(r->fan);
	r->fan = NULL;
	r->report.exit_status = status;
	r->report.end_wall_ns = tg_wall_ns();
	r->report.duration_ns = res->duration_ns;
	tg_log_summary(r->log, &r->report);

	if (want_summary(r, res)) {
		_cleanup_free_ char *line = tg_audit_summary_line(&r->report, r->color);
		if (line)
			fprintf(stderr, "%s\n", line);
	}
	if (r->learn) {
		const char *out = o->learn_out ? o->learn_out : "txguard-learned.yaml";
		int lr = tg_learn_write(r->learn, out, o->argv, res->exit_code);
		if (lr < 0)
			tg_warn("cannot write the learned policy %s: %s", out, strerror(-lr));
		else if (!o->quiet)
			fprintf(stderr, "txguard: drafted %s%s; check it with 'txguard policy check %s'\n", out,
			        res->exit_code ? " (the run failed: the draft is marked so)" : "", out);
	}
	/* Not only after a summary: a failed read of a secret changes nothing,
	 * and the note is what explains its "Permission denied". */
	say_unobserved(r);
	say_exec_failed(r, res);
	if (report_fd >= 0 && (rc = tg_report_write(report_fd, &r->report)) < 0)
		tg_warn("cannot write the report: %s", strerror(-rc));
	if (r->log && (rc = tg_log_error(r->log)) < 0)
		tg_warn("the event log is incomplete: %s", strerror(-rc));
	r->report.changes = NULL;
	tg_changes_clear(&changes);
	return status;
}

static const char *home_dir(void)
{
	const char *h = getenv("HOME");
	return h && *h == '/' ? h : NULL;
}

/* Say why setup failed, on stderr and in the report. Returns 125. */
static int setup_fail(struct run *r, const char *fmt, ...) TG_PRINTF(2, 3);
static int setup_fail(struct run *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return tg_fail("%s", r->error);
}

static int setup(struct run *r, int *report_fd, int *log_fd)
{
	struct tg_opts *o = r->o;
	/* The outputs first, so that every later failure is reported. */
	if (open_output(o->report_path, o->report_fd, "report", report_fd) < 0 ||
	    open_output(o->log_path, o->log_fd, "log", log_fd) < 0)
		return setup_fail(r, "cannot open the report or log output (see above)");
	if (*log_fd >= 0 && !(r->log = tg_log_open(*log_fd, o->log_level)))
		return setup_fail(r, "cannot start the log: %s", strerror(errno));
	char why[sizeof(r->error)];
	if (tg_nested_check(why, sizeof(why)) < 0)
		return setup_fail(r, "%s", why);
	enum tg_ws_source src;
	int rc = tg_workspace_for_writing(o, &r->workspace, &src, why, sizeof(why));
	if (rc < 0)
		return setup_fail(r, "%s", why);
	r->report.workspace = r->workspace;
	r->report.workspace_source = tg_ws_source_name(src);
	if (!(r->ws_policy = tg_path_join(r->workspace, TG_WORKSPACE_POLICY)))
		return setup_fail(r, "out of memory");
	/* `txguard -w DIR -- CMD` runs CMD in DIR, unless the current
	 * directory already lies inside the workspace (then it stays). */
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	r->chdir_workspace = o->workspace && (!cwd || !tg_path_is_under(cwd, r->workspace));
	if (home_dir() && !(r->home = tg_path_normalize(home_dir())))
		return setup_fail(r, "out of memory");
	if (load_policy(r) < 0)
		return setup_fail(r, "the policy has errors; nothing was run (check it with 'txguard policy check')");

	if (o->tx) {
		rc = tg_history_tx_check(r->workspace, o->state_dir, o->tx);
		if (rc == -ENOENT)
			return setup_fail(r, "no transaction '%s' in %s (start one with 'txguard begin')", o->tx, r->workspace);
		if (rc == -ESTALE)
			return setup_fail(r, "transaction '%s' is closed (committed or rolled back)", o->tx);
		if (rc < 0)
			return setup_fail(r, "transaction '%s': %s", o->tx, strerror(-rc));
	}
	/* The history's line: for people, so a 100,000-word argv is cut (the
	 * report keeps every word). */
	_cleanup_free_ char *cmdline = tg_shell_join_max(o->argv, o->argc, 8192);
	if (!cmdline)
		return setup_fail(r, "out of memory");
	struct tg_txn_opts topts = {
		.history_max_runs = o->history_max_runs,
		.history_max_bytes = o->history_max_bytes,
		.workspace = r->workspace,
		.state_dir = o->state_dir,
		.lock = o->lock_fail ? TG_LOCK_FAIL : TG_LOCK_WAIT,
		.command = cmdline,
		.join_id = o->tx,
		.sync = (enum tg_sync_choice)o->journal_sync,
	};
	rc = tg_txn_open(&r->txn, &topts);
	if (rc == -EBUSY)
		return setup_fail(r, "workspace %s is busy: another txguard runs a transaction on it (--lock wait waits)", r->workspace);
	if (rc == -ESTALE)
		return setup_fail(r, "an interrupted transaction of %s would overwrite paths changed after the crash: "
		                  "see 'txguard recover --dry-run', then 'txguard recover --force'", r->workspace);
	if (rc < 0)
		return setup_fail(r, "cannot open the journal for %s: %s", r->workspace, strerror(-rc));
	const struct tg_recovery *rec = tg_txn_recovery(r->txn);
	if (rec->restored > 0 && !o->quiet) {
		_cleanup_free_ char *where = tg_asprintf("a crashed txguard left in %s", r->workspace);
		tg_say_recovered(rec, tg_txn_state_dir(r->txn), where ? where : "");
	}
	const int own[] = { o->report_fd, o->log_fd };
	rc = tg_txn_inherited(r->txn, own, 2, on_inherited, o);
	if (rc < 0)
		return setup_fail(r, "an inherited file descriptor writes to the workspace and its file cannot be "
		                  "saved (%s): close it for the command (e.g. 3>&-) or open it read-only", strerror(-rc));

	struct tg_policy_ctx ctx = {
		.workspace = r->workspace,
		.home = r->home,
		.state_dir = tg_txn_state_dir(r->txn),
		.cache_dir = r->policy_cache,
	};
	tg_policy_set_ctx(r->policy, &ctx);
	_cleanup_strv_ char **create = NULL;
	if (!o->audit_only && tg_policy_create_paths(r->policy, &create) == 0)
		tg_refusals_precreate(create);
	if (o->learn && !(r->learn = tg_learn_new(r->workspace)))
		return setup_fail(r, "out of memory");
	if (tg_approver_new(o->approver, o->approver_timeout_ms, r->workspace, &r->approver) < 0)
		return setup_fail(r, "out of memory");
	if ((rc = prepare_landlock(r)) < 0)
		return setup_fail(r, "cannot read the Landlock ruleset's places: %s", strerror(-rc));
	if (filter_environment(o) < 0)
		return setup_fail(r, "out of memory");
	return 0;
}

/* When nothing could run, the report still says why (outcome setup_failed). */
static void report_setup_failure(struct run *r, int report_fd, const char *why)
{
	r->report.outcome = TG_OUTCOME_SETUP_FAILED;
	r->report.error = why;
	r->report.exit_status = 125;
	r->report.end_wall_ns = tg_wall_ns();
	if (report_fd >= 0)
		tg_report_write(report_fd, &r->report);
}

static const char *setup_hint(int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return "ptrace or seccomp is not permitted here. Hint: in a container, allow ptrace "
		       "(docker run --cap-add SYS_PTRACE --security-opt seccomp=unconfined), or set "
		       "/proc/sys/kernel/yama/ptrace_scope to 1 or less; 'txguard doctor' tells more";
	case ENOSYS:
	case EINVAL:
		return "the kernel lacks seccomp filters or PTRACE_GET_SYSCALL_INFO (Linux >= 5.3 "
		       "with CONFIG_SECCOMP_FILTER); 'txguard doctor' tells more";
	case EOPNOTSUPP:
		return "the policy denies reading secret paths, which needs Landlock (Linux >= 5.13 "
		       "with landlock in the lsm= list); 'txguard doctor' tells more";
	default:
		return NULL;
	}
}

static void unblock_signals(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/* The policy is thousands of small blocks on pages the fork made
 * copy-on-write: freeing them a moment before exit took a page fault per
 * page written (about 40, 0.5 ms of a `txguard -- true`). The process is
 * about to exit, and the kernel frees it all at once; the pointer is kept
 * where leak checkers see it still reachable (git's UNLEAK, the same
 * idea). A second run in the same process frees the first's policy. */
static void keep_until_exit(struct tg_policy *p)
{
	static struct tg_policy *kept;
	tg_policy_free(kept);
	kept = p;
}

int tg_cmd_run(struct tg_opts *o)
{
	struct run r = { .o = o, .color = want_color(o), .landlock_fd = -1,
	                 .decision_lock = PTHREAD_MUTEX_INITIALIZER };
	_cleanup_close_ int report_fd = -1;
	_cleanup_close_ int log_fd = -1;

	r.report.argv = o->argv;
	r.report.start_wall_ns = tg_wall_ns();
	r.report.audit_only = o->audit_only;
	r.report.rollback_on = o->rollback_on_text;

	int rc = setup(&r, &report_fd, &log_fd);
	if (rc == 0) {
		/* network: hosts: — the egress proxy, before the fork so that the
		 * command inherits HTTP_PROXY & co. */
		const char *why = NULL;
		r.proxy.log = r.log, r.proxy.quiet = o->quiet, r.proxy.color = r.color;
		r.proxy.resolve = o->proxy_resolve, r.proxy.timeout_ms = o->proxy_timeout_ms;
		if (tg_run_proxy_start(&r.proxy, r.policy, &why) < 0) {
			rc = setup_fail(&r, "%s", why);
			tg_txn_rollback(r.txn, NULL, NULL);
		}
	}
	if (rc != 0) {
		report_setup_failure(&r, report_fd, r.error[0] ? r.error : "setup failed");
		goto out;
	}
	r.report.workspace = r.workspace;
	r.report.txid = tg_txn_id(r.txn);

	struct tg_policy_filter_info fi;
	tg_policy_filter_info(r.policy, &fi);
	/* Signals stay blocked past the run so that a Ctrl-C cannot cut the
	 * rollback short; they are unblocked once the report is out. */
	struct tg_tracer_opts topts = {
		.keep_signals_blocked = true,
		.argv = o->argv,
		.filter = {
			.denied_syscalls = fi.denied_syscalls,
			.deny_errno = fi.deny_errno,
			.ndenied = fi.ndenied,
			.trap_network = fi.trap_network,
		},
		.timeout_ms = o->timeout_ms,
		.kill_after_ms = o->kill_after_ms,
		.grace_ms = o->grace_ms,
		/* --max-procs, else the policy's limits.max_procs, else 4096. */
		.max_procs = o->max_procs ? o->max_procs : fi.max_procs ? fi.max_procs : 4096,
		.child_setup = child_setup,
		.child_ud = &r,
	};
	struct tg_tracer_hooks hooks = {
		.ud = &r, .on_op = on_op, .on_spawn = on_spawn, .on_company = on_company, .on_exec = on_exec,
		.on_exit = on_exit_hook, .on_kill = on_kill, .on_result = on_result,
		.on_fixed = on_fixed, .on_unnamed_root = on_unnamed_root,
	};
	/* Compiled once, here, or read back from the policy cache: a bad
	 * config is reported before anything forks, and the tracer loads
	 * this very program. */
	const char *bad = NULL;
	struct tg_filter_prog prog;
	rc = tg_filter_prepare_cached(&topts.filter, &prog, &bad, r.policy_cache, r.policy_cache_trusted);
	topts.prog = &prog;
	if (rc < 0) {
		if (bad)
			setup_fail(&r, "the policy denies syscall '%s', which the seccomp filter cannot express "
			           "(unknown name or errno out of range)", bad);
		else
			setup_fail(&r, "cannot build the seccomp filter: %s", strerror(-rc));
		/* Nothing ran, but the journal is open: close it cleanly. */
		tg_txn_rollback(r.txn, NULL, NULL);
		report_setup_failure(&r, report_fd, r.error);
		rc = 125;
		goto out;
	}
	struct tg_run_result res = { 0 };
	tg_log_set_txid(r.log, tg_txn_id(r.txn));
	tg_log_tx_begin(r.log, tg_txn_id(r.txn), r.workspace);
	/* A followed name's directory is kept for the journal only below
	 * the workspace, where the journal looks it up (docs/tracer.md). */
	tg_path_keep_under(r.workspace);
	rc = tg_tracer_run(&topts, &hooks, &res);
	tg_path_keep_under(NULL);
	/* The tree is gone: no more opens of ours to refuse. The secrets'
	 * thread ends while the run is committed or rolled back, and is
	 * joined before the report (finish); the group's teardown is the
	 * unmarker's, which nobody waits for. */
	tg_fanguard_stop(r.fan);
	tg_run_proxy_finish(&r.proxy, &r.report);
	tg_filter_prog_free(&prog);
	if (rc < 0) {
		const char *hint = setup_hint(-rc);
		tg_warn("cannot supervise the command: %s%s%s", strerror(-rc), hint ? "; " : "",
		        hint ? hint : "");
		/* Nothing ran, but the journal is open: close it cleanly. */
		tg_txn_rollback(r.txn, NULL, NULL);
		tg_fanguard_free(r.fan);
		r.fan = NULL;
		report_setup_failure(&r, report_fd, strerror(-rc));
		rc = 125;
		goto out;
	}
	rc = finish(&r, &res, report_fd);
	/* The report is out: runs the commit pruned are freed in the background. */
	tg_txn_collect(r.txn);
	if (o->tx) {
		/* Membership is recorded after this run's own commit or rollback,
		 * with the workspace lock released (history takes it itself). */
		_cleanup_free_ char *txn_id = tg_strdup(tg_txn_id(r.txn));
		bool rolled_back = r.report.outcome != TG_OUTCOME_COMMITTED;
		tg_txn_free(r.txn);
		r.txn = NULL;
		int hr = tg_history_tx_record(r.workspace, o->state_dir, o->tx, txn_id, rolled_back,
		                              rolled_back && o->tx_failure_all);
		if (hr == -EEXIST)
			tg_warn("transaction '%s' kept open: an earlier member's paths were changed outside txguard (see 'txguard rollback %s')", o->tx, o->tx);
		else if (hr < 0)
			tg_warn("transaction '%s': cannot record this run: %s", o->tx, strerror(-hr));
	}
out:
	tg_run_proxy_clear(&r.proxy);
	tg_fanguard_free(r.fan);
	tg_txn_free(r.txn);
	keep_until_exit(r.policy);
	tg_refusals_free(r.refusals);
	if (r.landlock_fd >= 0)
		close(r.landlock_fd);
	tg_approver_free(r.approver);
	tg_learn_free(r.learn);
	tg_log_close(r.log);
	tg_report_clear(&r.report);
	free(r.workspace);
	free(r.home);
	free(r.last_denial);
	free(r.ws_policy);
	free(r.policy_cache);
	pthread_mutex_destroy(&r.decision_lock);
	unblock_signals();
	/* The group's unmarker copied our fds, the state dir's lock too: it
	 * must have let them go before we do (landlock.h). */
	tg_fanguard_unmarker_wait();
	return rc;
}
