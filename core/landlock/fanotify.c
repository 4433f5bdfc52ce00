/* fanotify.c — secret reads seen one by one (see landlock.h, "fanotify").
 *
 * Landlock refuses a read of a secret without a stop: the supervisor never
 * learns of it. A fanotify permission event does stop the opener, in the
 * kernel, until the supervisor answers: so, where the kernel allows it
 * (CAP_SYS_ADMIN in the initial user namespace and
 * CONFIG_FANOTIFY_ACCESS_PERMISSIONS), each existing secret gets an inode
 * mark and leaves the Landlock ruleset (Landlock's hook runs before
 * fanotify's: an open it refused would never be seen here).
 *
 * Inode marks only: no mount or filesystem mark, so the rest of the machine
 * pays nothing; the marked secrets pay one round trip to this thread per
 * open, whoever opens them.
 *
 * The answers come from a thread of their own, not from the tracer's wait
 * loop: the main thread may be busy for seconds (an approver, a journal
 * copy of a large file, the rollback) and every process of the machine that
 * opens a marked file waits for the answer meanwhile. The thread blocks
 * every signal (SIGCHLD is the tracer's, through its signalfd). When the
 * group's last fd is closed (tg_fanguard_free, or the process dies), the
 * kernel allows every pending open: a crash leaves nobody blocked.
 *
 * That last close is not ours to wait for. The kernel allows the pending
 * opens at once, then forgets the group's marks: it waits for an SRCU grace
 * period, which is 0.06 ms or 6 to 20 ms (HZ=250, a quiet 2-vCPU VM)
 * depending on what the RCU machinery was doing. A thread that closes it
 * still holds the process, whose exit waits for all its threads, and the
 * caller's wait for that exit. So the last fd goes to a process of its own
 * (the unmarker, "txguard-unmark" in ps): a clone sharing our memory, with
 * nothing else open, that closes the group once we have let it go and ends.
 * Nobody waits for it; when we exit first, init (or a subreaper) reaps it.
 */
#include "landlock.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "base/util.h"

/* Valgrind runs no clone that shares memory without sharing fds: under it,
 * the unmarker is a fork (start_unmarker). Its header is the valgrind
 * package's, which the test suite installs. */
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

/* Newer than some build machines' headers (Linux 6.14). */
#ifndef FAN_DENY_ERRNO
#define FAN_DENY_ERRNO(err) (FAN_DENY | ((((unsigned)(err)) & 0xff) << 24))
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define FILE_MASK (FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM)
#define DIR_MASK (FILE_MASK | FAN_EVENT_ON_CHILD | FAN_ONDIR)

/* Bounds of the walk of a denied directory: beyond them the entry stays
 * with Landlock (enforced, unobserved). */
#define MAX_DIRS_PER_ENTRY 1000
#define MAX_DEPTH 32
#define MAX_MARKS 8192

struct tg_fanguard {
	int fd;                   /* the fanotify group */
	int stop;                 /* eventfd: the thread ends */
	pid_t tracer;             /* the tracer thread: tracees name it as TracerPid */
	pid_t self;
	int gate;                 /* write end of the unmarker's pipe: closed with our last group fd */
	pid_t unmarker;           /* the process that holds the group's last fd, or 0 */
	int deny_errno;           /* EACCES while the kernel takes FAN_DENY_ERRNO(EACCES), else EPERM */
	bool errno_probed;        /* the first denial told which */
	size_t nmarks;
	bool running;
	bool stopping;            /* told to stop (tg_fanguard_stop) */
	pthread_t thread;
	tg_fanguard_hook hook;
	void *ud;
};

/* FAN_UNLIMITED_QUEUE: the kernel allows a permission event it cannot
 * queue (an overflow), so the queue must never be full. (The tree alone
 * could not fill the default 16384: each waiting open is one thread, and
 * --max-procs bounds them.) */
