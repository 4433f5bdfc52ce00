/* policy/load.c — YAML policy files into the model, every problem reported.
 *
 * libyaml's event API builds a small tree of our own instead of its document
 * API: that lets us refuse aliases before any expansion (alias bombs), cap
 * nesting depth, scalar size and node count, and keep each node's line and
 * column. The tree is then walked against the schema; every problem becomes
 * a "file:line:col: message" diagnostic and loading goes on, so that `policy
 * check` shows all of them; any diagnostic fails the whole load (fail closed).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <seccomp.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <yaml.h>

#include "argv.h"
#include "glob.h"
#include "policy_int.h"
#include "ytree.h"
#include "base/cache.h"
#include "base/lazy.h"
#include "base/util.h"

#define Y_MAX_SCALAR (64 * 1024)
#define Y_MAX_FILE (4 * 1024 * 1024)
#define MAX_PROCS_LIMIT (1ul << 22)

struct ld {
	struct tg_policy *p;
	struct tg_policy_diags *diags;
	const char *file;
	struct tg_strlist ids;  /* ids seen in this file */
	size_t nnodes;
	size_t nerr;
};

TG_PRINTF(5, 6)
static void diag_add(struct tg_policy_diags *d, const char *file, unsigned line, unsigned col,
                     const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	struct tg_policy_diag *v = realloc(d->v, (d->n + 1) * sizeof(*v));
	if (!v) {
		free(msg);
		return;
	}
	d->v = v;
	v[d->n].file = tg_strdup(file);
	v[d->n].line = line;
	v[d->n].col = col;
	v[d->n].message = msg ? msg : tg_strdup("out of memory");
	d->n++;
}

#define ERR(ld, node, ...)                                                                 \
	do {                                                                               \
		(ld)->nerr++;                                                              \
		diag_add((ld)->diags, (ld)->file, (node) ? (node)->line : 0,               \
		         (node) ? (node)->col : 0, __VA_ARGS__);                           \
	} while (0)

/* ---- YAML events → tree ------------------------------------------------- */

struct ybuild {
	struct ld *ld;
	struct ynode *root;
	struct ynode *stack[Y_MAX_DEPTH + 1];
	int depth;
	int ndocs;
};

static struct ynode *ynode_new(struct ybuild *b, enum ytype t, const yaml_mark_t *m)
{
	if (++b->ld->nnodes > Y_MAX_NODES)
		return NULL;
	struct ynode *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->type = t;
	n->line = (unsigned)m->line + 1;
	n->col = (unsigned)m->column + 1;
	return n;
}

static int ynode_attach(struct ybuild *b, struct ynode *n)
{
	if (b->depth == 0) {
		b->root = n;
		return 0;
	}
	struct ynode *parent = b->stack[b->depth - 1];
	if (parent->nkid == parent->cap) {
		size_t ncap = parent->cap ? parent->cap * 2 : 4;
		struct ynode **v = realloc(parent->kid, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		parent->kid = v;
		parent->cap = ncap;
	}
	parent->kid[parent->nkid++] = n;
	return 0;
}

static void mark_err(struct ld *ld, const yaml_mark_t *m, const char *msg)
{
	ld->nerr++;
	diag_add(ld->diags, ld->file, (unsigned)m->line + 1, (unsigned)m->column + 1, "%s", msg);
}

/* One event; returns 1 to go on, 0 at the end of the stream, -1 on error
 * (already reported). */
static int ybuild_event(struct ybuild *b, yaml_event_t *ev)
{
	struct ld *ld = b->ld;
	const yaml_mark_t *m = &ev->start_mark;
	struct ynode *n = NULL;
	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (++b->ndocs > 1) {
			mark_err(ld, m, "only one YAML document per policy file");
			return -1;
		}
		return 1;
	case YAML_ALIAS_EVENT:
		mark_err(ld, m, "YAML aliases (*name) are not allowed in a policy: write the value out");
		return -1;
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor) {
			mark_err(ld, m, "YAML anchors (&name) are not allowed in a policy");
			return -1;
		}
		if (ev->data.scalar.length > Y_MAX_SCALAR) {
			mark_err(ld, m, "scalar longer than 65536 bytes");
			return -1;
		}
		n = ynode_new(b, Y_SCALAR, m);
		if (n) {
			n->s = tg_strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
			n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		}
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
		if ((seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor)) {
			mark_err(ld, m, "YAML anchors (&name) are not allowed in a policy");
			return -1;
		}
		if (b->depth >= Y_MAX_DEPTH) {
			mark_err(ld, m, "nesting deeper than 32 levels");
			return -1;
		}
		n = ynode_new(b, seq ? Y_SEQ : Y_MAP, m);
		break;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth > 0)
			b->depth--;
		return 1;
	default:
		return 1;
	}
	if (!n || (n->type == Y_SCALAR && !n->s)) {
		ynode_free(n);
		mark_err(ld, m, ld->nnodes > Y_MAX_NODES ? "too many YAML nodes (more than 200000)"
		                                         : "out of memory");
		return -1;
	}
	if (ynode_attach(b, n) < 0) {
		ynode_free(n);
		mark_err(ld, m, "out of memory");
		return -1;
	}
	if (n->type != Y_SCALAR)
		b->stack[b->depth++] = n;
	return 1;
}

static struct ynode *yaml_to_tree(struct ld *ld, const char *buf, size_t len)
{
	yaml_parser_t parser;
	struct ybuild b = { .ld = ld };
	char why[200];
	if (!tg_yaml_load(why, sizeof(why))) {
		ERR(ld, (struct ynode *)NULL, "cannot load libyaml, which parses policy files: %s", why);
		return NULL;
	}
	if (!yaml_parser_initialize(&parser)) {
		ERR(ld, (struct ynode *)NULL, "cannot initialise the YAML parser");
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			const char *ctx = parser.context;
			ld->nerr++;
			diag_add(ld->diags, ld->file, (unsigned)parser.problem_mark.line + 1,
			         (unsigned)parser.problem_mark.column + 1, "YAML: %s%s%s",
			         parser.problem ? parser.problem : "syntax error",
			         ctx ? " " : "", ctx ? ctx : "");
			break;
		}
		int r = ybuild_event(&b, &ev);
		yaml_event_delete(&ev);
		if (r <= 0)
			break;
	}
	yaml_parser_delete(&parser);
	if (ld->nerr) {
		ynode_free(b.root);
		return NULL;
	}
	return b.root;
}

