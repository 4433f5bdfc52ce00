/* proxy.c — the egress proxy (proxy.h): one thread, one epoll loop.
 *
 * A connection walks HEADER → (verdict) → CONNECTING → HELLO (CONNECT only:
 * the ClientHello's server name must equal the CONNECT host) → TUNNEL.
 * Plain HTTP requests (absolute-form URI) are rewritten to origin-form with
 * the Host header set from the URI and "Connection: close", so one client
 * connection carries one request to one host. In TUNNEL the bytes move
 * with splice(2) through one pipe per direction: no copy to user space.
 *
 * Bounds: max_conns connection slots (each at most 6 fds and a 20 KiB
 * header buffer that is freed once the tunnel is up); a client past the
 * bound gets 503 at once; a header or ClientHello that takes longer than
 * header_timeout_ms gets 408 and is closed; an upstream that does not
 * answer within connect_timeout_ms gets 504. Nothing blocks the loop:
 * getaddrinfo runs in resolver threads (proxy/dns.c).
 */
#include "proxy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns.h"
#include "base/util.h"

#define BUF_MAX (20 * 1024)           /* request header, or one TLS record + change */
#define HOST_MAX 256
#define TAG_LISTEN UINT64_MAX
#define TAG_WAKE (UINT64_MAX - 1)
#define TAG_DNS (UINT64_MAX - 2)
#define DNS_THREADS 4
#define COPY_CHUNK (64 * 1024)
/* Below this many bytes a direction copies through user space: a short
 * exchange costs fewer syscalls without the two pipes. Past it, splice. */
#define SPLICE_AFTER (256 * 1024)

enum state { ST_FREE, ST_HEADER, ST_RESOLVING, ST_CONNECTING, ST_HELLO, ST_TUNNEL };

struct pipe_dir {
	int r, w;                         /* the pipe */
	size_t held;                      /* bytes in it */
	size_t cap;
	bool eof;                         /* the source said EOF */
	bool shut;                        /* we shut the destination's write side */
};

struct conn {
	enum state st;
	uint64_t gen;                     /* tells a late lookup result from this slot's next use */
	int cfd, ufd;
	unsigned ev_c, ev_u;              /* the epoll interest registered */
	uint64_t deadline;                /* monotonic ns; 0 = none */
	char *buf;                        /* HEADER/HELLO input */
	size_t len;
	char *uout, *cout;                /* pending bytes to upstream / client */
	size_t uout_len, uout_off, cout_len, cout_off;
	struct pipe_dir cu, uc;           /* client→upstream, upstream→client */
	struct addrinfo *ai, *ai_next;    /* addresses to try */
	bool ai_ours;                     /* c->ai is one malloc'd block (the name map) */
	bool is_connect;
	struct tg_net_conn rec;
	bool recorded;
};

