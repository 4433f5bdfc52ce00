/* test_landlock.c — core/landlock/landlock.h on a real tree, in forked children.
 *
 * Each check runs in a child that restricts itself and reports the first
 * failing step as its exit code, so a failure names the step.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <grp.h>
#include <unistd.h>

#include "landlock/landlock.h"

static char T[PATH_MAX];

static void need_landlock(void)
{
	/* A kernel fact, not a broken machine: TXGUARD_TESTS_MUST_WORK does not
	 * turn this skip into a failure (machines of one kind differ here). */
	if (tg_landlock_probe() > 0)
		return;
	cr_skip_test("Landlock unavailable on this kernel (ABI 0)");
}

static char *at(const char *rel)
{
	static char buf[8][PATH_MAX + 64];
	static int n;
	char *b = buf[n++ % 8];
	snprintf(b, sizeof(buf[0]), "%s/%s", T, rel);
	return b;
}

static void put(const char *rel, const char *content)
{
	FILE *f = fopen(at(rel), "w");
	cr_assert_not_null(f, "create %s", rel);
	fputs(content, f);
	fclose(f);
}

static void mk_tree(void)
{
	char tpl[] = "/tmp/tg-ll-XXXXXX";
	cr_assert_not_null(mkdtemp(tpl));
	cr_assert_not_null(realpath(tpl, T));
	const char *dirs[] = { "ws", "outside", "secret", "state", "home", "home/.aws" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		cr_assert_eq(mkdir(at(dirs[i]), 0755), 0);
	put("ws/file", "ws");
	put("outside/file", "outside");
	put("secret/key", "KEY");
	put("secretfile", "SECRET");
	put("state/journal", "J");
	put("home/.aws/credentials", "AWS");
	put("home/.bashrc", "rc");
	cr_assert_eq(symlink(at("secret/key"), at("ws/lnk")), 0);
	cr_assert_eq(symlink(T, at("alias")), 0);
}

static void rm_tree(void)
{
	char cmd[PATH_MAX + 32];
	if (strncmp(T, "/tmp/tg-ll-", 11) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
		cr_expect_eq(system(cmd), 0);
	}
}

TestSuite(landlock, .init = mk_tree, .fini = rm_tree);

/* open() fails with exactly `err` (0 = succeeds). */
static bool open_is(const char *path, int flags, int err)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);
	int e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	return e == err;
}

static int run_child(int (*body)(void))
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(body());
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "child died: status %d", st);
	return WEXITSTATUS(st);
}

static int restrict_std(void)
{
	const char *w[] = { at("ws") };
	const char *d[] = { at("secret"), at("secretfile"), at("alias/home/.aws") };
	const char *h[] = { at("state") };
	struct tg_landlock_spec spec = {
		.writable = w, .nwritable = 1,
		.deny_read = d, .ndeny_read = 3,
		.hidden = h, .nhidden = 1,
	};
	return tg_landlock_restrict(&spec);
}

