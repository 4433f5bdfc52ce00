/* fuzz_json.c — libFuzzer target for the JSON writer: any bytes written
 * with tg_json_kv_str() come out as valid UTF-8 JSON from which the exact
 * bytes can be recovered (tests/audit/json_check.h). Build with
 * CC=clang meson setup -Dfuzzing=true -Db_sanitize=address,undefined
 * -Db_lundef=false; run: fuzz-json -max_total_time=60 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "json_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A C string: stop at the first NUL, as paths and argv do. */
	size_t n = strnlen((const char *)data, size);
	char *in = malloc(n + 1);
	if (!in)
		return 0;
	memcpy(in, data, n);
	in[n] = '\0';
	struct tg_json *j = tg_json_new_buffer();
	tg_json_begin_object(j);
	tg_json_kv_str(j, "s", in);
	tg_json_end_object(j);
	if (tg_json_error(j) || !json_check_kv(tg_json_buffer(j, NULL), in, n))
		abort();
	tg_json_free(j);
	free(in);
	return 0;
}
