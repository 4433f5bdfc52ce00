/* model.c — the loaded policy's model, kept whole in the cache (see
 * policy_int.h, tg_policy_model_*).
 *
 * The tree cache (ytree.c) spares a start the YAML parse, but not reading
 * and hashing every file, nor the schema walk that turns 15 trees of
 * ~3,400 nodes into rules: together about 1.2 ms of an 8 ms start. The
 * walk's result depends on this binary's code and the files' names and
 * texts only. It is stored under a key of the binary and of each file's
 * name and stat (load.c, model_key), and a start whose files are as they
 * were reads it back without opening them.
 *
 * One file per policy set:
 *   header (magic, key, payload length, payload checksum) | payload
 * The payload is the model field by field: integers of a fixed width in
 * this machine's byte order (the cache is this machine's), strings as a
 * length (UINT32_MAX for none), their bytes and a NUL. The strings are
 * read in place: the decoded model points into the entry, which it owns
 * (tg_policy.arena), so a start copies none of them. The reader trusts
 * nothing: every count is checked against the bytes left before anything
 * is allocated for it, every string must end where its length says, and
 * anything off is a miss. What tg_policy_set_ctx and tg_policy_finish add
 * is not stored: they run on the read model as on a walked one.
 */
#include "policy_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/cache.h"
#include "base/util.h"
#include "ytree.h"

#define M_MAGIC "TGPMOD01"
#define M_MAX_ENTRY (16u << 20)
#define M_MAX_ENTRIES 128 /* as the trees: the cache dir's bound */
#define M_NONE UINT32_MAX

struct mhdr {
	char magic[8];
	uint64_t key;
	uint64_t len; /* of the payload */
	uint64_t sum; /* ytree_hash of the payload */
};

/* ---- writing ---- */

struct wr {
	char *buf;
	size_t len, cap;
	bool bad;
};

static void put(struct wr *w, const void *p, size_t n)
{
	if (w->bad)
		return;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64 * 1024;
		while (cap < w->len + n)
			cap *= 2;
		char *b = realloc(w->buf, cap);
		if (!b) {
			w->bad = true;
			return;
		}
		w->buf = b;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void put_u32(struct wr *w, uint32_t v)
{
	put(w, &v, sizeof(v));
}

static void put_u64(struct wr *w, uint64_t v)
{
	put(w, &v, sizeof(v));
}

static void put_str(struct wr *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n >= M_NONE) {
		w->bad = true;
		return;
	}
	put_u32(w, s ? (uint32_t)n : M_NONE);
	if (s)
		put(w, s, n + 1); /* with its NUL: the model reads it in place */
}

/* A count, and whether the array behind it exists at all. */
static void put_count(struct wr *w, size_t n, const void *v)
{
	if (n >= M_NONE) {
		w->bad = true;
		return;
	}
	put_u32(w, v ? (uint32_t)n : M_NONE);
}

static void put_list(struct wr *w, const struct tg_strlist *l)
{
	put_count(w, l->n, l->v);
	for (size_t i = 0; i < l->n; i++)
		put_str(w, l->v[i]);
}

static void put_examples(struct wr *w, const struct tg_example *e, size_t n)
{
	put_count(w, n, e);
	for (size_t i = 0; i < n; i++) {
		put_str(w, e[i].text);
		put_u32(w, e[i].line);
		put_u32(w, e[i].col);
	}
}