/* ---- schema helpers ----------------------------------------------------- */

static const char *type_name(const struct ynode *n)
{
	return n->type == Y_SCALAR ? "a scalar" : n->type == Y_SEQ ? "a list" : "a mapping";
}

static const char *want_string(struct ld *ld, const struct ynode *n, const char *key)
{
	if (n->type != Y_SCALAR) {
		ERR(ld, n, "'%s' must be a string, not %s", key, type_name(n));
		return NULL;
	}
	if (n->plain && n->s[0] == '\0') {
		ERR(ld, n, "'%s' is empty", key);
		return NULL;
	}
	return n->s;
}

static int want_bool(struct ld *ld, const struct ynode *n, const char *key, bool *out)
{
	if (n->type == Y_SCALAR && n->plain) {
		if (strcmp(n->s, "true") == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(n->s, "false") == 0) {
			*out = false;
			return 0;
		}
	}
	ERR(ld, n, "'%s' must be true or false", key);
	return -EINVAL;
}

static int want_ulong(struct ld *ld, const struct ynode *n, const char *key, unsigned long max,
                      unsigned long *out)
{
	char *end = NULL;
	if (n->type == Y_SCALAR && n->plain && n->s[0] >= '0' && n->s[0] <= '9') {
		errno = 0;
		unsigned long v = strtoul(n->s, &end, 10);
		if (errno == 0 && *end == '\0' && v <= max) {
			*out = v;
			return 0;
		}
	}
	ERR(ld, n, "'%s' must be a whole number between 0 and %lu", key, max);
	return -EINVAL;
}

/* A scalar or a list of scalars. Calls fn for each (node, text). */
typedef void (*item_fn)(struct ld *ld, const struct ynode *n, void *data);

static void for_items(struct ld *ld, const struct ynode *n, const char *key, item_fn fn, void *data)
{
	if (n->type == Y_MAP) {
		ERR(ld, n, "'%s' must be a string or a list of strings, not a mapping", key);
		return;
	}
	if (n->type == Y_SCALAR) {
		fn(ld, n, data);
		return;
	}
	if (n->nkid == 0)
		ERR(ld, n, "'%s' is an empty list", key);
	for (size_t i = 0; i < n->nkid; i++) {
		if (n->kid[i]->type != Y_SCALAR)
			ERR(ld, n->kid[i], "items of '%s' must be strings, not %s", key,
			    type_name(n->kid[i]));
		else
			fn(ld, n->kid[i], data);
	}
}

/* Iterate a mapping's pairs, reporting non-scalar and duplicate keys. */
typedef void (*pair_fn)(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data);

static void for_pairs(struct ld *ld, const struct ynode *n, const char *what, pair_fn fn, void *data)
{
	if (n->type != Y_MAP) {
		ERR(ld, n, "%s must be a mapping, not %s", what, type_name(n));
		return;
	}
	for (size_t i = 0; i + 1 < n->nkid; i += 2) {
		const struct ynode *k = n->kid[i];
		if (k->type != Y_SCALAR) {
			ERR(ld, k, "keys in %s must be strings", what);
			continue;
		}
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j += 2)
			dup = n->kid[j]->type == Y_SCALAR && strcmp(n->kid[j]->s, k->s) == 0;
		if (dup) {
			ERR(ld, k, "duplicate key '%s' in %s", k->s, what);
			continue;
		}
		fn(ld, k, n->kid[i + 1], data);
	}
}

static void check_glob(struct ld *ld, const struct ynode *n, const char *pat)
{
	size_t pos;
	const char *msg;
	if (tg_glob_validate(pat, &pos, &msg) < 0) {
		/* Columns point into the scalar when it is plain (what you see is
		 * what was parsed); quoted scalars point at the quote. */
		unsigned col = n->col + (n->plain ? (unsigned)pos : 0);
		ld->nerr++;
		diag_add(ld->diags, ld->file, n->line, col, "bad glob '%s': %s", pat, msg);
	}
}

static bool is_pathlike_pattern(const char *s)
{
	return s[0] == '/' || s[0] == '~' || strncmp(s, "$HOME", 5) == 0 ||
	       strncmp(s, "${HOME}", 7) == 0 || strncmp(s, "$WORKSPACE", 10) == 0;
}

struct list_ctx {
	struct tg_strlist *dst;
	const char *key;
	int kind;            /* LIST_* */
};

enum { LIST_PLAIN, LIST_GLOB, LIST_PATHGLOB, LIST_LITERAL_PATH, LIST_FLAG, LIST_SYSCALL };

static bool flag_ok(const char *f)
{
	if (f[0] != '-')
		return false;
	if (f[1] != '-')
		return f[1] && f[1] != '-' && f[2] == '\0';
	if (!f[2])
		return false;
	for (const char *c = f + 2; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '-' || *c == '_'))
			return false;
	return true;
}

static void check_flag(struct ld *ld, const struct ynode *n, const char *f)
{
	if (flag_ok(f))
		return;
	if (f[0] == '-' && f[1] && f[1] != '-' && f[2])
		ERR(ld, n, "'%s' combines short flags: write each one ('-%c', '-%c'...) as its own entry",
		    f, f[1], f[2]);
	else
		ERR(ld, n, "'%s' is not a flag (expected -x or --long-name)", f);
}

