/* syscalls.c — the x86_64 syscall table (see syscalls.h). */
#include "syscalls.h"

#include "base/util.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

/* Numbers newer than the build host's headers (x86_64 ABI, stable). */
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_fspick
#define SYS_fspick 433
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#endif
#ifndef SYS_removexattrat
#define SYS_removexattrat 466
#endif
#ifndef SYS_open_tree_attr
#define SYS_open_tree_attr 467
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif

#define MEQ(a, m) { (a), TG_CMP_MASKED_EQ, (m), (m) }
/* An open can write when any of these bits is set (O_TMPFILE needs one of
 * the access bits, so it is covered). O_ACCMODE==3 sets both. */
#define WRITE_OPEN(a) \
	.cond = { MEQ(a, O_WRONLY), MEQ(a, O_RDWR), MEQ(a, O_CREAT), MEQ(a, O_TRUNC) }, .ncond = 4

#define A(...) .arg = { __VA_ARGS__ }
#define P TG_A_PATH
#define P2 TG_A_PATH2
#define D TG_A_DIRFD
#define D2 TG_A_DIRFD2
#define AT TG_A_ATFLAGS
#define FD TG_A_FD
#define M TG_A_MODE
#define X TG_A_XNAME
#define N TG_A_NONE

#define TRAP(nr_, name_, kind_, ...) \
	{ .nr = (nr_), .name = (name_), .kind = (kind_), .trap = TG_TRAP_ALWAYS, __VA_ARGS__ }
#define MUT(nr_, name_, kind_, ...) TRAP(nr_, name_, kind_, .writes = true, __VA_ARGS__)
#define DENY(nr_, name_, err_) \
	{ .nr = (nr_), .name = (name_), .kind = TG_OP_SYSCALL, .trap = TG_DENY, .err = (err_) }

/* A call on other processes: trapped when `cond` holds (or always). */
#define PROC_(trap_, nr_, name_, how_, ...) \
	{ .nr = (nr_), .name = (name_), .kind = TG_OP_PROCESS, .trap = (trap_), .procarg = (how_), \
	  __VA_ARGS__ }
#define PROC(...) PROC_(TG_TRAP_IF, __VA_ARGS__)
#define PROC_ALWAYS(...) PROC_(TG_TRAP_ALWAYS, __VA_ARGS__)
#define SIG_NZ(a) .cond = { { (a), TG_CMP_NE, 0, 0 } }, .ncond = 1
#define PID_NZ .cond = { { 0, TG_CMP_NE, 0, 0 } }, .ncond = 1

