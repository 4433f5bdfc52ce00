/* policy.c — the policy's lifecycle and its reports: free, context,
 * filter info, `policy check` examples, `policy explain` and the merge dump.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/un.h>

#include "argv.h"
#include "glob.h"
#include "policy_int.h"
#include "base/util.h"

int tg_strlist_push(struct tg_strlist *l, const char *s)
{
	char **v = realloc(l->v, (l->n + 2) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	v[l->n] = tg_strdup(s);
	if (!v[l->n])
		return -ENOMEM;
	v[++l->n] = NULL;
	return 0;
}

void tg_strlist_clear(struct tg_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* A list whose strings are borrowed (a model's, in its arena): only the
 * array is freed. */
static void strlist_drop(struct tg_strlist *l, bool borrowed)
{
	if (!borrowed) {
		tg_strlist_clear(l);
		return;
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void examples_free(struct tg_example *v, size_t n, bool borrowed)
{
	for (size_t i = 0; i < n && !borrowed; i++)
		free(v[i].text);
	free(v);
}

void tg_rule_free(struct tg_rule *r)
{
	if (!r)
		return;
	bool b = r->borrowed;
	if (!b) {
		free(r->id);
		free(r->reason);
		free(r->file);
		free(r->source);
		free(r->overrides);
		free(r->disabled_by);
	}
	strlist_drop(&r->exec.program, b);
	strlist_drop(&r->exec.value_flags, b);
	strlist_drop(&r->exec.subcommand, b);
	for (size_t i = 0; i < r->exec.nflags; i++)
		strlist_drop(&r->exec.flags[i].alts, b);
	free(r->exec.flags);
	strlist_drop(&r->exec.any_flags, b);
	strlist_drop(&r->exec.not_flags, b);
	strlist_drop(&r->exec.args, b);
	strlist_drop(&r->exec.script, b);
	strlist_drop(&r->exec.words, b);
	strlist_drop(&r->path.match, b);
	strlist_drop(&r->syscalls, b);
	strlist_drop(&r->conn.unix_paths, b);
	free(r->conn.cidr);
	free(r->conn.ports);
	strlist_drop(&r->proc.program, b);
	free(r->proc.uids);
	strlist_drop(&r->proc.cgroup, b);
	examples_free(r->match, r->nmatch, b);
	examples_free(r->not_match, r->nnot_match, b);
	free(r);
}

void tg_policy_free(struct tg_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nrules; i++)
		tg_rule_free(p->rules[i]);
	free(p->rules);
	strlist_drop(&p->files, p->borrowed);
	strlist_drop(&p->writable, p->borrowed);
	strlist_drop(&p->deny_read, p->borrowed);
	strlist_drop(&p->create, p->borrowed);
	tg_strlist_clear(&p->writable_exp);
	tg_strlist_clear(&p->deny_read_exp);
	free(p->workspace);
	free(p->home);
	free(p->state_dir);
	free(p->cache_dir);
	free(p->denied_syscalls);
	free(p->deny_errno);
	tg_policy_hosts_free(p);
	free(p->arena);
	free(p);
}

void tg_policy_diags_clear(struct tg_policy_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].message);
	}
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

void tg_policy_diags_print(const struct tg_policy_diags *d, FILE *out)
{
	for (size_t i = 0; d && i < d->n; i++) {
		const struct tg_policy_diag *g = &d->v[i];
		if (g->line)
			fprintf(out, "%s:%u:%u: %s\n", g->file, g->line, g->col, g->message);
		else
			fprintf(out, "%s: %s\n", g->file, g->message);
	}
}

const char *tg_action_name(enum tg_action a)
{
	switch (a) {
	case TG_ACT_ALLOW:
		return "allow";
	case TG_ACT_AUDIT:
		return "audit";
	case TG_ACT_ASK:
		return "ask";
	case TG_ACT_DENY:
		return "deny";
	case TG_ACT_KILL:
		return "kill";
	}
	return "unknown";
}

