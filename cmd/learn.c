/* learn.c — a policy drop-in drafted from a run (see learn.h). */
#include "learn.h"

#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/audit.h"
#include "base/path.h"
#include "base/util.h"

struct tg_learn {
	char *workspace;
	char **writable;      /* places the run wrote outside the writable set */
	char **create;        /* new names directly in $HOME: "path" or "dir/" */
	char **connects;      /* "1.2.3.4:443" the network policy refused */
	char **programs;      /* executables run, for the comments */
	char **refused;       /* "rule-id: what" never drafted as allowed */
};

struct tg_learn *tg_learn_new(const char *workspace)
{
	struct tg_learn *l = calloc(1, sizeof(*l));
	if (l && workspace && !(l->workspace = tg_strdup(workspace))) {
		free(l);
		return NULL;
	}
	return l;
}

void tg_learn_free(struct tg_learn *l)
{
	if (!l)
		return;
	free(l->workspace);
	tg_strv_free(l->writable);
	tg_strv_free(l->create);
	tg_strv_free(l->connects);
	tg_strv_free(l->programs);
	tg_strv_free(l->refused);
	free(l);
}

static bool has(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static void add_once(char ***v, const char *s)
{
	if (s && !has(*v, s))
		(void)tg_strv_push(v, s);
}

/* The place to draft for a write at path: the directory the tool works in.
 * A file that existed is granted itself; a new name, its parent directory
 * (Landlock grants existing inodes; the parent is what holds new names). */
static char *place_for(const struct tg_op *op, const char *path)
{
	struct stat st;
	bool exists = lstat(path, &st) == 0;
	bool creates = op->kind == TG_OP_MKDIR || op->kind == TG_OP_SYMLINK || op->kind == TG_OP_MKNOD ||
	               op->kind == TG_OP_LINK || op->kind == TG_OP_RENAME || op->kind == TG_OP_UNLINK ||
	               op->kind == TG_OP_RMDIR || (op->kind == TG_OP_OPEN && !exists);
	if (exists && S_ISDIR(st.st_mode) && !creates)
		return tg_strdup(path);
	if (!creates)
		return tg_strdup(path);
	char *dir = tg_strdup(path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash && slash != dir)
		*slash = '\0';
	return dir;
}

/* Rules whose refusals a learned policy never turns into allows. */
static bool never_allowed(const struct tg_verdict *v, const struct tg_op *op)
{
	static const char *const ids[] = {
		"deny-read", "state-dir", "txguard.workspace-policy",
		"txguard.fixed-syscall", "txguard.unjournaled", "link-outside-inode", "unknown-path",
	};
	if (op->kind == TG_OP_EXEC || op->kind == TG_OP_SYSCALL)
		return true;   /* exec and syscall rules: say so, never loosen them */
	for (size_t i = 0; v->rule_id && i < TG_ARRAY_SIZE(ids); i++)
		if (strcmp(v->rule_id, ids[i]) == 0)
			return true;
	return false;
}

static void refuse(struct tg_learn *l, const struct tg_op *op, const struct tg_verdict *v)
{
	char addr[256];
	const char *what = op->path ? op->path
	                 : op->argv && op->argv[0] ? op->argv[0]
	                 : op->addrlen ? tg_sockaddr_format(&op->addr, op->addrlen, addr, sizeof(addr))
	                 : op->name;
	_cleanup_free_ char *line = tg_asprintf("%s %s (rule %s)", tg_op_kind_name(op->kind),
	                                        what ? what : "?", v->rule_id ? v->rule_id : "?");
	add_once(&l->refused, line);
}

void tg_learn_note(struct tg_learn *l, const struct tg_op *op, const struct tg_verdict *v)
{
	if (!l || v->action == TG_ACT_ALLOW || v->action == TG_ACT_AUDIT)
		return;
	/* mkdir -p on the way: EEXIST is the kernel's own answer. */
	if (op->kind == TG_OP_MKDIR && v->err == EEXIST)
		return;
	if (never_allowed(v, op)) {
		refuse(l, op, v);
		return;
	}
	if (op->kind == TG_OP_CONNECT || op->kind == TG_OP_SENDTO) {
		char addr[256];
		const char *a = tg_sockaddr_format(&op->addr, op->addrlen, addr, sizeof(addr));
		if (strncmp(a, "unix:", 5) == 0 || strncmp(a, "family:", 7) == 0 ||
		    (v->rule_id && strcmp(v->rule_id, "network-default-deny") != 0))
			refuse(l, op, v);   /* a named deny rule (cloud metadata, docker...) stays */
		else
			add_once(&l->connects, a);
		return;
	}
	if (v->rule_id && strcmp(v->rule_id, "read-only-outside-workspace") != 0) {
		refuse(l, op, v);   /* a policy rule that says no: not ours to undo */
		return;
	}
	const char *paths[] = { op->kind == TG_OP_LINK ? op->path2 : op->path,
	                        op->kind == TG_OP_RENAME ? op->path2 : NULL };
	for (size_t i = 0; i < TG_ARRAY_SIZE(paths); i++) {
		if (!paths[i])
			continue;
		_cleanup_free_ char *p = place_for(op, paths[i]);
		const char *home = getenv("HOME");
		if (!p || strcmp(p, "/") == 0)
			continue;
		/* Never all of $HOME (or above): the exact name, created
		 * before the run so that Landlock can grant it. */
		if (home && *home == '/' && tg_path_is_under(home, p)) {
			_cleanup_free_ char *e = tg_asprintf("%s%s", paths[i], op->kind == TG_OP_MKDIR ? "/" : "");
			if (e && strcmp(paths[i], home) != 0)
				add_once(&l->create, e);
			continue;
		}
		add_once(&l->writable, p);
	}
}

void tg_learn_exec(struct tg_learn *l, const char *exe)
{
	if (l)
		add_once(&l->programs, exe);
}

/* Drop places beneath another drafted place. */
static bool covered(char *const *v, const char *p)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], p) != 0 && tg_path_is_under(p, v[i]))
			return true;
	return false;
}

