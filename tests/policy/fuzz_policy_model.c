/* fuzz_policy_model.c — libFuzzer target for the policy model's decoder
 * (policy/model.c).
 *
 * The input is an entry whose magic, key and checksum are made right
 * before decoding, so that the fuzzer reaches the structural checks
 * (counts, string lengths and terminators, enum ranges) instead of
 * stopping at the header. Whatever the bytes: a sound model or a miss,
 * never a crash, a leak or an overread; and a model that decodes encodes
 * back to the very same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_int.h"
#include "policy/ytree.h"

#define HDR 32 /* magic, key, payload length, checksum */
#define KEY 42

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR)
		return 0;
	char *buf = malloc(size);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	const uint64_t key = KEY, len = size - HDR, sum = ytree_hash(buf + HDR, size - HDR);
	memcpy(buf, "TGPMOD01", 8);
	memcpy(buf + 8, &key, 8);
	memcpy(buf + 16, &len, 8);
	memcpy(buf + 24, &sum, 8);
	char *in = malloc(size);
	if (!in) {
		free(buf);
		return 0;
	}
	memcpy(in, buf, size);
	struct tg_policy *p = NULL;
	if (tg_policy_model_decode(in, size, KEY, &p) == 1) {
		char *again = NULL;
		size_t n = 0;
		if (tg_policy_model_encode(p, KEY, &again, &n) == 0 && (n != size || memcmp(again, buf, size) != 0))
			abort();
		free(again);
		tg_policy_free(p); /* and `in` with it */
	} else {
		free(in);
	}
	free(buf);
	return 0;
}
