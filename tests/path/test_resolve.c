/* test_resolve.c — tg_path_resolve()/tg_path_of_fd() on a real tree.
 *
 * Every test builds its own tree in a fresh temporary directory (Criterion
 * runs each test in its own process, so chdir() is harmless). Tests that
 * need a tracee other than ourselves fork a child that sets itself up and
 * then waits on a pipe.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/path.h"
#include "base/util.h"

static char tmp[PATH_MAX];

static void mk_tree(void)
{
	char tpl[] = "/tmp/tg-path-XXXXXX";
	cr_assert_not_null(mkdtemp(tpl));
	/* /tmp may itself be a symlink: compare against the physical path. */
	cr_assert_not_null(realpath(tpl, tmp));
	cr_assert_eq(chdir(tmp), 0);
	cr_assert_eq(mkdir("real", 0755), 0);
	cr_assert_eq(mkdir("real/sub", 0755), 0);
	int fd = open("real/f", O_CREAT | O_WRONLY, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
}

static void rm_tree(void)
{
	char cmd[PATH_MAX + 32];
	if (tmp[0] && strncmp(tmp, "/tmp/tg-path-", 13) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		cr_expect_eq(system(cmd), 0);
	}
}

static void lnk(const char *target, const char *name)
{
	cr_assert_eq(symlink(target, name), 0, "symlink %s -> %s", name, target);
}

/* Resolve and compare with tmp-relative `want` ("" = tmp itself). */
static void expect_at(pid_t pid, int dirfd, const char *path, bool follow, const char *want_rel)
{
	char *got = NULL;
	int r = tg_path_resolve(pid, dirfd, path, follow, false, &got);
	cr_assert_eq(r, 0, "resolve(%s) = %d (%s)", path, r, strerror(-r));
	char want[PATH_MAX * 2];
	snprintf(want, sizeof(want), "%s%s%s", tmp, want_rel[0] ? "/" : "", want_rel);
	cr_expect_str_eq(got, want, "resolve(%s, follow=%d)", path, follow);
	free(got);
}

static void expect_rel(const char *path, bool follow, const char *want_rel)
{
	expect_at(getpid(), AT_FDCWD, path, follow, want_rel);
}

static void expect_err(const char *path, bool follow, int err)
{
	char *got = NULL;
	int r = tg_path_resolve(getpid(), AT_FDCWD, path, follow, false, &got);
	cr_expect_eq(r, -err, "resolve(%s) = %d, want %d (got %s)", path, r, -err, got ? got : "-");
	free(got);
}

TestSuite(resolve, .init = mk_tree, .fini = rm_tree);

Test(resolve, plain_relative_and_absolute)
{
	char abs[PATH_MAX * 2];
	expect_rel("real/f", true, "real/f");
	expect_rel("./real//f", false, "real/f");
	expect_rel("real/sub/../f", true, "real/f");
	expect_rel(".", true, "");
	snprintf(abs, sizeof(abs), "%s/real/./sub/", tmp);
	expect_rel(abs, false, "real/sub");
}

Test(resolve, symlink_in_middle)
{
	char abs[PATH_MAX * 2];
	snprintf(abs, sizeof(abs), "%s/real", tmp);
	lnk(abs, "absl");
	lnk("real", "rell");
	expect_rel("absl/f", false, "real/f");
	expect_rel("rell/f", false, "real/f");
	expect_rel("rell/sub/../f", false, "real/f");
}

Test(resolve, last_component_follow)
{
	lnk("real/f", "lf");
	expect_rel("lf", true, "real/f");
	expect_rel("lf", false, "lf");
	/* A trailing slash makes the kernel follow even for lstat-like calls. */
	lnk("real", "ld");
	expect_rel("ld/", false, "real");
	expect_rel("ld", false, "ld");
}