static void list_item(struct ld *ld, const struct ynode *n, void *data)
{
	struct list_ctx *c = data;
	const char *s = n->s;
	if (s[0] == '\0') {
		ERR(ld, n, "empty string in '%s'", c->key);
		return;
	}
	switch (c->kind) {
	case LIST_GLOB:
		check_glob(ld, n, s);
		break;
	case LIST_PATHGLOB:
		if (!is_pathlike_pattern(s))
			ERR(ld, n, "'%s' in '%s' must be absolute (start with /, ~, $HOME or $WORKSPACE)", s,
			    c->key);
		check_glob(ld, n, s);
		break;
	case LIST_LITERAL_PATH:
		if (!is_pathlike_pattern(s))
			ERR(ld, n, "'%s' in '%s' must be absolute (start with /, ~, $HOME or $WORKSPACE)", s,
			    c->key);
		else if (!tg_glob_is_literal(s))
			ERR(ld, n, "'%s' in '%s' must be a plain path, not a glob", s, c->key);
		break;
	case LIST_FLAG:
		check_flag(ld, n, s);
		break;
	case LIST_SYSCALL:
		if (seccomp_syscall_resolve_name(s) == __NR_SCMP_ERROR) {
			char why[128];
			if (tg_seccomp_load(why, sizeof(why)))
				ERR(ld, n, "unknown syscall '%s'", s);
			else
				ERR(ld, n, "cannot check syscall '%s' without libseccomp: %s", s, why);
		}
		break;
	default:
		break;
	}
	if (tg_strlist_push(c->dst, s) < 0)
		ERR(ld, n, "out of memory");
}

static void take_list(struct ld *ld, const struct ynode *v, const char *key, int kind,
                      struct tg_strlist *dst)
{
	struct list_ctx c = { dst, key, kind };
	for_items(ld, v, key, list_item, &c);
}

/* ---- exec matcher -------------------------------------------------------- */

static void flag_alt_item(struct ld *ld, const struct ynode *n, void *data)
{
	struct tg_exec_match *e = data;
	struct tg_flagalt *v = realloc(e->flags, (e->nflags + 1) * sizeof(*v));
	if (!v) {
		ERR(ld, n, "out of memory");
		return;
	}
	e->flags = v;
	struct tg_flagalt *a = &v[e->nflags++];
	memset(a, 0, sizeof(*a));
	_cleanup_free_ char *dup = tg_strdup(n->s);
	char *save = NULL;
	if (!dup)
		return;
	for (char *t = strtok_r(dup, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
		check_flag(ld, n, t);
		if (tg_strlist_push(&a->alts, t) < 0)
			ERR(ld, n, "out of memory");
	}
	if (a->alts.n == 0)
		ERR(ld, n, "empty flag in 'flags'");
}

static void exec_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	struct tg_exec_match *e = data;
	const char *key = k->s;
	if (strcmp(key, "program") == 0)
		take_list(ld, v, key, LIST_GLOB, &e->program);
	else if (strcmp(key, "value_flags") == 0)
		take_list(ld, v, key, LIST_FLAG, &e->value_flags);
	else if (strcmp(key, "subcommand") == 0)
		take_list(ld, v, key, LIST_GLOB, &e->subcommand);
	else if (strcmp(key, "flags") == 0)
		for_items(ld, v, key, flag_alt_item, e);
	else if (strcmp(key, "any_flags") == 0)
		take_list(ld, v, key, LIST_FLAG, &e->any_flags);
	else if (strcmp(key, "not_flags") == 0)
		take_list(ld, v, key, LIST_FLAG, &e->not_flags);
	else if (strcmp(key, "args") == 0)
		take_list(ld, v, key, LIST_GLOB, &e->args);
	else if (strcmp(key, "script") == 0)
		take_list(ld, v, key, LIST_GLOB, &e->script);
	else if (strcmp(key, "words") == 0)
		take_list(ld, v, key, LIST_GLOB, &e->words);
	else if (strcmp(key, "outside_workspace") == 0)
		want_bool(ld, v, key, &e->outside_workspace);
	else
		ERR(ld, k, "unknown key '%s' in exec (expected program, value_flags, subcommand, flags, "
		           "any_flags, not_flags, args, words, script, outside_workspace)", key);
}

/* ---- path matcher ---------------------------------------------------------- */

static const struct {
	const char *name;
	unsigned bits;
} path_ops[] = {
	{ "write", TG_PATH_OPS_WRITE },
	{ "open", 1u << TG_OP_OPEN },
	{ "unlink", 1u << TG_OP_UNLINK },
	{ "rmdir", 1u << TG_OP_RMDIR },
	{ "rename", 1u << TG_OP_RENAME },
	{ "link", 1u << TG_OP_LINK },
	{ "symlink", 1u << TG_OP_SYMLINK },
	{ "mkdir", 1u << TG_OP_MKDIR },
	{ "mknod", 1u << TG_OP_MKNOD },
	{ "truncate", 1u << TG_OP_TRUNCATE },
	{ "chmod", 1u << TG_OP_CHMOD },
	{ "chown", 1u << TG_OP_CHOWN },
	{ "utimes", 1u << TG_OP_UTIMES },
	{ "xattr", 1u << TG_OP_XATTR },
	{ "exec", TG_PATH_OPS_EXEC },
	{ "read", TG_PATH_OPS_OPEN },
};

static void path_op_item(struct ld *ld, const struct ynode *n, void *data)
{
	unsigned *ops = data;
	for (size_t i = 0; i < TG_ARRAY_SIZE(path_ops); i++) {
		if (strcmp(path_ops[i].name, n->s) == 0) {
			*ops |= path_ops[i].bits;
			return;
		}
	}
	ERR(ld, n, "unknown operation '%s' (expected write, open, unlink, rmdir, rename, link, "
	           "symlink, mkdir, mknod, truncate, chmod, chown, utimes, xattr, exec, read)", n->s);
}

