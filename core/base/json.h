/* json.h — a small streaming JSON writer.
 *
 * One writer emits one value (an object, usually) or, for JSON Lines, a
 * sequence of top-level values each ended with tg_json_newline(). Output is
 * buffered in memory and written to the sink by tg_json_flush() (and by
 * tg_json_newline(), which flushes so that every log line reaches the file as
 * a whole).
 *
 * Nesting is checked: a value inside an object needs a key first, a key
 * outside an object, an end that does not match its begin, or a second
 * top-level value without a newline in between is -EINVAL. Errors are sticky:
 * after the first failure every call returns that same -errno and writes
 * nothing, so a caller may emit a whole object and check once at the end
 * (tg_json_error() or the return of tg_json_flush()).
 *
 * Strings and invalid UTF-8. Paths and argv on Linux are bytes, not text.
 * Every string the writer emits is valid UTF-8 JSON: an ill-formed sequence
 * (stray continuation bytes, overlong forms, surrogates, code points above
 * U+10FFFF, truncated sequences) is replaced by U+FFFD, one per "maximal
 * subpart" exactly as Python's bytes.decode("utf-8", "replace") and the
 * WHATWG decoder do. That is lossy, so the key/value helpers below keep the
 * exact bytes: tg_json_kv_str(j, "path", s) on a string that is not valid
 * UTF-8 also writes "path_hex": "<lowercase hex of the raw bytes>", and
 * tg_json_kv_strv(j, "argv", v) writes "argv_hex": an array as long as argv
 * whose element is the hex of the raw bytes for each invalid element and null
 * for each valid one. A consumer gets the exact bytes back with
 * `bytes.fromhex(h) if h is not None else s.encode()`. Control characters
 * are escaped (\n, \t, ... or \u00XX) and NUL inside a counted string is
 * \u0000.
 *
 * Numbers: 64-bit integers are exact; doubles use the C locale's '.', and a
 * NaN or infinity is written as null.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct tg_json;

/* Writers for the three sinks. Return NULL with errno=ENOMEM on failure.
 * The fd / FILE* stays the caller's: tg_json_free() does not close it. */
struct tg_json *tg_json_new_fd(int fd);
struct tg_json *tg_json_new_file(FILE *f);
/* A memory writer: the text is read back with tg_json_buffer(). */
struct tg_json *tg_json_new_buffer(void);

/* Free the writer (accepts NULL). Does not flush. */
void tg_json_free(struct tg_json *j);

/* Pretty output: newline and two-space indent per level. Off by default
 * (compact). Not for JSON Lines. */
void tg_json_set_pretty(struct tg_json *j, bool pretty);

/* Write buffered text to the fd / FILE* (fflush too). 0 or -errno (also the
 * sticky error). A memory writer keeps its text. */
int tg_json_flush(struct tg_json *j);

/* End a complete top-level value with "\n" and flush (JSON Lines).
 * -EINVAL when a value is still open or none was written. */
int tg_json_newline(struct tg_json *j);

/* The sticky error: 0 while everything went well, else -errno. */
int tg_json_error(const struct tg_json *j);

/* Memory writer only: the text so far, NUL-terminated; *len may be NULL.
 * Valid until the next call on j. NULL for other sinks. */
const char *tg_json_buffer(const struct tg_json *j, size_t *len);

/* Structure. Each returns 0 or -errno. */
int tg_json_begin_object(struct tg_json *j);
int tg_json_end_object(struct tg_json *j);
int tg_json_begin_array(struct tg_json *j);
int tg_json_end_array(struct tg_json *j);
/* An object key (any bytes; sanitised like a string value). */
int tg_json_key(struct tg_json *j, const char *key);

/* Scalars. A NULL string is written as null. */
int tg_json_string(struct tg_json *j, const char *s);
int tg_json_string_len(struct tg_json *j, const char *s, size_t len);
int tg_json_int(struct tg_json *j, int64_t v);
int tg_json_uint(struct tg_json *j, uint64_t v);
int tg_json_double(struct tg_json *j, double v);
int tg_json_bool(struct tg_json *j, bool v);
int tg_json_null(struct tg_json *j);

/* Key + value in one call, inside an object. */
int tg_json_kv_str(struct tg_json *j, const char *key, const char *s);      /* + key_hex when not UTF-8 */
int tg_json_kv_int(struct tg_json *j, const char *key, int64_t v);
int tg_json_kv_uint(struct tg_json *j, const char *key, uint64_t v);
int tg_json_kv_double(struct tg_json *j, const char *key, double v);
int tg_json_kv_bool(struct tg_json *j, const char *key, bool v);
int tg_json_kv_null(struct tg_json *j, const char *key);
/* A NULL-terminated string vector as an array (+ key_hex, see above);
 * strv NULL writes null. */
int tg_json_kv_strv(struct tg_json *j, const char *key, char *const *strv);

/* True when the n bytes at s are well-formed UTF-8 (no NUL check). */
bool tg_utf8_valid(const char *s, size_t n);
