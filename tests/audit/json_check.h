/* json_check.h — check one tg_json_kv_str() output against the bytes it was
 * given: the text is valid UTF-8 with no raw control byte, and the exact
 * bytes come back (from the string itself when they were UTF-8, else from
 * the _hex field). Shared by json_test.c and the libFuzzer target. */
#pragma once

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

static int json_check_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Unescape the JSON string starting at *p (just after its opening quote)
 * into out (room for strlen(*p) bytes); leaves *p after the closing quote.
 * Only the escapes the writer emits are accepted. Returns the length or -1. */
static long json_check_unescape(const char **p, char *out)
{
	const char *s = *p;
	long n = 0;
	for (; *s && *s != '"'; s++) {
		if ((unsigned char)*s < 0x20)
			return -1;
		if (*s != '\\') {
			out[n++] = *s;
			continue;
		}
		s++;
		switch (*s) {
		case '"': out[n++] = '"'; break;
		case '\\': out[n++] = '\\'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'u': {
			if (strncmp(s + 1, "00", 2) != 0)
				return -1;
			int hi = json_check_hexval(s[3]), lo = json_check_hexval(s[4]);
			if (hi < 0 || lo < 0 || hi > 7)
				return -1;
			out[n++] = (char)(hi * 16 + lo);
			s += 4;
			break;
		}
		default:
			return -1;
		}
	}
	if (*s != '"')
		return -1;
	*p = s + 1;
	return n;
}

/* text is what {"s": kv_str(in)} produced. True when it is right. */
static bool json_check_kv(const char *text, const char *in, size_t inlen)
{
	size_t tlen = strlen(text);
	if (!tg_utf8_valid(text, tlen) || strncmp(text, "{\"s\":\"", 6) != 0)
		return false;
	char *buf = malloc(tlen + 1);
	if (!buf)
		return false;
	const char *p = text + 6;
	long n = json_check_unescape(&p, buf);
	bool valid = tg_utf8_valid(in, inlen);
	bool ok = n >= 0;
	if (ok && valid) {
		ok = (size_t)n == inlen && memcmp(buf, in, inlen) == 0 && strcmp(p, "}") == 0;
	} else if (ok) {
		/* ,"s_hex":"<2*inlen hex digits>"} */
		ok = strncmp(p, ",\"s_hex\":\"", 10) == 0 && strlen(p + 10) == 2 * inlen + 2 &&
		     strcmp(p + 10 + 2 * inlen, "\"}") == 0;
		for (size_t i = 0; ok && i < inlen; i++) {
			int hi = json_check_hexval(p[10 + 2 * i]), lo = json_check_hexval(p[11 + 2 * i]);
			ok = hi >= 0 && lo >= 0 && (char)(hi * 16 + lo) == in[i];
		}
	}
	free(buf);
	return ok;
}
