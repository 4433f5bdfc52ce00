/* proxy.h — the egress proxy: HTTP CONNECT (TLS, SNI checked) and plain
 * HTTP forwarding to the hosts `network: hosts:` allows.
 *
 * It runs in a thread of the supervisor (docs/proxy.md says why a thread and
 * not a helper process): one epoll loop, non-blocking sockets, splice(2)
 * through a pipe per direction once a tunnel is up. It listens on
 * 127.0.0.1 on an ephemeral port; tg_proxy_stop() closes every socket, so
 * nothing listens once the run is over (and nothing can outlive the
 * supervisor: a thread dies with its process).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"
#include "policy/policy.h"

struct tg_proxy;

struct tg_proxy_opts {
	const struct tg_policy *policy;  /* judged from the proxy's thread: read-only */
	/* Test and diagnostic name map, "name:addr[,name:addr...]" (like curl
	 * --resolve): names in it are never looked up with getaddrinfo. */
	const char *resolve;
	unsigned max_conns;              /* 0 = 1024 (further bounded by RLIMIT_NOFILE) */
	unsigned header_timeout_ms;      /* request header and TLS ClientHello; 0 = 10 s */
	unsigned connect_timeout_ms;     /* upstream connect; 0 = 10 s */
	/* Called from the proxy's thread when a connection ends (or is
	 * refused): log it, tell the user. May be NULL. */
	void (*on_conn)(void *ud, const struct tg_net_conn *c);
	void *ud;
};

/* Bind 127.0.0.1:0 and start the thread. 0 or -errno (a bad resolve map is
 * -EINVAL). */
int tg_proxy_start(struct tg_proxy **out, const struct tg_proxy_opts *o);
/* The port it listens on (host byte order). */
unsigned tg_proxy_port(const struct tg_proxy *p);
/* Stop the thread and close every socket; the connections still open are
 * recorded as they stand. Idempotent. */
void tg_proxy_stop(struct tg_proxy *p);
/* Every connection recorded (after tg_proxy_stop), at most max_conns'
 * worth of records kept ... see docs; *dropped counts the rest. */
const struct tg_net_conn *tg_proxy_conns(const struct tg_proxy *p, size_t *n, size_t *dropped);
/* Stop if needed, then free. Accepts NULL. */
void tg_proxy_free(struct tg_proxy *p);

/* Parse the server name out of a TLS ClientHello record at buf. Returns 1
 * and the name in out (NUL-terminated), 0 when the hello has no server name,
 * -EAGAIN when more bytes are needed, -EINVAL when it is no ClientHello
 * (or one that spans several records). Exposed for the unit tests. */
int tg_tls_sni(const unsigned char *buf, size_t len, char *out, size_t outsz);
