/* policy/hosts.c — `network: hosts:`: egress by host name, judged for the
 * proxy (core/proxy/proxy.c) and for `policy check` / `policy explain`.
 *
 * An entry is "name", "*.name" (any name below, at a label boundary, never
 * the name itself) or "*" (every host), with an optional ":port" or
 * ":lo-hi"; no port means every port. Names are compared in lowercase
 * without a trailing dot. A wildcard anywhere else ("foo*.org", "a.*.org")
 * is refused at load time: a glob inside a label would let "evil-pypi.org"
 * pass for "pypi.org".
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"
#include "base/util.h"

#define HOST_MAX 253

/* Lowercase copy of a host name without its trailing dot; false when it is
 * no DNS name or IP literal (labels of letters, digits, '-', '_'; or an
 * IPv6 literal). */
static bool host_normalize(const char *in, size_t len, char *out, size_t outsz)
{
	if (len && in[len - 1] == '.')
		len--;
	if (len == 0 || len > HOST_MAX || len >= outsz)
		return false;
	for (size_t i = 0; i < len; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[len] = '\0';
	unsigned char v6[16];
	if (strchr(out, ':'))
		return inet_pton(AF_INET6, out, v6) == 1;
	size_t label = 0;
	for (size_t i = 0; i <= len; i++) {
		char c = out[i];
		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63)
				return false;
			label = 0;
		} else if (isalnum((unsigned char)c) || c == '-' || c == '_') {
			label++;
		} else {
			return false;
		}
	}
	return true;
}

static bool parse_ports(const char *s, struct tg_portrange *out)
{
	char *end = NULL;
	if (!isdigit((unsigned char)s[0]))
		return false;
	unsigned long lo = strtoul(s, &end, 10), hi = lo;
	if (*end == '-') {
		const char *h = end + 1;
		if (!isdigit((unsigned char)h[0]))
			return false;
		hi = strtoul(h, &end, 10);
	}
	if (*end || lo == 0 || hi > 65535 || lo > hi)
		return false;
	*out = (struct tg_portrange){ (uint16_t)lo, (uint16_t)hi };
	return true;
}

const char *tg_host_entry_parse(const char *text, bool deny, struct tg_host_entry *e)
{
	char host[HOST_MAX + 2];
	const char *h = text, *port = NULL;
	size_t hl = strlen(text);
	memset(e, 0, sizeof(*e));
	if (text[0] == '[') {
		const char *rb = strchr(text, ']');
		if (!rb || (rb[1] && rb[1] != ':'))
			return "bad IPv6 literal (expected [2001:db8::1] or [2001:db8::1]:443)";
		h = text + 1, hl = (size_t)(rb - h);
		port = rb[1] ? rb + 2 : NULL;
	} else if (strchr(text, ':') && strchr(text, ':') == strrchr(text, ':')) {
		port = strchr(text, ':') + 1;
		hl = (size_t)(port - 1 - text);
	}
	e->ports = (struct tg_portrange){ 0, 65535 };
	if (port && !parse_ports(port, &e->ports))
		return "bad port (expected name:443 or name:8000-8999)";
	bool star = hl >= 1 && h[0] == '*';
	if (star && hl == 1) {
		e->pattern = tg_strdup("*");
	} else {
		size_t skip = star ? 2 : 0;
		if (star && (hl < 3 || h[1] != '.'))
			return "a wildcard stands for whole labels only: '*.example.org' or '*'";
		if (memchr(h + skip, '*', hl - skip))
			return "a wildcard stands for whole labels only: '*.example.org' or '*'";
		if (!host_normalize(h + skip, hl - skip, host, sizeof(host)))
			return "not a host name (letters, digits, '-', '_' in dot-separated labels; "
			       "IDNs in their xn-- form) or IP literal";
		e->pattern = star ? tg_asprintf("*.%s", host) : tg_strdup(host);
	}
	e->deny = deny;
	return e->pattern ? NULL : "out of memory";
}

void tg_policy_hosts_free(struct tg_policy *p)
{
	/* A model's strings are in its arena (policy_int.h). */
	for (size_t i = 0; i < p->nhosts && !p->borrowed; i++) {
		free(p->hosts[i].pattern);
		free(p->hosts[i].text);
		free(p->hosts[i].source);
	}
	free(p->hosts);
	for (size_t i = 0; i < p->nhost_ex && !p->borrowed; i++) {
		free(p->host_ex[i].text);
		free(p->host_ex[i].file);
	}
	free(p->host_ex);
	p->hosts = NULL, p->nhosts = 0;
	p->host_ex = NULL, p->nhost_ex = 0;
}

bool tg_policy_has_hosts(const struct tg_policy *p)
{
	return p && p->nhosts > 0;
}

static bool entry_matches(const struct tg_host_entry *e, const char *host, unsigned port)
{
	if (port < e->ports.lo || port > e->ports.hi)
		return false;
	if (strcmp(e->pattern, "*") == 0)
		return true;
	if (e->pattern[0] != '*')
		return strcmp(e->pattern, host) == 0;
	/* "*.x.org": strictly below x.org, so the host is longer than "x.org"
	 * by at least one label and a dot. */
	const char *suffix = e->pattern + 1;   /* ".x.org" */
	size_t hl = strlen(host), sl = strlen(suffix);
	return hl > sl && strcmp(host + hl - sl, suffix) == 0;
}

