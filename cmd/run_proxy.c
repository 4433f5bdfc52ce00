/* run_proxy.c — see run_proxy.h. */
#include "run_proxy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* One stderr line per denied host:port, like the tracer's denial lines. */
static void on_conn(void *ud, const struct tg_net_conn *c)
{
	struct tg_run_proxy *rp = ud;
	tg_log_connection(rp->log, c);
	if (c->action != TG_ACT_DENY || rp->quiet)
		return;
	_cleanup_free_ char *key = tg_asprintf("%s:%u", c->host, c->port);
	if (!key)
		return;
	for (size_t i = 0; rp->said && rp->said[i]; i++)
		if (strcmp(rp->said[i], key) == 0)
			return;
	tg_strv_push(&rp->said, key);
	fprintf(stderr, "%stxguard: denied connection to %s by rule %s: %s%s\n",
	        rp->color ? "\033[1;31m" : "", key, c->rule_id, c->reason, rp->color ? "\033[0m" : "");
}

static int export_proxy(unsigned port)
{
	static const char *const vars[] = {
		"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
	};
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", port);
	for (size_t i = 0; i < TG_ARRAY_SIZE(vars); i++)
		if (setenv(vars[i], url, 1) < 0)
			return -errno;
	/* Loopback stays direct (the tracer allows it); everything else goes
	 * through the proxy. */
	if (setenv("no_proxy", "localhost,127.0.0.1,::1", 1) < 0 ||
	    setenv("NO_PROXY", "localhost,127.0.0.1,::1", 1) < 0)
		return -errno;
	return 0;
}

int tg_run_proxy_start(struct tg_run_proxy *rp, const struct tg_policy *p, const char **why)
{
	struct tg_proxy_opts o = { .policy = p, .resolve = rp->resolve, .on_conn = on_conn, .ud = rp };
	*why = NULL;
	if (!tg_policy_has_hosts(p))
		return 0;
	if (rp->timeout_ms)
		o.header_timeout_ms = o.connect_timeout_ms = rp->timeout_ms;
	rp->nofile_saved = getrlimit(RLIMIT_NOFILE, &rp->nofile) == 0;
	int rc = tg_proxy_start(&rp->proxy, &o);
	if (rc == -EINVAL) {
		*why = "TXGUARD_PROXY_RESOLVE: expected name:address[,name:address...]";
		return rc;
	}
	if (rc < 0) {
		*why = "cannot start the egress proxy (network: hosts:)";
		return rc;
	}
	rc = export_proxy(tg_proxy_port(rp->proxy));
	if (rc < 0)
		*why = "cannot set the proxy variables";
	return rc;
}

void tg_run_proxy_child(const struct tg_run_proxy *rp)
{
	if (rp->proxy && rp->nofile_saved)
		setrlimit(RLIMIT_NOFILE, &rp->nofile);
}

void tg_run_proxy_finish(struct tg_run_proxy *rp, struct tg_report *report)
{
	size_t n = 0, dropped = 0;
	if (!rp->proxy)
		return;
	tg_proxy_stop(rp->proxy);
	const struct tg_net_conn *v = tg_proxy_conns(rp->proxy, &n, &dropped);
	report->proxy = true;
	for (size_t i = 0; i < n; i++)
		tg_report_add_conn(report, &v[i]);
	report->conns_dropped += dropped;
}

void tg_run_proxy_clear(struct tg_run_proxy *rp)
{
	tg_proxy_free(rp->proxy);
	tg_strv_free(rp->said);
	memset(rp, 0, sizeof(*rp));
}
