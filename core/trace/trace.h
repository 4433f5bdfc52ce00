/* trace/trace.h — run a command under seccomp-BPF + ptrace and report each trap.
 *
 * The tracer forks the command, seizes it with PTRACE_O_EXITKILL and friends,
 * loads the seccomp filter (filter.h) in the child, and runs the wait loop.
 * At every seccomp stop it decodes the call into a struct tg_op and asks the
 * caller's on_op() for a decision. It knows nothing of policy or journals.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/op.h"
#include "filter.h"

enum tg_decision_kind {
	TG_DEC_ALLOW = 0,
	TG_DEC_DENY,       /* skip the call; it returns -err in the tracee */
	TG_DEC_KILL,       /* SIGKILL the whole tree */
	TG_DEC_WAIT,       /* not yet: keep the task at its stop and call
	                    * on_op() for this call again after the next event */
};

struct tg_decision {
	enum tg_decision_kind kind;
	int err;
	/* TG_DEC_ALLOW only: stop again when the call returns and hand its
	 * result to on_result() (a second stop: ask for it only where the
	 * kernel may refuse what the policy allowed, e.g. Landlock). */
	bool watch_result;
	/* TG_DEC_ALLOW without watch_result: the thread will not trap again
	 * soon, so the tracer sleeps at once instead of spinning for its next
	 * stop (as it does after a watched call's exit). */
	bool no_spin;
};

struct tg_tracer_hooks {
	void *ud;
	/* A trapped call. `op` is valid only during the callback. */
	void (*on_op)(void *ud, const struct tg_op *op, struct tg_decision *out);
	/* A process/thread joined the tree (fork/vfork/clone event). */
	void (*on_spawn)(void *ud, pid_t parent, pid_t child, bool thread);
	/* The tree had one task and now has two: called when the tracer
	 * first meets the new one, before either runs on (so the first may
	 * still be taken to have acted alone until now: tg_op.alone). */
	void (*on_company)(void *ud);
	/* An exec completed (PTRACE_EVENT_EXEC) with this real argv/exe. */
	void (*on_exec)(void *ud, pid_t pid, const char *exe, char *const *argv);
	/* A process exited (status as from waitpid). */
	void (*on_exit)(void *ud, pid_t pid, int status);
	/* The tracer killed the tree on its own (argv mismatch at exec, proc
	 * limit, ...): why, for the report. */
	void (*on_kill)(void *ud, pid_t pid, const char *why);
	/* The return value of a call on_op() asked to watch (watch_result),
	 * as the tracee sees it (-errno on failure). Not called when the
	 * thread dies before the call returns. */
	void (*on_result)(void *ud, pid_t pid, long rval);
	/* A call the filter refuses whatever the policy says (the fixed set
	 * and the policy's syscall denials): it already failed with `err`;
	 * this only reports it. op->kind is TG_OP_SYSCALL. */
	void (*on_fixed)(void *ud, const struct tg_op *op, int err);
	/* A call refused with `err` (EACCES) without asking on_op: the
	 * caller's root cannot be named in txguard's view (it entered another
	 * mount namespace with setns), so no path of it can be judged. op has
	 * its kind and syscall name, and op->path the first path argument as
	 * the tracee wrote it (in its own view), or NULL. */
	void (*on_unnamed_root)(void *ud, const struct tg_op *op, int err);
};


struct tg_tracer_opts {
	char *const *argv;               /* the command; argv[0] looked up in PATH */
	struct tg_filter_config filter;
	/* `filter` already compiled by the caller (tg_filter_prepare), or NULL:
	 * then the tracer compiles it. Compiling takes libseccomp ~1 ms. */
	const struct tg_filter_prog *prog;
	uint64_t timeout_ms;             /* 0 = none */
	uint64_t kill_after_ms;          /* after the timeout's SIGTERM (CLI default 2000; 0 = at once) */
	uint64_t grace_ms;               /* descendants alive after the main child exits */
	unsigned long max_procs;         /* 0 = unlimited: live tasks in the tree */
	/* Called in the child before the filter: Landlock, rlimits, etc.
	 * Returns 0 or -errno (the child then exits 125 with a message). The
	 * child still shares the caller's memory (see tracer.c, "the child's
	 * start"): no allocation, no stdio, no write to what the caller reads. */
	int (*child_setup)(void *ud);
	void *child_ud;
	/* Return with SIGINT/SIGTERM/SIGHUP/SIGQUIT/SIGCHLD still blocked. */
	bool keep_signals_blocked;
};

enum tg_run_end {
	TG_END_EXITED,       /* main child exited: exit_code */
	TG_END_SIGNALED,     /* main child killed by signal: term_signal */
	TG_END_POLICY_KILL,  /* tree killed because on_op() said so */
	TG_END_TRACER_KILL,  /* tree killed by the tracer itself (on_kill) */
	TG_END_TIMEOUT,      /* --timeout fired */
	TG_END_INTERRUPTED,  /* txguard got SIGINT/SIGTERM/SIGHUP/SIGQUIT and the tree died of it */
	TG_END_EXEC_FAILED,  /* the command could not be executed: exit_code 126/127 */
};

struct tg_run_result {
	enum tg_run_end end;
	int exit_code;       /* the contract's code: child's code, 128+N, 126/127 */
	int term_signal;     /* when signaled */
	int exec_errno;      /* TG_END_EXEC_FAILED: why exec failed (the caller says it) */
	pid_t main_pid;
	unsigned long nprocs;    /* processes seen in the tree */
	unsigned long ntraps;    /* seccomp stops handled */
	uint64_t duration_ns;
};

/* Runs the command to its end. Returns 0 with *res filled, or -errno when
 * the run could not be set up (nothing ran; the caller exits 125).
 *
 * While it runs, SIGCHLD/SIGINT/SIGTERM/SIGHUP/SIGQUIT are blocked and read
 * from a signalfd; on return the caller's mask and SIGCHLD disposition are
 * restored, unless opts->keep_signals_blocked: then those five stay blocked
 * (pending ones already consumed) so that a rollback after the run cannot be
 * cut short; the caller unblocks them when done. The child always gets the
 * caller's original mask and dispositions back before exec. */
int tg_tracer_run(const struct tg_tracer_opts *opts, const struct tg_tracer_hooks *hooks,
                  struct tg_run_result *res);

/* Diagnostics for `txguard doctor`: one probe each, cached. */
struct tg_kernel_features {
	bool seccomp_filter;     /* seccomp(SECCOMP_SET_MODE_FILTER) */
	bool seccomp_ret_trace;
	bool ptrace;             /* we may PTRACE_SEIZE our own child */
	bool get_syscall_info;   /* PTRACE_GET_SYSCALL_INFO */
	bool exitkill;
	int ia32;                /* int 0x80 reaches the i386 table: 1 yes, 0 no (IA-32
	                          * emulation off), -1 unknown (we run under a filter) */
	int x32;                 /* the x32 table exists: 1, 0, -1 as above */
	int landlock_abi;        /* 0 = none */
	int yama_ptrace_scope;   /* -1 = no Yama */
	char ptrace_error[128];  /* why ptrace failed, when it did */
};
void tg_probe_kernel(struct tg_kernel_features *out);