static void path_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	struct tg_path_match *pm = data;
	if (strcmp(k->s, "match") == 0)
		take_list(ld, v, k->s, LIST_PATHGLOB, &pm->match);
	else if (strcmp(k->s, "ops") == 0)
		for_items(ld, v, k->s, path_op_item, &pm->ops);
	else
		ERR(ld, k, "unknown key '%s' in path (expected match, ops)", k->s);
}

/* ---- connect matcher ------------------------------------------------------- */

static int parse_cidr(const char *s, struct tg_cidr *c)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t l = slash ? (size_t)(slash - s) : strlen(s);
	if (l >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, l);
	buf[l] = '\0';
	memset(c, 0, sizeof(*c));
	if (inet_pton(AF_INET, buf, c->addr) == 1)
		c->family = AF_INET, c->prefix = 32;
	else if (inet_pton(AF_INET6, buf, c->addr) == 1)
		c->family = AF_INET6, c->prefix = 128;
	else
		return -EINVAL;
	if (slash) {
		char *end = NULL;
		unsigned long pl = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || pl > c->prefix)
			return -EINVAL;
		c->prefix = (unsigned)pl;
	}
	return 0;
}

static void cidr_item(struct ld *ld, const struct ynode *n, void *data)
{
	struct tg_connect_match *cm = data;
	struct tg_cidr c;
	if (parse_cidr(n->s, &c) < 0) {
		ERR(ld, n, "bad CIDR '%s' (expected 10.0.0.0/8 or fd00::/8)", n->s);
		return;
	}
	struct tg_cidr *v = realloc(cm->cidr, (cm->ncidr + 1) * sizeof(*v));
	if (!v)
		return;
	cm->cidr = v;
	v[cm->ncidr++] = c;
}

static void port_item(struct ld *ld, const struct ynode *n, void *data)
{
	struct tg_connect_match *cm = data;
	char *end = NULL;
	unsigned long lo = strtoul(n->s, &end, 10), hi = lo;
	if (end != n->s && *end == '-') {
		const char *h = end + 1;
		hi = strtoul(h, &end, 10);
		if (end == h)
			end = (char *)"x";
	}
	if (end == n->s || *end || lo > 65535 || hi > 65535 || lo > hi || n->s[0] == '-') {
		ERR(ld, n, "bad port '%s' (expected 443 or 8000-8999)", n->s);
		return;
	}
	struct tg_portrange *v = realloc(cm->ports, (cm->nports + 1) * sizeof(*v));
	if (!v)
		return;
	cm->ports = v;
	v[cm->nports++] = (struct tg_portrange){ (uint16_t)lo, (uint16_t)hi };
}

static void connect_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	struct tg_connect_match *cm = data;
	if (strcmp(k->s, "unix") == 0)
		take_list(ld, v, k->s, LIST_GLOB, &cm->unix_paths);
	else if (strcmp(k->s, "cidr") == 0)
		for_items(ld, v, k->s, cidr_item, cm);
	else if (strcmp(k->s, "ports") == 0)
		for_items(ld, v, k->s, port_item, cm);
	else if (strcmp(k->s, "loopback") == 0)
		want_bool(ld, v, k->s, &cm->loopback);
	else
		ERR(ld, k, "unknown key '%s' in connect (expected unix, cidr, ports, loopback)", k->s);
}

/* ---- process matcher ------------------------------------------------------- */

static void uid_item(struct ld *ld, const struct ynode *n, void *data)
{
	struct tg_process_match *pm = data;
	char *end = NULL;
	unsigned long u = strtoul(n->s, &end, 10);
	if (end == n->s || *end || n->s[0] == '-' || u > 0xfffffffeul) {
		ERR(ld, n, "bad uid '%s' (expected a number)", n->s);
		return;
	}
	long *v = realloc(pm->uids, (pm->nuids + 1) * sizeof(*v));
	if (!v)
		return;
	pm->uids = v;
	v[pm->nuids++] = (long)u;
}

/* A glob on a cgroup path as /proc/PID/cgroup shows it ("/system.slice/x.service"). */
static void cgroup_item(struct ld *ld, const struct ynode *n, void *data)
{
	struct tg_process_match *pm = data;
	if (n->s[0] != '/') {
		ERR(ld, n, "bad cgroup '%s' (expected a path like /system.slice/NAME.service)", n->s);
		return;
	}
	check_glob(ld, n, n->s);
	if (tg_strlist_push(&pm->cgroup, n->s) < 0)
		ERR(ld, n, "out of memory");
}

static void process_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	struct tg_process_match *pm = data;
	if (strcmp(k->s, "program") == 0)
		take_list(ld, v, k->s, LIST_GLOB, &pm->program);
	else if (strcmp(k->s, "uid") == 0)
		for_items(ld, v, k->s, uid_item, pm);
	else if (strcmp(k->s, "cgroup") == 0)
		for_items(ld, v, k->s, cgroup_item, pm);
	else
		ERR(ld, k, "unknown key '%s' in process (expected program, uid, cgroup)", k->s);
}

/* ---- examples ---------------------------------------------------------- */

struct ex_ctx {
	struct tg_example **v;
	size_t *n;
};

static void example_item(struct ld *ld, const struct ynode *n, void *data)
{
	struct ex_ctx *c = data;
	struct tg_example *v = realloc(*c->v, (*c->n + 1) * sizeof(*v));
	if (!v) {
		ERR(ld, n, "out of memory");
		return;
	}
	*c->v = v;
	v[*c->n] = (struct tg_example){ tg_strdup(n->s), n->line, n->col };
	(*c->n)++;
}

