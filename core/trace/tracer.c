/* tracer.c — fork, seize, and supervise the traced tree (see trace/trace.h).
 *
 * The wait loop has strace's shape: every wait status is first classified
 * into an event kind (classify()), then handled by that kind's function
 * (the handlers[] table). Timers (--timeout, --kill-after, --grace) and the
 * signals txguard itself receives come through a signalfd polled between
 * drains of waitpid(WNOHANG), so nothing is lost to a race between a
 * signal and a blocking wait.
 */
#include "trace.h"
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <linux/filter.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <seccomp.h>
#ifdef TG_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include "decode.h"
#include "filter.h"
#include "syscalls.h"
#include "base/path.h"
#include "base/util.h"

#define TG_TASK_BUCKETS 1024
#define TG_CMDLINE_MAX (64u << 20)
#define TG_SERVICE_EVERY 16
/* Adaptive spinning before the tracer sleeps (see spin_for_stop). */
#define TG_SPIN_NS 50000u
/* How often a task kept waiting at its stop (TG_DEC_WAIT) is asked about
 * again when no event comes. */
#define TG_WAIT_RETRY_NS (2u * 1000 * 1000)
#define TG_SPIN_CREDIT 8
#define TG_SPIN_PROBE_EVERY 64
/* Pinning a busy task to the tracer's CPU (see "pinning"). */
#define TG_PIN_QUICK_NS 250000u   /* stops closer than this are quick */
#define TG_PIN_HEAT 4             /* quick stops in a row before pinning */
#define TG_PIN_TICK_NS 5000000u   /* a tick with no stop since the last: unpin */
#ifndef sigev_notify_thread_id    /* glibc before 2.35 */
#define sigev_notify_thread_id _sigev_un._tid
#endif
#define TG_PTRACE_OPTIONS                                                                          \
	(PTRACE_O_EXITKILL | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |    \
	 PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD)

/* What the child reports through its close-on-exec pipe when it fails
 * before the command runs. */
enum child_stage { STAGE_SETUP = 1, STAGE_FILTER, STAGE_EXEC };
struct child_error {
	int stage;
	int err;
};

/* What the policy allowed at a thread's execve stop, re-checked against
 * what the kernel really runs at PTRACE_EVENT_EXEC. */
struct vetted {
	char **argv;
	char *filename;          /* the program as a #! interpreter receives it */
	dev_t dev;
	ino_t ino;               /* 0 when the program could not be stat'ed */
};

struct task {
	pid_t tid;
	pid_t tgid;
	bool announced;          /* on_spawn() called (or the main child) */
	struct vetted *vetted;   /* this thread's last allowed execve */
	/* Its last execve was of a program that was not there
	 * (TG_DECODE_ABSENT): the kernel should fail it, and if it
	 * runs all the same, it is judged after the fact. */
	bool exec_unvetted;
	uint64_t root_seen;      /* the root epoch its root was last looked at in */
	bool root_ours;          /* ... and found ours then */
	bool root_call;          /* a call that may change its root is in flight */
	char *cwd;               /* its cwd, as read in the cwd epoch cwd_seen */
	uint64_t cwd_seen;
	bool cwd_call;           /* a call that may move a cwd is in flight */
	bool waiting;            /* kept at its seccomp stop: TG_DEC_WAIT */
	struct task *next;
};

struct tracer {
	const struct tg_tracer_opts *opts;
	const struct tg_tracer_hooks *hooks;
	struct tg_run_result *res;
	struct task *buckets[TG_TASK_BUCKETS];
	unsigned long ntasks;
	unsigned long nwaiting;  /* tasks kept at their stop (TG_DEC_WAIT) */
	uint64_t root_epoch;     /* see "root epochs"; starts at 1 */
	unsigned root_calls;     /* such calls in flight */
	uint64_t cwd_epoch;      /* see "cwd epochs" */
	unsigned cwd_calls;      /* such calls in flight */
	pid_t main_pid;
	bool main_exited;
	int main_status;
	int sfd;
	uint64_t timeout_at, kill_at, grace_at; /* monotonic ns; 0 = unset */
	bool grace_armed;
	bool killing;            /* SIGKILL every task seen from now on */
	bool forced;             /* forced_end decided (first reason wins) */
	enum tg_run_end forced_end;
	bool interrupted;
	int fatal;               /* -errno of a tracer failure (fail closed) */
	struct tg_filter_prog own;  /* compiled here when the caller gave none */
	const struct tg_filter_prog *prog; /* the child loads it */
	/* The main child runs on the tracer's CPU until its first exec (see
	 * start_child); then it gets back the CPUs the tracer had. */
	bool child_pinned;
	cpu_set_t cpus;
	bool spin_allowed;       /* more than one CPU to run on */
	bool spin_hint;          /* the stop just handled was a trapped call, not an exec */
	int spin_credit;         /* spins left before giving up on spinning */
	unsigned spin_probe;
	/* A task that traps often shares the tracer's CPU
	 * (see "pinning"). */
	bool pin_forgone;        /* never again in this run */
	pid_t pinned;            /* the task pinned, 0 for none */
	cpu_set_t pinned_to;     /* the one CPU */
	cpu_set_t pinned_cpus;   /* its CPUs before */
	cpu_set_t own_cpus;      /* the tracer thread's CPUs before */
	unsigned pin_heat;       /* quick stops in a row, all of heat_pid */
	pid_t heat_pid;          /* the task of the last seccomp stop */
	uint64_t last_stop;      /* tg_now_ns() of that stop */
	bool pin_timer_made;
	timer_t pin_timer;       /* ticks while a task is pinned */
	bool pin_ticked;         /* a tick came (a SIGCHLD of SI_TIMER) */
	unsigned long pin_stops; /* the pinned task's seccomp stops since the last tick */
};

/* ---- tasks ---- */

/* The main child, pinned to the tracer's CPU for its start (pin_for_fork),
 * gets back the CPUs the tracer had at its first exec, before the
 * program's first instruction. */
static void unpin_child(struct tracer *t, pid_t pid)
{
	if (t->child_pinned && pid == t->main_pid) {
		(void)sched_setaffinity(pid, sizeof(t->cpus), &t->cpus);
		t->child_pinned = false;
	}
}


/* ---- pinning ----
 *
 * On a VM, a stop that crosses vCPUs costs two wakeups of a halted vCPU
 * (the tracer's, then the tracee's): 15 us a trapped chmod against 6.4 us
 * with both on one CPU (docs/benchmarks.md). So a task that makes
 * TG_PIN_HEAT quick stops in a row, with no other task's stop between, is
 * pinned to the CPU the tracer runs on, and the tracer's thread with it
 * (one task at a time; the others keep their CPUs). It gets its CPUs back
 * when it makes a task (the new one, which inherited the pin, gets them
 * too, before it runs), when a tick of TG_PIN_TICK_NS finds no stop of its
 * since the last one (it computes: the scheduler may place it again, and
 * two pinned tasks that met on one CPU part), when any task asks for an
 * affinity (sched_getaffinity always stops: no program sees the pin
 * through it, as nproc and runtimes that size their thread pools would),
 * and for good when any task sets one. /proc/PID/status does show it. */

/* The tick: a SIGCHLD to the tracer's thread (SIGEV_THREAD_ID), read
 * from the signalfd like a child's (on_own_signal). A timer armed once per
 * pin, where a timeout on each wait would reprogram the CPU's timer twice
 * per stop (a VM exit each: 0.1 s of 20,000 file creations). A tick lost
 * to a child's pending SIGCHLD comes while stops come too, when it is not
 * needed.
 *
 * A tick still pending when its timer is disarmed or deleted is stale:
 * the kernel (6.13 on) drops it when it is read, but poll already said
 * there was something to read. A blocking read would then wait for the
 * next signal: at the end of the run, for ever (restore_signals); with
 * --timeout armed and a silent tree, past the timeout. So from the first
 * timer on the signalfd does not block, and service() waits in poll. */
static bool pin_timer_set(struct tracer *t, bool on)
{
	const struct itimerspec its = {
		.it_value.tv_nsec = on ? TG_PIN_TICK_NS : 0,
		.it_interval.tv_nsec = on ? TG_PIN_TICK_NS : 0,
	};
	if (!t->pin_timer_made) {
		if (!on)
			return true;
		struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGCHLD };
		sev.sigev_notify_thread_id = gettid();
		if (timer_create(CLOCK_MONOTONIC, &sev, &t->pin_timer) < 0)
			return false;
		int fl = fcntl(t->sfd, F_GETFL);
		if (fl < 0 || fcntl(t->sfd, F_SETFL, fl | O_NONBLOCK) < 0) {
			timer_delete(t->pin_timer);
			return false;
		}
		t->pin_timer_made = true;
	}
	t->pin_stops = 0;
	return timer_settime(t->pin_timer, 0, &its, NULL) == 0;
}

/* Back to the CPUs of before: the pinned task, unless it is gone (its pid
 * may be another process's by now), and the tracer's thread. */
static void unpin(struct tracer *t, bool task_gone)
{
	if (!t->pinned)
		return;
	if (!task_gone)
		(void)sched_setaffinity(t->pinned, sizeof(t->pinned_cpus), &t->pinned_cpus);
	(void)sched_setaffinity(0, sizeof(t->own_cpus), &t->own_cpus);
	(void)pin_timer_set(t, false);
	t->pinned = 0;
	t->pin_heat = 0;
}

/* At a tick: unpin a task that made no stop since the last one. */
static void pin_check(struct tracer *t)
{
	if (!t->pin_ticked)
		return;
	t->pin_ticked = false;
	if (t->pinned && t->pin_stops == 0)
		unpin(t, false);
	t->pin_stops = 0;
}

static void pin_forgo(struct tracer *t)
{
	unpin(t, false);
	t->pin_forgone = true;
}