Test(resolve, chains)
{
	lnk("real", "c3");
	lnk("c3", "c2");
	lnk("./c2/", "c1");
	expect_rel("c1/f", false, "real/f");
	expect_rel("c1", true, "real");
	expect_rel("c1", false, "c1");
	/* A link whose text is a relative path with components. */
	lnk("../f", "real/sub/up");
	expect_rel("c1/sub/up", true, "real/f");
}

/* The links noted are the ones followed, each by its own name, in the
 * order the walk met them: the names a call goes through. */
static void expect_noted(const char *path, bool follow, const char *const *want_rel)
{
	tg_path_note_links(true);
	char *got = NULL;
	cr_assert_eq(tg_path_resolve(getpid(), AT_FDCWD, path, follow, false, &got), 0, "resolve(%s)", path);
	free(got);
	char **v = tg_path_take_links();
	tg_path_note_links(false);
	size_t n = 0;
	for (; want_rel[n]; n++) {
		char want[PATH_MAX * 2];
		snprintf(want, sizeof(want), "%s/%s", tmp, want_rel[n]);
		cr_assert(v && v[n], "resolve(%s): link %zu (%s) not noted", path, n, want_rel[n]);
		cr_expect_str_eq(v[n], want, "resolve(%s): link %zu", path, n);
	}
	cr_expect(!v || !v[n], "resolve(%s): more links noted than %zu (%s)", path, n, v && v[n] ? v[n] : "");
	tg_strv_free(v);
}

Test(resolve, links_followed_are_noted)
{
	lnk("real", "c3");
	lnk("c3", "c2");
	lnk("./c2/", "c1");
	lnk("real/f", "lf");
	lnk("gone", "dang");
	expect_noted("real/f", true, (const char *const[]){ NULL });
	expect_noted("c1/f", false, (const char *const[]){ "c1", "c2", "c3", NULL });
	expect_noted("lf", true, (const char *const[]){ "lf", NULL });
	expect_noted("lf", false, (const char *const[]){ NULL });
	expect_noted("dang", true, (const char *const[]){ "dang", NULL });
	/* Nothing is noted while off, nor kept for later. */
	char *got = NULL;
	cr_assert_eq(tg_path_resolve(getpid(), AT_FDCWD, "c1/f", false, false, &got), 0);
	free(got);
	cr_assert_null(tg_path_take_links());
}

Test(resolve, dotdot_after_symlink_is_physical)
{
	lnk("real/sub", "s");
	/* Lexically s/.. would be tmp; the kernel goes to real. */
	expect_rel("s/../f", true, "real/f");
	expect_rel("s/..", true, "real");
	cr_assert_eq(mkdir("other", 0755), 0);
	lnk("../real/sub", "other/s2");
	expect_rel("other/s2/../../other", true, "other");
}

Test(resolve, loops)
{
	lnk("loop2", "loop1");
	lnk("loop1", "loop2");
	lnk("me", "me");
	expect_err("loop1/x", false, ELOOP);
	expect_err("loop1", true, ELOOP);
	expect_err("me/x", false, ELOOP);
	expect_rel("loop1", false, "loop1");
}

Test(resolve, forty_links_ok_forty_one_eloop)
{
	char name[32], target[32];
	/* l0 -> l1 -> ... -> l39 -> real: 40 links followed. */
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		if (i == 39)
			snprintf(target, sizeof(target), "real");
		else
			snprintf(target, sizeof(target), "l%d", i + 1);
		lnk(target, name);
	}
	expect_rel("l0/f", false, "real/f");
	lnk("l0", "extra");
	expect_err("extra/f", false, ELOOP);
}

Test(resolve, dangling)
{
	char abs[PATH_MAX * 2];
	snprintf(abs, sizeof(abs), "%s/nowhere", tmp);
	lnk(abs, "d");
	lnk("nowhere2/deeper", "rd");
	expect_rel("d", true, "nowhere");
	expect_rel("d", false, "d");
	expect_rel("d/x/../y", false, "nowhere/y");
	expect_rel("rd", true, "nowhere2/deeper");
}

