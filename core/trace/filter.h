/* filter.h — the seccomp-BPF filter of the traced tree (docs/tracer.md, "The filter").
 *
 * Built with libseccomp from the syscall table (syscalls.h) and the run's
 * tg_filter_config: the arch gate first (non-native arch and x32 numbers
 * kill the process), RET_TRACE for exec, namespace and metadata mutations
 * and write-capable opens, network calls only when the config asks, and a
 * fixed errno for the calls no transaction may make: decided in BPF, with
 * one stop only to report the refusal (TG_FILTER_FIXED).
 */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>

/* What the run asks of the filter (tg_tracer_opts.filter). */
struct tg_filter_config {
	const char *const *denied_syscalls;  /* extra names → fixed errno */
	const int *deny_errno;
	size_t ndenied;
	bool trap_network;
	/* Where these hold, write opens (O_WRONLY/O_RDWR/O_CREAT/O_TRUNC) trap.
	 * Read-only opens never trap. */
};

/* The filter as the kernel takes it. Compiled in the tracer before the fork,
 * so the child between fork and exec only makes one syscall with it: no
 * allocation there (async-signal-safe even when the caller has threads), and
 * nothing that an emulator running the child has to understand. */
struct tg_filter_prog {
	struct sock_fprog fprog;
};

/* RET_TRACE data of a fixed denial: this bit | the errno. Ordinary traps
 * carry 0. */
#define TG_FILTER_FIXED 0x8000u

/* Compile the filter for cfg. Returns 0 or -errno: -EINVAL for an unknown
 * syscall name in cfg->denied_syscalls, else libseccomp's error. Free with
 * tg_filter_prog_free. */
int tg_filter_compile(const struct tg_filter_config *cfg, struct tg_filter_prog *out);
void tg_filter_prog_free(struct tg_filter_prog *prog);

/* Load a compiled filter into the calling thread; async-signal-safe. The
 * caller must have set no_new_privs (or hold CAP_SYS_ADMIN). seccomp(2) with
 * no flags, or prctl(PR_SET_SECCOMP) where seccomp(2) is ENOSYS (valgrind
 * passes prctl through but not seccomp): the same filter either way.
 * Returns 0 or -errno. */
int tg_filter_load_prog(const struct tg_filter_prog *prog);

/* Build the filter without loading it, so a bad config is reported before
 * anything forks. Returns 0 or -errno; on -EINVAL, *bad (when not NULL)
 * names the unknown syscall or the one with an errno out of 1..4095. */
int tg_filter_check(const struct tg_filter_config *cfg, const char **bad);

/* tg_filter_check and tg_filter_compile in one build of the filter: what
 * a caller that reports a bad config first and then runs the tracer needs
 * (tg_tracer_opts.prog). Free with tg_filter_prog_free. */
int tg_filter_prepare(const struct tg_filter_config *cfg, struct tg_filter_prog *out, const char **bad);

/* tg_filter_prepare through a cache directory (base/cache.h; dir NULL: no
 * cache): a program built before from the same config, syscall table,
 * txguard binary and kernel, by a libseccomp whose file is unchanged since,
 * is read back instead of built (1 ms of a 20 ms start), and libseccomp is
 * not loaded at all. A bad config is never cached, so *bad is set as by
 * tg_filter_prepare. Without libseccomp (base/seccomp_lazy.c) a build
 * fails with -ELIBACC. */
int tg_filter_prepare_cached(const struct tg_filter_config *cfg, struct tg_filter_prog *out, const char **bad,
                             const char *dir, size_t trusted);
