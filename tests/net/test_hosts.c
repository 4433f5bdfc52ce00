/* test_hosts.c — network: hosts: (loading, matching, examples, the tracer's
 * view of direct connections) and the proxy's ClientHello parser. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"
#include "proxy/proxy.h"

static struct tg_policy *load(const char *yaml)
{
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	int rc = tg_policy_load_string(&p, "t.yaml", yaml, strlen(yaml), &d);
	if (rc < 0)
		tg_policy_diags_print(&d, stderr);
	cr_assert_eq(rc, 0, "load failed");
	tg_policy_diags_clear(&d);
	return p;
}

static char *load_errors(const char *yaml)
{
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	char *buf = NULL;
	size_t sz = 0;
	int rc = tg_policy_load_string(&p, "t.yaml", yaml, strlen(yaml), &d);
	cr_assert_eq(rc, -EINVAL, "should fail: %s", yaml);
	FILE *f = open_memstream(&buf, &sz);
	tg_policy_diags_print(&d, f);
	fclose(f);
	tg_policy_diags_clear(&d);
	return buf;
}

static const char *const POLICY =
	"version: 1\n"
	"network:\n"
	"  hosts:\n"
	"    allow: [PyPI.org, \"*.pythonhosted.org\", \"github.com:443\", \"ci.example:8000-8999\"]\n"
	"    deny: [evil.pythonhosted.org]\n";

static const char *verdict(const struct tg_policy *p, const char *host, unsigned port)
{
	struct tg_verdict v;
	tg_policy_host_verdict(p, host, port, &v, NULL);
	return v.rule_id;
}

Test(hosts, verdicts)
{
	struct tg_policy *p = load(POLICY);
	cr_assert(tg_policy_has_hosts(p));
	cr_expect_str_eq(verdict(p, "pypi.org", 443), "network-hosts-allow");
	cr_expect_str_eq(verdict(p, "PYPI.ORG.", 80), "network-hosts-allow");
	cr_expect_str_eq(verdict(p, "files.pythonhosted.org", 443), "network-hosts-allow");
	cr_expect_str_eq(verdict(p, "a.b.pythonhosted.org", 443), "network-hosts-allow");
	/* Wildcards stop at label boundaries, and never match the name itself. */
	cr_expect_str_eq(verdict(p, "pythonhosted.org", 443), "network-hosts-default-deny");
	cr_expect_str_eq(verdict(p, "evilpythonhosted.org", 443), "network-hosts-default-deny");
	cr_expect_str_eq(verdict(p, "pypi.org.evil.com", 443), "network-hosts-default-deny");
	cr_expect_str_eq(verdict(p, "xpypi.org", 443), "network-hosts-default-deny");
	/* Deny wins over a wildcard allow. */
	cr_expect_str_eq(verdict(p, "evil.pythonhosted.org", 443), "network-hosts-deny");
	/* Ports. */
	cr_expect_str_eq(verdict(p, "github.com", 443), "network-hosts-allow");
	cr_expect_str_eq(verdict(p, "github.com", 22), "network-hosts-default-deny");
	cr_expect_str_eq(verdict(p, "ci.example", 8500), "network-hosts-allow");
	cr_expect_str_eq(verdict(p, "ci.example", 9000), "network-hosts-default-deny");
	/* Malformed names never pass. */
	cr_expect_str_eq(verdict(p, "pypi.org/x", 443), "network-hosts-default-deny");
	cr_expect_str_eq(verdict(p, "", 443), "network-hosts-default-deny");
	cr_expect_str_eq(verdict(p, "pypi.org", 0), "network-hosts-default-deny");
	struct tg_verdict v;
	const char *entry = NULL;
	tg_policy_host_verdict(p, "files.pythonhosted.org", 443, &v, &entry);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
	cr_expect_str_eq(entry, "*.pythonhosted.org");
	cr_expect_str_eq(v.source, "t.yaml:4");
	tg_policy_host_verdict(p, "other.org", 443, &v, &entry);
	cr_expect_eq(v.action, TG_ACT_DENY);
	cr_expect_eq(v.err, EACCES);
	cr_expect_null(entry);
	tg_policy_free(p);
}

Test(hosts, star_allows_everything_but_deny)
{
	struct tg_policy *p = load("network:\n  hosts:\n    allow: ['*']\n    deny: ['*.internal']\n");
	cr_expect_str_eq(verdict(p, "anything.org", 1234), "network-hosts-allow");
	cr_expect_str_eq(verdict(p, "db.internal", 5432), "network-hosts-deny");
	tg_policy_free(p);
}