Test(resolve, missing_parent_is_lexical)
{
	expect_rel("missing/a/../b", false, "missing/b");
	expect_rel("missing/a/./b/", true, "missing/a/b");
	expect_rel("real/f/x", true, "real/f/x");
}

Test(resolve, root_never_escaped)
{
	char *got = NULL;
	cr_assert_eq(tg_path_resolve(getpid(), AT_FDCWD, "/../../..", true, false, &got), 0);
	cr_expect_str_eq(got, "/");
	free(got);
	lnk("/../../", "toroot");
	cr_assert_eq(tg_path_resolve(getpid(), AT_FDCWD, "toroot/..", true, false, &got), 0);
	cr_expect_str_eq(got, "/");
	free(got);
}

Test(resolve, dirfd)
{
	int d = open("real", O_RDONLY | O_DIRECTORY);
	cr_assert_geq(d, 0);
	expect_at(getpid(), d, "f", false, "real/f");
	expect_at(getpid(), d, "../real/sub/..", true, "real");
	char *got = NULL;
	cr_expect_eq(tg_path_resolve(getpid(), d, "", false, true, &got), 0);
	cr_expect_str_eq(got, tmp[0] ? strcat(strcpy((char[PATH_MAX * 2]){0}, tmp), "/real") : "");
	free(got);
	got = NULL;
	cr_expect_eq(tg_path_resolve(getpid(), d, "", false, false, &got), -ENOENT);
	cr_expect_eq(tg_path_resolve(getpid(), 987, "f", false, false, &got), -EBADF);
	cr_expect_eq(tg_path_resolve(getpid(), -5, "f", false, false, &got), -EBADF);
	/* An absolute path ignores dirfd, even a bad one. */
	cr_expect_eq(tg_path_resolve(getpid(), 987, "/", false, false, &got), 0);
	cr_expect_str_eq(got, "/");
	free(got);
	close(d);
}

Test(resolve, empty_path_cwd)
{
	expect_at(getpid(), AT_FDCWD, ".", false, "");
	char *got = NULL;
	cr_assert_eq(tg_path_resolve(getpid(), AT_FDCWD, "", false, true, &got), 0);
	cr_expect_str_eq(got, tmp);
	free(got);
}

Test(resolve, proc_self_fd)
{
	int f = open("real/f", O_RDONLY);
	int d = open("real/sub", O_RDONLY | O_DIRECTORY);
	cr_assert_geq(f, 0);
	cr_assert_geq(d, 0);
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", f);
	expect_rel(p, true, "real/f");
	snprintf(p, sizeof(p), "/proc/self/fd/%d/../f", d);
	expect_rel(p, true, "real/f");
	snprintf(p, sizeof(p), "/proc/self/fd/%d/new", d);
	expect_rel(p, false, "real/sub/new");

	/* Without follow the link itself is the object, named for the tracee. */
	char *got = NULL, want[128];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", f);
	cr_assert_eq(tg_path_resolve(getpid(), AT_FDCWD, p, false, false, &got), 0);
	snprintf(want, sizeof(want), "/proc/%d/fd/%d", (int)getpid(), f);
	cr_expect_str_eq(got, want);
	free(got);
}

Test(resolve, non_path_fd_targets)
{
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	char p[64], *got = NULL;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd[0]);
	cr_assert_eq(tg_path_resolve(getpid(), AT_FDCWD, p, true, false, &got), 0);
	cr_expect(strncmp(got, "pipe:[", 6) == 0, "got %s", got);
	free(got);
	snprintf(p, sizeof(p), "/proc/self/fd/%d/x", pfd[0]);
	cr_expect_eq(tg_path_resolve(getpid(), AT_FDCWD, p, true, false, &got), -ENOTDIR);

	cr_assert_eq(tg_path_of_fd(getpid(), pfd[1], &got), 0);
	cr_expect(strncmp(got, "pipe:[", 6) == 0, "got %s", got);
	free(got);

	int m = memfd_create("tgname", 0);
	cr_assert_geq(m, 0);
	cr_assert_eq(tg_path_of_fd(getpid(), m, &got), 0);
	cr_expect_str_eq(got, "/memfd:tgname (deleted)");
	free(got);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", m);
	cr_assert_eq(tg_path_resolve(getpid(), AT_FDCWD, p, true, false, &got), 0);
	cr_expect_str_eq(got, "/memfd:tgname (deleted)");
	free(got);
}

