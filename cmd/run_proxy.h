/* run_proxy.h — the run's side of the egress proxy (core/proxy/proxy.h): start it
 * when the policy has `network: hosts:`, point the command at it, and put
 * its connections in the report, the log and on stderr. */
#pragma once

#include <stdbool.h>
#include <sys/resource.h>

#include "audit/audit.h"
#include "policy/policy.h"
#include "proxy/proxy.h"

struct tg_run_proxy {
	struct tg_proxy *proxy;          /* NULL when the policy has no host rules */
	struct tg_log *log;              /* borrowed */
	bool quiet, color;
	struct rlimit nofile;            /* the limit the command gets back */
	bool nofile_saved;
	char **said;                     /* "host:port" already told on stderr */
	const char *resolve;             /* $TXGUARD_PROXY_RESOLVE (tg_opts.proxy_resolve) */
	unsigned timeout_ms;             /* $TXGUARD_PROXY_TIMEOUT; 0 = the proxy's own */
};

/* Start the proxy if the policy has host rules and export HTTP_PROXY & co.
 * 0, or -errno with *why set to a message. */
int tg_run_proxy_start(struct tg_run_proxy *rp, const struct tg_policy *p, const char **why);
/* In the child before exec: give back the fd limit the proxy raised. */
void tg_run_proxy_child(const struct tg_run_proxy *rp);
/* Stop the proxy (nothing listens afterwards) and copy its connections into
 * the report. */
void tg_run_proxy_finish(struct tg_run_proxy *rp, struct tg_report *report);
void tg_run_proxy_clear(struct tg_run_proxy *rp);
