/* remote.c — command lines that run somewhere else, read as command lines.
 *
 * `ssh host 'rm -rf /'` execs nothing destructive here: the text goes to a
 * shell on the other machine. So the policy reads it as that shell would:
 * ssh's own options are skipped, the remaining words are joined with spaces
 * (what ssh sends), the text is split into simple commands, wrappers (env,
 * nice, timeout, sudo, xargs, sh -c ...) are looked through, and each
 * command is judged by the same exec rules as a local exec. What this
 * reader cannot parse (command substitution, heredocs, unbalanced quotes)
 * is refused when a destructive rule could match any of its words.
 */
#include "remote.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* ---- ssh's command line ---------------------------------------------------- */

static const char ssh_value_opts[] = "BbcDEeFIiJLlmOoPpQRSWw";

static const char *base_of(const char *s)
{
	const char *b = strrchr(s, '/');
	return b ? b + 1 : s;
}

bool tg_remote_is_ssh(const char *argv0)
{
	const char *b = base_of(argv0);
	return strcmp(b, "ssh") == 0 || strcmp(b, "autossh") == 0 || strcmp(b, "dbclient") == 0;
}

/* "-o RemoteCommand=..." / "-oRemoteCommand ..." (ssh_config keywords are
 * case-insensitive, '=' or space separated). */
static const char *remote_command_opt(const char *v)
{
	static const char key[] = "remotecommand";
	size_t l = sizeof(key) - 1;
	if (strncasecmp(v, key, l) != 0 || (v[l] != '=' && v[l] != ' ' && v[l] != '\t'))
		return NULL;
	v += l;
	while (*v == '=' || *v == ' ' || *v == '\t')
		v++;
	return v;
}

static char *join_words(char *const *w, size_t n)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(w[i]) + 1;
	char *s = malloc(len), *p = s;
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(w[i]);
		if (i)
			*p++ = ' ';
		memcpy(p, w[i], l);
		p += l;
	}
	*p = '\0';
	return s;
}

int tg_remote_ssh_command(char *const *argv, size_t argc, char **out)
{
	const char *rc_opt = NULL;
	bool no_cmd = false, autossh = strcmp(base_of(argv[0]), "autossh") == 0;
	size_t i = 1;
	*out = NULL;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		for (size_t k = 1; a[k]; k++) {
			char c = a[k];
			if (c == 'N' || c == 's' || c == 'V' || c == 'G')
				no_cmd = true; /* no command, a subsystem, or no connection */
			if (!strchr(ssh_value_opts, c) && !(autossh && c == 'M'))
				continue;
			const char *v = a[k + 1] ? a + k + 1 : (i + 1 < argc ? argv[++i] : "");
			if (c == 'o' && remote_command_opt(v))
				rc_opt = remote_command_opt(v);
			if (c == 'O')
				no_cmd = true; /* a control command for the master */
			break;
		}
	}
	if (no_cmd)
		return 0;
	i++; /* the host */
	if (i < argc)
		*out = join_words(argv + i, argc - i);
	else if (rc_opt && *rc_opt)
		*out = tg_strdup(rc_opt);
	else
		return 0;
	return *out ? 0 : -ENOMEM;
}

/* ---- a shell command line ---------------------------------------------------- */

struct splitter {
	const char *s;
	size_t i, len;
	char *buf;               /* the current word */
	size_t w;
	bool inword;
	bool redirect;           /* the next word is a redirection's target */
	char **cur;              /* words of the current simple command */
	size_t ncur;
	char ***cmds;            /* NULL-terminated list of argv vectors */
	size_t ncmds;
};

static int push_str(char ***v, size_t *n, char *s)
{
	char **nv = realloc(*v, (*n + 2) * sizeof(*nv));
	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	nv[(*n)++] = s;
	nv[*n] = NULL;
	*v = nv;
	return 0;
}

static int end_word(struct splitter *sp)
{
	if (!sp->inword)
		return 0;
	sp->inword = false;
	char *word = tg_strndup(sp->buf, sp->w);
	sp->w = 0;
	if (!word)
		return -ENOMEM;
	if (sp->redirect) {
		sp->redirect = false;
		free(word);
		return 0;
	}
	return push_str(&sp->cur, &sp->ncur, word);
}