int tg_policy_finish(struct tg_policy *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i]->kind == TG_RULE_SYSCALL && !p->rules[i]->disabled_by)
			n += p->rules[i]->syscalls.n;
	free(p->denied_syscalls);
	free(p->deny_errno);
	p->denied_syscalls = calloc(n + 1, sizeof(*p->denied_syscalls));
	p->deny_errno = calloc(n + 1, sizeof(*p->deny_errno));
	p->ndenied = 0;
	if (!p->denied_syscalls || !p->deny_errno)
		return -ENOMEM;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct tg_rule *r = p->rules[i];
		if (r->kind != TG_RULE_SYSCALL || r->disabled_by)
			continue;
		for (size_t j = 0; j < r->syscalls.n; j++) {
			bool dup = false;
			for (size_t k = 0; k < p->ndenied && !dup; k++)
				dup = strcmp(p->denied_syscalls[k], r->syscalls.v[j]) == 0;
			if (dup)
				continue;
			p->denied_syscalls[p->ndenied] = r->syscalls.v[j];
			p->deny_errno[p->ndenied++] = r->err;
		}
	}
	return 0;
}

/* An expanded path once: "~/.ssh" and "/root/.ssh" are one place for
 * root, and every entry costs the supervisor's Landlock and fanotify
 * set-up an open at each start. */
static void push_new(struct tg_strlist *out, const char *path)
{
	for (size_t i = 0; i < out->n; i++)
		if (strcmp(out->v[i], path) == 0)
			return;
	tg_strlist_push(out, path);
}

/* "/etc/ssh/ssh_host_*_key": Landlock takes paths, not patterns, so a glob
 * in the last component only is expanded to the files it names now (a
 * secret is read from a file that exists). True when the pattern was taken
 * that way. `pat` is expanded ($HOME...) and unescaped but for the glob. */
static bool glob_existing(const char *pat, const char *home, const char *ws, struct tg_strlist *out)
{
	char buf[PATH_MAX * 2], norm[PATH_MAX * 2];
	if (strstr(pat, "**") || tg_expand_pattern(pat, home, ws, buf, sizeof(buf)) < 0)
		return false;
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return false;
	*slash = '\0';
	if (!tg_glob_is_literal(buf))
		return false;
	DIR *d = opendir(buf);
	if (!d)
		return true;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' && slash[1] != '.')
			continue;
		if (tg_glob_match(slash + 1, e->d_name, TG_GLOB_PATH) != TG_GLOB_MATCH)
			continue;
		_cleanup_free_ char *full = tg_asprintf("%s/%s", buf, e->d_name);
		if (full && tg_normpath(full, norm, sizeof(norm)) == 0)
			push_new(out, norm);
	}
	closedir(d);
	return true;
}

static void expand_list(const struct tg_strlist *in, struct tg_strlist *out, const char *home,
                        const char *ws, bool literal_only, bool unescape)
{
	char buf[PATH_MAX * 2], norm[PATH_MAX * 2];
	tg_strlist_clear(out);
	for (size_t i = 0; i < in->n; i++) {
		if (tg_expand_pattern(in->v[i], home, ws, buf, sizeof(buf)) < 0)
			continue;
		if (unescape) {
			size_t w = 0;
			for (const char *c = buf; *c; c++) {
				if (*c == '\\' && c[1])
					c++;
				buf[w++] = *c;
			}
			buf[w] = '\0';
		} else if (literal_only) {
			/* "~/.ssh" is literal once home's own characters are
			 * unescaped; a "*.env" anywhere is a glob Landlock cannot take. */
			size_t l = strlen(buf);
			if (l >= 3 && strcmp(buf + l - 3, "/**") == 0)
				buf[l - 3] = '\0';
			bool lit = true;
			size_t w = 0;
			for (const char *c = buf; *c; c++) {
				if (*c == '\\' && c[1]) {
					c++;
				} else if (strchr("*?[", *c)) {
					lit = false;
					break;
				}
				buf[w++] = *c;
			}
			buf[w] = '\0';
			if (!lit && glob_existing(in->v[i], home, ws, out))
				continue;
			if (!lit || !buf[0])
				continue;
		}
		if (tg_normpath(buf, norm, sizeof(norm)) == 0)
			push_new(out, norm);
	}
}

/* $HOME may be "/home/dev/" or relative: patterns and comparisons need the
 * normalised absolute form, and a relative one is no use at all. */
