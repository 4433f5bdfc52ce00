/* policy/match.c — judging one operation against the merged rules.
 *
 * Verdicts: every enabled rule that matches contributes its action and the
 * strictest wins (kill > deny > audit > allow); the first rule wins a tie.
 * When no rule denies, the built-in defaults apply: writes are allowed in the
 * workspace and the writable places only, and an allow rule for a path (or a
 * network address, under `network: default: deny`) widens those defaults.
 * Exec allow rules therefore only name why something is allowed: they can
 * never cancel a deny of another rule.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "argv.h"
#include "glob.h"
#include "base/path.h"
#include "policy_int.h"
#include "remote.h"
#include "base/util.h"

#define BUF 8192

/* Writable whatever the policy says: without them a shell cannot even
 * redirect to /dev/null, and --no-default-policy would be unusable. */
const char *const tg_policy_builtin_writable[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", NULL,
};

/* Match, failing closed on a pattern too complex to decide: a deny rule
 * matches, an allow rule does not. */
static bool gmatch(const char *pat, const char *s, enum tg_glob_mode mode, bool closed)
{
	enum tg_glob_result r = tg_glob_match(pat, s, mode);
	return r == TG_GLOB_TOO_COMPLEX ? closed : r == TG_GLOB_MATCH;
}

static bool pathglob(const struct tg_match_env *env, const char *pat, const char *path, bool closed)
{
	char buf[BUF];
	if (tg_expand_pattern(pat, env->home, env->workspace, buf, sizeof(buf)) < 0)
		return false;
	return gmatch(buf, path, TG_GLOB_PATH, closed);
}

static bool is_pathlike(const char *s)
{
	return s[0] == '/' || s[0] == '~' || strncmp(s, "$HOME", 5) == 0 ||
	       strncmp(s, "${HOME}", 7) == 0 || strncmp(s, "$WORKSPACE", 10) == 0;
}

static bool under(const char *path, const char *dir)
{
	size_t l = strlen(dir);
	if (l == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, l) == 0 && (path[l] == '\0' || path[l] == '/');
}

/* "pipe:[12]", "socket:[3]", "anon_inode:[eventfd]", "/memfd:x (deleted)"
 * come from /proc/PID/fd links: no name in any directory a write could hit. */
static bool is_fs_path(const char *p)
{
	return p[0] == '/' && strncmp(p, "/memfd:", 7) != 0;
}

static bool in_writable_list(const struct tg_match_env *env, const char *path, bool strict)
{
	const struct tg_policy *p = env->p;
	char buf[BUF];
	/* The real context has them expanded once by tg_policy_set_ctx. */
	if (p && p->writable_exp.n && env->home == p->home && env->workspace == p->workspace) {
		for (size_t i = 0; i < p->writable_exp.n; i++)
			if (under(path, p->writable_exp.v[i]) &&
			    !(strict && strcmp(path, p->writable_exp.v[i]) == 0))
				return true;
		return false;
	}
	for (size_t i = 0; tg_policy_builtin_writable[i]; i++)
		if (under(path, tg_policy_builtin_writable[i]))
			return true;
	for (size_t i = 0; p && i < p->writable.n; i++) {
		if (tg_expand_pattern(p->writable.v[i], env->home, env->workspace, buf, sizeof(buf)) < 0)
			continue;
		/* tg_expand_pattern escapes metacharacters of home; writable
		 * entries are literal, so undo that for a plain comparison. */
		char plain[BUF];
		size_t w = 0;
		for (const char *c = buf; *c && w + 1 < sizeof(plain); c++) {
			if (*c == '\\' && c[1])
				c++;
			plain[w++] = *c;
		}
		plain[w] = '\0';
		if (under(path, plain) && !(strict && strcmp(path, plain) == 0))
			return true;
	}
	return false;
}

static unsigned op_bit(const struct tg_op *op)
{
	return op->kind == TG_OP_EXEC ? TG_PATH_OPS_EXEC : 1u << op->kind;
}

static bool allowed_by_rule(const struct tg_match_env *env, const struct tg_op *op, const char *path)
{
	const struct tg_policy *p = env->p;
	for (size_t i = 0; p && i < p->nrules; i++) {
		const struct tg_rule *r = p->rules[i];
		if (r->disabled_by || r->kind != TG_RULE_PATH || r->action != TG_ACT_ALLOW)
			continue;
		if (!(r->path.ops & op_bit(op)))
			continue;
		for (size_t j = 0; j < r->path.match.n; j++)
			if (pathglob(env, r->path.match.v[j], path, false))
				return true;
	}
	return false;
}

bool tg_policy_path_writable(const struct tg_match_env *env, const struct tg_op *op, const char *path)
{
	if (!is_fs_path(path))
		return true;
	if (env->workspace && under(path, env->workspace))
		return true;
	return in_writable_list(env, path, false) || allowed_by_rule(env, op, path);
}

/* ---- exec ------------------------------------------------------------------ */

static const char *base_name(const char *s)
{
	const char *b = strrchr(s, '/');
	return b ? b + 1 : s;
}

static bool is_multicall(const char *name)
{
	return strcmp(name, "busybox") == 0 || strcmp(name, "toybox") == 0;
}

