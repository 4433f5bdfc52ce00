/* test_load.c — the loader: exact diagnostics, merge and override, hostile YAML. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "test_util.h"

/* Load yaml and return every diagnostic, one per line (NULL when it loads). */
static char *load_errors(const char *yaml, size_t len)
{
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	int r = tg_policy_load_string(&p, "t.yaml", yaml, len, &d);
	if (r == 0) {
		cr_expect_eq(d.n, 0);
		tg_policy_free(p);
		return NULL;
	}
	cr_expect_eq(r, -EINVAL);
	cr_expect_null(p);
	cr_expect_gt(d.n, 0, "a failed load must say why");
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);
	tg_policy_diags_print(&d, f);
	fclose(f);
	tg_policy_diags_clear(&d);
	return buf;
}

static void expect_error(const char *yaml, const char *want)
{
	char *got = load_errors(yaml, strlen(yaml));
	cr_expect_not_null(got, "should fail: %s", yaml);
	if (got)
		cr_expect(strstr(got, want) != NULL, "want '%s' in:\n%s", want, got);
	free(got);
}

#define RULE "rules:\n  - id: r1\n    reason: because\n    action: deny\n"

struct ecase {
	const char *yaml, *want;
};

static const struct ecase ecases[] = {
	{ "bogus: 1\n", "t.yaml:1:1: unknown top-level key 'bogus'" },
	{ "version: 2\n", "t.yaml:1:10: unsupported policy version 2" },
	{ "version: one\n", "t.yaml:1:10: 'version' must be a whole number" },
	{ "rules: {a: 1}\n", "t.yaml:1:8: 'rules' must be a list, not a mapping" },
	{ "- a\n- b\n", "t.yaml:1:1: the policy file must be a mapping, not a list" },
	{ RULE "    exec: {program: [rm]}\n    colour: red\n", "t.yaml:6:5: unknown key 'colour' in rule" },
	{ RULE "    exec: {program: [rm], colour: red}\n", "t.yaml:5:27: unknown key 'colour' in exec" },
	{ RULE "    path: {match: [/x], ops: [write, fly]}\n", "t.yaml:5:38: unknown operation 'fly'" },
	{ RULE "    path: {match: [x/y]}\n", "t.yaml:5:20: 'x/y' in 'match' must be absolute" },
	{ RULE "    exec:\n      program: [rm]\n      args:\n        - /dev/sd[a-\n",
	  "t.yaml:8:18: bad glob '/dev/sd[a-': unterminated character class" },
	{ RULE "    exec:\n      program: ['x\\']\n", "t.yaml:6:17: bad glob 'x\\': trailing backslash" },
	{ RULE "    errno: EWHATEVER\n    exec: {program: [rm]}\n",
	  "t.yaml:5:12: unknown errno name 'EWHATEVER'" },
	{ "rules:\n  - id: r1\n    reason: x\n    action: allow\n    errno: EPERM\n    exec: {program: [rm]}\n",
	  "t.yaml:5:12: 'errno' only goes with action: deny" },
	{ "rules:\n  - id: r1\n    reason: x\n    action: [deny]\n    exec: {program: [rm]}\n",
	  "t.yaml:4:13: 'action' must be a string, not a list" },
	{ "rules:\n  - id: r1\n    reason: x\n    action: block\n    exec: {program: [rm]}\n",
	  "t.yaml:4:13: unknown action 'block'" },
	{ "rules:\n  - id: R1\n    reason: x\n    action: deny\n    exec: {program: [rm]}\n",
	  "t.yaml:2:9: bad rule id 'R1'" },
	{ "rules:\n  - reason: x\n    action: deny\n    exec: {program: [rm]}\n",
	  "t.yaml:2:5: rule without an 'id'" },
	{ "rules:\n  - id: r1\n    action: deny\n    exec: {program: [rm]}\n",
	  "t.yaml:2:5: rule 'r1' has no 'reason'" },
	{ "rules:\n  - id: r1\n    reason: x\n    exec: {program: [rm]}\n",
	  "t.yaml:2:5: rule 'r1' has no 'action'" },
	{ RULE, "t.yaml:2:5: rule 'r1' says nothing to match" },
	{ RULE "    exec: {program: [rm]}\n    path: {match: [/x]}\n", "t.yaml:6:5: rule 'r1' has more than one" },
	{ RULE "    exec: {args: [/]}\n", "t.yaml:5:5: exec rule 'r1' needs 'program'" },
	{ RULE "    exec: {program: rm, flags: [-rf]}\n", "t.yaml:5:33: '-rf' combines short flags" },
	{ RULE "    exec: {program: rm, flags: [r]}\n", "t.yaml:5:33: 'r' is not a flag" },
	{ RULE "    exec: {program: rm, flags: ['-r|x']}\n", "'x' is not a flag" },
	{ RULE "    exec: {program: rm, outside_workspace: yes}\n",
	  "t.yaml:5:44: 'outside_workspace' must be true or false" },
	{ RULE "    exec: {program: []}\n", "t.yaml:5:21: 'program' is an empty list" },
	{ RULE "    exec: {program: [[rm]]}\n", "t.yaml:5:22: items of 'program' must be strings" },
	{ RULE "    syscall: [keyctl, frobnicate]\n", "t.yaml:5:23: unknown syscall 'frobnicate'" },
	{ "rules:\n  - id: r1\n    reason: x\n    action: kill\n    syscall: [keyctl]\n",
	  "t.yaml:4:13: syscall rules are enforced in BPF and support only action: deny" },
	{ RULE "    connect: {cidr: [10.0.0.0/33]}\n", "t.yaml:5:22: bad CIDR '10.0.0.0/33'" },
	{ RULE "    connect: {cidr: [banana]}\n", "bad CIDR 'banana'" },
	{ RULE "    connect: {ports: [70000]}\n", "t.yaml:5:23: bad port '70000'" },
	{ RULE "    connect: {ports: [9-1]}\n", "bad port '9-1'" },
	{ RULE "    connect: {}\n", "needs unix, cidr, ports or loopback" },
	{ RULE "    exec: {program: [rm]}\n    examples: {match: [a], maybe: [b]}\n",
	  "t.yaml:6:28: unknown key 'maybe' in examples" },
	{ RULE "    exec: {program: [rm]}\n  - id: r1\n    reason: x\n    action: deny\n    exec: {program: [ls]}\n",
	  "t.yaml:6:5: duplicate rule id 'r1' in this file" },
	{ RULE "    exec: {program: [rm]}\n    reason: again\n", "t.yaml:6:5: duplicate key 'reason' in a rule" },
	{ "rules:\n  - id: gone\n    disabled: true\n", "t.yaml:2:5: rule 'gone' is disabled, but no earlier file defines it" },
	{ "paths: {writable: [tmp]}\n", "t.yaml:1:20: 'tmp' in 'writable' must be absolute" },
	{ "paths: {writable: [/tmp/*]}\n", "'/tmp/*' in 'writable' must be a plain path" },
	{ "paths: {deny_read: [/a/***]}\n", "t.yaml:1:24: bad glob '/a/***'" },
	{ "paths: {cache: [/x]}\n", "t.yaml:1:9: unknown key 'cache' in paths" },
	{ "limits: {max_procs: -1}\n", "t.yaml:1:21: 'max_procs' must be a whole number" },
	{ "limits: {max_procs: 99999999999}\n", "'max_procs' must be a whole number" },
	{ "limits: {max_files: 1}\n", "t.yaml:1:10: unknown key 'max_files' in limits" },
	{ "network: {default: maybe}\n", "t.yaml:1:20: network default must be allow or deny" },
	/* YAML-level problems */
	{ "rules: [\n", "t.yaml:2:1: YAML: did not find expected node content" },
	{ "a: b: c\n", "t.yaml:1:5: YAML: mapping values are not allowed in this context" },
	{ "rules:\n  - id: x\n   bad: 1\n", "t.yaml:3:" },
	{ "a: &x 1\nb: *x\n", "t.yaml:1:4: YAML anchors (&name) are not allowed" },
	{ "a: *x\n", "t.yaml:1:4: YAML aliases (*name) are not allowed" },
	{ "version: 1\n---\nversion: 1\n", "t.yaml:2:1: only one YAML document per policy file" },
	{ "version: \"\\xff\"\nfoo: \"\\uZZZZ\"\n", "t.yaml:2:" },
	{ "x: \"unterminated\n", "t.yaml:" },
	{ "\t- a\n", "t.yaml:1:1: YAML: found character that cannot start any token" },
};