static char *norm_dup(const char *s)
{
	char buf[PATH_MAX];
	if (!s || tg_normpath(s, buf, sizeof(buf)) < 0)
		return NULL;
	return tg_strdup(buf);
}

void tg_policy_set_ctx(struct tg_policy *p, const struct tg_policy_ctx *ctx)
{
	if (!p || !ctx)
		return;
	free(p->workspace);
	free(p->home);
	free(p->state_dir);
	free(p->cache_dir);
	p->workspace = norm_dup(ctx->workspace);
	p->home = norm_dup(ctx->home);
	p->state_dir = norm_dup(ctx->state_dir);
	p->cache_dir = norm_dup(ctx->cache_dir);
	struct tg_strlist w = { 0 };
	for (size_t i = 0; tg_policy_builtin_writable[i]; i++)
		tg_strlist_push(&w, tg_policy_builtin_writable[i]);
	for (size_t i = 0; i < p->writable.n; i++)
		tg_strlist_push(&w, p->writable.v[i]);
	expand_list(&w, &p->writable_exp, p->home, p->workspace, false, true);
	tg_strlist_clear(&w);
	expand_list(&p->deny_read, &p->deny_read_exp, p->home, p->workspace, true, false);
}

void tg_policy_filter_info(const struct tg_policy *p, struct tg_policy_filter_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!p)
		return;
	out->denied_syscalls = p->denied_syscalls;
	out->deny_errno = p->deny_errno;
	out->ndenied = p->ndenied;
	out->max_procs = p->max_procs;
	/* With host rules, direct connections outside loopback are refused
	 * (the proxy is the way out): connect must stop. */
	out->trap_network = p->network_deny || p->nhosts > 0;
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i]->kind == TG_RULE_CONNECT && !p->rules[i]->disabled_by)
			out->trap_network = true;
}

const char *const *tg_policy_writable_paths(const struct tg_policy *p, size_t *n)
{
	*n = p ? p->writable_exp.n : 0;
	return p && p->writable_exp.v ? (const char *const *)p->writable_exp.v : NULL;
}

