/* glob.c — a small, bounded glob matcher (see glob.h for the dialect).
 *
 * fnmatch(3) would do most of this, but it cannot validate a pattern (a policy
 * must reject "[a-" with a column number), has no "**", and some libcs
 * backtrack exponentially on "*a*a*a*a*b"; a step budget keeps ours bounded.
 */
#include <errno.h>
#include <string.h>

#include "glob.h"

#define GLOB_STEP_BUDGET 200000

struct gm {
	enum tg_glob_mode mode;
	long steps;
};

/* Parse a bracket expression at p (p[0] == '['); return the offset just past
 * ']' or 0 when unterminated. */
static size_t class_len(const char *p)
{
	size_t i = 1;
	if (p[i] == '!' || p[i] == '^')
		i++;
	if (p[i] == ']')
		i++;
	for (; p[i]; i++) {
		if (p[i] == '\\' && p[i + 1])
			i++;
		else if (p[i] == ']')
			return i + 1;
	}
	return 0;
}

static bool class_match(const char *p, size_t len, char c)
{
	size_t i = 1, end = len - 1;
	bool neg = false, hit = false;
	if (p[i] == '!' || p[i] == '^') {
		neg = true;
		i++;
	}
	bool first = true;
	while (i < end) {
		char lo = p[i];
		if (lo == '\\' && i + 1 < end)
			lo = p[++i];
		else if (lo == ']' && !first)
			break;
		first = false;
		i++;
		char hi = lo;
		if (i + 1 < end && p[i] == '-') {
			hi = p[i + 1];
			if (hi == '\\' && i + 2 < end)
				hi = p[i + 2], i++;
			i += 2;
		}
		if ((unsigned char)c >= (unsigned char)lo && (unsigned char)c <= (unsigned char)hi)
			hit = true;
	}
	return hit != neg;
}

int tg_glob_validate(const char *pat, size_t *errpos, const char **msg)
{
	size_t n = strlen(pat);
	*errpos = 0;
	if (n == 0) {
		*msg = "empty pattern";
		return -EINVAL;
	}
	if (n > TG_GLOB_MAX_LEN) {
		*msg = "pattern longer than 4096 characters";
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (pat[i] == '\\') {
			if (!pat[i + 1]) {
				*errpos = i;
				*msg = "trailing backslash";
				return -EINVAL;
			}
			i++;
		} else if (pat[i] == '[') {
			size_t l = class_len(pat + i);
			if (l == 0) {
				*errpos = i;
				*msg = "unterminated character class '['";
				return -EINVAL;
			}
			i += l - 1;
		} else if (pat[i] == '*' && pat[i + 1] == '*' && pat[i + 2] == '*') {
			*errpos = i;
			*msg = "'***' is not a pattern (use '*' or '**')";
			return -EINVAL;
		}
	}
	return 0;
}

bool tg_glob_is_literal(const char *pat)
{
	return strpbrk(pat, "*?[\\") == NULL;
}

static int gmatch(struct gm *g, const char *p, const char *s)
{
	for (;;) {
		if (++g->steps > GLOB_STEP_BUDGET)
			return TG_GLOB_TOO_COMPLEX;
		switch (*p) {
		case '\0':
			return *s == '\0';
		case '*': {
			bool dbl = p[1] == '*';
			bool cross = dbl || g->mode == TG_GLOB_STRING;
			const char *rest = p + (dbl ? 2 : 1);
			if (dbl && *rest == '\0')
				return cross || !strchr(s, '/');
			/* "**" + "/" may stand for zero directories. */
			if (dbl && *rest == '/') {
				int r = gmatch(g, rest + 1, s);
				if (r != 0)
					return r;
			}
			for (const char *t = s;; t++) {
				int r = gmatch(g, rest, t);
				if (r != 0)
					return r;
				if (!*t || (!cross && *t == '/'))
					return 0;
			}
		}
		case '?':
			if (!*s || (g->mode == TG_GLOB_PATH && *s == '/'))
				return 0;
			p++, s++;
			break;
		case '[': {
			size_t l = class_len(p);
			if (l == 0)
				return 0;
			if (!*s || (g->mode == TG_GLOB_PATH && *s == '/') || !class_match(p, l, *s))
				return 0;
			p += l, s++;
			break;
		}
		case '/':
			/* A trailing slash-star-star also names the directory itself. */
			if (*s == '\0' && strcmp(p, "/**") == 0)
				return 1;
			/* fallthrough */
		default:
			if (*p == '\\')
				p++;
			if (*p != *s)
				return 0;
			p++, s++;
			break;
		}
	}
}

/* One non-star pattern element at p against *s; its length in *plen. */
static bool single(const char *p, const char *s, size_t *plen)
{
	if (!*s)
		return false;
	if (*p == '?') {
		*plen = 1;
		return true;
	}
	if (*p == '[') {
		size_t l = class_len(p);
		*plen = l;
		return l && class_match(p, l, *s);
	}
	if (*p == '\\') {
		*plen = 2;
		return p[1] == *s;
	}
	*plen = 1;
	return *p == *s;
}

/* In string mode every star matches anything, so the classic linear-time
 * algorithm applies: only the last star ever needs to backtrack. */
static int smatch(const char *p, const char *s)
{
	const char *star_p = NULL, *star_s = NULL;
	size_t plen;
	while (*s) {
		if (*p == '*') {
			while (*p == '*')
				p++;
			if (!*p)
				return 1;
			star_p = p, star_s = s;
			continue;
		}
		if (*p && single(p, s, &plen)) {
			p += plen, s++;
			continue;
		}
		if (!star_p)
			return 0;
		p = star_p, s = ++star_s;
	}
	while (*p == '*')
		p++;
	return !*p || strcmp(p, "/**") == 0;
}

enum tg_glob_result tg_glob_match(const char *pat, const char *str, enum tg_glob_mode mode)
{
	struct gm g = { .mode = mode, .steps = 0 };
	if (!pat || !str)
		return TG_GLOB_NOMATCH;
	if (mode == TG_GLOB_STRING)
		return smatch(pat, str) ? TG_GLOB_MATCH : TG_GLOB_NOMATCH;
	int r = gmatch(&g, pat, str);
	return r < 0 ? TG_GLOB_TOO_COMPLEX : r ? TG_GLOB_MATCH : TG_GLOB_NOMATCH;
}
