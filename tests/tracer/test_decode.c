/* Unit tests: the syscall table and the decoder, run on our own process
 * (process_vm_readv on oneself needs no ptrace). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/decode.h"
#include "trace/filter.h"
#include "trace/syscalls.h"
#include "base/path.h"
#include "base/util.h"

#define U(p) ((uint64_t)(uintptr_t)(p))

static char cwd[PATH_MAX];

static void setup(void)
{
	cr_assert(getcwd(cwd, sizeof(cwd)));
}

TestSuite(decode, .init = setup);

Test(decode, table_rows_are_consistent)
{
	size_t n;
	const struct tg_syscall *t = tg_syscalls(&n);
	cr_assert_gt(n, 60);
	for (size_t i = 0; i < n; i++) {
		/* A syscall may have two rows (trap some ioctls, deny others): the
		 * first one is the trapping row the decoder uses. */
		const struct tg_syscall *first = tg_syscall_by_nr(t[i].nr);
		cr_assert(first == &t[i] || (first->trap == TG_TRAP_IF && t[i].trap == TG_DENY_IF),
		          "duplicate nr %ld", t[i].nr);
		cr_assert_eq(tg_syscall_by_name(t[i].name), first, "duplicate %s", t[i].name);
		if (t[i].trap == TG_DENY || t[i].trap == TG_DENY_IF)
			cr_assert_gt(t[i].err, 0, "%s has no errno", t[i].name);
		if (t[i].trap == TG_TRAP_IF || t[i].trap == TG_DENY_IF)
			cr_assert_gt(t[i].ncond, 0, "%s has no condition", t[i].name);
		if (t[i].writes)
			cr_assert(tg_syscall_arg(&t[i], TG_A_PATH) >= 0 || tg_syscall_arg(&t[i], TG_A_FD) >= 0 ||
			          t[i].kind == TG_OP_SYSCALL, "%s mutates nothing nameable", t[i].name);
	}
	/* Every trapped path call has its *at variant trapped too. */
	const char *pairs[][2] = {
		{ "open", "openat" }, { "unlink", "unlinkat" }, { "rename", "renameat" },
		{ "link", "linkat" }, { "symlink", "symlinkat" }, { "mkdir", "mkdirat" },
		{ "mknod", "mknodat" }, { "chmod", "fchmodat" }, { "chown", "fchownat" },
		{ "utimes", "futimesat" }, { "execve", "execveat" }, { "rmdir", "unlinkat" },
	};
	for (size_t i = 0; i < TG_ARRAY_SIZE(pairs); i++) {
		cr_assert(tg_syscall_by_name(pairs[i][0]));
		cr_assert(tg_syscall_by_name(pairs[i][1]));
	}
	cr_assert_eq(tg_syscall_by_name("unlinkat")->nr, SYS_unlinkat);
	cr_assert_null(tg_syscall_by_nr(SYS_read));
}

Test(decode, mem_read_string_limits)
{
	char *s = NULL;
	cr_assert_eq(tg_mem_read_string(getpid(), U("hello"), 64, &s), 0);
	cr_assert_str_eq(s, "hello");
	free(s);
	cr_assert_eq(tg_mem_read_string(getpid(), 0, 64, &s), -EFAULT);
	cr_assert_eq(tg_mem_read_string(getpid(), U("0123456789"), 5, &s), -ENAMETOOLONG);

	/* Unterminated up to an unmapped page: EFAULT, not a crash. */
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m, MAP_FAILED);
	cr_assert_eq(munmap(m + pg, (size_t)pg), 0);
	memset(m, 'x', (size_t)pg);
	cr_assert_eq(tg_mem_read_string(getpid(), U(m + pg - 10), 4096, &s), -EFAULT);
	/* A string ending right at the page end reads fine. */
	m[pg - 1] = '\0';
	cr_assert_eq(tg_mem_read_string(getpid(), U(m + pg - 4), 4096, &s), 0);
	cr_assert_str_eq(s, "xxx");
	free(s);
	munmap(m, (size_t)pg);
}

