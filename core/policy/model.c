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

/* ---- one walk of the fields, both ways ----
 *
 * io_policy names every field once, and the same walk writes a model or
 * reads one: a field cannot be written and then forgotten by the reader.
 * Each io_* takes the value to write and returns the value read (writing,
 * it returns what it was given), so `x = io_u32(io, x)` is a no-op one way
 * and an assignment the other. */

struct io {
	bool reading, bad;
	char *buf;      /* writing: the entry so far */
	size_t len, cap;
	char *p, *end;  /* reading: what is left of the payload */
};

static void put(struct io *io, const void *p, size_t n)
{
	if (io->bad)
		return;
	if (io->len + n > io->cap) {
		size_t cap = io->cap ? io->cap * 2 : 64 * 1024;
		while (cap < io->len + n)
			cap *= 2;
		char *b = realloc(io->buf, cap);
		if (!b) {
			io->bad = true;
			return;
		}
		io->buf = b;
		io->cap = cap;
	}
	memcpy(io->buf + io->len, p, n);
	io->len += n;
}

static void take(struct io *io, void *out, size_t n)
{
	if (io->bad || (size_t)(io->end - io->p) < n) {
		io->bad = true;
		memset(out, 0, n);
		return;
	}
	memcpy(out, io->p, n);
	io->p += n;
}

static void io_bytes(struct io *io, void *p, size_t n)
{
	if (io->reading)
		take(io, p, n);
	else
		put(io, p, n);
}

/* Reading, a value the writer could not have written is a damaged entry. */
static void io_check(struct io *io, bool sound)
{
	if (io->reading && !sound)
		io->bad = true;
}

static uint32_t io_u32(struct io *io, uint32_t v)
{
	io_bytes(io, &v, sizeof(v));
	return v;
}

static uint64_t io_u64(struct io *io, uint64_t v)
{
	io_bytes(io, &v, sizeof(v));
	return v;
}

static bool io_bool(struct io *io, bool v)
{
	uint32_t u = io_u32(io, v);
	io_check(io, u <= 1);
	return u == 1;
}

static struct tg_portrange io_ports(struct io *io, struct tg_portrange pr)
{
	uint32_t v = io_u32(io, (uint32_t)pr.lo << 16 | pr.hi);
	return (struct tg_portrange){ .lo = (uint16_t)(v >> 16), .hi = (uint16_t)v };
}

/* A string: its length (M_NONE for none), its bytes and its NUL. Read in
 * place: the model's strings point into its entry. `needed`: none is a
 * damaged entry. */
static char *io_str(struct io *io, char *s, bool needed)
{
	if (!io->reading) {
		size_t n = s ? strlen(s) : 0;
		if (n >= M_NONE)
			io->bad = true;
		io_u32(io, s ? (uint32_t)n : M_NONE);
		if (s)
			put(io, s, n + 1);
		return s;
	}
	uint32_t n = io_u32(io, 0);
	if (io->bad || n == M_NONE) {
		io_check(io, !needed);
		return NULL;
	}
	if ((size_t)(io->end - io->p) <= n || io->p[n] != '\0' || memchr(io->p, '\0', n)) {
		io->bad = true;
		return NULL;
	}
	char *r = io->p;
	io->p += n + 1;
	return r;
}

/* An array's count, and whether it exists at all (M_NONE: NULL). Reading,
 * the array is allocated (zeroed, one spare slot) for n elements of
 * `size` bytes, each of which takes at least `least` bytes of the payload:
 * a count the bytes left cannot hold is a lie, caught before allocating. */
static void *io_array(struct io *io, void *v, size_t *n, size_t size, size_t least)
{
	if (!io->reading) {
		if (*n >= M_NONE)
			io->bad = true;
		io_u32(io, v ? (uint32_t)*n : M_NONE);
		return v;
	}
	uint32_t c = io_u32(io, 0);
	*n = 0;
	if (io->bad || c == M_NONE)
		return NULL;
	if ((size_t)(io->end - io->p) / least < c) {
		io->bad = true;
		return NULL;
	}
	void *a = calloc((size_t)c + 1, size);
	if (!a) {
		io->bad = true;
		return NULL;
	}
	*n = c;
	return a;
}

static void io_list(struct io *io, struct tg_strlist *l)
{
	/* n + 1 slots: the lists are NULL-terminated, as tg_strlist_push
	 * makes them. Each string takes its 4-byte length at least. */
	l->v = io_array(io, l->v, &l->n, sizeof(*l->v), 4);
	for (size_t i = 0; i < l->n; i++)
		if (!(l->v[i] = io_str(io, l->v[i], true))) {
			l->n = i; /* a damaged entry: the list ends here */
			return;
		}
}

static void io_examples(struct io *io, struct tg_example **e, size_t *n)
{
	*e = io_array(io, *e, n, sizeof(**e), 12);
	for (size_t i = 0; i < *n && !io->bad; i++) {
		(*e)[i].text = io_str(io, (*e)[i].text, true);
		(*e)[i].line = io_u32(io, (*e)[i].line);
		(*e)[i].col = io_u32(io, (*e)[i].col);
	}
}