static const struct tg_syscall table[] = {
	/* exec: argv is vetted here and re-checked at PTRACE_EVENT_EXEC. */
	TRAP(SYS_execve, "execve", TG_OP_EXEC, A(P, TG_A_ARGV), .follow = TG_FOLLOW_YES),
	TRAP(SYS_execveat, "execveat", TG_OP_EXEC, A(D, P, TG_A_ARGV, N, AT), .follow = TG_FOLLOW_AT),

	/* Opens stop only when they can write; openat2 keeps its flags in
	 * memory where BPF cannot look, so it always stops. */
	{ .nr = SYS_open, .name = "open", .kind = TG_OP_OPEN, .trap = TG_TRAP_IF, WRITE_OPEN(1),
	  A(P, TG_A_OFLAGS, M), .follow = TG_FOLLOW_OPEN, .writes = true },
	{ .nr = SYS_openat, .name = "openat", .kind = TG_OP_OPEN, .trap = TG_TRAP_IF, WRITE_OPEN(2),
	  A(D, P, TG_A_OFLAGS, M), .follow = TG_FOLLOW_OPEN, .writes = true },
	MUT(SYS_creat, "creat", TG_OP_OPEN, A(P, M), .follow = TG_FOLLOW_OPEN),
	MUT(SYS_openat2, "openat2", TG_OP_OPEN, A(D, P, TG_A_HOW, TG_A_HOWSIZE), .follow = TG_FOLLOW_OPEN),
	/* No path to judge, but it opens for writing by inode: the policy
	 * judges it by name. */
	{ .nr = SYS_open_by_handle_at, .name = "open_by_handle_at", .kind = TG_OP_SYSCALL,
	  .trap = TG_TRAP_IF, WRITE_OPEN(2), A(N, N, TG_A_OFLAGS), .writes = true },

	/* Namespace mutations. */
	MUT(SYS_unlink, "unlink", TG_OP_UNLINK, A(P)),
	MUT(SYS_unlinkat, "unlinkat", TG_OP_UNLINK, A(D, P, AT)),
	MUT(SYS_rmdir, "rmdir", TG_OP_RMDIR, A(P)),
	MUT(SYS_rename, "rename", TG_OP_RENAME, A(P, P2)),
	MUT(SYS_renameat, "renameat", TG_OP_RENAME, A(D, P, D2, P2)),
	MUT(SYS_renameat2, "renameat2", TG_OP_RENAME, A(D, P, D2, P2, TG_A_RENFLAGS)),
	MUT(SYS_link, "link", TG_OP_LINK, A(P, P2)),
	MUT(SYS_linkat, "linkat", TG_OP_LINK, A(D, P, D2, P2, AT), .follow = TG_FOLLOW_AT_LINK),
	MUT(SYS_symlink, "symlink", TG_OP_SYMLINK, A(TG_A_TARGET, P)),
	MUT(SYS_symlinkat, "symlinkat", TG_OP_SYMLINK, A(TG_A_TARGET, D, P)),
	MUT(SYS_mkdir, "mkdir", TG_OP_MKDIR, A(P, M)),
	MUT(SYS_mkdirat, "mkdirat", TG_OP_MKDIR, A(D, P, M)),
	MUT(SYS_mknod, "mknod", TG_OP_MKNOD, A(P, M, TG_A_DEV)),
	MUT(SYS_mknodat, "mknodat", TG_OP_MKNOD, A(D, P, M, TG_A_DEV)),
	MUT(SYS_truncate, "truncate", TG_OP_TRUNCATE, A(P), .follow = TG_FOLLOW_YES),

	/* Metadata, by path and by fd (no write access needed for those). */
	MUT(SYS_chmod, "chmod", TG_OP_CHMOD, A(P, M), .follow = TG_FOLLOW_YES),
	MUT(SYS_fchmod, "fchmod", TG_OP_CHMOD, A(FD, M)),
	MUT(SYS_fchmodat, "fchmodat", TG_OP_CHMOD, A(D, P, M), .follow = TG_FOLLOW_YES),
	MUT(SYS_fchmodat2, "fchmodat2", TG_OP_CHMOD, A(D, P, M, AT), .follow = TG_FOLLOW_AT),
	MUT(SYS_chown, "chown", TG_OP_CHOWN, A(P, TG_A_UID, TG_A_GID), .follow = TG_FOLLOW_YES),
	MUT(SYS_lchown, "lchown", TG_OP_CHOWN, A(P, TG_A_UID, TG_A_GID)),
	MUT(SYS_fchown, "fchown", TG_OP_CHOWN, A(FD, TG_A_UID, TG_A_GID)),
	MUT(SYS_fchownat, "fchownat", TG_OP_CHOWN, A(D, P, TG_A_UID, TG_A_GID, AT), .follow = TG_FOLLOW_AT),
	MUT(SYS_utime, "utime", TG_OP_UTIMES, A(P), .follow = TG_FOLLOW_YES),
	MUT(SYS_utimes, "utimes", TG_OP_UTIMES, A(P), .follow = TG_FOLLOW_YES),
	MUT(SYS_futimesat, "futimesat", TG_OP_UTIMES, A(D, P), .follow = TG_FOLLOW_YES),
	MUT(SYS_utimensat, "utimensat", TG_OP_UTIMES, A(D, P, N, AT), .follow = TG_FOLLOW_AT,
	    .null_path_is_fd = true),
	MUT(SYS_setxattr, "setxattr", TG_OP_XATTR, A(P, X), .follow = TG_FOLLOW_YES),
	MUT(SYS_lsetxattr, "lsetxattr", TG_OP_XATTR, A(P, X)),
	MUT(SYS_fsetxattr, "fsetxattr", TG_OP_XATTR, A(FD, X)),
	MUT(SYS_setxattrat, "setxattrat", TG_OP_XATTR, A(D, P, AT, X), .follow = TG_FOLLOW_AT),
	MUT(SYS_removexattr, "removexattr", TG_OP_XATTR, A(P, X), .follow = TG_FOLLOW_YES),
	MUT(SYS_lremovexattr, "lremovexattr", TG_OP_XATTR, A(P, X)),
	MUT(SYS_fremovexattr, "fremovexattr", TG_OP_XATTR, A(FD, X)),
	MUT(SYS_removexattrat, "removexattrat", TG_OP_XATTR, A(D, P, AT, X), .follow = TG_FOLLOW_AT),

	/* bind() of an AF_UNIX path creates a socket file: a namespace
	 * mutation the journal must see (BPF cannot read the family, so every
	 * bind stops; the others are let through undecided). */
	{ .nr = SYS_bind, .name = "bind", .kind = TG_OP_MKNOD, .trap = TG_TRAP_ALWAYS,
	  A(FD, TG_A_ADDR, TG_A_ADDRLEN), .writes = true, .unix_path = true },

	/* Network: only when the policy polices it. sendto without an
	 * address goes to the peer connect() already vetted. */
	{ .nr = SYS_connect, .name = "connect", .kind = TG_OP_CONNECT, .trap = TG_TRAP_NET,
	  A(FD, TG_A_ADDR, TG_A_ADDRLEN) },
	{ .nr = SYS_sendto, .name = "sendto", .kind = TG_OP_SENDTO, .trap = TG_TRAP_NET,
	  .cond = { { 4, TG_CMP_NE, 0, 0 } }, .ncond = 1,
	  A(FD, N, N, N, TG_A_ADDR, TG_A_ADDRLEN) },
	{ .nr = SYS_sendmsg, .name = "sendmsg", .kind = TG_OP_SENDTO, .trap = TG_TRAP_NET,
	  A(FD, TG_A_MSG) },
	{ .nr = SYS_sendmmsg, .name = "sendmmsg", .kind = TG_OP_SENDTO, .trap = TG_TRAP_NET,
	  A(FD, TG_A_MMSG, TG_A_VLEN) },

	/* Calls that act on another process: signals, priorities, limits,
	 * affinity. Only the tracer knows which pids are the tree's, so these
	 * stop; BPF lets through what is surely the caller's own business
	 * (signal 0 is only a probe, pid 0 is the caller itself), which is
	 * what nice, ionice, ulimit, raise() of a signal 0 and the C library's
	 * getrlimit/setrlimit do. kill(-1, sig), every process the caller may
	 * signal, stops too and is refused there. */
	PROC(SYS_kill, "kill", TG_PROCARG_KILL, A(TG_A_PID, TG_A_SIG), SIG_NZ(1)),
	PROC(SYS_tkill, "tkill", TG_PROCARG_SELF0, A(TG_A_TID, TG_A_SIG), SIG_NZ(1)),
	PROC(SYS_tgkill, "tgkill", TG_PROCARG_SELF0, A(TG_A_PID, TG_A_TID, TG_A_SIG), SIG_NZ(2)),
	PROC(SYS_rt_sigqueueinfo, "rt_sigqueueinfo", TG_PROCARG_SELF0, A(TG_A_PID, TG_A_SIG), SIG_NZ(1)),
	PROC(SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo", TG_PROCARG_SELF0,
	     A(TG_A_PID, TG_A_TID, TG_A_SIG), SIG_NZ(2)),
	PROC(SYS_pidfd_send_signal, "pidfd_send_signal", TG_PROCARG_NONE, A(TG_A_PIDFD, TG_A_SIG), SIG_NZ(1)),
	PROC(SYS_setpriority, "setpriority", TG_PROCARG_PRIO, A(TG_A_WHICH, TG_A_PID),
	     .cond = { { 0, TG_CMP_NE, 0, 0 }, { 1, TG_CMP_NE, 0, 0 } }, .ncond = 2),
	PROC(SYS_ioprio_set, "ioprio_set", TG_PROCARG_IOPRIO, A(TG_A_WHICH, TG_A_PID),
	     .cond = { { 0, TG_CMP_NE, 0, 1 }, { 1, TG_CMP_NE, 0, 0 } }, .ncond = 2),
	PROC(SYS_prlimit64, "prlimit64", TG_PROCARG_SELF0, A(TG_A_PID, N, TG_A_NEWLIM), PID_NZ),
	/* Always, pid 0 too: a tree that places itself is not pinned by the
	 * tracer any more (tracer.c, "pinning"). Asking is read-only, but it
	 * stops for the same reason: the answer must be the CPUs the tree was
	 * given, not the one it may be pinned to. */
	PROC_ALWAYS(SYS_sched_setaffinity, "sched_setaffinity", TG_PROCARG_SELF0, A(TG_A_PID)),
	TRAP(SYS_sched_getaffinity, "sched_getaffinity", TG_OP_SYSCALL, A(N)),
	PROC(SYS_sched_setscheduler, "sched_setscheduler", TG_PROCARG_SELF0, A(TG_A_PID), PID_NZ),
	PROC(SYS_sched_setparam, "sched_setparam", TG_PROCARG_SELF0, A(TG_A_PID), PID_NZ),
	PROC(SYS_sched_setattr, "sched_setattr", TG_PROCARG_SELF0, A(TG_A_PID), PID_NZ),
	/* No pid 0 shortcut: these name the process explicitly, and are rare. */
	PROC_ALWAYS(SYS_process_madvise, "process_madvise", TG_PROCARG_NONE, A(TG_A_PIDFD)),
	PROC_ALWAYS(SYS_kcmp, "kcmp", TG_PROCARG_SELF0, A(TG_A_PID, TG_A_PID2)),
	/* Reading another process's memory reads its secrets. */
	PROC_ALWAYS(SYS_process_vm_readv, "process_vm_readv", TG_PROCARG_SELF0, A(TG_A_PID)),

	/* Calls that may give the caller another root or mount namespace: a
	 * path resolved for it before may name something else after. Let
	 * through, and followed to their return (tracer.c, "root epochs");
	 * mount, pivot_root and clone3 are refused below, and a clone with
	 * CLONE_NEWNS makes a new task, whose root is looked at anew. */
	TRAP(SYS_chroot, "chroot", TG_OP_SYSCALL, A(N), .roots = true),
	TRAP(SYS_setns, "setns", TG_OP_SYSCALL, A(N), .roots = true),
	TRAP(SYS_unshare, "unshare", TG_OP_SYSCALL, A(N), .roots = true),

	/* Trapped only so that the tracer knows a cwd moved (tracer.c, "cwd
	 * epochs"): let through at once, no policy asked. */
	TRAP(SYS_chdir, "chdir", TG_OP_SYSCALL, A(N)),
	TRAP(SYS_fchdir, "fchdir", TG_OP_SYSCALL, A(N)),

	/* Fixed errno, decided in BPF without a stop. */
	DENY(SYS_io_uring_setup, "io_uring_setup", EPERM),
	DENY(SYS_io_uring_enter, "io_uring_enter", EPERM),
	DENY(SYS_io_uring_register, "io_uring_register", EPERM),
	DENY(SYS_ptrace, "ptrace", EPERM),
	DENY(SYS_process_vm_writev, "process_vm_writev", EPERM),
	/* A dup of another process's fd, txguard's own journal fd included,
	 * without an open the filter could see. */
	DENY(SYS_pidfd_getfd, "pidfd_getfd", EPERM),
	DENY(SYS_kexec_load, "kexec_load", EPERM),
	DENY(SYS_kexec_file_load, "kexec_file_load", EPERM),
	DENY(SYS_init_module, "init_module", EPERM),
	DENY(SYS_finit_module, "finit_module", EPERM),
	DENY(SYS_delete_module, "delete_module", EPERM),
	DENY(SYS_mount, "mount", EPERM),
	DENY(SYS_umount2, "umount2", EPERM),
	DENY(SYS_move_mount, "move_mount", EPERM),
	DENY(SYS_fsopen, "fsopen", EPERM),
	DENY(SYS_fsmount, "fsmount", EPERM),
	DENY(SYS_fsconfig, "fsconfig", EPERM),
	DENY(SYS_fspick, "fspick", EPERM),
	DENY(SYS_open_tree, "open_tree", EPERM),
	DENY(SYS_open_tree_attr, "open_tree_attr", EPERM),
	DENY(SYS_mount_setattr, "mount_setattr", EPERM),
	DENY(SYS_pivot_root, "pivot_root", EPERM),
	DENY(SYS_swapon, "swapon", EPERM),
	DENY(SYS_swapoff, "swapoff", EPERM),
	DENY(SYS_reboot, "reboot", EPERM),
	DENY(SYS_bpf, "bpf", EPERM),
	DENY(SYS_userfaultfd, "userfaultfd", EPERM),
	DENY(SYS_perf_event_open, "perf_event_open", EPERM),
	/* chattr needs no write access (owner or CAP_LINUX_IMMUTABLE): an
	 * immutable or append-only flag set inside a transaction must be seen.
	 * fs-verity also needs only a read-only fd and freezes the content.
	 * This row comes before the TIOCSTI one so lookups by nr find it. */
	{ .nr = SYS_ioctl, .name = "ioctl", .kind = TG_OP_SYSCALL, .trap = TG_TRAP_IF,
	  .cond = { { 1, TG_CMP_MASKED_EQ, 0xffffffffu, FS_IOC_SETFLAGS },
	            { 1, TG_CMP_MASKED_EQ, 0xffffffffu, FS_IOC_FSSETXATTR },
	            { 1, TG_CMP_MASKED_EQ, 0xffffffffu, FS_IOC_ENABLE_VERITY } }, .ncond = 3,
	  A(FD), .writes = true },
	/* The cmd argument is an unsigned int: compare the low 32 bits only,
	 * or garbage in the upper half would walk past the rule. */
	{ .nr = SYS_ioctl, .name = "ioctl", .kind = TG_OP_SYSCALL, .trap = TG_DENY_IF, .err = EPERM,
	  .cond = { { 1, TG_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI },
	            { 1, TG_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX } }, .ncond = 2 },
	/* The clock and process accounting are the machine's, not the workspace's. */
	DENY(SYS_settimeofday, "settimeofday", EPERM),
	DENY(SYS_clock_settime, "clock_settime", EPERM),
	DENY(SYS_acct, "acct", EPERM),
	/* clone3 keeps its flags in memory; ENOSYS makes libc fall back to
	 * clone, whose CLONE_UNTRACED BPF can see. */
	DENY(SYS_clone3, "clone3", ENOSYS),
	{ .nr = SYS_clone, .name = "clone", .kind = TG_OP_SYSCALL, .trap = TG_DENY_IF, .err = EPERM,
	  .cond = { MEQ(0, CLONE_UNTRACED) }, .ncond = 1 },
	/* A user-notify filter would outrank RET_TRACE: the tracee could
	 * answer its own syscalls. RET_USER_NOTIF without a listener fails. */
	{ .nr = SYS_seccomp, .name = "seccomp", .kind = TG_OP_SYSCALL, .trap = TG_DENY_IF, .err = EPERM,
	  .cond = { MEQ(1, SECCOMP_FILTER_FLAG_NEW_LISTENER) }, .ncond = 1 },
};

const struct tg_syscall *tg_syscalls(size_t *n)
{
	*n = TG_ARRAY_SIZE(table);
	return table;
}

/* A linear scan: ~80 rows, next to a ptrace stop that costs microseconds. */
const struct tg_syscall *tg_syscall_by_nr(long nr)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(table); i++)
		if (table[i].nr == nr)
			return &table[i];
	return NULL;
}

const struct tg_syscall *tg_syscall_by_name(const char *name)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(table); i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

int tg_syscall_arg(const struct tg_syscall *sc, enum tg_arg_role role)
{
	for (int i = 0; i < 6; i++)
		if (sc->arg[i] == role)
			return i;
	return -1;
}
