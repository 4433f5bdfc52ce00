/* decode.h — turn a seccomp stop into a struct tg_op.
 *
 * Arguments come from PTRACE_GET_SYSCALL_INFO; pointed-to data (paths, argv,
 * socket addresses, struct open_how) is read from the tracee's memory with
 * process_vm_readv, falling back to pread on /proc/PID/mem. Paths are
 * resolved in the tracee's view by path.h.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/op.h"

/* tg_decode() result: nothing for anybody to judge (a read-only openat2, a
 * sendmsg without an address); the tracer lets the call run. */
#define TG_DECODE_SKIP 1
/* An execve of a program that is not there: argv was not read (op->argv
 * is NULL). The kernel fails it with ENOENT; should it run after all
 * (a name made in between, a path through a magic link), the tracer must
 * judge it at PTRACE_EVENT_EXEC from what really runs. */
#define TG_DECODE_ABSENT 2

/* Decode syscall `nr` with `args` made by thread `pid` into `op` (zeroed
 * first; release with tg_op_clear()). Returns 0, TG_DECODE_SKIP,
 * TG_DECODE_ABSENT (execve only), or -errno:
 * the error the call itself would fail with when its arguments cannot be
 * read (EFAULT, ENAMETOOLONG, E2BIG, EBADF, ENOENT for an empty path...),
 * which the tracer then returns to the tracee without running the call. */
int tg_decode(pid_t pid, long nr, const uint64_t args[6], struct tg_op *op);

/* Same, and when raw_path is not NULL, *raw_path receives a copy of the
 * first path argument exactly as read (the text the policy's op->path was
 * resolved from; NULL when the call has none). The exec re-check compares
 * it with what the kernel really ran. */
int tg_decode_full(pid_t pid, long nr, const uint64_t args[6], struct tg_op *op, char **raw_path);

/* Read len bytes at addr in pid's memory. 0 or -errno (-EFAULT when
 * unmapped). */
int tg_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Read a NUL-terminated string of at most max-1 bytes. -EFAULT for NULL or
 * unmapped memory, -ENAMETOOLONG when no NUL within max bytes. */
int tg_mem_read_string(pid_t pid, uint64_t addr, size_t max, char **out);

/* Read a NULL-terminated char *[] (execve argv), packed in one block
 * (tg_strv_pack: free() it). A NULL addr gives an empty vector, as the
 * kernel treats it. -E2BIG past the kernel's limits. */
int tg_mem_read_argv(pid_t pid, uint64_t addr, char ***out, size_t *argc);
