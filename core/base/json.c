/* json.c — streaming JSON writer (see json.h). */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define TG_JSON_MAX_DEPTH 64
/* Bound memory for a huge value: past this, an fd/FILE writer writes out
 * what it has even mid-value. */
#define TG_JSON_SPILL (1u << 20)

enum sink { SINK_FD, SINK_FILE, SINK_MEM };

struct level {
	bool object;
	bool key_pending;   /* object: a key was written, its value is due */
	size_t count;       /* members / elements so far */
};

struct tg_json {
	enum sink sink;
	int fd;
	FILE *file;
	char *buf;
	size_t len, cap;
	int err;
	bool pretty;
	bool top_done;      /* a complete top-level value awaits its newline */
	size_t depth;
	struct level stack[TG_JSON_MAX_DEPTH];
};

static struct tg_json *json_new(enum sink sink)
{
	struct tg_json *j = calloc(1, sizeof(*j));
	if (!j) {
		errno = ENOMEM;
		return NULL;
	}
	j->sink = sink;
	j->fd = -1;
	return j;
}

struct tg_json *tg_json_new_fd(int fd)
{
	struct tg_json *j = json_new(SINK_FD);
	if (j)
		j->fd = fd;
	return j;
}

struct tg_json *tg_json_new_file(FILE *f)
{
	struct tg_json *j = json_new(SINK_FILE);
	if (j)
		j->file = f;
	return j;
}

struct tg_json *tg_json_new_buffer(void)
{
	return json_new(SINK_MEM);
}

void tg_json_free(struct tg_json *j)
{
	if (!j)
		return;
	int saved = errno;
	free(j->buf);
	free(j);
	errno = saved;
}

void tg_json_set_pretty(struct tg_json *j, bool pretty)
{
	j->pretty = pretty;
}

int tg_json_error(const struct tg_json *j)
{
	return j->err;
}

const char *tg_json_buffer(const struct tg_json *j, size_t *len)
{
	if (j->sink != SINK_MEM)
		return NULL;
	if (len)
		*len = j->len;
	return j->buf ? j->buf : "";
}

static int fail(struct tg_json *j, int err)
{
	if (!j->err)
		j->err = err;
	return j->err;
}

static int spill(struct tg_json *j)
{
	if (j->sink == SINK_MEM || j->len == 0)
		return 0;
	if (j->sink == SINK_FD) {
		int r = tg_write_all(j->fd, j->buf, j->len);
		if (r < 0)
			return fail(j, r);
	} else if (fwrite(j->buf, 1, j->len, j->file) != j->len) {
		return fail(j, errno ? -errno : -EIO);
	}
	j->len = 0;
	j->buf[0] = '\0';
	return 0;
}

static int reserve(struct tg_json *j, size_t more)
{
	if (j->len + more + 1 <= j->cap)
		return 0;
	size_t cap = j->cap ? j->cap : 256;
	while (cap < j->len + more + 1)
		cap *= 2;
	char *nb = realloc(j->buf, cap);
	if (!nb)
		return fail(j, -ENOMEM);
	j->buf = nb;
	j->cap = cap;
	return 0;
}

static int put(struct tg_json *j, const char *s, size_t n)
{
	if (j->err)
		return j->err;
	if (reserve(j, n) < 0)
		return j->err;
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
	return 0;
}

static int puts_(struct tg_json *j, const char *s)
{
	return put(j, s, strlen(s));
}

static int indent(struct tg_json *j)
{
	if (!j->pretty)
		return 0;
	put(j, "\n", 1);
	for (size_t i = 0; i < j->depth; i++)
		put(j, "  ", 2);
	return j->err;
}

/* Everything a value (scalar or begin) must do first: check where it may
 * go and write the separator. */
static int before_value(struct tg_json *j)
{
	if (j->err)
		return j->err;
	if (j->depth == 0) {
		if (j->top_done)
			return fail(j, -EINVAL);
		return 0;
	}
	struct level *l = &j->stack[j->depth - 1];
	if (l->object) {
		if (!l->key_pending)
			return fail(j, -EINVAL);
		l->key_pending = false;
		return 0;
	}
	if (l->count++ > 0)
		put(j, ",", 1);
	return indent(j);
}

