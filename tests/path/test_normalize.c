/* test_normalize.c — the pure string functions of core/base/path.h. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/path.h"

struct pair {
	const char *in, *want;
};

static const struct pair normalize_cases[] = {
	{ "/", "/" },
	{ "//", "/" },
	{ "///", "/" },
	{ "/.", "/" },
	{ "/..", "/" },
	{ "/../..", "/" },
	{ "/a", "/a" },
	{ "/a/", "/a" },
	{ "/a//", "/a" },
	{ "//a//b//", "/a/b" },
	{ "/a/./b", "/a/b" },
	{ "/a/b/.", "/a/b" },
	{ "/a/b/..", "/a" },
	{ "/a/b/../", "/a" },
	{ "/a/b/../..", "/" },
	{ "/a/b/../../..", "/" },
	{ "/a/../../b", "/b" },
	{ "/../a", "/a" },
	{ "/./a/./", "/a" },
	{ "/...", "/..." },
	{ "/a/.../b", "/a/.../b" },
	{ "/..a/b..", "/..a/b.." },
	{ "/.a/.b", "/.a/.b" },
	{ "/a/b/c/../../d", "/a/d" },
	{ "/a/./../b/./c/..", "/b" },
	{ "/home/u/ws/../ws/./x", "/home/u/ws/x" },
	{ "/a b/c\td", "/a b/c\td" },
	{ "/ü/ñ", "/ü/ñ" },
	{ "/a/b/c/d/e/f/../../../../../../g", "/g" },
	{ "/tmp//x/./y/../z/", "/tmp/x/z" },
};

Test(normalize, table)
{
	for (size_t i = 0; i < sizeof(normalize_cases) / sizeof(normalize_cases[0]); i++) {
		char *got = tg_path_normalize(normalize_cases[i].in);
		cr_assert_not_null(got, "normalize(%s)", normalize_cases[i].in);
		cr_expect_str_eq(got, normalize_cases[i].want, "normalize(%s)", normalize_cases[i].in);
		free(got);
	}
}

Test(normalize, rejects_relative_and_empty)
{
	const char *bad[] = { "", "a", "a/b", "./a", "../a", "~/x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		cr_expect_null(tg_path_normalize(bad[i]), "normalize(%s)", bad[i]);
		cr_expect_eq(errno, EINVAL, "errno for %s", bad[i]);
	}
	errno = 0;
	cr_expect_null(tg_path_normalize(NULL));
	cr_expect_eq(errno, EINVAL);
}

Test(normalize, long_path)
{
	char buf[8192] = "/";
	for (int i = 0; i < 1000; i++)
		strcat(buf, "ab/");
	char *got = tg_path_normalize(buf);
	cr_assert_not_null(got);
	cr_expect_eq(strlen(got), 3000);
	free(got);
}

struct triple {
	const char *base, *rel, *want;
};

static const struct triple join_cases[] = {
	{ "/a/b", "c", "/a/b/c" },
	{ "/a/b", "c/", "/a/b/c" },
	{ "/a/b", "./c", "/a/b/c" },
	{ "/a/b", "../c", "/a/c" },
	{ "/a/b", "../../../c", "/c" },
	{ "/a/b", "", "/a/b" },
	{ "/a/b", ".", "/a/b" },
	{ "/a/b", "..", "/a" },
	{ "/a/b", "/x/y", "/x/y" },
	{ "/a/b", "/x/../y", "/y" },
	{ "/", "x", "/x" },
	{ "/", "..", "/" },
	{ "/a/./b/", "c//d", "/a/b/c/d" },
	{ "/a/b/..", "c", "/a/c" },
	{ NULL, "/abs", "/abs" },
};

Test(join, table)
{
	for (size_t i = 0; i < sizeof(join_cases) / sizeof(join_cases[0]); i++) {
		const struct triple *c = &join_cases[i];
		char *got = tg_path_join(c->base, c->rel);
		cr_assert_not_null(got, "join(%s, %s)", c->base, c->rel);
		cr_expect_str_eq(got, c->want, "join(%s, %s)", c->base, c->rel);
		free(got);
	}
}

Test(join, errors)
{
	errno = 0;
	cr_expect_null(tg_path_join("rel", "x"));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(tg_path_join(NULL, "x"));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(tg_path_join("/a", NULL));
	cr_expect_eq(errno, EINVAL);
}

struct under {
	const char *path, *dir;
	bool want;
};

static const struct under under_cases[] = {
	{ "/a/b", "/a", true },
	{ "/a", "/a", true },
	{ "/a/b/c", "/a/b", true },
	{ "/ab", "/a", false },
	{ "/a", "/ab", false },
	{ "/a", "/a/b", false },
	{ "/", "/a", false },
	{ "/a", "/", true },
	{ "/", "/", true },
	{ "/a/b", "/a/", true },
	{ "/home/u/ws-other", "/home/u/ws", false },
	{ "/home/u/ws/.git", "/home/u/ws", true },
	{ "a/b", "a", false },
	{ "/a/b", "a", false },
};

Test(is_under, table)
{
	for (size_t i = 0; i < sizeof(under_cases) / sizeof(under_cases[0]); i++) {
		const struct under *c = &under_cases[i];
		cr_expect_eq(tg_path_is_under(c->path, c->dir), c->want, "is_under(%s, %s)", c->path, c->dir);
	}
	cr_expect_not(tg_path_is_under(NULL, "/"));
	cr_expect_not(tg_path_is_under("/", NULL));
}

static const struct triple home_cases[] = {
	{ "/home/u", "~", "/home/u" },
	{ "/home/u", "~/", "/home/u/" },
	{ "/home/u", "~/.ssh", "/home/u/.ssh" },
	{ "/home/u/", "~/.ssh", "/home/u/.ssh" },
	{ "/home/u", "$HOME", "/home/u" },
	{ "/home/u", "$HOME/.aws/credentials", "/home/u/.aws/credentials" },
	{ "/home/u", "${HOME}/.config", "/home/u/.config" },
	{ "/root", "~/x", "/root/x" },
	{ "/", "~/x", "/x" },
	{ "/", "~", "/" },
	{ "/home/u", "~user/x", "~user/x" },
	{ "/home/u", "$HOMEDIR/x", "$HOMEDIR/x" },
	{ "/home/u", "/etc/~", "/etc/~" },
	{ "/home/u", "a/~/b", "a/~/b" },
	{ "/home/u", "/abs/$HOME", "/abs/$HOME" },
	{ "/home/u", "", "" },
	{ NULL, "/no/home/needed", "/no/home/needed" },
};

Test(expand_home, table)
{
	for (size_t i = 0; i < sizeof(home_cases) / sizeof(home_cases[0]); i++) {
		const struct triple *c = &home_cases[i];
		char *got = tg_path_expand_home(c->rel, c->base);
		cr_assert_not_null(got, "expand(%s, %s)", c->rel, c->base);
		cr_expect_str_eq(got, c->want, "expand(%s, %s)", c->rel, c->base);
		free(got);
	}
}

Test(expand_home, no_home_fails_closed)
{
	errno = 0;
	cr_expect_null(tg_path_expand_home("~/.ssh", NULL));
	cr_expect_eq(errno, ENOENT);
	errno = 0;
	cr_expect_null(tg_path_expand_home("$HOME", ""));
	cr_expect_eq(errno, ENOENT);
}