static int body_writes(void)
{
	if (restrict_std() < 0)
		return 100;
	if (!open_is(at("outside/new"), O_CREAT | O_WRONLY, EACCES))
		return 1;
	if (!open_is(at("outside/file"), O_WRONLY, EACCES))
		return 2;
	/* Truncation is a right of its own from ABI 3; before it, Landlock
	 * cannot see O_TRUNC on a read-only open (the tracer does). */
	if (tg_landlock_probe() >= 3 && !open_is(at("outside/file"), O_RDONLY | O_TRUNC, EACCES))
		return 3;
	if (unlink(at("outside/file")) == 0 || errno != EACCES)
		return 4;
	if (mkdir(at("outside/d"), 0755) == 0 || errno != EACCES)
		return 5;
	int fd = open(at("ws/new"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return 6;
	close(fd);
	if (!open_is(at("ws/file"), O_WRONLY | O_TRUNC, 0))
		return 7;
	if (mkdir(at("ws/d"), 0755) < 0)
		return 8;
	/* ABI 1 refuses every move to another directory (EXDEV: mv copies
	 * instead); REFER (ABI 2) allows it where both ends are writable. */
	if (tg_landlock_probe() >= 2) {
		if (rename(at("ws/new"), at("ws/d/new")) < 0)
			return 8;
	} else {
		if (rename(at("ws/new"), at("ws/d/new")) == 0 || errno != EXDEV)
			return 8;
		if (unlink(at("ws/new")) < 0 || !open_is(at("ws/d/new"), O_CREAT | O_WRONLY, 0))
			return 8;
	}
	if (unlink(at("ws/d/new")) < 0 || rmdir(at("ws/d")) < 0)
		return 9;
	/* Moving a file out of the workspace is a write outside. */
	if (rename(at("ws/file"), at("outside/moved")) == 0)
		return 10;
	if (!open_is("/dev/null", O_WRONLY, 0))
		return 11;
	return 0;
}

Test(landlock, writes_only_beneath_writable)
{
	need_landlock();
	cr_expect_eq(run_child(body_writes), 0, "failed step (100 = restrict failed)");
	struct stat st;
	cr_expect_eq(stat(at("outside/file"), &st), 0, "outside file survived");
}

static int body_reads(void)
{
	if (restrict_std() < 0)
		return 100;
	if (!open_is(at("secret/key"), O_RDONLY, EACCES))
		return 1;
	if (!open_is(at("secretfile"), O_RDONLY, EACCES))
		return 2;
	/* Through a symlink inside the workspace: still the secret. */
	if (!open_is(at("ws/lnk"), O_RDONLY, EACCES))
		return 3;
	/* Denied through a symlinked ancestor ("alias" -> T). */
	if (!open_is(at("home/.aws/credentials"), O_RDONLY, EACCES))
		return 4;
	if (!open_is(at("outside/file"), O_RDONLY, 0))
		return 5;
	if (!open_is(at("home/.bashrc"), O_RDONLY, 0))
		return 6;
	if (!open_is(at("ws/file"), O_RDONLY, 0))
		return 7;
	if (access("/etc/passwd", F_OK) == 0 && !open_is("/etc/passwd", O_RDONLY, 0))
		return 8;
	/* A secret cannot be written either. */
	if (!open_is(at("secret/key"), O_WRONLY, EACCES))
		return 9;
	/* Listings stay allowed (documented): names visible, contents not. */
	DIR *d = opendir(at("secret"));
	if (!d)
		return 10;
	closedir(d);
	return 0;
}

Test(landlock, reads_denied_beneath_deny_read)
{
	need_landlock();
	cr_expect_eq(run_child(body_reads), 0, "failed step (100 = restrict failed)");
}

static int body_hidden(void)
{
	if (restrict_std() < 0)
		return 100;
	if (!open_is(at("state/journal"), O_RDONLY, EACCES))
		return 1;
	if (!open_is(at("state/journal"), O_WRONLY, EACCES))
		return 2;
	if (!open_is(at("state/new"), O_CREAT | O_WRONLY, EACCES))
		return 3;
	return 0;
}

Test(landlock, state_dir_hidden)
{
	need_landlock();
	cr_expect_eq(run_child(body_hidden), 0, "failed step (100 = restrict failed)");
}

static int body_exec(void)
{
	if (restrict_std() < 0)
		return 100;
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
		_exit(99);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
		return 1;
	return 0;
}

Test(landlock, exec_still_works)
{
	need_landlock();
	cr_expect_eq(run_child(body_exec), 0);
}

/* The documented cost of deny-read by complement: an entry created later in
 * a directory on the way to a secret has no rule. */
static int late_pipe[2], go_pipe[2];

static int body_late(void)
{
	if (restrict_std() < 0)
		return 100;
	char c = 'r';
	if (write(late_pipe[1], &c, 1) != 1 || read(go_pipe[0], &c, 1) != 1)
		return 101;
	if (!open_is(at("late"), O_RDONLY, EACCES))
		return 1;
	return 0;
}

Test(landlock, later_siblings_of_secret_ancestors_unreadable)
{
	need_landlock();
	cr_assert_eq(pipe(late_pipe), 0);
	cr_assert_eq(pipe(go_pipe), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(body_late());
	char c;
	cr_assert_eq(read(late_pipe[0], &c, 1), 1);
	put("late", "late");
	cr_assert_eq(write(go_pipe[1], "g", 1), 1);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}

Test(landlock, rule_count_is_bounded)
{
	need_landlock();
	const char *home = getenv("HOME") ? getenv("HOME") : "/root";
	char ssh[PATH_MAX], aws[PATH_MAX];
	snprintf(ssh, sizeof(ssh), "%s/.ssh", home);
	snprintf(aws, sizeof(aws), "%s/.aws", home);
	const char *d[] = { ssh, aws, "/etc/shadow", at("secret") };
	const char *w[] = { at("ws"), "/tmp" };
	struct tg_landlock_spec spec = { .writable = w, .nwritable = 2, .deny_read = d, .ndeny_read = 4 };
	size_t n = 0;
	int fd = tg_landlock_build(&spec, &n);
	cr_assert_geq(fd, 0, "build: %s", strerror(-fd));
	close(fd);
	cr_log_info("landlock rules for ~/.ssh ~/.aws /etc/shadow + a tmp secret: %zu", n);
	fprintf(stderr, "landlock: %zu rules for 4 deny_read paths, 2 writable\n", n);
	cr_expect_gt(n, 10);
	cr_expect_lt(n, 5000);

	size_t n0 = 0;
	struct tg_landlock_spec plain = { .writable = w, .nwritable = 2 };
	fd = tg_landlock_build(&plain, &n0);
	cr_assert_geq(fd, 0);
	close(fd);
	/* Without secrets: "/" read, 7 devices, 2 writable places. */
	cr_expect_leq(n0, 10, "got %zu", n0);
}

Test(landlock, bad_spec)
{
	need_landlock();
	const char *rel[] = { "relative/path" };
	struct tg_landlock_spec spec = { .deny_read = rel, .ndeny_read = 1 };
	cr_expect_eq(tg_landlock_build(&spec, NULL), -EINVAL);
	cr_expect_eq(tg_landlock_build(NULL, NULL), -EINVAL);
	spec = (struct tg_landlock_spec){ .writable = rel, .nwritable = 1 };
	cr_expect_eq(tg_landlock_build(&spec, NULL), -EINVAL);
}

/* A denied path inside the workspace (documented limit): its siblings stay
 * writable, but the directories on the way to it (the workspace itself
 * included) get no rule of their own, so a NEW entry at their level cannot
 * be created. Callers should keep secrets out of writable trees. */
static int body_secret_in_ws(void)
{
	const char *w[] = { at("ws") };
	const char *d[] = { at("ws/sub/.env") };
	struct tg_landlock_spec spec = { .writable = w, .nwritable = 1, .deny_read = d, .ndeny_read = 1 };
	if (tg_landlock_restrict(&spec) < 0)
		return 100;
	if (!open_is(at("ws/sub/.env"), O_RDONLY, EACCES))
		return 1;
	if (!open_is(at("ws/sub/.env"), O_WRONLY, EACCES))
		return 2;
	if (!open_is(at("ws/file"), O_WRONLY | O_TRUNC, 0))
		return 3;
	/* ws itself is on the way to the secret: no new entries at its top. */
	if (!open_is(at("ws/new"), O_CREAT | O_WRONLY, EACCES))
		return 4;
	if (!open_is(at("ws/other/new"), O_CREAT | O_WRONLY, 0))
		return 7;
	if (!open_is(at("ws/sub/new"), O_CREAT | O_WRONLY, EACCES))
		return 5;
	/* Renaming the secret does not make it readable. */
	if (rename(at("ws/sub/.env"), at("ws/sub/plain")) == 0 && !open_is(at("ws/sub/plain"), O_RDONLY, EACCES))
		return 6;
	return 0;
}

Test(landlock, secret_inside_workspace)
{
	need_landlock();
	cr_assert_eq(mkdir(at("ws/sub"), 0755), 0);
	cr_assert_eq(mkdir(at("ws/other"), 0755), 0);
	put("ws/sub/.env", "TOKEN");
	int rc = run_child(body_secret_in_ws);
	cr_expect_eq(rc, 0, "failed step %d (100 = restrict failed)", rc);
}

/* The view built with the ruleset (one walk) answers as the view built on
 * its own from the same spec, through symlinked and missing places alike. */
Test(landlock, built_view_matches_own_view)
{
	need_landlock();
	const char *w[] = { at("alias/ws"), at("outside"), at("missing") };
	const char *d[] = { at("alias/secret"), at("home/.aws"), at("nothing-here") };
	const char *h[] = { at("state") };
	struct tg_landlock_spec spec = { .writable = w, .nwritable = 3, .deny_read = d, .ndeny_read = 3,
	                                 .hidden = h, .nhidden = 1 };
	struct tg_landlock_view *built = NULL, *own = NULL;
	int fd = tg_landlock_build_viewed(&spec, NULL, &built);
	cr_assert_geq(fd, 0, "build: %s", strerror(-fd));
	close(fd);
	cr_assert_not_null(built);
	cr_assert_eq(tg_landlock_view_new(&spec, &own), 0);
	const char *probe[] = { "ws/file", "ws", "outside/new", "secret/key", "home/.aws/credentials",
	                        "home/.bashrc", "state/journal", "missing/x", "secretfile" };
	for (size_t i = 0; i < sizeof(probe) / sizeof(probe[0]); i++) {
		const char *p = at(probe[i]);
		for (int entry = 0; entry < 2; entry++)
			cr_expect_eq(tg_landlock_view_may_refuse(built, p, entry),
			             tg_landlock_view_may_refuse(own, p, entry), "%s (entry %d)", probe[i], entry);
		const char *a = tg_landlock_view_excluded(built, p), *b = tg_landlock_view_excluded(own, p);
		cr_expect((a == NULL) == (b == NULL) && (!a || strcmp(a, b) == 0), "excluded(%s): %s vs %s",
		          probe[i], a ? a : "-", b ? b : "-");
	}
	/* And they are not vacuous: the workspace is granted, the secret is not. */
	cr_expect(!tg_landlock_view_may_refuse(built, at("ws/file"), false));
	cr_expect_not_null(tg_landlock_view_excluded(built, at("secret/key")));
	tg_landlock_view_free(built);
	tg_landlock_view_free(own);
}

/* A secret the user cannot read needs no rule: the tree runs with the
 * user's credentials under no_new_privs. Unprivileged, /etc/shadow would
 * otherwise cost a rule per entry of /etc. Checked as nobody. */
static size_t rules_for(const char *secret)
{
	const char *d[] = { secret };
	struct tg_landlock_spec spec = { .deny_read = d, .ndeny_read = secret ? 1 : 0 };
	size_t n = 0;
	int fd = tg_landlock_build(&spec, &n);
	if (fd < 0)
		return (size_t)-1;
	close(fd);
	return n;
}

static int body_unreadable_needs_no_rule(void)
{
	if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		return 100;
	size_t none = rules_for(NULL), mine = rules_for(at("u/readable")),
	       theirs = rules_for(at("u/rootonly")), dir = rules_for(at("u/closed"));
	if (none == (size_t)-1 || mine == (size_t)-1 || theirs == (size_t)-1 || dir == (size_t)-1)
		return 101;
	if (mine <= none)
		return 1; /* a readable secret is excluded: its siblings split */
	if (theirs != none)
		return 2; /* an unreadable one costs nothing */
	if (dir != none)
		return 3; /* nor does a directory we can neither list nor enter */
	return 0;
}

Test(landlock, unreadable_secret_needs_no_rule)
{
	need_landlock();
	if (geteuid() != 0)
		cr_skip_test("needs root to become nobody");
	cr_assert_eq(chmod(T, 0711), 0);
	cr_assert_eq(mkdir(at("u"), 0755), 0);
	cr_assert_eq(mkdir(at("u/closed"), 0700), 0);
	put("u/readable", "r");
	put("u/rootonly", "secret");
	put("u/other", "o");
	cr_assert_eq(chmod(at("u/readable"), 0644), 0);
	cr_assert_eq(chmod(at("u/rootonly"), 0600), 0);
	int r = run_child(body_unreadable_needs_no_rule);
	cr_expect_eq(r, 0, "step %d failed", r);
}

/* ---- the secrets' fanotify guard ---- */

/* fds of this process that are fanotify groups. */
static int fanotify_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char link[PATH_MAX], path[300];
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t k = readlink(path, link, sizeof(link) - 1);
		if (k > 0) {
			link[k] = '\0';
			n += strcmp(link, "anon_inode:[fanotify]") == 0;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static void no_hook(void *ud, const struct tg_fan_refusal *f)
{
	(void)ud;
	(void)f;
}

/* The pid's /proc/PID/comm (a zombie's too), or "" once it is reaped. */
static void comm_of(pid_t pid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "re");
	buf[0] = '\0';
	if (f && !fgets(buf, (int)size, f))
		buf[0] = '\0';
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* tg_fanguard_stop hands the group's teardown to the unmarker: a child of
 * its own that closes the group's last fd after our thread closed ours,
 * and exits 0 when that close succeeded. Nobody else holds the group
 * then, and a once-marked file opens. A stop twice is a stop once. */
Test(landlock, fanguard_stop_hands_the_group_to_the_unmarker)
{
	if (!tg_fanguard_probe())
		cr_skip_test("no fanotify permission events here (root and CONFIG_FANOTIFY_ACCESS_PERMISSIONS)");
	int before = fanotify_fds();
	struct tg_fanguard *g = NULL;
	cr_assert_eq(tg_fanguard_new(getpid(), no_hook, NULL, &g), 0);
	cr_assert_eq(tg_fanguard_mark(g, at("ws/file")), 0);
	cr_assert_eq(fanotify_fds(), before + 1);
	cr_assert_eq(tg_fanguard_unmarker(g), 0, "an unmarker before the stop");
	tg_fanguard_stop(g);
	pid_t pid = tg_fanguard_unmarker(g);
	tg_fanguard_stop(g);
	cr_assert_gt(pid, 0, "no unmarker: the group's last close was the thread's");
	cr_assert_eq(tg_fanguard_unmarker(g), pid);
	char comm[32];
	int i = 0;
	for (comm_of(pid, comm, sizeof(comm)); strcmp(comm, "txguard-unmark") && i++ < 400;
	     comm_of(pid, comm, sizeof(comm)))
		usleep(5000);
	cr_assert_str_eq(comm, "txguard-unmark");
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, __WALL), pid, "the unmarker is not our child: %s", strerror(errno));
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the unmarker's close failed (status %#x)", st);
	i = 0;
	while (fanotify_fds() != before && i++ < 400)
		usleep(5000);
	cr_assert_eq(fanotify_fds(), before, "the guard's thread did not close our fd of the group");
	int fd = open(at("ws/file"), O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "the once-marked file does not open: %s", strerror(errno));
	close(fd);
	tg_fanguard_free(g);
	cr_assert_eq(fanotify_fds(), before);
}