Test(load, diagnostics_table)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(ecases); i++)
		expect_error(ecases[i].yaml, ecases[i].want);
}

Test(load, all_errors_reported)
{
	const char *y = "bogus: 1\n"
	                "rules:\n"
	                "  - id: a\n    reason: x\n    action: nope\n    exec: {program: [rm]}\n"
	                "  - id: b\n    reason: x\n    action: deny\n    errno: EBOGUS\n    exec: {program: [rm]}\n"
	                "paths: {writable: [relative]}\n";
	char *got = load_errors(y, strlen(y));
	cr_assert_not_null(got);
	cr_expect(strstr(got, "t.yaml:1:1: unknown top-level key 'bogus'"), "%s", got);
	cr_expect(strstr(got, "t.yaml:5:13: unknown action 'nope'"), "%s", got);
	cr_expect(strstr(got, "t.yaml:10:12: unknown errno name 'EBOGUS'"), "%s", got);
	cr_expect(strstr(got, "t.yaml:12:20: 'relative' in 'writable' must be absolute"), "%s", got);
	free(got);
}

Test(load, accepts_valid_forms)
{
	const char *ok[] = {
		"",
		"# only a comment\n",
		"version: 1\n",
		"---\nversion: 1\n...\n",
		RULE "    errno: EROFS\n    exec: {program: rm, flags: ['-r|-R|--recursive'], args: /}\n",
		RULE "    connect: {unix: [/run/x.sock, '@abstract'], cidr: ['::1/128'], ports: ['1-2', 3]}\n",
		"rules:\n  - id: r1\n    reason: x\n    action: audit\n    path: {match: ['$WORKSPACE/**'], ops: write}\n",
		"limits: {max_procs: 0}\nnetwork: {default: deny}\n",
	};
	for (size_t i = 0; i < TG_ARRAY_SIZE(ok); i++) {
		char *got = load_errors(ok[i], strlen(ok[i]));
		cr_expect_null(got, "'%s' should load: %s", ok[i], got ? got : "");
		free(got);
	}
}

