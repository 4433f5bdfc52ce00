/* argv.h — command lines as a policy sees them.
 *
 * A rule says "rm with -r and -f and a target under /usr"; a real command line
 * says "rm -fr -- /usr/../usr/" or "rm --recursive --force /usr". This module
 * turns argv into flags and positionals the way GNU getopt and git's option
 * parser read them (flags anywhere before "--", combined short flags, long
 * flags with "=value", options that take a value), and normalises path-like
 * arguments lexically.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct tg_flag {
	char short_name;        /* 'r' for -r, 0 for a long flag */
	const char *long_name;  /* "recursive" for --recursive (not NUL-terminated at '=') */
	size_t long_len;
	const char *value;      /* -Cdir / -C dir / --git-dir=x / --git-dir x; else NULL */
};

/* Positionals are kept as a bitmap over argv, one bit a word: a rule
 * matched against an xargs batch of 100,000 words then writes 12 KiB, not
 * an 800 KiB array of pointers per rule (fresh pages, a fault each). */
struct tg_cmdline {
	struct tg_flag *flags;
	size_t nflags;
	char *const *argv;      /* the words parsed (borrowed) */
	size_t argc;
	uint64_t *posmap;       /* bit i set: argv[i] is a positional */
	size_t npos;
	const char *pos0;       /* the first positional, or NULL */
};

/* Parse argv[1..argc-1]. value_flags ("-C", "--git-dir") name the options
 * that consume a value. Strings are borrowed from argv. 0 or -ENOMEM. */
int tg_cmdline_parse(char *const *argv, size_t argc, char *const *value_flags, size_t nvalue_flags,
                     struct tg_cmdline *out);
void tg_cmdline_clear(struct tg_cmdline *c);
/* The index in argv of the first positional at or after index i, or 0 when
 * there is none (argv[0] is never one):
 * for (size_t i = tg_cmdline_pos_from(c, 1); i; i = tg_cmdline_pos_from(c, i + 1)). */
size_t tg_cmdline_pos_from(const struct tg_cmdline *c, size_t i);

/* True when the command line carries the flag spelled `spec` ("-r", "--force").
 * A long flag given as an unambiguous-looking prefix ("--forc") counts, as
 * getopt_long and git accept those. */
bool tg_cmdline_has_flag(const struct tg_cmdline *c, const char *spec);

/* Split a shell-quoted line into words ('single', "double", backslash).
 * No expansion happens. 0, -EINVAL (unterminated quote) or -ENOMEM. */
int tg_argv_split(const char *line, char ***out);

/* Lexically normalise an absolute path into buf ("//", ".", ".." and a
 * trailing "/" removed; ".." never climbs above "/"). 0 or -ENAMETOOLONG /
 * -EINVAL (not absolute). */
int tg_normpath(const char *abs, char *buf, size_t bufsz);

/* Normalise a command-line argument that names a path: "~", "~/x", "$HOME",
 * "${HOME}" expand to home; relative ones are joined to cwd. 0 or -errno. */
int tg_arg_to_path(const char *arg, const char *cwd, const char *home, char *buf, size_t bufsz);

/* Expand a leading "~", "$HOME", "${HOME}" or "$WORKSPACE" in a policy
 * pattern. 0, or -ENOENT when the variable is unknown (home NULL). */
int tg_expand_pattern(const char *pat, const char *home, const char *workspace, char *buf,
                      size_t bufsz);
