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

#include <arpa/inet.h>
#include <string.h>
#include <sys/un.h>

#include "policy/policy.h"

static void decide_some(const struct tg_policy *p)
{
	struct tg_verdict v;
	struct tg_op op = { .kind = TG_OP_UNLINK, .path = "/etc/x", .name = "unlink" };
	tg_policy_decide(p, &op, &v);
	op = (struct tg_op){ .kind = TG_OP_OPEN, .path = "/home/dev/.ssh/id", .name = "openat2" };
	tg_policy_decide(p, &op, &v);
	op = (struct tg_op){ .kind = TG_OP_LINK, .path = "/etc/shadow", .path2 = "/home/dev/project/s" };
	tg_policy_decide(p, &op, &v);
	op = (struct tg_op){ .kind = TG_OP_SYSCALL, .name = "keyctl" };
	tg_policy_decide(p, &op, &v);
	op = (struct tg_op){ .kind = TG_OP_CONNECT, .name = "connect" };
	struct sockaddr_un *un = (void *)&op.addr;
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, "/run/docker.sock");
	op.addrlen = sizeof(*un);
	tg_policy_decide(p, &op, &v);
	struct sockaddr_in *in = (void *)&op.addr;
	memset(&op.addr, 0, sizeof(op.addr));
	in->sin_family = AF_INET;
	in->sin_port = htons(22);
	in->sin_addr.s_addr = htonl(0x0a000001);
	op.addrlen = sizeof(*in);
	tg_policy_decide(p, &op, &v);
}

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
			decide_some(p);
			fclose(devnull);
		}
	}
	tg_policy_free(p);
	tg_policy_diags_clear(&d);
	return 0;
}
