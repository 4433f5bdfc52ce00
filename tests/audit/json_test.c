/* json_test.c — unit tests for the streaming JSON writer (core/base/json.h). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/json.h"
#include "json_check.h"
#include "base/util.h"

static struct tg_json *j;

static void setup(void)
{
	j = tg_json_new_buffer();
	cr_assert_not_null(j);
}

static void teardown(void)
{
	tg_json_free(j);
}

TestSuite(json, .init = setup, .fini = teardown);

static const char *text(void)
{
	const char *t = tg_json_buffer(j, NULL);
	cr_assert_not_null(t);
	return t;
}

Test(json, nested_compact)
{
	tg_json_begin_object(j);
	tg_json_kv_str(j, "a", "x");
	tg_json_kv_int(j, "i", -42);
	tg_json_kv_uint(j, "u", UINT64_MAX);
	tg_json_kv_bool(j, "t", true);
	tg_json_kv_null(j, "n");
	tg_json_key(j, "arr");
	tg_json_begin_array(j);
	tg_json_int(j, 1);
	tg_json_begin_object(j);
	tg_json_end_object(j);
	tg_json_begin_array(j);
	tg_json_end_array(j);
	tg_json_string(j, NULL);
	tg_json_end_array(j);
	cr_assert_eq(tg_json_end_object(j), 0);
	cr_assert_str_eq(text(), "{\"a\":\"x\",\"i\":-42,\"u\":18446744073709551615,"
	                 "\"t\":true,\"n\":null,\"arr\":[1,{},[],null]}");
}

Test(json, pretty)
{
	tg_json_set_pretty(j, true);
	tg_json_begin_object(j);
	tg_json_kv_int(j, "a", 1);
	tg_json_key(j, "b");
	tg_json_begin_array(j);
	tg_json_int(j, 2);
	tg_json_end_array(j);
	tg_json_end_object(j);
	cr_assert_str_eq(text(), "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}");
}

Test(json, escapes)
{
	tg_json_string_len(j, "q\"b\\n\n\t\r\b\f\x01\x1f\x7f/\0z", 16);
	cr_assert_str_eq(text(), "\"q\\\"b\\\\n\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f/\\u0000z\"");
}

Test(json, doubles)
{
	tg_json_begin_array(j);
	tg_json_double(j, 0.42);
	tg_json_double(j, 1.0 / 0.0);
	tg_json_double(j, -2.5);
	tg_json_end_array(j);
	cr_assert_str_eq(text(), "[0.42,null,-2.5]");
}

Test(json, utf8_valid_table)
{
	cr_assert(tg_utf8_valid("", 0));
	cr_assert(tg_utf8_valid("plain", 5));
	cr_assert(tg_utf8_valid("\xc3\xa9", 2));            /* é */
	cr_assert(tg_utf8_valid("\xe2\x82\xac", 3));        /* € */
	cr_assert(tg_utf8_valid("\xf0\x9f\x98\x80", 4));    /* U+1F600 */
	cr_assert(tg_utf8_valid("\xf4\x8f\xbf\xbf", 4));    /* U+10FFFF */
	cr_assert_not(tg_utf8_valid("\xc0\xaf", 2));        /* overlong '/' */
	cr_assert_not(tg_utf8_valid("\xe0\x80\xaf", 3));    /* overlong */
	cr_assert_not(tg_utf8_valid("\xed\xa0\x80", 3));    /* surrogate */
	cr_assert_not(tg_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
	cr_assert_not(tg_utf8_valid("\xe2\x82", 2));        /* truncated */
	cr_assert_not(tg_utf8_valid("\x80", 1));            /* stray continuation */
	cr_assert_not(tg_utf8_valid("\xff", 1));
}