static void after_value(struct tg_json *j)
{
	if (j->depth == 0)
		j->top_done = true;
}

/* Length of the well-formed UTF-8 sequence at s (at most n bytes), or 0
 * when there is none; then *bad is the length of the "maximal subpart" to
 * replace with one U+FFFD (Unicode 15 §3.9, the same as Python's and the
 * WHATWG decoders: a valid lead byte plus the continuation bytes that still
 * fit it). Table 3-7 of the standard gives the ranges. */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char c = s[0];
	*bad = 1;
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;      /* no overlong forms */
		else if (c == 0xED)
			hi = 0x9F;      /* no UTF-16 surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;      /* nothing above U+10FFFF */
	} else
		return 0;
	size_t i = 1;
	for (; i < len && i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			break;
		lo = 0x80;
		hi = 0xBF;
	}
	if (i == len)
		return len;
	*bad = i;
	return 0;
}

bool tg_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t bad;
		size_t k = utf8_seq(p + i, n - i, &bad);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

static int put_escaped(struct tg_json *j, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	put(j, "\"", 1);
	for (size_t i = 0; i < n && !j->err;) {
		unsigned char c = p[i];
		size_t bad;
		size_t k = utf8_seq(p + i, n - i, &bad);
		if (k == 0) {
			put(j, "\xEF\xBF\xBD", 3);  /* U+FFFD per maximal subpart */
			i += bad;
			continue;
		}
		if (k > 1) {
			put(j, s + i, k);
			i += k;
			continue;
		}
		i++;
		switch (c) {
		case '"': put(j, "\\\"", 2); continue;
		case '\\': put(j, "\\\\", 2); continue;
		case '\n': put(j, "\\n", 2); continue;
		case '\r': put(j, "\\r", 2); continue;
		case '\t': put(j, "\\t", 2); continue;
		case '\b': put(j, "\\b", 2); continue;
		case '\f': put(j, "\\f", 2); continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7F) {
			char e[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
			put(j, e, 6);
		} else {
			char ch = (char)c;
			put(j, &ch, 1);
		}
	}
	return put(j, "\"", 1);
}

int tg_json_begin_object(struct tg_json *j)
{
	if (before_value(j) < 0)
		return j->err;
	if (j->depth >= TG_JSON_MAX_DEPTH)
		return fail(j, -E2BIG);
	j->stack[j->depth++] = (struct level){ .object = true };
	return put(j, "{", 1);
}

int tg_json_begin_array(struct tg_json *j)
{
	if (before_value(j) < 0)
		return j->err;
	if (j->depth >= TG_JSON_MAX_DEPTH)
		return fail(j, -E2BIG);
	j->stack[j->depth++] = (struct level){ .object = false };
	return put(j, "[", 1);
}

static int end(struct tg_json *j, bool object)
{
	if (j->err)
		return j->err;
	if (j->depth == 0)
		return fail(j, -EINVAL);
	struct level *l = &j->stack[j->depth - 1];
	if (l->object != object || l->key_pending)
		return fail(j, -EINVAL);
	size_t count = l->count;
	j->depth--;
	if (count > 0)
		indent(j);
	put(j, object ? "}" : "]", 1);
	after_value(j);
	if (j->len >= TG_JSON_SPILL)
		spill(j);
	return j->err;
}

int tg_json_end_object(struct tg_json *j)
{
	return end(j, true);
}

int tg_json_end_array(struct tg_json *j)
{
	return end(j, false);
}

int tg_json_key(struct tg_json *j, const char *key)
{
	if (j->err)
		return j->err;
	if (!key || j->depth == 0)
		return fail(j, -EINVAL);
	struct level *l = &j->stack[j->depth - 1];
	if (!l->object || l->key_pending)
		return fail(j, -EINVAL);
	if (l->count++ > 0)
		put(j, ",", 1);
	indent(j);
	put_escaped(j, key, strlen(key));
	put(j, j->pretty ? ": " : ":", j->pretty ? 2 : 1);
	l->key_pending = true;
	return j->err;
}

static int scalar(struct tg_json *j, const char *text)
{
	if (before_value(j) < 0)
		return j->err;
	puts_(j, text);
	after_value(j);
	return j->err;
}

int tg_json_string_len(struct tg_json *j, const char *s, size_t len)
{
	if (!s)
		return tg_json_null(j);
	if (before_value(j) < 0)
		return j->err;
	put_escaped(j, s, len);
	after_value(j);
	if (j->len >= TG_JSON_SPILL)
		spill(j);
	return j->err;
}

int tg_json_string(struct tg_json *j, const char *s)
{
	return tg_json_string_len(j, s, s ? strlen(s) : 0);
}

int tg_json_int(struct tg_json *j, int64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%" PRId64, v);
	return scalar(j, b);
}

int tg_json_uint(struct tg_json *j, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%" PRIu64, v);
	return scalar(j, b);
}

int tg_json_double(struct tg_json *j, double v)
{
	if (!isfinite(v))
		return tg_json_null(j);
	char b[64];
	snprintf(b, sizeof(b), "%.15g", v);
	/* A locale with a decimal comma must not leak into JSON. */
	for (char *p = b; *p; p++)
		if (*p == ',')
			*p = '.';
	return scalar(j, b);
}

int tg_json_bool(struct tg_json *j, bool v)
{
	return scalar(j, v ? "true" : "false");
}

int tg_json_null(struct tg_json *j)
{
	return scalar(j, "null");
}

int tg_json_flush(struct tg_json *j)
{
	if (spill(j) < 0)
		return j->err;
	if (j->sink == SINK_FILE && fflush(j->file) != 0)
		return fail(j, errno ? -errno : -EIO);
	return j->err;
}

int tg_json_newline(struct tg_json *j)
{
	if (j->err)
		return j->err;
	if (j->depth != 0 || !j->top_done)
		return fail(j, -EINVAL);
	put(j, "\n", 1);
	j->top_done = false;
	return tg_json_flush(j);
}

static int put_hex(struct tg_json *j, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(s);
	if (before_value(j) < 0)
		return j->err;
	put(j, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[2] = { hex[c >> 4], hex[c & 15] };
		put(j, e, 2);
	}
	put(j, "\"", 1);
	after_value(j);
	return j->err;
}

/* "<key>_hex" for the parallel raw-bytes field. */
static int hex_key(struct tg_json *j, const char *key)
{
	_cleanup_free_ char *k = tg_asprintf("%s_hex", key);
	if (!k)
		return fail(j, -ENOMEM);
	return tg_json_key(j, k);
}

int tg_json_kv_str(struct tg_json *j, const char *key, const char *s)
{
	tg_json_key(j, key);
	tg_json_string(j, s);
	if (s && !tg_utf8_valid(s, strlen(s))) {
		hex_key(j, key);
		put_hex(j, s);
	}
	return j->err;
}

int tg_json_kv_int(struct tg_json *j, const char *key, int64_t v)
{
	tg_json_key(j, key);
	return tg_json_int(j, v);
}

int tg_json_kv_uint(struct tg_json *j, const char *key, uint64_t v)
{
	tg_json_key(j, key);
	return tg_json_uint(j, v);
}

int tg_json_kv_double(struct tg_json *j, const char *key, double v)
{
	tg_json_key(j, key);
	return tg_json_double(j, v);
}

int tg_json_kv_bool(struct tg_json *j, const char *key, bool v)
{
	tg_json_key(j, key);
	return tg_json_bool(j, v);
}

int tg_json_kv_null(struct tg_json *j, const char *key)
{
	tg_json_key(j, key);
	return tg_json_null(j);
}

int tg_json_kv_strv(struct tg_json *j, const char *key, char *const *strv)
{
	tg_json_key(j, key);
	if (!strv)
		return tg_json_null(j);
	bool any_bad = false;
	tg_json_begin_array(j);
	for (size_t i = 0; strv[i]; i++) {
		tg_json_string(j, strv[i]);
		if (!tg_utf8_valid(strv[i], strlen(strv[i])))
			any_bad = true;
	}
	tg_json_end_array(j);
	if (!any_bad)
		return j->err;
	hex_key(j, key);
	tg_json_begin_array(j);
	for (size_t i = 0; strv[i]; i++) {
		if (tg_utf8_valid(strv[i], strlen(strv[i])))
			tg_json_null(j);
		else
			put_hex(j, strv[i]);
	}
	return tg_json_end_array(j);
}