/* ---- hostile input ---------------------------------------------------------- */

Test(hostile, deep_nesting)
{
	size_t n = 100000;
	char *y = malloc(2 * n + 1);
	memset(y, '[', n);
	memset(y + n, ']', n);
	y[2 * n] = '\0';
	expect_error(y, "nesting deeper than 32 levels");
	for (size_t i = 0; i < n; i++)
		y[i] = i % 2 ? ' ' : '{';
	y[n] = '\0';
	char *got = load_errors(y, n);
	cr_expect_not_null(got);
	free(got);
	free(y);
}

Test(hostile, huge_scalar)
{
	size_t n = 3 * 1024 * 1024;
	char *y = malloc(n + 16);
	memcpy(y, "version: ", 9);
	memset(y + 9, 'a', n);
	y[n + 9] = '\0';
	expect_error(y, "scalar longer than 65536 bytes");
	free(y);
}

Test(hostile, alias_bomb_refused_quickly)
{
	const char *y = "a: &a [x, x, x, x, x, x, x, x, x]\n"
	                "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
	                "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	                "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
	                "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	                "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
	                "rules: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
	expect_error(y, "t.yaml:1:4: YAML anchors (&name) are not allowed");
}

Test(hostile, invalid_utf8_and_nul)
{
	expect_error("version: \xff\xfe\n", "t.yaml:1:");
	expect_error("rules:\n  - id: \xc3\x28\n", "YAML: invalid");
	char nul[] = "version: 1\n\0rules: []\n";
	char *got = load_errors(nul, sizeof(nul) - 1);
	cr_assert_not_null(got);
	cr_expect(strstr(got, "NUL byte"), "%s", got);
	free(got);
}