/* pid, stopped, onto the CPU we run on. Any failure (the CPU is
 * not one of its own, one CPU only, EPERM) ends pinning for the run. */
static void pin(struct tracer *t, pid_t pid)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0 || cpu >= CPU_SETSIZE ||
	    sched_getaffinity(pid, sizeof(t->pinned_cpus), &t->pinned_cpus) < 0 ||
	    CPU_COUNT(&t->pinned_cpus) < 2 || !CPU_ISSET(cpu, &t->pinned_cpus) ||
	    sched_getaffinity(0, sizeof(t->own_cpus), &t->own_cpus) < 0) {
		t->pin_forgone = true;
		return;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(pid, sizeof(one), &one) < 0) {
		t->pin_forgone = true;
		return;
	}
	t->pinned = pid;
	t->pinned_to = one;
	/* Without our thread on that CPU, or a tick to end it, no pin. */
	if (sched_setaffinity(0, sizeof(one), &one) < 0 || !pin_timer_set(t, true))
		pin_forgo(t);
}

/* At each seccomp stop of pid: keep the count, pin when it is time. */
static void pin_tick(struct tracer *t, pid_t pid)
{
	if (t->pin_forgone)
		return;
	uint64_t now = tg_now_ns();
	bool quick = now - t->last_stop < TG_PIN_QUICK_NS && pid == t->heat_pid;
	t->last_stop = now;
	t->heat_pid = pid;
	if (t->pinned) {
		t->pin_stops += pid == t->pinned;
		return;
	}
	t->pin_heat = quick ? t->pin_heat + 1 : 0;
	if (t->pin_heat >= TG_PIN_HEAT)
		pin(t, pid);
}

static void vetted_free(struct vetted *v)
{
	if (!v)
		return;
	free(v->argv); /* packed */
	free(v->filename);
	free(v);
}

static struct task **slot(struct tracer *t, pid_t tid)
{
	struct task **p = &t->buckets[(unsigned)tid % TG_TASK_BUCKETS];
	while (*p && (*p)->tid != tid)
		p = &(*p)->next;
	return p;
}

static struct task *task_find(struct tracer *t, pid_t tid)
{
	return *slot(t, tid);
}

static struct task *task_add(struct tracer *t, pid_t tid, pid_t tgid)
{
	struct task **p = slot(t, tid);
	if (*p)
		return *p;
	struct task *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->tid = tid;
	n->tgid = tgid;
	*p = n;
	/* A task made by the pinned one was born pinned (its mask is that
	 * one CPU, which no other task has: one that set its own ended all
	 * pinning): both get their CPUs back before they run on side by side.
	 * Both are stopped, or the maker is still in the call that made it. */
	cpu_set_t born;
	if (t->pinned && sched_getaffinity(tid, sizeof(born), &born) == 0 &&
	    CPU_EQUAL(&born, &t->pinned_to)) {
		(void)sched_setaffinity(tid, sizeof(t->pinned_cpus), &t->pinned_cpus);
		unpin(t, false);
	}
	/* Both are stopped: the new task in its first stop, the old one in
	 * its fork event or still in the call that made the new one. */
	if (++t->ntasks == 2 && t->hooks && t->hooks->on_company)
		t->hooks->on_company(t->hooks->ud);
	return n;
}

static void root_call_end(struct tracer *t, struct task *k);
static void cwd_call_end(struct tracer *t, struct task *k);

static void task_del(struct tracer *t, pid_t tid)
{
	struct task **p = slot(t, tid);
	struct task *d = *p;
	if (!d)
		return;
	if (d->root_call)
		root_call_end(t, d); /* killed in the call: it may have run */
	if (d->cwd_call)
		cwd_call_end(t, d);
	if (d->waiting)
		t->nwaiting--;
	if (tid == t->pinned)
		unpin(t, true);
	*p = d->next;
	vetted_free(d->vetted);
	free(d->cwd);
	free(d);
	t->ntasks--;
}

static void tasks_free(struct tracer *t)
{
	for (size_t i = 0; i < TG_TASK_BUCKETS; i++)
		while (t->buckets[i])
			task_del(t, t->buckets[i]->tid);
}

/* The thread group of a task we met before its parent's fork event. */
static pid_t read_tgid(pid_t tid)
{
	pid_t g = tg_proc_tgid(tid);
	return g > 0 ? g : tid;
}

/* ---- killing ---- */

/* Every thread gets the signal: kill() on a TID reaches its whole group,
 * and sending to each one also covers a group whose leader is a zombie. */
static void signal_all(struct tracer *t, int sig)
{
	for (size_t i = 0; i < TG_TASK_BUCKETS; i++)
		for (struct task *k = t->buckets[i]; k; k = k->next)
			if (sig == SIGKILL || k->tid == k->tgid)
				kill(k->tid, sig);
}

static void kill_tree(struct tracer *t)
{
	t->killing = true;
	signal_all(t, SIGKILL);
}

static void force_end(struct tracer *t, enum tg_run_end end)
{
	if (!t->forced) {
		t->forced = true;
		t->forced_end = end;
	}
}

/* The tracer itself decided the tree must die. */
static void tracer_kill(struct tracer *t, pid_t pid, const char *why)
{
	if (!t->forced && t->hooks && t->hooks->on_kill)
		t->hooks->on_kill(t->hooks->ud, pid, why);
	force_end(t, TG_END_TRACER_KILL);
	kill_tree(t);
}

/* ---- resuming ---- */

/* ESRCH means the task died under us (SIGKILL): its exit comes next. */
static void resume(pid_t pid, int sig)
{
	(void)ptrace(PTRACE_CONT, pid, 0L, (long)sig);
}

/* Resume from a seccomp stop so that the call's return stops once more
 * (a syscall-exit stop, SIGTRAP|0x80 with PTRACE_O_TRACESYSGOOD). */
static void resume_watch(pid_t pid)
{
	(void)ptrace(PTRACE_SYSCALL, pid, 0L, 0L);
}

/* Skip the call: orig_rax = -1 means "no syscall", and rax is what the
 * tracee sees returned (-err for a failure), so nothing else about the
 * process changes. */
static int skip_call(pid_t pid, long ret)
{
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, pid, 0L, &regs) < 0)
		return -errno;
	regs.orig_rax = (unsigned long long)-1LL;
	regs.rax = (unsigned long long)ret;
	if (ptrace(PTRACE_SETREGS, pid, 0L, &regs) < 0)
		return -errno;
	resume(pid, 0);
	return 0;
}

static int deny(pid_t pid, int err)
{
	return skip_call(pid, -(long)err);
}

/* ---- event classification (strace's next_event) ---- */

enum ev_kind {
	EV_EXIT,        /* exited or killed */
	EV_SECCOMP,     /* PTRACE_EVENT_SECCOMP */
	EV_SPAWN,       /* PTRACE_EVENT_FORK / VFORK / CLONE */
	EV_EXEC,        /* PTRACE_EVENT_EXEC */
	EV_GROUP_STOP,  /* PTRACE_EVENT_STOP with a stop signal */
	EV_TRAP_STOP,   /* PTRACE_EVENT_STOP otherwise: a new task's first stop, or LISTEN woken */
	EV_SIGNAL,      /* signal-delivery stop */
	EV_SYSCALL_EXIT, /* the return of a watched call (resume_watch) */
	EV_COUNT,
};

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static enum ev_kind classify(int status)
{
	if (!WIFSTOPPED(status))
		return EV_EXIT;
	switch ((unsigned)status >> 16) {
	case PTRACE_EVENT_SECCOMP:
		return EV_SECCOMP;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		return EV_SPAWN;
	case PTRACE_EVENT_EXEC:
		return EV_EXEC;
	case PTRACE_EVENT_STOP:
		return is_stop_signal(WSTOPSIG(status)) ? EV_GROUP_STOP : EV_TRAP_STOP;
	default:
		return WSTOPSIG(status) == (SIGTRAP | 0x80) ? EV_SYSCALL_EXIT : EV_SIGNAL;
	}
}

/* ---- handlers (strace's dispatch_event) ---- */

static void on_exit_ev(struct tracer *t, pid_t pid, int status)
{
	struct task *k = task_find(t, pid);
	bool leader = !k || k->tid == k->tgid;

	if (pid == t->main_pid) {
		t->main_exited = true;
		t->main_status = status;
	}
	if (leader && t->hooks && t->hooks->on_exit)
		t->hooks->on_exit(t->hooks->ud, pid, status);
	task_del(t, pid);
}

/* A task we had not met (its first stop came before its parent's fork
 * event): adopt it now, and kill it at once when the tree is dying. */
static struct task *adopt(struct tracer *t, pid_t pid)
{
	struct task *k = task_find(t, pid);
	if (k)
		return k;
	k = task_add(t, pid, read_tgid(pid));
	if (!k)
		t->fatal = -ENOMEM;
	if (!k || t->killing)
		kill(pid, SIGKILL);
	return k;
}

/* ---- root epochs ----
 *
 * Every resolution of a tracee's path starts from whether its root and
 * mount namespace are ours (path.c: a statx of /proc/PID/root). Only a
 * few calls change them, and the filter traps them all: chroot, setns and
 * unshare are followed to their return; pivot_root, mount and clone3 are
 * refused; a clone with CLONE_NEWNS makes a new task, looked at anew. So
 * the answer holds for a task from one such return to the next: the epoch
 * counts those returns, a task keeps the epoch of its last look, and while
 * such a call is in flight (its effect on a task that shares the caller's
 * root, CLONE_FS, not yet known) nothing is vouched for. */

static bool root_changer(long nr)
{
	const struct tg_syscall *sc = tg_syscall_by_nr(nr);
	return sc && sc->roots;
}

/* Whether k's root and mount namespace are ours, looked at once per epoch:
 * then the resolutions of this stop skip their own look. */
