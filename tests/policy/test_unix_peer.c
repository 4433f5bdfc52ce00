/* test_unix_peer.c — AF_UNIX peers end to end: the decoder resolves the
 * socket name of connect/sendto/sendmsg in the caller's view (here: this
 * process, which process_vm_readv may read without ptrace) and the policy's
 * unix rules judge the socket reached, however it was spelled. */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "trace/decode.h"
#include "test_util.h"

#define U(p) ((uint64_t)(uintptr_t)(p))

static char dir[] = "/tmp/tg-unix-peer-XXXXXX";
static char *sock, *alias;

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	_cleanup_free_ char *run = tg_asprintf("%s/run", dir);
	cr_assert_eq(mkdir(run, 0700), 0);
	sock = tg_asprintf("%s/run/docker.sock", dir);
	alias = tg_asprintf("%s/alias", dir);
	/* A plain file stands for the socket: the lookup is the same. */
	int fd = open(sock, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(symlink(sock, alias), 0);
}

static void teardown(void)
{
	unlink(alias);
	unlink(sock);
	_cleanup_free_ char *run = tg_asprintf("%s/run", dir);
	rmdir(run);
	rmdir(dir);
	free(sock);
	free(alias);
}

TestSuite(unix_peer, .init = setup, .fini = teardown);

static struct tg_policy *deny_policy(void)
{
	_cleanup_free_ char *yaml = tg_asprintf("version: 1\nrules:\n  - id: no-sock\n    reason: r\n"
	                                        "    action: deny\n    errno: EACCES\n"
	                                        "    connect:\n      unix: ['%s', '@abstract*']\n",
	                                        sock);
	return load_yaml(yaml);
}

/* Decode connect (or sendto / sendmsg) of name and judge it. */
static enum tg_action judge(const struct tg_policy *p, long nr, const char *name, bool abstract)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	size_t l = strlen(name);
	memcpy(un.sun_path + abstract, name, l);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + l + 1);
	struct iovec iov = { "x", 1 };
	struct msghdr m = { .msg_name = &un, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1 };
	uint64_t args[6] = { 3, U(&un), len, 0, 0, 0 };
	if (nr == SYS_sendto)
		args[1] = U("x"), args[2] = 1, args[4] = U(&un), args[5] = len;
	if (nr == SYS_sendmsg)
		args[1] = U(&m), args[2] = 0;
	struct tg_op op;
	struct tg_verdict v;
	cr_assert_eq(tg_decode(getpid(), nr, args, &op), 0, "decode %s", name);
	tg_policy_decide(p, &op, &v);
	tg_op_clear(&op);
	return v.action;
}

Test(unix_peer, every_spelling_reaches_the_denied_socket)
{
	struct tg_policy *p = deny_policy();
	const long calls[] = { SYS_connect, SYS_sendto, SYS_sendmsg };
	int fd = open(sock, O_PATH);
	cr_assert_geq(fd, 0);
	char magic[64];
	snprintf(magic, sizeof(magic), "/proc/self/fd/%d", fd);
	_cleanup_free_ char *dotted = tg_asprintf("%s/run/../run/./docker.sock", dir);
	_cleanup_free_ char *run = tg_asprintf("%s/run", dir);
	for (size_t i = 0; i < TG_ARRAY_SIZE(calls); i++) {
		long nr = calls[i];
		cr_expect_eq(judge(p, nr, sock, false), TG_ACT_DENY, "as written");
		cr_expect_eq(judge(p, nr, dotted, false), TG_ACT_DENY, "with . and ..");
		cr_expect_eq(judge(p, nr, alias, false), TG_ACT_DENY, "through a symlink");
		cr_expect_eq(judge(p, nr, magic, false), TG_ACT_DENY, "through /proc/self/fd");
		cr_assert_eq(chdir(run), 0);
		cr_expect_eq(judge(p, nr, "docker.sock", false), TG_ACT_DENY, "relative to the cwd");
		cr_assert_eq(chdir(dir), 0);
		cr_expect_eq(judge(p, nr, "run/docker.sock", false), TG_ACT_DENY, "relative, deeper");
		cr_expect_eq(judge(p, nr, "alias", false), TG_ACT_DENY, "relative symlink");
		cr_expect_eq(judge(p, nr, "docker.sock", false), TG_ACT_ALLOW, "another file");
		/* Abstract names are no path: kept as "@name". */
		cr_expect_eq(judge(p, nr, "abstract-x", true), TG_ACT_DENY, "abstract");
		cr_expect_eq(judge(p, nr, "other", true), TG_ACT_ALLOW, "another abstract");
	}
	close(fd);
	tg_policy_free(p);
}

/* Under network default deny, an allow rule opens the socket it names, not
 * a symlink of that name pointing elsewhere. */
Test(unix_peer, allow_rules_judge_the_socket_reached)
{
	_cleanup_free_ char *yaml = tg_asprintf("version: 1\nnetwork:\n  default: deny\nrules:\n"
	                                        "  - id: ok\n    reason: r\n    action: allow\n"
	                                        "    connect:\n      unix: ['%s']\n",
	                                        alias);
	struct tg_policy *p = load_yaml(yaml);
	cr_expect_eq(judge(p, SYS_connect, alias, false), TG_ACT_DENY, "the alias leads elsewhere");
	tg_policy_free(p);
	free(yaml);
	yaml = tg_asprintf("version: 1\nnetwork:\n  default: deny\nrules:\n"
	                   "  - id: ok\n    reason: r\n    action: allow\n"
	                   "    connect:\n      unix: ['%s']\n",
	                   sock);
	p = load_yaml(yaml);
	cr_expect_eq(judge(p, SYS_connect, alias, false), TG_ACT_ALLOW, "the socket it reaches");
	cr_expect_eq(judge(p, SYS_connect, sock, false), TG_ACT_ALLOW);
	tg_policy_free(p);
}