static bool program_matches(const struct tg_exec_match *e, const struct tg_op *op, char *const *argv)
{
	const char *names[2] = { NULL, NULL };
	char norm[BUF];
	if (op->path)
		names[0] = base_name(op->path);
	if (argv[0])
		names[1] = base_name(argv[0]);
	for (size_t i = 0; i < e->program.n; i++) {
		const char *pat = e->program.v[i];
		if (strchr(pat, '/')) {
			if (op->path && gmatch(pat, op->path, TG_GLOB_PATH, true))
				return true;
			if (argv[0] && argv[0][0] == '/' && tg_normpath(argv[0], norm, sizeof(norm)) == 0 &&
			    gmatch(pat, norm, TG_GLOB_PATH, true))
				return true;
			continue;
		}
		for (size_t k = 0; k < 2; k++)
			if (names[k] && gmatch(pat, names[k], TG_GLOB_STRING, true))
				return true;
	}
	return false;
}

static bool flags_match(const struct tg_exec_match *e, const struct tg_cmdline *c)
{
	for (size_t i = 0; i < e->nflags; i++) {
		bool any = false;
		for (size_t j = 0; j < e->flags[i].alts.n && !any; j++)
			any = tg_cmdline_has_flag(c, e->flags[i].alts.v[j]);
		if (!any)
			return false;
	}
	for (size_t j = 0; j < e->not_flags.n; j++)
		if (tg_cmdline_has_flag(c, e->not_flags.v[j]))
			return false;
	if (e->any_flags.n) {
		for (size_t j = 0; j < e->any_flags.n; j++)
			if (tg_cmdline_has_flag(c, e->any_flags.v[j]))
				return true;
		return false;
	}
	return true;
}

static bool arg_matches(const struct tg_match_env *env, const char *pat, const char *arg)
{
	char path[BUF];
	if (!is_pathlike(pat)) {
		if (gmatch(pat, arg, TG_GLOB_STRING, true))
			return true;
		/* dd's "of=/dev/../dev/sda": normalise the value of key=/path. */
		const char *eq = strchr(arg, '=');
		if (!eq || eq[1] != '/' || tg_normpath(eq + 1, path, sizeof(path)) < 0)
			return false;
		_cleanup_free_ char *kv = tg_asprintf("%.*s=%s", (int)(eq - arg), arg, path);
		return kv && gmatch(pat, kv, TG_GLOB_STRING, true);
	}
	if (tg_arg_to_path(arg, env->cwd, env->home, path, sizeof(path)) < 0)
		return false;
	return pathglob(env, pat, path, true);
}

static bool outside(const struct tg_match_env *env, const char *arg)
{
	char path[BUF];
	if (tg_arg_to_path(arg, env->cwd, env->home, path, sizeof(path)) < 0)
		return true;
	if (env->workspace && under(path, env->workspace))
		return false;
	/* The writable roots themselves (/tmp, ~/.cache) are not fair game. */
	return !in_writable_list(env, path, true);
}

static bool args_match(const struct tg_match_env *env, const struct tg_exec_match *e,
                       const struct tg_cmdline *c)
{
	/* The subcommand, when the rule names one, is not an argument. */
	size_t first = tg_cmdline_pos_from(c, 1);
	if (first && e->subcommand.n)
		first = tg_cmdline_pos_from(c, first + 1);
	if (e->args.n) {
		bool hit = false;
		for (size_t i = first; i && !hit; i = tg_cmdline_pos_from(c, i + 1))
			for (size_t j = 0; j < e->args.n && !hit; j++)
				hit = arg_matches(env, e->args.v[j], c->argv[i]);
		if (!hit)
			return false;
	}
	if (e->outside_workspace) {
		bool hit = false;
		for (size_t i = first; i && !hit; i = tg_cmdline_pos_from(c, i + 1))
			hit = outside(env, c->argv[i]);
		if (!hit)
			return false;
	}
	return true;
}

static bool words_match(const struct tg_exec_match *e, char *const *argv, size_t argc)
{
	if (e->words.n == 0)
		return true;
	for (size_t i = 1; i < argc; i++)
		for (size_t j = 0; j < e->words.n; j++)
			if (gmatch(e->words.v[j], argv[i], TG_GLOB_STRING, true))
				return true;
	return false;
}

/* `sh -c SCRIPT`, `bash -ec SCRIPT`: the script is the first positional. The
 * commands it runs are vetted on their own execve; only pipelines such as
 * "curl ... | sh", which never exec anything suspicious by themselves, need a
 * look at the text. */
static bool script_matches(const struct tg_exec_match *e, const struct tg_cmdline *c)
{
	bool dash_c = false;
	for (size_t i = 0; i < c->nflags && !dash_c; i++)
		dash_c = c->flags[i].short_name == 'c';
	if (!dash_c || c->npos == 0)
		return false;
	for (size_t i = 0; i < e->script.n; i++)
		if (gmatch(e->script.v[i], c->pos0, TG_GLOB_STRING, true))
			return true;
	return false;
}

/* argc and the NULL terminator must agree; trust the smaller. */
static size_t op_argc(const struct tg_op *op)
{
	size_t n = 0;
	while (op->argv[n] && (!op->argc || n < op->argc))
		n++;
	return n;
}