static void put_rule(struct wr *w, const struct tg_rule *r)
{
	put_str(w, r->id);
	put_str(w, r->reason);
	put_u32(w, (uint32_t)r->action);
	put_u32(w, (uint32_t)r->err);
	put_u32(w, (uint32_t)r->kind);
	put_str(w, r->file);
	put_u32(w, r->line);
	put_u32(w, r->col);
	put_str(w, r->source);
	put_str(w, r->overrides);
	put_str(w, r->disabled_by);

	const struct tg_exec_match *x = &r->exec;
	put_list(w, &x->program);
	put_list(w, &x->value_flags);
	put_list(w, &x->subcommand);
	put_count(w, x->nflags, x->flags);
	for (size_t i = 0; i < x->nflags; i++)
		put_list(w, &x->flags[i].alts);
	put_list(w, &x->any_flags);
	put_list(w, &x->not_flags);
	put_list(w, &x->args);
	put_list(w, &x->script);
	put_list(w, &x->words);
	put_u32(w, x->outside_workspace);

	put_list(w, &r->path.match);
	put_u32(w, r->path.ops);
	put_list(w, &r->syscalls);

	const struct tg_connect_match *c = &r->conn;
	put_list(w, &c->unix_paths);
	put_count(w, c->ncidr, c->cidr);
	for (size_t i = 0; i < c->ncidr; i++) {
		put_u32(w, (uint32_t)c->cidr[i].family);
		put(w, c->cidr[i].addr, sizeof(c->cidr[i].addr));
		put_u32(w, c->cidr[i].prefix);
	}
	put_count(w, c->nports, c->ports);
	for (size_t i = 0; i < c->nports; i++)
		put_u32(w, (uint32_t)c->ports[i].lo << 16 | c->ports[i].hi);
	put_u32(w, c->loopback);
	put_u32(w, c->any_inet);

	const struct tg_process_match *pm = &r->proc;
	put_list(w, &pm->program);
	put_count(w, pm->nuids, pm->uids);
	for (size_t i = 0; i < pm->nuids; i++)
		put_u64(w, (uint64_t)pm->uids[i]);
	put_list(w, &pm->cgroup);

	put_examples(w, r->match, r->nmatch);
	put_examples(w, r->not_match, r->nnot_match);
}

static void put_policy(struct wr *w, const struct tg_policy *p)
{
	put_list(w, &p->files);
	put_count(w, p->nrules, p->rules);
	for (size_t i = 0; i < p->nrules; i++)
		put_rule(w, p->rules[i]);
	put_list(w, &p->writable);
	put_list(w, &p->deny_read);
	put_list(w, &p->create);
	put_u64(w, p->max_procs);
	put_u32(w, p->network_deny);
	put_count(w, p->nhosts, p->hosts);
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct tg_host_entry *h = &p->hosts[i];
		put_str(w, h->pattern);
		put_u32(w, (uint32_t)h->ports.lo << 16 | h->ports.hi);
		put_u32(w, h->deny);
		put_str(w, h->text);
		put_str(w, h->source);
	}
	put_count(w, p->nhost_ex, p->host_ex);
	for (size_t i = 0; i < p->nhost_ex; i++) {
		const struct tg_host_example *e = &p->host_ex[i];
		put_str(w, e->text);
		put_str(w, e->file);
		put_u32(w, e->line);
		put_u32(w, e->col);
		put_u32(w, e->allowed);
	}
}

int tg_policy_model_encode(const struct tg_policy *p, uint64_t key, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	/* Only a model fresh from the walk: the context is the caller's. */
	if (p->workspace || p->home || p->state_dir || p->cache_dir || p->writable_exp.n || p->deny_read_exp.n)
		return -EINVAL;
	struct wr w = { 0 };
	struct mhdr h = { .key = key };
	memcpy(h.magic, M_MAGIC, sizeof(h.magic));
	put(&w, &h, sizeof(h));
	put_policy(&w, p);
	if (w.bad) {
		free(w.buf);
		return -ENOMEM;
	}
	h.len = w.len - sizeof(h);
	h.sum = ytree_hash(w.buf + sizeof(h), h.len);
	memcpy(w.buf, &h, sizeof(h));
	*buf = w.buf;
	*len = w.len;
	return 0;
}

/* ---- reading ---- */

struct rd {
	char *p, *end;
	bool bad;
};

static bool take(struct rd *r, void *out, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		memset(out, 0, n);
		return false;
	}
	memcpy(out, r->p, n);
	r->p += n;
	return true;
}

static uint32_t get_u32(struct rd *r)
{
	uint32_t v;
	take(r, &v, sizeof(v));
	return v;
}

static uint64_t get_u64(struct rd *r)
{
	uint64_t v;
	take(r, &v, sizeof(v));
	return v;
}

static bool get_bool(struct rd *r)
{
	uint32_t v = get_u32(r);
	if (v > 1)
		r->bad = true;
	return v == 1;
}

/* A string in place: the model's strings point into its entry. */
static char *get_str(struct rd *r)
{
	uint32_t n = get_u32(r);
	if (r->bad || n == M_NONE)
		return NULL;
	if ((size_t)(r->end - r->p) <= n || r->p[n] != '\0' || memchr(r->p, '\0', n)) {
		r->bad = true;
		return NULL;
	}
	char *s = r->p;
	r->p += n + 1;
	return s;
}