int tg_policy_create_paths(const struct tg_policy *p, char ***out)
{
	char buf[PATH_MAX * 2], norm[PATH_MAX * 2];
	*out = NULL;
	for (size_t i = 0; p && i < p->create.n; i++) {
		const char *raw = p->create.v[i];
		size_t l = strlen(raw);
		if (tg_expand_pattern(raw, p->home, p->workspace, buf, sizeof(buf)) < 0 ||
		    tg_normpath(buf, norm, sizeof(norm)) < 0 || norm[0] != '/')
			continue;
		if (l && raw[l - 1] == '/' && strcmp(norm, "/") != 0)
			strcat(norm, "/");
		if (tg_strv_push(out, norm) < 0) {
			tg_strv_free(*out);
			*out = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

const char *const *tg_policy_files(const struct tg_policy *p, size_t *n)
{
	*n = p ? p->files.n : 0;
	return p && p->files.v ? (const char *const *)p->files.v : NULL;
}

const char *const *tg_policy_deny_read_paths(const struct tg_policy *p, size_t *n)
{
	*n = p ? p->deny_read_exp.n : 0;
	return p && p->deny_read_exp.v ? (const char *const *)p->deny_read_exp.v : NULL;
}

/* ---- examples -------------------------------------------------------------- */

/* Examples run in a fixed, synthetic context so that `policy check` gives
 * the same answer on every machine and in every directory. */
#define EX_HOME "/home/dev"
#define EX_WORKSPACE "/home/dev/project"
#define EX_STATE "/home/dev/.local/state/txguard"

static int example_exec_op(const char *text, struct tg_op *op)
{
	_cleanup_strv_ char **argv = NULL;
	char buf[PATH_MAX];
	int r = tg_argv_split(text, &argv);
	if (r < 0)
		return r;
	if (!argv[0])
		return -EINVAL;
	op->kind = TG_OP_EXEC;
	op->name = "execve";
	op->argc = tg_strv_len(argv);
	if (strchr(argv[0], '/')) {
		if (tg_arg_to_path(argv[0], EX_WORKSPACE, EX_HOME, buf, sizeof(buf)) < 0)
			return -EINVAL;
		op->path = tg_strdup(buf);
	} else {
		op->path = tg_asprintf("/usr/bin/%s", argv[0]);
	}
	op->argv = tg_strv_pack(argv, op->argc);
	return op->path && op->argv ? 0 : -ENOMEM;
}

static int example_path_op(const struct tg_rule *r, const char *text, struct tg_op *op)
{
	char buf[PATH_MAX];
	if (tg_arg_to_path(text, EX_WORKSPACE, EX_HOME, buf, sizeof(buf)) < 0)
		return -EINVAL;
	op->path = tg_strdup(buf);
	op->name = "example";
	if (r->path.ops & TG_PATH_OPS_EXEC)
		op->kind = TG_OP_EXEC;
	else if (r->path.ops & (1u << TG_OP_OPEN))
		op->kind = TG_OP_OPEN, op->flags = O_WRONLY | O_CREAT, op->writes = true;
	else
		for (int k = TG_OP_UNLINK; k <= TG_OP_XATTR && op->kind == TG_OP_NONE; k++)
			if (r->path.ops & (1u << k))
				op->kind = (enum tg_op_kind)k;
	if (op->kind == TG_OP_NONE)
		op->kind = TG_OP_OPEN;
	op->writes = true;
	return op->path ? 0 : -ENOMEM;
}

/* "unix:/run/docker.sock", "unix:@abstract", "10.1.2.3:443", "[::1]:22". */
static int example_connect_op(const char *text, struct tg_op *op)
{
	op->kind = TG_OP_CONNECT;
	op->name = "connect";
	if (strncmp(text, "unix:", 5) == 0) {
		struct sockaddr_un *un = (void *)&op->addr;
		const char *name = text + 5;
		size_t l = strlen(name);
		if (l == 0 || l >= sizeof(un->sun_path))
			return -EINVAL;
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, name, l);
		if (name[0] == '@')
			un->sun_path[0] = '\0';
		op->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + l + (name[0] != '@'));
		return 0;
	}
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(text, ':');
	if (!colon || (size_t)(colon - text) >= sizeof(host))
		return -EINVAL;
	const char *h = text;
	size_t hl = (size_t)(colon - text);
	if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']')
		h++, hl -= 2;
	memcpy(host, h, hl);
	host[hl] = '\0';
	char *end = NULL;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || port > 65535)
		return -EINVAL;
	struct sockaddr_in *in = (void *)&op->addr;
	struct sockaddr_in6 *in6 = (void *)&op->addr;
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		op->addrlen = sizeof(*in);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		op->addrlen = sizeof(*in6);
	} else {
		return -EINVAL;
	}
	return 0;
}

static int example_op(const struct tg_rule *r, const char *text, struct tg_op *op)
{
	memset(op, 0, sizeof(*op));
	switch (r->kind) {
	case TG_RULE_EXEC:
		return example_exec_op(text, op);
	case TG_RULE_PATH:
		return example_path_op(r, text, op);
	case TG_RULE_SYSCALL:
		op->kind = TG_OP_SYSCALL;
		op->name = text;
		return 0;
	case TG_RULE_CONNECT:
		return example_connect_op(text, op);
	case TG_RULE_PROCESS:
		return tg_example_process_op(text, op);
	default:
		return -EINVAL;
	}
}

static int check_one(const struct tg_policy *p, const struct tg_rule *r, const struct tg_example *ex,
                     bool want, FILE *out)
{
	struct tg_match_env env = { p, EX_WORKSPACE, EX_HOME, EX_WORKSPACE, EX_STATE };
	struct tg_op op;
	int rc = example_op(r, ex->text, &op);
	if (rc < 0) {
		fprintf(out, "%s:%u:%u: rule '%s': cannot read example '%s'\n", r->file, ex->line,
		        ex->col, r->id, ex->text);
		tg_op_clear(&op);
		return 1;
	}
	bool got = tg_rule_matches(r, &env, &op);
	if (r->kind == TG_RULE_SYSCALL)
		op.name = NULL;
	tg_op_clear(&op);
	if (got == want)
		return 0;
	fprintf(out, "%s:%u:%u: rule '%s': example '%s' %s\n", r->file, ex->line, ex->col, r->id,
	        ex->text, want ? "should match but does not" : "matches but should not");
	return 1;
}