Test(decode, argv)
{
	char *argv[] = { "sh", "-c", "echo hi", NULL };
	char **out = NULL;
	size_t n = 0;
	cr_assert_eq(tg_mem_read_argv(getpid(), U(argv), &out, &n), 0);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(out[2], "echo hi");
	cr_assert_null(out[3]);
	free(out); /* one block */
	cr_assert_eq(tg_mem_read_argv(getpid(), 0, &out, &n), 0);
	cr_assert_eq(n, 0);
	cr_assert_null(out[0]);
	free(out);
}

/* Many arguments, some empty, some longer than the read window, strings
 * not laid out in order: each comes back exactly, in one packed block. */
Test(decode, argv_many)
{
	enum { N = 20000 };
	char **argv = calloc(N + 1, sizeof(char *));
	cr_assert_not_null(argv);
	for (size_t i = 0; i < N; i++) {
		size_t len = i % 997 == 0 ? 70000 + i % 7 : i % 5 == 0 ? 0 : 1 + i % 13;
		argv[N - 1 - i] = malloc(len + 1);
		cr_assert_not_null(argv[N - 1 - i]);
		for (size_t k = 0; k < len; k++)
			argv[N - 1 - i][k] = (char)('a' + (i + k) % 26);
		argv[N - 1 - i][len] = '\0';
	}
	char **out = NULL;
	size_t n = 0;
	cr_assert_eq(tg_mem_read_argv(getpid(), U(argv), &out, &n), 0);
	cr_assert_eq(n, N);
	for (size_t i = 0; i < N; i++)
		cr_assert_str_eq(out[i], argv[i], "argument %zu", i);
	cr_assert_null(out[N]);
	free(out);
	tg_strv_free(argv);
}

/* The pointer array may end just before an unmapped page (the pointers
 * are read in 64 KiB windows): read whole. One that runs into the hole
 * with no NULL is EFAULT, as the kernel says. */
Test(decode, argv_array_at_a_page_end)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m, MAP_FAILED);
	cr_assert_eq(munmap(m + pg, (size_t)pg), 0);
	char **arr = (char **)(void *)(m + pg) - 4;
	arr[0] = "a";
	arr[1] = "bb";
	arr[2] = "";
	arr[3] = NULL;
	char **out = NULL;
	size_t n = 0;
	cr_assert_eq(tg_mem_read_argv(getpid(), U(arr), &out, &n), 0);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(out[0], "a");
	cr_assert_str_eq(out[1], "bb");
	cr_assert_str_eq(out[2], "");
	cr_assert_null(out[3]);
	free(out);
	arr[3] = "no end";
	cr_assert_eq(tg_mem_read_argv(getpid(), U(arr), &out, &n), -EFAULT);
	munmap(m, (size_t)pg);
}

static int dec(long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, struct tg_op *op)
{
	uint64_t args[6] = { a0, a1, a2, a3, a4, 0 };
	return tg_decode(getpid(), nr, args, op);
}

static char *in_cwd(const char *name)
{
	return tg_asprintf("%s/%s", cwd, name);
}

Test(decode, opens)
{
	struct tg_op op;
	_cleanup_free_ char *x = in_cwd("x");

	cr_assert_eq(dec(SYS_openat, (uint64_t)AT_FDCWD, U("x"), O_RDONLY, 0, 0, &op), TG_DECODE_SKIP);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_openat, (uint64_t)AT_FDCWD, U("x"), O_WRONLY | O_CREAT, 0640, 0, &op), 0);
	cr_assert_eq(op.kind, TG_OP_OPEN);
	cr_assert_str_eq(op.path, x);
	cr_assert(op.writes);
	cr_assert(op.follow);
	cr_assert_eq(op.mode, 0640);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_open, U("x"), O_WRONLY | O_CREAT | O_EXCL, 0, 0, 0, &op), 0);
	cr_assert_not(op.follow, "O_CREAT|O_EXCL never follows the last link");
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_openat, (uint64_t)AT_FDCWD, U("x"), O_PATH | O_WRONLY | O_CREAT, 0, 0, &op),
	             TG_DECODE_SKIP, "O_PATH ignores the write bits");
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_creat, U("x"), 0600, 0, 0, 0, &op), 0);
	cr_assert_eq(op.flags, O_CREAT | O_WRONLY | O_TRUNC);
	tg_op_clear(&op);
}