Test(json, invalid_utf8_replaced_and_hex)
{
	tg_json_begin_object(j);
	tg_json_kv_str(j, "path", "a\xff" "b\xe2\x82" "c\xc3\xa9");
	tg_json_kv_str(j, "ok", "\xc3\xa9");
	tg_json_end_object(j);
	cr_assert_str_eq(text(), "{\"path\":\"a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xc3\xa9\","
	                 "\"path_hex\":\"61ff62e28263c3a9\",\"ok\":\"\xc3\xa9\"}");
}

Test(json, strv_hex_parallel)
{
	char *argv[] = { "rm", "x\xfe", NULL };
	char *good[] = { "ls", NULL };
	tg_json_begin_object(j);
	tg_json_kv_strv(j, "argv", argv);
	tg_json_kv_strv(j, "good", good);
	tg_json_kv_strv(j, "none", NULL);
	tg_json_end_object(j);
	cr_assert_str_eq(text(), "{\"argv\":[\"rm\",\"x\xef\xbf\xbd\"],\"argv_hex\":[null,\"78fe\"],"
	                 "\"good\":[\"ls\"],\"none\":null}");
}

Test(json, value_in_object_needs_key)
{
	tg_json_begin_object(j);
	cr_assert_eq(tg_json_int(j, 1), -EINVAL);
	/* sticky: a correct call after the error still fails */
	cr_assert_eq(tg_json_kv_int(j, "a", 1), -EINVAL);
	cr_assert_eq(tg_json_error(j), -EINVAL);
}

Test(json, key_outside_object)
{
	tg_json_begin_array(j);
	cr_assert_eq(tg_json_key(j, "k"), -EINVAL);
}

Test(json, key_at_top)
{
	cr_assert_eq(tg_json_key(j, "k"), -EINVAL);
}

Test(json, two_keys_in_a_row)
{
	tg_json_begin_object(j);
	tg_json_key(j, "a");
	cr_assert_eq(tg_json_key(j, "b"), -EINVAL);
}

Test(json, mismatched_end)
{
	tg_json_begin_object(j);
	cr_assert_eq(tg_json_end_array(j), -EINVAL);
}

Test(json, end_with_key_pending)
{
	tg_json_begin_object(j);
	tg_json_key(j, "a");
	cr_assert_eq(tg_json_end_object(j), -EINVAL);
}

Test(json, end_at_top)
{
	cr_assert_eq(tg_json_end_object(j), -EINVAL);
}

Test(json, two_top_values_need_newline)
{
	tg_json_int(j, 1);
	cr_assert_eq(tg_json_int(j, 2), -EINVAL);
}

Test(json, newline_needs_complete_value)
{
	cr_assert_eq(tg_json_newline(j), -EINVAL);
}

Test(json, newline_open_value)
{
	tg_json_begin_array(j);
	cr_assert_eq(tg_json_newline(j), -EINVAL);
}

Test(json, json_lines)
{
	tg_json_begin_object(j);
	tg_json_end_object(j);
	cr_assert_eq(tg_json_newline(j), 0);
	tg_json_int(j, 7);
	cr_assert_eq(tg_json_newline(j), 0);
	cr_assert_str_eq(text(), "{}\n7\n");
}

Test(json, depth_limit)
{
	int r = 0;
	for (int i = 0; i < 100 && r == 0; i++)
		r = tg_json_begin_array(j);
	cr_assert_eq(r, -E2BIG);
}

Test(json, fd_sink_writes_on_newline)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	struct tg_json *w = tg_json_new_fd(p[1]);
	tg_json_begin_object(w);
	tg_json_kv_str(w, "k", "v");
	tg_json_end_object(w);
	cr_assert_eq(tg_json_newline(w), 0);
	char buf[64] = { 0 };
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	cr_assert_eq(n, 10);
	cr_assert_str_eq(buf, "{\"k\":\"v\"}\n");
	tg_json_free(w);
	close(p[0]);
	close(p[1]);
}

Test(json, fd_sink_error_is_reported)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	struct tg_json *w = tg_json_new_fd(p[1]);
	tg_json_int(w, 1);
	cr_assert_eq(tg_json_newline(w), -EPIPE);
	tg_json_free(w);
	close(p[1]);
}