/* A string that must be there. */
static char *get_some_str(struct rd *r)
{
	char *s = get_str(r);
	if (!s)
		r->bad = true;
	return s;
}

/* An array of n elements of `size` bytes, each taking at least `least`
 * bytes of the payload: a count the bytes left cannot hold is a lie. NULL
 * with *n 0 when the writer had none. */
static void *get_array(struct rd *r, size_t *n, size_t size, size_t least)
{
	uint32_t c = get_u32(r);
	*n = 0;
	if (r->bad || c == M_NONE)
		return NULL;
	if ((size_t)(r->end - r->p) / least < c) {
		r->bad = true;
		return NULL;
	}
	void *v = calloc((size_t)c + 1, size);
	if (!v) {
		r->bad = true;
		return NULL;
	}
	*n = c;
	return v;
}

static void get_list(struct rd *r, struct tg_strlist *l)
{
	/* n + 1 slots: the lists are NULL-terminated, as tg_strlist_push
	 * makes them. Each string takes its 4-byte length at least. */
	l->v = get_array(r, &l->n, sizeof(*l->v), 4);
	for (size_t i = 0; i < l->n; i++)
		if (!(l->v[i] = get_some_str(r))) {
			l->n = i; /* what was read is freed with the list */
			return;
		}
}

static void get_examples(struct rd *r, struct tg_example **e, size_t *n)
{
	*e = get_array(r, n, sizeof(**e), 12);
	for (size_t i = 0; i < *n && !r->bad; i++) {
		(*e)[i].text = get_some_str(r);
		(*e)[i].line = get_u32(r);
		(*e)[i].col = get_u32(r);
	}
}

static void get_ports(struct rd *r, struct tg_portrange *pr)
{
	uint32_t v = get_u32(r);
	pr->lo = (uint16_t)(v >> 16);
	pr->hi = (uint16_t)v;
}

static struct tg_rule *get_rule(struct rd *r)
{
	struct tg_rule *u = calloc(1, sizeof(*u));
	if (!u) {
		r->bad = true;
		return NULL;
	}
	u->borrowed = true;
	u->id = get_some_str(r);
	u->reason = get_str(r);
	uint32_t action = get_u32(r);
	if (action > TG_ACT_KILL)
		r->bad = true;
	u->action = (enum tg_action)action;
	u->err = (int)get_u32(r);
	uint32_t kind = get_u32(r);
	if (kind > TG_RULE_PROCESS)
		r->bad = true;
	u->kind = (enum tg_rule_kind)kind;
	u->file = get_str(r);
	u->line = get_u32(r);
	u->col = get_u32(r);
	u->source = get_str(r);
	u->overrides = get_str(r);
	u->disabled_by = get_str(r);

	struct tg_exec_match *x = &u->exec;
	get_list(r, &x->program);
	get_list(r, &x->value_flags);
	get_list(r, &x->subcommand);
	x->flags = get_array(r, &x->nflags, sizeof(*x->flags), 4);
	for (size_t i = 0; i < x->nflags && !r->bad; i++)
		get_list(r, &x->flags[i].alts);
	get_list(r, &x->any_flags);
	get_list(r, &x->not_flags);
	get_list(r, &x->args);
	get_list(r, &x->script);
	get_list(r, &x->words);
	x->outside_workspace = get_bool(r);

	get_list(r, &u->path.match);
	u->path.ops = get_u32(r);
	get_list(r, &u->syscalls);

	struct tg_connect_match *c = &u->conn;
	get_list(r, &c->unix_paths);
	c->cidr = get_array(r, &c->ncidr, sizeof(*c->cidr), 24);
	for (size_t i = 0; i < c->ncidr && !r->bad; i++) {
		struct tg_cidr *n = &c->cidr[i];
		n->family = (int)get_u32(r);
		take(r, n->addr, sizeof(n->addr));
		n->prefix = get_u32(r);
		/* The matcher compares prefix / 8 bytes of addr. */
		if (!((n->family == AF_INET && n->prefix <= 32) || (n->family == AF_INET6 && n->prefix <= 128)))
			r->bad = true;
	}
	c->ports = get_array(r, &c->nports, sizeof(*c->ports), 4);
	for (size_t i = 0; i < c->nports && !r->bad; i++)
		get_ports(r, &c->ports[i]);
	c->loopback = get_bool(r);
	c->any_inet = get_bool(r);