struct map_entry {
	char *name;
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

struct tg_proxy {
	struct tg_proxy_opts o;
	int lfd, wfd, epfd, spare_fd;
	unsigned port;
	pthread_t thread;
	bool running;
	struct conn *conns;
	size_t nconns;                    /* slots */
	size_t nfree_hint;
	size_t nlive;
	struct map_entry *map;
	size_t nmap;
	struct tg_dns *dns;               /* lookups off the loop (proxy/dns.h) */
	uint64_t next_gen;
	/* The records, appended by the thread, read after stop. */
	struct tg_net_conn *recs;
	size_t nrecs, recs_dropped;
};

/* ---- records ---- */

static void record(struct tg_proxy *p, struct conn *c)
{
	if (c->recorded || !c->rec.host)
		return;
	c->recorded = true;
	if (p->o.on_conn)
		p->o.on_conn(p->o.ud, &c->rec);
	if (p->nrecs >= TG_REPORT_MAX_DECISIONS) {
		p->recs_dropped++;
		return;
	}
	if ((p->nrecs & (p->nrecs - 1)) == 0) {
		size_t cap = p->nrecs ? 2 * p->nrecs : 1;
		void *nv = realloc(p->recs, cap * sizeof(*p->recs));
		if (!nv) {
			p->recs_dropped++;
			return;
		}
		p->recs = nv;
	}
	p->recs[p->nrecs++] = c->rec;
	memset(&c->rec, 0, sizeof(c->rec));   /* ownership moved */
}

static void rec_deny(struct conn *c, const char *rule, const char *reason)
{
	c->rec.action = TG_ACT_DENY;
	c->rec.rule_id = rule;
	c->rec.reason = reason;
	c->rec.source = NULL;
	c->rec.entry = NULL;
}

static void rec_error(struct conn *c, const char *what, int err)
{
	if (c->rec.error)
		return;
	c->rec.error = err ? tg_asprintf("%s: %s", what, strerror(err)) : tg_strdup(what);
}

/* ---- connection lifecycle ---- */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void conn_close(struct tg_proxy *p, struct conn *c)
{
	record(p, c);
	tg_net_conn_clear(&c->rec);
	close_fd(&c->cfd);
	close_fd(&c->ufd);
	close_fd(&c->cu.r), close_fd(&c->cu.w);
	close_fd(&c->uc.r), close_fd(&c->uc.w);
	free(c->buf);
	free(c->uout);
	free(c->cout);
	if (c->ai && c->ai_ours)
		free(c->ai);
	else if (c->ai)
		freeaddrinfo(c->ai);
	memset(c, 0, sizeof(*c));
	c->st = ST_FREE;
	c->cfd = c->ufd = c->cu.r = c->cu.w = c->uc.r = c->uc.w = -1;
	p->nlive--;
}

static uint64_t tag_of(const struct tg_proxy *p, const struct conn *c, bool upstream)
{
	return ((uint64_t)(c - p->conns) << 1) | (upstream ? 1u : 0u);
}

/* Register the interest a fd needs now; errors close the connection later
 * through the event (EPOLLERR/EPOLLHUP are always reported). */
static void set_events(struct tg_proxy *p, struct conn *c, bool upstream, unsigned want)
{
	int fd = upstream ? c->ufd : c->cfd;
	unsigned *have = upstream ? &c->ev_u : &c->ev_c;
	if (fd < 0 || *have == want + 1)
		return;
	struct epoll_event ev = { .events = want, .data.u64 = tag_of(p, c, upstream) };
	int op = *have ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	if (epoll_ctl(p->epfd, op, fd, &ev) == 0)
		*have = want + 1;
}

/* A short answer to the client, then close: 4xx/5xx with the reason. */
static void reply_close(struct tg_proxy *p, struct conn *c, int code, const char *status,
                        const char *body)
{
	_cleanup_free_ char *msg = tg_asprintf(
		"HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
		"Content-Length: %zu\r\nProxy-Agent: txguard\r\n\r\n%s",
		code, status, strlen(body), body);
	/* The socket buffer is empty at this point: one send fits. */
	if (msg && c->cfd >= 0)
		(void)!send(c->cfd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
	conn_close(p, c);
}

static void deny_reply(struct tg_proxy *p, struct conn *c)
{
	_cleanup_free_ char *body = tg_asprintf(
		"txguard: denied %s:%u by rule %s: %s\n", c->rec.host, c->rec.port, c->rec.rule_id,
		c->rec.reason);
	reply_close(p, c, 403, "Forbidden", body ? body : "txguard: denied\n");
}

/* ---- names → addresses ---- */

static int map_parse(struct tg_proxy *p, const char *spec)
{
	_cleanup_free_ char *copy = tg_strdup(spec);
	char *save = NULL;
	if (!copy)
		return -ENOMEM;
	for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(it, ':');
		if (!colon || colon == it)
			return -EINVAL;
		*colon = '\0';
		struct map_entry e = { 0 };
		struct sockaddr_in *in = (void *)&e.addr;
		struct sockaddr_in6 *in6 = (void *)&e.addr;
		const char *a = colon + 1;
		if (inet_pton(AF_INET, a, &in->sin_addr) == 1)
			in->sin_family = AF_INET, e.addrlen = sizeof(*in);
		else if (inet_pton(AF_INET6, a, &in6->sin6_addr) == 1)
			in6->sin6_family = AF_INET6, e.addrlen = sizeof(*in6);
		else
			return -EINVAL;
		for (char *s = it; *s; s++)
			*s = (char)tolower((unsigned char)*s);
		struct map_entry *v = realloc(p->map, (p->nmap + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->map = v;
		if (!(e.name = tg_strdup(it)))
			return -ENOMEM;
		p->map[p->nmap++] = e;
	}
	return 0;
}

static struct addrinfo *ai_from_map(const struct map_entry *e, unsigned port)
{
	struct addrinfo *ai = calloc(1, sizeof(*ai) + sizeof(struct sockaddr_storage));
	if (!ai)
		return NULL;
	struct sockaddr_storage *ss = (void *)(ai + 1);
	memcpy(ss, &e->addr, e->addrlen);
	((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	ai->ai_family = ss->ss_family;
	ai->ai_socktype = SOCK_STREAM;
	ai->ai_addr = (struct sockaddr *)ss;
	ai->ai_addrlen = e->addrlen;
	return ai;
}

static int resolve(struct tg_proxy *p, const char *host, unsigned port, struct addrinfo **out,
                   bool *ours)
{
	*ours = false;
	for (size_t i = 0; i < p->nmap; i++) {
		if (strcmp(p->map[i].name, host) == 0) {
			*out = ai_from_map(&p->map[i], port);
			*ours = true;
			return *out ? 0 : -ENOMEM;
		}
	}
	return -ESRCH;   /* not in the map: ask the resolver threads */
}

/* An address an allowed name resolves to is still judged by the connect
 * rules: a name pointing at the cloud metadata service is refused. The
 * builtin network-* verdicts are about direct connections, not these. */
static bool addr_allowed(const struct tg_proxy *p, const struct addrinfo *ai)
{
	struct tg_op op = { .kind = TG_OP_CONNECT, .name = "connect" };
	struct tg_verdict v;
	if (ai->ai_addrlen > sizeof(op.addr))
		return false;
	memcpy(&op.addr, ai->ai_addr, ai->ai_addrlen);
	op.addrlen = ai->ai_addrlen;
	tg_policy_decide(p->o.policy, &op, &v);
	if (v.action <= TG_ACT_AUDIT) /* ask cannot be put to an approver from here: refused */
		return true;
	return v.rule_id && strncmp(v.rule_id, "network-", 8) == 0;
}

/* ---- upstream connect ---- */

static void start_tunnel(struct tg_proxy *p, struct conn *c);
static void on_connected(struct tg_proxy *p, struct conn *c);
static void resolved(struct tg_proxy *p, struct conn *c, int rc);

static void try_connect(struct tg_proxy *p, struct conn *c)
{
	int last = ECONNREFUSED;
	close_fd(&c->ufd);
	c->ev_u = 0;
	for (; c->ai_next; c->ai_next = c->ai_next->ai_next) {
		struct addrinfo *a = c->ai_next;
		if (!addr_allowed(p, a)) {
			last = EACCES;
			continue;
		}
		int fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			last = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
			c->ufd = fd;
			c->ai_next = a->ai_next;
			c->st = ST_CONNECTING;
			c->deadline = tg_now_ns() + (uint64_t)p->o.connect_timeout_ms * 1000000u;
			set_events(p, c, true, EPOLLOUT);
			set_events(p, c, false, 0);
			return;
		}
		last = errno;
		close(fd);
	}
	rec_error(c, last == EACCES ? "every address of the host is refused by the connect rules"
	                            : "cannot connect", last == EACCES ? 0 : last);
	reply_close(p, c, 502, "Bad Gateway",
	            last == EACCES ? "txguard: the host's addresses are refused by the connect rules\n"
	                           : "txguard: cannot connect to the host\n");
}

static void on_connect_event(struct tg_proxy *p, struct conn *c)
{
	int err = 0;
	socklen_t l = sizeof(err);
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
		err = errno;
	if (err == 0) {
		on_connected(p, c);
		return;
	}
	if (c->ai_next) {
		try_connect(p, c);
		return;
	}
	rec_error(c, "cannot connect", err);
	reply_close(p, c, 502, "Bad Gateway", "txguard: cannot connect to the host\n");
}

/* ---- the request ---- */

static bool host_ok(const char *s, size_t n)
{
	if (n == 0 || n >= HOST_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr(".-_:", s[i]))
			return false;
	return true;
}

/* "host:port", "[v6]:port" or (default_port) "host" → host (lowercase,
 * no brackets), port. */
static int split_authority(const char *s, size_t n, unsigned default_port, char *host,
                           unsigned *port)
{
	const char *h = s, *ps = NULL;
	size_t hl = n;
	if (n && s[0] == '[') {
		const char *rb = memchr(s, ']', n);
		if (!rb)
			return -EINVAL;
		h = s + 1, hl = (size_t)(rb - h);
		if ((size_t)(rb + 1 - s) < n) {
			if (rb[1] != ':')
				return -EINVAL;
			ps = rb + 2;
		}
	} else {
		const char *colon = memchr(s, ':', n);
		if (colon) {
			ps = colon + 1;
			hl = (size_t)(colon - s);
		}
	}
	if (!host_ok(h, hl))
		return -EINVAL;
	for (size_t i = 0; i < hl; i++)
		host[i] = (char)tolower((unsigned char)h[i]);
	host[hl] = '\0';
	*port = default_port;
	if (ps) {
		size_t pl = (size_t)(s + n - ps);
		unsigned long v = 0;
		if (pl == 0 || pl > 5)
			return -EINVAL;
		for (size_t i = 0; i < pl; i++) {
			if (!isdigit((unsigned char)ps[i]))
				return -EINVAL;
			v = v * 10 + (unsigned long)(ps[i] - '0');
		}
		if (v == 0 || v > 65535)
			return -EINVAL;
		*port = (unsigned)v;
	}
	return *port ? 0 : -EINVAL;
}

static bool header_is(const char *line, size_t n, const char *name)
{
	size_t l = strlen(name);
	return n > l && line[l] == ':' && strncasecmp(line, name, l) == 0;
}

/* The request as the origin server gets it: origin-form target, Host from
 * the URI (a different Host header would reach another site behind the
 * same front: no fronting), hop-by-hop headers dropped, one request per
 * connection. Then whatever body bytes came with the header. */
static char *rewrite_request(const char *method, const char *target, const char *authority,
                             const char *hdr_start, const char *hdr_end, const char *body,
                             size_t body_len, size_t *out_len)
{
	size_t cap = strlen(method) + strlen(target) + strlen(authority) +
	             2 * (size_t)(hdr_end - hdr_start) + body_len + 128;
	char *out = malloc(cap), *w = out;
	if (!out)
		return NULL;
	w += sprintf(w, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, authority);
	for (const char *l = hdr_start; l < hdr_end;) {
		const char *eol = memchr(l, '\n', (size_t)(hdr_end - l));
		size_t n = eol ? (size_t)(eol - l) + 1 : (size_t)(hdr_end - l);
		size_t t = n;
		while (t && (l[t - 1] == '\n' || l[t - 1] == '\r'))
			t--;
		if (t && !header_is(l, t, "host") && !header_is(l, t, "connection") &&
		    !header_is(l, t, "proxy-connection") && !header_is(l, t, "proxy-authorization") &&
		    !header_is(l, t, "keep-alive")) {
			memcpy(w, l, t);
			w += t;
			*w++ = '\r', *w++ = '\n';
		}
		l += n;
	}
	w += sprintf(w, "Connection: close\r\n\r\n");
	memcpy(w, body, body_len);
	w += body_len;
	*out_len = (size_t)(w - out);
	return out;
}

static int set_rec(struct conn *c, const char *method, const char *host, unsigned port)
{
	c->rec.wall_ns = tg_wall_ns();
	c->rec.host = tg_strdup(host);
	c->rec.method = tg_strdup(method);
	c->rec.port = port;
	return c->rec.host && c->rec.method ? 0 : -ENOMEM;
}

/* A complete header is in c->buf[0..hlen): judge it, then connect. */
static void on_request(struct tg_proxy *p, struct conn *c, size_t hlen)
{
	char method[16], host[HOST_MAX];
	unsigned port = 0;
	const char *buf = c->buf;
	const char *eol = memchr(buf, '\n', hlen);
	const char *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || (size_t)(sp1 - buf) >= sizeof(method) || sp1 == buf ||
	    strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		reply_close(p, c, 400, "Bad Request", "txguard: malformed proxy request\n");
		return;
	}
	memcpy(method, buf, (size_t)(sp1 - buf));
	method[sp1 - buf] = '\0';
	const char *uri = sp1 + 1;
	size_t ul = (size_t)(sp2 - uri);
	const char *auth = uri, *rest = uri + ul;
	size_t al = ul;
	c->is_connect = strcmp(method, "CONNECT") == 0;
	if (!c->is_connect) {
		if (ul < 8 || strncasecmp(uri, "http://", 7) != 0) {
			reply_close(p, c, 400, "Bad Request",
			            "txguard: the proxy takes CONNECT host:port or an absolute http:// URI\n");
			return;
		}
		auth = uri + 7;
		rest = auth;
		while (rest < uri + ul && *rest != '/' && *rest != '?' && *rest != '#')
			rest++;
		al = (size_t)(rest - auth);
		if (memchr(auth, '@', al)) {
			reply_close(p, c, 400, "Bad Request", "txguard: credentials in a proxy URI are refused\n");
			return;
		}
	}
	if (split_authority(auth, al, c->is_connect ? 0 : 80, host, &port) < 0) {
		reply_close(p, c, 400, "Bad Request", "txguard: bad host or port in the proxy request\n");
		return;
	}
	if (set_rec(c, method, host, port) < 0) {
		reply_close(p, c, 500, "Internal Error", "txguard: out of memory\n");
		return;
	}
	struct tg_verdict v;
	tg_policy_host_verdict(p->o.policy, host, port, &v, &c->rec.entry);
	c->rec.action = v.action;
	c->rec.rule_id = v.rule_id;
	c->rec.reason = v.reason;
	c->rec.source = v.source;
	if (v.action != TG_ACT_ALLOW) {
		deny_reply(p, c);
		return;
	}
	size_t body_len = c->len - hlen;
	if (c->is_connect) {
		/* Bytes after the CONNECT header are the start of the ClientHello. */
		memmove(c->buf, c->buf + hlen, body_len);
		c->len = body_len;
	} else {
		_cleanup_free_ char *target = NULL;
		size_t tl = (size_t)(uri + ul - rest);
		target = tl && *rest == '/' ? tg_strndup(rest, tl) : tg_asprintf("/%.*s", (int)tl, rest);
		_cleanup_free_ char *authority = tg_strndup(auth, al);
		if (!target || !authority ||
		    !(c->uout = rewrite_request(method, target, authority, eol + 1, buf + hlen - 2,
		                                buf + hlen, body_len, &c->uout_len))) {
			reply_close(p, c, 500, "Internal Error", "txguard: out of memory\n");
			return;
		}
		c->len = 0;
	}
	int rc = resolve(p, host, port, &c->ai, &c->ai_ours);
	if (rc == -ESRCH) {
		rc = tg_dns_submit(p->dns, host, port, (size_t)(c - p->conns), c->gen);
		if (rc == 0) {
			c->st = ST_RESOLVING;
			c->deadline = tg_now_ns() + (uint64_t)p->o.connect_timeout_ms * 1000000u;
			set_events(p, c, false, 0);
			return;
		}
	}
	resolved(p, c, rc);
}

static void resolved(struct tg_proxy *p, struct conn *c, int rc)
{
	if (rc < 0) {
		rec_error(c, rc == -ENOENT ? "the name does not resolve" : "name resolution failed", 0);
		reply_close(p, c, 502, "Bad Gateway", "txguard: cannot resolve the host\n");
		return;
	}
	c->ai_next = c->ai;
	try_connect(p, c);
}

static void on_dns(struct tg_proxy *p)
{
	struct tg_dns_result *r = tg_dns_take(p->dns), *next;
	for (; r; r = next) {
		next = r->next;
		struct conn *c = r->slot < p->nconns ? &p->conns[r->slot] : NULL;
		if (c && c->st == ST_RESOLVING && c->gen == r->gen) {
			c->ai = r->ai;
			c->ai_ours = false;
			r->ai = NULL;
			resolved(p, c, r->err);
		}
		tg_dns_result_free(r);
	}
}

static void on_connected(struct tg_proxy *p, struct conn *c)
{
	if (!c->is_connect) {
		start_tunnel(p, c);
		return;
	}
	static const char ok[] = "HTTP/1.1 200 Connection established\r\nProxy-Agent: txguard\r\n\r\n";
	if (send(c->cfd, ok, sizeof(ok) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(ok) - 1) {
		rec_error(c, "the client went away", errno);
		conn_close(p, c);
		return;
	}
	c->st = ST_HELLO;
	c->deadline = tg_now_ns() + (uint64_t)p->o.header_timeout_ms * 1000000u;
	set_events(p, c, true, 0);
	set_events(p, c, false, EPOLLIN);
	if (c->len)
		start_tunnel(p, c);   /* re-checks the hello below */
}

/* ---- TLS ClientHello ---- */

static unsigned be16(const unsigned char *b)
{
	return (unsigned)b[0] << 8 | b[1];
}

int tg_tls_sni(const unsigned char *buf, size_t len, char *out, size_t outsz)
{
	if (len < 5)
		return -EAGAIN;
	if (buf[0] != 0x16 || buf[1] != 3)
		return -EINVAL;
	size_t rlen = be16(buf + 3);
	if (rlen < 4 || rlen > 16384)
		return -EINVAL;
	if (len < 5 + rlen)
		return -EAGAIN;
	const unsigned char *h = buf + 5, *end = h + rlen;
	if (h[0] != 1)
		return -EINVAL;
	size_t hlen = (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
	if (hlen + 4 > rlen)
		return -EINVAL;   /* split over records: refused (docs/proxy.md) */
	end = h + 4 + hlen;
	const unsigned char *q = h + 4 + 2 + 32;   /* version, random */
	if (q + 1 > end || (q += 1 + q[0]) + 2 > end)          /* session id */
		return -EINVAL;
	if ((q += 2 + be16(q)) + 1 > end)                      /* cipher suites */
		return -EINVAL;
	if ((q += 1 + q[0]) > end)                             /* compression */
		return -EINVAL;
	if (q == end)
		return 0;
	if (q + 2 > end)
		return -EINVAL;
	const unsigned char *ext_end = q + 2 + be16(q);
	if (ext_end > end)
		return -EINVAL;
	for (q += 2; q + 4 <= ext_end;) {
		unsigned type = be16(q), elen = be16(q + 2);
		const unsigned char *e = q + 4;
		if (e + elen > ext_end)
			return -EINVAL;
		if (type == 0) {
			/* server_name_list: type 0 (host_name), length, name */
			if (elen < 5 || be16(e) + 2u > elen || e[2] != 0)
				return -EINVAL;
			size_t nl = be16(e + 3);
			if (nl == 0 || 5 + nl > elen || nl >= outsz)
				return -EINVAL;
			memcpy(out, e + 5, nl);
			out[nl] = '\0';
			if (strlen(out) != nl)
				return -EINVAL;
			return 1;
		}
		q = e + elen;
	}
	return 0;
}

static bool same_host(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la && a[la - 1] == '.')
		la--;
	if (lb && b[lb - 1] == '.')
		lb--;
	return la == lb && strncasecmp(a, b, la) == 0;
}

/* HELLO: is the ClientHello complete, and does it name the CONNECT host? */
static int check_hello(struct tg_proxy *p, struct conn *c)
{
	char sni[HOST_MAX];
	int rc = tg_tls_sni((const unsigned char *)c->buf, c->len, sni, sizeof(sni));
	if (rc == -EAGAIN && c->len < BUF_MAX)
		return -EAGAIN;
	if (rc == 1)
		c->rec.sni = tg_strdup(sni);
	if (rc == 1 && same_host(sni, c->rec.host))
		return 0;
	rec_deny(c, "network-hosts-sni",
	         rc == 1 ? "the TLS server name differs from the CONNECT host (no domain fronting)"
	         : rc == 0 ? "the TLS ClientHello names no server; CONNECT carries TLS to the named host only"
	                   : "CONNECT carries TLS only, and the first bytes were no TLS ClientHello");
	conn_close(p, c);
	return -EACCES;
}

/* ---- the tunnel ---- */

static int pipe_open(struct pipe_dir *d)
{
	int fds[2];
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0)
		return -errno;
	d->r = fds[0], d->w = fds[1];
	int sz = fcntl(d->w, F_GETPIPE_SZ);
	d->cap = sz > 0 ? (size_t)sz : 65536;
	return 0;
}

static void update_tunnel_events(struct tg_proxy *p, struct conn *c)
{
	unsigned ec = 0, eu = 0;
	bool uout = c->uout_off < c->uout_len, cout = c->cout_off < c->cout_len;
	if (!c->cu.eof && c->cu.held < c->cu.cap && !uout)
		ec |= EPOLLIN;
	if (cout || c->uc.held)
		ec |= EPOLLOUT;
	if (!c->uc.eof && c->uc.held < c->uc.cap && !cout)
		eu |= EPOLLIN;
	if (uout || c->cu.held)
		eu |= EPOLLOUT;
	set_events(p, c, false, ec);
	set_events(p, c, true, eu);
}

/* Write pending user-space bytes. 0 when all out, -EAGAIN, or -errno. */
static int flush_out(int fd, char **buf, size_t *len, size_t *off, uint64_t *count)
{
	while (*off < *len) {
		ssize_t n = send(fd, *buf + *off, *len - *off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
		*off += (size_t)n;
		if (count)
			*count += (uint64_t)n;
	}
	free(*buf);
	*buf = NULL;
	*len = *off = 0;
	return 0;
}

/* The first bytes of a direction: recv and send through a stack buffer;
 * what dst does not take at once waits in *pend (flushed first next
 * time). Stops at SPLICE_AFTER bytes. 0, -EAGAIN (dst full) or -errno. */
static int copy_dir(int src, int dst, struct pipe_dir *d, char **pend, size_t *plen,
                    size_t *poff, uint64_t *count)
{
	char buf[COPY_CHUNK];
	while (!d->eof && *count < SPLICE_AFTER) {
		ssize_t n = recv(src, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0) {
			d->eof = true;
			break;
		}
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		ssize_t w = send(dst, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (w < 0)
			w = 0;
		*count += (uint64_t)w;
		if (w < n) {
			if (!(*pend = malloc((size_t)(n - w))))
				return -ENOMEM;
			memcpy(*pend, buf + w, (size_t)(n - w));
			*plen = (size_t)(n - w);
			*poff = 0;
			return -EAGAIN;
		}
	}
	return 0;
}

/* Move what can move from src through d to dst. Returns -errno on a hard
 * error, else 0. */
static int pump(int src, int dst, struct pipe_dir *d, uint64_t *count)
{
	for (;;) {
		bool moved = false;
		if (!d->eof && d->held < d->cap) {
			ssize_t n = splice(src, NULL, d->w, NULL, d->cap - d->held,
			                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n > 0)
				d->held += (size_t)n, moved = true;
			else if (n == 0)
				d->eof = true;
			else if (errno != EAGAIN)
				return -errno;
		}
		if (d->held) {
			ssize_t n = splice(d->r, NULL, dst, NULL, d->held, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n > 0)
				d->held -= (size_t)n, *count += (uint64_t)n, moved = true;
			else if (n < 0 && errno != EAGAIN)
				return -errno;
		}
		if (d->eof && !d->held && !d->shut) {
			shutdown(dst, SHUT_WR);
			d->shut = true;
		}
		if (!moved)
			return 0;
	}
}

/* One direction: pending bytes, then copy (short exchanges) or splice. */
static int step_dir(int src, int dst, struct pipe_dir *d, char **pend, size_t *plen, size_t *poff,
                    uint64_t *count)
{
	int rc = flush_out(dst, pend, plen, poff, count);
	if (rc == 0 && d->r < 0 && *count < SPLICE_AFTER)
		rc = copy_dir(src, dst, d, pend, plen, poff, count);
	if (rc == 0 && !d->eof && d->r < 0 && *count >= SPLICE_AFTER)
		rc = pipe_open(d);
	if (rc == 0 && d->r >= 0)
		return pump(src, dst, d, count);
	if (rc == 0 && d->eof && !d->shut) {
		shutdown(dst, SHUT_WR);
		d->shut = true;
	}
	return rc;
}

static void tunnel_step(struct tg_proxy *p, struct conn *c)
{
	int rc = step_dir(c->cfd, c->ufd, &c->cu, &c->uout, &c->uout_len, &c->uout_off,
	                  &c->rec.bytes_up);
	if (rc == 0 || rc == -EAGAIN) {
		int r2 = step_dir(c->ufd, c->cfd, &c->uc, &c->cout, &c->cout_len, &c->cout_off,
		                  &c->rec.bytes_down);
		if (r2 != -EAGAIN && r2 < 0)
			rc = r2;
	}
	if (rc < 0 && rc != -EAGAIN) {
		/* A reset after the exchange is how many peers end: not an error
		 * worth a line; anything else is kept in the record. */
		if (rc != -ECONNRESET && rc != -EPIPE)
			rec_error(c, "tunnel", -rc);
		conn_close(p, c);
		return;
	}
	if (c->cu.shut && c->uc.shut) {
		conn_close(p, c);
		return;
	}
	update_tunnel_events(p, c);
}

static void start_tunnel(struct tg_proxy *p, struct conn *c)
{
	if (c->is_connect) {
		int rc = check_hello(p, c);
		if (rc == -EAGAIN || rc == -EACCES)
			return;
		/* The hello goes up first, as it came. */
		c->uout = c->buf;
		c->uout_len = c->len;
		c->uout_off = 0;
		c->buf = NULL;
		c->len = 0;
	} else {
		free(c->buf);
		c->buf = NULL;
	}
	/* No pipes yet (step_dir opens them past SPLICE_AFTER); cap 1 means
	 * "room to read" to update_tunnel_events. */
	c->cu.cap = c->uc.cap = 1;
	c->st = ST_TUNNEL;
	c->deadline = 0;
	tunnel_step(p, c);
}

/* ---- events ---- */

/* HEADER and HELLO: read what the client sent into c->buf. */
static int read_client(struct conn *c)
{
	if (!c->buf && !(c->buf = malloc(BUF_MAX)))
		return -ENOMEM;
	if (c->len >= BUF_MAX)
		return -E2BIG;
	ssize_t n = recv(c->cfd, c->buf + c->len, BUF_MAX - c->len, MSG_DONTWAIT);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return errno == EAGAIN ? -EAGAIN : -errno;
	c->len += (size_t)n;
	return 0;
}

static void on_client_input(struct tg_proxy *p, struct conn *c)
{
	int rc = read_client(c);
	if (rc == -EAGAIN)
		return;
	if (c->st == ST_HELLO) {
		if (rc < 0) {
			rec_deny(c, "network-hosts-sni",
			         "CONNECT carries TLS only, and no ClientHello came");
			conn_close(p, c);
			return;
		}
		start_tunnel(p, c);
		return;
	}
	if (rc == -E2BIG) {
		reply_close(p, c, 431, "Request Header Fields Too Large", "txguard: request header too large\n");
		return;
	}
	if (rc < 0) {
		conn_close(p, c);
		return;
	}
	const char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
	if (end)
		on_request(p, c, (size_t)(end + 4 - c->buf));
	else if (c->len >= BUF_MAX)
		reply_close(p, c, 431, "Request Header Fields Too Large", "txguard: request header too large\n");
}

static void on_event(struct tg_proxy *p, uint64_t tag, unsigned events)
{
	struct conn *c = &p->conns[tag >> 1];
	bool upstream = tag & 1;
	if (c->st == ST_FREE)
		return;
	switch (c->st) {
	case ST_HEADER:
	case ST_HELLO:
		if (!upstream)
			on_client_input(p, c);
		else if (events & (EPOLLERR | EPOLLHUP))
			conn_close(p, c);
		break;
	case ST_RESOLVING:
		if (events & (EPOLLERR | EPOLLHUP))
			conn_close(p, c);
		break;
	case ST_CONNECTING:
		if (upstream)
			on_connect_event(p, c);
		else if (events & (EPOLLERR | EPOLLHUP))
			conn_close(p, c);
		break;
	case ST_TUNNEL:
		tunnel_step(p, c);
		break;
	default:
		break;
	}
}

static struct conn *slot_take(struct tg_proxy *p)
{
	for (size_t k = 0; k < p->nconns; k++) {
		size_t i = (p->nfree_hint + k) % p->nconns;
		if (p->conns[i].st == ST_FREE) {
			p->nfree_hint = i + 1;
			return &p->conns[i];
		}
	}
	return NULL;
}

static void on_accept(struct tg_proxy *p)
{
	for (int k = 0; k < 64; k++) {
		int fd = accept4(p->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE) && p->spare_fd >= 0) {
			/* Out of fds: take one back to say no, so the listener
			 * does not stay readable forever. */
			close_fd(&p->spare_fd);
			fd = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0) {
				static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
				(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
				close(fd);
			}
			p->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			continue;
		}
		if (fd < 0)
			return;
		struct conn *c = slot_take(p);
		if (!c) {
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 31\r\n\r\ntxguard: too many connections\r\n";
			(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->cfd = fd;
		c->ufd = c->cu.r = c->cu.w = c->uc.r = c->uc.w = -1;
		c->st = ST_HEADER;
		c->gen = ++p->next_gen;
		c->deadline = tg_now_ns() + (uint64_t)p->o.header_timeout_ms * 1000000u;
		p->nlive++;
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		set_events(p, c, false, EPOLLIN);
	}
}

static void check_deadlines(struct tg_proxy *p, uint64_t now)
{
	for (size_t i = 0; i < p->nconns; i++) {
		struct conn *c = &p->conns[i];
		if (c->st == ST_FREE || !c->deadline || now < c->deadline)
			continue;
		if (c->st == ST_HEADER) {
			reply_close(p, c, 408, "Request Timeout", "txguard: the request header took too long\n");
		} else if (c->st == ST_HELLO) {
			rec_deny(c, "network-hosts-sni", "CONNECT carries TLS only, and no ClientHello came in time");
			conn_close(p, c);
		} else if (c->st == ST_RESOLVING) {
			rec_error(c, "name resolution timed out", 0);
			reply_close(p, c, 504, "Gateway Timeout", "txguard: the host name did not resolve in time\n");
		} else if (c->st == ST_CONNECTING) {
			if (c->ai_next) {
				try_connect(p, c);
			} else {
				rec_error(c, "the host did not answer in time", 0);
				reply_close(p, c, 504, "Gateway Timeout", "txguard: the host did not answer in time\n");
			}
		}
	}
}

static void *proxy_main(void *arg)
{
	struct tg_proxy *p = arg;
	struct epoll_event evs[128];
	uint64_t next_check = 0;
	for (;;) {
		int n = epoll_wait(p->epfd, evs, TG_ARRAY_SIZE(evs), 200);
		if (n < 0 && errno != EINTR)
			break;
		bool stop = false;
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == TAG_WAKE)
				stop = true;
			else if (evs[i].data.u64 == TAG_DNS)
				on_dns(p);
			else if (evs[i].data.u64 == TAG_LISTEN)
				on_accept(p);
			else
				on_event(p, evs[i].data.u64, evs[i].events);
		}
		if (stop)
			break;
		uint64_t now = tg_now_ns();
		if (now >= next_check) {
			check_deadlines(p, now);
			next_check = now + 100000000u;
		}
	}
	for (size_t i = 0; i < p->nconns; i++)
		if (p->conns[i].st != ST_FREE)
			conn_close(p, &p->conns[i]);
	return NULL;
}

/* ---- lifecycle ---- */

/* Each connection may hold 6 fds: raise the soft limit toward the hard one
 * and size the slot table to what fits. */
static size_t fit_conns(unsigned want)
{
	struct rlimit rl;
	size_t n = want ? want : 1024;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rlim_t need = (rlim_t)n * 6 + 256;
		if (rl.rlim_cur < need && rl.rlim_cur != RLIM_INFINITY) {
			rlim_t cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
			if (cur > rl.rlim_cur) {
				rl.rlim_cur = cur;
				setrlimit(RLIMIT_NOFILE, &rl);
			}
		}
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
			n = rl.rlim_cur > 256 + 6 * 16 ? (size_t)(rl.rlim_cur - 256) / 6 : 16;
	}
	return n;
}

static int listen_loopback(unsigned *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1024) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int add_fixed(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int tg_proxy_start(struct tg_proxy **out, const struct tg_proxy_opts *o)
{
	struct tg_proxy *p = calloc(1, sizeof(*p));
	int rc;
	if (!p)
		return -ENOMEM;
	p->o = *o;
	p->lfd = p->wfd = p->epfd = p->spare_fd = -1;
	if (!p->o.header_timeout_ms)
		p->o.header_timeout_ms = 10000;
	if (!p->o.connect_timeout_ms)
		p->o.connect_timeout_ms = 10000;
	if (o->resolve && (rc = map_parse(p, o->resolve)) < 0)
		goto fail;
	p->nconns = fit_conns(o->max_conns);
	rc = -ENOMEM;
	if (!(p->conns = calloc(p->nconns, sizeof(*p->conns))))
		goto fail;
	for (size_t i = 0; i < p->nconns; i++)
		p->conns[i].cfd = p->conns[i].ufd = -1;
	if ((rc = p->lfd = listen_loopback(&p->port)) < 0)
		goto fail;
	rc = -errno;
	if ((p->wfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (p->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		goto fail;
	p->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if ((rc = tg_dns_new(&p->dns, DNS_THREADS)) < 0)
		goto fail;
	if ((rc = add_fixed(p->epfd, p->lfd, TAG_LISTEN)) < 0 ||
	    (rc = add_fixed(p->epfd, p->wfd, TAG_WAKE)) < 0 ||
	    (rc = add_fixed(p->epfd, tg_dns_fd(p->dns), TAG_DNS)) < 0)
		goto fail;
	/* Every signal blocked in the thread: the supervisor's signal handling
	 * stays on its own thread, and a SIGPIPE from splice() to a closed
	 * socket stays pending here instead of killing the supervisor. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&p->thread, NULL, proxy_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0)
		goto fail;
	p->running = true;
	*out = p;
	return 0;
fail:
	tg_proxy_free(p);
	return rc < 0 ? rc : -EIO;
}

unsigned tg_proxy_port(const struct tg_proxy *p)
{
	return p ? p->port : 0;
}

void tg_proxy_stop(struct tg_proxy *p)
{
	if (!p || !p->running)
		return;
	uint64_t one = 1;
	(void)!write(p->wfd, &one, sizeof(one));
	pthread_join(p->thread, NULL);
	p->running = false;
	close_fd(&p->lfd);
}

const struct tg_net_conn *tg_proxy_conns(const struct tg_proxy *p, size_t *n, size_t *dropped)
{
	*n = p ? p->nrecs : 0;
	if (dropped)
		*dropped = p ? p->recs_dropped : 0;
	return p ? p->recs : NULL;
}

void tg_proxy_free(struct tg_proxy *p)
{
	if (!p)
		return;
	tg_proxy_stop(p);
	close_fd(&p->lfd);
	close_fd(&p->wfd);
	close_fd(&p->epfd);
	close_fd(&p->spare_fd);
	tg_dns_release(p->dns);
	free(p->conns);
	for (size_t i = 0; i < p->nrecs; i++)
		tg_net_conn_clear(&p->recs[i]);
	free(p->recs);
	for (size_t i = 0; i < p->nmap; i++)
		free(p->map[i].name);
	free(p->map);
	free(p);
}