Test(hostile, many_nodes)
{
	size_t n = 250000;
	char *y = malloc(n * 3 + 16);
	strcpy(y, "x: [");
	size_t w = 4;
	for (size_t i = 0; i < n; i++) {
		memcpy(y + w, "1,", 2);
		w += 2;
	}
	strcpy(y + w, "1]\n");
	expect_error(y, "too many YAML nodes");
	free(y);
}

static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL;
	cr_assert_eq(tg_read_file(path, &buf, len, 1 << 22), 0, "read %s", path);
	return buf;
}

Test(hostile, every_truncation_of_the_default_policy)
{
	/* Cut each default file at many offsets: loads or fails cleanly. */
	const char *files[] = { "00-base.yaml", "10-exec.yaml", "20-git.yaml", "30-network.yaml" };
	size_t loaded = 0, failed = 0;
	for (size_t f = 0; f < TG_ARRAY_SIZE(files); f++) {
		char path[4096];
		size_t len = 0;
		snprintf(path, sizeof(path), "%s/%s", TG_TEST_POLICYDIR, files[f]);
		char *buf = slurp(path, &len);
		for (size_t cut = 0; cut < len; cut += 13) {
			struct tg_policy *p = NULL;
			struct tg_policy_diags d = { 0 };
			int r = tg_policy_load_string(&p, "cut.yaml", buf, cut, &d);
			cr_assert(r == 0 || (r == -EINVAL && d.n > 0 && !p), "cut at %zu: r=%d", cut, r);
			r == 0 ? loaded++ : failed++;
			tg_policy_free(p);
			tg_policy_diags_clear(&d);
		}
		free(buf);
	}
	cr_expect_gt(failed, 0);
	cr_expect_gt(loaded, 0);
}

/* ---- files, directories, merge ------------------------------------------------ */

static char tmpdir[] = "/tmp/tg-policy-test.XXXXXX";

static void write_file(const char *name, const char *text)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	write_text(path, text);
}

static void mk_tmp(void)
{
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void rm_tmp(void)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_expect_eq(system(cmd), 0);
}

static struct tg_policy *load_paths(const char *const *paths, size_t n, char **errs)
{
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	int r = tg_policy_load(&p, paths, n, &d);
	size_t sz = 0;
	FILE *f = open_memstream(errs, &sz);
	tg_policy_diags_print(&d, f);
	fclose(f);
	tg_policy_diags_clear(&d);
	if (r == 0) {
		struct tg_policy_ctx ctx = { WS, HOME, STATE };
		tg_policy_set_ctx(p, &ctx);
	}
	return p;
}

static char *dump(const struct tg_policy *p, bool json)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);
	tg_policy_dump(p, json, f);
	fclose(f);
	return buf;
}