	struct tg_process_match *pm = &u->proc;
	get_list(r, &pm->program);
	pm->uids = get_array(r, &pm->nuids, sizeof(*pm->uids), 8);
	for (size_t i = 0; i < pm->nuids && !r->bad; i++)
		pm->uids[i] = (long)get_u64(r);
	get_list(r, &pm->cgroup);

	get_examples(r, &u->match, &u->nmatch);
	get_examples(r, &u->not_match, &u->nnot_match);
	return u;
}

static void get_policy(struct rd *r, struct tg_policy *p)
{
	get_list(r, &p->files);
	/* A rule takes far more than 4 bytes; 4 bounds the count safely. */
	p->rules = get_array(r, &p->nrules, sizeof(*p->rules), 4);
	for (size_t i = 0; i < p->nrules; i++)
		if (r->bad || !(p->rules[i] = get_rule(r))) {
			p->nrules = i + (p->rules[i] != NULL); /* freed with p */
			r->bad = true;
			break;
		}
	get_list(r, &p->writable);
	get_list(r, &p->deny_read);
	get_list(r, &p->create);
	p->max_procs = (unsigned long)get_u64(r);
	p->network_deny = get_bool(r);
	p->hosts = get_array(r, &p->nhosts, sizeof(*p->hosts), 16);
	for (size_t i = 0; i < p->nhosts && !r->bad; i++) {
		struct tg_host_entry *h = &p->hosts[i];
		h->pattern = get_some_str(r);
		get_ports(r, &h->ports);
		h->deny = get_bool(r);
		h->text = get_str(r);
		h->source = get_str(r);
	}
	p->host_ex = get_array(r, &p->nhost_ex, sizeof(*p->host_ex), 20);
	for (size_t i = 0; i < p->nhost_ex && !r->bad; i++) {
		struct tg_host_example *e = &p->host_ex[i];
		e->text = get_some_str(r);
		e->file = get_str(r);
		e->line = get_u32(r);
		e->col = get_u32(r);
		e->allowed = get_bool(r);
	}
}

int tg_policy_model_decode(char *buf, size_t len, uint64_t key, struct tg_policy **out)
{
	struct mhdr h;
	*out = NULL;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, M_MAGIC, sizeof(h.magic)) != 0 || h.key != key || h.len != len - sizeof(h) ||
	    h.sum != ytree_hash(buf + sizeof(h), h.len))
		return 0;
	struct tg_policy *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->borrowed = true;
	struct rd r = { .p = buf + sizeof(h), .end = buf + len };
	get_policy(&r, p);
	if (r.bad || r.p != r.end) {
		tg_policy_free(p); /* its strings are buf's: not freed */
		return 0;
	}
	p->arena = buf;
	*out = p;
	return 1;
}

/* ---- the directory (base/cache.h) ---- */

static void entry_name(char *buf, size_t size, uint64_t key)
{
	snprintf(buf, size, "%016llx.model", (unsigned long long)key);
}

int tg_policy_model_load(const char *dir, size_t trusted, uint64_t key, struct tg_policy **out)
{
	char name[64];
	*out = NULL;
	entry_name(name, sizeof(name), key);
	_cleanup_free_ char *buf = NULL;
	size_t n = 0;
	int r = tg_cache_get(dir, trusted, name, M_MAX_ENTRY, &buf, &n);
	if (r <= 0)
		return r;
	r = tg_policy_model_decode(buf, n, key, out);
	if (r > 0)
		buf = NULL; /* the model's now */
	return r;
}

int tg_policy_model_store(const char *dir, size_t trusted, uint64_t key, const struct tg_policy *p)
{
	char name[64];
	_cleanup_free_ char *buf = NULL;
	size_t n = 0;
	entry_name(name, sizeof(name), key);
	int r = tg_policy_model_encode(p, key, &buf, &n);
	if (r < 0)
		return r;
	return tg_cache_put(dir, trusted, name, buf, n, M_MAX_ENTRIES);
}