static bool exec_matches(const struct tg_match_env *env, const struct tg_exec_match *e,
                         const struct tg_op *op)
{
	char *const *argv = op->argv;
	struct tg_cmdline c;
	if (!argv)
		return false;
	size_t argc = env->argv == argv ? env->argc : op_argc(op);
	if (argc == 0)
		return false;
	/* busybox rm -rf /: the applet is argv[1]. */
	if ((is_multicall(base_name(argv[0])) || (op->path && is_multicall(base_name(op->path)))) &&
	    argc > 1 && argv[1][0] != '-')
		argv++, argc--;
	if (!program_matches(e, op, argv))
		return false;
	if (tg_cmdline_parse(argv, argc, e->value_flags.v, e->value_flags.n, &c) < 0)
		return true; /* fail closed */
	bool ok = true;
	if (e->subcommand.n) {
		ok = false;
		for (size_t i = 0; c.npos && i < e->subcommand.n && !ok; i++)
			ok = gmatch(e->subcommand.v[i], c.pos0, TG_GLOB_STRING, true);
	}
	ok = ok && flags_match(e, &c) && args_match(env, e, &c) && words_match(e, argv, argc);
	if (ok && e->script.n)
		ok = script_matches(e, &c);
	tg_cmdline_clear(&c);
	return ok;
}

/* ---- path rules -------------------------------------------------------------- */

static bool path_rule_matches(const struct tg_match_env *env, const struct tg_rule *r,
                              const struct tg_op *op)
{
	bool closed = r->action != TG_ACT_ALLOW;
	if (!(r->path.ops & op_bit(op)))
		return false;
	for (size_t i = 0; i < r->path.match.n; i++) {
		if (op->path && pathglob(env, r->path.match.v[i], op->path, closed))
			return true;
		if (op->path2 && pathglob(env, r->path.match.v[i], op->path2, closed))
			return true;
	}
	return false;
}

/* ---- network ------------------------------------------------------------------ */

struct inet {
	int family;
	uint8_t addr[16];
	uint16_t port;
};

static bool get_inet(const struct tg_op *op, struct inet *out)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const struct sockaddr *sa = (const struct sockaddr *)&op->addr;
	memset(out, 0, sizeof(*out));
	if (sa->sa_family == AF_INET && op->addrlen >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)&op->addr;
		out->family = AF_INET;
		memcpy(out->addr, &in->sin_addr, 4);
		out->port = ntohs(in->sin_port);
		return true;
	}
	if (sa->sa_family == AF_INET6 && op->addrlen >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)&op->addr;
		out->port = ntohs(in6->sin6_port);
		/* ::ffff:a.b.c.d is IPv4 on the wire: judge it as such. */
		if (memcmp(&in6->sin6_addr, mapped, 12) == 0) {
			out->family = AF_INET;
			memcpy(out->addr, (const uint8_t *)&in6->sin6_addr + 12, 4);
		} else {
			out->family = AF_INET6;
			memcpy(out->addr, &in6->sin6_addr, 16);
		}
		return true;
	}
	return false;
}

static bool cidr_hit(const struct tg_cidr *c, const struct inet *a)
{
	if (c->family != a->family)
		return false;
	unsigned full = c->prefix / 8, rest = c->prefix % 8;
	if (memcmp(c->addr, a->addr, full) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (c->addr[full] & mask) == (a->addr[full] & mask);
}

static bool is_loopback(const struct inet *a)
{
	static const uint8_t one[16] = { [15] = 1 };
	if (a->family == AF_INET)
		return a->addr[0] == 127;
	return memcmp(a->addr, one, 16) == 0;
}

/* The AF_UNIX name: a path, or "@name" for the abstract namespace. */
static bool unix_name(const struct tg_op *op, char *buf, size_t bufsz)
{
	const struct sockaddr_un *un = (const void *)&op->addr;
	if (un->sun_family != AF_UNIX || op->addrlen <= offsetof(struct sockaddr_un, sun_path))
		return false;
	size_t n = op->addrlen - offsetof(struct sockaddr_un, sun_path);
	if (n > sizeof(un->sun_path))
		n = sizeof(un->sun_path);
	const char *s = un->sun_path;
	size_t w = 0;
	if (n && s[0] == '\0') {
		buf[w++] = '@';
		s++, n--;
	}
	for (size_t i = 0; i < n && s[i] && w + 1 < bufsz; i++)
		buf[w++] = s[i];
	buf[w] = '\0';
	return true;
}

static bool connect_matches(const struct tg_rule *r, const struct tg_op *op)
{
	const struct tg_connect_match *cm = &r->conn;
	bool closed = r->action != TG_ACT_ALLOW;
	char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 2];
	struct inet a;
	if (unix_name(op, name, sizeof(name))) {
		/* The decoder resolved a named socket in the tracee's view (cwd,
		 * symlinks, /proc/self/fd/N) into op->path: that is the socket
		 * reached. An allow rule looks at it alone; deny, kill and audit
		 * also at the name as written (a rule naming /var/run/x still
		 * catches a /var/run that is a symlink to /run). */
		bool named = name[0] != '@' && op->path;
		for (size_t i = 0; i < cm->unix_paths.n; i++) {
			const char *pat = cm->unix_paths.v[i];
			if (named && gmatch(pat, op->path, TG_GLOB_STRING, closed))
				return true;
			if ((closed || !named) && gmatch(pat, name, TG_GLOB_STRING, closed))
				return true;
		}
		return false;
	}
	if (!get_inet(op, &a))
		return false;
	bool host = cm->any_inet || (cm->loopback && is_loopback(&a));
	for (size_t i = 0; i < cm->ncidr && !host; i++)
		host = cidr_hit(&cm->cidr[i], &a);
	if (!host)
		return false;
	if (cm->nports == 0)
		return true;
	for (size_t i = 0; i < cm->nports; i++)
		if (a.port >= cm->ports[i].lo && a.port <= cm->ports[i].hi)
			return true;
	return false;
}