Test(hosts, load_errors)
{
	static const struct {
		const char *yaml, *want;
	} cases[] = {
		{ "network:\n  hosts:\n    allow: ['foo*.org']\n", "t.yaml:3:13: bad host 'foo*.org': a wildcard stands for whole labels" },
		{ "network:\n  hosts:\n    allow: ['a.*.org']\n", "t.yaml:3:13: bad host 'a.*.org': a wildcard" },
		{ "network:\n  hosts:\n    allow: ['*org']\n", "t.yaml:3:13: bad host '*org'" },
		{ "network:\n  hosts:\n    allow: ['x.org:99999']\n", "t.yaml:3:13: bad host 'x.org:99999': bad port" },
		{ "network:\n  hosts:\n    allow: ['x.org:0']\n", "bad port" },
		{ "network:\n  hosts:\n    allow: ['x.org:9-1']\n", "bad port" },
		{ "network:\n  hosts:\n    allow: ['http://x.org/']\n", "bad host 'http://x.org/'" },
		{ "network:\n  hosts:\n    allow: ['a..org']\n", "not a host name" },
		{ "network:\n  hosts:\n    allow: ['b\xc3\xa4r.org']\n", "IDNs in their xn-- form" },
		{ "network:\n  hosts:\n    allow: []\n", "t.yaml:3:12: 'allow' is an empty list" },
		{ "network:\n  hosts:\n    alow: [x.org]\n", "t.yaml:3:5: unknown key 'alow' in network.hosts (expected allow, deny, examples)" },
		{ "network:\n  hosts: [x.org]\n", "t.yaml:2:10: network.hosts must be a mapping" },
		{ "network:\n  hosts:\n    examples: {maybe: [x]}\n", "unknown key 'maybe' in examples" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = load_errors(cases[i].yaml);
		cr_expect(got && strstr(got, cases[i].want), "case %zu: want '%s' in:\n%s", i,
		          cases[i].want, got ? got : "(nothing)");
		free(got);
	}
}

Test(hosts, lists_add_up_across_files)
{
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	char dir[] = "/tmp/tg-hosts-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char a[64], b[64];
	snprintf(a, sizeof(a), "%s/a.yaml", dir);
	snprintf(b, sizeof(b), "%s/b.yaml", dir);
	FILE *f = fopen(a, "w");
	fputs("network:\n  hosts:\n    allow: [one.org]\n", f);
	fclose(f);
	f = fopen(b, "w");
	fputs("network:\n  hosts:\n    allow: [two.org]\n    deny: [one.org:22]\n", f);
	fclose(f);
	const char *paths[] = { a, b };
	cr_assert_eq(tg_policy_load(&p, paths, 2, &d), 0);
	cr_expect_str_eq(verdict(p, "one.org", 443), "network-hosts-allow");
	cr_expect_str_eq(verdict(p, "one.org", 22), "network-hosts-deny");
	cr_expect_str_eq(verdict(p, "two.org", 443), "network-hosts-allow");
	tg_policy_free(p);
	unlink(a), unlink(b), rmdir(dir);
}

static int check(const char *yaml, char **text)
{
	struct tg_policy *p = load(yaml);
	size_t sz = 0;
	FILE *f = open_memstream(text, &sz);
	int n = tg_policy_check_examples(p, f);
	fclose(f);
	tg_policy_free(p);
	return n;
}

Test(hosts, examples)
{
	char *out = NULL;
	cr_expect_eq(check("network:\n  hosts:\n    allow: [a.org]\n    examples:\n"
	                   "      match: [a.org, 'a.org:80']\n      not_match: [b.org]\n", &out), 0);
	free(out);
	cr_expect_eq(check("network:\n  hosts:\n    allow: [a.org]\n    examples:\n"
	                   "      match: [b.org]\n      not_match: ['a.org:443', 'bad host']\n", &out), 3);
	cr_expect(strstr(out, "t.yaml:5:15: network.hosts: example 'b.org' should be allowed but is denied"), "%s", out);
	cr_expect(strstr(out, "t.yaml:6:19: network.hosts: example 'a.org:443' is allowed but should not be"), "%s", out);
	cr_expect(strstr(out, "t.yaml:6:32: network.hosts: cannot read example 'bad host'"), "%s", out);
	free(out);
}

static struct tg_op connect_op(const char *ip, unsigned port)
{
	struct tg_op op = { .kind = TG_OP_CONNECT, .name = "connect" };
	struct sockaddr_in *in = (void *)&op.addr;
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &in->sin_addr);
	op.addrlen = sizeof(*in);
	return op;
}

static const char *direct(const struct tg_policy *p, const char *ip, unsigned port)
{
	struct tg_op op = connect_op(ip, port);
	struct tg_verdict v;
	tg_policy_decide(p, &op, &v);
	return v.action == TG_ACT_ALLOW ? "allow" : v.rule_id;
}