Test(merge, override_and_disable_by_id, .init = mk_tmp, .fini = rm_tmp)
{
	write_file("10-base.yaml",
	           "rules:\n"
	           "  - id: no-make\n    reason: base\n    action: deny\n    exec: {program: [make]}\n"
	           "  - id: no-cmake\n    reason: base\n    action: deny\n    exec: {program: [cmake]}\n"
	           "limits: {max_procs: 100}\n");
	write_file("20-user.yaml",
	           "rules:\n"
	           "  - id: no-make\n    reason: user says audit\n    action: audit\n    exec: {program: [make]}\n"
	           "  - id: no-cmake\n    disabled: true\n"
	           "limits: {max_procs: 50}\n");
	write_file("notes.txt", "not yaml: [\n");
	write_file(".hidden.yaml", "not yaml: [\n");
	char *errs = NULL;
	const char *paths[] = { tmpdir };
	struct tg_policy *p = load_paths(paths, 1, &errs);
	cr_assert_not_null(p, "%s", errs);
	free(errs);
	struct tg_verdict v;
	judge_line(p, "make all", &v);
	cr_expect_eq(v.action, TG_ACT_AUDIT);
	cr_expect_str_eq(v.reason, "user says audit");
	cr_expect(strstr(v.source, "20-user.yaml:2"), "%s", v.source);
	judge_line(p, "cmake ..", &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW, "disabled rule must not fire");
	struct tg_policy_filter_info fi;
	tg_policy_filter_info(p, &fi);
	cr_expect_eq(fi.max_procs, 50, "later file wins for limits");

	char *text = dump(p, false);
	cr_expect(strstr(text, "10-base.yaml\n"), "%s", text);
	cr_expect(strstr(text, "10-base.yaml") < strstr(text, "20-user.yaml"), "lexical order");
	cr_expect(strstr(text, "notes.txt") == NULL && strstr(text, ".hidden") == NULL, "%s", text);
	cr_expect(strstr(text, "no-make  (") && strstr(text, "20-user.yaml:2) overrides "), "%s", text);
	cr_expect(strstr(text, "10-base.yaml:2"), "overridden source named: %s", text);
	cr_expect(strstr(text, "DISABLED by "), "%s", text);
	free(text);
	char *json = dump(p, true);
	cr_expect(strstr(json, "\"id\":\"no-make\",\"kind\":\"exec\",\"action\":\"audit\""), "%s", json);
	cr_expect(strstr(json, "\"overrides\":\""), "%s", json);
	cr_expect(strstr(json, "\"disabled_by\":\""), "%s", json);
	cr_expect(strstr(json, "\"max_procs\":50"), "%s", json);
	free(json);
	tg_policy_free(p);
}

Test(merge, files_in_given_order_and_missing_file, .init = mk_tmp, .fini = rm_tmp)
{
	write_file("a.yaml", "rules:\n  - id: x\n    reason: a\n    action: deny\n    exec: {program: [ls]}\n");
	write_file("b.yaml", "rules:\n  - id: x\n    reason: b\n    action: kill\n    exec: {program: [ls]}\n");
	char a[4200], b[4200], missing[4200];
	snprintf(a, sizeof(a), "%s/a.yaml", tmpdir);
	snprintf(b, sizeof(b), "%s/b.yaml", tmpdir);
	snprintf(missing, sizeof(missing), "%s/none.yaml", tmpdir);
	const char *ba[] = { b, a };
	char *errs = NULL;
	struct tg_policy *p = load_paths(ba, 2, &errs);
	cr_assert_not_null(p);
	free(errs);
	struct tg_verdict v;
	judge_line(p, "ls", &v);
	cr_expect_eq(v.action, TG_ACT_DENY, "a.yaml came last and wins");
	tg_policy_free(p);

	const char *bad[] = { a, missing };
	p = load_paths(bad, 2, &errs);
	cr_expect_null(p);
	cr_expect(strstr(errs, "none.yaml: cannot read policy file: No such file or directory"), "%s",
	          errs);
	free(errs);
}

