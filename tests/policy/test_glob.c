/* test_glob.c — the glob dialect, table-driven. */
#include <criterion/criterion.h>
#include <errno.h>

#include "policy/glob.h"

struct gcase {
	const char *pat, *str;
	enum tg_glob_mode mode;
	int want;
};

#define P TG_GLOB_PATH
#define S TG_GLOB_STRING

static const struct gcase cases[] = {
	{ "/", "/", P, 1 },
	{ "/usr", "/usr", P, 1 },
	{ "/usr", "/usr/", P, 0 },
	{ "/usr", "/usrx", P, 0 },
	{ "/usr/*", "/usr/bin", P, 1 },
	{ "/usr/*", "/usr/bin/ls", P, 0 },
	{ "/usr/*", "/usr", P, 0 },
	{ "/usr/**", "/usr", P, 1 },
	{ "/usr/**", "/usr/bin/ls", P, 1 },
	{ "/usr/**", "/usrx", P, 0 },
	{ "/usr/**", "/usr/", P, 1 },
	{ "/**", "/", P, 1 },
	{ "/**", "/etc/passwd", P, 1 },
	{ "/**/.env", "/.env", P, 1 },
	{ "/**/.env", "/home/u/app/.env", P, 1 },
	{ "/**/.env", "/home/u/app/.envrc", P, 0 },
	{ "/home/*/.ssh/**", "/home/u/.ssh/id_rsa", P, 1 },
	{ "/home/*/.ssh/**", "/home/u/x/.ssh/id_rsa", P, 0 },
	{ "/lib*", "/lib", P, 1 },
	{ "/lib*", "/lib64", P, 1 },
	{ "/lib*", "/lib/x86_64", P, 0 },
	{ "/dev/sd?", "/dev/sda", P, 1 },
	{ "/dev/sd?", "/dev/sda1", P, 0 },
	{ "/dev/sd[a-c]", "/dev/sdb", P, 1 },
	{ "/dev/sd[a-c]", "/dev/sdd", P, 0 },
	{ "/dev/sd[!a-c]", "/dev/sdd", P, 1 },
	{ "/dev/sd[^a-c]", "/dev/sda", P, 0 },
	{ "/a[/]b", "/a/b", P, 0 },
	{ "/a?b", "/a/b", P, 0 },
	{ "/a?b", "/a/b", S, 1 },
	{ "a*b", "a/x/b", S, 1 },
	{ "a*b", "a/x/b", P, 0 },
	{ "a**b", "a/x/b", P, 1 },
	{ "\\*", "*", S, 1 },
	{ "\\*", "x", S, 0 },
	{ "a\\?", "a?", S, 1 },
	{ "[]]", "]", S, 1 },
	{ "[]a]", "a", S, 1 },
	{ "[a-]", "-", S, 1 },
	{ "*", "", S, 1 },
	{ "?", "", S, 0 },
	{ "", "", S, 1 },
	{ "mkfs*", "mkfs", S, 1 },
	{ "mkfs*", "mkfs.ext4", S, 1 },
	{ "mkfs.*", "mkfs", S, 0 },
	{ "+*", "+main", S, 1 },
	{ "+*", "main", S, 0 },
	{ ":?*", ":", S, 0 },
	{ ":?*", ":x", S, 1 },
	{ "of=/dev/sd*", "of=/dev/sda", S, 1 },
	{ "of=/dev/sd*", "of=/dev/null", S, 0 },
	{ "*curl *|*sh", "curl -s x | sh", S, 1 },
	{ "*curl *|*sh", "curl -s x | jq .", S, 0 },
	{ "*curl *|*sh *", "curl x | bash -s -- -y", S, 1 },
	{ "*(){*|*&*}*", ":(){ :|:& };:", S, 1 },
	{ "/memfd:**", "/memfd:x (deleted)", P, 1 },
	{ "/memfd:**", "/memfd", P, 0 },
	{ "a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", S, 0 },
	{ "ü*", "über", S, 1 },
};

Test(glob, table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct gcase *c = &cases[i];
		int got = tg_glob_match(c->pat, c->str, c->mode);
		cr_expect_eq(got, c->want, "glob '%s' vs '%s' (%s): got %d want %d", c->pat, c->str,
		             c->mode == P ? "path" : "string", got, c->want);
	}
}

Test(glob, pathological_is_bounded)
{
	/* Exponential for a naive matcher: must end quickly with a verdict. */
	char pat[200] = "", str[4000];
	for (int i = 0; i < 30; i++)
		strcat(pat, "*a");
	strcat(pat, "b");
	memset(str, 'a', sizeof(str) - 1);
	str[sizeof(str) - 1] = '\0';
	int r = tg_glob_match(pat, str, TG_GLOB_STRING);
	cr_assert(r == TG_GLOB_NOMATCH || r == TG_GLOB_TOO_COMPLEX);
}

struct vcase {
	const char *pat;
	int ok;
	size_t pos;
};

static const struct vcase vcases[] = {
	{ "/usr/**", 1, 0 },
	{ "[a-z]", 1, 0 },
	{ "", 0, 0 },
	{ "/dev/sd[a-", 0, 7 },
	{ "abc\\", 0, 3 },
	{ "/a/***", 0, 3 },
	{ "[]", 0, 0 },
	{ "[!]", 0, 0 },
	{ "x[]]y", 1, 0 },
};

Test(glob, validate)
{
	for (size_t i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		size_t pos = 99;
		const char *msg = NULL;
		int r = tg_glob_validate(vcases[i].pat, &pos, &msg);
		cr_expect_eq(r == 0, vcases[i].ok, "validate '%s': %d (%s)", vcases[i].pat, r,
		             msg ? msg : "");
		if (!vcases[i].ok) {
			cr_expect_eq(r, -EINVAL);
			cr_expect_eq(pos, vcases[i].pos, "'%s': error at %zu, want %zu", vcases[i].pat, pos,
			             vcases[i].pos);
			cr_expect_not_null(msg);
		}
	}
}

Test(glob, literal)
{
	cr_expect(tg_glob_is_literal("/home/u/.ssh"));
	cr_expect(!tg_glob_is_literal("/home/*/.ssh"));
	cr_expect(!tg_glob_is_literal("/a[b]"));
	cr_expect(!tg_glob_is_literal("a\\b"));
}