static void set_builtin(struct tg_verdict *out, enum tg_action a, int err, const char *id,
                        const char *reason)
{
	out->action = a;
	out->err = err;
	out->rule_id = id;
	out->reason = reason;
	out->source = "builtin";
}

/* ---- other processes -------------------------------------------------------------- */

static bool victim_matches(const struct tg_process_match *m, const struct tg_proc_victim *v)
{
	bool name = m->program.n == 0, uid = m->nuids == 0, cg = m->cgroup.n == 0;
	for (size_t i = 0; i < m->program.n && !name; i++)
		name = v->comm[0] && gmatch(m->program.v[i], v->comm, TG_GLOB_STRING, false);
	for (size_t i = 0; i < m->nuids && !uid; i++)
		uid = v->uid == m->uids[i];
	/* Path globs: '*' stays within one level, '**' reaches below. */
	for (size_t i = 0; i < m->cgroup.n && !cg; i++)
		cg = v->cgroup[0] && gmatch(m->cgroup.v[i], v->cgroup, TG_GLOB_PATH, false);
	return name && uid && cg;
}

/* An allow rule covers a call when it names every outside process the call
 * reaches; "every process of a user" or a group too large to list names
 * processes no rule can have seen. */
static bool process_matches(const struct tg_rule *r, const struct tg_op *op)
{
	const struct tg_proc_target *t = &op->proc;
	if (op->kind != TG_OP_PROCESS || !t->nvictims || t->nmore || t->whole_user)
		return false;
	for (size_t i = 0; i < t->nvictims; i++)
		if (!victim_matches(&r->proc, &t->victims[i]))
			return false;
	return true;
}

static const char signal_reason[] =
	"the signal would reach a process outside the traced tree (named above), which txguard cannot "
	"undo; send it yourself outside txguard, or allow that program for this job with a "
	"'process:' allow rule in a policy file (-p FILE)";
static const char process_reason[] =
	"the call acts on a process outside the traced tree (its priority, limits, CPUs or memory); "
	"do it yourself outside txguard, or allow that program for this job with a 'process:' allow "
	"rule in a policy file (-p FILE)";

/* Signals and the like stay inside the traced tree unless a rule names
 * the outside process. */
static void process_default(const struct tg_match_env *env, const struct tg_op *op,
                            struct tg_verdict *out)
{
	const struct tg_policy *p = env->p;
	if (!tg_op_reaches_outside(op))
		return;
	for (size_t i = 0; p && i < p->nrules; i++) {
		const struct tg_rule *r = p->rules[i];
		if (!r->disabled_by && r->kind == TG_RULE_PROCESS && process_matches(r, op))
			return;
	}
	if (op->proc.sig)
		set_builtin(out, TG_ACT_DENY, EPERM, "signal-outside-tree", signal_reason);
	else
		set_builtin(out, TG_ACT_DENY, EPERM, "process-outside-tree", process_reason);
}

/* "node", "node uid=1000", "node cgroup=/user.slice/x.scope uid=1000": an
 * outside process for `policy check`. */