static bool root_vouched(struct tracer *t, struct task *k, pid_t pid)
{
	if (!k || t->root_calls)
		return false;
	if (k->root_seen != t->root_epoch) {
		k->root_ours = tg_path_shares_root(pid);
		k->root_seen = t->root_epoch;
	}
	return k->root_ours;
}

/* An allowed root changer runs to its syscall-exit stop. */
static void root_call_begin(struct tracer *t, pid_t pid)
{
	struct task *k = adopt(t, pid);
	if (k && !k->root_call) {
		k->root_call = true;
		t->root_calls++;
	}
	resume_watch(pid);
}

static void root_call_end(struct tracer *t, struct task *k)
{
	k->root_call = false;
	t->root_calls--;
	t->root_epoch++;
}

/* ---- cwd epochs ----
 *
 * A relative name starts from the caller's cwd: a readlink of
 * /proc/PID/cwd, about a microsecond of every stop that names a file so.
 * Only a few calls can change what that link says for a task that
 * exists: chdir and fchdir (its own, or a CLONE_FS sibling's), a rename
 * or removal of a directory (the cwd or one above it), and the root
 * changers (setns moves the cwd too). The filter traps them all: chdir
 * and fchdir only for this, the others anyway. Such a call begins an
 * epoch at its stop and another when it is over, which its task's next
 * stop of any kind shows (or its end), so no exit stop is added. A task
 * keeps the cwd it read and the epoch it read it in; it is taken as is
 * while no such call is in flight and the epoch is the same, and read
 * again otherwise. Processes outside the tree that rename directories
 * are out of scope, as for every resolution (DESIGN.md). */

/* Besides chdir and fchdir (on_seccomp): as the decode classed the call,
 * so unlinkat with AT_REMOVEDIR is a removal of a directory. */
static bool cwd_mover(const struct tg_op *op)
{
	return op->kind == TG_OP_RMDIR || op->kind == TG_OP_RENAME ||
	       (op->kind == TG_OP_SYSCALL && root_changer(op->nr));
}

static void cwd_call_begin(struct tracer *t, struct task *k)
{
	if (k && !k->cwd_call) {
		k->cwd_call = true;
		t->cwd_calls++;
	}
	t->cwd_epoch++;
}

static void cwd_call_end(struct tracer *t, struct task *k)
{
	k->cwd_call = false;
	t->cwd_calls--;
	t->cwd_epoch++;
}

/* pid stopped: a call it was in is over. */
static void cwd_stopped(struct tracer *t, pid_t pid)
{
	struct task *k = t->cwd_calls ? task_find(t, pid) : NULL;
	if (k && k->cwd_call)
		cwd_call_end(t, k);
}

/* k's cwd, when it may be taken as is for this stop; else NULL. */
static const char *cwd_known(const struct tracer *t, const struct task *k)
{
	return k && k->cwd && !t->cwd_calls && k->cwd_seen == t->cwd_epoch ? k->cwd : NULL;
}

/* What the stop read of pid's cwd, kept when nothing could move it since. */
static void cwd_learn(struct tracer *t, pid_t pid)
{
	struct task *k = task_find(t, pid);
	char *c = tg_path_take_cwd();
	if (!c || !k || t->cwd_calls) {
		free(c);
		return;
	}
	free(k->cwd);
	k->cwd = c;
	k->cwd_seen = t->cwd_epoch;
}

/* The name the kernel gives the program (bprm->filename): a #! or
 * binfmt_misc interpreter receives it in its argv. */
static char *exec_filename(const char *raw, int dirfd)
{
	if (raw[0] == '/' || dirfd == AT_FDCWD)
		return tg_strdup(raw);
	if (raw[0] == '\0')
		return tg_asprintf("/dev/fd/%d", dirfd);
	return tg_asprintf("/dev/fd/%d/%s", dirfd, raw);
}

/* Takes op->argv (packed; a 100,000-word argv is a megabyte: not copied). */
static struct vetted *vet_exec(pid_t pid, struct tg_op *op, const uint64_t args[6], const char *raw)
{
	struct vetted *v = calloc(1, sizeof(*v));
	int dirfd = op->nr == SYS_execveat ? (int)(int32_t)args[0] : AT_FDCWD;
	char spath[PATH_MAX + 64];
	struct stat st;

	if (!v || !raw || !op->path)
		goto fail;
	/* An empty argv reaches the program as { "" } (Linux >= 5.18). */
	static char *const empty[] = { "", NULL };
	v->argv = op->argc ? steal_pointer(&op->argv) : tg_strv_pack(empty, 1);
	v->filename = exec_filename(raw, dirfd);
	if (!v->argv || !v->filename)
		goto fail;
	/* op->path is in our view, a chrooted tracee's included (tg_path_resolve). */
	if (raw[0] == '\0')
		snprintf(spath, sizeof(spath), "/proc/%d/fd/%d", (int)pid, dirfd);
	else
		snprintf(spath, sizeof(spath), "%s", op->path);
	if (stat(spath, &st) == 0) {
		v->dev = st.st_dev;
		v->ino = st.st_ino;
	}
	return v;
fail:
	vetted_free(v);
	return NULL;
}

static void remember_exec(struct tracer *t, pid_t pid, struct tg_op *op, const uint64_t args[6],
                          const char *raw)
{
	struct task *k = adopt(t, pid);
	if (!k)
		return;
	vetted_free(k->vetted);
	k->vetted = vet_exec(pid, op, args, raw);
	k->exec_unvetted = false;
	/* Without a record the exec event will kill the tree: fail closed. */
}

/* ---- calls on other processes ---- */

/* A process (any thread of it) of the traced tree. The table holds every
 * task from its first stop (before its parent's fork returns, so before
 * anyone in the tree can know its pid) to its exit: a pid not in it is
 * someone else's, or nobody's. */
static bool in_tree(struct tracer *t, pid_t pid)
{
	if (task_find(t, pid))
		return true;
	for (size_t i = 0; i < TG_TASK_BUCKETS; i++)
		for (struct task *k = t->buckets[i]; k; k = k->next)
			if (k->tgid == pid)
				return true;
	return false;
}

/* state and pgrp from /proc/PID/stat (after the comm, which may hold
 * anything, ')' included). */
static bool read_stat(pid_t pid, char *state, pid_t *pgrp)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	int ppid, g;
	if (!p || sscanf(p + 1, " %c %d %d", state, &ppid, &g) != 3)
		return false;
	*pgrp = g;
	return true;
}

static void add_victim(struct tg_proc_target *pt, pid_t pid)
{
	if (pt->nvictims == TG_PROC_MAXVICTIMS) {
		pt->nmore++;
		return;
	}
	struct tg_proc_victim *v = &pt->victims[pt->nvictims++];
	tg_proc_victim_read(pid, v);
}

static bool exists(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return access(path, F_OK) == 0;
}

/* Every live process of group `pgrp`: those outside the tree become
 * victims. -ESRCH when the group is empty, as kill(2) would say. */
static int group_victims(struct tracer *t, pid_t pgrp, struct tg_proc_target *pt)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool any = false;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end = NULL, state;
		pid_t g;
		long n = strtol(e->d_name, &end, 10);
		if (end == e->d_name || *end || n <= 0)
			continue;
		if (!read_stat((pid_t)n, &state, &g) || g != pgrp || state == 'Z' || state == 'X')
			continue;
		any = true;
		if (!in_tree(t, (pid_t)n))
			add_victim(pt, (pid_t)n);
	}
	closedir(d);
	return any ? 0 : -ESRCH;
}

static int pid_victim(struct tracer *t, pid_t pid, struct tg_proc_target *pt)
{
	char state;
	pid_t g;
	if (in_tree(t, pid))
		return 0;
	/* Nobody: fail as the kernel would, rather than let the call race
	 * with an outside process taking the pid. */
	if (!exists(pid))
		return -ESRCH;
	/* A zombie (a child of the tree that exited and left the table, not
	 * yet reaped) holds its pid and feels nothing: timeout's SIGCONT
	 * after its SIGTERM lands there. */
	if (read_stat(pid, &state, &g) && (state == 'Z' || state == 'X'))
		return 0;
	add_victim(pt, pid);
	return 0;
}

/* Fill op->proc's victims: the processes the call reaches outside the
 * tree. 0, or the -errno the call fails with without running. */
static int find_victims(struct tracer *t, struct tg_op *op)
{
	struct tg_proc_target *pt = &op->proc;
	int r;
	switch (pt->scope) {
	case TG_PROC_PID:
		/* 0: a pidfd of a process in a pid namespace we cannot see. */
		if (pt->pid == 0) {
			add_victim(pt, 0);
			return 0;
		}
		r = pid_victim(t, pt->pid, pt);
		if (r == 0 && pt->pid2 > 0)
			r = pid_victim(t, pt->pid2, pt);
		return r;
	case TG_PROC_PGRP:
		return pt->pid >= 0 ? group_victims(t, pt->pid, pt) : -ESRCH;
	case TG_PROC_USER:
	case TG_PROC_ALL:
		pt->whole_user = true;
		return 0;
	}
	return -EINVAL;
}

/* A group signal refused because the group holds outside processes still
 * reaches the group's members in the tree, as kill(2) does when the caller
 * may signal only some of a group: it succeeds when one got it. The
 * tracer sends it (the receivers see txguard's pid as the sender). */
static bool signal_tree_group(struct tracer *t, const struct tg_op *op)
{
	const struct tg_proc_target *pt = &op->proc;
	bool sent = false;
	if (pt->scope != TG_PROC_PGRP || pt->sig <= 0 || op->nr != SYS_kill)
		return false;
	for (size_t i = 0; i < TG_TASK_BUCKETS; i++)
		for (struct task *k = t->buckets[i]; k; k = k->next)
			if (k->tid == k->tgid && getpgid(k->tid) == pt->pid && kill(k->tid, pt->sig) == 0)
				sent = true;
	return sent;
}