Test(decode, namespace_ops)
{
	struct tg_op op;
	_cleanup_free_ char *a = in_cwd("a");
	_cleanup_free_ char *b = in_cwd("b");

	cr_assert_eq(dec(SYS_unlinkat, (uint64_t)AT_FDCWD, U("a"), AT_REMOVEDIR, 0, 0, &op), 0);
	cr_assert_eq(op.kind, TG_OP_RMDIR);
	cr_assert_str_eq(op.path, a);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_renameat2, (uint64_t)AT_FDCWD, U("a"), (uint64_t)AT_FDCWD, U("b"), 1, &op), 0);
	cr_assert_eq(op.kind, TG_OP_RENAME);
	cr_assert_str_eq(op.path2, b);
	cr_assert_eq(op.flags, 1);
	cr_assert_not(op.follow);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_symlink, U("../t"), U("a"), 0, 0, 0, &op), 0);
	cr_assert_str_eq(op.target, "../t");
	cr_assert_str_eq(op.path, a);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_fchownat, (uint64_t)AT_FDCWD, U("a"), 0xffffffffu, 7, AT_SYMLINK_NOFOLLOW, &op), 0);
	cr_assert_eq(op.uid, -1);
	cr_assert_eq(op.gid, 7);
	cr_assert_not(op.follow);
	tg_op_clear(&op);
}

Test(decode, fd_ops_name_the_fd)
{
	struct tg_op op;
	char tmpl[] = "/tmp/tg-decode-XXXXXX";
	int fd = mkstemp(tmpl);
	cr_assert_geq(fd, 0);
	cr_assert_eq(dec(SYS_fchmod, (uint64_t)fd, 0600, 0, 0, 0, &op), 0);
	cr_assert_str_eq(op.path, tmpl);
	tg_op_clear(&op);
	/* futimens() is utimensat(fd, NULL, ...). */
	cr_assert_eq(dec(SYS_utimensat, (uint64_t)fd, 0, 0, 0, 0, &op), 0);
	cr_assert_eq(op.kind, TG_OP_UTIMES);
	cr_assert_str_eq(op.path, tmpl);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_fsetxattr, (uint64_t)fd, U("user.k"), 0, 0, 0, &op), 0);
	cr_assert_str_eq(op.xattr_name, "user.k");
	tg_op_clear(&op);
	/* execveat(fd, "", AT_EMPTY_PATH) runs the fd itself. */
	char *argv[] = { "p", NULL };
	cr_assert_eq(dec(SYS_execveat, (uint64_t)fd, U(""), U(argv), 0, AT_EMPTY_PATH, &op), 0);
	cr_assert_str_eq(op.path, tmpl);
	cr_assert_eq(op.argc, 1);
	tg_op_clear(&op);
	unlink(tmpl);
	close(fd);
}

Test(decode, bad_arguments_fail_like_the_kernel)
{
	struct tg_op op;
	char longp[PATH_MAX + 10];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	cr_assert_eq(dec(SYS_unlink, 0, 0, 0, 0, 0, &op), -EFAULT);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_utimensat, (uint64_t)AT_FDCWD, 0, 0, 0, 0, &op), -EFAULT);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_unlink, U(""), 0, 0, 0, 0, &op), -ENOENT);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_unlink, U(longp), 0, 0, 0, 0, &op), -ENAMETOOLONG);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_read, 0, 0, 0, 0, 0, &op), TG_DECODE_SKIP);
	tg_op_clear(&op);
}

/* An exec of a program that is not there is TG_DECODE_ABSENT, its argv
 * unread: a PATH search's misses cost a stat each, not a read of a
 * 100,000-word argv. An unreadable argv proves it was not read. A program
 * that is there, or an open file's kernel-made name, is decoded in full. */