int tg_rule_check_examples(const struct tg_policy *p, const struct tg_rule *r, FILE *out)
{
	int fails = 0;
	for (size_t i = 0; i < r->nmatch; i++)
		fails += check_one(p, r, &r->match[i], true, out);
	for (size_t i = 0; i < r->nnot_match; i++)
		fails += check_one(p, r, &r->not_match[i], false, out);
	return fails;
}

int tg_policy_check_examples(const struct tg_policy *p, FILE *out)
{
	int fails = 0;
	for (size_t i = 0; p && i < p->nrules; i++)
		fails += tg_rule_check_examples(p, p->rules[i], out);
	return fails + tg_host_check_examples(p, out);
}

/* ---- JSON output ------------------------------------------------------------- */

/* Length of a valid UTF-8 sequence at s, 0 when invalid. */
static size_t utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	size_t n = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (n == 0 || (n == 2 && s[0] < 0xc2) || (n == 4 && s[0] > 0xf4))
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static void json_str(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		if (*c == '"' || *c == '\\') {
			fprintf(out, "\\%c", *c++);
		} else if (*c == '\n') {
			fputs("\\n", out), c++;
		} else if (*c == '\t') {
			fputs("\\t", out), c++;
		} else if (*c < 0x20 || *c == 0x7f) {
			fprintf(out, "\\u%04x", *c++);
		} else {
			size_t n = utf8_len(c);
			if (n == 0) {
				fputs("\\ufffd", out), c++;
			} else {
				fwrite(c, 1, n, out);
				c += n;
			}
		}
	}
	fputc('"', out);
}

static void json_strv(FILE *out, char *const *v, size_t n)
{
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		json_str(out, v[i]);
	}
	fputc(']', out);
}

static const char *kind_name(enum tg_rule_kind k)
{
	static const char *const names[] = { "exec", "path", "syscall", "connect", "process", "disable" };
	return names[k];
}

/* ---- explain ------------------------------------------------------------------- */

static void explain_env(const struct tg_policy *p, struct tg_match_env *env, char *cwd, size_t cwdsz)
{
	if (!getcwd(cwd, cwdsz))
		strcpy(cwd, "/");
	memset(env, 0, sizeof(*env));
	env->p = p;
	env->workspace = p && p->workspace ? p->workspace : cwd;
	env->home = p && p->home ? p->home : getenv("HOME");
	env->state_dir = p ? p->state_dir : NULL;
	env->cache_dir = p ? p->cache_dir : NULL;
	/* The command would run in the workspace: explaining it from elsewhere
	 * must not make "rm -rf build" look like it targets the caller's cwd. */
	size_t wl = strlen(env->workspace);
	bool inside = strncmp(cwd, env->workspace, wl) == 0 && (cwd[wl] == '\0' || cwd[wl] == '/');
	env->cwd = inside ? cwd : env->workspace;
}

/* Print the rules that match op; nm counts those printed so far. */
static size_t explain_matched(const struct tg_policy *p, const struct tg_match_env *env,
                              const struct tg_op *op, bool json, FILE *out, size_t nm)
{
	for (size_t i = 0; p && i < p->nrules; i++) {
		const struct tg_rule *r = p->rules[i];
		if (r->disabled_by || !tg_rule_matches(r, env, op))
			continue;
		if (json) {
			fputs(nm ? ",{\"id\":" : "{\"id\":", out);
			json_str(out, r->id);
			fprintf(out, ",\"action\":\"%s\",\"source\":", tg_action_name(r->action));
			json_str(out, r->source);
			fputc('}', out);
		} else {
			fprintf(out, "%s%-6s %s (%s)\n", nm ? "  " : "matched:\n  ", tg_action_name(r->action),
			        r->id, r->source);
		}
		nm++;
	}
	return nm;
}

/* The verdict's fields of an explain answer, each after a comma:
 * verdict, errno (of a deny), rule, reason, source. */
static void json_verdict(FILE *out, const struct tg_verdict *v)
{
	fprintf(out, ",\"verdict\":\"%s\",\"errno\":", tg_action_name(v->action));
	json_str(out, v->action == TG_ACT_DENY ? tg_errno_name(v->err) : NULL);
	fputs(",\"rule\":", out);
	json_str(out, v->rule_id);
	fputs(",\"reason\":", out);
	json_str(out, v->reason);
	fputs(",\"source\":", out);
	json_str(out, v->source);
}