static void io_rule(struct io *io, struct tg_rule *u)
{
	u->id = io_str(io, u->id, true);
	u->reason = io_str(io, u->reason, false);
	uint32_t action = io_u32(io, u->action);
	io_check(io, action <= TG_ACT_KILL);
	u->action = (enum tg_action)action;
	u->err = (int)io_u32(io, (uint32_t)u->err);
	uint32_t kind = io_u32(io, u->kind);
	io_check(io, kind <= TG_RULE_PROCESS);
	u->kind = (enum tg_rule_kind)kind;
	u->file = io_str(io, u->file, false);
	u->line = io_u32(io, u->line);
	u->col = io_u32(io, u->col);
	u->source = io_str(io, u->source, false);
	u->overrides = io_str(io, u->overrides, false);
	u->disabled_by = io_str(io, u->disabled_by, false);

	struct tg_exec_match *x = &u->exec;
	io_list(io, &x->program);
	io_list(io, &x->value_flags);
	io_list(io, &x->subcommand);
	x->flags = io_array(io, x->flags, &x->nflags, sizeof(*x->flags), 4);
	for (size_t i = 0; i < x->nflags && !io->bad; i++)
		io_list(io, &x->flags[i].alts);
	io_list(io, &x->any_flags);
	io_list(io, &x->not_flags);
	io_list(io, &x->args);
	io_list(io, &x->script);
	io_list(io, &x->words);
	x->outside_workspace = io_bool(io, x->outside_workspace);

	io_list(io, &u->path.match);
	u->path.ops = io_u32(io, u->path.ops);
	io_list(io, &u->syscalls);

	struct tg_connect_match *c = &u->conn;
	io_list(io, &c->unix_paths);
	c->cidr = io_array(io, c->cidr, &c->ncidr, sizeof(*c->cidr), 24);
	for (size_t i = 0; i < c->ncidr && !io->bad; i++) {
		struct tg_cidr *n = &c->cidr[i];
		n->family = (int)io_u32(io, (uint32_t)n->family);
		io_bytes(io, n->addr, sizeof(n->addr));
		n->prefix = io_u32(io, n->prefix);
		/* The matcher compares prefix / 8 bytes of addr. */
		io_check(io, (n->family == AF_INET && n->prefix <= 32) || (n->family == AF_INET6 && n->prefix <= 128));
	}
	c->ports = io_array(io, c->ports, &c->nports, sizeof(*c->ports), 4);
	for (size_t i = 0; i < c->nports && !io->bad; i++)
		c->ports[i] = io_ports(io, c->ports[i]);
	c->loopback = io_bool(io, c->loopback);
	c->any_inet = io_bool(io, c->any_inet);

	struct tg_process_match *pm = &u->proc;
	io_list(io, &pm->program);
	pm->uids = io_array(io, pm->uids, &pm->nuids, sizeof(*pm->uids), 8);
	for (size_t i = 0; i < pm->nuids && !io->bad; i++)
		pm->uids[i] = (long)io_u64(io, (uint64_t)pm->uids[i]);
	io_list(io, &pm->cgroup);

	io_examples(io, &u->match, &u->nmatch);
	io_examples(io, &u->not_match, &u->nnot_match);
}

static void io_policy(struct io *io, struct tg_policy *p)
{
	io_list(io, &p->files);
	/* A rule takes far more than 4 bytes; 4 bounds the count safely. */
	p->rules = io_array(io, p->rules, &p->nrules, sizeof(*p->rules), 4);
	for (size_t i = 0; i < p->nrules && !io->bad; i++) {
		if (io->reading) {
			/* Its strings will be the entry's (policy_int.h). A rule
			 * not made stays NULL: tg_policy_free skips it. */
			if (!(p->rules[i] = calloc(1, sizeof(*p->rules[i])))) {
				io->bad = true;
				break;
			}
			p->rules[i]->borrowed = true;
		}
		io_rule(io, p->rules[i]);
	}
	io_list(io, &p->writable);
	io_list(io, &p->deny_read);
	io_list(io, &p->create);
	p->max_procs = (unsigned long)io_u64(io, p->max_procs);
	p->network_deny = io_bool(io, p->network_deny);
	p->hosts = io_array(io, p->hosts, &p->nhosts, sizeof(*p->hosts), 16);
	for (size_t i = 0; i < p->nhosts && !io->bad; i++) {
		struct tg_host_entry *h = &p->hosts[i];
		h->pattern = io_str(io, h->pattern, true);
		h->ports = io_ports(io, h->ports);
		h->deny = io_bool(io, h->deny);
		h->text = io_str(io, h->text, false);
		h->source = io_str(io, h->source, false);
	}
	p->host_ex = io_array(io, p->host_ex, &p->nhost_ex, sizeof(*p->host_ex), 20);
	for (size_t i = 0; i < p->nhost_ex && !io->bad; i++) {
		struct tg_host_example *e = &p->host_ex[i];
		e->text = io_str(io, e->text, true);
		e->file = io_str(io, e->file, false);
		e->line = io_u32(io, e->line);
		e->col = io_u32(io, e->col);
		e->allowed = io_bool(io, e->allowed);
	}
}

int tg_policy_model_encode(const struct tg_policy *p, uint64_t key, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	/* Only a model fresh from the walk: the context is the caller's. */
	if (p->workspace || p->home || p->state_dir || p->cache_dir || p->writable_exp.n || p->deny_read_exp.n)
		return -EINVAL;
	struct io io = { .reading = false };
	struct mhdr h = { .key = key };
	memcpy(h.magic, M_MAGIC, sizeof(h.magic));
	put(&io, &h, sizeof(h));
	/* Writing, the walk only reads the model (each field is assigned
	 * the value it already has). */
	io_policy(&io, (struct tg_policy *)p);
	if (io.bad) {
		free(io.buf);
		return -ENOMEM;
	}
	h.len = io.len - sizeof(h);
	h.sum = ytree_hash(io.buf + sizeof(h), h.len);
	memcpy(io.buf, &h, sizeof(h));
	*buf = io.buf;
	*len = io.len;
	return 0;
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
	struct io io = { .reading = true, .p = buf + sizeof(h), .end = buf + len };
	io_policy(&io, p);
	if (io.bad || io.p != io.end) {
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