int tg_example_process_op(const char *text, struct tg_op *op)
{
	struct tg_proc_victim *v = &op->proc.victims[0];
	const char *sp = strchr(text, ' ');
	size_t l = sp ? (size_t)(sp - text) : strlen(text);
	memset(op, 0, sizeof(*op));
	op->kind = TG_OP_PROCESS;
	op->name = "kill";
	op->proc.sig = 15;
	op->proc.pid = 4242;
	op->proc.nvictims = 1;
	v->pid = 4242;
	v->uid = -1;
	if (l == 0 || l >= sizeof(v->comm))
		return -EINVAL;
	memcpy(v->comm, text, l);
	while (sp) {
		const char *w = sp + 1;
		char *end = NULL;
		sp = strchr(w, ' ');
		size_t wl = sp ? (size_t)(sp - w) : strlen(w);
		if (strncmp(w, "uid=", 4) == 0) {
			v->uid = strtol(w + 4, &end, 10);
			if (end == w + 4 || end != w + wl)
				return -EINVAL;
		} else if (strncmp(w, "cgroup=/", 8) == 0 && wl - 7 < sizeof(v->cgroup)) {
			memcpy(v->cgroup, w + 7, wl - 7);
			v->cgroup[wl - 7] = '\0';
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- decide ---------------------------------------------------------------------- */

bool tg_rule_matches(const struct tg_rule *r, const struct tg_match_env *env, const struct tg_op *op)
{
	switch (r->kind) {
	case TG_RULE_EXEC:
		return op->kind == TG_OP_EXEC && exec_matches(env, &r->exec, op);
	case TG_RULE_PATH:
		return path_rule_matches(env, r, op);
	case TG_RULE_SYSCALL:
		if (!op->name)
			return false;
		for (size_t i = 0; i < r->syscalls.n; i++)
			if (strcmp(r->syscalls.v[i], op->name) == 0)
				return true;
		return false;
	case TG_RULE_CONNECT:
		return (op->kind == TG_OP_CONNECT || op->kind == TG_OP_SENDTO) && connect_matches(r, op);
	case TG_RULE_PROCESS:
		return process_matches(r, op);
	default:
		return false;
	}
}

static bool is_write_open(const struct tg_op *op)
{
	return op->writes || (op->flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC));
}

static bool deny_read_hit(const struct tg_match_env *env, const char *path)
{
	const struct tg_policy *p = env->p;
	if (env->workspace && under(path, env->workspace))
		return false;
	/* An entry names a file or a directory and everything below it. */
	for (size_t i = 0; p && i < p->deny_read.n; i++) {
		char sub[BUF];
		if (pathglob(env, p->deny_read.v[i], path, true))
			return true;
		snprintf(sub, sizeof(sub), "%s/**", p->deny_read.v[i]);
		if (pathglob(env, sub, path, true))
			return true;
	}
	return false;
}

static bool kind_writes(enum tg_op_kind k)
{
	return k >= TG_OP_UNLINK && k <= TG_OP_XATTR;
}

/* The defaults before any rule: state dir, secrets, read-only outside. */
static void builtin_verdict(const struct tg_match_env *env, const struct tg_op *op,
                            struct tg_verdict *out)
{
	const char *own[] = { env->state_dir, env->cache_dir };
	for (size_t i = 0; i < TG_ARRAY_SIZE(own); i++) {
		const char *sd = own[i];
		if (sd && ((op->path && under(op->path, sd)) || (op->path2 && under(op->path2, sd)))) {
			set_builtin(out, TG_ACT_DENY, EACCES, "state-dir",
			            i == 0 ? "txguard's own journal and history are off limits to the command"
			                   : "txguard's policy cache is off limits to the command");
			return;
		}
	}
	/* A write-only open reads nothing: it is judged as the write it is
	 * (tar creating /tmp/x/.env is not reading a secret). */
	if (op->kind == TG_OP_OPEN && (op->flags & O_ACCMODE) != O_WRONLY && op->path &&
	    deny_read_hit(env, op->path)) {
		set_builtin(out, TG_ACT_DENY, EACCES, "deny-read",
		            "secrets (keys, tokens, credentials) are not readable under txguard");
		return;
	}
	bool w = kind_writes(op->kind) || (op->kind == TG_OP_OPEN && is_write_open(op));
	if (!w)
		return;
	if (!op->path || (op->kind == TG_OP_RENAME && !op->path2) ||
	    (op->kind == TG_OP_LINK && !op->path2)) {
		set_builtin(out, TG_ACT_DENY, EACCES, "unknown-path",
		            "the path of this write could not be read: refused (fail closed)");
		return;
	}
	/* link(2): path is the existing inode, path2 the new name. */
	const char *dst = op->kind == TG_OP_LINK ? op->path2 : op->path;
	if (!tg_policy_path_writable(env, op, dst) ||
	    (op->kind == TG_OP_RENAME && !tg_policy_path_writable(env, op, op->path2))) {
		struct stat st;
		if (op->kind == TG_OP_MKDIR && lstat(op->path, &st) == 0) {
			set_builtin(out, TG_ACT_DENY, EEXIST, "read-only-outside-workspace",
			            "mkdir of an existing directory outside the workspace");
			return;
		}
		set_builtin(out, TG_ACT_DENY, EACCES, "read-only-outside-workspace",
		            "only the workspace and the writable places may change; the rest is read-only");
		return;
	}
	if (op->kind == TG_OP_LINK && !tg_policy_path_writable(env, op, op->path)) {
		/* A hard link inside the workspace to an outside inode would let
		 * later writes through the workspace name reach that inode.
		 * EXDEV makes tools fall back to copying. */
		set_builtin(out, TG_ACT_DENY, EXDEV, "link-outside-inode",
		            "hard links to files outside the workspace are refused (copy instead)");
	}
}

static void network_default(const struct tg_match_env *env, const struct tg_op *op,
                            struct tg_verdict *out)
{
	const struct tg_policy *p = env->p;
	if (!p || !p->network_deny || (op->kind != TG_OP_CONNECT && op->kind != TG_OP_SENDTO))
		return;
	if (op->addrlen == 0)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct tg_rule *r = p->rules[i];
		if (!r->disabled_by && r->kind == TG_RULE_CONNECT && r->action == TG_ACT_ALLOW &&
		    connect_matches(r, op))
			return;
	}
	set_builtin(out, TG_ACT_DENY, EACCES, "network-default-deny",
	            "network access is denied by default in this policy");
}

/* With `network: hosts:` the proxy is the way out: a direct connection to
 * anything but loopback (or a place an allow rule names) is refused with a
 * reason that points at the proxy variables. DNS is refused outright, on
 * loopback too: the proxy resolves the names it allows, and a query is
 * itself a channel out (the name reaches whatever server answers for it).
 * Local resolver daemons reached over unix sockets (nscd, systemd-resolved)
 * are not refused: glibc asks nscd even for numeric names, so refusing it
 * would print a denial for every tool (docs/proxy.md, "DNS"). */
static void hosts_direct(const struct tg_match_env *env, const struct tg_op *op,
                         struct tg_verdict *out)
{
	const struct tg_policy *p = env->p;
	struct inet a;
	if (!p || !p->nhosts || (op->kind != TG_OP_CONNECT && op->kind != TG_OP_SENDTO) ||
	    out->action != TG_ACT_ALLOW)
		return;
	if (get_inet(op, &a) && a.port == 53) {
		set_builtin(out, TG_ACT_DENY, EACCES, "network-hosts-dns",
		            "DNS is refused while network.hosts is in force: the proxy resolves "
		            "allowed names; reach hosts through $HTTPS_PROXY / $HTTP_PROXY");
		return;
	}
	if (!get_inet(op, &a) || is_loopback(&a))
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct tg_rule *r = p->rules[i];
		if (!r->disabled_by && r->kind == TG_RULE_CONNECT && r->action == TG_ACT_ALLOW &&
		    !r->conn.loopback && connect_matches(r, op))
			return;
	}
	set_builtin(out, TG_ACT_DENY, EACCES, "network-hosts-proxy",
	            "direct connections are refused while network.hosts is in force: use the proxy "
	            "in $HTTPS_PROXY / $HTTP_PROXY (curl, pip, git, npm follow it)");
}