static int group_init(void)
{
	int fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_TID |
	                       FAN_UNLIMITED_QUEUE,
	                       O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* A permission-class group that can mark: it holds a permission mark on
 * "/" (the whole chain: privilege, config, a mark on an inode). The root
 * directory's own opens are not events without FAN_ONDIR, so nobody
 * waits on that mark. The fd, or -errno. */
static int group_checked(void)
{
	int fd = group_init();
	if (fd >= 0 && fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, "/") < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

int tg_fanguard_probe(void)
{
	static int ok = -1;
	if (ok >= 0)
		return ok;
	_cleanup_close_ int fd = group_checked();
	ok = fd >= 0;
	return ok;
}

/* The thread that opens, read from /proc/TID/status: TracerPid. 0 when it
 * is gone or traced by nobody. */
static pid_t tracer_of(pid_t tid)
{
	long t = tg_proc_status_num(tid, "TracerPid");
	return t > 0 ? (pid_t)t : 0;
}

/* What the opener is calling, from /proc/TID/syscall ("NR ARG1 ARG2 ..."):
 * the syscall's name and the open flags where they are in a register. */
static void opener_call(pid_t tid, bool exec, struct tg_fan_refusal *f)
{
	char path[64];
	_cleanup_free_ char *s = NULL;
	size_t len = 0;
	f->syscall = exec ? "execve" : "open";
	f->flags = O_RDONLY;
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	if (tg_read_file(path, &s, &len, 4096) < 0)
		return;
	unsigned long long a[4] = { 0 };
	long nr = -1;
	if (sscanf(s, "%ld %llx %llx %llx", &nr, &a[1], &a[2], &a[3]) < 1)
		return;
	switch (nr) {
	case 2: /* open(path, flags) */
		f->syscall = "open", f->flags = (int)a[2];
		break;
	case 257: /* openat(dirfd, path, flags) */
		f->syscall = "openat", f->flags = (int)a[3];
		break;
	case 85:
		f->syscall = "creat", f->flags = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 437: /* flags in memory: read-only ones are what get here */
		f->syscall = "openat2";
		break;
	case 322:
		f->syscall = "execveat";
		break;
	default:
		break;
	}
}

static void respond(struct tg_fanguard *g, int fd, uint32_t response)
{
	struct fanotify_response r = { .fd = fd, .response = response };
	(void)!write(g->fd, &r, sizeof(r));
}

/* The errno Landlock gives, where the kernel takes it: FAN_DENY_ERRNO is
 * Linux 6.14's, and up to 6.18 at least it is refused (EINVAL) for this
 * group class. Tried at the first denial only; a refused response leaves
 * the event pending, to be answered with a plain FAN_DENY (EPERM). */
static bool deny_with_eacces(struct tg_fanguard *g, int fd)
{
	if (g->errno_probed)
		return false;
	g->errno_probed = true;
	struct fanotify_response r = { .fd = fd, .response = FAN_DENY_ERRNO(EACCES) };
	if (write(g->fd, &r, sizeof(r)) == (ssize_t)sizeof(r))
		return true;
	g->deny_errno = EPERM;
	return false;
}

static void answer(struct tg_fanguard *g, const struct fanotify_event_metadata *m)
{
	if (m->fd < 0)
		return;
	bool exec = m->mask & FAN_OPEN_EXEC_PERM;
	/* A tracee is stopped in its open until we answer, so its tid names
	 * it (and its TracerPid is the tracer's, set before its first
	 * instruction ran: PTRACE_O_TRACEFORK/CLONE). Anything else, txguard
	 * itself included, is the host's: allowed at once. */
	bool deny = (pid_t)m->pid != g->self && m->pid > 0 && tracer_of(m->pid) == g->tracer;
	if (!deny) {
		respond(g, m->fd, FAN_ALLOW);
		close(m->fd);
		return;
	}
	/* What it called, read while it still waits in the call; and the
	 * refusal said before the opener runs on (as the tracer does before
	 * it resumes a tracee), so that txguard's line comes before the
	 * command's own error message instead of inside it. */
	struct tg_fan_refusal f = { .pid = m->pid, .exec = exec };
	opener_call(m->pid, exec, &f);
	char link[64], path[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", m->fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	f.path = path;
	bool answered = deny_with_eacces(g, m->fd);
	f.err = g->deny_errno;
	if (g->hook)
		g->hook(g->ud, &f);
	if (!answered)
		respond(g, m->fd, g->deny_errno == EACCES ? FAN_DENY_ERRNO(EACCES) : FAN_DENY);
	close(m->fd);
}

static void *guard_main(void *arg)
{
	struct tg_fanguard *g = arg;
	/* Aligned for the event records the kernel writes into it. */
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	for (;;) {
		struct pollfd p[2] = { { .fd = g->fd, .events = POLLIN }, { .fd = g->stop, .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents & POLLIN) {
			ssize_t n = read(g->fd, buf, sizeof(buf));
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				break;
			const struct fanotify_event_metadata *m = (const void *)buf;
			for (; n > 0 && FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n))
				answer(g, m);
			continue;
		}
		if (p[1].revents) {
			/* Told to stop: our fd of the group goes here, then the
			 * gate lets the unmarker close the last one (or, when
			 * there is none, this is the last: the wait is ours). */
			close(g->fd);
			g->fd = -1;
			if (g->gate >= 0)
				close(g->gate);
			g->gate = -1;
			break;
		}
	}
	return NULL;
}

int tg_fanguard_new(pid_t tracer, tg_fanguard_hook hook, void *ud, struct tg_fanguard **out)
{
	*out = NULL;
	struct tg_fanguard *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	/* The probe's own check, on the group kept (a group made and closed
	 * only to probe costs its teardown: ~0.2 ms of a start). */
	*g = (struct tg_fanguard){ .fd = group_checked(), .stop = -1, .gate = -1, .tracer = tracer, .self = getpid(),
	                           .deny_errno = EACCES, .hook = hook, .ud = ud };
	if (g->fd < 0 || (g->stop = eventfd(0, EFD_CLOEXEC)) < 0) {
		int e = g->fd < 0 ? -EOPNOTSUPP : -errno;
		tg_fanguard_free(g);
		return e;
	}
	/* Every signal blocked in the thread from its first instruction. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int e = pthread_create(&g->thread, NULL, guard_main, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		tg_fanguard_free(g);
		return -e;
	}
	g->running = true;
	*out = g;
	return 0;
}

static int mark_fd(struct tg_fanguard *g, int fd, uint64_t mask)
{
	if (g->nmarks >= MAX_MARKS)
		return -E2BIG;
	/* fd is O_PATH (no open of a FIFO or a device, no event of our
	 * own), which fanotify_mark's dirfd does not take (EBADF): its
	 * /proc/self/fd link names the same object. */
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (fanotify_mark(g->fd, FAN_MARK_ADD, mask, AT_FDCWD, link) < 0)
		return -errno;
	g->nmarks++;
	return 0;
}

/* Mark the directory dfd and, below it, every subdirectory (a directory
 * mark with FAN_EVENT_ON_CHILD sees its own children only), or with !mark
 * only count them. Symlinks are not followed: what they point to is not
 * the secret's. */
static int mark_tree(struct tg_fanguard *g, int dfd, int depth, size_t *ndirs, bool mark)
{
	if (depth > MAX_DEPTH || ++*ndirs > MAX_DIRS_PER_ENTRY)
		return -E2BIG;
	/* Listed before it is marked: an open of ours would be an event too
	 * (answered at once, but a round trip). */
	int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (!d) {
		int e = -errno;
		if (lfd >= 0)
			close(lfd);
		return e;
	}
	int r = mark ? mark_fd(g, dfd, DIR_MASK) : 0;
	struct dirent *e;
	while (r == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		int sfd = openat(dfd, e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sfd < 0) {
			/* Not a directory (DT_UNKNOWN), a symlink, or gone. */
			if (errno != ENOTDIR && errno != ELOOP && errno != ENOENT)
				r = -errno;
			continue;
		}
		r = mark_tree(g, sfd, depth + 1, ndirs, mark);
		close(sfd);
	}
	closedir(d);
	return r;
}

int tg_fanguard_mark(struct tg_fanguard *g, const char *path)
{
	/* Followed: a symlinked secret is read through its target. */
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return mark_fd(g, fd, FILE_MASK);
	/* Counted first: a directory past the bounds (a policy naming a
	 * huge tree, or a symlink to "/") is left to Landlock without a
	 * single mark, so that no process of the machine pays for it. */
	size_t ndirs = 0;
	int r = mark_tree(g, fd, 0, &ndirs, false);
	if (r < 0)
		return r;
	if (g->nmarks + ndirs > MAX_MARKS)
		return -E2BIG;
	ndirs = 0;
	return mark_tree(g, fd, 0, &ndirs, true);
}

size_t tg_fanguard_nmarks(const struct tg_fanguard *g)
{
	return g ? g->nmarks : 0;
}

/* The unmarker's stack: one unmarker at a time (unmarker_tid is its tid
 * while it runs, cleared by the kernel at its exit). It shares our memory
 * and the caller's TLS, so it calls neither libc (errno is the caller's
 * word) nor the sanitizers' instrumentation (their state is per thread):
 * system calls only, made here. x86_64 only, as txguard is (meson.build). */
static char unmarker_stack[16384] __attribute__((aligned(64)));
static pid_t unmarker_tid;
/* Set (and futex-woken) by the unmarker once it holds no fd of ours but
 * the group's and the gate's; unmarker_shares: the last one shares our
 * memory, and so says so here (not the fork under valgrind). */
static int unmarker_alone;
static bool unmarker_shares;

__attribute__((no_sanitize("address", "undefined"))) static inline long raw_call(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}

/* arg: the group's fd and the gate's read end. Everything else we had
 * open is closed first (a pipe to our caller must not wait for it), then
 * the gate's EOF says that no fd of ours is left: the close below is the
 * group's last. The exit status is that close's: 0, or 1. */
__attribute__((no_sanitize("address", "undefined"))) static int unmarker_main(void *arg)
{
	uint64_t a = (uint64_t)(uintptr_t)arg;
	int group = (int)(a & 0xffffffffu), gate = (int)(a >> 32);
	int lo = group < gate ? group : gate, hi = group < gate ? gate : group;
	static const char name[] = "txguard-unmark";
	raw_call(SYS_prctl, PR_SET_NAME, (long)name, 0);
	if (lo > 0)
		raw_call(SYS_close_range, 0, lo - 1, 0);
	if (hi - lo > 1)
		raw_call(SYS_close_range, lo + 1, hi - 1, 0);
	raw_call(SYS_close_range, hi + 1, (long)~0u, 0);
	__atomic_store_n(&unmarker_alone, 1, __ATOMIC_RELEASE);
	raw_call(SYS_futex, (long)&unmarker_alone, FUTEX_WAKE_PRIVATE, 1);
	char b;
	long n;
	while ((n = raw_call(SYS_read, gate, (long)&b, 1)) > 0 || n == -EINTR)
		;
	return raw_call(SYS_close, group, 0, 0) == 0 ? 0 : 1;
}

/* Start the unmarker with a copy of our fds; ours go with the thread (its
 * stop). No unmarker (one still running, or clone failing): the thread's
 * close is the last one, as it was before. */
static void start_unmarker(struct tg_fanguard *g)
{
	if (__atomic_load_n(&unmarker_tid, __ATOMIC_ACQUIRE) != 0)
		return;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	/* Every signal blocked in it from its first instruction: a handler
	 * of ours must never run there. Exit signal 0: no SIGCHLD for the
	 * tracer's signalfd; reaped with __WALL (or by init once we are
	 * gone, which gives it SIGCHLD). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	uint64_t arg = (uint64_t)(unsigned)g->fd | (uint64_t)(unsigned)p[0] << 32;
	__atomic_store_n(&unmarker_alone, 0, __ATOMIC_RELEASE);
	unmarker_shares = !RUNNING_ON_VALGRIND;
	pid_t pid;
	if (RUNNING_ON_VALGRIND) {
		/* "Unsupported clone() flags" would end us: a copy instead
		 * (0.3 ms more here), which clears no tid. */
		pid = fork();
		if (pid == 0)
			_exit(unmarker_main((void *)(uintptr_t)arg));
	} else {
		pid = clone(unmarker_main, unmarker_stack + sizeof(unmarker_stack),
		            CLONE_VM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID, (void *)(uintptr_t)arg,
		            &unmarker_tid, NULL, &unmarker_tid);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return;
	}
	g->unmarker = pid;
	g->gate = p[1];
}

void tg_fanguard_stop(struct tg_fanguard *g)
{
	if (!g || !g->running || g->stopping)
		return;
	start_unmarker(g);
	uint64_t one = 1;
	(void)!write(g->stop, &one, sizeof(one));
	g->stopping = true;
}

void tg_fanguard_unmarker_wait(void)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	for (int i = 0; unmarker_shares && i < 100 && !__atomic_load_n(&unmarker_alone, __ATOMIC_ACQUIRE); i++) {
		if (__atomic_load_n(&unmarker_tid, __ATOMIC_ACQUIRE) == 0)
			return; /* it ended: its fds are closed */
		(void)syscall(SYS_futex, &unmarker_alone, FUTEX_WAIT_PRIVATE, 0, &tick);
	}
}

pid_t tg_fanguard_unmarker(const struct tg_fanguard *g)
{
	return g ? g->unmarker : 0;
}

void tg_fanguard_free(struct tg_fanguard *g)
{
	if (!g)
		return;
	if (g->running) {
		tg_fanguard_stop(g);
		pthread_join(g->thread, NULL);
	}
	/* Our fd of the group (the thread closed it, unless it ended on an
	 * error or never ran), then the gate. */
	if (g->fd >= 0)
		close(g->fd);
	if (g->gate >= 0)
		close(g->gate);
	if (g->stop >= 0)
		close(g->stop);
	/* Reaped here when it is done already; else init (or a subreaper)
	 * reaps it once we are gone. */
	if (g->unmarker > 0)
		(void)waitpid(g->unmarker, NULL, WNOHANG | __WALL);
	free(g);
}
