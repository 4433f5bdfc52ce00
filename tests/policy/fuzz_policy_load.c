/* fuzz_policy_load.c — libFuzzer target for the policy loader.
 *
 * Whatever the bytes, loading must either succeed or fail with diagnostics,
 * never crash, leak or hang. A loaded policy is also exercised: examples,
 * dump, and a decision on a fixed exec, so the matcher sees fuzzed patterns.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	int r = tg_policy_load_string(&p, "fuzz.yaml", (const char *)data, size, &d);
	if (r == -EINVAL && d.n == 0)
		abort(); /* a failed load must say why */
	if (r == 0) {
		static const struct tg_policy_ctx ctx = { "/home/dev/project", "/home/dev", "/state" };
		FILE *devnull = fopen("/dev/null", "w");
		tg_policy_set_ctx(p, &ctx);
		if (devnull) {
			tg_policy_check_examples(p, devnull);
			tg_policy_dump(p, true, devnull);
			char *argv[] = { "rm", "-rf", "--", "/usr/../home/dev", "x=/dev/sda", NULL };
			tg_policy_explain_exec(p, argv, false, devnull);
			fclose(devnull);
		}
	}
	tg_policy_free(p);
	tg_policy_diags_clear(&d);
	return 0;
}
