/* test_match.c — the matcher, table-driven, against the default policy and
 * small purpose-written policies. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/un.h>

#include "test_util.h"

Test(default_policy, examples_pass)
{
	struct tg_policy *p = load_default();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int fails = tg_policy_check_examples(p, f);
	fclose(f);
	cr_expect_eq(fails, 0, "%d example(s) fail:\n%s", fails, buf);
	free(buf);
	tg_policy_free(p);
}