static void judge(struct tracer *t, pid_t pid, struct tg_op *op, const uint64_t args[6],
                  const char *raw)
{
	struct tg_decision dec = { .kind = TG_DEC_ALLOW };

	if (t->hooks && t->hooks->on_op)
		t->hooks->on_op(t->hooks->ud, op, &dec);
	switch (dec.kind) {
	case TG_DEC_ALLOW:
		if (op->kind == TG_OP_EXEC)
			remember_exec(t, pid, op, args, raw);
		if (op->kind == TG_OP_SYSCALL && root_changer(op->nr))
			root_call_begin(t, pid);
		else if (dec.watch_result && op->kind != TG_OP_EXEC)
			resume_watch(pid);
		else {
			if (dec.no_spin)
				t->spin_hint = false;
			resume(pid, 0);
		}
		break;
	case TG_DEC_DENY:
		if (op->kind == TG_OP_PROCESS && signal_tree_group(t, op)) {
			if (skip_call(pid, 0) < 0)
				kill_tree(t);
			break;
		}
		if (deny(pid, dec.err > 0 ? dec.err : EPERM) < 0 && errno != ESRCH)
			kill_tree(t);
		break;
	case TG_DEC_KILL:
		force_end(t, TG_END_POLICY_KILL);
		kill_tree(t);
		break;
	case TG_DEC_WAIT: {
		struct task *k = task_find(t, pid);
		if (!k) { /* cannot happen: a stop of ours is a task of ours */
			tracer_kill(t, pid, "a call to keep waiting has no task");
			break;
		}
		if (!k->waiting)
			t->nwaiting++;
		k->waiting = true;
		break;
	}
	}
}

/* op.name must outlive the op (reports keep the pointer): the table's
 * names are static, and the policy's extra names are resolved once and
 * kept for the life of the process. */
static const char *fixed_name(long nr)
{
	static char *names[1024];
	const struct tg_syscall *sc = tg_syscall_by_nr(nr);
	if (sc)
		return sc->name;
	if (nr < 0 || nr >= (long)TG_ARRAY_SIZE(names))
		return "?";
	if (!names[nr])
		names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, (int)nr);
	return names[nr] ? names[nr] : "?";
}

/* A fixed denial: BPF decided, the stop is only there to report it. The
 * errno comes from the filter, never from the hook: reporting cannot
 * allow. Not counted as a trap (ntraps counts calls the policy judged). */
static void on_fixed_deny(struct tracer *t, pid_t pid, const struct __ptrace_syscall_info *info)
{
	int err = (int)(info->seccomp.ret_data & 0xfff);
	struct tg_op op = {
		.kind = TG_OP_SYSCALL, .nr = (long)info->seccomp.nr, .pid = pid,
		.name = fixed_name((long)info->seccomp.nr),
	};
	if (deny(pid, err ? err : EPERM) < 0 && errno != ESRCH)
		kill_tree(t);
	if (t->hooks && t->hooks->on_fixed && !t->killing)
		t->hooks->on_fixed(t->hooks->ud, &op, err ? err : EPERM);
}

/* A decode that failed with EACCES because the root cannot be named is a
 * refusal of txguard's own: said, like any other. Off the hot path (only
 * after a failed decode). */
static void report_unnamed_root(struct tracer *t, pid_t pid, struct tg_op *op, char *raw)
{
	if (!t->hooks || !t->hooks->on_unnamed_root || t->killing || !tg_path_root_unnamed(pid))
		return;
	char *path = op->path;
	op->path = path ? path : raw;
	t->hooks->on_unnamed_root(t->hooks->ud, op, EACCES);
	op->path = path;
}

/* An execve of a program that is not there runs on, for the kernel to
 * fail it with ENOENT. No record is left to match, so should it run all
 * the same, the exec event judges what ran (judge_after_exec). */
static void let_absent_exec_fail(struct tracer *t, pid_t pid)
{
	struct task *k = adopt(t, pid);
	if (!k)
		return;
	vetted_free(steal_pointer(&k->vetted));
	k->exec_unvetted = true;
	resume(pid, 0);
}

/* A trapped call; again: one kept waiting (TG_DEC_WAIT), asked about once
 * more at the same stop. */
static void seccomp_stop(struct tracer *t, pid_t pid, bool again)
{
	/* Zeroed for memcheck, which does not know that the kernel fills it. */
	struct __ptrace_syscall_info info = { 0 };
	struct tg_op op;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info) <= 0) {
		if (errno != ESRCH)
			tracer_kill(t, pid, "cannot read a trapped syscall (PTRACE_GET_SYSCALL_INFO)");
		return;
	}
	if (info.op != PTRACE_SYSCALL_INFO_SECCOMP || info.arch != AUDIT_ARCH_X86_64) {
		tracer_kill(t, pid, "unexpected seccomp stop");
		return;
	}
	if (info.seccomp.ret_data & TG_FILTER_FIXED) {
		on_fixed_deny(t, pid, &info);
		return;
	}
	t->res->ntraps += !again;
	/* Another trapped call tends to follow soon (rm -rf, a build's
	 * writes); after an exec the new program starts up first. */
	t->spin_hint = info.seccomp.nr != SYS_execve && info.seccomp.nr != SYS_execveat;
	if (t->killing) {
		kill(pid, SIGKILL);
		return;
	}
	if (info.seccomp.nr == SYS_sched_getaffinity) {
		/* Asked where a task runs: the CPUs it was given. */
		unpin(t, false);
		resume(pid, 0);
		return;
	}
	struct task *k = task_find(t, pid);
	if (info.seccomp.nr == SYS_chdir || info.seccomp.nr == SYS_fchdir) {
		cwd_call_begin(t, k);
		resume(pid, 0);
		return;
	}
	if (info.seccomp.nr == SYS_sched_setaffinity)
		pin_forgo(t); /* the tree places itself: never moved again */
	else if (!again)
		pin_tick(t, pid);
	_cleanup_free_ char *raw = NULL;
	/* For this stop only: the hooks run while the tracee waits. The cwd
	 * as it is before the call; a call that may move it starts an epoch
	 * once its names are decoded (none is learnt from this stop then). */
	bool root_ours = root_vouched(t, k, pid);
	tg_path_vouch_root(root_ours ? pid : 0);
	const char *cwd = root_ours ? cwd_known(t, k) : NULL;
	tg_path_vouch_cwd(root_ours ? pid : 0, cwd);
	tg_path_keep_parent(true);
	tg_path_note_links(true);
	int r = tg_decode_full(pid, (long)info.seccomp.nr, info.seccomp.args, &op, &raw);
	op.via = tg_path_take_links();
	tg_path_note_links(false);
	if (cwd_mover(&op))
		cwd_call_begin(t, k);
	op.alone = t->ntasks == 1;
	if (r == 0 && op.kind == TG_OP_PROCESS)
		r = find_victims(t, &op);
	if (r == TG_DECODE_SKIP)
		resume(pid, 0);
	else if (r == TG_DECODE_ABSENT)
		let_absent_exec_fail(t, pid);
	else if (r < 0) {
		/* Unreadable arguments: fail the call as the kernel would. An
		 * unnamed root is told while the tracee still waits: its root
		 * is looked at again (gone once it runs on and exits), and our
		 * line comes before the command's own error message. */
		if (r == -EACCES)
			report_unnamed_root(t, pid, &op, raw);
		(void)deny(pid, -r);
	} else
		judge(t, pid, &op, info.seccomp.args, raw);
	if (root_ours && !cwd)
		cwd_learn(t, pid);
	tg_path_vouch_cwd(0, NULL);
	tg_path_keep_parent(false);
	tg_path_vouch_root(0);
	tg_op_clear(&op);
}

static void on_seccomp(struct tracer *t, pid_t pid, int status)
{
	(void)status;
	seccomp_stop(t, pid, false);
}

/* The tasks kept at their stop, asked about again: after each event (the
 * call they wait for may have returned) and each wake-up of service(). */
static void retry_waiting(struct tracer *t)
{
	for (size_t i = 0; i < TG_TASK_BUCKETS && t->nwaiting; i++)
		for (struct task *k = t->buckets[i], *next; k; k = next) {
			next = k->next; /* the retry may end it (tracer_kill) */
			if (!k->waiting)
				continue;
			k->waiting = false;
			t->nwaiting--;
			seccomp_stop(t, k->tid, true);
		}
}

static bool clone_is_thread(pid_t pid, int event)
{
	struct user_regs_struct regs;
	if (event != PTRACE_EVENT_CLONE)
		return false;
	/* At the event stop the registers still hold clone()'s arguments:
	 * rdi = flags. clone3 never gets here (ENOSYS in the filter). */
	if (ptrace(PTRACE_GETREGS, pid, 0L, &regs) < 0)
		return false;
	return regs.rdi & CLONE_THREAD;
}

static void on_spawn_ev(struct tracer *t, pid_t pid, int status)
{
	unsigned long msg = 0;
	int event = (int)((unsigned)status >> 16);
	struct task *parent = adopt(t, pid);

	if (!parent || ptrace(PTRACE_GETEVENTMSG, pid, 0L, &msg) < 0) {
		resume(pid, 0);
		return;
	}
	pid_t child = (pid_t)msg;
	bool thread = clone_is_thread(pid, event);
	struct task *c = task_find(t, child);
	if (!c)
		c = task_add(t, child, thread ? parent->tgid : child);
	if (!c) {
		t->fatal = -ENOMEM;
		kill_tree(t);
	} else if (!c->announced) {
		c->announced = true;
		c->tgid = thread ? parent->tgid : child;
		if (!thread)
			t->res->nprocs++;
		if (t->hooks && t->hooks->on_spawn)
			t->hooks->on_spawn(t->hooks->ud, pid, child, thread);
	}
	if (t->killing)
		kill(child, SIGKILL);
	else if (t->opts->max_procs && t->ntasks > t->opts->max_procs)
		tracer_kill(t, child, "process limit exceeded (--max-procs)");
	resume(pid, 0);
}

