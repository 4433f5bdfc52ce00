/* glob.h — the glob dialect of txguard policies.
 *
 *   ?      one character (never '/' in path mode)
 *   *      any run of characters (never '/' in path mode)
 *   **     any run, '/' included; a trailing slash-star-star also
 *          matches the directory itself ("/usr" for the pattern of /usr and
 *          all below), and star-star-slash may match no directory at all
 *   [abc] [a-z] [!a-z] [^a-z]   one character from a set (never '/' in path mode)
 *   \c     the character c literally
 *
 * Matching is bounded: a pathological pattern gets TG_GLOB_TOO_COMPLEX instead
 * of exponential time, and callers fail closed on it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TG_GLOB_MAX_LEN 4096

enum tg_glob_mode {
	TG_GLOB_PATH = 0,    /* '*' and '?' stop at '/' */
	TG_GLOB_STRING = 1,  /* '*' matches anything */
};

enum tg_glob_result {
	TG_GLOB_NOMATCH = 0,
	TG_GLOB_MATCH = 1,
	TG_GLOB_TOO_COMPLEX = -1,
};

/* Check a pattern. Returns 0, or -EINVAL with *errpos (0-based offset into
 * pat) and *msg (static text) describing the first problem. */
int tg_glob_validate(const char *pat, size_t *errpos, const char **msg);

/* Match str against pat (assumed valid; an invalid one never matches). */
enum tg_glob_result tg_glob_match(const char *pat, const char *str, enum tg_glob_mode mode);

/* True when pat contains no unescaped metacharacter. */
bool tg_glob_is_literal(const char *pat);