static int end_command(struct splitter *sp)
{
	int r = end_word(sp);
	if (r < 0)
		return r;
	if (sp->redirect)
		return -EINVAL; /* "cmd >" with no target */
	if (!sp->ncur)
		return 0;
	char ***nv = realloc(sp->cmds, (sp->ncmds + 2) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	sp->cmds = nv;
	sp->cmds[sp->ncmds++] = sp->cur;
	sp->cmds[sp->ncmds] = NULL;
	sp->cur = NULL;
	sp->ncur = 0;
	return 0;
}

static int quoted(struct splitter *sp, char q)
{
	for (sp->i++; sp->i < sp->len && sp->s[sp->i] != q; sp->i++) {
		char c = sp->s[sp->i];
		if (q == '"' && (c == '`' || (c == '$' && sp->s[sp->i + 1] == '(')))
			return -EINVAL; /* command substitution */
		if (q == '"' && c == '\\' && sp->i + 1 < sp->len && strchr("\\\"$`\n", sp->s[sp->i + 1]))
			c = sp->s[++sp->i];
		sp->buf[sp->w++] = c;
	}
	return sp->i < sp->len ? 0 : -EINVAL;
}

/* > >> >| < <> >& <& with an optional fd before; "<<" (heredoc) and "<("
 * (process substitution) are not read. */
static int redirection(struct splitter *sp)
{
	const char *s = sp->s;
	if (s[sp->i] == '<' && (s[sp->i + 1] == '<' || s[sp->i + 1] == '('))
		return -EINVAL;
	if (s[sp->i] == '>' && s[sp->i + 1] == '(')
		return -EINVAL;
	/* "2>": the digits were read as a word of their own. */
	if (sp->inword) {
		bool digits = sp->w > 0;
		for (size_t k = 0; k < sp->w; k++)
			digits = digits && sp->buf[k] >= '0' && sp->buf[k] <= '9';
		if (digits)
			sp->inword = false, sp->w = 0;
		else if (end_word(sp) < 0)
			return -ENOMEM;
	}
	sp->i++;
	while (sp->i < sp->len && strchr("<>|&", sp->s[sp->i]))
		sp->i++;
	sp->i--;
	sp->redirect = true;
	return 0;
}

static bool at_word_start(const struct splitter *sp)
{
	return !sp->inword;
}

static int step(struct splitter *sp)
{
	char c = sp->s[sp->i];
	switch (c) {
	case ' ':
	case '\t':
		return end_word(sp);
	case '\n':
	case ';':
	case '&':
	case '|':
	case '(':
	case ')':
		return end_command(sp);
	case '\'':
	case '"':
		sp->inword = true;
		return quoted(sp, c);
	case '\\':
		if (++sp->i >= sp->len)
			return -EINVAL;
		if (sp->s[sp->i] == '\n')
			return 0;
		sp->inword = true;
		sp->buf[sp->w++] = sp->s[sp->i];
		return 0;
	case '`':
		return -EINVAL;
	case '$':
		if (sp->s[sp->i + 1] == '(')
			return -EINVAL;
		break;
	case '<':
	case '>':
		return redirection(sp);
	case '#':
		if (at_word_start(sp)) {
			while (sp->i + 1 < sp->len && sp->s[sp->i + 1] != '\n')
				sp->i++;
			return 0;
		}
		break;
	default:
		break;
	}
	sp->inword = true;
	sp->buf[sp->w++] = c;
	return 0;
}

void tg_remote_commands_free(char ***cmds)
{
	for (size_t i = 0; cmds && cmds[i]; i++)
		tg_strv_free(cmds[i]);
	free(cmds);
}

int tg_shell_commands(const char *text, char ****out)
{
	struct splitter sp = { .s = text, .len = strlen(text) };
	int r = 0;
	*out = NULL;
	sp.buf = malloc(sp.len + 1);
	sp.cmds = calloc(1, sizeof(*sp.cmds));
	if (!sp.buf || !sp.cmds)
		r = -ENOMEM;
	for (; r == 0 && sp.i < sp.len; sp.i++)
		r = step(&sp);
	if (r == 0)
		r = end_command(&sp);
	free(sp.buf);
	tg_strv_free(sp.cur);
	if (r < 0) {
		tg_remote_commands_free(sp.cmds);
		return r;
	}
	*out = sp.cmds;
	return 0;
}

char *tg_remote_flatten(const char *text)
{
	size_t len = strlen(text);
	char *out = malloc(len + 1);
	bool any = false;
	if (!out)
		return NULL;
	for (size_t i = 0; i <= len; i++) {
		char c = text[i];
		out[i] = c;
		if (c == '"') {
			out[i] = ' '; /* "$(cmd)" must not stay one quoted word */
		} else if (c == '`') {
			out[i] = ';';
			any = true;
		} else if ((c == '$' || c == '<' || c == '>') && text[i + 1] == '(') {
			out[i] = ';';
			out[++i] = ' ';
			any = true;
		}
	}
	if (!any) {
		free(out);
		return NULL;
	}
	return out;
}

/* ---- wrappers ------------------------------------------------------------------ */

/* Words a shell reads before the command itself. */
static bool is_prefix_word(const char *w)
{
	static const char *const kw[] = { "if", "then", "else", "elif", "while", "until", "do",
		                          "!", "{", "}", "time", "exec", "command", "builtin",
		                          "nohup", "setsid", "unbuffer", "fi", "done", NULL };
	for (size_t i = 0; kw[i]; i++)
		if (strcmp(w, kw[i]) == 0)
			return true;
	/* NAME=value */
	const char *eq = strchr(w, '=');
	if (!eq || eq == w)
		return false;
	for (const char *c = w; c < eq; c++)
		if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		      (c > w && *c >= '0' && *c <= '9')))
			return false;
	return true;
}