/* /proc/PID/cmdline into a vector: one pass to count, one to copy (an argv
 * of 100,000 arguments is a normal xargs batch). */
/* buf (NUL-terminated at buf[len], as tg_read_file leaves it) split at
 * its NULs, packed (tg_strv_pack_nul: free()). */
static char **split_cmdline(const char *buf, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\0';
	if (len && buf[len - 1] != '\0')
		n++, len++; /* the last one without its NUL: take buf[len]'s */
	return tg_strv_pack_nul(buf, len, n);
}

/* A thread other than the leader exec'd: it now carries the leader's pid,
 * and its old tid never reports again (ptrace(2), "execve under ptrace"). */
static struct task *exec_takeover(struct tracer *t, pid_t pid, pid_t former)
{
	struct task *k = adopt(t, pid);
	struct task *f = former != pid ? task_find(t, former) : NULL;
	if (k && f) {
		vetted_free(k->vetted);
		k->vetted = steal_pointer(&f->vetted);
		k->exec_unvetted = f->exec_unvetted;
		if (t->pinned == former)
			t->pinned = pid; /* the pin went with the thread */
		/* Its cwd is the thread's, which may differ (no CLONE_FS). */
		free(steal_pointer(&k->cwd));
		task_del(t, former);
	}
	if (k)
		k->tgid = pid;
	return k;
}

static char *read_link(const char *path)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return tg_strdup(buf);
}

static bool strv_equal_at(char *const *real, size_t at, char *const *want, size_t from)
{
	for (; want[from]; from++, at++)
		if (!real[at] || strcmp(real[at], want[from]) != 0)
			return false;
	return !real[at];
}

/* The kernel ran the vetted file itself with the vetted argv, or an
 * interpreter got [interp, (arg), filename, (argv0 with binfmt_misc P),
 * argv[1]...]: argv[1...] and the filename must be exactly what was vetted. */
static bool exec_matches(const struct vetted *v, char *const *real, const struct stat *exe,
                         bool *interpreted)
{
	size_t vn, rn;

	*interpreted = false;
	if (!v || !real)
		return false;
	if (exe && v->ino && exe->st_ino == v->ino && exe->st_dev == v->dev)
		return strv_equal_at(real, 0, v->argv, 0);
	*interpreted = true;
	vn = tg_strv_len(v->argv);
	rn = tg_strv_len(real);
	if (rn < vn + 1 || !strv_equal_at(real, rn - vn + 1, v->argv, 1))
		return false;
	if (strcmp(real[rn - vn], v->filename) == 0)
		return true;
	return rn >= vn + 2 && strcmp(real[rn - vn], v->argv[0]) == 0 &&
	       strcmp(real[rn - vn - 1], v->filename) == 0;
}

/* Ask the policy about a program the kernel already runs: the interpreter
 * of a vetted script, or an exec that was let through to fail and did not
 * (`what` names which). Too late to fail the call: anything but allow
 * kills the tree. Returns false when the tree is being killed. */
static bool judge_after_exec(struct tracer *t, pid_t pid, const char *what, const char *exe, char **argv)
{
	struct tg_decision dec = { .kind = TG_DEC_ALLOW };
	struct tg_op op = {
		.kind = TG_OP_EXEC,
		.nr = SYS_execve,
		.name = what,
		.pid = pid,
		.path = (char *)exe,
		.follow = true,
		.argv = argv,
		.argc = tg_strv_len(argv),
	};

	if (!exe) {
		tracer_kill(t, pid, "cannot read what an exec runs (/proc/PID/exe)");
		return false;
	}
	if (t->hooks && t->hooks->on_op)
		t->hooks->on_op(t->hooks->ud, &op, &dec);
	if (dec.kind == TG_DEC_ALLOW)
		return true;
	force_end(t, TG_END_POLICY_KILL);
	kill_tree(t);
	return false;
}

static void vetted_freep(struct vetted **v)
{
	vetted_free(*v);
}

/* /proc/PID/cmdline holds exactly want's words, each with its NUL:
 * streamed, so that a megabyte argv is compared without being held. */
static bool cmdline_equals(pid_t pid, char *const *want)
{
	char path[64], chunk[16384];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t wi = 0, off = 0, wlen = want[0] ? strlen(want[0]) + 1 : 0;
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 && !want[wi];
		for (size_t i = 0; i < (size_t)n;) {
			if (!want[wi])
				return false; /* more than was vetted */
			size_t take = wlen - off < (size_t)n - i ? wlen - off : (size_t)n - i;
			if (memcmp(chunk + i, want[wi] + off, take) != 0)
				return false;
			i += take;
			off += take;
			if (off == wlen) {
				off = 0;
				wi++;
				wlen = want[wi] ? strlen(want[wi]) + 1 : 0;
			}
		}
	}
}

/* sudo's intercept check: what really runs must be what the policy saw at
 * the execve stop, or a second thread rewrote argv or the path in between. */
static void on_exec_ev(struct tracer *t, pid_t pid, int status)
{
	unsigned long former = (unsigned long)pid;
	_cleanup_free_ char *buf = NULL, *exe = NULL;
	_cleanup_free_ char **argv = NULL; /* packed */
	struct vetted *vetted __attribute__((cleanup(vetted_freep))) = NULL;
	struct stat st;
	char path[64];
	size_t len = 0;
	bool ok, interpreted = false, unvetted = false;
	char *const *ran;

	(void)ptrace(PTRACE_GETEVENTMSG, pid, 0L, &former);
	unpin_child(t, pid);
	struct task *k = exec_takeover(t, pid, (pid_t)former);
	if (k) {
		vetted = steal_pointer(&k->vetted);
		unvetted = k->exec_unvetted && !vetted;
		k->exec_unvetted = false;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	bool have_exe = stat(path, &st) == 0;
	int exe_err = have_exe ? 0 : errno;
	if (vetted && have_exe && vetted->ino && st.st_ino == vetted->ino && st.st_dev == vetted->dev &&
	    cmdline_equals(pid, vetted->argv)) {
		/* The common case: the vetted file itself, with the vetted argv. */
		ok = true;
		ran = vetted->argv;
	} else {
		char cpath[64];
		snprintf(cpath, sizeof(cpath), "/proc/%d/cmdline", (int)pid);
		if (tg_read_file(cpath, &buf, &len, TG_CMDLINE_MAX) == 0)
			argv = split_cmdline(buf, len);
		/* Let through to fail, it ran: nothing to match, judge it. */
		ok = unvetted ? argv != NULL : exec_matches(vetted, argv, have_exe ? &st : NULL, &interpreted);
		ran = argv;
	}
	/* Killed at its exec (a runner's kill -9 of a worker it just
	 * started): the kernel has taken its memory, so its exe and cmdline
	 * read as nothing, and it runs nothing more; its exit follows. Not a
	 * rewritten argv: the tree goes on. The kill may land between the two
	 * reads (exe there, cmdline empty: 27 of 150 runs of a runner killing
	 * its workers, under ASan in the arena), so the exe is asked again:
	 * gone now, the empty cmdline was the same death. A living process at
	 * its exec stop has not run an instruction of the new program and has
	 * at least one argument (""), so it cannot look like this. */
	if (!ok && !(argv && argv[0]) && (exe_err == ENOENT || (stat(path, &st) < 0 && errno == ENOENT))) {
		resume(pid, 0);
		return;
	}
	if (!ok) {
		tracer_kill(t, pid, "argv changed between check and exec");
		return;
	}
	exe = read_link(path);
	/* A #! or binfmt_misc interpreter runs without an execve of its own:
	 * the policy must judge it too, or a script whose interpreter is
	 * denied (or a filename swapped to a denied program that then
	 * passes as "the interpreter") would run unvetted. Too late to fail
	 * the exec, so anything but allow kills the tree. */
	if (interpreted && !judge_after_exec(t, pid, "execve(interpreter)", exe, argv))
		return;
	if (unvetted && !judge_after_exec(t, pid, "execve(after the fact)", exe, argv))
		return;
	if (t->hooks && t->hooks->on_exec)
		t->hooks->on_exec(t->hooks->ud, pid, exe ? exe : "", ran);
	resume(pid, 0);
}

/* Seized tasks in group-stop are LISTENed: they stay stopped (job control
 * works) yet a SIGCONT wakes them without the tracer's help. */
static void on_group_stop(struct tracer *t, pid_t pid, int status)
{
	if (adopt(t, pid))
		(void)ptrace(PTRACE_LISTEN, pid, 0L, 0L);
}

static void on_trap_stop(struct tracer *t, pid_t pid, int status)
{
	if (adopt(t, pid) && !t->killing)
		resume(pid, 0);
}

/* The signal reaches the tracee unchanged. */
static void on_signal(struct tracer *t, pid_t pid, int status)
{
	if (adopt(t, pid))
		resume(pid, WSTOPSIG(status));
}

/* A watched call returned: hand its result over, then run on. */
static void on_syscall_exit(struct tracer *t, pid_t pid, int status)
{
	struct __ptrace_syscall_info info = { 0 };
	(void)status;
	struct task *k = adopt(t, pid);
	if (!k)
		return;
	if (k->root_call) {
		root_call_end(t, k);
		resume(pid, 0);
		return;
	}
	if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info) > 0 &&
	    info.op == PTRACE_SYSCALL_INFO_EXIT && t->hooks && t->hooks->on_result)
		t->hooks->on_result(t->hooks->ud, pid, (long)info.exit.rval);
	resume(pid, 0);
}

typedef void (*handler_fn)(struct tracer *t, pid_t pid, int status);
static const handler_fn handlers[EV_COUNT] = {
	[EV_EXIT] = on_exit_ev,
	[EV_SECCOMP] = on_seccomp,
	[EV_SPAWN] = on_spawn_ev,
	[EV_EXEC] = on_exec_ev,
	[EV_GROUP_STOP] = on_group_stop,
	[EV_TRAP_STOP] = on_trap_stop,
	[EV_SIGNAL] = on_signal,
	[EV_SYSCALL_EXIT] = on_syscall_exit,
};