Test(decode, exec_of_a_missing_program_skips_argv)
{
	struct tg_op op;
	char *argv[] = { "sh", "-c", "true", NULL };
	cr_assert_eq(dec(SYS_execve, U("/nonexistent-txguard/sh"), U(argv), 0, 0, 0, &op), TG_DECODE_ABSENT);
	cr_assert_null(op.argv);
	cr_assert_str_eq(op.path, "/nonexistent-txguard/sh");
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_execve, U("/nonexistent-txguard/sh"), 1 /* unreadable */, 0, 0, 0, &op), TG_DECODE_ABSENT);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_execve, U("/etc/passwd/sh"), U(argv), 0, 0, 0, &op), TG_DECODE_ABSENT, "ENOTDIR");
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_execveat, (uint64_t)AT_FDCWD, U("no-such-program-here"), U(argv), 0, 0, &op), TG_DECODE_ABSENT);
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_execve, U("/bin/sh"), 1, 0, 0, 0, &op), -EFAULT, "a program that is there: argv is read");
	tg_op_clear(&op);
	cr_assert_eq(dec(SYS_execve, U("/bin/sh"), U(argv), 0, 0, 0, &op), 0);
	cr_assert_eq(op.argc, 3);
	cr_assert_str_eq(op.argv[2], "true");
	tg_op_clear(&op);
	/* A deleted file through its fd: the kernel-made name is no miss. */
	char tmpl[] = "/tmp/tg-decode-XXXXXX";
	int fd = mkstemp(tmpl);
	cr_assert_geq(fd, 0);
	unlink(tmpl);
	char viafd[64];
	snprintf(viafd, sizeof(viafd), "/proc/self/fd/%d", fd);
	cr_assert_eq(dec(SYS_execve, U(viafd), U(argv), 0, 0, 0, &op), 0);
	cr_assert(tg_path_is_kernel_name(op.path), "%s", op.path);
	cr_assert_eq(op.argc, 3);
	tg_op_clear(&op);
	close(fd);
}

Test(decode, network)
{
	struct tg_op op;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53) };
	cr_assert_eq(dec(SYS_connect, 3, U(&sa), sizeof(sa), 0, 0, &op), 0);
	cr_assert_eq(op.kind, TG_OP_CONNECT);
	cr_assert_eq(op.addrlen, sizeof(sa));
	cr_assert_eq(((struct sockaddr_in *)&op.addr)->sin_port, htons(53));
	tg_op_clear(&op);
	struct msghdr m = { 0 };
	cr_assert_eq(dec(SYS_sendmsg, 3, U(&m), 0, 0, 0, &op), TG_DECODE_SKIP);
	tg_op_clear(&op);
	m.msg_name = &sa;
	m.msg_namelen = sizeof(sa);
	cr_assert_eq(dec(SYS_sendmsg, 3, U(&m), 0, 0, 0, &op), 0);
	cr_assert_eq(op.kind, TG_OP_SENDTO);
	cr_assert_eq(op.addr.ss_family, AF_INET);
	tg_op_clear(&op);
}

Test(filter, check_names_the_bad_syscall)
{
	const char *names[] = { "socket", "no_such_call" };
	int errs[] = { EACCES, EPERM };
	struct tg_filter_config cfg = { .denied_syscalls = names, .deny_errno = errs, .ndenied = 1 };
	const char *bad = NULL;
	cr_assert_eq(tg_filter_check(&cfg, &bad), 0);
	cfg.ndenied = 2;
	cr_assert_eq(tg_filter_check(&cfg, &bad), -EINVAL);
	cr_assert_str_eq(bad, "no_such_call");
	errs[1] = 0;
	names[1] = "unlinkat"; /* also in the trap table: the denial wins, no conflict */
	cr_assert_eq(tg_filter_check(&cfg, &bad), -EINVAL);
	errs[1] = EROFS;
	cr_assert_eq(tg_filter_check(&cfg, &bad), 0);
	cfg.trap_network = true;
	cr_assert_eq(tg_filter_check(&cfg, &bad), 0);
}

static bool same_prog(const struct tg_filter_prog *a, const struct tg_filter_prog *b)
{
	return a->fprog.len == b->fprog.len &&
	       memcmp(a->fprog.filter, b->fprog.filter, a->fprog.len * sizeof(struct sock_filter)) == 0;
}

static size_t count_bpf(const char *dir)
{
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "ls '%s' 2>/dev/null | grep -c '\\.bpf$'", dir);
	FILE *f = popen(cmd, "r");
	size_t n = 0;
	if (f && fscanf(f, "%zu", &n) != 1)
		n = 0;
	if (f)
		pclose(f);
	return n;
}

/* The compiled filter through the cache: the same program as a fresh
 * build, read back on the second call, rebuilt when the entry is torn or
 * flipped, one entry per config; a bad config is refused, never cached. */