Test(merge, files_lists_what_was_loaded_in_order, .init = mk_tmp, .fini = rm_tmp)
{
	write_file("20-b.yaml", "version: 1\n");
	write_file("10-a.yml", "version: 1\n");
	write_file("notes.txt", "not yaml: [\n");
	write_file(".hidden.yaml", "version: 1\n");
	char extra[4200];
	snprintf(extra, sizeof(extra), "%s/extra.yaml", tmpdir);
	write_file("extra.yaml", "version: 1\n");
	/* The default directory first, then this one, then a single file. */
	const char *paths[] = { TG_TEST_POLICYDIR, tmpdir, extra };
	char *errs = NULL;
	struct tg_policy *p = load_paths(paths, 3, &errs);
	cr_assert_not_null(p, "%s", errs);
	free(errs);
	size_t n = 0;
	const char *const *f = tg_policy_files(p, &n);
	static const char *const dflt[] = { "00-base.yaml", "10-exec.yaml", "20-git.yaml",
		                            "30-network.yaml", "40-limits.yaml", "50-syscalls.yaml",
		                            "60-kubernetes.yaml", "61-iac.yaml", "62-cloud.yaml",
		                            "63-forges.yaml", "64-databases.yaml", "65-containers.yaml",
		                            "66-publishing.yaml", "67-services.yaml", "68-remote.yaml" };
	size_t nd = TG_ARRAY_SIZE(dflt);
	cr_assert_eq(n, nd + 4, "got %zu files", n);
	for (size_t i = 0; i < nd; i++) {
		_cleanup_free_ char *want = tg_asprintf("%s/%s", TG_TEST_POLICYDIR, dflt[i]);
		cr_expect_str_eq(f[i], want);
	}
	/* extra.yaml is both in the directory (lexically first) and named. */
	const char *mine[] = { "10-a.yml", "20-b.yaml", "extra.yaml" };
	for (size_t i = 0; i < TG_ARRAY_SIZE(mine); i++) {
		_cleanup_free_ char *want = tg_asprintf("%s/%s", tmpdir, mine[i]);
		cr_expect_str_eq(f[nd + i], want);
	}
	cr_expect_str_eq(f[nd + 3], extra);
	cr_expect_null(f[n], "NULL-terminated");
	tg_policy_free(p);
	cr_expect_null(tg_policy_files(NULL, &n));
	cr_expect_eq(n, 0);
	struct tg_policy *s = load_yaml("version: 1\n");
	f = tg_policy_files(s, &n);
	cr_expect_eq(n, 1);
	cr_expect_str_eq(f[0], "t.yaml");
	tg_policy_free(s);
}

Test(merge, error_in_second_file_names_that_file, .init = mk_tmp, .fini = rm_tmp)
{
	write_file("1.yaml", "version: 1\n");
	write_file("2.yaml", "version: 1\nrules:\n  - id: q\n    reason: r\n    action: deny\n    exec: {program: [x], bogus: 1}\n");
	char *errs = NULL;
	const char *paths[] = { tmpdir };
	struct tg_policy *p = load_paths(paths, 1, &errs);
	cr_expect_null(p);
	cr_expect(strstr(errs, "/2.yaml:6:26: unknown key 'bogus' in exec"), "%s", errs);
	free(errs);
}

Test(check, failing_examples_name_file_line_col)
{
	struct tg_policy *p = load_yaml(RULE "    exec: {program: [rm]}\n"
	                                "    examples:\n      match: [rm -rf x, ls]\n      not_match: [rm y, \"'oops\"]\n");
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);
	int fails = tg_policy_check_examples(p, f);
	fclose(f);
	cr_expect_eq(fails, 3, "%s", buf);
	cr_expect(strstr(buf, "t.yaml:7:25: rule 'r1': example 'ls' should match but does not"), "%s", buf);
	cr_expect(strstr(buf, "t.yaml:8:19: rule 'r1': example 'rm y' matches but should not"), "%s", buf);
	cr_expect(strstr(buf, "t.yaml:8:25: rule 'r1': cannot read example"), "%s", buf);
	free(buf);
	tg_policy_free(p);
}

Test(explain, text_and_json)
{
	struct tg_policy *p = load_default();
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);
	char *argv[] = { "git", "push", "--force", "origin", "ma\"in\n", NULL };
	tg_policy_explain_exec(p, argv, true, f);
	fclose(f);
	cr_expect(strstr(buf, "\"verdict\":\"deny\",\"errno\":\"EPERM\",\"rule\":\"git-push-force\""), "%s", buf);
	cr_expect(strstr(buf, "\"ma\\\"in\\n\""), "escaped: %s", buf);
	cr_expect(strstr(buf, "\"matched\":[{\"id\":\"git-push-force\""), "%s", buf);
	free(buf);
	f = open_memstream(&buf, &sz);
	char *argv2[] = { "rm", "-rf", "/", NULL };
	tg_policy_explain_exec(p, argv2, false, f);
	fclose(f);
	cr_expect(strstr(buf, "verdict: kill\nrule: rm-recursive-system ("), "%s", buf);
	cr_expect(strstr(buf, "matched:\n  kill   rm-recursive-system"), "%s", buf);
	free(buf);
	tg_policy_free(p);
}