static void examples_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	struct tg_rule *r = data;
	struct ex_ctx c;
	if (strcmp(k->s, "match") == 0)
		c = (struct ex_ctx){ &r->match, &r->nmatch };
	else if (strcmp(k->s, "not_match") == 0)
		c = (struct ex_ctx){ &r->not_match, &r->nnot_match };
	else {
		ERR(ld, k, "unknown key '%s' in examples (expected match, not_match)", k->s);
		return;
	}
	for_items(ld, v, k->s, example_item, &c);
}

/* ---- one rule ------------------------------------------------------------- */

struct rule_ctx {
	struct tg_rule *r;
	const struct ynode *errno_node, *action_node, *matcher_node;
	int nmatchers;
	bool disabled, has_action, has_disabled;
};

static bool id_ok(const char *s)
{
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' ||
		      *c == '.'))
			return false;
	return strlen(s) <= 128;
}

static void set_action(struct ld *ld, struct rule_ctx *c, const struct ynode *v)
{
	static const char *const names[] = { "allow", "audit", "ask", "deny", "kill" };
	const char *s = want_string(ld, v, "action");
	c->action_node = v;
	if (!s)
		return;
	for (size_t i = 0; i < TG_ARRAY_SIZE(names); i++) {
		if (strcmp(s, names[i]) == 0) {
			c->r->action = (enum tg_action)i;
			c->has_action = true;
			return;
		}
	}
	ERR(ld, v, "unknown action '%s' (expected allow, deny, kill, audit or ask)", s);
}

static void set_errno(struct ld *ld, struct rule_ctx *c, const struct ynode *v)
{
	const char *s = want_string(ld, v, "errno");
	c->errno_node = v;
	if (!s)
		return;
	int e = tg_errno_from_name(s);
	if (e < 0)
		ERR(ld, v, "unknown errno name '%s' (e.g. EPERM, EACCES, EROFS)", s);
	else
		c->r->err = e;
}

static void rule_matcher(struct ld *ld, struct rule_ctx *c, const struct ynode *k,
                         const struct ynode *v)
{
	struct tg_rule *r = c->r;
	c->nmatchers++;
	c->matcher_node = k;
	if (strcmp(k->s, "exec") == 0) {
		r->kind = TG_RULE_EXEC;
		for_pairs(ld, v, "exec", exec_pair, &r->exec);
	} else if (strcmp(k->s, "path") == 0) {
		r->kind = TG_RULE_PATH;
		for_pairs(ld, v, "path", path_pair, &r->path);
	} else if (strcmp(k->s, "syscall") == 0) {
		r->kind = TG_RULE_SYSCALL;
		take_list(ld, v, "syscall", LIST_SYSCALL, &r->syscalls);
	} else if (strcmp(k->s, "process") == 0) {
		r->kind = TG_RULE_PROCESS;
		for_pairs(ld, v, "process", process_pair, &r->proc);
	} else {
		r->kind = TG_RULE_CONNECT;
		for_pairs(ld, v, "connect", connect_pair, &r->conn);
	}
}

static void rule_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	struct rule_ctx *c = data;
	struct tg_rule *r = c->r;
	const char *key = k->s;
	const char *s;
	if (strcmp(key, "id") == 0) {
		if ((s = want_string(ld, v, key)) && !id_ok(s))
			ERR(ld, v, "bad rule id '%s' (lowercase letters, digits, '-', '_', '.')", s);
		else if (s)
			r->id = tg_strdup(s);
	} else if (strcmp(key, "reason") == 0) {
		if ((s = want_string(ld, v, key)))
			r->reason = tg_strdup(s);
	} else if (strcmp(key, "action") == 0) {
		set_action(ld, c, v);
	} else if (strcmp(key, "errno") == 0) {
		set_errno(ld, c, v);
	} else if (strcmp(key, "disabled") == 0) {
		c->has_disabled = true;
		want_bool(ld, v, key, &c->disabled);
	} else if (strcmp(key, "exec") == 0 || strcmp(key, "path") == 0 ||
	           strcmp(key, "syscall") == 0 || strcmp(key, "connect") == 0 ||
	           strcmp(key, "process") == 0) {
		rule_matcher(ld, c, k, v);
	} else if (strcmp(key, "examples") == 0) {
		for_pairs(ld, v, "examples", examples_pair, r);
	} else {
		ERR(ld, k, "unknown key '%s' in rule (expected id, reason, action, errno, disabled, exec, "
		           "path, syscall, connect, process, examples)", key);
	}
}

static void rule_validate(struct ld *ld, struct rule_ctx *c, const struct ynode *n)
{
	struct tg_rule *r = c->r;
	if (c->disabled) {
		if (c->nmatchers || c->has_action || c->errno_node || r->nmatch || r->nnot_match)
			ERR(ld, n, "rule '%s' is disabled: it takes only 'id', 'reason' and 'disabled'",
			    r->id);
		r->kind = TG_RULE_DISABLE;
		return;
	}
	if (!c->has_action && !c->action_node)
		ERR(ld, n, "rule '%s' has no 'action' (allow, deny, kill or audit)", r->id);
	if (!r->reason)
		ERR(ld, n, "rule '%s' has no 'reason' (it is shown when the rule fires)", r->id);
	if (c->nmatchers == 0)
		ERR(ld, n, "rule '%s' says nothing to match: give one of exec, path, syscall, connect",
		    r->id);
	if (c->nmatchers > 1)
		ERR(ld, c->matcher_node, "rule '%s' has more than one of exec, path, syscall, connect: "
		                         "split it into several rules", r->id);
	if (c->errno_node && r->action != TG_ACT_DENY && r->action != TG_ACT_ASK && c->has_action)
		ERR(ld, c->errno_node, "'errno' only goes with action: deny");
	if (r->kind == TG_RULE_EXEC && c->nmatchers == 1 && r->exec.program.n == 0)
		ERR(ld, c->matcher_node, "exec rule '%s' needs 'program'", r->id);
	if (r->kind == TG_RULE_PATH && c->nmatchers == 1 && r->path.match.n == 0)
		ERR(ld, c->matcher_node, "path rule '%s' needs 'match'", r->id);
	if (r->kind == TG_RULE_PATH && r->path.ops == 0)
		r->path.ops = TG_PATH_OPS_WRITE;
	if (r->kind == TG_RULE_SYSCALL && c->has_action && r->action != TG_ACT_DENY)
		ERR(ld, c->action_node, "syscall rules are enforced in BPF and support only action: deny");
	if (r->kind == TG_RULE_CONNECT && c->nmatchers == 1 && !r->conn.unix_paths.n &&
	    !r->conn.ncidr && !r->conn.nports && !r->conn.loopback)
		ERR(ld, c->matcher_node, "connect rule '%s' needs unix, cidr, ports or loopback", r->id);
	r->conn.any_inet = r->conn.nports && !r->conn.ncidr && !r->conn.loopback;
	if (r->kind == TG_RULE_PROCESS && c->has_action && r->action != TG_ACT_ALLOW)
		ERR(ld, c->action_node, "process rules name outside processes the command may act on: "
		                        "only action: allow");
	if (r->kind == TG_RULE_PROCESS && c->nmatchers == 1 && !r->proc.program.n && !r->proc.nuids &&
	    !r->proc.cgroup.n)
		ERR(ld, c->matcher_node, "process rule '%s' needs program, uid or cgroup", r->id);
}