Test(filter, cache_gives_the_built_program)
{
	char tmpl[] = "/tmp/tg-filter-cache-XXXXXX";
	cr_assert_not_null(mkdtemp(tmpl));
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/cache", tmpl);
	size_t trusted = strlen(tmpl);
	const char *names[] = { "socket", "no_such_call" };
	int errs[] = { EACCES, EPERM };
	struct tg_filter_config cfg = { .denied_syscalls = names, .deny_errno = errs, .ndenied = 1 };
	struct tg_filter_prog fresh, a, b;
	const char *bad = NULL;

	cr_assert_eq(tg_filter_prepare(&cfg, &fresh, &bad), 0);
	cr_assert_eq(tg_filter_prepare_cached(&cfg, &a, &bad, dir, trusted), 0);
	cr_assert(same_prog(&fresh, &a));
	cr_assert_eq(count_bpf(dir), 1, "the first call stores the program");
	cr_assert_eq(tg_filter_prepare_cached(&cfg, &b, &bad, dir, trusted), 0);
	cr_assert(same_prog(&fresh, &b), "read back: the same program");
	tg_filter_prog_free(&a);
	tg_filter_prog_free(&b);

	/* Damage the entry: a flipped byte, then a torn one. */
	char cmd[PATH_MAX * 2];
	snprintf(cmd, sizeof(cmd), "f=$(ls '%s'/*.bpf) && printf '\\377' | dd of=\"$f\" bs=1 seek=40 conv=notrunc 2>/dev/null", dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(tg_filter_prepare_cached(&cfg, &a, &bad, dir, trusted), 0);
	cr_assert(same_prog(&fresh, &a), "a flipped entry is a miss, rebuilt");
	tg_filter_prog_free(&a);
	snprintf(cmd, sizeof(cmd), "f=$(ls '%s'/*.bpf) && truncate -s 20 \"$f\"", dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(tg_filter_prepare_cached(&cfg, &a, &bad, dir, trusted), 0);
	cr_assert(same_prog(&fresh, &a), "a torn entry is a miss, rebuilt");
	tg_filter_prog_free(&a);

	/* Another config: its own entry and its own program. */
	cfg.trap_network = true;
	cr_assert_eq(tg_filter_prepare_cached(&cfg, &a, &bad, dir, trusted), 0);
	cr_assert_eq(count_bpf(dir), 2);
	cr_assert(!same_prog(&fresh, &a), "trap_network changes the program");
	tg_filter_prog_free(&a);

	cfg.ndenied = 2;
	cr_assert_eq(tg_filter_prepare_cached(&cfg, &a, &bad, dir, trusted), -EINVAL);
	cr_assert_str_eq(bad, "no_such_call");
	cr_assert_eq(count_bpf(dir), 2, "a bad config is not cached");
	tg_filter_prog_free(&fresh);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	cr_assert_eq(system(cmd), 0);
}

Test(decode, openat2_beneath_resolves_under_dirfd)
{
	struct tg_op op;
	char dir[] = "/tmp/tg-decode-dir-XXXXXX";
	cr_assert(mkdtemp(dir));
	int dfd = open(dir, O_PATH | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
	_cleanup_free_ char *want = tg_asprintf("%s/etc/x", dir);
	struct open_how how = { .flags = O_WRONLY | O_CREAT, .mode = 0600, .resolve = RESOLVE_IN_ROOT };
	cr_assert_eq(dec(SYS_openat2, (uint64_t)dfd, U("/etc/x"), U(&how), sizeof(how), 0, &op), 0);
	cr_assert_str_eq(op.path, want, "IN_ROOT: '/' is dirfd, not the real root");
	tg_op_clear(&op);
	how.resolve = RESOLVE_BENEATH;
	cr_assert_eq(dec(SYS_openat2, (uint64_t)dfd, U("../escape"), U(&how), sizeof(how), 0, &op), -EXDEV);
	tg_op_clear(&op);
	how.flags = O_RDONLY;
	cr_assert_eq(dec(SYS_openat2, (uint64_t)dfd, U("x"), U(&how), sizeof(how), 0, &op), TG_DECODE_SKIP);
	tg_op_clear(&op);
	close(dfd);
	rmdir(dir);
}

Test(decode, unix_bind_creates_a_socket_file)
{
	struct tg_op op;
	struct sockaddr_un un = { .sun_family = AF_UNIX, .sun_path = "sock" };
	_cleanup_free_ char *want = in_cwd("sock");
	cr_assert_eq(dec(SYS_bind, 3, U(&un), sizeof(un), 0, 0, &op), 0);
	cr_assert_eq(op.kind, TG_OP_MKNOD);
	cr_assert_eq(op.mode, S_IFSOCK);
	cr_assert_str_eq(op.path, want);
	cr_assert(op.writes);
	tg_op_clear(&op);
	/* Abstract names and other families touch no file. */
	un.sun_path[0] = '\0';
	cr_assert_eq(dec(SYS_bind, 3, U(&un), sizeof(un), 0, 0, &op), TG_DECODE_SKIP);
	tg_op_clear(&op);
	struct sockaddr_in in = { .sin_family = AF_INET };
	cr_assert_eq(dec(SYS_bind, 3, U(&in), sizeof(in), 0, 0, &op), TG_DECODE_SKIP);
	tg_op_clear(&op);
}

/* Calls on other processes: whom they reach, from their arguments. */
Test(decode, process_targets)
{
	struct tg_op op;
	pid_t me = getpid();
	uint64_t kill_pid[6] = { 1234, 9 };
	cr_assert_eq(tg_decode(me, SYS_kill, kill_pid, &op), 0);
	cr_expect_eq(op.kind, TG_OP_PROCESS);
	cr_expect_eq(op.proc.scope, TG_PROC_PID);
	cr_expect_eq(op.proc.pid, 1234);
	cr_expect_eq(op.proc.sig, 9);
	tg_op_clear(&op);
	uint64_t kill_grp[6] = { (uint64_t)-77, 15 };
	cr_assert_eq(tg_decode(me, SYS_kill, kill_grp, &op), 0);
	cr_expect_eq(op.proc.scope, TG_PROC_PGRP);
	cr_expect_eq(op.proc.pid, 77);
	tg_op_clear(&op);
	uint64_t kill_own[6] = { 0, 15 };
	cr_assert_eq(tg_decode(me, SYS_kill, kill_own, &op), 0);
	cr_expect_eq(op.proc.scope, TG_PROC_PGRP);
	cr_expect_eq(op.proc.pid, getpgid(0));
	tg_op_clear(&op);
	uint64_t kill_all[6] = { 0xffffffffu, 9 };
	cr_assert_eq(tg_decode(me, SYS_kill, kill_all, &op), 0);
	cr_expect_eq(op.proc.scope, TG_PROC_ALL);
	tg_op_clear(&op);
	uint64_t tgkill[6] = { 500, 501, 10 };
	cr_assert_eq(tg_decode(me, SYS_tgkill, tgkill, &op), 0);
	cr_expect_eq(op.proc.pid, 501, "tgkill reaches the thread");
	tg_op_clear(&op);
	uint64_t prio[6] = { 2, 1000 }; /* PRIO_USER */
	cr_assert_eq(tg_decode(me, SYS_setpriority, prio, &op), 0);
	cr_expect_eq(op.proc.scope, TG_PROC_USER);
	tg_op_clear(&op);
	uint64_t ioprio[6] = { 1, 0 }; /* IOPRIO_WHO_PROCESS, self */
	cr_assert_eq(tg_decode(me, SYS_ioprio_set, ioprio, &op), 0);
	cr_expect_eq(op.proc.pid, me);
	tg_op_clear(&op);
	uint64_t getlim[6] = { 1234, 7, 0, 1 }; /* prlimit64 that only reads */
	cr_expect_eq(tg_decode(me, SYS_prlimit64, getlim, &op), TG_DECODE_SKIP);
	tg_op_clear(&op);
	/* A pidfd names its process through fdinfo. */
	int pfd = (int)syscall(SYS_pidfd_open, me, 0);
	if (pfd >= 0) {
		uint64_t ps[6] = { (uint64_t)pfd, 15 };
		cr_assert_eq(tg_decode(me, SYS_pidfd_send_signal, ps, &op), 0);
		cr_expect_eq(op.proc.pid, me);
		tg_op_clear(&op);
		close(pfd);
	}
	uint64_t badfd[6] = { 999, 15 };
	cr_expect_eq(tg_decode(me, SYS_pidfd_send_signal, badfd, &op), -EBADF);
	tg_op_clear(&op);
}