static void yaml_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void write_connects(FILE *f, char *const *c)
{
	if (!c)
		return;
	fputs("\nrules:\n", f);
	for (size_t i = 0; c[i]; i++) {
		/* "1.2.3.4:443" or "[::1]:80" → cidr + port */
		_cleanup_free_ char *a = tg_strdup(c[i]);
		char *colon = a ? strrchr(a, ':') : NULL;
		if (!colon)
			continue;
		*colon = '\0';
		char *host = a;
		bool v6 = host[0] == '[';
		if (v6) {
			host++;
			host[strlen(host) - 1] = '\0';
		}
		fprintf(f, "  - id: learned-connect-%zu\n", i + 1);
		fprintf(f, "    reason: the learned run connected to %s\n", c[i]);
		fputs("    action: allow\n    connect:\n      cidr: [", f);
		yaml_str(f, host);
		fprintf(f, "]\n      ports: [%s]\n    examples:\n      match: [", colon + 1);
		yaml_str(f, c[i]);
		fputs("]\n", f);
	}
}

int tg_learn_write(const struct tg_learn *l, const char *path, char *const *argv, int exit_status)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs("# Drafted by `txguard learn` from one run of:\n#  ", f);
	for (size_t i = 0; argv && argv[i]; i++)
		fprintf(f, " %s", argv[i]);
	fprintf(f, "\n# in the workspace %s.\n", l->workspace ? l->workspace : "?");
	if (exit_status != 0)
		fprintf(f, "# THE RUN FAILED (exit %d): this draft may miss what a successful run needs.\n",
		        exit_status);
	fputs("# Review it, then load it with -p FILE (or drop it in policy.d/);\n"
	      "# `txguard policy check FILE` runs its examples.\n"
	      "version: 1\n", f);
	size_t nw = 0;
	for (size_t i = 0; l->writable && l->writable[i]; i++)
		nw += !covered(l->writable, l->writable[i]);
	if (nw || l->create)
		fputs("\npaths:\n", f);
	if (nw) {
		fputs("  # Places outside the workspace the run wrote to. Not journaled:\n"
		      "  # what a command leaves there stays.\n  writable:\n", f);
		for (size_t i = 0; l->writable[i]; i++) {
			if (covered(l->writable, l->writable[i]))
				continue;
			fputs("    - ", f);
			yaml_str(f, l->writable[i]);
			fputc('\n', f);
		}
	}
	if (l->create) {
		fputs("  # Names it made directly in your home: created before each run (a\n"
		      "  # trailing / is a directory), never all of $HOME.\n  create:\n", f);
		for (size_t i = 0; l->create[i]; i++) {
			fputs("    - ", f);
			yaml_str(f, l->create[i]);
			fputc('\n', f);
		}
	}
	write_connects(f, l->connects);
	if (l->programs) {
		fputs("\n# Programs the run executed (exec is allowed unless a rule says no):\n", f);
		for (size_t i = 0; l->programs[i]; i++)
			fprintf(f, "#   %s\n", l->programs[i]);
	}
	if (l->refused) {
		fputs("\n# Refused to allow (secrets, txguard's state, the fixed syscall set, exec\n"
		      "# and other named rules; override those by id yourself if a job truly\n"
		      "# needs it):\n", f);
		for (size_t i = 0; l->refused[i]; i++)
			fprintf(f, "#   %s\n", l->refused[i]);
	}
	int r = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}