static void set_verdict(struct tg_verdict *out, enum tg_action a, const char *id,
                        const char *reason, const char *source)
{
	memset(out, 0, sizeof(*out));
	out->action = a;
	out->err = a == TG_ACT_DENY ? EACCES : 0;
	out->rule_id = id;
	out->reason = reason;
	out->source = source;
}

void tg_policy_host_verdict(const struct tg_policy *p, const char *host, unsigned port,
                            struct tg_verdict *out, const char **entry)
{
	char norm[HOST_MAX + 2];
	const struct tg_host_entry *allow = NULL, *deny = NULL;
	if (entry)
		*entry = NULL;
	if (!host || port == 0 || port > 65535 || !host_normalize(host, strlen(host), norm, sizeof(norm))) {
		set_verdict(out, TG_ACT_DENY, "network-hosts-default-deny",
		            "not a valid host name or port", NULL);
		return;
	}
	for (size_t i = 0; p && i < p->nhosts; i++) {
		const struct tg_host_entry *e = &p->hosts[i];
		if (!entry_matches(e, norm, port))
			continue;
		if (e->deny && !deny)
			deny = e;
		else if (!e->deny && !allow)
			allow = e;
	}
	if (deny) {
		set_verdict(out, TG_ACT_DENY, "network-hosts-deny",
		            "the host is listed in network.hosts.deny", deny->source);
		if (entry)
			*entry = deny->text;
	} else if (allow) {
		set_verdict(out, TG_ACT_ALLOW, "network-hosts-allow",
		            "the host is listed in network.hosts.allow", allow->source);
		if (entry)
			*entry = allow->text;
	} else {
		set_verdict(out, TG_ACT_DENY, "network-hosts-default-deny",
		            "the host is not in network.hosts.allow (add it to the policy to reach it)",
		            NULL);
	}
}

int tg_policy_host_split(const char *text, char *buf, size_t bufsz, unsigned *port)
{
	const char *h = text, *ps = NULL;
	size_t hl = strlen(text);
	if (text[0] == '[') {
		const char *rb = strchr(text, ']');
		if (!rb || (rb[1] && rb[1] != ':'))
			return -EINVAL;
		h = text + 1, hl = (size_t)(rb - h);
		ps = rb[1] ? rb + 2 : NULL;
	} else if (strchr(text, ':')) {
		if (strchr(text, ':') != strrchr(text, ':'))
			return -EINVAL;   /* a bare IPv6 literal: brackets needed */
		ps = strchr(text, ':') + 1;
		hl = (size_t)(ps - 1 - text);
	}
	*port = 443;
	if (ps) {
		char *end = NULL;
		unsigned long v = strtoul(ps, &end, 10);
		if (!isdigit((unsigned char)ps[0]) || *end || v == 0 || v > 65535)
			return -EINVAL;
		*port = (unsigned)v;
	}
	if (hl == 0 || hl >= bufsz)
		return -EINVAL;
	memcpy(buf, h, hl);
	buf[hl] = '\0';
	return 0;
}

int tg_host_check_examples(const struct tg_policy *p, FILE *out)
{
	int fails = 0;
	for (size_t i = 0; p && i < p->nhost_ex; i++) {
		const struct tg_host_example *ex = &p->host_ex[i];
		char host[HOST_MAX + 2];
		unsigned port;
		struct tg_verdict v;
		char norm[HOST_MAX + 2];
		if (tg_policy_host_split(ex->text, host, sizeof(host), &port) < 0 ||
		    !host_normalize(host, strlen(host), norm, sizeof(norm))) {
			fprintf(out, "%s:%u:%u: network.hosts: cannot read example '%s' (expected host or host:port)\n",
			        ex->file, ex->line, ex->col, ex->text);
			fails++;
			continue;
		}
		tg_policy_host_verdict(p, host, port, &v, NULL);
		bool allowed = v.action == TG_ACT_ALLOW;
		if (allowed == ex->allowed)
			continue;
		fprintf(out, "%s:%u:%u: network.hosts: example '%s' %s\n", ex->file, ex->line, ex->col,
		        ex->text, ex->allowed ? "should be allowed but is denied" : "is allowed but should not be");
		fails++;
	}
	return fails;
}

static void json_text(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void tg_policy_explain_host(const struct tg_policy *p, const char *host, unsigned port, bool json,
                            FILE *out)
{
	struct tg_verdict v;
	const char *entry = NULL;
	tg_policy_host_verdict(p, host, port, &v, &entry);
	if (json) {
		fputs("{\"host\":", out);
		json_text(out, host);
		fprintf(out, ",\"port\":%u,\"through\":\"proxy\",\"action\":\"%s\",\"rule\":", port,
		        tg_action_name(v.action));
		json_text(out, v.rule_id);
		fputs(",\"entry\":", out);
		entry ? json_text(out, entry) : (void)fputs("null", out);
		fputs(",\"source\":", out);
		v.source ? json_text(out, v.source) : (void)fputs("null", out);
		fputs(",\"reason\":", out);
		json_text(out, v.reason);
		fputs("}\n", out);
		return;
	}
	fprintf(out, "%s %s:%u through the proxy: %s\n", tg_action_name(v.action), host, port,
	        v.reason);
	if (entry)
		fprintf(out, "  entry '%s' at %s (rule %s)\n", entry, v.source, v.rule_id);
	else
		fprintf(out, "  rule %s\n", v.rule_id);
}