static struct tg_rule *find_rule(struct tg_policy *p, const char *id, size_t *idx)
{
	for (size_t i = 0; i < p->nrules; i++) {
		if (strcmp(p->rules[i]->id, id) == 0) {
			*idx = i;
			return p->rules[i];
		}
	}
	return NULL;
}

/* Later files override earlier ones by id; within one file an id is unique. */
static void rule_merge(struct ld *ld, struct tg_rule *r, const struct ynode *n)
{
	size_t idx = 0;
	struct tg_rule *old = find_rule(ld->p, r->id, &idx);
	if (r->kind == TG_RULE_DISABLE) {
		if (!old)
			ERR(ld, n, "rule '%s' is disabled, but no earlier file defines it", r->id);
		else if (!old->disabled_by)
			old->disabled_by = tg_strdup(r->source);
		tg_rule_free(r);
		return;
	}
	if (old) {
		r->overrides = tg_strdup(old->source);
		tg_rule_free(old);
		ld->p->rules[idx] = r;
		return;
	}
	struct tg_rule **v = realloc(ld->p->rules, (ld->p->nrules + 1) * sizeof(*v));
	if (!v) {
		ERR(ld, n, "out of memory");
		tg_rule_free(r);
		return;
	}
	ld->p->rules = v;
	v[ld->p->nrules++] = r;
}

static void load_rule(struct ld *ld, const struct ynode *n)
{
	struct tg_rule *r = calloc(1, sizeof(*r));
	size_t nerr = ld->nerr;
	if (!r) {
		ERR(ld, n, "out of memory");
		return;
	}
	struct rule_ctx c = { .r = r };
	r->err = EPERM;
	r->file = tg_strdup(ld->file);
	r->line = n->line, r->col = n->col;
	r->source = tg_asprintf("%s:%u", ld->file, n->line);
	for_pairs(ld, n, "a rule", rule_pair, &c);
	if (n->type != Y_MAP) {
		tg_rule_free(r);
		return;
	}
	if (!r->id) {
		if (ld->nerr == nerr)
			ERR(ld, n, "rule without an 'id'");
		tg_rule_free(r);
		return;
	}
	for (size_t i = 0; i < ld->ids.n; i++) {
		if (strcmp(ld->ids.v[i], r->id) == 0) {
			ERR(ld, n, "duplicate rule id '%s' in this file", r->id);
			tg_rule_free(r);
			return;
		}
	}
	tg_strlist_push(&ld->ids, r->id);
	rule_validate(ld, &c, n);
	if (ld->nerr != nerr) {
		tg_rule_free(r);
		return;
	}
	rule_merge(ld, r, n);
}

/* ---- top level -------------------------------------------------------------- */

static void paths_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	if (strcmp(k->s, "writable") == 0)
		take_list(ld, v, k->s, LIST_LITERAL_PATH, &ld->p->writable);
	else if (strcmp(k->s, "deny_read") == 0)
		take_list(ld, v, k->s, LIST_PATHGLOB, &ld->p->deny_read);
	else if (strcmp(k->s, "create") == 0) {
		/* Writable places txguard creates when missing (issue 13). */
		take_list(ld, v, k->s, LIST_LITERAL_PATH, &ld->p->create);
		take_list(ld, v, k->s, LIST_LITERAL_PATH, &ld->p->writable);
	} else
		ERR(ld, k, "unknown key '%s' in paths (expected writable, create, deny_read)", k->s);
}

static void limits_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	unsigned long n;
	if (strcmp(k->s, "max_procs") != 0) {
		ERR(ld, k, "unknown key '%s' in limits (expected max_procs)", k->s);
		return;
	}
	if (want_ulong(ld, v, k->s, MAX_PROCS_LIMIT, &n) == 0)
		ld->p->max_procs = n;
}

/* network: hosts: { allow: [...], deny: [...], examples: {...} } — the
 * entries are parsed and matched in policy/hosts.c. */
static void host_item(struct ld *ld, const struct ynode *n, void *data)
{
	bool deny = data != NULL;
	struct tg_host_entry e;
	const char *why = tg_host_entry_parse(n->s, deny, &e);
	struct tg_host_entry *v = why ? NULL : realloc(ld->p->hosts, (ld->p->nhosts + 1) * sizeof(*v));
	if (!v) {
		ERR(ld, n, "bad host '%s': %s", n->s, why ? why : "out of memory");
		free(e.pattern);
		return;
	}
	e.text = tg_strdup(n->s);
	e.source = tg_asprintf("%s:%u", ld->file, n->line);
	ld->p->hosts = v;
	v[ld->p->nhosts++] = e;
}