enum tg_action tg_policy_explain_exec(const struct tg_policy *p, char *const *argv, bool json, FILE *out)
{
	char cwd[PATH_MAX];
	struct tg_match_env env;
	struct tg_op op;
	struct tg_verdict v;
	explain_env(p, &env, cwd, sizeof(cwd));
	if (tg_policy_exec_op(argv, &op) < 0) {
		fprintf(out, json ? "{\"error\":\"no command to explain\"}\n" : "no command to explain\n");
		tg_op_clear(&op);
		return TG_ACT_ALLOW;
	}
	tg_policy_decide_env(&env, &op, &v);
	if (json) {
		fputs("{\"argv\":", out);
		json_strv(out, op.argv, op.argc);
		fputs(",\"program\":", out);
		json_str(out, op.path);
		json_verdict(out, &v);
		fputs(",\"matched\":[", out);
	} else {
		_cleanup_free_ char *line = tg_shell_join(op.argv);
		fprintf(out, "command: %s", line ? line : "(out of memory)");
		fprintf(out, "\nprogram: %s\nverdict: %s", op.path ? op.path : "(not found in PATH)",
		        tg_action_name(v.action));
		if (v.action == TG_ACT_DENY)
			fprintf(out, " (%s)", tg_errno_name(v.err) ? tg_errno_name(v.err) : "?");
		if (v.rule_id)
			fprintf(out, "\nrule: %s (%s)\nreason: %s", v.rule_id, v.source, v.reason);
		else
			fputs("\nrule: none matched (exec is allowed by default)", out);
		fputc('\n', out);
	}
	size_t nm = explain_matched(p, &env, &op, json, out, 0);
	/* ld.so PROG: the rules that matched the program the loader runs. */
	struct tg_op cur = { 0 }, next;
	for (const struct tg_op *at = &op; tg_loader_op(&env, at, false, &next) == 0; at = &cur) {
		if (!json) {
			fprintf(out, "%s  (the loader runs %s)\n", nm ? "" : "matched:\n",
			        next.path ? next.path : next.argv[0]);
			nm += !nm; /* the "matched:" header is out */
		}
		nm = explain_matched(p, &env, &next, json, out, nm);
		tg_loader_op_clear(&cur);
		cur = next;
	}
	tg_loader_op_clear(&cur);
	if (json)
		fputs("]}\n", out);
	tg_op_clear(&op);
	return v.action;
}

/* ---- dump ------------------------------------------------------------------------ */

static void dump_rule_text(const struct tg_rule *r, FILE *out)
{
	fprintf(out, "  %-6s %-8s %s  (%s)", tg_action_name(r->action), kind_name(r->kind), r->id,
	        r->source);
	if (r->action == TG_ACT_DENY && r->err != EPERM)
		fprintf(out, " errno=%s", tg_errno_name(r->err));
	if (r->overrides)
		fprintf(out, " overrides %s", r->overrides);
	if (r->disabled_by)
		fprintf(out, " DISABLED by %s", r->disabled_by);
	fputc('\n', out);
}

static void dump_rule_json(const struct tg_rule *r, FILE *out)
{
	fputs("{\"id\":", out);
	json_str(out, r->id);
	fprintf(out, ",\"kind\":\"%s\",\"action\":\"%s\",\"errno\":", kind_name(r->kind),
	        tg_action_name(r->action));
	json_str(out, r->action == TG_ACT_DENY ? tg_errno_name(r->err) : NULL);
	fputs(",\"reason\":", out);
	json_str(out, r->reason);
	fputs(",\"source\":", out);
	json_str(out, r->source);
	fputs(",\"overrides\":", out);
	json_str(out, r->overrides);
	fputs(",\"disabled_by\":", out);
	json_str(out, r->disabled_by);
	fputc('}', out);
}