/* ---- timers and txguard's own signals ---- */

static bool due(uint64_t *at, uint64_t now)
{
	if (!*at || now < *at)
		return false;
	*at = 0;
	return true;
}

static void run_timers(struct tracer *t)
{
	uint64_t now = tg_now_ns();

	if (due(&t->timeout_at, now)) {
		force_end(t, TG_END_TIMEOUT);
		signal_all(t, SIGTERM);
		t->kill_at = now + t->opts->kill_after_ms * 1000000ull;
	}
	if (due(&t->kill_at, now) || due(&t->grace_at, now))
		kill_tree(t);
	pin_check(t);
}

/* Milliseconds until the next timer, or -1 when none is armed. */
static int poll_timeout_ms(const struct tracer *t)
{
	uint64_t next = 0, now = tg_now_ns();
	const uint64_t at[] = { t->timeout_at, t->kill_at, t->grace_at };

	for (size_t i = 0; i < TG_ARRAY_SIZE(at); i++)
		if (at[i] && (!next || at[i] < next))
			next = at[i];
	/* A task kept waiting is asked again at least this often: the call
	 * it waits for may never return (tg_txn_must_wait's bound). */
	if (t->nwaiting && (!next || next > now + TG_WAIT_RETRY_NS))
		next = now + TG_WAIT_RETRY_NS;
	if (!next)
		return -1;
	if (next <= now)
		return 0;
	uint64_t ms = (next - now + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* A SIGINT typed at the terminal already went to the whole foreground
 * process group (si_code SI_KERNEL): sending it again would double it.
 * One sent to txguard alone (kill, timeout(1), systemd) is passed on. */
static void on_own_signal(struct tracer *t, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	if (sig == SIGCHLD) {
		if (si->ssi_code == SI_TIMER)
			t->pin_ticked = true;
		return;
	}
	t->interrupted = true;
	if (si->ssi_code == SI_KERNEL)
		return;
	if (!t->main_exited)
		kill(t->main_pid, sig);
	else
		signal_all(t, sig);
}

/* Signals to txguard and the timers. With `block`, wait for one of them or
 * for the next stop (SIGCHLD); without, just look.
 *
 * The wait is on the stop path: with no timer armed it is one blocking read
 * of the signalfd, which also drains it (a batch of siginfos per read).
 * No wakeup is lost: every ptrace stop and every exit of a tracee sends
 * SIGCHLD to the tracer, and the wait loop only blocks after waitpid has
 * said that nothing is pending. */
static void service(struct tracer *t, bool block)
{
	struct pollfd p = { .fd = t->sfd, .events = POLLIN };
	struct signalfd_siginfo si[8];
	int timeout = block ? poll_timeout_ms(t) : 0;
	ssize_t n = 0;

	/* Once the pin's timer exists the signalfd does not block (see
	 * pin_timer_set): poll waits, then the read takes what is there. */
	if (t->pin_timer_made ? poll(&p, 1, timeout) > 0 : timeout < 0 || poll(&p, 1, timeout) > 0)
		n = read(t->sfd, si, sizeof(si));
	for (ssize_t i = 0; i < n / (ssize_t)sizeof(si[0]); i++)
		on_own_signal(t, &si[i]);
	run_timers(t);
}

/* Descendants alive after the main child exited (orphans, daemons, a task
 * met only after that) get grace_ms, then SIGKILL. */
static void arm_grace(struct tracer *t)
{
	if (t->main_exited && !t->grace_armed && t->ntasks > 0) {
		t->grace_armed = true;
		t->grace_at = tg_now_ns() + t->opts->grace_ms * 1000000ull;
	}
}

/* On a VM, a vCPU that goes idle halts, and waking it costs more than all
 * the work of a stop: a tree that makes one trapped call after another
 * waits for two such wakeups per call (ours, then the tracee's). So before
 * sleeping, look for the next stop for up to TG_SPIN_NS. A spin that finds
 * one refills the credit; each one that finds nothing costs a credit, and
 * with none left the tracer only tries again every TG_SPIN_PROBE_EVERY
 * sleeps: a tree that traps rarely costs at most TG_SPIN_NS per that many
 * stops. Never with one CPU to run on, or while a task shares ours (see
 * "pinning"), where spinning keeps the tracee from the CPU it needs.
 * Returns waitpid's result. */
static pid_t spin_for_stop(struct tracer *t, int *status)
{
	if (!t->spin_allowed || t->pinned ||
	    (t->spin_credit <= 0 && ++t->spin_probe % TG_SPIN_PROBE_EVERY))
		return 0;
	uint64_t until = tg_now_ns() + TG_SPIN_NS;
	do {
		pid_t pid = waitpid(-1, status, __WALL | WNOHANG);
		if (pid != 0) {
			if (pid > 0)
				t->spin_credit = TG_SPIN_CREDIT;
			return pid;
		}
	} while (tg_now_ns() < until);
	t->spin_credit--;
	return 0;
}

static bool can_spin(void)
{
	cpu_set_t set;
	return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1;
}

static int wait_loop(struct tracer *t)
{
	t->spin_allowed = can_spin();
	t->spin_credit = TG_SPIN_CREDIT;
	for (unsigned long n = 1;; n++) {
		int status;
		pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);
		/* Spin only right after a trapped call (on_seccomp sets the
		 * hint): forks, execs and exits are followed by a process
		 * starting up or going away. */
		if (pid == 0 && t->spin_hint && !t->killing)
			pid = spin_for_stop(t, &status);
		t->spin_hint = false;
		if (pid > 0) {
			if (t->cwd_calls)
				cwd_stopped(t, pid);
			handlers[classify(status)](t, pid, status);
			if (t->nwaiting)
				retry_waiting(t);
			if (t->fatal && !t->killing)
				kill_tree(t);
			arm_grace(t);
			/* A busy tree may never let waitpid run dry: Ctrl-C and
			 * --timeout must not wait for a quiet moment. */
			if (n % TG_SERVICE_EVERY == 0)
				service(t, false);
			continue;
		}
		if (pid < 0 && errno == ECHILD)
			return 0;
		if (pid < 0 && errno != EINTR) {
			int e = -errno;
			kill_tree(t);
			return e;
		}
		service(t, true);
		if (t->nwaiting)
			retry_waiting(t);
	}
}

/* ---- the child ---- */

/* The child's own code runs on a stack ASan does not know (see "the
 * child's start"): uninstrumented, it neither warns at its noreturn calls
 * nor leaves poisoned frames behind at exec. */
#define TG_CHILD_CODE __attribute__((no_sanitize_address))

static void child_fail(int err_fd, enum child_stage stage, int err) TG_NORETURN TG_CHILD_CODE;
static void child_fail(int err_fd, enum child_stage stage, int err)
{
	struct child_error ce = { .stage = stage, .err = err };
	(void)!write(err_fd, &ce, sizeof(ce));
	_exit(stage == STAGE_EXEC ? (err == ENOENT ? 127 : 126) : 125);
}

/* The signals this process catches: SigCgt of /proc/self/status, a mask
 * in hex (bit n-1 for signal n). One open and one read, where asking each
 * of the 64 signals is 64 syscalls (about 60 us of every start). No
 * allocation and no stdio: the caller is the child before its exec. */
static bool caught_signals(uint64_t *mask) TG_CHILD_CODE;
static bool caught_signals(uint64_t *mask)
{
	static const char key[] = "\nSigCgt:\t";
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *p = strstr(buf, key);
	if (!p)
		return false;
	uint64_t m = 0;
	int digits = 0;
	for (p += sizeof(key) - 1; digits < 16; p++, digits++) {
		int v = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
		if (v < 0)
			break;
		m = m << 4 | (uint64_t)v;
	}
	if (digits != 16 || *p != '\n')
		return false;
	*mask = m;
	return true;
}

/* exec resets caught signals to SIG_DFL; do it now, so that a Ctrl-C
 * between fork and exec cannot run one of the caller's handlers (a rollback!)
 * in the child. Ignored signals stay ignored, as across exec. */
static void reset_handlers(void)
{
	uint64_t caught;
	if (caught_signals(&caught)) {
		for (int sig = 1; sig < NSIG && sig <= 64; sig++)
			if (caught & (1ull << (sig - 1)) && sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		return;
	}
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction old;
		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &old) < 0)
			continue;
		if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)
			signal(sig, SIG_DFL);
	}
}

/* Without CAP_SYS_PTRACE the tree cannot read the environment, memory,
 * fds or maps (/proc/PID/environ, /proc/PID/mem, process_vm_readv) of a
 * process outside it that holds more capabilities than it does: as root,
 * every root daemon and the user's own root shells. Nothing in the tree
 * needs it (ptrace itself is refused in BPF), and no_new_privs keeps an
 * exec from bringing it back. Lowering one's own capabilities needs no
 * privilege; only the bounding set needs CAP_SETPCAP, and without it the
 * capability is not ours to lose anyway. */
static int drop_ptrace_cap(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if (prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) < 0 && errno != EPERM && errno != EINVAL)
		return -errno;
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_PTRACE, 0, 0);
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	uint32_t bit = 1u << (CAP_SYS_PTRACE % 32);
	unsigned w = CAP_SYS_PTRACE / 32;
	if (!((d[w].effective | d[w].permitted | d[w].inheritable) & bit))
		return 0;
	d[w].effective &= ~bit;
	d[w].permitted &= ~bit;
	d[w].inheritable &= ~bit;
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/* execvp's PATH search, done before the filter is loaded: each miss would
 * otherwise be a trapped execve (a stop and a stat in the tracer), and a
 * PATH of 16 entries before /usr/bin makes 15 of them. Finds what execvp
 * would run first: a regular file we may execute. Not found (or a name
 * with a slash): false, and execvp searches itself. Runs between fork and
 * exec of a process with threads: no allocation, no stdio. (The policy's
 * explain has a search of its own, match.c's find_in_path, which returns
 * only absolute names.) */