static void host_example_item(struct ld *ld, const struct ynode *n, void *data)
{
	struct tg_host_example *v = realloc(ld->p->host_ex, (ld->p->nhost_ex + 1) * sizeof(*v));
	if (!v) {
		ERR(ld, n, "out of memory");
		return;
	}
	ld->p->host_ex = v;
	v[ld->p->nhost_ex++] = (struct tg_host_example){ tg_strdup(n->s), tg_strdup(ld->file),
	                                                 n->line, n->col, data == NULL };
}

static void host_examples_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	static int deny;
	if (strcmp(k->s, "match") == 0)
		for_items(ld, v, k->s, host_example_item, NULL);
	else if (strcmp(k->s, "not_match") == 0)
		for_items(ld, v, k->s, host_example_item, &deny);
	else
		ERR(ld, k, "unknown key '%s' in examples (expected match, not_match)", k->s);
}

static void hosts_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	static int deny;
	if (strcmp(k->s, "allow") == 0)
		for_items(ld, v, k->s, host_item, NULL);
	else if (strcmp(k->s, "deny") == 0)
		for_items(ld, v, k->s, host_item, &deny);
	else if (strcmp(k->s, "examples") == 0)
		for_pairs(ld, v, "examples", host_examples_pair, NULL);
	else
		ERR(ld, k, "unknown key '%s' in network.hosts (expected allow, deny, examples)", k->s);
}

static void network_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	const char *s;
	if (strcmp(k->s, "hosts") == 0) {
		for_pairs(ld, v, "network.hosts", hosts_pair, NULL);
		return;
	}
	if (strcmp(k->s, "default") != 0) {
		ERR(ld, k, "unknown key '%s' in network (expected default, hosts)", k->s);
		return;
	}
	if (!(s = want_string(ld, v, k->s)))
		return;
	if (strcmp(s, "allow") == 0)
		ld->p->network_deny = false;
	else if (strcmp(s, "deny") == 0)
		ld->p->network_deny = true;
	else
		ERR(ld, v, "network default must be allow or deny, not '%s'", s);
}

static void top_pair(struct ld *ld, const struct ynode *k, const struct ynode *v, void *data)
{
	unsigned long ver;
	if (strcmp(k->s, "version") == 0) {
		if (want_ulong(ld, v, "version", 1000, &ver) == 0 && ver != 1)
			ERR(ld, v, "unsupported policy version %lu (this txguard reads version 1)", ver);
	} else if (strcmp(k->s, "rules") == 0) {
		if (v->type != Y_SEQ) {
			ERR(ld, v, "'rules' must be a list, not %s", type_name(v));
			return;
		}
		for (size_t i = 0; i < v->nkid; i++)
			load_rule(ld, v->kid[i]);
	} else if (strcmp(k->s, "paths") == 0) {
		for_pairs(ld, v, "paths", paths_pair, NULL);
	} else if (strcmp(k->s, "limits") == 0) {
		for_pairs(ld, v, "limits", limits_pair, NULL);
	} else if (strcmp(k->s, "network") == 0) {
		for_pairs(ld, v, "network", network_pair, NULL);
	} else {
		ERR(ld, k, "unknown top-level key '%s' (expected version, rules, paths, limits, network)",
		    k->s);
	}
}

/* The tree of one file's text: from the cache when it holds this very text,
 * else parsed (and stored once the schema walk found nothing wrong). */
static void load_buffer(struct tg_policy *p, const char *name, const char *buf, size_t len,
                        struct tg_policy_diags *diags, size_t *nerr, struct tg_policy_cache *cache)
{
	struct ld ld = { .p = p, .diags = diags, .file = name };
	struct ytree tree = { 0 };
	uint64_t hash = 0;
	tg_strlist_push(&p->files, name);
	if (memchr(buf, '\0', len)) {
		ERR(&ld, (struct ynode *)NULL, "NUL byte in a policy file");
		goto out;
	}
	if (cache && cache->dir) {
		hash = ytree_hash(buf, len);
		if (ytree_load(cache->dir, cache->trusted, hash, len, &tree) > 0)
			cache->hits++;
		else
			cache->misses++;
	}
	bool parsed = !tree.root;
	if (parsed)
		tree.root = yaml_to_tree(&ld, buf, len);
	struct ynode *root = tree.root;
	if (root && !(root->type == Y_SCALAR && root->plain && root->s[0] == '\0'))
		for_pairs(&ld, root, "the policy file", top_pair, NULL);
	if (parsed && root && ld.nerr == 0 && cache && cache->dir && ytree_store(cache->dir, cache->trusted, hash, len, root) == 0)
		cache->stored++;
out:
	ytree_clear(&tree);
	tg_strlist_clear(&ld.ids);
	*nerr += ld.nerr;
}

static void load_file(struct tg_policy *p, const char *path, struct tg_policy_diags *diags,
                      size_t *nerr, struct tg_policy_cache *cache)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r = tg_read_file(path, &buf, &len, Y_MAX_FILE);
	if (r < 0) {
		(*nerr)++;
		diag_add(diags, path, 0, 0, "cannot read policy file: %s",
		         r == -EFBIG ? "larger than 4 MiB" : strerror(-r));
		return;
	}
	load_buffer(p, path, buf, len, diags, nerr, cache);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_yaml_suffix(const char *n)
{
	size_t l = strlen(n);
	return n[0] != '.' && ((l > 5 && strcmp(n + l - 5, ".yaml") == 0) ||
	                       (l > 4 && strcmp(n + l - 4, ".yml") == 0));
}

