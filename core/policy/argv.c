/* argv.c — argv into flags and positionals; lexical path normalisation. */
#include <errno.h>
#include <string.h>

#include "argv.h"
#include "base/util.h"

static bool is_value_flag(char *const *vf, size_t n, const char *name, size_t len, bool is_long)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = vf[i];
		if (is_long && strncmp(s, "--", 2) == 0 && strlen(s + 2) == len &&
		    strncmp(s + 2, name, len) == 0)
			return true;
		if (!is_long && s[0] == '-' && s[1] == name[0] && s[1] != '-' && s[2] == '\0')
			return true;
	}
	return false;
}

static int push_flag(struct tg_cmdline *c, size_t *cap, struct tg_flag f)
{
	if (c->nflags == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct tg_flag *v = realloc(c->flags, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->flags = v;
		*cap = ncap;
	}
	c->flags[c->nflags++] = f;
	return 0;
}

/* "-rfC dir": each letter a flag until one that takes a value. */
static int parse_short(struct tg_cmdline *c, size_t *cap, char *const *argv, size_t argc, size_t *i,
                       char *const *vf, size_t nvf)
{
	const char *tok = argv[*i];
	for (size_t k = 1; tok[k]; k++) {
		struct tg_flag f = { .short_name = tok[k] };
		if (is_value_flag(vf, nvf, tok + k, 1, false)) {
			if (tok[k + 1])
				f.value = tok + k + 1;
			else if (*i + 1 < argc)
				f.value = argv[++*i];
			return push_flag(c, cap, f);
		}
		int r = push_flag(c, cap, f);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_long(struct tg_cmdline *c, size_t *cap, char *const *argv, size_t argc, size_t *i,
                      char *const *vf, size_t nvf)
{
	const char *name = argv[*i] + 2;
	const char *eq = strchr(name, '=');
	struct tg_flag f = { .long_name = name, .long_len = eq ? (size_t)(eq - name) : strlen(name) };
	if (eq)
		f.value = eq + 1;
	else if (is_value_flag(vf, nvf, name, f.long_len, true) && *i + 1 < argc)
		f.value = argv[++*i];
	return push_flag(c, cap, f);
}

int tg_cmdline_parse(char *const *argv, size_t argc, char *const *vf, size_t nvf,
                     struct tg_cmdline *out)
{
	size_t cap = 0;
	bool opts = true;
	memset(out, 0, sizeof(*out));
	out->argv = argv;
	out->argc = argc;
	out->posmap = calloc(argc / 64 + 1, sizeof(*out->posmap));
	if (!out->posmap)
		return -ENOMEM;
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		int r = 0;
		if (!a)
			break;
		if (opts && strcmp(a, "--") == 0)
			opts = false;
		else if (opts && a[0] == '-' && a[1] == '-')
			r = parse_long(out, &cap, argv, argc, &i, vf, nvf);
		else if (opts && a[0] == '-' && a[1])
			r = parse_short(out, &cap, argv, argc, &i, vf, nvf);
		else {
			out->posmap[i / 64] |= UINT64_C(1) << (i % 64);
			if (!out->npos++)
				out->pos0 = a;
		}
		if (r < 0) {
			tg_cmdline_clear(out);
			return r;
		}
	}
	return 0;
}

void tg_cmdline_clear(struct tg_cmdline *c)
{
	free(c->flags);
	free(c->posmap);
	memset(c, 0, sizeof(*c));
}

size_t tg_cmdline_pos_from(const struct tg_cmdline *c, size_t i)
{
	if (!c->posmap)
		return 0;
	while (i < c->argc) {
		uint64_t w = c->posmap[i / 64] >> (i % 64);
		if (w)
			return i + (size_t)__builtin_ctzll(w);
		i = (i / 64 + 1) * 64;
	}
	return 0;
}

bool tg_cmdline_has_flag(const struct tg_cmdline *c, const char *spec)
{
	bool is_long = strncmp(spec, "--", 2) == 0;
	const char *name = spec + (is_long ? 2 : 1);
	size_t nlen = strlen(name);
	for (size_t i = 0; i < c->nflags; i++) {
		const struct tg_flag *f = &c->flags[i];
		if (!is_long && f->short_name && f->short_name == name[0])
			return true;
		/* getopt_long and git both accept a unique prefix ("--forc"). */
		if (is_long && f->long_name && f->long_len > 0 && f->long_len <= nlen &&
		    strncmp(f->long_name, name, f->long_len) == 0)
			return true;
	}
	return false;
}

static int push_word(char ***out, size_t *n, char *buf, size_t len)
{
	char **v = realloc(*out, (*n + 2) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	*out = v;
	v[*n] = tg_strndup(buf, len);
	if (!v[*n])
		return -ENOMEM;
	v[++*n] = NULL;
	return 0;
}

int tg_argv_split(const char *line, char ***out)
{
	size_t len = strlen(line), n = 0, w = 0;
	_cleanup_free_ char *buf = malloc(len + 1);
	_cleanup_strv_ char **v = calloc(1, sizeof(*v));
	bool inword = false;
	if (!buf || !v)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		char ch = line[i];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
			if (inword && push_word(&v, &n, buf, w) < 0)
				return -ENOMEM;
			inword = false, w = 0;
			continue;
		}
		inword = true;
		if (ch == '\'') {
			const char *e = strchr(line + i + 1, '\'');
			if (!e)
				return -EINVAL;
			memcpy(buf + w, line + i + 1, (size_t)(e - line - i - 1));
			w += (size_t)(e - line - i - 1);
			i = (size_t)(e - line);
		} else if (ch == '"') {
			for (i++; i < len && line[i] != '"'; i++) {
				if (line[i] == '\\' && strchr("\\\"$`", line[i + 1]) && line[i + 1])
					i++;
				buf[w++] = line[i];
			}
			if (i >= len)
				return -EINVAL;
		} else if (ch == '\\') {
			if (++i >= len)
				return -EINVAL;
			buf[w++] = line[i];
		} else {
			buf[w++] = ch;
		}
	}
	if (inword && push_word(&v, &n, buf, w) < 0)
		return -ENOMEM;
	*out = steal_pointer(&v);
	return 0;
}

int tg_normpath(const char *abs, char *buf, size_t bufsz)
{
	size_t w = 0;
	if (!abs || abs[0] != '/' || bufsz < 2)
		return -EINVAL;
	buf[w++] = '/';
	for (const char *p = abs; *p;) {
		while (*p == '/')
			p++;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t l = (size_t)(e - p);
		if (l == 0 || (l == 1 && p[0] == '.')) {
			/* nothing */
		} else if (l == 2 && p[0] == '.' && p[1] == '.') {
			while (w > 1 && buf[w - 1] != '/')
				w--;
			if (w > 1)
				w--;
		} else {
			if (w + l + 2 > bufsz)
				return -ENAMETOOLONG;
			if (w > 1)
				buf[w++] = '/';
			memcpy(buf + w, p, l);
			w += l;
		}
		p = e;
	}
	buf[w] = '\0';
	return 0;
}

/* Length of a leading home reference ("~", "$HOME", "${HOME}") followed by
 * '/' or the end; 0 when there is none. */
static size_t home_prefix(const char *s)
{
	static const char *const forms[] = { "${HOME}", "$HOME", "~" };
	for (size_t i = 0; i < TG_ARRAY_SIZE(forms); i++) {
		size_t l = strlen(forms[i]);
		if (strncmp(s, forms[i], l) == 0 && (s[l] == '/' || s[l] == '\0'))
			return l;
	}
	return 0;
}

static int join_into(const char *base, const char *rest, char *buf, size_t bufsz)
{
	_cleanup_free_ char *j = tg_asprintf("%s/%s", base, rest);
	if (!j)
		return -ENOMEM;
	return tg_normpath(j, buf, bufsz);
}

int tg_arg_to_path(const char *arg, const char *cwd, const char *home, char *buf, size_t bufsz)
{
	size_t hl = home_prefix(arg);
	if (hl && home)
		return join_into(home, arg + hl, buf, bufsz);
	if (arg[0] == '/')
		return tg_normpath(arg, buf, bufsz);
	if (!cwd || cwd[0] != '/')
		return -EINVAL;
	return join_into(cwd, arg, buf, bufsz);
}

int tg_expand_pattern(const char *pat, const char *home, const char *workspace, char *buf,
                      size_t bufsz)
{
	size_t hl = home_prefix(pat);
	const char *base = NULL, *rest = pat;
	if (hl) {
		base = home, rest = pat + hl;
	} else if (strncmp(pat, "$WORKSPACE", 10) == 0 && (pat[10] == '/' || pat[10] == '\0')) {
		base = workspace, rest = pat + 10;
	} else {
		if (strlen(pat) + 1 > bufsz)
			return -ENAMETOOLONG;
		strcpy(buf, pat);
		return 0;
	}
	if (!base)
		return -ENOENT;
	/* The base is a real directory name: escape its glob metacharacters. */
	size_t w = 0;
	for (const char *b = strcmp(base, "/") == 0 ? "" : base; *b; b++) {
		if (w + 3 > bufsz)
			return -ENAMETOOLONG;
		if (strchr("*?[\\", *b))
			buf[w++] = '\\';
		buf[w++] = *b;
	}
	if (w + strlen(rest) + 2 > bufsz)
		return -ENAMETOOLONG;
	if (w == 0 && rest[0] == '\0')
		buf[w++] = '/';
	strcpy(buf + w, rest);
	return 0;
}