static bool find_in_path(const char *file, char *out, size_t size)
{
	size_t flen = strlen(file);
	if (!flen || strchr(file, '/'))
		return false;
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin"; /* glibc's default */
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t len = (size_t)(end - p), at = len ? len + 1 : 0; /* "" is the cwd */
		struct stat st;
		if (at + flen < size) {
			memcpy(out, p, len);
			out[len] = '/';
			memcpy(out + at, file, flen + 1);
			if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
				return true;
		}
		if (!*end)
			return false;
		p = end;
	}
}

static void child_main(const struct tracer *t, int go_fd, int err_fd, const sigset_t *mask,
                       const struct sigaction *chld) TG_NORETURN TG_CHILD_CODE;
static void child_main(const struct tracer *t, int go_fd, int err_fd, const sigset_t *mask,
                       const struct sigaction *chld)
{
	const struct tg_tracer_opts *opts = t->opts;
	char go;
	int r;

	sigaction(SIGCHLD, chld, NULL);
	reset_handlers();
	sigprocmask(SIG_SETMASK, mask, NULL);
	/* Wait until the parent has seized us: nothing may run untraced. EOF
	 * means the parent died or gave up. A handler inherited from the caller
	 * may interrupt the read. */
	ssize_t n;
	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(125);
	close(go_fd);
	/* The caller reports a setup failure (with its hint) from our return. */
	if (opts->child_setup && (r = opts->child_setup(opts->child_ud)) < 0)
		child_fail(err_fd, STAGE_SETUP, -r);
	if ((r = drop_ptrace_cap()) < 0)
		child_fail(err_fd, STAGE_SETUP, -r);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(err_fd, STAGE_FILTER, errno);
	char found[PATH_MAX];
	bool have = find_in_path(opts->argv[0], found, sizeof(found));
	r = tg_filter_load_prog(t->prog);
	if (r < 0)
		child_fail(err_fd, STAGE_FILTER, -r);
	/* What execv cannot run (a script without #!, a file gone since),
	 * execvp tries again with its own rules and errors. */
	if (have)
		execv(found, opts->argv);
	execvp(opts->argv[0], opts->argv);
	/* The caller says why (res->exec_errno), unless its policy already did. */
	child_fail(err_fd, STAGE_EXEC, errno);
}

/* ---- setup and result ---- */

struct saved_signals {
	sigset_t mask;
	struct sigaction chld;
};

static void tracer_sigset(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
}

static int block_signals(struct saved_signals *saved)
{
	sigset_t set;
	tracer_sigset(&set);
	/* SIGCHLD must not be ignored, or the kernel reaps for us. */
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	if (sigaction(SIGCHLD, &dfl, &saved->chld) < 0)
		return -errno;
	if (sigprocmask(SIG_BLOCK, &set, &saved->mask) < 0)
		return -errno;
	/* Blocking: service() waits in read(2) itself (see there). */
	int fd = signalfd(-1, &set, SFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void restore_signals(int sfd, const struct saved_signals *saved, bool keep_blocked)
{
	struct signalfd_siginfo si;
	sigset_t mask = saved->mask, ours;
	/* Consume what arrived for the tree, so nothing fires on unblock.
	 * Not by poll and a blocking read: a stale tick of the pin's timer
	 * (pin_timer_set) is pending for poll and dropped by the read, which
	 * would then wait for ever. */
	if (fcntl(sfd, F_SETFL, O_NONBLOCK) == 0)
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
	close(sfd);
	if (keep_blocked) {
		tracer_sigset(&ours);
		sigorset(&mask, &mask, &ours);
	}
	sigprocmask(SIG_SETMASK, &mask, NULL);
	sigaction(SIGCHLD, &saved->chld, NULL);
}

/* ---- the child's start ----
 *
 * The command's first process shares the supervisor's memory until its
 * exec, as posix_spawn's child does. Then the fork copies no page tables,
 * and neither side takes a copy-on-write fault for each page it writes
 * before or after the exec: about 75 faults and 2 ms of a 12 ms start on
 * a VM, where a fault costs ~13 us.
 *
 * posix_spawn can share because its caller sleeps (CLONE_VFORK) while the
 * child runs on its thread's libc state: errno and the rest of the TLS.
 * The tracer cannot sleep: it must seize the child and then vet its
 * execve. So a helper thread makes the clone and is the one that sleeps;
 * the child borrows the helper's TLS, and the tracer goes on. Until its
 * exec (or exit), the child:
 *   - writes nothing the tracer reads: no allocation, no stdio, only its
 *     own stack and the helper's errno;
 *   - reads only what the tracer keeps still until then: opts and what
 *     child_setup reads, the filter program, the saved signal state, the
 *     environment.
 * Its fd table, signal handlers, credentials, Landlock domain and seccomp
 * filter are its own (no CLONE_FILES, CLONE_SIGHAND or CLONE_THREAD).
 *
 * valgrind turns that clone into a fork that keeps its big lock while the
 * helper sleeps, so the tracer could never run: under valgrind the child
 * is forked. Both ways, the child first sends its pid through the error
 * pipe, and the tracer seizes it before it may go on. */

struct spawn {
	struct tracer *t;
	const struct saved_signals *saved;
	int go[2], err[2];      /* pipes: "go" to the child; its pid, then its error, from it */
	char *map;              /* the child's stack, above a guard page */
	size_t map_size;
	pthread_t helper;
	bool helper_started;
	int clone_err;          /* the helper's: errno of a failed clone, else 0 */
	pid_t pid;              /* the child, once made (to reap it if it dies unseized) */
};

static int spawn_child(void *arg) TG_NORETURN TG_CHILD_CODE;
static int spawn_child(void *arg)
{
	const struct spawn *s = arg;
	close(s->go[1]);
	close(s->err[0]);
	close(s->t->sfd);
	pid_t self = (pid_t)syscall(SYS_getpid);
	if (write(s->err[1], &self, sizeof(self)) != (ssize_t)sizeof(self))
		_exit(125);
	child_main(s->t, s->go[0], s->err[1], &s->saved->mask, &s->saved->chld);
}

static void *spawn_helper(void *arg)
{
	struct spawn *s = arg;
	pid_t pid = clone(spawn_child, s->map + s->map_size, CLONE_VM | CLONE_VFORK | SIGCHLD, s);
	s->clone_err = pid < 0 ? errno : 0;
	s->pid = pid;
	/* The child has exec'd or died, or never was: the process's copies
	 * of its pipe ends go, so that the tracer reads EOF after its error. */
	close(s->go[0]);
	close(s->err[1]);
	return NULL;
}

/* The child's stack and a guard page below it. The stack holds
 * child_main's PATH_MAX buffer, execvp's PATH buffer and, for a script
 * without #!, execvp's copy of argv. */
static size_t child_map_size(char *const *argv, size_t page)
{
	const char *path = getenv("PATH");
	size_t n = (128u << 10) + 2 * PATH_MAX + (path ? strlen(path) : 0) +
	           (tg_strv_len(argv) + 4) * sizeof(char *);
	return page + (n + page - 1) / page * page;
}

/* A child on another CPU is one more wakeup through the hypervisor on a
 * VM (about a millisecond here), and the ptrace stops of its start cross
 * CPUs. Born on the tracer's CPU, it runs the moment the tracer waits. So
 * the helper runs on that one CPU and the child inherits it; unpin_child
 * gives the tracer's CPUs back at the first exec. */
static bool pin_helper(struct tracer *t, pthread_attr_t *attr)
{
	int cpu = sched_getcpu();
	cpu_set_t one;
	if (cpu < 0 || sched_getaffinity(0, sizeof(t->cpus), &t->cpus) < 0 || CPU_COUNT(&t->cpus) < 2)
		return false;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return pthread_attr_setaffinity_np(attr, sizeof(one), &one) == 0;
}

static int spawn_shared(struct spawn *s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_attr_t attr;
	int e;

	s->map_size = child_map_size(s->t->opts->argv, page);
	s->map = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE,
	              MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (s->map == MAP_FAILED)
		return -errno;
	if (mprotect(s->map, page, PROT_NONE) < 0)
		return -errno;
	if ((e = pthread_attr_init(&attr)) != 0)
		return -e;
	/* The helper only calls clone: a small stack of its own, and every
	 * signal blocked, so that none waits for it while it sleeps (the
	 * child starts with the same mask, until child_main sets the
	 * caller's). */
	sigset_t all;
	sigfillset(&all);
	pthread_attr_setstacksize(&attr, 64u << 10);
	pthread_attr_setsigmask_np(&attr, &all);
	s->t->child_pinned = pin_helper(s->t, &attr);
	e = pthread_create(&s->helper, &attr, spawn_helper, s);
	pthread_attr_destroy(&attr);
	if (e != 0)
		return -e;
	s->helper_started = true;
	return 0;
}

static int spawn_forked(struct spawn *s)
{
	pid_t pid = fork();
	if (pid == 0)
		spawn_child(s);
	if (pid < 0)
		return -errno;
	s->pid = pid;
	close(s->go[0]);
	close(s->err[1]);
	s->go[0] = s->err[1] = -1;
	return 0;
}

static void spawn_init(struct spawn *s, struct tracer *t, const struct saved_signals *saved)
{
	*s = (struct spawn){ .t = t, .saved = saved, .go = { -1, -1 }, .err = { -1, -1 }, .map = MAP_FAILED };
}

/* The helper returns once the child has exec'd or died; its stack may
 * then go. Also closes the tracer's end of "go". */
static void spawn_end(struct spawn *s)
{
	if (s->helper_started)
		pthread_join(s->helper, NULL);
	s->helper_started = false;
	if (s->map != MAP_FAILED)
		munmap(s->map, s->map_size);
	s->map = MAP_FAILED;
	if (s->go[1] >= 0)
		close(s->go[1]);
	s->go[1] = -1;
}

static int start_child(struct tracer *t, struct spawn *s)
{
	pid_t pid;
	ssize_t n;
	int e;

	if (pipe2(s->go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(s->err, O_CLOEXEC) < 0) {
		e = -errno;
		close(s->go[0]);
		close(s->go[1]);
		s->go[1] = -1;
		return e;
	}
	e = RUNNING_ON_VALGRIND ? spawn_forked(s) : spawn_shared(s);
	if (e < 0) {
		/* No child: the process's copies are the only ones. */
		close(s->go[0]);
		close(s->err[1]);
		goto fail;
	}
	/* Its pid, or EOF: the clone failed. */
	do
		n = read(s->err[0], &pid, sizeof(pid));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(pid)) {
		spawn_end(s); /* the helper's clone_err and pid, once joined */
		e = s->clone_err ? -s->clone_err : -EIO;
		/* Made, but dead before it could say its pid. */
		if (s->pid > 0)
			waitpid(s->pid, NULL, __WALL);
		goto fail;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0L, (long)TG_PTRACE_OPTIONS) < 0)
		e = -errno;
	else if (write(s->go[1], "g", 1) != 1)
		e = -EIO;
	close(s->go[1]);
	s->go[1] = -1;
	if (e < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, __WALL);
		goto fail;
	}
	t->main_pid = pid;
	return 0;
fail:
	spawn_end(s);
	close(s->err[0]);
	s->err[0] = -1;
	t->child_pinned = false;
	return e;
}

