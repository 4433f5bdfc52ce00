/* proxy/dns.c — see proxy/dns.h. */
#include "dns.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct req {
	struct req *next;
	char *host;
	char port[8];
	size_t slot;
	uint64_t gen;
};

struct tg_dns {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct req *q, *q_tail;              /* waiting lookups */
	struct tg_dns_result *done, *done_tail;
	int efd;
	unsigned nthreads, max_threads, idle;
	unsigned refs;                       /* the owner + each worker */
	bool quit;
};

static void req_free(struct req *r)
{
	free(r->host);
	free(r);
}

/* Called with d->mu held; unlocks. */
static void unref_unlock(struct tg_dns *d)
{
	bool last = --d->refs == 0;
	pthread_mutex_unlock(&d->mu);
	if (!last)
		return;
	for (struct req *r = d->q, *n; r; r = n)
		n = r->next, req_free(r);
	for (struct tg_dns_result *r = d->done, *n; r; r = n)
		n = r->next, tg_dns_result_free(r);
	close(d->efd);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

static struct tg_dns_result *lookup(const struct req *r)
{
	struct tg_dns_result *res = calloc(1, sizeof(*res));
	if (!res)
		return NULL;
	res->slot = r->slot;
	res->gen = r->gen;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
	int rc = getaddrinfo(r->host, r->port, &hints, &res->ai);
	if (rc != 0) {
		res->ai = NULL;
		res->err = rc == EAI_NONAME || rc == EAI_NODATA ? -ENOENT : -EHOSTUNREACH;
	}
	return res;
}

static void *worker(void *arg)
{
	struct tg_dns *d = arg;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		while (!d->q && !d->quit) {
			d->idle++;
			pthread_cond_wait(&d->cv, &d->mu);
			d->idle--;
		}
		if (d->quit)
			break;
		struct req *r = d->q;
		d->q = r->next;
		if (!d->q)
			d->q_tail = NULL;
		pthread_mutex_unlock(&d->mu);
		struct tg_dns_result *res = lookup(r);
		req_free(r);
		pthread_mutex_lock(&d->mu);
		if (!res)
			continue;   /* out of memory: the proxy's deadline answers the client */
		if (d->quit) {
			tg_dns_result_free(res);
			break;
		}
		if (d->done_tail)
			d->done_tail->next = res;
		else
			d->done = res;
		d->done_tail = res;
		uint64_t one = 1;
		(void)!write(d->efd, &one, sizeof(one));
	}
	d->nthreads--;
	unref_unlock(d);
	return NULL;
}

int tg_dns_new(struct tg_dns **out, unsigned nthreads)
{
	struct tg_dns *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->efd < 0) {
		int e = errno;
		free(d);
		return -e;
	}
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	d->max_threads = nthreads ? nthreads : 1;
	d->refs = 1;
	*out = d;
	return 0;
}

int tg_dns_fd(const struct tg_dns *d)
{
	return d->efd;
}

int tg_dns_submit(struct tg_dns *d, const char *host, unsigned port, size_t slot, uint64_t gen)
{
	struct req *r = calloc(1, sizeof(*r));
	if (!r || !(r->host = strdup(host))) {
		free(r);
		return -ENOMEM;
	}
	snprintf(r->port, sizeof(r->port), "%u", port);
	r->slot = slot;
	r->gen = gen;
	pthread_mutex_lock(&d->mu);
	if (d->q_tail)
		d->q_tail->next = r;
	else
		d->q = r;
	d->q_tail = r;
	/* Threads are created by the caller's thread and inherit its signal
	 * mask (the proxy's: every signal blocked). Detached: nobody joins. */
	if (d->idle == 0 && d->nthreads < d->max_threads) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &a, worker, d) == 0)
			d->nthreads++, d->refs++;
		pthread_attr_destroy(&a);
	}
	int rc = d->nthreads ? 0 : -EAGAIN;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return rc;
}

struct tg_dns_result *tg_dns_take(struct tg_dns *d)
{
	uint64_t n;
	(void)!read(d->efd, &n, sizeof(n));
	pthread_mutex_lock(&d->mu);
	struct tg_dns_result *r = d->done;
	d->done = d->done_tail = NULL;
	pthread_mutex_unlock(&d->mu);
	return r;
}

void tg_dns_result_free(struct tg_dns_result *r)
{
	if (!r)
		return;
	if (r->ai)
		freeaddrinfo(r->ai);
	free(r);
}

void tg_dns_release(struct tg_dns *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	d->quit = true;
	pthread_cond_broadcast(&d->cv);
	unref_unlock(d);
}