Test(json, file_sink)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct tg_json *w = tg_json_new_file(f);
	tg_json_begin_array(w);
	tg_json_bool(w, false);
	tg_json_end_array(w);
	cr_assert_eq(tg_json_flush(w), 0);
	cr_assert_str_eq(buf, "[false]");
	tg_json_free(w);
	fclose(f);
	free(buf);
}

static void hex(char *out, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = '\0';
}

/* Random byte strings, biased towards UTF-8 lead and continuation bytes so
 * that valid multibyte runs and every kind of ill-formed one occur; Python's
 * json and UTF-8 decoder are the judge (tests/audit/json_roundtrip.py). */
Test(json, python_roundtrip)
{
	static const unsigned char pool[] = { 'a', '"', '\\', '\n', 0x01, 0x7f, 0x80, 0xbf,
	                                      0xc2, 0xc3, 0xa9, 0xe0, 0xe2, 0x82, 0xac, 0xed,
	                                      0xa0, 0xf0, 0x9f, 0x90, 0xf4, 0x8f, 0xff, 0xc0 };
	char path[] = "/tmp/txguard-json-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	struct tg_json *w = tg_json_new_fd(fd);
	srand(20261130);
	for (int line = 0; line < 2000; line++) {
		unsigned char b[24];
		size_t n = (size_t)(rand() % 23);
		for (size_t i = 0; i < n; i++)
			b[i] = (rand() % 3) ? pool[rand() % sizeof(pool)] : (unsigned char)(1 + rand() % 255);
		b[n] = '\0';
		char h[64], rev[24];
		hex(h, b, n);
		for (size_t i = 0; i < n; i++)
			rev[i] = (char)b[n - 1 - i];
		rev[n] = '\0';
		char *argv[] = { (char *)b, "plain", rev, NULL };
		tg_json_begin_object(w);
		tg_json_kv_str(w, "raw", h);
		tg_json_kv_str(w, "s", (char *)b);
		tg_json_kv_strv(w, "argv", argv);
		tg_json_end_object(w);
		cr_assert_eq(tg_json_newline(w), 0);
	}
	tg_json_free(w);
	close(fd);
	_cleanup_free_ char *cmd = tg_asprintf("python3 '%s/json_roundtrip.py' '%s'", TG_AUDIT_TEST_DIR, path);
	int st = system(cmd);
	unlink(path);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "json_roundtrip.py failed (status %d)", st);
}

/* A value bigger than the writer's spill threshold goes out in pieces and
 * still reads back whole and well-formed. */
Test(json, large_value_spills_to_fd)
{
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	int fd = fileno(f);
	struct tg_json *w = tg_json_new_fd(fd);
	char item[64];
	memset(item, 'x', sizeof(item) - 1);
	item[sizeof(item) - 1] = '\0';
	const size_t n = 40000;   /* 40000 * 66 bytes > 2 MiB */
	tg_json_begin_array(w);
	for (size_t i = 0; i < n; i++)
		tg_json_string(w, item);
	tg_json_end_array(w);
	cr_assert_eq(tg_json_newline(w), 0);
	tg_json_free(w);
	off_t size = lseek(fd, 0, SEEK_END);
	cr_assert_eq((size_t)size, 2 + n * 65 + (n - 1) + 1);
	char head[4] = { 0 }, tail[4] = { 0 };
	cr_assert_eq(pread(fd, head, 2, 0), 2);
	cr_assert_eq(pread(fd, tail, 3, size - 3), 3);
	cr_assert_str_eq(head, "[\"");
	cr_assert_str_eq(tail, "\"]\n");
	fclose(f);
}

/* Every string of up to 3 bytes from an alphabet that reaches every UTF-8
 * branch (lead bytes of each length and their edge continuation bytes,
 * controls, quote, backslash): the exact bytes always come back. */
