/* fuzz_policy_ytree.c — libFuzzer target for the policy cache's decoder.
 *
 * The input is an entry whose header checksum is made right before
 * decoding, so that the fuzzer reaches the structural checks (counts,
 * offsets, depth, text) instead of stopping at the checksum. Whatever the
 * bytes: a sound tree or a miss, never a crash, a leak or an overread.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/ytree.h"

#define HDR 40 /* magic, hash, srclen, sum, nnodes, ntext */

static size_t count(const struct ynode *n, unsigned depth)
{
	size_t k = 1;
	if (depth > Y_MAX_DEPTH + 1)
		abort();
	if (n->type == Y_SCALAR && !n->s)
		abort();
	for (size_t i = 0; i < n->nkid; i++)
		k += count(n->kid[i], depth + 1);
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR)
		return 0;
	char *buf = malloc(size);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	memcpy(buf, "TGYTREE1", 8);
	uint64_t hash, srclen, sum = ytree_hash(buf + HDR, size - HDR);
	memcpy(&hash, buf + 8, 8);
	memcpy(&srclen, buf + 16, 8);
	memcpy(buf + 24, &sum, 8);
	struct ytree t;
	if (ytree_decode(buf, size, hash, (size_t)srclen, &t) == 1) {
		uint32_t nnodes;
		memcpy(&nnodes, buf + 32, 4);
		if (count(t.root, 0) != nnodes)
			abort();
		/* What decodes encodes back to the same bytes. */
		char *again = NULL;
		size_t len = 0;
		if (ytree_encode(t.root, hash, (size_t)srclen, &again, &len) == 0 &&
		    (len != size || memcmp(again, buf, size) != 0))
			abort();
		free(again);
	}
	ytree_clear(&t);
	free(buf);
	return 0;
}