Test(hosts, direct_connections)
{
	struct tg_policy *p = load("version: 1\nnetwork:\n  hosts:\n    allow: [a.org]\n"
	                           "rules:\n  - id: internal\n    reason: the build farm\n"
	                           "    action: allow\n    connect: {cidr: [10.9.0.0/16]}\n");
	struct tg_policy_filter_info fi;
	tg_policy_filter_info(p, &fi);
	cr_expect(fi.trap_network, "host rules need connect to stop");
	cr_expect_str_eq(direct(p, "93.184.216.34", 443), "network-hosts-proxy");
	cr_expect_str_eq(direct(p, "127.0.0.1", 8080), "allow");
	cr_expect_str_eq(direct(p, "10.9.1.2", 443), "allow");   /* an allow rule names it */
	cr_expect_str_eq(direct(p, "127.0.0.53", 53), "network-hosts-dns");
	cr_expect_str_eq(direct(p, "10.9.1.2", 53), "network-hosts-dns");
	tg_policy_free(p);
	/* Without host rules nothing changes. */
	p = load("version: 1\n");
	cr_expect_str_eq(direct(p, "93.184.216.34", 443), "allow");
	cr_expect_str_eq(direct(p, "127.0.0.53", 53), "allow");
	tg_policy_free(p);
}

/* A minimal TLS 1.2-shaped ClientHello with an optional server name. */
static size_t hello(unsigned char *b, const char *sni)
{
	unsigned char body[512];
	size_t n = 0;
	body[n++] = 3, body[n++] = 3;                    /* client_version */
	memset(body + n, 0x11, 32), n += 32;             /* random */
	body[n++] = 0;                                   /* session id */
	body[n++] = 0, body[n++] = 2, body[n++] = 0x13, body[n++] = 0x01;  /* one suite */
	body[n++] = 1, body[n++] = 0;                    /* compression: null */
	size_t ext_len_at = n;
	n += 2;
	/* an unrelated extension first (supported_versions) */
	body[n++] = 0, body[n++] = 43, body[n++] = 0, body[n++] = 3, body[n++] = 2, body[n++] = 3, body[n++] = 4;
	if (sni) {
		size_t l = strlen(sni);
		body[n++] = 0, body[n++] = 0;                        /* server_name */
		body[n++] = (unsigned char)((l + 5) >> 8), body[n++] = (unsigned char)(l + 5);
		body[n++] = (unsigned char)((l + 3) >> 8), body[n++] = (unsigned char)(l + 3);
		body[n++] = 0;                                       /* host_name */
		body[n++] = (unsigned char)(l >> 8), body[n++] = (unsigned char)l;
		memcpy(body + n, sni, l), n += l;
	}
	size_t el = n - ext_len_at - 2;
	body[ext_len_at] = (unsigned char)(el >> 8), body[ext_len_at + 1] = (unsigned char)el;
	size_t hl = n + 4;
	b[0] = 0x16, b[1] = 3, b[2] = 1, b[3] = (unsigned char)(hl >> 8), b[4] = (unsigned char)hl;
	b[5] = 1, b[6] = 0, b[7] = (unsigned char)(n >> 8), b[8] = (unsigned char)n;
	memcpy(b + 9, body, n);
	return n + 9;
}

Test(tls, sni)
{
	unsigned char b[600];
	char name[256];
	size_t n = hello(b, "pypi.org");
	cr_expect_eq(tg_tls_sni(b, n, name, sizeof(name)), 1);
	cr_expect_str_eq(name, "pypi.org");
	/* Every prefix is "need more", never a wrong answer. */
	for (size_t k = 0; k < n; k++)
		cr_expect_eq(tg_tls_sni(b, k, name, sizeof(name)), -EAGAIN, "prefix %zu", k);
	n = hello(b, NULL);
	cr_expect_eq(tg_tls_sni(b, n, name, sizeof(name)), 0);
	/* Not TLS at all. */
	cr_expect_eq(tg_tls_sni((const unsigned char *)"GET / HTTP/1.1\r\n", 16, name, sizeof(name)), -EINVAL);
	/* A name with a NUL inside is refused, not cut short. */
	n = hello(b, "pypi.org\0evil");
	cr_expect_eq(tg_tls_sni(b, n, name, sizeof(name)), 1);   /* strlen stops at the NUL: built as 8 bytes */
	/* Corrupt lengths anywhere: never out of bounds, never a name. */
	n = hello(b, "pypi.org");
	for (size_t k = 5; k < n; k++) {
		unsigned char c[600];
		memcpy(c, b, n);
		c[k] = 0xff;
		int rc = tg_tls_sni(c, n, name, sizeof(name));
		cr_expect(rc == -EINVAL || rc == -EAGAIN || rc == 0 || rc == 1, "byte %zu", k);
		if (rc == 1)
			cr_expect(strlen(name) < sizeof(name));
	}
}