static void dump_json(const struct tg_policy *p, FILE *out)
{
	fputs("{\"files\":", out);
	json_strv(out, p->files.v, p->files.n);
	fputs(",\"rules\":[", out);
	for (size_t i = 0; i < p->nrules; i++) {
		if (i)
			fputc(',', out);
		dump_rule_json(p->rules[i], out);
	}
	fputs("],\"writable\":", out);
	json_strv(out, p->writable.v, p->writable.n);
	fputs(",\"deny_read\":", out);
	json_strv(out, p->deny_read.v, p->deny_read.n);
	fprintf(out, ",\"max_procs\":%lu,\"network_default\":\"%s\",\"denied_syscalls\":[",
	        p->max_procs, p->network_deny ? "deny" : "allow");
	for (size_t i = 0; i < p->ndenied; i++)
		fprintf(out, "%s{\"name\":\"%s\",\"errno\":\"%s\"}", i ? "," : "", p->denied_syscalls[i],
		        tg_errno_name(p->deny_errno[i]) ? tg_errno_name(p->deny_errno[i]) : "?");
	fputs("]}\n", out);
}

void tg_policy_dump(const struct tg_policy *p, bool json, FILE *out)
{
	if (!p)
		return;
	if (json) {
		dump_json(p, out);
		return;
	}
	fputs("files, in load order:\n", out);
	for (size_t i = 0; i < p->files.n; i++)
		fprintf(out, "  %s\n", p->files.v[i]);
	fprintf(out, "rules (%zu; the strictest matching one wins):\n", p->nrules);
	for (size_t i = 0; i < p->nrules; i++)
		dump_rule_text(p->rules[i], out);
	fputs("writable besides the workspace:", out);
	for (size_t i = 0; tg_policy_builtin_writable[i]; i++)
		fprintf(out, " %s", tg_policy_builtin_writable[i]);
	for (size_t i = 0; i < p->writable.n; i++)
		fprintf(out, " %s", p->writable.v[i]);
	fputs("\ndeny-read (enforced by Landlock):", out);
	for (size_t i = 0; i < p->deny_read.n; i++)
		fprintf(out, " %s", p->deny_read.v[i]);
	fprintf(out, "\nmax_procs: %lu%s\nnetwork default: %s\nsyscalls denied in BPF:",
	        p->max_procs, p->max_procs ? "" : " (unlimited)", p->network_deny ? "deny" : "allow");
	for (size_t i = 0; i < p->ndenied; i++)
		fprintf(out, " %s(%s)", p->denied_syscalls[i], tg_errno_name(p->deny_errno[i]));
	fputc('\n', out);
}

/* ---- explain a signal ------------------------------------------------------------ */

enum tg_action tg_policy_explain_signal(const struct tg_policy *p, pid_t pid, int sig, bool json, FILE *out)
{
	char cwd[PATH_MAX];
	struct tg_match_env env;
	struct tg_verdict v;
	struct tg_op op = { .kind = TG_OP_PROCESS, .name = "kill" };
	explain_env(p, &env, cwd, sizeof(cwd));
	op.proc.scope = TG_PROC_PID;
	op.proc.pid = pid;
	op.proc.sig = sig;
	/* Seen from a command under txguard, a process that already runs is
	 * never one of its tree. */
	tg_proc_victim_read(pid, &op.proc.victims[0]);
	op.proc.nvictims = 1;
	tg_policy_decide_env(&env, &op, &v);
	const struct tg_proc_victim *t = &op.proc.victims[0];
	if (json) {
		fprintf(out, "{\"pid\":%d,\"signal\":%d,\"comm\":", (int)pid, sig);
		json_str(out, t->comm[0] ? t->comm : NULL);
		fprintf(out, ",\"uid\":%ld", t->uid);
		json_verdict(out, &v);
		fputs("}\n", out);
		return v.action;
	}
	fprintf(out, "signal %d to pid %d (%s, uid %ld), from a command under txguard\nverdict: %s",
	        sig, (int)pid, t->comm[0] ? t->comm : "no such process", t->uid,
	        tg_action_name(v.action));
	if (v.action == TG_ACT_DENY)
		fprintf(out, " (%s)", tg_errno_name(v.err) ? tg_errno_name(v.err) : "?");
	if (v.rule_id)
		fprintf(out, "\nrule: %s (%s)\nreason: %s", v.rule_id, v.source, v.reason);
	fputc('\n', out);
	return v.action;
}