static void fill_result(struct tracer *t, const struct child_error *ce, uint64_t start)
{
	struct tg_run_result *res = t->res;
	int st = t->main_status;

	res->main_pid = t->main_pid;
	res->duration_ns = tg_now_ns() - start;
	if (WIFSIGNALED(st)) {
		res->term_signal = WTERMSIG(st);
		res->exit_code = 128 + res->term_signal;
		res->end = TG_END_SIGNALED;
	} else {
		res->exit_code = WEXITSTATUS(st);
		res->end = TG_END_EXITED;
	}
	if (ce->stage == STAGE_EXEC && !WIFSIGNALED(st)) {
		res->end = TG_END_EXEC_FAILED;
		res->exec_errno = ce->err;
	}
	if (t->interrupted)
		res->end = TG_END_INTERRUPTED;
	if (t->forced)
		res->end = t->forced_end;
}

static void read_child_error(int fd, struct child_error *ce)
{
	memset(ce, 0, sizeof(*ce));
	if (read(fd, ce, sizeof(*ce)) != (ssize_t)sizeof(*ce))
		memset(ce, 0, sizeof(*ce));
}

int tg_tracer_run(const struct tg_tracer_opts *opts, const struct tg_tracer_hooks *hooks,
                  struct tg_run_result *res)
{
	struct tracer t = { .opts = opts, .hooks = hooks, .res = res, .root_epoch = 1 };
	struct saved_signals saved;
	struct child_error ce;
	struct spawn sp;
	uint64_t start = tg_now_ns();

	if (!opts || !opts->argv || !opts->argv[0] || !res)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	int r = opts->prog ? 0 : tg_filter_compile(&opts->filter, &t.own);
	if (r < 0)
		return r;
	t.prog = opts->prog ? opts->prog : &t.own;
	t.sfd = block_signals(&saved);
	if (t.sfd < 0) {
		tg_filter_prog_free(&t.own);
		return t.sfd;
	}
	spawn_init(&sp, &t, &saved);
	r = start_child(&t, &sp);
	if (r < 0) {
		tg_filter_prog_free(&t.own);
		restore_signals(t.sfd, &saved, opts->keep_signals_blocked);
		return r;
	}
	if (!task_add(&t, t.main_pid, t.main_pid)) {
		kill(t.main_pid, SIGKILL);
		t.killing = true;
		t.fatal = -ENOMEM;
	}
	res->nprocs = 1;
	if (opts->timeout_ms)
		t.timeout_at = start + opts->timeout_ms * 1000000ull;
	r = wait_loop(&t);
	unpin(&t, true);
	if (t.pin_timer_made)
		timer_delete(t.pin_timer);
	/* The tree is gone, so the child's start is over: what it read
	 * (the program, its stack) may go now. */
	spawn_end(&sp);
	tg_filter_prog_free(&t.own);
	t.prog = NULL;
	tasks_free(&t);
	restore_signals(t.sfd, &saved, opts->keep_signals_blocked);
	read_child_error(sp.err[0], &ce);
	close(sp.err[0]);
	if (r == 0 && t.fatal)
		r = t.fatal;
	/* The child failed before the command ran: a setup error, not a run. */
	if (r == 0 && (ce.stage == STAGE_SETUP || ce.stage == STAGE_FILTER))
		r = -(ce.err ? ce.err : EIO);
	if (r < 0)
		return r;
	fill_result(&t, &ce, start);
	return 0;
}

/* ---- kernel features (txguard doctor) ---- */

static int probe_load_trap_filter(void)
{
	/* Trap getppid only: the smallest filter that exercises RET_TRACE. */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = TG_ARRAY_SIZE(f), .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0 ? -errno : 0;
}

static void probe_child(int go_fd) TG_NORETURN;
static void probe_child(int go_fd)
{
	char c;
	if (read(go_fd, &c, 1) != 1)
		_exit(2);
	if (probe_load_trap_filter() < 0)
		_exit(3);
	syscall(SYS_getppid);
	_exit(0);
}

static void ptrace_hint(struct tg_kernel_features *f, int err)
{
	snprintf(f->ptrace_error, sizeof(f->ptrace_error),
	         "%s: check Yama ptrace_scope, the container's seccomp profile, CAP_SYS_PTRACE",
	         strerror(err));
}

static int probe_seize(struct tg_kernel_features *f, pid_t pid)
{
	long opts = PTRACE_O_EXITKILL | PTRACE_O_TRACESECCOMP;
	if (ptrace(PTRACE_SEIZE, pid, 0L, opts) == 0) {
		f->exitkill = true;
		return 0;
	}
	if (errno == EINVAL && ptrace(PTRACE_SEIZE, pid, 0L, (long)PTRACE_O_TRACESECCOMP) == 0)
		return 0;
	ptrace_hint(f, errno);
	return -1;
}

/* Run a child that traps one syscall under our tracing: the whole chain
 * (seize, filter, RET_TRACE, GET_SYSCALL_INFO) either works or not. */
static void probe_trace(struct tg_kernel_features *f)
{
	int go[2], st = 0;
	struct __ptrace_syscall_info info;

	if (pipe2(go, O_CLOEXEC) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(go[1]);
		probe_child(go[0]);
	}
	close(go[0]);
	if (pid < 0) {
		close(go[1]);
		return;
	}
	f->ptrace = probe_seize(f, pid) == 0;
	(void)!write(go[1], "g", 1);
	close(go[1]);
	while (waitpid(pid, &st, __WALL) == pid && WIFSTOPPED(st)) {
		if ((unsigned)st >> 16 == PTRACE_EVENT_SECCOMP) {
			f->seccomp_ret_trace = true;
			long n = ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info);
			f->get_syscall_info = n > 0 && info.op == PTRACE_SYSCALL_INFO_SECCOMP &&
			                      info.seccomp.nr == SYS_getppid;
		}
		ptrace(PTRACE_CONT, pid, 0L, 0L);
	}
	/* Untraced, the trapped getppid fails with ENOSYS but the child still
	 * exits 0: the filter loaded. */
	f->seccomp_filter = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (!f->ptrace && f->seccomp_filter) {
		unsigned action = SECCOMP_RET_TRACE;
		f->seccomp_ret_trace = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
	}
}

static int probe_yama(void)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	if (tg_read_file("/proc/sys/kernel/yama/ptrace_scope", &buf, &len, 64) < 0)
		return -1;
	return atoi(buf);
}

static int probe_landlock(void)
{
#ifdef LANDLOCK_CREATE_RULESET_VERSION
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi > 0 ? (int)abi : 0;
#else
	return 0;
#endif
}

/* The 32-bit entries that the arch gate exists for. Each is tried in a
 * child: int 0x80 on a kernel without IA-32 emulation is a CPU fault
 * (SIGSEGV, with the default action restored by the raw syscall so that a
 * sanitizer's handler cannot turn it into an abort), and under another
 * txguard the arch gate kills the child by SIGSYS, which tells nothing. */
static void probe_child_ia32(void)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L /* ia32 getpid */) : "memory");
	_exit(r == getpid() ? 0 : 1);
}

static void probe_child_x32(void)
{
	long r = syscall(0x40000000L /* __X32_SYSCALL_BIT */ | SYS_getpid);
	_exit(r == getpid() ? 0 : 1);
}

static int probe_entry(void (*child)(void))
{
	int st;
	pid_t pid = fork();
	if (pid == 0) {
		struct { void *h; unsigned long f; void *r; uint64_t m; } dfl = { SIG_DFL, 0, NULL, 0 };
		syscall(SYS_rt_sigaction, SIGSEGV, &dfl, NULL, sizeof(dfl.m));
		child();
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st) == 0;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV ? 0 : -1;
}

void tg_probe_kernel(struct tg_kernel_features *out)
{
	static struct tg_kernel_features cache;
	static bool done;

	if (!done) {
		memset(&cache, 0, sizeof(cache));
		probe_trace(&cache);
		cache.ia32 = probe_entry(probe_child_ia32);
		cache.x32 = probe_entry(probe_child_x32);
		cache.landlock_abi = probe_landlock();
		cache.yama_ptrace_scope = probe_yama();
		done = true;
	}
	*out = cache;
}
