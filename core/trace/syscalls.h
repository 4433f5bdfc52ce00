/* syscalls.h — the one table of the syscalls txguard cares about (x86_64).
 *
 * Each row says how the seccomp filter treats the call (trap, trap under a
 * condition on an argument, or a fixed errno without a stop), which kind of
 * operation it is (op.h), and what each of its six arguments means, so that
 * filter.c and decode.c are both loops over this table: a new syscall is
 * one row here (docs/architecture.md, "Where to make a change").
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/op.h"

/* How the filter handles a row. */
enum tg_trap {
	TG_TRAP_ALWAYS = 1,   /* RET_TRACE unconditionally */
	TG_TRAP_IF,           /* RET_TRACE when any of `cond` holds */
	TG_TRAP_NET,          /* RET_TRACE when cfg.trap_network (and cond, if any) */
	TG_DENY,              /* RET_ERRNO(err) unconditionally, no stop */
	TG_DENY_IF,           /* RET_ERRNO(err) when any of `cond` holds */
};

/* What an argument is. */
enum tg_arg_role {
	TG_A_NONE = 0,
	TG_A_DIRFD,     /* dirfd of `path` */
	TG_A_PATH,      /* char * path */
	TG_A_DIRFD2,    /* dirfd of `path2` */
	TG_A_PATH2,     /* char * second path (new name) */
	TG_A_FD,        /* the fd the call acts on (fchmod, fsetxattr...) */
	TG_A_OFLAGS,    /* open(2) flags */
	TG_A_ATFLAGS,   /* AT_SYMLINK_NOFOLLOW / AT_SYMLINK_FOLLOW / AT_EMPTY_PATH / AT_REMOVEDIR */
	TG_A_RENFLAGS,  /* RENAME_* */
	TG_A_MODE,
	TG_A_UID,
	TG_A_GID,
	TG_A_DEV,
	TG_A_TARGET,    /* char * symlink text */
	TG_A_XNAME,     /* char * xattr name */
	TG_A_ARGV,      /* char ** argv */
	TG_A_ADDR,      /* struct sockaddr * */
	TG_A_ADDRLEN,
	TG_A_MSG,       /* struct msghdr * */
	TG_A_MMSG,      /* struct mmsghdr * */
	TG_A_VLEN,      /* sendmmsg vector length */
	TG_A_HOW,       /* struct open_how * */
	TG_A_HOWSIZE,
	TG_A_PID,       /* the process acted on (meaning per `procarg`) */
	TG_A_TID,       /* tkill/tgkill/rt_tgsigqueueinfo: the thread */
	TG_A_PID2,      /* kcmp: the second process */
	TG_A_PIDFD,     /* pidfd_send_signal, process_madvise: a pidfd (or /proc/PID dir fd) */
	TG_A_SIG,       /* signal number */
	TG_A_WHICH,     /* setpriority/ioprio_set: PRIO_PROCESS/PGRP/USER */
	TG_A_NEWLIM,    /* prlimit64: new limit (NULL = only reads) */
	TG_A_COUNT,
};

/* How a TG_A_PID argument names processes. */
enum tg_procarg {
	TG_PROCARG_NONE = 0,
	TG_PROCARG_SELF0,  /* 0 = the caller itself, else a pid or tid */
	TG_PROCARG_KILL,   /* kill(2): >0 pid, 0 own group, -1 all, < -1 group -pid */
	TG_PROCARG_PRIO,   /* setpriority: which 0/1/2 = process/group/user; who 0 = own */
	TG_PROCARG_IOPRIO, /* ioprio_set: which 1/2/3 = process/group/user; who 0 = own */
};

/* Does the call act on the last component of `path` through a symlink? */
enum tg_follow {
	TG_FOLLOW_NO = 0,
	TG_FOLLOW_YES,
	TG_FOLLOW_AT,      /* yes unless AT_SYMLINK_NOFOLLOW */
	TG_FOLLOW_AT_LINK, /* no unless AT_SYMLINK_FOLLOW (linkat) */
	TG_FOLLOW_OPEN,    /* no with O_NOFOLLOW or O_CREAT|O_EXCL; openat2 also RESOLVE_NO_SYMLINKS */
};

enum tg_cmp {
	TG_CMP_MASKED_EQ = 0, /* (arg & mask) == datum */
	TG_CMP_NE,            /* arg != datum */
};

struct tg_syscall_cond {
	int8_t arg;       /* 0..5 */
	uint8_t cmp;      /* enum tg_cmp */
	uint64_t mask;
	uint64_t datum;
};

#define TG_SYSCALL_MAXCOND 4

struct tg_syscall {
	long nr;
	const char *name;
	enum tg_op_kind kind;
	enum tg_trap trap;
	int err;                          /* TG_DENY / TG_DENY_IF */
	/* Alternatives: the action applies when ANY of the first ncond holds. */
	struct tg_syscall_cond cond[TG_SYSCALL_MAXCOND];
	uint8_t ncond;
	uint8_t arg[6];                   /* enum tg_arg_role per argument */
	uint8_t follow;                   /* enum tg_follow for `path` */
	bool writes;                      /* the call mutates the filesystem */
	bool null_path_is_fd;             /* utimensat(fd, NULL, ...) acts on fd */
	bool unix_path;                   /* bind(): an AF_UNIX address creates a file */
	uint8_t procarg;                  /* enum tg_procarg for TG_A_PID */
	bool roots;                       /* may change the caller's root or mount
	                                   * namespace (tracer.c, "root epochs") */
};

/* The whole table and its length. */
const struct tg_syscall *tg_syscalls(size_t *n);

/* The row for x86_64 syscall `nr`, or NULL when txguard does not handle it. */
const struct tg_syscall *tg_syscall_by_nr(long nr);

/* The row named `name` ("unlinkat"), or NULL. */
const struct tg_syscall *tg_syscall_by_name(const char *name);

/* The argument index with role `role` in `sc`, or -1. */
int tg_syscall_arg(const struct tg_syscall *sc, enum tg_arg_role role);
