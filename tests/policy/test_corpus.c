/* test_corpus.c — the benign and destructive corpora through the explain
 * path (`txguard policy explain --json -- ARGV`), under the default policy. */
#include "test_util.h"

struct tally {
	size_t lines, allow, audit, deny, kill;
};

static const char *verdict_of(const char *json)
{
	static const char *const names[] = { "allow", "audit", "deny", "kill" };
	for (size_t i = 0; i < TG_ARRAY_SIZE(names); i++) {
		char key[64];
		snprintf(key, sizeof(key), "\"verdict\":\"%s\"", names[i]);
		if (strstr(json, key))
			return names[i];
	}
	return "?";
}

/* Explain each line; call check(line, verdict, json) on it. */
static struct tally run_corpus(const char *name, void (*check)(const char *, const char *, const char *))
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", TG_TEST_DIR, name);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s", path);
	struct tg_policy *p = load_default();
	struct tally t = { 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (n == 0 || line[0] == '#')
			continue;
		char **argv = NULL;
		cr_assert_eq(tg_argv_split(line, &argv), 0, "%s: cannot split '%s'", name, line);
		char *out = NULL;
		size_t sz = 0;
		FILE *m = open_memstream(&out, &sz);
		tg_policy_explain_exec(p, argv, true, m);
		fclose(m);
		const char *v = verdict_of(out);
		t.lines++;
		t.allow += strcmp(v, "allow") == 0;
		t.audit += strcmp(v, "audit") == 0;
		t.deny += strcmp(v, "deny") == 0;
		t.kill += strcmp(v, "kill") == 0;
		check(line, v, out);
		free(out);
		tg_strv_free(argv);
	}
	free(line);
	fclose(f);
	tg_policy_free(p);
	return t;
}

static void must_pass(const char *line, const char *v, const char *json)
{
	cr_expect(strcmp(v, "allow") == 0 || strcmp(v, "audit") == 0, "benign '%s' was denied: %s", line,
	          json);
}

static void must_stop(const char *line, const char *v, const char *json)
{
	cr_expect(strcmp(v, "deny") == 0 || strcmp(v, "kill") == 0, "destructive '%s' was allowed: %s",
	          line, json);
}

Test(corpus, benign_commands_are_allowed)
{
	struct tally t = run_corpus("benign.txt", must_pass);
	fprintf(stderr, "benign corpus: %zu commands, %zu allowed, %zu audited, %zu denied, %zu killed\n",
	        t.lines, t.allow, t.audit, t.deny, t.kill);
	cr_expect_geq(t.lines, 200);
	cr_expect_eq(t.deny + t.kill, 0);
}

Test(corpus, destructive_commands_are_stopped)
{
	struct tally t = run_corpus("destructive.txt", must_stop);
	fprintf(stderr, "destructive corpus: %zu commands, %zu denied, %zu killed, %zu allowed\n", t.lines,
	        t.deny, t.kill, t.allow + t.audit);
	cr_expect_geq(t.lines, 150);
	cr_expect_eq(t.deny + t.kill, t.lines);
}

/* Off the machine (issue 14): clusters, clouds, forges, database servers,
 * registries and the machine's services, and the same tools' everyday use. */
Test(corpus, offmachine_destructive_commands_are_stopped)
{
	struct tally t = run_corpus("offmachine.txt", must_stop);
	fprintf(stderr, "off-machine corpus: %zu commands, %zu denied, %zu killed, %zu allowed\n",
	        t.lines, t.deny, t.kill, t.allow + t.audit);
	cr_expect_geq(t.lines, 150);
	cr_expect_eq(t.deny + t.kill, t.lines);
}

Test(corpus, offmachine_benign_commands_are_allowed)
{
	struct tally t = run_corpus("offmachine-benign.txt", must_pass);
	fprintf(stderr, "off-machine benign corpus: %zu commands, %zu allowed, %zu audited, %zu denied\n",
	        t.lines, t.allow, t.audit, t.deny + t.kill);
	cr_expect_geq(t.lines, 150);
	cr_expect_eq(t.deny + t.kill, 0);
}
