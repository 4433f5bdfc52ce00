/* proxy/dns.h — name resolution for the egress proxy, off its event loop.
 *
 * getaddrinfo() blocks for as long as the resolver takes (resolv.conf:
 * timeout × attempts). A few detached worker threads run it; results come
 * back through an eventfd the proxy's loop polls. The pool is reference
 * counted: tg_dns_release() returns at once, and the last worker to finish
 * frees it, so a hung lookup never holds up the end of the run.
 * Internal to core/proxy/proxy.c.
 */
#pragma once

#include <netdb.h>
#include <stddef.h>
#include <stdint.h>

struct tg_dns;

struct tg_dns_result {
	struct tg_dns_result *next;
	size_t slot;                 /* the caller's tags, returned as given */
	uint64_t gen;
	struct addrinfo *ai;         /* owned; NULL on error */
	int err;                     /* 0, -ENOENT (no such name), -EHOSTUNREACH (lookup failed) */
};

/* A pool of up to nthreads workers, started on demand. 0 or -errno. */
int tg_dns_new(struct tg_dns **out, unsigned nthreads);
/* The eventfd that becomes readable when results wait. */
int tg_dns_fd(const struct tg_dns *d);
/* Queue a lookup of host:port (SOCK_STREAM). 0 or -errno. */
int tg_dns_submit(struct tg_dns *d, const char *host, unsigned port, size_t slot, uint64_t gen);
/* Every finished lookup, oldest first; the caller frees each. */
struct tg_dns_result *tg_dns_take(struct tg_dns *d);
void tg_dns_result_free(struct tg_dns_result *r);
/* Drop the caller's reference: pending lookups are forgotten, running ones
 * are freed when they return. Accepts NULL. */
void tg_dns_release(struct tg_dns *d);