Test(json, exhaustive_short_strings_round_trip)
{
	static const unsigned char alpha[] = { 0x01, 0x1f, '"', '\\', 'a', 0x7f, 0x80, 0x8f, 0x90,
	                                       0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xed,
	                                       0xef, 0xf0, 0xf4, 0xf5, 0xff };
	const size_t k = sizeof(alpha);
	size_t checked = 0;
	for (size_t len = 0; len <= 3; len++) {
		size_t total = 1;
		for (size_t i = 0; i < len; i++)
			total *= k;
		for (size_t idx = 0; idx < total; idx++) {
			char in[4] = { 0 };
			for (size_t i = 0, x = idx; i < len; i++, x /= k)
				in[i] = (char)alpha[x % k];
			struct tg_json *w = tg_json_new_buffer();
			tg_json_begin_object(w);
			tg_json_kv_str(w, "s", in);
			tg_json_end_object(w);
			cr_assert(json_check_kv(tg_json_buffer(w, NULL), in, len),
			          "bad output for %zu bytes %02x %02x %02x: %s", len, (unsigned char)in[0],
			          (unsigned char)in[1], (unsigned char)in[2], tg_json_buffer(w, NULL));
			tg_json_free(w);
			checked++;
		}
	}
	cr_assert_eq(checked, 1 + 22 + 22 * 22 + 22 * 22 * 22);
}

/* The reports' and run ids' clock: tg_utc gives gmtime_r's fields (all
 * nine) for every day from 1970 to 2554 at a random second of it, for
 * the edges of days, leap days and centuries, and before the epoch; and
 * tg_rfc3339 prints what strftime printed. */
static void expect_utc(int64_t secs)
{
	struct tm want, got;
	time_t t = (time_t)secs;
	cr_assert_not_null(gmtime_r(&t, &want));
	tg_utc(secs, &got);
	cr_assert(got.tm_year == want.tm_year && got.tm_mon == want.tm_mon && got.tm_mday == want.tm_mday &&
	          got.tm_hour == want.tm_hour && got.tm_min == want.tm_min && got.tm_sec == want.tm_sec &&
	          got.tm_wday == want.tm_wday && got.tm_yday == want.tm_yday && got.tm_isdst == 0,
	          "%lld: %d-%d-%d %d:%d:%d wday %d yday %d, gmtime_r %d-%d-%d %d:%d:%d wday %d yday %d",
	          (long long)secs, got.tm_year, got.tm_mon, got.tm_mday, got.tm_hour, got.tm_min, got.tm_sec,
	          got.tm_wday, got.tm_yday, want.tm_year, want.tm_mon, want.tm_mday, want.tm_hour,
	          want.tm_min, want.tm_sec, want.tm_wday, want.tm_yday);
}

Test(json, utc_matches_gmtime)
{
	unsigned seed = 16;
	const int64_t last_day = (int64_t)(UINT64_MAX / 1000000000ull / 86400);
	for (int64_t day = -800; day <= last_day; day++) {
		expect_utc(day * 86400);
		expect_utc(day * 86400 + 86399);
		expect_utc(day * 86400 + rand_r(&seed) % 86400);
	}
	/* 1972-12-31T23:59:59, 2000-02-29, 2100-02-28 and 03-01, 2400-02-29. */
	static const int64_t edges[] = { 94694399, 951782400, 4107456000, 4107542400, 13574563200 };
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		expect_utc(edges[i]);

	uint64_t stamps[] = { 0, 999999999, 1764866700123456789ull, 4107542400000000000ull,
	                      UINT64_MAX };
	for (size_t i = 0; i < sizeof(stamps) / sizeof(stamps[0]); i++) {
		char got[32], want[64];
		tg_rfc3339(got, stamps[i]);
		time_t t = (time_t)(stamps[i] / 1000000000ull);
		struct tm tm;
		gmtime_r(&t, &tm);
		size_t n = strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(want + n, sizeof(want) - n, ".%03uZ", (unsigned)(stamps[i] / 1000000ull % 1000));
		cr_expect_str_eq(got, want);
	}
}
