/* op.h — one trapped syscall, decoded.
 *
 * The tracer decodes a seccomp stop into a struct tg_op; the policy judges it
 * (policy.h) and the transaction layer (txn.h) journals what it mutates. This
 * header is the only type those modules share: the tracer knows nothing of
 * policy, the policy knows nothing of ptrace, the journal knows paths only.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

enum tg_op_kind {
	TG_OP_NONE = 0,
	TG_OP_EXEC,        /* execve/execveat: path = program as resolved, argv */
	TG_OP_OPEN,        /* open/openat/openat2/creat that can write: path, flags, mode */
	TG_OP_UNLINK,      /* unlink/unlinkat(!AT_REMOVEDIR): path (never followed) */
	TG_OP_RMDIR,       /* rmdir/unlinkat(AT_REMOVEDIR): path */
	TG_OP_RENAME,      /* rename*: path -> path2, flags = RENAME_* */
	TG_OP_LINK,        /* link/linkat: path (existing) -> path2 (new name) */
	TG_OP_SYMLINK,     /* symlink/symlinkat: path = new link, target = its text */
	TG_OP_MKDIR,       /* mkdir/mkdirat: path, mode */
	TG_OP_MKNOD,       /* mknod/mknodat: path, mode (type bits), dev */
	TG_OP_TRUNCATE,    /* truncate: path (followed) */
	TG_OP_CHMOD,       /* chmod/fchmod/fchmodat(2): path, mode */
	TG_OP_CHOWN,       /* chown/lchown/fchown/fchownat: path, uid, gid */
	TG_OP_UTIMES,      /* utime(s)/utimensat/futimesat: path */
	TG_OP_XATTR,       /* (l|f)setxattr/(l|f)removexattr: path, xattr_name */
	TG_OP_CONNECT,     /* connect: addr */
	TG_OP_SENDTO,      /* sendto/sendmsg with an address: addr */
	TG_OP_SYSCALL,     /* any other trapped syscall; judged by name only */
	TG_OP_PROCESS,     /* kill/tgkill/setpriority/...: acts on the processes in `proc` */
};

/* Whom a TG_OP_PROCESS call reaches, as the call names it. */
enum tg_proc_scope {
	TG_PROC_PID = 0,   /* one process or thread: proc.pid */
	TG_PROC_PGRP,      /* every process of group proc.pid */
	TG_PROC_USER,      /* every process of user proc.pid (setpriority PRIO_USER) */
	TG_PROC_ALL,       /* kill(-1, sig): every process the caller may signal */
};

/* At most this many processes outside the tree are named in an op; a
 * group with more is judged on these and counted in `nmore`. */
#define TG_PROC_MAXVICTIMS 8

struct tg_proc_victim {
	pid_t pid;
	long uid;                /* real uid, -1 unknown */
	char comm[16];           /* /proc/PID/comm: the program's name */
	char cgroup[256];        /* cgroup path (tg_read_proc_cgroup), "" unknown or too long */
};

struct tg_proc_target {
	enum tg_proc_scope scope;
	pid_t pid;               /* the process, group or uid; for a group 0 is resolved to the caller's */
	pid_t pid2;              /* kcmp's second process, 0 when none */
	int sig;                 /* the signal, 0 for the non-signal calls */
	/* Filled by the tracer, which alone knows the tree: the processes the
	 * call would reach that are not in the traced tree. */
	struct tg_proc_victim victims[TG_PROC_MAXVICTIMS];
	size_t nvictims;
	size_t nmore;            /* outside processes beyond victims[] */
	bool whole_user;         /* scope USER or ALL: processes nobody can list in advance */
};

struct tg_op {
	enum tg_op_kind kind;
	long nr;                 /* syscall number (x86_64) */
	const char *name;        /* syscall name, from the static table */
	pid_t pid;               /* the thread that made the call */

	/* Paths are absolute and normalised ("." "..", "//" removed), resolved
	 * in the tracee's view (its cwd, dirfds, root). Every component but the
	 * last has had its symlinks resolved; the last component is resolved
	 * only when `follow` (resp. `follow2`) says the syscall follows it.
	 * NULL when the call has no such path or it could not be read. */
	char *path;
	char *path2;
	bool follow;
	bool follow2;
	/* The symlinks followed to resolve path and path2, absolute, in the
	 * same view, NULL-terminated (tg_strv_free); NULL when none: the
	 * call goes through their names too. Set by the tracer. */
	char **via;
	char *target;            /* symlink text (TG_OP_SYMLINK) */
	char *xattr_name;        /* TG_OP_XATTR */

	int flags;               /* open flags, AT_* flags, RENAME_* flags */
	unsigned int mode;       /* mode for open/mkdir/mknod/chmod */
	unsigned long dev;       /* mknod */
	long uid, gid;           /* chown; -1 = unchanged */

	/* TG_OP_EXEC: argv as the tracee passed it, NULL-terminated, packed
	 * in one block (tg_strv_pack): tg_op_clear frees it with free(). */
	char **argv;
	size_t argc;

	/* TG_OP_CONNECT / TG_OP_SENDTO */
	struct sockaddr_storage addr;
	socklen_t addrlen;

	/* TG_OP_PROCESS */
	struct tg_proc_target proc;

	/* Set by the decoder: the call may change the filesystem at path/path2. */
	bool writes;
	/* Set by the tracer: the calling thread is the only task of the tree,
	 * and no other will run before the tracer has told its caller
	 * (tg_tracer_hooks.on_company). Until then nothing but this thread's
	 * own (trapped) calls can change a name. */
	bool alone;
};

/* Free what tg_op owns and reset it to zeroes. Accepts NULL. */
void tg_op_clear(struct tg_op *op);

/* True when a TG_OP_PROCESS op reaches a process outside the tree. */
static inline bool tg_op_reaches_outside(const struct tg_op *op)
{
	return op->kind == TG_OP_PROCESS &&
	       (op->proc.nvictims || op->proc.nmore || op->proc.whole_user);
}

/* Human name of a kind ("exec", "open", "unlink", ...). */
const char *tg_op_kind_name(enum tg_op_kind kind);