struct wrapper {
	const char *name;
	const char *value_opts;      /* short options that take a value */
	const char *const *long_value;
	int positional_skip;         /* positionals before the command (timeout's duration) */
};

static const char *const env_long[] = { "--unset", "--chdir", "--split-string", NULL };
static const char *const timeout_long[] = { "--signal", "--kill-after", NULL };
static const char *const sudo_long[] = { "--user", "--group", "--chdir", "--host", "--prompt",
	                                 "--role", "--type", "--other-user", "--close-from", NULL };
static const char *const xargs_long[] = { "--arg-file", "--delimiter", "--eof", "--replace",
	                                  "--max-lines", "--max-args", "--max-procs", "--max-chars",
	                                  "--process-slot-var", NULL };
static const char *const none_long[] = { NULL };

static const struct wrapper wrappers[] = {
	{ "env", "uCS", env_long, 0 },
	{ "nice", "n", none_long, 0 },
	{ "ionice", "cnpP", none_long, 0 },
	{ "timeout", "sk", timeout_long, 1 },
	{ "stdbuf", "ioe", none_long, 0 },
	{ "sudo", "ugCDhprtUT", sudo_long, 0 },
	{ "doas", "uC", none_long, 0 },
	{ "xargs", "adEILnPs", xargs_long, 0 },
	{ "chroot", "", none_long, 1 },
	{ "flock", "wE", none_long, 1 },
	{ "watch", "nd", none_long, 0 },
	{ "strace", "eoOpsSuU", none_long, 0 },
};

static bool in_strv(const char *const *v, const char *s, size_t len)
{
	for (size_t i = 0; v[i]; i++)
		if (strlen(v[i]) == len && strncmp(v[i], s, len) == 0)
			return true;
	return false;
}

/* Index of the command a wrapper runs, or 0 when argv is no wrapper (or
 * wraps nothing). */
size_t tg_remote_unwrap(char *const *argv, size_t argc)
{
	const char *name = base_of(argv[0]);
	const struct wrapper *wr = NULL;
	for (size_t i = 0; i < TG_ARRAY_SIZE(wrappers) && !wr; i++)
		if (strcmp(wrappers[i].name, name) == 0)
			wr = &wrappers[i];
	if (!wr)
		return 0;
	size_t i = 1;
	int skip = wr->positional_skip;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] == '-' && a[1] == '-') {
			size_t l = strcspn(a, "=");
			if (!a[l] && in_strv(wr->long_value, a, l))
				i++;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			/* -n5, -n 5, -oL: a value option takes the rest or the next word. */
			for (size_t k = 1; a[k]; k++) {
				if (!strchr(wr->value_opts, a[k]))
					continue;
				if (!a[k + 1])
					i++;
				break;
			}
			continue;
		}
		if (strcmp(name, "env") == 0 && strchr(a, '='))
			continue;
		if (skip > 0) {
			skip--;
			continue;
		}
		break;
	}
	for (; i < argc && skip > 0; skip--)
		i++;
	return i < argc ? i : 0;
}

/* `sh -c SCRIPT`: the script, or NULL. */
const char *tg_remote_shell_script(char *const *argv, size_t argc)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash",
		                              "busybox", NULL };
	if (!in_strv(shells, base_of(argv[0]), strlen(base_of(argv[0]))))
		return NULL;
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' && a[0] != '+')
			return NULL;
		if (a[1] != '-' && strchr(a, 'c'))
			return i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "-o") == 0 || strcmp(a, "+o") == 0 || strcmp(a, "-O") == 0)
			i++;
	}
	return NULL;
}

size_t tg_remote_skip_prefix(char *const *argv, size_t argc)
{
	size_t i = 0;
	while (i < argc && is_prefix_word(argv[i]))
		i++;
	return i;
}

/* Words of text a reader can cut out without a shell: names a destructive
 * rule could hold ("rm", "kubectl", "/sbin/mkfs.ext4"). */
int tg_remote_tokens(const char *text, char ***out)
{
	_cleanup_strv_ char **v = calloc(1, sizeof(*v));
	size_t n = 0;
	if (!v)
		return -ENOMEM;
	for (const char *p = text; *p;) {
		size_t l = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-/");
		if (l) {
			char *t = tg_strndup(p, l);
			if (!t || push_str(&v, &n, t) < 0)
				return -ENOMEM;
			p += l;
		} else {
			p++;
		}
	}
	*out = steal_pointer(&v);
	return 0;
}
