/* test_argv.c — shell-word splitting, command-line flags, path normalising. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "policy/argv.h"
#include "base/util.h"

struct scase {
	const char *line;
	int n;                  /* words, or -1 for an error */
	const char *w[6];
};

static const struct scase scases[] = {
	{ "rm -rf /", 3, { "rm", "-rf", "/" } },
	{ "  a   b  ", 2, { "a", "b" } },
	{ "echo 'a b' \"c d\"", 3, { "echo", "a b", "c d" } },
	{ "echo \"a\\\"b\" 'x'\"y\"z", 3, { "echo", "a\"b", "xyz" } },
	{ "echo a\\ b", 2, { "echo", "a b" } },
	{ "echo ''", 2, { "echo", "" } },
	{ "echo \"$HOME\"", 2, { "echo", "$HOME" } },
	{ "echo \"\\$x \\n\"", 2, { "echo", "$x \\n" } },
	{ "", 0, { NULL } },
	{ "echo 'open", -1, { NULL } },
	{ "echo \"open", -1, { NULL } },
	{ "echo \\", -1, { NULL } },
};

Test(argv, split)
{
	for (size_t i = 0; i < sizeof(scases) / sizeof(scases[0]); i++) {
		const struct scase *c = &scases[i];
		char **v = NULL;
		int r = tg_argv_split(c->line, &v);
		if (c->n < 0) {
			cr_expect_eq(r, -EINVAL, "'%s' should fail", c->line);
			continue;
		}
		cr_assert_eq(r, 0, "'%s' failed", c->line);
		cr_expect_eq((int)tg_strv_len(v), c->n, "'%s': %zu words", c->line, tg_strv_len(v));
		for (int k = 0; k < c->n && v[k]; k++)
			cr_expect_str_eq(v[k], c->w[k], "'%s' word %d", c->line, k);
		tg_strv_free(v);
	}
}

struct ncase {
	const char *in, *out;
};

static const struct ncase ncases[] = {
	{ "/", "/" },        { "//", "/" },          { "/usr/", "/usr" },
	{ "/usr//bin", "/usr/bin" }, { "/usr/./bin/.", "/usr/bin" }, { "/usr/../etc", "/etc" },
	{ "/..", "/" },      { "/../../x", "/x" },   { "/a/b/../../..", "/" },
	{ "/a/..b", "/a/..b" }, { "/a/.b/", "/a/.b" }, { "/a/b/c/../d", "/a/b/d" },
};

Test(argv, normpath)
{
	char buf[PATH_MAX];
	for (size_t i = 0; i < sizeof(ncases) / sizeof(ncases[0]); i++) {
		cr_assert_eq(tg_normpath(ncases[i].in, buf, sizeof(buf)), 0);
		cr_expect_str_eq(buf, ncases[i].out, "normpath(%s)", ncases[i].in);
	}
	cr_expect_eq(tg_normpath("rel", buf, sizeof(buf)), -EINVAL);
	cr_expect_eq(tg_normpath("/abcdef", buf, 4), -ENAMETOOLONG);
}

static const struct ncase acases[] = {
	{ "~", "/home/dev" },          { "~/", "/home/dev" },
	{ "~/.ssh", "/home/dev/.ssh" }, { "$HOME", "/home/dev" },
	{ "${HOME}/x/", "/home/dev/x" }, { "$HOMEx", "/w/s/$HOMEx" },
	{ "~user", "/w/s/~user" },      { "build", "/w/s/build" },
	{ "./build/", "/w/s/build" },   { "..", "/w" },
	{ "../..", "/" },               { "../../../..", "/" },
	{ "/usr/../etc/", "/etc" },     { ".", "/w/s" },
};