Test(resolve, path_of_fd)
{
	int f = open("real/f", O_RDONLY);
	char *got = NULL, want[PATH_MAX * 2];
	cr_assert_eq(tg_path_of_fd(getpid(), f, &got), 0);
	snprintf(want, sizeof(want), "%s/real/f", tmp);
	cr_expect_str_eq(got, want);
	free(got);
	got = NULL;
	cr_expect_eq(tg_path_of_fd(getpid(), 999, &got), -EBADF);
	cr_expect_eq(tg_path_of_fd(getpid(), -1, &got), -EBADF);
	cr_expect_null(got);
}

Test(resolve, bad_pid)
{
	char *got = NULL;
	/* PID_MAX_LIMIT is 4194304: this pid cannot exist. */
	cr_expect_eq(tg_path_resolve(4194305, AT_FDCWD, "/x", true, false, &got), -ESRCH);
	cr_expect_eq(tg_path_of_fd(4194305, 0, &got), -ESRCH);
}

/* ---- another process as the tracee ----------------------------------- */

struct child {
	pid_t pid;
	int hold;      /* write end: closing it lets the child exit */
};

/* Fork a child that runs setup() and then blocks until released. */
static struct child spawn(void (*setup)(void))
{
	int ready[2], hold[2];
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(hold), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(ready[0]);
		close(hold[1]);
		setup();
		char c = 'x';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		(void)!read(hold[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1, "child setup failed");
	close(ready[0]);
	return (struct child){ .pid = pid, .hold = hold[1] };
}

static void reap(struct child *c)
{
	int st;
	close(c->hold);
	cr_expect_eq(waitpid(c->pid, &st, 0), c->pid);
}

/* The child's fd 50 is real/sub, its cwd is real. */
static void setup_fd_cwd(void)
{
	int d = open("real/sub", O_RDONLY | O_DIRECTORY);
	if (d < 0 || dup2(d, 50) < 0 || chdir("real") < 0)
		_exit(2);
}

Test(resolve, proc_self_means_tracee)
{
	struct child c = spawn(setup_fd_cwd);
	/* fd 50 is not open in this process: only the child's view works. */
	expect_at(c.pid, AT_FDCWD, "/proc/self/fd/50/x", false, "real/sub/x");
	expect_at(c.pid, AT_FDCWD, "/proc/self/cwd/f", false, "real/f");
	expect_at(c.pid, AT_FDCWD, "/proc/thread-self/cwd", true, "real");
	expect_at(c.pid, AT_FDCWD, "f", false, "real/f");
	expect_at(c.pid, 50, "../f", false, "real/f");

	char *got = NULL, want[PATH_MAX * 2];
	cr_assert_eq(tg_path_resolve(c.pid, AT_FDCWD, "/proc/thread-self", true, false, &got), 0);
	snprintf(want, sizeof(want), "/proc/%d/task/%d", (int)c.pid, (int)c.pid);
	cr_expect_str_eq(got, want);
	free(got);
	/* /proc/mounts is a plain link to "self/mounts": still the tracee. */
	cr_assert_eq(tg_path_resolve(c.pid, AT_FDCWD, "/proc/mounts", true, false, &got), 0);
	snprintf(want, sizeof(want), "/proc/%d/mounts", (int)c.pid);
	cr_expect_str_eq(got, want);
	free(got);
	cr_assert_eq(tg_path_of_fd(c.pid, 50, &got), 0);
	snprintf(want, sizeof(want), "%s/real/sub", tmp);
	cr_expect_str_eq(got, want);
	free(got);
	reap(&c);
}

/* The child holds an fd opened before chroot, then chroots into tmp. */
static void setup_chroot(void)
{
	int d = open("real/sub", O_RDONLY | O_DIRECTORY);
	if (d < 0 || dup2(d, 51) < 0 || chroot(".") < 0 || chdir("/real") < 0)
		_exit(2);
}

static void expect_abs(pid_t pid, int dirfd, const char *path, bool follow, const char *want)
{
	char *got = NULL;
	int r = tg_path_resolve(pid, dirfd, path, follow, false, &got);
	cr_assert_eq(r, 0, "resolve(%s) = %d", path, r);
	cr_expect_str_eq(got, want, "resolve(%s)", path);
	free(got);
}

/* The child chroots into real/, keeping an fd on real/sub and one on tmp
 * (outside its new root), its cwd at its new "/". */
static void setup_chroot_sub(void)
{
	int d = open("real/sub", O_RDONLY | O_DIRECTORY);
	int o = open(".", O_RDONLY | O_DIRECTORY);
	if (d < 0 || o < 0 || dup2(d, 51) < 0 || dup2(o, 52) < 0 || chroot("real") < 0 || chdir("/") < 0)
		_exit(2);
}

/* want: under tmp (our view of the tracee's files). */
static void expect_ours(pid_t pid, int dirfd, const char *path, bool follow, const char *want)
{
	char full[PATH_MAX * 2];
	snprintf(full, sizeof(full), "%s%s", tmp, want);
	expect_abs(pid, dirfd, path, follow, full);
}

/* A tracee whose root is not ours: paths come back in OUR view (its root's
 * path prefixed), so that the policy and the journal judge what it really
 * reaches; absolute links restart at its root, not ours, and ".." stops
 * there. (Until issue 15 they came back as the tracee saw them.) */
Test(resolve, tracee_root)
{
	if (geteuid() != 0) {
		const char *must = getenv("TXGUARD_TESTS_MUST_WORK");
		cr_assert(!must || strcmp(must, "1") != 0, "chroot needs root (TXGUARD_TESTS_MUST_WORK=1)");
		cr_skip_test("chroot needs root");
	}
	lnk("/real", "abs");
	lnk("/../../../real/sub", "high");
	struct child c = spawn(setup_chroot);
	expect_ours(c.pid, AT_FDCWD, "/real/f", true, "/real/f");
	expect_ours(c.pid, AT_FDCWD, "/abs/f", true, "/real/f");
	expect_ours(c.pid, AT_FDCWD, "/abs", true, "/real");
	expect_ours(c.pid, AT_FDCWD, "/abs", false, "/abs");
	expect_ours(c.pid, AT_FDCWD, "/high/..", true, "/real");
	expect_ours(c.pid, AT_FDCWD, "../../..", true, "");
	expect_ours(c.pid, AT_FDCWD, "/", true, "");
	expect_ours(c.pid, AT_FDCWD, "f", true, "/real/f");
	expect_ours(c.pid, 51, "x", false, "/real/sub/x");
	char *got = NULL, want[PATH_MAX * 2];
	cr_assert_eq(tg_path_of_fd(c.pid, 51, &got), 0);
	snprintf(want, sizeof(want), "%s/real/sub", tmp);
	cr_expect_str_eq(got, want);
	free(got);
	reap(&c);

	/* Chrooted into a subdirectory: "/f" is real/f; an fd kept from
	 * before reaches outside the root, and ".." there goes on up. */
	c = spawn(setup_chroot_sub);
	expect_ours(c.pid, AT_FDCWD, "/f", false, "/real/f");
	expect_ours(c.pid, AT_FDCWD, "/../../f", false, "/real/f");
	expect_ours(c.pid, AT_FDCWD, "sub/../f", true, "/real/f");
	expect_ours(c.pid, AT_FDCWD, "/sub/x", false, "/real/sub/x");
	expect_ours(c.pid, 51, "../../outside", false, "/real/outside"); /* ".." stops at the root */
	expect_ours(c.pid, 52, "outside", false, "/outside");
	snprintf(want, sizeof(want), "%s/..", tmp);
	char *up = tg_path_normalize(want);
	expect_abs(c.pid, 52, "..", true, up);
	free(up);
	reap(&c);
}

/* Property: the one-openat2 fast path and the component walk agree (result
 * and error) on random paths through a random tree of directories, files and
 * symlinks (relative, absolute, dangling, looping, to files), relative and
 * absolute, with and without follow. Seeded: a failure names its seed. */
static const char *const names[] = { "a", "b", "c", "l1", "l2", "f" };

static void random_tree(unsigned *seed)
{
	char p[PATH_MAX * 2];
	for (int i = 0; i < 40; i++) {
		int depth = 1 + rand_r(seed) % 3;
		size_t len = (size_t)snprintf(p, sizeof(p), "%s", tmp);
		for (int d = 0; d < depth; d++)
			len += (size_t)snprintf(p + len, sizeof(p) - len, "/%s", names[rand_r(seed) % 6]);
		switch (rand_r(seed) % 4) {
		case 0: (void)!mkdir(p, 0755); break;
		case 1: { int fd = open(p, O_WRONLY | O_CREAT, 0644); if (fd >= 0) close(fd); break; }
		case 2: (void)!symlink(names[rand_r(seed) % 6], p); break;
		default: {
			char t[PATH_MAX * 2];
			snprintf(t, sizeof(t), "%s/%s/%s", tmp, names[rand_r(seed) % 6], names[rand_r(seed) % 6]);
			(void)!symlink(rand_r(seed) % 2 ? t : "../a", p);
		}
		}
	}
}

/* Random tree number s, alone in tmp; seed then goes on from it. */
static void fresh_tree(unsigned s, unsigned *seed)
{
	char cmd[PATH_MAX * 3];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/* '%s'/.[!.]*", tmp, tmp);
	cr_assert_eq(system(cmd), 0);
	*seed = s;
	random_tree(seed);
}

/* One to four of the names, beneath tmp when abs, else relative. */
static void random_path(unsigned *seed, bool abs, char *path, size_t size)
{
	size_t len = abs ? (size_t)snprintf(path, size, "%s", tmp) : 0;
	int depth = 1 + rand_r(seed) % 4;
	for (int d = 0; d < depth; d++)
		len += (size_t)snprintf(path + len, size - len, "%s%s", len ? "/" : "", names[rand_r(seed) % 6]);
}

Test(resolve, fast_path_agrees_with_the_walk)
{
	for (unsigned s = 1; s <= 40; s++) {
		unsigned seed;
		fresh_tree(s, &seed);
		for (int i = 0; i < 60; i++) {
			char path[PATH_MAX * 2];
			bool abs = rand_r(&seed) % 2;
			random_path(&seed, abs, path, sizeof(path));
			bool follow = rand_r(&seed) % 2;
			char *fast = NULL, *walk = NULL;
			tg_path_fast_disabled = false;
			int rf = tg_path_resolve(getpid(), AT_FDCWD, path, follow, false, &fast);
			tg_path_fast_disabled = true;
			int rw = tg_path_resolve(getpid(), AT_FDCWD, path, follow, false, &walk);
			tg_path_fast_disabled = false;
			cr_assert_eq(rf, rw, "seed %u: %s follow=%d: %d vs walk %d", s, path, follow, rf, rw);
			if (rf == 0)
				cr_assert_str_eq(fast, walk, "seed %u: %s follow=%d", s, path, follow);
			free(fast);
			free(walk);
		}
	}
}

/* tg_path_open_plain (the Landlock ruleset's places): whenever it claims a
 * path is its own resolution, the walk says the same, and its fd is of
 * the object the path names, or none when the walk finds nothing there. */
Test(resolve, open_plain_agrees_with_the_walk)
{
	int claimed = 0, opened = 0;
	for (unsigned s = 1; s <= 40; s++) {
		unsigned seed;
		fresh_tree(s, &seed);
		for (int i = 0; i < 60; i++) {
			char path[PATH_MAX * 2];
			random_path(&seed, true, path, sizeof(path));
			int fd = -2;
			int r = tg_path_open_plain(path, &fd);
			cr_assert(r == 0 || r == 1, "%s: %d", path, r);
			if (r == 0) {
				cr_assert_eq(fd, -1, "%s: not proved, yet an fd", path);
				continue;
			}
			claimed++;
			char *walk = NULL;
			tg_path_fast_disabled = true;
			int rw = tg_path_resolve(getpid(), AT_FDCWD, path, true, false, &walk);
			tg_path_fast_disabled = false;
			cr_assert_eq(rw, 0, "seed %u: %s: walk %d", s, path, rw);
			cr_assert_str_eq(walk, path, "seed %u: claimed its own resolution", s);
			struct stat a, b;
			bool exists = lstat(walk, &a) == 0;
			cr_assert_eq(fd >= 0, exists, "seed %u: %s: fd %d", s, path, fd);
			if (fd >= 0) {
				opened++;
				cr_assert_eq(fstat(fd, &b), 0);
				cr_assert(a.st_dev == b.st_dev && a.st_ino == b.st_ino, "seed %u: %s: another object", s, path);
				close(fd);
			}
			free(walk);
		}
	}
	cr_assert_gt(claimed, opened, "some missing paths were claimed");
	cr_assert_gt(opened, 0, "some existing paths were claimed");
	int fd;
	cr_assert_eq(tg_path_open_plain("relative", &fd), 0);
	cr_assert_eq(tg_path_open_plain("/proc/self", &fd), 0);
	cr_assert_eq(tg_path_open_plain("/tmp/../tmp", &fd), 0);
	cr_assert_eq(fd, -1);
}

/* Our own magic links (/dev/stdout, /dev/fd/N, /proc/self/fd/N): the
 * kernel's answer and the walk's are the file the fd holds, for a symlink
 * on the way too, and both say the same for a pipe, which names no file.
 * (The Landlock ruleset resolves /dev/stdout, /dev/stderr and /dev/fd at
 * every start.) */
Test(resolve, own_magic_links_name_what_they_hold)
{
	lnk("real", "via");
	int fd = open("via/f", O_WRONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(dup2(fd, 57), 57);
	int saved = dup(1);
	cr_assert_geq(saved, 0);
	cr_assert_eq(dup2(fd, 1), 1);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(dup2(p[0], 58), 58);

	char fdlink[64];
	snprintf(fdlink, sizeof(fdlink), "/proc/%d/fd", (int)getpid());
	const struct { const char *path, *want; } cases[] = {
		{ "/dev/stdout", "real/f" },
		{ "/dev/fd/57", "real/f" },
		{ "/proc/self/fd/57", "real/f" },
		{ "/dev/fd", NULL },
		{ "/dev/fd/58", "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *fast = NULL, *walk = NULL;
		tg_path_fast_disabled = false;
		int rf = tg_path_resolve(getpid(), AT_FDCWD, cases[i].path, true, false, &fast);
		tg_path_fast_disabled = true;
		int rw = tg_path_resolve(getpid(), AT_FDCWD, cases[i].path, true, false, &walk);
		tg_path_fast_disabled = false;
		cr_assert_eq(rf, rw, "%s: %d vs walk %d", cases[i].path, rf, rw);
		if (rf == 0)
			cr_expect_str_eq(fast, walk, "%s", cases[i].path);
		if (cases[i].want && cases[i].want[0])
			expect_rel(cases[i].path, true, cases[i].want);
		else if (!cases[i].want)
			cr_expect_str_eq(fast, fdlink, "%s", cases[i].path);
		free(fast);
		free(walk);
	}
	cr_assert_eq(dup2(saved, 1), 1);
	close(saved);
	close(fd);
}
