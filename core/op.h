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
	char *target;            /* symlink text (TG_OP_SYMLINK) */
	char *xattr_name;        /* TG_OP_XATTR */

	int flags;               /* open flags, AT_* flags, RENAME_* flags */
	unsigned int mode;       /* mode for open/mkdir/mknod/chmod */
	unsigned long dev;       /* mknod */
	long uid, gid;           /* chown; -1 = unchanged */

	/* TG_OP_EXEC: argv as the tracee passed it, NULL-terminated. */
	char **argv;
	size_t argc;

	/* TG_OP_CONNECT / TG_OP_SENDTO */
	struct sockaddr_storage addr;
	socklen_t addrlen;

	/* Set by the decoder: the call may change the filesystem at path/path2. */
	bool writes;
};

/* Free what tg_op owns and reset it to zeroes. Accepts NULL. */
void tg_op_clear(struct tg_op *op);

/* Human name of a kind ("exec", "open", "unlink", ...). */
const char *tg_op_kind_name(enum tg_op_kind kind);