/* The policy files of dir, sorted: 0 or -errno of opendir. */
static int list_dir(const char *dir, struct tg_strlist *names)
{
	DIR *d = opendir(dir);
	*names = (struct tg_strlist){ 0 };
	if (!d)
		return -errno;
	for (struct dirent *de; (de = readdir(d));)
		if (has_yaml_suffix(de->d_name))
			tg_strlist_push(names, de->d_name);
	closedir(d);
	if (names->n)
		qsort(names->v, names->n, sizeof(*names->v), cmp_str);
	return 0;
}

static void load_dir(struct tg_policy *p, const char *dir, struct tg_policy_diags *diags,
                     size_t *nerr, struct tg_policy_cache *cache)
{
	struct tg_strlist names;
	int r = list_dir(dir, &names);
	if (r < 0) {
		(*nerr)++;
		diag_add(diags, dir, 0, 0, "cannot open policy directory: %s", strerror(-r));
		return;
	}
	for (size_t i = 0; i < names.n; i++) {
		_cleanup_free_ char *path = tg_asprintf("%s/%s", dir, names.v[i]);
		if (path)
			load_file(p, path, diags, nerr, cache);
	}
	tg_strlist_clear(&names);
}

/* ---- the whole model from the cache (policy/model.c) ---- */

/* A file changed this recently may change again within the same tick of
 * the clock that stamps it, and its stat would not tell (git's "racy"
 * index entries). */
#define M_SETTLED_SEC 2

/* One file's part of the model's key: its name (as loaded, which says
 * where it is in the order) and what its stat says of its identity and
 * content: device, inode, size, mtime and ctime (any write moves ctime,
 * and nobody can set it back). -EAGAIN when the file is too fresh for
 * that; else 0 or -errno, left to the walk to report. */
static int key_path(const char *path, const struct timespec *now, uint64_t *key)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_ctim.tv_sec > now->tv_sec - M_SETTLED_SEC || st.st_mtim.tv_sec > now->tv_sec - M_SETTLED_SEC)
		return -EAGAIN;
	const uint64_t v[] = { st.st_dev, st.st_ino, (uint64_t)st.st_size,
		               (uint64_t)st.st_mtim.tv_sec, (uint64_t)st.st_mtim.tv_nsec,
		               (uint64_t)st.st_ctim.tv_sec, (uint64_t)st.st_ctim.tv_nsec };
	*key = tg_fnv1a(*key, path, strlen(path) + 1);
	*key = tg_fnv1a(*key, v, sizeof(v));
	return 0;
}

/* The key of the model these paths load to: this binary, and every file
 * the walk would read, in its order, by name and stat (not by text: a
 * start that reads no file is the point). Any trouble, or a file changed
 * in the last seconds: -errno, and the load walks the trees as without a
 * model. */
static int model_key(const char *const *paths, size_t npaths, uint64_t *key)
{
	struct timespec now;
	uint64_t h = tg_cache_self_key();
	int r = h && clock_gettime(CLOCK_REALTIME, &now) == 0 ? 0 : -ENOENT;
	for (size_t i = 0; r == 0 && i < npaths; i++) {
		struct stat st;
		if (!(stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))) {
			r = key_path(paths[i], &now, &h);
			continue;
		}
		struct tg_strlist names;
		r = list_dir(paths[i], &names);
		for (size_t k = 0; r == 0 && k < names.n; k++) {
			_cleanup_free_ char *path = tg_asprintf("%s/%s", paths[i], names.v[k]);
			r = path ? key_path(path, &now, &h) : -ENOMEM;
		}
		tg_strlist_clear(&names);
	}
	*key = h;
	return r;
}

/* The model stored under this key, finished: 1 with *out, 0 for none, -ENOMEM. */
static int model_load(struct tg_policy_cache *cache, uint64_t key, struct tg_policy **out)
{
	int r = tg_policy_model_load(cache->dir, cache->trusted, key, out);
	if (r > 0 && tg_policy_finish(*out) < 0) {
		tg_policy_free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return r;
}

int tg_policy_load(struct tg_policy **out, const char *const *paths, size_t npaths,
                   struct tg_policy_diags *diags)
{
	return tg_policy_load_cached(out, paths, npaths, diags, NULL);
}

int tg_policy_load_cached(struct tg_policy **out, const char *const *paths, size_t npaths,
                          struct tg_policy_diags *diags, struct tg_policy_cache *cache)
{
	/* The whole model first: a start whose files are all as before needs
	 * neither their trees nor the walk. */
	uint64_t key = 0, after = 0;
	bool model = cache && cache->dir && !cache->no_model && model_key(paths, npaths, &key) == 0;
	if (model) {
		int r = model_load(cache, key, out);
		if (r != 0) {
			cache->model_hit = r > 0;
			return r > 0 ? 0 : r;
		}
	}
	struct tg_policy *p = calloc(1, sizeof(*p));
	size_t nerr = 0;
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))
			load_dir(p, paths[i], diags, &nerr, cache);
		else
			load_file(p, paths[i], diags, &nerr, cache);
	}
	/* Stored only when no file changed while the walk read them: the
	 * same key after it as before. */
	if (nerr == 0 && model && model_key(paths, npaths, &after) == 0 && after == key &&
	    tg_policy_model_store(cache->dir, cache->trusted, key, p) == 0)
		cache->model_stored = true;
	if (nerr == 0 && tg_policy_finish(p) < 0)
		nerr++;
	if (nerr) {
		tg_policy_free(p);
		return -EINVAL;
	}
	*out = p;
	return 0;
}

int tg_policy_load_string(struct tg_policy **out, const char *name, const char *yaml, size_t len,
                          struct tg_policy_diags *diags)
{
	struct tg_policy *p = calloc(1, sizeof(*p));
	size_t nerr = 0;
	if (!p)
		return -ENOMEM;
	load_buffer(p, name, yaml, len, diags, &nerr, NULL);
	if (nerr == 0 && tg_policy_finish(p) < 0)
		nerr++;
	if (nerr) {
		tg_policy_free(p);
		return -EINVAL;
	}
	*out = p;
	return 0;
}