Test(argv, arg_to_path)
{
	char buf[PATH_MAX];
	for (size_t i = 0; i < sizeof(acases) / sizeof(acases[0]); i++) {
		cr_assert_eq(tg_arg_to_path(acases[i].in, "/w/s", "/home/dev", buf, sizeof(buf)), 0);
		cr_expect_str_eq(buf, acases[i].out, "arg_to_path(%s)", acases[i].in);
	}
	/* No home known: "~" is a relative name. */
	cr_assert_eq(tg_arg_to_path("~", "/w", NULL, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "/w/~");
}

Test(argv, expand_pattern)
{
	char buf[PATH_MAX];
	cr_assert_eq(tg_expand_pattern("~/.ssh/**", "/home/dev", "/ws", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "/home/dev/.ssh/**");
	cr_assert_eq(tg_expand_pattern("$WORKSPACE/.git/**", "/h", "/w[1]", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "/w\\[1]/.git/**");
	cr_assert_eq(tg_expand_pattern("~", "/", "/w", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "/");
	cr_expect_eq(tg_expand_pattern("~/x", NULL, "/w", buf, sizeof(buf)), -ENOENT);
	cr_assert_eq(tg_expand_pattern("/usr/*", NULL, NULL, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "/usr/*");
}

struct fcase {
	const char *line;
	const char *vf;          /* space-separated value flags */
	const char *flag;
	bool want;
};

static const struct fcase fcases[] = {
	{ "rm -rf x", "", "-r", true },
	{ "rm -rf x", "", "-f", true },
	{ "rm -fr x", "", "-r", true },
	{ "rm -r -f x", "", "-f", true },
	{ "rm -Rf x", "", "-R", true },
	{ "rm -Rf x", "", "-r", false },
	{ "rm --recursive --force x", "", "--recursive", true },
	{ "rm --recursive --force x", "", "-r", false },
	{ "rm --rec x", "", "--recursive", true },
	{ "rm --recursive=yes x", "", "--recursive", true },
	{ "rm x -rf", "", "-r", true },
	{ "rm -- -rf", "", "-r", false },
	{ "rm - x", "", "-r", false },
	{ "git push --force-with-lease", "", "--force", false },
	{ "git push --force-with-lease", "", "--force-with-lease", true },
	{ "git push --forc", "", "--force", true },
	{ "git push --follow-tags", "", "--force", false },
	{ "git commit -m -f", "-m", "-f", false },
	{ "git commit -m-f", "-m", "-f", false },
	{ "git commit -am -f", "-m", "-f", false },
	{ "git commit -m -f", "", "-f", true },
	{ "git -C -f push", "-C", "-f", false },
	{ "git --git-dir --force push", "--git-dir", "--force", false },
	{ "git --git-dir=--force push", "--git-dir", "--force", false },
	{ "tar -xzf a.tgz", "", "-z", true },
	{ "tar -xzf a.tgz", "-f", "-z", true },
	{ "ls -la", "", "-r", false },
};

Test(argv, flags)
{
	for (size_t i = 0; i < sizeof(fcases) / sizeof(fcases[0]); i++) {
		const struct fcase *c = &fcases[i];
		char **v = NULL, **vf = NULL;
		struct tg_cmdline cl;
		cr_assert_eq(tg_argv_split(c->line, &v), 0);
		cr_assert_eq(tg_argv_split(c->vf, &vf), 0);
		cr_assert_eq(tg_cmdline_parse(v, tg_strv_len(v), vf, tg_strv_len(vf), &cl), 0);
		cr_expect_eq(tg_cmdline_has_flag(&cl, c->flag), c->want, "'%s' [%s] has %s: want %d",
		             c->line, c->vf, c->flag, c->want);
		tg_cmdline_clear(&cl);
		tg_strv_free(v);
		tg_strv_free(vf);
	}
}

/* Positionals across the bitmap's 64-word boundaries: words 1..299, every
 * third a flag, from word 250 on after "--" all positional. */
Test(argv, positionals_past_one_word_of_bits)
{
	char *v[301];
	char buf[300][16];
	v[0] = "prog";
	for (size_t i = 1; i < 300; i++) {
		if (i == 250)
			snprintf(buf[i], sizeof(buf[i]), "--");
		else if (i % 3 == 0)
			snprintf(buf[i], sizeof(buf[i]), "-%c", (int)('a' + i % 26));
		else
			snprintf(buf[i], sizeof(buf[i]), "w%zu", i);
		v[i] = buf[i];
	}
	v[300] = NULL;
	struct tg_cmdline cl;
	cr_assert_eq(tg_cmdline_parse(v, 300, NULL, 0, &cl), 0);
	size_t want = 0, got = 0, prev = 0;
	for (size_t i = 1; i < 300; i++)
		want += i != 250 && (i > 250 || i % 3 != 0);
	for (size_t i = tg_cmdline_pos_from(&cl, 1); i; i = tg_cmdline_pos_from(&cl, i + 1), got++) {
		cr_assert_gt(i, prev);
		cr_assert(i != 250 && (i > 250 || i % 3 != 0), "word %zu (%s) is not a positional", i, v[i]);
		prev = i;
	}
	cr_expect_eq(got, want);
	cr_expect_eq(cl.npos, want);
	cr_expect_str_eq(cl.pos0, "w1");
	cr_expect_eq(tg_cmdline_pos_from(&cl, 300), 0);
	tg_cmdline_clear(&cl);
}

Test(argv, positionals)
{
	char **v = NULL, **vf = NULL;
	struct tg_cmdline cl;
	cr_assert_eq(tg_argv_split("git -C repo -c a=b push -o ci.skip origin +main -- -x", &v), 0);
	cr_assert_eq(tg_argv_split("-C -c -o", &vf), 0);
	cr_assert_eq(tg_cmdline_parse(v, tg_strv_len(v), vf, tg_strv_len(vf), &cl), 0);
	cr_assert_eq(cl.npos, 4);
	cr_expect_str_eq(cl.pos0, "push");
	const char *want[] = { "push", "origin", "+main", "-x" };
	size_t k = 0;
	for (size_t i = tg_cmdline_pos_from(&cl, 1); i; i = tg_cmdline_pos_from(&cl, i + 1), k++) {
		cr_assert_lt(k, 4);
		cr_expect_str_eq(cl.argv[i], want[k]);
	}
	cr_expect_eq(k, 4);
	cr_assert_eq(cl.nflags, 3);
	cr_expect_str_eq(cl.flags[0].value, "repo");
	cr_expect_str_eq(cl.flags[1].value, "a=b");
	cr_expect_str_eq(cl.flags[2].value, "ci.skip");
	tg_cmdline_clear(&cl);
	tg_strv_free(v);
	tg_strv_free(vf);
}

/* tg_shell_join (base/util.h) writes what tg_argv_split and a POSIX shell
 * read back as the same words: fixed cases, then random argvs over bytes
 * that quoting must handle (quotes, backslash, space, $, newline, high
 * bytes) and empty words. */
Test(argv, shell_join_fixed)
{
	static const struct { const char *w[4]; const char *line; } cases[] = {
		{ { "rm", "-rf", "/", NULL }, "rm -rf /" },
		{ { "echo", "a b", "", NULL }, "echo 'a b' ''" },
		{ { "it's", "$HOME", NULL }, "'it'\\''s' '$HOME'" },
		{ { "a=b,c:d@e%f+g", "x/y.z_-", NULL }, "a=b,c:d@e%f+g x/y.z_-" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *line = tg_shell_join((char *const *)cases[i].w);
		cr_assert_not_null(line);
		cr_expect_str_eq(line, cases[i].line);
		free(line);
	}
}

/* tg_shell_join_max: whole words while they fit, the program always, the
 * rest counted. */
Test(argv, shell_join_max_cuts_at_a_word)
{
	char *w[] = { "prog", "aaaa", "b c", "dd", NULL };
	char *line = tg_shell_join_max(w, tg_strv_len(w), 9);
	cr_assert_not_null(line);
	cr_expect_str_eq(line, "prog aaaa ... (2 more arguments)");
	free(line);
	line = tg_shell_join_max(w, tg_strv_len(w), 2);
	cr_expect_str_eq(line, "prog ... (3 more arguments)", "the program even when it alone is longer");
	free(line);
	line = tg_shell_join_max(w, tg_strv_len(w), 100);
	cr_expect_str_eq(line, "prog aaaa 'b c' dd");
	free(line);
	char *none[] = { NULL };
	line = tg_shell_join_max(none, 0, 0);
	cr_expect_str_eq(line, "");
	free(line);
}

Test(argv, shell_join_round_trips)
{
	static const char alphabet[] = "ab Z09'\"\\$ `\t\n;&|*?~#()=,:@%+-_./\xc3\xa9\x01";
	unsigned seed = 20261202;
	for (int round = 0; round < 2000; round++) {
		char *words[8] = { 0 };
		size_t n = 1 + rand_r(&seed) % 7;
		for (size_t i = 0; i < n; i++) {
			size_t len = rand_r(&seed) % 6;
			words[i] = calloc(len + 1, 1);
			for (size_t k = 0; k < len; k++)
				words[i][k] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		}
		char *line = tg_shell_join(words);
		cr_assert_not_null(line);
		char **back = NULL;
		cr_assert_eq(tg_argv_split(line, &back), 0, "round %d: cannot split [%s]", round, line);
		cr_assert_eq(tg_strv_len(back), n, "round %d: [%s] gave %zu words", round, line, tg_strv_len(back));
		for (size_t i = 0; i < n; i++)
			cr_assert_str_eq(back[i], words[i], "round %d word %zu in [%s]", round, i, line);
		tg_strv_free(back);
		free(line);
		for (size_t i = 0; i < n; i++)
			free(words[i]);
	}
}