/* ---- the dynamic loader --------------------------------------------------------- */

/* "ld.so PROG" maps and runs PROG without any exec of it: the kernel only
 * sees the loader. The names glibc and musl install, also as the real file
 * an exec resolves to (ld-2.31.so behind ld-linux-x86-64.so.2). */
static bool is_loader_name(const char *name)
{
	static const char *const pats[] = { "ld-*.so*", "ld.so*", "ld64.so*" };
	for (size_t i = 0; i < TG_ARRAY_SIZE(pats); i++)
		if (tg_glob_match(pats[i], name, TG_GLOB_STRING) == TG_GLOB_MATCH)
			return true;
	return false;
}

static bool in_list(const char *const *v, const char *s)
{
	for (size_t i = 0; v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* The loader's own options (glibc rtld, musl ldso): they stop at the first
 * argument that does not start with "--"; "--" itself ends them. */
static const char *const ldso_value_opts[] = {
	"--library-path", "--inhibit-rpath", "--audit", "--preload", "--argv0",
	"--glibc-hwcaps-prepend", "--glibc-hwcaps-mask", NULL,
};
static const char *const ldso_flag_opts[] = {
	"--list", "--verify", "--inhibit-cache", "--list-tunables", "--list-diagnostics",
	"--help", "--version", NULL,
};

/* Index of the program in a loader's argv (argc when there is none) and the
 * --argv0 value. An option this list does not know is read as a flag, or
 * with unknown_value as taking the next word: the caller judges both. */
static size_t ldso_program(char *const *argv, size_t argc, bool unknown_value, const char **argv0)
{
	size_t i = 1;
	*argv0 = NULL;
	while (i < argc && strncmp(argv[i], "--", 2) == 0) {
		const char *a = argv[i];
		if (a[2] == '\0')
			return i + 1;
		if (strncmp(a, "--argv0=", 8) == 0)
			*argv0 = a + 8;
		bool value = in_list(ldso_value_opts, a) ||
		             (unknown_value && !in_list(ldso_flag_opts, a) && !strchr(a, '='));
		if (value && strcmp(a, "--argv0") == 0 && i + 1 < argc)
			*argv0 = argv[i + 1];
		i += value ? 2 : 1;
	}
	return i < argc ? i : argc;
}

/* The program as the loader opens it: in the tracee's view (its cwd, its
 * symlinks, /proc/self/fd/N of a memfd) when there is a tracee, else
 * lexically against env->cwd (explain, examples). */
static char *loader_program_path(const struct tg_match_env *env, pid_t pid, const char *arg)
{
	char buf[PATH_MAX];
	char *out = NULL;
	if (pid > 0 && tg_path_resolve(pid, AT_FDCWD, arg, true, false, &out) == 0)
		return out;
	if (tg_arg_to_path(arg, env->cwd, NULL, buf, sizeof(buf)) < 0)
		return NULL;
	return tg_strdup(buf);
}

bool tg_is_loader_exec(const struct tg_op *op)
{
	const char *prog;
	if (!op || op->kind != TG_OP_EXEC || !op->argv || !op->argv[0])
		return false;
	prog = op->path ? op->path : op->argv[0];
	return is_loader_name(base_name(prog));
}

int tg_loader_op(const struct tg_match_env *env, const struct tg_op *op, bool alt, struct tg_op *in)
{
	const char *argv0;
	memset(in, 0, sizeof(*in));
	if (!tg_is_loader_exec(op))
		return -ENOENT;
	size_t argc = tg_strv_len(op->argv);
	if (op->argc && op->argc < argc)
		argc = op->argc;
	size_t i = ldso_program(op->argv, argc, alt, &argv0);
	if (i >= argc)
		return -ENOENT;
	in->kind = TG_OP_EXEC;
	in->name = op->name;
	in->nr = op->nr;
	in->pid = op->pid;
	in->argc = argc - i;
	in->argv = calloc(in->argc + 1, sizeof(*in->argv));
	if (!in->argv)
		return -ENOMEM;
	/* NULL when it cannot be named: the names in argv are still judged. */
	in->path = loader_program_path(env, op->pid, op->argv[i]);
	/* Strings stay borrowed from op; the program sees --argv0 as argv[0]
	 * (busybox dispatches on it). */
	memcpy(in->argv, op->argv + i, in->argc * sizeof(*in->argv));
	if (argv0)
		in->argv[0] = (char *)argv0;
	return 0;
}

void tg_loader_op_clear(struct tg_op *in)
{
	free(in->argv);
	free(in->path);
	memset(in, 0, sizeof(*in));
}

/* ---- decide ------------------------------------------------------------------------ */

static void judge_one(const struct tg_match_env *penv, const struct tg_op *op, struct tg_verdict *out)
{
	struct tg_match_env one = *penv;
	const struct tg_match_env *env = &one;
	one.argv = op->kind == TG_OP_EXEC ? op->argv : NULL;
	one.argc = one.argv ? op_argc(op) : 0;
	memset(out, 0, sizeof(*out));
	out->action = TG_ACT_ALLOW;
	builtin_verdict(env, op, out);
	network_default(env, op, out);
	hosts_direct(env, op, out);
	process_default(env, op, out);
	const struct tg_policy *p = env->p;
	for (size_t i = 0; p && i < p->nrules; i++) {
		const struct tg_rule *r = p->rules[i];
		if (r->disabled_by || !tg_rule_matches(r, env, op))
			continue;
		bool stricter = r->action > out->action;
		bool names_allow = r->action == TG_ACT_ALLOW && !out->rule_id;
		if (!stricter && !names_allow)
			continue;
		out->action = r->action;
		out->err = r->action == TG_ACT_DENY || r->action == TG_ACT_ASK ? r->err : 0;
		out->rule_id = r->id;
		out->reason = r->reason;
		out->source = r->source;
	}
}

static void merge_stricter(struct tg_verdict *out, const struct tg_verdict *v)
{
	if (v->action > out->action)
		*out = *v;
}

/* The programs a loader exec runs, judged like execs of their own; a loader
 * running a loader is followed to the end. Iterative: argv is attacker
 * sized. An unknown loader option is read both ways. */
static void judge_loaded(const struct tg_match_env *env, const struct tg_op *op, struct tg_verdict *out)
{
	struct tg_op cur = { 0 }, next = { 0 };
	struct tg_verdict v;
	const struct tg_op *at = op;
	while (tg_is_loader_exec(at)) {
		struct tg_op other;
		if (tg_loader_op(env, at, true, &other) == 0) {
			judge_one(env, &other, &v);
			merge_stricter(out, &v);
			tg_loader_op_clear(&other);
		}
		int rc = tg_loader_op(env, at, false, &next);
		if (rc == -ENOMEM) {
			set_builtin(&v, TG_ACT_DENY, EPERM, "internal",
			            "out of memory judging the loader's program");
			merge_stricter(out, &v);
		}
		if (rc < 0)
			break;
		judge_one(env, &next, &v);
		merge_stricter(out, &v);
		tg_loader_op_clear(&cur);
		cur = next;
		memset(&next, 0, sizeof(next));
		at = &cur;
	}
	tg_loader_op_clear(&cur);
}

/* ---- remote command lines ---------------------------------------------------------- */

#define TG_REMOTE_DEPTH 8
/* The remote side's context: no workspace of ours (relative paths land in
 * the remote home, outside anything the journal covers). */
#define TG_REMOTE_HOME "/home/.remote"

static const char remote_unparsed_reason[] =
	"could not parse the remote command (command substitution, a heredoc or unbalanced quotes) "
	"and a destructive rule could match its words; simplify the remote command, or run it "
	"yourself outside txguard";

/* Could any exec deny or kill rule match a word of this text? */
static bool could_be_destructive(const struct tg_match_env *env, const char *text)
{
	const struct tg_policy *p = env->p;
	_cleanup_strv_ char **tok = NULL;
	if (tg_remote_tokens(text, &tok) < 0)
		return true;
	for (size_t i = 0; p && i < p->nrules; i++) {
		const struct tg_rule *r = p->rules[i];
		if (r->disabled_by || r->kind != TG_RULE_EXEC || r->action < TG_ACT_ASK)
			continue;
		for (size_t j = 0; j < r->exec.program.n; j++)
			for (size_t k = 0; tok[k]; k++)
				if (gmatch(r->exec.program.v[j], base_name(tok[k]), TG_GLOB_STRING, true))
					return true;
	}
	return false;
}

static void judge_remote_text(const struct tg_match_env *env, const char *text, int depth,
                              struct tg_verdict *out);

/* One remote simple command: judged as an exec, then what it wraps. */
static void judge_remote_words(const struct tg_match_env *env, char **argv, size_t argc, int depth,
                               struct tg_verdict *out)
{
	struct tg_verdict v;
	size_t k = tg_remote_skip_prefix(argv, argc);
	argv += k, argc -= k;
	if (argc == 0)
		return;
	if (depth > TG_REMOTE_DEPTH) {
		set_builtin(&v, TG_ACT_DENY, EPERM, "remote-unparsed", remote_unparsed_reason);
		merge_stricter(out, &v);
		return;
	}
	struct tg_op op = { .kind = TG_OP_EXEC, .name = "execve", .argv = argv, .argc = argc };
	judge_one(env, &op, &v);
	merge_stricter(out, &v);
	_cleanup_free_ char *text = NULL;
	if (tg_remote_is_ssh(argv[0]) && tg_remote_ssh_command(argv, argc, &text) == 0 && text)
		judge_remote_text(env, text, depth + 1, out);
	const char *script = tg_remote_shell_script(argv, argc);
	if (script)
		judge_remote_text(env, script, depth + 1, out);
	size_t w = tg_remote_unwrap(argv, argc);
	if (w)
		judge_remote_words(env, argv + w, argc - w, depth + 1, out);
}

static void judge_remote_text(const struct tg_match_env *env, const char *text, int depth,
                              struct tg_verdict *out)
{
	struct tg_verdict v;
	char ***cmds = NULL;
	int r = tg_shell_commands(text, &cmds);
	/* $(...), `...`, <(...): what they run is a command line too. */
	_cleanup_free_ char *flat = NULL;
	if (r == -EINVAL && (flat = tg_remote_flatten(text)))
		r = tg_shell_commands(flat, &cmds);
	if (r < 0) {
		if (r != -EINVAL || could_be_destructive(env, text)) {
			set_builtin(&v, TG_ACT_DENY, EPERM, "remote-unparsed", remote_unparsed_reason);
			merge_stricter(out, &v);
		}
		return;
	}
	for (size_t i = 0; cmds[i]; i++)
		judge_remote_words(env, cmds[i], tg_strv_len(cmds[i]), depth, out);
	tg_remote_commands_free(cmds);
}

/* `ssh host CMD...`: CMD runs in a shell over there, where the journal
 * cannot follow; it is judged by the same exec rules. */
static void judge_remote(const struct tg_match_env *env, const struct tg_op *op, struct tg_verdict *out)
{
	if (op->kind != TG_OP_EXEC || !op->argv || !op->argv[0])
		return;
	size_t argc = tg_strv_len(op->argv);
	if (op->argc && op->argc < argc)
		argc = op->argc;
	if (!tg_remote_is_ssh(op->argv[0]) && !(op->path && tg_remote_is_ssh(op->path)))
		return;
	_cleanup_free_ char *text = NULL;
	if (tg_remote_ssh_command(op->argv, argc, &text) < 0 || !text)
		return;
	struct tg_match_env renv = { .p = env->p, .home = TG_REMOTE_HOME, .cwd = TG_REMOTE_HOME };
	judge_remote_text(&renv, text, 0, out);
}

void tg_policy_decide_env(const struct tg_match_env *env, const struct tg_op *op,
                          struct tg_verdict *out)
{
	if (!op) {
		memset(out, 0, sizeof(*out));
		set_builtin(out, TG_ACT_DENY, EPERM, "internal", "no operation to judge");
		return;
	}
	judge_one(env, op, out);
	judge_loaded(env, op, out);
	judge_remote(env, op, out);
}

static int read_cwd(pid_t pid, char *buf, size_t bufsz)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	ssize_t n = readlink(link, buf, bufsz - 1);
	if (n <= 0)
		return -errno;
	buf[n] = '\0';
	return buf[0] == '/' ? 0 : -EINVAL;
}

/* A shell looks a command up by trying execve on every PATH entry. Only a
 * named file that is not there counts as missing: execveat(fd, "",
 * AT_EMPTY_PATH) runs an open file whatever its name says. op->path is in
 * our view, a chrooted tracee's too (tg_path_resolve). */
static bool program_missing(const struct tg_op *op)
{
	struct stat st;
	if (!op || op->kind != TG_OP_EXEC || op->pid <= 0 || !op->path || op->path[0] != '/')
		return false;
	if ((op->flags & AT_EMPTY_PATH) || tg_path_is_kernel_name(op->path))
		return false;
	return lstat(op->path, &st) < 0 && errno == ENOENT;
}

void tg_policy_decide(const struct tg_policy *p, const struct tg_op *op, struct tg_verdict *out)
{
	char cwd[PATH_MAX];
	struct tg_match_env env = {
		.p = p,
		.workspace = p ? p->workspace : NULL,
		.home = p ? p->home : NULL,
		.state_dir = p ? p->state_dir : NULL,
		.cache_dir = p ? p->cache_dir : NULL,
	};
	env.cwd = env.workspace;
	/* Relative arguments ("rm -rf ../..") are relative to the process's
	 * cwd, which the op does not carry; exec stops are rare enough to
	 * afford one readlink. */
	if (op && op->kind == TG_OP_EXEC && op->pid > 0 && read_cwd(op->pid, cwd, sizeof(cwd)) == 0)
		env.cwd = cwd;
	tg_policy_decide_env(&env, op, out);
	/* A denied exec stays denied even when the file is not there yet: an
	 * allow would race with whoever creates it before the kernel looks.
	 * ENOENT is what the kernel would have said, so a shell walking $PATH
	 * goes on to the next entry and still reports "not found". */
	if ((out->action == TG_ACT_DENY || out->action == TG_ACT_ASK) && program_missing(op)) {
		/* Nothing to ask about a program that is not there. */
		out->action = TG_ACT_DENY;
		out->err = ENOENT;
	}
}

/* ---- explain / examples support ------------------------------------------------- */

static char *find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	_cleanup_free_ char *dup = tg_strdup(path);
	char *save = NULL;
	if (!dup)
		return NULL;
	for (char *d = strtok_r(dup, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		_cleanup_free_ char *cand = tg_asprintf("%s/%s", d, name);
		if (cand && cand[0] == '/' && access(cand, X_OK) == 0)
			return steal_pointer(&cand);
	}
	return NULL;
}

int tg_policy_exec_op(char *const *argv, struct tg_op *op)
{
	char buf[PATH_MAX];
	memset(op, 0, sizeof(*op));
	op->kind = TG_OP_EXEC;
	op->name = "execve";
	if (!argv || !argv[0])
		return -EINVAL;
	op->argc = tg_strv_len(argv);
	op->argv = tg_strv_pack(argv, op->argc);
	if (!op->argv)
		return -ENOMEM;
	if (strchr(argv[0], '/')) {
		if (!getcwd(buf, sizeof(buf)))
			strcpy(buf, "/");
		char norm[PATH_MAX];
		if (tg_arg_to_path(argv[0], buf, NULL, norm, sizeof(norm)) == 0)
			op->path = tg_strdup(norm);
	} else {
		op->path = find_in_path(argv[0]);
	}
	return 0;
}
